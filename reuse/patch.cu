/* patch.cu - RXMesh-style patches as batches (Mahmoud's dissertation, Sec. 4.3; reuse/patches.h
 * builds them on the CPU at load time): one block per batch of the plan - a patch, or small
 * neighbouring patches packed together - whose owned and ribbon vertices are each shaded once,
 * every triangle written to the queue slot of its source id. However the input was ordered,
 * a batch is a compact piece of surface, so reuse stays near .80. The kernel is reuse/plan.cuh
 * (also the meshlet strategy's); CPU twin: patch_ref.c. Try: `vreuse_tests gpu/`,
 * `vreuse bench sphere:7M --order random --strategy patch,hash --load heavy`.
 */
#include "reuse/plan.cuh"

/* See vr_plan_batch (reuse/plan.cuh): one block per patch batch; QB 1 compacts a culling run's
 * queue per block (ink, collate), 0 otherwise. */
template <int QB>
static __global__ void __maxnreg__(VR_DYN_MAX_REGS)
vr_patch_kernel(vr_reuse_params p, uint32_t table_log2)
{
    __shared__ uint32_t s_warp[VR_WARP_SIZE];
    __shared__ uint32_t s_failed;
    __shared__ vr_compact_shared cs;
    vr_plan_batch(p, table_log2, s_warp, &s_failed, &cs, QB);
}

extern "C" vr_status vr_patch_run(const vr_reuse_params *p)
{
    /* the dynamic strategies' checks (N_u, max_indices, batches present) and launch */
    return vr_dyn_launch_hashed(p, "patch", vr_patch_kernel<0>, vr_patch_kernel<1>,
                                "vr_patch_kernel");
}
