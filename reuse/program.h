/* program.h - the general reuse API: run any batching strategy over an index stream of any arity
 * with a user's per-element function (the "vertex shader": called once per distinct element of a
 * batch) and per-primitive function (called once per primitive with its corners' elements).
 * The paper's Section 5 applications (pipeline/apps/: Loop subdivision, simplification envelopes,
 * the random walk, whose agents' cells are a stream of arity 1) run through it.
 *
 * Two halves with one contract:
 *   GPU   reuse/program.cuh: vr_program_run<P>(kind, params, program, stream), P a C++ struct
 *         with the element type, the arity and the two functions as __device__ members; each
 *         strategy is a kernel template the functions are inlined into.
 *   CPU   vr_program_ref below: the twin, the same batches and the same calls through C function
 *         pointers, so a program whose two functions are pure (or write only what their
 *         arguments name) produces the same output on both, and both count the same
 *         invocations (= vr_sim counts for that strategy and arity 3).
 * Why templates on the device: the element function is the hot loop of every batcher and its
 * result lives in shared memory sized by the element type; a device function pointer cannot be
 * inlined (a call per element, registers spilled around it) and hides the type, a macro
 * would paste the batcher into every application. A template instantiates each batcher once per
 * program with the program's code inline - the code the hand-written renderer kernels have.
 *
 * Batching per strategy (primitives are `arity` consecutive indices of the stream):
 *   naive    every corner of every primitive is an invocation (arity per primitive);
 *   warp     static batches of batch_indices indices, one warp each, in rounds of up to 32
 *            distinct elements (reuse/warp_ref.c's rule, with whole primitives per round);
 *   hash, phash, sort
 *            dynamic batches (vr_program_batches): one invocation per distinct element of a batch;
 *   multi    every element 0..element_count-1 once, then the primitives;
 *   patch, meshlet
 *            a static plan's batches over a plan-ordered triangle stream (arity 3;
 *            reuse/patches.h): one invocation per distinct element of a batch, prim_ids the
 *            source ids.
 * Compacted output in input order (GPU: program.cuh's ordered_primitive, vr_program_run_ordered,
 * the in-kernel compaction of pipeline/compact): its CPU twin is a primitive function that
 * stores the kept primitives at a running count, since vr_program_ref calls primitives in stream
 * order.
 * Try: `vreuse_tests reuse/program`, `vreuse apply walk --strategy all`,
 * `vreuse_tests gpu/program-ordered`.
 */
#ifndef VR_PROGRAM_H
#define VR_PROGRAM_H

#include <stddef.h>
#include <stdint.h>

#include "pipeline/vreuse.h"
#include "reuse/reuse.h"

#ifdef __cplusplus
extern "C" {
#endif

#define VR_PROGRAM_ARITY_MAX 4u /* indices per primitive: 1 (agents) .. 4 (quads) */

/* Warp's pooled rounds (reuse/program.cuh, pool_rounds) need many batches per warp: a warp
 * takes its next ticket as soon as a batch is voted and computes only once 32 elements are
 * pending, so on a mesh with few batches per resident warp the first warps take every ticket
 * before any shading starts, then shade them in series while the rest of the GPU idles. H100,
 * heavy load, small meshes (session 41, three runs alternated): pooled warp at 0.36-0.64x of
 * naive's speed, the rounds 1.2-2.0x faster than naive (sphere 33 us against 66); sphere:7M,
 * about 47 batches per resident warp (of about 4,700 at block 64): pooled 0.92x the rounds;
 * the shared scenes have 0.04 (cow) to 1.8 (igea). Below this many batches per resident warp
 * the rounds kernel runs (VR_PROG_WARP=pooled still pools). 8 lies between the measured
 * points and is not itself measured. */
#define VR_POOL_MIN_SHARE 8u

/* Counters of one run; reset 0 by the caller. Invocations and primitives only when counting. */
typedef struct vr_program_counters {
    unsigned long long invocations; /* element-function calls */
    unsigned long long primitives;  /* primitive-function calls */
    uint32_t overflow;              /* primitives skipped: a batch broke its limits (GPU) */
} vr_program_counters;

/* One run. Host pointers for vr_program_ref, device pointers for vr_program_run. */
typedef struct vr_program_params {
    const uint32_t *indices;      /* index_count, each < element_count */
    uint32_t index_count;         /* a multiple of arity */
    uint32_t arity;               /* 1..VR_PROGRAM_ARITY_MAX (GPU: must equal P::arity) */
    uint32_t element_count;       /* elements the indices name (multi shades them all) */
    const uint32_t *batch_starts; /* hash, phash, sort: vr_program_batches; patch, meshlet: the
                                     plan's starts; else NULL */
    uint32_t batch_count;
    const uint32_t *prim_ids;     /* patch, meshlet: the plan's tri_order (source id of each
                                     stream primitive); else NULL (id = stream position;
                                     vr_program_check refuses one) */
    vr_batch_limits limits;       /* block, N_u, max_indices, warp batch: multiples of arity */
    int count;                    /* nonzero: count invocations, primitives and shade_counts */
    vr_program_counters *counters;/* one struct, cleared by the caller; the GPU needs it always
                                     (device memory: broken batches count as overflow) */
    uint32_t *shade_counts;       /* element_count, cleared, or NULL; with count */
    void *temp;                   /* multi on the GPU: element_count slots of
                                     vr_program_slot_bytes(element bytes), 16-byte aligned, or
                                     NULL (then allocated and freed on the stream) */
} vr_program_params;

/* Bytes of one element in multi's table on the GPU: up to 16 as they are, larger ones rounded
 * up to whole 16-byte words, which the kernels move as 16-byte vectors (a 28-byte vr_shaded: two
 * loads per corner, as the renderer's own multi, instead of seven scalar ones; a 12-byte point
 * stays 12 bytes: in 16-byte slots Loop's multi ran 14-17% slower). */
static inline size_t vr_program_slot_bytes(size_t element_bytes)
{
    return element_bytes <= 16u ? element_bytes : (element_bytes + 15u) / 16u * 16u;
}

/* A CPU program: element(user, id, out) writes element_bytes to out; primitive(user, prim, pos,
 * ids, elements) gets the source id `prim`, the stream position `pos` (in primitives), the
 * arity corner ids and pointers to their elements. */
typedef struct vr_program_cpu {
    size_t element_bytes;
    void (*element)(void *user, uint32_t id, void *out);
    void (*primitive)(void *user, uint32_t prim, uint32_t pos, const uint32_t *ids,
                      const void *const *elements);
    void *user;
} vr_program_cpu;

/* Checks the parameters for `kind` (GPU and CPU alike): arity, limits as multiples of the arity,
 * batches present where needed, plans only for arity 3. VR_ERR_ARG naming `who`. */
vr_status vr_program_check(vr_reuse_kind kind, const vr_program_params *p, const char *who);

/* Dynamic batches of an arity-`arity` stream (batches.h's rule per primitive): *starts is
 * malloc'd (batch_count + 1 entries), owned by the caller. */
vr_status vr_program_batches(uint32_t **starts, uint32_t *batch_count, const uint32_t *indices,
                             uint32_t index_count, uint32_t arity, uint32_t element_count,
                             uint32_t max_unique, uint32_t max_indices);

/* The CPU twin: runs `kind` over p with program f. Indices are validated (< element_count,
 * VR_ERR_FORMAT naming the position). O(index_count) plus the functions' cost. */
vr_status vr_program_ref(vr_reuse_kind kind, const vr_program_params *p, const vr_program_cpu *f);

/* The limits a program run uses by default: the paper's (block 256, N_u 256, 1023 indices, warp
 * 96) rounded down to multiples of the arity. */
vr_batch_limits vr_program_limits_default(uint32_t arity);

/* Whether `kind` needs dynamic batches / a static plan. */
int vr_program_dynamic(vr_reuse_kind kind);
int vr_program_planned(vr_reuse_kind kind);

#ifdef __cplusplus
}
#endif
#endif
