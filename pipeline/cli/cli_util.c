/* cli_util.c - scene labels, output paths per scene and order, CSV fields, medians and the run
 * metadata of benchmarks and their common start, batch limits from --limits (cli.h). */
#define _POSIX_C_SOURCE 200809L /* popen */
#include "pipeline/cli/cli.h"

#include "pipeline/stage/geometry.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

const char *vr_cli_scene_label(const char *spec) { return vr_path_name(spec); }

/* Appends "-label" with characters a file name should not hold replaced by '_'. */
static size_t append_label(char *dst, size_t len, const char *label)
{
    dst[len++] = '-';
    for (const char *c = label; *c; ++c) {
        const int ok = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
                       (*c >= '0' && *c <= '9') || *c == '.' || *c == '-' || *c == '_';
        dst[len++] = ok ? *c : '_';
    }
    dst[len] = '\0';
    return len;
}

char *vr_cli_output_path(const char *base, const char *scene, const char *order)
{
    const char *slash = strrchr(base, '/'), *dot = strrchr(base, '.');
    if (!dot || (slash && dot < slash) || dot == base || (slash && dot == slash + 1))
        dot = base + strlen(base); /* no extension: append the labels */
    const char *s = !scene ? "" : vr_cli_label_shared(scene) ? scene : vr_cli_scene_label(scene);
    const char *o = order ? order : "";
    char *out = malloc(strlen(base) + strlen(s) + strlen(o) + 3);
    if (!out)
        return NULL;
    size_t len = (size_t)(dot - base);
    memcpy(out, base, len);
    out[len] = '\0';
    if (*s)
        len = append_label(out, len, s);
    if (*o)
        len = append_label(out, len, o);
    strcpy(out + len, dot);
    return out;
}

void vr_cli_csv_field(FILE *f, const char *s)
{
    if (!strpbrk(s, ",\"\n\r")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (const char *c = s; *c; ++c) {
        if (*c == '"')
            fputc('"', f);
        fputc(*c, f);
    }
    fputc('"', f);
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int cmp_float(const void *a, const void *b)
{
    const float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

double vr_cli_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

float vr_cli_median_float(float *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_float);
    return n % 2 ? v[n / 2] : 0.5f * (v[n / 2 - 1] + v[n / 2]);
}

char *vr_cli_command_line(int argc, char **argv)
{
    size_t n = sizeof "vreuse";
    for (int i = 0; i < argc; ++i)
        n += strlen(argv[i]) + 3;
    char *s = malloc(n);
    if (!s)
        return NULL;
    size_t len = (size_t)sprintf(s, "vreuse");
    for (int i = 0; i < argc; ++i)
        len += (size_t)sprintf(s + len, strpbrk(argv[i], " \t'\"") ? " '%s'" : " %s", argv[i]);
    return s;
}

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

void vr_cli_meta_fill(vr_cli_meta *m, int argc, char **argv)
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
    char *typed = vr_cli_command_line(argc, argv);
    snprintf(m->command, sizeof m->command, "%s", typed ? typed : "vreuse");
    free(typed);
}

void vr_cli_meta_write(FILE *f, const vr_cli_meta *m, const char *prefix)
{
    fprintf(f, "%sgpu: %s (%d SMs, %d MHz)\n", prefix, m->gpu, m->sm_count, m->clock_khz / 1000);
    fprintf(f, "%sdriver: %s\n%scuda runtime: %s\n%sdate: %s\n%scommit: %s\n%scommand: %s\n",
            prefix, m->driver, prefix, m->cuda, prefix, m->date, prefix, m->commit, prefix,
            m->command);
}

/* Opens one benchmark output (NULL: not asked for); 0, or 1 with the message printed. */
static int bench_open(vr_cli_out *out, const char *path, const char *what, const char *cmd)
{
    memset(out, 0, sizeof *out);
    if (path && vr_cli_out_open(out, path, what) != VR_OK)
        return vr_cli_fail_last(cmd);
    return 0;
}

int vr_cli_bench_begin(vr_cli_bench_out *b, const char *cmd, const char *csv, const char *md,
                       const char *no_device, int argc, char **argv)
{
    memset(b, 0, sizeof *b);
    if (bench_open(&b->csv, csv, "CSV", cmd) || bench_open(&b->md, md, "Markdown", cmd)) {
        vr_cli_out_abort(&b->csv);
        return 1;
    }
    b->human = b->csv.is_stdout || b->md.is_stdout ? stderr : stdout;
    if (!vr_gpu_available()) {
        vr_cli_out_abort(&b->csv);
        vr_cli_out_abort(&b->md);
        return vr_cli_fail(1, cmd, "%s. %s", vr_gpu_device_name(), no_device);
    }
    vr_cli_meta_fill(&b->meta, argc, argv);
    if (vr_gpu_copy_bandwidth(&b->meta.bandwidth) != VR_OK)
        fprintf(stderr, "vreuse %s: bandwidth: %s (floor_ms left empty)\n", cmd,
                vr_last_error());
    fprintf(b->human, "# %s, driver %s, CUDA %s, D2D copy %.2f TB/s\n", b->meta.gpu,
            b->meta.driver, b->meta.cuda, b->meta.bandwidth * 1e-12);
    return 0;
}

/* ---- batch limits ------------------------------------------------------------------------- */

const char *const vr_cli_limits_names[] = {"paper", "auto", NULL};
const char *const vr_cli_patch_builder_names[] = {"cpu", "gpu", NULL};

static vr_gpu_shape limits_gpu(const vr_cli_limits *l, const vr_gpu_shape *gpu)
{
    vr_gpu_shape g = gpu ? *gpu : vr_gpu_shape_default(VR_SMS_DEFAULT);
    if (l->sms)
        g.sm_count = l->sms;
    return g;
}

vr_status vr_cli_limits_resolve(vr_batch_limits *out, const vr_cli_limits *l, vr_reuse_kind kind,
                                uint32_t triangles, uint32_t vertex_count,
                                const vr_gpu_shape *gpu)
{
    assert(out && l);
    *out = vr_batch_limits_paper();
    if (l->automatic) {
        const vr_gpu_shape g = limits_gpu(l, gpu);
        const vr_status s = vr_batch_limits_auto(out, kind, triangles, vertex_count, &g);
        if (s != VR_OK)
            return s;
    }
    if (l->given.block_size)
        out->block_size = l->given.block_size;
    if (l->given.max_unique)
        out->max_unique = l->given.max_unique;
    if (l->given.max_indices)
        out->max_indices = l->given.max_indices;
    if (l->given.batch_indices)
        out->batch_indices = l->given.batch_indices;
    return VR_OK;
}

void vr_cli_limits_label(char *buf, size_t size, const vr_cli_limits *l, const vr_gpu_shape *gpu)
{
    assert(buf && size && l);
    if (!l->automatic) {
        snprintf(buf, size, "paper");
        return;
    }
    const vr_gpu_shape g = limits_gpu(l, gpu);
    snprintf(buf, size, "auto (%u SMs)", g.sm_count);
}
