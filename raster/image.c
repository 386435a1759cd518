/* image.c - RGBA8 images around the rasterizer: PNG read/write through libpng's simplified API,
 * blits and fills to compose side-by-side panels (the paper's Figure 7 layout), a 5x7 bitmap
 * font for panel labels, and the heatmap legend drawn with the resolve's own colour ramp.
 * Try: `vreuse render bunny.obj --strategy naive,warp,hash --heatmap --out heat.png`.
 */
#include "raster/raster_common.h"

#include <assert.h>
#include <errno.h>
#include <png.h>
#include <stdio.h>
#include <stdlib.h>

vr_status vr_image_write_png(const char *path, const uint8_t *rgba, uint32_t width,
                             uint32_t height)
{
    assert(path && rgba);
    if (width == 0 || height == 0 || width > 0x7fffffffu / 4)
        return VR_ERROR(VR_ERR_ARG, "%s: cannot write a %ux%u image", path, width, height);
    png_image img;
    memset(&img, 0, sizeof img);
    img.version = PNG_IMAGE_VERSION;
    img.width = width;
    img.height = height;
    img.format = PNG_FORMAT_RGBA;
    /* open the file here: libpng's own fopen message repeats strerror() */
    FILE *f = fopen(path, "wb");
    if (!f)
        return VR_ERROR(VR_ERR_IO, "%s: cannot create: %s. Hint: does the directory exist and is "
                                   "it writable?", path, strerror(errno));
    const int ok = png_image_write_to_stdio(&img, f, 0, rgba, (png_int_32)(4 * width), NULL);
    const int closed = fclose(f) == 0;
    if (!ok || !closed) {
        vr_status s = VR_ERROR(VR_ERR_IO, "%s: writing PNG failed: %s", path,
                               !ok ? img.message : strerror(errno));
        /* the caller owns what is left at `path` (the command line writes a temporary and
         * drops it; a device such as /dev/full must never be removed) */
        png_image_free(&img);
        return s;
    }
    return VR_OK;
}

vr_status vr_image_read_png(uint8_t **rgba, uint32_t *width, uint32_t *height, const char *path)
{
    assert(rgba && width && height && path);
    *rgba = NULL;
    *width = *height = 0;
    png_image img;
    memset(&img, 0, sizeof img);
    img.version = PNG_IMAGE_VERSION;
    if (!png_image_begin_read_from_file(&img, path))
        return VR_ERROR(VR_ERR_IO, "%s: reading PNG failed: %s", path, img.message);
    img.format = PNG_FORMAT_RGBA;
    const size_t bytes = PNG_IMAGE_SIZE(img);
    uint8_t *buf = malloc(bytes ? bytes : 1);
    if (!buf) {
        png_image_free(&img);
        return VR_ERROR(VR_ERR_OOM, "%s: %zu bytes for a %ux%u image", path, bytes, img.width,
                        img.height);
    }
    if (!png_image_finish_read(&img, NULL, buf, 0, NULL)) {
        free(buf);
        return VR_ERROR(VR_ERR_FORMAT, "%s: decoding PNG failed: %s", path, img.message);
    }
    *rgba = buf;
    *width = img.width;
    *height = img.height;
    return VR_OK;
}

void vr_image_blit(uint8_t *dst, uint32_t dst_w, uint32_t dst_h, int x, int y, const uint8_t *src,
                   uint32_t src_w, uint32_t src_h)
{
    assert(dst && src);
    for (uint32_t j = 0; j < src_h; ++j) {
        const int64_t dy = (int64_t)y + j;
        if (dy < 0 || dy >= (int64_t)dst_h)
            continue;
        int64_t i0 = x < 0 ? -(int64_t)x : 0;
        int64_t i1 = (int64_t)dst_w - x < (int64_t)src_w ? (int64_t)dst_w - x : (int64_t)src_w;
        if (i1 <= i0)
            continue;
        memcpy(dst + 4 * ((size_t)dy * dst_w + (size_t)(x + i0)), src + 4 * ((size_t)j * src_w + i0),
               4 * (size_t)(i1 - i0));
    }
}

void vr_image_fill(uint8_t *rgba, uint32_t w, uint32_t h, int x, int y, int rw, int rh,
                   uint32_t colour)
{
    assert(rgba);
    const int x0 = x < 0 ? 0 : x, y0 = y < 0 ? 0 : y;
    const int x1 = x + rw > (int)w ? (int)w : x + rw, y1 = y + rh > (int)h ? (int)h : y + rh;
    for (int j = y0; j < y1; ++j)
        for (int i = x0; i < x1; ++i)
            memcpy(rgba + 4 * ((size_t)j * w + i), &colour, 4);
}

/* 5x7 glyphs, one byte per row, bit 4 is the leftmost column. */
static const char g_glyph_chars[] = " 0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ.,:-+/()%=_|*#?";
static const uint8_t g_glyphs[][7] = {
    {0, 0, 0, 0, 0, 0, 0},
    {0x0E, 0x11, 0x13, 0x15, 0x19, 0x11, 0x0E}, {0x04, 0x0C, 0x04, 0x04, 0x04, 0x04, 0x0E},
    {0x0E, 0x11, 0x01, 0x02, 0x04, 0x08, 0x1F}, {0x1F, 0x02, 0x04, 0x02, 0x01, 0x11, 0x0E},
    {0x02, 0x06, 0x0A, 0x12, 0x1F, 0x02, 0x02}, {0x1F, 0x10, 0x1E, 0x01, 0x01, 0x11, 0x0E},
    {0x06, 0x08, 0x10, 0x1E, 0x11, 0x11, 0x0E}, {0x1F, 0x01, 0x02, 0x04, 0x08, 0x08, 0x08},
    {0x0E, 0x11, 0x11, 0x0E, 0x11, 0x11, 0x0E}, {0x0E, 0x11, 0x11, 0x0F, 0x01, 0x02, 0x0C},
    {0x0E, 0x11, 0x11, 0x11, 0x1F, 0x11, 0x11}, {0x1E, 0x11, 0x11, 0x1E, 0x11, 0x11, 0x1E},
    {0x0E, 0x11, 0x10, 0x10, 0x10, 0x11, 0x0E}, {0x1C, 0x12, 0x11, 0x11, 0x11, 0x12, 0x1C},
    {0x1F, 0x10, 0x10, 0x1E, 0x10, 0x10, 0x1F}, {0x1F, 0x10, 0x10, 0x1E, 0x10, 0x10, 0x10},
    {0x0E, 0x11, 0x10, 0x17, 0x11, 0x11, 0x0F}, {0x11, 0x11, 0x11, 0x1F, 0x11, 0x11, 0x11},
    {0x0E, 0x04, 0x04, 0x04, 0x04, 0x04, 0x0E}, {0x07, 0x02, 0x02, 0x02, 0x02, 0x12, 0x0C},
    {0x11, 0x12, 0x14, 0x18, 0x14, 0x12, 0x11}, {0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x1F},
    {0x11, 0x1B, 0x15, 0x15, 0x11, 0x11, 0x11}, {0x11, 0x11, 0x19, 0x15, 0x13, 0x11, 0x11},
    {0x0E, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0E}, {0x1E, 0x11, 0x11, 0x1E, 0x10, 0x10, 0x10},
    {0x0E, 0x11, 0x11, 0x11, 0x15, 0x12, 0x0D}, {0x1E, 0x11, 0x11, 0x1E, 0x14, 0x12, 0x11},
    {0x0F, 0x10, 0x10, 0x0E, 0x01, 0x01, 0x1E}, {0x1F, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04},
    {0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0E}, {0x11, 0x11, 0x11, 0x11, 0x11, 0x0A, 0x04},
    {0x11, 0x11, 0x11, 0x15, 0x15, 0x15, 0x0A}, {0x11, 0x11, 0x0A, 0x04, 0x0A, 0x11, 0x11},
    {0x11, 0x11, 0x11, 0x0A, 0x04, 0x04, 0x04}, {0x1F, 0x01, 0x02, 0x04, 0x08, 0x10, 0x1F},
    {0, 0, 0, 0, 0, 0x0C, 0x0C},                {0, 0, 0, 0, 0x0C, 0x04, 0x08},
    {0, 0x0C, 0x0C, 0, 0x0C, 0x0C, 0},          {0, 0, 0, 0x1F, 0, 0, 0},
    {0, 0x04, 0x04, 0x1F, 0x04, 0x04, 0},       {0, 0x01, 0x02, 0x04, 0x08, 0x10, 0},
    {0x02, 0x04, 0x08, 0x08, 0x08, 0x04, 0x02}, {0x08, 0x04, 0x02, 0x02, 0x02, 0x04, 0x08},
    {0x18, 0x19, 0x02, 0x04, 0x08, 0x13, 0x03}, {0, 0, 0x1F, 0, 0x1F, 0, 0},
    {0, 0, 0, 0, 0, 0, 0x1F},                   {0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04},
    {0, 0x04, 0x15, 0x0E, 0x15, 0x04, 0},       {0x0A, 0x0A, 0x1F, 0x0A, 0x1F, 0x0A, 0x0A},
    {0x0E, 0x11, 0x01, 0x02, 0x04, 0, 0x04},
};

int vr_image_text(uint8_t *rgba, uint32_t w, uint32_t h, int x, int y, int scale, uint32_t colour,
                  const char *text)
{
    assert(rgba && text && scale >= 1);
    _Static_assert(sizeof g_glyphs / sizeof g_glyphs[0] == sizeof g_glyph_chars - 1,
                   "one glyph per character");
    int pen = x;
    for (const char *c = text; *c; ++c) {
        char ch = *c >= 'a' && *c <= 'z' ? (char)(*c - 'a' + 'A') : *c;
        const char *at = strchr(g_glyph_chars, ch);
        const size_t index = at && ch ? (size_t)(at - g_glyph_chars) : sizeof g_glyph_chars - 2;
        const uint8_t *g = g_glyphs[index];
        for (int r = 0; r < 7; ++r)
            for (int b = 0; b < 5; ++b)
                if (g[r] >> (4 - b) & 1)
                    vr_image_fill(rgba, w, h, pen + b * scale, y + r * scale, scale, scale, colour);
        pen += 6 * scale;
    }
    return pen - x;
}

void vr_image_heat_legend(uint8_t *rgba, uint32_t w, uint32_t h, int x, int y, int rw, int rh,
                          int scale)
{
    assert(rgba && scale >= 1);
    const int label_h = 9 * scale, bar_h = rh - label_h;
    if (rw < 2 || bar_h < 1)
        return;
    for (int i = 0; i < rw; ++i) {
        float rgb[3];
        vr_heat_colour(1.0f + 5.0f * (float)i / (float)(rw - 1), rgb);
        vr_image_fill(rgba, w, h, x + i, y, 1, bar_h, vr_pack_rgba(rgb[0], rgb[1], rgb[2]));
    }
    static const char *labels[] = {"1", "2", "3", "4", "5", "6+"};
    for (int k = 0; k < 6; ++k) {
        const int tx = x + (rw - 1) * k / 5;
        vr_image_fill(rgba, w, h, tx, y + bar_h, 1, 2 * scale, 0xffffffffu);
        const int tw = 6 * scale * (int)strlen(labels[k]) - scale;
        int lx = tx - tw / 2;
        lx = lx < x ? x : lx + tw > x + rw ? x + rw - tw : lx;
        vr_image_text(rgba, w, h, lx, y + bar_h + 2 * scale, scale, 0xffffffffu, labels[k]);
    }
}

