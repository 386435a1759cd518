/* apps_gpu.cu - the GPU halves of Loop subdivision, the random walk and simplification envelopes
 * (apps.h): each is a program of the general reuse API (reuse/program.cuh) whose element and
 * primitive functions are loop_math.h's, walk_math.h's and envelope_math.h's, the same code the
 * CPU twin calls. Compiled with -fmad=false (CMakeLists.txt): walk_math.h's float products must
 * not fuse into the following sums, so the bits equal the host's; loop_math.h and
 * envelope_math.h use _rn intrinsics anyway (VR_FMUL/VR_FADD/VR_FSUB), and their / and sqrtf
 * are IEEE-rounded under nvcc's defaults (-prec-div=true -prec-sqrt=true, no fast math).
 */
#include "pipeline/apps/apps.h"
#include "pipeline/apps/loop_math.h"
#include "pipeline/block_scan.cuh"
#include "reuse/program.cuh"
#include "scenes/scene.h" /* vr_mesh_free */

#include <cooperative_groups.h>
#include <cub/device/device_radix_sort.cuh>

#include <assert.h>
#include <string.h>

/* ---- Loop ---------------------------------------------------------------------------------- */

typedef struct vr_loop_point {
    float p[3];
} vr_loop_point;

struct vr_loop_program {
    typedef vr_loop_point Element;
    enum { arity = 3 };
    const float *p;              /* old positions */
    /* a triangle's half-edges' edges and owner bits by stream position (a plan's stream order,
     * else source order = stream order): read where the batch reads its indices, not scattered
     * over the source triangles a plan's batch visits */
    const uint32_t *edge_of_half;
    const uint8_t *tri_edges;
    const uint32_t *edge_opp;
    const uint32_t *ring_start, *ring;
    const double *beta;
    uint32_t vertex_count;
    float *out_pos;              /* (V + E) x 3 */
    uint32_t *out_idx;           /* 12 per triangle */

    __device__ Element element(uint32_t v) const
    {
        vr_loop_vertex_rule(out_pos + 3 * (size_t)v, p, v, ring_start, ring, beta);
        Element e;
        for (int k = 0; k < 3; ++k)
            e.p[k] = __ldg(p + 3 * (size_t)v + k);
        return e;
    }
    __device__ void primitive(uint32_t tri, uint32_t pos, const uint32_t *ids,
                              const Element *const *e) const
    {
        const float *const a[3] = {e[0]->p, e[1]->p, e[2]->p};
        vr_loop_owned_edges(out_pos, p, pos, ids, a, edge_of_half, tri_edges, edge_opp,
                            vertex_count);
        /* the children stay at the source id: every strategy writes the same mesh */
        vr_loop_children(out_idx + 12 * (size_t)tri, ids, edge_of_half, pos, vertex_count);
    }
};

/* Device copies of host arrays, freed together. */
typedef struct vr_dev_bufs {
    void *ptr[24];
    int n;
} vr_dev_bufs;

static vr_status vr_dev_upload(vr_dev_bufs *b, void **dst, const void *src, size_t bytes,
                               const char *what)
{
    assert(b->n < (int)VR_COUNT_OF(b->ptr));
    const vr_status st = vr_cuda_upload(dst, src, bytes, what);
    if (*dst)
        b->ptr[b->n++] = *dst; /* also after a failed copy: freed with the others */
    return st;
}

static void vr_dev_free(vr_dev_bufs *b)
{
    vr_cuda_free_all(b->ptr, b->n);
    b->n = 0;
}

#define VR_UP(dst, src, bytes, what)                                                     \
    do {                                                                                 \
        if ((st = vr_dev_upload(&bufs, (void **)&(dst), (src), (bytes), (what))) != VR_OK) \
            goto done;                                                                   \
    } while (0)

/* Runs `prog` r->reps times (events around the program only) into *best_ms. */
template <class P>
static vr_status vr_app_time(vr_reuse_kind kind, const vr_program_params &p, const P &prog,
                             uint32_t reps, double *best_ms)
{
    cudaEvent_t a, b;
    VR_CUDA_CHECK(cudaEventCreate(&a));
    VR_CUDA_CHECK(cudaEventCreate(&b));
    vr_status st = VR_OK;
    *best_ms = 0;
    for (uint32_t i = 0; i < (reps ? reps : 1) && st == VR_OK; ++i) {
        VR_CUDA_GOTO(cudaEventRecord(a, 0));
        if ((st = vr_program_run(kind, p, prog, 0)) != VR_OK)
            goto done;
        VR_CUDA_GOTO(cudaEventRecord(b, 0));
        VR_CUDA_GOTO(cudaEventSynchronize(b));
        float ms;
        VR_CUDA_GOTO(cudaEventElapsedTime(&ms, a, b));
        if (i == 0 || ms < *best_ms)
            *best_ms = ms;
    }
done:
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    return st;
}

/* A triangle program over a mesh: its index stream (h_stream, a host array uploaded - a plan's,
 * or the mesh's own - or else d_stream, already on the device), the plan ids and batch starts
 * (host, or NULL; uploads join `bufs`, freed with them), then one counted run when r->count
 * (the counters into rep) and r->reps timed runs without counting (the best into rep->ms).
 * VR_ERR_OVERFLOW naming `what` when a batch broke its limits. */
template <class P>
static vr_status vr_app_run_mesh(vr_dev_bufs *bufs, const P &prog, const vr_app_run *r,
                                 const uint32_t *d_stream, const uint32_t *h_stream,
                                 uint32_t index_count, uint32_t vertex_count,
                                 const uint32_t *plan_ids, const uint32_t *starts,
                                 uint32_t batch_count, vr_app_report *rep, const char *what)
{
    vr_program_params p;
    memset(&p, 0, sizeof p);
    vr_status st = VR_OK;
    uint32_t *d_up = NULL, *d_ids = NULL, *d_starts = NULL;
    vr_program_counters *d_counters = NULL, c;
    double ms = 0;
    if ((h_stream && (st = vr_dev_upload(bufs, (void **)&d_up, h_stream,
                                         index_count * sizeof(uint32_t), "index stream"))) ||
        (plan_ids && (st = vr_dev_upload(bufs, (void **)&d_ids, plan_ids,
                                         index_count / 3 * sizeof(uint32_t), "plan ids"))) ||
        (starts && (st = vr_dev_upload(bufs, (void **)&d_starts, starts,
                                       ((size_t)batch_count + 1) * sizeof(uint32_t),
                                       "batch starts"))) ||
        (st = vr_dev_upload(bufs, (void **)&d_counters, NULL, sizeof *d_counters, "counters")))
        return st;
    p.indices = h_stream ? d_up : d_stream;
    p.index_count = index_count;
    p.arity = 3;
    p.element_count = vertex_count;
    p.batch_starts = d_starts;
    p.batch_count = batch_count;
    p.prim_ids = d_ids;
    p.limits = r->limits;
    p.counters = d_counters;
    if (r->count) { /* one counted run, then the timed ones without counting */
        VR_CUDA_CHECK(cudaMemset(d_counters, 0, sizeof *d_counters));
        p.count = 1;
        if ((st = vr_program_run(r->kind, p, prog, 0)) != VR_OK)
            return st;
        VR_CUDA_CHECK(cudaMemcpy(&rep->counters, d_counters, sizeof rep->counters,
                                 cudaMemcpyDeviceToHost));
        p.count = 0;
    }
    VR_CUDA_CHECK(cudaMemset(d_counters, 0, sizeof *d_counters));
    if ((st = vr_app_time(r->kind, p, prog, r->reps, &ms)) != VR_OK)
        return st;
    VR_CUDA_CHECK(cudaMemcpy(&c, d_counters, sizeof c, cudaMemcpyDeviceToHost));
    rep->counters.overflow = c.overflow;
    rep->ms = ms;
    if (c.overflow)
        return VR_ERROR(VR_ERR_OVERFLOW, "%s (%s): %u triangles skipped: a batch broke its "
                        "limits", what, vr_reuse_all[r->kind].name, c.overflow);
    return VR_OK;
}

extern "C" vr_status vr_loop_apply_gpu(vr_mesh *out, const vr_mesh *in, const vr_loop_topology *t,
                                       const vr_app_run *r, const uint32_t *plan_ids,
                                       const uint32_t *plan_indices, const uint32_t *starts,
                                       uint32_t batch_count, vr_app_report *rep)
{
    vr_dev_bufs bufs = {{0}, 0};
    vr_status st = vr_loop_output_alloc(out, t);
    if (st != VR_OK)
        return st;
    const size_t V = t->vertex_count, E = t->edge_count, I = t->index_count;
    vr_loop_program g;
    memset(&g, 0, sizeof g);
    uint32_t *d_indices = NULL; /* the source index stream; a plan's batches read its own */
    VR_UP(g.p, in->positions, 3 * V * sizeof(float), "loop positions");
    if (!plan_indices)
        VR_UP(d_indices, in->indices, I * sizeof(uint32_t), "loop indices");
    VR_UP(g.edge_of_half, t->edge_of_half, I * sizeof(uint32_t), "loop edges of half-edges");
    VR_UP(g.tri_edges, t->tri_edges, I / 3, "loop triangles' edge owners and faces");
    VR_UP(g.edge_opp, t->edge_opp, 2 * E * sizeof(uint32_t), "loop edge opposites");
    VR_UP(g.ring_start, t->ring_start, (V + 1) * sizeof(uint32_t), "loop ring starts");
    VR_UP(g.ring, t->ring, t->ring_start[V] * sizeof(uint32_t), "loop rings");
    VR_UP(g.beta, t->beta, ((size_t)t->max_valence + 1) * sizeof(double), "loop beta");
    /* poisoned but for unreferenced vertices: an output nobody wrote fails the comparison */
    vr_loop_output_prefill(out, in);
    VR_UP(g.out_pos, out->positions, 3 * (V + E) * sizeof(float), "loop output positions");
    VR_UP(g.out_idx, out->indices, 4 * I * sizeof(uint32_t), "loop output indices");
    g.vertex_count = t->vertex_count;
    if ((st = vr_app_run_mesh(&bufs, g, r, d_indices, plan_indices, (uint32_t)I, (uint32_t)V,
                              plan_ids, starts, batch_count, rep, "loop subdivision")) != VR_OK)
        goto done;
    VR_CUDA_GOTO(cudaMemcpy(out->positions, g.out_pos, 3 * (V + E) * sizeof(float),
                            cudaMemcpyDeviceToHost));
    VR_CUDA_GOTO(cudaMemcpy(out->indices, g.out_idx, 4 * I * sizeof(uint32_t),
                            cudaMemcpyDeviceToHost));
done:
    vr_dev_free(&bufs);
    if (st != VR_OK)
        vr_mesh_free(out);
    return st;
}

/* ---- random walk --------------------------------------------------------------------------- */

struct vr_walk_program {
    typedef vr_walk_moves Element;
    enum { arity = 1, in_order_hint = 1 }; /* --resort: the agents sorted by cell */
    const float *activity, *levy;
    const uint32_t *agent_of; /* the agent of each primitive (stream position); NULL: itself */
    uint32_t *next;           /* dense cells after the step, by primitive */
    uint32_t step;
    uint64_t seed;

    __device__ Element element(uint32_t dense) const
    {
        Element m;
        vr_walk_moves_of(&m, activity, levy, vr_walk_packed(dense));
        return m;
    }
    __device__ void primitive(uint32_t prim, uint32_t pos, const uint32_t *ids,
                              const Element *const *e) const
    {
        (void)pos, (void)ids;
        const uint32_t agent = agent_of ? agent_of[prim] : prim;
        next[prim] = vr_walk_dense(vr_walk_draw(e[0], agent, step, seed));
    }
};

/* The walk with each cell's moves evaluated by a group of `lanes` threads (cfg->lanes > 1):
 * vr_walk_top_scan per lane, a butterfly of shuffles merging the lanes' best 8 (the order
 * apps/walk-lanes checks on the CPU), the same moves as vr_walk_moves_of. */
struct vr_walk_lanes_program : vr_walk_program {
    enum { grouped_element = 1 };
    uint32_t lanes;

    __device__ Element element(uint32_t dense, uint32_t lane, uint32_t group_lanes,
                               uint32_t mask) const
    {
        const uint32_t cell = vr_walk_packed(dense);
        vr_walk_top t, o;
        vr_walk_top_scan(&t, activity, levy, cell, lane, group_lanes);
        for (uint32_t off = group_lanes / 2; off > 0; off /= 2) {
            for (int i = 0; i < VR_WALK_KEEP; ++i) {
                o.l[i] = __shfl_xor_sync(mask, t.l[i], off);
                o.key[i] = __shfl_xor_sync(mask, t.key[i], off);
            }
            vr_walk_top_merge(&t, &o);
        }
        Element m;
        vr_walk_moves_from_top(&m, &t, cell);
        return m;
    }
};

/* ---- the sort by cell before each step (cfg->resort) ------------------------------------------
 * A counting sort in one pass over the agents: a histogram of the 65,536 cells (atomics), one
 * block turns it into each cell's first slot (and clears it for the next step), and every agent
 * takes the next slot of its cell with an atomic. Unlike CUB's radix sort (two 8-bit passes
 * after a histogram) it is not stable: the agents of a cell land in scheduling order. Nothing
 * the walk computes depends on that order: the stream of cells, hence the batches and the
 * invocations, is the same as the CPU twin's stable sort gives, and each agent's draws depend
 * on its own id, which travels with it (agent_of). The default since it ran exact on the H100
 * (session 20: 0.040 ms per step against CUB's 0.052-0.058, bench/NOTES.md). It runs as one
 * cooperative kernel (below); for A/B runs VR_WALK_RESORT=kernels selects it as three kernels,
 * VR_WALK_RESORT=cub CUB's stable radix sort (any other value fails the run). */
#define VR_WALK_CELLS (VR_WALK_GRID * VR_WALK_GRID)
#define VR_WALK_SCAN_THREADS 1024

static __global__ void vr_walk_histogram_kernel(const uint32_t *cur, uint32_t n, uint32_t *hist)
{
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        atomicAdd(hist + cur[i], 1u); /* cur[i] < VR_WALK_CELLS: dense cells of the walk */
}

/* Inclusive sum over the warp (all 32 lanes call it). */
static __device__ __forceinline__ uint32_t vr_walk_warp_inclusive(uint32_t x, uint32_t lane)
{
    for (uint32_t d = 1; d < VR_WARP_SIZE; d *= 2) {
        const uint32_t y = __shfl_up_sync(VR_FULL_MASK, x, d);
        if (lane >= d)
            x += y;
    }
    return x;
}

/* Cells a warp of the offsets kernel loads before it scans and stores them: its second pass
 * issues VR_WALK_SCAN_BATCH loads before any store. One load per 32 cells, each stored back before
 * the next load (the compiler cannot move a load of hist above a store to slot or hist it may
 * alias), made that pass a chain of 64 round trips to L2 per warp (bench/NOTES.md, session 21). */
#define VR_WALK_SCAN_BATCH 8

/* One block of 32 warps: slot[c] = agents in cells below c, and hist cleared for the next step.
 * Warp w owns cells [w * 2048, (w + 1) * 2048): it sums them, warp 0 scans the 32 sums, then
 * each warp walks its cells again 32 x VR_WALK_SCAN_BATCH at a time (coalesced loads, all issued
 * before the group's stores) with a running prefix. Two barriers in all; each cell is read,
 * written and cleared by the same lane, so no race. */
static __global__ void __launch_bounds__(VR_WALK_SCAN_THREADS)
vr_walk_offsets_kernel(uint32_t *__restrict__ hist, uint32_t *__restrict__ slot)
{
    __shared__ uint32_t s_warp[VR_WARP_SIZE];
    const uint32_t lane = threadIdx.x & (VR_WARP_SIZE - 1), warp = threadIdx.x / VR_WARP_SIZE;
    constexpr uint32_t per_warp = VR_WALK_CELLS / (VR_WALK_SCAN_THREADS / VR_WARP_SIZE);
    uint32_t *const h = hist + warp * per_warp, *const out = slot + warp * per_warp;
    uint32_t sum = 0;
    for (uint32_t k = lane; k < per_warp; k += VR_WARP_SIZE)
        sum += h[k];
    sum = vr_walk_warp_inclusive(sum, lane); /* lane 31: the warp's total */
    if (lane == VR_WARP_SIZE - 1)
        s_warp[warp] = sum;
    __syncthreads();
    if (warp == 0) {
        const uint32_t x = s_warp[lane];
        s_warp[lane] = vr_walk_warp_inclusive(x, lane) - x;
    }
    __syncthreads();
    uint32_t running = s_warp[warp];
    static_assert(per_warp % (VR_WALK_SCAN_BATCH * VR_WARP_SIZE) == 0, "whole groups");
    for (uint32_t k = 0; k < per_warp; k += VR_WALK_SCAN_BATCH * VR_WARP_SIZE) {
        uint32_t c[VR_WALK_SCAN_BATCH];
        for (int u = 0; u < VR_WALK_SCAN_BATCH; ++u)
            c[u] = h[k + u * VR_WARP_SIZE + lane];
        for (int u = 0; u < VR_WALK_SCAN_BATCH; ++u) {
            const uint32_t incl = vr_walk_warp_inclusive(c[u], lane);
            out[k + u * VR_WARP_SIZE + lane] = running + incl - c[u];
            h[k + u * VR_WARP_SIZE + lane] = 0;
            running += __shfl_sync(VR_FULL_MASK, incl, VR_WARP_SIZE - 1);
        }
    }
}

static __global__ void vr_walk_scatter_kernel(const uint32_t *cur, const uint32_t *agents,
                                              uint32_t n, uint32_t *slot, uint32_t *sorted,
                                              uint32_t *sorted_agents)
{
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        const uint32_t c = cur[i], at = atomicAdd(slot + c, 1u);
        sorted[at] = c;
        sorted_agents[at] = agents[i];
    }
}

/* ---- the same counting sort as one cooperative kernel (the default) --------------------------
 * The three kernels above take 0.034-0.039 ms per step on the H100, 5.7 + 20.5 + 9 us of it on
 * the GPU (ncu, session 22): the one-block scan, more than half of it, runs on one SM of 132. One
 * cooperative launch runs the phases with three grid-wide barriers: the histogram, each agent
 * keeping the rank its atomic returned; then block b owns cells [b * 256, (b + 1) * 256) - it
 * sums them, and after the barrier adds the sums of the blocks before it to its own exclusive
 * scan; then each agent goes to its cell's first slot + its rank, with no second atomic. 256
 * blocks of 256 threads, all resident (a cooperative launch is refused otherwise: the host then
 * uses the three kernels, as it does for more than VR_WALK_COOP_AGENTS agents, whose cells and
 * ranks would not fit in registers). Each cell is read, cleared and its slot written by the same
 * thread. */
#define VR_WALK_COOP_THREADS 256
#define VR_WALK_COOP_BLOCKS (VR_WALK_CELLS / VR_WALK_COOP_THREADS)
#define VR_WALK_COOP_PER_THREAD 8 /* agents a thread holds from the histogram to the scatter */
#define VR_WALK_COOP_AGENTS ((uint32_t)VR_WALK_COOP_PER_THREAD * VR_WALK_CELLS)
static_assert(VR_WALK_COOP_BLOCKS <= VR_WALK_COOP_THREADS, "one block sum per thread of a block");

/* n <= VR_WALK_COOP_AGENTS: thread t handles agents t + k * VR_WALK_CELLS, k < 8. */
static __global__ void __launch_bounds__(VR_WALK_COOP_THREADS)
vr_walk_sort_kernel(const uint32_t *__restrict__ cur, const uint32_t *__restrict__ agents,
                    uint32_t n, uint32_t *__restrict__ hist, uint32_t *__restrict__ slot,
                    uint32_t *__restrict__ block_sums, uint32_t *__restrict__ sorted,
                    uint32_t *__restrict__ sorted_agents)
{
    __shared__ uint32_t s_warp[VR_WARP_SIZE]; /* vr_block_scan's */
    cooperative_groups::grid_group grid = cooperative_groups::this_grid();
    const uint32_t first = blockIdx.x * blockDim.x + threadIdx.x; /* also this thread's cell */
    uint32_t cell[VR_WALK_COOP_PER_THREAD], rank[VR_WALK_COOP_PER_THREAD];
#pragma unroll
    for (int k = 0; k < VR_WALK_COOP_PER_THREAD; ++k) {
        const uint32_t i = first + k * VR_WALK_CELLS;
        cell[k] = i < n ? cur[i] : 0;
    }
#pragma unroll
    for (int k = 0; k < VR_WALK_COOP_PER_THREAD; ++k)
        if (first + k * VR_WALK_CELLS < n) /* cell < VR_WALK_CELLS: dense cells of the walk */
            rank[k] = atomicAdd(hist + cell[k], 1u);
    grid.sync();

    /* this cell's place among the block's agents, and the block's total */
    const uint32_t count = hist[first];
    hist[first] = 0; /* for the next step; nobody else reads it before the next launch */
    uint32_t own;
    const uint32_t within = vr_block_scan(count, VR_SCAN_SUM, s_warp, &own);
    if (threadIdx.x == 0)
        block_sums[blockIdx.x] = own;
    grid.sync(); /* also the block barrier before s_warp is used again */

    /* agents in the blocks before this one */
    uint32_t before;
    vr_block_scan(threadIdx.x < blockIdx.x ? block_sums[threadIdx.x] : 0u, VR_SCAN_SUM, s_warp,
                  &before);
    slot[first] = before + within;
    grid.sync();

#pragma unroll
    for (int k = 0; k < VR_WALK_COOP_PER_THREAD; ++k) {
        const uint32_t i = first + k * VR_WALK_CELLS;
        if (i < n) {
            const uint32_t at = slot[cell[k]] + rank[k];
            sorted[at] = cell[k];
            sorted_agents[at] = agents[i];
        }
    }
}

/* The sort's buffers: CUB's temp storage, or the histogram (zero between steps), the slots and
 * the cooperative kernel's block sums. */
typedef struct vr_walk_sorter {
    int cub;              /* CUB's radix sort (VR_WALK_RESORT=cub), else the counting sort */
    int kernels;          /* the counting sort as three kernels (VR_WALK_RESORT=kernels, or
                             when the cooperative launch is not available) */
    void *temp;
    size_t temp_bytes;
    uint32_t *hist, *slot, *block_sums;
} vr_walk_sorter;

/* Whether the current device can run vr_walk_sort_kernel's 256 blocks at once, which a
 * cooperative launch requires (every H100 can: 8 blocks per SM fit). */
static int vr_walk_coop_fits(void)
{
    int dev = 0, coop = 0, sms = 0, per_sm = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess ||
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, vr_walk_sort_kernel,
                                                      VR_WALK_COOP_THREADS, 0) != cudaSuccess) {
        cudaGetLastError(); /* a failed query is not the walk's error: use the three kernels */
        return 0;
    }
    return coop && (long)sms * per_sm >= VR_WALK_COOP_BLOCKS;
}

/* cfg->resort: sorts the stream (cur, agents) by cell into (sorted, sorted_agents), between
 * events a and b (ms into *ms). */
static vr_status vr_walk_sort(const uint32_t *cur, uint32_t *sorted, const uint32_t *agents,
                              uint32_t *sorted_agents, uint32_t n, const vr_walk_sorter *so,
                              cudaEvent_t a, cudaEvent_t b, double *ms)
{
    VR_CUDA_CHECK(cudaEventRecord(a, 0));
    if (so->cub) {
        size_t temp_bytes = so->temp_bytes;
        VR_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(so->temp, temp_bytes, cur, sorted, agents,
                                                      sorted_agents, (int)n, 0,
                                                      2 * VR_WALK_GRID_LOG2, 0));
        VR_LAUNCH_CHECK("cub::DeviceRadixSort::SortPairs (walk resort)", 0);
    } else if (!so->kernels) {
        void *args[] = {(void *)&cur,  (void *)&agents,          (void *)&n,
                        (void *)&so->hist, (void *)&so->slot,   (void *)&so->block_sums,
                        (void *)&sorted, (void *)&sorted_agents};
        VR_CUDA_CHECK(cudaLaunchCooperativeKernel((const void *)vr_walk_sort_kernel,
                                                  VR_WALK_COOP_BLOCKS, VR_WALK_COOP_THREADS,
                                                  args, 0, 0));
        VR_LAUNCH_CHECK("vr_walk_sort_kernel", 0);
    } else {
        const uint32_t block = 256, grid = vr_grid_blocks(n, block);
        vr_walk_histogram_kernel<<<grid, block>>>(cur, n, so->hist);
        VR_LAUNCH_CHECK("vr_walk_histogram_kernel", 0);
        vr_walk_offsets_kernel<<<1, VR_WALK_SCAN_THREADS>>>(so->hist, so->slot);
        VR_LAUNCH_CHECK("vr_walk_offsets_kernel", 0);
        vr_walk_scatter_kernel<<<grid, block>>>(cur, agents, n, so->slot, sorted, sorted_agents);
        VR_LAUNCH_CHECK("vr_walk_scatter_kernel", 0);
    }
    VR_CUDA_CHECK(cudaEventRecord(b, 0));
    VR_CUDA_CHECK(cudaEventSynchronize(b));
    float t;
    VR_CUDA_CHECK(cudaEventElapsedTime(&t, a, b));
    *ms = t;
    return VR_OK;
}

extern "C" vr_status vr_walk_apply_gpu(uint32_t *cells, const vr_walk_config *cfg,
                                       const vr_app_run *r, vr_app_report *rep)
{
    vr_dev_bufs bufs = {{0}, 0};
    vr_app_report rp;
    memset(&rp, 0, sizeof rp);
    const uint32_t n = cfg->agents, grid = VR_WALK_GRID * VR_WALK_GRID;
    const int dynamic = vr_program_dynamic(r->kind);
    vr_status st = VR_OK;
    float *activity = (float *)malloc(grid * sizeof(float));
    float levy[(2 * VR_WALK_MAX_DISTANCE + 1) * (2 * VR_WALK_MAX_DISTANCE + 1)];
    uint32_t *start = (uint32_t *)malloc((size_t)n * sizeof(uint32_t));
    uint32_t *host = (uint32_t *)malloc((size_t)n * sizeof(uint32_t));
    uint32_t *host_agents = cfg->resort ? (uint32_t *)malloc((size_t)n * sizeof(uint32_t)) : NULL;
    uint32_t *d_cur = NULL, *d_next = NULL, *d_start = NULL, *d_starts = NULL;
    /* resort: the agent of each position (identity at the start), the sort's outputs, its temp */
    uint32_t *d_identity = NULL, *d_agents = NULL, *d_sorted = NULL, *d_sorted_agents = NULL;
    vr_walk_sorter sorter;
    memset(&sorter, 0, sizeof sorter);
    cudaEvent_t ev_a = NULL, ev_b = NULL;
    vr_program_counters *d_counters = NULL;
    vr_walk_lanes_program w; /* its vr_walk_program part runs when cfg->lanes <= 1 */
    memset(&w, 0, sizeof w);
    w.lanes = cfg->lanes > 1 ? cfg->lanes : 1;
    if (!activity || !start || !host || (cfg->resort && !host_agents)) {
        st = VR_ERROR(VR_ERR_OOM, "random walk: host tables for %u agents", n);
        goto done;
    }
    vr_walk_activity_table(activity);
    vr_walk_levy_table(levy);
    for (uint32_t a = 0; a < n; ++a)
        start[a] = vr_walk_dense(cells[a]);
    VR_UP(w.activity, activity, grid * sizeof(float), "walk activity");
    VR_UP(w.levy, levy, sizeof levy, "walk levy table");
    VR_UP(d_start, start, (size_t)n * sizeof(uint32_t), "walk start cells");
    VR_UP(d_cur, NULL, (size_t)n * sizeof(uint32_t), "walk cells");
    VR_UP(d_next, NULL, (size_t)n * sizeof(uint32_t), "walk next cells");
    VR_UP(d_starts, NULL, (vr_batches_dynamic_bound_arity(n, 1) + 1) * sizeof(uint32_t),
          "walk batches");
    VR_UP(d_counters, NULL, sizeof(vr_program_counters), "walk counters");
    if (cfg->resort) {
        for (uint32_t a = 0; a < n; ++a)
            host_agents[a] = a;
        VR_UP(d_identity, host_agents, (size_t)n * sizeof(uint32_t), "walk agent ids");
        VR_UP(d_agents, NULL, (size_t)n * sizeof(uint32_t), "walk agents");
        VR_UP(d_sorted, NULL, (size_t)n * sizeof(uint32_t), "walk sorted cells");
        VR_UP(d_sorted_agents, NULL, (size_t)n * sizeof(uint32_t), "walk sorted agents");
        const char *env = getenv("VR_WALK_RESORT");
        if (env && *env && strcmp(env, "cub") && strcmp(env, "kernels")) {
            st = VR_ERROR(VR_ERR_ARG, "VR_WALK_RESORT=%s: expected cub or kernels (or unset: "
                          "the cooperative counting sort)", env);
            goto done;
        }
        sorter.cub = env && !strcmp(env, "cub");
        if (sorter.cub) {
            VR_CUDA_GOTO(cub::DeviceRadixSort::SortPairs(NULL, sorter.temp_bytes, d_cur, d_sorted,
                                                         d_agents, d_sorted_agents, (int)n, 0,
                                                         2 * VR_WALK_GRID_LOG2, 0));
            VR_UP(sorter.temp, NULL, sorter.temp_bytes, "walk sort temp");
        } else {
            VR_UP(sorter.hist, NULL, VR_WALK_CELLS * sizeof(uint32_t), "walk cell histogram");
            VR_UP(sorter.slot, NULL, VR_WALK_CELLS * sizeof(uint32_t), "walk cell slots");
            VR_UP(sorter.block_sums, NULL, VR_WALK_COOP_BLOCKS * sizeof(uint32_t),
                  "walk sort block sums");
            VR_CUDA_GOTO(cudaMemset(sorter.hist, 0, VR_WALK_CELLS * sizeof(uint32_t)));
            sorter.kernels = (env && !strcmp(env, "kernels")) || n > VR_WALK_COOP_AGENTS ||
                             !vr_walk_coop_fits();
        }
        VR_CUDA_GOTO(cudaEventCreate(&ev_a));
        VR_CUDA_GOTO(cudaEventCreate(&ev_b));
    }
    w.seed = cfg->seed;
    /* reps whole walks from the start; the best one's mean step is reported */
    for (uint32_t rep_i = 0; rep_i < (r->reps ? r->reps : 1); ++rep_i) {
        VR_CUDA_GOTO(cudaMemcpy(d_cur, d_start, (size_t)n * sizeof(uint32_t),
                                cudaMemcpyDeviceToDevice));
        if (cfg->resort)
            VR_CUDA_GOTO(cudaMemcpy(d_agents, d_identity, (size_t)n * sizeof(uint32_t),
                                    cudaMemcpyDeviceToDevice));
        VR_CUDA_GOTO(cudaMemset(d_counters, 0, sizeof(vr_program_counters)));
        double total = 0, prep = 0, order = 0;
        for (uint32_t step = 0; step < cfg->steps; ++step) {
            if (cfg->resort) { /* (d_cur, d_agents) -> sorted by cell, then swapped back in */
                double ms;
                if ((st = vr_walk_sort(d_cur, d_sorted, d_agents, d_sorted_agents, n, &sorter,
                                       ev_a, ev_b, &ms)) != VR_OK)
                    goto done;
                total += ms, order += ms;
                uint32_t *t = d_cur;
                d_cur = d_sorted, d_sorted = t;
                t = d_agents, d_agents = d_sorted_agents, d_sorted_agents = t;
            }
            vr_program_params p;
            memset(&p, 0, sizeof p);
            p.indices = d_cur;
            p.index_count = n;
            p.arity = 1;
            p.element_count = grid;
            p.limits = r->limits;
            p.count = r->count && rep_i == 0;
            p.counters = d_counters;
            if (dynamic) { /* batches of the current cells, on the host */
                const double t0 = vr_now_ms();
                VR_CUDA_GOTO(cudaMemcpy(host, d_cur, (size_t)n * sizeof(uint32_t),
                                        cudaMemcpyDeviceToHost));
                uint32_t *s = NULL, count = 0;
                if ((st = vr_program_batches(&s, &count, host, n, 1, grid, r->limits.max_unique,
                                             r->limits.max_indices)) != VR_OK)
                    goto done;
                const cudaError_t e = cudaMemcpy(d_starts, s, ((size_t)count + 1) * sizeof *s,
                                                 cudaMemcpyHostToDevice);
                free(s);
                VR_CUDA_GOTO(e);
                p.batch_starts = d_starts;
                p.batch_count = count;
                rp.batches = count;
                prep += vr_now_ms() - t0;
            }
            w.agent_of = cfg->resort ? d_agents : NULL;
            w.next = d_next;
            w.step = step;
            double ms;
            if ((st = w.lanes > 1 ? vr_app_time(r->kind, p, w, 1, &ms)
                                  : vr_app_time(r->kind, p, static_cast<const vr_walk_program &>(w),
                                                1, &ms)) != VR_OK)
                goto done;
            total += ms;
            uint32_t *tmp = d_cur;
            d_cur = d_next, d_next = tmp;
        }
        const uint32_t steps = cfg->steps ? cfg->steps : 1;
        if (rep_i == 0 || total / steps < rp.ms)
            rp.ms = total / steps, rp.order_ms = order / steps;
        rp.prep_ms = prep;
        if (rep_i == 0)
            VR_CUDA_GOTO(cudaMemcpy(&rp.counters, d_counters, sizeof rp.counters,
                                    cudaMemcpyDeviceToHost));
    }
    if (rp.counters.overflow) {
        st = VR_ERROR(VR_ERR_OVERFLOW, "random walk (%s): %u agents skipped: a batch broke its "
                      "limits", vr_reuse_all[r->kind].name, rp.counters.overflow);
        goto done;
    }
    VR_CUDA_GOTO(cudaMemcpy(host, d_cur, (size_t)n * sizeof(uint32_t), cudaMemcpyDeviceToHost));
    if (cfg->resort)
        VR_CUDA_GOTO(cudaMemcpy(host_agents, d_agents, (size_t)n * sizeof(uint32_t),
                                cudaMemcpyDeviceToHost));
    for (uint32_t i = 0; i < n; ++i)
        cells[cfg->resort ? host_agents[i] : i] = vr_walk_packed(host[i]);
done:
    /* the swaps above only exchange pointers among the uploaded buffers: freed by bufs */
    vr_dev_free(&bufs);
    if (ev_a)
        cudaEventDestroy(ev_a);
    if (ev_b)
        cudaEventDestroy(ev_b);
    free(activity), free(start), free(host), free(host_agents);
    if (rep)
        *rep = rp;
    return st;
}

/* ---- simplification envelopes -------------------------------------------------------------- */

/* The shader: one non-inlined copy, called by every strategy's kernel. It is a few thousand
 * instructions of divergent octree walk: inlined into each of the ~20 kernel instantiations it
 * would multiply the compile time, and one copy makes every strategy run the same shader code,
 * so the table compares reuse alone. */
static __device__ __noinline__ float vr_envelope_offset_dev(const vr_envelope_input *in,
                                                            uint32_t w)
{
    return vr_envelope_offset(in, w);
}

/* Element: vertex v of the mesh's index buffer; its welded representative's offset (the
 * reference computes it once per representative: the same pure function of the same w) and the
 * moved position, written for v. Several batches may shade v: they write the same bits. */
struct vr_envelope_program {
    typedef float Element; /* the offset */
    /* blocks of at most 256 threads: the offset function spilled ~200 B at 1024's 64-register
     * cap (every kernel but sort's), and the hashed kernels ran 28-36% behind sort. The hashed
     * kernel at 128 registers, two blocks per SM: left free, ptxas took 149 and hash ran 45%
     * slower (one block per SM) */
    enum { arity = 3, max_threads = 256, hashed_max_regs = 128 };
    vr_envelope_input in;  /* device copies of the prepared arrays */
    const uint32_t *weld;  /* vertex_count */
    float *out_pos;        /* 3 x vertex_count */
    float *out_off;        /* vertex_count */

    __device__ Element element(uint32_t v) const
    {
        const uint32_t w = __ldg(weld + v);
        const float d = vr_envelope_offset_dev(&in, w);
        vr_envelope_move(out_pos + 3 * (size_t)v, &in, w, d);
        out_off[v] = d;
        return d;
    }
    /* the paper's per-triangle work is nil: the triangles keep their corners */
    __device__ void primitive(uint32_t tri, uint32_t pos, const uint32_t *ids,
                              const Element *const *e) const
    {
        (void)tri, (void)pos, (void)ids, (void)e;
    }
};

extern "C" vr_status vr_envelope_apply_gpu(float *positions, float *offsets,
                                           const vr_envelope_prep *prep, const vr_app_run *r,
                                           const uint32_t *stream, const uint32_t *plan_ids,
                                           const uint32_t *starts, uint32_t batch_count,
                                           vr_app_report *rep)
{
    vr_dev_bufs bufs = {{0}, 0};
    vr_status st = vr_cuda_device_check();
    if (st != VR_OK)
        return st;
    const vr_envelope_input *h = &prep->input; /* host arrays */
    const size_t V = prep->vertex_count, I = 3 * (size_t)prep->triangle_count;
    const size_t N = h->tree.node_count, F = h->fan_first[V];
    vr_envelope_program g;
    memset(&g, 0, sizeof g);
    g.in = *h; /* the scalars; every pointer is replaced by its device copy below */
    VR_UP(g.in.positions, h->positions, 3 * V * sizeof(float), "envelope positions");
    VR_UP(g.in.normals, h->normals, 3 * V * sizeof(float), "envelope normals");
    VR_UP(g.in.indices, h->indices, I * sizeof(uint32_t), "envelope welded indices");
    VR_UP(g.in.fan_first, h->fan_first, (V + 1) * sizeof(uint32_t), "envelope fan starts");
    VR_UP(g.in.fan, h->fan, F * sizeof(uint32_t), "envelope fans");
    VR_UP(g.in.tree.box, h->tree.box, 6 * N * sizeof(float), "envelope octree boxes");
    VR_UP(g.in.tree.nbox, h->tree.nbox, 6 * N * sizeof(float), "envelope octree normal boxes");
    VR_UP(g.in.tree.link, h->tree.link, 4 * N * sizeof(uint32_t), "envelope octree links");
    VR_UP(g.in.tree.tris, h->tree.tris, I / 3 * sizeof(uint32_t), "envelope octree triangles");
    VR_UP(g.weld, prep->weld, V * sizeof(uint32_t), "envelope weld");
    VR_UP(g.out_pos, NULL, 3 * V * sizeof(float), "envelope output positions");
    VR_UP(g.out_off, NULL, V * sizeof(float), "envelope offsets");
    /* poisoned (NaN): a vertex no strategy shaded stays so (the host fills the unnamed ones) */
    VR_CUDA_GOTO(cudaMemset(g.out_pos, 0xFF, 3 * V * sizeof(float)));
    VR_CUDA_GOTO(cudaMemset(g.out_off, 0xFF, V * sizeof(float)));
    if ((st = vr_app_run_mesh(&bufs, g, r, NULL, stream, (uint32_t)I, (uint32_t)V, plan_ids,
                              starts, batch_count, rep, "envelope")) != VR_OK)
        goto done;
    VR_CUDA_GOTO(cudaMemcpy(positions, g.out_pos, 3 * V * sizeof(float), cudaMemcpyDeviceToHost));
    VR_CUDA_GOTO(cudaMemcpy(offsets, g.out_off, V * sizeof(float), cudaMemcpyDeviceToHost));
done:
    vr_dev_free(&bufs);
    return st;
}
