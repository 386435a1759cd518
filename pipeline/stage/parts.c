/* parts.c - a run's batches cut into parts of equal batch counts (parts.h). */
#define _POSIX_C_SOURCE 200809L /* pthreads: the shared batchings */
#include "pipeline/stage/parts.h"

#include <assert.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* The whole stream's batching of one mesh under one strategy and its limits: batch starts, and
 * for a plan the plan and its ordered index buffer. Streamed sort-last parts each cut the whole
 * stream and take their share, so without sharing N parts batched the mesh N times (a plan: N
 * builds and N plan-ordered copies of the index buffer). Shared by every vr_parts with the same
 * key, counted, freed with the last one; a mesh outlives the parts cut from it, so a live key
 * names one mesh. One lock, held while an entry is made: a rank's thread asking for what another
 * is making waits for it instead of making its own. */
typedef struct vr_batching_key {
    const uint32_t *indices;
    const float *positions;
    uint32_t index_count, vertex_count;
    vr_reuse_kind kind;
    uint32_t block_size, max_unique, max_indices, batch_indices;
    int patch_builder;
} vr_batching_key;
typedef struct vr_batching {
    vr_batching_key key;    /* zeroed padding and all: compared with memcmp */
    const uint32_t *stream; /* the indices, or plan_indices */
    uint32_t *whole;        /* batch starts unless a plan's own */
    uint32_t batches;
    uint32_t *plan_indices;
    vr_batch_plan plan;
    uint32_t users;
    struct vr_batching *next;
} vr_batching;
static vr_batching *vr_batchings;
static pthread_mutex_t vr_batching_lock = PTHREAD_MUTEX_INITIALIZER;

static void vr_batching_free(vr_batching *b)
{
    free(b->whole);
    free(b->plan_indices);
    vr_batch_plan_free(&b->plan);
    free(b);
}

static void vr_batching_let_go(vr_batching *b)
{
    if (!b)
        return;
    pthread_mutex_lock(&vr_batching_lock);
    if (--b->users == 0) {
        vr_batching **at = &vr_batchings;
        while (*at != b)
            at = &(*at)->next;
        *at = b->next;
        vr_batching_free(b);
    }
    pthread_mutex_unlock(&vr_batching_lock);
}

void vr_parts_free(vr_parts *p)
{
    if (!p)
        return;
    free(p->part);
    free(p->stream_batch);
    free(p->batch_first);
    free(p->starts);
    vr_batching_let_go(p->batching);
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

/* Batches the whole stream of `ops` on `m` into a new entry b (unlisted, users 0). */
static vr_status vr_batching_make(vr_batching *b, const vr_reuse_ops *ops, const vr_mesh *m,
                                  const vr_reuse_params *cfg)
{
    vr_status st;
    b->stream = m->indices;
    if (ops->dynamic) {
        st = vr_geometry_dyn_batches(&b->whole, &b->batches, m, cfg->max_unique,
                                     cfg->max_indices);
    } else if (ops->plan) {
        st = vr_geometry_plan(&b->plan, &b->plan_indices, ops, m, cfg->max_unique,
                              cfg->max_indices, cfg->patch_builder);
        if (st == VR_OK) {
            b->stream = b->plan_indices;
            b->batches = b->plan.batch_count;
        }
    } else {
        st = vr_parts_fixed_starts(&b->whole, &b->batches, ops, m->index_count, cfg);
    }
    return st;
}

/* The stream strategy `ops` reads on `m` (the index buffer, or a plan's ordered copy) and its
 * batch starts, from the shared batching `out` now holds (made here when nobody holds it). */
static vr_status vr_parts_stream(vr_parts *out, const uint32_t **stream, const uint32_t **starts,
                                 uint32_t *batches, const vr_reuse_ops *ops, const vr_mesh *m,
                                 const vr_reuse_params *cfg)
{
    vr_batching_key key;
    memset(&key, 0, sizeof key);
    key.indices = m->indices, key.positions = m->positions;
    key.index_count = m->index_count, key.vertex_count = m->vertex_count;
    key.kind = ops->kind, key.block_size = cfg->block_size;
    key.max_unique = cfg->max_unique, key.max_indices = cfg->max_indices;
    key.batch_indices = cfg->batch_indices, key.patch_builder = cfg->patch_builder;
    vr_status st = VR_OK;
    pthread_mutex_lock(&vr_batching_lock);
    vr_batching *b = vr_batchings;
    while (b && memcmp(&b->key, &key, sizeof key))
        b = b->next;
    if (!b) {
        if (!(b = calloc(1, sizeof *b))) {
            st = VR_ERROR(VR_ERR_OOM, "parts of %s: host struct", ops->name);
        } else {
            memcpy(&b->key, &key, sizeof key);
            if ((st = vr_batching_make(b, ops, m, cfg)) == VR_OK) {
                b->next = vr_batchings;
                vr_batchings = b;
            } else {
                vr_batching_free(b);
                b = NULL;
            }
        }
    }
    if (b)
        ++b->users;
    pthread_mutex_unlock(&vr_batching_lock);
    if (st != VR_OK)
        return st;
    out->batching = b;
    out->plan = b->plan;
    out->plan_indices = b->plan_indices;
    *stream = b->stream;
    *starts = ops->plan ? b->plan.starts : b->whole;
    *batches = b->batches;
    return VR_OK;
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
    const uint32_t *stream = NULL, *starts = NULL;
    uint32_t batches = 0, cut[VR_PARTS_MAX + 1];
    vr_status st = vr_parts_stream(out, &stream, &starts, &batches, ops, m, cfg);
    for (uint32_t k = 0; k <= count; ++k)
        cut[k] = (uint32_t)((uint64_t)batches * k / count);
    if (st == VR_OK)
        st = vr_parts_fill(out, ops, m, stream, starts, batches, cut, count);
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
    const uint32_t *stream = NULL, *starts = NULL;
    uint32_t batches = 0, *cut = NULL, count = 0;
    vr_status st = vr_parts_stream(out, &stream, &starts, &batches, ops, m, cfg);
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
    if (st != VR_OK)
        vr_parts_free(out);
    return st;
}
