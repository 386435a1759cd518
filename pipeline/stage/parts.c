/* parts.c - a run's batches cut into parts of equal batch counts (parts.h). */
#include "pipeline/stage/parts.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

void vr_parts_free(vr_parts *p)
{
    if (!p)
        return;
    free(p->part);
    free(p->stream_batch);
    free(p->plan_indices);
    free(p->starts);
    if (p->plan.starts)
        vr_batch_plan_free(&p->plan);
    memset(p, 0, sizeof *p);
}

/* The stream's batch starts (index offsets, *batches + 1 of them, malloc'd) for strategies
 * without computed batches: naive and multi run a thread block of block_size triangles, warp a
 * static batch of batch_indices indices. */
static vr_status vr_parts_fixed_starts(uint32_t **starts, uint32_t *batches,
                                       const vr_reuse_ops *ops, uint32_t index_count,
                                       const vr_reuse_params *cfg)
{
    const uint32_t per = ops->kind == VR_REUSE_WARP ? cfg->batch_indices : 3 * cfg->block_size;
    if (per == 0 || per % 3 != 0)
        return VR_ERROR(VR_ERR_ARG, "parts of %s: a batch of %u indices", ops->name, per);
    const uint32_t n = index_count ? (uint32_t)(((uint64_t)index_count + per - 1) / per) : 0;
    uint32_t *s = malloc(((size_t)n + 1) * sizeof *s);
    if (!s)
        return VR_ERROR(VR_ERR_OOM, "parts of %s: %u batch starts", ops->name, n + 1);
    for (uint32_t b = 0; b < n; ++b)
        s[b] = b * per;
    s[n] = index_count;
    *starts = s;
    *batches = n;
    return VR_OK;
}

vr_status vr_parts_make(vr_parts *out, const vr_reuse_ops *ops, const vr_mesh *m,
                        const vr_reuse_params *cfg, uint32_t count)
{
    assert(out && ops && m && cfg);
    memset(out, 0, sizeof *out);
    if (count == 0 || count > VR_PARTS_MAX)
        return VR_ERROR(VR_ERR_ARG, "%u parts: between 1 and %u", count, VR_PARTS_MAX);
    if (ops->kind == VR_REUSE_MULTI && count > 1)
        return VR_ERROR(VR_ERR_ARG, "multi cannot be cut into parts: it shades the whole vertex "
                        "buffer before it assembles, so each of the %u parts would shade it "
                        "again; use any other strategy", count);
    const uint32_t *stream = m->indices;
    uint32_t *whole = NULL, batches = 0;
    vr_status st;
    if (ops->dynamic) {
        st = vr_geometry_dyn_batches(&whole, &batches, m, cfg->max_unique, cfg->max_indices);
    } else if (ops->plan) {
        st = vr_geometry_plan(&out->plan, &out->plan_indices, ops, m, cfg->max_unique,
                              cfg->max_indices, cfg->patch_builder);
        if (st == VR_OK) {
            stream = out->plan_indices;
            batches = out->plan.batch_count;
        }
    } else {
        st = vr_parts_fixed_starts(&whole, &batches, ops, m->index_count, cfg);
    }
    const uint32_t *starts = ops->plan ? out->plan.starts : whole;
    const uint32_t tris = m->index_count / 3;
    if (st == VR_OK) {
        out->part = calloc(count, sizeof *out->part);
        out->stream_batch = malloc(((size_t)tris + 1) * sizeof *out->stream_batch);
        /* every part's rebased starts: at most batches + count entries in all */
        out->starts = malloc(((size_t)batches + count) * sizeof *out->starts);
        if (!out->part || !out->stream_batch || !out->starts)
            st = VR_ERROR(VR_ERR_OOM, "parts of %s: %u parts over %u triangles", ops->name,
                          count, tris);
    }
    if (st != VR_OK) {
        free(whole);
        vr_parts_free(out);
        return st;
    }
    out->count = count;
    out->batch_count = batches;
    out->triangles = tris;
    for (uint32_t b = 0; b < batches; ++b)
        for (uint32_t t = starts[b] / 3; t < starts[b + 1] / 3; ++t)
            out->stream_batch[t] = b;
    uint32_t *next = out->starts;
    const int given = ops->dynamic || ops->plan;
    for (uint32_t k = 0; k < count; ++k) {
        vr_part *p = &out->part[k];
        p->batch_begin = (uint32_t)((uint64_t)batches * k / count);
        p->batch_end = (uint32_t)((uint64_t)batches * (k + 1) / count);
        const uint32_t i0 = starts[p->batch_begin], i1 = starts[p->batch_end];
        p->first_tri = i0 / 3;
        p->mesh = *m;
        p->mesh.indices = (uint32_t *)stream + i0;
        p->mesh.index_count = i1 - i0;
        if (!given)
            continue;
        p->given.count = p->batch_end - p->batch_begin;
        p->given.starts = next;
        for (uint32_t b = p->batch_begin; b <= p->batch_end; ++b)
            *next++ = starts[b] - i0;
        p->given.bounds = ops->plan && out->plan.bounds ? out->plan.bounds + p->batch_begin : NULL;
    }
    free(whole);
    return VR_OK;
}
