/* generate.c - procedural scenes, so the program needs no files: a lat/long sphere (the
 * embedded default, 82k triangles like the paper's "sphere", ideal reuse ~.833), a terrain
 * heightfield (row-major cells), foliage (disconnected quads, ideal reuse 1/3 like the paper's
 * "tree") and 1-to-4 midpoint subdivision for scenes of millions of triangles.
 * Try: `vreuse info sphere foliage:240k terrain:1M ../shared/scenes/stanford-bunny.obj@7M`.
 */
#include "scenes/scene_internal.h"
#include "pipeline/vr_mem.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const float g_pi = 3.14159265358979f;

/* Allocates the arrays of a mesh; leaves it zeroed on failure. */
static vr_status mesh_alloc(vr_mesh *m, uint64_t vertices, uint64_t triangles, int texcoords,
                            const char *what)
{
    memset(m, 0, sizeof *m);
    if (vertices > UINT32_MAX || triangles > VR_MAX_TRIANGLES)
        return VR_ERROR(VR_ERR_ARG, "%s: %llu vertices / %llu triangles exceed the 32-bit index limit",
                        what, (unsigned long long)vertices, (unsigned long long)triangles);
    m->vertex_count = (uint32_t)vertices;
    m->index_count = (uint32_t)(triangles * 3);
    m->positions = vr_alloc_huge(vertices * 3 * sizeof(float), 0);
    m->normals = vr_alloc_huge(vertices * 3 * sizeof(float), 0);
    m->texcoords = texcoords ? vr_alloc_huge(vertices * 2 * sizeof(float), 0) : NULL;
    m->indices = vr_alloc_huge(triangles * 3 * sizeof(uint32_t), 0);
    if (!m->positions || !m->normals || !m->indices || (texcoords && !m->texcoords)) {
        vr_mesh_free(m);
        return VR_ERROR(VR_ERR_OOM, "%s: cannot allocate %llu vertices and %llu triangles", what,
                        (unsigned long long)vertices, (unsigned long long)triangles);
    }
    return VR_OK;
}

/* ---- sphere ------------------------------------------------------------------------------ */

/* A geodesic sphere: each face of an icosahedron split into n^2 triangles (frequency n), the
 * points pushed onto the unit sphere. 20 n^2 triangles, 10 n^2 + 2 vertices, valence 5 or 6
 * everywhere; n = 64 gives the paper's `sphere` (81,920 triangles, 40,962 vertices). A
 * lat/long sphere is not used: its pole fans of valence 2n mislead vertex-cache optimizers.
 * Vertex ids: 12 corners, then 30 edges x (n-1) points counted from the lower corner id, then
 * 20 faces x (n-1)(n-2)/2 interior points; triangles are emitted face by face, row by row. */
static const float g_ico_corner[12][3] = {
    {-1, 1.6180340f, 0}, {1, 1.6180340f, 0}, {-1, -1.6180340f, 0}, {1, -1.6180340f, 0},
    {0, -1, 1.6180340f}, {0, 1, 1.6180340f}, {0, -1, -1.6180340f}, {0, 1, -1.6180340f},
    {1.6180340f, 0, -1}, {1.6180340f, 0, 1}, {-1.6180340f, 0, -1}, {-1.6180340f, 0, 1}};
static const uint8_t g_ico_face[20][3] = {
    {0, 11, 5}, {0, 5, 1}, {0, 1, 7}, {0, 7, 10}, {0, 10, 11}, {1, 5, 9}, {5, 11, 4},
    {11, 10, 2}, {10, 7, 6}, {7, 1, 8}, {3, 9, 4}, {3, 4, 2}, {3, 2, 6}, {3, 6, 8},
    {3, 8, 9}, {4, 9, 5}, {2, 4, 11}, {6, 2, 10}, {8, 6, 7}, {9, 8, 1}};

typedef struct ico {
    uint32_t n;
    int edge_of[12][12]; /* edge index of corner pair, -1 when not adjacent */
    uint64_t edge_base, face_base;
} ico;

/* Id of the point with barycentric weights (n - i - j, i, j) on face f. */
static uint32_t ico_vertex(const ico *g, int f, uint32_t i, uint32_t j)
{
    const uint8_t *c = g_ico_face[f];
    uint32_t n = g->n, w[3] = {n - i - j, i, j};
    for (int k = 0; k < 3; ++k)
        if (w[k] == n)
            return c[k];
    for (int k = 0; k < 3; ++k)
        if (w[k] == 0) { /* on the edge opposite corner k */
            int u = c[(k + 1) % 3], v = c[(k + 2) % 3];
            uint32_t steps_from_u = w[(k + 2) % 3];
            if (u > v)
                steps_from_u = n - steps_from_u;
            int e = g->edge_of[u][v];
            return (uint32_t)(g->edge_base + (uint64_t)e * (n - 1) + (steps_from_u - 1));
        }
    /* interior: row i has points j = 1 .. n-1-i, rows i = 1 .. n-2 */
    uint64_t before = (uint64_t)(i - 1) * (n - 2) - (uint64_t)(i - 1) * (i - 2) / 2;
    return (uint32_t)(g->face_base + (uint64_t)f * (n - 1) * (n - 2) / 2 + before + (j - 1));
}

static void ico_point(float *dst, const float *a, const float *b, const float *c, float wa, float wb,
                      float wc)
{
    float p[3], len = 0;
    for (int k = 0; k < 3; ++k)
        p[k] = a[k] * wa + b[k] * wb + c[k] * wc, len += p[k] * p[k];
    len = sqrtf(len);
    for (int k = 0; k < 3; ++k)
        dst[k] = p[k] / len;
}

vr_status vr_generate_sphere(vr_mesh *out, uint32_t triangles)
{
    assert(out);
    ico g;
    g.n = (uint32_t)ceil(sqrt(triangles / 20.0));
    if (g.n < 1)
        g.n = 1;
    uint64_t n = g.n, tri_count = 20 * n * n, vert_count = 10 * n * n + 2;
    vr_status s = mesh_alloc(out, vert_count, tri_count, 0, "sphere");
    if (s)
        return s;
    memset(g.edge_of, -1, sizeof g.edge_of);
    int edges = 0;
    for (int f = 0; f < 20; ++f)
        for (int k = 0; k < 3; ++k) {
            int u = g_ico_face[f][k], v = g_ico_face[f][(k + 1) % 3];
            if (g.edge_of[u][v] < 0)
                g.edge_of[u][v] = g.edge_of[v][u] = edges++;
        }
    assert(edges == 30);
    g.edge_base = 12;
    g.face_base = 12 + 30 * (n - 1);

    float *p = out->positions;
    for (int c = 0; c < 12; ++c)
        ico_point(p + 3 * c, g_ico_corner[c], g_ico_corner[c], g_ico_corner[c], 1, 0, 0);
    for (int u = 0; u < 12; ++u)
        for (int v = u + 1; v < 12; ++v)
            if (g.edge_of[u][v] >= 0)
                for (uint64_t t = 1; t < n; ++t)
                    ico_point(p + 3 * (g.edge_base + (uint64_t)g.edge_of[u][v] * (n - 1) + t - 1),
                              g_ico_corner[u], g_ico_corner[v], g_ico_corner[v],
                              (float)(n - t) / (float)n, (float)t / (float)n, 0);
    uint32_t *ix = out->indices;
    for (int f = 0; f < 20; ++f) {
        vr_progress("generating sphere", (uint64_t)f, 20); /* 1B triangles: 20-60 s */
        const float *a = g_ico_corner[g_ico_face[f][0]], *b = g_ico_corner[g_ico_face[f][1]],
                    *c = g_ico_corner[g_ico_face[f][2]];
        for (uint32_t i = 1; i + 1 < g.n; ++i)
            for (uint32_t j = 1; i + j < g.n; ++j)
                ico_point(p + 3 * (uint64_t)ico_vertex(&g, f, i, j), a, b, c,
                          (float)(g.n - i - j) / (float)n, (float)i / (float)n, (float)j / (float)n);
        for (uint32_t i = 0; i < g.n; ++i)
            for (uint32_t j = 0; i + j < g.n; ++j) {
                *ix++ = ico_vertex(&g, f, i, j), *ix++ = ico_vertex(&g, f, i + 1, j),
                *ix++ = ico_vertex(&g, f, i, j + 1);
                if (i + j + 1 < g.n)
                    *ix++ = ico_vertex(&g, f, i + 1, j), *ix++ = ico_vertex(&g, f, i + 1, j + 1),
                    *ix++ = ico_vertex(&g, f, i, j + 1);
            }
    }
    assert(ix == out->indices + out->index_count);
    memcpy(out->normals, out->positions, vert_count * 3 * sizeof(float));
    vr_progress("generating sphere", 20, 20);
    return VR_OK;
}

/* ---- terrain ----------------------------------------------------------------------------- */

/* Value noise from an integer hash: deterministic, no tables. */
static float lattice(int64_t x, int64_t z)
{
    uint64_t st = (uint64_t)x * 0x9E3779B97F4A7C15ull ^ (uint64_t)z * 0xC2B2AE3D27D4EB4Full;
    return vr_rand_float(&st) * 2 - 1;
}

static float value_noise(float x, float z)
{
    float fx = floorf(x), fz = floorf(z);
    float tx = x - fx, tz = z - fz;
    tx = tx * tx * (3 - 2 * tx), tz = tz * tz * (3 - 2 * tz);
    int64_t ix = (int64_t)fx, iz = (int64_t)fz;
    float a = lattice(ix, iz), b = lattice(ix + 1, iz), c = lattice(ix, iz + 1), d = lattice(ix + 1, iz + 1);
    return (a + (b - a) * tx) + ((c + (d - c) * tx) - (a + (b - a) * tx)) * tz;
}

/* w x h cells over [-1,1] x [-1,1] (xz), height from 5 octaves of value noise; cells emitted
 * row by row, two triangles each, facing +y. */
vr_status vr_generate_terrain(vr_mesh *out, uint32_t triangles)
{
    assert(out);
    if (triangles < 2)
        triangles = 2;
    uint64_t w = (uint64_t)ceil(sqrt(triangles / 2.0));
    uint64_t h = ((uint64_t)triangles + 2 * w - 1) / (2 * w);
    vr_status s = mesh_alloc(out, (w + 1) * (h + 1), 2 * w * h, 1, "terrain");
    if (s)
        return s;
    float extent = 2.0f, cell = extent / (float)(w > h ? w : h);
    /* progress: the vertex rows (5 octaves of noise each) are most of the time */
    for (uint64_t j = 0; j <= h; ++j) {
        if ((j & 255) == 0)
            vr_progress("generating terrain", j, h + 2);
        for (uint64_t i = 0; i <= w; ++i) {
            uint64_t v = j * (w + 1) + i;
            float x = -1 + cell * (float)i, z = -1 + cell * (float)j, y = 0, amp = 0.25f, freq = 2;
            for (int o = 0; o < 5; ++o, amp *= 0.5f, freq *= 2)
                y += amp * value_noise(x * freq + 17.0f * (float)o, z * freq);
            out->positions[3 * v] = x, out->positions[3 * v + 1] = y, out->positions[3 * v + 2] = z;
            out->texcoords[2 * v] = (float)i / (float)w, out->texcoords[2 * v + 1] = (float)j / (float)h;
        }
    }
    uint32_t *ix = out->indices;
    for (uint64_t j = 0; j < h; ++j)
        for (uint64_t i = 0; i < w; ++i) {
            uint32_t v00 = (uint32_t)(j * (w + 1) + i), v10 = v00 + 1;
            uint32_t v01 = (uint32_t)(v00 + w + 1), v11 = v01 + 1;
            *ix++ = v00, *ix++ = v01, *ix++ = v10;
            *ix++ = v10, *ix++ = v01, *ix++ = v11;
        }
    vr_progress("generating terrain", h + 1, h + 2);
    vr_compute_normals(out->normals, out);
    vr_progress("generating terrain", h + 2, h + 2);
    return VR_OK;
}

/* ---- foliage ----------------------------------------------------------------------------- */

/* Disconnected quads (4 own vertices, 2 triangles) scattered in a unit-ball crown with random
 * orientation: no vertex is shared between quads, so ideal reuse is exactly 1 - 4/6. */
vr_status vr_generate_foliage(vr_mesh *out, uint32_t triangles, uint64_t seed)
{
    assert(out);
    uint64_t quads = ((uint64_t)triangles + 1) / 2;
    if (quads == 0)
        quads = 1;
    vr_status s = mesh_alloc(out, quads * 4, quads * 2, 1, "foliage");
    if (s)
        return s;
    uint64_t rng = seed;
    /* leaf half-size: total leaf area ~16 whatever the count, a few layers over the crown */
    float half = 2.0f / sqrtf((float)quads);
    if (half > 0.2f)
        half = 0.2f;
    for (uint64_t q = 0; q < quads; ++q) {
        if ((q & 0xfffff) == 0)
            vr_progress("generating foliage", q, quads);
        float c[3], n[3], len;
        do { /* uniform in the unit ball by rejection */
            for (int k = 0; k < 3; ++k)
                c[k] = vr_rand_float(&rng) * 2 - 1;
        } while (c[0] * c[0] + c[1] * c[1] + c[2] * c[2] > 1);
        do {
            for (int k = 0; k < 3; ++k)
                n[k] = vr_rand_float(&rng) * 2 - 1;
            len = sqrtf(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
        } while (len > 1 || len < 1e-3f);
        n[0] /= len, n[1] /= len, n[2] /= len;
        /* u: any unit vector perpendicular to n, rotated about n by a random angle */
        float a[3] = {fabsf(n[0]) < 0.9f ? 1.0f : 0.0f, fabsf(n[0]) < 0.9f ? 0.0f : 1.0f, 0};
        float t[3] = {a[1] * n[2] - a[2] * n[1], a[2] * n[0] - a[0] * n[2], a[0] * n[1] - a[1] * n[0]};
        len = sqrtf(t[0] * t[0] + t[1] * t[1] + t[2] * t[2]);
        t[0] /= len, t[1] /= len, t[2] /= len;
        float b[3] = {n[1] * t[2] - n[2] * t[1], n[2] * t[0] - n[0] * t[2], n[0] * t[1] - n[1] * t[0]};
        float ang = vr_rand_float(&rng) * 2 * g_pi, ca = cosf(ang) * half, sa = sinf(ang) * half;
        float u[3], v[3];
        for (int k = 0; k < 3; ++k)
            u[k] = ca * t[k] + sa * b[k], v[k] = -sa * t[k] + ca * b[k];
        /* corners (-u-v, +u-v, +u+v, -u+v): u x v is along n, so (0,1,2),(0,2,3) face n */
        static const float su[4] = {-1, 1, 1, -1}, sv[4] = {-1, -1, 1, 1};
        for (int k = 0; k < 4; ++k) {
            size_t vi = 4 * q + (size_t)k;
            for (int d = 0; d < 3; ++d) {
                out->positions[3 * vi + d] = c[d] + su[k] * u[d] + sv[k] * v[d];
                out->normals[3 * vi + d] = n[d];
            }
            out->texcoords[2 * vi] = su[k] * 0.5f + 0.5f, out->texcoords[2 * vi + 1] = sv[k] * 0.5f + 0.5f;
        }
        uint32_t v0 = (uint32_t)(4 * q), *ix = out->indices + 6 * q;
        ix[0] = v0, ix[1] = v0 + 1, ix[2] = v0 + 2;
        ix[3] = v0, ix[4] = v0 + 2, ix[5] = v0 + 3;
    }
    vr_progress("generating foliage", quads, quads);
    return VR_OK;
}

/* ---- subdivision ------------------------------------------------------------------------- */

/* One 1-to-4 level. Edge midpoints are found in a CSR table keyed by the lower vertex id
 * (each vertex's row holds its higher neighbours, ~3 entries), which keeps the lookups local
 * in a coherent mesh and needs no hashing: bunny@7M (17.8M triangles) takes about a second.
 * Children of a triangle (a, b, c) with midpoints ab, bc, ca: (a, ab, ca), (ab, b, bc),
 * (ca, bc, c), (ab, bc, ca) - same winding as the parent, emitted in the parent's order. */
static vr_status subdivide_once(vr_mesh *out, const vr_mesh *in, uint64_t done, uint64_t total)
{
    memset(out, 0, sizeof *out);
    uint32_t vc = in->vertex_count, tc = in->index_count / 3;
    uint32_t *row = calloc((size_t)vc + 1, sizeof *row);   /* row start per lower vertex */
    uint32_t *fill = malloc(((size_t)vc + 1) * sizeof *fill); /* row fill per lower vertex */
    uint32_t *nb = malloc(((size_t)in->index_count + 1) * sizeof *nb);  /* higher neighbour */
    uint32_t *mid = malloc(((size_t)in->index_count + 1) * sizeof *mid); /* midpoint vertex id */
    uint32_t *ix = malloc((size_t)in->index_count * 4 * sizeof *ix);
    vr_status s = VR_OK;
    if (!row || !fill || !nb || !mid || !ix) {
        s = VR_ERROR(VR_ERR_OOM, "subdivide: cannot allocate tables for %u triangles", tc);
        goto done;
    }
    for (uint32_t i = 0; i < in->index_count; i += 3)
        for (int e = 0; e < 3; ++e) {
            uint32_t a = in->indices[i + e], b = in->indices[i + (e + 1) % 3];
            row[(a < b ? a : b) + 1]++;
        }
    for (uint32_t v = 0; v < vc; ++v)
        row[v + 1] += row[v];
    memcpy(fill, row, (size_t)vc * sizeof *fill);
    uint64_t next = vc;
    for (uint32_t t = 0; t < tc; ++t) {
        const uint32_t *tri = in->indices + 3 * (size_t)t;
        uint32_t m[3];
        for (int e = 0; e < 3; ++e) {
            uint32_t a = tri[e], b = tri[(e + 1) % 3];
            uint32_t lo = a < b ? a : b, hi = a < b ? b : a, j = row[lo];
            while (j < fill[lo] && nb[j] != hi)
                ++j;
            if (j == fill[lo]) {
                if (next > UINT32_MAX - 1u) {
                    s = VR_ERROR(VR_ERR_OVERFLOW, "subdivide: more than 2^32-1 vertices");
                    goto done;
                }
                nb[j] = hi, mid[j] = (uint32_t)next++, ++fill[lo];
            }
            m[e] = mid[j];
        }
        uint32_t *o = ix + 12 * (size_t)t;
        o[0] = tri[0], o[1] = m[0], o[2] = m[2];
        o[3] = m[0], o[4] = tri[1], o[5] = m[1];
        o[6] = m[2], o[7] = m[1], o[8] = tri[2];
        o[9] = m[0], o[10] = m[1], o[11] = m[2];
        if ((t & 0xfffff) == 0)
            vr_progress("subdivide", done + 4 * (uint64_t)t, total);
    }
    size_t nv = (size_t)next;
    out->vertex_count = (uint32_t)nv;
    out->index_count = in->index_count * 4;
    out->indices = ix;
    ix = NULL;
    out->positions = malloc(nv * 3 * sizeof(float));
    out->normals = in->normals ? malloc(nv * 3 * sizeof(float)) : NULL;
    out->texcoords = in->texcoords ? malloc(nv * 2 * sizeof(float)) : NULL;
    if (!out->positions || (in->normals && !out->normals) || (in->texcoords && !out->texcoords)) {
        vr_mesh_free(out);
        s = VR_ERROR(VR_ERR_OOM, "subdivide: cannot allocate %zu vertices", nv);
        goto done;
    }
    memcpy(out->positions, in->positions, (size_t)vc * 3 * sizeof(float));
    if (in->normals)
        memcpy(out->normals, in->normals, (size_t)vc * 3 * sizeof(float));
    if (in->texcoords)
        memcpy(out->texcoords, in->texcoords, (size_t)vc * 2 * sizeof(float));
    /* midpoints: flat (positions stay on the input surface), normals interpolated */
    for (uint32_t lo = 0; lo < vc; ++lo)
        for (uint32_t j = row[lo]; j < fill[lo]; ++j) {
            size_t m = mid[j], hi = nb[j];
            const float *pa = in->positions + 3 * (size_t)lo, *pb = in->positions + 3 * hi;
            for (int k = 0; k < 3; ++k)
                out->positions[3 * m + k] = 0.5f * (pa[k] + pb[k]);
            if (in->normals) {
                const float *na = in->normals + 3 * (size_t)lo, *nbv = in->normals + 3 * hi;
                float n[3] = {na[0] + nbv[0], na[1] + nbv[1], na[2] + nbv[2]};
                float len = sqrtf(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
                for (int k = 0; k < 3; ++k)
                    out->normals[3 * m + k] = len > 1e-6f ? n[k] / len : na[k];
            }
            if (in->texcoords)
                for (int k = 0; k < 2; ++k)
                    out->texcoords[2 * m + k] =
                        0.5f * (in->texcoords[2 * (size_t)lo + k] + in->texcoords[2 * hi + k]);
        }
done:
    free(row);
    free(fill);
    free(nb);
    free(mid);
    free(ix);
    return s;
}

vr_status vr_subdivision_levels(int *levels, uint64_t triangles, uint64_t min_triangles,
                                const char *spec, size_t len)
{
    uint64_t result = triangles;
    *levels = 0;
    while (result < min_triangles && result <= VR_MAX_TRIANGLES)
        result *= 4, ++*levels;
    if (result > VR_MAX_TRIANGLES)
        return VR_ERROR(VR_ERR_ARG,
                        "%.*s: %d subdivision levels on the way to %llu triangles turn %llu into "
                        "%llu, over the 2^32-1 index limit (max %u triangles)",
                        (int)len, spec, *levels, (unsigned long long)min_triangles,
                        (unsigned long long)triangles, (unsigned long long)result,
                        VR_MAX_TRIANGLES);
    return VR_OK;
}

vr_status vr_mesh_subdivide(vr_mesh *out, const vr_mesh *in, uint64_t min_triangles)
{
    assert(out && in);
    memset(out, 0, sizeof *out);
    vr_status s = vr_mesh_validate(in, "subdivide input");
    if (s)
        return s;
    const uint64_t tris = in->index_count / 3;
    const char *what = "subdivide";
    int levels;
    if ((s = vr_subdivision_levels(&levels, tris, min_triangles, what, strlen(what))))
        return s;
    const uint64_t total = tris << (2 * levels);
    if (levels == 0)
        return vr_mesh_copy(out, in);
    /* progress counts output triangles over all levels: 4T + 16T + ... */
    uint64_t work = 0, done = 0;
    for (uint64_t t = tris * 4; t <= total; t *= 4)
        work += t;
    vr_mesh cur = *in;
    for (int l = 0; l < levels; ++l) {
        vr_mesh next;
        s = subdivide_once(&next, &cur, done, work);
        done += (uint64_t)cur.index_count / 3 * 4;
        if (l > 0)
            vr_mesh_free(&cur);
        if (s)
            return s;
        cur = next;
    }
    vr_progress("subdivide", work, work);
    if (!cur.normals) { /* an input without normals gets computed ones, as loaded meshes do */
        cur.normals = malloc((size_t)cur.vertex_count * 3 * sizeof(float));
        if (!cur.normals) {
            vr_mesh_free(&cur);
            return VR_ERROR(VR_ERR_OOM, "subdivide: cannot allocate normals for %u vertices",
                            cur.vertex_count);
        }
        vr_compute_normals(cur.normals, &cur);
    }
    *out = cur;
    return VR_OK;
}
