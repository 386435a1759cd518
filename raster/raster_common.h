/* raster_common.h - the arithmetic raster.cu and raster_ref.c share (VR_HD): clipping in clip
 * space, the viewport transform to fixed point, edge functions with the top-left fill rule, the
 * depth plane and the per-pixel resolve. Both sides must produce bit-identical visibility
 * buffers and images, so every float operation here is spelled out: on the device with the
 * _rn intrinsics (never contracted into FMAs), on the host as plain IEEE single operations.
 * Edge functions are exact 64-bit integers. Checked by `vreuse_tests raster/ gpu/raster`.
 * Also the input checks both run first and the device frame buffers (vr_raster_frame).
 */
#ifndef VR_RASTER_COMMON_H
#define VR_RASTER_COMMON_H

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "pipeline/hd.h"
#include "raster/raster.h"

#ifdef __cplusplus
extern "C" {
#endif
/* Input checks both twins run first (raster_ref.c): VR_ERR_ARG / VR_ERR_OVERFLOW with a message.
 * vr_raster_check_input: the configuration, then the queue's first tri_count slots. */
vr_status vr_raster_check_input(const vr_raster_config *cfg, const vr_queue *q, uint32_t tri_count);
vr_status vr_resolve_check(const vr_resolve_params *p);

/* The device buffers that turn a queue into an image, owned by vr_raster_device and by the
 * renderer (render.c). The functions are in raster.cu (CUDA builds only). */
typedef struct vr_raster_frame {
    uint32_t *d_shade_counts; /* vertex_count: per-vertex shading counts (heatmap) */
    uint32_t *d_tri_batch;    /* triangles: batch id per triangle id (batch colours) */
    void *d_scratch;          /* vr_raster_scratch_bytes(), kept across frames */
    uint64_t *d_vis;          /* pixel_capacity words */
    uint8_t *d_rgba;          /* 4 * pixel_capacity bytes */
    size_t pixel_capacity;    /* 0 until vr_raster_frame_grow */
    void *stream;             /* cudaStream_t of the raster and resolve steps */
    uint8_t *d_tiles;         /* graph frames: a flag per 16 x 16 pixel tile, 32 bytes apart
                                 (vr_raster_frame_tiles) */
    size_t tile_capacity;
    uint32_t tiles_width, tiles_height; /* the image size for which every tile not flagged
                                           DRAWN holds empty words and background pixels; 0:
                                           not known */
    uint32_t tiles_background;          /* that background (packed RGBA8) */
} vr_raster_frame;
/* Allocates the arrays for `triangles` and `vertex_count` (no image yet), the scratch and the
 * stream; on failure what was made stays for vr_raster_frame_free. */
vr_status vr_raster_frame_alloc(vr_raster_frame *f, uint32_t triangles, uint32_t vertex_count);
/* Grows the visibility buffer and the image to hold `pixels`, dropping their contents.
 * pixel_capacity is 0 while they are replaced, so a failure leaves nothing that looks usable. */
vr_status vr_raster_frame_grow(vr_raster_frame *f, size_t pixels);
/* Graph frames (vr_raster_frame_enqueue with d_tiles): grows the tile flags to cfg's image
 * and, unless they already describe that size and background, enqueues on f->stream a store
 * that flags every tile drawn, so that the next frame clears every word and writes every pixel.
 * After that frame every tile not flagged holds empty words and background pixels, and each
 * graph frame keeps it so: it clears and repaints the tiles the last one flagged and flags what
 * it writes. Anything else that writes d_vis or d_rgba must set tiles_width to 0. */
vr_status vr_raster_frame_tiles(vr_raster_frame *f, const vr_raster_config *cfg,
                                uint32_t background);
/* Teardown (errors cannot be acted on, so they are not checked); *f is zeroed. */
void vr_raster_frame_free(vr_raster_frame *f);
#ifdef __cplusplus
}
#endif

/* ---- float operations that round exactly once, identically on host and device ------------ */
#if defined(__CUDA_ARCH__)
#define VR_FMUL(a, b) __fmul_rn((a), (b))
#define VR_FADD(a, b) __fadd_rn((a), (b))
#define VR_FSUB(a, b) __fsub_rn((a), (b))
#define VR_FDIV(a, b) __fdiv_rn((a), (b))
#define VR_FSQRT(a) __fsqrt_rn(a)
#define VR_I64_TO_F(a) __ll2float_rn(a)
#else
#if defined(FLT_EVAL_METHOD) && FLT_EVAL_METHOD != 0
#error "raster/raster_common.h: float expressions are evaluated in higher precision (FLT_EVAL_METHOD != 0, x87?); CPU and GPU rasterizers would differ. Build for SSE2 (x86-64) or another IEEE single target."
#endif
#if defined(__FP_FAST_FMAF)
/* This host has a fused multiply-add and GCC's gnu11 default (-ffp-contract=fast) would fuse
 * a product with the following add, rounding once where the device rounds twice. The empty asm
 * makes each product opaque, so it is rounded to float before it is used. */
static inline float vr_fmul_opaque(float a, float b)
{
    float r = a * b;
    __asm__ volatile("" : "+m"(r));
    return r;
}
#define VR_FMUL(a, b) vr_fmul_opaque((a), (b))
#else
#define VR_FMUL(a, b) ((a) * (b))
#endif
#define VR_FADD(a, b) ((a) + (b))
#define VR_FSUB(a, b) ((a) - (b))
#define VR_FDIV(a, b) ((a) / (b))
#define VR_FSQRT(a) sqrtf(a)
#define VR_I64_TO_F(a) ((float)(a))
#endif

VR_HD uint32_t vr_float_bits(float f)
{
#if defined(__CUDA_ARCH__)
    return __float_as_uint(f);
#else
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
#endif
}

/* ---- the viewport ------------------------------------------------------------------------ */

/* Clip planes: 0 near (z >= -w), 1 far (z <= w), 2..5 the guard band (|x| <= gx w,
 * |y| <= gy w), 6 w >= VR_RASTER_W_MIN. A polygon clipped by all of them has at most 3 + 7
 * vertices. The guard band keeps every snapped coordinate within 2^14 pixels (2^22 sub-pixels)
 * of the origin, so edge functions fit in int64 with room to spare (|E| < 2^47). */
#define VR_CLIP_PLANES 7
#define VR_CLIP_MAX_VERTS (3 + VR_CLIP_PLANES)
#define VR_RASTER_W_MIN 1e-30f
#define VR_RASTER_GUARD_PIXELS 16384.0f /* guard-band width in pixels, incl. the viewport */

typedef struct vr_raster_view {
    int32_t width, height;
    float half_w, half_h;           /* width, height * VR_RASTER_SUBPIXEL / 2: NDC -> sub-pixels */
    float guard_x, guard_y;         /* guard band in NDC units: |x| <= guard_x * w */
    float pixel_ndc_x, pixel_ndc_y; /* 2 / width, 2 / height: one pixel in NDC units */
    int cull_back;
    uint32_t slot_base;             /* vr_raster_config.slot_base */
} vr_raster_view;

/* Built once on the host and passed to kernels by value, so both sides use the same floats. */
static inline vr_raster_view vr_raster_view_make(const vr_raster_config *cfg)
{
    vr_raster_view v;
    v.width = (int32_t)cfg->width;
    v.height = (int32_t)cfg->height;
    v.half_w = (float)cfg->width * (float)(VR_RASTER_SUBPIXEL / 2);
    v.half_h = (float)cfg->height * (float)(VR_RASTER_SUBPIXEL / 2);
    v.guard_x = VR_RASTER_GUARD_PIXELS / (float)cfg->width;
    v.guard_y = VR_RASTER_GUARD_PIXELS / (float)cfg->height;
    v.pixel_ndc_x = 2.0f / (float)cfg->width;
    v.pixel_ndc_y = 2.0f / (float)cfg->height;
    v.cull_back = cfg->cull_back != 0;
    v.slot_base = cfg->slot_base;
    return v;
}

/* ---- clipping ---------------------------------------------------------------------------- */

/* Signed distance of clip-space vertex v to plane `plane`; inside is >= 0. */
VR_HD float vr_clip_distance(const float *v, int plane, const vr_raster_view *view)
{
    switch (plane) {
    case 0: return VR_FADD(v[2], v[3]);
    case 1: return VR_FSUB(v[3], v[2]);
    case 2: return VR_FSUB(VR_FMUL(view->guard_x, v[3]), v[0]);
    case 3: return VR_FADD(VR_FMUL(view->guard_x, v[3]), v[0]);
    case 4: return VR_FSUB(VR_FMUL(view->guard_y, v[3]), v[1]);
    case 5: return VR_FADD(VR_FMUL(view->guard_y, v[3]), v[1]);
    default: return VR_FSUB(v[3], VR_RASTER_W_MIN);
    }
}

/* Puts a new vertex exactly on the plane it was cut at, so the depth at the near and far
 * planes is exactly 0 and 1 and rounding cannot leave it outside. */
VR_HD void vr_clip_onto_plane(float *v, int plane, const vr_raster_view *view)
{
    switch (plane) {
    case 0: v[2] = -v[3]; break;
    case 1: v[2] = v[3]; break;
    case 2: v[0] = VR_FMUL(view->guard_x, v[3]); break;
    case 3: v[0] = -VR_FMUL(view->guard_x, v[3]); break;
    case 4: v[1] = VR_FMUL(view->guard_y, v[3]); break;
    case 5: v[1] = -VR_FMUL(view->guard_y, v[3]); break;
    default: v[3] = VR_RASTER_W_MIN; break;
    }
}

/* Clips triangle `c` (3 clip-space float4, 12 floats) into polygon `out`; returns its vertex
 * count: 0 when nothing can be visible (a non-finite coordinate, or all three vertices outside
 * one frustum plane), 3 with *clipped = 0 when every vertex is inside the near/far planes and
 * the guard band (the common case), else the Sutherland-Hodgman result with *clipped = 1.
 * An intersection depends only on the two endpoints' values, never on the edge's direction,
 * so two triangles sharing a clipped edge get bit-identical new vertices and the mesh stays
 * watertight. */
VR_HD int vr_raster_clip(float out[VR_CLIP_MAX_VERTS][4], const float *c,
                         const vr_raster_view *view, int *clipped)
{
    *clipped = 0;
    unsigned all_out = 0x3fu, need_clip = 0;
    for (int k = 0; k < 3; ++k) {
        const float *v = c + 4 * k;
        for (int i = 0; i < 4; ++i)
            if (!(fabsf(v[i]) <= FLT_MAX))
                return 0; /* NaN or infinity */
        const float x = v[0], y = v[1], z = v[2], w = v[3];
        unsigned code = (x > w) | (x < -w) << 1 | (y > w) << 2 | (y < -w) << 3 | (z < -w) << 4 |
                        (z > w) << 5;
        all_out &= code;
        for (int p = 0; p < VR_CLIP_PLANES; ++p)
            need_clip |= vr_clip_distance(v, p, view) < 0.0f;
        for (int i = 0; i < 4; ++i)
            out[k][i] = v[i];
    }
    if (all_out)
        return 0;
    if (!need_clip)
        return 3;
    *clipped = 1;

    float tmp[VR_CLIP_MAX_VERTS][4];
    float(*src)[4] = out, (*dst)[4] = tmp;
    int n = 3;
    for (int p = 0; p < VR_CLIP_PLANES && n > 0; ++p) {
        float d[VR_CLIP_MAX_VERTS];
        int inside = 0;
        for (int k = 0; k < n; ++k) {
            d[k] = vr_clip_distance(src[k], p, view);
            inside += d[k] >= 0.0f;
        }
        if (inside == n)
            continue;
        int m = 0;
        /* a convex polygon gains at most one vertex per plane; the m bounds below only guard
         * against a rounding-induced concavity (both twins truncate identically) */
        for (int k = 0; k < n; ++k) {
            const int k1 = k + 1 == n ? 0 : k + 1;
            const int in0 = d[k] >= 0.0f, in1 = d[k1] >= 0.0f;
            if (in0 && m < VR_CLIP_MAX_VERTS) {
                for (int i = 0; i < 4; ++i)
                    dst[m][i] = src[k][i];
                ++m;
            }
            if (in0 != in1 && m < VR_CLIP_MAX_VERTS) {
                /* start from the endpoint nearer the plane (ties: the inside one): a small t
                 * keeps the cancellation small when the other endpoint is far away */
                const float ad0 = fabsf(d[k]), ad1 = fabsf(d[k1]);
                const int from0 = ad0 < ad1 || (ad0 == ad1 && in0);
                const float *a = from0 ? src[k] : src[k1], *b = from0 ? src[k1] : src[k];
                const float da = from0 ? d[k] : d[k1], db = from0 ? d[k1] : d[k];
                const float t = VR_FDIV(da, VR_FSUB(da, db));
                for (int i = 0; i < 4; ++i)
                    dst[m][i] = VR_FADD(a[i], VR_FMUL(t, VR_FSUB(b[i], a[i])));
                vr_clip_onto_plane(dst[m], p, view);
                ++m;
            }
        }
        n = m;
        float(*swap)[4] = src;
        src = dst;
        dst = swap;
    }
    if (src != out)
        for (int k = 0; k < n; ++k)
            for (int i = 0; i < 4; ++i)
                out[k][i] = src[k][i];
    /* rounding can leave a new vertex a hair outside a plane; a non-positive w would flip the
     * projection, so such slivers (a triangle through the eye point) are dropped */
    for (int k = 0; k < n; ++k)
        if (!(out[k][3] > 0.0f))
            return 0;
    return n < 3 ? 0 : n;
}

/* ---- viewport transform and triangle setup ------------------------------------------------ */

typedef struct vr_raster_vertex {
    int32_t x, y; /* sub-pixels, y down, pixel (i, j) has its centre at (i + 1/2, j + 1/2) */
    float z;      /* depth in [0, 1] (window z of the GL convention) */
} vr_raster_vertex;

/* Perspective divide and snap to the sub-pixel grid (round half up). */
VR_HD vr_raster_vertex vr_raster_snap(const float *v, const vr_raster_view *view)
{
    float nx = VR_FDIV(v[0], v[3]), ny = VR_FDIV(v[1], v[3]), nz = VR_FDIV(v[2], v[3]);
    /* clipping bounds these up to rounding; the clamps make the int range a hard guarantee */
    nx = nx < -view->guard_x ? -view->guard_x : nx > view->guard_x ? view->guard_x : nx;
    ny = ny < -view->guard_y ? -view->guard_y : ny > view->guard_y ? view->guard_y : ny;
    vr_raster_vertex s;
    s.x = (int32_t)floorf(VR_FADD(VR_FADD(VR_FMUL(nx, view->half_w), view->half_w), 0.5f));
    s.y = (int32_t)floorf(VR_FADD(VR_FSUB(view->half_h, VR_FMUL(ny, view->half_h)), 0.5f));
    s.z = VR_FADD(VR_FMUL(nz, 0.5f), 0.5f);
    return s;
}

/* One triangle ready for the pixel loop. Edge k runs from vertex k to vertex k+1 (mod 3);
 * E_k(p) = dx_k (p.y - ay_k) - dy_k (p.x - ax_k) + bias_k, and a pixel centre p is covered
 * when all three are >= 0. The orientation is normalised so the interior is positive. */
typedef struct vr_raster_tri {
    int32_t ax[3], ay[3];   /* edge start points, sub-pixels */
    int64_t dx[3], dy[3];   /* edge vectors */
    int64_t bias[3];        /* 0 on top and left edges, -1 elsewhere (top-left fill rule) */
    int32_t x0, y0;         /* vertex 0, origin of the depth plane */
    float z0, dzdx, dzdy;   /* depth plane, per sub-pixel */
    int32_t px0, px1;       /* pixel columns whose centres the bounding box holds, inclusive */
    int32_t py0, py1;       /* pixel rows, inclusive; clamped to the viewport */
} vr_raster_tri;

VR_HD int64_t vr_floor_div_subpixel(int64_t a)
{
    return a >= 0 ? a / VR_RASTER_SUBPIXEL : -((-a + VR_RASTER_SUBPIXEL - 1) / VR_RASTER_SUBPIXEL);
}

/* Returns -1 for a zero-area or culled (back-facing) triangle, 0 when its bounding box holds
 * no pixel centre of the viewport, 1 when `t` is ready. */
VR_HD int vr_raster_tri_setup(vr_raster_tri *t, vr_raster_vertex a, vr_raster_vertex b,
                              vr_raster_vertex c, const vr_raster_view *view)
{
    int64_t area = (int64_t)(b.x - a.x) * (c.y - a.y) - (int64_t)(b.y - a.y) * (c.x - a.x);
    if (area == 0)
        return -1;
    /* y points down, so a counter-clockwise (front-facing) triangle in NDC has area < 0 */
    if (view->cull_back && area > 0)
        return -1;
    if (area < 0) {
        vr_raster_vertex s = b;
        b = c;
        c = s;
        area = -area;
    }
    const vr_raster_vertex v[3] = {a, b, c};
    int32_t lo_x = a.x, hi_x = a.x, lo_y = a.y, hi_y = a.y;
    for (int k = 0; k < 3; ++k) {
        const vr_raster_vertex p = v[k], q = v[k == 2 ? 0 : k + 1];
        t->ax[k] = p.x;
        t->ay[k] = p.y;
        t->dx[k] = (int64_t)q.x - p.x;
        t->dy[k] = (int64_t)q.y - p.y;
        /* interior normal (-dy, dx) with y down: a top edge is horizontal with the interior
         * below (dx > 0), a left edge has the interior to its right (dy < 0) */
        const int top_left = t->dy[k] < 0 || (t->dy[k] == 0 && t->dx[k] > 0);
        t->bias[k] = top_left ? 0 : -1;
        lo_x = p.x < lo_x ? p.x : lo_x;
        hi_x = p.x > hi_x ? p.x : hi_x;
        lo_y = p.y < lo_y ? p.y : lo_y;
        hi_y = p.y > hi_y ? p.y : hi_y;
    }
    /* pixel i has its centre at i * S + S/2: first centre >= lo, last centre <= hi */
    const int64_t half = VR_RASTER_SUBPIXEL / 2;
    int64_t px0 = -vr_floor_div_subpixel(-((int64_t)lo_x - half));
    int64_t px1 = vr_floor_div_subpixel((int64_t)hi_x - half);
    int64_t py0 = -vr_floor_div_subpixel(-((int64_t)lo_y - half));
    int64_t py1 = vr_floor_div_subpixel((int64_t)hi_y - half);
    px0 = px0 < 0 ? 0 : px0;
    py0 = py0 < 0 ? 0 : py0;
    px1 = px1 > view->width - 1 ? view->width - 1 : px1;
    py1 = py1 > view->height - 1 ? view->height - 1 : py1;
    if (px0 > px1 || py0 > py1)
        return 0;
    t->px0 = (int32_t)px0;
    t->px1 = (int32_t)px1;
    t->py0 = (int32_t)py0;
    t->py1 = (int32_t)py1;

    /* depth plane z(p) = z0 + dzdx (p.x - x0) + dzdy (p.y - y0) by Cramer's rule; the edge
     * vectors are exact in float (< 2^24), the determinant is the (rounded) area */
    const float e1x = (float)(b.x - a.x), e1y = (float)(b.y - a.y);
    const float e2x = (float)(c.x - a.x), e2y = (float)(c.y - a.y);
    const float dz1 = VR_FSUB(b.z, a.z), dz2 = VR_FSUB(c.z, a.z);
    const float det = VR_I64_TO_F(area);
    t->x0 = a.x;
    t->y0 = a.y;
    t->z0 = a.z;
    t->dzdx = VR_FDIV(VR_FSUB(VR_FMUL(dz1, e2y), VR_FMUL(dz2, e1y)), det);
    t->dzdy = VR_FDIV(VR_FSUB(VR_FMUL(dz2, e1x), VR_FMUL(dz1, e2x)), det);
    return 1;
}

/* Edge function k at sub-pixel point (x, y), bias included. */
VR_HD int64_t vr_raster_edge(const vr_raster_tri *t, int k, int64_t x, int64_t y)
{
    return t->dx[k] * (y - t->ay[k]) - t->dy[k] * (x - t->ax[k]) + t->bias[k];
}

/* Sub-pixel coordinate of the centre of pixel column or row i. */
VR_HD int64_t vr_raster_centre(int32_t i)
{
    return (int64_t)i * VR_RASTER_SUBPIXEL + VR_RASTER_SUBPIXEL / 2;
}

/* The visibility word of a covered pixel centre (x, y): depth bits (clamped to [0, 1]; the
 * clipped polygon lies inside, rounding may not) above the slot. Depth floats >= 0 order like
 * their bit patterns, so atomicMin on the word is a depth test with ties to the smaller slot. */
VR_HD uint64_t vr_raster_word(const vr_raster_tri *t, int64_t x, int64_t y, uint32_t slot)
{
    const float fx = (float)(x - t->x0), fy = (float)(y - t->y0); /* exact: < 2^24 */
    float z = VR_FADD(t->z0, VR_FADD(VR_FMUL(t->dzdx, fx), VR_FMUL(t->dzdy, fy)));
    if (!(z > 0.0f))
        z = 0.0f; /* also turns -0.0f (bits 0x80000000) into +0 */
    if (z > 1.0f)
        z = 1.0f;
    return (uint64_t)vr_float_bits(z) << 32 | slot;
}

/* ---- resolve ----------------------------------------------------------------------------- */

VR_HD float vr_clamp01(float x) { return x > 0.0f ? (x < 1.0f ? x : 1.0f) : 0.0f; }

VR_HD uint32_t vr_pack_rgba(float r, float g, float b)
{
    const uint32_t r8 = (uint32_t)VR_FADD(VR_FMUL(vr_clamp01(r), 255.0f), 0.5f);
    const uint32_t g8 = (uint32_t)VR_FADD(VR_FMUL(vr_clamp01(g), 255.0f), 0.5f);
    const uint32_t b8 = (uint32_t)VR_FADD(VR_FMUL(vr_clamp01(b), 255.0f), 0.5f);
    return r8 | g8 << 8 | b8 << 16 | 0xff000000u;
}

/* Heatmap ramp of a (fractional) shading count: green at 1, yellow at 3.5, dark red at 6+. */
VR_HD void vr_heat_colour(float count, float rgb[3])
{
    const float t = vr_clamp01(VR_FDIV(VR_FSUB(count, 1.0f), 5.0f));
    /* two linear segments; selects instead of a table keep the device version in registers */
    const int hi = t >= 0.5f;
    const float f = hi ? VR_FSUB(VR_FMUL(t, 2.0f), 1.0f) : VR_FMUL(t, 2.0f);
    const float r0 = hi ? 0.98f : 0.10f, g0 = hi ? 0.86f : 0.72f, b0 = hi ? 0.10f : 0.16f;
    const float r1 = hi ? 0.66f : 0.98f, g1 = hi ? 0.02f : 0.86f, b1 = hi ? 0.02f : 0.10f;
    rgb[0] = VR_FADD(r0, VR_FMUL(f, VR_FSUB(r1, r0)));
    rgb[1] = VR_FADD(g0, VR_FMUL(f, VR_FSUB(g1, g0)));
    rgb[2] = VR_FADD(b0, VR_FMUL(f, VR_FSUB(b1, b0)));
}

/* A well-spread colour per batch id: hue from an integer hash, fixed saturation and value. */
VR_HD void vr_batch_colour(uint32_t id, float rgb[3])
{
    uint32_t h = id;
    h ^= h >> 16;
    h *= 0x7feb352du;
    h ^= h >> 15;
    h *= 0x846ca68bu;
    h ^= h >> 16;
    const float hue6 = VR_FMUL((float)(h >> 8), 6.0f / 16777216.0f); /* [0, 6) */
    const float s = 0.62f, v = 0.95f;
    const int sector = (int)hue6 < 5 ? (int)hue6 : 5;
    const float f = VR_FSUB(hue6, (float)sector);
    const float p = VR_FMUL(v, VR_FSUB(1.0f, s));
    const float q = VR_FMUL(v, VR_FSUB(1.0f, VR_FMUL(s, f)));
    const float u = VR_FMUL(v, VR_FSUB(1.0f, VR_FMUL(s, VR_FSUB(1.0f, f))));
    switch (sector) {
    case 0: rgb[0] = v, rgb[1] = u, rgb[2] = p; break;
    case 1: rgb[0] = q, rgb[1] = v, rgb[2] = p; break;
    case 2: rgb[0] = p, rgb[1] = v, rgb[2] = u; break;
    case 3: rgb[0] = p, rgb[1] = q, rgb[2] = v; break;
    case 4: rgb[0] = u, rgb[1] = p, rgb[2] = v; break;
    default: rgb[0] = v, rgb[1] = p, rgb[2] = q; break;
    }
}

/* Streamed chunks (vr_resolve_stream_chunk): 1 when the pixel is left as it is, because its
 * word names a triangle of another chunk - an earlier chunk wrote its colour, or a later one
 * will (the word is the minimum so far, so the chunk that holds the final one resolves last
 * among those that touch the pixel). An empty pixel gets the background from every chunk. */
VR_HD int vr_resolve_keeps(uint64_t word, const vr_raster_view *view, uint32_t tri_count,
                           const vr_resolve_params *p)
{
    return p->part == VR_RESOLVE_PART_KEEP && word != VR_VIS_EMPTY &&
           (uint32_t)word - view->slot_base >= tri_count;
}

/* Colour of pixel (i, j) holding visibility word `word`. The barycentrics are perspective
 * correct and need no clipping: with the clip-space corners V_k = (x, y, w) as columns of M,
 * M^-1 (ndc_x, ndc_y, 1) is proportional to them (Olano and Greer 1997), and the rows of M^-1
 * are the cross products V1 x V2, V2 x V0, V0 x V1. */
VR_HD uint32_t vr_resolve_pixel(uint64_t word, int32_t i, int32_t j, const vr_raster_view *view,
                                const vr_queue *q, uint32_t tri_count, const vr_resolve_params *p)
{
    if (word == VR_VIS_EMPTY)
        return p->background;
    const uint32_t slot = (uint32_t)word - view->slot_base; /* below the base: wraps, too big */
    if (slot >= tri_count)
        return p->part ? 0u : VR_RESOLVE_ERROR_RGBA;
    const float nx = VR_FSUB(VR_FMUL(VR_FADD((float)i, 0.5f), view->pixel_ndc_x), 1.0f);
    const float ny = VR_FSUB(1.0f, VR_FMUL(VR_FADD((float)j, 0.5f), view->pixel_ndc_y));
    const float *c = q->clip + 12 * (size_t)slot;
    float lam[3], sum = 0.0f;
    for (int k = 0; k < 3; ++k) {
        const float *a = c + 4 * (k == 2 ? 0 : k + 1), *b = c + 4 * (k == 0 ? 2 : k - 1);
        /* row k of adj(M): V_{k+1} x V_{k+2} over (x, y, w) */
        const float rx = VR_FSUB(VR_FMUL(a[1], b[3]), VR_FMUL(a[3], b[1]));
        const float ry = VR_FSUB(VR_FMUL(a[3], b[0]), VR_FMUL(a[0], b[3]));
        const float rw = VR_FSUB(VR_FMUL(a[0], b[1]), VR_FMUL(a[1], b[0]));
        lam[k] = VR_FADD(VR_FADD(VR_FMUL(rx, nx), VR_FMUL(ry, ny)), rw);
        sum = VR_FADD(sum, lam[k]);
    }
    for (int k = 0; k < 3; ++k)
        lam[k] = sum != 0.0f && fabsf(sum) <= FLT_MAX ? VR_FDIV(lam[k], sum) : 1.0f / 3.0f;

    /* Lambert term from the interpolated, renormalised normal; two-sided so open meshes and
     * inner walls are lit too */
    const float *nrm = q->normal + 12 * (size_t)slot;
    float n[3];
    for (int a = 0; a < 3; ++a)
        n[a] = VR_FADD(VR_FADD(VR_FMUL(lam[0], nrm[a]), VR_FMUL(lam[1], nrm[4 + a])),
                       VR_FMUL(lam[2], nrm[8 + a]));
    const float len2 = VR_FADD(VR_FADD(VR_FMUL(n[0], n[0]), VR_FMUL(n[1], n[1])),
                               VR_FMUL(n[2], n[2]));
    float diffuse = 0.0f;
    if (len2 > 0.0f && len2 <= FLT_MAX) {
        const float d = VR_FADD(VR_FADD(VR_FMUL(n[0], p->light[0]), VR_FMUL(n[1], p->light[1])),
                                VR_FMUL(n[2], p->light[2]));
        diffuse = vr_clamp01(VR_FDIV(fabsf(d), VR_FSQRT(len2)));
    }

    float rgb[3];
    float ambient;
    if (p->mode == VR_SHADE_HEATMAP) {
        float count = 0.0f;
        for (int k = 0; k < 3; ++k) {
            const uint32_t v = q->vertex[3 * (size_t)slot + k];
            if (v >= p->vertex_count)
                return VR_RESOLVE_ERROR_RGBA;
            count = VR_FADD(count, VR_FMUL(lam[k], (float)p->shade_counts[v]));
        }
        vr_heat_colour(count, rgb);
        ambient = 0.5f;
    } else if (p->mode == VR_SHADE_BATCHES) {
        const uint32_t tri = q->tri_id[slot];
        if (tri >= p->tri_batch_count)
            return VR_RESOLVE_ERROR_RGBA;
        vr_batch_colour(p->tri_batch[tri], rgb);
        ambient = 0.3f;
    } else {
        rgb[0] = 0.86f;
        rgb[1] = 0.84f;
        rgb[2] = 0.78f;
        ambient = 0.12f;
    }
    const float shade = VR_FADD(ambient, VR_FMUL(VR_FSUB(1.0f, ambient), diffuse));
    return vr_pack_rgba(VR_FMUL(rgb[0], shade), VR_FMUL(rgb[1], shade), VR_FMUL(rgb[2], shade));
}

#endif
