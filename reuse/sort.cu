/* sort.cu - dynamically batched sorting (Kenzel et al. 2018, Sec. 3.4, Algorithm 2): one block
 * per dynamic batch radix-sorts the batch's indices with their positions (cub::BlockRadixSort),
 * flags where the sorted key changes (cub::BlockDiscontinuity), numbers the distinct keys with an
 * exclusive sum (cub::BlockScan), scatters position -> dense id, shades each distinct vertex
 * once and assembles one triangle per thread. CPU twin: sort_ref.c (reuse/dyn_ref_common.h).
 * Try: `vreuse_tests gpu/dyn`, `vreuse bench --strategy sort --block 128,256,512`.
 */
#include "reuse/sort_dedup.cuh"

/* vr_sort_run instantiates 32..1024 threads for a capacity CAP of 1024, 2048 or 3072 keys (the
 * smallest >= p.max_indices), ITEMS = CAP / BLOCK keys per thread (256 x 4 by default), at most
 * VR_SORT_MAX_ITEMS - what BLOCK 32 at CAP 1024 has always used - so longer batches need larger
 * blocks: 2046 indices at >= 64 threads, 3069 at >= 128.
 * Thread mapping: the deduplication as reuse/sort_dedup.cuh says, then dense ids shaded and
 * triangles assembled strided by BLOCK. Shared memory: CUB temp storage and per-warp min/max
 * (inside vr_sort_dedup), and vr_dyn_smem without table. Sync points: those of vr_sort_dedup |
 * scattered | shaded. */
template <int BLOCK, int CAP, int QB>
static __global__ void __launch_bounds__(BLOCK) vr_sort_kernel(vr_reuse_params p)
{
    __shared__ vr_compact_shared cs;
    vr_dyn_batch b;
    /* the host picked CAP >= p.max_indices, so an accepted batch fits the keys */
    if (!vr_dyn_block_start(p, &cs, QB, NULL, &b))
        return;
    const vr_dyn_smem s = vr_dyn_smem_carve(p.max_unique, 0);
    uint32_t unique_count;
    if (!vr_sort_dedup<BLOCK, CAP>(p.indices + b.start, b.count, s, p.max_unique,
                                   &unique_count)) { /* block-uniform: the scan's aggregate */
        vr_dyn_reject(p, b.count / 3);
        vr_queue_block_skip(p, &cs, QB);
        return;
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
