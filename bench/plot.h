/* plot.h - Figure-9-style SVG from a `vreuse bench` CSV (Kenzel et al. 2018, Section 4.2):
 * per scene one panel, per shader load one group of bars, one bar per strategy giving its
 * kernel time relative to naive, with 1/bound (the time if shading were all that cost) ticked.
 * Pure C, no GPU: the CLI is pipeline/cli/plot_cmd.c, the test tests/test_plot.c
 * (`vreuse plot-bench bench.csv --out fig9.svg`, `vreuse_tests bench/plot`).
 */
#ifndef VR_PLOT_H
#define VR_PLOT_H

#include "pipeline/vreuse.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vr_plot_options {
    const char *const *scenes; /* scene_count names to plot, in this order: the CSV's scene
                                  column or its last path component; NULL: every scene. With
                                  an order column each scene gives a panel per order */
    size_t scene_count;        /* entries in scenes, 0 with scenes == NULL */
    uint32_t block;            /* threads per block to plot; 0: each (scene, strategy, load)
                                  at its fastest block (min ms_med), as the paper reports */
    const char *title;         /* headline; NULL: "Vertex processing time relative to naive" */
    const char *command;       /* caption: the command that drew the figure; NULL: none */
    int quiet;                 /* 1: no warnings on stderr (skipped rows, missing bars) */
    const char *svg_name;      /* the output as the user named it, for messages; NULL: the
                                  svg_path argument (which may be a temporary file) */
} vr_plot_options;

vr_plot_options vr_plot_options_default(void);

/* Reads csv_path (a `vreuse bench --csv` file: '#' metadata lines, a header, rows; columns
 * found by name, extra columns ignored) and writes the figure to svg_path: one panel per
 * scene, or per (scene, order) when the CSV has an order column. Rows whose status is not
 * "ok" are skipped with a warning. Returns VR_ERR_IO (unreadable / unwritable file),
 * VR_ERR_FORMAT (no header, a required column missing, a malformed number, no usable row) or
 * VR_ERR_ARG (an unknown --scene, no row with opt->block); the message names the file and
 * line. svg_path is opened only once the CSV was read and the figure laid out; a write that
 * fails leaves it partial (the command writes through a temporary file: vr_cli_write_via). */
vr_status vr_bench_plot_fig9(const char *csv_path, const char *svg_path, const vr_plot_options *opt);

#ifdef __cplusplus
}
#endif
#endif
