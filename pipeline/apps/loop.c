/* loop.c - one step of Loop subdivision on the CPU (loop.h has the rules, the output layout and
 * the tolerance): the oracle of the paper's Section 5.1 application. Plain loops in linear time:
 * a counting sort of the half-edges by their smaller endpoint builds the edge table, the vertex
 * rings are accumulated edge by edge. Try: `vreuse_tests apps/loop`.
 */
#include "pipeline/apps/loop.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "scenes/scene_internal.h" /* vr_compute_normals, vr_check_finite3 */

#define NONE UINT32_MAX

double vr_loop_beta(uint32_t n)
{
    assert(n >= 1);
    const double pi = 3.14159265358979323846;
    const double c = 3.0 / 8.0 + 0.25 * cos(2.0 * pi / n);
    return (5.0 / 8.0 - c * c) / n;
}

double vr_loop_float_tolerance(uint32_t k, double max_abs)
{
    return (k + 4.0) * ldexp(1.0, -24) * max_abs;
}

/* The edge table: temporary ids in (smaller endpoint, first appearance in its bucket) order. */
typedef struct edge_table {
    uint32_t count;    /* distinct edges E */
    uint32_t *of_half; /* index_count: half-edge (3t + e) -> temporary edge id */
    uint32_t *lo, *hi; /* E each: endpoints, lo <= hi */
    uint32_t *faces;   /* E: non-degenerate triangles using the edge */
    uint32_t *opp;     /* 2E: the opposite corners of its first two non-degenerate triangles */
    uint32_t *number;  /* E: final number, by first occurrence in index-buffer order */
} edge_table;

static void edge_table_free(edge_table *t)
{
    free(t->of_half), free(t->lo), free(t->hi), free(t->faces), free(t->opp), free(t->number);
    memset(t, 0, sizeof *t);
}

static int degenerate(const uint32_t *tri)
{
    return tri[0] == tri[1] || tri[1] == tri[2] || tri[2] == tri[0];
}

static vr_status edge_table_build(edge_table *t, const vr_mesh *m)
{
    const uint32_t n = m->index_count, vc = m->vertex_count;
    memset(t, 0, sizeof *t);
    uint32_t *row = calloc((size_t)vc + 1, sizeof *row);
    uint32_t *bucket = malloc((size_t)n * sizeof *bucket);
    uint32_t *stamp = malloc((size_t)vc * sizeof *stamp), *slot = malloc((size_t)vc * sizeof *slot);
    t->of_half = malloc((size_t)n * sizeof *t->of_half);
    t->lo = malloc((size_t)n * sizeof *t->lo);
    t->hi = malloc((size_t)n * sizeof *t->hi);
    vr_status s = VR_OK;
    if (!row || !bucket || !stamp || !slot || !t->of_half || !t->lo || !t->hi) {
        s = VR_ERROR(VR_ERR_OOM, "loop subdivision: cannot allocate the edge table for %u indices",
                     n);
        goto done;
    }
    /* counting sort of the half-edges by their smaller endpoint (stable: index order) */
    for (uint32_t h = 0; h < n; ++h) {
        uint32_t a = m->indices[h], b = m->indices[h - h % 3 + (h % 3 + 1) % 3];
        row[(a < b ? a : b) + 1]++;
    }
    for (uint32_t v = 0; v < vc; ++v)
        row[v + 1] += row[v];
    memcpy(slot, row, (size_t)vc * sizeof *slot); /* fill pointers for now */
    for (uint32_t h = 0; h < n; ++h) {
        uint32_t a = m->indices[h], b = m->indices[h - h % 3 + (h % 3 + 1) % 3];
        bucket[slot[a < b ? a : b]++] = h;
    }
    /* within a bucket, stamp[hi] == lo marks an edge already seen there: O(1) per half-edge */
    for (uint32_t v = 0; v < vc; ++v)
        stamp[v] = NONE;
    uint32_t count = 0;
    for (uint32_t lo = 0; lo < vc; ++lo)
        for (uint32_t j = row[lo]; j < row[lo + 1]; ++j) {
            uint32_t h = bucket[j];
            uint32_t a = m->indices[h], b = m->indices[h - h % 3 + (h % 3 + 1) % 3];
            uint32_t hi = a < b ? b : a;
            if (stamp[hi] != lo) {
                stamp[hi] = lo, slot[hi] = count;
                t->lo[count] = lo, t->hi[count] = hi, ++count;
            }
            t->of_half[h] = slot[hi];
        }
    t->count = count;
    t->faces = calloc(count ? count : 1, sizeof *t->faces);
    t->opp = malloc(2 * (size_t)(count ? count : 1) * sizeof *t->opp);
    t->number = malloc((size_t)(count ? count : 1) * sizeof *t->number);
    if (!t->faces || !t->opp || !t->number) {
        s = VR_ERROR(VR_ERR_OOM, "loop subdivision: cannot allocate %u edges", count);
        goto done;
    }
    for (uint32_t e = 0; e < count; ++e)
        t->number[e] = NONE, t->opp[2 * e] = t->opp[2 * e + 1] = NONE;
    /* faces and opposite corners in index order; numbers by first occurrence */
    uint32_t next = 0;
    for (uint32_t h = 0; h < n; ++h) {
        const uint32_t *tri = m->indices + (h - h % 3), e = t->of_half[h];
        if (t->number[e] == NONE)
            t->number[e] = next++;
        if (!degenerate(tri)) {
            if (t->faces[e] < 2)
                t->opp[2 * e + t->faces[e]] = tri[(h % 3 + 2) % 3];
            ++t->faces[e];
        }
    }
done:
    free(row), free(bucket), free(stamp), free(slot);
    if (s)
        edge_table_free(t);
    return s;
}

static int crease(uint32_t faces)
{
    return faces == 1 || faces >= 3;
}

/* The moved old vertices: rings summed edge by edge (temporary-id order), in double. */
static vr_status move_vertices(float *dst, const vr_mesh *m, const edge_table *t,
                               vr_loop_stats *st)
{
    const uint32_t vc = m->vertex_count;
    double *ring = calloc(3 * (size_t)vc, sizeof *ring), *crs = calloc(3 * (size_t)vc, sizeof *crs);
    uint32_t *n = calloc(vc, sizeof *n), *nc = calloc(vc, sizeof *nc);
    if (!ring || !crs || !n || !nc) {
        free(ring), free(crs), free(n), free(nc);
        return VR_ERROR(VR_ERR_OOM, "loop subdivision: cannot allocate rings of %u vertices", vc);
    }
    const float *p = m->positions;
    for (uint32_t e = 0; e < t->count; ++e) {
        if (t->faces[e] == 0)
            continue; /* only in degenerate triangles (or a self pair): no part of a ring */
        const uint32_t ends[2] = {t->lo[e], t->hi[e]};
        for (int s = 0; s < 2; ++s) {
            const uint32_t v = ends[s], o = ends[1 - s];
            ++n[v];
            for (int k = 0; k < 3; ++k)
                ring[3 * (size_t)v + k] += p[3 * (size_t)o + k];
            if (crease(t->faces[e])) {
                ++nc[v];
                for (int k = 0; k < 3; ++k)
                    crs[3 * (size_t)v + k] += p[3 * (size_t)o + k];
            }
        }
    }
    for (uint32_t v = 0; v < vc; ++v) {
        const float *pv = p + 3 * (size_t)v;
        float *d = dst + 3 * (size_t)v;
        if (n[v] == 0 || nc[v] >= 3) { /* isolated, or a corner */
            memcpy(d, pv, 3 * sizeof *d);
            st->corner_vertices += n[v] != 0;
        } else if (nc[v] == 2) {
            for (int k = 0; k < 3; ++k)
                d[k] = (float)(0.75 * pv[k] + 0.125 * crs[3 * (size_t)v + k]);
            ++st->crease_vertices;
        } else {
            const double beta = vr_loop_beta(n[v]), self = 1.0 - n[v] * beta;
            for (int k = 0; k < 3; ++k)
                d[k] = (float)(self * pv[k] + beta * ring[3 * (size_t)v + k]);
        }
    }
    free(ring), free(crs), free(n), free(nc);
    return VR_OK;
}

vr_status vr_loop_subdivide(vr_mesh *out, const vr_mesh *in, vr_loop_stats *stats)
{
    assert(out && in);
    memset(out, 0, sizeof *out);
    vr_loop_stats st;
    memset(&st, 0, sizeof st);
    if (stats)
        *stats = st;
    const char *what = "loop subdivision input";
    vr_status s = vr_mesh_validate(in, what);
    if (!s)
        s = vr_check_finite3(in->positions, in->vertex_count, what, "position");
    if (s)
        return s;
    if ((uint64_t)in->index_count * 4 > UINT32_MAX)
        return VR_ERROR(VR_ERR_OVERFLOW,
                        "loop subdivision: %u triangles give %llu indices, over the 2^32-1 limit",
                        in->index_count / 3, (unsigned long long)in->index_count * 4);
    edge_table t;
    if ((s = edge_table_build(&t, in)))
        return s;
    const uint32_t vc = in->vertex_count;
    const uint64_t total = (uint64_t)vc + t.count;
    if (total > UINT32_MAX) {
        edge_table_free(&t);
        return VR_ERROR(VR_ERR_OVERFLOW,
                        "loop subdivision: %u vertices + %u edges = %llu, over the 2^32-1 limit",
                        vc, t.count, (unsigned long long)total);
    }
    out->vertex_count = (uint32_t)total;
    out->index_count = in->index_count * 4;
    out->positions = malloc(3 * (size_t)total * sizeof(float));
    out->normals = malloc(3 * (size_t)total * sizeof(float));
    out->indices = malloc((size_t)out->index_count * sizeof(uint32_t));
    if (!out->positions || !out->normals || !out->indices) {
        vr_mesh_free(out);
        edge_table_free(&t);
        return VR_ERROR(VR_ERR_OOM, "loop subdivision: cannot allocate %llu vertices",
                        (unsigned long long)total);
    }
    if ((s = move_vertices(out->positions, in, &t, &st))) {
        vr_mesh_free(out);
        edge_table_free(&t);
        return s;
    }
    const float *p = in->positions;
    for (uint32_t e = 0; e < t.count; ++e) {
        const float *a = p + 3 * (size_t)t.lo[e], *b = p + 3 * (size_t)t.hi[e];
        float *d = out->positions + 3 * ((size_t)vc + t.number[e]);
        if (t.faces[e] == 2) {
            const float *c = p + 3 * (size_t)t.opp[2 * e], *f = p + 3 * (size_t)t.opp[2 * e + 1];
            for (int k = 0; k < 3; ++k)
                d[k] = (float)(0.375 * ((double)a[k] + b[k]) + 0.125 * ((double)c[k] + f[k]));
        } else {
            for (int k = 0; k < 3; ++k)
                d[k] = (float)(0.5 * ((double)a[k] + b[k]));
        }
        st.boundary_edges += t.faces[e] == 1;
        st.nonmanifold_edges += t.faces[e] >= 3;
    }
    for (uint32_t i = 0; i < in->index_count; i += 3) {
        const uint32_t *tri = in->indices + i;
        const uint32_t m01 = vc + t.number[t.of_half[i]], m12 = vc + t.number[t.of_half[i + 1]],
                       m20 = vc + t.number[t.of_half[i + 2]];
        const uint32_t child[12] = {tri[0], m01, m20, m01, tri[1], m12,
                                    m20,    m12, tri[2], m01, m12, m20};
        memcpy(out->indices + 4 * (size_t)i, child, sizeof child);
        st.degenerate_triangles += degenerate(tri);
    }
    st.edges = t.count;
    edge_table_free(&t);
    vr_compute_normals(out->normals, out);
    if (stats)
        *stats = st;
    return VR_OK;
}
