/* bench_cmd.c - `vreuse bench`: times every reuse/ strategy on the GPU per scene x shader load
 * x block size (Kenzel et al. 2018, Table 2), after checking each (scene, strategy, block)
 * against its CPU twin once: exact counts, ids and values, or a FAIL row and no numbers.
 * Kernels only, with cudaEvents: one warm-up, then median and minimum over --reps runs.
 * Writes an aligned table, a per-scene summary, and optionally CSV (--csv) and Markdown (--md).
 * Try: `vreuse bench sphere:7M --strategy all --block 64,128,256 --calibrate`.
 */
#define _POSIX_C_SOURCE 200809L

#include "pipeline/cli/commands.h"
#include "pipeline/cli/bench_common.h"
#include "pipeline/stage/geometry.h"
#include "raster/raster.h"
#include "scenes/scene.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef VR_HAVE_CUDA
#include "bench/queue_bench.h"
vr_status vr_bench_shader_cycles(const vr_shader *shader, double *cycles); /* bench.cu */
#endif

/* The synthetic shader loads: dependent FMA steps per invocation (reuse/shaders.h). The paper
 * used 256/512/1024-cycle loads on a GTX 1080 Ti; these make naive about 3x, 5.5x and 10x slower
 * than `simple` on the 7M-triangle sphere (forsyth) on the H100: calibrated there with
 * `vreuse bench sphere:7M --calibrate` on 2026-11-22 with warp-staged queue stores (naive
 * simple 0.343 ms; bench/results/geometry-h100.md reports the cycles per invocation). Any run with --calibrate uses
 * its own calibrated values instead. */
#define VR_BENCH_LOAD_COUNT VR_LOAD_COUNT
/* copied from vr_load_iterations (reuse/reuse.c) at start; --calibrate overwrites it for the run */
static uint32_t g_load_iterations[VR_BENCH_LOAD_COUNT];
static const double g_load_targets[VR_BENCH_LOAD_COUNT] = {1.0, 3.0, 5.5, 10.0};

#define VR_BENCH_MAX_LIST 16

typedef struct vr_bench_load {
    char name[32];
    uint32_t iterations;
    double cycles; /* measured cycles per invocation */
} vr_bench_load;

typedef struct vr_bench_opts {
    const char *scenes[VR_BENCH_MAX_LIST];
    int scene_count;
    const vr_reuse_ops *strategies[VR_REUSE_KIND_COUNT];
    int strategy_count;
    vr_bench_load loads[VR_BENCH_MAX_LIST];
    int load_count;
    uint32_t blocks[VR_BENCH_MAX_LIST];
    int block_count;
    int stores[2]; /* vr_reuse_params.queue_store values: 0 direct, 1 staged */
    int store_count;
    int queue_write; /* --queue-write: the queue-store microbenchmark instead of the stage */
    vr_order order;
    int reps;
    uint32_t batch_indices, max_unique, max_indices;
    const char *csv, *md;
    int calibrate;
} vr_bench_opts;

/* One row of the result table. */
typedef struct vr_bench_row {
    const char *scene;
    uint32_t tris;
    const vr_reuse_ops *ops;
    const vr_bench_load *load;
    uint32_t block;
    int store; /* queue_store */
    int ok;
    int skip; /* the strategy does not support this configuration (VR_ERR_ARG): SKIP, not FAIL */
    double ms_med, ms_min;
    uint64_t invocations, index_count;
    double speedup_naive, speedup_multi, bound, frac_bound, floor_ms; /* < 0: not available */
} vr_bench_row;

/* vr_reuse_params.queue_store as the --store and `store` column names it. */
static const char *vr_store_name(int store)
{
    return store ? "staged" : "direct";
}

static void vr_bench_usage(FILE *f)
{
    fprintf(f,
            "usage: vreuse bench SCENE... [options]\n"
            "  --strategy all|LIST   strategies (naive,warp,hash,phash,sort,multi); default all\n"
            "  --load LIST           simple,light,medium,heavy or loop:N (N FMA steps); default all four\n"
            "  --block LIST          threads per block, multiples of 32; default 64,128,256\n"
            "  --store LIST          queue stores: direct,staged (rows for each); default staged\n"
            "  --order NAME          file, forsyth, tipsify, random; default forsyth\n"
            "  --reps N              timed runs after one warm-up (median, min); default 20\n"
            "  --batch N             warp batch in indices (multiple of 3); default 96\n"
            "  --nu N                dynamic batches' N_u; default 256\n"
            "  --max-indices N       dynamic batches' most indices, a multiple of 3 up to 3069;\n"
            "                        default 1023 (sort needs block >= N / 32: else SKIP rows)\n"
            "  --csv FILE, --md FILE also write CSV / Markdown\n"
            "  --calibrate           first find light/medium/heavy for naive 3x/5.5x/10x of simple\n"
            "                        on the first scene (block 256), print them and use them\n"
            "  --queue-write         instead: time writing each scene's triangle queue with\n"
            "                        synthetic data (direct, staged, float4 stream, memset, copy;\n"
            "                        per --block, --reps; --csv) - bench/queue_bench.h\n"
            "SCENE: a file assimp reads or a generator (sphere:7M, bunny.obj@7M); see `vreuse --help`.\n");
}

static int vr_parse_u32(const char *s, uint32_t lo, uint32_t hi, uint32_t *out)
{
    char *end = NULL;
    unsigned long v = strtoul(s, &end, 10);
    if (!*s || *end || v < lo || v > hi)
        return -1;
    *out = (uint32_t)v;
    return 0;
}

static int vr_bench_parse(vr_bench_opts *o, int argc, char **argv)
{
    memset(o, 0, sizeof *o);
    o->order = VR_ORDER_FORSYTH;
    o->reps = 20;
    o->batch_indices = VR_WARP_BATCH_DEFAULT;
    o->max_unique = VR_NU_DEFAULT;
    o->max_indices = VR_MAX_INDICES_DEFAULT;
    char *list[VR_BENCH_MAX_LIST];
    char strategy_arg[256] = "all", load_arg[256] = "simple,light,medium,heavy",
         block_arg[256] = "64,128,256", store_arg[256] = "staged";
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        int takes = 1;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            vr_bench_usage(stdout);
            return 1;
        } else if (!strcmp(a, "--calibrate")) {
            o->calibrate = 1;
            takes = 0;
        } else if (!strcmp(a, "--queue-write")) {
            o->queue_write = 1;
            takes = 0;
        } else if (a[0] == '-' && a[1] == '-' && !v) {
            fprintf(stderr, "vreuse bench: %s needs a value\n", a);
            return 2;
        } else if (!strcmp(a, "--strategy")) {
            snprintf(strategy_arg, sizeof strategy_arg, "%s", v);
        } else if (!strcmp(a, "--load")) {
            snprintf(load_arg, sizeof load_arg, "%s", v);
        } else if (!strcmp(a, "--block")) {
            snprintf(block_arg, sizeof block_arg, "%s", v);
        } else if (!strcmp(a, "--store")) {
            snprintf(store_arg, sizeof store_arg, "%s", v);
        } else if (!strcmp(a, "--order")) {
            int ord = vr_order_parse(v);
            if (ord < 0) {
                fprintf(stderr, "vreuse bench: unknown order '%s' (file, forsyth, tipsify, random)\n", v);
                return 2;
            }
            o->order = (vr_order)ord;
        } else if (!strcmp(a, "--reps")) {
            uint32_t r;
            if (vr_parse_u32(v, 1, 100000, &r)) {
                fprintf(stderr, "vreuse bench: --reps '%s' must be 1..100000\n", v);
                return 2;
            }
            o->reps = (int)r;
        } else if (!strcmp(a, "--batch")) {
            if (vr_parse_u32(v, 3, 1u << 20, &o->batch_indices) || o->batch_indices % 3) {
                fprintf(stderr, "vreuse bench: --batch '%s' must be a multiple of 3\n", v);
                return 2;
            }
        } else if (!strcmp(a, "--nu")) {
            if (vr_parse_u32(v, 3, 1u << 20, &o->max_unique)) {
                fprintf(stderr, "vreuse bench: --nu '%s' must be >= 3\n", v);
                return 2;
            }
        } else if (!strcmp(a, "--max-indices")) {
            if (vr_parse_u32(v, 3, VR_MAX_INDICES_MAX, &o->max_indices) ||
                o->max_indices % 3) {
                fprintf(stderr, "vreuse bench: --max-indices '%s' must be a multiple of 3 "
                        "(whole triangles) in 3..%u, e.g. 1536 or 2046\n",
                        v, VR_MAX_INDICES_MAX);
                return 2;
            }
        } else if (!strcmp(a, "--csv")) {
            o->csv = v;
        } else if (!strcmp(a, "--md")) {
            o->md = v;
        } else if (a[0] == '-' && a[1] == '-') {
            fprintf(stderr, "vreuse bench: unknown option '%s'\n", a);
            return 2;
        } else {
            if (o->scene_count == VR_BENCH_MAX_LIST) {
                fprintf(stderr, "vreuse bench: at most %d scenes\n", VR_BENCH_MAX_LIST);
                return 2;
            }
            o->scenes[o->scene_count++] = a;
            takes = 0;
        }
        i += takes;
    }
    if (o->scene_count == 0) {
        fprintf(stderr, "vreuse bench: no scene given\n");
        vr_bench_usage(stderr);
        return 2;
    }
    /* strategies */
    int n = vr_bench_split(strategy_arg, list, VR_BENCH_MAX_LIST);
    for (int i = 0; i < n; ++i) {
        if (!strcmp(list[i], "all")) {
            o->strategy_count = 0;
            for (int k = 0; k < VR_REUSE_KIND_COUNT; ++k)
                o->strategies[o->strategy_count++] = &vr_reuse_all[k];
            break;
        }
        const vr_reuse_ops *ops = vr_reuse_find(list[i]);
        if (!ops || o->strategy_count == VR_REUSE_KIND_COUNT) {
            fprintf(stderr, "vreuse bench: unknown or repeated strategy '%s' (naive, warp, hash, "
                    "phash, sort, multi, all)\n", list[i]);
            return 2;
        }
        o->strategies[o->strategy_count++] = ops;
    }
    if (n <= 0 || o->strategy_count == 0) {
        fprintf(stderr, "vreuse bench: --strategy needs a list\n");
        return 2;
    }
    /* loads */
    n = vr_bench_split(load_arg, list, VR_BENCH_MAX_LIST);
    if (n <= 0) {
        fprintf(stderr, "vreuse bench: --load needs a list\n");
        return 2;
    }
    for (int i = 0; i < n; ++i) {
        vr_bench_load *l = &o->loads[o->load_count++];
        snprintf(l->name, sizeof l->name, "%s", list[i]);
        int found = 0;
        for (int k = 0; k < VR_BENCH_LOAD_COUNT; ++k)
            if (!strcmp(list[i], vr_load_names[k]))
                found = 1, l->iterations = g_load_iterations[k];
        if (!found && (strncmp(list[i], "loop:", 5) ||
                       vr_parse_u32(list[i] + 5, 0, 1u << 24, &l->iterations))) {
            fprintf(stderr, "vreuse bench: unknown load '%s' (simple, light, medium, heavy, "
                    "loop:N with N <= 16M)\n", list[i]);
            return 2;
        }
    }
    /* blocks */
    n = vr_bench_split(block_arg, list, VR_BENCH_MAX_LIST);
    if (n <= 0) {
        fprintf(stderr, "vreuse bench: --block needs a list\n");
        return 2;
    }
    for (int i = 0; i < n; ++i) {
        uint32_t b;
        if (vr_parse_u32(list[i], 32, 1024, &b) || b % 32) {
            fprintf(stderr, "vreuse bench: block size '%s' must be a multiple of 32 in 32..1024\n",
                    list[i]);
            return 2;
        }
        o->blocks[o->block_count++] = b;
    }
    /* queue store paths */
    n = vr_bench_split(store_arg, list, VR_BENCH_MAX_LIST);
    for (int i = 0; i < n; ++i) {
        const int store = !strcmp(list[i], "direct") ? 0 : !strcmp(list[i], "staged") ? 1 : -1;
        if (store < 0 || o->store_count == 2 || (o->store_count == 1 && o->stores[0] == store)) {
            fprintf(stderr, "vreuse bench: unknown or repeated store '%s' (direct, staged)\n",
                    list[i]);
            return 2;
        }
        o->stores[o->store_count++] = store;
    }
    if (n <= 0) {
        fprintf(stderr, "vreuse bench: --store needs a list\n");
        return 2;
    }
    if (o->queue_write && (o->md || o->calibrate)) {
        fprintf(stderr, "vreuse bench: --queue-write writes a table and --csv only (no --md, "
                "no --calibrate)\n");
        return 2;
    }
    return 0;
}

/* ---- metadata ------------------------------------------------------------------------------ */

/* ---- timing -------------------------------------------------------------------------------- */

/* One warm-up run, then `reps` timed ones: median and minimum kernel time in ms. */
static vr_status vr_bench_time(double *med, double *min, vr_geometry *g, const vr_reuse_ops *ops,
                               const vr_reuse_params *cfg, int reps)
{
    float *ms = malloc((size_t)reps * sizeof *ms);
    if (!ms)
        return VR_ERROR(VR_ERR_OOM, "bench: %d timings", reps);
    vr_status st = vr_geometry_run(g, ops, cfg, 0, NULL);
    for (int r = 0; r < reps && st == VR_OK; ++r)
        st = vr_geometry_run(g, ops, cfg, 0, &ms[r]);
    if (st == VR_OK) {
        *med = vr_bench_median(ms, reps); /* sorts ms */
        *min = ms[0];
    }
    free(ms);
    return st;
}

/* Finds loop iterations for light/medium/heavy: naive (block 256) this many times slower than
 * with `simple`. Doubling search, then bisection on the ratio (monotone in the iterations). */
static vr_status vr_bench_calibrate(vr_geometry *g, const vr_reuse_params *base,
                                    const char *scene)
{
    const vr_reuse_ops *naive = &vr_reuse_all[VR_REUSE_NAIVE];
    vr_reuse_params cfg = *base;
    cfg.block_size = 256;
    cfg.shader.loop_iterations = 0;
    double t_simple, t_min;
    vr_status st = vr_bench_time(&t_simple, &t_min, g, naive, &cfg, 7);
    if (st != VR_OK)
        return st;
    double ratios[VR_BENCH_LOAD_COUNT] = {1.0};
    for (int k = 1; k < VR_BENCH_LOAD_COUNT; ++k) {
        const double target = g_load_targets[k];
        uint32_t lo = 0, hi = 8;
        double t_hi = 0;
        for (;;) { /* doubling until the target is passed */
            cfg.shader.loop_iterations = hi;
            if ((st = vr_bench_time(&t_hi, &t_min, g, naive, &cfg, 5)) != VR_OK)
                return st;
            if (t_hi / t_simple >= target || hi >= (1u << 22))
                break;
            lo = hi;
            hi *= 2;
        }
        while (hi - lo > 1 && hi - lo > hi / 64) { /* bisection to ~1.5 % */
            uint32_t mid = lo + (hi - lo) / 2;
            double t_mid;
            cfg.shader.loop_iterations = mid;
            if ((st = vr_bench_time(&t_mid, &t_min, g, naive, &cfg, 5)) != VR_OK)
                return st;
            if (t_mid / t_simple >= target)
                hi = mid, t_hi = t_mid;
            else
                lo = mid;
        }
        g_load_iterations[k] = hi;
        ratios[k] = t_hi / t_simple;
    }
    printf("calibrated light=%u medium=%u heavy=%u (naive on %s, block 256: simple %.3f ms; "
           "ratios %.2f/%.2f/%.2f for targets 3/5.5/10)\n",
           g_load_iterations[1], g_load_iterations[2], g_load_iterations[3], scene, t_simple,
           ratios[1], ratios[2], ratios[3]);
    fflush(stdout);
    return VR_OK;
}

/* ---- validation ---------------------------------------------------------------------------- */

/* Checks `ops` on the GPU against the CPU reference `want` (count=1, no culling) for one
 * block size; prints why not. Returns 1 when equal, -1 when the strategy rejects the
 * configuration as unsupported (VR_ERR_ARG: sort with batches too long for the block), else 0. */
static int vr_bench_validate(vr_geometry *g, const vr_reuse_ops *ops, const vr_reuse_params *cfg,
                             const vr_geometry_result *want, vr_geometry_result *got,
                             const char *scene)
{
    vr_reuse_params c = *cfg;
    c.count = 1;
    c.cull = 0;
    vr_status st = vr_geometry_run(g, ops, &c, 1, NULL);
    if (st == VR_OK)
        st = vr_geometry_download(g, got);
    if (st != VR_OK) {
        fprintf(stderr, "%s %s on %s, block %u, %s store: %s\n",
                st == VR_ERR_ARG ? "SKIP" : "FAIL", ops->name, scene, c.block_size,
                vr_store_name(c.queue_store), vr_last_error());
        return st == VR_ERR_ARG ? -1 : 0;
    }
    char what[256];
    snprintf(what, sizeof what, "FAIL %s on %s, block %u, %s store", ops->name, scene,
             c.block_size, vr_store_name(c.queue_store));
    vr_geometry_diff d;
    if (vr_geometry_compare(&d, got, want, 0, 1, stderr, what) != 0) {
        fprintf(stderr, "%s: %llu mismatches against the CPU twin\n", what,
                (unsigned long long)d.mismatches);
        return 0;
    }
    return 1;
}

/* ---- output -------------------------------------------------------------------------------- */

static const char *vr_fmt(char *buf, size_t n, const char *fmt, double v)
{
    if (v < 0)
        snprintf(buf, n, "-");
    else
        snprintf(buf, n, fmt, v);
    return buf;
}

static const char *const g_columns[] = {
    "scene", "tris", "strategy", "load", "loop_iterations", "block", "store", "ms_med", "ms_min",
    "invocations", "shaded_per_tri", "reuse", "speedup_vs_naive", "speedup_vs_multi", "bound",
    "frac_of_bound", "mtris_per_s", "floor_ms", "cycles_per_invocation", "status"};
#define VR_COLUMN_COUNT (sizeof g_columns / sizeof g_columns[0])

/* The row's cells as strings (FAIL rows keep only the identifying columns). */
static void vr_row_cells(char cells[VR_COLUMN_COUNT][64], const vr_bench_row *r)
{
    char b[64];
    snprintf(cells[0], 64, "%s", r->scene);
    snprintf(cells[1], 64, "%u", r->tris);
    snprintf(cells[2], 64, "%s", r->ops->name);
    snprintf(cells[3], 64, "%s", r->load->name);
    snprintf(cells[4], 64, "%u", r->load->iterations);
    snprintf(cells[5], 64, "%u", r->block);
    snprintf(cells[6], 64, "%s", vr_store_name(r->store));
    for (size_t c = 7; c < VR_COLUMN_COUNT; ++c)
        snprintf(cells[c], 64, "-");
    if (!r->ok) {
        snprintf(cells[VR_COLUMN_COUNT - 1], 64, r->skip ? "SKIP" : "FAIL");
        return;
    }
    const double tris = r->tris;
    snprintf(cells[7], 64, "%.4f", r->ms_med);
    snprintf(cells[8], 64, "%.4f", r->ms_min);
    snprintf(cells[9], 64, "%llu", (unsigned long long)r->invocations);
    snprintf(cells[10], 64, "%.3f", r->invocations / tris);
    snprintf(cells[11], 64, "%.4f", 1.0 - (double)r->invocations / (double)r->index_count);
    snprintf(cells[12], 64, "%s", vr_fmt(b, sizeof b, "%.3f", r->speedup_naive));
    snprintf(cells[13], 64, "%s", vr_fmt(b, sizeof b, "%.3f", r->speedup_multi));
    snprintf(cells[14], 64, "%s", vr_fmt(b, sizeof b, "%.3f", r->bound));
    snprintf(cells[15], 64, "%s", vr_fmt(b, sizeof b, "%.3f", r->frac_bound));
    snprintf(cells[16], 64, "%.1f", tris / (r->ms_med * 1e3));
    snprintf(cells[17], 64, "%s", vr_fmt(b, sizeof b, "%.4f", r->floor_ms));
    snprintf(cells[18], 64, "%s", vr_fmt(b, sizeof b, "%.0f", r->load->cycles));
    snprintf(cells[VR_COLUMN_COUNT - 1], 64, "ok");
}

static void vr_print_table(FILE *f, const vr_bench_row *rows, size_t n, int markdown)
{
    static char cells[VR_COLUMN_COUNT][64];
    size_t width[VR_COLUMN_COUNT];
    for (size_t c = 0; c < VR_COLUMN_COUNT; ++c)
        width[c] = strlen(g_columns[c]);
    for (size_t i = 0; i < n; ++i) {
        vr_row_cells(cells, &rows[i]);
        for (size_t c = 0; c < VR_COLUMN_COUNT; ++c)
            if (strlen(cells[c]) > width[c])
                width[c] = strlen(cells[c]);
    }
    const char *sep = markdown ? " | " : " ";
    fprintf(f, "%s", markdown ? "| " : "");
    for (size_t c = 0; c < VR_COLUMN_COUNT; ++c)
        fprintf(f, "%s%*s", c ? sep : "", (int)width[c], g_columns[c]);
    fprintf(f, "%s\n", markdown ? " |" : "");
    if (markdown) {
        fprintf(f, "|");
        for (size_t c = 0; c < VR_COLUMN_COUNT; ++c)
            fprintf(f, "%s", c < 4 ? "---|" : "---:|");
        fprintf(f, "\n");
    }
    for (size_t i = 0; i < n; ++i) {
        vr_row_cells(cells, &rows[i]);
        fprintf(f, "%s", markdown ? "| " : "");
        for (size_t c = 0; c < VR_COLUMN_COUNT; ++c)
            fprintf(f, "%s%*s", c ? sep : "", (int)width[c], cells[c]);
        fprintf(f, "%s\n", markdown ? " |" : "");
    }
}

/* Per scene x load x store: each strategy's best median over the block sizes, and its speedup
 * over naive's best. One line per scene x load x store. */
static void vr_print_summary(FILE *f, const vr_bench_opts *o, const vr_bench_row *rows, size_t n,
                             int markdown)
{
    fprintf(f, markdown ? "| scene | load | store |" : "%-24s %-10s %-6s", "scene", "load",
            "store");
    for (int s = 0; s < o->strategy_count; ++s)
        fprintf(f, markdown ? " %s ms (x naive) |" : " %18s", o->strategies[s]->name);
    fprintf(f, "\n");
    if (markdown) {
        fprintf(f, "|---|---|---|");
        for (int s = 0; s < o->strategy_count; ++s)
            fprintf(f, "---:|");
        fprintf(f, "\n");
    }
    for (size_t i = 0; i < n; ++i) {
        /* the first row of each (scene, load, store) group starts a line */
        int first = 1;
        for (size_t j = 0; j < i; ++j)
            if (rows[j].scene == rows[i].scene && rows[j].load == rows[i].load &&
                rows[j].store == rows[i].store)
                first = 0;
        if (!first)
            continue;
        double best[VR_REUSE_KIND_COUNT], naive_best = -1;
        int all_skipped[VR_REUSE_KIND_COUNT];
        for (int s = 0; s < o->strategy_count; ++s) {
            best[s] = -1;
            all_skipped[s] = 1;
            for (size_t j = i; j < n; ++j) {
                if (rows[j].scene != rows[i].scene || rows[j].load != rows[i].load ||
                    rows[j].store != rows[i].store || rows[j].ops != o->strategies[s])
                    continue;
                all_skipped[s] &= rows[j].skip;
                if (rows[j].ok && (best[s] < 0 || rows[j].ms_med < best[s]))
                    best[s] = rows[j].ms_med;
            }
            if (o->strategies[s]->kind == VR_REUSE_NAIVE)
                naive_best = best[s];
        }
        fprintf(f, markdown ? "| %s | %s | %s |" : "%-24.24s %-10s %-6s", rows[i].scene,
                rows[i].load->name, vr_store_name(rows[i].store));
        for (int s = 0; s < o->strategy_count; ++s) {
            char cell[64];
            if (best[s] < 0)
                snprintf(cell, sizeof cell, all_skipped[s] ? "SKIP" : "FAIL");
            else if (naive_best > 0)
                snprintf(cell, sizeof cell, "%.3f (%.2fx)", best[s], naive_best / best[s]);
            else
                snprintf(cell, sizeof cell, "%.3f", best[s]);
            fprintf(f, markdown ? " %s |" : " %18s", cell);
        }
        fprintf(f, "\n");
    }
}

static void vr_write_meta(FILE *f, const vr_bench_meta *m, const vr_bench_opts *o,
                          const char *prefix)
{
    fprintf(f, "%sgpu: %s (%d SMs, %d MHz)\n", prefix, m->gpu, m->sm_count, m->clock_khz / 1000);
    fprintf(f, "%sdriver: %s\n%scuda runtime: %s\n%sdate: %s\n%scommit: %s\n%scommand: %s\n",
            prefix, m->driver, prefix, m->cuda, prefix, m->date, prefix, m->commit, prefix,
            m->command);
    fprintf(f, "%sorder: %s; warp batch %u indices; dynamic N_u %u, <= %u indices per batch; "
            "%d timed reps after 1 warm-up (kernels only, cudaEvents)%s\n", prefix,
            vr_order_name(o->order), o->batch_indices, o->max_unique, o->max_indices,
            o->reps, o->reps < 20 ? " - NOTE: fewer than 20 reps" : "");
    fprintf(f, "%sdevice-to-device copy: %.3f TB/s (read + write, measured)\n", prefix,
            m->bandwidth * 1e-12);
    fprintf(f, "%squeue store (`store` column): direct = each lane stores its own slot; staged = "
            "a whole warp's 32 consecutive slots transposed by shuffles, 512 contiguous bytes per "
            "store (reuse/stage.cuh); same queue bytes\n", prefix);
    fprintf(f, "%sfloor_ms = (4 B x indices + 24 B x referenced vertices + 112 B x triangles) / "
            "copy bandwidth: indices read once, position + normal read once per referenced "
            "vertex, queue (clip 48 + normal 48 + vertex ids 12 + triangle id 4 B) written once\n",
            prefix);
    fprintf(f, "%sbound = naive invocations / strategy invocations (speedup if shading were all "
            "that costs); frac_of_bound = speedup_vs_naive / bound; reuse = 1 - invocations / "
            "indices\n", prefix);
    fprintf(f, "%sloads:", prefix);
    for (int l = 0; l < o->load_count; ++l)
        fprintf(f, " %s=%u iterations (%.0f cycles/invocation)", o->loads[l].name,
                o->loads[l].iterations, o->loads[l].cycles);
    fprintf(f, "%s\n", o->calibrate ? " [calibrated in this run]" : " [defaults of bench_cmd.c]");
}

static vr_status vr_write_csv(const char *path, const vr_bench_meta *m, const vr_bench_opts *o,
                              const vr_bench_row *rows, size_t n)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return VR_ERROR(VR_ERR_IO, "bench: cannot write CSV '%s'", path);
    vr_write_meta(f, m, o, "# ");
    for (size_t c = 0; c < VR_COLUMN_COUNT; ++c)
        fprintf(f, "%s%s", c ? "," : "", g_columns[c]);
    fprintf(f, "\n");
    static char cells[VR_COLUMN_COUNT][64];
    for (size_t i = 0; i < n; ++i) {
        vr_row_cells(cells, &rows[i]);
        for (size_t c = 0; c < VR_COLUMN_COUNT; ++c)
            fprintf(f, "%s%s", c ? "," : "", strcmp(cells[c], "-") ? cells[c] : "");
        fprintf(f, "\n");
    }
    if (fclose(f) != 0)
        return VR_ERROR(VR_ERR_IO, "bench: writing CSV '%s' failed", path);
    return VR_OK;
}

static vr_status vr_write_md(const char *path, const vr_bench_meta *m, const vr_bench_opts *o,
                             const vr_bench_row *rows, size_t n)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return VR_ERROR(VR_ERR_IO, "bench: cannot write Markdown '%s'", path);
    fprintf(f, "# vreuse bench\n\n");
    vr_write_meta(f, m, o, "- ");
    fprintf(f, "\n## Best block per strategy (median ms, speedup over naive)\n\n");
    vr_print_summary(f, o, rows, n, 1);
    fprintf(f, "\n## All rows\n\n");
    vr_print_table(f, rows, n, 1);
    if (fclose(f) != 0)
        return VR_ERROR(VR_ERR_IO, "bench: writing Markdown '%s' failed", path);
    return VR_OK;
}

/* ---- the command --------------------------------------------------------------------------- */

/* Benchmarks one scene, appending its rows; returns 0, or 1 when the scene failed to load. */
static int vr_bench_scene(vr_bench_opts *o, const char *spec, int first_scene, double bandwidth,
                          vr_bench_row *rows, size_t *row_count)
{
    vr_mesh m;
    vr_status st = vr_mesh_load(&m, spec);
    if (st != VR_OK) {
        fprintf(stderr, "vreuse bench: %s\n", vr_last_error());
        return 1;
    }
    if ((st = vr_mesh_reorder(&m, o->order, 1)) != VR_OK) {
        fprintf(stderr, "vreuse bench: %s\n", vr_last_error());
        vr_mesh_free(&m);
        return 1;
    }
    const char *name = strrchr(spec, '/') ? strrchr(spec, '/') + 1 : spec;
    vr_mesh_counts counts;
    if ((st = vr_mesh_count(&counts, &m)) != VR_OK) {
        fprintf(stderr, "vreuse bench: %s\n", vr_last_error());
        vr_mesh_free(&m);
        return 1;
    }
    const uint32_t tris = m.index_count / 3;
    /* the least the stage must move (floor_ms): every index read once, position + normal of
     * every referenced vertex read once, the queue written once */
    const double floor_bytes = (double)sizeof(uint32_t) * m.index_count +
                               6.0 * sizeof(float) * (double)counts.referenced_vertices +
                               (double)VR_QUEUE_BYTES_PER_TRIANGLE * tris;
    const double floor_ms = bandwidth > 0 ? floor_bytes / bandwidth * 1e3 : -1;
    fprintf(stderr, "bench: %s: %u triangles, %u vertices (%llu referenced), %s order\n", name,
            tris, m.vertex_count, (unsigned long long)counts.referenced_vertices,
            vr_order_name(o->order));

    vr_geometry *g = NULL;
    vr_geometry_result want, got;
    int failed = 0;
    memset(&want, 0, sizeof want);
    memset(&got, 0, sizeof got);
    if ((st = vr_geometry_create(&g, &m)) != VR_OK ||
        (st = vr_geometry_result_alloc(&want, tris, m.vertex_count)) != VR_OK ||
        (st = vr_geometry_result_alloc(&got, tris, m.vertex_count)) != VR_OK) {
        fprintf(stderr, "vreuse bench: %s: %s\n", name, vr_last_error());
        failed = 1;
        goto done;
    }
    vr_reuse_params base = vr_reuse_params_default();
    vr_camera_orbit_shader(&base.shader, &m, 0.5f);
    base.batch_indices = o->batch_indices;
    base.max_unique = o->max_unique;
    base.max_indices = o->max_indices;

    if (o->calibrate && first_scene) {
        if ((st = vr_bench_calibrate(g, &base, name)) != VR_OK) {
            fprintf(stderr, "vreuse bench: calibration: %s\n", vr_last_error());
            failed = 1;
        }
        for (int l = 0; l < o->load_count; ++l)
            for (int k = 0; k < VR_BENCH_LOAD_COUNT; ++k)
                if (!strcmp(o->loads[l].name, vr_load_names[k]))
                    o->loads[l].iterations = g_load_iterations[k];
    }
#ifdef VR_HAVE_CUDA
    for (int l = 0; l < o->load_count; ++l) {
        vr_shader s = base.shader;
        s.loop_iterations = o->loads[l].iterations;
        if (vr_bench_shader_cycles(&s, &o->loads[l].cycles) != VR_OK)
            o->loads[l].cycles = -1;
    }
#endif

    /* validate each strategy once per block size and store path against its CPU twin */
    int valid[VR_REUSE_KIND_COUNT][VR_BENCH_MAX_LIST][2];
    uint64_t invocations[VR_REUSE_KIND_COUNT];
    for (int s = 0; s < o->strategy_count; ++s) {
        const vr_reuse_ops *ops = o->strategies[s];
        vr_reuse_params cfg = base;
        cfg.count = 1;
        st = vr_geometry_ref(&want, ops, &m, &cfg);
        if (st != VR_OK)
            fprintf(stderr, "FAIL %s on %s: CPU twin: %s\n", ops->name, name, vr_last_error());
        invocations[s] = want.counters.invocations;
        for (int b = 0; b < o->block_count; ++b)
            for (int q = 0; q < o->store_count; ++q) {
                cfg.block_size = o->blocks[b];
                cfg.queue_store = o->stores[q];
                valid[s][b][q] =
                    st == VR_OK ? vr_bench_validate(g, ops, &cfg, &want, &got, name) : 0;
            }
        fprintf(stderr, "bench: %s: %s validated (%llu invocations)\n", name, ops->name,
                (unsigned long long)invocations[s]);
    }

    /* time: strategies interleaved per (load, block, store) so clock drift hits all alike */
    for (int l = 0; l < o->load_count; ++l)
        for (int b = 0; b < o->block_count; ++b)
        for (int q = 0; q < o->store_count; ++q) {
            size_t group = *row_count;
            for (int s = 0; s < o->strategy_count; ++s) {
                vr_bench_row *r = &rows[(*row_count)++];
                memset(r, 0, sizeof *r);
                r->scene = name;
                r->tris = tris;
                r->ops = o->strategies[s];
                r->load = &o->loads[l];
                r->block = o->blocks[b];
                r->store = o->stores[q];
                r->invocations = invocations[s];
                r->index_count = m.index_count;
                r->floor_ms = floor_ms;
                r->speedup_naive = r->speedup_multi = r->bound = r->frac_bound = -1;
                if (valid[s][b][q] != 1) {
                    r->skip = valid[s][b][q] < 0;
                    failed |= !r->skip;
                    continue;
                }
                vr_reuse_params cfg = base;
                cfg.block_size = o->blocks[b];
                cfg.queue_store = o->stores[q];
                cfg.shader.loop_iterations = o->loads[l].iterations;
                st = vr_bench_time(&r->ms_med, &r->ms_min, g, r->ops, &cfg, o->reps);
                if (st != VR_OK) {
                    fprintf(stderr, "FAIL %s on %s, block %u, %s store: %s\n", r->ops->name,
                            name, r->block, vr_store_name(r->store), vr_last_error());
                    failed = 1;
                    continue;
                }
                r->ok = 1;
            }
            /* derived columns against naive and multi of the same group */
            const vr_bench_row *naive = NULL, *multi = NULL;
            for (size_t i = group; i < *row_count; ++i) {
                if (rows[i].ok && rows[i].ops->kind == VR_REUSE_NAIVE)
                    naive = &rows[i];
                if (rows[i].ok && rows[i].ops->kind == VR_REUSE_MULTI)
                    multi = &rows[i];
            }
            for (size_t i = group; i < *row_count; ++i) {
                vr_bench_row *r = &rows[i];
                if (!r->ok)
                    continue;
                if (naive) {
                    r->speedup_naive = naive->ms_med / r->ms_med;
                    r->bound = r->invocations ? (double)naive->invocations / r->invocations : -1;
                    if (r->bound > 0)
                        r->frac_bound = r->speedup_naive / r->bound;
                }
                if (multi)
                    r->speedup_multi = multi->ms_med / r->ms_med;
            }
            fprintf(stderr, "bench: %s: load %s, block %u, %s store timed\n", name,
                    o->loads[l].name, o->blocks[b], vr_store_name(o->stores[q]));
        }
done:
    vr_geometry_result_free(&want);
    vr_geometry_result_free(&got);
    vr_geometry_destroy(g);
    vr_mesh_free(&m);
    return failed;
}

/* --queue-write: per scene and block, the queue-store microbenchmark (bench/queue_bench.h)
 * next to the stage's D2D copy bandwidth. Returns 0, or 1 when anything failed or the staged
 * queue differed from the direct one. */
static int vr_bench_queue_write(const vr_bench_opts *o, const vr_bench_meta *meta)
{
#ifdef VR_HAVE_CUDA
    FILE *csv = NULL;
    if (o->csv) {
        if (!(csv = fopen(o->csv, "w"))) {
            fprintf(stderr, "vreuse bench: cannot write CSV '%s'\n", o->csv);
            return 1;
        }
        vr_write_meta(csv, meta, o, "# ");
        fprintf(csv, "# queue write: synthetic triangles through vr_emit_triangle (direct, "
                "staged), a float4 stream, cudaMemset and a D2D copy of 112 B x triangles; "
                "gb_per_s = bytes / ms_med, the copy counting read + write\n");
        fprintf(csv, "scene,tris,block,kind,ms_med,ms_min,bytes,gb_per_s,identical\n");
    }
    int failed = 0;
    for (int i = 0; i < o->scene_count; ++i) {
        const char *spec = o->scenes[i];
        const char *name = strrchr(spec, '/') ? strrchr(spec, '/') + 1 : spec;
        vr_mesh m;
        if (vr_mesh_load(&m, spec) != VR_OK) {
            fprintf(stderr, "vreuse bench: %s\n", vr_last_error());
            failed = 1;
            continue;
        }
        const uint32_t tris = m.index_count / 3;
        vr_mesh_free(&m); /* only the count is needed; the device gets the memory */
        for (int b = 0; b < o->block_count; ++b) {
            vr_queue_bench_result r;
            if (vr_queue_bench(&r, tris, o->blocks[b], o->reps) != VR_OK) {
                fprintf(stderr, "vreuse bench: queue write on %s, block %u: %s\n", name,
                        o->blocks[b], vr_last_error());
                failed = 1;
                continue;
            }
            failed |= !r.identical;
            printf("\n== queue write: %s, %u triangles x 112 B = %.1f MB, block %u, median of %d "
                   "(staged queue == direct queue: %s)\n", name, tris, tris * 112e-6,
                   o->blocks[b], o->reps, r.identical ? "yes" : "NO");
            printf("%-14s %9s %9s %9s %9s\n", "kind", "ms_med", "ms_min", "GB/s", "x_stream");
            for (int k = 0; k < VR_QB_KIND_COUNT; ++k) {
                const double gbs = r.bytes[k] / (r.ms_med[k] * 1e6);
                const char *kind = vr_queue_bench_name((vr_queue_bench_kind)k);
                printf("%-14s %9.4f %9.4f %9.1f %9.3f%s\n", kind, r.ms_med[k], r.ms_min[k], gbs,
                       r.ms_med[VR_QB_STREAM] / r.ms_med[k],
                       k == VR_QB_COPY ? "  (read + write)" : "");
                if (csv)
                    fprintf(csv, "%s,%u,%u,%s,%.5f,%.5f,%.0f,%.1f,%d\n", name, tris, o->blocks[b],
                            kind, r.ms_med[k], r.ms_min[k], r.bytes[k], gbs, r.identical);
            }
            printf("stage's D2D copy bandwidth (256 MiB, read + write, best of 10): %.1f GB/s\n",
                   meta->bandwidth * 1e-9);
            fflush(stdout);
        }
    }
    if (csv && fclose(csv) != 0) {
        fprintf(stderr, "vreuse bench: writing CSV '%s' failed\n", o->csv);
        failed = 1;
    }
    return failed;
#else
    (void)o;
    (void)meta;
    fprintf(stderr, "vreuse bench: --queue-write needs a CUDA build\n");
    return 1;
#endif
}

int vr_cmd_bench(int argc, char **argv)
{
    memcpy(g_load_iterations, vr_load_iterations, sizeof g_load_iterations);
    vr_bench_opts o;
    int pr = vr_bench_parse(&o, argc, argv);
    if (pr)
        return pr == 1 ? 0 : 2;
    if (!vr_gpu_available()) {
        fprintf(stderr, "vreuse bench: %s. `vreuse bench` times the GPU stage and needs a CUDA "
                "build and device; `vreuse sim` gives the CPU-simulated counts.\n",
                vr_gpu_device_name());
        return 1;
    }
    vr_bench_meta meta;
    vr_bench_meta_fill(&meta, argc, argv);
    if (vr_gpu_copy_bandwidth(&meta.bandwidth) != VR_OK)
        fprintf(stderr, "vreuse bench: bandwidth: %s (floor_ms left empty)\n", vr_last_error());
    printf("# %s, driver %s, CUDA %s, D2D copy %.2f TB/s\n", meta.gpu, meta.driver, meta.cuda,
           meta.bandwidth * 1e-12);
    if (o.queue_write)
        return vr_bench_queue_write(&o, &meta);

    /* scene names point into argv and loads into `o`, so rows stay valid to the end */
    const size_t max_rows = (size_t)o.scene_count * o.load_count * o.block_count *
                            o.store_count * o.strategy_count;
    vr_bench_row *rows = calloc(max_rows + 1, sizeof *rows);
    if (!rows) {
        fprintf(stderr, "vreuse bench: out of memory for %zu rows\n", max_rows);
        return 1;
    }
    size_t n = 0;
    int failed = 0;
    for (int s = 0; s < o.scene_count; ++s)
        failed |= vr_bench_scene(&o, o.scenes[s], s == 0, meta.bandwidth, rows, &n);

    vr_print_table(stdout, rows, n, 0);
    printf("\n== summary: best block per strategy, median ms (speedup over naive)\n");
    vr_print_summary(stdout, &o, rows, n, 0);
    if (o.calibrate)
        printf("calibrated light=%u medium=%u heavy=%u\n", g_load_iterations[1],
               g_load_iterations[2], g_load_iterations[3]);
    if (o.csv && vr_write_csv(o.csv, &meta, &o, rows, n) != VR_OK) {
        fprintf(stderr, "vreuse bench: %s\n", vr_last_error());
        failed = 1;
    }
    if (o.md && vr_write_md(o.md, &meta, &o, rows, n) != VR_OK) {
        fprintf(stderr, "vreuse bench: %s\n", vr_last_error());
        failed = 1;
    }
    free(rows);
    return failed ? 1 : 0;
}
