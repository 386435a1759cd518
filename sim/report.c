/* report.c - text output of `vreuse sim`: the aligned tables (Table 1 of Kenzel et al. 2018
 * plus a FIFO / LRU sweep), CSV in long form whose column names match `vreuse bench`, and JSON.
 * Cells are formatted first and the widths measured after, so any scene name lines up.
 * Try: `vreuse sim sphere --csv - --quiet`.
 */
#include "sim/sim_private.h"

#include "reuse/patches.h"

#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* "16K" for 16384, "1M" for 1048576, else the plain number. */
static void bytes_label(char *buf, size_t n, uint32_t bytes)
{
    if (bytes % (1024u * 1024u) == 0)
        snprintf(buf, n, "%uM", bytes / (1024u * 1024u));
    else if (bytes % 1024u == 0)
        snprintf(buf, n, "%uK", bytes / 1024u);
    else
        snprintf(buf, n, "%u", bytes);
}

/* --- a small table builder: cells formatted up front, widths measured afterwards ---------- */

#define CELL 72 /* fits a 63-character scene label */
#define MAX_COLS (4 + VR_SIM_MAX_CACHES * 2 + VR_SIM_ASSIGN_COUNT * VR_SIM_MAX_PARALLEL + 4)

typedef struct text_table {
    uint32_t cols, rows, cap;
    uint32_t left_cols;       /* the first left_cols columns are left-aligned text */
    char (*cell)[CELL];       /* rows * cols, row 0 is the header */
} text_table;

static int table_init(text_table *t, uint32_t cols, uint32_t left_cols, uint32_t max_rows)
{
    assert(cols <= MAX_COLS);
    t->cols = cols;
    t->rows = 0;
    t->cap = max_rows;
    t->left_cols = left_cols;
    t->cell = calloc((size_t)cols * max_rows, CELL);
    return t->cell != NULL;
}

static char *table_cell(text_table *t, uint32_t row, uint32_t col)
{
    assert(row < t->cap && col < t->cols);
    if (row >= t->rows)
        t->rows = row + 1;
    return t->cell[(size_t)row * t->cols + col];
}

static void table_print(FILE *f, const text_table *t)
{
    size_t width[MAX_COLS] = {0};
    for (uint32_t r = 0; r < t->rows; ++r)
        for (uint32_t c = 0; c < t->cols; ++c) {
            size_t w = strlen(t->cell[(size_t)r * t->cols + c]);
            if (w > width[c])
                width[c] = w;
        }
    for (uint32_t r = 0; r < t->rows; ++r) {
        for (uint32_t c = 0; c < t->cols; ++c) {
            const char *s = t->cell[(size_t)r * t->cols + c];
            int w = (int)width[c];
            if (c)
                fputs("  ", f);
            if (c < t->left_cols && c + 1 < t->cols)
                fprintf(f, "%-*s", w, s);
            else if (c < t->left_cols)
                fputs(s, f); /* no trailing blanks on the last column */
            else
                fprintf(f, "%*s", w, s);
        }
        fputc('\n', f);
    }
}

/* Reuse with three decimals; reuse can be negative (a vertex shaded more often than used). */
static void reuse_cell(char *cell, double reuse) { snprintf(cell, CELL, "%.3f", reuse); }

static void parallel_label(char *buf, size_t n, const vr_sim_config *cfg, uint32_t a, uint32_t i)
{
    char b[16];
    bytes_label(b, sizeof b, cfg->parallel_bytes[i]);
    snprintf(buf, n, "pc%s%s", b, a == VR_SIM_ROUNDROBIN ? "_rr" : "");
}

/* The distinct sizes of both sweeps, ascending. */
static uint32_t sweep_sizes(uint32_t *sizes, const vr_sim_config *cfg)
{
    uint32_t n = 0;
    const uint32_t *lists[2] = {cfg->fifo_sizes, cfg->lru_sizes};
    const uint32_t counts[2] = {cfg->fifo_count, cfg->lru_count};
    for (int l = 0; l < 2; ++l)
        for (uint32_t i = 0; i < counts[l]; ++i) {
            uint32_t k = lists[l][i], j = 0;
            while (j < n && sizes[j] != k)
                ++j;
            if (j == n)
                sizes[n++] = k;
        }
    for (uint32_t i = 1; i < n; ++i) /* insertion sort: at most 2 * VR_SIM_MAX_CACHES */
        for (uint32_t j = i; j > 0 && sizes[j - 1] > sizes[j]; --j) {
            uint32_t t = sizes[j];
            sizes[j] = sizes[j - 1];
            sizes[j - 1] = t;
        }
    return n;
}

/* A table whose first two columns are scene and order: header cells written, 1; or 0 after
 * saying that memory ran out. */
static int table_begin(FILE *f, text_table *t, uint32_t cols, uint32_t left_cols, uint32_t rows)
{
    if (!table_init(t, cols, left_cols, rows)) {
        fprintf(f, "sim: out of memory formatting the table\n");
        return 0;
    }
    strcpy(table_cell(t, 0, 0), "scene");
    strcpy(table_cell(t, 0, 1), "order");
    return 1;
}

/* Row r's first two cells, its scene and order; returns the next column. */
static uint32_t label_cells(text_table *t, uint32_t r, const vr_sim_report *p)
{
    snprintf(table_cell(t, r, 0), CELL, "%s", p->scene);
    snprintf(table_cell(t, r, 1), CELL, "%s", p->order);
    return 2;
}

/* The header cells of the plans cfg enables, from column *c on. */
static void plan_header_cells(text_table *t, uint32_t *c, const vr_sim_config *cfg)
{
    if (cfg->patch)
        strcpy(table_cell(t, 0, (*c)++), "patch");
    if (cfg->meshlet)
        strcpy(table_cell(t, 0, (*c)++), "meshlet");
}

/* Seconds per million triangles, or "-" when not measured. */
static void per_mtri_cell(char *cell, double seconds, uint64_t triangles)
{
    if (seconds <= 0 || triangles == 0)
        strcpy(cell, "-");
    else
        snprintf(cell, CELL, "%.3f", seconds / ((double)triangles * 1e-6));
}

/* 1 when every report was simulated with cfg's batch limits (the output then names them once,
 * as it always did), 0 when they differ per report (auto limits, chosen per scene). */
static int limits_uniform(const vr_sim_report *reports, uint32_t count, const vr_sim_config *cfg)
{
    for (uint32_t r = 0; r < count; ++r)
        if (reports[r].warp_batch != cfg->warp_batch ||
            reports[r].dyn_max_unique != cfg->dyn_max_unique ||
            reports[r].dyn_max_indices != cfg->dyn_max_indices)
            return 0;
    return 1;
}

/* Each report's batch limits, one line each, after `prefix` ("  " or "# limits: "). */
static void print_limits(FILE *f, const vr_sim_report *reports, uint32_t count,
                         const char *prefix)
{
    for (uint32_t r = 0; r < count; ++r)
        fprintf(f, "%s%s %s: warp batch %u, N_u %u, <= %u indices\n", prefix, reports[r].scene,
                reports[r].order, reports[r].warp_batch, reports[r].dyn_max_unique,
                reports[r].dyn_max_indices);
}

/* The preprocessing each row needed: the order's reordering (what a user would run instead of
 * a plan) and the plans' builders, as wall time. */
static void print_plan_times(FILE *f, const vr_sim_report *reports, uint32_t count,
                             const vr_sim_config *cfg)
{
    text_table t;
    const int gpu = cfg->patch && cfg->patch_builder; /* two more patch columns */
    const uint32_t cols = 4 + (cfg->patch ? 1 : 0) + (cfg->meshlet ? 1 : 0) + (gpu ? 2 : 0);
    if (!table_begin(f, &t, cols, 2, count + 1))
        return;
    uint32_t c = 2;
    strcpy(table_cell(&t, 0, c++), "tris");
    strcpy(table_cell(&t, 0, c++), "reorder");
    plan_header_cells(&t, &c, cfg);
    if (gpu) {
        strcpy(table_cell(&t, 0, c - 1 - (cfg->meshlet ? 1 : 0)), "patch-gpu-ref");
        strcpy(table_cell(&t, 0, c++), "patch-cpu");
        strcpy(table_cell(&t, 0, c++), "patch-gpu");
    }
    for (uint32_t r = 0; r < count; ++r) {
        const vr_sim_report *p = &reports[r];
        c = label_cells(&t, r + 1, p);
        snprintf(table_cell(&t, r + 1, c++), CELL, "%llu", (unsigned long long)p->triangles);
        per_mtri_cell(table_cell(&t, r + 1, c++), p->order_seconds, p->triangles);
        if (cfg->patch)
            per_mtri_cell(table_cell(&t, r + 1, c++), p->patch_seconds, p->triangles);
        if (cfg->meshlet)
            per_mtri_cell(table_cell(&t, r + 1, c++), p->meshlet_seconds, p->triangles);
        if (gpu) {
            per_mtri_cell(table_cell(&t, r + 1, c++), p->patch_cpu_seconds, p->triangles);
            per_mtri_cell(table_cell(&t, r + 1, c++), p->patch_gpu_seconds, p->triangles);
        }
    }
    fprintf(f, "\npreprocessing, seconds per million triangles (wall time; the jobs share the "
               "CPUs unless --threads 1):\nreorder = putting the file's triangles into this "
               "order (forsyth: meshopt_optimizeVertexCache), patch and meshlet = building "
               "the plan\n");
    if (gpu)
        fprintf(f, "patch = the GPU builder's plan (--patch-builder gpu): patch-gpu-ref = its "
                   "CPU reference (the plan simulated), patch-cpu = the CPU builder alone, "
                   "patch-gpu = the GPU builder on the device (cudaEvents: upload, kernels, "
                   "packing, download; '-' without a GPU), checked equal to the reference\n");
    table_print(f, &t);
    free(t.cell);
}

/* One row per scene, order and batching strategy: its shading passes, the lanes a pass fills on
 * average, and naive's passes over its own - the speed-up a compute-bound shader allows, where a
 * pass costs the same however few lanes it fills (geometry-h100.md, session 45). */
/* The batching strategies of report p that cfg simulates, naive first and multi last. */
static uint32_t passes_strategies(const vr_sim_report *p, const vr_sim_config *cfg,
                                  const char *names[6], const vr_sim_result *res[6])
{
    uint32_t n = 0;
    names[n] = "naive", res[n++] = &p->naive;
    if (cfg->warp)
        names[n] = "warp", res[n++] = &p->warp;
    if (cfg->dynamic)
        names[n] = "dyn", res[n++] = &p->dynamic;
    if (cfg->patch)
        names[n] = "patch", res[n++] = &p->patch;
    if (cfg->meshlet)
        names[n] = "meshlet", res[n++] = &p->meshlet;
    names[n] = "multi", res[n++] = &p->multi;
    return n;
}

static void print_passes(FILE *f, const vr_sim_report *reports, uint32_t count,
                         const vr_sim_config *cfg)
{
    const char *names[6];
    const vr_sim_result *res[6];
    text_table t;
    if (count == 0)
        return;
    if (!table_init(&t, 6, 3, count * passes_strategies(reports, cfg, names, res) + 1)) {
        fprintf(f, "sim: out of memory formatting the table\n");
        return;
    }
    static const char *const head[] = {"scene", "order", "strategy", "passes", "lanes/pass",
                                       "vs naive"};
    for (uint32_t c = 0; c < 6; ++c)
        strcpy(table_cell(&t, 0, c), head[c]);
    uint32_t row = 1;
    for (uint32_t r = 0; r < count; ++r) {
        const vr_sim_report *p = &reports[r];
        const uint32_t n = passes_strategies(p, cfg, names, res);
        for (uint32_t k = 0; k < n; ++k, ++row) {
            snprintf(table_cell(&t, row, 0), CELL, "%s", p->scene);
            snprintf(table_cell(&t, row, 1), CELL, "%s", p->order);
            strcpy(table_cell(&t, row, 2), names[k]);
            snprintf(table_cell(&t, row, 3), CELL, "%llu", (unsigned long long)res[k]->passes);
            if (res[k]->passes) {
                snprintf(table_cell(&t, row, 4), CELL, "%.1f",
                         (double)res[k]->shaded_vertices / (double)res[k]->passes);
                snprintf(table_cell(&t, row, 5), CELL, "%.2fx",
                         (double)p->naive.passes / (double)res[k]->passes);
            } else {
                strcpy(table_cell(&t, row, 4), "-");
                strcpy(table_cell(&t, row, 5), "-");
            }
        }
    }
    fprintf(f, "\nshading passes of 32 lanes (warp: its rounds of %u lanes). Under a compute-bound "
               "shader a pass costs the same\nhowever few lanes it fills, so naive's passes over a "
               "strategy's are the speed-up it allows (naive: 3 per\n32 triangles, a thread per "
               "triangle):\n",
            cfg->warp_size);
    table_print(f, &t);
    free(t.cell);
}

void vr_sim_print_table(FILE *f, const vr_sim_report *reports, uint32_t count,
                        const vr_sim_config *cfg)
{
    assert(f != NULL && cfg != NULL && (reports != NULL || count == 0));
    text_table t;
    uint32_t pc_cols = 0;
    for (uint32_t a = 0; a < VR_SIM_ASSIGN_COUNT; ++a)
        if (cfg->assign_mask & (1u << a))
            pc_cols += cfg->parallel_count;
    uint32_t cols = 5 + pc_cols + (cfg->warp ? 1 : 0) + (cfg->dynamic ? 1 : 0) +
                    (cfg->patch ? 1 : 0) + (cfg->meshlet ? 1 : 0);
    if (!table_begin(f, &t, cols, 2, count + 1))
        return;
    uint32_t c = 2;
    strcpy(table_cell(&t, 0, c++), "verts");
    strcpy(table_cell(&t, 0, c++), "tris");
    strcpy(table_cell(&t, 0, c++), "ideal");
    for (uint32_t a = 0; a < VR_SIM_ASSIGN_COUNT; ++a)
        if (cfg->assign_mask & (1u << a))
            for (uint32_t i = 0; i < cfg->parallel_count; ++i)
                parallel_label(table_cell(&t, 0, c++), CELL, cfg, a, i);
    if (cfg->warp)
        strcpy(table_cell(&t, 0, c++), "warp");
    if (cfg->dynamic)
        strcpy(table_cell(&t, 0, c++), "dyn");
    plan_header_cells(&t, &c, cfg);
    for (uint32_t r = 0; r < count; ++r) {
        const vr_sim_report *p = &reports[r];
        c = label_cells(&t, r + 1, p);
        snprintf(table_cell(&t, r + 1, c++), CELL, "%u", p->referenced_vertices);
        snprintf(table_cell(&t, r + 1, c++), CELL, "%llu", (unsigned long long)p->triangles);
        reuse_cell(table_cell(&t, r + 1, c++), p->ideal.reuse);
        for (uint32_t a = 0; a < VR_SIM_ASSIGN_COUNT; ++a)
            if (cfg->assign_mask & (1u << a))
                for (uint32_t i = 0; i < cfg->parallel_count; ++i)
                    reuse_cell(table_cell(&t, r + 1, c++), p->parallel[a][i].reuse);
        if (cfg->warp)
            reuse_cell(table_cell(&t, r + 1, c++), p->warp.reuse);
        if (cfg->dynamic)
            reuse_cell(table_cell(&t, r + 1, c++), p->dynamic.reuse);
        if (cfg->patch)
            reuse_cell(table_cell(&t, r + 1, c++), p->patch.reuse);
        if (cfg->meshlet)
            reuse_cell(table_cell(&t, r + 1, c++), p->meshlet.reuse);
    }
    table_print(f, &t);
    free(t.cell);

    fprintf(f, "\nreuse = 1 - shader invocations / indices. verts = distinct referenced vertices, "
               "with vertices shared as the\nloader shares them (OBJ corners joined on equal "
               "attributes, UV seams split).\n");
    if (pc_cols) {
        char b[16];
        bytes_label(b, sizeof b, cfg->parallel_bytes[0]);
        fprintf(f,
                "pc<bytes>: per-multiprocessor LRU cache, %u multiprocessors x %u concurrent "
                "invocations, %u B/vertex\n(%s = %u entries); hits only on results of an "
                "earlier wave of the same multiprocessor. Assignment:\n",
                cfg->sm_count, cfg->wave_size, cfg->vertex_bytes, b,
                cfg->parallel_bytes[0] / cfg->vertex_bytes);
        if (cfg->assign_mask & (1u << VR_SIM_CONTIGUOUS))
            fprintf(f, "  pc<bytes>    contiguous: the buffer split into %u runs of whole "
                       "triangles\n", cfg->sm_count);
        if (cfg->assign_mask & (1u << VR_SIM_ROUNDROBIN))
            fprintf(f, "  pc<bytes>_rr roundrobin: %u-index chunks dealt to the "
                       "multiprocessors in turn\n", cfg->wave_size);
    }
    if (!limits_uniform(reports, count, cfg)) {
        fprintf(f, "batch limits per scene (--limits auto: chosen from the mesh size and the "
                   "GPU's SM count):\n");
        print_limits(f, reports, count, "  ");
        if (cfg->warp)
            fprintf(f, "warp: static batches, %u-lane warp voting (Algorithm 1).\n",
                    cfg->warp_size);
        if (cfg->dynamic)
            fprintf(f, "dyn: dynamic batches of <= N_u distinct vertices and the index limit "
                       "(also hash, phash, sort).\n");
        if (cfg->patch)
            fprintf(f, "patch: RXMesh-style patches (region growing + Lloyd) of about a quarter "
                       "of a batch, packed into batches within the same limits over their "
                       "adjacency.\n");
        if (cfg->meshlet)
            fprintf(f, "meshlet: meshopt_buildMeshlets within the same limits (at most 255 "
                       "vertices), one batch each.\n");
    } else {
        if (cfg->warp)
            fprintf(f, "warp: static batches of %u indices, %u-lane warp voting (Algorithm 1).\n",
                    cfg->warp_batch, cfg->warp_size);
        if (cfg->dynamic)
            fprintf(f,
                    "dyn: dynamic batches of <= %u distinct vertices and <= %u indices (also "
                    "hash, phash, sort).\n",
                    cfg->dyn_max_unique, cfg->dyn_max_indices);
        if (cfg->patch)
            fprintf(f,
                    "patch: RXMesh-style patches (region growing + Lloyd) of about a quarter of "
                    "a batch, packed over their adjacency\ninto batches of <= %u vertices (owned "
                    "+ ribbon) and <= %u indices; built from the mesh, so any order gives about "
                    "the same.\n",
                    cfg->dyn_max_unique, cfg->dyn_max_indices / 3 * 3);
        if (cfg->meshlet) {
            uint32_t mv, mt;
            vr_meshlet_limits(&mv, &mt, cfg->dyn_max_unique, cfg->dyn_max_indices / 3 * 3);
            fprintf(f, "meshlet: meshopt_buildMeshlets, <= %u vertices and <= %u triangles per "
                       "meshlet, one batch each.\n", mv, mt);
        }
    }
    if ((cfg->patch || cfg->meshlet) && count)
        print_plan_times(f, reports, count, cfg);
    print_passes(f, reports, count, cfg);

    /* The sweep: one row per scene x order x policy, one column per cache size. */
    uint32_t sizes[2 * VR_SIM_MAX_CACHES];
    uint32_t size_count = sweep_sizes(sizes, cfg);
    if (size_count == 0 || count == 0)
        return;
    if (!table_init(&t, 3 + size_count, 3, 2 * count + 1)) {
        fprintf(f, "sim: out of memory formatting the table\n");
        return;
    }
    strcpy(table_cell(&t, 0, 0), "scene");
    strcpy(table_cell(&t, 0, 1), "order");
    strcpy(table_cell(&t, 0, 2), "cache");
    for (uint32_t j = 0; j < size_count; ++j)
        snprintf(table_cell(&t, 0, 3 + j), CELL, "%u", sizes[j]);
    uint32_t row = 1;
    for (uint32_t r = 0; r < count; ++r)
        for (int l = 0; l < 2; ++l) {
            const uint32_t *list = l ? cfg->lru_sizes : cfg->fifo_sizes;
            uint32_t n = l ? cfg->lru_count : cfg->fifo_count;
            const vr_sim_result *res = l ? reports[r].lru : reports[r].fifo;
            if (n == 0)
                continue;
            snprintf(table_cell(&t, row, 0), CELL, "%s", reports[r].scene);
            snprintf(table_cell(&t, row, 1), CELL, "%s", reports[r].order);
            strcpy(table_cell(&t, row, 2), l ? "lru" : "fifo");
            for (uint32_t j = 0; j < size_count; ++j) {
                char *cell = table_cell(&t, row, 3 + j);
                strcpy(cell, "-");
                for (uint32_t i = 0; i < n; ++i)
                    if (list[i] == sizes[j])
                        reuse_cell(cell, res[i].reuse);
            }
            ++row;
        }
    fprintf(f, "\npost-transform cache reuse by size (entries = vertices; FIFO: hits do not "
               "reorder):\n");
    table_print(f, &t);
    free(t.cell);
}

/* --- CSV ------------------------------------------------------------------------------------ */

/* CSV text cells: quoted when they hold a comma, quote or newline. */
static void csv_text(FILE *f, const char *s)
{
    if (!strpbrk(s, ",\"\n\r")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; ++s) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

static void csv_row(FILE *f, const vr_sim_report *p, const char *strategy, uint32_t size,
                    const char *unit, const vr_sim_result *r)
{
    csv_text(f, p->scene);
    fputc(',', f);
    csv_text(f, p->order);
    fprintf(f, ",%u,%llu,%llu,%s,%u,%s,%llu,%.6f,%.6f,%llu\n", p->referenced_vertices,
            (unsigned long long)p->triangles, (unsigned long long)p->indices, strategy, size,
            unit, (unsigned long long)r->shaded_vertices, r->shaded_per_tri, r->reuse,
            (unsigned long long)r->passes);
}

vr_status vr_sim_write_csv(FILE *f, const vr_sim_report *reports, uint32_t count,
                           const vr_sim_config *cfg)
{
    assert(f != NULL && cfg != NULL && (reports != NULL || count == 0));
    fprintf(f, "# vreuse sim: reuse = 1 - shaded_vertices / indices; verts = referenced vertices\n");
    fprintf(f, "# pc: per-multiprocessor LRU, %u multiprocessors, %u concurrent invocations, "
               "%u bytes/vertex; pc = contiguous, pc_rr = roundrobin assignment\n",
            cfg->sm_count, cfg->wave_size, cfg->vertex_bytes);
    if (limits_uniform(reports, count, cfg)) {
        fprintf(f, "# warp: batch %u indices, warp %u lanes; dyn/hash/phash/sort: <= %u unique, "
                   "<= %u indices per batch\n",
                cfg->warp_batch, cfg->warp_size, cfg->dyn_max_unique, cfg->dyn_max_indices);
        if (cfg->patch || cfg->meshlet)
            fprintf(f, "# patch/meshlet: static plans (patches, meshoptimizer meshlets) of <= %u "
                       "unique, <= %u indices per batch\n",
                    cfg->dyn_max_unique, cfg->dyn_max_indices / 3 * 3);
    } else {
        fprintf(f, "# warp: warp %u lanes; batch limits per scene and order (--limits auto; the "
                   "size column of dyn/hash/phash/sort/patch/meshlet rows is N_u):\n",
                cfg->warp_size);
        print_limits(f, reports, count, "# limits: ");
    }
    fprintf(f, "# passes: 32-lane shading passes (warp: its rounds), each costing the same full or "
               "not under a compute-bound shader; 0 for the caches\n");
    fprintf(f, "scene,order,verts,tris,indices,strategy,size,size_unit,shaded_vertices,"
               "shaded_per_tri,reuse,passes\n");
    for (uint32_t r = 0; r < count; ++r) {
        const vr_sim_report *p = &reports[r];
        csv_row(f, p, "ideal", 0, "", &p->ideal);
        csv_row(f, p, "naive", 0, "", &p->naive);
        csv_row(f, p, "multi", 0, "", &p->multi);
        for (uint32_t i = 0; i < cfg->fifo_count; ++i)
            csv_row(f, p, "fifo", cfg->fifo_sizes[i], "entries", &p->fifo[i]);
        for (uint32_t i = 0; i < cfg->lru_count; ++i)
            csv_row(f, p, "lru", cfg->lru_sizes[i], "entries", &p->lru[i]);
        for (uint32_t a = 0; a < VR_SIM_ASSIGN_COUNT; ++a)
            if (cfg->assign_mask & (1u << a))
                for (uint32_t i = 0; i < cfg->parallel_count; ++i)
                    csv_row(f, p, a == VR_SIM_ROUNDROBIN ? "pc_rr" : "pc",
                            cfg->parallel_bytes[i], "bytes", &p->parallel[a][i]);
        if (cfg->warp)
            csv_row(f, p, "warp", p->warp_batch, "indices", &p->warp);
        if (cfg->dynamic) {
            /* hash, phash and sort shade exactly the dynamic batches' distinct vertices; the
             * rows carry their names so bench CSVs join on (scene, strategy). */
            static const char *const dyn_names[] = {"dyn", "hash", "phash", "sort"};
            for (int k = 0; k < 4; ++k)
                csv_row(f, p, dyn_names[k], p->dyn_max_unique, "vertices", &p->dynamic);
        }
        if (cfg->patch)
            csv_row(f, p, "patch", p->dyn_max_unique, "vertices", &p->patch);
        if (cfg->meshlet)
            csv_row(f, p, "meshlet", p->dyn_max_unique, "vertices", &p->meshlet);
    }
    fflush(f);
    if (ferror(f))
        return VR_ERROR(VR_ERR_IO, "writing the CSV failed: %s", strerror(errno ? errno : EIO));
    return VR_OK;
}

/* --- JSON ----------------------------------------------------------------------------------- */

static void json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; ++s) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            fprintf(f, "\\%c", ch);
        else if (ch < 0x20)
            fprintf(f, "\\u%04x", ch);
        else
            fputc(ch, f);
    }
    fputc('"', f);
}

static void json_result(FILE *f, const vr_sim_result *r)
{
    fprintf(f, "\"shaded_vertices\": %llu, \"batches\": %llu, \"shaded_per_tri\": %.6f, "
               "\"reuse\": %.6f, \"passes\": %llu",
            (unsigned long long)r->shaded_vertices, (unsigned long long)r->batches,
            r->shaded_per_tri, r->reuse, (unsigned long long)r->passes);
}

static void json_sweep(FILE *f, const char *name, const uint32_t *sizes, uint32_t n,
                       const vr_sim_result *res)
{
    fprintf(f, ",\n      \"%s\": [", name);
    for (uint32_t i = 0; i < n; ++i) {
        fprintf(f, "%s\n        {\"entries\": %u, ", i ? "," : "", sizes[i]);
        json_result(f, &res[i]);
        fputc('}', f);
    }
    fprintf(f, "%s]", n ? "\n      " : "");
}

vr_status vr_sim_write_json(FILE *f, const vr_sim_report *reports, uint32_t count,
                            const vr_sim_config *cfg)
{
    assert(f != NULL && cfg != NULL && (reports != NULL || count == 0));
    const int uniform = limits_uniform(reports, count, cfg);
    fprintf(f, "{\n  \"config\": {\"sm_count\": %u, \"wave_size\": %u, \"vertex_bytes\": %u, "
               "\"warp_batch\": %u, \"warp_size\": %u, \"dyn_max_unique\": %u, "
               "\"dyn_max_indices\": %u,%s\n    \"reuse\": \"1 - shaded_vertices / indices\", "
               "\"vertex_identity\": \"as loaded: OBJ corners joined, UV seams split\"},\n"
               "  \"results\": [",
            cfg->sm_count, cfg->wave_size, cfg->vertex_bytes, cfg->warp_batch, cfg->warp_size,
            cfg->dyn_max_unique, cfg->dyn_max_indices,
            uniform ? "" : " \"limits\": \"per result (--limits auto)\",");
    for (uint32_t r = 0; r < count; ++r) {
        const vr_sim_report *p = &reports[r];
        fprintf(f, "%s\n    {\"scene\": ", r ? "," : "");
        json_string(f, p->scene);
        fprintf(f, ", \"order\": ");
        json_string(f, p->order);
        fprintf(f, ", \"vertex_count\": %u, \"referenced_vertices\": %u, \"triangles\": %llu, "
                   "\"indices\": %llu, \"seconds\": %.3f, \"order_seconds\": %.3f",
                p->vertex_count, p->referenced_vertices, (unsigned long long)p->triangles,
                (unsigned long long)p->indices, p->seconds, p->order_seconds);
        if (!uniform)
            fprintf(f, ", \"warp_batch\": %u, \"dyn_max_unique\": %u, \"dyn_max_indices\": %u",
                    p->warp_batch, p->dyn_max_unique, p->dyn_max_indices);
        /* plan_seconds < 0: not a plan */
        const struct { const char *name; const vr_sim_result *r; int on; double plan_seconds; }
            single[] = {{"ideal", &p->ideal, 1, -1},
                        {"naive", &p->naive, 1, -1},
                        {"multi", &p->multi, 1, -1},
                        {"warp", &p->warp, cfg->warp, -1},
                        {"dyn", &p->dynamic, cfg->dynamic, -1},
                        {"patch", &p->patch, cfg->patch, p->patch_seconds},
                        {"meshlet", &p->meshlet, cfg->meshlet, p->meshlet_seconds}};
        for (size_t k = 0; k < sizeof single / sizeof single[0]; ++k)
            if (single[k].on) {
                fprintf(f, ",\n      \"%s\": {", single[k].name);
                json_result(f, single[k].r);
                if (single[k].plan_seconds >= 0)
                    fprintf(f, ", \"plan_seconds\": %.3f", single[k].plan_seconds);
                fputc('}', f);
            }
        fprintf(f, ",\n      \"parallel\": [");
        int first = 1;
        for (uint32_t a = 0; a < VR_SIM_ASSIGN_COUNT; ++a)
            if (cfg->assign_mask & (1u << a))
                for (uint32_t i = 0; i < cfg->parallel_count; ++i) {
                    fprintf(f, "%s\n        {\"assign\": \"%s\", \"bytes\": %u, \"entries\": %u, ",
                            first ? "" : ",", vr_sim_assign_name((vr_sim_assign)a),
                            cfg->parallel_bytes[i], cfg->parallel_bytes[i] / cfg->vertex_bytes);
                    json_result(f, &p->parallel[a][i]);
                    fputc('}', f);
                    first = 0;
                }
        fprintf(f, "%s]", first ? "" : "\n      ");
        json_sweep(f, "fifo", cfg->fifo_sizes, cfg->fifo_count, p->fifo);
        json_sweep(f, "lru", cfg->lru_sizes, cfg->lru_count, p->lru);
        fputc('}', f);
    }
    fprintf(f, "%s]\n}\n", count ? "\n  " : "");
    fflush(f);
    if (ferror(f))
        return VR_ERROR(VR_ERR_IO, "writing the JSON failed: %s", strerror(errno ? errno : EIO));
    return VR_OK;
}
