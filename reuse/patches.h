/* patches.h - static batch plans: the triangles of a mesh regrouped by locality, so that a batch
 * is a run of consecutive triangles of the regrouped (plan) order however the input was ordered.
 * Two builders: RXMesh-style patches (Mahmoud's dissertation, Sec. 4.3.3: seeded region growing
 * on the face adjacency, Lloyd refinement, seeds added to patches that are too large) in
 * patches.c, and meshoptimizer's meshlets (meshopt_buildMeshlets) in meshlets.c. A plan is a
 * triangle permutation plus batch starts; the strategies patch and meshlet (reuse/patch.cu,
 * reuse/meshlet.cu and their twins) run one block per batch over the plan-ordered index buffer
 * and write each triangle to the queue slot of its plan position, with its source id. The simulator counts the same
 * batches (sim/sim.h vr_sim_patch, vr_sim_meshlet). Pure C (meshlets.c links meshoptimizer).
 * Try: `vreuse_tests reuse/plan`, `vreuse sim bunny.obj --order random`.
 */
#ifndef VR_PATCHES_H
#define VR_PATCHES_H

#include <stddef.h>
#include <stdint.h>

#include "pipeline/limits.h"
#include "pipeline/vreuse.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The bounds of one batch of a plan, in object space (vr_batch_plan_bounds), for the conservative
 * cluster-culling test of reuse/cluster_cull.h. 64 bytes. */
typedef struct vr_cluster_bounds {
    float lo[3], hi[3]; /* box of the batch's vertices: their exact minima and maxima */
    float axis[3];      /* normal cone axis, unit length up to float rounding */
    float cone_cos;     /* cos of the cone's half-angle about `axis` (the float axis), rounded
                           down; in (0, 1] */
    float cone_sin;     /* sin of that angle, rounded up; the pair describes an angle no smaller */
    float shape;        /* min over the triangles of |n| / L^2 (2 x area / longest edge^2, at
                           most sqrt(3) / 2), rounded down */
    float edge_min;     /* min over the triangles of the longest edge L, rounded down */
    uint32_t flags;     /* VR_CLUSTER_BOX, VR_CLUSTER_CONE */
} vr_cluster_bounds;

#define VR_CLUSTER_BOX 1u  /* lo, hi valid: every coordinate of the batch finite */
#define VR_CLUSTER_CONE 2u /* axis .. edge_min valid: no degenerate triangle, cone < 90 degrees */

/* A static batch plan of a mesh with triangle_count triangles. Arrays are malloc'd by the
 * builder and owned by the plan (vr_batch_plan_free). Batch b holds plan positions
 * starts[b] / 3 .. starts[b + 1] / 3 - 1, i.e. source triangles tri_order[starts[b] / 3 ...]:
 * at most max_indices indices and max_unique distinct vertices, as the builder was asked. */
typedef struct vr_batch_plan {
    uint32_t *tri_order;     /* triangle_count: source triangle id at each plan position; a
                                permutation, ascending within a batch */
    uint32_t *starts;        /* batch_count + 1 offsets in indices (multiples of 3) over the plan
                                order: starts[0] = 0, starts[batch_count] = 3 * triangle_count */
    uint32_t triangle_count;
    uint32_t batch_count;
    uint32_t group_count;    /* patches (after splitting) or meshlets before consecutive small
                                ones were packed into one batch; >= batch_count */
    uint32_t iterations;     /* patch: Lloyd iterations run; meshlet: 0 */
    uint32_t split;          /* patch: patches still over a limit after the iterations, split by
                                region growing inside them; meshlet: meshlets split because the
                                triangle limit is below meshoptimizer's minimum of 4 */
    vr_cluster_bounds *bounds; /* batch_count: each batch's box and normal cone for cluster
                                culling (reuse/cluster_cull.h), or NULL until
                                vr_batch_plan_bounds computed them */
} vr_batch_plan;

/* Frees the arrays; accepts NULL and a zeroed plan, leaves it zeroed. */
void vr_batch_plan_free(vr_batch_plan *plan);

/* How every builder starts: zeroes *out, checks the limits the way the batchers check them -
 * max_unique (N_u) in VR_NU_MIN..VR_NU_MAX, max_indices a multiple of 3 in
 * VR_MAX_INDICES_MIN..VR_MAX_INDICES_MAX (VR_ERR_ARG naming `who` otherwise) - and index_count
 * (VR_ERR_FORMAT when no multiple of 3); with index_count 0, *out is then the whole (empty) plan:
 * no batches, starts[0] = 0 (VR_ERR_OOM when even that cannot be allocated). */
vr_status vr_batch_plan_begin(vr_batch_plan *out, uint32_t index_count, uint32_t max_unique,
                              uint32_t max_indices, const char *who);

/* RXMesh-style patches, deterministic (same input, same plan; no clock, no threads): faces are
 * grouped into edge-connected patches by multi-source region growing from seeds, refined by
 * Lloyd iterations (each patch's new seed is its face farthest from the patch boundary), with
 * new seeds in patches that break a limit; a patch still too large afterwards is split by
 * region growing inside it. A patch's vertices - owned (RXMesh: the patch of the vertex's lowest
 * face owns it) plus ribbon (the other vertices of its faces, owned by a neighbour) - must be
 * <= max_unique, its indices <= max_indices. Patches aim at a quarter of a batch; they are
 * ordered by a breadth-first walk over the patch adjacency and packed into batches that grow
 * over it, each time by the neighbour that fits and shares the most vertices, then by the next
 * patch of the walk (small components: a soup of disconnected quads; reuse/patch_pack.h).
 * The plan depends on the triangle order and the connectivity only, not on how vertices are
 * numbered. Indices must be validated (< vertex_count); VR_ERR_FORMAT when index_count is no
 * multiple of 3, VR_ERR_OOM naming the arrays. O(index_count) per Lloyd iteration (usually 4,
 * at most 12): about 0.5 s per million triangles on one core, in any triangle order; about 80
 * bytes per triangle at the peak. */
vr_status vr_patches_build(vr_batch_plan *out, const uint32_t *indices, uint32_t index_count,
                           uint32_t vertex_count, uint32_t max_unique, uint32_t max_indices);

/* The GPU patch builder (reuse/patch_build.cu; the design is argued there) and its CPU
 * reference (reuse/patch_build_ref.c): the same scheme as vr_patches_build - seeds per
 * edge-connected component, region growing, VR_PBG_LLOYD Lloyd updates with seed addition, a
 * split of what still breaks a limit - rebuilt from synchronous data-parallel rounds, so its
 * patches differ from vr_patches_build's; they are packed into batches by the same packing
 * (reuse/patch_pack.h, on the host). The GPU plan equals the reference's bit for bit. Same
 * limits promise, errors and arguments as vr_patches_build (the plan depends on the triangle
 * order and the vertex ids). The GPU version takes host arrays and returns a host plan; *ms
 * (may be NULL) gets the GPU time between two events around the upload of the indices, every
 * kernel, the per-round flag read-backs, the host packing and the plan's download (not the
 * device allocations).
 * VR_ERR_NO_DEVICE without a device or CUDA. Reference: O(index_count x valence) per round,
 * single-threaded; about 100 bytes per triangle at the peak (GPU: about 210 of device memory). */
vr_status vr_patches_build_gpu(vr_batch_plan *out, const uint32_t *indices, uint32_t index_count,
                               uint32_t vertex_count, uint32_t max_unique, uint32_t max_indices,
                               float *ms);
vr_status vr_patches_build_gpu_ref(vr_batch_plan *out, const uint32_t *indices,
                                   uint32_t index_count, uint32_t vertex_count,
                                   uint32_t max_unique, uint32_t max_indices);

/* Which patch builder a run uses (`--patch-builder cpu|gpu`): CPU = vr_patches_build; GPU =
 * vr_patches_build_gpu on a device, its reference vr_patches_build_gpu_ref on the CPU (the
 * simulator and the CPU twins), so every path sees the same plan. */
typedef enum vr_patch_builder {
    VR_PATCH_BUILDER_CPU = 0,
    VR_PATCH_BUILDER_GPU = 1
} vr_patch_builder;

/* The meshlet limits for a batch limit: min(max_unique, 255) vertices (meshoptimizer's
 * maximum) and min(max_indices / 3, 512) triangles rounded down to a multiple of 4 (its
 * granularity), at least 4. The mesh-shader default 64 / 124 is --nu 64 --max-indices 372. */
void vr_meshlet_limits(uint32_t *max_vertices, uint32_t *max_triangles, uint32_t max_unique,
                       uint32_t max_indices);

/* meshoptimizer's meshlets (meshopt_buildMeshlets, cone weight 0) with vr_meshlet_limits, in
 * meshoptimizer's order; each meshlet's triangles are found back in the mesh (meshoptimizer
 * keeps their corner order) and become one batch, split further only when max_indices / 3 < 4.
 * positions: 3 * vertex_count floats (the clustering is spatial). Deterministic. Errors as
 * vr_patches_build. */
vr_status vr_meshlets_build(vr_batch_plan *out, const uint32_t *indices, uint32_t index_count,
                            const float *positions, uint32_t vertex_count, uint32_t max_unique,
                            uint32_t max_indices);

/* The plan-ordered index buffer: dst[3 i + k] = indices[3 tri_order[i] + k]; dst holds
 * 3 * plan->triangle_count entries. */
void vr_batch_plan_indices(uint32_t *dst, const vr_batch_plan *plan, const uint32_t *indices);

/* Each source triangle's batch: ids[tri_order[i]] = b for the plan positions i of batch b; ids
 * holds plan->triangle_count entries (only tri_order, starts and the counts are read). */
void vr_batch_plan_tri_batches(uint32_t *ids, const vr_batch_plan *plan);

/* Computes plan->bounds (replacing any) from the mesh the plan was built for: per batch the box
 * of its vertices (no VR_CLUSTER_BOX when a coordinate is not finite) and, when no triangle is
 * degenerate and the face normals fit a cone narrower than 90 degrees, the cone about their mean
 * direction with the shape and edge bounds of reuse/cluster_cull.h - every value rounded the
 * safe way, so vr_cluster_culled stays conservative. The geometry stage calls it after either
 * builder (pipeline/stage: vr_geometry_plan and the GPU builder's path), so it is part of a
 * plan's building time: O(index_count), one pass in double, 64 bytes per batch. `indices` and
 * `positions` are the mesh's (source order). VR_ERR_OOM when the array cannot be allocated. */
vr_status vr_batch_plan_bounds(vr_batch_plan *plan, const uint32_t *indices,
                               const float *positions);

/* Checks that `plan` fits the mesh and the limits: a permutation of the mesh's triangles,
 * ordered batch starts covering them, every batch within max_indices and max_unique distinct
 * vertices, ascending source ids inside a batch. VR_ERR_FORMAT naming the first violation.
 * O(index_count) time, O(vertex_count + triangles) scratch (VR_ERR_OOM). */
vr_status vr_batch_plan_validate(const vr_batch_plan *plan, const uint32_t *indices,
                                 uint32_t index_count, uint32_t vertex_count,
                                 uint32_t max_unique, uint32_t max_indices);

#ifdef __cplusplus
}
#endif
#endif
