/* naive_ref.c - CPU twin of reuse/naive.cu: no reuse at all. Every triangle shades its three
 * corners itself (3 invocations per triangle, Kenzel et al. 2018, Sec. 3.3 "statically batched
 * naive") and is written to queue slot = triangle id.
 * Try: `vreuse_tests reuse/naive`, `vreuse bench --strategy naive`.
 */
#include "reuse/ref_common.h"

vr_status vr_naive_ref(const vr_reuse_params *p)
{
    vr_status st = vr_reuse_validate(p, "naive");
    if (st != VR_OK)
        return st;
    uint32_t triangles = p->index_count / 3;
    for (uint32_t t = 0; t < triangles; ++t) {
        const uint32_t *idx = p->indices + 3 * (size_t)t;
        vr_shaded a = vr_ref_shade_vertex(p, idx[0]);
        vr_shaded b = vr_ref_shade_vertex(p, idx[1]);
        vr_shaded c = vr_ref_shade_vertex(p, idx[2]);
        vr_ref_emit_triangle(p, t, &a, &b, &c, idx[0], idx[1], idx[2]);
    }
    return VR_OK;
}
