/* render_program.cuh - the render program (reuse/render_program.h) as a struct for
 * vr_program_run<P> (reuse/program.cuh): Element = vr_shaded, the record the renderer's kernels
 * shade into (vr_shade_vertex, reuse/stage.cuh, without its counting: the API counts), and
 * primitive = the renderer's direct store (vr_store_corner x 3 + tri_id) at slot = stream
 * position `pos` (a plan's position for patch and meshlet), tri_id = the source id `prim`.
 * vr_render_program stores directly, each record from its own thread: program.cuh's plain
 * contract (no warp collectives in primitive()). vr_render_program_staged declares
 * converged_primitive: whole warps call its primitive() with a valid flag, and it stores as the
 * renderer's vr_emit_triangle_at does without culling, warp-staged (vr_render_program_store_warp),
 * partial warps included. The bytes are the same.
 * Included by reuse/render_program.cu and the benchmark in tests/test_render_program.cu, which
 * calls vr_program_run<P> itself so that its events enclose the kernels only.
 */
#ifndef VR_RENDER_PROGRAM_CUH
#define VR_RENDER_PROGRAM_CUH

#include "reuse/program.cuh"
#include "reuse/render_program.h"
#include "reuse/stage.cuh"

#include <string.h>

/* The staged variant's store (vr_render_program_staged, a converged program): program.cuh calls
 * it on all 32 lanes of a warp, lane l holding stream position base + l and the valid lanes a
 * prefix, so the warp stores its valid lanes' records warp-staged exactly as
 * vr_emit_triangle_at does (vr_store_warp_shared when the corners are in shared memory, else
 * vr_store_warp) - partial warps too, with their valid mask. The bytes are the direct store's. */
static __device__ __forceinline__ void vr_render_program_store_warp(const vr_queue &q, bool valid,
                                                                    uint32_t prim, uint32_t pos,
                                                                    const uint32_t *ids,
                                                                    const vr_shaded *const *c)
{
    const unsigned valid_mask = __ballot_sync(VR_FULL_MASK, valid);
    if (valid_mask == 0)
        return;
    const uint32_t base = pos - vr_lane_id();
    if (__isShared(c[0]) && __isShared(c[1]) && __isShared(c[2]))
        vr_store_warp_shared(q, base, valid_mask, prim, (uint32_t)__cvta_generic_to_shared(c[0]),
                             (uint32_t)__cvta_generic_to_shared(c[1]),
                             (uint32_t)__cvta_generic_to_shared(c[2]), ids[0], ids[1], ids[2]);
    else
        vr_store_warp(q, base, valid_mask, prim, *c[0], *c[1], *c[2], ids[0], ids[1], ids[2]);
}

/* The fields and the element function of both render programs. */
struct vr_render_program_base {
    typedef vr_shaded Element;
    /* the renderer's hash kernels run at 32 registers (VR_DYN_MAX_REGS); uncapped, the program's
     * phash took 50 and ran 12-29% behind them on the H100 (fewer resident blocks) */
    enum { arity = 3, hashed_max_regs = VR_DYN_MAX_REGS };
    const float *positions; /* 3 * vertex_count */
    const float *normals;   /* 3 * vertex_count */
    vr_shader shader;
    vr_queue queue;         /* capacity >= triangles */

    /* warp pools its rounds above the medium load (VR_RENDER_PROGRAM_POOL_STEPS) */
    bool pool_rounds() const { return shader.loop_iterations > VR_RENDER_PROGRAM_POOL_STEPS; }

    __device__ Element element(uint32_t v) const
    {
        float pos[3], nrm[3];
        for (int k = 0; k < 3; ++k) {
            pos[k] = __ldg(positions + 3 * (size_t)v + k);
            nrm[k] = __ldg(normals + 3 * (size_t)v + k);
        }
        vr_shaded s;
        vr_shade(&shader, pos, nrm, &s);
        return s;
    }
    /* the renderer's direct store of one record at queue slot `slot` */
    __device__ void store_at(uint32_t slot, uint32_t prim, const uint32_t *ids,
                             const Element *const *c) const
    {
        for (int k = 0; k < 3; ++k)
            vr_store_corner(queue, slot, k, *c[k], ids[k]);
        queue.tri_id[slot] = prim;
    }
};

/* The program with the renderer's direct store (the API's plain contract). */
struct vr_render_program : vr_render_program_base {
    __device__ void primitive(uint32_t prim, uint32_t pos, const uint32_t *ids,
                              const Element *const *c) const
    {
        store_at(pos, prim, ids, c);
    }
};

/* The program with the renderer's warp-staged store: whole warps call primitive(). */
struct vr_render_program_staged : vr_render_program_base {
    /* derived_layout (hash table first): with its layout as an argument this kernel spilled
     * 16 B more in phash and ran 1.09-1.10x the renderer at simple load; with the table first
     * 1.007-1.012, hash 0.96 (H100, session 22) */
    enum { converged_primitive = 1, derived_layout = 1 };
    __device__ void primitive(uint32_t prim, uint32_t pos, const uint32_t *ids,
                              const Element *const *c, bool valid) const
    {
        vr_render_program_store_warp(queue, valid, prim, pos, ids, c);
    }
};

/* Culling into the atomic queue or a keyed one (cub, hp), as the renderer's vr_emit_triangle_at
 * does with p.cull: classify, count the dropped triangles per reason (one atomic per reason per
 * warp), then either reserve the warp's kept slots with one atomicAdd on queue_count and store
 * each kept record directly at its slot (atomic: the order depends on the schedule), or write the
 * position's key (its position when kept, VR_QUEUE_KEY_DROPPED when not) and store every
 * triangle warp-staged at its position for the geometry stage's separate compaction (keyed).
 * Converged: the votes need the whole warp. ink and collate: vr_render_program_ordered. */
struct vr_render_program_cull : vr_render_program_base {
    enum { converged_primitive = 1, derived_layout = 1 };
    vr_counters *counters; /* the renderer's: culled[], and queue_count / overflow (atomic) */
    uint32_t *keys;        /* keyed: index_count / 3 keys; NULL: the atomic queue */
    int two_sided;

    __device__ void primitive(uint32_t prim, uint32_t pos, const uint32_t *ids,
                              const Element *const *c, bool valid) const
    {
        const vr_cull_reason why =
            valid ? vr_cull_classify(c[0], c[1], c[2], two_sided) : VR_CULL_KEPT;
        const uint32_t lane = vr_lane_id();
        for (int r = VR_CULL_KEPT + 1; r < VR_CULL_TRIANGLE_REASONS; ++r) {
            const unsigned ballot = __ballot_sync(VR_FULL_MASK, why == r);
            if (ballot && lane == 0)
                atomicAdd(&counters->culled[r], (uint32_t)__popc(ballot));
        }
        if (keys) {
            if (valid)
                keys[pos] = why == VR_CULL_KEPT ? pos : VR_QUEUE_KEY_DROPPED;
            vr_render_program_store_warp(queue, valid, prim, pos, ids, c);
            return;
        }
        const bool keep = valid && why == VR_CULL_KEPT;
        const unsigned ballot = __ballot_sync(VR_FULL_MASK, keep);
        if (!ballot)
            return;
        uint32_t base = 0;
        if (lane == 0)
            base = atomicAdd(&counters->queue_count, (uint32_t)__popc(ballot));
        base = __shfl_sync(VR_FULL_MASK, base, 0);
        if (!keep)
            return;
        const uint32_t slot = base + __popc(ballot & ((1u << lane) - 1u));
        if (slot >= queue.capacity) {
            atomicAdd(&counters->overflow, 1u);
            return;
        }
        store_at(slot, prim, ids, c);
    }
};

/* Culling into an ink or collate queue, as the renderer's block-compacted kernels do
 * (reuse/stage.cuh: vr_queue_block_rank, _base, _store): an ordered program (program.cuh)
 * whose keep() classifies the triangle and counts the dropped ones per reason, store() writes
 * a kept record directly at its slot (past the capacity: overflow), and kept() adds a block's
 * survivors to queue_count. (keep() repeats vr_render_program_cull's classification and
 * per-reason ballots: one shared helper moved ptxas's scheduling in both programs' measured
 * kernels, session 24.) */
struct vr_render_program_ordered : vr_render_program_base {
    enum { ordered_primitive = 1, derived_layout = 1 };
    vr_counters *counters; /* the renderer's: culled[], queue_count, overflow */
    int two_sided;

    /* ink as persistent blocks up to the light load (VR_RENDER_PROGRAM_CHEAP_STEPS) */
    bool cheap_elements() const
    {
        return shader.loop_iterations <= VR_RENDER_PROGRAM_CHEAP_STEPS;
    }

    __device__ bool keep(uint32_t prim, uint32_t pos, const uint32_t *ids,
                         const Element *const *c, bool valid) const
    {
        const vr_cull_reason why =
            valid ? vr_cull_classify(c[0], c[1], c[2], two_sided) : VR_CULL_KEPT;
        const uint32_t lane = vr_lane_id();
        for (int r = VR_CULL_KEPT + 1; r < VR_CULL_TRIANGLE_REASONS; ++r) {
            const unsigned ballot = __ballot_sync(VR_FULL_MASK, why == r);
            if (ballot && lane == 0)
                atomicAdd(&counters->culled[r], (uint32_t)__popc(ballot));
        }
        return valid && why == VR_CULL_KEPT;
    }
    __device__ void store(uint32_t slot, uint32_t prim, uint32_t pos, const uint32_t *ids,
                          const Element *const *c) const
    {
        if (slot >= queue.capacity) {
            atomicAdd(&counters->overflow, 1u);
            return;
        }
        store_at(slot, prim, ids, c);
    }
    __device__ void kept(uint32_t n) const { atomicAdd(&counters->queue_count, n); }
};

/* The program of the renderer's parameters p (device pointers); P one of the above. */
template <class P>
static inline P vr_render_program_of(const vr_reuse_params *p)
{
    P r;
    r.positions = p->positions;
    r.normals = p->normals;
    r.shader = p->shader;
    r.queue = p->queue;
    return r;
}

/* The API's parameters for strategy `kind` with the renderer's p: the same stream, batches or
 * plan (tri_ids only for a plan: the renderer's other strategies ignore them), limits and
 * counting; `counters` device memory (cleared by the caller), `elements` multi's workspace
 * (vertex_count vr_shaded) or NULL. */
static inline vr_program_params vr_render_program_params(vr_reuse_kind kind,
                                                         const vr_reuse_params *p,
                                                         vr_program_counters *counters,
                                                         void *elements)
{
    vr_program_params q;
    memset(&q, 0, sizeof q);
    q.indices = p->indices;
    q.index_count = p->index_count;
    q.arity = 3;
    q.element_count = p->vertex_count;
    q.batch_starts = p->batch_starts;
    q.batch_count = p->batch_count;
    q.prim_ids = vr_program_planned(kind) ? p->tri_ids : NULL;
    q.limits = vr_batch_limits_of(p);
    q.count = p->count;
    q.counters = counters;
    q.shade_counts = p->shade_counts;
    q.temp = elements;
    return q;
}

#endif
