/* bench_cmd.c - `vreuse bench`: times every reuse/ strategy on the GPU per scene x order x shader
 * load x block size (Kenzel et al. 2018, Table 2), after checking each (scene, order, strategy,
 * block) against its CPU twin once: exact counts, ids and values, or a FAIL row and no numbers.
 * Kernels only, with cudaEvents: one warm-up, then median and minimum over --reps runs.
 * Writes an aligned table, a per-scene summary, and optionally CSV (--csv) and Markdown (--md).
 * --gpus N times each row's stage on N GPUs as well (bench/bench_gpus.h).
 * Try: `vreuse bench sphere:7M --strategy all --block 64,128,256 --calibrate`.
 */
#define _POSIX_C_SOURCE 200809L

#include "bench/bench_gpus.h"
#include "pipeline/cli/cli.h"
#include "pipeline/cli/commands.h"
#include "pipeline/stage/geometry.h"
#include "pipeline/stage/parts.h"
#include "raster/raster.h"
#include "reuse/program.h"        /* VR_POOL_MIN_SHARE */
#include "reuse/render_program.h" /* VR_RENDER_PROGRAM_CHEAP_STEPS, _POOL_STEPS */
#include "scenes/scene.h"

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

typedef struct vr_bench_load {
    char name[32];
    uint32_t iterations;
    double cycles; /* measured cycles per invocation */
} vr_bench_load;

typedef struct vr_bench_opts {
    char **scenes; /* operands, in command-line order */
    int scene_count;
    vr_cli_orders orders;
    uint64_t seed;                 /* of --order random */
    vr_cli_strategies strategies;
    vr_bench_load loads[VR_CLI_MAX_LIST];
    int load_count;
    vr_cli_u32s blocks;
    vr_cli_choices stores;         /* vr_reuse_params.queue_store values: 0 direct, 1 staged */
    vr_cli_choices culls;          /* g_cull_names: 0 no culling, else 1 + vr_queue_mode */
    int two_sided;                 /* with culling: keep back faces */
    vr_cli_choices ccs;            /* g_cc_names: vr_reuse_params.cluster_cull values */
    int queue_write; /* --queue-write: the queue-store microbenchmark instead of the stage */
    int reps;
    vr_cli_limits limits;          /* --limits, --sms and the explicit batch options */
    int patch_builder;             /* --patch-builder: vr_patch_builder */
    vr_gpu_shape shape;            /* the device's, for --limits auto */
    int calibrate;
    int gpus;                      /* --gpus N: each row on N devices too; 0: not given (one) */
    vr_bench_gpus *gp;             /* with --gpus: the devices and their NCCL communicator */
    int nccl_version;              /* NCCL's, 22809 = 2.28.9 */
} vr_bench_opts;

/* One row of the result table. */
typedef struct vr_bench_row {
    const char *scene;
    int order; /* vr_order, VR_ORDER_FETCH may be or-ed in */
    uint32_t tris;
    const vr_reuse_ops *ops;
    const vr_bench_load *load;
    uint32_t block;
    vr_batch_limits limits; /* what the row ran with (block_size = block) */
    int store; /* queue_store */
    int cull;  /* g_cull_names index: 0 no culling, else 1 + vr_queue_mode */
    int cc;    /* cluster culling (static plans with culling only) */
    int ok;
    int skip; /* the strategy does not support this configuration (VR_ERR_ARG): SKIP, not FAIL */
    int unsplit; /* skipped: multi is not split over GPUs (--gpus N > 1) */
    int gpus;    /* devices the row ran on: --gpus, or 1 */
    double ms_med, ms_min; /* with --gpus: per rep the slowest device's time */
    double ms_1gpu, efficiency, wall_ms; /* with --gpus: the row on device 0 alone, ms_1gpu /
                                            (gpus x ms_med), the parallel step's host time;
                                            < 0: not available */
    uint64_t invocations, index_count;
    double speedup_naive, speedup_multi, bound, frac_bound, floor_ms; /* < 0: not available */
} vr_bench_row;

/* vr_reuse_params.queue_store as the --store and `store` column names it. */
static const char *const g_store_names[] = {"direct", "staged", NULL};
/* --cull and the `cull` column: off, or culling into a queue of this vr_queue_mode */
static const char *const g_cull_names[] = {"off", "ink", "collate", "atomic", "cub", "hp", NULL};
/* --cluster-cull and the `cluster_cull` column: vr_reuse_params.cluster_cull */
static const char *const g_cc_names[] = {"off", "on", NULL};

static const char *vr_store_name(int store)
{
    return g_store_names[store ? 1 : 0];
}

/* Where the human-readable lines go: stdout, or stderr when --csv - or --md - takes stdout
 * (then the table and summary are left out and only the calibration lines remain). */
static FILE *g_human;

/* The block size of sweep entry b: --block's, or 0 there (--limits auto without --block): the
 * strategy's own. */
static uint32_t block_of(const vr_cli_u32s *blocks, const vr_batch_limits *l, int b)
{
    return blocks->v[b] ? blocks->v[b] : l->block_size;
}

/* ---- timing -------------------------------------------------------------------------------- */

/* One warm-up run, then `reps` timed ones: median and minimum kernel time in ms. */
static vr_status vr_bench_time(double *med, double *min, vr_geometry *g, const vr_reuse_ops *ops,
                               const vr_reuse_params *cfg, int reps)
{
    float *ms = malloc((size_t)reps * sizeof *ms);
    if (!ms)
        return VR_ERROR(VR_ERR_OOM, "out of memory for %d timings", reps);
    vr_status st = vr_geometry_run(g, ops, cfg, 0, NULL);
    for (int r = 0; r < reps && st == VR_OK; ++r)
        st = vr_geometry_run(g, ops, cfg, 0, &ms[r]);
    if (st == VR_OK) {
        *med = vr_cli_median_float(ms, reps); /* sorts ms */
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
    fprintf(g_human, "calibrated light=%u medium=%u heavy=%u (naive on %s, block 256: simple "
            "%.3f ms; ratios %.2f/%.2f/%.2f for targets 3/5.5/10)\n",
            g_load_iterations[1], g_load_iterations[2], g_load_iterations[3], scene, t_simple,
            ratios[1], ratios[2], ratios[3]);
    fflush(g_human);
    return VR_OK;
}

/* ---- validation ---------------------------------------------------------------------------- */

/* Checks `ops` on the GPU against the CPU reference `want` (count=1, culling as in cfg) for
 * one block size; prints why not. Returns 1 when equal, -1 when the strategy rejects the
 * configuration as unsupported (VR_ERR_ARG: sort with batches too long for the block), else 0. */
static int vr_bench_validate(vr_geometry *g, const vr_reuse_ops *ops, const vr_reuse_params *cfg,
                             const vr_geometry_result *want, vr_geometry_result *got,
                             const char *scene)
{
    vr_reuse_params c = *cfg;
    c.count = 1;
    vr_status st = vr_geometry_run(g, ops, &c, 1, NULL);
    if (st == VR_OK)
        st = vr_geometry_download(g, got);
    if (st != VR_OK) {
        fprintf(stderr, "%s %s on %s, block %u, %s store, cull %s%s: %s\n",
                st == VR_ERR_ARG ? "SKIP" : "FAIL", ops->name, scene, c.block_size,
                vr_store_name(c.queue_store), c.cull ? vr_queue_mode_names[c.queue_mode] : "off",
                c.cluster_cull ? " + cluster" : "", vr_last_error());
        return st == VR_ERR_ARG ? -1 : 0;
    }
    char what[512];
    snprintf(what, sizeof what, "FAIL %s on %s, block %u, %s store, cull %s%s", ops->name, scene,
             c.block_size, vr_store_name(c.queue_store),
             c.cull ? vr_queue_mode_names[c.queue_mode] : "off",
             c.cluster_cull ? " + cluster" : "");
    vr_geometry_diff d;
    if (vr_geometry_compare(&d, got, want, vr_geometry_compare_mode(&c), 1, stderr, what) != 0) {
        fprintf(stderr, "%s: %llu mismatches against the CPU twin\n", what,
                (unsigned long long)d.mismatches);
        return 0;
    }
    return 1;
}

/* Whether a row with cluster culling `cc` exists for strategy ops under `cull`: off always,
 * on only for a static plan (patch, meshlet) with culling - elsewhere it would change nothing. */
static int vr_bench_cc_applies(const vr_reuse_ops *ops, int cull, int cc)
{
    return !cc || (cull && ops->plan);
}

/* Culling as the `cull` column value `cull` says (0: off). */
static void vr_bench_cull(vr_reuse_params *cfg, int cull, int two_sided)
{
    cfg->cull = cull != 0;
    cfg->queue_mode = cull ? (vr_queue_mode)(cull - 1) : VR_QUEUE_INK;
    cfg->two_sided = cull ? two_sided : 0;
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
    "scene", "order", "tris", "strategy", "load", "loop_iterations", "block", "nu",
    "max_indices", "warp_batch", "store", "cull",
    "ms_med",
    "ms_min", "invocations", "shaded_per_tri", "reuse", "speedup_vs_naive", "speedup_vs_multi",
    "bound", "frac_of_bound", "mtris_per_s", "floor_ms", "cycles_per_invocation", "status",
    "cluster_cull", "gpus", "ms_med_1gpu", "efficiency", "wall_ms"};
#define VR_COLUMN_COUNT (sizeof g_columns / sizeof g_columns[0])
#define VR_ID_COLUMNS 12 /* scene .. cull: what identifies a row, kept by FAIL rows */
#define VR_STATUS_COLUMN 24
/* then the columns appended last, so that older parsers of the columns keep working: */
#define VR_CC_COLUMN 25   /* cluster_cull */
#define VR_GPUS_COLUMN 26 /* gpus .. wall_ms; the table and --md show them with --gpus only */

/* The row's cells as strings (FAIL rows keep only the identifying columns). */
static void vr_row_cells(char cells[VR_COLUMN_COUNT][64], const vr_bench_row *r)
{
    char b[64];
    snprintf(cells[0], 64, "%s", r->scene);
    snprintf(cells[1], 64, "%s", vr_order_name((vr_order)r->order));
    snprintf(cells[2], 64, "%u", r->tris);
    snprintf(cells[3], 64, "%s", r->ops->name);
    snprintf(cells[4], 64, "%s", r->load->name);
    snprintf(cells[5], 64, "%u", r->load->iterations);
    snprintf(cells[6], 64, "%u", r->block);
    snprintf(cells[7], 64, "%u", r->limits.max_unique);
    snprintf(cells[8], 64, "%u", r->limits.max_indices);
    snprintf(cells[9], 64, "%u", r->limits.batch_indices);
    snprintf(cells[10], 64, "%s", vr_store_name(r->store));
    snprintf(cells[11], 64, "%s", g_cull_names[r->cull]);
    for (size_t c = VR_ID_COLUMNS; c < VR_COLUMN_COUNT; ++c)
        snprintf(cells[c], 64, "-");
    snprintf(cells[VR_CC_COLUMN], 64, "%s", g_cc_names[r->cc]);
    snprintf(cells[VR_GPUS_COLUMN], 64, "%d", r->gpus);
    if (!r->ok) {
        snprintf(cells[VR_STATUS_COLUMN], 64, r->skip ? "SKIP" : "FAIL");
        return;
    }
    const double tris = r->tris;
    char(*v)[64] = cells + VR_ID_COLUMNS;
    snprintf(v[0], 64, "%.4f", r->ms_med);
    snprintf(v[1], 64, "%.4f", r->ms_min);
    snprintf(v[2], 64, "%llu", (unsigned long long)r->invocations);
    snprintf(v[3], 64, "%.3f", r->invocations / tris);
    snprintf(v[4], 64, "%.4f", 1.0 - (double)r->invocations / (double)r->index_count);
    snprintf(v[5], 64, "%s", vr_fmt(b, sizeof b, "%.3f", r->speedup_naive));
    snprintf(v[6], 64, "%s", vr_fmt(b, sizeof b, "%.3f", r->speedup_multi));
    snprintf(v[7], 64, "%s", vr_fmt(b, sizeof b, "%.3f", r->bound));
    snprintf(v[8], 64, "%s", vr_fmt(b, sizeof b, "%.3f", r->frac_bound));
    snprintf(v[9], 64, "%.1f", tris / (r->ms_med * 1e3));
    snprintf(v[10], 64, "%s", vr_fmt(b, sizeof b, "%.4f", r->floor_ms));
    snprintf(v[11], 64, "%s", vr_fmt(b, sizeof b, "%.0f", r->load->cycles));
    snprintf(cells[VR_STATUS_COLUMN], 64, "ok");
    snprintf(cells[VR_GPUS_COLUMN + 1], 64, "%s", vr_fmt(b, sizeof b, "%.4f", r->ms_1gpu));
    snprintf(cells[VR_GPUS_COLUMN + 2], 64, "%s", vr_fmt(b, sizeof b, "%.3f", r->efficiency));
    snprintf(cells[VR_GPUS_COLUMN + 3], 64, "%s", vr_fmt(b, sizeof b, "%.4f", r->wall_ms));
}

/* The table's columns: without --gpus those of the table before it (gpus and the scaling
 * columns stay in the CSV only). */
static size_t vr_table_columns(const vr_bench_opts *o)
{
    return o->gpus ? VR_COLUMN_COUNT : VR_GPUS_COLUMN;
}

static void vr_print_table(FILE *f, const vr_bench_opts *o, const vr_bench_row *rows, size_t n,
                           int markdown)
{
    static char cells[VR_COLUMN_COUNT][64];
    size_t width[VR_COLUMN_COUNT];
    const size_t columns = vr_table_columns(o);
    for (size_t c = 0; c < columns; ++c)
        width[c] = strlen(g_columns[c]);
    for (size_t i = 0; i < n; ++i) {
        vr_row_cells(cells, &rows[i]);
        for (size_t c = 0; c < columns; ++c)
            if (strlen(cells[c]) > width[c])
                width[c] = strlen(cells[c]);
    }
    const char *sep = markdown ? " | " : " ";
    fprintf(f, "%s", markdown ? "| " : "");
    for (size_t c = 0; c < columns; ++c)
        fprintf(f, "%s%*s", c ? sep : "", (int)width[c], g_columns[c]);
    fprintf(f, "%s\n", markdown ? " |" : "");
    if (markdown) {
        fprintf(f, "|");
        for (size_t c = 0; c < columns; ++c)
            fprintf(f, "%s", c < 5 ? "---|" : "---:|");
        fprintf(f, "\n");
    }
    int unsplit = 0;
    for (size_t i = 0; i < n; ++i) {
        vr_row_cells(cells, &rows[i]);
        unsplit |= rows[i].unsplit;
        fprintf(f, "%s", markdown ? "| " : "");
        for (size_t c = 0; c < columns; ++c)
            fprintf(f, "%s%*s", c ? sep : "", (int)width[c], cells[c]);
        fprintf(f, "%s\n", markdown ? " |" : "");
    }
    if (unsplit)
        fprintf(f, "%smulti: not split over GPUs, see README (its rows are SKIP with --gpus %d)\n",
                markdown ? "\n" : "", o->gpus);
}

/* Rows i and j belong to one summary line: same scene, order, load, store, cull and cluster
 * culling. */
static int vr_same_group(const vr_bench_row *a, const vr_bench_row *b)
{
    return a->scene == b->scene && a->order == b->order && a->load == b->load &&
           a->store == b->store && a->cull == b->cull && a->cc == b->cc;
}

/* Per scene x order x load x store: each strategy's best median over the block sizes, and its
 * speedup over naive's best. One line per scene x order x load x store. */
static void vr_print_summary(FILE *f, const vr_bench_opts *o, const vr_bench_row *rows, size_t n,
                             int markdown)
{
    const vr_cli_strategies *st = &o->strategies;
    fprintf(f, markdown ? "| scene | order | load | store | cull |" : "%-24s %-14s %-10s %-6s %-7s",
            "scene", "order", "load", "store", "cull");
    for (int s = 0; s < st->count; ++s)
        fprintf(f, markdown ? " %s ms (x naive) |" : " %18s", st->v[s]->name);
    fprintf(f, "\n");
    if (markdown) {
        fprintf(f, "|---|---|---|---|---|");
        for (int s = 0; s < st->count; ++s)
            fprintf(f, "---:|");
        fprintf(f, "\n");
    }
    for (size_t i = 0; i < n; ++i) {
        /* the first row of each group starts a line */
        int first = 1;
        for (size_t j = 0; j < i; ++j)
            if (vr_same_group(&rows[j], &rows[i]))
                first = 0;
        if (!first)
            continue;
        double best[VR_REUSE_KIND_COUNT], naive_best = -1;
        int all_skipped[VR_REUSE_KIND_COUNT];
        for (int s = 0; s < st->count; ++s) {
            best[s] = -1;
            all_skipped[s] = 1;
            for (size_t j = i; j < n; ++j) {
                if (!vr_same_group(&rows[j], &rows[i]) || rows[j].ops != st->v[s])
                    continue;
                all_skipped[s] &= rows[j].skip;
                if (rows[j].ok && (best[s] < 0 || rows[j].ms_med < best[s]))
                    best[s] = rows[j].ms_med;
            }
            if (st->v[s]->kind == VR_REUSE_NAIVE)
                naive_best = best[s];
        }
        char cull[32]; /* "ink", or "ink+cc" with cluster culling */
        snprintf(cull, sizeof cull, "%s%s", g_cull_names[rows[i].cull], rows[i].cc ? "+cc" : "");
        fprintf(f, markdown ? "| %s | %s | %s | %s | %s |" : "%-24.24s %-14s %-10s %-6s %-7s",
                rows[i].scene,
                vr_order_name((vr_order)rows[i].order), rows[i].load->name,
                vr_store_name(rows[i].store), cull);
        for (int s = 0; s < st->count; ++s) {
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

/* The shared run metadata (vr_cli_meta_write), then what only bench records. */
static void vr_write_meta(FILE *f, const vr_cli_meta *m, const vr_bench_opts *o,
                          const char *prefix)
{
    vr_cli_meta_write(f, m, prefix);
    fprintf(f, "%sorder: ", prefix);
    for (int k = 0; k < o->orders.count; ++k)
        fprintf(f, "%s%s", k ? "," : "", vr_order_name((vr_order)o->orders.v[k]));
    char limits[64];
    vr_cli_limits_label(limits, sizeof limits, &o->limits, &o->shape);
    fprintf(f, "; batch limits %s%s (columns block, nu = N_u and max_indices of dynamic batches "
            "and plans, warp_batch); %d timed reps after 1 warm-up (kernels only, cudaEvents)%s\n",
            limits, !o->limits.automatic ? "" : ", per scene and strategy", o->reps,
            o->reps < 20 ? " - NOTE: fewer than 20 reps" : "");
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
    for (int k = 0; k < o->ccs.count; ++k)
        if (o->ccs.v[k])
            fprintf(f, "%scluster_cull (last column) = on: patch and meshlet skip a batch before "
                    "shading when its box and normal cone prove every triangle culled "
                    "(reuse/cluster_cull.h); same queue, fewer invocations; their "
                    "speedup_vs_naive compares with naive's row without it\n", prefix);
    /* the A/B switches, so that a file says which kernels it timed; the default ink routing
       only where neither overrides it */
    const char *const env_names[] = {"VR_GEOMETRY_KERNELS", "VR_PROG_INK", "VR_PROG_WARP"};
    int overridden = 0, warp_set = 0;
    for (size_t k = 0; k < sizeof env_names / sizeof *env_names; ++k) {
        const char *v = getenv(env_names[k]);
        if (v && *v) {
            fprintf(f, "%senvironment: %s=%s\n", prefix, env_names[k], v);
            if (k < 2) /* the two that route ink */
                overridden |= k == 0 ? !strcmp(v, "own") : strcmp(v, "auto") != 0;
            else
                warp_set = 1;
        }
    }
    for (int k = 0; k < o->culls.count && !overridden; ++k)
        if (o->culls.v[k] == 1) { /* g_cull_names: ink */
            fprintf(f, "%sink: every strategy hands off as persistent blocks at loads "
                    "up to %u loop steps (a cheap shader; naive at the simple load only), as a "
                    "block per batch above (reuse/program.cuh)\n", prefix,
                    VR_RENDER_PROGRAM_CHEAP_STEPS);
            break;
        }
    if (!warp_set)
        fprintf(f, "%swarp through the general API without an ordered queue: rounds pooled across "
                "a warp's batches (full 32-lane rounds) at loads above %u loop steps on meshes "
                "of at least %u batches per resident warp, each batch's rounds as they come up "
                "to it (reuse/program.cuh)\n", prefix, VR_RENDER_PROGRAM_POOL_STEPS,
                VR_POOL_MIN_SHARE);
    fprintf(f, "%sloads:", prefix);
    for (int l = 0; l < o->load_count; ++l)
        fprintf(f, " %s=%u iterations (%.0f cycles/invocation)", o->loads[l].name,
                o->loads[l].iterations, o->loads[l].cycles);
    fprintf(f, "%s\n", o->calibrate ? " [calibrated in this run]" : " [built-in defaults]");
    if (!o->gpus)
        return;
    const int v = o->nccl_version;
    fprintf(f, "%sgpus = %d: devices 0..%d, one NCCL %d.%d.%d rank and host thread each; each "
            "row's batches cut into %d parts of equal batch counts, part k on device k; ms_med, "
            "ms_min = per rep the slowest device's kernel time, all devices started together; "
            "ms_med_1gpu = the same row on device 0 alone; efficiency = ms_med_1gpu / (gpus x "
            "ms_med); wall_ms = median host time of the parallel step (first start to last end: "
            "launches, clears, waits); per row the counters and per-vertex shade counts summed "
            "with ncclAllReduce equal one GPU's exactly\n", prefix, o->gpus, o->gpus - 1,
            v / 10000, v / 100 % 100, v % 100, o->gpus);
    for (int s = 0; s < o->strategies.count && o->gpus > 1; ++s)
        if (o->strategies.v[s]->kind == VR_REUSE_MULTI)
            fprintf(f, "%smulti: not split over GPUs, see README (its rows are SKIP)\n", prefix);
}

static void vr_write_csv(FILE *f, const vr_cli_meta *m, const vr_bench_opts *o,
                         const vr_bench_row *rows, size_t n)
{
    vr_write_meta(f, m, o, "# ");
    for (size_t c = 0; c < VR_COLUMN_COUNT; ++c)
        fprintf(f, "%s%s", c ? "," : "", g_columns[c]);
    fprintf(f, "\n");
    static char cells[VR_COLUMN_COUNT][64];
    for (size_t i = 0; i < n; ++i) {
        vr_row_cells(cells, &rows[i]);
        for (size_t c = 0; c < VR_COLUMN_COUNT; ++c) {
            fputs(c ? "," : "", f);
            vr_cli_csv_field(f, strcmp(cells[c], "-") ? cells[c] : "");
        }
        fprintf(f, "\n");
    }
}

static void vr_write_md(FILE *f, const vr_cli_meta *m, const vr_bench_opts *o,
                        const vr_bench_row *rows, size_t n)
{
    fprintf(f, "# vreuse bench\n\n");
    vr_write_meta(f, m, o, "- ");
    fprintf(f, "\n## Best block per strategy (median ms, speedup over naive)\n\n");
    vr_print_summary(f, o, rows, n, 1);
    fprintf(f, "\n## All rows\n\n");
    vr_print_table(f, o, rows, n, 1);
}

/* ---- the command --------------------------------------------------------------------------- */

/* --gpus: row r, timed on device 0 alone into r->ms_med, on the N devices as well. First the
 * counted run over the devices, its sums against `one` = one device's counted run of the whole
 * mesh (g); then the timing. Returns 0, or 1 with the FAIL printed (the row stays not ok). */
static int vr_bench_row_gpus(const vr_bench_opts *o, vr_bench_row *r, vr_geometry *g,
                             const vr_mesh *m, const vr_reuse_params *cfg,
                             vr_geometry_result *one, const char *scene)
{
    char what[512];
    snprintf(what, sizeof what, "FAIL %s on %s, block %u, %s store, cull %s%s, %d GPU%s",
             r->ops->name, scene, r->block, vr_store_name(r->store), g_cull_names[r->cull],
             r->cc ? " + cluster" : "", o->gpus, o->gpus == 1 ? "" : "s");
    vr_reuse_params counted = *cfg;
    counted.count = 1;
    vr_status st = vr_geometry_run(g, r->ops, &counted, 0, NULL);
    if (st == VR_OK)
        st = vr_geometry_download(g, one);
    if (st == VR_OK)
        st = vr_bench_gpus_count(o->gp, r->ops, m, cfg);
    if (st == VR_OK) {
        const uint64_t bad = vr_bench_gpus_compare(o->gp, one, stderr, what);
        if (bad) {
            fprintf(stderr, "%s: %llu counters and shade counts summed over the GPUs differ "
                    "from one GPU's run\n", what, (unsigned long long)bad);
            return 1;
        }
    }
    vr_bench_gpus_times t;
    if (st == VR_OK)
        st = vr_bench_gpus_time(o->gp, &t, r->ops, m, cfg, o->reps);
    if (st != VR_OK) {
        fprintf(stderr, "%s: %s\n", what, vr_last_error());
        return 1;
    }
    r->ms_1gpu = r->ms_med;
    r->ms_med = t.ms_med;
    r->ms_min = t.ms_min;
    r->wall_ms = t.wall_ms;
    r->efficiency = t.ms_med > 0 ? r->ms_1gpu / (o->gpus * t.ms_med) : -1;
    if (t.busy < (uint32_t)o->gpus && !vr_progress_quiet)
        fprintf(stderr, "bench: %s on %s, block %u: %u of %d GPUs have batches (the others "
                "idle)\n", r->ops->name, scene, r->block, t.busy, o->gpus);
    return 0;
}

/* Benchmarks one scene, `loaded` in file order, in one order, appending its rows; returns 0, or
 * 1 when anything failed. Each order starts from a copy of the loaded mesh (reordering and
 * +fetch replace its arrays); with `take` the last order takes `loaded` itself (zeroed then). */
static int vr_bench_scene(vr_bench_opts *o, const char *spec, vr_mesh *loaded, int take, int order,
                          int first, double bandwidth, vr_bench_row *rows, size_t *row_count)
{
    const char *label = vr_cli_scene_label(spec);
    char name[320]; /* the scene in messages: "sphere:7M (forsyth)" */
    snprintf(name, sizeof name, "%s (%s)", label, vr_order_name((vr_order)order));
    vr_mesh m;
    if (take) {
        m = *loaded;
        memset(loaded, 0, sizeof *loaded);
    } else if (vr_mesh_copy(&m, loaded) != VR_OK) {
        return vr_cli_fail(1, "bench", "%s: %s", name, vr_last_error());
    }
    vr_mesh_counts counts;
    if (vr_mesh_reorder(&m, (vr_order)order, o->seed) != VR_OK ||
        vr_mesh_count(&counts, &m) != VR_OK) {
        vr_mesh_free(&m);
        return vr_cli_fail(1, "bench", "%s: %s", name, vr_last_error());
    }
    const uint32_t tris = m.index_count / 3;
    /* the least the stage must move (floor_ms): every index read once, position + normal of
     * every referenced vertex read once, the queue written once */
    const double floor_bytes = (double)sizeof(uint32_t) * m.index_count +
                               6.0 * sizeof(float) * (double)counts.referenced_vertices +
                               (double)VR_QUEUE_BYTES_PER_TRIANGLE * tris;
    const double floor_ms = bandwidth > 0 ? floor_bytes / bandwidth * 1e3 : -1;
    if (!vr_progress_quiet)
        fprintf(stderr, "bench: %s: %u triangles, %u vertices (%llu referenced), %s order\n",
                label, tris, m.vertex_count, (unsigned long long)counts.referenced_vertices,
                vr_order_name((vr_order)order));

    vr_geometry *g = NULL;
    vr_geometry_result want, got;
    int failed = 0;
    vr_status st;
    memset(&want, 0, sizeof want);
    memset(&got, 0, sizeof got);
    if ((st = vr_geometry_create(&g, &m)) != VR_OK ||
        (st = vr_geometry_result_alloc(&want, tris, m.vertex_count)) != VR_OK ||
        (st = vr_geometry_result_alloc(&got, tris, m.vertex_count)) != VR_OK) {
        failed = vr_cli_fail(1, "bench", "%s: %s", name, vr_last_error());
        goto done;
    }
    vr_reuse_params base = vr_reuse_params_default();
    base.patch_builder = o->patch_builder;
    vr_camera_orbit_shader(&base.shader, &m, 0.5f);
    /* each strategy's limits for this mesh; the block column sweeps --block when given, else
     * the strategy's own block (auto), or 64,128,256 with --limits paper, as bench always did */
    vr_batch_limits limits_of[VR_REUSE_KIND_COUNT];
    for (int s = 0; s < o->strategies.count; ++s)
        if (vr_cli_limits_resolve(&limits_of[s], &o->limits, o->strategies.v[s]->kind, tris,
                                  m.vertex_count, &o->shape) != VR_OK) {
            failed = vr_cli_fail(1, "bench", "%s: %s", name, vr_last_error());
            goto done;
        }
    base.batch_indices = limits_of[0].batch_indices; /* calibration runs naive: any row's */
    base.max_unique = limits_of[0].max_unique;
    base.max_indices = limits_of[0].max_indices;

    if (o->calibrate && first) {
        if ((st = vr_bench_calibrate(g, &base, name)) != VR_OK)
            failed = vr_cli_fail(1, "bench", "calibration: %s", vr_last_error());
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
    const vr_cli_strategies *strategies = &o->strategies;
    const vr_cli_u32s *blocks = &o->blocks;
    const vr_cli_choices *stores = &o->stores;
    /* q: a (store, cull, cluster culling) triple, store fastest */
    const vr_cli_choices *culls = &o->culls, *ccs = &o->ccs;
    const int variants = stores->count * culls->count * ccs->count;
    /* per strategy, block and (store, cull, cluster culling) triple: <= 2 stores x 6 culls x 2
     * (lists hold no repeats) */
    enum { STORES = sizeof g_store_names / sizeof *g_store_names - 1,
           CULLS = sizeof g_cull_names / sizeof *g_cull_names - 1 };
    int valid[VR_REUSE_KIND_COUNT][VR_CLI_MAX_LIST][STORES * CULLS * 2];
    /* invocations per strategy, cull and cluster culling: culling alone shades the same, cluster
     * culling shades less */
    uint64_t invocations[VR_REUSE_KIND_COUNT][VR_CLI_MAX_LIST][2];
    for (int s = 0; s < strategies->count; ++s) {
        const vr_reuse_ops *ops = strategies->v[s];
        for (int c = 0; c < culls->count; ++c)
            for (int k = 0; k < ccs->count; ++k) {
                const int cc = ccs->v[k];
                invocations[s][c][cc] = 0;
                if (!vr_bench_cc_applies(ops, culls->v[c], cc))
                    continue; /* no such rows (see the timing loop) */
                vr_reuse_params cfg = base;
                vr_batch_limits_apply(&cfg, &limits_of[s]);
                cfg.count = 1;
                vr_bench_cull(&cfg, culls->v[c], o->two_sided);
                cfg.cluster_cull = cc;
                st = vr_geometry_ref(&want, ops, &m, &cfg);
                if (st != VR_OK)
                    fprintf(stderr, "FAIL %s on %s: CPU twin: %s\n", ops->name, name,
                            vr_last_error());
                invocations[s][c][cc] = want.counters.invocations;
                for (int b = 0; b < blocks->count; ++b)
                    for (int q = 0; q < stores->count; ++q) {
                        cfg.block_size = block_of(blocks, &limits_of[s], b);
                        cfg.queue_store = stores->v[q];
                        valid[s][b][(k * culls->count + c) * stores->count + q] =
                            st == VR_OK ? vr_bench_validate(g, ops, &cfg, &want, &got, name) : 0;
                    }
            }
        if (!vr_progress_quiet)
            fprintf(stderr, "bench: %s: %s validated (%llu invocations)\n", name, ops->name,
                    (unsigned long long)invocations[s][0][ccs->v[0]]);
    }

    /* time: strategies interleaved per (load, block, store) so clock drift hits all alike */
    for (int l = 0; l < o->load_count; ++l)
        for (int b = 0; b < blocks->count; ++b) {
            const size_t block_rows = *row_count; /* this (load, block)'s first row */
            for (int q = 0; q < variants; ++q) {
                const int store = stores->v[q % stores->count];
                const int ci = q / stores->count % culls->count, cull = culls->v[ci];
                const int cc = ccs->v[q / (stores->count * culls->count)];
                size_t group = *row_count;
                for (int s = 0; s < strategies->count; ++s) {
                    if (!vr_bench_cc_applies(strategies->v[s], cull, cc))
                        continue;
                    vr_bench_row *r = &rows[(*row_count)++];
                    memset(r, 0, sizeof *r);
                    r->scene = label;
                    r->order = order;
                    r->tris = tris;
                    r->ops = strategies->v[s];
                    r->load = &o->loads[l];
                    r->block = block_of(blocks, &limits_of[s], b);
                    r->limits = limits_of[s];
                    r->limits.block_size = r->block;
                    r->store = store;
                    r->cull = cull;
                    r->cc = cc;
                    r->invocations = invocations[s][ci][cc];
                    r->index_count = m.index_count;
                    /* the floor assumes every triangle queued */
                    r->floor_ms = cull ? -1 : floor_ms;
                    r->speedup_naive = r->speedup_multi = r->bound = r->frac_bound = -1;
                    r->gpus = o->gpus ? o->gpus : 1;
                    r->ms_1gpu = r->efficiency = r->wall_ms = -1;
                    if (valid[s][b][q] != 1) {
                        r->skip = valid[s][b][q] < 0;
                        failed |= !r->skip;
                        continue;
                    }
                    if (o->gpus > 1 && r->ops->kind == VR_REUSE_MULTI) {
                        r->skip = r->unsplit = 1; /* parts.h: not cut, no FAIL */
                        continue;
                    }
                    vr_reuse_params cfg = base;
                    vr_batch_limits_apply(&cfg, &r->limits);
                    cfg.queue_store = store;
                    vr_bench_cull(&cfg, cull, o->two_sided);
                    cfg.cluster_cull = cc;
                    cfg.shader.loop_iterations = o->loads[l].iterations;
                    st = vr_bench_time(&r->ms_med, &r->ms_min, g, r->ops, &cfg, o->reps);
                    if (st != VR_OK) {
                        fprintf(stderr, "FAIL %s on %s, block %u, %s store, cull %s: %s\n",
                                r->ops->name, name, r->block, vr_store_name(r->store),
                                g_cull_names[cull], vr_last_error());
                        failed = 1;
                        continue;
                    }
                    if (o->gpus && vr_bench_row_gpus(o, r, g, &m, &cfg, &got, name)) {
                        failed = 1;
                        continue;
                    }
                    r->ok = 1;
                }
                /* derived columns against naive and multi of the same group (with cluster culling,
                 * which they do not take part in: of the group without it, timed just before) */
                const vr_bench_row *naive = NULL, *multi = NULL;
                for (size_t i = cc ? block_rows : group; i < *row_count; ++i) {
                    const vr_bench_row *r = &rows[i];
                    if (!r->ok || r->cc || r->store != store || r->cull != cull)
                        continue;
                    if (r->ops->kind == VR_REUSE_NAIVE)
                        naive = r;
                    if (r->ops->kind == VR_REUSE_MULTI)
                        multi = r;
                }
                for (size_t i = group; i < *row_count; ++i) {
                    vr_bench_row *r = &rows[i];
                    if (!r->ok)
                        continue;
                    if (naive) {
                        r->speedup_naive = naive->ms_med / r->ms_med;
                        r->bound =
                            r->invocations ? (double)naive->invocations / r->invocations : -1;
                        if (r->bound > 0)
                            r->frac_bound = r->speedup_naive / r->bound;
                    }
                    if (multi)
                        r->speedup_multi = multi->ms_med / r->ms_med;
                }
                if (!vr_progress_quiet)
                    fprintf(stderr, "bench: %s: load %s, block %u, %s store, cull %s%s timed\n",
                            name, o->loads[l].name, block_of(blocks, &limits_of[0], b),
                            vr_store_name(store), g_cull_names[cull], cc ? " + cluster" : "");
            }
        }
done:
    vr_bench_gpus_reset(o->gp); /* before the mesh goes */
    vr_geometry_result_free(&want);
    vr_geometry_result_free(&got);
    vr_geometry_destroy(g);
    vr_mesh_free(&m);
    return failed;
}

/* --queue-write: per scene and block, the queue-store microbenchmark (bench/queue_bench.h)
 * next to the stage's D2D copy bandwidth; CSV rows to `csv` when not NULL. Returns 0, or 1
 * when anything failed or the staged queue differed from the direct one. */
static int vr_bench_queue_write(const vr_bench_opts *o, const vr_cli_meta *meta, FILE *csv)
{
#ifdef VR_HAVE_CUDA
    if (csv) {
        vr_write_meta(csv, meta, o, "# ");
        fprintf(csv, "# queue write: synthetic triangles through vr_emit_triangle (direct, "
                "staged), a float4 stream, cudaMemset and a D2D copy of 112 B x triangles; "
                "gb_per_s = bytes / ms_med, the copy counting read + write\n");
        fprintf(csv, "scene,tris,block,kind,ms_med,ms_min,bytes,gb_per_s,identical\n");
    }
    FILE *out = g_human;
    int failed = 0;
    for (int i = 0; i < o->scene_count; ++i) {
        const char *spec = o->scenes[i];
        const char *name = vr_cli_scene_label(spec);
        vr_mesh m;
        if (vr_mesh_load(&m, spec) != VR_OK) {
            failed = vr_cli_fail_last("bench");
            continue;
        }
        const uint32_t tris = m.index_count / 3;
        vr_mesh_free(&m); /* only the count is needed; the device gets the memory */
        for (int b = 0; b < o->blocks.count; ++b) {
            const uint32_t block = o->blocks.v[b];
            vr_queue_bench_result r;
            if (vr_queue_bench(&r, tris, block, o->reps) != VR_OK) {
                failed = vr_cli_fail(1, "bench", "queue write on %s, block %u: %s", name, block,
                                     vr_last_error());
                continue;
            }
            failed |= !r.identical;
            fprintf(out, "\n== queue write: %s, %u triangles x 112 B = %.1f MB, block %u, median "
                    "of %d (staged queue == direct queue: %s)\n", name, tris,
                    (double)tris * VR_QUEUE_BYTES_PER_TRIANGLE * 1e-6, block, o->reps,
                    r.identical ? "yes" : "NO");
            fprintf(out, "%-14s %9s %9s %9s %9s\n", "kind", "ms_med", "ms_min", "GB/s",
                    "x_stream");
            for (int k = 0; k < VR_QB_KIND_COUNT; ++k) {
                const double gbs = r.bytes[k] / (r.ms_med[k] * 1e6);
                const char *kind = vr_queue_bench_name((vr_queue_bench_kind)k);
                fprintf(out, "%-14s %9.4f %9.4f %9.1f %9.3f%s\n", kind, r.ms_med[k], r.ms_min[k],
                        gbs, r.ms_med[VR_QB_STREAM] / r.ms_med[k],
                        k == VR_QB_COPY ? "  (read + write)" : "");
                if (csv) {
                    vr_cli_csv_field(csv, name);
                    fprintf(csv, ",%u,%u,%s,%.5f,%.5f,%.0f,%.1f,%d\n", tris, block, kind,
                            r.ms_med[k], r.ms_min[k], r.bytes[k], gbs, r.identical);
                }
            }
            fprintf(out, "stage's D2D copy bandwidth (256 MiB, read + write, best of 10): %.1f "
                    "GB/s\n", meta->bandwidth * 1e-9);
            fflush(out);
        }
    }
    return failed;
#else
    (void)o;
    (void)meta;
    (void)csv;
    return vr_cli_fail(1, "bench", "--queue-write needs a CUDA build");
#endif
}

static const vr_cli_command g_cmd = {
    "bench", "SCENE...",
    "Times the GPU geometry stage: every strategy per scene, triangle order, shader load,\n"
    "block size and queue store. Each (scene, order, strategy, block, store) first runs once\n"
    "against its CPU twin (queue, counters and shade counts exactly equal, or a FAIL row and\n"
    "exit status 1); then one warm-up and --reps timed runs of the kernels alone (cudaEvents):\n"
    "median and minimum. Prints an aligned table and a summary (each strategy's best block);\n"
    "--csv and --md write the same with the run's metadata. Needs a CUDA build and device;\n"
    "--gpus N times each row on N devices as well (one NCCL rank each).\n"
    "\n"
    "SCENE is a file (OBJ, PLY, glTF 2.0, ...) or a generator: sphere[:N], terrain[:N],\n"
    "foliage[:N], optionally @N to subdivide (sphere:7M, bunny.obj@7M).",
    "Columns and the byte floor: bench/README.md. The CSV ends with the columns gpus,\n"
    "ms_med_1gpu, efficiency and wall_ms (the last three filled with --gpus); the table and\n"
    "--md show them with --gpus only. `vreuse plot-bench` draws a CSV like the paper's\n"
    "Figure 9.",
    VR_CLI_SCENES};

/* Closes an output opened by vr_cli_bench_begin; 0, or 1 with the message printed. */
static int vr_bench_close(vr_cli_out *out)
{
    return vr_cli_out_close(out) == VR_OK ? 0 : vr_cli_fail_last("bench");
}

int vr_cmd_bench(int argc, char **argv)
{
    memcpy(g_load_iterations, vr_load_iterations, sizeof g_load_iterations);
    g_human = stdout;
    vr_bench_opts o;
    memset(&o, 0, sizeof o);
    o.orders.v[0] = VR_ORDER_FORSYTH;
    o.orders.count = 1;
    o.seed = 1;
    for (int k = 0; k < VR_REUSE_KIND_COUNT; ++k)
        o.strategies.v[o.strategies.count++] = &vr_reuse_all[k];
    vr_cli_loads loads;
    memset(&loads, 0, sizeof loads);
    for (int k = 0; k < VR_BENCH_LOAD_COUNT; ++k) {
        loads.v[loads.count] = vr_load_iterations[k];
        snprintf(loads.name[loads.count++], sizeof loads.name[0], "%s", vr_load_names[k]);
    }
    o.blocks.count = 0; /* not given: see below */
    o.stores = (vr_cli_choices){{1}, 1};
    o.culls = (vr_cli_choices){{0}, 1};
    o.ccs = (vr_cli_choices){{0}, 1};
    o.reps = 20;
    const char *csv = NULL, *md = NULL;
    const vr_cli_opt opts[] = {
        VR_CLI_STRATEGY(&o.strategies, "all"),
        VR_CLI_LOAD(&loads, "simple,light,medium,heavy"),
        VR_CLI_BLOCK(&o.blocks, "each strategy's own with --limits auto, 64,128,256 with "
                     "--limits paper"),
        {"store", 0, "LIST",
         "queue stores, comma separated: direct (each lane stores its own slot), staged (a "
         "warp's 32 slots as 512 contiguous bytes) or all; rows for each (default staged)",
         vr_cli_parse_choices, &o.stores, 0, 0, 0, 0, g_store_names},
        {"cull", 0, "LIST",
         "culling, comma separated: off (every triangle queued in stream order), or drop triangles "
         "outside the frustum, back-facing or of zero area and compact the rest into an ink "
         "(input order, one pass), collate (one atomic per block), atomic (one per warp), "
         "cub or hp queue (the baselines: every triangle staged, then a CUB DeviceSelect or a "
         "HistoPyramid compaction and a gather pass), or all; rows for each (default off)",
         vr_cli_parse_choices, &o.culls, 0, 0, 0, 0, g_cull_names},
        {"two-sided", 0, NULL, "with --cull: keep back-facing triangles", NULL, &o.two_sided, 1,
         0, 0, 0, NULL},
        {"cluster-cull", 0, "LIST",
         "with --cull, for patch and meshlet: off, on or all (comma separated; rows for each, "
         "default off): skip a whole batch before shading when its bounds (box and normal "
         "cone) prove every triangle culled; the queue stays the same, invocations drop. The "
         "other strategies' rows are left out for on", vr_cli_parse_choices, &o.ccs, 0, 0, 0,
         0, g_cc_names},
        VR_CLI_ORDER(&o.orders, "forsyth, the paper's preprocessing; rows for each"),
        VR_CLI_SEED(&o.seed),
        VR_CLI_REPS(&o.reps, "20"),
        VR_CLI_LIMITS(&o.limits),
        VR_CLI_PATCH_BUILDER(&o.patch_builder,
                             "patch rows run and are checked on that plan (built untimed)"),
        VR_CLI_SMS(&o.limits, "instead of the device's own count"),
        VR_CLI_WARP_BATCH(&o.limits.given.batch_indices),
        VR_CLI_NU(&o.limits.given.max_unique),
        VR_CLI_MAX_INDICES(&o.limits.given.max_indices),
        VR_CLI_CSV(&csv),
        {"md", 0, "FILE",
         "also write the metadata, the summary and all rows as Markdown to FILE ('-': standard "
         "output)", vr_cli_parse_path, &md, 0, 0, 0, 0, NULL},
        {"calibrate", 0, NULL,
         "first find light/medium/heavy for naive 3x/5.5x/10x slower than simple (first scene "
         "and order, block 256), print them and use them for the run",
         NULL, &o.calibrate, 1, 0, 0, 0, NULL},
        {"queue-write", 0, NULL,
         "instead: time writing each scene's triangle queue with synthetic data (direct, "
         "staged, float4 stream, memset, copy) per --block and --reps; table and --csv only",
         NULL, &o.queue_write, 1, 0, 0, 0, NULL},
        {"gpus", 0, "N",
         "also run each row's stage on N GPUs of this machine (devices 0..N-1), one NCCL rank "
         "and host thread each (NCCL loaded at run time): the row's batches cut into N parts of "
         "equal batch counts, all devices started together; ms_med and ms_min are then the "
         "slowest device's time, ms_med_1gpu the row on device 0 alone, efficiency = "
         "ms_med_1gpu / (N x ms_med), wall_ms the parallel step's host time. The counters and "
         "shade counts summed over the devices (ncclAllReduce) must equal one GPU's, or the row "
         "FAILs. multi is not split (SKIP rows with N > 1). N 1: one rank, the transport's own "
         "cost; without --gpus: one GPU, as always",
         vr_cli_parse_int, &o.gpus, 0, 1, VR_PARTS_MAX, 0, NULL},
        {0}};
    vr_cli_args args;
    VR_CLI_PARSE_OR_RETURN(&g_cmd, opts, argc, argv, &args);
    if (o.queue_write && (md || o.calibrate))
        return vr_cli_fail(VR_CLI_USAGE, "bench", "--queue-write writes a table and --csv only "
                           "(no --md, no --calibrate)");
    if (o.queue_write && o.gpus)
        return vr_cli_fail(VR_CLI_USAGE, "bench", "--queue-write times queue stores on one GPU "
                           "(no --gpus)");
    for (int k = 0; k < o.ccs.count; ++k) { /* cluster culling on where it can do nothing */
        if (!o.ccs.v[k])
            continue;
        int culling = 0, plans = 0;
        for (int c = 0; c < o.culls.count; ++c)
            culling |= o.culls.v[c] != 0;
        for (int s = 0; s < o.strategies.count; ++s)
            plans |= o.strategies.v[s]->plan != NULL;
        if (!culling)
            return vr_cli_fail(VR_CLI_USAGE, "bench", "--cluster-cull on skips batches whose "
                               "triangles culling would drop: it needs --cull (ink, collate, "
                               "atomic, cub, hp or all)");
        if (!plans)
            return vr_cli_fail(VR_CLI_USAGE, "bench", "--cluster-cull on works on the static "
                               "plans only: add patch or meshlet to --strategy");
        if (o.queue_write)
            return vr_cli_fail(VR_CLI_USAGE, "bench", "--queue-write times queue stores only "
                               "(no --cluster-cull)");
    }
    if (o.blocks.count == 0)
        o.blocks = !o.limits.automatic || o.queue_write ? (vr_cli_u32s){{64, 128, 256}, 3}
                                                     : (vr_cli_u32s){{0}, 1};
    o.scenes = args.v;
    o.scene_count = args.count;
    for (int l = 0; l < loads.count; ++l) {
        snprintf(o.loads[l].name, sizeof o.loads[l].name, "%s", loads.name[l]);
        o.loads[l].iterations = loads.v[l];
    }
    o.load_count = loads.count;

    /* outputs first: a bad path fails before minutes of measurement */
    vr_cli_bench_out b;
    if (vr_cli_bench_begin(&b, "bench", csv, md, "`vreuse bench` times the GPU stage and needs "
                           "a CUDA build and device; `vreuse sim` gives the CPU-simulated counts.",
                           argc, argv))
        return 1;
    g_human = b.human;
    if (vr_gpu_shape_query(&o.shape) != VR_OK) {
        vr_cli_out_abort(&b.csv);
        vr_cli_out_abort(&b.md);
        return vr_cli_fail_last("bench");
    }
    if (o.queue_write) {
        int failed = vr_bench_queue_write(&o, &b.meta, b.csv.f);
        return vr_bench_close(&b.csv) | failed;
    }
    if (o.gpus) {
        if (vr_bench_gpus_create(&o.gp, (uint32_t)o.gpus, &o.nccl_version) != VR_OK) {
            vr_cli_out_abort(&b.csv);
            vr_cli_out_abort(&b.md);
            return vr_cli_fail_last("bench");
        }
        const int v = o.nccl_version;
        fprintf(g_human, "# --gpus %d: devices 0..%d, one NCCL %d.%d.%d rank and host thread "
                "each\n", o.gpus, o.gpus - 1, v / 10000, v / 100 % 100, v % 100);
    }

    /* scene names point into argv and loads into `o`, so rows stay valid to the end */
    const size_t max_rows = (size_t)o.scene_count * o.orders.count * o.load_count *
                            o.blocks.count * o.stores.count * o.culls.count * o.ccs.count *
                            o.strategies.count;
    vr_bench_row *rows = calloc(max_rows + 1, sizeof *rows);
    if (!rows) {
        vr_cli_out_abort(&b.csv);
        vr_cli_out_abort(&b.md);
        vr_bench_gpus_destroy(o.gp);
        return vr_cli_fail(1, "bench", "out of memory for %zu rows", max_rows);
    }
    size_t n = 0;
    int failed = 0;
    for (int s = 0; s < o.scene_count; ++s) {
        vr_mesh loaded; /* loaded once per scene, copied for every order but the last */
        if (vr_mesh_load(&loaded, o.scenes[s]) != VR_OK) {
            failed = vr_cli_fail_last("bench");
            continue;
        }
        for (int k = 0; k < o.orders.count; ++k)
            failed |= vr_bench_scene(&o, o.scenes[s], &loaded, k == o.orders.count - 1,
                                     o.orders.v[k], s == 0 && k == 0, b.meta.bandwidth, rows, &n);
        vr_mesh_free(&loaded);
    }
    vr_bench_gpus_destroy(o.gp);

    if (n == 0) { /* nothing measured (no scene loaded): leave the destinations as they were */
        vr_cli_out_abort(&b.csv);
        vr_cli_out_abort(&b.md);
        free(rows);
        return 1;
    }
    if (g_human == stdout) {
        vr_print_table(stdout, &o, rows, n, 0);
        if (o.gpus)
            printf("\n== summary: best block per strategy, median ms over %d GPU%s (speedup "
                   "over naive)\n", o.gpus, o.gpus == 1 ? "" : "s");
        else
            printf("\n== summary: best block per strategy, median ms (speedup over naive)\n");
        vr_print_summary(stdout, &o, rows, n, 0);
    }
    if (o.calibrate)
        fprintf(g_human, "calibrated light=%u medium=%u heavy=%u\n", g_load_iterations[1],
                g_load_iterations[2], g_load_iterations[3]);
    if (b.csv.f)
        vr_write_csv(b.csv.f, &b.meta, &o, rows, n);
    if (b.md.f)
        vr_write_md(b.md.f, &b.meta, &o, rows, n);
    failed |= vr_bench_close(&b.csv);
    failed |= vr_bench_close(&b.md);
    free(rows);
    return failed ? 1 : 0;
}
