/* test_raster_gpu.cu - the GPU rasterizer (raster/raster.cu) against its CPU twin: for the small
 * cases of tests/test_raster.c and for real scenes (queues from the naive CPU twin, several
 * cameras incl. one inside the mesh for near clipping) the visibility buffer, the counts and
 * all three resolved images must be bit-identical, repeated runs and a reversed queue must give
 * the same depth image, and the vr_raster_device and vr_renderer paths must work end to end.
 * Groups: "gpu-small/raster-..." (hand cases) and "gpu/raster-..." (scenes). Without a CUDA
 * device every test prints "SKIP: no CUDA device" and skips.
 */
#include "tests/test.h"

#include <cuda_runtime.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/stage/geometry.h"
#include "pipeline/vr_check.h"
#include "raster/raster.h"
#include "scenes/scene.h"
#include "tests/test_helpers.h" /* shared with tests/test_raster.c */

/* Device copy of a host queue's first n slots (capacity n). */
static void queue_upload(vr_queue *d, const vr_queue *h, uint32_t n)
{
    memset(d, 0, sizeof *d);
    d->capacity = n;
    VR_EXPECT_CUDA(cudaMalloc((void **)&d->clip, (size_t)n * 48 + 16));
    VR_EXPECT_CUDA(cudaMalloc((void **)&d->normal, (size_t)n * 48 + 16));
    VR_EXPECT_CUDA(cudaMalloc((void **)&d->vertex, (size_t)n * 12 + 16));
    VR_EXPECT_CUDA(cudaMalloc((void **)&d->tri_id, (size_t)n * 4 + 16));
    VR_EXPECT_CUDA(cudaMemcpy(d->clip, h->clip, (size_t)n * 48, cudaMemcpyHostToDevice));
    VR_EXPECT_CUDA(cudaMemcpy(d->normal, h->normal, (size_t)n * 48, cudaMemcpyHostToDevice));
    VR_EXPECT_CUDA(cudaMemcpy(d->vertex, h->vertex, (size_t)n * 12, cudaMemcpyHostToDevice));
    VR_EXPECT_CUDA(cudaMemcpy(d->tri_id, h->tri_id, (size_t)n * 4, cudaMemcpyHostToDevice));
}

static void queue_free_device(vr_queue *d)
{
    VR_EXPECT_CUDA(cudaFree(d->clip));
    VR_EXPECT_CUDA(cudaFree(d->normal));
    VR_EXPECT_CUDA(cudaFree(d->vertex));
    VR_EXPECT_CUDA(cudaFree(d->tri_id));
    memset(d, 0, sizeof *d);
}

template <typename T> static T *device_copy(const T *h, size_t n)
{
    T *d = NULL;
    VR_EXPECT_CUDA(cudaMalloc((void **)&d, n * sizeof(T) + 16));
    if (n)
        VR_EXPECT_CUDA(cudaMemcpy(d, h, n * sizeof(T), cudaMemcpyHostToDevice));
    return d;
}

/* Counts mismatching elements, printing the first few with their pixel. */
template <typename T>
static size_t diff_report(const T *got, const T *want, size_t n, uint32_t width, const char *what)
{
    size_t bad = 0;
    for (size_t i = 0; i < n; ++i)
        if (got[i] != want[i] && bad++ < 5)
            fprintf(stderr, "  %s: pixel (%zu, %zu): GPU %llx, CPU %llx\n", what, i % width,
                    i / width, (unsigned long long)got[i], (unsigned long long)want[i]);
    return bad;
}

/* GPU vs CPU on one queue: vis buffer and counts with each --big mode (so hp == CPU twin ==
 * list), twice each for determinism; then the three resolve modes. */
static void gpu_compare(const vr_queue *hq, uint32_t n, const vr_raster_config *cfg,
                        const uint32_t *counts, uint32_t vertex_count, const char *label)
{
    const size_t pixels = (size_t)cfg->width * cfg->height;
    uint64_t *want = (uint64_t *)malloc(pixels * 8), *got = (uint64_t *)malloc(pixels * 8);
    uint32_t *want_img = (uint32_t *)malloc(pixels * 4), *got_img = (uint32_t *)malloc(pixels * 4);
    uint32_t *batch = (uint32_t *)malloc(((size_t)n + 1) * 4);
    for (uint32_t t = 0; t < n; ++t)
        batch[t] = t / 7;
    vr_raster_stats ws, gs;
    VR_EXPECT(vr_raster_ref(want, hq, n, cfg, &ws) == VR_OK, "%s: ref: %s", label, vr_last_error());

    vr_queue dq;
    queue_upload(&dq, hq, n);
    uint64_t *d_vis = NULL;
    uint8_t *d_img = NULL;
    VR_EXPECT_CUDA(cudaMalloc((void **)&d_vis, pixels * 8));
    VR_EXPECT_CUDA(cudaMalloc((void **)&d_img, pixels * 4));
    uint32_t *d_counts = device_copy(counts, vertex_count);
    uint32_t *d_batch = device_copy(batch, n);
    for (int run = 0; run < 2 * VR_RASTER_BIG_MODE_COUNT; ++run) {
        vr_raster_config c = *cfg;
        /* hp first, the list (default) last: the resolve below reads its buffer */
        c.big_mode = VR_RASTER_BIG_MODE_COUNT - 1 - run / 2;
        const char *big = vr_raster_big_mode_name(c.big_mode);
        vr_status s = vr_raster_gpu(d_vis, &dq, n, &c, &gs, NULL, NULL);
        VR_EXPECT(s == VR_OK, "%s (--big %s): vr_raster_gpu: %s", label, big, vr_last_error());
        VR_EXPECT_CUDA(cudaMemcpy(got, d_vis, pixels * 8, cudaMemcpyDeviceToHost));
        const size_t bad = diff_report(got, want, pixels, cfg->width, label);
        VR_EXPECT(bad == 0, "%s (--big %s, run %d): %zu of %zu visibility words differ", label,
                  big, run % 2, bad, pixels);
        VR_EXPECT(gs.rejected == ws.rejected && gs.clipped == ws.clipped &&
                      gs.fragments == ws.fragments,
                  "%s (--big %s): GPU counts %llu/%llu/%llu, CPU %llu/%llu/%llu "
                  "(rejected/clipped/fragments)",
                  label, big, (unsigned long long)gs.rejected, (unsigned long long)gs.clipped,
                  (unsigned long long)gs.fragments, (unsigned long long)ws.rejected,
                  (unsigned long long)ws.clipped, (unsigned long long)ws.fragments);
    }
    for (int mode = 0; mode < VR_SHADE_MODE_COUNT; ++mode) {
        vr_resolve_params hp = vr_resolve_params_default();
        hp.mode = (vr_shade_mode)mode;
        hp.shade_counts = counts;
        hp.vertex_count = vertex_count;
        hp.tri_batch = batch;
        hp.tri_batch_count = n;
        vr_resolve_params dp = hp;
        dp.shade_counts = d_counts;
        dp.tri_batch = d_batch;
        VR_EXPECT(vr_resolve_ref((uint8_t *)want_img, want, hq, n, cfg, &hp, NULL) == VR_OK,
                  "%s: resolve ref: %s", label, vr_last_error());
        VR_EXPECT(vr_resolve_gpu(d_img, d_vis, &dq, n, cfg, &dp, NULL, NULL) == VR_OK,
                  "%s: resolve gpu: %s", label, vr_last_error());
        VR_EXPECT_CUDA(cudaMemcpy(got_img, d_img, pixels * 4, cudaMemcpyDeviceToHost));
        char what[160];
        snprintf(what, sizeof what, "%s mode %d", label, mode);
        const size_t bad = diff_report(got_img, want_img, pixels, cfg->width, what);
        VR_EXPECT(bad == 0, "%s: %zu of %zu pixels differ", what, bad, pixels);
    }
    VR_EXPECT_CUDA(cudaFree(d_vis));
    VR_EXPECT_CUDA(cudaFree(d_img));
    VR_EXPECT_CUDA(cudaFree(d_counts));
    VR_EXPECT_CUDA(cudaFree(d_batch));
    queue_free_device(&dq);
    free(want), free(got), free(want_img), free(got_img), free(batch);
}

VR_TEST(test_gpu_small_raster_cases, "gpu-small/raster-cases")
{
    if (vr_test_no_device())
        return VR_TEST_SKIP;
    for (size_t c = 0;; ++c) {
        vr_queue q;
        uint32_t n;
        vr_raster_config cfg;
        const char *name;
        if (vr_test_raster_case(c, &q, &n, &cfg, &name) != VR_OK)
            break;
        uint32_t vc = 0;
        for (size_t i = 0; i < 3 * (size_t)n; ++i)
            vc = q.vertex[i] + 1 > vc ? q.vertex[i] + 1 : vc;
        uint32_t *counts = (uint32_t *)malloc(((size_t)vc + 1) * 4);
        for (uint32_t v = 0; v < vc; ++v)
            counts[v] = 1 + v % 7;
        for (int cull = 0; cull < 2; ++cull) {
            cfg.cull_back = cull;
            char label[64];
            snprintf(label, sizeof label, "%s%s", name, cull ? " (cull)" : "");
            gpu_compare(&q, n, &cfg, counts, vc, label);
        }
        free(counts);
        vr_test_raster_queue_free(&q);
    }
    return VR_TEST_RESULT();
}

/* The large-box cases (vr_test_raster_big_case) with both --big paths against the CPU twin;
 * `large`: at 1920x1080 with 10,000 overlapping triangles (the list overflows and falls back,
 * the pyramid holds them all). Also an empty queue, which must only clear. */
static void check_big_cases(int large)
{
    for (size_t c = 0;; ++c) {
        vr_queue q;
        uint32_t n;
        vr_raster_config cfg;
        const char *name;
        if (vr_test_raster_big_case(c, large, &q, &n, &cfg, &name) != VR_OK)
            break;
        uint32_t *counts = (uint32_t *)malloc(((size_t)3 * n + 1) * 4);
        for (uint32_t v = 0; v < 3 * n; ++v)
            counts[v] = 1 + v % 5;
        char label[96];
        snprintf(label, sizeof label, "%s %ux%u", name, cfg.width, cfg.height);
        gpu_compare(&q, n, &cfg, counts, 3 * n, label);
        free(counts);
        vr_test_raster_queue_free(&q);
    }
    vr_raster_config cfg = {64, 32, 0, VR_RASTER_BIG_LIST, 0};
    vr_queue dq;
    memset(&dq, 0, sizeof dq);
    uint64_t *d_vis = NULL, vis[64 * 32];
    VR_EXPECT_CUDA(cudaMalloc((void **)&d_vis, sizeof vis));
    for (int mode = 0; mode < VR_RASTER_BIG_MODE_COUNT; ++mode) {
        cfg.big_mode = mode;
        VR_EXPECT_CUDA(cudaMemset(d_vis, 0, sizeof vis));
        VR_EXPECT(vr_raster_gpu(d_vis, &dq, 0, &cfg, NULL, NULL, NULL) == VR_OK,
                  "empty queue (--big %s): %s", vr_raster_big_mode_name(mode), vr_last_error());
        VR_EXPECT_CUDA(cudaMemcpy(vis, d_vis, sizeof vis, cudaMemcpyDeviceToHost));
        size_t bad = 0;
        for (size_t i = 0; i < 64 * 32; ++i)
            bad += vis[i] != VR_VIS_EMPTY;
        VR_EXPECT(bad == 0, "empty queue (--big %s): %zu words not cleared",
                  vr_raster_big_mode_name(mode), bad);
    }
    VR_EXPECT_CUDA(cudaFree(d_vis));
}

VR_TEST(test_gpu_small_raster_big, "gpu-small/raster-big")
{
    if (vr_test_no_device())
        return VR_TEST_SKIP;
    check_big_cases(0);
    return VR_TEST_RESULT();
}

VR_TEST(test_gpu_raster_big, "gpu/raster-big")
{
    if (vr_test_no_device())
        return VR_TEST_SKIP;
    check_big_cases(1);
    return VR_TEST_RESULT();
}

/* A real scene's queue from the naive CPU twin at three cameras, 1920x1080. */
static int check_scene(const char *file, int reverse)
{
    char path[512];
    if (!vr_test_scene_path(path, sizeof path, file)) {
        printf("SKIP: scenes directory missing (set VR_SCENES)\n");
        return 0;
    }
    vr_mesh m;
    if (vr_mesh_load(&m, path) != VR_OK) {
        VR_EXPECT(0, "%s: %s", file, vr_last_error());
        return 0;
    }
    const uint32_t tris = m.index_count / 3;
    vr_geometry_result res;
    VR_EXPECT(vr_geometry_result_alloc(&res, tris, m.vertex_count) == VR_OK, "%s", vr_last_error());
    vr_camera cam;
    vr_camera_fit(&cam, &m);
    const float views[3][3] = {{0, 15, 1}, {120, -30, 1.3f}, {200, 10, 6}}; /* yaw pitch zoom */
    for (int v = 0; v < 3; ++v) {
        cam.yaw = views[v][0], cam.pitch = views[v][1], cam.zoom = views[v][2];
        vr_raster_config cfg = {1920, 1080, v == 1, 0, 0};
        vr_reuse_params p = vr_reuse_params_default();
        vr_camera_shader(&p.shader, &cam, cfg.width, cfg.height);
        p.count = 1;
        VR_EXPECT(vr_geometry_ref(&res, vr_reuse_find("naive"), &m, &p) == VR_OK, "%s",
                  vr_last_error());
        char label[128];
        snprintf(label, sizeof label, "%s view %d", file, v);
        if (reverse) {
            /* the same triangles in reverse slot order: equal depth image */
            vr_queue r;
            r.capacity = tris;
            r.clip = (float *)malloc((size_t)tris * 48);
            r.normal = (float *)malloc((size_t)tris * 48);
            r.vertex = (uint32_t *)malloc((size_t)tris * 12);
            r.tri_id = (uint32_t *)malloc((size_t)tris * 4);
            for (uint32_t s = 0; s < tris; ++s) {
                const uint32_t t = tris - 1 - s;
                memcpy(r.clip + 12 * (size_t)t, res.queue.clip + 12 * (size_t)s, 48);
                memcpy(r.normal + 12 * (size_t)t, res.queue.normal + 12 * (size_t)s, 48);
                memcpy(r.vertex + 3 * (size_t)t, res.queue.vertex + 3 * (size_t)s, 12);
                r.tri_id[t] = res.queue.tri_id[s];
            }
            const size_t pixels = (size_t)cfg.width * cfg.height;
            uint64_t *a = (uint64_t *)malloc(pixels * 8), *b = (uint64_t *)malloc(pixels * 8);
            uint64_t *d_vis = NULL;
            vr_queue dq, dr;
            queue_upload(&dq, &res.queue, tris);
            queue_upload(&dr, &r, tris);
            VR_EXPECT_CUDA(cudaMalloc((void **)&d_vis, pixels * 8));
            VR_EXPECT(vr_raster_gpu(d_vis, &dq, tris, &cfg, NULL, NULL, NULL) == VR_OK, "%s",
                      vr_last_error());
            VR_EXPECT_CUDA(cudaMemcpy(a, d_vis, pixels * 8, cudaMemcpyDeviceToHost));
            VR_EXPECT(vr_raster_gpu(d_vis, &dr, tris, &cfg, NULL, NULL, NULL) == VR_OK, "%s",
                      vr_last_error());
            VR_EXPECT_CUDA(cudaMemcpy(b, d_vis, pixels * 8, cudaMemcpyDeviceToHost));
            size_t depth_bad = 0;
            for (size_t i = 0; i < pixels; ++i)
                depth_bad += a[i] >> 32 != b[i] >> 32;
            VR_EXPECT(depth_bad == 0, "%s: reversed queue changes %zu depths", label, depth_bad);
            VR_EXPECT_CUDA(cudaFree(d_vis));
            queue_free_device(&dq);
            queue_free_device(&dr);
            free(a), free(b), free(r.clip), free(r.normal), free(r.vertex), free(r.tri_id);
        } else {
            gpu_compare(&res.queue, tris, &cfg, res.shade_counts, m.vertex_count, label);
        }
    }
    vr_geometry_result_free(&res);
    vr_mesh_free(&m);
    return 1;
}

VR_TEST(test_gpu_small_raster_bunny, "gpu-small/raster-bunny")
{
    if (vr_test_no_device())
        return VR_TEST_SKIP;
    return check_scene("stanford-bunny.obj", 0) ? VR_TEST_RESULT() : VR_TEST_SKIP;
}

VR_TEST(test_gpu_raster_scenes, "gpu/raster-scenes")
{
    if (vr_test_no_device())
        return VR_TEST_SKIP;
    static const char *files[] = {"horse.ply",      "igea.ply", "teapot.obj", "fandisk.obj",
                                  "rocker-arm.obj", "spot.obj", "cow.obj"};
    int any = 0;
    for (size_t f = 0; f < sizeof files / sizeof files[0]; ++f)
        any |= check_scene(files[f], 0);
    any |= check_scene("stanford-bunny.obj", 1);
    return any ? VR_TEST_RESULT() : VR_TEST_SKIP;
}

/* vr_raster_device (upload + draw) and vr_renderer on the GPU: the device path's image equals
 * the CPU twin's image of the same queue; the renderer's GPU and CPU frames count the same
 * invocations and the same image, pixel for pixel (the vertex shader rounds identically on both
 * sides, reuse/shaders.h). */
VR_TEST(test_gpu_raster_render, "gpu/raster-render")
{
    if (vr_test_no_device())
        return VR_TEST_SKIP;
    vr_mesh m;
    VR_EXPECT(vr_generate_sphere(&m, 200000) == VR_OK, "%s", vr_last_error());
    const uint32_t tris = m.index_count / 3;
    vr_render_options o;
    memset(&o, 0, sizeof o);
    o.strategy = vr_reuse_find("hash");
    o.mode = VR_SHADE_HEATMAP;
    vr_camera_fit(&o.camera, &m);
    o.camera.zoom = 1.5f;
    o.raster.width = 1280;
    o.raster.height = 720;
    o.shade = vr_resolve_params_default();
    const size_t pixels = (size_t)o.raster.width * o.raster.height;
    uint8_t *a = (uint8_t *)malloc(pixels * 4), *b = (uint8_t *)malloc(pixels * 4);
    vr_renderer *gpu = NULL, *cpu = NULL;
    VR_EXPECT(vr_renderer_create(&gpu, &m, 1) == VR_OK, "%s", vr_last_error());
    VR_EXPECT(vr_renderer_create(&cpu, &m, 0) == VR_OK, "%s", vr_last_error());
    for (int s = 0; s < VR_REUSE_KIND_COUNT && gpu && cpu; ++s) {
        o.strategy = &vr_reuse_all[s];
        for (int mode = 0; mode < VR_SHADE_MODE_COUNT; ++mode) {
            o.mode = (vr_shade_mode)mode;
            vr_render_stats gs, cs;
            vr_status st = vr_renderer_draw(gpu, a, &o, &gs);
            if (st != VR_OK && strstr(vr_last_error(), "not implemented"))
                break; /* a strategy still being written */
            VR_EXPECT(st == VR_OK, "%s: GPU frame: %s", o.strategy->name, vr_last_error());
            VR_EXPECT(vr_renderer_draw(cpu, b, &o, &cs) == VR_OK, "%s: CPU frame: %s",
                      o.strategy->name, vr_last_error());
            VR_EXPECT(gs.invocations == cs.invocations, "%s: GPU %llu invocations, CPU %llu",
                      o.strategy->name, (unsigned long long)gs.invocations,
                      (unsigned long long)cs.invocations);
            size_t differ = 0;
            for (size_t i = 0; i < pixels; ++i)
                differ += memcmp(a + 4 * i, b + 4 * i, 4) != 0;
            VR_EXPECT(differ == 0, "%s mode %d: %zu of %zu pixels differ",
                      o.strategy->name, mode, differ, pixels);
            if (mode == 0)
                printf("     %-6s GPU geometry %.3f ms, raster %.3f ms, resolve %.3f ms, %zu "
                       "pixels differ from the CPU frame\n",
                       o.strategy->name, gs.geometry_ms, gs.raster.raster_ms,
                       gs.raster.resolve_ms, differ);
        }
    }
    /* patch with the GPU builder: the GPU frame's batch colours come from the stage's plan
     * (vr_geometry_plan_batch_ids), the CPU frame's from the builder's reference */
    o.strategy = vr_reuse_find("patch");
    o.patch_builder = VR_PATCH_BUILDER_GPU;
    for (int mode = 0; mode < VR_SHADE_MODE_COUNT && gpu && cpu; ++mode) {
        o.mode = (vr_shade_mode)mode;
        vr_render_stats gs, cs;
        VR_EXPECT(vr_renderer_draw(gpu, a, &o, &gs) == VR_OK, "patch (GPU builder): GPU frame: "
                  "%s", vr_last_error());
        VR_EXPECT(vr_renderer_draw(cpu, b, &o, &cs) == VR_OK, "patch (GPU builder): CPU frame: "
                  "%s", vr_last_error());
        VR_EXPECT(gs.batches == cs.batches && gs.invocations == cs.invocations,
                  "patch (GPU builder): GPU %u batches / %llu invocations, CPU %u / %llu",
                  gs.batches, (unsigned long long)gs.invocations, cs.batches,
                  (unsigned long long)cs.invocations);
        VR_EXPECT(memcmp(a, b, pixels * 4) == 0, "patch (GPU builder), mode %d: frames differ",
                  mode);
    }
    o.patch_builder = VR_PATCH_BUILDER_CPU;
    vr_renderer_destroy(gpu);
    vr_renderer_destroy(cpu);

    /* the device path on one fixed queue: equal to the CPU twin bit for bit */
    vr_geometry_result res;
    VR_EXPECT(vr_geometry_result_alloc(&res, tris, m.vertex_count) == VR_OK, "%s", vr_last_error());
    vr_reuse_params p = vr_reuse_params_default();
    vr_camera_shader(&p.shader, &o.camera, o.raster.width, o.raster.height);
    p.count = 1;
    VR_EXPECT(vr_geometry_ref(&res, vr_reuse_find("naive"), &m, &p) == VR_OK, "%s",
              vr_last_error());
    vr_raster_device *d = NULL;
    VR_EXPECT(vr_raster_device_create(&d, tris, m.vertex_count) == VR_OK, "%s", vr_last_error());
    vr_raster_stats st;
    memset(&st, 0, sizeof st);
    VR_EXPECT(vr_raster_device_upload(d, &res.queue, tris, res.shade_counts, NULL, 0, &st) == VR_OK,
              "%s", vr_last_error());
    vr_resolve_params rp = vr_resolve_params_default();
    rp.mode = VR_SHADE_HEATMAP;
    VR_EXPECT(vr_raster_device_draw(d, a, NULL, NULL, tris, &o.raster, &rp, &st) == VR_OK, "%s",
              vr_last_error());
    uint64_t *vis = (uint64_t *)malloc(pixels * 8);
    VR_EXPECT(vr_raster_ref(vis, &res.queue, tris, &o.raster, NULL) == VR_OK, "%s", vr_last_error());
    rp.shade_counts = res.shade_counts;
    rp.vertex_count = m.vertex_count;
    VR_EXPECT(vr_resolve_ref(b, vis, &res.queue, tris, &o.raster, &rp, NULL) == VR_OK, "%s",
              vr_last_error());
    VR_EXPECT(memcmp(a, b, pixels * 4) == 0, "device path image differs from the CPU twin");
    printf("     device path 1280x720, %u triangles: upload %.3f, clear %.3f, raster %.3f, "
           "resolve %.3f, download %.3f ms\n",
           tris, st.upload_ms, st.clear_ms, st.raster_ms, st.resolve_ms, st.download_ms);
    /* bad input: a size out of range is refused, not launched */
    vr_raster_config bad = {0, 10, 0, VR_RASTER_BIG_LIST, 0};
    VR_EXPECT(vr_raster_device_draw(d, a, NULL, NULL, tris, &bad, &rp, &st) == VR_ERR_ARG,
              "size 0x10 accepted");
    vr_raster_device_destroy(d);
    vr_geometry_result_free(&res);
    free(a), free(b), free(vis);
    vr_mesh_free(&m);
    return VR_TEST_RESULT();
}

/* More large sub-triangles than the big-triangle list holds (sphere:300k filling 4096x4096: about
 * 300k boxes of more than 32 pixels against 64Ki entries): the overflow falls back to the
 * one-thread walk, and the image still equals the CPU twin's. The same holds for --big hp
 * (gpu_compare runs both), whose 64Ki records overflow here too. */
VR_TEST(test_gpu_raster_big_list, "gpu/raster-big-list")
{
    if (vr_test_no_device())
        return VR_TEST_SKIP;
    vr_mesh m;
    if (vr_mesh_load(&m, "sphere:300k") != VR_OK) {
        VR_EXPECT(0, "%s", vr_last_error());
        return VR_TEST_FAIL;
    }
    const uint32_t tris = m.index_count / 3;
    vr_geometry_result res;
    VR_EXPECT(vr_geometry_result_alloc(&res, tris, m.vertex_count) == VR_OK, "%s", vr_last_error());
    vr_camera cam;
    vr_camera_fit(&cam, &m);
    cam.zoom = 1.6f;
    vr_raster_config cfg = {4096, 4096, 0, 0, 0};
    vr_reuse_params p = vr_reuse_params_default();
    vr_camera_shader(&p.shader, &cam, cfg.width, cfg.height);
    p.count = 1;
    VR_EXPECT(vr_geometry_ref(&res, vr_reuse_find("naive"), &m, &p) == VR_OK, "%s",
              vr_last_error());
    if (!vr_test_failures)
        gpu_compare(&res.queue, tris, &cfg, res.shade_counts, m.vertex_count, "sphere:300k 4096^2");
    vr_geometry_result_free(&res);
    vr_mesh_free(&m);
    return VR_TEST_RESULT();
}
