/* vr_mem.h - internal: the host free list that every free/destroy function of a struct with
 * several malloc'd buffers uses, so each such function says once which buffers it owns:
 *     void *const bufs[] = {m->positions, m->normals, m->indices};
 *     vr_free_all(bufs, VR_COUNT_OF(bufs));
 * The device twin, vr_cuda_free_all, is in pipeline/vr_check.h. */
#ifndef VR_MEM_H
#define VR_MEM_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

/* Elements of an array (not of a pointer). */
#define VR_COUNT_OF(a) (sizeof(a) / sizeof((a)[0]))

/* free() of each of ptrs[0..count); NULL entries are allowed (free ignores them). The caller
 * clears its own fields afterwards where the struct lives on. */
static inline void vr_free_all(void *const *ptrs, size_t count)
{
    for (size_t i = 0; i < count; ++i)
        free(ptrs[i]);
}

/* malloc (calloc when `zero`) of an array of hundreds of MB that is filled right away: its
 * 2 MB-aligned interior is advised to transparent huge pages, so the first touch costs one fault
 * per 2 MB instead of one per 4 KB (on the development VM a 4 KB fault costs about 9.5 us: 256 MB
 * took 0.61 s; with huge pages 14-365 ms) and a walk over it misses the TLB less. Freed with
 * free(). Where THP is off or the advice is refused, this is plain malloc. */
#define VR_HUGE_MIN ((size_t)8 << 20)
static inline void *vr_alloc_huge(size_t bytes, int zero)
{
    void *p = zero ? calloc(bytes ? bytes : 1, 1) : malloc(bytes ? bytes : 1);
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (p && bytes >= VR_HUGE_MIN) {
        const uintptr_t huge = (uintptr_t)2 << 20;
        const uintptr_t lo = ((uintptr_t)p + huge - 1) & ~(huge - 1);
        const uintptr_t hi = ((uintptr_t)p + bytes) & ~(huge - 1);
        if (hi > lo)
            (void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
    }
#endif
    return p;
}

/* Faults in the pages of [p, p + bytes) without writing them (MADV_POPULATE_WRITE, Linux 5.14),
 * so a thread can take the faults of a buffer another thread is about to fill: safe while that
 * thread writes, since populating never changes a byte. A no-op where unsupported. */
static inline void vr_prefault(void *p, size_t bytes)
{
#if defined(__linux__) && defined(MADV_POPULATE_WRITE)
    const uintptr_t page = 4096;
    const uintptr_t lo = ((uintptr_t)p + page - 1) & ~(page - 1);
    const uintptr_t hi = ((uintptr_t)p + bytes) & ~(page - 1);
    if (p && hi > lo)
        (void)madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE);
#else
    (void)p, (void)bytes;
#endif
}

#endif
