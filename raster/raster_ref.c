/* raster_ref.c - CPU twin of raster/raster.cu: the same clipping, fixed-point setup and depth
 * words (raster_common.h), one plain loop per triangle over its bounding box, a min instead of
 * atomicMin, and the same per-pixel resolve. Its visibility buffer and image are the oracle the
 * GPU must match bit for bit. Without CUDA this file also provides the GPU entry points as stubs
 * that report VR_ERR_NO_DEVICE.
 * Try: `vreuse_tests raster/`, `vreuse render sphere --out sphere.png` on a machine without a GPU.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include "raster/raster_common.h"

#include <assert.h>
#include <stdlib.h>
#include <time.h>

vr_status vr_raster_config_check(const vr_raster_config *cfg)
{
    assert(cfg);
    if (cfg->width < 1 || cfg->width > VR_RASTER_MAX_SIZE || cfg->height < 1 ||
        cfg->height > VR_RASTER_MAX_SIZE)
        return VR_ERROR(VR_ERR_ARG, "raster size %ux%u out of range (1..%u per side)", cfg->width,
                        cfg->height, VR_RASTER_MAX_SIZE);
    if (cfg->big_mode < 0 || cfg->big_mode >= VR_RASTER_BIG_MODE_COUNT)
        return VR_ERROR(VR_ERR_ARG, "raster big_mode %d out of range (0 list, 1 hp)",
                        cfg->big_mode);
    return VR_OK;
}

const char *vr_raster_big_mode_name(int mode)
{
    static const char *const names[VR_RASTER_BIG_MODE_COUNT] = {"list", "hp"};
    return mode >= 0 && mode < VR_RASTER_BIG_MODE_COUNT ? names[mode] : NULL;
}

vr_status vr_raster_check_input(const vr_raster_config *cfg, const vr_queue *q, uint32_t tri_count)
{
    assert(q);
    vr_status s = vr_raster_config_check(cfg);
    if (s != VR_OK)
        return s;
    if (tri_count > q->capacity)
        return VR_ERROR(VR_ERR_ARG, "raster: %u triangles, but the queue holds %u slots", tri_count,
                        q->capacity);
    if ((uint64_t)cfg->slot_base + tri_count >= 0xffffffffu)
        return VR_ERROR(VR_ERR_OVERFLOW, "raster: %u triangles from stream position %u; slot ~0 "
                                         "is reserved for empty pixels (at most 2^32 - 2 in all)",
                        tri_count, cfg->slot_base);
    if (tri_count > 0)
        assert(q->clip);
    return VR_OK;
}

/* Rasterizes every slot; with `counts` the overdraw is accumulated instead of the depth test. */
static void vr_raster_slots(uint64_t *vis, uint32_t *counts, const vr_queue *q, uint32_t tri_count,
                            const vr_raster_view *view, vr_raster_stats *st)
{
    const size_t pitch = (size_t)view->width;
    for (uint32_t slot = 0; slot < tri_count; ++slot) {
        float poly[VR_CLIP_MAX_VERTS][4];
        int clipped;
        const int n = vr_raster_clip(poly, q->clip + 12 * (size_t)slot, view, &clipped);
        st->clipped += (uint64_t)clipped;
        vr_raster_vertex sv[VR_CLIP_MAX_VERTS];
        for (int k = 0; k < n; ++k)
            sv[k] = vr_raster_snap(poly[k], view);
        int kept = 0;
        /* fan around vertex 0; the shared diagonals are split exactly by the fill rule */
        for (int s = 1; s + 1 < n; ++s) {
            vr_raster_tri t;
            const int r = vr_raster_tri_setup(&t, sv[0], sv[s], sv[s + 1], view);
            kept |= r >= 0;
            if (r <= 0)
                continue;
            const int64_t x0 = vr_raster_centre(t.px0);
            for (int32_t py = t.py0; py <= t.py1; ++py) {
                const int64_t y = vr_raster_centre(py);
                int64_t e0 = vr_raster_edge(&t, 0, x0, y), e1 = vr_raster_edge(&t, 1, x0, y),
                        e2 = vr_raster_edge(&t, 2, x0, y);
                const int64_t s0 = -t.dy[0] * VR_RASTER_SUBPIXEL, s1 = -t.dy[1] * VR_RASTER_SUBPIXEL,
                              s2 = -t.dy[2] * VR_RASTER_SUBPIXEL;
                for (int32_t px = t.px0; px <= t.px1; ++px, e0 += s0, e1 += s1, e2 += s2) {
                    if ((e0 | e1 | e2) < 0)
                        continue;
                    ++st->fragments;
                    const size_t at = (size_t)py * pitch + (size_t)px;
                    if (counts) {
                        ++counts[at];
                        continue;
                    }
                    const uint64_t w =
                        vr_raster_word(&t, vr_raster_centre(px), y, view->slot_base + slot);
                    if (w < vis[at])
                        vis[at] = w;
                }
            }
        }
        st->rejected += (uint64_t)!kept;
    }
    st->triangles += tri_count;
}

vr_status vr_raster_ref(uint64_t *vis, const vr_queue *q, uint32_t tri_count,
                        const vr_raster_config *cfg, vr_raster_stats *stats)
{
    assert(vis && q && cfg);
    vr_status s = vr_raster_check_input(cfg, q, tri_count);
    if (s != VR_OK)
        return s;
    vr_raster_stats local;
    vr_raster_stats *st = stats ? stats : &local;
    memset(st, 0, sizeof *st);
    const vr_raster_view view = vr_raster_view_make(cfg);
    double t0 = vr_now_ms();
    const size_t pixels = (size_t)cfg->width * cfg->height;
    for (size_t i = 0; i < pixels; ++i)
        vis[i] = VR_VIS_EMPTY;
    double t1 = vr_now_ms();
    vr_raster_slots(vis, NULL, q, tri_count, &view, st);
    st->clear_ms = t1 - t0;
    st->raster_ms = vr_now_ms() - t1;
    return VR_OK;
}

vr_status vr_raster_ref_overdraw(uint32_t *counts, const vr_queue *q, uint32_t tri_count,
                                 const vr_raster_config *cfg)
{
    assert(counts && q && cfg);
    vr_status s = vr_raster_check_input(cfg, q, tri_count);
    if (s != VR_OK)
        return s;
    vr_raster_stats st;
    memset(&st, 0, sizeof st);
    const vr_raster_view view = vr_raster_view_make(cfg);
    memset(counts, 0, (size_t)cfg->width * cfg->height * sizeof *counts);
    vr_raster_slots(NULL, counts, q, tri_count, &view, &st);
    return VR_OK;
}

/* ---- resolve ----------------------------------------------------------------------------- */

vr_resolve_params vr_resolve_params_default(void)
{
    vr_resolve_params p;
    memset(&p, 0, sizeof p);
    p.mode = VR_SHADE_LAMBERT;
    /* towards the upper left, behind the viewer: normalize(-0.35, 0.55, 0.76) */
    p.light[0] = -0.3500f;
    p.light[1] = 0.5500f;
    p.light[2] = 0.7584f;
    p.background = 0xff2a2522u; /* dark grey, slightly warm */
    return p;
}

vr_status vr_resolve_check(const vr_resolve_params *p)
{
    assert(p);
    if ((unsigned)p->mode >= VR_SHADE_MODE_COUNT)
        return VR_ERROR(VR_ERR_ARG, "resolve: unknown shading mode %d", (int)p->mode);
    if (p->mode == VR_SHADE_HEATMAP && !p->shade_counts)
        return VR_ERROR(VR_ERR_ARG, "resolve: heatmap mode needs per-vertex shade counts "
                                    "(run the geometry stage with counting on)");
    if (p->mode == VR_SHADE_BATCHES && !p->tri_batch)
        return VR_ERROR(VR_ERR_ARG, "resolve: batch mode needs a batch id per triangle");
    return VR_OK;
}

vr_status vr_resolve_ref(uint8_t *rgba, const uint64_t *vis, const vr_queue *q, uint32_t tri_count,
                         const vr_raster_config *cfg, const vr_resolve_params *p, double *ms)
{
    assert(rgba && vis && q && cfg && p);
    vr_status s = vr_raster_check_input(cfg, q, tri_count);
    if (s == VR_OK)
        s = vr_resolve_check(p);
    if (s != VR_OK)
        return s;
    const double t0 = vr_now_ms();
    const vr_raster_view view = vr_raster_view_make(cfg);
    for (int32_t j = 0; j < view.height; ++j)
        for (int32_t i = 0; i < view.width; ++i) {
            const size_t at = (size_t)j * cfg->width + (size_t)i;
            if (vr_resolve_keeps(vis[at], &view, tri_count, p))
                continue;
            const uint32_t c = vr_resolve_pixel(vis[at], i, j, &view, q, tri_count, p);
            memcpy(rgba + 4 * at, &c, 4); /* little-endian: red is the low byte */
        }
    if (ms)
        *ms = vr_now_ms() - t0;
    return VR_OK;
}

/* ---- stubs of the GPU half when built without CUDA ------------------------------------------ */
#ifndef VR_HAVE_CUDA
static vr_status vr_raster_no_cuda(void)
{
    return VR_ERROR(VR_ERR_NO_DEVICE, VR_NO_CUDA_BUILD);
}

vr_status vr_raster_gpu(uint64_t *d_vis, const vr_queue *d_q, uint32_t tri_count,
                        const vr_raster_config *cfg, vr_raster_stats *stats, void *d_scratch,
                        void *stream)
{
    (void)d_vis, (void)d_q, (void)tri_count, (void)cfg, (void)stats, (void)d_scratch, (void)stream;
    return vr_raster_no_cuda();
}

size_t vr_raster_scratch_bytes(void) { return 0; }

vr_status vr_resolve_gpu(uint8_t *d_rgba, const uint64_t *d_vis, const vr_queue *d_q,
                         uint32_t tri_count, const vr_raster_config *cfg,
                         const vr_resolve_params *p, double *ms, void *stream)
{
    (void)d_rgba, (void)d_vis, (void)d_q, (void)tri_count, (void)cfg, (void)p, (void)ms,
        (void)stream;
    return vr_raster_no_cuda();
}

vr_status vr_raster_frame_enqueue(uint8_t *d_rgba, uint64_t *d_vis, const vr_queue *d_q,
                                  uint32_t tri_count, const vr_raster_config *cfg,
                                  const vr_resolve_params *p, void *d_scratch, uint8_t *d_tiles,
                                  void *stream)
{
    (void)d_rgba, (void)d_vis, (void)d_q, (void)tri_count, (void)cfg, (void)p, (void)d_scratch,
        (void)d_tiles, (void)stream;
    return vr_raster_no_cuda();
}

vr_status vr_raster_tiles_clear_enqueue(uint64_t *d_vis, const vr_raster_config *cfg,
                                        uint8_t *d_tiles, void *stream)
{
    (void)d_vis, (void)cfg, (void)d_tiles, (void)stream;
    return vr_raster_no_cuda();
}

vr_status vr_raster_frame_counts(vr_raster_stats *stats, uint32_t tri_count, void *d_scratch,
                                 void *stream)
{
    (void)stats, (void)tri_count, (void)d_scratch, (void)stream;
    return vr_raster_no_cuda();
}

vr_status vr_raster_device_create(vr_raster_device **out, uint32_t tri_capacity,
                                  uint32_t vertex_count)
{
    (void)tri_capacity, (void)vertex_count;
    *out = NULL;
    return vr_raster_no_cuda();
}

void vr_raster_device_destroy(vr_raster_device *d) { (void)d; }

vr_status vr_raster_device_upload(vr_raster_device *d, const vr_queue *h_q, uint32_t tri_count,
                                  const uint32_t *h_shade_counts, const uint32_t *h_tri_batch,
                                  uint32_t tri_batch_count, vr_raster_stats *stats)
{
    (void)d, (void)h_q, (void)tri_count, (void)h_shade_counts, (void)h_tri_batch,
        (void)tri_batch_count, (void)stats;
    return vr_raster_no_cuda();
}

vr_status vr_raster_device_draw(vr_raster_device *d, uint8_t *h_rgba, uint64_t *h_vis,
                                const vr_queue *d_q, uint32_t tri_count,
                                const vr_raster_config *cfg, const vr_resolve_params *p,
                                vr_raster_stats *stats)
{
    (void)d, (void)h_rgba, (void)h_vis, (void)d_q, (void)tri_count, (void)cfg, (void)p,
        (void)stats;
    return vr_raster_no_cuda();
}
#endif
