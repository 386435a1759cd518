/* program.c - the CPU twin of the general reuse API (reuse/program.h): the batches of every
 * strategy, the same as the renderer's twins form them, with the user's functions in place of
 * the vertex shader and the queue store. Try: `vreuse_tests reuse/program`.
 */
#include "reuse/program.h"

#include "reuse/ref_common.h" /* vr_ref_warp_round */

#include <assert.h>
#include <stdlib.h>
#include <string.h>

int vr_program_dynamic(vr_reuse_kind kind)
{
    return kind == VR_REUSE_HASH || kind == VR_REUSE_PHASH || kind == VR_REUSE_SORT;
}

int vr_program_planned(vr_reuse_kind kind)
{
    return kind == VR_REUSE_PATCH || kind == VR_REUSE_MESHLET;
}

vr_batch_limits vr_program_limits_default(uint32_t arity)
{
    vr_batch_limits l = vr_batch_limits_paper();
    if (arity >= 1 && arity <= VR_PROGRAM_ARITY_MAX) {
        l.max_indices = l.max_indices / arity * arity;
        l.batch_indices = l.batch_indices / arity * arity;
    }
    return l;
}

vr_status vr_program_check(vr_reuse_kind kind, const vr_program_params *p, const char *who)
{
    assert(p && who);
    const vr_batch_limits *l = &p->limits;
    const uint32_t a = p->arity;
    if ((unsigned)kind >= VR_REUSE_KIND_COUNT)
        return VR_ERROR(VR_ERR_ARG, "%s: unknown strategy %d", who, (int)kind);
    if (a < 1 || a > VR_PROGRAM_ARITY_MAX)
        return VR_ERROR(VR_ERR_ARG, "%s: arity %u must be in 1..%u", who, a, VR_PROGRAM_ARITY_MAX);
    if (p->index_count % a != 0)
        return VR_ERROR(VR_ERR_FORMAT, "%s: %u indices are no whole number of %u-index primitives",
                        who, p->index_count, a);
    if (p->index_count && !p->indices)
        return VR_ERROR(VR_ERR_ARG, "%s: %u indices but no index buffer", who, p->index_count);
    if (p->count && !p->counters)
        return VR_ERROR(VR_ERR_ARG, "%s: counting needs counters", who);
    if (l->block_size < VR_BLOCK_MIN || l->block_size > VR_BLOCK_MAX || l->block_size % 32)
        return VR_ERROR(VR_ERR_ARG, "%s: block size %u must be a multiple of 32 in %u..%u", who,
                        l->block_size, VR_BLOCK_MIN, VR_BLOCK_MAX);
    if (kind == VR_REUSE_WARP && (l->batch_indices < a || l->batch_indices % a ||
                                  l->batch_indices > VR_WARP_BATCH_MAX))
        return VR_ERROR(VR_ERR_ARG, "%s: warp batch of %u indices must be a multiple of %u in "
                        "%u..%u", who, l->batch_indices, a, a, VR_WARP_BATCH_MAX);
    if (vr_program_dynamic(kind) || vr_program_planned(kind)) {
        if (l->max_unique < a || l->max_unique < VR_NU_MIN || l->max_unique > VR_NU_MAX)
            return VR_ERROR(VR_ERR_ARG, "%s: N_u %u must be in %u..%u", who, l->max_unique,
                            VR_NU_MIN, VR_NU_MAX);
        if (l->max_indices < a || l->max_indices % a || l->max_indices > VR_MAX_INDICES_MAX)
            return VR_ERROR(VR_ERR_ARG, "%s: max_indices %u must be a multiple of %u in %u..%u",
                            who, l->max_indices, a, a, VR_MAX_INDICES_MAX);
        if (p->index_count && (!p->batch_starts || !p->batch_count))
            return VR_ERROR(VR_ERR_ARG, "%s: %s needs batch_starts (%s)", who,
                            vr_reuse_all[kind].name,
                            vr_program_planned(kind) ? "a static plan, reuse/patches.h"
                                                     : "vr_program_batches");
        if (p->batch_count > 0x7fffffffu)
            return VR_ERROR(VR_ERR_ARG, "%s: %u batches exceed the grid limit", who,
                            p->batch_count);
    }
    if (!vr_program_planned(kind) && p->prim_ids)
        return VR_ERROR(VR_ERR_ARG, "%s: prim_ids (a plan's tri_order) belongs to patch and "
                        "meshlet; %s numbers primitives by stream position: pass NULL", who,
                        vr_reuse_all[kind].name);
    if (vr_program_planned(kind) && (a != 3 || !p->prim_ids))
        return VR_ERROR(VR_ERR_ARG, "%s: %s batches a triangle mesh by a static plan: it needs "
                        "arity 3 (got %u) and the plan's tri_order as prim_ids", who,
                        vr_reuse_all[kind].name, a);
    return VR_OK;
}

vr_status vr_program_batches(uint32_t **starts, uint32_t *batch_count, const uint32_t *indices,
                             uint32_t index_count, uint32_t arity, uint32_t element_count,
                             uint32_t max_unique, uint32_t max_indices)
{
    *starts = NULL;
    *batch_count = 0;
    if (arity < 1 || arity > VR_PROGRAM_ARITY_MAX)
        return VR_ERROR(VR_ERR_ARG, "dynamic batches: arity %u must be in 1..%u", arity,
                        VR_PROGRAM_ARITY_MAX);
    uint32_t *s = malloc((vr_batches_dynamic_bound_arity(index_count, arity) + 1) * sizeof *s);
    if (!s)
        return VR_ERROR(VR_ERR_OOM, "dynamic batches: offsets for %u indices", index_count);
    size_t n = 0;
    vr_status st = vr_batches_dynamic_arity(s, &n, indices, index_count, arity, element_count,
                                            max_unique, max_indices);
    if (st != VR_OK) {
        free(s);
        return st;
    }
    *starts = s;
    *batch_count = (uint32_t)n;
    return VR_OK;
}

/* The twin's working state: the user's functions and the counters. */
typedef struct vr_program_twin {
    const vr_program_params *p;
    const vr_program_cpu *f;
} vr_program_twin;

static void vr_twin_element(const vr_program_twin *t, uint32_t id, void *out)
{
    t->f->element(t->f->user, id, out);
    if (t->p->count) {
        t->p->counters->invocations++;
        if (t->p->shade_counts)
            t->p->shade_counts[id]++;
    }
}

static void vr_twin_primitive(const vr_program_twin *t, uint32_t pos, const uint32_t *ids,
                              const void *const *e)
{
    const uint32_t prim = t->p->prim_ids ? t->p->prim_ids[pos] : pos;
    t->f->primitive(t->f->user, prim, pos, ids, e);
    if (t->p->count)
        t->p->counters->primitives++;
}

/* naive: each corner its own invocation. */
static void vr_twin_naive(const vr_program_twin *t, unsigned char *el)
{
    const vr_program_params *p = t->p;
    const size_t eb = t->f->element_bytes;
    const void *e[VR_PROGRAM_ARITY_MAX];
    for (uint32_t i = 0; i < p->index_count; i += p->arity) {
        for (uint32_t k = 0; k < p->arity; ++k) {
            vr_twin_element(t, p->indices[i + k], el + k * eb);
            e[k] = el + k * eb;
        }
        vr_twin_primitive(t, i / p->arity, p->indices + i, e);
    }
}

/* warp: reuse/warp_ref.c's rounds (vr_ref_warp_round), whole primitives per round, nothing
 * carries over. */
static void vr_twin_warp(const vr_program_twin *t, unsigned char *el)
{
    const vr_program_params *p = t->p;
    const size_t eb = t->f->element_bytes;
    const uint32_t batch = p->limits.batch_indices, a = p->arity;
    uint8_t map[VR_WARP_BATCH_MAX];
    const void *e[VR_PROGRAM_ARITY_MAX];
    for (uint64_t begin = 0; begin < p->index_count; begin += batch) {
        const uint64_t end = begin + batch < p->index_count ? begin + batch : p->index_count;
        for (uint64_t start = begin; start < end;) {
            uint32_t lane_id[32], fill, done;
            vr_ref_warp_round(p->indices, start, end, lane_id, map, &fill, &done);
            const uint32_t prims = done / a; /* >= 1: 32 lanes hold a whole primitive */
            for (uint32_t lane = 0; lane < fill; ++lane)
                vr_twin_element(t, lane_id[lane], el + lane * eb);
            for (uint32_t q = 0; q < prims; ++q) {
                uint32_t ids[VR_PROGRAM_ARITY_MAX];
                for (uint32_t k = 0; k < a; ++k) {
                    ids[k] = lane_id[map[a * q + k]];
                    e[k] = el + map[a * q + k] * eb;
                }
                vr_twin_primitive(t, (uint32_t)(start / a) + q, ids, e);
            }
            start += (uint64_t)a * prims;
        }
    }
}

/* hash, phash, sort, patch, meshlet: per batch, the distinct elements once (first-occurrence
 * order; the GPU's order differs, the calls' results do not), then every primitive. */
static vr_status vr_twin_batched(const vr_program_twin *t, unsigned char *el, uint32_t *stamp,
                                 uint32_t *local, const char *who)
{
    const vr_program_params *p = t->p;
    const size_t eb = t->f->element_bytes;
    const uint32_t a = p->arity;
    const void *e[VR_PROGRAM_ARITY_MAX];
    if (p->batch_starts[0] != 0 || p->batch_starts[p->batch_count] != p->index_count)
        return VR_ERROR(VR_ERR_FORMAT, "%s: batches span %u..%u, the stream 0..%u", who,
                        p->batch_starts[0], p->batch_starts[p->batch_count], p->index_count);
    for (uint32_t b = 0; b < p->batch_count; ++b) {
        const uint32_t start = p->batch_starts[b], end = p->batch_starts[b + 1];
        if (end < start || start % a || (end - start) % a || end - start > p->limits.max_indices)
            return VR_ERROR(VR_ERR_FORMAT, "%s: batch %u spans %u..%u: batches hold whole "
                            "primitives, at most max_indices = %u", who, b, start, end,
                            p->limits.max_indices);
        uint32_t n = 0;
        for (uint32_t i = start; i < end; ++i) {
            const uint32_t v = p->indices[i];
            if (stamp[v] == b + 1)
                continue;
            if (n == p->limits.max_unique)
                return VR_ERROR(VR_ERR_FORMAT, "%s: batch %u has more than N_u = %u distinct "
                                "elements", who, b, p->limits.max_unique);
            stamp[v] = b + 1;
            local[v] = n;
            vr_twin_element(t, v, el + (size_t)n++ * eb);
        }
        for (uint32_t i = start; i < end; i += a) {
            for (uint32_t k = 0; k < a; ++k)
                e[k] = el + (size_t)local[p->indices[i + k]] * eb;
            vr_twin_primitive(t, i / a, p->indices + i, e);
        }
    }
    return VR_OK;
}

/* multi: every element once, then every primitive from the table. */
static void vr_twin_multi(const vr_program_twin *t, unsigned char *el)
{
    const vr_program_params *p = t->p;
    const size_t eb = t->f->element_bytes;
    const void *e[VR_PROGRAM_ARITY_MAX];
    for (uint32_t v = 0; v < p->element_count; ++v)
        vr_twin_element(t, v, el + (size_t)v * eb);
    for (uint32_t i = 0; i < p->index_count; i += p->arity) {
        for (uint32_t k = 0; k < p->arity; ++k)
            e[k] = el + (size_t)p->indices[i + k] * eb;
        vr_twin_primitive(t, i / p->arity, p->indices + i, e);
    }
}

vr_status vr_program_ref(vr_reuse_kind kind, const vr_program_params *p, const vr_program_cpu *f)
{
    assert(p && f && f->element && f->primitive && f->element_bytes);
    const char *who = (unsigned)kind < VR_REUSE_KIND_COUNT ? vr_reuse_all[kind].name : "program";
    vr_status st = vr_program_check(kind, p, who);
    if (st != VR_OK)
        return st;
    for (uint32_t i = 0; i < p->index_count; ++i)
        if (p->indices[i] >= p->element_count)
            return VR_ERROR(VR_ERR_FORMAT, "%s: index %u at position %u >= element count %u", who,
                            p->indices[i], i, p->element_count);
    if (p->prim_ids)
        for (uint32_t q = 0; q < p->index_count / p->arity; ++q)
            if (p->prim_ids[q] >= p->index_count / p->arity)
                return VR_ERROR(VR_ERR_FORMAT, "%s: primitive %u has source id %u, past the %u "
                                "primitives", who, q, p->prim_ids[q], p->index_count / p->arity);
    const size_t eb = f->element_bytes;
    size_t slots = 32; /* naive: arity <= 4 corners; warp: 32 lanes */
    if (vr_program_dynamic(kind) || vr_program_planned(kind))
        slots = p->limits.max_unique;
    else if (kind == VR_REUSE_MULTI)
        slots = p->element_count ? p->element_count : 1;
    unsigned char *el = malloc(slots * eb);
    uint32_t *stamp = NULL, *local = NULL;
    if (vr_program_dynamic(kind) || vr_program_planned(kind)) {
        stamp = calloc(p->element_count ? p->element_count : 1, sizeof *stamp);
        local = malloc((p->element_count ? p->element_count : 1) * sizeof *local);
    }
    if (!el || ((vr_program_dynamic(kind) || vr_program_planned(kind)) && (!stamp || !local))) {
        st = VR_ERROR(VR_ERR_OOM, "%s: CPU twin scratch for %zu elements", who, slots);
        goto done;
    }
    const vr_program_twin t = {p, f};
    switch (kind) {
    case VR_REUSE_NAIVE: vr_twin_naive(&t, el); break;
    case VR_REUSE_WARP: vr_twin_warp(&t, el); break;
    case VR_REUSE_MULTI: vr_twin_multi(&t, el); break;
    default:
        if (p->index_count)
            st = vr_twin_batched(&t, el, stamp, local, who);
        break;
    }
done:
    free(el);
    free(stamp);
    free(local);
    return st;
}
