/* test_gts.c - tests of the GTS codec (pipeline/gts.h): Simple-9 packing by hand, the N/P/R
 * strip recursion by hand, the CPU decoders (sequential, scan and tiled formulation) against
 * each other on random streams, the tiled strip and V passes at tile boundaries and on
 * malformed streams (same verdict as the scan formulation), encode/decode round trips (exact
 * triangle list, sources, winding, vertex permutation and data) on every shared scene, many
 * components and non-manifold meshes in both restart modes, bits per triangle against the
 * paper's Table 2, and malformed files (every truncation, byte flips, bad checksums, corrupt fields
 * behind valid checksums).
 * Group "gts/"; the helpers vr_test_gts_* (tests/test_helpers.h) serve the GTS tests beside it.
 */
#include "tests/test.h"

#include <stdlib.h>
#include <string.h>

#include <meshoptimizer.h>

#include "pipeline/gts/gts.h"
#include "pipeline/gts/gts_math.h"
#include "scenes/scene.h"
#include "tests/test_helpers.h"

/* The CPU decoders; each must return the encoder's triangles exactly. */
static const struct {
    const char *name;
    vr_status (*fn)(uint32_t *indices, const vr_gts *g);
} vr_cpu_decoders[] = {
    {"sequential", vr_gts_decode_ref},
    {"scan", vr_gts_decode_scan_ref},
    {"tiled", vr_gts_decode_tiled_ref},
};
#define VR_CPU_DECODER_COUNT (sizeof vr_cpu_decoders / sizeof vr_cpu_decoders[0])

/* ---- helpers (those not static are shared: tests/test_helpers.h) ------------------------- */

/* A mesh from an index list with deterministic positions/normals (owned: vr_mesh_free). */
static vr_status vr_test_gts_mesh(vr_mesh *m, const uint32_t *indices, uint32_t index_count,
                           uint32_t vertex_count)
{
    memset(m, 0, sizeof *m);
    m->vertex_count = vertex_count;
    m->index_count = index_count;
    m->indices = malloc((index_count ? index_count : 1) * sizeof *m->indices);
    m->positions = malloc(3 * (size_t)(vertex_count ? vertex_count : 1) * sizeof(float));
    m->normals = malloc(3 * (size_t)(vertex_count ? vertex_count : 1) * sizeof(float));
    if (!m->indices || !m->positions || !m->normals) {
        vr_mesh_free(m);
        return VR_ERROR(VR_ERR_OOM, "test mesh: out of memory");
    }
    memcpy(m->indices, indices, index_count * sizeof *indices);
    for (uint32_t i = 0; i < 3 * vertex_count; ++i) {
        m->positions[i] = (float)i * 0.5f;
        m->normals[i] = (float)(i % 7);
    }
    return VR_OK;
}

/* Hand-made meshes: 0 three triangles sharing one edge (non-manifold) plus one glued with the
 * wrong orientation, 1 degenerate and duplicate triangles and an unreferenced vertex,
 * 2 two separate triangles, 3 a single triangle, 4 a fan around vertex 0. */
vr_status vr_test_gts_small(size_t which, vr_mesh *m, const char **name)
{
    static const uint32_t nonmanifold[] = {0, 1, 2, 1, 0, 3, 0, 1, 4, 1, 2, 5, 2, 1, 6, 0, 2, 5};
    static const uint32_t degenerate[] = {0, 1, 2, 2, 1, 3, 3, 3, 4, 0, 1, 2, 1, 0, 5, 5, 0, 5};
    static const uint32_t separate[] = {0, 1, 2, 3, 4, 5};
    static const uint32_t single[] = {2, 0, 1};
    static const uint32_t fan[] = {0, 1, 2, 0, 2, 3, 0, 3, 4, 0, 4, 5, 0, 5, 6, 0, 6, 1};
    switch (which) {
    case 0: *name = "non-manifold edge"; return vr_test_gts_mesh(m, nonmanifold, 18, 7);
    case 1: *name = "degenerate+duplicate+unused"; return vr_test_gts_mesh(m, degenerate, 18, 7);
    case 2: *name = "two components"; return vr_test_gts_mesh(m, separate, 6, 6);
    case 3: *name = "one triangle"; return vr_test_gts_mesh(m, single, 3, 3);
    default: *name = "fan"; return vr_test_gts_mesh(m, fan, 18, 7);
    }
}

static int same_rotation(const uint32_t a[3], const uint32_t b[3])
{
    for (int r = 0; r < 3; ++r)
        if (a[0] == b[r] && a[1] == b[(r + 1) % 3] && a[2] == b[(r + 2) % 3])
            return 1;
    return 0;
}

/* Checks an encoding of `m` completely: all CPU decoders return map->indices exactly; every
 * source triangle appears once, as a rotation of itself (winding kept) under the vertex map;
 * emulation triangles are degenerate; the vertex map is a bijection with referenced vertices
 * first; vertex data is permuted; the file image reads back identical. Returns failures. */
int vr_test_gts_check(const vr_gts *g, const vr_gts_map *map, const vr_mesh *m, const char *what)
{
    const int before = vr_test_failures;
    const uint32_t n = m->index_count / 3, tn = g->strip_triangle_count, vc = m->vertex_count;
    VR_EXPECT_EQ(g->triangle_count, n);
    VR_EXPECT_EQ(map->strip_triangle_count, tn);
    VR_EXPECT_EQ(g->vertex_count, vc);
    VR_EXPECT(vr_gts_validate(g, what) == VR_OK, "%s: %s", what, vr_last_error());
    uint32_t *got = malloc(3 * (size_t)tn * sizeof *got);
    uint8_t *seen = calloc(n ? n : 1, 1), *vseen = calloc(vc ? vc : 1, 1);
    if (!got || !seen || !vseen) {
        VR_EXPECT(0, "%s: out of memory", what);
        goto done;
    }
    for (size_t pass = 0; pass < VR_CPU_DECODER_COUNT; ++pass) {
        memset(got, 0xff, 3 * (size_t)tn * sizeof *got);
        vr_status s = vr_cpu_decoders[pass].fn(got, g);
        VR_EXPECT(s == VR_OK, "%s: %s decoder: %s", what, vr_cpu_decoders[pass].name,
                  vr_last_error());
        size_t k = 0;
        while (k < 3 * (size_t)tn && got[k] == map->indices[k])
            ++k;
        VR_EXPECT(k == 3 * (size_t)tn, "%s: %s decoder: index %zu is %u, encoder wrote %u", what,
                  vr_cpu_decoders[pass].name, k, k < 3 * (size_t)tn ? got[k] : 0,
                  k < 3 * (size_t)tn ? map->indices[k] : 0);
    }
    for (uint32_t i = 0; i < vc; ++i) {
        const uint32_t nw = map->new_of_old[i];
        VR_EXPECT(nw < vc && map->old_of_new[nw] == i, "%s: vertex map broken at %u", what, i);
        if (nw < vc && !vseen[nw])
            vseen[nw] = 1;
        else
            VR_EXPECT(0, "%s: new id %u used twice", what, nw);
    }
    uint32_t max_used = 0, emulated = 0;
    for (uint32_t i = 0; i < tn && vr_test_failures - before < 10; ++i) {
        const uint32_t *t = map->indices + 3 * (size_t)i, src = map->triangle_source[i];
        for (int j = 0; j < 3; ++j)
            max_used = t[j] > max_used ? t[j] : max_used;
        if (src == VR_GTS_EMULATED) {
            ++emulated;
            VR_EXPECT(t[0] == t[1] || t[1] == t[2] || t[2] == t[0],
                      "%s: emulation triangle %u (%u %u %u) is not degenerate", what, i, t[0],
                      t[1], t[2]);
            continue;
        }
        VR_EXPECT(src < n, "%s: triangle %u has source %u of %u", what, i, src, n);
        if (src >= n)
            continue;
        VR_EXPECT(!seen[src], "%s: source triangle %u emitted twice", what, src);
        seen[src] = 1;
        const uint32_t old[3] = {map->old_of_new[t[0]], map->old_of_new[t[1]],
                                 map->old_of_new[t[2]]};
        VR_EXPECT(same_rotation(old, m->indices + 3 * (size_t)src),
                  "%s: triangle %u = source %u (%u %u %u) is not a rotation of (%u %u %u)", what,
                  i, src, old[0], old[1], old[2], m->indices[3 * (size_t)src],
                  m->indices[3 * (size_t)src + 1], m->indices[3 * (size_t)src + 2]);
    }
    VR_EXPECT_EQ(emulated + n, tn);
    VR_EXPECT(g->restart == VR_GTS_RESTART_DEGENERATE || emulated == 0, "%s: R mode emulates", what);
    for (uint32_t i = 0; i < n; ++i)
        if (!seen[i]) {
            VR_EXPECT(0, "%s: source triangle %u missing", what, i);
            break;
        }
    VR_EXPECT_EQ(max_used + 1, g->referenced_count);
    if (g->positions && m->positions)
        for (uint32_t i = 0; i < vc; ++i)
            if (memcmp(g->positions + 3 * (size_t)i, m->positions + 3 * (size_t)map->old_of_new[i],
                       3 * sizeof(float))) {
                VR_EXPECT(0, "%s: positions of new vertex %u are not those of source %u", what, i,
                          map->old_of_new[i]);
                break;
            }
    /* the file image reads back the same stream */
    const size_t bytes = vr_gts_file_bytes(g);
    uint8_t *img = malloc(bytes);
    size_t written = 0;
    vr_gts back;
    if (img && vr_gts_write_memory(img, bytes, &written, g) == VR_OK &&
        vr_gts_read_memory(&back, img, written, what) == VR_OK) {
        VR_EXPECT(back.restart == g->restart && back.v_count == g->v_count &&
                  back.u_count == g->u_count && back.s_count == g->s_count &&
                  !memcmp(back.c, g->c, 4 * (size_t)vr_gts_c_words(g)) &&
                  !memcmp(back.inc, g->inc, 4 * (size_t)vr_gts_inc_words(g)) &&
                  (!g->s_count || !memcmp(back.s, g->s, 4 * (size_t)g->s_count)),
                  "%s: the file image reads back a different stream", what);
        vr_gts_free(&back);
    } else {
        VR_EXPECT(0, "%s: file image write/read: %s", what, vr_last_error());
    }
    free(img);
done:
    free(got);
    free(seen);
    free(vseen);
    return vr_test_failures - before;
}

/* Encodes m in `mode` and runs vr_test_gts_check; the stream and map stay for the caller when
 * g/map are not NULL (then the caller frees them). */
static int vr_test_gts_roundtrip(const vr_mesh *m, vr_gts_restart mode, const char *what,
                                 vr_gts *g_out, vr_gts_map *map_out)
{
    vr_gts_options o = vr_gts_options_default();
    o.restart = mode;
    vr_gts g;
    vr_gts_map map;
    const vr_status s = vr_gts_encode(&g, &map, m, &o);
    VR_EXPECT(s == VR_OK, "%s: encode: %s", what, vr_last_error());
    if (s)
        return 1;
    const int fails = vr_test_gts_check(&g, &map, m, what);
    if (g_out)
        *g_out = g;
    else
        vr_gts_free(&g);
    if (map_out)
        *map_out = map;
    else
        vr_gts_map_free(&map);
    return fails;
}

#define VR_RND() (*x ^= *x << 13, *x ^= *x >> 7, *x ^= *x << 17, (uint32_t)(*x >> 11))

/* A well-formed stream with the strip codes codes[0..n-1] (R only in R mode; codes[0] is R, and
 * ignored in deg. mode): each V entry new with probability 1/2 unless no vertex exists yet;
 * re-used vertices drawn near the newest one so deltas stay small. Draws from the xorshift
 * state *x. */
static vr_status stream_from_codes(vr_gts *g, const uint32_t *codes, uint32_t n,
                                   vr_gts_restart mode, uint64_t *x)
{
    memset(g, 0, sizeof *g);
    g->restart = mode;
    g->triangle_count = g->strip_triangle_count = n;
    uint32_t restarts = 0;
    g->c = calloc(vr_gts_c_words(g), sizeof *g->c);
    if (!g->c)
        return VR_ERR_OOM;
    for (uint32_t i = 0; i < n; ++i) {
        if (mode == VR_GTS_RESTART_CODE) {
            g->c[i >> 4] |= codes[i] << ((i & 15) * 2);
            restarts += i > 0 && codes[i] == VR_GTS_CODE_R;
        } else if (i > 0) {
            g->c[i >> 5] |= codes[i] << (i & 31);
        }
    }
    g->restart_count = restarts;
    g->v_count = n + 2 + (mode == VR_GTS_RESTART_CODE ? 2 * restarts : 0);
    g->inc = calloc(vr_gts_inc_words(g), sizeof *g->inc);
    uint32_t *deltas = malloc((size_t)g->v_count * sizeof *deltas);
    g->s = malloc((size_t)g->v_count * sizeof *g->s);
    if (!g->inc || !deltas || !g->s) {
        free(deltas);
        vr_gts_free(g);
        return VR_ERR_OOM;
    }
    uint32_t next = 0, prev = 0;
    for (uint32_t j = 0; j < g->v_count; ++j) {
        if (next == 0 || VR_RND() % 2) {
            g->inc[j >> 5] |= 1u << (j & 31);
            ++next;
            continue;
        }
        const uint32_t back = VR_RND() % (next < 40 ? next : 40);
        const uint32_t u = next - 1 - back, d = u - prev;
        deltas[g->u_count++] = (d << 1) ^ (0u - (d >> 31));
        prev = u;
    }
    g->referenced_count = g->vertex_count = next;
    size_t words = 0;
    vr_status s = vr_s9_encode(g->s, &words, deltas, g->u_count, VR_GTS_PACK_OPTIMAL);
    g->s_count = (uint32_t)words;
    free(deltas);
    if (s)
        vr_gts_free(g);
    return s;
}

/* A random but well-formed stream: n strip triangles in `mode`, R codes with probability
 * 1/8 (R mode), V as stream_from_codes. Deterministic in `seed`. */
vr_status vr_test_gts_random_stream(vr_gts *g, uint32_t n, vr_gts_restart mode, uint64_t seed)
{
    memset(g, 0, sizeof *g);
    uint64_t state = seed * 0x9E3779B97F4A7C15ull + 1, *x = &state;
    uint32_t *codes = malloc((size_t)n * sizeof *codes);
    if (!codes)
        return VR_ERR_OOM;
    for (uint32_t i = 0; i < n; ++i) {
        codes[i] = VR_RND() & 1u;
        if (mode == VR_GTS_RESTART_CODE && (i == 0 || VR_RND() % 8 == 0))
            codes[i] = VR_GTS_CODE_R;
    }
    const vr_status s = stream_from_codes(g, codes, n, mode, x);
    free(codes);
    return s;
}

/* A deep copy, for mutation tests. */
vr_status vr_test_gts_copy(vr_gts *dst, const vr_gts *src)
{
    *dst = *src;
    dst->positions = dst->normals = dst->texcoords = NULL;
    const size_t cw = vr_gts_c_words(src), iw = vr_gts_inc_words(src);
    dst->c = malloc(4 * (cw ? cw : 1));
    dst->inc = malloc(4 * (iw ? iw : 1));
    dst->s = malloc(4 * ((size_t)src->s_count + 1));
    if (!dst->c || !dst->inc || !dst->s) {
        vr_gts_free(dst);
        return VR_ERR_OOM;
    }
    memcpy(dst->c, src->c, 4 * cw);
    memcpy(dst->inc, src->inc, 4 * iw);
    if (src->s_count)
        memcpy(dst->s, src->s, 4 * (size_t)src->s_count);
    return VR_OK;
}

/* The shared scenes of ../shared/scenes (NULL-terminated). */
static const char *const vr_test_gts_scenes[] = {"fandisk.obj", "horse.ply", "igea.ply",
                                                 "stanford-bunny.obj", "rocker-arm.obj",
                                                 "spot.obj", "cow.obj", "teapot.obj", NULL};

/* Loads every scene of vr_test_gts_scenes and calls fn(mesh, name, ctx). Returns VR_TEST_SKIP
 * (with the message) when the scenes directory is missing, else VR_TEST_RESULT(). */
int vr_test_gts_each_scene(void (*fn)(const vr_mesh *m, const char *name, void *ctx), void *ctx)
{
    char path[1024];
    if (!vr_test_scene_path(path, sizeof path, vr_test_gts_scenes[0])) {
        printf("SKIP: ../shared/scenes not found (set VR_SCENES)\n");
        return VR_TEST_SKIP;
    }
    for (size_t i = 0; vr_test_gts_scenes[i]; ++i) {
        vr_mesh m;
        vr_test_scene_path(path, sizeof path, vr_test_gts_scenes[i]);
        if (!vr_test_load(&m, path))
            continue;
        fn(&m, vr_test_gts_scenes[i], ctx);
        vr_mesh_free(&m);
    }
    return VR_TEST_RESULT();
}

/* Flips `flips` random bits of C, INC and S (xorshift state *x): damage behind valid counts. */
void vr_test_gts_flip_bits(vr_gts *g, uint64_t *x, int flips)
{
    for (int f = 0; f < flips; ++f) {
        *x ^= *x << 13, *x ^= *x >> 7, *x ^= *x << 17;
        const uint32_t which = (uint32_t)(*x % 3), bit = (uint32_t)(*x >> 40) % 32;
        uint32_t *arr = which == 0 ? g->c : which == 1 ? g->inc : g->s;
        const uint32_t len = which == 0 ? vr_gts_c_words(g)
                           : which == 1 ? vr_gts_inc_words(g) : g->s_count;
        if (len)
            arr[(*x >> 20) % len] ^= 1u << bit;
    }
}

/* ---- Simple-9 ----------------------------------------------------------------------------- */

VR_TEST(test_simple9_hand, "gts/simple9-hand")
{
    uint32_t w[16], back[32];
    size_t count = 0;
    /* the paper's Fig. 6 start: a 9-bit and a 14-bit code share one word, selector h (2 x 14) */
    const uint32_t a[] = {300, 10000};
    VR_EXPECT(vr_s9_encode(w, &count, a, 2, VR_GTS_PACK_OPTIMAL) == VR_OK, "%s", vr_last_error());
    VR_EXPECT_EQ(count, 1);
    VR_EXPECT_EQ(w[0], 0x70000000u | 300u | 10000u << 14);
    /* 28 one-bit codes: selector a, all data bits set */
    uint32_t ones[28];
    for (int i = 0; i < 28; ++i)
        ones[i] = 1;
    VR_EXPECT(vr_s9_encode(w, &count, ones, 28, VR_GTS_PACK_GREEDY) == VR_OK, "greedy");
    VR_EXPECT_EQ(count, 1);
    VR_EXPECT_EQ(w[0], 0x0fffffffu);
    /* greedy takes 3 x 9 first and needs 3 words; optimal packs 2 x 14 then 7 x 4 */
    const uint32_t b[] = {511, 127, 0, 0, 7, 15, 15, 1, 7};
    VR_EXPECT(vr_s9_encode(w, &count, b, 9, VR_GTS_PACK_GREEDY) == VR_OK, "greedy");
    VR_EXPECT_EQ(count, 3);
    VR_EXPECT_EQ(w[0], 0x60000000u | 511u | 127u << 9);  /* 3 x 9: 511 127 0 */
    VR_EXPECT_EQ(w[1], 0x40000000u | 7u << 5 | 15u << 10 | 15u << 15 | 1u << 20); /* 5 x 5 */
    VR_EXPECT_EQ(w[2], 0x80000007u);                      /* 1 x 28: 7 */
    VR_EXPECT(vr_s9_decode(back, 9, w, count, "hand") == VR_OK, "%s", vr_last_error());
    VR_EXPECT(!memcmp(back, b, sizeof b), "greedy words decode back");
    VR_EXPECT(vr_s9_encode(w, &count, b, 9, VR_GTS_PACK_OPTIMAL) == VR_OK, "optimal");
    VR_EXPECT_EQ(count, 2);
    VR_EXPECT_EQ(w[0], 0x701fc1ffu);
    VR_EXPECT_EQ(w[1], 0x371ff700u);
    VR_EXPECT(vr_s9_decode(back, 9, w, count, "hand") == VR_OK, "%s", vr_last_error());
    VR_EXPECT(!memcmp(back, b, sizeof b), "optimal words decode back");
    /* values beyond 28 bits are refused */
    const uint32_t big[] = {1, 1u << 28};
    VR_EXPECT(vr_s9_encode(w, &count, big, 2, VR_GTS_PACK_OPTIMAL) == VR_ERR_OVERFLOW, "2^28");
    /* malformed words */
    uint32_t bad = 0x90000000u; /* selector 9 */
    VR_EXPECT(vr_s9_decode(back, 1, &bad, 1, "bad") == VR_ERR_FORMAT, "selector 9");
    bad = 0x60000000u | 1u << 27; /* 3 x 9 uses 27 bits; bit 27 is padding */
    VR_EXPECT(vr_s9_decode(back, 3, &bad, 1, "bad") == VR_ERR_FORMAT, "padding");
    bad = 0x0fffffffu; /* 28 codes where 27 are expected, and the reverse */
    VR_EXPECT(vr_s9_decode(back, 27, &bad, 1, "bad") == VR_ERR_FORMAT, "too many codes");
    VR_EXPECT(vr_s9_decode(back, 29, &bad, 1, "bad") == VR_ERR_FORMAT, "too few codes");
    return VR_TEST_RESULT();
}

VR_TEST(test_simple9_random, "gts/simple9-random")
{
    enum { N = 5000 };
    uint32_t *v = malloc(N * sizeof *v), *w = malloc(N * sizeof *w), *back = malloc(N * sizeof *back);
    uint64_t x = 12345;
    for (int round = 0; round < 20 && v && w && back; ++round) {
        for (int k = 0; k < N; ++k) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            const uint32_t bits = (uint32_t)(x % 29); /* 0..28 bits, skewed small below */
            v[k] = (uint32_t)(x >> 20) & ((bits < 4 || round % 3 == 0 ? 1u << (bits % 4) : 1u << bits) - 1u);
        }
        size_t greedy = 0, optimal = 0;
        VR_EXPECT(vr_s9_encode(w, &greedy, v, N, VR_GTS_PACK_GREEDY) == VR_OK, "greedy");
        VR_EXPECT(vr_s9_decode(back, N, w, greedy, "greedy") == VR_OK, "%s", vr_last_error());
        VR_EXPECT(!memcmp(back, v, N * sizeof *v), "round %d: greedy round trip", round);
        VR_EXPECT(vr_s9_encode(w, &optimal, v, N, VR_GTS_PACK_OPTIMAL) == VR_OK, "optimal");
        VR_EXPECT(vr_s9_decode(back, N, w, optimal, "optimal") == VR_OK, "%s", vr_last_error());
        VR_EXPECT(!memcmp(back, v, N * sizeof *v), "round %d: optimal round trip", round);
        VR_EXPECT(optimal <= greedy, "round %d: optimal %zu words > greedy %zu", round, optimal,
                  greedy);
    }
    free(v);
    free(w);
    free(back);
    return VR_TEST_RESULT();
}

/* ---- the strip recursion by hand ----------------------------------------------------------- */

/* Builds an R-mode stream from codes and V (all entries new unless listed in `reused`). */
static void hand_stream(vr_gts *g, uint32_t *c, uint32_t *inc, uint32_t *s, const uint32_t *codes,
                        uint32_t n, const uint32_t *v, uint32_t v_count, vr_gts_restart mode)
{
    memset(g, 0, sizeof *g);
    memset(c, 0, 4 * 4);
    memset(inc, 0, 4 * 4);
    g->restart = mode;
    g->triangle_count = g->strip_triangle_count = n;
    for (uint32_t i = 0; i < n; ++i) {
        if (mode == VR_GTS_RESTART_CODE)
            c[i >> 4] |= codes[i] << ((i & 15) * 2);
        else if (i > 0)
            c[i >> 5] |= codes[i] << (i & 31);
        g->restart_count += i > 0 && codes[i] == VR_GTS_CODE_R;
    }
    uint32_t next = 0, prev = 0, deltas[16];
    for (uint32_t j = 0; j < v_count; ++j) {
        if (v[j] == next) {
            inc[j >> 5] |= 1u << (j & 31);
            ++next;
        } else {
            const uint32_t d = v[j] - prev;
            deltas[g->u_count++] = (d << 1) ^ (0u - (d >> 31));
            prev = v[j];
        }
    }
    size_t words = 0;
    vr_s9_encode(s, &words, deltas, g->u_count, VR_GTS_PACK_OPTIMAL);
    g->s_count = (uint32_t)words;
    g->v_count = v_count;
    g->vertex_count = g->referenced_count = next;
    g->c = c, g->inc = inc, g->s = s;
}

static int decode_all(const vr_gts *g, const uint32_t *want, uint32_t n, const char *what)
{
    uint32_t got[64];
    for (size_t pass = 0; pass < VR_CPU_DECODER_COUNT; ++pass) {
        memset(got, 0xff, sizeof got);
        const vr_status s = vr_cpu_decoders[pass].fn(got, g);
        VR_EXPECT(s == VR_OK, "%s (%s): %s", what, vr_cpu_decoders[pass].name, vr_last_error());
        for (uint32_t k = 0; k < 3 * n; ++k)
            if (got[k] != want[k]) {
                VR_EXPECT(got[k] == want[k], "%s (%s): index %u is %u, expected %u", what,
                          vr_cpu_decoders[pass].name, k, got[k], want[k]);
                break;
            }
    }
    return 0;
}

VR_TEST(test_strip_codes_hand, "gts/strip-codes-hand")
{
    uint32_t c[4], inc[4], s[8];
    vr_gts g;
    /* R N P N over V = 0..5: T0 = (0,1,2); N -> (T0.v2, T0.v1, 3); P -> (T1.v0, T1.v2, 4);
     * N -> (T2.v2, T2.v1, 5) */
    const uint32_t codes1[] = {VR_GTS_CODE_R, VR_GTS_CODE_N, VR_GTS_CODE_P, VR_GTS_CODE_N};
    const uint32_t v1[] = {0, 1, 2, 3, 4, 5};
    const uint32_t want1[] = {0, 1, 2, 2, 1, 3, 2, 3, 4, 4, 3, 5};
    hand_stream(&g, c, inc, s, codes1, 4, v1, 6, VR_GTS_RESTART_CODE);
    VR_EXPECT_EQ(c[0], 0x12u); /* R=2 in bits 0-1, N=0, P=1 in bits 4-5, N=0 */
    VR_EXPECT_EQ(inc[0], 0x3fu);
    decode_all(&g, want1, 4, "R N P N");
    /* the same codes in deg. mode (triangle 0 implicit) decode identically */
    hand_stream(&g, c, inc, s, codes1, 4, v1, 6, VR_GTS_RESTART_DEGENERATE);
    VR_EXPECT_EQ(c[0], 0x4u); /* bit 2: P */
    decode_all(&g, want1, 4, "deg. N P N");
    /* a fan is P P P: Q keeps pointing at V[0] (the max scan carries it) */
    const uint32_t codes2[] = {VR_GTS_CODE_R, VR_GTS_CODE_P, VR_GTS_CODE_P, VR_GTS_CODE_P};
    const uint32_t want2[] = {0, 1, 2, 0, 2, 3, 0, 3, 4, 0, 4, 5};
    hand_stream(&g, c, inc, s, codes2, 4, v1, 6, VR_GTS_RESTART_CODE);
    decode_all(&g, want2, 4, "fan R P P P");
    /* N N N: a fan around T0.v1 */
    const uint32_t codes3[] = {VR_GTS_CODE_R, VR_GTS_CODE_N, VR_GTS_CODE_N, VR_GTS_CODE_N};
    const uint32_t want3[] = {0, 1, 2, 2, 1, 3, 3, 1, 4, 4, 1, 5};
    hand_stream(&g, c, inc, s, codes3, 4, v1, 6, VR_GTS_RESTART_CODE);
    decode_all(&g, want3, 4, "fan R N N N");
    /* a restart: R P R N over V = 0..7: T2 takes three new entries, T3 continues from it */
    const uint32_t codes4[] = {VR_GTS_CODE_R, VR_GTS_CODE_P, VR_GTS_CODE_R, VR_GTS_CODE_N};
    const uint32_t v4[] = {0, 1, 2, 3, 4, 5, 6, 7};
    const uint32_t want4[] = {0, 1, 2, 0, 2, 3, 4, 5, 6, 6, 5, 7};
    hand_stream(&g, c, inc, s, codes4, 4, v4, 8, VR_GTS_RESTART_CODE);
    VR_EXPECT_EQ(g.restart_count, 1);
    decode_all(&g, want4, 4, "R P R N");
    /* re-used vertices: V = 0 1 2 0 3 1 -> U = [0, 1], D = zigzag(0), zigzag(1) = 0, 2 */
    const uint32_t codes5[] = {VR_GTS_CODE_R, VR_GTS_CODE_N, VR_GTS_CODE_P, VR_GTS_CODE_N};
    const uint32_t v5[] = {0, 1, 2, 0, 3, 1};
    const uint32_t want5[] = {0, 1, 2, 2, 1, 0, 2, 0, 3, 3, 0, 1};
    hand_stream(&g, c, inc, s, codes5, 4, v5, 6, VR_GTS_RESTART_CODE);
    VR_EXPECT_EQ(inc[0], 0x17u); /* entries 0 1 2 4 new */
    VR_EXPECT_EQ(g.u_count, 2);
    VR_EXPECT_EQ(g.s_count, 1);
    VR_EXPECT_EQ(s[0], 0x70000000u | 0u | 2u << 14); /* 2 codes of 14 bits: 0 and 2 */
    decode_all(&g, want5, 4, "re-use");
    /* a re-used vertex that does not exist yet is malformed */
    const uint32_t v6[] = {0, 1, 2, 3, 3, 4}; /* wrong on purpose: fixed below */
    hand_stream(&g, c, inc, s, codes5, 4, v6, 6, VR_GTS_RESTART_CODE);
    s[0] = 0x80000000u | 20u; /* U[0] = zigzag^-1(20) = 10: vertex 10 before it exists */
    uint32_t got[12];
    VR_EXPECT(vr_gts_decode_ref(got, &g) == VR_ERR_FORMAT, "future vertex accepted");
    VR_EXPECT(vr_gts_decode_scan_ref(got, &g) == VR_ERR_FORMAT, "future vertex accepted (scan)");
    VR_EXPECT(vr_gts_decode_tiled_ref(got, &g) == VR_ERR_FORMAT, "future vertex accepted (tiled)");
    return VR_TEST_RESULT();
}

/* Restart emulation: two separate triangles need a bridge of degenerate triangles. */
VR_TEST(test_restart_emulation, "gts/restart-emulation")
{
    vr_mesh m;
    const char *name;
    if (vr_test_gts_small(2, &m, &name) != VR_OK)
        return VR_TEST_FAIL;
    vr_gts g;
    vr_gts_map map;
    if (vr_test_gts_roundtrip(&m, VR_GTS_RESTART_DEGENERATE, name, &g, &map) == 0) {
        /* (x,y,z) -> (a,b,c) with six distinct vertices takes the general 4-triangle bridge */
        VR_EXPECT_EQ(g.strip_triangle_count, 6);
        VR_EXPECT_EQ(g.restart_count, 1);
        VR_EXPECT_EQ(g.v_count, 8);
        for (int i = 1; i <= 4; ++i)
            VR_EXPECT_EQ(map.triangle_source[i], VR_GTS_EMULATED);
        vr_gts_free(&g);
        vr_gts_map_free(&map);
    }
    if (vr_test_gts_roundtrip(&m, VR_GTS_RESTART_CODE, name, &g, &map) == 0) {
        VR_EXPECT_EQ(g.strip_triangle_count, 2);
        VR_EXPECT_EQ(g.v_count, 6); /* R R: three explicit vertices each */
        VR_EXPECT_EQ(g.c[0], 0xau);
        vr_gts_free(&g);
        vr_gts_map_free(&map);
    }
    vr_mesh_free(&m);
    return VR_TEST_RESULT();
}

/* The scan formulation (M, Q max scan, ...) and the tiled one equal the sequential recursion on
 * random streams with all code combinations, including R after R and long N/P runs; sizes
 * around the tile (VR_GTS_TILE = 2048) and its multiples. */
VR_TEST(test_scan_vs_sequential, "gts/scan-vs-sequential")
{
    const uint32_t sizes[] = {1, 2, 3, 17, 100, 1000, 2047, 2048, 2049, 4096, 6145, 20000};
    for (int mode = 0; mode < 2; ++mode)
        for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; ++k)
            for (uint64_t seed = 1; seed <= 3; ++seed) {
                vr_gts g;
                if (vr_test_gts_random_stream(&g, sizes[k], (vr_gts_restart)mode, seed) != VR_OK) {
                    VR_EXPECT(0, "random stream: out of memory");
                    continue;
                }
                const size_t words = 3 * (size_t)sizes[k];
                uint32_t *a = malloc(words * 4), *b = malloc(words * 4), *c = malloc(words * 4);
                VR_EXPECT(a && b && c && vr_gts_decode_ref(a, &g) == VR_OK, "%s", vr_last_error());
                VR_EXPECT(a && b && c && vr_gts_decode_scan_ref(b, &g) == VR_OK, "%s",
                          vr_last_error());
                VR_EXPECT(a && b && c && vr_gts_decode_tiled_ref(c, &g) == VR_OK, "%s",
                          vr_last_error());
                VR_EXPECT(a && b && !memcmp(a, b, words * 4),
                          "mode %d n %u seed %llu: scan decode differs from the recursion", mode,
                          sizes[k], (unsigned long long)seed);
                VR_EXPECT(a && c && !memcmp(a, c, words * 4),
                          "mode %d n %u seed %llu: tiled decode differs from the recursion", mode,
                          sizes[k], (unsigned long long)seed);
                free(a);
                free(b);
                free(c);
                vr_gts_free(&g);
            }
    return VR_TEST_RESULT();
}

/* ---- the tiled strip pass ------------------------------------------------------------------ */

/* The tile operator of gts_math.h: identity, associativity over random splits of real streams,
 * and the prefix from triangle 0 is exactly (M[i], Q[i] + VR_GTS_Q_BIAS) of the M and Q scans. */
VR_TEST(test_tile_operator, "gts/tile-operator")
{
    for (int mode = 0; mode < 2; ++mode) {
        vr_gts g;
        const uint32_t n = 3 * VR_GTS_TILE + 100;
        if (vr_test_gts_random_stream(&g, n, (vr_gts_restart)mode, 5) != VR_OK)
            return VR_TEST_FAIL;
        const uint32_t codes = mode == VR_GTS_RESTART_CODE;
        /* prefix vs M and Q computed as M_Scan and Q_Scan do */
        vr_gts_tile_agg prefix = vr_gts_tile_empty();
        uint32_t m = 0, q = 0;
        for (uint32_t i = 0; i < n && vr_test_failures < 10; ++i) {
            const uint32_t cur = vr_gts_code_sane(vr_gts_code_at(g.c, i, codes));
            m += i == 0 ? 2u : vr_gts_m_step(cur);
            if (i > 0) {
                const uint32_t prev = vr_gts_code_sane(vr_gts_code_at(g.c, i - 1, codes));
                const uint32_t val = vr_gts_q_value(prev, cur, m);
                q = val > q ? val : q;
            }
            prefix = vr_gts_tile_combine(prefix, vr_gts_tile_elem(g.c, i, codes));
            VR_EXPECT(prefix.sum == m && vr_gts_tile_q(prefix) == q,
                      "mode %d triangle %u: prefix (%u, q %u) vs M %u, Q %u", mode, i, prefix.sum,
                      vr_gts_tile_q(prefix), m, q);
        }
        /* fold(a..c) = fold(a..b) then fold(b..c), for random a <= b <= c */
        uint64_t state = 77 + (uint64_t)mode, *x = &state;
        for (int it = 0; it < 2000 && vr_test_failures < 10; ++it) {
            uint32_t a = VR_RND() % n, b = VR_RND() % n, c = VR_RND() % (n + 1);
            if (a > b) { const uint32_t t = a; a = b; b = t; }
            if (b > c) { const uint32_t t = b; b = c; c = t; }
            if (a > b) { const uint32_t t = a; a = b; b = t; }
            vr_gts_tile_agg left = vr_gts_tile_empty(), right = vr_gts_tile_empty();
            vr_gts_tile_agg all = vr_gts_tile_empty();
            for (uint32_t i = a; i < c; ++i) {
                const vr_gts_tile_agg e = vr_gts_tile_elem(g.c, i, codes);
                all = vr_gts_tile_combine(all, e);
                if (i < b)
                    left = vr_gts_tile_combine(left, e);
                else
                    right = vr_gts_tile_combine(right, e);
            }
            const vr_gts_tile_agg split = vr_gts_tile_combine(left, right);
            VR_EXPECT(split.sum == all.sum && split.q == all.q,
                      "mode %d [%u, %u) + [%u, %u): (%u, %u) vs (%u, %u)", mode, a, b, b, c,
                      split.sum, split.q, all.sum, all.q);
            const vr_gts_tile_agg e = vr_gts_tile_combine(vr_gts_tile_empty(), all);
            const vr_gts_tile_agg f = vr_gts_tile_combine(all, vr_gts_tile_empty());
            VR_EXPECT(e.sum == all.sum && e.q == all.q && f.sum == all.sum && f.q == all.q,
                      "mode %d: the empty segment is not the identity", mode);
        }
        vr_gts_free(&g);
    }
    return VR_TEST_RESULT();
}

/* Strip code of pattern `pat` at triangle i (tile position r = i % VR_GTS_TILE); R patterns
 * fall back to N/P in deg. mode. */
static uint32_t pattern_code(int pat, uint32_t i, int r_mode, uint64_t *x)
{
    const uint32_t r = i % VR_GTS_TILE, last = VR_GTS_TILE - 1;
    const uint32_t R = r_mode ? VR_GTS_CODE_R : VR_GTS_CODE_P;
    switch (pat) {
    case 0: /* a fan: one candidate (triangle 1), carried through tiles that have none */
        return VR_GTS_CODE_P;
    case 1: /* the other fan */
        return VR_GTS_CODE_N;
    case 2: /* restarts on the first and the last triangle of every tile, random in between */
        return r == 0 || r == last ? R : (VR_RND() & 1u);
    case 3: /* R ends a tile, P starts the next: candidate 2 below the tile's M base; then a fan */
        return r == last ? R : VR_GTS_CODE_P;
    case 4: /* P ends a tile, N starts the next (1 below the base); the rest of the tile N */
        return r == last ? VR_GTS_CODE_P : VR_GTS_CODE_N;
    default: /* random, restarts forced on the last, first and second triangle of tiles */
        if (r_mode && (r == last || r <= 1 || VR_RND() % 8 == 0))
            return VR_GTS_CODE_R;
        return VR_RND() & 1u;
    }
}

/* Tile boundaries: streams of lengths around multiples of the tile, 1-triangle streams, and
 * code patterns that put restarts, negative relative candidates and candidate-free tiles
 * exactly at tile edges. The tiled decoder must equal the recursion and the scan formulation. */
VR_TEST(test_tiled_boundaries, "gts/tiled-boundaries")
{
    const uint32_t t = VR_GTS_TILE;
    const uint32_t lengths[] = {1, 2, 3, t - 1, t, t + 1, 2 * t, 2 * t + 1, 3 * t - 1, 4 * t + 77};
    const size_t max_words = 3 * (size_t)(4 * t + 77);
    uint32_t *codes = malloc((4 * (size_t)t + 77) * sizeof *codes);
    uint32_t *a = malloc(max_words * 4), *b = malloc(max_words * 4), *c = malloc(max_words * 4);
    for (int mode = 0; mode < 2 && codes && a && b && c; ++mode)
        for (int pat = 0; pat < 6; ++pat)
            for (size_t k = 0; k < sizeof lengths / sizeof lengths[0]; ++k) {
                const uint32_t n = lengths[k];
                uint64_t state = 1000 + 10 * (uint64_t)pat + (uint64_t)mode, *x = &state;
                for (uint32_t i = 0; i < n; ++i)
                    codes[i] = pattern_code(pat, i, mode == VR_GTS_RESTART_CODE, x);
                codes[0] = VR_GTS_CODE_R;
                vr_gts g;
                if (stream_from_codes(&g, codes, n, (vr_gts_restart)mode, x) != VR_OK) {
                    VR_EXPECT(0, "stream: out of memory");
                    continue;
                }
                const size_t words = 3 * (size_t)n;
                memset(c, 0xff, words * 4);
                const vr_status sa = vr_gts_decode_ref(a, &g), sb = vr_gts_decode_scan_ref(b, &g);
                const vr_status sc = vr_gts_decode_tiled_ref(c, &g);
                VR_EXPECT(sa == VR_OK && sb == VR_OK && sc == VR_OK,
                          "mode %d pattern %d n %u: status %d %d %d: %s", mode, pat, n, (int)sa,
                          (int)sb, (int)sc, vr_last_error());
                size_t w = 0;
                while (w < words && a[w] == c[w] && b[w] == c[w])
                    ++w;
                VR_EXPECT(w == words, "mode %d pattern %d n %u: index %zu (triangle %zu, tile "
                          "%zu): tiled %u, scan %u, recursion %u", mode, pat, n, w, w / 3,
                          w / 3 / VR_GTS_TILE, w < words ? c[w] : 0, w < words ? b[w] : 0,
                          w < words ? a[w] : 0);
                vr_gts_free(&g);
            }
    VR_EXPECT(codes && a && b && c, "out of memory");
    free(codes);
    free(a);
    free(b);
    free(c);
    return VR_TEST_RESULT();
}

/* The error bits of the last decoder message ("... (error bits 0x5): ..."), or "" for errors
 * found before the passes (counts). */
static void error_bits_of_last(char *dst, size_t cap)
{
    const char *at = strstr(vr_last_error(), "(error bits");
    snprintf(dst, cap, "%.*s", at ? (int)(strcspn(at, ")") + 1) : 0, at ? at : "");
}

/* What the scan and the tiled formulation made of one stream. */
typedef struct scan_vs_tiled {
    vr_status scan, tiled;
    char scan_bits[64], tiled_bits[64]; /* error_bits_of_last after each */
} scan_vs_tiled;

/* Decodes g with both formulations, into `scan` and `tiled` (words entries each, poisoned
 * differently first so that an unwritten entry cannot match). vr_last_error() is the tiled
 * decoder's afterwards. */
static scan_vs_tiled decode_scan_and_tiled(uint32_t *scan, uint32_t *tiled, size_t words,
                                           const vr_gts *g)
{
    scan_vs_tiled r;
    memset(scan, 0xff, words * 4);
    memset(tiled, 0xee, words * 4);
    r.scan = vr_gts_decode_scan_ref(scan, g);
    error_bits_of_last(r.scan_bits, sizeof r.scan_bits);
    r.tiled = vr_gts_decode_tiled_ref(tiled, g);
    error_bits_of_last(r.tiled_bits, sizeof r.tiled_bits);
    return r;
}

/* Malformed content behind valid counts, as the GPU test does it: the tiled formulation gives
 * the scan formulation's verdict with the same error bits and, since it computes the same V, M
 * and Q, the same (clamped) output even when it refuses. Streams of 1, 2 and 3 tiles + 300
 * triangles, and 2 V tiles + 100 entries or more (carries between V tiles). */
VR_TEST(test_tiled_malformed, "gts/tiled-malformed")
{
    const uint32_t sizes[] = {1, 2, 3 * VR_GTS_TILE + 300, 2 * VR_GTS_VTILE + 98};
    for (int mode = 0; mode < 2; ++mode)
        for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; ++z) {
            vr_gts orig;
            if (vr_test_gts_random_stream(&orig, sizes[z], (vr_gts_restart)mode, 42) != VR_OK)
                return VR_TEST_FAIL;
            const uint32_t n = orig.strip_triangle_count;
            const size_t words = 3 * (size_t)n;
            uint32_t *want = malloc(words * 4), *got = malloc(words * 4);
            uint64_t x = 1234567 + (uint64_t)mode;
            int refused = 0;
            /* targeted: code 3 at a tile's first triangle and at the last triangle (R mode),
             * first code N, selector 12, INC bit, future vertex, and the flips below */
            for (int it = -6; it < 300 && want && got; ++it) {
                vr_gts g;
                if (vr_test_gts_copy(&g, &orig) != VR_OK)
                    break;
                const uint32_t boundary = n > VR_GTS_TILE ? VR_GTS_TILE : n - 1;
                switch (it) {
                case -6: if (!mode) g.c[boundary >> 4] |= 3u << ((boundary & 15) * 2); break;
                case -5: if (!mode) g.c[(n - 1) >> 4] |= 3u << (((n - 1) & 15) * 2); break;
                case -4: g.c[0] &= mode ? ~0u : ~3u; break;
                case -3: if (g.s_count) g.s[0] = (g.s[0] & 0x0fffffffu) | 12u << 28; break;
                case -2: g.inc[n > VR_GTS_VTILE ? VR_GTS_VTILE / 32 : 0] ^= 1u << (n > 40 ? 3 : 1);
                         break;
                case -1: if (g.s_count) g.s[0] = 0x8fffffffu; break; /* U[0] = -2^27 */
                default: /* random bit flips in C, INC and S */
                    vr_test_gts_flip_bits(&g, &x, 1 + it % 4);
                }
                const scan_vs_tiled d = decode_scan_and_tiled(want, got, words, &g);
                VR_EXPECT(d.tiled == d.scan, "mode %d n %u it %d: tiled status %d, scan %d (%s)",
                          mode, n, it, (int)d.tiled, (int)d.scan, vr_last_error());
                VR_EXPECT(!strcmp(d.scan_bits, d.tiled_bits),
                          "mode %d n %u it %d: tiled %s, scan %s", mode, n, it, d.tiled_bits,
                          d.scan_bits);
                VR_EXPECT(!memcmp(want, got, words * 4), "mode %d n %u it %d: outputs differ",
                          mode, n, it);
                refused += d.tiled == VR_ERR_FORMAT;
                vr_gts_free(&g);
            }
            VR_EXPECT(refused > 0, "mode %d n %u: no malformed stream was refused", mode, n);
            free(want);
            free(got);
            vr_gts_free(&orig);
        }
    return VR_TEST_RESULT();
}

/* The tiled V pass at V tile edges: |V| = n + 2 exactly (R first, then N/P only, in both modes)
 * for |V| = 3 (the smallest stream: one partial word, one tile), around words (31..65) and
 * around V tile multiples (VR_GTS_VTILE = 8192 entries; tile - 1, tile, tile + 1, 2 tiles ...),
 * so the last word is full or partial and the last tile full, short or one entry long. The
 * tiled decoder equals the recursion and the scan formulation. Then, on the same streams,
 * damage at the edges gives the scan formulation's verdict, error bits and output: the INC bit
 * of the last entry of tile 0, of the first of tile 1 and of entry |V| - 1, and a padding bit
 * past |V| (ignored by both: INC_Scan never reads it, V_Tiled masks it). */
VR_TEST(test_tiled_v_boundaries, "gts/tiled-v-boundaries")
{
    const uint32_t t = VR_GTS_VTILE;
    const uint32_t lengths[] = {3,     4,     31,    32,        33,        63,       64,
                                65,    t - 1, t,     t + 1,     t + 32,    t + 33,   2 * t - 1,
                                2 * t, 2 * t + 1, 3 * t + 17};
    const uint32_t max_n = 3 * t + 17;
    uint32_t *codes = malloc((size_t)max_n * sizeof *codes);
    uint32_t *a = malloc(3 * 4 * (size_t)max_n), *b = malloc(3 * 4 * (size_t)max_n);
    uint32_t *c = malloc(3 * 4 * (size_t)max_n);
    for (int mode = 0; mode < 2 && codes && a && b && c; ++mode)
        for (size_t k = 0; k < sizeof lengths / sizeof lengths[0]; ++k) {
            const uint32_t n = lengths[k] - 2;
            uint64_t state = 500 + 7 * (uint64_t)k + (uint64_t)mode, *x = &state;
            for (uint32_t i = 0; i < n; ++i)
                codes[i] = i == 0 ? VR_GTS_CODE_R : (VR_RND() & 1u);
            vr_gts orig;
            if (stream_from_codes(&orig, codes, n, (vr_gts_restart)mode, x) != VR_OK) {
                VR_EXPECT(0, "stream: out of memory");
                continue;
            }
            VR_EXPECT_EQ(orig.v_count, lengths[k]);
            const size_t words = 3 * (size_t)n;
            for (int dmg = 0; dmg < 5; ++dmg) {
                vr_gts g;
                if (vr_test_gts_copy(&g, &orig) != VR_OK)
                    break;
                const uint32_t vn = g.v_count;
                uint32_t j = vn; /* the entry whose INC bit flips; vn: none */
                if (dmg == 1 && vn > t)
                    j = t - 1;
                else if (dmg == 2 && vn > t)
                    j = t;
                else if (dmg == 3)
                    j = vn - 1;
                else if (dmg == 4 && vn % 32)
                    g.inc[vn / 32] |= 1u << 31;
                if (j < vn)
                    g.inc[j >> 5] ^= 1u << (j & 31);
                if (dmg && j == vn && !(dmg == 4 && vn % 32)) {
                    vr_gts_free(&g);
                    continue;
                }
                const scan_vs_tiled d = decode_scan_and_tiled(b, c, words, &g);
                const vr_status sc = d.tiled;
                VR_EXPECT(d.scan == sc && !strcmp(d.scan_bits, d.tiled_bits),
                          "mode %d |V| %u damage %d: tiled %d %s, scan %d %s", mode, vn, dmg,
                          (int)sc, d.tiled_bits, (int)d.scan, d.scan_bits);
                size_t w = 0;
                while (w < words && b[w] == c[w])
                    ++w;
                VR_EXPECT(w == words, "mode %d |V| %u damage %d: index %zu: tiled %u, scan %u",
                          mode, vn, dmg, w, w < words ? c[w] : 0, w < words ? b[w] : 0);
                if (dmg == 0 || dmg == 4) { /* intact V: also the recursion, and no error */
                    const vr_status sa = vr_gts_decode_ref(a, &g);
                    VR_EXPECT(dmg == 0 ? sa == VR_OK && sc == VR_OK : sa == VR_ERR_FORMAT,
                              "mode %d |V| %u damage %d: recursion %d, tiled %d: %s", mode, vn,
                              dmg, (int)sa, (int)sc, vr_last_error());
                    VR_EXPECT(dmg != 0 || !memcmp(a, c, words * 4),
                              "mode %d |V| %u: tiled decode differs from the recursion", mode,
                              vn);
                }
                if (dmg == 4)
                    VR_EXPECT(sc == VR_OK, "mode %d |V| %u: a padding bit was not ignored",
                              mode, vn);
                vr_gts_free(&g);
            }
            vr_gts_free(&orig);
        }
    VR_EXPECT(codes && a && b && c, "out of memory");
    free(codes);
    free(a);
    free(b);
    free(c);
    return VR_TEST_RESULT();
}

/* ---- round trips --------------------------------------------------------------------------- */

VR_TEST(test_small_meshes, "gts/small-meshes")
{
    for (size_t i = 0; i < VR_TEST_GTS_SMALL_COUNT; ++i) {
        vr_mesh m;
        const char *name;
        if (vr_test_gts_small(i, &m, &name) != VR_OK)
            return VR_TEST_FAIL;
        for (int mode = 0; mode < 2; ++mode)
            vr_test_gts_roundtrip(&m, (vr_gts_restart)mode, name, NULL, NULL);
        vr_mesh_free(&m);
    }
    /* the unreferenced vertex (6 in mesh 1) gets the last id */
    vr_mesh m;
    const char *name;
    vr_gts g;
    vr_gts_map map;
    if (vr_test_gts_small(1, &m, &name) == VR_OK &&
        vr_test_gts_roundtrip(&m, VR_GTS_RESTART_CODE, name, &g, &map) == 0) {
        VR_EXPECT_EQ(g.referenced_count, 6);
        VR_EXPECT_EQ(map.new_of_old[6], 6);
        vr_gts_free(&g);
        vr_gts_map_free(&map);
    }
    vr_mesh_free(&m);
    /* an empty mesh and an out-of-range index are refused */
    vr_mesh bad;
    const uint32_t oob[] = {0, 1, 5};
    if (vr_test_gts_mesh(&bad, oob, 3, 3) == VR_OK) {
        vr_gts_options o = vr_gts_options_default();
        VR_EXPECT(vr_gts_encode(&g, NULL, &bad, &o) == VR_ERR_FORMAT, "index 5 of 3 vertices");
        bad.index_count = 0;
        VR_EXPECT(vr_gts_encode(&g, NULL, &bad, &o) == VR_ERR_FORMAT, "no triangles");
        vr_mesh_free(&bad);
    }
    return VR_TEST_RESULT();
}

static int roundtrip_spec(const char *spec)
{
    vr_mesh m;
    if (!vr_test_load(&m, spec))
        return VR_TEST_FAIL;
    for (int mode = 0; mode < 2; ++mode) {
        char what[600]; /* a path of up to 512 bytes + the mode */
        snprintf(what, sizeof what, "%s (%s)", spec, mode ? "deg." : "R");
        vr_test_gts_roundtrip(&m, (vr_gts_restart)mode, what, NULL, NULL);
    }
    vr_mesh_free(&m);
    return VR_TEST_RESULT();
}

VR_TEST(test_scenes, "gts/scenes")
{
    char path[512];
    if (!vr_test_scene_path(path, sizeof path, "fandisk.obj")) {
        printf("SKIP: ../shared/scenes not found (set VR_SCENES)\n");
        return VR_TEST_SKIP;
    }
    for (int i = 0; vr_test_gts_scenes[i]; ++i) {
        vr_test_scene_path(path, sizeof path, vr_test_gts_scenes[i]);
        roundtrip_spec(path);
    }
    return VR_TEST_RESULT();
}

VR_TEST(test_components, "gts/components")
{
    roundtrip_spec("foliage:10k"); /* thousands of two-triangle components: restarts */
    roundtrip_spec("terrain:20k");
    return roundtrip_spec("sphere:82k");
}

VR_TEST(test_packing_modes, "gts/packing")
{
    vr_mesh m;
    if (!vr_test_load(&m, "sphere:20k"))
        return VR_TEST_FAIL;
    vr_gts_options o = vr_gts_options_default();
    vr_gts a, b;
    vr_gts_map map;
    o.packing = VR_GTS_PACK_GREEDY;
    VR_EXPECT(vr_gts_encode(&a, &map, &m, &o) == VR_OK, "%s", vr_last_error());
    vr_test_gts_check(&a, &map, &m, "greedy packing");
    vr_gts_map_free(&map);
    o.packing = VR_GTS_PACK_OPTIMAL;
    o.keep_vertex_data = 0;
    VR_EXPECT(vr_gts_encode(&b, &map, &m, &o) == VR_OK, "%s", vr_last_error());
    vr_test_gts_check(&b, &map, &m, "optimal packing");
    VR_EXPECT(b.s_count <= a.s_count, "optimal %u words > greedy %u", b.s_count, a.s_count);
    VR_EXPECT(!b.positions && a.positions, "keep_vertex_data");
    VR_EXPECT(a.v_count == b.v_count && !memcmp(a.inc, b.inc, 4 * (size_t)vr_gts_inc_words(&a)),
              "packing must not change the strips");
    vr_gts_free(&a);
    vr_gts_free(&b);
    vr_gts_map_free(&map);
    vr_mesh_free(&m);
    return VR_TEST_RESULT();
}

/* ---- bits per triangle against the paper's Table 2 (and meshoptimizer's codec) ------------- */

static double meshopt_bpt(const uint32_t *indices, uint32_t index_count, uint32_t vertex_count)
{
    meshopt_encodeIndexVersion(1); /* 0.18 defaults to version 0; 1 is smaller (0.14+) */
    const size_t cap = meshopt_encodeIndexBufferBound(index_count, vertex_count);
    unsigned char *buf = malloc(cap);
    const size_t bytes = buf ? meshopt_encodeIndexBuffer(buf, cap, indices, index_count) : 0;
    free(buf);
    return 8.0 * (double)bytes / (index_count / 3);
}

/* meshoptimizer's recommended preparation for its codec: vertex cache, then fetch order */
static double meshopt_prepared_bpt(const vr_mesh *m)
{
    uint32_t *ix = malloc(m->index_count * sizeof *ix), *remap = malloc(m->vertex_count * sizeof *remap);
    double bpt = 0;
    if (ix && remap) {
        meshopt_optimizeVertexCache(ix, m->indices, m->index_count, m->vertex_count);
        meshopt_optimizeVertexFetchRemap(remap, ix, m->index_count, m->vertex_count);
        meshopt_remapIndexBuffer(ix, ix, m->index_count, remap);
        bpt = meshopt_bpt(ix, m->index_count, m->vertex_count);
    }
    free(ix);
    free(remap);
    return bpt;
}

VR_TEST(test_bits_vs_paper, "gts/bits-vs-paper")
{
    static const struct {
        const char *file;
        double paper_r, paper_deg; /* Meyer et al. 2012, Table 2: bpt (C + INC + S-9) */
    } rows[] = {{"fandisk.obj", 4.92, 4.16}, {"horse.ply", 5.22, 4.65}, {"igea.ply", 5.03, 4.35}};
    char path[512];
    if (!vr_test_scene_path(path, sizeof path, "fandisk.obj")) {
        printf("SKIP: ../shared/scenes not found (set VR_SCENES)\n");
        return VR_TEST_SKIP;
    }
    printf("  %-12s %9s %11s %8s %11s %12s %12s\n", "mesh", "R bpt", "(paper R)", "deg bpt",
           "(paper deg)", "meshopt file", "meshopt prep");
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; ++i) {
        vr_mesh m;
        vr_test_scene_path(path, sizeof path, rows[i].file);
        if (!vr_test_load(&m, path))
            continue;
        double bpt[2] = {0, 0};
        for (int mode = 0; mode < 2; ++mode) {
            vr_gts_options o = vr_gts_options_default();
            o.restart = (vr_gts_restart)mode;
            o.keep_vertex_data = 0;
            vr_gts g;
            if (vr_gts_encode(&g, NULL, &m, &o) != VR_OK) {
                VR_EXPECT(0, "%s", vr_last_error());
                continue;
            }
            vr_gts_stats st;
            vr_gts_stats_compute(&st, &g);
            bpt[mode] = st.s9_bpt;
            vr_gts_free(&g);
        }
        printf("  %-12s %9.3f %11.2f %8.3f %11.2f %12.3f %12.3f\n", rows[i].file, bpt[0],
               rows[i].paper_r, bpt[1], rows[i].paper_deg,
               meshopt_bpt(m.indices, m.index_count, m.vertex_count), meshopt_prepared_bpt(&m));
        VR_EXPECT(bpt[0] > 0 && bpt[0] <= rows[i].paper_r, "%s R: %.3f bpt > paper %.2f",
                  rows[i].file, bpt[0], rows[i].paper_r);
        VR_EXPECT(bpt[1] > 0 && bpt[1] <= rows[i].paper_deg, "%s deg.: %.3f bpt > paper %.2f",
                  rows[i].file, bpt[1], rows[i].paper_deg);
        vr_mesh_free(&m);
    }
    return VR_TEST_RESULT();
}

/* ---- malformed files ------------------------------------------------------------------------ */

static uint64_t fnv1a64(const uint8_t *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; ++i)
        h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

static void reseal(uint8_t *img, size_t size)
{
    const uint64_t h = fnv1a64(img, size - 8);
    for (int k = 0; k < 8; ++k)
        img[size - 8 + k] = (uint8_t)(h >> (8 * k));
}

/* A small stream's file image (caller frees *img). */
static vr_status small_image(uint8_t **img, size_t *size, vr_gts *g_out, vr_gts_restart mode)
{
    vr_mesh m;
    vr_status s = vr_mesh_load(&m, "sphere:200");
    if (s)
        return s;
    vr_gts_options o = vr_gts_options_default();
    o.restart = mode;
    vr_gts g;
    s = vr_gts_encode(&g, NULL, &m, &o);
    vr_mesh_free(&m);
    if (s)
        return s;
    *size = vr_gts_file_bytes(&g);
    *img = malloc(*size);
    if (!*img)
        s = VR_ERR_OOM;
    if (!s)
        s = vr_gts_write_memory(*img, *size, size, &g);
    if (g_out)
        *g_out = g;
    else
        vr_gts_free(&g);
    return s;
}

VR_TEST(test_file_truncated, "gts/file-truncated")
{
    for (int mode = 0; mode < 2; ++mode) {
        uint8_t *img = NULL;
        size_t size = 0;
        if (small_image(&img, &size, NULL, (vr_gts_restart)mode) != VR_OK) {
            VR_EXPECT(0, "%s", vr_last_error());
            free(img);
            continue;
        }
        vr_gts g;
        VR_EXPECT(vr_gts_read_memory(&g, img, size, "whole") == VR_OK, "%s", vr_last_error());
        vr_gts_free(&g);
        for (size_t len = 0; len < size; ++len) {
            uint8_t *cut = malloc(len ? len : 1); /* exact size: ASan sees any over-read */
            memcpy(cut, img, len);
            const vr_status s = vr_gts_read_memory(&g, cut, len, "truncated");
            VR_EXPECT(s == VR_ERR_FORMAT, "truncated to %zu of %zu bytes: status %d", len, size,
                      (int)s);
            if (s == VR_OK)
                vr_gts_free(&g);
            free(cut);
        }
        /* one trailing byte too many */
        uint8_t *longer = malloc(size + 1);
        memcpy(longer, img, size);
        longer[size] = 0;
        VR_EXPECT(vr_gts_read_memory(&g, longer, size + 1, "long") == VR_ERR_FORMAT, "trailing");
        free(longer);
        free(img);
    }
    return VR_TEST_RESULT();
}

VR_TEST(test_file_flipped, "gts/file-flipped")
{
    uint8_t *img = NULL;
    size_t size = 0;
    if (small_image(&img, &size, NULL, VR_GTS_RESTART_CODE) != VR_OK) {
        free(img);
        return VR_TEST_FAIL;
    }
    vr_gts g;
    /* every byte, every bit: the checksum (or the header check before it) rejects the file */
    for (size_t k = 0; k < size; ++k)
        for (int bit = 0; bit < 8; ++bit) {
            img[k] ^= (uint8_t)(1u << bit);
            const vr_status s = vr_gts_read_memory(&g, img, size, "flipped");
            VR_EXPECT(s == VR_ERR_FORMAT, "bit %d of byte %zu flipped: status %d", bit, k, (int)s);
            if (s == VR_OK)
                vr_gts_free(&g);
            img[k] ^= (uint8_t)(1u << bit);
        }
    /* a wrong checksum alone */
    img[size - 1] ^= 0x40;
    VR_EXPECT(vr_gts_read_memory(&g, img, size, "checksum") == VR_ERR_FORMAT, "bad checksum");
    VR_EXPECT(strstr(vr_last_error(), "checksum") != NULL, "message names the checksum: %s",
              vr_last_error());
    free(img);
    return VR_TEST_RESULT();
}

/* Corruption behind a valid checksum: random bytes of the word arrays and header changed and
 * the file resealed. The reader or the CPU decoder must refuse it or decode it; never crash,
 * never return anything but OK or FORMAT; when both decode, they agree. */
VR_TEST(test_file_resealed, "gts/file-resealed")
{
    for (int mode = 0; mode < 2; ++mode) {
        uint8_t *img = NULL;
        size_t size = 0;
        vr_gts orig;
        if (small_image(&img, &size, &orig, (vr_gts_restart)mode) != VR_OK) {
            free(img);
            return VR_TEST_FAIL;
        }
        const size_t words_end = 64 + 4 * ((size_t)vr_gts_c_words(&orig) +
                                           vr_gts_inc_words(&orig) + orig.s_count);
        uint8_t *copy = malloc(size);
        const uint32_t cap = orig.strip_triangle_count + 64; /* triangles the buffers hold */
        uint32_t *a = malloc(3 * 4 * (size_t)cap), *b = malloc(3 * 4 * (size_t)cap);
        uint32_t *c3 = malloc(3 * 4 * (size_t)cap);
        uint64_t x = 99 + (uint64_t)mode;
        int refused = 0, decoded = 0;
        for (int it = 0; it < 3000 && copy && a && b && c3; ++it) {
            memcpy(copy, img, size);
            const int flips = 1 + it % 3;
            for (int f = 0; f < flips; ++f) {
                x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                const size_t at = 8 + (size_t)(x % (words_end - 8)); /* header fields + words */
                copy[at] ^= (uint8_t)(1u << ((x >> 32) % 8));
            }
            reseal(copy, size);
            vr_gts g;
            vr_status s = vr_gts_read_memory(&g, copy, size, "resealed");
            VR_EXPECT(s == VR_OK || s == VR_ERR_FORMAT, "read status %d", (int)s);
            if (s != VR_OK) {
                ++refused;
                continue;
            }
            const uint32_t n = g.strip_triangle_count;
            if (n <= cap) {
                const vr_status s1 = vr_gts_decode_ref(a, &g), s2 = vr_gts_decode_scan_ref(b, &g);
                VR_EXPECT(s1 == VR_OK || s1 == VR_ERR_FORMAT, "decode status %d", (int)s1);
                VR_EXPECT(s2 == VR_OK || s2 == VR_ERR_FORMAT, "scan decode status %d", (int)s2);
                VR_EXPECT(s1 == s2, "it %d: sequential %d vs scan %d (%s)", it, (int)s1, (int)s2,
                          vr_last_error());
                const vr_status s3 = vr_gts_decode_tiled_ref(c3, &g);
                VR_EXPECT(s3 == s2, "it %d: tiled %d vs scan %d (%s)", it, (int)s3, (int)s2,
                          vr_last_error());
                VR_EXPECT(!memcmp(b, c3, 3 * 4 * (size_t)n), "it %d: tiled and scan outputs "
                          "differ", it);
                if (s1 == VR_OK && s2 == VR_OK) {
                    ++decoded;
                    VR_EXPECT(!memcmp(a, b, 3 * 4 * (size_t)n), "it %d: decoders disagree", it);
                    for (size_t k = 0; k < 3 * (size_t)n; ++k)
                        if (a[k] >= g.vertex_count) {
                            VR_EXPECT(0, "it %d: index %u >= vertex count %u", it, a[k],
                                      g.vertex_count);
                            break;
                        }
                }
            }
            vr_gts_free(&g);
        }
        VR_EXPECT(refused > 0, "no corruption was refused");
        printf("  %s: 3000 resealed corruptions: %d refused by the reader, %d decoded validly, "
               "the rest refused by the decoders\n", mode ? "deg." : "R", refused, decoded);
        free(copy);
        free(a);
        free(b);
        free(c3);
        free(img);
        vr_gts_free(&orig);
    }
    return VR_TEST_RESULT();
}

/* Specific corruptions of an in-memory stream, each with its own message. */
VR_TEST(test_stream_fields, "gts/stream-fields")
{
    uint8_t *img = NULL;
    size_t size = 0;
    vr_gts orig, g;
    if (small_image(&img, &size, &orig, VR_GTS_RESTART_CODE) != VR_OK) {
        free(img);
        return VR_TEST_FAIL;
    }
    free(img);
    uint32_t *out = malloc(3 * 4 * (size_t)orig.strip_triangle_count);
    struct {
        const char *name;
        int field;
    } cases[] = {{"u_count + 1", 0}, {"v_count + 1", 1}, {"restart_count + 1", 2},
                 {"referenced > vertices", 3}, {"code 3", 4}, {"first code N", 5},
                 {"selector 12", 6}, {"INC bit cleared", 7}, {"s_count - 1", 8},
                 {"strip triangles 0", 9}, {"triangle_count + 1", 10}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0] && out; ++k) {
        if (vr_test_gts_copy(&g, &orig) != VR_OK)
            break;
        switch (cases[k].field) {
        case 0: ++g.u_count; break;
        case 1: ++g.v_count; break;
        case 2: ++g.restart_count; break;
        case 3: g.referenced_count = g.vertex_count + 1; break;
        case 4: g.c[1] |= 3u << 6; break; /* code 19 */
        case 5: g.c[0] &= ~3u; break;
        case 6: g.s[0] = (g.s[0] & 0x0fffffffu) | 12u << 28; break;
        case 7: g.inc[0] &= ~1u; break;
        case 8: --g.s_count; break;
        case 9: g.strip_triangle_count = 0; break;
        default: ++g.triangle_count; break;
        }
        VR_EXPECT(vr_gts_validate(&g, cases[k].name) == VR_ERR_FORMAT, "%s: validate accepted",
                  cases[k].name);
        VR_EXPECT(vr_gts_decode_ref(out, &g) == VR_ERR_FORMAT, "%s: decode accepted",
                  cases[k].name);
        const vr_status s2 = vr_gts_decode_scan_ref(out, &g);
        VR_EXPECT(s2 == VR_ERR_FORMAT, "%s: scan decode returned %d", cases[k].name, (int)s2);
        const vr_status s3 = vr_gts_decode_tiled_ref(out, &g);
        VR_EXPECT(s3 == VR_ERR_FORMAT, "%s: tiled decode returned %d", cases[k].name, (int)s3);
        vr_gts_free(&g);
    }
    free(out);
    vr_gts_free(&orig);
    return VR_TEST_RESULT();
}

VR_TEST(test_file_io, "gts/file-io")
{
    vr_mesh m;
    if (!vr_test_load(&m, "sphere:2k"))
        return VR_TEST_FAIL;
    vr_gts_options o = vr_gts_options_default();
    vr_gts g, back;
    VR_EXPECT(vr_gts_encode(&g, NULL, &m, &o) == VR_OK, "%s", vr_last_error());
    char path[] = "/tmp/vr_test_gts_XXXXXX";
    const int fd = mkstemp(path);
    VR_EXPECT(fd >= 0, "mkstemp");
    if (fd >= 0) {
        FILE *f = fdopen(fd, "w");
        if (f)
            fclose(f);
        VR_EXPECT(vr_gts_write(&g, path) == VR_OK, "%s", vr_last_error());
        VR_EXPECT(vr_gts_is_file(path), "magic");
        VR_EXPECT(vr_gts_read(&back, path) == VR_OK, "%s", vr_last_error());
        VR_EXPECT(back.positions && !memcmp(back.positions, g.positions,
                                            12 * (size_t)g.vertex_count), "positions");
        vr_gts_free(&back);
        FILE *sink = fopen("/dev/null", "w");
        VR_EXPECT(sink && vr_gts_print_info(sink, path) == VR_OK, "%s", vr_last_error());
        if (sink)
            fclose(sink);
        remove(path);
    }
    VR_EXPECT(vr_gts_read(&back, "/nonexistent/x.gts") == VR_ERR_IO, "missing file");
    VR_EXPECT(!vr_gts_is_file("/nonexistent/x.gts"), "missing file magic");
    vr_mesh d;
    VR_EXPECT(vr_gts_decode_mesh(&d, &g) == VR_OK, "%s", vr_last_error());
    VR_EXPECT_EQ(d.index_count, 3 * g.strip_triangle_count);
    vr_mesh_free(&d);
    vr_gts_free(&g);
    vr_mesh_free(&m);
    return VR_TEST_RESULT();
}
