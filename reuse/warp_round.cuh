/* warp_round.cuh - one loading round of warp voting (Kenzel et al. 2018, Algorithm 1, lines
 * 4-23), shared by the renderer's warp batcher (reuse/warp.cu) and the general reuse API's
 * (reuse/program.cuh). 32-index chunks of the warp's batch [start, end) are mapped onto lanes
 * while lanes are free. Each chunk is one vote step of warp_vote.h: the same lanes, map and stop
 * as the twin's per-index loop (reuse/warp_ref.c), in a scan of the held vertices, a match, two
 * ballots and a store per new vertex rather than 32 sequential rounds of shuffle + ballot + branch.
 * The round's vertices are kept in a per-warp table in shared memory, not in lane registers: the
 * scan reads four of them per broadcast load (it was four shuffles), and a leader writes its
 * vertex straight into its lane's entry (it was a bit search for the leader of each rank and a
 * shuffle). H100, simple load, block 64 (session 44): warp 0.91-1.01x of its time before on the
 * small meshes (horse 16.5 -> 15.1 us), heavy sphere:7M 0.95x. A whole round made in one pass
 * over a hashed slot table (with this table: 32% fewer instructions than before either) ran
 * slower: these kernels are latency-bound, so what counts is a round's critical path, not its
 * instruction count (bench/results/geometry-h100.md, session 44).
 */
#ifndef VR_WARP_ROUND_CUH
#define VR_WARP_ROUND_CUH

#include "reuse/stage.cuh"
#include "reuse/warp_vote.h"

/* Shared bytes of a warp's table of held vertices (vr_warp_load_round's s_held; 16-byte
 * aligned). */
#define VR_WARP_HELD_BYTES (VR_WARP_SIZE * sizeof(uint32_t))

/* All 32 lanes call it (start < end). s_held: the warp's table of VR_WARP_HELD_BYTES, 16-byte
 * aligned, free on entry (overwritten). Out: *my_vertex, the element this lane holds
 * (VR_VOTE_NO_VERTEX for lanes >= *fill); *fill, lanes holding one; *done, leading indices of
 * [start, end) mapped this round, s_map[0 .. *done) their lanes. The caller __syncwarp()s
 * before reading s_map. */
static __device__ __forceinline__ void vr_warp_load_round(const uint32_t *indices, uint32_t start,
                                                          uint32_t end, uint32_t lane,
                                                          uint8_t *s_map, uint32_t *s_held,
                                                          uint32_t *my_vertex_out,
                                                          uint32_t *fill_out, uint32_t *done_out)
{
    uint32_t fill = 0, done = 0;
    /* entries past `fill` hold VR_VOTE_NO_VERTEX, which equals no loaded index: the scan reads
     * them in its last group of four */
    s_held[lane] = VR_VOTE_NO_VERTEX;
    __syncwarp();
    const uint4 *const held4 = reinterpret_cast<const uint4 *>(s_held);
    uint32_t incoming = lane < end - start ? __ldg(indices + start + lane) : VR_VOTE_NO_VERTEX;
    for (uint32_t offset = start;;) {
        const uint32_t left = end - offset; /* >= 1; no offset + 32 that could wrap */
        const uint32_t chunk = min(left, (uint32_t)VR_WARP_SIZE);
        /* the next chunk's load is issued before this chunk's vote, so a round waits for one
         * load, not one per chunk. A round that fills up wastes it. H100 (bench/NOTES.md,
         * session 39): sphere:7M simple load -2.3%, compute-bound loads +0.5% (its
         * instructions); Loop on the file-order bunny +6%, not understood (prefetching only
         * into rounds under half full changed nothing) */
        const uint32_t next = left > VR_WARP_SIZE && lane < left - VR_WARP_SIZE
                                  ? __ldg(indices + offset + VR_WARP_SIZE + lane)
                                  : VR_VOTE_NO_VERTEX;
        /* (1) owner among the round's held vertices, 4 per broadcast load (fill <= 32) */
        uint32_t owner = VR_VOTE_NONE;
        for (uint32_t j = 0; j < fill; j += 4) {
            const uint4 h = held4[j / 4];
            owner = vr_vote_owner_step(owner, h.x, incoming, j + 0);
            owner = vr_vote_owner_step(owner, h.y, incoming, j + 1);
            owner = vr_vote_owner_step(owner, h.z, incoming, j + 2);
            owner = vr_vote_owner_step(owner, h.w, incoming, j + 3);
        }
        /* (2) group equal indices; leaders take lanes fill + rank */
        const uint32_t group = __match_any_sync(VR_FULL_MASK, incoming);
        const int fresh = vr_vote_fresh(lane, chunk, owner);
        const int leads = vr_vote_leads(fresh, group, lane);
        const uint32_t leaders = __ballot_sync(VR_FULL_MASK, leads);
        const uint32_t rank = vr_vote_rank(leaders, group);
        /* (3) warp full: the first leader without a free lane opens the next round */
        const uint32_t blocked = __ballot_sync(VR_FULL_MASK, vr_vote_blocked(fresh, rank, fill));
        const uint32_t mapped = vr_vote_mapped(blocked, chunk);
        if (vr_vote_claims(leads, rank, fill))
            s_held[fill + rank] = incoming;
        if (lane < mapped)
            s_map[done + lane] = (uint8_t)vr_vote_lane(fresh, owner, fill, rank);
        done += mapped;
        fill += vr_vote_taken(leaders, fill);
        __syncwarp(); /* the claims seen by the next scan and by the read below */
        if (fill == VR_WARP_SIZE || left <= VR_WARP_SIZE)
            break;
        offset += VR_WARP_SIZE, incoming = next;
    }
    *my_vertex_out = s_held[lane];
    *fill_out = fill;
    *done_out = done;
}

#endif
