/* geometry.cu - the GPU half of pipeline/geometry.h: uploads a mesh once, owns the queue,
 * counters, shade counts, workspace, dynamic batch starts and the last static plan, runs any
 * registry strategy on one stream with cudaEvent timing around its kernels, and downloads the
 * result. Also the device
 * queries and the device-to-device copy bandwidth that `vreuse bench` uses as its floor.
 * Try: `vreuse_tests gpu/`, `vreuse bench sphere:1M`.
 */
#include "pipeline/stage/geometry.h"
#include "pipeline/vr_check.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "reuse/stage.cuh"
#include "pipeline/compact/compact.h"
#include "pipeline/gts/gts_batch.h"
#include "reuse/render_program.h"

struct vr_geometry {
    uint32_t vertex_count, index_count, triangles;
    uint32_t *d_indices;  /* index_count */
    const uint32_t *d_external_indices; /* caller's buffer runs read instead, or NULL */
    float *d_positions;   /* 3 * vertex_count */
    float *d_normals;     /* 3 * vertex_count */
    vr_mesh host;         /* host copies of the indices and positions (batches and plans) */
    const vr_geometry *vertices_of; /* d_positions, d_normals and host.positions are this
                                       owner's (vr_geometry_create_sharing): not freed here */
    const float *source_positions, *source_normals; /* the arrays they were copied from */
    uint32_t *d_batch_starts;   /* batch_count + 1, for batch_max_unique, batch_max_indices */
    uint32_t *h_batch_starts;   /* the same on the host (seeds are computed from them) */
    uint32_t batch_count;
    uint32_t batch_max_unique;  /* 0: no batches computed yet */
    uint32_t batch_max_indices;
    /* the last static plan (patch or meshlet) on the device: plan_ops's plan for
     * plan_max_unique, plan_max_indices, built by plan_builder (plan_ops NULL: none yet) */
    const vr_reuse_ops *plan_ops;
    uint32_t plan_max_unique, plan_max_indices, plan_batch_count;
    int plan_builder;
    uint32_t *d_plan_indices;   /* index_count, in plan order */
    uint32_t *d_plan_ids;       /* triangles: source triangle id of each plan position */
    uint32_t *d_plan_starts;    /* plan_batch_count + 1 */
    vr_cluster_bounds *d_plan_bounds; /* plan_batch_count: the batches' cluster-culling bounds */
    /* batches given by the caller (vr_geometry_set_batches; given_count + 1 starts, NULL: none),
     * used instead of the computed ones and the plan */
    uint32_t *d_given_starts;
    vr_cluster_bounds *d_given_bounds; /* given_count, or NULL */
    uint32_t given_count;
    vr_queue d_queue;           /* capacity = triangles */
    vr_counters *d_counters;    /* one */
    vr_compact_state *queue_state; /* culling into an ink / collate queue; made on first use,
                                      for up to `triangles` blocks (every grid has fewer) */
    /* culling into a cub / hp queue (vr_queue_keyed), made on first use: the staging queue the
     * batcher fills at the unculled slots, its keys, the kept slots, the compaction context */
    vr_queue d_stage_queue;
    uint32_t *d_keys, *d_kept;
    vr_compact_ctx *compact;
    uint32_t *d_shade_counts;   /* vertex_count */
    void *d_temp;               /* temp_capacity bytes, grown on demand */
    size_t temp_capacity;
    cudaStream_t stream;
    cudaEvent_t start, stop;
    /* compressed input (vr_geometry_set_gts): the caller's stream, its arrays on the device,
     * seeds for the batches of (seed_max_unique, seed_max_indices) */
    const vr_gts *gts;
    uint32_t *d_gts_c, *d_gts_inc, *d_gts_s, *d_gts_err;
    vr_gts_seed *d_seeds;
    uint32_t seed_max_unique, seed_max_indices; /* 0: no seeds yet */
    vr_gts_batch_source gts_src;                /* device pointers */
    /* bounded (vr_geometry_create_bounded): no mesh, a queue of `triangles` slots that chunks of
     * a larger stream take in turn, and their running totals */
    int bounded;
    vr_geometry_tally *d_tally;
};

/* ---- device ------------------------------------------------------------------------------ */

/* Without a device these two leave the reason in vr_last_error() too (vr_cuda_device_check):
 * no caller reads it there, they return or print it themselves. */
int vr_gpu_available(void)
{
    return vr_cuda_device_check() == VR_OK;
}

const char *vr_gpu_device_name(void)
{
    static char name[256];
    cudaDeviceProp prop;
    if (vr_cuda_device_check() != VR_OK)
        snprintf(name, sizeof name, "%s", vr_last_error()); /* "no CUDA device: <why>" */
    else if (vr_cuda_status(cudaGetDeviceProperties(&prop, 0), VR_CUDA_WHERE,
                            "cudaGetDeviceProperties(device 0)") != VR_OK)
        snprintf(name, sizeof name, "no CUDA device: %s", vr_last_error());
    else
        snprintf(name, sizeof name, "%s", prop.name);
    return name;
}

vr_status vr_gpu_device_info(int *driver_version, int *runtime_version, int *sm_count,
                             int *clock_khz)
{
    const vr_status st = vr_cuda_device_check();
    if (st != VR_OK)
        return st;
    int d = 0, r = 0, sms = 0, clk = 0;
    VR_CUDA_CHECK(cudaDriverGetVersion(&d));
    VR_CUDA_CHECK(cudaRuntimeGetVersion(&r));
    VR_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    VR_CUDA_CHECK(cudaDeviceGetAttribute(&clk, cudaDevAttrClockRate, 0));
    if (driver_version)
        *driver_version = d;
    if (runtime_version)
        *runtime_version = r;
    if (sm_count)
        *sm_count = sms;
    if (clock_khz)
        *clock_khz = clk;
    return VR_OK;
}

vr_status vr_gpu_shape_query(vr_gpu_shape *out)
{
    assert(out);
    const vr_status st = vr_cuda_device_check();
    if (st != VR_OK)
        return st;
    int sms = 0, threads = 0, blocks = 0;
    VR_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    VR_CUDA_CHECK(cudaDeviceGetAttribute(&threads, cudaDevAttrMaxThreadsPerMultiProcessor, 0));
    VR_CUDA_CHECK(cudaDeviceGetAttribute(&blocks, cudaDevAttrMaxBlocksPerMultiprocessor, 0));
    out->sm_count = (uint32_t)sms;
    out->threads_per_sm = (uint32_t)threads;
    out->blocks_per_sm = (uint32_t)blocks;
    return VR_OK;
}

/* The best time in ms of 10 copies of `bytes` from src to dst (after one warm-up), by events. */
static vr_status vr_gpu_best_copy_ms(void *dst, const void *src, size_t bytes,
                                     cudaMemcpyKind kind, float *best)
{
    cudaEvent_t e0 = NULL, e1 = NULL;
    vr_status st = VR_OK;
    *best = 0;
    VR_CUDA_GOTO(cudaEventCreate(&e0));
    VR_CUDA_GOTO(cudaEventCreate(&e1));
    for (int rep = 0; rep < 11; ++rep) {
        float ms = 0;
        VR_CUDA_GOTO(cudaEventRecord(e0));
        VR_CUDA_GOTO(cudaMemcpy(dst, src, bytes, kind));
        VR_CUDA_GOTO(cudaEventRecord(e1));
        VR_CUDA_GOTO(cudaEventSynchronize(e1));
        VR_CUDA_GOTO(cudaEventElapsedTime(&ms, e0, e1));
        if (rep > 0 && (*best == 0 || ms < *best))
            *best = ms; /* rep 0 is the warm-up */
    }
done:
    /* teardown: nothing to act on if these fail, the first error is already recorded */
    if (e0)
        cudaEventDestroy(e0);
    if (e1)
        cudaEventDestroy(e1);
    return st;
}

vr_status vr_gpu_copy_bandwidth(double *bytes_per_second)
{
    assert(bytes_per_second);
    *bytes_per_second = 0;
    vr_status st = vr_cuda_device_check();
    if (st != VR_OK)
        return st;
    const size_t bytes = (size_t)256 << 20; /* far beyond the 50 MB L2: DRAM, not cache */
    void *a = NULL, *b = NULL;
    float best = 0;
    if ((st = vr_cuda_alloc(&a, bytes, "copy bandwidth source")) != VR_OK ||
        (st = vr_cuda_alloc(&b, bytes, "copy bandwidth destination")) != VR_OK)
        goto done;
    VR_CUDA_GOTO(cudaMemset(a, 1, bytes));
    if ((st = vr_gpu_best_copy_ms(b, a, bytes, cudaMemcpyDeviceToDevice, &best)) == VR_OK)
        *bytes_per_second = best > 0 ? 2.0 * (double)bytes / (best * 1e-3) : 0;
done:
    /* teardown: nothing to act on if these fail, the first error is already recorded */
    cudaFree(a);
    cudaFree(b);
    return st;
}

vr_status vr_gpu_h2d_bandwidth(double *bytes_per_second)
{
    assert(bytes_per_second);
    *bytes_per_second = 0;
    vr_status st = vr_cuda_device_check();
    if (st != VR_OK)
        return st;
    const size_t bytes = (size_t)256 << 20;
    void *host = NULL, *dev = NULL;
    float best = 0;
    if ((st = vr_cuda_alloc(&dev, bytes, "copy rate destination")) != VR_OK)
        goto done;
    VR_CUDA_GOTO(cudaMallocHost(&host, bytes));
    memset(host, 1, bytes);
    if ((st = vr_gpu_best_copy_ms(dev, host, bytes, cudaMemcpyHostToDevice, &best)) == VR_OK)
        *bytes_per_second = best > 0 ? (double)bytes / (best * 1e-3) : 0;
done:
    /* teardown: nothing to act on if these fail, the first error is already recorded */
    cudaFreeHost(host);
    cudaFree(dev);
    return st;
}

/* ---- context ----------------------------------------------------------------------------- */

void vr_geometry_destroy(vr_geometry *g)
{
    if (!g)
        return;
    /* teardown: errors cannot be acted on here, so they are not checked */
    if (g->stream)
        cudaStreamSynchronize(g->stream);
    if (g->vertices_of) /* borrowed */
        g->d_positions = g->d_normals = NULL, g->host.positions = NULL;
    void *const bufs[] = {g->d_indices, g->d_positions, g->d_normals, g->d_batch_starts,
                          g->d_counters, g->d_shade_counts, g->d_temp, g->d_gts_c,
                          g->d_gts_inc, g->d_gts_s, g->d_gts_err, g->d_seeds,
                          g->d_plan_indices, g->d_plan_ids, g->d_plan_starts, g->d_plan_bounds,
                          g->d_keys, g->d_kept, g->d_given_starts, g->d_given_bounds,
                          g->d_tally};
    vr_cuda_free_all(bufs, VR_COUNT_OF(bufs));
    vr_queue_device_free(&g->d_queue);
    vr_queue_device_free(&g->d_stage_queue);
    vr_compact_state_destroy(g->queue_state);
    vr_compact_destroy(g->compact);
    free(g->h_batch_starts);
    if (g->start)
        cudaEventDestroy(g->start);
    if (g->stop)
        cudaEventDestroy(g->stop);
    if (g->stream)
        cudaStreamDestroy(g->stream);
    free(g->host.indices);
    free(g->host.positions);
    free(g);
}

static vr_status vr_geometry_setup(vr_geometry *g, const vr_mesh *m)
{
    const size_t vc = m->vertex_count, ic = m->index_count, tris = ic / 3;
    const int own = !g->vertices_of;
    vr_status st;
    if ((st = vr_cuda_alloc((void **)&g->d_indices, ic * sizeof(uint32_t), "indices")) ||
        (own &&
         (st = vr_cuda_alloc((void **)&g->d_positions, vc * 3 * sizeof(float), "positions"))) ||
        (own &&
         (st = vr_cuda_alloc((void **)&g->d_normals, vc * 3 * sizeof(float), "normals"))) ||
        (st = vr_queue_device_alloc(&g->d_queue, (uint32_t)tris)) ||
        (st = vr_cuda_alloc((void **)&g->d_counters, sizeof(vr_counters), "counters")) ||
        (st = vr_cuda_alloc((void **)&g->d_shade_counts, vc * 4, "shade counts")))
        return st;
    VR_CUDA_CHECK(cudaStreamCreateWithFlags(&g->stream, cudaStreamNonBlocking));
    VR_CUDA_CHECK(cudaEventCreate(&g->start));
    VR_CUDA_CHECK(cudaEventCreate(&g->stop));
    VR_CUDA_CHECK(cudaMemcpy(g->d_indices, m->indices, ic * sizeof(uint32_t), cudaMemcpyHostToDevice));
    g->host.indices = (uint32_t *)malloc((ic + 1) * sizeof(uint32_t));
    if (!g->host.indices)
        return VR_ERROR(VR_ERR_OOM, "host copy of %zu indices", ic);
    memcpy(g->host.indices, m->indices, ic * sizeof(uint32_t));
    g->host.index_count = m->index_count;
    g->host.vertex_count = m->vertex_count;
    g->source_positions = m->positions, g->source_normals = m->normals;
    if (!own) {
        g->d_positions = g->vertices_of->d_positions;
        g->d_normals = g->vertices_of->d_normals;
        g->host.positions = g->vertices_of->host.positions;
        return VR_OK;
    }
    VR_CUDA_CHECK(cudaMemcpy(g->d_positions, m->positions, vc * 3 * sizeof(float), cudaMemcpyHostToDevice));
    VR_CUDA_CHECK(cudaMemcpy(g->d_normals, m->normals, vc * 3 * sizeof(float), cudaMemcpyHostToDevice));
    g->host.positions = (float *)malloc((vc * 3 + 1) * sizeof(float)); /* meshlets need them */
    if (!g->host.positions)
        return VR_ERROR(VR_ERR_OOM, "host copy of %zu positions", vc);
    memcpy(g->host.positions, m->positions, vc * 3 * sizeof(float));
    return VR_OK;
}

static vr_status vr_geometry_make(vr_geometry **out, const vr_mesh *m, const vr_geometry *owner)
{
    assert(out && m);
    *out = NULL;
    vr_status st = vr_cuda_device_check();
    if (st == VR_OK)
        st = vr_mesh_validate(m, "vr_geometry_create");
    if (st != VR_OK)
        return st;
    if (owner && (owner->vertices_of || owner->source_positions != m->positions ||
                  owner->source_normals != m->normals || owner->vertex_count != m->vertex_count))
        return VR_ERROR(VR_ERR_ARG, "vr_geometry_create_sharing: the mesh's %u vertices are not "
                        "the arrays the owner (%u vertices) was made from", m->vertex_count,
                        owner->vertex_count);
    vr_geometry *g = (vr_geometry *)calloc(1, sizeof *g);
    if (!g)
        return VR_ERROR(VR_ERR_OOM, "vr_geometry_create: host context");
    g->vertex_count = m->vertex_count;
    g->index_count = m->index_count;
    g->triangles = m->index_count / 3;
    g->vertices_of = owner;
    st = vr_geometry_setup(g, m);
    if (st != VR_OK) {
        vr_geometry_destroy(g);
        return st;
    }
    *out = g;
    return VR_OK;
}

vr_status vr_geometry_create(vr_geometry **out, const vr_mesh *m)
{
    return vr_geometry_make(out, m, NULL);
}

vr_status vr_geometry_create_sharing(vr_geometry **out, const vr_mesh *m,
                                     const vr_geometry *owner)
{
    assert(owner);
    return vr_geometry_make(out, m, owner);
}

/* Makes d_batch_starts (and the host copy h_batch_starts) hold the dynamic batches for
 * N_u = max_unique and max_indices. */
static vr_status vr_geometry_prepare_batches(vr_geometry *g, uint32_t max_unique,
                                             uint32_t max_indices)
{
    if (g->batch_max_unique == max_unique && g->batch_max_indices == max_indices &&
        g->d_batch_starts)
        return VR_OK;
    uint32_t *starts = NULL, count = 0;
    vr_status st = vr_geometry_dyn_batches(&starts, &count, &g->host, max_unique, max_indices);
    if (st != VR_OK)
        return st;
    free(g->h_batch_starts);
    g->h_batch_starts = starts;
    g->batch_max_unique = 0;
    st = vr_cuda_free((void **)&g->d_batch_starts, "batch starts");
    if (st == VR_OK)
        st = vr_cuda_upload((void **)&g->d_batch_starts, starts, ((size_t)count + 1) * 4,
                            "batch starts");
    if (st == VR_OK) {
        g->batch_count = count;
        g->batch_max_unique = max_unique;
        g->batch_max_indices = max_indices;
    }
    return st;
}

/* Makes d_plan_* hold ops's static plan for N_u = max_unique and max_indices: built on the
 * host from the uploaded mesh, or for patch with the GPU builder on the device from the host
 * indices, with its cluster bounds computed on the host either way (load-time work, never
 * timed), then uploaded. */
static vr_status vr_geometry_prepare_plan(vr_geometry *g, const vr_reuse_ops *ops,
                                          uint32_t max_unique, uint32_t max_indices,
                                          int patch_builder)
{
    if (ops->kind != VR_REUSE_PATCH)
        patch_builder = VR_PATCH_BUILDER_CPU;
    if (g->plan_ops == ops && g->plan_max_unique == max_unique &&
        g->plan_max_indices == max_indices && g->plan_builder == patch_builder)
        return VR_OK;
    vr_batch_plan plan;
    uint32_t *indices = NULL;
    vr_status st;
    if (patch_builder == VR_PATCH_BUILDER_GPU) {
        st = vr_patches_build_gpu(&plan, g->host.indices, g->host.index_count,
                                  g->host.vertex_count, max_unique, max_indices, NULL);
        if (st == VR_OK)
            st = vr_geometry_plan_finish(&plan, &indices, &g->host, "patch");
    } else {
        st = vr_geometry_plan(&plan, &indices, ops, &g->host, max_unique, max_indices,
                              patch_builder);
    }
    if (st != VR_OK)
        return st;
    g->plan_ops = NULL;
    void **bufs[] = {(void **)&g->d_plan_indices, (void **)&g->d_plan_ids,
                     (void **)&g->d_plan_starts, (void **)&g->d_plan_bounds};
    for (size_t k = 0; k < sizeof bufs / sizeof bufs[0] && st == VR_OK; ++k)
        st = vr_cuda_free(bufs[k], "static plan");
    if (st == VR_OK)
        st = vr_cuda_upload((void **)&g->d_plan_indices, indices, (size_t)g->index_count * 4,
                            "plan-ordered indices");
    if (st == VR_OK)
        st = vr_cuda_upload((void **)&g->d_plan_ids, plan.tri_order, (size_t)g->triangles * 4,
                            "plan triangle ids");
    if (st == VR_OK)
        st = vr_cuda_upload((void **)&g->d_plan_starts, plan.starts,
                            ((size_t)plan.batch_count + 1) * 4, "plan batch starts");
    if (st == VR_OK)
        st = vr_cuda_upload((void **)&g->d_plan_bounds, plan.bounds,
                            (size_t)plan.batch_count * sizeof *plan.bounds, "plan cluster bounds");
    if (st == VR_OK) {
        g->plan_ops = ops;
        g->plan_max_unique = max_unique;
        g->plan_max_indices = max_indices;
        g->plan_builder = patch_builder;
        g->plan_batch_count = plan.batch_count;
    }
    free(indices);
    vr_batch_plan_free(&plan);
    return st;
}

extern "C" vr_status vr_geometry_plan_batch_ids(vr_geometry *g, const vr_reuse_ops *ops,
                                               const vr_reuse_params *cfg, uint32_t *ids,
                                               uint32_t *batch_count)
{
    assert(g && ops && cfg && ids && batch_count);
    *batch_count = 0;
    if (!ops->plan)
        return VR_ERROR(VR_ERR_ARG, "%s has no static plan", ops->name);
    vr_status st = vr_geometry_prepare_plan(g, ops, cfg->max_unique, cfg->max_indices,
                                            cfg->patch_builder);
    if (st != VR_OK)
        return st;
    const uint32_t n = g->plan_batch_count;
    uint32_t *starts = (uint32_t *)malloc(((size_t)n + 1) * 4);
    uint32_t *order = (uint32_t *)malloc(((size_t)g->triangles + 1) * 4);
    if (!starts || !order) {
        free(starts);
        free(order);
        return VR_ERROR(VR_ERR_OOM, "%s: batch ids of %u triangles", ops->name, g->triangles);
    }
    cudaError_t e = cudaMemcpy(starts, g->d_plan_starts, ((size_t)n + 1) * 4,
                               cudaMemcpyDeviceToHost);
    if (e == cudaSuccess && g->triangles)
        e = cudaMemcpy(order, g->d_plan_ids, (size_t)g->triangles * 4, cudaMemcpyDeviceToHost);
    if (e != cudaSuccess)
        st = VR_ERROR(VR_ERR_CUDA, "%s: downloading the plan's batches: %s", ops->name,
                      cudaGetErrorString(e));
    if (st == VR_OK) {
        vr_batch_plan view; /* the downloaded plan's order and starts */
        memset(&view, 0, sizeof view);
        view.tri_order = order, view.starts = starts;
        view.triangle_count = g->triangles, view.batch_count = n;
        vr_batch_plan_tri_batches(ids, &view);
        *batch_count = n;
    }
    free(starts);
    free(order);
    return st;
}

/* Makes d_seeds hold one seed per current dynamic batch, computed on the host from the batch
 * starts vr_geometry_prepare_batches made. */
static vr_status vr_geometry_prepare_seeds(vr_geometry *g)
{
    if (g->seed_max_unique == g->batch_max_unique && g->seed_max_indices == g->batch_max_indices &&
        g->d_seeds)
        return VR_OK;
    const uint32_t count = g->batch_count;
    vr_gts_seed *seeds = (vr_gts_seed *)malloc(((size_t)count + 1) * sizeof *seeds);
    vr_status st = seeds ? VR_OK : VR_ERROR(VR_ERR_OOM, "seeds for %u batches", count);
    if (st == VR_OK)
        st = vr_gts_batch_seeds_from_index_starts(seeds, g->gts, g->h_batch_starts, count);
    g->seed_max_unique = 0;
    const vr_status freed = vr_cuda_free((void **)&g->d_seeds, "seeds");
    if (st == VR_OK)
        st = freed;
    if (st == VR_OK)
        st = vr_cuda_upload((void **)&g->d_seeds, seeds, (size_t)count * sizeof *seeds, "seeds");
    free(seeds);
    if (st == VR_OK) {
        g->seed_max_unique = g->batch_max_unique;
        g->seed_max_indices = g->batch_max_indices;
        g->gts_src.seeds = g->d_seeds;
    }
    return st;
}

vr_status vr_geometry_set_gts(vr_geometry *g, const vr_gts *gts)
{
    assert(g);
    VR_CUDA_CHECK(cudaStreamSynchronize(g->stream));
    g->seed_max_unique = g->seed_max_indices = 0;
    g->gts = NULL;
    memset(&g->gts_src, 0, sizeof g->gts_src);
    /* every buffer goes (and is NULL afterwards) even when one cudaFree fails; the first
     * failure is returned */
    uint32_t **bufs[] = {&g->d_gts_c, &g->d_gts_inc, &g->d_gts_s, &g->d_gts_err};
    vr_status st = VR_OK;
    for (size_t k = 0; k < sizeof bufs / sizeof bufs[0]; ++k) {
        const vr_status freed = vr_cuda_free((void **)bufs[k], "compressed input");
        if (st == VR_OK)
            st = freed;
    }
    const vr_status freed = vr_cuda_free((void **)&g->d_seeds, "seeds");
    if (st == VR_OK)
        st = freed;
    if (st != VR_OK || !gts)
        return st;
    st = vr_gts_validate(gts, "vr_geometry_set_gts");
    if (st != VR_OK)
        return st;
    if ((uint64_t)gts->strip_triangle_count * 3 != g->index_count ||
        gts->vertex_count != g->vertex_count)
        return VR_ERROR(VR_ERR_ARG, "vr_geometry_set_gts: the stream has %u strip triangles and "
                        "%u vertices, the uploaded mesh %u triangles and %u vertices",
                        gts->strip_triangle_count, gts->vertex_count, g->triangles,
                        g->vertex_count);
    vr_gts_batch_source_host(&g->gts_src, gts);
    if ((st = vr_cuda_upload((void **)&g->d_gts_c, gts->c, 4 * (size_t)g->gts_src.c_words,
                             "GTS strip codes")) ||
        (st = vr_cuda_upload((void **)&g->d_gts_inc, gts->inc, 4 * (size_t)g->gts_src.inc_words,
                             "GTS INC")) ||
        (st = vr_cuda_upload((void **)&g->d_gts_s, gts->s, 4 * (size_t)gts->s_count,
                             "GTS Simple-9 words")) ||
        (st = vr_cuda_upload((void **)&g->d_gts_err, NULL, 4, "GTS error word"))) {
        /* error path: drops the partial upload; a failure there would hide the one reported */
        vr_geometry_set_gts(g, NULL);
        return st;
    }
    g->gts_src.c = g->d_gts_c;
    g->gts_src.inc = g->d_gts_inc;
    g->gts_src.s = g->d_gts_s;
    g->gts_src.err = g->d_gts_err;
    g->gts = gts;
    return VR_OK;
}

const vr_gts_batch_source *vr_geometry_gts_source(const vr_geometry *g)
{
    return g && g->gts ? &g->gts_src : NULL;
}

/* 0xFF bytes in the first `tris` slots of q: a slot nobody wrote reads NaN / ~0. */
static vr_status vr_queue_poison(const vr_queue *q, size_t tris, cudaStream_t stream)
{
    VR_CUDA_CHECK(cudaMemsetAsync(q->clip, 0xff, tris * VR_QUEUE_CLIP_FLOATS * sizeof(float), stream));
    VR_CUDA_CHECK(cudaMemsetAsync(q->normal, 0xff, tris * VR_QUEUE_NORMAL_FLOATS * sizeof(float), stream));
    VR_CUDA_CHECK(cudaMemsetAsync(q->vertex, 0xff, tris * VR_QUEUE_VERTEX_IDS * sizeof(uint32_t), stream));
    VR_CUDA_CHECK(cudaMemsetAsync(q->tri_id, 0xff, tris * 4, stream));
    return VR_OK;
}

/* ---- cub and hp queues: compaction in a pass of its own ------------------------------------- */

/* The buffers of a keyed run, on first use: about 112 + 8 bytes per triangle plus the
 * compaction context's (vr_compact_temp_bytes). */
static vr_status vr_geometry_prepare_keyed(vr_geometry *g)
{
    if (g->compact)
        return VR_OK;
    vr_status st = vr_queue_device_alloc(&g->d_stage_queue, g->triangles);
    if (st == VR_OK)
        st = vr_cuda_alloc((void **)&g->d_keys, (size_t)g->triangles * 4, "queue keys");
    if (st == VR_OK)
        st = vr_cuda_alloc((void **)&g->d_kept, (size_t)g->triangles * 4, "kept triangle ids");
    if (st == VR_OK)
        st = vr_compact_create(&g->compact, g->triangles);
    return st; /* what was allocated is freed by vr_geometry_destroy */
}

/* Slot i < *count of `out` = slot kept[i] of `in`, one thread per corner (3 * count of them;
 * grid-stride over the capacity, so the host needs no count): consecutive threads write
 * consecutive float4 of clip and normal and consecutive vertex ids, and read runs of them
 * (kept ids increase); thread 0 stores the count as queue_count. */
__global__ void vr_queue_gather_kernel(vr_queue out, vr_queue in, const uint32_t *kept,
                                       const uint32_t *count, vr_counters *counters)
{
    const uint32_t n = *count;
    if (blockIdx.x == 0 && threadIdx.x == 0)
        counters->queue_count = n;
    const float4 *in_clip = reinterpret_cast<const float4 *>(in.clip);
    const float4 *in_normal = reinterpret_cast<const float4 *>(in.normal);
    float4 *out_clip = reinterpret_cast<float4 *>(out.clip);
    float4 *out_normal = reinterpret_cast<float4 *>(out.normal);
    const size_t corners = 3 * (size_t)n;
    for (size_t e = blockIdx.x * (size_t)blockDim.x + threadIdx.x; e < corners;
         e += (size_t)gridDim.x * blockDim.x) {
        const size_t i = e / 3, k = e - 3 * i;
        const size_t from = 3 * (size_t)__ldg(kept + i) + k;
        out_clip[e] = __ldg(in_clip + from);
        out_normal[e] = __ldg(in_normal + from);
        out.vertex[e] = __ldg(in.vertex + from);
        if (k == 0)
            out.tri_id[i] = __ldg(in.tri_id + from / 3);
    }
}

/* After the batcher of a keyed run: the kept ids by the mode's compaction, then the gather
 * into the queue, all enqueued on g->stream. */
static vr_status vr_geometry_compact_keyed(vr_geometry *g, vr_queue_mode mode)
{
    const uint32_t *d_count = NULL;
    vr_status st = vr_compact_select_async(g->compact,
                                           mode == VR_QUEUE_HP ? VR_COMPACT_HP : VR_COMPACT_CUB_IF,
                                           g->d_kept, g->d_keys, g->triangles,
                                           VR_QUEUE_KEY_DROPPED, g->stream, &d_count);
    if (st != VR_OK)
        return st;
    const uint32_t block = 256;
    const uint32_t blocks = (uint32_t)((3 * (uint64_t)g->triangles + block - 1) / block);
    vr_queue_gather_kernel<<<blocks ? blocks : 1, block, 0, g->stream>>>(
        g->d_queue, g->d_stage_queue, g->d_kept, d_count, g->d_counters);
    VR_LAUNCH_CHECK("vr_queue_gather_kernel", g->stream);
    return VR_OK;
}

/* ---- the strategy's vertex stage: the general reuse API or the strategy's own kernels --------
 * The renderer is one user of the general reuse API (issue 13): vr_render_program_run runs the
 * strategy's batching with a render program - the same queue byte for byte (the atomic queue:
 * the same triangles), the same counts (gpu/render-program, and every GPU == twin check). It
 * takes runs on an index buffer without culling or with culling (atomic, keyed, or ink and
 * collate as an ordered program), without cluster culling (vr_render_program_takes), where the
 * program's shared memory fits (vr_render_program_fits: the warp program's stash). By default
 * the stage sends it those at par with or faster than the own kernels on the H100
 * (bench/results/render-api-h100-*.csv):
 * - unculled with the warp-staged store (the default), naive to multi: 0.943-1.021x the own
 *   kernels, all 24 cases, four runs (above 1.02 only sphere heavy hash and simple phash, once
 *   each);
 * - culled into cub or hp (staged store), naive to multi: 0.98-1.02x but for one row in each
 *   of two runs (1.08 and 1.04, neither repeated);
 * - culled into ink or collate (vr_render_program_ordered) with warp, hash and phash (session
 *   24, both 7M meshes, both loads, two runs): warp 0.85-0.96x (it stashes the kept triangles'
 *   corners per warp), hash 0.94-1.00x, phash 0.92-0.99x (they rank once and store without
 *   barriers; the own kernels rank twice); with sort (ink 0.955-0.991x, collate 0.91-0.96x:
 *   its ordered kernel at 48 registers, as the own one) and patch (ink 0.96-0.99x, collate
 *   0.92-0.96x), and meshlet into collate (0.955-0.963x) (session 25, one run);
 * - culled into ink where the ordered program runs as persistent blocks (a cheap shader):
 *   meshlet 0.75x its own kernel (session 27), multi 0.76x at simple load and 0.80x at light,
 *   naive 0.78x at simple load (session 29; vr_geometry_ink_persistent); warp (always through
 *   the API into ink) 0.90x a block per batch at simple load, 0.93-0.95x at light (session 30).
 * The rest keeps the strategy's own kernels (ops->run):
 * - the direct store: its program runs 1.02-1.65x the own direct store at simple load (warp
 *   1.60, multi 1.50), 1.06-1.49x as a converged program;
 * - the atomic queue: 1.02-1.06x for naive, warp and hash at simple load;
 * - collate with naive (1.00-1.04x) and multi (1.00-1.02x); ink with naive, multi and meshlet
 *   where the API would run a block per batch (naive, multi 1.00-1.04x, meshlet 0.97-1.05x:
 *   slower at simple load), that is above the cheap shader's load
 *   (VR_RENDER_PROGRAM_CHEAP_STEPS) or with VR_PROG_INK=blocks, and naive above the simple
 *   load (its persistent kernel 1.05x its own at light);
 * - patch and meshlet unculled (1.010-1.031x) and culled into cub or hp (1.03-1.04x at simple
 *   load, 1.00 at heavy) (session 25);
 * - cluster culling and compressed input: not programs; a plan's parts without source ids
 *   (given batches, streamed chunks: the mesh is already in plan order): the API's contract
 *   does not take them.
 * VR_GEOMETRY_KERNELS=own selects the own kernels everywhere, =api the API wherever it takes
 * the run (the direct store and the atomic queue too), for A/B runs and their tests; unset or
 * empty, the default; any other value fails the run (vr_geometry_check_run). */
/* Whether the ordered render program's ink runs as persistent blocks for p (the shader cheap,
 * or VR_PROG_INK): meshlet culled into ink goes through the API only then (0.75x its own
 * kernel; a block per batch 0.97-1.05x, slower at simple load; bench/results/apps-h100.md,
 * sessions 25 and 27; into collate always, 0.955-0.963x), and so does multi (0.76x at simple
 * load, 0.80x at light; a block per tile through the API 1.00-1.02x its own kernel), naive
 * with the simple shader only (0.78x; at light load 1.05x: its persistent kernel holds 4
 * blocks of 256 per SM, 64 registers, and the light shader wants the occupancy) (H100,
 * sphere:7M, session 29) */
static int vr_geometry_ink_persistent(const vr_reuse_params *p)
{
    int persistent = 0;
    return p->queue_mode == VR_QUEUE_INK &&
           vr_render_program_ink_persistent(p, &persistent) == VR_OK && persistent;
}

static int vr_geometry_via_api(const vr_reuse_ops *ops, const vr_reuse_params *p)
{
    const char *env = getenv("VR_GEOMETRY_KERNELS"); /* per run: tests switch it */
    if (env && !strcmp(env, "own"))
        return 0;
    const int takes = vr_render_program_takes(p) && !(ops->plan && !p->tri_ids) &&
                      vr_render_program_fits(ops->kind, p);
    if (env && !strcmp(env, "api"))
        return takes;
    if (vr_queue_blockwise(p)) /* ink, collate: the ordered program where it was faster in
                                  every row measured (H100, bench/results/apps-h100.md) */
        return takes && (ops->kind == VR_REUSE_WARP || ops->kind == VR_REUSE_HASH ||
                         ops->kind == VR_REUSE_PHASH || ops->kind == VR_REUSE_SORT ||
                         ops->kind == VR_REUSE_PATCH ||
                         (ops->kind == VR_REUSE_MESHLET && p->queue_mode == VR_QUEUE_COLLATE) ||
                         ((ops->kind == VR_REUSE_MESHLET || ops->kind == VR_REUSE_MULTI ||
                           (ops->kind == VR_REUSE_NAIVE && p->shader.loop_iterations == 0)) &&
                          vr_geometry_ink_persistent(p)));
    if (ops->plan) /* patch, meshlet unculled 1.01-1.03x, into cub, hp 1.03-1.04x (simple) */
        return 0;
    return takes && p->queue_store && !(p->cull && p->queue_mode == VR_QUEUE_ATOMIC);
}

static size_t vr_geometry_temp_bytes(const vr_reuse_ops *ops, const vr_reuse_params *p)
{
    return vr_geometry_via_api(ops, p) ? vr_render_program_temp_bytes(ops->kind, p)
                                  : ops->temp_bytes(p);
}

static vr_status vr_geometry_stage(const vr_reuse_ops *ops, const vr_reuse_params *p)
{
    return vr_geometry_via_api(ops, p) ? vr_render_program_run(ops->kind, p) : ops->run(p);
}

/* Points p->temp at a workspace of vr_geometry_temp_bytes(ops, p) bytes (grown after `stream`
 * drained, so no kernel still reads the old one); *bytes (may be NULL) gets the size. */
static vr_status vr_geometry_temp(vr_geometry *g, const vr_reuse_ops *ops, vr_reuse_params *p,
                                  cudaStream_t stream, size_t *bytes)
{
    p->temp = NULL;
    const size_t temp_bytes = vr_geometry_temp_bytes(ops, p);
    if (temp_bytes > g->temp_capacity) {
        VR_CUDA_CHECK(cudaStreamSynchronize(stream));
        g->temp_capacity = 0;
        vr_status st = vr_cuda_free(&g->d_temp, "strategy workspace");
        if (st == VR_OK)
            st = vr_cuda_alloc(&g->d_temp, temp_bytes, "strategy workspace");
        if (st != VR_OK)
            return st;
        g->temp_capacity = temp_bytes;
    }
    if (temp_bytes)
        p->temp = g->d_temp;
    if (bytes)
        *bytes = temp_bytes;
    return VR_OK;
}

/* What every run checks first: a GPU path, a known queue_store, a known VR_GEOMETRY_KERNELS and
 * VR_PROG_INK (a typo in an A/B run would otherwise measure the default twice). */
static vr_status vr_geometry_check_run(const vr_reuse_ops *ops, const vr_reuse_params *cfg)
{
    if (!ops->run)
        return VR_ERROR(VR_ERR_NO_DEVICE, "%s: no GPU path in this build", ops->name);
    if (cfg->queue_store != 0 && cfg->queue_store != 1)
        return VR_ERROR(VR_ERR_ARG, "%s: queue_store %d must be 0 (direct) or 1 (warp-staged)",
                        ops->name, cfg->queue_store);
    const char *env = getenv("VR_GEOMETRY_KERNELS");
    if (env && *env && strcmp(env, "own") && strcmp(env, "api"))
        return VR_ERROR(VR_ERR_ARG, "VR_GEOMETRY_KERNELS=%s: expected own or api (or unset: the "
                        "default routing)", env);
    int persistent; /* and VR_PROG_INK, which the routing reads too */
    return vr_render_program_ink_persistent(cfg, &persistent);
}

/* What vr_geometry_run_setup leaves for a run's launches. */
typedef struct vr_geometry_launch {
    vr_reuse_params p; /* the kernels' parameters */
    int blockwise;     /* culling into an ink or collate queue (vr_queue_blockwise) */
    int keyed;         /* culling into a cub or hp queue (vr_queue_keyed) */
    size_t temp_bytes; /* the strategy's workspace */
} vr_geometry_launch;

/* Everything a run needs before its first launch: the checks, the lazily built batches, plan,
 * seeds, queue state and workspace (uploads and allocations that wait for the host), and the
 * kernels' parameters (on the context's stream). */
static vr_status vr_geometry_run_setup(vr_geometry *g, const vr_reuse_ops *ops,
                                       const vr_reuse_params *cfg, vr_geometry_launch *out)
{
    if (g->bounded)
        return VR_ERROR(VR_ERR_ARG, "%s: a bounded geometry context has no mesh of its own; "
                        "run chunks with vr_geometry_run_chunk", ops->name);
    vr_status checked = vr_geometry_check_run(ops, cfg);
    if (checked != VR_OK)
        return checked;
    vr_reuse_params p = vr_reuse_params_input(
        cfg, g->d_external_indices ? g->d_external_indices : g->d_indices, g->index_count,
        g->d_positions, g->d_normals, g->vertex_count);
    p.replay = 0; /* only vr_geometry_enqueue replays */
    if (g->d_given_starts && (ops->dynamic || ops->plan)) {
        if (g->gts)
            return VR_ERROR(VR_ERR_ARG, "%s: given batches and compressed input do not go "
                            "together (the seeds belong to the computed batches)", ops->name);
        p.batch_starts = g->d_given_starts; /* a plan's part: the mesh is in plan order */
        p.batch_count = g->given_count;
        p.cluster_bounds = ops->plan ? g->d_given_bounds : NULL;
    } else if (ops->dynamic) {
        vr_status st = vr_geometry_prepare_batches(g, cfg->max_unique, cfg->max_indices);
        if (st != VR_OK)
            return st;
        p.batch_starts = g->d_batch_starts;
        p.batch_count = g->batch_count;
    } else if (ops->plan) {
        if (g->d_external_indices)
            return VR_ERROR(VR_ERR_ARG, "%s reads its own plan-ordered copy of the uploaded "
                            "indices, not device indices set with "
                            "vr_geometry_set_device_indices (set NULL first)", ops->name);
        vr_status st = vr_geometry_prepare_plan(g, ops, cfg->max_unique, cfg->max_indices,
                                                cfg->patch_builder);
        if (st != VR_OK)
            return st;
        p.indices = g->d_plan_indices;
        p.tri_ids = g->d_plan_ids;
        p.cluster_bounds = g->d_plan_bounds;
        p.batch_starts = g->d_plan_starts;
        p.batch_count = g->plan_batch_count;
    }
    p.gts = NULL;
    if (g->gts) {
        if (!ops->gts_input || !ops->dynamic)
            return VR_ERROR(VR_ERR_ARG, "%s cannot decode compressed batches (only hash can); "
                            "switch compressed input off with vr_geometry_set_gts(g, NULL)",
                            ops->name);
        vr_status st = vr_geometry_prepare_seeds(g);
        if (st != VR_OK)
            return st;
        p.indices = NULL; /* the explicit index buffer is not read */
        p.gts = &g->gts_src;
        VR_CUDA_CHECK(cudaMemsetAsync(g->d_gts_err, 0, 4, g->stream));
    }
    p.queue = g->d_queue;
    p.counters = g->d_counters;
    p.shade_counts = g->d_shade_counts;
    p.stream = g->stream;
    const int blockwise = vr_queue_blockwise(&p) && g->triangles > 0;
    if (blockwise && !g->queue_state) {
        vr_status st = vr_compact_state_create(&g->queue_state, g->triangles, g->stream);
        if (st != VR_OK)
            return st;
    }
    p.queue_state = g->queue_state;
    const int keyed = vr_queue_keyed(&p) && g->triangles > 0;
    if (keyed) {
        vr_status st = vr_geometry_prepare_keyed(g);
        if (st != VR_OK)
            return st;
        p.queue = g->d_stage_queue;
        p.queue_keys = g->d_keys;
    }
    size_t temp_bytes = 0;
    {
        vr_status st = vr_geometry_temp(g, ops, &p, g->stream, &temp_bytes);
        if (st != VR_OK)
            return st;
    }
    out->p = p;
    out->blockwise = blockwise;
    out->keyed = keyed;
    out->temp_bytes = temp_bytes;
    return VR_OK;
}

/* Every run starts from zero counters and shade counts. */
static vr_status vr_geometry_clear_counts(vr_geometry *g, cudaStream_t s)
{
    VR_CUDA_CHECK(cudaMemsetAsync(g->d_counters, 0, sizeof(vr_counters), s));
    VR_CUDA_CHECK(cudaMemsetAsync(g->d_shade_counts, 0, (size_t)g->vertex_count * 4, s));
    return VR_OK;
}

vr_status vr_geometry_prepare(vr_geometry *g, const vr_reuse_ops *ops, const vr_reuse_params *cfg)
{
    assert(g && ops && cfg);
    vr_geometry_launch l;
    vr_status st = vr_geometry_run_setup(g, ops, cfg, &l);
    if (st != VR_OK)
        return st;
    /* the setup's uploads and clears are done before a capture begins */
    return vr_cuda_status(cudaStreamSynchronize(g->stream), VR_CUDA_WHERE,
                          "cudaStreamSynchronize after preparing a run");
}

vr_status vr_geometry_enqueue(vr_geometry *g, const vr_reuse_ops *ops, const vr_reuse_params *cfg,
                              void *stream)
{
    assert(g && ops && cfg);
    vr_geometry_launch l;
    vr_status st = vr_geometry_run_setup(g, ops, cfg, &l);
    if (st != VR_OK)
        return st;
    /* these report through the host after the kernels (error words, the hand-off's result) */
    if (l.p.gts || l.blockwise || l.keyed)
        return VR_ERROR(VR_ERR_ARG, "%s: a run that is checked on the host afterwards "
                        "(compressed input, culling into an ink, collate, cub or hp queue) "
                        "cannot be enqueued without a wait; use vr_geometry_run", ops->name);
    cudaStream_t s = stream ? (cudaStream_t)stream : g->stream;
    l.p.stream = s;
    /* uncounted and unculled, nothing reads the counters afterwards: the counted run that
     * precedes a graph (raster/render.c) checked these batches, so no clears and no fold */
    l.p.replay = !l.p.count && !l.p.cull;
    if (!l.p.replay && (st = vr_geometry_clear_counts(g, s)) != VR_OK)
        return st;
    return vr_geometry_stage(ops, &l.p);
}

vr_status vr_geometry_run(vr_geometry *g, const vr_reuse_ops *ops, const vr_reuse_params *cfg,
                          int poison, float *ms)
{
    assert(g && ops && cfg);
    if (ms)
        *ms = 0;
    vr_geometry_launch l;
    vr_status st = vr_geometry_run_setup(g, ops, cfg, &l);
    if (st == VR_OK)
        st = vr_geometry_clear_counts(g, g->stream);
    if (st != VR_OK)
        return st;
    vr_reuse_params p = l.p;
    const int blockwise = l.blockwise, keyed = l.keyed;
    const size_t temp_bytes = l.temp_bytes;
    const size_t tris = g->triangles;
    if (poison) {
        if ((st = vr_queue_poison(&g->d_queue, tris, g->stream)) != VR_OK ||
            (keyed && (st = vr_queue_poison(&g->d_stage_queue, tris, g->stream)) != VR_OK))
            return st;
        if (temp_bytes)
            VR_CUDA_CHECK(cudaMemsetAsync(g->d_temp, 0xff, temp_bytes, g->stream));
        if (keyed) /* an unwritten key reads as culled: the comparison then misses a triangle */
            VR_CUDA_CHECK(cudaMemsetAsync(g->d_keys, 0xff, tris * 4, g->stream));
    }
    VR_CUDA_CHECK(cudaEventRecord(g->start, g->stream));
    st = vr_geometry_stage(ops, &p);
    if (st == VR_OK && keyed)
        st = vr_geometry_compact_keyed(g, p.queue_mode);
    VR_CUDA_CHECK(cudaEventRecord(g->stop, g->stream));
    if (st != VR_OK) {
        /* error path: waits for what the strategy queued; its own message names the failing
         * call, so the wait's result is not reported over it */
        cudaEventSynchronize(g->stop);
        return st;
    }
    /* a kernel fault surfaces here: the message names the strategy (and, without
     * VR_SYNC_CHECK, hints at rebuilding with it to find the kernel) */
    char what[96];
    snprintf(what, sizeof what, "cudaEventSynchronize after the %s kernels", ops->name);
    if ((st = vr_cuda_status(cudaEventSynchronize(g->stop), VR_CUDA_WHERE, what)) != VR_OK)
        return st;
    if (ms)
        VR_CUDA_CHECK(cudaEventElapsedTime(ms, g->start, g->stop));
    if (blockwise) { /* a block that waited too long for its predecessors ends in an error */
        uint32_t kept = 0;
        if ((st = vr_compact_state_result(g->queue_state, &kept)) != VR_OK)
            return VR_ERROR(st, "%s: %s queue: %s", ops->name, vr_queue_mode_names[p.queue_mode],
                            vr_last_error());
    }
    if (p.gts) {
        uint32_t err = 0;
        VR_CUDA_CHECK(cudaMemcpy(&err, g->d_gts_err, 4, cudaMemcpyDeviceToHost));
        if (err)
            return VR_ERROR(VR_ERR_FORMAT, "%s: compressed input is malformed (error bits 0x%x): "
                            "%s", ops->name, err, vr_gts_error_text(err));
    }
    return VR_OK;
}

vr_status vr_geometry_set_batches(vr_geometry *g, const vr_batches_given *given)
{
    assert(g);
    VR_CUDA_CHECK(cudaStreamSynchronize(g->stream)); /* no run reads the old ones any more */
    vr_status st = vr_cuda_free((void **)&g->d_given_starts, "given batch starts");
    if (st == VR_OK)
        st = vr_cuda_free((void **)&g->d_given_bounds, "given cluster bounds");
    g->given_count = 0;
    if (st != VR_OK || !given)
        return st;
    assert(given->starts);
    if (given->starts[0] != 0 || given->starts[given->count] != g->index_count)
        return VR_ERROR(VR_ERR_ARG, "given batches span indices %u..%u, the mesh has %u",
                        given->starts[0], given->starts[given->count], g->index_count);
    st = vr_cuda_upload((void **)&g->d_given_starts, given->starts,
                        ((size_t)given->count + 1) * 4, "given batch starts");
    if (st == VR_OK && given->bounds && given->count)
        st = vr_cuda_upload((void **)&g->d_given_bounds, given->bounds,
                            (size_t)given->count * sizeof *given->bounds, "given cluster bounds");
    if (st == VR_OK)
        g->given_count = given->count;
    return st;
}

void vr_geometry_set_device_indices(vr_geometry *g, const uint32_t *d_indices)
{
    assert(g);
    g->d_external_indices = d_indices;
}

vr_status vr_geometry_download(const vr_geometry *g, vr_geometry_result *out)
{
    assert(g && out);
    assert(out->triangles == g->triangles && out->vertex_count == g->vertex_count);
    const size_t tris = g->triangles;
    VR_CUDA_CHECK(cudaStreamSynchronize(g->stream));
    VR_CUDA_CHECK(cudaMemcpy(out->queue.clip, g->d_queue.clip, tris * VR_QUEUE_CLIP_FLOATS * sizeof(float), cudaMemcpyDeviceToHost));
    VR_CUDA_CHECK(cudaMemcpy(out->queue.normal, g->d_queue.normal, tris * VR_QUEUE_NORMAL_FLOATS * sizeof(float),
                             cudaMemcpyDeviceToHost));
    VR_CUDA_CHECK(cudaMemcpy(out->queue.vertex, g->d_queue.vertex, tris * VR_QUEUE_VERTEX_IDS * sizeof(uint32_t),
                             cudaMemcpyDeviceToHost));
    VR_CUDA_CHECK(cudaMemcpy(out->queue.tri_id, g->d_queue.tri_id, tris * 4,
                             cudaMemcpyDeviceToHost));
    VR_CUDA_CHECK(cudaMemcpy(&out->counters, g->d_counters, sizeof(vr_counters),
                             cudaMemcpyDeviceToHost));
    VR_CUDA_CHECK(cudaMemcpy(out->shade_counts, g->d_shade_counts, (size_t)g->vertex_count * 4,
                             cudaMemcpyDeviceToHost));
    return VR_OK;
}

const vr_queue *vr_geometry_device_queue(const vr_geometry *g)
{
    return g ? &g->d_queue : NULL;
}

const uint32_t *vr_geometry_device_shade_counts(const vr_geometry *g)
{
    return g ? g->d_shade_counts : NULL;
}

/* ---- bounded contexts: chunks of a larger stream ------------------------------------------- */

vr_status vr_geometry_create_bounded(vr_geometry **out, uint32_t max_triangles)
{
    assert(out);
    *out = NULL;
    vr_status st = vr_cuda_device_check();
    if (st != VR_OK)
        return st;
    if (max_triangles == 0)
        return VR_ERROR(VR_ERR_ARG, "a bounded geometry context of 0 triangles");
    vr_geometry *g = (vr_geometry *)calloc(1, sizeof *g);
    if (!g)
        return VR_ERROR(VR_ERR_OOM, "vr_geometry_create_bounded: host context");
    g->bounded = 1;
    g->triangles = max_triangles;
    g->index_count = 3 * max_triangles;
    if ((st = vr_queue_device_alloc(&g->d_queue, max_triangles)) != VR_OK ||
        (st = vr_cuda_alloc((void **)&g->d_counters, sizeof(vr_counters), "counters")) != VR_OK ||
        (st = vr_cuda_alloc((void **)&g->d_tally, sizeof(vr_geometry_tally), "chunk tally")) !=
            VR_OK ||
        (st = vr_cuda_status(cudaStreamCreateWithFlags(&g->stream, cudaStreamNonBlocking),
                             VR_CUDA_WHERE, "cudaStreamCreateWithFlags")) != VR_OK ||
        (st = vr_cuda_status(cudaMemset(g->d_tally, 0, sizeof(vr_geometry_tally)),
                             VR_CUDA_WHERE, "cudaMemset of the chunk tally")) != VR_OK) {
        vr_geometry_destroy(g);
        return st;
    }
    *out = g;
    return VR_OK;
}

/* One thread: the chunk's counters into the running totals; a chunk whose batches broke their
 * limits (overflow) or, in a counted run, that did not write each of its `triangles` slots once
 * (queue_count, kept only when counting) is counted as bad. */
__global__ void vr_geometry_tally_kernel(vr_geometry_tally *t, const vr_counters *c,
                                         uint32_t triangles, int counted)
{
    t->invocations += c->invocations;
    t->triangles += c->queue_count;
    t->chunks += 1;
    if ((counted && c->queue_count != triangles) || c->overflow != 0)
        t->bad_chunks += 1;
}

vr_status vr_geometry_run_chunk(vr_geometry *g, const vr_reuse_ops *ops,
                                const vr_reuse_params *cfg, const vr_geometry_chunk *c,
                                void *stream)
{
    assert(g && ops && cfg && c);
    if (!g->bounded)
        return VR_ERROR(VR_ERR_ARG, "%s: chunks run on a bounded geometry context "
                        "(vr_geometry_create_bounded)", ops->name);
    vr_status st = vr_geometry_check_run(ops, cfg);
    if (st != VR_OK)
        return st;
    if (c->triangles > g->triangles)
        return VR_ERROR(VR_ERR_ARG, "%s: a chunk of %u triangles, the queue holds %u", ops->name,
                        c->triangles, g->triangles);
    if (ops->kind == VR_REUSE_MULTI)
        return VR_ERROR(VR_ERR_ARG, "multi cannot run in chunks: it shades the whole vertex "
                        "buffer before it assembles");
    if ((ops->dynamic || ops->plan) && !c->d_starts)
        return VR_ERROR(VR_ERR_ARG, "%s: a chunk needs its batch starts", ops->name);
    cudaStream_t s = stream ? (cudaStream_t)stream : g->stream;
    vr_reuse_params p = vr_reuse_params_input(cfg, c->d_indices, 3 * c->triangles,
                                              c->d_positions, c->d_normals, c->vertex_count);
    if (ops->dynamic || ops->plan) {
        p.batch_starts = c->d_starts; /* a plan's chunk is already in plan order: tri_ids NULL */
        p.batch_count = c->batch_count;
        p.cluster_bounds = ops->plan ? c->d_bounds : NULL;
    }
    if (vr_queue_blockwise(&p) || vr_queue_keyed(&p))
        return VR_ERROR(VR_ERR_ARG, "%s: culling into a %s queue is not run in chunks (the "
                        "streamed renderer culls in the rasterizer)", ops->name,
                        vr_queue_mode_names[p.queue_mode]);
    vr_gts_batch_source src; /* the caller's, its errors into the tally (read once per frame) */
    p.gts = NULL;
    if (c->gts) {
        if (!ops->gts_input || !ops->dynamic)
            return VR_ERROR(VR_ERR_ARG, "%s cannot decode compressed batches (only hash can)",
                            ops->name);
        src = *c->gts;
        src.err = &g->d_tally->gts_err;
        p.gts = &src;
        p.indices = NULL; /* no index buffer is read */
    }
    p.queue = g->d_queue;
    p.counters = g->d_counters;
    p.shade_counts = NULL; /* per-vertex counts would be scene-sized; invocations are counted */
    p.stream = s;
    if ((st = vr_geometry_temp(g, ops, &p, s, NULL)) != VR_OK)
        return st;
    VR_CUDA_CHECK(cudaMemsetAsync(g->d_counters, 0, sizeof(vr_counters), s));
    if (c->triangles == 0)
        return VR_OK;
    if ((st = vr_geometry_stage(ops, &p)) != VR_OK)
        return st;
    vr_geometry_tally_kernel<<<1, 1, 0, s>>>(g->d_tally, g->d_counters, c->triangles,
                                             cfg->count != 0);
    VR_LAUNCH_CHECK("vr_geometry_tally_kernel", s);
    return VR_OK;
}

vr_status vr_geometry_tally_reset(vr_geometry *g, void *stream)
{
    assert(g && g->bounded);
    cudaStream_t s = stream ? (cudaStream_t)stream : g->stream;
    VR_CUDA_CHECK(cudaMemsetAsync(g->d_tally, 0, sizeof(vr_geometry_tally), s));
    return VR_OK;
}

vr_status vr_geometry_tally_read(vr_geometry *g, vr_geometry_tally *out, void *stream)
{
    assert(g && g->bounded && out);
    cudaStream_t s = stream ? (cudaStream_t)stream : g->stream;
    VR_CUDA_CHECK(cudaMemcpyAsync(out, g->d_tally, sizeof *out, cudaMemcpyDeviceToHost, s));
    return vr_cuda_status(cudaStreamSynchronize(s), VR_CUDA_WHERE,
                          "cudaStreamSynchronize after the streamed chunks");
}

size_t vr_geometry_device_bytes(const vr_geometry *g)
{
    if (!g)
        return 0;
    size_t b = (size_t)g->triangles * VR_QUEUE_BYTES_PER_TRIANGLE + sizeof(vr_counters) +
               g->temp_capacity;
    return g->d_tally ? b + sizeof(vr_geometry_tally) : b;
}
