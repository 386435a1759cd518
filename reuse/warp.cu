/* warp.cu - statically batched warp voting (Kenzel et al. 2018, Sec. 3.3, Algorithm 1): one warp
 * per static batch of batch_indices indices. In rounds, the warp deduplicates indices (per
 * 32-index chunk one vote step of warp_vote.h: a scan, a match, two ballots) so that each lane
 * owns one distinct vertex, shades once per lane, and assembles triangles by shuffling the shaded
 * results; an inverse map in shared memory tells each triangle corner which lane holds it.
 * CPU twin (same rounds, same counts): warp_ref.c; the vote step's lane model:
 * tests/test_warp_vote.c.
 * Try: `vreuse_tests gpu/`, `vreuse bench --strategy warp`.
 */
#include "reuse/ref_common.h"
#include "reuse/stage.cuh"
#include "reuse/warp_round.cuh"

/* Moves a shaded vertex from lane `src` to the calling lane (all 32 lanes must call). */
static __device__ __forceinline__ vr_shaded vr_shfl_shaded(const vr_shaded &s, int src)
{
    vr_shaded r;
    for (int i = 0; i < 4; ++i)
        r.clip[i] = __shfl_sync(VR_FULL_MASK, s.clip[i], src);
    for (int i = 0; i < 3; ++i)
        r.normal[i] = __shfl_sync(VR_FULL_MASK, s.normal[i], src);
    return r;
}

/* The stash of a warp when the queue is block-compacted (cull with queue mode ink or collate):
 * a triangle cannot be written before the block knows its first slot, which needs the counts
 * of all its warps' rounds, while a round's shaded vertices live in lane registers only until
 * the next round. So each round's shaded vertices go to shared memory (at most
 * vr_warp_stash_cap(B) per warp: every round but the last consumes >= 30 indices, and a round
 * sheds at most the 2 vertices of a trailing incomplete triangle), each index position learns
 * its stash entry, and the warp assembles from the stash after its last round. Per warp:
 * B bytes of map, 2B of stash map, 32 bytes per stash entry (shaded vertex and its id; about
 * 3.6 KB at B = 96). */
static __host__ __device__ inline uint32_t vr_warp_stash_cap(uint32_t batch)
{
    return batch + 2u * ((batch + 29u) / 30u) + 2u;
}

/* Per block: the warps' tables of held vertices (vr_warp_load_round), their lane maps, and
 * when stashed their stashes. */
static __host__ __device__ inline size_t vr_warp_shared_bytes(uint32_t batch, uint32_t warps,
                                                              int stashed)
{
    const size_t held = (size_t)warps * VR_WARP_HELD_BYTES;
    const size_t maps = ((size_t)warps * batch + 3u) / 4u * 4u; /* lane maps, 4-byte aligned */
    if (!stashed)
        return held + (size_t)warps * batch;
    return held + maps + (size_t)warps * ((2u * batch + 3u) / 4u * 4u) +
           (size_t)warps * vr_warp_stash_cap(batch) * (sizeof(vr_shaded) + sizeof(uint32_t));
}

/* After its last round, a warp's triangles from the stash: pass 0 ranks the survivors (warp
 * scans; one block rank for the warp's total gives its offset among the block's warps, so the
 * block's order is warp 0's triangles, then warp 1's: input order), vr_queue_block_base, pass 1
 * stores. Every thread of the block calls it (warps without a batch with n = 0). */
static __device__ void vr_warp_emit_stashed(const vr_reuse_params &p, vr_compact_shared *cs,
                                            const vr_shaded *stash, const uint32_t *stash_vertex,
                                            const uint16_t *stash_map, uint32_t first_tri,
                                            uint32_t n)
{
    const uint32_t lane = threadIdx.x & (VR_WARP_SIZE - 1);
    uint32_t warp_off = 0;
    for (int pass = 0; pass < 2; ++pass) {
        if (pass == 1) {
            const uint32_t r = vr_compact_block_rank(cs, lane == 0 ? warp_off : 0u);
            warp_off = __shfl_sync(VR_FULL_MASK, r, 0) + vr_queue_block_base(p, cs);
        }
        for (uint32_t t0 = 0; t0 < n; t0 += VR_WARP_SIZE) {
            const uint32_t t = t0 + lane;
            const int valid = t < n;
            const uint32_t e0 = valid ? stash_map[3 * t + 0] : 0, e1 = valid ? stash_map[3 * t + 1] : 0,
                           e2 = valid ? stash_map[3 * t + 2] : 0;
            const vr_cull_reason why = valid ? vr_cull_classify(stash + e0, stash + e1, stash + e2,
                                                                p.two_sided)
                                             : VR_CULL_KEPT;
            const int keep = valid && why == VR_CULL_KEPT;
            const uint32_t kept = __ballot_sync(VR_FULL_MASK, keep);
            if (pass == 0) {
                vr_count_culled(p, why);
                warp_off += (uint32_t)__popc(kept); /* pass 0: the warp's running total */
                continue;
            }
            if (keep)
                vr_queue_block_store(p, warp_off + (uint32_t)__popc(kept & vr_compact_lanemask_lt()),
                                     first_tri + t, stash[e0], stash[e1], stash[e2],
                                     stash_vertex[e0], stash_vertex[e1], stash_vertex[e2]);
            warp_off += (uint32_t)__popc(kept);
        }
    }
    vr_compact_end(p.queue_dev);
}

/* Thread mapping: warp w of the grid owns indices [w * B, min((w + 1) * B, index_count)),
 * B = p.batch_indices; in a round, lane l owns the l-th distinct vertex met (my_vertex).
 * Shared (dynamic): the vote's table of held vertices, 128 bytes per warp, then s_map, B bytes
 * per warp: index position - round start -> owning lane.
 * Syncs: __syncwarp after the map is written (assembly reads other lanes' entries) and after
 * assembly (the next round overwrites the map). Invariant: start, end, fill, done and the loop
 * bounds are warp-uniform, so every shuffle, match and ballot runs with all 32 lanes (full mask). */
template <int QB>
static __global__ void __launch_bounds__(1024) vr_warp_kernel(vr_reuse_params p)
{
    extern __shared__ __align__(16) uint8_t s_warp_block[];
    __shared__ vr_compact_shared cs;
    const int stashed = QB;
    const uint32_t block = vr_queue_block_begin(p, &cs, QB); /* blockIdx.x, or the ink ticket */
    const uint32_t lane = threadIdx.x & (VR_WARP_SIZE - 1);
    const uint32_t warp = threadIdx.x / VR_WARP_SIZE, warps = blockDim.x / VR_WARP_SIZE;
    const uint32_t B = p.batch_indices;
    uint32_t *const s_held = reinterpret_cast<uint32_t *>(s_warp_block) + warp * VR_WARP_SIZE;
    uint8_t *const s_map_block = s_warp_block + warps * VR_WARP_HELD_BYTES;
    uint8_t *const s_map = s_map_block + warp * B;
    const uint64_t begin = ((uint64_t)block * warps + warp) * B;
    if (begin >= p.index_count && !stashed)
        return; /* the whole warp leaves: past the last batch */
    /* stashed: a warp past the last batch has no triangles but takes part in the block's
     * compaction */
    const uint32_t first = (uint32_t)min(begin, (uint64_t)p.index_count);
    const uint32_t end = (uint32_t)min(begin + B, (uint64_t)p.index_count);
    const uint32_t cap = vr_warp_stash_cap(B);
    uint8_t *const stash_base = s_map_block + ((size_t)warps * B + 3u) / 4u * 4u;
    uint16_t *const stash_map =
        reinterpret_cast<uint16_t *>(stash_base + (size_t)warp * ((2u * B + 3u) / 4u * 4u));
    uint8_t *const entries = stash_base + (size_t)warps * ((2u * B + 3u) / 4u * 4u);
    vr_shaded *const stash = reinterpret_cast<vr_shaded *>(entries) + (size_t)warp * cap;
    uint32_t *const stash_vertex =
        reinterpret_cast<uint32_t *>(entries + (size_t)warps * cap * sizeof(vr_shaded)) +
        (size_t)warp * cap;
    uint32_t stash_used = 0;

    for (uint32_t start = first; start < end;) {
        /* loading (Algorithm 1, lines 4-23): reuse/warp_round.cuh */
        uint32_t my_vertex, fill, done;
        vr_warp_load_round(p.indices, start, end, lane, s_map, s_held, &my_vertex, &fill, &done);
        __syncwarp();

        /* shading: one invocation per filled lane, including corners of a trailing incomplete
         * triangle, whose results are dropped (the paper's "early shading results") */
        vr_shaded shaded = {};
        if (lane < fill)
            shaded = vr_shade_vertex(p, my_vertex);

        /* assembly: lane l takes triangles l, l + 32, ... of the round (more than 32 only when
         * B > 96 and indices repeat a lot); stashed, the round's vertices and their entries
         * are kept for vr_warp_emit_stashed instead */
        const uint32_t triangles = done / 3;
        if (stashed) {
            if (lane < fill) {
                stash[stash_used + lane] = shaded;
                stash_vertex[stash_used + lane] = my_vertex;
            }
            for (uint32_t i = lane; i < 3 * triangles; i += VR_WARP_SIZE)
                stash_map[start - first + i] = (uint16_t)(stash_used + s_map[i]);
            stash_used += fill; /* <= cap: see vr_warp_stash_cap */
        }
        for (uint32_t t0 = 0; t0 < triangles && !stashed; t0 += VR_WARP_SIZE) {
            const uint32_t t = t0 + lane;
            const int valid = t < triangles;
            const int l0 = valid ? s_map[3 * t + 0] : 0;
            const int l1 = valid ? s_map[3 * t + 1] : 0;
            const int l2 = valid ? s_map[3 * t + 2] : 0;
            const vr_shaded a = vr_shfl_shaded(shaded, l0);
            const vr_shaded b = vr_shfl_shaded(shaded, l1);
            const vr_shaded c = vr_shfl_shaded(shaded, l2);
            const uint32_t v0 = __shfl_sync(VR_FULL_MASK, my_vertex, l0);
            const uint32_t v1 = __shfl_sync(VR_FULL_MASK, my_vertex, l1);
            const uint32_t v2 = __shfl_sync(VR_FULL_MASK, my_vertex, l2);
            vr_emit_triangle(p, valid, start / 3 + t, a, b, c, v0, v1, v2);
        }
        __syncwarp();
        start += 3 * triangles;
    }
    if (stashed)
        vr_warp_emit_stashed(p, &cs, stash, stash_vertex, stash_map, first / 3, (end - first) / 3);
}

extern "C" vr_status vr_warp_run(const vr_reuse_params *p)
{
    vr_status st = vr_warp_validate(p);
    if (st != VR_OK)
        return st;
    const uint32_t batch = p->batch_indices;
    if (p->index_count == 0)
        return VR_OK;
    const uint32_t warps = vr_grid_blocks(p->index_count, batch);
    const int stashed = vr_queue_blockwise(p);
    uint32_t warps_per_block = p->block_size / VR_WARP_SIZE;
    if (stashed) {
        /* the stashes of a block's warps must fit its shared memory: with long batches
         * (4 KB of stash per 128 indices) a block holds fewer warps than --block asks. Each
         * warp still owns its batch and batches stay in warp order, so the queue is the same;
         * only the grouping of warps into blocks changes. */
        int device, max_optin;
        VR_CUDA_CHECK(cudaGetDevice(&device));
        VR_CUDA_CHECK(cudaDeviceGetAttribute(&max_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin,
                                             device));
        const size_t room = (size_t)max_optin - sizeof(vr_compact_shared);
        while (warps_per_block > 1 && vr_warp_shared_bytes(batch, warps_per_block, 1) > room)
            --warps_per_block;
        if (vr_warp_shared_bytes(batch, warps_per_block, 1) > room)
            return VR_ERROR(VR_ERR_ARG, "warp: one warp's stash for a %s queue needs %zu bytes of "
                            "shared memory, the GPU has %zu", vr_queue_mode_names[p->queue_mode],
                            vr_warp_shared_bytes(batch, 1, 1), room);
    }
    const uint32_t blocks = vr_grid_blocks(warps, warps_per_block);
    /* unstashed: up to 32 * (1536 + 128) B = 52 KiB (batch 1536, block 1024), past the 48 KiB a
     * launch gets without opting in; with a block-compacted queue the stashes as well */
    const size_t shared = vr_warp_shared_bytes(batch, warps_per_block, stashed);
    vr_reuse_params q;
    if ((st = vr_queue_launch_params(p, blocks, "warp", &q)) != VR_OK)
        return st;
    if (stashed) {
        VR_CUDA_CHECK(cudaFuncSetAttribute(vr_warp_kernel<1>,
                                           cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           (int)shared));
        vr_warp_kernel<1><<<blocks, warps_per_block * VR_WARP_SIZE, shared,
                            (cudaStream_t)p->stream>>>(q);
    } else {
        if (shared > 48u * 1024u)
            VR_CUDA_CHECK(cudaFuncSetAttribute(vr_warp_kernel<0>,
                                               cudaFuncAttributeMaxDynamicSharedMemorySize,
                                               (int)shared));
        vr_warp_kernel<0><<<blocks, p->block_size, shared, (cudaStream_t)p->stream>>>(q);
    }
    VR_LAUNCH_CHECK("vr_warp_kernel", (cudaStream_t)p->stream);
    return VR_OK;
}
