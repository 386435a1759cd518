/* raster.h - a simple rasterizer for the triangle queue (reuse/reuse.h): near/far and guard-band
 * clipping in clip space, fixed-point edge functions (8 sub-pixel bits) with the top-left fill
 * rule, one thread per triangle over its bounding box (a warp for large boxes), and a 64-bit
 * visibility buffer (depth bits << 32 | queue slot, kept with atomicMin) that a resolve pass turns
 * into Lambert, heatmap (per-vertex shading counts, Kenzel et al. 2018 Fig. 7) or per-batch
 * colours.
 * raster.cu (GPU) and raster_ref.c (CPU twin) produce bit-identical visibility buffers and images.
 * Try: `vreuse_tests raster/`, `vreuse render bunny.obj --strategy naive,warp,hash --heatmap`.
 */
#ifndef VR_RASTER_H
#define VR_RASTER_H

#include <stddef.h>
#include <stdint.h>

#include "pipeline/vreuse.h"
#include "reuse/reuse.h"

#ifdef __cplusplus
extern "C" {
#endif

#define VR_RASTER_SUBPIXEL_LOG2 8                              /* fixed-point fraction bits */
#define VR_RASTER_SUBPIXEL (1 << VR_RASTER_SUBPIXEL_LOG2)
#define VR_RASTER_MAX_SIZE_LOG2 13
#define VR_RASTER_MAX_SIZE (1u << VR_RASTER_MAX_SIZE_LOG2)     /* 8192 pixels per side */
#define VR_VIS_EMPTY 0xffffffffffffffffull                     /* cleared visibility word */

/* How the GPU rasterizer spreads sub-triangles with large bounding boxes over warps (raster.cu
 * argues where each pays). The visibility buffer is the same word for word either way. */
typedef enum vr_raster_big_mode {
    VR_RASTER_BIG_LIST = 0, /* a list of entries of at most 64 tiles, a warp per entry */
    VR_RASTER_BIG_HP,       /* a record and a tile count per sub-triangle, a HistoPyramid over
                               the counts, a warp per 32 (sub-triangle, tile) work items */
    VR_RASTER_BIG_MODE_COUNT
} vr_raster_big_mode;

typedef struct vr_raster_config {
    uint32_t width, height; /* pixels, 1..VR_RASTER_MAX_SIZE each */
    int cull_back;          /* nonzero: drop back faces (front = counter-clockwise in NDC) */
    int big_mode;           /* vr_raster_big_mode (GPU only; the CPU twin has no large-box path) */
    uint32_t slot_base;     /* sort-last part (raster/sortlast.h): the stream position of the
                               queue's slot 0, added to every word's slot, so the parts' buffers
                               composite by minimum into the words of one whole run; 0 else */
} vr_raster_config;

/* "list", "hp" (the CLI's --big names), NULL past the modes. */
const char *vr_raster_big_mode_name(int mode);

/* Per-frame counts and stage times. Counts are equal on CPU and GPU. */
typedef struct vr_raster_stats {
    uint64_t triangles; /* queue slots read */
    uint64_t rejected;  /* outside one frustum plane, non-finite, back-facing or zero area */
    uint64_t clipped;   /* needed polygon clipping (near, far or guard band) */
    uint64_t fragments; /* covered pixel samples before the depth test */
    double upload_ms;   /* host -> device copies (vr_raster_device_upload), else 0 */
    double clear_ms;    /* visibility-buffer clear */
    double raster_ms;   /* rasterization (GPU: cudaEvents around the kernel; CPU: wall clock) */
    double resolve_ms;  /* resolve to RGBA8 */
    double download_ms; /* device -> host copies of the image (and vis buffer), else 0 */
} vr_raster_stats;

/* ---- rasterization ---------------------------------------------------------------------- */

/* Checks a configuration (sizes in range); VR_ERR_ARG naming the field otherwise. */
vr_status vr_raster_config_check(const vr_raster_config *cfg);

/* CPU twin. `vis` (host, width * height words, owned by the caller) is cleared to VR_VIS_EMPTY
 * and receives, per pixel, min over covering triangles of (depth bits << 32 | slot), depth the
 * float in [0, 1] of the pixel centre. `q` holds host arrays; slots 0..tri_count-1 are read
 * (tri_count <= q->capacity, < 2^32 - 1). `stats` may be NULL. */
vr_status vr_raster_ref(uint64_t *vis, const vr_queue *q, uint32_t tri_count,
                        const vr_raster_config *cfg, vr_raster_stats *stats);

/* Overdraw of the same coverage: counts[pixel] = how many (clipped sub-)triangles cover the
 * pixel centre, no depth test. Tests use it to prove "every pixel exactly once". */
vr_status vr_raster_ref_overdraw(uint32_t *counts, const vr_queue *q, uint32_t tri_count,
                                 const vr_raster_config *cfg);

/* GPU path: the same, with `d_vis` and the arrays of `d_q` in device memory. Clears, launches
 * one thread per triangle (and a warp per large sub-triangle), waits; stats->clear_ms and
 * raster_ms come from cudaEvents. `d_scratch`: vr_raster_scratch_bytes() of device memory the
 * caller keeps across frames, or NULL to allocate it in the call (a cudaMalloc/cudaFree pair per
 * frame). `stream` is a cudaStream_t or NULL. VR_ERR_NO_DEVICE in a build without CUDA. */
vr_status vr_raster_gpu(uint64_t *d_vis, const vr_queue *d_q, uint32_t tri_count,
                        const vr_raster_config *cfg, vr_raster_stats *stats, void *d_scratch,
                        void *stream);
size_t vr_raster_scratch_bytes(void);

/* ---- resolve ---------------------------------------------------------------------------- */

typedef enum vr_shade_mode {
    VR_SHADE_LAMBERT = 0, /* interpolated vertex normals, one directional light, two-sided */
    VR_SHADE_HEATMAP,     /* interpolated per-vertex shading counts: green 1 -> yellow -> red 6+ */
    VR_SHADE_BATCHES,     /* one colour per batch id, lit like LAMBERT */
    VR_SHADE_MODE_COUNT
} vr_shade_mode;

/* Pointers are host arrays for vr_resolve_ref and device arrays for vr_resolve_gpu. */
typedef struct vr_resolve_params {
    vr_shade_mode mode;
    const uint32_t *shade_counts; /* HEATMAP: vertex_count entries indexed by the queue's vertex ids */
    uint32_t vertex_count;
    const uint32_t *tri_batch;    /* BATCHES: batch id per source triangle id (the queue's tri_id) */
    uint32_t tri_batch_count;     /* entries of tri_batch */
    float light[3];               /* unit vector towards the light in view space (the normals' space) */
    uint32_t background;          /* RGBA8 packed with red in the low byte */
    int part;                     /* VR_RESOLVE_PART_*: what a pixel whose word names a slot
                                     outside this queue (another part's triangle) gets */
} vr_resolve_params;
#define VR_RESOLVE_PART_NONE 0 /* one whole run: the error colour (inconsistent data) */
#define VR_RESOLVE_PART_ZERO 1 /* sort-last part: 0, so the parts' images composite by maximum */
#define VR_RESOLVE_PART_KEEP 2 /* streamed chunk: left as it is (another chunk resolves it) */

/* Lambert, light from the upper left behind the viewer, dark grey background. */
vr_resolve_params vr_resolve_params_default(void);

/* Colour a pixel gets when its data is inconsistent (slot or vertex id out of range): magenta. */
#define VR_RESOLVE_ERROR_RGBA 0xffff00ffu

/* CPU twin of the resolve: rgba (width * height * 4 bytes, row 0 at the top) from `vis`.
 * VR_ERR_ARG when the mode's array is missing. ms (may be NULL) gets the wall time. */
vr_status vr_resolve_ref(uint8_t *rgba, const uint64_t *vis, const vr_queue *q, uint32_t tri_count,
                         const vr_raster_config *cfg, const vr_resolve_params *p, double *ms);
/* GPU resolve: device rgba, vis, queue and arrays; waits; ms from cudaEvents. */
vr_status vr_resolve_gpu(uint8_t *d_rgba, const uint64_t *d_vis, const vr_queue *d_q,
                         uint32_t tri_count, const vr_raster_config *cfg,
                         const vr_resolve_params *p, double *ms, void *stream);

/* ---- one frame enqueued without a wait (the renderer's CUDA graph, raster/render.c) ------- *
 * vr_raster_gpu's clear and kernels followed by vr_resolve_gpu's kernel, in the same order and
 * with the same results, enqueued on `stream` without events or a host wait, so that the
 * sequence can be captured into a CUDA graph. frame_counts then waits for `stream` and reads the
 * counts of the last frame enqueued into stats (triangles, rejected, clipped, fragments; the
 * times are left as they are). d_tiles (NULL: the whole buffer is cleared, as vr_raster_gpu
 * does): a flag per 16 x 16 pixel tile, set up by vr_raster_frame_tiles; the caller then enqueues
 * the clear of the tiles the last frame flagged first (vr_raster_tiles_clear_enqueue, on this
 * stream or one this stream waits for), and the frame flags the tiles it writes and resolves
 * only the tiles this frame or the last one flagged - the same words and pixels, less memory
 * traffic where the mesh covers part of the image. */
vr_status vr_raster_frame_enqueue(uint8_t *d_rgba, uint64_t *d_vis, const vr_queue *d_q,
                                  uint32_t tri_count, const vr_raster_config *cfg,
                                  const vr_resolve_params *p, void *d_scratch, uint8_t *d_tiles,
                                  void *stream);
vr_status vr_raster_frame_counts(vr_raster_stats *stats, uint32_t tri_count, void *d_scratch,
                                 void *stream);
/* The clear that starts a frame with d_tiles: the words of the tiles the last frame flagged back
 * to empty. It touches only d_vis and d_tiles, so a graph may run it beside the geometry stage
 * (raster/render.c does). */
vr_status vr_raster_tiles_clear_enqueue(uint64_t *d_vis, const vr_raster_config *cfg,
                                        uint8_t *d_tiles, void *stream);

/* ---- streamed chunks (raster/stream.c) --------------------------------------------------- *
 * One frame over many queues in turn, one visibility buffer and one image: begin clears the
 * buffer and the running counts; each chunk rasterizes its queue into the buffer without
 * clearing it (its words carry cfg->slot_base, the chunk's first stream position, so the buffer
 * ends as one whole run's, word for word) and then resolves with VR_RESOLVE_PART_KEEP the pixels
 * whose current word is one of its triangles, before the next chunk overwrites the queue. The
 * pixel's final colour is written by the chunk of its final word. Everything is enqueued on
 * `stream` (a cudaStream_t) and not waited for; totals waits and returns the counts (triangles,
 * rejected, clipped, fragments) summed over the chunks. `d_scratch` as for vr_raster_gpu. */
vr_status vr_raster_stream_begin(uint64_t *d_vis, const vr_raster_config *cfg, void *d_scratch,
                                 void *stream);
vr_status vr_raster_stream_chunk(uint64_t *d_vis, const vr_queue *d_q, uint32_t tri_count,
                                 const vr_raster_config *cfg, void *d_scratch, void *stream);
vr_status vr_resolve_stream_chunk(uint8_t *d_rgba, const uint64_t *d_vis, const vr_queue *d_q,
                                  uint32_t tri_count, const vr_raster_config *cfg,
                                  const vr_resolve_params *p, void *stream);
vr_status vr_raster_stream_totals(vr_raster_stats *stats, void *d_scratch, void *stream);

/* ---- device frame: buffers that turn a queue into an image on the GPU --------------------- */

/* Owns device memory for frames of up to `tri_capacity` triangles and `vertex_count` vertex
 * ids at a width x height that may change per draw (the image buffers grow): a queue copy,
 * shade counts, per-triangle batch ids, the visibility buffer and the image. */
typedef struct vr_raster_device vr_raster_device;

vr_status vr_raster_device_create(vr_raster_device **out, uint32_t tri_capacity,
                                  uint32_t vertex_count);
void vr_raster_device_destroy(vr_raster_device *d); /* accepts NULL */

/* Copies a host queue (tri_count slots) and, when not NULL, shade counts (vertex_count) and
 * batch ids (tri_batch_count <= tri_capacity) to the device; stats->upload_ms gets the time. */
vr_status vr_raster_device_upload(vr_raster_device *d, const vr_queue *h_q, uint32_t tri_count,
                                  const uint32_t *h_shade_counts, const uint32_t *h_tri_batch,
                                  uint32_t tri_batch_count, vr_raster_stats *stats);

/* Rasterizes and resolves one frame and downloads it into `h_rgba` (and `h_vis` when not NULL).
 * `d_q` is a device queue (the geometry stage's own, no copy) or NULL for the uploaded one.
 * Only mode, light and background of `p` are read; the arrays are the uploaded ones. */
vr_status vr_raster_device_draw(vr_raster_device *d, uint8_t *h_rgba, uint64_t *h_vis,
                                const vr_queue *d_q, uint32_t tri_count,
                                const vr_raster_config *cfg, const vr_resolve_params *p,
                                vr_raster_stats *stats);

/* ---- camera (camera.c) ------------------------------------------------------------------ */

typedef struct vr_camera {
    float center[3]; /* orbit centre: the bounding-box centre */
    float radius;    /* bounding-sphere radius about center (farthest vertex), > 0 */
    float yaw;       /* degrees about +y; 0 looks along -z (the mesh's front faces +z) */
    float pitch;     /* degrees above the horizon, clamped to [-89, 89] */
    float zoom;      /* 1 fits the bounding sphere into the view; 2 halves the distance */
    float fovy;      /* vertical field of view in degrees, 10..120 */
} vr_camera;

/* Frames mesh `m`: centre and radius from its bounds, yaw 0, pitch 15, zoom 1, fovy 40. */
void vr_camera_fit(vr_camera *c, const vr_mesh *m);
/* Writes the camera's MVP (perspective, near/far around the bounding sphere) and normal
 * matrix (the view rotation) into `s` for an image of width x height; keeps loop_iterations. */
void vr_camera_shader(vr_shader *s, const vr_camera *c, uint32_t width, uint32_t height);

/* The camera the tests and `vreuse bench` use: vr_camera_fit on a square image, orbiting by `yaw`
 * radians, so roughly half of a closed mesh faces away (culling has work). loop_iterations is
 * left 0. */
void vr_camera_orbit_shader(vr_shader *s, const vr_mesh *m, float yaw);

/* ---- frame driver (render.c): geometry stage -> rasterizer -> resolve ---------------------- */

/* What one frame draws. */
typedef struct vr_render_options {
    const vr_reuse_ops *strategy; /* geometry-stage strategy (reuse/ registry row) */
    uint32_t loop_iterations;     /* synthetic shader load (vr_shader.loop_iterations) */
    vr_shade_mode mode;
    vr_camera camera;
    vr_raster_config raster;      /* image size, back-face culling */
    vr_resolve_params shade;      /* light and background; its arrays are ignored */
    const vr_batch_limits *limits; /* the strategy's batch limits (block, N_u, max indices, warp
                                      batch), or NULL: the paper's (vr_batch_limits_paper) */
    int patch_builder;            /* strategy patch: vr_reuse_params.patch_builder (0 cpu) */
    int graph;                    /* GPU, in-core: 1 replays the frame's kernels as one CUDA graph
                                     (captured when the options change, updated in place when
                                     only parameters such as the camera did), so no host wait or
                                     launch gap lies between the stages; the stage times are then
                                     not measured, gpu_frame_ms is. 0: stage by stage, each
                                     timed. Same image and counts either way. Frames of
                                     compressed batches (vr_renderer_set_gts) run stage by
                                     stage: their error word is checked after every run. */
} vr_render_options;

/* Counts and stage times of one frame. */
typedef struct vr_render_stats {
    int gpu;                /* 1: GPU geometry stage and rasterizer, 0: CPU twins */
    double geometry_ms;     /* GPU: cudaEvents around the strategy's kernels (counting off);
                               CPU: wall time of the CPU twin (counting on) */
    double transfer_ms;     /* GPU: queue download + upload between the stages (see render.c) */
    uint64_t invocations;   /* vertex-shader invocations of the strategy */
    uint32_t triangles;     /* queue length */
    uint32_t batches;       /* batches the strategy formed (BATCHES mode colours them) */
    double shaded_per_tri;  /* invocations / triangles */
    double reuse;           /* 1 - invocations / (3 * triangles) */
    vr_raster_stats raster; /* rasterizer and resolve (sort-last: counts summed over the parts,
                               times the slowest part's) */
    uint32_t parts;         /* sort-last parts (vr_renderer_set_parts), 1 for one run */
    double composite_ms;    /* sort-last: the visibility buffers' minimum and the images'
                               maximum (the slowest part's, cudaEvents), else 0 */
    double composite_vis_ms; /* of which the visibility buffers' minimum */
    double frame_ms;        /* wall clock of the whole vr_renderer_draw */
    double gpu_frame_ms;    /* GPU, in-core: cudaEvents from the frame's first device work to its
                               image (without the download): the device's own frame time, with
                               the host's waits between stages when not a graph */
    int graph;              /* 1: the frame ran as a CUDA graph (vr_render_options.graph) */
    /* streamed renderers (vr_renderer_create_streamed), else 0 */
    uint32_t chunks;         /* chunks of the frame */
    uint64_t pipeline_bytes; /* GPU: device memory of the pipeline - queue, workspace, staging
                                slots, visibility buffer, image, raster scratch - which does not
                                grow with the scene */
    uint64_t scene_bytes;    /* GPU: device memory of the scene's arrays (VR_STREAM_DEVICE) */
    uint64_t scene_shared_bytes; /* of scene_bytes, the copies every stream on the device reads
                                    (positions, normals, the mesh's indices or the compressed
                                    stream): sort-last parts on one device hold them once */
    uint64_t copied_bytes;   /* GPU: host-to-device bytes the frame copied */
    double stream_ms;        /* GPU: cudaEvents around all of the frame's chunks (geometry,
                                raster, resolve and the copies they wait for) */
} vr_render_stats;

/* Owns every buffer a frame of mesh `m` needs (host, and device when `use_gpu`); `m` must stay
 * alive and unchanged until destroy. use_gpu without a device returns VR_ERR_NO_DEVICE. */
typedef struct vr_renderer vr_renderer;
vr_status vr_renderer_create(vr_renderer **out, const vr_mesh *m, int use_gpu);

/* Bounded streaming (raster/stream.c): a renderer whose device memory does not grow with the
 * scene. The strategy's batches are cut into chunks of at most queue_bytes /
 * VR_QUEUE_BYTES_PER_TRIANGLE triangles (a batch is never split, so invocations equal one run's);
 * the chunks run in turn through one queue, one visibility buffer and one image, each
 * rasterizing into the buffer and resolving the pixels it holds, so the visibility buffer and
 * the image equal the in-core renderer's word for word. Where the scene's arrays live: */
typedef enum vr_stream_source {
    VR_STREAM_DEVICE = 0, /* uploaded once (the scene must fit the GPU; the pipeline is bounded) */
    VR_STREAM_HOST,       /* stay in host memory (page-locked with cudaHostRegister); each chunk
                             copies its indices and its window [lowest, highest vertex id] of the
                             vertex arrays into a staging slot while the previous chunk runs */
    VR_STREAM_SOURCE_COUNT
} vr_stream_source;
extern const char *const vr_stream_source_names[VR_STREAM_SOURCE_COUNT]; /* "device", "host" */
typedef struct vr_stream_config {
    uint64_t queue_bytes;    /* the queue's budget (chunk capacity in triangles times 112) */
    vr_stream_source source;
    uint32_t part, parts;    /* sort-last (raster/sortlast.c): only the batches of part `part` of
                                `parts` (pipeline/stage/parts.h); parts 0 or 1: every batch */
} vr_stream_config;
#define VR_STREAM_QUEUE_BYTES_DEFAULT (1024ull << 20)
/* Like vr_renderer_create, without any buffer sized by the whole mesh. Frames refuse the
 * heatmap (per-vertex counts of the whole scene) and multi (VR_ERR_ARG). Sort-last parts
 * (vr_renderer_set_parts) stream each part's share in chunks of its own, on the CPU twins for
 * now (VR_ERR_ARG on a GPU renderer); `c->part` and `c->parts` are the renderer's to set.
 * Compressed input (vr_renderer_set_gts) is taken too: each chunk decodes its batches from the
 * stream (VR_STREAM_HOST: from its slices of C, INC and S, copied instead of its indices), on
 * the GPU and in the CPU twins. */
vr_status vr_renderer_create_streamed(vr_renderer **out, const vr_mesh *m, int use_gpu,
                                      const vr_stream_config *c);
void vr_renderer_destroy(vr_renderer *r); /* accepts NULL */
/* GPU renderers: later frames decode each geometry batch from `gts` (the compressed form of the
 * renderer's mesh, alive while set; NULL switches back): vr_geometry_set_gts. Strategies
 * without a per-batch decoder then fail with VR_ERR_ARG. VR_ERR_NO_DEVICE on an in-core CPU
 * renderer; a streamed renderer takes it on the GPU and the CPU twins (raster/stream.h). */
struct vr_gts;
vr_status vr_renderer_set_gts(vr_renderer *r, const struct vr_gts *gts);
/* Renders one frame into `rgba` (o->raster.width * height * 4 bytes, host, owned by caller). */
vr_status vr_renderer_draw(vr_renderer *r, uint8_t *rgba, const vr_render_options *o,
                           vr_render_stats *stats);
/* Sort-last rendering (raster/sortlast.c): later frames cut the strategy's batches into `parts`
 * parts of equal batch counts (pipeline/stage/parts.h); each part runs the geometry stage and the
 * rasterizer into its own visibility buffer, the buffers are composited by an element-wise
 * minimum (a word is depth << 32 | stream position: the nearest wins, ties to the earlier
 * triangle, as in one run), each part resolves the pixels its triangles won, and the images are
 * composited by maximum. Image, visibility words, invocations and counts equal one run's for
 * every strategy but multi, which cannot be cut (VR_ERR_ARG at the next frame). */
typedef enum vr_composite {
    VR_COMPOSITE_LOCAL = 0, /* every part on the renderer's device (or its CPU), composited
                               there: kernels (loops) instead of a transport, for one GPU and
                               for tests */
    VR_COMPOSITE_NCCL,      /* part k on device k, one NCCL rank each (ncclCommInitAll):
                               ncclAllReduce min of the visibility buffers, ncclReduce max of the
                               images to device 0; shade counts and counters summed with
                               ncclAllReduce */
    VR_COMPOSITE_COUNT
} vr_composite;
/* parts 1 with LOCAL switches back to one run. NCCL needs a GPU renderer and `parts` devices
 * (parts 1: one rank); VR_ERR_ARG for a CPU renderer or fewer devices, or a build without NCCL;
 * VR_ERR_NO_DEVICE when libnccl.so.2 cannot be loaded. Device memory per part: its share of the
 * mesh's indices, the whole vertex buffer and its share of the queue. */
vr_status vr_renderer_set_parts(vr_renderer *r, uint32_t parts, vr_composite how);
extern const char *const vr_composite_names[VR_COMPOSITE_COUNT]; /* "local", "nccl" */
/* Copies the last frame's visibility buffer (sort-last: the composite) into `vis` (host,
 * `pixels` words: the frame's width * height). VR_ERR_ARG before any frame or for another size. */
vr_status vr_renderer_read_vis(vr_renderer *r, uint64_t *vis, size_t pixels);

/* Batch id of every triangle as strategy `ops` forms batches on mesh `m` (dynamic: batches of
 * vr_batches_dynamic with N_u = max_unique; patch and meshlet: their plan's batches; warp:
 * static batches of batch_indices; naive and multi: thread blocks of block_size triangles).
 * `ids` gets triangles entries; returns the batch count through *batch_count. */
vr_status vr_render_batch_ids(uint32_t *ids, uint32_t *batch_count, const vr_reuse_ops *ops,
                              const vr_mesh *m, const vr_reuse_params *cfg);

/* ---- images (image.c) --------------------------------------------------------------------- */

/* Writes an 8-bit RGBA PNG (row 0 at the top). VR_ERR_IO naming the path and libpng's reason. */
vr_status vr_image_write_png(const char *path, const uint8_t *rgba, uint32_t width,
                             uint32_t height);
/* Reads any PNG as 8-bit RGBA; *rgba is malloc'd and owned by the caller. */
vr_status vr_image_read_png(uint8_t **rgba, uint32_t *width, uint32_t *height, const char *path);
/* Copies a src_w x src_h image into dst (dst_w x dst_h) at (x, y), clipped to dst. */
void vr_image_blit(uint8_t *dst, uint32_t dst_w, uint32_t dst_h, int x, int y, const uint8_t *src,
                   uint32_t src_w, uint32_t src_h);
/* Fills a rectangle (clipped) with an RGBA8 colour packed red-low. */
void vr_image_fill(uint8_t *rgba, uint32_t w, uint32_t h, int x, int y, int rw, int rh,
                   uint32_t colour);
/* Draws ASCII text (5x7 font, upper case; other bytes as '?') scaled by `scale` >= 1 at (x, y);
 * returns the width drawn in pixels. */
int vr_image_text(uint8_t *rgba, uint32_t w, uint32_t h, int x, int y, int scale, uint32_t colour,
                  const char *text);
/* Draws the heatmap legend (ramp from 1 to 6+ with tick labels) into a rw x rh box at (x, y). */
void vr_image_heat_legend(uint8_t *rgba, uint32_t w, uint32_t h, int x, int y, int rw, int rh,
                          int scale);

#ifdef __cplusplus
}
#endif
#endif
