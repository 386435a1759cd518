/* stream.c - the bounded streaming frame (stream.h, raster.h's vr_renderer_create_streamed):
 * chunks of the batch stream through one queue, one visibility buffer and one image. A chunk's
 * words carry its stream positions (vr_raster_config.slot_base), so the buffer ends as one whole
 * run's; each chunk resolves the pixels whose word is currently one of its triangles before the
 * next chunk reuses the queue (VR_RESOLVE_PART_KEEP), so each pixel's last write is by the chunk
 * of its final word. The CPU twin does the same with loops; the GPU adds the staging slots, the
 * copy stream and the events that let a chunk's copies overlap the previous chunk's kernels.
 */
#define _POSIX_C_SOURCE 200809L /* pthreads: the registry of page-locked arrays */
#include "raster/stream.h"

#include <assert.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/gts/gts_batch.h"
#include "pipeline/stage/geometry.h"
#include "pipeline/stage/parts.h"
#include "pipeline/vr_mem.h"
#include "raster/raster_common.h"
#ifdef VR_HAVE_CUDA
#include "pipeline/vr_check.h"
#endif

const char *const vr_stream_source_names[VR_STREAM_SOURCE_COUNT] = {"device", "host"};

#define VR_STREAM_SLOTS 2 /* one slot fills while the other is read */
#define VR_GTS_ARRAYS 3   /* a compressed stream's word arrays: C, INC, S */

/* The words of C, INC and S one chunk's batches read: [lo, hi) of each array. */
typedef struct vr_gts_slice {
    uint32_t lo[VR_GTS_ARRAYS], hi[VR_GTS_ARRAYS];
} vr_gts_slice;

#ifdef VR_HAVE_CUDA
/* A scene array's device copy that a stream holds (vr_stream_hold). */
typedef struct vr_held {
    const void *host;
    size_t bytes;
    void *d;
} vr_held;
#define VR_HELD_MAX 8 /* positions, normals, indices, C, INC, S */

/* What one chunk reads that is not resident on the device. */
typedef struct vr_stream_slot {
    uint32_t *d_starts;     /* max_batches + 1 */
    uint32_t *d_tri_batch;  /* capacity: batch colours (BATCHES mode) */
    uint32_t *d_indices;    /* VR_STREAM_HOST: 3 * capacity */
    float *d_positions;     /* VR_STREAM_HOST: 3 * max_window */
    float *d_normals;
    uint32_t *d_gts[VR_GTS_ARRAYS]; /* VR_STREAM_HOST, compressed: max_slice words each */
    vr_gts_seed *d_seeds;   /* VR_STREAM_HOST, compressed: max_batches + 1 */
    vr_gts_batch_source src; /* compressed: the chunk's input, read when its run is enqueued */
    cudaEvent_t loaded;     /* the copies into the slot are done */
    cudaEvent_t released;   /* the last chunk that read the slot is done */
} vr_stream_slot;
#endif

struct vr_stream {
    const vr_mesh *mesh;
    int gpu;
    vr_stream_config config;
    uint32_t capacity;       /* triangles per chunk */
    vr_parts parts;          /* the cut of cut_kind under cut_limits and cut_builder */
    int cut_kind, cut_builder;
    vr_batch_limits cut_limits;
    uint32_t max_batches;    /* of one chunk */
    uint32_t *window;        /* VR_STREAM_HOST: per chunk its lowest and highest vertex id + 1 */
    uint32_t max_window;     /* vertices of the widest window */
    int counted;             /* invocations belong to the cut */
    uint64_t invocations;
    size_t last_pixels;
    /* compressed input (vr_stream_set_gts): the stream, one seed per batch of the cut, and per
     * chunk the slice of each array its batches read (VR_STREAM_HOST copies only those) */
    const vr_gts *gts;
    vr_gts_batch_source gts_whole;  /* the host arrays and counts */
    vr_gts_seed *seeds;             /* parts.batch_count */
    vr_gts_slice *slice;            /* parts.count */
    uint32_t max_slice[VR_GTS_ARRAYS]; /* words of the widest slice of each array */
    uint32_t *h_stage[VR_GTS_ARRAYS]; /* CPU twin, VR_STREAM_HOST: the chunk's slices */
    /* CPU twin */
    vr_geometry_result result; /* capacity triangles; viewed as a chunk's */
    uint64_t *vis, *chunk_vis;
    uint8_t *rgba;
    size_t pixel_capacity;
#ifdef VR_HAVE_CUDA
    vr_geometry *geometry;   /* bounded: the queue, the workspace, the tally */
    vr_raster_frame frame;   /* visibility buffer, image, raster scratch */
    cudaStream_t copies;
    cudaEvent_t start, stop;
    vr_stream_slot slot[VR_STREAM_SLOTS];
    size_t slot_bytes;       /* all slots */
    /* VR_STREAM_DEVICE: the scene on the device, copied at the cuts that need it. The scene's
     * own arrays are shared with the other streams on the device (vr_stream_hold); the plan
     * order and the seeds change with every cut and are the stream's own. */
    int device;              /* the device the stream was made on */
    vr_held held[VR_HELD_MAX]; /* shared arrays this stream holds */
    int held_count;
    const uint32_t *d_stream; /* the stream's indices: the mesh's (shared) or d_plan */
    uint32_t *d_plan;        /* a plan's indices, in plan order */
    float *d_positions, *d_normals; /* shared */
    uint32_t *d_gts[VR_GTS_ARRAYS]; /* compressed: the stream's C, INC and S (shared) */
    vr_gts_seed *d_seeds;    /* compressed: the cut's seeds */
    /* host arrays page-locked for the copies (cudaHostRegister), unregistered at the next cut */
    void *pinned[8];
    int pinned_count;
#endif
};

/* ---- the cut ---------------------------------------------------------------------------------- */

/* Per chunk its vertex window [lo, hi): VR_STREAM_HOST copies only it. */
static vr_status vr_stream_windows(vr_stream *s)
{
    free(s->window);
    s->max_window = 0;
    s->window = malloc(2 * ((size_t)s->parts.count + 1) * sizeof *s->window);
    if (!s->window)
        return VR_ERROR(VR_ERR_OOM, "streaming: vertex windows of %u chunks", s->parts.count);
    for (uint32_t k = 0; k < s->parts.count; ++k) {
        const vr_mesh *c = &s->parts.part[k].mesh;
        uint32_t lo = UINT32_MAX, hi = 0;
        for (uint32_t i = 0; i < c->index_count; ++i) {
            const uint32_t v = c->indices[i];
            lo = v < lo ? v : lo;
            hi = v > hi ? v : hi;
        }
        if (c->index_count == 0)
            lo = hi = 0;
        else
            ++hi;
        s->window[2 * k] = lo;
        s->window[2 * k + 1] = hi;
        if (hi - lo > s->max_window)
            s->max_window = hi - lo;
    }
    return VR_OK;
}

static const char *const vr_gts_array_names[VR_GTS_ARRAYS] = {"C (strip codes)", "INC",
                                                              "S (Simple-9 words)"};

/* The cut's compressed side: one seed per batch (one sequential decode of the stream, load-time
 * work as in the in-core stage) and per chunk the words of C, INC and S its batches read: from
 * its first triangle and its first batch's seed to the next chunk's first (or the stream's end).
 * The seeds ascend, so on a good stream a chunk's decoders read nothing outside its slices; the
 * slices are checked against the arrays here, before any copy reads them. */
static vr_status vr_stream_gts_cut(vr_stream *s)
{
    const vr_parts *p = &s->parts;
    const vr_gts_batch_source *w = &s->gts_whole;
    free(s->seeds);
    free(s->slice);
    memset(s->max_slice, 0, sizeof s->max_slice);
    s->seeds = malloc(((size_t)p->batch_count + 1) * sizeof *s->seeds);
    s->slice = malloc(((size_t)p->count + 1) * sizeof *s->slice);
    vr_status st = VR_OK;
    if (!s->seeds || !s->slice)
        st = VR_ERROR(VR_ERR_OOM, "streaming compressed input: seeds of %u batches",
                      p->batch_count);
    /* seeded at each batch's first strip triangle over the whole stream: a sort-last part's
     * chunks cover only its own batches, and the seeds ascend from batch 0 */
    if (st == VR_OK)
        st = vr_gts_batch_seeds(s->seeds, s->gts, p->batch_first, p->batch_count);
    const uint32_t code_shift = w->codes ? 4 : 5; /* 16 or 32 strip codes per word */
    const uint32_t words[VR_GTS_ARRAYS] = {w->c_words, w->inc_words, w->s_count};
    for (uint32_t k = 0; k < p->count && st == VR_OK; ++k) {
        const vr_part *c = &p->part[k];
        const vr_gts_seed *first = &s->seeds[c->batch_begin];
        const vr_gts_seed *next = c->batch_end < p->batch_count ? &s->seeds[c->batch_end] : NULL;
        const uint32_t t0 = c->first_tri, t1 = t0 + c->mesh.index_count / 3;
        const uint32_t pos_end = next ? next->first_pos : w->v_count;
        vr_gts_slice *sl = &s->slice[k];
        sl->lo[0] = t0 >> code_shift;
        sl->hi[0] = t1 > t0 ? ((t1 - 1) >> code_shift) + 1 : sl->lo[0];
        sl->lo[1] = first->first_pos >> 5;
        sl->hi[1] = pos_end > first->first_pos ? ((pos_end - 1) >> 5) + 1 : sl->lo[1];
        sl->lo[2] = first->s_word; /* the next chunk's first word too, when it starts inside */
        sl->hi[2] = next ? next->s_word + (VR_GTS_SEED_S_SKIP(next) != 0) : w->s_count;
        for (int a = 0; a < VR_GTS_ARRAYS && st == VR_OK; ++a) {
            if (sl->lo[a] > sl->hi[a] || sl->hi[a] > words[a])
                st = VR_ERROR(VR_ERR_FORMAT, "streaming compressed input: chunk %u (triangles "
                              "%u..%u) would read words %u..%u of %s, which has %u: the stream "
                              "is malformed", k, t0, t1 - 1, sl->lo[a], sl->hi[a],
                              vr_gts_array_names[a], words[a]);
            else if (sl->hi[a] - sl->lo[a] > s->max_slice[a])
                s->max_slice[a] = sl->hi[a] - sl->lo[a];
        }
    }
    /* the CPU twin stages host-streamed slices as the GPU does */
    for (int a = 0; a < VR_GTS_ARRAYS && st == VR_OK && !s->gpu &&
                    s->config.source == VR_STREAM_HOST; ++a) {
        free(s->h_stage[a]);
        if (!(s->h_stage[a] = malloc(((size_t)s->max_slice[a] + 1) * 4)))
            st = VR_ERROR(VR_ERR_OOM, "streaming compressed input: a staging slice of %u "
                          "words", s->max_slice[a]);
    }
    return st;
}

/* Chunk k's compressed input: the stream's counts, `seeds` for its batches (and the next chunk's
 * first), and arrays[a] - the slices' storage (`sliced`) or the whole arrays - based so that
 * word w of the stream reads element w; a slice's end is its array's count (gts_batch.h). */
static vr_gts_batch_source vr_stream_gts_chunk(const vr_stream *s, uint32_t k,
                                               const uint32_t *const *arrays, int sliced,
                                               const vr_gts_seed *seeds)
{
    const vr_part *c = &s->parts.part[k];
    vr_gts_batch_source src = s->gts_whole;
    src.tri_base = c->first_tri;
    src.seed_after = c->batch_end < s->parts.batch_count;
    src.seeds = seeds;
    const uint32_t *lo = sliced ? s->slice[k].lo : NULL, *hi = sliced ? s->slice[k].hi : NULL;
    src.c = sliced ? arrays[0] - lo[0] : arrays[0];
    src.inc = sliced ? arrays[1] - lo[1] : arrays[1];
    src.s = sliced ? arrays[2] - lo[2] : arrays[2];
    if (sliced) {
        src.c_words = hi[0];
        src.inc_words = hi[1];
        src.s_count = hi[2];
    }
    return src;
}

#ifdef VR_HAVE_CUDA
/* Host arrays page-locked for the copies, counted over every stream of the process: streamed
 * sort-last parts copy from the same scene arrays, each on its own stream (NCCL: from a thread
 * and a device of its own), and cudaHostRegister takes a range only once. The first stream that
 * needs an array registers it (portable: pinned for every device's copies), the last one that
 * lets go unregisters it, so one part's new cut never unpins what another part still copies. */
#define VR_PIN_MAX 1024
/* An entry of the process's tables of arrays shared by streams: page-locked host arrays (the
 * pins) and the scene's device copies (the residents, below). */
typedef struct vr_shared {
    const void *host;
    size_t bytes;
    void *d;        /* residents: the device copy */
    uint32_t users; /* 0: a free entry */
} vr_shared;
static vr_shared vr_pins[VR_PIN_MAX];
static pthread_mutex_t vr_pin_lock = PTHREAD_MUTEX_INITIALIZER;

/* The entry of t[0..n) in use for (host, bytes), else n with *free_slot the first free entry
 * (-1: none). The caller holds the table's lock. */
static int vr_shared_find(const vr_shared *t, int n, const void *host, size_t bytes,
                          int *free_slot)
{
    *free_slot = -1;
    for (int k = 0; k < n; ++k) {
        if (t[k].users && t[k].host == host && t[k].bytes == bytes)
            return k;
        if (!t[k].users && *free_slot < 0)
            *free_slot = k;
    }
    return n;
}

static void vr_stream_unpin(vr_stream *s)
{
    pthread_mutex_lock(&vr_pin_lock);
    for (int i = 0; i < s->pinned_count; ++i)
        for (int k = 0; k < VR_PIN_MAX; ++k)
            if (vr_pins[k].users && vr_pins[k].host == s->pinned[i]) {
                if (--vr_pins[k].users == 0) /* nothing to act on if this fails */
                    cudaHostUnregister((void *)vr_pins[k].host);
                break;
            }
    pthread_mutex_unlock(&vr_pin_lock);
    s->pinned_count = 0;
}

/* Page-locks a host array for asynchronous copies. `needed`: a failure is an error (the scene's
 * arrays in VR_STREAM_HOST: unpinned copies would be synchronous and slow); otherwise the array
 * stays pageable (small copies staged by the driver). A range the caller's own code registered
 * counts as pinned and stays the caller's. */
static vr_status vr_stream_pin(vr_stream *s, const void *p, size_t bytes, int needed,
                               const char *what)
{
    if (!bytes)
        return VR_OK;
    pthread_mutex_lock(&vr_pin_lock);
    int free_slot;
    int k = vr_shared_find(vr_pins, VR_PIN_MAX, p, bytes, &free_slot);
    cudaError_t e = cudaSuccess;
    if (k == VR_PIN_MAX && free_slot >= 0) {
        e = cudaHostRegister((void *)p, bytes, cudaHostRegisterPortable);
        if (e == cudaSuccess) {
            k = free_slot;
            vr_pins[k].host = p, vr_pins[k].bytes = bytes;
        } else {
            cudaGetLastError(); /* not sticky: cleared so later checks do not report it again */
        }
    }
    const int held = k < VR_PIN_MAX;
    if (held) {
        ++vr_pins[k].users;
        s->pinned[s->pinned_count++] = (void *)p;
    }
    pthread_mutex_unlock(&vr_pin_lock);
    if (held || !needed || e == cudaErrorHostMemoryAlreadyRegistered)
        return VR_OK;
    if (e == cudaSuccess) /* the registry is full: 1,024 arrays pinned at once */
        return VR_ERROR(VR_ERR_OOM, "streaming from host memory: more than %d host arrays "
                        "page-locked at once (the %s)", VR_PIN_MAX, what);
    return VR_ERROR(VR_ERR_CUDA, "streaming from host memory: cudaHostRegister of the %s "
                    "(%.1f GB) failed: %s; stream from the device instead", what, bytes / 1e9,
                    cudaGetErrorString(e));
}

/* The scene on the device (VR_STREAM_DEVICE), shared: every stream on a device that needs one
 * of the scene's host arrays (positions, normals, the mesh's own indices, a compressed stream's
 * C, INC and S) reads one device copy of it. Sort-last parts on one device each stream the
 * whole scene, so without this each held a copy (3 parts of a 1B-triangle scene: 72 GB instead
 * of 24). A copy is keyed by its host array and size, counted like the pins, and freed by the
 * last stream that lets go; a mesh outlives its renderers, so a live key cannot be reused by
 * another array. Each device's table has a lock of its own, held across the upload: ranks on
 * different devices copy at once, and a second part on the same device waits for the first
 * one's copy instead of making its own. */
#define VR_RESIDENT_DEVICES 64
#define VR_RESIDENT_MAX 64 /* arrays per device: 6 per scene */
static vr_shared vr_residents[VR_RESIDENT_DEVICES][VR_RESIDENT_MAX];
static pthread_mutex_t vr_resident_lock[VR_RESIDENT_DEVICES];
static pthread_once_t vr_resident_once = PTHREAD_ONCE_INIT;

static void vr_resident_init(void)
{
    for (int d = 0; d < VR_RESIDENT_DEVICES; ++d)
        pthread_mutex_init(&vr_resident_lock[d], NULL);
}

/* *d = the device copy of `bytes` of host array `host` on the stream's device, made by the first
 * stream there that asks; a stream asking again for an array it holds gets the same copy. */
static vr_status vr_stream_hold(vr_stream *s, const void *host, size_t bytes, const char *what,
                                void **d)
{
    *d = NULL;
    for (int i = 0; i < s->held_count; ++i)
        if (s->held[i].host == host && s->held[i].bytes == bytes) {
            *d = s->held[i].d;
            return VR_OK;
        }
    if (s->device < 0 || s->device >= VR_RESIDENT_DEVICES)
        return VR_ERROR(VR_ERR_ARG, "streaming from the device: device %d (the scene's copies "
                        "are shared on devices 0..%d)", s->device, VR_RESIDENT_DEVICES - 1);
    if (s->held_count == VR_HELD_MAX) /* a bug: a stream holds at most 6 */
        return VR_ERROR(VR_ERR_ARG, "streaming from the device: more than %d arrays held (the "
                        "%s)", VR_HELD_MAX, what);
    pthread_once(&vr_resident_once, vr_resident_init);
    pthread_mutex_lock(&vr_resident_lock[s->device]);
    vr_shared *t = vr_residents[s->device];
    int free_slot;
    int k = vr_shared_find(t, VR_RESIDENT_MAX, host, bytes, &free_slot);
    vr_status st = VR_OK;
    if (k == VR_RESIDENT_MAX) {
        if (free_slot < 0) {
            st = VR_ERROR(VR_ERR_OOM, "streaming from the device: more than %d scene arrays on "
                          "device %d at once (the %s)", VR_RESIDENT_MAX, s->device, what);
        } else {
            k = free_slot;
            if ((st = vr_cuda_upload(&t[k].d, host, bytes, what)) == VR_OK) {
                t[k].host = host, t[k].bytes = bytes;
            } else {
                cudaFree(t[k].d); /* a failed copy leaves its buffer: error path, best effort */
                t[k].d = NULL;
            }
        }
    }
    if (st == VR_OK) {
        ++t[k].users;
        vr_held h = {host, bytes, t[k].d};
        s->held[s->held_count++] = h;
        *d = t[k].d;
    }
    pthread_mutex_unlock(&vr_resident_lock[s->device]);
    return st;
}

/* Lets go of the stream's hold on `host` (none: nothing); the last holder frees the copy. */
static void vr_stream_let_go(vr_stream *s, const void *host)
{
    int i = 0;
    while (i < s->held_count && s->held[i].host != host)
        ++i;
    if (i == s->held_count)
        return;
    const vr_held h = s->held[i];
    s->held[i] = s->held[--s->held_count];
    pthread_mutex_lock(&vr_resident_lock[s->device]);
    vr_shared *t = vr_residents[s->device];
    int free_slot;
    const int k = vr_shared_find(t, VR_RESIDENT_MAX, h.host, h.bytes, &free_slot);
    if (k < VR_RESIDENT_MAX && --t[k].users == 0) {
        /* teardown and recuts: nothing to act on if these fail; the copy is freed on its own
         * device, whichever the caller's thread has current */
        int current = -1;
        cudaGetDevice(&current);
        cudaSetDevice(s->device);
        cudaFree(t[k].d);
        if (current >= 0)
            cudaSetDevice(current);
        t[k].d = NULL, t[k].host = NULL, t[k].bytes = 0;
    }
    pthread_mutex_unlock(&vr_resident_lock[s->device]);
}

static void vr_stream_slots_free(vr_stream *s)
{
    for (int k = 0; k < VR_STREAM_SLOTS; ++k) {
        vr_stream_slot *sl = &s->slot[k];
        void *const bufs[] = {sl->d_starts, sl->d_tri_batch, sl->d_indices, sl->d_positions,
                              sl->d_normals, sl->d_gts[0], sl->d_gts[1], sl->d_gts[2],
                              sl->d_seeds};
        vr_cuda_free_all(bufs, VR_COUNT_OF(bufs));
        sl->d_starts = sl->d_tri_batch = sl->d_indices = NULL;
        sl->d_positions = sl->d_normals = NULL;
        memset(sl->d_gts, 0, sizeof sl->d_gts);
        sl->d_seeds = NULL;
    }
    s->slot_bytes = 0;
}

/* Staging for compressed chunks (VR_STREAM_HOST): each array's widest slice and the seeds of
 * the longest chunk plus one. */
static vr_status vr_stream_slot_gts(vr_stream *s, vr_stream_slot *sl)
{
    vr_status st = VR_OK;
    for (int a = 0; a < VR_GTS_ARRAYS && st == VR_OK; ++a) {
        const size_t b = ((size_t)s->max_slice[a] + 1) * 4;
        if ((st = vr_cuda_alloc((void **)&sl->d_gts[a], b, "chunk compressed words")) == VR_OK)
            s->slot_bytes += b;
    }
    const size_t sb = ((size_t)s->max_batches + 1) * sizeof(vr_gts_seed);
    if (st == VR_OK && (st = vr_cuda_alloc((void **)&sl->d_seeds, sb, "chunk seeds")) == VR_OK)
        s->slot_bytes += sb;
    return st;
}

/* The device side of a new cut: staging slots sized for its largest chunk, the stream's indices
 * on the device (VR_STREAM_DEVICE; compressed: the cut's seeds instead), the host arrays the
 * copies read page-locked. vr_stream_cut has drained both streams and unpinned the old cut's
 * arrays already. */
static vr_status vr_stream_cut_gpu(vr_stream *s)
{
    vr_stream_slots_free(s);
    const vr_parts *p = &s->parts;
    const int host = s->config.source == VR_STREAM_HOST;
    const size_t starts = (size_t)s->max_batches + 1;
    vr_status st = VR_OK;
    for (int k = 0; k < VR_STREAM_SLOTS && st == VR_OK; ++k) {
        vr_stream_slot *sl = &s->slot[k];
        if ((st = vr_cuda_alloc((void **)&sl->d_starts, starts * 4, "chunk batch starts")) ||
            (st = vr_cuda_alloc((void **)&sl->d_tri_batch, (size_t)s->capacity * 4,
                                "chunk batch ids")))
            break;
        s->slot_bytes += starts * 4 + (size_t)s->capacity * 4;
        if (!host)
            continue;
        const size_t w = (size_t)s->max_window * 3 * sizeof(float);
        if ((st = vr_cuda_alloc((void **)&sl->d_positions, w, "chunk positions")) ||
            (st = vr_cuda_alloc((void **)&sl->d_normals, w, "chunk normals")))
            break;
        s->slot_bytes += 2 * w;
        /* compressed: the chunk's slices instead of its indices */
        if ((st = s->gts ? vr_stream_slot_gts(s, sl)
                         : vr_cuda_alloc((void **)&sl->d_indices, (size_t)s->capacity * 12,
                                         "chunk indices")) != VR_OK)
            break;
        if (!s->gts)
            s->slot_bytes += (size_t)s->capacity * 12;
    }
    if (st != VR_OK)
        return st;
    const uint32_t *stream = p->plan_indices ? p->plan_indices : s->mesh->indices;
    const size_t index_bytes = (size_t)s->mesh->index_count * 4;
    const size_t vertex_bytes = (size_t)s->mesh->vertex_count * 12;
    /* the parts' rebased starts: at most batches + chunks words */
    if ((st = vr_stream_pin(s, p->starts, ((size_t)p->batch_count + p->count) * 4, 0,
                            "batch starts")) != VR_OK)
        return st;
    if (host) {
        const vr_gts_batch_source *w = &s->gts_whole;
        if ((st = vr_stream_pin(s, s->mesh->positions, vertex_bytes, 1, "positions")) ||
            (st = vr_stream_pin(s, s->mesh->normals, vertex_bytes, 1, "normals")))
            return st;
        if (!s->gts)
            return vr_stream_pin(s, stream, index_bytes, 1, "indices");
        if ((st = vr_stream_pin(s, w->c, (size_t)w->c_words * 4, 1, "strip codes")) ||
            (st = vr_stream_pin(s, w->inc, (size_t)w->inc_words * 4, 1, "INC bits")) ||
            (st = vr_stream_pin(s, w->s, (size_t)w->s_count * 4, 1, "Simple-9 words")))
            return st;
        return vr_stream_pin(s, s->seeds, (size_t)p->batch_count * sizeof *s->seeds, 0,
                             "seeds");
    }
    /* the device's copies of the scene (shared, made by the first stream that needs them)
     * and the cut's own arrays: a plan's order, or the seeds */
    if ((st = vr_stream_hold(s, s->mesh->positions, vertex_bytes, "scene positions",
                             (void **)&s->d_positions)) ||
        (st = vr_stream_hold(s, s->mesh->normals, vertex_bytes, "scene normals",
                             (void **)&s->d_normals)) ||
        (st = vr_cuda_free((void **)&s->d_plan, "plan-ordered indices")) ||
        (st = vr_cuda_free((void **)&s->d_seeds, "seeds")))
        return st;
    s->d_stream = NULL;
    if (s->gts || p->plan_indices) /* the mesh's own indices are not read */
        vr_stream_let_go(s, s->mesh->indices);
    if (s->gts) { /* C, INC and S and the seeds instead of the indices */
        const vr_gts_batch_source *w = &s->gts_whole;
        const void *src[VR_GTS_ARRAYS] = {w->c, w->inc, w->s};
        const uint32_t words[VR_GTS_ARRAYS] = {w->c_words, w->inc_words, w->s_count};
        for (int a = 0; a < VR_GTS_ARRAYS; ++a)
            if ((st = vr_stream_hold(s, src[a], (size_t)words[a] * 4, vr_gts_array_names[a],
                                     (void **)&s->d_gts[a])) != VR_OK)
                return st;
        return vr_cuda_upload((void **)&s->d_seeds, s->seeds,
                              (size_t)p->batch_count * sizeof *s->seeds, "seeds");
    }
    if (p->plan_indices) {
        st = vr_cuda_upload((void **)&s->d_plan, stream, index_bytes, "plan-ordered indices");
        s->d_stream = s->d_plan;
        return st;
    }
    uint32_t *mesh_indices = NULL;
    st = vr_stream_hold(s, stream, index_bytes, "scene indices", (void **)&mesh_indices);
    s->d_stream = mesh_indices;
    return st;
}
#endif

static vr_status vr_stream_cut(vr_stream *s, const vr_render_options *o, const vr_reuse_params *cfg)
{
    const vr_batch_limits limits = vr_batch_limits_of(cfg);
    if (s->gts && !(o->strategy->gts_input && o->strategy->dynamic))
        return VR_ERROR(VR_ERR_ARG, "streaming: %s cannot decode compressed batches (only hash "
                        "can); switch compressed input off with vr_renderer_set_gts(r, NULL)",
                        o->strategy->name);
    if (s->cut_kind == (int)o->strategy->kind && s->cut_builder == cfg->patch_builder &&
        !memcmp(&limits, &s->cut_limits, sizeof limits))
        return VR_OK;
    s->cut_kind = -1;
    s->counted = 0;
#ifdef VR_HAVE_CUDA
    if (s->gpu) { /* nothing reads the old cut's host arrays any more, and none stays pinned */
        VR_CUDA_CHECK(cudaStreamSynchronize((cudaStream_t)s->frame.stream));
        VR_CUDA_CHECK(cudaStreamSynchronize(s->copies));
        vr_stream_unpin(s);
    }
#endif
    vr_parts_free(&s->parts);
    vr_status st = vr_parts_make_bounded(&s->parts, o->strategy, s->mesh, cfg, s->capacity,
                                           s->config.part, s->config.parts ? s->config.parts : 1);
    if (st != VR_OK)
        return st;
    s->max_batches = 0;
    for (uint32_t k = 0; k < s->parts.count; ++k) {
        const vr_part *c = &s->parts.part[k];
        if (c->batch_end - c->batch_begin > s->max_batches)
            s->max_batches = c->batch_end - c->batch_begin;
    }
    if (s->config.source == VR_STREAM_HOST) {
        if ((st = vr_stream_windows(s)) != VR_OK)
            return st;
        /* the staging slots hold the widest window: bounded only when the vertex order is
         * local (a chunk's triangles use nearby vertex ids); up to the queue's size, or 64 MiB
         * for small queues */
        const uint64_t window_bytes = (uint64_t)s->max_window * 24;
        const uint64_t most = s->config.queue_bytes > (64u << 20) ? s->config.queue_bytes
                                                                  : (64u << 20);
        if (window_bytes > most)
            return VR_ERROR(VR_ERR_ARG, "streaming from host memory: a chunk of %s spans %u "
                            "vertex ids, a window of %.2f GB per staging slot, more than the "
                            "queue's %.2f GB: the scene's vertex order is not local; stream it "
                            "from the device, or reorder its vertices by first use",
                            o->strategy->name, s->max_window, window_bytes / 1e9,
                            most / 1e9);
    }
    if (s->gts && (st = vr_stream_gts_cut(s)) != VR_OK)
        return st;
#ifdef VR_HAVE_CUDA
    if (s->gpu && (st = vr_stream_cut_gpu(s)) != VR_OK)
        return st;
#endif
    s->cut_kind = (int)o->strategy->kind;
    s->cut_builder = cfg->patch_builder;
    s->cut_limits = limits;
    return VR_OK;
}

/* ---- lifecycle -------------------------------------------------------------------------------- */

void vr_stream_destroy(vr_stream *s)
{
    if (!s)
        return;
#ifdef VR_HAVE_CUDA
    if (s->gpu) {
        /* teardown: nothing to act on if these fail */
        if (s->frame.stream)
            cudaStreamSynchronize((cudaStream_t)s->frame.stream);
        if (s->copies) {
            cudaStreamSynchronize(s->copies);
            cudaStreamDestroy(s->copies);
        }
        vr_stream_unpin(s);
        vr_stream_slots_free(s);
        for (int k = 0; k < VR_STREAM_SLOTS; ++k) {
            if (s->slot[k].loaded)
                cudaEventDestroy(s->slot[k].loaded);
            if (s->slot[k].released)
                cudaEventDestroy(s->slot[k].released);
        }
        if (s->start)
            cudaEventDestroy(s->start);
        if (s->stop)
            cudaEventDestroy(s->stop);
        while (s->held_count) /* the scene's shared copies: the last holder frees each */
            vr_stream_let_go(s, s->held[s->held_count - 1].host);
        void *const bufs[] = {s->d_plan, s->d_seeds};
        vr_cuda_free_all(bufs, VR_COUNT_OF(bufs));
        vr_geometry_destroy(s->geometry);
        vr_raster_frame_free(&s->frame);
    }
#endif
    vr_geometry_result_free(&s->result);
    vr_parts_free(&s->parts);
    void *const host[] = {s->window, s->seeds, s->slice, s->h_stage[0], s->h_stage[1],
                          s->h_stage[2]};
    vr_free_all(host, VR_COUNT_OF(host));
    free(s->vis);
    free(s->chunk_vis);
    free(s->rgba);
    free(s);
}

vr_status vr_stream_create(vr_stream **out, const vr_mesh *m, const vr_stream_config *c, int gpu)
{
    assert(out && m && c);
    *out = NULL;
    const uint64_t cap = c->queue_bytes / VR_QUEUE_BYTES_PER_TRIANGLE;
    if (cap == 0)
        return VR_ERROR(VR_ERR_ARG, "streaming: a queue of %llu bytes holds no triangle (%d "
                        "bytes each)", (unsigned long long)c->queue_bytes,
                        (int)VR_QUEUE_BYTES_PER_TRIANGLE);
    if ((unsigned)c->source >= VR_STREAM_SOURCE_COUNT)
        return VR_ERROR(VR_ERR_ARG, "streaming: unknown source %d", (int)c->source);
    if (c->parts > VR_PARTS_MAX || (c->parts ? c->part >= c->parts : c->part != 0))
        return VR_ERROR(VR_ERR_ARG, "streaming: part %u of %u (1..%u parts)", c->part, c->parts,
                        VR_PARTS_MAX);
    vr_stream *s = calloc(1, sizeof *s);
    if (!s)
        return VR_ERROR(VR_ERR_OOM, "streaming: host struct");
    s->mesh = m;
    s->gpu = gpu != 0;
    s->config = *c;
    const uint32_t tris = m->index_count / 3;
    /* a queue larger than the scene would only waste memory */
    s->capacity = cap < tris ? (uint32_t)cap : (tris ? tris : 1);
    s->cut_kind = -1;
    vr_status st = VR_OK;
    if (!s->gpu) {
        st = vr_geometry_result_alloc(&s->result, s->capacity, m->vertex_count);
    } else {
#ifdef VR_HAVE_CUDA
        st = vr_geometry_create_bounded(&s->geometry, s->capacity);
        if (st == VR_OK)
            st = vr_raster_frame_alloc(&s->frame, 0, 0);
        if (st == VR_OK)
            st = vr_cuda_status(cudaStreamCreateWithFlags(&s->copies, cudaStreamNonBlocking),
                                VR_CUDA_WHERE, "cudaStreamCreateWithFlags (copies)");
        for (int k = 0; k < VR_STREAM_SLOTS && st == VR_OK; ++k)
            if ((st = vr_cuda_status(cudaEventCreateWithFlags(&s->slot[k].loaded,
                                                              cudaEventDisableTiming),
                                     VR_CUDA_WHERE, "cudaEventCreate")) == VR_OK)
                st = vr_cuda_status(cudaEventCreateWithFlags(&s->slot[k].released,
                                                             cudaEventDisableTiming),
                                    VR_CUDA_WHERE, "cudaEventCreate");
        if (st == VR_OK)
            st = vr_cuda_status(cudaEventCreate(&s->start), VR_CUDA_WHERE, "cudaEventCreate");
        if (st == VR_OK)
            st = vr_cuda_status(cudaEventCreate(&s->stop), VR_CUDA_WHERE, "cudaEventCreate");
        /* VR_STREAM_DEVICE: the scene goes up at the first cut (vr_stream_cut_gpu), so a
         * stream that sort-last parts replace before any frame never copies it */
        if (st == VR_OK)
            st = vr_cuda_status(cudaGetDevice(&s->device), VR_CUDA_WHERE, "cudaGetDevice");
#else
        st = VR_ERROR(VR_ERR_NO_DEVICE, "streaming: built without CUDA");
#endif
    }
    if (st != VR_OK) {
        vr_stream_destroy(s);
        return st;
    }
    *out = s;
    return VR_OK;
}

vr_status vr_stream_set_gts(vr_stream *s, const vr_gts *gts)
{
    assert(s);
    vr_status st = VR_OK;
    if (gts && (st = vr_gts_validate(gts, "streaming compressed input")) == VR_OK &&
        ((uint64_t)gts->strip_triangle_count * 3 != s->mesh->index_count ||
         gts->vertex_count != s->mesh->vertex_count))
        st = VR_ERROR(VR_ERR_ARG, "streaming compressed input: the stream has %u strip triangles "
                      "and %u vertices, the renderer's mesh %u triangles and %u vertices (it "
                      "must be the stream's own decode)", gts->strip_triangle_count,
                      gts->vertex_count, s->mesh->index_count / 3, s->mesh->vertex_count);
    if (st != VR_OK)
        return st;
    /* the next frame cuts anew: seeds and slices, and the device side of either input (the
     * old stream's arrays let go here, the new one's held at the cut) */
    s->cut_kind = -1;
#ifdef VR_HAVE_CUDA
    if (s->gpu) {
        VR_CUDA_CHECK(cudaStreamSynchronize((cudaStream_t)s->frame.stream));
        VR_CUDA_CHECK(cudaStreamSynchronize(s->copies));
        vr_stream_unpin(s);
        const void *const old[VR_GTS_ARRAYS] = {s->gts_whole.c, s->gts_whole.inc,
                                                s->gts_whole.s};
        for (int a = 0; a < VR_GTS_ARRAYS; ++a) {
            if (s->gts)
                vr_stream_let_go(s, old[a]);
            s->d_gts[a] = NULL;
        }
        if ((st = vr_cuda_free((void **)&s->d_seeds, "seeds")) != VR_OK)
            return st;
    }
#endif
    memset(&s->gts_whole, 0, sizeof s->gts_whole);
    if (gts)
        vr_gts_batch_source_host(&s->gts_whole, gts);
    s->gts = gts;
    return VR_OK;
}

/* Chunk k's raster configuration: its stream positions in the words. */
static vr_raster_config vr_stream_raster_config(const vr_render_options *o, const vr_part *c)
{
    vr_raster_config rc = o->raster;
    rc.slot_base = c->first_tri;
    return rc;
}

/* What streaming cannot draw (multi is refused by the cut, vr_parts_make_bounded). */
static vr_status vr_stream_check_shading(const vr_resolve_params *sh)
{
    if (sh->mode == VR_SHADE_HEATMAP)
        return VR_ERROR(VR_ERR_ARG, "streaming: the heatmap needs per-vertex shading counts of "
                        "the whole scene (4 bytes per vertex on the device); render it without "
                        "streaming");
    return VR_OK;
}

/* ---- CPU twin --------------------------------------------------------------------------------- */

/* Chunk k's compressed input for the CPU twin: VR_STREAM_HOST copies its slices into host
 * staging as the GPU copies them into a slot (and flags ids outside its vertex window), otherwise
 * the whole arrays are read in place; seeds from the cut's. */
static const vr_gts_batch_source *vr_stream_gts_cpu(vr_stream *s, uint32_t k,
                                                    vr_gts_batch_source *src)
{
    const vr_part *c = &s->parts.part[k];
    const vr_gts_batch_source *w = &s->gts_whole;
    const uint32_t *whole[VR_GTS_ARRAYS] = {w->c, w->inc, w->s};
    const int host = s->config.source == VR_STREAM_HOST;
    for (int a = 0; a < VR_GTS_ARRAYS && host; ++a) {
        const vr_gts_slice *sl = &s->slice[k];
        if (sl->hi[a] > sl->lo[a])
            memcpy(s->h_stage[a], whole[a] + sl->lo[a], ((size_t)sl->hi[a] - sl->lo[a]) * 4);
    }
    const uint32_t *const *arrays = host ? (const uint32_t *const *)s->h_stage : whole;
    *src = vr_stream_gts_chunk(s, k, arrays, host, s->seeds + c->batch_begin);
    if (host)
        src->vertex_lo = s->window[2 * k];
    return src;
}

static vr_status vr_stream_frame_cpu(vr_stream *s, uint8_t *rgba, const vr_render_options *o,
                                     const vr_reuse_params *cfg, const vr_resolve_params *shade,
                                     vr_render_stats *st)
{
    const size_t pixels = (size_t)o->raster.width * o->raster.height;
    if (pixels > s->pixel_capacity) {
        free(s->vis), free(s->chunk_vis), free(s->rgba);
        s->pixel_capacity = 0;
        s->vis = malloc(pixels * sizeof *s->vis);
        s->chunk_vis = malloc(pixels * sizeof *s->chunk_vis);
        s->rgba = malloc(pixels * 4);
        if (!s->vis || !s->chunk_vis || !s->rgba)
            return VR_ERROR(VR_ERR_OOM, "streaming: %ux%u buffers", o->raster.width,
                            o->raster.height);
        s->pixel_capacity = pixels;
    }
    uint8_t *out = rgba ? rgba : s->rgba;
    for (size_t i = 0; i < pixels; ++i)
        s->vis[i] = VR_VIS_EMPTY;
    const vr_parts *p = &s->parts;
    vr_resolve_params sh = *shade;
    sh.part = VR_RESOLVE_PART_KEEP;
    vr_status e = VR_OK;
    uint64_t invocations = 0;
    double geometry_ms = 0;
    if (p->count == 0) /* nothing to draw: every pixel the background */
        return vr_resolve_ref(out, s->vis, &s->result.queue, 0, &o->raster, &sh,
                              &st->raster.resolve_ms);
    vr_reuse_params run = *cfg;
    vr_gts_batch_source src;
    for (uint32_t k = 0; k < p->count && e == VR_OK; ++k) {
        const vr_part *c = &p->part[k];
        const uint32_t tris = c->mesh.index_count / 3;
        if (s->gts) /* its batches decoded from the stream, from the slices the GPU would copy */
            run.gts = vr_stream_gts_cpu(s, k, &src);
        /* the result viewed as the chunk's: its first `tris` slots */
        s->result.triangles = tris;
        const double t0 = vr_now_ms();
        e = vr_geometry_ref_given(&s->result, o->strategy, &c->mesh, &run,
                                  c->given.count ? &c->given : NULL);
        s->result.triangles = s->capacity;
        geometry_ms += vr_now_ms() - t0;
        if (e != VR_OK)
            break;
        const vr_counters *n = &s->result.counters;
        if (n->queue_count != tris || n->overflow != 0)
            return VR_ERROR(VR_ERR_OVERFLOW, "streaming: the chunk from stream position %u: %s "
                            "wrote %u of %u triangles (%u overflowed)", c->first_tri,
                            o->strategy->name, n->queue_count, tris, n->overflow);
        invocations += n->invocations;
        const vr_raster_config rc = vr_stream_raster_config(o, c);
        vr_raster_stats rs;
        memset(&rs, 0, sizeof rs);
        if ((e = vr_raster_ref(s->chunk_vis, &s->result.queue, tris, &rc, &rs)) != VR_OK)
            break;
        st->raster.triangles += rs.triangles;
        st->raster.rejected += rs.rejected;
        st->raster.clipped += rs.clipped;
        st->raster.fragments += rs.fragments;
        st->raster.raster_ms += rs.raster_ms;
        for (size_t i = 0; i < pixels; ++i)
            if (s->chunk_vis[i] < s->vis[i])
                s->vis[i] = s->chunk_vis[i];
        sh.tri_batch = vr_parts_batch_ids(p, c); /* by the chunk's triangle ids */
        sh.tri_batch_count = tris;
        double ms = 0;
        e = vr_resolve_ref(out, s->vis, &s->result.queue, tris, &rc, &sh, &ms);
        st->raster.resolve_ms += ms;
    }
    if (e != VR_OK)
        return e;
    st->geometry_ms = geometry_ms;
    s->invocations = invocations;
    s->counted = 1;
    return VR_OK;
}

/* ---- GPU -------------------------------------------------------------------------------------- */

#ifdef VR_HAVE_CUDA
/* VR_STREAM_HOST, compressed: enqueues the copies of chunk k's seeds (its batches' and the next
 * chunk's first) and its slices of C, INC and S into slot `sl` on the copy stream, and makes
 * the slot's source read them. The slices were checked against the arrays at the cut. */
static vr_status vr_stream_stage_gts(vr_stream *s, uint32_t k, vr_stream_slot *sl,
                                     uint64_t *bytes)
{
    const vr_part *c = &s->parts.part[k];
    const vr_gts_batch_source *w = &s->gts_whole;
    const vr_gts_slice *slice = &s->slice[k];
    const uint32_t *const whole[VR_GTS_ARRAYS] = {w->c, w->inc, w->s};
    cudaStream_t x = s->copies;
    const uint32_t seeds = c->batch_end - c->batch_begin + (c->batch_end < s->parts.batch_count);
    const size_t sb = (size_t)seeds * sizeof *s->seeds;
    VR_CUDA_CHECK(cudaMemcpyAsync(sl->d_seeds, s->seeds + c->batch_begin, sb,
                                  cudaMemcpyHostToDevice, x));
    *bytes += sb;
    for (int a = 0; a < VR_GTS_ARRAYS; ++a) {
        const size_t b = ((size_t)slice->hi[a] - slice->lo[a]) * 4;
        if (!b)
            continue;
        VR_CUDA_CHECK(cudaMemcpyAsync(sl->d_gts[a], whole[a] + slice->lo[a], b,
                                      cudaMemcpyHostToDevice, x));
        *bytes += b;
    }
    const uint32_t *const staged[VR_GTS_ARRAYS] = {sl->d_gts[0], sl->d_gts[1], sl->d_gts[2]};
    sl->src = vr_stream_gts_chunk(s, k, staged, 1, sl->d_seeds);
    return VR_OK;
}

/* Enqueues on the copy stream what chunk k reads into its slot, after the slot's last reader;
 * *bytes grows by what was copied. Returns the chunk's view for the geometry stage. */
static vr_status vr_stream_stage(vr_stream *s, uint32_t k, int batches_needed,
                                 vr_geometry_chunk *ch, uint64_t *bytes)
{
    const vr_part *c = &s->parts.part[k];
    vr_stream_slot *sl = &s->slot[k % VR_STREAM_SLOTS];
    const uint32_t tris = c->mesh.index_count / 3;
    cudaStream_t x = s->copies;
    memset(ch, 0, sizeof *ch);
    ch->triangles = tris;
    ch->vertex_count = s->mesh->vertex_count;
    VR_CUDA_CHECK(cudaStreamWaitEvent(x, sl->released, 0));
    if (c->given.count) {
        const size_t b = ((size_t)c->given.count + 1) * 4;
        VR_CUDA_CHECK(cudaMemcpyAsync(sl->d_starts, c->given.starts, b, cudaMemcpyHostToDevice, x));
        *bytes += b;
        ch->d_starts = sl->d_starts;
        ch->batch_count = c->given.count;
        /* plans: cluster bounds are read only with culling in the stage, which streaming
         * refuses; the renderer culls in the rasterizer */
        ch->d_bounds = NULL;
    }
    if (batches_needed) {
        VR_CUDA_CHECK(cudaMemcpyAsync(sl->d_tri_batch, vr_parts_batch_ids(&s->parts, c),
                                      (size_t)tris * 4, cudaMemcpyHostToDevice, x));
        *bytes += (size_t)tris * 4;
    }
    if (s->config.source == VR_STREAM_HOST) {
        const uint32_t lo = s->window[2 * k], hi = s->window[2 * k + 1];
        const size_t vb = (size_t)(hi - lo) * 12;
        if (s->gts) {
            vr_status e = vr_stream_stage_gts(s, k, sl, bytes);
            if (e != VR_OK)
                return e;
            /* a decoded id outside the window is flagged, never read (gts_batch.h) */
            sl->src.vertex_lo = lo;
            ch->vertex_count = hi;
        } else {
            const size_t ib = (size_t)c->mesh.index_count * 4;
            VR_CUDA_CHECK(cudaMemcpyAsync(sl->d_indices, c->mesh.indices, ib,
                                          cudaMemcpyHostToDevice, x));
            *bytes += ib;
            ch->d_indices = sl->d_indices;
        }
        VR_CUDA_CHECK(cudaMemcpyAsync(sl->d_positions, s->mesh->positions + 3 * (size_t)lo, vb,
                                      cudaMemcpyHostToDevice, x));
        VR_CUDA_CHECK(cudaMemcpyAsync(sl->d_normals, s->mesh->normals + 3 * (size_t)lo, vb,
                                      cudaMemcpyHostToDevice, x));
        *bytes += 2 * vb;
        /* the window holds vertices lo .. hi - 1: based so that vertex id v reads element v
         * (the kernels add 3 v back; nothing below the window is ever read) */
        ch->d_positions = sl->d_positions - 3 * (size_t)lo;
        ch->d_normals = sl->d_normals - 3 * (size_t)lo;
    } else {
        if (s->gts) {
            const uint32_t *const whole[VR_GTS_ARRAYS] = {s->d_gts[0], s->d_gts[1], s->d_gts[2]};
            sl->src = vr_stream_gts_chunk(s, k, whole, 0, s->d_seeds + c->batch_begin);
        } else {
            ch->d_indices = s->d_stream + 3 * (size_t)c->first_tri;
        }
        ch->d_positions = s->d_positions;
        ch->d_normals = s->d_normals;
    }
    ch->gts = s->gts ? &sl->src : NULL;
    VR_CUDA_CHECK(cudaEventRecord(sl->loaded, x));
    return VR_OK;
}

/* Every chunk through the geometry stage (and with `o`, the rasterizer and the resolve) on the
 * frame's stream; waits for the end and checks the tally. */
static vr_status vr_stream_pass(vr_stream *s, const vr_reuse_ops *ops, const vr_render_options *o,
                                const vr_reuse_params *cfg, const vr_resolve_params *shade,
                                int count, vr_render_stats *st)
{
    cudaStream_t cs = (cudaStream_t)s->frame.stream;
    const vr_parts *p = &s->parts;
    vr_reuse_params run = *cfg;
    run.count = count;
    const int draw = o != NULL;
    const int batches_needed = draw && shade->mode == VR_SHADE_BATCHES;
    vr_resolve_params sh;
    vr_status e;
    uint64_t bytes = 0;
    if ((e = vr_geometry_tally_reset(s->geometry, cs)) != VR_OK)
        return e;
    VR_CUDA_CHECK(cudaEventRecord(s->start, cs)); /* the frame's time includes the clear */
    if (draw) {
        sh = *shade;
        sh.part = VR_RESOLVE_PART_KEEP;
        if ((e = vr_raster_stream_begin(s->frame.d_vis, &o->raster, s->frame.d_scratch, cs)) !=
            VR_OK)
            return e;
    }
    const vr_queue *q = vr_geometry_device_queue(s->geometry);
    if (draw && p->count == 0) /* nothing to draw: every pixel the background */
        e = vr_resolve_stream_chunk(s->frame.d_rgba, s->frame.d_vis, q, 0, &o->raster, &sh, cs);
    for (uint32_t k = 0; k < p->count && e == VR_OK; ++k) {
        const vr_part *c = &p->part[k];
        vr_stream_slot *sl = &s->slot[k % VR_STREAM_SLOTS];
        vr_geometry_chunk ch;
        if ((e = vr_stream_stage(s, k, batches_needed, &ch, &bytes)) != VR_OK)
            break;
        VR_CUDA_CHECK(cudaStreamWaitEvent(cs, sl->loaded, 0));
        if ((e = vr_geometry_run_chunk(s->geometry, ops, &run, &ch, cs)) !=
            VR_OK)
            break;
        if (draw) {
            const vr_raster_config rc = vr_stream_raster_config(o, c);
            sh.tri_batch = sl->d_tri_batch;
            sh.tri_batch_count = ch.triangles;
            if ((e = vr_raster_stream_chunk(s->frame.d_vis, q, ch.triangles, &rc,
                                            s->frame.d_scratch, cs)) != VR_OK ||
                (e = vr_resolve_stream_chunk(s->frame.d_rgba, s->frame.d_vis, q, ch.triangles,
                                             &rc, &sh, cs)) != VR_OK)
                break;
        }
        VR_CUDA_CHECK(cudaEventRecord(sl->released, cs));
    }
    if (e != VR_OK) {
        /* error path: the chunks enqueued so far finish before the buffers can be reused; the
         * message names the failing call, so the waits' results are not reported over it */
        cudaStreamSynchronize(cs);
        cudaStreamSynchronize(s->copies);
        return e;
    }
    VR_CUDA_CHECK(cudaEventRecord(s->stop, cs));
    vr_geometry_tally t;
    if ((e = vr_geometry_tally_read(s->geometry, &t, cs)) != VR_OK)
        return e;
    if (t.gts_err) /* as the in-core stage reports it (vr_geometry_run) */
        return VR_ERROR(VR_ERR_FORMAT, "%s: compressed input is malformed (error bits 0x%x): %s "
                        "(streamed in %u chunks)", ops->name, t.gts_err,
                        vr_gts_error_text(t.gts_err), p->count);
    /* with valid input every chunk writes its triangles once; compressed batches that decode to
     * other triangles than the cut's came from a stream that was damaged after the cut (a
     * decodable change) or is not this scene's: bad input, not an overflow */
    const uint32_t share = p->tri_end - p->tri_begin; /* a sort-last part's, or the whole */
    if (s->gts && (t.bad_chunks != 0 || (count && t.triangles != share)))
        return VR_ERROR(VR_ERR_FORMAT, "%s: the compressed batches decode to other triangles than "
                        "the scene's (%u of %u chunks; %llu of %u triangles written): the stream "
                        "is damaged or belongs to another scene", ops->name, t.bad_chunks,
                        p->count, t.triangles, share);
    if (t.bad_chunks != 0 || t.chunks != p->count || (count && t.triangles != share))
        return VR_ERROR(VR_ERR_OVERFLOW, "streaming: %u of %u chunks did not write each of "
                        "their triangles once (%llu of %u written)", t.bad_chunks, p->count,
                        t.triangles, share);
    if (count) {
        s->invocations = t.invocations;
        s->counted = 1;
    }
    if (!draw)
        return VR_OK;
    float ms = 0;
    VR_CUDA_CHECK(cudaEventElapsedTime(&ms, s->start, s->stop));
    st->stream_ms = ms;
    st->copied_bytes = bytes;
    return vr_raster_stream_totals(&st->raster, s->frame.d_scratch, cs);
}

static vr_status vr_stream_frame_gpu(vr_stream *s, uint8_t *rgba, const vr_render_options *o,
                                     const vr_reuse_params *cfg, const vr_resolve_params *shade,
                                     vr_render_stats *st)
{
    const size_t pixels = (size_t)o->raster.width * o->raster.height;
    vr_status e = vr_raster_frame_grow(&s->frame, pixels);
    if (e != VR_OK)
        return e;
    if (!s->counted) { /* invocations once per cut, outside the timed frame */
        if ((e = vr_stream_pass(s, o->strategy, NULL, cfg, NULL, 1, st)) != VR_OK)
            return e;
    }
    if ((e = vr_stream_pass(s, o->strategy, o, cfg, shade, 0, st)) != VR_OK)
        return e;
    st->pipeline_bytes = vr_geometry_device_bytes(s->geometry) + s->slot_bytes +
                         s->frame.pixel_capacity * 12 + vr_raster_scratch_bytes();
    /* VR_STREAM_DEVICE: the scene's shared copies, and the cut's own plan order or seeds */
    st->scene_shared_bytes = 0;
    for (int i = 0; i < s->held_count; ++i)
        st->scene_shared_bytes += s->held[i].bytes;
    st->scene_bytes = st->scene_shared_bytes +
                      (s->d_plan ? (uint64_t)s->mesh->index_count * 4 : 0) +
                      (s->d_seeds ? (uint64_t)s->parts.batch_count * sizeof *s->seeds : 0);
    if (!rgba)
        return VR_OK;
    const double t0 = vr_now_ms();
    VR_CUDA_CHECK(cudaMemcpyAsync(rgba, s->frame.d_rgba, pixels * 4, cudaMemcpyDeviceToHost,
                                  (cudaStream_t)s->frame.stream));
    VR_CUDA_CHECK(cudaStreamSynchronize((cudaStream_t)s->frame.stream));
    st->raster.download_ms = vr_now_ms() - t0;
    return VR_OK;
}
#endif

vr_status vr_stream_frame(vr_stream *s, uint8_t *rgba, const vr_render_options *o,
                          const vr_reuse_params *cfg, const vr_resolve_params *shade,
                          vr_render_stats *st)
{
    assert(s && o && cfg && shade && st);
    vr_status e = vr_stream_check_shading(shade);
    if (e == VR_OK)
        e = vr_stream_cut(s, o, cfg);
    if (e != VR_OK)
        return e;
    s->last_pixels = 0;
#ifdef VR_HAVE_CUDA
    e = s->gpu ? vr_stream_frame_gpu(s, rgba, o, cfg, shade, st)
               : vr_stream_frame_cpu(s, rgba, o, cfg, shade, st);
#else
    e = s->gpu ? VR_ERROR(VR_ERR_NO_DEVICE, "streaming: built without CUDA")
               : vr_stream_frame_cpu(s, rgba, o, cfg, shade, st);
#endif
    if (e != VR_OK)
        return e;
    s->last_pixels = (size_t)o->raster.width * o->raster.height;
    st->triangles = s->parts.triangles;
    st->batches = s->parts.batch_count;
    st->invocations = s->invocations;
    st->chunks = s->parts.count;
    return VR_OK;
}

vr_status vr_stream_read_vis(vr_stream *s, uint64_t *vis, size_t pixels)
{
    assert(s && vis);
    if (pixels == 0 || pixels != s->last_pixels)
        return VR_ERROR(VR_ERR_ARG, "streaming: no frame of %zu pixels to read", pixels);
    if (!s->gpu) {
        memcpy(vis, s->vis, pixels * sizeof *vis);
        return VR_OK;
    }
#ifdef VR_HAVE_CUDA
    VR_CUDA_CHECK(cudaMemcpyAsync(vis, s->frame.d_vis, pixels * 8, cudaMemcpyDeviceToHost,
                                  (cudaStream_t)s->frame.stream));
    VR_CUDA_CHECK(cudaStreamSynchronize((cudaStream_t)s->frame.stream));
    return VR_OK;
#else
    return VR_ERROR(VR_ERR_NO_DEVICE, "streaming: built without CUDA");
#endif
}

vr_status vr_stream_device_frame(vr_stream *s, size_t pixels, uint64_t **d_vis, uint8_t **d_rgba,
                                 void **stream)
{
    assert(s && d_vis && d_rgba && stream);
    if (!s->gpu || pixels == 0 || pixels != s->last_pixels)
        return VR_ERROR(VR_ERR_ARG, "streaming: no GPU frame of %zu pixels", pixels);
#ifdef VR_HAVE_CUDA
    *d_vis = s->frame.d_vis;
    *d_rgba = s->frame.d_rgba;
    *stream = s->frame.stream;
    return VR_OK;
#else
    return VR_ERROR(VR_ERR_NO_DEVICE, "streaming: built without CUDA");
#endif
}
