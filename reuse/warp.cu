/* warp.cu - statically batched warp voting (Kenzel et al. 2018, Sec. 3.3, Algorithm 1): one warp
 * per static batch of batch_indices indices. In rounds, the warp deduplicates indices (per
 * 32-index chunk one vote step of warp_vote.h: shuffles, a match, two ballots) so that each lane
 * owns one distinct vertex, shades once per lane, and assembles triangles by shuffling the shaded
 * results; an inverse map in shared memory tells each triangle corner which lane holds it.
 * CPU twin (same rounds, same counts): warp_ref.c; the vote step's lane model:
 * tests/test_warp_vote.c.
 * Try: `vreuse_tests gpu/`, `vreuse bench --strategy warp`.
 */
#include "reuse/ref_common.h"
#include "reuse/stage.cuh"
#include "reuse/warp_vote.h"

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

/* Thread mapping: warp w of the grid owns indices [w * B, min((w + 1) * B, index_count)),
 * B = p.batch_indices; in a round, lane l owns the l-th distinct vertex met (my_vertex).
 * Shared: s_map, B bytes per warp (dynamic): index position - round start -> owning lane.
 * Syncs: __syncwarp after the map is written (assembly reads other lanes' entries) and after
 * assembly (the next round overwrites the map). Invariant: start, end, fill, done and the loop
 * bounds are warp-uniform, so every shuffle, match and ballot runs with all 32 lanes (full mask). */
static __global__ void __launch_bounds__(1024) vr_warp_kernel(vr_reuse_params p)
{
    extern __shared__ uint8_t s_map_block[];
    const uint32_t lane = threadIdx.x & (VR_WARP_SIZE - 1);
    const uint32_t warp = threadIdx.x / VR_WARP_SIZE;
    uint8_t *s_map = s_map_block + warp * p.batch_indices;
    const uint64_t begin =
        ((uint64_t)blockIdx.x * (blockDim.x / VR_WARP_SIZE) + warp) * p.batch_indices;
    if (begin >= p.index_count)
        return; /* the whole warp leaves: past the last batch */
    const uint32_t end = (uint32_t)min(begin + p.batch_indices, (uint64_t)p.index_count);

    for (uint32_t start = (uint32_t)begin; start < end;) {
        /* loading (Algorithm 1, lines 4-23): 32-index chunks while lanes are free. Each chunk
         * is one vote step of warp_vote.h: the same lanes, map and stop as the twin's per-index
         * loop, in `fill` shuffles, a match, two ballots and one more shuffle rather than 32
         * sequential rounds of shuffle + ballot + branch. */
        uint32_t my_vertex = VR_VOTE_NO_VERTEX;
        uint32_t fill = 0, done = 0;
        for (uint32_t offset = start;;) {
            const uint32_t chunk = min(end - offset, (uint32_t)VR_WARP_SIZE);
            const uint32_t incoming =
                lane < chunk ? __ldg(p.indices + offset + lane) : VR_VOTE_NO_VERTEX;
            /* (1) owner among this round's lanes, 4 per step: lanes >= fill hold
             * VR_VOTE_NO_VERTEX, which equals no loaded index, and fill <= 32 keeps j + 3 <= 31 */
            uint32_t owner = VR_VOTE_NONE;
            for (uint32_t j = 0; j < fill; j += 4) {
                const uint32_t v0 = __shfl_sync(VR_FULL_MASK, my_vertex, j + 0);
                const uint32_t v1 = __shfl_sync(VR_FULL_MASK, my_vertex, j + 1);
                const uint32_t v2 = __shfl_sync(VR_FULL_MASK, my_vertex, j + 2);
                const uint32_t v3 = __shfl_sync(VR_FULL_MASK, my_vertex, j + 3);
                owner = vr_vote_owner_step(owner, v0, incoming, j + 0);
                owner = vr_vote_owner_step(owner, v1, incoming, j + 1);
                owner = vr_vote_owner_step(owner, v2, incoming, j + 2);
                owner = vr_vote_owner_step(owner, v3, incoming, j + 3);
            }
            /* (2) group equal indices; leaders take lanes fill + rank */
            const uint32_t group = __match_any_sync(VR_FULL_MASK, incoming);
            const int fresh = vr_vote_fresh(lane, chunk, owner);
            const uint32_t leaders =
                __ballot_sync(VR_FULL_MASK, vr_vote_leads(fresh, group, lane));
            const uint32_t rank = vr_vote_rank(leaders, group);
            /* (3) warp full: the first leader without a free lane opens the next round */
            const uint32_t blocked =
                __ballot_sync(VR_FULL_MASK, vr_vote_blocked(fresh, rank, fill));
            const uint32_t mapped = vr_vote_mapped(blocked, chunk);
            const uint32_t taken = vr_vote_taken(leaders, fill);
            const uint32_t newcomer =
                __shfl_sync(VR_FULL_MASK, incoming, vr_vote_source(leaders, fill, lane));
            if (vr_vote_gains(lane, fill, taken))
                my_vertex = newcomer;
            if (lane < mapped)
                s_map[done + lane] = (uint8_t)vr_vote_lane(fresh, owner, fill, rank);
            done += mapped;
            fill += taken;
            if (fill == VR_WARP_SIZE || end - offset <= VR_WARP_SIZE)
                break;
            offset += VR_WARP_SIZE;
        }
        __syncwarp();

        /* shading: one invocation per filled lane, including corners of a trailing incomplete
         * triangle, whose results are dropped (the paper's "early shading results") */
        vr_shaded shaded = {};
        if (lane < fill)
            shaded = vr_shade_vertex(p, my_vertex);

        /* assembly: lane l takes triangles l, l + 32, ... of the round (more than 32 only when
         * B > 96 and indices repeat a lot) */
        const uint32_t triangles = done / 3;
        for (uint32_t t0 = 0; t0 < triangles; t0 += VR_WARP_SIZE) {
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
    const uint32_t warps_per_block = p->block_size / VR_WARP_SIZE;
    const uint32_t blocks = vr_grid_blocks(warps, warps_per_block);
    const size_t shared = (size_t)warps_per_block * batch; /* <= 32 * 1536 = 48 KiB */
    vr_warp_kernel<<<blocks, p->block_size, shared, (cudaStream_t)p->stream>>>(*p);
    VR_LAUNCH_CHECK("vr_warp_kernel", (cudaStream_t)p->stream);
    return VR_OK;
}
