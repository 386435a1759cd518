/* test_gpu.cu - GPU tests of every reuse/ strategy against its CPU twin and the simulator,
 * through pipeline/geometry.h. Output buffers are poisoned (0xFF) before every checked run;
 * invocations and per-vertex shade counts must be equal, the queue equal slot by slot (ids
 * exact, clip/normal within VR_GEOMETRY_REL_TOL of the array's scale), the culled set equal as
 * sorted triangle ids, and a counting-off run (the timed configuration) equal too; without
 * culling both queue store paths (warp-staged, the default, and direct) must give that queue.
 * Groups: "gpu/" (all scenes, three orders, several block sizes; the static plans at their
 * tightest limits; ctest and tests/gpu.sh) and "gpu-small/" (tiny cases, fandisk, bunny, two
 * plan grids, a plan with a bad triangle id; for compute-sanitizer), both with "limits-auto": the
 * occupancy-aware limits on small meshes, and "clustercull": the static plans' cluster culling
 * against its twin. Without a CUDA device every
 * test prints "SKIP: no CUDA device" and skips. Scenes come from $VR_SCENES on the H100.
 */
#include "tests/test.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/stage/geometry.h"
#include "pipeline/vr_mem.h"
#include "raster/raster.h"
#include "reuse/stage.cuh" /* vr_queue_device_alloc, vr_cuda_alloc: the bad-ids test */
#include "tests/oracle.h"
#include "scenes/scene.h"
#include "tests/test_helpers.h" /* shared with tests/test_reuse.c */

/* What one mesh x strategy check found, for the one-line summaries. */
typedef struct vr_gpu_tally {
    uint64_t invocations; /* of the counting run, equal on GPU, CPU and simulator when ok */
    double max_abs, max_rel;
    uint64_t borderline;  /* culling decisions rounding may flip, kept by one side only */
    int skipped;          /* the strategy is not implemented yet */
} vr_gpu_tally;

/* One mesh through strategy `ops` for every block size of `blocks` (0-terminated): the CPU
 * twin (counting) is the reference, checked against the simulator and `expected` (when not
 * ~0); every GPU run is poisoned first and compared in full. */
static void vr_gpu_check(vr_gpu_tally *tally, vr_geometry *g, const vr_reuse_ops *ops,
                         const vr_mesh *m, const vr_reuse_params *base, const uint32_t *blocks,
                         uint64_t expected, const char *label)
{
    memset(tally, 0, sizeof *tally);
    char what[256];
    snprintf(what, sizeof what, "%s on %s", ops->name, label);
    const uint32_t tris = m->index_count / 3;
    vr_geometry_result want, want_cull, want_two, got;
    memset(&want_two, 0, sizeof want_two);
    if (vr_geometry_result_alloc(&want, tris, m->vertex_count) != VR_OK ||
        vr_geometry_result_alloc(&want_cull, tris, m->vertex_count) != VR_OK ||
        vr_geometry_result_alloc(&want_two, tris, m->vertex_count) != VR_OK ||
        vr_geometry_result_alloc(&got, tris, m->vertex_count) != VR_OK) {
        VR_EXPECT(0, "%s: %s", what, vr_last_error());
        return;
    }
    vr_reuse_params cfg = *base;
    cfg.count = 1;
    cfg.cull = 0;
    cfg.two_sided = 0;
    cfg.queue_mode = VR_QUEUE_INK;
    vr_status st = vr_geometry_ref(&want, ops, m, &cfg);
    if (vr_test_not_implemented(st)) {
        tally->skipped = 1;
        goto done;
    }
    VR_EXPECT(st == VR_OK, "%s: CPU twin: %s", what, vr_last_error());
    tally->invocations = want.counters.invocations;
    if (expected != ~0ull)
        VR_EXPECT(want.counters.invocations == expected, "%s: CPU twin %llu invocations, want %llu",
                  what, want.counters.invocations, (unsigned long long)expected);
    {
        uint64_t sim = 0;
        uint32_t *sim_counts = (uint32_t *)calloc((size_t)m->vertex_count + 1, sizeof(uint32_t));
        assert(sim_counts);
        st = vr_oracle_sim_invocations(&sim, sim_counts, ops, m, &cfg);
        VR_EXPECT(st == VR_OK, "%s: simulator: %s", what, vr_last_error());
        VR_EXPECT(sim == want.counters.invocations, "%s: simulator %llu, CPU twin %llu", what,
                  (unsigned long long)sim, want.counters.invocations);
        VR_EXPECT(!memcmp(sim_counts, want.shade_counts, (size_t)m->vertex_count * 4),
                  "%s: per-vertex counts of simulator and CPU twin differ", what);
        free(sim_counts);
    }
    cfg.cull = 1;
    st = vr_geometry_ref(&want_cull, ops, m, &cfg);
    VR_EXPECT(st == VR_OK, "%s: CPU twin culled: %s", what, vr_last_error());
    cfg.two_sided = 1;
    st = vr_geometry_ref(&want_two, ops, m, &cfg);
    VR_EXPECT(st == VR_OK, "%s: CPU twin culled two-sided: %s", what, vr_last_error());
    cfg.two_sided = 0;
    VR_EXPECT(want_cull.counters.queue_count + want_cull.counters.culled[VR_CULL_FRUSTUM] +
                      want_cull.counters.culled[VR_CULL_BACKFACE] +
                      want_cull.counters.culled[VR_CULL_ZERO_AREA] == tris &&
                  want_two.counters.culled[VR_CULL_BACKFACE] == 0,
              "%s: CPU twin's kept and culled triangles do not add up", what);

    for (const uint32_t *b = blocks; *b; ++b) {
        /* counting, no culling; counting, culling into the default (ink: input order) queue;
         * the timed configuration (neither); all with the default warp-staged queue store
         * (culling always stores directly), then counting, no culling with the direct store:
         * both store paths, same queue. The first block size also culls into collate and
         * atomic queues (the same set, any order), two-sided (ink), into cub and hp queues
         * (source order: slot by slot but for a plan's), then atomic two-sided, and atomic and
         * cub with the direct store. Unculled, cub and hp runs with the staged store go
         * through the general reuse API (pipeline/stage/geometry.cu), the direct store and
         * atomic through the strategy's own kernels, ink and collate as the stage routes them
         * (ink: the ordered render program as persistent blocks for every strategy,
         * the shader being cheap); the atomic two-sided run is forced through the API
         * (VR_GEOMETRY_KERNELS=api), and so are an ink run with a block per batch
         * (VR_PROG_INK=blocks) and a collate run (the ordered render program) at the end:
         * every path is checked. */
        static const vr_queue_mode modes[] = {
            VR_QUEUE_INK,    VR_QUEUE_INK,     VR_QUEUE_INK,    VR_QUEUE_INK,    VR_QUEUE_COLLATE,
            VR_QUEUE_ATOMIC, VR_QUEUE_INK,     VR_QUEUE_CUB,    VR_QUEUE_HP,     VR_QUEUE_ATOMIC,
            VR_QUEUE_ATOMIC, VR_QUEUE_CUB,     VR_QUEUE_INK,    VR_QUEUE_COLLATE};
        const int runs = b == blocks ? 14 : 4;
        for (int run = 0; run < runs; ++run) {
            cfg.block_size = *b;
            cfg.count = run != 2;
            cfg.cull = run == 1 || run >= 4;
            const int via_api = run == 9 || run >= 12;
            cfg.queue_store = run == 3 || run == 10 || run == 11 ? 0 : base->queue_store;
            cfg.queue_mode = modes[run];
            cfg.two_sided = run == 6 || run == 9;
            char rwhat[320];
            snprintf(rwhat, sizeof rwhat, "%s, block %u%s%s%s%s, %s store%s", what, *b,
                     cfg.cull ? ", cull into " : "",
                     cfg.cull ? vr_queue_mode_names[cfg.queue_mode] : "",
                     cfg.two_sided ? " two-sided" : "", cfg.count ? "" : ", no counting",
                     cfg.queue_store ? "staged" : "direct",
                     run == 12 ? ", through the API, a block per batch"
                     : via_api ? ", through the API" : "");
            float ms = -1;
            if (via_api)
                setenv("VR_GEOMETRY_KERNELS", "api", 1);
            if (run == 12)
                setenv("VR_PROG_INK", "blocks", 1);
            st = vr_geometry_run(g, ops, &cfg, 1, &ms);
            if (via_api)
                unsetenv("VR_GEOMETRY_KERNELS");
            if (run == 12)
                unsetenv("VR_PROG_INK");
            if (vr_test_not_implemented(st)) {
                tally->skipped = 1;
                goto done;
            }
            VR_EXPECT(st == VR_OK, "%s: GPU: %s", rwhat, vr_last_error());
            if (st != VR_OK)
                continue;
            VR_EXPECT(ms >= 0, "%s: no kernel time", rwhat);
            st = vr_geometry_download(g, &got);
            VR_EXPECT(st == VR_OK, "%s: download: %s", rwhat, vr_last_error());
            vr_geometry_diff d;
            if (cfg.count) {
                const vr_geometry_result *ref =
                    !cfg.cull ? &want : cfg.two_sided ? &want_two : &want_cull;
                vr_geometry_compare(&d, &got, ref, vr_geometry_compare_mode(&cfg), 1, stderr,
                                    rwhat);
            } else {
                /* counters stay 0 without counting (queue_count too, no culling): compare the
                 * queue against the reference with zeroed counters */
                vr_counters saved = want.counters;
                memset(&want.counters, 0, sizeof want.counters);
                vr_geometry_compare(&d, &got, &want, 0, 0, stderr, rwhat);
                want.counters = saved;
            }
            VR_EXPECT(d.mismatches == 0, "%s: %llu mismatches (of %llu triangles)", rwhat,
                      (unsigned long long)d.mismatches, (unsigned long long)d.compared);
            tally->borderline += d.borderline;
            if (d.max_abs > tally->max_abs)
                tally->max_abs = d.max_abs;
            if (d.max_rel > tally->max_rel)
                tally->max_rel = d.max_rel;
        }
    }
done:
    vr_geometry_result_free(&want);
    vr_geometry_result_free(&want_cull);
    vr_geometry_result_free(&want_two);
    vr_geometry_result_free(&got);
}

/* Every strategy on one mesh; prints one summary line. */
static void vr_gpu_check_all(const vr_mesh *m, const vr_reuse_params *base,
                             const uint32_t *blocks, const uint64_t *expected, const char *label)
{
    vr_geometry *g = NULL;
    vr_status st = vr_geometry_create(&g, m);
    VR_EXPECT(st == VR_OK, "%s: vr_geometry_create: %s", label, vr_last_error());
    if (st != VR_OK)
        return;
    char line[1024];
    int n = snprintf(line, sizeof line, "  %-34s", label);
    double max_abs = 0, max_rel = 0;
    uint64_t borderline = 0;
    for (int k = 0; k < VR_REUSE_KIND_COUNT; ++k) {
        vr_gpu_tally t;
        vr_gpu_check(&t, g, &vr_reuse_all[k], m, base, blocks, expected ? expected[k] : ~0ull,
                     label);
        if (t.skipped)
            n += snprintf(line + n, sizeof line - n, " %s -", vr_reuse_all[k].name);
        else
            n += snprintf(line + n, sizeof line - n, " %s %llu", vr_reuse_all[k].name,
                          (unsigned long long)t.invocations);
        if (n >= (int)sizeof line)
            n = (int)sizeof line - 1;
        borderline += t.borderline;
        if (t.max_abs > max_abs)
            max_abs = t.max_abs;
        if (t.max_rel > max_rel)
            max_rel = t.max_rel;
    }
    printf("%s | max err abs %.2g rel %.2g", line, max_abs, max_rel);
    /* shaders.h rounds identically on both sides (no FMA contraction): queues are bit-equal */
    VR_EXPECT(max_abs == 0 && borderline == 0, "%s: GPU queue values differ from the CPU twin "
              "(max abs %.3g, %llu borderline cull decisions); expected bit-equal", label, max_abs,
              (unsigned long long)borderline);
    if (borderline)
        printf(" | %llu borderline cull decisions", (unsigned long long)borderline);
    printf("\n");
    vr_geometry_destroy(g);
}

static const uint32_t g_blocks_all[] = {64, 256, 1024, 0};
static const uint32_t g_blocks_one[] = {256, 0};

VR_TEST(test_gpu_device, "gpu/device")
{
    if (vr_test_no_device())
        return VR_TEST_SKIP;
    int driver = 0, runtime = 0, sms = 0, clk = 0;
    VR_EXPECT_EQ(vr_gpu_device_info(&driver, &runtime, &sms, &clk), VR_OK);
    double bw = 0;
    VR_EXPECT_EQ(vr_gpu_copy_bandwidth(&bw), VR_OK);
    VR_EXPECT(bw > 1e10, "device-to-device copy at %.3g B/s", bw);
    printf("  %s: CUDA driver %d.%d, runtime %d.%d, %d SMs at %d MHz, D2D copy %.2f TB/s\n",
           vr_gpu_device_name(), driver / 1000, driver % 1000 / 10, runtime / 1000,
           runtime % 1000 / 10, sms, clk / 1000, bw * 1e-12);
    return VR_TEST_RESULT();
}

/* The hand-written cases of test_reuse.c with their expected counts, on the GPU. */
static int vr_gpu_tiny(const uint32_t *blocks)
{
    if (vr_test_no_device())
        return VR_TEST_SKIP;
    vr_mesh m;
    const char *name;
    uint32_t batch;
    uint64_t expected[VR_REUSE_KIND_COUNT];
    for (size_t i = 0; vr_test_tiny_case(i, &m, &name, &batch, expected) == VR_OK; ++i) {
        vr_reuse_params cfg = vr_reuse_params_default();
        vr_camera_orbit_shader(&cfg.shader, &m, 0.3f);
        if (batch)
            cfg.batch_indices = batch;
        vr_gpu_check_all(&m, &cfg, blocks, expected, name);
        vr_mesh_free(&m);
    }
    return VR_TEST_RESULT();
}

VR_TEST(test_gpu_tiny, "gpu/tiny") { return vr_gpu_tiny(g_blocks_all); }
VR_TEST(test_gpu_small_tiny, "gpu-small/tiny") { return vr_gpu_tiny(g_blocks_one); }

/* Seeded grids, in row and shuffled order, with a non-default warp batch (57, and the largest,
 * 1536: 48 KiB of shared memory at block 1024), a small N_u, and dynamic batches of up to 2046
 * indices on a narrow grid in row order (21 vertices per row of 40 triangles): N_u 256 closes
 * batches at ~12 rows, about 1440 indices; N_u 512 at the 2046-index limit - more indices than
 * threads at every block size. */
VR_TEST(test_gpu_grids, "gpu/grids")
{
    if (vr_test_no_device())
        return VR_TEST_SKIP;
    static const struct { uint32_t w, h, extra, shuffle, batch, nu, max_indices; } grids[] = {
        {40, 30, 13, 0, 96, 256, 1023},   {40, 30, 13, 1, 57, 37, 1023},
        {150, 97, 5, 1, 96, 256, 1023},   {301, 211, 0, 0, 1536, 64, 1023},
        {301, 211, 7, 1, 1536, 256, 1023}, {20, 400, 0, 0, 96, 256, 2046},
        {20, 400, 5, 0, 96, 512, 2046},
    };
    for (size_t i = 0; i < sizeof grids / sizeof grids[0]; ++i) {
        vr_mesh m;
        VR_EXPECT_EQ(vr_test_grid_mesh(&m, grids[i].w, grids[i].h, grids[i].extra,
                                       grids[i].shuffle, 99 + i), VR_OK);
        vr_reuse_params cfg = vr_reuse_params_default();
        vr_camera_orbit_shader(&cfg.shader, &m, 0.9f * (float)i);
        cfg.batch_indices = grids[i].batch;
        cfg.max_unique = grids[i].nu;
        cfg.max_indices = grids[i].max_indices;
        char label[96];
        snprintf(label, sizeof label, "grid %ux%u%s b%u N_u %u/%u", grids[i].w, grids[i].h,
                 grids[i].shuffle ? " shuffled" : "", grids[i].batch, grids[i].nu,
                 grids[i].max_indices);
        vr_gpu_check_all(&m, &cfg, g_blocks_all, NULL, label);
        vr_mesh_free(&m);
    }
    return VR_TEST_RESULT();
}

/* Scene files (and generator specs) in the given orders. */
static int vr_gpu_scenes(const char *const *specs, size_t nspecs, const vr_order *orders,
                         size_t norders, const uint32_t *blocks)
{
    if (vr_test_no_device())
        return VR_TEST_SKIP;
    int loaded = 0;
    for (size_t f = 0; f < nspecs; ++f) {
        char path[512];
        const char *spec = specs[f];
        if (strchr(spec, '.')) { /* a file of the shared scenes */
            if (!vr_test_scene_path(path, sizeof path, spec)) {
                printf("SKIP: %s: scenes directory missing (set VR_SCENES)\n", spec);
                continue;
            }
            spec = path;
        }
        for (size_t o = 0; o < norders; ++o) {
            vr_mesh m;
            vr_status st = vr_mesh_load(&m, spec);
            if (st != VR_OK) {
                printf("SKIP: %s: %s\n", specs[f], vr_last_error());
                break;
            }
            st = vr_mesh_reorder(&m, orders[o], 7);
            VR_EXPECT(st == VR_OK, "%s (%s): %s", specs[f], vr_order_name(orders[o]),
                      vr_last_error());
            if (st == VR_OK) {
                ++loaded;
                vr_reuse_params cfg = vr_reuse_params_default();
                vr_camera_orbit_shader(&cfg.shader, &m, 0.4f + (float)o);
                char label[128];
                snprintf(label, sizeof label, "%s (%s)", specs[f], vr_order_name(orders[o]));
                vr_gpu_check_all(&m, &cfg, blocks, NULL, label);
            }
            vr_mesh_free(&m);
        }
    }
    return loaded ? VR_TEST_RESULT() : VR_TEST_SKIP;
}

VR_TEST(test_gpu_scenes, "gpu/scenes")
{
    static const char *const specs[] = {"fandisk.obj", "stanford-bunny.obj", "horse.ply",
                                        "igea.ply",    "rocker-arm.obj",     "spot.obj",
                                        "cow.obj",     "teapot.obj",         "sphere"};
    static const vr_order orders[] = {VR_ORDER_FILE, VR_ORDER_FORSYTH, VR_ORDER_RANDOM};
    return vr_gpu_scenes(specs, 9, orders, 3, g_blocks_all);
}

/* A mesh large enough for a full grid of many waves (2M triangles). */
VR_TEST(test_gpu_large, "gpu/large")
{
    static const char *const specs[] = {"sphere:2M"};
    static const vr_order orders[] = {VR_ORDER_FORSYTH};
    return vr_gpu_scenes(specs, 1, orders, 1, g_blocks_one);
}

VR_TEST(test_gpu_small_scenes, "gpu-small/scenes")
{
    static const char *const specs[] = {"fandisk.obj", "stanford-bunny.obj"};
    static const vr_order orders[] = {VR_ORDER_FORSYTH};
    return vr_gpu_scenes(specs, 2, orders, 1, g_blocks_one);
}

/* Auto batch limits (--limits auto, every command's default) on small meshes, where they differ
 * from the paper's: each strategy with the limits this device gets, an H100 gets (the floor on
 * these meshes) and a 2-SM GPU gets (between the floor and the paper's), GPU == CPU twin ==
 * simulator as vr_gpu_check checks them, queues bit-equal. */
static int vr_gpu_limits_auto(const char *const *specs, size_t nspecs)
{
    if (vr_test_no_device())
        return VR_TEST_SKIP;
    vr_gpu_shape shapes[3];
    VR_EXPECT_EQ(vr_gpu_shape_query(&shapes[0]), VR_OK);
    VR_EXPECT(shapes[0].sm_count >= 1 && shapes[0].threads_per_sm >= 32 &&
                  shapes[0].blocks_per_sm >= 1,
              "device shape %u SMs, %u threads, %u blocks", shapes[0].sm_count,
              shapes[0].threads_per_sm, shapes[0].blocks_per_sm);
    shapes[1] = vr_gpu_shape_default(VR_SMS_DEFAULT);
    shapes[2] = vr_gpu_shape_default(2);
    printf("  device: %u SMs, %u threads and %u blocks per SM\n", shapes[0].sm_count,
           shapes[0].threads_per_sm, shapes[0].blocks_per_sm);
    int loaded = 0;
    for (size_t f = 0; f < nspecs; ++f) {
        vr_mesh m;
        if (!vr_test_load_forsyth(&m, specs[f]))
            continue;
        ++loaded;
        vr_geometry *g = NULL;
        vr_status st = vr_geometry_create(&g, &m);
        VR_EXPECT(st == VR_OK, "%s: vr_geometry_create: %s", specs[f], vr_last_error());
        for (int sh = 0; sh < 3 && st == VR_OK; ++sh) {
            char line[1024];
            int n = snprintf(line, sizeof line, "  %-12s %4u SMs:", specs[f], shapes[sh].sm_count);
            for (int k = 0; k < VR_REUSE_KIND_COUNT; ++k) {
                const vr_reuse_ops *ops = &vr_reuse_all[k];
                vr_batch_limits l;
                VR_EXPECT_EQ(vr_batch_limits_auto(&l, ops->kind, m.index_count / 3,
                                                  m.vertex_count, &shapes[sh]),
                             VR_OK);
                vr_reuse_params base = vr_reuse_params_default();
                vr_camera_orbit_shader(&base.shader, &m, 0.4f + (float)sh);
                vr_batch_limits_apply(&base, &l);
                const uint32_t blocks[] = {l.block_size, 0};
                char label[160];
                snprintf(label, sizeof label, "%s (forsyth), auto limits for %u SMs: block %u, "
                         "N_u %u, %u indices", specs[f], shapes[sh].sm_count, l.block_size,
                         l.max_unique, l.max_indices);
                vr_gpu_tally t;
                vr_gpu_check(&t, g, ops, &m, &base, blocks, ~0ull, label);
                VR_EXPECT(t.skipped || (t.max_abs == 0 && t.borderline == 0),
                          "%s: %s: GPU queue differs from the twin (max abs %.3g, %llu "
                          "borderline)", label, ops->name, t.max_abs,
                          (unsigned long long)t.borderline);
                n += snprintf(line + n, sizeof line - (size_t)n, " %s %u/%u %llu", ops->name,
                              l.block_size, l.max_unique, (unsigned long long)t.invocations);
                if (n >= (int)sizeof line)
                    n = (int)sizeof line - 1;
            }
            printf("%s\n", line);
        }
        vr_geometry_destroy(g);
        vr_mesh_free(&m);
    }
    return loaded ? VR_TEST_RESULT() : VR_TEST_SKIP;
}

VR_TEST(test_gpu_limits_auto, "gpu/limits-auto")
{
    static const char *const specs[] = {"cow.obj", "teapot.obj", "fandisk.obj", "sphere:20k"};
    return vr_gpu_limits_auto(specs, 4);
}

VR_TEST(test_gpu_small_limits_auto, "gpu-small/limits-auto")
{
    static const char *const specs[] = {"cow.obj"};
    return vr_gpu_limits_auto(specs, 1);
}

/* The static plans (patch, meshlet) alone on shuffled grids at their tightest limits: one
 * triangle per batch (max_indices 3), three vertices per batch (N_u 3), small odd limits, the
 * largest (N_u 1024, 3069 indices), and the mesh-shader default (64 / 124 triangles). */
static int vr_gpu_plans(const uint32_t *blocks, int small)
{
    if (vr_test_no_device())
        return VR_TEST_SKIP;
    static const struct { uint32_t w, h, nu, max_indices; } grids[] = {
        {30, 20, 256, 1023}, {30, 20, 256, 3}, {30, 20, 3, 1023}, {60, 40, 37, 30},
        {60, 40, 64, 372},   {150, 97, 1024, 3069},
    };
    const size_t count = small ? 2 : sizeof grids / sizeof grids[0];
    for (size_t i = 0; i < count; ++i) {
        vr_mesh m;
        VR_EXPECT_EQ(vr_test_grid_mesh(&m, grids[i].w, grids[i].h, 3, 1, 51 + i), VR_OK);
        vr_reuse_params cfg = vr_reuse_params_default();
        vr_camera_orbit_shader(&cfg.shader, &m, 0.6f * (float)i);
        cfg.max_unique = grids[i].nu;
        cfg.max_indices = grids[i].max_indices;
        vr_geometry *g = NULL;
        VR_EXPECT_EQ(vr_geometry_create(&g, &m), VR_OK);
        for (int k = 0; g && k < VR_REUSE_KIND_COUNT; ++k) {
            const vr_reuse_ops *ops = &vr_reuse_all[k];
            if (!ops->plan)
                continue;
            char label[96];
            snprintf(label, sizeof label, "shuffled grid %ux%u N_u %u/%u", grids[i].w,
                     grids[i].h, grids[i].nu, grids[i].max_indices);
            vr_gpu_tally t;
            vr_gpu_check(&t, g, ops, &m, &cfg, blocks, ~0ull, label);
            printf("  %-40s %s %llu | max err abs %.2g\n", label, ops->name,
                   (unsigned long long)t.invocations, t.max_abs);
            VR_EXPECT(t.max_abs == 0 && t.borderline == 0, "%s %s: GPU values differ", label,
                      ops->name);
        }
        vr_geometry_destroy(g);
        vr_mesh_free(&m);
    }
    return VR_TEST_RESULT();
}

VR_TEST(test_gpu_plans, "gpu/plans") { return vr_gpu_plans(g_blocks_all, 0); }
VR_TEST(test_gpu_small_plans, "gpu-small/plans") { return vr_gpu_plans(g_blocks_one, 1); }

/* A static plan whose tri_ids hold an id out of range, straight through vr_patch_run: that
 * triangle is counted as overflow and written nowhere (compute-sanitizer sees no stray store,
 * its slot keeps the poison), every other triangle lands in its slot; the twin refuses the ids. */
VR_TEST(test_gpu_plan_bad_ids, "gpu/plan-bad-ids", "gpu-small/plan-bad-ids")
{
    if (vr_test_no_device())
        return VR_TEST_SKIP;
    vr_mesh m;
    VR_EXPECT_EQ(vr_test_grid_mesh(&m, 12, 9, 0, 1, 5), VR_OK);
    const vr_reuse_ops *ops = vr_reuse_find("patch");
    vr_batch_plan plan;
    uint32_t *indices = NULL;
    VR_EXPECT_EQ(vr_geometry_plan(&plan, &indices, ops, &m, 256, 1023, VR_PATCH_BUILDER_CPU), VR_OK);
    const uint32_t tris = m.index_count / 3, bad = 5;
    plan.tri_order[bad] = tris + 7;
    const vr_reuse_params defaults = vr_reuse_params_default();
    uint32_t *d_idx = NULL, *d_ids = NULL, *d_starts = NULL;
    float *d_pos = NULL, *d_nrm = NULL;
    vr_counters *d_counters = NULL;
    vr_queue q;
    memset(&q, 0, sizeof q);
    const size_t vbytes = (size_t)m.vertex_count * 12;
    if (vr_cuda_alloc((void **)&d_idx, (size_t)m.index_count * 4, "indices") != VR_OK ||
        vr_cuda_alloc((void **)&d_ids, (size_t)tris * 4, "ids") != VR_OK ||
        vr_cuda_alloc((void **)&d_starts, ((size_t)plan.batch_count + 1) * 4, "starts") != VR_OK ||
        vr_cuda_alloc((void **)&d_pos, vbytes, "positions") != VR_OK ||
        vr_cuda_alloc((void **)&d_nrm, vbytes, "normals") != VR_OK ||
        vr_cuda_alloc((void **)&d_counters, sizeof(vr_counters), "counters") != VR_OK ||
        vr_queue_device_alloc(&q, tris) != VR_OK) {
        VR_EXPECT(0, "device buffers: %s", vr_last_error());
    } else {
        VR_EXPECT_CUDA(cudaMemcpy(d_idx, indices, (size_t)m.index_count * 4,
                                  cudaMemcpyHostToDevice));
        VR_EXPECT_CUDA(cudaMemcpy(d_ids, plan.tri_order, (size_t)tris * 4, cudaMemcpyHostToDevice));
        VR_EXPECT_CUDA(cudaMemcpy(d_starts, plan.starts, ((size_t)plan.batch_count + 1) * 4,
                                  cudaMemcpyHostToDevice));
        VR_EXPECT_CUDA(cudaMemcpy(d_pos, m.positions, vbytes, cudaMemcpyHostToDevice));
        VR_EXPECT_CUDA(cudaMemcpy(d_nrm, m.normals, vbytes, cudaMemcpyHostToDevice));
        VR_EXPECT_CUDA(cudaMemset(d_counters, 0, sizeof(vr_counters)));
        VR_EXPECT_CUDA(cudaMemset(q.tri_id, 0xff, (size_t)tris * 4));
        vr_reuse_params p = vr_reuse_params_input(&defaults, d_idx, m.index_count, d_pos, d_nrm,
                                                  m.vertex_count);
        p.count = 1;
        p.tri_ids = d_ids;
        p.batch_starts = d_starts;
        p.batch_count = plan.batch_count;
        p.counters = d_counters;
        p.queue = q;
        VR_EXPECT(ops->run(&p) == VR_OK, "patch run: %s", vr_last_error());
        VR_EXPECT_CUDA(cudaDeviceSynchronize());
        vr_counters c;
        uint32_t *ids = (uint32_t *)malloc((size_t)tris * 4);
        assert(ids);
        VR_EXPECT_CUDA(cudaMemcpy(&c, d_counters, sizeof c, cudaMemcpyDeviceToHost));
        VR_EXPECT_CUDA(cudaMemcpy(ids, q.tri_id, (size_t)tris * 4, cudaMemcpyDeviceToHost));
        VR_EXPECT(c.overflow == 1 && c.queue_count == tris - 1, "overflow %u, queue %u of %u",
                  c.overflow, c.queue_count, tris);
        uint32_t written = 0; /* slot = plan position, tri_id = its source id */
        for (uint32_t s = 0; s < tris; ++s)
            written += ids[s] == plan.tri_order[s];
        VR_EXPECT_EQ(written, tris - 1);
        VR_EXPECT(ids[bad] == 0xffffffffu, "the bad id's slot was written: %u", ids[bad]);
        free(ids);
    }
    /* the twin on the same host arrays refuses the ids */
    vr_geometry_result r;
    VR_EXPECT_EQ(vr_geometry_result_alloc(&r, tris, m.vertex_count), VR_OK);
    vr_reuse_params h = vr_reuse_params_input(&defaults, indices, m.index_count, m.positions,
                                              m.normals, m.vertex_count);
    h.tri_ids = plan.tri_order;
    h.batch_starts = plan.starts;
    h.batch_count = plan.batch_count;
    h.queue = r.queue;
    h.counters = &r.counters;
    VR_EXPECT(ops->ref(&h) == VR_ERR_FORMAT && strstr(vr_last_error(), "out of range"),
              "twin on a bad id: %s", vr_last_error());
    vr_geometry_result_free(&r);
    void *const bufs[] = {d_idx, d_ids, d_starts, d_pos, d_nrm, d_counters};
    vr_cuda_free_all(bufs, VR_COUNT_OF(bufs));
    vr_queue_device_free(&q);
    free(indices);
    vr_batch_plan_free(&plan);
    vr_mesh_free(&m);
    return VR_TEST_RESULT();
}

/* Cluster culling (reuse/cluster_cull.h) on the GPU against the twin with it on: patch and
 * meshlet, cameras outside, zoomed in and inside the mesh, every queue mode (and two-sided into
 * ink), two block sizes: invocations, per-vertex shade counts, culled[VR_CULL_CLUSTER] and the
 * queue equal exactly (the decision is bit-identical arithmetic on both sides), and fewer
 * invocations than without it from outside. */
static int vr_gpu_clustercull(int small)
{
    if (vr_test_no_device())
        return VR_TEST_SKIP;
    static const char *const specs[] = {"sphere:20k", "stanford-bunny.obj", "sphere"};
    static const float zooms[] = {1.0f, 1.6f, 6.0f};
    static const uint32_t blocks[] = {64, 256};
    for (size_t i = 0; i < (small ? 1u : 3u); ++i) {
        char buf[1024];
        const char *spec = vr_test_plan_spec(buf, sizeof buf, specs[i]);
        vr_mesh m;
        if (!spec || !vr_test_load(&m, spec))
            continue;
        if (i != 1)
            VR_EXPECT_EQ(vr_mesh_reorder(&m, VR_ORDER_RANDOM, 5), VR_OK);
        const uint32_t tris = m.index_count / 3;
        vr_geometry *g = NULL;
        vr_geometry_result want, got, plain;
        VR_EXPECT_EQ(vr_geometry_create(&g, &m), VR_OK);
        VR_EXPECT_EQ(vr_geometry_result_alloc(&want, tris, m.vertex_count), VR_OK);
        VR_EXPECT_EQ(vr_geometry_result_alloc(&got, tris, m.vertex_count), VR_OK);
        VR_EXPECT_EQ(vr_geometry_result_alloc(&plain, tris, m.vertex_count), VR_OK);
        for (int k = VR_REUSE_PATCH; g && k <= VR_REUSE_MESHLET; ++k)
            for (int z = 0; z < 3; ++z)
                for (int q = 0; q <= VR_QUEUE_MODE_COUNT; ++q) { /* the last: ink two-sided */
                    const vr_reuse_ops *ops = &vr_reuse_all[k];
                    vr_reuse_params cfg = vr_reuse_params_default();
                    vr_camera cam;
                    vr_camera_fit(&cam, &m);
                    cam.yaw = 30.0f;
                    cam.zoom = zooms[z];
                    vr_camera_shader(&cfg.shader, &cam, 256, 256);
                    cfg.max_unique = 64;
                    cfg.max_indices = 372;
                    cfg.count = 1;
                    cfg.cull = 1;
                    cfg.queue_mode = q < VR_QUEUE_MODE_COUNT ? (vr_queue_mode)q : VR_QUEUE_INK;
                    cfg.two_sided = q == VR_QUEUE_MODE_COUNT;
                    cfg.cluster_cull = 1;
                    char what[256];
                    snprintf(what, sizeof what, "cluster culling: %s on %s, zoom %.1f, %s%s",
                             ops->name, specs[i], zooms[z], vr_queue_mode_names[cfg.queue_mode],
                             cfg.two_sided ? " two-sided" : "");
                    VR_EXPECT(vr_geometry_ref(&want, ops, &m, &cfg) == VR_OK, "%s: twin: %s",
                              what, vr_last_error());
                    if (q == 0 && z == 0) {
                        vr_reuse_params off = cfg;
                        off.cluster_cull = 0;
                        VR_EXPECT(vr_geometry_ref(&plain, ops, &m, &off) == VR_OK, "%s: %s",
                                  what, vr_last_error());
                        VR_EXPECT(want.counters.invocations < plain.counters.invocations,
                                  "%s: %llu invocations, without cluster culling %llu", what,
                                  want.counters.invocations, plain.counters.invocations);
                        printf("  %-58s invocations %llu -> %llu\n", what,
                               plain.counters.invocations, want.counters.invocations);
                    }
                    for (size_t b = 0; b < (small ? 1u : 2u); ++b) {
                        cfg.block_size = blocks[small ? 1 : b];
                        vr_status st = vr_geometry_run(g, ops, &cfg, 1, NULL);
                        VR_EXPECT(st == VR_OK, "%s: GPU: %s", what, vr_last_error());
                        if (st != VR_OK || vr_geometry_download(g, &got) != VR_OK)
                            continue;
                        vr_geometry_diff d;
                        vr_geometry_compare(&d, &got, &want, vr_geometry_compare_mode(&cfg), 1,
                                            stderr, what);
                        VR_EXPECT(d.mismatches == 0 && d.borderline == 0 && d.max_abs == 0,
                                  "%s, block %u: %llu mismatches, %llu borderline", what,
                                  cfg.block_size, (unsigned long long)d.mismatches,
                                  (unsigned long long)d.borderline);
                        VR_EXPECT(!memcmp(got.counters.culled, want.counters.culled,
                                          sizeof want.counters.culled),
                                  "%s, block %u: cluster-culled %u, twin %u", what,
                                  cfg.block_size, got.counters.culled[VR_CULL_CLUSTER],
                                  want.counters.culled[VR_CULL_CLUSTER]);
                    }
                }
        vr_geometry_result_free(&want);
        vr_geometry_result_free(&got);
        vr_geometry_result_free(&plain);
        vr_geometry_destroy(g);
        vr_mesh_free(&m);
    }
    return VR_TEST_RESULT();
}

VR_TEST(test_gpu_clustercull, "gpu/clustercull") { return vr_gpu_clustercull(0); }
VR_TEST(test_gpu_small_clustercull, "gpu-small/clustercull") { return vr_gpu_clustercull(1); }

/* Bad parameters on the GPU path come back as errors, and the context stays usable. */
VR_TEST(test_gpu_errors, "gpu/errors")
{
    if (vr_test_no_device())
        return VR_TEST_SKIP;
    vr_mesh m;
    VR_EXPECT_EQ(vr_test_grid_mesh(&m, 8, 8, 0, 0, 1), VR_OK);
    vr_geometry *g = NULL;
    VR_EXPECT_EQ(vr_geometry_create(&g, &m), VR_OK);
    if (!g) {
        vr_mesh_free(&m);
        return VR_TEST_FAIL;
    }
    for (int k = 0; k < VR_REUSE_KIND_COUNT; ++k) {
        const vr_reuse_ops *ops = &vr_reuse_all[k];
        vr_reuse_params cfg = vr_reuse_params_default();
        cfg.block_size = 48;
        vr_status st = vr_geometry_run(g, ops, &cfg, 1, NULL);
        if (vr_test_not_implemented(st))
            continue;
        VR_EXPECT(st == VR_ERR_ARG, "%s accepted block 48 on the GPU (status %d)", ops->name, st);
        cfg.block_size = 256;
        st = vr_geometry_run(g, ops, &cfg, 1, NULL);
        VR_EXPECT(st == VR_OK, "%s after an error: %s", ops->name, vr_last_error());
    }
    vr_reuse_params cfg = vr_reuse_params_default();
    VR_EXPECT(cfg.queue_store == 1, "default queue store %d, want 1 (warp-staged)",
              cfg.queue_store);
    cfg.queue_store = 2;
    VR_EXPECT(vr_geometry_run(g, &vr_reuse_all[VR_REUSE_NAIVE], &cfg, 1, NULL) == VR_ERR_ARG,
              "naive accepted queue_store 2");
    cfg.queue_store = 1;
    /* an unknown kernel selection (a typo in an A/B run) fails the run, naming the variable */
    setenv("VR_GEOMETRY_KERNELS", "API", 1);
    VR_EXPECT(vr_geometry_run(g, &vr_reuse_all[VR_REUSE_HASH], &cfg, 1, NULL) == VR_ERR_ARG &&
                  strstr(vr_last_error(), "VR_GEOMETRY_KERNELS=API") != NULL,
              "VR_GEOMETRY_KERNELS=API accepted (%s)", vr_last_error());
    unsetenv("VR_GEOMETRY_KERNELS");
    setenv("VR_PROG_INK", "Persistent", 1); /* the same for the ink kernel's */
    VR_EXPECT(vr_geometry_run(g, &vr_reuse_all[VR_REUSE_MESHLET], &cfg, 1, NULL) == VR_ERR_ARG &&
                  strstr(vr_last_error(), "VR_PROG_INK=Persistent") != NULL,
              "VR_PROG_INK=Persistent accepted (%s)", vr_last_error());
    unsetenv("VR_PROG_INK");
    static const char *const bad_warp[] = {"Pooled", "pooled:", "pooled:0", "pooled:2x"};
    setenv("VR_GEOMETRY_KERNELS", "api", 1); /* unculled warp through the API reads it */
    for (size_t i = 0; i < sizeof bad_warp / sizeof bad_warp[0]; ++i) {
        setenv("VR_PROG_WARP", bad_warp[i], 1);
        VR_EXPECT(vr_geometry_run(g, &vr_reuse_all[VR_REUSE_WARP], &cfg, 1, NULL) == VR_ERR_ARG &&
                      strstr(vr_last_error(), "VR_PROG_WARP=") != NULL,
                  "VR_PROG_WARP=%s accepted (%s)", bad_warp[i], vr_last_error());
    }
    unsetenv("VR_PROG_WARP");
    unsetenv("VR_GEOMETRY_KERNELS");
    VR_EXPECT(vr_geometry_run(g, &vr_reuse_all[VR_REUSE_HASH], &cfg, 1, NULL) == VR_OK,
              "hash after the bad selection: %s", vr_last_error());
    cfg.batch_indices = 100;
    VR_EXPECT(vr_geometry_run(g, &vr_reuse_all[VR_REUSE_WARP], &cfg, 1, NULL) == VR_ERR_ARG,
              "warp accepted a 100-index batch");
    vr_geometry_destroy(g);
    /* an invalid mesh is refused before anything is uploaded */
    m.indices[4] = m.vertex_count;
    VR_EXPECT(vr_geometry_create(&g, &m) == VR_ERR_FORMAT && g == NULL,
              "vr_geometry_create accepted index %u >= vertex_count", m.vertex_count);
    vr_mesh_free(&m);
    return VR_TEST_RESULT();
}
