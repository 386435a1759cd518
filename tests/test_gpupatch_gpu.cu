/* test_gpupatch_gpu.cu - the GPU patch builder (reuse/patch_build.cu) against its CPU reference
 * (reuse/patch_build_ref.c): the same plan bit for bit (batch count, starts, tri_order, group
 * and split counts) on every shared scene in file and random order at three limits, seeded
 * soups and grids; then the patch strategy run by the geometry stage on the GPU-built plan
 * against its twin on the reference's plan (queue slot by slot, invocations, shade counts).
 * Groups: "gpu/gpupatch*" and "gpu-small/gpupatch" (a grid and soups, for compute-sanitizer).
 * Without a CUDA device every test prints "SKIP: no CUDA device" and skips.
 */
#include "tests/test.h"

#include <stdlib.h>
#include <string.h>

#include "pipeline/stage/geometry.h"
#include "raster/raster.h"
#include "reuse/patches.h"
#include "scenes/scene.h"
#include "tests/test_helpers.h"

/* GPU plan == reference plan for mesh m and the limits; prints one line when `what` is set. */
static void vr_gpatch_gpu_check(const vr_mesh *m, uint32_t nu, uint32_t mi, const char *what)
{
    vr_batch_plan g, r;
    float ms = 0;
    vr_status sg = vr_patches_build_gpu(&g, m->indices, m->index_count, m->vertex_count, nu, mi,
                                        &ms);
    VR_EXPECT(sg == VR_OK, "%s (N_u %u, %u indices): GPU builder: %s", what, nu, mi,
              vr_last_error());
    vr_status sr = vr_patches_build_gpu_ref(&r, m->indices, m->index_count, m->vertex_count, nu,
                                            mi);
    VR_EXPECT(sr == VR_OK, "%s: reference: %s", what, vr_last_error());
    if (sg == VR_OK && sr == VR_OK) {
        VR_EXPECT_EQ(vr_batch_plan_validate(&g, m->indices, m->index_count, m->vertex_count, nu,
                                            mi), VR_OK);
        VR_EXPECT(g.batch_count == r.batch_count && g.group_count == r.group_count &&
                      g.split == r.split && g.iterations == r.iterations &&
                      g.triangle_count == r.triangle_count,
                  "%s (N_u %u, %u indices): GPU %u batches / %u patches / %u split, reference "
                  "%u / %u / %u", what, nu, mi, g.batch_count, g.group_count, g.split,
                  r.batch_count, r.group_count, r.split);
        if (g.batch_count == r.batch_count && g.triangle_count == r.triangle_count) {
            uint32_t bad = 0;
            for (uint32_t b = 0; b <= r.batch_count; ++b)
                if (g.starts[b] != r.starts[b] && bad++ < 5)
                    VR_EXPECT(0, "%s: starts[%u] GPU %u, reference %u", what, b, g.starts[b],
                              r.starts[b]);
            for (uint32_t i = 0; i < r.triangle_count; ++i)
                if (g.tri_order[i] != r.tri_order[i] && bad++ < 5)
                    VR_EXPECT(0, "%s: tri_order[%u] GPU %u, reference %u", what, i,
                              g.tri_order[i], r.tri_order[i]);
            VR_EXPECT(bad == 0, "%s (N_u %u, %u indices): %u entries differ", what, nu, mi, bad);
        }
        if (what)
            printf("  %-22s N_u %4u / %4u: %6u batches, %6u patches, %4u split, GPU %.2f ms\n",
                   what, nu, mi, g.batch_count, g.group_count, g.split, ms);
    }
    vr_batch_plan_free(&g);
    vr_batch_plan_free(&r);
}

/* Seeded soups (tests/test_plan.c's generator) and the hand-made meshes of
 * tests/test_gpupatch.c (vr_test_made_meshes; one triangle 64 times has more adjacency entries
 * than corners, so the GPU builder's sort arrays grow). */
static void vr_gpatch_gpu_soups(void)
{
    uint64_t x = 88172645463325252ull;
    static const uint32_t limits[][2] = {{3, 3}, {4, 12}, {16, 60}, {256, 1023}};
    vr_test_made made;
    vr_test_made_meshes(&made);
    for (size_t i = 0; i < VR_TEST_MADE_COUNT; ++i)
        for (size_t l = 0; l < sizeof limits / sizeof limits[0]; ++l)
            vr_gpatch_gpu_check(&made.mesh[i], limits[l][0], limits[l][1], NULL);
    for (uint32_t n = 0; n < 8; ++n) {
        uint32_t V, T, idx[3 * 279];
        vr_test_soup(idx, &V, &T, n, &x);
        const vr_mesh m = {V, NULL, NULL, NULL, 3 * T, idx};
        for (size_t l = 0; l < sizeof limits / sizeof limits[0]; ++l)
            vr_gpatch_gpu_check(&m, limits[l][0], limits[l][1], NULL);
    }
}

VR_TEST(test_gpatch_gpu_small, "gpu-small/gpupatch")
{
    if (vr_test_no_device())
        return VR_TEST_SKIP;
    vr_mesh m;
    VR_EXPECT_EQ(vr_test_grid_mesh(&m, 30, 20, 3, 1, 5), VR_OK);
    vr_gpatch_gpu_check(&m, 256, 1023, "shuffled grid 30x20");
    vr_gpatch_gpu_check(&m, 8, 30, "shuffled grid 30x20");
    vr_mesh_free(&m);
    vr_gpatch_gpu_soups();
    return VR_TEST_RESULT();
}

VR_TEST(test_gpatch_gpu_scenes, "gpu/gpupatch")
{
    if (vr_test_no_device())
        return VR_TEST_SKIP;
    vr_gpatch_gpu_soups();
    static const uint32_t limits[][2] = {{256, 1023}, {64, 372}, {1024, 3069}};
    vr_mesh grid;
    VR_EXPECT_EQ(vr_test_grid_mesh(&grid, 150, 97, 5, 1, 3), VR_OK);
    for (size_t l = 0; l < sizeof limits / sizeof limits[0]; ++l)
        vr_gpatch_gpu_check(&grid, limits[l][0], limits[l][1], "shuffled grid");
    vr_mesh_free(&grid);
    const char *const *specs = vr_test_plan_scenes;
    static const vr_order orders[] = {VR_ORDER_FILE, VR_ORDER_RANDOM};
    for (size_t f = 0; f < VR_TEST_PLAN_SCENE_COUNT; ++f) {
        char path[512], label[64];
        const char *spec = vr_test_plan_spec(path, sizeof path, specs[f]);
        if (!spec)
            continue;
        for (size_t o = 0; o < sizeof orders / sizeof orders[0]; ++o) {
            vr_mesh m;
            if (!vr_test_load(&m, spec))
                break;
            VR_EXPECT_EQ(vr_mesh_reorder(&m, orders[o], 1), VR_OK);
            snprintf(label, sizeof label, "%s %s", specs[f], vr_order_name(orders[o]));
            for (size_t l = 0; l < sizeof limits / sizeof limits[0]; ++l)
                vr_gpatch_gpu_check(&m, limits[l][0], limits[l][1], label);
            vr_mesh_free(&m);
        }
    }
    return VR_TEST_RESULT();
}

/* The patch strategy on the GPU-built plan (geometry stage, patch_builder gpu) against its
 * twin on the reference's plan: the same queue, invocations and shade counts. */
VR_TEST(test_gpatch_gpu_stage, "gpu/gpupatch-stage", "gpu-small/gpupatch-stage")
{
    if (vr_test_no_device())
        return VR_TEST_SKIP;
    static const char *const specs[] = {"fandisk.obj", "sphere"};
    const vr_reuse_ops *ops = vr_reuse_find("patch");
    for (size_t f = 0; f < sizeof specs / sizeof specs[0]; ++f) {
        char path[512];
        const char *spec = vr_test_plan_spec(path, sizeof path, specs[f]);
        vr_mesh m;
        if (!spec)
            continue;
        if (!vr_test_load(&m, spec))
            continue;
        VR_EXPECT_EQ(vr_mesh_reorder(&m, VR_ORDER_RANDOM, 1), VR_OK);
        vr_reuse_params cfg = vr_reuse_params_default();
        vr_camera_orbit_shader(&cfg.shader, &m, 0.4f);
        cfg.count = 1;
        cfg.patch_builder = VR_PATCH_BUILDER_GPU;
        vr_geometry *g = NULL;
        vr_geometry_result got, want;
        memset(&got, 0, sizeof got);
        memset(&want, 0, sizeof want);
        const uint32_t tris = m.index_count / 3;
        VR_EXPECT_EQ(vr_geometry_create(&g, &m), VR_OK);
        VR_EXPECT_EQ(vr_geometry_result_alloc(&got, tris, m.vertex_count), VR_OK);
        VR_EXPECT_EQ(vr_geometry_result_alloc(&want, tris, m.vertex_count), VR_OK);
        if (g) {
            VR_EXPECT_EQ(vr_geometry_ref(&want, ops, &m, &cfg), VR_OK);
            VR_EXPECT_EQ(vr_geometry_run(g, ops, &cfg, 1, NULL), VR_OK);
            VR_EXPECT_EQ(vr_geometry_download(g, &got), VR_OK);
            vr_geometry_diff d;
            const uint64_t bad = vr_geometry_compare(&d, &got, &want, VR_COMPARE_ALL, 1, stdout,
                                                     specs[f]);
            VR_EXPECT(bad == 0, "%s: %llu mismatches of the patch strategy on the GPU plan",
                      specs[f], (unsigned long long)bad);
            printf("  %-12s random: patch on the GPU-built plan, %llu invocations, = twin\n",
                   specs[f], (unsigned long long)want.counters.invocations);
        }
        vr_geometry_destroy(g);
        vr_geometry_result_free(&got);
        vr_geometry_result_free(&want);
        vr_mesh_free(&m);
    }
    return VR_TEST_RESULT();
}
