/* test_plan.c - the static batch plans of reuse/patches.h (RXMesh-style patches, meshoptimizer's
 * meshlets), CPU only: limits and bad input, hand-made meshes with their batches spelled out
 * (fans, soups, degenerate, repeated and non-manifold triangles, the tightest limits), seeded
 * grids in row and shuffled order (valid, deterministic, the same reuse either way), and every
 * shared scene in file, forsyth and random order against issue 14's targets: reuse >= .75 in
 * every order, within .02 of dynamic batching after Forsyth. Each plan is checked with
 * vr_batch_plan_validate (a permutation, batches within both limits). The strategies that run
 * the plans are tested with the others (test_reuse.c, test_gpu.cu).
 * Try: `vreuse_tests reuse/plan`.
 */
#include "tests/test.h"

#include <stdlib.h>
#include <string.h>

#include "reuse/patches.h"
#include "scenes/scene.h"
#include "sim/sim.h"
#include "tests/test_helpers.h"

/* Builds plan `meshlet` (0: patches) of mesh m. */
static vr_status vr_plan_build(vr_batch_plan *plan, int meshlet, const vr_mesh *m,
                               uint32_t max_unique, uint32_t max_indices)
{
    return meshlet ? vr_meshlets_build(plan, m->indices, m->index_count, m->positions,
                                       m->vertex_count, max_unique, max_indices)
                   : vr_patches_build(plan, m->indices, m->index_count, m->vertex_count,
                                      max_unique, max_indices);
}

/* Builds and validates; returns the batch count, or ~0u after a failed expectation. */
static uint32_t vr_plan_check(int meshlet, const vr_mesh *m, uint32_t max_unique,
                              uint32_t max_indices, const char *what)
{
    vr_batch_plan plan;
    vr_status st = vr_plan_build(&plan, meshlet, m, max_unique, max_indices);
    VR_EXPECT(st == VR_OK, "%s %s (N_u %u, %u indices): %s", meshlet ? "meshlets" : "patches",
              what, max_unique, max_indices, vr_last_error());
    if (st != VR_OK)
        return ~0u;
    st = vr_batch_plan_validate(&plan, m->indices, m->index_count, m->vertex_count, max_unique,
                                max_indices);
    VR_EXPECT(st == VR_OK, "%s %s (N_u %u, %u indices): %s", meshlet ? "meshlets" : "patches",
              what, max_unique, max_indices, vr_last_error());
    const uint32_t batches = st == VR_OK ? plan.batch_count : ~0u;
    vr_batch_plan_free(&plan);
    return batches;
}

/* A mesh view of hand-written indices with positions on a bumpy line (meshlets need some). */
static vr_mesh vr_plan_mesh(const uint32_t *idx, uint32_t index_count, uint32_t vertex_count,
                            float *pos)
{
    for (uint32_t v = 0; v < vertex_count; ++v) {
        pos[3 * v] = (float)v;
        pos[3 * v + 1] = (float)(v % 3);
        pos[3 * v + 2] = 0.25f * (float)(v % 5);
    }
    const vr_mesh m = {vertex_count, pos, pos, NULL, index_count, (uint32_t *)idx};
    return m;
}

VR_TEST(test_plan_limits, "reuse/plan-limits")
{
    static const uint32_t quad[] = {0, 1, 2, 2, 1, 3};
    float pos[12];
    vr_mesh m = vr_plan_mesh(quad, 6, 4, pos);
    vr_batch_plan plan;
    for (int meshlet = 0; meshlet < 2; ++meshlet) {
        VR_EXPECT_EQ(vr_plan_build(&plan, meshlet, &m, 2, 1023), VR_ERR_ARG);
        VR_EXPECT(strstr(vr_last_error(), "N_u") != NULL, "message: %s", vr_last_error());
        VR_EXPECT_EQ(vr_plan_build(&plan, meshlet, &m, VR_NU_MAX + 1, 1023), VR_ERR_ARG);
        VR_EXPECT_EQ(vr_plan_build(&plan, meshlet, &m, 256, 1024), VR_ERR_ARG);
        VR_EXPECT_EQ(vr_plan_build(&plan, meshlet, &m, 256, VR_MAX_INDICES_MAX + 3), VR_ERR_ARG);
        m.index_count = 5;
        VR_EXPECT_EQ(vr_plan_build(&plan, meshlet, &m, 256, 1023), VR_ERR_FORMAT);
        m.index_count = 0; /* empty: no batches, starts[0] = 0 */
        VR_EXPECT_EQ(vr_plan_build(&plan, meshlet, &m, 256, 1023), VR_OK);
        VR_EXPECT(plan.batch_count == 0 && plan.starts && plan.starts[0] == 0,
                  "empty plan: %u batches", plan.batch_count);
        VR_EXPECT_EQ(vr_batch_plan_validate(&plan, m.indices, 0, 4, 256, 1023), VR_OK);
        vr_batch_plan_free(&plan);
        m.index_count = 6;
        VR_EXPECT_EQ(vr_plan_check(meshlet, &m, 256, 1023, "quad"), 1);
    }
    vr_batch_plan_free(NULL);
    /* meshoptimizer's limits: 255 vertices, 512 triangles in steps of 4 */
    static const uint32_t cases[][4] = {
        {256, 1023, 255, 340}, {64, 372, 64, 124}, {3, 3, 3, 4}, {1024, 3069, 255, 512},
        {100, 30, 100, 8},     {37, 6, 37, 4},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        uint32_t mv = 0, mt = 0;
        vr_meshlet_limits(&mv, &mt, cases[i][0], cases[i][1]);
        VR_EXPECT(mv == cases[i][2] && mt == cases[i][3], "limits %u/%u: %u vertices, %u "
                  "triangles, want %u, %u", cases[i][0], cases[i][1], mv, mt, cases[i][2],
                  cases[i][3]);
    }
    /* a damaged plan is refused with what is wrong */
    VR_EXPECT_EQ(vr_patches_build(&plan, quad, 6, 4, 256, 1023), VR_OK);
    plan.tri_order[1] = plan.tri_order[0];
    VR_EXPECT_EQ(vr_batch_plan_validate(&plan, quad, 6, 4, 256, 1023), VR_ERR_FORMAT);
    VR_EXPECT(strstr(vr_last_error(), "repeated") != NULL, "message: %s", vr_last_error());
    VR_EXPECT_EQ(vr_batch_plan_validate(&plan, quad, 6, 4, 3, 1023), VR_ERR_FORMAT);
    vr_batch_plan_free(&plan);
    return VR_TEST_RESULT();
}

/* Hand-made meshes: the batches follow from the limits. */
VR_TEST(test_plan_small, "reuse/plan-small")
{
    enum { FAN = 40, SOUP = 30 };
    uint32_t fan[3 * FAN], soup[3 * SOUP], repeat[3 * 64];
    for (uint32_t i = 0; i < FAN; ++i) { /* around vertex 0 */
        fan[3 * i] = 0;
        fan[3 * i + 1] = i + 1;
        fan[3 * i + 2] = i + 2;
    }
    for (uint32_t i = 0; i < 3 * SOUP; ++i) /* 30 separate triangles */
        soup[i] = i;
    for (uint32_t i = 0; i < 3 * 64; ++i) /* one triangle 64 times */
        repeat[i] = i % 3;
    /* degenerate (repeated corners, one with all three equal), a duplicate and a non-manifold
     * edge (0, 1) shared by three triangles */
    static const uint32_t odd[] = {0, 1, 2, 1, 0, 3, 0, 1, 4, 2, 2, 5, 5, 5, 5, 0, 1, 2, 4, 5, 6};
    float pos[3 * 128];
    struct {
        const char *name;
        vr_mesh m;
        uint32_t nu, max_indices, batches; /* expected batches (both builders), 0: any */
    } cases[] = {
        {"fan", vr_plan_mesh(fan, 3 * FAN, FAN + 2, pos), 256, 1023, 1},
        {"fan N_u 3", vr_plan_mesh(fan, 3 * FAN, FAN + 2, pos), 3, 1023, FAN},
        {"fan 1 triangle", vr_plan_mesh(fan, 3 * FAN, FAN + 2, pos), 256, 3, FAN},
        {"fan 2 triangles", vr_plan_mesh(fan, 3 * FAN, FAN + 2, pos), 256, 6, 0},
        {"fan N_u 4", vr_plan_mesh(fan, 3 * FAN, FAN + 2, pos), 4, 1023, 0},
        {"soup", vr_plan_mesh(soup, 3 * SOUP, 3 * SOUP, pos), 256, 1023, 1},
        {"soup N_u 9", vr_plan_mesh(soup, 3 * SOUP, 3 * SOUP, pos), 9, 1023, SOUP / 3},
        {"repeat", vr_plan_mesh(repeat, 3 * 64, 3, pos), 256, 1023, 1},
        {"repeat 5 triangles", vr_plan_mesh(repeat, 3 * 64, 3, pos), 3, 15, 0},
        {"odd", vr_plan_mesh(odd, 21, 7, pos), 256, 1023, 1},
        {"odd N_u 3", vr_plan_mesh(odd, 21, 7, pos), 3, 1023, 0},
        {"odd 1 triangle", vr_plan_mesh(odd, 21, 7, pos), 1024, 3, 7},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i)
        for (int meshlet = 0; meshlet < 2; ++meshlet) {
            const uint32_t b = vr_plan_check(meshlet, &cases[i].m, cases[i].nu,
                                             cases[i].max_indices, cases[i].name);
            VR_EXPECT(b != ~0u && (cases[i].batches == 0 || b == cases[i].batches),
                      "%s %s: %u batches, want %u", meshlet ? "meshlets" : "patches",
                      cases[i].name, b, cases[i].batches);
        }
    /* seeded soups of random triangles over few vertices: non-manifold edges everywhere,
     * repeated and degenerate triangles, several components */
    uint64_t x = 88172645463325252ull;
    static const uint32_t soup_limits[][2] = {{3, 3}, {4, 12}, {16, 60}, {256, 1023}};
    for (uint32_t n = 0; n < 8; ++n) {
        uint32_t V, T, idx[3 * 279];
        vr_test_soup(idx, &V, &T, n, &x);
        const vr_mesh m = vr_plan_mesh(idx, 3 * T, V, pos);
        for (size_t l = 0; l < sizeof soup_limits / sizeof soup_limits[0]; ++l)
            for (int meshlet = 0; meshlet < 2; ++meshlet)
                vr_plan_check(meshlet, &m, soup_limits[l][0], soup_limits[l][1], "soup");
    }
    return VR_TEST_RESULT();
}

void vr_test_soup(uint32_t *idx, uint32_t *vertices, uint32_t *tris, uint32_t n, uint64_t *x)
{
    *vertices = 8 + 15 * n;
    *tris = 20 + 37 * n;
    for (uint32_t i = 0; i < 3 * *tris; ++i) {
        *x ^= *x << 13, *x ^= *x >> 7, *x ^= *x << 17;
        idx[i] = (uint32_t)(*x % *vertices);
    }
}

const char *const vr_test_plan_scenes[VR_TEST_PLAN_SCENE_COUNT] = {
    "stanford-bunny.obj", "horse.ply", "igea.ply",   "fandisk.obj", "rocker-arm.obj",
    "spot.obj",           "cow.obj",   "teapot.obj", "sphere",      "foliage:20k"};

int vr_test_spec_is_file(const char *spec)
{
    const char *dot = strchr(spec, '.'), *colon = strchr(spec, ':');
    return dot && !(colon && colon < dot); /* "sphere:1.3M" is a generator */
}

const char *vr_test_plan_spec(char *buf, size_t n, const char *spec)
{
    if (!vr_test_spec_is_file(spec))
        return spec;
    if (vr_test_scene_path(buf, n, spec))
        return buf;
    printf("SKIP: %s: scenes directory missing (set VR_SCENES)\n", spec);
    return NULL;
}

/* Reuse of a plan's batches, through the simulator (the strategies' count). */
static double vr_plan_reuse(int meshlet, const vr_mesh *m, uint32_t nu, uint32_t max_indices)
{
    vr_sim_result r;
    vr_status st = meshlet ? vr_sim_meshlet(&r, m->indices, m->index_count, m->positions,
                                            m->vertex_count, nu, max_indices, NULL, NULL)
                           : vr_sim_patch(&r, m->indices, m->index_count, m->vertex_count, nu,
                                          max_indices, NULL, NULL);
    VR_EXPECT(st == VR_OK, "simulator: %s", vr_last_error());
    return st == VR_OK ? r.reuse : -1;
}

/* How full a plan's batches are: the mean over batches of the fuller of faces / (max_indices /
 * 3) and distinct vertices / N_u (1: every batch stopped by a limit it reached). */
static double vr_plan_fill(const vr_batch_plan *plan, const vr_mesh *m, uint32_t nu,
                           uint32_t max_indices)
{
    uint32_t *seen = calloc((size_t)m->vertex_count + 1, sizeof *seen);
    VR_EXPECT(seen != NULL, "out of memory");
    if (!seen || plan->batch_count == 0) {
        free(seen);
        return 0;
    }
    double sum = 0;
    for (uint32_t b = 0; b < plan->batch_count; ++b) {
        const uint32_t t0 = plan->starts[b] / 3, t1 = plan->starts[b + 1] / 3;
        uint32_t unique = 0;
        for (uint32_t t = t0; t < t1; ++t)
            for (int k = 0; k < 3; ++k) {
                const uint32_t v = m->indices[3 * (size_t)plan->tri_order[t] + k];
                if (seen[v] != b + 1) {
                    seen[v] = b + 1;
                    ++unique;
                }
            }
        const double by_faces = (double)(t1 - t0) / (double)(max_indices / 3);
        const double by_vertices = (double)unique / (double)nu;
        sum += by_faces > by_vertices ? by_faces : by_vertices;
    }
    free(seen);
    return sum / plan->batch_count;
}

/* Grids in row order and shuffled: valid for several limits, deterministic, the order does
 * not matter to the reuse, and the patches' batches are full (session 34: 0.70 when each
 * patch was its own batch, 0.94 now on sphere:1.3M). */
VR_TEST(test_plan_grids, "reuse/plan-grids")
{
    static const uint32_t limits[][2] = {{256, 1023}, {37, 1023}, {64, 372}, {1024, 3069},
                                         {8, 30}, {256, 300}};
    vr_mesh row, shuffled;
    VR_EXPECT_EQ(vr_test_grid_mesh(&row, 150, 97, 5, 0, 3), VR_OK);
    VR_EXPECT_EQ(vr_test_grid_mesh(&shuffled, 150, 97, 5, 1, 3), VR_OK);
    for (size_t l = 0; l < sizeof limits / sizeof limits[0]; ++l)
        for (int meshlet = 0; meshlet < 2; ++meshlet) {
            const uint32_t nu = limits[l][0], mi = limits[l][1];
            const char *name = meshlet ? "meshlets" : "patches";
            vr_plan_check(meshlet, &row, nu, mi, "grid");
            vr_plan_check(meshlet, &shuffled, nu, mi, "shuffled grid");
            /* the same input gives the same plan */
            vr_batch_plan a, b;
            VR_EXPECT_EQ(vr_plan_build(&a, meshlet, &shuffled, nu, mi), VR_OK);
            VR_EXPECT_EQ(vr_plan_build(&b, meshlet, &shuffled, nu, mi), VR_OK);
            VR_EXPECT(a.batch_count == b.batch_count &&
                          !memcmp(a.starts, b.starts, (a.batch_count + 1) * sizeof *a.starts) &&
                          !memcmp(a.tri_order, b.tri_order,
                                  a.triangle_count * sizeof *a.tri_order),
                      "%s N_u %u/%u: two builds differ", name, nu, mi);
            const double fill = vr_plan_fill(&a, &shuffled, nu, mi);
            printf("  %s N_u %u / %u indices: %u batches, %.3f full\n", name, nu, mi,
                   a.batch_count, fill);
            if (!meshlet) /* meshlets stop at meshoptimizer's 255 / 512 */
                VR_EXPECT(fill >= 0.88, "patches N_u %u/%u: batches %.3f full, want >= 0.88 "
                          "(each patch its own batch gave 0.69-0.79)", nu, mi, fill);
            vr_batch_plan_free(&a);
            vr_batch_plan_free(&b);
            const double r0 = vr_plan_reuse(meshlet, &row, nu, mi);
            const double r1 = vr_plan_reuse(meshlet, &shuffled, nu, mi);
            VR_EXPECT(r1 > r0 - 0.02 && r1 < r0 + 0.02, "%s N_u %u/%u: reuse %.3f in row "
                      "order, %.3f shuffled", name, nu, mi, r0, r1);
            if (nu == 256 && mi == 1023)
                VR_EXPECT(r0 >= 0.78 && r1 >= 0.78, "%s: reuse %.3f / %.3f", name, r0, r1);
        }
    vr_mesh_free(&row);
    vr_mesh_free(&shuffled);
    return VR_TEST_RESULT();
}

/* Every shared scene and the default sphere, three orders: valid plans, reuse >= .75 (within
 * .01 of the ideal for foliage, whose quads share nothing), within .02 of dyn after Forsyth. */
VR_TEST(test_plan_scenes, "reuse/plan-scenes")
{
    const char *const *specs = vr_test_plan_scenes;
    static const vr_order orders[] = {VR_ORDER_FILE, VR_ORDER_FORSYTH, VR_ORDER_RANDOM};
    int loaded = 0;
    for (size_t f = 0; f < VR_TEST_PLAN_SCENE_COUNT; ++f) {
        char path[512];
        const char *spec = vr_test_plan_spec(path, sizeof path, specs[f]);
        if (!spec)
            continue;
        printf("  %-20s", specs[f]);
        for (size_t o = 0; o < sizeof orders / sizeof orders[0]; ++o) {
            vr_mesh m;
            if (!vr_test_load(&m, spec))
                break;
            VR_EXPECT_EQ(vr_mesh_reorder(&m, orders[o], 1), VR_OK);
            ++loaded;
            vr_sim_result ideal, dyn;
            VR_EXPECT_EQ(vr_sim_ideal(&ideal, m.indices, m.index_count, m.vertex_count, NULL),
                         VR_OK);
            VR_EXPECT_EQ(vr_sim_dynamic(&dyn, m.indices, m.index_count, m.vertex_count, 256,
                                        1023, NULL), VR_OK);
            /* foliage's quads share nothing: its ideal is 1/3, and a meshlet of 255 vertices
             * cuts one quad in four (.331) */
            const double target = ideal.reuse < 0.75 ? ideal.reuse - 0.01 : 0.75;
            for (int meshlet = 0; meshlet < 2; ++meshlet) {
                const char *name = meshlet ? "meshlet" : "patch";
                vr_plan_check(meshlet, &m, 256, 1023, specs[f]);
                const double r = vr_plan_reuse(meshlet, &m, 256, 1023);
                printf(" %s %s %.3f", vr_order_name(orders[o]), name, r);
                VR_EXPECT(r >= target, "%s (%s): %s reuse %.3f < %.3f", specs[f],
                          vr_order_name(orders[o]), name, r, target);
                if (orders[o] == VR_ORDER_FORSYTH)
                    VR_EXPECT(r >= dyn.reuse - 0.02, "%s (forsyth): %s reuse %.3f, dyn %.3f",
                              specs[f], name, r, dyn.reuse);
            }
            vr_mesh_free(&m);
        }
        printf("\n");
    }
    return loaded ? VR_TEST_RESULT() : VR_TEST_SKIP;
}
