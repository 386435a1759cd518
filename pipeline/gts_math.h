/* gts_math.h - the per-element arithmetic of the GTS decoder, shared verbatim by the GPU
 * kernels/scan operators (gts_decode.cu) and their CPU twin vr_gts_decode_scan_ref
 * (gts_decode_ref.c): strip-code fetch, the M step, the Q value of the paper's Eq. 8, the
 * triangle of Eq. 6, Simple-9 selector tables and zigzag. Internal to pipeline/.
 * Every function is total: malformed input yields some in-range value plus an error bit, never
 * an out-of-bounds position (callers clamp positions against their array sizes).
 */
#ifndef VR_GTS_MATH_H
#define VR_GTS_MATH_H

#include <stdint.h>

#include "gts.h"

#ifndef VR_HD
#ifdef __CUDACC__
#define VR_HD __host__ __device__ __forceinline__
#else
#define VR_HD static inline
#endif
#endif

/* Error bits the decoders collect (a device flag on the GPU). */
#define VR_GTS_ERR_CODE 1u      /* strip code 3, or triangle 0 not R in R mode */
#define VR_GTS_ERR_M 2u         /* a triangle's third vertex lies beyond |V| */
#define VR_GTS_ERR_INC 4u       /* INC ones disagree with referenced_count */
#define VR_GTS_ERR_U 8u         /* U index beyond |U|, or a re-used vertex not yet introduced */
#define VR_GTS_ERR_SELECTOR 16u /* Simple-9 selector > 8 */
#define VR_GTS_ERR_S9COUNT 32u  /* Simple-9 codes disagree with |U| */

#ifdef __cplusplus
extern "C" {
#endif
/* "strip code 3 or ..." for a set of VR_GTS_ERR_* bits (gts_decode_ref.c): decoders that
 * collect error bits (the scan formulation, the GPU) report them with this text. */
const char *vr_gts_error_text(uint32_t bits);
#ifdef __cplusplus
}
#endif

/* Strip code of triangle i. In deg. mode only N/P exist (1 bit); triangle 0 is always R. */
VR_HD uint32_t vr_gts_code_at(const uint32_t *c, uint32_t i, uint32_t restart_codes)
{
    if (i == 0)
        return VR_GTS_CODE_R;
    if (restart_codes)
        return (c[i >> 4] >> ((i & 15u) * 2u)) & 3u;
    return (c[i >> 5] >> (i & 31u)) & 1u;
}

/* Code 3 does not exist; decoders flag it and read it as N so every position stays defined. */
VR_HD uint32_t vr_gts_code_sane(uint32_t code) { return code == 3u ? VR_GTS_CODE_N : code; }

/* M_Scan's transform: an R triangle brings three new V entries, N and P one (Eq. 4);
 * M[i] = (inclusive sum of steps) - 1, so M[0] = 2. */
VR_HD uint32_t vr_gts_m_step(uint32_t code) { return code == VR_GTS_CODE_R ? 3u : 1u; }

/* Q_Scan's transform (Eq. 8) for i >= 1, from the codes of triangles i-1, i and M[i]:
 * the position in V of the vertex an N or P triangle carries over from earlier triangles.
 * 0 marks "same as before" and the inclusive max scan fills it in (Q is non-decreasing). */
VR_HD uint32_t vr_gts_q_value(uint32_t prev, uint32_t cur, uint32_t m)
{
    if (prev == VR_GTS_CODE_R && cur == VR_GTS_CODE_P)
        return m - 3u;
    if (prev == cur)
        return 0u;
    return m - 2u;
}

/* T_Kernel (Eq. 6): positions in V of triangle i's three vertices. m >= 2 always holds for a
 * scanned M (the first step is 3); q <= m by construction of the max scan. */
VR_HD void vr_gts_tri_positions(uint32_t p[3], uint32_t code, uint32_t m, uint32_t q)
{
    if (code == VR_GTS_CODE_R) {
        p[0] = m - 2u, p[1] = m - 1u, p[2] = m;
    } else if (code == VR_GTS_CODE_P) {
        p[0] = q, p[1] = m - 1u, p[2] = m;
    } else {
        p[0] = m - 1u, p[1] = q, p[2] = m;
    }
}

/* Simple-9 selector tables packed in constants (no memory reads on the GPU): bits per code
 * 1 2 3 4 5 7 9 14 28 in 5-bit fields; codes per word = 28 / bits. */
VR_HD uint32_t vr_gts_s9_bits(uint32_t selector)
{
    const uint64_t table = 1ull | 2ull << 5 | 3ull << 10 | 4ull << 15 | 5ull << 20 | 7ull << 25 |
                           9ull << 30 | 14ull << 35 | 28ull << 40;
    return selector > 8u ? 0u : (uint32_t)(table >> (5u * selector)) & 31u;
}

VR_HD uint32_t vr_gts_s9_count(uint32_t selector)
{
    const uint32_t bits = vr_gts_s9_bits(selector);
    return bits ? 28u / bits : 0u;
}

VR_HD uint32_t vr_gts_zigzag(uint32_t delta) /* delta: two's complement of U[k] - U[k-1] */
{
    return (delta << 1) ^ (0u - (delta >> 31));
}

VR_HD uint32_t vr_gts_unzigzag(uint32_t z) { return (z >> 1) ^ (0u - (z & 1u)); }

#endif
