/* bench_common.c - run metadata, list splitting and medians for the benchmark commands
 * (bench/bench_cmd.c, bench/gts_bench_cmd.c). */
#define _POSIX_C_SOURCE 200809L /* popen */
#include "pipeline/cli/bench_common.h"

#include "pipeline/stage/geometry.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* First line of a command's output, or `fallback`. */
static void command_line_of(char *buf, size_t n, const char *cmd, const char *fallback)
{
    snprintf(buf, n, "%s", fallback);
    FILE *p = popen(cmd, "r");
    if (!p)
        return;
    char line[256];
    if (fgets(line, sizeof line, p)) {
        size_t len = strcspn(line, "\r\n");
        if (len >= n)
            len = n - 1;
        if (len > 0) {
            memcpy(buf, line, len);
            buf[len] = 0;
        }
    }
    pclose(p);
}

void vr_bench_meta_fill(vr_bench_meta *m, int argc, char **argv)
{
    memset(m, 0, sizeof *m);
    snprintf(m->gpu, sizeof m->gpu, "%s", vr_gpu_device_name());
    int driver = 0, runtime = 0;
    vr_gpu_device_info(&driver, &runtime, &m->sm_count, &m->clock_khz);
    snprintf(m->cuda, sizeof m->cuda, "%d.%d", runtime / 1000, runtime % 1000 / 10);
    char fallback[64];
    snprintf(fallback, sizeof fallback, "CUDA driver API %d.%d", driver / 1000, driver % 1000 / 10);
    const char *env = getenv("VR_GPU_DRIVER");
    if (env && *env)
        snprintf(m->driver, sizeof m->driver, "%s", env);
    else
        command_line_of(m->driver, sizeof m->driver,
                        "nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null",
                        fallback);
    env = getenv("VR_GIT_COMMIT");
    if (env && *env)
        snprintf(m->commit, sizeof m->commit, "%s", env);
    else
        command_line_of(m->commit, sizeof m->commit, "git rev-parse --short HEAD 2>/dev/null",
                        "unknown");
    const time_t now = time(NULL);
    strftime(m->date, sizeof m->date, "%Y-%m-%d %H:%M:%S UTC", gmtime(&now));
    size_t len = 0;
    for (int i = 0; i < argc && len + 2 < sizeof m->command; ++i)
        len += (size_t)snprintf(m->command + len, sizeof m->command - len, "%s%s", i ? " " : "",
                                argv[i]);
}

int vr_bench_split(char *s, char **out, int max)
{
    int n = 0;
    for (char *save = NULL, *tok = strtok_r(s, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (n == max)
            return -1;
        out[n++] = tok;
    }
    return n;
}

static int cmp_float(const void *a, const void *b)
{
    const float x = *(const float *)a, y = *(const float *)b;
    return x < y ? -1 : x > y;
}

double vr_bench_median(float *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_float);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}
