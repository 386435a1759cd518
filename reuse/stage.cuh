/* stage.cuh - device helpers every GPU batcher shares: checked CUDA calls, vertex fetch +
 * shade + counting, and triangle emission into the queue: warp-staged (a whole warp's 32
 * consecutive slots transposed by shuffles so every store instruction writes 512 contiguous
 * bytes), direct (each lane its own slot), or in-kernel compaction when culling
 * (pipeline/compact/compact.cuh: InK-Compact in input order, InK-Collate, or one atomicAdd per
 * warp, as vr_reuse_params.queue_mode says). Included by the reuse/ .cu files and
 * bench/queue_bench.cu; the CPU twins use reuse/ref_common.h for the same steps. */
#ifndef VR_STAGE_CUH
#define VR_STAGE_CUH

#include <cuda_runtime.h>

#include "pipeline/compact/compact.cuh"
#include "pipeline/vr_check.h"
#include "reuse/reuse.h"


#define VR_WARP_SIZE 32
#define VR_FULL_MASK 0xffffffffu

/* Blocks of `block` threads that cover n items (64-bit sum: n may be close to 2^32). */
static inline uint32_t vr_grid_blocks(uint32_t n, uint32_t block)
{
    return (uint32_t)(((uint64_t)n + block - 1) / block);
}

/* The queue in device memory (host code: the geometry stage writes one, raster/'s device frame
 * keeps a copy). Allocates the four arrays of `triangles` slots and sets the capacity; on
 * failure the arrays allocated so far stay set for vr_queue_device_free. */
static inline vr_status vr_queue_device_alloc(vr_queue *q, uint32_t triangles)
{
    const size_t t = triangles;
    vr_status st;
    if ((st = vr_cuda_alloc((void **)&q->clip, t * VR_QUEUE_CLIP_FLOATS * sizeof(float),
                            "queue clip")) ||
        (st = vr_cuda_alloc((void **)&q->normal, t * VR_QUEUE_NORMAL_FLOATS * sizeof(float),
                            "queue normal")) ||
        (st = vr_cuda_alloc((void **)&q->vertex, t * VR_QUEUE_VERTEX_IDS * sizeof(uint32_t),
                            "queue vertex")) ||
        (st = vr_cuda_alloc((void **)&q->tri_id, t * sizeof(uint32_t), "queue tri_id")))
        return st;
    q->capacity = triangles;
    return VR_OK;
}

/* Teardown (vr_cuda_free_all: errors cannot be acted on here). */
static inline void vr_queue_device_free(vr_queue *q)
{
    void *const bufs[] = {q->clip, q->normal, q->vertex, q->tri_id};
    vr_cuda_free_all(bufs, VR_COUNT_OF(bufs));
}

/* Whether a run compacts its queue per block (culling into an ink or collate queue): then its
 * kernels are the QB = 1 instances (below: "block-compacted queue"). */
static inline int vr_queue_blockwise(const vr_reuse_params *p)
{
    return p->cull && (p->queue_mode == VR_QUEUE_INK || p->queue_mode == VR_QUEUE_COLLATE);
}

/* Whether a run writes a staging queue and keys for a separate compaction (culling into a cub
 * or hp queue): the QB = 0 kernels, every triangle stored at its unculled slot. */
static inline int vr_queue_keyed(const vr_reuse_params *p)
{
    return p->cull && (p->queue_mode == VR_QUEUE_CUB || p->queue_mode == VR_QUEUE_HP);
}

/* Host side of a block-compacted launch of `blocks` blocks: a copy of *p whose queue_dev is a
 * new epoch of p->queue_state, or *p unchanged when the queue is not block-compacted (no
 * culling, or queue mode atomic, cub or hp); queue_keys cleared unless the mode is keyed.
 * VR_ERR_ARG naming `who` when the state (or the keys) are missing or the state holds fewer
 * blocks. */
static inline vr_status vr_queue_launch_params(const vr_reuse_params *p, uint32_t blocks,
                                               const char *who, vr_reuse_params *out)
{
    *out = *p;
    if (!vr_queue_keyed(p))
        out->queue_keys = NULL; /* the kernels take the keyed path when they see keys */
    else if (!p->queue_keys)
        return VR_ERROR(VR_ERR_ARG, "%s: culling into a %s queue needs its keys "
                        "(vr_reuse_params.queue_keys; the geometry stage provides them)", who,
                        vr_queue_mode_names[p->queue_mode]);
    if (!vr_queue_blockwise(p))
        return VR_OK;
    if (!p->queue_state)
        return VR_ERROR(VR_ERR_ARG, "%s: culling into a %s queue needs a compaction state "
                        "(vr_reuse_params.queue_state)", who, vr_queue_mode_names[p->queue_mode]);
    return vr_compact_state_next(p->queue_state, blocks, &out->queue_dev);
}

/* Fetches vertex v, runs the vertex shader, and in counting mode counts the invocation
 * (global counter and per-vertex count). Every call is one vertex-shader invocation. */
static __device__ __forceinline__ vr_shaded vr_shade_vertex(const vr_reuse_params &p, uint32_t v)
{
    float pos[3], nrm[3];
    pos[0] = __ldg(p.positions + 3 * v + 0);
    pos[1] = __ldg(p.positions + 3 * v + 1);
    pos[2] = __ldg(p.positions + 3 * v + 2);
    nrm[0] = __ldg(p.normals + 3 * v + 0);
    nrm[1] = __ldg(p.normals + 3 * v + 1);
    nrm[2] = __ldg(p.normals + 3 * v + 2);
    vr_shaded s;
    vr_shade(&p.shader, pos, nrm, &s);
    if (p.count) {
        atomicAdd(&p.counters->invocations, 1ull);
        if (p.shade_counts)
            atomicAdd(p.shade_counts + v, 1u);
    }
    return s;
}

static __device__ __forceinline__ void vr_store_corner(const vr_queue &q, uint32_t slot, int k,
                                                       const vr_shaded &s, uint32_t vertex)
{
    float4 *clip = reinterpret_cast<float4 *>(q.clip);
    float4 *normal = reinterpret_cast<float4 *>(q.normal);
    clip[3 * slot + k] = make_float4(s.clip[0], s.clip[1], s.clip[2], s.clip[3]);
    normal[3 * slot + k] = make_float4(s.normal[0], s.normal[1], s.normal[2], 0.0f);
    q.vertex[3 * slot + k] = vertex;
}

/* ---- warp-staged queue stores --------------------------------------------------------------
 * A warp's 32 triangles in slots base..base+31 occupy 96 consecutive float4 of clip (and of
 * normal) and 96 consecutive words of vertex ids. Stored directly, lane l writes elements
 * 3l + k (k = corner): each store instruction covers 32 elements spread over 96, so it touches
 * twice the 32-byte sectors it fills and L2 has to merge three partial writes per sector.
 * Staged, store instruction j (0..2) writes elements 32j + l: 512 contiguous bytes for float4.
 * Element q = 32j + l is corner k = q mod 3 = (l - j) mod 3 (32 = -1 mod 3) of the warp's
 * triangle q / 3. So lane l needs, for store j, corner (l - j) mod 3 of lane (32j + l) / 3; as
 * j runs over 0..2 that corner index runs over 0..2 too. Hence one shuffle per corner register
 * (a static register: corner i is fetched from lane (32 j_i + l) / 3 with j_i = (l - i) mod 3)
 * and a per-lane selection afterwards: 3 shuffles per component instead of 9, no shared memory
 * and no __syncwarp (Catanzaro et al. 2014's decomposition of the stride-3 transposition). */

/* Per-lane plan of the transposition; pick[] is its own inverse: pick[i] is both the store
 * that corner i's shuffle serves and the corner that store j takes (see above). */
typedef struct vr_warp_xpose {
    uint32_t src[3];  /* corner i is shuffled from lane src[i] */
    uint32_t pick[3]; /* store j takes the result of corner pick[j]'s shuffle */
    uint32_t tri[3];  /* warp-local triangle that store j writes (tested against the valid mask) */
} vr_warp_xpose;

static __device__ __forceinline__ vr_warp_xpose vr_warp_xpose_plan(uint32_t lane)
{
    vr_warp_xpose x;
    const uint32_t r = lane % 3;
    for (int j = 0; j < 3; ++j) {
        x.pick[j] = (r + 3 - j) % 3;
        x.tri[j] = (VR_WARP_SIZE * j + lane) / 3;
    }
    for (int i = 0; i < 3; ++i) /* = x.tri[x.pick[i]], without a dynamically indexed array */
        x.src[i] = (VR_WARP_SIZE * x.pick[i] + lane) / 3;
    return x;
}

/* %laneid read with volatile asm: the plan below is then recomputed where it is used instead of
 * being hoisted out of the batchers' assembly loops, where its 9 values would stay live across
 * the whole loop (hash and phash have 32 registers). */
static __device__ __forceinline__ uint32_t vr_lane_id(void)
{
    uint32_t lane;
    asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
    return lane;
}

template <typename T>
static __device__ __forceinline__ T vr_pick3(T t0, T t1, T t2, uint32_t i)
{
    return i == 0 ? t0 : (i == 1 ? t1 : t2);
}

/* One component (or id) of the three corners, v[k] = corner k of this lane's triangle, into
 * o[j] = the value of element 32j + lane. All 32 lanes must call (full-mask shuffles). */
template <typename T>
static __device__ __forceinline__ void vr_warp_xpose3(const vr_warp_xpose &x, T v0, T v1, T v2,
                                                      T o[3])
{
    const T t0 = __shfl_sync(VR_FULL_MASK, v0, x.src[0]);
    const T t1 = __shfl_sync(VR_FULL_MASK, v1, x.src[1]);
    const T t2 = __shfl_sync(VR_FULL_MASK, v2, x.src[2]);
    for (int j = 0; j < 3; ++j)
        o[j] = vr_pick3(t0, t1, t2, x.pick[j]);
}

/* The staged store of a converged warp whose valid lanes hold slots base + lane (`valid_mask`
 * from a full ballot, nonzero). Lanes without a triangle supply don't-care corners; elements of
 * their slots are not written. Same bytes as vr_store_corner x 3 + tri_id, other instructions. */
static __device__ __forceinline__ void vr_store_warp(const vr_queue &q, uint32_t base,
                                                     unsigned valid_mask, uint32_t tri,
                                                     const vr_shaded &a, const vr_shaded &b,
                                                     const vr_shaded &c, uint32_t va, uint32_t vb,
                                                     uint32_t vc)
{
    const uint32_t lane = vr_lane_id();
    const vr_warp_xpose x = vr_warp_xpose_plan(lane);
    int write[3];
    for (int j = 0; j < 3; ++j)
        write[j] = (valid_mask >> x.tri[j]) & 1u;
    const size_t first = (size_t)3 * base; /* the warp's first element */

    /* clip, normals, ids: of the orders tried this one needs the fewest registers in naive and
     * multi (52) and keeps warp (64, its launch bound's cap) free of spills */
    float ox[3], oy[3], oz[3], ow[3];
    float4 *clip = reinterpret_cast<float4 *>(q.clip) + first;
    vr_warp_xpose3(x, a.clip[0], b.clip[0], c.clip[0], ox);
    vr_warp_xpose3(x, a.clip[1], b.clip[1], c.clip[1], oy);
    vr_warp_xpose3(x, a.clip[2], b.clip[2], c.clip[2], oz);
    vr_warp_xpose3(x, a.clip[3], b.clip[3], c.clip[3], ow);
    for (int j = 0; j < 3; ++j)
        if (write[j])
            clip[VR_WARP_SIZE * j + lane] = make_float4(ox[j], oy[j], oz[j], ow[j]);
    float4 *normal = reinterpret_cast<float4 *>(q.normal) + first;
    vr_warp_xpose3(x, a.normal[0], b.normal[0], c.normal[0], ox);
    vr_warp_xpose3(x, a.normal[1], b.normal[1], c.normal[1], oy);
    vr_warp_xpose3(x, a.normal[2], b.normal[2], c.normal[2], oz);
    for (int j = 0; j < 3; ++j)
        if (write[j])
            normal[VR_WARP_SIZE * j + lane] = make_float4(ox[j], oy[j], oz[j], 0.0f);
    if ((valid_mask >> lane) & 1u)
        q.tri_id[base + lane] = tri; /* already one coalesced 128-byte store */
    uint32_t ov[3];
    vr_warp_xpose3(x, va, vb, vc, ov);
    for (int j = 0; j < 3; ++j)
        if (write[j])
            q.vertex[first + VR_WARP_SIZE * j + lane] = ov[j];
}

/* The staged store when the corners live in shared memory (the dynamic batchers assemble from
 * their block's table of shaded vertices): only the corners' 32-bit shared addresses are
 * transposed (3 shuffles instead of 21), each lane then reads its element's corner itself.
 * Same bytes and same stores as vr_store_warp, far fewer live registers (hash and phash run at
 * 32 and would spill with vr_store_warp). The load is volatile asm so that it is never moved
 * or merged across the batcher's __syncthreads that published the shaded vertices. */
static __device__ __forceinline__ float vr_lds(uint32_t addr)
{
    float v;
    asm volatile("ld.shared.f32 %0, [%1];" : "=f"(v) : "r"(addr));
    return v;
}

static __device__ __forceinline__ void vr_store_warp_shared(const vr_queue &q, uint32_t base,
                                                            unsigned valid_mask, uint32_t tri,
                                                            uint32_t sa, uint32_t sb, uint32_t sc,
                                                            uint32_t va, uint32_t vb, uint32_t vc)
{
    const uint32_t lane = vr_lane_id();
    const vr_warp_xpose x = vr_warp_xpose_plan(lane);
    const size_t first = (size_t)3 * base;
    uint32_t corner[3];
    vr_warp_xpose3(x, sa, sb, sc, corner);
    float4 *clip = reinterpret_cast<float4 *>(q.clip) + first;
    float4 *normal = reinterpret_cast<float4 *>(q.normal) + first;
    for (int j = 0; j < 3; ++j) {
        if (!((valid_mask >> x.tri[j]) & 1u))
            continue;
        const size_t e = VR_WARP_SIZE * j + lane;
        const uint32_t s = corner[j]; /* vr_shaded: clip[4], then normal[3] */
        clip[e] = make_float4(vr_lds(s), vr_lds(s + 4), vr_lds(s + 8), vr_lds(s + 12));
        normal[e] = make_float4(vr_lds(s + 16), vr_lds(s + 20), vr_lds(s + 24), 0.0f);
    }
    uint32_t ov[3];
    vr_warp_xpose3(x, va, vb, vc, ov);
    for (int j = 0; j < 3; ++j)
        if ((valid_mask >> x.tri[j]) & 1u)
            q.vertex[first + VR_WARP_SIZE * j + lane] = ov[j];
    if ((valid_mask >> lane) & 1u)
        q.tri_id[base + lane] = tri;
}

/* Adds the calling lanes' cull reasons to counters->culled: per reason one ballot, one
 * atomicAdd by the lowest active lane when any lane has it. */
static __device__ __forceinline__ void vr_count_culled(const vr_reuse_params &p, vr_cull_reason why)
{
    const unsigned active = __activemask();
    const int leader = __ffs(active) - 1;
    for (int r = VR_CULL_KEPT + 1; r < VR_CULL_TRIANGLE_REASONS; ++r) { /* never CLUSTER */
        const unsigned ballot = __ballot_sync(active, why == r);
        if (ballot && (int)(threadIdx.x & (VR_WARP_SIZE - 1)) == leader)
            atomicAdd(&p.counters->culled[r], (uint32_t)__popc(ballot));
    }
}

/* ---- block-compacted queue (cull with queue mode ink or collate) ---------------------------
 * A kernel whose block emits a contiguous run of triangles in rounds (naive, multi's assembly,
 * the dynamic batchers) compacts them as a block: every thread calls vr_queue_block_begin first
 * (the block's work item: its ticket under ink, so that earlier tickets take earlier triangles -
 * the order the compaction keeps, and the reason it cannot deadlock, see compact.cuh), then
 * runs its emission rounds twice: pass 0 ranks the survivors (vr_queue_block_rank, counting
 * cull reasons), vr_queue_block_base learns the block's first slot (ordered look-back or one
 * atomicAdd), pass 1 ranks again - the same classification, so the same ranks - and stores at
 * base + rank; vr_queue_block_end last. A block with nothing to emit (a rejected batch) still
 * takes part through vr_queue_block_skip, or the blocks after it would wait for its count.
 * Re-ranking costs a few ballots per round and the classification reads the corners again;
 * keeping the shaded corners instead would cost the registers or shared memory the batchers
 * need for occupancy. All of it runs only when culling with these modes, and each kernel is
 * compiled twice, its template parameter QB (`qb` here) 1 for such a queue and 0 otherwise, so
 * the other paths keep their registers: the host picks with vr_queue_blockwise (above). */
static __device__ __forceinline__ uint32_t vr_queue_block_begin(const vr_reuse_params &p,
                                                                vr_compact_shared *cs, int qb)
{
    if (!qb)
        return blockIdx.x;
    const uint32_t ticket = vr_compact_begin(p.queue_dev, cs);
    return p.queue_mode == VR_QUEUE_INK ? ticket : blockIdx.x;
}

/* The rank of this thread's triangle among the block's survivors so far (every thread calls
 * it, `valid` 0 without a triangle); *keep says whether it survives. Pass 0 also counts the
 * reasons of the dropped ones. */
static __device__ __forceinline__ uint32_t vr_queue_block_rank(const vr_reuse_params &p,
                                                               vr_compact_shared *cs, int pass,
                                                               int valid, const vr_shaded &a,
                                                               const vr_shaded &b,
                                                               const vr_shaded &c, int *keep)
{
    const vr_cull_reason why = valid ? vr_cull_classify(&a, &b, &c, p.two_sided) : VR_CULL_KEPT;
    *keep = valid && why == VR_CULL_KEPT;
    if (pass == 0)
        vr_count_culled(p, why);
    return vr_compact_block_rank(cs, (uint32_t)*keep);
}

/* After pass 0: the block's first slot; counts its survivors in queue_count (one atomicAdd)
 * and restarts the block's ranking for pass 1. Every thread calls it. */
static __device__ __forceinline__ uint32_t vr_queue_block_base(const vr_reuse_params &p,
                                                               vr_compact_shared *cs)
{
    const uint32_t base = p.queue_mode == VR_QUEUE_INK ? vr_compact_ordered_base(p.queue_dev, cs)
                                                       : vr_compact_collate_base(p.queue_dev, cs);
    if (threadIdx.x == 0 && cs->total)
        atomicAdd(&p.counters->queue_count, cs->total);
    __syncthreads(); /* every thread has read the shared base and total */
    if (threadIdx.x == 0)
        cs->total = 0; /* pass 1's first rank reads it after a __syncthreads */
    return base;
}

/* Pass 1's store of a survivor at `slot` (past the capacity: counted as overflow). */
static __device__ __forceinline__ void vr_queue_block_store(const vr_reuse_params &p, uint32_t slot,
                                                            uint32_t tri, const vr_shaded &a,
                                                            const vr_shaded &b, const vr_shaded &c,
                                                            uint32_t va, uint32_t vb, uint32_t vc)
{
    if (slot >= p.queue.capacity) {
        atomicAdd(&p.counters->overflow, 1u);
        return;
    }
    vr_store_corner(p.queue, slot, 0, a, va);
    vr_store_corner(p.queue, slot, 1, b, vb);
    vr_store_corner(p.queue, slot, 2, c, vc);
    p.queue.tri_id[slot] = tri;
}

static __device__ __forceinline__ void vr_queue_block_end(const vr_reuse_params &p, int qb)
{
    if (qb)
        vr_compact_end(p.queue_dev);
}

/* A block that emits nothing: publishes a count of 0 and ends. Every thread calls it. */
static __device__ __forceinline__ void vr_queue_block_skip(const vr_reuse_params &p,
                                                           vr_compact_shared *cs, int qb)
{
    if (!qb)
        return;
    (void)vr_queue_block_base(p, cs);
    vr_compact_end(p.queue_dev);
}

/* One round's triangle of a single-round kernel (naive, multi): emits it by the queue mode,
 * block-compacted or not. Every thread of the block calls it when blockwise. */
static __device__ __forceinline__ void vr_emit_triangle_at(const vr_reuse_params &p, int valid,
                                                           uint32_t pos, uint32_t id,
                                                           const vr_shaded &a, const vr_shaded &b,
                                                           const vr_shaded &c, uint32_t va,
                                                           uint32_t vb, uint32_t vc);
static __device__ __forceinline__ void vr_emit_triangle(const vr_reuse_params &p, int valid, uint32_t tri,
                                                        const vr_shaded &a, const vr_shaded &b,
                                                        const vr_shaded &c, uint32_t va, uint32_t vb,
                                                        uint32_t vc)
{
    vr_emit_triangle_at(p, valid, tri, tri, a, b, c, va, vb, vc);
}
static __device__ __forceinline__ void vr_emit_single_round(const vr_reuse_params &p,
                                                            vr_compact_shared *cs, int qb, int valid,
                                                            uint32_t tri, const vr_shaded &a,
                                                            const vr_shaded &b, const vr_shaded &c,
                                                            uint32_t va, uint32_t vb, uint32_t vc)
{
    if (!qb) {
        vr_emit_triangle(p, valid, tri, a, b, c, va, vb, vc);
        return;
    }
    int keep;
    const uint32_t rank = vr_queue_block_rank(p, cs, 0, valid, a, b, c, &keep);
    const uint32_t base = vr_queue_block_base(p, cs);
    if (keep)
        vr_queue_block_store(p, base + rank, tri, a, b, c, va, vb, vc);
    vr_compact_end(p.queue_dev);
}

/* Writes the triangle at stream position `pos` (vertices a, b, c with ids va, vb, vc; source
 * id `id`, its tri_id: the position itself but for a static plan's) to the queue; vr_emit_triangle
 * is the call with pos = id. Without culling the slot is the position: no atomics,
 * deterministic, and consecutive lanes fill consecutive slots even for a plan (its
 * permutation only shows in tri_id; slot = source id would scatter a randomly ordered mesh's
 * stores over the whole queue). With culling, the lanes that are
 * active here and keep their triangle are compacted: one atomicAdd per warp reserves
 * popc(keep mask) slots, each lane takes base + its rank. `valid` = 0 lets a lane take part
 * in the vote without a triangle. With keys (culling into a cub or hp queue) the lane writes
 * its position's key and the triangle is stored as without culling, at slot = pos.
 * Without culling and with p.queue_store != 0, a call reached by all 32 lanes whose valid lanes
 * hold pos = base + lane (every batcher's assembly loop: consecutive lanes take consecutive
 * triangles) stores warp-staged (vr_store_warp, or vr_store_warp_shared when the corners are
 * references into shared memory, as in reuse/dyn_common.cuh); any other warp - partial,
 * diverged, or slots not base + lane - falls back to the direct per-lane stores. The queue's
 * bytes are the same either way; a partial warp must not be mistaken for a whole one, hence the
 * __activemask test before the full-mask votes (they then only see lanes known to be here). */
static __device__ __forceinline__ void vr_emit_triangle_at(const vr_reuse_params &p, int valid,
                                                           uint32_t pos, uint32_t id,
                                                           const vr_shaded &a, const vr_shaded &b,
                                                           const vr_shaded &c, uint32_t va,
                                                           uint32_t vb, uint32_t vc)
{
    uint32_t slot = pos;
    if (p.cull && p.queue_keys) { /* keyed (cub, hp): a key per triangle, all of them stored */
        const vr_cull_reason why = valid ? vr_cull_classify(&a, &b, &c, p.two_sided) : VR_CULL_KEPT;
        vr_count_culled(p, why);
        if (valid)
            p.queue_keys[pos] = why == VR_CULL_KEPT ? pos : VR_QUEUE_KEY_DROPPED;
    }
    if (p.cull && !p.queue_keys) {
        const vr_cull_reason why = valid ? vr_cull_classify(&a, &b, &c, p.two_sided) : VR_CULL_KEPT;
        const int keep = valid && why == VR_CULL_KEPT;
        vr_count_culled(p, why);
        unsigned active = __activemask();
        unsigned ballot = __ballot_sync(active, keep);
        int lane = threadIdx.x & (VR_WARP_SIZE - 1);
        int leader = __ffs(active) - 1;
        uint32_t base = 0;
        if (lane == leader && ballot)
            base = atomicAdd(&p.counters->queue_count, (uint32_t)__popc(ballot));
        base = __shfl_sync(active, base, leader);
        if (!keep)
            return;
        slot = base + __popc(ballot & ((1u << lane) - 1u));
        if (slot >= p.queue.capacity) {
            atomicAdd(&p.counters->overflow, 1u);
            return;
        }
    } else {
        if (p.queue_store && __activemask() == VR_FULL_MASK) {
            const unsigned valid_mask = __ballot_sync(VR_FULL_MASK, valid);
            if (valid_mask == 0)
                return;
            const uint32_t lane = vr_lane_id();
            /* base from the lowest valid lane; every valid lane must agree, and base + 31 must
             * not wrap (element offsets are computed from base in 64 bits) */
            const uint32_t base = __shfl_sync(VR_FULL_MASK, pos - lane, __ffs(valid_mask) - 1);
            if (__all_sync(VR_FULL_MASK, !valid || pos - lane == base) &&
                base <= UINT32_MAX - (VR_WARP_SIZE - 1)) {
                if (p.count && !p.cull && lane == 0)
                    atomicAdd(&p.counters->queue_count, (uint32_t)__popc(valid_mask));
                /* known at compile time once inlined (a corner in registers has no shared
                 * address): -Xptxas -v shows no stack frame in naive, multi and warp */
                if (__isShared(&a) && __isShared(&b) && __isShared(&c))
                    vr_store_warp_shared(p.queue, base, valid_mask, id,
                                         (uint32_t)__cvta_generic_to_shared(&a),
                                         (uint32_t)__cvta_generic_to_shared(&b),
                                         (uint32_t)__cvta_generic_to_shared(&c), va, vb, vc);
                else
                    vr_store_warp(p.queue, base, valid_mask, id, a, b, c, va, vb, vc);
                return;
            }
        }
        if (!valid)
            return;
        if (p.count && !p.cull)
            atomicAdd(&p.counters->queue_count, 1u);
    }
    vr_store_corner(p.queue, slot, 0, a, va);
    vr_store_corner(p.queue, slot, 1, b, vb);
    vr_store_corner(p.queue, slot, 2, c, vc);
    p.queue.tri_id[slot] = id;
}

#endif
