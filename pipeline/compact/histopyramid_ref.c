/* histopyramid_ref.c - the CPU twin of histopyramid.cu: the level layout, the pyramid built
 * level by level with plain loops, the top-down descent for one output, compaction and
 * expansion through it, and expansion the plain way (nested loops) as the oracle; in a build
 * without CUDA, stubs of the GPU half that return VR_ERR_NO_DEVICE.
 * Try: `vreuse_tests compact/hp`.
 */
#include "pipeline/compact/histopyramid.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

void vr_hp_layout_make(vr_hp_layout *l, vr_hp_kind kind, uint32_t n)
{
    memset(l, 0, sizeof *l);
    l->kind = kind;
    l->n = n;
    l->cells[0] = n;
    uint64_t cells = n, words = 0;
    while (cells > 1 || (n > 0 && l->levels == 0)) {
        cells = (cells + 3) / 4;
        ++l->levels;
        l->cells[l->levels] = (uint32_t)cells;
        l->offset[l->levels] = words;
        /* plain: padded to whole uint4s of children; vec4: a uint4 per cell */
        words += kind == VR_HP_VEC4 ? 4 * cells : (cells + 3) & ~(uint64_t)3;
    }
    l->words = words;
}

/* Base cell i: its count, or 1 when its value is below the threshold; 0 past the end. */
static uint32_t vr_hp_base_ref(const vr_hp_layout *l, const uint32_t *counts, const uint32_t *in,
                               uint64_t threshold, uint64_t i)
{
    if (i >= l->n)
        return 0;
    return counts ? counts[i] : in[i] < threshold;
}

/* The count of cell c of level lv >= 1; 0 past the end. */
static uint32_t vr_hp_cell_ref(const uint32_t *levels, const vr_hp_layout *l, uint32_t lv,
                               uint64_t c)
{
    if (c >= l->cells[lv])
        return 0;
    return l->kind == VR_HP_VEC4 ? levels[l->offset[lv] + 4 * c + 3] : levels[l->offset[lv] + c];
}

int vr_hp_build_ref(uint32_t *levels, const vr_hp_layout *l, const uint32_t *counts,
                    const uint32_t *in, uint64_t threshold)
{
    memset(levels, 0, l->words * sizeof *levels);
    int overflow = 0;
    for (uint32_t lv = 1; lv <= l->levels; ++lv)
        for (uint64_t c = 0; c < l->cells[lv]; ++c) {
            uint64_t sum = 0;
            for (uint32_t j = 0; j < 4; ++j) {
                const uint64_t child = 4 * c + j;
                sum += lv == 1 ? vr_hp_base_ref(l, counts, in, threshold, child)
                               : vr_hp_cell_ref(levels, l, lv - 1, child);
                if (l->kind == VR_HP_VEC4) /* inclusive partial sums, 32 bits like the GPU */
                    levels[l->offset[lv] + 4 * c + j] = (uint32_t)sum;
            }
            overflow |= sum > UINT32_MAX;
            if (l->kind == VR_HP_PLAIN)
                levels[l->offset[lv] + c] = (uint32_t)sum;
        }
    return overflow ? -1 : 0;
}

uint32_t vr_hp_total_ref(const uint32_t *levels, const vr_hp_layout *l)
{
    return l->levels ? vr_hp_cell_ref(levels, l, l->levels, 0) : 0;
}

void vr_hp_find_ref(uint32_t *cell, uint32_t *rank, const uint32_t *levels,
                    const vr_hp_layout *l, const uint32_t *counts, const uint32_t *in,
                    uint64_t threshold, uint32_t k)
{
    uint64_t idx = 0;
    uint32_t r = k;
    for (uint32_t lv = l->levels; lv >= 1; --lv) {
        uint32_t child = 0;
        if (l->kind == VR_HP_VEC4) {
            /* the cell's own partial sums decide: no child is read */
            const uint32_t *p = levels + l->offset[lv] + 4 * idx;
            while (child < 3 && r >= p[child])
                ++child;
            if (child)
                r -= p[child - 1];
        } else {
            for (;; ++child) {
                const uint64_t at = 4 * idx + child;
                const uint32_t c = lv == 1 ? vr_hp_base_ref(l, counts, in, threshold, at)
                                           : vr_hp_cell_ref(levels, l, lv - 1, at);
                if (r < c || child == 3)
                    break;
                r -= c;
            }
        }
        idx = 4 * idx + child;
    }
    *cell = (uint32_t)idx;
    *rank = r;
}

uint64_t vr_hp_prefix_ref(const uint32_t *levels, const vr_hp_layout *l, const uint32_t *counts,
                          const uint32_t *in, uint64_t threshold, uint64_t c)
{
    uint64_t sum = 0;
    for (uint32_t lv = 0; lv < l->levels; ++lv) {
        const uint64_t a = c >> (2 * lv); /* c's ancestor at level lv */
        for (uint64_t sib = a & ~(uint64_t)3; sib < a; ++sib)
            sum += lv == 0 ? vr_hp_base_ref(l, counts, in, threshold, sib)
                           : vr_hp_cell_ref(levels, l, lv, sib);
    }
    return sum;
}

vr_status vr_hp_compact_ref(uint32_t *out, uint32_t *count, const uint32_t *in, uint32_t n,
                            uint64_t threshold, vr_hp_kind kind)
{
    vr_hp_layout l;
    vr_hp_layout_make(&l, kind, n);
    uint32_t *levels = malloc(l.words * sizeof *levels + 16);
    if (!levels)
        return VR_ERROR(VR_ERR_OOM, "out of host memory for a HistoPyramid of %u cells", n);
    vr_hp_build_ref(levels, &l, NULL, in, threshold); /* flags sum to at most n: no overflow */
    *count = vr_hp_total_ref(levels, &l);
    for (uint32_t k = 0; k < *count; ++k) {
        uint32_t cell, rank;
        vr_hp_find_ref(&cell, &rank, levels, &l, NULL, in, threshold, k);
        out[k] = in[cell];
    }
    free(levels);
    return VR_OK;
}

vr_status vr_hp_expand_ref(uint32_t *cell, uint32_t *rank, uint32_t capacity, uint32_t *total,
                           const uint32_t *counts, uint32_t n, vr_hp_kind kind)
{
    vr_hp_layout l;
    vr_hp_layout_make(&l, kind, n);
    uint32_t *levels = malloc(l.words * sizeof *levels + 16);
    if (!levels)
        return VR_ERROR(VR_ERR_OOM, "out of host memory for a HistoPyramid of %u cells", n);
    if (vr_hp_build_ref(levels, &l, counts, NULL, 0) != 0) {
        free(levels);
        *total = 0;
        return VR_ERROR(VR_ERR_OVERFLOW, "HistoPyramid: the counts of %u cells sum to 2^32 or "
                        "more", n);
    }
    *total = vr_hp_total_ref(levels, &l);
    for (uint32_t k = 0; k < *total && k < capacity; ++k) {
        uint32_t c, r;
        vr_hp_find_ref(&c, &r, levels, &l, counts, NULL, 0, k);
        cell[k] = c;
        if (rank)
            rank[k] = r;
    }
    free(levels);
    return VR_OK;
}

uint64_t vr_expand_ref(uint32_t *cell, uint32_t *rank, uint32_t capacity, const uint32_t *counts,
                       uint32_t n)
{
    uint64_t k = 0;
    for (uint32_t i = 0; i < n; ++i)
        for (uint32_t j = 0; j < counts[i]; ++j, ++k)
            if (k < capacity) {
                cell[k] = i;
                if (rank)
                    rank[k] = j;
            }
    return k;
}

/* ---- stubs of the GPU half when built without CUDA ------------------------------------------ */
#ifndef VR_HAVE_CUDA

size_t vr_hp_bytes(vr_hp_kind kind, uint32_t max_cells)
{
    (void)kind, (void)max_cells;
    return 0;
}

vr_status vr_hp_create(vr_hp **out, vr_hp_kind kind, uint32_t max_cells, void *stream)
{
    (void)kind, (void)max_cells, (void)stream;
    *out = NULL;
    return VR_ERROR(VR_ERR_NO_DEVICE, VR_NO_CUDA_BUILD);
}

vr_status vr_hp_create_in(vr_hp **out, vr_hp_kind kind, uint32_t max_cells, void *d_memory,
                          void *stream)
{
    (void)d_memory;
    return vr_hp_create(out, kind, max_cells, stream);
}

void vr_hp_destroy(vr_hp *h)
{
    assert(!h);
    (void)h;
}

vr_status vr_hp_build_select(vr_hp *h, const uint32_t *d_in, uint32_t n, uint64_t threshold)
{
    (void)h, (void)d_in, (void)n, (void)threshold;
    return VR_ERROR(VR_ERR_NO_DEVICE, VR_NO_CUDA_BUILD);
}

vr_status vr_hp_build_counts(vr_hp *h, const uint32_t *d_counts, uint32_t n)
{
    (void)h, (void)d_counts, (void)n;
    return VR_ERROR(VR_ERR_NO_DEVICE, VR_NO_CUDA_BUILD);
}

vr_status vr_hp_compact(vr_hp *h, uint32_t *d_out, uint32_t capacity)
{
    (void)h, (void)d_out, (void)capacity;
    return VR_ERROR(VR_ERR_NO_DEVICE, VR_NO_CUDA_BUILD);
}

vr_status vr_hp_expand(vr_hp *h, uint32_t *d_cell, uint32_t *d_rank, uint32_t capacity)
{
    (void)h, (void)d_cell, (void)d_rank, (void)capacity;
    return VR_ERROR(VR_ERR_NO_DEVICE, VR_NO_CUDA_BUILD);
}

const uint32_t *vr_hp_device_total(const vr_hp *h)
{
    (void)h;
    return NULL;
}

vr_status vr_hp_total(vr_hp *h, uint32_t *total)
{
    (void)h;
    *total = 0;
    return VR_ERROR(VR_ERR_NO_DEVICE, VR_NO_CUDA_BUILD);
}

const vr_hp_layout *vr_hp_layout_of(const vr_hp *h)
{
    (void)h;
    return NULL;
}

vr_status vr_hp_download(vr_hp *h, uint32_t *levels)
{
    (void)h, (void)levels;
    return VR_ERROR(VR_ERR_NO_DEVICE, VR_NO_CUDA_BUILD);
}
#endif
