/* test_render_graph_gpu.cu - the renderer's CUDA-graph frame (vr_render_options.graph, raster/
 * render.c) against the stage-by-stage frame of the same renderer: visibility words, image,
 * invocations, batches and raster counts equal for every strategy, shading mode and big-triangle
 * mode; a camera change between graph frames (the executable graph updated in place), a size
 * change (new buffers: captured anew), a replay with nothing changed, and graph frames after
 * plain ones and after other cameras (a word left over from an earlier frame would show) give
 * the plain frame's results too; so do graph frames in a row at zooms that cover much less, then
 * much more of the image (each clears and repaints only the tiles the one before flagged). The
 * plain frame equals the CPU twin in gpu/raster-render.
 * gpu/render-graph: every shared scene in forsyth order at 1280x720, and sphere:1M at 1080p;
 * gpu-small/render-graph: fandisk at 320x240, naive, hash, sort and multi (sanitizers). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "raster/raster.h"
#include "scenes/scene.h"
#include "tests/test.h"
#include "tests/test_helpers.h"

/* graph frames in a row (see the loop below): a tile drawn at zoom 3 and not at 1.2 goes
 * DRAWN -> STALE (background written) -> IDLE (left as it is) over the two frames at 1.2, and
 * back to DRAWN at 3 */
#define ZOOMS 5
static const float zooms[ZOOMS] = {0.4f, 3.0f, 1.2f, 1.2f, 3.0f};

typedef struct frame_buf {
    uint8_t *rgba;
    uint64_t *vis;
    vr_render_stats st;
} frame_buf;

/* One frame of `o` with graph = `graph` into f (the image poisoned first: an unwritten pixel
 * differs); 0 when the frame failed. */
static int draw(vr_renderer *r, vr_render_options o, int graph, frame_buf *f, size_t px,
                const char *what)
{
    o.graph = graph;
    memset(f->rgba, 0x5a, px * 4);
    const vr_status s = vr_renderer_draw(r, f->rgba, &o, &f->st);
    VR_EXPECT(s == VR_OK, "%s (%s): %s", what, graph ? "graph" : "plain", vr_last_error());
    if (s != VR_OK)
        return 0;
    VR_EXPECT(f->st.graph == graph, "%s: the frame says graph %d, asked for %d", what,
              f->st.graph, graph);
    VR_EXPECT(vr_renderer_read_vis(r, f->vis, px) == VR_OK, "%s", vr_last_error());
    return 1;
}

static void compare(const frame_buf *a, const frame_buf *b, size_t px, const char *what)
{
    size_t words, pixels;
    vr_test_frame_diff(a->vis, b->vis, a->rgba, b->rgba, px, &words, &pixels);
    VR_EXPECT(words == 0 && pixels == 0, "%s: %zu words, %zu pixels of %zu differ (graph vs "
              "plain)", what, words, pixels, px);
    const vr_render_stats *x = &a->st, *y = &b->st;
    VR_EXPECT(x->invocations == y->invocations && x->triangles == y->triangles &&
                  x->batches == y->batches && x->raster.rejected == y->raster.rejected &&
                  x->raster.clipped == y->raster.clipped &&
                  x->raster.fragments == y->raster.fragments,
              "%s: invocations %llu / %llu, batches %u / %u, rejected %llu / %llu, clipped "
              "%llu / %llu, fragments %llu / %llu", what, (unsigned long long)x->invocations,
              (unsigned long long)y->invocations, x->batches, y->batches,
              (unsigned long long)x->raster.rejected, (unsigned long long)y->raster.rejected,
              (unsigned long long)x->raster.clipped, (unsigned long long)y->raster.clipped,
              (unsigned long long)x->raster.fragments, (unsigned long long)y->raster.fragments);
    VR_EXPECT(a->st.gpu_frame_ms > 0, "%s: no GPU frame time", what);
}

/* `only`: a comma-separated list of strategies, or NULL for all of them */
static void check_scene(const char *spec, uint32_t w, uint32_t h, const char *only)
{
    vr_mesh m;
    if (!vr_test_load_forsyth(&m, spec))
        return;
    vr_renderer *r = NULL;
    VR_EXPECT(vr_renderer_create(&r, &m, 1) == VR_OK, "%s", vr_last_error());
    const size_t px = (size_t)w * h;
    frame_buf g, p, zg[ZOOMS];
    g.rgba = (uint8_t *)malloc(px * 4), p.rgba = (uint8_t *)malloc(px * 4);
    g.vis = (uint64_t *)malloc(px * 8), p.vis = (uint64_t *)malloc(px * 8);
    for (int z = 0; z < ZOOMS; ++z)
        zg[z].rgba = (uint8_t *)malloc(px * 4), zg[z].vis = (uint64_t *)malloc(px * 8);
    vr_render_options o = vr_test_frame_options(&m, w, h, 1.2f, 0.0f, 1);
    char what[160];
    double plain_ms = 0, graph_ms = 0;
    for (int s = 0; s < VR_REUSE_KIND_COUNT && r; ++s) {
        o.strategy = &vr_reuse_all[s];
        char key[32];
        snprintf(key, sizeof key, ",%s,", o.strategy->name);
        char list[96];
        snprintf(list, sizeof list, ",%s,", only ? only : "");
        if (only && !strstr(list, key))
            continue;
        for (int mode = 0; mode < VR_SHADE_MODE_COUNT; ++mode)
            for (int big = 0; big < 2; ++big) {
                o.mode = (vr_shade_mode)mode;
                o.raster.big_mode = big ? VR_RASTER_BIG_HP : VR_RASTER_BIG_LIST;
                o.camera.yaw = 0;
                snprintf(what, sizeof what, "%s %s mode %d big %s", spec, o.strategy->name,
                         mode, big ? "hp" : "list");
                if (!draw(r, o, 0, &p, px, what) || !draw(r, o, 1, &g, px, what))
                    continue;
                compare(&g, &p, px, what);
                /* nothing changed: the same graph replayed */
                if (draw(r, o, 1, &g, px, what))
                    compare(&g, &p, px, what);
                if (mode == 0 && big == 0)
                    plain_ms += p.st.gpu_frame_ms, graph_ms += g.st.gpu_frame_ms;
                /* a new camera: captured again, the executable graph updated */
                o.camera.yaw = 40;
                snprintf(what, sizeof what, "%s %s mode %d big %s yaw 40", spec,
                         o.strategy->name, mode, big ? "hp" : "list");
                if (draw(r, o, 1, &g, px, what) && draw(r, o, 0, &p, px, what))
                    compare(&g, &p, px, what);
                /* back to the first camera, after a plain frame: a word left over from an
                 * earlier frame (yaw 0 or 40) would show here */
                o.camera.yaw = 0;
                snprintf(what, sizeof what, "%s %s mode %d big %s yaw 0 again", spec,
                         o.strategy->name, mode, big ? "hp" : "list");
                if (draw(r, o, 1, &g, px, what) && draw(r, o, 0, &p, px, what))
                    compare(&g, &p, px, what);
                if (draw(r, o, 1, &g, px, what))
                    compare(&g, &p, px, what);
                /* graph frames in a row that cover less, then more of the image: each clears
                 * and repaints only the tiles the one before flagged (vr_raster_frame_tiles),
                 * so a tile missed by the flags would keep an old word or pixel */
                int drawn = 0;
                for (int z = 0; z < ZOOMS; ++z) {
                    vr_render_options oz = o;
                    oz.camera.zoom = zooms[z];
                    snprintf(what, sizeof what, "%s %s mode %d big %s zoom %.1f", spec,
                             o.strategy->name, mode, big ? "hp" : "list", zooms[z]);
                    drawn += draw(r, oz, 1, &zg[z], px, what);
                }
                for (int z = 0; z < ZOOMS && drawn == ZOOMS; ++z) {
                    vr_render_options oz = o;
                    oz.camera.zoom = zooms[z];
                    snprintf(what, sizeof what, "%s %s mode %d big %s zoom %.1f", spec,
                             o.strategy->name, mode, big ? "hp" : "list", zooms[z]);
                    if (draw(r, oz, 0, &p, px, what))
                        compare(&zg[z], &p, px, what);
                }
            }
    }
    /* a smaller image (the same buffers, other arguments), then back */
    o.strategy = vr_reuse_find("hash");
    o.mode = VR_SHADE_LAMBERT;
    o.raster.big_mode = VR_RASTER_BIG_LIST;
    for (int k = 0; k < 2 && r; ++k) {
        vr_render_options q = o;
        if (k == 0)
            q.raster.width = w / 2, q.raster.height = h / 2;
        const size_t qpx = (size_t)q.raster.width * q.raster.height;
        snprintf(what, sizeof what, "%s hash %ux%u", spec, q.raster.width, q.raster.height);
        if (draw(r, q, 1, &g, qpx, what) && draw(r, q, 0, &p, qpx, what))
            compare(&g, &p, qpx, what);
    }
    printf("     %-20s %ux%u: GPU frame (lambert, list) summed over strategies: plain %.3f ms, "
           "graph %.3f ms\n", spec, w, h, plain_ms, graph_ms);
    vr_renderer_destroy(r);
    free(g.rgba), free(p.rgba), free(g.vis), free(p.vis);
    for (int z = 0; z < ZOOMS; ++z)
        free(zg[z].rgba), free(zg[z].vis);
    vr_mesh_free(&m);
}

VR_TEST(test_gpu_render_graph, "gpu/render-graph")
{
    if (vr_test_no_device())
        return VR_TEST_SKIP;
    for (int i = 0; i < VR_TEST_PLAN_SCENE_COUNT; ++i)
        check_scene(vr_test_plan_scenes[i], 1280, 720, NULL);
    check_scene("sphere:1M", 1920, 1080, "naive,hash");
    return VR_TEST_RESULT();
}

VR_TEST(test_gpu_small_render_graph, "gpu-small/render-graph")
{
    if (vr_test_no_device())
        return VR_TEST_SKIP;
    check_scene("fandisk.obj", 320, 240, "naive,hash,sort,multi");
    return VR_TEST_RESULT();
}
