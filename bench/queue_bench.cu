/* queue_bench.cu - the queue-write microbenchmark of `vreuse bench --queue-write`: writes a
 * triangle queue of the scene's triangle count with synthetic corners (no vertex reads, no
 * shading) through vr_emit_triangle (reuse/stage.cuh) with the direct and the warp-staged store,
 * and compares them with a coalesced float4 stream of the same bytes (the ceiling for this many
 * bytes), cudaMemset and a device-to-device copy. Tells how much of a batcher's time above the
 * byte floor is the queue's store pattern. Try: `vreuse bench --queue-write sphere:7M`.
 */
#include <cuda_runtime.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reuse/stage.cuh"
#include "bench/queue_bench.h"


/* Thread t emits triangle t with corners whose bits derive from t (integer adds only, so the
 * kernel stays store-bound; NaN patterns are fine, the check compares bits). Every lane of a
 * launched warp calls vr_emit_triangle, lanes past the end with valid = 0, as in naive.cu. */
static __global__ void vr_qb_emit_kernel(vr_reuse_params p, uint32_t triangles)
{
    const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    const int valid = t < triangles;
    const uint32_t seed = t * 21u;
    vr_shaded s[3];
    for (int k = 0; k < 3; ++k) {
        for (int i = 0; i < 4; ++i)
            s[k].clip[i] = __uint_as_float(seed + 7u * k + i);
        for (int i = 0; i < 3; ++i)
            s[k].normal[i] = __uint_as_float(seed + 7u * k + 4 + i);
    }
    vr_emit_triangle(p, valid, t, s[0], s[1], s[2], 3 * t, 3 * t + 1, 3 * t + 2);
}

/* Thread i writes float4 i of `n`: fully coalesced, 512 contiguous bytes per warp store. */
static __global__ void vr_qb_stream_kernel(float4 *out, size_t n)
{
    const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        const uint32_t b = (uint32_t)i * 4u;
        out[i] = make_float4(__uint_as_float(b), __uint_as_float(b + 1), __uint_as_float(b + 2),
                             __uint_as_float(b + 3));
    }
}

/* Counts the 32-bit words where a and b differ. */
static __global__ void vr_qb_compare_kernel(const uint32_t *a, const uint32_t *b, size_t n,
                                            unsigned long long *diff)
{
    const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    const int d = i < n && a[i] != b[i];
    const unsigned m = __ballot_sync(VR_FULL_MASK, d);
    if ((threadIdx.x & (VR_WARP_SIZE - 1)) == 0 && m)
        atomicAdd(diff, (unsigned long long)__popc(m));
}

extern "C" const char *vr_queue_bench_name(vr_queue_bench_kind k)
{
    static const char *const names[VR_QB_KIND_COUNT] = {"direct", "staged", "float4-stream",
                                                        "memset", "d2d-copy"};
    return (unsigned)k < VR_QB_KIND_COUNT ? names[k] : "?";
}

typedef struct vr_qb_ctx {
    unsigned char *a, *b; /* queue (and stream / memset target); copy target and check copy */
    size_t bytes;
    uint32_t triangles, block;
    vr_reuse_params p; /* queue carved from `a` */
    cudaStream_t stream;
} vr_qb_ctx;

static vr_status vr_qb_launch(const vr_qb_ctx *c, vr_queue_bench_kind k)
{
    switch (k) {
    case VR_QB_DIRECT:
    case VR_QB_STAGED: {
        vr_reuse_params p = c->p;
        p.queue_store = k == VR_QB_STAGED;
        vr_qb_emit_kernel<<<vr_grid_blocks(c->triangles, c->block), c->block, 0, c->stream>>>(
            p, c->triangles);
        VR_LAUNCH_CHECK("vr_qb_emit_kernel", c->stream);
        break;
    }
    case VR_QB_STREAM: {
        const size_t n = c->bytes / 16, blocks = (n + c->block - 1) / c->block;
        vr_qb_stream_kernel<<<(unsigned)blocks, c->block, 0, c->stream>>>((float4 *)c->a, n);
        VR_LAUNCH_CHECK("vr_qb_stream_kernel", c->stream);
        break;
    }
    case VR_QB_MEMSET:
        VR_CUDA_CHECK(cudaMemsetAsync(c->a, 0x5a, c->bytes, c->stream));
        break;
    case VR_QB_COPY:
        VR_CUDA_CHECK(cudaMemcpyAsync(c->b, c->a, c->bytes, cudaMemcpyDeviceToDevice, c->stream));
        break;
    default:
        return VR_ERROR(VR_ERR_ARG, "queue bench: unknown kind %d", (int)k);
    }
    return VR_OK;
}

static int vr_qb_cmp_float(const void *x, const void *y)
{
    const float a = *(const float *)x, b = *(const float *)y;
    return a < b ? -1 : a > b;
}

/* Direct and staged on a poisoned queue each; the staged result must equal the direct one. */
static vr_status vr_qb_check(vr_qb_ctx *c, int *identical)
{
    vr_status st = VR_OK;
    unsigned long long *d_diff = NULL, diff = ~0ull;
    const size_t words = c->bytes / 4, blocks = (words + 255) / 256;
    *identical = 0;
    if ((st = vr_cuda_alloc((void **)&d_diff, sizeof *d_diff, "queue bench difference count")) !=
        VR_OK)
        goto done;
    VR_CUDA_GOTO(cudaMemsetAsync(d_diff, 0, sizeof *d_diff, c->stream));
    VR_CUDA_GOTO(cudaMemsetAsync(c->a, 0xff, c->bytes, c->stream));
    if ((st = vr_qb_launch(c, VR_QB_DIRECT)) != VR_OK)
        goto done;
    VR_CUDA_GOTO(cudaMemcpyAsync(c->b, c->a, c->bytes, cudaMemcpyDeviceToDevice, c->stream));
    VR_CUDA_GOTO(cudaMemsetAsync(c->a, 0xff, c->bytes, c->stream));
    if ((st = vr_qb_launch(c, VR_QB_STAGED)) != VR_OK)
        goto done;
    vr_qb_compare_kernel<<<(unsigned)blocks, 256, 0, c->stream>>>((const uint32_t *)c->a,
                                                                   (const uint32_t *)c->b, words,
                                                                   d_diff);
    VR_LAUNCH_GOTO("vr_qb_compare_kernel", c->stream);
    VR_CUDA_GOTO(cudaMemcpyAsync(&diff, d_diff, sizeof diff, cudaMemcpyDeviceToHost, c->stream));
    VR_CUDA_GOTO(cudaStreamSynchronize(c->stream));
    *identical = diff == 0;
    if (diff)
        fprintf(stderr, "queue bench: staged and direct queues differ in %llu of %zu words\n",
                diff, words);
done:
    cudaFree(d_diff); /* teardown: nothing to act on, the first error is already recorded */
    return st;
}

extern "C" vr_status vr_queue_bench(vr_queue_bench_result *r, uint32_t triangles, uint32_t block,
                                    int reps)
{
    memset(r, 0, sizeof *r);
    if (triangles == 0)
        return VR_ERROR(VR_ERR_ARG, "queue bench: no triangles");
    if (block < VR_BLOCK_MIN || block > VR_BLOCK_MAX || block % VR_WARP_SIZE)
        return VR_ERROR(VR_ERR_ARG, "queue bench: block %u must be a multiple of 32 in %u..%u",
                        block, VR_BLOCK_MIN, VR_BLOCK_MAX);
    if (reps < 1)
        return VR_ERROR(VR_ERR_ARG, "queue bench: reps %d must be >= 1", reps);
    const size_t bytes = (size_t)triangles * VR_QUEUE_BYTES_PER_TRIANGLE;
    if ((bytes / 16 + block - 1) / block > (size_t)INT_MAX)
        return VR_ERROR(VR_ERR_ARG, "queue bench: %u triangles need more than 2^31 blocks of %u",
                        triangles, block);
    vr_status st = VR_OK;
    vr_qb_ctx c;
    memset(&c, 0, sizeof c);
    cudaEvent_t ev[2] = {NULL, NULL};
    float *ms = (float *)malloc((size_t)reps * VR_QB_KIND_COUNT * sizeof(float));
    if (!ms)
        return VR_ERROR(VR_ERR_OOM, "queue bench: %d timings", reps);
    c.bytes = bytes;
    c.triangles = triangles;
    c.block = block;
    if ((st = vr_cuda_alloc((void **)&c.a, bytes, "queue bench queue")) ||
        (st = vr_cuda_alloc((void **)&c.b, bytes, "queue bench copy")))
        goto done;
    VR_CUDA_GOTO(cudaStreamCreateWithFlags(&c.stream, cudaStreamNonBlocking));
    VR_CUDA_GOTO(cudaEventCreate(&ev[0]));
    VR_CUDA_GOTO(cudaEventCreate(&ev[1]));
    c.p = vr_reuse_params_default();
    c.p.queue.clip = (float *)c.a;
    c.p.queue.normal = (float *)(c.a + (size_t)triangles * 48);
    c.p.queue.vertex = (uint32_t *)(c.a + (size_t)triangles * 96);
    c.p.queue.tri_id = (uint32_t *)(c.a + (size_t)triangles * 108);
    c.p.queue.capacity = triangles;
    c.p.block_size = block;

    if ((st = vr_qb_check(&c, &r->identical)) != VR_OK)
        goto done;
    for (int k = 0; k < VR_QB_KIND_COUNT; ++k) /* warm-up */
        if ((st = vr_qb_launch(&c, (vr_queue_bench_kind)k)) != VR_OK)
            goto done;
    VR_CUDA_GOTO(cudaStreamSynchronize(c.stream));
    for (int i = 0; i < reps; ++i)
        for (int k = 0; k < VR_QB_KIND_COUNT; ++k) {
            VR_CUDA_GOTO(cudaEventRecord(ev[0], c.stream));
            if ((st = vr_qb_launch(&c, (vr_queue_bench_kind)k)) != VR_OK)
                goto done;
            VR_CUDA_GOTO(cudaEventRecord(ev[1], c.stream));
            VR_CUDA_GOTO(cudaEventSynchronize(ev[1]));
            VR_CUDA_GOTO(cudaEventElapsedTime(&ms[k * reps + i], ev[0], ev[1]));
        }
    for (int k = 0; k < VR_QB_KIND_COUNT; ++k) {
        float *m = ms + k * reps;
        qsort(m, (size_t)reps, sizeof *m, vr_qb_cmp_float);
        r->ms_med[k] = reps % 2 ? m[reps / 2] : 0.5 * (m[reps / 2 - 1] + m[reps / 2]);
        r->ms_min[k] = m[0];
        r->bytes[k] = k == VR_QB_COPY ? 2.0 * (double)bytes : (double)bytes;
    }
done:
    /* teardown: nothing to act on if these fail, the first error is already recorded */
    if (ev[0])
        cudaEventDestroy(ev[0]);
    if (ev[1])
        cudaEventDestroy(ev[1]);
    if (c.stream)
        cudaStreamDestroy(c.stream);
    cudaFree(c.a);
    cudaFree(c.b);
    free(ms);
    return st;
}
