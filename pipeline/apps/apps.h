/* apps.h - the paper's Section 5 applications run through the general reuse API
 * (reuse/program.h): any strategy, on the GPU (apps_gpu.cu) or through the CPU twin (apps.c),
 * with the same batches, the same invocation counts and outputs bit-identical to the plain CPU
 * references (loop.h, walk.h, envelope.h):
 *   Loop subdivision: elements are vertices (arity 3): element = the old position, fetched once
 *     per batch, with the vertex rule's new position written as a side effect; primitive = the
 *     triangle's owned edge points (loop_math.h) and its 4 children.
 *   Random walk: elements are grid cells (arity 1, the agent's cell y * 256 + x as a virtual
 *     index): element = the cell's 8 best moves (walk_math.h); primitive = the agent's draw.
 *   Simplification envelopes: elements are vertices (arity 3, the mesh's own index buffer, so
 *     the batches are the renderer's): element = the expensive shader, the safe offset of the
 *     vertex's welded representative (envelope_math.h, an octree walk) and the moved position;
 *     primitive = nothing (the paper's per-triangle work is nil).
 * Try: `vreuse apply subdivide bunny.obj --strategy all`, `vreuse apply walk`.
 */
#ifndef VR_APPS_H
#define VR_APPS_H

#include <stdint.h>

#include "pipeline/apps/envelope.h"
#include "pipeline/apps/loop.h"
#include "pipeline/apps/walk.h"
#include "pipeline/vreuse.h"
#include "reuse/program.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How to run an application. */
typedef struct vr_app_run {
    vr_reuse_kind kind;    /* any strategy; patch and meshlet need a triangle mesh (not walk) */
    vr_batch_limits limits;/* multiples of the arity (vr_program_limits_default) */
    int count;             /* count invocations and primitives (slower; not for timing) */
    uint32_t reps;         /* GPU: timed repetitions, the best is reported (>= 1) */
} vr_app_run;

/* What a run measured. */
typedef struct vr_app_report {
    double ms;             /* GPU: best kernel time of one run (one walk step: the mean step);
                              CPU twin: wall time */
    double prep_ms;        /* host time forming batches or plans (walk: all steps) */
    double order_ms;       /* walk with resort: the sort by cell, per step (part of ms) */
    vr_program_counters counters; /* with count */
    uint32_t batches;      /* batches of the last run (dynamic strategies, plans) */
} vr_app_report;

/* The batch limits the paper's Section 5 reports per strategy ("the best configuration found
 * for each technique", GTX 1080 Ti), where the renderer's (vr_program_limits_default: block 256,
 * N_u 256, 1023 indices, warp batch 96) are those of its Section 4:
 *   Loop subdivision (5.1): naive block 32 (a batch of 96 indices, one warp); warp batch 96,
 *     block 64; hash and phash 192 indices, block 64 = N_u 64; sort 768 indices, block 256 =
 *     N_u 256.
 *   Envelopes (5.2, Table 4): naive block 32; warp batch 96, block 64; the dynamic ones block
 *     128 = N_u 128, hash 576 indices, phash and sort 768.
 * multi, patch and meshlet are not in the paper: sort's. */
vr_batch_limits vr_loop_paper_limits(vr_reuse_kind kind);
vr_batch_limits vr_envelope_paper_limits(vr_reuse_kind kind);

/* Loop subdivision: `out` as vr_loop_subdivide's (normals recomputed on the host). gpu != 0 runs
 * the GPU program (VR_ERR_NO_DEVICE without one), else the CPU twin. */
vr_status vr_loop_apply(vr_mesh *out, const vr_mesh *in, const vr_app_run *r, int gpu,
                        vr_app_report *rep);

/* The random walk from `cells` (packed, cfg->agents), in place, as vr_walk_run with the same
 * draws; cfg->steps steps, each one run of the strategy (dynamic batches formed per step on the
 * host from the current cells). With cfg->resort the stream is sorted by cell before each step
 * (GPU: a counting sort by cell with atomics, not stable; CPU twin: vr_walk_sort_by_cell,
 * stable; the same stream of cells either way, so the same batches and invocations) and the
 * element's agents are found through the sorted agent ids; the sort is timed with the step.
 * cfg->lanes > 1: on the GPU each cell's moves are evaluated by that many threads together. */
vr_status vr_walk_apply(uint32_t *cells, const vr_walk_config *cfg, const vr_app_run *r, int gpu,
                        vr_app_report *rep);

/* Stable counting sort of `count` (dense cell, agent) pairs by cell into the _out arrays;
 * histogram: VR_WALK_GRID^2 entries of scratch. */
void vr_walk_sort_by_cell(uint32_t *cells_out, uint32_t *agents_out, const uint32_t *cells,
                          const uint32_t *agents, uint32_t count, uint32_t *histogram);

/* The envelope of `in` (cfg as vr_envelope_build's; stats may be NULL): `out` equal to
 * vr_envelope_build's bit for bit (positions, normals recomputed on the host the same way,
 * topology and texcoords copied), stats too. Welding, normals, fans and the octree
 * (vr_envelope_prepare) and the batches run once on the host, in rep->prep_ms (stats->prepare_ms:
 * vr_envelope_prepare alone); rep->ms and stats->offsets_ms time the program (GPU: the best of
 * r->reps, kernels only). Vertices the index buffer does not name get the reference's values on
 * the host (no strategy but multi shades them). gpu != 0 runs the GPU program
 * (VR_ERR_NO_DEVICE without one), else the CPU twin. Errors as vr_envelope_build's; `out` is
 * zeroed on failure. */
vr_status vr_envelope_apply(vr_mesh *out, const vr_mesh *in, const vr_envelope_config *cfg,
                            const vr_app_run *r, int gpu, vr_app_report *rep,
                            vr_envelope_stats *stats);

/* The GPU halves (apps_gpu.cu; VR_ERR_NO_DEVICE in a build without CUDA). Loop's t has its
 * edge_of_half and tri_edges in stream order: plan_ids' order (a plan's tri_order) when given. */
vr_status vr_loop_apply_gpu(vr_mesh *out, const vr_mesh *in, const vr_loop_topology *t,
                            const vr_app_run *r, const uint32_t *plan_ids,
                            const uint32_t *plan_indices, const uint32_t *starts,
                            uint32_t batch_count, vr_app_report *rep);
vr_status vr_walk_apply_gpu(uint32_t *cells, const vr_walk_config *cfg, const vr_app_run *r,
                            vr_app_report *rep);
/* positions (3 x vertex_count) and offsets (vertex_count): host arrays the program writes for
 * every vertex it shades (the others are left undefined); `stream` is the mesh's index buffer or
 * a plan's (plan_ids its tri_order), starts the batches. */
vr_status vr_envelope_apply_gpu(float *positions, float *offsets, const vr_envelope_prep *prep,
                                const vr_app_run *r, const uint32_t *stream,
                                const uint32_t *plan_ids, const uint32_t *starts,
                                uint32_t batch_count, vr_app_report *rep);

#ifdef __cplusplus
}
#endif
#endif
