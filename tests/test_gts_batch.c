/* test_gts_batch.c - per-batch GTS decoding (pipeline/gts_batch.h) on the CPU: seeds computed at
 * batch starts, then every batch decoded on its own from its seed must give exactly the
 * encoder's triangles, for hand-made meshes, random streams, every shared scene, both restart
 * modes and many batchings (one triangle per batch, fixed lengths, dynamic batches of several
 * N_u). Malformed streams and seeds are flagged, never read out of bounds (run under ASan:
 * -DCMAKE_C_FLAGS=-fsanitize=address). The GPU twin is tested in test_gts_batch_gpu.cu.
 */
#include "tests/test.h"

#include <stdlib.h>
#include <string.h>

#include "pipeline/stage/geometry.h"
#include "raster/raster.h"
#include "pipeline/gts/gts_batch.h"
#include "reuse/batches.h"
#include "scenes/scene.h"
#include "tests/test_helpers.h"

/* Decodes every batch of `starts` (tri_starts, batch_count, last one ends at n) from seeds
 * computed on `seeded` and decoded from `g` (the same stream, or a corrupted copy). Returns
 * the OR of the batches' error bits; *out (3 n) gets the triangles. */
static uint32_t decode_batches(uint32_t *out, const vr_gts *seeded, const vr_gts *g,
                               const uint32_t *tri_starts, uint32_t batch_count, vr_status *st)
{
    vr_gts_seed *seeds = malloc(((size_t)batch_count + 1) * sizeof *seeds);
    *st = seeds ? vr_gts_batch_seeds(seeds, seeded, tri_starts, batch_count) : VR_ERR_OOM;
    if (*st) {
        free(seeds);
        return 0;
    }
    vr_gts_batch_source src;
    vr_gts_batch_source_host(&src, g);
    const uint32_t n = g->strip_triangle_count;
    uint32_t err = 0;
    for (uint32_t b = 0; b < batch_count; ++b) {
        const uint32_t t0 = tri_starts[b], t1 = b + 1 < batch_count ? tri_starts[b + 1] : n;
        err |= vr_gts_decode_batch_ref(out + 3 * (size_t)t0, &src, &seeds[b],
                                       b + 1 < batch_count ? &seeds[b + 1] : NULL, t0, t1 - t0);
    }
    free(seeds);
    return err;
}

/* Checks one batching of g against `want` (3 n indices). */
static void check_batching(const vr_gts *g, const uint32_t *want, const uint32_t *tri_starts,
                           uint32_t batch_count, const char *what)
{
    const size_t words = 3 * (size_t)g->strip_triangle_count;
    uint32_t *got = malloc(words * sizeof *got);
    if (!got) {
        VR_EXPECT(0, "%s: out of memory", what);
        return;
    }
    memset(got, 0xff, words * sizeof *got);
    vr_status st;
    const uint32_t err = decode_batches(got, g, g, tri_starts, batch_count, &st);
    VR_EXPECT(st == VR_OK, "%s: seeds: %s", what, vr_last_error());
    VR_EXPECT(err == 0, "%s: %u batches: error bits 0x%x (%s)", what, batch_count, err,
              vr_gts_error_text(err));
    size_t k = 0;
    while (k < words && got[k] == want[k])
        ++k;
    VR_EXPECT(k == words, "%s: %u batches: index %zu (triangle %zu) is %u, expected %u", what,
              batch_count, k, k / 3, k < words ? got[k] : 0, k < words ? want[k] : 0);
    free(got);
}

/* Batchings of an n-triangle stream: fixed lengths 1, 2, 3, 7, 64, 341 and dynamic batches of
 * the decoded mesh for (N_u, max indices) = (3, 3), (8, 30), (256, 1023), (256, 1536). */
static void check_all_batchings(const vr_gts *g, const uint32_t *want, const char *name)
{
    const uint32_t n = g->strip_triangle_count;
    uint32_t *starts = malloc(((size_t)n + 1) * sizeof *starts);
    uint32_t *dyn = malloc((vr_batches_dynamic_bound(3 * n) + 1) * sizeof *dyn);
    if (!starts || !dyn) {
        VR_EXPECT(0, "%s: out of memory", name);
        free(starts);
        free(dyn);
        return;
    }
    char what[256];
    static const uint32_t lengths[] = {1, 2, 3, 7, 64, 341};
    for (size_t l = 0; l < sizeof lengths / sizeof lengths[0]; ++l) {
        uint32_t count = 0;
        for (uint32_t t = 0; t < n; t += lengths[l])
            starts[count++] = t;
        snprintf(what, sizeof what, "%s, batches of %u triangles", name, lengths[l]);
        check_batching(g, want, starts, count, what);
    }
    static const uint32_t dyn_cfg[][2] = {{3, 3}, {8, 30}, {256, 1023}, {256, 1536}};
    for (size_t c = 0; c < sizeof dyn_cfg / sizeof dyn_cfg[0]; ++c) {
        size_t count = 0;
        VR_EXPECT_EQ(vr_batches_dynamic(dyn, &count, want, 3 * n, g->vertex_count, dyn_cfg[c][0],
                                        dyn_cfg[c][1]), VR_OK);
        VR_EXPECT(count > 0, "%s: dynamic batches failed", name);
        for (size_t b = 0; b < count; ++b)
            starts[b] = dyn[b] / 3;
        snprintf(what, sizeof what, "%s, dynamic batches N_u %u / %u indices", name,
                 dyn_cfg[c][0], dyn_cfg[c][1]);
        if (count)
            check_batching(g, want, starts, (uint32_t)count, what);
    }
    free(starts);
    free(dyn);
}

static const char *mode_name(int mode) { return mode == VR_GTS_RESTART_CODE ? "R" : "deg"; }

/* Encodes m in both modes and checks every batching against the encoder's triangles. */
static void check_mesh(const vr_mesh *m, const char *name)
{
    for (int mode = 0; mode < 2; ++mode) {
        vr_gts_options o = vr_gts_options_default();
        o.restart = (vr_gts_restart)mode;
        o.keep_vertex_data = 0;
        vr_gts g;
        vr_gts_map map;
        const vr_status s = vr_gts_encode(&g, &map, m, &o);
        VR_EXPECT(s == VR_OK, "%s: encode: %s", name, vr_last_error());
        if (s)
            continue;
        char what[200];
        snprintf(what, sizeof what, "%s (%s)", name, mode_name(mode));
        check_all_batchings(&g, map.indices, what);
        vr_gts_free(&g);
        vr_gts_map_free(&map);
    }
}

VR_TEST(test_batch_small, "gts/batch-small")
{
    for (size_t w = 0; w < VR_TEST_GTS_SMALL_COUNT; ++w) {
        vr_mesh m;
        const char *name = "";
        VR_EXPECT(vr_test_gts_small(w, &m, &name) == VR_OK, "small mesh %zu", w);
        check_mesh(&m, name);
        vr_mesh_free(&m);
    }
    /* random streams: frequent R codes, long re-use distances, lengths around word edges */
    static const uint32_t sizes[] = {1, 2, 31, 32, 33, 100, 1000, 5000};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; ++k)
        for (int mode = 0; mode < 2; ++mode) {
            vr_gts g;
            VR_EXPECT(vr_test_gts_random_stream(&g, sizes[k], (vr_gts_restart)mode, 17 + k) ==
                          VR_OK, "random stream");
            uint32_t *want = malloc(3 * (size_t)sizes[k] * sizeof *want);
            VR_EXPECT(want && vr_gts_decode_ref(want, &g) == VR_OK, "%s", vr_last_error());
            char what[96];
            snprintf(what, sizeof what, "random stream %u (%s)", sizes[k], mode_name(mode));
            if (want)
                check_all_batchings(&g, want, what);
            free(want);
            vr_gts_free(&g);
        }
    return VR_TEST_RESULT();
}

static void check_scene(const vr_mesh *m, const char *name, void *ctx)
{
    (void)ctx;
    check_mesh(m, name);
}

VR_TEST(test_batch_scenes, "gts/batch-scenes") { return vr_test_gts_each_scene(check_scene, NULL); }

/* A stream the full decoder rejects must be flagged by some batch; seeds come from the intact
 * stream (as when the device copy is damaged), batches of 37 triangles. */
VR_TEST(test_batch_malformed, "gts/batch-malformed")
{
    for (int mode = 0; mode < 2; ++mode) {
        vr_gts good;
        VR_EXPECT(vr_test_gts_random_stream(&good, 2000, (vr_gts_restart)mode, 99) == VR_OK,
                  "random stream");
        const uint32_t n = good.strip_triangle_count;
        uint32_t starts[64], count = 0;
        for (uint32_t t = 0; t < n; t += 37)
            starts[count++] = t;
        uint32_t *out = malloc(3 * (size_t)n * sizeof *out);
        uint32_t *ref = malloc(3 * (size_t)n * sizeof *ref);
        int rejected = 0;
        for (int trial = 0; trial < 300 && out && ref; ++trial) {
            vr_gts bad;
            VR_EXPECT(vr_test_gts_copy(&bad, &good) == VR_OK, "copy");
            uint32_t x = 0x9e3779b9u * (uint32_t)(trial + 1);
            x ^= x >> 15;
            switch (trial % 4) {
            case 0: bad.c[x % vr_gts_c_words(&bad)] ^= 1u << (x >> 27); break;
            case 1: bad.inc[x % vr_gts_inc_words(&bad)] ^= 1u << (x >> 27); break;
            case 2: bad.s[x % bad.s_count] ^= 1u << (x >> 27); break;
            default: bad.s[x % bad.s_count] |= 0xf0000000u; break; /* selector 15 */
            }
            vr_status st;
            const uint32_t err = decode_batches(out, &good, &bad, starts, count, &st);
            VR_EXPECT(st == VR_OK, "seeds: %s", vr_last_error());
            if (vr_gts_decode_scan_ref(ref, &bad) != VR_OK) {
                ++rejected;
                VR_EXPECT(err != 0, "%s trial %d: the full decoder rejects the stream, no batch "
                          "flagged it", mode_name(mode), trial);
            }
            vr_gts_free(&bad);
        }
        VR_EXPECT(rejected > 50, "%s: only %d of 300 mutations were malformed", mode_name(mode),
                  rejected);
        /* seeds pointing anywhere: flagged, nothing read outside the arrays */
        vr_gts_batch_source src;
        vr_gts_batch_source_host(&src, &good);
        for (int trial = 0; trial < 6 && out; ++trial) {
            vr_gts_seed sd;
            memset(&sd, 0, sizeof sd);
            sd.first_pos = trial == 0 ? UINT32_MAX : trial == 1 ? good.v_count : 5;
            sd.s_word = trial == 2 ? UINT32_MAX : trial == 3 ? good.s_count : 0;
            sd.inc_before = trial == 4 ? UINT32_MAX : 0;
            sd.q = trial == 5 ? UINT32_MAX - 1 : 0;
            sd.packed = 31u << 8;
            const uint32_t err = vr_gts_decode_batch_ref(out, &src, &sd, NULL, 100, 50);
            VR_EXPECT(err != 0, "bad seed %d not flagged", trial);
        }
        /* the first batch's seed must be the all-zero start state */
        vr_gts_seed zero;
        memset(&zero, 0, sizeof zero);
        zero.u_prev = 3;
        VR_EXPECT(vr_gts_decode_batch_ref(out, &src, &zero, NULL, 0, 50) != 0,
                  "a non-zero seed for triangle 0 was not flagged");
        free(out);
        free(ref);
        vr_gts_free(&good);
    }
    return VR_TEST_RESULT();
}

/* Bad batch starts are refused with a message. */
VR_TEST(test_batch_seed_args, "gts/batch-seed-args")
{
    vr_gts g;
    VR_EXPECT(vr_test_gts_random_stream(&g, 100, VR_GTS_RESTART_CODE, 3) == VR_OK, "stream");
    vr_gts_seed seeds[3];
    const uint32_t not_zero[] = {1, 5}, descending[] = {0, 50, 40}, beyond[] = {0, 100};
    VR_EXPECT(vr_gts_batch_seeds(seeds, &g, not_zero, 2) == VR_ERR_ARG, "first start 1");
    VR_EXPECT(vr_gts_batch_seeds(seeds, &g, descending, 3) == VR_ERR_ARG, "descending");
    VR_EXPECT(vr_gts_batch_seeds(seeds, &g, beyond, 2) == VR_ERR_ARG, "start = n");
    const uint32_t odd[] = {0, 4};
    VR_EXPECT(vr_gts_batch_seeds_from_index_starts(seeds, &g, odd, 2) == VR_ERR_ARG, "index 4");
    vr_gts_free(&g);
    return VR_TEST_RESULT();
}

/* The CPU twin of hash with compressed input (what the GPU test compares against) equals the
 * twin on the plain index buffer: queue, counters and shade counts. */
static void check_hash_twin(const vr_mesh *src, const char *name)
{
    const vr_reuse_ops *hash = vr_reuse_find("hash");
    for (int mode = 0; mode < 2; ++mode) {
        vr_gts_options o = vr_gts_options_default();
        o.restart = (vr_gts_restart)mode;
        vr_gts g;
        vr_mesh m;
        memset(&m, 0, sizeof m);
        if (vr_gts_encode(&g, NULL, src, &o) != VR_OK || vr_gts_decode_mesh(&m, &g) != VR_OK) {
            VR_EXPECT(0, "%s: %s", name, vr_last_error());
            return;
        }
        const uint32_t tris = m.index_count / 3;
        vr_geometry_result plain, packed;
        memset(&packed, 0, sizeof packed);
        VR_EXPECT(vr_geometry_result_alloc(&plain, tris, m.vertex_count) == VR_OK &&
                      vr_geometry_result_alloc(&packed, tris, m.vertex_count) == VR_OK,
                  "alloc");
        vr_reuse_params p = vr_reuse_params_default();
        vr_camera_orbit_shader(&p.shader, &m, 0.5f);
        p.count = 1;
        p.max_unique = 64;
        p.max_indices = 600;
        VR_EXPECT(vr_geometry_ref(&plain, hash, &m, &p) == VR_OK, "%s", vr_last_error());
        uint32_t *starts = NULL, count = 0;
        VR_EXPECT(vr_geometry_dyn_batches(&starts, &count, &m, p.max_unique, p.max_indices) ==
                      VR_OK, "%s", vr_last_error());
        vr_gts_seed *seeds = malloc(((size_t)count + 1) * sizeof *seeds);
        VR_EXPECT(seeds && vr_gts_batch_seeds_from_index_starts(seeds, &g, starts, count) ==
                               VR_OK, "%s", vr_last_error());
        vr_gts_batch_source gs;
        vr_gts_batch_source_host(&gs, &g);
        gs.seeds = seeds;
        vr_reuse_params r = vr_reuse_params_input(&p, NULL, m.index_count, m.positions, m.normals,
                                                  m.vertex_count);
        r.gts = &gs;
        r.batch_starts = starts;
        r.batch_count = count;
        r.queue = packed.queue;
        r.counters = &packed.counters;
        r.shade_counts = packed.shade_counts;
        if (!vr_test_failures) {
            VR_EXPECT(hash->ref(&r) == VR_OK, "%s: %s", name, vr_last_error());
            vr_geometry_diff d;
            VR_EXPECT(vr_geometry_compare(&d, &packed, &plain, 0, 1, stderr, name) == 0,
                      "%s (%s): compressed twin differs from plain in %llu places", name,
                      mode_name(mode), (unsigned long long)d.mismatches);
            /* damage the stream (code 3 in R mode, an INC bit in deg. mode): refused */
            if (mode == VR_GTS_RESTART_CODE)
                g.c[vr_gts_c_words(&g) / 2] |= 0x30u;
            else
                g.inc[vr_gts_inc_words(&g) / 2] ^= 0x100u;
            VR_EXPECT(hash->ref(&r) == VR_ERR_FORMAT, "%s (%s): damaged stream not reported",
                      name, mode_name(mode));
        }
        free(starts);
        free(seeds);
        vr_geometry_result_free(&plain);
        vr_geometry_result_free(&packed);
        vr_mesh_free(&m);
        vr_gts_free(&g);
    }
}

VR_TEST(test_batch_hash_twin, "gts/batch-hash-twin")
{
    const char *gens[] = {"sphere:5k", "foliage:3k"};
    for (size_t i = 0; i < 2; ++i) {
        vr_mesh m;
        VR_EXPECT(vr_mesh_load(&m, gens[i]) == VR_OK, "%s", vr_last_error());
        if (vr_test_failures)
            return VR_TEST_FAIL;
        check_hash_twin(&m, gens[i]);
        vr_mesh_free(&m);
    }
    return VR_TEST_RESULT();
}
