/* multi_ref.c - CPU twin of reuse/multi.cu: the non-streaming, multi-pass reference of
 * Kenzel et al. 2018 (Sec. 4.2, "multi"; Laine and Karras 2011). Pass 1 shades every vertex of
 * the vertex buffer once, referenced or not (invocations = vertex_count); pass 2 assembles each
 * triangle from the shaded buffer into queue slot = triangle id.
 * Try: `vreuse_tests reuse/multi`, `vreuse bench --strategy multi`.
 */
#include "reuse/ref_common.h"

#include <stdlib.h>

/* Workspace: the shaded vertex buffer as two float4 arrays (clip, then normal with w = 0), so
 * the GPU's assembly pass gathers aligned 16-byte vectors: 32 bytes per vertex. */
size_t vr_multi_temp_bytes(const vr_reuse_params *p)
{
    return (size_t)p->vertex_count * 8 * sizeof(float);
}

vr_status vr_multi_ref(const vr_reuse_params *p)
{
    vr_status st = vr_reuse_validate(p, "multi");
    if (st != VR_OK)
        return st;
    const uint32_t triangles = p->index_count / 3;
    if (triangles == 0)
        return VR_OK; /* nothing drawn, nothing shaded (the GPU path launches nothing) */
    /* note: the plain loop keeps vr_shaded records; the layout of p->temp is the GPU's business */
    vr_shaded *shaded = malloc((size_t)p->vertex_count * sizeof *shaded);
    if (!shaded)
        return VR_ERROR(VR_ERR_OOM, "multi: cannot allocate %u shaded vertices on the host",
                        p->vertex_count);
    for (uint32_t v = 0; v < p->vertex_count; ++v)
        shaded[v] = vr_ref_shade_vertex(p, v);
    for (uint32_t t = 0; t < triangles; ++t) {
        const uint32_t *idx = p->indices + 3 * (size_t)t;
        vr_ref_emit_triangle(p, t, &shaded[idx[0]], &shaded[idx[1]], &shaded[idx[2]], idx[0],
                             idx[1], idx[2]);
    }
    free(shaded);
    return VR_OK;
}
