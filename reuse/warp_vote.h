/* warp_vote.h - the per-lane arithmetic of one loading step of warp voting (reuse/warp_round.cuh),
 * shared verbatim with its lane-emulating C model (tests/test_warp_vote.c), which checks it
 * against the sequential rule of reuse/warp_ref.c. A step maps a chunk of up to 32 indices onto
 * lanes with a handful of warp collectives instead of one ballot per index: (1) the kernel finds
 * the owner lane among the `fill` vertices held this round (a table in shared memory), (2)
 * __match_any_sync groups the not yet owned indices, the lowest lane of a group leads it, and
 * leaders take lanes fill + rank in lane order, writing their index into the table there, (3) the
 * first leader whose rank finds no free lane ends the round's loading there.
 * Between the collectives, every value below is a pure function of lane-local data and
 * warp-uniform masks; VR_HD is __host__ __device__ under nvcc and nothing in C. */
#ifndef VR_WARP_VOTE_H
#define VR_WARP_VOTE_H

#include <stdint.h>

#include "pipeline/hd.h"

#define VR_VOTE_LANES 32u
#define VR_VOTE_NONE 32u /* owner of an index whose vertex no lane holds yet */
/* Never a vertex id (ids are < vertex_count <= 2^32 - 1): the vertex of an empty lane and the
 * index of a lane past the chunk, so neither ever matches a loaded index. */
#define VR_VOTE_NO_VERTEX 0xffffffffu

/* Lanes below `lane` (0..31). */
VR_HD uint32_t vr_vote_below(uint32_t lane)
{
    return (1u << lane) - 1u;
}

/* (1) One step of the owner search: lane j holds vertex v (the table's entry j). Held vertices are
 * distinct, so at most one step matches. */
VR_HD uint32_t vr_vote_owner_step(uint32_t owner, uint32_t v, uint32_t incoming, uint32_t j)
{
    return v == incoming ? j : owner;
}

/* Whether this lane carries an index of the chunk whose vertex has no lane yet. */
VR_HD int vr_vote_fresh(uint32_t lane, uint32_t chunk, uint32_t owner)
{
    return lane < chunk && owner == VR_VOTE_NONE;
}

/* (2) Whether this lane leads its group (group = __match_any_sync over the incoming index):
 * the group's lowest lane, i.e. the index's first occurrence in the chunk. Equal indices share
 * freshness, so a fresh lane's group holds only fresh lanes. */
VR_HD int vr_vote_leads(int fresh, uint32_t group, uint32_t lane)
{
    return fresh && (group & vr_vote_below(lane)) == 0;
}

/* Rank of the group's leader among all leaders (leaders = ballot of vr_vote_leads): the
 * sequential rule hands out new lanes in first-occurrence order, so the leader of rank r gets
 * lane fill + r. Meaningful for fresh lanes only. */
VR_HD uint32_t vr_vote_rank(uint32_t leaders, uint32_t group)
{
    return vr_popc(leaders & vr_vote_below(vr_lowest_bit(group)));
}

/* (3) Whether this lane's index finds no lane: its group's leader ranks past the free lanes. */
VR_HD int vr_vote_blocked(int fresh, uint32_t rank, uint32_t fill)
{
    return fresh && rank >= VR_VOTE_LANES - fill;
}

/* Leading indices of the chunk that map (blocked = ballot of vr_vote_blocked): everything before
 * the first blocked lane, which is the leader of rank 32 - fill. Later lanes of a mapped group
 * come after their leader, so no lane before the first blocked one is blocked. */
VR_HD uint32_t vr_vote_mapped(uint32_t blocked, uint32_t chunk)
{
    return blocked ? vr_lowest_bit(blocked) : chunk;
}

/* New lanes this step fills: one per leader, at most the free ones. */
VR_HD uint32_t vr_vote_taken(uint32_t leaders, uint32_t fill)
{
    const uint32_t n = vr_popc(leaders);
    return n < VR_VOTE_LANES - fill ? n : VR_VOTE_LANES - fill;
}

/* Whether this lane's index is a new vertex that gets a lane this step: a leader whose rank finds
 * a free lane. It writes its index into the table at fill + rank; the claimed entries are
 * fill .. fill + taken - 1, one per leader of rank < 32 - fill. */
VR_HD int vr_vote_claims(int leads, uint32_t rank, uint32_t fill)
{
    return leads && rank < VR_VOTE_LANES - fill;
}

/* The lane that holds this lane's vertex after the step (valid for lanes < mapped). */
VR_HD uint32_t vr_vote_lane(int fresh, uint32_t owner, uint32_t fill, uint32_t rank)
{
    return fresh ? fill + rank : owner;
}

#endif
