/* sim.c - the simulator's configuration and vr_sim_run_all: validate one index buffer, then run
 * every enabled model (ideal, FIFO/LRU sweep, parallel caches, warp voting, dynamic batching,
 * the patch and meshlet plans) as independent jobs on a few OpenMP threads, longest first. Each
 * job owns its scratch arrays, so the counts do not depend on the thread count.
 * Try: `vreuse sim sphere`, `vreuse_tests sim/run_all`.
 */
#define _POSIX_C_SOURCE 200809L
#include "sim/sim_private.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

const char *vr_sim_assign_name(vr_sim_assign a)
{
    switch (a) {
    case VR_SIM_CONTIGUOUS: return "contiguous";
    case VR_SIM_ROUNDROBIN: return "roundrobin";
    default: return "?";
    }
}

vr_sim_config vr_sim_config_default(void)
{
    vr_sim_config c;
    memset(&c, 0, sizeof c);
    for (uint32_t k = 4; k <= 4096; k *= 2) {
        c.fifo_sizes[c.fifo_count++] = k;
        c.lru_sizes[c.lru_count++] = k;
    }
    c.sm_count = 28;
    c.wave_size = 1024;
    c.vertex_bytes = 32;
    c.parallel_bytes[0] = 16 * 1024;
    c.parallel_bytes[1] = 32 * 1024;
    c.parallel_bytes[2] = 64 * 1024;
    c.parallel_count = 3;
    c.assign_mask = 1u << VR_SIM_CONTIGUOUS;
    c.warp_batch = VR_WARP_BATCH_DEFAULT;
    c.warp_size = 32;
    c.warp = 1;
    c.dyn_max_unique = VR_NU_DEFAULT;
    c.dyn_max_indices = VR_MAX_INDICES_DEFAULT;
    c.dynamic = 1;
    c.patch = 1;
    c.meshlet = 1;
    c.threads = 0;
    return c;
}

vr_status vr_sim_config_check(const vr_sim_config *c)
{
    assert(c != NULL);
    if (c->fifo_count > VR_SIM_MAX_CACHES || c->lru_count > VR_SIM_MAX_CACHES)
        return VR_ERROR(VR_ERR_ARG, "simulator: %u FIFO and %u LRU sizes; at most %d each",
                        c->fifo_count, c->lru_count, VR_SIM_MAX_CACHES);
    for (uint32_t i = 0; i < c->fifo_count; ++i)
        if (c->fifo_sizes[i] < 1)
            return VR_ERROR(VR_ERR_ARG, "simulator: FIFO size #%u is 0; caches need >= 1 entry", i);
    for (uint32_t i = 0; i < c->lru_count; ++i)
        if (c->lru_sizes[i] < 1)
            return VR_ERROR(VR_ERR_ARG, "simulator: LRU size #%u is 0; caches need >= 1 entry", i);
    if (c->parallel_count > VR_SIM_MAX_PARALLEL)
        return VR_ERROR(VR_ERR_ARG, "simulator: %u parallel-cache sizes; at most %d",
                        c->parallel_count, VR_SIM_MAX_PARALLEL);
    if (c->parallel_count && c->assign_mask) {
        if (c->sm_count < 1 || c->wave_size < 1 || c->vertex_bytes < 1)
            return VR_ERROR(VR_ERR_ARG,
                            "simulator: parallel cache needs >= 1 multiprocessor (%u), wave size (%u) "
                            "and bytes per vertex (%u)",
                            c->sm_count, c->wave_size, c->vertex_bytes);
        if (c->sm_count > VR_SIM_MAX_SMS || c->wave_size > VR_SIM_MAX_WAVE)
            return VR_ERROR(VR_ERR_ARG,
                            "simulator: parallel cache of %u multiprocessors with waves of %u; at most "
                            "%u multiprocessors and waves of %u",
                            c->sm_count, c->wave_size, VR_SIM_MAX_SMS, VR_SIM_MAX_WAVE);
        for (uint32_t i = 0; i < c->parallel_count; ++i)
            if (c->parallel_bytes[i] > VR_SIM_MAX_CACHE_BYTES)
                return VR_ERROR(VR_ERR_ARG, "simulator: parallel cache of %u bytes; at most %u",
                                c->parallel_bytes[i], VR_SIM_MAX_CACHE_BYTES);
            else if (c->parallel_bytes[i] < c->vertex_bytes)
                return VR_ERROR(VR_ERR_ARG,
                                "simulator: parallel cache of %u bytes holds no %u-byte vertex",
                                c->parallel_bytes[i], c->vertex_bytes);
    }
    if (c->threads > VR_SIM_MAX_THREADS)
        return VR_ERROR(VR_ERR_ARG, "simulator: %u threads; at most %d", c->threads,
                        VR_SIM_MAX_THREADS);
    if (c->assign_mask >> VR_SIM_ASSIGN_COUNT)
        return VR_ERROR(VR_ERR_ARG, "simulator: assignment mask 0x%x has unknown bits", c->assign_mask);
    if (c->warp && (c->warp_batch < VR_WARP_BATCH_MIN || c->warp_batch > VR_WARP_BATCH_MAX ||
                    c->warp_batch % 3 != 0))
        return VR_ERROR(VR_ERR_ARG,
                        "simulator: warp batch of %u indices; it must be a multiple of 3 in %u..%u",
                        c->warp_batch, VR_WARP_BATCH_MIN, VR_WARP_BATCH_MAX);
    if (c->warp && c->warp_size < 3)
        return VR_ERROR(VR_ERR_ARG, "simulator: warp size %u; a triangle needs 3 lanes", c->warp_size);
    const int batches = c->dynamic || c->patch || c->meshlet; /* the models that take N_u */
    if (batches && (c->dyn_max_unique < VR_NU_MIN || c->dyn_max_unique > VR_NU_MAX))
        return VR_ERROR(VR_ERR_ARG, "simulator: dynamic batches' N_u %u must be in %u..%u",
                        c->dyn_max_unique, VR_NU_MIN, VR_NU_MAX);
    if (batches && (c->dyn_max_indices < VR_MAX_INDICES_MIN ||
                    c->dyn_max_indices > VR_MAX_INDICES_MAX))
        return VR_ERROR(VR_ERR_ARG,
                        "simulator: dynamic batches' max indices %u must be in %u..%u (whole "
                        "triangles: 8 acts as 6)",
                        c->dyn_max_indices, VR_MAX_INDICES_MIN, VR_MAX_INDICES_MAX);
    if (c->patch_builder != 0 && c->patch_builder != 1)
        return VR_ERROR(VR_ERR_ARG, "simulator: patch builder %d must be 0 (cpu) or 1 (gpu)",
                        c->patch_builder);
    return VR_OK;
}

/* --- jobs ---------------------------------------------------------------------------------- */

typedef enum job_kind {
    JOB_MESHLET, JOB_PATCH, JOB_PARALLEL, JOB_LRU, JOB_DYNAMIC, JOB_WARP, JOB_FIFO, JOB_IDEAL
} job_kind;

typedef struct sim_job {
    job_kind kind;         /* also the cost rank: lower runs first */
    uint32_t param;        /* cache entries (FIFO, LRU, parallel) */
    vr_sim_assign assign;  /* parallel only */
    vr_sim_result *dst;
    double *seconds;       /* plans: the builder's wall time */
} sim_job;

/* What every job reads. */
typedef struct sim_input {
    const uint32_t *indices;
    uint32_t index_count, vertex_count;
    const float *positions;
    const vr_sim_config *cfg;
} sim_input;

static vr_status run_job(const sim_input *p, const sim_job *j)
{
    const vr_sim_config *c = p->cfg;
    switch (j->kind) {
    case JOB_IDEAL:
        return vr_sim_ideal_unchecked(j->dst, p->indices, p->index_count, p->vertex_count, NULL);
    case JOB_FIFO:
        return vr_sim_fifo_unchecked(j->dst, p->indices, p->index_count, p->vertex_count,
                                     j->param, NULL);
    case JOB_LRU:
        return vr_sim_lru_unchecked(j->dst, p->indices, p->index_count, p->vertex_count,
                                    j->param, NULL);
    case JOB_PARALLEL:
        return vr_sim_parallel_unchecked(j->dst, p->indices, p->index_count, p->vertex_count,
                                         c->sm_count, c->wave_size, j->param, j->assign, NULL);
    case JOB_WARP:
        return vr_sim_warp_unchecked(j->dst, p->indices, p->index_count, p->vertex_count,
                                     c->warp_batch, c->warp_size, NULL);
    case JOB_DYNAMIC:
        return vr_sim_dynamic_unchecked(j->dst, p->indices, p->index_count, p->vertex_count,
                                        c->dyn_max_unique, c->dyn_max_indices, NULL);
    case JOB_PATCH:
    case JOB_MESHLET:
        return vr_sim_plan_unchecked(j->dst,
                                     j->kind == JOB_MESHLET ? VR_SIM_PLAN_MESHLET
                                     : c->patch_builder     ? VR_SIM_PLAN_PATCH_GPU
                                                            : VR_SIM_PLAN_PATCH,
                                     p->indices, p->index_count,
                                     p->positions, p->vertex_count, c->dyn_max_unique,
                                     c->dyn_max_indices, NULL, j->seconds);
    }
    return VR_ERROR(VR_ERR_ARG, "sim: unknown job kind %d", (int)j->kind);
}

static int job_cmp(const void *a, const void *b)
{
    const sim_job *x = a, *y = b;
    if (x->kind != y->kind)
        return (int)x->kind - (int)y->kind;
    return x->param < y->param ? 1 : x->param > y->param ? -1 : 0;
}

static uint32_t thread_count(const vr_sim_config *c, uint32_t jobs)
{
    long n = c->threads;
    if (n == 0) {
        n = sysconf(_SC_NPROCESSORS_ONLN);
        if (n < 1)
            n = 1;
        if (n > 8) /* each thread holds O(vertex_count) scratch; more buys little */
            n = 8;
    }
    return (uint32_t)(n < (long)jobs ? n : (long)jobs);
}

vr_status vr_sim_run_all(vr_sim_report *out, const uint32_t *indices, uint32_t index_count,
                         const float *positions, uint32_t vertex_count, const vr_sim_config *cfg)
{
    assert(out != NULL && cfg != NULL);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    vr_status s = vr_sim_config_check(cfg);
    if (s)
        return s;
    s = vr_sim_check_input(indices, index_count, vertex_count, "sim");
    if (s)
        return s;
    if (cfg->meshlet && !positions)
        return VR_ERROR(VR_ERR_ARG, "sim: the meshlet plan needs vertex positions (meshoptimizer "
                        "clusters triangles in space); pass them or switch meshlet off");

    char scene[sizeof out->scene], order[sizeof out->order];
    memcpy(scene, out->scene, sizeof scene);
    memcpy(order, out->order, sizeof order);
    const double order_seconds = out->order_seconds;
    memset(out, 0, sizeof *out);
    memcpy(out->scene, scene, sizeof scene);
    memcpy(out->order, order, sizeof order);
    out->order_seconds = order_seconds;
    out->vertex_count = vertex_count;
    out->triangles = index_count / 3;
    out->warp_batch = cfg->warp_batch;
    out->dyn_max_unique = cfg->dyn_max_unique;
    out->dyn_max_indices = cfg->dyn_max_indices;
    out->indices = index_count;
    vr_sim_finish(&out->naive, index_count, index_count, 0, vr_sim_naive_passes(index_count));
    vr_sim_finish(&out->multi, index_count, vertex_count, 0, vr_sim_passes(vertex_count));

    sim_job jobs[5 + 2 * VR_SIM_MAX_CACHES + VR_SIM_ASSIGN_COUNT * VR_SIM_MAX_PARALLEL];
    uint32_t n = 0;
    jobs[n++] = (sim_job){JOB_IDEAL, 0, 0, &out->ideal, NULL};
    for (uint32_t i = 0; i < cfg->fifo_count; ++i)
        jobs[n++] = (sim_job){JOB_FIFO, cfg->fifo_sizes[i], 0, &out->fifo[i], NULL};
    for (uint32_t i = 0; i < cfg->lru_count; ++i)
        jobs[n++] = (sim_job){JOB_LRU, cfg->lru_sizes[i], 0, &out->lru[i], NULL};
    for (uint32_t a = 0; a < VR_SIM_ASSIGN_COUNT; ++a)
        if (cfg->assign_mask & (1u << a))
            for (uint32_t i = 0; i < cfg->parallel_count; ++i)
                jobs[n++] = (sim_job){JOB_PARALLEL, cfg->parallel_bytes[i] / cfg->vertex_bytes,
                                      (vr_sim_assign)a, &out->parallel[a][i], NULL};
    if (cfg->warp)
        jobs[n++] = (sim_job){JOB_WARP, 0, 0, &out->warp, NULL};
    if (cfg->dynamic)
        jobs[n++] = (sim_job){JOB_DYNAMIC, 0, 0, &out->dynamic, NULL};
    if (cfg->patch)
        jobs[n++] = (sim_job){JOB_PATCH, 0, 0, &out->patch, &out->patch_seconds};
    if (cfg->meshlet)
        jobs[n++] = (sim_job){JOB_MESHLET, 0, 0, &out->meshlet, &out->meshlet_seconds};
    qsort(jobs, n, sizeof jobs[0], job_cmp);

    /* schedule(dynamic, 1): a thread that is done takes the next job in sorted order, so the
     * longest jobs start first and the short ones fill in at the end. After a failure the
     * remaining jobs are skipped. */
    const sim_input in = {indices, index_count, vertex_count, positions, cfg};
    const int threads = (int)thread_count(cfg, n);
    vr_status status = VR_OK;
    char message[1024] = ""; /* the failure's text: vr_last_error is thread-local */
    int failed = 0;
    uint32_t finished = 0;
    vr_progress("sim", 0, n);
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
    for (uint32_t j = 0; j < n; ++j) {
        int stop;
#pragma omp atomic read
        stop = failed;
        if (stop)
            continue;
        const vr_status js = run_job(&in, &jobs[j]);
#pragma omp critical(vr_sim_jobs)
        {
            if (js != VR_OK && status == VR_OK) {
                status = js;
                snprintf(message, sizeof message, "%s", vr_last_error());
#pragma omp atomic write
                failed = 1;
            }
            vr_progress("sim", ++finished, n);
        }
    }
    if (status != VR_OK) {
        vr_progress("sim", n, n); /* ends a progress line that a failure cut short */
        return vr_set_error(status, "%s", message);
    }

    out->referenced_vertices = (uint32_t)out->ideal.shaded_vertices;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    out->seconds = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
    return VR_OK;
}
