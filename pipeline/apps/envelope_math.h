/* envelope_math.h - the per-vertex work of simplification envelopes (Cohen et al. 1996, the
 * paper's Section 5.2), written once with VR_HD so a GPU path through the batchers and the CPU
 * reference (envelope.c) compute the same bits: the safe offset of one vertex, found by walking an
 * octree of the mesh with an explicit stack. Only + - * / (through VR_FMUL/VR_FADD/VR_FSUB, never
 * contracted), compares and sqrtf, all correctly rounded on both sides (nvcc's defaults
 * -prec-div=true -prec-sqrt=true; not under --use_fast_math). Try: `vreuse_tests apps/envelope`.
 *
 * The rule (envelope.h states the guarantee). Vertex v moves to p + s d n (s = +1 outer, -1 inner,
 * n its unit normal). For a triangle T and a height r, H_r(T) is the convex hull of its corners p_k
 * and p_k + s r n_k: it holds T moved with ANY corner offsets in [0, r]. d(v) is the largest
 * value found (<= epsilon) such that, for every triangle T around v,
 *   (local)  T moved with any corner offsets in [0, d] keeps >= 1/4 of its area along its own
 *            normal (no flip; the orientation is multilinear in the 3 offsets, so the 8 corners
 *            of the offset box decide it);
 *   (global) H_d(T) and H_d(U) are disjoint for every triangle U sharing no vertex with T: shown
 *            by a separating plane (candidate normals: the direction between the centroids and
 *            its part tangent to T, both face normals, each edge x its face normal, the axes) or
 *            else d shrinks to 0.9 x the largest height such a plane still separates. Octree
 *            nodes are skipped whole when a plane separates H_d(T) from the box of their corners
 *            and normals.
 */
#ifndef VR_ENVELOPE_MATH_H
#define VR_ENVELOPE_MATH_H

#include <math.h>
#include <stdint.h>

#include "pipeline/hd.h"
#include "reuse/shaders.h" /* VR_FMUL, VR_FADD, VR_FSUB: products and sums never contracted */

#define VR_ENVELOPE_MAX_DEPTH 16   /* octree levels below the root */
#define VR_ENVELOPE_LEAF_TRIS 8    /* a node with more triangles splits (until the depth bound) */
#define VR_ENVELOPE_STACK (7 * VR_ENVELOPE_MAX_DEPTH + 1) /* depth-first: <= 7 siblings per level */
#define VR_ENVELOPE_SAFETY 0.9f    /* a blocked height is used at this fraction (rounding room) */
#define VR_ENVELOPE_KEEP_AREA 0.25f /* a moved triangle keeps this share of its area */
#define VR_ENVELOPE_BISECTIONS 12  /* steps of the local clamp's search (height / 4096) */
#define VR_ENVELOPE_NODE_CANDIDATES 9 /* separating directions tried per octree node */
#define VR_ENVELOPE_CANDIDATES 22  /* ... and per triangle pair */

/* The octree as flat arrays (built by vr_envelope_prepare; node 0 is the root). A triangle lies in
 * the one leaf holding its centroid; a node's boxes bound what its subtree holds. */
typedef struct vr_envelope_octree {
    uint32_t node_count;
    const float *box;      /* 6 * node_count: min xyz, max xyz of its triangles' corners */
    const float *nbox;     /* 6 * node_count: min, max of those corners' unit normals */
    const uint32_t *link;  /* 4 * node_count: first child, children (0: a leaf), first entry in
                            * tris, entries (leaves only) */
    const uint32_t *tris;  /* triangle count: triangle ids, leaf by leaf */
} vr_envelope_octree;

/* What the per-vertex function reads (all arrays owned by the caller; device copies on a GPU). */
typedef struct vr_envelope_input {
    const float *positions;   /* 3 * vertex_count */
    const float *normals;     /* 3 * vertex_count, unit (area-weighted over the welded mesh) */
    const uint32_t *indices;  /* 3 * triangle_count, welded: equal positions share one id */
    const uint32_t *fan_first; /* vertex_count + 1: vertex v's triangles are fan[fan_first[v] ..
                                * fan_first[v + 1]) */
    const uint32_t *fan;      /* triangle ids around each vertex, once per distinct corner */
    vr_envelope_octree tree;
    float epsilon;            /* the largest offset, model units (2% of the box diagonal) */
    float direction;          /* +1 outer, -1 inner */
    float margin;             /* model units: gaps smaller than this count as touching (covers
                               * the rounding of projections; 64 float ulps of the extent) */
} vr_envelope_input;

VR_HD float vr_env_dot(const float *a, const float *b)
{
    return VR_FADD(VR_FADD(VR_FMUL(a[0], b[0]), VR_FMUL(a[1], b[1])), VR_FMUL(a[2], b[2]));
}

VR_HD void vr_env_cross(float *o, const float *a, const float *b)
{
    o[0] = VR_FSUB(VR_FMUL(a[1], b[2]), VR_FMUL(a[2], b[1]));
    o[1] = VR_FSUB(VR_FMUL(a[2], b[0]), VR_FMUL(a[0], b[2]));
    o[2] = VR_FSUB(VR_FMUL(a[0], b[1]), VR_FMUL(a[1], b[0]));
}

VR_HD float vr_env_min(float a, float b)
{
    return a < b ? a : b;
}

VR_HD float vr_env_max(float a, float b)
{
    return a > b ? a : b;
}

/* One triangle as the rule sees it. */
typedef struct vr_env_tri {
    uint32_t v[3];   /* welded ids */
    float p[3][3];   /* corners */
    float n[3][3];   /* corner normals */
    float f[3];      /* unit face normal (0 when degenerate) */
    float c[3];      /* centroid */
    float area2;     /* |(p1 - p0) x (p2 - p0)|: twice the area */
} vr_env_tri;

VR_HD void vr_env_load(vr_env_tri *t, const vr_envelope_input *in, uint32_t tri)
{
    for (int k = 0; k < 3; ++k) {
        t->v[k] = in->indices[3 * (uint64_t)tri + k];
        for (int i = 0; i < 3; ++i) {
            t->p[k][i] = in->positions[3 * (uint64_t)t->v[k] + i];
            t->n[k][i] = in->normals[3 * (uint64_t)t->v[k] + i];
        }
    }
    float e1[3], e2[3], f[3];
    for (int i = 0; i < 3; ++i) {
        e1[i] = VR_FSUB(t->p[1][i], t->p[0][i]);
        e2[i] = VR_FSUB(t->p[2][i], t->p[0][i]);
        t->c[i] = VR_FMUL(VR_FADD(VR_FADD(t->p[0][i], t->p[1][i]), t->p[2][i]), 1.0f / 3.0f);
    }
    vr_env_cross(f, e1, e2);
    t->area2 = sqrtf(vr_env_dot(f, f));
    for (int i = 0; i < 3; ++i)
        t->f[i] = t->area2 > 0.0f ? f[i] / t->area2 : 0.0f;
}

/* f . ((p1' - p0') x (p2' - p0')) for corners moved by s * t_k along their normals. */
VR_HD float vr_env_orientation(const vr_env_tri *t, const float *tk, float s)
{
    float q[3][3], e1[3], e2[3], x[3];
    for (int k = 0; k < 3; ++k)
        for (int i = 0; i < 3; ++i)
            q[k][i] = VR_FADD(t->p[k][i], VR_FMUL(VR_FMUL(s, tk[k]), t->n[k][i]));
    for (int i = 0; i < 3; ++i) {
        e1[i] = VR_FSUB(q[1][i], q[0][i]);
        e2[i] = VR_FSUB(q[2][i], q[0][i]);
    }
    vr_env_cross(x, e1, e2);
    return vr_env_dot(t->f, x);
}

/* 1 when every offset box corner {0, h}^3 keeps >= VR_ENVELOPE_KEEP_AREA of the orientation. */
VR_HD int vr_env_local_ok(const vr_env_tri *t, float h, float s)
{
    const float need = VR_FMUL(VR_ENVELOPE_KEEP_AREA, t->area2);
    for (int corner = 0; corner < 8; ++corner) {
        const float tk[3] = {corner & 1 ? h : 0.0f, corner & 2 ? h : 0.0f, corner & 4 ? h : 0.0f};
        if (!(vr_env_orientation(t, tk, s) >= need))
            return 0;
    }
    return 1;
}

/* The local clamp: the largest h <= cur (to cur / 2^VR_ENVELOPE_BISECTIONS) that vr_env_local_ok
 * accepts; a degenerate triangle has no orientation to keep. */
VR_HD float vr_env_local_clamp(const vr_env_tri *t, float cur, float s)
{
    if (!(t->area2 > 0.0f) || vr_env_local_ok(t, cur, s))
        return cur;
    float lo = 0.0f, hi = cur;
    for (int i = 0; i < VR_ENVELOPE_BISECTIONS; ++i) {
        const float mid = VR_FMUL(VR_FADD(lo, hi), 0.5f);
        if (vr_env_local_ok(t, mid, s))
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* Projections of a triangle's corners on w and the rates s (w . n_k) at which they move. */
VR_HD void vr_env_project(float *proj, float *rate, const vr_env_tri *t, const float *w, float s)
{
    for (int k = 0; k < 3; ++k) {
        proj[k] = vr_env_dot(w, t->p[k]);
        rate[k] = VR_FMUL(s, vr_env_dot(w, t->n[k]));
    }
}

/* The span of H_r(T) on w: [lo, hi]. */
VR_HD void vr_env_span(float *lo, float *hi, const float *proj, const float *rate, float r)
{
    float a = 3.0e38f, b = -3.0e38f;
    for (int k = 0; k < 3; ++k) {
        a = vr_env_min(a, VR_FADD(proj[k], VR_FMUL(r, vr_env_min(0.0f, rate[k]))));
        b = vr_env_max(b, VR_FADD(proj[k], VR_FMUL(r, vr_env_max(0.0f, rate[k]))));
    }
    *lo = a, *hi = b;
}

/* 1 when a plane normal to w separates H_r(T) from H_r of a node's triangles: the node's span
 * bounds its corners by the position box and their rates by the normal box. */
VR_HD int vr_env_node_separated(const vr_env_tri *t, const float *box, const float *nbox,
                                const float *w, float s, float r, float margin)
{
    float plo = 0.0f, phi = 0.0f, rlo = 0.0f, rhi = 0.0f;
    for (int i = 0; i < 3; ++i) {
        const float a = VR_FMUL(w[i], box[i]), b = VR_FMUL(w[i], box[3 + i]);
        const float sw = VR_FMUL(s, w[i]);
        const float c = VR_FMUL(sw, nbox[i]), d = VR_FMUL(sw, nbox[3 + i]);
        plo = VR_FADD(plo, vr_env_min(a, b)), phi = VR_FADD(phi, vr_env_max(a, b));
        rlo = VR_FADD(rlo, vr_env_min(c, d)), rhi = VR_FADD(rhi, vr_env_max(c, d));
    }
    const float nlo = VR_FADD(plo, VR_FMUL(r, vr_env_min(0.0f, rlo)));
    const float nhi = VR_FADD(phi, VR_FMUL(r, vr_env_max(0.0f, rhi)));
    float proj[3], rate[3], tlo, thi;
    vr_env_project(proj, rate, t, w, s);
    vr_env_span(&tlo, &thi, proj, rate, r);
    return VR_FADD(thi, margin) < nlo || VR_FADD(nhi, margin) < tlo;
}

/* Candidate separating direction i of T and a body centred at c (u: the other triangle, or NULL
 * for a node): 0 the centroid direction's part tangent to T, 1 the centroid direction, 2 T's face
 * normal, 3-5 T's edges x its face normal (the planes through its edges along the normal), 6-8 the
 * axes; with u also 9 u's face normal, 10-12 u's edges x u's normal and 13-21 T's edges x u's
 * edges. 0-21 hold the separating axes of any two disjoint triangles (coplanar: 2, 3-5, 10-12;
 * otherwise 2, 9, 13-21), so a disjoint pair is always separated at height 0 (up to the margin);
 * a zero w separates nothing. w is normalized. */
VR_HD void vr_env_candidate(float *w, int i, const vr_env_tri *t, const float *c,
                            const vr_env_tri *u)
{
    float d[3];
    for (int k = 0; k < 3; ++k)
        w[k] = 0.0f, d[k] = VR_FSUB(c[k], t->c[k]);
    const vr_env_tri *e = i >= 9 ? u : t;
    if (i >= 13) { /* T's edge (i - 13) / 3 x u's edge (i - 13) % 3 */
        const int a = (i - 13) / 3, b = (i - 13) % 3;
        float ea[3], eb[3];
        for (int j = 0; j < 3; ++j) {
            ea[j] = VR_FSUB(t->p[(a + 1) % 3][j], t->p[a][j]);
            eb[j] = VR_FSUB(u->p[(b + 1) % 3][j], u->p[b][j]);
        }
        vr_env_cross(w, ea, eb);
    } else if (i == 0) {
        const float dn = vr_env_dot(d, t->f);
        for (int k = 0; k < 3; ++k)
            w[k] = VR_FSUB(d[k], VR_FMUL(dn, t->f[k]));
    } else if (i == 1) {
        w[0] = d[0], w[1] = d[1], w[2] = d[2];
    } else if (i == 2 || i == 9) {
        w[0] = e->f[0], w[1] = e->f[1], w[2] = e->f[2];
    } else if (i >= 6 && i <= 8) {
        w[i - 6] = 1.0f;
    } else {
        const int k = i >= 10 ? i - 10 : i - 3;
        float edge[3];
        for (int j = 0; j < 3; ++j)
            edge[j] = VR_FSUB(e->p[(k + 1) % 3][j], e->p[k][j]);
        vr_env_cross(w, edge, e->f);
    }
    /* unit length: the margin is a distance */
    const float len = sqrtf(vr_env_dot(w, w));
    for (int k = 0; k < 3; ++k)
        w[k] = len > 0.0f ? w[k] / len : 0.0f;
}

/* The largest height (capped at cur) at which a plane normal to w separates H(T) from H(U), given
 * their projections and rates; 0 when they overlap at height 0. */
VR_HD float vr_env_pair_height(const float *tp, const float *tr, const float *up, const float *ur,
                               float cur, float margin)
{
    float best = 0.0f;
    for (int side = 0; side < 2; ++side) { /* side 0: T below U on w; 1: U below T */
        const float *ap = side ? up : tp, *ar = side ? ur : tr, *bp = side ? tp : up,
                    *br = side ? tr : ur;
        float r = cur;
        for (int k = 0; k < 3; ++k)
            for (int j = 0; j < 3; ++j) {
                const float gap = VR_FSUB(VR_FSUB(bp[j], ap[k]), margin);
                const float closing = VR_FSUB(vr_env_max(0.0f, ar[k]), vr_env_min(0.0f, br[j]));
                if (!(gap > 0.0f))
                    r = 0.0f;
                else if (closing > 0.0f)
                    r = vr_env_min(r, gap / closing);
            }
        best = vr_env_max(best, r);
    }
    return best;
}

/* The bound the pair (T, U) puts on the height: cur when some candidate separates them at cur,
 * else VR_ENVELOPE_SAFETY x the largest height a candidate still separates. */
VR_HD float vr_env_pair_bound(const vr_env_tri *t, const vr_env_tri *u, float s, float cur,
                              float margin)
{
    float best = 0.0f;
    for (int i = 0; i < VR_ENVELOPE_CANDIDATES; ++i) {
        float w[3], tp[3], tr[3], up[3], ur[3], tlo, thi, ulo, uhi;
        vr_env_candidate(w, i, t, u->c, u);
        vr_env_project(tp, tr, t, w, s);
        vr_env_project(up, ur, u, w, s);
        vr_env_span(&tlo, &thi, tp, tr, cur);
        vr_env_span(&ulo, &uhi, up, ur, cur);
        if (VR_FADD(thi, margin) < ulo || VR_FADD(uhi, margin) < tlo)
            return cur;
        best = vr_env_max(best, vr_env_pair_height(tp, tr, up, ur, cur, margin));
    }
    return vr_env_min(cur, VR_FMUL(VR_ENVELOPE_SAFETY, best));
}

VR_HD int vr_env_adjacent(const vr_env_tri *t, const uint32_t *u)
{
    for (int k = 0; k < 3; ++k)
        if (t->v[k] == u[0] || t->v[k] == u[1] || t->v[k] == u[2])
            return 1;
    return 0;
}

/* The global bound of triangle T (already loaded, its id `tri`): a depth-first walk of the octree
 * with an explicit stack of VR_ENVELOPE_STACK entries, skipping nodes a plane separates at the
 * current height (which only shrinks, so a node skipped stays safe). */
VR_HD float vr_env_global_bound(const vr_envelope_input *in, const vr_env_tri *t, float cur)
{
    const vr_envelope_octree *o = &in->tree;
    const float s = in->direction;
    uint32_t stack[VR_ENVELOPE_STACK];
    int top = 0;
    stack[top++] = 0;
    while (top > 0 && cur > 0.0f) {
        const uint32_t node = stack[--top];
        const float *box = o->box + 6 * (uint64_t)node, *nbox = o->nbox + 6 * (uint64_t)node;
        const float centre[3] = {VR_FMUL(VR_FADD(box[0], box[3]), 0.5f),
                                 VR_FMUL(VR_FADD(box[1], box[4]), 0.5f),
                                 VR_FMUL(VR_FADD(box[2], box[5]), 0.5f)};
        int skip = 0;
        for (int i = 0; i < VR_ENVELOPE_NODE_CANDIDATES && !skip; ++i) {
            float w[3];
            vr_env_candidate(w, i, t, centre, 0);
            skip = vr_env_node_separated(t, box, nbox, w, s, cur, in->margin);
        }
        if (skip)
            continue;
        const uint32_t *l = o->link + 4 * (uint64_t)node;
        if (l[1] == 0) {
            for (uint32_t e = l[2]; e < l[2] + l[3] && cur > 0.0f; ++e) {
                const uint32_t tri = o->tris[e];
                if (vr_env_adjacent(t, in->indices + 3 * (uint64_t)tri))
                    continue; /* shares a corner with T: the local clamp's business */
                vr_env_tri u;
                vr_env_load(&u, in, tri);
                cur = vr_env_pair_bound(t, &u, s, cur, in->margin);
            }
        } else if (top + (int)l[1] <= VR_ENVELOPE_STACK) {
            for (uint32_t c = 0; c < l[1]; ++c)
                stack[top++] = l[0] + c;
        } else {
            return 0.0f; /* deeper than the builder allows: refuse to move rather than guess */
        }
    }
    return cur;
}

/* The safe offset of vertex v (model units, in [0, epsilon]); 0 for a vertex on no triangle. A
 * pure function of `in` and v: every path that evaluates it gets the same bits. */
VR_HD float vr_envelope_offset(const vr_envelope_input *in, uint32_t v)
{
    const uint32_t first = in->fan_first[v], last = in->fan_first[v + 1];
    if (first == last)
        return 0.0f;
    float cur = in->epsilon;
    /* the local clamps first: they are cheap and a smaller height prunes the walks */
    for (uint32_t f = first; f < last; ++f) {
        vr_env_tri t;
        vr_env_load(&t, in, in->fan[f]);
        cur = vr_env_local_clamp(&t, cur, in->direction);
    }
    for (uint32_t f = first; f < last && cur > 0.0f; ++f) {
        vr_env_tri t;
        vr_env_load(&t, in, in->fan[f]);
        cur = vr_env_global_bound(in, &t, cur);
    }
    return cur;
}

/* The moved position of v: p + direction * offset * n. */
VR_HD void vr_envelope_move(float *out, const vr_envelope_input *in, uint32_t v, float offset)
{
    const float k = VR_FMUL(in->direction, offset);
    for (int i = 0; i < 3; ++i)
        out[i] = VR_FADD(in->positions[3 * (uint64_t)v + i],
                         VR_FMUL(k, in->normals[3 * (uint64_t)v + i]));
}

#endif
