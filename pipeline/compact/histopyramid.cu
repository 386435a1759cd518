/* histopyramid.cu - the GPU HistoPyramid of histopyramid.h (Ziegler et al.): 1-D, fan-in 4,
 * plain (a count per cell) or vec4 (a cell keeps its children's partial sums). The build
 * reduces 6 levels per kernel in shared memory (the first kernel reads the input and applies
 * the discriminator `value < threshold` or takes counts); expansion runs one thread per output
 * down from the top (histopyramid.cuh), in a grid-stride loop that reads the total on the
 * device; compaction runs one block per tile of 4096 cells, its offset read up the pyramid.
 * CPU twin: histopyramid_ref.c (same level words, same outputs; vr_hp_prefix_ref).
 * Try: `vreuse_tests gpu/compact-hp`, `vreuse bench-compact --method hp,hp4`.
 */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/compact/histopyramid.cuh"
#include "pipeline/compact/tile.cuh"
#include "pipeline/vr_check.h"

#define VR_HP_BUILD_BLOCK 256u /* 4 x 256 first-level cells: a tile of 4096 */
#define VR_HP_FIND_BLOCK 256u
#define VR_HP_FIND_BLOCKS_PER_SM 8u
/* A compaction tile with at most this many active cells (1 in 16) reads the counts of its spans
 * of 16 cells (1/16 of the tile's bytes) and then only the input vectors of active spans. */
#define VR_HP_SPARSE_COUNT 256u
/* Compaction descends once per output when the pyramid's total is at most n >> this (1 in 32),
 * else it goes by tiles; both kernels are launched and read the total on the device, the one
 * not chosen ends at once. Why: a descent is ~14 dependent loads mostly served by L2, so few
 * outputs cost less than reading the tiles (H100, 256M at 1%: hp 0.61 ms with descents, of
 * which ~0.55 the build); by 50% the descents cost 4 ms against ~0.6 for the tiles. */
#define VR_HP_DESCEND_LOG2 5
/* Blocks per SM vr_hp_scatter_kernel is compiled for: ptxas (CUDA 13, sm_90) gives it 48
 * registers unbounded (5 blocks of 256 threads), 40 under 6 without spills, 32 under 8 with
 * 140 bytes of spills. No tile is prefetched, so resident blocks are what keeps loads in flight. */
#define VR_HP_SCATTER_MIN_BLOCKS 6
static_assert(VR_HP_STAGE_TILE == VR_COMPACT_TILE, "a compaction tile is a level-6 cell");

/* What the first level of a build stage sums. */
typedef enum vr_hp_src {
    VR_HP_SRC_SELECT = 0, /* input values: 1 when value < threshold */
    VR_HP_SRC_COUNTS,     /* the caller's counts */
    VR_HP_SRC_PLAIN,      /* a plain level's counts */
    VR_HP_SRC_VEC4        /* a vec4 level: the cell's total is its .w */
} vr_hp_src;

struct vr_hp {
    vr_hp_kind kind;
    uint32_t max_cells;
    uint32_t *d_levels;     /* vr_hp_layout(max_cells).words */
    uint32_t *d_error;      /* one word: the id of a build whose sums wrapped */
    cudaStream_t stream;
    int sm_count;
    int scatter_per_sm;     /* blocks of vr_hp_scatter_kernel resident per SM */
    vr_hp_layout layout;    /* of the last build */
    const uint32_t *d_base; /* the last build's input (values or counts) */
    uint64_t threshold;
    uint32_t select;
    uint32_t build_id;      /* 1, 2, ...: the error word names the build it belongs to */
    int borrowed;           /* d_levels (and d_error after it) are the caller's (vr_hp_create_in) */
};

typedef struct vr_hp_build_params {
    const uint32_t *src;                  /* src_cells cells (for VR_HP_SRC_VEC4: 4 words each) */
    uint32_t *levels;                     /* the layout's words */
    uint32_t *error;                      /* set to build_id when a sum wraps past 2^32 - 1 */
    uint64_t threshold;                   /* VR_HP_SRC_SELECT */
    uint64_t offset[VR_HP_STAGE_LEVELS];  /* first word of each level this stage makes */
    uint32_t cells[VR_HP_STAGE_LEVELS];   /* its cells */
    uint32_t src_cells;
    uint32_t count;                       /* levels to make, 1..VR_HP_STAGE_LEVELS */
    uint32_t src_kind;                    /* vr_hp_src */
    uint32_t vec4;                        /* vr_hp_kind of the levels made */
    uint32_t build_id;
} vr_hp_build_params;

typedef struct vr_hp_scatter_params {
    vr_hp_view view;    /* a select build */
    uint32_t *out;      /* capacity words: the values of the active cells in order */
    uint32_t capacity;
} vr_hp_scatter_params;

typedef struct vr_hp_find_params {
    vr_hp_view view;
    uint32_t *out;      /* capacity words: values (select) or cells (counts) */
    uint32_t *rank;     /* capacity words or NULL (counts) */
    uint32_t capacity;
} vr_hp_find_params;

/* ---- build --------------------------------------------------------------------------------- */

static __device__ __forceinline__ uint32_t vr_hp_add(uint32_t a, uint32_t b, uint32_t *wrapped)
{
    const uint32_t s = a + b;
    *wrapped |= s < a;
    return s;
}

/* Source cells at..at+3 of the stage as counts (0 past src_cells). */
static __device__ __forceinline__ uint4 vr_hp_src4(const vr_hp_build_params &p, uint64_t at)
{
    uint4 x;
    if (p.src_kind == VR_HP_SRC_VEC4) {
        x.x = at + 0 < p.src_cells ? __ldg(p.src + 4 * (at + 0) + 3) : 0u;
        x.y = at + 1 < p.src_cells ? __ldg(p.src + 4 * (at + 1) + 3) : 0u;
        x.z = at + 2 < p.src_cells ? __ldg(p.src + 4 * (at + 2) + 3) : 0u;
        x.w = at + 3 < p.src_cells ? __ldg(p.src + 4 * (at + 3) + 3) : 0u;
        return x;
    }
    if (at + 4 <= p.src_cells) {
        x = __ldg((const uint4 *)(p.src + at));
    } else {
        x.x = at + 0 < p.src_cells ? __ldg(p.src + at + 0) : 0u;
        x.y = at + 1 < p.src_cells ? __ldg(p.src + at + 1) : 0u;
        x.z = at + 2 < p.src_cells ? __ldg(p.src + at + 2) : 0u;
        x.w = at + 3 < p.src_cells ? __ldg(p.src + at + 3) : 0u;
    }
    if (p.src_kind == VR_HP_SRC_SELECT) {
        x.x = at + 0 < p.src_cells && x.x < p.threshold;
        x.y = at + 1 < p.src_cells && x.y < p.threshold;
        x.z = at + 2 < p.src_cells && x.z < p.threshold;
        x.w = at + 3 < p.src_cells && x.w < p.threshold;
    }
    return x;
}

/* Cell `cell` of the stage's level `step` from its 4 children: stored (when it exists) as a
 * count or as the children's partial sums; returns its total. */
static __device__ __forceinline__ uint32_t vr_hp_put(const vr_hp_build_params &p, uint32_t step,
                                                     uint64_t cell, uint4 c, uint32_t *wrapped)
{
    const uint32_t s1 = vr_hp_add(c.x, c.y, wrapped), s2 = vr_hp_add(s1, c.z, wrapped);
    const uint32_t s3 = vr_hp_add(s2, c.w, wrapped);
    if (cell < p.cells[step]) {
        if (p.vec4)
            ((uint4 *)(p.levels + p.offset[step]))[cell] = make_uint4(c.x, s1, s2, s3);
        else
            p.levels[p.offset[step] + cell] = s3;
    }
    return s3;
}

/* One block per tile of VR_HP_STAGE_TILE source cells, 256 threads; thread t makes first-level
 * cells t, t + 256, t + 512, t + 768 of the tile from one uint4 of source cells each (striped:
 * loads and stores coalesced), then level k + 1 cell t' < 1024 / 4^k from 4 totals of level k.
 * s_cells holds each level's totals (1024, 256, 64, 16, 4, 1 words) for the next; one
 * __syncthreads per level (uniform: the level count is a parameter). The last block also
 * zeroes a plain level's padding cells, so every uint4 of children reads zeros past the end. */
__global__ void __launch_bounds__(VR_HP_BUILD_BLOCK) vr_hp_build_kernel(const vr_hp_build_params p)
{
    __shared__ uint32_t s_cells[1024 + 256 + 64 + 16 + 4 + 1];
    const uint32_t t = threadIdx.x;
    const uint64_t tile = blockIdx.x;
    uint32_t wrapped = 0;
#pragma unroll
    for (uint32_t q = 0; q < 4; ++q) {
        const uint32_t local = q * VR_HP_BUILD_BLOCK + t;
        const uint4 c = vr_hp_src4(p, (tile * 1024 + local) * 4);
        s_cells[local] = vr_hp_put(p, 0, tile * 1024 + local, c, &wrapped);
    }
    uint32_t from = 0, to = 1024, cells = 1024; /* s_cells range of the level below */
#pragma unroll
    for (uint32_t step = 1; step < VR_HP_STAGE_LEVELS; ++step) {
        if (step >= p.count)
            break;
        __syncthreads();
        cells /= 4;
        if (t < cells) {
            const uint4 c = make_uint4(s_cells[from + 4 * t], s_cells[from + 4 * t + 1],
                                       s_cells[from + 4 * t + 2], s_cells[from + 4 * t + 3]);
            s_cells[to + t] = vr_hp_put(p, step, tile * cells + t, c, &wrapped);
        }
        from = to;
        to += cells;
    }
    if (!p.vec4 && blockIdx.x == gridDim.x - 1 && t < 4) {
#pragma unroll /* constant indices: the parameter arrays stay out of local memory */
        for (uint32_t step = 0; step < VR_HP_STAGE_LEVELS; ++step) {
            const uint32_t pad = p.cells[step] + t;
            if (step < p.count && pad < ((p.cells[step] + 3u) & ~3u))
                p.levels[p.offset[step] + pad] = 0;
        }
    }
    if (wrapped)
        *p.error = p.build_id;
}

/* ---- traversal ----------------------------------------------------------------------------- */

/* Whether a select build's compaction descends per output (else it goes by tiles). */
static __device__ __forceinline__ int vr_hp_descends(const vr_hp_view *v, uint32_t total)
{
    return total <= v->n >> VR_HP_DESCEND_LOG2;
}

/* One thread per output k < min(total, capacity), grid-stride: consecutive threads take
 * consecutive outputs, so their descents share upper cells (cached) and their stores coalesce.
 * Expansion always; compaction only when it has few outputs (vr_hp_descends; otherwise this
 * kernel ends at once and vr_hp_scatter_kernel writes them). No shared memory, no syncs; the
 * total is the top cell, read on the device. */
__global__ void __launch_bounds__(VR_HP_FIND_BLOCK) vr_hp_find_kernel(const vr_hp_find_params p)
{
    const uint32_t total = vr_hp_view_total(&p.view);
    uint32_t limit = total < p.capacity ? total : p.capacity;
    if (p.view.select && !vr_hp_descends(&p.view, total))
        limit = 0;
    const uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
    for (uint64_t k = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; k < limit; k += stride) {
        uint32_t rank, value;
        const uint32_t cell = vr_hp_find(&p.view, (uint32_t)k, &rank, &value);
        if (p.view.select) {
            p.out[k] = value;
        } else {
            p.out[k] = cell;
            if (p.rank)
                p.rank[k] = rank;
        }
    }
}

/* ---- compaction by tiles -------------------------------------------------------------------- */

/* First word of level l >= 1 (vr_hp_layout_make's offsets, from n alone). */
static __device__ __forceinline__ uint64_t vr_hp_level_offset(const vr_hp_view *v, uint32_t l)
{
    uint64_t off = 0;
    for (uint32_t k = 1; k < l; ++k) {
        const uint64_t cells = vr_hp_cells(v->n, k);
        off += v->vec4 ? 4 * cells : (cells + 3) & ~3ull;
    }
    return off;
}

/* Active cells before tile `tile` (base cells 4096 tile ..), by one warp, and the tile's own
 * count in *count: the descent's arithmetic read upwards. The tile is cell `tile` of level 6;
 * its ancestor at level l is c = tile >> 2 (l - 6), and the cells before the tile are, at each
 * level l = 6 .. L - 1, the siblings left of c in its group of 4 (levels below 6 add nothing:
 * the tile starts its groups there). Lane l - 6 reads that level's group (plain: the 4 counts;
 * vec4: the parent's partial sums, whose entry c % 4 - 1 is the sum), lane 31 the tile's
 * count; all loads independent, one round trip. CPU twin: vr_hp_prefix_ref. */
static __device__ uint32_t vr_hp_tile_prefix(const vr_hp_view *v, uint32_t tile, uint32_t *count)
{
    const uint32_t lane = threadIdx.x & (VR_WARP_SIZE - 1), l = VR_HP_STAGE_LEVELS + lane;
    uint32_t part = 0, mine = 0;
    if (l < v->levels_count) { /* L <= 16: lanes 0..9 */
        const uint32_t c = tile >> (2 * lane), j = c & 3u;
        if (j && v->vec4) {
            const uint4 q =
                __ldg((const uint4 *)(v->levels + vr_hp_level_offset(v, l + 1)) + (c >> 2));
            part = j == 1 ? q.x : j == 2 ? q.y : q.z;
        } else if (j) {
            const uint4 q = __ldg((const uint4 *)(v->levels + vr_hp_level_offset(v, l)) + (c >> 2));
            part = q.x + (j > 1 ? q.y : 0u) + (j > 2 ? q.z : 0u);
        }
    }
    if (lane == VR_WARP_SIZE - 1) {
        if (v->levels_count < VR_HP_STAGE_LEVELS) /* one tile: the pyramid's total */
            mine = vr_hp_view_total(v);
        else if (v->vec4)
            mine = __ldg(v->levels + vr_hp_level_offset(v, VR_HP_STAGE_LEVELS) + 4ull * tile + 3);
        else
            mine = __ldg(v->levels + vr_hp_level_offset(v, VR_HP_STAGE_LEVELS) + tile);
    }
    *count = __shfl_sync(VR_FULL_MASK, mine, VR_WARP_SIZE - 1);
    return __reduce_add_sync(VR_FULL_MASK, part);
}

/* Whether the span of 16 base cells 16 h .. 16 h + 15 holds an active cell, from the pyramid:
 * the plain level 2 counts it (a word per span); the vec4 pyramid answers from level 3, whose
 * cell h / 4 holds the partial sums over its 4 spans (a vec4 level-2 cell is 16 bytes per span).
 * Why spans of 16: at 1% kept, reading the level-2 words (1/16 of the input's bytes) and the
 * input of the 15% of spans that hold an active cell moves less than level 1 (1/4 of the bytes,
 * then 8% of the sectors) or level 3 (47% of the spans). Needs L >= 3. */
static __device__ __forceinline__ int vr_hp_span_active(const vr_hp_view *v, uint64_t h)
{
    if (!v->vec4)
        return __ldg(v->levels + vr_hp_level_offset(v, 2) + h) != 0;
    const uint4 q = __ldg((const uint4 *)(v->levels + vr_hp_level_offset(v, 3)) + (h >> 2));
    switch ((uint32_t)h & 3u) {
    case 0:
        return q.x != 0;
    case 1:
        return q.y != q.x;
    case 2:
        return q.z != q.y;
    default:
        return q.w != q.z;
    }
}

/* Compaction through the pyramid without a descent per output, when it has many outputs
 * (vr_hp_descends false; else every block ends at once): blocks (as many as are resident) take
 * tiles of 4096 base cells (level-6 cells) blockIdx, blockIdx + gridDim, ... Per tile, warp 0
 * finds the tile's first output index and count from the pyramid (vr_hp_tile_prefix, one round
 * trip); the block ranks the tile like the stand-alone kernels (tile.cuh: thread t holds cells
 * 1024 r + 4 t .. + 3 of round r), stages the active cells' values in shared memory and writes
 * them out coalesced (outputs past `capacity` are not written). A tile with no active cell
 * ends after the first sync; a sparse one (VR_HP_SPARSE_COUNT, L >= 6) first reads the counts
 * of its spans of 16 cells (4 threads of a round share one) and loads only the input vectors of
 * active spans. s_base / s_count alternate between two slots, so warp 0 may write the next
 * tile's while the block still stores the current one.
 * Why (issue 11): one thread per output descending ~14 levels made 14 dependent loads per
 * output (hp 4.47 ms at 256M / 50%, 6.5x cub-if), latency-bound; by tiles the second pass reads
 * the input once (dense) or 1/16 of it plus the active spans (sparse) and writes the output
 * once, with no dependent chain longer than 2-3 loads. Syncs per tile: prefix, rank (2), stage. */
__global__ void __launch_bounds__(VR_COMPACT_BLOCK, VR_HP_SCATTER_MIN_BLOCKS)
    vr_hp_scatter_kernel(const vr_hp_scatter_params p)
{
    __shared__ uint32_t s_staged[VR_COMPACT_TILE];
    __shared__ vr_compact_tile_table s_table;
    __shared__ uint32_t s_base[2], s_count[2];
    const vr_hp_view *v = &p.view;
    if (vr_hp_descends(v, vr_hp_view_total(v)))
        return; /* vr_hp_find_kernel writes the outputs */
    const uint32_t tiles = (uint32_t)(((uint64_t)v->n + VR_COMPACT_TILE - 1) / VR_COMPACT_TILE);
    for (uint32_t tile = blockIdx.x, slot = 0; tile < tiles; tile += gridDim.x, slot ^= 1u) {
        if (threadIdx.x < VR_WARP_SIZE) {
            uint32_t count;
            const uint32_t base = vr_hp_tile_prefix(v, tile, &count);
            if (threadIdx.x == 0)
                s_base[slot] = base, s_count[slot] = count;
        }
        __syncthreads();
        const uint32_t count = s_count[slot];
        if (count == 0)
            continue; /* the whole block */
        const int sparse = count <= VR_HP_SPARSE_COUNT && v->levels_count >= VR_HP_STAGE_LEVELS;
        const uint64_t first = (uint64_t)tile * VR_COMPACT_TILE;
        int live[VR_COMPACT_ROUNDS];
        /* the span counts first: all in flight */
#pragma unroll
        for (uint32_t r = 0; r < VR_COMPACT_ROUNDS; ++r) {
            const uint64_t at = first + VR_COMPACT_VEC * (r * VR_COMPACT_BLOCK + threadIdx.x);
            live[r] = at < v->n && (!sparse || vr_hp_span_active(v, at / 16));
        }
        uint4 val[VR_COMPACT_ROUNDS];
        uint32_t keep[VR_COMPACT_ROUNDS], at[VR_COMPACT_ROUNDS];
#pragma unroll
        for (uint32_t r = 0; r < VR_COMPACT_ROUNDS; ++r) {
            val[r] = make_uint4(0, 0, 0, 0);
            keep[r] = 0;
            if (live[r]) {
                const uint4 c = vr_hp_base4(
                    v, first + VR_COMPACT_VEC * (r * VR_COMPACT_BLOCK + threadIdx.x), &val[r]);
                keep[r] = c.x | c.y << 1 | c.z << 2 | c.w << 3; /* select: flags 0 or 1 */
            }
        }
        /* the sync after the prefix ended every thread's work on the tile before (table, staged) */
        const uint32_t total = vr_compact_tile_rank(&s_table, keep, at);
        vr_compact_tile_stage(s_staged, val, keep, at);
        __syncthreads();
        vr_compact_tile_store(p.out, s_staged, s_base[slot], total, p.capacity);
    }
}

/* ---- host ---------------------------------------------------------------------------------- */

size_t vr_hp_bytes(vr_hp_kind kind, uint32_t max_cells)
{
    vr_hp_layout l;
    vr_hp_layout_make(&l, kind, max_cells);
    return l.words * sizeof(uint32_t) + 16;
}

vr_status vr_hp_create(vr_hp **out, vr_hp_kind kind, uint32_t max_cells, void *stream)
{
    assert(out);
    *out = NULL;
    vr_status st = vr_cuda_device_check();
    if (st != VR_OK)
        return st;
    /* one allocation, laid out as vr_hp_create_in lays out the caller's memory */
    void *d_memory = NULL;
    if ((st = vr_cuda_alloc(&d_memory, vr_hp_bytes(kind, max_cells), "HistoPyramid levels")) !=
        VR_OK)
        return st;
    if ((st = vr_hp_create_in(out, kind, max_cells, d_memory, stream)) != VR_OK) {
        void *const bufs[] = {d_memory};
        vr_cuda_free_all(bufs, VR_COUNT_OF(bufs));
        return st;
    }
    (*out)->borrowed = 0; /* the memory is the object's own: vr_hp_destroy frees it */
    return VR_OK;
}

vr_status vr_hp_create_in(vr_hp **out, vr_hp_kind kind, uint32_t max_cells, void *d_memory,
                          void *stream)
{
    assert(out && d_memory && (uintptr_t)d_memory % 16 == 0);
    *out = NULL;
    vr_hp *h = NULL;
    vr_status st = vr_cuda_host_struct((void **)&h, sizeof *h, "a HistoPyramid");
    if (st != VR_OK)
        return st;
    h->kind = kind;
    h->max_cells = max_cells;
    h->stream = (cudaStream_t)stream;
    h->borrowed = 1;
    vr_hp_layout_make(&h->layout, kind, 0);
    vr_hp_layout l;
    vr_hp_layout_make(&l, kind, max_cells);
    h->d_levels = (uint32_t *)d_memory;
    h->d_error = h->d_levels + l.words; /* words is a multiple of 4: 16-byte aligned */
    /* build ids restart at 1: an error word left by an earlier object must not match */
    VR_CUDA_GOTO(cudaMemsetAsync(h->d_error, 0, sizeof(uint32_t), h->stream));
    VR_CUDA_GOTO(cudaDeviceGetAttribute(&h->sm_count, cudaDevAttrMultiProcessorCount, 0));
    VR_CUDA_GOTO(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &h->scatter_per_sm, vr_hp_scatter_kernel, VR_COMPACT_BLOCK, 0));
    h->scatter_per_sm = h->scatter_per_sm > 0 ? h->scatter_per_sm : 1;
    *out = h;
    return VR_OK;
done:
    vr_hp_destroy(h);
    return st;
}

void vr_hp_destroy(vr_hp *h)
{
    if (!h)
        return;
    if (!h->borrowed) { /* levels and error word: one allocation (vr_hp_create) */
        void *const bufs[] = {h->d_levels};
        vr_cuda_free_all(bufs, VR_COUNT_OF(bufs));
    }
    free(h);
}

static vr_status vr_hp_build(vr_hp *h, const uint32_t *d_base, uint32_t n, uint64_t threshold,
                             uint32_t select)
{
    assert(h && (d_base || n == 0));
    if (n > h->max_cells)
        return VR_ERROR(VR_ERR_ARG, "HistoPyramid: %u cells, but it was made for at most %u", n,
                        h->max_cells);
    if ((uintptr_t)d_base % 16)
        return VR_ERROR(VR_ERR_ARG, "HistoPyramid: the base array is not 16-byte aligned");
    vr_hp_layout_make(&h->layout, h->kind, n);
    h->d_base = d_base;
    h->threshold = threshold;
    h->select = select;
    ++h->build_id;
    const vr_hp_layout *l = &h->layout;
    vr_hp_build_params p;
    memset(&p, 0, sizeof p);
    p.src = d_base;
    p.levels = h->d_levels;
    p.error = h->d_error;
    p.threshold = threshold;
    p.src_cells = n;
    p.src_kind = select ? VR_HP_SRC_SELECT : VR_HP_SRC_COUNTS;
    p.vec4 = h->kind == VR_HP_VEC4;
    p.build_id = h->build_id;
    for (uint32_t from = 0; from < l->levels; from += p.count) {
        p.count = l->levels - from < VR_HP_STAGE_LEVELS ? l->levels - from : VR_HP_STAGE_LEVELS;
        for (uint32_t j = 0; j < p.count; ++j) {
            p.offset[j] = l->offset[from + 1 + j];
            p.cells[j] = l->cells[from + 1 + j];
        }
        const uint32_t blocks = (uint32_t)(((uint64_t)p.src_cells + VR_HP_STAGE_TILE - 1) /
                                           VR_HP_STAGE_TILE);
        vr_hp_build_kernel<<<blocks, VR_HP_BUILD_BLOCK, 0, h->stream>>>(p);
        VR_LAUNCH_CHECK("vr_hp_build_kernel", h->stream);
        /* the next stage sums the last level made */
        p.src = h->d_levels + l->offset[from + p.count];
        p.src_cells = l->cells[from + p.count];
        p.src_kind = p.vec4 ? VR_HP_SRC_VEC4 : VR_HP_SRC_PLAIN;
    }
    return VR_OK;
}

vr_status vr_hp_build_select(vr_hp *h, const uint32_t *d_in, uint32_t n, uint64_t threshold)
{
    return vr_hp_build(h, d_in, n, threshold, 1);
}

vr_status vr_hp_build_counts(vr_hp *h, const uint32_t *d_counts, uint32_t n)
{
    return vr_hp_build(h, d_counts, n, 0, 0);
}

vr_hp_view vr_hp_view_of(const vr_hp *h)
{
    vr_hp_view v;
    memset(&v, 0, sizeof v);
    v.levels = h->d_levels;
    v.base = h->d_base;
    v.threshold = h->threshold;
    v.top = h->layout.levels ? h->layout.offset[h->layout.levels] : 0;
    v.n = h->layout.n;
    v.levels_count = h->layout.levels;
    v.select = h->select;
    v.vec4 = h->kind == VR_HP_VEC4;
    return v;
}

/* The outputs of the last build, in the stream: a counts build's by one descent per output
 * (vr_hp_find_kernel); a select build's by the same descents when they are few, else by tiles
 * (vr_hp_scatter_kernel): both are launched, the pyramid's total decides on the device. */
static vr_status vr_hp_traverse(vr_hp *h, uint32_t *d_out, uint32_t *d_rank, uint32_t capacity)
{
    if (h->layout.n == 0 || capacity == 0)
        return VR_OK;
    vr_hp_find_params p;
    memset(&p, 0, sizeof p);
    p.view = vr_hp_view_of(h);
    p.out = d_out;
    p.rank = d_rank;
    p.capacity = capacity;
    /* enough blocks for every output, at most what stays resident; the rest loops */
    const uint64_t need = ((uint64_t)capacity + VR_HP_FIND_BLOCK - 1) / VR_HP_FIND_BLOCK;
    const uint64_t most = (uint64_t)h->sm_count * VR_HP_FIND_BLOCKS_PER_SM;
    const uint32_t blocks = (uint32_t)(need < most ? need : most);
    vr_hp_find_kernel<<<blocks, VR_HP_FIND_BLOCK, 0, h->stream>>>(p);
    VR_LAUNCH_CHECK("vr_hp_find_kernel", h->stream);
    if (h->select) {
        vr_hp_scatter_params q;
        memset(&q, 0, sizeof q);
        q.view = p.view;
        q.out = d_out;
        q.capacity = capacity;
        const uint64_t tiles = ((uint64_t)h->layout.n + VR_COMPACT_TILE - 1) / VR_COMPACT_TILE;
        const uint64_t resident = (uint64_t)h->sm_count * h->scatter_per_sm;
        vr_hp_scatter_kernel<<<(uint32_t)(tiles < resident ? tiles : resident), VR_COMPACT_BLOCK,
                               0, h->stream>>>(q);
        VR_LAUNCH_CHECK("vr_hp_scatter_kernel", h->stream);
    }
    return VR_OK;
}

vr_status vr_hp_compact(vr_hp *h, uint32_t *d_out, uint32_t capacity)
{
    assert(h && h->select);
    return vr_hp_traverse(h, d_out, NULL, capacity);
}

vr_status vr_hp_expand(vr_hp *h, uint32_t *d_cell, uint32_t *d_rank, uint32_t capacity)
{
    assert(h && !h->select);
    return vr_hp_traverse(h, d_cell, d_rank, capacity);
}

const uint32_t *vr_hp_device_total(const vr_hp *h)
{
    assert(h);
    const vr_hp_layout *l = &h->layout;
    if (l->levels == 0)
        return NULL;
    return h->d_levels + l->offset[l->levels] + (h->kind == VR_HP_VEC4 ? 3 : 0);
}

vr_status vr_hp_total(vr_hp *h, uint32_t *total)
{
    assert(h && total);
    *total = 0;
    const vr_hp_layout *l = &h->layout;
    if (l->levels == 0)
        return VR_OK;
    uint32_t error = 0;
    VR_CUDA_CHECK(cudaMemcpyAsync(total, vr_hp_device_total(h), sizeof *total,
                                  cudaMemcpyDeviceToHost, h->stream));
    VR_CUDA_CHECK(cudaMemcpyAsync(&error, h->d_error, sizeof error, cudaMemcpyDeviceToHost,
                                  h->stream));
    VR_CUDA_CHECK(cudaStreamSynchronize(h->stream));
    if (error == h->build_id) {
        *total = 0;
        return VR_ERROR(VR_ERR_OVERFLOW, "HistoPyramid: the counts of %u cells sum to 2^32 or "
                        "more; split the input", l->n);
    }
    return VR_OK;
}

const vr_hp_layout *vr_hp_layout_of(const vr_hp *h)
{
    return &h->layout;
}

vr_status vr_hp_download(vr_hp *h, uint32_t *levels)
{
    if (h->layout.words == 0)
        return VR_OK;
    VR_CUDA_CHECK(cudaMemcpyAsync(levels, h->d_levels, h->layout.words * sizeof *levels,
                                  cudaMemcpyDeviceToHost, h->stream));
    VR_CUDA_CHECK(cudaStreamSynchronize(h->stream));
    return VR_OK;
}
