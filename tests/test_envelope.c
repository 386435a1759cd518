/* test_envelope.c - the simplification envelopes' CPU reference (pipeline/apps/envelope.*): the
 * octree's invariants, the offsets as a pure per-vertex function (serial calls equal the OpenMP
 * build bit for bit), a sphere's outer and inner envelopes (offsets near epsilon, the outer one
 * contains the sphere), two nearly touching boxes (a full-epsilon move intersects, ours does not;
 * facing sides get small offsets), a torus, the shared scenes and generators in both directions
 * (offsets in [0, epsilon], no more intersecting pairs than the input), the intersection counter
 * on hand-made pairs, clear errors. "apps-time/envelope" (not run by ctest) times bunny and a
 * 1M-triangle sphere. Try: `vreuse_tests apps/envelope`, `vreuse_tests apps-time/envelope`.
 */
#include "tests/test.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/apps/envelope.h"
#include "scenes/scene.h"
#include "tests/test_helpers.h"

/* A mesh from arrays it takes over (normals +z, recomputed by the envelope anyway). */
static int own_mesh(vr_mesh *m, float *pos, uint32_t vc, uint32_t *idx, uint32_t ic)
{
    memset(m, 0, sizeof *m);
    m->vertex_count = vc, m->positions = pos, m->index_count = ic, m->indices = idx;
    m->normals = malloc(3 * (size_t)vc * sizeof(float) + 1);
    if (!pos || !idx || !m->normals) {
        vr_mesh_free(m);
        return 0;
    }
    for (uint32_t v = 0; v < vc; ++v)
        m->normals[3 * v] = m->normals[3 * v + 1] = 0, m->normals[3 * v + 2] = 1;
    return 1;
}

/* Appends an axis-aligned box lo..hi, every face an n x n grid with its own vertices (the edges'
 * copies land on equal floats, so welding joins them: the seam path of spot.obj), outward CCW. */
static void add_box(float *pos, uint32_t *vc, uint32_t *idx, uint32_t *ic, const float *lo,
                    const float *hi, uint32_t n)
{
    for (int a = 0; a < 3; ++a)
        for (int side = 0; side < 2; ++side) {
            const int b = (a + 1) % 3, c = (a + 2) % 3;
            const uint32_t base = *vc;
            for (uint32_t j = 0; j <= n; ++j)
                for (uint32_t i = 0; i <= n; ++i) {
                    float *p = pos + 3 * (size_t)(*vc)++;
                    p[a] = side ? hi[a] : lo[a];
                    p[b] = lo[b] + (hi[b] - lo[b]) * (float)i / (float)n;
                    p[c] = lo[c] + (hi[c] - lo[c]) * (float)j / (float)n;
                }
            for (uint32_t j = 0; j < n; ++j)
                for (uint32_t i = 0; i < n; ++i) {
                    const uint32_t q0 = base + j * (n + 1) + i, q1 = q0 + 1, q2 = q0 + n + 2,
                                   q3 = q0 + n + 1;
                    /* (b, c) grid: q0 q1 q2 is counter-clockwise seen from +a */
                    const uint32_t t[6] = {q0, q1, q2, q0, q2, q3}, r[6] = {q0, q2, q1, q0, q3, q2};
                    memcpy(idx + *ic, side ? t : r, sizeof t);
                    *ic += 6;
                }
        }
}

/* Two boxes [0,1]^2 x [0,0.1] and [0,1]^2 x [0.1+gap, 0.2+gap] (tests/test_helpers.h). */
int vr_test_plates(vr_mesh *m, float gap, uint32_t n)
{
    const uint32_t vmax = 2 * 6 * (n + 1) * (n + 1), imax = 2 * 6 * 6 * n * n;
    float *pos = malloc(3 * (size_t)vmax * sizeof *pos);
    uint32_t *idx = malloc((size_t)imax * sizeof *idx), vc = 0, ic = 0;
    if (pos && idx) {
        const float lo0[3] = {0, 0, 0}, hi0[3] = {1, 1, 0.1f};
        const float lo1[3] = {0, 0, 0.1f + gap}, hi1[3] = {1, 1, 0.2f + gap};
        add_box(pos, &vc, idx, &ic, lo0, hi0, n);
        add_box(pos, &vc, idx, &ic, lo1, hi1, n);
    }
    return own_mesh(m, pos, vc, idx, ic);
}

/* A torus (ring radius R, tube radius r), u x v quads, outward CCW (tests/test_helpers.h). */
int vr_test_torus(vr_mesh *m, float R, float r, uint32_t nu, uint32_t nv)
{
    float *pos = malloc(3 * (size_t)nu * nv * sizeof *pos);
    uint32_t *idx = malloc(6 * (size_t)nu * nv * sizeof *idx);
    if (pos && idx) {
        const double pi = 3.14159265358979323846;
        for (uint32_t i = 0; i < nu; ++i)
            for (uint32_t j = 0; j < nv; ++j) {
                const double u = 2 * pi * i / nu, v = 2 * pi * j / nv;
                float *p = pos + 3 * (size_t)(i * nv + j);
                p[0] = (float)((R + r * cos(v)) * cos(u));
                p[1] = (float)((R + r * cos(v)) * sin(u));
                p[2] = (float)(r * sin(v));
            }
        for (uint32_t i = 0, t = 0; i < nu; ++i)
            for (uint32_t j = 0; j < nv; ++j, t += 6) {
                const uint32_t a = i * nv + j, b = ((i + 1) % nu) * nv + j,
                               c = ((i + 1) % nu) * nv + (j + 1) % nv, d = i * nv + (j + 1) % nv;
                const uint32_t q[6] = {a, b, c, a, c, d};
                memcpy(idx + t, q, sizeof q);
            }
    }
    return own_mesh(m, pos, nu * nv, idx, 6 * nu * nv);
}

/* The envelope of `in` with its checks: offsets in [0, eps], welded copies equal, no more
 * intersecting pairs than the input. Fills offsets (vertex_count) and stats. */
static int envelope_checked(vr_mesh *out, float *offsets, vr_envelope_stats *st, const vr_mesh *in,
                            int direction, const char *what)
{
    vr_envelope_config cfg = vr_envelope_config_default();
    cfg.direction = direction, cfg.check = 1;
    vr_status s = vr_envelope_build(out, offsets, in, &cfg, st);
    VR_EXPECT(s == VR_OK, "%s: %s", what, vr_last_error());
    if (s)
        return 0;
    uint32_t bad = 0;
    for (uint32_t v = 0; v < in->vertex_count; ++v)
        bad += !(offsets[v] >= 0.0f && offsets[v] <= st->epsilon);
    VR_EXPECT(bad == 0, "%s: %u offsets outside [0, %g]", what, bad, st->epsilon);
    VR_EXPECT(st->output_intersections <= st->input_intersections,
              "%s %s: %llu intersecting pairs out, %llu in", what, direction > 0 ? "outer" : "inner",
              (unsigned long long)st->output_intersections,
              (unsigned long long)st->input_intersections);
    VR_EXPECT(out->vertex_count == in->vertex_count && out->index_count == in->index_count &&
                  memcmp(out->indices, in->indices, in->index_count * sizeof(uint32_t)) == 0,
              "%s: topology changed", what);
    printf("  %-20s %-5s %8u tris  eps %.4g  offsets min %.3f mean %.3f max %.3f eps, full %5.1f%%  "
           "pairs in %llu out %llu  (%u nodes, depth %u; %.0f ms)\n",
           what, direction > 0 ? "outer" : "inner", in->index_count / 3, st->epsilon,
           st->offset_min / st->epsilon, st->offset_mean / st->epsilon,
           st->offset_max / st->epsilon, 100.0 * st->full_vertices / (st->welded_vertices + 1e-30),
           (unsigned long long)st->input_intersections,
           (unsigned long long)st->output_intersections, st->octree_nodes, st->octree_depth,
           st->prepare_ms + st->offsets_ms);
    return 1;
}

VR_TEST(test_envelope_octree, "apps/envelope-octree")
{
    vr_mesh m;
    if (!vr_test_load(&m, "sphere:20k"))
        return VR_TEST_RESULT();
    vr_envelope_config cfg = vr_envelope_config_default();
    vr_envelope_prep p;
    VR_EXPECT(vr_envelope_prepare(&p, &m, &cfg) == VR_OK, "%s", vr_last_error());
    const uint32_t tc = m.index_count / 3;
    uint32_t *seen = calloc(tc, sizeof *seen);
    VR_EXPECT(seen != NULL, "out of memory");
    VR_EXPECT(p.depth <= VR_ENVELOPE_MAX_DEPTH, "depth %u", p.depth);
    uint32_t leaves = 0, bad_box = 0;
    for (uint32_t n = 0; seen && n < p.node_count; ++n) {
        const uint32_t *l = p.link + 4 * n;
        if (l[1]) {
            VR_EXPECT(l[0] > n && l[0] + l[1] <= p.node_count && l[1] <= 8, "node %u links", n);
            continue;
        }
        ++leaves;
        VR_EXPECT(l[3] <= VR_ENVELOPE_LEAF_TRIS || p.depth == VR_ENVELOPE_MAX_DEPTH,
                  "leaf %u holds %u", n, l[3]);
        for (uint32_t e = l[2]; e < l[2] + l[3]; ++e) {
            const uint32_t t = p.tris[e];
            seen[t]++;
            for (int k = 0; k < 3; ++k)
                for (int i = 0; i < 3; ++i) {
                    const float x = m.positions[3 * p.indices[3 * t + k] + i];
                    const float q = p.normals[3 * p.indices[3 * t + k] + i];
                    bad_box += x < p.box[6 * n + i] || x > p.box[6 * n + 3 + i] ||
                               q < p.nbox[6 * n + i] || q > p.nbox[6 * n + 3 + i];
                }
        }
    }
    uint32_t twice = 0;
    for (uint32_t t = 0; seen && t < tc; ++t)
        twice += seen[t] != 1;
    VR_EXPECT_EQ(twice, 0);
    VR_EXPECT_EQ(bad_box, 0);
    /* inner nodes' boxes hold their children's */
    for (uint32_t n = 0; n < p.node_count; ++n) {
        const uint32_t *l = p.link + 4 * n;
        for (uint32_t c = l[0]; c < l[0] + l[1]; ++c)
            for (int i = 0; i < 3; ++i)
                VR_EXPECT(p.box[6 * n + i] <= p.box[6 * c + i] &&
                              p.box[6 * n + 3 + i] >= p.box[6 * c + 3 + i],
                          "node %u, child %u", n, c);
    }
    /* fans: every corner of every triangle listed under its welded vertex */
    uint64_t entries = 0;
    for (uint32_t v = 0; v < m.vertex_count; ++v)
        for (uint32_t f = p.fan_first[v]; f < p.fan_first[v + 1]; ++f) {
            const uint32_t *t = p.indices + 3 * p.fan[f];
            VR_EXPECT(t[0] == v || t[1] == v || t[2] == v, "vertex %u fan entry %u", v, p.fan[f]);
            ++entries;
        }
    VR_EXPECT_EQ(entries, m.index_count);
    printf("  sphere:20k: %u nodes, %u leaves, depth %u\n", p.node_count, leaves, p.depth);
    free(seen);
    vr_envelope_prep_free(&p);
    vr_mesh_free(&m);
    return VR_TEST_RESULT();
}

/* Serial calls of the per-vertex function give the build's (OpenMP) offsets bit for bit. */
VR_TEST(test_envelope_pure, "apps/envelope-pure")
{
    char path[4096];
    const char *spec = vr_test_scene_path(path, sizeof path, "cow.obj");
    vr_mesh m, out;
    if (!vr_test_load(&m, spec ? spec : "sphere:5k"))
        return VR_TEST_RESULT();
    for (int dir = 1; dir >= -1; dir -= 2) {
        vr_envelope_config cfg = vr_envelope_config_default();
        cfg.direction = dir;
        float *a = malloc(m.vertex_count * sizeof *a);
        vr_envelope_prep p;
        VR_EXPECT(a && vr_envelope_build(&out, a, &m, &cfg, NULL) == VR_OK, "%s", vr_last_error());
        VR_EXPECT(vr_envelope_prepare(&p, &m, &cfg) == VR_OK, "%s", vr_last_error());
        uint32_t diff = 0;
        for (uint32_t v = m.vertex_count; a && v-- > 0;) { /* reverse order, one thread */
            const float d = vr_envelope_offset(&p.input, p.weld[v]);
            diff += memcmp(&d, a + v, sizeof d) != 0;
            float q[3];
            vr_envelope_move(q, &p.input, p.weld[v], d);
            diff += memcmp(q, out.positions + 3 * v, sizeof q) != 0;
        }
        VR_EXPECT_EQ(diff, 0);
        vr_envelope_prep_free(&p);
        vr_mesh_free(&out);
        free(a);
    }
    vr_mesh_free(&m);
    return VR_TEST_RESULT();
}

VR_TEST(test_envelope_sphere, "apps/envelope-sphere")
{
    vr_mesh m, out;
    if (!vr_test_load(&m, "sphere"))
        return VR_TEST_RESULT();
    float *off = malloc(m.vertex_count * sizeof *off);
    for (int dir = 1; off && dir >= -1; dir -= 2) {
        vr_envelope_stats st;
        if (!envelope_checked(&out, off, &st, &m, dir, "sphere"))
            break;
        VR_EXPECT_EQ(st.input_intersections, 0);
        VR_EXPECT_EQ(st.output_intersections, 0);
        /* a smooth convex mesh has room: nearly every vertex moves by the full epsilon */
        VR_EXPECT(st.offset_min >= 0.5f * st.epsilon, "min offset %g of eps %g", st.offset_min,
                  st.epsilon);
        VR_EXPECT(st.offset_mean >= 0.95f * st.epsilon, "mean offset %g of eps %g",
                  st.offset_mean, st.epsilon);
        /* every vertex moved along its radius the right way */
        double rin = 0, rout = 1e30;
        uint32_t wrong = 0;
        for (uint32_t v = 0; v < m.vertex_count; ++v) {
            const float *p = m.positions + 3 * v, *q = out.positions + 3 * v;
            const double a = sqrt((double)p[0] * p[0] + (double)p[1] * p[1] + (double)p[2] * p[2]);
            const double b = sqrt((double)q[0] * q[0] + (double)q[1] * q[1] + (double)q[2] * q[2]);
            wrong += dir > 0 ? !(b > a) : !(b < a);
            rin = a > rin ? a : rin;
        }
        VR_EXPECT_EQ(wrong, 0);
        if (dir > 0) {
            /* the outer envelope contains the sphere: each output face's plane lies farther from
             * the centre than every input vertex (the output is convex here) */
            for (uint32_t t = 0; t < out.index_count; t += 3) {
                const float *a = out.positions + 3 * out.indices[t],
                            *b = out.positions + 3 * out.indices[t + 1],
                            *c = out.positions + 3 * out.indices[t + 2];
                double e1[3], e2[3], n[3];
                for (int i = 0; i < 3; ++i)
                    e1[i] = (double)b[i] - a[i], e2[i] = (double)c[i] - a[i];
                n[0] = e1[1] * e2[2] - e1[2] * e2[1], n[1] = e1[2] * e2[0] - e1[0] * e2[2];
                n[2] = e1[0] * e2[1] - e1[1] * e2[0];
                const double len = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
                const double d = (n[0] * a[0] + n[1] * a[1] + n[2] * a[2]) / len;
                rout = d < rout ? d : rout;
            }
            VR_EXPECT(rout > rin, "an output face plane at %.6f, inside the input's %.6f", rout,
                      rin);
        }
        vr_mesh_free(&out);
    }
    free(off);
    vr_mesh_free(&m);
    return VR_TEST_RESULT();
}

VR_TEST(test_envelope_plates, "apps/envelope-plates")
{
    const float gap = 0.01f;
    vr_mesh m, out;
    VR_EXPECT(vr_test_plates(&m, gap, 8), "plates");
    float *off = malloc(m.vertex_count * sizeof *off);
    vr_envelope_stats st;
    if (!off || !envelope_checked(&out, off, &st, &m, 1, "two plates")) {
        free(off), vr_mesh_free(&m);
        return VR_TEST_RESULT();
    }
    VR_EXPECT_EQ(st.input_intersections, 0);
    VR_EXPECT_EQ(st.output_intersections, 0);
    /* a naive move by the full epsilon crosses the gap (epsilon > gap / 2) and intersects */
    VR_EXPECT(st.epsilon > gap, "epsilon %g", st.epsilon);
    vr_mesh naive;
    VR_EXPECT(vr_mesh_copy(&naive, &out) == VR_OK, "%s", vr_last_error());
    vr_envelope_config cfg = vr_envelope_config_default();
    vr_envelope_prep p;
    VR_EXPECT(vr_envelope_prepare(&p, &m, &cfg) == VR_OK, "%s", vr_last_error());
    for (uint32_t v = 0; v < m.vertex_count; ++v)
        vr_envelope_move(naive.positions + 3 * v, &p.input, p.weld[v], st.epsilon);
    uint64_t naive_pairs = 0;
    VR_EXPECT(vr_envelope_count_intersections(&naive_pairs, &naive, p.weld) == VR_OK, "%s",
              vr_last_error());
    VR_EXPECT(naive_pairs > 0, "the naive move did not intersect");
    /* facing sides (z = 0.1 and 0.1 + gap) stay below gap / 2; the far sides' inner vertices
     * (z = 0 and 0.2 + gap, away from the edges) move by the full epsilon */
    float facing = 0, far_min = 1;
    for (uint32_t v = 0; v < m.vertex_count; ++v) {
        const float *q = m.positions + 3 * v;
        const int inner = q[0] > 0.05f && q[0] < 0.95f && q[1] > 0.05f && q[1] < 0.95f;
        if (q[2] == 0.1f || q[2] == 0.1f + gap)
            facing = off[v] > facing ? off[v] : facing;
        else if (inner && (q[2] == 0.0f || q[2] == 0.2f + gap))
            far_min = off[v] < far_min ? off[v] : far_min;
    }
    VR_EXPECT(facing < 0.5f * gap, "facing offset %g, gap %g", facing, gap);
    VR_EXPECT(far_min == st.epsilon, "far side offset %g, eps %g", far_min, st.epsilon);
    printf("  plates: gap %g, eps %g: facing offsets <= %g, far sides %g; naive move: %llu "
           "intersecting pairs, ours: %llu\n",
           gap, st.epsilon, facing, far_min, (unsigned long long)naive_pairs,
           (unsigned long long)st.output_intersections);
    vr_envelope_prep_free(&p);
    vr_mesh_free(&naive), vr_mesh_free(&out), vr_mesh_free(&m);
    free(off);
    return VR_TEST_RESULT();
}

VR_TEST(test_envelope_torus, "apps/envelope-torus")
{
    vr_mesh m, out;
    VR_EXPECT(vr_test_torus(&m, 1.0f, 0.3f, 96, 32), "torus");
    float *off = malloc(m.vertex_count * sizeof *off);
    for (int dir = 1; off && dir >= -1; dir -= 2) {
        vr_envelope_stats st;
        if (!envelope_checked(&out, off, &st, &m, dir, "torus"))
            break;
        VR_EXPECT_EQ(st.output_intersections, 0);
        VR_EXPECT(st.offset_mean >= 0.9f * st.epsilon, "mean offset %g of %g", st.offset_mean,
                  st.epsilon);
        vr_mesh_free(&out);
    }
    free(off);
    vr_mesh_free(&m);
    return VR_TEST_RESULT();
}

VR_TEST(test_envelope_scenes, "apps/envelope-scenes")
{
    static const char *const specs[] = {"stanford-bunny.obj", "cow.obj", "spot.obj",
                                        "fandisk.obj", "rocker-arm.obj", "teapot.obj",
                                        "horse.ply", "terrain:20k", "foliage:5k"};
    for (size_t i = 0; i < sizeof specs / sizeof *specs; ++i) {
        char path[4096];
        const char *spec = vr_test_plan_spec(path, sizeof path, specs[i]);
        vr_mesh m, out;
        if (!spec || !vr_test_load(&m, spec))
            continue;
        float *off = malloc(m.vertex_count * sizeof *off);
        for (int dir = 1; off && dir >= -1; dir -= 2) {
            vr_envelope_stats st;
            if (!envelope_checked(&out, off, &st, &m, dir, specs[i]))
                break;
            vr_mesh_free(&out);
        }
        free(off);
        vr_mesh_free(&m);
    }
    return VR_TEST_RESULT();
}

/* The counter on hand-made pairs: crossing, touching, apart, coplanar overlapping, adjacent. */
VR_TEST(test_envelope_counter, "apps/envelope-counter")
{
    static const struct {
        float p[18];
        uint64_t pairs;
        const char *what;
    } cases[] = {
        {{0, 0, 0, 2, 0, 0, 0, 2, 0, 0.5f, 0.5f, -1, 0.5f, 0.5f, 1, 3, 3, 0}, 1, "crossing"},
        {{0, 0, 0, 2, 0, 0, 0, 2, 0, 0.5f, 0.5f, 0, 0.5f, 0.5f, 1, 3, 3, 1}, 1, "touching"},
        {{0, 0, 0, 2, 0, 0, 0, 2, 0, 0.5f, 0.5f, 0.01f, 0.5f, 0.5f, 1, 3, 3, 1}, 0, "apart"},
        {{0, 0, 0, 2, 0, 0, 0, 2, 0, 0.5f, 0.5f, 0, 3, 0.5f, 0, 0.5f, 3, 0}, 1, "coplanar"},
        {{0, 0, 0, 2, 0, 0, 0, 2, 0, 3, 3, 0, 4, 3, 0, 3, 4, 0}, 0, "coplanar apart"},
        {{0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0, 0, 0.5f, 0.5f, 1, 0.5f, 0.5f, -1}, 0, "shared corner"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; ++i) {
        float *pos = malloc(sizeof cases[i].p);
        uint32_t *idx = malloc(6 * sizeof *idx);
        vr_mesh m;
        if (pos)
            memcpy(pos, cases[i].p, sizeof cases[i].p);
        for (uint32_t k = 0; idx && k < 6; ++k)
            idx[k] = k;
        if (!own_mesh(&m, pos, 6, idx, 6))
            continue;
        uint64_t pairs = 99;
        VR_EXPECT(vr_envelope_count_intersections(&pairs, &m, NULL) == VR_OK, "%s",
                  vr_last_error());
        VR_EXPECT(pairs == cases[i].pairs, "%s: %llu pairs", cases[i].what,
                  (unsigned long long)pairs);
        vr_mesh_free(&m);
    }
    return VR_TEST_RESULT();
}

VR_TEST(test_envelope_errors, "apps/envelope-errors")
{
    vr_mesh m, out;
    VR_EXPECT(vr_test_plates(&m, 0.01f, 2), "plates");
    vr_envelope_config cfg = vr_envelope_config_default();
    const uint32_t ic = m.index_count;
    m.index_count = 0;
    VR_EXPECT(vr_envelope_build(&out, NULL, &m, &cfg, NULL) == VR_ERR_FORMAT, "empty accepted");
    VR_EXPECT(strstr(vr_last_error(), "no triangles") != NULL, "message: %s", vr_last_error());
    VR_EXPECT(out.vertex_count == 0 && out.positions == NULL, "output not zeroed");
    m.index_count = ic - 1;
    VR_EXPECT(vr_envelope_build(&out, NULL, &m, &cfg, NULL) == VR_ERR_FORMAT, "index count not a multiple of 3 accepted");
    VR_EXPECT(strstr(vr_last_error(), "multiple of 3") != NULL, "message: %s", vr_last_error());
    m.index_count = ic;
    const uint32_t keep = m.indices[4];
    m.indices[4] = m.vertex_count + 5;
    VR_EXPECT(vr_envelope_build(&out, NULL, &m, &cfg, NULL) == VR_ERR_FORMAT, "bad index accepted");
    VR_EXPECT(strstr(vr_last_error(), "out of range") != NULL, "message: %s", vr_last_error());
    uint64_t pairs;
    VR_EXPECT(vr_envelope_count_intersections(&pairs, &m, NULL) == VR_ERR_FORMAT,
              "checker took a bad index");
    m.indices[4] = keep;
    m.positions[7] = NAN;
    VR_EXPECT(vr_envelope_build(&out, NULL, &m, &cfg, NULL) == VR_ERR_FORMAT, "NaN accepted");
    VR_EXPECT(strstr(vr_last_error(), "non-finite position") != NULL, "message: %s",
              vr_last_error());
    m.positions[7] = 0;
    cfg.direction = 0;
    VR_EXPECT(vr_envelope_build(&out, NULL, &m, &cfg, NULL) == VR_ERR_ARG, "direction 0");
    VR_EXPECT(strstr(vr_last_error(), "direction is 0") != NULL, "message: %s", vr_last_error());
    cfg.direction = -1, cfg.epsilon_fraction = 0;
    VR_EXPECT(vr_envelope_build(&out, NULL, &m, &cfg, NULL) == VR_ERR_ARG, "epsilon 0");
    VR_EXPECT(strstr(vr_last_error(), "epsilon fraction 0") != NULL, "message: %s",
              vr_last_error());
    VR_EXPECT(strstr(vr_last_error(), ".c:") == NULL, "source path in: %s", vr_last_error());
    cfg.epsilon_fraction = 0.02f;
    VR_EXPECT(vr_envelope_build(&out, NULL, &m, &cfg, NULL) == VR_OK, "%s", vr_last_error());
    vr_mesh_free(&out), vr_mesh_free(&m);
    return VR_TEST_RESULT();
}

/* ---- timings (not part of ctest) ------------------------------------------------------- */

VR_TEST(test_envelope_time, "apps-time/envelope")
{
    char path[4096];
    const char *bunny = vr_test_scene_path(path, sizeof path, "stanford-bunny.obj");
    const char *specs[3] = {bunny ? bunny : "sphere", "sphere", "sphere:1M"};
    for (int i = 0; i < 3; ++i) {
        vr_mesh m, out;
        if (!vr_test_load(&m, specs[i]))
            continue;
        for (int dir = 1; dir >= -1; dir -= 2) {
            vr_envelope_config cfg = vr_envelope_config_default();
            cfg.direction = dir, cfg.check = 1;
            vr_envelope_stats st;
            VR_EXPECT(vr_envelope_build(&out, NULL, &m, &cfg, &st) == VR_OK, "%s",
                      vr_last_error());
            printf("  %-18s %-5s %8u tris %8u vertices: prepare %7.1f ms, offsets %8.1f ms "
                   "(%.2f us/vertex), check %7.1f ms; mean offset %.3f eps; pairs in %llu out "
                   "%llu\n",
                   vr_path_name(specs[i]), dir > 0 ? "outer" : "inner", m.index_count / 3,
                   st.welded_vertices, st.prepare_ms, st.offsets_ms,
                   1000.0 * st.offsets_ms / st.welded_vertices, st.check_ms,
                   st.offset_mean / st.epsilon, (unsigned long long)st.input_intersections,
                   (unsigned long long)st.output_intersections);
            vr_mesh_free(&out);
        }
        vr_mesh_free(&m);
    }
    return VR_TEST_RESULT();
}
