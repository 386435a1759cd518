/* loop.h - one step of Loop subdivision (Loop 1987), the CPU reference of the paper's Section 5.1
 * application: the oracle a later GPU path through the batchers is compared against.
 * Try: `vreuse_tests apps/loop`.
 *
 * Output layout (deterministic, independent of how the edge table is built):
 *   vertices 0 .. V-1      the input's vertices moved by the vertex rule (unreferenced ones kept),
 *   vertices V .. V+E-1    one per distinct edge {a, b} of the index buffer, numbered by the
 *                          edge's first occurrence in index-buffer order (triangle t, its edges
 *                          (v0,v1), (v1,v2), (v2,v0) in that order),
 *   triangles              4 per input triangle t (v0 v1 v2, edge points m01 m12 m20), in t order:
 *                          (v0 m01 m20) (m01 v1 m12) (m20 m12 v2) (m01 m12 m20): the parent's winding.
 * Normals are recomputed (area-weighted, as loaded meshes get them); texcoords are not carried.
 *
 * Rules. A triangle with a repeated index is degenerate: it is subdivided (4 degenerate children)
 * but adds nothing to the topology below. An edge's face count is the number of non-degenerate
 * triangles that use it.
 *   edge, 2 faces (interior):           3/8 (a + b) + 1/8 (c + d), c and d the opposite corners;
 *   edge, any other count (1 boundary, >= 3 non-manifold, 0 only in degenerate triangles):
 *                                       1/2 (a + b)  (a crease, Hoppe et al. 1994);
 *   vertex with 0 or 1 crease edges:     (1 - n beta) v + beta sum(ring), n its neighbours over
 *       (smooth, or a dart)              edges with >= 1 face, beta = (5/8 - (3/8 + 1/4 cos(2 pi / n))^2) / n;
 *   vertex with exactly 2 crease edges:  3/4 v + 1/8 (a + b), a and b across the crease edges
 *       (boundary or crease)             (the boundary rule; a non-manifold edge chain is a crease);
 *   vertex with >= 3 crease edges:       kept (a corner: where a boundary meets a fin, a bowtie);
 *   vertex on no non-degenerate triangle: kept.
 * A crease edge here is one with 1 or >= 3 faces. A vertex where several closed fans touch (all
 * its edges manifold: a pinch) takes the smooth rule over the union of its rings.
 *
 * Numerics: every weighted sum is accumulated in double, in the order of the edge table, and
 * rounded to float once. A GPU path that also accumulates in double agrees to 1 float ulp per
 * coordinate (both round nearly the same double; cos may differ in its last double bit); one that
 * accumulates in float must allow (k + 4) * 2^-24 * max|coordinate of the mesh| per coordinate,
 * k = the number of terms summed (n + 1 for a vertex, 4 for an edge): the weights are
 * non-negative and sum to 1, so a float sum in any order is off by at most (k - 1) eps times the
 * largest coordinate, float weights (cosf) add about 4 eps, our rounding 1/2 eps. See
 * VR_LOOP_TOLERANCE_ULPS and vr_loop_float_tolerance.
 *
 * Cost: O(V + I) time and memory for I indices: the edge table is a counting sort of the
 * half-edges by their smaller endpoint, then per bucket a stamp array finds equal edges, so no
 * comparison sort and no per-vertex scan of neighbour lists.
 */
#ifndef VR_LOOP_H
#define VR_LOOP_H

#include <stdint.h>

#include "pipeline/vreuse.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Counts of one step (filled by vr_loop_subdivide when `stats` is not NULL). */
typedef struct vr_loop_stats {
    uint32_t edges;            /* distinct edges E (output vertices = V + E) */
    uint32_t boundary_edges;   /* edges with 1 face */
    uint32_t nonmanifold_edges; /* edges with >= 3 faces */
    uint32_t degenerate_triangles; /* triangles with a repeated index */
    uint32_t crease_vertices;  /* vertices with exactly 2 crease edges (boundary rule) */
    uint32_t corner_vertices;  /* vertices with >= 3 crease edges (kept) */
} vr_loop_stats;

/* A GPU result that accumulates in double should be within this many float ulps of the
 * reference per coordinate. */
#define VR_LOOP_TOLERANCE_ULPS 1

/* The absolute per-coordinate tolerance for a path that accumulates in float: (k + 4) * 2^-24 *
 * `max_abs` for `k` summed terms (max_abs: the largest |coordinate| of the input). */
double vr_loop_float_tolerance(uint32_t k, double max_abs);

/* Loop's beta for a vertex of n >= 1 neighbours (double; the reference's own weight). */
double vr_loop_beta(uint32_t n);

/* The flat topology one step needs (loop_math.h reads it; the GPU program uploads it): edges
 * numbered by first occurrence in index order. Arrays malloc'd (vr_loop_topology_free). */
typedef struct vr_loop_topology {
    uint32_t vertex_count, edge_count, index_count;
    uint32_t *edge_of_half;    /* index_count: the edge of half-edge h (corner h -> next corner) */
    uint32_t *edge_first_half; /* edge_count: its first half-edge: the triangle h / 3 owns it */
    uint32_t *edge_ends;       /* 2 x edge_count: endpoints, smaller first */
    uint32_t *edge_faces;      /* edge_count: non-degenerate triangles using it */
    uint32_t *edge_opp;        /* 2 x edge_count: opposite corners of its first two faces */
    uint8_t *tri_edges;        /* index_count / 3: per triangle t, bit k (0..2): half-edge 3t + k
                                  is its edge's first (t writes the edge point); bit k + 3: that
                                  edge has 2 faces (the interior rule). A byte per triangle read
                                  in order instead of two scattered words per half-edge
                                  (edge_first_half, edge_faces): Loop's GPU runs are bound by
                                  their L2 sectors (bench/NOTES.md, session 31) */
    uint32_t *ring_start;      /* vertex_count + 1: CSR offsets into ring */
    uint32_t *ring;            /* neighbour << 1 | crease, per vertex in edge order */
    double *beta;              /* max_valence + 1: beta[n] = vr_loop_beta(n), beta[0] = 0 */
    uint32_t max_valence;
} vr_loop_topology;

/* Validates `in` (as vr_loop_subdivide) and builds its topology; O(V + I). */
vr_status vr_loop_topology_build(vr_loop_topology *out, const vr_mesh *in, vr_loop_stats *stats);
void vr_loop_topology_free(vr_loop_topology *t);
/* The output mesh's arrays for topology t: V + E vertices, 4x the indices (normals unset). */
vr_status vr_loop_output_alloc(vr_mesh *out, const vr_loop_topology *t);
/* Before a run through the reuse API: every output coordinate and index poisoned (all bits set:
 * a NaN, an index past the mesh) but the kept positions of the vertices no triangle references,
 * which no element call reaches (as the reference keeps them). Without memory for the marks,
 * every old vertex is prefilled. */
void vr_loop_output_prefill(vr_mesh *out, const vr_mesh *in);

/* One Loop step of `in` into `out` (arrays malloc'd, owned by the caller: vr_mesh_free).
 * VR_ERR_FORMAT (message naming the problem) for an empty mesh, an index count that is not a
 * multiple of 3, an index out of range, a non-finite position; VR_ERR_OVERFLOW when the result
 * would pass 2^32-1 vertices or indices; VR_ERR_OOM. `out` is zeroed on failure. */
vr_status vr_loop_subdivide(vr_mesh *out, const vr_mesh *in, vr_loop_stats *stats);

#ifdef __cplusplus
}
#endif
#endif
