/* sort_dedup.cuh - the sort strategy's deduplication of one batch (Kenzel et al. 2018, Algorithm
 * 2), shared by the renderer's sort batcher (reuse/sort.cu) and the general reuse API
 * (reuse/program.cuh): the block radix-sorts the batch's keys with their positions
 * (cub::BlockRadixSort), flags where the sorted key changes (cub::BlockDiscontinuity), numbers
 * the distinct keys with an exclusive sum (cub::BlockScan) and scatters position -> dense id.
 */
#ifndef VR_SORT_DEDUP_CUH
#define VR_SORT_DEDUP_CUH

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

/* keys_in[0 .. count), count <= CAP, into s.map (position -> dense id) and s.unique (dense id ->
 * key). CUB's block primitives need the block size and the keys per thread at compile time: ITEMS =
 * CAP / BLOCK keys per thread, capped at VR_SORT_MAX_ITEMS. Thread t loads positions j * BLOCK + t
 * (striped, coalesced); after the sort it holds sorted ranks t * ITEMS .. t * ITEMS + ITEMS - 1
 * (blocked). Keys are offset by the batch's smallest key and sorted on just the bits of (largest -
 * smallest + 1): on the Forsyth-ordered test scenes 3.2-4.0 radix passes of 4 bits on average,
 * instead of 8 for whole keys. Padding keys (positions >= count) are VR_DYN_EMPTY, whose low bits
 * exceed every real key, so real keys take exactly sorted ranks 0..count-1 whatever the load order.
 * IN_ORDER (a program's in_order_hint): a batch whose keys are already in order skips the sort; the
 * check cost the renderer's sort 5% (H100, session 30), so it is only where the caller expects
 * order. Shared memory: CUB temp storage (a union, __syncthreads between uses) and per-warp
 * min/max. Sync points: min/max (and in order) | sorted (unless in order) | heads | scanned.
 * Returns 0 - block-uniformly, before writing s - when the batch has more than max_unique distinct
 * keys; else 1 and *unique_count. The caller must __syncthreads before reading s. Every thread
 * calls it. */
template <int BLOCK, int CAP, bool IN_ORDER = false>
static __device__ __forceinline__ int vr_sort_dedup(const uint32_t *keys_in, uint32_t count,
                                                    const vr_dyn_smem &s, uint32_t max_unique,
                                                    uint32_t *unique_count)
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
    const uint32_t lane = threadIdx.x & (VR_WARP_SIZE - 1), warp = threadIdx.x / VR_WARP_SIZE;

    uint32_t keys[ITEMS];
    uint16_t pos[ITEMS];
    uint32_t lo = VR_DYN_EMPTY, hi = 0;
    int in_order = 1; /* this thread's keys not below their predecessors in the batch */
    for (int j = 0; j < ITEMS; ++j) {
        const uint32_t q = (uint32_t)j * BLOCK + threadIdx.x;
        pos[j] = (uint16_t)q;
        keys[j] = VR_DYN_EMPTY;
        if (q < count) {
            keys[j] = __ldg(keys_in + q);
            lo = min(lo, keys[j]);
            hi = max(hi, keys[j]);
            if (IN_ORDER && q > 0 && __ldg(keys_in + q - 1) > keys[j])
                in_order = 0;
        }
    }
    lo = __reduce_min_sync(VR_FULL_MASK, lo);
    hi = __reduce_max_sync(VR_FULL_MASK, hi);
    if (lane == 0) {
        s_min[warp] = lo;
        s_max[warp] = hi;
    }
    /* IN_ORDER: a batch already in order (the walk's agents sorted by cell) skips the radix
       sort, which would be the identity: its keys are loaded again blocked, as the sort leaves
       them, and the rest is the same code (the same map and unique keys). */
    int sorted = 0;
    if constexpr (IN_ORDER)
        sorted = __syncthreads_and(in_order);
    else
        __syncthreads();
    for (int w = 0; w < WARPS; ++w) {
        lo = min(lo, s_min[w]);
        hi = max(hi, s_max[w]);
    }
    if (sorted)
        for (int j = 0; j < ITEMS; ++j) {
            const uint32_t q = (uint32_t)threadIdx.x * ITEMS + j;
            pos[j] = (uint16_t)q;
            keys[j] = q < count ? __ldg(keys_in + q) : VR_DYN_EMPTY;
        }
    /* hi - lo + 1 < 2^end_bit, so hi - lo < 2^end_bit - 1 = the padding's low bits */
    const int end_bit = 32 - __clz(hi - lo + 1);
    for (int j = 0; j < ITEMS; ++j)
        if (pos[j] < count)
            keys[j] -= lo;

    if (!sorted) {
        block_sort(s_cub.sort).Sort(keys, pos, 0, end_bit);
        __syncthreads();
    }
    uint32_t heads[ITEMS];
    block_heads(s_cub.heads).FlagHeads(heads, keys, vr_key_differs());
    for (int j = 0; j < ITEMS; ++j)
        if ((uint32_t)threadIdx.x * ITEMS + j >= count)
            heads[j] = 0; /* padding */
    __syncthreads();
    uint32_t ids[ITEMS], total;
    block_scan(s_cub.scan).ExclusiveSum(heads, ids, total);
    if (total > max_unique) /* block-uniform: the scan's aggregate */
        return 0;
    for (int j = 0; j < ITEMS; ++j) {
        if ((uint32_t)threadIdx.x * ITEMS + j < count) {
            const uint32_t id = ids[j] + heads[j] - 1; /* inclusive count - 1 */
            s.map[pos[j]] = (uint16_t)id;
            if (heads[j])
                s.unique[id] = keys[j] + lo;
        }
    }
    *unique_count = total;
    return 1;
}

#endif
