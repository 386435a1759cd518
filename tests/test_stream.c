/* test_stream.c - bounded streaming on the CPU twins (pipeline/stage/parts.h's
 * vr_parts_make_bounded, raster/stream.c): the chunks cover the stream in order, each within the
 * capacity and each batch whole; the streamed renderer gives the in-core renderer's visibility
 * words, image (Lambert and batch colours), invocations and raster counts exactly, for every
 * strategy it accepts and chunk sizes from a few batches to the whole mesh. Compressed input
 * (raster/stream-gts*): each chunk decodes its batches from the .gts stream - in place, or from
 * host copies of just its slices - and gives the same words, image and counts; damage to the
 * stream is VR_ERR_FORMAT whenever the CPU decoder rejects it. Everything but the staging
 * copies; tests/test_stream_gpu.cu adds the device.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/gts/gts.h"
#include "pipeline/stage/parts.h"
#include "raster/raster.h"
#include "scenes/scene.h"
#include "tests/test.h"
#include "tests/test_helpers.h"

#define W 160
#define H 120

/* The cut of part `part` of `parts`: consecutive chunks, each at most `cap` triangles, batches
 * whole and in order, covering exactly the batches and triangles vr_parts_make gives that part. */
static void check_cut(const vr_mesh *m, const char *name, const vr_reuse_ops *ops, uint32_t cap,
                      uint32_t part, uint32_t parts)
{
    vr_reuse_params cfg = vr_reuse_params_default();
    vr_batch_limits lim = vr_batch_limits_paper();
    vr_batch_limits_apply(&cfg, &lim);
    vr_parts p, whole;
    VR_EXPECT(vr_parts_make_bounded(&p, ops, m, &cfg, cap, part, parts) == VR_OK, "%s %s: %s",
              name, ops->name, vr_last_error());
    VR_EXPECT(vr_parts_make(&whole, ops, m, &cfg, parts) == VR_OK, "%s %s: %s", name, ops->name,
              vr_last_error());
    if (vr_test_failures)
        return;
    const vr_part *want = &whole.part[part];
    uint32_t next_tri = want->first_tri, next_batch = want->batch_begin;
    for (uint32_t k = 0; k < p.count && !vr_test_failures; ++k) {
        const vr_part *c = &p.part[k];
        const uint32_t n = c->mesh.index_count / 3;
        VR_EXPECT(c->first_tri == next_tri && c->batch_begin == next_batch && n > 0 && n <= cap,
                  "%s %s part %u/%u chunk %u of %u: first %u (want %u), batches from %u (want "
                  "%u), %u triangles (cap %u)", name, ops->name, part, parts, k, p.count,
                  c->first_tri, next_tri, c->batch_begin, next_batch, n, cap);
        /* a chunk's batch ids are the whole run's, read from the part's own share */
        const uint32_t *ids = vr_parts_batch_ids(&p, c);
        const uint32_t *all = vr_parts_batch_ids(&whole, want) + (c->first_tri - want->first_tri);
        for (uint32_t t = 0; t < n && !vr_test_failures; ++t)
            VR_EXPECT(ids[t] == all[t], "%s %s part %u/%u chunk %u: triangle %u in batch %u, "
                      "want %u", name, ops->name, part, parts, k, t, ids[t], all[t]);
        next_tri += n;
        next_batch = c->batch_end;
    }
    /* the ids held are the part's share only; every batch's first position is the whole's */
    VR_EXPECT(p.tri_begin == want->first_tri &&
                  p.tri_end == want->first_tri + want->mesh.index_count / 3 &&
                  memcmp(p.batch_first, whole.batch_first,
                         ((size_t)whole.batch_count + 1) * sizeof *p.batch_first) == 0 &&
                  p.batch_first[p.batch_count] == m->index_count / 3,
              "%s %s part %u/%u: ids held for [%u, %u), want [%u, %u), or other batch starts",
              name, ops->name, part, parts, p.tri_begin, p.tri_end, want->first_tri,
              want->first_tri + want->mesh.index_count / 3);
    VR_EXPECT(next_tri == want->first_tri + want->mesh.index_count / 3 &&
                  next_batch == want->batch_end && p.batch_count == whole.batch_count,
              "%s %s part %u/%u: the chunks end at triangle %u (want %u), batch %u (want %u)",
              name, ops->name, part, parts, next_tri,
              want->first_tri + want->mesh.index_count / 3, next_batch, want->batch_end);
    vr_parts_free(&p);
    vr_parts_free(&whole);
}

VR_TEST(test_stream_cut, "raster/stream-cut")
{
    vr_mesh m;
    VR_EXPECT(vr_generate_sphere(&m, 20000) == VR_OK, "%s", vr_last_error());
    const uint32_t caps[] = {700, 4096, 1u << 30};
    for (int s = 0; s < VR_REUSE_KIND_COUNT; ++s)
        if (vr_reuse_all[s].kind != VR_REUSE_MULTI)
            for (size_t c = 0; c < 3; ++c) {
                check_cut(&m, "sphere:20k", &vr_reuse_all[s], caps[c], 0, 1);
                for (uint32_t k = 0; k < 3; ++k) /* a streamed sort-last part */
                    check_cut(&m, "sphere:20k", &vr_reuse_all[s], caps[c], k, 3);
            }
    /* refusals: multi, a capacity below one batch */
    vr_reuse_params cfg = vr_reuse_params_default();
    vr_parts p;
    VR_EXPECT(vr_parts_make_bounded(&p, vr_reuse_find("multi"), &m, &cfg, 1000, 0, 1) ==
                      VR_ERR_ARG &&
                  strstr(vr_last_error(), "multi"),
              "multi in chunks accepted");
    VR_EXPECT(vr_parts_make_bounded(&p, vr_reuse_find("naive"), &m, &cfg, 7, 0, 1) == VR_ERR_ARG &&
                  strstr(vr_last_error(), "more than a chunk"),
              "chunks below one batch accepted: %s", vr_last_error());
    VR_EXPECT(vr_parts_make_bounded(&p, vr_reuse_find("naive"), &m, &cfg, 1000, 3, 3) ==
                      VR_ERR_ARG &&
                  vr_parts_make_bounded(&p, vr_reuse_find("naive"), &m, &cfg, 1000, 0, 0) ==
                      VR_ERR_ARG,
              "part 3 of 3 or of 0 parts accepted");
    vr_mesh_free(&m);
    return VR_TEST_RESULT();
}

/* ---- the whole stream's batching, shared by the parts cut from it (pipeline/stage/parts.c) -- */

typedef struct shared_cut {
    const vr_mesh *m;
    const vr_reuse_ops *ops;
    uint32_t part, parts;
    vr_parts p;
    vr_status st;
} shared_cut;

static void *shared_cut_run(void *arg)
{
    shared_cut *c = (shared_cut *)arg;
    vr_reuse_params cfg = vr_reuse_params_default();
    vr_batch_limits lim = vr_batch_limits_paper();
    vr_batch_limits_apply(&cfg, &lim);
    c->st = vr_parts_make_bounded(&c->p, c->ops, c->m, &cfg, 4096, c->part, c->parts);
    return NULL;
}

/* Parts of one mesh, strategy and limits hold one batching (a plan: one plan, one plan-ordered
 * copy), also when their threads cut at once as NCCL ranks do; each part's cut is the one it
 * makes alone (raster/stream-cut checks those against vr_parts_make); another limit, another
 * batching. */
VR_TEST(test_stream_shared_batching, "raster/stream-shared-batching")
{
    vr_mesh m;
    if (!vr_test_load(&m, "sphere:20k"))
        return VR_TEST_RESULT();
    enum { N = 6 };
    for (int s = 0; s < VR_REUSE_KIND_COUNT; ++s) {
        const vr_reuse_ops *ops = &vr_reuse_all[s];
        if (ops->kind == VR_REUSE_MULTI)
            continue;
        shared_cut c[N], alone;
        pthread_t t[N];
        for (uint32_t k = 0; k < N; ++k) {
            c[k] = (shared_cut){&m, ops, k, N, {0}, VR_OK};
            VR_EXPECT(pthread_create(&t[k], NULL, shared_cut_run, &c[k]) == 0, "pthread_create");
        }
        for (uint32_t k = 0; k < N; ++k)
            pthread_join(t[k], NULL);
        for (uint32_t k = 0; k < N; ++k) {
            VR_EXPECT(c[k].st == VR_OK, "%s part %u: %s", ops->name, k, vr_last_error());
            VR_EXPECT(c[k].p.batching && c[k].p.batching == c[0].p.batching &&
                          c[k].p.plan_indices == c[0].p.plan_indices &&
                          (!ops->plan) == (c[k].p.plan_indices == NULL),
                      "%s part %u: its own batching", ops->name, k);
        }
        /* part 2 cut again on its own, while the others hold theirs: the same cut */
        alone = (shared_cut){&m, ops, 2, N, {0}, VR_OK};
        shared_cut_run(&alone);
        VR_EXPECT(alone.st == VR_OK && alone.p.batching == c[0].p.batching &&
                      alone.p.count == c[2].p.count && alone.p.batch_count == c[2].p.batch_count &&
                      alone.p.tri_begin == c[2].p.tri_begin && alone.p.tri_end == c[2].p.tri_end,
                  "%s: part 2 cut alone differs", ops->name);
        for (uint32_t k = 0; k < alone.p.count && k < c[2].p.count && !vr_test_failures; ++k)
            VR_EXPECT(alone.p.part[k].batch_begin == c[2].p.part[k].batch_begin &&
                          alone.p.part[k].batch_end == c[2].p.part[k].batch_end &&
                          alone.p.part[k].mesh.indices == c[2].p.part[k].mesh.indices,
                      "%s: chunk %u of part 2", ops->name, k);
        /* other limits: a batching of their own */
        vr_reuse_params cfg = vr_reuse_params_default();
        vr_batch_limits lim = vr_batch_limits_paper();
        lim.max_unique = 128, lim.max_indices = 381, lim.block_size = 128, lim.batch_indices = 48;
        vr_batch_limits_apply(&cfg, &lim);
        vr_parts other;
        VR_EXPECT(vr_parts_make_bounded(&other, ops, &m, &cfg, 4096, 0, 1) == VR_OK &&
                      other.batching != c[0].p.batching,
                  "%s: other limits share the paper's batching", ops->name);
        vr_parts_free(&other);
        vr_parts_free(&alone.p);
        for (uint32_t k = 0; k < N; ++k)
            vr_parts_free(&c[k].p);
    }
    vr_mesh_free(&m);
    return VR_TEST_RESULT();
}

int vr_test_nccl_off(void)
{
    const char *v = getenv("VR_TEST_NCCL");
    return v && !strcmp(v, "0");
}

/* A W x H frame of `m`, the camera fitted to it (strategy and mode left to the caller). */
vr_render_options vr_test_frame_options(const vr_mesh *m, uint32_t w, uint32_t h, float zoom,
                                        float yaw, int cull_back)
{
    vr_render_options o;
    memset(&o, 0, sizeof o);
    vr_camera_fit(&o.camera, m);
    o.camera.zoom = zoom;
    o.camera.yaw = yaw;
    o.raster.width = w;
    o.raster.height = h;
    o.raster.cull_back = cull_back;
    o.shade = vr_resolve_params_default();
    return o;
}

void vr_test_frame_diff(const uint64_t *va, const uint64_t *vb, const uint8_t *a,
                        const uint8_t *b, size_t px, size_t *words, size_t *pixels)
{
    *words = *pixels = 0;
    for (size_t i = 0; i < px; ++i)
        *words += va[i] != vb[i], *pixels += memcmp(a + 4 * i, b + 4 * i, 4) != 0;
}

static vr_render_options stream_options(const vr_mesh *m)
{
    return vr_test_frame_options(m, W, H, 1.4f, 0.0f, 0);
}

/* The streamed renderer against the in-core one on mesh `m`. */
static void check_renderer(const vr_mesh *m, const char *name)
{
    vr_render_options o = stream_options(m);
    const size_t px = (size_t)W * H;
    uint8_t *a = malloc(px * 4), *b = malloc(px * 4);
    uint64_t *va = malloc(px * 8), *vb = malloc(px * 8);
    vr_renderer *one = NULL;
    VR_EXPECT(vr_renderer_create(&one, m, 0) == VR_OK, "%s", vr_last_error());
    /* chunks of a few batches, a tenth of the mesh, the whole mesh */
    const uint64_t caps[] = {1500, m->index_count / 30 + 800, 1u << 30};
    for (size_t c = 0; c < 3 && one; ++c) {
        vr_stream_config sc = {.queue_bytes = caps[c] * VR_QUEUE_BYTES_PER_TRIANGLE,
                               .source = c == 1 ? VR_STREAM_DEVICE : VR_STREAM_HOST};
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
            /* streamed sort-last parts: on the CPU twins (raster/sortlast-stream) */
            VR_EXPECT(vr_renderer_set_parts(st, 2, VR_COMPOSITE_LOCAL) == VR_OK &&
                          vr_renderer_set_parts(st, 1, VR_COMPOSITE_LOCAL) == VR_OK,
                      "parts on a streamed CPU renderer: %s", vr_last_error());
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
    vr_stream_config sc = {.queue_bytes = 10, .source = VR_STREAM_DEVICE};
    vr_renderer *r = NULL;
    VR_EXPECT(vr_generate_sphere(&m, 2000) == VR_OK, "%s", vr_last_error());
    VR_EXPECT(vr_renderer_create_streamed(&r, &m, 0, &sc) == VR_ERR_ARG && !r,
              "a queue of 10 bytes accepted");
    vr_mesh_free(&m);
    printf("     6 strategies x {sphere:30k, shuffled grid} x 3 chunk sizes x {lambert, batches}: "
           "words, images, invocations and raster counts equal the in-core renderer's\n");
    return VR_TEST_RESULT();
}

/* ---- compressed input --------------------------------------------------------------------- */

vr_batch_limits vr_test_stream_small_limits(void)
{
    vr_batch_limits l = vr_batch_limits_paper();
    l.block_size = 32;
    l.max_unique = 16;
    l.max_indices = 48;
    return l;
}

vr_status vr_test_gts_strips(vr_gts *g, vr_mesh *dec, const vr_mesh *src, int mode)
{
    vr_gts_options opt = vr_gts_options_default();
    opt.restart = (vr_gts_restart)mode;
    memset(dec, 0, sizeof *dec);
    vr_status st = vr_gts_encode(g, NULL, src, &opt);
    if (st == VR_OK && (st = vr_gts_decode_mesh(dec, g)) != VR_OK)
        vr_gts_free(g);
    return st;
}

/* A frame of `r` into rgba/vis (W x H); 0 when the draw failed (reported). */
static int gts_frame(vr_renderer *r, const vr_render_options *o, uint8_t *rgba, uint64_t *vis,
                     vr_render_stats *st, const char *what)
{
    memset(rgba, 0x5a, (size_t)W * H * 4); /* poison: every pixel must be written */
    const vr_status s = vr_renderer_draw(r, rgba, o, st);
    VR_EXPECT(s == VR_OK, "%s: %s", what, vr_last_error());
    if (s != VR_OK)
        return 0;
    VR_EXPECT(vr_renderer_read_vis(r, vis, (size_t)W * H) == VR_OK, "%s: %s", what,
              vr_last_error());
    return 1;
}

/* The streamed renderer decoding `g` (whose decode is `m`) against the in-core renderer and the
 * plain streamed renderer on m: words, images (Lambert, batch colours), invocations and raster
 * counts equal, and the same chunks; under `lim` (NULL: the paper's), from several chunk sizes
 * and both sources. */
static void check_gts_renderer(const vr_gts *g, const vr_mesh *m, const char *name,
                               const vr_batch_limits *lim)
{
    vr_render_options o = stream_options(m);
    o.strategy = vr_reuse_find("hash");
    o.limits = lim;
    const size_t px = (size_t)W * H;
    uint8_t *a = malloc(px * 4), *b = malloc(px * 4), *c = malloc(px * 4);
    uint64_t *va = malloc(px * 8), *vb = malloc(px * 8), *vc = malloc(px * 8);
    vr_renderer *one = NULL;
    VR_EXPECT(vr_renderer_create(&one, m, 0) == VR_OK, "%s", vr_last_error());
    const uint32_t batch = lim ? lim->max_indices / 3 : 341; /* the largest batch's triangles */
    const uint64_t caps[] = {batch + 7, m->index_count / 30 + batch, 1u << 30};
    for (size_t k = 0; k < 6 && one; ++k) {
        const vr_stream_source src = k % 2 ? VR_STREAM_HOST : VR_STREAM_DEVICE;
        const vr_stream_config sc = {.queue_bytes = caps[k / 2] * VR_QUEUE_BYTES_PER_TRIANGLE,
                                     .source = src};
        char what[160];
        snprintf(what, sizeof what, "%s in chunks of %llu (%s)", name,
                 (unsigned long long)caps[k / 2], vr_stream_source_names[src]);
        vr_renderer *packed = NULL, *plain = NULL;
        VR_EXPECT(vr_renderer_create_streamed(&packed, m, 0, &sc) == VR_OK &&
                      vr_renderer_create_streamed(&plain, m, 0, &sc) == VR_OK &&
                      vr_renderer_set_gts(packed, g) == VR_OK,
                  "%s: %s", what, vr_last_error());
        for (int mode = 0; mode < 2 && packed && plain && !vr_test_failures; ++mode) {
            o.mode = mode ? VR_SHADE_BATCHES : VR_SHADE_LAMBERT;
            vr_render_stats sa, sb, sc2;
            if (!gts_frame(one, &o, a, va, &sa, what) || !gts_frame(packed, &o, b, vb, &sb, what) ||
                !gts_frame(plain, &o, c, vc, &sc2, what))
                break;
            VR_EXPECT(!memcmp(va, vb, px * 8) && !memcmp(a, b, px * 4), "%s, mode %d: the "
                      "compressed chunks' words or image differ from the in-core renderer's",
                      what, mode);
            VR_EXPECT(!memcmp(vc, vb, px * 8) && !memcmp(c, b, px * 4), "%s, mode %d: the "
                      "compressed chunks' words or image differ from the plain chunks'", what,
                      mode);
            VR_EXPECT(sa.invocations == sb.invocations && sa.triangles == sb.triangles &&
                          sa.batches == sb.batches && sa.raster.rejected == sb.raster.rejected &&
                          sa.raster.clipped == sb.raster.clipped &&
                          sa.raster.fragments == sb.raster.fragments &&
                          sb.chunks == sc2.chunks && sb.chunks >= 1,
                      "%s: invocations %llu / %llu, batches %u / %u, fragments %llu / %llu, "
                      "chunks %u (plain %u)", what, (unsigned long long)sa.invocations,
                      (unsigned long long)sb.invocations, sa.batches, sb.batches,
                      (unsigned long long)sa.raster.fragments,
                      (unsigned long long)sb.raster.fragments, sb.chunks, sc2.chunks);
            if (k == 0 && mode == 0)
                VR_EXPECT(sb.chunks >= sb.triangles / (batch + 7), "%s: %u chunks of %u "
                          "triangles", what, sb.chunks, sb.triangles);
        }
        /* streamed sort-last parts decoding the stream: compressed input set before the parts
         * (vr_sortlast_create_streamed) and after them (vr_sortlast_set_gts) */
        for (int after = 0; after < 2 && k < 2 && packed && !vr_test_failures; ++after) {
            o.mode = VR_SHADE_LAMBERT;
            vr_render_stats sa, sb;
            VR_EXPECT((!after || vr_renderer_set_gts(packed, NULL) == VR_OK) &&
                          vr_renderer_set_parts(packed, 3, VR_COMPOSITE_LOCAL) == VR_OK &&
                          (!after || vr_renderer_set_gts(packed, g) == VR_OK),
                      "%s in 3 parts: %s", what, vr_last_error());
            if (!gts_frame(one, &o, a, va, &sa, what) || !gts_frame(packed, &o, b, vb, &sb, what))
                break;
            VR_EXPECT(!memcmp(va, vb, px * 8) && !memcmp(a, b, px * 4) &&
                          sa.invocations == sb.invocations && sb.parts == 3,
                      "%s in 3 streamed parts (compressed input set %s them): words, image or "
                      "invocations (%llu / %llu) differ", what, after ? "after" : "before",
                      (unsigned long long)sa.invocations, (unsigned long long)sb.invocations);
            VR_EXPECT(vr_renderer_set_parts(packed, 1, VR_COMPOSITE_LOCAL) == VR_OK, "%s",
                      vr_last_error());
        }
        /* a strategy without a per-batch decoder is refused; switched off, plain chunks again */
        if (packed && !vr_test_failures) {
            o.strategy = vr_reuse_find("sort");
            o.mode = VR_SHADE_LAMBERT;
            VR_EXPECT(vr_renderer_draw(packed, b, &o, NULL) == VR_ERR_ARG &&
                          strstr(vr_last_error(), "cannot decode compressed batches"),
                      "%s: sort on compressed chunks accepted", what);
            VR_EXPECT(vr_renderer_set_gts(packed, NULL) == VR_OK &&
                          vr_renderer_draw(packed, b, &o, NULL) == VR_OK &&
                          vr_renderer_draw(one, a, &o, NULL) == VR_OK && !memcmp(a, b, px * 4),
                      "%s: sort after switching compressed input off: %s", what,
                      vr_last_error());
            o.strategy = vr_reuse_find("hash");
        }
        vr_renderer_destroy(packed);
        vr_renderer_destroy(plain);
    }
    vr_renderer_destroy(one);
    free(a), free(b), free(c), free(va), free(vb), free(vc);
}

/* Encodes `src` in both restart modes and checks the streamed renderer on each stream. */
static void check_gts_mesh(const vr_mesh *src, const char *name, const vr_batch_limits *lim)
{
    for (int mode = 0; mode < 2 && !vr_test_failures; ++mode) {
        char what[128];
        snprintf(what, sizeof what, "%s (%s%s)", name, mode ? "deg." : "R",
                 lim ? ", small batches" : "");
        vr_gts g;
        vr_mesh dec;
        VR_EXPECT(vr_test_gts_strips(&g, &dec, src, mode) == VR_OK, "%s: %s", what,
                  vr_last_error());
        if (vr_test_failures)
            break;
        check_gts_renderer(&g, &dec, what, lim);
        vr_mesh_free(&dec);
        vr_gts_free(&g);
    }
}

VR_TEST(test_stream_gts, "raster/stream-gts")
{
    /* batches of at most 16 triangles: chunks begin and end inside the words of C, INC and S */
    const vr_batch_limits small = vr_test_stream_small_limits();
    vr_mesh m;
    VR_EXPECT(vr_generate_sphere(&m, 30000) == VR_OK, "%s", vr_last_error());
    check_gts_mesh(&m, "sphere:30k", NULL);
    check_gts_mesh(&m, "sphere:30k", &small);
    vr_mesh_free(&m);
    VR_EXPECT(vr_test_grid_mesh(&m, 60, 40, 5, 1, 7) == VR_OK, "%s", vr_last_error());
    check_gts_mesh(&m, "shuffled grid", &small);
    vr_mesh_free(&m);
    VR_EXPECT(vr_mesh_load(&m, "foliage:3k") == VR_OK, "%s", vr_last_error());
    check_gts_mesh(&m, "foliage:3k", &small);
    /* a stream that is not the renderer's mesh's */
    vr_gts g;
    vr_gts_options opt = vr_gts_options_default();
    vr_renderer *r = NULL;
    const vr_stream_config sc = {.queue_bytes = 4000 * VR_QUEUE_BYTES_PER_TRIANGLE,
                                 .source = VR_STREAM_HOST};
    vr_mesh other;
    VR_EXPECT(vr_generate_sphere(&other, 2000) == VR_OK &&
                  vr_gts_encode(&g, NULL, &other, &opt) == VR_OK &&
                  vr_renderer_create_streamed(&r, &m, 0, &sc) == VR_OK,
              "%s", vr_last_error());
    if (r)
        VR_EXPECT(vr_renderer_set_gts(r, &g) == VR_ERR_ARG &&
                      strstr(vr_last_error(), "stream's own decode"),
                  "a stream of another mesh accepted: %s", vr_last_error());
    vr_renderer_destroy(r);
    vr_gts_free(&g);
    vr_mesh_free(&other);
    vr_mesh_free(&m);
    printf("     hash on sphere:30k (paper and small batches), a shuffled grid and foliage:3k "
           "(small batches), R and deg. streams, 3 chunk sizes x {device, host} x {lambert, "
           "batches}: words, images, invocations, raster counts and chunks equal the in-core "
           "and the plain streamed renderer's\n");
    return VR_TEST_RESULT();
}

/* Damage behind valid counts after the cut (the seeds are the good stream's): each frame reads
 * the damaged words - in place, or through the slices copied per chunk - and is VR_ERR_FORMAT
 * whenever the CPU decoder rejects the stream, VR_OK or VR_ERR_FORMAT otherwise, never a fault.
 * The GPU from the device holds its upload of the stream, so it takes each damaged stream anew
 * (vr_renderer_set_gts: a new cut, the damaged stream's seeds). A stream damaged before the cut
 * fails there. Shared with gpu-small/stream-gts-damaged (tests/test_stream_gpu.cu). */
void vr_test_stream_gts_damaged(int gpu)
{
    const vr_batch_limits small = vr_test_stream_small_limits();
    const int trials = gpu ? 16 : 160; /* the GPU runs it under three sanitizers (gpu-small) */
    vr_mesh src;
    VR_EXPECT(vr_generate_sphere(&src, 3000) == VR_OK, "%s", vr_last_error());
    const size_t px = (size_t)W * H;
    uint8_t *rgba = malloc(px * 4);
    for (int mode = 0; mode < 2 && !vr_test_failures; ++mode)
        for (int from = 0; from < VR_STREAM_SOURCE_COUNT && !vr_test_failures; ++from) {
            vr_gts g;
            vr_mesh dec;
            if (vr_test_gts_strips(&g, &dec, &src, mode) != VR_OK) {
                VR_EXPECT(0, "%s", vr_last_error());
                break;
            }
            vr_renderer *r = NULL;
            const vr_stream_config sc = {.queue_bytes = 400 * VR_QUEUE_BYTES_PER_TRIANGLE,
                                         .source = (vr_stream_source)from};
            VR_EXPECT(vr_renderer_create_streamed(&r, &dec, gpu, &sc) == VR_OK &&
                          vr_renderer_set_gts(r, &g) == VR_OK,
                      "%s", vr_last_error());
            const int retake = gpu && from == VR_STREAM_DEVICE;
            uint32_t *scratch = malloc(3 * (size_t)g.strip_triangle_count * 4 + 4);
            vr_render_options o = stream_options(&dec);
            o.strategy = vr_reuse_find("hash");
            o.limits = &small;
            VR_EXPECT(r && vr_renderer_draw(r, rgba, &o, NULL) == VR_OK, "good stream: %s",
                      vr_last_error());
            int rejected = 0;
            const uint32_t cw = vr_gts_c_words(&g), iw = vr_gts_inc_words(&g);
            for (int trial = 0; trial < trials && !vr_test_failures; ++trial) {
                uint32_t x = 0x9e3779b9u * (uint32_t)(trial + 1);
                x ^= x >> 15;
                uint32_t *word = trial % 4 == 0 ? &g.c[x % cw]
                                 : trial % 4 == 1 ? &g.inc[x % iw] : &g.s[x % g.s_count];
                const uint32_t saved = *word;
                *word = trial % 4 == 3 ? *word | 0xf0000000u : *word ^ (1u << (x >> 27));
                const int cpu_rejects = vr_gts_decode_scan_ref(scratch, &g) != VR_OK;
                vr_status st = retake ? vr_renderer_set_gts(r, &g) : VR_OK;
                if (st == VR_OK)
                    st = vr_renderer_draw(r, rgba, &o, NULL);
                VR_EXPECT(st == VR_OK || st == VR_ERR_FORMAT, "trial %d: status %d (%s)", trial,
                          (int)st, vr_last_error());
                if (cpu_rejects) {
                    ++rejected;
                    VR_EXPECT(st == VR_ERR_FORMAT, "%s mode, from %s, trial %d: the CPU decoder "
                              "rejects the damaged stream, the streamed renderer drew it",
                              mode ? "deg." : "R", vr_stream_source_names[from], trial);
                }
                *word = saved;
            }
            VR_EXPECT((!retake || vr_renderer_set_gts(r, &g) == VR_OK) &&
                          vr_renderer_draw(r, rgba, &o, NULL) == VR_OK,
                      "repaired: %s", vr_last_error());
            VR_EXPECT(rejected > trials / 8, "only %d of %d damaged streams were malformed",
                      rejected, trials);
            /* damaged before the cut behind valid counts (every code of a Simple-9 word at its
             * largest: a re-used vertex that does not exist yet): the seeds find it; a bad
             * selector even vr_renderer_set_gts */
            int found = 0;
            for (uint32_t w = g.s_count / 2; w < g.s_count && !found; ++w) {
                const uint32_t saved = g.s[w];
                g.s[w] |= 0x0fffffffu;
                if ((found = vr_gts_decode_scan_ref(scratch, &g) != VR_OK))
                    VR_EXPECT(vr_renderer_set_gts(r, &g) == VR_OK &&
                                  vr_renderer_draw(r, rgba, &o, NULL) == VR_ERR_FORMAT,
                              "a stream damaged before the cut: %s", vr_last_error());
                g.s[w] = saved;
            }
            VR_EXPECT(found, "no Simple-9 word damage the decoder rejects");
            if (g.s_count && !vr_test_failures) {
                g.s[g.s_count / 2] |= 0xf0000000u; /* selector 15: no such packing */
                VR_EXPECT(vr_renderer_set_gts(r, &g) == VR_ERR_FORMAT &&
                              strstr(vr_last_error(), "selector 15"),
                          "a bad selector accepted: %s", vr_last_error());
            }
            free(scratch);
            vr_renderer_destroy(r);
            vr_mesh_free(&dec);
            vr_gts_free(&g);
        }
    free(rgba);
    vr_mesh_free(&src);
    printf("     sphere:3k, R and deg., from device and host, %d damaged words each: "
           "VR_ERR_FORMAT wherever the CPU decoder rejects\n", trials);
}

VR_TEST(test_stream_gts_damaged, "raster/stream-gts-damaged")
{
    vr_test_stream_gts_damaged(0);
    return VR_TEST_RESULT();
}
