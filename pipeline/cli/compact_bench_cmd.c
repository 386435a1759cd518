/* compact_bench_cmd.c - `vreuse bench-compact`: the compaction methods of
 * pipeline/compact/compact.h (in-kernel ordered / collate / atomic, HistoPyramids, CUB and a
 * three-pass scan) on uniform 32-bit input, keeping value < threshold, per size x selectivity
 * x method. Each is first checked against the CPU reference (exact order, or complete runs for
 * collate and atomic; nothing written past the count) - a FAIL row and exit status 1 otherwise
 * - then timed: one warm-up and --reps runs, kernels only (cudaEvents), median and minimum.
 * Buffers and the context are allocated once, for the largest size.
 * Try: `vreuse bench-compact --sizes 16M --select 50 --reps 5`.
 */
#include "pipeline/cli/cli.h"
#include "pipeline/cli/commands.h"
#include "pipeline/compact/compact.h"
#include "pipeline/stage/geometry.h"
#include "pipeline/vr_mem.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VR_CB_SEED 1u /* of the input: vr_compact_input(in, n, VR_CB_SEED) */

typedef struct vr_cb_opts {
    vr_cli_u32s sizes;    /* elements */
    vr_cli_u32s percents; /* kept, percent of uniform input */
    vr_cli_choices methods;
    int reps;
} vr_cb_opts;

/* One (size, selectivity, method) row. */
typedef struct vr_cb_row {
    uint32_t n, percent, kept;
    vr_compact_method method;
    int ok;
    double ms_med, ms_min;
    double x_cub;    /* ms_med / cub-if's ms_med at the same size and selectivity; < 0: none */
    double floor_ms; /* (4 n + 4 kept) bytes at the D2D copy bandwidth; < 0: not measured */
} vr_cb_row;

/* The table (stdout, or stderr when --csv - or --md - takes stdout). */
static FILE *g_cb_human;

/* ---- output -------------------------------------------------------------------------------- */

static const char *const g_cb_csv_header =
    "n,select_pct,method,order,kept,ms_med,ms_min,gb_per_s,gelem_per_s,x_cub,floor_ms,x_floor";

/* Bytes a method must move at least: the input read once, the kept elements written once. */
static double vr_cb_bytes(const vr_cb_row *r)
{
    return 4.0 * r->n + 4.0 * r->kept;
}

static void vr_cb_print(FILE *f, const vr_cb_row *rows, size_t count, int style /* 0 table,
                        1 csv, 2 markdown */)
{
    if (style == 1)
        fprintf(f, "%s\n", g_cb_csv_header);
    else if (style == 2)
        fprintf(f, "| n | select | method | order | kept | ms_med | ms_min | GB/s | Gelem/s | "
                   "x_cub | floor_ms | x_floor |\n|---:|---:|---|---|---:|---:|---:|---:|---:|"
                   "---:|---:|---:|\n");
    else
        fprintf(f, "%11s %6s %-11s %-5s %11s %9s %9s %8s %8s %6s %8s %7s\n", "n", "select",
                "method", "order", "kept", "ms_med", "ms_min", "GB/s", "Gelem/s", "x_cub",
                "floor_ms", "x_floor");
    for (size_t i = 0; i < count; ++i) {
        const vr_cb_row *r = &rows[i];
        const char *name = vr_compact_method_names[r->method];
        const char *order = vr_compact_order_name(vr_compact_method_order(r->method));
        if (!r->ok) {
            if (style == 1)
                fprintf(f, "%u,%u,%s,%s,FAIL,,,,,,,\n", r->n, r->percent, name, order);
            else if (style == 2)
                fprintf(f, "| %u | %u%% | %s | %s | FAIL | | | | | | | |\n", r->n, r->percent,
                        name, order);
            else
                fprintf(f, "%11u %5u%% %-11s %-5s FAIL\n", r->n, r->percent, name, order);
            continue;
        }
        const double gbs = vr_cb_bytes(r) / (r->ms_med * 1e6);
        const double gelem = r->n / (r->ms_med * 1e6);
        char x_cub[32] = "", floor_ms[32] = "", x_floor[32] = "";
        if (r->x_cub >= 0)
            snprintf(x_cub, sizeof x_cub, "%.3f", r->x_cub);
        if (r->floor_ms > 0) {
            snprintf(floor_ms, sizeof floor_ms, style == 1 ? "%.5f" : "%.4f", r->floor_ms);
            snprintf(x_floor, sizeof x_floor, "%.3f", r->ms_med / r->floor_ms);
        }
        if (style == 1)
            fprintf(f, "%u,%u,%s,%s,%u,%.5f,%.5f,%.1f,%.3f,%s,%s,%s\n", r->n, r->percent, name,
                    order, r->kept, r->ms_med, r->ms_min, gbs, gelem, x_cub, floor_ms, x_floor);
        else if (style == 2)
            fprintf(f, "| %u | %u%% | %s | %s | %u | %.4f | %.4f | %.1f | %.2f | %s | %s | %s |\n",
                    r->n, r->percent, name, order, r->kept, r->ms_med, r->ms_min, gbs, gelem,
                    x_cub, floor_ms, x_floor);
        else
            fprintf(f, "%11u %5u%% %-11s %-5s %11u %9.4f %9.4f %8.1f %8.2f %6s %8s %7s\n", r->n,
                    r->percent, name, order, r->kept, r->ms_med, r->ms_min, gbs, gelem, x_cub,
                    floor_ms, x_floor);
    }
}

static void vr_cb_meta(FILE *f, const vr_cli_meta *m, const vr_cb_opts *o, const char *pre)
{
    vr_cli_meta_write(f, m, pre);
    fprintf(f, "%sinput: uint32 values vr_compact_mix(i, %u) (distinct, uniform), keep value < "
            "select%% x 2^32 / 100; median and minimum of %d runs after one warm-up, kernels "
            "only (cudaEvents), every method checked against the CPU reference first\n", pre,
            VR_CB_SEED, o->reps);
    fprintf(f, "%sGB/s = (4 n + 4 kept) bytes / ms_med (the least any method moves); Gelem/s "
            "= n / ms_med; x_cub = ms_med / cub-if's; floor_ms = those bytes at the D2D copy "
            "bandwidth (%.0f GB/s, read + write), x_floor = ms_med / floor_ms; order: exact, "
            "block (collate: runs of %u elements), warp (atomic: runs of %u)\n", pre,
            m->bandwidth * 1e-9, VR_COMPACT_TILE, 1u << VR_COMPACT_WARP_RUN_LOG2);
}

/* ---- the measurement ----------------------------------------------------------------------- */

typedef struct vr_cb_bufs {
    uint32_t *d_in, *d_out;  /* most words (+ 4096 past the end of the output) */
    uint32_t *in, *want, *got;
    vr_compact_ctx *ctx;
} vr_cb_bufs;

static void vr_cb_bufs_free(vr_cb_bufs *b)
{
    vr_compact_destroy(b->ctx);
    vr_compact_buffer_free(b->d_in);
    vr_compact_buffer_free(b->d_out);
    void *const bufs[] = {b->in, b->want, b->got};
    vr_free_all(bufs, VR_COUNT_OF(bufs));
    memset(b, 0, sizeof *b);
}

static vr_status vr_cb_bufs_alloc(vr_cb_bufs *b, uint32_t most)
{
    memset(b, 0, sizeof *b);
    const size_t words = (size_t)most + 4096;
    b->in = malloc(words * 4);
    b->want = malloc(words * 4);
    b->got = malloc(words * 4);
    if (!b->in || !b->want || !b->got)
        return VR_ERROR(VR_ERR_OOM, "out of host memory for 3 x %u elements", most);
    vr_status st;
    if ((st = vr_compact_buffer_alloc(&b->d_in, words, "input")) != VR_OK ||
        (st = vr_compact_buffer_alloc(&b->d_out, words, "output")) != VR_OK)
        return st;
    return vr_compact_create(&b->ctx, most);
}

/* Checks method m once: the output poisoned (a value that is no input element), then it must
 * keep its order promise and write nothing past its count. 1 when it passed, else 0 with the
 * problem printed. */
static int vr_cb_validate(vr_cb_bufs *b, vr_compact_method m, uint32_t n, uint64_t threshold,
                          uint32_t want_count, const char *what)
{
    const uint32_t poison = vr_compact_mix(n, VR_CB_SEED);
    uint32_t count = 0;
    vr_status st = vr_compact_buffer_fill(b->d_out, (size_t)n + 4096, poison);
    if (st == VR_OK)
        st = vr_compact_select(b->ctx, m, b->d_out, b->d_in, n, threshold, &count, NULL);
    if (st == VR_OK && count > n)
        st = vr_set_error(VR_ERR_OVERFLOW, "count %u of %u elements", count, n);
    if (st == VR_OK)
        st = vr_compact_buffer_download(b->got, b->d_out, (size_t)count + 4096);
    if (st != VR_OK) {
        fprintf(stderr, "FAIL %s: %s\n", what, vr_last_error());
        return 0;
    }
    char msg[256];
    if (vr_compact_check(b->got, count, b->want, want_count, b->in, n, threshold, VR_CB_SEED,
                         vr_compact_method_order(m), msg, sizeof msg) != 0) {
        fprintf(stderr, "FAIL %s: %s\n", what, msg);
        return 0;
    }
    for (uint32_t j = 0; j < 4096; ++j)
        if (b->got[(size_t)count + j] != poison) {
            fprintf(stderr, "FAIL %s: output %llu, past the count %u, was written\n", what,
                    (unsigned long long)count + j, count);
            return 0;
        }
    return 1;
}

/* One warm-up, then `reps` timed runs; each must return the validated count. */
static vr_status vr_cb_time(vr_cb_bufs *b, vr_cb_row *r, uint64_t threshold, int reps)
{
    float *ms = malloc((size_t)reps * sizeof *ms);
    if (!ms)
        return VR_ERROR(VR_ERR_OOM, "out of memory for %d timings", reps);
    vr_status st = VR_OK;
    for (int rep = -1; rep < reps && st == VR_OK; ++rep) {
        uint32_t count = 0;
        float t = 0;
        st = vr_compact_select(b->ctx, r->method, b->d_out, b->d_in, r->n, threshold, &count, &t);
        if (st == VR_OK && count != r->kept)
            st = vr_set_error(VR_ERR_FORMAT, "a timed run returned %u elements, the checked one %u",
                              count, r->kept);
        if (rep >= 0)
            ms[rep] = t;
    }
    if (st == VR_OK) {
        r->ms_med = vr_cli_median_float(ms, reps); /* sorts ms */
        r->ms_min = ms[0];
    }
    free(ms);
    return st;
}

/* All rows of one size; returns nonzero when anything failed. */
static int vr_cb_size(const vr_cb_opts *o, vr_cb_bufs *b, uint32_t n, double bandwidth,
                      vr_cb_row *rows, size_t *count)
{
    vr_compact_input(b->in, n, VR_CB_SEED);
    if (vr_compact_buffer_upload(b->d_in, b->in, n) != VR_OK)
        return vr_cli_fail_last("bench-compact");
    int failed = 0;
    for (int p = 0; p < o->percents.count; ++p) {
        const uint32_t percent = o->percents.v[p];
        const uint64_t threshold = ((uint64_t)percent << 32) / 100;
        const uint32_t kept = vr_compact_ref(b->want, b->in, n, threshold);
        if (!vr_progress_quiet)
            fprintf(stderr, "bench-compact: %u elements (%.1f MB), %u%%: %u kept\n", n, n * 4e-6,
                    percent, kept);
        vr_cb_row *group = rows + *count;
        for (int k = 0; k < o->methods.count; ++k) {
            vr_cb_row *r = &rows[(*count)++];
            memset(r, 0, sizeof *r);
            r->n = n;
            r->percent = percent;
            r->kept = kept;
            r->method = (vr_compact_method)o->methods.v[k];
            r->x_cub = -1;
            r->floor_ms = bandwidth > 0 ? vr_cb_bytes(r) / bandwidth * 1e3 : -1;
            char what[128];
            snprintf(what, sizeof what, "%s, %u elements, %u%%",
                     vr_compact_method_names[r->method], n, percent);
            if (!vr_cb_validate(b, r->method, n, threshold, kept, what)) {
                failed = 1;
                continue;
            }
            if (vr_cb_time(b, r, threshold, o->reps) != VR_OK) {
                fprintf(stderr, "FAIL %s: %s\n", what, vr_last_error());
                failed = 1;
                continue;
            }
            r->ok = 1;
        }
        const vr_cb_row *cub = NULL;
        for (vr_cb_row *r = group; r < rows + *count; ++r)
            if (r->ok && r->method == VR_COMPACT_CUB_IF)
                cub = r;
        for (vr_cb_row *r = group; r < rows + *count && cub; ++r)
            if (r->ok)
                r->x_cub = r->ms_med / cub->ms_med;
    }
    return failed;
}

/* ---- the command --------------------------------------------------------------------------- */

static const vr_cli_command g_cmd = {
    "bench-compact", "",
    "Times stream compaction on the GPU: keep the 32-bit elements below a threshold, per size,\n"
    "selectivity and method. Methods: ordered (in-kernel InK-Compact, one pass, order kept\n"
    "through sections of 32 blocks), collate (one atomicAdd per tile), atomic (one per warp),\n"
    "hp and hp4 (HistoPyramid build + descents or tiles, plain and vec4), cub-if\n"
    "(cub::DeviceSelect::If), cub-flagged (flag kernel + cub::DeviceSelect::Flagged) and scan\n"
    "(flags, cub::DeviceScan::ExclusiveSum, scatter). Each is first checked against the CPU\n"
    "reference (a FAIL row and exit status 1 otherwise), then timed: one warm-up and --reps\n"
    "runs of its kernels (cudaEvents), median and minimum. Buffers are allocated once for the\n"
    "largest size: about 23 bytes per element on the device. Needs a CUDA build and device.",
    "Columns: GB/s counts the input read once and the kept elements written once; x_cub is\n"
    "the time relative to cub-if; floor_ms is that traffic at the measured D2D copy bandwidth.\n"
    "The default run (256M elements = 1 GB of input) is meant to finish within two minutes\n"
    "on an H100, most of it the CPU checks.",
    VR_CLI_OPERANDS_OWN};

int vr_cmd_bench_compact(int argc, char **argv)
{
    vr_cb_opts o;
    memset(&o, 0, sizeof o);
    o.sizes = (vr_cli_u32s){{1000000, 16000000, 256000000}, 3};
    o.percents = (vr_cli_u32s){{1, 50, 99}, 3};
    for (int k = 0; k < VR_COMPACT_METHOD_COUNT; ++k)
        o.methods.v[o.methods.count++] = k;
    o.reps = 20;
    const char *csv = NULL, *md = NULL;
    const vr_cli_opt opts[] = {
        {"sizes", 0, "LIST",
         "elements per run, comma separated, k/M suffixes (default 1M,16M,256M)",
         vr_cli_parse_u32s, &o.sizes, 0, 1, VR_COMPACT_MAX_N, 0, NULL},
        {"select", 0, "LIST",
         "percent of the elements kept, comma separated (default 1,50,99)", vr_cli_parse_u32s,
         &o.percents, 0, 0, 100, 0, NULL},
        {"method", 0, "LIST",
         "methods, comma separated: ordered, collate, atomic, hp, hp4, cub-if, cub-flagged, "
         "scan, or all (default all)",
         vr_cli_parse_choices, &o.methods, 0, 0, 0, 0, vr_compact_method_names},
        VR_CLI_REPS(&o.reps, "20"),
        VR_CLI_CSV(&csv),
        {"md", 0, "FILE",
         "also write the metadata and all rows as Markdown to FILE ('-': standard output)",
         vr_cli_parse_path, &md, 0, 0, 0, 0, NULL},
        {0}};
    vr_cli_args args;
    VR_CLI_PARSE_OR_RETURN(&g_cmd, opts, argc, argv, &args);
    if (args.count > 0)
        return vr_cli_fail(VR_CLI_USAGE, "bench-compact", "unexpected operand '%s' (it takes "
                           "options only; see vreuse bench-compact --help)", args.v[0]);

    /* outputs first: a bad path fails before the device is looked for */
    vr_cli_bench_out out;
    if (vr_cli_bench_begin(&out, "bench-compact", csv, md, "bench-compact times GPU kernels and "
                           "needs a CUDA build and device; `vreuse_tests compact/` checks the "
                           "CPU references.", argc, argv))
        return 1;
    g_cb_human = out.human;
    uint32_t most = 0;
    for (int s = 0; s < o.sizes.count; ++s)
        most = o.sizes.v[s] > most ? o.sizes.v[s] : most;
    const size_t max_rows = (size_t)o.sizes.count * o.percents.count * o.methods.count;
    vr_cb_row *rows = calloc(max_rows + 1, sizeof *rows);
    vr_cb_bufs b;
    int failed = 0;
    if (!rows) {
        memset(&b, 0, sizeof b);
        failed = vr_cli_fail(1, "bench-compact", "out of memory for %zu rows", max_rows);
    } else if (vr_cb_bufs_alloc(&b, most) != VR_OK) {
        failed = vr_cli_fail(1, "bench-compact", "%u elements: %s", most, vr_last_error());
    }
    size_t n = 0;
    for (int s = 0; s < o.sizes.count && !failed; ++s)
        failed |= vr_cb_size(&o, &b, o.sizes.v[s], out.meta.bandwidth, rows, &n);
    vr_cb_bufs_free(&b);
    if (n > 0) {
        vr_cb_print(g_cb_human, rows, n, 0);
        if (out.csv.f) {
            vr_cb_meta(out.csv.f, &out.meta, &o, "# ");
            vr_cb_print(out.csv.f, rows, n, 1);
        }
        if (out.md.f) {
            fprintf(out.md.f, "# vreuse bench-compact\n\n");
            vr_cb_meta(out.md.f, &out.meta, &o, "- ");
            fprintf(out.md.f, "\n");
            vr_cb_print(out.md.f, rows, n, 2);
        }
    }
    free(rows);
    if (n == 0) { /* nothing measured: leave the destinations as they were */
        vr_cli_out_abort(&out.csv);
        vr_cli_out_abort(&out.md);
        return 1;
    }
    if (vr_cli_out_close(&out.csv) != VR_OK)
        failed = vr_cli_fail_last("bench-compact");
    if (vr_cli_out_close(&out.md) != VR_OK)
        failed = vr_cli_fail_last("bench-compact");
    return failed ? 1 : 0;
}
