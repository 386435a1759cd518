/* shaders.h - the vertex shaders, shared verbatim by the GPU batchers and the CPU references
 * (VR_HD is __host__ __device__ under nvcc and nothing in C).
 *
 * `simple` is the paper's matrix-multiply shader: clip = MVP * (p, 1), n' = N * n.
 * The synthetic loads add a dependent multiply-add chain of `loop_iterations` steps whose result
 * guards a branch that can never be taken, so the compiler must keep the chain while the
 * output stays bit-identical to `simple` (CPU and GPU references then compare the same values).
 */
#ifndef VR_SHADERS_H
#define VR_SHADERS_H

#include <stdint.h>

#include "pipeline/hd.h"

/* Products and sums that must round the same on the CPU and the GPU: nvcc contracts a * b + c
 * into one FMA (one rounding) while the host rounds twice, which moves clip coordinates by an
 * ulp and flips edge pixels. The _rn intrinsics are never contracted; the host build uses
 * -ffp-contract=off. With them the GPU queue and image equal the CPU twins bit for bit. */
#ifdef __CUDA_ARCH__
#define VR_FMUL(a, b) __fmul_rn((a), (b))
#define VR_FADD(a, b) __fadd_rn((a), (b))
#define VR_FSUB(a, b) __fsub_rn((a), (b))
#else
#define VR_FMUL(a, b) ((a) * (b))
#define VR_FADD(a, b) ((a) + (b))
#define VR_FSUB(a, b) ((a) - (b))
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vr_shader {
    float mvp[16];            /* column-major model-view-projection */
    float normal_matrix[9];   /* column-major 3x3 (inverse transpose of model-view) */
    uint32_t loop_iterations; /* synthetic load: dependent FMA steps per invocation, 0 = simple */
} vr_shader;

/* One shaded vertex as the triangle queue stores it. */
typedef struct vr_shaded {
    float clip[4];   /* clip-space position */
    float normal[3]; /* transformed normal */
} vr_shaded;

VR_HD void vr_shade(const vr_shader *s, const float *p, const float *n, vr_shaded *out)
{
    for (int r = 0; r < 4; ++r)
        out->clip[r] = VR_FADD(VR_FADD(VR_FADD(VR_FMUL(s->mvp[r], p[0]), VR_FMUL(s->mvp[4 + r], p[1])),
                                       VR_FMUL(s->mvp[8 + r], p[2])),
                               s->mvp[12 + r]);
    for (int r = 0; r < 3; ++r)
        out->normal[r] = VR_FADD(VR_FADD(VR_FMUL(s->normal_matrix[r], n[0]),
                                         VR_FMUL(s->normal_matrix[3 + r], n[1])),
                                 VR_FMUL(s->normal_matrix[6 + r], n[2]));
    if (s->loop_iterations) {
        /* x stays in [0.5, 1.5): a contraction toward 1, so no overflow or denormals */
        float x = 1.0f + 0.25f * (p[0] - (float)(int)p[0]);
        for (uint32_t i = 0; i < s->loop_iterations; ++i)
            x = x * 0.999f + 0.001f;
        if (x == -1.0f) /* never true; keeps the chain alive */
            out->clip[3] += 1.0f;
    }
}

/* Why the geometry stage drops a triangle (params.cull != 0); VR_CULL_KEPT when it does not.
 * The order of the tests is the order of the reasons: a triangle outside the frustum counts
 * there even if it also faces away. */
typedef enum vr_cull_reason {
    VR_CULL_KEPT = 0,
    VR_CULL_FRUSTUM,   /* all three vertices beyond one clip plane */
    VR_CULL_BACKFACE,  /* in front of the eye and clockwise on screen (unless two-sided) */
    VR_CULL_ZERO_AREA, /* in front of the eye and of zero area on screen */
    /* Not a result of vr_cull_classify: a whole batch of a static plan dropped before shading
     * because its bounds prove every triangle above would be dropped for one of the reasons
     * before (reuse/cluster_cull.h; vr_reuse_params.cluster_cull). */
    VR_CULL_CLUSTER,
    VR_CULL_REASON_COUNT
} vr_cull_reason;
/* The reasons vr_cull_classify returns: VR_CULL_KEPT .. VR_CULL_ZERO_AREA. */
#define VR_CULL_TRIANGLE_REASONS ((int)VR_CULL_CLUSTER)

/* The culling decision shared by GPU and CPU: VR_CULL_FRUSTUM when all three vertices lie
 * outside one clip plane; otherwise, when all are in front of the eye (w > 0), the projected
 * triangle's signed area decides: zero is VR_CULL_ZERO_AREA, negative (clockwise; counter-
 * clockwise is front) VR_CULL_BACKFACE unless `two_sided`. A triangle that crosses the eye
 * plane is kept for the rasterizer's near clipping. */
VR_HD vr_cull_reason vr_cull_classify(const vr_shaded *a, const vr_shaded *b, const vr_shaded *c,
                                      int two_sided)
{
    const vr_shaded *v[3] = {a, b, c};
    for (int axis = 0; axis < 3; ++axis) {
        int above = 0, below = 0;
        for (int k = 0; k < 3; ++k) {
            above += v[k]->clip[axis] > v[k]->clip[3];
            below += v[k]->clip[axis] < -v[k]->clip[3];
        }
        if (above == 3 || below == 3)
            return VR_CULL_FRUSTUM;
    }
    if (a->clip[3] <= 0.0f || b->clip[3] <= 0.0f || c->clip[3] <= 0.0f)
        return VR_CULL_KEPT; /* crosses the eye plane: leave it to the rasterizer's near clipping */
    float ax = a->clip[0] / a->clip[3], ay = a->clip[1] / a->clip[3];
    float bx = b->clip[0] / b->clip[3], by = b->clip[1] / b->clip[3];
    float cx = c->clip[0] / c->clip[3], cy = c->clip[1] / c->clip[3];
    float area2 = VR_FSUB(VR_FMUL(VR_FSUB(bx, ax), VR_FSUB(cy, ay)), VR_FMUL(VR_FSUB(cx, ax), VR_FSUB(by, ay)));
    if (area2 == 0.0f)
        return VR_CULL_ZERO_AREA;
    return area2 < 0.0f && !two_sided ? VR_CULL_BACKFACE : VR_CULL_KEPT;
}

/* 1 when the one-sided stage drops the triangle (any reason above). */
VR_HD int vr_cull_triangle(const vr_shaded *a, const vr_shaded *b, const vr_shaded *c)
{
    return vr_cull_classify(a, b, c, 0) != VR_CULL_KEPT;
}

#ifdef __cplusplus
}
#endif
#endif
