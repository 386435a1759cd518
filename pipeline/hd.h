/* hd.h - what CUDA kernels and their C twins share verbatim: VR_HD marks a function compiled for
 * both (__host__ __device__ under nvcc, static inline in C), and the bit helpers both sides need.
 * Included by reuse/shaders.h, reuse/warp_vote.h, pipeline/gts/gts_math.h and
 * raster/raster_common.h; part of the installed vreuse.h only because reuse/shaders.h defines
 * vr_shade with VR_HD (everything here is static inline: no symbol of the library). */
#ifndef VR_HD_H
#define VR_HD_H

#include <stdint.h>

#ifdef __CUDACC__
#define VR_HD __host__ __device__ __forceinline__
#else
#define VR_HD static inline
#endif

/* Set bits of x. */
VR_HD uint32_t vr_popc(uint32_t x)
{
#ifdef __CUDA_ARCH__
    return (uint32_t)__popc(x);
#else
    return (uint32_t)__builtin_popcount(x);
#endif
}

/* Position of the lowest set bit; x != 0. */
VR_HD uint32_t vr_lowest_bit(uint32_t x)
{
#ifdef __CUDA_ARCH__
    return (uint32_t)__ffs((int)x) - 1u;
#else
    return (uint32_t)__builtin_ffs((int)x) - 1u;
#endif
}

#endif
