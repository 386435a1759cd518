/* sortlast.c - sort-last rendering over parts of the batch stream (sortlast.h, raster.h's
 * vr_renderer_set_parts): per part the geometry stage and the rasterizer into its own visibility
 * buffer, words carrying stream positions (vr_raster_config.slot_base); compositing by minimum;
 * each part resolves the pixels its triangles won (vr_resolve_params.part) and the images are
 * composited by maximum (every pixel has exactly one non-zero contributor: its winning part, or
 * part 0 for the background). The CPU twin does the same with loops, so a CPU test proves the
 * cut, the words and the compositing on any machine; the GPU adds only the transport.
 */
#define _POSIX_C_SOURCE 200809L /* pthreads */
#include "raster/sortlast.h"

#include <assert.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/stage/geometry.h"
#include "pipeline/stage/parts.h"
#include "raster/raster_common.h"
#include "raster/stream.h"
#ifdef VR_HAVE_CUDA
#include "raster/sortlast_dev.h"
#endif

const char *const vr_composite_names[VR_COMPOSITE_COUNT] = {"local", "nccl"};

typedef struct vr_sl_part {
    const vr_part *cut; /* in s->parts */
    uint32_t tris;      /* its triangles */
    int device;
    vr_stream *stream;  /* streamed parts: its share in chunks, else NULL */
    vr_render_stats streamed; /* streamed parts: its stream's last frame */
    uint64_t *d_least;  /* streamed parts over NCCL: the all-reduced minimum words */
    size_t least_capacity; /* pixels */
    /* CPU twin */
    vr_geometry_result result;
    uint64_t *vis;      /* pixel_capacity words (part 0: the composite) */
    uint8_t *rgba;      /* 4 * pixel_capacity bytes */
    /* GPU */
    vr_geometry *geometry; /* NULL for an empty part */
    vr_geometry_result counted; /* the counted run's download (counters, shade counts) */
    vr_raster_frame frame;
    void *timer;        /* vr_sl_timer: the compositing */
    void *d_counters;   /* 2 words: the counters' all-reduce */
    /* this frame */
    vr_status status;
    char error[512];
    double geometry_ms, composite_ms, composite_vis_ms;
    vr_raster_stats raster;
    uint64_t counters[2]; /* counted run: invocations, queue length */
} vr_sl_part;

struct vr_sortlast {
    const vr_mesh *mesh;
    size_t last_pixels;     /* pixels of the last frame drawn, 0 before */
    uint32_t count;
    int gpu;
    vr_composite how;
    vr_sl_part *p;          /* count */
    vr_parts parts;         /* the cut of cut_kind under cut_limits / cut_builder */
    int cut_kind, cut_builder, counted;
    int streamed;           /* each part streams its share (vr_sortlast_create_streamed) */
    vr_batch_limits cut_limits;
    uint64_t invocations;   /* summed over the parts (the last counted run) */
    uint32_t *shade_counts; /* CPU: summed over the parts, vertex_count */
    size_t pixel_capacity;
    void *nccl;             /* vr_nccl */
    /* the NCCL frame's meeting point after the ranks' local work (sortlast.h) */
    pthread_mutex_t lock;
    pthread_cond_t met;
    uint32_t arrived, expected, generation;
    int sync_made, failed;
    /* this frame's arguments, for the threads */
    const vr_render_options *o;
    const vr_reuse_params *cfg;
    const vr_resolve_params *shade;
};

#ifdef VR_HAVE_CUDA /* only the GPU parts run on threads of their own */
/* Keeps a part's failure (the message is thread-local) for the calling thread. */
static vr_status vr_sl_keep(vr_sl_part *p, vr_status st)
{
    if (st != VR_OK && p->status == VR_OK) {
        p->status = st;
        snprintf(p->error, sizeof p->error, "%s", vr_last_error());
    }
    return st;
}
#endif

static void vr_sl_part_free(vr_sortlast *s, vr_sl_part *p)
{
    vr_geometry_result_free(&p->result);
    vr_geometry_result_free(&p->counted);
    free(p->vis);
    free(p->rgba);
    p->vis = NULL, p->rgba = NULL;
#ifdef VR_HAVE_CUDA
    if (s->gpu) {
        vr_sl_set_device(p->device); /* teardown: a failure leaves nothing to act on */
        vr_geometry_destroy(p->geometry);
        vr_raster_frame_free(&p->frame);
        vr_sl_timer_destroy((vr_sl_timer *)p->timer);
        vr_sl_free(p->d_counters);
        vr_sl_free(p->d_least);
    }
#else
    (void)s;
#endif
    p->geometry = NULL, p->timer = NULL, p->d_counters = NULL, p->d_least = NULL;
    p->least_capacity = 0;
}

/* The caller's current device, restored when a call that switched devices returns (the
 * renderer the caller holds next to this one lives on it). */
static int vr_sl_device_save(int gpu)
{
    int d = -1;
#ifdef VR_HAVE_CUDA
    if (gpu && vr_sl_get_device(&d) != VR_OK)
        d = -1;
#else
    (void)gpu;
#endif
    return d;
}

static void vr_sl_device_restore(int d)
{
#ifdef VR_HAVE_CUDA
    if (d >= 0)
        vr_sl_set_device(d); /* it was current a moment ago: nothing new can fail here */
#else
    (void)d;
#endif
}

void vr_sortlast_destroy(vr_sortlast *s)
{
    if (!s)
        return;
    const int saved = vr_sl_device_save(s->gpu);
    for (uint32_t k = s->count; s->p && k-- > 0;) { /* the sharers before their owner */
        vr_sl_part_free(s, &s->p[k]);
        vr_stream_destroy(s->p[k].stream);
    }
#ifdef VR_HAVE_CUDA
    vr_nccl_destroy((vr_nccl *)s->nccl);
#endif
    if (s->sync_made) {
        pthread_cond_destroy(&s->met);
        pthread_mutex_destroy(&s->lock);
    }
    vr_parts_free(&s->parts);
    free(s->shade_counts);
    free(s->p);
    free(s);
    vr_sl_device_restore(saved);
}

vr_status vr_sortlast_create(vr_sortlast **out, const vr_mesh *m, uint32_t parts, int gpu,
                             vr_composite how)
{
    assert(out && m);
    *out = NULL;
    if (parts == 0 || parts > VR_PARTS_MAX)
        return VR_ERROR(VR_ERR_ARG, "sort-last: %u parts (1..%u)", parts, VR_PARTS_MAX);
    if ((unsigned)how >= VR_COMPOSITE_COUNT)
        return VR_ERROR(VR_ERR_ARG, "sort-last: unknown compositing %d", (int)how);
    if (how == VR_COMPOSITE_NCCL && !gpu)
        return VR_ERROR(VR_ERR_ARG, "sort-last over NCCL needs the GPU renderer (not --cpu)");
    vr_sortlast *s = calloc(1, sizeof *s);
    if (!s || !(s->p = calloc(parts, sizeof *s->p)) ||
        !(s->shade_counts = malloc(((size_t)m->vertex_count + 1) * sizeof *s->shade_counts))) {
        vr_sortlast_destroy(s);
        return VR_ERROR(VR_ERR_OOM, "sort-last: %u parts", parts);
    }
    s->mesh = m;
    s->count = parts;
    s->gpu = gpu != 0;
    s->how = how;
    s->cut_kind = -1;
    vr_status st = VR_OK;
    const int saved = vr_sl_device_save(s->gpu);
#ifdef VR_HAVE_CUDA
    if (s->gpu) {
        int devices = 0, current = 0;
        st = vr_sl_device_count(&devices);
        if (st == VR_OK && how == VR_COMPOSITE_NCCL && (uint32_t)devices < parts)
            st = VR_ERROR(VR_ERR_ARG, "--gpus %u: this machine has %d CUDA device%s", parts,
                          devices, devices == 1 ? "" : "s");
        if (st == VR_OK && how == VR_COMPOSITE_LOCAL)
            st = vr_sl_get_device(&current);
        for (uint32_t k = 0; k < parts; ++k)
            s->p[k].device = how == VR_COMPOSITE_NCCL ? (int)k : current;
        if (st == VR_OK && how == VR_COMPOSITE_NCCL) {
            int devs[VR_PARTS_MAX];
            for (uint32_t k = 0; k < parts; ++k)
                devs[k] = (int)k;
            st = vr_nccl_create((vr_nccl **)&s->nccl, (int)parts, devs, NULL);
        }
    }
#else
    if (s->gpu)
        st = VR_ERROR(VR_ERR_NO_DEVICE, "sort-last: built without CUDA");
#endif
    if (st == VR_OK && pthread_mutex_init(&s->lock, NULL) != 0)
        st = VR_ERROR(VR_ERR_OOM, "sort-last: a mutex");
    if (st == VR_OK && pthread_cond_init(&s->met, NULL) != 0) {
        pthread_mutex_destroy(&s->lock);
        st = VR_ERROR(VR_ERR_OOM, "sort-last: a condition variable");
    } else if (st == VR_OK) {
        s->sync_made = 1;
    }
    vr_sl_device_restore(saved);
    if (st != VR_OK) {
        vr_sortlast_destroy(s);
        return st;
    }
    *out = s;
    return VR_OK;
}

vr_status vr_sortlast_create_streamed(vr_sortlast **out, const vr_mesh *m, uint32_t parts,
                                      int gpu, vr_composite how, const vr_stream_config *c,
                                      const struct vr_gts *gts)
{
    assert(out && m && c);
    *out = NULL;
    vr_sortlast *s = NULL;
    vr_status st = vr_sortlast_create(&s, m, parts, gpu, how);
    if (st != VR_OK)
        return st;
    s->streamed = 1;
    const int saved = vr_sl_device_save(s->gpu);
    for (uint32_t k = 0; k < parts && st == VR_OK; ++k) {
        vr_sl_part *p = &s->p[k];
        vr_stream_config pc = *c;
        pc.part = k, pc.parts = parts;
#ifdef VR_HAVE_CUDA
        /* each part's stream, timer and buffers on its own device (local: the caller's) */
        if (s->gpu && ((st = vr_sl_set_device(p->device)) != VR_OK ||
                       (st = vr_sl_timer_create((vr_sl_timer **)&p->timer)) != VR_OK))
            break;
#endif
        if ((st = vr_stream_create(&p->stream, m, &pc, s->gpu)) == VR_OK && gts)
            st = vr_stream_set_gts(p->stream, gts);
    }
    vr_sl_device_restore(saved);
    if (st != VR_OK) {
        vr_sortlast_destroy(s);
        return st;
    }
    *out = s;
    return VR_OK;
}

vr_status vr_sortlast_set_gts(vr_sortlast *s, const struct vr_gts *gts)
{
    assert(s);
    if (!s->streamed)
        return VR_ERROR(VR_ERR_ARG, "sort-last: compressed input needs streamed parts");
    vr_status st = VR_OK;
    const int saved = vr_sl_device_save(s->gpu);
    for (uint32_t k = 0; k < s->count && st == VR_OK; ++k) {
#ifdef VR_HAVE_CUDA
        if (s->gpu && (st = vr_sl_set_device(s->p[k].device)) != VR_OK)
            break;
#endif
        st = vr_stream_set_gts(s->p[k].stream, gts);
    }
    vr_sl_device_restore(saved);
    return st;
}

/* ---- the cut: parts, and per part its buffers ------------------------------------------------ */

static vr_status vr_sl_part_setup(vr_sortlast *s, vr_sl_part *p)
{
    const vr_part *c = p->cut;
    const uint32_t vc = s->mesh->vertex_count;
    if (!s->gpu)
        return vr_geometry_result_alloc(&p->result, p->tris, vc);
#ifdef VR_HAVE_CUDA
    vr_status st = vr_sl_set_device(p->device);
    if (st == VR_OK)
        st = vr_sl_timer_create((vr_sl_timer **)&p->timer);
    if (st == VR_OK)
        st = vr_sl_alloc(&p->d_counters, sizeof p->counters);
    if (st == VR_OK)
        st = vr_raster_frame_alloc(&p->frame, p->tris, vc);
    if (st != VR_OK || p->tris == 0)
        return st;
    /* the scene's vertex arrays once per device: the first part there with triangles owns
     * them, the later ones read its copies */
    const vr_geometry *owner = NULL;
    for (const vr_sl_part *q = s->p; q < p && !owner; ++q)
        if (q->device == p->device && q->geometry)
            owner = q->geometry;
    st = owner ? vr_geometry_create_sharing(&p->geometry, &c->mesh, owner)
               : vr_geometry_create(&p->geometry, &c->mesh);
    if (st == VR_OK && c->given.count)
        st = vr_geometry_set_batches(p->geometry, &c->given);
    if (st == VR_OK)
        st = vr_geometry_result_alloc(&p->counted, p->tris, vc);
    /* batch colours: the part's triangle t (its tri_id) is stream position first_tri + t */
    if (st == VR_OK)
        st = vr_sl_copy(p->frame.d_tri_batch, vr_parts_batch_ids(&s->parts, c),
                        (size_t)p->tris * sizeof(uint32_t), p->frame.stream);
    if (st == VR_OK)
        st = vr_sl_sync(p->frame.stream);
    return st;
#else
    (void)c;
    return VR_ERROR(VR_ERR_NO_DEVICE, "sort-last: built without CUDA");
#endif
}

static vr_status vr_sl_cut(vr_sortlast *s, const vr_render_options *o, const vr_reuse_params *cfg)
{
    const vr_batch_limits limits = vr_batch_limits_of(cfg);
    if (s->cut_kind == (int)o->strategy->kind && s->cut_builder == cfg->patch_builder &&
        !memcmp(&limits, &s->cut_limits, sizeof limits))
        return VR_OK;
    for (uint32_t k = s->count; k-- > 0;) { /* the sharers before their owner */
        vr_sl_part_free(s, &s->p[k]);
        s->p[k].cut = NULL;
    }
    vr_parts_free(&s->parts);
    s->cut_kind = -1;
    s->counted = 0;
    s->pixel_capacity = 0; /* the CPU buffers went with the parts */
    vr_status st = vr_parts_make(&s->parts, o->strategy, s->mesh, cfg, s->count);
    for (uint32_t k = 0; k < s->count && st == VR_OK; ++k) {
        s->p[k].cut = &s->parts.part[k];
        s->p[k].tris = s->parts.part[k].mesh.index_count / 3;
        st = vr_sl_part_setup(s, &s->p[k]);
    }
    if (st != VR_OK)
        return st;
    s->cut_kind = (int)o->strategy->kind;
    s->cut_builder = cfg->patch_builder;
    s->cut_limits = limits;
    return VR_OK;
}

/* The part's run must have written every one of its triangles (the renderer culls in the
 * rasterizer, not in the stage). */
static vr_status vr_sl_check_run(const vr_sl_part *p, const vr_counters *c, const char *who)
{
    if (c->queue_count != p->tris || c->overflow != 0)
        return VR_ERROR(VR_ERR_OVERFLOW, "sort-last part from stream position %u: %s wrote %u "
                        "of %u triangles (%u overflowed)", p->cut->first_tri, who,
                        c->queue_count, p->tris, c->overflow);
    return VR_OK;
}

static void vr_sl_sum_stats(vr_sortlast *s, vr_render_stats *st)
{
    for (uint32_t k = 0; k < s->count; ++k) {
        const vr_sl_part *p = &s->p[k];
        vr_raster_stats *r = &st->raster;
        r->triangles += p->raster.triangles;
        r->rejected += p->raster.rejected;
        r->clipped += p->raster.clipped;
        r->fragments += p->raster.fragments;
#define VR_SL_MAX(a, b) ((a) = (b) > (a) ? (b) : (a))
        VR_SL_MAX(r->clear_ms, p->raster.clear_ms);
        VR_SL_MAX(r->raster_ms, p->raster.raster_ms);
        VR_SL_MAX(r->resolve_ms, p->raster.resolve_ms);
        VR_SL_MAX(st->geometry_ms, p->geometry_ms);
        VR_SL_MAX(st->composite_ms, p->composite_ms);
        VR_SL_MAX(st->composite_vis_ms, p->composite_vis_ms);
#undef VR_SL_MAX
    }
    st->triangles = s->parts.triangles;
    st->batches = s->parts.batch_count;
    st->invocations = s->invocations;
    st->parts = s->count;
}

/* Part p's raster configuration: its stream positions in the words. */
static vr_raster_config vr_sl_raster_config(const vr_render_options *o, const vr_sl_part *p)
{
    vr_raster_config rc = o->raster;
    rc.slot_base = p->cut->first_tri;
    return rc;
}

/* Part k's shading: the pixels its triangles won, 0 elsewhere (part 0 owns the background);
 * `counts`: the shade counts summed over the parts; `tri_batch`: the batch of each of its
 * triangles (its tri_ids). */
static vr_resolve_params vr_sl_shade(const vr_sortlast *s, const vr_resolve_params *in,
                                     uint32_t k, const uint32_t *counts,
                                     const uint32_t *tri_batch)
{
    vr_resolve_params sh = *in;
    sh.part = VR_RESOLVE_PART_ZERO;
    sh.background = k == 0 ? in->background : 0;
    sh.shade_counts = counts;
    sh.vertex_count = s->mesh->vertex_count;
    sh.tri_batch = tri_batch;
    sh.tri_batch_count = s->p[k].tris;
    return sh;
}

static const vr_queue vr_sl_no_queue; /* an empty part's: no slots */

/* ---- CPU twin ------------------------------------------------------------------------------- */

/* Every part's host visibility buffer and image, grown to `pixels`. */
static vr_status vr_sl_host_buffers(vr_sortlast *s, const vr_render_options *o, size_t pixels)
{
    if (pixels <= s->pixel_capacity)
        return VR_OK;
    for (uint32_t k = 0; k < s->count; ++k) {
        free(s->p[k].vis), free(s->p[k].rgba);
        s->p[k].vis = malloc(pixels * sizeof(uint64_t));
        s->p[k].rgba = malloc(pixels * 4);
        if (!s->p[k].vis || !s->p[k].rgba) {
            s->pixel_capacity = 0;
            return VR_ERROR(VR_ERR_OOM, "sort-last: %ux%u buffers of %u parts", o->raster.width,
                            o->raster.height, s->count);
        }
    }
    s->pixel_capacity = pixels;
    return VR_OK;
}

static vr_status vr_sl_frame_cpu(vr_sortlast *s, uint8_t *rgba, const vr_render_options *o,
                                 const vr_reuse_params *cfg, const vr_resolve_params *shade_in,
                                 vr_render_stats *st)
{
    const size_t pixels = (size_t)o->raster.width * o->raster.height;
    vr_status grown = vr_sl_host_buffers(s, o, pixels);
    if (grown != VR_OK)
        return grown;
    const uint32_t vc = s->mesh->vertex_count;
    memset(s->shade_counts, 0, (size_t)vc * sizeof *s->shade_counts);
    s->invocations = 0;
    vr_status e = VR_OK;
    /* each part: geometry stage and raster into its own buffer */
    for (uint32_t k = 0; k < s->count && e == VR_OK; ++k) {
        vr_sl_part *p = &s->p[k];
        memset(&p->raster, 0, sizeof p->raster);
        const vr_raster_config rc = vr_sl_raster_config(o, p);
        if (p->tris == 0) { /* more parts than batches: nothing drawn */
            memset(p->vis, 0xff, pixels * sizeof(uint64_t));
            continue;
        }
        const double t0 = vr_now_ms();
        e = vr_geometry_ref_given(&p->result, o->strategy, &p->cut->mesh, cfg,
                                  p->cut->given.count ? &p->cut->given : NULL);
        p->geometry_ms = vr_now_ms() - t0;
        if (e == VR_OK)
            e = vr_sl_check_run(p, &p->result.counters, o->strategy->name);
        if (e != VR_OK)
            break;
        s->invocations += p->result.counters.invocations;
        for (uint32_t v = 0; v < vc; ++v)
            s->shade_counts[v] += p->result.shade_counts[v];
        e = vr_raster_ref(p->vis, &p->result.queue, p->tris, &rc, &p->raster);
    }
    if (e != VR_OK)
        return e;
    /* composite: minimum into part 0's buffer */
    const double c0 = vr_now_ms();
    uint64_t *vis = s->p[0].vis;
    for (uint32_t k = 1; k < s->count; ++k)
        for (size_t i = 0; i < pixels; ++i)
            if (s->p[k].vis[i] < vis[i])
                vis[i] = s->p[k].vis[i];
    double composite = vr_now_ms() - c0;
    const double composite_vis = composite;
    /* each part resolves the pixels its triangles won; images composite by maximum */
    uint8_t *out = rgba ? rgba : s->p[0].rgba;
    for (uint32_t k = 0; k < s->count && e == VR_OK; ++k) {
        vr_sl_part *p = &s->p[k];
        const vr_raster_config rc = vr_sl_raster_config(o, p);
        const vr_resolve_params sh = vr_sl_shade(s, shade_in, k, s->shade_counts,
                                                 vr_parts_batch_ids(&s->parts, p->cut));
        e = vr_resolve_ref(k == 0 ? out : p->rgba, vis,
                           p->tris ? &p->result.queue : &vr_sl_no_queue, p->tris, &rc, &sh,
                           &p->raster.resolve_ms);
        if (e == VR_OK && k > 0) {
            const double m0 = vr_now_ms();
            for (size_t i = 0; i < 4 * pixels; ++i)
                if (p->rgba[i] > out[i])
                    out[i] = p->rgba[i];
            composite += vr_now_ms() - m0;
        }
    }
    if (e != VR_OK)
        return e;
    vr_sl_sum_stats(s, st);
    st->composite_ms = composite;
    st->composite_vis_ms = composite_vis;
    return VR_OK;
}

/* Streamed parts: the frame's stats from the parts' streams. `one_device`: the parts ran in
 * turn on one device (or the CPU), so their stream times and device memory add up; over NCCL
 * each GPU holds one part and the slowest part is the frame's. */
static void vr_sl_sum_streamed(vr_sortlast *s, vr_render_stats *st, int one_device)
{
    s->invocations = 0;
    uint32_t chunks = 0;
    for (uint32_t k = 0; k < s->count; ++k) {
        vr_sl_part *p = &s->p[k];
        const vr_render_stats *ps = &p->streamed;
        s->invocations += ps->invocations;
        chunks += ps->chunks;
        p->raster = ps->raster;
        p->geometry_ms = ps->geometry_ms;
        st->copied_bytes += ps->copied_bytes;
#define VR_SL_ADD_OR_MAX(a, b) ((a) = one_device ? (a) + (b) : (b) > (a) ? (b) : (a))
        VR_SL_ADD_OR_MAX(st->stream_ms, ps->stream_ms);
        VR_SL_ADD_OR_MAX(st->pipeline_bytes, ps->pipeline_bytes);
        /* one device: each part's own arrays, and the shared copies once */
        VR_SL_ADD_OR_MAX(st->scene_bytes, one_device ? ps->scene_bytes - ps->scene_shared_bytes
                                                     : ps->scene_bytes);
        if (ps->scene_shared_bytes > st->scene_shared_bytes)
            st->scene_shared_bytes = ps->scene_shared_bytes;
#undef VR_SL_ADD_OR_MAX
    }
    if (one_device)
        st->scene_bytes += st->scene_shared_bytes;
    vr_sl_sum_stats(s, st);
    st->triangles = s->p[0].streamed.triangles; /* every part's stream cuts the whole stream */
    st->batches = s->p[0].streamed.batches;
    st->chunks = chunks;
}

/* Streamed parts (CPU twins): each part's stream draws its share in chunks into its own
 * visibility buffer and image, with the whole stream's positions and batch ids (vr_stream_config
 * part / parts), so a part's image is one run's on the pixels its triangles won. The composite
 * takes per pixel the smallest word and the image of the part that holds it (part 0 for the
 * background, which every part draws alike). */
static vr_status vr_sl_frame_streamed_cpu(vr_sortlast *s, uint8_t *rgba,
                                          const vr_render_options *o,
                                          const vr_reuse_params *cfg,
                                          const vr_resolve_params *shade, vr_render_stats *st)
{
    const size_t pixels = (size_t)o->raster.width * o->raster.height;
    vr_status grown = vr_sl_host_buffers(s, o, pixels);
    if (grown != VR_OK)
        return grown;
    for (uint32_t k = 0; k < s->count; ++k) {
        vr_sl_part *p = &s->p[k];
        memset(&p->streamed, 0, sizeof p->streamed);
        vr_status e = vr_stream_frame(p->stream, p->rgba, o, cfg, shade, &p->streamed);
        if (e == VR_OK)
            e = vr_stream_read_vis(p->stream, p->vis, pixels);
        if (e != VR_OK)
            return e;
        p->composite_ms = p->composite_vis_ms = 0;
    }
    const double c0 = vr_now_ms();
    uint64_t *vis = s->p[0].vis;
    uint8_t *out = rgba ? rgba : s->p[0].rgba;
    if (out != s->p[0].rgba)
        memcpy(out, s->p[0].rgba, pixels * 4);
    for (uint32_t k = 1; k < s->count; ++k) {
        const uint64_t *w = s->p[k].vis;
        const uint8_t *c = s->p[k].rgba;
        for (size_t i = 0; i < pixels; ++i)
            if (w[i] < vis[i]) {
                vis[i] = w[i];
                memcpy(out + 4 * i, c + 4 * i, 4);
            }
    }
    vr_sl_sum_streamed(s, st, 1);
    st->composite_ms = st->composite_vis_ms = vr_now_ms() - c0;
    return VR_OK;
}

/* ---- GPU ------------------------------------------------------------------------------------ */

#ifdef VR_HAVE_CUDA
/* Waits until s->expected threads have arrived (one meeting per frame). */
static void vr_sl_meet(vr_sortlast *s)
{
    pthread_mutex_lock(&s->lock);
    if (++s->arrived >= s->expected) {
        s->arrived = 0;
        ++s->generation;
        pthread_cond_broadcast(&s->met);
    } else {
        const uint32_t g = s->generation;
        while (g == s->generation)
            pthread_cond_wait(&s->met, &s->lock);
    }
    pthread_mutex_unlock(&s->lock);
}

/* A rank's meeting after its local work (`local`: how it went): 1 when every rank got there
 * without a failure, so that all may enter the collectives; 0 when any failed. */
static int vr_sl_meet_ok(vr_sortlast *s, vr_status local)
{
    if (local != VR_OK) {
        pthread_mutex_lock(&s->lock);
        s->failed = 1; /* read by every thread after the meeting below */
        pthread_mutex_unlock(&s->lock);
    }
    vr_sl_meet(s);
    pthread_mutex_lock(&s->lock);
    const int failed = s->failed;
    pthread_mutex_unlock(&s->lock);
    return !failed;
}

/* A part's local work: the counted run when the counts are stale (its shade counts into the
 * raster frame), the timed run, the raster into its own buffer. */
static vr_status vr_sl_part_local(vr_sortlast *s, vr_sl_part *p, int count_now)
{
    const vr_render_options *o = s->o;
    memset(&p->raster, 0, sizeof p->raster);
    p->geometry_ms = p->composite_ms = p->composite_vis_ms = 0;
    vr_status st = vr_sl_set_device(p->device);
    if (st != VR_OK)
        return st;
    const size_t pixels = (size_t)o->raster.width * o->raster.height;
    if ((st = vr_raster_frame_grow(&p->frame, pixels)) != VR_OK)
        return st;
    if (p->tris == 0) {
        if (count_now &&
            (st = vr_sl_fill(p->frame.d_shade_counts, 0,
                             (size_t)s->mesh->vertex_count * sizeof(uint32_t),
                             p->frame.stream)) != VR_OK)
            return st;
        memset(p->counters, 0, sizeof p->counters);
        if ((st = vr_sl_fill(p->frame.d_vis, 0xff, pixels * sizeof(uint64_t), p->frame.stream)) !=
            VR_OK)
            return st;
        return vr_sl_sync(p->frame.stream);
    }
    if (count_now) {
        vr_reuse_params counted = *s->cfg;
        counted.count = 1;
        if ((st = vr_geometry_run(p->geometry, o->strategy, &counted, 0, NULL)) != VR_OK ||
            (st = vr_geometry_download(p->geometry, &p->counted)) != VR_OK ||
            (st = vr_sl_check_run(p, &p->counted.counters, o->strategy->name)) != VR_OK)
            return st;
        p->counters[0] = p->counted.counters.invocations;
        p->counters[1] = p->counted.counters.queue_count;
        if ((st = vr_sl_copy(p->frame.d_shade_counts,
                             vr_geometry_device_shade_counts(p->geometry),
                             (size_t)s->mesh->vertex_count * sizeof(uint32_t),
                             p->frame.stream)) != VR_OK)
            return st;
    }
    vr_reuse_params timed = *s->cfg;
    timed.count = 0;
    float ms = 0;
    if ((st = vr_geometry_run(p->geometry, o->strategy, &timed, 0, &ms)) != VR_OK)
        return st;
    p->geometry_ms = ms;
    const vr_raster_config rc = vr_sl_raster_config(o, p);
    return vr_raster_gpu(p->frame.d_vis, vr_geometry_device_queue(p->geometry), p->tris, &rc,
                         &p->raster, p->frame.d_scratch, p->frame.stream);
}

/* Part k's resolve of the composite `vis` with the summed shade counts `counts` into its own
 * image (part 0: the background too). */
static vr_status vr_sl_part_resolve(vr_sortlast *s, vr_sl_part *p, uint32_t k,
                                    const uint64_t *vis, const uint32_t *counts)
{
    const vr_raster_config rc = vr_sl_raster_config(s->o, p);
    const vr_resolve_params sh = vr_sl_shade(s, s->shade, k, counts, p->frame.d_tri_batch);
    const vr_queue *q = p->geometry ? vr_geometry_device_queue(p->geometry) : &vr_sl_no_queue;
    return vr_resolve_gpu(p->frame.d_rgba, vis, q, p->tris, &rc, &sh, &p->raster.resolve_ms,
                          p->frame.stream);
}

/* One device, parts in turn; the compositing by kernels on part 0's stream. */
static vr_status vr_sl_frame_local(vr_sortlast *s, vr_render_stats *st)
{
    const int count_now = !s->counted;
    const size_t pixels = (size_t)s->o->raster.width * s->o->raster.height;
    vr_status e = VR_OK;
    for (uint32_t k = 0; k < s->count && e == VR_OK; ++k)
        e = vr_sl_part_local(s, &s->p[k], count_now);
    if (e != VR_OK)
        return e;
    vr_sl_part *p0 = &s->p[0];
    void *stream = p0->frame.stream;
    if (count_now) {
        s->invocations = 0;
        for (uint32_t k = 0; k < s->count; ++k) {
            s->invocations += s->p[k].counters[0];
            if (k > 0 && (e = vr_sl_add_u32(p0->frame.d_shade_counts, s->p[k].frame.d_shade_counts,
                                            s->mesh->vertex_count, stream)) != VR_OK)
                return e;
        }
    }
    vr_sl_timer *timer = (vr_sl_timer *)p0->timer;
    if ((e = vr_sl_timer_start(timer, stream)) != VR_OK)
        return e;
    for (uint32_t k = 1; k < s->count && e == VR_OK; ++k)
        e = vr_sl_min_u64(p0->frame.d_vis, s->p[k].frame.d_vis, pixels, stream);
    if (e == VR_OK)
        e = vr_sl_timer_stop(timer, stream);
    double min_ms = 0, max_ms = 0;
    if (e == VR_OK)
        e = vr_sl_timer_ms(timer, &min_ms);
    for (uint32_t k = 0; k < s->count && e == VR_OK; ++k)
        e = vr_sl_part_resolve(s, &s->p[k], k, p0->frame.d_vis, p0->frame.d_shade_counts);
    if (e == VR_OK)
        e = vr_sl_timer_start(timer, stream);
    for (uint32_t k = 1; k < s->count && e == VR_OK; ++k)
        e = vr_sl_max_u8(p0->frame.d_rgba, s->p[k].frame.d_rgba, 4 * pixels, stream);
    if (e == VR_OK)
        e = vr_sl_timer_stop(timer, stream);
    if (e == VR_OK)
        e = vr_sl_timer_ms(timer, &max_ms);
    if (e != VR_OK)
        return e;
    s->counted = 1;
    vr_sl_sum_stats(s, st);
    st->composite_ms = min_ms + max_ms;
    st->composite_vis_ms = min_ms;
    return VR_OK;
}

/* One rank (host thread) of the NCCL frame. */
static vr_status vr_sl_rank(vr_sortlast *s, uint32_t k)
{
    vr_sl_part *p = &s->p[k];
    vr_nccl *c = (vr_nccl *)s->nccl;
    const int count_now = !s->counted;
    vr_status e = vr_sl_keep(p, vr_sl_part_local(s, p, count_now));
    if (!vr_sl_meet_ok(s, e))
        return e; /* nobody enters a collective that a failed rank would never join */
    const size_t pixels = (size_t)s->o->raster.width * s->o->raster.height;
    void *stream = p->frame.stream;
    vr_sl_timer *timer = (vr_sl_timer *)p->timer;
    if (count_now) { /* counters and shade counts summed over the ranks */
        uint64_t *d_counters = (uint64_t *)p->d_counters;
        if ((e = vr_sl_copy(d_counters, p->counters, sizeof p->counters, stream)) != VR_OK ||
            (e = vr_nccl_all_reduce(c, (int)k, d_counters, d_counters, 2, VR_SL_U64, VR_SL_SUM,
                                    stream)) != VR_OK ||
            (e = vr_sl_copy(p->counters, d_counters, sizeof p->counters, stream)) != VR_OK ||
            (e = vr_nccl_all_reduce(c, (int)k, p->frame.d_shade_counts, p->frame.d_shade_counts,
                                    s->mesh->vertex_count, VR_SL_U32, VR_SL_SUM, stream)) !=
                VR_OK ||
            (e = vr_sl_sync(stream)) != VR_OK)
            return vr_sl_keep(p, e);
    }
    double min_ms = 0, max_ms = 0;
    if ((e = vr_sl_timer_start(timer, stream)) != VR_OK ||
        (e = vr_nccl_all_reduce(c, (int)k, p->frame.d_vis, p->frame.d_vis, pixels, VR_SL_U64,
                                VR_SL_MIN, stream)) != VR_OK ||
        (e = vr_sl_timer_stop(timer, stream)) != VR_OK ||
        (e = vr_sl_timer_ms(timer, &min_ms)) != VR_OK ||
        (e = vr_sl_part_resolve(s, p, k, p->frame.d_vis, p->frame.d_shade_counts)) != VR_OK ||
        (e = vr_sl_timer_start(timer, stream)) != VR_OK ||
        (e = vr_nccl_reduce(c, (int)k, p->frame.d_rgba, p->frame.d_rgba, 4 * pixels, VR_SL_U8,
                            VR_SL_MAX, 0, stream)) != VR_OK ||
        (e = vr_sl_timer_stop(timer, stream)) != VR_OK ||
        (e = vr_sl_timer_ms(timer, &max_ms)) != VR_OK)
        return vr_sl_keep(p, e);
    p->composite_ms = min_ms + max_ms;
    p->composite_vis_ms = min_ms;
    return VR_OK;
}

/* ---- GPU, streamed parts ----------------------------------------------------------------------
 * Each part's stream draws its share in chunks into its own visibility buffer and image on its
 * device, as the CPU twin's do; the images are shaded already, so the composite moves colours
 * with the words instead of resolving again: on one device a select-min kernel per part into
 * part 0's buffers; over NCCL the words all-reduced (min) into a buffer of each rank's, each
 * rank's image masked to the pixels it won (the background: all of them, drawn alike) and the
 * images reduced (max) to rank 0. */

/* A part's frame on its device (the stream waits for its own end). */
static vr_status vr_sl_stream_part(vr_sortlast *s, vr_sl_part *p)
{
    memset(&p->streamed, 0, sizeof p->streamed);
    p->composite_ms = p->composite_vis_ms = 0;
    vr_status e = vr_sl_set_device(p->device);
    if (e == VR_OK)
        e = vr_stream_frame(p->stream, NULL, s->o, s->cfg, s->shade, &p->streamed);
    return e;
}

static vr_status vr_sl_frame_streamed_local(vr_sortlast *s, vr_render_stats *st)
{
    const size_t pixels = (size_t)s->o->raster.width * s->o->raster.height;
    vr_status e = VR_OK;
    for (uint32_t k = 0; k < s->count && e == VR_OK; ++k)
        e = vr_sl_stream_part(s, &s->p[k]);
    uint64_t *vis = NULL;
    uint8_t *rgba = NULL;
    void *stream = NULL;
    if (e == VR_OK)
        e = vr_stream_device_frame(s->p[0].stream, pixels, &vis, &rgba, &stream);
    vr_sl_timer *timer = (vr_sl_timer *)s->p[0].timer;
    if (e == VR_OK)
        e = vr_sl_timer_start(timer, stream);
    for (uint32_t k = 1; k < s->count && e == VR_OK; ++k) {
        uint64_t *w = NULL;
        uint8_t *c = NULL;
        void *ks = NULL;
        if ((e = vr_stream_device_frame(s->p[k].stream, pixels, &w, &c, &ks)) == VR_OK)
            e = vr_sl_select_min(vis, rgba, w, c, pixels, stream);
    }
    double ms = 0;
    if (e == VR_OK)
        e = vr_sl_timer_stop(timer, stream);
    if (e == VR_OK)
        e = vr_sl_timer_ms(timer, &ms);
    if (e != VR_OK)
        return e;
    vr_sl_sum_streamed(s, st, 1);
    st->composite_ms = st->composite_vis_ms = ms;
    return VR_OK;
}

/* One rank of the streamed NCCL frame: its share, then the collectives (sortlast.h). */
static vr_status vr_sl_rank_streamed(vr_sortlast *s, uint32_t k)
{
    vr_sl_part *p = &s->p[k];
    vr_nccl *c = (vr_nccl *)s->nccl;
    const size_t pixels = (size_t)s->o->raster.width * s->o->raster.height;
    vr_status e = vr_sl_stream_part(s, p);
    if (e == VR_OK && pixels > p->least_capacity) { /* before the meeting: nobody waits on it */
        vr_sl_free(p->d_least);
        p->d_least = NULL, p->least_capacity = 0;
        if ((e = vr_sl_alloc((void **)&p->d_least, pixels * sizeof(uint64_t))) == VR_OK)
            p->least_capacity = pixels;
    }
    uint64_t *vis = NULL;
    uint8_t *rgba = NULL;
    void *stream = NULL;
    if (e == VR_OK)
        e = vr_stream_device_frame(p->stream, pixels, &vis, &rgba, &stream);
    if (!vr_sl_meet_ok(s, vr_sl_keep(p, e)))
        return e; /* nobody enters a collective that a failed rank would never join */
    vr_sl_timer *timer = (vr_sl_timer *)p->timer;
    double min_ms = 0, max_ms = 0;
    if ((e = vr_sl_timer_start(timer, stream)) != VR_OK ||
        (e = vr_nccl_all_reduce(c, (int)k, vis, p->d_least, pixels, VR_SL_U64, VR_SL_MIN,
                                stream)) != VR_OK ||
        (e = vr_sl_timer_stop(timer, stream)) != VR_OK ||
        (e = vr_sl_timer_ms(timer, &min_ms)) != VR_OK ||
        (e = vr_sl_timer_start(timer, stream)) != VR_OK ||
        (e = vr_sl_keep_won(rgba, vis, p->d_least, pixels, stream)) != VR_OK ||
        (e = vr_nccl_reduce(c, (int)k, rgba, rgba, 4 * pixels, VR_SL_U8, VR_SL_MAX, 0,
                            stream)) != VR_OK ||
        (e = vr_sl_timer_stop(timer, stream)) != VR_OK ||
        (e = vr_sl_timer_ms(timer, &max_ms)) != VR_OK)
        return vr_sl_keep(p, e);
    /* rank 0's stream holds the frame: the composite words too (vr_sortlast_read_vis) */
    if (k == 0 && ((e = vr_sl_copy(vis, p->d_least, pixels * sizeof(uint64_t), stream)) != VR_OK ||
                   (e = vr_sl_sync(stream)) != VR_OK))
        return vr_sl_keep(p, e);
    p->composite_ms = min_ms + max_ms;
    p->composite_vis_ms = min_ms;
    return VR_OK;
}

typedef struct vr_sl_job {
    vr_sortlast *s;
    uint32_t k;
} vr_sl_job;

/* A rank's frame, in core or streamed. */
static vr_status vr_sl_rank_any(vr_sortlast *s, uint32_t k)
{
    return s->streamed ? vr_sl_rank_streamed(s, k) : vr_sl_rank(s, k);
}

static void *vr_sl_job_main(void *arg)
{
    const vr_sl_job *j = (const vr_sl_job *)arg;
    vr_sl_rank_any(j->s, j->k);
    return NULL;
}

static vr_status vr_sl_frame_nccl(vr_sortlast *s, vr_render_stats *st)
{
    pthread_t th[VR_PARTS_MAX];
    vr_sl_job job[VR_PARTS_MAX];
    uint32_t made = 1; /* rank 0 runs on this thread, ranks 1..made-1 on their own */
    s->failed = 0;
    s->arrived = 0;
    s->expected = s->count;
    for (uint32_t k = 0; k < s->count; ++k) {
        s->p[k].status = VR_OK;
        s->p[k].error[0] = 0;
    }
    vr_status e = VR_OK;
    for (; made < s->count; ++made) {
        job[made].s = s, job[made].k = made;
        if (pthread_create(&th[made], NULL, vr_sl_job_main, &job[made]) != 0) {
            e = VR_ERROR(VR_ERR_OOM, "sort-last: a host thread for rank %u", made);
            break;
        }
    }
    if (e != VR_OK) {
        /* the threads made so far meet among themselves and skip the collectives */
        pthread_mutex_lock(&s->lock);
        s->failed = 1;
        s->expected = made - 1;
        if (s->expected == 0 || s->arrived >= s->expected) {
            s->arrived = 0;
            ++s->generation;
            pthread_cond_broadcast(&s->met);
        }
        pthread_mutex_unlock(&s->lock);
    } else {
        vr_sl_rank_any(s, 0);
    }
    for (uint32_t k = 1; k < made; ++k)
        pthread_join(th[k], NULL);
    if (e != VR_OK)
        return e;
    for (uint32_t k = 0; k < s->count; ++k)
        if (s->p[k].status != VR_OK)
            return VR_ERROR(s->p[k].status, "sort-last rank %u (device %d): %s", k,
                            s->p[k].device, s->p[k].error);
    if (s->streamed) { /* each rank's stream counts its own share: summed here */
        vr_sl_sum_streamed(s, st, 0);
        return VR_OK;
    }
    if (!s->counted) {
        s->invocations = s->p[0].counters[0]; /* the all-reduced sum */
        s->counted = 1;
    }
    vr_sl_sum_stats(s, st);
    return VR_OK;
}
#endif

static vr_status vr_sl_frame(vr_sortlast *s, uint8_t *rgba, const vr_render_options *o,
                             const vr_reuse_params *cfg, const vr_resolve_params *shade,
                             vr_render_stats *st);

vr_status vr_sortlast_frame(vr_sortlast *s, uint8_t *rgba, const vr_render_options *o,
                            const vr_reuse_params *cfg, const vr_resolve_params *shade,
                            vr_render_stats *st)
{
    assert(s);
    const int saved = vr_sl_device_save(s->gpu);
    const vr_status e = vr_sl_frame(s, rgba, o, cfg, shade, st);
    vr_sl_device_restore(saved);
    return e;
}

static vr_status vr_sl_frame(vr_sortlast *s, uint8_t *rgba, const vr_render_options *o,
                             const vr_reuse_params *cfg, const vr_resolve_params *shade,
                             vr_render_stats *st)
{
    assert(s && o && cfg && shade && st);
    s->last_pixels = 0;
    vr_status e = VR_OK;
    if (!s->streamed && (e = vr_sl_cut(s, o, cfg)) != VR_OK) /* streams cut themselves */
        return e;
    if (!s->gpu) {
        /* the shading arrays are the parts' own (summed shade counts, stream batch ids) */
        e = s->streamed ? vr_sl_frame_streamed_cpu(s, rgba, o, cfg, shade, st)
                        : vr_sl_frame_cpu(s, rgba, o, cfg, shade, st);
        if (e == VR_OK)
            s->last_pixels = (size_t)o->raster.width * o->raster.height;
        return e;
    }
#ifdef VR_HAVE_CUDA
    s->o = o, s->cfg = cfg, s->shade = shade;
    if (s->how == VR_COMPOSITE_NCCL)
        e = vr_sl_frame_nccl(s, st);
    else
        e = s->streamed ? vr_sl_frame_streamed_local(s, st) : vr_sl_frame_local(s, st);
    if (e != VR_OK)
        return e;
    s->last_pixels = (size_t)o->raster.width * o->raster.height;
    if (!rgba)
        return VR_OK;
    vr_sl_part *p0 = &s->p[0];
    const double t0 = vr_now_ms();
    const size_t pixels = (size_t)o->raster.width * o->raster.height;
    uint8_t *image = p0->frame.d_rgba;
    void *stream = p0->frame.stream;
    uint64_t *unused = NULL;
    if ((e = vr_sl_set_device(p0->device)) != VR_OK ||
        (s->streamed &&
         (e = vr_stream_device_frame(p0->stream, pixels, &unused, &image, &stream)) != VR_OK) ||
        (e = vr_sl_copy(rgba, image, 4 * pixels, stream)) != VR_OK ||
        (e = vr_sl_sync(stream)) != VR_OK)
        return e;
    st->raster.download_ms = vr_now_ms() - t0;
    return VR_OK;
#else
    return VR_ERROR(VR_ERR_NO_DEVICE, "sort-last: built without CUDA");
#endif
}

vr_status vr_sortlast_read_vis(vr_sortlast *s, uint64_t *vis, size_t pixels)
{
    assert(s && vis);
    if (pixels == 0 || pixels != s->last_pixels)
        return VR_ERROR(VR_ERR_ARG, "sort-last: no frame of %zu pixels to read", pixels);
    if (!s->gpu) {
        memcpy(vis, s->p[0].vis, pixels * sizeof *vis);
        return VR_OK;
    }
#ifdef VR_HAVE_CUDA
    vr_sl_part *p0 = &s->p[0];
    const int saved = vr_sl_device_save(1);
    vr_status e = vr_sl_set_device(p0->device);
    if (e == VR_OK && s->streamed) /* part 0's stream holds the composite */
        e = vr_stream_read_vis(p0->stream, vis, pixels);
    else if (e == VR_OK)
        e = vr_sl_copy(vis, p0->frame.d_vis, pixels * sizeof *vis, p0->frame.stream);
    if (e == VR_OK && !s->streamed)
        e = vr_sl_sync(p0->frame.stream);
    vr_sl_device_restore(saved);
    return e;
#else
    return VR_ERROR(VR_ERR_NO_DEVICE, "sort-last: built without CUDA");
#endif
}
