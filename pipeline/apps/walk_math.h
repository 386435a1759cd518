/* walk_math.h - what a GPU random walk and its CPU reference (walk.c) must compute bit for bit,
 * written once with VR_HD: Philox4x32-10 (Salmon et al. 2011, "Parallel random numbers: as easy
 * as 1, 2, 3"; checked against Random123's known-answer vectors), the 8 best moves of one grid
 * cell (the per-unique-element work of the reuse view) and one agent's draw among them.
 * Only float multiplies, adds and compares on precomputed tables: no transcendental function, so
 * a device compiled without fused multiply-adds (or with __fmul_rn/__fadd_rn) gets the same bits.
 * Try: `vreuse_tests apps/walk`.
 */
#ifndef VR_WALK_MATH_H
#define VR_WALK_MATH_H

#include <stdint.h>

#include "pipeline/hd.h"

#define VR_WALK_GRID_LOG2 8
#define VR_WALK_GRID (1u << VR_WALK_GRID_LOG2) /* cells per side (the paper's 256) */
#define VR_WALK_MAX_DISTANCE 16                /* longest move, Euclidean, in cells */
#define VR_WALK_KEEP 8                         /* moves kept per cell */

/* A cell packed into one 32-bit word, half the bits per dimension (the paper's virtual index). */
VR_HD uint32_t vr_walk_pack(uint32_t x, uint32_t y)
{
    return y << 16 | x;
}
VR_HD uint32_t vr_walk_x(uint32_t cell)
{
    return cell & 0xffffu;
}
VR_HD uint32_t vr_walk_y(uint32_t cell)
{
    return cell >> 16;
}

/* A cell's dense index y * 256 + x (the element id of the walk's reuse stream, apps.h), and back. */
VR_HD uint32_t vr_walk_dense(uint32_t cell)
{
    return vr_walk_y(cell) * VR_WALK_GRID + vr_walk_x(cell);
}
VR_HD uint32_t vr_walk_packed(uint32_t dense)
{
    return vr_walk_pack(dense % VR_WALK_GRID, dense / VR_WALK_GRID);
}

/* Philox4x32-10: out = the 4 words for counter `ctr` and key `key` (10 rounds, Random123's
 * multipliers and Weyl constants). */
VR_HD void vr_philox4x32_10(uint32_t out[4], const uint32_t ctr[4], const uint32_t key[2])
{
    uint32_t c0 = ctr[0], c1 = ctr[1], c2 = ctr[2], c3 = ctr[3], k0 = key[0], k1 = key[1];
    for (int r = 0; r < 10; ++r) {
        const uint64_t p0 = (uint64_t)0xD2511F53u * c0, p1 = (uint64_t)0xCD9E8D57u * c2;
        const uint32_t hi0 = (uint32_t)(p0 >> 32), lo0 = (uint32_t)p0;
        const uint32_t hi1 = (uint32_t)(p1 >> 32), lo1 = (uint32_t)p1;
        c0 = hi1 ^ c1 ^ k0, c1 = lo1, c2 = hi0 ^ c3 ^ k1, c3 = lo0;
        k0 += 0x9E3779B9u, k1 += 0xBB67AE85u; /* the key schedule's bump between rounds */
    }
    out[0] = c0, out[1] = c1, out[2] = c2, out[3] = c3;
}

/* The draws of agent `agent`: counter (agent, step, purpose, 0), key = the seed's two halves.
 * purpose 0: the move of `step`; 1: the initial placement (step 0). */
VR_HD void vr_walk_random(uint32_t out[4], uint32_t agent, uint32_t step, uint32_t purpose,
                          uint64_t seed)
{
    const uint32_t ctr[4] = {agent, step, purpose, 0}, key[2] = {(uint32_t)seed,
                                                                 (uint32_t)(seed >> 32)};
    vr_philox4x32_10(out, ctr, key);
}

/* The moves of one cell: the VR_WALK_KEEP most likely targets, most likely first, and the running
 * sums of their likelihoods (float, in that order). */
typedef struct vr_walk_moves {
    uint32_t cell[VR_WALK_KEEP];       /* packed target cells */
    float likelihood[VR_WALK_KEEP];    /* activity(target) * levy(distance) */
    float cumulative[VR_WALK_KEEP];    /* likelihood[0] + ... + likelihood[i], summed in order */
} vr_walk_moves;

/* The expensive per-cell work: every move (dx, dy) with 1 <= dx^2 + dy^2 <= 16^2 whose target is
 * on the grid, in the order dy = -16..16, dx = -16..16 (k counts them), likelihood
 * activity[target] * levy[dy + 16][dx + 16] (one float multiply); keeps the 8 largest, a tie going
 * to the smaller k. `activity`: VR_WALK_GRID^2 floats, row y at y * VR_WALK_GRID; `levy`: 33 x 33
 * floats (vr_walk_levy_table). A cell has at least 200 candidates, so all 8 are filled.
 * The 8th likelihood stays in a register (`least`): the kept entries are indexed dynamically, so
 * a GPU holds them in local memory, and the test that rejects most candidates would otherwise
 * load from there each time. The loops keep their constant bounds, which lets nvcc unroll the
 * row and overlap its loads (a version with each row clipped up front, not unrolled, was 12-43%
 * slower on the H200, session 18). */
VR_HD void vr_walk_moves_of(vr_walk_moves *m, const float *activity, const float *levy,
                            uint32_t cell)
{
    const int x = (int)vr_walk_x(cell), y = (int)vr_walk_y(cell), r = VR_WALK_MAX_DISTANCE;
    int kept = 0;
    float least = -1.0f; /* the 8th likelihood once 8 are kept; before, below every likelihood */
    for (int dy = -r; dy <= r; ++dy)
        for (int dx = -r; dx <= r; ++dx) {
            const int tx = x + dx, ty = y + dy, d2 = dx * dx + dy * dy;
            if (d2 == 0 || d2 > r * r || tx < 0 || ty < 0 || tx >= (int)VR_WALK_GRID ||
                ty >= (int)VR_WALK_GRID)
                continue;
            const float l = activity[ty * (int)VR_WALK_GRID + tx] * levy[(dy + r) * (2 * r + 1) + dx + r];
            if (!(l > least))
                continue;
            /* insertion after every kept entry >= l: earlier candidates win ties */
            int i = kept < VR_WALK_KEEP ? kept++ : VR_WALK_KEEP - 1;
            for (; i > 0 && m->likelihood[i - 1] < l; --i) {
                m->likelihood[i] = m->likelihood[i - 1];
                m->cell[i] = m->cell[i - 1];
            }
            m->likelihood[i] = l;
            m->cell[i] = vr_walk_pack((uint32_t)tx, (uint32_t)ty);
            if (kept == VR_WALK_KEEP)
                least = m->likelihood[VR_WALK_KEEP - 1];
        }
    float sum = 0.0f;
    for (int i = 0; i < VR_WALK_KEEP; ++i)
        m->cumulative[i] = sum = sum + m->likelihood[i];
}

/* ---- one cell's moves on a group of lanes (vr_walk_config.lanes) -------------------------------
 * The same 8 moves as vr_walk_moves_of, bit for bit, computed by `lanes` threads: lane j scans the
 * rows dy = -16 + j, -16 + j + lanes, ... (each row keeps its constant dx bounds, so it stays
 * unrolled) into its own best 8, then the lanes' lists are merged pairwise. vr_walk_moves_of keeps
 * the 8 largest likelihoods, a tie going to the smaller scan position k: the first 8 of the total
 * order "likelihood descending, then k ascending". That order does not depend on who saw which
 * candidate, so any merge tree of the lanes' best 8 yields the same list, and the cumulative sums
 * are then added in the same order as there. Used by the GPU walk program with lanes > 1
 * (apps_gpu.cu: a butterfly of warp shuffles); `vreuse_tests apps/walk-lanes` checks every cell
 * on the CPU with that butterfly for every group size. */

/* A candidate's key: its scan position k in dy-major, dx-minor order (k itself skips the
 * candidates off the disc, the key does not: both order the candidates alike). */
#define VR_WALK_SIDE (2 * VR_WALK_MAX_DISTANCE + 1)
#define VR_WALK_KEY_NONE 0xffffffffu /* an empty entry's key, with likelihood -1 */

/* A lane's best candidates so far: likelihood descending, key ascending on ties; the empty
 * entries (likelihood -1, below every real one) last. */
typedef struct vr_walk_top {
    float l[VR_WALK_KEEP];
    uint32_t key[VR_WALK_KEEP];
} vr_walk_top;

/* Whether candidate a precedes b in the order above (keys are distinct but for empty entries). */
VR_HD int vr_walk_before(float la, uint32_t ka, float lb, uint32_t kb)
{
    return la > lb || (la == lb && ka < kb);
}

/* Candidate (l, key) into t, kept in order; the 9th falls off. Constant indices only, so a GPU
 * keeps t in registers: the newcomer bubbles down, swapping with every entry it precedes. */
VR_HD void vr_walk_top_insert(vr_walk_top *t, float l, uint32_t key)
{
    for (int i = 0; i < VR_WALK_KEEP; ++i)
        if (vr_walk_before(l, key, t->l[i], t->key[i])) {
            const float tl = t->l[i];
            const uint32_t tk = t->key[i];
            t->l[i] = l, t->key[i] = key;
            l = tl, key = tk;
        }
}

/* Candidates a lane loads and multiplies before it tests them: the scan is latency-bound (a
 * load, then at once the multiply that waits on it), and a GPU grid with few warps (a sort
 * batch of the resorted walk: one wave) cannot hide that with other warps (H100 ncu,
 * session 25). */
#define VR_WALK_SCAN_CHUNK 4

/* Lane `lane` of `lanes` (a power of two, 1..32): the best 8 of its rows of cell `cell`'s disc.
 * A row's candidates go in chunks of VR_WALK_SCAN_CHUNK: all loaded and multiplied first (one
 * off the disc or the grid gets -1, which no list entry is below), then, where one exceeds the
 * 8th likelihood, inserted one by one in scan order, each tested against the 8th as it is then:
 * the same insertions as one candidate at a time. */
VR_HD void vr_walk_top_scan(vr_walk_top *t, const float *activity, const float *levy, uint32_t cell,
                            uint32_t lane, uint32_t lanes)
{
    const int x = (int)vr_walk_x(cell), y = (int)vr_walk_y(cell), r = VR_WALK_MAX_DISTANCE;
    for (int i = 0; i < VR_WALK_KEEP; ++i)
        t->l[i] = -1.0f, t->key[i] = VR_WALK_KEY_NONE;
    for (int dy = -r + (int)lane; dy <= r; dy += (int)lanes) {
        const int ty = y + dy;
        if (ty < 0 || ty >= (int)VR_WALK_GRID)
            continue;
        const float *a = activity + ty * (int)VR_WALK_GRID + x; /* a[dx]: only where on the grid */
        const float *v = levy + (dy + r) * VR_WALK_SIDE + r;     /* v[dx] */
        for (int dx0 = -r; dx0 <= r; dx0 += VR_WALK_SCAN_CHUNK) {
            float l[VR_WALK_SCAN_CHUNK];
            float most = -1.0f;
            for (int j = 0; j < VR_WALK_SCAN_CHUNK; ++j) {
                const int dx = dx0 + j, tx = x + dx, d2 = dx * dx + dy * dy;
                const int on = dx <= r && d2 != 0 && d2 <= r * r && tx >= 0 &&
                               tx < (int)VR_WALK_GRID;
                l[j] = on ? a[dx] * v[dx] : -1.0f;
                most = l[j] > most ? l[j] : most;
            }
            /* the lane's keys ascend, so only a larger likelihood precedes the 8th */
            if (!(most > t->l[VR_WALK_KEEP - 1]))
                continue;
            for (int j = 0; j < VR_WALK_SCAN_CHUNK; ++j)
                if (l[j] > t->l[VR_WALK_KEEP - 1])
                    vr_walk_top_insert(t, l[j],
                                       (uint32_t)((dy + r) * VR_WALK_SIDE + dx0 + j + r));
        }
    }
}

/* a = the best 8 of a and b (each in order): the larger of a[i] and b[7 - i] is a bitonic
 * sequence holding the best 8, which three half-cleaners put in order (constant indices). */
VR_HD void vr_walk_top_merge(vr_walk_top *a, const vr_walk_top *b)
{
    const int K = VR_WALK_KEEP;
    for (int i = 0; i < K; ++i)
        if (vr_walk_before(b->l[K - 1 - i], b->key[K - 1 - i], a->l[i], a->key[i]))
            a->l[i] = b->l[K - 1 - i], a->key[i] = b->key[K - 1 - i];
    for (int d = K / 2; d > 0; d /= 2)
        for (int i = 0; i < K; ++i)
            if ((i & d) == 0 && vr_walk_before(a->l[i + d], a->key[i + d], a->l[i], a->key[i])) {
                const float tl = a->l[i];
                const uint32_t tk = a->key[i];
                a->l[i] = a->l[i + d], a->key[i] = a->key[i + d];
                a->l[i + d] = tl, a->key[i + d] = tk;
            }
}

/* The moves of cell `cell` from the merged best 8 of all its lanes (as vr_walk_moves_of). */
VR_HD void vr_walk_moves_from_top(vr_walk_moves *m, const vr_walk_top *t, uint32_t cell)
{
    const int x = (int)vr_walk_x(cell), y = (int)vr_walk_y(cell), r = VR_WALK_MAX_DISTANCE;
    float sum = 0.0f;
    for (int i = 0; i < VR_WALK_KEEP; ++i) {
        const int dy = (int)(t->key[i] / VR_WALK_SIDE) - r;
        const int dx = (int)(t->key[i] % VR_WALK_SIDE) - r;
        m->likelihood[i] = t->l[i];
        m->cell[i] = vr_walk_pack((uint32_t)(x + dx), (uint32_t)(y + dy));
        m->cumulative[i] = sum = sum + t->l[i];
    }
}

/* The per-agent work: agent `agent`'s move of `step` among its cell's moves `m`, each chosen with
 * probability likelihood / total: u = the top 24 bits of the first Philox word / 2^24 in [0, 1),
 * the first i with u * total < cumulative[i] (the last when rounding leaves none). */
VR_HD uint32_t vr_walk_draw(const vr_walk_moves *m, uint32_t agent, uint32_t step, uint64_t seed)
{
    uint32_t r[4];
    vr_walk_random(r, agent, step, 0, seed);
    const float u = (float)(r[0] >> 8) * (1.0f / 16777216.0f);
    const float x = u * m->cumulative[VR_WALK_KEEP - 1];
    for (int i = 0; i < VR_WALK_KEEP - 1; ++i)
        if (x < m->cumulative[i])
            return m->cell[i];
    return m->cell[VR_WALK_KEEP - 1];
}

#endif
