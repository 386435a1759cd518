/* envelope.c - simplification envelopes on the CPU (envelope.h has the guarantee, envelope_math.h
 * the per-vertex rule): welding, normals, fans and the octree (breadth-first, a counting sort per
 * node), the offsets of all vertices (OpenMP, each a pure function), the moved mesh, and the
 * self-intersection counter (edge-triangle tests on orientation signs in double, same octree).
 * Try: `vreuse_tests apps/envelope`.
 */
#include "pipeline/apps/envelope.h"

#include <assert.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "scenes/scene_internal.h" /* vr_compute_normals, vr_check_finite3 */

vr_envelope_config vr_envelope_config_default(void)
{
    vr_envelope_config c = {1, VR_ENVELOPE_EPSILON_FRACTION, 0};
    return c;
}

/* ---- welding ----------------------------------------------------------------------------- */

typedef struct weld_key {
    float x, y, z;
    uint32_t id;
} weld_key;

static int weld_cmp(const void *pa, const void *pb)
{
    const weld_key *a = pa, *b = pb;
    if (a->x != b->x)
        return a->x < b->x ? -1 : 1;
    if (a->y != b->y)
        return a->y < b->y ? -1 : 1;
    if (a->z != b->z)
        return a->z < b->z ? -1 : 1;
    return a->id < b->id ? -1 : a->id > b->id;
}

/* weld[v] = the smallest id with v's position (== compares: -0 and +0 are one point). */
static vr_status weld_positions(uint32_t *weld, const float *pos, uint32_t vc)
{
    weld_key *k = malloc((size_t)(vc ? vc : 1) * sizeof *k);
    if (!k)
        return VR_ERROR(VR_ERR_OOM, "envelope: cannot allocate the welding keys of %u vertices", vc);
    for (uint32_t v = 0; v < vc; ++v)
        k[v] = (weld_key){pos[3 * (size_t)v], pos[3 * (size_t)v + 1], pos[3 * (size_t)v + 2], v};
    qsort(k, vc, sizeof *k, weld_cmp);
    for (uint32_t i = 0, first = 0; i < vc; ++i) {
        if (i == 0 || k[i].x != k[i - 1].x || k[i].y != k[i - 1].y || k[i].z != k[i - 1].z)
            first = k[i].id; /* ids ascend within a group: the first is the smallest */
        weld[k[i].id] = first;
    }
    free(k);
    return VR_OK;
}

/* ---- octree ------------------------------------------------------------------------------ */

typedef struct octree {
    uint32_t count, cap, depth;
    float *box, *nbox;
    uint32_t *link, *tris;
} octree;

static void octree_free(octree *o)
{
    free(o->box), free(o->nbox), free(o->link), free(o->tris);
    memset(o, 0, sizeof *o);
}

typedef struct build_node {
    uint32_t begin, end, depth;
    float c[3], half; /* the node's cube: centre and half side */
} build_node;

/* Breadth-first: a node with more than VR_ENVELOPE_LEAF_TRIS triangles (by centroid) above the
 * depth bound gets its non-empty octants as consecutive children; boxes are then filled bottom-up
 * (children come after their parent). `normals` may be NULL (nbox zero). */
static vr_status octree_build(octree *o, const float *pos, const float *normals,
                              const uint32_t *idx, uint32_t tc)
{
    memset(o, 0, sizeof *o);
    float *cen = malloc(3 * (size_t)tc * sizeof *cen);
    uint32_t *tmp = malloc((size_t)tc * sizeof *tmp);
    build_node *bn = NULL;
    o->tris = malloc((size_t)tc * sizeof *o->tris);
    o->cap = 64;
    bn = malloc(o->cap * sizeof *bn);
    if (!cen || !tmp || !o->tris || !bn)
        goto oom;
    float lo[3] = {FLT_MAX, FLT_MAX, FLT_MAX}, hi[3] = {-FLT_MAX, -FLT_MAX, -FLT_MAX};
    for (uint32_t t = 0; t < tc; ++t) {
        o->tris[t] = t;
        for (int i = 0; i < 3; ++i) {
            float c = 0;
            for (int k = 0; k < 3; ++k)
                c += pos[3 * (size_t)idx[3 * (size_t)t + k] + i];
            cen[3 * (size_t)t + i] = c / 3;
            lo[i] = fminf(lo[i], c / 3), hi[i] = fmaxf(hi[i], c / 3);
        }
    }
    bn[0] = (build_node){0, tc, 0, {0, 0, 0}, 0};
    for (int i = 0; i < 3; ++i) {
        bn[0].c[i] = 0.5f * (lo[i] + hi[i]);
        bn[0].half = fmaxf(bn[0].half, 0.5f * (hi[i] - lo[i]));
    }
    o->count = 1;
    uint32_t *link = NULL;
    for (uint32_t n = 0; n < o->count; ++n) {
        build_node b = bn[n];
        o->depth = b.depth > o->depth ? b.depth : o->depth;
        if (b.end - b.begin <= VR_ENVELOPE_LEAF_TRIS || b.depth >= VR_ENVELOPE_MAX_DEPTH)
            continue;
        uint32_t count[8] = {0}, start[8];
        for (uint32_t e = b.begin; e < b.end; ++e) {
            const float *c = cen + 3 * (size_t)o->tris[e];
            count[(c[0] >= b.c[0]) | (c[1] >= b.c[1]) << 1 | (c[2] >= b.c[2]) << 2]++;
        }
        uint32_t children = 0;
        for (int q = 0, at = b.begin; q < 8; ++q)
            start[q] = at, at += count[q], children += count[q] != 0;
        if (o->count + children > o->cap) {
            o->cap = 2 * (o->count + children);
            build_node *nb = realloc(bn, o->cap * sizeof *bn);
            if (!nb)
                goto oom;
            bn = nb;
        }
        for (uint32_t e = b.begin; e < b.end; ++e) {
            const float *c = cen + 3 * (size_t)o->tris[e];
            tmp[start[(c[0] >= b.c[0]) | (c[1] >= b.c[1]) << 1 | (c[2] >= b.c[2]) << 2]++] = o->tris[e];
        }
        memcpy(o->tris + b.begin, tmp + b.begin, (b.end - b.begin) * sizeof *tmp);
        for (int q = 0, at = b.begin; q < 8; ++q) {
            if (count[q]) {
                build_node c = {(uint32_t)at, (uint32_t)at + count[q], b.depth + 1, {0, 0, 0}, b.half / 2};
                for (int i = 0; i < 3; ++i)
                    c.c[i] = b.c[i] + (q >> i & 1 ? c.half : -c.half);
                bn[o->count++] = c;
            }
            at += count[q];
        }
        bn[n].half = -1.0f; /* marks an inner node; its children are the next `children` nodes */
        bn[n].c[0] = (float)children;
    }
    o->box = malloc(6 * (size_t)o->count * sizeof *o->box);
    o->nbox = malloc(6 * (size_t)o->count * sizeof *o->nbox);
    link = o->link = malloc(4 * (size_t)o->count * sizeof *o->link);
    if (!o->box || !o->nbox || !link)
        goto oom;
    /* links: children were appended in node order, so a running counter finds each first child */
    for (uint32_t n = 0, next = 1; n < o->count; ++n) {
        uint32_t *l = link + 4 * (size_t)n;
        if (bn[n].half < 0) {
            l[0] = next, l[1] = (uint32_t)bn[n].c[0], l[2] = 0, l[3] = 0;
            next += l[1];
        } else {
            l[0] = 0, l[1] = 0, l[2] = bn[n].begin, l[3] = bn[n].end - bn[n].begin;
        }
    }
    for (uint32_t n = o->count; n-- > 0;) {
        float *b = o->box + 6 * (size_t)n, *nb = o->nbox + 6 * (size_t)n;
        const uint32_t *l = link + 4 * (size_t)n;
        for (int i = 0; i < 3; ++i)
            b[i] = nb[i] = FLT_MAX, b[3 + i] = nb[3 + i] = -FLT_MAX;
        if (l[1]) {
            for (uint32_t c = l[0]; c < l[0] + l[1]; ++c)
                for (int i = 0; i < 3; ++i) {
                    b[i] = fminf(b[i], o->box[6 * (size_t)c + i]);
                    b[3 + i] = fmaxf(b[3 + i], o->box[6 * (size_t)c + 3 + i]);
                    nb[i] = fminf(nb[i], o->nbox[6 * (size_t)c + i]);
                    nb[3 + i] = fmaxf(nb[3 + i], o->nbox[6 * (size_t)c + 3 + i]);
                }
            continue;
        }
        for (uint32_t e = l[2]; e < l[2] + l[3]; ++e)
            for (int k = 0; k < 3; ++k) {
                const uint32_t v = idx[3 * (size_t)o->tris[e] + k];
                for (int i = 0; i < 3; ++i) {
                    const float p = pos[3 * (size_t)v + i], q = normals ? normals[3 * (size_t)v + i] : 0;
                    b[i] = fminf(b[i], p), b[3 + i] = fmaxf(b[3 + i], p);
                    nb[i] = fminf(nb[i], q), nb[3 + i] = fmaxf(nb[3 + i], q);
                }
            }
    }
    free(cen), free(tmp), free(bn);
    return VR_OK;
oom:
    free(cen), free(tmp), free(bn);
    octree_free(o);
    return VR_ERROR(VR_ERR_OOM, "envelope: cannot allocate the octree of %u triangles", tc);
}

/* ---- preparation ------------------------------------------------------------------------- */

void vr_envelope_prep_free(vr_envelope_prep *p)
{
    if (!p)
        return;
    free(p->weld), free(p->indices), free(p->normals), free(p->fan_first), free(p->fan);
    free(p->box), free(p->nbox), free(p->link), free(p->tris);
    memset(p, 0, sizeof *p);
}

static vr_status check_config(const vr_envelope_config *cfg)
{
    if (cfg->direction != 1 && cfg->direction != -1)
        return VR_ERROR(VR_ERR_ARG, "envelope: direction is %d; use +1 (outer) or -1 (inner)",
                        cfg->direction);
    if (!(cfg->epsilon_fraction > 0.0f && cfg->epsilon_fraction <= 1.0f))
        return VR_ERROR(VR_ERR_ARG,
                        "envelope: epsilon fraction %g is outside (0, 1] (the paper uses 0.02 of "
                        "the bounding-box diagonal)",
                        (double)cfg->epsilon_fraction);
    return VR_OK;
}

vr_status vr_envelope_prepare(vr_envelope_prep *p, const vr_mesh *in, const vr_envelope_config *cfg)
{
    assert(p && in && cfg);
    memset(p, 0, sizeof *p);
    const char *what = "envelope input";
    vr_status s = check_config(cfg);
    if (!s)
        s = vr_mesh_validate(in, what);
    if (!s)
        s = vr_check_finite3(in->positions, in->vertex_count, what, "position");
    if (s)
        return s;
    const uint32_t vc = in->vertex_count, tc = in->index_count / 3;
    p->vertex_count = vc, p->triangle_count = tc;
    p->weld = malloc((size_t)vc * sizeof *p->weld);
    p->indices = malloc(3 * (size_t)tc * sizeof *p->indices);
    p->normals = malloc(3 * (size_t)vc * sizeof *p->normals);
    p->fan_first = calloc((size_t)vc + 1, sizeof *p->fan_first);
    p->fan = malloc(3 * (size_t)tc * sizeof *p->fan);
    if (!p->weld || !p->indices || !p->normals || !p->fan_first || !p->fan) {
        vr_envelope_prep_free(p);
        return VR_ERROR(VR_ERR_OOM, "envelope: cannot allocate the tables of %u vertices", vc);
    }
    if ((s = weld_positions(p->weld, in->positions, vc))) {
        vr_envelope_prep_free(p);
        return s;
    }
    for (uint32_t i = 0; i < 3 * tc; ++i)
        p->indices[i] = p->weld[in->indices[i]];
    const vr_mesh welded = {vc, in->positions, NULL, NULL, 3 * tc, p->indices};
    vr_compute_normals(p->normals, &welded);
    /* fans: counting sort of (corner, triangle), each distinct corner once */
    for (int pass = 0; pass < 2; ++pass) {
        for (uint32_t t = 0; t < tc; ++t) {
            const uint32_t *v = p->indices + 3 * (size_t)t;
            for (int k = 0; k < 3; ++k) {
                if ((k >= 1 && v[k] == v[0]) || (k == 2 && v[2] == v[1]))
                    continue;
                if (pass == 0)
                    p->fan_first[v[k] + 1]++;
                else
                    p->fan[p->fan_first[v[k]]++] = t;
            }
        }
        if (pass == 0)
            for (uint32_t v = 0; v < vc; ++v)
                p->fan_first[v + 1] += p->fan_first[v];
        else /* the fill advanced each start to the next vertex's: shift back */
            for (uint32_t v = vc; v > 0; --v)
                p->fan_first[v] = p->fan_first[v - 1];
    }
    p->fan_first[0] = 0;
    octree o;
    if ((s = octree_build(&o, in->positions, p->normals, p->indices, tc))) {
        vr_envelope_prep_free(p);
        return s;
    }
    p->node_count = o.count, p->depth = o.depth;
    p->box = o.box, p->nbox = o.nbox, p->link = o.link, p->tris = o.tris;
    /* epsilon from the box of the referenced corners; the margin covers float rounding */
    float lo[3] = {FLT_MAX, FLT_MAX, FLT_MAX}, hi[3] = {-FLT_MAX, -FLT_MAX, -FLT_MAX};
    double max_abs = 0;
    for (uint32_t i = 0; i < 3 * tc; ++i)
        for (int k = 0; k < 3; ++k) {
            const float x = in->positions[3 * (size_t)p->indices[i] + k];
            lo[k] = fminf(lo[k], x), hi[k] = fmaxf(hi[k], x);
            max_abs = fmax(max_abs, fabs(x));
        }
    double diag2 = 0;
    for (int k = 0; k < 3; ++k)
        diag2 += ((double)hi[k] - lo[k]) * ((double)hi[k] - lo[k]);
    p->epsilon = (float)(cfg->epsilon_fraction * sqrt(diag2));
    p->margin = (float)(64.0 * FLT_EPSILON * (max_abs + p->epsilon));
    vr_envelope_input *v = &p->input;
    v->positions = in->positions, v->normals = p->normals, v->indices = p->indices;
    v->fan_first = p->fan_first, v->fan = p->fan;
    v->tree = (vr_envelope_octree){p->node_count, p->box, p->nbox, p->link, p->tris};
    v->epsilon = p->epsilon, v->direction = (float)cfg->direction, v->margin = p->margin;
    return VR_OK;
}

/* ---- the envelope ------------------------------------------------------------------------ */

vr_status vr_envelope_start(vr_envelope_prep *p, vr_mesh *out, vr_envelope_stats *st,
                            vr_envelope_stats *stats, const vr_mesh *in,
                            const vr_envelope_config *cfg)
{
    assert(p && out && st && in && cfg);
    memset(out, 0, sizeof *out);
    memset(st, 0, sizeof *st);
    if (stats)
        *stats = *st;
    const double t0 = vr_now_ms();
    const vr_status s = vr_envelope_prepare(p, in, cfg);
    st->prepare_ms = vr_now_ms() - t0;
    return s;
}

void vr_envelope_tally(vr_envelope_stats *st, const vr_envelope_prep *p, const float *off)
{
    assert(st && p && off);
    double sum = 0;
    st->welded_vertices = st->full_vertices = 0;
    st->offset_min = FLT_MAX, st->offset_max = 0;
    for (uint32_t v = 0; v < p->vertex_count; ++v)
        if (p->weld[v] == v && p->fan_first[v] != p->fan_first[v + 1]) {
            ++st->welded_vertices;
            sum += off[v];
            st->full_vertices += off[v] == p->epsilon;
            st->offset_min = fminf(st->offset_min, off[v]);
            st->offset_max = fmaxf(st->offset_max, off[v]);
        }
    if (!st->welded_vertices)
        st->offset_min = 0;
    st->offset_mean = st->welded_vertices ? (float)(sum / st->welded_vertices) : 0.0f;
    st->epsilon = p->epsilon;
    st->octree_nodes = p->node_count, st->octree_depth = p->depth;
}

vr_status vr_envelope_normals(vr_mesh *out)
{
    assert(out);
    if (!out->normals && !(out->normals = malloc(3 * (size_t)out->vertex_count * sizeof(float))))
        return VR_ERROR(VR_ERR_OOM, "envelope: cannot allocate the normals of %u vertices",
                        out->vertex_count);
    vr_compute_normals(out->normals, out);
    return VR_OK;
}

vr_status vr_envelope_check(vr_envelope_stats *st, const vr_mesh *in, const vr_mesh *out,
                            const vr_envelope_prep *p)
{
    assert(st && in && out && p);
    const double t0 = vr_now_ms();
    vr_status s = vr_envelope_count_intersections(&st->input_intersections, in, p->weld);
    if (!s)
        s = vr_envelope_count_intersections(&st->output_intersections, out, p->weld);
    st->check_ms = vr_now_ms() - t0;
    return s;
}

vr_status vr_envelope_build(vr_mesh *out, float *offsets, const vr_mesh *in,
                            const vr_envelope_config *cfg, vr_envelope_stats *stats)
{
    assert(out && in && cfg);
    vr_envelope_stats st;
    vr_envelope_prep p;
    vr_status s = vr_envelope_start(&p, out, &st, stats, in, cfg);
    if (s)
        return s;
    const uint32_t vc = in->vertex_count;
    float *off = malloc((size_t)vc * sizeof *off);
    if (!off || (s = vr_mesh_copy(out, in))) {
        free(off);
        vr_envelope_prep_free(&p);
        return off ? s : VR_ERROR(VR_ERR_OOM, "envelope: cannot allocate %u offsets", vc);
    }
    const double t0 = vr_now_ms();
    /* every welded vertex once; the pure per-vertex function makes the order irrelevant */
#pragma omp parallel for schedule(dynamic, 64)
    for (int64_t v = 0; v < (int64_t)vc; ++v)
        off[v] = p.weld[v] == (uint32_t)v ? vr_envelope_offset(&p.input, (uint32_t)v) : 0.0f;
    st.offsets_ms = vr_now_ms() - t0;
    vr_envelope_tally(&st, &p, off);
    for (uint32_t v = 0; v < vc; ++v) {
        const uint32_t w = p.weld[v];
        vr_envelope_move(out->positions + 3 * (size_t)v, &p.input, w, off[w]);
        if (offsets)
            offsets[v] = off[w];
    }
    free(off);
    if ((s = vr_envelope_normals(out))) {
        vr_envelope_prep_free(&p), vr_mesh_free(out);
        return s;
    }
    if (cfg->check)
        s = vr_envelope_check(&st, in, out, &p);
    vr_envelope_prep_free(&p);
    if (s) {
        vr_mesh_free(out);
        return s;
    }
    if (stats)
        *stats = st;
    return VR_OK;
}

/* ---- self-intersections ------------------------------------------------------------------ */

static void sub3(double *o, const double *a, const double *b)
{
    o[0] = a[0] - b[0], o[1] = a[1] - b[1], o[2] = a[2] - b[2];
}

static void cross3(double *o, const double *a, const double *b)
{
    o[0] = a[1] * b[2] - a[2] * b[1];
    o[1] = a[2] * b[0] - a[0] * b[2];
    o[2] = a[0] * b[1] - a[1] * b[0];
}

static double dot3(const double *a, const double *b)
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

/* det[b - a, c - a, d - a]: > 0 when d is on the side of plane abc its normal points to. */
static double orient3(const double *a, const double *b, const double *c, const double *d)
{
    double e1[3], e2[3], e3[3], n[3];
    sub3(e1, b, a), sub3(e2, c, a), sub3(e3, d, a), cross3(n, e1, e2);
    return dot3(n, e3);
}

static double orient2(const double *a, const double *b, const double *c)
{
    return (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]);
}

/* Closed 2-D segments ab and cd intersect. */
static int seg2(const double *a, const double *b, const double *c, const double *d)
{
    const double d1 = orient2(a, b, c), d2 = orient2(a, b, d), d3 = orient2(c, d, a),
                 d4 = orient2(c, d, b);
    if (((d1 > 0 && d2 < 0) || (d1 < 0 && d2 > 0)) && ((d3 > 0 && d4 < 0) || (d3 < 0 && d4 > 0)))
        return 1;
    /* collinear touching: an endpoint on the other segment */
    const double *e[4][3] = {{a, b, c}, {a, b, d}, {c, d, a}, {c, d, b}};
    const double dd[4] = {d1, d2, d3, d4};
    for (int i = 0; i < 4; ++i)
        if (dd[i] == 0) {
            const double *p = e[i][0], *q = e[i][1], *r = e[i][2];
            if (fmin(p[0], q[0]) <= r[0] && r[0] <= fmax(p[0], q[0]) && fmin(p[1], q[1]) <= r[1] &&
                r[1] <= fmax(p[1], q[1]))
                return 1;
        }
    return 0;
}

/* 2-D point p in the closed triangle abc. */
static int inside2(const double *p, const double *a, const double *b, const double *c)
{
    const double e0 = orient2(a, b, p), e1 = orient2(b, c, p), e2 = orient2(c, a, p);
    return (e0 >= 0 && e1 >= 0 && e2 >= 0) || (e0 <= 0 && e1 <= 0 && e2 <= 0);
}

/* The closed segment pq meets the closed triangle t (non-degenerate, normal n). A segment in the
 * triangle's plane is tested in 2-D (the axis where n is largest dropped). */
static int seg_tri(const double *p, const double *q, const double t[3][3], const double *n)
{
    const double dp = orient3(t[0], t[1], t[2], p), dq = orient3(t[0], t[1], t[2], q);
    if ((dp > 0 && dq > 0) || (dp < 0 && dq < 0))
        return 0;
    if (dp != 0 || dq != 0) { /* pq crosses the plane: does its line pass through t? */
        const double s0 = orient3(p, q, t[0], t[1]), s1 = orient3(p, q, t[1], t[2]),
                     s2 = orient3(p, q, t[2], t[0]);
        return (s0 >= 0 && s1 >= 0 && s2 >= 0) || (s0 <= 0 && s1 <= 0 && s2 <= 0);
    }
    const double ax = fabs(n[0]), ay = fabs(n[1]), az = fabs(n[2]);
    const int i0 = ax >= ay && ax >= az ? 1 : 0, i1 = ax >= ay && ax >= az ? 2 : ay >= az ? 2 : 1;
    const double a[2] = {p[i0], p[i1]}, b[2] = {q[i0], q[i1]};
    double c[3][2];
    for (int k = 0; k < 3; ++k)
        c[k][0] = t[k][i0], c[k][1] = t[k][i1];
    for (int k = 0; k < 3; ++k)
        if (seg2(a, b, c[k], c[(k + 1) % 3]))
            return 1;
    return inside2(a, c[0], c[1], c[2]);
}

/* Closed triangles v and u meet: some edge of one meets the other (which covers a touching
 * corner, crossing edges and, through the 2-D path, coplanar overlap and containment). Built on
 * orientation signs in double rather than Moller's plane-line intervals, which misjudge nearly
 * coplanar neighbours (a moved flat grid). A degenerate (zero-area) triangle never intersects. */
static int tri_tri(const double v[3][3], const double u[3][3])
{
    double e1[3], e2[3], nv[3], nu[3];
    sub3(e1, v[1], v[0]), sub3(e2, v[2], v[0]), cross3(nv, e1, e2);
    sub3(e1, u[1], u[0]), sub3(e2, u[2], u[0]), cross3(nu, e1, e2);
    if (dot3(nv, nv) == 0 || dot3(nu, nu) == 0)
        return 0;
    for (int k = 0; k < 3; ++k)
        if (seg_tri(v[k], v[(k + 1) % 3], u, nu) || seg_tri(u[k], u[(k + 1) % 3], v, nv))
            return 1;
    return 0;
}

static int boxes_overlap(const float *a, const float *b)
{
    for (int i = 0; i < 3; ++i)
        if (a[3 + i] < b[i] || b[3 + i] < a[i])
            return 0;
    return 1;
}

static void tri_box(float *b, const float *pos, const uint32_t *tri)
{
    for (int i = 0; i < 3; ++i) {
        b[i] = b[3 + i] = pos[3 * (size_t)tri[0] + i];
        for (int k = 1; k < 3; ++k) {
            b[i] = fminf(b[i], pos[3 * (size_t)tri[k] + i]);
            b[3 + i] = fmaxf(b[3 + i], pos[3 * (size_t)tri[k] + i]);
        }
    }
}

/* Pairs (t, u > t) of triangle t that intersect and are not adjacent through `wi`. */
static uint64_t pairs_of(const octree *o, const float *pos, const uint32_t *wi, uint32_t t)
{
    const uint32_t *a = wi + 3 * (size_t)t;
    float tb[6];
    tri_box(tb, pos, a);
    double v[3][3];
    for (int k = 0; k < 3; ++k)
        for (int i = 0; i < 3; ++i)
            v[k][i] = pos[3 * (size_t)a[k] + i];
    uint64_t found = 0;
    uint32_t stack[VR_ENVELOPE_STACK];
    int top = 0;
    stack[top++] = 0;
    while (top > 0) {
        const uint32_t n = stack[--top];
        if (!boxes_overlap(tb, o->box + 6 * (size_t)n))
            continue;
        const uint32_t *l = o->link + 4 * (size_t)n;
        for (uint32_t c = 0; c < l[1]; ++c)
            stack[top++] = l[0] + c;
        for (uint32_t e = l[2]; e < l[2] + l[3]; ++e) {
            const uint32_t u = o->tris[e], *b = wi + 3 * (size_t)u;
            if (u <= t)
                continue;
            int adjacent = 0;
            for (int k = 0; k < 3; ++k)
                adjacent |= a[k] == b[0] || a[k] == b[1] || a[k] == b[2];
            float ub[6];
            tri_box(ub, pos, b);
            if (adjacent || !boxes_overlap(tb, ub))
                continue;
            double w[3][3];
            for (int k = 0; k < 3; ++k)
                for (int i = 0; i < 3; ++i)
                    w[k][i] = pos[3 * (size_t)b[k] + i];
            found += (uint64_t)tri_tri(v, w);
        }
    }
    return found;
}

vr_status vr_envelope_count_intersections(uint64_t *pairs, const vr_mesh *m, const uint32_t *weld)
{
    assert(pairs && m);
    *pairs = 0;
    vr_status s = vr_mesh_validate(m, "self-intersection check");
    if (s)
        return s;
    const uint32_t vc = m->vertex_count, tc = m->index_count / 3;
    uint32_t *own = NULL, *wi = malloc((size_t)m->index_count * sizeof *wi);
    if (!weld && (own = malloc((size_t)vc * sizeof *own)) != NULL)
        s = weld_positions(own, m->positions, vc);
    if (!wi || (!weld && !own)) {
        free(wi), free(own);
        return VR_ERROR(VR_ERR_OOM, "self-intersection check: cannot allocate %u indices",
                        m->index_count);
    }
    const uint32_t *w = weld ? weld : own;
    for (uint32_t i = 0; !s && i < m->index_count; ++i)
        wi[i] = w[m->indices[i]];
    octree o;
    if (!s)
        s = octree_build(&o, m->positions, NULL, wi, tc);
    free(own);
    if (s) {
        free(wi);
        return s;
    }
    uint64_t total = 0;
#pragma omp parallel for schedule(dynamic, 256) reduction(+ : total)
    for (int64_t t = 0; t < (int64_t)tc; ++t)
        total += pairs_of(&o, m->positions, wi, (uint32_t)t);
    octree_free(&o);
    free(wi);
    *pairs = total;
    return VR_OK;
}
