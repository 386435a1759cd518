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
    free(p->batch_first);
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

/* The stream strategy `ops` reads on `m` (the index buffer, or a plan's ordered copy kept in
 * out) and its batch starts: *whole (malloc'd, freed by the caller) unless a plan's own. */
static vr_status vr_parts_stream(vr_parts *out, const uint32_t **stream, const uint32_t **starts,
                                 uint32_t **whole, uint32_t *batches, const vr_reuse_ops *ops,
                                 const vr_mesh *m, const vr_reuse_params *cfg)
{
    vr_status st;
    *stream = m->indices;
    *whole = NULL;
    *batches = 0;
    if (ops->dynamic) {
        st = vr_geometry_dyn_batches(whole, batches, m, cfg->max_unique, cfg->max_indices);
    } else if (ops->plan) {
        st = vr_geometry_plan(&out->plan, &out->plan_indices, ops, m, cfg->max_unique,
                              cfg->max_indices, cfg->patch_builder);
        if (st == VR_OK) {
            *stream = out->plan_indices;
            *batches = out->plan.batch_count;
        }
    } else {
        st = vr_parts_fixed_starts(whole, batches, ops, m->index_count, cfg);
    }
    *starts = ops->plan ? out->plan.starts : *whole;
    return st;
}

/* Makes `count` parts of batches [cut[k], cut[k + 1]) each over the stream. */
static vr_status vr_parts_fill(vr_parts *out, const vr_reuse_ops *ops, const vr_mesh *m,
                               const uint32_t *stream, const uint32_t *starts, uint32_t batches,
                               const uint32_t *cut, uint32_t count)
{
    const uint32_t tris = m->index_count / 3;
    /* batch ids only for the positions these parts cover */
    const uint32_t t0 = batches ? starts[cut[0]] / 3 : 0, t1 = batches ? starts[cut[count]] / 3 : 0;
    out->part = calloc(count ? count : 1, sizeof *out->part);
    out->stream_batch = malloc(((size_t)t1 - t0 + 1) * sizeof *out->stream_batch);
    out->batch_first = malloc(((size_t)batches + 1) * sizeof *out->batch_first);
    /* every part's rebased starts: at most batches + count entries in all */
    out->starts = malloc(((size_t)batches + count) * sizeof *out->starts);
    if (!out->part || !out->stream_batch || !out->batch_first || !out->starts)
        return VR_ERROR(VR_ERR_OOM, "parts of %s: %u parts over %u triangles", ops->name, count,
                        t1 - t0);
    out->count = count;
    out->batch_count = batches;
    out->triangles = tris;
    out->tri_begin = t0;
    out->tri_end = t1;
    out->batch_first[0] = 0; /* an empty stream may have no starts */
    for (uint32_t b = 0; batches && b <= batches; ++b)
        out->batch_first[b] = starts[b] / 3;
    for (uint32_t b = cut[0]; b < cut[count]; ++b)
        for (uint32_t t = starts[b] / 3; t < starts[b + 1] / 3; ++t)
            out->stream_batch[t - t0] = b;
    uint32_t *next = out->starts;
    const int given = ops->dynamic || ops->plan;
    for (uint32_t k = 0; k < count; ++k) {
        vr_part *p = &out->part[k];
        p->batch_begin = cut[k];
        p->batch_end = cut[k + 1];
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
    const uint32_t *stream, *starts;
    uint32_t *whole, batches, cut[VR_PARTS_MAX + 1];
    vr_status st = vr_parts_stream(out, &stream, &starts, &whole, &batches, ops, m, cfg);
    for (uint32_t k = 0; k <= count; ++k)
        cut[k] = (uint32_t)((uint64_t)batches * k / count);
    if (st == VR_OK)
        st = vr_parts_fill(out, ops, m, stream, starts, batches, cut, count);
    free(whole);
    if (st != VR_OK)
        vr_parts_free(out);
    return st;
}

vr_status vr_parts_make_bounded(vr_parts *out, const vr_reuse_ops *ops, const vr_mesh *m,
                                const vr_reuse_params *cfg, uint32_t max_triangles,
                                uint32_t part, uint32_t parts)
{
    assert(out && ops && m && cfg);
    memset(out, 0, sizeof *out);
    if (max_triangles == 0)
        return VR_ERROR(VR_ERR_ARG, "chunks of 0 triangles");
    if (parts == 0 || parts > VR_PARTS_MAX || part >= parts)
        return VR_ERROR(VR_ERR_ARG, "chunks of part %u of %u: want 1..%u parts", part, parts,
                        VR_PARTS_MAX);
    if (ops->kind == VR_REUSE_MULTI)
        return VR_ERROR(VR_ERR_ARG, "multi cannot run in chunks: it shades the whole vertex "
                        "buffer before it assembles, so every chunk would shade it again; use "
                        "any other strategy");
    const uint32_t *stream, *starts;
    uint32_t *whole, batches, *cut = NULL, count = 0;
    vr_status st = vr_parts_stream(out, &stream, &starts, &whole, &batches, ops, m, cfg);
    if (st == VR_OK && !(cut = malloc(((size_t)batches + 2) * sizeof *cut)))
        st = VR_ERROR(VR_ERR_OOM, "chunks of %s: %u batches", ops->name, batches);
    /* the part's batches, as vr_parts_make cuts them */
    const uint32_t begin = (uint32_t)((uint64_t)batches * part / parts);
    const uint32_t end = (uint32_t)((uint64_t)batches * (part + 1) / parts);
    /* greedy: a chunk takes batches while they fit (a batch is never split) */
    for (uint32_t b = begin; st == VR_OK && b < end;) {
        const uint32_t first = starts[b] / 3;
        if (starts[b + 1] / 3 - first > max_triangles) {
            st = VR_ERROR(VR_ERR_ARG, "%s: batch %u has %u triangles, more than a chunk's %u",
                          ops->name, b, starts[b + 1] / 3 - first, max_triangles);
            break;
        }
        cut[count++] = b;
        while (b < end && starts[b + 1] / 3 - first <= max_triangles)
            ++b;
    }
    if (st == VR_OK) {
        cut[count] = end;
        st = vr_parts_fill(out, ops, m, stream, starts, batches, cut, count);
    }
    free(cut);
    free(whole);
    if (st != VR_OK)
        vr_parts_free(out);
    return st;
}
