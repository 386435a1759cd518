/* bench_gpus_dev.cu - the CUDA calls bench_gpus.c needs beyond raster/sortlast_dev.h: a stream of
 * its own per device for the all-reduce buffers' copies and the NCCL collectives (blocking, like
 * the raster frame's stream that sort-last's collectives run on), and those buffers.
 */
#include <cuda_runtime.h>

#include "pipeline/vr_check.h"
#include "pipeline/vreuse.h"

/* A stream on the current device into *stream (a cudaStream_t). */
extern "C" vr_status vr_bench_stream_create(void **stream)
{
    cudaStream_t s = NULL;
    *stream = NULL;
    VR_CUDA_CHECK(cudaStreamCreate(&s));
    *stream = (void *)s;
    return VR_OK;
}

/* Destroys a stream of vr_bench_stream_create (NULL accepted); its device must be current. */
extern "C" void vr_bench_stream_destroy(void *stream)
{
    if (stream)
        cudaStreamDestroy((cudaStream_t)stream); /* teardown: nothing to act on */
}

/* cudaMalloc of `bytes` on the current device into *ptr; VR_ERR_OOM naming `what`. */
extern "C" vr_status vr_bench_device_alloc(void **ptr, size_t bytes, const char *what)
{
    return vr_cuda_alloc(ptr, bytes, what);
}
