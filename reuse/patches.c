/* patches.c - the CPU patch builder (reuse/patches.h) after RXMesh (Mahmoud's dissertation,
 * Sec. 4.3.3 "Patching"): faces are the nodes of a graph whose edges join faces sharing a mesh
 * edge; seeds grow patches breadth first (every face joins the patch that reaches it first, so a
 * patch is one connected piece), Lloyd iterations move each seed to its patch's centre (the face
 * farthest from the patch boundary), and a patch that breaks a limit gets a second seed (its face
 * farthest from the seed) until every patch fits. What RXMesh bounds by a face count we bound by
 * the batch limits: faces <= max_indices / 3 and owned + ribbon vertices <= N_u. Patches aim at
 * a quarter of a batch, and batches then grow over the patch adjacency (vr_patches_pack,
 * reuse/patch_pack.c, shared with the GPU builder): whole patches that fill a batch to about 94%
 * of its binding limit, where patches sized to the limit filled 70% (Lloyd's sizes spread, and
 * two never fit one batch). Also the plan helpers shared with meshlets.c (begin, free, permuted
 * indices, validation).
 * Single-threaded and deterministic: the seeds come from a fixed-seed generator, every tie is
 * broken by queue order. Try: `vreuse_tests reuse/plan`, `vreuse sim horse.ply --order random`.
 */
#include "reuse/patches.h"
#include "reuse/patch_pack.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/vr_mem.h"

#define VR_PATCH_NONE 0xffffffffu

/* Lloyd iterations: at least VR_PATCH_MIN_ITERATIONS (the sizes even out after a few), at most
 * VR_PATCH_MAX_ITERATIONS (then the rest is split). RXMesh adds seeds every fifth iteration; we
 * add them from the second on, since our only goal is to fit the limits, not equal sizes. */
#define VR_PATCH_MIN_ITERATIONS 3
#define VR_PATCH_MAX_ITERATIONS 12
/* The iterations stop once at most one patch in VR_PATCH_SPLIT_SHARE is over a limit: the last
 * few would each cost a whole iteration (a few face passes), splitting them costs nothing. */
#define VR_PATCH_SPLIT_SHARE 256
#define VR_PATCH_RNG_SEED 0x5eed5eedu

/* ---- plan helpers (shared with meshlets.c) ----------------------------------------------- */

void vr_batch_plan_free(vr_batch_plan *plan)
{
    if (!plan)
        return;
    void *const bufs[] = {plan->tri_order, plan->starts, plan->bounds};
    vr_free_all(bufs, VR_COUNT_OF(bufs));
    memset(plan, 0, sizeof *plan);
}

vr_status vr_batch_plan_begin(vr_batch_plan *out, uint32_t index_count, uint32_t max_unique,
                              uint32_t max_indices, const char *who)
{
    assert(out && who);
    memset(out, 0, sizeof *out);
    if (max_unique < VR_NU_MIN || max_unique > VR_NU_MAX)
        return VR_ERROR(VR_ERR_ARG, "%s: N_u = %u must be in %u..%u", who, max_unique, VR_NU_MIN,
                        VR_NU_MAX);
    if (max_indices < VR_MAX_INDICES_MIN || max_indices > VR_MAX_INDICES_MAX ||
        max_indices % 3 != 0)
        return VR_ERROR(VR_ERR_ARG,
                        "%s: max_indices %u must be a multiple of 3 (whole triangles) in %u..%u",
                        who, max_indices, VR_MAX_INDICES_MIN, VR_MAX_INDICES_MAX);
    if (index_count % 3 != 0)
        return VR_ERROR(VR_ERR_FORMAT, "%s: index count %u is not a multiple of 3", who,
                        index_count);
    if (index_count == 0 && !(out->starts = calloc(1, sizeof *out->starts)))
        return VR_ERROR(VR_ERR_OOM, "%s: empty plan", who);
    return VR_OK;
}

void vr_batch_plan_indices(uint32_t *dst, const vr_batch_plan *plan, const uint32_t *indices)
{
    assert(dst && plan && (indices || plan->triangle_count == 0));
    for (uint32_t i = 0; i < plan->triangle_count; ++i) {
        const size_t t = plan->tri_order[i];
        dst[3 * (size_t)i + 0] = indices[3 * t + 0];
        dst[3 * (size_t)i + 1] = indices[3 * t + 1];
        dst[3 * (size_t)i + 2] = indices[3 * t + 2];
    }
}

void vr_batch_plan_tri_batches(uint32_t *ids, const vr_batch_plan *plan)
{
    assert(ids && plan);
    for (uint32_t b = 0; b < plan->batch_count; ++b)
        for (uint32_t i = plan->starts[b] / 3; i < plan->starts[b + 1] / 3; ++i)
            ids[plan->tri_order[i]] = b;
}

/* ---- cluster bounds (reuse/cluster_cull.h) ------------------------------------------------- */

/* x as a float no larger (down != 0) or no smaller than x; x finite and well inside the range. */
static float vr_float_toward(double x, int down)
{
    float f = (float)x;
    if (down && (double)f > x)
        f = nextafterf(f, -INFINITY);
    if (!down && (double)f < x)
        f = nextafterf(f, INFINITY);
    return f;
}

/* The triangle at plan position i in double from float positions: normal n = (b - a) x (c - a),
 * the squared longest edge in *l2, and |n| returned. The differences and products are exact in
 * double for coordinates of similar exponents; each component of n then has one rounding, 2^-53
 * of L^2 at most, which turns the normal's direction by under 2^-50 / (|n| / L^2) - the margin
 * the cone gets below. */
static double vr_tri_normal(double n[3], double *l2, const vr_batch_plan *plan, uint32_t i,
                            const uint32_t *indices, const float *positions)
{
    const uint32_t *t = indices + 3 * (size_t)plan->tri_order[i];
    const float *pa = positions + 3 * (size_t)t[0], *pb = positions + 3 * (size_t)t[1],
                *pc = positions + 3 * (size_t)t[2];
    double e[3][3]; /* b - a, c - a, c - b */
    for (int j = 0; j < 3; ++j) {
        e[0][j] = (double)pb[j] - pa[j];
        e[1][j] = (double)pc[j] - pa[j];
        e[2][j] = (double)pc[j] - pb[j];
    }
    for (int j = 0; j < 3; ++j) {
        const int k = (j + 1) % 3, l = (j + 2) % 3;
        n[j] = e[0][k] * e[1][l] - e[0][l] * e[1][k];
    }
    *l2 = 0;
    for (int i = 0; i < 3; ++i) {
        const double s = e[i][0] * e[i][0] + e[i][1] * e[i][1] + e[i][2] * e[i][2];
        if (s > *l2)
            *l2 = s;
    }
    return sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
}

/* The bounds of plan positions first .. first + count - 1. */
static void vr_batch_bounds(vr_cluster_bounds *b, const vr_batch_plan *plan, uint32_t first,
                            uint32_t count, const uint32_t *indices, const float *positions)
{
    memset(b, 0, sizeof *b);
    if (count == 0)
        return;
    int finite = 1;
    for (int j = 0; j < 3; ++j) {
        b->lo[j] = INFINITY;
        b->hi[j] = -INFINITY;
    }
    for (uint32_t i = first; i < first + count; ++i)
        for (int k = 0; k < 3; ++k) {
            const float *p = positions + 3 * (size_t)indices[3 * (size_t)plan->tri_order[i] + k];
            for (int j = 0; j < 3; ++j) {
                finite &= isfinite(p[j]) != 0;
                b->lo[j] = p[j] < b->lo[j] ? p[j] : b->lo[j];
                b->hi[j] = p[j] > b->hi[j] ? p[j] : b->hi[j];
            }
        }
    if (!finite)
        return;
    b->flags = VR_CLUSTER_BOX;
    /* the cone: axis = the mean unit normal (as a float), half-angle from the farthest normal
     * minus each normal's rounding margin; shape and edge from the same pass */
    double sum[3] = {0, 0, 0}, shape = INFINITY, l2min = INFINITY;
    for (uint32_t i = first; i < first + count; ++i) {
        double n[3], l2;
        const double len = vr_tri_normal(n, &l2, plan, i, indices, positions);
        if (!(len > 0) || !(l2 > 0) || !isfinite(len) || !isfinite(l2))
            return; /* degenerate (or overflowing) triangle: no backface claim */
        for (int j = 0; j < 3; ++j)
            sum[j] += n[j] / len;
        shape = len / l2 < shape ? len / l2 : shape;
        l2min = l2 < l2min ? l2 : l2min;
    }
    const double slen = sqrt(sum[0] * sum[0] + sum[1] * sum[1] + sum[2] * sum[2]);
    if (!(slen > 0))
        return;
    float axis[3];
    double alen2 = 0;
    for (int j = 0; j < 3; ++j) {
        axis[j] = (float)(sum[j] / slen);
        alen2 += (double)axis[j] * axis[j];
    }
    const double alen = sqrt(alen2);
    double cos_min = 1;
    for (uint32_t i = first; i < first + count; ++i) {
        double n[3], l2;
        const double len = vr_tri_normal(n, &l2, plan, i, indices, positions);
        const double c = (n[0] * axis[0] + n[1] * axis[1] + n[2] * axis[2]) / (len * alen) -
                         1e-9 - 1e-15 * l2 / len;
        cos_min = c < cos_min ? c : cos_min;
    }
    if (!(cos_min > 1e-6))
        return; /* 90 degrees or wider: a cone says nothing */
    for (int j = 0; j < 3; ++j)
        b->axis[j] = axis[j];
    b->cone_cos = vr_float_toward(cos_min, 1);
    const double c = b->cone_cos;
    double sn = sqrt(1.0 - c * c) * (1 + 1e-12) + 1e-12;
    b->cone_sin = vr_float_toward(sn < 1 ? sn : 1, 0);
    b->shape = vr_float_toward(shape * (1 - 1e-12), 1);
    b->edge_min = vr_float_toward(sqrt(l2min) * (1 - 1e-12), 1);
    if (b->shape > 0 && b->edge_min > 0)
        b->flags |= VR_CLUSTER_CONE;
}

vr_status vr_batch_plan_bounds(vr_batch_plan *plan, const uint32_t *indices,
                               const float *positions)
{
    assert(plan && (plan->triangle_count == 0 || (indices && positions)));
    free(plan->bounds);
    plan->bounds = malloc(((size_t)plan->batch_count + 1) * sizeof *plan->bounds);
    if (!plan->bounds)
        return VR_ERROR(VR_ERR_OOM, "cluster bounds of %u batches", plan->batch_count);
    for (uint32_t b = 0; b < plan->batch_count; ++b)
        vr_batch_bounds(&plan->bounds[b], plan, plan->starts[b] / 3,
                        (plan->starts[b + 1] - plan->starts[b]) / 3, indices, positions);
    return VR_OK;
}

vr_status vr_batch_plan_validate(const vr_batch_plan *plan, const uint32_t *indices,
                                 uint32_t index_count, uint32_t vertex_count,
                                 uint32_t max_unique, uint32_t max_indices)
{
    assert(plan && (indices || index_count == 0));
    const uint32_t tris = index_count / 3;
    if (plan->triangle_count != tris || !plan->starts || (tris && !plan->tri_order))
        return VR_ERROR(VR_ERR_FORMAT, "plan: %u triangles, the mesh %u", plan->triangle_count,
                        tris);
    if (plan->starts[0] != 0 || plan->starts[plan->batch_count] != index_count)
        return VR_ERROR(VR_ERR_FORMAT, "plan: batches span indices %u..%u, the mesh 0..%u",
                        plan->starts[0], plan->starts[plan->batch_count], index_count);
    uint8_t *seen = calloc((size_t)tris + 1, 1);
    uint32_t *stamp = calloc((size_t)vertex_count + 1, sizeof *stamp);
    vr_status st = VR_OK;
    if (!seen || !stamp) {
        st = VR_ERROR(VR_ERR_OOM, "plan check: scratch for %u triangles", tris);
        goto done;
    }
    for (uint32_t b = 0; b < plan->batch_count && st == VR_OK; ++b) {
        const uint32_t s = plan->starts[b], e = plan->starts[b + 1];
        if (e <= s || s % 3 || e % 3 || e - s > max_indices) {
            st = VR_ERROR(VR_ERR_FORMAT, "plan: batch %u spans indices %u..%u (at most %u, whole "
                          "triangles, not empty)", b, s, e, max_indices);
            break;
        }
        uint32_t unique = 0;
        for (uint32_t i = s / 3; i < e / 3; ++i) {
            const uint32_t t = plan->tri_order[i];
            if (t >= tris || seen[t]) {
                st = VR_ERROR(VR_ERR_FORMAT, "plan: position %u holds triangle %u (%s)", i, t,
                              t >= tris ? "out of range" : "repeated");
                break;
            }
            if (i > s / 3 && t < plan->tri_order[i - 1]) {
                st = VR_ERROR(VR_ERR_FORMAT, "plan: batch %u is not in ascending triangle order "
                              "at position %u", b, i);
                break;
            }
            seen[t] = 1;
            for (int k = 0; k < 3; ++k) {
                const uint32_t v = indices[3 * (size_t)t + k];
                if (v < vertex_count && stamp[v] != b + 1) {
                    stamp[v] = b + 1;
                    ++unique;
                }
            }
        }
        if (st == VR_OK && unique > max_unique)
            st = VR_ERROR(VR_ERR_FORMAT, "plan: batch %u has %u distinct vertices, N_u is %u", b,
                          unique, max_unique);
    }
done:
    free(seen);
    free(stamp);
    return st;
}

/* ---- the builder ------------------------------------------------------------------------- */

/* The builder works on its own numbering of the faces (see vr_pb_locality): idx, ff and every
 * per-face array use it, src maps it back to source triangle ids. */
typedef struct vr_pb {
    uint32_t *idx;          /* 3 * faces: corners of each face */
    uint32_t *src;          /* faces: source triangle id of each face */
    uint32_t faces, vertices, max_unique, max_faces;
    uint32_t *ff_off, *ff;  /* faces + 1, then edge-adjacent faces of each face (CSR) */
    uint32_t *patch;        /* faces: patch of each face, VR_PATCH_NONE while unassigned */
    uint32_t *queue;        /* faces: breadth-first queue, reused by every pass */
    uint32_t *mark;         /* faces: visit stamps */
    uint32_t *stamp;        /* vertices: "counted in group g" stamps, values from gen */
    uint32_t gen;           /* the last stamp value handed out */
    uint32_t *seed;         /* seed_cap: seed face of each patch */
    uint32_t *last;         /* seed_cap: the last face each patch's growth reached */
    uint32_t *size;         /* seed_cap: faces per patch */
    uint32_t *verts;        /* seed_cap: distinct vertices per patch */
    uint32_t *centre;       /* seed_cap: face farthest from the patch boundary */
    uint32_t *first;        /* seed_cap + 1: patch p's faces are by_patch[first[p]..first[p+1]) */
    uint32_t *by_patch;     /* faces: faces grouped by patch, ascending inside a patch */
    uint32_t patches, seed_cap;
} vr_pb;

static void vr_pb_free(vr_pb *b)
{
    void *const bufs[] = {b->idx,  b->src,   b->ff_off, b->ff,    b->patch,
                          b->queue, b->mark,  b->stamp,  b->seed,  b->last,
                          b->size, b->verts, b->centre, b->first, b->by_patch};
    vr_free_all(bufs, VR_COUNT_OF(bufs));
}

static uint64_t vr_pb_rng(uint64_t *s) /* splitmix64 */
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* A fresh stamp value; on wrap-around every stamp array is cleared first. */
static uint32_t vr_pb_stamp(vr_pb *b)
{
    if (b->gen == UINT32_MAX) {
        memset(b->stamp, 0, (size_t)b->vertices * sizeof *b->stamp);
        memset(b->mark, 0, (size_t)b->faces * sizeof *b->mark);
        b->gen = 0;
    }
    return ++b->gen;
}

/* Grows the per-patch arrays to hold `need` patches. */
static vr_status vr_pb_reserve(vr_pb *b, uint32_t need)
{
    if (need <= b->seed_cap)
        return VR_OK;
    uint32_t cap = b->seed_cap ? b->seed_cap : 64;
    while (cap < need)
        cap = cap > UINT32_MAX / 2 ? need : cap * 2;
    uint32_t **arrays[] = {&b->seed, &b->last, &b->size, &b->verts, &b->centre, &b->first};
    for (size_t k = 0; k < VR_COUNT_OF(arrays); ++k) {
        uint32_t *p = realloc(*arrays[k], ((size_t)cap + 1) * sizeof **arrays[k]);
        if (!p)
            return VR_ERROR(VR_ERR_OOM, "patches: arrays for %u patches", cap);
        *arrays[k] = p;
    }
    b->seed_cap = cap;
    return VR_OK;
}

/* Renumbers the faces: face i becomes the one that was order[i]. Corners, sources and (when
 * built) the adjacency follow; `scratch` (faces entries) and `patch` are overwritten. */
static vr_status vr_pb_permute(vr_pb *b, const uint32_t *order, uint32_t *scratch)
{
    const uint32_t F = b->faces;
    uint32_t *idx = malloc((size_t)3 * F * sizeof *idx);
    uint32_t *ff_off = b->ff ? malloc(((size_t)F + 1) * sizeof *ff_off) : NULL;
    uint32_t *ff = b->ff ? malloc(((size_t)b->ff_off[F] + 1) * sizeof *ff) : NULL;
    if (!idx || (b->ff && (!ff_off || !ff))) {
        free(idx);
        free(ff_off);
        free(ff);
        return VR_ERROR(VR_ERR_OOM, "patches: renumbering %u triangles", F);
    }
    uint32_t *rank = scratch; /* old -> new */
    for (uint32_t i = 0; i < F; ++i)
        rank[order[i]] = i;
    uint32_t k = 0;
    for (uint32_t i = 0; i < F; ++i) {
        const uint32_t f = order[i];
        memcpy(idx + 3 * (size_t)i, b->idx + 3 * (size_t)f, 3 * sizeof *idx);
        if (ff) {
            ff_off[i] = k;
            for (uint32_t j = b->ff_off[f]; j < b->ff_off[f + 1]; ++j)
                ff[k++] = rank[b->ff[j]];
        }
    }
    /* sources: src'[i] = src[order[i]], through the free patch array */
    for (uint32_t i = 0; i < F; ++i)
        b->patch[i] = b->src[order[i]];
    memcpy(b->src, b->patch, (size_t)F * sizeof *b->src);
    free(b->idx);
    b->idx = idx;
    if (ff) {
        ff_off[F] = k;
        free(b->ff_off);
        free(b->ff);
        b->ff_off = ff_off;
        b->ff = ff;
    }
    return VR_OK;
}

/* Locality, part 1, before the adjacency exists: faces sorted by their smallest vertex id (a
 * counting sort). Loaded meshes number vertices coherently whatever the triangle order, so a
 * randomly ordered mesh becomes coherent again and the adjacency below stays in the caches. */
static vr_status vr_pb_sort_by_vertex(vr_pb *b)
{
    const uint32_t F = b->faces, V = b->vertices;
    uint32_t *count = calloc((size_t)V + 1, sizeof *count);
    if (!count)
        return VR_ERROR(VR_ERR_OOM, "patches: sorting %u triangles", F);
    for (uint32_t f = 0; f < F; ++f) {
        const uint32_t *c = b->idx + 3 * (size_t)f;
        const uint32_t lo = c[0] < c[1] ? (c[0] < c[2] ? c[0] : c[2]) : (c[1] < c[2] ? c[1] : c[2]);
        b->by_patch[f] = lo;
        ++count[lo + 1];
    }
    for (uint32_t v = 0; v < V; ++v)
        count[v + 1] += count[v];
    for (uint32_t f = 0; f < F; ++f)
        b->queue[count[b->by_patch[f]]++] = f;
    free(count);
    return vr_pb_permute(b, b->queue, b->by_patch);
}

/* 1 when face g has vertex v. */
static int vr_pb_has(const uint32_t *idx, uint32_t g, uint32_t v)
{
    const uint32_t *c = idx + 3 * (size_t)g;
    return c[0] == v || c[1] == v || c[2] == v;
}

/* The face adjacency: faces sharing an edge (a non-manifold edge joins all its faces; a
 * degenerate face's repeated corner makes no edge), through a vertex -> faces table:
 * O(index_count x valence). */
static vr_status vr_pb_adjacency(vr_pb *b)
{
    const uint32_t F = b->faces, V = b->vertices;
    const uint32_t *idx = b->idx;
    uint32_t *vf_off = calloc((size_t)V + 2, sizeof *vf_off);
    uint32_t *vf = malloc(((size_t)3 * F + 1) * sizeof *vf);
    size_t cap = (size_t)3 * F + 16, n = 0;
    b->ff_off = malloc(((size_t)F + 1) * sizeof *b->ff_off);
    b->ff = malloc(cap * sizeof *b->ff);
    vr_status st = VR_OK;
    if (!vf_off || !vf || !b->ff_off || !b->ff) {
        st = VR_ERROR(VR_ERR_OOM, "patches: face adjacency of %u triangles", F);
        goto done;
    }
    /* vertex -> faces, each face once per distinct corner; vf_off[v + 1] counts, then (after
     * the fill) vf_off[v] .. vf_off[v + 1] are v's faces */
    for (uint32_t f = 0; f < F; ++f) {
        const uint32_t *c = idx + 3 * (size_t)f;
        ++vf_off[c[0] + 2];
        if (c[1] != c[0])
            ++vf_off[c[1] + 2];
        if (c[2] != c[0] && c[2] != c[1])
            ++vf_off[c[2] + 2];
    }
    for (uint32_t v = 0; v < V; ++v)
        vf_off[v + 2] += vf_off[v + 1];
    for (uint32_t f = 0; f < F; ++f) {
        const uint32_t *c = idx + 3 * (size_t)f;
        vf[vf_off[c[0] + 1]++] = f;
        if (c[1] != c[0])
            vf[vf_off[c[1] + 1]++] = f;
        if (c[2] != c[0] && c[2] != c[1])
            vf[vf_off[c[2] + 1]++] = f;
    }
    for (uint32_t f = 0; f < F; ++f) {
        b->ff_off[f] = (uint32_t)n;
        const uint32_t *c = idx + 3 * (size_t)f;
        for (int e = 0; e < 3; ++e) {
            uint32_t u = c[e], w = c[(e + 1) % 3];
            if (u == w)
                continue;
            if (vf_off[w + 1] - vf_off[w] < vf_off[u + 1] - vf_off[u]) {
                const uint32_t t = u; /* scan the shorter list */
                u = w;
                w = t;
            }
            for (uint32_t j = vf_off[u]; j < vf_off[u + 1]; ++j) {
                const uint32_t g = vf[j];
                if (g == f || !vr_pb_has(idx, g, w))
                    continue;
                size_t k = b->ff_off[f];
                while (k < n && b->ff[k] != g)
                    ++k;
                if (k < n)
                    continue; /* shares two edges with f */
                if (n == cap) {
                    uint32_t *p = realloc(b->ff, 2 * cap * sizeof *p);
                    if (!p) {
                        st = VR_ERROR(VR_ERR_OOM, "patches: face adjacency of %u triangles", F);
                        goto done;
                    }
                    b->ff = p;
                    cap *= 2;
                }
                b->ff[n++] = g;
            }
        }
        if (n > UINT32_MAX) {
            st = VR_ERROR(VR_ERR_OVERFLOW, "patches: more than 2^32 face adjacencies");
            goto done;
        }
        /* neighbours by source id (an insertion sort: about 3 of them), so no later decision
         * depends on how the vertices are numbered */
        for (size_t k = b->ff_off[f] + 1; k < n; ++k)
            for (size_t j = k; j > b->ff_off[f] && b->src[b->ff[j - 1]] > b->src[b->ff[j]]; --j) {
                const uint32_t t = b->ff[j];
                b->ff[j] = b->ff[j - 1];
                b->ff[j - 1] = t;
            }
    }
    b->ff_off[F] = (uint32_t)n;
done:
    free(vf_off);
    free(vf);
    return st;
}

/* Locality, part 2: faces renumbered breadth first over the adjacency, one edge-connected
 * component after the other (each from its lowest source triangle), so neighbours have nearby
 * numbers whatever the vertex order (also after +fetch on a random order). The walk depends on
 * the triangle order and the connectivity only, and so does everything after it: a mesh whose
 * vertices are renumbered (an OBJ read back through assimp) gets the same patches.
 * comp[0..*comps] gets the first new number of each component, then faces. */
static vr_status vr_pb_locality(vr_pb *b, uint32_t *comp, uint32_t *comps)
{
    const uint32_t F = b->faces;
    uint32_t *order = b->queue, *seen = b->mark; /* order: new -> old */
    uint32_t *by_src = b->patch;                  /* source id -> current number */
    for (uint32_t f = 0; f < F; ++f)
        by_src[b->src[f]] = f;
    uint32_t n = 0, c = 0;
    const uint32_t mark = vr_pb_stamp(b);
    for (uint32_t t = 0; t < F; ++t) {
        const uint32_t root = by_src[t];
        if (seen[root] == mark)
            continue;
        comp[c++] = n;
        uint32_t head = n;
        seen[root] = mark;
        order[n++] = root;
        while (head < n) {
            const uint32_t f = order[head++];
            for (uint32_t j = b->ff_off[f]; j < b->ff_off[f + 1]; ++j)
                if (seen[b->ff[j]] != mark) {
                    seen[b->ff[j]] = mark;
                    order[n++] = b->ff[j];
                }
        }
    }
    comp[c] = F;
    *comps = c;
    return vr_pb_permute(b, order, b->by_patch);
}

/* Initial seeds (RXMesh: one per component first, the rest in proportion to size): each
 * component gets ceil(size / target) of its faces, chosen at random (fixed seed) - at least
 * one, so every face is reached by some seed. */
static vr_status vr_pb_seed(vr_pb *b, const uint32_t *comp, uint32_t comps)
{
    const uint32_t target = vr_patch_target(b->max_unique, b->max_faces);
    uint64_t rng = VR_PATCH_RNG_SEED;
    b->patches = 0;
    for (uint32_t c = 0; c < comps; ++c) {
        const uint32_t lo = comp[c], n = comp[c + 1] - lo;
        const uint32_t k = (n + target - 1) / target;
        vr_status st = vr_pb_reserve(b, b->patches + k);
        if (st != VR_OK)
            return st;
        /* k distinct faces: a partial Fisher-Yates shuffle of lo .. lo + n */
        for (uint32_t i = 0; i < n; ++i)
            b->queue[i] = lo + i;
        for (uint32_t i = 0; i < k; ++i) {
            const uint32_t j = i + (uint32_t)(vr_pb_rng(&rng) % (n - i));
            const uint32_t t = b->queue[i];
            b->queue[i] = b->queue[j];
            b->queue[j] = t;
            b->seed[b->patches++] = b->queue[i];
        }
    }
    return VR_OK;
}

static int vr_pb_cmp_u32(const void *a, const void *b)
{
    const uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* Region growing from every seed at once: a face joins the patch of the first face that
 * reaches it (queue order, so ties go to the lower patch id). Patch ids follow the seeds' face
 * numbers, so every round of the breadth-first queue sweeps the faces in memory order.
 * last[p] gets p's last face. */
static void vr_pb_grow(vr_pb *b)
{
    const uint32_t F = b->faces;
    qsort(b->seed, b->patches, sizeof *b->seed, vr_pb_cmp_u32);
    for (uint32_t f = 0; f < F; ++f)
        b->patch[f] = VR_PATCH_NONE;
    uint32_t head = 0, n = 0;
    for (uint32_t p = 0; p < b->patches; ++p) {
        b->patch[b->seed[p]] = p;
        b->last[p] = b->seed[p];
        b->queue[n++] = b->seed[p];
    }
    while (head < n) {
        const uint32_t f = b->queue[head++], p = b->patch[f];
        b->last[p] = f;
        for (uint32_t j = b->ff_off[f]; j < b->ff_off[f + 1]; ++j) {
            const uint32_t g = b->ff[j];
            if (b->patch[g] == VR_PATCH_NONE) {
                b->patch[g] = p;
                b->queue[n++] = g;
            }
        }
    }
    assert(n == F); /* every component holds a seed */
}

static int vr_pb_over(const vr_pb *b, uint32_t p)
{
    return b->size[p] > b->max_faces || b->verts[p] > b->max_unique;
}

/* Groups faces by patch (by_patch, first: a counting sort, ascending inside a patch) and
 * counts each patch's faces and distinct vertices. Returns the patches over a limit. */
static uint32_t vr_pb_measure(vr_pb *b)
{
    const uint32_t P = b->patches, F = b->faces;
    memset(b->first, 0, ((size_t)P + 1) * sizeof *b->first);
    for (uint32_t f = 0; f < F; ++f)
        ++b->first[b->patch[f] + 1];
    for (uint32_t p = 0; p < P; ++p)
        b->first[p + 1] += b->first[p];
    for (uint32_t f = 0; f < F; ++f)
        b->by_patch[b->first[b->patch[f]]++] = f;
    for (uint32_t p = P; p > 0; --p)
        b->first[p] = b->first[p - 1];
    b->first[0] = 0;
    uint32_t over = 0;
    for (uint32_t p = 0; p < P; ++p) {
        const uint32_t mark = vr_pb_stamp(b);
        uint32_t unique = 0;
        for (uint32_t i = b->first[p]; i < b->first[p + 1]; ++i) {
            const uint32_t *c = b->idx + 3 * (size_t)b->by_patch[i];
            for (int k = 0; k < 3; ++k)
                if (b->stamp[c[k]] != mark) {
                    b->stamp[c[k]] = mark;
                    ++unique;
                }
        }
        b->size[p] = b->first[p + 1] - b->first[p];
        b->verts[p] = unique;
        over += vr_pb_over(b, p);
    }
    return over;
}

/* Lloyd's update (after vr_pb_measure): every patch's new seed is its face farthest, in face
 * steps, from the patch boundary - faces next to another patch or to an open mesh edge - found
 * by one breadth-first pass from all boundary faces that never leaves a patch (RXMesh's "update
 * seeds"). A patch without boundary (a closed component in one patch) keeps its seed. With
 * add_seeds, a patch over a limit also gets a second seed at the face its growth reached last,
 * the farthest from its old seed, which splits it in the next growth (RXMesh's "seed
 * addition"). */
static vr_status vr_pb_update(vr_pb *b, int add_seeds)
{
    const uint32_t F = b->faces, P = b->patches;
    const uint32_t mark = vr_pb_stamp(b);
    uint32_t head = 0, n = 0;
    for (uint32_t f = 0; f < F; ++f) {
        const uint32_t p = b->patch[f];
        int boundary = b->ff_off[f + 1] - b->ff_off[f] < 3;
        for (uint32_t j = b->ff_off[f]; j < b->ff_off[f + 1] && !boundary; ++j)
            boundary = b->patch[b->ff[j]] != p;
        if (boundary) {
            b->mark[f] = mark;
            b->queue[n++] = f;
        }
    }
    for (uint32_t p = 0; p < P; ++p)
        b->centre[p] = b->seed[p];
    while (head < n) {
        const uint32_t f = b->queue[head++], p = b->patch[f];
        b->centre[p] = f;
        for (uint32_t j = b->ff_off[f]; j < b->ff_off[f + 1]; ++j) {
            const uint32_t g = b->ff[j];
            if (b->mark[g] != mark && b->patch[g] == p) {
                b->mark[g] = mark;
                b->queue[n++] = g;
            }
        }
    }
    uint32_t extra = 0;
    for (uint32_t p = 0; p < P && add_seeds; ++p)
        extra += vr_pb_over(b, p) && b->last[p] != b->centre[p];
    vr_status st = vr_pb_reserve(b, P + extra);
    if (st != VR_OK)
        return st;
    for (uint32_t p = 0; p < P; ++p) {
        if (add_seeds && vr_pb_over(b, p) && b->last[p] != b->centre[p])
            b->seed[b->patches++] = b->last[p];
        b->seed[p] = b->centre[p];
    }
    return VR_OK;
}

/* Splits every patch still over a limit after the iterations: pieces grow breadth first inside
 * the patch from its lowest free face, taking a face only while the piece stays within both
 * limits (one face always fits: N_u >= 3, max_faces >= 1), until the patch is used up; the
 * pieces become patches. *split gets how many patches were split. */
static vr_status vr_pb_split(vr_pb *b, uint32_t *split)
{
    const uint32_t P = b->patches;
    *split = 0;
    for (uint32_t p = 0; p < P; ++p) {
        if (!vr_pb_over(b, p))
            continue;
        ++*split;
        for (uint32_t i = b->first[p]; i < b->first[p + 1]; ++i)
            b->patch[b->by_patch[i]] = VR_PATCH_NONE; /* released */
        int first_piece = 1;
        for (uint32_t i = b->first[p]; i < b->first[p + 1]; ++i) {
            const uint32_t root = b->by_patch[i];
            if (b->patch[root] != VR_PATCH_NONE)
                continue;
            uint32_t q = p; /* the first piece keeps p's id, later ones get new ids */
            if (!first_piece) {
                vr_status st = vr_pb_reserve(b, b->patches + 1);
                if (st != VR_OK)
                    return st;
                q = b->patches++;
            }
            first_piece = 0;
            /* mark: queued for this piece; stamp: counted in it */
            const uint32_t piece = vr_pb_stamp(b);
            uint32_t head = 0, n = 0, faces = 0, unique = 0;
            b->queue[n++] = root;
            b->mark[root] = piece;
            while (head < n) {
                const uint32_t f = b->queue[head++];
                const uint32_t *c = b->idx + 3 * (size_t)f;
                const uint32_t fresh = (b->stamp[c[0]] != piece) +
                                       (b->stamp[c[1]] != piece && c[1] != c[0]) +
                                       (b->stamp[c[2]] != piece && c[2] != c[0] && c[2] != c[1]);
                if (faces == b->max_faces || unique + fresh > b->max_unique)
                    continue; /* stays for a later piece */
                b->stamp[c[0]] = b->stamp[c[1]] = b->stamp[c[2]] = piece;
                unique += fresh;
                ++faces;
                b->patch[f] = q;
                for (uint32_t j = b->ff_off[f]; j < b->ff_off[f + 1]; ++j) {
                    const uint32_t g = b->ff[j];
                    if (b->patch[g] == VR_PATCH_NONE && b->mark[g] != piece) {
                        b->mark[g] = piece;
                        b->queue[n++] = g;
                    }
                }
            }
        }
    }
    return VR_OK;
}

vr_status vr_patches_build(vr_batch_plan *out, const uint32_t *indices, uint32_t index_count,
                           uint32_t vertex_count, uint32_t max_unique, uint32_t max_indices)
{
    assert(out && (indices || index_count == 0));
    vr_status st = vr_batch_plan_begin(out, index_count, max_unique, max_indices, "patches");
    if (st != VR_OK || index_count == 0)
        return st;
    const size_t F = index_count / 3;
    vr_pb b;
    memset(&b, 0, sizeof b);
    b.faces = (uint32_t)F;
    b.vertices = vertex_count;
    b.max_unique = max_unique;
    b.max_faces = max_indices / 3;
    uint32_t *comp = NULL;
    uint32_t comps = 0;
    b.idx = malloc(3 * F * sizeof *b.idx);
    b.src = malloc(F * sizeof *b.src);
    b.patch = malloc(F * sizeof *b.patch);
    b.queue = malloc(F * sizeof *b.queue);
    b.mark = calloc(F, sizeof *b.mark);
    b.by_patch = malloc(F * sizeof *b.by_patch);
    b.stamp = calloc((size_t)vertex_count + 1, sizeof *b.stamp);
    comp = malloc((F + 1) * sizeof *comp);
    if (!b.idx || !b.src || !b.patch || !b.queue || !b.mark || !b.by_patch || !b.stamp || !comp) {
        st = VR_ERROR(VR_ERR_OOM, "patches: scratch for %u triangles", b.faces);
        goto done;
    }
    memcpy(b.idx, indices, 3 * F * sizeof *b.idx);
    for (uint32_t f = 0; f < b.faces; ++f)
        b.src[f] = f;
    if ((st = vr_pb_sort_by_vertex(&b)) != VR_OK || (st = vr_pb_adjacency(&b)) != VR_OK ||
        (st = vr_pb_locality(&b, comp, &comps)) != VR_OK ||
        (st = vr_pb_seed(&b, comp, comps)) != VR_OK)
        goto done;
    for (uint32_t it = 0;; ++it) {
        vr_pb_grow(&b);
        const uint32_t over = vr_pb_measure(&b);
        out->iterations = it + 1;
        if ((over <= b.patches / VR_PATCH_SPLIT_SHARE && it + 1 >= VR_PATCH_MIN_ITERATIONS) ||
            it + 1 >= VR_PATCH_MAX_ITERATIONS)
            break;
        /* RXMesh lets Lloyd balance first; the first update only moves seeds */
        if ((st = vr_pb_update(&b, over > 0 && it >= 1)) != VR_OK)
            goto done;
    }
    if ((st = vr_pb_split(&b, &out->split)) != VR_OK)
        goto done;
    if (out->split && vr_pb_measure(&b) != 0) {
        st = VR_ERROR(VR_ERR_FORMAT, "patches: a split patch still breaks a limit");
        goto done;
    }
    /* the search scratch goes before the packing allocates its own */
    free(b.queue);
    free(b.mark);
    b.queue = b.mark = NULL;
    const vr_patch_cut cut = {b.idx, b.ff_off, b.ff, b.patch, b.src, b.faces, b.vertices,
                              b.patches};
    st = vr_patches_pack_cut(out, &cut, b.max_unique, b.max_faces);
done:
    free(comp);
    vr_pb_free(&b);
    if (st != VR_OK)
        vr_batch_plan_free(out);
    return st;
}
