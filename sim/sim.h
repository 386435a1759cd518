/* sim.h - CPU simulator of vertex reuse: how many vertex-shader invocations an index buffer costs
 * under an ideal cache, k-entry FIFO and LRU post-transform caches, the per-multiprocessor
 * parallel cache of Kenzel et al. 2018 (Sec. 4.1), statically batched warp voting (Algorithm 1)
 * and dynamic batching (Sec. 3.4, the batches of reuse/batches.h), and the static plans of
 * reuse/patches.h (RXMesh-style patches, meshoptimizer's meshlets). Pure C, no CUDA, no assimp.
 * reuse = 1 - shaded_vertices / indices, the paper's Table 1 measure.
 * Try: `vreuse_tests sim/`, `vreuse sim sphere --plot sphere.svg`.
 */
#ifndef VR_SIM_H
#define VR_SIM_H

#include <stdint.h>
#include <stdio.h>

#include "pipeline/limits.h"
#include "pipeline/vreuse.h"

#ifdef __cplusplus
extern "C" {
#endif

#define VR_SIM_MAX_CACHES 32   /* FIFO / LRU sizes per sweep */
#define VR_SIM_MAX_PARALLEL 8  /* parallel-cache sizes per run */
#define VR_SIM_MAX_THREADS 16  /* worker threads of vr_sim_run_all */
/* Parallel-cache bounds: every multiprocessor is walked even when it gets no work, so an absurd
 * count would run for minutes; real GPUs have at most a few hundred. */
#define VR_SIM_MAX_SMS 4096u
#define VR_SIM_MAX_WAVE (1u << 24)       /* concurrent invocations per multiprocessor */
#define VR_SIM_MAX_CACHE_BYTES (1u << 30) /* cache bytes per multiprocessor */

/* How the index buffer is dealt to the multiprocessors of the parallel cache. */
typedef enum vr_sim_assign {
    VR_SIM_CONTIGUOUS = 0, /* buffer split into sm_count contiguous runs of whole triangles */
    VR_SIM_ROUNDROBIN,     /* wave_size-index chunks dealt round-robin to the multiprocessors */
    VR_SIM_ASSIGN_COUNT
} vr_sim_assign;

const char *vr_sim_assign_name(vr_sim_assign a); /* "contiguous", "roundrobin" */

/* Statistics of one simulated strategy; field names match vr_stats of the GPU stage. */
typedef struct vr_sim_result {
    uint64_t indices;         /* index-buffer length (3 * triangles) */
    uint64_t triangles;
    uint64_t shaded_vertices; /* vertex-shader invocations */
    uint64_t batches;         /* warp: warp rounds; dynamic: batches; parallel: waves; else 0 */
    uint64_t passes;          /* shading passes of a 32-lane warp, which cost the same full or
                                 not under a compute-bound shader: naive 3 per 32 triangles;
                                 multi its vertices in whole warps; warp its rounds; dynamic
                                 batches and plans each batch's distinct vertices in whole
                                 warps; 0 for the caches. naive's passes / a strategy's = the
                                 speed-up such a shader allows it */
    double reuse;             /* 1 - shaded_vertices / indices; < 0 when vertices are shaded more
                                 often than referenced (warp voting on a triangle soup) */
    double shaded_per_tri;    /* shaded_vertices / triangles (ACMR), 0.5..3 for usual meshes */
} vr_sim_result;

/* Everything vr_sim_run_all simulates. Get one with vr_sim_config_default() and edit fields. */
typedef struct vr_sim_config {
    uint32_t fifo_sizes[VR_SIM_MAX_CACHES]; /* FIFO entries (vertices), each >= 1 */
    uint32_t fifo_count;                    /* 0..VR_SIM_MAX_CACHES; default 11 (4..4096) */
    uint32_t lru_sizes[VR_SIM_MAX_CACHES];  /* LRU entries (vertices), each >= 1 */
    uint32_t lru_count;                     /* 0..VR_SIM_MAX_CACHES; default 11 (4..4096) */

    uint32_t sm_count;     /* parallel cache: multiprocessors, >= 1; default 28 (GTX 1080 Ti) */
    uint32_t wave_size;    /* concurrent invocations per multiprocessor, >= 1; default 1024 */
    uint32_t vertex_bytes; /* bytes per cached vertex, >= 1; default 32 (float4 clip position
                              + packed normal and uv) */
    uint32_t parallel_bytes[VR_SIM_MAX_PARALLEL]; /* cache bytes per multiprocessor, each
                                                     >= vertex_bytes; default 16K, 32K, 64K */
    uint32_t parallel_count;                      /* 0..VR_SIM_MAX_PARALLEL; default 3 */
    uint32_t assign_mask;  /* bit (1 << vr_sim_assign) per assignment; default contiguous only */

    uint32_t warp_batch;   /* static warp-voting batch in indices, multiple of 3; default 96 */
    uint32_t warp_size;    /* lanes per warp, >= 3; default 32 */
    int warp;              /* nonzero: simulate warp voting (default 1) */

    uint32_t dyn_max_unique;  /* dynamic batch N_u, >= 3; default 256; also the static plans' */
    uint32_t dyn_max_indices; /* dynamic batch index limit, >= 3; default 1023; also the static
                                 plans' (rounded down to whole triangles) */
    int dynamic;              /* nonzero: simulate dynamic batching (default 1) */
    int patch;                /* nonzero: simulate the patch plan (default 1) */
    int meshlet;              /* nonzero: simulate the meshlet plan (default 1; needs positions) */
    int patch_builder;        /* the patch plan's builder: 0 the CPU builder (default), 1 the GPU
                                 builder's CPU reference (the GPU's plan exactly) */

    uint32_t threads;      /* worker threads for vr_sim_run_all, 0..VR_SIM_MAX_THREADS;
                              0 = one per online CPU, at most 8 */
} vr_sim_config;

/* The defaults named in the field comments above (Table 1's configuration). */
vr_sim_config vr_sim_config_default(void);
/* Checks every field's range; VR_ERR_ARG with the field name and value when one is off. O(1). */
vr_status vr_sim_config_check(const vr_sim_config *cfg);

/* Every simulator below takes the index buffer (host array owned by the caller, index_count a
 * multiple of 3, > 0, each index < vertex_count; violations return VR_ERR_FORMAT) and writes one
 * vr_sim_result. `shade_counts` is NULL or a vertex_count array owned by the caller that is
 * overwritten with how often each vertex was shaded (its sum is shaded_vertices), for heatmaps.
 * All are O(index_count) time plus O(vertex_count) scratch memory (VR_ERR_OOM when that fails). */

/* Each referenced vertex shaded once: a cache of unbounded size with instant reuse. */
vr_status vr_sim_ideal(vr_sim_result *out, const uint32_t *indices, uint32_t index_count,
                       uint32_t vertex_count, uint32_t *shade_counts);
/* Every index shaded (reuse 0): the naive strategy, one thread per triangle. */
vr_status vr_sim_naive(vr_sim_result *out, const uint32_t *indices, uint32_t index_count,
                       uint32_t vertex_count, uint32_t *shade_counts);
/* Every vertex of the vertex buffer shaded once, referenced or not: the multi-kernel strategy. */
vr_status vr_sim_multi(vr_sim_result *out, const uint32_t *indices, uint32_t index_count,
                       uint32_t vertex_count, uint32_t *shade_counts);

/* k-entry FIFO post-transform cache: a miss shades and inserts, evicting the oldest entry;
 * hits do not reorder. Equals meshopt_analyzeVertexCache(.., k, 0, 0).vertices_transformed. */
vr_status vr_sim_fifo(vr_sim_result *out, const uint32_t *indices, uint32_t index_count,
                      uint32_t vertex_count, uint32_t entries, uint32_t *shade_counts);
/* k-entry LRU post-transform cache: a hit makes the vertex most recent, a miss shades it and
 * evicts the least recent entry. */
vr_status vr_sim_lru(vr_sim_result *out, const uint32_t *indices, uint32_t index_count,
                     uint32_t vertex_count, uint32_t entries, uint32_t *shade_counts);

/* Per-multiprocessor parallel cache (Sec. 4.1): sm_count multiprocessors, each working through
 * its share of the buffer (see vr_sim_assign) in waves of wave_size consecutive indices with a
 * private LRU cache of `entries` vertices. All lookups of a wave see the cache as it was at the
 * wave's start, so a vertex hits only if an EARLIER wave of the SAME multiprocessor shaded it;
 * every missing occurrence is an invocation (a duplicate inside a wave is shaded twice). After
 * the lookups the wave's vertices are touched in index order: misses inserted, hits refreshed.
 * `batches` counts waves. */
vr_status vr_sim_parallel(vr_sim_result *out, const uint32_t *indices, uint32_t index_count,
                          uint32_t vertex_count, uint32_t sm_count, uint32_t wave_size,
                          uint32_t entries, vr_sim_assign assign, uint32_t *shade_counts);

/* Statically batched warp voting, exactly as Algorithm 1: static batches of batch_indices
 * indices; per round, indices are loaded warp_size at a time and each either matches a vertex
 * already on a lane or takes the next free lane; once the warp is full, the first index that
 * cannot be mapped ends the round. The round shades its `fill` lanes (vertices of a trailing
 * incomplete triangle included: shaded, then discarded), emits floor(mapped / 3) triangles and
 * the next round starts after them. Nothing carries over between rounds. `batches` counts
 * rounds. */
vr_status vr_sim_warp(vr_sim_result *out, const uint32_t *indices, uint32_t index_count,
                      uint32_t vertex_count, uint32_t batch_indices, uint32_t warp_size,
                      uint32_t *shade_counts);

/* Dynamic batching: the batches of vr_batches_dynamic(max_unique, max_indices), each shading
 * its distinct vertices once. This is also the count of the hash, phash and sort strategies.
 * Equals meshopt_analyzeVertexCache(.., N_u, N_u, max_indices / 3).vertices_transformed on
 * meshes without degenerate triangles (meshoptimizer counts a new vertex repeated inside one
 * triangle twice when it decides whether the triangle still fits). `batches` counts batches. */
vr_status vr_sim_dynamic(vr_sim_result *out, const uint32_t *indices, uint32_t index_count,
                         uint32_t vertex_count, uint32_t max_unique, uint32_t max_indices,
                         uint32_t *shade_counts);

/* Static plans (reuse/patches.h): the batches of vr_patches_build (RXMesh-style patches) or of
 * vr_meshlets_build (meshoptimizer's meshlets, clustered by `positions`: 3 * vertex_count
 * floats) for N_u = max_unique and max_indices (rounded down to a multiple of 3), each batch
 * shading its distinct vertices once: the count of the patch and meshlet strategies, whatever
 * the triangle order. `batches` counts batches; *plan_seconds (may be NULL) gets the builder's
 * wall time. The builder's cost (reuse/patches.h) plus one O(index_count) pass. */
vr_status vr_sim_patch(vr_sim_result *out, const uint32_t *indices, uint32_t index_count,
                       uint32_t vertex_count, uint32_t max_unique, uint32_t max_indices,
                       uint32_t *shade_counts, double *plan_seconds);
vr_status vr_sim_meshlet(vr_sim_result *out, const uint32_t *indices, uint32_t index_count,
                         const float *positions, uint32_t vertex_count, uint32_t max_unique,
                         uint32_t max_indices, uint32_t *shade_counts, double *plan_seconds);

/* The simulated count of a GPU strategy by its command-line name ("naive", "warp", "hash",
 * "phash", "sort", "multi", "patch", "meshlet"), with cfg's batch parameters; `positions`
 * (3 * vertex_count) is needed by meshlet only and may be NULL otherwise. VR_ERR_ARG when the
 * name is unknown or meshlet has no positions. The reuse/ CPU twins must report the same
 * shaded_vertices. */
vr_status vr_sim_strategy(vr_sim_result *out, const char *strategy, const uint32_t *indices,
                          uint32_t index_count, const float *positions, uint32_t vertex_count,
                          const vr_sim_config *cfg, uint32_t *shade_counts);

/* One scene x order: every strategy of a config, for the table, CSV, JSON and plot. */
typedef struct vr_sim_report {
    char scene[64];               /* label, set by the caller (vr_sim_run_all leaves it empty) */
    char order[16];               /* triangle order label, set by the caller */
    uint32_t vertex_count;        /* vertex-buffer size */
    uint32_t referenced_vertices; /* distinct vertices the indices use (= ideal's count) */
    uint64_t triangles;
    uint64_t indices;
    vr_sim_result ideal, naive, multi, warp, dynamic, patch, meshlet;
    vr_sim_result fifo[VR_SIM_MAX_CACHES];                      /* cfg.fifo_sizes order */
    vr_sim_result lru[VR_SIM_MAX_CACHES];                       /* cfg.lru_sizes order */
    vr_sim_result parallel[VR_SIM_ASSIGN_COUNT][VR_SIM_MAX_PARALLEL]; /* cfg.parallel_bytes */
    double seconds;               /* wall time of vr_sim_run_all */
    double patch_seconds;         /* building the patch plan (preprocessing), wall time */
    double meshlet_seconds;       /* building the meshlet plan (preprocessing), wall time */
    double order_seconds;         /* set by the caller: putting the triangles into this order
                                     (the preprocessing a user would do instead), or 0 */
    double patch_cpu_seconds;     /* set by the caller when cfg.patch_builder is 1 (patch_seconds
                                     is then the GPU builder's CPU reference): the CPU builder's
                                     wall time, or 0 */
    double patch_gpu_seconds;     /* likewise: the GPU builder's device time (cudaEvents), or 0
                                     when no GPU ran it */
    uint32_t warp_batch;          /* the batch limits simulated (cfg's, copied by
                                     vr_sim_run_all): warp batch in indices, */
    uint32_t dyn_max_unique;      /* N_u and the index limit of dynamic batches and plans; */
    uint32_t dyn_max_indices;     /* the reports of one output may differ in them (auto
                                     limits are chosen per scene) */
} vr_sim_report;

/* Runs every strategy cfg enables on one index buffer (validated once), spread over
 * cfg->threads threads; reports progress through vr_progress("sim", ...). Keeps out->scene,
 * out->order and out->order_seconds; fills everything else. One O(index_count) pass per
 * strategy and cache size (30 with the default config) plus the plans' builders (a few passes
 * each), O(vertex_count) scratch per thread; the counts do not depend on the thread count (the
 * plans' times do: measure them with threads = 1). `positions` (3 * vertex_count floats) is
 * needed by the meshlet plan: NULL with cfg->meshlet set is VR_ERR_ARG. */
vr_status vr_sim_run_all(vr_sim_report *out, const uint32_t *indices, uint32_t index_count,
                         const float *positions, uint32_t vertex_count, const vr_sim_config *cfg);

/* Output of `vreuse sim`, for `count` reports simulated with the same cfg up to the batch
 * limits, which each report carries: when every report has cfg's, the output names them once
 * (as it always did); otherwise it lists each report's. */
/* Aligned tables: one row per scene x order (ideal, parallel caches, warp, dyn, patch,
 * meshlet), the plans' preprocessing times when a plan ran, then the FIFO / LRU sweep. */
void vr_sim_print_table(FILE *f, const vr_sim_report *reports, uint32_t count,
                        const vr_sim_config *cfg);
/* CSV in long form, one row per scene x order x strategy x size, the columns named as in
 * `vreuse bench` (scene, tris, strategy, shaded_per_tri) so the two can be joined; '#' lines
 * first record the parameters. VR_ERR_IO when writing fails. */
vr_status vr_sim_write_csv(FILE *f, const vr_sim_report *reports, uint32_t count,
                           const vr_sim_config *cfg);
/* The same results as JSON: the parameters, then one object per report. VR_ERR_IO likewise. */
vr_status vr_sim_write_json(FILE *f, const vr_sim_report *reports, uint32_t count,
                            const vr_sim_config *cfg);
/* SVG plot of reuse against cache size (log2 x axis, FIFO and LRU curves, parallel-cache
 * markers) with ideal, dynamic and warp voting as labelled horizontal lines. */
vr_status vr_sim_write_svg(FILE *f, const vr_sim_report *report, const vr_sim_config *cfg);

#ifdef __cplusplus
}
#endif
#endif
