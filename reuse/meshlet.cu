/* meshlet.cu - meshoptimizer's meshlets as batches (meshopt_buildMeshlets, the clusters mesh
 * shaders draw; reuse/meshlets.c builds them on the CPU at load time): one block per meshlet,
 * each of its distinct vertices shaded once, every triangle written to the queue slot of its
 * plan position with its source id. The kernel is reuse/plan.cuh (also the patch strategy's); CPU twin:
 * meshlet_ref.c. Try: `vreuse_tests gpu/`, `vreuse bench bunny.obj --strategy meshlet,hash`.
 */
#include "reuse/plan.cuh"

VR_PLAN_KERNEL(meshlet) /* reuse/plan.cuh: one block per meshlet */

extern "C" vr_status vr_meshlet_run(const vr_reuse_params *p)
{
    /* the dynamic strategies' checks, the cluster pre-pass and the launch (reuse/plan.cuh) */
    return vr_plan_launch(p, "meshlet", vr_meshlet_kernel<0>, vr_meshlet_kernel<1>,
                          "vr_meshlet_kernel");
}
