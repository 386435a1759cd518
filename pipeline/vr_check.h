/* vr_check.h - internal: checked CUDA calls for the .cu files (and the C files that call the CUDA
 * runtime). VR_CUDA_CHECK records file:line, the call's text and the CUDA error string and returns
 * VR_ERR_CUDA; VR_CUDA_GOTO does the same into a local `st` and jumps to `done`, for functions with
 * cleanup; VR_LAUNCH_CHECK follows every kernel launch (with -DVR_SYNC_CHECK=ON it also
 * synchronizes, so an asynchronous fault points at its kernel); vr_cuda_alloc is cudaMalloc with
 * a message that names the buffer. */
#ifndef VR_CHECK_H
#define VR_CHECK_H

#include <cuda_runtime_api.h>

#include "pipeline/vreuse.h"

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

/* VR_CUDA_CHECK for functions that must clean up: sets `st` and jumps to the label `done`. */
#define VR_CUDA_GOTO(call)                                                                \
    do {                                                                                  \
        cudaError_t e_ = (call);                                                          \
        if (e_ != cudaSuccess) {                                                          \
            (void)cudaGetLastError();                                                     \
            st = VR_ERROR(VR_ERR_CUDA, "%s failed: %s", #call, cudaGetErrorString(e_));   \
            goto done;                                                                    \
        }                                                                                 \
    } while (0)

/* cudaMalloc of `bytes` (at least 16, so an empty buffer is still a valid pointer). On failure
 * *ptr is NULL, the non-sticky error is cleared (later launch checks would report it again), and
 * the message names the buffer, its size and the free device memory: VR_ERR_OOM when memory ran
 * out, VR_ERR_CUDA otherwise. */
static inline vr_status vr_cuda_alloc(void **ptr, size_t bytes, const char *what)
{
    *ptr = NULL;
    const cudaError_t e = cudaMalloc(ptr, bytes ? bytes : 16);
    if (e == cudaSuccess)
        return VR_OK;
    *ptr = NULL;
    (void)cudaGetLastError();
    size_t free_b = 0, total_b = 0;
    cudaMemGetInfo(&free_b, &total_b);
    return VR_ERROR(e == cudaErrorMemoryAllocation ? VR_ERR_OOM : VR_ERR_CUDA,
                    "cudaMalloc(%s, %.1f MiB) failed: %s (%.1f of %.1f MiB free)", what,
                    bytes / 1048576.0, cudaGetErrorString(e), free_b / 1048576.0,
                    total_b / 1048576.0);
}

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
