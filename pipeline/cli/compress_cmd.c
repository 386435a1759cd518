/* compress_cmd.c - `vreuse compress SCENE [-o F] [--restart r,deg|all]`: compresses a scene's
 * index buffer into generalized triangle strips (pipeline/gts.h, Meyer et al. 2012), checks
 * the CPU decoders against the encoder's triangle list, prints the per-stage bits per triangle
 * (the paper's Table 3 rows) and writes the file. `--bench-decode` times the GPU decoder with
 * both V and strip passes (tiled, and the paper's for Table 4): one checked warm-up each, then
 * median/min over --reps and the per-kernel breakdown of the stages that ran.
 * Try: `vreuse compress ../shared/scenes/igea.ply -o igea.gts`, `vreuse compress --bench-decode sphere:7M`.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */

#include "pipeline/cli/cli.h"
#include "pipeline/cli/commands.h"
#include "pipeline/stage/geometry.h"
#include "pipeline/gts/gts.h"
#include "scenes/scene.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The CPU decoders (sequential, scan, tiled) must return the encoder's triangle list exactly. */
static int verify_cpu(const vr_gts *g, const vr_gts_map *map, const char *spec)
{
    const size_t words = 3 * (size_t)g->strip_triangle_count;
    uint32_t *got = malloc(words * sizeof *got);
    if (!got) {
        fprintf(stderr, "vreuse compress: out of memory for %zu decoded indices\n", words);
        return 1;
    }
    int rc = 0;
    vr_status s = vr_gts_decode_ref(got, g);
    if (s || memcmp(got, map->indices, words * sizeof *got)) {
        fprintf(stderr, "vreuse compress: %s: the CPU decoder does not return the encoder's "
                "triangles: %s\n", spec, s ? vr_last_error() : "indices differ");
        rc = 1;
    }
    s = rc ? VR_OK : vr_gts_decode_scan_ref(got, g);
    if (!rc && (s || memcmp(got, map->indices, words * sizeof *got))) {
        fprintf(stderr, "vreuse compress: %s: the scan-formulation decoder differs: %s\n", spec,
                s ? vr_last_error() : "indices differ");
        rc = 1;
    }
    s = rc ? VR_OK : vr_gts_decode_tiled_ref(got, g);
    if (!rc && (s || memcmp(got, map->indices, words * sizeof *got))) {
        fprintf(stderr, "vreuse compress: %s: the tiled-formulation decoder differs: %s\n", spec,
                s ? vr_last_error() : "indices differ");
        rc = 1;
    }
    free(got);
    return rc;
}

/* Decodes once with strip pass `pass` into `got` (poisoned first) and compares with the
 * encoder's list; prints FAIL and returns 1 on any difference. */
static int verify_gpu(vr_gts_gpu *d, vr_gts_strip_pass pass, uint32_t *got, const vr_gts_map *map,
                      size_t words, const char *spec, const char *pass_name)
{
    memset(got, 0xff, words * sizeof *got);
    vr_gts_gpu_set_strip_pass(d, pass);
    vr_status s = vr_gts_gpu_decode(d, NULL, 0);
    if (!s)
        s = vr_gts_gpu_download(got, d);
    if (s) {
        fprintf(stderr, "vreuse compress --bench-decode: %s (%s strip pass): %s\n", spec,
                pass_name, vr_last_error());
        return 1;
    }
    if (memcmp(got, map->indices, words * sizeof *got)) {
        size_t k = 0;
        while (got[k] == map->indices[k])
            ++k;
        fprintf(stderr, "vreuse compress --bench-decode: %s: FAIL (%s strip pass): GPU index %zu "
                "(triangle %zu) is %u, the encoder wrote %u\n", spec, pass_name, k, k / 3, got[k],
                map->indices[k]);
        return 1;
    }
    return 0;
}

/* `reps` whole-decode times into total[], then `reps` per-stage breakdowns into
 * stage[k * reps + r]; *ran = the stages the pass launches. */
static int time_pass(vr_gts_gpu *d, vr_gts_strip_pass pass, int reps, float *total, float *stage,
                     uint32_t *ran)
{
    vr_gts_gpu_timing t;
    vr_gts_gpu_set_strip_pass(d, pass);
    for (int r = 0; r < reps; ++r) {
        if (vr_gts_gpu_decode(d, &t, 0)) {
            fprintf(stderr, "vreuse compress --bench-decode: %s\n", vr_last_error());
            return 1;
        }
        total[r] = t.total_ms;
    }
    for (int r = 0; r < reps; ++r) {
        if (vr_gts_gpu_decode(d, &t, 1)) {
            fprintf(stderr, "vreuse compress --bench-decode: %s\n", vr_last_error());
            return 1;
        }
        for (int k = 0; k < VR_GTS_STAGE_COUNT; ++k)
            stage[k * reps + r] = t.stage_ms[k];
        *ran = t.stage_ran;
    }
    return 0;
}

/* The per-stage medians of the stages that ran, strip stages first (Table 4 row order). */
static void print_breakdown(float *stage, int reps, uint32_t ran, const char *title)
{
    static const vr_gts_stage rows[] = {
        VR_GTS_M_SCAN,       VR_GTS_Q_SCAN,     VR_GTS_T_KERNEL, VR_GTS_TILE_REDUCE,
        VR_GTS_TILE_SCAN,    VR_GTS_TILE_T,     VR_GTS_INC_SCAN, VR_GTS_V_KERNEL,
        VR_GTS_VTILE_REDUCE, VR_GTS_VTILE_SCAN, VR_GTS_V_TILED,  VR_GTS_S_SCAN,
        VR_GTS_D_SCATTER,    VR_GTS_U_SCAN};
    const size_t row_count = sizeof rows / sizeof rows[0];
    float sum = 0, meds[VR_GTS_STAGE_COUNT] = {0};
    for (size_t k = 0; k < row_count; ++k)
        if (ran & (1u << rows[k]))
            sum += meds[rows[k]] = vr_cli_median_float(stage + rows[k] * reps, reps);
    printf("  stage         ms_med    pct   (%s)\n", title);
    for (size_t k = 0; k < row_count; ++k) {
        const vr_gts_stage st = rows[k];
        if (!(ran & (1u << st)))
            continue;
        const char *group = st == VR_GTS_INC_SCAN || st == VR_GTS_V_KERNEL ||
                                    st == VR_GTS_VTILE_REDUCE || st == VR_GTS_VTILE_SCAN ||
                                    st == VR_GTS_V_TILED
                                ? "inc."
                            : st == VR_GTS_S_SCAN || st == VR_GTS_D_SCATTER || st == VR_GTS_U_SCAN
                                ? "S-9"
                                : "strips";
        printf("  %-7s %-12s %7.4f  %4.1f%%\n", group, vr_gts_stage_name(st), meds[st],
               sum > 0 ? 100.0 * meds[st] / sum : 0.0);
    }
    printf("  sum of stage medians %.4f ms\n", sum);
}

/* Both strip passes are checked against the encoder before anything is timed; the tiled pass
 * is the headline number, the paper's three passes give the Table 4 breakdown. */
static int bench_decode(const vr_gts *g, const vr_gts_map *map, const char *spec, int reps)
{
    vr_gts_gpu *d = NULL;
    vr_status s = vr_gts_gpu_create(&d, g);
    if (s) {
        fprintf(stderr, "vreuse compress --bench-decode: %s\n", vr_last_error());
        return 1;
    }
    const size_t words = 3 * (size_t)g->strip_triangle_count;
    uint32_t *got = malloc(words * sizeof *got);
    float *total[2] = {malloc((size_t)reps * sizeof(float)), malloc((size_t)reps * sizeof(float))};
    float *stage[2] = {malloc((size_t)reps * VR_GTS_STAGE_COUNT * sizeof(float)),
                       malloc((size_t)reps * VR_GTS_STAGE_COUNT * sizeof(float))};
    static const vr_gts_strip_pass passes[2] = {VR_GTS_STRIPS_TILED, VR_GTS_STRIPS_PAPER};
    static const char *const names[2] = {"tiled", "paper"};
    uint32_t ran[2] = {0, 0};
    int rc = 1;
    if (!got || !total[0] || !total[1] || !stage[0] || !stage[1]) {
        fprintf(stderr, "vreuse compress: out of memory for the benchmark\n");
        goto done;
    }
    /* warm-up of each pass, checked before anything is timed */
    for (int p = 0; p < 2; ++p)
        if (verify_gpu(d, passes[p], got, map, words, spec, names[p]))
            goto done;
    for (int p = 0; p < 2; ++p)
        if (time_pass(d, passes[p], reps, total[p], stage[p], &ran[p]))
            goto done;
    vr_gts_gpu_set_strip_pass(d, VR_GTS_STRIPS_TILED);
    printf("gpu decode %s (%s): %u source triangles, %u in strips, %s; both strip passes "
           "verified\n", spec, g->restart == VR_GTS_RESTART_CODE ? "R" : "deg.", g->triangle_count,
           g->strip_triangle_count, vr_gpu_device_name());
    for (int p = 0; p < 2; ++p) {
        const float med = vr_cli_median_float(total[p], reps), min = total[p][0];
        printf("  %-10s ms_med %.4f  ms_min %.4f  %.2f Gtri/s (source triangles / median), "
               "%d reps, one event pair around all passes%s\n",
               p ? "paper" : "total", med, min, g->triangle_count / (med * 1e-3) * 1e-9, reps,
               p ? "; INC_Scan, V_Kernel, M_Scan, Q_Scan, T_Kernel" : "; tiled V and strip passes");
    }
    print_breakdown(stage[0], reps, ran[0], "tiled V and strip passes; events between stages");
    print_breakdown(stage[1], reps, ran[1], "paper's passes, events between stages; Table 4 rows");
    rc = 0;
done:
    free(got);
    for (int p = 0; p < 2; ++p) {
        free(total[p]);
        free(stage[p]);
    }
    vr_gts_gpu_destroy(d);
    return rc;
}

/* vr_cli_write_via's writer: the encoded stream into the temporary it names. */
static vr_status write_gts(const char *file, void *ctx)
{
    return vr_gts_write((const vr_gts *)ctx, file);
}

static int compress_one(const vr_mesh *m, const char *spec, vr_gts_restart mode,
                        const vr_gts_options *base, const char *out, int bench, int reps)
{
    vr_gts_options opt = *base;
    opt.restart = mode;
    vr_gts g;
    vr_gts_map map;
    const double t0 = vr_now_ms();
    vr_status s = vr_gts_encode(&g, &map, m, &opt);
    const double encode_ms = vr_now_ms() - t0;
    if (s)
        return vr_cli_fail_last("compress");
    int rc = verify_cpu(&g, &map, spec);
    if (!rc) {
        vr_gts_print_stats(stdout, &g, spec);
        printf("  encode     %.1f ms (%.2f Mtri/s), CPU decoders verified exact\n", encode_ms,
               g.triangle_count / (encode_ms * 1e-3) * 1e-6);
    }
    if (!rc && out) {
        /* a temporary renamed into place: a failed write leaves the destination as it was */
        if (vr_cli_write_via(out, "GTS file", write_gts, &g) != VR_OK)
            rc = vr_cli_fail_last("compress");
        else
            printf("  wrote %s (%zu bytes)\n", out, vr_gts_file_bytes(&g));
    }
    if (!rc && bench)
        rc = bench_decode(&g, &map, spec, reps);
    vr_gts_free(&g);
    vr_gts_map_free(&map);
    return rc;
}

static const vr_cli_command g_cmd = {
    "compress", "SCENE",
    "Compresses the scene's triangles into generalized triangle strips (belts, strip codes,\n"
    "incremental vertices, Simple-9 deltas; Meyer et al. 2012), verifies that the CPU\n"
    "decoders return exactly the encoder's reordered triangles, and prints bits per triangle\n"
    "after each stage: explicit, strips, inc., S-9 (the paper's Table 3).\n"
    "\n"
    "SCENE is a file (OBJ, PLY, glTF 2.0, ...) or a generator: sphere[:N], terrain[:N],\n"
    "foliage[:N], optionally @N to subdivide (sphere:7M, bunny.obj@1M).",
    "A .gts file is a SCENE for every command: `vreuse info F.gts`, `vreuse render F.gts`.",
    VR_CLI_ONE_SCENE};

int vr_cmd_compress(int argc, char **argv)
{
    vr_gts_options opt = vr_gts_options_default();
    vr_cli_choices restarts = {{VR_GTS_RESTART_DEGENERATE}, 1};
    const char *out = NULL;
    int greedy = 0, no_vertex_data = 0, bench = 0, reps = 20;
    const vr_cli_opt opts[] = {
        VR_CLI_OUT(&out, "write the compressed file (vertex data included); read it back with "
                         "`vreuse info FILE`; one --restart mode"),
        VR_CLI_RESTART(&restarts, "deg"),
        {"greedy", 0, NULL, "the paper's greedy Simple-9 packing instead of the optimal one",
         NULL, &greedy, 1, 0, 0, 0, NULL},
        {"no-vertex-data", 0, NULL, "store connectivity only", NULL, &no_vertex_data, 1, 0, 0,
         0, NULL},
        {"bench-decode", 0, NULL,
         "time the GPU decoder (needs a CUDA device): Gtri/s of source triangles with the "
         "tiled V and strip passes and with the paper's INC_Scan, V_Kernel, M_Scan, Q_Scan, "
         "T_Kernel, median and minimum over --reps decodes and the per-kernel breakdown; "
         "both are checked against the encoder first",
         NULL, &bench, 1, 0, 0, 0, NULL},
        VR_CLI_REPS(&reps, "20"),
        {0}};
    vr_cli_args args;
    VR_CLI_PARSE_OR_RETURN(&g_cmd, opts, argc, argv, &args);
    if (out && restarts.count > 1)
        return vr_cli_fail(VR_CLI_USAGE, "compress",
                           "-o writes one file; pick one --restart mode (r or deg)");
    if (greedy)
        opt.packing = VR_GTS_PACK_GREEDY;
    if (no_vertex_data)
        opt.keep_vertex_data = 0;
    const char *spec = args.v[0]; /* an input: -o never writes over it */
    vr_mesh m;
    if (vr_mesh_load(&m, spec) != VR_OK)
        return vr_cli_fail_last("compress");
    int rc = 0;
    for (int i = 0; i < restarts.count && !rc; ++i)
        rc = compress_one(&m, spec, (vr_gts_restart)restarts.v[i], &opt, out, bench, reps);
    vr_mesh_free(&m);
    return rc;
}
