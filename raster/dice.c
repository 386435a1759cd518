/* dice.c - the Dicer's CPU twin and what both halves share (dice.h): the fit into the unit cube,
 * the slice cameras, the point list, positions and the splat picture. Per slice k the mesh goes
 * through the geometry stage (strategy naive, no culling: slot = triangle id) and the rasterizer
 * (no back-face culling) at N x N; covered pixels become HistoPyramid cells (key = cell index,
 * ~0 when empty) and the pyramid's compaction lists them in cell order. The GPU half (dice.cu)
 * runs the same three stages on the device; all three are bit-identical to their twins, so the
 * point lists are equal element by element. Try: `vreuse_tests dice/`, `vreuse dice teapot.obj`.
 *
 * What "covered" means, and why it is robust. Pixel (x, y) of slice k is covered when the line
 * along z through the pixel centre crosses a triangle at a depth inside the slab k..k+1 voxels:
 * exactly the rasterizer's rule (pixel centre inside the triangle after near/far clipping), with
 * no coverage code of its own. So every crossing of a pixel-centre line with the surface gives
 * the voxel that holds it: surface voxels sampled along z, as the paper's Dicer gets them from
 * OpenGL. The slab test is made robust as follows.
 *  - Conservative z range: the slab is widened by 1/64 voxel on both sides (VR_DICE_MARGIN_LOG2).
 *    Rounding (the MVP made in double and stored as float, the shader's products, the clipper's
 *    intersections) moves a clip z by a few ulps of the largest term, |B| <= 2N + 2 <= 2^12:
 *    under 2^-10 clip units at N = 2048, against a margin of 2/66 (about 2^-5) clip units. A
 *    crossing inside the true slab is therefore never lost to rounding; one within 1/64 voxel
 *    of a boundary marks both voxels - a local one-voxel thickening, never a hole.
 *  - Triangles parallel to the slice plane have one clip z: inside a slab they are drawn whole
 *    and unclipped; on a boundary (a face at z = k/N, the fitted bounding box's faces) they lie
 *    inside both widened slabs and mark both, never neither.
 *  - Triangles parallel to the view direction (vertical walls) have zero area on the slice; the
 *    rasterizer drops them, as OpenGL does. Their points are found only where a pixel-centre line
 *    crosses them, i.e. at their edges, which the neighbouring faces cover. An axis-aligned box
 *    thus yields exactly the cells of its two z faces (the test dice/box). Nearly vertical
 *    triangles: snapping the clipped polygon to 1/256 pixel moves the depth at which a crossing
 *    changes slab by slope / 512 voxels, inside the margin up to slope 8 (83 degrees); a steeper
 *    triangle may drop or double a crossing within that distance of a boundary, where the
 *    crossing's depth itself is ill-conditioned.
 *  - Edges shared by two triangles are drawn once (top-left rule); for coverage either is fine.
 *    Pixel centres (i + 1/2) / N never lie on the cube's faces, and the margins of slabs 0 and
 *    N - 1 reach past the fitted bounding box, so its extreme faces are kept.
 */
#include "raster/dice.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/compact/histopyramid.h"
#include "pipeline/limits.h"
#include "pipeline/stage/geometry.h"
#include "raster/raster.h"

#define VR_DICE_PI 3.14159265358979323846

vr_status vr_dice_fit_make(vr_dice_fit *f, const vr_mesh *m)
{
    assert(f && m);
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (uint32_t i = 0; i < m->index_count; ++i) {
        const float *p = m->positions + 3 * (size_t)m->indices[i];
        for (int a = 0; a < 3; ++a) {
            if (!isfinite(p[a]))
                return VR_ERROR(VR_ERR_FORMAT, "vertex %u has a non-finite position; the dicer "
                                "needs finite coordinates", m->indices[i]);
            lo[a] = fmin(lo[a], p[a]);
            hi[a] = fmax(hi[a], p[a]);
        }
    }
    double side = 0;
    for (int a = 0; a < 3; ++a) {
        f->center[a] = 0.5 * (lo[a] + hi[a]);
        side = fmax(side, hi[a] - lo[a]);
    }
    if (!(side > 0) || !isfinite(side))
        return VR_ERROR(VR_ERR_FORMAT, "the mesh's vertices all lie at one point; there is no "
                        "volume to dice");
    f->scale = 1.0 / side;
    return VR_OK;
}

void vr_dice_slice_shader(vr_shader *s, const vr_dice_fit *f, uint32_t volume, uint32_t k)
{
    assert(s && f && volume > 0 && k < volume);
    memset(s, 0, sizeof *s);
    const double sc = f->scale, margin = 1.0 / (1 << VR_DICE_MARGIN_LOG2);
    /* slab in unit-cube depth, widened by the margin on both sides (see the file comment) */
    const double lo = (k - margin) / volume, hi = (k + 1 + margin) / volume;
    const double a = 2.0 * sc / (hi - lo);
    /* column-major: clip[r] = mvp[r] x + mvp[4 + r] y + mvp[8 + r] z + mvp[12 + r] */
    s->mvp[0] = (float)(2.0 * sc);
    s->mvp[12] = (float)(-2.0 * sc * f->center[0]);
    s->mvp[5] = (float)(-2.0 * sc);
    s->mvp[13] = (float)(2.0 * sc * f->center[1]);
    s->mvp[10] = (float)a;
    s->mvp[14] = (float)(2.0 * (0.5 - sc * f->center[2] - lo) / (hi - lo) - 1.0);
    s->mvp[15] = 1.0f;
    s->normal_matrix[0] = s->normal_matrix[4] = s->normal_matrix[8] = 1.0f;
}

void vr_dice_result_free(vr_dice_result *r)
{
    if (!r)
        return;
    free(r->cells);
    free(r->slice_points);
    free(r->slice_ms);
    memset(r, 0, sizeof *r);
}

vr_status vr_dice_append(vr_dice_result *r, uint32_t k, const uint32_t *cells, uint32_t n,
                         double ms)
{
    const uint64_t need = (uint64_t)r->count + n;
    if (need > UINT32_MAX)
        return VR_ERROR(VR_ERR_OVERFLOW, "more than 2^32 - 1 surface points; use a smaller "
                        "volume");
    if (need > r->capacity) {
        uint64_t cap = r->capacity ? r->capacity : 1024;
        while (cap < need)
            cap *= 2;
        cap = cap < UINT32_MAX ? cap : UINT32_MAX;
        uint32_t *c = realloc(r->cells, (size_t)cap * 3 * sizeof *c);
        if (!c)
            return VR_ERROR(VR_ERR_OOM, "out of memory for %llu points",
                            (unsigned long long)need);
        r->cells = c;
        r->capacity = (uint32_t)cap;
    }
    const uint32_t v = r->volume;
    for (uint32_t i = 0; i < n; ++i) {
        uint32_t *c = r->cells + 3 * ((size_t)r->count + i);
        c[0] = cells[i] % v;
        c[1] = cells[i] / v;
        c[2] = k;
    }
    r->count += n;
    r->slice_points[k] = n;
    r->slice_ms[k] = ms;
    return VR_OK;
}

/* The CPU twin of slices k0..k1-1: the geometry stage's and the rasterizer's twins, the
 * HistoPyramid reference. */
static vr_status dice_cpu(vr_dice_result *r, const vr_mesh *m, uint32_t k0, uint32_t k1)
{
    const uint32_t v = r->volume, n = v * v, tris = m->index_count / 3;
    vr_geometry_result g = {0};
    uint64_t *vis = malloc((size_t)n * sizeof *vis);
    uint32_t *key = malloc((size_t)n * sizeof *key);
    uint32_t *list = malloc((size_t)n * sizeof *list);
    vr_status s = VR_OK;
    if (!vis || !key || !list)
        s = VR_ERROR(VR_ERR_OOM, "out of memory for %u x %u slice buffers", v, v);
    if (!s)
        s = vr_geometry_result_alloc(&g, tris, m->vertex_count);
    const vr_raster_config rc = {v, v, 0, VR_RASTER_BIG_LIST, 0};
    vr_reuse_params cfg = vr_reuse_params_default();
    cfg.cull = 0;
    for (uint32_t k = k0; k < k1 && !s; ++k) {
        const double t0 = vr_now_ms();
        vr_dice_slice_shader(&cfg.shader, &r->fit, v, k);
        if ((s = vr_geometry_ref(&g, &vr_reuse_all[VR_REUSE_NAIVE], m, &cfg)) ||
            (s = vr_raster_ref(vis, &g.queue, tris, &rc, NULL)))
            break;
        for (uint32_t i = 0; i < n; ++i)
            key[i] = vis[i] != VR_VIS_EMPTY ? i : UINT32_MAX;
        uint32_t count = 0;
        if ((s = vr_hp_compact_ref(list, &count, key, n, UINT32_MAX, VR_HP_PLAIN)))
            break;
        s = vr_dice_append(r, k, list, count, vr_now_ms() - t0);
    }
    vr_geometry_result_free(&g);
    free(vis);
    free(key);
    free(list);
    return s;
}

/* Every GPU dicing checks one slice against the CPU twin (a few ms): the points of slice k must
 * be the twin's, in the same order; VR_ERR_CUDA naming the slice otherwise. Cheap insurance that
 * a GPU result is never silently wrong (the full comparison is tests/test_dice.c's gpu/dice-*). */
static vr_status dice_check_slice(const vr_dice_result *gpu, const vr_mesh *m, uint32_t k)
{
    vr_dice_result twin = *gpu;
    twin.count = twin.capacity = 0;
    twin.cells = NULL;
    twin.slice_points = calloc(gpu->volume, sizeof *twin.slice_points);
    twin.slice_ms = calloc(gpu->volume, sizeof *twin.slice_ms);
    twin.gpu = 0;
    vr_status s = twin.slice_points && twin.slice_ms
                      ? dice_cpu(&twin, m, k, k + 1)
                      : VR_ERROR(VR_ERR_OOM, "out of memory for the check of slice %u", k);
    if (!s) {
        size_t first = 0;
        for (uint32_t j = 0; j < k; ++j)
            first += gpu->slice_points[j];
        if (gpu->slice_points[k] != twin.count ||
            (twin.count && memcmp(gpu->cells + 3 * first, twin.cells,
                                  (size_t)twin.count * 3 * sizeof *twin.cells) != 0))
            s = VR_ERROR(VR_ERR_CUDA, "the GPU's slice %u (%u points) differs from the CPU "
                         "twin's (%u points); run with --cpu, and report it", k,
                         gpu->slice_points[k], twin.count);
    }
    vr_dice_result_free(&twin);
    return s;
}

vr_status vr_dice(vr_dice_result *out, const vr_mesh *m, uint32_t volume, int use_gpu)
{
    assert(out && m);
    memset(out, 0, sizeof *out);
    if (volume < VR_DICE_VOLUME_MIN || volume > VR_DICE_VOLUME_MAX)
        return VR_ERROR(VR_ERR_ARG, "volume %u is outside %u..%u", volume, VR_DICE_VOLUME_MIN,
                        VR_DICE_VOLUME_MAX);
    vr_status s = vr_mesh_validate(m, "the mesh to dice");
    if (s || (s = vr_dice_fit_make(&out->fit, m)))
        return s;
    out->volume = volume;
    out->gpu = use_gpu != 0;
    out->slice_points = calloc(volume, sizeof *out->slice_points);
    out->slice_ms = calloc(volume, sizeof *out->slice_ms);
    if (!out->slice_points || !out->slice_ms)
        return VR_ERROR(VR_ERR_OOM, "out of memory for %u slices", volume);
    if (!use_gpu)
        return dice_cpu(out, m, 0, volume);
    s = vr_dice_gpu(out, m);
    return s ? s : dice_check_slice(out, m, volume / 2);
}

void vr_dice_position(float p[3], const vr_dice_result *r, uint32_t i)
{
    assert(r && i < r->count);
    for (int a = 0; a < 3; ++a) {
        const double u = (r->cells[3 * (size_t)i + a] + 0.5) / r->volume;
        p[a] = (float)((u - 0.5) / r->fit.scale + r->fit.center[a]);
    }
}

void vr_dice_positions(float *xyz, const vr_dice_result *r)
{
    for (uint32_t i = 0; i < r->count; ++i)
        vr_dice_position(xyz + 3 * (size_t)i, r, i);
}

vr_status vr_dice_splat(uint8_t *rgba, uint32_t size, const vr_dice_result *r)
{
    assert(rgba && size > 0 && r);
    const size_t pixels = (size_t)size * size;
    float *depth = malloc(pixels * sizeof *depth);
    if (!depth)
        return VR_ERROR(VR_ERR_OOM, "out of memory for a %u x %u depth buffer", size, size);
    for (size_t i = 0; i < pixels; ++i) {
        memcpy(rgba + 4 * i, (const uint8_t[4]){32, 32, 36, 255}, 4);
        depth[i] = -INFINITY;
    }
    if (r->count == 0) {
        free(depth);
        return VR_OK;
    }
    const double yaw = 30.0 * VR_DICE_PI / 180.0, pitch = 20.0 * VR_DICE_PI / 180.0;
    /* depth over the cube's bounding sphere; the view a little tighter (corners are rarely full) */
    const double half = sqrt(3.0) / 2, view = 0.72;
    const double cy = cos(yaw), sy = sin(yaw), cp = cos(pitch), sp = sin(pitch);
    /* a voxel's diagonal turned into view is up to ~1.5 voxels wide: splats that size close gaps */
    const int side = (int)fmax(1.0, ceil(1.5 * size / ((double)r->volume * 2 * view)));
    for (uint32_t i = 0; i < r->count; ++i) {
        double v[3];
        for (int a = 0; a < 3; ++a)
            v[a] = (r->cells[3 * (size_t)i + a] + 0.5) / r->volume - 0.5;
        const double x = cy * v[0] + sy * v[2], z1 = -sy * v[0] + cy * v[2];
        const double y = cp * v[1] - sp * z1, z = sp * v[1] + cp * z1; /* +z towards the eye */
        const int px = (int)floor((x / (2 * view) + 0.5) * size) - side / 2;
        const int py = (int)floor((0.5 - y / (2 * view)) * size) - side / 2;
        const double t = (z + half) / (2 * half); /* 0 far .. 1 near */
        const uint8_t c = (uint8_t)(50 + 205 * fmin(fmax(t, 0), 1));
        const uint8_t col[4] = {c, (uint8_t)(c * 0.85), (uint8_t)(c * 0.6), 255};
        for (int dy = 0; dy < side; ++dy)
            for (int dx = 0; dx < side; ++dx) {
                const int qx = px + dx, qy = py + dy;
                if (qx < 0 || qy < 0 || qx >= (int)size || qy >= (int)size)
                    continue;
                const size_t q = (size_t)qy * size + (size_t)qx;
                if (z > depth[q]) {
                    depth[q] = (float)z;
                    memcpy(rgba + 4 * q, col, 4);
                }
            }
    }
    free(depth);
    return VR_OK;
}

#ifndef VR_HAVE_CUDA
vr_status vr_dice_gpu(vr_dice_result *r, const vr_mesh *m)
{
    (void)r, (void)m;
    return VR_ERROR(VR_ERR_NO_DEVICE, VR_NO_CUDA_BUILD);
}
#endif
