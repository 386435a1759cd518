/* dice.h - the "Dicer" of Ziegler et al. ("On-the-fly Point Clouds through Histogram Pyramids",
 * ../shared/papers/002): a mesh turned into the point cloud of its surface voxels by rendering it
 * into the N slices of an N^3 volume with vreuse's own geometry stage and rasterizer, then
 * listing each slice's covered cells with a HistoPyramid (pipeline/compact/histopyramid.h).
 * GPU: dice.cu; CPU twin and everything shared: dice.c. The two give the same points in the
 * same order. See dice.c for what "covered" means and why it is robust.
 * Try: `vreuse dice teapot.obj --volume 256 -o teapot.ply --png teapot.png`, `vreuse_tests dice/`.
 */
#ifndef VR_DICE_H
#define VR_DICE_H

#include <stdint.h>

#include "pipeline/vreuse.h"
#include "reuse/shaders.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Slab margin: slice k covers voxel depths [k - 1/2^VR_DICE_MARGIN_LOG2, k + 1 + 1/2^...]. */
#define VR_DICE_MARGIN_LOG2 6

/* The mesh fitted into the unit cube: u = (p - center) * scale + 0.5 (uniform scale, centred;
 * the longest side spans [0, 1]). */
typedef struct vr_dice_fit {
    double center[3]; /* bounding-box centre, mesh units */
    double scale;     /* 1 / longest bounding-box side, > 0 */
} vr_dice_fit;

/* The fit of mesh `m` over its referenced vertices. VR_ERR_FORMAT when a referenced position is
 * not finite or all of them coincide (nothing to slice). */
vr_status vr_dice_fit_make(vr_dice_fit *f, const vr_mesh *m);

/* The orthographic camera of slice k (0 <= k < volume) of the fitted volume: clip x = 2 u_x - 1,
 * clip y = 1 - 2 u_y (so image row r holds cells y = r), clip z spans the slab with its margin
 * (near plane -1, far +1), w = 1. The normal matrix is the identity; loop_iterations 0. */
void vr_dice_slice_shader(vr_shader *s, const vr_dice_fit *f, uint32_t volume, uint32_t k);

/* The surface points of one dicing, in order: slice by slice, within a slice in cell order
 * (row-major, y then x). All arrays are malloc'd host memory owned by the result. */
typedef struct vr_dice_result {
    uint32_t volume;        /* N */
    vr_dice_fit fit;
    uint32_t count;         /* points */
    uint32_t capacity;      /* points `cells` has room for */
    uint32_t *cells;        /* 3 * count: cell (x, y, k), each < volume */
    uint32_t *slice_points; /* volume: points of slice k */
    double *slice_ms;       /* volume: time of slice k (GPU: cudaEvents around the geometry
                               stage, the rasterizer and the HistoPyramid; CPU: wall clock) */
    int gpu;                /* 1: GPU, 0: CPU twins */
} vr_dice_result;

/* Dices mesh `m` (validated first) into a volume x volume x volume grid
 * (VR_DICE_VOLUME_MIN..VR_DICE_VOLUME_MAX, VR_ERR_ARG otherwise), on the GPU with `use_gpu`
 * (VR_ERR_NO_DEVICE without one), else with the CPU twins. `out` is overwritten (free it with
 * vr_dice_result_free, also after a failure). */
vr_status vr_dice(vr_dice_result *out, const vr_mesh *m, uint32_t volume, int use_gpu);
void vr_dice_result_free(vr_dice_result *r); /* accepts a zeroed struct */

/* Point i's position in the mesh's frame: its cell centre mapped back through the fit. */
void vr_dice_position(float p[3], const vr_dice_result *r, uint32_t i);
/* Every point's position: xyz (3 * r->count floats, owned by the caller). */
void vr_dice_positions(float *xyz, const vr_dice_result *r);

/* A picture of the cloud: an orthographic view of the unit cube turned by 30 degrees about y and
 * tilted 20 degrees down, every point a square splat of about one voxel, nearest wins, shaded
 * from light (near) to dark (far) on a dark background. rgba: size * size * 4 bytes. */
void vr_dice_splat(uint8_t *rgba, uint32_t size, const vr_dice_result *r);

/* Internal, shared by dice.c and dice.cu: appends slice k's `n` cells (indices y * volume + x,
 * increasing) to r and records its time. VR_ERR_OOM when the arrays cannot grow. */
vr_status vr_dice_append(vr_dice_result *r, uint32_t k, const uint32_t *cells, uint32_t n,
                         double ms);
/* The GPU half (dice.cu; without CUDA a stub returning VR_ERR_NO_DEVICE): fills r's slices. */
vr_status vr_dice_gpu(vr_dice_result *r, const vr_mesh *m);

#ifdef __cplusplus
}
#endif
#endif
