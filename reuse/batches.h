/* batches.h - batch boundaries shared by the simulator (sim/), the CPU references and the GPU
 * batchers (reuse/). One definition, so simulated, reference and GPU counts are the same number.
 *
 * Static batches: fixed runs of `batch_indices` indices (a multiple of 3; the last one shorter).
 * Dynamic batches (Kenzel et al. 2018, Sec. 3.4): grown front to back, whole triangles only,
 * while the batch's distinct vertices stay <= max_unique and its indices <= max_indices.
 * Pure C, no CUDA.
 */
#ifndef VR_BATCHES_H
#define VR_BATCHES_H

#include <stddef.h>
#include <stdint.h>

#include "pipeline/limits.h" /* N_u, max indices, warp batch: defaults and bounds */
#include "pipeline/vreuse.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Worst case of vr_batches_dynamic's return value: one batch per triangle. */
size_t vr_batches_dynamic_bound(uint32_t index_count);

/* Writes batch start offsets (in indices) to `starts`: starts[0] = 0, ..., and a final entry
 * starts[*batch_count] = index_count, so `starts` needs vr_batches_dynamic_bound() + 1 entries;
 * an empty buffer has 0 batches (starts[0] = 0). Indices must already be validated
 * (< vertex_count). Errors: VR_ERR_ARG when max_unique < 3 or max_indices < 3, VR_ERR_FORMAT
 * when index_count is no multiple of 3, VR_ERR_OOM when the vertex_count-sized scratch array
 * cannot be allocated; *batch_count is 0 then. O(index_count) time. */
vr_status vr_batches_dynamic(uint32_t *starts, size_t *batch_count, const uint32_t *indices,
                             uint32_t index_count, uint32_t vertex_count, uint32_t max_unique,
                             uint32_t max_indices);

/* The same rule for primitives of `arity` (1..VR_BATCH_ARITY_MAX) indices each (the general
 * reuse API, reuse/program.h): whole primitives per batch, distinct vertices <= max_unique,
 * indices <= max_indices; arity 3 is vr_batches_dynamic. `starts` needs
 * vr_batches_dynamic_bound_arity() + 1 entries. */
#define VR_BATCH_ARITY_MAX 4u
size_t vr_batches_dynamic_bound_arity(uint32_t index_count, uint32_t arity);
vr_status vr_batches_dynamic_arity(uint32_t *starts, size_t *batch_count, const uint32_t *indices,
                                   uint32_t index_count, uint32_t arity, uint32_t vertex_count,
                                   uint32_t max_unique, uint32_t max_indices);

#ifdef __cplusplus
}
#endif
#endif
