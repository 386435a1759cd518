/* batches.c - dynamic batch boundaries (Kenzel et al. 2018, Sec. 3.4): scan triangles front to
 * back and close a batch before the triangle that would push its distinct vertices past
 * max_unique or its indices past max_indices. The one definition shared by sim/ (counts), the
 * CPU twins and the GPU batchers (hash, phash, sort), so their numbers agree exactly.
 * Try: `vreuse_tests sim/dynamic`.
 */
#include "reuse/batches.h"

#include "pipeline/vreuse.h"

#include <assert.h>
#include <stdlib.h>

size_t vr_batches_dynamic_bound_arity(uint32_t index_count, uint32_t arity)
{
    return (size_t)index_count / (arity ? arity : 1) + 1;
}

size_t vr_batches_dynamic_bound(uint32_t index_count)
{
    return vr_batches_dynamic_bound_arity(index_count, 3);
}

vr_status vr_batches_dynamic(uint32_t *starts, size_t *batch_count, const uint32_t *indices,
                             uint32_t index_count, uint32_t vertex_count, uint32_t max_unique,
                             uint32_t max_indices)
{
    return vr_batches_dynamic_arity(starts, batch_count, indices, index_count, 3, vertex_count,
                                    max_unique, max_indices);
}

vr_status vr_batches_dynamic_arity(uint32_t *starts, size_t *batch_count, const uint32_t *indices,
                                   uint32_t index_count, uint32_t arity, uint32_t vertex_count,
                                   uint32_t max_unique, uint32_t max_indices)
{
    assert(starts != NULL && batch_count != NULL);
    assert(indices != NULL || index_count == 0);
    *batch_count = 0;
    if (arity < 1 || arity > VR_BATCH_ARITY_MAX)
        return VR_ERROR(VR_ERR_ARG, "dynamic batches: arity %u must be in 1..%u", arity,
                        VR_BATCH_ARITY_MAX);
    if (max_unique < arity || max_indices < arity) /* a primitive must fit */
        return VR_ERROR(VR_ERR_ARG,
                        "dynamic batches: max_unique %u and max_indices %u must be >= %u",
                        max_unique, max_indices, arity);
    if (index_count % arity != 0)
        return VR_ERROR(VR_ERR_FORMAT, "dynamic batches: index count %u is not a multiple of %u",
                        index_count, arity);
    starts[0] = 0;
    if (index_count == 0)
        return VR_OK;

    /* stamp[v] == batch number + 1 marks v as already counted in the current batch, so a new
     * batch needs no clearing: O(index_count) in total. */
    uint32_t *stamp = calloc(vertex_count ? vertex_count : 1, sizeof *stamp);
    if (!stamp)
        return VR_ERROR(VR_ERR_OOM, "dynamic batches: %u-vertex scratch array", vertex_count);
    /* Primitives, not indices, per batch: a batch holds at most this many. */
    const uint32_t max_prims = max_indices / arity;
    size_t count = 0;
    uint32_t cur = 1, unique = 0, prims = 0;
    for (uint32_t i = 0; i < index_count; i += arity) {
        const uint32_t *v = indices + i;
        /* Distinct new vertices of this primitive; a repeated index (a degenerate triangle)
         * counts once, as the batch shades it once. distinct: those not equal to an earlier
         * corner. */
        uint32_t fresh = 0, distinct = 0;
        for (uint32_t k = 0; k < arity; ++k) {
            assert(v[k] < vertex_count);
            int first = 1;
            for (uint32_t j = 0; j < k; ++j)
                first &= v[j] != v[k];
            distinct += (uint32_t)first;
            fresh += (uint32_t)(first && stamp[v[k]] != cur);
        }
        if (unique + fresh > max_unique || prims == max_prims) {
            starts[++count] = i;
            ++cur;
            unique = 0;
            prims = 0;
            fresh = distinct; /* max_unique >= arity: always fits */
        }
        for (uint32_t k = 0; k < arity; ++k)
            stamp[v[k]] = cur;
        unique += fresh;
        ++prims;
    }
    starts[++count] = index_count;
    free(stamp);
    *batch_count = count;
    return VR_OK;
}
