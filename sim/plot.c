/* plot.c - SVG figure of one simulated scene: vertex reuse against post-transform cache size
 * (log2 x axis) for FIFO and LRU caches, the per-multiprocessor parallel caches as markers at
 * their entry counts, and ideal, dynamic batching and warp voting as labelled horizontal lines
 * (Kenzel et al. 2018, Table 1 as a picture). Plain SVG 1.1 text, no dependencies.
 * Try: `vreuse sim sphere --plot sphere.svg`.
 */
#include "sim/sim_private.h"

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

static void xml_text(FILE *f, const char *s)
{
    for (; *s; ++s)
        switch (*s) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        default:
            if ((unsigned char)*s >= 0x20)
                fputc(*s, f);
        }
}

static void marker(FILE *f, int shape, double x, double y, const char *color, int hollow)
{
    const char *fill = hollow ? "white" : color;
    if (shape == 0)
        fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"%s\" stroke=\"%s\" "
                   "stroke-width=\"1.5\"/>\n", x, y, fill, color);
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
    fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"", color);
    for (uint32_t i = 0; i < n; ++i)
        fprintf(f, "%s%.1f,%.1f", i ? " " : "", px(a, sizes[order[i]]),
                py(a, res[order[i]].reuse));
    fprintf(f, "\"/>\n");
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
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
                   "stroke-width=\"2\"%s%s%s/>\n",
                x, y, x + 26, y, color, *dash ? " stroke-dasharray=\"" : "", dash,
                *dash ? "\"" : "");
    if (shape >= 0)
        marker(f, shape, x + 13, y, color, hollow);
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\">%s</text>\n", x + 32, y + 4, text);
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

    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
               "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
               "viewBox=\"0 0 %.0f %.0f\" font-family=\"Helvetica, Arial, sans-serif\" "
               "font-size=\"12\">\n"
               "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
            SVG_W, SVG_H, SVG_W, SVG_H);
    fprintf(f, "<text x=\"%.1f\" y=\"26\" font-size=\"16\" font-weight=\"bold\" "
               "text-anchor=\"middle\">",
            (PLOT_L + PLOT_R) / 2);
    xml_text(f, p->scene);
    fprintf(f, " \xe2\x80\x94 ");
    xml_text(f, p->order);
    fprintf(f, " order</text>\n");
    fprintf(f, "<text x=\"%.1f\" y=\"45\" font-size=\"11\" fill=\"#555\" text-anchor=\"middle\">"
               "%u vertices, %llu triangles; reuse = 1 \xe2\x88\x92 shader invocations / indices"
               "</text>\n",
            (PLOT_L + PLOT_R) / 2, p->referenced_vertices, (unsigned long long)p->triangles);

    /* Grid and ticks. */
    fprintf(f, "<g stroke=\"#e3e3e3\" stroke-width=\"1\">\n");
    int ticks = (int)(a.x1 - a.x0);
    int xstep = ticks > 12 ? 2 : 1;
    for (int e = (int)ceil(a.x0); e <= (int)floor(a.x1); e += xstep)
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n",
                px(&a, ldexp(1.0, e)), PLOT_T, px(&a, ldexp(1.0, e)), PLOT_B);
    for (double y = a.y0; y <= a.y1 + 1e-9; y += ystep)
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", PLOT_L,
                py(&a, y), PLOT_R, py(&a, y));
    fprintf(f, "</g>\n<g text-anchor=\"middle\">\n");
    for (int e = (int)ceil(a.x0); e <= (int)floor(a.x1); e += xstep)
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\">%.0f</text>\n", px(&a, ldexp(1.0, e)),
                PLOT_B + 17, ldexp(1.0, e));
    fprintf(f, "</g>\n<g text-anchor=\"end\">\n");
    for (double y = a.y0; y <= a.y1 + 1e-9; y += ystep)
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\">%.1f</text>\n", PLOT_L - 7, py(&a, y) + 4,
                fabs(y) < 1e-9 ? 0.0 : y);
    fprintf(f, "</g>\n");
    if (a.y0 < 0) /* reuse 0 = naive: make the break-even line visible */
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#999\"/>\n",
                PLOT_L, py(&a, 0), PLOT_R, py(&a, 0));
    fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" "
               "stroke=\"#333\"/>\n",
            PLOT_L, PLOT_T, PLOT_R - PLOT_L, PLOT_B - PLOT_T);
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"13\">"
               "post-transform cache size (vertices, log\xe2\x82\x82 scale)</text>\n",
            (PLOT_L + PLOT_R) / 2, PLOT_B + 40);
    fprintf(f, "<text transform=\"translate(%.1f %.1f) rotate(-90)\" text-anchor=\"middle\" "
               "font-size=\"13\">vertex reuse</text>\n",
            PLOT_L - 48, (PLOT_T + PLOT_B) / 2);

    /* Batching strategies: horizontal lines with value labels right of the plot, nudged apart
     * so close values (ideal .833, dyn .799) stay readable. */
    hline lines[3];
    int nl = 0;
    lines[nl] = (hline){COLOR_IDEAL, "5 4", "", p->ideal.reuse, 0, 0};
    snprintf(lines[nl++].label, 64, "ideal %.3f", p->ideal.reuse);
    if (cfg->dynamic) {
        lines[nl] = (hline){COLOR_DYN, "10 4", "", p->dynamic.reuse, 0, 0};
        snprintf(lines[nl++].label, 64, "dyn %u/%u %.3f", cfg->dyn_max_unique,
                 cfg->dyn_max_indices, p->dynamic.reuse);
    }
    if (cfg->warp) {
        lines[nl] = (hline){COLOR_WARP, "10 3 2 3", "", p->warp.reuse, 0, 0};
        snprintf(lines[nl++].label, 64, "warp %u/%u %.3f", cfg->warp_batch, cfg->warp_size,
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
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
                   "stroke-width=\"1.8\" stroke-dasharray=\"%s\"/>\n",
                PLOT_L, lines[i].y, PLOT_R, lines[i].y, lines[i].color, lines[i].dash);
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" fill=\"%s\">%s</text>\n", PLOT_R + 8,
                lines[i].label_y + 4, lines[i].color, lines[i].label);
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
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" fill=\"%s\" "
                   "text-anchor=\"middle\">%s</text>\n",
                x, top - 9, COLOR_PC, b);
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
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\">parallel LRU cache per multiprocessor "
                   "(%u \xc3\x97 %u invocations, %u B/vertex)</text>\n",
                lx + 6, ly + 4, cfg->sm_count, cfg->wave_size, cfg->vertex_bytes);
    }
    fprintf(f, "</svg>\n");
    fflush(f);
    if (ferror(f))
        return VR_ERROR(VR_ERR_IO, "sim: writing the SVG failed. Hint: disk full?");
    return VR_OK;
}
