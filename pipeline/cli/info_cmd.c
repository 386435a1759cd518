/* info_cmd.c - `vreuse info SCENE... [--order O] [--seed S] [--csv]`: what the loader made of
 * each scene: draws, vertices, referenced vertices, triangles, degenerates, ideal reuse
 * (1 - referenced / indices: every vertex shaded once), bounding box and load time.
 * Try: `vreuse info ../shared/scenes/igea.ply sphere:7M --csv`.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include "pipeline/cli/commands.h"
#include "pipeline/gts/gts.h"
#include "scenes/scene.h"

#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void usage(FILE *f)
{
    fprintf(f,
            "usage: vreuse info SCENE... [--order ORDER] [--seed S] [--csv] [--quiet]\n"
            "\n"
            "Loads each scene and prints its counts: draws, vertices, referenced vertices,\n"
            "triangles, degenerate triangles (a repeated index), ideal reuse (1 - referenced /\n"
            "indices, i.e. every referenced vertex shaded exactly once), bounding box, load time.\n"
            "\n"
            "  SCENE        a file (OBJ, PLY incl. tristrips, glTF 2.0, FBX, ...) or a generator:\n"
            "               sphere[:N], terrain[:N], foliage[:N]; append @N to subdivide to at\n"
            "               least N triangles (bunny.obj@7M, sphere:82k@1M)\n"
            "  --order O    reorder triangles after loading: file (default), forsyth, tipsify,\n"
            "               random (counts do not change; the reorder time is reported)\n"
            "  --seed S     seed of --order random (default 1)\n"
            "  --csv        one CSV row per scene instead of the text block\n"
            "  --quiet      no progress output\n");
}

static int info_one(const char *spec, int order, unsigned long long seed, int csv)
{
    if (vr_gts_is_file(spec)) { /* a compressed mesh from `vreuse compress`: its Table 3 rows */
        if (vr_gts_print_info(stdout, spec)) {
            fprintf(stderr, "vreuse info: %s\n", vr_last_error());
            return 1;
        }
        return 0;
    }
    double t0 = vr_now_ms();
    vr_scene scene;
    vr_status s = vr_scene_load(&scene, spec);
    double load_ms = vr_now_ms() - t0;
    if (s) {
        fprintf(stderr, "vreuse info: %s\n", vr_last_error());
        return 1;
    }
    vr_mesh mesh;
    s = vr_scene_flatten(&mesh, &scene);
    double reorder_ms = 0;
    if (!s && order != VR_ORDER_FILE) {
        double t1 = vr_now_ms();
        s = vr_mesh_reorder(&mesh, (vr_order)order, seed);
        reorder_ms = vr_now_ms() - t1;
    }
    if (s) {
        fprintf(stderr, "vreuse info: %s\n", vr_last_error());
        vr_mesh_free(&mesh);
        vr_scene_free(&scene);
        return 1;
    }
    vr_mesh_counts c;
    vr_mesh_count(&c, &mesh);
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
        printf("%s,%u,%llu,%llu,%llu,%llu,%.4f,%g,%g,%g,%g,%g,%g,%d,%s,%.1f,%.1f\n", scene.source,
               scene.draw_count, (unsigned long long)c.vertices,
               (unsigned long long)c.referenced_vertices, (unsigned long long)c.triangles,
               (unsigned long long)c.degenerate_triangles, reuse, lo[0], lo[1], lo[2], hi[0], hi[1],
               hi[2], uv, vr_order_name((vr_order)order), load_ms, reorder_ms);
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

int vr_cmd_info(int argc, char **argv)
{
    int order = VR_ORDER_FILE, csv = 0, scenes = 0;
    unsigned long long seed = 1;
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(a, "--csv")) {
            csv = 1;
        } else if (!strcmp(a, "--quiet")) {
            vr_progress_quiet = 1;
        } else if (!strcmp(a, "--order") || !strcmp(a, "--seed")) {
            if (i + 1 >= argc) {
                fprintf(stderr, "vreuse info: %s needs a value\n", a);
                return 2;
            }
            const char *v = argv[++i];
            if (!strcmp(a, "--order")) {
                order = vr_order_parse(v);
                if (order < 0) {
                    fprintf(stderr, "vreuse info: unknown order '%s' (file, forsyth, tipsify, random)\n", v);
                    return 2;
                }
            } else {
                char *end = NULL;
                seed = strtoull(v, &end, 0);
                if (!*v || *end) {
                    fprintf(stderr, "vreuse info: bad seed '%s'\n", v);
                    return 2;
                }
            }
        } else if (a[0] == '-' && a[1] != 0) {
            fprintf(stderr, "vreuse info: unknown option '%s'\n", a);
            usage(stderr);
            return 2;
        } else {
            ++scenes;
        }
    }
    if (scenes == 0) {
        fprintf(stderr, "vreuse info: no scene given\n");
        usage(stderr);
        return 2;
    }
    if (csv)
        printf("source,draws,vertices,referenced_vertices,triangles,degenerate_triangles,ideal_reuse,"
               "min_x,min_y,min_z,max_x,max_y,max_z,texcoords,order,load_ms,reorder_ms\n");
    int rc = 0;
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
        if (!strcmp(a, "--order") || !strcmp(a, "--seed")) {
            ++i;
            continue;
        }
        if (a[0] == '-' && a[1] != 0)
            continue;
        if (info_one(a, order, seed, csv))
            rc = 1;
    }
    return rc;
}
