/* batches.c - dynamic batch boundaries (placeholder). */
#include "batches.h"

size_t vr_batches_dynamic_bound(uint32_t index_count) { return index_count / 3 + 1; }

size_t vr_batches_dynamic(uint32_t *starts, const uint32_t *indices, uint32_t index_count,
                          uint32_t vertex_count, uint32_t max_unique, uint32_t max_indices)
{
    (void)starts; (void)indices; (void)index_count; (void)vertex_count; (void)max_unique; (void)max_indices;
    return 0;
}
