/* svg.h - the SVG 1.1 pieces vreuse's figures share: the document frame (size, font, white
 * background), escaped text, and line / rect / circle / polyline elements with coordinates to
 * 0.1 unit. Used by sim/plot.c (reuse against cache size, `vreuse sim --plot`) and bench/plot.c
 * (Figure 9, `vreuse plot-bench`); exercised by `vreuse_tests sim/report_writers bench/plot`.
 * Plain stdio: writes go to the caller's FILE, and vr_svg_end reports whether any failed.
 */
#ifndef VR_SVG_H
#define VR_SVG_H

#include "pipeline/vreuse.h"

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define VR_SVG_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define VR_SVG_PRINTF(fmt, args)
#endif

/* Opens the document: XML declaration, <svg> of width x height units (px at 100%) in
 * Helvetica 12, and a white background. */
void vr_svg_begin(FILE *f, double width, double height);

/* Closes the document and flushes f (it stays open). VR_ERR_IO when any write to f failed;
 * the message starts with `who` ("plot-bench") and names `path`, or "the SVG" when NULL. */
vr_status vr_svg_end(FILE *f, const char *who, const char *path);

/* Text content or attribute value: markup escaped, control bytes and invalid UTF-8 (overlong
 * forms, surrogates, above U+10FFFF) written as '?', so any name gives well-formed XML. */
void vr_svg_escape(FILE *f, const char *s);

/* In each element below, `attrs` is a printf format of further attributes written after the
 * geometry ("stroke=\"%s\"", color), NULL for none, and the element ends its line. */

/* <text ATTRS>TEXT</text>, TEXT escaped; position and style are all in attrs. */
void vr_svg_text(FILE *f, const char *text, const char *attrs, ...) VR_SVG_PRINTF(3, 4);

/* <line x1 y1 x2 y2 ATTRS/> */
void vr_svg_line(FILE *f, double x1, double y1, double x2, double y2, const char *attrs, ...)
    VR_SVG_PRINTF(6, 7);

/* <rect x y width height ATTRS/> */
void vr_svg_rect(FILE *f, double x, double y, double width, double height, const char *attrs, ...)
    VR_SVG_PRINTF(6, 7);

/* <circle cx cy r ATTRS/> */
void vr_svg_circle(FILE *f, double cx, double cy, double r, const char *attrs, ...)
    VR_SVG_PRINTF(5, 6);

/* <polyline ATTRS points="x,y ..."/> through point_count points, xy[2 * i], xy[2 * i + 1]. */
void vr_svg_polyline(FILE *f, const double *xy, size_t point_count, const char *attrs, ...)
    VR_SVG_PRINTF(4, 5);

/* <g ATTRS> on a line of its own, and its </g>. */
void vr_svg_group(FILE *f, const char *attrs, ...) VR_SVG_PRINTF(2, 3);
void vr_svg_group_end(FILE *f);

#ifdef __cplusplus
}
#endif
#endif
