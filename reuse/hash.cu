/* hash.cu - dynamically batched hashing (Kenzel et al. 2018, Sec. 3.4, Algorithm 3): one block
 * per dynamic batch enters the batch's indices into a shared-memory hash table (multiplicative
 * hash, linear probing, atomicCAS from empty), numbers the occupied slots densely, shades each
 * distinct vertex exactly once and assembles one triangle per thread from shared memory.
 * CPU twin: hash_ref.c (reuse/dyn_ref_common.h). Try: `vreuse_tests gpu/dyn`,
 * `vreuse bench --strategy hash`.
 */
#include "dyn_common.cuh"

/* Thread mapping: thread t inserts batch positions t, t + blockDim, ... (coalesced loads;
 * ceil(count / blockDim) of them, as a batch of up to p.max_indices <= 3069 may exceed the
 * block - the loop holds no barrier or warp collective, so its bound may differ per thread), then
 * owns a chunk of table slots for compaction, dense ids t, t + blockDim, ... for shading, and
 * triangles t, t + blockDim, ... for assembly. Shared memory: vr_dyn_smem with a table of
 * 2^table_log2 slots, plus s_warp for the scan and s_failed. Sync points: table cleared |
 * inserted | (scan) compacted | shaded. Invariant: atomicCAS from VR_DYN_EMPTY is the only write
 * to the table until compaction, and every inserter of a key walks the same probe sequence, so
 * each distinct index ends up in exactly one slot: invocations == distinct vertices. */
static __global__ void __maxnreg__(VR_DYN_MAX_REGS)
vr_hash_kernel(vr_reuse_params p, uint32_t table_log2)
{
    __shared__ uint32_t s_warp[VR_WARP_SIZE];
    __shared__ uint32_t s_failed;
    vr_dyn_batch b;
    if (!vr_dyn_batch_bounds(p, &b) || b.count == 0)
        return;
    const uint32_t slots = 1u << table_log2, mask = slots - 1;
    const vr_dyn_smem s = vr_dyn_smem_carve(p.max_unique, slots);

    vr_dyn_clear_table(s, slots);
    if (threadIdx.x == 0)
        s_failed = 0;
    __syncthreads();

    for (uint32_t i = threadIdx.x; i < b.count; i += blockDim.x) {
        const uint32_t key = __ldg(p.indices + b.start + i);
        uint32_t slot = vr_dyn_hash(key, table_log2);
        /* A slot, once filled, never changes: a CAS that returns another key means move on,
         * one that returns EMPTY or our key means the key lives here. After `slots` misses
         * the table holds only other keys (more distinct vertices than slots). */
        for (uint32_t probes = 0;; ++probes) {
            if (probes == slots) {
                atomicOr(&s_failed, 1u);
                break;
            }
            const uint32_t prev = atomicCAS(s.table + slot, VR_DYN_EMPTY, key);
            if (prev == VR_DYN_EMPTY || prev == key)
                break;
            slot = (slot + 1) & mask;
        }
        s.map[i] = (uint16_t)slot;
    }
    __syncthreads();
    vr_dyn_finish_hashed(p, s, slots, s_warp, &s_failed, b);
}

extern "C" vr_status vr_hash_run(const vr_reuse_params *p)
{
    return vr_dyn_launch_hashed(p, "hash", vr_hash_kernel);
}
