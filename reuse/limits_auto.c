/* limits_auto.c - occupancy-aware batch limits (issue 12): the paper's fixed sizes (N_u 256,
 * 1023 indices, 256 threads; Kenzel et al. 2018, Sec. 4.1) form one block per 341 triangles, so
 * a 30k-triangle mesh makes 88 batches for an H100's 132 SMs: a third of the machine idles and
 * each busy SM runs one block, whose index analysis nothing overlaps. Smaller batches fill the
 * machine but lose reuse at their boundaries (the paper, Sec. 3.2: "with larger batch sizes, it
 * may be possible to identify a larger number of duplicate indices"). So: the largest batches
 * that still give VR_AUTO_WAVES waves of paper-sized blocks, never below a floor that keeps
 * reuse near the paper's. Pure integer arithmetic on counts; no mesh data, no device.
 * Try: `vreuse_tests reuse/limits`, `vreuse sim bunny.obj --limits auto --sms 132`.
 */
#include "reuse/reuse.h"

#include "pipeline/limits.h"
#include "pipeline/vreuse.h"

#include <assert.h>

vr_gpu_shape vr_gpu_shape_default(uint32_t sm_count)
{
    vr_gpu_shape g = {sm_count, VR_SM_THREADS_DEFAULT, VR_SM_BLOCKS_DEFAULT};
    return g;
}

vr_batch_limits vr_batch_limits_paper(void)
{
    vr_batch_limits l = {VR_BLOCK_DEFAULT, VR_NU_DEFAULT, VR_MAX_INDICES_DEFAULT,
                         VR_WARP_BATCH_DEFAULT};
    return l;
}

void vr_batch_limits_apply(vr_reuse_params *p, const vr_batch_limits *l)
{
    assert(p && l);
    p->block_size = l->block_size;
    p->max_unique = l->max_unique;
    p->max_indices = l->max_indices;
    p->batch_indices = l->batch_indices;
}

vr_batch_limits vr_batch_limits_of(const vr_reuse_params *p)
{
    assert(p);
    vr_batch_limits l = {p->block_size, p->max_unique, p->max_indices, p->batch_indices};
    return l;
}

/* The paper's index limit for N_u, 1023 = 4 x 256 - 1: about 4 indices per distinct vertex, so
 * on a well-ordered mesh (about 0.6 distinct vertices per triangle inside a batch) the index
 * limit, not N_u, ends a batch and its distinct vertices nearly fill a block of N_u threads. */
static uint32_t max_indices_for(uint32_t max_unique)
{
    return (4 * max_unique - 1) / 3 * 3;
}

/* Batches a mesh makes at N_u, estimated from counts alone: a batch holds max_indices / 3
 * triangles, or fewer when N_u ends it first, at about vertex_count / triangles distinct
 * vertices per triangle (3 for a triangle soup, 0.5 for a closed mesh). The estimate ignores
 * batch boundaries, so it is at most the real count: it only ever keeps batches larger. */
static uint64_t batches_estimate(uint32_t triangles, uint32_t vertex_count, uint32_t max_unique)
{
    uint64_t per = max_indices_for(max_unique) / 3;
    const uint64_t by_vertices =
        (uint64_t)max_unique * triangles / (vertex_count ? vertex_count : 1);
    if (by_vertices < per)
        per = by_vertices ? by_vertices : 1;
    return ((uint64_t)triangles + per - 1) / per;
}

vr_status vr_batch_limits_auto(vr_batch_limits *out, vr_reuse_kind kind, uint32_t triangles,
                               uint32_t vertex_count, const vr_gpu_shape *gpu)
{
    assert(out && gpu);
    *out = vr_batch_limits_paper();
    if ((unsigned)kind >= VR_REUSE_KIND_COUNT)
        return VR_ERROR(VR_ERR_ARG, "auto limits: unknown strategy kind %d", (int)kind);
    if (gpu->sm_count < VR_SMS_MIN || gpu->sm_count > VR_SMS_MAX)
        return VR_ERROR(VR_ERR_ARG, "auto limits: SM count %u is outside %u..%u",
                        gpu->sm_count, VR_SMS_MIN, VR_SMS_MAX);
    if (gpu->threads_per_sm < 32 || gpu->threads_per_sm > 65536)
        return VR_ERROR(VR_ERR_ARG, "auto limits: %u threads per SM is outside 32..65536",
                        gpu->threads_per_sm);
    if (gpu->blocks_per_sm < 1 || gpu->blocks_per_sm > 1024)
        return VR_ERROR(VR_ERR_ARG, "auto limits: %u blocks per SM is outside 1..1024",
                        gpu->blocks_per_sm);

    /* The target, in blocks: VR_AUTO_WAVES full waves of the paper's 256-thread blocks (an
     * H100 holds 132 x 8 of them at once: 2112 for two waves, 720k triangles of paper-sized
     * dynamic batches). With fewer, SMs idle or run a lone block whose serial phases (loading
     * and hashing indices, the scan, assembly) nothing hides; two waves let the first wave's
     * tail overlap the second, and smaller blocks then spread over every SM. Bigger meshes keep
     * the paper's sizes: more batches would only cost reuse. */
    uint32_t resident = gpu->threads_per_sm / VR_BLOCK_DEFAULT;
    if (resident > gpu->blocks_per_sm)
        resident = gpu->blocks_per_sm;
    if (resident == 0)
        resident = 1;
    const uint64_t target = (uint64_t)VR_AUTO_WAVES * gpu->sm_count * resident;

    switch (kind) {
    case VR_REUSE_HASH:
    case VR_REUSE_PHASH:
    case VR_REUSE_SORT:
    case VR_REUSE_PATCH:
    case VR_REUSE_MESHLET: {
        /* N_u in whole warps from the paper's 256 down to the floor, the block one thread per
         * distinct vertex (the paper's ideal, Sec. 3.2), the index limit at the paper's ratio.
         * The floor, N_u 64 / 255 indices, is the paper's own best size for subdivision (192
         * indices, 64 threads, Sec. 5.1); on the shared scenes it keeps dynamic reuse within
         * 4% of N_u 256 (bunny, forsyth: .767 against .796) and above warp voting's (.723),
         * while N_u 32 would drop to .738. sort's radix sort needs max_indices <= 32 x block:
         * 4 x N_u <= 32 x N_u always holds; its block radix sort exists only for power-of-two
         * blocks (reuse/sort.cu), so sort's block is N_u rounded up to one (the H100 run of
         * 424b812 skipped sort on igea at block 96). */
        uint32_t nu = VR_NU_DEFAULT;
        while (nu > VR_AUTO_NU_MIN && batches_estimate(triangles, vertex_count, nu) < target)
            nu -= 32;
        out->max_unique = nu;
        out->max_indices = max_indices_for(nu);
        out->block_size = nu;
        if (kind == VR_REUSE_SORT)
            while (out->block_size & (out->block_size - 1))
                out->block_size += out->block_size & -out->block_size;
        break;
    }
    case VR_REUSE_NAIVE:
    case VR_REUSE_WARP:
    case VR_REUSE_MULTI: {
        /* A block covers block_size triangles (naive: a thread each; warp: block / 32 warps of
         * 96-index batches, 32 triangles each) or, for multi's shading kernel, block_size
         * vertices. Warp keeps the paper's 96: the measured optimum of its batch length (a
         * round per 96 indices; bench/results/geometry-h100.md). */
        const uint64_t items = kind == VR_REUSE_MULTI ? vertex_count : triangles;
        uint32_t block = VR_BLOCK_DEFAULT;
        while (block > VR_AUTO_BLOCK_MIN && (items + block - 1) / block < target)
            block -= 32;
        out->block_size = block;
        break;
    }
    default:
        break;
    }
    return VR_OK;
}
