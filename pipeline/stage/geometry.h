/* geometry.h - host driver of the geometry stage: runs any strategy of the reuse/ registry on
 * a whole mesh, on the GPU (vr_geometry_*, pipeline/geometry.cu) or through its CPU twin
 * (vr_geometry_ref, pipeline/geometry_ref.c), and compares two results slot by slot.
 * Tests (`vreuse_tests gpu/`) and `vreuse bench` are built on it. Plain C; no CUDA types here,
 * and a build without CUDA links stubs that report VR_ERR_NO_DEVICE.
 */
#ifndef VR_GEOMETRY_H
#define VR_GEOMETRY_H

#include <stdint.h>
#include <stdio.h>

#include "reuse/reuse.h"
#include "pipeline/vreuse.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- device ------------------------------------------------------------------------------ */

/* 1 when this build has CUDA and a device can be used, else 0 (never fails loudly). */
int vr_gpu_available(void);
/* Name of device 0 ("NVIDIA H100 80GB HBM3"), or why there is none ("no CUDA device: ..."). */
const char *vr_gpu_device_name(void);
/* CUDA driver and runtime versions as 1000 * major + 10 * minor (13000 = 13.0), SM count and
 * SM clock in kHz; any pointer may be NULL. VR_ERR_NO_DEVICE without a device. */
vr_status vr_gpu_device_info(int *driver_version, int *runtime_version, int *sm_count,
                             int *clock_khz);
/* Device 0's shape for occupancy-aware batch limits (vr_batch_limits_auto): SM count, most
 * resident threads and blocks per SM. VR_ERR_NO_DEVICE without a device. */
vr_status vr_gpu_shape_query(vr_gpu_shape *out);
/* Measured device-to-device copy bandwidth in bytes per second, counting bytes read plus bytes
 * written: a 2 x 256 MiB cudaMemcpy, one warm-up then the best of 10 (H100: about 3e12). */
vr_status vr_gpu_copy_bandwidth(double *bytes_per_second);
/* Measured host-to-device copy rate in bytes per second from page-locked memory: a 256 MiB
 * cudaMemcpy, one warm-up then the best of 10 (PCIe 5 x16: about 50e9). The peak the streamed
 * renderer's host copies are measured against. */
vr_status vr_gpu_h2d_bandwidth(double *bytes_per_second);

/* ---- host results ------------------------------------------------------------------------ */

/* A geometry-stage result on the host: queue, counters, per-vertex shading counts. */
typedef struct vr_geometry_result {
    vr_queue queue;         /* host arrays, capacity = triangles */
    vr_counters counters;
    uint32_t *shade_counts; /* vertex_count host array */
    uint32_t vertex_count;
    uint32_t triangles;     /* of the mesh the result belongs to */
} vr_geometry_result;

/* Allocates every array of `r` (zeroed); VR_ERR_OOM naming the size when that fails. */
vr_status vr_geometry_result_alloc(vr_geometry_result *r, uint32_t triangles,
                                   uint32_t vertex_count);
/* Frees the arrays; accepts NULL and a zeroed struct. */
void vr_geometry_result_free(vr_geometry_result *r);

/* Dynamic batch starts of a mesh for N_u = max_unique and at most max_indices indices per batch
 * (vr_batches_dynamic). *starts (malloc'd, owned by the caller) gets batch_count + 1 entries.
 * VR_ERR_ARG when max_unique < 3 or max_indices is not a multiple of 3 in
 * 3..VR_MAX_INDICES_MAX, VR_ERR_OOM on allocation failure. */
vr_status vr_geometry_dyn_batches(uint32_t **starts, uint32_t *batch_count, const vr_mesh *m,
                                  uint32_t max_unique, uint32_t max_indices);

/* The static plan of a strategy with one (ops->plan: patch, meshlet) for mesh `m` and N_u =
 * max_unique, max_indices (load-time preprocessing) with its cluster bounds
 * (vr_batch_plan_bounds, part of the building), and, when `indices` is not NULL, the
 * plan-ordered index buffer in *indices (malloc'd, index_count entries; the caller frees it and
 * the plan, vr_batch_plan_free). patch_builder: vr_reuse_params.patch_builder (on the CPU: the
 * GPU builder's reference). VR_ERR_ARG when ops has no plan or a limit is out of range. */
vr_status vr_geometry_plan(vr_batch_plan *plan, uint32_t **indices, const vr_reuse_ops *ops,
                           const vr_mesh *m, uint32_t max_unique, uint32_t max_indices,
                           int patch_builder);

/* The rest of vr_geometry_plan for a plan built elsewhere (the GPU patch builder): its cluster
 * bounds and, with `indices`, the plan-ordered index buffer. Frees the plan on failure; `who`
 * names it in errors. */
vr_status vr_geometry_plan_finish(vr_batch_plan *plan, uint32_t **indices, const vr_mesh *m,
                                  const char *who);

/* Runs the CPU twin ops->ref on mesh `m` (single-threaded: O(index_count) plus the shader load
 * per invocation) with the configuration fields of `cfg` (shader,
 * block_size, batch_indices, max_unique, max_indices, cull, count; its pointers and queue_store, a GPU-only
 * choice, are ignored) into `out`,
 * which must be allocated for m. Clears out's counters and shade counts and poisons its queue
 * (0xFF bytes: NaN floats, ~0 ids) first, like the GPU path. Computes dynamic batches and
 * static plans itself (a plan's time is part of the call: load-time work, not the stage's). */
vr_status vr_geometry_ref(vr_geometry_result *out, const vr_reuse_ops *ops, const vr_mesh *m,
                          const vr_reuse_params *cfg);

/* Batches given by the caller instead of computed from the mesh: the mesh is a part of a larger
 * stream (raster/sortlast.h cuts a run's batches into parts), and its batches must be exactly
 * the whole stream's. A dynamic strategy takes `starts` as its batch starts. A static plan
 * (patch, meshlet) takes the mesh as already in plan order - triangle t is plan position t, its
 * tri_id is t - with these starts and bounds, and builds no plan. naive, warp and multi ignore
 * them (their batches are fixed by the block size and the warp batch). Host arrays. */
typedef struct vr_batches_given {
    const uint32_t *starts;          /* count + 1 index offsets: 0 ... the mesh's index_count */
    uint32_t count;
    const vr_cluster_bounds *bounds; /* plans: count bounds (read with cluster culling), or NULL */
} vr_batches_given;

/* vr_geometry_ref with the batches `given` (NULL: as vr_geometry_ref). The strategy checks the
 * starts as it checks computed ones. With cfg->gts (host arrays; a dynamic strategy with
 * gts_input, one seed per given batch) each batch is decoded from the compressed stream instead
 * of read from m's indices, as vr_geometry_run_chunk does on the device (raster/stream.c). */
vr_status vr_geometry_ref_given(vr_geometry_result *out, const vr_reuse_ops *ops,
                                const vr_mesh *m, const vr_reuse_params *cfg,
                                const vr_batches_given *given);

/* How two results differ. Counts and ids must match exactly; clip and normal values may
 * differ by max(abs_tol, rel_tol * scale) where scale is the largest magnitude in `want`'s
 * array (GPU FMA contraction vs. CPU rounding, a few ulps). */
typedef struct vr_geometry_diff {
    uint64_t mismatches; /* counters, shade counts, slots, ids or values that differ */
    uint64_t compared;   /* triangles compared */
    uint64_t borderline; /* culling only: triangles kept on one side, culled on the other,
                            whose decision rounding can flip (not mismatches) */
    double max_abs;      /* largest |got - want| over clip and normal values */
    double max_rel;      /* largest |got - want| / scale */
} vr_geometry_diff;

#define VR_GEOMETRY_REL_TOL 1e-5

/* What vr_geometry_compare expects of the queues (its `cull` argument). */
typedef enum vr_compare_mode {
    VR_COMPARE_ALL = 0,      /* no culling: slot s holds the triangle at stream position s in
                                both (triangle s, but for a static plan) */
    VR_COMPARE_KEPT_SET = 1, /* culling, any order (queue modes collate, atomic): the same kept
                                triangles */
    VR_COMPARE_KEPT_ORDER = 2 /* culling in input order (queue mode ink): the same kept
                                triangles in the reference's order - the order of the stream
                                the batcher read, the plan's for patch and meshlet - so the
                                same slots up to borderline ones */
} vr_compare_mode;
/* The comparison a run with configuration `cfg` promises against its CPU twin: ink, cub and hp
 * keep the order of the stream the batcher read, collate and atomic only the set. */
vr_compare_mode vr_geometry_compare_mode(const vr_reuse_params *cfg);

/* Compares `got` against `want` (same mesh) as `cull` (VR_COMPARE_*) says. Without culling,
 * slot s must hold triangle s in both; with culling, the kept triangle ids must agree - as
 * sets, or slot by slot in increasing order - up to borderline triangles (see
 * vr_geometry_diff), each triangle kept by both must carry want's vertex ids and values, and
 * the culled counts per reason may differ by at most the borderline count. `count` != 0
 * compares invocations and shade counts as well. Prints the first 5 mismatches to `log` (may
 * be NULL) prefixed with `what`. Returns d->mismatches. */
uint64_t vr_geometry_compare(vr_geometry_diff *d, const vr_geometry_result *got,
                             const vr_geometry_result *want, int cull, int count, FILE *log,
                             const char *what);

/* ---- GPU context ------------------------------------------------------------------------- */

/* A mesh uploaded once (indices, positions, normals) plus every output buffer sized for it:
 * queue capacity = triangles, counters, per-vertex shade counts, strategy workspace (grown
 * on demand to the largest temp_bytes seen), dynamic batch starts (recomputed when N_u
 * or max_indices changes), the last static plan (patch or meshlet: its plan-ordered indices,
 * triangle ids and batch starts, 16 bytes per triangle, and its cluster bounds, 56 bytes per
 * batch; rebuilt on the host when the strategy, N_u or max_indices changes), a stream and two timing events. All device memory is owned by
 * the context. */
typedef struct vr_geometry vr_geometry;

/* Uploads `m` (validated with vr_mesh_validate first; VR_ERR_FORMAT when it fails).
 * VR_ERR_NO_DEVICE without CUDA, VR_ERR_OOM naming the buffer when device memory runs out.
 * Device memory: the mesh (12 bytes per index triangle, 24 per vertex), the queue
 * (VR_QUEUE_BYTES_PER_TRIANGLE = 112 per triangle), 4 per vertex of shade counts, the batch
 * starts and the largest strategy workspace run so far; the first run culling into a cub or
 * hp queue adds a staging queue (112 per triangle), keys and kept ids (8) and a compaction
 * context (about 15, vr_compact_temp_bytes). */
vr_status vr_geometry_create(vr_geometry **out, const vr_mesh *m);
/* vr_geometry_create for another index range of owner's vertices: `m` has the same positions
 * and normals (the same host arrays and vertex_count) as the mesh `owner` was made from, and g
 * reads owner's device and host copies of them instead of making its own (24 bytes per vertex of
 * device memory and 12 of host memory fewer). On the current device, which must be owner's;
 * owner outlives g. VR_ERR_ARG when the vertex arrays differ. Sort-last parts on one device. */
vr_status vr_geometry_create_sharing(vr_geometry **out, const vr_mesh *m,
                                     const vr_geometry *owner);
void vr_geometry_destroy(vr_geometry *g); /* accepts NULL */

/* Runs strategy `ops` with the configuration fields of `cfg` (as for vr_geometry_ref, plus
 * queue_store: 0 direct, 1 warp-staged queue stores, the same queue either way; VR_ERR_ARG for
 * any other value) and waits for it. Counters and shade counts are cleared first; with `poison`
 * the queue and the workspace are filled with 0xFF bytes too, so a slot the strategy forgot
 * reads NaN / ~0.
 * *ms (may be NULL) gets the GPU time between two events around ops->run alone: kernels only,
 * no clears or copies (culling into a cub or hp queue: the batcher, the compaction and the
 * gather into the queue). An asynchronous fault is reported here as VR_ERR_CUDA. */
vr_status vr_geometry_run(vr_geometry *g, const vr_reuse_ops *ops, const vr_reuse_params *cfg,
                          int poison, float *ms);

/* The same run split for a frame captured into a CUDA graph (raster/render.c). prepare does
 * what a run of `ops` with `cfg` needs from the host first (batches, plan, workspace: uploads
 * and allocations) and waits for it. enqueue then enqueues the clears and the strategy's
 * kernels on `stream` (a cudaStream_t, NULL: the context's) and returns without waiting, no
 * timing: only the launches are checked, a fault surfaces at the caller's wait. Uncounted and
 * unculled, it is a replay (vr_reuse_params.replay): the counters are neither cleared nor
 * filled, so run the same configuration counted once first to check it. VR_ERR_ARG for
 * runs whose results are checked on the host afterwards (compressed input, culling into an ink,
 * collate, cub or hp queue): those go through vr_geometry_run. */
vr_status vr_geometry_prepare(vr_geometry *g, const vr_reuse_ops *ops, const vr_reuse_params *cfg);
vr_status vr_geometry_enqueue(vr_geometry *g, const vr_reuse_ops *ops, const vr_reuse_params *cfg,
                              void *stream);

/* The batch of every source triangle (ids: the stage's triangle count) under the static plan
 * `ops` (patch, meshlet) that vr_geometry_run uses for cfg's limits and patch_builder: the
 * stage's own plan (built or reused, then downloaded), so a caller never builds it a second
 * time on the host - with the GPU builder, the host's would be its slow reference.
 * VR_ERR_ARG when ops has no plan; VR_ERR_CUDA, VR_ERR_OOM. */
vr_status vr_geometry_plan_batch_ids(vr_geometry *g, const vr_reuse_ops *ops,
                                     const vr_reuse_params *cfg, uint32_t *ids,
                                     uint32_t *batch_count);

/* Makes later runs use the batches `given` (copied to the device here) instead of computing
 * them; NULL switches back. Runs with compressed input refuse them (VR_ERR_ARG). VR_ERR_ARG when
 * the starts do not end at the uploaded index count; VR_ERR_OOM, VR_ERR_CUDA. */
vr_status vr_geometry_set_batches(vr_geometry *g, const vr_batches_given *given);

/* Makes later runs read their indices from `d_indices` (device memory, index_count entries, owned
 * by the caller and left alive while runs use it) instead of the uploaded copy; NULL switches
 * back. For a producer on the device, e.g. the GTS decoder (vr_gts_gpu_device_indices). The
 * buffer must hold the uploaded mesh's indices exactly: dynamic batch starts stay those computed
 * on the host from the uploaded mesh (batch boundaries are load-time analysis). The caller
 * orders the producer before vr_geometry_run (the GTS decoder synchronizes its stream). */
void vr_geometry_set_device_indices(vr_geometry *g, const uint32_t *d_indices);

/* Compressed input through the whole stage: later runs of strategies that decode per batch
 * (ops->gts_input: hash) read no index buffer; each dynamic batch decodes its triangles from
 * `gts` in shared memory (pipeline/gts_batch.h). `gts` must be the compressed form of the
 * uploaded mesh (its decoded triangles = the uploaded indices, e.g. a vr_gts_decode_mesh of it)
 * and stay alive while set. C, INC and S are uploaded here; one seed per dynamic batch is
 * computed on the host with the batch starts (load-time analysis). Runs of other strategies
 * then fail with VR_ERR_ARG; a malformed stream makes vr_geometry_run return VR_ERR_FORMAT.
 * NULL switches back to the index buffer. VR_ERR_ARG when the counts differ from the mesh. */
struct vr_gts;
vr_status vr_geometry_set_gts(vr_geometry *g, const struct vr_gts *gts);
/* The device arrays and counts behind compressed runs (NULL when none is set), for tests that
 * damage the device copy to check that the kernels flag it and stay in bounds. */
struct vr_gts_batch_source;
const struct vr_gts_batch_source *vr_geometry_gts_source(const vr_geometry *g);

/* Copies the last run's queue, counters and shade counts into `out` (allocated for the same
 * mesh). */
vr_status vr_geometry_download(const vr_geometry *g, vr_geometry_result *out);

/* The last run's device queue (device pointers owned by the context, capacity = triangles) and
 * per-vertex shade counts (vertex_count, filled by a run with count != 0), for the stage that
 * consumes the queue on the device (raster/). NULL without CUDA. */
const vr_queue *vr_geometry_device_queue(const vr_geometry *g);
const uint32_t *vr_geometry_device_shade_counts(const vr_geometry *g);

/* ---- bounded contexts: a stream in chunks ------------------------------------------------- *
 * Device memory that does not grow with the scene (raster/stream.c): a queue of max_triangles
 * slots, counters and a workspace, and nothing of the mesh. The caller owns the scene's device
 * arrays (resident, or staged a chunk at a time) and runs the chunks one after another on one
 * stream; each chunk's batches are the whole stream's batches over its range (pipeline/stage/
 * parts.h, vr_parts_make_bounded), so the chunks' invocations add up to one run's exactly. */

/* Totals over the chunks since the last reset, kept on the device (no host round trip per
 * chunk). */
typedef struct vr_geometry_tally {
    unsigned long long invocations; /* vertex-shader invocations (runs with count != 0) */
    unsigned long long triangles;   /* queue slots written (runs with count != 0) */
    uint32_t chunks;                /* chunks run */
    uint32_t bad_chunks;            /* chunks that overflowed or (count != 0) did not write
                                       each of their slots once */
    uint32_t gts_err;               /* VR_GTS_ERR_* bits of compressed chunks (0: all good) */
} vr_geometry_tally;

/* One chunk: device pointers owned by the caller, alive until the stream has run it. */
typedef struct vr_geometry_chunk {
    const uint32_t *d_indices;    /* 3 * triangles indices (a plan's chunk: in plan order) */
    uint32_t triangles;           /* <= the context's max_triangles */
    const float *d_positions;     /* indexable by every vertex id of the chunk (3 floats each) */
    const float *d_normals;
    uint32_t vertex_count;        /* the chunk's vertex ids are below it */
    const uint32_t *d_starts;     /* dynamic strategies and plans: batch_count + 1 index offsets
                                     from 0 to 3 * triangles, else NULL */
    uint32_t batch_count;
    const vr_cluster_bounds *d_bounds; /* plans: batch_count bounds, or NULL */
    const struct vr_gts_batch_source *gts; /* compressed chunk (host struct, device arrays), or
                                     NULL: d_indices is read. Its batches decode from the stream
                                     (tri_base, seed_after, the slices: gts_batch.h); err is
                                     ignored, errors go to the tally's gts_err */
} vr_geometry_chunk;

/* VR_ERR_ARG for 0 triangles, VR_ERR_NO_DEVICE, VR_ERR_OOM naming the buffer. Its tally starts
 * at zero. vr_geometry_run and the mesh calls refuse a bounded context (VR_ERR_ARG). */
vr_status vr_geometry_create_bounded(vr_geometry **out, uint32_t max_triangles);
/* Enqueues chunk `c` of strategy `ops` (cfg as for vr_geometry_run; its count gives
 * invocations, never per-vertex counts) on `stream` (a cudaStream_t, NULL: the context's),
 * writing queue slots 0 .. triangles - 1, and adds its counters to the tally. Does not wait:
 * the next chunk on the same stream may reuse the queue once the caller's consumers of this
 * one are enqueued. VR_ERR_ARG for multi (it shades the whole vertex buffer), culling into an
 * ink / collate / cub / hp queue, a chunk over the capacity or without its starts, and a
 * compressed chunk of a strategy that cannot decode it (only hash can). */
vr_status vr_geometry_run_chunk(vr_geometry *g, const vr_reuse_ops *ops,
                                const vr_reuse_params *cfg, const vr_geometry_chunk *c,
                                void *stream);
vr_status vr_geometry_tally_reset(vr_geometry *g, void *stream);
/* Waits for `stream` (NULL: the context's) and copies the tally out; a fault of any chunk's
 * kernels surfaces here as VR_ERR_CUDA. */
vr_status vr_geometry_tally_read(vr_geometry *g, vr_geometry_tally *out, void *stream);
/* Device bytes a bounded context holds: queue, counters, tally and the largest workspace so
 * far. */
size_t vr_geometry_device_bytes(const vr_geometry *g);

#ifdef __cplusplus
}
#endif
#endif
