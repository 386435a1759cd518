/* gts_encode.c - CPU encoder of the GTS codec (Meyer et al. 2012, Sec. 3-6): breadth-first
 * belts from a seed vertex per component, stripification of each belt into generalized
 * triangle strips (a stack of branch points, strips merged across belt boundaries), restarts as
 * R codes or emulated by the shortest chain of degenerate triangles, vertices renumbered by
 * first visit in V, INC bits, and the re-used vertices U as zigzag deltas in Simple-9 words.
 * Linear time in the triangle count, no sort anywhere: rings by a counting sort, twins (the
 * half-edge across each edge) grouped per vertex in a scratch table, O(1) edge lookups, bounded
 * trials, a linear Simple-9 packer; two threads where phases split (twins, output packing).
 * The bytes are pinned (`vreuse_tests gts/encode-pinned`); bench/NOTES.md has the phase times.
 * CPU twin of nothing: the decoders (gts_decode_ref.c, gts_decode.cu) invert it.
 * Try: `vreuse compress ../shared/scenes/igea.ply --restart deg`, `vreuse_tests gts/`.
 */
#include "pipeline/gts/gts.h"
#include "pipeline/gts/gts_math.h"
#include "pipeline/vr_mem.h"

#include <assert.h>
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
} vr_vert;

/* Per triangle: where each of its half-edges can be continued, and its belt state. */
typedef struct vr_tri_adj {
    uint32_t twin[3]; /* half-edge 3t+k = (v[k] -> v[k+1]): the lowest half-edge of a
                       * non-degenerate triangle going the other way, NONE when there is none */
    int32_t belt;     /* belt id; -1 while unassigned; VR_EMITTED once emitted */
} vr_tri_adj;

#define VR_EMITTED INT32_MAX

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
    int32_t belt_id;       /* the belt being stripified */
    uint32_t *e_tri;       /* n: emission order */
    uint8_t *e_rot;        /* n: rotation r: (t[r], t[r+1], t[r+2]) */
    uint8_t *e_code;       /* n: R for strip starts, N or P */
    uint32_t e_count;
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

static void rotated(const vr_enc *e, uint32_t t, uint32_t r, uint32_t v[3])
{
    const uint32_t *s = e->tri + 3 * (size_t)t;
    v[0] = s[r], v[1] = s[(r + 1) % 3], v[2] = s[(r + 2) % 3];
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

/* Appends triangle t with rotation rot to the emission order; returns the estimated bits of
 * its V entries (R: all three vertices, N/P: the new one). Outside trials, its vertices'
 * unassigned neighbors join the next belt now, while they are in cache: the order is the one
 * of a pass over the finished belt in emission order, and nothing in the current belt looks
 * at triangles outside it. */
static uint32_t emit(vr_enc *e, uint32_t t, uint32_t rot, uint32_t code)
{
    uint32_t v[3];
    rotated(e, t, rot, v);
    e->adj[t].belt = VR_EMITTED;
    if (e->trial)
        e->undo_tri[e->undo_tris++] = t;
    else
        for (int j = 0; j < 3; ++j)
            expand_push(e, e->tri[3 * (size_t)t + j]);
    e->e_tri[e->e_count] = t;
    e->e_rot[e->e_count] = (uint8_t)rot;
    e->e_code[e->e_count] = (uint8_t)code;
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
            rotated(e, e->e_tri[e->e_count - 1], e->e_rot[e->e_count - 1], prev);
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
    const uint32_t last = e->e_count - 1, t = e->e_tri[last], r = e->e_rot[last];
    uint32_t rot_n = 0, rot_p = 0;
    /* exit edges of the rotated triangle: (v1 -> v2) is half-edge r+1, (v2 -> v0) is r+2 */
    const uint32_t cn = across(e, 3 * t + (r + 1) % 3, b, &rot_n);
    const uint32_t cp = across(e, 3 * t + (r + 2) % 3, b, &rot_p);
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

/* Rings: a counting sort of the corners by vertex (each triangle once per distinct vertex), so
 * each ring lists its half-edges in ascending order. Twins: per vertex w, its out-going
 * half-edges grouped by head in a scratch table indexed by vertex (first[x]: the lowest w -> x),
 * then every half-edge coming into w (the previous edge of each triangle in w's ring) looks up
 * the group of its tail. Linear in the triangle count; no sort. */
static vr_status build_adjacency(vr_enc *e)
{
    const uint32_t n = e->n, vc = e->vc;
    e->vert = calloc(vc, sizeof *e->vert);
    e->ring = malloc(3 * (size_t)n * sizeof *e->ring);
    e->adj = malloc((size_t)n * sizeof *e->adj);
    uint32_t *first = malloc(2 * (size_t)vc * sizeof *first);
    if (!e->vert || !e->ring || !e->adj || !first) {
        free(first);
        return VR_ERROR(VR_ERR_OOM, "gts encode: %u vertices, %u triangles: out of memory for "
                        "the adjacency", vc, n);
    }
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
        vert[i].vid = NONE;
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
    vr_twin_job jobs[2] = {{e, 0, vc / 2, first, 0}, {e, vc / 2, vc, first + vc, 0}};
    memset(first, 0xff, 2 * (size_t)vc * sizeof *first);
    run_pair(twin_range, &jobs[0], twin_range, &jobs[1], n >= THREAD_MIN_TRIANGLES);
    const int shared = jobs[0].shared | jobs[1].shared;
    if (shared) { /* non-manifold or inconsistently oriented: chain the pages of each edge */
        e->twin_next = malloc(3 * (size_t)n * sizeof *e->twin_next);
        if (!e->twin_next) {
            free(first);
            return VR_ERROR(VR_ERR_OOM, "gts encode: %u triangles: out of memory for the "
                            "non-manifold edges", n);
        }
        memset(e->twin_next, 0xff, 3 * (size_t)n * sizeof *e->twin_next);
        uint32_t *last = first; /* all NONE again */
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
    free(first);
    return VR_OK;
}

static void enc_free(vr_enc *e)
{
    void *const bufs[] = {e->vert, e->ring, e->adj, e->twin_next, e->stack, e->belt_list,
                          e->next_list, e->e_tri, e->e_rot, e->e_code, e->bridges, e->undo_tri,
                          e->undo_vid};
    vr_free_all(bufs, VR_COUNT_OF(bufs));
}

/* ---- streams -------------------------------------------------------------------------------- */

/* The strip triangle list T (source ids) with its codes and sources, and V (source ids). */
typedef struct vr_strips {
    uint32_t count, v_count, restarts;
    uint32_t *tri;    /* 3 * count */
    uint32_t *source; /* count */
    uint8_t *code;    /* count */
    uint32_t *v;      /* v_count */
} vr_strips;

static void strips_push(vr_strips *st, const uint32_t t[3], uint32_t source, uint32_t code)
{
    memcpy(st->tri + 3 * (size_t)st->count, t, 3 * sizeof *t);
    st->source[st->count] = source;
    st->code[st->count] = (uint8_t)code;
    ++st->count;
}

static vr_status build_strips(vr_strips *st, vr_enc *e)
{
    uint64_t restarts = 0;
    for (uint32_t i = 1; i < e->e_count; ++i)
        restarts += e->e_code[i] == VR_GTS_CODE_R;
    const uint64_t cap = (uint64_t)e->n + (e->mode == VR_GTS_RESTART_DEGENERATE ? BRIDGE_MAX : 0) *
                                              restarts;
    if (cap > VR_GTS_MAX_TRIANGLES)
        return VR_ERROR(VR_ERR_OVERFLOW, "gts encode: %llu strip triangles exceed the format's "
                        "limit of %u", (unsigned long long)cap, VR_GTS_MAX_TRIANGLES);
    st->tri = malloc(3 * cap * sizeof *st->tri);
    st->source = malloc(cap * sizeof *st->source);
    st->code = malloc(cap);
    st->v = malloc((3 * cap + 2) * sizeof *st->v);
    if (!st->tri || !st->source || !st->code || !st->v)
        return VR_ERROR(VR_ERR_OOM, "gts encode: out of memory for %llu strip triangles",
                        (unsigned long long)cap);
    st->restarts = (uint32_t)restarts;
    for (uint32_t i = 0; i < e->e_count; ++i) {
        uint32_t t[3];
        rotated(e, e->e_tri[i], e->e_rot[i], t);
        const uint32_t code = e->e_code[i];
        if (i == 0 || (code == VR_GTS_CODE_R && e->mode == VR_GTS_RESTART_CODE)) {
            st->v[st->v_count++] = t[0], st->v[st->v_count++] = t[1], st->v[st->v_count++] = t[2];
            strips_push(st, t, e->e_tri[i], i == 0 && e->mode == VR_GTS_RESTART_DEGENERATE
                                                ? VR_GTS_CODE_N : VR_GTS_CODE_R);
            continue;
        }
        if (code == VR_GTS_CODE_R) { /* deg. mode: bridge with degenerate triangles */
            uint32_t cur[3];
            uint8_t lab[6];
            memcpy(cur, st->tri + 3 * (size_t)(st->count - 1), sizeof cur);
            const vr_bridge *br = bridge_for(e, cur, t, lab);
            const uint32_t vals[6] = {cur[0], cur[1], cur[2], t[0], t[1], t[2]};
            for (int k = 0; k <= br->depth; ++k) {
                const uint32_t w = k < br->depth ? vals[br->slot[k]] : t[2];
                uint32_t nx[3];
                vr_gts_strip_next(nx, cur, br->code[k], w);
                st->v[st->v_count++] = w;
                strips_push(st, nx, k < br->depth ? VR_GTS_EMULATED : e->e_tri[i], br->code[k]);
                memcpy(cur, nx, sizeof cur);
            }
            assert(cur[0] == t[0] && cur[1] == t[1] && cur[2] == t[2]);
            continue;
        }
        st->v[st->v_count++] = t[2];
        strips_push(st, t, e->e_tri[i], code);
    }
    return VR_OK;
}

/* deg. mode: every emulation triangle is degenerate, so the source triangles that are degenerate
 * too are listed by strip position (gts.h); nothing is listed for other meshes. */
static vr_status list_degenerate_sources(vr_gts *g, const vr_strips *st)
{
    if (g->restart != VR_GTS_RESTART_DEGENERATE)
        return VR_OK;
    uint32_t count = 0;
    for (uint32_t i = 0; i < st->count; ++i)
        count += st->source[i] != VR_GTS_EMULATED && degenerate3(st->tri + 3 * (size_t)i);
    if (!count)
        return VR_OK;
    g->degenerate_source = malloc((size_t)count * sizeof *g->degenerate_source);
    if (!g->degenerate_source)
        return VR_ERROR(VR_ERR_OOM, "gts encode: out of memory for %u degenerate triangles", count);
    for (uint32_t i = 0; i < st->count; ++i)
        if (st->source[i] != VR_GTS_EMULATED && degenerate3(st->tri + 3 * (size_t)i))
            g->degenerate_source[g->degenerate_source_count++] = i;
    return VR_OK;
}

static void strips_free(vr_strips *st)
{
    void *const bufs[] = {st->tri, st->source, st->code, st->v};
    vr_free_all(bufs, VR_COUNT_OF(bufs));
}

static vr_status alloc_words(uint32_t **p, size_t words, const char *what)
{
    *p = calloc(words ? words : 1, sizeof **p);
    if (!*p)
        return VR_ERROR(VR_ERR_OOM, "gts encode: out of memory for %zu words of %s", words, what);
    return VR_OK;
}

/* The final vertex numbering: first visit in V, unreferenced vertices last in source order. */
typedef struct vr_numbering {
    uint32_t *old_of_new; /* vertex_count */
    uint32_t *new_of_old; /* vertex_count */
    uint32_t *deltas;     /* u_count zigzag deltas of the re-used vertices */
} vr_numbering;

static void numbering_free(vr_numbering *nv)
{
    void *const bufs[] = {nv->old_of_new, nv->new_of_old, nv->deltas};
    vr_free_all(bufs, VR_COUNT_OF(bufs));
}

/* Renumbers by first visit in V and fills INC and the deltas (checked against the 28-bit codes). */
static vr_status number_vertices(vr_gts *g, vr_numbering *nv, const vr_strips *st)
{
    const uint32_t vertex_count = g->vertex_count;
    uint32_t *new_of_old = nv->new_of_old = malloc((size_t)vertex_count * sizeof *new_of_old);
    uint32_t *onew = nv->old_of_new = malloc((size_t)vertex_count * sizeof *onew);
    uint32_t *deltas = nv->deltas = malloc((size_t)st->v_count * sizeof *deltas);
    if (!new_of_old || !onew || !deltas)
        return VR_ERROR(VR_ERR_OOM, "gts encode: out of memory for %u vertices", vertex_count);
    memset(new_of_old, 0xff, (size_t)vertex_count * sizeof *new_of_old);
    g->v_count = st->v_count;
    vr_status s;
    if ((s = alloc_words(&g->inc, vr_gts_inc_words(g), "INC")) ||
        (s = alloc_words(&g->c, vr_gts_c_words(g), "strip codes")))
        return s;
    uint32_t next = 0, prev_u = 0;
    for (uint32_t j = 0; j < st->v_count; ++j) {
        const uint32_t old = st->v[j];
        if (new_of_old[old] == NONE) {
            onew[next] = old;
            new_of_old[old] = next++;
            g->inc[j >> 5] |= 1u << (j & 31);
            continue;
        }
        const uint32_t u = new_of_old[old];
        const uint32_t z = vr_gts_zigzag(u - prev_u);
        if (z >> 28)
            return VR_ERROR(VR_ERR_OVERFLOW, "gts encode: re-used vertex %u after %u is a delta "
                            "of %lld, beyond the 28-bit Simple-9 codes; the mesh has too many "
                            "vertices (%u) or too little coherence", u, prev_u,
                            (long long)u - (long long)prev_u, vertex_count);
        deltas[g->u_count++] = z;
        prev_u = u;
    }
    g->referenced_count = next;
    for (uint32_t old = 0; old < vertex_count; ++old)
        if (new_of_old[old] == NONE) {
            onew[next] = old;
            new_of_old[old] = next++;
        }
    return VR_OK;
}

/* Strip codes into C and the deltas into Simple-9 words (run_pair's calling half). */
typedef struct vr_pack_job {
    vr_gts *g;
    const vr_strips *st;
    const vr_numbering *nv;
    vr_gts_packing packing;
    vr_status status; /* out */
} vr_pack_job;

static void *pack_codes(void *arg)
{
    vr_pack_job *job = arg;
    vr_gts *g = job->g;
    const vr_strips *st = job->st;
    for (uint32_t i = 0; i < st->count; ++i) {
        const uint32_t code = st->code[i];
        if (g->restart == VR_GTS_RESTART_CODE)
            g->c[i >> 4] |= code << ((i & 15) * 2);
        else
            g->c[i >> 5] |= (code & 1u) << (i & 31);
    }
    size_t words = 0;
    if ((job->status = alloc_words(&g->s, g->u_count, "Simple-9")) ||
        (job->status = vr_s9_encode(g->s, &words, job->nv->deltas, g->u_count, job->packing)))
        return NULL;
    g->s_count = (uint32_t)words;
    return NULL;
}

/* The permuted vertex data and the map's indices in new ids (run_pair's second half). */
typedef struct vr_out_job {
    const vr_mesh *mesh;
    vr_gts *g;
    vr_gts_map *map; /* or NULL */
    vr_strips *st;
    const vr_numbering *nv;
    int keep_vertex_data;
} vr_out_job;

static vr_status out_job_alloc(vr_out_job *job)
{
    if (!job->keep_vertex_data)
        return VR_OK;
    const vr_mesh *m = job->mesh;
    const size_t vc = job->g->vertex_count;
    float **dst[3] = {&job->g->positions, &job->g->normals, &job->g->texcoords};
    const float *src[3] = {m->positions, m->normals, m->texcoords};
    for (int a = 0; a < 3; ++a)
        if (src[a] && !(*dst[a] = malloc(vc * (a == 2 ? 2 : 3) * sizeof(float))))
            return VR_ERROR(VR_ERR_OOM, "gts encode: out of memory for %zu vertices of "
                            "attributes", vc);
    return VR_OK;
}

static void *out_job_run(void *arg)
{
    vr_out_job *job = arg;
    const uint32_t vc = job->g->vertex_count, *old_of_new = job->nv->old_of_new;
    if (job->keep_vertex_data) {
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
    }
    if (job->map) {
        const uint32_t *new_of_old = job->nv->new_of_old;
        uint32_t *tri = job->st->tri;
        for (size_t i = 0; i < 3 * (size_t)job->st->count; ++i)
            tri[i] = new_of_old[tri[i]];
    }
    return NULL;
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

vr_status vr_gts_encode(vr_gts *out, vr_gts_map *map, const vr_mesh *mesh,
                        const vr_gts_options *opt)
{
    assert(out && mesh && opt);
    memset(out, 0, sizeof *out);
    if (map)
        memset(map, 0, sizeof *map);
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
    vr_strips st;
    memset(&st, 0, sizeof st);
    vr_numbering nv;
    memset(&nv, 0, sizeof nv);
    if ((s = build_adjacency(&e)))
        goto fail;
    e.stack = malloc((size_t)e.n * sizeof *e.stack);
    e.belt_list = malloc((size_t)e.n * sizeof *e.belt_list);
    e.next_list = malloc((size_t)e.n * sizeof *e.next_list);
    e.e_tri = malloc((size_t)e.n * sizeof *e.e_tri);
    e.e_rot = malloc(e.n);
    e.e_code = malloc(e.n);
    e.bridges = malloc(PATTERN_COUNT * sizeof *e.bridges);
    e.undo_tri = malloc((LOOKAHEAD + 1) * sizeof *e.undo_tri);
    e.undo_vid = malloc(3 * (LOOKAHEAD + 1) * sizeof *e.undo_vid);
    if (!e.undo_tri || !e.undo_vid || !e.stack || !e.belt_list || !e.next_list || !e.e_tri || !e.e_rot || !e.e_code || !e.bridges) {
        s = VR_ERROR(VR_ERR_OOM, "gts encode: out of memory for %u triangles", e.n);
        goto fail;
    }
    for (uint32_t i = 0; i < PATTERN_COUNT; ++i)
        e.bridges[i].depth = -1;

    order_triangles(&e);
    assert(e.e_count == e.n);
    if ((s = build_strips(&st, &e)))
        goto fail;
    out->restart = opt->restart;
    out->triangle_count = e.n;
    out->strip_triangle_count = st.count;
    out->restart_count = st.restarts;
    out->vertex_count = e.vc;
    if ((s = number_vertices(out, &nv, &st)) || (s = list_degenerate_sources(out, &st)))
        goto fail;
    /* vertex data and map on a second thread while C and the Simple-9 words are packed here;
     * everything it writes is allocated first, so it cannot fail */
    vr_out_job job = {mesh, out, map, &st, &nv, opt->keep_vertex_data};
    if ((s = out_job_alloc(&job)))
        goto fail;
    vr_pack_job pack = {out, &st, &nv, opt->packing, VR_OK};
    run_pair(pack_codes, &pack, out_job_run, &job, e.n >= THREAD_MIN_TRIANGLES);
    if ((s = pack.status))
        goto fail;
    if (map) {
        map->strip_triangle_count = st.count;
        map->vertex_count = e.vc;
        map->old_of_new = nv.old_of_new;
        map->new_of_old = nv.new_of_old;
        map->indices = st.tri;
        map->triangle_source = st.source;
        nv.old_of_new = nv.new_of_old = NULL;
        st.tri = NULL;
        st.source = NULL;
    }
    vr_progress("gts encode", e.n, e.n);
    numbering_free(&nv);
    strips_free(&st);
    enc_free(&e);
    return VR_OK;
fail:
    numbering_free(&nv);
    strips_free(&st);
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
