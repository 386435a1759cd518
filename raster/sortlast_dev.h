/* sortlast_dev.h - the device side of sort-last rendering (raster/sortlast.c): compositing
 * kernels for parts that share one device, and the NCCL transport for parts on several.
 *
 * NCCL is loaded with dlopen on first use (libnccl.so.2, which ships with the CUDA toolkit), so
 * a binary built with it still starts - and renders on one GPU - where the library is missing;
 * only --gpus N > 1 then fails, naming the library. A build without nccl.h has no transport
 * (VR_ERR_ARG "built without NCCL"). The device machines forbid NVLink multicast: NCCL_NVLS_ENABLE
 * is set to 0 before the communicator is made (unless the user set it), and nothing here calls
 * cuMulticastCreate.
 * Multi-node is the next step and changes only this file's communicator: one process per GPU,
 * ncclGetUniqueId on rank 0 sent to the others over MPI_Bcast, ncclCommInitRank instead of
 * ncclCommInitAll; the collectives and the compositing stay as they are.
 */
#ifndef VR_SORTLAST_DEV_H
#define VR_SORTLAST_DEV_H

#include <stddef.h>
#include <stdint.h>

#include "pipeline/vreuse.h"

#ifdef __cplusplus
extern "C" {
#endif

/* CUDA devices visible (0 without CUDA); VR_ERR_NO_DEVICE when none. */
vr_status vr_sl_device_count(int *count);
vr_status vr_sl_set_device(int device);
vr_status vr_sl_get_device(int *device);
/* cudaMalloc of the counters' all-reduce buffer (VR_ERR_OOM naming it) / cudaFree for
 * teardown (NULL accepted). */
vr_status vr_sl_alloc(void **ptr, size_t bytes);
void vr_sl_free(void *ptr);

/* Element-wise dst = min(dst, src) over n visibility words, dst = max(dst, src) over n bytes,
 * dst += src over n words: the collectives' reductions for parts on one device. Enqueued on
 * `stream` (cudaStream_t), not waited for. */
vr_status vr_sl_min_u64(uint64_t *dst, const uint64_t *src, size_t n, void *stream);
vr_status vr_sl_max_u8(uint8_t *dst, const uint8_t *src, size_t n, void *stream);
vr_status vr_sl_add_u32(uint32_t *dst, const uint32_t *src, size_t n, void *stream);
/* Streamed parts (images already shaded): where w[i] < vis[i], vis[i] = w[i] and pixel i of
 * rgba takes pixel i of c; and a rank's keep-what-it-won mask over NCCL: pixel i of rgba becomes
 * 0 where own[i] != least[i] (the all-reduced minimum). `pixels` pixels, 4-byte aligned images. */
vr_status vr_sl_select_min(uint64_t *vis, uint8_t *rgba, const uint64_t *w, const uint8_t *c,
                           size_t pixels, void *stream);
vr_status vr_sl_keep_won(uint8_t *rgba, const uint64_t *own, const uint64_t *least,
                         size_t pixels, void *stream);
/* cudaMemcpyAsync (any direction, unified addressing), cudaMemsetAsync, stream waits. */
vr_status vr_sl_copy(void *dst, const void *src, size_t bytes, void *stream);
vr_status vr_sl_fill(void *dst, int byte, size_t bytes, void *stream);
vr_status vr_sl_sync(void *stream);

/* A pair of events on one device, for the compositing time. */
typedef struct vr_sl_timer vr_sl_timer;
vr_status vr_sl_timer_create(vr_sl_timer **out);
void vr_sl_timer_destroy(vr_sl_timer *t); /* accepts NULL */
vr_status vr_sl_timer_start(vr_sl_timer *t, void *stream);
vr_status vr_sl_timer_stop(vr_sl_timer *t, void *stream);
vr_status vr_sl_timer_ms(vr_sl_timer *t, double *ms); /* waits for the stop event */

/* ---- NCCL ---------------------------------------------------------------------------------- */

typedef enum vr_sl_type { VR_SL_U8 = 0, VR_SL_U32, VR_SL_U64 } vr_sl_type;
typedef enum vr_sl_op { VR_SL_MIN = 0, VR_SL_MAX, VR_SL_SUM } vr_sl_op;

/* 1 when this build can use NCCL (nccl.h was found), else 0. */
int vr_nccl_built(void);
/* One communicator over `count` devices (ncclCommInitAll), rank r on devices[r]. VR_ERR_ARG
 * without NCCL in the build, VR_ERR_NO_DEVICE when libnccl.so.2 cannot be loaded (the message
 * says why), VR_ERR_CUDA when NCCL fails. *version gets NCCL's (22809 = 2.28.9) when not NULL. */
typedef struct vr_nccl vr_nccl;
vr_status vr_nccl_create(vr_nccl **out, int count, const int *devices, int *version);
void vr_nccl_destroy(vr_nccl *c); /* accepts NULL */
/* Rank r's part of an all-reduce / a reduce to `root`, enqueued on `stream`; every rank must
 * make the same calls in the same order (one host thread per rank may call them at once). */
vr_status vr_nccl_all_reduce(vr_nccl *c, int rank, const void *send, void *recv, size_t count,
                             vr_sl_type type, vr_sl_op op, void *stream);
vr_status vr_nccl_reduce(vr_nccl *c, int rank, const void *send, void *recv, size_t count,
                         vr_sl_type type, vr_sl_op op, int root, void *stream);

#ifdef __cplusplus
}
#endif
#endif
