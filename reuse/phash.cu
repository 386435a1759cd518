/* phash.cu - dynamically batched parallel hashing (Kenzel et al. 2018, Sec. 3.4): like hash.cu,
 * but each thread tries only VR_PHASH_FAST_PROBES slots on its own (fast path); keys still
 * without a slot are then inserted by their whole warp together, one key at a time, 32
 * consecutive slots per step (slow path). A long probe chain thus costs its warp a few steps
 * instead of serialising 31 idle lanes behind one. CPU twin: phash_ref.c
 * (reuse/dyn_ref_common.h). Try: `vreuse_tests gpu/dyn`, `vreuse bench --strategy phash`.
 */
#include "reuse/dyn_common.cuh"

/* Linear-probing attempts per thread before the warp takes over its key. */
#define VR_PHASH_FAST_PROBES 4

/* Thread mapping: in round r, thread t inserts batch position r * blockDim + t, for
 * ceil(count / blockDim) rounds (batches of up to p.max_indices <= 3069 may exceed the block);
 * the round loop has a block-uniform bound so warps are converged for the slow path's shuffles
 * and votes.
 * Then as hash.cu: a chunk of slots for compaction, dense ids and triangles strided by
 * blockDim. Shared memory: vr_dyn_smem with a table of 2^table_log2 slots, s_warp, s_failed.
 * Sync points: table cleared | inserted | (scan) compacted | shaded.
 * Invariant: slots change only EMPTY -> key, by atomicCAS; every inserter of a key - fast path
 * or slow path, any warp - passes a slot only after seeing it hold another key, so all of them
 * stop at the same first empty-or-equal slot and each key occupies exactly one slot. */
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
    const uint32_t slots = 1u << table_log2, mask = slots - 1;
    const uint32_t lane = threadIdx.x & (VR_WARP_SIZE - 1);
    const vr_dyn_smem s = vr_dyn_smem_carve(p.max_unique, slots);

    vr_dyn_clear_table(s, slots);
    if (threadIdx.x == 0)
        s_failed = 0;
    __syncthreads();

    for (uint32_t base = 0; base < b.count; base += blockDim.x) {
        const uint32_t i = base + threadIdx.x;
        const int has_key = i < b.count;
        const uint32_t key = has_key ? __ldg(p.indices + b.start + i) : 0;
        uint32_t slot = vr_dyn_hash(key, table_log2);
        uint32_t passed = 0; /* slots seen holding other keys */
        int pending = has_key;

        /* fast path: the thread probes alone, as in hash.cu */
        for (int k = 0; k < VR_PHASH_FAST_PROBES && pending; ++k) {
            const uint32_t prev = atomicCAS(s.table + slot, VR_DYN_EMPTY, key);
            if (prev == VR_DYN_EMPTY || prev == key) {
                pending = 0;
            } else {
                slot = (slot + 1) & mask;
                ++passed;
            }
        }
        if (pending && passed >= slots) {
            pending = 0;
            atomicOr(&s_failed, 1u);
        }

        /* slow path: the warp serves its lowest pending lane (the leader). Lane j reads slot
         * leader's next + j with an atomic (other warps are inserting concurrently); the first
         * slot in probe order that holds the key or is empty decides. Empty: that lane CASes
         * the key in - a lost race moves the window past the slot. Every lane with the same
         * key takes the result, so duplicates within the warp cost no extra step. All 32 lanes
         * run every iteration: the loop condition is a ballot. */
        unsigned todo = __ballot_sync(VR_FULL_MASK, pending);
        while (todo) {
            const int leader = __ffs(todo) - 1;
            const uint32_t lkey = __shfl_sync(VR_FULL_MASK, key, leader);
            const uint32_t lslot = __shfl_sync(VR_FULL_MASK, slot, leader);
            const uint32_t lpassed = __shfl_sync(VR_FULL_MASK, passed, leader);
            const uint32_t probe = (lslot + lane) & mask; /* tables < 32 slots wrap: harmless */
            const uint32_t cur = atomicOr(s.table + probe, 0u);
            const unsigned stop = __ballot_sync(VR_FULL_MASK, cur == lkey || cur == VR_DYN_EMPTY);
            uint32_t found = VR_DYN_EMPTY, advance = VR_WARP_SIZE;
            if (stop) {
                const int first = __ffs(stop) - 1;
                if ((int)lane == first) {
                    const uint32_t prev =
                        cur == lkey ? lkey : atomicCAS(s.table + probe, VR_DYN_EMPTY, lkey);
                    if (prev == VR_DYN_EMPTY || prev == lkey)
                        found = probe;
                }
                found = __shfl_sync(VR_FULL_MASK, found, first);
                advance = (uint32_t)first + 1;
            }
            if (found != VR_DYN_EMPTY) {
                if (pending && key == lkey) {
                    slot = found;
                    pending = 0;
                }
            } else if ((int)lane == leader) {
                slot = (lslot + advance) & mask;
                passed = lpassed + advance;
                if (passed >= slots) { /* every slot holds another key */
                    pending = 0;
                    atomicOr(&s_failed, 1u);
                }
            }
            todo = __ballot_sync(VR_FULL_MASK, pending);
        }
        if (has_key)
            s.map[i] = (uint16_t)slot;
    }
    __syncthreads();
    vr_dyn_finish_hashed(p, s, slots, s_warp, &s_failed, b, &cs, QB, NULL);
}

extern "C" vr_status vr_phash_run(const vr_reuse_params *p)
{
    return vr_dyn_launch_hashed(p, "phash", vr_phash_kernel<0>, vr_phash_kernel<1>,
                                "vr_phash_kernel");
}
