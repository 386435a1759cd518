/* plan.cuh - the GPU batcher of the static plans, patch.cu and meshlet.cu (reuse/patches.h):
 * one block per batch of the plan, over the plan-ordered index buffer. The block finds its
 * batch's distinct vertices with the hash strategy's table (reuse/dyn_common.cuh: insert,
 * compact, shade, assemble), shades each once and writes every triangle to the queue slot of
 * its plan position with its source id, p.tri_ids[plan position], as tri_id (consecutive
 * slots: warp-staged stores however the input was ordered). CPU twin: vr_dyn_ref_ids
 * (reuse/dyn_ref_common.h).
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

#include "reuse/dyn_common.cuh"

/* Thread mapping, shared memory and sync points as hash.cu's kernel: thread t inserts batch
 * positions t, t + blockDim, ... into the table, then compacts a chunk of slots, shades dense
 * ids and assembles triangles strided by blockDim; qb as there (a culling run compacting per
 * block, stage.cuh). The only difference: the assembly reads each triangle's source id from
 * p.tri_ids (bounds checked: an id >= the triangle count is overflow, its slot unwritten). Invariant as in hash.cu:
 * one slot per distinct index, so invocations == distinct vertices of the batch == what
 * vr_sim_patch / vr_sim_meshlet count. Every thread calls it. */
static __device__ __forceinline__ void vr_plan_batch(const vr_reuse_params &p,
                                                     uint32_t table_log2, uint32_t *s_warp,
                                                     uint32_t *s_failed, vr_compact_shared *cs,
                                                     int qb)
{
    vr_dyn_batch b;
    if (!vr_dyn_block_start(p, cs, qb, NULL, &b))
        return;
    const uint32_t slots = 1u << table_log2;
    const vr_dyn_smem s = vr_dyn_smem_carve(p.max_unique, slots);
    vr_dyn_clear_table(s, slots);
    if (threadIdx.x == 0)
        *s_failed = 0;
    __syncthreads();
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
        __shared__ uint32_t s_failed;                                                           \
        __shared__ vr_compact_shared cs;                                                        \
        vr_plan_batch(p, table_log2, s_warp, &s_failed, &cs, QB);                               \
    }

#endif
