/* bench_gpus.c - a bench row's geometry stage over N GPUs (bench_gpus.h): the cut per strategy,
 * one host thread per device, NCCL sums of the counted run, timed runs started together.
 *
 * Why it cannot hang on a failure: the threads of a phase meet before every collective and
 * every timed run, and each meeting gives all of them the same verdict (did any fail since the
 * last meeting, or was a thread never started), so either every device goes on or none does.
 * Every rank makes the same collectives in the same order (as raster/sortlast.c does).
 */
#define _POSIX_C_SOURCE 200809L /* pthreads */
#include "bench/bench_gpus.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#ifdef VR_HAVE_CUDA
#include <pthread.h>

#include "pipeline/stage/parts.h"
#include "raster/sortlast_dev.h"

/* bench_gpus_dev.cu */
vr_status vr_bench_stream_create(void **stream);
void vr_bench_stream_destroy(void *stream);
vr_status vr_bench_device_alloc(void **ptr, size_t bytes, const char *what);

/* The counters in the all-reduce, as 64-bit words: invocations, queue_count, overflow, then
 * culled per reason. */
#define VR_BG_WORDS (3 + VR_CULL_REASON_COUNT)
#define VR_BG_KEY 5

static void vr_bg_pack(uint64_t w[VR_BG_WORDS], const vr_counters *c)
{
    w[0] = c->invocations;
    w[1] = c->queue_count;
    w[2] = c->overflow;
    for (int r = 0; r < VR_CULL_REASON_COUNT; ++r)
        w[3 + r] = c->culled[r];
}

/* One strategy's cut and the devices' contexts of its parts. */
typedef struct vr_bg_cut {
    int made;
    uint32_t key[VR_BG_KEY];             /* vr_bg_key of the cut */
    vr_parts parts;
    vr_geometry *geometry[VR_PARTS_MAX]; /* part k's context on device k; NULL for an empty part
                                            or until its first phase makes it */
} vr_bg_cut;

typedef struct vr_bg_rank {
    int device;
    void *stream;            /* cudaStream_t of the copies and collectives */
    void *d_words;           /* VR_BG_WORDS words: the counters' all-reduce */
    void *d_shade;           /* shade_capacity words: the shade counts' all-reduce */
    uint32_t shade_capacity;
    vr_status status;        /* this phase's first failure (messages are thread-local) */
    char error[512];
} vr_bg_rank;

typedef enum vr_bg_phase { VR_BG_COUNT = 0, VR_BG_TIME } vr_bg_phase;

struct vr_bench_gpus {
    uint32_t count;
    vr_nccl *nccl;
    vr_bg_rank rank[VR_PARTS_MAX];
    vr_bg_cut cut[VR_REUSE_KIND_COUNT]; /* per strategy kind, until vr_bench_gpus_reset */
    const vr_mesh *mesh;                /* the cuts' mesh; NULL after a reset */
    uint64_t words[VR_BG_WORDS];        /* the last count's sums */
    uint32_t *shade;                    /* its summed shade counts, mesh->vertex_count */
    uint32_t shade_capacity;
    int counted;                        /* words and shade hold a count's sums */
    /* the meetings of a phase's threads */
    pthread_mutex_t lock;
    pthread_cond_t met;
    uint32_t arrived, expected, generation;
    int any, abort, verdict;
    /* this phase, for the threads */
    vr_bg_phase phase;
    vr_bg_cut *cur;
    const vr_reuse_ops *ops;
    const vr_reuse_params *cfg;
    int reps;
    float *ms;            /* count * reps: device k's rep r at k * reps + r */
    double *start, *end;  /* the same, host clock (vr_now_ms) around each timed run */
};

/* ---- meetings -------------------------------------------------------------------------------- */

/* The lock is held and the meeting is complete: every thread gets the same verdict. */
static void vr_bg_release(vr_bench_gpus *b)
{
    b->verdict = b->any || b->abort;
    b->any = 0;
    b->arrived = 0;
    ++b->generation;
    pthread_cond_broadcast(&b->met);
}

/* Waits until all threads of the phase arrived; returns 1 when any of them failed since the
 * last meeting (then nobody goes on), else 0. */
static int vr_bg_meet(vr_bench_gpus *b, int failed)
{
    pthread_mutex_lock(&b->lock);
    b->any |= failed;
    if (++b->arrived >= b->expected) {
        vr_bg_release(b);
    } else {
        const uint32_t g = b->generation;
        while (g == b->generation)
            pthread_cond_wait(&b->met, &b->lock);
    }
    /* the next meeting cannot complete before this thread arrives there: verdict is this one's */
    const int verdict = b->verdict;
    pthread_mutex_unlock(&b->lock);
    return verdict;
}

/* ---- the cut --------------------------------------------------------------------------------- */

/* What vr_parts_make reads for this strategy (pipeline/stage/parts.c): the limits of dynamic
 * batches and plans (and the patch builder), warp's static batch, or the thread block of naive
 * and multi. Rows that differ only in load, store, culling or another field share the cut; a
 * key that missed a field would make the sums differ, which the count check reports. */
static void vr_bg_key(uint32_t key[VR_BG_KEY], const vr_reuse_ops *ops,
                      const vr_reuse_params *cfg)
{
    memset(key, 0, VR_BG_KEY * sizeof *key);
    if (ops->dynamic || ops->plan) {
        key[0] = cfg->max_unique;
        key[1] = cfg->max_indices;
        key[2] = ops->plan ? (uint32_t)cfg->patch_builder : 0;
    } else if (ops->kind == VR_REUSE_WARP) {
        key[3] = cfg->batch_indices;
    } else {
        key[4] = cfg->block_size;
    }
}

/* Frees a cut's contexts (each on its device) and parts; the caller's device stays current. */
static void vr_bg_cut_free(vr_bench_gpus *b, vr_bg_cut *c)
{
    int saved = -1;
    if (vr_sl_get_device(&saved) != VR_OK)
        saved = -1;
    for (uint32_t k = 0; k < b->count; ++k)
        if (c->geometry[k]) {
            vr_sl_set_device(b->rank[k].device); /* teardown: nothing to act on */
            vr_geometry_destroy(c->geometry[k]);
            c->geometry[k] = NULL;
        }
    if (saved >= 0)
        vr_sl_set_device(saved);
    vr_parts_free(&c->parts);
    c->made = 0;
}

/* b->cur = the cut of `ops` for cfg's limits on `m`, made when there is none. */
static vr_status vr_bg_cut_for(vr_bench_gpus *b, const vr_reuse_ops *ops, const vr_mesh *m,
                               const vr_reuse_params *cfg)
{
    assert(!b->mesh || b->mesh == m); /* vr_bench_gpus_reset between meshes */
    b->mesh = m;
    vr_bg_cut *c = &b->cut[ops->kind];
    uint32_t key[VR_BG_KEY];
    vr_bg_key(key, ops, cfg);
    if (!c->made || memcmp(key, c->key, sizeof key)) {
        vr_bg_cut_free(b, c);
        const vr_status st = vr_parts_make(&c->parts, ops, m, cfg, b->count);
        if (st != VR_OK)
            return st;
        memcpy(c->key, key, sizeof key);
        c->made = 1;
    }
    b->cur = c;
    return VR_OK;
}

/* ---- one device's work ----------------------------------------------------------------------- */

/* Keeps a device's first failure of the phase for the main thread. */
static vr_status vr_bg_keep(vr_bg_rank *r, vr_status st)
{
    if (st != VR_OK && r->status == VR_OK) {
        r->status = st;
        snprintf(r->error, sizeof r->error, "%s", vr_last_error());
    }
    return st;
}

/* Device k current, its all-reduce buffers and its part's context made. */
static vr_status vr_bg_setup(vr_bench_gpus *b, uint32_t k)
{
    vr_bg_rank *r = &b->rank[k];
    const vr_part *p = &b->cur->parts.part[k];
    const uint32_t vc = b->mesh->vertex_count;
    vr_status st = vr_sl_set_device(r->device);
    if (st == VR_OK && !r->stream)
        st = vr_bench_stream_create(&r->stream);
    if (st == VR_OK && !r->d_words)
        st = vr_bench_device_alloc(&r->d_words, VR_BG_WORDS * sizeof(uint64_t),
                                   "the counters' all-reduce");
    if (st == VR_OK && r->shade_capacity < vc) {
        vr_sl_free(r->d_shade);
        r->d_shade = NULL;
        r->shade_capacity = 0;
        if ((st = vr_bench_device_alloc(&r->d_shade, (size_t)vc * sizeof(uint32_t),
                                        "the shade counts' all-reduce")) == VR_OK)
            r->shade_capacity = vc;
    }
    vr_geometry **g = &b->cur->geometry[k];
    if (st == VR_OK && p->mesh.index_count && !*g) {
        st = vr_geometry_create(g, &p->mesh);
        if (st == VR_OK && p->given.count)
            st = vr_geometry_set_batches(*g, &p->given);
        if (st != VR_OK) { /* never keep a context without its part's batches */
            vr_geometry_destroy(*g);
            *g = NULL;
        }
    }
    return st;
}

/* The counted run of device k's part: its counters and shade counts into the all-reduce
 * buffers (zeros for an empty part). */
static vr_status vr_bg_count_local(vr_bench_gpus *b, uint32_t k)
{
    vr_bg_rank *r = &b->rank[k];
    vr_geometry *g = b->cur->geometry[k];
    const size_t shade_bytes = (size_t)b->mesh->vertex_count * sizeof(uint32_t);
    uint64_t words[VR_BG_WORDS];
    memset(words, 0, sizeof words);
    vr_status st = VR_OK;
    if (g) {
        vr_reuse_params counted = *b->cfg;
        counted.count = 1;
        vr_geometry_result res; /* the counters come with the queue: untimed */
        memset(&res, 0, sizeof res);
        st = vr_geometry_run(g, b->ops, &counted, 0, NULL);
        if (st == VR_OK)
            st = vr_geometry_result_alloc(&res, b->cur->parts.part[k].mesh.index_count / 3,
                                          b->mesh->vertex_count);
        if (st == VR_OK)
            st = vr_geometry_download(g, &res);
        if (st == VR_OK)
            vr_bg_pack(words, &res.counters);
        vr_geometry_result_free(&res);
        if (st == VR_OK)
            st = vr_sl_copy(r->d_shade, vr_geometry_device_shade_counts(g), shade_bytes,
                            r->stream);
    } else {
        st = vr_sl_fill(r->d_shade, 0, shade_bytes, r->stream);
    }
    if (st == VR_OK)
        st = vr_sl_copy(r->d_words, words, sizeof words, r->stream);
    if (st == VR_OK)
        st = vr_sl_sync(r->stream); /* words is on this stack */
    return st;
}

/* The sums over the devices, in place; device 0 copies them to the host. */
static vr_status vr_bg_count_sum(vr_bench_gpus *b, uint32_t k)
{
    vr_bg_rank *r = &b->rank[k];
    const uint32_t vc = b->mesh->vertex_count;
    vr_status st = vr_nccl_all_reduce(b->nccl, (int)k, r->d_words, r->d_words, VR_BG_WORDS,
                                      VR_SL_U64, VR_SL_SUM, r->stream);
    if (st == VR_OK)
        st = vr_nccl_all_reduce(b->nccl, (int)k, r->d_shade, r->d_shade, vc, VR_SL_U32,
                                VR_SL_SUM, r->stream);
    if (st == VR_OK && k == 0)
        st = vr_sl_copy(b->words, r->d_words, sizeof b->words, r->stream);
    if (st == VR_OK && k == 0)
        st = vr_sl_copy(b->shade, r->d_shade, (size_t)vc * sizeof(uint32_t), r->stream);
    if (st == VR_OK)
        st = vr_sl_sync(r->stream);
    return st;
}

/* Device k's thread: this phase's work. */
static void vr_bg_rank_main(vr_bench_gpus *b, uint32_t k)
{
    vr_bg_rank *r = &b->rank[k];
    vr_status st = vr_bg_keep(r, vr_bg_setup(b, k));
    if (b->phase == VR_BG_COUNT) {
        if (st == VR_OK)
            st = vr_bg_keep(r, vr_bg_count_local(b, k));
        if (!vr_bg_meet(b, st != VR_OK)) /* nobody enters a collective another will not join */
            vr_bg_keep(r, vr_bg_count_sum(b, k));
        return;
    }
    vr_geometry *g = b->cur->geometry[k];
    if (st == VR_OK && g) /* warm-up */
        st = vr_bg_keep(r, vr_geometry_run(g, b->ops, b->cfg, 0, NULL));
    for (int i = 0; i < b->reps; ++i) {
        if (vr_bg_meet(b, st != VR_OK)) /* all devices start together, or none */
            return;
        const size_t at = (size_t)k * (size_t)b->reps + (size_t)i;
        b->ms[at] = 0;
        b->start[at] = vr_now_ms();
        if (g)
            st = vr_bg_keep(r, vr_geometry_run(g, b->ops, b->cfg, 0, &b->ms[at]));
        b->end[at] = vr_now_ms();
    }
}

typedef struct vr_bg_job {
    vr_bench_gpus *b;
    uint32_t k;
} vr_bg_job;

static void *vr_bg_job_main(void *arg)
{
    const vr_bg_job *j = (const vr_bg_job *)arg;
    vr_bg_rank_main(j->b, j->k);
    return NULL;
}

/* Runs `phase` on every device, one host thread each; the first device's failure, named. */
static vr_status vr_bg_run_phase(vr_bench_gpus *b, vr_bg_phase phase)
{
    pthread_t th[VR_PARTS_MAX];
    vr_bg_job job[VR_PARTS_MAX];
    b->phase = phase;
    b->arrived = 0;
    b->any = 0;
    b->abort = 0;
    b->expected = b->count;
    for (uint32_t k = 0; k < b->count; ++k) {
        b->rank[k].status = VR_OK;
        b->rank[k].error[0] = 0;
    }
    uint32_t made = 0;
    for (; made < b->count; ++made) {
        job[made].b = b, job[made].k = made;
        if (pthread_create(&th[made], NULL, vr_bg_job_main, &job[made]) != 0)
            break;
    }
    if (made < b->count) {
        /* the threads made meet among themselves, hear the verdict and stop */
        pthread_mutex_lock(&b->lock);
        b->abort = 1;
        b->expected = made;
        if (made > 0 && b->arrived >= made)
            vr_bg_release(b);
        pthread_mutex_unlock(&b->lock);
    }
    for (uint32_t k = 0; k < made; ++k)
        pthread_join(th[k], NULL);
    if (made < b->count)
        return VR_ERROR(VR_ERR_OOM, "no host thread for device %d", b->rank[made].device);
    for (uint32_t k = 0; k < b->count; ++k)
        if (b->rank[k].status != VR_OK)
            return VR_ERROR(b->rank[k].status, "device %d: %s", b->rank[k].device,
                            b->rank[k].error);
    return VR_OK;
}

/* ---- the interface --------------------------------------------------------------------------- */

vr_status vr_bench_gpus_create(vr_bench_gpus **out, uint32_t count, int *nccl_version)
{
    assert(out);
    *out = NULL;
    if (nccl_version)
        *nccl_version = 0;
    if (count == 0 || count > VR_PARTS_MAX)
        return VR_ERROR(VR_ERR_ARG, "--gpus %u: between 1 and %u", count, VR_PARTS_MAX);
    int devices = 0;
    vr_status st = vr_sl_device_count(&devices);
    if (st != VR_OK)
        return st;
    if ((uint32_t)devices < count)
        return VR_ERROR(VR_ERR_ARG, "--gpus %u: this machine has %d CUDA device%s", count,
                        devices, devices == 1 ? "" : "s");
    if (!vr_nccl_built())
        return VR_ERROR(VR_ERR_ARG, "--gpus %u: this vreuse was built without NCCL (nccl.h not "
                        "found); rebuild where the CUDA toolkit ships it", count);
    vr_bench_gpus *b = calloc(1, sizeof *b);
    if (!b)
        return VR_ERROR(VR_ERR_OOM, "--gpus %u: out of host memory", count);
    if (pthread_mutex_init(&b->lock, NULL) != 0) {
        free(b);
        return VR_ERROR(VR_ERR_OOM, "--gpus %u: a mutex", count);
    }
    if (pthread_cond_init(&b->met, NULL) != 0) {
        pthread_mutex_destroy(&b->lock);
        free(b);
        return VR_ERROR(VR_ERR_OOM, "--gpus %u: a condition variable", count);
    }
    b->count = count;
    int devs[VR_PARTS_MAX];
    for (uint32_t k = 0; k < count; ++k)
        b->rank[k].device = devs[k] = (int)k;
    int saved = -1;
    if (vr_sl_get_device(&saved) != VR_OK)
        saved = -1;
    st = vr_nccl_create(&b->nccl, (int)count, devs, nccl_version);
    if (saved >= 0)
        vr_sl_set_device(saved); /* it was current a moment ago */
    if (st != VR_OK) {
        vr_bench_gpus_destroy(b);
        return st;
    }
    *out = b;
    return VR_OK;
}

void vr_bench_gpus_reset(vr_bench_gpus *b)
{
    if (!b)
        return;
    for (int c = 0; c < VR_REUSE_KIND_COUNT; ++c)
        vr_bg_cut_free(b, &b->cut[c]);
    b->mesh = NULL;
    b->cur = NULL;
    b->counted = 0;
}

void vr_bench_gpus_destroy(vr_bench_gpus *b)
{
    if (!b)
        return;
    vr_bench_gpus_reset(b);
    int saved = -1;
    if (vr_sl_get_device(&saved) != VR_OK)
        saved = -1;
    for (uint32_t k = 0; k < b->count; ++k) {
        vr_bg_rank *r = &b->rank[k];
        if (!r->d_words && !r->d_shade && !r->stream)
            continue;
        vr_sl_set_device(r->device); /* teardown: nothing to act on */
        vr_sl_free(r->d_words);
        vr_sl_free(r->d_shade);
        vr_bench_stream_destroy(r->stream);
    }
    vr_nccl_destroy(b->nccl);
    if (saved >= 0)
        vr_sl_set_device(saved);
    pthread_cond_destroy(&b->met);
    pthread_mutex_destroy(&b->lock);
    free(b->shade);
    free(b);
}

vr_status vr_bench_gpus_count(vr_bench_gpus *b, const vr_reuse_ops *ops, const vr_mesh *m,
                              const vr_reuse_params *cfg)
{
    assert(b && ops && m && cfg);
    b->counted = 0;
    vr_status st = vr_bg_cut_for(b, ops, m, cfg);
    if (st != VR_OK)
        return st;
    if (b->shade_capacity < m->vertex_count) {
        free(b->shade);
        b->shade_capacity = 0;
        if (!(b->shade = malloc((size_t)m->vertex_count * sizeof *b->shade)))
            return VR_ERROR(VR_ERR_OOM, "--gpus %u: %u summed shade counts", b->count,
                            m->vertex_count);
        b->shade_capacity = m->vertex_count;
    }
    b->ops = ops;
    b->cfg = cfg;
    st = vr_bg_run_phase(b, VR_BG_COUNT);
    b->counted = st == VR_OK;
    return st;
}

uint64_t vr_bench_gpus_compare(const vr_bench_gpus *b, const vr_geometry_result *one, FILE *log,
                               const char *what)
{
    assert(b && b->counted && one && one->vertex_count == b->mesh->vertex_count);
    static const char *const names[3] = {"invocations", "queue_count", "overflow"};
    uint64_t want[VR_BG_WORDS], bad = 0;
    vr_bg_pack(want, &one->counters);
    for (int w = 0; w < VR_BG_WORDS; ++w) {
        if (b->words[w] == want[w])
            continue;
        if (log && bad < 5) {
            char name[32];
            if (w < 3)
                snprintf(name, sizeof name, "%s", names[w]);
            else
                snprintf(name, sizeof name, "culled[%d]", w - 3);
            fprintf(log, "%s: %s %llu summed over %u GPUs, %llu on one GPU\n", what, name,
                    (unsigned long long)b->words[w], b->count, (unsigned long long)want[w]);
        }
        ++bad;
    }
    for (uint32_t v = 0; v < one->vertex_count; ++v) {
        if (b->shade[v] == one->shade_counts[v])
            continue;
        if (log && bad < 5)
            fprintf(log, "%s: vertex %u shaded %u times summed over %u GPUs, %u on one GPU\n",
                    what, v, b->shade[v], b->count, one->shade_counts[v]);
        ++bad;
    }
    return bad;
}

static int vr_bg_cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Sorts v[0..n) and returns its median (n > 0), as the bench's single-device column does. */
static double vr_bg_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, vr_bg_cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

vr_status vr_bench_gpus_time(vr_bench_gpus *b, vr_bench_gpus_times *out, const vr_reuse_ops *ops,
                             const vr_mesh *m, const vr_reuse_params *cfg, int reps)
{
    assert(b && out && ops && m && cfg && reps > 0);
    memset(out, 0, sizeof *out);
    vr_status st = vr_bg_cut_for(b, ops, m, cfg);
    if (st != VR_OK)
        return st;
    const size_t n = (size_t)b->count * (size_t)reps;
    b->ms = malloc(n * sizeof *b->ms);
    b->start = malloc(n * sizeof *b->start);
    b->end = malloc(n * sizeof *b->end);
    double *stage = malloc((size_t)reps * sizeof *stage);
    double *wall = malloc((size_t)reps * sizeof *wall);
    if (!b->ms || !b->start || !b->end || !stage || !wall) {
        st = VR_ERROR(VR_ERR_OOM, "--gpus %u: timings of %d reps", b->count, reps);
    } else {
        b->ops = ops;
        b->cfg = cfg;
        b->reps = reps;
        st = vr_bg_run_phase(b, VR_BG_TIME);
    }
    if (st == VR_OK) {
        /* per rep: the frame waits for the slowest device; empty parts do nothing */
        for (int i = 0; i < reps; ++i) {
            double slowest = 0, first = 0, last = 0;
            int seen = 0;
            for (uint32_t k = 0; k < b->count; ++k) {
                if (!b->cur->geometry[k])
                    continue;
                const size_t at = (size_t)k * (size_t)reps + (size_t)i;
                if (b->ms[at] > slowest)
                    slowest = b->ms[at];
                if (!seen || b->start[at] < first)
                    first = b->start[at];
                if (!seen || b->end[at] > last)
                    last = b->end[at];
                seen = 1;
            }
            stage[i] = slowest;
            wall[i] = last - first;
        }
        for (uint32_t k = 0; k < b->count; ++k)
            out->busy += b->cur->geometry[k] != NULL;
        out->ms_med = vr_bg_median(stage, reps); /* sorts stage */
        out->ms_min = stage[0];
        out->wall_ms = vr_bg_median(wall, reps);
    }
    free(b->ms), free(b->start), free(b->end);
    b->ms = NULL, b->start = NULL, b->end = NULL;
    free(stage), free(wall);
    return st;
}

#else /* no CUDA: nothing to run on */

struct vr_bench_gpus {
    int unused;
};

vr_status vr_bench_gpus_create(vr_bench_gpus **out, uint32_t count, int *nccl_version)
{
    assert(out);
    (void)count;
    *out = NULL;
    if (nccl_version)
        *nccl_version = 0;
    return VR_ERROR(VR_ERR_NO_DEVICE, VR_NO_CUDA_BUILD);
}

void vr_bench_gpus_destroy(vr_bench_gpus *b)
{
    (void)b;
}

void vr_bench_gpus_reset(vr_bench_gpus *b)
{
    (void)b;
}

vr_status vr_bench_gpus_count(vr_bench_gpus *b, const vr_reuse_ops *ops, const vr_mesh *m,
                              const vr_reuse_params *cfg)
{
    (void)b, (void)ops, (void)m, (void)cfg;
    return VR_ERROR(VR_ERR_NO_DEVICE, VR_NO_CUDA_BUILD);
}

uint64_t vr_bench_gpus_compare(const vr_bench_gpus *b, const vr_geometry_result *one, FILE *log,
                               const char *what)
{
    (void)b, (void)one, (void)log, (void)what;
    return 0;
}

vr_status vr_bench_gpus_time(vr_bench_gpus *b, vr_bench_gpus_times *out, const vr_reuse_ops *ops,
                             const vr_mesh *m, const vr_reuse_params *cfg, int reps)
{
    (void)b, (void)ops, (void)m, (void)cfg, (void)reps;
    memset(out, 0, sizeof *out);
    return VR_ERROR(VR_ERR_NO_DEVICE, VR_NO_CUDA_BUILD);
}
#endif
