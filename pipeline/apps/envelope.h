/* envelope.h - inner and outer simplification envelopes (Cohen et al. 1996; the paper's Section
 * 5.2) as a CPU reference: every vertex moves along its normal by a safe offset <= epsilon (2% of
 * the bounding-box diagonal), computed against an octree of the mesh; the oracle a later GPU path
 * through the batchers (one expensive "shader" per unique vertex) is compared against bit for bit.
 * Also the self-intersection counter that checks the result. Try: `vreuse_tests apps/envelope`.
 *
 * Guarantee. Call two triangles adjacent when they share a vertex after welding (equal positions
 * are one vertex). If two non-adjacent triangles of the input do not intersect (they are more
 * than the margin apart, see envelope_math.h), their moved copies do not intersect either, and
 * nor do they at any point of the motion: each moved triangle stays inside the convex hull of its
 * corners and their offset ends, and those hulls are kept apart by a plane (up to float rounding,
 * which the margin and the 0.9 safety factor absorb; the checker computes in double). Hence the
 * output has no more intersecting non-adjacent pairs than the input, and pairs that intersected
 * in the input freeze their corners (offset 0). Adjacent triangles: each moved triangle keeps at
 * least 1/4 of its area along its own normal (no flip, no collapse), which is necessary but not
 * sufficient for a fold-free fan; the checker does not count adjacent pairs.
 *
 * Cost. The octree build is O(T * depth) (a counting sort per level, depth <= 16); the offset of
 * a vertex walks the tree once per triangle of its fan, visiting nodes that no plane separates
 * from the moved triangle (in smooth regions: the nodes near the fan), with a stack of at most
 * VR_ENVELOPE_STACK entries. The offsets are independent: OpenMP spreads them over threads.
 */
#ifndef VR_ENVELOPE_H
#define VR_ENVELOPE_H

#include <stdint.h>

#include "pipeline/apps/envelope_math.h"
#include "pipeline/vreuse.h"

#ifdef __cplusplus
extern "C" {
#endif

#define VR_ENVELOPE_EPSILON_FRACTION 0.02f /* of the bounding-box diagonal (the paper's 2%) */

typedef struct vr_envelope_config {
    int direction;          /* +1 outer envelope, -1 inner */
    float epsilon_fraction; /* largest offset / bounding-box diagonal, (0, 1]; default 0.02 */
    int check;              /* 1: count self-intersections of input and output (stats) */
} vr_envelope_config;

vr_envelope_config vr_envelope_config_default(void);

/* Everything the per-vertex function reads, owned here (malloc'd; vr_envelope_prep_free). */
typedef struct vr_envelope_prep {
    uint32_t vertex_count, triangle_count;
    uint32_t *weld;          /* vertex_count: the smallest vertex id with the same position */
    uint32_t *indices;       /* 3 * triangle_count: the index buffer through `weld` */
    float *normals;          /* 3 * vertex_count: area-weighted over the welded mesh */
    uint32_t *fan_first;     /* vertex_count + 1 */
    uint32_t *fan;           /* fan_first[vertex_count] entries */
    uint32_t node_count, depth; /* octree nodes, deepest level */
    float *box, *nbox;       /* 6 * node_count each */
    uint32_t *link;          /* 4 * node_count */
    uint32_t *tris;          /* triangle_count */
    float epsilon, margin;
    vr_envelope_input input; /* the view of the arrays above (plus the mesh's positions) */
} vr_envelope_prep;

/* Welds, computes normals, the fans and the octree of `in` (positions borrowed: keep `in` alive
 * while prep->input is used). VR_ERR_FORMAT for an empty mesh, bad indices or a non-finite
 * position; VR_ERR_ARG for a bad config field; VR_ERR_OOM. prep is zeroed on failure. */
vr_status vr_envelope_prepare(vr_envelope_prep *prep, const vr_mesh *in,
                              const vr_envelope_config *cfg);
void vr_envelope_prep_free(vr_envelope_prep *prep);

typedef struct vr_envelope_stats {
    float epsilon;             /* model units */
    uint32_t welded_vertices;  /* distinct positions on some triangle (offsets computed) */
    uint32_t full_vertices;    /* of those, moved by the full epsilon */
    float offset_min, offset_mean, offset_max; /* over the welded vertices, model units */
    uint32_t octree_nodes, octree_depth;
    double prepare_ms, offsets_ms, check_ms;
    uint64_t input_intersections, output_intersections; /* with cfg->check */
} vr_envelope_stats;

/* The envelope of `in` into `out` (in's topology and texcoords, moved positions, recomputed
 * normals; arrays malloc'd, vr_mesh_free). `offsets` (vertex_count floats, or NULL) receives each
 * vertex's offset. Errors as vr_envelope_prepare; `out` is zeroed on failure. */
vr_status vr_envelope_build(vr_mesh *out, float *offsets, const vr_mesh *in,
                            const vr_envelope_config *cfg, vr_envelope_stats *stats);

/* The parts of vr_envelope_build that every path to the same output shares (pipeline/apps/apps.h
 * runs the offsets through the general reuse API):
 *   vr_envelope_start   out, *st and *stats (may be NULL) zeroed, then vr_envelope_prepare
 *                       timed into st->prepare_ms (its errors; p zeroed on failure).
 *   vr_envelope_tally   the offsets' summary into *st (epsilon, welded and full vertices,
 *                       min / mean / max, octree size) from off[w] of every welded
 *                       representative w (weld[w] == w) on some triangle; other entries unread.
 *   vr_envelope_normals the output's normals recomputed (allocated when the copy had none;
 *                       VR_ERR_OOM).
 *   vr_envelope_check   input and output intersections and check_ms into *st (cfg->check). */
vr_status vr_envelope_start(vr_envelope_prep *p, vr_mesh *out, vr_envelope_stats *st,
                            vr_envelope_stats *stats, const vr_mesh *in,
                            const vr_envelope_config *cfg);
void vr_envelope_tally(vr_envelope_stats *st, const vr_envelope_prep *p, const float *off);
vr_status vr_envelope_normals(vr_mesh *out);
vr_status vr_envelope_check(vr_envelope_stats *st, const vr_mesh *in, const vr_mesh *out,
                            const vr_envelope_prep *p);

/* Intersecting pairs of non-adjacent triangles of `m` (adjacent: sharing a vertex id through
 * `weld`, or, when weld is NULL, a position). Closed triangles meet when an edge of one meets the
 * other (segment-triangle tests on orientation signs in double, coplanar cases in 2-D): touching
 * counts. Signs are computed in double from the float corners (differences exact, products
 * rounded ~1e-16 relative), so only configurations within about 1e-15 relative of touching can
 * be misjudged; Moller's interval test was not used because it misjudges nearly coplanar
 * neighbours (a moved flat grid: its planes agree only up to float rounding). Zero-area
 * triangles are not counted. VR_ERR_FORMAT for an invalid mesh, VR_ERR_OOM. */
vr_status vr_envelope_count_intersections(uint64_t *pairs, const vr_mesh *m, const uint32_t *weld);

#ifdef __cplusplus
}
#endif
#endif
