/* phash.cu - dynamically batched parallel hashing (Kenzel et al. 2018, Sec. 3.4): like hash.cu,
 * but each thread tries only VR_PHASH_FAST_PROBES slots on its own (fast path); keys still
 * without a slot are then inserted by their whole warp together, one key at a time, 32
 * consecutive slots per step (slow path). A long probe chain thus costs its warp a few steps
 * instead of serialising 31 idle lanes behind one. CPU twin: phash_ref.c
 * (reuse/dyn_ref_common.h). Try: `vreuse_tests gpu/dyn`, `vreuse bench --strategy phash`.
 */
#include "reuse/dyn_common.cuh"

/* Thread mapping: insertion as vr_phash_insert_batch (reuse/dyn_common.cuh) says.
 * Then as hash.cu: a chunk of slots for compaction, dense ids and triangles strided by
 * blockDim. Shared memory: vr_dyn_smem with a table of 2^table_log2 slots, s_warp, s_failed.
 * Sync points: table cleared | inserted | (scan) compacted | shaded. Each key occupies exactly
 * one slot (the insertion's invariant). */
template <int QB>
static __global__ void __maxnreg__(VR_DYN_MAX_REGS)
vr_phash_kernel(vr_reuse_params p, uint32_t table_log2)
{
    __shared__ uint32_t s_warp[VR_WARP_SIZE];
    __shared__ uint32_t s_failed;
    __shared__ vr_compact_shared cs;
    vr_dyn_batch b;
    if (!vr_dyn_block_start(p, &cs, QB, NULL, &b))
        return;
    const uint32_t slots = 1u << table_log2;
    const vr_dyn_smem s = vr_dyn_smem_carve(p.max_unique, slots);

    vr_dyn_clear_table(s, slots);
    if (threadIdx.x == 0)
        s_failed = 0;
    __syncthreads();

    vr_phash_insert_batch(s, p.indices + b.start, b.count, table_log2, &s_failed);
    __syncthreads();
    vr_dyn_finish_hashed(p, s, slots, s_warp, &s_failed, b, &cs, QB, NULL);
}

extern "C" vr_status vr_phash_run(const vr_reuse_params *p)
{
    return vr_dyn_launch_hashed(p, "phash", vr_phash_kernel<0>, vr_phash_kernel<1>,
                                "vr_phash_kernel");
}
