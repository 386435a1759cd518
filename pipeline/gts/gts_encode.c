/* gts_encode.c - CPU encoder of the GTS codec (Meyer et al. 2012, Sec. 3-6): breadth-first
 * belts from a seed vertex per component, stripification of each belt into generalized
 * triangle strips (a stack of branch points, strips merged across belt boundaries), restarts as
 * R codes or emulated by the shortest chain of degenerate triangles, vertices renumbered by
 * first visit in V, INC bits, and the re-used vertices U as zigzag deltas in Simple-9 words.
 * Linear time in the triangle count, no sort anywhere: rings by a counting sort, twins (the
 * half-edge across each edge) grouped per vertex in a scratch table, O(1) edge lookups, bounded
 * trials, a linear Simple-9 packer. The streams (C, INC, the deltas, the map) are written as the
 * walk commits each triangle, while it is in cache; a second thread faults the big buffers in
 * ahead of their first use (first touches cost more than the walk on the development VM), then
 * splits the twins and the output packing with this one; dead walk buffers become the vertex data.
 * The bytes are pinned (`vreuse_tests gts/encode-pinned`); bench/NOTES.md has the phase times.
 * CPU twin of nothing: the decoders (gts_decode_ref.c, gts_decode.cu) invert it.
 * Try: `vreuse compress ../shared/scenes/igea.ply --restart deg`, `vreuse_tests gts/`.
 */
#include "pipeline/gts/gts.h"
#include "pipeline/gts/gts_math.h"
#include "pipeline/vr_mem.h"

#include <assert.h>
#include <stdio.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define NONE 0xffffffffu
#define THREAD_MIN_TRIANGLES 65536 /* below, the two halves of a parallel phase run in turn */
#define PATTERN_COUNT 46656 /* 6^6 equality patterns of (prev.v0..v2, next.v0..v2) */
#define BRIDGE_MAX 4        /* degenerate triangles that always suffice for a bridge */
/* Branch-point trials (measured on fandisk, horse, igea: 12 triangles are too few to see the
 * belt direction pay off, 32..64 give the same bits within 0.01 bpt). */
#define LOOKAHEAD 40        /* triangles a branch-point trial follows */
#define EDGE_SCAN_MAX 64    /* candidates examined on one edge (non-manifold fans of pages) */
#define DEAD_END_BITS 24    /* estimated cost of a restart met during a trial */
/* Belt discovery runs XQ_EXPAND vertices behind the emissions, after prefetches of each vertex
 * (at push), of its ring (XQ_RING later) and of its ring's triangles (XQ_TRIS later), so the
 * cache misses of the expansion overlap the strip walk instead of stalling it. */
#define XQ_SIZE 32
#define XQ_RING 6
#define XQ_TRIS 12
#define XQ_EXPAND 18
#define STEP_BITS 3         /* estimated cost of each triangle a trial could not place */

/* Bits of v (0 for 0): vr_s9_value_bits in one instruction, for the trials' cost estimates. */
static inline uint32_t bit_length(uint32_t v) { return v ? 32u - (uint32_t)__builtin_clz(v) : 0; }

/* The shortest chain of degenerate triangles from a strip's last triangle to the next strip's
 * first (deg. mode), for one equality pattern: step k appends V entry vals[slot[k]] with
 * code[k]; the final step appends the next triangle's v2 with code[depth]. */
typedef struct vr_bridge {
    int8_t depth; /* degenerate triangles; -1: not computed yet */
    uint8_t code[BRIDGE_MAX + 1];
    uint8_t slot[BRIDGE_MAX];
} vr_bridge;

/* Per vertex: its ring, the half-edges 3t+j (ascending) of the triangles around it, one per
 * triangle (corner j is the vertex's first corner in t); and its running first-visit id. */
typedef struct vr_vert {
    uint32_t ring, ring_end; /* ring[ring .. ring_end); emptied once added to a belt */
    uint32_t vid;            /* first-visit id so far, NONE before the first visit */
    uint32_t fid;            /* final id: first visit in the committed V, NONE before it */
} vr_vert;

/* Per triangle: where each of its half-edges can be continued, and its belt state. */
typedef struct vr_tri_adj {
    uint32_t twin[3]; /* half-edge 3t+k = (v[k] -> v[k+1]): the lowest half-edge of a
                       * non-degenerate triangle going the other way, NONE when there is none */
    int32_t belt;     /* belt id; -1 while unassigned; VR_EMITTED once emitted */
} vr_tri_adj;

#define VR_EMITTED INT32_MAX

/* A bit stream of 32-bit words, LSB first; the partial word waits in acc. */
typedef struct vr_bitstream {
    uint32_t *w;
    size_t cap; /* words */
    uint64_t len; /* bits */
    uint32_t acc;
} vr_bitstream;

/* The streams as the walk commits them (commit()). */
typedef struct vr_out {
    int map;                 /* the caller asked for the map: tri and source are kept */
    int dead, oom, delta_overflow; /* dead: nothing more is committed (an error after the walk) */
    uint32_t bad_u, bad_prev_u; /* the re-used vertex whose delta needs more than 28 bits */
    uint32_t emitted;        /* emissions committed */
    uint32_t restarts;       /* R codes after the first emission */
    uint32_t strips;         /* strip triangles (bridges included) */
    uint32_t v_count, u_count, next, prev_u; /* V entries, U entries, new ids, U[k-1] */
    uint32_t cur[3];         /* the last strip triangle, source ids */
    vr_bitstream c, inc;
    uint32_t *deltas;        /* u_count zigzag deltas of the re-used vertices */
    uint32_t *old_of_new;    /* vc */
    uint32_t *tri, *source;  /* map: 3 new ids and the source of each strip triangle */
    uint32_t *degen;         /* deg. mode: strip positions of degenerate source triangles */
    size_t deltas_cap, map_cap, degen_cap; /* map_cap: strip triangles tri and source hold */
    uint32_t degen_count;
} vr_out;

/* The emissions a trial may still read or undo: the last committed one and up to LOOKAHEAD
 * after it, in a ring. */
#define E_RING 64
#define E_AT(i) ((i) & (E_RING - 1))
_Static_assert(LOOKAHEAD + 1 < E_RING && (E_RING & (E_RING - 1)) == 0,
               "a trial's emissions and the last committed one fit the ring");

typedef struct vr_enc {
    uint32_t n, vc;
    const uint32_t *tri;   /* 3n source indices */
    vr_vert *vert;         /* vc */
    uint32_t *ring;        /* 3n at most: the rings' half-edges */
    vr_tri_adj *adj;       /* n */
    uint32_t *twin_next;   /* 3n, or NULL when no edge is shared by more than two triangles:
                            * the next higher half-edge with the same (from, to), NONE after
                            * the last, so across() can walk a non-manifold edge's pages */
    uint32_t *stack;       /* n: branch points of the current belt */
    uint32_t stack_size;
    uint32_t *belt_list;   /* n: triangles of the current belt in discovery order */
    uint32_t *next_list;   /* n: the next belt while it is discovered */
    uint32_t next_len;
    uint32_t xq[XQ_SIZE];  /* vertices of emitted triangles waiting to be expanded */
    uint32_t xq_head;      /* vertices pushed (source corner order) */
    uint32_t xq_done;      /* vertices expanded */
    uint64_t *pushed;      /* vc bits: queued for expansion (a second push would find its ring
                            * emptied, so each vertex is queued once: the same belts) */
    int32_t belt_id;       /* the belt being stripified */
    uint32_t e_tri[E_RING];  /* emission order (ring, E_AT) */
    uint8_t e_rot[E_RING];   /* rotation r: (t[r], t[r+1], t[r+2]) */
    uint8_t e_code[E_RING];  /* R for strip starts, N or P */
    uint32_t e_count;
    vr_out out;
    vr_gts_restart mode;
    vr_bridge *bridges;    /* PATTERN_COUNT, deg. mode */
    /* running estimate of the final numbering, for the lookahead's bit costs (vert[].vid) */
    uint32_t next_id;      /* ids handed out */
    uint32_t last_u;       /* id of the last re-used vertex (U[k-1]) */
    uint32_t *undo_tri;    /* LOOKAHEAD + 1: triangles a trial emitted */
    uint32_t *undo_vid;    /* 3 * (LOOKAHEAD + 1): vertices a trial numbered */
    uint32_t undo_tris, undo_vids;
    int trial;             /* 1 while a lookahead trial runs: log, no branch points */
} vr_enc;

/* (r + 1) % 3 and (r + 2) % 3 for r < 3, without the division */
static const uint8_t g_plus1[3] = {1, 2, 0}, g_plus2[3] = {2, 0, 1};

static void rotated(const vr_enc *e, uint32_t t, uint32_t r, uint32_t v[3])
{
    const uint32_t *s = e->tri + 3 * (size_t)t;
    v[0] = s[r], v[1] = s[g_plus1[r]], v[2] = s[g_plus2[r]];
}

static int degenerate3(const uint32_t v[3]) { return v[0] == v[1] || v[1] == v[2] || v[2] == v[0]; }

/* An unemitted triangle of belt `b` across half-edge h = 3t+k (u -> w), i.e. with the directed
 * edge w -> u (so it continues a strip whose exit edge is u -> w with consistent winding); *rot
 * puts w first: (w, u, x). Degenerate triangles never continue a strip: they are their own
 * strips (and no twin names them). The candidates are the half-edges w -> u in ascending
 * order, the first EDGE_SCAN_MAX of them examined (a missed candidate only costs a restart);
 * on a manifold mesh there is at most one, so this is one lookup. */
static uint32_t across(const vr_enc *e, uint32_t h, int32_t b, uint32_t *rot)
{
    uint32_t x = e->adj[h / 3].twin[h % 3];
    for (uint32_t seen = 0; x != NONE && seen < EDGE_SCAN_MAX; ++seen) {
        const uint32_t s = x / 3;
        if (e->adj[s].belt == b) {
            *rot = x % 3;
            return s;
        }
        x = e->twin_next ? e->twin_next[x] : NONE;
    }
    return NONE;
}

/* Neighbors still available to triangle t (edges k: t[k] -> t[k+1]). */
static uint32_t available_edges(const vr_enc *e, uint32_t t, uint32_t nb[3])
{
    const uint32_t *v = e->tri + 3 * (size_t)t;
    uint32_t count = 0, rot;
    for (uint32_t k = 0; k < 3; ++k) {
        nb[k] = degenerate3(v) ? NONE : across(e, 3 * t + k, e->adj[t].belt, &rot);
        count += nb[k] != NONE;
    }
    return count;
}

/* ---- restart emulation (deg. mode) -------------------------------------------------------- */

/* Equality labels of the six vertices: lab[i] = first j with vals[j] == vals[i]. */
static uint32_t pattern_key(const uint32_t vals[6], uint8_t lab[6])
{
    uint32_t key = 0;
    for (int i = 5; i >= 0; --i) {
        int j = 0;
        while (vals[j] != vals[i])
            ++j;
        lab[i] = (uint8_t)j;
    }
    for (int i = 0; i < 6; ++i)
        key = key * 6 + lab[i];
    return key;
}

/* Depth-limited search over the labels' strip steps (vr_gts_strip_next): `left` more degenerate
 * triangles, then the step that must produce the next triangle (labels 3, 4, 5 up to equality). */
static int bridge_search(vr_bridge *br, const uint8_t lab[6], const uint32_t cur[3], int depth,
                         int left)
{
    for (uint32_t code = VR_GTS_CODE_N; code <= VR_GTS_CODE_P; ++code) {
        uint32_t nx[3];
        if (left == 0) {
            vr_gts_strip_next(nx, cur, code, lab[5]);
            if (nx[0] == lab[3] && nx[1] == lab[4]) {
                br->code[depth] = (uint8_t)code;
                return 1;
            }
            continue;
        }
        for (uint8_t w = 0; w < 6; ++w) {
            if (lab[w] != w)
                continue; /* one representative per distinct vertex */
            vr_gts_strip_next(nx, cur, code, w);
            if (nx[0] != nx[1] && nx[1] != nx[2] && nx[2] != nx[0])
                continue; /* must stay degenerate: it is drawn */
            br->code[depth] = (uint8_t)code;
            br->slot[depth] = w;
            if (bridge_search(br, lab, nx, depth + 1, left - 1))
                return 1;
        }
    }
    return 0;
}

static const vr_bridge *bridge_for(vr_enc *e, const uint32_t prev[3], const uint32_t next[3],
                                   uint8_t lab[6])
{
    const uint32_t vals[6] = {prev[0], prev[1], prev[2], next[0], next[1], next[2]};
    vr_bridge *br = &e->bridges[pattern_key(vals, lab)];
    if (br->depth < 0) {
        const uint32_t cur[3] = {lab[0], lab[1], lab[2]};
        for (int d = 0; d <= BRIDGE_MAX; ++d)
            if (bridge_search(br, lab, cur, 0, d)) {
                br->depth = (int8_t)d;
                break;
            }
        /* (z, a, a, b) always works: (x,y,z) P-> (x,z,z) N-> (z,z,a) P-> (z,a,a) N-> (a,a,b) */
        assert(br->depth >= 0);
    }
    return br;
}

/* ---- stripification ------------------------------------------------------------------------ */

/* Estimated bits of appending vertex v to V: its INC bit, plus the Simple-9 code of the
 * zigzag delta when it is re-used. */
static uint32_t append_bits(const vr_enc *e, uint32_t v)
{
    const uint32_t id = e->vert[v].vid;
    return id == NONE ? 1 : 1 + bit_length(vr_gts_zigzag(id - e->last_u));
}

/* append_bits, and the running numbering moves on (logged during trials). */
static uint32_t visit(vr_enc *e, uint32_t v)
{
    const uint32_t bits = append_bits(e, v);
    vr_vert *vv = &e->vert[v];
    if (vv->vid == NONE) {
        if (e->trial)
            e->undo_vid[e->undo_vids++] = v;
        vv->vid = e->next_id++;
    } else {
        e->last_u = vv->vid;
    }
    return bits;
}

/* Belt discovery of vertex v: every unassigned triangle around it joins the next belt, in
 * ring order; the ring is emptied, so a vertex is added once. */
static void expand_vertex(vr_enc *e, uint32_t v, int32_t belt, uint32_t *list, uint32_t *len)
{
    vr_vert *vv = &e->vert[v];
    for (uint32_t k = vv->ring; k < vv->ring_end; ++k) {
        vr_tri_adj *a = &e->adj[e->ring[k] / 3];
        if (a->belt < 0) {
            a->belt = belt;
            list[(*len)++] = e->ring[k] / 3;
        }
    }
    vv->ring_end = vv->ring;
}

/* Queues vertex v for expansion into the next belt and moves the prefetch pipeline on. */
static void expand_push(vr_enc *e, uint32_t v)
{
    __builtin_prefetch(&e->vert[v]);
    const uint32_t p = e->xq_head++;
    e->xq[p % XQ_SIZE] = v;
    if (p >= XQ_RING) {
        const vr_vert *vv = &e->vert[e->xq[(p - XQ_RING) % XQ_SIZE]];
        if (vv->ring < vv->ring_end)
            __builtin_prefetch(&e->ring[vv->ring]);
    }
    if (p >= XQ_TRIS) {
        const vr_vert *vv = &e->vert[e->xq[(p - XQ_TRIS) % XQ_SIZE]];
        for (uint32_t k = vv->ring; k < vv->ring_end; ++k)
            __builtin_prefetch(&e->adj[e->ring[k] / 3]);
    }
    if (p >= XQ_EXPAND && e->xq_done <= p - XQ_EXPAND) {
        expand_vertex(e, e->xq[e->xq_done % XQ_SIZE], e->belt_id + 1, e->next_list, &e->next_len);
        ++e->xq_done;
    }
}

/* Expands every queued vertex (at the end of a belt). */
static void expand_drain(vr_enc *e)
{
    for (; e->xq_done < e->xq_head; ++e->xq_done)
        expand_vertex(e, e->xq[e->xq_done % XQ_SIZE], e->belt_id + 1, e->next_list, &e->next_len);
}

static void commit(vr_enc *e, uint32_t t, uint32_t rot, uint32_t code);

/* Appends triangle t with rotation rot to the emission order; returns the estimated bits of
 * its V entries (R: all three vertices, N/P: the new one). Outside trials, its vertices'
 * unassigned neighbors join the next belt now, while they are in cache: the order is the one
 * of a pass over the finished belt in emission order, and nothing in the current belt looks
 * at triangles outside it; and the emission is committed to the streams (commit()). */
static uint32_t emit(vr_enc *e, uint32_t t, uint32_t rot, uint32_t code)
{
    uint32_t v[3];
    rotated(e, t, rot, v);
    e->adj[t].belt = VR_EMITTED;
    if (e->trial) {
        e->undo_tri[e->undo_tris++] = t;
    } else {
        for (int j = 0; j < 3; ++j) {
            const uint32_t w = e->tri[3 * (size_t)t + j];
            uint64_t *word = &e->pushed[w >> 6];
            const uint64_t bit = (uint64_t)1 << (w & 63);
            if (!(*word & bit)) {
                *word |= bit;
                expand_push(e, w);
            }
        }
        commit(e, t, rot, code);
    }
    e->e_tri[E_AT(e->e_count)] = t;
    e->e_rot[E_AT(e->e_count)] = (uint8_t)rot;
    e->e_code[E_AT(e->e_count)] = (uint8_t)code;
    ++e->e_count;
    if (code == VR_GTS_CODE_R)
        return visit(e, v[0]) + visit(e, v[1]) + visit(e, v[2]);
    return visit(e, v[2]);
}

/* Rotation of a strip's first triangle: its entry edge (v0, v1) can never be left through, so
 * put it where no neighbor is available; in deg. mode prefer the shortest bridge from the
 * previous strip. */
static uint32_t start_rotation(vr_enc *e, uint32_t t)
{
    uint32_t nb[3];
    const uint32_t count = available_edges(e, t, nb);
    uint32_t best = NONE, best_cost = NONE;
    for (uint32_t r = 0; r < 3; ++r) {
        if (count < 3 && nb[r] != NONE)
            continue;
        uint32_t cost = 0;
        if (e->mode == VR_GTS_RESTART_DEGENERATE && e->e_count > 0) {
            uint32_t prev[3], next[3];
            uint8_t lab[6];
            rotated(e, e->e_tri[E_AT(e->e_count - 1)], e->e_rot[E_AT(e->e_count - 1)], prev);
            rotated(e, t, r, next);
            cost = (uint32_t)bridge_for(e, prev, next, lab)->depth;
        }
        if (cost < best_cost)
            best = r, best_cost = cost;
    }
    return best;
}

static int continue_strip(vr_enc *e, int32_t b, uint32_t *bits);

/* Estimated bits of continuing with (t, rot): its new vertex, as visit() would count it. */
static uint32_t step_cost(const vr_enc *e, uint32_t t, uint32_t rot)
{
    uint32_t v[3];
    rotated(e, t, rot, v);
    return append_bits(e, v[2]);
}

/* Follows the strip from candidate (t, rot, code) for up to LOOKAHEAD triangles without
 * branching and returns the estimated bits; everything it emitted or numbered is undone. */
static uint32_t trial_cost(vr_enc *e, int32_t b, uint32_t t, uint32_t rot, uint32_t code)
{
    const uint32_t e_count = e->e_count, next_id = e->next_id, last_u = e->last_u;
    e->trial = 1;
    e->undo_tris = e->undo_vids = 0;
    uint32_t bits = emit(e, t, rot, code), steps = 1;
    while (steps < LOOKAHEAD && continue_strip(e, b, &bits))
        ++steps;
    if (steps < LOOKAHEAD)
        bits += DEAD_END_BITS + STEP_BITS * (LOOKAHEAD - steps);
    for (uint32_t i = 0; i < e->undo_tris; ++i)
        e->adj[e->undo_tri[i]].belt = b; /* a trial only emits triangles of belt b */
    for (uint32_t i = 0; i < e->undo_vids; ++i)
        e->vert[e->undo_vid[i]].vid = NONE;
    e->e_count = e_count, e->next_id = next_id, e->last_u = last_u;
    e->trial = 0;
    return bits;
}

/* Continues the strip from the last emitted triangle into belt b when a neighbor waits across
 * one of its exit edges, N: (v1 -> v2) or P: (v2 -> v0). With two, a trial of each decides:
 * it finds the belt direction whose re-used vertices step by -1 (zigzag 1, one bit; the other
 * direction steps by +1, two bits) and avoids strips that end soon (restarts). Inside a trial
 * the cheaper next vertex goes first. The other candidate becomes a branch point. Adds the
 * estimated bits to *bits. */
static int continue_strip(vr_enc *e, int32_t b, uint32_t *bits)
{
    if (e->e_count == 0)
        return 0;
    const uint32_t last = E_AT(e->e_count - 1), t = e->e_tri[last], r = e->e_rot[last];
    uint32_t rot_n = 0, rot_p = 0;
    /* exit edges of the rotated triangle: (v1 -> v2) is half-edge r+1, (v2 -> v0) is r+2 */
    const uint32_t cn = across(e, 3 * t + g_plus1[r], b, &rot_n);
    const uint32_t cp = across(e, 3 * t + g_plus2[r], b, &rot_p);
    if (cn == NONE && cp == NONE)
        return 0;
    uint32_t pick = cn != NONE ? VR_GTS_CODE_N : VR_GTS_CODE_P;
    if (cn != NONE && cp != NONE && cn != cp) {
        if (e->trial) {
            if (step_cost(e, cp, rot_p) < step_cost(e, cn, rot_n) ||
                (step_cost(e, cp, rot_p) == step_cost(e, cn, rot_n) &&
                 e->e_code[last] == VR_GTS_CODE_N))
                pick = VR_GTS_CODE_P; /* tie: alternate N/P, a straight strip */
        } else {
            const uint32_t bn = trial_cost(e, b, cn, rot_n, VR_GTS_CODE_N);
            const uint32_t bp = trial_cost(e, b, cp, rot_p, VR_GTS_CODE_P);
            if (bp < bn || (bp == bn && e->e_code[last] == VR_GTS_CODE_N))
                pick = VR_GTS_CODE_P;
            e->stack[e->stack_size++] = pick == VR_GTS_CODE_N ? cp : cn;
        }
    }
    if (pick == VR_GTS_CODE_N)
        *bits += emit(e, cn, rot_n, VR_GTS_CODE_N);
    else
        *bits += emit(e, cp, rot_p, VR_GTS_CODE_P);
    return 1;
}

/* The paper's stripification of one belt: follow the strip while it can continue; then start
 * a new one at the latest branch point (stack), else at the next unemitted belt triangle. */
static void stripify_belt(vr_enc *e, int32_t b, uint32_t belt_len)
{
    uint32_t cursor = 0, bits = 0; /* bit estimates only steer trials; unused here */
    e->stack_size = 0;
    for (;;) {
        if (continue_strip(e, b, &bits))
            continue;
        uint32_t t = NONE;
        while (e->stack_size > 0 && t == NONE) {
            const uint32_t s = e->stack[--e->stack_size];
            if (e->adj[s].belt != VR_EMITTED)
                t = s;
        }
        while (t == NONE && cursor < belt_len) {
            const uint32_t s = e->belt_list[cursor++];
            if (e->adj[s].belt != VR_EMITTED)
                t = s;
        }
        if (t == NONE)
            return;
        bits += emit(e, t, start_rotation(e, t), VR_GTS_CODE_R);
    }
}

/* Belt after belt: belt b+1 is every unassigned triangle around a vertex of belt b, discovered
 * in belt b's strip order so the next belt's fallback starts lie near where the strip ended
 * (emit() adds them). */
static void order_triangles(vr_enc *e)
{
    uint32_t seed_cursor = 0;
    e->belt_id = 0;
    while (e->e_count < e->n) {
        while (e->adj[seed_cursor].belt >= 0)
            ++seed_cursor;
        uint32_t len = 0;
        expand_vertex(e, e->tri[3 * (size_t)seed_cursor], e->belt_id, e->belt_list, &len);
        while (len > 0) {
            e->next_len = 0;
            stripify_belt(e, e->belt_id, len);
            expand_drain(e);
            vr_progress("gts encode", e->e_count, e->n);
            uint32_t *swap = e->belt_list;
            e->belt_list = e->next_list;
            e->next_list = swap;
            len = e->next_len;
            ++e->belt_id;
        }
    }
}

/* Runs fa(a) here and fb(b) on a second thread (both here, in turn, when `threaded` is 0 or no
 * thread can be started); the halves write disjoint memory. */
static void run_pair(void *(*fa)(void *), void *a, void *(*fb)(void *), void *b, int threaded)
{
    pthread_t thread;
    threaded = threaded && pthread_create(&thread, NULL, fb, b) == 0;
    fa(a);
    if (threaded)
        pthread_join(thread, NULL);
    else
        fb(b);
}

/* Twins of the half-edges coming into vertices w0..w1-1 (build_adjacency); `first` is NONE
 * everywhere on entry and on return. */
typedef struct vr_twin_job {
    vr_enc *e;
    uint32_t w0, w1;
    uint32_t *first; /* vc scratch words */
    int shared;      /* out: some (from, to) has more than one half-edge */
} vr_twin_job;

static void *twin_range(void *arg)
{
    vr_twin_job *job = arg;
    vr_enc *e = job->e;
    const vr_vert *vert = e->vert;
    const uint32_t *tri = e->tri;
    uint32_t *first = job->first;
    for (uint32_t w = job->w0; w < job->w1; ++w) {
        const uint32_t *ring = e->ring + vert[w].ring, len = vert[w].ring_end - vert[w].ring;
        for (uint32_t k = len; k-- > 0;) { /* downwards: first[] ends at the lowest */
            const uint32_t h = ring[k], *v = tri + 3 * (size_t)(h / 3), j = h % 3;
            if (degenerate3(v))
                continue;
            const uint32_t to = v[(j + 1) % 3];
            job->shared |= first[to] != NONE;
            first[to] = h;
        }
        for (uint32_t k = 0; k < len; ++k) {
            const uint32_t h = ring[k], t = h / 3, *v = tri + 3 * (size_t)t, j = h % 3;
            if (!degenerate3(v)) {
                e->adj[t].twin[(j + 2) % 3] = first[v[(j + 2) % 3]];
                continue;
            }
            for (uint32_t kk = 0; kk < 3; ++kk) /* the corners of w's in-coming edges */
                if (v[(kk + 1) % 3] == w && v[kk] != w)
                    e->adj[t].twin[kk] = first[v[kk]];
        }
        for (uint32_t k = 0; k < len; ++k) {
            const uint32_t h = ring[k], *v = tri + 3 * (size_t)(h / 3);
            first[v[(h % 3 + 1) % 3]] = NONE;
        }
    }
    return NULL;
}

/* The big buffers of the encoder, faulted in on a thread of their own (vr_prefault) while the
 * caller's thread counts the rings and walks: on the development VM a first touch is the
 * largest single cost of the encoder (bench/NOTES.md). Joined before any of them is freed. */
typedef struct vr_prefaulter {
    void *ptr[8];
    size_t bytes[8];
    int count, started;
    pthread_t thread;
} vr_prefaulter;

static void *prefault_run(void *arg)
{
    vr_prefaulter *pf = arg;
    for (int i = 0; i < pf->count; ++i)
        vr_prefault(pf->ptr[i], pf->bytes[i]);
    return NULL;
}

static void prefault_add(vr_prefaulter *pf, void *p, size_t bytes)
{
    assert(pf->count < (int)VR_COUNT_OF(pf->ptr));
    pf->ptr[pf->count] = p, pf->bytes[pf->count] = bytes, ++pf->count;
}

static void prefault_join(vr_prefaulter *pf)
{
    if (pf->started)
        pthread_join(pf->thread, NULL);
    pf->started = 0;
}

/* Rings: a counting sort of the corners by vertex (each triangle once per distinct vertex), so
 * each ring lists its half-edges in ascending order. Twins: per vertex w, its out-going
 * half-edges grouped by head in a scratch table indexed by vertex (first[x]: the lowest w -> x),
 * then every half-edge coming into w (the previous edge of each triangle in w's ring) looks up
 * the group of its tail. Linear in the triangle count; no sort. */
static vr_status build_adjacency(vr_enc *e, uint32_t *scratch0, uint32_t *scratch1)
{
    const uint32_t n = e->n, vc = e->vc;
    vr_vert *const vert = e->vert;
    const uint32_t *const tri = e->tri;
    for (uint32_t t = 0; t < n; ++t) { /* ring sizes, counted in ring_end */
        const uint32_t *v = tri + 3 * (size_t)t;
        ++vert[v[0]].ring_end;
        vert[v[1]].ring_end += v[1] != v[0];
        vert[v[2]].ring_end += v[2] != v[0] && v[2] != v[1];
    }
    uint32_t sum = 0;
    for (uint32_t i = 0; i < vc; ++i) {
        const uint32_t count = vert[i].ring_end;
        vert[i].ring = vert[i].ring_end = sum; /* ring_end is the fill cursor until the end */
        vert[i].vid = vert[i].fid = NONE;
        sum += count;
    }
    for (uint32_t t = 0; t < n; ++t) {
        const uint32_t *v = tri + 3 * (size_t)t;
        e->ring[vert[v[0]].ring_end++] = 3 * t;
        if (v[1] != v[0])
            e->ring[vert[v[1]].ring_end++] = 3 * t + 1;
        if (v[2] != v[0] && v[2] != v[1])
            e->ring[vert[v[2]].ring_end++] = 3 * t + 2;
        e->adj[t].belt = -1;
        if (degenerate3(v)) /* self-loop edges keep NONE; the others are set below */
            e->adj[t].twin[0] = e->adj[t].twin[1] = e->adj[t].twin[2] = NONE;
    }
    /* twins: the vertices in two halves, one per thread, each with its own scratch table */
    vr_twin_job jobs[2] = {{e, 0, vc / 2, scratch0, 0}, {e, vc / 2, vc, scratch1, 0}};
    memset(scratch0, 0xff, (size_t)vc * sizeof *scratch0);
    memset(scratch1, 0xff, (size_t)vc * sizeof *scratch1);
    run_pair(twin_range, &jobs[0], twin_range, &jobs[1], n >= THREAD_MIN_TRIANGLES);
    const int shared = jobs[0].shared | jobs[1].shared;
    if (shared) { /* non-manifold or inconsistently oriented: chain the pages of each edge */
        e->twin_next = vr_alloc_huge(3 * (size_t)n * sizeof *e->twin_next, 0);
        if (!e->twin_next)
            return VR_ERROR(VR_ERR_OOM, "gts encode: %u triangles: out of memory for the "
                            "non-manifold edges", n);
        memset(e->twin_next, 0xff, 3 * (size_t)n * sizeof *e->twin_next);
        uint32_t *last = scratch0; /* all NONE again */
        for (uint32_t w = 0; w < vc; ++w) {
            const uint32_t *ring = e->ring + vert[w].ring, len = vert[w].ring_end - vert[w].ring;
            for (uint32_t k = 0; k < len; ++k) {
                const uint32_t h = ring[k], *v = tri + 3 * (size_t)(h / 3);
                if (degenerate3(v))
                    continue;
                const uint32_t to = v[(h % 3 + 1) % 3];
                if (last[to] != NONE)
                    e->twin_next[last[to]] = h;
                last[to] = h;
            }
            for (uint32_t k = 0; k < len; ++k) {
                const uint32_t h = ring[k], *v = tri + 3 * (size_t)(h / 3);
                last[v[(h % 3 + 1) % 3]] = NONE;
            }
        }
    }
    return VR_OK;
}

static void enc_free(vr_enc *e)
{
    void *const bufs[] = {e->vert, e->ring, e->adj, e->twin_next, e->stack, e->belt_list,
                          e->next_list, e->bridges, e->pushed, e->undo_tri, e->undo_vid,
                          e->out.c.w, e->out.inc.w, e->out.deltas, e->out.old_of_new,
                          e->out.tri, e->out.source, e->out.degen};
    vr_free_all(bufs, VR_COUNT_OF(bufs));
}

/* ---- streams ------------------------------------------------------------------------------ */

/* The streams are written as the walk commits each emission (emit() outside trials), while the
 * emitted triangle and its vertices are in cache: no pass over the emission order afterwards. */

/* Grows a word array to hold `need` words (realloc: a large block moves by remapping its pages,
 * nothing is copied or touched again). Returns 0 when out of memory. Out of line: the walk
 * calls words_reserve for every entry and almost never grows. */
static __attribute__((noinline)) int words_grow(uint32_t **w, size_t *cap, size_t need)
{
    size_t c = *cap;
    while (c < need)
        c += c / 2 + 4096;
    uint32_t *p = realloc(*w, c * sizeof *p);
    if (!p)
        return 0;
    *w = p, *cap = c;
    return 1;
}

static inline int words_reserve(uint32_t **w, size_t *cap, size_t need)
{
    return need <= *cap || words_grow(w, cap, need);
}

/* Appends the low `bits` (1 or 2) of v to a bit stream of 32-bit words (LSB first, as C and INC
 * store them); the partial word waits in acc. */
static int bits_push(vr_bitstream *b, uint32_t v, uint32_t bits)
{
    b->acc |= v << (b->len & 31);
    b->len += bits;
    if ((b->len & 31) < bits) { /* the word filled up (0: exactly; else what spilled over) */
        if (!words_reserve(&b->w, &b->cap, (b->len >> 5) + 1))
            return 0;
        b->w[(b->len >> 5) - 1] = b->acc;
        b->acc = (b->len & 31) ? v >> (bits - (b->len & 31)) : 0;
    }
    return 1;
}

/* The last, partial word of a bit stream; the stream then holds exactly its words. */
static int bits_flush(vr_bitstream *b)
{
    const size_t words = (b->len + 31) >> 5;
    if (!words_reserve(&b->w, &b->cap, words + 1))
        return 0;
    if (b->len & 31)
        b->w[words - 1] = b->acc;
    return 1;
}

static vr_status alloc_words(uint32_t **p, size_t words, const char *what)
{
    *p = vr_alloc_huge(words * sizeof **p, 1);
    if (!*p)
        return VR_ERROR(VR_ERR_OOM, "gts encode: out of memory for %zu words of %s", words, what);
    return VR_OK;
}

static void commit_fail(vr_enc *e) { e->out.dead = e->out.oom = 1; }

/* One entry of V: INC bit, first-visit id (old_of_new) or the zigzag delta of a re-used one. */
static void commit_vertex(vr_enc *e, uint32_t v)
{
    vr_out *o = &e->out;
    vr_vert *vv = &e->vert[v];
    const uint32_t fresh = vv->fid == NONE;
    if (!bits_push(&o->inc, fresh, 1)) {
        commit_fail(e);
        return;
    }
    if (fresh) {
        o->old_of_new[o->next] = v;
        vv->fid = o->next++;
        return;
    }
    const uint32_t u = vv->fid, z = vr_gts_zigzag(u - o->prev_u);
    if (z >> 28) { /* reported after the walk, as vr_gts_encode's error */
        o->dead = 1;
        o->bad_u = u, o->bad_prev_u = o->prev_u;
        o->delta_overflow = 1;
        return;
    }
    if (!words_reserve(&o->deltas, &o->deltas_cap, o->u_count + 1)) {
        commit_fail(e);
        return;
    }
    o->deltas[o->u_count++] = z;
    o->prev_u = u;
}

/* Room for more map entries: tri holds 3 map_cap words, source map_cap. */
static __attribute__((noinline)) int map_grow(vr_out *o)
{
    const size_t cap = o->map_cap + o->map_cap / 2 + 4096;
    uint32_t *tri = realloc(o->tri, 3 * cap * sizeof *tri);
    if (!tri)
        return 0;
    o->tri = tri;
    uint32_t *source = realloc(o->source, cap * sizeof *source);
    if (!source)
        return 0;
    o->source = source, o->map_cap = cap;
    return 1;
}

/* One strip triangle: its code into C, and for the map its new ids and source. */
static void commit_triangle(vr_enc *e, const uint32_t t[3], uint32_t source, uint32_t code)
{
    vr_out *o = &e->out;
    if (o->strips >= VR_GTS_MAX_TRIANGLES) { /* reported after the walk (its restart bound) */
        o->dead = 1;
        return;
    }
    const int r_mode = e->mode == VR_GTS_RESTART_CODE;
    if (!bits_push(&o->c, r_mode ? code : code & 1u, r_mode ? 2 : 1)) {
        commit_fail(e);
        return;
    }
    if (!r_mode && source != VR_GTS_EMULATED && degenerate3(t)) {
        if (!words_reserve(&o->degen, &o->degen_cap, o->degen_count + 1)) {
            commit_fail(e);
            return;
        }
        o->degen[o->degen_count++] = o->strips;
    }
    if (o->map) {
        if (o->strips == o->map_cap && !map_grow(o)) {
            commit_fail(e);
            return;
        }
        uint32_t *dst = o->tri + 3 * (size_t)o->strips;
        dst[0] = e->vert[t[0]].fid, dst[1] = e->vert[t[1]].fid, dst[2] = e->vert[t[2]].fid;
        o->source[o->strips] = source;
    }
    ++o->strips;
    memcpy(o->cur, t, sizeof o->cur);
}

/* The strips of one committed emission (t, rot, code), the i-th: a strip triangle with its V
 * entries; a restart: three V entries in R mode, in deg. mode the shortest bridge of degenerate
 * triangles from the previous strip triangle first. */
static void commit(vr_enc *e, uint32_t t, uint32_t rot, uint32_t code)
{
    vr_out *o = &e->out;
    const uint32_t i = o->emitted++;
    if (i > 0 && code == VR_GTS_CODE_R)
        ++o->restarts;
    if (o->dead)
        return;
    uint32_t v[3];
    rotated(e, t, rot, v);
    if (i == 0 || (code == VR_GTS_CODE_R && e->mode == VR_GTS_RESTART_CODE)) {
        o->v_count += 3;
        for (int k = 0; k < 3; ++k)
            commit_vertex(e, v[k]);
        if (!o->dead)
            commit_triangle(e, v, t, i == 0 && e->mode == VR_GTS_RESTART_DEGENERATE
                                         ? VR_GTS_CODE_N : VR_GTS_CODE_R);
        return;
    }
    if (code == VR_GTS_CODE_R) { /* deg. mode */
        uint32_t cur[3];
        uint8_t lab[6];
        memcpy(cur, o->cur, sizeof cur);
        const vr_bridge *br = bridge_for(e, cur, v, lab);
        const uint32_t vals[6] = {cur[0], cur[1], cur[2], v[0], v[1], v[2]};
        for (int k = 0; k <= br->depth && !o->dead; ++k) {
            const uint32_t w = k < br->depth ? vals[br->slot[k]] : v[2];
            uint32_t nx[3];
            vr_gts_strip_next(nx, cur, br->code[k], w);
            ++o->v_count;
            commit_vertex(e, w);
            if (!o->dead)
                commit_triangle(e, nx, k < br->depth ? VR_GTS_EMULATED : t, br->code[k]);
            memcpy(cur, nx, sizeof cur);
        }
        assert(o->dead || (cur[0] == v[0] && cur[1] == v[1] && cur[2] == v[2]));
        return;
    }
    ++o->v_count;
    commit_vertex(e, v[2]);
    if (!o->dead)
        commit_triangle(e, v, t, code);
}

/* Strip codes into C and the deltas into Simple-9 words (run_pair's calling half). */
typedef struct vr_pack_job {
    vr_gts *g;
    const uint32_t *deltas;
    vr_gts_packing packing;
    vr_status status; /* out */
} vr_pack_job;

static void *pack_deltas(void *arg)
{
    vr_pack_job *job = arg;
    vr_gts *g = job->g;
    size_t words = 0;
    if ((job->status = alloc_words(&g->s, g->u_count, "Simple-9")) ||
        (job->status = vr_s9_encode(g->s, &words, job->deltas, g->u_count, job->packing)))
        return NULL;
    g->s_count = (uint32_t)words;
    return NULL;
}

/* The permuted vertex data (run_pair's second half). */
typedef struct vr_out_job {
    const vr_mesh *mesh;
    vr_gts *g;
    const uint32_t *old_of_new;
} vr_out_job;

/* The vertex arrays take over the walk's dead ring and adjacency blocks where they fit (a shrinking
 * realloc keeps the pages already faulted in: no fresh memory for the largest output). */
static vr_status out_job_alloc(vr_out_job *job, vr_enc *e)
{
    const vr_mesh *m = job->mesh;
    const size_t vc = job->g->vertex_count;
    float **dst[3] = {&job->g->positions, &job->g->normals, &job->g->texcoords};
    const float *src[3] = {m->positions, m->normals, m->texcoords};
    const size_t bytes = vc * 3 * sizeof(float);
    if (src[0] && bytes <= 3 * (size_t)e->n * sizeof *e->ring &&
        (job->g->positions = realloc(e->ring, bytes)))
        e->ring = NULL;
    if (src[1] && bytes <= (size_t)e->n * sizeof *e->adj &&
        (job->g->normals = realloc(e->adj, bytes)))
        e->adj = NULL;
    for (int a = 0; a < 3; ++a)
        if (src[a] && !*dst[a] &&
            !(*dst[a] = vr_alloc_huge(vc * (a == 2 ? 2 : 3) * sizeof(float), 0)))
            return VR_ERROR(VR_ERR_OOM, "gts encode: out of memory for %zu vertices of "
                            "attributes", vc);
    return VR_OK;
}

static void *out_job_run(void *arg)
{
    vr_out_job *job = arg;
    const uint32_t vc = job->g->vertex_count, *old_of_new = job->old_of_new;
    const vr_mesh *m = job->mesh;
    float *dst[3] = {job->g->positions, job->g->normals, job->g->texcoords};
    const float *src[3] = {m->positions, m->normals, m->texcoords};
    for (int a = 0; a < 3; ++a) {
        const size_t comps = a == 2 ? 2 : 3;
        if (src[a])
            for (uint32_t i = 0; i < vc; ++i)
                memcpy(dst[a] + i * comps, src[a] + (size_t)old_of_new[i] * comps,
                       comps * sizeof(float));
    }
    return NULL;
}

/* With VR_GTS_PHASES set in the environment, the wall time of each phase goes to stderr (the
 * phase tables of bench/NOTES.md). */
typedef struct vr_phases {
    int on;
    double t0;
} vr_phases;

static void phase(vr_phases *p, const char *name)
{
    const double t = vr_now_ms();
    if (!name)
        p->on = getenv("VR_GTS_PHASES") != NULL;
    else if (p->on)
        fprintf(stderr, "  gts encode phase %-10s %8.1f ms\n", name, t - p->t0);
    p->t0 = t;
}

vr_gts_options vr_gts_options_default(void)
{
    vr_gts_options o;
    memset(&o, 0, sizeof o);
    o.restart = VR_GTS_RESTART_DEGENERATE;
    o.packing = VR_GTS_PACK_OPTIMAL;
    o.keep_vertex_data = 1;
    return o;
}

/* After the walk: the errors the commits met, then the outputs in their final sizes. */
static vr_status finish_streams(vr_enc *e, vr_gts *out)
{
    vr_out *o = &e->out;
    const uint64_t cap = (uint64_t)e->n + (e->mode == VR_GTS_RESTART_DEGENERATE ? BRIDGE_MAX : 0) *
                                              (uint64_t)o->restarts;
    if (cap > VR_GTS_MAX_TRIANGLES)
        return VR_ERROR(VR_ERR_OVERFLOW, "gts encode: %llu strip triangles exceed the format's "
                        "limit of %u", (unsigned long long)cap, VR_GTS_MAX_TRIANGLES);
    if (o->oom || !bits_flush(&o->c) || !bits_flush(&o->inc))
        return VR_ERROR(VR_ERR_OOM, "gts encode: out of memory for %u strip triangles",
                        o->strips);
    if (o->delta_overflow)
        return VR_ERROR(VR_ERR_OVERFLOW, "gts encode: re-used vertex %u after %u is a delta "
                        "of %lld, beyond the 28-bit Simple-9 codes; the mesh has too many "
                        "vertices (%u) or too little coherence", o->bad_u, o->bad_prev_u,
                        (long long)o->bad_u - (long long)o->bad_prev_u, e->vc);
    out->restart = e->mode;
    out->triangle_count = e->n;
    out->strip_triangle_count = o->strips;
    out->restart_count = o->restarts;
    out->vertex_count = e->vc;
    out->v_count = o->v_count;
    out->u_count = o->u_count;
    out->referenced_count = o->next;
    out->c = o->c.w, o->c.w = NULL;
    out->inc = o->inc.w, o->inc.w = NULL;
    assert(vr_gts_c_words(out) <= o->c.cap && vr_gts_inc_words(out) <= o->inc.cap);
    if (o->degen_count) {
        out->degenerate_source = o->degen, o->degen = NULL;
        out->degenerate_source_count = o->degen_count;
    }
    /* unreferenced vertices last, in source order */
    for (uint32_t v = 0; v < e->vc; ++v)
        if (e->vert[v].fid == NONE) {
            o->old_of_new[o->next] = v;
            e->vert[v].fid = o->next++;
        }
    return VR_OK;
}

vr_status vr_gts_encode(vr_gts *out, vr_gts_map *map, const vr_mesh *mesh,
                        const vr_gts_options *opt)
{
    assert(out && mesh && opt);
    memset(out, 0, sizeof *out);
    if (map)
        memset(map, 0, sizeof *map);
    vr_phases ph;
    phase(&ph, NULL);
    vr_status s = vr_mesh_validate(mesh, "gts encode");
    if (s)
        return s;
    if (opt->restart != VR_GTS_RESTART_CODE && opt->restart != VR_GTS_RESTART_DEGENERATE)
        return VR_ERROR(VR_ERR_ARG, "gts encode: restart mode %d is neither code nor degenerate",
                        (int)opt->restart);
    vr_enc e;
    memset(&e, 0, sizeof e);
    e.n = mesh->index_count / 3;
    e.vc = mesh->vertex_count;
    e.tri = mesh->indices;
    e.mode = opt->restart;
    e.out.map = map != NULL;
    vr_prefaulter pf;
    memset(&pf, 0, sizeof pf);
    /* outputs sized for a strip per component and few bridges (they grow when not); old_of_new
     * and deltas are the adjacency's scratch tables first (vc words each) */
    const size_t strips_guess = (size_t)e.n + e.n / 16 + 64;
    e.out.deltas_cap = strips_guess > e.vc ? strips_guess : e.vc;
    e.out.old_of_new = vr_alloc_huge((size_t)e.vc * sizeof *e.out.old_of_new, 0);
    e.out.deltas = vr_alloc_huge(e.out.deltas_cap * sizeof *e.out.deltas, 0);
    if (map) {
        e.out.tri = vr_alloc_huge(3 * strips_guess * sizeof *e.out.tri, 0);
        e.out.source = vr_alloc_huge(strips_guess * sizeof *e.out.source, 0);
        e.out.map_cap = strips_guess;
    }
    e.vert = vr_alloc_huge((size_t)e.vc * sizeof *e.vert, 1);
    e.ring = vr_alloc_huge(3 * (size_t)e.n * sizeof *e.ring, 0);
    e.adj = vr_alloc_huge((size_t)e.n * sizeof *e.adj, 0);
    e.stack = malloc((size_t)e.n * sizeof *e.stack);
    e.belt_list = malloc((size_t)e.n * sizeof *e.belt_list);
    e.next_list = malloc((size_t)e.n * sizeof *e.next_list);
    e.bridges = malloc(PATTERN_COUNT * sizeof *e.bridges);
    e.pushed = vr_alloc_huge(((size_t)e.vc + 63) / 64 * sizeof *e.pushed, 1);
    e.undo_tri = malloc((LOOKAHEAD + 1) * sizeof *e.undo_tri);
    e.undo_vid = malloc(3 * (LOOKAHEAD + 1) * sizeof *e.undo_vid);
    if (!e.vert || !e.ring || !e.adj || !e.undo_tri || !e.undo_vid || !e.stack || !e.belt_list ||
        !e.next_list || !e.bridges || !e.pushed || !e.out.old_of_new || !e.out.deltas ||
        (map && (!e.out.tri || !e.out.source))) {
        s = VR_ERROR(VR_ERR_OOM, "gts encode: %u vertices, %u triangles: out of memory for the "
                     "adjacency and the streams", e.vc, e.n);
        goto fail;
    }
    /* in the order of first use: the rings and twins, the twins' scratch, the walk's outputs */
    prefault_add(&pf, e.ring, 3 * (size_t)e.n * sizeof *e.ring);
    prefault_add(&pf, e.adj, (size_t)e.n * sizeof *e.adj);
    prefault_add(&pf, e.out.old_of_new, (size_t)e.vc * sizeof *e.out.old_of_new);
    prefault_add(&pf, e.out.deltas, e.out.deltas_cap * sizeof *e.out.deltas);
    if (map) {
        prefault_add(&pf, e.out.tri, 3 * e.out.map_cap * sizeof *e.out.tri);
        prefault_add(&pf, e.out.source, e.out.map_cap * sizeof *e.out.source);
    }
    pf.started = e.n >= THREAD_MIN_TRIANGLES &&
                 pthread_create(&pf.thread, NULL, prefault_run, &pf) == 0;
    phase(&ph, "alloc");
    if ((s = build_adjacency(&e, e.out.old_of_new, e.out.deltas)))
        goto fail;
    phase(&ph, "adjacency");
    for (uint32_t i = 0; i < PATTERN_COUNT; ++i)
        e.bridges[i].depth = -1;
    order_triangles(&e);
    assert(e.e_count == e.n);
    prefault_join(&pf);
    phase(&ph, "walk");
    if ((s = finish_streams(&e, out)))
        goto fail;
    phase(&ph, "finish");
    /* vertex data on a second thread while the Simple-9 words are packed here; everything it
     * writes is allocated first, so it cannot fail */
    vr_out_job job = {mesh, out, e.out.old_of_new};
    if (opt->keep_vertex_data && (s = out_job_alloc(&job, &e)))
        goto fail;
    vr_pack_job pack = {out, e.out.deltas, opt->packing, VR_OK};
    if (opt->keep_vertex_data)
        run_pair(pack_deltas, &pack, out_job_run, &job, e.n >= THREAD_MIN_TRIANGLES);
    else
        pack_deltas(&pack);
    phase(&ph, "pack||vdata");
    if ((s = pack.status))
        goto fail;
    if (map) {
        /* new_of_old in place of the vertex records (each word lands at or before the record it
         * is read from), then the block shrinks to it */
        uint32_t *new_of_old = (uint32_t *)e.vert;
        for (uint32_t v = 0; v < e.vc; ++v)
            new_of_old[v] = e.vert[v].fid;
        void *shrunk = realloc(new_of_old, (size_t)(e.vc ? e.vc : 1) * sizeof *new_of_old);
        e.vert = NULL;
        map->strip_triangle_count = e.out.strips;
        map->vertex_count = e.vc;
        map->old_of_new = e.out.old_of_new;
        map->new_of_old = shrunk ? shrunk : new_of_old;
        map->indices = e.out.tri;
        map->triangle_source = e.out.source;
        e.out.old_of_new = e.out.tri = e.out.source = NULL;
    }
    vr_progress("gts encode", e.n, e.n);
    enc_free(&e);
    phase(&ph, "map+free");
    return VR_OK;
fail:
    prefault_join(&pf);
    enc_free(&e);
    vr_gts_free(out);
    vr_gts_map_free(map);
    return s;
}

void vr_gts_map_free(vr_gts_map *m)
{
    if (!m)
        return;
    void *const bufs[] = {m->indices, m->triangle_source, m->old_of_new, m->new_of_old};
    vr_free_all(bufs, VR_COUNT_OF(bufs));
    memset(m, 0, sizeof *m);
}
