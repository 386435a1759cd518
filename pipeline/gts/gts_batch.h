/* gts_batch.h - per-batch decoding of a GTS stream inside the geometry stage: the triangles of
 * one dynamic batch are decoded from the strip codes C, the INC bits and the Simple-9 words S
 * in shared memory by the block that batches them, so the explicit index buffer never exists
 * in device memory (issue 5, "beyond the paper").
 *
 * A batch starting at strip triangle t0 needs the decoder's state just before t0: where its V
 * entries start, the carried vertex of the strip running into it, the last vertices of the
 * triangle before it, how many incremental vertices exist already, and where its re-used
 * vertices sit in U and in S. vr_gts_seed holds exactly that (40 bytes per batch); the seeds are
 * computed once on the host with the batch starts (load-time analysis, like the batch starts).
 * CPU twin of the device decoder (pipeline/gts_batch.cuh): vr_gts_decode_batch_ref.
 * Try: `vreuse_tests gts/batch`, `vreuse bench-gts sphere:7M --strategy hash`.
 */
#ifndef VR_GTS_BATCH_H
#define VR_GTS_BATCH_H

#include <stdint.h>

#include "pipeline/gts/gts.h"
#include "pipeline/gts/gts_math.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Decoder state before strip triangle t0 (positions are indices into the stream's V). The seed
 * of triangle 0 is all zeros (decoders check that); every other seed is checked by the batch
 * before it, whose end state must equal it. */
typedef struct vr_gts_seed {
    uint32_t first_pos;  /* M[t0 - 1] + 1: the batch's first own V entry (0 for t0 = 0) */
    uint32_t q;          /* Q[t0 - 1]: position of the vertex the strip carries (0 for t0 = 0) */
    uint32_t carried;    /* V[q] */
    uint32_t tail[3];    /* V[first_pos - 3 .. first_pos - 1] (0 where the position is < 0) */
    uint32_t inc_before; /* INC ones before first_pos: the id of the next incremental vertex */
    uint32_t u_prev;     /* U[u_first - 1] with u_first = first_pos - inc_before; 0 if none */
    uint32_t s_word;     /* Simple-9 word holding U code u_first (s_count when u_first = |U|) */
    uint32_t packed;     /* bits 0-1: strip code of t0 - 1; bits 8-12: codes of s_word before
                            u_first (< 28) */
} vr_gts_seed;

#define VR_GTS_SEED_PREV_CODE(s) ((s)->packed & 3u)
#define VR_GTS_SEED_S_SKIP(s) (((s)->packed >> 8) & 31u)

/* The compressed input of one geometry-stage run: the stream's arrays and counts and one seed
 * per batch. Device pointers for the GPU batcher, host pointers for its CPU twin.
 *
 * A run may be one chunk of the stream (raster/stream.c): its batch starts are the chunk's own
 * (from 0), tri_base gives their strip triangles, and every position stays the whole stream's.
 * A chunk that reads only a slice of an array (words [lo, hi)) passes the slice's storage based
 * so that word w reads element w (`storage - lo`) and hi as the array's count: a read past the
 * slice flags an error like a read past the stream, and none lands below it, because every
 * batch reads from its own seed onward and the seeds ascend. The zero values are a whole run. */
typedef struct vr_gts_batch_source {
    const uint32_t *c, *inc, *s;
    const vr_gts_seed *seeds;   /* batch_count (+ seed_after) seeds, seeds[b] for batch b's first
                                   triangle */
    uint32_t c_words, inc_words, s_count; /* words readable (a chunk's slice: its end) */
    uint32_t strip_triangle_count, v_count, u_count, referenced_count;
    uint32_t codes;             /* 1: R mode (2-bit codes), 0: deg. mode */
    uint32_t *err;              /* GPU: one word of VR_GTS_ERR_* bits, cleared by the caller */
    uint32_t tri_base;          /* strip triangle of the run's triangle 0 (a chunk's first) */
    uint32_t seed_after;        /* 1: seeds[batch_count] is the seed of the batch after the run
                                   (a chunk the stream goes on after), the end state of its last
                                   batch; 0: the run ends the stream */
    uint32_t vertex_lo;         /* ids below it are flagged like ids >= the run's vertex_count
                                   (a chunk's vertex window starts there) */
} vr_gts_batch_source;

/* Computes the seeds of batches starting at strip triangles tri_starts[0..batch_count-1]
 * (ascending, tri_starts[0] == 0, all < strip_triangle_count) by one sequential decode of the
 * validated stream `g`. VR_ERR_ARG on bad starts, VR_ERR_FORMAT on a malformed stream,
 * VR_ERR_OOM. */
vr_status vr_gts_batch_seeds(vr_gts_seed *seeds, const vr_gts *g, const uint32_t *tri_starts,
                             uint32_t batch_count);

/* The same for dynamic batch starts given as index offsets (multiples of 3, batch_count + 1
 * entries as vr_batches_dynamic returns them). */
vr_status vr_gts_batch_seeds_from_index_starts(vr_gts_seed *seeds, const vr_gts *g,
                                               const uint32_t *index_starts,
                                               uint32_t batch_count);

/* Fills `src` with g's host arrays and counts (seeds and err left NULL). */
void vr_gts_batch_source_host(vr_gts_batch_source *src, const vr_gts *g);

/* CPU twin of the device batch decoder: decodes strip triangles t0 .. t0 + tri_count - 1 from
 * `seed` into indices (3 * tri_count) with the device's formulation (gts_math.h), reading only
 * the words of C, INC and S the batch needs and checking every read against the counts. The
 * state where the batch ends must equal `next` (the following batch's seed) or, for the last
 * batch (next NULL), the end of the stream: that chain validates the seeds and catches every
 * damage the whole-stream decoder would. Returns VR_GTS_ERR_* bits (0: all good); with bits
 * set the output is defined but wrong. */
uint32_t vr_gts_decode_batch_ref(uint32_t *indices, const vr_gts_batch_source *src,
                                 const vr_gts_seed *seed, const vr_gts_seed *next, uint32_t t0,
                                 uint32_t tri_count);

#ifdef __cplusplus
}
#endif

/* V entries a batch of at most max_indices indices can hold: 3 per triangle in R mode, one per
 * triangle (plus 2 for triangle 0) in deg. mode. */
VR_HD uint32_t vr_gts_batch_v_cap(uint32_t max_indices, uint32_t codes)
{
    return codes ? max_indices : max_indices / 3 + 2;
}

/* Shared-memory words the device batch decoder needs: V entries and as many re-used vertices
 * (v_cap each), and per INC word of the batch its bits and the ones before it. */
VR_HD uint32_t vr_gts_batch_scratch_words(uint32_t v_cap)
{
    return 2 * v_cap + 2 * (v_cap / 32 + 2);
}

/* Strip code of global triangle i, read with every check the batch decoders make: a triangle
 * beyond the stream or its code words flags VR_GTS_ERR_CODE and reads N, so does code 3, and in R
 * mode triangle 0 must be R. Shared by the CPU twin and the device. */
VR_HD uint32_t vr_gts_batch_code(const vr_gts_batch_source *src, uint32_t i, uint32_t *err)
{
    if (i >= src->strip_triangle_count || (i >> (src->codes ? 4 : 5)) >= src->c_words) {
        *err |= VR_GTS_ERR_CODE;
        return VR_GTS_CODE_N;
    }
    return vr_gts_code_checked(src->c, i, src->codes, err);
}

/* The vertex at V position `pos` while decoding a batch from `sd`: the batch's own entries come
 * from v_local (nv of them); an earlier position can only be one of the three before the batch
 * or the carried one (a strip runs on from the triangle before t0). Anything else flags
 * VR_GTS_ERR_M in *err and gives 0. Shared by the CPU twin and the device. */
VR_HD uint32_t vr_gts_seed_vertex(const vr_gts_seed *sd, const uint32_t *v_local, uint32_t nv,
                                  uint32_t pos, uint32_t *err)
{
    if (pos >= sd->first_pos) {
        const uint32_t k = pos - sd->first_pos;
        if (k < nv)
            return v_local[k];
        *err |= VR_GTS_ERR_M;
        return 0;
    }
    const uint32_t back = sd->first_pos - pos; /* 1 .. first_pos */
    if (back <= 3)
        return sd->tail[3 - back];
    if (pos == sd->q)
        return sd->carried;
    *err |= VR_GTS_ERR_M;
    return 0;
}

/* The vertex ids of a batch triangle with strip code `code` and M, Q values m, q: the positions
 * of Eq. 6 resolved by vr_gts_seed_vertex. Shared by the CPU twin and the device. */
VR_HD void vr_gts_batch_tri(uint32_t ids[3], const vr_gts_seed *sd, const uint32_t *v_local,
                            uint32_t nv, uint32_t code, uint32_t m, uint32_t q, uint32_t *err)
{
    uint32_t p[3];
    vr_gts_tri_positions(p, code, m, q);
    for (int k = 0; k < 3; ++k)
        ids[k] = vr_gts_seed_vertex(sd, v_local, nv, p[k], err);
}

/* V entries a strip triangle takes: 3 for R (and for triangle 0 in deg. mode), else 1. */
VR_HD uint32_t vr_gts_batch_step(uint32_t code, uint32_t global_tri, uint32_t codes)
{
    return codes ? vr_gts_m_step(code) : (global_tri == 0 ? 3u : 1u);
}

/* One triangle of the sequential strip walk (the seeds, both batch decoders): M runs on by the
 * triangle's V entries, Q takes the max with its Eq. 8 candidate (none for triangle 0), and prev
 * becomes its code. */
VR_HD void vr_gts_walk_step(uint32_t *m, uint32_t *q, uint32_t *prev, uint32_t code,
                            uint32_t global_tri, uint32_t codes)
{
    *m += vr_gts_batch_step(code, global_tri, codes);
    if (global_tri > 0) {
        const uint32_t qv = vr_gts_q_value(*prev, code, *m);
        *q = qv > *q ? qv : *q;
    }
    *prev = code;
}

/* ---- the chain check: every batch's end state must be the next batch's seed, or for the last
 * batch the end of the stream; with the start check it validates the seeds and catches every
 * damage the whole-stream decoder would. The CPU twin runs all three parts in
 * vr_gts_decode_batch_ref, the device runs the start and V parts in vr_gts_batch_decode_v and the
 * strip part at the batch's last triangle (vr_gts_batch_walk_next). */

/* The seed of triangle 0 is the stream's start: all zeros, else VR_GTS_ERR_M. */
VR_HD uint32_t vr_gts_batch_start_err(const vr_gts_seed *sd)
{
    return (sd->first_pos | sd->q | sd->inc_before | sd->u_prev | sd->s_word |
            VR_GTS_SEED_S_SKIP(sd))
               ? VR_GTS_ERR_M
               : 0u;
}

/* V part, where the batch's INC ones end (inc_end = its seed's inc_before + its ones), its last U
 * value and the Simple-9 position after its codes (end_word, end_skip); `next` is NULL for the
 * last batch. VR_GTS_ERR_INC and VR_GTS_ERR_S9COUNT bits. */
VR_HD uint32_t vr_gts_batch_end_v(const vr_gts_batch_source *src, const vr_gts_seed *next,
                                  uint32_t inc_end, uint32_t u_last, uint32_t end_word,
                                  uint32_t end_skip)
{
    uint32_t err = 0;
    if (next) {
        if (inc_end != next->inc_before)
            err |= VR_GTS_ERR_INC;
        if (u_last != next->u_prev || end_word != next->s_word ||
            end_skip != VR_GTS_SEED_S_SKIP(next))
            err |= VR_GTS_ERR_S9COUNT;
    } else {
        if (inc_end != src->referenced_count)
            err |= VR_GTS_ERR_INC;
        if (end_word != src->s_count || end_skip != 0)
            err |= VR_GTS_ERR_S9COUNT;
    }
    return err;
}

/* Strip part, after the batch's last triangle `last_tri` (global) with M m, Q q and code prev:
 * the next seed's tail, carried vertex (the batch's V entries v_local, nv of them, and `sd`
 * resolve positions as vr_gts_seed_vertex), M, Q and code; for the last batch (next NULL) the
 * stream's last triangle and V entry. VR_GTS_ERR_M bits. */
VR_HD uint32_t vr_gts_batch_end_strips(const vr_gts_batch_source *src, const vr_gts_seed *sd,
                                       const vr_gts_seed *next, const uint32_t *v_local,
                                       uint32_t nv, uint32_t last_tri, uint32_t m, uint32_t q,
                                       uint32_t prev)
{
    if (!next)
        return last_tri + 1 != src->strip_triangle_count || m != src->v_count - 1 ? VR_GTS_ERR_M
                                                                                  : 0u;
    uint32_t err = 0, tail_err = 0;
    for (uint32_t k = 0; k < 3; ++k)
        if (vr_gts_seed_vertex(sd, v_local, nv, m - 2u + k, &tail_err) != next->tail[k])
            err |= VR_GTS_ERR_M;
    if (prev != VR_GTS_CODE_R && vr_gts_seed_vertex(sd, v_local, nv, q, &tail_err) != next->carried)
        err |= VR_GTS_ERR_M;
    if (m + 1 != next->first_pos || q != next->q || prev != VR_GTS_SEED_PREV_CODE(next) || tail_err)
        err |= VR_GTS_ERR_M;
    return err;
}

#endif
