/* test_apps_gpu.cu - the applications' GPU programs (pipeline/apps/apps_gpu.cu, through the general
 * reuse API's kernels) against the CPU references: Loop subdivision bit for bit against
 * vr_loop_subdivide for every strategy (a sphere, a shuffled grid with boundary, the bunny,
 * non-manifold soups), invocations equal to the CPU twin's; the random walk agent for agent
 * against vr_walk_run (the paper's 300,000 agents and 10 steps, placed at random and sorted by
 * cell). "gpu-small/apps-*" are small cases for compute-sanitizer. "apps-bench/" (not run by
 * ctest) prints the timing tables of bench/results/apps-h100.md.
 * Without a CUDA device every test prints "SKIP: no CUDA device" and skips.
 */
#include "tests/test.h"

#include <stdlib.h>
#include <string.h>

#include "pipeline/apps/apps.h"
#include "scenes/scene.h"
#include "tests/test_helpers.h"

static int apps_mesh_equal(const vr_mesh *a, const vr_mesh *b)
{
    return a->vertex_count == b->vertex_count && a->index_count == b->index_count &&
           !memcmp(a->positions, b->positions, 3 * (size_t)a->vertex_count * sizeof(float)) &&
           !memcmp(a->indices, b->indices, (size_t)a->index_count * sizeof(uint32_t));
}

/* Every strategy on the GPU == the reference; invocations == the CPU twin's. */
static void apps_loop_check(const vr_mesh *m, const char *name, uint32_t nu)
{
    vr_mesh want;
    VR_EXPECT_EQ(vr_loop_subdivide(&want, m, NULL), VR_OK);
    for (int kind = 0; kind < VR_REUSE_KIND_COUNT; ++kind) {
        vr_app_run r = {(vr_reuse_kind)kind, vr_program_limits_default(3), 1, 1};
        r.limits.max_unique = nu;
        vr_mesh got, twin;
        vr_app_report g, c;
        memset(&g, 0, sizeof g);
        VR_EXPECT_EQ(vr_loop_apply(&got, m, &r, 1, &g), VR_OK);
        VR_EXPECT_EQ(vr_loop_apply(&twin, m, &r, 0, &c), VR_OK);
        VR_EXPECT(apps_mesh_equal(&got, &want), "%s, %s: GPU Loop output differs from "
                  "vr_loop_subdivide", name, vr_reuse_all[kind].name);
        VR_EXPECT(g.counters.invocations == c.counters.invocations &&
                      g.counters.primitives == c.counters.primitives,
                  "%s, %s: GPU %llu invocations / %llu primitives, twin %llu / %llu", name,
                  vr_reuse_all[kind].name, g.counters.invocations, g.counters.primitives,
                  c.counters.invocations, c.counters.primitives);
        vr_mesh_free(&got);
        vr_mesh_free(&twin);
    }
    vr_mesh_free(&want);
}

static void apps_loop_soups(uint32_t count)
{
    uint64_t x = 88172645463325252ull;
    for (uint32_t k = 0; k < count; ++k) {
        uint32_t idx[3 * 279], vertices, tris;
        vr_test_soup(idx, &vertices, &tris, k, &x);
        float *pos = (float *)malloc(3 * (size_t)vertices * sizeof *pos);
        for (uint32_t v = 0; v < 3 * vertices; ++v)
            pos[v] = (float)((v * 2654435761u) % 1000) / 7.0f;
        vr_mesh m;
        memset(&m, 0, sizeof m);
        m.vertex_count = vertices, m.index_count = 3 * tris, m.indices = idx;
        m.positions = pos, m.normals = pos;
        char name[32];
        snprintf(name, sizeof name, "soup %u", k);
        apps_loop_check(&m, name, 16);
        free(pos);
    }
}

VR_TEST(test_apps_loop_gpu_small, "gpu-small/apps-loop")
{
    if (vr_test_no_device())
        return VR_TEST_SKIP;
    vr_mesh m;
    VR_EXPECT_EQ(vr_test_grid_mesh(&m, 10, 8, 2, 1, 3), VR_OK);
    apps_loop_check(&m, "shuffled grid 10x8", 256);
    vr_mesh_free(&m);
    apps_loop_soups(2);
    return VR_TEST_RESULT();
}

VR_TEST(test_apps_loop_gpu, "gpu/apps-loop")
{
    if (vr_test_no_device())
        return VR_TEST_SKIP;
    vr_mesh m;
    VR_EXPECT_EQ(vr_generate_sphere(&m, 20000), VR_OK);
    apps_loop_check(&m, "sphere:20k", 256);
    vr_mesh_free(&m);
    VR_EXPECT_EQ(vr_test_grid_mesh(&m, 40, 30, 3, 1, 7), VR_OK);
    apps_loop_check(&m, "shuffled grid 40x30", 64);
    vr_mesh_free(&m);
    char buf[512];
    const char *spec = vr_test_plan_spec(buf, sizeof buf, "stanford-bunny.obj");
    if (spec && vr_test_load(&m, spec)) {
        apps_loop_check(&m, "stanford-bunny.obj", 256);
        vr_mesh_free(&m);
    }
    apps_loop_soups(8);
    return VR_TEST_RESULT();
}

static int apps_cmp_u32(const void *a, const void *b)
{
    const uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* Every non-plan strategy on the GPU == vr_walk_run, from random and from sorted placement. */
static void apps_walk_check(uint32_t agents, uint32_t steps)
{
    vr_walk_config cfg = vr_walk_config_default();
    cfg.agents = agents, cfg.steps = steps;
    uint32_t *start = (uint32_t *)malloc(agents * sizeof *start);
    uint32_t *want = (uint32_t *)malloc(agents * sizeof *want);
    uint32_t *got = (uint32_t *)malloc(agents * sizeof *got);
    for (int sorted = 0; sorted < 2; ++sorted) {
        vr_walk_place(start, agents, cfg.seed);
        if (sorted)
            qsort(start, agents, sizeof *start, apps_cmp_u32);
        memcpy(want, start, agents * sizeof *want);
        VR_EXPECT_EQ(vr_walk_run(want, &cfg, NULL), VR_OK);
        for (int kind = 0; kind < VR_REUSE_KIND_COUNT; ++kind) {
            if (vr_program_planned((vr_reuse_kind)kind))
                continue;
            vr_app_run r = {(vr_reuse_kind)kind, vr_program_limits_default(1), 1, 1};
            memcpy(got, start, agents * sizeof *got);
            vr_app_report rep;
            VR_EXPECT_EQ(vr_walk_apply(got, &cfg, &r, 1, &rep), VR_OK);
            VR_EXPECT(!memcmp(got, want, agents * sizeof *got), "%u %s agents, %s: GPU walk "
                      "differs from vr_walk_run", agents, sorted ? "sorted" : "random",
                      vr_reuse_all[kind].name);
            VR_EXPECT_EQ(rep.counters.primitives, (unsigned long long)agents * steps);
        }
    }
    free(start), free(want), free(got);
}

VR_TEST(test_apps_walk_gpu_small, "gpu-small/apps-walk")
{
    if (vr_test_no_device())
        return VR_TEST_SKIP;
    apps_walk_check(3000, 2);
    return VR_TEST_RESULT();
}

VR_TEST(test_apps_walk_gpu, "gpu/apps-walk")
{
    if (vr_test_no_device())
        return VR_TEST_SKIP;
    apps_walk_check(300000, 10);
    return VR_TEST_RESULT();
}

/* ---- timing tables (apps-bench/, not run by ctest) ------------------------------------------ */

static void apps_bench_loop(const vr_mesh *m, const char *name)
{
    double naive = 0;
    for (int kind = 0; kind < VR_REUSE_KIND_COUNT; ++kind) {
        vr_app_run r = {(vr_reuse_kind)kind, vr_program_limits_default(3), 1, 20};
        vr_mesh got;
        vr_app_report rep;
        memset(&rep, 0, sizeof rep);
        const vr_status st = vr_loop_apply(&got, m, &r, 1, &rep);
        if (st != VR_OK) {
            printf("loop,%s,%s,FAIL %s\n", name, vr_reuse_all[kind].name, vr_last_error());
            continue;
        }
        if (kind == VR_REUSE_NAIVE)
            naive = rep.ms;
        printf("loop,%s,%u,%s,%.4f,%.2f,%llu,%.3f,%.1f\n", name, m->index_count / 3,
               vr_reuse_all[kind].name, rep.ms, naive / rep.ms, rep.counters.invocations,
               (double)rep.counters.invocations / m->vertex_count, rep.prep_ms);
        vr_mesh_free(&got);
    }
}

VR_TEST(test_apps_bench, "apps-bench/all")
{
    if (vr_test_no_device())
        return VR_TEST_SKIP;
    printf("app,scene,triangles,strategy,ms,speedup_vs_naive,invocations,invocations_per_vertex,"
           "prep_ms\n");
    char buf[512];
    vr_mesh m;
    const char *spec = vr_test_plan_spec(buf, sizeof buf, "stanford-bunny.obj");
    if (spec && vr_test_load(&m, spec)) {
        apps_bench_loop(&m, "stanford-bunny");
        vr_mesh_free(&m);
    }
    static const char *const gens[] = {"sphere", "sphere:1.3M", "sphere:7M"};
    for (size_t g = 0; g < sizeof gens / sizeof gens[0]; ++g)
        if (vr_test_load(&m, gens[g])) {
            apps_bench_loop(&m, gens[g]);
            vr_mesh_free(&m);
        }
    vr_walk_config cfg = vr_walk_config_default();
    uint32_t *start = (uint32_t *)malloc(cfg.agents * sizeof *start);
    uint32_t *cells = (uint32_t *)malloc(cfg.agents * sizeof *cells);
    for (int sorted = 0; sorted < 2; ++sorted) {
        vr_walk_place(start, cfg.agents, cfg.seed);
        if (sorted)
            qsort(start, cfg.agents, sizeof *start, apps_cmp_u32);
        double naive = 0;
        for (int kind = 0; kind < VR_REUSE_KIND_COUNT; ++kind) {
            if (vr_program_planned((vr_reuse_kind)kind))
                continue;
            vr_app_run r = {(vr_reuse_kind)kind, vr_program_limits_default(1), 1, 5};
            memcpy(cells, start, cfg.agents * sizeof *cells);
            vr_app_report rep;
            memset(&rep, 0, sizeof rep);
            if (vr_walk_apply(cells, &cfg, &r, 1, &rep) != VR_OK) {
                printf("walk,%s,FAIL %s\n", vr_reuse_all[kind].name, vr_last_error());
                continue;
            }
            if (kind == VR_REUSE_NAIVE)
                naive = rep.ms;
            printf("walk,%s,%u,%s,%.4f,%.2f,%llu,%.3f,%.1f\n", sorted ? "sorted" : "random",
                   cfg.agents, vr_reuse_all[kind].name, rep.ms, naive / rep.ms,
                   rep.counters.invocations, (double)rep.counters.invocations / cfg.steps,
                   rep.prep_ms);
        }
    }
    free(start), free(cells);
    return VR_TEST_RESULT();
}
