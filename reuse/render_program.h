/* render_program.h - the renderer's vertex stage as a program of the general reuse API
 * (reuse/program.h; issue 13): element(v) = vr_shade of vertex v (the renderer's fetch and
 * shader, reuse/shaders.h), primitive = the triangle's queue record stored directly at the
 * slot of its stream position, tri_id its source id - the queue of the renderer's strategies
 * (reuse/reuse.h) byte for byte (culled into the atomic queue: the same triangles), and the
 * same invocations and counters. The device half,
 * the program struct for vr_program_run, is reuse/render_program.cuh; the C entry point below
 * runs it with the renderer's parameters, so tests and benchmarks compare it with ops->run.
 * The renderer's geometry stage runs through it on an index buffer with the warp-staged store
 * (the default) without culling or culling into a cub or hp queue (pipeline/stage/geometry.cu;
 * VR_GEOMETRY_KERNELS=own: the strategies' own kernels, =api: here wherever it takes the run).
 * Try: `vreuse_tests gpu/render-program`, `vreuse_tests apps-bench/render-program`.
 */
#ifndef VR_RENDER_PROGRAM_H
#define VR_RENDER_PROGRAM_H

#include <stddef.h>

#include "pipeline/vreuse.h"
#include "reuse/reuse.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Workspace vr_render_program_run needs in p->temp, in bytes: the program counters
 * (vr_program_counters in the first VR_RENDER_PROGRAM_COUNTERS_BYTES) and for multi then
 * vertex_count shaded vertices (28 bytes each, in 32-byte slots: vr_program_slot_bytes). Never 0. */
#define VR_RENDER_PROGRAM_COUNTERS_BYTES 256u /* keeps multi's elements 256-byte aligned */
size_t vr_render_program_temp_bytes(vr_reuse_kind kind, const vr_reuse_params *p);

/* Whether vr_render_program_run takes p: an index buffer (no gts), and no culling, or culling
 * into the atomic queue or a keyed one (cub, hp) without cluster culling (a keyed run stores
 * warp-staged whatever p->queue_store says: the same bytes), or into ink or collate (the
 * ordered program vr_render_program_ordered, reuse/program.cuh's ordered_primitive). Which
 * runs the geometry stage sends here: pipeline/stage/geometry.cu. */
int vr_render_program_takes(const vr_reuse_params *p);

/* The renderer's vertex shader counts as cheap up to this many loop steps (the light load):
 * then culling into ink runs every strategy as persistent blocks (the ordered render
 * program's cheap_elements, reuse/program.cuh; naive at the simple load only, routed by
 * pipeline/stage/geometry.cu): on the H100 the hashed ones 0.72-0.82x the time of a block per
 * batch at simple load, 0.87-0.99x at light, 0.99-1.08x at medium and 1.03-1.12x at heavy;
 * warp 0.90x at simple load, 0.93-0.95x at light (bench/results/ink-persistent-*.csv,
 * ink-h100-s29.csv, ink-h100-s30.csv, apps-h100.md). */
#define VR_RENDER_PROGRAM_CHEAP_STEPS 1200u

/* Loop steps of the vertex shader above which warp pools its rounds through the general API
 * (vr_render_program_base::pool_rounds, reuse/program.cuh's vr_prog_warp_pooled_kernel): on
 * the H100, sphere:7M in a Forsyth order, pooled / rounds 0.92x at the heavy load (4,416
 * steps), 1.02x at the light (1,200), 1.26-1.35x at the simple; at the medium load (2,336) the two
 * are within noise (0.823 / 0.827 ms, session 39), so it keeps the rounds
 * (bench/results/warp-pooled-h100-s38.csv, bench/NOTES.md). Only on meshes of at least
 * VR_POOL_MIN_SHARE batches per resident warp (reuse/program.h): on the small ones pooling was
 * 1.9-4.1x slower than the rounds (session 41). */
#define VR_RENDER_PROGRAM_POOL_STEPS 2336u

/* Whether culling into ink runs p's strategies as persistent blocks:
 * VR_PROG_INK (auto, blocks, persistent) or, unset or auto, whether the shader is cheap.
 * VR_ERR_ARG naming the variable for any other value. */
vr_status vr_render_program_ink_persistent(const vr_reuse_params *p, int *persistent);

/* Whether the ordered render program's kernel for `kind` (culling into ink or collate) fits
 * the current GPU's shared memory with p's limits: warp stashes the corners of its kept
 * triangles, batch_indices elements per warp (28 bytes each); a block holds fewer warps where
 * their stashes do not fit, but one warp's must. 1 for other runs. */
int vr_render_program_fits(vr_reuse_kind kind, const vr_reuse_params *p);

/* Runs strategy `kind` (naive .. meshlet) over p as the render program: p as for
 * vr_reuse_all[kind].run (device pointers; dynamic batch starts, or a plan's plan-ordered
 * indices, tri_ids and starts), with p->temp holding vr_render_program_temp_bytes(kind, p)
 * bytes; VR_ERR_ARG unless vr_render_program_takes(p). The program: with culling
 * vr_render_program_cull (the atomic queue, or keys plus warp-staged stores for the geometry
 * stage's compaction), else by p->queue_store: 0 vr_render_program (the direct store), nonzero
 * vr_render_program_staged (warp-staged stores from inside primitive(); render_program.cuh),
 * the same bytes. Enqueued on p->stream without waiting: the workspace's counters are cleared,
 * the program runs, and its counts are added to p->counters (invocations; without culling
 * queue_count += primitives when counting; overflow). Errors as the renderer's run (the same
 * checks) and as vr_program_run. Both functions are defined only in a CUDA build
 * (render_program.cu); only GPU code calls them. */
vr_status vr_render_program_run(vr_reuse_kind kind, const vr_reuse_params *p);

#ifdef __cplusplus
}
#endif
#endif
