/* test_clustercull.c - cluster culling of the static plans (reuse/cluster_cull.h), CPU only:
 * (1) for patch and meshlet on shared scenes and generated spheres, cameras outside, zoomed in
 * (partly outside the frustum) and inside the mesh, one- and two-sided: the CPU twin's queue with
 * cluster culling equals the queue without it byte for byte, the culled totals agree, and a
 * sphere seen from outside needs strictly fewer invocations; (2) hand-built batches - straddling
 * a frustum plane by one vertex, touching it exactly, near edge-on, behind the eye, crossing the
 * eye plane, with a degenerate triangle - and seeded random batches and cameras: whenever the
 * test skips a batch, vr_cull_classify drops every triangle of it. The GPU against its twin:
 * test_gpu.cu (gpu/clustercull). Try: `vreuse_tests reuse/clustercull`.
 */
#include "tests/test.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/stage/geometry.h"
#include "raster/raster.h"
#include "reuse/cluster_cull.h"
#include "scenes/scene.h"
#include "tests/test_helpers.h"

/* A camera on mesh m: orbit `yaw` degrees, zoom (1 fits the mesh, about 3 puts the eye inside
 * its bounding sphere). */
static vr_shader vr_cc_camera(const vr_mesh *m, float yaw, float zoom)
{
    vr_camera c;
    vr_camera_fit(&c, m);
    c.yaw = yaw;
    c.zoom = zoom;
    vr_shader s;
    memset(&s, 0, sizeof s);
    vr_camera_shader(&s, &c, 256, 256);
    return s;
}

/* Runs the twin of ops on m with `cfg`, cluster culling off and on; checks the same queue and
 * totals. Returns the invocations (off, on) through the pointers. */
static void vr_cc_compare(const vr_reuse_ops *ops, const vr_mesh *m, const vr_reuse_params *cfg,
                          unsigned long long *inv_off, unsigned long long *inv_on,
                          const char *what)
{
    const uint32_t tris = m->index_count / 3;
    vr_geometry_result off, on;
    if (vr_geometry_result_alloc(&off, tris, m->vertex_count) != VR_OK ||
        vr_geometry_result_alloc(&on, tris, m->vertex_count) != VR_OK) {
        VR_EXPECT(0, "%s: %s", what, vr_last_error());
        vr_geometry_result_free(&off);
        return;
    }
    vr_reuse_params c = *cfg;
    c.cluster_cull = 0;
    vr_status st = vr_geometry_ref(&off, ops, m, &c);
    VR_EXPECT(st == VR_OK, "%s off: %s", what, vr_last_error());
    c.cluster_cull = 1;
    vr_status st2 = vr_geometry_ref(&on, ops, m, &c);
    VR_EXPECT(st2 == VR_OK, "%s on: %s", what, vr_last_error());
    if (st == VR_OK && st2 == VR_OK) {
        const vr_counters *a = &off.counters, *b = &on.counters;
        VR_EXPECT(a->queue_count == b->queue_count && a->overflow == b->overflow,
                  "%s: kept %u / %u, overflow %u / %u", what, a->queue_count, b->queue_count,
                  a->overflow, b->overflow);
        uint64_t sa = 0, sb = 0;
        for (int r = 0; r < VR_CULL_REASON_COUNT; ++r) {
            sa += a->culled[r];
            sb += b->culled[r];
            if (r != VR_CULL_CLUSTER)
                VR_EXPECT(b->culled[r] <= a->culled[r], "%s: reason %d: %u > %u", what, r,
                          b->culled[r], a->culled[r]);
        }
        VR_EXPECT(a->culled[VR_CULL_CLUSTER] == 0 && sa == sb &&
                      sb + b->queue_count + b->overflow == tris,
                  "%s: culled %llu / %llu (cluster %u) of %u", what, (unsigned long long)sa,
                  (unsigned long long)sb, b->culled[VR_CULL_CLUSTER], tris);
        const size_t n = a->queue_count < tris ? a->queue_count : tris;
        VR_EXPECT(memcmp(off.queue.clip, on.queue.clip, n * VR_QUEUE_CLIP_FLOATS * 4) == 0 &&
                      memcmp(off.queue.normal, on.queue.normal, n * VR_QUEUE_NORMAL_FLOATS * 4) ==
                          0 &&
                      memcmp(off.queue.vertex, on.queue.vertex, n * VR_QUEUE_VERTEX_IDS * 4) == 0 &&
                      memcmp(off.queue.tri_id, on.queue.tri_id, n * 4) == 0,
                  "%s: the queues differ", what);
        VR_EXPECT(b->invocations <= a->invocations, "%s: invocations %llu > %llu", what,
                  b->invocations, a->invocations);
        /* a skipped batch shades nothing: the per-vertex counts only drop */
        for (uint32_t v = 0; v < m->vertex_count; ++v)
            if (on.shade_counts[v] > off.shade_counts[v]) {
                VR_EXPECT(0, "%s: vertex %u shaded %u times, without %u", what, v,
                          on.shade_counts[v], off.shade_counts[v]);
                break;
            }
        *inv_off = a->invocations;
        *inv_on = b->invocations;
    }
    vr_geometry_result_free(&off);
    vr_geometry_result_free(&on);
}

/* Every camera, sidedness and queue mode on one mesh; `sphere`: expect fewer invocations with
 * the outside camera. */
static void vr_cc_mesh(const vr_mesh *m, const char *name, int sphere)
{
    static const float zooms[] = {1.0f, 1.6f, 6.0f}; /* outside, partly outside, inside */
    static const char *const where[] = {"outside", "zoomed in", "inside"};
    for (int k = VR_REUSE_PATCH; k <= VR_REUSE_MESHLET; ++k) {
        const vr_reuse_ops *ops = &vr_reuse_all[k];
        for (int z = 0; z < 3; ++z)
            for (int two = 0; two < 2; ++two)
                /* the twin writes every queue mode in input order (reuse/ref_common.h):
                 * ink and hp stand for the in-kernel and the keyed modes */
                for (int q = 0; q < VR_QUEUE_MODE_COUNT; q += 4) {
                    vr_reuse_params cfg = vr_reuse_params_default();
                    cfg.shader = vr_cc_camera(m, 30.0f, zooms[z]);
                    cfg.cull = 1;
                    cfg.two_sided = two;
                    cfg.count = 1;
                    cfg.queue_mode = (vr_queue_mode)q;
                    cfg.max_unique = 64;
                    cfg.max_indices = 372;
                    char what[256];
                    snprintf(what, sizeof what, "%s %s %s%s %s", ops->name, name, where[z],
                             two ? " two-sided" : "", vr_queue_mode_names[q]);
                    unsigned long long off = 0, on = 0;
                    vr_cc_compare(ops, m, &cfg, &off, &on, what);
                    if (sphere && z == 0 && !two)
                        VR_EXPECT(on < off, "%s: %llu invocations with cluster culling, %llu "
                                  "without", what, on, off);
                    if (sphere && z == 0 && !two && q == 0)
                        printf("  %s: invocations %llu -> %llu (%.1f%%)\n", what, off, on,
                               100.0 * (double)on / (double)(off ? off : 1));
                }
    }
}

VR_TEST(test_clustercull_meshes, "reuse/clustercull-meshes")
{
    static const char *const specs[] = {"sphere", "sphere:20k", "stanford-bunny.obj",
                                        "fandisk.obj", "foliage:20k"};
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; ++i) {
        char buf[1024];
        const char *spec = vr_test_plan_spec(buf, sizeof buf, specs[i]);
        if (!spec)
            continue;
        vr_mesh m;
        if (!vr_test_load(&m, spec))
            continue;
        vr_cc_mesh(&m, specs[i], !strncmp(specs[i], "sphere", 6));
        /* a random triangle order changes the plans, never the promise */
        if (i < 2 && vr_mesh_reorder(&m, VR_ORDER_RANDOM, 3) == VR_OK)
            vr_cc_mesh(&m, "sphere (random order)", 1);
        vr_mesh_free(&m);
    }
    return VR_TEST_RESULT();
}

/* ---- hand-built batches -------------------------------------------------------------------- */

/* One batch of `tris` triangles over positions `pos`: its bounds through vr_batch_plan_bounds,
 * then the test against vr_cull_classify of every triangle. Returns the test's answer (-1 after
 * a failed expectation: it skipped a batch with a kept triangle). */
static int vr_cc_check_batch(const float *pos, const uint32_t *idx, uint32_t tris,
                             const vr_shader *s, int two_sided, const char *what)
{
    uint32_t order[64], starts[2] = {0, 3 * tris};
    for (uint32_t t = 0; t < tris; ++t)
        order[t] = t;
    vr_batch_plan plan;
    memset(&plan, 0, sizeof plan);
    plan.tri_order = order;
    plan.starts = starts;
    plan.triangle_count = tris;
    plan.batch_count = 1;
    if (vr_batch_plan_bounds(&plan, idx, pos) != VR_OK) {
        VR_EXPECT(0, "%s: %s", what, vr_last_error());
        return -1;
    }
    const int skip = vr_cluster_culled(&plan.bounds[0], s->mvp, two_sided);
    int kept = -1;
    for (uint32_t t = 0; t < tris && kept < 0; ++t) {
        vr_shaded v[3];
        for (int k = 0; k < 3; ++k)
            vr_shade(s, pos + 3 * idx[3 * t + k], pos + 3 * idx[3 * t + k], &v[k]);
        if (vr_cull_classify(&v[0], &v[1], &v[2], two_sided) == VR_CULL_KEPT)
            kept = (int)t;
    }
    free(plan.bounds);
    VR_EXPECT(!skip || kept < 0, "%s: batch skipped but triangle %d is kept", what, kept);
    return skip && kept >= 0 ? -1 : skip;
}

/* A camera at the origin looking down -z: clip = (x, y, -z - 0.02, w = -z) (perspective: near
 * plane at 0.01, no far plane), or orthographic (w = 1, z = -0.3 z). */
static vr_shader vr_cc_simple_camera(int ortho)
{
    vr_shader s;
    memset(&s, 0, sizeof s);
    s.mvp[0] = 1;  /* x */
    s.mvp[5] = 1;  /* y */
    s.mvp[10] = -1;
    s.mvp[14] = -0.02f;
    if (ortho) {
        s.mvp[10] = -0.3f;
        s.mvp[14] = 0;
        s.mvp[15] = 1;
    } else {
        s.mvp[11] = -1; /* w = -z */
    }
    return s;
}

VR_TEST(test_clustercull_adversarial, "reuse/clustercull-adversarial")
{
    const vr_shader persp = vr_cc_simple_camera(0), ortho = vr_cc_simple_camera(1);
    /* a fan of 4 triangles in the plane z = -2, facing the eye (counter-clockwise on screen) */
    static const uint32_t fan[] = {0, 1, 2, 0, 2, 3, 0, 3, 4, 0, 4, 1};
    float pos[5 * 3];
    const float cx = -5.0f, cy = 0.0f, z = -2.0f; /* x / w = -2.5: left of the frustum */
    const float ring[5][2] = {{0, 0}, {1, 0}, {0, 1}, {-1, 0}, {0, -1}};
    for (int v = 0; v < 5; ++v) {
        pos[3 * v] = cx + 0.5f * ring[v][0];
        pos[3 * v + 1] = cy + 0.5f * ring[v][1];
        pos[3 * v + 2] = z;
    }
    VR_EXPECT(vr_cc_check_batch(pos, fan, 4, &persp, 0, "left of the frustum") == 1,
              "a batch wholly beyond x = -w is skipped");
    /* one vertex pulled inside by the least amount: x = -w exactly is not beyond (strict) */
    pos[3 * 1] = -2.0f; /* x = -2 = -w */
    VR_EXPECT(vr_cc_check_batch(pos, fan, 4, &persp, 0, "touching x = -w") == 0,
              "a batch touching the plane is kept");
    pos[3 * 1] = nextafterf(-2.0f, 0.0f);
    VR_EXPECT(vr_cc_check_batch(pos, fan, 4, &persp, 0, "one vertex inside") == 0,
              "a batch straddling x = -w by one vertex is kept");
    pos[3 * 1] = nextafterf(-2.0f, -4.0f); /* just outside: the test may or may not prove it */
    (void)vr_cc_check_batch(pos, fan, 4, &persp, 0, "one vertex one ulp outside");

    /* the fan in front of the eye, centred: facing it (kept), then mirrored (back-facing) */
    for (int v = 0; v < 5; ++v) {
        pos[3 * v] = 0.3f * ring[v][0];
        pos[3 * v + 1] = 0.3f * ring[v][1];
        pos[3 * v + 2] = -2.0f;
    }
    VR_EXPECT(vr_cc_check_batch(pos, fan, 4, &persp, 0, "front-facing") == 0,
              "a front-facing batch is kept");
    for (int v = 0; v < 5; ++v)
        pos[3 * v] = -pos[3 * v];
    VR_EXPECT(vr_cc_check_batch(pos, fan, 4, &persp, 0, "back-facing") == 1,
              "a back-facing batch is skipped");
    VR_EXPECT(vr_cc_check_batch(pos, fan, 4, &persp, 1, "back-facing, two-sided") == 0,
              "two-sided keeps it");
    VR_EXPECT(vr_cc_check_batch(pos, fan, 4, &ortho, 0, "back-facing, orthographic") == 1,
              "orthographic back faces are skipped too");
    /* a degenerate triangle in the back-facing batch: no cone, so no backface claim */
    float deg[5 * 3];
    memcpy(deg, pos, sizeof deg);
    static const uint32_t fan_deg[] = {0, 1, 2, 0, 2, 3, 0, 3, 4, 0, 4, 4};
    VR_EXPECT(vr_cc_check_batch(deg, fan_deg, 4, &persp, 0, "with a degenerate triangle") == 0,
              "a batch with a degenerate triangle is not skipped by its cone");

    /* near edge-on: the back-facing fan tilted until its plane nearly holds the eye */
    for (int e = 1; e <= 12; ++e) {
        const float tilt = 1.0f - powf(10.0f, (float)-e); /* slope toward the eye */
        for (int v = 0; v < 5; ++v) {
            pos[3 * v] = -0.3f * ring[v][0] + 0.5f;
            pos[3 * v + 1] = 0.3f * ring[v][1];
            pos[3 * v + 2] = -2.0f - tilt * 4.0f * (pos[3 * v] - 0.5f);
        }
        char what[64];
        snprintf(what, sizeof what, "edge-on, 1 - 1e-%d", e);
        (void)vr_cc_check_batch(pos, fan, 4, &persp, 0, what);
    }
    /* behind the eye (z > 0: w < 0) and crossing the eye plane */
    for (int v = 0; v < 5; ++v) {
        pos[3 * v] = -0.3f * ring[v][0];
        pos[3 * v + 1] = 0.3f * ring[v][1];
        pos[3 * v + 2] = 2.0f;
    }
    (void)vr_cc_check_batch(pos, fan, 4, &persp, 0, "behind the eye");
    for (int v = 0; v < 5; ++v)
        pos[3 * v + 2] = v == 1 ? 0.5f : -1.0f;
    VR_EXPECT(vr_cc_check_batch(pos, fan, 4, &persp, 0, "crossing the eye plane") == 0,
              "a batch crossing the eye plane is kept");
    /* a non-finite coordinate: never skipped */
    pos[4] = NAN;
    VR_EXPECT(vr_cc_check_batch(pos, fan, 4, &persp, 0, "NaN") == 0, "NaN: kept");
    return VR_TEST_RESULT();
}

/* Seeded random batches: small clusters of random triangles (sometimes slivers, sometimes
 * coplanar fans) under random cameras; every skip must be right, and some must happen. */
VR_TEST(test_clustercull_random, "reuse/clustercull-random")
{
    uint64_t x = 88172645463325252ull;
#define VR_CC_RAND() (x ^= x << 13, x ^= x >> 7, x ^= x << 17, (double)(x >> 11) / 9007199254740992.0)
    int skipped = 0, trials = 0;
    for (int trial = 0; trial < 4000; ++trial) {
        vr_camera cam = {{0, 0, 0}, 1.5f, (float)(360.0 * VR_CC_RAND()),
                         (float)(180.0 * VR_CC_RAND() - 90.0), (float)(0.3 + 4.0 * VR_CC_RAND()),
                         40.0f};
        vr_shader s;
        memset(&s, 0, sizeof s);
        vr_camera_shader(&s, &cam, 320, 200);
        if (trial % 5 == 0) { /* an orthographic one, sometimes mirrored */
            memset(s.mvp, 0, sizeof s.mvp);
            s.mvp[0] = trial % 10 ? 0.7f : -0.7f;
            s.mvp[5] = 0.7f;
            s.mvp[10] = -0.3f;
            s.mvp[15] = 1;
        }
        float pos[24 * 3];
        uint32_t idx[16 * 3];
        const double c[3] = {2.4 * VR_CC_RAND() - 1.2, 2.4 * VR_CC_RAND() - 1.2,
                             2.4 * VR_CC_RAND() - 1.2};
        const double size = pow(10.0, -4.0 * VR_CC_RAND()) * 0.5;
        const double normal[3] = {VR_CC_RAND() - 0.5, VR_CC_RAND() - 0.5, VR_CC_RAND() - 0.5};
        const double bend = trial % 3 == 0 ? 0.0 : 0.5 * VR_CC_RAND(); /* 0: a flat patch */
        for (int v = 0; v < 24; ++v) {
            const double a = VR_CC_RAND() - 0.5, b = VR_CC_RAND() - 0.5;
            /* a patch spanned by two directions orthogonal-ish to `normal`, bent a little */
            const double u[3] = {normal[1], -normal[0], 0}, w[3] = {0, normal[2], -normal[1]};
            for (int j = 0; j < 3; ++j)
                pos[3 * v + j] = (float)(c[j] + size * (a * u[j] + b * w[j] +
                                                        bend * (a * a + b * b) * normal[j]));
        }
        const uint32_t tris = 1 + (uint32_t)(15.999 * VR_CC_RAND());
        for (uint32_t t = 0; t < tris; ++t)
            for (int k = 0; k < 3; ++k)
                idx[3 * t + k] = (uint32_t)(23.999 * VR_CC_RAND());
        for (int two = 0; two < 2; ++two) {
            const int r = vr_cc_check_batch(pos, idx, tris, &s, two, "random batch");
            skipped += r == 1;
            ++trials;
            if (r < 0)
                printf("  random trial %d failed (size %g)\n", trial, size);
        }
    }
#undef VR_CC_RAND
    printf("  %d of %d random batches skipped\n", skipped, trials);
    VR_EXPECT(skipped > trials / 20, "only %d of %d random batches skipped", skipped, trials);
    return VR_TEST_RESULT();
}

VR_TEST(test_clustercull_args, "reuse/clustercull-args")
{
    vr_mesh m;
    if (!vr_test_load(&m, "sphere:2k"))
        return VR_TEST_RESULT();
    const vr_reuse_ops *ops = &vr_reuse_all[VR_REUSE_PATCH];
    vr_batch_plan plan;
    uint32_t *indices = NULL;
    VR_EXPECT_EQ(vr_geometry_plan(&plan, &indices, ops, &m, 64, 372, 0), VR_OK);
    VR_EXPECT(plan.bounds != NULL, "vr_geometry_plan computes the bounds");
    vr_geometry_result r;
    if (indices && vr_geometry_result_alloc(&r, m.index_count / 3, m.vertex_count) == VR_OK) {
        vr_reuse_params p = vr_reuse_params_default();
        p = vr_reuse_params_input(&p, indices, m.index_count, m.positions, m.normals,
                                  m.vertex_count);
        p.tri_ids = plan.tri_order;
        p.batch_starts = plan.starts;
        p.batch_count = plan.batch_count;
        p.queue = r.queue;
        p.counters = &r.counters;
        p.cull = 1;
        p.cluster_cull = 1; /* no bounds */
        VR_EXPECT_EQ(ops->ref(&p), VR_ERR_ARG);
        VR_EXPECT(strstr(vr_last_error(), "bounds") != NULL, "message: %s", vr_last_error());
        p.cull = 0; /* without culling it is ignored */
        VR_EXPECT_EQ(ops->ref(&p), VR_OK);
        vr_geometry_result_free(&r);
    }
    free(indices);
    vr_batch_plan_free(&plan);
    VR_EXPECT(plan.bounds == NULL, "vr_batch_plan_free clears the bounds");
    vr_mesh_free(&m);
    return VR_TEST_RESULT();
}
