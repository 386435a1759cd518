/* test_program.c - the general reuse API's CPU twin (reuse/program.h) and the applications run
 * through it (pipeline/apps/apps.h): a recording program on streams of arity 1, 2, 3 and 4 (every
 * primitive exactly once with its own corners, invocations = what each strategy's batching
 * implies); the renderer's invocation counts equal the API's for every strategy (the same
 * batches); Loop subdivision through every strategy equals vr_loop_subdivide bit for bit on
 * shared scenes, a sphere, a shuffled grid with boundary and non-manifold soups; simplification
 * envelopes (outer and inner) through every strategy equal vr_envelope_build bit for bit on two
 * near plates with unnamed and -0 vertices, a sphere, a torus and the bunny, with the
 * renderer's invocations; the random walk through every strategy equals vr_walk_run, agent for
 * agent. The GPU halves are compared against these in tests/test_apps_gpu.cu.
 * Try: `vreuse_tests apps/program`.
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
    /* errors: a plan strategy without a mesh, plan ids without a plan, a stream that is no whole
     * number of primitives */
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
    const uint32_t ids[1] = {0}, starts[2] = {0, 3};
    p.prim_ids = ids; /* a plan's source ids for a strategy without a plan */
    p.batch_starts = starts, p.batch_count = 1;
    for (int kind = 0; kind < VR_REUSE_KIND_COUNT; ++kind)
        if (!vr_program_planned((vr_reuse_kind)kind)) {
            VR_EXPECT_EQ(vr_program_ref((vr_reuse_kind)kind, &p, &f), VR_ERR_ARG);
            VR_EXPECT(strstr(vr_last_error(), "prim_ids") != NULL, "%s", vr_last_error());
        }
    p.prim_ids = NULL, p.batch_starts = NULL, p.batch_count = 0;
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
        /* the renderer's limits, then the paper's for Loop (vr_loop_paper_limits) */
        for (int run = 0; run < 2 * VR_REUSE_KIND_COUNT; ++run) {
            const int kind = run % VR_REUSE_KIND_COUNT, paper = run >= VR_REUSE_KIND_COUNT;
            vr_app_run r = {(vr_reuse_kind)kind, vr_program_limits_default(3), 1, 1};
            if (paper)
                r.limits = vr_loop_paper_limits((vr_reuse_kind)kind);
            vr_mesh got;
            vr_app_report rep;
            VR_EXPECT_EQ(vr_loop_apply(&got, &m, &r, 0, &rep), VR_OK);
            VR_EXPECT(mesh_equal(&got, &want), "%s, %s%s: twin output differs from "
                      "vr_loop_subdivide", name, vr_reuse_all[kind].name,
                      paper ? " (the paper's limits)" : "");
            VR_EXPECT_EQ(rep.counters.primitives, (unsigned long long)(m.index_count / 3));
            /* the renderer's batches at the same limits: the same invocations */
            vr_reuse_params cfg = vr_reuse_params_default();
            cfg.count = 1;
            cfg.block_size = r.limits.block_size, cfg.max_unique = r.limits.max_unique;
            cfg.max_indices = r.limits.max_indices, cfg.batch_indices = r.limits.batch_indices;
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

/* ---- simplification envelopes through every strategy -------------------------------------- */

/* Two plates 0.01 apart (n x n per face; the facing sides must stop short of each other) with
 * two vertices in front that no triangle names: a copy of the plates' corner (0, 0, 0) written
 * -0, which becomes the welded representative of the corner's named copies (the smallest id;
 * -0 == +0), and a lone point (offset 0). */
static int plates_unnamed(vr_mesh *m, uint32_t n)
{
    vr_mesh p;
    if (!vr_test_plates(&p, 0.01f, n))
        return 0;
    memset(m, 0, sizeof *m);
    m->vertex_count = p.vertex_count + 2, m->index_count = p.index_count;
    m->positions = malloc(3 * (size_t)m->vertex_count * sizeof(float));
    m->normals = malloc(3 * (size_t)m->vertex_count * sizeof(float));
    m->indices = malloc((size_t)m->index_count * sizeof(uint32_t));
    if (!m->positions || !m->normals || !m->indices) {
        vr_mesh_free(&p), vr_mesh_free(m);
        return 0;
    }
    const float front[6] = {-0.0f, -0.0f, -0.0f, 0.5f, 0.5f, 3.0f};
    memcpy(m->positions, front, sizeof front);
    memcpy(m->normals, front, sizeof front); /* any: the envelope computes its own */
    memcpy(m->positions + 6, p.positions, 3 * (size_t)p.vertex_count * sizeof(float));
    memcpy(m->normals + 6, p.normals, 3 * (size_t)p.vertex_count * sizeof(float));
    for (uint32_t i = 0; i < p.index_count; ++i)
        m->indices[i] = p.indices[i] + 2;
    vr_mesh_free(&p);
    return 1;
}

int vr_test_envelope_mesh(vr_mesh *m, int which, int size, char *name, size_t n)
{
    static const char *const spheres[] = {"sphere:320", "sphere:5k", "sphere"};
    const int small = size == VR_TEST_ENVELOPE_SMALL;
    char buf[512];
    switch (which) {
    case 0:
        snprintf(name, n, "two plates %s, unnamed vertices", small ? "2x2" : "4x4");
        return plates_unnamed(m, small ? 2 : 4);
    case 1:
        snprintf(name, n, "%s", spheres[size]);
        return vr_test_load(m, spheres[size]);
    case 2:
        snprintf(name, n, "torus %s", small ? "16x8" : "64x24");
        return small ? vr_test_torus(m, 1.0f, 0.3f, 16, 8) : vr_test_torus(m, 1.0f, 0.3f, 64, 24);
    case 3: /* texture seams: welded copies on a real scene */
    case 4: {
        const char *file = which == 3 ? "spot.obj" : "stanford-bunny.obj";
        if (small)
            return 0;
        const char *spec = vr_test_plan_spec(buf, sizeof buf, file);
        snprintf(name, n, "%s", file);
        return spec && vr_test_load(m, spec);
    }
    default:
        return 0;
    }
}

int vr_test_envelope_equal(const vr_mesh *a, const vr_mesh *b)
{
    const size_t v = 3 * (size_t)a->vertex_count * sizeof(float);
    return mesh_equal(a, b) && a->normals && b->normals && !memcmp(a->normals, b->normals, v);
}

/* The summaries of the offsets agree bit for bit (times aside). */
static int envelope_stats_equal(const vr_envelope_stats *a, const vr_envelope_stats *b)
{
    return !memcmp(&a->epsilon, &b->epsilon, sizeof a->epsilon) &&
           a->welded_vertices == b->welded_vertices && a->full_vertices == b->full_vertices &&
           !memcmp(&a->offset_min, &b->offset_min, sizeof a->offset_min) &&
           !memcmp(&a->offset_mean, &b->offset_mean, sizeof a->offset_mean) &&
           !memcmp(&a->offset_max, &b->offset_max, sizeof a->offset_max) &&
           a->octree_nodes == b->octree_nodes && a->octree_depth == b->octree_depth &&
           a->input_intersections == b->input_intersections &&
           a->output_intersections == b->output_intersections;
}

vr_batch_limits vr_test_envelope_limits(vr_reuse_kind kind, uint32_t nu)
{
    if (!nu)
        return vr_envelope_paper_limits(kind);
    vr_batch_limits l = vr_program_limits_default(3);
    l.max_unique = nu;
    return l;
}

void vr_test_envelope_check(const vr_mesh *m, const char *name, int gpu, int twin, uint32_t nu,
                            int flags)
{
    const int quick = flags & VR_TEST_ENV_QUICK;
    const double t0 = vr_now_ms();
    const char *path = gpu ? "GPU" : "twin";
    /* the renderer's invocations: the same batches, whatever the direction */
    unsigned long long renderer[VR_REUSE_KIND_COUNT];
    for (int kind = 0; kind < VR_REUSE_KIND_COUNT; ++kind) {
        const vr_batch_limits lim = vr_test_envelope_limits((vr_reuse_kind)kind, nu);
        vr_reuse_params cfg = vr_reuse_params_default();
        cfg.count = 1;
        cfg.block_size = lim.block_size, cfg.max_unique = lim.max_unique;
        cfg.max_indices = lim.max_indices, cfg.batch_indices = lim.batch_indices;
        vr_geometry_result g;
        VR_EXPECT_EQ(vr_geometry_result_alloc(&g, m->index_count / 3, m->vertex_count), VR_OK);
        VR_EXPECT_EQ(vr_geometry_ref(&g, &vr_reuse_all[kind], m, &cfg), VR_OK);
        renderer[kind] = g.counters.invocations;
        vr_geometry_result_free(&g);
    }
    for (int dir = 1; dir >= (quick ? 1 : -1); dir -= 2) {
        const char *dn = dir > 0 ? "outer" : "inner";
        vr_envelope_config cfg = vr_envelope_config_default();
        cfg.direction = dir, cfg.check = flags & VR_TEST_ENV_CHECK;
        vr_mesh want;
        vr_envelope_stats ws;
        if (vr_envelope_build(&want, NULL, m, &cfg, &ws) != VR_OK) {
            VR_EXPECT(0, "%s: %s", name, vr_last_error());
            return;
        }
        for (int kind = 0; kind < VR_REUSE_KIND_COUNT; ++kind) {
            if (quick && kind != VR_REUSE_HASH && kind != VR_REUSE_MULTI && kind != VR_REUSE_PATCH)
                continue;
            const char *sn = vr_reuse_all[kind].name;
            vr_app_run r = {(vr_reuse_kind)kind, vr_test_envelope_limits((vr_reuse_kind)kind, nu),
                            1, 1};
            vr_mesh got;
            vr_app_report rep;
            vr_envelope_stats gs;
            memset(&rep, 0, sizeof rep);
            if (vr_envelope_apply(&got, m, &cfg, &r, gpu, &rep, &gs) != VR_OK) {
                VR_EXPECT(0, "%s %s, %s (%s): %s", name, dn, sn, path, vr_last_error());
                continue;
            }
            VR_EXPECT(vr_test_envelope_equal(&got, &want), "%s %s, %s: %s output differs from "
                      "vr_envelope_build", name, dn, sn, path);
            VR_EXPECT(envelope_stats_equal(&gs, &ws), "%s %s, %s: %s statistics differ from "
                      "vr_envelope_build's", name, dn, sn, path);
            VR_EXPECT_EQ(rep.counters.primitives, (unsigned long long)(m->index_count / 3));
            VR_EXPECT(rep.counters.invocations == renderer[kind], "%s, %s: renderer %llu "
                      "invocations, reuse API (%s) %llu", name, sn, renderer[kind], path,
                      rep.counters.invocations);
            vr_mesh_free(&got);
            if (!twin)
                continue;
            vr_app_report c;
            memset(&c, 0, sizeof c);
            VR_EXPECT(vr_envelope_apply(&got, m, &cfg, &r, 0, &c, NULL) == VR_OK, "%s: %s", name,
                      vr_last_error());
            VR_EXPECT(rep.counters.invocations == c.counters.invocations &&
                          rep.counters.primitives == c.counters.primitives,
                      "%s, %s: %s %llu invocations / %llu primitives, twin %llu / %llu", name, sn,
                      path, rep.counters.invocations, rep.counters.primitives,
                      c.counters.invocations, c.counters.primitives);
            vr_mesh_free(&got);
        }
        vr_mesh_free(&want);
    }
    printf("  %-32s %6u vertices, shaded per vertex: naive %.2f, hash %.2f, multi %.2f; %s, "
           "%s: %.0f ms\n", name, m->vertex_count,
           (double)renderer[VR_REUSE_NAIVE] / m->vertex_count,
           (double)renderer[VR_REUSE_HASH] / m->vertex_count,
           (double)renderer[VR_REUSE_MULTI] / m->vertex_count, path,
           quick ? "outer, hash, multi and patch" : "both directions, every strategy",
           vr_now_ms() - t0);
}

void vr_test_envelope_meshes(int size, int last, int gpu, uint32_t twin_below)
{
    for (int which = 0; which <= last; ++which) {
        vr_mesh m;
        char name[64];
        if (!vr_test_envelope_mesh(&m, which, size, name, sizeof name))
            continue; /* a scene may be missing (SKIP printed) */
        const int twin = gpu && m.vertex_count < twin_below;
        vr_test_envelope_check(&m, name, gpu, twin, 256, VR_TEST_ENV_CHECK);
        if (which == 0) { /* small batches: many batch boundaries through the welded corners */
            vr_test_envelope_check(&m, "two plates, N_u 16", gpu, twin, 16, VR_TEST_ENV_CHECK);
            vr_test_envelope_check(&m, "two plates, Table 4 limits", gpu, twin, 0, VR_TEST_ENV_CHECK);
        } else if (which == 1) { /* the bench's limits */
            snprintf(name + strlen(name), sizeof name - strlen(name), ", Table 4 limits");
            vr_test_envelope_check(&m, name, gpu, twin, 0, VR_TEST_ENV_CHECK);
        }
        vr_mesh_free(&m);
    }
}

VR_TEST(test_program_envelope, "apps/program-envelope")
{
    vr_test_envelope_meshes(VR_TEST_ENVELOPE_CPU, VR_TEST_ENVELOPE_BUNNY - 1, 0, 0);
    return VR_TEST_RESULT();
}

/* Bad input through the API: clear errors, `out` and the statistics zeroed. */
VR_TEST(test_program_envelope_errors, "apps/program-envelope-errors")
{
    vr_mesh m, out;
    VR_EXPECT(vr_test_plates(&m, 0.01f, 2), "plates");
    vr_envelope_config cfg = vr_envelope_config_default();
    vr_app_run r = {VR_REUSE_HASH, vr_program_limits_default(3), 0, 1};
    vr_envelope_stats st;
    const uint32_t keep = m.indices[4];
    m.indices[4] = m.vertex_count + 5;
    VR_EXPECT_EQ(vr_envelope_apply(&out, &m, &cfg, &r, 0, NULL, &st), VR_ERR_FORMAT);
    VR_EXPECT(strstr(vr_last_error(), "out of range") != NULL, "message: %s", vr_last_error());
    VR_EXPECT(out.positions == NULL && st.welded_vertices == 0, "output not zeroed");
    m.indices[4] = keep;
    cfg.direction = 0;
    VR_EXPECT_EQ(vr_envelope_apply(&out, &m, &cfg, &r, 0, NULL, NULL), VR_ERR_ARG);
    VR_EXPECT(strstr(vr_last_error(), "direction is 0") != NULL, "message: %s", vr_last_error());
    cfg.direction = 1;
    r.limits.max_indices = 100; /* not a multiple of 3 */
    VR_EXPECT_EQ(vr_envelope_apply(&out, &m, &cfg, &r, 0, NULL, NULL), VR_ERR_ARG);
    VR_EXPECT(strstr(vr_last_error(), "100") != NULL, "message: %s", vr_last_error());
    VR_EXPECT(out.positions == NULL, "output not zeroed");
    r.kind = VR_REUSE_WARP, r.limits = vr_program_limits_default(3);
    r.limits.block_size = 48;
    VR_EXPECT_EQ(vr_envelope_apply(&out, &m, &cfg, &r, 0, NULL, NULL), VR_ERR_ARG);
    VR_EXPECT(strstr(vr_last_error(), "block size 48") != NULL, "message: %s", vr_last_error());
    vr_mesh_free(&m);
    return VR_TEST_RESULT();
}

/* The bunny alone, outer, through hash (the file order leaves it 3.9 calls per vertex), multi
 * (one per vertex) and patch: every strategy and both directions took two minutes on one core;
 * gpu/apps-envelope runs them all. */
VR_TEST(test_program_envelope_bunny, "apps/program-envelope-bunny")
{
    vr_mesh m;
    char name[64];
    if (vr_test_envelope_mesh(&m, VR_TEST_ENVELOPE_BUNNY, VR_TEST_ENVELOPE_CPU, name,
                              sizeof name)) {
        vr_test_envelope_check(&m, name, 0, 0, 256, VR_TEST_ENV_QUICK);
        vr_mesh_free(&m);
    }
    return VR_TEST_RESULT();
}

/* ---- the random walk through every strategy ------------------------------------------------ */

VR_TEST(test_program_walk, "apps/program-walk")
{
    vr_walk_config cfg = vr_walk_config_default();
    cfg.agents = 20000, cfg.steps = 3;
    uint32_t *start = malloc(cfg.agents * sizeof *start), *want = malloc(cfg.agents * sizeof *want);
    uint32_t *got = malloc(cfg.agents * sizeof *got);
    for (int mode = 0; mode < 4; ++mode) { /* random, sorted; each fixed and resorted */
        const int sorted = mode & 1;
        cfg.resort = mode >> 1;
        vr_walk_place(start, cfg.agents, cfg.seed);
        if (sorted)
            qsort(start, cfg.agents, sizeof *start, vr_test_cmp_u32);
        memcpy(want, start, cfg.agents * sizeof *want);
        VR_EXPECT_EQ(vr_walk_run(want, &cfg, NULL), VR_OK);
        unsigned long long naive = 0, hash = 0;
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
            VR_EXPECT(!memcmp(got, want, cfg.agents * sizeof *got), "%s agents%s, %s: the walk "
                      "differs from vr_walk_run", sorted ? "sorted" : "random",
                      cfg.resort ? " resorted" : "", vr_reuse_all[kind].name);
            VR_EXPECT_EQ(rep.counters.primitives, (unsigned long long)cfg.agents * cfg.steps);
            VR_EXPECT(cfg.resort || rep.order_ms == 0, "order_ms %.3f without resort",
                      rep.order_ms);
            if (kind == VR_REUSE_NAIVE)
                naive = rep.counters.invocations;
            if (kind == VR_REUSE_HASH)
                hash = rep.counters.invocations;
        }
        printf("  %s%s: naive %llu, hash %llu evaluations\n", sorted ? "sorted" : "random",
               cfg.resort ? "+resort" : "", naive, hash);
        /* sorted by cell before each step, a batch holds whole cells: about one evaluation per
         * distinct cell and step (20,000 agents on 65,536 cells: mostly one agent per cell) */
        if (cfg.resort)
            VR_EXPECT(hash < naive, "resort: hash %llu evaluations, naive %llu", hash, naive);
    }
    free(start), free(want), free(got);
    return VR_TEST_RESULT();
}
