/* main.c - `vreuse`, the one command users run: a thin dispatcher to the subcommands.
 * With no arguments it simulates the embedded default scene (an 82k-triangle sphere). */
#include "pipeline/cli/cli.h"
#include "pipeline/cli/commands.h"
#include "pipeline/vreuse.h"

#include <stdio.h>
#include <string.h>

static void usage(FILE *f)
{
    fprintf(f,
            "usage: vreuse COMMAND [options]   (vreuse COMMAND --help for details)\n"
            "\n"
            "commands:\n"
            "  info  SCENE...       counts: vertices, referenced vertices, triangles, degenerates\n"
            "  sim   SCENE...       CPU simulation of post-transform caches and batching strategies\n"
            "  bench SCENE...       GPU geometry stage: time every strategy and shader load\n"
            "  compress SCENE -o F  generalized-triangle-strip index compression (--bench-decode)\n"
            "  bench-gts SCENE...   GPU stage fed from compressed indices: decode + stage vs plain\n"
            "  render SCENE ...     rasterize to PNG: shaded, --heatmap (shading counts), --batches\n"
            "  view [SCENE]         SDL2 viewer: orbit, switch strategy, load and heatmap\n"
            "  plot-bench CSV       bench CSV -> SVG: time relative to naive (paper Figure 9)\n"
            "\n"
            "SCENE is a file assimp reads (OBJ, PLY incl. tristrips, glTF 2.0, FBX, ...) or a\n"
            "generator: sphere[:N], terrain[:N], foliage[:N] (N triangles, k/M suffix); append @N\n"
            "to subdivide to at least N triangles (bunny.obj@7M). Without a command, vreuse runs\n"
            "`vreuse sim sphere` on the embedded default scene (82k-triangle sphere).\n");
}

static int run(int argc, char **argv)
{
    if (argc < 2) {
        char *args[] = {"sim", "sphere", NULL};
        return vr_cmd_sim(2, args);
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(cmd, "info"))
        return vr_cmd_info(argc - 1, argv + 1);
    if (!strcmp(cmd, "sim"))
        return vr_cmd_sim(argc - 1, argv + 1);
    if (!strcmp(cmd, "bench"))
        return vr_cmd_bench(argc - 1, argv + 1);
    if (!strcmp(cmd, "bench-gts"))
        return vr_cmd_bench_gts(argc - 1, argv + 1);
    if (!strcmp(cmd, "compress"))
        return vr_cmd_compress(argc - 1, argv + 1);
    if (!strcmp(cmd, "render"))
        return vr_cmd_render(argc - 1, argv + 1);
    if (!strcmp(cmd, "view")) {
#ifdef VR_HAVE_SDL2
        return vr_cmd_view(argc - 1, argv + 1);
#else
        fprintf(stderr, "vreuse view: built without SDL2 (install libsdl2-dev, configure with -DVR_VIEWER=ON)\n");
        return 1;
#endif
    }
    if (!strcmp(cmd, "plot-bench"))
        return vr_cmd_plot_bench(argc - 1, argv + 1);
    fprintf(stderr, "vreuse: unknown command '%s'\n\n", cmd);
    usage(stderr);
    return 2;
}

int main(int argc, char **argv)
{
    /* a failed write to stdout (a full disk, a closed pipe) fails the command */
    return vr_cli_finish(argc > 1 ? argv[1] : "sim", run(argc, argv));
}
