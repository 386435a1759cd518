/* program.cuh - the GPU half of the general reuse API (reuse/program.h has the contract and the
 * CPU twin): vr_program_run<P>(kind, params, program, stream) runs strategy `kind` with program
 * P's functions inlined into the strategy's kernel. The deduplication is the renderer
 * batchers' own device code - warp voting (reuse/warp_round.cuh), the hash and phash tables and
 * the table compaction (reuse/dyn_common.cuh), the block radix sort (reuse/sort_dedup.cuh) - so a
 * program gets exactly the renderer's batches and invocation counts.
 *
 * A program is a struct, passed by value as a kernel argument (device pointers inside):
 *   struct my_program {
 *       typedef ... Element;                 // what element() yields; kept in shared memory
 *       enum { arity = 3 };                  // indices per primitive, 1..VR_PROGRAM_ARITY_MAX
 *       __device__ Element element(uint32_t id) const;   // once per distinct element of a batch
 *       __device__ void primitive(uint32_t prim, uint32_t pos, const uint32_t *ids,
 *                                 const Element *const *corners) const;  // once per primitive
 *   };
 * Optional: `enum { max_threads = 256 };` - the largest block the program runs with (default
 * 1024). The kernels are compiled with __launch_bounds__(max_threads): at 1024 a thread gets at
 * most 64 registers, and a heavy element function (the envelope's octree walk) spills there;
 * at 256 it may take 255. Larger blocks are then refused (VR_ERR_ARG).
 * Optional: `enum { hashed_max_regs = 32 };` - a register budget for the hashed kernel (hash,
 * phash, patch, meshlet) alone, as the renderer's own hash kernels have (VR_DYN_MAX_REGS): more
 * resident blocks for a cheap element function; a heavy one spills under it (default: none).
 * Optional: `enum { derived_layout = 1 };` - the hashed kernel computes its shared-memory layout
 * itself, hash table first (a constant address), instead of taking it as an argument with the
 * elements first (vr_prog_layout). Under a tight hashed_max_regs the two trade instructions for
 * spills: the argument made the render program's direct phash 4% faster at heavy load, but its
 * warp-staged one (more live addresses) spilled 16 B more and ran 6% slower at simple load; with
 * derived_layout that one spills less than ever and is within 1% (H100, session 22,
 * bench/NOTES.md).
 * Optional: `enum { grouped_element = 1 };` with a member `uint32_t lanes` (a power of two,
 * 1..32, <= the block size): element() becomes
 *       __device__ Element element(uint32_t id, uint32_t lane, uint32_t lanes,
 *                                  uint32_t mask) const;
 * called by `lanes` consecutive lanes of one warp together, with the same id (lane 0..lanes-1 its
 * rank in the group, mask the group's lanes), which may share the work through warp shuffles
 * under `mask` and must all return the same element; lane 0's is kept and counted once. For an
 * element function too long for one thread when few elements are distinct (the walk's sorted
 * agents: 65k cells of ~800 candidates each). Each strategy's batches, invocations and primitive
 * calls stay what they are; naive and multi run `lanes` threads per primitive or element.
 * Batched strategies (warp, hash, phash, sort, the plans) keep their block: a block evaluates
 * block / lanes elements per pass, so a batch of N_u distinct elements takes about
 * N_u x lanes / block passes one after another - for more threads at work, not only shorter
 * ones, give such a program a block of lanes x N_u (e.g. `vreuse apply walk --lanes 4 --block
 * 1024`, or --nu 64 at block 256; bench/NOTES.md, session 20).
 * Optional: `enum { in_order_hint = 1 };` - the stream's indices are often in ascending order
 * within a batch (the walk's agents sorted by cell): the sort strategy then checks each batch
 * and skips its block radix sort where the batch is in order (the same batches, ids and counts;
 * a wrong hint costs time only). The check costs about 5% where batches are never in order
 * (the renderer's sort, H100, session 30); the sorted walk's sort strategy gained 5-6%.
 * Optional: `enum { converged_primitive = 1 };` - primitive() becomes
 *       __device__ void primitive(uint32_t prim, uint32_t pos, const uint32_t *ids,
 *                                 const Element *const *corners, bool valid) const;
 * called by all 32 lanes of a warp together, so it may use full-mask warp collectives
 * (__ballot_sync(0xffffffff, ...), __shfl_sync): for output written by whole warps, such as the
 * renderer's warp-staged queue store (reuse/render_program.cuh). Lane l always holds stream
 * position pos = base + l, and the lanes with a primitive (`valid`) are a prefix of the warp;
 * on the others pos is still base + l but prim, ids and corners are placeholders (read none
 * of them). Not with grouped_element (its primitive runs on one lane per group).
 * Optional: `enum { ordered_primitive = 1 };` - compacted output in input order: instead of
 * primitive(), the program has
 *       __device__ bool keep(uint32_t prim, uint32_t pos, const uint32_t *ids,
 *                            const Element *const *corners, bool valid) const;
 *       __device__ void store(uint32_t slot, uint32_t prim, uint32_t pos, const uint32_t *ids,
 *                             const Element *const *corners) const;
 *       __device__ void kept(uint32_t n) const;
 * keep() says whether a primitive is output; it is called as a converged primitive() is (whole
 * warps, `valid`, whole-warp collectives allowed), once per primitive (count what you drop
 * there).
 * store() writes a kept primitive at `slot`: the kept primitives of the run numbered in stream
 * order (VR_QUEUE_INK, the in-kernel compaction of pipeline/compact), or in stream order within
 * a block's work and blocks in any order (VR_QUEUE_COLLATE); slots are 0..kept-1 either way.
 * kept(n) is called once per block (per batch or tile in a persistent kernel) that keeps
 * n > 0 (one thread). Such a program runs with
 * vr_program_run_ordered (its compaction state and scheme); the kernels see it wrapped in
 * vr_prog_ordered_run (with the state). Optional for it: a host member
 *       bool cheap_elements() const;
 * true where element() is cheap (on the H100 up to about 1,200 dependent FMA steps, the
 * renderer's light load): every strategy then runs ink as persistent blocks that hand a batch
 * (or tile) off one batch late - hash, phash, patch, meshlet and sort
 * (vr_prog_batched_ink_kernel), naive and multi (vr_prog_single_ink_kernel), warp
 * (vr_prog_warp_ink_kernel: a block's warps' batches per ticket) -, the hashed
 * ones 0.72-0.82x the time of a block per batch with a plain shader, but 1.03-1.12x with a
 * heavy one; without it, or false, a block per batch. VR_PROG_INK=blocks|persistent overrides
 * it for a run.
 * Optional for a plain (unordered, ungrouped) program: a host member
 *       bool pool_rounds() const;
 * true where warp should pool its rounds (vr_prog_warp_pooled_kernel: full 32-lane rounds
 * across a warp's batches, taken by ticket, instead of each batch's partly filled last one):
 * on the H100 that paid only for a compute-bound element function of thousands of steps (the
 * renderer's heavy load: 8% faster; 2% slower at the light load, 35% at the simple one, and
 * slower for the envelope in a Forsyth order and the walk, session 38). VR_PROG_WARP=rounds|
 * pooled overrides it.
 * The CPU twin of such a program is a primitive() that stores
 * kept primitives at a running count: vr_program_ref calls primitives in stream order. The
 * blocks rank their primitives, hand off, then store: naive and multi in one round (the corners
 * in registers), the batched kernels after all rounds (each rank kept in shared memory, the
 * corners there too), warp from a per-warp stash of its kept primitives. Not with
 * grouped_element.
 * `prim` is the source primitive id (a plan's prim_ids[pos], else pos), `pos` the stream
 * position, ids and corners the arity corner element ids and their elements. element() must not
 * depend on which batch calls it (several batches may shade the same element); primitive() runs
 * once per primitive (per valid call), in no particular order across threads. Neither may use
 * warp or block collectives (but a grouped element() its group's shuffles, and a converged
 * primitive() whole-warp ones): they run in divergent code.
 * Included by the .cu files that define programs (pipeline/apps/apps_gpu.cu, tests); every program
 * instantiates its own kernels.
 */
#ifndef VR_PROGRAM_CUH
#define VR_PROGRAM_CUH

#include "pipeline/compact/compact.cuh" /* ordered programs: rank, hand-off */
#include "reuse/program.h"
#include "reuse/sort_dedup.cuh"
#include "reuse/warp_round.cuh"

#include <stdlib.h> /* getenv: VR_PROG_INK */
#include <string.h> /* memcpy: multi's slots */

/* n rounded up to a multiple of 16 bytes: the start of each shared-memory part (vector loads). */
template <class T>
static __host__ __device__ inline T vr_prog_align16(T n)
{
    return (n + 15u) & ~(T)15u;
}

/* P::max_threads when the program declares it, else 1024 (see the header comment). */
template <class P, class = void>
struct vr_prog_threads {
    static constexpr int value = 1024;
};
template <class P>
struct vr_prog_threads<P, decltype((void)P::max_threads, void())> {
    static constexpr int value = P::max_threads;
};

/* Whether P declares derived_layout (see the header comment). */
template <class P, class = void>
struct vr_prog_derived_layout {
    static constexpr bool value = false;
};
template <class P>
struct vr_prog_derived_layout<P, decltype((void)P::derived_layout, void())> {
    static constexpr bool value = P::derived_layout != 0;
};

/* The hashed kernel's minimum resident blocks per SM: what keeps it within P::hashed_max_regs
 * registers at P's max_threads (1: no budget beyond the launch bounds). */
template <class P, class = void>
struct vr_prog_hashed_blocks {
    static constexpr int value = 1;
};
template <class P>
struct vr_prog_hashed_blocks<P, decltype((void)P::hashed_max_regs, void())> {
    static constexpr int per = 65536 / (vr_prog_threads<P>::value * P::hashed_max_regs);
    static constexpr int value = per > 1 ? per : 1;
};

/* Whether P has cheap_elements() (see the header comment): then its answer, else false. */
template <class P, class = void>
struct vr_prog_cheap {
    static bool of(const P &) { return false; }
};
template <class P>
struct vr_prog_cheap<P, decltype((void)&P::cheap_elements, void())> {
    static bool of(const P &prog) { return prog.cheap_elements(); }
};

/* Whether P has pool_rounds() (see the header comment): then its answer, else false. */
template <class P, class = void>
struct vr_prog_pool {
    static bool of(const P &) { return false; }
};
template <class P>
struct vr_prog_pool<P, decltype((void)&P::pool_rounds, void())> {
    static bool of(const P &prog) { return prog.pool_rounds(); }
};

/* Whether P's element function runs on a group of P::lanes lanes (grouped_element). */
template <class P, class = void>
struct vr_prog_grouped {
    static constexpr bool value = false;
};
template <class P>
struct vr_prog_grouped<P, decltype((void)P::grouped_element, void())> {
    static constexpr bool value = true;
};

/* Whether P's primitive function is called by whole warps with a valid flag
 * (converged_primitive). */
template <class P, class = void>
struct vr_prog_converged {
    static constexpr bool value = false;
};
template <class P>
struct vr_prog_converged<P, decltype((void)P::converged_primitive, void())> {
    static constexpr bool value = true;
};

/* Whether P declares in_order_hint (see the header comment). */
template <class P, class = void>
struct vr_prog_in_order {
    static constexpr bool value = false;
};
template <class P>
struct vr_prog_in_order<P, decltype((void)P::in_order_hint, void())> {
    static constexpr bool value = P::in_order_hint != 0;
};

/* Whether P's output is compacted in order (ordered_primitive: keep() and store()). */
template <class P, class = void>
struct vr_prog_ordered {
    static constexpr bool value = false;
};
template <class P>
struct vr_prog_ordered<P, decltype((void)P::ordered_primitive, void())> {
    static constexpr bool value = true;
};

/* One element-function call, counted in counting mode. */
template <class P>
static __device__ __forceinline__ typename P::Element vr_prog_element(const vr_program_params &p,
                                                                      const P &prog, uint32_t id)
{
    const typename P::Element e = prog.element(id);
    if (p.count) {
        atomicAdd(&p.counters->invocations, 1ull);
        if (p.shade_counts)
            atomicAdd(p.shade_counts + id, 1u);
    }
    return e;
}

/* A thread's place in its element group (grouped programs): lanes, log2 of it, rank in the group
 * and the group's lane mask. Groups are aligned within the warp (blocks are multiples of lanes). */
struct vr_prog_group {
    uint32_t lanes, log2, rank, mask;
};

template <class P>
static __device__ __forceinline__ vr_prog_group vr_prog_group_of(const P &prog)
{
    vr_prog_group g;
    g.lanes = prog.lanes;
    g.log2 = (uint32_t)__ffs(g.lanes) - 1u;
    const uint32_t lane = threadIdx.x & (VR_WARP_SIZE - 1);
    g.rank = lane & (g.lanes - 1u);
    g.mask = g.lanes == VR_WARP_SIZE ? VR_FULL_MASK
                                     : ((1u << g.lanes) - 1u) << (lane & ~(g.lanes - 1u));
    return g;
}

/* The grouped call: every lane of the group with the same id; counted once, by rank 0. */
template <class P>
static __device__ __forceinline__ typename P::Element
vr_prog_element_grouped(const vr_program_params &p, const P &prog, uint32_t id,
                        const vr_prog_group &g)
{
    const typename P::Element e = prog.element(id, g.rank, g.lanes, g.mask);
    if (p.count && g.rank == 0) {
        atomicAdd(&p.counters->invocations, 1ull);
        if (p.shade_counts)
            atomicAdd(p.shade_counts + id, 1u);
    }
    return e;
}

/* One primitive-function call for stream primitive `pos` when `valid`. PLAN (patch, meshlet: the
 * only kinds with prim_ids, vr_program_check): the source id is the plan's, and one out of range
 * is counted as overflow and skipped (the host checks plans, the GPU only the range); else it is
 * pos, known at compile time (no pointer test or load left in the other kernels). A converged
 * program is called on every lane that gets here (the callers bring whole warps), with `valid`;
 * any other only for a valid primitive (its callers pass a constant true). */
template <class P, bool PLAN = false>
static __device__ __forceinline__ void vr_prog_primitive(const vr_program_params &p, const P &prog,
                                                         bool valid, uint32_t pos,
                                                         const uint32_t *ids,
                                                         const typename P::Element *const *e)
{
    uint32_t prim = pos;
    if (PLAN && valid) {
        prim = __ldg(p.prim_ids + pos);
        if (prim >= p.index_count / (uint32_t)P::arity) {
            atomicAdd(&p.counters->overflow, 1u);
            if constexpr (!vr_prog_converged<P>::value)
                return;
            valid = false;
        }
    }
    if constexpr (vr_prog_converged<P>::value)
        prog.primitive(prim, pos, ids, e, valid);
    else if (valid)
        prog.primitive(prim, pos, ids, e);
    if (valid && p.count)
        atomicAdd(&p.counters->primitives, 1ull);
}

/* Whether primitive q0 + lane's warp has a primitive among n: every primitive loop hands
 * primitives q0 + lane to the lanes of a warp, and a converged program's warp goes through the
 * loop while its first lane has one, so that it stays together. (Each loop is written twice, with
 * a constant `valid` for the other programs: one loop for both moved ptxas's register allocation
 * in 44 of the applications' 96 kernels.) */
static __device__ __forceinline__ bool vr_prog_warp_has_work(uint32_t q, uint32_t n)
{
    return q - (threadIdx.x & (VR_WARP_SIZE - 1)) < n;
}

/* ---- ordered programs: rank, hand off, store (pipeline/compact/compact.cuh) -----------------
 * Every thread of a block takes part in each step, also where the block has no work (its count
 * 0), or the blocks after it would wait for it. */

/* The block's compaction state (only ordered programs' kernels declare it). */
template <class P>
static __device__ __forceinline__ vr_compact_shared *vr_prog_order_shared()
{
    __shared__ vr_compact_shared cs;
    return &cs;
}

/* The block's work item: blockIdx.x, or for an ordered program under InK-Compact its ticket
 * (earlier tickets take earlier work: the order kept, and why the hand-off cannot deadlock).
 * Every thread calls it first. */
template <class P>
static __device__ __forceinline__ uint32_t vr_prog_work(const P &prog)
{
    if constexpr (!vr_prog_ordered<P>::value) {
        return blockIdx.x;
    } else {
        const uint32_t ticket = vr_compact_begin(prog.order_dev, vr_prog_order_shared<P>());
        return prog.order_mode == VR_QUEUE_INK ? ticket : blockIdx.x;
    }
}

/* After the ranking pass: the block's first slot (ordered look-back or one atomicAdd);
 * prog.kept(total) once. Every thread calls it. Its two barriers (in the hand-off) publish
 * the block's ranks and stashes; no third one resets the ranking, since every ordered kernel
 * ranks once and nothing writes the compaction's shared state after this. */
template <class P>
static __device__ __forceinline__ uint32_t vr_prog_order_base(const P &prog)
{
    vr_compact_shared *cs = vr_prog_order_shared<P>();
    const uint32_t base = prog.order_mode == VR_QUEUE_INK
                              ? vr_compact_ordered_base(prog.order_dev, cs)
                              : vr_compact_collate_base(prog.order_dev, cs);
    if (threadIdx.x == 0 && cs->total)
        prog.kept(cs->total);
    return base;
}

/* A block without work (past the last batch, a broken or overflowing batch): a count of 0. */
template <class P>
static __device__ __forceinline__ void vr_prog_order_skip(const P &prog)
{
    (void)vr_prog_order_base(prog);
    vr_compact_end(prog.order_dev);
}

/* The source id of stream primitive `pos` as vr_prog_primitive takes it (a plan's, checked;
 * one out of range makes *valid false, counted as overflow when `count_overflow`). */
template <class P, bool PLAN>
static __device__ __forceinline__ uint32_t vr_prog_source_id(const vr_program_params &p,
                                                             uint32_t pos, bool *valid,
                                                             bool count_overflow)
{
    if (!PLAN || !*valid)
        return pos;
    const uint32_t prim = __ldg(p.prim_ids + pos);
    if (prim < p.index_count / (uint32_t)P::arity)
        return prim;
    if (count_overflow)
        atomicAdd(&p.counters->overflow, 1u);
    *valid = false;
    return pos;
}

/* keep(), with the primitive counted (counting mode). */
template <class P>
static __device__ __forceinline__ bool vr_prog_keep(const vr_program_params &p, const P &prog,
                                                    bool valid, uint32_t prim, uint32_t pos,
                                                    const uint32_t *ids,
                                                    const typename P::Element *const *e)
{
    const bool keep = prog.keep(prim, pos, ids, e, valid) && valid;
    if (valid && p.count)
        atomicAdd(&p.counters->primitives, 1ull);
    return keep;
}

/* One round for the whole block (naive, multi: the corners in registers): rank, hand off,
 * store, end. */
template <class P>
static __device__ __forceinline__ void vr_prog_ordered_round(const vr_program_params &p,
                                                             const P &prog, bool valid,
                                                             uint32_t pos, const uint32_t *ids,
                                                             const typename P::Element *const *e)
{
    const bool keep = vr_prog_keep(p, prog, valid, pos, pos, ids, e);
    const uint32_t rank = vr_compact_block_rank(vr_prog_order_shared<P>(), keep);
    const uint32_t base = vr_prog_order_base(prog);
    if (keep)
        prog.store(base + rank, pos, pos, ids, e);
    vr_compact_end(prog.order_dev);
}

/* ---- naive: thread t, primitive t, its corners shaded in registers -------------------------- */
template <class P>
static __device__ __forceinline__ void vr_prog_naive_grouped(const vr_program_params &p,
                                                             const P &prog);

template <class P>
static __device__ __forceinline__ void vr_prog_naive_single(const vr_program_params &p,
                                                            const P &prog);

template <class P, bool MULTI>
static __device__ __forceinline__ void vr_prog_single_ordered(const vr_program_params &p,
                                                              const P &prog);

template <class P>
static __device__ __forceinline__ void vr_prog_naive_primitive(const vr_program_params &p,
                                                               const P &prog, uint32_t t,
                                                               bool valid);

template <class P>
static __global__ void __launch_bounds__(vr_prog_threads<P>::value)
vr_prog_naive_kernel(vr_program_params p, P prog)
{
    if constexpr (vr_prog_grouped<P>::value)
        vr_prog_naive_grouped(p, prog);
    else if constexpr (vr_prog_ordered<P>::value)
        vr_prog_single_ordered<P, false>(p, prog);
    else
        vr_prog_naive_single(p, prog);
}

template <class P>
static __device__ __forceinline__ void vr_prog_naive_single(const vr_program_params &p,
                                                            const P &prog)
{
    const uint32_t A = P::arity;
    const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    if constexpr (vr_prog_converged<P>::value) {
        if (vr_prog_warp_has_work(t, p.index_count / A))
            vr_prog_naive_primitive(p, prog, t, t < p.index_count / A);
    } else if (t < p.index_count / A) {
        vr_prog_naive_primitive(p, prog, t, true);
    }
}

/* Primitive t's corners computed in registers, then the primitive (naive). */
template <class P>
static __device__ __forceinline__ void vr_prog_naive_primitive(const vr_program_params &p,
                                                               const P &prog, uint32_t t,
                                                               bool valid)
{
    const uint32_t A = P::arity;
    uint32_t ids[A];
    typename P::Element e[A];
    const typename P::Element *ep[A];
    for (uint32_t k = 0; k < A; ++k) {
        ids[k] = 0;
        if (valid) {
            ids[k] = __ldg(p.indices + A * t + k);
            e[k] = vr_prog_element(p, prog, ids[k]);
        }
        ep[k] = &e[k];
    }
    vr_prog_primitive(p, prog, valid, t, ids, ep);
}

/* Grouped: a group of lanes per primitive (the grid has lanes x primitives threads, in 64 bits);
 * every lane computes the corners' elements together, rank 0 calls primitive(). */
template <class P>
static __device__ __forceinline__ void vr_prog_naive_grouped(const vr_program_params &p,
                                                             const P &prog)
{
    const uint32_t A = P::arity;
    const vr_prog_group g = vr_prog_group_of(prog);
    const uint64_t t = ((uint64_t)blockIdx.x * blockDim.x + threadIdx.x) >> g.log2;
    if (t >= p.index_count / A)
        return; /* the whole group */
    uint32_t ids[A];
    typename P::Element e[A];
    const typename P::Element *ep[A];
    for (uint32_t k = 0; k < A; ++k) {
        ids[k] = __ldg(p.indices + A * t + k);
        e[k] = vr_prog_element_grouped(p, prog, ids[k], g);
        ep[k] = &e[k];
    }
    if (g.rank == 0)
        vr_prog_primitive(p, prog, true, (uint32_t)t, ids, ep);
}

/* One warp finishes ticket `prev` (its count prev_total published) and leaves its first slot in
 * *s_base; prog.kept once for it. Every thread calls it; one barrier. */
template <class P>
static __device__ __forceinline__ void vr_prog_ink_finish(const vr_compact_dev d, const P &prog,
                                                          uint32_t prev, uint32_t prev_total,
                                                          uint32_t tickets, uint32_t *s_base)
{
    if (threadIdx.x < VR_WARP_SIZE) {
        const uint32_t base = vr_compact_ordered_finish(d, prev, prev_total, tickets);
        if (threadIdx.x == 0) {
            *s_base = base;
            if (prev_total)
                prog.kept(prev_total);
        }
    }
    __syncthreads();
}

/* The loop of the persistent ink kernels (vr_prog_batched_ink_kernel, vr_prog_single_ink_kernel,
 * vr_prog_warp_ink_kernel): tickets in the order blocks take them, each ranked into one of two
 * halves of shared memory at `cur` (0 or half_bytes) by rank(ticket, cur, &total), which returns
 * what the store needs later (S) and sets the ticket's kept count (block-uniform; the rank's
 * barriers passed); the count is published, then the ticket before is finished (its base) and
 * stored from the other half by store(other, base, count, its S). The next ticket is taken only
 * after the wait, so a block never waits while it holds a ticket it has not published: the
 * ticket's count follows after a store and a ranking, work alone. Taken as the batch before
 * began ranking (session 26), a ticket was held through that batch's hand-off, so one block's
 * wait delayed counts that others wait for; taken after it, the hand-off's spins fell 3x and
 * heavy load went from 1.08-1.14x to 1.03-1.10x of a block per batch (session 27). It is taken
 * by a warp other than the hand-off's and written to s_next after the store, so the store hides
 * the atomic's round trip. */
template <class S, class P, class Rank, class Store>
static __device__ __forceinline__ void vr_prog_ink_loop(const P &prog, uint32_t tickets,
                                                        uint32_t half_bytes, Rank rank,
                                                        Store store)
{
    __shared__ uint32_t s_first, s_next, s_base;
    const vr_compact_dev d = prog.order_dev;
    if (threadIdx.x == 0) /* not s_next: thread 0 writes that before the block's other warps
                             have passed this barrier (racecheck, session 26) */
        s_first = atomicAdd(d.counters + VR_COMPACT_TICKET, 1u);
    __syncthreads();
    uint32_t ticket = s_first, cur = 0, prev = 0xFFFFFFFFu, prev_total = 0;
    S prev_s{};
    for (;;) {
        const bool have = ticket < tickets; /* block-uniform */
        uint32_t total = 0;
        S now{};
        if (have) {
            now = rank(ticket, cur, &total);
            if (threadIdx.x < VR_WARP_SIZE)
                vr_compact_ordered_publish(d, ticket, total);
        }
        if (prev != 0xFFFFFFFFu)
            vr_prog_ink_finish(d, prog, prev, prev_total, tickets, &s_base);
        const bool taker = have && threadIdx.x == (blockDim.x > VR_WARP_SIZE ? VR_WARP_SIZE : 0);
        uint32_t next = 0;
        if (taker)
            next = atomicAdd(d.counters + VR_COMPACT_TICKET, 1u);
        if (prev != 0xFFFFFFFFu)
            store(cur ^ half_bytes, s_base, prev_total, prev_s);
        if (!have)
            break;
        if (taker)
            s_next = next;
        prev = ticket, prev_total = total, prev_s = now;
        cur ^= half_bytes;
        __syncthreads(); /* the stored half is free, s_base read, s_next written */
        ticket = s_next; /* written again only after the next ticket's finish */
    }
    vr_compact_end(d);
}

/* ---- warp: one warp per static batch, rounds of up to 32 distinct elements -----------------
 * Shared memory per warp: 32 elements (the round's lanes) then the round's scratch: batch_indices
 * bytes of lane map (to 16) and the vote's table of held ids (vr_prog_warp_held).
 * Round: vr_warp_load_round maps the leading indices onto lanes, each filled lane computes its
 * element into the warp's table, and lane l takes the round's primitives l, l + 32, .... */
static __host__ __device__ inline size_t vr_prog_warp_map_bytes(uint32_t batch)
{
    return vr_prog_align16(batch) + VR_WARP_HELD_BYTES;
}

/* The vote's table of held ids in a round's scratch at `map` (16-byte aligned), after the lane
 * map. */
static __device__ __forceinline__ uint32_t *vr_prog_warp_held(uint8_t *map, uint32_t batch)
{
    return reinterpret_cast<uint32_t *>(map + vr_prog_align16(batch));
}

/* An ordered program's stash per warp: its kept primitives' corner elements, then their
 * corner ids and positions (batch / arity primitives at most). */
template <class P>
static __host__ __device__ inline size_t vr_prog_warp_stash_elements(uint32_t batch)
{
    return vr_prog_align16((size_t)batch * sizeof(typename P::Element));
}

template <class P>
static __host__ __device__ inline size_t vr_prog_warp_stash_bytes(uint32_t batch)
{
    if constexpr (!vr_prog_ordered<P>::value)
        return 0;
    const size_t ids = ((size_t)batch + batch / P::arity) * sizeof(uint32_t);
    return vr_prog_warp_stash_elements<P>(batch) + vr_prog_align16(ids);
}

template <class P>
static __host__ __device__ inline size_t vr_prog_warp_smem(uint32_t batch, uint32_t warps)
{
    return (size_t)warps * (VR_WARP_SIZE * sizeof(typename P::Element) +
                            vr_prog_warp_map_bytes(batch) + vr_prog_warp_stash_bytes<P>(batch));
}

template <class P>
static __device__ __forceinline__ void vr_prog_warp_ordered(const vr_program_params &p,
                                                            const P &prog);

/* Primitive q's corner ids and elements in a warp round starting at stream index `start`
 * (warp). Nothing for !valid. */
template <class P>
static __device__ __forceinline__ void vr_prog_warp_corners(const vr_program_params &p,
                                                            const typename P::Element *s_el,
                                                            const uint8_t *s_map, uint32_t start,
                                                            uint32_t q, bool valid, uint32_t *ids,
                                                            const typename P::Element **ep)
{
    for (uint32_t k = 0; k < (uint32_t)P::arity; ++k) {
        ids[k] = 0, ep[k] = s_el;
        if (valid) {
            ep[k] = s_el + s_map[P::arity * q + k];
            ids[k] = __ldg(p.indices + start + P::arity * q + k);
        }
    }
}

/* Primitive q of a warp round starting at stream index `start` (warp). */
template <class P>
static __device__ __forceinline__ void vr_prog_warp_primitive(const vr_program_params &p,
                                                              const P &prog,
                                                              const typename P::Element *s_el,
                                                              const uint8_t *s_map, uint32_t start,
                                                              uint32_t q, bool valid)
{
    const uint32_t A = P::arity;
    uint32_t ids[A];
    const typename P::Element *ep[A];
    vr_prog_warp_corners<P>(p, s_el, s_map, start, q, valid, ids, ep);
    vr_prog_primitive(p, prog, valid, start / A + q, ids, ep);
}

template <class P>
static __device__ __forceinline__ void vr_prog_warp_plain(const vr_program_params &p,
                                                          const P &prog);

template <class P>
static __global__ void __launch_bounds__(vr_prog_threads<P>::value)
vr_prog_warp_kernel(vr_program_params p, P prog)
{
    if constexpr (vr_prog_ordered<P>::value)
        vr_prog_warp_ordered(p, prog);
    else
        vr_prog_warp_plain(p, prog);
}

template <class P>
static __device__ __forceinline__ void vr_prog_warp_plain(const vr_program_params &p,
                                                          const P &prog)
{
    typedef typename P::Element E;
    const uint32_t A = P::arity;
    extern __shared__ __align__(16) unsigned char vr_prog_smem[];
    const uint32_t lane = threadIdx.x & (VR_WARP_SIZE - 1);
    const uint32_t warp = threadIdx.x / VR_WARP_SIZE, warps = blockDim.x / VR_WARP_SIZE;
    const uint32_t B = p.limits.batch_indices;
    const uint64_t begin = ((uint64_t)blockIdx.x * warps + warp) * B;
    if (begin >= p.index_count)
        return; /* the whole warp: past the last batch */
    E *const s_el = reinterpret_cast<E *>(vr_prog_smem) + (size_t)warp * VR_WARP_SIZE;
    uint8_t *const s_map = vr_prog_smem + (size_t)warps * VR_WARP_SIZE * sizeof(E) +
                           (size_t)warp * vr_prog_warp_map_bytes(B);
    const uint32_t end = (uint32_t)min(begin + B, (uint64_t)p.index_count);
    for (uint32_t start = (uint32_t)begin; start < end;) {
        uint32_t mine, fill, done;
        vr_warp_load_round(p.indices, start, end, lane, s_map, vr_prog_warp_held(s_map, B), &mine,
                           &fill, &done);
        /* every filled lane computes, also for a trailing incomplete primitive (as the twin) */
        if constexpr (!vr_prog_grouped<P>::value) {
            if (lane < fill)
                s_el[lane] = vr_prog_element(p, prog, mine);
        } else { /* grouped: 32 / lanes slots per pass, each slot's element by its group */
            const vr_prog_group g = vr_prog_group_of(prog);
            for (uint32_t base = 0; base < fill; base += VR_WARP_SIZE >> g.log2) { /* uniform */
                const uint32_t slot = base + (lane >> g.log2);
                const uint32_t id = __shfl_sync(VR_FULL_MASK, mine, slot);
                if (slot < fill) { /* the whole group */
                    const E e = vr_prog_element_grouped(p, prog, id, g);
                    if (g.rank == 0)
                        s_el[slot] = e;
                }
            }
        }
        __syncwarp();
        const uint32_t prims = done / A;
        if constexpr (vr_prog_converged<P>::value) {
            for (uint32_t q = lane; vr_prog_warp_has_work(q, prims); q += VR_WARP_SIZE)
                vr_prog_warp_primitive(p, prog, s_el, s_map, start, q, q < prims);
        } else {
            for (uint32_t q = lane; q < prims; q += VR_WARP_SIZE)
                vr_prog_warp_primitive(p, prog, s_el, s_map, start, q, true);
        }
        __syncwarp(); /* the next round overwrites s_el and s_map */
        start += A * prims;
    }
}

/* ---- warp with pooled rounds: programs that ask for it (pool_rounds) -----------------------
 * A voting round computes one element per filled lane, and a batch's last round is partly
 * filled: 26.7 of 32 lanes at the paper's 96 indices on a vertex-cache order (the simulator's
 * round counts, bench/results/geometry-h100.md "warp batch length"). Where the element costs
 * compute, a round costs a whole warp's issue slots whatever its fill, so warp's speedup is
 * capped at fill / 32 of its invocation bound. Here the resident warps take batches by ticket
 * and each pools its rounds' distinct elements in a ring: it computes them 32 at a time, and
 * calls a round's primitives once every element the round mapped is computed.
 * The batches, their rounds, the elements computed and the primitives called are those of
 * vr_prog_warp_plain and the twin; only which lane computes an element and when a primitive is
 * called change (unordered programs: no order is promised). Only programs with pool_rounds()
 * use it: the renderer at its heavy load, warp 1.344 -> 1.234 ms on sphere:7M (H100).
 * Ring: a round appends its fill (>= 1) ids. After the compute step fewer than 32 are
 * uncomputed; rounds are computed in order, so every pending round has an uncomputed element and
 * begins fewer than 32 + 31 entries back: with the next round's 32 at most 95 entries are live,
 * under VR_POOL_RING. At most VR_POOL_ROUNDS rounds wait; a further one first computes and calls
 * everything pending (a partial round: only batches of a few distinct elements get there). */
#define VR_POOL_RING 128u
#define VR_POOL_ROUNDS 4u
/* VR_POOL_MIN_SHARE (reuse/program.h): below it the rounds kernel runs. */

/* A pending round: its first stream index, primitives, first ring entry and elements. */
struct vr_prog_pool_round {
    uint32_t start, prims, base, fill;
};

template <class P>
static __host__ __device__ inline size_t vr_prog_pool_smem_per_warp(uint32_t batch)
{
    return VR_POOL_RING * (sizeof(typename P::Element) + sizeof(uint32_t)) +
           VR_POOL_ROUNDS * (vr_prog_warp_map_bytes(batch) + sizeof(vr_prog_pool_round));
}

/* Computes the ring's entries [*computed, upto) 32 at a time (the last pass partial when
 * upto - *computed is not a multiple of 32). Warp-uniform. */
template <class P>
static __device__ __forceinline__ void vr_prog_pool_compute(const vr_program_params &p,
                                                            const P &prog,
                                                            typename P::Element *ring_el,
                                                            const uint32_t *ring_id,
                                                            uint32_t *computed, uint32_t upto,
                                                            uint32_t lane)
{
    for (; *computed < upto; *computed += min(upto - *computed, (uint32_t)VR_WARP_SIZE)) {
        const uint32_t at = *computed + lane;
        if (at < upto)
            ring_el[at % VR_POOL_RING] = vr_prog_element(p, prog, ring_id[at % VR_POOL_RING]);
    }
    __syncwarp();
}

/* Calls the primitives of the pending rounds whose elements are all computed, oldest first.
 * Warp-uniform; *head and *waiting index the pending rounds (a ring of VR_POOL_ROUNDS). */
template <class P>
static __device__ __forceinline__ void vr_prog_pool_emit(const vr_program_params &p,
                                                         const P &prog,
                                                         const typename P::Element *ring_el,
                                                         const vr_prog_pool_round *rounds,
                                                         const uint8_t *maps, uint32_t map_bytes,
                                                         uint32_t computed,
                                                         uint32_t *head, uint32_t *waiting,
                                                         uint32_t lane)
{
    const uint32_t A = P::arity;
    while (*waiting) {
        const uint32_t r = *head % VR_POOL_ROUNDS;
        const vr_prog_pool_round rd = rounds[r];
        if (rd.base + rd.fill > computed)
            break; /* rounds are computed in order: the later ones wait too */
        const uint8_t *map = maps + (size_t)r * map_bytes;
        const auto call = [&](uint32_t q, bool valid) {
            uint32_t ids[A];
            const typename P::Element *ep[A];
            for (uint32_t k = 0; k < A; ++k) {
                ids[k] = 0, ep[k] = ring_el;
                if (valid) {
                    ep[k] = ring_el + (rd.base + map[A * q + k]) % VR_POOL_RING;
                    ids[k] = __ldg(p.indices + rd.start + A * q + k);
                }
            }
            vr_prog_primitive(p, prog, valid, rd.start / A + q, ids, ep);
        };
        if constexpr (vr_prog_converged<P>::value) {
            for (uint32_t q = lane; vr_prog_warp_has_work(q, rd.prims); q += VR_WARP_SIZE)
                call(q, q < rd.prims);
        } else {
            for (uint32_t q = lane; q < rd.prims; q += VR_WARP_SIZE)
                call(q, true);
        }
        ++*head, --*waiting;
    }
    __syncwarp(); /* the next round may reuse the emitted rounds' maps and ring entries */
}

template <class P>
static __global__ void __launch_bounds__(vr_prog_threads<P>::value)
vr_prog_warp_pooled_kernel(vr_program_params p, P prog, uint32_t *tickets)
{
    typedef typename P::Element E;
    const uint32_t A = P::arity;
    extern __shared__ __align__(16) unsigned char vr_prog_smem[];
    const uint32_t lane = threadIdx.x & (VR_WARP_SIZE - 1);
    const uint32_t warp = threadIdx.x / VR_WARP_SIZE;
    const uint32_t B = p.limits.batch_indices, map_bytes = (uint32_t)vr_prog_warp_map_bytes(B);
    /* per warp: the ring's elements, their ids, the pending rounds' lane maps, the rounds */
    unsigned char *const mine_smem = vr_prog_smem + (size_t)warp * vr_prog_pool_smem_per_warp<P>(B);
    E *const ring_el = reinterpret_cast<E *>(mine_smem);
    uint32_t *const ring_id = reinterpret_cast<uint32_t *>(ring_el + VR_POOL_RING);
    vr_prog_pool_round *const rounds =
        reinterpret_cast<vr_prog_pool_round *>(ring_id + VR_POOL_RING);
    uint8_t *const maps = reinterpret_cast<uint8_t *>(rounds + VR_POOL_ROUNDS);
    const uint32_t batches = (uint32_t)(((uint64_t)p.index_count + B - 1) / B);
    uint32_t appended = 0, computed = 0, head = 0, waiting = 0;
    for (;;) {
        /* batches by ticket, not by a fixed stride: the schedulers favour an SM's oldest warps,
         * and a young warp with a fixed share finished alone, latency-bound (session 38) */
        uint32_t b = 0;
        if (lane == 0)
            b = atomicAdd(tickets, 1u);
        b = __shfl_sync(VR_FULL_MASK, b, 0);
        if (b >= batches)
            break;
        const uint32_t end = (uint32_t)min(((uint64_t)b + 1) * B, (uint64_t)p.index_count);
        for (uint32_t start = b * B; start < end;) {
            if (waiting == VR_POOL_ROUNDS) { /* too many small rounds wait: all of them now */
                vr_prog_pool_compute(p, prog, ring_el, ring_id, &computed, appended, lane);
                vr_prog_pool_emit(p, prog, ring_el, rounds, maps, map_bytes, computed,
                                  &head, &waiting, lane);
            }
            const uint32_t r = (head + waiting) % VR_POOL_ROUNDS;
            uint32_t id, fill, done;
            uint8_t *const map = maps + (size_t)r * map_bytes;
            vr_warp_load_round(p.indices, start, end, lane, map, vr_prog_warp_held(map, B), &id,
                               &fill, &done);
            if (lane < fill)
                ring_id[(appended + lane) % VR_POOL_RING] = id;
            const uint32_t prims = done / A;
            if (lane == 0)
                rounds[r] = vr_prog_pool_round{start, prims, appended, fill};
            __syncwarp();
            appended += fill, ++waiting;
            /* full rounds only; the rest waits for the next batches' elements */
            vr_prog_pool_compute(p, prog, ring_el, ring_id, &computed,
                                 computed + (appended - computed) / VR_WARP_SIZE * VR_WARP_SIZE,
                                 lane);
            vr_prog_pool_emit(p, prog, ring_el, rounds, maps, map_bytes, computed, &head,
                              &waiting, lane);
            start += A * prims;
        }
    }
    vr_prog_pool_compute(p, prog, ring_el, ring_id, &computed, appended, lane);
    vr_prog_pool_emit(p, prog, ring_el, rounds, maps, map_bytes, computed, &head,
                      &waiting, lane);
}

/* The warp's pointers into an ordered warp block's shared memory: its round (elements, lane
 * map) and its stash of kept primitives at `stash_at` (the corner elements, then their ids and
 * positions). */
template <class P>
struct vr_prog_warp_parts {
    typename P::Element *el, *st_el;
    uint8_t *map;
    uint32_t *st_ids, *st_pos;
};

template <class P>
static __device__ __forceinline__ vr_prog_warp_parts<P> vr_prog_warp_carve(uint32_t B,
                                                                           size_t stash_at)
{
    typedef typename P::Element E;
    extern __shared__ __align__(16) unsigned char vr_prog_smem[];
    const uint32_t warp = threadIdx.x / VR_WARP_SIZE, warps = blockDim.x / VR_WARP_SIZE;
    vr_prog_warp_parts<P> w;
    w.el = reinterpret_cast<E *>(vr_prog_smem) + (size_t)warp * VR_WARP_SIZE;
    w.map = vr_prog_smem + (size_t)warps * VR_WARP_SIZE * sizeof(E) +
            (size_t)warp * vr_prog_warp_map_bytes(B);
    unsigned char *const stash = vr_prog_smem + stash_at + warp * vr_prog_warp_stash_bytes<P>(B);
    w.st_el = reinterpret_cast<E *>(stash);
    w.st_ids = reinterpret_cast<uint32_t *>(stash + vr_prog_warp_stash_elements<P>(B));
    w.st_pos = w.st_ids + B;
    return w;
}

/* Batch `batch` (indices batch x B ..) of the warp: its rounds as in vr_prog_warp_plain, keep()
 * on its primitives, the kept ones copied to the warp's stash (the round's elements are
 * overwritten by the next round). Returns their count (warp-uniform); 0 past the last batch. */
template <class P>
static __device__ __forceinline__ uint32_t vr_prog_warp_keep_batch(const vr_program_params &p,
                                                                   const P &prog, uint64_t batch,
                                                                   const vr_prog_warp_parts<P> &w)
{
    typedef typename P::Element E;
    const uint32_t A = P::arity;
    const uint32_t lane = threadIdx.x & (VR_WARP_SIZE - 1);
    const uint32_t B = p.limits.batch_indices;
    const uint64_t begin = batch * B;
    uint32_t n = 0; /* the warp's kept primitives so far */
    if (begin < p.index_count) { /* warp-uniform */
        const uint32_t end = (uint32_t)min(begin + B, (uint64_t)p.index_count);
        for (uint32_t start = (uint32_t)begin; start < end;) {
            uint32_t mine, fill, done;
            vr_warp_load_round(p.indices, start, end, lane, w.map, vr_prog_warp_held(w.map, B),
                               &mine, &fill, &done);
            if (lane < fill)
                w.el[lane] = vr_prog_element(p, prog, mine);
            __syncwarp();
            const uint32_t prims = done / A;
            for (uint32_t q = lane; vr_prog_warp_has_work(q, prims); q += VR_WARP_SIZE) {
                const bool valid = q < prims;
                uint32_t ids[A];
                const E *ep[A];
                vr_prog_warp_corners<P>(p, w.el, w.map, start, q, valid, ids, ep);
                const uint32_t pos = start / A + q;
                const bool keep = vr_prog_keep(p, prog, valid, pos, pos, ids, ep);
                const unsigned ballot = __ballot_sync(VR_FULL_MASK, keep);
                if (keep) {
                    const uint32_t i = n + (uint32_t)__popc(ballot & vr_compact_lanemask_lt());
                    for (uint32_t k = 0; k < A; ++k) {
                        w.st_el[A * i + k] = *ep[k];
                        w.st_ids[A * i + k] = ids[k];
                    }
                    w.st_pos[i] = pos;
                }
                n += (uint32_t)__popc(ballot);
            }
            __syncwarp(); /* the next round overwrites s_el and s_map */
            start += A * prims;
        }
    }
    return n;
}

/* The warp's n stashed primitives stored from slot `base` on. */
template <class P>
static __device__ __forceinline__ void vr_prog_warp_store_stash(const P &prog,
                                                                const vr_prog_warp_parts<P> &w,
                                                                uint32_t n, uint32_t base)
{
    typedef typename P::Element E;
    const uint32_t A = P::arity;
    for (uint32_t i = threadIdx.x & (VR_WARP_SIZE - 1); i < n; i += VR_WARP_SIZE) {
        const E *ep[A];
        for (uint32_t k = 0; k < A; ++k)
            ep[k] = w.st_el + A * i + k;
        prog.store(base + i, w.st_pos[i], w.st_pos[i], w.st_ids + A * i, ep);
    }
}

/* Ordered: each warp runs its batch (vr_prog_warp_keep_batch), the block ranks its warps' counts
 * in warp order (= stream order), hands off, and each warp stores its stash. Every warp of the
 * block takes part, with or without a batch. */
template <class P>
static __device__ __forceinline__ void vr_prog_warp_ordered(const vr_program_params &p,
                                                            const P &prog)
{
    typedef typename P::Element E;
    const uint32_t lane = threadIdx.x & (VR_WARP_SIZE - 1);
    const uint32_t warp = threadIdx.x / VR_WARP_SIZE, warps = blockDim.x / VR_WARP_SIZE;
    const uint32_t B = p.limits.batch_indices;
    const uint64_t batch = (uint64_t)vr_prog_work(prog) * warps + warp;
    const size_t round_bytes = VR_WARP_SIZE * sizeof(E) + vr_prog_warp_map_bytes(B);
    const vr_prog_warp_parts<P> w = vr_prog_warp_carve<P>(B, warps * round_bytes);
    const uint32_t n = vr_prog_warp_keep_batch(p, prog, batch, w);
    /* the warp's first slot in the block: lane 0 ranks the warp's count (warps in order) */
    const uint32_t first =
        __shfl_sync(VR_FULL_MASK, vr_compact_block_rank(vr_prog_order_shared<P>(),
                                                        lane == 0 ? n : 0u), 0);
    const uint32_t base = vr_prog_order_base(prog) + first; /* its barriers: the stash seen */
    vr_prog_warp_store_stash(prog, w, n, base);
    vr_compact_end(prog.order_dev);
}

/* A warp's part of a ticket for its store: its first slot in the block's count, its count. */
struct vr_prog_warp_part {
    uint32_t first, n;
};

/* Ink for warp as persistent blocks (vr_prog_batched_ink_kernel's scheme): ticket t is the
 * block kernel's work item (its warps' batches t x warps ..), the warps' stashes in two halves
 * at `stash_at` and stash_at + half_bytes: a block ranks ticket t into one half, publishes its
 * count, then finishes the ticket before and each warp stores its stash from the other half.
 * The deadlock argument is the batched kernel's. H100, sphere:7M (session 30): 0.90x the time of
 * a block per batch at simple load, 0.93-0.95x at light; still 1.36x the atomic queue at simple
 * load (62 registers, 59 KB of shared memory at block 256: 3 blocks per SM). */
template <class P>
static __global__ void __launch_bounds__(vr_prog_threads<P>::value)
vr_prog_warp_ink_kernel(vr_program_params p, P prog, uint32_t tickets, uint32_t stash_at,
                        uint32_t half_bytes)
{
    vr_compact_shared *cs = vr_prog_order_shared<P>();
    const uint32_t lane = threadIdx.x & (VR_WARP_SIZE - 1);
    const uint32_t warp = threadIdx.x / VR_WARP_SIZE, warps = blockDim.x / VR_WARP_SIZE;
    const uint32_t B = p.limits.batch_indices;
    vr_prog_ink_loop<vr_prog_warp_part>(
        prog, tickets, half_bytes,
        [&](uint32_t ticket, uint32_t cur, uint32_t *total) {
            if (threadIdx.x == 0)
                cs->total = 0; /* read after the rank's first barrier */
            vr_prog_warp_part w;
            w.n = vr_prog_warp_keep_batch(p, prog, (uint64_t)ticket * warps + warp,
                                          vr_prog_warp_carve<P>(B, stash_at + cur));
            w.first = __shfl_sync(VR_FULL_MASK, vr_compact_block_rank(cs, lane == 0 ? w.n : 0u),
                                  0);
            *total = cs->total; /* final: the rank's second barrier */
            return w;
        },
        [&](uint32_t other, uint32_t base, uint32_t, const vr_prog_warp_part &w) {
            vr_prog_warp_store_stash(prog, vr_prog_warp_carve<P>(B, stash_at + other), w.n,
                                     base + w.first);
        });
}

/* ---- dynamic batches and plans: one block per batch ----------------------------------------
 * Shared memory: max_unique elements, then the renderer's table layout (unique ids, hash table,
 * position map). The deduplication fills s.map and s.unique, then dense ids are computed
 * strided by the block and primitives assembled strided by the block. */
template <class P>
static __host__ __device__ inline size_t vr_prog_elements_bytes(uint32_t max_unique)
{
    return vr_prog_align16((size_t)max_unique * sizeof(typename P::Element));
}

/* Byte offsets of a dynamic batch's shared-memory parts - the program's elements, unique ids,
 * hash table, position map - and `bytes` in all. Two layouts, chosen per program:
 * - elements first (vr_prog_layout_of; the default): the host computes it and passes it to the
 *   hashed kernel, so each part's address is one parameter added to the window's base. Computed
 *   in the kernel from max_unique, ptxas rematerialised the table's and the map's addresses
 *   (about 15 instructions) at every key the render program's phash kernel inserted, where the
 *   renderer's kernel keeps them in uniform registers (ncu source view, H100, session 22: 30M
 *   of the 33M instructions it executed more than the renderer's).
 * - table first (vr_prog_layout_table_first; P::derived_layout): the kernel computes it itself;
 *   the table's address is a constant and the map's one shift of table_log2 away, so the
 *   insertion loop needs no parameter - for kernels that spill with the argument's addresses
 *   live (the staged render program at 32 registers).
 * The sort kernel computes the first layout itself (no table). */
typedef struct vr_prog_layout {
    uint32_t elements, unique, table, map, bytes;
} vr_prog_layout;

template <class P>
static __host__ __device__ inline vr_prog_layout vr_prog_layout_of(uint32_t max_unique,
                                                                   uint32_t slots,
                                                                   uint32_t max_indices)
{
    vr_prog_layout l;
    l.elements = 0;
    l.unique = (uint32_t)vr_prog_elements_bytes<P>(max_unique);
    l.table = l.unique + max_unique * (uint32_t)sizeof(uint32_t);
    l.map = l.table + slots * (uint32_t)sizeof(uint32_t);
    l.bytes = l.map + max_indices * (uint32_t)sizeof(uint16_t);
    return l;
}

/* l moved `by` bytes into the window (the persistent ink kernel's second half) */
static __device__ __forceinline__ vr_prog_layout vr_prog_layout_shift(vr_prog_layout l,
                                                                      uint32_t by)
{
    l.elements += by, l.unique += by, l.table += by, l.map += by;
    return l;
}

/* l with its elements at offset 0, as vr_prog_layout_of puts them, known to the compiler */
static __device__ __forceinline__ vr_prog_layout vr_prog_elements_first(vr_prog_layout l)
{
    l.elements = 0;
    return l;
}

/* The table-first layout (see vr_prog_layout): table, map, unique ids, elements (16-aligned). */
template <class P>
static __host__ __device__ inline vr_prog_layout vr_prog_layout_table_first(uint32_t max_unique,
                                                                           uint32_t slots,
                                                                           uint32_t max_indices)
{
    vr_prog_layout l;
    l.table = 0;
    l.map = slots * (uint32_t)sizeof(uint32_t);
    l.unique = (l.map + max_indices * (uint32_t)sizeof(uint16_t) + 3u) & ~3u;
    l.elements = vr_prog_align16(l.unique + max_unique * (uint32_t)sizeof(uint32_t));
    l.bytes = l.elements + (uint32_t)vr_prog_elements_bytes<P>(max_unique);
    return l;
}

/* The hashed kernel's layout for P: table first with P::derived_layout, else elements first. */
template <class P>
static __host__ __device__ inline vr_prog_layout vr_prog_hashed_layout(uint32_t max_unique,
                                                                      uint32_t slots,
                                                                      uint32_t max_indices)
{
    return vr_prog_derived_layout<P>::value
               ? vr_prog_layout_table_first<P>(max_unique, slots, max_indices)
               : vr_prog_layout_of<P>(max_unique, slots, max_indices);
}

template <class P>
static __device__ __forceinline__ vr_dyn_smem vr_prog_dyn_carve(const vr_prog_layout &l,
                                                                typename P::Element **el)
{
    extern __shared__ __align__(16) unsigned char vr_prog_smem[];
    *el = reinterpret_cast<typename P::Element *>(vr_prog_smem + l.elements);
    vr_dyn_smem s;
    s.shaded = NULL; /* the program's elements live at *el */
    s.unique = reinterpret_cast<uint32_t *>(vr_prog_smem + l.unique);
    s.table = reinterpret_cast<uint32_t *>(vr_prog_smem + l.table);
    s.map = reinterpret_cast<uint16_t *>(vr_prog_smem + l.map);
    return s;
}

/* Batch `batch`'s bounds, checked as vr_dyn_batch_bounds does for triangles: 0 (overflow
 * counted by thread 0) when they break the contract, block-uniformly. A copy with the arity
 * rather than a shared function: routing the renderer's check through one moved ptxas's register
 * allocation in several sort instantiations (the renderer's kernels stay as measured). */
template <class P>
static __device__ __forceinline__ int vr_prog_batch(const vr_program_params &p, uint32_t batch,
                                                    uint32_t *start, uint32_t *count)
{
    const uint32_t A = P::arity;
    const uint32_t s = __ldg(p.batch_starts + batch), e = __ldg(p.batch_starts + batch + 1);
    *start = s;
    *count = e >= s ? e - s : 0;
    const int ok = e >= s && e <= p.index_count && s % A == 0 && *count % A == 0 &&
                   *count <= p.limits.max_indices && (batch != 0 || s == 0) &&
                   (batch + 1 != p.batch_count || e == p.index_count);
    if (!ok && threadIdx.x == 0)
        atomicAdd(&p.counters->overflow, *count >= A ? *count / A : 1u);
    return ok && *count != 0;
}

/* Primitive q of the batch starting at stream index `start`, its corners from the block's
 * elements (dynamic batches, plans). via_table: s.map holds table slots (hash), else dense ids.
 * The gather is vr_prog_batch_corners' (below), written out: through it ptxas scheduled the
 * walk's sort kernels differently (session 24), and these kernels are the measured ones. */
template <class P, bool PLAN>
static __device__ __forceinline__ void vr_prog_batch_primitive(const vr_program_params &p,
                                                               const P &prog, const vr_dyn_smem &s,
                                                               const typename P::Element *el,
                                                               int via_table, uint32_t start,
                                                               uint32_t q, bool valid)
{
    const uint32_t A = P::arity;
    uint32_t ids[A];
    const typename P::Element *ep[A];
    for (uint32_t k = 0; k < A; ++k) {
        ids[k] = 0, ep[k] = el;
        if (valid) {
            uint32_t id = s.map[A * q + k];
            if (via_table)
                id = s.table[id];
            ep[k] = el + id;
            ids[k] = s.unique[id];
        }
    }
    vr_prog_primitive<P, PLAN>(p, prog, valid, start / A + q, ids, ep);
}

/* Primitive q's corner ids and elements in the block's shared memory (dynamic batches, plans):
 * s.map holds table slots when via_table (hash), else dense ids (sort). Nothing for !valid. */
template <class P>
static __device__ __forceinline__ void vr_prog_batch_corners(const vr_dyn_smem &s,
                                                             const typename P::Element *el,
                                                             int via_table, uint32_t q,
                                                             bool valid, uint32_t *ids,
                                                             const typename P::Element **ep)
{
    for (uint32_t k = 0; k < (uint32_t)P::arity; ++k) {
        ids[k] = 0, ep[k] = el;
        if (valid) {
            uint32_t id = s.map[P::arity * q + k];
            if (via_table)
                id = s.table[id];
            ep[k] = el + id;
            ids[k] = s.unique[id];
        }
    }
}

/* Shared memory an ordered program's batched kernels add after their layout: a 16-bit rank per
 * primitive of a batch (0 for other programs). */
template <class P>
static __host__ __device__ inline uint32_t vr_prog_ranks_bytes(uint32_t max_indices)
{
    if constexpr (!vr_prog_ordered<P>::value)
        return 0;
    return vr_prog_align16(max_indices / (uint32_t)P::arity * (uint32_t)sizeof(uint16_t));
}

/* Ranks an ordered program's primitives of a batch, corners in the block's elements (dynamic
 * batches, plans): rounds of blockDim primitives, keep() once each, each primitive's rank in the
 * block written to `ranks` (0xFFFF: dropped; a batch has fewer primitives). The block's total is
 * final after the next barrier. */
template <class P, bool PLAN>
static __device__ __forceinline__ void vr_prog_batch_rank(const vr_program_params &p,
                                                          const P &prog, const vr_dyn_smem &s,
                                                          const typename P::Element *el,
                                                          int via_table, uint32_t start,
                                                          uint32_t prims, uint16_t *ranks)
{
    typedef typename P::Element E;
    const uint32_t A = P::arity;
    for (uint32_t r = 0; r < prims; r += blockDim.x) { /* block-uniform */
        const uint32_t q = r + threadIdx.x, pos = start / A + q;
        bool valid = q < prims;
        uint32_t ids[A];
        const E *ep[A];
        vr_prog_batch_corners<P>(s, el, via_table, q, valid, ids, ep);
        const uint32_t prim = vr_prog_source_id<P, PLAN>(p, pos, &valid, true);
        const bool keep = vr_prog_keep(p, prog, valid, prim, pos, ids, ep);
        const uint32_t rank = vr_compact_block_rank(vr_prog_order_shared<P>(), keep);
        if (q < prims)
            ranks[q] = keep ? (uint16_t)rank : (uint16_t)0xFFFFu;
    }
}

/* Stores the kept primitives of a batch that vr_prog_batch_rank ranked, each at base + its rank
 * (the ranks visible to every thread: a barrier since). */
template <class P, bool PLAN>
static __device__ __forceinline__ void vr_prog_batch_store(const vr_program_params &p,
                                                           const P &prog, const vr_dyn_smem &s,
                                                           const typename P::Element *el,
                                                           int via_table, uint32_t start,
                                                           uint32_t prims, const uint16_t *ranks,
                                                           uint32_t base)
{
    typedef typename P::Element E;
    const uint32_t A = P::arity;
    for (uint32_t q = threadIdx.x; q < prims; q += blockDim.x) {
        const uint32_t rank = ranks[q];
        if (rank == 0xFFFFu)
            continue;
        const uint32_t pos = start / A + q;
        bool valid = true;
        uint32_t ids[A];
        const E *ep[A];
        vr_prog_batch_corners<P>(s, el, via_table, q, true, ids, ep);
        const uint32_t prim = vr_prog_source_id<P, PLAN>(p, pos, &valid, false);
        prog.store(base + rank, prim, pos, ids, ep);
    }
}

/* An ordered program's primitives of a batch (dynamic batches, plans): ranked, the hand-off,
 * then every kept primitive stored at base + its rank with no barrier in between (the own
 * kernels rank every round again; ncu on the H100 showed a first version of this, which did
 * too, spilling its corner pointers across the ranking's barriers: 4x the own kernel's local
 * traffic). */
template <class P, bool PLAN>
static __device__ void vr_prog_batch_ordered(const vr_program_params &p, const P &prog,
                                             const vr_dyn_smem &s, const typename P::Element *el,
                                             int via_table, uint32_t start, uint32_t count,
                                             uint16_t *ranks)
{
    const uint32_t prims = count / P::arity;
    vr_prog_batch_rank<P, PLAN>(p, prog, s, el, via_table, start, prims, ranks);
    const uint32_t base = vr_prog_order_base(prog); /* its barriers publish the ranks */
    vr_prog_batch_store<P, PLAN>(p, prog, s, el, via_table, start, prims, ranks, base);
    vr_compact_end(prog.order_dev);
}

/* After deduplication (and a __syncthreads): compute each distinct element once, then every
 * primitive of the batch. via_table: s.map holds table slots (hash), else dense ids (sort). */
template <class P, bool PLAN>
static __device__ __forceinline__ void vr_prog_finish(const vr_program_params &p, const P &prog,
                                                      const vr_dyn_smem &s,
                                                      typename P::Element *el, int via_table,
                                                      uint32_t start, uint32_t count,
                                                      uint32_t unique_count, uint32_t ranks_at)
{
    typedef typename P::Element E;
    const uint32_t A = P::arity;
    if constexpr (!vr_prog_grouped<P>::value) {
        for (uint32_t j = threadIdx.x; j < unique_count; j += blockDim.x)
            el[j] = vr_prog_element(p, prog, s.unique[j]);
    } else { /* a group per element: j the same on all its lanes */
        const vr_prog_group g = vr_prog_group_of(prog);
        for (uint32_t j = threadIdx.x >> g.log2; j < unique_count; j += blockDim.x >> g.log2) {
            const E e = vr_prog_element_grouped(p, prog, s.unique[j], g);
            if (g.rank == 0)
                el[j] = e;
        }
    }
    __syncthreads();
    if constexpr (vr_prog_ordered<P>::value) {
        extern __shared__ __align__(16) unsigned char vr_prog_smem[];
        vr_prog_batch_ordered<P, PLAN>(p, prog, s, el, via_table, start, count,
                                       reinterpret_cast<uint16_t *>(vr_prog_smem + ranks_at));
    } else if constexpr (vr_prog_converged<P>::value) {
        for (uint32_t base = 0; base < count / A; base += blockDim.x) /* block-uniform */
            vr_prog_batch_primitive<P, PLAN>(p, prog, s, el, via_table, start, base + threadIdx.x,
                                             base + threadIdx.x < count / A);
    } else {
        for (uint32_t q = threadIdx.x; q < count / A; q += blockDim.x)
            vr_prog_batch_primitive<P, PLAN>(p, prog, s, el, via_table, start, q, true);
    }
}

/* The hashed kernels' table of a batch: its `count` indices from p.indices + start inserted,
 * each one's slot into s.map (phash: vr_phash_insert_batch, a warp helping with long probes;
 * hash: one thread per index). Every thread calls it; a __syncthreads must follow. */
template <int PHASH>
static __device__ __forceinline__ void vr_prog_hash_insert(const vr_program_params &p,
                                                           const vr_dyn_smem &s, uint32_t start,
                                                           uint32_t count, uint32_t table_log2,
                                                           uint32_t *failed)
{
    if (PHASH)
        vr_phash_insert_batch(s, p.indices + start, count, table_log2, failed);
    else
        for (uint32_t i = threadIdx.x; i < count; i += blockDim.x)
            s.map[i] = (uint16_t)vr_dyn_hash_insert(s, __ldg(p.indices + start + i), table_log2,
                                                    failed);
}

/* hash (PHASH 0: vr_dyn_hash_insert per key) and phash (1: vr_phash_insert_batch), and the
 * static plans (PLAN: hash's table over the plan-ordered stream, source ids from prim_ids). No
 * register cap by default (the renderer's hash and phash take 32, VR_DYN_MAX_REGS): a program's
 * element function is its own, and the cap made the Loop and walk programs spill - on the H100,
 * hash and phash ran 1.7x slower than sort, which has no cap, at the same invocation count. A
 * program opts in with hashed_max_regs. */
template <class P, int PHASH, bool PLAN>
static __global__ void
__launch_bounds__(vr_prog_threads<P>::value, vr_prog_hashed_blocks<P>::value)
vr_prog_hashed_kernel(vr_program_params p, P prog, uint32_t table_log2, vr_prog_layout layout)
{
    __shared__ uint32_t s_warp[VR_WARP_SIZE];
    __shared__ uint32_t s_failed;
    uint32_t start, count;
    if (!vr_prog_batch<P>(p, vr_prog_work(prog), &start, &count)) {
        if constexpr (vr_prog_ordered<P>::value)
            vr_prog_order_skip(prog);
        return;
    }
    const uint32_t slots = 1u << table_log2;
    typename P::Element *el;
    const vr_dyn_smem s = vr_prog_derived_layout<P>::value /* computed here: see vr_prog_layout */
                              ? vr_prog_dyn_carve<P>(vr_prog_hashed_layout<P>(
                                    p.limits.max_unique, slots, p.limits.max_indices), &el)
                              : vr_prog_dyn_carve<P>(vr_prog_elements_first(layout), &el);
    vr_dyn_clear_table(s, slots);
    if (threadIdx.x == 0)
        s_failed = 0;
    __syncthreads();
    vr_prog_hash_insert<PHASH>(p, s, start, count, table_log2, &s_failed);
    __syncthreads();
    uint32_t unique_count;
    if (!vr_dyn_compact_table_n(p.limits.max_unique, s, slots, s_warp, &s_failed,
                                &unique_count)) {
        if (threadIdx.x == 0)
            atomicAdd(&p.counters->overflow, count / P::arity);
        if constexpr (vr_prog_ordered<P>::value)
            vr_prog_order_skip(prog);
        return;
    }
    __syncthreads();
    vr_prog_finish<P, PLAN>(p, prog, s, el, 1, start, count, unique_count,
                            vr_prog_derived_layout<P>::value
                                ? vr_prog_hashed_layout<P>(p.limits.max_unique, slots,
                                                           p.limits.max_indices).bytes
                                : layout.bytes);
}

/* An ordered program's sort kernel keeps to 48 registers where it sorts at most 4 keys per
 * thread, the own block-compacted sort kernel's count at block 256 and 1024 indices: at 64 it
 * had one resident block per SM fewer there, and its ink runs were 1.03-1.09x the own
 * kernel's (H100, session 24). With more keys per thread 48 registers spill hundreds of bytes
 * (ptxas), so those keep their own count. A kernel of its own, so that the other programs'
 * launch bounds (and code) stay as they are. */
template <int BLOCK, int CAP>
struct vr_prog_sort_ordered_blocks {
    static constexpr int per = 65536 / (BLOCK * 48);
    static constexpr int value = CAP / BLOCK > 4 ? 1 : per < 1 ? 1 : per > 32 ? 32 : per;
};

/* The persistent ink kernel's batch deduplication (D of vr_prog_batched_ink_kernel): the kernel's
 * launch bounds, its shared-memory layout in a half, dedup() (every thread calls it; the table or
 * sort's result in s, false block-uniformly when the batch has more than max_unique distinct
 * ids; a __syncthreads must follow), whether s.map holds table slots (via_table) and plans. */
template <int PHASH, bool PLAN>
struct vr_prog_ink_hashed { /* hash (PHASH 0), phash (1), patch and meshlet (PLAN) */
    enum { via_table = 1, plan = PLAN };
    template <class P>
    struct bounds {
        enum { threads = vr_prog_threads<P>::value, blocks = vr_prog_hashed_blocks<P>::value };
    };
    template <class P>
    static __device__ __forceinline__ vr_prog_layout layout(const vr_program_params &p,
                                                            uint32_t slots,
                                                            const vr_prog_layout &given)
    {
        return vr_prog_derived_layout<P>::value
                   ? vr_prog_hashed_layout<P>(p.limits.max_unique, slots, p.limits.max_indices)
                   : vr_prog_elements_first(given);
    }
    template <class P>
    static __device__ __forceinline__ int dedup(const vr_program_params &p, const vr_dyn_smem &s,
                                                uint32_t start, uint32_t count,
                                                uint32_t table_log2, uint32_t slots,
                                                uint32_t *s_warp, uint32_t *s_failed,
                                                uint32_t *unique_count)
    {
        vr_dyn_clear_table(s, slots);
        __syncthreads();
        vr_prog_hash_insert<PHASH>(p, s, start, count, table_log2, s_failed);
        __syncthreads();
        return vr_dyn_compact_table_n(p.limits.max_unique, s, slots, s_warp, s_failed,
                                      unique_count);
    }
};

template <int BLOCK, int CAP>
struct vr_prog_ink_sort { /* sort: the ordered sort kernel's bounds, no table */
    enum { via_table = 0, plan = 0 };
    template <class P>
    struct bounds {
        enum { threads = BLOCK, blocks = vr_prog_sort_ordered_blocks<BLOCK, CAP>::value };
    };
    template <class P>
    static __device__ __forceinline__ vr_prog_layout layout(const vr_program_params &,
                                                            uint32_t, const vr_prog_layout &given)
    {
        return vr_prog_elements_first(given);
    }
    template <class P>
    static __device__ __forceinline__ int dedup(const vr_program_params &p, const vr_dyn_smem &s,
                                                uint32_t start, uint32_t count, uint32_t,
                                                uint32_t, uint32_t *, uint32_t *,
                                                uint32_t *unique_count)
    {
        return vr_sort_dedup<BLOCK, CAP, vr_prog_in_order<P>::value>(
            p.indices + start, count, s, p.limits.max_unique, unique_count);
    }
};

/* ---- ink through persistent blocks (programs with cheap_elements(), or VR_PROG_INK) ---------
 * Why: one block per batch waits at its hand-off for the counts of every earlier ticket, so at
 * simple load ink ran 1.2-1.4x the atomic queue even through the ordered programs, while collate
 * (one atomicAdd, no wait) is at par: the resident blocks queue behind the slowest of them. Here
 * as many blocks as fit loop over the batches by ticket, as the stand-alone select kernel does
 * (pipeline/compact/compact.cu): a block ranks batch t, publishes its count, and only then
 * finishes the batch before it (t' < t) and stores its kept primitives, so a batch's hand-off
 * waits a whole batch later, when its predecessors have long published. Two halves of shared
 * memory (layout + ranks each) hold the batch being ranked and the batch being stored.
 * Measured (H100, sphere:7M, block 256; bench/results/ink-persistent-*.csv): 0.72-0.84x the
 * block-per-batch kernel at simple load (hash ink / atomic 1.27 -> 1.04), 0.87-0.99x at light
 * load, 0.99-1.08x at medium and 1.03-1.12x at heavy load: hence the default only for programs
 * that say their element function is cheap.
 * Why heavy load loses (session 28, a per-ticket trace): the warp schedulers favour an SM's
 * oldest warps. With a block per batch the oldest block holds the oldest ticket, which is what
 * the hand-off needs; persistent blocks keep their age, so at heavy load (ranking ALU-bound)
 * the SM's youngest block ranks a batch in 76 us and its oldest in 21, the old blocks then wait
 * for the young ones' tickets (32 us a batch), and the schedulers issue 0.81 instructions a
 * cycle against 0.90 (ncu, session 27). Tried without gain (bench/NOTES.md, session 28): fewer
 * blocks per SM with the L1 that frees (4-6: no better; nor is a block per batch slower at the
 * largest shared carveout), the finish in the last warp while the others shade (no change),
 * blocks that exit after K = 2-8 batches so that age follows tickets again (1.05-1.29x).
 * Deadlock: a block waits only in the finish of t' (for the counts of tickets below t', and for
 * section flags it can add up from those counts), and only while it holds no ticket it has not
 * published (it takes the next one after that wait, then stores t' and ranks and publishes the
 * new one without waiting); so every count taken is published, and by induction on the ticket
 * every finish returns. A block holds only tickets it took while running, so residency is not
 * needed.
 * D: the batch's deduplication - hash, phash, patch, meshlet (vr_prog_ink_hashed) and sort
 * (vr_prog_ink_sort: 1.41 -> 1.11x the atomic queue at simple load, 0.91x a block per batch at
 * light; H100, sphere:7M, session 29). kept(n) runs once per batch. */
/* A batch's part of a ticket for its store: its first index and primitives (0: none kept). */
struct vr_prog_batch_part {
    uint32_t start, prims;
};

template <class P, class D>
static __global__ void
__launch_bounds__(D::template bounds<P>::threads, D::template bounds<P>::blocks)
vr_prog_batched_ink_kernel(vr_program_params p, P prog, uint32_t table_log2,
                           vr_prog_layout layout, uint32_t half_bytes)
{
    typedef typename P::Element E;
    extern __shared__ __align__(16) unsigned char vr_prog_smem[];
    __shared__ uint32_t s_warp[VR_WARP_SIZE];
    __shared__ uint32_t s_failed;
    vr_compact_shared *cs = vr_prog_order_shared<P>();
    const uint32_t A = P::arity, slots = 1u << table_log2;
    const vr_prog_layout l = D::template layout<P>(p, slots, layout);
    vr_prog_ink_loop<vr_prog_batch_part>(
        prog, p.batch_count, half_bytes,
        [&](uint32_t ticket, uint32_t cur, uint32_t *total) {
            uint32_t count = 0, start = 0;
            E *el;
            const vr_dyn_smem s = vr_prog_dyn_carve<P>(vr_prog_layout_shift(l, cur), &el);
            uint16_t *ranks = reinterpret_cast<uint16_t *>(vr_prog_smem + cur + l.bytes);
            if (threadIdx.x == 0) {
                s_failed = 0;
                cs->total = 0;
            }
            bool ok = vr_prog_batch<P>(p, ticket, &start, &count) != 0;
            uint32_t unique_count = 0;
            if (ok) {
                ok = D::template dedup<P>(p, s, start, count, table_log2, slots, s_warp,
                                          &s_failed, &unique_count);
                if (!ok && threadIdx.x == 0)
                    atomicAdd(&p.counters->overflow, count / A);
            }
            __syncthreads();
            const uint32_t prims = ok ? count / A : 0;
            for (uint32_t j = threadIdx.x; ok && j < unique_count; j += blockDim.x)
                el[j] = vr_prog_element(p, prog, s.unique[j]);
            __syncthreads();
            vr_prog_batch_rank<P, D::plan>(p, prog, s, el, D::via_table, start, prims, ranks);
            __syncthreads(); /* cs->total final, the ranks written */
            *total = cs->total;
            return vr_prog_batch_part{ok ? start : 0, prims};
        },
        [&](uint32_t other, uint32_t base, uint32_t, const vr_prog_batch_part &b) {
            E *el;
            const vr_dyn_smem s = vr_prog_dyn_carve<P>(vr_prog_layout_shift(l, other), &el);
            const uint16_t *ranks = reinterpret_cast<const uint16_t *>(vr_prog_smem + other +
                                                                       l.bytes);
            vr_prog_batch_store<P, D::plan>(p, prog, s, el, D::via_table, b.start, b.prims,
                                            ranks, base);
        });
}

template <class P, int BLOCK, int CAP>
static __device__ __forceinline__ void vr_prog_sort_body(const vr_program_params &p,
                                                         const P &prog)
{
    uint32_t start, count;
    if (!vr_prog_batch<P>(p, vr_prog_work(prog), &start, &count)) {
        if constexpr (vr_prog_ordered<P>::value)
            vr_prog_order_skip(prog);
        return;
    }
    typename P::Element *el;
    const vr_dyn_smem s =
        vr_prog_dyn_carve<P>(vr_prog_layout_of<P>(p.limits.max_unique, 0, 0), &el);
    uint32_t unique_count;
    if (!vr_sort_dedup<BLOCK, CAP, vr_prog_in_order<P>::value>(p.indices + start, count, s,
                                                                p.limits.max_unique,
                                                                &unique_count)) {
        if (threadIdx.x == 0)
            atomicAdd(&p.counters->overflow, count / P::arity);
        if constexpr (vr_prog_ordered<P>::value)
            vr_prog_order_skip(prog);
        return;
    }
    __syncthreads();
    vr_prog_finish<P, false>(p, prog, s, el, 0, start, count, unique_count,
                             vr_prog_layout_of<P>(p.limits.max_unique, 0, p.limits.max_indices)
                                 .bytes);
}

template <class P, int BLOCK, int CAP>
static __global__ void __launch_bounds__(BLOCK) vr_prog_sort_kernel(vr_program_params p, P prog)
{
    vr_prog_sort_body<P, BLOCK, CAP>(p, prog);
}

template <class P, int BLOCK, int CAP>
static __global__ void __launch_bounds__(BLOCK, vr_prog_sort_ordered_blocks<BLOCK, CAP>::value)
vr_prog_sort_kernel_ordered(vr_program_params p, P prog)
{
    vr_prog_sort_body<P, BLOCK, CAP>(p, prog);
}

/* The sort kernel for P (the ordered one for an ordered program). */
template <class P, int BLOCK, int CAP>
static void (*vr_prog_sort_kernel_of(void))(vr_program_params, P)
{
    if constexpr (vr_prog_ordered<P>::value)
        return vr_prog_sort_kernel_ordered<P, BLOCK, CAP>;
    else
        return vr_prog_sort_kernel<P, BLOCK, CAP>;
}

/* ---- multi: every element into a global table, then every primitive from it ----------------
 * Table slots (vr_program_slot_bytes): an element of up to 16 bytes as it is; a larger one in
 * whole 16-byte words, written as uint4 vectors (Loop's 12-byte points in 16-byte vector slots
 * ran 14-17% slower than in 12-byte ones on sphere:1.3M and sphere:7M, H100, session 21). A
 * primitive reads a slot of up to 32 bytes whole,
 * as vectors (a vertex record, which it reads all of: the gather of a 28-byte vr_shaded by
 * scalar loads made the render program's multi 13-15% slower than the renderer's at simple
 * load, apps-h100.md), a larger one in place through a 16-byte aligned pointer (the walk's
 * 96-byte moves, of which the draw reads a few words). */
template <class E>
struct vr_prog_slot {
    static constexpr bool vector = sizeof(E) > 16;
    static constexpr uint32_t words = (uint32_t)((sizeof(E) + 15u) / 16u); /* when vector */
};

template <class E>
static __device__ __forceinline__ void vr_prog_slot_store(void *table, uint32_t id, const E &e)
{
    if constexpr (!vr_prog_slot<E>::vector) {
        static_cast<E *>(table)[id] = e;
    } else {
        uint4 w[vr_prog_slot<E>::words];
        w[vr_prog_slot<E>::words - 1] = make_uint4(0u, 0u, 0u, 0u); /* the padding, defined */
        memcpy(w, &e, sizeof(E));
        uint4 *dst = static_cast<uint4 *>(table) + (size_t)id * vr_prog_slot<E>::words;
        for (uint32_t i = 0; i < vr_prog_slot<E>::words; ++i)
            dst[i] = w[i];
    }
}

/* Element `id` of the table for primitive(): *copy holds it when read whole, else the result
 * points into the table. */
template <class E>
static __device__ __forceinline__ const E *vr_prog_slot_read(const void *table, uint32_t id,
                                                            E *copy)
{
    if constexpr (!vr_prog_slot<E>::vector) {
        return static_cast<const E *>(table) + id;
    } else {
        const uint4 *src = static_cast<const uint4 *>(table) + (size_t)id * vr_prog_slot<E>::words;
        if constexpr (vr_prog_slot<E>::words <= 2) {
            uint4 w[vr_prog_slot<E>::words];
            for (uint32_t i = 0; i < vr_prog_slot<E>::words; ++i)
                w[i] = __ldg(src + i);
            memcpy(copy, w, sizeof(E));
            return copy;
        } else {
            return static_cast<const E *>(__builtin_assume_aligned(src, 16));
        }
    }
}

template <class P>
static __global__ void __launch_bounds__(vr_prog_threads<P>::value)
vr_prog_multi_elements(vr_program_params p, P prog)
{
    if constexpr (!vr_prog_grouped<P>::value) {
        const uint32_t v = blockIdx.x * blockDim.x + threadIdx.x;
        if (v < p.element_count)
            vr_prog_slot_store(p.temp, v, vr_prog_element(p, prog, v));
    } else { /* a group per element (lanes x elements threads, in 64 bits) */
        const vr_prog_group g = vr_prog_group_of(prog);
        const uint64_t v = ((uint64_t)blockIdx.x * blockDim.x + threadIdx.x) >> g.log2;
        if (v < p.element_count) { /* the whole group */
            const typename P::Element e = vr_prog_element_grouped(p, prog, (uint32_t)v, g);
            if (g.rank == 0)
                vr_prog_slot_store(p.temp, (uint32_t)v, e);
        }
    }
}

/* Primitive t with its corners read from multi's table. */
template <class P>
static __device__ __forceinline__ void vr_prog_multi_primitive(const vr_program_params &p,
                                                               const P &prog, uint32_t t,
                                                               bool valid)
{
    const uint32_t A = P::arity;
    uint32_t ids[A];
    typename P::Element e[A];
    const typename P::Element *ep[A];
    for (uint32_t k = 0; k < A; ++k) {
        ids[k] = 0, ep[k] = &e[k];
        if (valid) {
            ids[k] = __ldg(p.indices + A * t + k);
            ep[k] = vr_prog_slot_read(p.temp, ids[k], &e[k]);
        }
    }
    vr_prog_primitive(p, prog, valid, t, ids, ep);
}

template <class P>
static __global__ void __launch_bounds__(vr_prog_threads<P>::value)
vr_prog_multi_primitives(vr_program_params p, P prog)
{
    const uint32_t A = P::arity;
    if constexpr (vr_prog_ordered<P>::value) {
        vr_prog_single_ordered<P, true>(p, prog);
    } else {
        const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
        if constexpr (vr_prog_converged<P>::value) {
            if (vr_prog_warp_has_work(t, p.index_count / A))
                vr_prog_multi_primitive(p, prog, t, t < p.index_count / A);
        } else if (t < p.index_count / A) {
            vr_prog_multi_primitive(p, prog, t, true);
        }
    }
}

/* Primitive t's corner ids and elements (nothing for !valid): computed in registers (naive) or
 * read from multi's table (ep[k] may then point into it). */
template <class P, bool MULTI>
static __device__ __forceinline__ void vr_prog_single_corners(const vr_program_params &p,
                                                              const P &prog, uint32_t t,
                                                              bool valid, uint32_t *ids,
                                                              typename P::Element *e,
                                                              const typename P::Element **ep)
{
    for (uint32_t k = 0; k < (uint32_t)P::arity; ++k) {
        ids[k] = 0, ep[k] = &e[k];
        if (valid) {
            ids[k] = __ldg(p.indices + P::arity * t + k);
            if constexpr (MULTI)
                ep[k] = vr_prog_slot_read(p.temp, ids[k], &e[k]);
            else
                e[k] = vr_prog_element(p, prog, ids[k]);
        }
    }
}

/* Ordered naive and multi: the block's primitives are those of its work item, every thread takes
 * part; each corner's element computed in registers (naive) or read from multi's table. */
template <class P, bool MULTI>
static __device__ __forceinline__ void vr_prog_single_ordered(const vr_program_params &p,
                                                              const P &prog)
{
    const uint32_t A = P::arity;
    const uint32_t t = vr_prog_work(prog) * blockDim.x + threadIdx.x;
    const bool valid = t < p.index_count / A;
    uint32_t ids[A];
    typename P::Element e[A];
    const typename P::Element *ep[A];
    vr_prog_single_corners<P, MULTI>(p, prog, t, valid, ids, e, ep);
    vr_prog_ordered_round(p, prog, valid, t, ids, ep);
}

/* ---- ink through persistent blocks: naive and multi ----------------------------------------
 * The batched kernels' scheme (vr_prog_batched_ink_kernel) for the kernels of one thread per
 * primitive: ticket t is the block-per-tile kernel's work item (primitives t x blockDim ..
 * + blockDim), so the tiles, the counts and the output are those of vr_prog_single_ordered. A
 * block ranks tile t with the corners in registers, stashes its kept primitives (the corners'
 * elements, ids and position, at their rank) in one half of shared memory, publishes the count,
 * then finishes the tile before (t' < t: its count published a tile ago) and stores that
 * tile's stash from the other half, one kept primitive per thread at consecutive slots. Why:
 * with a tile per block (256 primitives) the ink queue ran 1.41x (naive) and 1.24x (multi)
 * the atomic queue at simple load (H100, sphere:7M, session 29), the resident blocks waiting
 * at each hand-off; persistent 1.09-1.10x and 0.94-0.95x (0.78x and 0.76x the block kernels'
 * time), at light load naive 1.05x its own kernel (the renderer takes it at simple load only),
 * multi 0.80x. The deadlock argument is the batched kernel's: a block waits only in the
 * finish of t', while every ticket it took is published. Shared memory: two halves of
 * vr_prog_stash_bytes<P>(block) (the renderer: 25.6 KB each at block 256). */
template <class P>
static __host__ __device__ constexpr size_t vr_prog_stash_elements_bytes(uint32_t block)
{
    return vr_prog_align16((size_t)block * P::arity * sizeof(typename P::Element));
}

template <class P>
static __host__ __device__ constexpr size_t vr_prog_stash_bytes(uint32_t block)
{
    return vr_prog_align16(vr_prog_stash_elements_bytes<P>(block) +
                           (size_t)block * (P::arity + 1u) * 4u);
}

/* A tile's part of a ticket for its store: nothing beyond the stash and the count. */
struct vr_prog_tile_part {};

template <class P, bool MULTI>
static __global__ void __launch_bounds__(vr_prog_threads<P>::value)
vr_prog_single_ink_kernel(vr_program_params p, P prog, uint32_t tickets, uint32_t half_bytes)
{
    typedef typename P::Element E;
    extern __shared__ __align__(16) unsigned char vr_prog_smem[];
    vr_compact_shared *cs = vr_prog_order_shared<P>();
    const uint32_t A = P::arity, prims = p.index_count / A;
    const size_t ids_at = vr_prog_stash_elements_bytes<P>(blockDim.x);
    vr_prog_ink_loop<vr_prog_tile_part>(
        prog, tickets, half_bytes,
        [&](uint32_t ticket, uint32_t cur, uint32_t *total) {
            if (threadIdx.x == 0)
                cs->total = 0; /* read after the rank's first barrier */
            const uint32_t t = ticket * blockDim.x + threadIdx.x;
            const bool valid = t < prims;
            uint32_t ids[A];
            E e[A];
            const E *ep[A];
            vr_prog_single_corners<P, MULTI>(p, prog, t, valid, ids, e, ep);
            const bool keep = vr_prog_keep(p, prog, valid, t, t, ids, ep);
            const uint32_t rank = vr_compact_block_rank(cs, keep);
            *total = cs->total; /* final: the rank's second barrier */
            if (keep) { /* stashed at its rank: corners, ids, position */
                unsigned char *half = vr_prog_smem + cur;
                E *s_el = reinterpret_cast<E *>(half);
                uint32_t *s_ids = reinterpret_cast<uint32_t *>(half + ids_at);
                for (uint32_t k = 0; k < A; ++k) {
                    s_el[rank * A + k] = *ep[k];
                    s_ids[rank * A + k] = ids[k];
                }
                s_ids[blockDim.x * A + rank] = t;
            }
            return vr_prog_tile_part{};
        },
        [&](uint32_t other, uint32_t base, uint32_t kept, const vr_prog_tile_part &) {
            const unsigned char *half = vr_prog_smem + other;
            const E *s_el = reinterpret_cast<const E *>(half);
            const uint32_t *s_ids = reinterpret_cast<const uint32_t *>(half + ids_at);
            for (uint32_t j = threadIdx.x; j < kept; j += blockDim.x) {
                const E *c[A];
                for (uint32_t k = 0; k < A; ++k)
                    c[k] = s_el + j * A + k;
                const uint32_t pos = s_ids[blockDim.x * A + j];
                prog.store(base + j, pos, pos, s_ids + j * A, c);
            }
        });
}

/* ---- host side -------------------------------------------------------------------------- */

/* Opts `kernel` in to `bytes` of dynamic shared memory; VR_ERR_ARG when the GPU has less. */
static inline vr_status vr_prog_smem_fit(const void *kernel, size_t bytes, const char *who)
{
    int device, optin;
    uint32_t done;
    VR_CUDA_CHECK(cudaGetDevice(&device));
    if (vr_shape_find(kernel, device, VR_SHAPE_OPTED_IN, 0, bytes, &done))
        return VR_OK; /* fitted before (vr_dyn_smem_fit keeps it) */
    VR_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
    if (bytes > (size_t)optin)
        return VR_ERROR(VR_ERR_ARG, "%s: %zu bytes of shared memory per block (elements x N_u or "
                        "x 32 lanes), the GPU has %d: lower --nu or the block size", who, bytes,
                        optin);
    return vr_dyn_smem_fit(kernel, bytes);
}

/* The dynamic shared memory an ordered program's warp launch has for its warps' stashes: the
 * GPU's opt-in maximum per block less the compaction's static shared state. */
static inline vr_status vr_prog_warp_stash_room(size_t *room)
{
    int device, optin;
    VR_CUDA_CHECK(cudaGetDevice(&device));
    VR_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
    *room = (size_t)optin - sizeof(vr_compact_shared);
    return VR_OK;
}


/* Lanes per element call: P::lanes for a grouped program, else 1. */
template <class P>
static uint32_t vr_prog_lanes_host(const P &prog)
{
    if constexpr (vr_prog_grouped<P>::value)
        return prog.lanes;
    else
        return 1;
}

/* Blocks of `block` threads for `items` x `lanes` threads; VR_ERR_ARG past the grid's limit. */
static inline vr_status vr_prog_grid(uint64_t items, uint32_t lanes, uint32_t block,
                                     const char *who, uint32_t *grid)
{
    const uint64_t blocks = (items * lanes + block - 1) / block;
    if (blocks > 0x7fffffffu)
        return VR_ERROR(VR_ERR_ARG, "%s: %llu elements x %u lanes need more than 2^31 - 1 blocks "
                        "of %u threads", who, (unsigned long long)items, lanes, block);
    *grid = (uint32_t)blocks;
    return VR_OK;
}

/* What the kernels of an ordered program see: the program with its run's compaction state
 * (order_dev, a new epoch per launch: vr_prog_order_next) and scheme. */
template <class P>
struct vr_prog_ordered_run : P {
    vr_compact_dev order_dev;
    vr_queue_mode order_mode;
};

/* Before an ordered program's launch of `blocks` blocks: prog->order_dev (nothing for other
 * programs). */
template <class P>
static inline vr_status vr_prog_order_next(P *prog, vr_compact_state *state, uint32_t blocks)
{
    if constexpr (!vr_prog_ordered<P>::value)
        return VR_OK;
    else
        return vr_compact_state_next(state, blocks, &prog->order_dev);
}

template <class P>
static vr_status vr_prog_run(vr_reuse_kind kind, const vr_program_params &p, P prog,
                             vr_compact_state *order_state, int ink_persistent,
                             cudaStream_t stream);

/* Runs strategy `kind` of program `prog` over p (device pointers; p.arity must be P::arity) on
 * `stream`, without waiting. Parameter errors as vr_program_check; VR_ERR_CUDA for a failed
 * launch. An ordered program runs with vr_program_run_ordered. */
template <class P>
static vr_status vr_program_run(vr_reuse_kind kind, const vr_program_params &p, const P &prog,
                                cudaStream_t stream)
{
    static_assert(!vr_prog_ordered<P>::value,
                  "an ordered program runs with vr_program_run_ordered (its compaction state)");
    return vr_prog_run(kind, p, prog, NULL, 0, stream);
}

/* Whether ink runs as persistent blocks (vr_prog_batched_ink_kernel, vr_prog_single_ink_kernel,
 * vr_prog_warp_ink_kernel) rather than a block per batch or tile for a program whose element
 * function is cheap or not (cheap_elements): VR_PROG_INK unset, empty or "auto" follows
 * `cheap`, "blocks" and "persistent" force one for every program (A/B runs, tests). Any other
 * value is an error, so that a typo cannot measure the default twice. */
static inline vr_status vr_prog_ink_persistent(int cheap, int *persistent)
{
    const char *env = getenv("VR_PROG_INK");
    *persistent = 0;
    if (!env || !*env || !strcmp(env, "auto"))
        *persistent = cheap != 0;
    else if (!strcmp(env, "persistent") || !strcmp(env, "blocks"))
        *persistent = !strcmp(env, "persistent");
    else
        return VR_ERROR(VR_ERR_ARG, "VR_PROG_INK=%s: expected auto, blocks or persistent (or "
                        "unset: auto)", env);
    return VR_OK;
}

/* Runs ordered program `prog` (ordered_primitive) as vr_program_run does, its blocks handing
 * off through `state` (pipeline/compact/compact.h: room for the run's blocks, i.e. its
 * primitives will do) by `mode`: VR_QUEUE_INK (the kept primitives numbered in stream order)
 * or VR_QUEUE_COLLATE (in stream order within a block's work, blocks in any order). */
template <class P>
static vr_status vr_program_run_ordered(vr_reuse_kind kind, const vr_program_params &p,
                                        const P &prog, vr_compact_state *state,
                                        vr_queue_mode mode, cudaStream_t stream)
{
    static_assert(vr_prog_ordered<P>::value, "vr_program_run_ordered: not an ordered program");
    if (!state || (mode != VR_QUEUE_INK && mode != VR_QUEUE_COLLATE))
        return VR_ERROR(VR_ERR_ARG, "%s: an ordered program needs a compaction state and the "
                        "scheme ink or collate",
                        (unsigned)kind < VR_REUSE_KIND_COUNT ? vr_reuse_all[kind].name
                                                             : "program");
    int persistent;
    const vr_status env_st = vr_prog_ink_persistent(vr_prog_cheap<P>::of(prog), &persistent);
    if (env_st != VR_OK)
        return env_st;
    vr_prog_ordered_run<P> run;
    static_cast<P &>(run) = prog;
    run.order_dev = vr_compact_dev();
    run.order_mode = mode;
    return vr_prog_run(kind, p, run, state, persistent && mode == VR_QUEUE_INK, stream);
}

/* Whether `bytes` of dynamic shared memory fit kernel k's block beside its static shared
 * memory. */
static inline bool vr_prog_dyn_fits(const void *k, size_t bytes)
{
    int device, optin;
    uint32_t fits;
    cudaFuncAttributes a;
    if (cudaGetDevice(&device) != cudaSuccess)
        return false; /* the block kernel's launch reports it */
    if (vr_shape_find(k, device, VR_SHAPE_FITS, 0, bytes, &fits))
        return fits != 0;
    if (cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device) !=
            cudaSuccess ||
        cudaFuncGetAttributes(&a, k) != cudaSuccess)
        return false;
    fits = bytes + a.sharedSizeBytes <= (size_t)optin;
    vr_shape_keep(k, device, VR_SHAPE_FITS, 0, bytes, fits);
    return fits != 0;
}

/* Whether two halves of `half` bytes fit persistent ink kernel k (else the run takes a block per
 * batch or tile: large elements, a large N_u or block). */
static inline bool vr_prog_halves_fit(const void *k, size_t half)
{
    return vr_prog_dyn_fits(k, 2u * vr_prog_align16(half));
}

/* The grid of a persistent ink kernel `k` at `block` threads and `smem` bytes of dynamic shared
 * memory over `tickets` work items: as many blocks as fit on the device (more would only take
 * their tickets later), at most one per ticket. */
static inline vr_status vr_prog_persistent_grid(const void *k, uint32_t block, size_t smem,
                                                uint32_t tickets, const char *who, uint32_t *grid)
{
    vr_status st = vr_prog_smem_fit(k, smem, who);
    if (st != VR_OK)
        return st;
    int device, sms, per_sm = 0;
    uint32_t fit;
    VR_CUDA_CHECK(cudaGetDevice(&device));
    if (!vr_shape_find(k, device, VR_SHAPE_RESIDENT, block, smem, &fit)) {
        VR_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
        VR_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k, (int)block,
                                                                    smem));
        if (per_sm < 1)
            return VR_ERROR(VR_ERR_ARG, "%s: the persistent kernel does not fit an SM at block "
                            "%u with %zu bytes of shared memory", who, block, smem);
        fit = (uint32_t)per_sm * (uint32_t)sms;
        vr_shape_keep(k, device, VR_SHAPE_RESIDENT, block, smem, fit);
    }
    *grid = tickets < fit ? tickets : fit;
    return VR_OK;
}

/* A persistent batched ink kernel's launch (the order state taken): two halves of `smem`
 * bytes. */
template <class P>
static vr_status vr_prog_batched_ink_launch(void (*k)(vr_program_params, P, uint32_t,
                                                      vr_prog_layout, uint32_t),
                                            const vr_program_params &q, const P &prog,
                                            uint32_t table_log2, const vr_prog_layout &l,
                                            size_t smem, uint32_t block, const char *who,
                                            cudaStream_t stream)
{
    const uint32_t half = (uint32_t)vr_prog_align16(smem);
    uint32_t grid = 0;
    const vr_status st = vr_prog_persistent_grid((const void *)k, block, 2u * (size_t)half,
                                                 q.batch_count, who, &grid);
    if (st != VR_OK)
        return st;
    k<<<grid, block, 2u * (size_t)half, stream>>>(q, prog, table_log2, l, half);
    VR_LAUNCH_CHECK("vr_prog_batched_ink_kernel", stream);
    return VR_OK;
}

/* The persistent ink kernel of hash, phash, patch or meshlet. */
template <class P>
static void (*vr_prog_hashed_ink(vr_reuse_kind kind))(vr_program_params, P, uint32_t,
                                                      vr_prog_layout, uint32_t)
{
    if (kind == VR_REUSE_PHASH)
        return vr_prog_batched_ink_kernel<P, vr_prog_ink_hashed<1, false>>;
    if (vr_program_planned(kind))
        return vr_prog_batched_ink_kernel<P, vr_prog_ink_hashed<0, true>>;
    return vr_prog_batched_ink_kernel<P, vr_prog_ink_hashed<0, false>>;
}

template <class P>
static bool vr_prog_hashed_ink_fits(vr_reuse_kind kind, size_t smem)
{
    return vr_prog_halves_fit((const void *)vr_prog_hashed_ink<P>(kind), smem);
}

/* The persistent hashed ink kernel's launch: two halves of `smem` bytes. */
template <class P>
static vr_status vr_prog_hashed_ink_launch(vr_reuse_kind kind, const vr_program_params &q,
                                           P prog, vr_compact_state *order_state,
                                           uint32_t table_log2, const vr_prog_layout &l,
                                           size_t smem, uint32_t block, const char *who,
                                           cudaStream_t stream)
{
    void (*const k)(vr_program_params, P, uint32_t, vr_prog_layout, uint32_t) =
        vr_prog_hashed_ink<P>(kind);
    vr_status st = vr_prog_order_next(&prog, order_state, q.batch_count);
    return st != VR_OK ? st
                       : vr_prog_batched_ink_launch(k, q, prog, table_log2, l, smem, block, who,
                                                    stream);
}

/* The persistent naive or multi (primitives) ink kernel's launch over the tiles of `block`
 * primitives: two stash halves. */
template <class P, bool MULTI>
static vr_status vr_prog_single_ink_launch(const vr_program_params &q, P prog,
                                           vr_compact_state *order_state, uint32_t block,
                                           const char *who, cudaStream_t stream)
{
    void (*const k)(vr_program_params, P, uint32_t, uint32_t) =
        vr_prog_single_ink_kernel<P, MULTI>;
    const uint32_t tickets = vr_grid_blocks(q.index_count / P::arity, block);
    const size_t half = vr_prog_stash_bytes<P>(block);
    uint32_t grid = 0;
    vr_status st = vr_prog_persistent_grid((const void *)k, block, 2u * half, tickets, who,
                                           &grid);
    if (st != VR_OK || (st = vr_prog_order_next(&prog, order_state, tickets)) != VR_OK)
        return st;
    k<<<grid, block, 2u * half, stream>>>(q, prog, tickets, (uint32_t)half);
    VR_LAUNCH_CHECK(MULTI ? "vr_prog_single_ink_kernel (multi)" : "vr_prog_single_ink_kernel",
                    stream);
    return VR_OK;
}

/* The persistent warp ink kernel's launch: as many warps per block as the block size asks
 * while their rounds and two halves of stashes fit (else fewer, as the block kernel does);
 * false in *launched (nothing done) when not even one warp's fit, for a block per ticket. */
template <class P>
static vr_status vr_prog_warp_ink_launch(const vr_program_params &q, P prog,
                                         vr_compact_state *order_state, uint32_t per_block,
                                         const char *who, cudaStream_t stream, bool *launched)
{
    typedef typename P::Element E;
    const uint32_t B = q.limits.batch_indices;
    void (*const k)(vr_program_params, P, uint32_t, uint32_t, uint32_t) =
        vr_prog_warp_ink_kernel<P>;
    *launched = false;
    size_t rounds = 0, half = 0;
    for (; per_block >= 1; --per_block) {
        rounds = (size_t)per_block * (VR_WARP_SIZE * sizeof(E) + vr_prog_warp_map_bytes(B));
        half = (size_t)per_block * vr_prog_warp_stash_bytes<P>(B);
        if (vr_prog_dyn_fits((const void *)k, vr_prog_align16(rounds) + 2u * half))
            break;
    }
    if (per_block < 1)
        return VR_OK;
    const size_t stash_at = vr_prog_align16(rounds), smem = stash_at + 2u * half;
    const uint32_t tickets = vr_grid_blocks(vr_grid_blocks(q.index_count, B), per_block);
    uint32_t grid = 0;
    vr_status st = vr_prog_persistent_grid((const void *)k, per_block * VR_WARP_SIZE, smem,
                                           tickets, who, &grid);
    if (st != VR_OK || (st = vr_prog_order_next(&prog, order_state, tickets)) != VR_OK)
        return st;
    k<<<grid, per_block * VR_WARP_SIZE, smem, stream>>>(q, prog, tickets, (uint32_t)stash_at,
                                                        (uint32_t)half);
    VR_LAUNCH_CHECK("vr_prog_warp_ink_kernel", stream);
    *launched = true;
    return VR_OK;
}

/* Whether warp runs a plain program with pooled rounds (vr_prog_warp_pooled_kernel): where the
 * program asks for it (pool_rounds), unless VR_PROG_WARP says "rounds" (a batch's rounds
 * computed as they come, vr_prog_warp_plain) or "pooled" for every program (A/B runs);
 * "pooled:N" also caps the grid at N blocks, so that tests see warps stride over many batches
 * and wrap their rings on small meshes. "auto", empty or unset: the default. Any other value
 * is an error, so that a typo cannot measure the default twice. *pooled: 0 rounds, 1 pooled
 * where the mesh has enough batches (VR_POOL_MIN_SHARE), 2 pooled whatever the mesh (the
 * variable). *max_blocks: 0 for no cap. */
static inline vr_status vr_prog_warp_pooling(int asked, int *pooled, uint32_t *max_blocks)
{
    const char *env = getenv("VR_PROG_WARP");
    *pooled = 0, *max_blocks = 0;
    if (!env || !*env || !strcmp(env, "auto")) {
        *pooled = asked != 0;
    } else if (!strcmp(env, "rounds")) {
    } else if (!strncmp(env, "pooled", 6)) {
        char *end = NULL;
        unsigned long n = 0;
        if (env[6] == ':')
            n = strtoul(env + 7, &end, 10);
        if (env[6] && (env[6] != ':' || end == env + 7 || *end || n == 0 || n > UINT32_MAX))
            return VR_ERROR(VR_ERR_ARG, "VR_PROG_WARP=%s: expected pooled or pooled:BLOCKS with "
                            "BLOCKS >= 1", env);
        *pooled = 2, *max_blocks = (uint32_t)n; /* 2: forced, whatever the mesh */
    } else {
        return VR_ERROR(VR_ERR_ARG, "VR_PROG_WARP=%s: expected auto, rounds, pooled or "
                        "pooled:BLOCKS (or unset: auto)", env);
    }
    return VR_OK;
}

/* The pooled warp kernel's launch: as many warps per block as the block size asks while their
 * rings and round maps fit (else fewer), as many blocks as are resident at once (the warps take
 * batches by ticket); false in *launched (nothing done) when not even one warp's fit. */
template <class P>
static vr_status vr_prog_warp_pooled_launch(const vr_program_params &q, const P &prog,
                                            uint32_t per_block, uint32_t max_blocks, bool forced,
                                            const char *who, cudaStream_t stream, bool *launched)
{
    const uint32_t B = q.limits.batch_indices;
    void (*const k)(vr_program_params, P, uint32_t *) = vr_prog_warp_pooled_kernel<P>;
    *launched = false;
    size_t smem = 0;
    for (; per_block >= 1; --per_block)
        if (vr_prog_dyn_fits((const void *)k,
                             smem = per_block * vr_prog_pool_smem_per_warp<P>(B)))
            break;
    if (per_block < 1)
        return VR_OK;
    uint32_t grid = 0;
    const uint32_t batches = vr_grid_blocks(q.index_count, B);
    const vr_status st = vr_prog_persistent_grid((const void *)k, per_block * VR_WARP_SIZE, smem,
                                                 UINT32_MAX, who, &grid); /* all resident */
    if (st != VR_OK)
        return st;
    if (!forced && (uint64_t)batches < (uint64_t)VR_POOL_MIN_SHARE * grid * per_block)
        return VR_OK; /* too few batches: the rounds kernel (see VR_POOL_MIN_SHARE) */
    if (grid > vr_grid_blocks(batches, per_block))
        grid = vr_grid_blocks(batches, per_block);
    if (max_blocks && grid > max_blocks)
        grid = max_blocks;
    uint32_t *tickets = NULL; /* stream-ordered, as multi's table: also inside a graph capture */
    VR_CUDA_CHECK(cudaMallocAsync(&tickets, sizeof *tickets, stream));
    vr_status r = vr_cuda_status(cudaMemsetAsync(tickets, 0, sizeof *tickets, stream),
                                 VR_CUDA_WHERE, "cudaMemsetAsync(warp tickets)");
    if (r == VR_OK) {
        k<<<grid, per_block * VR_WARP_SIZE, smem, stream>>>(q, prog, tickets);
        r = vr_cuda_launched(VR_CUDA_WHERE, "vr_prog_warp_pooled_kernel", stream);
    }
    const vr_status f = vr_cuda_status(cudaFreeAsync(tickets, stream), VR_CUDA_WHERE,
                                       "cudaFreeAsync(warp tickets)");
    *launched = true;
    return r != VR_OK ? r : f;
}

/* The sort kernel's launch at the block size (CUB's block primitives need it at compile time);
 * `persistent`: an ordered program's ink as persistent blocks (vr_prog_ink_sort), layout l and
 * `smem` bytes per batch. */
template <class P, int CAP>
static vr_status vr_prog_sort_launch(const vr_program_params &p, const P &prog, cudaStream_t st,
                                     const vr_prog_layout &l, size_t smem, int persistent)
{
#define VR_PROG_SORT_CASE(BLOCK)                                                                   \
    case BLOCK:                                                                                    \
        if constexpr (CAP / BLOCK <= VR_SORT_MAX_ITEMS) {                                          \
            void (*const k)(vr_program_params, P) = vr_prog_sort_kernel_of<P, BLOCK, CAP>();     \
            vr_status r = vr_prog_smem_fit((const void *)k, smem,                                  \
                                           "sort");                                                \
            if (r != VR_OK)                                                                        \
                return r;                                                                          \
            if constexpr (vr_prog_ordered<P>::value) {                                             \
                void (*const ki)(vr_program_params, P, uint32_t, vr_prog_layout, uint32_t) =      \
                    vr_prog_batched_ink_kernel<P, vr_prog_ink_sort<BLOCK, CAP>>;                   \
                if (persistent && vr_prog_halves_fit((const void *)ki, smem))                      \
                    return vr_prog_batched_ink_launch(ki, p, prog, 0, l, smem, BLOCK, "sort", st); \
            }                                                                                      \
            k<<<p.batch_count, BLOCK, smem, st>>>(p, prog);                                        \
            VR_LAUNCH_CHECK("vr_prog_sort_kernel", st);                                            \
            return VR_OK;                                                                          \
        }                                                                                          \
        break;
    switch (p.limits.block_size) {
        VR_PROG_SORT_CASE(32)
        VR_PROG_SORT_CASE(64)
        VR_PROG_SORT_CASE(128)
        VR_PROG_SORT_CASE(256)
        VR_PROG_SORT_CASE(512)
        VR_PROG_SORT_CASE(1024)
    default:
        return VR_ERROR(VR_ERR_ARG, "sort: block size %u not supported (32, 64, ..., 1024)",
                        p.limits.block_size);
    }
#undef VR_PROG_SORT_CASE
    return VR_ERROR(VR_ERR_ARG, "sort: batches of %u indices need more than %d keys per thread "
                    "at block %u: use a larger block", p.limits.max_indices, VR_SORT_MAX_ITEMS,
                    p.limits.block_size);
}

template <class P>
static vr_status vr_prog_run(vr_reuse_kind kind, const vr_program_params &p, P prog,
                             vr_compact_state *order_state, int ink_persistent,
                             cudaStream_t stream)
{
    typedef typename P::Element E;
    static_assert(P::arity >= 1 && P::arity <= VR_PROGRAM_ARITY_MAX, "program arity");
    static_assert(!(vr_prog_grouped<P>::value && vr_prog_converged<P>::value),
                  "converged_primitive and grouped_element do not combine: a grouped program's "
                  "primitive runs on one lane per group");
    static_assert(!(vr_prog_grouped<P>::value && vr_prog_ordered<P>::value),
                  "ordered_primitive and grouped_element do not combine");
    const char *who = (unsigned)kind < VR_REUSE_KIND_COUNT ? vr_reuse_all[kind].name : "program";
    vr_status st = vr_program_check(kind, &p, who);
    if (st != VR_OK)
        return st;
    if (!p.counters) /* the kernels count a broken batch in overflow, counting or not */
        return VR_ERROR(VR_ERR_ARG, "%s: the GPU run needs counters (device memory)", who);
    if (p.arity != (uint32_t)P::arity)
        return VR_ERROR(VR_ERR_ARG, "%s: the stream has arity %u, the program %d", who, p.arity,
                        (int)P::arity);
    const uint32_t prims = p.index_count / P::arity, block = p.limits.block_size;
    if (block > (uint32_t)vr_prog_threads<P>::value)
        return VR_ERROR(VR_ERR_ARG, "%s: block size %u exceeds the program's max_threads %d",
                        who, block, vr_prog_threads<P>::value);
    const uint32_t lanes = vr_prog_lanes_host(prog);
    if (lanes == 0 || lanes > VR_WARP_SIZE || (lanes & (lanes - 1)) != 0 || block % lanes != 0)
        return VR_ERROR(VR_ERR_ARG, "%s: the program's element groups of %u lanes: want a power "
                        "of two from 1 to 32 that divides the block size (%u)", who, lanes, block);
    if (prims == 0 && kind != VR_REUSE_MULTI)
        return VR_OK;
    uint32_t grid = 0;
    vr_program_params q = p; /* multi: q.temp */
    switch (kind) {
    case VR_REUSE_NAIVE:
        if constexpr (vr_prog_ordered<P>::value)
            if (ink_persistent &&
                vr_prog_halves_fit((const void *)vr_prog_single_ink_kernel<P, false>,
                                   vr_prog_stash_bytes<P>(block)))
                return vr_prog_single_ink_launch<P, false>(q, prog, order_state, block, who,
                                                           stream);
        if ((st = vr_prog_grid(prims, lanes, block, who, &grid)) != VR_OK ||
            (st = vr_prog_order_next(&prog, order_state, grid)) != VR_OK)
            return st;
        vr_prog_naive_kernel<P><<<grid, block, 0, stream>>>(q, prog);
        VR_LAUNCH_CHECK("vr_prog_naive_kernel", stream);
        return VR_OK;
    case VR_REUSE_WARP: {
        const uint32_t warps = vr_grid_blocks(p.index_count, p.limits.batch_indices);
        uint32_t per_block = block / VR_WARP_SIZE;
        if constexpr (vr_prog_ordered<P>::value)
            if (ink_persistent) {
                bool launched;
                st = vr_prog_warp_ink_launch<P>(q, prog, order_state, per_block, who, stream,
                                                &launched);
                if (st != VR_OK || launched)
                    return st;
            }
        if constexpr (!vr_prog_ordered<P>::value && !vr_prog_grouped<P>::value) {
            int pooled;
            uint32_t max_blocks;
            if ((st = vr_prog_warp_pooling(vr_prog_pool<P>::of(prog), &pooled, &max_blocks)) !=
                VR_OK)
                return st;
            if (pooled) {
                bool launched;
                st = vr_prog_warp_pooled_launch<P>(q, prog, per_block, max_blocks, pooled > 1,
                                                   who, stream, &launched);
                if (st != VR_OK || launched)
                    return st;
            }
        }
        size_t smem = vr_prog_warp_smem<P>(p.limits.batch_indices, per_block);
        if (vr_prog_ordered<P>::value) {
            /* the stashes of a block's warps must fit its shared memory: with long batches a
             * block holds fewer warps than the block size asks (as the renderer's own warp
             * kernel does). Each warp still owns its batch and batches stay in warp order, so
             * the output is the same; only the grouping of warps into blocks changes. */
            size_t room;
            if ((st = vr_prog_warp_stash_room(&room)) != VR_OK)
                return st;
            while (per_block > 1 && smem > room)
                smem = vr_prog_warp_smem<P>(p.limits.batch_indices, --per_block);
            if (smem > room)
                return VR_ERROR(VR_ERR_ARG, "%s: an ordered program stashes its kept "
                                "primitives, %u indices x %zu-byte elements per warp: %zu bytes "
                                "of shared memory for one warp, the GPU has %zu; lower the warp "
                                "batch", who, p.limits.batch_indices, sizeof(E), smem, room);
        }
        grid = vr_grid_blocks(warps, per_block);
        if ((st = vr_prog_smem_fit((const void *)vr_prog_warp_kernel<P>, smem, who)) != VR_OK ||
            (st = vr_prog_order_next(&prog, order_state, grid)) != VR_OK)
            return st;
        const uint32_t threads = vr_prog_ordered<P>::value ? per_block * VR_WARP_SIZE : block;
        vr_prog_warp_kernel<P><<<grid, threads, smem, stream>>>(q, prog);
        VR_LAUNCH_CHECK("vr_prog_warp_kernel", stream);
        return VR_OK;
    }
    case VR_REUSE_HASH:
    case VR_REUSE_PHASH:
    case VR_REUSE_PATCH:
    case VR_REUSE_MESHLET: {
        const uint32_t table_log2 = vr_dyn_table_log2(p.limits.max_unique);
        const vr_prog_layout l = vr_prog_hashed_layout<P>(p.limits.max_unique, 1u << table_log2,
                                                          p.limits.max_indices);
        const int plan = vr_program_planned(kind);
        const void *k = kind == VR_REUSE_PHASH ? (const void *)vr_prog_hashed_kernel<P, 1, false>
                        : plan                 ? (const void *)vr_prog_hashed_kernel<P, 0, true>
                                               : (const void *)vr_prog_hashed_kernel<P, 0, false>;
        const uint32_t batches = p.batch_count;
        const size_t smem = l.bytes + vr_prog_ranks_bytes<P>(p.limits.max_indices);
        if constexpr (vr_prog_ordered<P>::value)
            if (ink_persistent && vr_prog_hashed_ink_fits<P>(kind, smem))
                return vr_prog_hashed_ink_launch<P>(kind, q, prog, order_state, table_log2, l,
                                                    smem, block, who, stream);
        if ((st = vr_prog_smem_fit(k, smem, who)) != VR_OK ||
            (st = vr_prog_order_next(&prog, order_state, batches)) != VR_OK)
            return st;
        if (kind == VR_REUSE_PHASH)
            vr_prog_hashed_kernel<P, 1, false><<<batches, block, smem, stream>>>(q, prog,
                                                                                  table_log2, l);
        else if (plan)
            vr_prog_hashed_kernel<P, 0, true><<<batches, block, smem, stream>>>(q, prog,
                                                                                 table_log2, l);
        else
            vr_prog_hashed_kernel<P, 0, false><<<batches, block, smem, stream>>>(q, prog,
                                                                                  table_log2, l);
        VR_LAUNCH_CHECK("vr_prog_hashed_kernel", stream);
        return VR_OK;
    }
    case VR_REUSE_SORT: {
        const vr_prog_layout l = vr_prog_layout_of<P>(p.limits.max_unique, 0, p.limits.max_indices);
        const size_t smem = l.bytes + vr_prog_ranks_bytes<P>(p.limits.max_indices);
        if ((st = vr_prog_order_next(&prog, order_state, p.batch_count)) != VR_OK)
            return st;
        if (p.limits.max_indices <= 1024)
            return vr_prog_sort_launch<P, 1024>(q, prog, stream, l, smem, ink_persistent);
        if (p.limits.max_indices <= 2048)
            return vr_prog_sort_launch<P, 2048>(q, prog, stream, l, smem, ink_persistent);
        return vr_prog_sort_launch<P, 3072>(q, prog, stream, l, smem, ink_persistent);
    }
    case VR_REUSE_MULTI: {
        if (q.temp && (uintptr_t)q.temp % 16u != 0)
            return VR_ERROR(VR_ERR_ARG, "%s: multi's table (temp) must be 16-byte aligned", who);
        if (!q.temp)
            VR_CUDA_CHECK(cudaMallocAsync(&q.temp, (size_t)(p.element_count ? p.element_count : 1) *
                                                       vr_program_slot_bytes(sizeof(E)), stream));
        if (p.element_count &&
            (st = vr_prog_grid(p.element_count, lanes, block, who, &grid)) == VR_OK) {
            vr_prog_multi_elements<P><<<grid, block, 0, stream>>>(q, prog);
            st = vr_cuda_launched(VR_CUDA_WHERE, "vr_prog_multi_elements", stream);
        }
        bool launched = false; /* the primitives as persistent ink blocks */
        if constexpr (vr_prog_ordered<P>::value)
            if (st == VR_OK && prims && ink_persistent &&
                vr_prog_halves_fit((const void *)vr_prog_single_ink_kernel<P, true>,
                                   vr_prog_stash_bytes<P>(block))) {
                st = vr_prog_single_ink_launch<P, true>(q, prog, order_state, block, who, stream);
                launched = true;
            }
        if (st == VR_OK && prims && !launched) {
            grid = vr_grid_blocks(prims, block);
            st = vr_prog_order_next(&prog, order_state, grid);
        }
        if (st == VR_OK && prims && !launched) {
            vr_prog_multi_primitives<P><<<grid, block, 0, stream>>>(q, prog);
            st = vr_cuda_launched(VR_CUDA_WHERE, "vr_prog_multi_primitives", stream);
        }
        if (!p.temp) { /* stream-ordered: freed after the kernels, also when a launch failed */
            const vr_status f = vr_cuda_status(cudaFreeAsync(q.temp, stream), VR_CUDA_WHERE,
                                               "cudaFreeAsync(multi elements)");
            if (st == VR_OK)
                st = f;
        }
        return st;
    }
    default:
        return VR_ERROR(VR_ERR_ARG, "%s: not a strategy of the general API", who);
    }
}

#endif
