/* compress_cmd.c - `vreuse compress SCENE [-o F] [--restart r|deg|both]`: compresses a scene's
 * index buffer into generalized triangle strips (pipeline/gts.h, Meyer et al. 2012), checks
 * the CPU decoders against the encoder's triangle list, prints the per-stage bits per triangle
 * (the paper's Table 3 rows) and writes the file. `--bench-decode` times the GPU decoder:
 * one checked warm-up, then median/min over --reps, and the per-kernel breakdown (Table 4).
 * Try: `vreuse compress ../shared/scenes/igea.ply -o igea.gts`, `vreuse compress --bench-decode sphere:7M`.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */

#include "commands.h"
#include "geometry.h"
#include "gts.h"
#include "../scenes/scene.h"

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
            "                    triangles and the per-kernel breakdown (M_Scan ... U_Scan)\n"
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

/* Both CPU decoders must return the encoder's triangle list exactly. */
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
    free(got);
    return rc;
}

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
    float *total = malloc((size_t)reps * sizeof *total);
    float *stage = malloc((size_t)reps * VR_GTS_STAGE_COUNT * sizeof *stage);
    int rc = 1;
    if (!got || !total || !stage) {
        fprintf(stderr, "vreuse compress: out of memory for the benchmark\n");
        goto done;
    }
    /* warm-up, checked before anything is timed */
    memset(got, 0xff, words * sizeof *got);
    if ((s = vr_gts_gpu_decode(d, NULL, 0)) || (s = vr_gts_gpu_download(got, d))) {
        fprintf(stderr, "vreuse compress --bench-decode: %s\n", vr_last_error());
        goto done;
    }
    if (memcmp(got, map->indices, words * sizeof *got)) {
        size_t k = 0;
        while (got[k] == map->indices[k])
            ++k;
        fprintf(stderr, "vreuse compress --bench-decode: %s: FAIL: GPU index %zu (triangle %zu) "
                "is %u, the encoder wrote %u\n", spec, k, k / 3, got[k], map->indices[k]);
        goto done;
    }
    vr_gts_gpu_timing t;
    for (int r = 0; r < reps; ++r) {
        if ((s = vr_gts_gpu_decode(d, &t, 0))) {
            fprintf(stderr, "vreuse compress --bench-decode: %s\n", vr_last_error());
            goto done;
        }
        total[r] = t.total_ms;
    }
    for (int r = 0; r < reps; ++r) {
        if ((s = vr_gts_gpu_decode(d, &t, 1))) {
            fprintf(stderr, "vreuse compress --bench-decode: %s\n", vr_last_error());
            goto done;
        }
        for (int k = 0; k < VR_GTS_STAGE_COUNT; ++k)
            stage[k * reps + r] = t.stage_ms[k];
    }
    const float med = median(total, reps), min = total[0];
    printf("gpu decode %s (%s): %u source triangles, %u in strips, %s\n", spec,
           g->restart == VR_GTS_RESTART_CODE ? "R" : "deg.", g->triangle_count,
           g->strip_triangle_count, vr_gpu_device_name());
    printf("  total      ms_med %.4f  ms_min %.4f  %.2f Gtri/s (source triangles / median), "
           "%d reps, one event pair around all passes\n", med, min,
           g->triangle_count / (med * 1e-3) * 1e-9, reps);
    float sum = 0, meds[VR_GTS_STAGE_COUNT];
    for (int k = 0; k < VR_GTS_STAGE_COUNT; ++k)
        sum += meds[k] = median(stage + k * reps, reps);
    printf("  stage        ms_med    pct   (events between stages; Table 4 rows)\n");
    static const char *const group[VR_GTS_STAGE_COUNT] = {"strips", "strips", "strips", "inc.",
                                                          "inc.", "S-9", "S-9", "S-9"};
    for (int k = 0; k < VR_GTS_STAGE_COUNT; ++k)
        printf("  %-7s %-10s %7.4f  %4.1f%%\n", group[k], vr_gts_stage_name((vr_gts_stage)k),
               meds[k], sum > 0 ? 100.0 * meds[k] / sum : 0.0);
    printf("  sum of stage medians %.4f ms\n", sum);
    rc = 0;
done:
    free(got);
    free(total);
    free(stage);
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
