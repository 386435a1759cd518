/* test_dynamic.c - tests of the dynamic-batching strategies hash, phash and sort (reuse/hash.cu,
 * phash.cu, sort.cu and their shared CPU twin in reuse/dyn_ref_common.h).
 * CPU ("reuse/dyn-..."): hand-written batches with the expected invocations spelled out, the
 * three twins against each other, the simulator and an independent count, bad input.
 * GPU ("gpu/dyn-..."): the same batches and a sweep of block sizes x N_u against the twin, keys
 * that all hash to one slot (long probe chains, phash's slow path), malformed batch bounds.
 * "gpu-small/dyn-..." repeats the small GPU tests for tests/gpu.sh's compute-sanitizer runs.
 * GPU tests SKIP without a CUDA device. Try: `vreuse_tests reuse/dyn gpu/dyn`.
 */
#include "tests/test.h"

#include <stdlib.h>
#include <string.h>

#include "pipeline/stage/geometry.h"
#include "reuse/dyn_ref_common.h"
#include "sim/sim.h"
#ifdef VR_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

static const vr_reuse_kind k_dyn_kinds[3] = {VR_REUSE_HASH, VR_REUSE_PHASH, VR_REUSE_SORT};

/* ---- meshes ------------------------------------------------------------------------------ */

/* xorshift32 (seed != 0), its output mixed by a multiply: 24 bits whose low bits, unlike a
 * power-of-two LCG's, do not cycle within a few calls. */
static uint32_t rng_next(uint32_t *s)
{
    uint32_t x = *s;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    *s = x;
    return (x * 2654435769u) >> 8;
}

static float rng_float(uint32_t *s, float lo, float hi)
{
    return lo + (hi - lo) * (float)rng_next(s) / 16777216.0f;
}

static void mesh_free(vr_mesh *m)
{
    free(m->positions);
    free(m->normals);
    free(m->indices);
    memset(m, 0, sizeof *m);
}

/* A mesh with `indices` copied (or left for the caller to fill when NULL) over `vertex_count`
 * vertices at random positions in [-1.2, 1.2]^3: with the identity shader some triangles fall
 * outside the frustum and about half face away, so culling has work. Returns 0 on OOM. */
static int mesh_make(vr_mesh *m, const uint32_t *indices, uint32_t index_count,
                     uint32_t vertex_count, uint32_t seed)
{
    memset(m, 0, sizeof *m);
    m->vertex_count = vertex_count;
    m->index_count = index_count;
    m->positions = malloc(((size_t)vertex_count * 3 + 1) * sizeof(float));
    m->normals = malloc(((size_t)vertex_count * 3 + 1) * sizeof(float));
    m->indices = malloc(((size_t)index_count + 1) * sizeof(uint32_t));
    if (!m->positions || !m->normals || !m->indices) {
        mesh_free(m);
        return 0;
    }
    for (size_t i = 0; i < (size_t)vertex_count * 3; ++i) {
        m->positions[i] = rng_float(&seed, -1.2f, 1.2f);
        m->normals[i] = rng_float(&seed, -1.0f, 1.0f);
    }
    if (indices)
        memcpy(m->indices, indices, (size_t)index_count * sizeof(uint32_t));
    return 1;
}

/* A triangle soup with locality, like an optimised mesh: triangle t takes its corners from a
 * 48-vertex window sliding along the vertex buffer, now and then a far vertex or a degenerate
 * triangle. */
static int mesh_random(vr_mesh *m, uint32_t triangles, uint32_t vertex_count, uint32_t seed)
{
    if (!mesh_make(m, NULL, triangles * 3, vertex_count, seed))
        return 0;
    for (uint32_t t = 0; t < triangles; ++t) {
        const uint32_t base = (uint32_t)((uint64_t)t * (vertex_count - 48) / triangles);
        for (int k = 0; k < 3; ++k) {
            uint32_t r = rng_next(&seed);
            m->indices[3 * t + k] = r % 61 == 0 ? r % vertex_count : base + r % 48;
        }
        if (rng_next(&seed) % 97 == 0)
            m->indices[3 * t + 1] = m->indices[3 * t];
    }
    return 1;
}

/* Batch starts from vr_batches_dynamic; NULL on failure. */
static uint32_t *batches_make_long(const vr_mesh *m, uint32_t max_unique, uint32_t max_indices,
                                   uint32_t *batch_count)
{
    uint32_t *s = malloc((vr_batches_dynamic_bound(m->index_count) + 1) * sizeof *s);
    if (!s)
        return NULL;
    size_t count = 0;
    if (vr_batches_dynamic(s, &count, m->indices, m->index_count, m->vertex_count, max_unique,
                           max_indices) != VR_OK) {
        free(s);
        return NULL;
    }
    *batch_count = (uint32_t)count;
    return s;
}

/* ... with the default max_indices 1023. */
static uint32_t *batches_make(const vr_mesh *m, uint32_t max_unique, uint32_t *batch_count)
{
    return batches_make_long(m, max_unique, VR_MAX_INDICES_DEFAULT, batch_count);
}

/* Indices in the longest batch. */
static uint32_t longest_batch(const uint32_t *starts, uint32_t batch_count)
{
    uint32_t n = 0;
    for (uint32_t b = 0; b < batch_count; ++b)
        if (starts[b + 1] - starts[b] > n)
            n = starts[b + 1] - starts[b];
    return n;
}

/* Distinct vertices summed over the batches, counted the slowest obvious way. */
static uint64_t distinct_per_batch(const vr_mesh *m, const uint32_t *starts, uint32_t batch_count)
{
    uint64_t n = 0;
    for (uint32_t b = 0; b < batch_count; ++b)
        for (uint32_t i = starts[b]; i < starts[b + 1]; ++i) {
            uint32_t j = starts[b];
            while (j < i && m->indices[j] != m->indices[i])
                ++j;
            n += j == i;
        }
    return n;
}

/* ---- running a strategy ------------------------------------------------------------------ */

static void result_reset(vr_geometry_result *r)
{
    memset(&r->counters, 0, sizeof r->counters);
    memset(r->shade_counts, 0, (size_t)r->vertex_count * sizeof(uint32_t));
    /* poison, as the GPU side does: a slot nobody wrote reads NaN / ~0 */
    memset(r->queue.clip, 0xff, (size_t)r->triangles * 12 * sizeof(float));
    memset(r->queue.normal, 0xff, (size_t)r->triangles * 12 * sizeof(float));
    memset(r->queue.vertex, 0xff, (size_t)r->triangles * 3 * sizeof(uint32_t));
    memset(r->queue.tri_id, 0xff, (size_t)r->triangles * sizeof(uint32_t));
}

static vr_reuse_params params_for(const vr_mesh *m, const uint32_t *starts, uint32_t batch_count,
                                  const vr_reuse_params *cfg)
{
    vr_reuse_params p = vr_reuse_params_input(cfg, m->indices, m->index_count, m->positions,
                                              m->normals, m->vertex_count);
    p.batch_starts = starts;
    p.batch_count = batch_count;
    return p;
}

/* Runs the CPU twin with explicit batch starts into `out` (allocated for m). */
static vr_status run_ref(vr_geometry_result *out, vr_reuse_kind kind, const vr_mesh *m,
                         const uint32_t *starts, uint32_t batch_count, const vr_reuse_params *cfg)
{
    vr_reuse_params p = params_for(m, starts, batch_count, cfg);
    result_reset(out);
    p.queue = out->queue;
    p.counters = &out->counters;
    p.shade_counts = out->shade_counts;
    return vr_reuse_all[kind].ref(&p);
}

/* Without culling slot t holds triangle t: its vertex ids and the identity shader's output,
 * clip = (x, y, z, 1) and normal = (n, 0), exactly. */
static void expect_plain_queue(const vr_geometry_result *r, const vr_mesh *m, const char *what)
{
    int bad = 0;
    for (uint32_t t = 0; t < m->index_count / 3 && bad < 5; ++t) {
        int ok = r->queue.tri_id[t] == t;
        for (int k = 0; k < 3 && ok; ++k) {
            const uint32_t v = m->indices[3 * t + k];
            const float *clip = r->queue.clip + (3 * (size_t)t + k) * 4;
            const float *nrm = r->queue.normal + (3 * (size_t)t + k) * 4;
            ok = r->queue.vertex[3 * (size_t)t + k] == v && clip[3] == 1.0f && nrm[3] == 0.0f;
            for (int i = 0; i < 3 && ok; ++i)
                ok = clip[i] == m->positions[3 * (size_t)v + i] &&
                     nrm[i] == m->normals[3 * (size_t)v + i];
        }
        if (!ok) {
            VR_EXPECT(ok, "%s: slot %u does not hold triangle %u (%u %u %u) shaded", what, t, t,
                      m->indices[3 * t], m->indices[3 * t + 1], m->indices[3 * t + 2]);
            ++bad;
        }
    }
}

/* Expects `got` to equal `want` exactly (vr_geometry_compare; its tolerance is never needed
 * with the identity shader). */
static void expect_same(const vr_geometry_result *got, const vr_geometry_result *want, int cull,
                        int count, const char *what)
{
    vr_geometry_diff d;
    uint64_t bad = vr_geometry_compare(&d, got, want, cull, count, stderr, what);
    VR_EXPECT(bad == 0, "%s: %llu mismatches", what, (unsigned long long)bad);
}

static uint64_t shade_sum(const vr_geometry_result *r)
{
    uint64_t n = 0;
    for (uint32_t v = 0; v < r->vertex_count; ++v)
        n += r->shade_counts[v];
    return n;
}

/* ---- hand-written batches ---------------------------------------------------------------- */

/* A case with everything spelled out: batch starts as vr_batches_dynamic must make them,
 * invocations, and per-vertex shading counts. */
typedef struct dyn_case {
    const char *name;
    const uint32_t *indices;
    uint32_t index_count;
    uint32_t vertex_count;
    uint32_t max_unique;
    uint32_t max_indices;
    const uint32_t *starts;
    uint32_t batch_count;
    uint64_t invocations;
    const uint32_t *shade_counts; /* vertex_count entries */
} dyn_case;

/* Fan around vertex 0. N_u = 4: {0,1,2} + 3 fill batch 0; vertex 4 would be a fifth, so
 * triangle 2 opens batch 1 ({0,3,4} + 5) and triangle 4 opens batch 2 ({0,5,6}).
 * Invocations 4 + 4 + 3 = 11: the centre once per batch, 3 and 5 in two batches each. */
static const uint32_t k_fan[] = {0, 1, 2, 0, 2, 3, 0, 3, 4, 0, 4, 5, 0, 5, 6};
static const uint32_t k_fan_starts[] = {0, 6, 12, 15};
static const uint32_t k_fan_shades[] = {3, 1, 1, 2, 1, 2, 1};

/* One batch at N_u = 3: a degenerate triangle (5,5,5), then 1 and 2 repeated in both windings
 * and a triangle of vertices already seen: 3 distinct vertices, 3 invocations. */
static const uint32_t k_rep[] = {5, 5, 5, 1, 2, 1, 2, 1, 2, 5, 1, 2};
static const uint32_t k_rep_starts[] = {0, 12};
static const uint32_t k_rep_shades[] = {0, 1, 1, 0, 0, 1};

/* Triangle t = (t, t+1, t+2) mod 256 for t = 0..341. At N_u = 256 the first 341 triangles are
 * exactly one full batch: 1023 indices, all 256 vertices. Triangle 341 = (85, 86, 87) opens
 * batch 1: 256 + 3 = 259 invocations, vertices 85..87 twice. */
static uint32_t k_full[1026];
static const uint32_t k_full_starts[] = {0, 1023, 1026};
static uint32_t k_full_shades[256];

/* The longest batch, max_indices = VR_MAX_INDICES_MAX = 3069: triangle t = (t, t+1, t+2)
 * mod 1024 for t = 0..1023 at N_u 1024. The first 1023 triangles are exactly one batch of
 * 3069 indices holding all 1024 vertices; triangle 1023 = (1023, 0, 1) adds no new vertex but
 * opens batch 1 on the index limit: 1024 + 3 = 1027 invocations, 1023, 0 and 1 twice. */
static uint32_t k_limit[3072];
static const uint32_t k_limit_starts[] = {0, 3069, 3072};
static uint32_t k_limit_shades[1024];

static void full_case_init(void)
{
    for (uint32_t t = 0; t < 342; ++t)
        for (uint32_t k = 0; k < 3; ++k)
            k_full[3 * t + k] = (t + k) % 256;
    for (uint32_t v = 0; v < 256; ++v)
        k_full_shades[v] = v >= 85 && v <= 87 ? 2 : 1;
    for (uint32_t t = 0; t < 1024; ++t)
        for (uint32_t k = 0; k < 3; ++k)
            k_limit[3 * t + k] = (t + k) % 1024;
    for (uint32_t v = 0; v < 1024; ++v)
        k_limit_shades[v] = v == 1023 || v <= 1 ? 2 : 1;
}

#define HAND_CASES 4

static dyn_case hand_case(int which)
{
    full_case_init();
    const dyn_case cases[HAND_CASES] = {
        {"fan N_u=4", k_fan, 15, 7, 4, 1023, k_fan_starts, 3, 11, k_fan_shades},
        {"repeated N_u=3", k_rep, 12, 6, 3, 1023, k_rep_starts, 1, 3, k_rep_shades},
        {"1023-index batch N_u=256", k_full, 1026, 256, 256, 1023, k_full_starts, 2, 259,
         k_full_shades},
        {"3069-index batch N_u=1024", k_limit, 3072, 1024, 1024, VR_MAX_INDICES_MAX,
         k_limit_starts, 2, 1027, k_limit_shades},
    };
    return cases[which];
}

/* Checks one strategy's result on a hand-written case against the spelled-out numbers. */
static void expect_case(const vr_geometry_result *r, const vr_mesh *m, const dyn_case *c,
                        const char *what)
{
    VR_EXPECT_EQ(r->counters.invocations, c->invocations);
    VR_EXPECT_EQ(r->counters.queue_count, c->index_count / 3);
    VR_EXPECT_EQ(r->counters.overflow, 0);
    VR_EXPECT_EQ(shade_sum(r), c->invocations);
    for (uint32_t v = 0; v < c->vertex_count; ++v)
        VR_EXPECT(r->shade_counts[v] == c->shade_counts[v],
                  "%s: vertex %u shaded %u times, want %u", what, v, r->shade_counts[v],
                  c->shade_counts[v]);
    expect_plain_queue(r, m, what);
}

VR_TEST(test_dyn_hand, "reuse/dyn-hand")
{
    for (int which = 0; which < HAND_CASES; ++which) {
        const dyn_case c = hand_case(which);
        vr_mesh m;
        vr_geometry_result r;
        VR_EXPECT(mesh_make(&m, c.indices, c.index_count, c.vertex_count, 7u + which), "OOM");
        VR_EXPECT_EQ(vr_geometry_result_alloc(&r, c.index_count / 3, c.vertex_count), VR_OK);
        if (vr_test_failures)
            return VR_TEST_RESULT();

        /* the spelled-out starts are what the library's batcher makes */
        uint32_t batch_count = 0;
        uint32_t *starts = batches_make_long(&m, c.max_unique, c.max_indices, &batch_count);
        VR_EXPECT(starts != NULL, "OOM");
        VR_EXPECT(batch_count == c.batch_count, "%s: vr_batches_dynamic made %u batches, want %u",
                  c.name, batch_count, c.batch_count);
        for (uint32_t b = 0; starts && b <= c.batch_count && b <= batch_count; ++b)
            VR_EXPECT(starts[b] == c.starts[b], "%s: batch start %u = %u, want %u", c.name, b,
                      starts[b], c.starts[b]);
        free(starts);
        /* and the simulator counts the same invocations */
        vr_sim_result sim;
        VR_EXPECT_EQ(vr_sim_dynamic(&sim, m.indices, m.index_count, m.vertex_count, c.max_unique,
                                    c.max_indices, NULL),
                     VR_OK);
        VR_EXPECT_EQ(sim.shaded_vertices, c.invocations);

        vr_reuse_params cfg = vr_reuse_params_default();
        cfg.count = 1;
        cfg.max_unique = c.max_unique;
        cfg.max_indices = c.max_indices;
        for (int s = 0; s < 3; ++s) {
            char what[96];
            snprintf(what, sizeof what, "%s ref, %s", vr_reuse_all[k_dyn_kinds[s]].name, c.name);
            vr_status st = run_ref(&r, k_dyn_kinds[s], &m, c.starts, c.batch_count, &cfg);
            VR_EXPECT(st == VR_OK, "%s: %s", what, vr_last_error());
            expect_case(&r, &m, &c, what);
        }
        vr_geometry_result_free(&r);
        mesh_free(&m);
    }
    return VR_TEST_RESULT();
}

/* Two triangles kept (counter-clockwise in x, y), one back-facing, one degenerate (zero area):
 * culling keeps triangles 0 and 1 in slots 0 and 1, yet all four vertices are shaded once. */
VR_TEST(test_dyn_cull, "reuse/dyn-cull")
{
    static const uint32_t idx[] = {0, 1, 2, 1, 3, 2, 0, 2, 1, 3, 3, 3};
    static const uint32_t starts[] = {0, 12};
    static const float pos[] = {0, 0, 0, 0.5f, 0, 0, 0, 0.5f, 0, 0.5f, 0.5f, 0};
    vr_mesh m;
    vr_geometry_result r;
    VR_EXPECT(mesh_make(&m, idx, 12, 4, 3), "OOM");
    VR_EXPECT_EQ(vr_geometry_result_alloc(&r, 4, 4), VR_OK);
    if (vr_test_failures)
        return VR_TEST_RESULT();
    memcpy(m.positions, pos, sizeof pos);
    vr_reuse_params cfg = vr_reuse_params_default();
    cfg.count = 1;
    cfg.cull = 1;
    cfg.max_unique = 4;
    for (int s = 0; s < 3; ++s) {
        VR_EXPECT_EQ(run_ref(&r, k_dyn_kinds[s], &m, starts, 1, &cfg), VR_OK);
        VR_EXPECT_EQ(r.counters.invocations, 4);
        VR_EXPECT_EQ(r.counters.queue_count, 2);
        VR_EXPECT_EQ(r.counters.overflow, 0);
        VR_EXPECT_EQ(r.queue.tri_id[0], 0);
        VR_EXPECT_EQ(r.queue.tri_id[1], 1);
        VR_EXPECT_EQ(r.queue.tri_id[2], 0xffffffffu);
        for (uint32_t v = 0; v < 4; ++v)
            VR_EXPECT_EQ(r.shade_counts[v], 1);
    }
    vr_geometry_result_free(&r);
    mesh_free(&m);
    return VR_TEST_RESULT();
}

/* Random meshes at several N_u, culling off and on: the three twins agree exactly with each
 * other; invocations equal the shade-count sum, the simulator's count and a brute-force count
 * of distinct vertices per batch. */
VR_TEST(test_dyn_agree, "reuse/dyn-agree")
{
    static const uint32_t nus[] = {3, 4, 17, 64, 256, 1024};
    vr_mesh m;
    VR_EXPECT(mesh_random(&m, 3000, 2000, 11), "OOM");
    vr_geometry_result r[3];
    for (int s = 0; s < 3; ++s)
        VR_EXPECT_EQ(vr_geometry_result_alloc(&r[s], 3000, 2000), VR_OK);
    if (vr_test_failures)
        return VR_TEST_RESULT();
    for (size_t n = 0; n < sizeof nus / sizeof nus[0]; ++n) {
        uint32_t batch_count = 0;
        uint32_t *starts = batches_make(&m, nus[n], &batch_count);
        VR_EXPECT(starts && batch_count > 0, "N_u %u: no batches: %s", nus[n], vr_last_error());
        if (!starts || batch_count == 0)
            break;
        const uint64_t distinct = distinct_per_batch(&m, starts, batch_count);
        vr_sim_result sim;
        VR_EXPECT_EQ(vr_sim_dynamic(&sim, m.indices, m.index_count, m.vertex_count, nus[n],
                                    VR_MAX_INDICES_DEFAULT, NULL),
                     VR_OK);
        for (int cull = 0; cull < 2; ++cull) {
            vr_reuse_params cfg = vr_reuse_params_default();
            cfg.count = 1;
            cfg.cull = cull;
            cfg.max_unique = nus[n];
            for (int s = 0; s < 3; ++s) {
                char what[96];
                snprintf(what, sizeof what, "%s ref, N_u %u, cull %d",
                         vr_reuse_all[k_dyn_kinds[s]].name, nus[n], cull);
                vr_status st = run_ref(&r[s], k_dyn_kinds[s], &m, starts, batch_count, &cfg);
                VR_EXPECT(st == VR_OK, "%s: %s", what, vr_last_error());
                VR_EXPECT_EQ(r[s].counters.invocations, distinct);
                VR_EXPECT_EQ(r[s].counters.invocations, sim.shaded_vertices);
                VR_EXPECT_EQ(shade_sum(&r[s]), distinct);
                if (!cull)
                    expect_plain_queue(&r[s], &m, what);
                else
                    VR_EXPECT(r[s].counters.queue_count > 0 && r[s].counters.queue_count < 3000,
                              "%s: culling kept %u of 3000", what, r[s].counters.queue_count);
                if (s > 0)
                    expect_same(&r[s], &r[0], cull ? VR_COMPARE_KEPT_ORDER : VR_COMPARE_ALL, 1, what);
            }
        }
        free(starts);
    }
    for (int s = 0; s < 3; ++s)
        vr_geometry_result_free(&r[s]);
    mesh_free(&m);
    return VR_TEST_RESULT();
}

/* Batches longer than 1023 indices (max_indices 1536, 2046 and the limit 3069) on a mesh whose
 * windows slide slowly (12000 triangles over 3000 vertices: about 0.25 new vertices per
 * triangle), so batches end on both limits: the three twins agree exactly, with the simulator,
 * a brute-force count and the index bound, and the longest batch is longer than 1024. */
VR_TEST(test_dyn_long, "reuse/dyn-long")
{
    static const struct { uint32_t nu, max_indices; } cfgs[] = {
        {256, 1536}, {256, 2046}, {512, 2046}, {512, 3069}, {1024, 3069}, {64, 2046},
    };
    const uint32_t tris = 12000;
    vr_mesh m;
    VR_EXPECT(mesh_random(&m, tris, 3000, 41), "OOM");
    vr_geometry_result r[3];
    for (int s = 0; s < 3; ++s)
        VR_EXPECT_EQ(vr_geometry_result_alloc(&r[s], tris, 3000), VR_OK);
    if (vr_test_failures)
        return VR_TEST_RESULT();
    for (size_t n = 0; n < sizeof cfgs / sizeof cfgs[0]; ++n) {
        const uint32_t nu = cfgs[n].nu, mi = cfgs[n].max_indices;
        uint32_t batch_count = 0;
        uint32_t *starts = batches_make_long(&m, nu, mi, &batch_count);
        VR_EXPECT(starts && batch_count > 0, "N_u %u/%u: no batches: %s", nu, mi, vr_last_error());
        if (!starts || batch_count == 0)
            break;
        const uint32_t longest = longest_batch(starts, batch_count);
        VR_EXPECT(longest <= mi, "N_u %u/%u: a batch of %u indices", nu, mi, longest);
        if (nu >= 256)
            VR_EXPECT(longest > 1024, "N_u %u/%u: longest batch %u: not a long-batch test", nu,
                      mi, longest);
        /* the simulator with the same bound, and the library's own batches for it */
        vr_sim_result sim;
        VR_EXPECT_EQ(vr_sim_dynamic(&sim, m.indices, m.index_count, m.vertex_count, nu, mi, NULL),
                     VR_OK);
        uint32_t *lib_starts = NULL, lib_count = 0;
        VR_EXPECT_EQ(vr_geometry_dyn_batches(&lib_starts, &lib_count, &m, nu, mi), VR_OK);
        VR_EXPECT(lib_count == batch_count && lib_starts &&
                      !memcmp(lib_starts, starts, ((size_t)batch_count + 1) * sizeof *starts),
                  "N_u %u/%u: vr_geometry_dyn_batches differs from vr_batches_dynamic", nu, mi);
        free(lib_starts);
        const uint64_t distinct = distinct_per_batch(&m, starts, batch_count);
        for (int s = 0; s < 3; ++s) {
            char what[96];
            snprintf(what, sizeof what, "%s ref, N_u %u, max_indices %u",
                     vr_reuse_all[k_dyn_kinds[s]].name, nu, mi);
            vr_reuse_params cfg = vr_reuse_params_default();
            cfg.count = 1;
            cfg.max_unique = nu;
            cfg.max_indices = mi;
            vr_status st = run_ref(&r[s], k_dyn_kinds[s], &m, starts, batch_count, &cfg);
            VR_EXPECT(st == VR_OK, "%s: %s", what, vr_last_error());
            VR_EXPECT_EQ(r[s].counters.invocations, distinct);
            VR_EXPECT_EQ(r[s].counters.invocations, sim.shaded_vertices);
            VR_EXPECT_EQ(shade_sum(&r[s]), distinct);
            expect_plain_queue(&r[s], &m, what);
            if (s > 0)
                expect_same(&r[s], &r[0], 0, 1, what);
        }
        /* the same batches under a tighter bound are input the twins reject */
        for (int s = 0; s < 3 && longest > VR_MAX_INDICES_DEFAULT; ++s) {
            vr_reuse_params cfg = vr_reuse_params_default();
            cfg.max_unique = nu;
            vr_set_error(VR_OK, "%s", "");
            vr_status st = run_ref(&r[s], k_dyn_kinds[s], &m, starts, batch_count, &cfg);
            VR_EXPECT(st == VR_ERR_FORMAT && strstr(vr_last_error(), "max_indices = 1023"),
                      "%s ref, N_u %u, batches of %u checked against 1023: %s: %s",
                      vr_reuse_all[k_dyn_kinds[s]].name, nu, mi, vr_status_string(st),
                      vr_last_error());
        }
        /* vr_geometry_ref computes the same batches from cfg itself */
        vr_reuse_params cfg = vr_reuse_params_default();
        cfg.count = 1;
        cfg.max_unique = nu;
        cfg.max_indices = mi;
        VR_EXPECT_EQ(vr_geometry_ref(&r[1], &vr_reuse_all[VR_REUSE_HASH], &m, &cfg), VR_OK);
        VR_EXPECT_EQ(r[1].counters.invocations, sim.shaded_vertices);
        free(starts);
    }
    for (int s = 0; s < 3; ++s)
        vr_geometry_result_free(&r[s]);
    mesh_free(&m);
    return VR_TEST_RESULT();
}

/* Expects status `want` from every twin on (m, starts) with `cfg`, and a message naming it. */
static void expect_ref_error(const vr_mesh *m, const uint32_t *starts, uint32_t batch_count,
                             const vr_reuse_params *cfg, vr_status want, const char *what)
{
    vr_geometry_result r;
    if (vr_geometry_result_alloc(&r, m->index_count / 3, m->vertex_count) != VR_OK) {
        VR_EXPECT(0, "OOM");
        return;
    }
    for (int s = 0; s < 3; ++s) {
        const char *name = vr_reuse_all[k_dyn_kinds[s]].name;
        vr_set_error(VR_OK, "%s", "");
        vr_status st = run_ref(&r, k_dyn_kinds[s], m, starts, batch_count, cfg);
        VR_EXPECT(st == want, "%s, %s: status %s, want %s", name, what, vr_status_string(st),
                  vr_status_string(want));
        VR_EXPECT(strstr(vr_last_error(), name) != NULL, "%s, %s: message '%s' names no strategy",
                  name, what, vr_last_error());
    }
    vr_geometry_result_free(&r);
}

VR_TEST(test_dyn_bad_input, "reuse/dyn-bad-input")
{
    vr_mesh fan, big;
    VR_EXPECT(mesh_make(&fan, k_fan, 15, 7, 5), "OOM");
    full_case_init();
    VR_EXPECT(mesh_make(&big, k_full, 1026, 256, 5), "OOM");
    if (vr_test_failures)
        return VR_TEST_RESULT();
    vr_reuse_params cfg = vr_reuse_params_default();
    cfg.count = 1;
    cfg.max_unique = 4;

    vr_reuse_params c = cfg;
    c.max_unique = 2;
    expect_ref_error(&fan, k_fan_starts, 3, &c, VR_ERR_ARG, "max_unique 2");
    c.max_unique = VR_NU_MAX + 1;
    expect_ref_error(&fan, k_fan_starts, 3, &c, VR_ERR_ARG, "max_unique 1025");
    c = cfg;
    c.block_size = 48;
    expect_ref_error(&fan, k_fan_starts, 3, &c, VR_ERR_ARG, "block size 48");
    expect_ref_error(&fan, NULL, 0, &cfg, VR_ERR_ARG, "no batches");

    static const uint32_t short_cover[] = {0, 6};
    expect_ref_error(&fan, short_cover, 1, &cfg, VR_ERR_FORMAT, "batches end at 6 of 15");
    static const uint32_t late_start[] = {3, 6, 12, 15};
    expect_ref_error(&fan, late_start, 3, &cfg, VR_ERR_FORMAT, "batches start at 3");
    static const uint32_t split_tri[] = {0, 7, 15};
    expect_ref_error(&fan, split_tri, 2, &cfg, VR_ERR_FORMAT, "batch splits a triangle");
    static const uint32_t backwards[] = {0, 12, 6, 15};
    expect_ref_error(&fan, backwards, 3, &cfg, VR_ERR_FORMAT, "batch ends before it starts");
    static const uint32_t one_batch[] = {0, 15};
    expect_ref_error(&fan, one_batch, 1, &cfg, VR_ERR_FORMAT, "7 distinct > N_u 4");

    static const uint32_t too_long[] = {0, 1026};
    c = cfg;
    c.max_unique = 256;
    expect_ref_error(&big, too_long, 1, &c, VR_ERR_FORMAT, "1026-index batch");
    c.max_indices = 1026; /* the same batch is fine when allowed */
    {
        vr_geometry_result r;
        if (vr_geometry_result_alloc(&r, 342, 256) == VR_OK) {
            for (int s = 0; s < 3; ++s)
                VR_EXPECT_EQ(run_ref(&r, k_dyn_kinds[s], &big, too_long, 1, &c), VR_OK);
            vr_geometry_result_free(&r);
        }
    }
    static const uint32_t bad_mi[] = {0, 2, 1024, 1535, 2047, VR_MAX_INDICES_MAX + 3};
    for (size_t i = 0; i < sizeof bad_mi / sizeof bad_mi[0]; ++i) {
        char what[64];
        snprintf(what, sizeof what, "max_indices %u", bad_mi[i]);
        c = cfg;
        c.max_indices = bad_mi[i];
        expect_ref_error(&fan, k_fan_starts, 3, &c, VR_ERR_ARG, what);
        uint32_t *st_ptr = NULL, n = 0;
        VR_EXPECT(vr_geometry_dyn_batches(&st_ptr, &n, &fan, 4, bad_mi[i]) == VR_ERR_ARG &&
                      strstr(vr_last_error(), "max_indices"),
                  "vr_geometry_dyn_batches, %s: %s", what, vr_last_error());
        free(st_ptr);
    }

    fan.indices[4] = 7; /* == vertex_count */
    expect_ref_error(&fan, k_fan_starts, 3, &cfg, VR_ERR_FORMAT, "index 7 of 7 vertices");
    fan.indices[4] = 2;

    vr_geometry_result r;
    if (vr_geometry_result_alloc(&r, 5, 7) == VR_OK) {
        r.queue.capacity = 4;
        for (int s = 0; s < 3; ++s)
            VR_EXPECT_EQ(run_ref(&r, k_dyn_kinds[s], &fan, k_fan_starts, 3, &cfg),
                         VR_ERR_OVERFLOW);
        r.queue.capacity = 5;
        vr_geometry_result_free(&r);
    }
    mesh_free(&fan);
    mesh_free(&big);
    return VR_TEST_RESULT();
}

/* An empty index buffer needs no batches and changes nothing. */
VR_TEST(test_dyn_empty, "reuse/dyn-empty")
{
    vr_mesh m;
    VR_EXPECT(mesh_make(&m, NULL, 0, 4, 1), "OOM");
    vr_geometry_result r;
    VR_EXPECT_EQ(vr_geometry_result_alloc(&r, 0, 4), VR_OK);
    if (vr_test_failures)
        return VR_TEST_RESULT();
    vr_reuse_params cfg = vr_reuse_params_default();
    cfg.count = 1;
    for (int s = 0; s < 3; ++s) {
        VR_EXPECT_EQ(run_ref(&r, k_dyn_kinds[s], &m, NULL, 0, &cfg), VR_OK);
        VR_EXPECT_EQ(r.counters.invocations, 0);
        VR_EXPECT_EQ(r.counters.queue_count, 0);
    }
    vr_geometry_result_free(&r);
    mesh_free(&m);
    return VR_TEST_RESULT();
}

/* ---- GPU --------------------------------------------------------------------------------- */

#ifdef VR_HAVE_CUDA
static int gpu_ready(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
        printf("SKIP: no CUDA device\n");
        return 0;
    }
    return 1;
}

/* Runs ops->run on device copies of m, its batch starts (device-side, so malformed ones reach
 * the kernel) and a poisoned result, waits, and copies the result back into `out`. */
static vr_status run_gpu(vr_geometry_result *out, vr_reuse_kind kind, const vr_mesh *m,
                         const uint32_t *starts, uint32_t batch_count, const vr_reuse_params *cfg)
{
    const size_t tris = out->triangles, verts = m->vertex_count;
    const size_t bytes[10] = {
        ((size_t)m->index_count + 1) * 4, (verts * 3 + 1) * 4, (verts * 3 + 1) * 4,
        ((size_t)batch_count + 2) * 4,    (tris * 12 + 1) * 4, (tris * 12 + 1) * 4,
        (tris * 3 + 1) * 4,               (tris + 1) * 4,      sizeof(vr_counters),
        (verts + 1) * 4,
    };
    void *d[10] = {NULL};
    cudaError_t e = cudaSuccess;
    for (int i = 0; i < 10 && e == cudaSuccess; ++i)
        e = cudaMalloc(&d[i], bytes[i]);
    if (e == cudaSuccess)
        e = cudaMemcpy(d[0], m->indices, (size_t)m->index_count * 4, cudaMemcpyHostToDevice);
    if (e == cudaSuccess)
        e = cudaMemcpy(d[1], m->positions, verts * 12, cudaMemcpyHostToDevice);
    if (e == cudaSuccess)
        e = cudaMemcpy(d[2], m->normals, verts * 12, cudaMemcpyHostToDevice);
    if (e == cudaSuccess && starts)
        e = cudaMemcpy(d[3], starts, ((size_t)batch_count + 1) * 4, cudaMemcpyHostToDevice);
    for (int i = 4; i < 8 && e == cudaSuccess; ++i)
        e = cudaMemset(d[i], 0xff, bytes[i]);
    for (int i = 8; i < 10 && e == cudaSuccess; ++i)
        e = cudaMemset(d[i], 0, bytes[i]);
    vr_status st = VR_OK;
    if (e == cudaSuccess) {
        vr_reuse_params p = params_for(m, starts ? (const uint32_t *)d[3] : NULL, batch_count, cfg);
        p.indices = d[0];
        p.positions = d[1];
        p.normals = d[2];
        p.queue.clip = d[4];
        p.queue.normal = d[5];
        p.queue.vertex = d[6];
        p.queue.tri_id = d[7];
        p.queue.capacity = out->queue.capacity;
        p.counters = d[8];
        p.shade_counts = d[9];
        p.temp = NULL;
        p.stream = NULL;
        /* culling into an ink or collate queue: the caller owns the compaction state */
        vr_compact_state *qs = NULL;
        if (p.cull && p.queue_mode != VR_QUEUE_ATOMIC)
            st = vr_compact_state_create(&qs, (uint32_t)(tris > batch_count ? tris : batch_count) + 1u,
                                         NULL);
        p.queue_state = qs;
        if (st == VR_OK)
            st = vr_reuse_all[kind].run(&p);
        e = cudaDeviceSynchronize();
        uint32_t kept = 0;
        if (st == VR_OK && e == cudaSuccess && qs)
            st = vr_compact_state_result(qs, &kept); /* VR_ERR_CUDA when a block waited too long */
        vr_compact_state_destroy(qs);
    }
    if (e == cudaSuccess)
        e = cudaMemcpy(out->queue.clip, d[4], tris * 48, cudaMemcpyDeviceToHost);
    if (e == cudaSuccess)
        e = cudaMemcpy(out->queue.normal, d[5], tris * 48, cudaMemcpyDeviceToHost);
    if (e == cudaSuccess)
        e = cudaMemcpy(out->queue.vertex, d[6], tris * 12, cudaMemcpyDeviceToHost);
    if (e == cudaSuccess)
        e = cudaMemcpy(out->queue.tri_id, d[7], tris * 4, cudaMemcpyDeviceToHost);
    if (e == cudaSuccess)
        e = cudaMemcpy(&out->counters, d[8], sizeof(vr_counters), cudaMemcpyDeviceToHost);
    if (e == cudaSuccess)
        e = cudaMemcpy(out->shade_counts, d[9], verts * 4, cudaMemcpyDeviceToHost);
    for (int i = 0; i < 10; ++i)
        cudaFree(d[i]);
    if (e != cudaSuccess)
        return vr_set_error(VR_ERR_CUDA, "test_dynamic.c: %s on the GPU: %s",
                            vr_reuse_all[kind].name, cudaGetErrorString(e));
    return st;
}

/* The GPU against its twin on m with cfg: status, counters, shade counts and queue exact. */
static void expect_gpu_matches(vr_geometry_result *gpu, vr_geometry_result *ref,
                               vr_reuse_kind kind, const vr_mesh *m, const uint32_t *starts,
                               uint32_t batch_count, const vr_reuse_params *cfg, const char *what)
{
    vr_status st = run_ref(ref, kind, m, starts, batch_count, cfg);
    VR_EXPECT(st == VR_OK, "%s: ref: %s", what, vr_last_error());
    st = run_gpu(gpu, kind, m, starts, batch_count, cfg);
    VR_EXPECT(st == VR_OK, "%s: GPU: %s", what, vr_last_error());
    if (st == VR_OK)
        expect_same(gpu, ref, vr_geometry_compare_mode(cfg), cfg->count, what);
}

/* sort holds at most 32 keys per thread (reuse/sort.cu): for max_indices > 32 x block it must
 * refuse with VR_ERR_ARG naming the limit, before launching anything. Returns 1 when that case
 * applied (and was checked). */
static int expect_sort_too_long(vr_geometry_result *gpu, vr_reuse_kind kind, const vr_mesh *m,
                                const uint32_t *starts, uint32_t batch_count,
                                const vr_reuse_params *cfg, const char *what)
{
    if (kind != VR_REUSE_SORT || cfg->max_indices <= 32 * cfg->block_size)
        return 0;
    vr_status st = run_gpu(gpu, kind, m, starts, batch_count, cfg);
    VR_EXPECT(st == VR_ERR_ARG && strstr(vr_last_error(), "sort: batches of at most"),
              "%s: status %s: %s", what, vr_status_string(st), vr_last_error());
    return 1;
}

/* The hand-written cases on the GPU at several block sizes (fewer threads than N_u included). */
VR_TEST(test_gpu_dyn_hand, "gpu/dyn-hand", "gpu-small/dyn-hand")
{
    if (!gpu_ready())
        return VR_TEST_SKIP;
    static const uint32_t blocks[] = {32, 64, 256, 1024};
    for (int which = 0; which < HAND_CASES; ++which) {
        const dyn_case c = hand_case(which);
        vr_mesh m;
        vr_geometry_result gpu, ref;
        VR_EXPECT(mesh_make(&m, c.indices, c.index_count, c.vertex_count, 7u + which), "OOM");
        VR_EXPECT_EQ(vr_geometry_result_alloc(&gpu, c.index_count / 3, c.vertex_count), VR_OK);
        VR_EXPECT_EQ(vr_geometry_result_alloc(&ref, c.index_count / 3, c.vertex_count), VR_OK);
        if (vr_test_failures)
            return VR_TEST_RESULT();
        vr_reuse_params cfg = vr_reuse_params_default();
        cfg.count = 1;
        cfg.max_unique = c.max_unique;
        cfg.max_indices = c.max_indices;
        for (size_t bi = 0; bi < sizeof blocks / sizeof blocks[0]; ++bi)
            for (int s = 0; s < 3; ++s) {
                char what[96];
                snprintf(what, sizeof what, "%s GPU, %s, block %u",
                         vr_reuse_all[k_dyn_kinds[s]].name, c.name, blocks[bi]);
                cfg.block_size = blocks[bi];
                if (expect_sort_too_long(&gpu, k_dyn_kinds[s], &m, c.starts, c.batch_count, &cfg,
                                         what))
                    continue;
                expect_gpu_matches(&gpu, &ref, k_dyn_kinds[s], &m, c.starts, c.batch_count, &cfg,
                                   what);
                expect_case(&gpu, &m, &c, what);
            }
        vr_geometry_result_free(&gpu);
        vr_geometry_result_free(&ref);
        mesh_free(&m);
    }
    return VR_TEST_RESULT();
}

/* A random mesh over block sizes x N_u (block smaller and larger than N_u, non-powers of two),
 * counting on, culling on for two block sizes, and once without counting. sort supports only
 * the block sizes it is instantiated for and must say so. */
VR_TEST(test_gpu_dyn_sweep, "gpu/dyn-sweep")
{
    if (!gpu_ready())
        return VR_TEST_SKIP;
    static const uint32_t nus[] = {3, 17, 64, 256, 1024};
    static const uint32_t blocks[] = {32, 64, 96, 128, 256, 512, 1024};
    vr_mesh m;
    vr_geometry_result gpu, ref;
    VR_EXPECT(mesh_random(&m, 2000, 1500, 23), "OOM");
    VR_EXPECT_EQ(vr_geometry_result_alloc(&gpu, 2000, 1500), VR_OK);
    VR_EXPECT_EQ(vr_geometry_result_alloc(&ref, 2000, 1500), VR_OK);
    if (vr_test_failures)
        return VR_TEST_RESULT();
    for (size_t n = 0; n < sizeof nus / sizeof nus[0]; ++n) {
        uint32_t batch_count = 0;
        uint32_t *starts = batches_make(&m, nus[n], &batch_count);
        VR_EXPECT(starts && batch_count > 0, "N_u %u: no batches", nus[n]);
        if (!starts || batch_count == 0)
            break;
        for (size_t bi = 0; bi < sizeof blocks / sizeof blocks[0]; ++bi)
            for (int cull = 0; cull < 2; ++cull) {
                if (cull && blocks[bi] != 64 && blocks[bi] != 256)
                    continue;
                for (int s = 0; s < 3; ++s) {
                    char what[96];
                    snprintf(what, sizeof what, "%s GPU, N_u %u, block %u, cull %d",
                             vr_reuse_all[k_dyn_kinds[s]].name, nus[n], blocks[bi], cull);
                    vr_reuse_params cfg = vr_reuse_params_default();
                    cfg.count = 1;
                    cfg.cull = cull;
                    cfg.max_unique = nus[n];
                    cfg.block_size = blocks[bi];
                    if (k_dyn_kinds[s] == VR_REUSE_SORT && blocks[bi] == 96) {
                        vr_status st = run_gpu(&gpu, k_dyn_kinds[s], &m, starts, batch_count, &cfg);
                        VR_EXPECT(st == VR_ERR_ARG && strstr(vr_last_error(), "block size 96"),
                                  "%s: status %s: %s", what, vr_status_string(st), vr_last_error());
                        continue;
                    }
                    expect_gpu_matches(&gpu, &ref, k_dyn_kinds[s], &m, starts, batch_count, &cfg,
                                       what);
                    if (!cull && nus[n] == 256 && blocks[bi] == 256) {
                        cfg.count = 0;
                        snprintf(what, sizeof what, "%s GPU, N_u 256, block 256, no counting",
                                 vr_reuse_all[k_dyn_kinds[s]].name);
                        expect_gpu_matches(&gpu, &ref, k_dyn_kinds[s], &m, starts, batch_count,
                                           &cfg, what);
                    }
                }
            }
        free(starts);
    }
    vr_geometry_result_free(&gpu);
    vr_geometry_result_free(&ref);
    mesh_free(&m);
    return VR_TEST_RESULT();
}

/* Batches longer than 1024 indices (max_indices 2046, N_u 256 and 512; 3069 at N_u 1024) on the
 * slowly sliding random mesh of reuse/dyn-long, so a batch has more indices than threads at
 * every block size: each thread inserts ceil(count / block) of them. All three strategies
 * against the twin, exactly; sort below 2046 / 32 = 64 threads must refuse. `small` (for
 * compute-sanitizer): fewer triangles and block sizes. */
static int gpu_dyn_long(int small)
{
    if (!gpu_ready())
        return VR_TEST_SKIP;
    static const struct { uint32_t nu, max_indices; } cfgs[] = {
        {256, 2046}, {512, 2046}, {1024, 3069},
    };
    static const uint32_t blocks_all[] = {32, 64, 128, 256, 512, 1024, 0};
    static const uint32_t blocks_small[] = {32, 256, 0};
    const uint32_t *blocks = small ? blocks_small : blocks_all;
    const uint32_t tris = small ? 3000 : 12000, verts = small ? 750 : 3000;
    vr_mesh m;
    vr_geometry_result gpu, ref;
    VR_EXPECT(mesh_random(&m, tris, verts, 41), "OOM");
    VR_EXPECT_EQ(vr_geometry_result_alloc(&gpu, tris, verts), VR_OK);
    VR_EXPECT_EQ(vr_geometry_result_alloc(&ref, tris, verts), VR_OK);
    if (vr_test_failures)
        return VR_TEST_RESULT();
    for (size_t n = 0; n < sizeof cfgs / sizeof cfgs[0]; ++n) {
        if (small && n == 2)
            break;
        uint32_t batch_count = 0;
        uint32_t *starts = batches_make_long(&m, cfgs[n].nu, cfgs[n].max_indices, &batch_count);
        VR_EXPECT(starts && batch_count > 0, "N_u %u/%u: no batches", cfgs[n].nu,
                  cfgs[n].max_indices);
        if (!starts || batch_count == 0)
            break;
        VR_EXPECT(longest_batch(starts, batch_count) > 1024, "N_u %u/%u: no batch > 1024",
                  cfgs[n].nu, cfgs[n].max_indices);
        for (const uint32_t *b = blocks; *b; ++b)
            for (int cull = 0; cull < 2; ++cull) {
                if (cull && *b != 256)
                    continue;
                for (int s = 0; s < 3; ++s) {
                    char what[128];
                    snprintf(what, sizeof what, "%s GPU, N_u %u, max_indices %u, block %u, cull %d",
                             vr_reuse_all[k_dyn_kinds[s]].name, cfgs[n].nu, cfgs[n].max_indices,
                             *b, cull);
                    vr_reuse_params cfg = vr_reuse_params_default();
                    cfg.count = 1;
                    cfg.cull = cull;
                    cfg.max_unique = cfgs[n].nu;
                    cfg.max_indices = cfgs[n].max_indices;
                    cfg.block_size = *b;
                    if (expect_sort_too_long(&gpu, k_dyn_kinds[s], &m, starts, batch_count, &cfg,
                                             what))
                        continue;
                    expect_gpu_matches(&gpu, &ref, k_dyn_kinds[s], &m, starts, batch_count, &cfg,
                                       what);
                }
            }
        free(starts);
    }
    vr_geometry_result_free(&gpu);
    vr_geometry_result_free(&ref);
    mesh_free(&m);
    return VR_TEST_RESULT();
}

VR_TEST(test_gpu_dyn_long, "gpu/dyn-long") { return gpu_dyn_long(0); }
VR_TEST(test_gpu_small_dyn_long, "gpu-small/dyn-long") { return gpu_dyn_long(1); }

/* Keys that all hash to slot 0 of the table for N_u: every insertion after the first walks the
 * whole chain (hash) or drops to the warp-cooperative slow path (phash), with many warps
 * inserting at once. Half of the batches mix in ordinary keys. */
VR_TEST(test_gpu_dyn_collide, "gpu/dyn-collide", "gpu-small/dyn-collide")
{
    if (!gpu_ready())
        return VR_TEST_SKIP;
    static const uint32_t nus[] = {16, 256};
    for (size_t n = 0; n < 2; ++n) {
        const uint32_t nu = nus[n], log2 = vr_dyn_table_log2(nu);
        const uint32_t vertex_count = (nu + 8) << log2; /* about nu + 8 keys hash to slot 0 */
        uint32_t *keys = malloc(vertex_count * sizeof *keys);
        uint32_t key_count = 0;
        for (uint32_t v = 0; keys && v < vertex_count; ++v)
            if (vr_dyn_hash(v, log2) == 0)
                keys[key_count++] = v;
        VR_EXPECT(key_count >= nu, "N_u %u: only %u colliding keys", nu, key_count);
        const uint32_t triangles = 4 * 341;
        vr_mesh m;
        VR_EXPECT(keys && mesh_make(&m, NULL, triangles * 3, vertex_count, 31), "OOM");
        if (vr_test_failures) {
            free(keys);
            return VR_TEST_RESULT();
        }
        uint32_t seed = 5;
        for (uint32_t t = 0; t < triangles; ++t)
            for (uint32_t k = 0; k < 3; ++k) {
                const uint32_t r = rng_next(&seed);
                const int mixed = (t / 341) % 2 == 1 && r % 2 == 0;
                m.indices[3 * t + k] = mixed ? r % vertex_count : keys[(t + 5 * k) % nu];
            }
        uint32_t batch_count = 0;
        uint32_t *starts = batches_make(&m, nu, &batch_count);
        vr_geometry_result gpu, ref;
        VR_EXPECT_EQ(vr_geometry_result_alloc(&gpu, triangles, vertex_count), VR_OK);
        VR_EXPECT_EQ(vr_geometry_result_alloc(&ref, triangles, vertex_count), VR_OK);
        VR_EXPECT(starts != NULL, "OOM");
        for (int s = 0; s < 3 && starts && !vr_test_failures; ++s)
            for (uint32_t block = 32; block <= 256; block *= 8) {
                char what[96];
                snprintf(what, sizeof what, "%s GPU, colliding keys, N_u %u, block %u",
                         vr_reuse_all[k_dyn_kinds[s]].name, nu, block);
                vr_reuse_params cfg = vr_reuse_params_default();
                cfg.count = 1;
                cfg.max_unique = nu;
                cfg.block_size = block;
                expect_gpu_matches(&gpu, &ref, k_dyn_kinds[s], &m, starts, batch_count, &cfg,
                                   what);
            }
        free(starts);
        free(keys);
        vr_geometry_result_free(&gpu);
        vr_geometry_result_free(&ref);
        mesh_free(&m);
    }
    return VR_TEST_RESULT();
}

/* Malformed batch bounds reach the kernels (no twin to compare with: it rejects them). Each
 * block must skip a bad batch without reading past it, count its triangles in overflow, and
 * still process the good ones; spelled out per case. */
VR_TEST(test_gpu_dyn_bad_batches, "gpu/dyn-bad-batches", "gpu-small/dyn-bad-batches")
{
    if (!gpu_ready())
        return VR_TEST_SKIP;
    /* 12 distinct vertices in 4 triangles: more than the 8 table slots of N_u = 3 */
    static const uint32_t spread[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
    static const uint32_t s_valid[] = {0, 6, 12, 15};
    static const uint32_t s_one[] = {0, 15};        /* 7 distinct > N_u 4: 5 triangles lost */
    static const uint32_t s_split[] = {0, 6, 7, 15}; /* 6..7 loses 1, 7..15 loses 2 */
    static const uint32_t s_late[] = {3, 15};       /* must start at 0: 4 lost */
    static const uint32_t s_short[] = {0, 12};      /* must end at 15: 4 lost */
    static const uint32_t s_all[] = {0, 12};
    static const uint32_t s_long[] = {0, 1026};     /* > 1023 indices: 342 lost */
    static const uint32_t s_limit[] = {0, 3072};    /* > 3069 indices: 1024 lost */
    typedef struct {
        const char *name;
        const uint32_t *indices;
        uint32_t index_count, vertex_count, max_unique, max_indices;
        const uint32_t *starts;
        uint32_t batch_count;
        uint32_t overflow; /* triangles the GPU must count as lost */
        uint32_t kept;     /* triangles 0..kept-1 are written, the others not */
        uint64_t invocations;
    } bad_case;
    full_case_init();
    const bad_case cases[] = {
        {"valid fan", k_fan, 15, 7, 4, 1023, s_valid, 3, 0, 5, 11},
        {"7 distinct > N_u 4", k_fan, 15, 7, 4, 1023, s_one, 1, 5, 0, 0},
        {"batches split triangles", k_fan, 15, 7, 4, 1023, s_split, 3, 3, 2, 4},
        {"first batch starts at 3", k_fan, 15, 7, 4, 1023, s_late, 1, 4, 0, 0},
        {"last batch ends at 12 of 15", k_fan, 15, 7, 4, 1023, s_short, 1, 4, 0, 0},
        {"12 distinct in an 8-slot table", spread, 12, 12, 3, 1023, s_all, 1, 4, 0, 0},
        {"1026-index batch", k_full, 1026, 256, 256, 1023, s_long, 1, 342, 0, 0},
        {"1026-index batch at max_indices 1026", k_full, 1026, 256, 256, 1026, s_long, 1, 0, 342,
         256},
        {"3072-index batch at the limit 3069", k_limit, 3072, 1024, 1024, VR_MAX_INDICES_MAX,
         s_limit, 1, 1024, 0, 0},
    };
    static const uint32_t blocks[] = {32, 256};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
        const bad_case *bc = &cases[c];
        vr_mesh m;
        vr_geometry_result gpu;
        VR_EXPECT(mesh_make(&m, bc->indices, bc->index_count, bc->vertex_count, 3), "OOM");
        VR_EXPECT_EQ(vr_geometry_result_alloc(&gpu, bc->index_count / 3, bc->vertex_count),
                     VR_OK);
        if (vr_test_failures)
            return VR_TEST_RESULT();
        for (int s = 0; s < 3; ++s)
            for (int bi = 0; bi < 2; ++bi) {
                char what[128];
                snprintf(what, sizeof what, "%s GPU, %s, block %u",
                         vr_reuse_all[k_dyn_kinds[s]].name, bc->name, blocks[bi]);
                vr_reuse_params cfg = vr_reuse_params_default();
                cfg.count = 1;
                cfg.max_unique = bc->max_unique;
                cfg.max_indices = bc->max_indices;
                cfg.block_size = blocks[bi];
                if (expect_sort_too_long(&gpu, k_dyn_kinds[s], &m, bc->starts, bc->batch_count,
                                         &cfg, what))
                    continue;
                vr_status st = run_gpu(&gpu, k_dyn_kinds[s], &m, bc->starts, bc->batch_count, &cfg);
                VR_EXPECT(st == VR_OK, "%s: %s", what, vr_last_error());
                if (st != VR_OK)
                    continue;
                VR_EXPECT(gpu.counters.overflow == bc->overflow, "%s: overflow %u, want %u", what,
                          gpu.counters.overflow, bc->overflow);
                VR_EXPECT(gpu.counters.queue_count == bc->kept, "%s: queue_count %u, want %u",
                          what, gpu.counters.queue_count, bc->kept);
                VR_EXPECT(gpu.counters.invocations == bc->invocations,
                          "%s: invocations %llu, want %llu", what, gpu.counters.invocations,
                          (unsigned long long)bc->invocations);
                /* the kept triangles are right, every other slot untouched */
                vr_mesh kept = m;
                kept.index_count = 3 * bc->kept;
                expect_plain_queue(&gpu, &kept, what);
                for (uint32_t t = bc->kept; t < bc->index_count / 3; ++t)
                    VR_EXPECT(gpu.queue.tri_id[t] == 0xffffffffu, "%s: slot %u written", what, t);
            }
        vr_geometry_result_free(&gpu);
        mesh_free(&m);
    }
    return VR_TEST_RESULT();
}

/* An empty index buffer launches nothing and succeeds. */
VR_TEST(test_gpu_dyn_empty, "gpu/dyn-empty", "gpu-small/dyn-empty")
{
    if (!gpu_ready())
        return VR_TEST_SKIP;
    vr_mesh m;
    vr_geometry_result gpu;
    VR_EXPECT(mesh_make(&m, NULL, 0, 4, 1), "OOM");
    VR_EXPECT_EQ(vr_geometry_result_alloc(&gpu, 0, 4), VR_OK);
    if (vr_test_failures)
        return VR_TEST_RESULT();
    vr_reuse_params cfg = vr_reuse_params_default();
    cfg.count = 1;
    for (int s = 0; s < 3; ++s) {
        VR_EXPECT_EQ(run_gpu(&gpu, k_dyn_kinds[s], &m, NULL, 0, &cfg), VR_OK);
        VR_EXPECT_EQ(gpu.counters.invocations, 0);
        VR_EXPECT_EQ(gpu.counters.overflow, 0);
    }
    vr_geometry_result_free(&gpu);
    mesh_free(&m);
    return VR_TEST_RESULT();
}
#else
VR_TEST(test_gpu_dyn_none, "gpu/dyn-hand", "gpu/dyn-sweep", "gpu/dyn-long", "gpu/dyn-collide",
        "gpu/dyn-bad-batches", "gpu/dyn-empty", "gpu-small/dyn-hand", "gpu-small/dyn-collide",
        "gpu-small/dyn-bad-batches", "gpu-small/dyn-long", "gpu-small/dyn-empty")
{
    printf("SKIP: no CUDA device (built without CUDA)\n");
    return VR_TEST_SKIP;
}
#endif
