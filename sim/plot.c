/* plot.c - SVG figure of one simulated scene: vertex reuse against post-transform cache size
 * (log2 x axis) for FIFO and LRU caches, the per-multiprocessor parallel caches as markers at
 * their entry counts, and ideal, dynamic batching and warp voting as labelled horizontal lines
 * (Kenzel et al. 2018, Table 1 as a picture). Plain SVG 1.1 text, no dependencies.
 * Try: `vreuse sim sphere --plot sphere.svg`.
 */
#include "sim/sim_private.h"

#include "pipeline/svg.h"

#include <assert.h>
#include <math.h>
#include <string.h>

#define SVG_W 760.0
#define SVG_H 510.0
#define PLOT_L 78.0   /* plot area in SVG units */
#define PLOT_R 590.0
#define PLOT_T 64.0
#define PLOT_B 380.0

#define COLOR_FIFO "#1f77b4"
#define COLOR_LRU "#ff7f0e"
#define COLOR_PC "#555555"
#define COLOR_IDEAL "#000000"
#define COLOR_DYN "#2ca02c"
#define COLOR_WARP "#d62728"

typedef struct plot_axes {
    double x0, x1; /* log2(entries) at PLOT_L and PLOT_R */
    double y0, y1; /* reuse at PLOT_B and PLOT_T */
} plot_axes;

static double px(const plot_axes *a, double entries)
{
    return PLOT_L + (log2(entries) - a->x0) / (a->x1 - a->x0) * (PLOT_R - PLOT_L);
}

static double py(const plot_axes *a, double reuse)
{
    return PLOT_B - (reuse - a->y0) / (a->y1 - a->y0) * (PLOT_B - PLOT_T);
}

static void marker(FILE *f, int shape, double x, double y, const char *color, int hollow)
{
    const char *fill = hollow ? "white" : color;
    if (shape == 0)
        vr_svg_circle(f, x, y, 3.5, "fill=\"%s\" stroke=\"%s\" stroke-width=\"1.5\"", fill, color);
    else if (shape == 1)
        fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"7\" height=\"7\" fill=\"%s\" "
                   "stroke=\"%s\" stroke-width=\"1.5\"/>\n", x - 3.5, y - 3.5, fill, color);
    else
        fprintf(f, "<path d=\"M%.1f %.1fL%.1f %.1fL%.1f %.1fZ\" fill=\"%s\" stroke=\"%s\" "
                   "stroke-width=\"1.5\"/>\n",
                x, y - 5, x + 4.5, y + 3.5, x - 4.5, y + 3.5, fill, color);
}

static void curve(FILE *f, const plot_axes *a, const uint32_t *sizes, const vr_sim_result *res,
                  uint32_t n, const char *color, int shape)
{
    if (n == 0)
        return;
    /* Sizes may come in any order; draw the polyline left to right. */
    uint32_t order[VR_SIM_MAX_CACHES];
    for (uint32_t i = 0; i < n; ++i)
        order[i] = i;
    for (uint32_t i = 1; i < n; ++i)
        for (uint32_t j = i; j > 0 && sizes[order[j - 1]] > sizes[order[j]]; --j) {
            uint32_t t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    double xy[2 * VR_SIM_MAX_CACHES] = {0};
    for (uint32_t i = 0; i < n; ++i) {
        xy[2 * i] = px(a, sizes[order[i]]);
        xy[2 * i + 1] = py(a, res[order[i]].reuse);
    }
    vr_svg_polyline(f, xy, n, "fill=\"none\" stroke=\"%s\" stroke-width=\"2\"", color);
    for (uint32_t i = 0; i < n; ++i)
        marker(f, shape, px(a, sizes[i]), py(a, res[i].reuse), color, 0);
}

typedef struct hline {
    const char *color, *dash;
    char label[64];
    double reuse, y, label_y;
} hline;

/* The horizontal strategies as a legend key: a short stroke in the line's style. */
static void legend_line(FILE *f, double x, double y, const char *color, const char *dash,
                        int shape, int hollow, const char *text)
{
    if (dash)
        vr_svg_line(f, x, y, x + 26, y, "stroke=\"%s\" stroke-width=\"2\"%s%s%s", color,
                    *dash ? " stroke-dasharray=\"" : "", dash, *dash ? "\"" : "");
    if (shape >= 0)
        marker(f, shape, x + 13, y, color, hollow);
    vr_svg_text(f, text, "x=\"%.1f\" y=\"%.1f\"", x + 32, y + 4);
}

vr_status vr_sim_write_svg(FILE *f, const vr_sim_report *p, const vr_sim_config *cfg)
{
    assert(f != NULL && p != NULL && cfg != NULL);

    /* x range: every simulated cache size, parallel caches included, half a step of margin. */
    double lo = INFINITY, hi = -INFINITY;
    for (uint32_t i = 0; i < cfg->fifo_count; ++i)
        lo = fmin(lo, cfg->fifo_sizes[i]), hi = fmax(hi, cfg->fifo_sizes[i]);
    for (uint32_t i = 0; i < cfg->lru_count; ++i)
        lo = fmin(lo, cfg->lru_sizes[i]), hi = fmax(hi, cfg->lru_sizes[i]);
    int have_pc = cfg->assign_mask != 0 && cfg->parallel_count > 0;
    for (uint32_t i = 0; have_pc && i < cfg->parallel_count; ++i) {
        double e = cfg->parallel_bytes[i] / cfg->vertex_bytes;
        lo = fmin(lo, e), hi = fmax(hi, e);
    }
    if (!(lo <= hi))
        lo = 4, hi = 4096;
    plot_axes a = {floor(log2(lo)) - 0.5, ceil(log2(hi)) + 0.5, 0, 1};
    if (a.x1 - a.x0 < 2)
        a.x0 -= 1, a.x1 += 1;

    /* y range: 0.1 steps around every value; reuse is at most 1 and may be negative. */
    double vmin = p->ideal.reuse, vmax = p->ideal.reuse;
#define SPAN(r) (vmin = fmin(vmin, (r)), vmax = fmax(vmax, (r)))
    for (uint32_t i = 0; i < cfg->fifo_count; ++i)
        SPAN(p->fifo[i].reuse);
    for (uint32_t i = 0; i < cfg->lru_count; ++i)
        SPAN(p->lru[i].reuse);
    for (uint32_t s = 0; s < VR_SIM_ASSIGN_COUNT; ++s)
        if (cfg->assign_mask & (1u << s))
            for (uint32_t i = 0; i < cfg->parallel_count; ++i)
                SPAN(p->parallel[s][i].reuse);
    if (cfg->warp)
        SPAN(p->warp.reuse);
    if (cfg->dynamic)
        SPAN(p->dynamic.reuse);
#undef SPAN
    a.y0 = fmin(0.0, floor(vmin * 10.0 - 1e-9) / 10.0);
    a.y1 = fmax(a.y0 + 0.1, fmin(1.0, ceil(vmax * 10.0 + 1e-9) / 10.0));
    const double ystep = a.y1 - a.y0 > 1.01 ? 0.2 : 0.1;

    char text[160];
    vr_svg_begin(f, SVG_W, SVG_H);
    snprintf(text, sizeof text, "%s \xe2\x80\x94 %s order", p->scene, p->order);
    vr_svg_text(f, text, "x=\"%.1f\" y=\"26\" font-size=\"16\" font-weight=\"bold\" "
                "text-anchor=\"middle\"", (PLOT_L + PLOT_R) / 2);
    snprintf(text, sizeof text, "%u vertices, %llu triangles; reuse = 1 \xe2\x88\x92 shader "
             "invocations / indices", p->referenced_vertices, (unsigned long long)p->triangles);
    vr_svg_text(f, text, "x=\"%.1f\" y=\"45\" font-size=\"11\" fill=\"#555\" "
                "text-anchor=\"middle\"", (PLOT_L + PLOT_R) / 2);

    /* Grid and ticks. */
    vr_svg_group(f, "stroke=\"#e3e3e3\" stroke-width=\"1\"");
    int ticks = (int)(a.x1 - a.x0);
    int xstep = ticks > 12 ? 2 : 1;
    for (int e = (int)ceil(a.x0); e <= (int)floor(a.x1); e += xstep)
        vr_svg_line(f, px(&a, ldexp(1.0, e)), PLOT_T, px(&a, ldexp(1.0, e)), PLOT_B, NULL);
    for (double y = a.y0; y <= a.y1 + 1e-9; y += ystep)
        vr_svg_line(f, PLOT_L, py(&a, y), PLOT_R, py(&a, y), NULL);
    vr_svg_group_end(f);
    vr_svg_group(f, "text-anchor=\"middle\"");
    for (int e = (int)ceil(a.x0); e <= (int)floor(a.x1); e += xstep) {
        snprintf(text, sizeof text, "%.0f", ldexp(1.0, e));
        vr_svg_text(f, text, "x=\"%.1f\" y=\"%.1f\"", px(&a, ldexp(1.0, e)), PLOT_B + 17);
    }
    vr_svg_group_end(f);
    vr_svg_group(f, "text-anchor=\"end\"");
    for (double y = a.y0; y <= a.y1 + 1e-9; y += ystep) {
        snprintf(text, sizeof text, "%.1f", fabs(y) < 1e-9 ? 0.0 : y);
        vr_svg_text(f, text, "x=\"%.1f\" y=\"%.1f\"", PLOT_L - 7, py(&a, y) + 4);
    }
    vr_svg_group_end(f);
    if (a.y0 < 0) /* reuse 0 = naive: make the break-even line visible */
        vr_svg_line(f, PLOT_L, py(&a, 0), PLOT_R, py(&a, 0), "stroke=\"#999\"");
    vr_svg_rect(f, PLOT_L, PLOT_T, PLOT_R - PLOT_L, PLOT_B - PLOT_T,
                "fill=\"none\" stroke=\"#333\"");
    vr_svg_text(f, "post-transform cache size (vertices, log\xe2\x82\x82 scale)",
                "x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"13\"",
                (PLOT_L + PLOT_R) / 2, PLOT_B + 40);
    vr_svg_text(f, "vertex reuse", "transform=\"translate(%.1f %.1f) rotate(-90)\" "
                "text-anchor=\"middle\" font-size=\"13\"", PLOT_L - 48, (PLOT_T + PLOT_B) / 2);

    /* Batching strategies: horizontal lines with value labels right of the plot, nudged apart
     * so close values (ideal .833, dyn .799) stay readable. */
    hline lines[3];
    int nl = 0;
    lines[nl] = (hline){COLOR_IDEAL, "5 4", "", p->ideal.reuse, 0, 0};
    snprintf(lines[nl++].label, 64, "ideal %.3f", p->ideal.reuse);
    if (cfg->dynamic) {
        lines[nl] = (hline){COLOR_DYN, "10 4", "", p->dynamic.reuse, 0, 0};
        snprintf(lines[nl++].label, 64, "dyn %u/%u %.3f", p->dyn_max_unique,
                 p->dyn_max_indices, p->dynamic.reuse);
    }
    if (cfg->warp) {
        lines[nl] = (hline){COLOR_WARP, "10 3 2 3", "", p->warp.reuse, 0, 0};
        snprintf(lines[nl++].label, 64, "warp %u/%u %.3f", p->warp_batch, cfg->warp_size,
                 p->warp.reuse);
    }
    for (int i = 0; i < nl; ++i)
        lines[i].y = lines[i].label_y = py(&a, lines[i].reuse);
    for (int i = 1; i < nl; ++i) /* sort by y, top first */
        for (int j = i; j > 0 && lines[j - 1].y > lines[j].y; --j) {
            hline t = lines[j];
            lines[j] = lines[j - 1];
            lines[j - 1] = t;
        }
    for (int i = 1; i < nl; ++i)
        if (lines[i].label_y < lines[i - 1].label_y + 14)
            lines[i].label_y = lines[i - 1].label_y + 14;
    for (int i = 0; i < nl; ++i) {
        vr_svg_line(f, PLOT_L, lines[i].y, PLOT_R, lines[i].y,
                    "stroke=\"%s\" stroke-width=\"1.8\" stroke-dasharray=\"%s\"",
                    lines[i].color, lines[i].dash);
        vr_svg_text(f, lines[i].label, "x=\"%.1f\" y=\"%.1f\" fill=\"%s\"", PLOT_R + 8,
                    lines[i].label_y + 4, lines[i].color);
    }

    /* LRU first: FIFO's smaller circles stay visible where the curves coincide. */
    curve(f, &a, cfg->lru_sizes, p->lru, cfg->lru_count, COLOR_LRU, 1);
    curve(f, &a, cfg->fifo_sizes, p->fifo, cfg->fifo_count, COLOR_FIFO, 0);

    /* Parallel caches at their entry counts: filled = contiguous, hollow = roundrobin; one
     * size label per cache, above the higher marker. */
    for (uint32_t i = 0; have_pc && i < cfg->parallel_count; ++i) {
        double x = px(&a, cfg->parallel_bytes[i] / cfg->vertex_bytes), top = PLOT_B;
        for (uint32_t s = 0; s < VR_SIM_ASSIGN_COUNT; ++s)
            if (cfg->assign_mask & (1u << s)) {
                double y = py(&a, p->parallel[s][i].reuse);
                marker(f, 2, x, y, COLOR_PC, s == VR_SIM_ROUNDROBIN);
                top = fmin(top, y);
            }
        char b[16];
        if (cfg->parallel_bytes[i] % 1024 == 0)
            snprintf(b, sizeof b, "%uK", cfg->parallel_bytes[i] / 1024);
        else
            snprintf(b, sizeof b, "%uB", cfg->parallel_bytes[i]);
        vr_svg_text(f, b, "x=\"%.1f\" y=\"%.1f\" font-size=\"10\" fill=\"%s\" "
                    "text-anchor=\"middle\"", x, top - 9, COLOR_PC);
    }

    /* Legend below the axis label, three rows. */
    double ly = PLOT_B + 64, lx = PLOT_L;
    if (cfg->fifo_count)
        legend_line(f, lx, ly, COLOR_FIFO, "", 0, 0, "FIFO cache"), lx += 130;
    if (cfg->lru_count)
        legend_line(f, lx, ly, COLOR_LRU, "", 1, 0, "LRU cache"), lx += 130;
    legend_line(f, lx, ly, COLOR_IDEAL, "5 4", -1, 0, "ideal (each vertex shaded once)");
    ly += 19, lx = PLOT_L;
    if (cfg->dynamic)
        legend_line(f, lx, ly, COLOR_DYN, "10 4", -1, 0, "dynamic batching"), lx += 260;
    if (cfg->warp)
        legend_line(f, lx, ly, COLOR_WARP, "10 3 2 3", -1, 0, "static batches, warp voting");
    if (have_pc) {
        ly += 19, lx = PLOT_L;
        if (cfg->assign_mask & (1u << VR_SIM_CONTIGUOUS))
            legend_line(f, lx, ly, COLOR_PC, NULL, 2, 0, "contiguous"), lx += 110;
        if (cfg->assign_mask & (1u << VR_SIM_ROUNDROBIN))
            legend_line(f, lx, ly, COLOR_PC, NULL, 2, 1, "roundrobin"), lx += 110;
        snprintf(text, sizeof text, "parallel LRU cache per multiprocessor (%u \xc3\x97 %u "
                 "invocations, %u B/vertex)", cfg->sm_count, cfg->wave_size, cfg->vertex_bytes);
        vr_svg_text(f, text, "x=\"%.1f\" y=\"%.1f\"", lx + 6, ly + 4);
    }
    return vr_svg_end(f, "sim", NULL);
}
