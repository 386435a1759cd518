/* patch.cu - RXMesh-style patches as batches (Mahmoud's dissertation, Sec. 4.3; reuse/patches.h
 * builds them on the CPU at load time): one block per batch of the plan - a patch, or small
 * neighbouring patches packed together - whose owned and ribbon vertices are each shaded once,
 * every triangle written to the queue slot of its plan position with its source id. However the input was ordered,
 * a batch is a compact piece of surface, so reuse stays near .80. The kernel is reuse/plan.cuh
 * (also the meshlet strategy's); CPU twin: patch_ref.c. Try: `vreuse_tests gpu/`,
 * `vreuse bench sphere:7M --order random --strategy patch,hash --load heavy`.
 */
#include "reuse/plan.cuh"

VR_PLAN_KERNEL(patch) /* reuse/plan.cuh: one block per patch batch */

extern "C" vr_status vr_patch_run(const vr_reuse_params *p)
{
    /* the dynamic strategies' checks, the cluster pre-pass and the launch (reuse/plan.cuh) */
    return vr_plan_launch(p, "patch", vr_patch_kernel<0>, vr_patch_kernel<1>, "vr_patch_kernel");
}
