/* gts_batch.c - host side of per-batch GTS decoding (gts_batch.h): the seeds, computed by one
 * sequential decode at load time, and the CPU twin of the device batch decoder
 * (gts_batch.cuh), which decodes one batch from its seed the way a block does: codes and V
 * steps, the batch's V entries from INC and its stretch of U, then M and Q from the seed's
 * carries and the triangles. Try: `vreuse_tests gts/batch`.
 */
#include "pipeline/gts/gts_batch.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

void vr_gts_batch_source_host(vr_gts_batch_source *src, const vr_gts *g)
{
    assert(src && g);
    memset(src, 0, sizeof *src);
    src->c = g->c;
    src->inc = g->inc;
    src->s = g->s;
    src->c_words = vr_gts_c_words(g);
    src->inc_words = vr_gts_inc_words(g);
    src->s_count = g->s_count;
    src->strip_triangle_count = g->strip_triangle_count;
    src->v_count = g->v_count;
    src->u_count = g->u_count;
    src->referenced_count = g->referenced_count;
    src->codes = g->restart == VR_GTS_RESTART_CODE;
}

vr_status vr_gts_batch_seeds(vr_gts_seed *seeds, const vr_gts *g, const uint32_t *tri_starts,
                             uint32_t batch_count)
{
    assert(seeds && g && (tri_starts || batch_count == 0));
    vr_status s = vr_gts_validate(g, "gts batch seeds");
    if (s)
        return s;
    const uint32_t n = g->strip_triangle_count;
    for (uint32_t b = 0; b < batch_count; ++b)
        if (tri_starts[b] >= n || (b == 0 ? tri_starts[b] != 0 : tri_starts[b] <= tri_starts[b - 1]))
            return VR_ERROR(VR_ERR_ARG, "gts batch seeds: batch %u starts at triangle %u (must "
                            "ascend from 0 and stay below %u)", b, tri_starts[b], n);
    uint32_t *u = malloc(((size_t)g->u_count + 1) * sizeof *u);
    uint32_t *v = malloc(((size_t)g->v_count + 1) * sizeof *v);
    uint32_t *incscan = malloc(((size_t)g->v_count + 1) * sizeof *incscan);
    if (!u || !v || !incscan) {
        s = VR_ERROR(VR_ERR_OOM, "gts batch seeds: out of memory for |V| = %u", g->v_count);
        goto done;
    }
    /* U and V as the sequential decoder builds them */
    if ((s = vr_gts_decode_uv(u, v, incscan, g, "gts batch seeds")))
        goto done;
    /* walk the strips; before triangle t0 of a batch, record the state */
    const uint32_t codes = g->restart == VR_GTS_RESTART_CODE;
    uint32_t m = UINT32_MAX, q = 0, prev = VR_GTS_CODE_R, b = 0;
    uint32_t word = 0, word_first = 0; /* Simple-9 word and its first U code */
    for (uint32_t i = 0; i < n && b < batch_count; ++i) {
        const uint32_t code = vr_gts_code_read(g->c, i, codes);
        if (i == tri_starts[b]) {
            vr_gts_seed *sd = &seeds[b++];
            memset(sd, 0, sizeof *sd);
            sd->first_pos = m + 1; /* 0 before triangle 0 */
            sd->q = q;
            sd->carried = i ? v[q] : 0;
            for (uint32_t t = 0; t < 3; ++t)
                sd->tail[t] = sd->first_pos >= 3 - t ? v[sd->first_pos - (3 - t)] : 0;
            sd->inc_before = incscan[sd->first_pos];
            const uint32_t u_first = sd->first_pos - sd->inc_before;
            sd->u_prev = u_first ? u[u_first - 1] : 0;
            while (word < g->s_count && word_first + vr_gts_s9_count(g->s[word] >> 28) <= u_first)
                word_first += vr_gts_s9_count(g->s[word++] >> 28);
            sd->s_word = word;
            sd->packed = prev | (word < g->s_count ? u_first - word_first : 0u) << 8;
        }
        vr_gts_walk_step(&m, &q, &prev, code, i, codes);
    }
done:
    free(u);
    free(v);
    free(incscan);
    return s;
}

vr_status vr_gts_batch_seeds_from_index_starts(vr_gts_seed *seeds, const vr_gts *g,
                                               const uint32_t *index_starts,
                                               uint32_t batch_count)
{
    assert(seeds && g && index_starts);
    uint32_t *tri = malloc(((size_t)batch_count + 1) * sizeof *tri);
    if (!tri)
        return VR_ERROR(VR_ERR_OOM, "gts batch seeds: out of memory for %u batches", batch_count);
    for (uint32_t b = 0; b < batch_count; ++b) {
        if (index_starts[b] % 3) {
            free(tri);
            return VR_ERROR(VR_ERR_ARG, "gts batch seeds: batch %u starts at index %u, not a "
                            "multiple of 3", b, index_starts[b]);
        }
        tri[b] = index_starts[b] / 3;
    }
    vr_status s = vr_gts_batch_seeds(seeds, g, tri, batch_count);
    free(tri);
    return s;
}

/* Bit j of a bit array of `words` words; out of range reads 0 and flags. */
static uint32_t bit_at(const uint32_t *a, uint32_t words, uint32_t j, uint32_t *err, uint32_t flag)
{
    if ((j >> 5) >= words) {
        *err |= flag;
        return 0;
    }
    return vr_gts_bit(a, j);
}


uint32_t vr_gts_decode_batch_ref(uint32_t *indices, const vr_gts_batch_source *src,
                                 const vr_gts_seed *sd, const vr_gts_seed *next, uint32_t t0,
                                 uint32_t tri_count)
{
    assert(indices && src && sd);
    uint32_t err = 0;
    if (t0 == 0)
        err |= vr_gts_batch_start_err(sd);
    /* 1. V entries of the batch */
    uint32_t nv = 0;
    for (uint32_t i = 0; i < tri_count; ++i)
        nv += vr_gts_batch_step(vr_gts_batch_code(src, t0 + i, &err), t0 + i, src->codes);
    if (sd->first_pos > src->v_count || nv > src->v_count - sd->first_pos) {
        err |= VR_GTS_ERR_M;
        nv = sd->first_pos < src->v_count ? src->v_count - sd->first_pos : 0;
    }
    uint32_t *v = malloc(((size_t)nv + 1) * sizeof *v);
    uint32_t *u = malloc(((size_t)nv + 1) * sizeof *u);
    if (!v || !u) {
        free(v);
        free(u);
        return err | VR_GTS_ERR_M; /* cannot happen for batch-sized inputs */
    }
    /* 2. INC bits: incremental entries get the next ids; the others take U codes in order */
    uint32_t ones = 0;
    for (uint32_t j = 0; j < nv; ++j) {
        const uint32_t one = bit_at(src->inc, src->inc_words, sd->first_pos + j, &err,
                                    VR_GTS_ERR_INC);
        v[j] = one ? sd->inc_before + ones : UINT32_MAX;
        ones += one;
    }
    const uint32_t nu = nv - ones, u_first = sd->first_pos - sd->inc_before;
    if (sd->inc_before > sd->first_pos || u_first > src->u_count || nu > src->u_count - u_first)
        err |= VR_GTS_ERR_U;
    /* 3. the batch's stretch of U: Simple-9 codes from s_word, skipping the seed's s_skip */
    for (uint32_t k = 0; k < nu; ++k)
        u[k] = 0;
    /* (end_word, end_skip): where the next batch's U codes start */
    uint32_t end_word = sd->s_word, end_skip = VR_GTS_SEED_S_SKIP(sd);
    int64_t pos = -(int64_t)end_skip;
    for (uint32_t w = sd->s_word; pos < (int64_t)nu; ++w) {
        if (w >= src->s_count) {
            err |= VR_GTS_ERR_S9COUNT;
            break;
        }
        const uint32_t word = src->s[w], sel = word >> 28;
        const uint32_t bits = vr_gts_s9_bits(sel), cnt = vr_gts_s9_count(sel);
        if (!cnt) {
            err |= VR_GTS_ERR_SELECTOR;
            break;
        }
        for (uint32_t k = 0; k < cnt; ++k)
            if (pos + k >= 0 && pos + k < (int64_t)nu)
                u[pos + k] = vr_gts_s9_code(word, k, bits);
        if (pos + cnt > (int64_t)nu) { /* the batch ends inside word w */
            end_word = w, end_skip = (uint32_t)((int64_t)nu - pos);
        } else {
            end_word = w + 1, end_skip = 0;
        }
        pos += cnt;
    }
    const uint32_t u_last = vr_gts_u_sum(u, u, nu, sd->u_prev);
    /* 4. V: a re-used vertex must exist already */
    uint32_t seen = 0, next_id = sd->inc_before;
    for (uint32_t j = 0; j < nv; ++j) {
        if (v[j] != UINT32_MAX) {
            next_id = v[j] + 1;
            continue;
        }
        v[j] = u[seen++];
        if (v[j] >= next_id)
            err |= VR_GTS_ERR_U;
    }
    /* 5. triangles: M and Q run on from the seed (the device scans them) */
    uint32_t m = sd->first_pos - 1, q = sd->q, prev = VR_GTS_SEED_PREV_CODE(sd);
    for (uint32_t i = 0; i < tri_count; ++i) {
        const uint32_t g = t0 + i, code = vr_gts_batch_code(src, g, &err);
        vr_gts_walk_step(&m, &q, &prev, code, g, src->codes);
        vr_gts_batch_tri(indices + 3 * (size_t)i, sd, v, nv, code, m, q, &err);
    }
    /* 6. the state where the batch ends must be the next batch's seed (or the stream's end):
     * a damaged stream or seed shows up in the batch where it happened */
    err |= vr_gts_batch_end_strips(src, sd, next, v, nv, t0 + tri_count - 1, m, q, prev);
    err |= vr_gts_batch_end_v(src, next, sd->inc_before + ones, u_last, end_word, end_skip);
    free(v);
    free(u);
    return err;
}
