/* histopyramid.cuh - the HistoPyramid descent for any kernel (histopyramid.h): a thread turns
 * an output index k into its base cell (and rank in it) by descending from the top, one uint4
 * per level. Used by the traversal kernel of histopyramid.cu; a kernel that consumes outputs
 * directly (e.g. one thread per (triangle, tile) pair) can call vr_hp_find itself on a view of
 * a built pyramid (vr_hp_view_of) and skip writing the list. CPU twin: vr_hp_find_ref
 * (histopyramid_ref.c).
 */
#ifndef VR_HISTOPYRAMID_CUH
#define VR_HISTOPYRAMID_CUH

#include <stdint.h>

#include "pipeline/compact/histopyramid.h"

/* A built pyramid as kernels read it (by value in kernel parameters; no arrays, so nothing is
 * copied to local memory: a level's offset follows from the one above it as the descent goes). */
typedef struct vr_hp_view {
    const uint32_t *levels; /* layout.words: levels 1..L */
    const uint32_t *base;   /* n words, 16-byte aligned: the values (select) or the counts the
                               pyramid was built over */
    uint64_t threshold;     /* select: base cell i active when base[i] < threshold */
    uint64_t top;           /* first word of level L (layout.offset[L]) */
    uint32_t n, levels_count; /* base cells; L (0 when n == 0) */
    uint32_t select;        /* 1: base holds values, 0: counts */
    uint32_t vec4;          /* vr_hp_kind */
} vr_hp_view;

/* The view of h's last build (host; histopyramid.cu). */
vr_hp_view vr_hp_view_of(const vr_hp *h);

/* Cells of level l >= 1 over n base cells: ceil(n / 4^l). */
static __device__ __forceinline__ uint64_t vr_hp_cells(uint32_t n, uint32_t l)
{
    return ((uint64_t)n + ((1ull << (2 * l)) - 1)) >> (2 * l);
}

/* The 4 base cells at..at+3 as counts (0 past n); `values` gets the words read (select). */
static __device__ __forceinline__ uint4 vr_hp_base4(const vr_hp_view *v, uint64_t at,
                                                    uint4 *values)
{
    uint4 x;
    if (at + 4 <= v->n) {
        x = __ldg((const uint4 *)(v->base + at));
    } else {
        x.x = at + 0 < v->n ? __ldg(v->base + at + 0) : 0u;
        x.y = at + 1 < v->n ? __ldg(v->base + at + 1) : 0u;
        x.z = at + 2 < v->n ? __ldg(v->base + at + 2) : 0u;
        x.w = at + 3 < v->n ? __ldg(v->base + at + 3) : 0u;
    }
    *values = x;
    if (v->select) {
        x.x = at + 0 < v->n && x.x < v->threshold;
        x.y = at + 1 < v->n && x.y < v->threshold;
        x.z = at + 2 < v->n && x.z < v->threshold;
        x.w = at + 3 < v->n && x.w < v->threshold;
    }
    return x;
}

/* Outputs of the whole pyramid (its top cell). */
static __device__ __forceinline__ uint32_t vr_hp_view_total(const vr_hp_view *v)
{
    if (v->levels_count == 0)
        return 0;
    return v->vec4 ? v->levels[v->top + 3] : v->levels[v->top];
}

/* Output k (< vr_hp_view_total): returns its base cell; *rank gets k's rank in that cell and
 * *value (select) the cell's value. One dependent uint4 load per level; the plain variant adds
 * the child counts as it goes, vec4 compares with the stored partial sums. */
static __device__ __forceinline__ uint32_t vr_hp_find(const vr_hp_view *v, uint32_t k,
                                                      uint32_t *rank, uint32_t *value)
{
    uint64_t idx = 0, off = v->top; /* off: first word of level lv (vec4) or lv - 1 (plain) */
    uint32_t r = k, child = 0;
    uint4 values = make_uint4(0, 0, 0, 0);
    for (uint32_t lv = v->levels_count; lv >= 1; --lv) {
        if (v->vec4) {
            const uint4 p = __ldg((const uint4 *)(v->levels + off) + idx);
            child = (r >= p.x) + (r >= p.y) + (r >= p.z);
            r -= child == 0 ? 0u : child == 1 ? p.x : child == 2 ? p.y : p.z;
            if (lv >= 2)
                off -= 4 * vr_hp_cells(v->n, lv - 1);
        } else {
            uint4 c;
            if (lv >= 2) {
                off -= (vr_hp_cells(v->n, lv - 1) + 3) & ~3ull; /* padded to whole uint4s */
                c = __ldg((const uint4 *)(v->levels + off) + idx);
            } else {
                c = vr_hp_base4(v, 4 * idx, &values);
            }
            child = 0;
            if (r >= c.x) {
                r -= c.x, child = 1;
                if (r >= c.y) {
                    r -= c.y, child = 2;
                    if (r >= c.z)
                        r -= c.z, child = 3;
                }
            }
        }
        idx = 4 * idx + child;
    }
    *rank = r;
    if (v->select) /* plain read the base cell's word on the way; vec4 reads it now */
        *value = v->vec4 ? __ldg(v->base + idx)
                         : child == 0 ? values.x : child == 1 ? values.y : child == 2 ? values.z
                                                                                      : values.w;
    return (uint32_t)idx;
}

#endif
