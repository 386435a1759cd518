/* cache.c - cache models of sim/: the ideal cache, k-entry FIFO and LRU post-transform caches
 * (Hoppe 1999 style, one vertex stream) and the per-multiprocessor parallel cache that Kenzel
 * et al. 2018 (Sec. 4.1) compare batching against: waves of concurrent invocations that can
 * only reuse what an earlier wave of the same multiprocessor produced.
 * Try: `vreuse_tests sim/fifo`, `vreuse_tests sim/parallel`.
 */
#include "sim/sim_private.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>


vr_status vr_sim_check_input(const uint32_t *indices, uint32_t index_count,
                             uint32_t vertex_count, const char *what)
{
    assert(indices != NULL || index_count == 0);
    vr_mesh view = {.vertex_count = vertex_count, .index_count = index_count,
                    .indices = (uint32_t *)indices};
    return vr_mesh_validate(&view, what);
}

void vr_sim_finish(vr_sim_result *out, uint32_t index_count, uint64_t shaded, uint64_t batches,
                   uint64_t passes)
{
    out->passes = passes;
    out->indices = index_count;
    out->triangles = index_count / 3;
    out->shaded_vertices = shaded;
    out->batches = batches;
    out->reuse = index_count ? 1.0 - (double)shaded / (double)index_count : 0.0;
    out->shaded_per_tri = index_count ? (double)shaded / (double)(index_count / 3) : 0.0;
}

vr_status vr_sim_ideal_unchecked(vr_sim_result *out, const uint32_t *indices,
                                 uint32_t index_count, uint32_t vertex_count,
                                 uint32_t *shade_counts)
{
    uint8_t *seen = calloc(vertex_count, 1);
    if (!seen)
        return VR_ERROR(VR_ERR_OOM, "sim ideal: %u-byte scratch array", vertex_count);
    vr_sim_clear_counts(shade_counts, vertex_count);
    uint64_t shaded = 0;
    for (uint32_t i = 0; i < index_count; ++i) {
        uint32_t v = indices[i];
        if (!seen[v]) {
            seen[v] = 1;
            ++shaded;
            if (shade_counts)
                shade_counts[v] = 1;
        }
    }
    free(seen);
    vr_sim_finish(out, index_count, shaded, 0, 0);
    return VR_OK;
}

vr_status vr_sim_ideal(vr_sim_result *out, const uint32_t *indices, uint32_t index_count,
                       uint32_t vertex_count, uint32_t *shade_counts)
{
    assert(out != NULL);
    vr_status s = vr_sim_check_input(indices, index_count, vertex_count, "vr_sim_ideal");
    return s ? s : vr_sim_ideal_unchecked(out, indices, index_count, vertex_count, shade_counts);
}

/* FIFO as a miss counter plus one insertion stamp per vertex (meshoptimizer's formulation):
 * a vertex is still cached while at most `entries` insertions, its own included, have happened
 * since it went in. O(1) per index, no queue. */
vr_status vr_sim_fifo_unchecked(vr_sim_result *out, const uint32_t *indices,
                                uint32_t index_count, uint32_t vertex_count, uint32_t entries,
                                uint32_t *shade_counts)
{
    assert(entries >= 1);
    uint32_t *stamp = calloc(vertex_count, sizeof *stamp); /* 0: never inserted; else misses+1 */
    if (!stamp)
        return VR_ERROR(VR_ERR_OOM, "sim fifo: %u-vertex scratch array", vertex_count);
    vr_sim_clear_counts(shade_counts, vertex_count);
    uint32_t misses = 0; /* <= index_count < 2^32, so stamps never wrap */
    for (uint32_t i = 0; i < index_count; ++i) {
        if ((uint64_t)i + VR_PREFETCH_AHEAD < index_count)
            VR_PREFETCH(&stamp[indices[i + VR_PREFETCH_AHEAD]]);
        uint32_t v = indices[i], s = stamp[v];
        if (s == 0 || misses - (s - 1) > entries) {
            stamp[v] = ++misses;
            if (shade_counts)
                ++shade_counts[v];
        }
    }
    free(stamp);
    vr_sim_finish(out, index_count, misses, 0, 0);
    return VR_OK;
}

/* A k-entry cache model (vr_sim_fifo_unchecked, vr_sim_lru_unchecked) behind the checks of its
 * public entry point `what`: at least one entry, then the index buffer. */
typedef vr_status (*cache_model)(vr_sim_result *out, const uint32_t *indices, uint32_t index_count,
                                 uint32_t vertex_count, uint32_t entries, uint32_t *shade_counts);

static vr_status run_cache(cache_model model, const char *what, vr_sim_result *out,
                           const uint32_t *indices, uint32_t index_count, uint32_t vertex_count,
                           uint32_t entries, uint32_t *shade_counts)
{
    assert(out != NULL);
    if (entries < 1)
        return VR_ERROR(VR_ERR_ARG, "%s: cache entries must be >= 1, got 0", what);
    vr_status s = vr_sim_check_input(indices, index_count, vertex_count, what);
    return s ? s : model(out, indices, index_count, vertex_count, entries, shade_counts);
}

vr_status vr_sim_fifo(vr_sim_result *out, const uint32_t *indices, uint32_t index_count,
                      uint32_t vertex_count, uint32_t entries, uint32_t *shade_counts)
{
    return run_cache(vr_sim_fifo_unchecked, "vr_sim_fifo", out, indices, index_count,
                     vertex_count, entries, shade_counts);
}

/* --- LRU: a doubly linked list threaded through one per-vertex slot array ------------------
 * Slot v holds v's neighbours when v is cached (next == LRU_ABSENT otherwise); slot
 * vertex_count is the sentinel (next: most recent, prev: least recent). Every operation is
 * O(1), and clearing walks only the cached entries, so one array serves many caches in turn. */
#define LRU_ABSENT 0xFFFFFFFFu

typedef struct lru_slot {
    uint32_t prev, next;
} lru_slot;

typedef struct lru_cache {
    lru_slot *slot;    /* vertex_count + 1 */
    uint32_t sentinel; /* = vertex_count */
    uint32_t size, capacity;
} lru_cache;

static vr_status lru_init(lru_cache *c, uint32_t vertex_count, uint32_t capacity, const char *what)
{
    if (vertex_count == LRU_ABSENT)
        return VR_ERROR(VR_ERR_OVERFLOW, "%s: vertex count %u leaves no id for the list sentinel",
                        what, vertex_count);
    c->slot = malloc(((size_t)vertex_count + 1) * sizeof *c->slot);
    if (!c->slot)
        return VR_ERROR(VR_ERR_OOM, "%s: %u-vertex LRU slot array", what, vertex_count);
    memset(c->slot, 0xFF, (size_t)vertex_count * sizeof *c->slot);
    c->sentinel = vertex_count;
    c->slot[vertex_count].prev = c->slot[vertex_count].next = vertex_count;
    c->size = 0;
    c->capacity = capacity;
    return VR_OK;
}

static inline int lru_has(const lru_cache *c, uint32_t v) { return c->slot[v].next != LRU_ABSENT; }

static inline void lru_unlink(lru_cache *c, uint32_t v)
{
    lru_slot s = c->slot[v];
    c->slot[s.prev].next = s.next;
    c->slot[s.next].prev = s.prev;
}

static inline void lru_push_front(lru_cache *c, uint32_t v)
{
    uint32_t first = c->slot[c->sentinel].next;
    c->slot[v].prev = c->sentinel;
    c->slot[v].next = first;
    c->slot[first].prev = v;
    c->slot[c->sentinel].next = v;
}

/* Makes v the most recent entry, inserting it (and evicting the least recent) if absent.
 * Returns 1 on a hit. */
static inline int lru_touch(lru_cache *c, uint32_t v)
{
    if (lru_has(c, v)) {
        if (c->slot[c->sentinel].next != v) {
            lru_unlink(c, v);
            lru_push_front(c, v);
        }
        return 1;
    }
    if (c->size == c->capacity) {
        uint32_t victim = c->slot[c->sentinel].prev;
        lru_unlink(c, victim);
        c->slot[victim].next = LRU_ABSENT;
    } else {
        ++c->size;
    }
    lru_push_front(c, v);
    return 0;
}

static void lru_clear(lru_cache *c)
{
    uint32_t v = c->slot[c->sentinel].next;
    while (v != c->sentinel) {
        uint32_t next = c->slot[v].next;
        c->slot[v].next = LRU_ABSENT;
        v = next;
    }
    c->slot[c->sentinel].prev = c->slot[c->sentinel].next = c->sentinel;
    c->size = 0;
}

vr_status vr_sim_lru_unchecked(vr_sim_result *out, const uint32_t *indices, uint32_t index_count,
                               uint32_t vertex_count, uint32_t entries, uint32_t *shade_counts)
{
    assert(entries >= 1);
    lru_cache c = {0};
    vr_status s = lru_init(&c, vertex_count, entries, "sim lru");
    if (s)
        return s;
    vr_sim_clear_counts(shade_counts, vertex_count);
    uint64_t misses = 0;
    for (uint32_t i = 0; i < index_count; ++i) {
        if ((uint64_t)i + VR_PREFETCH_AHEAD < index_count)
            VR_PREFETCH(&c.slot[indices[i + VR_PREFETCH_AHEAD]]);
        uint32_t v = indices[i];
        if (!lru_touch(&c, v)) {
            ++misses;
            if (shade_counts)
                ++shade_counts[v];
        }
    }
    free(c.slot);
    vr_sim_finish(out, index_count, misses, 0, 0);
    return VR_OK;
}

vr_status vr_sim_lru(vr_sim_result *out, const uint32_t *indices, uint32_t index_count,
                     uint32_t vertex_count, uint32_t entries, uint32_t *shade_counts)
{
    return run_cache(vr_sim_lru_unchecked, "vr_sim_lru", out, indices, index_count, vertex_count,
                     entries, shade_counts);
}

/* --- parallel per-multiprocessor cache -------------------------------------------------- */

/* One wave of concurrent invocations: first every lookup against the cache as it was at the
 * wave's start (a vertex shaded inside this wave is not available yet, so duplicates miss
 * twice), then the wave's results enter the cache in index order. Returns the misses. */
static uint32_t parallel_wave(lru_cache *c, const uint32_t *wave, uint32_t count,
                              uint32_t *shade_counts)
{
    uint32_t misses = 0;
    for (uint32_t i = 0; i < count; ++i)
        VR_PREFETCH(&c->slot[wave[i]]);
    for (uint32_t i = 0; i < count; ++i)
        if (!lru_has(c, wave[i])) {
            ++misses;
            if (shade_counts)
                ++shade_counts[wave[i]];
        }
    for (uint32_t i = 0; i < count; ++i)
        lru_touch(c, wave[i]);
    return misses;
}

vr_status vr_sim_parallel_unchecked(vr_sim_result *out, const uint32_t *indices,
                                    uint32_t index_count, uint32_t vertex_count,
                                    uint32_t sm_count, uint32_t wave_size, uint32_t entries,
                                    vr_sim_assign assign, uint32_t *shade_counts)
{
    assert(sm_count >= 1 && wave_size >= 1 && entries >= 1);
    assert(assign == VR_SIM_CONTIGUOUS || assign == VR_SIM_ROUNDROBIN);
    lru_cache c = {0};
    vr_status s = lru_init(&c, vertex_count, entries, "sim parallel");
    if (s)
        return s;
    vr_sim_clear_counts(shade_counts, vertex_count);
    /* Multiprocessors share nothing, so simulating them one after another on one slot array
     * gives the same counts as interleaving them. */
    uint64_t misses = 0, waves = 0;
    const uint64_t tri_count = index_count / 3;
    for (uint32_t sm = 0; sm < sm_count; ++sm) {
        lru_clear(&c);
        if (assign == VR_SIM_CONTIGUOUS) {
            /* Whole triangles [sm*T/S, (sm+1)*T/S); waves run back to back inside the range. */
            uint64_t begin = 3 * (tri_count * sm / sm_count);
            uint64_t end = 3 * (tri_count * (sm + 1) / sm_count);
            for (uint64_t w = begin; w < end; w += wave_size, ++waves) {
                uint32_t n = (uint32_t)(end - w < wave_size ? end - w : wave_size);
                misses += parallel_wave(&c, indices + w, n, shade_counts);
            }
        } else {
            /* Chunk k (one wave's worth of indices) goes to multiprocessor k mod S. */
            for (uint64_t w = (uint64_t)sm * wave_size; w < index_count;
                 w += (uint64_t)sm_count * wave_size, ++waves) {
                uint32_t n = (uint32_t)(index_count - w < wave_size ? index_count - w : wave_size);
                misses += parallel_wave(&c, indices + w, n, shade_counts);
            }
        }
    }
    free(c.slot);
    vr_sim_finish(out, index_count, misses, waves, 0);
    return VR_OK;
}

vr_status vr_sim_parallel(vr_sim_result *out, const uint32_t *indices, uint32_t index_count,
                          uint32_t vertex_count, uint32_t sm_count, uint32_t wave_size,
                          uint32_t entries, vr_sim_assign assign, uint32_t *shade_counts)
{
    assert(out != NULL);
    if (sm_count < 1 || wave_size < 1 || entries < 1)
        return VR_ERROR(VR_ERR_ARG,
                        "vr_sim_parallel: multiprocessors (%u), wave size (%u) and cache "
                        "entries (%u) must all be >= 1",
                        sm_count, wave_size, entries);
    if ((unsigned)assign >= VR_SIM_ASSIGN_COUNT)
        return VR_ERROR(VR_ERR_ARG, "vr_sim_parallel: unknown assignment %d", (int)assign);
    vr_status s = vr_sim_check_input(indices, index_count, vertex_count, "vr_sim_parallel");
    return s ? s
             : vr_sim_parallel_unchecked(out, indices, index_count, vertex_count, sm_count,
                                         wave_size, entries, assign, shade_counts);
}
