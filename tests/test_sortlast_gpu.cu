/* test_sortlast_gpu.cu - sort-last rendering on the device (raster/sortlast.c): parts on one
 * device composited by kernels, and NCCL over 1..all devices of the machine, each against one
 * GPU run of the same frame - visibility words, image, invocations and raster counts equal.
 * gpu/sortlast: every shared scene, the default sphere, foliage:20k and the 7M meshes;
 * gpu-small/sortlast: fandisk for the sanitizers (NCCL over 2 devices when present).
 * Every configuration runs in core and streamed (vr_renderer_create_streamed: each part
 * streams its share in chunks of about a fifth of it through its own queue - local parts from
 * the device, NCCL ranks from host memory - and the composite moves the parts' shaded pixels
 * with the words); the heatmap, which streams refuse, in core only.
 * NCCL runs report SKIP with the reason where the library or a second device is missing, and are
 * left out with VR_TEST_NCCL=0.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/stage/geometry.h"
#include "raster/raster.h"
#include "raster/sortlast_dev.h"
#include "scenes/scene.h"
#include "tests/test.h"
#include "tests/test_helpers.h"

/* One configuration of parts against the plain GPU renderer `one`, for the strategies listed. */
static void check_config(const char *spec, const vr_mesh *m, vr_renderer *one, uint32_t parts,
                         vr_composite how, const char *const *strategies, int modes,
                         uint32_t w, uint32_t h, int streamed, int *nccl_missing)
{
    vr_renderer *cut = NULL;
    /* streamed: chunks of about a fifth of a part's share, so each part runs several */
    const uint64_t cap = (uint64_t)m->index_count / 3 / parts / 5 + 100;
    /* local parts from the device (gpu/stream runs them from the host), NCCL ranks from the
     * host: the scene's arrays page-locked once for the ranks' threads and devices */
    const vr_stream_config sc = {cap * VR_QUEUE_BYTES_PER_TRIANGLE,
                                 how == VR_COMPOSITE_NCCL ? VR_STREAM_HOST : VR_STREAM_DEVICE};
    const char *kind = streamed ? vr_stream_source_names[sc.source] : "in core";
    VR_EXPECT((streamed ? vr_renderer_create_streamed(&cut, m, 1, &sc)
                        : vr_renderer_create(&cut, m, 1)) == VR_OK,
              "%s", vr_last_error());
    if (!cut)
        return;
    vr_status st = vr_renderer_set_parts(cut, parts, how);
    if (how == VR_COMPOSITE_NCCL && st != VR_OK && !*nccl_missing) {
        /* no library or too few devices: said once, not a failure of the code under test */
        printf("     SKIP NCCL over %u device%s: %s\n", parts, parts == 1 ? "" : "s",
               vr_last_error());
        *nccl_missing = 1;
    }
    if (st != VR_OK) {
        vr_renderer_destroy(cut);
        return;
    }
    vr_render_options o = vr_test_frame_options(m, w, h, 1.3f, 20.0f, 1);
    const size_t px = (size_t)w * h;
    uint8_t *a = (uint8_t *)malloc(px * 4), *b = (uint8_t *)malloc(px * 4);
    uint64_t *va = (uint64_t *)malloc(px * 8), *vb = (uint64_t *)malloc(px * 8);
    for (const char *const *s = strategies; *s; ++s) {
        o.strategy = vr_reuse_find(*s);
        for (int mode = 0; mode < modes; ++mode) {
            if (streamed && mode == VR_SHADE_HEATMAP)
                continue; /* streams refuse it (raster/stream-*) */
            o.mode = (vr_shade_mode)mode;
            vr_render_stats sa, sb;
            VR_EXPECT(vr_renderer_draw(one, a, &o, &sa) == VR_OK, "%s %s: %s", spec, *s,
                      vr_last_error());
            memset(b, 0x5a, px * 4); /* poisoned: an unwritten pixel differs */
            VR_EXPECT(vr_renderer_draw(cut, b, &o, &sb) == VR_OK, "%s %s in %u parts (%s, %s): %s",
                      spec, *s, parts, vr_composite_names[how], kind, vr_last_error());
            VR_EXPECT(vr_renderer_read_vis(one, va, px) == VR_OK &&
                          vr_renderer_read_vis(cut, vb, px) == VR_OK,
                      "%s", vr_last_error());
            size_t words, pixels;
            vr_test_frame_diff(va, vb, a, b, px, &words, &pixels);
            VR_EXPECT(words == 0 && pixels == 0, "%s %s in %u parts (%s, %s), mode %d: %zu "
                      "words, %zu pixels of %zu differ", spec, *s, parts,
                      vr_composite_names[how], kind, mode, words, pixels, px);
            VR_EXPECT(sa.invocations == sb.invocations && sa.batches == sb.batches &&
                          sa.raster.rejected == sb.raster.rejected &&
                          sa.raster.clipped == sb.raster.clipped &&
                          sa.raster.fragments == sb.raster.fragments &&
                          (!streamed || (sb.chunks >= parts && sb.triangles == sa.triangles)),
                      "%s %s in %u parts (%s, %s): invocations %llu / %llu, batches %u / %u, "
                      "rejected %llu / %llu, fragments %llu / %llu, %u chunks", spec, *s, parts,
                      vr_composite_names[how], kind, (unsigned long long)sa.invocations,
                      (unsigned long long)sb.invocations, sa.batches, sb.batches,
                      (unsigned long long)sa.raster.rejected,
                      (unsigned long long)sb.raster.rejected,
                      (unsigned long long)sa.raster.fragments,
                      (unsigned long long)sb.raster.fragments, sb.chunks);
            if (mode == 0)
                printf("     %-18s %-6s %2u parts %-5s %-7s: frame %.3f ms (one run %.3f), "
                       "composite %.3f ms (visibility %.3f), %llu invocations, %u chunks\n",
                       spec, *s, parts, vr_composite_names[how], kind, sb.frame_ms,
                       sa.frame_ms, sb.composite_ms, sb.composite_vis_ms,
                       (unsigned long long)sb.invocations, sb.chunks);
        }
    }
    vr_renderer_destroy(cut);
    free(a), free(b), free(va), free(vb);
}

static const char *const g_all[] = {"naive", "warp", "hash", "phash", "sort", "patch", "meshlet",
                                    NULL};
static const char *const g_big[] = {"naive", "hash", "sort", NULL};

/* Every configuration on one scene: 3 parts on one device, NCCL over 1..devices. */
static void check_scene(const char *spec, int big, int max_devices, int *nccl_missing)
{
    vr_mesh m;
    char buf[512];
    const char *path = vr_test_plan_spec(buf, sizeof buf, spec);
    if (!path || !vr_test_load(&m, path))
        return;
    vr_renderer *one = NULL;
    VR_EXPECT(vr_renderer_create(&one, &m, 1) == VR_OK, "%s", vr_last_error());
    const uint32_t w = big ? 1920 : 640, h = big ? 1080 : 480;
    const char *const *strategies = big ? g_big : g_all;
    const int modes = big ? 1 : VR_SHADE_MODE_COUNT;
    int devices = 0;
    vr_sl_device_count(&devices);
    if (devices > max_devices)
        devices = max_devices;
    if (vr_test_nccl_off()) {
        if (!*nccl_missing)
            printf("     NCCL runs left out: VR_TEST_NCCL=0\n");
        *nccl_missing = 1;
    }
    for (int streamed = 0; streamed < 2 && one; ++streamed) {
        check_config(spec, &m, one, 3, VR_COMPOSITE_LOCAL, strategies, modes, w, h, streamed,
                     nccl_missing);
        for (int n = 1; n <= devices && !*nccl_missing; ++n)
            check_config(spec, &m, one, (uint32_t)n, VR_COMPOSITE_NCCL, strategies, modes, w, h,
                         streamed, nccl_missing);
    }
    vr_renderer_destroy(one);
    vr_mesh_free(&m);
}

VR_TEST(test_gpu_sortlast, "gpu/sortlast")
{
    if (vr_test_no_device())
        return VR_TEST_SKIP;
    int nccl_missing = 0;
    for (int i = 0; i < VR_TEST_PLAN_SCENE_COUNT; ++i)
        check_scene(vr_test_plan_scenes[i], 0, 8, &nccl_missing);
    check_scene("sphere:7M", 1, 8, &nccl_missing);
    check_scene("terrain:7M", 1, 8, &nccl_missing);
    return VR_TEST_RESULT();
}

VR_TEST(test_gpu_small_sortlast, "gpu-small/sortlast")
{
    if (vr_test_no_device())
        return VR_TEST_SKIP;
    int nccl_missing = 0;
    check_scene("fandisk.obj", 0, 2, &nccl_missing);
    return VR_TEST_RESULT();
}
