/* sort.cu - dynamically batched sorting (Kenzel et al. 2018, Sec. 3.4, Algorithm 2): one block
 * per dynamic batch radix-sorts the batch's indices with their positions (cub::BlockRadixSort),
 * flags where the sorted key changes (cub::BlockDiscontinuity), numbers the distinct keys with an
 * exclusive sum (cub::BlockScan), scatters position -> dense id, shades each distinct vertex
 * once and assembles one triangle per thread. CPU twin: sort_ref.c (reuse/dyn_ref_common.h).
 * Try: `vreuse_tests gpu/dyn`, `vreuse bench --strategy sort --block 128,256,512`.
 */
#include <cub/block/block_discontinuity.cuh>
#include <cub/block/block_radix_sort.cuh>
#include <cub/block/block_scan.cuh>

#include "reuse/dyn_common.cuh"

/* Most keys per thread of any instantiation: register arrays keys, pos, heads, ids of ITEMS
 * each; 32 is BLOCK 32 at the default capacity 1024. */
#define VR_SORT_MAX_ITEMS 32

/* Flag op for BlockDiscontinuity: a head where the sorted key differs from its predecessor. */
struct vr_key_differs {
    __device__ __forceinline__ bool operator()(uint32_t a, uint32_t b) const { return a != b; }
};

/* CUB's block primitives need the block size and the keys per thread at compile time:
 * vr_sort_run instantiates 32..1024 threads for a capacity CAP of 1024, 2048 or 3072 keys
 * (the smallest >= p.max_indices), ITEMS = CAP / BLOCK keys per thread (256 x 4 by default).
 * ITEMS is capped at 32 - what BLOCK 32 at CAP 1024 has always used - so longer batches need
 * larger blocks: 2046 indices at >= 64 threads, 3069 at >= 128.
 * Thread mapping: thread t loads positions j * BLOCK + t (striped, coalesced); after the sort it
 * holds sorted ranks t * ITEMS .. t * ITEMS + ITEMS - 1 (blocked), then shades dense ids and
 * assembles triangles strided by BLOCK. Keys are offset by the batch's smallest index and sorted
 * on just the bits of (largest - smallest + 1): on the Forsyth-ordered test scenes 3.2-4.0 radix
 * passes of 4 bits on average, instead of 8 for whole keys or 4-5 for the vertex count's bits.
 * Padding keys (positions >= count) are VR_DYN_EMPTY, whose low bits exceed every real key, so
 * real keys take exactly sorted ranks 0..count-1 whatever the load order.
 * Shared memory: CUB temp storage (a union, __syncthreads between uses), per-warp min/max, and
 * vr_dyn_smem without table. Sync points: min/max | sorted | heads | scanned and scattered |
 * shaded. */
template <int BLOCK, int CAP, int QB>
static __global__ void __launch_bounds__(BLOCK) vr_sort_kernel(vr_reuse_params p)
{
    enum { ITEMS = CAP / BLOCK, WARPS = BLOCK / VR_WARP_SIZE };
    static_assert(CAP % BLOCK == 0 && ITEMS <= VR_SORT_MAX_ITEMS, "sort: keys per thread");
    typedef cub::BlockRadixSort<uint32_t, BLOCK, ITEMS, uint16_t> block_sort;
    typedef cub::BlockDiscontinuity<uint32_t, BLOCK> block_heads;
    typedef cub::BlockScan<uint32_t, BLOCK> block_scan;
    __shared__ union {
        typename block_sort::TempStorage sort;
        typename block_heads::TempStorage heads;
        typename block_scan::TempStorage scan;
    } s_cub;
    __shared__ uint32_t s_min[WARPS], s_max[WARPS];
    __shared__ vr_compact_shared cs;

    vr_dyn_batch b;
    /* the host picked CAP >= p.max_indices, so an accepted batch fits the keys */
    if (!vr_dyn_block_start(p, &cs, QB, NULL, &b))
        return;
    const vr_dyn_smem s = vr_dyn_smem_carve(p.max_unique, 0);
    const uint32_t lane = threadIdx.x & (VR_WARP_SIZE - 1), warp = threadIdx.x / VR_WARP_SIZE;

    uint32_t keys[ITEMS];
    uint16_t pos[ITEMS];
    uint32_t lo = VR_DYN_EMPTY, hi = 0;
    for (int j = 0; j < ITEMS; ++j) {
        const uint32_t q = (uint32_t)j * BLOCK + threadIdx.x;
        pos[j] = (uint16_t)q;
        keys[j] = VR_DYN_EMPTY;
        if (q < b.count) {
            keys[j] = __ldg(p.indices + b.start + q);
            lo = min(lo, keys[j]);
            hi = max(hi, keys[j]);
        }
    }
    lo = __reduce_min_sync(VR_FULL_MASK, lo);
    hi = __reduce_max_sync(VR_FULL_MASK, hi);
    if (lane == 0) {
        s_min[warp] = lo;
        s_max[warp] = hi;
    }
    __syncthreads();
    for (int w = 0; w < WARPS; ++w) {
        lo = min(lo, s_min[w]);
        hi = max(hi, s_max[w]);
    }
    /* hi - lo + 1 < 2^end_bit, so hi - lo < 2^end_bit - 1 = the padding's low bits */
    const int end_bit = 32 - __clz(hi - lo + 1);
    for (int j = 0; j < ITEMS; ++j)
        if (pos[j] < b.count)
            keys[j] -= lo;

    block_sort(s_cub.sort).Sort(keys, pos, 0, end_bit);
    __syncthreads();
    uint32_t heads[ITEMS];
    block_heads(s_cub.heads).FlagHeads(heads, keys, vr_key_differs());
    for (int j = 0; j < ITEMS; ++j)
        if ((uint32_t)threadIdx.x * ITEMS + j >= b.count)
            heads[j] = 0; /* padding */
    __syncthreads();
    uint32_t ids[ITEMS], unique_count;
    block_scan(s_cub.scan).ExclusiveSum(heads, ids, unique_count);
    if (unique_count > p.max_unique) { /* block-uniform: the scan's aggregate */
        vr_dyn_reject(p, b.count / 3);
        vr_queue_block_skip(p, &cs, QB);
        return;
    }
    for (int j = 0; j < ITEMS; ++j) {
        if ((uint32_t)threadIdx.x * ITEMS + j < b.count) {
            const uint32_t id = ids[j] + heads[j] - 1; /* inclusive count - 1 */
            s.map[pos[j]] = (uint16_t)id;
            if (heads[j])
                s.unique[id] = keys[j] + lo;
        }
    }
    __syncthreads();
    vr_dyn_shade(p, s, unique_count);
    __syncthreads();
    vr_dyn_assemble(p, s, 0, b, &cs, QB, NULL);
}

template <int BLOCK, int CAP, int QB>
static vr_status vr_sort_launch_queue(const vr_reuse_params *p)
{
    const size_t smem = vr_dyn_smem_bytes(p->max_unique, 0, p->max_indices);
    vr_status st = vr_dyn_smem_fit((const void *)vr_sort_kernel<BLOCK, CAP, QB>, smem);
    if (st != VR_OK)
        return st;
    vr_reuse_params q;
    if ((st = vr_queue_launch_params(p, p->batch_count, "sort", &q)) != VR_OK)
        return st;
    vr_sort_kernel<BLOCK, CAP, QB><<<p->batch_count, BLOCK, smem, (cudaStream_t)p->stream>>>(q);
    VR_LAUNCH_CHECK("vr_sort_kernel", (cudaStream_t)p->stream);
    return VR_OK;
}

/* A batch bound with more than VR_SORT_MAX_ITEMS keys per thread at this block size. */
static vr_status vr_sort_too_long(const vr_reuse_params *p)
{
    const uint32_t most = VR_SORT_MAX_ITEMS * p->block_size / 3 * 3;
    uint32_t block = p->block_size;
    while (block < VR_BLOCK_MAX && VR_SORT_MAX_ITEMS * block < p->max_indices)
        block *= 2;
    return VR_ERROR(VR_ERR_ARG,
                    "sort: batches of at most %u indices at block %u (got max_indices %u): "
                    "cub::BlockRadixSort holds at most %d keys per thread. Hint: --block %u",
                    most, p->block_size, p->max_indices, VR_SORT_MAX_ITEMS, block);
}

/* Instantiates <BLOCK, CAP> only where it stays within VR_SORT_MAX_ITEMS keys per thread. */
template <int BLOCK, int CAP>
static vr_status vr_sort_launch_if(const vr_reuse_params *p)
{
    if constexpr (CAP / BLOCK <= VR_SORT_MAX_ITEMS)
        return vr_queue_blockwise(p) ? vr_sort_launch_queue<BLOCK, CAP, 1>(p)
                                     : vr_sort_launch_queue<BLOCK, CAP, 0>(p);
    else
        return vr_sort_too_long(p);
}

/* The block sizes for one capacity. */
template <int CAP>
static vr_status vr_sort_dispatch(const vr_reuse_params *p)
{
    switch (p->block_size) {
    case 32: return vr_sort_launch_if<32, CAP>(p);
    case 64: return vr_sort_launch_if<64, CAP>(p);
    case 128: return vr_sort_launch_if<128, CAP>(p);
    case 256: return vr_sort_launch_if<256, CAP>(p);
    case 512: return vr_sort_launch_if<512, CAP>(p);
    case 1024: return vr_sort_launch_if<1024, CAP>(p);
    default:
        return VR_ERROR(VR_ERR_ARG,
                        "sort: block size %u not supported: cub::BlockRadixSort is instantiated "
                        "for 32, 64, 128, 256, 512 and 1024 threads",
                        p->block_size);
    }
}

extern "C" vr_status vr_sort_run(const vr_reuse_params *p)
{
    vr_status st = vr_dyn_check(p, "sort");
    if (st != VR_OK || p->index_count == 0)
        return st;
    if (p->max_indices <= 1024)
        return vr_sort_dispatch<1024>(p);
    if (p->max_indices <= 2048)
        return vr_sort_dispatch<2048>(p);
    static_assert(VR_MAX_INDICES_MAX <= 3072, "sort: add a capacity for the new limit");
    return vr_sort_dispatch<3072>(p);
}
