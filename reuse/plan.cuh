/* plan.cuh - the GPU batcher of the static plans, patch.cu and meshlet.cu (reuse/patches.h):
 * one block per batch of the plan, over the plan-ordered index buffer. The block finds its
 * batch's distinct vertices with the hash strategy's table (reuse/dyn_common.cuh: insert,
 * compact, shade, assemble), shades each once and writes every triangle to the queue slot of
 * its plan position with its source id, p.tri_ids[plan position], as tri_id (consecutive
 * slots: warp-staged stores however the input was ordered). With cull and cluster_cull a batch
 * whose bounds prove every triangle culled is skipped whole (reuse/cluster_cull.h). CPU twin:
 * vr_plan_ref (reuse/dyn_ref_common.h).
 *
 * Ribbon vertices: a patch's faces also use vertices owned by neighbouring patches (RXMesh's
 * ribbon). We shade them in every patch that uses them instead of fetching the owner's result,
 * as RXMesh also replicates its ribbon into each patch. Fetching would need the owner to have
 * finished - a second pass or a grid-wide barrier, so the stage no longer streams - and a
 * 28-byte shaded vertex written and read back through global memory per ribbon vertex; it would
 * save what the simulator shows as the gap between patch and ideal reuse (about .80 against
 * .83 at N_u 256: one invocation in five). Against a simple shader (one 4x4 transform, 24 bytes
 * read) that round trip costs more than the shading; only loads near the heavy one would gain,
 * and those are better served by larger patches (N_u up to 1024). The precomputed plan could
 * also hand each batch its vertex list and local indices (meshlets carry them), which would
 * drop the hash table; we keep the runtime deduplication so the GPU shares the dynamic
 * batchers' tested code and needs no extra per-plan arrays.
 */
#ifndef VR_PLAN_CUH
#define VR_PLAN_CUH

#include "reuse/cluster_cull.h"
#include "reuse/dyn_common.cuh"

/* A batch whose bounds prove every triangle culled (reuse/cluster_cull.h), in place of its
 * table, shading and stores: its triangles are counted in culled[VR_CULL_CLUSTER] - but a bad
 * source id in overflow, as the assembly counts it - and keyed (cub, hp) runs get a dropped key
 * at each of its stream positions; the block then takes its part in the queue's compaction as a
 * batch with nothing to emit. Every thread calls it (block-uniform; one block scan). */
static __device__ __forceinline__ void vr_plan_skip(const vr_reuse_params &p, const vr_dyn_batch &b,
                                                 uint32_t *s_warp, vr_compact_shared *cs, int qb)
{
    const uint32_t tri_count = b.count / 3, first = b.start / 3, tris = p.index_count / 3;
    uint32_t bad = 0;
    for (uint32_t t = threadIdx.x; t < tri_count; t += blockDim.x) {
        if (p.tri_ids && __ldg(p.tri_ids + first + t) >= tris)
            ++bad; /* as the assembly: counted, no key written */
        else if (p.queue_keys)
            p.queue_keys[first + t] = VR_QUEUE_KEY_DROPPED;
    }
    uint32_t total_bad;
    (void)vr_dyn_block_scan(bad, s_warp, &total_bad);
    if (threadIdx.x == 0) {
        if (tri_count > total_bad)
            atomicAdd(&p.counters->culled[VR_CULL_CLUSTER], tri_count - total_bad);
        if (total_bad)
            atomicAdd(&p.counters->overflow, total_bad);
    }
    vr_queue_block_skip(p, cs, qb);
}

/* Thread 0's cluster test, out of line so that its double arithmetic does not weigh on the
 * registers of the common path (the kernel runs at VR_DYN_MAX_REGS). It takes plain pointers:
 * the address of the kernel's parameter struct, passed to a call, would make every thread copy
 * the whole struct to local memory. */
static __device__ __noinline__ uint32_t vr_plan_cluster_test(const vr_cluster_bounds *b,
                                                             const float *mvp, int two_sided)
{
    const vr_cluster_bounds bounds = *b;
    return (uint32_t)vr_cluster_culled(&bounds, mvp, two_sided);
}

/* Thread mapping, shared memory and sync points as hash.cu's kernel: thread t inserts batch
 * positions t, t + blockDim, ... into the table, then compacts a chunk of slots, shades dense
 * ids and assembles triangles strided by blockDim; qb as there (a culling run compacting per
 * block, stage.cuh). The differences: the assembly reads each triangle's source id from
 * p.tri_ids (bounds checked: an id >= the triangle count is overflow, its slot unwritten), and
 * with cluster culling thread 0 first tests the batch's bounds and publishes the answer in
 * *s_skip with the table's clearing (the same __syncthreads), so a culled batch leaves
 * block-uniformly through vr_plan_skip. Invariant as in hash.cu: one slot per distinct index,
 * so invocations == distinct vertices of the batch == what vr_sim_patch / vr_sim_meshlet count
 * (with cluster culling: of the batches not skipped). Every thread calls it. */
static __device__ __forceinline__ void vr_plan_batch(const vr_reuse_params &p,
                                                     uint32_t table_log2, uint32_t *s_warp,
                                                     uint32_t *s_failed, uint32_t *s_skip,
                                                     vr_compact_shared *cs, int qb)
{
    vr_dyn_batch b;
    uint32_t batch;
    if (!vr_dyn_block_start(p, cs, qb, &batch, &b))
        return;
    const uint32_t slots = 1u << table_log2;
    const vr_dyn_smem s = vr_dyn_smem_carve(p.max_unique, slots);
    vr_dyn_clear_table(s, slots);
    if (threadIdx.x == 0) {
        *s_failed = 0;
        *s_skip = 0;
        if (p.cull && p.cluster_cull && p.cluster_bounds) {
            float mvp[16];
            for (int k = 0; k < 16; ++k)
                mvp[k] = p.shader.mvp[k];
            *s_skip = vr_plan_cluster_test(p.cluster_bounds + batch, mvp, p.two_sided);
        }
    }
    __syncthreads();
    if (*s_skip) {
        vr_plan_skip(p, b, s_warp, cs, qb);
        return;
    }
    for (uint32_t i = threadIdx.x; i < b.count; i += blockDim.x)
        s.map[i] = (uint16_t)vr_dyn_hash_insert(s, __ldg(p.indices + b.start + i), table_log2,
                                                s_failed);
    __syncthreads();
    vr_dyn_finish_hashed(p, s, slots, s_warp, s_failed, b, cs, qb, p.tri_ids);
}

/* The kernel of a static plan strategy, vr_NAME_kernel<QB> (QB 1: a culling run compacts its
 * queue per block, ink or collate; 0 otherwise): one block per batch, see vr_plan_batch. The
 * strategies differ in their plans, not in how a batch is processed, so they share this body
 * and keep their own kernel names (profiles, launch messages). */
#define VR_PLAN_KERNEL(name)                                                                    \
    template <int QB>                                                                           \
    static __global__ void __maxnreg__(VR_DYN_MAX_REGS)                                         \
        vr_##name##_kernel(vr_reuse_params p, uint32_t table_log2)                              \
    {                                                                                           \
        __shared__ uint32_t s_warp[VR_WARP_SIZE];                                               \
        __shared__ uint32_t s_failed, s_skip;                                                   \
        __shared__ vr_compact_shared cs;                                                        \
        vr_plan_batch(p, table_log2, s_warp, &s_failed, &s_skip, &cs, QB);                      \
    }

#endif
