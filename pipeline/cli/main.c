/* main.c - `vreuse`, the one command users run: one table of subcommands from which the
 * dispatch and `vreuse --help` are made. Without a command it runs `vreuse tour` on the
 * embedded default scene (an 81,920-triangle sphere): what the project is for, in one screen.
 * Try: `vreuse`, `vreuse --help`, `vreuse help sim`.
 */
#include "pipeline/cli/cli.h"
#include "pipeline/cli/commands.h"
#include "pipeline/vreuse.h"

#include <stdio.h>
#include <string.h>

typedef struct command {
    const char *name;
    const char *operands; /* after the name in the list: "SCENE...", "[SCENE]" */
    const char *summary;  /* one line */
    int (*run)(int argc, char **argv); /* argv[0] == name */
} command;

static const command g_commands[] = {
    {"tour", "[SCENE]", "every strategy side by side: reuse, = sim check, time; a heatmap PNG",
     vr_cmd_tour},
    {"info", "SCENE...", "counts: vertices, referenced vertices, triangles, degenerates",
     vr_cmd_info},
    {"sim", "SCENE...", "CPU simulation of post-transform caches and batching strategies",
     vr_cmd_sim},
    {"bench", "SCENE...", "GPU geometry stage: time every strategy and shader load", vr_cmd_bench},
    {"compress", "SCENE -o F", "generalized-triangle-strip index compression (--bench-decode)",
     vr_cmd_compress},
    {"export", "SCENE -o F", "the scene as vreuse sees it (order, @N) as .obj, .ply, .glb or .gts",
     vr_cmd_export},
    {"bench-gts", "SCENE...", "GPU stage fed from compressed indices: decode + stage vs plain",
     vr_cmd_bench_gts},
    {"bench-compact", "", "GPU stream compaction: in-kernel, HistoPyramid, CUB, scan",
     vr_cmd_bench_compact},
    {"dice", "SCENE", "the paper's Dicer: surface voxels of an N^3 volume as a point cloud (PLY)",
     vr_cmd_dice},
    {"apply", "APP [SCENE]", "Section 5: subdivide, envelope, walk through every strategy",
     vr_cmd_apply},
    {"render", "SCENE ...", "rasterize to PNG: shaded, --heatmap (shading counts), --batches",
     vr_cmd_render},
#ifdef VR_HAVE_SDL2
    {"view", "[SCENE]", "SDL2 viewer: orbit, switch strategy, load and heatmap", vr_cmd_view},
#endif
    {"plot-bench", "CSV", "bench CSV -> SVG: time relative to naive (paper Figure 9)",
     vr_cmd_plot_bench},
};
#define COMMAND_COUNT (sizeof g_commands / sizeof g_commands[0])

static void usage(FILE *f)
{
    fprintf(f, "usage: vreuse COMMAND [options]   (vreuse COMMAND --help or vreuse help COMMAND "
               "for details)\n\ncommands:\n");
    for (size_t i = 0; i < COMMAND_COUNT; ++i) {
        char head[64];
        snprintf(head, sizeof head, "%s %s", g_commands[i].name, g_commands[i].operands);
        fprintf(f, "  %-20s %s\n", head, g_commands[i].summary);
    }
    fprintf(f,
            "\n"
            "SCENE is a file assimp reads (OBJ, PLY incl. tristrips, glTF 2.0, FBX, ...), a .gts\n"
            "file from `vreuse compress`, or a generator: sphere[:N], terrain[:N], foliage[:N]\n"
            "(N triangles, k/M suffix); append @N to subdivide to at least N triangles\n"
            "(bunny.obj@7M). Without a command, vreuse runs `vreuse tour` on the embedded default\n"
            "scene (sphere, 81,920 triangles).\n");
}

static const command *find(const char *name)
{
    for (size_t i = 0; i < COMMAND_COUNT; ++i)
        if (!strcmp(g_commands[i].name, name))
            return &g_commands[i];
    return NULL;
}

/* A command the table does not hold: view in a build without SDL2 (exit 1), or a typo (2). */
static int not_a_command(const char *name)
{
#ifndef VR_HAVE_SDL2
    if (!strcmp(name, "view"))
        return vr_cli_fail(1, "view", "built without SDL2 (install libsdl2-dev, configure with "
                                      "-DVR_VIEWER=ON and rebuild)");
#endif
    fprintf(stderr, "vreuse: unknown command '%s'\n\n", name);
    usage(stderr);
    return VR_CLI_USAGE;
}

static int run(int argc, char **argv)
{
    if (argc < 2) {
        char *args[] = {"tour", NULL};
        return vr_cmd_tour(1, args);
    }
    const char *name = argv[1];
    if (!strcmp(name, "-h") || !strcmp(name, "--help") || (!strcmp(name, "help") && argc == 2)) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(name, "help")) {
        /* `vreuse help CMD` is `vreuse CMD --help` */
        const command *c = find(argv[2]);
        if (!c)
            return not_a_command(argv[2]);
        char *args[] = {argv[2], "--help", NULL};
        return c->run(2, args);
    }
    const command *c = find(name);
    return c ? c->run(argc - 1, argv + 1) : not_a_command(name);
}

int main(int argc, char **argv)
{
    /* a failed write to stdout (a full disk, a closed pipe) fails the command */
    const char *name = argc > 2 && !strcmp(argv[1], "help") ? argv[2]
                       : argc > 1                           ? argv[1]
                                                            : "tour";
    return vr_cli_finish(name, run(argc, argv));
}
