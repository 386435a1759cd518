/* patch_ref.c - CPU twin of reuse/patch.cu: one batch per RXMesh-style patch of the plan
 * (reuse/patches.h), each batch's distinct vertices - the patch's owned and ribbon vertices -
 * shaded once, every triangle written to the slot of its plan position with its source id. The loop is the dynamic
 * strategies' twin (reuse/dyn_ref_common.h) over the plan-ordered indices with tri_ids, skipping a
 * batch whose bounds prove it culled when cluster culling is on (reuse/cluster_cull.h).
 * Try: `vreuse_tests reuse/patch`.
 */
#include "reuse/dyn_ref_common.h"

vr_status vr_patch_ref(const vr_reuse_params *p) { return vr_plan_ref(p, "patch"); }
