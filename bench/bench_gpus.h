/* bench_gpus.h - `vreuse bench --gpus N`: the geometry stage of one bench row on N GPUs of this
 * machine. The row's batches are cut into N parts of equal batch counts (pipeline/stage/parts.h);
 * part k runs on device k in a geometry context of its own, driven by a host thread of its own,
 * and the threads meet before every timed run so that all devices start together. Counters and
 * per-vertex shade counts are summed over the devices with ncclAllReduce (raster/sortlast_dev.h)
 * and must equal one device's run exactly. multi cannot be cut into parts (parts.h).
 * Used by pipeline/cli/bench_cmd.c: `vreuse bench sphere:7M --strategy hash,sort --gpus 2`.
 */
#ifndef VR_BENCH_GPUS_H
#define VR_BENCH_GPUS_H

#include <stdint.h>
#include <stdio.h>

#include "pipeline/stage/geometry.h"
#include "pipeline/vreuse.h"
#include "reuse/reuse.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vr_bench_gpus vr_bench_gpus;

/* Devices 0..count-1 and one NCCL communicator over them (vr_nccl_create; *nccl_version, when
 * not NULL, gets NCCL's: 22809 = 2.28.9). VR_ERR_ARG when count is 0, above VR_PARTS_MAX or
 * above the machine's device count, or in a build without NCCL; VR_ERR_NO_DEVICE without a
 * device or without libnccl.so.2; VR_ERR_CUDA when NCCL fails. The caller's current device is
 * left as it was. */
vr_status vr_bench_gpus_create(vr_bench_gpus **out, uint32_t count, int *nccl_version);
void vr_bench_gpus_destroy(vr_bench_gpus *b); /* accepts NULL */

/* Frees every device context of the current mesh: call it before that mesh is freed or
 * changed. The next call with a mesh cuts again. */
void vr_bench_gpus_reset(vr_bench_gpus *b);

/* One counted run (cfg with count = 1) of strategy `ops` on mesh `m`, cut into the devices'
 * parts, then the counters (invocations, queue length, overflow, culled per reason) and the
 * per-vertex shade counts summed over the devices with ncclAllReduce. The cut is made here, or
 * reused from the last call with the same strategy and batch limits (each strategy keeps its
 * own cut and contexts until vr_bench_gpus_reset). `m` must stay the same until then.
 * VR_ERR_ARG for multi over more than one device; VR_ERR_OOM, VR_ERR_CUDA naming the device. */
vr_status vr_bench_gpus_count(vr_bench_gpus *b, const vr_reuse_ops *ops, const vr_mesh *m,
                              const vr_reuse_params *cfg);

/* Compares the last vr_bench_gpus_count's sums with `one`, the same configuration's counted run
 * on one device (the whole mesh): every counter and every shade count exactly. Prints the
 * first 5 differences to `log` (may be NULL) prefixed with `what`; returns how many differ. */
uint64_t vr_bench_gpus_compare(const vr_bench_gpus *b, const vr_geometry_result *one, FILE *log,
                               const char *what);

/* The row's times over the devices. */
typedef struct vr_bench_gpus_times {
    double ms_med, ms_min; /* per rep the slowest device's kernel time (vr_geometry_run's
                              cudaEvents around ops->run): median and minimum over the reps */
    double wall_ms;        /* per rep the host time from the first device's start to the last
                              device's end (launches, clears, waits): median over the reps */
    uint32_t busy;         /* devices with a non-empty part (fewer than N: more devices than
                              batches) */
} vr_bench_gpus_times;

/* Times `ops` with cfg (counting as cfg says) on the cut of the last vr_bench_gpus_count with
 * the same strategy and limits (made here otherwise): one warm-up run per device, then `reps`
 * runs, each started on every device at once (the host threads meet first). */
vr_status vr_bench_gpus_time(vr_bench_gpus *b, vr_bench_gpus_times *out, const vr_reuse_ops *ops,
                             const vr_mesh *m, const vr_reuse_params *cfg, int reps);

#ifdef __cplusplus
}
#endif
#endif
