/* ref_common.h - the CPU twins' versions of reuse/stage.cuh: shade one vertex with counting,
 * and emit one triangle into the queue with the same slot rule (slot = triangle id without
 * culling; next free slot in emission order with culling, which is input order: the GPU's
 * order with queue mode ink, while collate and atomic keep only the set, so tests compare
 * those as sorted triangle ids). Counter semantics equal the GPU's exactly: invocations and
 * queue_count only in counting mode without culling, queue_count always with culling
 * (= triangles kept, also those past capacity), overflow = kept but not stored, culled[] the
 * dropped ones by reason. */
#ifndef VR_REF_COMMON_H
#define VR_REF_COMMON_H

#include <assert.h>

#include "reuse/reuse.h"

/* Checks what every strategy needs from its parameters (GPU and CPU paths alike). Pointer
 * contracts are asserted; values that come from users or files return an error naming `who`. */
static inline vr_status vr_reuse_validate(const vr_reuse_params *p, const char *who)
{
    assert(p && who && p->counters);
    assert(p->index_count == 0 || ((p->indices || p->gts) && p->positions && p->normals));
    assert(p->queue.capacity == 0 ||
           (p->queue.clip && p->queue.normal && p->queue.vertex && p->queue.tri_id));
    if (p->index_count % 3 != 0)
        return VR_ERROR(VR_ERR_FORMAT, "%s: index_count %u is not a multiple of 3", who,
                        p->index_count);
    if (p->block_size < VR_BLOCK_MIN || p->block_size > VR_BLOCK_MAX || p->block_size % 32 != 0)
        return VR_ERROR(VR_ERR_ARG, "%s: block size %u must be a multiple of 32 in %u..%u", who,
                        p->block_size, VR_BLOCK_MIN, VR_BLOCK_MAX);
    if ((unsigned)p->queue_mode >= VR_QUEUE_MODE_COUNT)
        return VR_ERROR(VR_ERR_ARG, "%s: unknown queue mode %d", who, (int)p->queue_mode);
    if (!p->cull && p->queue.capacity < p->index_count / 3)
        return VR_ERROR(VR_ERR_OVERFLOW,
                        "%s: triangle queue too small: needed %u slots, had %u (without culling "
                        "slot = triangle id)", who, p->index_count / 3, p->queue.capacity);
    return VR_OK;
}

/* The warp strategy's checks, GPU and CPU paths alike: the common ones, then the batch length. */
static inline vr_status vr_warp_validate(const vr_reuse_params *p)
{
    vr_status st = vr_reuse_validate(p, "warp");
    if (st != VR_OK)
        return st;
    const uint32_t batch = p->batch_indices;
    if (batch < VR_WARP_BATCH_MIN || batch % 3 != 0 || batch > VR_WARP_BATCH_MAX)
        return VR_ERROR(VR_ERR_ARG, "warp: batch of %u indices must be a multiple of 3 in %u..%u",
                        batch, VR_WARP_BATCH_MIN, VR_WARP_BATCH_MAX);
    return VR_OK;
}

/* One round of warp voting on the host (reuse/warp_ref.c's rule; reuse/warp_round.cuh is the
 * device version): 32-index chunks of [start, end) while lanes are free; each index maps to the
 * lane that holds its vertex or takes the next free one, and once all 32 are taken the first
 * index without a lane ends the round. lane_vertex[0 .. *fill) gets the round's vertices,
 * map[0 .. *done) the lanes of the leading mapped indices. */
static inline void vr_ref_warp_round(const uint32_t *indices, uint64_t start, uint64_t end,
                                     uint32_t lane_vertex[32], uint8_t *map, uint32_t *fill_out,
                                     uint32_t *done_out)
{
    uint32_t fill = 0, done = 0;
    for (uint64_t offset = start; offset < end && fill < 32; offset += 32) {
        const uint64_t chunk = end - offset < 32 ? end - offset : 32;
        uint32_t mapped = 0;
        for (uint32_t i = 0; i < chunk; ++i) {
            const uint32_t v = indices[offset + i];
            uint32_t lane = 0;
            while (lane < fill && lane_vertex[lane] != v)
                ++lane;
            if (lane == fill) {
                if (fill == 32)
                    break; /* warp full: this index starts the next round */
                lane_vertex[fill++] = v;
            }
            map[done + i] = (uint8_t)lane;
            ++mapped;
        }
        done += mapped;
    }
    *fill_out = fill;
    *done_out = done;
}

static inline vr_shaded vr_ref_shade_vertex(const vr_reuse_params *p, uint32_t v)
{
    vr_shaded s;
    vr_shade(&p->shader, p->positions + 3 * (size_t)v, p->normals + 3 * (size_t)v, &s);
    if (p->count) {
        p->counters->invocations++;
        if (p->shade_counts)
            p->shade_counts[v]++;
    }
    return s;
}

static inline void vr_ref_store_corner(const vr_queue *q, uint32_t slot, int k, const vr_shaded *s,
                                       uint32_t vertex)
{
    size_t o = ((size_t)3 * slot + (size_t)k) * 4;
    for (int i = 0; i < 4; ++i)
        q->clip[o + i] = s->clip[i];
    for (int i = 0; i < 3; ++i)
        q->normal[o + i] = s->normal[i];
    q->normal[o + 3] = 0.0f;
    q->vertex[(size_t)3 * slot + (size_t)k] = vertex;
}

/* The triangle at stream position `pos` with source id `id` (a static plan's; else pos = id):
 * slot pos without culling, the next free one with it; tri_id = id. As vr_emit_triangle_at. */
static inline void vr_ref_emit_triangle_at(const vr_reuse_params *p, uint32_t pos, uint32_t id,
                                           const vr_shaded *a, const vr_shaded *b,
                                           const vr_shaded *c, uint32_t va, uint32_t vb,
                                           uint32_t vc)
{
    uint32_t slot = pos;
    if (p->cull) {
        const vr_cull_reason why = vr_cull_classify(a, b, c, p->two_sided);
        if (why != VR_CULL_KEPT) {
            p->counters->culled[why]++;
            return;
        }
        /* like the GPU: queue_count counts every kept triangle (what was wanted), overflow
         * the ones that found the queue full, so the host can report "needed N, had M" */
        slot = p->counters->queue_count++;
        if (slot >= p->queue.capacity) {
            p->counters->overflow++;
            return;
        }
    } else if (p->count) {
        p->counters->queue_count++;
    }
    vr_ref_store_corner(&p->queue, slot, 0, a, va);
    vr_ref_store_corner(&p->queue, slot, 1, b, vb);
    vr_ref_store_corner(&p->queue, slot, 2, c, vc);
    p->queue.tri_id[slot] = id;
}

static inline void vr_ref_emit_triangle(const vr_reuse_params *p, uint32_t tri, const vr_shaded *a,
                                        const vr_shaded *b, const vr_shaded *c, uint32_t va,
                                        uint32_t vb, uint32_t vc)
{
    vr_ref_emit_triangle_at(p, tri, tri, a, b, c, va, vb, vc);
}

#endif
