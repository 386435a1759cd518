/* info_cmd.c - `vreuse info SCENE... [--order LIST] [--seed S] [--csv FILE]`: what the loader made of
 * each scene: draws, vertices, referenced vertices, triangles, degenerates, ideal reuse
 * (1 - referenced / indices: every vertex shaded once), bounding box and load time.
 * Try: `vreuse info ../shared/scenes/igea.ply sphere:7M --csv -`.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include "pipeline/cli/cli.h"
#include "pipeline/cli/commands.h"
#include "pipeline/gts/gts.h"
#include "scenes/scene.h"

#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* One scene in one order: a text block, or a CSV row. A compressed mesh (.gts from `vreuse
 * compress`) shows its Table 3 rows as text, once; as CSV it is a scene like any other. */
static int info_one(const char *spec, int order, uint64_t seed, FILE *csv, int first_order)
{
    if (!csv && vr_gts_is_file(spec)) {
        if (first_order && vr_gts_print_info(stdout, spec) != VR_OK)
            return vr_cli_fail_last("info");
        return 0;
    }
    double t0 = vr_now_ms();
    vr_scene scene;
    vr_status s = vr_scene_load(&scene, spec);
    double load_ms = vr_now_ms() - t0;
    if (s)
        return vr_cli_fail_last("info");
    vr_mesh mesh;
    s = vr_scene_flatten(&mesh, &scene);
    double reorder_ms = 0;
    if (!s && order != VR_ORDER_FILE) {
        double t1 = vr_now_ms();
        s = vr_mesh_reorder(&mesh, (vr_order)order, seed);
        reorder_ms = vr_now_ms() - t1;
    }
    if (s) {
        vr_mesh_free(&mesh);
        vr_scene_free(&scene);
        return vr_cli_fail_last("info");
    }
    vr_mesh_counts c;
    if (vr_mesh_count(&c, &mesh) != VR_OK) {
        vr_mesh_free(&mesh);
        vr_scene_free(&scene);
        return vr_cli_fail_last("info");
    }
    float lo[3] = {FLT_MAX, FLT_MAX, FLT_MAX}, hi[3] = {-FLT_MAX, -FLT_MAX, -FLT_MAX};
    for (size_t v = 0; v < mesh.vertex_count; ++v)
        for (int k = 0; k < 3; ++k) {
            float p = mesh.positions[3 * v + k];
            lo[k] = p < lo[k] ? p : lo[k];
            hi[k] = p > hi[k] ? p : hi[k];
        }
    double reuse = 1.0 - (double)c.referenced_vertices / (double)(3 * c.triangles);
    int uv = mesh.texcoords != NULL;
    if (csv) {
        vr_cli_csv_field(csv, scene.source);
        fprintf(csv, ",%u,%llu,%llu,%llu,%llu,%.4f,%g,%g,%g,%g,%g,%g,%d,%s,%.1f,%.1f,%llu\n",
               scene.draw_count, (unsigned long long)c.vertices,
               (unsigned long long)c.referenced_vertices, (unsigned long long)c.triangles,
               (unsigned long long)c.degenerate_triangles, reuse, lo[0], lo[1], lo[2], hi[0], hi[1],
               hi[2], uv, vr_order_name((vr_order)order), load_ms, reorder_ms,
               (unsigned long long)scene.repaired);
    } else {
        char b[32];
        printf("%s\n", scene.source);
        printf("  draws            %u\n", scene.draw_count);
        printf("  vertices         %s\n", vr_format_count(b, c.vertices));
        printf("  referenced       %s\n", vr_format_count(b, c.referenced_vertices));
        printf("  triangles        %s\n", vr_format_count(b, c.triangles));
        printf("  degenerate       %s\n", vr_format_count(b, c.degenerate_triangles));
        printf("  ideal reuse      %.4f  (1 - referenced / indices)\n", reuse);
        printf("  texcoords        %s\n", uv ? "yes" : "no");
        if (scene.repaired)
            printf("  repaired         %s (--accept-repairs: %s)\n",
                   vr_format_count(b, scene.repaired), scene.repair_note);
        printf("  bbox             (%g, %g, %g) .. (%g, %g, %g)\n", lo[0], lo[1], lo[2], hi[0], hi[1],
               hi[2]);
        printf("  load             %.1f ms\n", load_ms);
        if (order != VR_ORDER_FILE)
            printf("  order            %s (%.1f ms)\n", vr_order_name((vr_order)order), reorder_ms);
    }
    vr_mesh_free(&mesh);
    vr_scene_free(&scene);
    return 0;
}

static const vr_cli_command g_cmd = {
    "info", "SCENE...",
    "Loads each scene and prints its counts: draws, vertices, referenced vertices,\n"
    "triangles, degenerate triangles (a repeated index), ideal reuse (1 - referenced /\n"
    "indices, i.e. every referenced vertex shaded exactly once), bounding box, load time.\n"
    "On a .gts file from `vreuse compress`: the compressed stream's bits per triangle.\n"
    "\n"
    "SCENE is a file (OBJ, PLY incl. tristrips, glTF 2.0, FBX, ...) or a generator:\n"
    "sphere[:N], terrain[:N], foliage[:N]; append @N to subdivide to at least N triangles\n"
    "(bunny.obj@7M, sphere:82k@1M).",
    NULL,
    VR_CLI_SCENES};

int vr_cmd_info(int argc, char **argv)
{
    vr_cli_orders orders = {{VR_ORDER_FILE}, 1};
    uint64_t seed = 1;
    const char *csv = NULL;
    const vr_cli_opt opts[] = {
        VR_CLI_ORDER(&orders, "file; counts do not change, the reorder time is reported"),
        VR_CLI_SEED(&seed),
        {"csv", 0, "FILE", "one CSV row per scene and order instead of the text blocks, to FILE "
         "('-': standard output)", vr_cli_parse_path, &csv, 0, 0, 0, 0, NULL},
        {0}};
    vr_cli_args args;
    VR_CLI_PARSE_OR_RETURN(&g_cmd, opts, argc, argv, &args);
    vr_cli_out out;
    memset(&out, 0, sizeof out);
    if (csv && vr_cli_out_open(&out, csv, "CSV", 0) != VR_OK)
        return vr_cli_fail_last("info");
    if (csv)
        fprintf(out.f, "source,draws,vertices,referenced_vertices,triangles,degenerate_triangles,"
                "ideal_reuse,min_x,min_y,min_z,max_x,max_y,max_z,texcoords,order,load_ms,"
                "reorder_ms,repaired\n");
    int rc = 0;
    for (int i = 0; i < args.count; ++i)
        for (int o = 0; o < orders.count; ++o)
            if (info_one(args.v[i], orders.v[o], seed, csv ? out.f : NULL, o == 0))
                rc = 1;
    if (csv && vr_cli_out_close(&out) != VR_OK)
        rc = vr_cli_fail_last("info");
    return rc;
}
