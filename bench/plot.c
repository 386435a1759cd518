/* plot.c - Figure 9 of Kenzel et al. 2018 from a `vreuse bench` CSV: small multiples, one
 * panel per scene, one bar group per shader load, one bar per strategy with its kernel time
 * relative to naive (linear axis from 0, so bar length is time), a tick at 1/bound where
 * shading alone would put it, and naive's absolute time under each group.
 * Hand-written SVG 1.1, no dependencies. Try:
 * `vreuse plot-bench bench.csv --out fig9.svg`, `vreuse_tests bench/plot`.
 */
#define _POSIX_C_SOURCE 200809L /* getline, strdup */
#include "bench/plot.h"

#include "pipeline/svg.h"

#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Columns found by name in the header; the first four are required. CSVs written before bench
 * took an order list have no order column: then every scene is one panel. */
enum { COL_SCENE, COL_STRATEGY, COL_LOAD, COL_MS, COL_REQUIRED,
       COL_BLOCK = COL_REQUIRED, COL_BOUND, COL_STATUS, COL_TRIS, COL_CYCLES, COL_ORDER,
       COL_COUNT };
static const char *const g_col_names[COL_COUNT] = {"scene", "strategy", "load", "ms_med", "block",
                                                   "bound", "status", "tris",
                                                   "cycles_per_invocation", "order"};

/* The paper's order and fixed colours; strategies not listed here follow in CSV order. */
static const char *const g_known[] = {"naive", "warp", "hash", "phash", "sort", "multi"};
static const char *const g_known_color[] = {"#9a9a9a", "#d62728", "#2ca02c",
                                            "#98df8a", "#1f77b4", "#9467bd"};
static const char *const g_extra_color[] = {"#ff7f0e", "#8c564b", "#e377c2", "#17becf", "#bcbd22"};
#define KNOWN_COUNT (sizeof g_known / sizeof g_known[0])
#define EXTRA_COUNT (sizeof g_extra_color / sizeof g_extra_color[0])

#define MAX_WARNINGS 8      /* skipped-row warnings printed one by one; the rest are counted */
#define MAX_LINE (1u << 20) /* bytes; a longer "line" is not a bench CSV */
#define Y_CAP 4.0           /* relative times above this are clipped and labelled */

/* Layout in SVG units (px at 100%). */
#define BAR_W 12.0
#define BAR_GAP 3.0 /* keeps equal bound ticks of neighbours apart */
#define GROUP_PAD 11.0
#define PLOT_H 220.0
#define PANEL_AXIS_L 44.0  /* tick labels left of each plot */
#define PANEL_R 14.0
#define PANEL_TITLE_H 26.0
#define PANEL_XLABEL_H 50.0 /* load name, cycles, naive's time */
#define PANEL_GAP_Y 18.0
#define FIG_L 34.0          /* rotated y-axis title */
#define FIG_R 14.0
#define FIG_HEAD_H 104.0
#define CAPTION_LINE_H 14.0
#define CAPTION_CHAR_W 6.1  /* 10 px monospace advance, for wrapping */

typedef struct vr_plot_row {
    uint32_t scene, strategy, load; /* indices into the name tables */
    uint32_t panel;                 /* index into vr_plot_data.panels: (scene, order) */
    uint32_t block;                 /* threads per block; 0 when the CSV has no block column */
    double ms;                      /* ms_med, > 0 */
    double bound;                   /* naive invocations / these invocations; 0: unknown */
    double tris;                    /* triangles; 0: unknown */
    double cycles;                  /* clock64 cycles per shader invocation; < 0: unknown */
} vr_plot_row;

typedef struct vr_names {
    char **name;
    size_t count, cap;
} vr_names;

/* One panel of the figure: a scene in one triangle order. */
typedef struct vr_plot_panel {
    uint32_t scene, order; /* indices into the name tables */
} vr_plot_panel;

typedef struct vr_plot_data {
    const char *path;        /* the CSV, for messages */
    int quiet;
    vr_names scenes, strategies, loads, orders; /* orders: "" alone without an order column */
    int has_order;           /* the CSV has an order column: panel titles name the order */
    vr_plot_panel *panels;   /* distinct (scene, order) pairs in CSV order */
    size_t panel_count, panel_cap;
    vr_plot_row *rows;
    size_t row_count, row_cap;
    size_t skipped;          /* rows dropped with a warning */
    char *gpu, *driver, *cuda, *date, *commit, *command; /* '#' metadata, NULL when absent */
} vr_plot_data;

vr_plot_options vr_plot_options_default(void)
{
    vr_plot_options o;
    memset(&o, 0, sizeof o);
    return o;
}

/* ---- reading ------------------------------------------------------------------------------ */

/* Room for one more of `count` items of `size` bytes in *items (capacity *cap): the capacity
 * doubles, starting at `first`. VR_ERR_OOM naming `what` (*items unchanged) when it cannot. */
static vr_status grow(void **items, size_t *cap, size_t count, size_t size, size_t first,
                      const char *what)
{
    if (count < *cap)
        return VR_OK;
    const size_t c = *cap ? 2 * *cap : first;
    void *p = realloc(*items, c * size);
    if (!p)
        return VR_ERROR(VR_ERR_OOM, "out of memory for %zu %s", c, what);
    *items = p;
    *cap = c;
    return VR_OK;
}

static long names_find(const vr_names *n, const char *s)
{
    for (size_t i = 0; i < n->count; ++i)
        if (!strcmp(n->name[i], s))
            return (long)i;
    return -1;
}

static vr_status names_intern(vr_names *n, const char *s, uint32_t *index)
{
    long i = names_find(n, s);
    if (i < 0) {
        vr_status st = grow((void **)&n->name, &n->cap, n->count, sizeof *n->name, 16, "names");
        if (st != VR_OK)
            return st;
        if (!(n->name[n->count] = strdup(s)))
            return VR_ERROR(VR_ERR_OOM, "out of memory");
        i = (long)n->count++;
    }
    *index = (uint32_t)i;
    return VR_OK;
}

static void names_free(vr_names *n)
{
    for (size_t i = 0; i < n->count; ++i)
        free(n->name[i]);
    free(n->name);
}

static void data_free(vr_plot_data *d)
{
    names_free(&d->scenes);
    names_free(&d->strategies);
    names_free(&d->loads);
    names_free(&d->orders);
    free(d->panels);
    free(d->rows);
    free(d->gpu);
    free(d->driver);
    free(d->cuda);
    free(d->date);
    free(d->commit);
    free(d->command);
}

static void warn_row(vr_plot_data *d, size_t line, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static void warn_row(vr_plot_data *d, size_t line, const char *fmt, ...)
{
    if (!d->quiet && d->skipped < MAX_WARNINGS) {
        va_list ap;
        va_start(ap, fmt);
        fprintf(stderr, "vreuse plot-bench: warning: %s:%zu: ", d->path, line);
        vfprintf(stderr, fmt, ap);
        fputs(", row skipped\n", stderr);
        va_end(ap);
    }
    ++d->skipped;
}

/* "# key: value" lines of the bench CSV (bench_cmd.c vr_write_meta) -> d->gpu etc. */
static vr_status parse_meta(vr_plot_data *d, const char *line)
{
    static const char *const keys[] = {"gpu", "driver", "cuda runtime", "date", "commit", "command"};
    char **slots[] = {&d->gpu, &d->driver, &d->cuda, &d->date, &d->commit, &d->command};
    while (*line == ' ')
        ++line;
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; ++k) {
        size_t n = strlen(keys[k]);
        if (strncmp(line, keys[k], n) || line[n] != ':' || *slots[k])
            continue;
        const char *v = line + n + 1;
        while (*v == ' ')
            ++v;
        if (*v && !(*slots[k] = strdup(v)))
            return VR_ERROR(VR_ERR_OOM, "out of memory");
    }
    return VR_OK;
}

/* Splits `line` in place at commas (RFC 4180 quotes allowed, though bench never writes them);
 * returns the field count, or 0 when out of memory. */
static size_t split_csv(char *line, char ***fields, size_t *cap)
{
    size_t n = 0;
    char *r = line;
    for (;;) {
        if (grow((void **)fields, cap, n, sizeof **fields, 32, "fields") != VR_OK)
            return 0;
        char *w = r;
        (*fields)[n++] = w;
        if (*r == '"') {
            for (++r; *r; ++r) {
                if (*r == '"' && r[1] == '"')
                    ++r;
                else if (*r == '"') {
                    ++r;
                    break;
                }
                *w++ = *r;
            }
            while (*r && *r != ',')
                ++r; /* text after a closing quote: dropped, as spreadsheets do */
        } else {
            while (*r && *r != ',')
                *w++ = *r++;
        }
        int more = *r == ',';
        *w = '\0';
        if (!more)
            return n;
        ++r;
    }
}

static const char *trim(char *s)
{
    while (*s == ' ' || *s == '\t')
        ++s;
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        s[--n] = '\0';
    return s;
}

/* A finite number > 0 (or >= 0 when zero_ok); 0 on success. */
static int parse_number(const char *s, int zero_ok, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end || errno == ERANGE || !isfinite(v) || v < 0 || (v == 0 && !zero_ok))
        return -1;
    *out = v;
    return 0;
}

static int parse_block(const char *s, uint32_t *out)
{
    char *end;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (end == s || *end || errno || *s == '-' || v == 0 || v > 65536)
        return -1;
    *out = (uint32_t)v;
    return 0;
}

static vr_status panel_intern(vr_plot_data *d, uint32_t scene, uint32_t order, uint32_t *index)
{
    for (size_t i = 0; i < d->panel_count; ++i)
        if (d->panels[i].scene == scene && d->panels[i].order == order) {
            *index = (uint32_t)i;
            return VR_OK;
        }
    vr_status st = grow((void **)&d->panels, &d->panel_cap, d->panel_count, sizeof *d->panels,
                        16, "panels");
    if (st != VR_OK)
        return st;
    d->panels[d->panel_count].scene = scene;
    d->panels[d->panel_count].order = order;
    *index = (uint32_t)d->panel_count++;
    return VR_OK;
}

/* One data line -> one row, or a warning and nothing when it is FAIL or unreadable. */
static vr_status parse_row(vr_plot_data *d, const int *col, char **f, size_t nf, size_t line)
{
    for (int c = 0; c < COL_COUNT; ++c)
        if (col[c] >= 0 && (size_t)col[c] >= nf) {
            warn_row(d, line, "%zu fields, no column '%s'", nf, g_col_names[c]);
            return VR_OK;
        }
    const char *cell[COL_COUNT];
    for (int c = 0; c < COL_COUNT; ++c)
        cell[c] = col[c] >= 0 ? trim(f[col[c]]) : "";
    if (col[COL_STATUS] >= 0 && strcmp(cell[COL_STATUS], "ok")) {
        warn_row(d, line, "%.60s %.30s/%.30s%s%.8s has status '%.30s'", cell[COL_SCENE],
                 cell[COL_STRATEGY], cell[COL_LOAD], *cell[COL_BLOCK] ? " block " : "",
                 cell[COL_BLOCK], cell[COL_STATUS]);
        return VR_OK;
    }
    if (!*cell[COL_SCENE] || !*cell[COL_STRATEGY] || !*cell[COL_LOAD]) {
        warn_row(d, line, "empty scene, strategy or load");
        return VR_OK;
    }
    vr_plot_row r = {0, 0, 0, 0, 0, 0, 0, 0, -1};
    uint32_t order = 0;
    if (parse_number(cell[COL_MS], 0, &r.ms)) {
        warn_row(d, line, "ms_med '%.30s' is not a positive number", cell[COL_MS]);
        return VR_OK;
    }
    if (col[COL_BLOCK] >= 0 && parse_block(cell[COL_BLOCK], &r.block)) {
        warn_row(d, line, "block '%.30s' is not a thread count", cell[COL_BLOCK]);
        return VR_OK;
    }
    /* Optional numbers: an empty or unreadable cell only loses its annotation. */
    if (*cell[COL_BOUND] && parse_number(cell[COL_BOUND], 0, &r.bound))
        r.bound = 0;
    if (*cell[COL_TRIS] && parse_number(cell[COL_TRIS], 0, &r.tris))
        r.tris = 0;
    if (!*cell[COL_CYCLES] || parse_number(cell[COL_CYCLES], 1, &r.cycles))
        r.cycles = -1;

    vr_status s;
    if ((s = names_intern(&d->scenes, cell[COL_SCENE], &r.scene)) != VR_OK ||
        (s = names_intern(&d->strategies, cell[COL_STRATEGY], &r.strategy)) != VR_OK ||
        (s = names_intern(&d->loads, cell[COL_LOAD], &r.load)) != VR_OK ||
        (s = names_intern(&d->orders, cell[COL_ORDER], &order)) != VR_OK ||
        (s = panel_intern(d, r.scene, order, &r.panel)) != VR_OK)
        return s;
    if ((s = grow((void **)&d->rows, &d->row_cap, d->row_count, sizeof *d->rows, 256, "rows")))
        return s;
    d->rows[d->row_count++] = r;
    return VR_OK;
}

static vr_status read_csv(vr_plot_data *d)
{
    FILE *f = fopen(d->path, "r");
    if (!f)
        return VR_ERROR(VR_ERR_IO, "cannot open '%s': %s", d->path, strerror(errno));
    char *line = NULL, **fields = NULL;
    size_t line_cap = 0, field_cap = 0, lineno = 0, header_fields = 0;
    int col[COL_COUNT], have_header = 0;
    vr_status s = VR_OK;
    ssize_t len;
    while (s == VR_OK && (len = getline(&line, &line_cap, f)) != -1) {
        ++lineno;
        if ((size_t)len > MAX_LINE || strlen(line) != (size_t)len) {
            s = VR_ERROR(VR_ERR_FORMAT, "%s:%zu: %s; not a bench CSV", d->path,
                         lineno, (size_t)len > MAX_LINE ? "line longer than 1 MiB" : "NUL byte");
            break;
        }
        while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
            line[--len] = '\0';
        if (line[0] == '#') {
            if (!have_header)
                s = parse_meta(d, line + 1);
            continue;
        }
        if (!*trim(line))
            continue;
        size_t nf = split_csv(line, &fields, &field_cap);
        if (!nf) {
            s = VR_ERROR(VR_ERR_OOM, "out of memory splitting line %zu", lineno);
            break;
        }
        if (have_header) {
            s = parse_row(d, col, fields, nf, lineno);
            continue;
        }
        for (int c = 0; c < COL_COUNT; ++c) {
            col[c] = -1;
            for (size_t i = 0; i < nf && col[c] < 0; ++i)
                if (!strcmp(trim(fields[i]), g_col_names[c]))
                    col[c] = (int)i;
            if (c < COL_REQUIRED && col[c] < 0)
                s = VR_ERROR(VR_ERR_FORMAT,
                             "%s:%zu: the header lacks column '%s'; expected the "
                             "CSV of `vreuse bench --csv` (scene,tris,strategy,load,...,ms_med,...)",
                             d->path, lineno, g_col_names[c]);
        }
        header_fields = nf;
        have_header = 1;
        d->has_order = col[COL_ORDER] >= 0;
    }
    if (s == VR_OK && ferror(f))
        s = VR_ERROR(VR_ERR_IO, "reading '%s' failed: %s", d->path, strerror(errno));
    free(line);
    free(fields);
    fclose(f);
    if (s != VR_OK)
        return s;
    if (!have_header)
        return VR_ERROR(VR_ERR_FORMAT, "%s: no header line in %zu lines of comments and "
                        "blanks; expected the CSV of `vreuse bench --csv`", d->path, lineno);
    if (d->skipped > MAX_WARNINGS && !d->quiet)
        fprintf(stderr, "vreuse plot-bench: warning: %s: %zu more rows skipped\n", d->path,
                d->skipped - MAX_WARNINGS);
    if (!d->row_count)
        return VR_ERROR(VR_ERR_FORMAT, "%s: no usable rows (%zu skipped, header has "
                        "%zu columns)", d->path, d->skipped, header_fields);
    return VR_OK;
}

/* ---- choosing the bars -------------------------------------------------------------------- */

/* Panel order: the scenes of opt->scenes (by full name, else by last path component), each
 * with its orders in CSV order; or every (scene, order) in CSV order. panel[] holds
 * max(1, scene_count) x d->panel_count entries. */
static vr_status select_panels(const vr_plot_data *d, const vr_plot_options *opt,
                               uint32_t *panel, size_t *panel_count)
{
    if (!opt->scenes || !opt->scene_count) {
        for (size_t i = 0; i < d->panel_count; ++i)
            panel[i] = (uint32_t)i;
        *panel_count = d->panel_count;
        return VR_OK;
    }
    size_t n = 0;
    char list[400] = "";
    for (size_t i = 0, used = 0; i < d->scenes.count && used + 1 < sizeof list; ++i)
        used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "",
                                 d->scenes.name[i]);
    for (size_t k = 0; k < opt->scene_count; ++k) {
        const char *want = opt->scenes[k];
        long hit = names_find(&d->scenes, want);
        if (hit < 0)
            for (size_t i = 0; i < d->scenes.count; ++i)
                if (!strcmp(vr_path_name(d->scenes.name[i]), want)) {
                    if (hit >= 0)
                        return VR_ERROR(VR_ERR_ARG, "--scene '%s' matches both '%s' "
                                        "and '%s' in %s; give the full name", want,
                                        d->scenes.name[hit], d->scenes.name[i], d->path);
                    hit = (long)i;
                }
        if (hit < 0)
            return VR_ERROR(VR_ERR_ARG, "no usable rows for --scene '%s' in %s "
                            "(scenes: %s)", want, d->path, list);
        for (size_t i = 0; i < d->panel_count; ++i)
            if (d->panels[i].scene == (uint32_t)hit)
                panel[n++] = (uint32_t)i;
    }
    *panel_count = n;
    return VR_OK;
}

/* Bar order: the paper's strategies first, then any other in CSV order. */
static size_t strategy_order(const vr_plot_data *d, uint32_t *order, const char **color)
{
    size_t n = 0, extra = 0;
    for (size_t k = 0; k < KNOWN_COUNT; ++k) {
        long i = names_find(&d->strategies, g_known[k]);
        if (i >= 0) {
            color[n] = g_known_color[k];
            order[n++] = (uint32_t)i;
        }
    }
    for (size_t i = 0; i < d->strategies.count; ++i) {
        size_t k = 0;
        while (k < KNOWN_COUNT && strcmp(d->strategies.name[i], g_known[k]))
            ++k;
        if (k == KNOWN_COUNT) {
            color[n] = g_extra_color[extra++ % EXTRA_COUNT];
            order[n++] = (uint32_t)i;
        }
    }
    return n;
}

/* ---- SVG ---------------------------------------------------------------------------------- */

/* "14.43 ms", "0.580 ms", "11.8 µs": three significant digits. */
static void format_ms(char *buf, size_t n, double ms)
{
    if (ms >= 100)
        snprintf(buf, n, "%.0f ms", ms);
    else if (ms >= 10)
        snprintf(buf, n, "%.1f ms", ms);
    else if (ms >= 1)
        snprintf(buf, n, "%.2f ms", ms);
    else if (ms >= 0.1)
        snprintf(buf, n, "%.3f ms", ms);
    else
        snprintf(buf, n, "%.1f \xC2\xB5s", ms * 1e3);
}

/* Three significant digits: "110", "9.73k", "33.4k", "7.01M", "18.0M". */
static void format_count(char *buf, size_t n, double v)
{
    const char *unit = "";
    if (v >= 999.5e3) {
        v /= 1e6;
        unit = "M";
    } else if (v >= 999.5) {
        v /= 1e3;
        unit = "k";
    }
    snprintf(buf, n, "%.*f%s", *unit ? (v < 9.995 ? 2 : v < 99.95 ? 1 : 0) : 0, v, unit);
}

typedef struct vr_plot_layout {
    size_t panels, loads, strategies, cols, rows;
    double group_w, plot_w, panel_w, panel_h, fig_w, fig_h;
    double ymax, ystep; /* linear axis 0..ymax, grid every ystep */
    int ydecimals;
} vr_plot_layout;

static double bar_y(const vr_plot_layout *l, double top, double rel)
{
    return top + PLOT_H * (1.0 - (rel > l->ymax ? l->ymax : rel) / l->ymax);
}

/* Wraps `text` at spaces into lines of at most `width` chars (longer words are cut) and
 * advances *y per line; with f == NULL it only counts, so the figure height is exact. */
static void caption(FILE *f, double x, double *y, const char *prefix, const char *text, size_t width)
{
    size_t plen = strlen(prefix), len = strlen(text), pos = 0;
    int first = 1;
    while (pos < len) {
        size_t room = width > plen + 10 ? width - plen : 10, end = pos + room;
        if (end >= len)
            end = len;
        else {
            size_t cut = end;
            while (cut > pos && text[cut] != ' ')
                --cut;
            end = cut > pos ? cut : end;
        }
        *y += CAPTION_LINE_H;
        /* the prefix on the first line, as many spaces on the others */
        char *piece = f ? malloc(plen + end - pos + 1) : NULL;
        if (piece) {
            memcpy(piece, prefix, plen);
            if (!first)
                memset(piece, ' ', plen);
            memcpy(piece + plen, text + pos, end - pos);
            piece[plen + end - pos] = '\0';
            vr_svg_text(f, piece, "x=\"%.1f\" y=\"%.1f\" xml:space=\"preserve\"", x, *y);
            free(piece);
        }
        first = 0;
        pos = end;
        while (pos < len && text[pos] == ' ')
            ++pos;
    }
}

#define LEGEND_TICK "1/bound: time if shading were all that cost"
#define LEGEND_REF "naive = 1"

/* Width of the legend row; text advances estimated at 6.2 px per char of 12 px sans. */
static double legend_width(const vr_plot_layout *l, const vr_plot_data *d, const uint32_t *order)
{
    double w = 0;
    for (size_t k = 0; k < l->strategies; ++k)
        w += 18 + 6.2 * strlen(d->strategies.name[order[k]]) + 16;
    return w + 26 + 6.2 * strlen(LEGEND_TICK) + 16 + 30 + 6.2 * strlen(LEGEND_REF);
}

static void write_legend(FILE *f, const vr_plot_layout *l, const vr_plot_data *d,
                         const uint32_t *order, const char **color, double y)
{
    const char *tick_text = LEGEND_TICK, *ref_text = LEGEND_REF;
    double x = (l->fig_w - legend_width(l, d, order)) / 2;
    if (x < 8)
        x = 8;
    /* Each key's swatch shares its label's line. */
    vr_svg_group(f, "font-size=\"12\"");
    for (size_t k = 0; k < l->strategies; ++k) {
        fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"12\" fill=\"%s\"/>", x,
                y - 10, color[k]);
        vr_svg_text(f, d->strategies.name[order[k]], "x=\"%.1f\" y=\"%.1f\"", x + 17, y);
        x += 18 + 6.2 * strlen(d->strategies.name[order[k]]) + 16;
    }
    fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"12\" fill=\"#e6e6e6\"/>"
               "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#000\" "
               "stroke-width=\"2\"/>", x + 2, y - 10, x, y - 4, x + 16, y - 4);
    vr_svg_text(f, tick_text, "x=\"%.1f\" y=\"%.1f\"", x + 22, y);
    x += 26 + 6.2 * strlen(tick_text) + 16;
    fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#333\" "
               "stroke-width=\"1.2\" stroke-dasharray=\"5 3\"/>", x, y - 4, x + 24, y - 4);
    vr_svg_text(f, ref_text, "x=\"%.1f\" y=\"%.1f\"", x + 30, y);
    vr_svg_group_end(f);
}

/* One panel: frame, grid, bars, ticks, x labels. cell[load * S + k] is a row index or -1. */
static void write_panel(FILE *f, const vr_plot_layout *l, const vr_plot_data *d, uint32_t panel,
                        const long *cell, const uint32_t *load_of, const uint32_t *order,
                        const char **color, double px, double py, long naive_k)
{
    const double left = px + PANEL_AXIS_L, top = py + PANEL_TITLE_H;
    const double bottom = top + PLOT_H, right = left + l->plot_w;
    char t[64]; /* a label */

    /* Title: scene name (last path component), its order when the CSV has one, its size. */
    const uint32_t scene = d->panels[panel].scene;
    const char *order_name = d->has_order ? d->orders.name[d->panels[panel].order] : "";
    double tris = 0;
    for (size_t i = 0; i < l->loads * l->strategies; ++i)
        if (cell[i] >= 0 && d->rows[cell[i]].tris > 0)
            tris = d->rows[cell[i]].tris;
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\"><tspan font-size=\"13\" "
               "font-weight=\"bold\">", (left + right) / 2, py + 16);
    vr_svg_escape(f, vr_path_name(d->scenes.name[scene]));
    fputs("</tspan>", f);
    if (*order_name) {
        fputs("<tspan font-size=\"11\" fill=\"#555\" dx=\"5\">\xC2\xB7 ", f);
        vr_svg_escape(f, order_name);
        fputs("</tspan>", f);
    }
    if (tris > 0) {
        format_count(t, sizeof t, tris);
        fprintf(f, "<tspan font-size=\"11\" fill=\"#555\" dx=\"5\">\xC2\xB7 %s triangles</tspan>", t);
    }
    fputs("</text>\n", f);

    /* Grid and tick labels. */
    vr_svg_group(f, "stroke=\"#e6e6e6\" stroke-width=\"1\"");
    for (double v = l->ystep; v <= l->ymax + 1e-9; v += l->ystep)
        vr_svg_line(f, left, bar_y(l, top, v), right, bar_y(l, top, v), NULL);
    vr_svg_group_end(f);
    vr_svg_group(f, "text-anchor=\"end\" font-size=\"11\"");
    for (double v = 0; v <= l->ymax + 1e-9; v += l->ystep) {
        snprintf(t, sizeof t, "%.*f", l->ydecimals, v);
        vr_svg_text(f, t, "x=\"%.1f\" y=\"%.1f\"", left - 6, bar_y(l, top, v) + 4);
    }
    vr_svg_group_end(f);

    for (size_t g = 0; g < l->loads; ++g) {
        const double gx = left + g * l->group_w;
        const long *c = cell + g * l->strategies;
        const vr_plot_row *naive = naive_k >= 0 && c[naive_k] >= 0 ? &d->rows[c[naive_k]] : NULL;
        const char *load = d->loads.name[load_of[g]];
        const double mid = gx + l->group_w / 2;

        /* x labels: load, its measured cost per invocation, naive's absolute time. */
        vr_svg_text(f, load, "x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"12\"",
                    mid, bottom + 16);
        double cycles = -1;
        for (size_t k = 0; k < l->strategies && cycles < 0; ++k)
            if (c[k] >= 0)
                cycles = d->rows[c[k]].cycles;
        if (cycles >= 0) {
            format_count(t, sizeof t, cycles);
            strcat(t, " cycles");
            vr_svg_text(f, t, "x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"10\" "
                        "fill=\"#666\"", mid, bottom + 29);
        }
        if (!naive) {
            int any = 0;
            for (size_t k = 0; k < l->strategies; ++k)
                any |= c[k] >= 0;
            vr_svg_text(f, any ? "no naive row" : "no data", "x=\"%.1f\" y=\"%.1f\" "
                        "text-anchor=\"middle\" font-size=\"11\" font-style=\"italic\" "
                        "fill=\"#888\"", mid, top + PLOT_H / 2);
            continue;
        }
        strcpy(t, "naive ");
        format_ms(t + strlen(t), sizeof t - strlen(t), naive->ms);
        vr_svg_text(f, t, "x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"10\" "
                    "fill=\"#222\"", mid, bottom + 42);

        for (size_t k = 0; k < l->strategies; ++k) {
            const double x = gx + GROUP_PAD + k * (BAR_W + BAR_GAP);
            if (c[k] < 0) {
                vr_svg_text(f, "\xC3\x97", "x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" "
                            "font-size=\"10\" fill=\"%s\"", x + BAR_W / 2, bottom - 3, color[k]);
                continue;
            }
            const vr_plot_row *r = &d->rows[c[k]];
            const double rel = r->ms / naive->ms, y = bar_y(l, top, rel);
            char ms[32];
            format_ms(ms, sizeof ms, r->ms);
            fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\">"
                       "<title>", x, y, BAR_W, bottom - y, color[k]);
            vr_svg_escape(f, vr_path_name(d->scenes.name[scene]));
            fputs(" \xC2\xB7 ", f);
            if (*order_name) {
                vr_svg_escape(f, order_name);
                fputs(" \xC2\xB7 ", f);
            }
            vr_svg_escape(f, load);
            fputs(" \xC2\xB7 ", f);
            vr_svg_escape(f, d->strategies.name[order[k]]);
            fprintf(f, ": %s", ms);
            if (r->block)
                fprintf(f, " at block %u", r->block);
            fprintf(f, ", %.3f of naive", rel);
            if (r->bound > 0)
                fprintf(f, ", bound %.3f", r->bound);
            fputs("</title></rect>\n", f);
            if (rel > l->ymax) { /* clipped: say how far it goes */
                snprintf(t, sizeof t, "%.1f", rel);
                vr_svg_text(f, t, "x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"9\"",
                            x + BAR_W / 2, top - 3);
            }
            if ((long)k != naive_k && r->bound > 0 && 1.0 / r->bound <= l->ymax) {
                const double ty = bar_y(l, top, 1.0 / r->bound);
                vr_svg_line(f, x, ty, x + BAR_W, ty, "stroke=\"#000\" stroke-width=\"2\"");
            }
        }
    }

    /* Reference at 1 over the bars, frame last so it stays crisp. */
    vr_svg_line(f, left, bar_y(l, top, 1.0), right, bar_y(l, top, 1.0),
                "stroke=\"#333\" stroke-width=\"1.2\" stroke-dasharray=\"5 3\"");
    vr_svg_rect(f, left, top, l->plot_w, PLOT_H, "fill=\"none\" stroke=\"#333\"");
}

static void axis_range(vr_plot_layout *l, double max_rel)
{
    static const double steps[] = {0.1, 0.2, 0.25, 0.5, 1.0};
    double top = max_rel < 1.0 ? 1.0 : max_rel;
    if (top > Y_CAP)
        top = Y_CAP;
    top *= 1.04; /* headroom so the tallest bar does not touch the frame */
    size_t i = 0;
    while (i + 1 < sizeof steps / sizeof steps[0] && top / steps[i] > 8)
        ++i;
    l->ystep = steps[i];
    l->ymax = ceil(top / l->ystep - 1e-9) * l->ystep;
    l->ydecimals = l->ystep == 0.25 ? 2 : l->ystep < 1 ? 1 : 0;
}

vr_status vr_bench_plot_fig9(const char *csv_path, const char *svg_path, const vr_plot_options *opt)
{
    assert(csv_path && svg_path && opt);
    const char *svg_name = opt->svg_name ? opt->svg_name : svg_path;
    assert(opt->scene_count == 0 || opt->scenes);
    vr_plot_data d;
    memset(&d, 0, sizeof d);
    d.path = csv_path;
    d.quiet = opt->quiet;
    uint32_t *panel = NULL, *order = NULL, *load_of = NULL;
    const char **color = NULL;
    long *cell = NULL;
    FILE *f = NULL;
    vr_status s = read_csv(&d);
    if (s != VR_OK)
        goto done;

    const size_t panel_slots = (opt->scene_count ? opt->scene_count : 1) * d.panel_count;
    panel = malloc(panel_slots * sizeof *panel);
    order = malloc(d.strategies.count * sizeof *order);
    color = malloc(d.strategies.count * sizeof *color);
    load_of = malloc(d.loads.count * sizeof *load_of);
    if (!panel || !order || !color || !load_of) {
        s = VR_ERROR(VR_ERR_OOM, "out of memory");
        goto done;
    }
    vr_plot_layout l;
    memset(&l, 0, sizeof l);
    if ((s = select_panels(&d, opt, panel, &l.panels)) != VR_OK)
        goto done;
    l.strategies = strategy_order(&d, order, color);
    long naive = names_find(&d.strategies, "naive");
    if (naive < 0) {
        s = VR_ERROR(VR_ERR_FORMAT, "%s: no usable naive row; every bar is a time "
                     "relative to naive (run bench with --strategy all)", csv_path);
        goto done;
    }
    const long naive_k = 0; /* naive is known, hence first in the bar order */
    assert(order[naive_k] == (uint32_t)naive);

    /* Loads in CSV order, only those that occur in a plotted scene. */
    for (size_t i = 0; i < d.loads.count; ++i) {
        int used = 0;
        for (size_t r = 0; r < d.row_count && !used; ++r)
            for (size_t p = 0; p < l.panels && !used; ++p)
                used = d.rows[r].load == i && d.rows[r].panel == panel[p];
        if (used)
            load_of[l.loads++] = (uint32_t)i;
    }

    /* cell[(p * loads + g) * strategies + k]: the fastest row, or the one at opt->block. */
    const size_t cells = l.panels * l.loads * l.strategies;
    cell = malloc(cells * sizeof *cell);
    if (!cell) {
        s = VR_ERROR(VR_ERR_OOM, "out of memory for %zu bars", cells);
        goto done;
    }
    for (size_t i = 0; i < cells; ++i)
        cell[i] = -1;
    size_t matched = 0;
    for (size_t r = 0; r < d.row_count; ++r) {
        const vr_plot_row *row = &d.rows[r];
        if (opt->block && row->block != opt->block)
            continue;
        size_t g = 0, k = 0;
        while (g < l.loads && load_of[g] != row->load)
            ++g;
        while (k < l.strategies && order[k] != row->strategy)
            ++k;
        for (size_t p = 0; p < l.panels; ++p) {
            if (panel[p] != row->panel || g == l.loads)
                continue;
            long *c = &cell[(p * l.loads + g) * l.strategies + k];
            if (*c < 0 || row->ms < d.rows[*c].ms)
                *c = (long)r;
            ++matched;
        }
    }
    if (!matched) {
        /* Name the blocks that were run, ascending, so the fix is obvious. */
        char list[160] = "";
        size_t used = 0;
        for (uint32_t last = 0;;) {
            uint32_t next = 0;
            for (size_t r = 0; r < d.row_count; ++r)
                if (d.rows[r].block > last && (!next || d.rows[r].block < next))
                    next = d.rows[r].block;
            if (!next || used + 16 > sizeof list)
                break;
            used += (size_t)snprintf(list + used, sizeof list - used, "%s%u", used ? ", " : "",
                                     next);
            last = next;
        }
        s = VR_ERROR(VR_ERR_ARG, "%s has no usable row with block %u for the "
                     "selected scenes (blocks present: %s)", csv_path, opt->block,
                     used ? list : "none, no block column");
        goto done;
    }

    double max_rel = 0;
    size_t bars = 0;
    for (size_t pg = 0; pg < l.panels * l.loads; ++pg) {
        const long *c = &cell[pg * l.strategies];
        if (c[naive_k] < 0) {
            if (!opt->quiet)
                for (size_t k = 0; k < l.strategies; ++k)
                    if (c[k] >= 0) {
                        const vr_plot_row *r = &d.rows[c[k]];
                        const char *ord = d.orders.name[d.panels[r->panel].order];
                        fprintf(stderr, "vreuse plot-bench: warning: %s: no usable naive row for "
                                "%s%s%s, load %s: group left empty\n", csv_path,
                                d.scenes.name[r->scene], *ord ? " " : "", ord,
                                d.loads.name[r->load]);
                        break;
                    }
            continue;
        }
        for (size_t k = 0; k < l.strategies; ++k)
            if (c[k] >= 0) {
                double rel = d.rows[c[k]].ms / d.rows[c[naive_k]].ms;
                max_rel = rel > max_rel ? rel : max_rel;
                ++bars;
            }
    }
    if (!bars) {
        s = VR_ERROR(VR_ERR_FORMAT, "%s: no (scene, load) with a usable naive row%s",
                     csv_path, opt->block ? " at this block" : "");
        goto done;
    }
    axis_range(&l, max_rel);

    l.cols = l.panels <= 3 ? l.panels : l.panels == 4 ? 2 : 3;
    l.rows = (l.panels + l.cols - 1) / l.cols;
    l.group_w = l.strategies * BAR_W + (l.strategies - 1) * BAR_GAP + 2 * GROUP_PAD;
    l.plot_w = l.loads * l.group_w;
    l.panel_w = PANEL_AXIS_L + l.plot_w + PANEL_R;
    l.panel_h = PANEL_TITLE_H + PLOT_H + PANEL_XLABEL_H;

    /* Header text first: the figure is as wide as the grid or the widest header line. */
    char machine[640], how[320];
    snprintf(machine, sizeof machine, "%.200s%s%.60s%s%.60s \xC2\xB7 commit %.60s%s%.60s",
             d.gpu ? d.gpu : "unknown GPU", d.driver ? " \xC2\xB7 driver " : "",
             d.driver ? d.driver : "", d.cuda ? " \xC2\xB7 CUDA " : "", d.cuda ? d.cuda : "",
             d.commit ? d.commit : "unknown", d.date ? " \xC2\xB7 " : "", d.date ? d.date : "");
    if (opt->block)
        snprintf(how, sizeof how, "all strategies at block %u", opt->block);
    else
        snprintf(how, sizeof how, "each strategy at its fastest block size (min median over "
                 "the blocks run)");
    strncat(how, "; below the dashed line = faster than naive; under each load: naive's median "
            "kernel time", sizeof how - strlen(how) - 1);
    const char *title = opt->title ? opt->title : "Vertex processing time relative to naive";
    const double grid_w = FIG_L + l.cols * l.panel_w + FIG_R;
    double head_w = legend_width(&l, &d, order);
    const double text_w[] = {10.0 * strlen(title), 6.7 * strlen(machine), 6.1 * strlen(how)};
    for (size_t i = 0; i < 3; ++i)
        head_w = text_w[i] > head_w ? text_w[i] : head_w;
    l.fig_w = grid_w > head_w + 24 ? grid_w : head_w + 24;
    const double grid_x = (l.fig_w - grid_w) / 2;

    /* Caption lines: the bench command from the CSV and the plotting command. */
    const size_t wrap = (size_t)((l.fig_w - 2 * FIG_L) / CAPTION_CHAR_W);
    const double grid_top = FIG_HEAD_H;
    const double grid_h = l.rows * l.panel_h + (l.rows - 1) * PANEL_GAP_Y;
    double caption_h = 0;
    /* bench CSVs record "vreuse bench ..."; those written before the CLI layer "bench ..." */
    const char *data_prefix =
        d.command && !strncmp(d.command, "vreuse ", 7) ? "data: " : "data: vreuse ";
    if (d.command)
        caption(NULL, 0, &caption_h, data_prefix, d.command, wrap);
    if (opt->command)
        caption(NULL, 0, &caption_h, "plot: ", opt->command, wrap);
    l.fig_h = grid_top + grid_h + 8 + caption_h + 12;

    f = fopen(svg_path, "w");
    if (!f) {
        s = VR_ERROR(VR_ERR_IO, "cannot write '%s': %s", svg_name, strerror(errno));
        goto done;
    }
    vr_svg_begin(f, l.fig_w, l.fig_h);

    /* Headline, then the machine, then how the bars were chosen. */
    vr_svg_text(f, title, "x=\"%.1f\" y=\"26\" font-size=\"17\" font-weight=\"bold\" "
                "text-anchor=\"middle\"", l.fig_w / 2);
    vr_svg_text(f, machine, "x=\"%.1f\" y=\"46\" font-size=\"12\" fill=\"#333\" "
                "text-anchor=\"middle\"", l.fig_w / 2);
    vr_svg_text(f, how, "x=\"%.1f\" y=\"63\" font-size=\"11\" fill=\"#555\" "
                "text-anchor=\"middle\"", l.fig_w / 2);
    write_legend(f, &l, &d, order, color, 88);

    for (size_t p = 0; p < l.panels; ++p) {
        const double px = grid_x + FIG_L + (p % l.cols) * l.panel_w;
        const double py = grid_top + (p / l.cols) * (l.panel_h + PANEL_GAP_Y);
        write_panel(f, &l, &d, panel[p], &cell[p * l.loads * l.strategies], load_of, order,
                    color, px, py, naive_k);
        if (p % l.cols == 0)
            vr_svg_text(f, "time relative to naive", "transform=\"translate(%.1f %.1f) "
                        "rotate(-90)\" text-anchor=\"middle\" font-size=\"12\"",
                        grid_x + FIG_L - 16, py + PANEL_TITLE_H + PLOT_H / 2);
    }

    double cy = grid_top + grid_h + 8;
    vr_svg_group(f, "font-family=\"DejaVu Sans Mono, Menlo, Consolas, monospace\" "
                 "font-size=\"10\" fill=\"#444\"");
    if (d.command)
        caption(f, FIG_L, &cy, data_prefix, d.command, wrap);
    if (opt->command)
        caption(f, FIG_L, &cy, "plot: ", opt->command, wrap);
    vr_svg_group_end(f);
    /* a failed write leaves the caller's temporary to go (vr_cli_write_via), never a path here */
    s = vr_svg_end(f, "plot-bench", svg_name);
    if (fclose(f) != 0 && s == VR_OK)
        s = VR_ERROR(VR_ERR_IO, "writing '%s' failed", svg_name);
    f = NULL;

done:
    if (f)
        fclose(f);
    free(cell);
    free(load_of);
    free(color);
    free(order);
    free(panel);
    data_free(&d);
    return s;
}
