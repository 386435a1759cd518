/* vr_check.h - internal: checked CUDA calls for the .cu files. VR_CUDA_CHECK records file:line,
 * the call's text and the CUDA error string and returns VR_ERR_CUDA; VR_LAUNCH_CHECK follows
 * every kernel launch (with -DVR_SYNC_CHECK=ON it also synchronizes, so an asynchronous fault
 * points at its kernel). */
#ifndef VR_CHECK_H
#define VR_CHECK_H

#include <cuda_runtime.h>

#include "vreuse.h"

/* Records file:line and the call's text with the CUDA error string, returns VR_ERR_CUDA. A
 * non-sticky error is consumed here (cudaGetLastError), so the next launch check does not
 * report it a second time against an innocent kernel. */
#define VR_CUDA_CHECK(call)                                                               \
    do {                                                                                  \
        cudaError_t e_ = (call);                                                          \
        if (e_ != cudaSuccess) {                                                          \
            (void)cudaGetLastError();                                                     \
            return VR_ERROR(VR_ERR_CUDA, "%s failed: %s", #call, cudaGetErrorString(e_)); \
        }                                                                                 \
    } while (0)

/* After every launch: the launch error, and with -DVR_SYNC_CHECK=ON the kernel's own fault. */
#ifdef VR_SYNC_CHECK
#define VR_LAUNCH_CHECK(what)                                                        \
    do {                                                                             \
        VR_CUDA_CHECK(cudaGetLastError());                                           \
        cudaError_t s_ = cudaDeviceSynchronize();                                    \
        if (s_ != cudaSuccess)                                                       \
            return VR_ERROR(VR_ERR_CUDA, "%s: %s", what, cudaGetErrorString(s_));    \
    } while (0)
#else
#define VR_LAUNCH_CHECK(what) VR_CUDA_CHECK(cudaGetLastError())
#endif

#endif
