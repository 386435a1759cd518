/* geometry_ref.c - the host half of pipeline/geometry.h: result buffers, dynamic batch starts,
 * static plans, running a strategy's CPU twin on a whole mesh and comparing two results. In a
 * build without CUDA it also provides the GPU entry points as stubs that report
 * VR_ERR_NO_DEVICE, so `vreuse bench` and the tests link and say why nothing ran.
 * Try: `vreuse_tests reuse/`, `vreuse_tests gpu/`.
 */
#include "pipeline/stage/geometry.h"

#include "pipeline/vr_mem.h"
#include "reuse/program.h" /* vr_program_batches */

#include <assert.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

vr_status vr_geometry_result_alloc(vr_geometry_result *r, uint32_t triangles,
                                   uint32_t vertex_count)
{
    assert(r);
    memset(r, 0, sizeof *r);
    r->triangles = triangles;
    r->vertex_count = vertex_count;
    r->queue.capacity = triangles;
    /* +1 keeps malloc(0) out of the picture for empty meshes */
    r->queue.clip = calloc((size_t)triangles * VR_QUEUE_CLIP_FLOATS + 1, sizeof(float));
    r->queue.normal = calloc((size_t)triangles * VR_QUEUE_NORMAL_FLOATS + 1, sizeof(float));
    r->queue.vertex = calloc((size_t)triangles * VR_QUEUE_VERTEX_IDS + 1, sizeof(uint32_t));
    r->queue.tri_id = calloc((size_t)triangles + 1, sizeof(uint32_t));
    r->shade_counts = calloc((size_t)vertex_count + 1, sizeof(uint32_t));
    if (!r->queue.clip || !r->queue.normal || !r->queue.vertex || !r->queue.tri_id ||
        !r->shade_counts) {
        vr_geometry_result_free(r);
        return VR_ERROR(VR_ERR_OOM, "host result for %u triangles, %u vertices (%.1f MiB)",
                        triangles, vertex_count,
                        ((double)triangles * VR_QUEUE_BYTES_PER_TRIANGLE +
                         (double)vertex_count * sizeof(uint32_t)) / 1048576.0);
    }
    return VR_OK;
}

void vr_geometry_result_free(vr_geometry_result *r)
{
    if (!r)
        return;
    void *const bufs[] = {r->queue.clip, r->queue.normal, r->queue.vertex, r->queue.tri_id,
                          r->shade_counts};
    vr_free_all(bufs, VR_COUNT_OF(bufs));
    memset(r, 0, sizeof *r);
}

vr_status vr_geometry_dyn_batches(uint32_t **starts, uint32_t *batch_count, const vr_mesh *m,
                                  uint32_t max_unique, uint32_t max_indices)
{
    assert(starts && batch_count && m);
    *starts = NULL;
    *batch_count = 0;
    if (max_unique < VR_NU_MIN || max_unique > VR_NU_MAX)
        return VR_ERROR(VR_ERR_ARG, "dynamic batches: N_u = %u must be in %u..%u", max_unique,
                        VR_NU_MIN, VR_NU_MAX);
    if (max_indices < VR_MAX_INDICES_MIN || max_indices > VR_MAX_INDICES_MAX ||
        max_indices % 3 != 0)
        return VR_ERROR(VR_ERR_ARG,
                        "dynamic batches: max_indices %u must be a multiple of 3 (whole "
                        "triangles) in %u..%u (the batchers' shared-memory bound)",
                        max_indices, VR_MAX_INDICES_MIN, VR_MAX_INDICES_MAX);
    return vr_program_batches(starts, batch_count, m->indices, m->index_count, 3,
                              m->vertex_count, max_unique, max_indices);
}

vr_status vr_geometry_plan_finish(vr_batch_plan *plan, uint32_t **indices, const vr_mesh *m,
                                  const char *who)
{
    /* part of building the plan: cluster culling's per-batch bounds */
    vr_status st = vr_batch_plan_bounds(plan, m->indices, m->positions);
    if (st == VR_OK && indices) {
        *indices = malloc(((size_t)m->index_count + 1) * sizeof **indices);
        if (*indices)
            vr_batch_plan_indices(*indices, plan, m->indices);
        else
            st = VR_ERROR(VR_ERR_OOM, "%s: plan-ordered copy of %u indices", who,
                          m->index_count);
    }
    if (st != VR_OK)
        vr_batch_plan_free(plan);
    return st;
}

vr_status vr_geometry_plan(vr_batch_plan *plan, uint32_t **indices, const vr_reuse_ops *ops,
                           const vr_mesh *m, uint32_t max_unique, uint32_t max_indices,
                           int patch_builder)
{
    assert(plan && ops && m);
    memset(plan, 0, sizeof *plan);
    if (indices)
        *indices = NULL;
    if (!ops->plan)
        return VR_ERROR(VR_ERR_ARG, "%s has no static plan (only patch and meshlet)", ops->name);
    vr_status st = ops->plan(plan, m, max_unique, max_indices, patch_builder);
    if (st != VR_OK) {
        vr_batch_plan_free(plan);
        return st;
    }
    return vr_geometry_plan_finish(plan, indices, m, ops->name);
}

vr_status vr_geometry_ref(vr_geometry_result *out, const vr_reuse_ops *ops, const vr_mesh *m,
                          const vr_reuse_params *cfg)
{
    return vr_geometry_ref_given(out, ops, m, cfg, NULL);
}

vr_status vr_geometry_ref_given(vr_geometry_result *out, const vr_reuse_ops *ops,
                                const vr_mesh *m, const vr_reuse_params *cfg,
                                const vr_batches_given *given)
{
    assert(out && ops && m && cfg);
    assert(out->triangles == m->index_count / 3 && out->vertex_count == m->vertex_count);
    vr_reuse_params p = vr_reuse_params_input(cfg, m->indices, m->index_count, m->positions,
                                              m->normals, m->vertex_count);
    p.queue = out->queue;
    p.counters = &out->counters;
    p.shade_counts = out->shade_counts;
    p.temp = NULL;
    p.stream = NULL;

    uint32_t *starts = NULL, *plan_indices = NULL;
    vr_batch_plan plan;
    memset(&plan, 0, sizeof plan);
    if (given && (ops->dynamic || ops->plan)) {
        /* a part of a larger stream: its batches are the whole stream's (plans: in plan order) */
        p.batch_starts = given->starts;
        p.batch_count = given->count;
        p.cluster_bounds = ops->plan ? given->bounds : NULL;
    } else if (ops->dynamic) {
        vr_status st = vr_geometry_dyn_batches(&starts, &p.batch_count, m, cfg->max_unique,
                                               cfg->max_indices);
        if (st != VR_OK)
            return st;
        p.batch_starts = starts;
    } else if (ops->plan) {
        vr_status st = vr_geometry_plan(&plan, &plan_indices, ops, m, cfg->max_unique,
                                        cfg->max_indices, cfg->patch_builder);
        if (st != VR_OK)
            return st;
        p.indices = plan_indices;
        p.tri_ids = plan.tri_order;
        p.cluster_bounds = plan.bounds;
        p.batch_starts = plan.starts;
        p.batch_count = plan.batch_count;
    }
    size_t temp_bytes = ops->temp_bytes(&p);
    if (temp_bytes) {
        p.temp = malloc(temp_bytes);
        if (!p.temp) {
            free(starts);
            free(plan_indices);
            vr_batch_plan_free(&plan);
            return VR_ERROR(VR_ERR_OOM, "%s ref: %zu bytes of workspace", ops->name, temp_bytes);
        }
    }
    memset(&out->counters, 0, sizeof out->counters);
    memset(out->shade_counts, 0, (size_t)m->vertex_count * sizeof(uint32_t));
    size_t t = out->triangles;
    memset(out->queue.clip, 0xff, t * VR_QUEUE_CLIP_FLOATS * sizeof(float));
    memset(out->queue.normal, 0xff, t * VR_QUEUE_NORMAL_FLOATS * sizeof(float));
    memset(out->queue.vertex, 0xff, t * VR_QUEUE_VERTEX_IDS * sizeof(uint32_t));
    memset(out->queue.tri_id, 0xff, t * sizeof(uint32_t));

    vr_status st = ops->ref(&p);
    free(p.temp);
    free(starts);
    free(plan_indices);
    vr_batch_plan_free(&plan);
    return st;
}

/* ---- comparison -------------------------------------------------------------------------- */

static float vr_max_abs(const float *v, size_t n)
{
    float m = 0.0f;
    for (size_t i = 0; i < n; ++i)
        if (fabsf(v[i]) > m)
            m = fabsf(v[i]);
    return m;
}

typedef struct vr_cmp {
    vr_geometry_diff *d;
    FILE *log;
    const char *what;
    double clip_scale, normal_scale;
} vr_cmp;

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void vr_cmp_report(vr_cmp *c, const char *fmt, ...)
{
    if (c->log && c->d->mismatches < 5) {
        va_list ap;
        va_start(ap, fmt);
        fprintf(c->log, "%s: ", c->what);
        vfprintf(c->log, fmt, ap);
        fputc('\n', c->log);
        va_end(ap);
    }
    ++c->d->mismatches;
}

/* Compares slot gs of `got` with slot ws of `want` (the same triangle). */
static void vr_cmp_slot(vr_cmp *c, const vr_geometry_result *got, uint32_t gs,
                        const vr_geometry_result *want, uint32_t ws)
{
    const vr_queue *g = &got->queue, *w = &want->queue;
    ++c->d->compared;
    if (g->tri_id[gs] != w->tri_id[ws]) {
        vr_cmp_report(c, "slot %u: triangle id %u, want %u", gs, g->tri_id[gs], w->tri_id[ws]);
        return;
    }
    for (int k = 0; k < 3; ++k)
        if (g->vertex[3 * (size_t)gs + k] != w->vertex[3 * (size_t)ws + k]) {
            vr_cmp_report(c, "slot %u (triangle %u) corner %d: vertex %u, want %u", gs,
                          g->tri_id[gs], k, g->vertex[3 * (size_t)gs + k],
                          w->vertex[3 * (size_t)ws + k]);
            return;
        }
    for (int a = 0; a < 2; ++a) {
        const float *gv = (a ? g->normal : g->clip) + 12 * (size_t)gs;
        const float *wv = (a ? w->normal : w->clip) + 12 * (size_t)ws;
        double scale = a ? c->normal_scale : c->clip_scale;
        double tol = VR_GEOMETRY_REL_TOL * scale;
        for (int i = 0; i < 12; ++i) {
            double e = fabs((double)gv[i] - (double)wv[i]);
            /* NaN (a poisoned slot) fails both tests below */
            if (!(e <= tol) || (a && i % 4 == 3 && gv[i] != 0.0f)) {
                vr_cmp_report(c, "slot %u (triangle %u) %s[%d][%d] = %.9g, want %.9g", gs,
                              g->tri_id[gs], a ? "normal" : "clip", i / 4, i % 4, gv[i], wv[i]);
                return;
            }
            if (e > c->d->max_abs)
                c->d->max_abs = e;
            if (scale > 0 && e / scale > c->d->max_rel)
                c->d->max_rel = e / scale;
        }
    }
}

/* 1 when rounding differences (GPU FMA contraction, a few ulps) could flip vr_cull_triangle
 * for the triangle with clip positions c[0..11]: a vertex within a relative 1e-5 of a clip
 * plane or of w = 0, or a screen-space area within the error bound of its computation. Such a
 * triangle may be kept on one side and culled on the other; everything else must agree. */
static int vr_cull_borderline(const float *c)
{
    const double tol = 1e-5;
    double sx[3], sy[3];
    for (int k = 0; k < 3; ++k) {
        const double w = c[4 * k + 3];
        for (int axis = 0; axis < 3; ++axis) {
            const double x = c[4 * k + axis];
            if (fabs(x - w) <= tol * (fabs(x) + fabs(w)) || fabs(x + w) <= tol * (fabs(x) + fabs(w)))
                return 1;
        }
        if (fabs(w) <= tol * (fabs(c[4 * k]) + fabs(c[4 * k + 1]) + fabs(c[4 * k + 2])) ||
            w == 0.0)
            return 1;
        sx[k] = c[4 * k] / w;
        sy[k] = c[4 * k + 1] / w;
    }
    const double area2 = (sx[1] - sx[0]) * (sy[2] - sy[0]) - (sx[2] - sx[0]) * (sy[1] - sy[0]);
    const double bound =
        tol * ((fabs(sx[0]) + fabs(sx[1])) * fabs(sy[2] - sy[0]) +
               (fabs(sy[0]) + fabs(sy[2])) * fabs(sx[1] - sx[0]) +
               (fabs(sx[0]) + fabs(sx[2])) * fabs(sy[1] - sy[0]) +
               (fabs(sy[0]) + fabs(sy[1])) * fabs(sx[2] - sx[0]));
    return fabs(area2) <= bound;
}

vr_compare_mode vr_geometry_compare_mode(const vr_reuse_params *cfg)
{
    if (!cfg->cull)
        return VR_COMPARE_ALL;
    switch (cfg->queue_mode) {
    case VR_QUEUE_INK: /* in the kernel, in stream order */
    case VR_QUEUE_CUB: /* staged at slot = stream position, compacted in order */
    case VR_QUEUE_HP:
        return VR_COMPARE_KEPT_ORDER;
    default:
        return VR_COMPARE_KEPT_SET;
    }
}

/* ---- culled queues ---------------------------------------------------------------------- */

/* A triangle kept on one side only: borderline (counted), or a mismatch. */
static void vr_cmp_one_side(vr_cmp *c, const float *clip, uint32_t t, uint32_t s, int got_side)
{
    if (vr_cull_borderline(clip))
        ++c->d->borderline;
    else if (got_side)
        vr_cmp_report(c, "slot %u: triangle %u kept, the reference culled it", s, t);
    else
        vr_cmp_report(c, "triangle %u culled, the reference kept it (its slot %u)", t, s);
}

/* Culled queues: map each kept triangle id to its reference slot, then find every GPU slot's
 * triangle there exactly once; a triangle kept on one side only must be borderline. `ordered`
 * (queue mode ink) also asks that the common triangles come in the reference's order. That
 * order is the order of the stream the batcher read: source ids increasing for the
 * order-dependent strategies, the plan's order for patch and meshlet (whose tri_ids are a
 * permutation), so it is taken from the reference rather than from the ids. Without borderline
 * triangles this is slot-by-slot equality. */
static void vr_compare_kept(vr_cmp *c, const vr_geometry_result *got, uint32_t gn,
                            const vr_geometry_result *want, uint32_t wn, int ordered)
{
    const uint32_t tris = want->triangles;
    uint32_t *want_slot = malloc(((size_t)tris + 1) * sizeof *want_slot);
    uint8_t *seen = calloc((size_t)tris + 1, 1);
    if (!want_slot || !seen) {
        free(want_slot);
        free(seen);
        vr_cmp_report(c, "out of host memory for the comparison");
        return;
    }
    memset(want_slot, 0xff, ((size_t)tris + 1) * sizeof *want_slot);
    for (uint32_t s = 0; s < wn; ++s) {
        uint32_t t = want->queue.tri_id[s];
        if (t >= tris || want_slot[t] != 0xffffffffu)
            vr_cmp_report(c, "reference slot %u: bad or repeated triangle id %u", s, t);
        else
            want_slot[t] = s;
    }
    int64_t prev = -1; /* reference slot of the previous common triangle */
    for (uint32_t s = 0; s < gn; ++s) {
        uint32_t t = got->queue.tri_id[s];
        if (t >= tris) {
            vr_cmp_report(c, "slot %u: triangle id %u out of range", s, t);
        } else if (seen[t]++) {
            vr_cmp_report(c, "slot %u: triangle %u emitted twice", s, t);
        } else if (want_slot[t] != 0xffffffffu) {
            if (ordered && (int64_t)want_slot[t] <= prev) {
                vr_cmp_report(c, "slot %u: triangle %u not in input order (reference slot %u, "
                              "after reference slot %lld)", s, t, want_slot[t], (long long)prev);
                break; /* the rest of the walk would only repeat it */
            }
            prev = want_slot[t];
            vr_cmp_slot(c, got, s, want, want_slot[t]);
        } else {
            vr_cmp_one_side(c, got->queue.clip + 12 * (size_t)s, t, s, 1);
        }
    }
    for (uint32_t s = 0; s < wn; ++s) {
        uint32_t t = want->queue.tri_id[s];
        if (t < tris && !seen[t])
            vr_cmp_one_side(c, want->queue.clip + 12 * (size_t)s, t, s, 0);
    }
    free(want_slot);
    free(seen);
}

uint64_t vr_geometry_compare(vr_geometry_diff *d, const vr_geometry_result *got,
                             const vr_geometry_result *want, int cull, int count, FILE *log,
                             const char *what)
{
    assert(d && got && want && what);
    assert(got->triangles == want->triangles && got->vertex_count == want->vertex_count);
    memset(d, 0, sizeof *d);
    const uint32_t tris = want->triangles;
    vr_cmp c = {d, log, what, vr_max_abs(want->queue.clip, (size_t)tris * VR_QUEUE_CLIP_FLOATS),
                vr_max_abs(want->queue.normal, (size_t)tris * VR_QUEUE_NORMAL_FLOATS)};
    const vr_counters *gc = &got->counters, *wc = &want->counters;
    /* with culling, borderline triangles may legitimately change the count (checked below) */
    if (!cull && gc->queue_count != wc->queue_count)
        vr_cmp_report(&c, "queue_count %u, want %u", gc->queue_count, wc->queue_count);
    if (gc->overflow != wc->overflow)
        vr_cmp_report(&c, "overflow %u, want %u", gc->overflow, wc->overflow);
    if (count) {
        if (gc->invocations != wc->invocations)
            vr_cmp_report(&c, "invocations %llu, want %llu", gc->invocations, wc->invocations);
        for (uint32_t v = 0; v < want->vertex_count; ++v)
            if (got->shade_counts[v] != want->shade_counts[v])
                vr_cmp_report(&c, "vertex %u shaded %u times, want %u", v, got->shade_counts[v],
                              want->shade_counts[v]);
    }
    if (!cull) { /* slot = stream position on both sides: slot by slot, tri_id included */
        for (uint32_t s = 0; s < tris; ++s) {
            if (want->queue.tri_id[s] >= tris)
                vr_cmp_report(&c, "reference slot %u holds triangle %u of %u", s,
                              want->queue.tri_id[s], tris);
            else
                vr_cmp_slot(&c, got, s, want, s);
        }
        return d->mismatches;
    }

    uint32_t wn = wc->queue_count < want->queue.capacity ? wc->queue_count : want->queue.capacity;
    uint32_t gn = gc->queue_count < got->queue.capacity ? gc->queue_count : got->queue.capacity;
    vr_compare_kept(&c, got, gn, want, wn, cull == VR_COMPARE_KEPT_ORDER);
    if (gn != gc->queue_count || wn != wc->queue_count)
        vr_cmp_report(&c, "queue_count %u / reference %u with %u slots (overflow %u / %u)",
                      gc->queue_count, wc->queue_count, got->queue.capacity, gc->overflow,
                      wc->overflow);
    for (int r = VR_CULL_KEPT + 1; r < VR_CULL_REASON_COUNT; ++r) {
        const uint32_t g = gc->culled[r], w = wc->culled[r];
        if ((g > w ? g - w : w - g) > d->borderline)
            vr_cmp_report(&c, "culled for reason %d: %u, want %u (borderline %llu)", r, g, w,
                          (unsigned long long)d->borderline);
    }
    return d->mismatches;
}

/* ---- stubs of the GPU half when built without CUDA ------------------------------------------ */
#ifndef VR_HAVE_CUDA
int vr_gpu_available(void) { return 0; }

const char *vr_gpu_device_name(void)
{
    return VR_NO_CUDA_BUILD;
}

vr_status vr_gpu_device_info(int *driver_version, int *runtime_version, int *sm_count,
                             int *clock_khz)
{
    (void)driver_version, (void)runtime_version, (void)sm_count, (void)clock_khz;
    return VR_ERROR(VR_ERR_NO_DEVICE, "%s", vr_gpu_device_name());
}

vr_status vr_gpu_shape_query(vr_gpu_shape *out)
{
    (void)out;
    return VR_ERROR(VR_ERR_NO_DEVICE, "%s", vr_gpu_device_name());
}

vr_status vr_gpu_copy_bandwidth(double *bytes_per_second)
{
    *bytes_per_second = 0;
    return VR_ERROR(VR_ERR_NO_DEVICE, "%s", vr_gpu_device_name());
}

vr_status vr_geometry_create(vr_geometry **out, const vr_mesh *m)
{
    (void)m;
    *out = NULL;
    return VR_ERROR(VR_ERR_NO_DEVICE, "%s", vr_gpu_device_name());
}

vr_status vr_geometry_create_sharing(vr_geometry **out, const vr_mesh *m,
                                     const vr_geometry *owner)
{
    (void)owner;
    return vr_geometry_create(out, m);
}

void vr_geometry_destroy(vr_geometry *g) { (void)g; }

vr_status vr_geometry_plan_batch_ids(vr_geometry *g, const vr_reuse_ops *ops,
                                     const vr_reuse_params *cfg, uint32_t *ids,
                                     uint32_t *batch_count)
{
    (void)g, (void)ops, (void)cfg, (void)ids;
    *batch_count = 0;
    return VR_ERROR(VR_ERR_NO_DEVICE, "%s", vr_gpu_device_name());
}

void vr_geometry_set_device_indices(vr_geometry *g, const uint32_t *d_indices)
{
    (void)g, (void)d_indices;
}

vr_status vr_geometry_set_batches(vr_geometry *g, const vr_batches_given *given)
{
    (void)g, (void)given;
    return VR_ERROR(VR_ERR_NO_DEVICE, "%s", vr_gpu_device_name());
}

vr_status vr_gpu_h2d_bandwidth(double *bytes_per_second)
{
    *bytes_per_second = 0;
    return VR_ERROR(VR_ERR_NO_DEVICE, "%s", vr_gpu_device_name());
}

vr_status vr_geometry_prepare(vr_geometry *g, const vr_reuse_ops *ops, const vr_reuse_params *cfg)
{
    (void)g, (void)ops, (void)cfg;
    return VR_ERROR(VR_ERR_NO_DEVICE, "%s", vr_gpu_device_name());
}

vr_status vr_geometry_enqueue(vr_geometry *g, const vr_reuse_ops *ops, const vr_reuse_params *cfg,
                              void *stream)
{
    (void)g, (void)ops, (void)cfg, (void)stream;
    return VR_ERROR(VR_ERR_NO_DEVICE, "%s", vr_gpu_device_name());
}

vr_status vr_geometry_create_bounded(vr_geometry **out, uint32_t max_triangles)
{
    (void)max_triangles;
    *out = NULL;
    return VR_ERROR(VR_ERR_NO_DEVICE, "%s", vr_gpu_device_name());
}

vr_status vr_geometry_run_chunk(vr_geometry *g, const vr_reuse_ops *ops,
                                const vr_reuse_params *cfg, const vr_geometry_chunk *c,
                                void *stream)
{
    (void)g, (void)ops, (void)cfg, (void)c, (void)stream;
    return VR_ERROR(VR_ERR_NO_DEVICE, "%s", vr_gpu_device_name());
}

vr_status vr_geometry_tally_reset(vr_geometry *g, void *stream)
{
    (void)g, (void)stream;
    return VR_ERROR(VR_ERR_NO_DEVICE, "%s", vr_gpu_device_name());
}

vr_status vr_geometry_tally_read(vr_geometry *g, vr_geometry_tally *out, void *stream)
{
    (void)g, (void)stream;
    memset(out, 0, sizeof *out);
    return VR_ERROR(VR_ERR_NO_DEVICE, "%s", vr_gpu_device_name());
}

size_t vr_geometry_device_bytes(const vr_geometry *g)
{
    (void)g;
    return 0;
}

const struct vr_gts_batch_source *vr_geometry_gts_source(const vr_geometry *g)
{
    (void)g;
    return NULL;
}

vr_status vr_geometry_set_gts(vr_geometry *g, const struct vr_gts *gts)
{
    (void)g, (void)gts;
    return VR_ERROR(VR_ERR_NO_DEVICE, "%s", vr_gpu_device_name());
}

const vr_queue *vr_geometry_device_queue(const vr_geometry *g)
{
    (void)g;
    return NULL;
}

const uint32_t *vr_geometry_device_shade_counts(const vr_geometry *g)
{
    (void)g;
    return NULL;
}

vr_status vr_geometry_run(vr_geometry *g, const vr_reuse_ops *ops, const vr_reuse_params *cfg,
                          int poison, float *ms)
{
    (void)g, (void)ops, (void)cfg, (void)poison, (void)ms;
    return VR_ERROR(VR_ERR_NO_DEVICE, "%s", vr_gpu_device_name());
}

vr_status vr_geometry_download(const vr_geometry *g, vr_geometry_result *out)
{
    (void)g, (void)out;
    return VR_ERROR(VR_ERR_NO_DEVICE, "%s", vr_gpu_device_name());
}
#endif
