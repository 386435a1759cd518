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

#include <string.h>

/* A batch whose bounds prove every triangle culled (reuse/cluster_cull.h), in place of its
 * table, shading and stores: its triangles are counted in culled[VR_CULL_CLUSTER] - but a bad
 * source id in overflow, as the assembly counts it - and keyed (cub, hp) runs get a dropped key
 * at each of its stream positions; the block then takes its part in the queue's compaction as a
 * batch with nothing to emit. Every thread calls it (block-uniform; one block scan). */
static __device__ __forceinline__ void vr_plan_skip(const vr_reuse_params &p,
                                                    const vr_dyn_batch &b, uint32_t *s_warp,
                                                    vr_compact_shared *cs, int qb)
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

/* The cluster tests of all batches in one pre-pass, one thread per batch, before the plan kernel
 * (vr_plan_launch): the kernel then reads one word per block. Testing in the plan kernel's thread
 * 0 instead (the first version) put ~300 dependent double operations in front of every batch's
 * table clearing - on the critical path of ink's ordered look-back - and cost the kernel spill
 * stores: with culling on, sphere:7M random was 1.24x faster at heavy load and 1.35x SLOWER at
 * simple load. skip[b] = 1 when batch b's bounds prove every triangle culled. */
struct vr_plan_mvp {
    float m[16];
};

static __global__ void vr_plan_cluster_kernel(const vr_cluster_bounds *bounds,
                                              uint32_t batch_count, vr_plan_mvp mvp, int two_sided,
                                              uint32_t *skip)
{
    const uint32_t b = blockIdx.x * blockDim.x + threadIdx.x;
    if (b >= batch_count)
        return;
    const vr_cluster_bounds cb = bounds[b];
    skip[b] = (uint32_t)vr_cluster_culled(&cb, mvp.m, two_sided);
}

/* Thread mapping, shared memory and sync points as hash.cu's kernel: thread t inserts batch
 * positions t, t + blockDim, ... into the table, then compacts a chunk of slots, shades dense
 * ids and assembles triangles strided by blockDim; qb as there (a culling run compacting per
 * block, stage.cuh). The differences: the assembly reads each triangle's source id from
 * p.tri_ids (bounds checked: an id >= the triangle count is overflow, its slot unwritten), and
 * with cluster culling thread 0 reads the pre-pass's answer for the batch (p.temp, see
 * vr_plan_cluster_kernel) into *s_skip with the table's clearing (the same __syncthreads), so a
 * culled batch leaves block-uniformly through vr_plan_skip. Invariant as in hash.cu: one slot
 * per distinct index, so invocations == distinct vertices of the batch == what vr_sim_patch /
 * vr_sim_meshlet count (with cluster culling: of the batches not skipped). Every thread calls
 * it. */
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
        if (p.cull && p.cluster_cull)
            *s_skip = __ldg((const uint32_t *)p.temp + batch);
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

/* patch and meshlet: the checks, the cluster pre-pass when culling whole batches (its flags in
 * p->temp, vr_plan_temp_bytes) and the plan kernel. */
static inline vr_status vr_plan_launch(const vr_reuse_params *p, const char *name,
                                       vr_dyn_hashed_kernel plain, vr_dyn_hashed_kernel blockwise,
                                       const char *kernel_name)
{
    vr_status st = vr_plan_check_cluster(p, name);
    if (st != VR_OK)
        return st;
    if (vr_plan_cluster_cull(p) && p->index_count > 0 && p->batch_count > 0) {
        if (!p->temp)
            return VR_ERROR(VR_ERR_ARG, "%s: cluster culling needs vr_plan_temp_bytes of "
                            "workspace in vr_reuse_params.temp", name);
        if ((st = vr_dyn_check(p, name)) != VR_OK) /* batch_count, before it sizes a launch */
            return st;
        vr_plan_mvp mvp;
        memcpy(mvp.m, p->shader.mvp, sizeof mvp.m);
        const uint32_t threads = 128, blocks = (p->batch_count + threads - 1) / threads;
        vr_plan_cluster_kernel<<<blocks, threads, 0, (cudaStream_t)p->stream>>>(
            p->cluster_bounds, p->batch_count, mvp, p->two_sided, (uint32_t *)p->temp);
        VR_LAUNCH_CHECK("vr_plan_cluster_kernel", (cudaStream_t)p->stream);
    }
    return vr_dyn_launch_hashed(p, name, plain, blockwise, kernel_name);
}

#endif
