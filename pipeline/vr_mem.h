/* vr_mem.h - internal: the host free list that every free/destroy function of a struct with
 * several malloc'd buffers uses, so each such function says once which buffers it owns:
 *     void *const bufs[] = {m->positions, m->normals, m->indices};
 *     vr_free_all(bufs, VR_COUNT_OF(bufs));
 * The device twin, vr_cuda_free_all, is in pipeline/vr_check.h. */
#ifndef VR_MEM_H
#define VR_MEM_H

#include <stddef.h>
#include <stdlib.h>

/* Elements of an array (not of a pointer). */
#define VR_COUNT_OF(a) (sizeof(a) / sizeof((a)[0]))

/* free() of each of ptrs[0..count); NULL entries are allowed (free ignores them). The caller
 * clears its own fields afterwards where the struct lives on. */
static inline void vr_free_all(void *const *ptrs, size_t count)
{
    for (size_t i = 0; i < count; ++i)
        free(ptrs[i]);
}

#endif
