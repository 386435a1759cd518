/* test_sortlast.c - sort-last rendering on the CPU twins (pipeline/stage/parts.h,
 * raster/sortlast.c): the cut into parts gives each batch exactly as one run forms it, the
 * parts' visibility words composited by minimum equal one run's word for word, and the renderer
 * in parts gives the same image, invocations and counts in every shading mode. Everything but
 * the transport; tests/test_sortlast_gpu.cu adds the device, NCCL and several GPUs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/stage/geometry.h"
#include "pipeline/stage/parts.h"
#include "raster/raster.h"
#include "scenes/scene.h"
#include "tests/test.h"
#include "tests/test_helpers.h"

#define W 160
#define H 120

/* Renders `m` with strategy `ops` once whole and once cut into `count` parts, at the stage
 * level: the composite of the parts' words must equal the whole run's, and the invocations and
 * shade counts summed over the parts the whole run's. */
static void check_words(const vr_mesh *m, const char *name, const vr_reuse_ops *ops,
                        uint32_t count)
{
    vr_camera cam;
    vr_camera_fit(&cam, m);
    vr_reuse_params cfg = vr_reuse_params_default();
    vr_camera_shader(&cfg.shader, &cam, W, H);
    cfg.count = 1;
    const vr_raster_config rc = {W, H, 1, VR_RASTER_BIG_LIST, 0};
    const uint32_t tris = m->index_count / 3;
    vr_geometry_result whole, part;
    uint64_t *want = malloc(W * H * sizeof *want), *got = malloc(W * H * sizeof *got),
             *mine = malloc(W * H * sizeof *mine);
    uint32_t *counts = calloc(m->vertex_count + 1, sizeof *counts);
    VR_EXPECT(vr_geometry_result_alloc(&whole, tris, m->vertex_count) == VR_OK, "%s",
              vr_last_error());
    VR_EXPECT(vr_geometry_ref(&whole, ops, m, &cfg) == VR_OK, "%s", vr_last_error());
    VR_EXPECT(vr_raster_ref(want, &whole.queue, tris, &rc, NULL) == VR_OK, "%s", vr_last_error());
    vr_parts parts;
    VR_EXPECT(vr_parts_make(&parts, ops, m, &cfg, count) == VR_OK, "%s", vr_last_error());
    memset(got, 0xff, W * H * sizeof *got);
    uint64_t invocations = 0, batches = 0;
    uint32_t next_tri = 0;
    for (uint32_t k = 0; k < count && !vr_test_failures; ++k) {
        const vr_part *p = &parts.part[k];
        const uint32_t n = p->mesh.index_count / 3;
        VR_EXPECT(p->first_tri == next_tri, "%s %s part %u starts at %u, not %u", name,
                  ops->name, k, p->first_tri, next_tri);
        next_tri += n;
        batches += p->batch_end - p->batch_begin;
        if (n == 0)
            continue;
        VR_EXPECT(vr_geometry_result_alloc(&part, n, m->vertex_count) == VR_OK, "%s",
                  vr_last_error());
        VR_EXPECT(vr_geometry_ref_given(&part, ops, &p->mesh, &cfg,
                                        p->given.count ? &p->given : NULL) == VR_OK,
                  "%s %s part %u: %s", name, ops->name, k, vr_last_error());
        invocations += part.counters.invocations;
        for (uint32_t v = 0; v < m->vertex_count; ++v)
            counts[v] += part.shade_counts[v];
        /* the part's queue is the whole run's slots first_tri.. (ids of a plan: positions) */
        for (uint32_t t = 0; t < n && !vr_test_failures; ++t) {
            const uint32_t s = p->first_tri + t;
            VR_EXPECT(!memcmp(part.queue.clip + 12 * (size_t)t, whole.queue.clip + 12 * (size_t)s,
                              48) &&
                          !memcmp(part.queue.vertex + 3 * (size_t)t,
                                  whole.queue.vertex + 3 * (size_t)s, 12),
                      "%s %s part %u: slot %u differs from the whole run's slot %u", name,
                      ops->name, k, t, s);
        }
        vr_raster_config prc = rc;
        prc.slot_base = p->first_tri;
        VR_EXPECT(vr_raster_ref(mine, &part.queue, n, &prc, NULL) == VR_OK, "%s", vr_last_error());
        for (size_t i = 0; i < W * H; ++i)
            got[i] = mine[i] < got[i] ? mine[i] : got[i];
        vr_geometry_result_free(&part);
    }
    VR_EXPECT(next_tri == tris && batches == parts.batch_count, "%s %s: parts cover %u of %u "
              "triangles, %llu of %u batches", name, ops->name, next_tri, tris,
              (unsigned long long)batches, parts.batch_count);
    VR_EXPECT(invocations == whole.counters.invocations, "%s %s in %u parts: %llu invocations, "
              "one run %llu", name, ops->name, count, (unsigned long long)invocations,
              (unsigned long long)whole.counters.invocations);
    VR_EXPECT(!memcmp(counts, whole.shade_counts, m->vertex_count * sizeof *counts),
              "%s %s in %u parts: shade counts differ", name, ops->name, count);
    size_t differ = 0, covered = 0;
    for (size_t i = 0; i < W * H; ++i)
        differ += got[i] != want[i], covered += want[i] != VR_VIS_EMPTY;
    VR_EXPECT(differ == 0 && covered > 0, "%s %s in %u parts: %zu of %zu words differ (%zu "
              "covered)", name, ops->name, count, differ, (size_t)W * H, covered);
    vr_parts_free(&parts);
    vr_geometry_result_free(&whole);
    free(want), free(got), free(mine), free(counts);
}

VR_TEST(test_sortlast_words, "raster/sortlast-words")
{
    const char *specs[] = {"sphere:20k", "grid", "stanford-bunny.obj"};
    const uint32_t counts[] = {2, 3, 7};
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; ++i) {
        vr_mesh m;
        char buf[512];
        if (i == 1) {
            VR_EXPECT(vr_test_grid_mesh(&m, 60, 40, 5, 1, 7) == VR_OK, "%s", vr_last_error());
        } else {
            const char *spec = vr_test_plan_spec(buf, sizeof buf, specs[i]);
            if (!spec || !vr_test_load(&m, spec))
                continue;
        }
        for (int s = 0; s < VR_REUSE_KIND_COUNT; ++s)
            if (vr_reuse_all[s].kind != VR_REUSE_MULTI)
                for (size_t c = 0; c < sizeof counts / sizeof counts[0]; ++c)
                    check_words(&m, specs[i], &vr_reuse_all[s], counts[c]);
        vr_mesh_free(&m);
    }
    printf("     7 strategies x 3 meshes x {2, 3, 7} parts: words, invocations and shade "
           "counts equal one run's\n");
    return VR_TEST_RESULT();
}

/* The renderer in parts against one run: image (every mode), visibility words, invocations. */
VR_TEST(test_sortlast_renderer, "raster/sortlast-renderer")
{
    vr_mesh m;
    VR_EXPECT(vr_generate_sphere(&m, 30000) == VR_OK, "%s", vr_last_error());
    vr_render_options o = vr_test_frame_options(&m, W, H, 1.4f, 0.0f, 0);
    const size_t px = (size_t)W * H;
    uint8_t *a = malloc(px * 4), *b = malloc(px * 4);
    uint64_t *va = malloc(px * 8), *vb = malloc(px * 8);
    vr_renderer *one = NULL, *cut = NULL;
    VR_EXPECT(vr_renderer_create(&one, &m, 0) == VR_OK, "%s", vr_last_error());
    VR_EXPECT(vr_renderer_create(&cut, &m, 0) == VR_OK, "%s", vr_last_error());
    const uint32_t counts[] = {2, 5, 64}; /* 64: more parts than some strategies' batches */
    for (size_t c = 0; c < 3 && one && cut; ++c) {
        VR_EXPECT(vr_renderer_set_parts(cut, counts[c], VR_COMPOSITE_LOCAL) == VR_OK, "%s",
                  vr_last_error());
        for (int s = 0; s < VR_REUSE_KIND_COUNT; ++s) {
            o.strategy = &vr_reuse_all[s];
            if (o.strategy->kind == VR_REUSE_MULTI)
                continue;
            for (int mode = 0; mode < VR_SHADE_MODE_COUNT; ++mode) {
                o.mode = (vr_shade_mode)mode;
                vr_render_stats sa, sb;
                VR_EXPECT(vr_renderer_draw(one, a, &o, &sa) == VR_OK, "%s", vr_last_error());
                VR_EXPECT(vr_renderer_draw(cut, b, &o, &sb) == VR_OK, "%s in %u parts: %s",
                          o.strategy->name, counts[c], vr_last_error());
                VR_EXPECT(vr_renderer_read_vis(one, va, px) == VR_OK &&
                              vr_renderer_read_vis(cut, vb, px) == VR_OK,
                          "%s", vr_last_error());
                VR_EXPECT(!memcmp(va, vb, px * 8), "%s in %u parts, mode %d: visibility words "
                          "differ", o.strategy->name, counts[c], mode);
                VR_EXPECT(!memcmp(a, b, px * 4), "%s in %u parts, mode %d: images differ",
                          o.strategy->name, counts[c], mode);
                VR_EXPECT(sa.invocations == sb.invocations && sa.triangles == sb.triangles &&
                              sa.batches == sb.batches &&
                              sa.raster.rejected == sb.raster.rejected &&
                              sa.raster.fragments == sb.raster.fragments &&
                              sb.parts == counts[c],
                          "%s in %u parts: invocations %llu / %llu, batches %u / %u, rejected "
                          "%llu / %llu, fragments %llu / %llu", o.strategy->name, counts[c],
                          (unsigned long long)sa.invocations,
                          (unsigned long long)sb.invocations, sa.batches, sb.batches,
                          (unsigned long long)sa.raster.rejected,
                          (unsigned long long)sb.raster.rejected,
                          (unsigned long long)sa.raster.fragments,
                          (unsigned long long)sb.raster.fragments);
            }
        }
    }
    /* refusals: multi cannot be cut, NCCL needs the GPU renderer, 0 parts */
    o.strategy = vr_reuse_find("multi");
    vr_status st = cut ? vr_renderer_draw(cut, b, &o, NULL) : VR_ERR_ARG;
    VR_EXPECT(st == VR_ERR_ARG && strstr(vr_last_error(), "multi"), "multi in parts: %d %s",
              (int)st, vr_last_error());
    VR_EXPECT(cut && vr_renderer_set_parts(cut, 2, VR_COMPOSITE_NCCL) == VR_ERR_ARG,
              "NCCL on a CPU renderer accepted");
    VR_EXPECT(cut && vr_renderer_set_parts(cut, 0, VR_COMPOSITE_LOCAL) == VR_ERR_ARG,
              "0 parts accepted");
    /* back to one run */
    VR_EXPECT(cut && vr_renderer_set_parts(cut, 1, VR_COMPOSITE_LOCAL) == VR_OK, "%s",
              vr_last_error());
    VR_EXPECT(cut && vr_renderer_draw(cut, b, &o, NULL) == VR_OK, "multi in one run: %s",
              vr_last_error());
    vr_renderer_destroy(one);
    vr_renderer_destroy(cut);
    free(a), free(b), free(va), free(vb);
    vr_mesh_free(&m);
    return VR_TEST_RESULT();
}

/* Streamed parts (vr_renderer_create_streamed, then vr_renderer_set_parts): each part runs its
 * share in chunks of its own through its own queue; image, visibility words and counts must
 * still be one in-core run's, in every mode a stream can draw (not the heatmap). */
VR_TEST(test_sortlast_stream, "raster/sortlast-stream")
{
    vr_mesh m;
    VR_EXPECT(vr_generate_sphere(&m, 30000) == VR_OK, "%s", vr_last_error());
    vr_render_options o = vr_test_frame_options(&m, W, H, 1.4f, 0.0f, 0);
    const size_t px = (size_t)W * H;
    uint8_t *a = malloc(px * 4), *b = malloc(px * 4);
    uint64_t *va = malloc(px * 8), *vb = malloc(px * 8);
    vr_renderer *one = NULL;
    VR_EXPECT(vr_renderer_create(&one, &m, 0) == VR_OK, "%s", vr_last_error());
    const uint32_t counts[] = {2, 5, 64}; /* 64: more parts than some strategies' batches */
    for (size_t c = 0; c < 3 && one; ++c) {
        /* small queues: several chunks per part; both sources (the host one copies windows) */
        const vr_stream_config sc = {.queue_bytes = (c == 1 ? 700 : 2500) *
                                                    (uint64_t)VR_QUEUE_BYTES_PER_TRIANGLE,
                                     .source = c == 1 ? VR_STREAM_HOST : VR_STREAM_DEVICE};
        vr_renderer *cut = NULL;
        VR_EXPECT(vr_renderer_create_streamed(&cut, &m, 0, &sc) == VR_OK &&
                      vr_renderer_set_parts(cut, counts[c], VR_COMPOSITE_LOCAL) == VR_OK,
                  "%u streamed parts: %s", counts[c], vr_last_error());
        for (int s = 0; s < VR_REUSE_KIND_COUNT && cut; ++s) {
            o.strategy = &vr_reuse_all[s];
            if (o.strategy->kind == VR_REUSE_MULTI)
                continue;
            for (int mode = 0; mode < VR_SHADE_MODE_COUNT; ++mode) {
                if (mode == VR_SHADE_HEATMAP)
                    continue;
                o.mode = (vr_shade_mode)mode;
                vr_render_stats sa, sb;
                VR_EXPECT(vr_renderer_draw(one, a, &o, &sa) == VR_OK, "%s", vr_last_error());
                memset(b, 0x5a, px * 4), memset(vb, 0x5a, px * 8); /* unwritten: differs */
                VR_EXPECT(vr_renderer_draw(cut, b, &o, &sb) == VR_OK, "%s in %u streamed "
                          "parts: %s", o.strategy->name, counts[c], vr_last_error());
                VR_EXPECT(vr_renderer_read_vis(one, va, px) == VR_OK &&
                              vr_renderer_read_vis(cut, vb, px) == VR_OK,
                          "%s", vr_last_error());
                VR_EXPECT(!memcmp(va, vb, px * 8), "%s in %u streamed parts, mode %d: "
                          "visibility words differ", o.strategy->name, counts[c], mode);
                VR_EXPECT(!memcmp(a, b, px * 4), "%s in %u streamed parts, mode %d: images "
                          "differ", o.strategy->name, counts[c], mode);
                VR_EXPECT(sa.invocations == sb.invocations && sa.triangles == sb.triangles &&
                              sa.batches == sb.batches &&
                              sa.raster.rejected == sb.raster.rejected &&
                              sa.raster.fragments == sb.raster.fragments &&
                              sb.parts == counts[c] && sb.chunks >= 2,
                          "%s in %u streamed parts: invocations %llu / %llu, batches %u / %u, "
                          "fragments %llu / %llu, %u chunks", o.strategy->name, counts[c],
                          (unsigned long long)sa.invocations,
                          (unsigned long long)sb.invocations, sa.batches, sb.batches,
                          (unsigned long long)sa.raster.fragments,
                          (unsigned long long)sb.raster.fragments, sb.chunks);
            }
        }
        /* back to one stream, and the heatmap refused as streams refuse it; 0 or too many
         * parts and NCCL on the CPU twins refused, the parts in use kept */
        if (c == 0 && cut) {
            VR_EXPECT(vr_renderer_set_parts(cut, 0, VR_COMPOSITE_LOCAL) == VR_ERR_ARG &&
                          vr_renderer_set_parts(cut, VR_PARTS_MAX + 1, VR_COMPOSITE_LOCAL) ==
                              VR_ERR_ARG &&
                          vr_renderer_set_parts(cut, 2, VR_COMPOSITE_NCCL) == VR_ERR_ARG,
                      "0 or %u streamed parts, or NCCL on the CPU twins, accepted",
                      VR_PARTS_MAX + 1);
            o.mode = VR_SHADE_LAMBERT;
            o.strategy = vr_reuse_find("hash");
            vr_render_stats kept;
            VR_EXPECT(vr_renderer_draw(cut, b, &o, &kept) == VR_OK && kept.parts == counts[c],
                      "the %u streamed parts after a refused change: %s (%u parts)", counts[c],
                      vr_last_error(), kept.parts);
            o.mode = VR_SHADE_HEATMAP;
            VR_EXPECT(vr_renderer_draw(cut, b, &o, NULL) == VR_ERR_ARG &&
                          strstr(vr_last_error(), "heatmap"),
                      "the heatmap in streamed parts: %s", vr_last_error());
            o.mode = VR_SHADE_LAMBERT;
            VR_EXPECT(vr_renderer_set_parts(cut, 1, VR_COMPOSITE_LOCAL) == VR_OK &&
                          vr_renderer_draw(cut, b, &o, NULL) == VR_OK &&
                          vr_renderer_draw(one, a, &o, NULL) == VR_OK && !memcmp(a, b, px * 4),
                      "one stream after streamed parts: %s", vr_last_error());
        }
        vr_renderer_destroy(cut);
    }
    vr_renderer_destroy(one);
    free(a), free(b), free(va), free(vb);
    vr_mesh_free(&m);
    return VR_TEST_RESULT();
}
