/* plot_cmd.c - `vreuse plot-bench BENCH.csv --out F.svg`: the bench CSV as a Figure-9-style
 * SVG (Kenzel et al. 2018, Section 4.2): per scene and shader load, each strategy's time
 * relative to naive. Argument parsing only; the figure is drawn by bench/plot.c.
 * Try: `vreuse plot-bench bench/results/geometry-h100-run1.csv --out fig9.svg`.
 */
#include "pipeline/cli/commands.h"
#include "bench/plot.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
    fprintf(f,
            "usage: vreuse plot-bench BENCH.csv --out F.svg [--scene NAME]... [--block best|N]\n"
            "                         [--title T] [--quiet]\n"
            "\n"
            "Draws the CSV of `vreuse bench --csv` like Figure 9 of Kenzel et al. 2018: one panel\n"
            "per scene, one bar group per shader load (in CSV order), one bar per strategy giving\n"
            "its median kernel time relative to naive's (naive = 1, dashed line). A black tick on\n"
            "each bar marks 1/bound, the relative time if shading were all that cost; naive's\n"
            "absolute time is printed under each group. Rows whose status is not ok are skipped\n"
            "with a warning.\n"
            "\n"
            "  --out F.svg      output file (required)\n"
            "  --scene NAME     plot only this scene, by its CSV name or last path component\n"
            "                   (stanford-bunny.obj@7M); repeat for several, in panel order\n"
            "                   (default: every scene, in CSV order)\n"
            "  --block best|N   best (default): each strategy at its fastest block size, as the\n"
            "                   paper reports; N: every strategy at N threads per block\n"
            "  --title T        headline (default: Vertex processing time relative to naive)\n"
            "  --quiet          no warnings\n"
            "  --help           this text\n"
            "\n"
            "Exit status: 0 written, 1 unreadable or unusable CSV, 2 usage error.\n");
}

/* The command line as typed, for the figure's caption; quotes words with spaces. */
static char *command_line(int argc, char **argv)
{
    size_t n = strlen("vreuse") + 1;
    for (int i = 0; i < argc; ++i)
        n += strlen(argv[i]) + 3;
    char *s = malloc(n);
    if (!s)
        return NULL;
    strcpy(s, "vreuse");
    for (int i = 0; i < argc; ++i) {
        int quote = strchr(argv[i], ' ') != NULL;
        strcat(s, quote ? " '" : " ");
        strcat(s, argv[i]);
        if (quote)
            strcat(s, "'");
    }
    return s;
}

int vr_cmd_plot_bench(int argc, char **argv)
{
    vr_plot_options opt = vr_plot_options_default();
    const char *csv = NULL, *out = NULL;
    const char **scenes = calloc(argc > 0 ? (size_t)argc : 1, sizeof *scenes);
    if (!scenes) {
        fprintf(stderr, "plot-bench: out of memory\n");
        return 1;
    }
    int rc = 2;
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            rc = 0;
            goto done;
        }
        if (!strcmp(a, "--quiet")) {
            opt.quiet = 1;
            continue;
        }
        if (a[0] == '-' && a[1]) {
            if (strcmp(a, "--out") && strcmp(a, "--scene") && strcmp(a, "--block") &&
                strcmp(a, "--title")) {
                fprintf(stderr, "plot-bench: unknown option '%s' (see vreuse plot-bench --help)\n", a);
                goto done;
            }
            if (i + 1 >= argc) {
                fprintf(stderr, "plot-bench: %s needs a value\n", a);
                goto done;
            }
            const char *v = argv[++i];
            if (!strcmp(a, "--out"))
                out = v;
            else if (!strcmp(a, "--scene"))
                scenes[opt.scene_count++] = v;
            else if (!strcmp(a, "--title"))
                opt.title = v;
            else if (strcmp(v, "best")) {
                char *end;
                errno = 0;
                unsigned long b = strtoul(v, &end, 10);
                if (end == v || *end || errno || v[0] == '-' || b == 0 || b > 65536) {
                    fprintf(stderr, "plot-bench: --block '%s': expected best or a thread count "
                            "1..65536\n", v);
                    goto done;
                }
                opt.block = (uint32_t)b;
            }
            continue;
        }
        if (csv) {
            fprintf(stderr, "plot-bench: one CSV only ('%s' and '%s'); --scene selects scenes\n",
                    csv, a);
            goto done;
        }
        csv = a;
    }
    if (!csv || !out) {
        fprintf(stderr, "plot-bench: %s\n\n", !csv ? "no CSV given" : "--out F.svg is required");
        usage(stderr);
        goto done;
    }
    opt.scenes = opt.scene_count ? scenes : NULL;
    char *cmd = command_line(argc, argv);
    opt.command = cmd;
    vr_status s = vr_bench_plot_fig9(csv, out, &opt);
    free(cmd);
    if (s != VR_OK) {
        fprintf(stderr, "%s\n", vr_last_error());
        rc = 1;
        goto done;
    }
    if (!opt.quiet)
        printf("plot-bench: wrote %s\n", out);
    rc = 0;
done:
    free(scenes);
    return rc;
}
