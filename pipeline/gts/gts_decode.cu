/* gts_decode.cu - GPU decoder of the GTS codec, the data-parallel algorithm of Meyer et al.
 * 2012 (Fig. 4, 5, 7): S_Scan, D_Scatter, U_Scan (Simple-9 -> U), then INC + U -> V and the
 * strips -> triangles either as the paper's INC_Scan, V_Kernel, M_Scan, Q_Scan, T_Kernel or
 * (default) as tiled passes that never store incscan, M or Q: VTile_Reduce, VTile_Scan,
 * V_Tiled, Tile_Reduce, Tile_Scan, T_Tiled. Scans are
 * cub::DeviceScan with custom operators over thrust transform/counting iterators (the paper's
 * "transform scans", Eq. 9); the per-element arithmetic is gts_math.h, shared with the CPU
 * twins vr_gts_decode_scan_ref and vr_gts_decode_tiled_ref in gts_decode_ref.c. All memory is
 * allocated by vr_gts_gpu_create; decode allocates nothing.
 * Try: `vreuse_tests gpu/gts`, `vreuse compress --bench-decode sphere:7M`.
 */
#include <cub/block/block_exchange.cuh>
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/device/device_scan.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/gts/gts.h"
#include "pipeline/vr_check.h"
#include "pipeline/gts/gts_math.h"

/* T_Kernel and V_Kernel: one thread per triangle / V entry (the paper found 512 best on a
 * GTX 580; 256 keeps more blocks resident per SM on sm_90 with the same occupancy). */
#define VR_GTS_T_BLOCK_LOG2 8
#define VR_GTS_T_BLOCK (1 << VR_GTS_T_BLOCK_LOG2)
#define VR_GTS_V_BLOCK 256
/* D_Scatter: one thread per Simple-9 word; a block stages its <= 28 * 64 codes in shared
 * memory and writes them coalesced (the paper's 64 threads, unstaged, write 28 strided words). */
#define VR_GTS_D_BLOCK 64
/* Tiled strip pass: a block per tile of VR_GTS_TILE (gts_math.h) triangles, VR_GTS_TILE_ITEMS
 * per thread. 2048 = 256 x 8: the tile aggregates (3.4k for 7M triangles, 27 KB) scan in one
 * small CUB pass, a thread's 8 codes share one 32-bit word of C, the block scan's cost is
 * spread over 8 triangles per thread, and the 24 KB of staged output per block do not limit
 * residency (T_Tiled's 64 registers allow 4 blocks per SM, 24 loads in flight per thread). */
#define VR_GTS_TILE_ITEMS_LOG2 3
#define VR_GTS_TILE_ITEMS (1 << VR_GTS_TILE_ITEMS_LOG2)
#define VR_GTS_TILE_BLOCK (1 << (VR_GTS_TILE_LOG2 - VR_GTS_TILE_ITEMS_LOG2))
/* Tiled V pass: a block per tile of VR_GTS_VTILE = 8192 V entries (gts_math.h), one INC word
 * per thread for the scan, then 32 entries per thread striped. 8192: 7M entries make 856 tiles,
 * one wave at 8 blocks of 256 per SM on 132 SMs (each thread's 32 gathers need many resident
 * warps to hide latency, so larger tiles would leave SMs idle), and the tile counts (3.4 KB)
 * scan in one small CUB pass. VR_GTS_V_ITEMS gathers are issued before their stores. */
#define VR_GTS_VTILE_BLOCK VR_GTS_VTILE_WORDS
#define VR_GTS_V_ITEMS 8

struct vr_gts_gpu {
    vr_gts h;              /* counts of the uploaded stream (host arrays not kept) */
    uint32_t codes;        /* 1: R mode (M_Scan runs), 0: deg. mode (M[i] = i + 2) */
    vr_gts_strip_pass pass; /* V and strip passes of the next decode (default by size) */
    uint32_t tile_count;   /* ceil(strip_triangle_count / VR_GTS_TILE) */
    uint32_t vtile_count;  /* ceil(v_count / VR_GTS_VTILE) */
    uint32_t *d_c;         /* vr_gts_c_words */
    uint32_t *d_inc;       /* vr_gts_inc_words */
    uint32_t *d_s;         /* max(s_count, 1) */
    uint32_t *d_sbar;      /* max(s_count, 1): first code of each word in D */
    uint32_t *d_d;         /* max(u_count, 1): zigzag deltas */
    uint32_t *d_u;         /* max(u_count, 1): re-used vertices */
    uint32_t *d_incscan;   /* v_count: INC ones before each V entry (paper pass) */
    uint32_t *d_vtile_count; /* vtile_count: VTile_Reduce's INC ones per V tile */
    uint32_t *d_vtile_carry; /* vtile_count: VTile_Scan's INC ones before each V tile */
    uint32_t *d_v;         /* v_count */
    uint32_t *d_m;         /* strip_triangle_count (R mode only, else NULL; paper pass) */
    uint32_t *d_q;         /* strip_triangle_count (paper pass) */
    vr_gts_tile_agg *d_tile_agg;   /* tile_count: Tile_Reduce's aggregates */
    vr_gts_tile_agg *d_tile_carry; /* tile_count: Tile_Scan's exclusive prefixes */
    uint32_t *d_t;         /* 3 * strip_triangle_count: the output */
    uint32_t *d_err;       /* 1: VR_GTS_ERR_* bits, reset to 0 by every decode */
    void *d_temp;          /* CUB temp storage, temp_bytes = max over the seven scans */
    size_t temp_bytes;
    cudaStream_t stream;
    cudaEvent_t ev[VR_GTS_STAGE_COUNT + 1];
    int events;            /* events created */
};

/* ---- scan operators and transforms (the functions f of the paper's Eq. 9) ----------------- */

struct vr_gts_add {
    __host__ __device__ __forceinline__ uint32_t operator()(uint32_t a, uint32_t b) const
    {
        return a + b;
    }
};

struct vr_gts_max {
    __host__ __device__ __forceinline__ uint32_t operator()(uint32_t a, uint32_t b) const
    {
        return a > b ? a : b;
    }
};

/* M_Scan input: 3 for R, 1 for N/P; triangle 0 contributes 2 so the inclusive sum is M. */
struct vr_gts_m_op {
    const uint32_t *c;
    __host__ __device__ __forceinline__ uint32_t operator()(uint32_t i) const
    {
        return i == 0 ? 2u : vr_gts_m_step(vr_gts_code_read(c, i, 1u));
    }
};

/* Q_Scan input (Eq. 8), max-scanned. */
struct vr_gts_q_op {
    const uint32_t *c;
    const uint32_t *m; /* NULL in deg. mode: M[i] = i + 2 */
    uint32_t codes;
    __host__ __device__ __forceinline__ uint32_t operator()(uint32_t i) const
    {
        if (i == 0)
            return 0u;
        const uint32_t mi = m ? m[i] : i + 2u;
        return vr_gts_q_value(vr_gts_code_read(c, i - 1, codes), vr_gts_code_read(c, i, codes), mi);
    }
};

struct vr_gts_inc_op {
    const uint32_t *inc;
    __host__ __device__ __forceinline__ uint32_t operator()(uint32_t j) const
    {
        return vr_gts_bit(inc, j);
    }
};

struct vr_gts_s9_count_op {
    __host__ __device__ __forceinline__ uint32_t operator()(uint32_t w) const
    {
        return vr_gts_s9_count(w >> 28);
    }
};

struct vr_gts_unzigzag_op {
    __host__ __device__ __forceinline__ uint32_t operator()(uint32_t z) const
    {
        return vr_gts_unzigzag(z);
    }
};

/* Tile_Scan: segment a, then segment b (gts_math.h). */
struct vr_gts_tile_op {
    __host__ __device__ __forceinline__ vr_gts_tile_agg operator()(const vr_gts_tile_agg &a,
                                                                   const vr_gts_tile_agg &b) const
    {
        return vr_gts_tile_combine(a, b);
    }
};

typedef thrust::counting_iterator<uint32_t> vr_count_it;
typedef thrust::transform_iterator<vr_gts_m_op, vr_count_it> vr_m_it;
typedef thrust::transform_iterator<vr_gts_q_op, vr_count_it> vr_q_it;
typedef thrust::transform_iterator<vr_gts_inc_op, vr_count_it> vr_inc_it;
typedef thrust::transform_iterator<vr_gts_s9_count_op, const uint32_t *> vr_s9_it;
typedef thrust::transform_iterator<vr_gts_unzigzag_op, const uint32_t *> vr_unzig_it;

/* ---- kernels -------------------------------------------------------------------------------- */

/* D_Scatter: thread l unpacks word l into shared memory at its offset within the block's
 * output range sbar[first word] .. sbar[last word] + count (offsets differ by <= 28 per word,
 * so a block needs <= 28 * VR_GTS_D_BLOCK slots); after the sync the block writes the range
 * coalesced. Writes at or past |U| are dropped and flagged; bad selectors unpack nothing. */
static __global__ void __launch_bounds__(VR_GTS_D_BLOCK)
    vr_gts_d_scatter_kernel(const uint32_t *s, const uint32_t *sbar, uint32_t s_count,
                            uint32_t *d, uint32_t u_count, uint32_t *err)
{
    __shared__ uint32_t s_codes[28 * VR_GTS_D_BLOCK];
    __shared__ uint32_t s_total;
    const uint32_t first = blockIdx.x * VR_GTS_D_BLOCK, l = first + threadIdx.x;
    const uint32_t block_base = sbar[first];
    uint32_t bits_err = 0;
    if (l < s_count) {
        const uint32_t w = s[l], sel = w >> 28;
        const uint32_t bits = vr_gts_s9_bits(sel), count = vr_gts_s9_count(sel);
        if (!count)
            bits_err |= VR_GTS_ERR_SELECTOR;
        const uint32_t base = sbar[l], local = base - block_base;
        for (uint32_t k = 0; k < count; ++k)
            s_codes[local + k] = vr_gts_s9_code(w, k, bits);
        if (l == s_count - 1 && base + count != u_count)
            bits_err |= VR_GTS_ERR_S9COUNT;
        if (l == s_count - 1 || threadIdx.x == VR_GTS_D_BLOCK - 1)
            s_total = local + count;
    }
    __syncthreads();
    const uint32_t total = s_total;
    for (uint32_t k = threadIdx.x; k < total; k += VR_GTS_D_BLOCK) {
        const uint32_t idx = block_base + k;
        if (idx < u_count)
            d[idx] = s_codes[k];
        else
            bits_err |= VR_GTS_ERR_S9COUNT;
    }
    if (bits_err)
        atomicOr(err, bits_err);
}

/* V_Kernel (Fig. 5b): one thread per V entry. An incremental vertex is the count of INC ones
 * before it; a re-used one is U[j - incscan[j]], which must be < incscan[j] (introduced
 * already; vr_gts_v_entry). The last thread checks the INC total against the referenced count. */
static __global__ void __launch_bounds__(VR_GTS_V_BLOCK)
    vr_gts_v_kernel(const uint32_t *inc, const uint32_t *incscan, const uint32_t *u,
                    uint32_t u_count, uint32_t v_count, uint32_t referenced, uint32_t *v,
                    uint32_t *err)
{
    const uint32_t j = blockIdx.x * VR_GTS_V_BLOCK + threadIdx.x;
    if (j >= v_count)
        return;
    const uint32_t one = vr_gts_bit(inc, j), before = incscan[j];
    uint32_t bits_err = 0;
    const uint32_t val = vr_gts_v_entry(one, before, j, u, u_count, &bits_err);
    bits_err |= vr_gts_inc_total_err(j, v_count, before + one, referenced);
    v[j] = val;
    if (bits_err)
        atomicOr(err, bits_err);
}

/* The tiled V pass: VTile_Reduce and V_Tiled read INC the same way, one block per tile. */
typedef struct vr_gts_vtile_params {
    const uint32_t *inc;   /* vr_gts_inc_words: INC bits */
    const uint32_t *u;     /* max(u_count, 1): re-used vertices (V_Tiled) */
    uint32_t *count;       /* vtile_count: INC ones per tile, written by VTile_Reduce */
    const uint32_t *carry; /* vtile_count: VTile_Scan's exclusive prefixes, read by V_Tiled */
    uint32_t *v;           /* v_count: the output V (V_Tiled) */
    uint32_t *err;         /* 1: VR_GTS_ERR_* bits */
    uint32_t v_count;      /* |V| >= 3 */
    uint32_t u_count;      /* |U|, may be 0 */
    uint32_t referenced;   /* referenced_count: the INC total V_Tiled checks */
} vr_gts_vtile_params;

/* VTile_Reduce: one block per tile, thread tid pops INC word tile * VR_GTS_VTILE_WORDS + tid
 * (padding bits past |V| masked, words past the end read as 0); cub::BlockReduce sums, thread 0
 * writes the tile's count. Reads only INC (1 bit per V entry). */
static __global__ void __launch_bounds__(VR_GTS_VTILE_BLOCK)
    vr_gts_vtile_reduce_kernel(vr_gts_vtile_params p)
{
    typedef cub::BlockReduce<uint32_t, VR_GTS_VTILE_BLOCK> vr_block_reduce;
    __shared__ vr_block_reduce::TempStorage s_reduce;
    const uint32_t w = blockIdx.x * VR_GTS_VTILE_WORDS + threadIdx.x;
    const uint32_t ones = vr_popc(vr_gts_inc_word(p.inc, w, p.v_count));
    const uint32_t total = vr_block_reduce(s_reduce).Sum(ones);
    if (threadIdx.x == 0)
        p.count[blockIdx.x] = total;
}

/* V_Tiled: one block per tile. Thread tid owns INC word tid of the tile for an exclusive
 * cub::BlockScan of word popcounts seeded with the tile's carry; s_inc / s_before hold each
 * word and the ones before it (one sync). Then entries are striped (thread tid takes tile entry
 * k * VR_GTS_VTILE_BLOCK + tid): a warp reads one word by broadcast, its U gathers are
 * near-consecutive and its V stores coalesced. Checks are V_Kernel's (vr_gts_v_entry, the INC
 * total at entry |V| - 1); entries past |V| are neither read nor written. */
static __global__ void __launch_bounds__(VR_GTS_VTILE_BLOCK)
    vr_gts_v_tiled_kernel(vr_gts_vtile_params p)
{
    typedef cub::BlockScan<uint32_t, VR_GTS_VTILE_BLOCK> vr_block_scan;
    __shared__ vr_block_scan::TempStorage s_scan;
    __shared__ uint32_t s_inc[VR_GTS_VTILE_WORDS], s_before[VR_GTS_VTILE_WORDS];
    const uint32_t first = blockIdx.x * VR_GTS_VTILE;
    const uint32_t word = vr_gts_inc_word(p.inc, blockIdx.x * VR_GTS_VTILE_WORDS + threadIdx.x,
                                          p.v_count);
    uint32_t before;
    vr_block_scan(s_scan).ExclusiveSum(vr_popc(word), before);
    s_inc[threadIdx.x] = word;
    s_before[threadIdx.x] = p.carry[blockIdx.x] + before;
    __syncthreads();
    uint32_t bits_err = 0;
    for (uint32_t k0 = 0; k0 < VR_GTS_VTILE / VR_GTS_VTILE_BLOCK; k0 += VR_GTS_V_ITEMS) {
        uint32_t val[VR_GTS_V_ITEMS];
#pragma unroll
        for (int k = 0; k < VR_GTS_V_ITEMS; ++k) {
            const uint32_t l = (k0 + k) * VR_GTS_VTILE_BLOCK + threadIdx.x, j = first + l;
            val[k] = 0u;
            if (j >= p.v_count)
                continue;
            const uint32_t w = s_inc[l >> 5], bit = l & 31u, one = (w >> bit) & 1u;
            const uint32_t b = vr_gts_ones_before(s_before[l >> 5], w, bit);
            val[k] = vr_gts_v_entry(one, b, j, p.u, p.u_count, &bits_err);
            bits_err |= vr_gts_inc_total_err(j, p.v_count, b + one, p.referenced);
        }
#pragma unroll
        for (int k = 0; k < VR_GTS_V_ITEMS; ++k) {
            const uint32_t j = first + (k0 + k) * VR_GTS_VTILE_BLOCK + threadIdx.x;
            if (j < p.v_count)
                p.v[j] = val[k];
        }
    }
    if (bits_err)
        atomicOr(p.err, bits_err);
}

/* T_Kernel's and T_Tiled's output: the block's triangles first .. first + tris - 1 (fewer at the
 * end of the n), staged in s_tri 3 words each, stored coalesced by `threads` threads. Call after
 * the staging's __syncthreads. */
static __device__ __forceinline__ void store_staged(uint32_t *t, const uint32_t *s_tri,
                                                    uint32_t first, uint32_t tris, uint32_t n,
                                                    uint32_t threads)
{
    const uint32_t words = 3 * min(tris, n - first);
    uint32_t *out = t + 3 * (size_t)first;
    for (uint32_t k = threadIdx.x; k < words; k += threads)
        out[k] = s_tri[k];
}

/* T_Kernel (Fig. 4c, Eq. 6): one thread per triangle; positions from C, M, Q are clamped to |V|
 * (a malformed stream flags, never reads out of bounds). Triangles are staged in shared memory
 * (stride 3, conflict-free) and stored coalesced, 3 * VR_GTS_T_BLOCK words per block. */
static __global__ void __launch_bounds__(VR_GTS_T_BLOCK)
    vr_gts_t_kernel(const uint32_t *c, const uint32_t *m, const uint32_t *q, const uint32_t *v,
                    uint32_t n, uint32_t v_count, uint32_t codes, uint32_t *t, uint32_t *err)
{
    __shared__ uint32_t s_tri[3 * VR_GTS_T_BLOCK];
    const uint32_t first = blockIdx.x * VR_GTS_T_BLOCK, i = first + threadIdx.x;
    uint32_t bits_err = 0;
    if (i < n) {
        uint32_t p[3];
        vr_gts_tri_clamped(p, c, i, n, codes, m ? m[i] : i + 2u, q[i], v_count, &bits_err);
        for (int j = 0; j < 3; ++j)
            s_tri[3 * threadIdx.x + j] = v[p[j]];
    }
    __syncthreads();
    store_staged(t, s_tri, first, VR_GTS_T_BLOCK, n, VR_GTS_T_BLOCK);
    if (bits_err)
        atomicOr(err, bits_err);
}

/* The tiled strip pass: Tile_Reduce and T_Tiled read C the same way, one block per tile. */
typedef struct vr_gts_tile_params {
    const uint32_t *c;            /* vr_gts_c_words: strip codes */
    const uint32_t *v;            /* v_count: V (T_Tiled) */
    vr_gts_tile_agg *agg;         /* tile_count: written by Tile_Reduce */
    const vr_gts_tile_agg *carry; /* tile_count: Tile_Scan's exclusive prefixes, read by T_Tiled */
    uint32_t *t;                  /* 3 * n: the output triangles (T_Tiled) */
    uint32_t *err;                /* 1: VR_GTS_ERR_* bits */
    uint32_t n;                   /* strip triangles, 1..VR_GTS_MAX_TRIANGLES */
    uint32_t v_count;             /* |V| >= 3 */
    uint32_t codes;               /* 1: R mode, 0: deg. mode */
} vr_gts_tile_params;

/* Blocked arrangement: thread tid owns triangles first + VR_GTS_TILE_ITEMS * tid + k, so its
 * codes sit in one word of C; triangles past n are the empty segment. */
static __device__ __forceinline__ void tile_elems(vr_gts_tile_agg (&a)[VR_GTS_TILE_ITEMS],
                                                  const vr_gts_tile_params &p, uint32_t first)
{
    const uint32_t base = first + VR_GTS_TILE_ITEMS * threadIdx.x;
#pragma unroll
    for (int k = 0; k < VR_GTS_TILE_ITEMS; ++k)
        a[k] = base + k < p.n ? vr_gts_tile_elem(p.c, base + k, p.codes) : vr_gts_tile_empty();
}

/* Tile_Reduce: one block per tile; each thread folds its VR_GTS_TILE_ITEMS blocked triangles in
 * order, cub::BlockReduce (order-preserving, the operator is not commutative) folds the threads;
 * thread 0 writes the tile's aggregate. Reads only C (2 or 1 bits per triangle). */
static __global__ void __launch_bounds__(VR_GTS_TILE_BLOCK)
    vr_gts_tile_reduce_kernel(vr_gts_tile_params p)
{
    typedef cub::BlockReduce<vr_gts_tile_agg, VR_GTS_TILE_BLOCK> vr_block_reduce;
    __shared__ vr_block_reduce::TempStorage s_reduce;
    vr_gts_tile_agg a[VR_GTS_TILE_ITEMS];
    tile_elems(a, p, blockIdx.x * VR_GTS_TILE);
    const vr_gts_tile_agg total = vr_block_reduce(s_reduce).Reduce(a, vr_gts_tile_op());
    if (threadIdx.x == 0)
        p.agg[blockIdx.x] = total;
}

/* T_Tiled: one block per tile. A blocked cub::BlockScan seeded with the tile's carry gives
 * every thread (M[i], Q[i] + bias) for its 8 triangles; BlockExchange turns them striped
 * (thread tid owns first + k * VR_GTS_TILE_BLOCK + tid) so the V gathers and the staging
 * (stride 3, conflict-free) are coalesced, as in T_Kernel. Shared memory is one union, reused
 * scan -> exchange -> s.tri with a sync between uses. Checks and clamps are T_Kernel's.
 * note: deg. mode runs the same code; its steps are all 1, so the sums come out as i + 2. */
static __global__ void __launch_bounds__(VR_GTS_TILE_BLOCK)
    vr_gts_t_tiled_kernel(vr_gts_tile_params p)
{
    typedef cub::BlockScan<vr_gts_tile_agg, VR_GTS_TILE_BLOCK> vr_block_scan;
    typedef cub::BlockExchange<vr_gts_tile_agg, VR_GTS_TILE_BLOCK, VR_GTS_TILE_ITEMS>
        vr_block_exchange;
    __shared__ union {
        vr_block_scan::TempStorage scan;
        vr_block_exchange::TempStorage exchange;
        uint32_t tri[3 * VR_GTS_TILE];
    } s;
    const uint32_t first = blockIdx.x * VR_GTS_TILE;
    vr_gts_tile_agg a[VR_GTS_TILE_ITEMS], total;
    tile_elems(a, p, first);
    vr_block_scan(s.scan).InclusiveScan(a, a, p.carry[blockIdx.x], vr_gts_tile_op(), total);
    __syncthreads();
    vr_block_exchange(s.exchange).BlockedToStriped(a, a);
    __syncthreads();
    /* all gathers first, then the staging stores: 24 independent loads in flight per thread */
    uint32_t w[VR_GTS_TILE_ITEMS][3], bits_err = 0;
#pragma unroll
    for (int k = 0; k < VR_GTS_TILE_ITEMS; ++k) {
        const uint32_t i = first + k * VR_GTS_TILE_BLOCK + threadIdx.x;
        w[k][0] = w[k][1] = w[k][2] = 0u;
        if (i >= p.n)
            continue;
        uint32_t pos[3];
        vr_gts_tri_clamped(pos, p.c, i, p.n, p.codes, a[k].sum, vr_gts_tile_q(a[k]), p.v_count,
                           &bits_err);
        for (int j = 0; j < 3; ++j)
            w[k][j] = __ldg(p.v + pos[j]);
    }
#pragma unroll
    for (int k = 0; k < VR_GTS_TILE_ITEMS; ++k) {
        const uint32_t l = k * VR_GTS_TILE_BLOCK + threadIdx.x;
        for (int j = 0; j < 3; ++j)
            s.tri[3 * l + j] = w[k][j];
    }
    __syncthreads();
    store_staged(p.t, s.tri, first, VR_GTS_TILE, p.n, VR_GTS_TILE_BLOCK);
    if (bits_err)
        atomicOr(p.err, bits_err);
}

/* ---- host ---------------------------------------------------------------------------------- */

static uint32_t grid_for(uint64_t items, uint32_t block)
{
    return (uint32_t)((items + block - 1) / block);
}

/* Every scan of a decode, in one place so create() can size the temp storage with the same
 * calls (temp NULL) that decode() runs. `which` is the stage. */
static cudaError_t vr_gts_scan(const vr_gts_gpu *d, vr_gts_stage which, void *temp,
                               size_t *bytes)
{
    const vr_gts *h = &d->h;
    const uint32_t n = h->strip_triangle_count;
    switch (which) {
    case VR_GTS_S_SCAN: {
        vr_s9_it in(d->d_s, vr_gts_s9_count_op());
        return cub::DeviceScan::ExclusiveScan(temp, *bytes, in, d->d_sbar, vr_gts_add(), 0u,
                                              h->s_count, d->stream);
    }
    case VR_GTS_U_SCAN: {
        vr_unzig_it in(d->d_d, vr_gts_unzigzag_op());
        return cub::DeviceScan::InclusiveScan(temp, *bytes, in, d->d_u, vr_gts_add(), h->u_count,
                                              d->stream);
    }
    case VR_GTS_INC_SCAN: {
        vr_gts_inc_op op = {d->d_inc};
        vr_inc_it in(vr_count_it(0u), op);
        return cub::DeviceScan::ExclusiveScan(temp, *bytes, in, d->d_incscan, vr_gts_add(), 0u,
                                              h->v_count, d->stream);
    }
    case VR_GTS_M_SCAN: {
        vr_gts_m_op op = {d->d_c};
        vr_m_it in(vr_count_it(0u), op);
        return cub::DeviceScan::InclusiveScan(temp, *bytes, in, d->d_m, vr_gts_add(), n,
                                              d->stream);
    }
    case VR_GTS_Q_SCAN: {
        vr_gts_q_op op = {d->d_c, d->d_m, d->codes};
        vr_q_it in(vr_count_it(0u), op);
        return cub::DeviceScan::InclusiveScan(temp, *bytes, in, d->d_q, vr_gts_max(), n,
                                              d->stream);
    }
    case VR_GTS_TILE_SCAN:
        return cub::DeviceScan::ExclusiveScan(temp, *bytes, d->d_tile_agg, d->d_tile_carry,
                                              vr_gts_tile_op(), vr_gts_tile_empty(),
                                              d->tile_count, d->stream);
    case VR_GTS_VTILE_SCAN:
        return cub::DeviceScan::ExclusiveScan(temp, *bytes, d->d_vtile_count, d->d_vtile_carry,
                                              vr_gts_add(), 0u, d->vtile_count, d->stream);
    default:
        return cudaErrorInvalidValue;
    }
}

static vr_status alloc_words(uint32_t **p, uint64_t words, const char *what)
{
    return vr_cuda_alloc((void **)p, (size_t)(words ? words : 1) * sizeof(uint32_t), what);
}

static vr_status alloc_tiles(vr_gts_tile_agg **p, uint32_t count, const char *what)
{
    return vr_cuda_alloc((void **)p, (size_t)(count ? count : 1) * sizeof **p, what);
}

/* On the context's stream: it is non-blocking, so legacy-stream copies would not be ordered
 * before the first decode. create() synchronizes once after all uploads. */
static vr_status upload(uint32_t *dst, const uint32_t *src, uint64_t words, cudaStream_t stream)
{
    if (words)
        VR_CUDA_CHECK(cudaMemcpyAsync(dst, src, (size_t)words * sizeof(uint32_t),
                                   cudaMemcpyHostToDevice, stream));
    return VR_OK;
}

static vr_status create_inner(vr_gts_gpu *d, const vr_gts *g)
{
    const uint64_t n = g->strip_triangle_count;
    const uint32_t cw = vr_gts_c_words(g), iw = vr_gts_inc_words(g);
    vr_status s;
    VR_CUDA_CHECK(cudaStreamCreateWithFlags(&d->stream, cudaStreamNonBlocking));
    for (; d->events < VR_GTS_STAGE_COUNT + 1; ++d->events)
        VR_CUDA_CHECK(cudaEventCreate(&d->ev[d->events]));
    if ((s = alloc_words(&d->d_c, cw, "strip codes")) ||
        (s = alloc_words(&d->d_inc, iw, "INC")) ||
        (s = alloc_words(&d->d_s, g->s_count, "Simple-9 words")) ||
        (s = alloc_words(&d->d_sbar, g->s_count, "S-bar")) ||
        (s = alloc_words(&d->d_d, g->u_count, "D")) ||
        (s = alloc_words(&d->d_u, g->u_count, "U")) ||
        (s = alloc_words(&d->d_incscan, g->v_count, "INC scan")) ||
        (s = alloc_words(&d->d_vtile_count, d->vtile_count, "V tile counts")) ||
        (s = alloc_words(&d->d_vtile_carry, d->vtile_count, "V tile carries")) ||
        (s = alloc_words(&d->d_v, g->v_count, "V")) ||
        (d->codes && (s = alloc_words(&d->d_m, n, "M"))) ||
        (s = alloc_words(&d->d_q, n, "Q")) ||
        (s = alloc_words(&d->d_t, 3 * n, "triangles")) ||
        (s = alloc_tiles(&d->d_tile_agg, d->tile_count, "tile aggregates")) ||
        (s = alloc_tiles(&d->d_tile_carry, d->tile_count, "tile carries")) ||
        (s = alloc_words(&d->d_err, 1, "error flag")))
        return s;
    if ((s = upload(d->d_c, g->c, cw, d->stream)) || (s = upload(d->d_inc, g->inc, iw, d->stream)) ||
        (s = upload(d->d_s, g->s, g->s_count, d->stream)))
        return s;
    static const vr_gts_stage scans[] = {VR_GTS_S_SCAN, VR_GTS_U_SCAN, VR_GTS_INC_SCAN,
                                         VR_GTS_M_SCAN, VR_GTS_Q_SCAN, VR_GTS_TILE_SCAN,
                                         VR_GTS_VTILE_SCAN};
    for (size_t k = 0; k < sizeof scans / sizeof scans[0]; ++k) {
        if (scans[k] == VR_GTS_M_SCAN && !d->codes)
            continue;
        size_t bytes = 0;
        VR_CUDA_CHECK(vr_gts_scan(d, scans[k], NULL, &bytes));
        d->temp_bytes = bytes > d->temp_bytes ? bytes : d->temp_bytes;
    }
    if ((s = vr_cuda_alloc(&d->d_temp, d->temp_bytes, "CUB scan temp storage")))
        return s;
    VR_CUDA_CHECK(cudaStreamSynchronize(d->stream));
    return VR_OK;
}

vr_status vr_gts_gpu_create(vr_gts_gpu **out, const vr_gts *g)
{
    assert(out && g);
    *out = NULL;
    vr_status s = vr_cuda_device_check();
    if (!s)
        s = vr_gts_validate_counts(g, "gts gpu");
    if (s)
        return s;
    vr_gts_gpu *d = (vr_gts_gpu *)calloc(1, sizeof *d);
    if (!d)
        return VR_ERROR(VR_ERR_OOM, "gts gpu: out of host memory for the context");
    d->h = *g;
    d->h.c = d->h.inc = d->h.s = NULL;
    d->h.positions = d->h.normals = d->h.texcoords = NULL;
    d->codes = g->restart == VR_GTS_RESTART_CODE;
    d->pass = g->strip_triangle_count >= VR_GTS_TILED_MIN_TRIANGLES ? VR_GTS_STRIPS_TILED
                                                                    : VR_GTS_STRIPS_PAPER;
    d->tile_count = vr_gts_tile_count(g->strip_triangle_count);
    d->vtile_count = vr_gts_vtile_count(g->v_count);
    if ((s = create_inner(d, g))) {
        vr_gts_gpu_destroy(d);
        return s;
    }
    *out = d;
    return VR_OK;
}

void vr_gts_gpu_destroy(vr_gts_gpu *d)
{
    if (!d)
        return;
    /* Teardown ignores the results of cudaFree, cudaEventDestroy and cudaStreamDestroy: destroy
     * returns nothing, each handle is released once whatever happens, and a failure here (a
     * sticky error of an earlier fault) was already reported by the call that met it. */
    void *const bufs[] = {d->d_c, d->d_inc, d->d_s, d->d_sbar, d->d_d, d->d_u, d->d_incscan,
                          d->d_vtile_count, d->d_vtile_carry, d->d_v, d->d_m, d->d_q, d->d_t,
                          d->d_err, d->d_tile_agg, d->d_tile_carry, d->d_temp};
    vr_cuda_free_all(bufs, VR_COUNT_OF(bufs));
    for (int k = 0; k < d->events; ++k)
        (void)cudaEventDestroy(d->ev[k]);
    if (d->stream)
        (void)cudaStreamDestroy(d->stream);
    free(d);
}

void vr_gts_gpu_set_strip_pass(vr_gts_gpu *d, vr_gts_strip_pass p)
{
    assert(d && (p == VR_GTS_STRIPS_TILED || p == VR_GTS_STRIPS_PAPER));
    d->pass = p;
}

/* The stages a decode launches, in execution order (U before V before T) into order[]; returns
 * their count. Stages with nothing to do are left out so they time as 0: M_Scan in deg. mode,
 * S_Scan, D_Scatter and U_Scan without re-used vertices. */
static int plan(const vr_gts_gpu *d, vr_gts_stage order[VR_GTS_STAGE_COUNT])
{
    int k = 0;
    if (d->h.u_count) { /* s_count > 0 too (validated counts) */
        order[k++] = VR_GTS_S_SCAN;
        order[k++] = VR_GTS_D_SCATTER;
        order[k++] = VR_GTS_U_SCAN;
    }
    if (d->pass == VR_GTS_STRIPS_PAPER) {
        order[k++] = VR_GTS_INC_SCAN;
        order[k++] = VR_GTS_V_KERNEL;
        if (d->codes)
            order[k++] = VR_GTS_M_SCAN;
        order[k++] = VR_GTS_Q_SCAN;
        order[k++] = VR_GTS_T_KERNEL;
    } else {
        order[k++] = VR_GTS_VTILE_REDUCE;
        order[k++] = VR_GTS_VTILE_SCAN;
        order[k++] = VR_GTS_V_TILED;
        order[k++] = VR_GTS_TILE_REDUCE;
        order[k++] = VR_GTS_TILE_SCAN;
        order[k++] = VR_GTS_TILE_T;
    }
    return k;
}

static vr_gts_tile_params tile_params(const vr_gts_gpu *d)
{
    vr_gts_tile_params p;
    p.c = d->d_c, p.v = d->d_v, p.agg = d->d_tile_agg, p.carry = d->d_tile_carry;
    p.t = d->d_t, p.err = d->d_err;
    p.n = d->h.strip_triangle_count, p.v_count = d->h.v_count, p.codes = d->codes;
    return p;
}

static vr_gts_vtile_params vtile_params(const vr_gts_gpu *d)
{
    vr_gts_vtile_params p;
    p.inc = d->d_inc, p.u = d->d_u, p.count = d->d_vtile_count, p.carry = d->d_vtile_carry;
    p.v = d->d_v, p.err = d->d_err;
    p.v_count = d->h.v_count, p.u_count = d->h.u_count, p.referenced = d->h.referenced_count;
    return p;
}

static vr_status run_stage(vr_gts_gpu *d, vr_gts_stage st)
{
    const vr_gts *h = &d->h;
    const uint32_t n = h->strip_triangle_count;
    size_t bytes = d->temp_bytes;
    switch (st) {
    case VR_GTS_S_SCAN:
    case VR_GTS_U_SCAN:
        if (h->u_count == 0)
            return VR_OK; /* no re-used vertices: s_count == 0 too */
        VR_CUDA_CHECK(vr_gts_scan(d, st, d->d_temp, &bytes));
        return VR_OK;
    case VR_GTS_D_SCATTER:
        if (h->s_count == 0)
            return VR_OK;
        vr_gts_d_scatter_kernel<<<grid_for(h->s_count, VR_GTS_D_BLOCK), VR_GTS_D_BLOCK, 0,
                                  d->stream>>>(d->d_s, d->d_sbar, h->s_count, d->d_d,
                                               h->u_count, d->d_err);
        VR_LAUNCH_CHECK("vr_gts_d_scatter_kernel", d->stream);
        return VR_OK;
    case VR_GTS_INC_SCAN:
    case VR_GTS_Q_SCAN:
        VR_CUDA_CHECK(vr_gts_scan(d, st, d->d_temp, &bytes));
        return VR_OK;
    case VR_GTS_M_SCAN:
        if (d->codes)
            VR_CUDA_CHECK(vr_gts_scan(d, st, d->d_temp, &bytes));
        return VR_OK;
    case VR_GTS_V_KERNEL:
        vr_gts_v_kernel<<<grid_for(h->v_count, VR_GTS_V_BLOCK), VR_GTS_V_BLOCK, 0, d->stream>>>(
            d->d_inc, d->d_incscan, d->d_u, h->u_count, h->v_count, h->referenced_count, d->d_v,
            d->d_err);
        VR_LAUNCH_CHECK("vr_gts_v_kernel", d->stream);
        return VR_OK;
    case VR_GTS_T_KERNEL:
        vr_gts_t_kernel<<<grid_for(n, VR_GTS_T_BLOCK), VR_GTS_T_BLOCK, 0, d->stream>>>(
            d->d_c, d->d_m, d->d_q, d->d_v, n, h->v_count, d->codes, d->d_t, d->d_err);
        VR_LAUNCH_CHECK("vr_gts_t_kernel", d->stream);
        return VR_OK;
    case VR_GTS_TILE_REDUCE:
        vr_gts_tile_reduce_kernel<<<d->tile_count, VR_GTS_TILE_BLOCK, 0, d->stream>>>(
            tile_params(d));
        VR_LAUNCH_CHECK("vr_gts_tile_reduce_kernel", d->stream);
        return VR_OK;
    case VR_GTS_TILE_SCAN:
    case VR_GTS_VTILE_SCAN:
        VR_CUDA_CHECK(vr_gts_scan(d, st, d->d_temp, &bytes));
        return VR_OK;
    case VR_GTS_VTILE_REDUCE:
        vr_gts_vtile_reduce_kernel<<<d->vtile_count, VR_GTS_VTILE_BLOCK, 0, d->stream>>>(
            vtile_params(d));
        VR_LAUNCH_CHECK("vr_gts_vtile_reduce_kernel", d->stream);
        return VR_OK;
    case VR_GTS_V_TILED:
        vr_gts_v_tiled_kernel<<<d->vtile_count, VR_GTS_VTILE_BLOCK, 0, d->stream>>>(
            vtile_params(d));
        VR_LAUNCH_CHECK("vr_gts_v_tiled_kernel", d->stream);
        return VR_OK;
    case VR_GTS_TILE_T:
        vr_gts_t_tiled_kernel<<<d->tile_count, VR_GTS_TILE_BLOCK, 0, d->stream>>>(
            tile_params(d));
        VR_LAUNCH_CHECK("vr_gts_t_tiled_kernel", d->stream);
        return VR_OK;
    default:
        return VR_ERROR(VR_ERR_ARG, "gts gpu: unknown stage %d", (int)st);
    }
}

vr_status vr_gts_gpu_decode(vr_gts_gpu *d, vr_gts_gpu_timing *timing, int breakdown)
{
    assert(d);
    vr_gts_stage order[VR_GTS_STAGE_COUNT];
    const int count = plan(d, order);
    VR_CUDA_CHECK(cudaMemsetAsync(d->d_err, 0, sizeof(uint32_t), d->stream));
    if (timing)
        VR_CUDA_CHECK(cudaEventRecord(d->ev[0], d->stream));
    for (int k = 0; k < count; ++k) {
        vr_status s = run_stage(d, order[k]);
        if (s)
            return s;
        if (timing && (breakdown || k == count - 1))
            VR_CUDA_CHECK(cudaEventRecord(d->ev[breakdown ? k + 1 : count], d->stream));
    }
    uint32_t err = 0;
    VR_CUDA_CHECK(cudaMemcpyAsync(&err, d->d_err, sizeof err, cudaMemcpyDeviceToHost, d->stream));
    VR_CUDA_CHECK(cudaStreamSynchronize(d->stream));
    if (timing) {
        memset(timing, 0, sizeof *timing);
        for (int k = 0; k < count; ++k) {
            timing->stage_ran |= 1u << order[k];
            if (breakdown)
                VR_CUDA_CHECK(cudaEventElapsedTime(&timing->stage_ms[order[k]], d->ev[k],
                                                   d->ev[k + 1]));
        }
        VR_CUDA_CHECK(cudaEventElapsedTime(&timing->total_ms, d->ev[0], d->ev[count]));
    }
    return vr_gts_error_status(err, "gts gpu decode");
}

vr_status vr_gts_gpu_download(uint32_t *indices, const vr_gts_gpu *d)
{
    assert(indices && d);
    VR_CUDA_CHECK(cudaMemcpyAsync(indices, d->d_t,
                               3 * (size_t)d->h.strip_triangle_count * sizeof *indices,
                               cudaMemcpyDeviceToHost, d->stream));
    VR_CUDA_CHECK(cudaStreamSynchronize(d->stream));
    return VR_OK;
}

const uint32_t *vr_gts_gpu_device_indices(const vr_gts_gpu *d) { return d ? d->d_t : NULL; }

vr_status vr_gts_decode_gpu(uint32_t *indices, const vr_gts *g, vr_gts_gpu_timing *timing)
{
    assert(indices && g);
    vr_gts_gpu *d = NULL;
    vr_status s = vr_gts_gpu_create(&d, g);
    if (!s)
        s = vr_gts_gpu_decode(d, timing, timing != NULL);
    if (!s)
        s = vr_gts_gpu_download(indices, d);
    vr_gts_gpu_destroy(d);
    return s;
}
