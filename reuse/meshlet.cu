/* meshlet.cu - meshoptimizer's meshlets as batches (meshopt_buildMeshlets, the clusters mesh
 * shaders draw; reuse/meshlets.c builds them on the CPU at load time): one block per meshlet,
 * each of its distinct vertices shaded once, every triangle written to the queue slot of its
 * source id. The kernel is reuse/plan.cuh (also the patch strategy's); CPU twin:
 * meshlet_ref.c. Try: `vreuse_tests gpu/`, `vreuse bench bunny.obj --strategy meshlet,hash`.
 */
#include "reuse/plan.cuh"

/* See vr_plan_batch (reuse/plan.cuh): one block per meshlet; QB 1 compacts a culling run's
 * queue per block (ink, collate), 0 otherwise. */
template <int QB>
static __global__ void __maxnreg__(VR_DYN_MAX_REGS)
vr_meshlet_kernel(vr_reuse_params p, uint32_t table_log2)
{
    __shared__ uint32_t s_warp[VR_WARP_SIZE];
    __shared__ uint32_t s_failed;
    __shared__ vr_compact_shared cs;
    vr_plan_batch(p, table_log2, s_warp, &s_failed, &cs, QB);
}

extern "C" vr_status vr_meshlet_run(const vr_reuse_params *p)
{
    /* the dynamic strategies' checks (N_u, max_indices, batches present) and launch */
    return vr_dyn_launch_hashed(p, "meshlet", vr_meshlet_kernel<0>, vr_meshlet_kernel<1>,
                                "vr_meshlet_kernel");
}
