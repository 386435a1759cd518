/* test_render_program.cu - the renderer's vertex stage as a program of the general reuse API
 * (reuse/render_program.h, issue 13). "gpu/render-program": for every strategy, a few meshes
 * and two sets of limits, without culling, the program's queue (poisoned first) equals the
 * renderer's byte for byte - vr_geometry_run with the warp-staged and with the direct queue
 * store - and so do invocations, queue counts and per-vertex shade counts; both programs, the
 * direct vr_render_program and the warp-staged vr_render_program_staged (converged_primitive);
 * "gpu-small/render-program" the same on a small grid for compute-sanitizer.
 * "apps-bench/render-program" (not run by ctest) times sphere:7M and stanford-bunny.obj@7M in
 * forsyth order, loads simple and heavy, the paper's limits (block 256): the renderer's kernels
 * (staged and direct store) against vr_program_run<vr_render_program>, the median of 10 runs
 * after a warm-up, events around the kernels only, as CSV rows
 * render-api,scene,load,strategy,renderer_staged_ms,renderer_direct_ms,program_ms,ratio,
 * ratio_same_store (ratio = program / the faster renderer store, ratio_same_store = program /
 * the renderer with the program's store; program = vr_render_program, the direct store), and
 * the same columns again as render-api-staged rows with vr_render_program_staged, and as
 * stage-api-staged rows with vr_geometry_run as the renderer runs it by default (the staged
 * store through vr_render_program_run: its counter clear and fold included) in program_ms.
 * Then per case, culling with the identity camera into the atomic, cub, hp, ink and collate
 * queues (staged store; ink and collate through the ordered render program):
 * cull-api,scene,load,strategy,queue,own_ms,api_ms,ratio - vr_geometry_run with the
 * own kernels and through the API (VR_GEOMETRY_KERNELS=api; ratio = api / own; its events enclose
 * the stage and, keyed, the separate compaction). patch and meshlet (static plans, built once
 * per mesh by the stage) have cull-api rows only, with one more, queue "unculled": the stage
 * without culling, own kernels against the API.
 * For profiling one case under Nsight Compute: VR_RP_LOAD=simple|heavy, VR_RP_STRATEGY=NAME and
 * VR_RP_SCENE=SPEC keep only the matching rows; VR_RP_RUNS=N (1..10) times N runs instead of 10.
 * Without a CUDA device both print SKIP.
 */
#include "tests/test.h"

#include <stdlib.h>
#include <string.h>

#include "pipeline/stage/geometry.h"
#include "reuse/render_program.cuh"
#include "scenes/scene.h"
#include "tests/test_helpers.h"

/* The program's own device copies of a mesh and its outputs (the geometry context keeps its
 * buffers to itself), and the batches of the last prepared run. */
typedef struct rp_dev {
    uint32_t *indices;       /* index_count */
    float *positions;        /* 3 * vertex_count */
    float *normals;          /* 3 * vertex_count */
    uint32_t *starts;        /* dynamic batch starts, batch_count + 1 */
    uint32_t *plan_indices;  /* index_count, plan order */
    uint32_t *plan_ids;      /* triangles: the plan's tri_order */
    uint32_t *plan_starts;   /* plan batch_count + 1 */
    vr_queue queue;          /* capacity = triangles */
    vr_counters *counters;   /* one */
    uint32_t *shade_counts;  /* vertex_count */
    void *temp;              /* vr_render_program_temp_bytes, the largest so far */
    size_t temp_bytes;
    uint32_t index_count, vertex_count;
} rp_dev;

static void rp_free(rp_dev *d)
{
    void *const bufs[] = {d->indices, d->positions, d->normals, d->starts, d->plan_indices,
                          d->plan_ids, d->plan_starts, d->counters, d->shade_counts, d->temp};
    vr_cuda_free_all(bufs, VR_COUNT_OF(bufs));
    vr_queue_device_free(&d->queue);
    memset(d, 0, sizeof *d);
}

static vr_status rp_upload(rp_dev *d, const vr_mesh *m)
{
    memset(d, 0, sizeof *d);
    d->index_count = m->index_count;
    d->vertex_count = m->vertex_count;
    const size_t v3 = 3 * (size_t)m->vertex_count * sizeof(float);
    vr_status st;
    if ((st = vr_cuda_upload((void **)&d->indices, m->indices,
                             (size_t)m->index_count * sizeof(uint32_t), "indices")) ||
        (st = vr_cuda_upload((void **)&d->positions, m->positions, v3, "positions")) ||
        (st = vr_cuda_upload((void **)&d->normals, m->normals, v3, "normals")) ||
        (st = vr_queue_device_alloc(&d->queue, m->index_count / 3)) ||
        (st = vr_cuda_alloc((void **)&d->counters, sizeof *d->counters, "counters")) ||
        (st = vr_cuda_alloc((void **)&d->shade_counts,
                            (size_t)(m->vertex_count ? m->vertex_count : 1) * sizeof(uint32_t),
                            "shade counts")))
        rp_free(d);
    return st;
}

/* vr_geometry_run with the strategy's own kernels (own != 0) or through the general API
 * wherever it takes the run (VR_GEOMETRY_KERNELS=api: also the atomic queue, which the
 * geometry stage by default leaves to the own kernels). By default vr_geometry_run goes through
 * the API without culling (pipeline/stage/geometry.cu), so the oracle and the "renderer"
 * columns of the bench take own = 1, else the program would be compared with itself. */
static vr_status rp_renderer_run_as(vr_geometry *g, const vr_reuse_ops *ops,
                                    const vr_reuse_params *cfg, int poison, float *ms, int own)
{
    setenv("VR_GEOMETRY_KERNELS", own ? "own" : "api", 1);
    const vr_status st = vr_geometry_run(g, ops, cfg, poison, ms);
    unsetenv("VR_GEOMETRY_KERNELS");
    return st;
}

static vr_status rp_renderer_run(vr_geometry *g, const vr_reuse_ops *ops,
                                 const vr_reuse_params *cfg, int poison, float *ms)
{
    return rp_renderer_run_as(g, ops, cfg, poison, ms, 1);
}

/* *p: the renderer's parameters for `ops` with configuration cfg over d's copies (dynamic
 * batches or the plan computed on the host as vr_geometry_run does), and the workspace. */
static vr_status rp_prepare(rp_dev *d, const vr_mesh *m, const vr_reuse_ops *ops,
                            const vr_reuse_params *cfg, vr_reuse_params *p)
{
    vr_status st = VR_OK;
    *p = vr_reuse_params_input(cfg, d->indices, d->index_count, d->positions, d->normals,
                               d->vertex_count);
    p->queue = d->queue;
    p->counters = d->counters;
    p->shade_counts = d->shade_counts;
    p->stream = NULL;
    if (ops->dynamic) {
        uint32_t *starts = NULL, count = 0;
        if ((st = vr_geometry_dyn_batches(&starts, &count, m, cfg->max_unique,
                                          cfg->max_indices)) == VR_OK &&
            (st = vr_cuda_free((void **)&d->starts, "batch starts")) == VR_OK)
            st = vr_cuda_upload((void **)&d->starts, starts, ((size_t)count + 1) * 4,
                                "batch starts");
        free(starts);
        p->batch_starts = d->starts;
        p->batch_count = count;
    } else if (ops->plan) {
        vr_batch_plan plan;
        uint32_t *indices = NULL;
        if ((st = vr_geometry_plan(&plan, &indices, ops, m, cfg->max_unique, cfg->max_indices,
                                   cfg->patch_builder)) != VR_OK)
            return st;
        if ((st = vr_cuda_free((void **)&d->plan_indices, "plan")) == VR_OK &&
            (st = vr_cuda_free((void **)&d->plan_ids, "plan")) == VR_OK &&
            (st = vr_cuda_free((void **)&d->plan_starts, "plan")) == VR_OK &&
            (st = vr_cuda_upload((void **)&d->plan_indices, indices,
                                 (size_t)d->index_count * 4, "plan indices")) == VR_OK &&
            (st = vr_cuda_upload((void **)&d->plan_ids, plan.tri_order,
                                 (size_t)plan.triangle_count * 4, "plan ids")) == VR_OK)
            st = vr_cuda_upload((void **)&d->plan_starts, plan.starts,
                                ((size_t)plan.batch_count + 1) * 4, "plan starts");
        p->indices = d->plan_indices;
        p->tri_ids = d->plan_ids;
        p->batch_starts = d->plan_starts;
        p->batch_count = plan.batch_count;
        free(indices);
        vr_batch_plan_free(&plan);
    }
    const size_t need = vr_render_program_temp_bytes(ops->kind, p);
    if (st == VR_OK && need > d->temp_bytes) {
        if ((st = vr_cuda_free(&d->temp, "workspace")) == VR_OK &&
            (st = vr_cuda_alloc(&d->temp, need, "workspace")) == VR_OK)
            d->temp_bytes = need;
    }
    p->temp = d->temp;
    return st;
}

/* Poisons the queue (0xFF: NaN floats, ~0 ids), clears the counts, runs the render program
 * and waits. */
static vr_status rp_run(rp_dev *d, vr_reuse_kind kind, const vr_reuse_params *p)
{
    const size_t t = d->index_count / 3;
    VR_CUDA_CHECK(cudaMemset(d->queue.clip, 0xFF, t * VR_QUEUE_CLIP_FLOATS * sizeof(float)));
    VR_CUDA_CHECK(cudaMemset(d->queue.normal, 0xFF, t * VR_QUEUE_NORMAL_FLOATS * sizeof(float)));
    VR_CUDA_CHECK(cudaMemset(d->queue.vertex, 0xFF, t * VR_QUEUE_VERTEX_IDS * sizeof(uint32_t)));
    VR_CUDA_CHECK(cudaMemset(d->queue.tri_id, 0xFF, t * sizeof(uint32_t)));
    VR_CUDA_CHECK(cudaMemset(d->counters, 0, sizeof *d->counters));
    VR_CUDA_CHECK(cudaMemset(d->shade_counts, 0, (size_t)d->vertex_count * sizeof(uint32_t)));
    vr_status st = vr_render_program_run(kind, p);
    if (st != VR_OK)
        return st;
    VR_CUDA_CHECK(cudaDeviceSynchronize());
    return VR_OK;
}

static vr_status rp_download(const rp_dev *d, vr_geometry_result *out)
{
    const size_t t = d->index_count / 3;
    VR_CUDA_CHECK(cudaMemcpy(out->queue.clip, d->queue.clip,
                             t * VR_QUEUE_CLIP_FLOATS * sizeof(float), cudaMemcpyDeviceToHost));
    VR_CUDA_CHECK(cudaMemcpy(out->queue.normal, d->queue.normal,
                             t * VR_QUEUE_NORMAL_FLOATS * sizeof(float), cudaMemcpyDeviceToHost));
    VR_CUDA_CHECK(cudaMemcpy(out->queue.vertex, d->queue.vertex,
                             t * VR_QUEUE_VERTEX_IDS * sizeof(uint32_t), cudaMemcpyDeviceToHost));
    VR_CUDA_CHECK(cudaMemcpy(out->queue.tri_id, d->queue.tri_id, t * sizeof(uint32_t),
                             cudaMemcpyDeviceToHost));
    VR_CUDA_CHECK(cudaMemcpy(&out->counters, d->counters, sizeof out->counters,
                             cudaMemcpyDeviceToHost));
    VR_CUDA_CHECK(cudaMemcpy(out->shade_counts, d->shade_counts,
                             (size_t)d->vertex_count * sizeof(uint32_t), cudaMemcpyDeviceToHost));
    return VR_OK;
}

/* The first slot whose record differs, or -1 when the queues are the same bytes. */
static long long rp_queue_diff(const vr_queue *a, const vr_queue *b, uint32_t triangles)
{
    for (uint32_t s = 0; s < triangles; ++s)
        if (memcmp(a->clip + (size_t)s * VR_QUEUE_CLIP_FLOATS, b->clip +
                       (size_t)s * VR_QUEUE_CLIP_FLOATS, VR_QUEUE_CLIP_FLOATS * sizeof(float)) ||
            memcmp(a->normal + (size_t)s * VR_QUEUE_NORMAL_FLOATS,
                   b->normal + (size_t)s * VR_QUEUE_NORMAL_FLOATS,
                   VR_QUEUE_NORMAL_FLOATS * sizeof(float)) ||
            memcmp(a->vertex + (size_t)s * VR_QUEUE_VERTEX_IDS,
                   b->vertex + (size_t)s * VR_QUEUE_VERTEX_IDS,
                   VR_QUEUE_VERTEX_IDS * sizeof(uint32_t)) ||
            a->tri_id[s] != b->tri_id[s])
            return s;
    return -1;
}

/* got (the program) == want (the renderer with store `store`): queue bytes, counters, shade
 * counts. */
static void rp_expect_same(const vr_geometry_result *got, const vr_geometry_result *want,
                           const char *what, const char *sn, const char *store)
{
    const long long s = rp_queue_diff(&got->queue, &want->queue, want->triangles);
    VR_EXPECT(s < 0, "%s, %s: the program's queue differs from the renderer's (%s store) from "
              "slot %lld (tri_id %u vs %u, vertex %u vs %u)", what, sn, store, s,
              s < 0 ? 0 : got->queue.tri_id[s], s < 0 ? 0 : want->queue.tri_id[s],
              s < 0 ? 0 : got->queue.vertex[3 * s], s < 0 ? 0 : want->queue.vertex[3 * s]);
    VR_EXPECT(got->counters.invocations == want->counters.invocations &&
                  got->counters.queue_count == want->counters.queue_count &&
                  got->counters.overflow == want->counters.overflow,
              "%s, %s: program %llu invocations, %u queued, %u overflow; renderer (%s) %llu, %u, "
              "%u", what, sn, got->counters.invocations, got->counters.queue_count,
              got->counters.overflow, store, want->counters.invocations,
              want->counters.queue_count, want->counters.overflow);
    VR_EXPECT(!memcmp(got->shade_counts, want->shade_counts,
                      (size_t)want->vertex_count * sizeof(uint32_t)),
              "%s, %s: per-vertex shade counts differ from the renderer's (%s)", what, sn, store);
}

/* Every strategy of the registry on mesh m with limits l and `iterations` of load. */
static void rp_check(const vr_mesh *m, const char *what, const vr_batch_limits *l,
                     uint32_t iterations)
{
    const uint32_t tris = m->index_count / 3;
    vr_geometry *g = NULL;
    rp_dev d;
    vr_geometry_result staged, direct, got;
    memset(&staged, 0, sizeof staged), memset(&direct, 0, sizeof direct);
    memset(&got, 0, sizeof got);
    VR_EXPECT_EQ(vr_geometry_create(&g, m), VR_OK);
    VR_EXPECT_EQ(rp_upload(&d, m), VR_OK);
    VR_EXPECT_EQ(vr_geometry_result_alloc(&staged, tris, m->vertex_count), VR_OK);
    VR_EXPECT_EQ(vr_geometry_result_alloc(&direct, tris, m->vertex_count), VR_OK);
    VR_EXPECT_EQ(vr_geometry_result_alloc(&got, tris, m->vertex_count), VR_OK);
    if (!g || !d.queue.clip || !got.queue.clip || !staged.queue.clip || !direct.queue.clip)
        goto done;
    for (int kind = 0; kind < VR_REUSE_KIND_COUNT; ++kind) {
        const vr_reuse_ops *ops = &vr_reuse_all[kind];
        vr_reuse_params cfg = vr_reuse_params_default();
        vr_batch_limits_apply(&cfg, l);
        cfg.count = 1;
        cfg.shader.mvp[0] = 0.5f, cfg.shader.mvp[5] = 0.75f, cfg.shader.mvp[12] = 0.125f;
        cfg.shader.mvp[14] = -0.25f, cfg.shader.normal_matrix[0] = 2.0f;
        cfg.shader.loop_iterations = iterations;
        cfg.queue_store = 1;
        VR_EXPECT_EQ(rp_renderer_run(g, ops, &cfg, 1, NULL), VR_OK);
        VR_EXPECT_EQ(vr_geometry_download(g, &staged), VR_OK);
        cfg.queue_store = 0;
        VR_EXPECT_EQ(rp_renderer_run(g, ops, &cfg, 1, NULL), VR_OK);
        VR_EXPECT_EQ(vr_geometry_download(g, &direct), VR_OK);
        /* warp three times: as the program's pool_rounds() says, and with pooled rounds on
         * the full grid and on two blocks (each warp over many batches, its ring wrapping) */
        const int pools = kind == VR_REUSE_WARP ? 3 : 1;
        for (int run = 0; run < 2 * pools; ++run) {
            const int store = run % 2, pool = run / 2; /* the direct and the staged program */
            static const char *const pool_env[] = {NULL, "pooled", "pooled:2"};
            cfg.queue_store = store;
            if (pool_env[pool])
                setenv("VR_PROG_WARP", pool_env[pool], 1);
            vr_reuse_params p;
            vr_status st = rp_prepare(&d, m, ops, &cfg, &p);
            if (st == VR_OK)
                st = rp_run(&d, (vr_reuse_kind)kind, &p);
            unsetenv("VR_PROG_WARP");
            if (st == VR_OK)
                st = rp_download(&d, &got);
            VR_EXPECT(st == VR_OK, "%s, %s: render program (%s%s%s): %s", what, ops->name,
                      store ? "staged" : "direct", pool ? ", VR_PROG_WARP=" : "",
                      pool ? pool_env[pool] : "", vr_last_error());
            if (st != VR_OK)
                continue;
            char sn[96];
            snprintf(sn, sizeof sn, "%s (%s program%s%s)", ops->name, store ? "staged" : "direct",
                     pool ? ", VR_PROG_WARP=" : "", pool ? pool_env[pool] : "");
            rp_expect_same(&got, &staged, what, sn, "staged");
            rp_expect_same(&got, &direct, what, sn, "direct");
        }
        VR_EXPECT(got.counters.invocations > 0 && got.counters.queue_count == tris,
                  "%s, %s: %llu invocations, %u of %u triangles queued", what, ops->name,
                  got.counters.invocations, got.counters.queue_count, tris);
    }
done:
    vr_geometry_result_free(&staged), vr_geometry_result_free(&direct);
    vr_geometry_result_free(&got);
    rp_free(&d);
    vr_geometry_destroy(g);
}

/* A few hundred triangles for compute-sanitizer (memcheck, racecheck, synccheck): the staged
 * program's warp votes inside primitive() among them. */
VR_TEST(test_render_program_gpu_small, "gpu-small/render-program")
{
    if (vr_test_no_device())
        return VR_TEST_SKIP;
    vr_batch_limits small = vr_batch_limits_paper();
    small.block_size = 64, small.max_unique = 32, small.max_indices = 96;
    vr_mesh m;
    VR_EXPECT_EQ(vr_test_grid_mesh(&m, 12, 10, 2, 1, 3), VR_OK);
    rp_check(&m, "shuffled grid 12x10", &small, 0);
    vr_mesh_free(&m);
    return VR_TEST_RESULT();
}

VR_TEST(test_render_program_gpu, "gpu/render-program")
{
    if (vr_test_no_device())
        return VR_TEST_SKIP;
    const vr_batch_limits paper = vr_batch_limits_paper();
    vr_batch_limits small = paper;
    small.block_size = 64, small.max_unique = 64, small.max_indices = 192;
    vr_mesh m;
    VR_EXPECT_EQ(vr_generate_sphere(&m, 81920), VR_OK);
    rp_check(&m, "sphere (paper limits)", &paper, 0);
    rp_check(&m, "sphere (block 64, N_u 64, 192 indices, load 64)", &small, 64);
    vr_mesh_free(&m);
    VR_EXPECT_EQ(vr_test_grid_mesh(&m, 40, 30, 3, 1, 7), VR_OK);
    rp_check(&m, "shuffled grid 40x30", &paper, 0);
    rp_check(&m, "shuffled grid 40x30 (small limits)", &small, 0);
    vr_mesh_free(&m);
    char buf[512];
    const char *spec = vr_test_plan_spec(buf, sizeof buf, "stanford-bunny.obj");
    if (spec && vr_test_load(&m, spec)) {
        rp_check(&m, "stanford-bunny.obj", &paper, 0);
        vr_mesh_free(&m);
    }
    return VR_TEST_RESULT();
}

/* ---- timing (apps-bench/, not run by ctest) ------------------------------------------------ */

#define RP_RUNS_MAX 10

/* VR_RP_RUNS, clamped to 1..RP_RUNS_MAX; RP_RUNS_MAX when unset. */
static int rp_runs(void)
{
    const char *e = getenv("VR_RP_RUNS");
    const int n = e ? atoi(e) : RP_RUNS_MAX;
    return n < 1 ? 1 : n > RP_RUNS_MAX ? RP_RUNS_MAX : n;
}

/* Whether environment variable `var` is unset or names `value`. */
static int rp_selected(const char *var, const char *value)
{
    const char *e = getenv(var);
    return !e || !*e || strcmp(e, value) == 0;
}

static int rp_cmp_float(const void *a, const void *b)
{
    const float x = *(const float *)a, y = *(const float *)b;
    return x < y ? -1 : x > y;
}

static float rp_median(float *ms, int runs)
{
    qsort(ms, (size_t)runs, sizeof *ms, rp_cmp_float);
    return runs % 2 ? ms[runs / 2] : 0.5f * (ms[runs / 2 - 1] + ms[runs / 2]);
}

/* The renderer through vr_geometry_run (its events enclose the vertex stage only: ops->run,
 * or with own = 0 vr_render_program_run's clear, kernels and fold): median ms. */
static vr_status rp_time_renderer(vr_geometry *g, const vr_reuse_ops *ops,
                                  const vr_reuse_params *cfg, float *median, int own)
{
    float ms[RP_RUNS_MAX];
    const int runs = rp_runs();
    vr_status st = rp_renderer_run_as(g, ops, cfg, 0, NULL, own); /* warm-up, batches, plans */
    for (int i = 0; i < runs && st == VR_OK; ++i)
        st = rp_renderer_run_as(g, ops, cfg, 0, &ms[i], own);
    if (st == VR_OK)
        *median = rp_median(ms, runs);
    return st;
}

/* Render program P through vr_program_run, events around it alone: median ms. */
template <class P>
static vr_status rp_time_program(rp_dev *d, const vr_mesh *m, const vr_reuse_ops *ops,
                                 const vr_reuse_params *cfg, float *median)
{
    vr_reuse_params p;
    vr_status st = rp_prepare(d, m, ops, cfg, &p);
    if (st != VR_OK)
        return st;
    vr_program_counters *counters = (vr_program_counters *)d->temp;
    VR_CUDA_CHECK(cudaMemset(counters, 0, sizeof *counters));
    void *elements = ops->kind == VR_REUSE_MULTI
                         ? (unsigned char *)d->temp + VR_RENDER_PROGRAM_COUNTERS_BYTES
                         : NULL; /* vr_render_program_run's layout of the workspace */
    const vr_program_params q = vr_render_program_params(ops->kind, &p, counters, elements);
    const P prog = vr_render_program_of<P>(&p);
    cudaEvent_t a, b;
    VR_CUDA_CHECK(cudaEventCreate(&a));
    VR_CUDA_CHECK(cudaEventCreate(&b));
    float ms[RP_RUNS_MAX];
    const int runs = rp_runs();
    for (int i = -1; i < runs && st == VR_OK; ++i) { /* i = -1: the warm-up */
        VR_CUDA_GOTO(cudaEventRecord(a, 0));
        if ((st = vr_program_run(ops->kind, q, prog, 0)) != VR_OK)
            goto done;
        VR_CUDA_GOTO(cudaEventRecord(b, 0));
        VR_CUDA_GOTO(cudaEventSynchronize(b));
        if (i >= 0)
            VR_CUDA_GOTO(cudaEventElapsedTime(&ms[i], a, b));
    }
    vr_program_counters c;
    VR_CUDA_GOTO(cudaMemcpy(&c, counters, sizeof c, cudaMemcpyDeviceToHost));
    if (c.overflow)
        st = VR_ERROR(VR_ERR_OVERFLOW, "%s: %u primitives skipped", ops->name, c.overflow);
    else
        *median = rp_median(ms, runs);
done:
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    return st;
}

/* One CSV row: the program's time against the faster renderer store and against the renderer
 * with the program's own store. */
static void rp_bench_row(const char *row, const char *name, const char *load, const char *strategy,
                         float staged, float direct, float prog, int prog_staged)
{
    const float best = staged < direct ? staged : direct;
    printf("%s,%s,%s,%s,%.4f,%.4f,%.4f,%.3f,%.3f\n", row, name, load, strategy, staged, direct,
           prog, prog / best, prog / (prog_staged ? staged : direct));
}

/* One cull-api row: cfg through vr_geometry_run with the own kernels, then through the API. */
static void rp_bench_own_api(vr_geometry *g, const vr_reuse_ops *ops, const vr_reuse_params *cfg,
                             const char *name, const char *load, const char *queue)
{
    float own = 0, api = 0;
    vr_status st = rp_time_renderer(g, ops, cfg, &own, 1);
    if (st == VR_OK)
        st = rp_time_renderer(g, ops, cfg, &api, 0);
    if (st != VR_OK)
        printf("cull-api,%s,%s,%s,%s,FAIL %s\n", name, load, ops->name, queue, vr_last_error());
    else
        printf("cull-api,%s,%s,%s,%s,%.4f,%.4f,%.3f\n", name, load, ops->name, queue, own, api,
               api / own);
}

/* The cull-api rows of one case: culling (the identity camera: the back half of a closed mesh
 * goes) into every culled queue; for the plans the unculled stage first (the other strategies
 * have it in their stage-api-staged rows). */
static void rp_bench_cull(vr_geometry *g, const vr_reuse_ops *ops, const vr_reuse_params *base,
                          const char *name, const char *load)
{
    static const vr_queue_mode culled[] = {VR_QUEUE_ATOMIC, VR_QUEUE_CUB, VR_QUEUE_HP,
                                           VR_QUEUE_INK, VR_QUEUE_COLLATE};
    vr_reuse_params cfg = *base;
    cfg.queue_store = 1;
    if (ops->plan) {
        cfg.cull = 0;
        rp_bench_own_api(g, ops, &cfg, name, load, "unculled");
    }
    cfg.cull = 1;
    for (size_t c = 0; c < sizeof culled / sizeof culled[0]; ++c) {
        cfg.queue_mode = culled[c];
        rp_bench_own_api(g, ops, &cfg, name, load, vr_queue_mode_names[culled[c]]);
    }
    fflush(stdout);
}

static void rp_bench_scene(const vr_mesh *m, const char *name)
{
    vr_geometry *g = NULL;
    rp_dev d;
    if (vr_geometry_create(&g, m) != VR_OK || rp_upload(&d, m) != VR_OK) {
        printf("render-api,%s,FAIL %s\n", name, vr_last_error());
        vr_geometry_destroy(g);
        return;
    }
    static const uint32_t loads[] = {0, 3}; /* vr_load_names: simple, heavy */
    for (size_t li = 0; li < sizeof loads / sizeof loads[0]; ++li)
        for (int kind = VR_REUSE_NAIVE; kind <= VR_REUSE_MESHLET; ++kind) {
            const vr_reuse_ops *ops = &vr_reuse_all[kind];
            if (!rp_selected("VR_RP_LOAD", vr_load_names[loads[li]]) ||
                !rp_selected("VR_RP_STRATEGY", ops->name))
                continue;
            vr_reuse_params cfg = vr_reuse_params_default();
            const vr_batch_limits paper = vr_batch_limits_paper();
            vr_batch_limits_apply(&cfg, &paper);
            cfg.shader.loop_iterations = vr_load_iterations[loads[li]];
            const char *load = vr_load_names[loads[li]];
            if (ops->plan) { /* patch, meshlet: the stage's plan; only the cull-api rows */
                rp_bench_cull(g, ops, &cfg, name, load);
                continue;
            }
            float staged = 0, direct = 0, prog = 0, prog_staged = 0;
            float api_staged = 0; /* vr_geometry_run's default path: the API */
            vr_status st;
            cfg.queue_store = 1;
            if ((st = rp_time_renderer(g, ops, &cfg, &staged, 1)) == VR_OK)
                st = rp_time_renderer(g, ops, &cfg, &api_staged, 0);
            cfg.queue_store = 0; /* the direct store: the own kernels (geometry.cu) */
            if (st == VR_OK)
                st = rp_time_renderer(g, ops, &cfg, &direct, 1);
            if (st == VR_OK)
                st = rp_time_program<vr_render_program>(&d, m, ops, &cfg, &prog);
            if (st == VR_OK)
                st = rp_time_program<vr_render_program_staged>(&d, m, ops, &cfg, &prog_staged);
            if (st != VR_OK) {
                printf("render-api,%s,%s,%s,FAIL %s\n", name, vr_load_names[loads[li]],
                       ops->name, vr_last_error());
                continue;
            }
            rp_bench_row("render-api", name, load, ops->name, staged, direct, prog, 0);
            rp_bench_row("render-api-staged", name, load, ops->name, staged, direct, prog_staged,
                         1);
            rp_bench_row("stage-api-staged", name, load, ops->name, staged, direct, api_staged, 1);
            rp_bench_cull(g, ops, &cfg, name, load);
        }
    rp_free(&d);
    vr_geometry_destroy(g);
}

VR_TEST(test_render_program_bench, "apps-bench/render-program")
{
    if (vr_test_no_device())
        return VR_TEST_SKIP;
    printf("# render program vs renderer: forsyth order, paper limits (block 256, N_u 256, 1023 "
           "indices, warp 96), no culling but in the cull-api rows; median of %d runs after a "
           "warm-up, events around the "
           "kernels; ratio = program / faster renderer store, ratio_same_store = program / "
           "renderer with the program's store; render-api rows: the direct-store program, "
           "render-api-staged rows: the warp-staged program, stage-api-staged rows: "
           "vr_geometry_run as the renderer runs it by default (staged store through the API: "
           "the program's clear, kernels and fold), program_ms its time\n",
           rp_runs());
    printf("render-api,scene,load,strategy,renderer_staged_ms,renderer_direct_ms,program_ms,"
           "ratio,ratio_same_store\n");
    printf("cull-api,scene,load,strategy,queue,own_ms,api_ms,ratio\n");
    static const char *const specs[] = {"sphere:7M", "stanford-bunny.obj@7M"};
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; ++i) {
        vr_mesh m;
        if (!rp_selected("VR_RP_SCENE", specs[i]))
            continue;
        if (!vr_test_load_forsyth(&m, specs[i]))
            continue;
        rp_bench_scene(&m, specs[i]);
        vr_mesh_free(&m);
    }
    return VR_TEST_RESULT();
}
