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

size_t vr_batches_dynamic_bound(uint32_t index_count) { return (size_t)index_count / 3 + 1; }

vr_status vr_batches_dynamic(uint32_t *starts, size_t *batch_count, const uint32_t *indices,
                             uint32_t index_count, uint32_t vertex_count, uint32_t max_unique,
                             uint32_t max_indices)
{
    assert(starts != NULL && batch_count != NULL);
    assert(indices != NULL || index_count == 0);
    *batch_count = 0;
    if (max_unique < VR_NU_MIN || max_indices < VR_MAX_INDICES_MIN) /* a triangle needs 3 */
        return VR_ERROR(VR_ERR_ARG,
                        "dynamic batches: max_unique %u and max_indices %u must be >= 3",
                        max_unique, max_indices);
    if (index_count % 3 != 0)
        return VR_ERROR(VR_ERR_FORMAT, "dynamic batches: index count %u is not a multiple of 3",
                        index_count);
    starts[0] = 0;
    if (index_count == 0)
        return VR_OK;

    /* stamp[v] == batch number + 1 marks v as already counted in the current batch, so a new
     * batch needs no clearing: O(index_count) in total. */
    uint32_t *stamp = calloc(vertex_count ? vertex_count : 1, sizeof *stamp);
    if (!stamp)
        return VR_ERROR(VR_ERR_OOM, "dynamic batches: %u-vertex scratch array", vertex_count);
    /* Triangles, not indices, per batch: a batch holds at most this many. */
    const uint32_t max_tris = max_indices / 3;
    size_t count = 0;
    uint32_t cur = 1, unique = 0, tris = 0;
    for (uint32_t i = 0; i < index_count; i += 3) {
        uint32_t a = indices[i], b = indices[i + 1], c = indices[i + 2];
        assert(a < vertex_count && b < vertex_count && c < vertex_count);
        /* Distinct new vertices of this triangle; a repeated index (degenerate triangle)
         * counts once, as the batch shades it once. */
        uint32_t fresh = (stamp[a] != cur) + (stamp[b] != cur && b != a) +
                         (stamp[c] != cur && c != a && c != b);
        if (unique + fresh > max_unique || tris == max_tris) {
            starts[++count] = i;
            ++cur;
            unique = 0;
            tris = 0;
            fresh = 1 + (b != a) + (c != a && c != b); /* max_unique >= 3: always fits */
        }
        stamp[a] = stamp[b] = stamp[c] = cur;
        unique += fresh;
        ++tris;
    }
    starts[++count] = index_count;
    free(stamp);
    *batch_count = count;
    return VR_OK;
}
