/* test_reuse.c - tests of the reuse/ CPU twins (no GPU needed; runs in CI). Per strategy
 * (`vreuse_tests reuse/warp`): hand-written index buffers with their invocation counts spelled
 * out, then seeded random grids in file and shuffled order checked against the simulator
 * (sim/sim.h: total and per-vertex counts) and against the naive queue, slot by slot.
 * `reuse/scenes` does the same on ../shared/scenes and the default sphere in file, forsyth and
 * random order; `reuse/errors` feeds bad parameters. A strategy whose twin still reports "not
 * implemented" is skipped with a note. The tiny cases and the grid generator are shared with
 * tests/test_gpu.cu (vr_test_tiny_case, vr_test_grid_mesh, vr_test_not_implemented).
 */
#include "tests/test.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/stage/geometry.h"
#include "raster/raster.h"
#include "tests/oracle.h"
#include "reuse/ref_common.h"
#include "scenes/scene.h"
#include "tests/test_helpers.h"

_Static_assert(VR_REUSE_KIND_COUNT == 8, "add the new strategy to vr_tests_reuse[] below");

/* ---- shared with test_gpu.cu ---------------------------------------------------------------- */

/* A tiny index buffer with its expected invocation counts per strategy family. */
typedef struct vr_reuse_case {
    const char *name;
    uint32_t vertex_count;
    uint32_t index_count;
    const uint32_t *indices;
    uint32_t batch_indices; /* warp batch; 0 = the default 96 */
    uint64_t naive, warp, dynamic, multi; /* expected invocations */
} vr_reuse_case;

static const uint32_t g_quad[] = {0, 1, 2, 2, 1, 3};
static const uint32_t g_degenerate[] = {0, 0, 1, 1, 2, 2};
static const uint32_t g_unreferenced[] = {0, 1, 2, 0, 2, 3};
static uint32_t g_strip10[30], g_strip40[120], g_fan40[120], g_full32[36], g_exact32[33];
static uint32_t g_repeat64[192];

/* strip: triangle i = (i, i+1, i+2), odd ones flipped to keep the winding */
static void vr_make_strip(uint32_t *idx, uint32_t tris)
{
    for (uint32_t i = 0; i < tris; ++i) {
        idx[3 * i + 0] = i % 2 ? i + 1 : i;
        idx[3 * i + 1] = i % 2 ? i : i + 1;
        idx[3 * i + 2] = i + 2;
    }
}

static void vr_make_cases(void)
{
    static int made;
    if (made)
        return;
    made = 1;
    vr_make_strip(g_strip10, 10);
    vr_make_strip(g_strip40, 40);
    for (uint32_t i = 0; i < 40; ++i) { /* fan around vertex 0: (0, i+1, i+2) */
        g_fan40[3 * i + 0] = 0;
        g_fan40[3 * i + 1] = i + 1;
        g_fan40[3 * i + 2] = i + 2;
    }
    /* full32: ten disjoint triangles (vertices 0..29), then (30, 31, 0) fills lane 31 with the
     * last index of the first 32-index load; the full warp loads no more, so the round ends
     * after 10 triangles although index 32 (vertex 0) would map. Then (0, 1, 2). */
    for (uint32_t i = 0; i < 30; ++i)
        g_full32[i] = i;
    const uint32_t tail32[6] = {30, 31, 0, 0, 1, 2};
    memcpy(g_full32 + 30, tail32, sizeof tail32);
    /* exact32: the same ten, then (0, 30, 31): the 32nd lane fills at index 32 and the batch
     * ends there, one round */
    for (uint32_t i = 0; i < 30; ++i)
        g_exact32[i] = i;
    const uint32_t tail33[3] = {0, 30, 31};
    memcpy(g_exact32 + 30, tail33, sizeof tail33);
    /* repeat64: one triangle 64 times in a 192-index batch: 64 triangles in one round, more
     * than one per lane */
    for (uint32_t i = 0; i < 192; ++i)
        g_repeat64[i] = i % 3;
}

/* Expected counts, worked out by hand:
 * strip40/fan40 (batch 96 = 32 triangles): round 1 fills 32 lanes with vertices 0..31 after
 *   30 triangles; triangle 31 needs vertex 32, so 30 triangles are emitted and the two lanes of
 *   triangle 31's leading corners... are among the 32 (shaded, dropped). Round 2: 2 triangles,
 *   4 vertices. Batch 2: 8 triangles, 10 vertices. 32 + 4 + 10 = 46.
 * full32: 32 + round 2 {30, 31, 0, 1, 2} = 37. */
static const vr_reuse_case g_cases[] = {
    /* name             verts indices                 batch naive warp dyn multi */
    {"quad", 4, 6, g_quad, 0, 6, 4, 4, 4},
    {"quad-batch3", 4, 6, g_quad, 3, 6, 6, 4, 4},
    {"strip10", 12, 30, g_strip10, 0, 30, 12, 12, 12},
    {"strip40", 42, 120, g_strip40, 0, 120, 46, 42, 42},
    {"fan40", 42, 120, g_fan40, 0, 120, 46, 42, 42},
    {"full32", 32, 36, g_full32, 0, 36, 37, 32, 32},
    {"exact32", 32, 33, g_exact32, 0, 33, 32, 32, 32},
    {"degenerate", 3, 6, g_degenerate, 0, 6, 3, 3, 3},
    {"unreferenced", 10, 6, g_unreferenced, 0, 6, 4, 4, 10},
    {"repeat64-batch192", 3, 192, g_repeat64, 192, 192, 3, 3, 3},
};

static const vr_reuse_case *vr_test_reuse_case(size_t i)
{
    vr_make_cases();
    return i < sizeof g_cases / sizeof g_cases[0] ? &g_cases[i] : NULL;
}

static uint64_t vr_test_case_expected(const vr_reuse_case *c, const vr_reuse_ops *ops)
{
    switch (ops->kind) {
    case VR_REUSE_NAIVE: return c->naive;
    case VR_REUSE_WARP: return c->warp;
    case VR_REUSE_MULTI: return c->multi;
    default: return c->dynamic;
    }
}

/* Deterministic attributes for a vertex id: a point on a bumpy spiral and a unit normal. */
static void vr_case_attributes(float *pos, float *nrm, uint32_t v)
{
    float a = 0.37f * (float)v;
    pos[0] = cosf(a) * (1.0f + 0.01f * (float)v);
    pos[1] = sinf(a) * (1.0f + 0.01f * (float)v);
    pos[2] = 0.05f * (float)(v % 7);
    float n[3] = {pos[0], pos[1], 1.0f};
    float l = sqrtf(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
    for (int i = 0; i < 3; ++i)
        nrm[i] = n[i] / l;
}

/* Builds a mesh (malloc'd arrays; free with vr_mesh_free) from a tiny case. */
static vr_status vr_test_case_mesh(vr_mesh *m, const vr_reuse_case *c)
{
    memset(m, 0, sizeof *m);
    m->vertex_count = c->vertex_count;
    m->index_count = c->index_count;
    m->positions = malloc((size_t)c->vertex_count * 3 * sizeof(float));
    m->normals = malloc((size_t)c->vertex_count * 3 * sizeof(float));
    m->indices = malloc((size_t)c->index_count * sizeof(uint32_t) + 4);
    if (!m->positions || !m->normals || !m->indices) {
        vr_mesh_free(m);
        return VR_ERROR(VR_ERR_OOM, "tiny case %s", c->name);
    }
    for (uint32_t v = 0; v < c->vertex_count; ++v)
        vr_case_attributes(m->positions + 3 * v, m->normals + 3 * v, v);
    memcpy(m->indices, c->indices, (size_t)c->index_count * sizeof(uint32_t));
    return VR_OK;
}

/* Tiny case i for test_gpu.cu, which does not see vr_reuse_case: its mesh (free with
 * vr_mesh_free), name, warp batch (0 = default) and expected invocations per strategy kind.
 * VR_ERR_ARG past the last case. */
vr_status vr_test_tiny_case(size_t i, vr_mesh *m, const char **name, uint32_t *batch_indices,
                            uint64_t expected[VR_REUSE_KIND_COUNT])
{
    const vr_reuse_case *c = vr_test_reuse_case(i);
    if (!c)
        return VR_ERR_ARG;
    *name = c->name;
    *batch_indices = c->batch_indices;
    for (int k = 0; k < VR_REUSE_KIND_COUNT; ++k)
        expected[k] = vr_test_case_expected(c, &vr_reuse_all[k]);
    return vr_test_case_mesh(m, c);
}

static uint64_t vr_rng(uint64_t *s) /* splitmix64 */
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* A w x h grid of quads (2 triangles each) over (w+1)(h+1) vertices plus `extra` unreferenced
 * vertices, a bumpy height field; shuffle != 0 permutes the triangles (seeded). Row order has
 * the locality of a scanned mesh, the shuffle none. */
vr_status vr_test_grid_mesh(vr_mesh *m, uint32_t w, uint32_t h, uint32_t extra, int shuffle,
                            uint64_t seed)
{
    memset(m, 0, sizeof *m);
    const uint32_t grid_vertices = (w + 1) * (h + 1);
    m->vertex_count = grid_vertices + extra;
    m->index_count = 6 * w * h;
    m->positions = malloc((size_t)m->vertex_count * 3 * sizeof(float));
    m->normals = malloc((size_t)m->vertex_count * 3 * sizeof(float));
    m->indices = malloc((size_t)m->index_count * sizeof(uint32_t) + 4);
    if (!m->positions || !m->normals || !m->indices) {
        vr_mesh_free(m);
        return VR_ERROR(VR_ERR_OOM, "grid mesh %ux%u", w, h);
    }
    for (uint32_t v = 0; v < m->vertex_count; ++v) {
        float x = (float)(v % (w + 1)), y = (float)(v / (w + 1) % (h + 1));
        m->positions[3 * v + 0] = x / (float)w - 0.5f;
        m->positions[3 * v + 1] = y / (float)h - 0.5f;
        m->positions[3 * v + 2] = 0.05f * sinf(0.7f * x) * cosf(0.9f * y);
        float n[3] = {-0.035f * cosf(0.7f * x), 0.045f * sinf(0.9f * y), 1.0f};
        float l = sqrtf(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
        for (int i = 0; i < 3; ++i)
            m->normals[3 * v + i] = n[i] / l;
    }
    uint32_t *idx = m->indices;
    for (uint32_t y = 0; y < h; ++y)
        for (uint32_t x = 0; x < w; ++x) {
            uint32_t a = y * (w + 1) + x, b = a + 1, c = a + w + 1, d = c + 1;
            const uint32_t q[6] = {a, b, d, a, d, c};
            memcpy(idx, q, sizeof q);
            idx += 6;
        }
    if (shuffle) {
        uint32_t tris = m->index_count / 3;
        for (uint32_t t = tris - 1; t > 0; --t) {
            uint32_t u = (uint32_t)(vr_rng(&seed) % (t + 1));
            for (int k = 0; k < 3; ++k) {
                uint32_t tmp = m->indices[3 * t + k];
                m->indices[3 * t + k] = m->indices[3 * u + k];
                m->indices[3 * u + k] = tmp;
            }
        }
    }
    return VR_OK;
}

/* 1 when a twin (or GPU path) reported that it is still a placeholder. */
int vr_test_not_implemented(vr_status st)
{
    return st == VR_ERR_ARG && strstr(vr_last_error(), "not implemented") != NULL;
}

/* ---- checks ----------------------------------------------------------------------------- */

/* The queue of a non-culling run holds every triangle in its own slot with the mesh's corner
 * order (winding) and the values vr_shade gives for those vertices. */
static void vr_check_queue_exact(const vr_geometry_result *r, const vr_mesh *m,
                                 const vr_shader *shader, const char *what)
{
    int reported = 0;
    for (uint32_t t = 0; t < r->triangles && reported < 5; ++t) {
        int bad = r->queue.tri_id[t] != t;
        for (int k = 0; k < 3 && !bad; ++k) {
            uint32_t v = m->indices[3 * t + k];
            bad = r->queue.vertex[3 * t + k] != v;
            vr_shaded s;
            vr_shade(shader, m->positions + 3 * (size_t)v, m->normals + 3 * (size_t)v, &s);
            for (int i = 0; i < 4 && !bad; ++i)
                bad = r->queue.clip[(3 * (size_t)t + k) * 4 + i] != s.clip[i] ||
                      r->queue.normal[(3 * (size_t)t + k) * 4 + i] != (i < 3 ? s.normal[i] : 0.0f);
        }
        if (bad) {
            VR_EXPECT(!bad, "%s: slot %u holds triangle %u (%u %u %u), want %u (%u %u %u) with "
                      "vr_shade values", what, t, r->queue.tri_id[t], r->queue.vertex[3 * t],
                      r->queue.vertex[3 * t + 1], r->queue.vertex[3 * t + 2], t, m->indices[3 * t],
                      m->indices[3 * t + 1], m->indices[3 * t + 2]);
            ++reported;
        }
    }
}

static uint64_t vr_sum_counts(const uint32_t *c, uint32_t n)
{
    uint64_t s = 0;
    for (uint32_t i = 0; i < n; ++i)
        s += c[i];
    return s;
}

/* Triangles of `m` that vr_cull_triangle keeps under `shader`. */
static uint32_t vr_kept_count(const vr_mesh *m, const vr_shader *shader)
{
    uint32_t kept = 0;
    for (uint32_t t = 0; t < m->index_count / 3; ++t) {
        vr_shaded s[3];
        for (int k = 0; k < 3; ++k) {
            uint32_t v = m->indices[3 * t + k];
            vr_shade(shader, m->positions + 3 * (size_t)v, m->normals + 3 * (size_t)v, &s[k]);
        }
        kept += !vr_cull_triangle(&s[0], &s[1], &s[2]);
    }
    return kept;
}

/* The kept set of a culling run: triangle t is in it iff vr_cull_triangle rejects it not. */
static void vr_check_culled(const vr_geometry_result *r, const vr_mesh *m, const vr_shader *shader,
                            const char *what)
{
    uint8_t *seen = calloc((size_t)r->triangles + 1, 1);
    assert(seen);
    uint32_t kept = 0;
    for (uint32_t t = 0; t < r->triangles; ++t) {
        vr_shaded s[3];
        for (int k = 0; k < 3; ++k) {
            uint32_t v = m->indices[3 * t + k];
            vr_shade(shader, m->positions + 3 * (size_t)v, m->normals + 3 * (size_t)v, &s[k]);
        }
        if (!vr_cull_triangle(&s[0], &s[1], &s[2]))
            seen[t] = 1, ++kept;
    }
    VR_EXPECT_EQ(r->counters.queue_count, kept);
    VR_EXPECT_EQ(r->counters.overflow, 0);
    uint32_t n = r->counters.queue_count < r->triangles ? r->counters.queue_count : r->triangles;
    for (uint32_t s = 0; s < n; ++s) {
        uint32_t t = r->queue.tri_id[s];
        VR_EXPECT(t < r->triangles && seen[t] == 1, "%s: culled slot %u holds triangle %u, "
                  "which is culled, repeated or out of range", what, s, t);
        if (t < r->triangles)
            seen[t] = 2;
    }
    free(seen);
}

/* ---- tests ------------------------------------------------------------------------------ */

/* Runs the tiny cases through one strategy's twin. Returns SKIP when it is not implemented. */
static int vr_tiny_cases(const vr_reuse_ops *ops)
{
    for (size_t i = 0; vr_test_reuse_case(i); ++i) {
        const vr_reuse_case *c = vr_test_reuse_case(i);
        vr_mesh m;
        vr_geometry_result r;
        VR_EXPECT_EQ(vr_test_case_mesh(&m, c), VR_OK);
        VR_EXPECT_EQ(vr_geometry_result_alloc(&r, m.index_count / 3, m.vertex_count), VR_OK);
        vr_reuse_params cfg = vr_reuse_params_default();
        vr_camera_orbit_shader(&cfg.shader, &m, 0.3f);
        if (c->batch_indices)
            cfg.batch_indices = c->batch_indices;
        cfg.count = 1;
        vr_status st = vr_geometry_ref(&r, ops, &m, &cfg);
        if (vr_test_not_implemented(st)) {
            printf("SKIP: %s: %s\n", ops->name, vr_last_error());
            vr_geometry_result_free(&r);
            vr_mesh_free(&m);
            return VR_TEST_SKIP;
        }
        char what[96];
        snprintf(what, sizeof what, "%s on %s", ops->name, c->name);
        VR_EXPECT(st == VR_OK, "%s: %s", what, vr_last_error());
        VR_EXPECT(r.counters.invocations == vr_test_case_expected(c, ops),
                  "%s: %llu invocations, want %llu", what, r.counters.invocations,
                  (unsigned long long)vr_test_case_expected(c, ops));
        VR_EXPECT_EQ(vr_sum_counts(r.shade_counts, m.vertex_count), r.counters.invocations);
        VR_EXPECT_EQ(r.counters.queue_count, m.index_count / 3);
        vr_check_queue_exact(&r, &m, &cfg.shader, what);

        /* the simulator must agree on the total and per vertex */
        uint64_t sim = 0;
        uint32_t *sim_counts = calloc(m.vertex_count, sizeof *sim_counts);
        assert(sim_counts);
        st = vr_oracle_sim_invocations(&sim, sim_counts, ops, &m, &cfg);
        VR_EXPECT(st == VR_OK, "%s: simulator: %s", what, vr_last_error());
        VR_EXPECT(sim == r.counters.invocations, "%s: simulator %llu, twin %llu", what,
                  (unsigned long long)sim, r.counters.invocations);
        VR_EXPECT(!memcmp(sim_counts, r.shade_counts, m.vertex_count * sizeof *sim_counts),
                  "%s: per-vertex counts differ from the simulator's", what);
        free(sim_counts);

        cfg.cull = 1;
        st = vr_geometry_ref(&r, ops, &m, &cfg);
        VR_EXPECT(st == VR_OK, "%s culled: %s", what, vr_last_error());
        vr_check_culled(&r, &m, &cfg.shader, what);
        vr_geometry_result_free(&r);
        vr_mesh_free(&m);
    }
    return VR_TEST_RESULT();
}

/* One mesh through one strategy: counts equal the simulator's (total and per vertex), the
 * queue equals `naive` (the naive twin's queue on the same mesh and shader), the culled set
 * equals naive_cull's. Returns 0, or VR_TEST_SKIP when not implemented. */
static int vr_check_mesh(const vr_reuse_ops *ops, const vr_mesh *m, const vr_reuse_params *cfg,
                         const vr_geometry_result *naive, const vr_geometry_result *naive_cull,
                         const char *label)
{
    char what[160];
    snprintf(what, sizeof what, "%s on %s", ops->name, label);
    vr_geometry_result r;
    if (vr_geometry_result_alloc(&r, m->index_count / 3, m->vertex_count) != VR_OK) {
        VR_EXPECT(0, "%s: %s", what, vr_last_error());
        return 0;
    }
    vr_reuse_params c = *cfg;
    c.count = 1;
    c.cull = 0;
    vr_status st = vr_geometry_ref(&r, ops, m, &c);
    if (vr_test_not_implemented(st)) {
        vr_geometry_result_free(&r);
        return VR_TEST_SKIP;
    }
    VR_EXPECT(st == VR_OK, "%s: %s", what, vr_last_error());
    uint64_t sim = 0;
    uint32_t *sim_counts = calloc((size_t)m->vertex_count + 1, sizeof *sim_counts);
    assert(sim_counts);
    st = vr_oracle_sim_invocations(&sim, sim_counts, ops, m, &c);
    VR_EXPECT(st == VR_OK, "%s: simulator: %s", what, vr_last_error());
    VR_EXPECT(sim == r.counters.invocations, "%s: twin %llu invocations, simulator %llu", what,
              r.counters.invocations, (unsigned long long)sim);
    uint32_t differing = 0, first = 0;
    for (uint32_t v = 0; v < m->vertex_count; ++v)
        if (sim_counts[v] != r.shade_counts[v] && differing++ == 0)
            first = v;
    VR_EXPECT(differing == 0, "%s: %u vertices shaded a different number of times than "
              "simulated, first %u: %u vs %u", what, differing, first, r.shade_counts[first],
              sim_counts[first]);
    free(sim_counts);
    VR_EXPECT_EQ(vr_sum_counts(r.shade_counts, m->vertex_count), r.counters.invocations);
    vr_geometry_diff d;
    /* a static plan's queue is in plan order (slot = plan position): the same triangles */
    VR_EXPECT(vr_geometry_compare(&d, &r, naive, ops->plan ? VR_COMPARE_KEPT_SET : VR_COMPARE_ALL,
                                  0, stderr, what) == 0,
              "%s: queue differs from naive's in %llu places", what,
              (unsigned long long)d.mismatches);

    c.cull = 1;
    st = vr_geometry_ref(&r, ops, m, &c);
    VR_EXPECT(st == VR_OK, "%s culled: %s", what, vr_last_error());
    /* a static plan keeps its survivors in plan order, not the mesh's: the same set */
    VR_EXPECT(vr_geometry_compare(&d, &r, naive_cull,
                                  ops->plan ? VR_COMPARE_KEPT_SET : VR_COMPARE_KEPT_ORDER, 0,
                                  stderr, what) == 0,
              "%s culled: kept triangles differ from naive's in %llu places", what,
              (unsigned long long)d.mismatches);
    vr_geometry_result_free(&r);
    return 0;
}

/* Runs the naive twin for the reference queues of vr_check_mesh. */
static int vr_naive_refs(vr_geometry_result *naive, vr_geometry_result *naive_cull,
                         const vr_mesh *m, const vr_reuse_params *cfg)
{
    vr_reuse_params c = *cfg;
    c.count = 1;
    c.cull = 0;
    const vr_reuse_ops *n = &vr_reuse_all[VR_REUSE_NAIVE];
    if (vr_geometry_result_alloc(naive, m->index_count / 3, m->vertex_count) != VR_OK ||
        vr_geometry_result_alloc(naive_cull, m->index_count / 3, m->vertex_count) != VR_OK ||
        vr_geometry_ref(naive, n, m, &c) != VR_OK)
        return 0;
    vr_check_queue_exact(naive, m, &cfg->shader, "naive");
    c.cull = 1;
    if (vr_geometry_ref(naive_cull, n, m, &c) != VR_OK)
        return 0;
    vr_check_culled(naive_cull, m, &cfg->shader, "naive culled");
    return 1;
}

static int vr_random_grids(const vr_reuse_ops *ops)
{
    static const struct { uint32_t w, h, extra; int shuffle; } grids[] = {
        {7, 5, 0, 0}, {40, 30, 13, 0}, {40, 30, 13, 1}, {150, 97, 0, 0}, {150, 97, 5, 1},
    };
    int skipped = 0;
    for (size_t g = 0; g < sizeof grids / sizeof grids[0]; ++g) {
        vr_mesh m;
        VR_EXPECT_EQ(vr_test_grid_mesh(&m, grids[g].w, grids[g].h, grids[g].extra,
                                       grids[g].shuffle, 1234 + g), VR_OK);
        vr_reuse_params cfg = vr_reuse_params_default();
        vr_camera_orbit_shader(&cfg.shader, &m, 0.7f * (float)g);
        /* two warp batches and two N_u values: the defaults and a small, odd one */
        for (int variant = 0; variant < 2; ++variant) {
            cfg.batch_indices = variant ? 57 : VR_WARP_BATCH_DEFAULT;
            cfg.max_unique = variant ? 37 : VR_NU_DEFAULT;
            vr_geometry_result naive, naive_cull;
            char label[96];
            snprintf(label, sizeof label, "grid %ux%u+%u%s (batch %u, N_u %u)", grids[g].w,
                     grids[g].h, grids[g].extra, grids[g].shuffle ? " shuffled" : "",
                     cfg.batch_indices, cfg.max_unique);
            VR_EXPECT(vr_naive_refs(&naive, &naive_cull, &m, &cfg), "%s: naive: %s", label,
                      vr_last_error());
            if (vr_check_mesh(ops, &m, &cfg, &naive, &naive_cull, label) == VR_TEST_SKIP)
                skipped = 1;
            vr_geometry_result_free(&naive);
            vr_geometry_result_free(&naive_cull);
        }
        vr_mesh_free(&m);
        if (skipped)
            return VR_TEST_SKIP;
    }
    return VR_TEST_RESULT();
}

static int vr_test_strategy(vr_reuse_kind kind)
{
    const vr_reuse_ops *ops = &vr_reuse_all[kind];
    VR_EXPECT_EQ(ops->kind, kind);
    VR_EXPECT(vr_reuse_find(ops->name) == ops, "registry lookup of %s", ops->name);
    int r = vr_tiny_cases(ops);
    if (r == VR_TEST_SKIP)
        return r;
    r = vr_random_grids(ops);
    if (r == VR_TEST_SKIP) {
        printf("SKIP: %s: %s\n", ops->name, vr_last_error());
        return r;
    }
    return VR_TEST_RESULT();
}

VR_TEST(test_reuse_naive, "reuse/naive") { return vr_test_strategy(VR_REUSE_NAIVE); }
VR_TEST(test_reuse_warp, "reuse/warp") { return vr_test_strategy(VR_REUSE_WARP); }
VR_TEST(test_reuse_hash, "reuse/hash") { return vr_test_strategy(VR_REUSE_HASH); }
VR_TEST(test_reuse_phash, "reuse/phash") { return vr_test_strategy(VR_REUSE_PHASH); }
VR_TEST(test_reuse_sort, "reuse/sort") { return vr_test_strategy(VR_REUSE_SORT); }
VR_TEST(test_reuse_multi, "reuse/multi") { return vr_test_strategy(VR_REUSE_MULTI); }
VR_TEST(test_reuse_patch, "reuse/patch") { return vr_test_strategy(VR_REUSE_PATCH); }
VR_TEST(test_reuse_meshlet, "reuse/meshlet") { return vr_test_strategy(VR_REUSE_MESHLET); }

/* Shared scenes and the default sphere, three triangle orders, every strategy. */
VR_TEST(test_reuse_scenes, "reuse/scenes")
{
    static const char *files[] = {"fandisk.obj", "stanford-bunny.obj", "horse.ply",
                                  "igea.ply", "rocker-arm.obj", "spot.obj", "cow.obj",
                                  "teapot.obj"};
    static const vr_order orders[] = {VR_ORDER_FILE, VR_ORDER_FORSYTH, VR_ORDER_RANDOM};
    const size_t nfiles = sizeof files / sizeof files[0];
    int loaded = 0, not_implemented[VR_REUSE_KIND_COUNT] = {0};
    for (size_t f = 0; f <= nfiles; ++f) {
        char path[512];
        const char *spec = "sphere";
        if (f < nfiles) {
            if (!vr_test_scene_path(path, sizeof path, files[f])) {
                printf("SKIP: %s: scenes directory missing (set VR_SCENES)\n", files[f]);
                continue;
            }
            spec = path;
        }
        for (size_t o = 0; o < sizeof orders / sizeof orders[0]; ++o) {
            vr_mesh m;
            vr_status st = vr_mesh_load(&m, spec);
            if (st != VR_OK) {
                printf("SKIP: %s: %s\n", spec, vr_last_error());
                break;
            }
            st = vr_mesh_reorder(&m, orders[o], 42);
            if (st != VR_OK) {
                VR_EXPECT(st == VR_OK, "%s (%s): %s", spec, vr_order_name(orders[o]),
                          vr_last_error());
                vr_mesh_free(&m);
                continue;
            }
            ++loaded;
            vr_reuse_params cfg = vr_reuse_params_default();
            vr_camera_orbit_shader(&cfg.shader, &m, 0.5f + (float)o);
            vr_geometry_result naive, naive_cull;
            char label[600];
            snprintf(label, sizeof label, "%s (%s)", f < nfiles ? files[f] : spec,
                     vr_order_name(orders[o]));
            VR_EXPECT(vr_naive_refs(&naive, &naive_cull, &m, &cfg), "%s: naive: %s", label,
                      vr_last_error());
            for (int k = 1; k < VR_REUSE_KIND_COUNT; ++k)
                if (!not_implemented[k] &&
                    vr_check_mesh(&vr_reuse_all[k], &m, &cfg, &naive, &naive_cull, label) ==
                        VR_TEST_SKIP) {
                    printf("note: %s skipped: %s\n", vr_reuse_all[k].name, vr_last_error());
                    not_implemented[k] = 1;
                }
            vr_geometry_result_free(&naive);
            vr_geometry_result_free(&naive_cull);
            vr_mesh_free(&m);
        }
    }
    if (!loaded)
        return VR_TEST_SKIP;
    return VR_TEST_RESULT();
}

/* Bad parameters come back as errors with messages, never as crashes. */
VR_TEST(test_reuse_errors, "reuse/errors")
{
    vr_mesh m;
    VR_EXPECT_EQ(vr_test_case_mesh(&m, vr_test_reuse_case(0)), VR_OK);
    vr_geometry_result r;
    VR_EXPECT_EQ(vr_geometry_result_alloc(&r, m.index_count / 3, m.vertex_count), VR_OK);
    for (int k = 0; k < VR_REUSE_KIND_COUNT; ++k) {
        const vr_reuse_ops *ops = &vr_reuse_all[k];
        vr_reuse_params cfg = vr_reuse_params_default();
        if (vr_test_not_implemented(vr_geometry_ref(&r, ops, &m, &cfg)))
            continue;
        cfg.block_size = 48;
        VR_EXPECT(vr_geometry_ref(&r, ops, &m, &cfg) == VR_ERR_ARG, "%s accepted block 48",
                  ops->name);
        cfg.block_size = 2048;
        VR_EXPECT(vr_geometry_ref(&r, ops, &m, &cfg) == VR_ERR_ARG, "%s accepted block 2048",
                  ops->name);
        cfg = vr_reuse_params_default();
        /* index_count not a multiple of 3, straight through the interface */
        vr_reuse_params p =
            vr_reuse_params_input(&cfg, m.indices, 5, m.positions, m.normals, m.vertex_count);
        p.queue = r.queue;
        p.counters = &r.counters;
        VR_EXPECT(ops->ref(&p) == VR_ERR_FORMAT, "%s accepted 5 indices", ops->name);
        /* a queue too small without culling */
        p.index_count = 6;
        p.queue.capacity = 1;
        vr_status st = ops->ref(&p);
        VR_EXPECT(st == VR_ERR_OVERFLOW, "%s accepted a 1-slot queue for 2 triangles", ops->name);
        VR_EXPECT(strstr(vr_last_error(), "needed 2") != NULL, "message: %s", vr_last_error());
        /* the same queue with culling: overflow is counted, not fatal */
        p.cull = 1;
        p.shader = cfg.shader; /* identity: the quad's z = 0.05 k stays inside the frustum */
        memset(&r.counters, 0, sizeof r.counters);
        if (ops->dynamic || ops->plan) { /* one batch; a plan's tri_ids NULL: identity */
            static const uint32_t starts[2] = {0, 6};
            p.batch_starts = starts;
            p.batch_count = 1;
        }
        st = ops->ref(&p);
        VR_EXPECT(st == VR_OK, "%s culled into a 1-slot queue: %s", ops->name, vr_last_error());
        const uint32_t kept = vr_kept_count(&m, &p.shader);
        VR_EXPECT_EQ(r.counters.queue_count, kept);
        VR_EXPECT_EQ(r.counters.overflow, kept > 1 ? kept - 1 : 0);
    }
    vr_reuse_params cfg = vr_reuse_params_default();
    cfg.batch_indices = 95;
    VR_EXPECT(vr_geometry_ref(&r, &vr_reuse_all[VR_REUSE_WARP], &m, &cfg) == VR_ERR_ARG,
              "warp accepted a 95-index batch");
    cfg.batch_indices = VR_WARP_BATCH_MAX + 3;
    VR_EXPECT(vr_geometry_ref(&r, &vr_reuse_all[VR_REUSE_WARP], &m, &cfg) == VR_ERR_ARG,
              "warp accepted a %u-index batch", cfg.batch_indices);
    vr_geometry_result_free(&r);
    vr_mesh_free(&m);

    /* an empty index buffer is no work, not an error */
    vr_geometry_result e;
    VR_EXPECT_EQ(vr_geometry_result_alloc(&e, 0, 3), VR_OK);
    for (int k = 0; k < VR_REUSE_KIND_COUNT; ++k) {
        vr_reuse_params p = vr_reuse_params_default();
        static const float attr[9] = {0};
        static const uint32_t starts[1] = {0};
        p.positions = attr;
        p.normals = attr;
        p.vertex_count = 3;
        p.queue = e.queue;
        p.counters = &e.counters;
        p.count = 1;
        p.batch_starts = starts;
        memset(&e.counters, 0, sizeof e.counters);
        vr_status st = vr_reuse_all[k].ref(&p);
        if (vr_test_not_implemented(st))
            continue;
        VR_EXPECT(st == VR_OK, "%s on 0 indices: %s", vr_reuse_all[k].name, vr_last_error());
        VR_EXPECT_EQ(e.counters.queue_count, 0);
        /* no triangles, no shading: multi too (its GPU path launches nothing) */
        VR_EXPECT_EQ(e.counters.invocations, 0);
    }
    vr_geometry_result_free(&e);
    return VR_TEST_RESULT();
}

/* vr_geometry_compare, which the GPU tests and the bench rely on, finds what it must. */
VR_TEST(test_reuse_compare, "reuse/compare")
{
    vr_mesh m; /* a closed mesh: about half of it faces away */
    if (vr_generate_sphere(&m, 200) != VR_OK) {
        printf("SKIP: vr_generate_sphere: %s\n", vr_last_error());
        return VR_TEST_SKIP;
    }
    const uint32_t tris = m.index_count / 3;
    vr_geometry_result want, got;
    VR_EXPECT_EQ(vr_geometry_result_alloc(&want, tris, m.vertex_count), VR_OK);
    VR_EXPECT_EQ(vr_geometry_result_alloc(&got, tris, m.vertex_count), VR_OK);
    vr_reuse_params cfg = vr_reuse_params_default();
    vr_camera_orbit_shader(&cfg.shader, &m, 0.2f);
    cfg.count = 1;
    const vr_reuse_ops *naive = &vr_reuse_all[VR_REUSE_NAIVE];
    VR_EXPECT_EQ(vr_geometry_ref(&want, naive, &m, &cfg), VR_OK);
    vr_geometry_diff d;

    /* identical; a value 1e-7 of scale off passes; 1e-3 off, NaN, a wrong id fail */
    VR_EXPECT_EQ(vr_geometry_ref(&got, naive, &m, &cfg), VR_OK);
    VR_EXPECT_EQ(vr_geometry_compare(&d, &got, &want, 0, 1, NULL, "same"), 0);
    VR_EXPECT_EQ(d.compared, tris);
    float scale = 0;
    for (size_t i = 0; i < (size_t)tris * 12; ++i)
        scale = fabsf(want.queue.clip[i]) > scale ? fabsf(want.queue.clip[i]) : scale;
    got.queue.clip[5] += 1e-7f * scale;
    VR_EXPECT_EQ(vr_geometry_compare(&d, &got, &want, 0, 1, NULL, "ulps"), 0);
    VR_EXPECT(d.max_abs > 0 && d.max_rel < VR_GEOMETRY_REL_TOL, "max_abs %g, max_rel %g",
              d.max_abs, d.max_rel);
    got.queue.clip[5] += 1e-3f * scale;
    VR_EXPECT_EQ(vr_geometry_compare(&d, &got, &want, 0, 1, NULL, "off"), 1);
    got.queue.clip[5] = want.queue.clip[5];
    memset(&got.queue.normal[14], 0xff, 4);
    VR_EXPECT_EQ(vr_geometry_compare(&d, &got, &want, 0, 1, NULL, "NaN"), 1);
    got.queue.normal[14] = want.queue.normal[14];
    got.queue.normal[15] = 1.0f; /* w of a normal must stay 0 */
    VR_EXPECT_EQ(vr_geometry_compare(&d, &got, &want, 0, 1, NULL, "normal w"), 1);
    got.queue.normal[15] = 0.0f;
    got.queue.vertex[7] ^= 1;
    got.shade_counts[0] += 1;
    got.counters.invocations += 1;
    VR_EXPECT_EQ(vr_geometry_compare(&d, &got, &want, 0, 1, NULL, "ids"), 3);
    VR_EXPECT_EQ(vr_geometry_compare(&d, &got, &want, 0, 0, NULL, "ids, no counts"), 1);

    /* culling: order does not matter; a missing or extra triangle does, unless borderline */
    cfg.cull = 1;
    VR_EXPECT_EQ(vr_geometry_ref(&want, naive, &m, &cfg), VR_OK);
    VR_EXPECT_EQ(vr_geometry_ref(&got, naive, &m, &cfg), VR_OK);
    VR_EXPECT_EQ(vr_geometry_compare(&d, &got, &want, VR_COMPARE_KEPT_ORDER, 1, NULL, "in order"), 0);
    const uint32_t kept = want.counters.queue_count;
    if (kept <= 2 || kept >= tris) {
        VR_EXPECT(0, "the camera keeps %u of %u triangles", kept, tris);
        goto done;
    }
    for (uint32_t a = 0, b = kept - 1; a < b; ++a, --b) { /* reverse the slot order */
        uint32_t t = got.queue.tri_id[a];
        got.queue.tri_id[a] = got.queue.tri_id[b];
        got.queue.tri_id[b] = t;
        for (int i = 0; i < 12; ++i) {
            float c = got.queue.clip[12 * a + i], n = got.queue.normal[12 * a + i];
            got.queue.clip[12 * a + i] = got.queue.clip[12 * b + i];
            got.queue.normal[12 * a + i] = got.queue.normal[12 * b + i];
            got.queue.clip[12 * b + i] = c;
            got.queue.normal[12 * b + i] = n;
        }
        for (int k = 0; k < 3; ++k) {
            uint32_t v = got.queue.vertex[3 * a + k];
            got.queue.vertex[3 * a + k] = got.queue.vertex[3 * b + k];
            got.queue.vertex[3 * b + k] = v;
        }
    }
    VR_EXPECT_EQ(vr_geometry_compare(&d, &got, &want, 1, 1, NULL, "reversed"), 0);
    VR_EXPECT_EQ(d.compared, kept);
    VR_EXPECT(vr_geometry_compare(&d, &got, &want, VR_COMPARE_KEPT_ORDER, 1, NULL,
                                  "reversed, in order") > 0, "an ink queue out of order passed");
    got.counters.queue_count = kept - 1; /* drops a clearly visible triangle */
    VR_EXPECT(vr_geometry_compare(&d, &got, &want, 1, 1, NULL, "missing") > 0, "missed a loss");
    /* an extra triangle that the reference culled: a clear one fails, an edge-on one (zero
     * screen area) is borderline */
    uint32_t culled = 0;
    while (culled < tris) {
        int in = 0;
        for (uint32_t s = 0; s < kept; ++s)
            in |= want.queue.tri_id[s] == culled;
        if (!in)
            break;
        ++culled;
    }
    got.counters.queue_count = kept + 1;
    got.queue.tri_id[kept] = culled;
    for (int k = 0; k < 3; ++k)
        for (int i = 0; i < 4; ++i) /* clearly back-facing: (0,0) (0,1) (1,0) at w = 2 */
            got.queue.clip[12 * kept + 4 * k + i] =
                i == 3 ? 2.0f : i == 2 ? 0.5f : (float)((k == 1 && i == 1) || (k == 2 && i == 0));
    VR_EXPECT(vr_geometry_compare(&d, &got, &want, 1, 1, NULL, "extra") > 0, "missed an extra");
    got.queue.clip[12 * kept + 8] = 0.0f; /* third corner onto the first: zero area */
    got.queue.clip[12 * kept + 9] = 0.0f;
    VR_EXPECT_EQ(vr_geometry_compare(&d, &got, &want, 1, 1, NULL, "borderline"), 0);
    VR_EXPECT_EQ(d.borderline, 1);
done:
    vr_geometry_result_free(&want);
    vr_geometry_result_free(&got);
    vr_mesh_free(&m);
    return VR_TEST_RESULT();
}

/* The named shader loads and their parser (shared by bench, render and view). */
/* One triangle per cull reason, with the identity shader (clip = (x, y, z, 1)): every strategy's
 * twin drops each for its reason, keeps the others in input order, and two-sided keeps the
 * back-facing one too. */
VR_TEST(test_reuse_cull_reasons, "reuse/cull-reasons")
{
    static const float pos[] = {
        0.0f, 0.0f, 0.0f, 0.5f, 0.0f, 0.0f, 0.0f, 0.5f, 0.0f, /* 0-2: on screen */
        2.0f, 0.0f, 0.0f, 3.0f, 0.0f, 0.0f, 2.0f, 1.0f, 0.0f, /* 3-5: right of x = w */
        0.25f, 0.25f, 0.0f,                                   /* 6: on screen */
    };
    static const float nrm[7 * 3] = {0};
    /* 0 kept (counter-clockwise) | 1 back-facing (clockwise) | 2 zero area (a repeated corner) |
     * 3 outside the frustum | 4 kept (counter-clockwise) */
    static const uint32_t idx[] = {0, 1, 2, 0, 2, 1, 0, 1, 0, 3, 4, 5, 0, 1, 6};
    vr_mesh m = {7, (float *)pos, (float *)nrm, NULL, 15, (uint32_t *)idx};
    vr_geometry_result r;
    VR_EXPECT_EQ(vr_geometry_result_alloc(&r, 5, 7), VR_OK);
    for (int k = 0; k < VR_REUSE_KIND_COUNT; ++k) {
        const vr_reuse_ops *ops = &vr_reuse_all[k];
        for (int two_sided = 0; two_sided < 2; ++two_sided) {
            vr_reuse_params cfg = vr_reuse_params_default();
            cfg.cull = 1;
            cfg.two_sided = two_sided;
            if (vr_test_not_implemented(vr_geometry_ref(&r, ops, &m, &cfg)))
                break;
            const vr_counters *c = &r.counters;
            VR_EXPECT(c->culled[VR_CULL_FRUSTUM] == 1 && c->culled[VR_CULL_ZERO_AREA] == 1 &&
                          c->culled[VR_CULL_BACKFACE] == (uint32_t)!two_sided &&
                          c->culled[VR_CULL_KEPT] == 0 && c->queue_count == 2u + two_sided,
                      "%s%s: kept %u, culled frustum %u, back %u, zero area %u", ops->name,
                      two_sided ? " two-sided" : "", c->queue_count, c->culled[VR_CULL_FRUSTUM],
                      c->culled[VR_CULL_BACKFACE], c->culled[VR_CULL_ZERO_AREA]);
            const uint32_t want[3] = {0, two_sided ? 1u : 4u, 4u};
            for (uint32_t s = 0; s < c->queue_count && s < 3; ++s)
                VR_EXPECT(r.queue.tri_id[s] == want[s], "%s%s: slot %u holds %u, want %u",
                          ops->name, two_sided ? " two-sided" : "", s, r.queue.tri_id[s], want[s]);
        }
    }
    vr_geometry_result_free(&r);
    return VR_TEST_RESULT();
}

VR_TEST(test_reuse_loads, "reuse/loads")
{
    uint32_t it = 7;
    VR_EXPECT(vr_load_parse("simple", &it) == 0 && it == 0, "simple -> %u", it);
    VR_EXPECT(vr_load_parse("heavy", &it) == 0 && it == vr_load_iterations[3], "heavy -> %u", it);
    VR_EXPECT(vr_load_parse("loop:1500", &it) == 0 && it == 1500, "loop:1500 -> %u", it);
    VR_EXPECT(vr_load_parse("2k", &it) == 0 && it == 2000, "2k -> %u", it);
    VR_EXPECT(vr_load_parse("0", &it) == 0 && it == 0, "0 -> %u", it);
    VR_EXPECT(vr_load_parse("heavyish", &it) == VR_ERR_ARG, "heavyish accepted");
    VR_EXPECT(vr_load_parse("200M", &it) == VR_ERR_ARG, "200M accepted");
    VR_EXPECT(vr_load_parse("-3", &it) == VR_ERR_ARG, "-3 accepted");
    VR_EXPECT(!strcmp(vr_load_name(vr_load_iterations[2]), "medium") && vr_load_name(5) == NULL,
              "vr_load_name");
    for (int i = 1; i < VR_LOAD_COUNT; ++i)
        VR_EXPECT(vr_load_iterations[i] > vr_load_iterations[i - 1], "loads not increasing");
    return VR_TEST_RESULT();
}
