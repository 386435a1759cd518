/* test_program_ordered.cu - ordered programs of the general reuse API (reuse/program.cuh:
 * ordered_primitive, vr_program_run_ordered) against the CPU twin: a program whose element is a
 * hash of the id and whose keep() keeps a primitive by a hash of its corners and source id at a
 * chosen rate (0, 1, 50, 99, 100 percent), store() writes (source id, position, hash) at its slot.
 * The twin is vr_program_ref with a primitive() that stores the kept ones at a running count.
 * Checked for every strategy (the plans on triangle meshes), arity 1, 3 and 4, ink (record by
 * record: input order) and collate (the same records, sorted by position), sizes 0, 1, 31, 32, 33
 * primitives up to a 1M-element stream and the 81,920-triangle sphere, small and default limits,
 * also arity-1 streams in order (with in_order_hint: the sort strategy's shortcut) and with one
 * pair swapped: the kept count from kept() and from the compaction state, the dropped count from
 * keep() (a whole-warp ballot, as the contract allows), invocations and primitives, and the output
 * buffer poisoned past the kept records; ink twice for every strategy, with a block per batch (or
 * tile) and persistent (VR_PROG_INK=blocks, =persistent: the hashed and sort kernels' batched one,
 * naive's and multi's per-tile one, warp's; an unknown value is an error).
 * "gpu-small/program-ordered" is the small part for compute-sanitizer. Without a CUDA device both
 * print SKIP. "apps/program-ink-choice" (no device needed): which ink kernel a program gets -
 * cheap_elements() or not, VR_PROG_INK unset, auto, blocks, persistent - and the render program's
 * choice by shader load. */
#include "tests/test.h"

#include <stdlib.h>
#include <string.h>

#include "pipeline/compact/compact.h"
#include "reuse/patches.h"
#include "reuse/program.cuh"
#include "reuse/render_program.h"
#include "scenes/scene.h"
#include "tests/test_helpers.h"

static __host__ __device__ inline uint32_t ord_element(uint32_t id)
{
    const uint32_t x = id * 2654435761u;
    return x ^ (x >> 15);
}

/* The primitive's hash and whether it is kept at `percent`. */
static __host__ __device__ inline uint32_t ord_hash(uint32_t prim, const uint32_t *corner,
                                                    uint32_t arity)
{
    uint32_t h = prim * 0x9e3779b9u;
    for (uint32_t k = 0; k < arity; ++k)
        h = (h ^ corner[k]) * 0x85ebca6bu;
    return h ^ (h >> 13);
}

static __host__ __device__ inline bool ord_kept(uint32_t hash, uint32_t percent)
{
    return (hash >> 8) % 100u < percent;
}

template <int A>
struct ord_program {
    typedef uint32_t Element;
    /* in_order_hint at arity 1: the sort strategy's check runs on the streams in order (its
       shortcut) and on the others (a wrong hint: the full sort) */
    enum { arity = A, ordered_primitive = 1, in_order_hint = A == 1 };
    uint32_t *out;      /* 3 words per slot: source id, position, hash */
    uint32_t capacity;  /* slots */
    uint32_t percent;
    uint32_t *counts;   /* kept (kept()), dropped (keep()), stores past capacity */

    __device__ Element element(uint32_t id) const { return ord_element(id); }
    __device__ bool keep(uint32_t prim, uint32_t pos, const uint32_t *ids,
                         const Element *const *c, bool valid) const
    {
        (void)pos, (void)ids;
        bool k = false;
        if (valid) {
            uint32_t corner[A];
            for (int i = 0; i < A; ++i)
                corner[i] = *c[i];
            k = ord_kept(ord_hash(prim, corner, A), percent);
        }
        const unsigned dropped = __ballot_sync(0xffffffffu, valid && !k);
        if (dropped && (threadIdx.x & 31u) == 0)
            atomicAdd(counts + 1, (uint32_t)__popc(dropped));
        return k;
    }
    __device__ void store(uint32_t slot, uint32_t prim, uint32_t pos, const uint32_t *ids,
                          const Element *const *c) const
    {
        (void)ids;
        if (slot >= capacity) {
            atomicAdd(counts + 2, 1u);
            return;
        }
        uint32_t corner[A];
        for (int i = 0; i < A; ++i)
            corner[i] = *c[i];
        out[3 * (size_t)slot + 0] = prim;
        out[3 * (size_t)slot + 1] = pos;
        out[3 * (size_t)slot + 2] = ord_hash(prim, corner, A);
    }
    __device__ void kept(uint32_t n) const { atomicAdd(counts, n); }
};

/* The CPU twin's program: the kept records at a running count. */
typedef struct ord_twin {
    uint32_t *out, n, dropped, percent, arity;
} ord_twin;

static void ord_twin_element(void *user, uint32_t id, void *out)
{
    (void)user;
    const uint32_t e = ord_element(id);
    memcpy(out, &e, sizeof e);
}

static void ord_twin_primitive(void *user, uint32_t prim, uint32_t pos, const uint32_t *ids,
                               const void *const *elements)
{
    (void)ids;
    ord_twin *t = (ord_twin *)user;
    uint32_t corner[VR_PROGRAM_ARITY_MAX];
    for (uint32_t k = 0; k < t->arity; ++k)
        memcpy(&corner[k], elements[k], sizeof corner[k]);
    const uint32_t h = ord_hash(prim, corner, t->arity);
    if (!ord_kept(h, t->percent)) {
        ++t->dropped;
        return;
    }
    t->out[3 * (size_t)t->n + 0] = prim;
    t->out[3 * (size_t)t->n + 1] = pos;
    t->out[3 * (size_t)t->n + 2] = h;
    ++t->n;
}

static int ord_cmp_pos(const void *a, const void *b)
{
    const uint32_t x = ((const uint32_t *)a)[1], y = ((const uint32_t *)b)[1];
    return x < y ? -1 : x > y;
}

/* One stream: its indices (a plan's order for patch and meshlet), source ids, batch starts. */
typedef struct ord_stream {
    const uint32_t *indices;
    uint32_t index_count, element_count;
    const uint32_t *prim_ids, *starts;
    uint32_t batch_count;
} ord_stream;

template <int A>
static void ord_check_run(vr_reuse_kind kind, const ord_stream *s, const vr_batch_limits *l,
                          uint32_t percent, vr_queue_mode mode, vr_compact_state *state,
                          const char *what)
{
    const uint32_t prims = s->index_count / A;
    char label[256];
    snprintf(label, sizeof label, "%s, %s, block %u, keep %u%%, %s", what,
             vr_reuse_all[kind].name, l->block_size, percent, vr_queue_mode_names[mode]);
    vr_program_params p;
    memset(&p, 0, sizeof p);
    p.indices = s->indices;
    p.index_count = s->index_count;
    p.arity = A;
    p.element_count = s->element_count;
    p.batch_starts = s->starts;
    p.batch_count = s->batch_count;
    p.prim_ids = s->prim_ids;
    p.limits = *l;
    p.count = 1;
    vr_program_counters want_c;
    memset(&want_c, 0, sizeof want_c);
    p.counters = &want_c;
    ord_twin t = {(uint32_t *)malloc(((size_t)prims + 1) * 12), 0, 0, percent, A};
    vr_program_cpu f = {sizeof(uint32_t), ord_twin_element, ord_twin_primitive, &t};
    VR_EXPECT_EQ(vr_program_ref(kind, &p, &f), VR_OK);

    /* the GPU run: device copies, output poisoned, counters cleared */
    uint32_t *d_idx = NULL, *d_ids = NULL, *d_starts = NULL, *d_out = NULL, *d_counts = NULL;
    vr_program_counters *d_c = NULL;
    const size_t out_bytes = ((size_t)prims + 1) * 12;
    uint32_t *got = (uint32_t *)malloc(out_bytes), counts[3] = {0, 0, 0};
    vr_program_counters got_c;
    vr_status st;
    const uint32_t none = 0; /* an empty stream still gets a device buffer */
    if ((st = vr_cuda_upload((void **)&d_idx, s->index_count ? s->indices : &none,
                             s->index_count ? (size_t)s->index_count * 4 : 4, "indices")) ||
        (s->prim_ids && prims &&
         (st = vr_cuda_upload((void **)&d_ids, s->prim_ids, (size_t)prims * 4, "prim ids"))) ||
        (s->starts && (st = vr_cuda_upload((void **)&d_starts, s->starts,
                                           ((size_t)s->batch_count + 1) * 4, "starts"))) ||
        (st = vr_cuda_alloc((void **)&d_out, out_bytes, "out")) ||
        (st = vr_cuda_alloc((void **)&d_counts, sizeof counts, "counts")) ||
        (st = vr_cuda_alloc((void **)&d_c, sizeof *d_c, "counters")))
        goto done;
    VR_CUDA_GOTO(cudaMemset(d_out, 0xFF, out_bytes));
    VR_CUDA_GOTO(cudaMemset(d_counts, 0, sizeof counts));
    VR_CUDA_GOTO(cudaMemset(d_c, 0, sizeof *d_c));
    {
        vr_program_params q = p;
        q.indices = d_idx, q.prim_ids = d_ids, q.batch_starts = d_starts, q.counters = d_c;
        ord_program<A> prog;
        prog.out = d_out, prog.capacity = prims, prog.percent = percent, prog.counts = d_counts;
        if ((st = vr_program_run_ordered(kind, q, prog, state, mode, 0)) != VR_OK)
            goto done;
    }
    VR_CUDA_GOTO(cudaDeviceSynchronize());
    if (prims) { /* no launch without primitives: the state holds an earlier launch's count */
        uint32_t total = 0;
        if ((st = vr_compact_state_result(state, &total)) != VR_OK)
            goto done;
        VR_EXPECT(total == t.n, "%s: the compaction state counted %u, the twin %u", label, total,
                  t.n);
    }
    VR_CUDA_GOTO(cudaMemcpy(got, d_out, out_bytes, cudaMemcpyDeviceToHost));
    VR_CUDA_GOTO(cudaMemcpy(counts, d_counts, sizeof counts, cudaMemcpyDeviceToHost));
    VR_CUDA_GOTO(cudaMemcpy(&got_c, d_c, sizeof got_c, cudaMemcpyDeviceToHost));
    VR_EXPECT(counts[0] == t.n && counts[1] == t.dropped && counts[2] == 0,
              "%s: kept %u dropped %u past capacity %u, twin kept %u dropped %u", label,
              counts[0], counts[1], counts[2], t.n, t.dropped);
    VR_EXPECT(got_c.invocations == want_c.invocations && got_c.primitives == want_c.primitives &&
                  got_c.overflow == 0,
              "%s: invocations %llu primitives %llu overflow %u, twin %llu %llu", label,
              got_c.invocations, got_c.primitives, got_c.overflow, want_c.invocations,
              want_c.primitives);
    if (mode == VR_QUEUE_COLLATE) /* blocks in any order: the same records by position */
        qsort(got, t.n, 12, ord_cmp_pos);
    VR_EXPECT(!memcmp(got, t.out, (size_t)t.n * 12), "%s: the kept records differ", label);
    for (size_t i = (size_t)t.n * 3; i < (size_t)prims * 3; ++i)
        if (got[i] != 0xFFFFFFFFu) {
            VR_EXPECT(0, "%s: word %zu past the kept records was written", label, i);
            break;
        }
done:
    VR_EXPECT(st == VR_OK, "%s: %s", label, vr_last_error());
    void *const bufs[] = {d_idx, d_ids, d_starts, d_out, d_counts, d_c};
    vr_cuda_free_all(bufs, VR_COUNT_OF(bufs));
    free(got);
    free(t.out);
}

/* Every strategy (the plans when `m` is given: arity 3), both schemes, the given rates. */
template <int A>
static void ord_check(const uint32_t *indices, uint32_t index_count, uint32_t element_count,
                      const vr_mesh *m, const vr_batch_limits *l, const uint32_t *percents,
                      size_t n_percents, const char *what)
{
    vr_compact_state *state = NULL;
    VR_EXPECT_EQ(vr_compact_state_create(&state, index_count / A + 1, NULL), VR_OK);
    for (int kind = VR_REUSE_NAIVE; kind < VR_REUSE_KIND_COUNT; ++kind) {
        ord_stream s = {indices, index_count, element_count, NULL, NULL, 0};
        uint32_t *starts = NULL, *plan_indices = NULL;
        vr_batch_plan plan;
        memset(&plan, 0, sizeof plan);
        if (vr_program_planned((vr_reuse_kind)kind)) {
            if (!m)
                continue;
            VR_EXPECT_EQ(vr_reuse_all[kind].plan(&plan, m, l->max_unique, l->max_indices,
                                                 VR_PATCH_BUILDER_CPU), VR_OK);
            plan_indices = (uint32_t *)malloc((size_t)index_count * 4 + 4);
            vr_batch_plan_indices(plan_indices, &plan, indices);
            s.indices = plan_indices, s.prim_ids = plan.tri_order;
            s.starts = plan.starts, s.batch_count = plan.batch_count;
        } else if (vr_program_dynamic((vr_reuse_kind)kind)) {
            VR_EXPECT_EQ(vr_program_batches(&starts, &s.batch_count, indices, index_count, A,
                                            element_count, l->max_unique, l->max_indices),
                         VR_OK);
            s.starts = starts;
        }
        for (size_t i = 0; i < n_percents; ++i)
            for (int mode = 0; mode < 3; ++mode) { /* ink, collate, ink through persistent
                                                      blocks */
                setenv("VR_PROG_INK", mode == 2 ? "persistent" : "blocks", 1);
                ord_check_run<A>((vr_reuse_kind)kind, &s, l, percents[i],
                                 mode == 1 ? VR_QUEUE_COLLATE : VR_QUEUE_INK, state, what);
                unsetenv("VR_PROG_INK");
            }
        free(starts);
        free(plan_indices);
        vr_batch_plan_free(&plan);
    }
    vr_compact_state_destroy(state);
}

/* An arity-A stream of `prims` primitives over `elements` elements with some locality. */
static uint32_t *ord_stream_make(uint32_t prims, uint32_t arity, uint32_t elements, uint64_t seed)
{
    uint32_t *idx = (uint32_t *)malloc((size_t)prims * arity * 4 + 4);
    uint64_t x = seed;
    for (size_t i = 0; i < (size_t)prims * arity; ++i) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        idx[i] = (uint32_t)((i / arity * 5 + (x >> 40) % 23) % elements);
    }
    return idx;
}

template <int A>
static void ord_check_streams(const uint32_t *sizes, size_t n_sizes, const vr_batch_limits *l,
                              const uint32_t *percents, size_t n_percents)
{
    for (size_t i = 0; i < n_sizes; ++i) {
        const uint32_t elements = sizes[i] / 2 + 7;
        uint32_t *idx = ord_stream_make(sizes[i], A, elements, 17 + sizes[i]);
        char what[96];
        snprintf(what, sizeof what, "arity %d, %u primitives", A, sizes[i]);
        ord_check<A>(idx, sizes[i] * A, elements, NULL, l, percents, n_percents, what);
        free(idx);
    }
}

/* Arity-1 streams already in order, as the walk's agents sorted by cell (the sort strategy skips
 * its block sort for a batch in order), and the same with one pair swapped at position `swap`
 * (the batch holding it is sorted): `prims` ids, about 4 per element. */
static void ord_check_sorted(const uint32_t *sizes, size_t n_sizes, const vr_batch_limits *l,
                             const uint32_t *percents, size_t n_percents, uint32_t swap)
{
    for (size_t i = 0; i < n_sizes; ++i) {
        const uint32_t elements = sizes[i] / 4 + 3;
        uint32_t *idx = ord_stream_make(sizes[i], 1, elements, 5 + sizes[i]);
        qsort(idx, sizes[i], sizeof *idx, vr_test_cmp_u32);
        char what[96];
        snprintf(what, sizeof what, "arity 1, %u primitives in order", sizes[i]);
        ord_check<1>(idx, sizes[i], elements, NULL, l, percents, n_percents, what);
        for (uint32_t k = swap; k + 1 < sizes[i]; ++k)
            if (idx[k] != idx[k + 1]) { /* one inversion */
                const uint32_t t = idx[k];
                idx[k] = idx[k + 1], idx[k + 1] = t;
                snprintf(what, sizeof what, "arity 1, %u primitives in order but one pair",
                         sizes[i]);
                ord_check<1>(idx, sizes[i], elements, NULL, l, percents, n_percents, what);
                break;
            }
        free(idx);
    }
}

static vr_batch_limits ord_limits(uint32_t arity, uint32_t block, uint32_t nu, uint32_t indices)
{
    vr_batch_limits l = vr_program_limits_default(arity);
    l.block_size = block;
    if (nu) {
        l.max_unique = nu;
        l.max_indices = indices - indices % arity;
    }
    return l;
}

VR_TEST(test_program_ordered_gpu_small, "gpu-small/program-ordered")
{
    if (vr_test_no_device())
        return VR_TEST_SKIP;
    static const uint32_t sizes[] = {0, 1, 33, 700};
    static const uint32_t percents[] = {0, 50};
    vr_batch_limits l = ord_limits(1, 64, 32, 96);
    ord_check_streams<1>(sizes, VR_COUNT_OF(sizes), &l, percents, VR_COUNT_OF(percents));
    ord_check_sorted(sizes, VR_COUNT_OF(sizes), &l, percents, VR_COUNT_OF(percents), 40);
    l = ord_limits(4, 64, 32, 96);
    ord_check_streams<4>(sizes, VR_COUNT_OF(sizes), &l, percents, VR_COUNT_OF(percents));
    vr_mesh m;
    VR_EXPECT_EQ(vr_test_grid_mesh(&m, 12, 10, 2, 1, 3), VR_OK);
    l = ord_limits(3, 64, 32, 96);
    ord_check<3>(m.indices, m.index_count, m.vertex_count, &m, &l, percents,
                 VR_COUNT_OF(percents), "shuffled grid 12x10");
    vr_mesh_free(&m);

    /* an unknown VR_PROG_INK fails the run, naming the variable (before any launch) */
    vr_compact_state *state = NULL;
    VR_EXPECT_EQ(vr_compact_state_create(&state, 1, NULL), VR_OK);
    vr_program_params p;
    memset(&p, 0, sizeof p);
    setenv("VR_PROG_INK", "persistant", 1);
    const vr_status st = vr_program_run_ordered(VR_REUSE_HASH, p, ord_program<3>(), state,
                                                VR_QUEUE_INK, 0);
    unsetenv("VR_PROG_INK");
    VR_EXPECT(st == VR_ERR_ARG && strstr(vr_last_error(), "VR_PROG_INK=persistant") != NULL,
              "VR_PROG_INK=persistant accepted (%s)", vr_last_error());
    vr_compact_state_destroy(state);
    return VR_TEST_RESULT();
}

VR_TEST(test_program_ordered_gpu, "gpu/program-ordered")
{
    if (vr_test_no_device())
        return VR_TEST_SKIP;
    static const uint32_t sizes[] = {0, 1, 31, 32, 33, 5000, 1u << 20};
    static const uint32_t percents[] = {0, 1, 50, 99, 100};
    static const uint32_t blocks[] = {64, 256};
    for (size_t b = 0; b < VR_COUNT_OF(blocks); ++b) {
        vr_batch_limits l = ord_limits(1, blocks[b], 0, 0);
        ord_check_streams<1>(sizes, VR_COUNT_OF(sizes), &l, percents, VR_COUNT_OF(percents));
        ord_check_sorted(sizes, VR_COUNT_OF(sizes), &l, percents, VR_COUNT_OF(percents), 4000);
        l = ord_limits(4, blocks[b], 64, 192);
        ord_check_streams<4>(sizes, VR_COUNT_OF(sizes), &l, percents, VR_COUNT_OF(percents));
        vr_mesh m;
        VR_EXPECT_EQ(vr_generate_sphere(&m, 81920), VR_OK);
        l = ord_limits(3, blocks[b], 0, 0);
        ord_check<3>(m.indices, m.index_count, m.vertex_count, &m, &l, percents,
                     VR_COUNT_OF(percents), "sphere 81,920");
        vr_mesh_free(&m);
    }
    /* warp batches of 1536 indices at block 1024: the stashes of 32 warps (1.3 MB) do not fit
     * a block's shared memory; the run puts fewer warps in each block, the output unchanged */
    vr_mesh m;
    VR_EXPECT_EQ(vr_generate_sphere(&m, 81920), VR_OK);
    vr_batch_limits l = ord_limits(3, 1024, 0, 0);
    l.batch_indices = 1536;
    static const uint32_t half[] = {50};
    ord_check<3>(m.indices, m.index_count, m.vertex_count, &m, &l, half, 1,
                 "sphere 81,920, warp batch 1536");
    vr_mesh_free(&m);
    return VR_TEST_RESULT();
}

/* ord_program saying whether its element function is cheap */
struct ord_cheap_program : ord_program<3> {
    int cheap;
    bool cheap_elements() const { return cheap != 0; }
};

/* The choice vr_program_run_ordered makes (-1: VR_ERR_ARG) for a program, with VR_PROG_INK =
 * env (NULL: unset). */
template <class P>
static int ord_ink_choice(const P &prog, const char *env)
{
    if (env)
        setenv("VR_PROG_INK", env, 1);
    else
        unsetenv("VR_PROG_INK");
    int persistent = -1;
    const vr_status st = vr_prog_ink_persistent(vr_prog_cheap<P>::of(prog), &persistent);
    unsetenv("VR_PROG_INK");
    return st == VR_OK ? persistent : -1;
}

static int ord_render_ink_choice(uint32_t loop_iterations, const char *env)
{
    vr_reuse_params p;
    memset(&p, 0, sizeof p);
    p.shader.loop_iterations = loop_iterations;
    if (env)
        setenv("VR_PROG_INK", env, 1);
    int persistent = -1;
    const vr_status st = vr_render_program_ink_persistent(&p, &persistent);
    unsetenv("VR_PROG_INK");
    return st == VR_OK ? persistent : -1;
}

VR_TEST(test_program_ink_choice, "apps/program-ink-choice")
{
    ord_cheap_program cheap, dear;
    memset(&cheap, 0, sizeof cheap);
    memset(&dear, 0, sizeof dear);
    cheap.cheap = 1;
    /* unset or auto: persistent only for a program that says it is cheap */
    VR_EXPECT_EQ(ord_ink_choice(ord_program<3>(), NULL), 0);
    VR_EXPECT_EQ(ord_ink_choice(cheap, NULL), 1);
    VR_EXPECT_EQ(ord_ink_choice(dear, NULL), 0);
    VR_EXPECT_EQ(ord_ink_choice(cheap, ""), 1);
    VR_EXPECT_EQ(ord_ink_choice(cheap, "auto"), 1);
    VR_EXPECT_EQ(ord_ink_choice(dear, "auto"), 0);
    /* forced either way for every program */
    VR_EXPECT_EQ(ord_ink_choice(cheap, "blocks"), 0);
    VR_EXPECT_EQ(ord_ink_choice(ord_program<3>(), "persistent"), 1);
    VR_EXPECT_EQ(ord_ink_choice(dear, "persistent"), 1);
    /* anything else is an error naming the variable */
    VR_EXPECT_EQ(ord_ink_choice(cheap, "Persistent"), -1);
    VR_EXPECT(strstr(vr_last_error(), "VR_PROG_INK=Persistent") != NULL, "%s", vr_last_error());
    /* the renderer: cheap up to the light load */
    VR_EXPECT_EQ(VR_RENDER_PROGRAM_CHEAP_STEPS, vr_load_iterations[1]);
    VR_EXPECT_EQ(ord_render_ink_choice(0, NULL), 1);
    VR_EXPECT_EQ(ord_render_ink_choice(vr_load_iterations[1], NULL), 1);
    VR_EXPECT_EQ(ord_render_ink_choice(vr_load_iterations[1] + 1, NULL), 0);
    VR_EXPECT_EQ(ord_render_ink_choice(vr_load_iterations[3], NULL), 0);
    VR_EXPECT_EQ(ord_render_ink_choice(vr_load_iterations[3], "persistent"), 1);
    VR_EXPECT_EQ(ord_render_ink_choice(0, "blocks"), 0);
    VR_EXPECT_EQ(ord_render_ink_choice(0, "sometimes"), -1);
    return VR_TEST_RESULT();
}
