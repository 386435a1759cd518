/* render.c - the frame driver behind `vreuse render` and `vreuse view`: camera -> geometry stage
 * (any reuse/ strategy, GPU through pipeline/geometry.h or its CPU twin) -> rasterizer ->
 * resolve. On the GPU the rasterizer reads the geometry stage's own device queue (no copy), and
 * a frame is three synchronous steps on the device: the strategy with counting off, raster
 * (clear + triangles) and resolve, each timed with cudaEvents. Per-vertex shading counts and
 * the invocation count depend only on strategy and mesh: a counted run refreshes them (outside
 * the timed steps) when the strategy changes. On the CPU the twins run end to end.
 * Try: `vreuse render sphere --strategy hash --heatmap --out s.png`.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include "raster/raster.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pipeline/stage/geometry.h"
#include "pipeline/stage/parts.h"
#include "raster/raster_common.h"
#include "raster/sortlast.h"
#include "raster/stream.h"
#ifdef VR_HAVE_CUDA
#include "pipeline/vr_check.h"
#endif

/* Everything a captured frame's kernels were given: a frame with the same key replays the graph
 * as it is; any difference (camera, size, shading, strategy, buffers) captures it again. */
typedef struct vr_render_graph_key {
    vr_reuse_params cfg; /* the strategy's configuration, camera included */
    int kind;            /* the strategy */
    vr_raster_config raster;
    vr_resolve_params shade; /* device arrays included */
    const void *vis, *rgba, *clip, *tiles;
    uint32_t triangles;
} vr_render_graph_key;

struct vr_renderer {
    const vr_mesh *mesh;
    int gpu;
    vr_geometry_result result;      /* host queue, counters, shade counts (CPU: every frame;
                                       GPU: the last counted run) */
    uint64_t *vis;                  /* CPU path: vis_capacity words */
    size_t vis_capacity;
    uint8_t *rgba;                  /* image when the caller passes none: rgba_capacity pixels */
    size_t rgba_capacity;
    uint32_t *batch_ids;            /* triangles: batch of each triangle for batch_kind */
    int batch_kind;                 /* strategy kind batch_ids belongs to, -1: none */
    uint32_t batch_count;
    /* GPU path: device buffers owned by the renderer */
    vr_geometry *geometry;          /* mesh upload, strategy buffers, the device queue */
    vr_raster_frame dev;            /* shade counts of counts_kind (the geometry context clears
                                       its own at every run), batch ids of d_batch_kind, the
                                       visibility buffer and image, the raster stream */
    int d_batch_kind;
    int counts_kind;                /* strategy kind whose counts are cached, -1: none */
    vr_batch_limits limits;         /* the limits every cache above belongs to */
    int patch_builder;              /* and the patch builder they belong to */
    uint64_t counts_invocations;
    uint32_t counts_queue;          /* queue length of that run (no culling: all triangles) */
    vr_sortlast *sortlast;          /* sort-last parts (vr_renderer_set_parts), or NULL */
    int streamed;                   /* made by vr_renderer_create_streamed */
    vr_stream *stream;              /* its bounded stream; nothing above is sized by the mesh.
                                       NULL while sort-last parts stream instead (set_parts) */
    vr_stream_config stream_config; /* its configuration and compressed input: streamed sort-last */
    const struct vr_gts *stream_gts; /* parts get the same (vr_renderer_set_parts) */
    size_t last_pixels;             /* the last frame's size (vr_renderer_read_vis), 0 before */
    /* GPU frame timing and its CUDA graph (vr_render_options.graph) */
    void *frame_ev[2];              /* cudaEvents around a frame's device work */
    void *side_stream;              /* a graph frame's branch: the tile clear beside the
                                       geometry stage */
    void *fork_ev[2];               /* cudaEvents (no timing) into and out of that branch */
    void *graph_exec;               /* cudaGraphExec_t of the last captured frame, or NULL */
    int gts;                        /* compressed batches set (vr_renderer_set_gts): their error
                                       word is read on the host after each run, so no graph */
    vr_render_graph_key graph_key;  /* what that frame was captured with */
};

/* ---- device buffers (CUDA runtime; the stubs below keep a CPU-only build linking) ---------- */

#ifdef VR_HAVE_CUDA
static void vr_render_graph_drop(vr_renderer *r)
{
    if (r->graph_exec)
        cudaGraphExecDestroy((cudaGraphExec_t)r->graph_exec);
    r->graph_exec = NULL;
}

static void vr_render_dev_free(vr_renderer *r)
{
    /* teardown: errors cannot be acted on */
    vr_render_graph_drop(r);
    for (int i = 0; i < 2; ++i) {
        if (r->frame_ev[i])
            cudaEventDestroy((cudaEvent_t)r->frame_ev[i]);
        if (r->fork_ev[i])
            cudaEventDestroy((cudaEvent_t)r->fork_ev[i]);
        r->frame_ev[i] = r->fork_ev[i] = NULL; /* vr_renderer_set_parts frees, destroy again */
    }
    if (r->side_stream)
        cudaStreamDestroy((cudaStream_t)r->side_stream);
    r->side_stream = NULL;
    vr_raster_frame_free(&r->dev);
}

static vr_status vr_render_dev_create(vr_renderer *r, uint32_t tris, uint32_t vertex_count)
{
    for (int i = 0; i < 2; ++i) {
        cudaEvent_t e = NULL;
        VR_CUDA_CHECK(cudaEventCreate(&e));
        r->frame_ev[i] = e;
        e = NULL;
        VR_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
        r->fork_ev[i] = e;
    }
    cudaStream_t side = NULL;
    VR_CUDA_CHECK(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
    r->side_stream = side;
    return vr_raster_frame_alloc(&r->dev, tris, vertex_count);
}

/* Marks the start (0) or the end (1) of a frame's device work on the renderer's stream. */
static vr_status vr_render_dev_mark(vr_renderer *r, int which)
{
    return vr_cuda_status(cudaEventRecord((cudaEvent_t)r->frame_ev[which],
                                          (cudaStream_t)r->dev.stream),
                          VR_CUDA_WHERE, "cudaEventRecord of the frame's events");
}

/* Waits for the end mark; *ms gets the time between the marks. `what` names the frame's work
 * in the message of a fault that surfaces here. */
static vr_status vr_render_dev_span(vr_renderer *r, const char *what, double *ms)
{
    vr_status st = vr_cuda_status(cudaEventSynchronize((cudaEvent_t)r->frame_ev[1]),
                                  VR_CUDA_WHERE, what);
    float t = 0;
    if (st == VR_OK)
        st = vr_cuda_status(cudaEventElapsedTime(&t, (cudaEvent_t)r->frame_ev[0],
                                                 (cudaEvent_t)r->frame_ev[1]),
                            VR_CUDA_WHERE, "cudaEventElapsedTime of the frame");
    *ms = t;
    return st;
}

/* Whether a frame captured with `a` has the nodes of one captured with `b` (the same strategy's
 * kernels, the same big-triangle kernels, memsets of the same sizes), so the executable graph
 * can take the new one's parameters in place. */
static int vr_render_graph_same_shape(const vr_render_graph_key *a, const vr_render_graph_key *b)
{
    return a->kind == b->kind && a->raster.big_mode == b->raster.big_mode &&
           a->raster.width == b->raster.width && a->raster.height == b->raster.height &&
           a->triangles == b->triangles;
}

/* The captured frame `graph` (of `key`) into r->graph_exec: updated in place when it has the
 * executable one's shape (only kernel parameters changed, e.g. the camera), instantiated anew
 * otherwise, or when the driver refuses the update anyway. */
static vr_status vr_render_graph_install(vr_renderer *r, cudaGraph_t graph,
                                         const vr_render_graph_key *key)
{
    if (r->graph_exec && !vr_render_graph_same_shape(key, &r->graph_key))
        vr_render_graph_drop(r);
    if (r->graph_exec) {
        cudaGraphExecUpdateResultInfo info;
        if (cudaGraphExecUpdate((cudaGraphExec_t)r->graph_exec, graph, &info) == cudaSuccess)
            return VR_OK;
        (void)cudaGetLastError(); /* the refused update is not an error of later calls */
        vr_render_graph_drop(r);
    }
    cudaGraphExec_t exec = NULL;
    VR_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
    r->graph_exec = exec;
    return VR_OK;
}

/* The tile clear of a graph frame as a branch of the capture in `s`: it touches only the
 * visibility words and the tile flags, so it runs beside the geometry stage, which leaves most
 * SMs idle on a small mesh (a one-wave kernel), instead of after it. fork_ev[1] marks its end. */
static vr_status vr_render_graph_clear_branch(vr_renderer *r, const vr_render_options *o,
                                              cudaStream_t s)
{
    cudaStream_t side = (cudaStream_t)r->side_stream;
    VR_CUDA_CHECK(cudaEventRecord((cudaEvent_t)r->fork_ev[0], s));
    VR_CUDA_CHECK(cudaStreamWaitEvent(side, (cudaEvent_t)r->fork_ev[0], 0));
    const vr_status e = vr_raster_tiles_clear_enqueue(r->dev.d_vis, &o->raster, r->dev.d_tiles,
                                                      side);
    VR_CUDA_CHECK(cudaEventRecord((cudaEvent_t)r->fork_ev[1], side)); /* joins even on error */
    return e;
}

/* The frame as one CUDA graph: the strategy (counting off), the clear, the raster kernels and the
 * resolve, captured from the renderer's stream in the order and with the arguments of the
 * stage-by-stage frame (so with the same words), then replayed. Capturing needs the strategy's
 * batches and workspace in place (vr_geometry_prepare) and takes no host wait of its own. */
static vr_status vr_render_graph_frame(vr_renderer *r, const vr_render_options *o,
                                       const vr_reuse_params *timed, const vr_resolve_params *shade,
                                       vr_render_stats *st)
{
    cudaStream_t s = (cudaStream_t)r->dev.stream;
    const vr_queue *q = vr_geometry_device_queue(r->geometry);
    /* the tile flags' full clear, when they are new or describe another frame, comes before
     * the frame and its marks: a set-up like the buffers' allocation */
    vr_status e = vr_raster_frame_tiles(&r->dev, &o->raster, shade->background);
    if (e != VR_OK)
        return e;
    vr_render_graph_key key;
    memset(&key, 0, sizeof key);
    key.cfg = *timed;
    key.kind = (int)o->strategy->kind;
    key.raster = o->raster;
    key.shade = *shade;
    key.vis = r->dev.d_vis;
    key.rgba = r->dev.d_rgba;
    key.clip = q->clip;
    key.tiles = r->dev.d_tiles;
    key.triangles = st->triangles;
    if (!r->graph_exec || memcmp(&key, &r->graph_key, sizeof key) != 0) {
        if ((e = vr_geometry_prepare(r->geometry, o->strategy, timed)) != VR_OK)
            return e;
        VR_CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
        e = vr_render_graph_clear_branch(r, o, s);
        if (e == VR_OK)
            e = vr_geometry_enqueue(r->geometry, o->strategy, timed, s);
        if (e == VR_OK)
            e = vr_cuda_status(cudaStreamWaitEvent(s, (cudaEvent_t)r->fork_ev[1], 0),
                               VR_CUDA_WHERE, "cudaStreamWaitEvent (the tile clear's join)");
        if (e == VR_OK)
            e = vr_raster_frame_enqueue(r->dev.d_rgba, r->dev.d_vis, q, st->triangles, &o->raster,
                                        shade, r->dev.d_scratch, r->dev.d_tiles, s);
        cudaGraph_t graph = NULL;
        const cudaError_t ended = cudaStreamEndCapture(s, &graph); /* always: frees the stream */
        if (e == VR_OK)
            e = vr_cuda_status(ended, VR_CUDA_WHERE, "cudaStreamEndCapture of the frame");
        if (e == VR_OK)
            e = vr_render_graph_install(r, graph, &key);
        if (graph)
            cudaGraphDestroy(graph);
        if (e != VR_OK) {
            vr_render_graph_drop(r);
            return e;
        }
        r->graph_key = key;
    }
    char what[96];
    snprintf(what, sizeof what, "the frame's CUDA graph (%s)", o->strategy->name);
    if ((e = vr_render_dev_mark(r, 0)) != VR_OK)
        return e;
    VR_CUDA_CHECK(cudaGraphLaunch((cudaGraphExec_t)r->graph_exec, s));
    if ((e = vr_render_dev_mark(r, 1)) != VR_OK ||
        (e = vr_render_dev_span(r, what, &st->gpu_frame_ms)) != VR_OK)
        return e;
    st->graph = 1;
    return vr_raster_frame_counts(&st->raster, st->triangles, r->dev.d_scratch, s);
}

/* Grows the visibility buffer and the image to `pixels`. */
static vr_status vr_render_dev_pixels(vr_renderer *r, size_t pixels)
{
    return vr_raster_frame_grow(&r->dev, pixels);
}

/* Host-to-device or device-to-device: unified addressing tells which. `what` names the copy
 * in the message. */
static vr_status vr_render_dev_copy(void *dst, const void *src, size_t bytes, const char *what)
{
    return vr_cuda_status(cudaMemcpy(dst, src, bytes, cudaMemcpyDefault), VR_CUDA_WHERE, what);
}

/* Device-to-host copy of the image, timed with events on the renderer's stream. */
static vr_status vr_render_dev_download(vr_renderer *r, uint8_t *rgba, size_t bytes, double *ms)
{
    cudaStream_t s = (cudaStream_t)r->dev.stream;
    cudaEvent_t ev[2] = {NULL, NULL};
    float t = 0;
    vr_status st = VR_OK;
    VR_CUDA_GOTO(cudaEventCreate(&ev[0]));
    VR_CUDA_GOTO(cudaEventCreate(&ev[1]));
    VR_CUDA_GOTO(cudaEventRecord(ev[0], s));
    VR_CUDA_GOTO(cudaMemcpyAsync(rgba, r->dev.d_rgba, bytes, cudaMemcpyDeviceToHost, s));
    VR_CUDA_GOTO(cudaEventRecord(ev[1], s));
    VR_CUDA_GOTO(cudaEventSynchronize(ev[1]));
    VR_CUDA_GOTO(cudaEventElapsedTime(&t, ev[0], ev[1]));
done:
    /* teardown: nothing to act on if these fail, the first error is already recorded */
    for (int i = 0; i < 2; ++i)
        if (ev[i])
            cudaEventDestroy(ev[i]);
    *ms = t;
    return st;
}
#else
static void vr_render_dev_free(vr_renderer *r)
{
    (void)r;
}
static vr_status vr_render_dev_mark(vr_renderer *r, int which)
{
    (void)r, (void)which;
    return VR_ERROR(VR_ERR_NO_DEVICE, "renderer: built without CUDA");
}
static vr_status vr_render_dev_span(vr_renderer *r, const char *what, double *ms)
{
    (void)r, (void)what;
    *ms = 0;
    return VR_ERROR(VR_ERR_NO_DEVICE, "renderer: built without CUDA");
}
static vr_status vr_render_graph_frame(vr_renderer *r, const vr_render_options *o,
                                       const vr_reuse_params *timed, const vr_resolve_params *shade,
                                       vr_render_stats *st)
{
    (void)r, (void)o, (void)timed, (void)shade, (void)st;
    return VR_ERROR(VR_ERR_NO_DEVICE, "renderer: built without CUDA");
}
static vr_status vr_render_dev_create(vr_renderer *r, uint32_t tris, uint32_t vertex_count)
{
    (void)r, (void)tris, (void)vertex_count;
    return VR_ERROR(VR_ERR_NO_DEVICE, "renderer: built without CUDA");
}
static vr_status vr_render_dev_pixels(vr_renderer *r, size_t pixels)
{
    (void)r, (void)pixels;
    return VR_ERROR(VR_ERR_NO_DEVICE, "renderer: built without CUDA");
}
static vr_status vr_render_dev_copy(void *dst, const void *src, size_t bytes, const char *what)
{
    (void)dst, (void)src, (void)bytes;
    return VR_ERROR(VR_ERR_NO_DEVICE, "renderer: %s: built without CUDA", what);
}
static vr_status vr_render_dev_download(vr_renderer *r, uint8_t *rgba, size_t bytes, double *ms)
{
    (void)r, (void)rgba, (void)bytes;
    *ms = 0;
    return VR_ERROR(VR_ERR_NO_DEVICE, "renderer: built without CUDA");
}
#endif

/* ---- lifecycle ------------------------------------------------------------------------------ */

void vr_renderer_destroy(vr_renderer *r)
{
    if (!r)
        return;
    vr_geometry_result_free(&r->result);
    free(r->vis);
    free(r->rgba);
    free(r->batch_ids);
    vr_geometry_destroy(r->geometry);
    if (r->gpu)
        vr_render_dev_free(r);
    vr_sortlast_destroy(r->sortlast);
    vr_stream_destroy(r->stream);
    free(r);
}

/* The renderer of mesh `m` (validated here) with `stream` (NULL: in-core) and its buffers. */
static vr_status vr_renderer_make(vr_renderer **out, const vr_mesh *m, int use_gpu,
                                  const vr_stream_config *stream)
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
    r->d_batch_kind = -1;
    r->counts_kind = -1;
    r->limits = vr_batch_limits_paper();
    const uint32_t tris = m->index_count / 3;
    if (stream) { /* the chunks own every buffer; nothing here is sized by the mesh */
        r->streamed = 1;
        r->stream_config = *stream;
        st = vr_stream_create(&r->stream, m, stream, r->gpu);
    } else {
        st = vr_geometry_result_alloc(&r->result, tris, m->vertex_count);
        if (st == VR_OK) {
            r->batch_ids = malloc(((size_t)tris + 1) * sizeof *r->batch_ids);
            if (!r->batch_ids)
                st = VR_ERROR(VR_ERR_OOM, "renderer: batch ids for %u triangles", tris);
        }
        if (st == VR_OK && r->gpu)
            st = vr_geometry_create(&r->geometry, m);
        if (st == VR_OK && r->gpu)
            st = vr_render_dev_create(r, tris, m->vertex_count);
    }
    if (st != VR_OK) {
        vr_renderer_destroy(r);
        return st;
    }
    *out = r;
    return VR_OK;
}

vr_status vr_renderer_create(vr_renderer **out, const vr_mesh *m, int use_gpu)
{
    return vr_renderer_make(out, m, use_gpu, NULL);
}

vr_status vr_renderer_create_streamed(vr_renderer **out, const vr_mesh *m, int use_gpu,
                                      const vr_stream_config *c)
{
    assert(c);
    return vr_renderer_make(out, m, use_gpu, c);
}

vr_status vr_renderer_set_gts(vr_renderer *r, const struct vr_gts *gts)
{
    assert(r);
    if (r->streamed) { /* each chunk's batches from its slices of the stream (GPU or CPU twins) */
        vr_status st = r->stream ? vr_stream_set_gts(r->stream, gts) : VR_OK;
        if (st == VR_OK && r->sortlast)
            st = vr_sortlast_set_gts(r->sortlast, gts);
        if (st == VR_OK)
            r->stream_gts = gts;
        return st;
    }
    if (!r->gpu)
        return VR_ERROR(VR_ERR_NO_DEVICE, "renderer: compressed batches need the GPU stage");
    if (!r->geometry)
        return VR_ERROR(VR_ERR_ARG, "renderer: compressed batches and sort-last parts do not "
                        "go together (each part's batches are cut from the index buffer)");
    vr_status st = vr_geometry_set_gts(r->geometry, gts);
    r->gts = st == VR_OK && gts;
    return st;
}

/* A streamed renderer's parts (`want` 0: none). Each part's stream owns its queue and frame (the
 * scene's device copies are shared per device, raster/stream.c), so the renderer's own stream
 * goes while parts are in use and comes back after, as the in-core buffers do below; it goes
 * before the parts are made, so its buffers and theirs are never held at once. */
static vr_status vr_renderer_stream_parts(vr_renderer *r, int want, uint32_t parts,
                                          vr_composite how)
{
    /* what vr_sortlast_create refuses, refused before anything goes; a later failure (memory,
     * devices, NCCL) leaves the one stream */
    if (want && (parts == 0 || parts > VR_PARTS_MAX))
        return VR_ERROR(VR_ERR_ARG, "sort-last: %u parts (1..%u)", parts, VR_PARTS_MAX);
    if (want && how == VR_COMPOSITE_NCCL && !r->gpu)
        return VR_ERROR(VR_ERR_ARG, "sort-last over NCCL needs the GPU renderer (not --cpu)");
    vr_sortlast_destroy(r->sortlast);
    r->sortlast = NULL;
    vr_stream_destroy(r->stream);
    r->stream = NULL;
    vr_status st = VR_OK;
    if (want)
        st = vr_sortlast_create_streamed(&r->sortlast, r->mesh, parts, r->gpu, how,
                                         &r->stream_config, r->stream_gts);
    if (r->sortlast)
        return VR_OK;
    /* no parts, or they failed: the one stream again (its failure is reported after the
     * parts', which came first) */
    vr_status back = vr_stream_create(&r->stream, r->mesh, &r->stream_config, r->gpu);
    if (back == VR_OK && r->stream_gts)
        back = vr_stream_set_gts(r->stream, r->stream_gts);
    if (back != VR_OK) {
        vr_stream_destroy(r->stream);
        r->stream = NULL;
    }
    return st != VR_OK ? st : back;
}

vr_status vr_renderer_set_parts(vr_renderer *r, uint32_t parts, vr_composite how)
{
    assert(r);
    vr_sortlast *s = NULL;
    const int want = parts != 1 || how != VR_COMPOSITE_LOCAL;
    if (r->streamed)
        return vr_renderer_stream_parts(r, want, parts, how);
    if (want) {
        vr_status st = vr_sortlast_create(&s, r->mesh, parts, r->gpu, how);
        if (st != VR_OK)
            return st;
    }
    vr_sortlast_destroy(r->sortlast);
    r->sortlast = s;
    /* the parts own their devices' buffers: the whole mesh's stage and frame go while they are
     * in use (memory per GPU is then its share of the scene), and come back after */
    r->batch_kind = r->d_batch_kind = r->counts_kind = -1;
    if (r->gpu && s) {
        vr_geometry_destroy(r->geometry);
        r->geometry = NULL;
        vr_render_dev_free(r);
    } else if (r->gpu && !r->geometry) {
        vr_status st = vr_geometry_create(&r->geometry, r->mesh);
        if (st == VR_OK)
            st = vr_render_dev_create(r, r->mesh->index_count / 3, r->mesh->vertex_count);
        if (st != VR_OK)
            return st;
    }
    return VR_OK;
}

vr_status vr_renderer_read_vis(vr_renderer *r, uint64_t *vis, size_t pixels)
{
    assert(r && vis);
    if (r->sortlast)
        return vr_sortlast_read_vis(r->sortlast, vis, pixels);
    if (r->streamed)
        return r->stream ? vr_stream_read_vis(r->stream, vis, pixels)
                         : VR_ERROR(VR_ERR_ARG, "renderer: no frame of %zu pixels to read", pixels);
    if (pixels == 0 || pixels != r->last_pixels)
        return VR_ERROR(VR_ERR_ARG, "renderer: no frame of %zu pixels to read", pixels);
    if (!r->gpu) {
        memcpy(vis, r->vis, pixels * sizeof *vis);
        return VR_OK;
    }
    return vr_render_dev_copy(vis, r->dev.d_vis, pixels * sizeof *vis,
                              "cudaMemcpy of the visibility buffer (download)");
}

vr_status vr_render_batch_ids(uint32_t *ids, uint32_t *batch_count, const vr_reuse_ops *ops,
                              const vr_mesh *m, const vr_reuse_params *cfg)
{
    assert(ids && batch_count && ops && m && cfg);
    *batch_count = 0;
    /* the stream's batches as the parts of sort-last rendering define them, in one part */
    vr_parts whole;
    vr_status st = vr_parts_make(&whole, ops, m, cfg, 1);
    if (st != VR_OK)
        return st;
    if (ops->plan) /* patch, meshlet: the stream is the plan's order, ids go by source triangle */
        vr_batch_plan_tri_batches(ids, &whole.plan);
    else
        memcpy(ids, whole.stream_batch, (size_t)whole.triangles * sizeof *ids);
    *batch_count = whole.batch_count;
    vr_parts_free(&whole);
    return VR_OK;
}

/* GPU: the counted run that refreshes invocations, queue length and the shade counts the
 * heatmap reads, when the strategy changed. The host round trip (the whole result comes back
 * through vr_geometry_download, the one call that returns the counters) is paid once per
 * strategy and reported as transfer_ms; the timed frame never waits for it. */
static vr_status vr_render_counts_gpu(vr_renderer *r, const vr_render_options *o,
                                      const vr_reuse_params *cfg, vr_render_stats *st)
{
    if (r->counts_kind == (int)o->strategy->kind)
        return VR_OK;
    vr_reuse_params counted = *cfg;
    counted.count = 1;
    vr_status s = vr_geometry_run(r->geometry, o->strategy, &counted, 0, NULL);
    if (s != VR_OK)
        return s;
    const double t0 = vr_now_ms();
    if ((s = vr_geometry_download(r->geometry, &r->result)) != VR_OK)
        return s;
    const uint32_t *d_counts = vr_geometry_device_shade_counts(r->geometry);
    if ((s = vr_render_dev_copy(r->dev.d_shade_counts, d_counts,
                                (size_t)r->mesh->vertex_count * sizeof(uint32_t),
                                "cudaMemcpy of the shade counts (device to device)")) != VR_OK)
        return s;
    st->transfer_ms = vr_now_ms() - t0;
    /* without culling every triangle owns its slot; anything else would leave stale slots in
     * the queue the rasterizer reads */
    const uint32_t tris = r->mesh->index_count / 3;
    if (r->result.counters.queue_count != tris || r->result.counters.overflow != 0)
        return VR_ERROR(VR_ERR_OVERFLOW, "renderer: %s wrote %u of %u triangles (%u overflowed)",
                        o->strategy->name, r->result.counters.queue_count, tris,
                        r->result.counters.overflow);
    r->counts_kind = (int)o->strategy->kind;
    r->counts_invocations = r->result.counters.invocations;
    r->counts_queue = r->result.counters.queue_count;
    return VR_OK;
}

static vr_status vr_render_frame_gpu(vr_renderer *r, uint8_t *rgba, const vr_render_options *o,
                                     const vr_reuse_params *cfg, const vr_resolve_params *shade_in,
                                     vr_render_stats *st)
{
    const vr_mesh *m = r->mesh;
    const uint32_t tris = m->index_count / 3;
    vr_status s;
    if (r->d_batch_kind != r->batch_kind) {
        if ((s = vr_render_dev_copy(r->dev.d_tri_batch, r->batch_ids,
                                    (size_t)tris * sizeof(uint32_t),
                                    "cudaMemcpy of the batch ids (upload)")) != VR_OK)
            return s;
        r->d_batch_kind = r->batch_kind;
    }
    if ((s = vr_render_counts_gpu(r, o, cfg, st)) != VR_OK)
        return s;
    const size_t pixels = (size_t)o->raster.width * o->raster.height;
    if ((s = vr_render_dev_pixels(r, pixels)) != VR_OK)
        return s;

    /* the frame: strategy (counting off) -> raster -> resolve on the geometry stage's queue */
    vr_reuse_params timed = *cfg;
    timed.count = 0;
    st->triangles = r->counts_queue; /* no culling in the geometry stage: every triangle */
    st->invocations = r->counts_invocations;
    vr_resolve_params shade = *shade_in;
    shade.shade_counts = r->dev.d_shade_counts;
    shade.vertex_count = m->vertex_count;
    shade.tri_batch = r->dev.d_tri_batch;
    shade.tri_batch_count = tris;
    if (o->graph && !r->gts) {
        if ((s = vr_render_graph_frame(r, o, &timed, &shade, st)) != VR_OK)
            return s;
    } else {
        float ms = 0;
        if ((s = vr_render_dev_mark(r, 0)) != VR_OK ||
            (s = vr_geometry_run(r->geometry, o->strategy, &timed, 0, &ms)) != VR_OK)
            return s;
        st->geometry_ms = ms;
        const vr_queue *q = vr_geometry_device_queue(r->geometry);
        r->dev.tiles_width = 0; /* writes every word and pixel: a graph frame starts over */
        if ((s = vr_raster_gpu(r->dev.d_vis, q, st->triangles, &o->raster, &st->raster,
                               r->dev.d_scratch, r->dev.stream)) != VR_OK ||
            (s = vr_resolve_gpu(r->dev.d_rgba, r->dev.d_vis, q, st->triangles, &o->raster,
                                &shade, &st->raster.resolve_ms, r->dev.stream)) != VR_OK ||
            (s = vr_render_dev_mark(r, 1)) != VR_OK ||
            (s = vr_render_dev_span(r, "the frame's end", &st->gpu_frame_ms)) != VR_OK)
            return s;
    }
    if (!rgba)
        return VR_OK;
    return vr_render_dev_download(r, rgba, pixels * 4, &st->raster.download_ms);
}

static vr_status vr_render_frame_cpu(vr_renderer *r, uint8_t *rgba, const vr_render_options *o,
                                     const vr_reuse_params *cfg, const vr_resolve_params *shade_in,
                                     vr_render_stats *st)
{
    const vr_mesh *m = r->mesh;
    const uint32_t tris = m->index_count / 3;
    const size_t pixels = (size_t)o->raster.width * o->raster.height;
    if (pixels > r->vis_capacity) {
        free(r->vis);
        r->vis_capacity = 0;
        if (!(r->vis = malloc(pixels * sizeof *r->vis)))
            return VR_ERROR(VR_ERR_OOM, "renderer: %ux%u visibility buffer", o->raster.width,
                            o->raster.height);
        r->vis_capacity = pixels;
    }
    if (!rgba) {
        if (pixels > r->rgba_capacity) {
            free(r->rgba);
            r->rgba_capacity = 0;
            if (!(r->rgba = malloc(pixels * 4)))
                return VR_ERROR(VR_ERR_OOM, "renderer: %ux%u image", o->raster.width,
                                o->raster.height);
            r->rgba_capacity = pixels;
        }
        rgba = r->rgba;
    }
    const double t0 = vr_now_ms();
    vr_status s = vr_geometry_ref(&r->result, o->strategy, m, cfg);
    if (s != VR_OK)
        return s;
    st->geometry_ms = vr_now_ms() - t0;
    st->invocations = r->result.counters.invocations;
    st->triangles = r->result.counters.queue_count;
    vr_resolve_params shade = *shade_in;
    shade.shade_counts = r->result.shade_counts;
    shade.vertex_count = m->vertex_count;
    shade.tri_batch = r->batch_ids;
    shade.tri_batch_count = tris;
    if ((s = vr_raster_ref(r->vis, &r->result.queue, st->triangles, &o->raster, &st->raster)) !=
        VR_OK)
        return s;
    return vr_resolve_ref(rgba, r->vis, &r->result.queue, st->triangles, &o->raster, &shade,
                          &st->raster.resolve_ms);
}

vr_status vr_renderer_draw(vr_renderer *r, uint8_t *rgba, const vr_render_options *o,
                           vr_render_stats *stats)
{
    assert(r && o && o->strategy);
    vr_render_stats local;
    vr_render_stats *st = stats ? stats : &local;
    memset(st, 0, sizeof *st);
    st->gpu = r->gpu;
    st->parts = 1;
    const double t_frame = vr_now_ms();
    r->last_pixels = 0;
    vr_status s = vr_raster_config_check(&o->raster);
    if (s != VR_OK)
        return s;

    vr_reuse_params cfg = vr_reuse_params_default();
    vr_camera_shader(&cfg.shader, &o->camera, o->raster.width, o->raster.height);
    cfg.shader.loop_iterations = o->loop_iterations;
    cfg.cull = 0; /* the rasterizer culls; the queue keeps every triangle, slot = stream position */
    cfg.count = 1;
    const vr_batch_limits limits = o->limits ? *o->limits : vr_batch_limits_paper();
    vr_batch_limits_apply(&cfg, &limits);
    cfg.patch_builder = o->patch_builder;
    if (memcmp(&limits, &r->limits, sizeof limits) != 0 || o->patch_builder != r->patch_builder) {
        /* batch ids and cached counts belong to the old limits (or plan): drop them all */
        r->limits = limits;
        r->patch_builder = o->patch_builder;
        r->batch_kind = r->d_batch_kind = r->counts_kind = -1;
    }

    vr_resolve_params shade = o->shade;
    shade.mode = o->mode;
    if (!r->sortlast && (r->streamed ? !r->stream : r->gpu && !r->geometry))
        return VR_ERROR(VR_ERR_OOM, "renderer: its buffers could not be made again after "
                        "vr_renderer_set_parts; create the renderer anew");
    if (r->sortlast) { /* the parts keep their own batch ids, counts and buffers */
        s = vr_sortlast_frame(r->sortlast, rgba, o, &cfg, &shade, st);
        goto done;
    }
    if (r->stream) { /* the chunks keep their own batches and buffers */
        s = vr_stream_frame(r->stream, rgba, o, &cfg, &shade, st);
        goto done;
    }
    /* batch ids depend on the strategy only (not on the camera): recomputed when it changes */
    if (r->batch_kind != (int)o->strategy->kind) {
        /* a plan on the GPU: the stage's own (not built a second time on the host) */
        s = r->gpu && o->strategy->plan
                ? vr_geometry_plan_batch_ids(r->geometry, o->strategy, &cfg, r->batch_ids,
                                             &r->batch_count)
                : vr_render_batch_ids(r->batch_ids, &r->batch_count, o->strategy, r->mesh, &cfg);
        if (s != VR_OK)
            return s;
        r->batch_kind = (int)o->strategy->kind;
    }
    s = r->gpu ? vr_render_frame_gpu(r, rgba, o, &cfg, &shade, st)
               : vr_render_frame_cpu(r, rgba, o, &cfg, &shade, st);
    st->batches = r->batch_count;
done:
    if (s != VR_OK)
        return s;
    st->frame_ms = vr_now_ms() - t_frame;
    r->last_pixels = (size_t)o->raster.width * o->raster.height;
    st->shaded_per_tri = st->triangles ? (double)st->invocations / st->triangles : 0;
    st->reuse = st->triangles ? 1.0 - (double)st->invocations / (3.0 * st->triangles) : 0;
    return VR_OK;
}
