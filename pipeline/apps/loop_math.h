/* loop_math.h - the two Loop rules (loop.h states them) as VR_HD functions over the flat
 * topology of vr_loop_topology, so the CPU reference (loop.c), the CPU twin and the GPU program
 * (apps_gpu.cu) compute every output coordinate with the same double operations in the same
 * order and round it once: bit-identical results. The device build uses the _rn intrinsics,
 * which nvcc never contracts into FMAs (the host build has -ffp-contract=off); Loop's beta,
 * which needs cos, comes from a table the host fills (vr_loop_beta).
 */
#ifndef VR_LOOP_MATH_H
#define VR_LOOP_MATH_H

#include <stdint.h>

#include "pipeline/hd.h"

#ifdef __CUDA_ARCH__
#define VR_DMUL(a, b) __dmul_rn((a), (b))
#define VR_DADD(a, b) __dadd_rn((a), (b))
#else
#define VR_DMUL(a, b) ((a) * (b))
#define VR_DADD(a, b) ((a) + (b))
#endif

/* A ring entry: neighbour id << 1 | 1 when the edge to it is a crease (1 or >= 3 faces). */
#define VR_LOOP_RING_CREASE 1u

/* The moved position of old vertex v: its ring entries ring[ring_start[v] .. ring_start[v + 1])
 * in edge order, summed in double; beta[n] = vr_loop_beta(n) for n = 1 .. max valence. */
VR_HD void vr_loop_vertex_rule(float out[3], const float *p, uint32_t v,
                               const uint32_t *ring_start, const uint32_t *ring,
                               const double *beta)
{
    double sum[3] = {0.0, 0.0, 0.0}, crs[3] = {0.0, 0.0, 0.0};
    const uint32_t lo = ring_start[v], hi = ring_start[v + 1];
    uint32_t nc = 0;
    for (uint32_t j = lo; j < hi; ++j) {
        const uint32_t r = ring[j], o = r >> 1;
        for (int k = 0; k < 3; ++k)
            sum[k] = VR_DADD(sum[k], (double)p[3 * (uint64_t)o + k]);
        if (r & VR_LOOP_RING_CREASE) {
            ++nc;
            for (int k = 0; k < 3; ++k)
                crs[k] = VR_DADD(crs[k], (double)p[3 * (uint64_t)o + k]);
        }
    }
    const uint32_t n = hi - lo;
    const float *pv = p + 3 * (uint64_t)v;
    if (n == 0 || nc >= 3) { /* isolated, or a corner: kept */
        for (int k = 0; k < 3; ++k)
            out[k] = pv[k];
    } else if (nc == 2) { /* boundary or crease */
        for (int k = 0; k < 3; ++k)
            out[k] = (float)VR_DADD(VR_DMUL(0.75, (double)pv[k]), VR_DMUL(0.125, crs[k]));
    } else { /* smooth, or a dart */
        const double b = beta[n], self = VR_DADD(1.0, -VR_DMUL((double)n, b));
        for (int k = 0; k < 3; ++k)
            out[k] = (float)VR_DADD(VR_DMUL(self, (double)pv[k]), VR_DMUL(b, sum[k]));
    }
}

/* The edge point of an edge with endpoints a, b, `faces` non-degenerate faces and, for 2 faces,
 * opposite corners c, d (positions). */
VR_HD void vr_loop_edge_rule(float out[3], const float *a, const float *b, uint32_t faces,
                             const float *c, const float *d)
{
    for (int k = 0; k < 3; ++k) {
        const double ab = VR_DADD((double)a[k], (double)b[k]);
        out[k] = faces == 2 ? (float)VR_DADD(VR_DMUL(0.375, ab),
                                             VR_DMUL(0.125, VR_DADD((double)c[k], (double)d[k])))
                            : (float)VR_DMUL(0.5, ab);
    }
}

/* An interior edge's opposite corner `o`: triangle t's own third corner where it is that one
 * (its position a[third], the same floats as p's), else read from p. */
VR_HD const float *vr_loop_opposite(const float *p, uint32_t o, const uint32_t *corner,
                                    const float *const a[3], uint32_t third)
{
    return o == corner[third] ? a[third] : p + 3 * (uint64_t)o;
}

/* The per-triangle step of a run through the reuse API: the edge points a triangle owns
 * (tri_edges[row]: its half-edges that are their edge's first occurrence), from its corners' ids
 * and old positions a[k] (in corner order) and, across an interior edge, the opposite corners'
 * positions (one of them is usually the triangle's own third corner). Every edge has exactly one
 * owner, so each edge point is written once. `row` is the triangle's row in tri_edges and
 * edge_of_half: its source id, or its stream position where the caller laid those two arrays
 * out in stream order (a plan's: its batches visit source triangles out of order). */
VR_HD void vr_loop_owned_edges(float *out_pos, const float *p, uint32_t row, const uint32_t *corner,
                               const float *const a[3], const uint32_t *edge_of_half,
                               const uint8_t *tri_edges, const uint32_t *edge_opp,
                               uint32_t vertex_count)
{
    const uint32_t bits = tri_edges[row];
    for (uint32_t k = 0; k < 3; ++k) {
        if (!(bits >> k & 1u))
            continue;
        const uint32_t e = edge_of_half[3 * (uint64_t)row + k], third = (k + 2) % 3;
        const uint32_t faces = bits >> (k + 3) & 1u ? 2u : 1u; /* the rule tests only for 2 */
        const float *c = p, *d = p; /* unread unless the edge has 2 faces */
        if (faces == 2)
            c = vr_loop_opposite(p, edge_opp[2 * (uint64_t)e], corner, a, third),
            d = vr_loop_opposite(p, edge_opp[2 * (uint64_t)e + 1], corner, a, third);
        vr_loop_edge_rule(out_pos + 3 * ((uint64_t)vertex_count + e), a[k], a[(k + 1) % 3], faces,
                          c, d);
    }
}

/* The 12 indices of a triangle's 4 children (loop.h: the parent's winding): its corners
 * tri[0..2] and its edge points vertex_count + edge id of its half-edges 3 row .. 3 row + 2
 * (row as in vr_loop_owned_edges). */
VR_HD void vr_loop_children(uint32_t child[12], const uint32_t *tri, const uint32_t *edge_of_half,
                            uint32_t row, uint32_t vertex_count)
{
    const uint32_t m01 = vertex_count + edge_of_half[3 * (uint64_t)row],
                   m12 = vertex_count + edge_of_half[3 * (uint64_t)row + 1],
                   m20 = vertex_count + edge_of_half[3 * (uint64_t)row + 2];
    const uint32_t c[12] = {tri[0], m01, m20, m01, tri[1], m12, m20, m12, tri[2], m01, m12, m20};
    for (int i = 0; i < 12; ++i)
        child[i] = c[i];
}

#endif
