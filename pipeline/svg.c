/* svg.c - the shared SVG writer of svg.h: one escaping rule and one number format (%.1f) for
 * every figure vreuse draws (sim/plot.c, bench/plot.c). Element functions write one element and
 * its newline; callers compose figures from them and own the layout.
 * Try: `vreuse sim sphere --plot sphere.svg`, `vreuse_tests bench/plot`.
 */
#include "pipeline/svg.h"

#include <assert.h>
#include <stdarg.h>

void vr_svg_begin(FILE *f, double width, double height)
{
    assert(f != NULL);
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
               "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
               "viewBox=\"0 0 %.0f %.0f\" font-family=\"Helvetica, Arial, sans-serif\" "
               "font-size=\"12\">\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
            width, height, width, height);
}

vr_status vr_svg_end(FILE *f, const char *who, const char *path)
{
    assert(f != NULL && who != NULL);
    fputs("</svg>\n", f);
    if (fflush(f) != 0 || ferror(f))
        return VR_ERROR(VR_ERR_IO, "%s: writing %s%s%s failed. Hint: is the disk full?", who,
                        path ? "'" : "the SVG", path ? path : "", path ? "'" : "");
    return VR_OK;
}

void vr_svg_escape(FILE *f, const char *s)
{
    assert(f != NULL && s != NULL);
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        unsigned c = *p;
        size_t n = c < 0x80 ? 1 : c < 0xC2 ? 0 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : c < 0xF5 ? 4 : 0;
        size_t ok = n;
        for (size_t i = 1; i < n && ok; ++i)
            if ((p[i] & 0xC0) != 0x80)
                ok = 0;
        /* no overlong forms, UTF-16 surrogates or code points above U+10FFFF */
        if (ok && ((c == 0xE0 && p[1] < 0xA0) || (c == 0xED && p[1] >= 0xA0) ||
                   (c == 0xF0 && p[1] < 0x90) || (c == 0xF4 && p[1] >= 0x90)))
            ok = 0;
        if (!ok) {
            fputc('?', f);
            ++p;
            continue;
        }
        if (n > 1) {
            fwrite(p, 1, n, f);
            p += n;
            continue;
        }
        switch (c) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        default: fputc(c < 0x20 ? '?' : (int)c, f);
        }
        ++p;
    }
}

/* " ATTRS" when there are any; the element's own text is written around it. */
static void attrs_v(FILE *f, const char *attrs, va_list ap)
{
    if (!attrs || !*attrs)
        return;
    fputc(' ', f);
    vfprintf(f, attrs, ap);
}

void vr_svg_text(FILE *f, const char *text, const char *attrs, ...)
{
    assert(f != NULL && text != NULL);
    va_list ap;
    va_start(ap, attrs);
    fputs("<text", f);
    attrs_v(f, attrs, ap);
    va_end(ap);
    fputc('>', f);
    vr_svg_escape(f, text);
    fputs("</text>\n", f);
}

void vr_svg_line(FILE *f, double x1, double y1, double x2, double y2, const char *attrs, ...)
{
    assert(f != NULL);
    va_list ap;
    va_start(ap, attrs);
    fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"", x1, y1, x2, y2);
    attrs_v(f, attrs, ap);
    va_end(ap);
    fputs("/>\n", f);
}

void vr_svg_rect(FILE *f, double x, double y, double width, double height, const char *attrs, ...)
{
    assert(f != NULL);
    va_list ap;
    va_start(ap, attrs);
    fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"", x, y, width, height);
    attrs_v(f, attrs, ap);
    va_end(ap);
    fputs("/>\n", f);
}

void vr_svg_circle(FILE *f, double cx, double cy, double r, const char *attrs, ...)
{
    assert(f != NULL);
    va_list ap;
    va_start(ap, attrs);
    fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%.1f\"", cx, cy, r);
    attrs_v(f, attrs, ap);
    va_end(ap);
    fputs("/>\n", f);
}

void vr_svg_polyline(FILE *f, const double *xy, size_t point_count, const char *attrs, ...)
{
    assert(f != NULL && (xy != NULL || point_count == 0));
    va_list ap;
    va_start(ap, attrs);
    fputs("<polyline", f);
    attrs_v(f, attrs, ap);
    va_end(ap);
    fputs(" points=\"", f);
    for (size_t i = 0; i < point_count; ++i)
        fprintf(f, "%s%.1f,%.1f", i ? " " : "", xy[2 * i], xy[2 * i + 1]);
    fputs("\"/>\n", f);
}

void vr_svg_group(FILE *f, const char *attrs, ...)
{
    assert(f != NULL);
    va_list ap;
    va_start(ap, attrs);
    fputs("<g", f);
    attrs_v(f, attrs, ap);
    va_end(ap);
    fputs(">\n", f);
}

void vr_svg_group_end(FILE *f)
{
    assert(f != NULL);
    fputs("</g>\n", f);
}
