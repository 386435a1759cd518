/* test_export.c - the writers behind `vreuse export` (pipeline/cli/mesh_write.h). Every shared
 * scene in five orders, written in every format and read back through vreuse's loader, has the
 * scene's counts (what `vreuse info` prints) and simulates to the same reuse (ideal, FIFO 16,
 * warp voting, dynamic batches: what `vreuse sim` prints), with the same triangles in the same
 * order up to a renaming of vertices; .gts keeps the counts and the triangles but orders them
 * itself (strips). OBJ, PLY and GLB files also open in assimp itself (vreuse reads PLY with its
 * own reader). A hand-made quad shows what each format keeps of an unreferenced vertex.
 * Group "export/"; try `vreuse_tests export/`.
 */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */
#include "tests/test.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pipeline/cli/mesh_write.h"
#include "scenes/scene.h"
#include "scenes/scene_internal.h"
#include "sim/sim.h"

/* A scratch folder per test: each check removes the files it wrote, then the folder goes. */
static char g_dir[64];

static int make_dir(void)
{
    snprintf(g_dir, sizeof g_dir, "/tmp/vr_test_export_XXXXXX");
    return mkdtemp(g_dir) != NULL;
}

/* What the checks compare: the counts `info` prints and the simulated invocations. */
typedef struct summary {
    vr_mesh_counts counts;
    uint64_t ideal, fifo16, warp, dyn;
} summary;

static vr_status summarize(summary *out, const vr_mesh *m)
{
    vr_sim_result r;
    vr_status s = vr_mesh_count(&out->counts, m);
    if (!s && !(s = vr_sim_ideal(&r, m->indices, m->index_count, m->vertex_count, NULL)))
        out->ideal = r.shaded_vertices;
    if (!s && !(s = vr_sim_fifo(&r, m->indices, m->index_count, m->vertex_count, 16, NULL)))
        out->fifo16 = r.shaded_vertices;
    if (!s && !(s = vr_sim_warp(&r, m->indices, m->index_count, m->vertex_count,
                                VR_WARP_BATCH_DEFAULT, 32, NULL)))
        out->warp = r.shaded_vertices;
    if (!s && !(s = vr_sim_dynamic(&r, m->indices, m->index_count, m->vertex_count, VR_NU_DEFAULT,
                                   VR_MAX_INDICES_DEFAULT, NULL)))
        out->dyn = r.shaded_vertices;
    return s;
}

/* 1 when `b`'s triangles are `a`'s in order, corners in the same rotation, vertices renamed one
 * to one. */
static int same_triangles(const vr_mesh *a, const vr_mesh *b)
{
    if (a->index_count != b->index_count)
        return 0;
    uint32_t *ab = malloc((size_t)a->vertex_count * 4), *ba = malloc((size_t)b->vertex_count * 4);
    int same = ab && ba;
    if (same) {
        memset(ab, 0xff, (size_t)a->vertex_count * 4);
        memset(ba, 0xff, (size_t)b->vertex_count * 4);
    }
    for (uint32_t i = 0; same && i < a->index_count; ++i) {
        const uint32_t x = a->indices[i], y = b->indices[i];
        if (ab[x] == UINT32_MAX && ba[y] == UINT32_MAX)
            ab[x] = y, ba[y] = x;
        same = ab[x] == y && ba[y] == x;
    }
    free(ab);
    free(ba);
    return same;
}

#define EXPECT_COUNTS_EQ(got, want, what)                                                      \
    VR_EXPECT(!memcmp(&(got), &(want), sizeof(vr_mesh_counts)),                                \
              "%s: counts %llu/%llu/%llu/%llu, want %llu/%llu/%llu/%llu "                      \
              "(vertices/referenced/triangles/degenerate)",                                    \
              what, (unsigned long long)(got).vertices,                                       \
              (unsigned long long)(got).referenced_vertices,                                  \
              (unsigned long long)(got).triangles,                                            \
              (unsigned long long)(got).degenerate_triangles,                                 \
              (unsigned long long)(want).vertices,                                            \
              (unsigned long long)(want).referenced_vertices,                                 \
              (unsigned long long)(want).triangles,                                           \
              (unsigned long long)(want).degenerate_triangles)

/* Writes `m` as `name` in format `f` and reads it back through vreuse's loader; checks the
 * counts, the simulated reuse and the triangles against `want`; with `assimp`, that assimp opens
 * the file too (one order per scene is enough: the orders differ in content only). */
static void round_trip(const vr_mesh *m, const summary *want, vr_mesh_format f, const char *name,
                       int assimp)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s.%s", g_dir, name, vr_mesh_format_names[f]);
    vr_status s = vr_mesh_write(path, f, m, name);
    VR_EXPECT(s == VR_OK, "%s: %s", path, vr_last_error());
    vr_mesh back;
    if (s || (s = vr_mesh_load(&back, path)) != VR_OK) {
        VR_EXPECT(s == VR_OK, "%s does not read back: %s", path, vr_last_error());
        unlink(path);
        return;
    }
    summary got;
    s = summarize(&got, &back);
    VR_EXPECT(s == VR_OK, "%s: %s", path, vr_last_error());
    EXPECT_COUNTS_EQ(got.counts, want->counts, path);
    VR_EXPECT_EQ(got.ideal, want->ideal);
    if (f != VR_MESH_GTS) { /* the codec orders the triangles itself */
        VR_EXPECT(got.fifo16 == want->fifo16 && got.warp == want->warp && got.dyn == want->dyn,
                  "%s: shaded fifo:16 %llu, warp %llu, dyn %llu; want %llu, %llu, %llu", path,
                  (unsigned long long)got.fifo16, (unsigned long long)got.warp,
                  (unsigned long long)got.dyn, (unsigned long long)want->fifo16,
                  (unsigned long long)want->warp, (unsigned long long)want->dyn);
        VR_EXPECT(same_triangles(m, &back), "%s: other triangles than the scene's", path);
    }
    vr_mesh_free(&back);
    if (assimp && f != VR_MESH_GTS) { /* a PLY is otherwise read only by our reader */
        vr_scene sc;
        memset(&sc, 0, sizeof sc);
        s = vr_assimp_load(&sc, path);
        VR_EXPECT(s == VR_OK, "assimp cannot open %s: %s", path, vr_last_error());
        uint64_t tris = 0;
        for (uint32_t d = 0; !s && d < sc.draw_count; ++d)
            tris += sc.draws[d].mesh.index_count / 3;
        VR_EXPECT(s || tris == want->counts.triangles, "assimp reads %llu triangles from %s",
                  (unsigned long long)tris, path);
        vr_scene_free(&sc);
    }
    unlink(path);
}

VR_TEST(test_export_round_trip, "export/round-trip")
{
    static const char *const scenes[] = {"cow.obj",   "fandisk.obj", "horse.ply",
                                         "igea.ply",  "rocker-arm.obj", "spot.obj",
                                         "stanford-bunny.obj", "teapot.obj"};
    static const int orders[] = {VR_ORDER_FILE, VR_ORDER_FORSYTH, VR_ORDER_TIPSIFY,
                                 VR_ORDER_RANDOM, VR_ORDER_FORSYTH | VR_ORDER_FETCH};
    if (!vr_test_scenes_dir()) {
        printf("SKIP: no ../shared/scenes\n");
        return VR_TEST_SKIP;
    }
    if (!make_dir())
        return VR_TEST_FAIL;
    for (size_t i = 0; i < sizeof scenes / sizeof scenes[0]; ++i) {
        char path[512];
        vr_mesh src;
        vr_status s = vr_mesh_load(&src, vr_test_scene_path(path, sizeof path, scenes[i]));
        VR_EXPECT(s == VR_OK, "%s: %s", scenes[i], vr_last_error());
        if (s)
            continue;
        for (size_t o = 0; o < sizeof orders / sizeof orders[0]; ++o) {
            vr_mesh m = src; /* reorder works on a copy of the index buffer (+fetch: of all) */
            vr_mesh_counts c;
            VR_EXPECT(vr_mesh_count(&c, &src) == VR_OK, "%s", vr_last_error());
            m.indices = malloc((size_t)src.index_count * 4);
            memcpy(m.indices, src.indices, (size_t)src.index_count * 4);
            const int fetch = orders[o] & VR_ORDER_FETCH;
            if (fetch) { /* fetch replaces the vertex arrays: give it copies to replace */
                m.positions = malloc((size_t)src.vertex_count * 12);
                m.normals = malloc((size_t)src.vertex_count * 12);
                m.texcoords = src.texcoords ? malloc((size_t)src.vertex_count * 8) : NULL;
                memcpy(m.positions, src.positions, (size_t)src.vertex_count * 12);
                memcpy(m.normals, src.normals, (size_t)src.vertex_count * 12);
                if (src.texcoords)
                    memcpy(m.texcoords, src.texcoords, (size_t)src.vertex_count * 8);
            }
            summary want;
            s = vr_mesh_reorder(&m, (vr_order)orders[o], 1);
            if (!s)
                s = summarize(&want, &m);
            VR_EXPECT(s == VR_OK, "%s %s: %s", scenes[i], vr_order_name((vr_order)orders[o]),
                      vr_last_error());
            char name[96];
            snprintf(name, sizeof name, "%s-%s", scenes[i], vr_order_name((vr_order)orders[o]));
            for (int f = 0; !s && f < VR_MESH_FORMAT_COUNT; ++f)
                round_trip(&m, &want, (vr_mesh_format)f, name, o == 0);
            free(m.indices);
            if (fetch) {
                free(m.positions);
                free(m.normals);
                free(m.texcoords);
            }
        }
        vr_mesh_free(&src);
    }
    VR_EXPECT(rmdir(g_dir) == 0, "%s is not empty", g_dir);
    return VR_TEST_RESULT();
}

/* A quad (two triangles over vertices 0..3) plus vertex 4, which no triangle uses: PLY and GTS
 * keep it; OBJ and GLB lose it, because assimp's reader drops unreferenced vertices. */
VR_TEST(test_export_unreferenced, "export/unreferenced")
{
    float pos[15] = {0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0, 5, 5, 5};
    float nrm[15] = {0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 1};
    float uv[10] = {0, 0, 1, 0, 1, 1, 0, 1, 0.5f, 0.5f};
    uint32_t idx[6] = {0, 1, 2, 0, 2, 3};
    const vr_mesh quad = {5, pos, nrm, uv, 6, idx};
    static const uint32_t kept[VR_MESH_FORMAT_COUNT] = {4, 5, 4, 5};
    if (!make_dir())
        return VR_TEST_FAIL;
    for (int f = 0; f < VR_MESH_FORMAT_COUNT; ++f) {
        char path[160];
        snprintf(path, sizeof path, "%s/quad.%s", g_dir, vr_mesh_format_names[f]);
        VR_EXPECT(vr_mesh_write(path, (vr_mesh_format)f, &quad, "quad\nwith a newline") == VR_OK,
                  "%s: %s", path, vr_last_error());
        vr_mesh back;
        vr_status s = vr_mesh_load(&back, path);
        VR_EXPECT(s == VR_OK, "%s: %s", path, vr_last_error());
        if (s) {
            unlink(path);
            continue;
        }
        VR_EXPECT(back.vertex_count == kept[f], "%s: %u vertices, want %u", path,
                  back.vertex_count, kept[f]);
        VR_EXPECT_EQ(back.index_count, 6);
        VR_EXPECT(back.texcoords != NULL, "%s lost its texcoords", path);
        if (f != VR_MESH_GTS)
            VR_EXPECT(same_triangles(&quad, &back), "%s: other triangles", path);
        for (uint32_t v = 0; f != VR_MESH_GTS && v < 4 && back.texcoords; ++v) {
            const uint32_t w = back.indices[v == 3 ? 5 : v]; /* vertex v's first corner */
            const float *t = back.texcoords + 2 * w;
            VR_EXPECT(t[0] == uv[2 * v] && t[1] == uv[2 * v + 1],
                      "%s: vertex %u texcoord (%g, %g), want (%g, %g)", path, v, t[0], t[1],
                      uv[2 * v], uv[2 * v + 1]);
        }
        vr_mesh_free(&back);
        unlink(path);
    }
    /* what the format follows from the name, and what has none */
    VR_EXPECT_EQ(vr_mesh_format_of("a/b.GLB"), VR_MESH_GLB);
    VR_EXPECT_EQ(vr_mesh_format_of("x.ply"), VR_MESH_PLY);
    VR_EXPECT(vr_mesh_format_of("x.stl") == -1 && vr_mesh_format_of("obj") == -1 &&
                  vr_mesh_format_of("a.obj/b") == -1,
              "unknown extensions give -1");
    /* a mesh that is no mesh is refused before anything is written */
    uint32_t bad[3] = {0, 1, 7};
    const vr_mesh broken = {5, pos, nrm, NULL, 3, bad};
    char path[160];
    snprintf(path, sizeof path, "%s/broken.ply", g_dir);
    VR_EXPECT(vr_mesh_write(path, VR_MESH_PLY, &broken, NULL) == VR_ERR_FORMAT &&
                  access(path, F_OK) != 0,
              "an index out of range is refused and nothing is written");
    VR_EXPECT(vr_mesh_write("/nonexistent-dir/q.obj", VR_MESH_OBJ, &quad, NULL) == VR_ERR_IO &&
                  strstr(vr_last_error(), "/nonexistent-dir/q.obj"),
              "an unwritable path names itself: %s", vr_last_error());
    VR_EXPECT(rmdir(g_dir) == 0, "%s is not empty", g_dir);
    return VR_TEST_RESULT();
}
