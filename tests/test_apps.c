/* test_apps.c - the CPU references of the paper's Section 5 applications (pipeline/apps/):
 * Loop subdivision (counts on the shared scenes and generators, closed meshes stay closed and
 * consistently oriented, a flat grid's boundary and a regular vertex against hand-computed values,
 * planes stay planes, creases at non-manifold edges, clear errors) and the random walk (Philox
 * known answers, the 8 best moves against brute force, a chi-square of one cell's draws,
 * determinism, drift, the paper's run with its distinct cells per step; the density PNG is left
 * for the `vreuse apply walk` command). "apps-time/" (not run by ctest) prints the run times of
 * bench/results/apps-cpu.md. Try: `vreuse_tests apps/`, `vreuse_tests apps-time/`.
 */
#include "tests/test.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/apps/apps.h"
#include "pipeline/apps/loop.h"
#include "pipeline/apps/walk.h"
#include "scenes/scene.h"
#include "tests/test_helpers.h"

/* ---- Loop subdivision ----------------------------------------------------------------------- */

/* A mesh from literal arrays (malloc'd copies, normals +z; free with vr_mesh_free). */
static int loop_mesh(vr_mesh *m, const float *pos, uint32_t vertex_count, const uint32_t *idx,
                     uint32_t index_count)
{
    memset(m, 0, sizeof *m);
    m->vertex_count = vertex_count;
    m->index_count = index_count;
    m->positions = malloc(3 * (size_t)vertex_count * sizeof(float) + 1);
    m->normals = malloc(3 * (size_t)vertex_count * sizeof(float) + 1);
    m->indices = malloc((size_t)index_count * sizeof(uint32_t) + 1);
    if (!m->positions || !m->normals || !m->indices) {
        vr_mesh_free(m);
        return 0;
    }
    memcpy(m->positions, pos, 3 * (size_t)vertex_count * sizeof(float));
    memcpy(m->indices, idx, (size_t)index_count * sizeof(uint32_t));
    for (uint32_t v = 0; v < vertex_count; ++v)
        m->normals[3 * v] = m->normals[3 * v + 1] = 0, m->normals[3 * v + 2] = 1;
    return 1;
}

/* An n x n grid of unit quads at z = 0, vertex (i, j) = j * (n + 1) + i, each quad split along
 * the same diagonal (interior vertices have valence 6). */
static int flat_grid(vr_mesh *m, uint32_t n)
{
    const uint32_t vc = (n + 1) * (n + 1);
    float *pos = malloc(3 * (size_t)vc * sizeof *pos);
    uint32_t *idx = malloc(6 * (size_t)n * n * sizeof *idx);
    int ok = pos && idx;
    for (uint32_t v = 0; ok && v < vc; ++v)
        pos[3 * v] = (float)(v % (n + 1)), pos[3 * v + 1] = (float)(v / (n + 1)), pos[3 * v + 2] = 0;
    for (uint32_t j = 0, t = 0; ok && j < n; ++j)
        for (uint32_t i = 0; i < n; ++i, t += 6) {
            const uint32_t a = j * (n + 1) + i, b = a + 1, c = a + n + 1, d = c + 1;
            const uint32_t q[6] = {a, b, d, a, d, c};
            memcpy(idx + t, q, sizeof q);
        }
    ok = ok && loop_mesh(m, pos, vc, idx, 6 * n * n);
    free(pos), free(idx);
    return ok;
}

/* Undirected edges as sorted (lo, hi) pairs of 64 bits, with their multiplicity. */
/* Distinct undirected edges by sorting (independent of loop.c's counting sort); with `closed`
 * also checks every edge is used by exactly 2 triangles in opposite directions. */
static uint64_t count_edges(const vr_mesh *m, int closed, const char *what)
{
    uint64_t *und = malloc((size_t)m->index_count * sizeof *und);
    uint64_t *dir = malloc((size_t)m->index_count * sizeof *dir);
    if (!und || !dir) {
        free(und), free(dir);
        VR_EXPECT(0, "%s: out of memory", what);
        return 0;
    }
    for (uint32_t h = 0; h < m->index_count; ++h) {
        uint64_t a = m->indices[h], b = m->indices[h - h % 3 + (h % 3 + 1) % 3];
        und[h] = a < b ? a << 32 | b : b << 32 | a;
        dir[h] = a << 32 | b;
    }
    qsort(und, m->index_count, sizeof *und, vr_test_cmp_u64);
    qsort(dir, m->index_count, sizeof *dir, vr_test_cmp_u64);
    uint64_t edges = 0, bad = 0;
    for (uint32_t i = 0, j; i < m->index_count; i = j) {
        for (j = i; j < m->index_count && und[j] == und[i]; ++j)
            ;
        ++edges;
        bad += closed && j - i != 2;
    }
    for (uint32_t i = 0; closed && i + 1 < m->index_count; ++i)
        bad += dir[i] == dir[i + 1]; /* the same directed edge twice: orientation flipped */
    VR_EXPECT(bad == 0, "%s: %llu edges not in exactly 2 oppositely oriented triangles", what,
              (unsigned long long)bad);
    free(und), free(dir);
    return edges;
}

/* A regular octahedron (closed, 8 faces, outward winding). */
static int octahedron(vr_mesh *m)
{
    static const float pos[18] = {1, 0, 0, -1, 0, 0, 0, 1, 0, 0, -1, 0, 0, 0, 1, 0, 0, -1};
    static const uint32_t idx[24] = {0, 2, 4, 2, 1, 4, 1, 3, 4, 3, 0, 4,
                                     2, 0, 5, 1, 2, 5, 3, 1, 5, 0, 3, 5};
    return loop_mesh(m, pos, 6, idx, 24);
}

VR_TEST(test_loop_counts, "apps/loop-counts")
{
    static const char *const specs[] = {"stanford-bunny.obj", "horse.ply", "igea.ply",
                                        "fandisk.obj", "rocker-arm.obj", "spot.obj", "cow.obj",
                                        "teapot.obj", "sphere", "terrain:20k", "foliage:5k"};
    for (size_t i = 0; i < sizeof specs / sizeof *specs; ++i) {
        char path[4096];
        const char *spec = specs[i];
        if (strchr(spec, '.')) {
            if (!vr_test_scene_path(path, sizeof path, spec)) {
                printf("  %s: no shared scenes folder, skipped\n", spec);
                continue;
            }
            spec = path;
        }
        vr_mesh in, out;
        if (!vr_test_load(&in, spec))
            continue;
        vr_loop_stats st;
        vr_status s = vr_loop_subdivide(&out, &in, &st);
        VR_EXPECT(s == VR_OK, "%s: %s", specs[i], vr_last_error());
        if (s == VR_OK) {
            const uint64_t edges = count_edges(&in, 0, specs[i]);
            VR_EXPECT_EQ(st.edges, edges);
            VR_EXPECT_EQ(out.vertex_count, (uint64_t)in.vertex_count + edges);
            VR_EXPECT_EQ(out.index_count, 4 * (uint64_t)in.index_count);
            VR_EXPECT(vr_mesh_validate(&out, specs[i]) == VR_OK, "%s", vr_last_error());
            printf("  %-18s V %8u + E %8u = %8u vertices, %9u triangles (boundary %u, "
                   "non-manifold %u, degenerate %u)\n",
                   specs[i], in.vertex_count, st.edges, out.vertex_count, out.index_count / 3,
                   st.boundary_edges, st.nonmanifold_edges, st.degenerate_triangles);
            vr_mesh_free(&out);
        }
        vr_mesh_free(&in);
    }
    return VR_TEST_RESULT();
}

VR_TEST(test_loop_closed, "apps/loop-closed")
{
    vr_mesh in, out, out2;
    VR_EXPECT(octahedron(&in), "octahedron");
    for (int round = 0; round < 2; ++round) { /* the octahedron, then the default sphere */
        VR_EXPECT(count_edges(&in, 1, "input") * 2 == in.index_count, "input is not closed");
        vr_loop_stats st;
        VR_EXPECT(vr_loop_subdivide(&out, &in, &st) == VR_OK, "%s", vr_last_error());
        VR_EXPECT_EQ(st.boundary_edges, 0);
        uint64_t e = count_edges(&out, 1, round ? "sphere once" : "octahedron once");
        VR_EXPECT_EQ(e * 2, out.index_count); /* closed: 3F = 2E */
        VR_EXPECT(vr_loop_subdivide(&out2, &out, NULL) == VR_OK, "%s", vr_last_error());
        e = count_edges(&out2, 1, round ? "sphere twice" : "octahedron twice");
        /* Euler characteristic of a sphere: V - E + F = 2 */
        VR_EXPECT_EQ((int64_t)out2.vertex_count - (int64_t)e + out2.index_count / 3, 2);
        if (round == 0) {
            /* octahedron vertices: valence 4, beta = (5/8 - (3/8)^2) / 4 = 31/256; the ring's
             * sum is 0, so a vertex moves to (1 - 4 beta) v = 33/64 v */
            VR_EXPECT(fabsf(out.positions[0] - 33.0f / 64.0f) < 1e-7f, "x = %.9g",
                      out.positions[0]);
            /* edge (0, 2): 3/8 (v0 + v2) + 1/8 (v4 + v5) = (3/8, 3/8, 0) */
            const float *m = out.positions + 3 * 6;
            VR_EXPECT(m[0] == 0.375f && m[1] == 0.375f && m[2] == 0.0f, "edge point (%g %g %g)",
                      m[0], m[1], m[2]);
        }
        vr_mesh_free(&out), vr_mesh_free(&out2), vr_mesh_free(&in);
        if (round == 0 && !vr_test_load(&in, "sphere"))
            break;
    }
    return VR_TEST_RESULT();
}

static int near3(const float *p, float x, float y, float z)
{
    return fabsf(p[0] - x) < 1e-6f && fabsf(p[1] - y) < 1e-6f && fabsf(p[2] - z) < 1e-6f;
}

VR_TEST(test_loop_flat, "apps/loop-flat")
{
    /* a 4 x 4 grid; vertex 2 = (2, 0) pulled out to (2, -0.5) so the boundary is not straight */
    vr_mesh in, out;
    VR_EXPECT(flat_grid(&in, 4), "grid");
    in.positions[3 * 2 + 1] = -0.5f;
    vr_loop_stats st;
    VR_EXPECT(vr_loop_subdivide(&out, &in, &st) == VR_OK, "%s", vr_last_error());
    VR_EXPECT_EQ(st.boundary_edges, 16);
    VR_EXPECT_EQ(st.crease_vertices, 16); /* every boundary vertex, the corners included */
    VR_EXPECT_EQ(st.corner_vertices, 0);
    for (uint32_t v = 0; v < out.vertex_count; ++v)
        VR_EXPECT(out.positions[3 * v + 2] == 0.0f, "vertex %u left the plane: z = %g", v,
                  out.positions[3 * v + 2]);
    /* boundary rule 3/4 v + 1/8 (a + b): the corner (0, 0) with (1, 0) and (0, 1) */
    VR_EXPECT(near3(out.positions, 0.125f, 0.125f, 0), "corner (%g %g)", out.positions[0],
              out.positions[1]);
    /* (1, 0) with (0, 0) and (2, -0.5): (1, -1/16); (2, -0.5) with (1, 0), (3, 0): (2, -3/8) */
    VR_EXPECT(near3(out.positions + 3, 1, -0.0625f, 0), "(1,0) -> (%g %g)", out.positions[3],
              out.positions[4]);
    VR_EXPECT(near3(out.positions + 6, 2, -0.375f, 0), "(2,0) -> (%g %g)", out.positions[6],
              out.positions[7]);
    /* boundary edge (1,0)-(2,-0.5): the midpoint; the first triangle's first edge (0,1) is edge
     * point 0, its second (1,6) edge point 1; edge (1,2) is first met in triangle 2 */
    const uint32_t vc = in.vertex_count;
    VR_EXPECT(near3(out.positions + 3 * vc, 0.5f, 0, 0), "edge (0,1) point");
    VR_EXPECT_EQ(out.indices[1], vc);     /* child 0 = (v0, m01, m20) */
    VR_EXPECT_EQ(out.indices[2], vc + 2); /* m20 of the first triangle: its third edge */
    const uint32_t m12 = out.indices[4 * 6 + 1]; /* triangle 2 = (1, 2, 7): its m01 is edge (1,2) */
    VR_EXPECT(near3(out.positions + 3 * (size_t)m12, 1.5f, -0.25f, 0), "edge (1,2) point");
    vr_mesh_free(&out);

    /* a tilted plane stays that plane: the rules are affine combinations */
    for (uint32_t v = 0; v < in.vertex_count; ++v)
        in.positions[3 * v + 2] = 0.5f * in.positions[3 * v] + 0.25f * in.positions[3 * v + 1];
    VR_EXPECT(vr_loop_subdivide(&out, &in, NULL) == VR_OK, "%s", vr_last_error());
    for (uint32_t v = 0; v < out.vertex_count; ++v) {
        const float *p = out.positions + 3 * v;
        VR_EXPECT(fabsf(p[2] - (0.5f * p[0] + 0.25f * p[1])) < 1e-5f, "vertex %u off the plane",
                  v);
    }
    vr_mesh_free(&out), vr_mesh_free(&in);
    return VR_TEST_RESULT();
}

VR_TEST(test_loop_regular, "apps/loop-regular")
{
    VR_EXPECT(fabs(vr_loop_beta(6) - 1.0 / 16) < 1e-15, "beta(6) = %.17g", vr_loop_beta(6));
    VR_EXPECT(fabs(vr_loop_beta(3) - 3.0 / 16) < 1e-15, "beta(3) = %.17g", vr_loop_beta(3));
    /* the interior vertex (2, 2) (id 12, valence 6) lifted to z = 1: it moves to
     * (1 - 6/16) * 1 = 5/8, its x, y stay (the ring is symmetric); an edge point next to it gets
     * 3/8 of it, one across from it 1/8; a ring vertex 1/16 */
    vr_mesh in, out;
    VR_EXPECT(flat_grid(&in, 4), "grid");
    in.positions[3 * 12 + 2] = 1;
    VR_EXPECT(vr_loop_subdivide(&out, &in, NULL) == VR_OK, "%s", vr_last_error());
    VR_EXPECT(near3(out.positions + 3 * 12, 2, 2, 0.625f), "(2,2,1) -> (%g %g %g)",
              out.positions[36], out.positions[37], out.positions[38]);
    VR_EXPECT(near3(out.positions + 3 * 7, 2, 1, 0.0625f), "ring (2,1) -> z %g",
              out.positions[23]);
    int near = 0, across = 0;
    for (uint32_t v = in.vertex_count; v < out.vertex_count; ++v) {
        const float z = out.positions[3 * v + 2];
        near += z == 0.375f, across += z == 0.125f;
        VR_EXPECT(z == 0 || z == 0.375f || z == 0.125f, "edge point %u: z = %g", v, z);
    }
    VR_EXPECT_EQ(near, 6);   /* its 6 edges */
    VR_EXPECT_EQ(across, 6); /* the 6 ring edges of its 6 triangles */
    vr_mesh_free(&out), vr_mesh_free(&in);
    return VR_TEST_RESULT();
}

VR_TEST(test_loop_nonmanifold, "apps/loop-nonmanifold")
{
    /* a book: 3 pages on the spine s0 (0,0,0) - s1 (1,0,1) - s2 (2,0,0); page k has the outer row
     * q0 q1 q2. The spine edges have 3 faces: creases. s1 has exactly 2 crease edges (the
     * boundary rule: 3/4 s1 + 1/8 (s0 + s2) = (1, 0, 3/4)); s0 and s2 have 4 (corners: kept). */
    float pos[3 * 12];
    uint32_t idx[3 * 4 * 3], *t = idx;
    const float spine[9] = {0, 0, 0, 1, 0, 1, 2, 0, 0};
    memcpy(pos, spine, sizeof spine);
    for (uint32_t k = 0; k < 3; ++k) {
        const uint32_t q = 3 + 3 * k;
        for (uint32_t i = 0; i < 3; ++i) {
            pos[3 * (q + i)] = (float)i;
            pos[3 * (q + i) + 1] = k == 0 ? 1.0f : k == 1 ? -1.0f : 0.0f;
            pos[3 * (q + i) + 2] = k == 2 ? 2.0f : 0.0f;
        }
        const uint32_t tris[12] = {0, 1, q, 1, q + 1, q, 1, 2, q + 1, 2, q + 2, q + 1};
        memcpy(t, tris, sizeof tris);
        t += 12;
    }
    vr_mesh in, out;
    VR_EXPECT(loop_mesh(&in, pos, 12, idx, 36), "book");
    vr_loop_stats st;
    VR_EXPECT(vr_loop_subdivide(&out, &in, &st) == VR_OK, "%s", vr_last_error());
    VR_EXPECT_EQ(st.nonmanifold_edges, 2);
    VR_EXPECT_EQ(st.crease_vertices, 10); /* s1 and every outer vertex */
    VR_EXPECT_EQ(st.corner_vertices, 2);  /* s0, s2 */
    VR_EXPECT(near3(out.positions + 3, 1, 0, 0.75f), "s1 -> (%g %g %g)", out.positions[3],
              out.positions[4], out.positions[5]);
    VR_EXPECT(near3(out.positions, 0, 0, 0) && near3(out.positions + 6, 2, 0, 0), "corners moved");
    VR_EXPECT(near3(out.positions + 3 * 12, 0.5f, 0, 0.5f), "spine edge (s0,s1) point");
    vr_mesh_free(&out), vr_mesh_free(&in);

    /* a bowtie: two triangles sharing only vertex 0 (4 boundary edges there: a corner, kept) and
     * a degenerate triangle (0 0 1), subdivided but no part of the topology */
    static const float bpos[15] = {0, 0, 0, 1, 1, 0, 1, -1, 0, -1, 1, 0, -1, -1, 0};
    static const uint32_t bidx[9] = {0, 2, 1, 0, 3, 4, 0, 0, 1};
    VR_EXPECT(loop_mesh(&in, bpos, 5, bidx, 9), "bowtie");
    VR_EXPECT(vr_loop_subdivide(&out, &in, &st) == VR_OK, "%s", vr_last_error());
    VR_EXPECT_EQ(st.corner_vertices, 1);
    VR_EXPECT_EQ(st.degenerate_triangles, 1);
    VR_EXPECT_EQ(st.edges, 7); /* 6 of the two triangles + the self pair (0, 0) */
    VR_EXPECT_EQ(out.vertex_count, 12);
    VR_EXPECT(near3(out.positions, 0, 0, 0), "bowtie centre moved");
    /* vertex 1 (1,1): boundary rule with 0 and 2: 3/4 (1,1) + 1/8 ((0,0) + (1,-1)) = (7/8, 5/8) */
    VR_EXPECT(near3(out.positions + 3, 0.875f, 0.625f, 0), "(1,1) -> (%g %g)", out.positions[3],
              out.positions[4]);
    vr_mesh_free(&out), vr_mesh_free(&in);
    return VR_TEST_RESULT();
}

VR_TEST(test_loop_errors, "apps/loop-errors")
{
    static const float pos[9] = {0, 0, 0, 1, 0, 0, 0, 1, 0};
    static const uint32_t idx[3] = {0, 1, 2}, bad[3] = {0, 1, 7};
    vr_mesh in, out;
    VR_EXPECT(loop_mesh(&in, pos, 3, idx, 3), "triangle");
    in.index_count = 0;
    VR_EXPECT(vr_loop_subdivide(&out, &in, NULL) == VR_ERR_FORMAT, "empty mesh accepted");
    VR_EXPECT(strstr(vr_last_error(), "no triangles") != NULL, "message: %s", vr_last_error());
    VR_EXPECT(out.vertex_count == 0 && out.positions == NULL, "output not zeroed");
    in.index_count = 2;
    VR_EXPECT(vr_loop_subdivide(&out, &in, NULL) == VR_ERR_FORMAT, "2 indices accepted");
    VR_EXPECT(strstr(vr_last_error(), "multiple of 3") != NULL, "message: %s", vr_last_error());
    in.index_count = 3;
    memcpy(in.indices, bad, sizeof bad);
    VR_EXPECT(vr_loop_subdivide(&out, &in, NULL) == VR_ERR_FORMAT, "index 7 of 3 accepted");
    VR_EXPECT(strstr(vr_last_error(), "index 7 at position 2 is out of range") != NULL,
              "message: %s", vr_last_error());
    memcpy(in.indices, idx, sizeof idx);
    in.positions[4] = NAN;
    VR_EXPECT(vr_loop_subdivide(&out, &in, NULL) == VR_ERR_FORMAT, "NaN position accepted");
    VR_EXPECT(strstr(vr_last_error(), "vertex 1 has a non-finite position") != NULL,
              "message: %s", vr_last_error());
    VR_EXPECT(strstr(vr_last_error(), ".c:") == NULL, "source path in: %s", vr_last_error());
    in.positions[4] = 0;
    VR_EXPECT(vr_loop_subdivide(&out, &in, NULL) == VR_OK, "%s", vr_last_error());
    VR_EXPECT_EQ(out.vertex_count, 6);
    vr_mesh_free(&out), vr_mesh_free(&in);
    return VR_TEST_RESULT();
}

/* ---- random walk ---------------------------------------------------------------------------- */

VR_TEST(test_philox, "apps/philox")
{
    /* Random123's kat_vectors: counter (4 words), key (2 words) -> output */
    static const uint32_t kat[3][10] = {
        {0, 0, 0, 0, 0, 0, 0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8},
        {0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0x408f276d,
         0x41c83b0e, 0xa20bc7c6, 0x6d5451fd},
        {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0xa4093822, 0x299f31d0, 0xd16cfe09,
         0x94fdcceb, 0x5001e420, 0x24126ea1},
    };
    for (int i = 0; i < 3; ++i) {
        uint32_t out[4];
        vr_philox4x32_10(out, kat[i], kat[i] + 4);
        for (int k = 0; k < 4; ++k)
            VR_EXPECT(out[k] == kat[i][6 + k], "vector %d word %d: %08x, expected %08x", i, k,
                      out[k], kat[i][6 + k]);
    }
    return VR_TEST_RESULT();
}

typedef struct walk_candidate {
    float l;
    uint32_t k, cell;
} walk_candidate;

static int cmp_candidate(const void *a, const void *b)
{
    const walk_candidate *x = a, *y = b;
    if (x->l != y->l)
        return x->l > y->l ? -1 : 1;
    return x->k < y->k ? -1 : x->k > y->k;
}

static float *g_activity, g_levy[33 * 33];

static int walk_tables(void)
{
    if (!g_activity && (g_activity = malloc(VR_WALK_GRID * VR_WALK_GRID * sizeof(float))))
        vr_walk_activity_table(g_activity);
    vr_walk_levy_table(g_levy);
    return g_activity != NULL;
}

VR_TEST(test_walk_moves, "apps/walk-moves")
{
    VR_EXPECT(walk_tables(), "out of memory");
    /* every candidate sorted (likelihood down, then enumeration order): the first 8 are the
     * moves; on every third cell in x and y (0 and 255 among them: each distance to the border
     * up to 16 comes up) and the Gaussians' centres */
    static uint32_t xy[86 * 86 + 8][2] = {{128, 128}, {64, 64}, {100, 120}, {48, 208},
                                          {200, 3}, {17, 240}, {192, 80}, {208, 208}};
    size_t cells = 8;
    for (uint32_t y = 0; y < 256; y += 3)
        for (uint32_t x = 0; x < 256; x += 3)
            xy[cells][0] = x, xy[cells][1] = y, ++cells;
    walk_candidate all[33 * 33];
    for (size_t c = 0; c < cells; ++c) {
        const uint32_t cell = vr_walk_pack(xy[c][0], xy[c][1]);
        uint32_t n = 0, k = 0;
        for (int dy = -16; dy <= 16; ++dy)
            for (int dx = -16; dx <= 16; ++dx) {
                const int tx = (int)xy[c][0] + dx, ty = (int)xy[c][1] + dy;
                if (dx * dx + dy * dy == 0 || dx * dx + dy * dy > 256 || tx < 0 || ty < 0 ||
                    tx > 255 || ty > 255)
                    continue;
                all[n].l = g_activity[ty * 256 + tx] * (float)(1.0 / (dx * dx + dy * dy));
                all[n].k = k++, all[n].cell = vr_walk_pack((uint32_t)tx, (uint32_t)ty), ++n;
            }
        qsort(all, n, sizeof *all, cmp_candidate);
        vr_walk_moves m;
        vr_walk_moves_of(&m, g_activity, g_levy, cell);
        float sum = 0;
        for (int i = 0; i < VR_WALK_KEEP; ++i) {
            VR_EXPECT(m.cell[i] == all[i].cell && m.likelihood[i] == all[i].l,
                      "cell (%u,%u) move %d: %08x %g, expected %08x %g", xy[c][0], xy[c][1], i,
                      m.cell[i], m.likelihood[i], all[i].cell, all[i].l);
            sum += m.likelihood[i];
            VR_EXPECT(m.cumulative[i] == sum, "cumulative %d", i);
        }
        VR_EXPECT(n >= 200, "cell (%u,%u): %u candidates", xy[c][0], xy[c][1], n);
    }
    return VR_TEST_RESULT();
}

/* One cell's moves as a group of `lanes` GPU lanes computes them (vr_walk_config.lanes): each
 * lane's rows, then the butterfly of the walk program (apps_gpu.cu: at distance lanes/2, ..., 1,
 * every lane merges its list with its partner's from the level before). Every lane must end
 * with vr_walk_moves_of's list. */
static int walk_lanes_match(const float *activity, uint32_t cell, uint32_t lanes, int *ties)
{
    vr_walk_top t[32], prev[32];
    for (uint32_t j = 0; j < lanes; ++j)
        vr_walk_top_scan(&t[j], activity, g_levy, cell, j, lanes);
    for (uint32_t off = lanes / 2; off > 0; off /= 2) {
        memcpy(prev, t, lanes * sizeof *t);
        for (uint32_t j = 0; j < lanes; ++j)
            vr_walk_top_merge(&t[j], &prev[j ^ off]);
    }
    vr_walk_moves want;
    vr_walk_moves_of(&want, activity, g_levy, cell);
    for (int i = 1; i < VR_WALK_KEEP; ++i)
        *ties += want.likelihood[i] == want.likelihood[i - 1];
    for (uint32_t j = 0; j < lanes; ++j) {
        vr_walk_moves m;
        vr_walk_moves_from_top(&m, &t[j], cell);
        if (memcmp(&m, &want, sizeof m) != 0)
            return 0;
    }
    return 1;
}

VR_TEST(test_walk_lanes, "apps/walk-lanes")
{
    /* every cell with 8 lanes (the walk's choice), every third cell in x and y for the other
     * group sizes; the activity table and a constant one, where equal likelihoods (ties decided
     * by the scan position) are the rule */
    VR_EXPECT(walk_tables(), "out of memory");
    float *flat = malloc(VR_WALK_GRID * VR_WALK_GRID * sizeof(float));
    VR_EXPECT(flat != NULL, "out of memory");
    if (!flat)
        return VR_TEST_RESULT();
    for (uint32_t i = 0; i < VR_WALK_GRID * VR_WALK_GRID; ++i)
        flat[i] = 1.0f;
    const float *tables[2] = {g_activity, flat};
    const char *names[2] = {"activity", "constant"};
    for (int a = 0; a < 2; ++a) {
        int ties = 0, bad = 0;
        uint32_t checked = 0;
        for (uint32_t lanes = 1; lanes <= 32; lanes *= 2) {
            const uint32_t stride = lanes == 8 ? 1 : 3;
            for (uint32_t y = 0; y < VR_WALK_GRID && bad < 5; y += stride)
                for (uint32_t x = 0; x < VR_WALK_GRID && bad < 5; x += stride) {
                    ++checked;
                    if (!walk_lanes_match(tables[a], vr_walk_pack(x, y), lanes, &ties)) {
                        VR_EXPECT(0, "%s table, %u lanes, cell (%u,%u): moves differ from "
                                  "vr_walk_moves_of", names[a], lanes, x, y);
                        ++bad;
                    }
                }
        }
        printf("  %s table: %u cell x group-size cases equal, %d ties among kept moves\n",
               names[a], checked, ties);
        VR_EXPECT(ties > 0 || a == 0, "the constant table gave no ties: the test misses them");
    }
    free(flat);
    return VR_TEST_RESULT();
}

VR_TEST(test_walk_chi2, "apps/walk-chi2")
{
    /* 200,000 agents of one cell draw once: counts against likelihood / total. 7 degrees of
     * freedom; chi-square above 24.32 has probability 0.001 (fixed seed: the value is fixed). */
    VR_EXPECT(walk_tables(), "out of memory");
    vr_walk_moves m;
    vr_walk_moves_of(&m, g_activity, g_levy, vr_walk_pack(100, 120));
    const uint32_t draws = 200000;
    uint32_t count[VR_WALK_KEEP] = {0};
    for (uint32_t a = 0; a < draws; ++a) {
        const uint32_t c = vr_walk_draw(&m, a, 3, 12345);
        int i = 0;
        while (i < VR_WALK_KEEP && m.cell[i] != c)
            ++i;
        VR_EXPECT(i < VR_WALK_KEEP, "agent %u drew %08x, not one of the moves", a, c);
        if (i < VR_WALK_KEEP)
            ++count[i];
    }
    double chi2 = 0, total = m.cumulative[VR_WALK_KEEP - 1];
    for (int i = 0; i < VR_WALK_KEEP; ++i) {
        const double e = draws * m.likelihood[i] / total;
        chi2 += (count[i] - e) * (count[i] - e) / e;
    }
    printf("  cell (100,120): chi-square %.2f over 8 moves (p = 0.001 at 24.32)\n", chi2);
    VR_EXPECT(chi2 < 24.32, "chi-square %.2f", chi2);
    return VR_TEST_RESULT();
}

/* vr_walk_sort_by_cell (the CPU twin's sort for --resort): cells ascending, each cell's agents in
 * their input order (stable), the pairs a permutation of the input; sizes 0, 1 and 50,000 with
 * cells from a small range (many ties) and from the whole grid. */
VR_TEST(test_walk_sort_by_cell, "apps/walk-sort")
{
    const uint32_t grid = VR_WALK_GRID * VR_WALK_GRID, sizes[] = {0, 1, 50000};
    uint32_t *hist = malloc(grid * sizeof *hist);
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; ++k)
        for (uint32_t range = 7; range <= grid; range = range == 7 ? grid : grid + 1) {
            const uint32_t n = sizes[k];
            uint32_t *c = malloc((n + 1) * sizeof *c), *a = malloc((n + 1) * sizeof *a);
            uint32_t *co = malloc((n + 1) * sizeof *co), *ao = malloc((n + 1) * sizeof *ao);
            uint32_t *seen = calloc(n + 1, sizeof *seen);
            VR_EXPECT(hist && c && a && co && ao && seen, "out of memory");
            if (!hist || !c || !a || !co || !ao || !seen) {
                free(c), free(a), free(co), free(ao), free(seen);
                break;
            }
            uint32_t x = 12345;
            for (uint32_t i = 0; i < n; ++i) {
                x = x * 1664525u + 1013904223u;
                c[i] = (x >> 8) % range;
                a[i] = n - 1 - i; /* not the positions: the sort must carry them */
            }
            vr_walk_sort_by_cell(co, ao, c, a, n, hist);
            int ok = 1;
            for (uint32_t i = 0; i < n && ok; ++i) {
                const uint32_t from = n - 1 - ao[i]; /* the input position of this pair */
                ok = ao[i] < n && !seen[ao[i]]++ && co[i] == c[from] &&
                     (i == 0 || co[i - 1] < co[i] || (co[i - 1] == co[i] && ao[i - 1] > ao[i]));
            }
            VR_EXPECT(ok, "%u pairs over %u cells: not a stable sort by cell", n, range);
            free(c), free(a), free(co), free(ao), free(seen);
        }
    free(hist);
    return VR_TEST_RESULT();
}

VR_TEST(test_walk_run, "apps/walk-run")
{
    vr_walk_config cfg = vr_walk_config_default();
    VR_EXPECT(cfg.agents == 300000 && cfg.steps == 10, "paper's parameters");
    uint32_t *a = malloc(cfg.agents * sizeof *a), *b = malloc(cfg.agents * sizeof *b);
    uint32_t distinct[10], distinct_b[10];
    VR_EXPECT(a && b, "out of memory");
    if (!a || !b) {
        free(a), free(b);
        return VR_TEST_RESULT();
    }
    vr_walk_place(a, cfg.agents, cfg.seed);
    vr_walk_stats st = {0}, st_b = {0};
    st.distinct_cells = distinct, st_b.distinct_cells = distinct_b;
    VR_EXPECT(vr_walk_run(a, &cfg, &st) == VR_OK, "%s", vr_last_error());
    for (uint32_t i = 0; i < cfg.agents; ++i)
        VR_EXPECT(vr_walk_x(a[i]) < 256 && vr_walk_y(a[i]) < 256, "agent %u off the grid: %08x",
                  i, a[i]);
    printf("  300,000 agents, 10 steps: %.1f ms; distinct cells per step:", st.ms);
    for (int s = 0; s < 10; ++s)
        printf(" %u", distinct[s]);
    printf("\n  cell evaluations %llu of %llu agent draws (%.1f agents per cell)\n",
           (unsigned long long)st.cell_evaluations, (unsigned long long)st.agent_draws,
           (double)st.agent_draws / (double)st.cell_evaluations);
    VR_EXPECT(distinct[0] <= 65536 && distinct[0] > 60000, "start: %u distinct cells",
              distinct[0]);
    /* determinism: the same seed gives the same cells; another seed other cells */
    vr_walk_place(b, cfg.agents, cfg.seed);
    VR_EXPECT(vr_walk_run(b, &cfg, &st_b) == VR_OK, "%s", vr_last_error());
    VR_EXPECT(memcmp(a, b, cfg.agents * sizeof *a) == 0, "two runs differ");
    VR_EXPECT(memcmp(distinct, distinct_b, sizeof distinct) == 0, "distinct counts differ");
    cfg.seed = 7;
    vr_walk_place(b, cfg.agents, cfg.seed);
    VR_EXPECT(vr_walk_run(b, &cfg, NULL) == VR_OK, "%s", vr_last_error());
    VR_EXPECT(memcmp(a, b, cfg.agents * sizeof *a) != 0, "seed 7 gives seed 2018's walk");
    /* the walk drifts up the activity: the mean activity under the agents grows; the density
     * still adds up to every agent */
    uint32_t *dens = malloc(256 * 256 * sizeof *dens);
    VR_EXPECT(dens && walk_tables(), "out of memory");
    if (dens && g_activity) {
        vr_walk_place(b, cfg.agents, 2018);
        double before = 0, after = 0;
        for (uint32_t i = 0; i < cfg.agents; ++i)
            before += g_activity[vr_walk_y(b[i]) * 256 + vr_walk_x(b[i])],
                after += g_activity[vr_walk_y(a[i]) * 256 + vr_walk_x(a[i])];
        printf("  mean activity under the agents: %.4f at the start, %.4f after 10 steps\n",
               before / cfg.agents, after / cfg.agents);
        VR_EXPECT(after > before, "no drift: %.4f -> %.4f", before, after);
        vr_walk_density(dens, a, cfg.agents);
        uint32_t sum = 0;
        for (uint32_t i = 0; i < 256 * 256; ++i)
            sum += dens[i];
        VR_EXPECT_EQ(sum, cfg.agents);
    }
    free(dens);
    /* bad input */
    cfg.agents = 0;
    VR_EXPECT(vr_walk_run(a, &cfg, NULL) == VR_ERR_ARG, "0 agents accepted");
    VR_EXPECT(strstr(vr_last_error(), "agents is 0") != NULL, "message: %s", vr_last_error());
    cfg.agents = 2, cfg.steps = VR_WALK_MAX_STEPS + 1;
    VR_EXPECT(vr_walk_run(a, &cfg, NULL) == VR_ERR_ARG, "too many steps accepted");
    cfg.steps = 1;
    for (uint32_t lanes = 0; lanes <= 64; ++lanes) { /* 0 means 1; powers of two up to 32 */
        cfg.lanes = lanes;
        const int ok = lanes <= 32 && (lanes & (lanes - 1)) == 0;
        VR_EXPECT((vr_walk_check(a, &cfg) == VR_OK) == ok, "lanes %u %s", lanes,
                  ok ? "refused" : "accepted");
    }
    cfg.lanes = 1, a[1] = vr_walk_pack(256, 3);
    VR_EXPECT(vr_walk_run(a, &cfg, NULL) == VR_ERR_ARG, "off-grid cell accepted");
    VR_EXPECT(strstr(vr_last_error(), "agent 1 is at cell 0x00030100") != NULL, "message: %s",
              vr_last_error());
    free(a), free(b);
    free(g_activity), g_activity = NULL;
    return VR_TEST_RESULT();
}

/* ---- timings (bench/results/apps-cpu.md; not part of ctest) --------------------------------- */

VR_TEST(test_apps_time, "apps-time/all")
{
    char path[4096];
    const char *bunny = vr_test_scene_path(path, sizeof path, "stanford-bunny.obj");
    const char *specs[4] = {bunny ? bunny : "sphere", "sphere", "sphere:82k", "sphere:1M"};
    for (int i = 0; i < 4; ++i) {
        vr_mesh in, out;
        if (!vr_test_load(&in, specs[i]))
            continue;
        double best = 1e30;
        for (int rep = 0; rep < 5; ++rep) {
            const double t0 = vr_now_ms();
            VR_EXPECT(vr_loop_subdivide(&out, &in, NULL) == VR_OK, "%s", vr_last_error());
            const double t = vr_now_ms() - t0;
            best = t < best ? t : best;
            if (rep < 4)
                vr_mesh_free(&out);
        }
        printf("  loop %-12s %9u tris -> %9u tris, %8u -> %8u vertices: %8.1f ms (best of 5)\n",
               vr_path_name(specs[i]), in.index_count / 3, out.index_count / 3, in.vertex_count,
               out.vertex_count, best);
        vr_mesh_free(&out), vr_mesh_free(&in);
    }
    vr_walk_config cfg = vr_walk_config_default();
    uint32_t *cells = malloc(cfg.agents * sizeof *cells), distinct[10];
    if (cells) {
        vr_walk_place(cells, cfg.agents, cfg.seed);
        vr_walk_stats st = {0};
        st.distinct_cells = distinct;
        VR_EXPECT(vr_walk_run(cells, &cfg, &st) == VR_OK, "%s", vr_last_error());
        printf("  walk 300,000 agents x 10 steps: %.1f ms (%.1f ms per step)\n", st.ms, st.ms / 10);
        free(cells);
    }
    return VR_TEST_RESULT();
}
