/* gts_math.h - the per-element arithmetic of the GTS decoder, shared verbatim by the GPU
 * kernels/scan operators (gts_decode.cu, gts_batch.cuh) and their CPU twins (gts_decode_ref.c,
 * gts_batch.c), and by the encoder where it runs the same step: strip-code fetch and its checks,
 * the M step, the Q value of the paper's Eq. 8, the strip step of Eq. 3, the triangle of Eq. 6
 * (clamped, with its checks), the tile aggregate and tile counts of the tiled passes, INC bits,
 * the V entry and masked INC words of both V passes, Simple-9 selector tables, code reads and
 * zigzag. Every decoder's error bits and their verdict are here too.
 * Internal to pipeline/.
 * Every function is total: malformed input yields some in-range value plus an error bit, never
 * an out-of-bounds position (callers clamp positions against their array sizes).
 */
#ifndef VR_GTS_MATH_H
#define VR_GTS_MATH_H

#include <stdint.h>

#include "pipeline/gts/gts.h"

#include "pipeline/hd.h"

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
/* VR_OK for no bits, else VR_ERR_FORMAT with "<what>: malformed stream (error bits 0x..): <text>",
 * the verdict of every decoder that collects error bits. */
vr_status vr_gts_error_status(uint32_t bits, const char *what);
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

/* Strip code of triangle i as the scans read it (code 3 as N, unflagged): M_Scan, Q_Scan, the tile
 * aggregates and the sequential walks. */
VR_HD uint32_t vr_gts_code_read(const uint32_t *c, uint32_t i, uint32_t restart_codes)
{
    return vr_gts_code_sane(vr_gts_code_at(c, i, restart_codes));
}

/* The same with the checks of every decoder that emits triangle i (T_Kernel, T_Tiled, their CPU
 * twins, the batch decoders): code 3, and in R mode a triangle 0 whose code is not R (code_at
 * reads triangle 0 as R whatever C holds) flag VR_GTS_ERR_CODE in *err. */
VR_HD uint32_t vr_gts_code_checked(const uint32_t *c, uint32_t i, uint32_t restart_codes,
                                   uint32_t *err)
{
    const uint32_t raw = vr_gts_code_at(c, i, restart_codes);
    if (raw == 3u || (i == 0 && restart_codes && (c[0] & 3u) != VR_GTS_CODE_R))
        *err |= VR_GTS_ERR_CODE;
    return vr_gts_code_sane(raw);
}

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

/* The strip recursion (Eq. 3) on vertex ids: the triangle after `cur` with strip code N or P and
 * new vertex w (the sequential decoder, the encoder's bridges and their search). */
VR_HD void vr_gts_strip_next(uint32_t out[3], const uint32_t cur[3], uint32_t code, uint32_t w)
{
    if (code == VR_GTS_CODE_P)
        out[0] = cur[0], out[1] = cur[2], out[2] = w;
    else
        out[0] = cur[2], out[1] = cur[1], out[2] = w;
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

/* T_Kernel's per-triangle work, shared by T_Kernel, T_Tiled and their CPU twins: triangle i's
 * code (vr_gts_code_checked), its positions in V (Eq. 6) clamped to |V| so a malformed stream
 * flags VR_GTS_ERR_M instead of reading out of bounds, and the last triangle (i = n - 1) must end
 * V (m = |V| - 1). The caller gathers V[p[0..2]]. */
VR_HD void vr_gts_tri_clamped(uint32_t p[3], const uint32_t *c, uint32_t i, uint32_t n,
                              uint32_t restart_codes, uint32_t m, uint32_t q, uint32_t v_count,
                              uint32_t *err)
{
    vr_gts_tri_positions(p, vr_gts_code_checked(c, i, restart_codes, err), m, q);
    for (int j = 0; j < 3; ++j)
        if (p[j] >= v_count)
            *err |= VR_GTS_ERR_M, p[j] = v_count - 1u;
    if (i == n - 1u && m != v_count - 1u)
        *err |= VR_GTS_ERR_M;
}

/* ---- the tiled strip pass ("reduce, scan tiles, decode tiles"; gts_decode.cu T_Tiled and its
 * twin vr_gts_decode_tiled_ref) ------------------------------------------------------------------
 * M and Q are never stored. A segment of triangles (one triangle, a thread's items, a tile, all
 * tiles before one) is summarised by an aggregate: the sum of its M steps, and the largest Q
 * candidate (Eq. 8) of the segment relative to the M value before it, M[first - 1] (0 before
 * triangle 0). Candidates are M[i] - 2 or M[i] - 3, so the relative value is at least -2 (a P
 * right after an R that ends the previous segment): it is stored biased by VR_GTS_Q_BIAS, which
 * leaves 0 free for "no candidate" (every triangle of the segment repeats its predecessor's code).
 * Aggregates compose with an associative, non-commutative operator; the inclusive prefix from
 * triangle 0 is (M[i], Q[i] + bias). The operator never wraps: sums stay below 3 |T| < 2^32. */
#define VR_GTS_TILE_LOG2 11                   /* triangles per tile: 256 threads x 8 */
#define VR_GTS_TILE (1u << VR_GTS_TILE_LOG2)
#define VR_GTS_Q_BIAS 3u                      /* stored q = relative candidate + 3; 0: none */

/* Tiles of VR_GTS_TILE triangles that cover n (grid of Tile_Reduce and T_Tiled). */
VR_HD uint32_t vr_gts_tile_count(uint32_t n)
{
    return (uint32_t)(((uint64_t)n + VR_GTS_TILE - 1u) / VR_GTS_TILE);
}

typedef struct vr_gts_tile_agg {
    uint32_t sum; /* sum of the segment's M steps */
    uint32_t q;   /* 0: no Q candidate; else largest candidate - M before the segment + 3 */
} vr_gts_tile_agg;

/* The empty segment, identity of vr_gts_tile_combine and the carry of tile 0. */
VR_HD vr_gts_tile_agg vr_gts_tile_empty(void)
{
    vr_gts_tile_agg r;
    r.sum = 0u, r.q = 0u;
    return r;
}

/* Segment a followed by segment b: b's candidate moves up by a's steps. All stored candidates
 * are >= 1, so the unsigned max with 0 handles "none" on either side. */
VR_HD vr_gts_tile_agg vr_gts_tile_combine(vr_gts_tile_agg a, vr_gts_tile_agg b)
{
    vr_gts_tile_agg r;
    const uint32_t bq = b.q ? b.q + a.sum : 0u;
    r.sum = a.sum + b.sum;
    r.q = a.q > bq ? a.q : bq;
    return r;
}

/* Triangle i alone (i < |T|): the step of M_Scan's transform (2 for triangle 0, so the sum is M
 * itself) and Eq. 8 evaluated relative to M[i - 1]: with m = step + bias the two candidates
 * m - 3 and m - 2 are exactly the biased M[i] - 3 - M[i - 1] and M[i] - 2 - M[i - 1] (>= 1),
 * and "same as before" stays 0. Codes are read as vr_gts_q_op and M_Scan read them. */
VR_HD vr_gts_tile_agg vr_gts_tile_elem(const uint32_t *c, uint32_t i, uint32_t restart_codes)
{
    vr_gts_tile_agg r;
    if (i == 0) {
        r.sum = 2u, r.q = 0u;
        return r;
    }
    const uint32_t prev = vr_gts_code_read(c, i - 1, restart_codes);
    const uint32_t cur = vr_gts_code_read(c, i, restart_codes);
    r.sum = vr_gts_m_step(cur);
    r.q = vr_gts_q_value(prev, cur, r.sum + VR_GTS_Q_BIAS);
    return r;
}

/* Q[i] from the inclusive prefix of triangles 0..i: the max scan's value, 0 without candidates. */
VR_HD uint32_t vr_gts_tile_q(vr_gts_tile_agg prefix)
{
    return prefix.q ? prefix.q - VR_GTS_Q_BIAS : 0u;
}

/* ---- the tiled V pass (gts_decode.cu VTile_Reduce, VTile_Scan, V_Tiled; twin in
 * vr_gts_decode_tiled_ref) ------------------------------------------------------------------
 * incscan (the INC ones before each V entry) is never stored: a tile of VR_GTS_VTILE entries is
 * VR_GTS_VTILE_WORDS INC words; the ones before entry j are the carry of its tile (exclusive
 * scan of per-tile popcounts) + the popcounts of the tile's words before j's word (a block scan)
 * + the popcount of j's word below bit j % 32. */
#define VR_GTS_VTILE_WORDS_LOG2 8                            /* INC words per V tile */
#define VR_GTS_VTILE_WORDS (1u << VR_GTS_VTILE_WORDS_LOG2)
#define VR_GTS_VTILE_LOG2 (VR_GTS_VTILE_WORDS_LOG2 + 5)      /* V entries per tile: 8192 */
#define VR_GTS_VTILE (1u << VR_GTS_VTILE_LOG2)

/* Bit j of a bit array: INC entry j, for every reader of INC. */
VR_HD uint32_t vr_gts_bit(const uint32_t *bits, uint32_t j)
{
    return (bits[j >> 5] >> (j & 31u)) & 1u;
}

/* Tiles of VR_GTS_VTILE V entries that cover v_count (grid of VTile_Reduce and V_Tiled). */
VR_HD uint32_t vr_gts_vtile_count(uint32_t v_count)
{
    return (uint32_t)(((uint64_t)v_count + VR_GTS_VTILE - 1u) / VR_GTS_VTILE);
}

/* INC word w with the bits at or past |V| cleared (the last word's padding is not INC, and
 * INC_Scan never sees it); 0 for words wholly past |V|, which are not read. */
VR_HD uint32_t vr_gts_inc_word(const uint32_t *inc, uint32_t w, uint32_t v_count)
{
    if (w >= (v_count >> 5) + ((v_count & 31u) != 0u))
        return 0u;
    const uint32_t left = v_count - (w << 5);
    return left >= 32u ? inc[w] : inc[w] & ((1u << left) - 1u);
}

/* The ones before bit `bit` of `word`, given `before` ones ahead of the word. */
VR_HD uint32_t vr_gts_ones_before(uint32_t before, uint32_t word, uint32_t bit)
{
    return before + vr_popc(word & ((1u << bit) - 1u));
}

/* V_Kernel's entry (Fig. 5b), shared by V_Kernel and V_Tiled: an incremental vertex is the count
 * of INC ones before it; a re-used one is U[j - before], which must exist (index < |U|, else
 * clamped) and must be < before (introduced already). Error bits into *err. */
VR_HD uint32_t vr_gts_v_entry(uint32_t one, uint32_t before, uint32_t j, const uint32_t *u,
                              uint32_t u_count, uint32_t *err)
{
    if (one)
        return before;
    uint32_t k = j - before;
    if (k >= u_count)
        *err |= VR_GTS_ERR_U, k = u_count ? u_count - 1u : 0u;
    const uint32_t val = u_count ? u[k] : 0u;
    if (val >= before)
        *err |= VR_GTS_ERR_U;
    return val;
}

/* The INC total, checked at V's last entry j = |V| - 1 by V_Kernel, V_Tiled and the tiled twin:
 * the ones through it (before it, plus its own) must be the referenced count. */
VR_HD uint32_t vr_gts_inc_total_err(uint32_t j, uint32_t v_count, uint32_t ones_through,
                                    uint32_t referenced)
{
    return j == v_count - 1u && ones_through != referenced ? VR_GTS_ERR_INC : 0u;
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

/* Code k of a Simple-9 word whose codes have `bits` bits (1..28): every unpacker's read. */
VR_HD uint32_t vr_gts_s9_code(uint32_t word, uint32_t k, uint32_t bits)
{
    return (word >> (k * bits)) & ((1u << bits) - 1u);
}

VR_HD uint32_t vr_gts_zigzag(uint32_t delta) /* delta: two's complement of U[k] - U[k-1] */
{
    return (delta << 1) ^ (0u - (delta >> 31));
}

VR_HD uint32_t vr_gts_unzigzag(uint32_t z) { return (z >> 1) ^ (0u - (z & 1u)); }

#endif
