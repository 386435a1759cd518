/* test_scenes.c - tests of scenes/: loader counts for every file in ../shared/scenes, glTF 2.0
 * and FBX multi-mesh scenes from assimp's test models, malformed files (each must fail fast
 * with a message naming the file), the PLY reader (strips, fans, endianness), generators,
 * subdivision, reordering and flattening.
 * Run: `vreuse_tests scenes/` (whole group well under 10 s).
 */
#define _POSIX_C_SOURCE 200809L /* mkstemp, mkdtemp, clock_gettime */
#include "tests/test.h"

#include "scenes/scene.h"
#include "tests/test_helpers.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---- helpers ------------------------------------------------------------------------------ */

/* Writes `n` bytes to a fresh temp file; `path` receives its name (caller unlinks). */
static int write_temp(char *path, size_t cap, const void *data, size_t n)
{
    snprintf(path, cap, "/tmp/vr_test_scene_XXXXXX");
    int fd = mkstemp(path);
    if (fd < 0)
        return -1;
    int ok = write(fd, data, n) == (ssize_t)n;
    close(fd);
    return ok ? 0 : -1;
}

/* Loads `data` as a file; returns the status and leaves the message in vr_last_error(). */
static vr_status load_bytes(vr_mesh *m, const void *data, size_t n, char *path, size_t cap)
{
    if (write_temp(path, cap, data, n) != 0)
        return VR_ERR_IO;
    vr_status s = vr_mesh_load(m, path);
    unlink(path);
    return s;
}

static vr_status load_text(vr_mesh *m, const char *text)
{
    char path[64];
    return load_bytes(m, text, strlen(text), path, sizeof path);
}

static int contains(const char *hay, const char *needle) { return strstr(hay, needle) != NULL; }

int vr_test_load(vr_mesh *m, const char *spec)
{
    const vr_status s = vr_mesh_load(m, spec);
    VR_EXPECT(s == VR_OK, "%s: %s", spec, vr_last_error());
    return s == VR_OK;
}

/* Canonical triangle: rotated so the smallest index comes first (winding kept). */
static void canonical(uint32_t *t)
{
    while (t[0] > t[1] || t[0] > t[2]) {
        uint32_t a = t[0];
        t[0] = t[1], t[1] = t[2], t[2] = a;
    }
}

static int cmp_tri(const void *a, const void *b)
{
    const uint32_t *x = a, *y = b;
    for (int k = 0; k < 3; ++k)
        if (x[k] != y[k])
            return x[k] < y[k] ? -1 : 1;
    return 0;
}

/* Sorted canonical triangles: the multiset a reorder must keep. Caller frees. */
static uint32_t *triangle_multiset(const vr_mesh *m)
{
    uint32_t *t = malloc(m->index_count * sizeof *t);
    memcpy(t, m->indices, m->index_count * sizeof *t);
    for (uint32_t i = 0; i < m->index_count; i += 3)
        canonical(t + i);
    qsort(t, m->index_count / 3, 3 * sizeof *t, cmp_tri);
    return t;
}

int vr_test_cmp_u64(const void *a, const void *b)
{
    const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

int vr_test_cmp_u32(const void *a, const void *b)
{
    const uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* Watertight and consistently oriented: every directed edge (a,b) appears once and its
 * twin (b,a) once. Returns the number of directed edges without a unique twin. */
static uint64_t open_edges(const vr_mesh *m)
{
    size_t n = m->index_count;
    uint64_t *e = malloc(n * sizeof *e);
    for (size_t i = 0; i < n; i += 3)
        for (int k = 0; k < 3; ++k)
            e[i + k] = (uint64_t)m->indices[i + k] << 32 | m->indices[i + (k + 1) % 3];
    qsort(e, n, sizeof *e, vr_test_cmp_u64);
    uint64_t bad = 0;
    for (size_t i = 0; i < n; ++i) {
        uint64_t twin = (e[i] << 32) | (e[i] >> 32);
        int dup = (i > 0 && e[i - 1] == e[i]) || (i + 1 < n && e[i + 1] == e[i]);
        bad += dup || !bsearch(&twin, e, n, sizeof *e, vr_test_cmp_u64);
    }
    free(e);
    return bad;
}

static double ideal_reuse(const vr_mesh *m)
{
    vr_mesh_counts c;
    VR_EXPECT_EQ(vr_mesh_count(&c, m), VR_OK);
    return 1.0 - (double)c.referenced_vertices / (double)m->index_count;
}

/* Misses of a FIFO post-transform cache per triangle (ACMR), the figure reorders improve. */
static double acmr_fifo(const vr_mesh *m, uint32_t cache)
{
    uint32_t *stamp = calloc(m->vertex_count, sizeof *stamp);
    uint64_t misses = 0;
    for (uint32_t i = 0; i < m->index_count; ++i) {
        uint32_t v = m->indices[i];
        if (stamp[v] == 0 || misses - stamp[v] >= cache)
            stamp[v] = (uint32_t)++misses; /* entry time = miss counter */
    }
    free(stamp);
    return (double)misses / (double)(m->index_count / 3);
}

static void face_normal(float *n, const vr_mesh *m, uint32_t t)
{
    const float *p0 = m->positions + 3 * m->indices[3 * t], *p1 = m->positions + 3 * m->indices[3 * t + 1],
                *p2 = m->positions + 3 * m->indices[3 * t + 2];
    float e1[3] = {p1[0] - p0[0], p1[1] - p0[1], p1[2] - p0[2]};
    float e2[3] = {p2[0] - p0[0], p2[1] - p0[1], p2[2] - p0[2]};
    n[0] = e1[1] * e2[2] - e1[2] * e2[1];
    n[1] = e1[2] * e2[0] - e1[0] * e2[2];
    n[2] = e1[0] * e2[1] - e1[1] * e2[0];
}

static int expect_indices(const vr_mesh *m, const uint32_t *want, uint32_t n, int line)
{
    if (m->index_count != n) {
        fprintf(stderr, "test_scenes.c:%d: index_count %u, want %u\n", line, m->index_count, n);
        ++vr_test_failures;
        return 0;
    }
    for (uint32_t i = 0; i < n; ++i)
        if (m->indices[i] != want[i]) {
            fprintf(stderr, "test_scenes.c:%d: index %u is %u, want %u\n", line, i, m->indices[i], want[i]);
            ++vr_test_failures;
            return 0;
        }
    return 1;
}

/* ---- shared scene files -------------------------------------------------------------------- */

VR_TEST(test_shared_counts, "scenes/shared_counts")
{
    static const struct {
        const char *file;
        uint64_t vertices, referenced, triangles, degenerate;
        int texcoords;
    } want[] = {
        /* vertices after assimp's JoinIdenticalVertices (OBJ) or as in the file (PLY) */
        {"stanford-bunny.obj", 34834, 34834, 69451, 0, 0},
        {"horse.ply", 48485, 48485, 96966, 0, 0},
        {"igea.ply", 134345, 134345, 268686, 0, 0},
        {"fandisk.obj", 6475, 6475, 12946, 0, 0},
        {"rocker-arm.obj", 10044, 10044, 20088, 0, 0},
        {"spot.obj", 3225, 3225, 5856, 0, 1},
        {"cow.obj", 2903, 2903, 5804, 0, 0},
        {"teapot.obj", 3241, 3241, 6320, 0, 0},
    };
    char path[1024];
    if (!vr_test_scene_path(path, sizeof path, "")) {
        fprintf(stderr, "SKIP: ../shared/scenes is missing\n");
        return VR_TEST_SKIP;
    }
    vr_progress_quiet = 1;
    for (size_t i = 0; i < sizeof want / sizeof want[0]; ++i) {
        vr_test_scene_path(path, sizeof path, want[i].file);
        vr_scene scene;
        vr_status s = vr_scene_load(&scene, path);
        VR_EXPECT(s == VR_OK, "%s: %s", want[i].file, vr_last_error());
        if (s)
            continue;
        VR_EXPECT_EQ(scene.draw_count, 1);
        const vr_mesh *m = &scene.draws[0].mesh;
        vr_mesh_counts c;
        VR_EXPECT_EQ(vr_mesh_count(&c, m), VR_OK);
        VR_EXPECT(c.vertices == want[i].vertices, "%s: vertices %llu", want[i].file, (unsigned long long)c.vertices);
        VR_EXPECT(c.referenced_vertices == want[i].referenced, "%s: referenced %llu", want[i].file,
                  (unsigned long long)c.referenced_vertices);
        VR_EXPECT(c.triangles == want[i].triangles, "%s: triangles %llu", want[i].file,
                  (unsigned long long)c.triangles);
        VR_EXPECT(c.degenerate_triangles == want[i].degenerate, "%s: degenerate %llu", want[i].file,
                  (unsigned long long)c.degenerate_triangles);
        VR_EXPECT((m->texcoords != NULL) == want[i].texcoords, "%s: texcoords", want[i].file);
        VR_EXPECT(m->normals != NULL, "%s: normals", want[i].file);
        VR_EXPECT(vr_mesh_validate(m, want[i].file) == VR_OK, "%s", vr_last_error());
        /* normals are unit length whether from the file (horse) or computed */
        int bad = 0;
        for (uint32_t v = 0; v < m->vertex_count; ++v) {
            const float *n = m->normals + 3 * v;
            bad += fabsf(n[0] * n[0] + n[1] * n[1] + n[2] * n[2] - 1) > 1e-4f;
        }
        VR_EXPECT(bad == 0, "%s: %d normals not unit length", want[i].file, bad);
        vr_scene_free(&scene);
    }
    /* the bunny's ideal reuse as quoted in the README: 1 - 34,834 / 208,353 */
    vr_mesh bunny;
    vr_test_scene_path(path, sizeof path, "stanford-bunny.obj");
    if (vr_mesh_load(&bunny, path) == VR_OK) {
        VR_EXPECT(fabs(ideal_reuse(&bunny) - 0.8328) < 1e-4, "bunny reuse %f", ideal_reuse(&bunny));
        vr_mesh_free(&bunny);
    }
    return VR_TEST_RESULT();
}

/* igea's strips keep one orientation: the closed surface has every edge twinned. */
VR_TEST(test_igea_strips_oriented, "scenes/igea_strips_oriented")
{
    char path[1024];
    if (!vr_test_scene_path(path, sizeof path, "igea.ply"))
        return VR_TEST_SKIP;
    vr_mesh m;
    vr_status s = vr_mesh_load(&m, path);
    VR_EXPECT(s == VR_OK, "%s", vr_last_error());
    if (s)
        return VR_TEST_RESULT();
    VR_EXPECT_EQ(open_edges(&m), 0);
    vr_mesh_free(&m);
    return VR_TEST_RESULT();
}

/* ---- assimp scenes with several meshes and node transforms --------------------------------- */

/* Loads a model of the assimp-testmodels package: VR_TEST_SKIP when it is not installed,
 * VR_TEST_FAIL (recorded) when loading fails, else VR_TEST_PASS with *scene to free. */
static int load_test_model(vr_scene *scene, const char *path)
{
    if (access(path, R_OK) != 0) {
        fprintf(stderr, "SKIP: %s is missing (assimp-testmodels)\n", path);
        return VR_TEST_SKIP;
    }
    vr_status s = vr_scene_load(scene, path);
    VR_EXPECT(s == VR_OK, "%s", vr_last_error());
    return s ? VR_TEST_FAIL : VR_TEST_PASS;
}

/* Triangles and vertices summed over the draws (instances counted each time). */
static void scene_totals(const vr_scene *scene, uint64_t *tris, uint64_t *verts)
{
    *tris = *verts = 0;
    for (uint32_t i = 0; i < scene->draw_count; ++i) {
        *tris += scene->draws[i].mesh.index_count / 3;
        *verts += scene->draws[i].mesh.vertex_count;
    }
}

VR_TEST(test_gltf_multi_mesh, "scenes/gltf_multi_mesh")
{
    vr_scene scene;
    int r = load_test_model(
        &scene, "/usr/share/assimp/models/glTF2/2CylinderEngine-glTF-Binary/2CylinderEngine.glb");
    if (r != VR_TEST_PASS)
        return r;
    /* 34 meshes instanced by 115 node references */
    VR_EXPECT_EQ(scene.draw_count, 115);
    uint64_t tris, verts;
    scene_totals(&scene, &tris, &verts);
    int moved = 0;
    for (uint32_t i = 0; i < scene.draw_count; ++i)
        moved += scene.draws[i].transform[12] != 0 || scene.draws[i].transform[13] != 0 ||
                 scene.draws[i].transform[14] != 0;
    VR_EXPECT_EQ(tris, 121496);
    VR_EXPECT_EQ(verts, 84657);
    VR_EXPECT(moved > 0, "no draw has a translation");
    vr_mesh flat;
    vr_status s = vr_scene_flatten(&flat, &scene);
    VR_EXPECT(s == VR_OK, "%s", vr_last_error());
    if (!s) {
        vr_mesh_counts c;
        VR_EXPECT_EQ(vr_mesh_count(&c, &flat), VR_OK);
        VR_EXPECT_EQ(c.triangles, 121496);
        VR_EXPECT_EQ(c.vertices, 84657);
        VR_EXPECT_EQ(c.degenerate_triangles, 11154);
        vr_mesh_free(&flat);
    }
    vr_scene_free(&scene);
    return VR_TEST_RESULT();
}

VR_TEST(test_fbx_multi_mesh, "scenes/fbx_multi_mesh")
{
    vr_scene scene;
    int r = load_test_model(&scene, "/usr/share/assimp/models/FBX/spider.fbx");
    if (r != VR_TEST_PASS)
        return r;
    VR_EXPECT_EQ(scene.draw_count, 19);
    uint64_t tris, verts;
    scene_totals(&scene, &tris, &verts);
    for (uint32_t i = 0; i < scene.draw_count; ++i)
        VR_EXPECT(scene.draws[i].name[0] != 0, "draw %u has no name", i);
    VR_EXPECT_EQ(tris, 1368);
    VR_EXPECT_EQ(verts, 958);
    vr_scene_free(&scene);

    const char *cubes = "/usr/share/assimp/models/FBX/cubes_with_names.fbx";
    if (vr_scene_load(&scene, cubes) == VR_OK) {
        VR_EXPECT_EQ(scene.draw_count, 4);
        scene_totals(&scene, &tris, &verts);
        VR_EXPECT_EQ(tris, 420);
        vr_scene_free(&scene);
    }
    return VR_TEST_RESULT();
}

/* ---- malformed input ------------------------------------------------------------------------ */

VR_TEST(test_error_missing_file, "scenes/error_missing_file")
{
    vr_mesh m;
    vr_status s = vr_mesh_load(&m, "/nonexistent/dir/missing.obj");
    VR_EXPECT_EQ(s, VR_ERR_IO);
    VR_EXPECT(contains(vr_last_error(), "/nonexistent/dir/missing.obj"), "%s", vr_last_error());
    VR_EXPECT(contains(vr_last_error(), "cannot open"), "%s", vr_last_error());
    VR_EXPECT(m.indices == NULL && m.vertex_count == 0, "output not cleared");
    s = vr_mesh_load(&m, "/tmp");
    VR_EXPECT_EQ(s, VR_ERR_IO);
    VR_EXPECT(contains(vr_last_error(), "not a regular file"), "%s", vr_last_error());
    return VR_TEST_RESULT();
}

VR_TEST(test_error_garbage, "scenes/error_garbage")
{
    unsigned char junk[4096];
    uint64_t st = 12345;
    for (size_t i = 0; i < sizeof junk; ++i) {
        st = st * 6364136223846793005ull + 1442695040888963407ull;
        junk[i] = (unsigned char)(st >> 56);
    }
    char path[64];
    vr_mesh m;
    vr_status s = load_bytes(&m, junk, sizeof junk, path, sizeof path);
    VR_EXPECT_EQ(s, VR_ERR_FORMAT);
    VR_EXPECT(contains(vr_last_error(), path), "message does not name the file: %s", vr_last_error());
    /* garbage after a valid PLY magic goes to our reader and fails its header check */
    memcpy(junk, "ply\n", 4);
    s = load_bytes(&m, junk, sizeof junk, path, sizeof path);
    VR_EXPECT_EQ(s, VR_ERR_FORMAT);
    VR_EXPECT(contains(vr_last_error(), path), "%s", vr_last_error());
    s = load_bytes(&m, "", 0, path, sizeof path);
    VR_EXPECT(s == VR_ERR_FORMAT, "empty file: status %d: %s", s, vr_last_error());
    return VR_TEST_RESULT();
}

VR_TEST(test_error_ply_absurd_header, "scenes/error_ply_absurd_header")
{
    /* 2^31 vertices (24 GiB of floats) claimed by a 300-byte file: refused from the header */
    char buf[300];
    memset(buf, ' ', sizeof buf);
    const char *h = "ply\nformat binary_little_endian 1.0\nelement vertex 2147483648\n"
                    "property float x\nproperty float y\nproperty float z\nelement face 1\n"
                    "property list uchar int vertex_indices\nend_header\n";
    memcpy(buf, h, strlen(h));
    char path[64];
    vr_mesh m;
    double t0 = vr_now_ms();
    vr_status s = load_bytes(&m, buf, sizeof buf, path, sizeof path);
    double ms = vr_now_ms() - t0;
    VR_EXPECT_EQ(s, VR_ERR_FORMAT);
    VR_EXPECT(contains(vr_last_error(), "2147483648"), "%s", vr_last_error());
    VR_EXPECT(contains(vr_last_error(), path), "%s", vr_last_error());
    VR_EXPECT(ms < 100, "took %.1f ms", ms);
    /* the same in ascii, and a face count the rest of the file cannot hold */
    const char *a = "ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\n"
                    "property float z\nelement face 4000000000\nproperty list uchar int vertex_indices\n"
                    "end_header\n0 0 0\n1 0 0\n0 1 0\n3 0 1 2\n";
    t0 = vr_now_ms();
    s = load_text(&m, a);
    ms = vr_now_ms() - t0;
    VR_EXPECT_EQ(s, VR_ERR_FORMAT);
    VR_EXPECT(contains(vr_last_error(), "4000000000"), "%s", vr_last_error());
    VR_EXPECT(ms < 100, "took %.1f ms", ms);
    /* a list length that runs past the end of the file */
    const char *l = "ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\n"
                    "property float z\nelement face 1\nproperty list uint int vertex_indices\n"
                    "end_header\n0 0 0\n1 0 0\n0 1 0\n4000000000 0 1 2\n";
    s = load_text(&m, l);
    VR_EXPECT_EQ(s, VR_ERR_FORMAT);
    VR_EXPECT(contains(vr_last_error(), "past the end"), "%s", vr_last_error());
    return VR_TEST_RESULT();
}

static const char *g_ply_tri_head = "ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\n"
                                    "property float y\nproperty float z\n";

/* g_ply_tri_head + body, a 3-vertex ASCII PLY, must be refused as malformed with `why` in the
 * message (left in vr_last_error() for further checks). */
static void expect_ply_refused(const char *body, const char *why)
{
    char text[512];
    snprintf(text, sizeof text, "%s%s", g_ply_tri_head, body);
    vr_mesh m;
    vr_status s = load_text(&m, text);
    VR_EXPECT(s == VR_ERR_FORMAT, "status %d, want VR_ERR_FORMAT ('%s')", (int)s, why);
    VR_EXPECT(contains(vr_last_error(), why), "%s", vr_last_error());
}

#define PLY_ONE_FACE "element face 1\nproperty list uchar int vertex_indices\nend_header\n"

VR_TEST(test_error_ply_index_range, "scenes/error_ply_index_range")
{
    expect_ply_refused(PLY_ONE_FACE "0 0 0\n1 0 0\n0 1 0\n3 0 1 5\n", "out of range");
    VR_EXPECT(contains(vr_last_error(), "vertex count 3"), "%s", vr_last_error());
    expect_ply_refused(PLY_ONE_FACE "0 0 0\n1 0 0\n0 1 0\n3 0 -2 1\n", "out of range");
    /* non-finite positions are refused too: every later stage assumes finite input */
    expect_ply_refused(PLY_ONE_FACE "0 0 0\n1 nan 0\n0 1 0\n3 0 1 2\n", "non-finite");
    return VR_TEST_RESULT();
}

VR_TEST(test_error_no_faces, "scenes/error_no_faces")
{
    /* a point cloud */
    expect_ply_refused("end_header\n0 0 0\n1 0 0\n0 1 0\n", "no triangles");
    /* a face element with zero entries, and one with only 2-corner faces */
    expect_ply_refused("element face 0\nproperty list uchar int vertex_indices\nend_header\n"
                       "0 0 0\n1 0 0\n0 1 0\n", "no triangles");
    expect_ply_refused(PLY_ONE_FACE "0 0 0\n1 0 0\n0 1 0\n2 0 1\n", "no triangles");
    /* an OBJ with vertices only (assimp) */
    vr_mesh m;
    vr_status s;
    char path[64];
    const char *obj = "v 0 0 0\nv 1 0 0\nv 0 1 0\n";
    if (write_temp(path, sizeof path, obj, strlen(obj)) == 0) {
        char named[80];
        snprintf(named, sizeof named, "%s.obj", path);
        rename(path, named);
        s = vr_mesh_load(&m, named);
        unlink(named);
        VR_EXPECT_EQ(s, VR_ERR_FORMAT);
        VR_EXPECT(contains(vr_last_error(), "no triangles"), "%s", vr_last_error());
        VR_EXPECT(contains(vr_last_error(), named), "%s", vr_last_error());
    }
    return VR_TEST_RESULT();
}

/* A little-endian binary PLY: 4 vertices (x,y,z float), 2 faces (uchar count, int indices). */
static size_t make_binary_ply(unsigned char *buf, int big_endian)
{
    const char *h = big_endian ? "ply\nformat binary_big_endian 1.0\n" : "ply\nformat binary_little_endian 1.0\n";
    size_t n = (size_t)sprintf((char *)buf,
                               "%selement vertex 4\nproperty float x\nproperty float y\nproperty float z\n"
                               "element face 2\nproperty list uchar int vertex_indices\nend_header\n",
                               h);
    const float pos[12] = {0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0};
    for (int i = 0; i < 12; ++i) {
        uint32_t u;
        memcpy(&u, &pos[i], 4);
        for (int b = 0; b < 4; ++b)
            buf[n++] = (unsigned char)(u >> (8 * (big_endian ? 3 - b : b)));
    }
    const int32_t faces[2][3] = {{0, 1, 2}, {0, 2, 3}};
    for (int f = 0; f < 2; ++f) {
        buf[n++] = 3;
        for (int k = 0; k < 3; ++k)
            for (int b = 0; b < 4; ++b)
                buf[n++] = (unsigned char)((uint32_t)faces[f][k] >> (8 * (big_endian ? 3 - b : b)));
    }
    return n;
}

VR_TEST(test_ply_binary_and_truncated, "scenes/ply_binary_and_truncated")
{
    unsigned char buf[1024];
    char path[64];
    vr_mesh m;
    static const uint32_t want[] = {0, 1, 2, 0, 2, 3};
    for (int be = 0; be < 2; ++be) {
        size_t n = make_binary_ply(buf, be);
        vr_status s = load_bytes(&m, buf, n, path, sizeof path);
        VR_EXPECT(s == VR_OK, "%s endian: %s", be ? "big" : "little", vr_last_error());
        if (s)
            continue;
        expect_indices(&m, want, 6, __LINE__);
        VR_EXPECT(m.positions[6] == 1.0f && m.positions[7] == 1.0f && m.positions[11] == 0.0f,
                  "positions decoded wrong");
        VR_EXPECT(m.normals[2] > 0.99f, "computed normal %f", m.normals[2]);
        vr_mesh_free(&m);
        /* cut inside the last face, then inside the vertex data */
        s = load_bytes(&m, buf, n - 3, path, sizeof path);
        VR_EXPECT_EQ(s, VR_ERR_FORMAT);
        VR_EXPECT(contains(vr_last_error(), "truncated"), "%s", vr_last_error());
        s = load_bytes(&m, buf, n - 30, path, sizeof path);
        VR_EXPECT_EQ(s, VR_ERR_FORMAT);
        VR_EXPECT(contains(vr_last_error(), "truncated"), "%s", vr_last_error());
    }
    return VR_TEST_RESULT();
}

/* Strips: (s0 s1 s2 s3) -> (s0,s1,s2), (s2,s1,s3); -1 restarts; repeated-index stitches drop. */
VR_TEST(test_ply_tristrips, "scenes/ply_tristrips")
{
    /* vertices in the z=0 plane laid out as the strips run (the stitch 6 6 turns the second
     * strip around vertex 7), so every kept triangle faces -z like the first */
    const char *text =
        "ply\nformat ascii 1.0\nelement vertex 9\nproperty float x\nproperty float y\nproperty float z\n"
        "element tristrips 1\nproperty list int int vertex_indices\nend_header\n"
        "0 0 0\n0 1 0\n1 0 0\n1 1 0\n"
        "3 0 0\n3 1 0\n4 0 0\n5 1 0\n4 2 0\n"
        "11 0 1 2 3 -1 4 5 6 6 7 8\n";
    vr_mesh m;
    vr_status s = load_text(&m, text);
    VR_EXPECT(s == VR_OK, "%s", vr_last_error());
    if (s)
        return VR_TEST_RESULT();
    /* strip 2 is 4 5 6 6 7 8: (4,5,6) kept, (6,5,6) and (6,6,7) are stitches, (7,6,8) kept */
    static const uint32_t want[] = {0, 1, 2, 2, 1, 3, 4, 5, 6, 7, 6, 8};
    expect_indices(&m, want, 12, __LINE__);
    for (uint32_t t = 0; t < m.index_count / 3; ++t) {
        float n[3];
        face_normal(n, &m, t);
        VR_EXPECT(n[2] < 0, "triangle %u faces %+g (the first faces -z)", t, n[2]);
    }
    vr_mesh_free(&m);
    return VR_TEST_RESULT();
}

/* Quads fan into (0,1,2),(0,2,3); normals and u,v texcoords come from the file. */
VR_TEST(test_ply_fan_attributes, "scenes/ply_fan_attributes")
{
    const char *text =
        "ply\nformat ascii 1.0\ncomment a quad\nelement vertex 4\nproperty float x\nproperty float y\n"
        "property float z\nproperty float nx\nproperty float ny\nproperty float nz\nproperty float u\n"
        "property float v\nproperty uchar red\nelement face 1\nproperty list uchar uint vertex_index\n"
        "property uchar flags\nend_header\n"
        "0 0 0 0 0 2 0 0 255\n1 0 0 0 0 2 1 0 255\n1 1 0 0 0 2 1 1 255\n0 1 0 0 0 2 0 1 255\n"
        "4 0 1 2 3 7\n";
    vr_mesh m;
    vr_status s = load_text(&m, text);
    VR_EXPECT(s == VR_OK, "%s", vr_last_error());
    if (s)
        return VR_TEST_RESULT();
    static const uint32_t want[] = {0, 1, 2, 0, 2, 3};
    expect_indices(&m, want, 6, __LINE__);
    VR_EXPECT(m.texcoords && m.texcoords[4] == 1.0f && m.texcoords[5] == 1.0f, "texcoords");
    VR_EXPECT(m.normals && m.normals[2] == 1.0f, "file normal not normalized: %f", m.normals ? m.normals[2] : 0);
    vr_mesh_free(&m);
    /* a malformed number */
    const char *bad = "ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\n"
                      "property float z\nelement face 1\nproperty list uchar int vertex_indices\n"
                      "end_header\n0 0 0\n1 x 0\n0 1 0\n3 0 1 2\n";
    s = load_text(&m, bad);
    VR_EXPECT_EQ(s, VR_ERR_FORMAT);
    VR_EXPECT(contains(vr_last_error(), "malformed number"), "%s", vr_last_error());
    return VR_TEST_RESULT();
}

/* ---- specs -------------------------------------------------------------------------------- */

VR_TEST(test_specs, "scenes/specs")
{
    vr_scene sc;
    VR_EXPECT_EQ(vr_scene_load(&sc, "sphere:abc"), VR_ERR_ARG);
    VR_EXPECT(contains(vr_last_error(), "abc"), "%s", vr_last_error());
    VR_EXPECT_EQ(vr_scene_load(&sc, "sphere:2000M"), VR_ERR_ARG);
    VR_EXPECT(contains(vr_last_error(), "2^32-1"), "%s", vr_last_error());
    VR_EXPECT_EQ(vr_scene_load(&sc, "sphere:1M@2000M"), VR_ERR_ARG); /* 4^6 x 1M > 2^32/3 */
    VR_EXPECT_EQ(vr_scene_load(&sc, "spheres"), VR_ERR_IO);
    VR_EXPECT(contains(vr_last_error(), "generators are"), "%s", vr_last_error());

    vr_progress_quiet = 1;
    VR_EXPECT(vr_scene_load(&sc, "sphere:1000") == VR_OK, "%s", vr_last_error());
    uint32_t base = sc.draws[0].mesh.index_count / 3;
    VR_EXPECT(!strcmp(sc.source, "sphere:1000"), "source %s", sc.source);
    vr_scene_free(&sc);
    /* @N subdivides the fewest levels that reach N: 1000-ish -> x16 for @10k */
    VR_EXPECT(vr_scene_load(&sc, "sphere:1000@10k") == VR_OK, "%s", vr_last_error());
    VR_EXPECT_EQ(sc.draws[0].mesh.index_count / 3, base * 16);
    vr_scene_free(&sc);

    /* a real file whose name has '@' and looks like a spec still loads as the file */
    char dir[] = "/tmp/vr_test_at_XXXXXX", path[128];
    if (mkdtemp(dir)) {
        snprintf(path, sizeof path, "%s/tri@2k.ply", dir);
        FILE *f = fopen(path, "w");
        fprintf(f, "%selement face 1\nproperty list uchar int vertex_indices\nend_header\n"
                   "0 0 0\n1 0 0\n0 1 0\n3 0 1 2\n", g_ply_tri_head);
        fclose(f);
        VR_EXPECT(vr_scene_load(&sc, path) == VR_OK, "%s", vr_last_error());
        VR_EXPECT_EQ(sc.draws[0].mesh.index_count, 3);
        vr_scene_free(&sc);
        /* and the spec form on top of it: path@N subdivides that file */
        char spec[160];
        snprintf(spec, sizeof spec, "%s@16", path);
        VR_EXPECT(vr_scene_load(&sc, spec) == VR_OK, "%s", vr_last_error());
        VR_EXPECT_EQ(sc.draws[0].mesh.index_count / 3, 16);
        vr_scene_free(&sc);
        unlink(path);
        rmdir(dir);
    }
    return VR_TEST_RESULT();
}

VR_TEST(test_order_names, "scenes/order_names")
{
    for (int o = 0; o < VR_ORDER_COUNT; ++o)
        VR_EXPECT_EQ(vr_order_parse(vr_order_name((vr_order)o)), o);
    VR_EXPECT_EQ(vr_order_parse("fifo"), VR_ORDER_TIPSIFY);
    VR_EXPECT_EQ(vr_order_parse("tomf"), -1);
    VR_EXPECT(!strcmp(vr_order_name(VR_ORDER_FORSYTH), "forsyth"), "name");
    return VR_TEST_RESULT();
}

/* ---- generators ----------------------------------------------------------------------------- */

VR_TEST(test_generators, "scenes/generators")
{
    vr_mesh m;
    vr_mesh_counts c;
    /* the embedded default: ~82k triangles, vertices = tris/2 + 2, closed, facing outwards */
    VR_EXPECT(vr_mesh_load(&m, VR_DEFAULT_SCENE) == VR_OK, "%s", vr_last_error());
    VR_EXPECT_EQ(vr_mesh_count(&c, &m), VR_OK);
    VR_EXPECT(c.triangles >= VR_DEFAULT_SPHERE_TRIANGLES && c.triangles < VR_DEFAULT_SPHERE_TRIANGLES * 101 / 100,
              "sphere has %llu triangles", (unsigned long long)c.triangles);
    VR_EXPECT_EQ(c.vertices, c.triangles / 2 + 2);
    VR_EXPECT_EQ(c.degenerate_triangles, 0);
    VR_EXPECT(fabs(ideal_reuse(&m) - 0.8333) < 0.001, "sphere reuse %f", ideal_reuse(&m));
    VR_EXPECT_EQ(open_edges(&m), 0);
    int inward = 0;
    for (uint32_t t = 0; t < m.index_count / 3; ++t) {
        float n[3];
        face_normal(n, &m, t);
        const float *p = m.positions + 3 * m.indices[3 * t];
        inward += n[0] * p[0] + n[1] * p[1] + n[2] * p[2] <= 0;
    }
    VR_EXPECT_EQ(inward, 0);
    vr_mesh_free(&m);

    /* terrain: row-major grid facing +y */
    VR_EXPECT(vr_generate_terrain(&m, 20000) == VR_OK, "%s", vr_last_error());
    VR_EXPECT_EQ(vr_mesh_count(&c, &m), VR_OK);
    VR_EXPECT(c.triangles >= 20000 && c.triangles < 20500, "terrain %llu", (unsigned long long)c.triangles);
    VR_EXPECT(ideal_reuse(&m) > 0.82, "terrain reuse %f", ideal_reuse(&m));
    VR_EXPECT(m.indices[0] == 0 && m.texcoords != NULL, "row-major start");
    int down = 0;
    for (uint32_t t = 0; t < m.index_count / 3; ++t) {
        float n[3];
        face_normal(n, &m, t);
        down += n[1] <= 0;
    }
    VR_EXPECT_EQ(down, 0);
    vr_mesh_free(&m);

    /* foliage: disconnected quads, 4 vertices per 2 triangles: ideal reuse exactly 1/3 */
    VR_EXPECT(vr_mesh_load(&m, "foliage:240k") == VR_OK, "%s", vr_last_error());
    VR_EXPECT_EQ(vr_mesh_count(&c, &m), VR_OK);
    VR_EXPECT_EQ(c.triangles, 240000);
    VR_EXPECT_EQ(c.vertices, 480000);
    VR_EXPECT_EQ(c.referenced_vertices, 480000);
    VR_EXPECT(fabs(ideal_reuse(&m) - 1.0 / 3.0) < 1e-6, "foliage reuse %f", ideal_reuse(&m));
    vr_mesh a, b;
    VR_EXPECT(vr_generate_foliage(&a, 1000, 7) == VR_OK && vr_generate_foliage(&b, 1000, 7) == VR_OK, "gen");
    VR_EXPECT(!memcmp(a.positions, b.positions, (size_t)a.vertex_count * 12), "same seed, different foliage");
    vr_mesh_free(&b);
    VR_EXPECT(vr_generate_foliage(&b, 1000, 8) == VR_OK, "gen");
    VR_EXPECT(memcmp(a.positions, b.positions, (size_t)a.vertex_count * 12) != 0, "seed ignored");
    vr_mesh_free(&a);
    vr_mesh_free(&b);
    vr_mesh_free(&m);
    return VR_TEST_RESULT();
}

/* ---- subdivision ------------------------------------------------------------------------------ */

VR_TEST(test_subdivide, "scenes/subdivide")
{
    /* a tetrahedron, outward: V - E + F = 2 holds at every level (V = 2 + F/2) */
    float pos[12] = {1, 1, 1, -1, -1, 1, -1, 1, -1, 1, -1, -1};
    float nrm[12];
    uint32_t idx[12] = {0, 1, 2, 0, 3, 1, 0, 2, 3, 1, 3, 2};
    for (int i = 0; i < 12; ++i)
        nrm[i] = pos[i] / sqrtf(3);
    vr_mesh tet = {4, pos, nrm, NULL, 12, idx};
    VR_EXPECT_EQ(open_edges(&tet), 0);
    static const struct {
        uint64_t min, tris;
    } levels[] = {{1, 4}, {4, 4}, {5, 16}, {16, 16}, {17, 64}, {200, 256}, {1000, 1024}};
    for (size_t i = 0; i < sizeof levels / sizeof levels[0]; ++i) {
        vr_mesh s;
        VR_EXPECT(vr_mesh_subdivide(&s, &tet, levels[i].min) == VR_OK, "%s", vr_last_error());
        VR_EXPECT_EQ(s.index_count / 3, levels[i].tris);
        VR_EXPECT_EQ(s.vertex_count, 2 + levels[i].tris / 2);
        VR_EXPECT_EQ(open_edges(&s), 0);
        vr_mesh_free(&s);
    }
    /* one level of a single triangle, exactly: children keep the parent's winding (no input
     * normals: the result gets computed ones) */
    uint32_t one[3] = {0, 1, 2};
    vr_mesh tri = {4, pos, NULL, NULL, 3, one};
    vr_mesh s;
    VR_EXPECT(vr_mesh_subdivide(&s, &tri, 4) == VR_OK, "%s", vr_last_error());
    /* midpoints in first-seen order: 01 -> 4, 12 -> 5, 20 -> 6 */
    static const uint32_t want[] = {0, 4, 6, 4, 1, 5, 6, 5, 2, 4, 5, 6};
    expect_indices(&s, want, 12, __LINE__);
    VR_EXPECT(s.positions[3 * 4] == 0 && s.positions[3 * 4 + 2] == 1, "midpoint of 0 and 1");
    VR_EXPECT(s.normals != NULL, "no normals computed");
    vr_mesh_free(&s);

    /* the sphere stays closed, texcoords survive (terrain), counts multiply by 4 per level */
    vr_mesh sphere, sub;
    VR_EXPECT(vr_generate_sphere(&sphere, 2000) == VR_OK, "sphere");
    VR_EXPECT(vr_mesh_subdivide(&sub, &sphere, (uint64_t)sphere.index_count / 3 * 16) == VR_OK, "%s",
              vr_last_error());
    VR_EXPECT_EQ(sub.index_count, sphere.index_count * 16);
    VR_EXPECT_EQ(open_edges(&sub), 0);
    VR_EXPECT(fabs(ideal_reuse(&sub) - 0.8333) < 0.001, "reuse %f", ideal_reuse(&sub));
    vr_mesh_free(&sub);
    vr_mesh_free(&sphere);
    vr_mesh terrain;
    VR_EXPECT(vr_generate_terrain(&terrain, 200) == VR_OK, "terrain");
    VR_EXPECT(vr_mesh_subdivide(&sub, &terrain, 800) == VR_OK, "%s", vr_last_error());
    VR_EXPECT(sub.texcoords != NULL, "texcoords dropped");
    vr_mesh_free(&sub);
    vr_mesh_free(&terrain);
    return VR_TEST_RESULT();
}

/* Larger: 1M triangles must be quick (bunny@7M, 17.8M triangles, loads in ~1 s on the 2-core
 * dev box; not run here to keep the group fast). */
VR_TEST(test_subdivide_large, "scenes/subdivide_large")
{
    vr_mesh m;
    double t0 = vr_now_ms();
    VR_EXPECT(vr_mesh_load(&m, "sphere:82k@1M") == VR_OK, "%s", vr_last_error());
    double ms = vr_now_ms() - t0;
    VR_EXPECT_EQ(m.index_count / 3, 84500 * 16); /* sphere:82k = frequency 65: 20 * 65^2 */
    VR_EXPECT(ms < 1000, "sphere:82k@1M took %.0f ms", ms);
    vr_mesh_free(&m);
    return VR_TEST_RESULT();
}

/* ---- reordering ------------------------------------------------------------------------------ */

VR_TEST(test_reorder, "scenes/reorder")
{
    vr_mesh base;
    VR_EXPECT(vr_generate_sphere(&base, 20000) == VR_OK, "sphere");
    uint32_t *want = triangle_multiset(&base);
    double acmr[VR_ORDER_COUNT];
    for (int o = 0; o < VR_ORDER_COUNT; ++o) {
        vr_mesh m;
        VR_EXPECT(vr_mesh_load(&m, "sphere:20000") == VR_OK, "%s", vr_last_error());
        VR_EXPECT(vr_mesh_reorder(&m, (vr_order)o, 42) == VR_OK, "%s", vr_last_error());
        uint32_t *got = triangle_multiset(&m);
        VR_EXPECT(m.index_count == base.index_count &&
                      !memcmp(got, want, base.index_count * sizeof *got),
                  "order %s changed the triangle multiset", vr_order_name((vr_order)o));
        acmr[o] = acmr_fifo(&m, 32);
        free(got);
        vr_mesh_free(&m);
    }
    /* the orders do what they are for (sphere rows are longer than the cache, so file order
     * misses every vertex twice: ACMR ~1.0; optimized ~0.6-0.75; random ~3) */
    VR_EXPECT(acmr[VR_ORDER_FORSYTH] < acmr[VR_ORDER_FILE] * 1.01, "forsyth %f file %f", acmr[VR_ORDER_FORSYTH],
              acmr[VR_ORDER_FILE]);
    VR_EXPECT(acmr[VR_ORDER_FORSYTH] < 0.8, "forsyth acmr %f", acmr[VR_ORDER_FORSYTH]);
    VR_EXPECT(acmr[VR_ORDER_TIPSIFY] < 0.8, "tipsify acmr %f", acmr[VR_ORDER_TIPSIFY]);
    VR_EXPECT(acmr[VR_ORDER_RANDOM] > 2.0, "random acmr %f", acmr[VR_ORDER_RANDOM]);
    /* random is a pure function of the seed */
    vr_mesh a, b;
    VR_EXPECT(vr_generate_sphere(&a, 5000) == VR_OK && vr_generate_sphere(&b, 5000) == VR_OK, "sphere");
    vr_mesh_reorder(&a, VR_ORDER_RANDOM, 7);
    vr_mesh_reorder(&b, VR_ORDER_RANDOM, 7);
    VR_EXPECT(!memcmp(a.indices, b.indices, a.index_count * sizeof *a.indices), "same seed, different order");
    vr_mesh_reorder(&b, VR_ORDER_FILE, 0);
    VR_EXPECT(!memcmp(a.indices, b.indices, a.index_count * sizeof *a.indices), "file order changed it");
    vr_mesh_free(&b);
    vr_generate_sphere(&b, 5000);
    vr_mesh_reorder(&b, VR_ORDER_RANDOM, 8);
    VR_EXPECT(memcmp(a.indices, b.indices, a.index_count * sizeof *a.indices) != 0, "seed ignored");
    /* pinned: the first shuffled triangles of seed 7, so the order is the same on every platform */
    static const uint32_t pinned[6] = {1039, 1040, 1029, 444, 1839, 445};
    for (int i = 0; i < 6; ++i)
        VR_EXPECT(a.indices[i] == pinned[i], "seed 7 index %d = %u, want %u", i, a.indices[i], pinned[i]);
    vr_mesh_free(&a);
    vr_mesh_free(&b);
    vr_mesh_free(&base);
    free(want);
    return VR_TEST_RESULT();
}

VR_TEST(test_reorder_fetch, "scenes/reorder_fetch")
{
    /* 7 vertices, 1 and 4 unreferenced; first use order is 5, 0, 3, 6, 2 */
    float pos[21];
    for (int i = 0; i < 21; ++i)
        pos[i] = (float)i;
    uint32_t idx[9] = {5, 0, 3, 3, 0, 6, 2, 6, 0};
    vr_mesh m = {7, malloc(sizeof pos), NULL, NULL, 9, malloc(sizeof idx)};
    memcpy(m.positions, pos, sizeof pos);
    memcpy(m.indices, idx, sizeof idx);
    uint32_t *remap = NULL;
    VR_EXPECT(vr_mesh_reorder_fetch(&m, &remap) == VR_OK, "%s", vr_last_error());
    VR_EXPECT_EQ(m.vertex_count, 5);
    static const uint32_t want_remap[7] = {1, ~0u, 4, 2, ~0u, 0, 3};
    static const uint32_t want_idx[9] = {0, 1, 2, 2, 1, 3, 4, 3, 1};
    for (int i = 0; i < 7; ++i)
        VR_EXPECT(remap[i] == want_remap[i], "remap[%d] = %u, want %u", i, remap[i], want_remap[i]);
    expect_indices(&m, want_idx, 9, __LINE__);
    /* the data moved with its vertex */
    for (int i = 0; i < 7; ++i)
        if (remap[i] != ~0u)
            VR_EXPECT(m.positions[3 * remap[i]] == pos[3 * i], "vertex %d moved without its data", i);
    free(remap);
    vr_mesh_free(&m);

    /* a bigger mesh: the remap is a permutation of the referenced vertices */
    VR_EXPECT(vr_mesh_load(&m, "sphere:20000") == VR_OK, "%s", vr_last_error());
    vr_mesh_reorder(&m, VR_ORDER_RANDOM, 3);
    uint32_t n = m.vertex_count;
    VR_EXPECT(vr_mesh_reorder_fetch(&m, &remap) == VR_OK, "%s", vr_last_error());
    VR_EXPECT_EQ(m.vertex_count, n);
    uint8_t *hit = calloc(n, 1);
    int dup = 0;
    for (uint32_t i = 0; i < n; ++i)
        if (remap[i] < n)
            dup += hit[remap[i]]++ != 0;
    uint32_t covered = 0;
    for (uint32_t i = 0; i < n; ++i)
        covered += hit[i];
    VR_EXPECT(dup == 0 && covered == n, "not a permutation: %d duplicates, %u of %u covered", dup, covered, n);
    /* first-use order: every index is at most one more than the largest seen before it */
    uint32_t top = 0;
    int late = 0;
    for (uint32_t i = 0; i < m.index_count; ++i) {
        late += m.indices[i] > top;
        if (m.indices[i] == top)
            ++top;
    }
    VR_EXPECT_EQ(late, 0);
    free(hit);
    free(remap);
    vr_mesh_free(&m);
    return VR_TEST_RESULT();
}

/* ---- counting and flattening ----------------------------------------------------------------- */

VR_TEST(test_count, "scenes/count")
{
    float pos[15] = {0};
    uint32_t idx[9] = {0, 1, 2, 2, 2, 3, 0, 3, 1};
    vr_mesh m = {5, pos, NULL, NULL, 9, idx};
    vr_mesh_counts c;
    VR_EXPECT_EQ(vr_mesh_count(&c, &m), VR_OK);
    VR_EXPECT_EQ(c.vertices, 5);
    VR_EXPECT_EQ(c.referenced_vertices, 4);
    VR_EXPECT_EQ(c.triangles, 3);
    VR_EXPECT_EQ(c.degenerate_triangles, 1);
    return VR_TEST_RESULT();
}

static void make_draw(vr_draw *d, const float *t)
{
    static const float pos[9] = {0, 0, 0, 1, 0, 0, 0, 1, 0};
    static const float nrm[9] = {0, 0, 1, 0, 0, 1, 0, 0, 1};
    static const uint32_t idx[3] = {0, 1, 2};
    memset(d, 0, sizeof *d);
    d->mesh.vertex_count = 3;
    d->mesh.index_count = 3;
    d->mesh.positions = malloc(sizeof pos);
    d->mesh.normals = malloc(sizeof nrm);
    d->mesh.indices = malloc(sizeof idx);
    memcpy(d->mesh.positions, pos, sizeof pos);
    memcpy(d->mesh.normals, nrm, sizeof nrm);
    memcpy(d->mesh.indices, idx, sizeof idx);
    memcpy(d->transform, t, sizeof d->transform);
}

VR_TEST(test_flatten, "scenes/flatten")
{
    /* draw 0: identity; draw 1: scale x by 2, translate by (10, 0, 0) (column-major);
     * draw 2: mirror z and shear x by y (normals need the inverse transpose), which flips
     * the winding, so the flattened triangle swaps two corners to keep facing the front */
    static const float id[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
    static const float st[16] = {2, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 10, 0, 0, 1};
    static const float mirror[16] = {1, 0, 0, 0, 1, 1, 0, 0, 0, 0, -1, 0, 0, 0, 0, 1};
    vr_scene sc;
    memset(&sc, 0, sizeof sc);
    sc.draws = calloc(3, sizeof *sc.draws);
    sc.draw_count = 3;
    make_draw(&sc.draws[0], id);
    make_draw(&sc.draws[1], st);
    make_draw(&sc.draws[2], mirror);
    sc.draws[2].mesh.normals[0] = 1, sc.draws[2].mesh.normals[2] = 0; /* (1,0,0) on vertex 0 */
    vr_mesh m;
    VR_EXPECT(vr_scene_flatten(&m, &sc) == VR_OK, "%s", vr_last_error());
    VR_EXPECT_EQ(m.vertex_count, 9);
    static const uint32_t want[] = {0, 1, 2, 3, 4, 5, 6, 8, 7};
    expect_indices(&m, want, 9, __LINE__);
    VR_EXPECT(m.positions[3 * 4] == 12.0f, "x of draw 1 vertex 1: %f", m.positions[3 * 4]);
    VR_EXPECT(m.positions[3 * 8] == 1.0f && m.positions[3 * 8 + 1] == 1.0f, "sheared vertex");
    /* normal (1,0,0) under shear x += y: inverse transpose maps it to (1,-1,0)/sqrt2 */
    const float *n = m.normals + 3 * 6;
    VR_EXPECT(fabsf(n[0] - 0.70710678f) < 1e-5f && fabsf(n[1] + 0.70710678f) < 1e-5f && fabsf(n[2]) < 1e-6f,
              "normal (%f %f %f)", n[0], n[1], n[2]);
    /* the mirrored triangle still faces the way its (mirrored) normal points: +z -> -z */
    float fn[3];
    face_normal(fn, &m, 2);
    VR_EXPECT(fn[2] < 0 && m.normals[3 * 7 + 2] < 0, "mirrored winding %f normal %f", fn[2], m.normals[3 * 7 + 2]);
    vr_mesh_free(&m);
    vr_scene_free(&sc);
    return VR_TEST_RESULT();
}
