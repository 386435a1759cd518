/* test_program.c - the general reuse API's CPU twin (reuse/program.h) and the applications run
 * through it (pipeline/apps/apps.h): a recording program on streams of arity 1, 2, 3 and 4 (every
 * primitive exactly once with its own corners, invocations = what each strategy's batching
 * implies); the renderer's invocation counts equal the API's for every strategy (the same
 * batches); Loop subdivision through every strategy equals vr_loop_subdivide bit for bit on
 * shared scenes, a sphere, a shuffled grid with boundary and non-manifold soups; the random
 * walk through every strategy equals vr_walk_run, agent for agent. The GPU halves are compared
 * against these in tests/test_apps_gpu.cu. Try: `vreuse_tests apps/program`.
 */
#include "tests/test.h"

#include <stdlib.h>
#include <string.h>

#include "pipeline/apps/apps.h"
#include "pipeline/stage/geometry.h"
#include "scenes/scene.h"
#include "tests/test_helpers.h"

/* ---- a recording program ----------------------------------------------------------------- */

typedef struct rec_user {
    const uint32_t *stream; /* the source stream */
    uint32_t arity;
    uint32_t *seen;         /* per primitive: calls */
    int bad;                /* corners or elements that do not match the stream */
} rec_user;

static void rec_element(void *user, uint32_t id, void *out)
{
    (void)user;
    const uint32_t e[2] = {id, ~id};
    memcpy(out, e, sizeof e);
}

static void rec_primitive(void *user, uint32_t prim, uint32_t pos, const uint32_t *ids,
                          const void *const *el)
{
    rec_user *u = user;
    (void)pos;
    u->seen[prim]++;
    for (uint32_t k = 0; k < u->arity; ++k) {
        const uint32_t *e = el[k];
        u->bad += ids[k] != u->stream[u->arity * prim + k] || e[0] != ids[k] || e[1] != ~ids[k];
    }
}

/* Distinct elements summed over the batches [starts[b], starts[b + 1]). */
static uint64_t distinct_per_batch(const uint32_t *s, uint32_t n, const uint32_t *starts,
                                   uint32_t batches, uint32_t elements)
{
    uint32_t *stamp = calloc(elements, sizeof *stamp);
    uint64_t total = 0;
    for (uint32_t b = 0; b < batches; ++b)
        for (uint32_t i = starts[b]; i < starts[b + 1] && i < n; ++i)
            if (stamp[s[i]] != b + 1)
                stamp[s[i]] = b + 1, ++total;
    free(stamp);
    return total;
}

VR_TEST(test_program_arity, "apps/program-arity")
{
    uint64_t x = 88172645463325252ull;
    for (uint32_t arity = 1; arity <= VR_PROGRAM_ARITY_MAX; ++arity) {
        const uint32_t elements = 500, prims = 3000 / arity * arity / arity, n = prims * arity;
        uint32_t *s = malloc(n * sizeof *s), *seen = calloc(prims, sizeof *seen);
        for (uint32_t i = 0; i < n; ++i) { /* a walk with locality: reuse to find */
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            s[i] = (uint32_t)((i / 4 + x % 37) % elements);
        }
        for (int kind = 0; kind < VR_REUSE_KIND_COUNT; ++kind) {
            if (vr_program_planned((vr_reuse_kind)kind))
                continue;
            vr_program_counters c;
            memset(&c, 0, sizeof c);
            memset(seen, 0, prims * sizeof *seen);
            vr_program_params p;
            memset(&p, 0, sizeof p);
            p.indices = s, p.index_count = n, p.arity = arity, p.element_count = elements;
            p.limits = vr_program_limits_default(arity);
            p.limits.max_unique = 64;
            p.count = 1, p.counters = &c;
            uint32_t *starts = NULL, batches = 0;
            if (vr_program_dynamic((vr_reuse_kind)kind)) {
                VR_EXPECT_EQ(vr_program_batches(&starts, &batches, s, n, arity, elements, 64,
                                                p.limits.max_indices), VR_OK);
                p.batch_starts = starts, p.batch_count = batches;
            }
            rec_user u = {s, arity, seen, 0};
            const vr_program_cpu f = {2 * sizeof(uint32_t), rec_element, rec_primitive, &u};
            VR_EXPECT_EQ(vr_program_ref((vr_reuse_kind)kind, &p, &f), VR_OK);
            uint32_t once = 0;
            for (uint32_t q = 0; q < prims; ++q)
                once += seen[q] == 1;
            VR_EXPECT(once == prims && u.bad == 0, "arity %u, %s: %u of %u primitives once, %d bad "
                      "corners", arity, vr_reuse_all[kind].name, once, prims, u.bad);
            VR_EXPECT_EQ(c.primitives, (unsigned long long)prims);
            uint64_t want = c.invocations;
            if (kind == VR_REUSE_NAIVE)
                want = n;
            else if (kind == VR_REUSE_MULTI)
                want = elements;
            else if (starts)
                want = distinct_per_batch(s, n, starts, batches, elements);
            VR_EXPECT(c.invocations == want && c.invocations <= n, "arity %u, %s: %llu "
                      "invocations, want %llu", arity, vr_reuse_all[kind].name, c.invocations,
                      (unsigned long long)want);
            if (kind == VR_REUSE_HASH)
                VR_EXPECT(c.invocations < n, "arity %u: hash found no reuse", arity);
            free(starts);
        }
        free(s), free(seen);
    }
    /* errors: a plan strategy without a mesh, a stream that is no whole number of primitives */
    uint32_t s3[4] = {0, 1, 2, 3};
    vr_program_params p;
    memset(&p, 0, sizeof p);
    p.indices = s3, p.index_count = 4, p.arity = 3, p.element_count = 4;
    p.limits = vr_program_limits_default(3);
    rec_user u = {s3, 3, NULL, 0};
    const vr_program_cpu f = {8, rec_element, rec_primitive, &u};
    VR_EXPECT_EQ(vr_program_ref(VR_REUSE_NAIVE, &p, &f), VR_ERR_FORMAT);
    p.index_count = 3, p.element_count = 2;
    VR_EXPECT_EQ(vr_program_ref(VR_REUSE_NAIVE, &p, &f), VR_ERR_FORMAT); /* index 2 >= 2 */
    p.element_count = 4;
    VR_EXPECT_EQ(vr_program_ref(VR_REUSE_PATCH, &p, &f), VR_ERR_ARG);   /* no plan */
    p.arity = 5;
    VR_EXPECT_EQ(vr_program_ref(VR_REUSE_NAIVE, &p, &f), VR_ERR_ARG);
    return VR_TEST_RESULT();
}

/* ---- Loop through every strategy ------------------------------------------------------------ */

/* The meshes the Loop and renderer comparisons run on: name, mesh (caller frees). */
static int program_mesh(vr_mesh *m, int which, char *name, size_t n)
{
    char buf[512];
    switch (which) {
    case 0:
        snprintf(name, n, "sphere:20k");
        return vr_generate_sphere(m, 20000) == VR_OK;
    case 1:
        snprintf(name, n, "shuffled grid 40x30");
        return vr_test_grid_mesh(m, 40, 30, 3, 1, 7) == VR_OK;
    case 2: {
        const char *spec = vr_test_plan_spec(buf, sizeof buf, "stanford-bunny.obj");
        snprintf(name, n, "stanford-bunny.obj");
        return spec && vr_test_load(m, spec);
    }
    default:
        return 0;
    }
}

static int mesh_equal(const vr_mesh *a, const vr_mesh *b)
{
    return a->vertex_count == b->vertex_count && a->index_count == b->index_count &&
           !memcmp(a->positions, b->positions, 3 * (size_t)a->vertex_count * sizeof(float)) &&
           !memcmp(a->indices, b->indices, (size_t)a->index_count * sizeof(uint32_t));
}

VR_TEST(test_program_loop, "apps/program-loop")
{
    for (int which = 0; which < 3; ++which) {
        vr_mesh m;
        char name[64];
        if (!program_mesh(&m, which, name, sizeof name))
            continue;
        vr_mesh want;
        VR_EXPECT_EQ(vr_loop_subdivide(&want, &m, NULL), VR_OK);
        for (int kind = 0; kind < VR_REUSE_KIND_COUNT; ++kind) {
            vr_app_run r = {(vr_reuse_kind)kind, vr_program_limits_default(3), 1, 1};
            vr_mesh got;
            vr_app_report rep;
            VR_EXPECT_EQ(vr_loop_apply(&got, &m, &r, 0, &rep), VR_OK);
            VR_EXPECT(mesh_equal(&got, &want), "%s, %s: twin output differs from vr_loop_subdivide",
                      name, vr_reuse_all[kind].name);
            VR_EXPECT_EQ(rep.counters.primitives, (unsigned long long)(m.index_count / 3));
            /* the renderer's batches: the same invocations */
            vr_reuse_params cfg = vr_reuse_params_default();
            cfg.count = 1;
            vr_geometry_result g;
            VR_EXPECT_EQ(vr_geometry_result_alloc(&g, m.index_count / 3, m.vertex_count), VR_OK);
            VR_EXPECT_EQ(vr_geometry_ref(&g, &vr_reuse_all[kind], &m, &cfg), VR_OK);
            VR_EXPECT(g.counters.invocations == rep.counters.invocations,
                      "%s, %s: renderer %llu invocations, reuse API %llu", name,
                      vr_reuse_all[kind].name, g.counters.invocations, rep.counters.invocations);
            vr_geometry_result_free(&g);
            vr_mesh_free(&got);
        }
        vr_mesh_free(&want);
        vr_mesh_free(&m);
    }
    /* non-manifold soups: creases, corners, degenerate triangles */
    uint64_t x = 88172645463325252ull;
    for (uint32_t k = 0; k < 8; ++k) {
        uint32_t idx[3 * 279], vertices, tris;
        vr_test_soup(idx, &vertices, &tris, k, &x);
        vr_mesh m;
        memset(&m, 0, sizeof m);
        m.vertex_count = vertices, m.index_count = 3 * tris, m.indices = idx;
        float *pos = malloc(3 * (size_t)vertices * sizeof *pos);
        for (uint32_t v = 0; v < 3 * vertices; ++v)
            pos[v] = (float)((v * 2654435761u) % 1000) / 7.0f;
        m.positions = pos, m.normals = pos;
        vr_mesh want;
        VR_EXPECT_EQ(vr_loop_subdivide(&want, &m, NULL), VR_OK);
        for (int kind = 0; kind < VR_REUSE_KIND_COUNT; ++kind) {
            vr_app_run r = {(vr_reuse_kind)kind, vr_program_limits_default(3), 0, 1};
            r.limits.max_unique = 16;
            vr_mesh got;
            VR_EXPECT_EQ(vr_loop_apply(&got, &m, &r, 0, NULL), VR_OK);
            VR_EXPECT(mesh_equal(&got, &want), "soup %u, %s: twin output differs", k,
                      vr_reuse_all[kind].name);
            vr_mesh_free(&got);
        }
        vr_mesh_free(&want);
        free(pos);
    }
    return VR_TEST_RESULT();
}

/* ---- the random walk through every strategy ------------------------------------------------ */

static int cmp_u32(const void *a, const void *b)
{
    const uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

VR_TEST(test_program_walk, "apps/program-walk")
{
    vr_walk_config cfg = vr_walk_config_default();
    cfg.agents = 20000, cfg.steps = 3;
    uint32_t *start = malloc(cfg.agents * sizeof *start), *want = malloc(cfg.agents * sizeof *want);
    uint32_t *got = malloc(cfg.agents * sizeof *got);
    for (int sorted = 0; sorted < 2; ++sorted) {
        vr_walk_place(start, cfg.agents, cfg.seed);
        if (sorted)
            qsort(start, cfg.agents, sizeof *start, cmp_u32);
        memcpy(want, start, cfg.agents * sizeof *want);
        VR_EXPECT_EQ(vr_walk_run(want, &cfg, NULL), VR_OK);
        for (int kind = 0; kind < VR_REUSE_KIND_COUNT; ++kind) {
            vr_app_run r = {(vr_reuse_kind)kind, vr_program_limits_default(1), 1, 1};
            memcpy(got, start, cfg.agents * sizeof *got);
            vr_app_report rep;
            const vr_status st = vr_walk_apply(got, &cfg, &r, 0, &rep);
            if (vr_program_planned((vr_reuse_kind)kind)) {
                VR_EXPECT_EQ(st, VR_ERR_ARG); /* a plan needs a triangle mesh */
                continue;
            }
            VR_EXPECT_EQ(st, VR_OK);
            VR_EXPECT(!memcmp(got, want, cfg.agents * sizeof *got), "%s agents, %s: the walk "
                      "differs from vr_walk_run", sorted ? "sorted" : "random",
                      vr_reuse_all[kind].name);
            VR_EXPECT_EQ(rep.counters.primitives, (unsigned long long)cfg.agents * cfg.steps);
        }
    }
    free(start), free(want), free(got);
    return VR_TEST_RESULT();
}
