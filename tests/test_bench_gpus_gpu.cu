/* test_bench_gpus_gpu.cu - `vreuse bench --gpus N` on the device (bench/bench_gpus.h): for N = 1
 * up to every device of the machine (at most 8), each strategy's counters and per-vertex shade
 * counts summed over N GPUs with NCCL equal one GPU's run of the whole mesh exactly (without
 * culling and culling into an ink queue, blocks 64 and 512), and the timing gives sane numbers.
 * gpu/bench-gpus: every shared scene, the default sphere, foliage:20k and sphere:200 (with
 * block 512 naive forms one batch: the second GPU's part is empty). NCCL runs report SKIP with
 * the reason where the library is missing, and are left out with VR_TEST_NCCL=0.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench_gpus.h"
#include "pipeline/stage/geometry.h"
#include "raster/raster.h"
#include "raster/sortlast_dev.h"
#include "scenes/scene.h"
#include "tests/test.h"
#include "tests/test_helpers.h"

static const uint32_t g_blocks[] = {64, 512};

/* Every strategy, culling off and ink, both blocks on N GPUs against `one` (device 0). */
static void check_gpus(const char *spec, const vr_mesh *m, vr_geometry *one,
                       vr_geometry_result *res, vr_bench_gpus *b, uint32_t n)
{
    for (int s = 0; s < VR_REUSE_KIND_COUNT; ++s) {
        const vr_reuse_ops *ops = &vr_reuse_all[s];
        for (int cull = 0; cull < 2; ++cull)
            for (size_t k = 0; k < sizeof g_blocks / sizeof *g_blocks; ++k) {
                vr_reuse_params cfg = vr_reuse_params_default();
                vr_camera_orbit_shader(&cfg.shader, m, 0.5f);
                cfg.block_size = g_blocks[k];
                cfg.cull = cull;
                cfg.queue_mode = VR_QUEUE_INK;
                char what[256];
                snprintf(what, sizeof what, "%s %s, cull %d, block %u, %u GPUs", spec, ops->name,
                         cull, cfg.block_size, n);
                vr_reuse_params counted = cfg;
                counted.count = 1;
                vr_status st = vr_geometry_run(one, ops, &counted, 0, NULL);
                if (st == VR_ERR_ARG) /* a configuration the strategy does not take (bench: SKIP) */
                    continue;
                if (st == VR_OK)
                    st = vr_geometry_download(one, res);
                VR_EXPECT(st == VR_OK, "%s: one GPU: %s", what, vr_last_error());
                if (st != VR_OK)
                    continue;
                st = vr_bench_gpus_count(b, ops, m, &cfg);
                if (ops->kind == VR_REUSE_MULTI && n > 1) { /* parts.h: multi is not cut */
                    VR_EXPECT(st == VR_ERR_ARG, "%s: %d", what, (int)st);
                    continue;
                }
                VR_EXPECT(st == VR_OK, "%s: %s", what, vr_last_error());
                if (st != VR_OK)
                    continue;
                const uint64_t bad = vr_bench_gpus_compare(b, res, stderr, what);
                VR_EXPECT(bad == 0, "%s: %llu counters and shade counts differ", what,
                          (unsigned long long)bad);
                vr_bench_gpus_times t;
                st = vr_bench_gpus_time(b, &t, ops, m, &cfg, 3);
                VR_EXPECT(st == VR_OK, "%s: timing: %s", what, vr_last_error());
                VR_EXPECT(st != VR_OK || (t.busy >= 1 && t.busy <= n && t.ms_min > 0 &&
                                          t.ms_min <= t.ms_med && t.wall_ms > 0),
                          "%s: busy %u, ms_med %.4f, ms_min %.4f, wall %.4f", what, t.busy,
                          t.ms_med, t.ms_min, t.wall_ms);
                if (s == VR_REUSE_HASH && cull == 0 && k == 0)
                    printf("     %-18s hash %u GPU%s: %.4f ms (slowest device), wall %.4f ms, "
                           "%u busy\n", spec, n, n == 1 ? " " : "s", t.ms_med, t.wall_ms,
                           t.busy);
            }
    }
}

static void check_scene(const char *spec, int *nccl_missing)
{
    vr_mesh m;
    char buf[512];
    const char *path = vr_test_plan_spec(buf, sizeof buf, spec);
    if (!path || !vr_test_load(&m, path))
        return;
    vr_geometry *one = NULL;
    vr_geometry_result res;
    memset(&res, 0, sizeof res);
    VR_EXPECT(vr_geometry_create(&one, &m) == VR_OK, "%s", vr_last_error());
    VR_EXPECT(vr_geometry_result_alloc(&res, m.index_count / 3, m.vertex_count) == VR_OK, "%s",
              vr_last_error());
    int devices = 0;
    vr_sl_device_count(&devices);
    if (devices > 8)
        devices = 8;
    for (int n = 1; one && res.shade_counts && n <= devices && !*nccl_missing; ++n) {
        vr_bench_gpus *b = NULL;
        if (vr_bench_gpus_create(&b, (uint32_t)n, NULL) != VR_OK) {
            /* no library: said once, not a failure of the code under test */
            printf("     SKIP NCCL over %d device%s: %s\n", n, n == 1 ? "" : "s",
                   vr_last_error());
            *nccl_missing = 1;
            break;
        }
        check_gpus(spec, &m, one, &res, b, (uint32_t)n);
        vr_bench_gpus_reset(b);
        vr_bench_gpus_destroy(b);
    }
    vr_geometry_result_free(&res);
    vr_geometry_destroy(one);
    vr_mesh_free(&m);
}

VR_TEST(test_gpu_bench_gpus, "gpu/bench-gpus")
{
    if (vr_test_no_device())
        return VR_TEST_SKIP;
    /* more GPUs than the machine has: refused with the count, before NCCL is looked for */
    int devices = 0;
    vr_sl_device_count(&devices);
    vr_bench_gpus *b = NULL;
    if (devices < 64) {
        VR_EXPECT(vr_bench_gpus_create(&b, (uint32_t)devices + 1, NULL) == VR_ERR_ARG &&
                      strstr(vr_last_error(), "this machine has"),
                  "%s", vr_last_error());
        vr_bench_gpus_destroy(b);
    }
    const char *nccl = getenv("VR_TEST_NCCL");
    if (nccl && !strcmp(nccl, "0")) {
        printf("     NCCL runs left out: VR_TEST_NCCL=0\n");
        return VR_TEST_RESULT();
    }
    int nccl_missing = 0;
    for (int i = 0; i < VR_TEST_PLAN_SCENE_COUNT; ++i)
        check_scene(vr_test_plan_scenes[i], &nccl_missing);
    check_scene("sphere:200", &nccl_missing);
    return VR_TEST_RESULT();
}
