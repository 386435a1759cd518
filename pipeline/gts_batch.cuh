/* gts_batch.cuh - the device half of per-batch GTS decoding (gts_batch.h): one block decodes the
 * strip triangles of its batch from the batch's seed into shared memory, never touching an
 * explicit index buffer. Two steps, both called by every thread of the block:
 *   vr_gts_batch_decode_v      the batch's V entries: INC bits (block scan), its stretch of U
 *                              (Simple-9 words unpacked by one thread each, then a block scan
 *                              of the zigzag deltas), V = incremental id or U value;
 *   vr_gts_batch_triangles     one chunk of blockDim.x triangles: M (block sum scan, R mode)
 *                              and Q (block max scan) run on from the seed's carries, then
 *                              Eq. 6 and the seed resolve the three vertex ids.
 * The CPU twin is vr_gts_decode_batch_ref (gts_batch.c): same checks, same error bits, including
 * the chain check that the state where a batch ends is the next batch's seed. Every read is
 * bounds-checked, every id is < vertex_count: a malformed stream or seed flags src.err and
 * never reads or writes out of bounds.
 */
#ifndef VR_GTS_BATCH_CUH
#define VR_GTS_BATCH_CUH

#include "block_scan.cuh"
#include "gts_batch.h"

/* Block-shared state of one batch decode (a static __shared__ of the kernel). */
typedef struct vr_gts_batch_state {
    vr_gts_seed seed, next; /* this batch's seed and the next one's (valid when has_next) */
    uint32_t has_next;
    uint32_t nv;            /* V entries of the batch (<= the scratch capacity) */
    uint32_t end_word, end_skip; /* where the next batch's U codes start in S */
    uint32_t err;           /* VR_GTS_ERR_* bits of the batch */
} vr_gts_batch_state;

/* M and Q of the triangle before the next chunk (block-uniform, in registers). */
typedef struct vr_gts_batch_cursor {
    uint32_t m, q;
} vr_gts_batch_cursor;

/* Strip code of global triangle i with the CPU twin's checks (code_checked in gts_batch.c). */
static __device__ __forceinline__ uint32_t vr_gts_dev_code(const vr_gts_batch_source &src,
                                                           uint32_t i, uint32_t *err)
{
    if (i >= src.strip_triangle_count || (i >> (src.codes ? 4 : 5)) >= src.c_words) {
        *err |= VR_GTS_ERR_CODE;
        return VR_GTS_CODE_N;
    }
    const uint32_t raw = vr_gts_code_at(src.c, i, src.codes);
    if (raw == 3u || (i == 0 && src.codes && (__ldg(src.c) & 3u) != VR_GTS_CODE_R))
        *err |= VR_GTS_ERR_CODE;
    return vr_gts_code_sane(raw);
}

static __device__ __forceinline__ uint32_t vr_gts_dev_inc(const vr_gts_batch_source &src,
                                                          uint32_t j, uint32_t *err)
{
    if ((j >> 5) >= src.inc_words) {
        *err |= VR_GTS_ERR_INC;
        return 0;
    }
    return (__ldg(src.inc + (j >> 5)) >> (j & 31u)) & 1u;
}

/* Decodes the V entries of batch `b` (strip triangles t0 .. t0 + n - 1) into s_v (v_cap words);
 * s_u (v_cap words) is scratch for its re-used vertices. s_warp: 32 words. Ends with a
 * __syncthreads; afterwards st->seed, st->next and st->nv are valid for the triangle chunks. */
static __device__ void vr_gts_batch_decode_v(const vr_gts_batch_source &src, uint32_t b,
                                             uint32_t batch_count, uint32_t t0, uint32_t n,
                                             vr_gts_batch_state *st, uint32_t *s_v, uint32_t *s_u,
                                             uint32_t v_cap, uint32_t *s_warp)
{
    const uint32_t tid = threadIdx.x, B = blockDim.x;
    if (tid == 0) {
        st->seed = src.seeds[b];
        st->has_next = b + 1 < batch_count;
        if (st->has_next)
            st->next = src.seeds[b + 1];
        st->err = 0;
        st->end_word = st->seed.s_word;
        st->end_skip = VR_GTS_SEED_S_SKIP(&st->seed);
    }
    __syncthreads();
    uint32_t err = 0;
    const uint32_t first_pos = st->seed.first_pos, inc_before = st->seed.inc_before;

    /* V entries: 3 per R triangle, 1 per N/P */
    uint32_t steps = 0, nv;
    for (uint32_t i = tid; i < n; i += B)
        steps += vr_gts_batch_step(vr_gts_dev_code(src, t0 + i, &err), t0 + i, src.codes);
    vr_block_scan(steps, VR_SCAN_SUM, s_warp, &nv);
    if (first_pos > src.v_count || nv > src.v_count - first_pos) {
        err |= VR_GTS_ERR_M;
        nv = first_pos < src.v_count ? src.v_count - first_pos : 0;
    }
    if (nv > v_cap) {
        err |= VR_GTS_ERR_M;
        nv = v_cap;
    }
    __syncthreads(); /* s_warp is reused */

    /* INC: s_v[j] = INC ones of the batch before entry j */
    uint32_t ones = 0;
    for (uint32_t base = 0; base < nv; base += B) {
        const uint32_t j = base + tid;
        const uint32_t one = j < nv ? vr_gts_dev_inc(src, first_pos + j, &err) : 0u;
        uint32_t total;
        const uint32_t before = vr_block_scan(one, VR_SCAN_SUM, s_warp, &total) + ones;
        if (j < nv)
            s_v[j] = before;
        ones += total;
        __syncthreads();
    }
    const uint32_t nu = nv - ones, u_first = first_pos - inc_before;
    if (inc_before > first_pos || u_first > src.u_count || nu > src.u_count - u_first)
        err |= VR_GTS_ERR_U;

    /* S: words from the seed's, one per thread; code c of the stretch lands in s_u[c] */
    const uint32_t skip = VR_GTS_SEED_S_SKIP(&st->seed), s_word = st->seed.s_word;
    const uint32_t need = skip + nu; /* codes to pass, counted from s_word's first code */
    uint32_t seen = 0;
    for (uint32_t wbase = 0; seen < need; wbase += B) {
        const uint32_t l = wbase + tid;
        const int valid = s_word < src.s_count && l < src.s_count - s_word;
        const uint32_t w = s_word + l;
        const uint32_t word = valid ? __ldg(src.s + w) : 0u;
        const uint32_t count = valid ? vr_gts_s9_count(word >> 28) : 0u;
        uint32_t total;
        const uint32_t pos = vr_block_scan(count, VR_SCAN_SUM, s_warp, &total) + seen;
        if (valid && pos < need) {
            if (!count)
                err |= VR_GTS_ERR_SELECTOR;
            const uint32_t bits = vr_gts_s9_bits(word >> 28), mask = (1u << bits) - 1u;
            for (uint32_t k = 0; k < count; ++k) {
                const uint32_t c = pos + k;
                if (c >= skip && c < need)
                    s_u[c - skip] = (word >> (k * bits)) & mask;
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
        const uint32_t d = k < nu ? vr_gts_unzigzag(s_u[k]) : 0u;
        uint32_t total;
        const uint32_t before = vr_block_scan(d, VR_SCAN_SUM, s_warp, &total);
        if (k < nu)
            s_u[k] = u_run + before + d;
        u_run += total;
        __syncthreads();
    }

    /* V: an incremental entry is the next id; a re-used one must exist already */
    for (uint32_t j = tid; j < nv; j += B) {
        const uint32_t before = s_v[j], id = inc_before + before;
        if (vr_gts_dev_inc(src, first_pos + j, &err)) {
            s_v[j] = id;
        } else {
            const uint32_t val = s_u[j - before]; /* j - before < nu */
            if (val >= id)
                err |= VR_GTS_ERR_U;
            s_v[j] = val;
        }
    }
    if (tid == 0) {
        st->nv = nv;
        /* where the batch ends must be where the next one (or the stream) starts */
        if (st->has_next) {
            if (inc_before + ones != st->next.inc_before)
                err |= VR_GTS_ERR_INC;
            if (u_run != st->next.u_prev || st->end_word != st->next.s_word ||
                st->end_skip != VR_GTS_SEED_S_SKIP(&st->next))
                err |= VR_GTS_ERR_S9COUNT;
        } else {
            if (inc_before + ones != src.referenced_count)
                err |= VR_GTS_ERR_INC;
            if (st->end_word != src.s_count || st->end_skip != 0)
                err |= VR_GTS_ERR_S9COUNT;
        }
    }
    if (err)
        atomicOr(&st->err, err);
    __syncthreads();
}

static __device__ __forceinline__ vr_gts_batch_cursor
vr_gts_batch_cursor_start(const vr_gts_batch_state *st)
{
    vr_gts_batch_cursor c;
    c.m = st->seed.first_pos - 1u;
    c.q = st->seed.q;
    return c;
}

/* Triangle base + threadIdx.x of the batch (chunk `base`, a multiple of blockDim.x): returns 1
 * and its three vertex ids (< vertex_count) when it exists. Every thread calls it with the same
 * base, chunks in order; s_scan holds 2 x 32 words (the M and Q scans use separate halves so
 * no barrier is needed between chunks). */
static __device__ int vr_gts_batch_triangles(const vr_gts_batch_source &src,
                                             vr_gts_batch_state *st, const uint32_t *s_v,
                                             uint32_t t0, uint32_t n, uint32_t base,
                                             uint32_t vertex_count, vr_gts_batch_cursor *cur,
                                             uint32_t *s_scan, uint32_t ids[3])
{
    const uint32_t i = base + threadIdx.x, g = t0 + i;
    const int valid = i < n;
    uint32_t err = 0;
    const uint32_t code = valid ? vr_gts_dev_code(src, g, &err) : VR_GTS_CODE_N;
    uint32_t m, total;
    if (src.codes) {
        const uint32_t step = valid ? vr_gts_m_step(code) : 0u;
        m = cur->m + vr_block_scan(step, VR_SCAN_SUM, s_scan, &total) + step;
        cur->m += total;
    } else { /* deg. mode: one V entry per triangle, three for triangle 0 */
        m = cur->m + threadIdx.x + 1u + (t0 == 0 && base == 0 ? 2u : 0u);
        const uint32_t chunk = min(n - base, (uint32_t)blockDim.x);
        cur->m += chunk + (t0 == 0 && base == 0 ? 2u : 0u);
    }
    uint32_t qv = 0;
    if (valid && g > 0) {
        const uint32_t prev = i == 0 ? VR_GTS_SEED_PREV_CODE(&st->seed)
                                     : vr_gts_code_sane(vr_gts_code_at(src.c, g - 1, src.codes));
        qv = vr_gts_q_value(prev, code, m);
    }
    /* Q: deg. mode alternates halves by chunk parity (one scan per chunk), R mode uses the
     * second half (the first one holds M) */
    uint32_t *s_q = s_scan + (src.codes || ((base / blockDim.x) & 1u) ? VR_WARP_SIZE : 0u);
    const uint32_t q = max(cur->q, max(vr_block_scan(qv, VR_SCAN_MAX, s_q, &total), qv));
    cur->q = max(cur->q, total);
    if (valid) {
        uint32_t p[3];
        vr_gts_tri_positions(p, code, m, q);
        for (int k = 0; k < 3; ++k) {
            ids[k] = vr_gts_seed_vertex(&st->seed, s_v, st->nv, p[k], &err);
            if (ids[k] >= vertex_count)
                err |= VR_GTS_ERR_U, ids[k] = 0;
        }
        if (i == n - 1) { /* the chain check of the triangle part (gts_batch.c step 6) */
            if (st->has_next) {
                uint32_t tail_err = 0;
                const vr_gts_seed *nx = &st->next;
                for (int k = 0; k < 3; ++k)
                    if (vr_gts_seed_vertex(&st->seed, s_v, st->nv, m - 2u + (uint32_t)k,
                                           &tail_err) != nx->tail[k])
                        err |= VR_GTS_ERR_M;
                if (code != VR_GTS_CODE_R &&
                    vr_gts_seed_vertex(&st->seed, s_v, st->nv, q, &tail_err) != nx->carried)
                    err |= VR_GTS_ERR_M;
                if (m + 1 != nx->first_pos || q != nx->q || code != VR_GTS_SEED_PREV_CODE(nx) ||
                    tail_err)
                    err |= VR_GTS_ERR_M;
            } else if (g + 1 != src.strip_triangle_count || m != src.v_count - 1) {
                err |= VR_GTS_ERR_M;
            }
        }
    }
    if (err)
        atomicOr(&st->err, err);
    return valid;
}

#endif
