/* test_plot.c - tests of bench/plot.c, the Figure-9-style SVG of a bench CSV: a hand-written
 * CSV (extra and missing columns, a FAIL row, a short row, two blocks) must give exactly the
 * expected bars (each bar's <title> names its time, block, relative time and bound), labels
 * and escaping; bad input must fail with the right status and leave no SVG behind.
 * Run: `vreuse_tests bench/plot`.
 */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */
#include "tests/test.h"

#include "bench/plot.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Two blocks for scene-a (best and 128 differ), a FAIL row, a row cut short, a scene name that
 * needs escaping, an extra column `store` and no tris / cycles for scene 2 ("b&<1>"). */
static const char g_csv[] =
    "# gpu: Test GPU 9000 (1 SM)\n"
    "# commit: abc1234\n"
    "# command: bench dir/scene-a.obj --strategy naive,warp,hash\n"
    "scene,tris,strategy,load,block,store,ms_med,ms_min,bound,cycles_per_invocation,status\n"
    "dir/scene-a.obj,1000,naive,simple,64,q,2.0,1.9,1.000,110,ok\n"
    "dir/scene-a.obj,1000,naive,simple,128,q,1.0,0.9,1.000,110,ok\n"
    "dir/scene-a.obj,1000,warp,simple,64,q,0.5,0.4,3.500,110,ok\n"
    "dir/scene-a.obj,1000,warp,simple,128,q,0.8,0.7,3.500,110,ok\n"
    "dir/scene-a.obj,1000,hash,simple,64,q,,,,,FAIL\n"
    "dir/scene-a.obj,1000,naive,heavy,64,q,4.0,3.9,1.000,33000,ok\n"
    "dir/scene-a.obj,1000,warp,heavy,64,q,1.0,0.9,3.500,33000,ok\n"
    "dir/scene-a.obj,1000,hash,heavy,64,q,0.9,0.8,4.000,33000,ok\n"
    "dir/scene-a.obj,1000,hash,heavy,128\n"
    "\"b&<1>\",,naive,simple,64,q,3.0,2.9,1.000,,ok\n"
    "\"b&<1>\",,warp,simple,64,q,6.0,5.9,3.000,,ok\n";

typedef struct plot_fixture {
    char dir[64], csv[96], svg[96];
} plot_fixture;

static int write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    int ok = fputs(text, f) >= 0;
    return (fclose(f) == 0 && ok) ? 0 : -1;
}

/* The whole file as a string (caller frees), or NULL when it does not exist. */
static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *s = NULL;
    size_t n = 0, cap = 0, got;
    do {
        if (cap - n < 4096) {
            char *p = realloc(s, cap = cap * 2 + 4096);
            if (!p)
                break;
            s = p;
        }
        got = fread(s + n, 1, cap - n - 1, f);
        n += got;
    } while (got);
    fclose(f);
    if (s)
        s[n] = '\0';
    return s;
}

static size_t count(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
        ++n;
    return n;
}

static int fixture_open(plot_fixture *t, const char *csv_text)
{
    snprintf(t->dir, sizeof t->dir, "/tmp/vr_test_plot_XXXXXX");
    if (!mkdtemp(t->dir))
        return -1;
    snprintf(t->csv, sizeof t->csv, "%s/bench.csv", t->dir);
    snprintf(t->svg, sizeof t->svg, "%s/fig9.svg", t->dir);
    return csv_text ? write_file(t->csv, csv_text) : 0;
}

static void fixture_close(plot_fixture *t)
{
    remove(t->svg);
    remove(t->csv);
    rmdir(t->dir);
}

/* Plots `csv_text`; returns the status, *svg gets the file's text (NULL when none was written). */
static vr_status plot_text(const char *csv_text, const vr_plot_options *opt, char **svg)
{
    plot_fixture t;
    *svg = NULL;
    if (fixture_open(&t, csv_text) != 0)
        return VR_ERR_IO;
    vr_status s = vr_bench_plot_fig9(t.csv, t.svg, opt);
    *svg = read_file(t.svg);
    fixture_close(&t);
    return s;
}

VR_TEST(test_plot_fig9, "bench/plot-fig9")
{
    vr_plot_options opt = vr_plot_options_default();
    opt.quiet = 1;
    opt.command = "vreuse plot-bench bench.csv --out fig9.svg";
    char *svg;
    vr_status s = plot_text(g_csv, &opt, &svg);
    VR_EXPECT(s == VR_OK, "%s", vr_last_error());
    VR_EXPECT(svg != NULL, "no SVG written");
    if (!svg)
        return VR_TEST_FAIL;
    /* Fastest block per (scene, strategy, load), relative to naive's fastest. */
    VR_EXPECT(strstr(svg, "<title>scene-a.obj \xC2\xB7 simple \xC2\xB7 naive: 1.00 ms at block 128, "
                          "1.000 of naive, bound 1.000</title>"), "naive simple bar");
    VR_EXPECT(strstr(svg, "<title>scene-a.obj \xC2\xB7 simple \xC2\xB7 warp: 0.500 ms at block 64, "
                          "0.500 of naive, bound 3.500</title>"), "warp simple bar");
    VR_EXPECT(strstr(svg, "<title>scene-a.obj \xC2\xB7 heavy \xC2\xB7 hash: 0.900 ms at block 64, "
                          "0.225 of naive, bound 4.000</title>"), "hash heavy bar");
    VR_EXPECT(strstr(svg, "<title>b&amp;&lt;1&gt; \xC2\xB7 simple \xC2\xB7 warp: 6.00 ms at block 64, "
                          "2.000 of naive, bound 3.000</title>"), "escaped scene, slower bar");
    /* 3 + 2 bars in scene-a (hash simple FAILed), 2 in b; hash simple marked missing. */
    VR_EXPECT_EQ(count(svg, "<title>"), 7);
    VR_EXPECT(!strstr(svg, "simple \xC2\xB7 hash"), "the FAIL row must not be drawn");
    VR_EXPECT_EQ(count(svg, "\xC3\x97</text>"), 1 + 1); /* hash simple of a, hash simple of b */
    /* Bound ticks on every non-naive bar with a bound: warp x2, hash heavy, warp of b. */
    VR_EXPECT_EQ(count(svg, "stroke=\"#000\" stroke-width=\"2\"/>"), 4 + 1 /* legend */);
    /* Group labels: load, cycles, naive's absolute time; b has no heavy rows. */
    VR_EXPECT(strstr(svg, ">naive 1.00 ms<") && strstr(svg, ">naive 4.00 ms<") &&
              strstr(svg, ">naive 3.00 ms<"), "naive's time under each group");
    VR_EXPECT(strstr(svg, ">110 cycles<") && strstr(svg, ">33.0k cycles<"), "cycles labels");
    VR_EXPECT_EQ(count(svg, ">no data<"), 1);
    VR_EXPECT_EQ(count(svg, ">simple<"), 2);
    VR_EXPECT(strstr(svg, "1.00k triangles"), "scene-a's size in its title");
    /* Title block, legend and caption. */
    VR_EXPECT(strstr(svg, "Test GPU 9000 (1 SM)") && strstr(svg, "commit abc1234"), "GPU, commit");
    VR_EXPECT(strstr(svg, ">naive<") && strstr(svg, ">warp<") && strstr(svg, ">hash<") &&
              !strstr(svg, ">multi<"), "legend has the strategies present, only those");
    VR_EXPECT(strstr(svg, "data: vreuse bench dir/scene-a.obj") &&
              strstr(svg, "plot: vreuse plot-bench bench.csv --out fig9.svg"), "caption");
    VR_EXPECT(strstr(svg, "time relative to naive"), "y-axis title");
    VR_EXPECT(strstr(svg, "</svg>\n"), "complete document");
    free(svg);
    return VR_TEST_RESULT();
}

VR_TEST(test_plot_block_and_scene, "bench/plot-block-scene")
{
    vr_plot_options opt = vr_plot_options_default();
    opt.quiet = 1;
    opt.block = 128;
    const char *only_a[] = {"scene-a.obj"};
    opt.scenes = only_a;
    opt.scene_count = 1;
    opt.title = "Fig. 9 <again>";
    char *svg;
    VR_EXPECT(plot_text(g_csv, &opt, &svg) == VR_OK, "%s", vr_last_error());
    if (svg) {
        VR_EXPECT(strstr(svg, "simple \xC2\xB7 warp: 0.800 ms at block 128, 0.800 of naive"),
                  "--block 128 picks the block-128 row");
        VR_EXPECT(!strstr(svg, "b&amp;"), "--scene leaves other scenes out");
        VR_EXPECT(strstr(svg, "Fig. 9 &lt;again&gt;"), "escaped title");
        VR_EXPECT(strstr(svg, "all strategies at block 128"), "subtitle names the block");
        /* heavy ran at block 64 only: its group has no naive at 128 and says so */
        VR_EXPECT_EQ(count(svg, "<title>"), 2);
        free(svg);
    }
    /* The full name selects too; an unknown one or a block never run is an argument error. */
    const char *full[] = {"dir/scene-a.obj"};
    opt.scenes = full;
    opt.block = 0;
    VR_EXPECT(plot_text(g_csv, &opt, &svg) == VR_OK, "%s", vr_last_error());
    VR_EXPECT(svg && count(svg, "<title>") == 5, "5 bars for scene-a");
    free(svg);
    const char *nope[] = {"nope.obj"};
    opt.scenes = nope;
    VR_EXPECT(plot_text(g_csv, &opt, &svg) == VR_ERR_ARG, "unknown scene");
    VR_EXPECT(strstr(vr_last_error(), "nope.obj") && strstr(vr_last_error(), "dir/scene-a.obj"),
              "message names the scene and lists those present: %s", vr_last_error());
    VR_EXPECT(!svg, "no SVG on error");
    free(svg);
    opt.scenes = NULL;
    opt.scene_count = 0;
    opt.block = 999;
    VR_EXPECT(plot_text(g_csv, &opt, &svg) == VR_ERR_ARG, "block never run");
    VR_EXPECT(strstr(vr_last_error(), "999") && strstr(vr_last_error(), "64, 128"),
              "message lists the blocks present: %s", vr_last_error());
    VR_EXPECT(!svg, "no SVG on error");
    free(svg);
    return VR_TEST_RESULT();
}

VR_TEST(test_plot_errors, "bench/plot-errors")
{
    vr_plot_options opt = vr_plot_options_default();
    opt.quiet = 1;
    char *svg;
    static const struct {
        const char *csv, *what;
        vr_status want;
    } cases[] = {
        {"", "empty file", VR_ERR_FORMAT},
        {"# gpu: x\n# commit: y\n\n", "comments only: no header", VR_ERR_FORMAT},
        {"scene,strategy,load,ms_med,status\n", "header, no rows", VR_ERR_FORMAT},
        {"scene,strategy,load,ms_min,status\na,naive,simple,1.0,ok\n", "no ms_med column",
         VR_ERR_FORMAT},
        {"scene,strategy,load,ms_med,status\na,naive,simple,,FAIL\na,warp,simple,,FAIL\n",
         "every row FAILed", VR_ERR_FORMAT},
        {"scene,strategy,load,ms_med\na,warp,simple,1.0\n", "no naive to divide by", VR_ERR_FORMAT},
        {"scene,strategy,load,ms_med\na,naive,simple,abc\na,naive,simple,-1\na,naive,x,nan\n",
         "no valid time", VR_ERR_FORMAT},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        vr_status s = plot_text(cases[i].csv, &opt, &svg);
        VR_EXPECT(s == cases[i].want, "%s: got %s (%s)", cases[i].what, vr_status_string(s),
                  vr_last_error());
        VR_EXPECT(!svg == (cases[i].want != VR_OK), "%s: SVG written only on success",
                  cases[i].what);
        free(svg);
    }
    /* A NUL byte means a binary file, not a CSV with a strange cell. */
    plot_fixture t;
    static const char nul_csv[] = "scene,strategy,load,ms_med\na,naive,simple,1\0\n";
    if (fixture_open(&t, NULL) == 0) {
        FILE *f = fopen(t.csv, "wb");
        if (f) {
            fwrite(nul_csv, 1, sizeof nul_csv - 1, f);
            fclose(f);
        }
        VR_EXPECT(vr_bench_plot_fig9(t.csv, t.svg, &opt) == VR_ERR_FORMAT, "NUL byte");
        VR_EXPECT(strstr(vr_last_error(), ":2:") != NULL, "names the line: %s", vr_last_error());
        fixture_close(&t);
    }
    /* Minimal columns only: no block, bound, status, tris or cycles -> still a figure. */
    VR_EXPECT(plot_text("scene,strategy,load,ms_med\na,naive,simple,2\na,sort,simple,1\n", &opt,
                        &svg) == VR_OK, "%s", vr_last_error());
    VR_EXPECT(svg && strstr(svg, "sort: 1.00 ms, 0.500 of naive</title>"), "minimal CSV bar");
    free(svg);

    /* A missing CSV and an unwritable SVG are I/O errors naming the path. */
    VR_EXPECT(vr_bench_plot_fig9("/nonexistent/bench.csv", "/tmp/unused.svg", &opt) == VR_ERR_IO,
              "missing CSV");
    VR_EXPECT(strstr(vr_last_error(), "/nonexistent/bench.csv") != NULL, "%s", vr_last_error());
    if (fixture_open(&t, g_csv) == 0) {
        VR_EXPECT(vr_bench_plot_fig9(t.csv, "/nonexistent/dir/f.svg", &opt) == VR_ERR_IO,
                  "unwritable SVG");
        fixture_close(&t);
    }
    return VR_TEST_RESULT();
}
