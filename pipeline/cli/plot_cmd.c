/* plot_cmd.c - `vreuse plot-bench BENCH.csv -o F.svg`: the bench CSV as a Figure-9-style SVG
 * (Kenzel et al. 2018, Section 4.2): per scene (and order) and shader load, each strategy's time
 * relative to naive. Options and the safe output only; the figure is drawn by bench/plot.c.
 * Try: `vreuse plot-bench bench/results/geometry-h100.csv -o fig9.svg`.
 */
#include "pipeline/cli/cli.h"
#include "pipeline/cli/commands.h"
#include "bench/plot.h"

#include <stdlib.h>
#include <string.h>

#define SCENE_NAME 256 /* longest --scene item */

typedef struct scene_list {
    char name[VR_CLI_MAX_LIST][SCENE_NAME];
    const char *v[VR_CLI_MAX_LIST]; /* pointers into name, for vr_plot_options.scenes */
    int count;
} scene_list;

/* --scene LIST: names as the CSV's scene column or its last path component, each once. */
static vr_status parse_scenes(const vr_cli_opt *o, const char *v)
{
    scene_list *dst = (scene_list *)o->dst;
    const int n = vr_cli_split(v, &dst->name[0][0], SCENE_NAME, VR_CLI_MAX_LIST);
    if (n < 0)
        return VR_ERR_ARG;
    for (int i = 0; i < n; ++i) {
        for (int k = 0; k < i; ++k)
            if (!strcmp(dst->name[k], dst->name[i]))
                return vr_set_error(VR_ERR_ARG, "scene '%s' is listed twice", dst->name[i]);
        dst->v[i] = dst->name[i];
    }
    dst->count = n;
    return VR_OK;
}

/* --block best|N */
static vr_status parse_block(const vr_cli_opt *o, const char *v)
{
    if (!strcmp(v, "best")) {
        *(uint32_t *)o->dst = 0;
        return VR_OK;
    }
    if (vr_cli_parse_u32(o, v) != VR_OK)
        return vr_set_error(VR_ERR_ARG, "want best or a thread count in %.0f..%.0f", o->lo, o->hi);
    return VR_OK;
}

typedef struct plot_job {
    const char *csv;
    const vr_plot_options *opt;
} plot_job;

static vr_status write_plot(const char *file, void *ctx)
{
    const plot_job *j = (const plot_job *)ctx;
    return vr_bench_plot_fig9(j->csv, file, j->opt);
}

static const vr_cli_command g_cmd = {
    "plot-bench", "BENCH.csv -o F.svg",
    "Draws the CSV of `vreuse bench --csv` like Figure 9 of Kenzel et al. 2018: one panel\n"
    "per scene (per scene and order when the CSV has an order column), one bar group per\n"
    "shader load (in CSV order), one bar per strategy giving its median kernel time relative\n"
    "to naive's (naive = 1, dashed line). A black tick on each bar marks 1/bound, the\n"
    "relative time if shading were all that cost; naive's absolute time is printed under\n"
    "each group. Rows whose status is not ok are skipped with a warning.",
    "Exit status: 0 written, 1 unreadable or unusable CSV (or a failed write), 2 usage error.",
    VR_CLI_OPERANDS_OWN};

int vr_cmd_plot_bench(int argc, char **argv)
{
    vr_plot_options opt = vr_plot_options_default();
    const char *out = NULL;
    static scene_list scenes;
    memset(&scenes, 0, sizeof scenes);
    const vr_cli_opt opts[] = {
        VR_CLI_OUT(&out, "the SVG file (required)"),
        {"scene", 0, "LIST",
         "scenes to plot, comma separated, by their CSV name or last path component "
         "(stanford-bunny.obj@7M), in panel order (default: every scene, in CSV order)",
         parse_scenes, &scenes, 0, 0, 0, 0, NULL},
        {"block", 0, "best|N",
         "best (default): each strategy at its fastest block size, as the paper reports; N: "
         "every strategy at N threads per block",
         parse_block, &opt.block, 0, VR_BLOCK_MIN, VR_BLOCK_MAX, 0, NULL},
        {"title", 0, "T", "headline (default: Vertex processing time relative to naive)",
         vr_cli_parse_string, &opt.title, 0, 0, 0, 0, NULL},
        {0}};
    /* the caption shows the command as typed (vr_cli_parse leaves argv as it is) */
    char *cmd = vr_cli_command_line(argc, argv);
    vr_cli_args args;
    int rc = vr_cli_parse(&g_cmd, opts, argc, argv, &args);
    if (rc == VR_CLI_CONTINUE && (args.count != 1 || !out)) {
        vr_cli_help(stderr, &g_cmd, opts);
        if (args.count > 1)
            rc = vr_cli_fail(VR_CLI_USAGE, "plot-bench", "one CSV only ('%s' and '%s'); "
                             "--scene selects scenes", args.v[0], args.v[1]);
        else
            rc = vr_cli_fail(VR_CLI_USAGE, "plot-bench", "%s",
                             args.count ? "-o F.svg is required" : "no CSV given");
    } else if (rc == VR_CLI_CONTINUE && !strcmp(out, "-")) {
        rc = vr_cli_fail(VR_CLI_USAGE, "plot-bench", "-o needs a file name");
    }
    if (rc != VR_CLI_CONTINUE) {
        free(cmd);
        return rc;
    }
    const char *csv = args.v[0];
    vr_cli_input(csv);
    opt.scenes = scenes.count ? scenes.v : NULL;
    opt.scene_count = (size_t)scenes.count;
    opt.svg_name = out;
    opt.quiet = vr_progress_quiet; /* --quiet: no warnings either */
    opt.command = cmd;
    plot_job job = {csv, &opt};
    vr_status s = vr_cli_write_via(out, "SVG", write_plot, &job);
    free(cmd);
    if (s != VR_OK)
        return vr_cli_fail_last("plot-bench");
    if (!opt.quiet)
        printf("plot-bench: wrote %s\n", out);
    return 0;
}
