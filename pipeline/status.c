/* status.c - status strings and the thread-local error message of the last failure. */
#include "pipeline/vreuse.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static _Thread_local char g_message[1024];
static _Thread_local char g_where[128];

const char *vr_status_string(vr_status s)
{
    switch (s) {
    case VR_OK: return "ok";
    case VR_ERR_CUDA: return "CUDA error";
    case VR_ERR_OOM: return "out of memory";
    case VR_ERR_OVERFLOW: return "overflow";
    case VR_ERR_IO: return "I/O error";
    case VR_ERR_FORMAT: return "malformed input";
    case VR_ERR_ARG: return "invalid argument";
    case VR_ERR_NO_DEVICE: return "no CUDA device";
    }
    return "unknown status";
}

const char *vr_last_error(void) { return g_message; }
const char *vr_last_error_where(void) { return g_where; }

/* Formats into a local buffer first: the arguments may point into g_message itself. */
static void record(const char *where, const char *fmt, va_list ap)
{
    char buf[sizeof g_message];
    vsnprintf(buf, sizeof buf, fmt, ap);
    memcpy(g_message, buf, sizeof buf);
    snprintf(g_where, sizeof g_where, "%s", where ? where : "");
}

vr_status vr_set_error(vr_status s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    record(NULL, fmt, ap);
    va_end(ap);
    return s;
}

vr_status vr_set_error_at(vr_status s, const char *where, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    record(where, fmt, ap);
    va_end(ap);
    return s;
}

vr_status vr_mesh_validate(const vr_mesh *m, const char *what)
{
    if (m->index_count == 0)
        return VR_ERROR(VR_ERR_FORMAT, "%s: no triangles", what);
    if (m->index_count % 3 != 0)
        return VR_ERROR(VR_ERR_FORMAT, "%s: index count %u is not a multiple of 3", what,
                        m->index_count);
    for (uint32_t i = 0; i < m->index_count; ++i)
        if (m->indices[i] >= m->vertex_count)
            return VR_ERROR(VR_ERR_FORMAT,
                            "%s: index %u at position %u is out of range (vertex count %u)",
                            what, m->indices[i], i, m->vertex_count);
    return VR_OK;
}

/* Decimal only, parsed digit by digit (strtod would accept nan, inf, hex, exponents, blanks
 * and signs, and 1.1k would round through binary floating point): DIGITS[.DIGITS][k|K|m|M],
 * a whole number after scaling, 1 .. 1e12. */
static int parse_count(const char *s, uint64_t *out)
{
    const uint64_t max = 1000000000000ull;
    uint64_t whole = 0;
    const char *p = s, *frac = NULL;
    size_t whole_digits = 0, frac_digits = 0;
    for (; *p >= '0' && *p <= '9'; ++p, ++whole_digits)
        if ((whole = whole * 10 + (uint64_t)(*p - '0')) > max)
            return -1;
    if (*p == '.') {
        frac = ++p;
        for (; *p >= '0' && *p <= '9'; ++p)
            ++frac_digits;
        if (frac_digits == 0)
            return -1; /* "5." */
    }
    if (whole_digits == 0 && frac_digits == 0)
        return -1;
    int scale = 0;
    if (*p == 'k' || *p == 'K')
        scale = 3, ++p;
    else if (*p == 'm' || *p == 'M')
        scale = 6, ++p;
    if (*p != '\0')
        return -1;
    /* the first `scale` fraction digits join the number, the rest must be zeros */
    uint64_t v = whole;
    for (int k = 0; k < scale; ++k)
        v = v * 10 + ((size_t)k < frac_digits ? (uint64_t)(frac[k] - '0') : 0);
    for (size_t k = (size_t)scale; k < frac_digits; ++k)
        if (frac[k] != '0')
            return -1; /* not a whole count: "0.5", "1.0005k" */
    if (v == 0 || v > max)
        return -1;
    *out = v;
    return 0;
}

vr_status vr_parse_count(const char *s, uint64_t *out)
{
    if (parse_count(s, out) != 0)
        return vr_set_error(VR_ERR_ARG, "'%.40s%s' is not a count (a whole number from 1 to 1e12, "
                            "digits with an optional k or M: 82k, 1.5M, 1000)", s,
                            strlen(s) > 40 ? "..." : "");
    return VR_OK;
}

int vr_progress_quiet;

void vr_progress(const char *what, uint64_t done, uint64_t total)
{
    static struct timespec start, last;
    static const char *current;
    static int shown;
    struct timespec now;
    if (vr_progress_quiet)
        return;
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (current != what || done == 0) {
        current = what;
        start = last = now;
        shown = 0;
    }
    double since_start = (now.tv_sec - start.tv_sec) + (now.tv_nsec - start.tv_nsec) * 1e-9;
    double since_last = (now.tv_sec - last.tv_sec) + (now.tv_nsec - last.tv_nsec) * 1e-9;
    if (done >= total) {
        if (shown)
            fprintf(stderr, "\r%s: 100%% (%.1f s)\n", what, since_start);
        current = NULL;
        return;
    }
    if (since_start < 1.0 || since_last < 0.5)
        return;
    last = now;
    shown = 1;
    fprintf(stderr, "\r%s: %3d%%", what, (int)(100.0 * (double)done / (double)total));
    fflush(stderr);
}

const char *vr_path_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash && slash[1] ? slash + 1 : path;
}

double vr_now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

const char *vr_format_count(char *buf, unsigned long long v)
{
    char tmp[32];
    int n = snprintf(tmp, sizeof tmp, "%llu", v), o = 0;
    for (int i = 0; i < n; ++i) {
        if (i && (n - i) % 3 == 0)
            buf[o++] = ',';
        buf[o++] = tmp[i];
    }
    buf[o] = 0;
    return buf;
}
