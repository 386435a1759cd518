/* cluster_cull.h - culling a whole batch of a static plan (patch, meshlet) before shading, as mesh
 * shaders cull meshlets: a frustum test on the batch's bounding box and a normal-cone backface
 * test. The test is CONSERVATIVE: it answers 1 only when every triangle of the batch would be
 * dropped by vr_cull_classify (reuse/shaders.h) with the float rounding of vr_shade, so the queue
 * is exactly the one without it; only invocations and time change. Shared verbatim by
 * reuse/plan.cuh and the twin (reuse/dyn_ref_common.h); the bounds come with the plan
 * (vr_batch_plan_bounds, reuse/patches.c). Try: `vreuse_tests reuse/clustercull`,
 * `vreuse bench sphere:1M --strategy patch,meshlet --cull ink --cluster-cull off,on`.
 *
 * Why it is exact. u = 2^-24 (float rounding); vr_shade computes clip row r of a vertex p as
 * ((m_r0 p0 + m_r1 p1) + m_r2 p2) + m_r3, each operation rounded (_rn, never contracted), so
 * the computed value is within gamma_4 A_r + eta of the exact one, where gamma_4 = 4u / (1 - 4u)
 * and A_r = sum_j |m_rj p_j| + |m_r3| (Higham, Sec. 3.1; eta < 1e-37 covers underflow, even
 * flushed to zero). Over a box, |p_j| <= P_j = max(|lo_j|, |hi_j|) bounds A_r, and we take
 * E_r = 2^-20 A_r + 1e-36, four times gamma_4 A_r: the rest covers this test's own rounding,
 * which runs in double (53 bits, errors near 2^-50 A) with the same _rn operations on both sides,
 * so the GPU and the twin take the same decision.
 * - Frustum: vr_cull_classify drops a triangle whose three computed vertices all have
 *   s x_a > w (axis a = x, y, z, s = +1 or -1). h(p) = s x_a(p) - w(p) is affine in p, so its
 *   minimum over the box is at a corner; if that minimum exceeds E_a + E_w, every vertex in the
 *   box - every vertex of the batch - satisfies the computed comparison, and every triangle is
 *   VR_CULL_FRUSTUM.
 * - Eye plane: w > 2 E_w over the box (W1 = min w - 2 E_w > 0) makes every computed w > 0, so
 *   the projected area decides each triangle not dropped by the frustum.
 * - Backface: with rows x, y, w of the MVP as N = [R | t], the projected triangle's signed area is
 *   det[x y w]_abc / (w_a w_b w_c) = (E_w a - E_xyz) . n / (w_a w_b w_c), with n = (b-a) x (c-a),
 *   E_w = det R and E_xyz = -adj(R) t (the eye in homogeneous object coordinates; no division, so
 *   orthographic cameras work too). The cone (axis d, half-angle alpha < 90 degrees, every
 *   triangle's unit normal within alpha of d) and the box (centre q, half-diagonal R_b) give, for
 *   every triangle, v = E_xyz - E_w a with n^ . v >= D = cos(alpha) (d . v_q) - sin(alpha)
 *   |d x v_q| - |E_w| R_b (spherical triangle inequality). D > 0 proves each exact projected area
 *   <= -|n| D / Whi^3 < 0 (Whi bounds w). The computed area differs from it by the projected
 *   vertices' errors, eps = (E_x + (X / W1) E_w) / W1 + u X / W1 per coordinate (X bounds |x|),
 *   and the rounding of the five area operations: over screen edges <= l = G L (G bounds the
 *   projection's gradient over the box, L = the triangle's longest object-space edge) it is at
 *   most 8 eps l + 9 eps^2 + 4 gamma_3 l^2 + 1e-36. With shape = min |n| / L^2 and edge_min =
 *   min L over the batch (both stored rounded down), it suffices that
 *   shape D / Whi^3 > 8 eps G / edge_min + 9 eps^2 / edge_min^2 + 16 u G^2 + 1e-36 / edge_min^2,
 *   which we ask with a factor 2 to spare; then every computed area is < 0 (VR_CULL_BACKFACE) or
 *   rounds to 0 (VR_CULL_ZERO_AREA). A batch with a degenerate triangle (|n| = 0: its computed
 *   area can have either sign) has no cone and is culled by the frustum test only.
 * Skipped triangles are counted as VR_CULL_CLUSTER: the test proves "dropped", not which of the
 * three reasons vr_cull_classify would give, so the per-reason counts of a run with cluster
 * culling are those of the batches it shaded, plus one count for the skipped ones; the total
 * (kept + culled + overflow = triangles) is unchanged.
 */
#ifndef VR_CLUSTER_CULL_H
#define VR_CLUSTER_CULL_H

#include <stdint.h>

#include "pipeline/hd.h"
#include "reuse/patches.h"
#include "reuse/shaders.h"

#ifndef __CUDA_ARCH__
#include <math.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Double operations that round the same on both sides (no contraction into FMAs). */
#ifdef __CUDA_ARCH__
#define VR_DMUL(a, b) __dmul_rn((a), (b))
#define VR_DADD(a, b) __dadd_rn((a), (b))
#define VR_DSUB(a, b) __dsub_rn((a), (b))
#define VR_DDIV(a, b) __ddiv_rn((a), (b))
#define VR_DSQRT(a) __dsqrt_rn(a)
#else
#define VR_DMUL(a, b) ((a) * (b))
#define VR_DADD(a, b) ((a) + (b))
#define VR_DSUB(a, b) ((a) - (b))
#define VR_DDIV(a, b) ((a) / (b))
#define VR_DSQRT(a) sqrt(a)
#endif

#define VR_CC_REL (1.0 / 1048576.0) /* 2^-20: E_r / A_r, four times gamma_4 */
#define VR_CC_ABS 1e-36             /* absolute term: underflow, flushed or not */
#define VR_CC_U (1.0 / 16777216.0)  /* 2^-24: float unit roundoff */

VR_HD double vr_cc_abs(double x) { return x < 0 ? -x : x; }
VR_HD double vr_cc_max(double a, double b) { return a > b ? a : b; }

/* Minimum (want_max 0) or maximum over the box of c0 p0 + c1 p1 + c2 p2 + c3: at a corner. */
VR_HD double vr_cc_affine(const double c[4], const double lo[3], const double hi[3], int want_max)
{
    double s = c[3];
    for (int j = 0; j < 3; ++j)
        s = VR_DADD(s, VR_DMUL(c[j], (c[j] >= 0) == (want_max != 0) ? hi[j] : lo[j]));
    return s;
}

/* 3x3 determinant of columns a, b, c, and the same with absolute values of its six products
 * (*mag; bounds the magnitude its rounding is relative to). */
VR_HD double vr_cc_det3(const double a[3], const double b[3], const double c[3], double *mag)
{
    const double p[6] = {VR_DMUL(a[0], VR_DMUL(b[1], c[2])), VR_DMUL(a[1], VR_DMUL(b[2], c[0])),
                         VR_DMUL(a[2], VR_DMUL(b[0], c[1])), VR_DMUL(a[2], VR_DMUL(b[1], c[0])),
                         VR_DMUL(a[0], VR_DMUL(b[2], c[1])), VR_DMUL(a[1], VR_DMUL(b[0], c[2]))};
    double d = 0, m = 0;
    for (int k = 0; k < 6; ++k) {
        d = k < 3 ? VR_DADD(d, p[k]) : VR_DSUB(d, p[k]);
        m = VR_DADD(m, vr_cc_abs(p[k]));
    }
    *mag = m;
    return d;
}

/* The backface half of the test (see the file comment): 1 when every triangle of the batch is
 * proved back-facing or of zero area on screen. m: the MVP; lo, hi: the box; E: E_r per row;
 * W1, Whi: bounds of w over the box (W1 > 0). */
VR_HD int vr_cc_backface(const vr_cluster_bounds *b, const float *m, const double lo[3],
                         const double hi[3], const double E[4], double W1, double Whi)
{
    /* X, Y bound |x|, |y| exact and computed; eps the error of a projected coordinate; G the
     * gradient of x / w and y / w over the box (L1 norms of the rows bound the L2 ones) */
    double eps = 0, G = 0;
    for (int r = 0; r < 2; ++r) {
        const double c[4] = {m[r], m[4 + r], m[8 + r], m[12 + r]};
        const double X = VR_DADD(vr_cc_max(vr_cc_abs(vr_cc_affine(c, lo, hi, 0)),
                                           vr_cc_abs(vr_cc_affine(c, lo, hi, 1))),
                                 VR_DMUL(2.0, E[r]));
        if (!(X < VR_DMUL(1e15, W1)))
            return 0; /* projected coordinates this large: no claim (and no overflow) */
        const double ratio = VR_DDIV(X, W1);
        const double e = VR_DADD(VR_DDIV(VR_DADD(E[r], VR_DMUL(ratio, E[3])), W1),
                                 VR_DMUL(VR_CC_U, ratio));
        const double row = VR_DADD(VR_DADD(vr_cc_abs(c[0]), vr_cc_abs(c[1])), vr_cc_abs(c[2]));
        const double roww = VR_DADD(VR_DADD(vr_cc_abs((double)m[3]), vr_cc_abs((double)m[7])),
                                    vr_cc_abs((double)m[11]));
        const double g = VR_DDIV(VR_DADD(row, VR_DMUL(ratio, roww)), W1);
        eps = vr_cc_max(eps, e);
        G = vr_cc_max(G, g);
    }

    /* the homogeneous eye: E_w = det R, E_xyz = -adj(R) t (Cramer: column i replaced by t) */
    const double col[4][3] = {{m[0], m[1], m[3]}, {m[4], m[5], m[7]}, {m[8], m[9], m[11]},
                              {m[12], m[13], m[15]}};
    double ew_mag, mag[3], ex[3];
    const double ew = vr_cc_det3(col[0], col[1], col[2], &ew_mag);
    ex[0] = -vr_cc_det3(col[3], col[1], col[2], &mag[0]);
    ex[1] = -vr_cc_det3(col[0], col[3], col[2], &mag[1]);
    ex[2] = -vr_cc_det3(col[0], col[1], col[3], &mag[2]);

    /* v = E_xyz - E_w q at the box centre, the cone axis normalized */
    double q[3], v[3], half2 = 0, qabs = 0, d[3], dlen2 = 0;
    for (int j = 0; j < 3; ++j) {
        q[j] = VR_DMUL(0.5, VR_DADD(lo[j], hi[j]));
        const double h = VR_DMUL(0.5, VR_DSUB(hi[j], lo[j]));
        half2 = VR_DADD(half2, VR_DMUL(h, h));
        qabs = VR_DADD(qabs, vr_cc_abs(q[j]));
        v[j] = VR_DSUB(ex[j], VR_DMUL(ew, q[j]));
        d[j] = b->axis[j];
        dlen2 = VR_DADD(dlen2, VR_DMUL(d[j], d[j]));
    }
    const double rb = VR_DMUL(VR_DSQRT(half2), 1.0 + 1e-12); /* rounded up */
    const double dlen = VR_DSQRT(dlen2);
    if (!(dlen > 0.5))
        return 0;
    double dv = 0, cx2 = 0;
    for (int j = 0; j < 3; ++j)
        dv = VR_DADD(dv, VR_DMUL(d[j], v[j]));
    for (int j = 0; j < 3; ++j) {
        const int k = (j + 1) % 3, l = (j + 2) % 3;
        const double c = VR_DSUB(VR_DMUL(d[k], v[l]), VR_DMUL(d[l], v[k]));
        cx2 = VR_DADD(cx2, VR_DMUL(c, c));
    }
    dv = VR_DDIV(dv, dlen);
    const double cross = VR_DDIV(VR_DSQRT(cx2), dlen);
    const double D = VR_DSUB(VR_DSUB(VR_DMUL((double)b->cone_cos, dv),
                                     VR_DMUL((double)b->cone_sin, cross)),
                             VR_DMUL(vr_cc_abs(ew), rb));
    /* the eye's rounding (about 2^-50 of these magnitudes) and D's own, with room to spare */
    const double slack = VR_DMUL(1.0 / 1099511627776.0, /* 2^-40 */
                                 VR_DADD(VR_DADD(VR_DADD(mag[0], mag[1]), mag[2]),
                                         VR_DMUL(ew_mag, VR_DADD(qabs, rb))));
    const double dlow = VR_DSUB(D, slack);
    if (!(dlow > 0))
        return 0;

    const double L = b->edge_min, w3 = VR_DMUL(Whi, VR_DMUL(Whi, Whi));
    const double lhs = VR_DDIV(VR_DMUL((double)b->shape, dlow), w3);
    const double rhs = VR_DADD(
        VR_DADD(VR_DDIV(VR_DMUL(8.0, VR_DMUL(eps, G)), L),
                VR_DDIV(VR_DADD(VR_DMUL(9.0, VR_DMUL(eps, eps)), VR_CC_ABS), VR_DMUL(L, L))),
        VR_DMUL(VR_DMUL(16.0, VR_CC_U), VR_DMUL(G, G)));
    return lhs > VR_DMUL(2.0, rhs);
}

/* 1 when every triangle of the batch with bounds `b` is dropped by vr_cull_classify(.., two_sided)
 * under a shader with matrix `mvp` (vr_shader.mvp, column-major: mvp[r + 4 j] is row r, column
 * j; see the file comment for the proof); 0 when that cannot be shown. Pure: the same arguments
 * give the same answer on the GPU and the host. */
VR_HD int vr_cluster_culled(const vr_cluster_bounds *b, const float *mvp, int two_sided)
{
    if (!(b->flags & VR_CLUSTER_BOX))
        return 0;
    const float *m = mvp;
    double lo[3], hi[3], P[3], E[4];
    for (int j = 0; j < 3; ++j) {
        lo[j] = b->lo[j];
        hi[j] = b->hi[j];
        P[j] = vr_cc_max(vr_cc_abs(lo[j]), vr_cc_abs(hi[j]));
    }
    for (int r = 0; r < 4; ++r) {
        double a = vr_cc_abs((double)m[12 + r]);
        for (int j = 0; j < 3; ++j)
            a = VR_DADD(a, VR_DMUL(vr_cc_abs((double)m[4 * j + r]), P[j]));
        if (!(a <= 1e30)) /* also NaN: no claim; keeps every vertex's shading far from overflow */
            return 0;
        E[r] = VR_DADD(VR_DMUL(VR_CC_REL, a), VR_CC_ABS);
    }
    /* frustum: one plane s x_a = w with the whole box beyond it */
    for (int a = 0; a < 3; ++a)
        for (int sgn = -1; sgn <= 1; sgn += 2) {
            double c[4];
            for (int j = 0; j < 4; ++j)
                c[j] = VR_DSUB(sgn * (double)m[4 * j + a], (double)m[4 * j + 3]);
            if (vr_cc_affine(c, lo, hi, 0) > VR_DADD(E[a], E[3]))
                return 1;
        }
    if (two_sided || !(b->flags & VR_CLUSTER_CONE))
        return 0;
    const double cw[4] = {m[3], m[7], m[11], m[15]};
    const double W1 = VR_DSUB(vr_cc_affine(cw, lo, hi, 0), VR_DMUL(2.0, E[3]));
    const double Whi = VR_DADD(vr_cc_affine(cw, lo, hi, 1), VR_DMUL(2.0, E[3]));
    if (!(W1 > 0))
        return 0; /* some vertex may be at or behind the eye plane: such triangles are kept */
    return vr_cc_backface(b, m, lo, hi, E, W1, Whi);
}

#ifdef __cplusplus
}
#endif
#endif
