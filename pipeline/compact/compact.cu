/* compact.cu - the stand-alone compactions of compact.h: keep the elements with value <
 * threshold. The in-kernel primitives of compact.cuh (ordered, collate, atomic) in one kernel
 * that reads a tile of 4096 elements per block with 16-byte loads, the HistoPyramids of
 * histopyramid.cu, and the baselines: cub::DeviceSelect::If, a flag kernel +
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

#include "pipeline/compact/compact.cuh"
#include "pipeline/compact/histopyramid.h"
#include "pipeline/vr_check.h"

#define VR_COMPACT_WARPS (VR_COMPACT_BLOCK / VR_WARP_SIZE)  /* 8 */
#define VR_COMPACT_ROUND (VR_COMPACT_BLOCK * VR_COMPACT_VEC) /* 1024 elements per round */
static_assert(VR_COMPACT_ROUNDS * VR_COMPACT_WARPS == VR_WARP_SIZE,
              "one warp scans the (round, warp) counts of a tile");
static_assert(VR_COMPACT_ROUND * VR_COMPACT_ROUNDS == VR_COMPACT_TILE, "tile shape");
static_assert(VR_WARP_SIZE * VR_COMPACT_VEC == 1u << VR_COMPACT_WARP_RUN_LOG2, "warp run");
/* flag and scatter passes: 4 elements per thread */
#define VR_COMPACT_PASS_BLOCK 256u

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
    uint32_t delay_first, delay_tickets, delay_ns; /* vr_compact_set_delay */
};

typedef struct vr_compact_select_params {
    uint32_t *out;          /* n words */
    const uint32_t *in;     /* n words, 16-byte aligned */
    uint64_t threshold;     /* keep value < threshold, 0..2^32 */
    vr_compact_dev dev;     /* state for ceil(n / VR_COMPACT_TILE) blocks */
    uint32_t n;
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

/* ORDERED, COLLATE, ATOMIC. One block per tile of 4096 elements, the tile taken from the
 * block's ticket (vr_compact_begin), not blockIdx. Round r: thread t holds elements
 * r * 1024 + 4t..4t+3 (one uint4) and ranks its k <= 4 kept ones in its warp (bit
 * decomposition, 3 ballots). ORDERED/COLLATE: lane 0 of each warp puts its 4 round totals in
 * s.warp[r * 8 + warp] (the 32 (round, warp) pairs in input order), warp 0 scans them, the
 * block's base comes from the sections (ordered) or one atomicAdd (collate); ATOMIC: one
 * atomicAdd per warp and round. Each kept element is stored once at its final index. Syncs:
 * begin, the table, the base (2), end. */
__global__ void __launch_bounds__(VR_COMPACT_BLOCK)
    vr_compact_select_kernel(const vr_compact_select_params p)
{
    __shared__ vr_compact_shared s;
    const uint32_t lane = threadIdx.x & (VR_WARP_SIZE - 1), warp = threadIdx.x / VR_WARP_SIZE;
    const uint32_t ticket = vr_compact_begin(p.dev, &s);
    const uint64_t tile = (uint64_t)ticket << VR_COMPACT_TILE_LOG2;
    uint32_t v[VR_COMPACT_ROUNDS][VR_COMPACT_VEC], keep[VR_COMPACT_ROUNDS], at[VR_COMPACT_ROUNDS];
#pragma unroll
    for (uint32_t r = 0; r < VR_COMPACT_ROUNDS; ++r)
        keep[r] = vr_compact_load4(p.in, p.n, p.threshold,
                                   tile + r * VR_COMPACT_ROUND + VR_COMPACT_VEC * threadIdx.x,
                                   v[r]);
    if (ticket - p.delay_first < p.delay_tickets)
        vr_compact_delay(p.delay_ns);
    if (p.method == VR_COMPACT_ATOMIC) {
#pragma unroll
        for (uint32_t r = 0; r < VR_COMPACT_ROUNDS; ++r)
            at[r] = vr_compact_warp_atomic(p.dev, (uint32_t)__popc(keep[r]));
    } else {
        uint32_t warp_total[VR_COMPACT_ROUNDS];
#pragma unroll
        for (uint32_t r = 0; r < VR_COMPACT_ROUNDS; ++r)
            at[r] = vr_compact_warp_scan((uint32_t)__popc(keep[r]), &warp_total[r]);
        if (lane == 0)
            for (uint32_t r = 0; r < VR_COMPACT_ROUNDS; ++r)
                s.warp[r * VR_COMPACT_WARPS + warp] = warp_total[r];
        __syncthreads();
        if (warp == 0) {
            uint32_t total;
            const uint32_t offset = vr_compact_warp_scan(s.warp[lane], &total);
            s.warp[lane] = offset;
            if (lane == 0)
                s.total = total;
        }
        const uint32_t base = p.method == VR_COMPACT_ORDERED ? vr_compact_ordered_base(p.dev, &s)
                                                             : vr_compact_collate_base(p.dev, &s);
#pragma unroll
        for (uint32_t r = 0; r < VR_COMPACT_ROUNDS; ++r)
            at[r] += base + s.warp[r * VR_COMPACT_WARPS + warp];
    }
#pragma unroll
    for (uint32_t r = 0; r < VR_COMPACT_ROUNDS; ++r)
        for (uint32_t j = 0; j < VR_COMPACT_VEC; ++j)
            if (keep[r] >> j & 1u)
                p.out[at[r]++] = v[r][j];
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
        const uint32_t blocks = vr_compact_tiles(n);
        if ((st = vr_compact_state_next(c->state, blocks, &p.dev)) != VR_OK)
            return st;
        vr_compact_select_kernel<<<blocks, VR_COMPACT_BLOCK, 0, c->stream>>>(p);
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
