/* compact.cu - the stand-alone compactions of compact.h: keep the elements with value <
 * threshold. The in-kernel primitives of compact.cuh (ordered, collate, atomic) in one
 * persistent kernel whose blocks loop over tiles of 4096 elements, copying the next tile into
 * shared memory while they rank, hand off and write the current one (tile.cuh), the
 * HistoPyramids of histopyramid.cu, and the baselines: cub::DeviceSelect::If, a flag kernel +
 * cub::DeviceSelect::Flagged, and flags + cub::DeviceScan::ExclusiveSum + scatter. The only file
 * of pipeline/compact that includes CUB. Also the state of the in-kernel primitives
 * (vr_compact_state_*). CPU twin: compact_ref.c.
 * Try: `vreuse_tests gpu/compact`, `vreuse bench-compact --sizes 16M --select 50`.
 */
#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/compact/histopyramid.h"
#include "pipeline/compact/tile.cuh"
#include "pipeline/vr_check.h"

/* flag and scatter passes: 4 elements per thread */
#define VR_COMPACT_PASS_BLOCK 256u

/* ORDERED runs a hand-off warp beside the VR_COMPACT_BLOCK threads that hold tiles and takes
 * a tile's offset VR_COMPACT_ORDERED_LAG tiles after its count (the kernel's comment says why). */
#define VR_COMPACT_HANDOFF_THREADS VR_WARP_SIZE
#define VR_COMPACT_HELD 4u /* slots of the ring of ranked tiles */
#define VR_COMPACT_ORDERED_LAG 2u /* >= 2: the hand-off warp reads a slot only after the
                                     exchange that follows the one it was written before */
static_assert(VR_COMPACT_ORDERED_LAG >= 2 && VR_COMPACT_ORDERED_LAG < VR_COMPACT_HELD,
              "the slot ring outlives the tiles held");

struct vr_compact_state {
    uint32_t *d_counters; /* VR_COMPACT_COUNTER_WORDS */
    uint64_t *d_status;   /* capacity + sections */
    uint32_t capacity;    /* blocks */
    uint32_t epoch;       /* of the last launch; 0 before the first */
    cudaStream_t stream;
};

struct vr_compact_ctx {
    uint32_t max_n;
    cudaStream_t stream;
    cudaEvent_t start, stop;
    vr_compact_state *state; /* the stand-alone kernel's tickets, counters and status words */
    uint32_t *d_flags;       /* max_n words: SCAN's flags; CUB_FLAGGED's bytes */
    uint32_t *d_offsets;     /* max_n words: SCAN's offsets */
    uint32_t *d_count;       /* one word: the count the CUB methods and SCAN write */
    void *d_cub;             /* cub_bytes: CUB's temporary storage, the most any method needs */
    size_t cub_bytes;
    vr_hp *hp[2];            /* VR_HP_PLAIN, VR_HP_VEC4 over max_n cells */
    uint32_t select_blocks[2]; /* blocks of the persistent select kernel that fit on the
                                  device: [0] COLLATE and ATOMIC, [1] ORDERED */
    uint32_t blocks_cap;     /* vr_compact_set_blocks: its blocks instead (0: select_blocks) */
    uint32_t delay_first, delay_tickets, delay_ns; /* vr_compact_set_delay */
};

typedef struct vr_compact_select_params {
    uint32_t *out;          /* n words */
    const uint32_t *in;     /* n words, 16-byte aligned */
    uint64_t threshold;     /* keep value < threshold, 0..2^32 */
    vr_compact_dev dev;     /* state for `tiles` positions */
    uint32_t n;
    uint32_t tiles;         /* ceil(n / VR_COMPACT_TILE): the tickets that carry work */
    uint32_t method;        /* VR_COMPACT_ORDERED, _COLLATE or _ATOMIC */
    uint32_t delay_first, delay_tickets, delay_ns; /* test hook: tickets that wait first */
} vr_compact_select_params;

typedef struct vr_compact_pass_params {
    const uint32_t *in;   /* n words, 16-byte aligned */
    uint32_t *out;        /* scatter: n words */
    uint32_t *flags;      /* n words (or n bytes with `bytes`) */
    const uint32_t *offsets; /* scatter: n words, the exclusive scan of the flags */
    uint32_t *count;      /* scatter: one word, the number kept */
    uint64_t threshold;
    uint32_t n;
    uint32_t bytes;       /* flags: one byte per element (for cub::DeviceSelect::Flagged) */
} vr_compact_pass_params;

/* The CUB select operator. */
struct vr_compact_below {
    uint64_t threshold;
    __host__ __device__ __forceinline__ bool operator()(const uint32_t &v) const
    {
        return v < threshold;
    }
};

/* ---- kernels ------------------------------------------------------------------------------- */

/* Elements at..at+3 (one 16-byte load when all exist) and their keep mask (bit j: element
 * at + j exists and is below the threshold). */
static __device__ __forceinline__ uint32_t vr_compact_load4(const uint32_t *in, uint32_t n,
                                                            uint64_t threshold, uint64_t at,
                                                            uint32_t v[4])
{
    if (at + 4 <= n) {
        const uint4 q = __ldg((const uint4 *)(in + at));
        v[0] = q.x, v[1] = q.y, v[2] = q.z, v[3] = q.w;
    } else {
        for (uint32_t j = 0; j < 4; ++j)
            v[j] = at + j < n ? __ldg(in + at + j) : 0u;
    }
    uint32_t keep = 0;
    for (uint32_t j = 0; j < 4; ++j)
        keep |= (uint32_t)(at + j < n && v[j] < threshold) << j;
    return keep;
}

/* Test hook: thread 0 sleeps `ns`; the block's next __syncthreads holds the others. */
static __device__ void vr_compact_delay(uint32_t ns)
{
    if (threadIdx.x != 0)
        return;
    const uint64_t t0 = vr_compact_clock_ns();
    while (vr_compact_clock_ns() - t0 < ns)
        __nanosleep(1000);
}

/* cp.async (sm_80+): 16 bytes from global to shared memory without passing through registers;
 * the copies a thread issued since its last commit form a group; wait_group 0 returns once all
 * of the thread's groups have landed (a __syncthreads then shows them to the block). */
static __device__ __forceinline__ void vr_compact_copy16(uint4 *dst, const uint32_t *src)
{
    const uint32_t s = (uint32_t)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(s), "l"(src) : "memory");
}

static __device__ __forceinline__ void vr_compact_copy_commit(void)
{
    asm volatile("cp.async.commit_group;" ::: "memory");
}

static __device__ __forceinline__ void vr_compact_copy_wait(void)
{
    asm volatile("cp.async.wait_group 0;" ::: "memory");
}

/* Starts the copy of tile `ticket` of in[0..n) into buf (VR_COMPACT_TILE / 4 uint4s), in the
 * layout of tile.cuh (round r, thread t: buf[256 r + t]). A vector that n cuts is read word by
 * word now (only the last tile has one); vectors past n are not read (their keep bits are 0). */
static __device__ __forceinline__ void vr_compact_tile_fetch(uint4 *buf, const uint32_t *in,
                                                             uint32_t n, uint32_t ticket)
{
    const uint64_t tile = (uint64_t)ticket << VR_COMPACT_TILE_LOG2;
#pragma unroll
    for (uint32_t r = 0; r < VR_COMPACT_ROUNDS; ++r) {
        const uint32_t g = r * VR_COMPACT_BLOCK + threadIdx.x;
        const uint64_t at = tile + (uint64_t)VR_COMPACT_VEC * g;
        if (at + VR_COMPACT_VEC <= n) {
            vr_compact_copy16(buf + g, in + at);
        } else if (at < n) {
            uint32_t *w = (uint32_t *)(buf + g);
            for (uint32_t j = 0; at + j < n; ++j)
                w[j] = __ldg(in + at + j);
        }
    }
    vr_compact_copy_commit();
}

/* Registers of the select kernel: ptxas (CUDA 13, sm_90) gives it 57 unbounded; at 48 (no
 * spills) 5 blocks of 256 threads fit an SM (COLLATE, ATOMIC: two tile buffers, 32 KB) and
 * ORDERED's blocks of 288 fit as shared memory allows (lag 2: four buffers, 64 KB, 3 blocks).
 * __launch_bounds__ cannot say both. */
#define VR_COMPACT_SELECT_MAX_REGS 48

/* The barrier at which ORDERED's tile threads and hand-off warp exchange a tile for an offset
 * (named barrier 2, all 288 threads; the tile threads' own is VR_COMPACT_BAR_TILE). */
#define VR_COMPACT_BAR_EXCHANGE 2
#define VR_COMPACT_ORDERED_THREADS (VR_COMPACT_BLOCK + VR_COMPACT_HANDOFF_THREADS)
static __device__ __forceinline__ void vr_compact_exchange(void)
{
    /* thread 0 has just written slot words alone: its warp reconverges before it arrives */
    __syncwarp();
    asm volatile("barrier.sync %0, %1;" ::"n"(VR_COMPACT_BAR_EXCHANGE),
                 "n"(VR_COMPACT_ORDERED_THREADS)
                 : "memory"); /* non-aligned: see vr_compact_tile_sync */
}

#define VR_COMPACT_END_TICKET 0xffffffffu

/* The select kernel's static shared memory: the ranking table, the tickets, and the ring of
 * ranked tiles (ticket and count, written by the tile threads; first output index, written by
 * the hand-off warp or, in COLLATE, by the atomicAdd). The tile buffers are dynamic shared
 * memory: vr_compact_select_smem. */
typedef struct vr_compact_select_shared {
    vr_compact_tile_table table;
    uint32_t tickets[2]; /* the ticket of iteration i sits in tickets[i & 1] */
    uint32_t held_ticket[VR_COMPACT_HELD]; /* tile of iteration i: slot i % VR_COMPACT_HELD */
    uint32_t held_total[VR_COMPACT_HELD];
    uint32_t held_base[VR_COMPACT_HELD];
} vr_compact_select_shared;

/* Tile buffers: ORDERED holds 2 + VR_COMPACT_ORDERED_LAG (the tile being ranked, the tiles
 * waiting for their offsets, the next tile's copy: the oldest waiting one is written while the
 * next one's copy lands in the buffer it frees), the others 2. */
static __host__ __device__ uint32_t vr_compact_select_buffers(uint32_t m)
{
    return m == VR_COMPACT_ORDERED ? 2u + VR_COMPACT_ORDERED_LAG : 2u;
}

static size_t vr_compact_select_smem(uint32_t m)
{
    return (size_t)vr_compact_select_buffers(m) * VR_COMPACT_TILE * 4u;
}

static uint32_t vr_compact_select_threads(uint32_t m)
{
    return m == VR_COMPACT_ORDERED ? VR_COMPACT_ORDERED_THREADS : VR_COMPACT_BLOCK;
}

/* ORDERED, COLLATE, ATOMIC: persistent blocks (as many as fit on the device, select_blocks),
 * each looping over tiles of 4096 elements taken by ticket (one atomicAdd on TICKET per tile),
 * so the order of the hand-off is the order tiles were taken, never blockIdx.
 *
 * Why persistent (ncu of the one-block-per-tile kernel, 256M at 50%: 1.2 TB/s, 50% occupancy,
 * 41% of the stalls at the barrier behind warp 0's hand-off, 31% on loads): a block issued its
 * 16 KB of loads only after its ticket atomic had come back and then held nothing in flight
 * through the hand-off and its stores, so too few bytes were in flight per SM. Here a block
 * keeps the next tile's copy in flight (cp.async into a free buffer) while it ranks, hands off
 * and writes, and takes the ticket of the tile after that one iteration ahead, so neither the
 * ticket atomic nor the load latency sits between two tiles.
 *
 * Why ORDERED has a hand-off warp and takes offsets two tiles late (issue 11; H100, 256M,
 * bench/NOTES.md, session 15): with warp 0 handing off right after the ranking, ORDERED ran at
 * 0.37-0.43x of COLLATE's speed at 1, 50 and 99% kept (1.8x cub-if). A tile waits for the latest
 * count of all tiles before it, with hundreds of blocks in flight the slowest block's delay,
 * and the block's other 7 warps waited at the barrier behind warp 0 (54% of the stall cycles).
 * So the hand-off is a warp of its own (the block is 256 tile threads + 32): the tile threads
 * publish a tile's count as soon as they ranked it and take its offset `lag` tiles later,
 * while the hand-off warp finishes it beside the ranking of the next tiles. Measured at 256M
 * (1 / 50 / 99% kept, x cub-if): lag 1 (three buffers, 4 blocks per SM) 1.08-1.14x; lag 2 (four
 * buffers, 3 blocks per SM; the hand-off warp starts tile i - 1 at exchange i, so it has a
 * whole tile for it and predecessors have had one more) 0.92-0.96x.
 *
 * Iteration i of the tile threads (tile `ticket`, its copy in flight in buffer i % nbuf):
 *   wait for the copy; sync A (the tile complete for all; buffer (i + 1) % nbuf free: its tile
 *   i + 1 - nbuf was written in iteration i - 1; the next ticket visible); start the copy of the
 *   next tile into it and take the ticket after it; read the 4 uint4 of this thread; then
 *   ORDERED / COLLATE: rank (tile.cuh: syncs B, C), stage the kept elements in the tile's
 *     buffer (all its reads happened before B);
 *     ORDERED: thread 0 publishes the count (vr_compact_ordered_publish) and fills slot i;
 *       exchange i with the hand-off warp; write tile i - lag out of its buffer at the offset
 *       the exchange brought. After the last tile: the end, then `lag` exchanges that bring
 *       the offsets of the tiles still held.
 *     COLLATE: thread 0 takes the base with one atomicAdd on RUNNING; sync D; write tile i.
 *   ATOMIC: one atomicAdd per warp and round, each kept element stored from its thread.
 * A, B, C, D are the tile threads' barrier (VR_COMPACT_BAR_TILE); the exchange is a barrier of
 * all 288 threads. Shared words are rewritten only after a barrier that follows their last
 * read: a buffer by the copy of iteration i + nbuf - 1 (after its A), the table in the next
 * iteration (after its A), tickets[i & 1] (read before A of iteration i) by thread 0 at the
 * end of iteration i; slot i % 4 is read by the hand-off warp between exchanges i + lag - 1
 * and i + lag and by the tile threads after exchange i + lag, and written again before
 * exchange i + 4.
 *
 * Deadlock: a tile's count is published by the tile threads when they rank it, before the
 * exchange, so before any wait for a later tile; the hand-off warp waits (in finish) only for
 * counts and section flags of earlier tickets; the exchange waits for the hand-off warp's
 * finish of an earlier tile of the block. By induction on the ticket t (below `tiles`, so taken
 * by a running block): if every ticket below t has its count published and its finish done,
 * the tile threads holding t rank it (on the way they wait only for copies and for offsets of
 * their own earlier tickets) and publish, and the hand-off warp reaches finish(t) (it finished
 * the block's earlier tickets) and its waits are all for tickets below t: so t publishes and
 * finishes too. Residency of the whole grid is not needed (a block that never started holds
 * no ticket), so the argument of compact.cuh survives blocks of later sections being resident
 * first. The test hook (vr_compact_set_delay) holds chosen tickets before their count. */
__global__ void __maxnreg__(VR_COMPACT_SELECT_MAX_REGS)
    vr_compact_select_kernel(const vr_compact_select_params p)
{
    extern __shared__ uint4 vr_compact_buffers[]; /* vr_compact_select_buffers tiles */
    __shared__ vr_compact_select_shared sm;
    const int ordered = p.method == VR_COMPACT_ORDERED;
    const int tile_thread = threadIdx.x < VR_COMPACT_BLOCK; /* else ORDERED's hand-off warp */
    const uint32_t lag = ordered ? VR_COMPACT_ORDERED_LAG : 0u;
    const uint32_t nbuf = vr_compact_select_buffers(p.method);
    const uint32_t words = VR_COMPACT_TILE / VR_COMPACT_VEC; /* uint4 per buffer */
    uint32_t *const ticket_counter = p.dev.counters + VR_COMPACT_TICKET;
    if (threadIdx.x == 0)
        sm.tickets[0] = atomicAdd(ticket_counter, 1u);
    __syncthreads();
    uint32_t ticket = sm.tickets[0];
    /* the block's tiles: a tile thread knows their number once it met a ticket >= tiles, the
       hand-off warp when it meets the end marker in the slot it would finish next (lag
       exchanges after the marker was written, the iteration all leave the loop) */
    uint32_t end = VR_COMPACT_END_TICKET;
    if (tile_thread) {
        if (ticket < p.tiles) {
            vr_compact_tile_fetch(vr_compact_buffers, p.in, p.n, ticket);
            if (threadIdx.x == 0) /* read after the first sync A */
                sm.tickets[1] = atomicAdd(ticket_counter, 1u);
        } else {
            end = 0;
        }
    }
    for (uint32_t i = 0;; ++i) {
        uint4 *const buf = vr_compact_buffers + (i % nbuf) * words;
        const uint32_t slot = i % VR_COMPACT_HELD;
        uint32_t total = 0;
        if (tile_thread && i < end) { /* tile i: copy landed, rank, stage, publish */
            vr_compact_copy_wait();
            vr_compact_tile_sync(); /* A */
            const uint32_t next = sm.tickets[(i & 1u) ^ 1u];
            uint32_t after = VR_COMPACT_END_TICKET; /* none: the loop ends with `next` */
            if (next < p.tiles) {
                vr_compact_tile_fetch(vr_compact_buffers + ((i + 1) % nbuf) * words, p.in, p.n,
                                      next);
                if (threadIdx.x == 0)
                    after = atomicAdd(ticket_counter, 1u); /* stored below */
            }
            const uint64_t tile = (uint64_t)ticket << VR_COMPACT_TILE_LOG2;
            uint4 v[VR_COMPACT_ROUNDS];
            uint32_t keep[VR_COMPACT_ROUNDS];
#pragma unroll
            for (uint32_t r = 0; r < VR_COMPACT_ROUNDS; ++r) {
                const uint32_t g = r * VR_COMPACT_BLOCK + threadIdx.x;
                v[r] = buf[g];
                keep[r] = vr_compact_keep4(v[r], tile + (uint64_t)VR_COMPACT_VEC * g, p.n,
                                           p.threshold);
            }
            if (ticket - p.delay_first < p.delay_tickets)
                vr_compact_delay(p.delay_ns);
            if (p.method == VR_COMPACT_ATOMIC) { /* round by round, straight to the output */
#pragma unroll
                for (uint32_t r = 0; r < VR_COMPACT_ROUNDS; ++r)
                    vr_compact_put4(
                        p.out + vr_compact_warp_atomic(p.dev, (uint32_t)__popc(keep[r])), v[r],
                        keep[r]);
            } else {
                uint32_t at[VR_COMPACT_ROUNDS];
                total = vr_compact_tile_rank(&sm.table, keep, at); /* B, C */
                vr_compact_tile_stage((uint32_t *)buf, v, keep, at);
                if (threadIdx.x == 0) {
                    sm.held_ticket[slot] = ticket;
                    sm.held_total[slot] = total;
                    if (ordered)
                        vr_compact_ordered_publish(p.dev, ticket, total);
                    else
                        sm.held_base[slot] =
                            total ? atomicAdd(p.dev.counters + VR_COMPACT_RUNNING, total) : 0u;
                }
            }
            if (threadIdx.x == 0)
                sm.tickets[i & 1u] = after; /* tickets[i & 1] was last read at A of i - 1 */
            ticket = next;
            if (ticket >= p.tiles)
                end = i + 1;
        } else if (threadIdx.x == 0 && i == end) {
            sm.held_ticket[slot] = VR_COMPACT_END_TICKET; /* for the hand-off warp */
        }
        if (ordered) {
            vr_compact_exchange(); /* all 288 threads, every i */
            if (tile_thread) {
                if (i >= lag && i - lag < end) { /* tile i - lag: its offset came through */
                    const uint32_t done = i - lag, held = done % VR_COMPACT_HELD;
                    vr_compact_tile_store(p.out,
                                          (const uint32_t *)(vr_compact_buffers +
                                                             (done % nbuf) * words),
                                          sm.held_base[held], sm.held_total[held], 0xffffffffu);
                }
            } else if (i + 1 >= lag) { /* tile i + 1 - lag, or the end marker in its slot */
                const uint32_t held = (i + 1 - lag) % VR_COMPACT_HELD;
                const uint32_t held_ticket = sm.held_ticket[held];
                if (held_ticket == VR_COMPACT_END_TICKET) {
                    end = i + 1 - lag;
                } else {
                    const uint32_t base = vr_compact_ordered_finish(p.dev, held_ticket,
                                                                    sm.held_total[held], p.tiles);
                    if ((threadIdx.x & (VR_WARP_SIZE - 1)) == 0)
                        sm.held_base[held] = base;
                }
            }
        } else if (p.method == VR_COMPACT_COLLATE && i < end) {
            vr_compact_tile_sync(); /* D */
            vr_compact_tile_store(p.out, (const uint32_t *)buf, sm.held_base[slot], total,
                                  0xffffffffu);
        }
        if (end != VR_COMPACT_END_TICKET && i + 1 >= end + lag)
            break;
    }
    vr_compact_end(p.dev);
}

/* Flags of SCAN (32-bit) and CUB_FLAGGED (bytes): one thread per 4 elements, one 16-byte load,
 * one 16- or 4-byte store. No shared memory, no syncs. */
__global__ void __launch_bounds__(VR_COMPACT_PASS_BLOCK)
    vr_compact_flags_kernel(const vr_compact_pass_params p)
{
    const uint64_t at = 4 * ((uint64_t)blockIdx.x * blockDim.x + threadIdx.x);
    if (at >= p.n)
        return;
    uint32_t v[4];
    const uint32_t keep = vr_compact_load4(p.in, p.n, p.threshold, at, v);
    if (at + 4 <= p.n) {
        if (p.bytes)
            ((uchar4 *)p.flags)[at / 4] = make_uchar4(keep & 1u, keep >> 1 & 1u, keep >> 2 & 1u,
                                                      keep >> 3 & 1u);
        else
            ((uint4 *)p.flags)[at / 4] = make_uint4(keep & 1u, keep >> 1 & 1u, keep >> 2 & 1u,
                                                    keep >> 3 & 1u);
        return;
    }
    for (uint32_t j = 0; at + j < p.n; ++j) {
        if (p.bytes)
            ((unsigned char *)p.flags)[at + j] = (unsigned char)(keep >> j & 1u);
        else
            p.flags[at + j] = keep >> j & 1u;
    }
}

/* SCAN's scatter: one thread per 4 elements; the predicate is evaluated again on the values
 * (the flags are not read back), the offsets come from the scan; the thread of the last
 * element writes the count. No shared memory, no syncs. */
__global__ void __launch_bounds__(VR_COMPACT_PASS_BLOCK)
    vr_compact_scatter_kernel(const vr_compact_pass_params p)
{
    const uint64_t at = 4 * ((uint64_t)blockIdx.x * blockDim.x + threadIdx.x);
    if (at >= p.n)
        return;
    uint32_t v[4], off[4];
    const uint32_t keep = vr_compact_load4(p.in, p.n, p.threshold, at, v);
    if (at + 4 <= p.n) {
        const uint4 q = __ldg((const uint4 *)(p.offsets + at));
        off[0] = q.x, off[1] = q.y, off[2] = q.z, off[3] = q.w;
    } else {
        for (uint32_t j = 0; j < 4; ++j)
            off[j] = at + j < p.n ? __ldg(p.offsets + at + j) : 0u;
    }
    for (uint32_t j = 0; j < 4; ++j)
        if (keep >> j & 1u)
            p.out[off[j]] = v[j];
    if (at + 4 >= p.n) { /* holds element n - 1 */
        const uint32_t last = (uint32_t)(p.n - 1 - at);
        *p.count = off[last] + (keep >> last & 1u);
    }
}

/* d[0..n) = value; grid-stride. */
__global__ void vr_compact_fill_kernel(uint32_t *d, uint64_t n, uint32_t value)
{
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (uint64_t)gridDim.x * blockDim.x)
        d[i] = value;
}

/* ---- device buffers ------------------------------------------------------------------------ */

vr_status vr_compact_buffer_alloc(uint32_t **d, size_t words, const char *what)
{
    const vr_status st = vr_cuda_device_check();
    if (st != VR_OK) {
        *d = NULL;
        return st;
    }
    return vr_cuda_alloc((void **)d, words * 4, what);
}

void vr_compact_buffer_free(uint32_t *d)
{
    cudaFree(d); /* teardown: nothing to act on */
}

vr_status vr_compact_buffer_upload(uint32_t *d, const uint32_t *h, size_t words)
{
    VR_CUDA_CHECK(cudaMemcpy(d, h, words * 4, cudaMemcpyHostToDevice));
    return VR_OK;
}

vr_status vr_compact_buffer_download(uint32_t *h, const uint32_t *d, size_t words)
{
    VR_CUDA_CHECK(cudaMemcpy(h, d, words * 4, cudaMemcpyDeviceToHost));
    return VR_OK;
}

vr_status vr_compact_buffer_fill(uint32_t *d, size_t words, uint32_t value)
{
    if (words == 0)
        return VR_OK;
    vr_compact_fill_kernel<<<1024, 256>>>(d, words, value);
    VR_LAUNCH_CHECK("vr_compact_fill_kernel", 0);
    VR_CUDA_CHECK(cudaDeviceSynchronize());
    return VR_OK;
}

/* ---- the state of the in-kernel primitives -------------------------------------------------- */

vr_status vr_compact_state_create(vr_compact_state **out, uint32_t max_blocks, void *stream)
{
    assert(out);
    *out = NULL;
    vr_compact_state *s = NULL;
    vr_status st = vr_cuda_host_struct((void **)&s, sizeof *s, "a compaction state");
    if (st != VR_OK)
        return st;
    s->capacity = max_blocks;
    s->stream = (cudaStream_t)stream;
    const size_t status_bytes = ((size_t)max_blocks + vr_compact_sections(max_blocks)) * 8;
    if ((st = vr_cuda_alloc((void **)&s->d_counters, VR_COMPACT_COUNTER_WORDS * 4,
                            "compaction counters")) != VR_OK ||
        (st = vr_cuda_alloc((void **)&s->d_status, status_bytes, "compaction status words")) !=
            VR_OK)
        goto done;
    VR_CUDA_GOTO(cudaMemsetAsync(s->d_counters, 0, VR_COMPACT_COUNTER_WORDS * 4, s->stream));
    VR_CUDA_GOTO(cudaMemsetAsync(s->d_status, 0, status_bytes, s->stream));
    *out = s;
    return VR_OK;
done:
    vr_compact_state_destroy(s);
    return st;
}

void vr_compact_state_destroy(vr_compact_state *s)
{
    if (!s)
        return;
    void *const bufs[] = {s->d_counters, s->d_status};
    vr_cuda_free_all(bufs, VR_COUNT_OF(bufs));
    free(s);
}

vr_status vr_compact_state_next(vr_compact_state *s, uint32_t blocks, vr_compact_dev *dev)
{
    assert(s && dev);
    if (blocks > s->capacity)
        return VR_ERROR(VR_ERR_ARG, "in-kernel compaction: a launch of %u blocks, but the state "
                        "holds %u", blocks, s->capacity);
    if (s->epoch == VR_COMPACT_EPOCH_MAX) { /* epochs wrap: no old word may look current */
        VR_CUDA_CHECK(cudaMemsetAsync(s->d_status, 0,
                                      ((size_t)s->capacity + vr_compact_sections(s->capacity)) * 8,
                                      s->stream));
        s->epoch = 0;
    }
    ++s->epoch;
    dev->counters = s->d_counters;
    dev->status = s->d_status;
    dev->block_capacity = s->capacity;
    dev->epoch = s->epoch;
    return VR_OK;
}

vr_status vr_compact_state_result(vr_compact_state *s, uint32_t *count)
{
    assert(s && count);
    uint32_t words[2] = {0, 0}; /* RESULT, ERROR */
    *count = 0;
    VR_CUDA_CHECK(cudaMemcpyAsync(words, s->d_counters + VR_COMPACT_RESULT, sizeof words,
                                  cudaMemcpyDeviceToHost, s->stream));
    VR_CUDA_CHECK(cudaStreamSynchronize(s->stream));
    if (words[1]) {
        VR_CUDA_CHECK(cudaMemsetAsync(s->d_counters + VR_COMPACT_ERROR, 0, 4, s->stream));
        VR_CUDA_CHECK(cudaStreamSynchronize(s->stream));
        return VR_ERROR(VR_ERR_CUDA, "in-kernel compaction: a block waited more than %.0f s for "
                        "an earlier one, so the output is wrong (a block that skipped "
                        "vr_compact_begin or vr_compact_end, or a bug in the hand-off)",
                        VR_COMPACT_WAIT_NS * 1e-9);
    }
    *count = words[0];
    return VR_OK;
}

/* ---- the context --------------------------------------------------------------------------- */

static uint32_t vr_compact_tiles(uint32_t n)
{
    return (uint32_t)(((uint64_t)n + VR_COMPACT_TILE - 1) >> VR_COMPACT_TILE_LOG2);
}

/* One CUB call of method m (its temporary storage size when temp is NULL). */
static cudaError_t vr_compact_cub(vr_compact_method m, void *temp, size_t *bytes, uint32_t *d_out,
                                  const uint32_t *d_in, const uint32_t *d_flags,
                                  uint32_t *d_offsets, uint32_t *d_count, uint32_t n,
                                  uint64_t threshold, cudaStream_t stream)
{
    switch (m) {
    case VR_COMPACT_CUB_IF: {
        const vr_compact_below op = {threshold};
        return cub::DeviceSelect::If(temp, *bytes, d_in, d_out, d_count, (int)n, op, stream);
    }
    case VR_COMPACT_CUB_FLAGGED:
        return cub::DeviceSelect::Flagged(temp, *bytes, d_in, (const unsigned char *)d_flags,
                                          d_out, d_count, (int)n, stream);
    default: /* VR_COMPACT_SCAN */
        return cub::DeviceScan::ExclusiveSum(temp, *bytes, d_flags, d_offsets, (int)n, stream);
    }
}

/* CUB's temporary bytes for all three CUB-based methods at n elements (0 when not known). */
static size_t vr_compact_cub_bytes(uint32_t n, cudaStream_t stream)
{
    static const vr_compact_method cub_methods[] = {VR_COMPACT_CUB_IF, VR_COMPACT_CUB_FLAGGED,
                                                    VR_COMPACT_SCAN};
    size_t most = 0;
    for (int k = 0; k < 3; ++k) {
        size_t bytes = 0;
        if (vr_compact_cub(cub_methods[k], NULL, &bytes, NULL, NULL, NULL, NULL, NULL,
                           n ? n : 1, 0, stream) != cudaSuccess) {
            (void)cudaGetLastError(); /* only a size query: the caller's allocation will tell */
            return 0;
        }
        most = bytes > most ? bytes : most;
    }
    return most;
}

size_t vr_compact_temp_bytes(uint32_t max_n)
{
    return vr_compact_state_bytes(vr_compact_tiles(max_n)) + 2 * (size_t)max_n * 4 + 16 +
           vr_compact_cub_bytes(max_n, 0) + vr_hp_bytes(VR_HP_PLAIN, max_n) +
           vr_hp_bytes(VR_HP_VEC4, max_n);
}

vr_status vr_compact_create(vr_compact_ctx **out, uint32_t max_n)
{
    assert(out);
    *out = NULL;
    if (max_n > VR_COMPACT_MAX_N)
        return VR_ERROR(VR_ERR_ARG, "compaction of up to %u elements asked for; at most %u", max_n,
                        VR_COMPACT_MAX_N);
    vr_compact_ctx *c = NULL;
    vr_status st = vr_cuda_host_struct((void **)&c, sizeof *c, "a compaction context");
    if (st != VR_OK)
        return st;
    c->max_n = max_n;
    const size_t words = max_n ? max_n : 1;
    VR_CUDA_GOTO(cudaStreamCreate(&c->stream)); /* blocking: ordered after legacy-stream work */
    VR_CUDA_GOTO(cudaEventCreate(&c->start));
    VR_CUDA_GOTO(cudaEventCreate(&c->stop));
    c->cub_bytes = vr_compact_cub_bytes(max_n, c->stream);
    {
        /* the persistent select kernel: all the shared memory it can use, and as many blocks
           as are resident at once (H100: 5 with two tile buffers, 3 with ORDERED's four) */
        int device = 0, sms = 0;
        VR_CUDA_GOTO(cudaGetDevice(&device));
        VR_CUDA_GOTO(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
        VR_CUDA_GOTO(cudaFuncSetAttribute(vr_compact_select_kernel,
                                          cudaFuncAttributePreferredSharedMemoryCarveout,
                                          cudaSharedmemCarveoutMaxShared));
        VR_CUDA_GOTO(cudaFuncSetAttribute(
            vr_compact_select_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
            (int)vr_compact_select_smem(VR_COMPACT_ORDERED)));
        for (uint32_t k = 0; k < 2; ++k) {
            const uint32_t m = k ? VR_COMPACT_ORDERED : VR_COMPACT_COLLATE;
            int per_sm = 0;
            VR_CUDA_GOTO(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                &per_sm, vr_compact_select_kernel, (int)vr_compact_select_threads(m),
                vr_compact_select_smem(m)));
            c->select_blocks[k] =
                (uint32_t)(per_sm > 0 ? per_sm : 1) * (uint32_t)(sms > 0 ? sms : 1);
        }
    }
    if ((st = vr_compact_state_create(&c->state, vr_compact_tiles(max_n ? max_n : 1), c->stream)) !=
            VR_OK ||
        (st = vr_cuda_alloc((void **)&c->d_flags, words * 4, "compaction flags")) != VR_OK ||
        (st = vr_cuda_alloc((void **)&c->d_offsets, words * 4, "compaction offsets")) != VR_OK ||
        (st = vr_cuda_alloc((void **)&c->d_count, 16, "compaction count")) != VR_OK ||
        (st = vr_cuda_alloc(&c->d_cub, c->cub_bytes, "CUB temporary storage")) != VR_OK ||
        (st = vr_hp_create(&c->hp[VR_HP_PLAIN], VR_HP_PLAIN, max_n, c->stream)) != VR_OK ||
        (st = vr_hp_create(&c->hp[VR_HP_VEC4], VR_HP_VEC4, max_n, c->stream)) != VR_OK)
        goto done;
    *out = c;
    return VR_OK;
done:
    vr_compact_destroy(c);
    return st;
}

void vr_compact_destroy(vr_compact_ctx *c)
{
    if (!c)
        return;
    /* teardown: nothing to act on if these fail */
    if (c->stream)
        cudaStreamSynchronize(c->stream);
    vr_hp_destroy(c->hp[VR_HP_PLAIN]);
    vr_hp_destroy(c->hp[VR_HP_VEC4]);
    vr_compact_state_destroy(c->state);
    void *const bufs[] = {c->d_flags, c->d_offsets, c->d_count, c->d_cub};
    vr_cuda_free_all(bufs, VR_COUNT_OF(bufs));
    if (c->start)
        cudaEventDestroy(c->start);
    if (c->stop)
        cudaEventDestroy(c->stop);
    if (c->stream)
        cudaStreamDestroy(c->stream);
    free(c);
}

void vr_compact_set_delay(vr_compact_ctx *c, uint32_t first, uint32_t tickets, uint32_t ns)
{
    assert(c);
    c->delay_first = first;
    c->delay_tickets = tickets;
    c->delay_ns = ns;
}

void vr_compact_set_blocks(vr_compact_ctx *c, uint32_t blocks)
{
    assert(c);
    c->blocks_cap = blocks;
}

/* The launches of method m (n > 0), in the context's stream. */
static vr_status vr_compact_launch(vr_compact_ctx *c, vr_compact_method m, uint32_t *d_out,
                                   const uint32_t *d_in, uint32_t n, uint64_t threshold)
{
    vr_compact_pass_params pp;
    memset(&pp, 0, sizeof pp);
    pp.in = d_in;
    pp.out = d_out;
    pp.flags = c->d_flags;
    pp.offsets = c->d_offsets;
    pp.count = c->d_count;
    pp.threshold = threshold;
    pp.n = n;
    const uint32_t pass_blocks =
        (uint32_t)(((uint64_t)n + 4 * VR_COMPACT_PASS_BLOCK - 1) / (4 * VR_COMPACT_PASS_BLOCK));
    size_t bytes = c->cub_bytes;
    vr_status st;
    switch (m) {
    case VR_COMPACT_ORDERED:
    case VR_COMPACT_COLLATE:
    case VR_COMPACT_ATOMIC: {
        vr_compact_select_params p;
        memset(&p, 0, sizeof p);
        p.out = d_out;
        p.in = d_in;
        p.threshold = threshold;
        p.n = n;
        p.method = m;
        p.delay_first = c->delay_first;
        p.delay_tickets = c->delay_tickets;
        p.delay_ns = c->delay_ns;
        p.tiles = vr_compact_tiles(n);
        if ((st = vr_compact_state_next(c->state, p.tiles, &p.dev)) != VR_OK)
            return st;
        /* persistent: more blocks than fit would only take tickets later, fewer than tiles */
        uint32_t blocks =
            c->blocks_cap ? c->blocks_cap : c->select_blocks[m == VR_COMPACT_ORDERED];
        blocks = blocks < p.tiles ? blocks : p.tiles;
        vr_compact_select_kernel<<<blocks, vr_compact_select_threads(m), vr_compact_select_smem(m),
                                   c->stream>>>(p);
        VR_LAUNCH_CHECK("vr_compact_select_kernel", c->stream);
        return VR_OK;
    }
    case VR_COMPACT_HP:
    case VR_COMPACT_HP4: {
        vr_hp *hp = c->hp[m == VR_COMPACT_HP4 ? VR_HP_VEC4 : VR_HP_PLAIN];
        if ((st = vr_hp_build_select(hp, d_in, n, threshold)) != VR_OK)
            return st;
        return vr_hp_compact(hp, d_out, n);
    }
    case VR_COMPACT_CUB_IF:
        return vr_cuda_status(vr_compact_cub(m, c->d_cub, &bytes, d_out, d_in, NULL, NULL,
                                             c->d_count, n, threshold, c->stream),
                              VR_CUDA_WHERE, "cub::DeviceSelect::If");
    case VR_COMPACT_CUB_FLAGGED:
        pp.bytes = 1;
        vr_compact_flags_kernel<<<pass_blocks, VR_COMPACT_PASS_BLOCK, 0, c->stream>>>(pp);
        VR_LAUNCH_CHECK("vr_compact_flags_kernel", c->stream);
        return vr_cuda_status(vr_compact_cub(m, c->d_cub, &bytes, d_out, d_in, c->d_flags, NULL,
                                             c->d_count, n, threshold, c->stream),
                              VR_CUDA_WHERE, "cub::DeviceSelect::Flagged");
    case VR_COMPACT_SCAN:
        vr_compact_flags_kernel<<<pass_blocks, VR_COMPACT_PASS_BLOCK, 0, c->stream>>>(pp);
        VR_LAUNCH_CHECK("vr_compact_flags_kernel", c->stream);
        if ((st = vr_cuda_status(vr_compact_cub(m, c->d_cub, &bytes, d_out, d_in, c->d_flags,
                                                c->d_offsets, c->d_count, n, threshold,
                                                c->stream),
                                 VR_CUDA_WHERE, "cub::DeviceScan::ExclusiveSum")) != VR_OK)
            return st;
        vr_compact_scatter_kernel<<<pass_blocks, VR_COMPACT_PASS_BLOCK, 0, c->stream>>>(pp);
        VR_LAUNCH_CHECK("vr_compact_scatter_kernel", c->stream);
        return VR_OK;
    default:
        return VR_ERROR(VR_ERR_ARG, "unknown compaction method %d", (int)m);
    }
}

/* The argument checks of both selections. */
static vr_status vr_compact_check(const vr_compact_ctx *c, vr_compact_method m,
                                  const uint32_t *d_in, uint32_t n, uint64_t threshold)
{
    if ((unsigned)m >= VR_COMPACT_METHOD_COUNT)
        return VR_ERROR(VR_ERR_ARG, "unknown compaction method %d", (int)m);
    if (n > c->max_n)
        return VR_ERROR(VR_ERR_ARG, "compaction of %u elements, but the context was made for at "
                        "most %u", n, c->max_n);
    if (threshold > (1ull << 32))
        return VR_ERROR(VR_ERR_ARG, "compaction threshold %llu is above 2^32",
                        (unsigned long long)threshold);
    if ((uintptr_t)d_in % 16)
        return VR_ERROR(VR_ERR_ARG, "compaction input is not 16-byte aligned");
    return VR_OK;
}

vr_status vr_compact_select_async(vr_compact_ctx *c, vr_compact_method m, uint32_t *d_out,
                                  const uint32_t *d_in, uint32_t n, uint64_t threshold,
                                  void *stream, const uint32_t **d_count)
{
    assert(c && d_count && (d_in || n == 0) && (d_out || n == 0));
    *d_count = NULL;
    vr_status st = vr_compact_check(c, m, d_in, n, threshold);
    if (st != VR_OK)
        return st;
    const int hp = m == VR_COMPACT_HP || m == VR_COMPACT_HP4;
    if (!hp && m != VR_COMPACT_CUB_IF && m != VR_COMPACT_CUB_FLAGGED && m != VR_COMPACT_SCAN)
        return VR_ERROR(VR_ERR_ARG, "compaction method %s keeps its count in its state; "
                        "vr_compact_select_async takes hp, hp4, cub-if, cub-flagged or scan",
                        vr_compact_method_names[m]);
    cudaStream_t s = (cudaStream_t)stream;
    /* the context's stream waits for `stream`, and `stream` for the context's work */
    VR_CUDA_CHECK(cudaEventRecord(c->start, s));
    VR_CUDA_CHECK(cudaStreamWaitEvent(c->stream, c->start, 0));
    if (n == 0)
        VR_CUDA_CHECK(cudaMemsetAsync(c->d_count, 0, sizeof *c->d_count, c->stream));
    else if ((st = vr_compact_launch(c, m, d_out, d_in, n, threshold)) != VR_OK)
        return st;
    if (n > 0 && hp) /* the pyramid's top cell is the count */
        VR_CUDA_CHECK(cudaMemcpyAsync(c->d_count,
                                      vr_hp_device_total(c->hp[m == VR_COMPACT_HP4 ? VR_HP_VEC4
                                                                                  : VR_HP_PLAIN]),
                                      sizeof *c->d_count, cudaMemcpyDeviceToDevice, c->stream));
    VR_CUDA_CHECK(cudaEventRecord(c->stop, c->stream));
    VR_CUDA_CHECK(cudaStreamWaitEvent(s, c->stop, 0));
    *d_count = c->d_count;
    return VR_OK;
}

vr_status vr_compact_select(vr_compact_ctx *c, vr_compact_method m, uint32_t *d_out,
                            const uint32_t *d_in, uint32_t n, uint64_t threshold,
                            uint32_t *count, float *ms)
{
    assert(c && count && (d_in || n == 0) && (d_out || n == 0));
    *count = 0;
    if (ms)
        *ms = 0;
    vr_status st = vr_compact_check(c, m, d_in, n, threshold);
    if (st != VR_OK)
        return st;
    if (n == 0)
        return VR_OK;
    VR_CUDA_CHECK(cudaEventRecord(c->start, c->stream));
    st = vr_compact_launch(c, m, d_out, d_in, n, threshold);
    if (st != VR_OK)
        return st;
    VR_CUDA_CHECK(cudaEventRecord(c->stop, c->stream));
    switch (m) {
    case VR_COMPACT_ORDERED:
    case VR_COMPACT_COLLATE:
    case VR_COMPACT_ATOMIC:
        st = vr_compact_state_result(c->state, count);
        break;
    case VR_COMPACT_HP:
    case VR_COMPACT_HP4:
        st = vr_hp_total(c->hp[m == VR_COMPACT_HP4 ? VR_HP_VEC4 : VR_HP_PLAIN], count);
        break;
    default:
        VR_CUDA_CHECK(cudaMemcpyAsync(count, c->d_count, sizeof *count, cudaMemcpyDeviceToHost,
                                      c->stream));
        VR_CUDA_CHECK(cudaStreamSynchronize(c->stream));
        break;
    }
    if (st == VR_OK && ms)
        VR_CUDA_CHECK(cudaEventElapsedTime(ms, c->start, c->stop));
    return st;
}
