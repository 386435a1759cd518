/* test_dice.c - the Dicer (raster/dice.h) against counts that follow from the geometry: an
 * axis-aligned box gives exactly its two z faces (a face on a slab boundary in both slabs), a
 * plane z = x one cell per column at depth x, a sphere's points lie within a voxel of it and
 * every inner column has its two crossings; the teapot's points stay in the volume, in order,
 * the same every run; bad volumes and meshes are refused. "gpu/dice-..." demand the GPU's
 * points equal the CPU twin's element by element (teapot at 64^3, a sphere, the box; the box
 * also as "gpu-small/" for compute-sanitizer). Try: `vreuse_tests dice/`, `vreuse_tests gpu/dice`.
 */
#include "tests/test.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/stage/geometry.h"
#include "raster/dice.h"
#include "scenes/scene.h"
#include "tests/test_helpers.h"

/* A mesh from literal arrays (malloc'd copies; free with vr_mesh_free); normals +z. */
static int mesh_of(vr_mesh *m, const float *pos, uint32_t vertex_count, const uint32_t *idx,
                   uint32_t index_count)
{
    memset(m, 0, sizeof *m);
    m->vertex_count = vertex_count;
    m->index_count = index_count;
    m->positions = malloc(3 * (size_t)vertex_count * sizeof(float));
    m->normals = malloc(3 * (size_t)vertex_count * sizeof(float));
    m->indices = malloc((size_t)index_count * sizeof(uint32_t));
    if (!m->positions || !m->normals || !m->indices) {
        vr_mesh_free(m);
        return 0;
    }
    memcpy(m->positions, pos, 3 * (size_t)vertex_count * sizeof(float));
    memcpy(m->indices, idx, (size_t)index_count * sizeof(uint32_t));
    for (uint32_t v = 0; v < vertex_count; ++v) {
        m->normals[3 * v] = m->normals[3 * v + 1] = 0;
        m->normals[3 * v + 2] = 1;
    }
    return 1;
}

/* An axis-aligned box of sides (1, 0.5, dz) centred at (3, -2, 7): 12 triangles. */
static int box_mesh(vr_mesh *m, float dz)
{
    const float c[3] = {3, -2, 7}, h[3] = {0.5f, 0.25f, dz / 2};
    float pos[24];
    for (int v = 0; v < 8; ++v)
        for (int a = 0; a < 3; ++a)
            pos[3 * v + a] = c[a] + (v >> a & 1 ? h[a] : -h[a]);
    /* two triangles per face, corners named by bits (x, y, z) */
    static const uint32_t idx[36] = {0, 2, 1, 1, 2, 3, 4, 5, 6, 5, 7, 6,  /* z- z+ */
                                     0, 1, 4, 1, 5, 4, 2, 6, 3, 3, 6, 7,  /* y- y+ */
                                     0, 4, 2, 2, 4, 6, 1, 3, 5, 3, 7, 5}; /* x- x+ */
    return mesh_of(m, pos, 8, idx, 36);
}

/* Compares a result's cells with an expected list (3 per point); prints the first mismatches. */
static void expect_cells(const vr_dice_result *r, const uint32_t *want, uint32_t count,
                         const char *what)
{
    VR_EXPECT(r->count == count, "%s: %u points, expected %u", what, r->count, count);
    int shown = 0;
    for (uint32_t i = 0; i < r->count && i < count; ++i)
        if (memcmp(r->cells + 3 * (size_t)i, want + 3 * (size_t)i, 3 * sizeof *want) != 0) {
            VR_EXPECT(shown >= 5, "%s: point %u is (%u, %u, %u), expected (%u, %u, %u)", what, i,
                      r->cells[3 * i], r->cells[3 * i + 1], r->cells[3 * i + 2], want[3 * i],
                      want[3 * i + 1], want[3 * i + 2]);
            ++shown;
        }
    VR_EXPECT(shown == 0, "%s: %d points differ", what, shown);
}

/* The box at volume 32: x spans every column, y the rows 8..23 (u_y in [0.25, 0.75]); its z
 * faces lie in the slabs `k` (two or four of them), cells row-major within each. */
static uint32_t *box_expected(uint32_t *count, const uint32_t *k, int slabs)
{
    uint32_t *w = malloc(3 * 32 * 16 * (size_t)slabs * sizeof *w), n = 0;
    for (int s = 0; w && s < slabs; ++s)
        for (uint32_t y = 8; y < 24; ++y)
            for (uint32_t x = 0; x < 32; ++x, ++n) {
                w[3 * n] = x;
                w[3 * n + 1] = y;
                w[3 * n + 2] = k[s];
            }
    *count = n;
    return w;
}

/* One box case on the CPU (and with `gpu`, the GPU path equal to it). */
static void box_case(float dz, const uint32_t *k, int slabs, int gpu)
{
    vr_mesh m;
    VR_EXPECT(box_mesh(&m, dz), "out of memory");
    uint32_t count = 0, *want = box_expected(&count, k, slabs);
    vr_dice_result r;
    VR_EXPECT_EQ(vr_dice(&r, &m, 32, gpu), VR_OK);
    if (want)
        expect_cells(&r, want, count, gpu ? "gpu box" : "box");
    VR_EXPECT_EQ(r.gpu, gpu);
    if (r.count) { /* the first point's position: its cell centre mapped back */
        float p[3];
        vr_dice_position(p, &r, 0);
        const double u[3] = {0.5 / 32, 8.5 / 32, (k[0] + 0.5) / 32};
        const double c[3] = {3, -2, 7};
        for (int a = 0; a < 3; ++a)
            VR_EXPECT(fabs(p[a] - (u[a] - 0.5 + c[a])) < 1e-5, "axis %d: %g", a, p[a]);
    }
    vr_dice_result_free(&r);
    free(want);
    vr_mesh_free(&m);
}

VR_TEST(test_dice_box, "dice/box")
{
    /* z faces at u_z = 0.35 and 0.65: voxel depths 11.2 and 20.8, inside slabs 11 and 20 */
    box_case(0.3f, (const uint32_t[]){11, 20}, 2, 0);
    /* z faces at u_z = 0.375 and 0.625: depths 12 and 20 exactly, on slab boundaries, so each
     * lies in both widened slabs (11 and 12, 19 and 20); the sides add nothing (zero area) */
    box_case(0.25f, (const uint32_t[]){11, 12, 19, 20}, 4, 0);
    return VR_TEST_RESULT();
}

/* The plane z = x over the unit square: column (x, y) is crossed at depth x + 1/2, in slab x. */
VR_TEST(test_dice_slope, "dice/slope")
{
    static const float pos[12] = {0, 0, 0, 1, 0, 1, 1, 1, 1, 0, 1, 0};
    static const uint32_t idx[6] = {0, 1, 2, 0, 2, 3};
    vr_mesh m;
    VR_EXPECT(mesh_of(&m, pos, 4, idx, 6), "out of memory");
    const uint32_t v = 16;
    uint32_t want[3 * 16 * 16], n = 0;
    for (uint32_t k = 0; k < v; ++k)
        for (uint32_t y = 0; y < v; ++y, ++n) {
            want[3 * n] = k;
            want[3 * n + 1] = y;
            want[3 * n + 2] = k;
        }
    vr_dice_result r;
    VR_EXPECT_EQ(vr_dice(&r, &m, v, 0), VR_OK);
    expect_cells(&r, want, n, "slope");
    vr_dice_result_free(&r);
    vr_mesh_free(&m);
    return VR_TEST_RESULT();
}

/* The generated sphere (radius 1 about the origin, so u = p / 2 + 1/2, radius 1/2): every point
 * within a voxel of the sphere; every column well inside the outline crossed twice. */
VR_TEST(test_dice_sphere, "dice/sphere")
{
    vr_mesh m;
    if (!vr_test_load(&m, "sphere:20k"))
        return VR_TEST_FAIL;
    const uint32_t v = 48;
    vr_dice_result r;
    VR_EXPECT_EQ(vr_dice(&r, &m, v, 0), VR_OK);
    uint32_t *per_column = calloc((size_t)v * v, sizeof *per_column);
    double worst = 0;
    for (uint32_t i = 0; per_column && i < r.count; ++i) {
        const uint32_t *c = r.cells + 3 * (size_t)i;
        double d2 = 0;
        for (int a = 0; a < 3; ++a)
            d2 += ((c[a] + 0.5) / v - 0.5) * ((c[a] + 0.5) / v - 0.5);
        worst = fmax(worst, fabs(sqrt(d2) - 0.5));
        ++per_column[c[1] * v + c[0]];
    }
    VR_EXPECT(worst <= 1.0 / v, "a point %.3g voxels off the sphere", worst * v);
    uint32_t inner = 0;
    for (uint32_t y = 0; per_column && y < v; ++y)
        for (uint32_t x = 0; x < v; ++x) {
            const double dx = (x + 0.5) / v - 0.5, dy = (y + 0.5) / v - 0.5;
            const double rad = sqrt(dx * dx + dy * dy);
            if (rad < 0.45) {
                ++inner;
                VR_EXPECT(per_column[y * v + x] >= 2, "column (%u, %u): %u points", x, y,
                          per_column[y * v + x]);
            }
            if (rad > 0.5 + 1.0 / v)
                VR_EXPECT(per_column[y * v + x] == 0, "column (%u, %u) outside: %u points", x,
                          y, per_column[y * v + x]);
        }
    VR_EXPECT(inner > 1000, "%u inner columns", inner);
    free(per_column);
    vr_dice_result_free(&r);
    vr_mesh_free(&m);
    return VR_TEST_RESULT();
}

/* The shared teapot: VR_TEST_PASS with m loaded, VR_TEST_SKIP without the scenes, else FAIL. */
static int load_teapot(vr_mesh *m)
{
    char path[4096];
    if (!vr_test_scene_path(path, sizeof path, "teapot.obj"))
        return VR_TEST_SKIP;
    return vr_test_load(m, path) ? VR_TEST_PASS : VR_TEST_FAIL;
}

/* The teapot: cells inside the volume, slices in order and cells increasing within each, the
 * per-slice counts summing to the total, the same list on a second run. */
VR_TEST(test_dice_teapot, "dice/teapot")
{
    vr_mesh m;
    const int loaded = load_teapot(&m);
    if (loaded != VR_TEST_PASS)
        return loaded;
    const uint32_t v = 32;
    vr_dice_result a, b;
    VR_EXPECT_EQ(vr_dice(&a, &m, v, 0), VR_OK);
    VR_EXPECT_EQ(vr_dice(&b, &m, v, 0), VR_OK);
    VR_EXPECT(a.count > 500, "%u points", a.count);
    VR_EXPECT_EQ(a.count, b.count);
    VR_EXPECT(a.count == b.count && !memcmp(a.cells, b.cells, 3 * (size_t)a.count * 4),
              "two runs differ");
    uint64_t sum = 0, prev = 0;
    for (uint32_t k = 0; k < v; ++k)
        sum += a.slice_points[k];
    VR_EXPECT_EQ(sum, a.count);
    for (uint32_t i = 0; i < a.count; ++i) {
        const uint32_t *c = a.cells + 3 * (size_t)i;
        VR_EXPECT(c[0] < v && c[1] < v && c[2] < v, "point %u outside", i);
        const uint64_t key = ((uint64_t)c[2] * v + c[1]) * v + c[0];
        VR_EXPECT(i == 0 || key > prev, "point %u out of order", i);
        prev = key;
    }
    vr_dice_result_free(&a);
    vr_dice_result_free(&b);
    vr_mesh_free(&m);
    return VR_TEST_RESULT();
}

VR_TEST(test_dice_errors, "dice/errors")
{
    vr_mesh m;
    VR_EXPECT(box_mesh(&m, 0.3f), "out of memory");
    vr_dice_result r;
    VR_EXPECT_EQ(vr_dice(&r, &m, 7, 0), VR_ERR_ARG);
    VR_EXPECT(strstr(vr_last_error(), "volume 7 is outside 8..2048") != NULL, "%s",
              vr_last_error());
    vr_dice_result_free(&r);
    VR_EXPECT_EQ(vr_dice(&r, &m, 2049, 0), VR_ERR_ARG);
    vr_dice_result_free(&r);
    if (!vr_gpu_available()) {
        VR_EXPECT_EQ(vr_dice(&r, &m, 16, 1), VR_ERR_NO_DEVICE);
        vr_dice_result_free(&r);
    }
    /* every vertex at one point: nothing to slice */
    for (uint32_t i = 0; i < 3 * m.vertex_count; ++i)
        m.positions[i] = 1.5f;
    VR_EXPECT_EQ(vr_dice(&r, &m, 16, 0), VR_ERR_FORMAT);
    VR_EXPECT(strstr(vr_last_error(), "one point") != NULL, "%s", vr_last_error());
    vr_dice_result_free(&r);
    m.positions[4] = NAN;
    VR_EXPECT_EQ(vr_dice(&r, &m, 16, 0), VR_ERR_FORMAT);
    VR_EXPECT(strstr(vr_last_error(), "non-finite") != NULL, "%s", vr_last_error());
    vr_dice_result_free(&r);
    m.indices[5] = 99; /* out of range: the mesh check refuses it */
    VR_EXPECT_EQ(vr_dice(&r, &m, 16, 0), VR_ERR_FORMAT);
    vr_dice_result_free(&r);
    vr_mesh_free(&m);
    return VR_TEST_RESULT();
}

/* ---- GPU == CPU twin -------------------------------------------------------------------- */

static void gpu_equals_cpu(const vr_mesh *m, uint32_t v, const char *what)
{
    vr_dice_result cpu, gpu;
    VR_EXPECT_EQ(vr_dice(&cpu, m, v, 0), VR_OK);
    const vr_status s = vr_dice(&gpu, m, v, 1);
    VR_EXPECT(s == VR_OK, "%s: %s", what, vr_last_error());
    if (s == VR_OK) {
        expect_cells(&gpu, cpu.cells, cpu.count, what);
        VR_EXPECT(!memcmp(gpu.slice_points, cpu.slice_points, v * sizeof *cpu.slice_points),
                  "%s: per-slice counts differ", what);
    }
    printf("  %s at %u^3: %u points (CPU %u)\n", what, v, gpu.count, cpu.count);
    vr_dice_result_free(&cpu);
    vr_dice_result_free(&gpu);
}

VR_TEST(test_gpu_dice_teapot, "gpu/dice-teapot")
{
    if (vr_test_no_device())
        return VR_TEST_SKIP;
    vr_mesh m;
    const int loaded = load_teapot(&m);
    if (loaded != VR_TEST_PASS)
        return loaded;
    gpu_equals_cpu(&m, 64, "teapot");
    vr_mesh_free(&m);
    return VR_TEST_RESULT();
}

VR_TEST(test_gpu_dice_sphere, "gpu/dice-sphere")
{
    if (vr_test_no_device())
        return VR_TEST_SKIP;
    vr_mesh m;
    if (!vr_test_load(&m, "sphere:20k"))
        return VR_TEST_FAIL;
    gpu_equals_cpu(&m, 64, "sphere");
    vr_mesh_free(&m);
    return VR_TEST_RESULT();
}

/* Small enough for compute-sanitizer: the box at 32^3 on both sides, against the exact list. */
VR_TEST(test_gpu_dice_box, "gpu/dice-box", "gpu-small/dice-box")
{
    if (vr_test_no_device())
        return VR_TEST_SKIP;
    box_case(0.25f, (const uint32_t[]){11, 12, 19, 20}, 4, 1);
    vr_mesh m;
    VR_EXPECT(box_mesh(&m, 0.3f), "out of memory");
    gpu_equals_cpu(&m, 8, "box");
    vr_mesh_free(&m);
    return VR_TEST_RESULT();
}
