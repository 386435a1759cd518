/* test_gts_scene.c - compressed files as scenes: a `vreuse compress` file (pipeline/gts.h)
 * loaded through vr_mesh_load must be exactly the encoder's reordered source triangles (its
 * triangle list without deg. mode's emulation triangles; vr_mesh_load_gts_strips gives the list
 * with them), vertex count, permuted positions bit for bit, normals, in both restart modes;
 * normals are computed when the file has none; files without vertex data and damaged files
 * fail with VR_ERR_FORMAT and a message, never a crash.
 * Group "gts/scene-"; try `vreuse_tests gts/scene`.
 */
#define _POSIX_C_SOURCE 200809L /* mkstemp, close */
#include "tests/test.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pipeline/gts/gts.h"
#include "scenes/scene.h"
#include "scenes/scene_internal.h"
#include "tests/test_helpers.h"

/* A fresh temporary path (the file exists, empty); 0 when mkstemp fails. */
static int temp_path(char *path, size_t cap)
{
    snprintf(path, cap, "/tmp/vr_test_gts_scene_XXXXXX");
    const int fd = mkstemp(path);
    if (fd < 0)
        return 0;
    close(fd);
    return 1;
}

/* Encodes `src` in `mode`, writes it to a temp file, loads that with vr_mesh_load and checks
 * the result against the encoder's map and stream. `name` labels messages. */
static void check_round_trip(const vr_mesh *src, vr_gts_restart mode, const char *name)
{
    vr_gts_options opt = vr_gts_options_default();
    opt.restart = mode;
    vr_gts g;
    vr_gts_map map;
    vr_status s = vr_gts_encode(&g, &map, src, &opt);
    VR_EXPECT(s == VR_OK, "%s: encode: %s", name, vr_last_error());
    if (s)
        return;
    char path[64];
    VR_EXPECT(temp_path(path, sizeof path), "%s: mkstemp", name);
    vr_mesh m;
    memset(&m, 0, sizeof m);
    s = vr_gts_write(&g, path);
    VR_EXPECT(s == VR_OK, "%s: write: %s", name, vr_last_error());
    if (!s) {
        s = vr_mesh_load(&m, path);
        VR_EXPECT(s == VR_OK, "%s: vr_mesh_load(.gts): %s", name, vr_last_error());
    }
    if (!s) {
        /* the encoder's triangles without the emulation ones: the source's, reordered */
        uint32_t *want = malloc(3 * sizeof *want * ((size_t)map.strip_triangle_count + 1));
        uint32_t want_count = 0;
        for (uint32_t t = 0; want && t < map.strip_triangle_count; ++t)
            if (map.triangle_source[t] != VR_GTS_EMULATED)
                memcpy(want + 3 * (size_t)want_count++, map.indices + 3 * (size_t)t, 12);
        VR_EXPECT_EQ(want_count, src->index_count / 3);
        VR_EXPECT_EQ(m.index_count, 3 * want_count);
        VR_EXPECT_EQ(m.vertex_count, g.vertex_count);
        VR_EXPECT_EQ(m.vertex_count, src->vertex_count);
        if (want && m.index_count == 3 * want_count)
            VR_EXPECT(!memcmp(m.indices, want, (size_t)m.index_count * 4),
                      "%s: indices differ from the encoder's reordered source triangles", name);
        free(want);
        /* the stream's own list, emulation included, for the GPU stage's per-batch decoding */
        vr_mesh strips;
        VR_EXPECT(vr_mesh_load_gts_strips(&strips, path) == VR_OK, "%s: %s", name,
                  vr_last_error());
        VR_EXPECT_EQ(strips.index_count, 3 * map.strip_triangle_count);
        if (strips.index_count == 3 * map.strip_triangle_count)
            VR_EXPECT(!memcmp(strips.indices, map.indices, (size_t)strips.index_count * 4),
                      "%s: strip indices differ from the encoder's reordered triangles", name);
        vr_mesh_free(&strips);
        if (m.vertex_count == g.vertex_count && m.vertex_count == src->vertex_count) {
            VR_EXPECT(!memcmp(m.positions, g.positions, (size_t)m.vertex_count * 12),
                      "%s: positions differ from the file's", name);
            /* and they are the source's, permuted by the encoder's vertex renumbering */
            uint32_t bad = 0;
            for (uint32_t v = 0; v < m.vertex_count; ++v)
                bad += memcmp(m.positions + 3 * (size_t)v,
                              src->positions + 3 * (size_t)map.old_of_new[v], 12) != 0;
            VR_EXPECT_EQ(bad, 0);
            /* normals: the file's (unit already), renormalized by the loader: a few ulps */
            double worst = 0;
            for (size_t i = 0; g.normals && i < 3 * (size_t)m.vertex_count; ++i)
                worst = fmax(worst, fabs((double)m.normals[i] - g.normals[i]));
            VR_EXPECT(m.normals && worst < 1e-6, "%s: normals off by %g", name, worst);
        }
    }
    vr_mesh_free(&m);
    remove(path);
    vr_gts_free(&g);
    vr_gts_map_free(&map);
}

/* Loads `spec` and checks its round trip in deg. mode, then in R mode; `label` names it. */
static int check_round_trips(const char *spec, const char *label)
{
    vr_mesh src;
    if (!vr_test_load(&src, spec))
        return VR_TEST_FAIL;
    char name[64];
    snprintf(name, sizeof name, "%s deg.", label);
    check_round_trip(&src, VR_GTS_RESTART_DEGENERATE, name);
    snprintf(name, sizeof name, "%s R", label);
    check_round_trip(&src, VR_GTS_RESTART_CODE, name);
    vr_mesh_free(&src);
    return VR_TEST_RESULT();
}

VR_TEST(test_scene_bunny, "gts/scene-bunny")
{
    char buf[1024];
    const char *bunny = vr_test_scene_path(buf, sizeof buf, "stanford-bunny.obj");
    if (!bunny) {
        printf("SKIP: ../shared/scenes missing\n");
        return VR_TEST_SKIP;
    }
    return check_round_trips(bunny, "bunny");
}

/* Many components and restarts without the shared scenes (foliage: separate leaves). */
VR_TEST(test_scene_foliage, "gts/scene-foliage")
{
    return check_round_trips("foliage:5k", "foliage");
}

/* A file with positions but no normals: the loader computes area-weighted ones. */
VR_TEST(test_scene_computed_normals, "gts/scene-computed-normals")
{
    vr_mesh src, m;
    memset(&m, 0, sizeof m);
    if (!vr_test_load(&src, "sphere:2k"))
        return VR_TEST_FAIL;
    free(src.normals);
    src.normals = NULL;
    vr_gts_options opt = vr_gts_options_default();
    vr_gts g;
    VR_EXPECT(vr_gts_encode(&g, NULL, &src, &opt) == VR_OK, "%s", vr_last_error());
    VR_EXPECT(g.positions && !g.normals, "stream should hold positions only");
    char path[64];
    VR_EXPECT(temp_path(path, sizeof path), "mkstemp");
    VR_EXPECT(vr_gts_write(&g, path) == VR_OK, "%s", vr_last_error());
    const vr_status s = vr_mesh_load(&m, path);
    VR_EXPECT(s == VR_OK, "%s", vr_last_error());
    if (!s) {
        VR_EXPECT(m.normals != NULL, "no normals");
        float *want = malloc((size_t)m.vertex_count * 12 + 12);
        VR_EXPECT(want != NULL, "out of memory");
        if (want && m.normals) {
            vr_compute_normals(want, &m);
            VR_EXPECT(!memcmp(want, m.normals, (size_t)m.vertex_count * 12),
                      "normals are not vr_compute_normals of the decoded mesh");
        }
        free(want);
    }
    vr_mesh_free(&m);
    remove(path);
    vr_gts_free(&g);
    vr_mesh_free(&src);
    return VR_TEST_RESULT();
}

/* Connectivity-only files and damaged files: VR_ERR_FORMAT with a message naming the file. */
VR_TEST(test_scene_rejects, "gts/scene-rejects")
{
    vr_mesh src, m;
    if (!vr_test_load(&src, "sphere:2k"))
        return VR_TEST_FAIL;
    vr_gts_options opt = vr_gts_options_default();
    opt.keep_vertex_data = 0;
    vr_gts g;
    VR_EXPECT(vr_gts_encode(&g, NULL, &src, &opt) == VR_OK, "%s", vr_last_error());
    char path[64];
    VR_EXPECT(temp_path(path, sizeof path), "mkstemp");
    VR_EXPECT(vr_gts_write(&g, path) == VR_OK, "%s", vr_last_error());
    vr_status s = vr_mesh_load(&m, path);
    VR_EXPECT(s == VR_ERR_FORMAT, "connectivity-only file: status %d", (int)s);
    VR_EXPECT(strstr(vr_last_error(), path) && strstr(vr_last_error(), "no-vertex-data"),
              "message: %s", vr_last_error());
    if (s == VR_OK)
        vr_mesh_free(&m);
    vr_gts_free(&g);

    /* a file with vertex data, cut short: the reader's size checks, not a crash */
    opt.keep_vertex_data = 1;
    VR_EXPECT(vr_gts_encode(&g, NULL, &src, &opt) == VR_OK, "%s", vr_last_error());
    const size_t size = vr_gts_file_bytes(&g);
    uint8_t *img = malloc(size);
    size_t written = 0;
    VR_EXPECT(img && vr_gts_write_memory(img, size, &written, &g) == VR_OK, "%s",
              vr_last_error());
    if (img && written == size) {
        const size_t cuts[] = {size - 1, size / 2, 64, 9};
        for (size_t k = 0; k < sizeof cuts / sizeof cuts[0]; ++k) {
            FILE *f = fopen(path, "wb");
            VR_EXPECT(f && fwrite(img, 1, cuts[k], f) == cuts[k], "write %s", path);
            if (f)
                fclose(f);
            vr_scene scene;
            s = vr_scene_load(&scene, path);
            VR_EXPECT(s == VR_ERR_FORMAT, "cut to %zu bytes: status %d", cuts[k], (int)s);
            if (s == VR_OK)
                vr_scene_free(&scene);
        }
        /* one flipped bit in the strip codes: the checksum catches it */
        img[64] ^= 1;
        FILE *f = fopen(path, "wb");
        VR_EXPECT(f && fwrite(img, 1, size, f) == size, "write %s", path);
        if (f)
            fclose(f);
        s = vr_mesh_load(&m, path);
        VR_EXPECT(s == VR_ERR_FORMAT, "flipped bit: status %d", (int)s);
        if (s == VR_OK)
            vr_mesh_free(&m);
    }
    free(img);
    remove(path);
    vr_gts_free(&g);
    vr_mesh_free(&src);
    return VR_TEST_RESULT();
}
