/* tile.cuh - the block-level steps that the stand-alone tile kernels share (compact.cu: ordered,
 * collate, atomic; histopyramid.cu: HistoPyramid compaction): a block of VR_COMPACT_BLOCK
 * threads ranks the kept elements of a tile of VR_COMPACT_TILE elements held as 4 rounds of one
 * uint4 per thread (round r, thread t: elements 1024 r + 4 t .. + 3), stages them in shared
 * memory in input order and writes them out with consecutive threads on consecutive words.
 *
 * Why staging (issue 11, ncu of the first H100 run): storing each kept element straight from
 * its thread makes every warp store instruction touch 4-5 sectors with one word in each
 * (a thread's kept elements are adjacent, its neighbours' are 4 elements away), so the tile's
 * output goes to L2 in about 4x the requests its bytes need; collate at 99% ran at 1.6 TB/s
 * against cub-if's 2.2. Staged, a warp stores 128 consecutive bytes per instruction, as CUB's
 * two-phase scatter does.
 *
 * Not part of the in-kernel API (compact.cuh): a batcher's queue entries are the batcher's own.
 */
#ifndef VR_COMPACT_TILE_CUH
#define VR_COMPACT_TILE_CUH

#include <stdint.h>

#include "pipeline/compact/compact.cuh"

#define VR_COMPACT_WARPS (VR_COMPACT_BLOCK / VR_WARP_SIZE)  /* 8 */
#define VR_COMPACT_ROUND (VR_COMPACT_BLOCK * VR_COMPACT_VEC) /* 1024 elements per round */
static_assert(VR_COMPACT_ROUNDS * VR_COMPACT_WARPS == VR_WARP_SIZE,
              "one warp scans the (round, warp) counts of a tile");
static_assert(VR_COMPACT_ROUND * VR_COMPACT_ROUNDS == VR_COMPACT_TILE, "tile shape");
static_assert(VR_WARP_SIZE * VR_COMPACT_VEC == 1u << VR_COMPACT_WARP_RUN_LOG2, "warp run");

/* Barrier of the VR_COMPACT_BLOCK threads that hold a tile (named barrier 1): in a block of
 * exactly those threads it is __syncthreads; the ordered select kernel (compact.cu) adds a
 * hand-off warp that never takes part in it. The non-aligned form (`barrier.sync`, not
 * `bar.sync`): the compiler does not know that inline assembly needs a converged warp, and an
 * aligned barrier reached by part of a warp counts the whole warp as arrived. */
#define VR_COMPACT_BAR_TILE 1
static __device__ __forceinline__ void vr_compact_tile_sync(void)
{
    asm volatile("barrier.sync %0, %1;" ::"n"(VR_COMPACT_BAR_TILE), "n"(VR_COMPACT_BLOCK)
                 : "memory");
}

/* The table of a tile's ranking (shared memory): the counts of the 32 (round, warp) pairs, then
 * their exclusive offsets in the tile, and the tile's total. */
typedef struct vr_compact_tile_table {
    uint32_t pair[VR_WARP_SIZE];
    uint32_t total;
} vr_compact_tile_table;

/* Keep mask of elements at..at+3 holding v: bit j set when at + j < n and v[j] < threshold. */
static __device__ __forceinline__ uint32_t vr_compact_keep4(const uint4 v, uint64_t at,
                                                            uint32_t n, uint64_t threshold)
{
    return (uint32_t)(at + 0 < n && v.x < threshold) |
           (uint32_t)(at + 1 < n && v.y < threshold) << 1 |
           (uint32_t)(at + 2 < n && v.z < threshold) << 2 |
           (uint32_t)(at + 3 < n && v.w < threshold) << 3;
}

/* The offsets in the tile of each round's kept elements of this thread (at[r]: of its first
 * one; the others follow it) and the tile's total, from the keep masks. Per round a warp scan
 * of popc(keep) (bit decomposition, 3 ballots), lane 0 enters the warp's count in the table at
 * round * 8 + warp, so the 32 pairs are in input order; warp 0 scans them. Every thread calls
 * it; two vr_compact_tile_sync (the table may be written again after a third). */
static __device__ __forceinline__ uint32_t
vr_compact_tile_rank(vr_compact_tile_table *t, const uint32_t keep[VR_COMPACT_ROUNDS],
                     uint32_t at[VR_COMPACT_ROUNDS])
{
    const uint32_t lane = threadIdx.x & (VR_WARP_SIZE - 1), warp = threadIdx.x / VR_WARP_SIZE;
#pragma unroll
    for (uint32_t r = 0; r < VR_COMPACT_ROUNDS; ++r) {
        uint32_t warp_total;
        at[r] = vr_compact_warp_scan((uint32_t)__popc(keep[r]), &warp_total);
        if (lane == 0)
            t->pair[r * VR_COMPACT_WARPS + warp] = warp_total;
    }
    vr_compact_tile_sync();
    if (warp == 0) {
        uint32_t total;
        t->pair[lane] = vr_compact_warp_scan(t->pair[lane], &total); /* each lane its own pair */
        if (lane == 0)
            t->total = total;
    }
    vr_compact_tile_sync();
#pragma unroll
    for (uint32_t r = 0; r < VR_COMPACT_ROUNDS; ++r)
        at[r] += t->pair[r * VR_COMPACT_WARPS + warp];
    return t->total;
}

/* The kept ones of the 4 elements v (keep mask) to dst[0], dst[1], ... in order. */
static __device__ __forceinline__ void vr_compact_put4(uint32_t *dst, const uint4 v, uint32_t keep)
{
    uint32_t i = 0;
    if (keep & 1u)
        dst[i++] = v.x;
    if (keep & 2u)
        dst[i++] = v.y;
    if (keep & 4u)
        dst[i++] = v.z;
    if (keep & 8u)
        dst[i] = v.w;
}

/* Each round's kept elements of this thread to staged + at[r] (shared memory, VR_COMPACT_TILE
 * words): the tile's kept elements in input order at 0..total-1. */
static __device__ __forceinline__ void vr_compact_tile_stage(uint32_t *staged,
                                                             const uint4 v[VR_COMPACT_ROUNDS],
                                                             const uint32_t keep[VR_COMPACT_ROUNDS],
                                                             const uint32_t at[VR_COMPACT_ROUNDS])
{
#pragma unroll
    for (uint32_t r = 0; r < VR_COMPACT_ROUNDS; ++r)
        vr_compact_put4(staged + at[r], v[r], keep[r]);
}

/* out[base + i] = staged[i] for i < count and base + i < capacity, thread t taking i = t,
 * t + 256, ...: each warp store covers 128 consecutive bytes. After a vr_compact_tile_sync that
 * follows the staging. */
static __device__ __forceinline__ void vr_compact_tile_store(uint32_t *out, const uint32_t *staged,
                                                             uint32_t base, uint32_t count,
                                                             uint32_t capacity)
{
    const uint32_t room = base < capacity ? capacity - base : 0u;
    const uint32_t end = room < count ? room : count;
    for (uint32_t i = threadIdx.x; i < end; i += VR_COMPACT_BLOCK)
        out[base + i] = staged[i];
}

#endif
