/* test_stream_gpu.cu - bounded streaming on the device (raster/stream.c): the streamed renderer,
 * with the scene resident (VR_STREAM_DEVICE) and streamed from page-locked host memory in
 * per-chunk copies (VR_STREAM_HOST), against the in-core GPU renderer on the same frame -
 * visibility words, image, invocations and raster counts equal. (The in-core renderer equals
 * its CPU twin in gpu/raster*, the streamed CPU twin equals the in-core one in raster/stream-*.)
 * gpu/stream: every shared scene in chunks of a fifth of it, and the 7M meshes at 1080p in
 * chunks of 1M triangles; gpu-small/stream: fandisk in chunks of 1,500 triangles (sanitizers).
 * gpu/stream-gts: the same scenes compressed (.gts, R and deg.), hash decoding each chunk's
 * batches from the stream - uploaded once, or each chunk's slices copied from the host - against
 * the in-core renderer decoding the same stream (vr_renderer_set_gts), and the same frame from
 * the plain index buffer; host streaming copies fewer bytes. gpu-small/stream has fandisk
 * compressed too, with batches of 16 triangles (chunk edges inside every array's words), and
 * gpu-small/stream-gts-damaged the damaged streams of raster/stream-gts-damaged.
 * Each configuration also runs as 3 streamed sort-last parts on the device (every strategy; the
 * 7M meshes the first one), compressed ones also as NCCL ranks (one per device, up to 2; SKIP
 * with the reason where NCCL is missing, left out with VR_TEST_NCCL=0), and as one stream again
 * after them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/gts/gts.h"
#include "raster/raster.h"
#include "raster/sortlast_dev.h"
#include "scenes/scene.h"
#include "tests/test.h"
#include "tests/test_helpers.h"

static const char *const g_all[] = {"naive", "warp", "hash", "phash", "sort", "patch", "meshlet",
                                    NULL};
static const char *const g_big[] = {"naive", "hash", "sort", NULL};

/* What a configuration streams beyond the mesh: compressed input (`gts`, set on the streamed
 * renderer; the in-core one has it already), batch limits (NULL: the paper's), and where the
 * first strategy's Lambert frame's copied bytes go (may be NULL). */
typedef struct stream_extra {
    const vr_gts *gts;
    const vr_batch_limits *limits;
    uint64_t *copied;
} stream_extra;

/* Every strategy x mode of one configuration: the streamed renderer `st` (`parts` > 1: as
 * streamed sort-last parts on this device) against the in-core `one`. */
static void compare(const char *spec, const vr_mesh *m, vr_renderer *one, vr_renderer *st,
                    vr_stream_source src, uint32_t parts, const char *const *strategies, int big,
                    const stream_extra *x)
{
    const uint32_t w = big ? 1920 : 640, h = big ? 1080 : 480;
    vr_render_options o = vr_test_frame_options(m, w, h, 1.3f, 20.0f, 1);
    o.limits = x ? x->limits : NULL;
    const size_t px = (size_t)w * h;
    uint8_t *a = (uint8_t *)malloc(px * 4), *b = (uint8_t *)malloc(px * 4);
    uint64_t *va = (uint64_t *)malloc(px * 8), *vb = (uint64_t *)malloc(px * 8);
    const int modes[] = {VR_SHADE_LAMBERT, VR_SHADE_BATCHES};
    const char *from = vr_stream_source_names[src];
    for (const char *const *s = strategies; *s; ++s) {
        o.strategy = vr_reuse_find(*s);
        for (int mi = 0; mi < (big ? 1 : 2); ++mi) {
            o.mode = (vr_shade_mode)modes[mi];
            vr_render_stats sa, sb;
            VR_EXPECT(vr_renderer_draw(one, a, &o, &sa) == VR_OK, "%s %s: %s", spec, *s,
                      vr_last_error());
            memset(b, 0x5a, px * 4); /* poisoned: an unwritten pixel differs */
            memset(vb, 0x5a, px * 8);
            VR_EXPECT(vr_renderer_draw(st, b, &o, &sb) == VR_OK, "%s %s streamed (%s, %u "
                      "parts): %s", spec, *s, from, parts, vr_last_error());
            VR_EXPECT(vr_renderer_read_vis(one, va, px) == VR_OK &&
                          vr_renderer_read_vis(st, vb, px) == VR_OK,
                      "%s", vr_last_error());
            size_t words, pixels;
            vr_test_frame_diff(va, vb, a, b, px, &words, &pixels);
            VR_EXPECT(words == 0 && pixels == 0, "%s %s streamed (%s, %u parts, %u chunks), "
                      "mode %d: %zu words, %zu pixels of %zu differ", spec, *s, from, parts,
                      sb.chunks, (int)o.mode, words, pixels, px);
            VR_EXPECT(sa.invocations == sb.invocations && sa.batches == sb.batches &&
                          sa.raster.rejected == sb.raster.rejected &&
                          sa.raster.clipped == sb.raster.clipped &&
                          sa.raster.fragments == sb.raster.fragments &&
                          sb.raster.triangles == sa.triangles && sb.parts == parts,
                      "%s %s streamed (%s, %u parts): invocations %llu / %llu, batches %u / %u, "
                      "rejected %llu / %llu, fragments %llu / %llu", spec, *s, from, parts,
                      (unsigned long long)sa.invocations, (unsigned long long)sb.invocations,
                      sa.batches, sb.batches, (unsigned long long)sa.raster.rejected,
                      (unsigned long long)sb.raster.rejected,
                      (unsigned long long)sa.raster.fragments,
                      (unsigned long long)sb.raster.fragments);
            /* from the device: one copy of the scene however many parts stream it; each
             * part's own arrays are a plan's order (or the seeds, compressed) */
            const uint64_t index_bytes = (uint64_t)m->index_count * 4;
            const uint64_t packed =
                x && x->gts ? ((uint64_t)vr_gts_c_words(x->gts) + vr_gts_inc_words(x->gts) +
                               x->gts->s_count) * 4
                            : 0;
            const uint64_t shared = (uint64_t)m->vertex_count * 24 +
                                    (packed ? packed : o.strategy->plan ? 0 : index_bytes);
            const uint64_t own = o.strategy->plan ? (uint64_t)parts * index_bytes : 0;
            VR_EXPECT(src != VR_STREAM_DEVICE ||
                          (sb.scene_shared_bytes == shared &&
                           (packed ? sb.scene_bytes > shared : sb.scene_bytes == shared + own)),
                      "%s %s streamed from the device in %u parts: scene %llu bytes, %llu of "
                      "them shared (expected %llu shared)", spec, *s, parts,
                      (unsigned long long)sb.scene_bytes,
                      (unsigned long long)sb.scene_shared_bytes, (unsigned long long)shared);
            if (mi == 0)
                printf("     %-18s %-7s %-6s %s%u part%s %4u chunks: stream %.3f ms (in-core "
                       "geometry + raster + resolve %.3f), pipeline %.1f MB, copied %.1f MB\n",
                       spec, *s, from, x && x->gts ? "gts " : "", parts, parts == 1 ? " " : "s",
                       sb.chunks, sb.stream_ms,
                       sa.geometry_ms + sa.raster.clear_ms + sa.raster.raster_ms +
                           sa.raster.resolve_ms,
                       sb.pipeline_bytes / 1e6, sb.copied_bytes / 1e6);
            if (mi == 0 && s == strategies && parts == 1 && x && x->copied)
                *x->copied = sb.copied_bytes;
        }
    }
    free(a), free(b), free(va), free(vb);
}

/* One streamed configuration: one stream, then 3 streamed sort-last parts on this device (each
 * part's stream takes the scene's host arrays, which the first one page-locked), then one
 * stream again (made anew by vr_renderer_set_parts). */
static void check_config(const char *spec, const vr_mesh *m, vr_renderer *one, uint64_t cap,
                         vr_stream_source src, const char *const *strategies, int big,
                         const stream_extra *x)
{
    const vr_stream_config sc = {cap * VR_QUEUE_BYTES_PER_TRIANGLE, src};
    vr_renderer *st = NULL;
    VR_EXPECT(vr_renderer_create_streamed(&st, m, 1, &sc) == VR_OK &&
                  (!x || !x->gts || vr_renderer_set_gts(st, x->gts) == VR_OK),
              "%s", vr_last_error());
    if (!st)
        return;
    compare(spec, m, one, st, src, 1, strategies, big, x);
    VR_EXPECT(vr_renderer_set_parts(st, 3, VR_COMPOSITE_LOCAL) == VR_OK, "%s: 3 streamed parts: "
              "%s", spec, vr_last_error());
    const char *const first[] = {strategies[0], NULL};
    compare(spec, m, one, st, src, 3, big ? first : strategies, big, x);
    if (x && x->gts) { /* compressed chunks decoded by NCCL ranks, one per device up to 2 */
        int devices = 0;
        if (!vr_test_nccl_off() && vr_sl_device_count(&devices) == VR_OK) {
            const uint32_t n = devices < 2 ? (uint32_t)devices : 2;
            if (vr_renderer_set_parts(st, n, VR_COMPOSITE_NCCL) == VR_OK)
                compare(spec, m, one, st, src, n, big ? first : strategies, big, x);
            else /* no library: said, not a failure of the code under test */
                printf("     SKIP %s: compressed chunks over NCCL: %s\n", spec, vr_last_error());
        }
    }
    VR_EXPECT(vr_renderer_set_parts(st, 1, VR_COMPOSITE_LOCAL) == VR_OK, "%s: back to one "
              "stream: %s", spec, vr_last_error());
    compare(spec, m, one, st, src, 1, first, big, x);
    vr_renderer_destroy(st);
}

static void check_scene(const char *spec, int big, uint64_t cap)
{
    vr_mesh m;
    char buf[512];
    const char *path = vr_test_plan_spec(buf, sizeof buf, spec);
    if (!path || !vr_test_load(&m, path))
        return;
    vr_renderer *one = NULL;
    VR_EXPECT(vr_renderer_create(&one, &m, 1) == VR_OK, "%s", vr_last_error());
    if (!cap) /* a fifth of the mesh, but at least a few batches */
        cap = m.index_count / 15 + 1500;
    if (one)
        for (int src = 0; src < VR_STREAM_SOURCE_COUNT; ++src)
            check_config(spec, &m, one, cap, (vr_stream_source)src, big ? g_big : g_all, big,
                         NULL);
    vr_renderer_destroy(one);
    vr_mesh_free(&m);
}

static const char *const g_gts[] = {"hash", NULL};

/* `spec` compressed in both restart modes (deg. only with `deg_only`); per stream the in-core
 * renderer decoding it, and streamed renderers in chunks of `cap` (0: a fifth of the mesh) from
 * the device and the host, plain and compressed, under `lim` (NULL: the paper's batches). */
static void check_gts_scene(const char *spec, int big, uint64_t cap, int deg_only,
                            const vr_batch_limits *lim)
{
    vr_mesh src;
    char buf[512];
    const char *path = vr_test_plan_spec(buf, sizeof buf, spec);
    if (!path || !vr_test_load(&src, path))
        return;
    for (int mode = deg_only; mode < 2 && !vr_test_failures; ++mode) {
        char name[128];
        snprintf(name, sizeof name, "%s (%s)", spec, mode ? "deg." : "R");
        vr_gts g;
        vr_mesh m;
        if (vr_test_gts_strips(&g, &m, &src, mode) != VR_OK) {
            VR_EXPECT(0, "%s: %s", name, vr_last_error());
            break;
        }
        vr_renderer *one = NULL;
        VR_EXPECT(vr_renderer_create(&one, &m, 1) == VR_OK, "%s: %s", name, vr_last_error());
        const uint64_t c = cap ? cap : m.index_count / 15 + 1500;
        for (int from = 0; from < VR_STREAM_SOURCE_COUNT && one; ++from) {
            uint64_t plain = 0, packed = 0;
            const stream_extra xp = {NULL, lim, &plain}, xg = {&g, lim, &packed};
            VR_EXPECT(vr_renderer_set_gts(one, NULL) == VR_OK, "%s", vr_last_error());
            check_config(name, &m, one, c, (vr_stream_source)from, g_gts, big, &xp);
            VR_EXPECT(vr_renderer_set_gts(one, &g) == VR_OK, "%s", vr_last_error());
            check_config(name, &m, one, c, (vr_stream_source)from, g_gts, big, &xg);
            if (from == VR_STREAM_HOST)
                VR_EXPECT(packed < plain, "%s from the host: compressed chunks copied %llu "
                          "bytes, plain ones %llu", name, (unsigned long long)packed,
                          (unsigned long long)plain);
        }
        vr_renderer_destroy(one);
        vr_mesh_free(&m);
        vr_gts_free(&g);
    }
    vr_mesh_free(&src);
}

VR_TEST(test_gpu_stream, "gpu/stream")
{
    if (vr_test_no_device())
        return VR_TEST_SKIP;
    for (int i = 0; i < VR_TEST_PLAN_SCENE_COUNT; ++i)
        check_scene(vr_test_plan_scenes[i], 0, 0);
    check_scene("sphere:7M", 1, 1000000);
    check_scene("terrain:7M", 1, 1000000);
    return VR_TEST_RESULT();
}

VR_TEST(test_gpu_small_stream, "gpu-small/stream")
{
    if (vr_test_no_device())
        return VR_TEST_SKIP;
    check_scene("fandisk.obj", 0, 1500);
    /* compressed, batches of at most 16 triangles: chunk edges inside the words of the stream */
    const vr_batch_limits small = vr_test_stream_small_limits();
    check_gts_scene("fandisk.obj", 0, 1500, 0, &small);
    return VR_TEST_RESULT();
}

VR_TEST(test_gpu_stream_gts, "gpu/stream-gts")
{
    if (vr_test_no_device())
        return VR_TEST_SKIP;
    for (int i = 0; i < VR_TEST_PLAN_SCENE_COUNT; ++i)
        check_gts_scene(vr_test_plan_scenes[i], 0, 0, 0, NULL);
    check_gts_scene("sphere:7M", 1, 1000000, 1, NULL);
    return VR_TEST_RESULT();
}

VR_TEST(test_gpu_small_stream_gts_damaged, "gpu-small/stream-gts-damaged",
        "gpu/stream-gts-damaged")
{
    if (vr_test_no_device())
        return VR_TEST_SKIP;
    vr_test_stream_gts_damaged(1);
    return VR_TEST_RESULT();
}
