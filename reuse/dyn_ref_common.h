/* dyn_ref_common.h - what the three dynamic-batching strategies (hash, phash, sort; Kenzel et
 * al. 2018, Sec. 3.4) share on the host side: the batch limits, the hash arithmetic (VR_HD: the
 * kernels use it, and tests use it to build colliding keys), the parameter and batch checks, and
 * the CPU twin itself. The GPU strategies differ only in how a block finds the distinct vertices
 * of its batch, never in what it finds, so one plain loop is the oracle of all three.
 * Device-only code lives in reuse/dyn_common.cuh. Try: `vreuse_tests reuse/dyn`.
 */
#ifndef VR_DYN_REF_COMMON_H
#define VR_DYN_REF_COMMON_H

#include <stdint.h>
#include <stdlib.h>

#include "pipeline/gts/gts_batch.h"
#include "reuse/cluster_cull.h"
#include "reuse/ref_common.h"

/* Batch limits: N_u in VR_NU_MIN..VR_NU_MAX and max_indices, a multiple of 3 up to
 * VR_MAX_INDICES_MAX (pipeline/limits.h); a block's shared memory is sized by those bounds. */
/* An empty hash slot. Never a vertex id: vertex_count <= 2^32 - 1, so ids are <= 2^32 - 2. */
#define VR_DYN_EMPTY 0xffffffffu

/* Hash table size = 2^VR_DYN_HASH_SCALE_LOG2 x (N_u rounded up to a power of two). The paper
 * sizes the table to the block (= N_u), so a full batch fills it completely and the last
 * insertions probe long chains - the case phash's warp-cooperative slow path exists for. We
 * default to twice that: load factor <= 1/2, about 1.5 probes per hit and 2.5 per miss for
 * linear probing, for 2 KiB more shared memory at N_u = 256. Build with
 * -DVR_DYN_HASH_SCALE_LOG2=0 to measure the paper's configuration. */
#ifndef VR_DYN_HASH_SCALE_LOG2
#define VR_DYN_HASH_SCALE_LOG2 1
#endif

/* log2 of the hash table's slot count for N_u = max_unique (3..VR_NU_MAX): >= 2. */
VR_HD uint32_t vr_dyn_table_log2(uint32_t max_unique)
{
    uint32_t log2 = 0;
    while ((1u << log2) < max_unique)
        ++log2;
    return log2 + VR_DYN_HASH_SCALE_LOG2;
}

/* Knuth's multiplicative hash: the top table_log2 bits (1..31) of key * 2654435761 (2^32 divided
 * by the golden ratio, odd). Consecutive ids - the common case after vertex-order
 * optimisation - land far apart, so linear probing chains stay short. */
VR_HD uint32_t vr_dyn_hash(uint32_t key, uint32_t table_log2)
{
    return (key * 2654435761u) >> (32u - table_log2);
}

/* Checks the parameters every dynamic strategy needs, GPU and CPU paths alike (the shared ones
 * through vr_reuse_validate). The batch contents live on the device for `run`, so they are
 * checked here only by the CPU twin (vr_dyn_check_batches) and by each block on the GPU. */
static inline vr_status vr_dyn_check(const vr_reuse_params *p, const char *who)
{
    vr_status st = vr_reuse_validate(p, who);
    if (st != VR_OK)
        return st;
    if (p->max_unique < VR_NU_MIN || p->max_unique > VR_NU_MAX)
        return VR_ERROR(VR_ERR_ARG, "%s: max_unique (N_u) %u must be in %u..%u", who,
                        p->max_unique, VR_NU_MIN, VR_NU_MAX);
    if (p->max_indices < VR_MAX_INDICES_MIN || p->max_indices > VR_MAX_INDICES_MAX ||
        p->max_indices % 3 != 0)
        return VR_ERROR(VR_ERR_ARG,
                        "%s: max_indices %u per dynamic batch must be a multiple of 3 in 3..%u "
                        "(whole triangles; the limit bounds the block's shared memory)",
                        who, p->max_indices, VR_MAX_INDICES_MAX);
    if (p->index_count > 0 && (!p->batch_starts || p->batch_count == 0))
        return VR_ERROR(VR_ERR_ARG,
                        "%s: %u indices but no dynamic batches. Hint: fill batch_starts with "
                        "vr_batches_dynamic(..., max_unique = %u, max_indices = %u)",
                        who, p->index_count, p->max_unique, p->max_indices);
    if (p->batch_count > 0x7fffffffu)
        return VR_ERROR(VR_ERR_ARG, "%s: %u batches exceed the grid limit 2^31 - 1", who,
                        p->batch_count);
    return VR_OK;
}

/* Checks host batch boundaries with the rule each GPU block applies to its own batch: batches
 * cover the index buffer in order (starts[0] = 0, starts[batch_count] = index_count), each one
 * holds whole triangles, at most p->max_indices indices. (The GPU counts the triangles of a
 * batch that breaks the rule in counters->overflow and skips it; the twin reports it.) */
static inline vr_status vr_dyn_check_batches(const vr_reuse_params *p, const char *who)
{
    const uint32_t *s = p->batch_starts;
    if (s[0] != 0 || s[p->batch_count] != p->index_count)
        return VR_ERROR(VR_ERR_FORMAT,
                        "%s: batches span indices %u..%u, the index buffer 0..%u. Hint: "
                        "batch_starts needs batch_count + 1 entries from vr_batches_dynamic",
                        who, s[0], s[p->batch_count], p->index_count);
    for (uint32_t b = 0; b < p->batch_count; ++b) {
        const uint32_t start = s[b], end = s[b + 1];
        if (end < start || start % 3 != 0 || (end - start) % 3 != 0 ||
            end - start > p->max_indices)
            return VR_ERROR(VR_ERR_FORMAT,
                            "%s: batch %u spans indices %u..%u: batches must be ordered, hold "
                            "whole triangles and at most max_indices = %u indices. Hint: make "
                            "batch_starts with the same max_indices",
                            who, b, start, end, p->max_indices);
    }
    return VR_OK;
}

/* Whether a static plan's run skips batches by their bounds (cull and cluster_cull set), and
 * the check both its paths make first: VR_ERR_ARG naming `who` when it should but has no
 * bounds. */
static inline int vr_plan_cluster_cull(const vr_reuse_params *p)
{
    return p->cull && p->cluster_cull;
}

static inline vr_status vr_plan_check_cluster(const vr_reuse_params *p, const char *who)
{
    if (vr_plan_cluster_cull(p) && p->index_count > 0 && !p->cluster_bounds)
        return VR_ERROR(VR_ERR_ARG, "%s: cluster culling needs the plan's batch bounds "
                        "(vr_reuse_params.cluster_bounds = vr_batch_plan.bounds, from "
                        "vr_batch_plan_bounds)", who);
    return VR_OK;
}

#ifndef __CUDACC__
/* Checks the tri_ids of a static plan on the host: index_count / 3 ids, a permutation of the
 * triangles (the GPU checks only the range, per triangle). */
static inline vr_status vr_dyn_check_ids(const vr_reuse_params *p, const char *who)
{
    const uint32_t tris = p->index_count / 3;
    uint8_t *seen = calloc((size_t)tris + 1, 1);
    if (!seen)
        return VR_ERROR(VR_ERR_OOM, "%s: checking %u triangle ids", who, tris);
    vr_status st = VR_OK;
    for (uint32_t t = 0; t < tris; ++t) {
        const uint32_t id = p->tri_ids[t];
        if (id >= tris || seen[id]++) {
            st = VR_ERROR(VR_ERR_FORMAT, "%s: triangle %u of the plan has source id %u (%s). "
                          "Hint: tri_ids is the plan's tri_order, a permutation of 0..%u",
                          who, t, id, id >= tris ? "out of range" : "repeated", tris - 1);
            break;
        }
    }
    free(seen);
    return st;
}

/* The CPU twin of hash, phash and sort (and, with ids, of the static plans patch and meshlet):
 * per batch, list the distinct vertices in first-occurrence order, shade each once, emit every
 * triangle from the shaded copies, triangle t into slot ids[t] (ids NULL: slot t). The GPU's
 * unique-vertex order differs (slot or sort order), but the queue, counters and shade counts
 * do not depend on it. A batch with more than max_unique distinct vertices is VR_ERR_FORMAT
 * (the GPU skips it and counts its triangles in counters->overflow). With `bounds` (a static
 * plan's, cluster culling on) a batch that vr_cluster_culled proves culled is skipped first, as
 * reuse/plan.cuh skips it: its triangles counted in culled[VR_CULL_CLUSTER], nothing shaded. */
static inline vr_status vr_dyn_ref_ids(const vr_reuse_params *p, const char *who,
                                       const uint32_t *ids, const vr_cluster_bounds *bounds)
{
    vr_status st = vr_dyn_check(p, who);
    if (st != VR_OK || p->index_count == 0)
        return st;
    st = vr_dyn_check_batches(p, who);
    if (st == VR_OK && ids)
        st = vr_dyn_check_ids(p, who);
    if (st != VR_OK)
        return st;

    /* stamp[v] == b + 1 marks v as seen in batch b, local[v] is then its place in `unique`:
     * no clearing between batches, O(index_count) in total. With compressed input each batch
     * is first decoded from its seed into `decoded` (pipeline/gts_batch.h). */
    uint32_t *stamp = calloc(p->vertex_count ? p->vertex_count : 1, sizeof *stamp);
    uint32_t *local = malloc((p->vertex_count ? p->vertex_count : 1) * sizeof *local);
    uint32_t *unique = malloc(p->max_unique * sizeof *unique);
    vr_shaded *shaded = malloc(p->max_unique * sizeof *shaded);
    uint32_t *decoded = p->gts ? malloc(p->max_indices * sizeof *decoded) : NULL;
    if (!stamp || !local || !unique || !shaded || (p->gts && !decoded)) {
        st = VR_ERROR(VR_ERR_OOM, "%s: CPU twin scratch for %u vertices", who, p->vertex_count);
        goto done;
    }
    for (uint32_t b = 0; b < p->batch_count && st == VR_OK; ++b) {
        const uint32_t start = p->batch_starts[b], end = p->batch_starts[b + 1];
        if (bounds && vr_cluster_culled(&bounds[b], p->shader.mvp, p->two_sided)) {
            p->counters->culled[VR_CULL_CLUSTER] += (end - start) / 3;
            continue;
        }
        const uint32_t *idx; /* idx[i - start]: index i of the buffer */
        if (!p->gts) {
            idx = p->indices + start;
        } else {
            /* a chunk of the stream (gts_batch.h): its batches start at tri_base, and the
             * batch after its last has the seed after them */
            const vr_gts_batch_source *g = p->gts;
            const uint32_t t0 = g->tri_base + start / 3;
            const uint32_t err = vr_gts_decode_batch_ref(
                decoded, g, &g->seeds[b],
                b + 1 < p->batch_count + g->seed_after ? &g->seeds[b + 1] : NULL, t0,
                (end - start) / 3);
            if (err) {
                st = VR_ERROR(VR_ERR_FORMAT, "%s: compressed batch %u (triangles %u..%u): %s",
                              who, b, t0, t0 + (end - start) / 3, vr_gts_error_text(err));
                break;
            }
            idx = decoded;
        }
        uint32_t count = 0;
        for (uint32_t i = start; i < end; ++i) {
            const uint32_t v = idx[i - start];
            if (v >= p->vertex_count) {
                st = VR_ERROR(VR_ERR_FORMAT, "%s: index %u at position %u >= vertex count %u",
                              who, v, i, p->vertex_count);
                break;
            }
            if (p->gts && v < p->gts->vertex_lo) { /* a chunk's window: as on the device */
                st = VR_ERROR(VR_ERR_FORMAT, "%s: compressed batch %u decodes vertex %u, below "
                              "the chunk's vertices %u..%u", who, b, v, p->gts->vertex_lo,
                              p->vertex_count - 1);
                break;
            }
            if (stamp[v] == b + 1)
                continue;
            if (count == p->max_unique) {
                st = VR_ERROR(VR_ERR_FORMAT,
                              "%s: batch %u (indices %u..%u) has more than max_unique = %u "
                              "distinct vertices. Hint: make batch_starts with the same N_u",
                              who, b, start, end, p->max_unique);
                break;
            }
            stamp[v] = b + 1;
            local[v] = count;
            unique[count++] = v;
        }
        if (st != VR_OK)
            break;
        for (uint32_t j = 0; j < count; ++j)
            shaded[j] = vr_ref_shade_vertex(p, unique[j]);
        for (uint32_t i = start; i < end; i += 3) {
            const uint32_t va = idx[i - start], vb = idx[i - start + 1], vc = idx[i - start + 2];
            vr_ref_emit_triangle_at(p, i / 3, ids ? ids[i / 3] : i / 3, &shaded[local[va]],
                                    &shaded[local[vb]], &shaded[local[vc]], va, vb, vc);
        }
    }
done:
    free(decoded);
    free(stamp);
    free(local);
    free(unique);
    free(shaded);
    return st;
}

static inline vr_status vr_dyn_ref(const vr_reuse_params *p, const char *who)
{
    return vr_dyn_ref_ids(p, who, NULL, NULL);
}

/* The twin of a static plan strategy (patch, meshlet): vr_dyn_ref_ids over the plan-ordered
 * indices with the plan's tri_ids, and its bounds when cluster culling is on. */
static inline vr_status vr_plan_ref(const vr_reuse_params *p, const char *who)
{
    const vr_status st = vr_plan_check_cluster(p, who);
    if (st != VR_OK)
        return st;
    return vr_dyn_ref_ids(p, who, p->tri_ids,
                          vr_plan_cluster_cull(p) ? p->cluster_bounds : NULL);
}
#endif

#endif
