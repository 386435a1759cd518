/* stage.cuh - device helpers every GPU batcher shares: checked CUDA calls, vertex fetch +
 * shade + counting, and triangle emission into the queue (direct slot, or in-kernel
 * compaction when culling: warp ballot, one atomicAdd per warp; InK-Compact, Hughes et al.).
 * Included only by the reuse/ .cu files; the CPU twins use reuse/ref_common.h for the same steps. */
#ifndef VR_STAGE_CUH
#define VR_STAGE_CUH

#include <cuda_runtime.h>

#include "reuse.h"

/* Records file:line and the call's text with the CUDA error string, returns VR_ERR_CUDA. */
#define VR_CUDA_CHECK(call)                                                               \
    do {                                                                                  \
        cudaError_t e_ = (call);                                                          \
        if (e_ != cudaSuccess)                                                            \
            return VR_ERROR(VR_ERR_CUDA, "%s failed: %s", #call, cudaGetErrorString(e_)); \
    } while (0)

/* After every launch: the launch error, and with -DVR_SYNC_CHECK=ON the kernel's own fault. */
#ifdef VR_SYNC_CHECK
#define VR_LAUNCH_CHECK(what)                                                        \
    do {                                                                             \
        VR_CUDA_CHECK(cudaGetLastError());                                           \
        cudaError_t s_ = cudaDeviceSynchronize();                                    \
        if (s_ != cudaSuccess)                                                       \
            return VR_ERROR(VR_ERR_CUDA, "%s: %s", what, cudaGetErrorString(s_));    \
    } while (0)
#else
#define VR_LAUNCH_CHECK(what) VR_CUDA_CHECK(cudaGetLastError())
#endif

#define VR_WARP_SIZE 32
#define VR_FULL_MASK 0xffffffffu

/* Blocks of `block` threads that cover n items (64-bit sum: n may be close to 2^32). */
static inline uint32_t vr_grid_blocks(uint32_t n, uint32_t block)
{
    return (uint32_t)(((uint64_t)n + block - 1) / block);
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

/* Writes triangle `tri` (vertices a, b, c with ids va, vb, vc) to the queue. Without culling
 * the slot is the triangle id: no atomics, deterministic. With culling, the lanes that are
 * active here and keep their triangle are compacted: one atomicAdd per warp reserves
 * popc(keep mask) slots, each lane takes base + its rank. `valid` = 0 lets a lane take part
 * in the vote without a triangle. */
static __device__ __forceinline__ void vr_emit_triangle(const vr_reuse_params &p, int valid, uint32_t tri,
                                                        const vr_shaded &a, const vr_shaded &b,
                                                        const vr_shaded &c, uint32_t va, uint32_t vb,
                                                        uint32_t vc)
{
    uint32_t slot = tri;
    if (p.cull) {
        int keep = valid && !vr_cull_triangle(&a, &b, &c);
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
        if (!valid)
            return;
        if (p.count)
            atomicAdd(&p.counters->queue_count, 1u);
    }
    vr_store_corner(p.queue, slot, 0, a, va);
    vr_store_corner(p.queue, slot, 1, b, vb);
    vr_store_corner(p.queue, slot, 2, c, vc);
    p.queue.tri_id[slot] = tri;
}

#endif
