/* test_raster.c - the CPU rasterizer (raster/raster_ref.c) against analytic expectations:
 * shared edges and fans covered exactly once, the top-left rule on pixel centres, near-plane
 * clipping of a floor that reaches behind the eye, depth order with ties to the smaller slot,
 * watertight tessellated grids (also through near and guard-band clipping), the resolve's
 * colours, PNG round trips, and a 1080p bunny frame for speed. The cases are exported for
 * tests/test_raster_gpu.cu, which demands bit-identical GPU results.
 * Try: `vreuse_tests raster/`.
 */
#include "tests/test.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "pipeline/stage/geometry.h"
#include "pipeline/vr_mem.h"
#include "raster/raster.h"
#include "scenes/scene.h"
#include "tests/test_helpers.h"

/* ---- queue helpers (shared with test_raster_gpu.cu) --------------------------------------- */

void vr_test_raster_queue_free(vr_queue *q)
{
    void *const bufs[] = {q->clip, q->normal, q->vertex, q->tri_id};
    vr_free_all(bufs, VR_COUNT_OF(bufs));
    memset(q, 0, sizeof *q);
}

static int queue_alloc(vr_queue *q, uint32_t capacity)
{
    memset(q, 0, sizeof *q);
    q->capacity = capacity;
    q->clip = calloc((size_t)capacity * 12 + 1, sizeof(float));
    q->normal = calloc((size_t)capacity * 12 + 1, sizeof(float));
    q->vertex = calloc((size_t)capacity * 3 + 1, sizeof(uint32_t));
    q->tri_id = calloc((size_t)capacity + 1, sizeof(uint32_t));
    if (!q->clip || !q->normal || !q->vertex || !q->tri_id) {
        vr_test_raster_queue_free(q);
        return -1;
    }
    return 0;
}

/* Slot `slot` gets three clip-space corners (12 floats), normals facing the viewer, vertex ids
 * given (or 3 * slot + k when ids is NULL) and triangle id = slot. */
static void queue_set(vr_queue *q, uint32_t slot, const float clip[12], const uint32_t *ids)
{
    memcpy(q->clip + 12 * (size_t)slot, clip, 12 * sizeof(float));
    for (int k = 0; k < 3; ++k) {
        float *n = q->normal + 12 * (size_t)slot + 4 * k;
        n[0] = 0, n[1] = 0, n[2] = 1, n[3] = 0;
        q->vertex[3 * (size_t)slot + k] = ids ? ids[k] : 3 * slot + (uint32_t)k;
    }
    q->tri_id[slot] = slot;
}

/* A triangle given in pixel coordinates (y down) at NDC depth z, w = 1. With power-of-two
 * sizes and coordinates on 1/256 pixel the snapped fixed-point vertices are exact. */
static void queue_screen(vr_queue *q, uint32_t slot, uint32_t w, uint32_t h, const double px[6],
                         float z)
{
    float c[12];
    for (int k = 0; k < 3; ++k) {
        c[4 * k + 0] = (float)(px[2 * k] / w * 2.0 - 1.0);
        c[4 * k + 1] = (float)(1.0 - px[2 * k + 1] / h * 2.0);
        c[4 * k + 2] = z;
        c[4 * k + 3] = 1.0f;
    }
    queue_set(q, slot, c, NULL);
}

static uint64_t g_rng;
static double rnd(void) /* [0, 1) */
{
    g_rng = g_rng * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(g_rng >> 11) * (1.0 / 9007199254740992.0);
}

/* The floor y = -1 of eye space under a 90-degree GL perspective (n = 1, f = 1000), from
 * z = +10 (behind the eye) to z = -900, x in [-1000, 1000], as an nx x nz grid whose interior
 * vertices are jittered within the plane. */
#define FLOOR_N 1.0
#define FLOOR_F 1000.0
static void floor_clip(float c[4], double x, double z)
{
    const double a = (FLOOR_F + FLOOR_N) / (FLOOR_N - FLOOR_F), b = 2 * FLOOR_F * FLOOR_N / (FLOOR_N - FLOOR_F);
    c[0] = (float)x;
    c[1] = -1.0f;
    c[2] = (float)(a * z + b);
    c[3] = (float)-z;
}

/* A (cols x rows)-cell grid over [x0, x1] x [y0, y1] in NDC (shared vertices, jittered
 * interior, random diagonals), each vertex with random depth and w; or, with floor != 0, the
 * eye-space floor above. Triangles are written from slot `first`. */
static void queue_grid(vr_queue *q, uint32_t first, int cols, int rows, double x0, double x1,
                       double y0, double y1, int floor)
{
    const int vc = (cols + 1) * (rows + 1);
    float *v = malloc((size_t)vc * 4 * sizeof(float));
    if (!v) {
        VR_EXPECT(v != NULL, "out of memory for a %dx%d grid", cols, rows);
        return;
    }
    for (int j = 0; j <= rows; ++j)
        for (int i = 0; i <= cols; ++i) {
            double fx = (double)i / cols, fy = (double)j / rows;
            if (i > 0 && i < cols)
                fx += (rnd() - 0.5) * 0.8 / cols;
            if (j > 0 && j < rows)
                fy += (rnd() - 0.5) * 0.8 / rows;
            const double x = x0 + (x1 - x0) * fx, y = y0 + (y1 - y0) * fy;
            float *c = v + 4 * (size_t)(j * (cols + 1) + i);
            if (floor) {
                floor_clip(c, x, y);
            } else {
                const double w = 0.5 + 1.5 * rnd(), z = -0.9 + 1.8 * rnd();
                c[0] = (float)(x * w), c[1] = (float)(y * w), c[2] = (float)(z * w), c[3] = (float)w;
            }
        }
    uint32_t slot = first;
    for (int j = 0; j < rows; ++j)
        for (int i = 0; i < cols; ++i) {
            const uint32_t a = (uint32_t)(j * (cols + 1) + i), b = a + 1, c = a + (uint32_t)cols + 1,
                           d = c + 1;
            uint32_t t[2][3];
            if (rnd() < 0.5) {
                uint32_t t0[3] = {a, b, d}, t1[3] = {a, d, c};
                memcpy(t[0], t0, sizeof t0), memcpy(t[1], t1, sizeof t1);
            } else {
                uint32_t t0[3] = {a, b, c}, t1[3] = {b, d, c};
                memcpy(t[0], t0, sizeof t0), memcpy(t[1], t1, sizeof t1);
            }
            for (int k = 0; k < 2; ++k) {
                float clip[12];
                for (int m = 0; m < 3; ++m)
                    memcpy(clip + 4 * m, v + 4 * (size_t)t[k][m], 4 * sizeof(float));
                queue_set(q, slot++, clip, t[k]);
            }
        }
    free(v);
}

/* The small cases, shared with the GPU tests: 0 quad, 1 fill-rule, 2 fan, 3 floor (near
 * clipping), 4 grid (perspective w, full screen), 5 guard (guard-band clipping), 6 random
 * (behind the eye, huge, NaN). Returns VR_ERR_ARG past the last case. `q` is allocated here;
 * free it with vr_test_raster_queue_free. */
vr_status vr_test_raster_case(size_t i, vr_queue *q, uint32_t *tri_count, vr_raster_config *cfg,
                              const char **name)
{
    memset(cfg, 0, sizeof *cfg);
    g_rng = 12345 + i;
    switch (i) {
    case 0: { /* a quad with arbitrary corners split along a diagonal */
        static const double quad[4][2] = {{3.3, 2.7}, {28.1, 5.2}, {25.6, 29.9}, {1.2, 24.4}};
        cfg->width = cfg->height = 32;
        *name = "quad";
        if (queue_alloc(q, 2))
            return VR_ERR_OOM;
        const double t0[6] = {quad[0][0], quad[0][1], quad[1][0], quad[1][1], quad[2][0], quad[2][1]};
        const double t1[6] = {quad[0][0], quad[0][1], quad[2][0], quad[2][1], quad[3][0], quad[3][1]};
        queue_screen(q, 0, 32, 32, t0, 0.0f);
        queue_screen(q, 1, 32, 32, t1, 0.0f);
        *tri_count = 2;
        return VR_OK;
    }
    case 1: { /* edges and vertices exactly on pixel centres, both windings */
        static const double tris[4][6] = {
            {2.5, 2.5, 12.5, 2.5, 2.5, 12.5},     /* top + left edge, hypotenuse bottom-right */
            {12.5, 12.5, 2.5, 12.5, 12.5, 2.5},   /* its complement in the square */
            {16.5, 4.5, 22.5, 4.5, 19.5, 10.5},   /* flat top */
            {19.5, 16.5, 16.5, 22.5, 22.5, 22.5}, /* flat bottom */
        };
        cfg->width = cfg->height = 32;
        *name = "fill-rule";
        if (queue_alloc(q, 4))
            return VR_ERR_OOM;
        for (uint32_t t = 0; t < 4; ++t)
            queue_screen(q, t, 32, 32, tris[t], 0.1f * (float)t);
        *tri_count = 4;
        return VR_OK;
    }
    case 2: { /* eight triangles around a vertex on a pixel centre */
        static const double ring[8][2] = {{8.5, 16.5},  {10.5, 10.5}, {16.5, 8.5},  {22.5, 10.5},
                                          {24.5, 16.5}, {22.5, 22.5}, {16.5, 24.5}, {10.5, 22.5}};
        cfg->width = cfg->height = 32;
        *name = "fan";
        if (queue_alloc(q, 8))
            return VR_ERR_OOM;
        for (uint32_t t = 0; t < 8; ++t) {
            const double tri[6] = {16.5, 16.5, ring[t][0], ring[t][1], ring[(t + 1) % 8][0],
                                   ring[(t + 1) % 8][1]};
            queue_screen(q, t, 32, 32, tri, 0.0f);
        }
        *tri_count = 8;
        return VR_OK;
    }
    case 3: { /* a floor quad reaching behind the eye: both near-clipping cases */
        cfg->width = cfg->height = 64;
        *name = "floor";
        if (queue_alloc(q, 2))
            return VR_ERR_OOM;
        float c[4][4];
        floor_clip(c[0], -1000, 10), floor_clip(c[1], 1000, 10), floor_clip(c[2], 1000, -900),
            floor_clip(c[3], -1000, -900);
        float t0[12], t1[12];
        memcpy(t0, c[0], 16), memcpy(t0 + 4, c[1], 16), memcpy(t0 + 8, c[2], 16);
        memcpy(t1, c[0], 16), memcpy(t1 + 4, c[2], 16), memcpy(t1 + 8, c[3], 16);
        queue_set(q, 0, t0, NULL);
        queue_set(q, 1, t1, NULL);
        *tri_count = 2;
        return VR_OK;
    }
    case 4: /* full screen, odd sizes, perspective w per vertex */
        cfg->width = 97;
        cfg->height = 61;
        *name = "grid";
        if (queue_alloc(q, 2 * 9 * 7))
            return VR_ERR_OOM;
        queue_grid(q, 0, 9, 7, -1.0, 1.0, -1.0, 1.0, 0);
        *tri_count = 2 * 9 * 7;
        return VR_OK;
    case 5: /* far beyond the guard band (16384 px): polygon clipping on x and y */
        cfg->width = 97;
        cfg->height = 61;
        *name = "guard";
        if (queue_alloc(q, 2 * 6 * 6))
            return VR_ERR_OOM;
        queue_grid(q, 0, 6, 6, -400.0, 400.0, -700.0, 300.0, 0);
        *tri_count = 2 * 6 * 6;
        return VR_OK;
    case 6: { /* random triangles: behind the eye, crossing every plane, huge, one NaN */
        cfg->width = 256;
        cfg->height = 192;
        *name = "random";
        const uint32_t n = 3000;
        if (queue_alloc(q, n))
            return VR_ERR_OOM;
        for (uint32_t t = 0; t < n; ++t) {
            float c[12];
            const double scale = t % 10 == 0 ? 1e6 : t % 3 == 0 ? 5.0 : 1.5;
            const double cx = (rnd() - 0.5) * 2.4, cy = (rnd() - 0.5) * 2.4;
            for (int k = 0; k < 3; ++k) {
                const double w = t % 7 == 0 ? rnd() * 4 - 1 : 0.2 + rnd() * 3;
                c[4 * k + 0] = (float)((cx + (rnd() - 0.5) * 0.4 * scale) * w);
                c[4 * k + 1] = (float)((cy + (rnd() - 0.5) * 0.4 * scale) * w);
                c[4 * k + 2] = (float)((rnd() * 2.4 - 1.2) * w);
                c[4 * k + 3] = (float)w;
            }
            if (t == 17)
                c[5] = NAN;
            queue_set(q, t, c, NULL);
        }
        cfg->cull_back = 0;
        *tri_count = n;
        return VR_OK;
    }
    default:
        return VR_ERR_ARG;
    }
}

/* Cases for the GPU rasterizer's large-box paths (--big list and hp), shared with
 * test_raster_gpu.cu: 0 full-screen (one triangle covering the viewport), 1 tiles (boxes of
 * exactly one 8 x 4 tile and just past tile boundaries, vertices on pixel centres and between,
 * both windings, some cut by the viewport edge), 2 overlapping (many large triangles over each
 * other at random depths: `large` gives 10,000 at 1920x1080, more than the list's 64Ki entries
 * hold, else 300 at 320x240), 3 no-big (only boxes of 16 pixels or fewer: nothing for either
 * path). Returns VR_ERR_ARG past the last case. */
vr_status vr_test_raster_big_case(size_t i, int large, vr_queue *q, uint32_t *tri_count,
                                  vr_raster_config *cfg, const char **name)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->width = large ? 1920 : 320;
    cfg->height = large ? 1080 : 240;
    const double w = cfg->width, h = cfg->height;
    g_rng = 777 + i;
    switch (i) {
    case 0: {
        *name = "full-screen";
        if (queue_alloc(q, 1))
            return VR_ERR_OOM;
        const double tri[6] = {-0.3, -0.7, 2 * w + 1.1, -0.2, -0.4, 2 * h + 0.9};
        queue_screen(q, 0, cfg->width, cfg->height, tri, 0.25f);
        *tri_count = 1;
        return VR_OK;
    }
    case 1: {
        /* box sizes in pixel centres: one tile, one past it each way, several tiles, thin */
        static const int box[][2] = {{8, 4}, {9, 4}, {8, 5}, {9, 5}, {16, 8}, {17, 9},
                                     {7, 5}, {33, 3}, {3, 13}, {24, 12}};
        static const double offset[] = {0.5, 0.25, 0.75}; /* 0.5: vertices on centres */
        const uint32_t kinds = VR_COUNT_OF(box), n = kinds * 3 * 4 + 4;
        *name = "tiles";
        if (queue_alloc(q, n))
            return VR_ERR_OOM;
        uint32_t t = 0;
        double x = 2, y = 2;
        for (uint32_t k = 0; k < kinds; ++k)
            for (int o = 0; o < 3; ++o) {
                if (x + 40 > w)
                    x = 2, y += 16;
                const double x0 = x + offset[o], y0 = y + offset[o];
                const double x1 = x0 + box[k][0] - 1, y1 = y0 + box[k][1] - 1;
                /* the box's two halves, each diagonal once, both windings */
                const double a[6] = {x0, y0, x1, y0, x0, y1}, b[6] = {x1, y0, x1, y1, x0, y1};
                const double c[6] = {x0, y0, x0, y1, x1, y1}, d[6] = {x0, y0, x1, y1, x1, y0};
                queue_screen(q, t++, cfg->width, cfg->height, a, 0.1f);
                queue_screen(q, t++, cfg->width, cfg->height, b, 0.2f);
                queue_screen(q, t++, cfg->width, cfg->height, c, 0.3f);
                queue_screen(q, t++, cfg->width, cfg->height, d, 0.4f);
                x += 40;
            }
        /* boxes cut by the viewport's four edges */
        const double e[4][6] = {{-5.3, 10.5, 12.5, 10.5, -5.3, 30.5},
                                {w - 9.5, 40.5, w + 7.2, 40.5, w - 9.5, 51.5},
                                {30.5, -6.6, 47.5, -6.6, 30.5, 9.5},
                                {60.5, h - 5.5, 80.5, h - 5.5, 60.5, h + 8.1}};
        for (int k = 0; k < 4; ++k)
            queue_screen(q, t++, cfg->width, cfg->height, e[k], 0.5f);
        *tri_count = t;
        return VR_OK;
    }
    case 2: {
        const uint32_t n = large ? 10000 : 300;
        *name = "overlapping";
        if (queue_alloc(q, n))
            return VR_ERR_OOM;
        for (uint32_t t = 0; t < n; ++t) {
            /* a box of 1/12 to 1/4 of the screen's height around a random centre */
            const double cx = rnd() * w, cy = rnd() * h, r = h * (1.0 / 12 + rnd() / 6);
            double tri[6];
            for (int k = 0; k < 3; ++k) {
                tri[2 * k] = cx + (rnd() - 0.5) * 2 * r;
                tri[2 * k + 1] = cy + (rnd() - 0.5) * 2 * r;
            }
            queue_screen(q, t, cfg->width, cfg->height, tri, (float)(rnd() * 1.8 - 0.9));
        }
        *tri_count = n;
        return VR_OK;
    }
    case 3: {
        const uint32_t n = large ? 20000 : 2000;
        *name = "no-big";
        if (queue_alloc(q, n))
            return VR_ERR_OOM;
        for (uint32_t t = 0; t < n; ++t) {
            const double x = 4 + rnd() * (w - 8), y = 4 + rnd() * (h - 8); /* boxes <= 4 x 4 */
            const double tri[6] = {x, y, x + 3.0 * rnd(), y + 0.5, x + 0.4, y + 3.0 * rnd()};
            queue_screen(q, t, cfg->width, cfg->height, tri, (float)(rnd() - 0.5));
        }
        *tri_count = n;
        return VR_OK;
    }
    default:
        return VR_ERR_ARG;
    }
}

/* ---- checks --------------------------------------------------------------------------------- */

static uint32_t *overdraw(const vr_queue *q, uint32_t n, const vr_raster_config *cfg)
{
    uint32_t *c = malloc((size_t)cfg->width * cfg->height * sizeof *c);
    if (!c)
        return NULL;
    vr_status s = vr_raster_ref_overdraw(c, q, n, cfg);
    VR_EXPECT(s == VR_OK, "overdraw: %s", vr_last_error());
    return c;
}

/* Where a point lies relative to a convex polygon of either winding: 1 strictly inside (every
 * edge more than `eps` away, all on one side), -1 outside, 0 within `eps` of an edge. */
static int polygon_side(const double (*p)[2], int n, double x, double y, double eps)
{
    int pos = 0, neg = 0, near = 0;
    for (int k = 0; k < n; ++k) {
        const double *a = p[k], *b = p[(k + 1) % n];
        const double ex = b[0] - a[0], ey = b[1] - a[1];
        const double d = (ex * (y - a[1]) - ey * (x - a[0])) / sqrt(ex * ex + ey * ey);
        if (fabs(d) <= eps)
            near = 1;
        else if (d > 0)
            ++pos;
        else
            ++neg;
    }
    if (pos && neg)
        return -1;
    return near ? 0 : 1;
}

VR_TEST(test_raster_quad, "raster/quad")
{
    vr_queue q;
    uint32_t n;
    vr_raster_config cfg;
    const char *name;
    VR_EXPECT_EQ(vr_test_raster_case(0, &q, &n, &cfg, &name), VR_OK);
    static const double quad[4][2] = {{3.3, 2.7}, {28.1, 5.2}, {25.6, 29.9}, {1.2, 24.4}};
    uint32_t *c = overdraw(&q, n, &cfg);
    int inside = 0;
    for (uint32_t j = 0; j < cfg.height; ++j)
        for (uint32_t i = 0; i < cfg.width; ++i) {
            const int side = polygon_side(quad, 4, i + 0.5, j + 0.5, 1.0 / 256);
            const uint32_t got = c[j * cfg.width + i];
            VR_EXPECT(got <= 1, "pixel (%u, %u) covered %u times", i, j, got);
            if (side > 0)
                VR_EXPECT(got == 1, "pixel (%u, %u) inside the quad covered %u times", i, j, got);
            if (side < 0)
                VR_EXPECT(got == 0, "pixel (%u, %u) outside the quad covered %u times", i, j, got);
            inside += side > 0;
        }
    VR_EXPECT(inside > 400, "only %d pixel centres inside the quad", inside);
    /* the other diagonal and the other winding cover the same pixels */
    for (int variant = 0; variant < 2; ++variant) {
        vr_queue q2;
        VR_EXPECT_EQ(queue_alloc(&q2, 2), 0);
        const int o = variant ? 1 : 0;
        const double *a = quad[o], *b = quad[o + 1], *d = quad[o + 2], *e = quad[(o + 3) % 4];
        const double t0[6] = {a[0], a[1], d[0], d[1], b[0], b[1]}; /* reversed winding */
        const double t1[6] = {a[0], a[1], e[0], e[1], d[0], d[1]};
        queue_screen(&q2, 0, 32, 32, t0, 0.0f);
        queue_screen(&q2, 1, 32, 32, t1, 0.0f);
        uint32_t *c2 = overdraw(&q2, 2, &cfg);
        for (size_t p = 0; p < (size_t)cfg.width * cfg.height; ++p)
            if (c2[p] != c[p]) {
                VR_EXPECT(c2[p] == c[p], "variant %d: pixel %zu covered %u times, not %u", variant,
                          p, c2[p], c[p]);
                break;
            }
        free(c2);
        vr_test_raster_queue_free(&q2);
    }
    free(c);
    vr_test_raster_queue_free(&q);
    return VR_TEST_RESULT();
}

/* Coverage of one triangle given in pixels, as a bitmap. */
static uint32_t *single(const double tri[6], uint32_t w, uint32_t h, int cull)
{
    vr_queue q;
    if (queue_alloc(&q, 1))
        return NULL;
    queue_screen(&q, 0, w, h, tri, 0.0f);
    vr_raster_config cfg = {w, h, cull, VR_RASTER_BIG_LIST, 0};
    uint32_t *c = overdraw(&q, 1, &cfg);
    vr_test_raster_queue_free(&q);
    return c;
}

VR_TEST(test_raster_fill_rule, "raster/fill-rule")
{
    const uint32_t W = 32, H = 32;
    static const double a[6] = {2.5, 2.5, 12.5, 2.5, 2.5, 12.5};
    static const double a_rev[6] = {2.5, 2.5, 2.5, 12.5, 12.5, 2.5};
    static const double b[6] = {12.5, 12.5, 2.5, 12.5, 12.5, 2.5};
    static const double top[6] = {16.5, 4.5, 22.5, 4.5, 19.5, 10.5};
    static const double bottom[6] = {19.5, 16.5, 16.5, 22.5, 22.5, 22.5};
    uint32_t *ca = single(a, W, H, 0), *cr = single(a_rev, W, H, 0), *cb = single(b, W, H, 0);
    uint32_t *ct = single(top, W, H, 0), *cbot = single(bottom, W, H, 0);
    for (uint32_t j = 0; j < H; ++j)
        for (uint32_t i = 0; i < W; ++i) {
            const size_t p = j * W + i;
            /* a: top edge y = 2.5 and left edge x = 2.5 are in, the hypotenuse x + y = 15
             * (bottom-right) is out: i, j >= 2 and i + j <= 13 */
            const int want_a = i >= 2 && j >= 2 && i + j <= 13;
            VR_EXPECT(ca[p] == (uint32_t)want_a, "triangle a, pixel (%u, %u): %u, want %d", i, j,
                      ca[p], want_a);
            VR_EXPECT(cr[p] == ca[p], "reversed winding differs at (%u, %u)", i, j);
            /* b: bottom y = 12.5 and right x = 12.5 are out, the hypotenuse is its left edge */
            const int want_b = i <= 11 && j <= 11 && i + j >= 14;
            VR_EXPECT(cb[p] == (uint32_t)want_b, "triangle b, pixel (%u, %u): %u, want %d", i, j,
                      cb[p], want_b);
            /* together exactly the square [2.5, 12.5)^2 */
            const int in_square = i >= 2 && i <= 11 && j >= 2 && j <= 11;
            VR_EXPECT(ca[p] + cb[p] == (uint32_t)in_square, "square, pixel (%u, %u): %u", i, j,
                      ca[p] + cb[p]);
            /* flat top: row 4 from the left vertex (top and left: in) to before the right
             * vertex (right edge: out) */
            if (j == 4)
                VR_EXPECT(ct[p] == (i >= 16 && i <= 21), "flat top, pixel (%u, 4): %u", i, ct[p]);
            /* flat bottom: row 22 lies on the bottom edge: out */
            if (j == 22)
                VR_EXPECT(cbot[p] == 0, "flat bottom, pixel (%u, 22): %u", i, cbot[p]);
            if (j == 21)
                VR_EXPECT(cbot[p] == (i >= 17 && i <= 21), "flat bottom, pixel (%u, 21): %u", i,
                          cbot[p]);
        }
    /* back-face culling: a runs clockwise in NDC (y up), so it is a back face; a_rev is the
     * front face and covers the same 55 pixels */
    uint32_t *cf = single(a_rev, W, H, 1), *cbk = single(a, W, H, 1);
    uint32_t front = 0, back = 0;
    for (size_t p = 0; p < (size_t)W * H; ++p)
        front += cf[p], back += cbk[p];
    VR_EXPECT_EQ(front, 55);
    VR_EXPECT_EQ(back, 0);
    free(ca), free(cr), free(cb), free(ct), free(cbot), free(cf), free(cbk);
    return VR_TEST_RESULT();
}

VR_TEST(test_raster_fan, "raster/fan")
{
    vr_queue q;
    uint32_t n;
    vr_raster_config cfg;
    const char *name;
    VR_EXPECT_EQ(vr_test_raster_case(2, &q, &n, &cfg, &name), VR_OK);
    static const double ring[8][2] = {{8.5, 16.5},  {10.5, 10.5}, {16.5, 8.5},  {22.5, 10.5},
                                      {24.5, 16.5}, {22.5, 22.5}, {16.5, 24.5}, {10.5, 22.5}};
    uint32_t *c = overdraw(&q, n, &cfg);
    VR_EXPECT(c[16 * 32 + 16] == 1, "the shared vertex's pixel covered %u times", c[16 * 32 + 16]);
    for (uint32_t j = 0; j < 32; ++j)
        for (uint32_t i = 0; i < 32; ++i) {
            const uint32_t got = c[j * 32 + i];
            const int side = polygon_side(ring, 8, i + 0.5, j + 0.5, 1e-9);
            VR_EXPECT(got <= 1, "pixel (%u, %u) covered %u times", i, j, got);
            if (side > 0)
                VR_EXPECT(got == 1, "pixel (%u, %u) inside the fan: %u", i, j, got);
            if (side < 0)
                VR_EXPECT(got == 0, "pixel (%u, %u) outside the fan: %u", i, j, got);
        }
    free(c);
    vr_test_raster_queue_free(&q);
    return VR_TEST_RESULT();
}

static float word_depth(uint64_t w)
{
    uint32_t bits = (uint32_t)(w >> 32);
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

VR_TEST(test_raster_near_clip, "raster/near-clip")
{
    vr_queue q;
    uint32_t n;
    vr_raster_config cfg;
    const char *name;
    VR_EXPECT_EQ(vr_test_raster_case(3, &q, &n, &cfg, &name), VR_OK);
    const uint32_t W = cfg.width, H = cfg.height;
    uint64_t *vis = malloc((size_t)W * H * sizeof *vis);
    vr_raster_stats st;
    VR_EXPECT_EQ(vr_raster_ref(vis, &q, n, &cfg, &st), VR_OK);
    VR_EXPECT_EQ(st.clipped, 2);
    VR_EXPECT_EQ(st.rejected, 0);
    /* below the horizon (ndc y < -1/900: the floor's far edge) every pixel shows the floor,
     * above it none; the near plane (z = -1) projects onto the bottom edge of the screen */
    const double a = (FLOOR_F + FLOOR_N) / (FLOOR_N - FLOOR_F), b = 2 * FLOOR_F * FLOOR_N / (FLOOR_N - FLOOR_F);
    double max_err = 0;
    for (uint32_t j = 0; j < H; ++j)
        for (uint32_t i = 0; i < W; ++i) {
            const uint64_t w = vis[j * W + i];
            const double ndc_y = 1.0 - (j + 0.5) * 2.0 / H;
            if (ndc_y > -1.0 / 900) {
                VR_EXPECT(w == VR_VIS_EMPTY, "pixel (%u, %u) above the horizon is covered", i, j);
                continue;
            }
            VR_EXPECT(w != VR_VIS_EMPTY, "pixel (%u, %u) on the floor is empty", i, j);
            if (w == VR_VIS_EMPTY)
                continue;
            VR_EXPECT((uint32_t)w < 2, "pixel (%u, %u) holds slot %u", i, j, (uint32_t)w);
            /* floor point: z_eye = 1 / ndc_y; window depth = (-a - b ndc_y) / 2 + 1/2 */
            const double want = 0.5 * (-a - b * ndc_y) + 0.5;
            const double err = fabs(word_depth(w) - want);
            max_err = err > max_err ? err : max_err;
        }
    VR_EXPECT(max_err < 2e-5, "depth differs from the analytic floor by %g", max_err);

    /* entirely behind the eye: rejected, nothing drawn */
    float c[12];
    floor_clip(c, -5, 2), floor_clip(c + 4, 5, 2), floor_clip(c + 8, 0, 0.5);
    queue_set(&q, 0, c, NULL);
    VR_EXPECT_EQ(vr_raster_ref(vis, &q, 1, &cfg, &st), VR_OK);
    VR_EXPECT_EQ(st.rejected, 1);
    VR_EXPECT_EQ(st.fragments, 0);
    free(vis);
    vr_test_raster_queue_free(&q);
    return VR_TEST_RESULT();
}

VR_TEST(test_raster_depth_order, "raster/depth-order")
{
    const uint32_t W = 32, H = 32;
    vr_raster_config cfg = {W, H, 0, VR_RASTER_BIG_LIST, 0};
    static const double t_near[6] = {2.3, 3.1, 27.7, 6.2, 10.4, 29.5};
    static const double t_far[6] = {4.1, 28.3, 15.2, 1.7, 30.6, 25.9};
    vr_queue q;
    VR_EXPECT_EQ(queue_alloc(&q, 2), 0);
    uint64_t *v1 = malloc((size_t)W * H * 8), *v2 = malloc((size_t)W * H * 8);
    uint32_t *c_near = single(t_near, W, H, 0), *c_far = single(t_far, W, H, 0);
    /* slot order near, far and far, near: the nearer triangle wins wherever both cover */
    queue_screen(&q, 0, W, H, t_near, -0.5f);
    queue_screen(&q, 1, W, H, t_far, 0.5f);
    VR_EXPECT_EQ(vr_raster_ref(v1, &q, 2, &cfg, NULL), VR_OK);
    queue_screen(&q, 0, W, H, t_far, 0.5f);
    queue_screen(&q, 1, W, H, t_near, -0.5f);
    VR_EXPECT_EQ(vr_raster_ref(v2, &q, 2, &cfg, NULL), VR_OK);
    int overlap = 0;
    for (size_t p = 0; p < (size_t)W * H; ++p) {
        VR_EXPECT(v1[p] >> 32 == v2[p] >> 32, "pixel %zu: depth depends on the order", p);
        if (c_near[p]) {
            VR_EXPECT((uint32_t)v1[p] == 0 && (uint32_t)v2[p] == 1,
                      "pixel %zu: near triangle lost (slots %u, %u)", p, (uint32_t)v1[p],
                      (uint32_t)v2[p]);
            VR_EXPECT(word_depth(v1[p]) == 0.25f, "pixel %zu: depth %.9g, want 0.25", p,
                      word_depth(v1[p]));
        } else if (c_far[p]) {
            VR_EXPECT((uint32_t)v1[p] == 1 && word_depth(v1[p]) == 0.75f, "pixel %zu: far", p);
        } else {
            VR_EXPECT(v1[p] == VR_VIS_EMPTY, "pixel %zu should be empty", p);
        }
        overlap += c_near[p] && c_far[p];
    }
    VR_EXPECT(overlap > 50, "only %d overlapping pixels", overlap);
    /* equal depth: the smaller slot wins, whichever triangle it holds */
    queue_screen(&q, 0, W, H, t_far, 0.0f);
    queue_screen(&q, 1, W, H, t_near, 0.0f);
    VR_EXPECT_EQ(vr_raster_ref(v1, &q, 2, &cfg, NULL), VR_OK);
    queue_screen(&q, 0, W, H, t_near, 0.0f);
    queue_screen(&q, 1, W, H, t_far, 0.0f);
    VR_EXPECT_EQ(vr_raster_ref(v2, &q, 2, &cfg, NULL), VR_OK);
    for (size_t p = 0; p < (size_t)W * H; ++p)
        if (c_near[p] && c_far[p])
            VR_EXPECT((uint32_t)v1[p] == 0 && (uint32_t)v2[p] == 0, "pixel %zu: tie to slots %u, %u",
                      p, (uint32_t)v1[p], (uint32_t)v2[p]);
    free(v1), free(v2), free(c_near), free(c_far);
    vr_test_raster_queue_free(&q);
    return VR_TEST_RESULT();
}

/* Every pixel exactly once, for grids inside the viewport, through the guard band, and for a
 * tessellated floor through the near plane (every pixel below the horizon exactly once). */
VR_TEST(test_raster_grid, "raster/grid")
{
    for (size_t c = 4; c <= 5; ++c) {
        vr_queue q;
        uint32_t n;
        vr_raster_config cfg;
        const char *name;
        VR_EXPECT_EQ(vr_test_raster_case(c, &q, &n, &cfg, &name), VR_OK);
        uint32_t *cov = overdraw(&q, n, &cfg);
        uint32_t bad = 0;
        for (size_t p = 0; p < (size_t)cfg.width * cfg.height; ++p)
            if (cov[p] != 1 && bad++ < 5)
                VR_EXPECT(cov[p] == 1, "%s: pixel (%zu, %zu) covered %u times", name,
                          p % cfg.width, p / cfg.width, cov[p]);
        VR_EXPECT(bad == 0, "%s: %u pixels not covered exactly once", name, bad);
        vr_raster_stats st;
        uint64_t *vis = malloc((size_t)cfg.width * cfg.height * 8);
        VR_EXPECT_EQ(vr_raster_ref(vis, &q, n, &cfg, &st), VR_OK);
        VR_EXPECT_EQ(st.fragments, (uint64_t)cfg.width * cfg.height);
        if (c == 5)
            VR_EXPECT(st.clipped > 0, "guard: nothing was clipped");
        free(vis);
        free(cov);
        vr_test_raster_queue_free(&q);
    }
    /* tessellated floor through the near plane, several seeds */
    for (int seed = 0; seed < 4; ++seed) {
        vr_queue q;
        const int cols = 12, rows = 9;
        VR_EXPECT_EQ(queue_alloc(&q, 2 * cols * rows), 0);
        g_rng = 99 + seed;
        queue_grid(&q, 0, cols, rows, -1000.0, 1000.0, 10.0, -900.0, 1);
        vr_raster_config cfg = {80, 64, 0, VR_RASTER_BIG_LIST, 0};
        uint32_t *cov = overdraw(&q, 2 * cols * rows, &cfg);
        uint32_t bad = 0;
        for (uint32_t j = 0; j < cfg.height; ++j)
            for (uint32_t i = 0; i < cfg.width; ++i) {
                const uint32_t want = 1.0 - (j + 0.5) * 2.0 / cfg.height < -1.0 / 900;
                if (cov[j * cfg.width + i] != want && bad++ < 5)
                    VR_EXPECT(0, "floor seed %d: pixel (%u, %u) covered %u times, want %u", seed, i,
                              j, cov[j * cfg.width + i], want);
            }
        VR_EXPECT(bad == 0, "floor seed %d: %u pixels wrong", seed, bad);
        free(cov);
        vr_test_raster_queue_free(&q);
    }
    return VR_TEST_RESULT();
}

VR_TEST(test_raster_random, "raster/random")
{
    /* no crash, NaN rejected, queue order does not change the depth image */
    vr_queue q;
    uint32_t n;
    vr_raster_config cfg;
    const char *name;
    VR_EXPECT_EQ(vr_test_raster_case(6, &q, &n, &cfg, &name), VR_OK);
    const size_t pixels = (size_t)cfg.width * cfg.height;
    uint64_t *v1 = malloc(pixels * 8), *v2 = malloc(pixels * 8);
    vr_raster_stats st;
    VR_EXPECT_EQ(vr_raster_ref(v1, &q, n, &cfg, &st), VR_OK);
    VR_EXPECT(st.rejected > 0 && st.clipped > 0 && st.fragments > pixels,
              "rejected %llu clipped %llu fragments %llu", (unsigned long long)st.rejected,
              (unsigned long long)st.clipped, (unsigned long long)st.fragments);
    /* reverse the queue (slot s <-> n-1-s, triangle ids travel along) */
    vr_queue r;
    VR_EXPECT_EQ(queue_alloc(&r, n), 0);
    for (uint32_t s = 0; s < n; ++s) {
        const uint32_t t = n - 1 - s;
        memcpy(r.clip + 12 * (size_t)t, q.clip + 12 * (size_t)s, 48);
        memcpy(r.normal + 12 * (size_t)t, q.normal + 12 * (size_t)s, 48);
        memcpy(r.vertex + 3 * (size_t)t, q.vertex + 3 * (size_t)s, 12);
        r.tri_id[t] = q.tri_id[s];
    }
    VR_EXPECT_EQ(vr_raster_ref(v2, &r, n, &cfg, NULL), VR_OK);
    uint32_t differ = 0;
    for (size_t p = 0; p < pixels; ++p) {
        VR_EXPECT(v1[p] >> 32 == v2[p] >> 32, "pixel %zu: depth %08x vs %08x", p,
                  (uint32_t)(v1[p] >> 32), (uint32_t)(v2[p] >> 32));
        if (v1[p] != VR_VIS_EMPTY && q.tri_id[(uint32_t)v1[p]] != r.tri_id[(uint32_t)v2[p]])
            ++differ; /* only on exact depth ties */
    }
    VR_EXPECT(differ < pixels / 1000 + 1, "%u pixels show another triangle after reversal",
              differ);
    /* argument errors */
    vr_raster_config bad = {0, 10, 0, VR_RASTER_BIG_LIST, 0};
    VR_EXPECT_EQ(vr_raster_ref(v1, &q, n, &bad, NULL), VR_ERR_ARG);
    bad.width = VR_RASTER_MAX_SIZE + 1;
    VR_EXPECT_EQ(vr_raster_ref(v1, &q, n, &bad, NULL), VR_ERR_ARG);
    VR_EXPECT_EQ(vr_raster_ref(v1, &q, n + 1, &cfg, NULL), VR_ERR_ARG);
    free(v1), free(v2);
    vr_test_raster_queue_free(&q);
    vr_test_raster_queue_free(&r);
    return VR_TEST_RESULT();
}

/* The large-box cases on the CPU twin (the GPU tests compare both --big paths with it): the
 * full-screen triangle covers every pixel exactly once, each case rasterizes without error, and
 * a big_mode out of range is refused by name (both big modes are accepted). */
VR_TEST(test_raster_big_cases, "raster/big-cases")
{
    for (size_t c = 0;; ++c) {
        vr_queue q;
        uint32_t n;
        vr_raster_config cfg;
        const char *name;
        if (vr_test_raster_big_case(c, 0, &q, &n, &cfg, &name) != VR_OK)
            break;
        const size_t pixels = (size_t)cfg.width * cfg.height;
        uint64_t *vis = malloc(pixels * 8);
        vr_raster_stats st;
        for (int mode = 0; mode < VR_RASTER_BIG_MODE_COUNT; ++mode) {
            cfg.big_mode = mode;
            VR_EXPECT(vr_raster_ref(vis, &q, n, &cfg, &st) == VR_OK, "%s (%s): %s", name,
                      vr_raster_big_mode_name(mode), vr_last_error());
        }
        VR_EXPECT(st.fragments > 0, "%s: nothing drawn", name);
        if (c == 0) {
            uint32_t *cov = overdraw(&q, n, &cfg);
            size_t bad = 0;
            for (size_t p = 0; p < pixels; ++p)
                bad += cov[p] != 1 || (uint32_t)vis[p] != 0;
            VR_EXPECT(bad == 0, "%s: %zu of %zu pixels not covered exactly once", name, bad,
                      pixels);
            free(cov);
        }
        cfg.big_mode = VR_RASTER_BIG_MODE_COUNT;
        VR_EXPECT(vr_raster_ref(vis, &q, n, &cfg, &st) == VR_ERR_ARG &&
                      strstr(vr_last_error(), "big_mode"),
                  "%s: big_mode %d accepted (%s)", name, cfg.big_mode, vr_last_error());
        free(vis);
        vr_test_raster_queue_free(&q);
    }
    VR_EXPECT(!strcmp(vr_raster_big_mode_name(VR_RASTER_BIG_HP), "hp") &&
                  vr_raster_big_mode_name(-1) == NULL,
              "big mode names");
    return VR_TEST_RESULT();
}

static uint32_t pixel_at(const uint8_t *rgba, uint32_t w, uint32_t i, uint32_t j)
{
    uint32_t c;
    memcpy(&c, rgba + 4 * ((size_t)j * w + i), 4);
    return c;
}

VR_TEST(test_raster_resolve, "raster/resolve")
{
    uint32_t green, red;
    vr_resolve_params p = vr_resolve_params_default();
    /* one triangle covering the whole 16x16 screen, normals towards the light */
    const uint32_t W = 16, H = 16;
    vr_raster_config cfg = {W, H, 0, VR_RASTER_BIG_LIST, 0};
    vr_queue q;
    VR_EXPECT_EQ(queue_alloc(&q, 2), 0);
    const double big[6] = {-20, -20, 60, -20, -20, 60};
    queue_screen(&q, 0, W, H, big, 0.0f);
    queue_screen(&q, 1, W, H, big, 0.5f);
    for (int k = 0; k < 3; ++k)
        memcpy(q.normal + 4 * k, p.light, 3 * sizeof(float));
    uint64_t vis[16 * 16];
    uint8_t img[16 * 16 * 4];
    VR_EXPECT_EQ(vr_raster_ref(vis, &q, 1, &cfg, NULL), VR_OK);

    /* Lambert, lit head-on: the base colour 0.86, 0.84, 0.78 at full intensity */
    VR_EXPECT_EQ(vr_resolve_ref(img, vis, &q, 1, &cfg, &p, NULL), VR_OK);
    const uint32_t lit = (uint32_t)(0.86f * 255 + 0.5f) | (uint32_t)(0.84f * 255 + 0.5f) << 8 |
                         (uint32_t)(0.78f * 255 + 0.5f) << 16 | 0xff000000u;
    VR_EXPECT(pixel_at(img, W, 5, 7) == lit, "lambert %08x, want %08x", pixel_at(img, W, 5, 7),
              lit);
    /* heatmap: counts (1, 1, 1) -> green everywhere, (6, 6, 6) and (9, 9, 9) -> the same red */
    uint32_t counts[3] = {1, 1, 1};
    p.mode = VR_SHADE_HEATMAP;
    p.shade_counts = counts;
    p.vertex_count = 3;
    VR_EXPECT_EQ(vr_resolve_ref(img, vis, &q, 1, &cfg, &p, NULL), VR_OK);
    green = pixel_at(img, W, 3, 3);
    VR_EXPECT((green & 0xff00) >> 8 > 150 && (green & 0xff) < 60 && (green >> 16 & 0xff) < 60,
              "count 1 is not green: %08x", green);
    counts[0] = counts[1] = counts[2] = 6;
    VR_EXPECT_EQ(vr_resolve_ref(img, vis, &q, 1, &cfg, &p, NULL), VR_OK);
    red = pixel_at(img, W, 3, 3);
    VR_EXPECT((red & 0xff) > 120 && (red >> 8 & 0xff) < 20, "count 6 is not red: %08x", red);
    counts[0] = counts[1] = counts[2] = 9;
    VR_EXPECT_EQ(vr_resolve_ref(img, vis, &q, 1, &cfg, &p, NULL), VR_OK);
    VR_EXPECT(pixel_at(img, W, 3, 3) == red, "count 9 %08x differs from 6 %08x",
              pixel_at(img, W, 3, 3), red);
    /* interpolation: counts (1, 6, 1) grow towards corner 1 (screen x) */
    counts[0] = 1, counts[1] = 6, counts[2] = 1;
    VR_EXPECT_EQ(vr_resolve_ref(img, vis, &q, 1, &cfg, &p, NULL), VR_OK);
    const uint32_t left = pixel_at(img, W, 0, 8), right = pixel_at(img, W, 15, 8);
    VR_EXPECT((left & 0xff) < (right & 0xff), "red grows towards the count-6 corner: %08x %08x",
              left, right);
    /* a vertex id outside the counts array shows the error colour */
    p.vertex_count = 2;
    VR_EXPECT_EQ(vr_resolve_ref(img, vis, &q, 1, &cfg, &p, NULL), VR_OK);
    VR_EXPECT_EQ(pixel_at(img, W, 3, 3), VR_RESOLVE_ERROR_RGBA);
    p.shade_counts = NULL;
    VR_EXPECT_EQ(vr_resolve_ref(img, vis, &q, 1, &cfg, &p, NULL), VR_ERR_ARG);
    /* batches: distinct ids, distinct colours */
    uint32_t batch[2] = {0, 1};
    p.mode = VR_SHADE_BATCHES;
    p.tri_batch = batch;
    p.tri_batch_count = 2;
    VR_EXPECT_EQ(vr_resolve_ref(img, vis, &q, 1, &cfg, &p, NULL), VR_OK);
    const uint32_t b0 = pixel_at(img, W, 3, 3);
    batch[0] = 1;
    VR_EXPECT_EQ(vr_resolve_ref(img, vis, &q, 1, &cfg, &p, NULL), VR_OK);
    VR_EXPECT(pixel_at(img, W, 3, 3) != b0, "batch 0 and 1 share colour %08x", b0);
    /* an empty pixel is background, a slot beyond tri_count is the error colour */
    vis[0] = VR_VIS_EMPTY;
    vis[1] = (uint64_t)0x3f000000u << 32 | 7u;
    p.mode = VR_SHADE_LAMBERT;
    VR_EXPECT_EQ(vr_resolve_ref(img, vis, &q, 1, &cfg, &p, NULL), VR_OK);
    VR_EXPECT_EQ(pixel_at(img, W, 0, 0), p.background);
    VR_EXPECT_EQ(pixel_at(img, W, 1, 0), VR_RESOLVE_ERROR_RGBA);
    vr_test_raster_queue_free(&q);
    return VR_TEST_RESULT();
}

VR_TEST(test_raster_png, "raster/png")
{
    const uint32_t W = 37, H = 23;
    uint8_t *img = malloc(W * H * 4);
    for (uint32_t i = 0; i < W * H * 4; ++i)
        img[i] = (uint8_t)(i * 7 + i / 5);
    char path[128];
    snprintf(path, sizeof path, "/tmp/vr_test_raster_%d.png", (int)getpid());
    VR_EXPECT_EQ(vr_image_write_png(path, img, W, H), VR_OK);
    uint8_t *back = NULL;
    uint32_t w = 0, h = 0;
    VR_EXPECT_EQ(vr_image_read_png(&back, &w, &h, path), VR_OK);
    VR_EXPECT(w == W && h == H, "read back %ux%u", w, h);
    VR_EXPECT(back && memcmp(back, img, W * H * 4) == 0, "pixels differ after the round trip");
    remove(path);
    free(back);
    vr_status s = vr_image_write_png("/nonexistent-dir/x.png", img, W, H);
    VR_EXPECT_EQ(s, VR_ERR_IO);
    VR_EXPECT(strstr(vr_last_error(), "/nonexistent-dir/x.png") != NULL, "message: %s",
              vr_last_error());
    VR_EXPECT_EQ(vr_image_read_png(&back, &w, &h, "/nonexistent-dir/x.png"), VR_ERR_IO);
    /* text and legend stay inside the image whatever the position */
    vr_image_text(img, W, H, -5, -3, 2, 0xffffffffu, "naive 3.00");
    vr_image_heat_legend(img, W, H, 30, 10, 20, 20, 1);
    free(img);
    return VR_TEST_RESULT();
}

VR_TEST(test_raster_camera, "raster/camera")
{
    vr_mesh m;
    VR_EXPECT_EQ(vr_generate_sphere(&m, 2000), VR_OK);
    vr_camera cam;
    vr_camera_fit(&cam, &m);
    for (int v = 0; v < 4; ++v) {
        cam.yaw = 90.0f * v;
        cam.pitch = v == 3 ? 80.0f : 15.0f;
        vr_shader s;
        vr_camera_shader(&s, &cam, 320, 200);
        double lo[3] = {1e9, 1e9, 1e9}, hi[3] = {-1e9, -1e9, -1e9};
        for (uint32_t i = 0; i < m.vertex_count; ++i) {
            vr_shaded o;
            vr_shade(&s, m.positions + 3 * (size_t)i, m.normals + 3 * (size_t)i, &o);
            VR_EXPECT(o.clip[3] > 0, "vertex %u behind the eye", i);
            for (int a = 0; a < 3; ++a) {
                const double nd = o.clip[a] / o.clip[3];
                lo[a] = nd < lo[a] ? nd : lo[a];
                hi[a] = nd > hi[a] ? nd : hi[a];
            }
        }
        /* framed: inside the frustum, touching the narrower (vertical) extent closely */
        for (int a = 0; a < 3; ++a)
            VR_EXPECT(lo[a] >= -1 && hi[a] <= 1, "view %d axis %d: ndc [%g, %g]", v, a, lo[a],
                      hi[a]);
        VR_EXPECT(hi[1] - lo[1] > 1.2, "view %d: mesh spans only %g of the height", v,
                  hi[1] - lo[1]);
        VR_EXPECT(fabs(hi[0] + lo[0]) < 0.05, "view %d: not centred (%g, %g)", v, lo[0], hi[0]);
    }
    vr_mesh_free(&m);
    return VR_TEST_RESULT();
}

/* A 1080p frame of the bunny through the naive CPU twin: sane coverage, no error pixels, and
 * the CPU rasterizer well under a second. */
VR_TEST(test_raster_bunny, "raster/bunny")
{
    char path[512];
    if (!vr_test_scene_path(path, sizeof path, "stanford-bunny.obj")) {
        printf("SKIP: scenes directory missing (set VR_SCENES)\n");
        return VR_TEST_SKIP;
    }
    vr_mesh m;
    if (!vr_test_load(&m, path))
        return VR_TEST_FAIL;
    const uint32_t tris = m.index_count / 3;
    vr_geometry_result res;
    VR_EXPECT_EQ(vr_geometry_result_alloc(&res, tris, m.vertex_count), VR_OK);
    vr_reuse_params cfg = vr_reuse_params_default();
    vr_camera cam;
    vr_camera_fit(&cam, &m);
    vr_raster_config rc = {1920, 1080, 0, VR_RASTER_BIG_LIST, 0};
    vr_camera_shader(&cfg.shader, &cam, rc.width, rc.height);
    cfg.count = 1;
    VR_EXPECT_EQ(vr_geometry_ref(&res, vr_reuse_find("naive"), &m, &cfg), VR_OK);
    const size_t pixels = (size_t)rc.width * rc.height;
    uint64_t *vis = malloc(pixels * 8);
    uint8_t *img = malloc(pixels * 4);
    vr_raster_stats st;
    double best = 1e30;
    for (int rep = 0; rep < 3; ++rep) {
        const double t0 = vr_now_ms();
        VR_EXPECT_EQ(vr_raster_ref(vis, &res.queue, tris, &rc, &st), VR_OK);
        const double ms = vr_now_ms() - t0;
        best = ms < best ? ms : best;
    }
    vr_resolve_params p = vr_resolve_params_default();
    p.mode = VR_SHADE_HEATMAP;
    p.shade_counts = res.shade_counts;
    p.vertex_count = m.vertex_count;
    VR_EXPECT_EQ(vr_resolve_ref(img, vis, &res.queue, tris, &rc, &p, &st.resolve_ms), VR_OK);
    size_t covered = 0, errors = 0;
    for (size_t i = 0; i < pixels; ++i) {
        covered += vis[i] != VR_VIS_EMPTY;
        uint32_t c;
        memcpy(&c, img + 4 * i, 4);
        errors += c == VR_RESOLVE_ERROR_RGBA;
    }
    printf("     bunny 1920x1080: raster %.1f ms (best of 3), resolve %.1f ms, %zu pixels "
           "covered (%.1f%%), %llu fragments, %llu rejected\n",
           best, st.resolve_ms, covered, 100.0 * covered / pixels,
           (unsigned long long)st.fragments, (unsigned long long)st.rejected);
    VR_EXPECT(covered > pixels / 10 && covered < pixels * 8 / 10, "coverage %zu of %zu", covered,
              pixels);
    VR_EXPECT_EQ(errors, 0);
    VR_EXPECT(best < 1000.0, "CPU raster took %.1f ms", best);
    free(vis);
    free(img);
    vr_geometry_result_free(&res);
    vr_mesh_free(&m);
    return VR_TEST_RESULT();
}
