/* test_limits.c - occupancy-aware batch limits (reuse/limits_auto.c, issue 12): the function's
 * contract (every output within pipeline/limits.h and valid for its strategy, the paper's sizes
 * for big meshes, the floors, monotone in the mesh size and the SM count, deterministic, bad
 * shapes refused), then sim == CPU twin with auto limits on small scenes, every strategy: the
 * same limits give the same batches on both. The GPU side is gpu/limits-auto (test_gpu.cu).
 * Try: `vreuse_tests reuse/limits`.
 */
#include "tests/test.h"

#include <stdlib.h>
#include <string.h>

#include "pipeline/limits.h"
#include "pipeline/stage/geometry.h"
#include "reuse/reuse.h"
#include "scenes/scene.h"
#include "sim/sim.h"
#include "tests/oracle.h"
#include "tests/test_helpers.h"

/* Meshes from 0 to beyond the largest index buffer, closed-mesh ratio (V = T / 2). */
static const uint32_t k_tris[] = {0,      1,      100,     1000,    5804,     30000,
                                  70000,  100000, 268686,  500000,  720000,   1000000,
                                  7000000, 64000000, 1431655765u};
#define K_TRIS (sizeof k_tris / sizeof k_tris[0])

static int same_limits(const vr_batch_limits *a, const vr_batch_limits *b)
{
    return a->block_size == b->block_size && a->max_unique == b->max_unique &&
           a->max_indices == b->max_indices && a->batch_indices == b->batch_indices;
}

/* Every field within pipeline/limits.h and what the strategy itself demands. */
static void expect_valid(const vr_batch_limits *l, vr_reuse_kind kind, const char *what)
{
    VR_EXPECT(l->block_size >= VR_BLOCK_MIN && l->block_size <= VR_BLOCK_MAX &&
                  l->block_size % 32 == 0,
              "%s: block %u", what, l->block_size);
    VR_EXPECT(l->max_unique >= VR_NU_MIN && l->max_unique <= VR_NU_MAX, "%s: N_u %u", what,
              l->max_unique);
    VR_EXPECT(l->max_indices >= VR_MAX_INDICES_MIN && l->max_indices <= VR_MAX_INDICES_MAX &&
                  l->max_indices % 3 == 0,
              "%s: max indices %u", what, l->max_indices);
    VR_EXPECT(l->batch_indices >= VR_WARP_BATCH_MIN && l->batch_indices <= VR_WARP_BATCH_MAX &&
                  l->batch_indices % 3 == 0,
              "%s: warp batch %u", what, l->batch_indices);
    if (kind == VR_REUSE_SORT) { /* at most 32 keys per thread, power-of-two blocks (sort.cu) */
        VR_EXPECT(l->max_indices <= 32 * l->block_size, "%s: sort with %u indices, block %u",
                  what, l->max_indices, l->block_size);
        VR_EXPECT((l->block_size & (l->block_size - 1)) == 0, "%s: sort with block %u", what,
                  l->block_size);
    }
    if (kind == VR_REUSE_HASH || kind == VR_REUSE_PHASH || kind == VR_REUSE_SORT ||
        kind == VR_REUSE_PATCH || kind == VR_REUSE_MESHLET)
        VR_EXPECT(l->max_unique <= l->block_size, "%s: N_u %u > block %u: idle shading rounds",
                  what, l->max_unique, l->block_size);
}

VR_TEST(test_limits_contract, "reuse/limits-contract")
{
    const vr_batch_limits paper = vr_batch_limits_paper();
    VR_EXPECT(paper.block_size == 256 && paper.max_unique == 256 && paper.max_indices == 1023 &&
                  paper.batch_indices == 96,
              "paper limits %u/%u/%u/%u", paper.block_size, paper.max_unique, paper.max_indices,
              paper.batch_indices);
    /* vr_reuse_params_default carries the paper's limits */
    const vr_reuse_params d = vr_reuse_params_default();
    const vr_batch_limits dl = vr_batch_limits_of(&d);
    VR_EXPECT(same_limits(&dl, &paper), "vr_reuse_params_default is not the paper's");
    static const uint32_t sms[] = {1, 28, 80, 132, 144, 4096};
    for (int k = 0; k < VR_REUSE_KIND_COUNT; ++k)
        for (size_t g = 0; g < sizeof sms / sizeof sms[0]; ++g) {
            const vr_gpu_shape gpu = vr_gpu_shape_default(sms[g]);
            vr_batch_limits prev = {0, 0, 0, 0};
            for (size_t t = 0; t < K_TRIS; ++t) {
                char what[128];
                snprintf(what, sizeof what, "%s, %u SMs, %u triangles", vr_reuse_all[k].name,
                         sms[g], k_tris[t]);
                vr_batch_limits l, again;
                VR_EXPECT_EQ(vr_batch_limits_auto(&l, (vr_reuse_kind)k, k_tris[t],
                                                  k_tris[t] / 2, &gpu),
                             VR_OK);
                VR_EXPECT_EQ(vr_batch_limits_auto(&again, (vr_reuse_kind)k, k_tris[t],
                                                  k_tris[t] / 2, &gpu),
                             VR_OK);
                VR_EXPECT(same_limits(&l, &again), "%s: not deterministic", what);
                expect_valid(&l, (vr_reuse_kind)k, what);
                /* never above the paper's, never below the floors, warp keeps 96 */
                VR_EXPECT(l.block_size <= paper.block_size && l.max_unique <= paper.max_unique &&
                              l.max_indices <= paper.max_indices && l.batch_indices == 96,
                          "%s: %u/%u/%u/%u beyond the paper's", what, l.block_size,
                          l.max_unique, l.max_indices, l.batch_indices);
                VR_EXPECT(l.block_size >= VR_AUTO_BLOCK_MIN &&
                              l.max_unique >= (vr_reuse_all[k].dynamic || vr_reuse_all[k].plan
                                                   ? VR_AUTO_NU_MIN
                                                   : paper.max_unique),
                          "%s: below the floor: block %u, N_u %u", what, l.block_size,
                          l.max_unique);
                /* monotone: a bigger mesh never gets smaller limits */
                VR_EXPECT(l.block_size >= prev.block_size && l.max_unique >= prev.max_unique &&
                              l.max_indices >= prev.max_indices,
                          "%s: %u/%u/%u smaller than the smaller mesh's %u/%u/%u", what,
                          l.block_size, l.max_unique, l.max_indices, prev.block_size,
                          prev.max_unique, prev.max_indices);
                prev = l;
                /* fewer SMs never get smaller limits */
                if (g > 0) {
                    const vr_gpu_shape fewer = vr_gpu_shape_default(sms[g - 1]);
                    vr_batch_limits lf;
                    VR_EXPECT_EQ(vr_batch_limits_auto(&lf, (vr_reuse_kind)k, k_tris[t],
                                                      k_tris[t] / 2, &fewer),
                                 VR_OK);
                    VR_EXPECT(lf.block_size >= l.block_size && lf.max_unique >= l.max_unique,
                              "%s: %u SMs choose smaller limits", what, sms[g - 1]);
                }
                /* more vertices (a soup) never get smaller limits either */
                vr_batch_limits soup;
                VR_EXPECT_EQ(vr_batch_limits_auto(&soup, (vr_reuse_kind)k, k_tris[t],
                                                  k_tris[t] < 0x55555555u ? 3 * k_tris[t]
                                                                          : 0xFFFFFFFFu,
                                                  &gpu),
                             VR_OK);
                expect_valid(&soup, (vr_reuse_kind)k, what);
                VR_EXPECT(soup.max_unique >= l.max_unique && soup.block_size >= l.block_size,
                          "%s: the soup's limits are smaller", what);
            }
            /* the 7M meshes of the paper (and bigger) keep its sizes on up to 144 SMs */
            if (sms[g] <= 144) {
                vr_batch_limits big;
                VR_EXPECT_EQ(vr_batch_limits_auto(&big, (vr_reuse_kind)k, 7000000, 3500000, &gpu),
                             VR_OK);
                VR_EXPECT(same_limits(&big, &paper), "%s, %u SMs: 7M triangles: %u/%u/%u/%u",
                          vr_reuse_all[k].name, sms[g], big.block_size, big.max_unique,
                          big.max_indices, big.batch_indices);
            }
        }
    return VR_TEST_RESULT();
}

/* The numbers the README and the H100 prediction quote: an H100 (132 SMs) aims at 2112
 * paper-sized batches, so dynamic strategies keep the paper's sizes from about 720k triangles
 * on, and meshes of 10-30k triangles get the floor. */
VR_TEST(test_limits_h100, "reuse/limits-h100")
{
    const vr_gpu_shape h100 = vr_gpu_shape_default(VR_SMS_DEFAULT);
    static const struct {
        vr_reuse_kind kind;
        uint32_t tris, verts, block, nu, max_indices;
    } cases[] = {
        {VR_REUSE_HASH, 5804, 2903, 64, 64, 255},          /* cow: floor */
        {VR_REUSE_HASH, 30000, 15000, 64, 64, 255},        /* hidden 10-30k meshes: floor */
        {VR_REUSE_HASH, 268686, 134345, 96, 96, 381},      /* igea: 2112 x 127 triangles */
        {VR_REUSE_SORT, 500000, 250000, 256, 160, 639},    /* sort: power-of-two block */
        {VR_REUSE_HASH, 720192, 360096, 256, 256, 1023},   /* 2112 x 341: paper */
        {VR_REUSE_PHASH, 719851, 359926, 224, 224, 894},   /* 2111 x 341: one batch short */
        {VR_REUSE_HASH, 300000, 900000, 256, 256, 1023},   /* a soup: N_u ends batches (85
                                                              triangles each: 3530 batches) */
        {VR_REUSE_NAIVE, 5804, 2903, 64, 256, 1023},       /* floor block; N_u unused */
        {VR_REUSE_NAIVE, 540672, 270336, 256, 256, 1023},  /* 2112 x 256 triangles */
        {VR_REUSE_NAIVE, 540416, 270208, 224, 256, 1023},  /* 2111 x 256 */
        {VR_REUSE_WARP, 100000, 50000, 64, 256, 1023},
        {VR_REUSE_MULTI, 1000000, 500000, 224, 256, 1023}, /* multi counts vertices */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        vr_batch_limits l;
        VR_EXPECT_EQ(vr_batch_limits_auto(&l, cases[i].kind, cases[i].tris, cases[i].verts,
                                          &h100),
                     VR_OK);
        VR_EXPECT(l.block_size == cases[i].block && l.max_unique == cases[i].nu &&
                      l.max_indices == cases[i].max_indices && l.batch_indices == 96,
                  "%s, %u triangles, %u vertices: %u/%u/%u/%u, want %u/%u/%u/96",
                  vr_reuse_all[cases[i].kind].name, cases[i].tris, cases[i].verts, l.block_size,
                  l.max_unique, l.max_indices, l.batch_indices, cases[i].block, cases[i].nu,
                  cases[i].max_indices);
    }
    return VR_TEST_RESULT();
}

VR_TEST(test_limits_bad, "reuse/limits-bad")
{
    vr_batch_limits l;
    vr_gpu_shape g = vr_gpu_shape_default(0);
    VR_EXPECT(vr_batch_limits_auto(&l, VR_REUSE_HASH, 1000, 500, &g) == VR_ERR_ARG &&
                  strstr(vr_last_error(), "SM count 0"),
              "0 SMs: %s", vr_last_error());
    g = vr_gpu_shape_default(VR_SMS_MAX + 1);
    VR_EXPECT_EQ(vr_batch_limits_auto(&l, VR_REUSE_HASH, 1000, 500, &g), VR_ERR_ARG);
    g = vr_gpu_shape_default(132);
    g.threads_per_sm = 16;
    VR_EXPECT(vr_batch_limits_auto(&l, VR_REUSE_HASH, 1000, 500, &g) == VR_ERR_ARG &&
                  strstr(vr_last_error(), "threads per SM"),
              "16 threads: %s", vr_last_error());
    g = vr_gpu_shape_default(132);
    g.blocks_per_sm = 0;
    VR_EXPECT_EQ(vr_batch_limits_auto(&l, VR_REUSE_HASH, 1000, 500, &g), VR_ERR_ARG);
    g = vr_gpu_shape_default(132);
    VR_EXPECT_EQ(vr_batch_limits_auto(&l, VR_REUSE_KIND_COUNT, 1000, 500, &g), VR_ERR_ARG);
    /* a GPU that holds one block per SM and a tiny one still give valid limits */
    g.threads_per_sm = 32;
    g.blocks_per_sm = 1;
    for (int k = 0; k < VR_REUSE_KIND_COUNT; ++k) {
        VR_EXPECT_EQ(vr_batch_limits_auto(&l, (vr_reuse_kind)k, 1000, 0, &g), VR_OK);
        expect_valid(&l, (vr_reuse_kind)k, vr_reuse_all[k].name);
    }
    return VR_TEST_RESULT();
}

int vr_test_load_forsyth(vr_mesh *m, const char *spec)
{
    char path[512];
    const char *file = spec;
    if (vr_test_spec_is_file(spec) && !(file = vr_test_scene_path(path, sizeof path, spec))) {
        printf("SKIP: %s: scenes directory missing (set VR_SCENES)\n", spec);
        return 0;
    }
    if (!vr_test_load(m, file))
        return 0;
    const vr_status st = vr_mesh_reorder(m, VR_ORDER_FORSYTH, 7);
    VR_EXPECT(st == VR_OK, "%s (forsyth): %s", spec, vr_last_error());
    if (st != VR_OK)
        vr_mesh_free(m);
    return st == VR_OK;
}

/* Small scenes with the limits an H100 gets (the floor) and GPUs of 8 and 2 SMs get (sizes
 * between the floor and the paper's, and the paper's): every strategy's CPU twin shades
 * exactly what the simulator counts for the same limits, vertex by vertex, and the dynamic
 * batches are the simulator's. */
VR_TEST(test_limits_twin, "reuse/limits-twin")
{
    static const char *const specs[] = {"cow.obj", "teapot.obj", "fandisk.obj", "sphere:20k"};
    static const uint32_t sms[] = {VR_SMS_DEFAULT, 8, 2};
    int loaded = 0;
    for (size_t f = 0; f < sizeof specs / sizeof specs[0]; ++f) {
        vr_mesh m;
        if (!vr_test_load_forsyth(&m, specs[f]))
            continue;
        ++loaded;
        const uint32_t tris = m.index_count / 3;
        vr_geometry_result r;
        VR_EXPECT_EQ(vr_geometry_result_alloc(&r, tris, m.vertex_count), VR_OK);
        uint32_t *sim_counts = calloc((size_t)m.vertex_count + 1, sizeof *sim_counts);
        VR_EXPECT(sim_counts != NULL, "OOM");
        for (size_t g = 0; g < sizeof sms / sizeof sms[0] && sim_counts; ++g) {
            const vr_gpu_shape gpu = vr_gpu_shape_default(sms[g]);
            printf("  %-12s %u SMs:", specs[f], sms[g]);
            for (int k = 0; k < VR_REUSE_KIND_COUNT; ++k) {
                const vr_reuse_ops *ops = &vr_reuse_all[k];
                char what[160];
                snprintf(what, sizeof what, "%s on %s, %u SMs", ops->name, specs[f], sms[g]);
                vr_batch_limits l;
                VR_EXPECT_EQ(vr_batch_limits_auto(&l, ops->kind, tris, m.vertex_count, &gpu),
                             VR_OK);
                vr_reuse_params cfg = vr_reuse_params_default();
                vr_batch_limits_apply(&cfg, &l);
                cfg.count = 1;
                vr_status st = vr_geometry_ref(&r, ops, &m, &cfg);
                VR_EXPECT(st == VR_OK, "%s: CPU twin: %s", what, vr_last_error());
                uint64_t sim = 0;
                st = vr_oracle_sim_invocations(&sim, sim_counts, ops, &m, &cfg);
                VR_EXPECT(st == VR_OK, "%s: simulator: %s", what, vr_last_error());
                VR_EXPECT(sim == r.counters.invocations, "%s: simulator %llu, CPU twin %llu",
                          what, (unsigned long long)sim, r.counters.invocations);
                VR_EXPECT(!memcmp(sim_counts, r.shade_counts, (size_t)m.vertex_count * 4),
                          "%s: per-vertex counts of simulator and CPU twin differ", what);
                VR_EXPECT_EQ(r.counters.queue_count, tris);
                if (ops->dynamic) {
                    uint32_t *starts = NULL, batches = 0;
                    vr_sim_result dyn;
                    VR_EXPECT_EQ(vr_geometry_dyn_batches(&starts, &batches, &m, l.max_unique,
                                                         l.max_indices),
                                 VR_OK);
                    VR_EXPECT_EQ(vr_sim_dynamic(&dyn, m.indices, m.index_count, m.vertex_count,
                                                l.max_unique, l.max_indices, NULL),
                                 VR_OK);
                    VR_EXPECT_EQ(dyn.batches, batches);
                    free(starts);
                }
                printf(" %s %u/%u %llu", ops->name, l.block_size, l.max_unique,
                       r.counters.invocations);
            }
            printf("\n");
        }
        free(sim_counts);
        vr_geometry_result_free(&r);
        vr_mesh_free(&m);
    }
    return loaded ? VR_TEST_RESULT() : VR_TEST_SKIP;
}
