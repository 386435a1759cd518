/* compress_cmd.c - `vreuse compress SCENE [-o F] [--restart r|deg|both]`: compresses a scene's
 * index buffer into generalized triangle strips (pipeline/gts.h, Meyer et al. 2012), checks
 * the CPU decoders against the encoder's triangle list, prints the per-stage bits per triangle
 * (the paper's Table 3 rows) and writes the file. `--bench-decode` times the GPU decoder with
 * both V and strip passes (tiled, and the paper's for Table 4): one checked warm-up each, then
 * median/min over --reps and the per-kernel breakdown of the stages that ran.
 * Try: `vreuse compress ../shared/scenes/igea.ply -o igea.gts`, `vreuse compress --bench-decode sphere:7M`.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */

#include "pipeline/cli/commands.h"
#include "pipeline/stage/geometry.h"
#include "pipeline/gts/gts.h"
#include "scenes/scene.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define VR_COMPRESS_MAX_REPS 1000

static void usage(FILE *f)
{
    fprintf(f,
            "usage: vreuse compress SCENE [-o FILE] [--restart r|deg|both] [--greedy]\n"
            "                       [--no-vertex-data] [--bench-decode] [--reps N] [--quiet]\n"
            "\n"
            "Compresses the scene's triangles into generalized triangle strips (belts, strip\n"
            "codes, incremental vertices, Simple-9 deltas; Meyer et al. 2012), verifies that the\n"
            "CPU decoders return exactly the encoder's reordered triangles, and prints bits per\n"
            "triangle after each stage: explicit, strips, inc., S-9 (the paper's Table 3).\n"
            "\n"
            "  SCENE             a file assimp reads or a generator (sphere:7M, foliage:10k, ...)\n"
            "  -o FILE           write the compressed file (vertex data included); read it back\n"
            "                    with `vreuse info FILE`\n"
            "  --restart MODE    r: explicit restart codes (2-bit strip codes); deg: restarts\n"
            "                    emulated with degenerate triangles (1-bit codes, default); both\n"
            "  --greedy          the paper's greedy Simple-9 packing instead of the optimal one\n"
            "  --no-vertex-data  store connectivity only\n"
            "  --bench-decode    time the GPU decoder (needs a CUDA device): Gtri/s of source\n"
            "                    triangles with the tiled V and strip passes (default) and with\n"
            "                    the paper's INC_Scan, V_Kernel, M_Scan, Q_Scan, T_Kernel, each\n"
            "                    with its per-kernel breakdown; both are checked against the\n"
            "                    encoder first\n"
            "  --reps N          timed decodes for --bench-decode (default 20)\n"
            "  --quiet           no progress output\n");
}

static int cmp_float(const void *a, const void *b)
{
    const float x = *(const float *)a, y = *(const float *)b;
    return x < y ? -1 : x > y;
}

static float median(float *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_float);
    return n % 2 ? v[n / 2] : 0.5f * (v[n / 2 - 1] + v[n / 2]);
}

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
            sum += meds[rows[k]] = median(stage + rows[k] * reps, reps);
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
        const float med = median(total[p], reps), min = total[p][0];
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
    if (s) {
        fprintf(stderr, "vreuse compress: %s\n", vr_last_error());
        return 1;
    }
    int rc = verify_cpu(&g, &map, spec);
    if (!rc) {
        vr_gts_print_stats(stdout, &g, spec);
        printf("  encode     %.1f ms (%.2f Mtri/s), CPU decoders verified exact\n", encode_ms,
               g.triangle_count / (encode_ms * 1e-3) * 1e-6);
    }
    if (!rc && out) {
        if ((s = vr_gts_write(&g, out))) {
            fprintf(stderr, "vreuse compress: %s\n", vr_last_error());
            rc = 1;
        } else {
            printf("  wrote %s (%zu bytes)\n", out, vr_gts_file_bytes(&g));
        }
    }
    if (!rc && bench)
        rc = bench_decode(&g, &map, spec, reps);
    vr_gts_free(&g);
    vr_gts_map_free(&map);
    return rc;
}

int vr_cmd_compress(int argc, char **argv)
{
    const char *spec = NULL, *out = NULL;
    vr_gts_options opt = vr_gts_options_default();
    int modes = 1 << VR_GTS_RESTART_DEGENERATE, bench = 0, reps = 20;
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(a, "-o") && i + 1 < argc) {
            out = argv[++i];
        } else if (!strcmp(a, "--restart") && i + 1 < argc) {
            const char *r = argv[++i];
            if (!strcmp(r, "r") || !strcmp(r, "R") || !strcmp(r, "code"))
                modes = 1 << VR_GTS_RESTART_CODE;
            else if (!strcmp(r, "deg") || !strcmp(r, "degenerate"))
                modes = 1 << VR_GTS_RESTART_DEGENERATE;
            else if (!strcmp(r, "both"))
                modes = 3;
            else {
                fprintf(stderr, "vreuse compress: --restart takes r, deg or both, not '%s'\n", r);
                return 2;
            }
        } else if (!strcmp(a, "--greedy")) {
            opt.packing = VR_GTS_PACK_GREEDY;
        } else if (!strcmp(a, "--no-vertex-data")) {
            opt.keep_vertex_data = 0;
        } else if (!strcmp(a, "--bench-decode")) {
            bench = 1;
        } else if (!strcmp(a, "--reps") && i + 1 < argc) {
            char *end = NULL;
            const long v = strtol(argv[++i], &end, 10);
            if (*end || v < 1 || v > VR_COMPRESS_MAX_REPS) {
                fprintf(stderr, "vreuse compress: --reps takes 1..%d, not '%s'\n",
                        VR_COMPRESS_MAX_REPS, argv[i]);
                return 2;
            }
            reps = (int)v;
        } else if (!strcmp(a, "--quiet")) {
            vr_progress_quiet = 1;
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "vreuse compress: unknown or incomplete option '%s'\n\n", a);
            usage(stderr);
            return 2;
        } else if (!spec) {
            spec = a;
        } else {
            fprintf(stderr, "vreuse compress: one SCENE at a time ('%s' and '%s')\n", spec, a);
            return 2;
        }
    }
    if (!spec) {
        usage(stderr);
        return 2;
    }
    if (out && modes == 3) {
        fprintf(stderr, "vreuse compress: -o writes one file; pick --restart r or deg\n");
        return 2;
    }
    vr_mesh m;
    vr_status s = vr_mesh_load(&m, spec);
    if (s) {
        fprintf(stderr, "vreuse compress: %s\n", vr_last_error());
        return 1;
    }
    int rc = 0;
    for (int mode = 0; mode < 2 && !rc; ++mode)
        if (modes & (1 << mode))
            rc = compress_one(&m, spec, (vr_gts_restart)mode, &opt, out, bench, reps);
    vr_mesh_free(&m);
    return rc;
}
