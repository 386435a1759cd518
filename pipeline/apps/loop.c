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

#include "pipeline/apps/loop_math.h"
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

void vr_loop_topology_free(vr_loop_topology *t)
{
    free(t->edge_of_half), free(t->edge_first_half), free(t->edge_ends), free(t->edge_faces);
    free(t->edge_opp), free(t->tri_edges), free(t->ring_start), free(t->ring), free(t->beta);
    memset(t, 0, sizeof *t);
}

/* The flat topology from the edge table: per-edge arrays by final number, and the rings - for
 * each edge with a face, in temporary-id order, an entry at both ends - as a counting sort by
 * vertex, so a vertex's entries keep that order (the order the rule sums them in). */
static vr_status topology_from_table(vr_loop_topology *o, const edge_table *t, const vr_mesh *m,
                                     vr_loop_stats *st)
{
    const uint32_t vc = m->vertex_count, E = t->count, n = m->index_count;
    o->vertex_count = vc, o->edge_count = E, o->index_count = n;
    o->edge_of_half = malloc((size_t)(n ? n : 1) * sizeof *o->edge_of_half);
    o->edge_first_half = malloc((size_t)(E ? E : 1) * sizeof *o->edge_first_half);
    o->edge_ends = malloc(2 * (size_t)(E ? E : 1) * sizeof *o->edge_ends);
    o->edge_faces = malloc((size_t)(E ? E : 1) * sizeof *o->edge_faces);
    o->edge_opp = malloc(2 * (size_t)(E ? E : 1) * sizeof *o->edge_opp);
    o->tri_edges = calloc((size_t)(n / 3 ? n / 3 : 1), 1);
    o->ring_start = calloc((size_t)vc + 1, sizeof *o->ring_start);
    uint32_t *fill = malloc((size_t)(vc ? vc : 1) * sizeof *fill);
    if (!o->edge_of_half || !o->edge_first_half || !o->edge_ends || !o->edge_faces ||
        !o->edge_opp || !o->tri_edges || !o->ring_start || !fill) {
        free(fill);
        return VR_ERROR(VR_ERR_OOM, "loop subdivision: cannot allocate the topology of %u edges",
                        E);
    }
    for (uint32_t e = 0; e < E; ++e)
        o->edge_first_half[e] = NONE;
    for (uint32_t h = 0; h < n; ++h) {
        const uint32_t e = t->number[t->of_half[h]];
        o->edge_of_half[h] = e;
        if (o->edge_first_half[e] == NONE)
            o->edge_first_half[e] = h;
    }
    for (uint32_t e = 0; e < E; ++e) {
        const uint32_t f = t->number[e];
        o->edge_ends[2 * f] = t->lo[e], o->edge_ends[2 * f + 1] = t->hi[e];
        o->edge_faces[f] = t->faces[e];
        o->edge_opp[2 * f] = t->opp[2 * e], o->edge_opp[2 * f + 1] = t->opp[2 * e + 1];
        if (t->faces[e])
            o->ring_start[t->lo[e] + 1]++, o->ring_start[t->hi[e] + 1]++;
    }
    for (uint32_t h = 0; h < n; ++h) {
        const uint32_t e = o->edge_of_half[h], k = h % 3;
        o->tri_edges[h / 3] |= (uint8_t)((o->edge_first_half[e] == h) << k |
                                         (o->edge_faces[e] == 2) << (k + 3));
    }
    uint32_t max_n = 0;
    for (uint32_t v = 0; v < vc; ++v) {
        max_n = o->ring_start[v + 1] > max_n ? o->ring_start[v + 1] : max_n;
        o->ring_start[v + 1] += o->ring_start[v];
    }
    o->ring = malloc((size_t)(o->ring_start[vc] ? o->ring_start[vc] : 1) * sizeof *o->ring);
    o->beta = malloc(((size_t)max_n + 1) * sizeof *o->beta);
    if (!o->ring || !o->beta) {
        free(fill);
        return VR_ERROR(VR_ERR_OOM, "loop subdivision: cannot allocate the rings");
    }
    memcpy(fill, o->ring_start, (size_t)vc * sizeof *fill);
    for (uint32_t e = 0; e < E; ++e) {
        if (t->faces[e] == 0)
            continue; /* only in degenerate triangles (or a self pair): no part of a ring */
        const uint32_t c = crease(t->faces[e]) ? VR_LOOP_RING_CREASE : 0u;
        o->ring[fill[t->lo[e]]++] = t->hi[e] << 1 | c;
        o->ring[fill[t->hi[e]]++] = t->lo[e] << 1 | c;
    }
    o->max_valence = max_n;
    o->beta[0] = 0.0;
    for (uint32_t k = 1; k <= max_n; ++k)
        o->beta[k] = vr_loop_beta(k);
    for (uint32_t v = 0; v < vc; ++v) {
        uint32_t nv = o->ring_start[v + 1] - o->ring_start[v], nc = 0;
        for (uint32_t j = o->ring_start[v]; j < o->ring_start[v + 1]; ++j)
            nc += o->ring[j] & VR_LOOP_RING_CREASE;
        if (nv == 0 || nc >= 3)
            st->corner_vertices += nv != 0;
        else if (nc == 2)
            ++st->crease_vertices;
    }
    for (uint32_t e = 0; e < E; ++e) {
        st->boundary_edges += t->faces[e] == 1;
        st->nonmanifold_edges += t->faces[e] >= 3;
    }
    for (uint32_t i = 0; i < n; i += 3)
        st->degenerate_triangles += degenerate(m->indices + i);
    st->edges = E;
    free(fill);
    return VR_OK;
}

vr_status vr_loop_topology_build(vr_loop_topology *out, const vr_mesh *in, vr_loop_stats *stats)
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
    const uint64_t total = (uint64_t)in->vertex_count + t.count;
    if (total > UINT32_MAX) {
        edge_table_free(&t);
        return VR_ERROR(VR_ERR_OVERFLOW,
                        "loop subdivision: %u vertices + %u edges = %llu, over the 2^32-1 limit",
                        in->vertex_count, t.count, (unsigned long long)total);
    }
    s = topology_from_table(out, &t, in, &st);
    edge_table_free(&t);
    if (s) {
        vr_loop_topology_free(out);
        return s;
    }
    if (stats)
        *stats = st;
    return VR_OK;
}

vr_status vr_loop_output_alloc(vr_mesh *out, const vr_loop_topology *t)
{
    memset(out, 0, sizeof *out);
    const uint64_t total = (uint64_t)t->vertex_count + t->edge_count;
    out->vertex_count = (uint32_t)total;
    out->index_count = t->index_count * 4;
    out->positions = malloc(3 * (size_t)(total ? total : 1) * sizeof(float));
    out->normals = malloc(3 * (size_t)(total ? total : 1) * sizeof(float));
    out->indices = malloc((size_t)(out->index_count ? out->index_count : 1) * sizeof(uint32_t));
    if (!out->positions || !out->normals || !out->indices) {
        vr_mesh_free(out);
        return VR_ERROR(VR_ERR_OOM, "loop subdivision: cannot allocate %llu vertices",
                        (unsigned long long)total);
    }
    return VR_OK;
}

void vr_loop_output_prefill(vr_mesh *out, const vr_mesh *in)
{
    memset(out->positions, 0xff, 3 * (size_t)out->vertex_count * sizeof(float));
    memset(out->indices, 0xff, (size_t)out->index_count * sizeof(uint32_t));
    uint8_t *used = calloc((size_t)in->vertex_count + 1, 1);
    if (used)
        for (uint32_t i = 0; i < in->index_count; ++i)
            used[in->indices[i]] = 1;
    for (uint32_t v = 0; v < in->vertex_count; ++v)
        if (!used || !used[v])
            memcpy(out->positions + 3 * (size_t)v, in->positions + 3 * (size_t)v,
                   3 * sizeof(float));
    free(used);
}

vr_status vr_loop_subdivide(vr_mesh *out, const vr_mesh *in, vr_loop_stats *stats)
{
    assert(out && in);
    memset(out, 0, sizeof *out);
    vr_loop_topology t;
    vr_status s = vr_loop_topology_build(&t, in, stats);
    if (s)
        return s;
    if ((s = vr_loop_output_alloc(out, &t))) {
        vr_loop_topology_free(&t);
        return s;
    }
    const uint32_t vc = in->vertex_count;
    const float *p = in->positions;
    for (uint32_t v = 0; v < vc; ++v)
        vr_loop_vertex_rule(out->positions + 3 * (size_t)v, p, v, t.ring_start, t.ring, t.beta);
    for (uint32_t e = 0; e < t.edge_count; ++e) {
        const uint32_t *ends = t.edge_ends + 2 * (size_t)e, *opp = t.edge_opp + 2 * (size_t)e;
        const int two = t.edge_faces[e] == 2;
        vr_loop_edge_rule(out->positions + 3 * ((size_t)vc + e), p + 3 * (size_t)ends[0],
                          p + 3 * (size_t)ends[1], t.edge_faces[e], two ? p + 3 * (size_t)opp[0] : p,
                          two ? p + 3 * (size_t)opp[1] : p);
    }
    for (uint32_t i = 0; i < in->index_count; i += 3)
        vr_loop_children(out->indices + 4 * (size_t)i, in->indices + i, t.edge_of_half, i / 3, vc);
    vr_loop_topology_free(&t);
    vr_compute_normals(out->normals, out);
    return VR_OK;
}
