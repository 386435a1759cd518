/* queue_bench.h - `vreuse bench --queue-write`: how fast the GPU can write the triangle queue
 * (reuse/reuse.h vr_queue, 112 B per triangle) with synthetic data and no vertex reads, through
 * the batchers' own store code (vr_emit_triangle, direct and warp-staged) against a plain
 * coalesced float4 stream of the same bytes, cudaMemset and a device-to-device copy.
 * Implementation: bench/queue_bench.cu; the command: bench/bench_cmd.c.
 */
#ifndef VR_QUEUE_BENCH_H
#define VR_QUEUE_BENCH_H

#include <stdint.h>

#include "pipeline/vreuse.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum vr_queue_bench_kind {
    VR_QB_DIRECT = 0, /* vr_emit_triangle, queue_store 0: each lane stores its own slot */
    VR_QB_STAGED,     /* vr_emit_triangle, queue_store 1: warp-staged, 512 B per store */
    VR_QB_STREAM,     /* one float4 per thread over the same bytes: the write ceiling */
    VR_QB_MEMSET,     /* cudaMemsetAsync of the same bytes */
    VR_QB_COPY,       /* cudaMemcpyAsync device to device of the same bytes (read + write) */
    VR_QB_KIND_COUNT
} vr_queue_bench_kind;

typedef struct vr_queue_bench_result {
    double ms_med[VR_QB_KIND_COUNT]; /* median over the reps */
    double ms_min[VR_QB_KIND_COUNT];
    double bytes[VR_QB_KIND_COUNT];  /* bytes moved per run: 112 x triangles, twice for the copy */
    int identical;                   /* 1: direct and staged wrote the same queue, byte for byte */
} vr_queue_bench_result;

/* Name of a kind for the table ("direct", "staged", ...). */
const char *vr_queue_bench_name(vr_queue_bench_kind k);

/* Times every kind for a queue of `triangles` slots: `block` threads per block (multiple of 32,
 * 32..1024) for the kernels, one warm-up then `reps` runs each between two cudaEvents, kinds
 * interleaved per rep so clock drift hits them alike. Also checks that direct and staged write
 * identical bytes. Needs 2 x 112 x triangles bytes of device memory (VR_ERR_OOM otherwise);
 * VR_ERR_ARG for 0 triangles, a bad block or reps < 1; VR_ERR_NO_DEVICE without CUDA. */
vr_status vr_queue_bench(vr_queue_bench_result *r, uint32_t triangles, uint32_t block, int reps);

#ifdef __cplusplus
}
#endif
#endif
