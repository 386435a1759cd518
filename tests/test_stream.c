/* test_stream.c - bounded streaming on the CPU twins (pipeline/stage/parts.h's
 * vr_parts_make_bounded, raster/stream.c): the chunks cover the stream in order, each within the
 * capacity and each batch whole; the streamed renderer gives the in-core renderer's visibility
 * words, image (Lambert and batch colours), invocations and raster counts exactly, for every
 * strategy it accepts and chunk sizes from a few batches to the whole mesh. Everything but the
 * staging copies; tests/test_stream_gpu.cu adds the device.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/stage/parts.h"
#include "raster/raster.h"
#include "scenes/scene.h"
#include "tests/test.h"
#include "tests/test_helpers.h"

#define W 160
#define H 120

/* The cut: consecutive chunks, each at most `cap` triangles, batches whole and in order. */
static void check_cut(const vr_mesh *m, const char *name, const vr_reuse_ops *ops, uint32_t cap)
{
    vr_reuse_params cfg = vr_reuse_params_default();
    vr_batch_limits lim = vr_batch_limits_paper();
    vr_batch_limits_apply(&cfg, &lim);
    vr_parts p;
    VR_EXPECT(vr_parts_make_bounded(&p, ops, m, &cfg, cap) == VR_OK, "%s %s: %s", name,
              ops->name, vr_last_error());
    uint32_t next_tri = 0, next_batch = 0;
    for (uint32_t k = 0; k < p.count && !vr_test_failures; ++k) {
        const vr_part *c = &p.part[k];
        const uint32_t n = c->mesh.index_count / 3;
        VR_EXPECT(c->first_tri == next_tri && c->batch_begin == next_batch && n > 0 && n <= cap,
                  "%s %s chunk %u of %u: first %u (want %u), batches from %u (want %u), %u "
                  "triangles (cap %u)", name, ops->name, k, p.count, c->first_tri, next_tri,
                  c->batch_begin, next_batch, n, cap);
        next_tri += n;
        next_batch = c->batch_end;
    }
    VR_EXPECT(next_tri == m->index_count / 3 && next_batch == p.batch_count,
              "%s %s: the chunks cover %u of %u triangles, %u of %u batches", name, ops->name,
              next_tri, m->index_count / 3, next_batch, p.batch_count);
    vr_parts_free(&p);
}

VR_TEST(test_stream_cut, "raster/stream-cut")
{
    vr_mesh m;
    VR_EXPECT(vr_generate_sphere(&m, 20000) == VR_OK, "%s", vr_last_error());
    const uint32_t caps[] = {700, 4096, 1u << 30};
    for (int s = 0; s < VR_REUSE_KIND_COUNT; ++s)
        if (vr_reuse_all[s].kind != VR_REUSE_MULTI)
            for (size_t c = 0; c < 3; ++c)
                check_cut(&m, "sphere:20k", &vr_reuse_all[s], caps[c]);
    /* refusals: multi, a capacity below one batch */
    vr_reuse_params cfg = vr_reuse_params_default();
    vr_parts p;
    VR_EXPECT(vr_parts_make_bounded(&p, vr_reuse_find("multi"), &m, &cfg, 1000) == VR_ERR_ARG &&
                  strstr(vr_last_error(), "multi"),
              "multi in chunks accepted");
    VR_EXPECT(vr_parts_make_bounded(&p, vr_reuse_find("naive"), &m, &cfg, 7) == VR_ERR_ARG &&
                  strstr(vr_last_error(), "more than a chunk"),
              "chunks below one batch accepted: %s", vr_last_error());
    vr_mesh_free(&m);
    return VR_TEST_RESULT();
}

/* The streamed renderer against the in-core one on mesh `m`. */
static void check_renderer(const vr_mesh *m, const char *name)
{
    vr_render_options o;
    memset(&o, 0, sizeof o);
    vr_camera_fit(&o.camera, m);
    o.camera.zoom = 1.4f;
    o.raster.width = W;
    o.raster.height = H;
    o.shade = vr_resolve_params_default();
    const size_t px = (size_t)W * H;
    uint8_t *a = malloc(px * 4), *b = malloc(px * 4);
    uint64_t *va = malloc(px * 8), *vb = malloc(px * 8);
    vr_renderer *one = NULL;
    VR_EXPECT(vr_renderer_create(&one, m, 0) == VR_OK, "%s", vr_last_error());
    /* chunks of a few batches, a tenth of the mesh, the whole mesh */
    const uint64_t caps[] = {1500, m->index_count / 30 + 800, 1u << 30};
    for (size_t c = 0; c < 3 && one; ++c) {
        vr_stream_config sc = {caps[c] * VR_QUEUE_BYTES_PER_TRIANGLE,
                               c == 1 ? VR_STREAM_DEVICE : VR_STREAM_HOST};
        vr_renderer *st = NULL;
        VR_EXPECT(vr_renderer_create_streamed(&st, m, 0, &sc) == VR_OK, "%s", vr_last_error());
        for (int s = 0; s < VR_REUSE_KIND_COUNT && st; ++s) {
            o.strategy = &vr_reuse_all[s];
            if (o.strategy->kind == VR_REUSE_MULTI)
                continue;
            for (int mode = 0; mode < VR_SHADE_MODE_COUNT; ++mode) {
                if (mode == VR_SHADE_HEATMAP)
                    continue;
                o.mode = (vr_shade_mode)mode;
                vr_render_stats sa, sb;
                memset(b, 0x5a, px * 4); /* poison: every pixel must be written */
                VR_EXPECT(vr_renderer_draw(one, a, &o, &sa) == VR_OK, "%s", vr_last_error());
                VR_EXPECT(vr_renderer_draw(st, b, &o, &sb) == VR_OK, "%s %s in chunks of %llu: %s",
                          name, o.strategy->name, (unsigned long long)caps[c], vr_last_error());
                VR_EXPECT(vr_renderer_read_vis(one, va, px) == VR_OK &&
                              vr_renderer_read_vis(st, vb, px) == VR_OK,
                          "%s", vr_last_error());
                VR_EXPECT(!memcmp(va, vb, px * 8), "%s %s in chunks of %llu, mode %d: visibility "
                          "words differ", name, o.strategy->name, (unsigned long long)caps[c],
                          mode);
                VR_EXPECT(!memcmp(a, b, px * 4), "%s %s in chunks of %llu, mode %d: images differ",
                          name, o.strategy->name, (unsigned long long)caps[c], mode);
                VR_EXPECT(sa.invocations == sb.invocations && sa.triangles == sb.triangles &&
                              sa.batches == sb.batches &&
                              sa.raster.rejected == sb.raster.rejected &&
                              sa.raster.clipped == sb.raster.clipped &&
                              sa.raster.fragments == sb.raster.fragments && sb.chunks >= 1,
                          "%s %s in chunks of %llu: invocations %llu / %llu, batches %u / %u, "
                          "rejected %llu / %llu, fragments %llu / %llu", name, o.strategy->name,
                          (unsigned long long)caps[c], (unsigned long long)sa.invocations,
                          (unsigned long long)sb.invocations, sa.batches, sb.batches,
                          (unsigned long long)sa.raster.rejected,
                          (unsigned long long)sb.raster.rejected,
                          (unsigned long long)sa.raster.fragments,
                          (unsigned long long)sb.raster.fragments);
                if (c == 0 && s == 0 && mode == 0)
                    VR_EXPECT(sb.chunks >= sb.triangles / 1500, "%s: %u chunks of 1500 of "
                              "%u triangles", name, sb.chunks, sb.triangles);
            }
        }
        /* refusals: the heatmap (scene-sized counts), multi, sort-last parts */
        if (st) {
            o.strategy = vr_reuse_find("hash");
            o.mode = VR_SHADE_HEATMAP;
            VR_EXPECT(vr_renderer_draw(st, b, &o, NULL) == VR_ERR_ARG &&
                          strstr(vr_last_error(), "heatmap"),
                      "streamed heatmap accepted");
            o.strategy = vr_reuse_find("multi");
            o.mode = VR_SHADE_LAMBERT;
            VR_EXPECT(vr_renderer_draw(st, b, &o, NULL) == VR_ERR_ARG &&
                          strstr(vr_last_error(), "multi"),
                      "streamed multi accepted");
            VR_EXPECT(vr_renderer_set_parts(st, 2, VR_COMPOSITE_LOCAL) == VR_ERR_ARG,
                      "parts on a streamed renderer accepted");
        }
        vr_renderer_destroy(st);
    }
    vr_renderer_destroy(one);
    free(a), free(b), free(va), free(vb);
}

VR_TEST(test_stream_renderer, "raster/stream-renderer")
{
    vr_mesh m;
    VR_EXPECT(vr_generate_sphere(&m, 30000) == VR_OK, "%s", vr_last_error());
    check_renderer(&m, "sphere:30k");
    vr_mesh_free(&m);
    /* a shuffled grid: batches far from each other, wide vertex windows */
    VR_EXPECT(vr_test_grid_mesh(&m, 60, 40, 5, 1, 7) == VR_OK, "%s", vr_last_error());
    check_renderer(&m, "grid");
    vr_mesh_free(&m);
    vr_stream_config sc = {10, VR_STREAM_DEVICE};
    vr_renderer *r = NULL;
    VR_EXPECT(vr_generate_sphere(&m, 2000) == VR_OK, "%s", vr_last_error());
    VR_EXPECT(vr_renderer_create_streamed(&r, &m, 0, &sc) == VR_ERR_ARG && !r,
              "a queue of 10 bytes accepted");
    vr_mesh_free(&m);
    printf("     6 strategies x {sphere:30k, shuffled grid} x 3 chunk sizes x {lambert, batches}: "
           "words, images, invocations and raster counts equal the in-core renderer's\n");
    return VR_TEST_RESULT();
}
