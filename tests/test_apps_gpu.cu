/* test_apps_gpu.cu - the applications' GPU programs (pipeline/apps/apps_gpu.cu, through the general
 * reuse API's kernels) against the CPU references: Loop subdivision bit for bit against
 * vr_loop_subdivide for every strategy (a sphere, a shuffled grid with boundary, the bunny,
 * non-manifold soups), invocations equal to the CPU twin's; the random walk agent for agent
 * against vr_walk_run (the paper's 300,000 agents and 10 steps, placed at random and sorted by
 * cell); outer and inner envelopes bit for bit against vr_envelope_build for every strategy
 * (near plates with unnamed vertices, the paper's sphere, a torus, spot.obj, the bunny),
 * invocations equal to the renderer's CPU twin's. "gpu-small/apps-*" are small cases for
 * compute-sanitizer. "apps-bench/" (not run by ctest) prints the timing tables of
 * bench/results/apps-h100.md (apps-bench/envelope: Table 4).
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

/* Every strategy on the GPU == the reference; invocations == the CPU twin's. Limits: the
 * defaults with N_u = nu, or for nu = 0 the paper's per strategy (vr_loop_paper_limits). */
static void apps_loop_check(const vr_mesh *m, const char *name, uint32_t nu)
{
    vr_mesh want;
    VR_EXPECT_EQ(vr_loop_subdivide(&want, m, NULL), VR_OK);
    /* warp once more with pooled rounds on one block (Loop does not ask for them: by default
     * each batch's rounds are computed as they come), each warp over many batches */
    for (int run = 0; run <= VR_REUSE_KIND_COUNT; ++run) {
        const int kind = run < VR_REUSE_KIND_COUNT ? run : VR_REUSE_WARP;
        const char *const sname = run < VR_REUSE_KIND_COUNT ? vr_reuse_all[kind].name
                                                            : "warp (VR_PROG_WARP=pooled:1)";
        vr_app_run r = {(vr_reuse_kind)kind, vr_program_limits_default(3), 1, 1};
        r.limits.max_unique = nu;
        if (!nu)
            r.limits = vr_loop_paper_limits((vr_reuse_kind)kind);
        vr_mesh got, twin;
        vr_app_report g, c;
        memset(&g, 0, sizeof g);
        if (run == VR_REUSE_KIND_COUNT)
            setenv("VR_PROG_WARP", "pooled:1", 1);
        VR_EXPECT_EQ(vr_loop_apply(&got, m, &r, 1, &g), VR_OK);
        unsetenv("VR_PROG_WARP");
        VR_EXPECT_EQ(vr_loop_apply(&twin, m, &r, 0, &c), VR_OK);
        VR_EXPECT(apps_mesh_equal(&got, &want), "%s, %s: GPU Loop output differs from "
                  "vr_loop_subdivide", name, sname);
        VR_EXPECT(g.counters.invocations == c.counters.invocations &&
                      g.counters.primitives == c.counters.primitives,
                  "%s, %s: GPU %llu invocations / %llu primitives, twin %llu / %llu", name,
                  sname, g.counters.invocations, g.counters.primitives,
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
    apps_loop_check(&m, "shuffled grid 10x8, the paper's limits", 0);
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
    apps_loop_check(&m, "sphere:20k, the paper's limits", 0);
    vr_mesh_free(&m);
    VR_EXPECT_EQ(vr_test_grid_mesh(&m, 40, 30, 3, 1, 7), VR_OK);
    apps_loop_check(&m, "shuffled grid 40x30", 64);
    vr_mesh_free(&m);
    char buf[512];
    const char *spec = vr_test_plan_spec(buf, sizeof buf, "stanford-bunny.obj");
    if (spec && vr_test_load(&m, spec)) {
        apps_loop_check(&m, "stanford-bunny.obj", 256);
        apps_loop_check(&m, "stanford-bunny.obj, the paper's limits", 0);
        vr_mesh_free(&m);
    }
    apps_loop_soups(8);
    return VR_TEST_RESULT();
}

/* Every non-plan strategy on the GPU == vr_walk_run, from random and from sorted placement, with
 * and without the sort by cell before each step (the default counting sort), one thread per
 * cell; then groups of lanes per cell (vr_walk_config.lanes: 8 from random, 32 - the whole
 * warp's mask - sorted), CUB's radix sort (VR_WALK_RESORT=cub: 8, 2 and 1 lanes), the
 * benchmarks' fastest setting (resorted, 4 lanes) and the counting sort as three kernels rather
 * than the cooperative one (VR_WALK_RESORT=kernels, 2 lanes); with `twin` the invocations and
 * batches equal the API's CPU twin's too. An unknown VR_WALK_RESORT fails the run. */
static void apps_walk_check(uint32_t agents, uint32_t steps, int twin)
{
    enum { MODES = 11 };
    static const uint32_t mode_lanes[MODES] = {1, 1, 1, 1, 8, 32, 8, 2, 1, 4, 2};
    vr_walk_config cfg = vr_walk_config_default();
    cfg.agents = agents, cfg.steps = steps;
    uint32_t *start = (uint32_t *)malloc(agents * sizeof *start);
    uint32_t *want = (uint32_t *)malloc(agents * sizeof *want);
    uint32_t *got = (uint32_t *)malloc(agents * sizeof *got);
    for (int mode = 0; mode < MODES; ++mode) { /* random, sorted; fixed, resorted; lanes */
        const int sorted = mode & 1;
        const char *sorter = mode >= 6 && mode <= 8 ? "cub" : mode == 10 ? "kernels" : NULL;
        cfg.resort = mode >= 6 || ((mode >> 1) & 1);
        cfg.lanes = mode_lanes[mode];
        if (sorter)
            setenv("VR_WALK_RESORT", sorter, 1);
        else
            unsetenv("VR_WALK_RESORT");
        vr_walk_place(start, agents, cfg.seed);
        if (sorted)
            qsort(start, agents, sizeof *start, vr_test_cmp_u32);
        memcpy(want, start, agents * sizeof *want);
        VR_EXPECT_EQ(vr_walk_run(want, &cfg, NULL), VR_OK);
        for (int kind = 0; kind < VR_REUSE_KIND_COUNT; ++kind) {
            if (vr_program_planned((vr_reuse_kind)kind))
                continue;
            vr_app_run r = {(vr_reuse_kind)kind, vr_program_limits_default(1), 1, 1};
            memcpy(got, start, agents * sizeof *got);
            vr_app_report rep;
            VR_EXPECT_EQ(vr_walk_apply(got, &cfg, &r, 1, &rep), VR_OK);
            VR_EXPECT(!memcmp(got, want, agents * sizeof *got), "%u %s agents%s, %u lanes, %s: "
                      "GPU walk differs from vr_walk_run", agents, sorted ? "sorted" : "random",
                      !cfg.resort ? "" : !sorter ? " resorted"
                                       : mode == 10 ? " resorted (three sort kernels)"
                                                    : " resorted (CUB's sort)",
                      cfg.lanes, vr_reuse_all[kind].name);
            VR_EXPECT_EQ(rep.counters.primitives, (unsigned long long)agents * steps);
            if (twin) { /* the API's CPU twin: the same stream and batches, the same counts */
                vr_app_report cpu;
                memcpy(got, start, agents * sizeof *got);
                VR_EXPECT_EQ(vr_walk_apply(got, &cfg, &r, 0, &cpu), VR_OK);
                VR_EXPECT_EQ(cpu.counters.invocations, rep.counters.invocations);
                VR_EXPECT_EQ(cpu.batches, rep.batches);
            }
        }
    }
    /* an unknown sort selection (a typo in an A/B run) fails the run, naming the variable */
    setenv("VR_WALK_RESORT", "radix", 1);
    cfg.resort = 1, cfg.lanes = 1;
    const vr_app_run r = {VR_REUSE_HASH, vr_program_limits_default(1), 1, 1};
    vr_app_report rep;
    memcpy(got, start, agents * sizeof *got);
    VR_EXPECT(vr_walk_apply(got, &cfg, &r, 1, &rep) == VR_ERR_ARG &&
                  strstr(vr_last_error(), "VR_WALK_RESORT=radix") != NULL,
              "VR_WALK_RESORT=radix accepted (%s)", vr_last_error());
    unsetenv("VR_WALK_RESORT");
    free(start), free(want), free(got);
}

VR_TEST(test_apps_walk_gpu_small, "gpu-small/apps-walk")
{
    if (vr_test_no_device())
        return VR_TEST_SKIP;
    apps_walk_check(3000, 2, 1);
    return VR_TEST_RESULT();
}

VR_TEST(test_apps_walk_gpu, "gpu/apps-walk")
{
    if (vr_test_no_device())
        return VR_TEST_SKIP;
    apps_walk_check(300000, 10, 0);
    return VR_TEST_RESULT();
}

/* ---- simplification envelopes --------------------------------------------------------------- */

/* A few hundred vertices per mesh: memcheck, racecheck and synccheck run this; outputs against
 * vr_envelope_build, invocations against the renderer's and the API's CPU twins. */
VR_TEST(test_apps_envelope_gpu_small, "gpu-small/apps-envelope")
{
    if (vr_test_no_device())
        return VR_TEST_SKIP;
    vr_test_envelope_meshes(VR_TEST_ENVELOPE_SMALL, VR_TEST_ENVELOPE_BUNNY, 1, UINT32_MAX);
    /* again with warp's rounds pooled on one block (the envelope does not ask for them: they
     * were slower for it), every batch in its few warps, whose rings wrap */
    setenv("VR_PROG_WARP", "pooled:1", 1);
    vr_test_envelope_meshes(VR_TEST_ENVELOPE_SMALL, VR_TEST_ENVELOPE_BUNNY, 1, UINT32_MAX);
    unsetenv("VR_PROG_WARP");
    return VR_TEST_RESULT();
}

/* The CPU tests' meshes with the paper's sphere (81,920 triangles) and the bunny; the API's CPU
 * twin only where it is cheap (it runs every strategy's shader calls on one core). */
VR_TEST(test_apps_envelope_gpu, "gpu/apps-envelope")
{
    if (vr_test_no_device())
        return VR_TEST_SKIP;
    vr_test_envelope_meshes(VR_TEST_ENVELOPE_GPU, VR_TEST_ENVELOPE_BUNNY, 1, 2000);
    return VR_TEST_RESULT();
}

/* ---- timing tables (apps-bench/, not run by ctest) ------------------------------------------ */

static void apps_bench_loop_rows(const vr_mesh *m, const char *name, int paper)
{
    double naive = 0;
    for (int kind = 0; kind < VR_REUSE_KIND_COUNT; ++kind) {
        vr_app_run r = {(vr_reuse_kind)kind, paper ? vr_loop_paper_limits((vr_reuse_kind)kind)
                                                   : vr_program_limits_default(3), 1, 20};
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

/* Loop's rows: each strategy with the paper's limits (Section 5.1), then with the renderer's
 * (scene@render-limits). */
static void apps_bench_loop(const vr_mesh *m, const char *scene)
{
    for (int paper = 1; paper >= 0; --paper) {
        char name[128];
        snprintf(name, sizeof name, "%s%s", scene, paper ? "" : "@render-limits");
        apps_bench_loop_rows(m, name, paper);
    }
}

/* The CSV header of the apps-bench/ rows (bench/results/apps-h100.csv). */
static void apps_bench_header(void)
{
    printf("app,scene,triangles,strategy,ms,speedup_vs_naive,invocations,invocations_per_vertex,"
           "prep_ms\n");
}

/* Outer envelopes (epsilon 2% of the diagonal, as the paper), every strategy, validated against
 * vr_envelope_build first (a FAIL row instead of numbers when they differ). */
static void apps_bench_envelope(const vr_mesh *m, const char *name, uint32_t nu, uint32_t reps)
{
    const vr_envelope_config cfg = vr_envelope_config_default();
    vr_mesh want;
    if (vr_envelope_build(&want, NULL, m, &cfg, NULL) != VR_OK) {
        printf("envelope,%s,FAIL reference: %s\n", name, vr_last_error());
        return;
    }
    double naive = 0;
    for (int kind = 0; kind < VR_REUSE_KIND_COUNT; ++kind) {
        const char *sn = vr_reuse_all[kind].name;
        vr_app_run r = {(vr_reuse_kind)kind, vr_test_envelope_limits((vr_reuse_kind)kind, nu), 1,
                        reps};
        vr_mesh got;
        vr_app_report rep;
        memset(&rep, 0, sizeof rep);
        if (vr_envelope_apply(&got, m, &cfg, &r, 1, &rep, NULL) != VR_OK) {
            printf("envelope,%s,%s,FAIL %s\n", name, sn, vr_last_error());
            continue;
        }
        const int same = vr_test_envelope_equal(&got, &want);
        vr_mesh_free(&got);
        if (!same) {
            printf("envelope,%s,%s,FAIL output differs from vr_envelope_build\n", name, sn);
            continue;
        }
        if (kind == VR_REUSE_NAIVE)
            naive = rep.ms;
        printf("envelope,%s,%u,%s,%.4f,%.2f,%llu,%.3f,%.1f\n", name, m->index_count / 3, sn,
               rep.ms, naive / rep.ms, rep.counters.invocations,
               (double)rep.counters.invocations / m->vertex_count, rep.prep_ms);
        fflush(stdout);
    }
    vr_mesh_free(&want);
}

/* Table 4: bunny (file and forsyth order), the paper's sphere, sphere:1.3M for the 1M+ mesh, with
 * the paper's limits; the sphere also with the defaults (the Loop table's limits). The best of 5
 * runs, 2 on the large sphere, after one counted run. */
VR_TEST(test_apps_bench_envelope, "apps-bench/envelope")
{
    if (vr_test_no_device())
        return VR_TEST_SKIP;
    printf("# envelope: outer, epsilon 2%% of the bounding-box diagonal; the limits of the paper's "
           "Table 4 (naive block 32; warp batch 96, block 64; hash N_u 128, 576 indices; phash, "
           "sort, multi, patch, meshlet N_u 128, 768 indices; block 128), @default-limits: block "
           "256, N_u 256, 1023 indices, warp batch 96\n");
    apps_bench_header();
    static const struct {
        const char *spec, *name;
        int forsyth;
        uint32_t nu, reps; /* nu 0: Table 4's limits */
    } cases[] = {{"stanford-bunny.obj", "stanford-bunny", 0, 0, 5},
                 {"stanford-bunny.obj", "stanford-bunny@forsyth", 1, 0, 5},
                 {"sphere", "sphere", 0, 0, 5},
                 {"sphere", "sphere@default-limits", 0, 256, 5},
                 {"sphere:1.3M", "sphere:1.3M", 0, 0, 2}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        char buf[512];
        vr_mesh m;
        const char *spec = vr_test_plan_spec(buf, sizeof buf, cases[i].spec);
        if (!spec || !(cases[i].forsyth ? vr_test_load_forsyth(&m, cases[i].spec)
                                        : vr_test_load(&m, spec)))
            continue;
        apps_bench_envelope(&m, cases[i].name, cases[i].nu, cases[i].reps);
        vr_mesh_free(&m);
    }
    return VR_TEST_RESULT();
}

/* The walk's rows (a header of their own): every non-plan strategy, random and sorted start,
 * each with the agents in fixed order (the paper's) and sorted by cell before every step, one
 * thread per cell; then the resorted random start with 4, 8 and 16 lanes per cell, and both
 * fixed orders with 4 (column lanes; speedup_vs_naive against naive in the same mode). */
static void apps_bench_walk(void)
{
    static const struct {
        int sorted, resort;
        uint32_t lanes;
    } modes[] = {{0, 0, 1}, {1, 0, 1}, {0, 1, 1}, {1, 1, 1}, {0, 1, 4},
                 {0, 1, 8}, {0, 1, 16}, {0, 0, 4}, {1, 0, 4}};
    printf("app,placement,agents,strategy,ms_per_step,speedup_vs_naive,invocations,"
           "invocations_per_step,prep_ms,sort_ms_per_step,lanes\n");
    vr_walk_config cfg = vr_walk_config_default();
    uint32_t *start = (uint32_t *)malloc(cfg.agents * sizeof *start);
    uint32_t *cells = (uint32_t *)malloc(cfg.agents * sizeof *cells);
    uint32_t *want[2]; /* vr_walk_run's cells from the random and the sorted start */
    for (int sorted = 0; sorted < 2; ++sorted) {
        want[sorted] = (uint32_t *)malloc(cfg.agents * sizeof *want[sorted]);
        vr_walk_place(want[sorted], cfg.agents, cfg.seed);
        if (sorted)
            qsort(want[sorted], cfg.agents, sizeof *want[sorted], vr_test_cmp_u32);
        VR_EXPECT_EQ(vr_walk_run(want[sorted], &cfg, NULL), VR_OK);
    }
    for (size_t mode = 0; mode < sizeof modes / sizeof modes[0]; ++mode) {
        const int sorted = modes[mode].sorted;
        cfg.resort = modes[mode].resort;
        cfg.lanes = modes[mode].lanes;
        vr_walk_place(start, cfg.agents, cfg.seed);
        if (sorted)
            qsort(start, cfg.agents, sizeof *start, vr_test_cmp_u32);
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
            /* a timed row is a right row */
            if (memcmp(cells, want[sorted], cfg.agents * sizeof *cells)) {
                printf("walk,%s,FAIL cells differ from vr_walk_run (%u lanes%s)\n",
                       vr_reuse_all[kind].name, cfg.lanes, cfg.resort ? ", resorted" : "");
                VR_EXPECT(0, "walk bench: %s differs from vr_walk_run", vr_reuse_all[kind].name);
                continue;
            }
            if (kind == VR_REUSE_NAIVE)
                naive = rep.ms;
            printf("walk,%s%s,%u,%s,%.4f,%.2f,%llu,%.3f,%.1f,%.4f,%u\n",
                   sorted ? "sorted" : "random", cfg.resort ? "+resort" : "", cfg.agents,
                   vr_reuse_all[kind].name, rep.ms, naive / rep.ms, rep.counters.invocations,
                   (double)rep.counters.invocations / cfg.steps, rep.prep_ms, rep.order_ms,
                   cfg.lanes);
        }
    }
    free(start), free(cells), free(want[0]), free(want[1]);
}

VR_TEST(test_apps_bench, "apps-bench/all")
{
    if (vr_test_no_device())
        return VR_TEST_SKIP;
    apps_bench_header();
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
    apps_bench_walk();
    return VR_TEST_RESULT();
}

VR_TEST(test_apps_bench_walk, "apps-bench/walk")
{
    if (vr_test_no_device())
        return VR_TEST_SKIP;
    apps_bench_walk();
    return VR_TEST_RESULT();
}
