/* render.c - the frame driver behind `vreuse render` and `vreuse view`: camera -> geometry stage
 * (any reuse/ strategy, GPU through pipeline/geometry.h or its CPU twin) -> rasterizer ->
 * resolve. On the CPU it runs the twins end to end; on the GPU it times the strategy with
 * counting off and runs it once more with counting on when the counts are not cached yet.
 * Try: `vreuse render sphere --strategy hash --heatmap --out s.png`.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include "raster.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../pipeline/geometry.h"

struct vr_renderer {
    const vr_mesh *mesh;
    int gpu;
    vr_geometry_result result;      /* host queue, counters, shade counts of the last frame */
    uint64_t *vis;                  /* CPU path: vis_capacity words */
    size_t vis_capacity;
    uint32_t *batch_ids;            /* triangles: batch of each triangle for batch_kind */
    int batch_kind;                 /* strategy kind batch_ids belongs to, -1: none */
    uint32_t batch_count;
    /* GPU path */
    vr_geometry *geometry;          /* mesh upload + strategy buffers */
    vr_raster_device *device;       /* queue copy, vis buffer, image */
    int counts_kind;                /* strategy kind whose shade counts the device holds, -1
                                       (counts depend on the strategy and mesh only) */
    uint64_t counts_invocations;
};

static double vr_now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

void vr_renderer_destroy(vr_renderer *r)
{
    if (!r)
        return;
    vr_geometry_result_free(&r->result);
    free(r->vis);
    free(r->batch_ids);
    vr_geometry_destroy(r->geometry);
    vr_raster_device_destroy(r->device);
    free(r);
}

vr_status vr_renderer_create(vr_renderer **out, const vr_mesh *m, int use_gpu)
{
    assert(out && m);
    *out = NULL;
    vr_status st = vr_mesh_validate(m, "render");
    if (st != VR_OK)
        return st;
    vr_renderer *r = calloc(1, sizeof *r);
    if (!r)
        return VR_ERROR(VR_ERR_OOM, "renderer: host struct");
    r->mesh = m;
    r->gpu = use_gpu != 0;
    r->batch_kind = -1;
    r->counts_kind = -1;
    const uint32_t tris = m->index_count / 3;
    st = vr_geometry_result_alloc(&r->result, tris, m->vertex_count);
    if (st == VR_OK) {
        r->batch_ids = malloc(((size_t)tris + 1) * sizeof *r->batch_ids);
        if (!r->batch_ids)
            st = VR_ERROR(VR_ERR_OOM, "renderer: batch ids for %u triangles", tris);
    }
    if (st == VR_OK && r->gpu)
        st = vr_geometry_create(&r->geometry, m);
    if (st == VR_OK && r->gpu)
        st = vr_raster_device_create(&r->device, tris, m->vertex_count);
    if (st != VR_OK) {
        vr_renderer_destroy(r);
        return st;
    }
    *out = r;
    return VR_OK;
}

vr_status vr_render_batch_ids(uint32_t *ids, uint32_t *batch_count, const vr_reuse_ops *ops,
                              const vr_mesh *m, const vr_reuse_params *cfg)
{
    assert(ids && batch_count && ops && m && cfg);
    const uint32_t tris = m->index_count / 3;
    *batch_count = 0;
    if (ops->dynamic) {
        uint32_t *starts = NULL, n = 0;
        vr_status st = vr_geometry_batches(&starts, &n, m, cfg->max_unique);
        if (st != VR_OK)
            return st;
        for (uint32_t b = 0; b < n; ++b)
            for (uint32_t t = starts[b] / 3; t < starts[b + 1] / 3 && t < tris; ++t)
                ids[t] = b;
        free(starts);
        *batch_count = n;
        return VR_OK;
    }
    /* warp: the static batches one warp works through; the others: one thread per triangle
     * (naive) or per assembled triangle (multi), so a batch is a thread block */
    uint32_t per = ops->kind == VR_REUSE_WARP ? cfg->batch_indices / 3 : cfg->block_size;
    if (per == 0)
        return VR_ERROR(VR_ERR_ARG, "batch ids for %s: batch of 0 triangles", ops->name);
    for (uint32_t t = 0; t < tris; ++t)
        ids[t] = t / per;
    *batch_count = tris ? (tris - 1) / per + 1 : 0;
    return VR_OK;
}

/* The geometry stage on the GPU, counting only when the counts are not cached. */
static vr_status vr_render_geometry_gpu(vr_renderer *r, const vr_render_options *o,
                                        const vr_reuse_params *cfg, vr_render_stats *st)
{
    float ms = 0;
    vr_reuse_params timed = *cfg;
    timed.count = 0;
    vr_status s = vr_geometry_run(r->geometry, o->strategy, &timed, 0, &ms);
    if (s != VR_OK)
        return s;
    st->geometry_ms = ms;
    const int need_counts = r->counts_kind != (int)o->strategy->kind;
    if (need_counts) {
        vr_reuse_params counted = *cfg;
        counted.count = 1;
        if ((s = vr_geometry_run(r->geometry, o->strategy, &counted, 0, NULL)) != VR_OK)
            return s;
    }
    /* PLUG: the queue takes a round trip through host memory because pipeline/geometry.h does
     * not expose the context's device queue yet. Once it does, pass that vr_queue to
     * vr_raster_device_draw (its d_q argument) and upload only the shade counts. */
    const double t0 = vr_now_ms();
    if ((s = vr_geometry_download(r->geometry, &r->result)) != VR_OK)
        return s;
    if (need_counts) {
        r->counts_kind = (int)o->strategy->kind;
        r->counts_invocations = r->result.counters.invocations;
    }
    const uint32_t n = r->result.counters.queue_count;
    s = vr_raster_device_upload(r->device, &r->result.queue, n,
                                need_counts ? r->result.shade_counts : NULL, NULL, 0,
                                &st->raster);
    st->transfer_ms = vr_now_ms() - t0;
    st->invocations = r->counts_invocations;
    return s;
}

vr_status vr_renderer_draw(vr_renderer *r, uint8_t *rgba, const vr_render_options *o,
                           vr_render_stats *stats)
{
    assert(r && rgba && o && o->strategy);
    vr_render_stats local;
    vr_render_stats *st = stats ? stats : &local;
    memset(st, 0, sizeof *st);
    st->gpu = r->gpu;
    vr_status s = vr_raster_config_check(&o->raster);
    if (s != VR_OK)
        return s;
    const vr_mesh *m = r->mesh;
    const uint32_t tris = m->index_count / 3;

    vr_reuse_params cfg = vr_reuse_params_default();
    vr_camera_shader(&cfg.shader, &o->camera, o->raster.width, o->raster.height);
    cfg.shader.loop_iterations = o->loop_iterations;
    cfg.count = 1;

    /* batch ids depend on the strategy only (not on the camera): recomputed when it changes */
    if (r->batch_kind != (int)o->strategy->kind) {
        if ((s = vr_render_batch_ids(r->batch_ids, &r->batch_count, o->strategy, m, &cfg)) !=
            VR_OK)
            return s;
        r->batch_kind = (int)o->strategy->kind;
        if (r->gpu && (s = vr_raster_device_upload(r->device, &r->result.queue, 0, NULL,
                                                   r->batch_ids, tris, NULL)) != VR_OK)
            return s;
    }
    vr_resolve_params shade = o->shade;
    shade.mode = o->mode;

    if (r->gpu) {
        if ((s = vr_render_geometry_gpu(r, o, &cfg, st)) != VR_OK)
            return s;
        st->triangles = r->result.counters.queue_count;
        s = vr_raster_device_draw(r->device, rgba, NULL, NULL, st->triangles, &o->raster, &shade,
                                  &st->raster);
    } else {
        const double t0 = vr_now_ms();
        if ((s = vr_geometry_ref(&r->result, o->strategy, m, &cfg)) != VR_OK)
            return s;
        st->geometry_ms = vr_now_ms() - t0;
        st->invocations = r->result.counters.invocations;
        st->triangles = r->result.counters.queue_count;
        const size_t pixels = (size_t)o->raster.width * o->raster.height;
        if (pixels > r->vis_capacity) {
            free(r->vis);
            r->vis_capacity = 0;
            if (!(r->vis = malloc(pixels * sizeof *r->vis)))
                return VR_ERROR(VR_ERR_OOM, "renderer: %ux%u visibility buffer",
                                o->raster.width, o->raster.height);
            r->vis_capacity = pixels;
        }
        shade.shade_counts = r->result.shade_counts;
        shade.vertex_count = m->vertex_count;
        shade.tri_batch = r->batch_kind >= 0 ? r->batch_ids : NULL;
        shade.tri_batch_count = r->batch_kind >= 0 ? tris : 0;
        if ((s = vr_raster_ref(r->vis, &r->result.queue, st->triangles, &o->raster,
                               &st->raster)) != VR_OK)
            return s;
        s = vr_resolve_ref(rgba, r->vis, &r->result.queue, st->triangles, &o->raster, &shade,
                           &st->raster.resolve_ms);
    }
    st->batches = r->batch_count;
    st->shaded_per_tri = st->triangles ? (double)st->invocations / st->triangles : 0;
    st->reuse = st->triangles ? 1.0 - (double)st->invocations / (3.0 * st->triangles) : 0;
    return s;
}
