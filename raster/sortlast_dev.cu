/* sortlast_dev.cu - compositing kernels and the NCCL transport of sort-last rendering
 * (sortlast_dev.h). */
#include "raster/sortlast_dev.h"
#include "pipeline/vr_check.h"

#include <assert.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef VR_HAVE_NCCL
#include <nccl.h>
#endif

vr_status vr_sl_device_count(int *count)
{
    *count = 0;
    vr_status st = vr_cuda_device_check();
    if (st != VR_OK)
        return st;
    VR_CUDA_CHECK(cudaGetDeviceCount(count));
    return VR_OK;
}

vr_status vr_sl_set_device(int device)
{
    VR_CUDA_CHECK(cudaSetDevice(device));
    return VR_OK;
}

vr_status vr_sl_get_device(int *device)
{
    VR_CUDA_CHECK(cudaGetDevice(device));
    return VR_OK;
}

vr_status vr_sl_alloc(void **ptr, size_t bytes)
{
    return vr_cuda_alloc(ptr, bytes, "sort-last counters");
}

void vr_sl_free(void *ptr)
{
    if (ptr)
        cudaFree(ptr); /* teardown: nothing to act on */
}

/* ---- reductions for parts on one device ------------------------------------------------- */

#define VR_SL_BLOCK 256u
#define VR_SL_GRID_MAX 4096u /* grid-stride: a few waves of 132 SMs, any n */

static uint32_t vr_sl_grid(size_t n)
{
    const size_t b = (n + VR_SL_BLOCK - 1) / VR_SL_BLOCK;
    return b == 0 ? 1u : b > VR_SL_GRID_MAX ? VR_SL_GRID_MAX : (uint32_t)b;
}

__global__ void vr_sl_min_u64_kernel(unsigned long long *dst, const unsigned long long *src,
                                     size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        dst[i] = min(dst[i], src[i]);
}

/* four bytes a thread: an image is 4 bytes a pixel, n is always a multiple of 4 here, but the
 * tail is handled a byte at a time anyway */
__global__ void vr_sl_max_u8_kernel(uint8_t *dst, const uint8_t *src, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        dst[i] = max(dst[i], src[i]);
}

__global__ void vr_sl_add_u32_kernel(uint32_t *dst, const uint32_t *src, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        dst[i] += src[i];
}

vr_status vr_sl_min_u64(uint64_t *dst, const uint64_t *src, size_t n, void *stream)
{
    cudaStream_t s = (cudaStream_t)stream;
    vr_sl_min_u64_kernel<<<vr_sl_grid(n), VR_SL_BLOCK, 0, s>>>(
        (unsigned long long *)dst, (const unsigned long long *)src, n);
    VR_LAUNCH_CHECK("vr_sl_min_u64_kernel", s);
    return VR_OK;
}

vr_status vr_sl_max_u8(uint8_t *dst, const uint8_t *src, size_t n, void *stream)
{
    cudaStream_t s = (cudaStream_t)stream;
    vr_sl_max_u8_kernel<<<vr_sl_grid(n), VR_SL_BLOCK, 0, s>>>(dst, src, n);
    VR_LAUNCH_CHECK("vr_sl_max_u8_kernel", s);
    return VR_OK;
}

vr_status vr_sl_add_u32(uint32_t *dst, const uint32_t *src, size_t n, void *stream)
{
    cudaStream_t s = (cudaStream_t)stream;
    vr_sl_add_u32_kernel<<<vr_sl_grid(n), VR_SL_BLOCK, 0, s>>>(dst, src, n);
    VR_LAUNCH_CHECK("vr_sl_add_u32_kernel", s);
    return VR_OK;
}

/* Streamed parts: each part's image is already shaded, so the composite moves colours with
 * the words. A pixel is 4 bytes, read and written as one word. */
__global__ void vr_sl_select_min_kernel(unsigned long long *vis, uint32_t *rgba,
                                        const unsigned long long *w, const uint32_t *c,
                                        size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        const unsigned long long x = w[i];
        if (x < vis[i]) {
            vis[i] = x;
            rgba[i] = c[i];
        }
    }
}

/* Words are unique per triangle (they carry stream positions), so only the winner's word equals
 * the minimum, and on background pixels every part's does (each draws the background alike). */
__global__ void vr_sl_keep_won_kernel(uint32_t *rgba, const unsigned long long *own,
                                      const unsigned long long *least, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        if (own[i] != least[i])
            rgba[i] = 0;
}

vr_status vr_sl_select_min(uint64_t *vis, uint8_t *rgba, const uint64_t *w, const uint8_t *c,
                           size_t pixels, void *stream)
{
    cudaStream_t s = (cudaStream_t)stream;
    vr_sl_select_min_kernel<<<vr_sl_grid(pixels), VR_SL_BLOCK, 0, s>>>(
        (unsigned long long *)vis, (uint32_t *)rgba, (const unsigned long long *)w,
        (const uint32_t *)c, pixels);
    VR_LAUNCH_CHECK("vr_sl_select_min_kernel", s);
    return VR_OK;
}

vr_status vr_sl_keep_won(uint8_t *rgba, const uint64_t *own, const uint64_t *least,
                         size_t pixels, void *stream)
{
    cudaStream_t s = (cudaStream_t)stream;
    vr_sl_keep_won_kernel<<<vr_sl_grid(pixels), VR_SL_BLOCK, 0, s>>>(
        (uint32_t *)rgba, (const unsigned long long *)own, (const unsigned long long *)least,
        pixels);
    VR_LAUNCH_CHECK("vr_sl_keep_won_kernel", s);
    return VR_OK;
}

vr_status vr_sl_copy(void *dst, const void *src, size_t bytes, void *stream)
{
    VR_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, (cudaStream_t)stream));
    return VR_OK;
}

vr_status vr_sl_fill(void *dst, int byte, size_t bytes, void *stream)
{
    VR_CUDA_CHECK(cudaMemsetAsync(dst, byte, bytes, (cudaStream_t)stream));
    return VR_OK;
}

vr_status vr_sl_sync(void *stream)
{
    VR_CUDA_CHECK(cudaStreamSynchronize((cudaStream_t)stream));
    return VR_OK;
}

/* ---- timer ---------------------------------------------------------------------------------- */

struct vr_sl_timer {
    cudaEvent_t start, stop;
};

vr_status vr_sl_timer_create(vr_sl_timer **out)
{
    *out = (vr_sl_timer *)calloc(1, sizeof **out);
    if (!*out)
        return VR_ERROR(VR_ERR_OOM, "sort-last: timer");
    VR_CUDA_CHECK(cudaEventCreate(&(*out)->start));
    VR_CUDA_CHECK(cudaEventCreate(&(*out)->stop));
    return VR_OK;
}

void vr_sl_timer_destroy(vr_sl_timer *t)
{
    if (!t)
        return;
    /* teardown: nothing to act on if these fail */
    if (t->start)
        cudaEventDestroy(t->start);
    if (t->stop)
        cudaEventDestroy(t->stop);
    free(t);
}

vr_status vr_sl_timer_start(vr_sl_timer *t, void *stream)
{
    VR_CUDA_CHECK(cudaEventRecord(t->start, (cudaStream_t)stream));
    return VR_OK;
}

vr_status vr_sl_timer_stop(vr_sl_timer *t, void *stream)
{
    VR_CUDA_CHECK(cudaEventRecord(t->stop, (cudaStream_t)stream));
    return VR_OK;
}

vr_status vr_sl_timer_ms(vr_sl_timer *t, double *ms)
{
    float f = 0;
    VR_CUDA_CHECK(cudaEventSynchronize(t->stop));
    VR_CUDA_CHECK(cudaEventElapsedTime(&f, t->start, t->stop));
    *ms = f;
    return VR_OK;
}

/* ---- NCCL, loaded on first use ------------------------------------------------------------- */

#ifdef VR_HAVE_NCCL
/* The entry points used, resolved from libnccl.so.2 once (dlopen keeps the library loaded). */
typedef struct vr_nccl_api {
    ncclResult_t (*CommInitAll)(ncclComm_t *, int, const int *);
    ncclResult_t (*CommDestroy)(ncclComm_t);
    ncclResult_t (*AllReduce)(const void *, void *, size_t, ncclDataType_t, ncclRedOp_t,
                              ncclComm_t, cudaStream_t);
    ncclResult_t (*Reduce)(const void *, void *, size_t, ncclDataType_t, ncclRedOp_t, int,
                           ncclComm_t, cudaStream_t);
    ncclResult_t (*GetVersion)(int *);
    const char *(*GetErrorString)(ncclResult_t);
    const char *(*GetLastError)(ncclComm_t);
} vr_nccl_api;

static vr_nccl_api vr_nccl_fn;
static int vr_nccl_loaded; /* 1 loaded, -1 failed (vr_nccl_why says why) */
static char vr_nccl_why[512];

/* Called with the communicator's creation only, from the thread that makes it: no lock. */
static vr_status vr_nccl_load(void)
{
    if (vr_nccl_loaded == 0) {
        void *h = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            snprintf(vr_nccl_why, sizeof vr_nccl_why, "cannot load libnccl.so.2 (%s); it ships "
                     "with the CUDA toolkit: add its lib folder to LD_LIBRARY_PATH", dlerror());
            vr_nccl_loaded = -1;
        } else {
            struct {
                void **slot;
                const char *name;
            } sym[] = {{(void **)&vr_nccl_fn.CommInitAll, "ncclCommInitAll"},
                       {(void **)&vr_nccl_fn.CommDestroy, "ncclCommDestroy"},
                       {(void **)&vr_nccl_fn.AllReduce, "ncclAllReduce"},
                       {(void **)&vr_nccl_fn.Reduce, "ncclReduce"},
                       {(void **)&vr_nccl_fn.GetVersion, "ncclGetVersion"},
                       {(void **)&vr_nccl_fn.GetErrorString, "ncclGetErrorString"},
                       {(void **)&vr_nccl_fn.GetLastError, "ncclGetLastError"}};
            vr_nccl_loaded = 1;
            for (size_t i = 0; i < sizeof sym / sizeof sym[0]; ++i)
                if (!(*sym[i].slot = dlsym(h, sym[i].name))) {
                    snprintf(vr_nccl_why, sizeof vr_nccl_why, "libnccl.so.2 has no %s",
                             sym[i].name);
                    vr_nccl_loaded = -1;
                    break;
                }
        }
    }
    return vr_nccl_loaded > 0 ? VR_OK : VR_ERROR(VR_ERR_NO_DEVICE, "NCCL: %s", vr_nccl_why);
}

struct vr_nccl {
    int count;
    ncclComm_t *comm; /* count */
};

static vr_status vr_nccl_status(ncclResult_t r, ncclComm_t comm, const char *what)
{
    if (r == ncclSuccess)
        return VR_OK;
    const char *last = comm && vr_nccl_fn.GetLastError ? vr_nccl_fn.GetLastError(comm) : "";
    return VR_ERROR(VR_ERR_CUDA, "NCCL: %s failed: %s%s%s", what, vr_nccl_fn.GetErrorString(r),
                    last && *last ? ": " : "", last ? last : "");
}

int vr_nccl_built(void)
{
    return 1;
}

vr_status vr_nccl_create(vr_nccl **out, int count, const int *devices, int *version)
{
    assert(out && count > 0 && devices);
    *out = NULL;
    vr_status st = vr_nccl_load();
    if (st != VR_OK)
        return st;
    /* the device machines forbid NVLink multicast (NVLS); a user's own setting stands */
    setenv("NCCL_NVLS_ENABLE", "0", 0);
    vr_nccl *c = (vr_nccl *)calloc(1, sizeof *c);
    if (c)
        c->comm = (ncclComm_t *)calloc((size_t)count, sizeof *c->comm);
    if (!c || !c->comm) {
        free(c);
        return VR_ERROR(VR_ERR_OOM, "NCCL: %d communicators", count);
    }
    c->count = count;
    if ((st = vr_nccl_status(vr_nccl_fn.CommInitAll(c->comm, count, devices), NULL,
                             "ncclCommInitAll")) != VR_OK) {
        free(c->comm);
        free(c);
        return st;
    }
    if (version && vr_nccl_fn.GetVersion(version) != ncclSuccess)
        *version = 0;
    *out = c;
    return VR_OK;
}

void vr_nccl_destroy(vr_nccl *c)
{
    if (!c)
        return;
    for (int r = 0; r < c->count; ++r)
        if (c->comm[r])
            vr_nccl_fn.CommDestroy(c->comm[r]); /* teardown: nothing to act on */
    free(c->comm);
    free(c);
}

static ncclDataType_t vr_nccl_type(vr_sl_type t)
{
    return t == VR_SL_U8 ? ncclUint8 : t == VR_SL_U32 ? ncclUint32 : ncclUint64;
}

static ncclRedOp_t vr_nccl_op(vr_sl_op op)
{
    return op == VR_SL_MIN ? ncclMin : op == VR_SL_MAX ? ncclMax : ncclSum;
}

vr_status vr_nccl_all_reduce(vr_nccl *c, int rank, const void *send, void *recv, size_t count,
                             vr_sl_type type, vr_sl_op op, void *stream)
{
    assert(c && rank >= 0 && rank < c->count);
    return vr_nccl_status(vr_nccl_fn.AllReduce(send, recv, count, vr_nccl_type(type),
                                               vr_nccl_op(op), c->comm[rank],
                                               (cudaStream_t)stream),
                          c->comm[rank], "ncclAllReduce");
}

vr_status vr_nccl_reduce(vr_nccl *c, int rank, const void *send, void *recv, size_t count,
                         vr_sl_type type, vr_sl_op op, int root, void *stream)
{
    assert(c && rank >= 0 && rank < c->count);
    return vr_nccl_status(vr_nccl_fn.Reduce(send, recv, count, vr_nccl_type(type),
                                            vr_nccl_op(op), root, c->comm[rank],
                                            (cudaStream_t)stream),
                          c->comm[rank], "ncclReduce");
}
#else
struct vr_nccl {
    int unused;
};

int vr_nccl_built(void)
{
    return 0;
}

vr_status vr_nccl_create(vr_nccl **out, int count, const int *devices, int *version)
{
    (void)count, (void)devices;
    *out = NULL;
    if (version)
        *version = 0;
    return VR_ERROR(VR_ERR_ARG, "NCCL: this vreuse was built without NCCL (nccl.h not found); "
                    "rebuild where the CUDA toolkit ships it");
}

void vr_nccl_destroy(vr_nccl *c)
{
    (void)c;
}

vr_status vr_nccl_all_reduce(vr_nccl *c, int rank, const void *send, void *recv, size_t count,
                             vr_sl_type type, vr_sl_op op, void *stream)
{
    (void)c, (void)rank, (void)send, (void)recv, (void)count, (void)type, (void)op, (void)stream;
    return VR_ERROR(VR_ERR_ARG, "NCCL: built without NCCL");
}

vr_status vr_nccl_reduce(vr_nccl *c, int rank, const void *send, void *recv, size_t count,
                         vr_sl_type type, vr_sl_op op, int root, void *stream)
{
    (void)c, (void)rank, (void)send, (void)recv, (void)count, (void)type, (void)op, (void)root;
    (void)stream;
    return VR_ERROR(VR_ERR_ARG, "NCCL: built without NCCL");
}
#endif
