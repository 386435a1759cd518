/* bench_common.h - what the two GPU benchmark commands (`vreuse bench`, `vreuse bench-gts`) share:
 * the '#' metadata of a run (GPU, driver, CUDA, date, commit, command), comma-list splitting and
 * the median of timings. Host C, no CUDA types. */
#ifndef VR_BENCH_COMMON_H
#define VR_BENCH_COMMON_H

#include <stddef.h>

typedef struct vr_bench_meta {
    char gpu[256], driver[64], cuda[32], date[64], commit[64], command[1024];
    double bandwidth; /* measured D2D bytes per second (read + write); 0 when not measured */
    int sm_count, clock_khz;
} vr_bench_meta;

/* Fills GPU name, CUDA runtime, SM count and clock from the device; the driver from env
 * VR_GPU_DRIVER or nvidia-smi; the commit from env VR_GIT_COMMIT or git; the date (UTC) and the
 * command line from argv. bandwidth is left 0. */
void vr_bench_meta_fill(vr_bench_meta *m, int argc, char **argv);

/* Splits a comma list in place into `out` (pointers into `s`); the count, or -1 past `max`. */
int vr_bench_split(char *s, char **out, int max);

/* Sorts v[0..n) and returns its median (n > 0). */
double vr_bench_median(float *v, int n);

#endif
