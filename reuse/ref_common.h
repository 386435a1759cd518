/* ref_common.h - the CPU twins' versions of reuse/stage.cuh: shade one vertex with counting,
 * and emit one triangle into the queue with the same slot rule (slot = triangle id without
 * culling; next free slot in emission order with culling - the GPU's order differs, so tests
 * compare culled queues as sorted triangle ids). */
#ifndef VR_REF_COMMON_H
#define VR_REF_COMMON_H

#include "reuse.h"

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

static inline void vr_ref_emit_triangle(const vr_reuse_params *p, uint32_t tri, const vr_shaded *a,
                                        const vr_shaded *b, const vr_shaded *c, uint32_t va,
                                        uint32_t vb, uint32_t vc)
{
    uint32_t slot = tri;
    if (p->cull) {
        if (vr_cull_triangle(a, b, c))
            return;
        slot = p->counters->queue_count++;
        if (slot >= p->queue.capacity) {
            p->counters->queue_count--;
            p->counters->overflow++;
            return;
        }
    } else if (p->count) {
        p->counters->queue_count++;
    }
    vr_ref_store_corner(&p->queue, slot, 0, a, va);
    vr_ref_store_corner(&p->queue, slot, 1, b, vb);
    vr_ref_store_corner(&p->queue, slot, 2, c, vc);
    p->queue.tri_id[slot] = tri;
}

#endif
