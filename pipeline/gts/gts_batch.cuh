/* gts_batch.cuh - the device half of per-batch GTS decoding (gts_batch.h): one block decodes the
 * strip triangles of its batch from the batch's seed into shared memory, never touching an
 * explicit index buffer. Three steps:
 *   vr_gts_batch_decode_v      (every thread) the batch's V entries: INC ones per word
 *                              (popcounts, block scan), its stretch of U (Simple-9 words
 *                              unpacked by one thread each, then a block scan of the zigzag
 *                              deltas), V = incremental id or U value;
 *   vr_gts_batch_walk_start    (every thread) each thread takes ceil(n / blockDim) consecutive
 *                              triangles; M (block sum scan, R mode) and Q (block max scan)
 *                              before them, from the seed's carries;
 *   vr_gts_batch_walk_next     (per thread, no barriers) the next triangle: Eq. 6, and the
 *                              seed or the shared V entries give the three vertex ids.
 * Four or five block scans per batch in all, whatever its length.
 * The CPU twin is vr_gts_decode_batch_ref (gts_batch.c): same checks, same error bits, including
 * the chain check that the state where a batch ends is the next batch's seed. Every read is
 * bounds-checked, every id is in the run's vertex range: a malformed stream or seed flags src.err
 * and never reads or writes out of bounds. A run may be a chunk of the stream (src.tri_base,
 * src.seed_after: gts_batch.h).
 */
#ifndef VR_GTS_BATCH_CUH
#define VR_GTS_BATCH_CUH

#include "pipeline/block_scan.cuh"
#include "pipeline/gts/gts_batch.h"

/* Block-shared state of one batch decode (a static __shared__ of the kernel). */
typedef struct vr_gts_batch_state {
    vr_gts_seed seed, next; /* this batch's seed and the next one's (valid when has_next) */
    uint32_t has_next;
    uint32_t nv;            /* V entries of the batch (<= the scratch capacity) */
    uint32_t end_word, end_skip; /* where the next batch's U codes start in S */
    uint32_t err;           /* VR_GTS_ERR_* bits of the batch */
} vr_gts_batch_state;

/* Where the batch's scratch lives: s_v V entries, s_u re-used vertices (v_cap words each), and
 * per INC word of the batch its masked bits and the INC ones before it (v_cap / 32 + 2 each). */
typedef struct vr_gts_batch_scratch {
    uint32_t *v, *u, *inc_bits, *inc_before;
    uint32_t v_cap;
} vr_gts_batch_scratch;

static __device__ __forceinline__ vr_gts_batch_scratch vr_gts_batch_scratch_at(uint32_t *base,
                                                                               uint32_t v_cap)
{
    vr_gts_batch_scratch s;
    s.v = base;
    s.u = s.v + v_cap;
    s.inc_bits = s.u + v_cap;
    s.inc_before = s.inc_bits + v_cap / 32 + 2;
    s.v_cap = v_cap;
    return s;
}

/* One thread's walk over its consecutive triangles [i, end) of the batch: M and Q of the
 * triangle before i and the code of the triangle before i. */
typedef struct vr_gts_tri_walk {
    uint32_t i, end, m, q, prev;
} vr_gts_tri_walk;

/* Decodes the V entries of the run's batch `b` (strip triangles t0 .. t0 + n - 1) into sc.v.
 * Five steps, each one block scan at most: the entry count comes from the seeds (the chain check
 * in vr_gts_batch_walk_next verifies it), INC ones per word (popcount), Simple-9 words from the
 * seed's (one per thread), the U prefix sum, and V itself (no scan). s_warp: 32 words. Ends
 * with a __syncthreads; st->seed, st->next and st->nv are then valid. */
static __device__ void vr_gts_batch_decode_v(const vr_gts_batch_source &src, uint32_t b,
                                             uint32_t batch_count, vr_gts_batch_state *st,
                                             const vr_gts_batch_scratch &sc, uint32_t *s_warp)
{
    const uint32_t tid = threadIdx.x, B = blockDim.x;
    if (tid == 0) {
        st->seed = src.seeds[b];
        st->has_next = b + 1 < batch_count + src.seed_after; /* a chunk's last: the next's */
        if (st->has_next)
            st->next = src.seeds[b + 1];
        st->err = 0;
        st->end_word = st->seed.s_word;
        st->end_skip = VR_GTS_SEED_S_SKIP(&st->seed);
    }
    __syncthreads();
    uint32_t err = 0;
    const uint32_t first_pos = st->seed.first_pos, inc_before = st->seed.inc_before;
    if (b == 0 && src.tri_base == 0 && tid == 0) /* the stream's first batch */
        err |= vr_gts_batch_start_err(&st->seed);

    /* V entries: up to the next batch's first one (or the end of V) */
    const uint32_t end_pos = st->has_next ? st->next.first_pos : src.v_count;
    uint32_t nv = end_pos - first_pos;
    if (first_pos > end_pos || end_pos > src.v_count) {
        err |= VR_GTS_ERR_M;
        nv = 0;
    }
    if (nv > sc.v_cap) {
        err |= VR_GTS_ERR_M;
        nv = sc.v_cap;
    }

    /* INC: one thread per word of the batch's bits; masked popcounts, one block scan */
    const uint32_t w_lo = first_pos >> 5;
    const uint32_t words = nv ? ((first_pos + nv - 1) >> 5) - w_lo + 1 : 0;
    uint32_t ones = 0;
    for (uint32_t base = 0; base < words; base += B) {
        const uint32_t l = base + tid;
        uint32_t bits = 0;
        if (l < words) {
            const uint32_t w = w_lo + l;
            if (w < src.inc_words)
                bits = __ldg(src.inc + w);
            else
                err |= VR_GTS_ERR_INC;
            if (l == 0)
                bits &= ~0u << (first_pos & 31u);
            if (l == words - 1 && ((first_pos + nv) & 31u))
                bits &= ~(~0u << ((first_pos + nv) & 31u));
        }
        uint32_t total;
        const uint32_t before = vr_block_scan(vr_popc(bits), VR_SCAN_SUM, s_warp, &total) + ones;
        if (l < words) {
            sc.inc_bits[l] = bits;
            sc.inc_before[l] = before;
        }
        ones += total;
        __syncthreads();
    }
    const uint32_t nu = nv - ones, u_first = first_pos - inc_before;
    if (inc_before > first_pos || u_first > src.u_count || nu > src.u_count - u_first)
        err |= VR_GTS_ERR_U;

    /* S: words from the seed's, one per thread; code c of the stretch lands in sc.u[c]. A word
     * holds at least one code, so no more than `need` words are read. */
    const uint32_t skip = VR_GTS_SEED_S_SKIP(&st->seed), s_word = st->seed.s_word;
    const uint32_t need = skip + nu; /* codes to pass, counted from s_word's first code */
    uint32_t seen = 0;
    for (uint32_t wbase = 0; seen < need; wbase += B) {
        const uint32_t l = wbase + tid;
        const int valid = l < need && s_word < src.s_count && l < src.s_count - s_word;
        const uint32_t w = s_word + l;
        const uint32_t word = valid ? __ldg(src.s + w) : 0u;
        const uint32_t count = valid ? vr_gts_s9_count(word >> 28) : 0u;
        uint32_t total;
        const uint32_t pos = vr_block_scan(count, VR_SCAN_SUM, s_warp, &total) + seen;
        if (valid && pos < need) {
            if (!count)
                err |= VR_GTS_ERR_SELECTOR;
            const uint32_t bits = vr_gts_s9_bits(word >> 28);
            for (uint32_t k = 0; k < count; ++k) {
                const uint32_t c = pos + k;
                if (c >= skip && c < need)
                    sc.u[c - skip] = vr_gts_s9_code(word, k, bits);
            }
            if (pos + count > need) { /* the batch's U ends inside this word */
                st->end_word = w;
                st->end_skip = need - pos;
            } else if (pos + count == need) {
                st->end_word = w + 1;
                st->end_skip = 0;
            }
        }
        seen += total;
        __syncthreads();
        if (total == 0) /* no words left (or only bad selectors): block-uniform */
            break;
    }
    if (seen < need)
        err |= VR_GTS_ERR_S9COUNT;

    /* U: the seed's last value plus the inclusive sum of the deltas */
    uint32_t u_run = st->seed.u_prev;
    for (uint32_t base = 0; base < nu; base += B) {
        const uint32_t k = base + tid;
        const uint32_t d = k < nu ? vr_gts_unzigzag(sc.u[k]) : 0u;
        uint32_t total;
        const uint32_t before = vr_block_scan(d, VR_SCAN_SUM, s_warp, &total);
        if (k < nu)
            sc.u[k] = u_run + before + d;
        u_run += total;
        __syncthreads();
    }

    /* V: an incremental entry is the next id; a re-used one must exist already */
    for (uint32_t j = tid; j < nv; j += B) {
        const uint32_t p = first_pos + j, l = (p >> 5) - w_lo, bit = p & 31u;
        const uint32_t bits = sc.inc_bits[l];
        const uint32_t before = vr_gts_ones_before(sc.inc_before[l], bits, bit);
        const uint32_t id = inc_before + before;
        if ((bits >> bit) & 1u) {
            sc.v[j] = id;
        } else {
            const uint32_t val = sc.u[j - before]; /* j - before < nu */
            if (val >= id)
                err |= VR_GTS_ERR_U;
            sc.v[j] = val;
        }
    }
    if (tid == 0) {
        st->nv = nv;
        err |= vr_gts_batch_end_v(&src, st->has_next ? &st->next : NULL, inc_before + ones, u_run,
                                  st->end_word, st->end_skip);
    }
    if (err)
        atomicOr(&st->err, err);
    __syncthreads();
}

/* Gives thread t the consecutive triangles [t k, t k + k) of the batch (k = ceil(n / blockDim))
 * and the M and Q before them: a block sum scan of its V steps (R mode; deg. mode has M in
 * closed form) and a block max scan of its Q candidates. Every thread calls it once after
 * vr_gts_batch_decode_v; s_scan holds 2 x 32 words (one half per scan: no barrier between). */
static __device__ vr_gts_tri_walk vr_gts_batch_walk_start(const vr_gts_batch_source &src,
                                                          vr_gts_batch_state *st, uint32_t t0,
                                                          uint32_t n, uint32_t *s_scan)
{
    const uint32_t k = (n + blockDim.x - 1) / blockDim.x;
    vr_gts_tri_walk w;
    w.i = min(n, threadIdx.x * k);
    w.end = min(n, w.i + k);
    uint32_t err = 0, total;
    const uint32_t m0 = st->seed.first_pos - 1u;
    if (src.codes) {
        uint32_t steps = 0;
        for (uint32_t i = w.i; i < w.end; ++i)
            steps += vr_gts_m_step(vr_gts_batch_code(&src, t0 + i, &err));
        w.m = m0 + vr_block_scan(steps, VR_SCAN_SUM, s_scan, &total);
    } else { /* one V entry per triangle, three for triangle 0 */
        w.m = m0 + w.i + (t0 == 0 && w.i > 0 ? 2u : 0u);
    }
    w.prev = w.i == 0 ? VR_GTS_SEED_PREV_CODE(&st->seed) : vr_gts_batch_code(&src, t0 + w.i - 1, &err);
    uint32_t q = 0, m = w.m, prev = w.prev;
    for (uint32_t i = w.i; i < w.end; ++i) {
        const uint32_t g = t0 + i;
        vr_gts_walk_step(&m, &q, &prev, vr_gts_batch_code(&src, g, &err), g, src.codes);
    }
    w.q = max(st->seed.q, vr_block_scan(q, VR_SCAN_MAX, s_scan + VR_WARP_SIZE, &total));
    if (err)
        atomicOr(&st->err, err);
    return w;
}

/* The walk's next triangle: its three vertex ids (in src.vertex_lo .. vertex_count - 1; others
 * are flagged and read as src.vertex_lo). Call while w->i < w->end;
 * no barriers, so the caller may insert the ids right away. The batch's last triangle also
 * runs the chain check: the state where the batch ends must be the next batch's seed. */
static __device__ __forceinline__ void vr_gts_batch_walk_next(const vr_gts_batch_source &src,
                                                              vr_gts_batch_state *st,
                                                              const vr_gts_batch_scratch &sc,
                                                              uint32_t t0, uint32_t n,
                                                              uint32_t vertex_count,
                                                              vr_gts_tri_walk *w, uint32_t ids[3])
{
    uint32_t err = 0;
    const uint32_t g = t0 + w->i, code = vr_gts_batch_code(&src, g, &err);
    vr_gts_walk_step(&w->m, &w->q, &w->prev, code, g, src.codes);
    const uint32_t nv = st->nv;
    vr_gts_batch_tri(ids, &st->seed, sc.v, nv, code, w->m, w->q, &err);
    for (int k = 0; k < 3; ++k)
        if (ids[k] >= vertex_count || ids[k] < src.vertex_lo)
            err |= VR_GTS_ERR_U, ids[k] = src.vertex_lo;
    if (w->i == n - 1)
        err |= vr_gts_batch_end_strips(&src, &st->seed, st->has_next ? &st->next : NULL, sc.v,
                                       nv, g, w->m, w->q, code);
    ++w->i;
    if (err)
        atomicOr(&st->err, err);
}

#endif
