/* test_gpupatch.c - the CPU reference of the GPU patch builder (reuse/patch_build_ref.c): valid
 * plans (vr_batch_plan_validate: a permutation, ascending inside batches, both limits) on bad
 * input, hand-made meshes, seeded soups, grids in row and shuffled order and every shared scene
 * in file, forsyth and random order; deterministic; reuse >= .75 (foliage: its ideal) and
 * printed beside the CPU builder's. The GPU side (GPU plan == this plan) is in test_gpu.cu.
 * Try: `vreuse_tests reuse/gpupatch`.
 */
#include "tests/test.h"

#include <stdlib.h>
#include <string.h>

#include "pipeline/stage/geometry.h"
#include "reuse/patches.h"
#include "scenes/scene.h"
#include "sim/sim.h"
#include "tests/test_helpers.h"

/* Builds with the reference, validates, builds again and compares; returns the batch count,
 * or ~0u after a failed expectation. */
static uint32_t vr_gpatch_check(const vr_mesh *m, uint32_t nu, uint32_t mi, const char *what)
{
    vr_batch_plan a, b;
    vr_status st = vr_patches_build_gpu_ref(&a, m->indices, m->index_count, m->vertex_count, nu,
                                            mi);
    VR_EXPECT(st == VR_OK, "%s (N_u %u, %u indices): %s", what, nu, mi, vr_last_error());
    if (st != VR_OK)
        return ~0u;
    st = vr_batch_plan_validate(&a, m->indices, m->index_count, m->vertex_count, nu, mi);
    VR_EXPECT(st == VR_OK, "%s (N_u %u, %u indices): %s", what, nu, mi, vr_last_error());
    VR_EXPECT_EQ(vr_patches_build_gpu_ref(&b, m->indices, m->index_count, m->vertex_count, nu,
                                          mi), VR_OK);
    VR_EXPECT(a.batch_count == b.batch_count && a.group_count == b.group_count &&
                  a.split == b.split &&
                  !memcmp(a.starts, b.starts, (a.batch_count + 1) * sizeof *a.starts) &&
                  !memcmp(a.tri_order, b.tri_order, a.triangle_count * sizeof *a.tri_order),
              "%s (N_u %u, %u indices): two builds differ", what, nu, mi);
    const uint32_t batches = st == VR_OK ? a.batch_count : ~0u;
    vr_batch_plan_free(&a);
    vr_batch_plan_free(&b);
    return batches;
}

static vr_mesh vr_gpatch_mesh(const uint32_t *idx, uint32_t index_count, uint32_t vertex_count)
{
    const vr_mesh m = {vertex_count, NULL, NULL, NULL, index_count, (uint32_t *)idx};
    return m;
}

void vr_test_made_meshes(vr_test_made *m)
{
    static const uint32_t odd[] = {0, 1, 2, 1, 0, 3, 0, 1, 4, 2, 2, 5, 5, 5, 5, 0, 1, 2, 4, 5, 6};
    for (uint32_t i = 0; i < VR_TEST_FAN; ++i) {
        m->fan[3 * i] = 0;
        m->fan[3 * i + 1] = i + 1;
        m->fan[3 * i + 2] = i + 2;
    }
    for (uint32_t i = 0; i < 3 * VR_TEST_SOUP; ++i)
        m->soup[i] = i;
    for (uint32_t i = 0; i < 3 * 64; ++i)
        m->repeat[i] = i % 3;
    memcpy(m->odd, odd, sizeof odd);
    m->mesh[VR_TEST_MADE_FAN] = vr_gpatch_mesh(m->fan, 3 * VR_TEST_FAN, VR_TEST_FAN + 2);
    m->mesh[VR_TEST_MADE_SOUP] = vr_gpatch_mesh(m->soup, 3 * VR_TEST_SOUP, 3 * VR_TEST_SOUP);
    m->mesh[VR_TEST_MADE_REPEAT] = vr_gpatch_mesh(m->repeat, 3 * 64, 3);
    m->mesh[VR_TEST_MADE_ODD] = vr_gpatch_mesh(m->odd, 21, 7);
}

VR_TEST(test_gpatch_small, "reuse/gpupatch-small")
{
    static const uint32_t quad[] = {0, 1, 2, 2, 1, 3};
    vr_batch_plan plan;
    VR_EXPECT_EQ(vr_patches_build_gpu_ref(&plan, quad, 6, 4, 2, 1023), VR_ERR_ARG);
    VR_EXPECT(strstr(vr_last_error(), "N_u") != NULL, "message: %s", vr_last_error());
    VR_EXPECT_EQ(vr_patches_build_gpu_ref(&plan, quad, 6, 4, 256, 1024), VR_ERR_ARG);
    VR_EXPECT_EQ(vr_patches_build_gpu_ref(&plan, quad, 5, 4, 256, 1023), VR_ERR_FORMAT);
    VR_EXPECT_EQ(vr_patches_build_gpu_ref(&plan, quad, 0, 4, 256, 1023), VR_OK);
    VR_EXPECT(plan.batch_count == 0 && plan.starts && plan.starts[0] == 0, "empty plan");
    vr_batch_plan_free(&plan);
    if (!vr_gpu_available()) {
        VR_EXPECT_EQ(vr_patches_build_gpu(&plan, quad, 6, 4, 256, 1023, NULL), VR_ERR_NO_DEVICE);
        VR_EXPECT(plan.tri_order == NULL && plan.starts == NULL, "stub leaves the plan empty");
    }
    vr_test_made made;
    vr_test_made_meshes(&made);
    const vr_mesh *fan = &made.mesh[VR_TEST_MADE_FAN], *soup = &made.mesh[VR_TEST_MADE_SOUP],
                  *repeat = &made.mesh[VR_TEST_MADE_REPEAT], *odd = &made.mesh[VR_TEST_MADE_ODD];
    enum { FAN = VR_TEST_FAN, SOUP = VR_TEST_SOUP };
    struct {
        const char *name;
        vr_mesh m;
        uint32_t nu, max_indices, batches; /* 0: any */
    } cases[] = {
        {"quad", vr_gpatch_mesh(quad, 6, 4), 256, 1023, 1},
        {"fan", *fan, 256, 1023, 1},
        {"fan N_u 3", *fan, 3, 1023, FAN},
        {"fan 1 triangle", *fan, 256, 3, FAN},
        {"fan 2 triangles", *fan, 256, 6, 0},
        {"fan N_u 4", *fan, 4, 1023, 0},
        {"soup", *soup, 256, 1023, 1},
        {"soup N_u 9", *soup, 9, 1023, SOUP / 3},
        {"repeat", *repeat, 256, 1023, 1},
        {"repeat 5 triangles", *repeat, 3, 15, 0},
        {"odd", *odd, 256, 1023, 1},
        {"odd N_u 3", *odd, 3, 1023, 0},
        {"odd 1 triangle", *odd, 1024, 3, 7},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        const uint32_t b = vr_gpatch_check(&cases[i].m, cases[i].nu, cases[i].max_indices,
                                           cases[i].name);
        VR_EXPECT(b != ~0u && (cases[i].batches == 0 || b == cases[i].batches),
                  "%s: %u batches, want %u", cases[i].name, b, cases[i].batches);
    }
    /* seeded soups of random triangles over few vertices (tests/test_plan.c's generator) */
    uint64_t x = 88172645463325252ull;
    static const uint32_t soup_limits[][2] = {{3, 3}, {4, 12}, {16, 60}, {256, 1023}};
    for (uint32_t n = 0; n < 8; ++n) {
        uint32_t V, T, idx[3 * 279];
        vr_test_soup(idx, &V, &T, n, &x);
        const vr_mesh m = vr_gpatch_mesh(idx, 3 * T, V);
        for (size_t l = 0; l < sizeof soup_limits / sizeof soup_limits[0]; ++l)
            vr_gpatch_check(&m, soup_limits[l][0], soup_limits[l][1], "soup");
    }
    return VR_TEST_RESULT();
}

static double vr_gpatch_reuse(const vr_mesh *m, int builder, uint32_t nu, uint32_t mi)
{
    vr_sim_config cfg = vr_sim_config_default();
    cfg.dyn_max_unique = nu;
    cfg.dyn_max_indices = mi;
    cfg.patch_builder = builder;
    vr_sim_result r;
    vr_status st = vr_sim_strategy(&r, "patch", m->indices, m->index_count, m->positions,
                                   m->vertex_count, &cfg, NULL);
    VR_EXPECT(st == VR_OK, "simulator: %s", vr_last_error());
    return st == VR_OK ? r.reuse : -1;
}

VR_TEST(test_gpatch_grids, "reuse/gpupatch-grids")
{
    static const uint32_t limits[][2] = {{256, 1023}, {37, 1023}, {64, 372}, {1024, 3069},
                                         {8, 30}, {256, 300}};
    vr_mesh row, shuffled;
    VR_EXPECT_EQ(vr_test_grid_mesh(&row, 150, 97, 5, 0, 3), VR_OK);
    VR_EXPECT_EQ(vr_test_grid_mesh(&shuffled, 150, 97, 5, 1, 3), VR_OK);
    for (size_t l = 0; l < sizeof limits / sizeof limits[0]; ++l) {
        const uint32_t nu = limits[l][0], mi = limits[l][1];
        vr_gpatch_check(&row, nu, mi, "grid");
        vr_gpatch_check(&shuffled, nu, mi, "shuffled grid");
        const double r0 = vr_gpatch_reuse(&row, 1, nu, mi), r1 = vr_gpatch_reuse(&shuffled, 1, nu, mi);
        VR_EXPECT(r1 > r0 - 0.02 && r1 < r0 + 0.02, "N_u %u/%u: reuse %.3f in row order, %.3f "
                  "shuffled", nu, mi, r0, r1);
        if (nu == 256 && mi == 1023)
            VR_EXPECT(r0 >= 0.78 && r1 >= 0.78, "reuse %.3f / %.3f", r0, r1);
    }
    vr_mesh_free(&row);
    vr_mesh_free(&shuffled);
    return VR_TEST_RESULT();
}

/* Every shared scene and two generators in three orders: valid, deterministic, reuse >= .75
 * (foliage: its ideal 1/3 - .01), printed beside the CPU builder's (cpu / gpu). */
VR_TEST(test_gpatch_scenes, "reuse/gpupatch-scenes")
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
            vr_sim_result ideal;
            VR_EXPECT_EQ(vr_sim_ideal(&ideal, m.indices, m.index_count, m.vertex_count, NULL),
                         VR_OK);
            const double target = ideal.reuse < 0.75 ? ideal.reuse - 0.01 : 0.75;
            vr_gpatch_check(&m, 256, 1023, specs[f]);
            const double rc = vr_gpatch_reuse(&m, 0, 256, 1023), rg = vr_gpatch_reuse(&m, 1, 256, 1023);
            printf(" %s %.3f/%.3f", vr_order_name(orders[o]), rc, rg);
            VR_EXPECT(rg >= target, "%s (%s): gpu-builder reuse %.3f < %.3f", specs[f],
                      vr_order_name(orders[o]), rg, target);
            vr_mesh_free(&m);
        }
        printf("\n");
    }
    return loaded ? VR_TEST_RESULT() : VR_TEST_SKIP;
}
