/* compact.cuh - in-kernel stream compaction (Hughes et al., InK-Compact) for any kernel: a
 * thread that has k outputs (0, 1, or more) learns where they go, so the kernel writes each
 * output once, at its final place, before it exits. Three schemes on one small state:
 *
 *   ordered  order kept across the whole launch, one pass, no intermediate buffer:
 *              vr_compact_begin -> vr_compact_block_rank (per round) -> vr_compact_ordered_base
 *              -> write -> vr_compact_end
 *   collate  order kept within a block, blocks in any order, one atomicAdd per block:
 *              the same with vr_compact_collate_base
 *   atomic   order kept within a warp's call, one atomicAdd per warp (the geometry stage's
 *              culling queue): vr_compact_begin -> vr_compact_warp_atomic -> write -> end
 *
 * Offsets, as in the paper: a thread's offset in its warp by __ballot_sync / __popc over the
 * bits of k (one ballot when k is 0 or 1, Eq. 1-2), the warp offsets in the block by the same
 * bit decomposition over the warp totals in one warp (Eq. 3-4: log2 ballots), the block offset
 * by sections of VR_COMPACT_SECTION blocks. Unlike the paper, blocks never stage their outputs
 * in an intermediate buffer for a section controller to move (that would write the geometry
 * stage's 112-byte queue entries twice): each block publishes its count, looks back within its
 * section at the counts of the blocks before it, and takes the sections before its own from
 * their flags (an aggregate as soon as a section's 32 counts are known, an inclusive prefix once
 * its predecessors are; a block that finds a section's flag still empty adds up the section's
 * counts itself when they are all there, so nobody waits for a section's last block to close
 * it), so it learns its final offset and writes once.
 *
 * Why it cannot deadlock, even on an H100 where blocks of a later section may be resident
 * before earlier ones: a block's position is not blockIdx but a ticket taken with one atomicAdd
 * when it starts, so every block it waits for (earlier tickets in its section, earlier sections)
 * has already started and is resident, and no block ever waits for a later ticket; resident
 * blocks run to completion, so by induction on the ticket every wait ends (ticket 0 waits for
 * nobody). The kernel must therefore map its work from the ticket, not blockIdx, to keep order.
 *
 * Why plain functions, no templates or macros: nothing the caller supplies runs inside them.
 * They take counts and return offsets; the caller's predicate and stores stay in the caller's
 * kernel, the block size is read from blockDim, and __forceinline__ puts them in place.
 *
 * Contract: 1-D grid and blocks, blockDim.x a multiple of 32 (<= 1024), every thread of every
 * block calls each block-level function (a thread with nothing passes k = 0), each block calls
 * vr_compact_begin first and vr_compact_end last. Total outputs of a launch < 2^32.
 * Costs per block: ordered: 1 ticket atomic, 1 status store, <= 31 status loads in its
 * section and a look-back over section flags (usually one 256-byte load), issued together so
 * they cost one round trip when nothing is late, 1 done atomic; collate:
 * 3 atomics; atomic: 2 atomics + 1 per warp call. Shared memory: one vr_compact_shared
 * (140 bytes). Each vr_compact_block_rank holds two __syncthreads, the bases one each side.
 * The state (vr_compact_dev, compact.h) needs no reset between launches. CPU twin:
 * compact_ref.c. Tests: tests/test_compact_gpu.cu.
 */
#ifndef VR_COMPACT_CUH
#define VR_COMPACT_CUH

#include <stdint.h>

#include "pipeline/block_scan.cuh" /* VR_WARP_SIZE, VR_FULL_MASK */
#include "pipeline/compact/compact.h"

/* Per-block shared state of the block-level functions. */
typedef struct vr_compact_shared {
    uint32_t warp[VR_WARP_SIZE]; /* per warp (or per (round, warp) pair) totals, then their
                                    exclusive offsets in the block */
    uint32_t ticket;             /* this block's position in the launch */
    uint32_t total;              /* the block's outputs ranked so far */
    uint32_t base;               /* the block's first output index */
} vr_compact_shared;

/* Status word states (bits 32..33; the epoch sits above them). */
#define VR_COMPACT_EMPTY 0u
#define VR_COMPACT_AGGREGATE 1u /* a block's count, a section's total */
#define VR_COMPACT_PREFIX 2u    /* a section's inclusive prefix: outputs of it and all before */

static __device__ __forceinline__ uint64_t vr_compact_tag(uint32_t epoch, uint32_t state,
                                                          uint32_t value)
{
    return (uint64_t)epoch << 34 | (uint64_t)state << 32 | value;
}

/* The state of word w in this launch: EMPTY unless it carries the launch's epoch. */
static __device__ __forceinline__ uint32_t vr_compact_state_of(uint64_t w, uint32_t epoch)
{
    return (uint32_t)(w >> 34) == epoch ? (uint32_t)(w >> 32) & 3u : VR_COMPACT_EMPTY;
}

/* Strong (relaxed, GPU-scope) loads and stores: seen by every SM, never served from L1. The
 * words carry all the information exchanged, so no acquire/release ordering is needed. */
static __device__ __forceinline__ uint64_t vr_compact_load(const uint64_t *p)
{
    unsigned long long v;
    asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}

static __device__ __forceinline__ void vr_compact_store(uint64_t *p, uint64_t v)
{
    asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(p), "l"((unsigned long long)v)
                 : "memory");
}

static __device__ __forceinline__ uint64_t vr_compact_clock_ns(void)
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

static __device__ __forceinline__ uint32_t vr_compact_lanemask_lt(void)
{
    uint32_t m;
    asm("mov.u32 %0, %%lanemask_lt;" : "=r"(m));
    return m;
}

/* Exclusive scan of x over the 32 lanes by bit decomposition: for each bit j that any lane
 * has, one ballot; a lane's offset gains popc(ballot & lanes below) << j. One ballot for x in
 * {0, 1}, 6 for warp totals <= 32. Every lane of the warp calls it; *total gets the sum. */
static __device__ __forceinline__ uint32_t vr_compact_warp_scan(uint32_t x, uint32_t *total)
{
    const uint32_t below_mask = vr_compact_lanemask_lt();
    const uint32_t bits = __reduce_or_sync(VR_FULL_MASK, x);
    uint32_t below = 0, sum = 0;
    for (uint32_t j = 0; j < 32 && (bits >> j) != 0; ++j) {
        const uint32_t b = __ballot_sync(VR_FULL_MASK, (x >> j) & 1u);
        below += (uint32_t)__popc(b & below_mask) << j;
        sum += (uint32_t)__popc(b) << j;
    }
    *total = sum;
    return below;
}

/* The block's ticket (its place in the launch's output order), shared: ticket = one atomicAdd
 * when the block starts. Resets the block's running total. Every thread calls it first. */
static __device__ __forceinline__ uint32_t vr_compact_begin(const vr_compact_dev d,
                                                            vr_compact_shared *s)
{
    if (threadIdx.x == 0) {
        s->ticket = atomicAdd(d.counters + VR_COMPACT_TICKET, 1u);
        s->total = 0;
    }
    __syncthreads();
    return s->ticket;
}

/* The offset of this thread's k outputs among the block's outputs: after everything earlier
 * calls ranked, then in thread order. A call is one round; the block's outputs are those of
 * round 1 in thread order, then round 2, and so on. Two __syncthreads. */
static __device__ __forceinline__ uint32_t vr_compact_block_rank(vr_compact_shared *s, uint32_t k)
{
    const uint32_t lane = threadIdx.x & (VR_WARP_SIZE - 1), warp = threadIdx.x / VR_WARP_SIZE;
    const uint32_t warps = blockDim.x / VR_WARP_SIZE;
    uint32_t warp_total;
    __syncwarp(); /* the lanes have read s->warp[warp] of the previous round */
    const uint32_t rank = vr_compact_warp_scan(k, &warp_total);
    if (lane == 0)
        s->warp[warp] = warp_total;
    __syncthreads();
    if (warp == 0) {
        const uint32_t before = s->total, x = lane < warps ? s->warp[lane] : 0;
        uint32_t block_total;
        const uint32_t offset = vr_compact_warp_scan(x, &block_total);
        __syncwarp(); /* every lane has read s->total */
        if (lane < warps)
            s->warp[lane] = before + offset;
        if (lane == 0)
            s->total = before + block_total;
    }
    __syncthreads();
    return rank + s->warp[warp];
}

/* Waits until *p holds a word of this launch (a block's count or a section's flag) and
 * returns it; past VR_COMPACT_WAIT_NS it records an error and returns an empty aggregate, so a
 * broken protocol ends the kernel with a wrong result instead of hanging it. */
static __device__ uint64_t vr_compact_wait(const vr_compact_dev d, const uint64_t *p)
{
    uint64_t w = vr_compact_load(p);
    if (vr_compact_state_of(w, d.epoch) != VR_COMPACT_EMPTY)
        return w;
    const uint64_t t0 = vr_compact_clock_ns();
    uint32_t sleep_ns = 32;
    for (;;) {
        __nanosleep(sleep_ns);
        sleep_ns = sleep_ns < 256 ? 2 * sleep_ns : sleep_ns;
        w = vr_compact_load(p);
        if (vr_compact_state_of(w, d.epoch) != VR_COMPACT_EMPTY)
            return w;
        if (vr_compact_clock_ns() - t0 > VR_COMPACT_WAIT_NS) {
            atomicOr(d.counters + VR_COMPACT_ERROR, 1u);
            return vr_compact_tag(d.epoch, VR_COMPACT_AGGREGATE, 0);
        }
    }
}

/* The aggregate of the full section q from its 32 counts, by one warp, when all of them are
 * published (returns 1; 0 if not yet): a block that looks back need not wait for the section's
 * last block to close it. The result is entered into the section's flag if that still holds
 * `stale` (the word the caller read there, of an earlier launch): a compare-and-swap, so an
 * aggregate or prefix the closer stored meanwhile is never overwritten. */
static __device__ int vr_compact_section_from_counts(const vr_compact_dev d, uint32_t q,
                                                     uint64_t stale)
{
    const uint32_t lane = threadIdx.x & (VR_WARP_SIZE - 1);
    const uint64_t w = vr_compact_load(d.status + ((uint64_t)q << VR_COMPACT_SECTION_LOG2) + lane);
    if (!__all_sync(VR_FULL_MASK, vr_compact_state_of(w, d.epoch) != VR_COMPACT_EMPTY))
        return 0;
    const uint32_t sum = __reduce_add_sync(VR_FULL_MASK, (uint32_t)w);
    if (lane == 0)
        atomicCAS((unsigned long long *)(d.status + d.block_capacity + q),
                  (unsigned long long)stale,
                  (unsigned long long)vr_compact_tag(d.epoch, VR_COMPACT_AGGREGATE, sum));
    return 1;
}

/* Outputs of all sections before `section` (> 0), by one warp: lane i reads the flag of
 * section section - 1 - i (`first`: the words of the first window, already loaded by the
 * caller); once the lanes up to the nearest inclusive prefix (or all 32) hold words of this
 * launch, their values add up to the answer (aggregates of the sections in between plus that
 * prefix), else the window moves 32 sections down. A section still empty gets its aggregate
 * from its counts when they are all published (vr_compact_section_from_counts); only then does
 * the warp sleep and read again. Only earlier sections are read. */
static __device__ uint32_t vr_compact_lookback(const vr_compact_dev d, uint32_t section,
                                               uint64_t first)
{
    const uint32_t lane = threadIdx.x & (VR_WARP_SIZE - 1);
    const uint64_t *sections = d.status + d.block_capacity;
    uint32_t sum = 0;
    int64_t top = (int64_t)section - 1;
    uint64_t w = first;
    int loaded = 1;
    const uint64_t t0 = vr_compact_clock_ns();
    uint32_t sleep_ns = 0;
    for (;;) {
        const int64_t at = top - (int64_t)lane;
        uint32_t state, need, prefixes;
        for (;;) {
            /* before section 0 lies an empty prefix */
            if (!loaded)
                w = at >= 0 ? vr_compact_load(sections + at)
                            : vr_compact_tag(d.epoch, VR_COMPACT_PREFIX, 0);
            loaded = 0;
            state = vr_compact_state_of(w, d.epoch);
            prefixes = __ballot_sync(VR_FULL_MASK, state == VR_COMPACT_PREFIX);
            const uint32_t ready = __ballot_sync(VR_FULL_MASK, state != VR_COMPACT_EMPTY);
            /* lanes up to and including the lowest prefix, or all */
            need = prefixes ? (prefixes ^ (prefixes - 1u)) : VR_FULL_MASK;
            if ((ready & need) == need)
                break;
            const uint32_t missing = (uint32_t)__ffs(need & ~ready) - 1u; /* nearest empty */
            const uint64_t stale = __shfl_sync(VR_FULL_MASK, w, missing);
            if (vr_compact_section_from_counts(d, (uint32_t)(top - (int64_t)missing), stale))
                continue; /* its flag now holds a word of this launch */
            if (__any_sync(VR_FULL_MASK, vr_compact_clock_ns() - t0 > VR_COMPACT_WAIT_NS)) {
                if (lane == 0)
                    atomicOr(d.counters + VR_COMPACT_ERROR, 1u);
                return sum;
            }
            if (sleep_ns)
                __nanosleep(sleep_ns);
            sleep_ns = sleep_ns < 128 ? sleep_ns + 32 : sleep_ns;
        }
        sum += __reduce_add_sync(VR_FULL_MASK, (need >> lane) & 1u ? (uint32_t)w : 0u);
        if (prefixes)
            return sum;
        top -= VR_WARP_SIZE;
    }
}

/* The hand-off in two steps, by one warp (all 32 lanes call both; each gets the result):
 * vr_compact_ordered_publish makes the count of position `ticket` visible and waits for
 * nothing; vr_compact_ordered_finish, called after it (at once, or after other work: the
 * persistent stand-alone kernel of compact.cu ranks its next tile in between), returns the
 * first output index of the position's `count` outputs in a launch of `tickets` positions.
 * finish waits for the counts of the positions before it in its section and for the section's
 * start from the section flags; the section's last position (31, or the launch's last)
 * publishes the section's aggregate and then its inclusive prefix; the launch's last position
 * leaves the total in RUNNING. Both wait only for earlier positions, so the argument above
 * holds position by position for a block that holds several tickets too, as long as it takes
 * them by atomicAdd while it runs, publishes each count before it waits for anything of a
 * later position, and finishes its positions in increasing order (see compact.cu). */
static __device__ __forceinline__ void vr_compact_ordered_publish(const vr_compact_dev d,
                                                                  uint32_t ticket, uint32_t count)
{
    if ((threadIdx.x & (VR_WARP_SIZE - 1)) == 0)
        vr_compact_store(d.status + ticket, vr_compact_tag(d.epoch, VR_COMPACT_AGGREGATE, count));
}

static __device__ uint32_t vr_compact_ordered_finish(const vr_compact_dev d, uint32_t ticket,
                                                     uint32_t count, uint32_t tickets)
{
    const uint32_t lane = threadIdx.x & (VR_WARP_SIZE - 1);
    const uint32_t section = ticket >> VR_COMPACT_SECTION_LOG2;
    const uint32_t pos = ticket & (VR_COMPACT_SECTION - 1);
    const uint32_t first = section << VR_COMPACT_SECTION_LOG2;
    uint64_t *sections = d.status + d.block_capacity;
    /* one round trip in the usual case: the counts before this position in its section and
       the first window of section flags are loaded together */
    uint64_t mine = lane < pos ? vr_compact_load(d.status + first + lane)
                               : vr_compact_tag(d.epoch, VR_COMPACT_AGGREGATE, 0);
    const int64_t at = (int64_t)section - 1 - (int64_t)lane;
    const uint64_t window = section == 0 ? 0u
                            : at >= 0    ? vr_compact_load(sections + at)
                                         : vr_compact_tag(d.epoch, VR_COMPACT_PREFIX, 0);
    if (vr_compact_state_of(mine, d.epoch) == VR_COMPACT_EMPTY)
        mine = vr_compact_wait(d, d.status + first + lane);
    const uint32_t within = __reduce_add_sync(VR_FULL_MASK, (uint32_t)mine);
    const int closes = pos == VR_COMPACT_SECTION - 1 || ticket == tickets - 1;
    if (closes && lane == 0 && section > 0)
        vr_compact_store(sections + section,
                         vr_compact_tag(d.epoch, VR_COMPACT_AGGREGATE, within + count));
    const uint32_t before = section ? vr_compact_lookback(d, section, window) : 0u;
    if (lane == 0) {
        if (closes)
            vr_compact_store(sections + section, vr_compact_tag(d.epoch, VR_COMPACT_PREFIX,
                                                                before + within + count));
        if (ticket == tickets - 1)
            atomicExch(d.counters + VR_COMPACT_RUNNING, before + within + count);
    }
    return before + within;
}

/* Both steps at once: the hand-off of a block that has nothing else to do meanwhile. */
static __device__ __forceinline__ uint32_t vr_compact_ordered_offset(const vr_compact_dev d,
                                                                     uint32_t ticket,
                                                                     uint32_t count,
                                                                     uint32_t tickets)
{
    vr_compact_ordered_publish(d, ticket, count);
    return vr_compact_ordered_finish(d, ticket, count, tickets);
}

/* The block's first output index in input (ticket) order, after all its rounds were ranked
 * (s->total final): warp 0 does the hand-off (vr_compact_ordered_offset) for the block's
 * ticket in a launch of gridDim.x blocks. Every thread calls it; two __syncthreads. */
static __device__ uint32_t vr_compact_ordered_base(const vr_compact_dev d, vr_compact_shared *s)
{
    __syncthreads(); /* s->total is final */
    if (threadIdx.x < VR_WARP_SIZE) {
        const uint32_t base = vr_compact_ordered_offset(d, s->ticket, s->total, gridDim.x);
        if (threadIdx.x == 0)
            s->base = base;
    }
    __syncthreads();
    return s->base;
}

/* The block's first output index with one atomicAdd (InK-Collate): blocks land in the order
 * their atomics do. Every thread calls it; two __syncthreads. */
static __device__ __forceinline__ uint32_t vr_compact_collate_base(const vr_compact_dev d,
                                                                   vr_compact_shared *s)
{
    __syncthreads(); /* s->total is final */
    if (threadIdx.x == 0)
        s->base = s->total ? atomicAdd(d.counters + VR_COMPACT_RUNNING, s->total) : 0u;
    __syncthreads();
    return s->base;
}

/* The first output index of this lane's k outputs with one atomicAdd per warp: lane order
 * within the warp, warps in the order of their atomics. Every lane of the warp calls it. */
static __device__ __forceinline__ uint32_t vr_compact_warp_atomic(const vr_compact_dev d,
                                                                  uint32_t k)
{
    uint32_t total;
    const uint32_t rank = vr_compact_warp_scan(k, &total);
    uint32_t base = 0;
    if ((threadIdx.x & (VR_WARP_SIZE - 1)) == 0 && total)
        base = atomicAdd(d.counters + VR_COMPACT_RUNNING, total);
    return __shfl_sync(VR_FULL_MASK, base, 0) + rank;
}

/* Ends the block's part: the last block of the launch to get here (every ticket has been
 * taken and every claim made by then) moves the count to RESULT and zeroes TICKET, DONE and
 * RUNNING for the next launch. Every thread calls it last. */
static __device__ __forceinline__ void vr_compact_end(const vr_compact_dev d)
{
    __syncthreads(); /* the block's atomics on RUNNING precede its DONE */
    if (threadIdx.x == 0) {
        __threadfence();
        if (atomicAdd(d.counters + VR_COMPACT_DONE, 1u) == gridDim.x - 1) {
            __threadfence();
            atomicExch(d.counters + VR_COMPACT_RESULT,
                       atomicExch(d.counters + VR_COMPACT_RUNNING, 0u));
            atomicExch(d.counters + VR_COMPACT_TICKET, 0u);
            atomicExch(d.counters + VR_COMPACT_DONE, 0u);
        }
    }
}

#endif
