/* reorder.c - triangle and vertex orders for the reuse experiments (meshoptimizer 0.18):
 * forsyth = meshopt_optimizeVertexCache (the paper's TomF preprocessing), tipsify =
 * meshopt_optimizeVertexCacheFifo with a 16-entry cache, random = seeded Fisher-Yates over
 * whole triangles (splitmix64, identical on every platform), file = as loaded.
 * Try: `vreuse info ../shared/scenes/stanford-bunny.obj --order random`, `vreuse_tests scenes/reorder`.
 */
#include "scenes/scene_internal.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include <meshoptimizer.h>

static vr_status reorder_triangles(vr_mesh *m, vr_order order, uint64_t seed);

vr_status vr_mesh_reorder(vr_mesh *m, vr_order order, uint64_t seed)
{
    const int fetch = ((unsigned)order & VR_ORDER_FETCH) != 0;
    vr_status s = reorder_triangles(m, (vr_order)((unsigned)order & ~(unsigned)VR_ORDER_FETCH), seed);
    if (s != VR_OK || !fetch)
        return s;
    return vr_mesh_reorder_fetch(m, NULL);
}

static vr_status reorder_triangles(vr_mesh *m, vr_order order, uint64_t seed)
{
    assert(m && (unsigned)order < VR_ORDER_COUNT);
    vr_status s = vr_mesh_validate(m, "reorder input");
    if (s)
        return s;
    size_t n = m->index_count;
    if (order == VR_ORDER_FILE)
        return VR_OK;
    if (order == VR_ORDER_RANDOM) {
        /* Lemire's multiply-shift maps 32 random bits onto [0, i]; its bias (< 2^-32 * i) is
         * irrelevant here, and unlike `% (i + 1)` it needs no division */
        uint64_t state = seed;
        uint32_t *t = m->indices;
        for (size_t i = n / 3 - 1; i > 0; --i) {
            size_t j = (size_t)(((vr_splitmix64(&state) >> 32) * (uint64_t)(i + 1)) >> 32);
            uint32_t tmp[3];
            memcpy(tmp, t + 3 * i, sizeof tmp);
            memcpy(t + 3 * i, t + 3 * j, sizeof tmp);
            memcpy(t + 3 * j, tmp, sizeof tmp);
        }
        return VR_OK;
    }
    uint32_t *dst = malloc(n * sizeof *dst);
    if (!dst)
        return VR_ERROR(VR_ERR_OOM, "reorder: cannot allocate %zu indices", n);
    if (order == VR_ORDER_FORSYTH)
        meshopt_optimizeVertexCache(dst, m->indices, n, m->vertex_count);
    else
        meshopt_optimizeVertexCacheFifo(dst, m->indices, n, m->vertex_count, 16);
    free(m->indices);
    m->indices = dst;
    return VR_OK;
}

vr_status vr_mesh_reorder_fetch(vr_mesh *m, uint32_t **remap_out)
{
    assert(m);
    if (remap_out)
        *remap_out = NULL;
    vr_status s = vr_mesh_validate(m, "reorder_fetch input");
    if (s)
        return s;
    size_t vc = m->vertex_count;
    uint32_t *remap = malloc((vc ? vc : 1) * sizeof *remap);
    if (!remap)
        return VR_ERROR(VR_ERR_OOM, "reorder_fetch: cannot allocate a remap of %zu vertices", vc);
    size_t unique = meshopt_optimizeVertexFetchRemap(remap, m->indices, m->index_count, vc);
    /* a mesh without positions (the simulator's index-only copies) gets its indices renumbered */
    float *pos = m->positions ? malloc(unique * 3 * sizeof(float)) : NULL;
    float *nrm = m->normals ? malloc(unique * 3 * sizeof(float)) : NULL;
    float *uv = m->texcoords ? malloc(unique * 2 * sizeof(float)) : NULL;
    if ((m->positions && !pos) || (m->normals && !nrm) || (m->texcoords && !uv)) {
        free(pos), free(nrm), free(uv), free(remap);
        return VR_ERROR(VR_ERR_OOM, "reorder_fetch: cannot allocate %zu vertices", unique);
    }
    /* remapVertexBuffer skips the ~0u (unreferenced) entries, which drops those vertices */
    if (pos)
        meshopt_remapVertexBuffer(pos, m->positions, vc, 3 * sizeof(float), remap);
    if (nrm)
        meshopt_remapVertexBuffer(nrm, m->normals, vc, 3 * sizeof(float), remap);
    if (uv)
        meshopt_remapVertexBuffer(uv, m->texcoords, vc, 2 * sizeof(float), remap);
    meshopt_remapIndexBuffer(m->indices, m->indices, m->index_count, remap);
    free(m->positions), free(m->normals), free(m->texcoords);
    m->positions = pos, m->normals = nrm, m->texcoords = uv;
    m->vertex_count = (uint32_t)unique;
    if (remap_out)
        *remap_out = remap;
    else
        free(remap);
    return VR_OK;
}
