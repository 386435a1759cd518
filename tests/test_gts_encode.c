/* test_gts_encode.c - pins the GTS encoder's output bit for bit: for each mesh, every encoder mode
 * (R and deg. restarts, optimal and greedy Simple-9 packing, with and without vertex data) is
 * encoded, and one FNV-1a 64 hash covers the file images and the maps (reordered triangles,
 * triangle sources, vertex permutation). The expected hashes were written by the encoder before
 * it was made linear-time (commit 8361048), so a faster encoder must produce the same bytes.
 * Meshes: the hand-made ones of test_gts.c, seeded random soups (duplicates, degenerate and
 * non-manifold triangles, an edge shared by 150 triangles, a vertex of valence 400), the
 * generators, and two shared scenes (skipped when ../shared/scenes is missing). Each mode is also
 * encoded without a map (the same file), and the map's new_of_old must invert old_of_new.
 * Group "gts/"; run `vreuse_tests gts/encode-pinned` (VR_PRINT_HASHES=1 prints the hashes).
 */
#include "tests/test.h"

#include <stdlib.h>
#include <string.h>

#include "pipeline/gts/gts.h"
#include "scenes/scene.h"
#include "tests/test_helpers.h"

static uint64_t fnv1a64_add(uint64_t h, const void *data, size_t bytes)
{
    const uint8_t *p = data;
    for (size_t i = 0; i < bytes; ++i)
        h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

/* The hash of all eight encodings of `m`; 0 after a failed expectation. */
static uint64_t encodings_hash(const vr_mesh *m, const char *what)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (int variant = 0; variant < 8; ++variant) {
        vr_gts_options o = vr_gts_options_default();
        o.restart = (variant & 1) ? VR_GTS_RESTART_DEGENERATE : VR_GTS_RESTART_CODE;
        o.packing = (variant & 2) ? VR_GTS_PACK_GREEDY : VR_GTS_PACK_OPTIMAL;
        o.keep_vertex_data = !(variant & 4);
        vr_gts g;
        vr_gts_map map;
        const vr_status s = vr_gts_encode(&g, &map, m, &o);
        VR_EXPECT(s == VR_OK, "%s variant %d: %s", what, variant, vr_last_error());
        if (s)
            return 0;
        const size_t bytes = vr_gts_file_bytes(&g);
        uint8_t *img = malloc(bytes);
        size_t written = 0;
        VR_EXPECT(img && vr_gts_write_memory(img, bytes, &written, &g) == VR_OK, "%s", what);
        h = fnv1a64_add(h, img, written);
        /* new_of_old is the inverse of old_of_new (it is not hashed) */
        uint32_t bad = 0;
        for (uint32_t v = 0; v < map.vertex_count; ++v)
            bad += map.new_of_old[map.old_of_new[v]] != v;
        VR_EXPECT(bad == 0, "%s variant %d: new_of_old is not old_of_new's inverse at %u ids",
                  what, variant, bad);
        /* without a map (the file writers' call) the same file */
        vr_gts g2;
        VR_EXPECT(vr_gts_encode(&g2, NULL, m, &o) == VR_OK, "%s variant %d without a map: %s",
                  what, variant, vr_last_error());
        uint8_t *img2 = malloc(bytes);
        size_t written2 = 0;
        VR_EXPECT(img2 && vr_gts_write_memory(img2, bytes, &written2, &g2) == VR_OK &&
                      written2 == written && memcmp(img, img2, written) == 0,
                  "%s variant %d: the file differs when no map is asked for", what, variant);
        free(img2);
        vr_gts_free(&g2);
        h = fnv1a64_add(h, map.indices, 3 * (size_t)map.strip_triangle_count * 4);
        h = fnv1a64_add(h, map.triangle_source, (size_t)map.strip_triangle_count * 4);
        h = fnv1a64_add(h, map.old_of_new, (size_t)map.vertex_count * 4);
        free(img);
        vr_gts_free(&g);
        vr_gts_map_free(&map);
    }
    return h;
}

static uint64_t rng_next(uint64_t *x)
{
    *x ^= *x << 13, *x ^= *x >> 7, *x ^= *x << 17;
    return *x;
}

/* Soup `which`: 0 random triangles over few vertices (duplicates, degenerate, non-manifold),
 * 1 a perturbed grid with dropped, duplicated, flipped and degenerate triangles, 2 a book of
 * 150 pages on edge (0, 1) in both orientations plus a 400-triangle fan around vertex 2. */
static vr_status soup(vr_mesh *m, int which)
{
    uint64_t x = 0x9e3779b97f4a7c15ull + (uint64_t)which;
    const uint32_t cap = 6000, vc = which == 0 ? 300 : which == 1 ? 41 * 41 : 560;
    uint32_t *idx = malloc(3 * (size_t)cap * sizeof *idx), n = 0;
    if (!idx)
        return VR_ERROR(VR_ERR_OOM, "soup: out of memory");
    if (which == 0) {
        for (; n < 1500; ++n)
            for (int j = 0; j < 3; ++j)
                idx[3 * n + j] = (uint32_t)(rng_next(&x) % vc);
    } else if (which == 1) {
        for (uint32_t r = 0; r < 40; ++r)
            for (uint32_t c = 0; c < 40; ++c) {
                const uint32_t a = r * 41 + c, b = a + 1, d = a + 41, e = d + 1;
                const uint32_t q[6] = {a, d, b, b, d, e};
                for (int k = 0; k < 2; ++k) {
                    const uint32_t dice = (uint32_t)(rng_next(&x) % 20), *t = q + 3 * k;
                    if (dice == 0)
                        continue; /* a hole */
                    const uint32_t copies = dice == 1 ? 2 : 1;
                    for (uint32_t c2 = 0; c2 < copies; ++c2, ++n) {
                        idx[3 * n] = t[0], idx[3 * n + 1] = t[1], idx[3 * n + 2] = t[2];
                        if (dice == 2) /* flipped */
                            idx[3 * n + 1] = t[2], idx[3 * n + 2] = t[1];
                        if (dice == 3) /* degenerate */
                            idx[3 * n + 2] = t[0];
                    }
                }
            }
    } else {
        for (uint32_t k = 0; k < 150; ++k, ++n) /* pages on (0, 1), random orientation */
            idx[3 * n] = (k & 1) ? 1 : 0, idx[3 * n + 1] = (k & 1) ? 0 : 1, idx[3 * n + 2] = 3 + k;
        for (uint32_t k = 0; k < 400; ++k, ++n) /* closed fan around 2 */
            idx[3 * n] = 2, idx[3 * n + 1] = 153 + k, idx[3 * n + 2] = 153 + (k + 1) % 400;
        for (uint32_t k = 0; k < 100; ++k, ++n) /* a strip glued to both */
            idx[3 * n] = 3 + k, idx[3 * n + 1] = 4 + k, idx[3 * n + 2] = 153 + k;
    }
    memset(m, 0, sizeof *m);
    m->vertex_count = vc;
    m->index_count = 3 * n;
    m->indices = idx;
    m->positions = malloc(3 * (size_t)vc * sizeof(float));
    m->normals = malloc(3 * (size_t)vc * sizeof(float));
    m->texcoords = malloc(2 * (size_t)vc * sizeof(float));
    if (!m->positions || !m->normals || !m->texcoords) {
        vr_mesh_free(m);
        return VR_ERROR(VR_ERR_OOM, "soup: out of memory");
    }
    for (uint32_t i = 0; i < 3 * vc; ++i)
        m->positions[i] = (float)i * 0.25f, m->normals[i] = (float)(i % 5);
    for (uint32_t i = 0; i < 2 * vc; ++i)
        m->texcoords[i] = (float)(i % 11) * 0.5f;
    return VR_OK;
}

/* Checks (or with VR_PRINT_HASHES prints) the hash of one mesh. */
static void pin(const vr_mesh *m, const char *what, uint64_t want)
{
    const uint64_t got = encodings_hash(m, what);
    if (getenv("VR_PRINT_HASHES"))
        printf("    {\"%s\", 0x%016llxull},\n", what, (unsigned long long)got);
    else
        VR_EXPECT(got == want, "%s: encodings hash 0x%016llx, pinned 0x%016llx: the encoder's "
                  "output changed", what, (unsigned long long)got, (unsigned long long)want);
}

static const struct {
    const char *what;
    uint64_t hash;
} g_pinned[] = {
    {"non-manifold edge", 0xe737e1578286b5f9ull},
    {"degenerate+duplicate+unused", 0x1eb0665ccd3599f7ull},
    {"two components", 0xeccabe566a7d5e61ull},
    {"one triangle", 0x23ef0985896d9cfdull},
    {"fan", 0xf15d98d7e85c9f8dull},
    {"soup:random", 0x42d581b4dbb531b5ull},
    {"soup:grid", 0xc6ae91a66831c5aaull},
    {"soup:book+fan", 0xb81db73d5c3fcd2full},
    {"sphere:20k", 0x8f91280cb0bc3c34ull},
    {"terrain:5k", 0x6b7fe333de733741ull},
    {"foliage:2k", 0x78420e93e9b675a1ull},
    {"fandisk.obj", 0x5c03550756e39d3eull},
    {"horse.ply", 0x11d2c7b357b71f92ull},
};

static uint64_t pinned(const char *what)
{
    for (size_t i = 0; i < sizeof g_pinned / sizeof g_pinned[0]; ++i)
        if (!strcmp(g_pinned[i].what, what))
            return g_pinned[i].hash;
    return 0;
}

VR_TEST(test_encode_pinned, "gts/encode-pinned")
{
    vr_mesh m;
    for (size_t i = 0; i < VR_TEST_GTS_SMALL_COUNT; ++i) {
        const char *name;
        if (vr_test_gts_small(i, &m, &name) != VR_OK)
            return VR_TEST_FAIL;
        pin(&m, name, pinned(name));
        vr_mesh_free(&m);
    }
    static const char *const soups[] = {"soup:random", "soup:grid", "soup:book+fan"};
    for (int i = 0; i < 3; ++i) {
        if (soup(&m, i) != VR_OK)
            return VR_TEST_FAIL;
        pin(&m, soups[i], pinned(soups[i]));
        vr_mesh_free(&m);
    }
    static const char *const specs[] = {"sphere:20k", "terrain:5k", "foliage:2k"};
    for (int i = 0; i < 3; ++i) {
        if (!vr_test_load(&m, specs[i]))
            return VR_TEST_FAIL;
        pin(&m, specs[i], pinned(specs[i]));
        vr_mesh_free(&m);
    }
    static const char *const files[] = {"fandisk.obj", "horse.ply"};
    char path[512];
    for (int i = 0; i < 2; ++i) {
        if (!vr_test_scene_path(path, sizeof path, files[i])) {
            printf("note: ../shared/scenes not found (set VR_SCENES): %s not pinned\n", files[i]);
            continue;
        }
        if (!vr_test_load(&m, path))
            return VR_TEST_FAIL;
        pin(&m, files[i], pinned(files[i]));
        vr_mesh_free(&m);
    }
    return VR_TEST_RESULT();
}
