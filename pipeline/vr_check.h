/* vr_check.h - internal: the one family of checked CUDA calls, for the .cu files and the C files
 * that call the CUDA runtime. Every failure records a message that names the call or kernel and
 * the CUDA error string (its file:line goes to vr_last_error_where) and clears a non-sticky
 * error, so the next check does not report it again against an innocent call:
 *   vr_cuda_status(e, where, what)  the core: VR_OK for cudaSuccess, else VR_ERR_CUDA
 *   VR_CUDA_CHECK(call)             a checked call: returns the failure from the function
 *   VR_CUDA_GOTO(call)              the same for functions with cleanup: sets `st`, jumps to `done`
 *   VR_LAUNCH_CHECK(kernel, stream) after every kernel launch; with -DVR_SYNC_CHECK=ON it also
 *                                   synchronizes `stream`, so a fault names its kernel
 *   VR_LAUNCH_GOTO(kernel, stream)  the same into `st` and `done`
 *   vr_cuda_alloc(ptr, bytes, what) cudaMalloc with a message that names the buffer (VR_ERR_OOM)
 *   vr_cuda_upload(ptr, src, bytes, what)  vr_cuda_alloc, then a copy of host `src` (or none)
 *   vr_cuda_free(ptr, what)         cudaFree of a buffer that is replaced; *ptr is NULL afterwards
 *   vr_cuda_free_all(ptrs, count)   teardown: cudaFree of a list of buffers, results ignored
 *   vr_cuda_device_check()          VR_ERR_NO_DEVICE, saying why, when no device can be used
 *   vr_cuda_host_struct(obj, bytes, what)  the device check, then the zeroed host struct of a
 *                                   create function
 * Tests wrap vr_cuda_status as VR_EXPECT_CUDA (tests/test.h). Teardown and error paths that
 * ignore a result say why in a comment. */
#ifndef VR_CHECK_H
#define VR_CHECK_H

#include <cuda_runtime_api.h>

#include "pipeline/vr_mem.h"
#include "pipeline/vreuse.h"

/* "file:line" of the check, for vr_set_error_at. */
#define VR_CUDA_WHERE __FILE__ ":" VR_STR_(__LINE__)

/* A hint for the errors of a kernel that faulted: without VR_SYNC_CHECK they surface at a later
 * call (a copy, a synchronize, the next launch check), which the message names instead. */
static inline const char *vr_cuda_hint(cudaError_t e)
{
#ifdef VR_SYNC_CHECK
    (void)e;
    return "";
#else
    switch (e) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchTimeout:
    case cudaErrorAssert:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorLaunchFailure:
        return ". Hint: a kernel faulted before this call; rebuild with -DVR_SYNC_CHECK=ON to "
               "see which";
    default:
        return "";
    }
#endif
}

/* VR_OK when e is cudaSuccess; else records "<what> failed: <CUDA error string>" at `where`
 * and returns VR_ERR_CUDA. */
static inline vr_status vr_cuda_status(cudaError_t e, const char *where, const char *what)
{
    if (e == cudaSuccess)
        return VR_OK;
    (void)cudaGetLastError(); /* consumes a non-sticky error: it is reported here, once */
    return vr_set_error_at(VR_ERR_CUDA, where, "%s failed: %s%s", what, cudaGetErrorString(e),
                           vr_cuda_hint(e));
}

#define VR_CUDA_CHECK(call)                                                         \
    do {                                                                            \
        const vr_status cuda_st_ = vr_cuda_status((call), VR_CUDA_WHERE, #call);    \
        if (cuda_st_ != VR_OK)                                                      \
            return cuda_st_;                                                        \
    } while (0)

#define VR_CUDA_GOTO(call)                                                          \
    do {                                                                            \
        if ((st = vr_cuda_status((call), VR_CUDA_WHERE, #call)) != VR_OK)           \
            goto done;                                                              \
    } while (0)

/* The launch error of `kernel` (a name for the message), and with VR_SYNC_CHECK the kernel's
 * own fault: the launch's stream is synchronized, so no other stream's work is waited for. */
static inline vr_status vr_cuda_launched(const char *where, const char *kernel,
                                         cudaStream_t stream)
{
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess)
        return vr_set_error_at(VR_ERR_CUDA, where, "launch of %s failed: %s%s", kernel,
                               cudaGetErrorString(e), vr_cuda_hint(e));
#ifdef VR_SYNC_CHECK
    cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusNone;
    if (cudaStreamIsCapturing(stream, &capturing) == cudaSuccess &&
        capturing != cudaStreamCaptureStatusNone)
        return VR_OK; /* a graph being captured runs later: its replay is checked by the caller */
    e = cudaStreamSynchronize(stream);
    if (e != cudaSuccess) {
        (void)cudaGetLastError(); /* as in vr_cuda_status */
        return vr_set_error_at(VR_ERR_CUDA, where, "%s failed: %s", kernel,
                               cudaGetErrorString(e));
    }
#else
    (void)stream;
#endif
    return VR_OK;
}

#define VR_LAUNCH_CHECK(kernel, stream)                                             \
    do {                                                                            \
        const vr_status cuda_st_ = vr_cuda_launched(VR_CUDA_WHERE, (kernel), (stream)); \
        if (cuda_st_ != VR_OK)                                                      \
            return cuda_st_;                                                        \
    } while (0)

#define VR_LAUNCH_GOTO(kernel, stream)                                              \
    do {                                                                            \
        if ((st = vr_cuda_launched(VR_CUDA_WHERE, (kernel), (stream))) != VR_OK)    \
            goto done;                                                              \
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
    /* only for the message: when this fails too, it shows 0 of 0 MiB free */
    (void)cudaMemGetInfo(&free_b, &total_b);
    return VR_ERROR(e == cudaErrorMemoryAllocation ? VR_ERR_OOM : VR_ERR_CUDA,
                    "cudaMalloc(%s, %.1f MiB) failed: %s (%.1f of %.1f MiB free)%s", what,
                    bytes / 1048576.0, cudaGetErrorString(e), free_b / 1048576.0,
                    total_b / 1048576.0, vr_cuda_hint(e));
}

/* vr_cuda_alloc of `bytes`, then a copy of `bytes` from host `src` (NULL: allocate only). On a
 * failed copy *ptr stays set for the caller's teardown. */
static inline vr_status vr_cuda_upload(void **ptr, const void *src, size_t bytes, const char *what)
{
    vr_status st = vr_cuda_alloc(ptr, bytes, what);
    if (st == VR_OK && bytes && src)
        VR_CUDA_CHECK(cudaMemcpy(*ptr, src, bytes, cudaMemcpyHostToDevice));
    return st;
}

/* cudaFree of a buffer that is about to be replaced or dropped (teardown ignores cudaFree's
 * result instead: it cannot report). *ptr is NULL afterwards even on failure, so nothing frees
 * it twice; the message names the buffer. */
static inline vr_status vr_cuda_free(void **ptr, const char *what)
{
    void *p = *ptr;
    *ptr = NULL;
    const cudaError_t e = cudaFree(p);
    if (e == cudaSuccess)
        return VR_OK;
    (void)cudaGetLastError();
    return VR_ERROR(VR_ERR_CUDA, "cudaFree(%s) failed: %s%s", what, cudaGetErrorString(e),
                    vr_cuda_hint(e));
}

/* Teardown: cudaFree of each of ptrs[0..count) (NULL entries are allowed), e.g.
 *     void *const bufs[] = {c->d_flags, c->d_count};
 *     vr_cuda_free_all(bufs, VR_COUNT_OF(bufs));
 * The results are ignored: a destroy function returns nothing, each buffer is released once
 * whatever happens, and a failure here (a sticky error of an earlier fault) was already
 * reported by the call that met it. Buffers that are replaced go through vr_cuda_free. */
static inline void vr_cuda_free_all(void *const *ptrs, size_t count)
{
    for (size_t i = 0; i < count; ++i)
        (void)cudaFree(ptrs[i]);
}

/* VR_OK when a CUDA device can be used; else VR_ERR_NO_DEVICE with "no CUDA device: <why>". */
static inline vr_status vr_cuda_device_check(void)
{
    int n = 0;
    const cudaError_t e = cudaGetDeviceCount(&n);
    if (e == cudaSuccess && n > 0)
        return VR_OK;
    (void)cudaGetLastError();
    return VR_ERROR(VR_ERR_NO_DEVICE, "no CUDA device: %s",
                    e != cudaSuccess ? cudaGetErrorString(e) : "cudaGetDeviceCount() = 0");
}

/* The start of every create function of an object that holds device buffers: VR_OK with *obj a
 * zeroed host struct of `bytes` when a CUDA device can be used; else *obj is NULL and the
 * status is vr_cuda_device_check's, or VR_ERR_OOM naming `what` ("a HistoPyramid"). */
static inline vr_status vr_cuda_host_struct(void **obj, size_t bytes, const char *what)
{
    *obj = NULL;
    const vr_status st = vr_cuda_device_check();
    if (st != VR_OK)
        return st;
    *obj = calloc(1, bytes);
    if (!*obj)
        return VR_ERROR(VR_ERR_OOM, "out of host memory for %s", what);
    return VR_OK;
}

#endif
