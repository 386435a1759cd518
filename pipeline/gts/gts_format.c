/* gts_format.c - the GTS file format and the checks every reader relies on: a versioned
 * 64-byte little-endian header with all counts, the C, INC and Simple-9 word arrays, optional
 * vertex arrays, and an FNV-1a 64 checksum of everything before it. Also the structural
 * validator (counts, strip codes, INC popcount, Simple-9 selectors) and the Table 3 statistics.
 * Try: `vreuse compress horse.ply -o horse.gts && vreuse info horse.gts`, `vreuse_tests gts/file`.
 */
#define _POSIX_C_SOURCE 200809L /* stat */
#include "pipeline/gts/gts.h"
#include "pipeline/gts/gts_math.h"
#include "pipeline/vr_mem.h"

#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define HEADER_BYTES 64u
#define TRAILER_BYTES 8u
#define FLAG_DEGENERATE 1u
#define FLAG_POSITIONS 2u
#define FLAG_NORMALS 4u
#define FLAG_TEXCOORDS 8u
#define FLAG_ALL 15u

static const uint8_t g_magic[8] = {'V', 'R', 'G', 'T', 'S', 0, '\r', '\n'};

/* Bits of C: 2 per strip code in R mode, 1 in deg. mode. */
static uint64_t c_bits(const vr_gts *g)
{
    return (uint64_t)g->strip_triangle_count * (g->restart == VR_GTS_RESTART_CODE ? 2u : 1u);
}

uint32_t vr_gts_c_words(const vr_gts *g) { return (uint32_t)((c_bits(g) + 31) / 32); }

uint32_t vr_gts_inc_words(const vr_gts *g) { return (uint32_t)(((uint64_t)g->v_count + 31) / 32); }


void vr_gts_free(vr_gts *g)
{
    if (!g)
        return;
    void *const bufs[] = {g->c, g->inc, g->s, g->degenerate_source, g->positions, g->normals,
                          g->texcoords};
    vr_free_all(bufs, VR_COUNT_OF(bufs));
    memset(g, 0, sizeof *g);
}

/* ---- validation ------------------------------------------------------------------------------ */

vr_status vr_gts_validate_counts(const vr_gts *g, const char *what)
{
    assert(g && what);
    if (g->restart != VR_GTS_RESTART_CODE && g->restart != VR_GTS_RESTART_DEGENERATE)
        return VR_ERROR(VR_ERR_FORMAT, "%s: restart mode %d is neither 0 (codes) nor 1 "
                        "(degenerate)", what, (int)g->restart);
    const uint64_t n = g->strip_triangle_count;
    if (n == 0 || g->triangle_count == 0)
        return VR_ERROR(VR_ERR_FORMAT, "%s: no triangles (%u source, %u strip)", what,
                        g->triangle_count, g->strip_triangle_count);
    if (n > VR_GTS_MAX_TRIANGLES)
        return VR_ERROR(VR_ERR_FORMAT, "%s: %llu strip triangles exceed the limit %u", what,
                        (unsigned long long)n, VR_GTS_MAX_TRIANGLES);
    if (g->restart_count >= n)
        return VR_ERROR(VR_ERR_FORMAT, "%s: %u restarts for %llu strip triangles", what,
                        g->restart_count, (unsigned long long)n);
    uint64_t want_v;
    if (g->restart == VR_GTS_RESTART_CODE) {
        if (g->triangle_count != n)
            return VR_ERROR(VR_ERR_FORMAT, "%s: R mode has %u source but %llu strip triangles; "
                            "they must be equal", what, g->triangle_count, (unsigned long long)n);
        want_v = n + 2 + 2 * (uint64_t)g->restart_count;
    } else {
        if (g->triangle_count > n || n - g->triangle_count > 4 * (uint64_t)g->restart_count)
            return VR_ERROR(VR_ERR_FORMAT, "%s: deg. mode has %llu strip triangles for %u source "
                            "triangles and %u restarts (at most 4 emulation triangles each)",
                            what, (unsigned long long)n, g->triangle_count, g->restart_count);
        want_v = n + 2;
    }
    if (g->v_count != want_v)
        return VR_ERROR(VR_ERR_FORMAT, "%s: |V| is %u, but %llu strip triangles with %u restarts "
                        "need %llu", what, g->v_count, (unsigned long long)n, g->restart_count,
                        (unsigned long long)want_v);
    if (g->referenced_count == 0 || g->referenced_count > g->vertex_count ||
        g->referenced_count > g->v_count)
        return VR_ERROR(VR_ERR_FORMAT, "%s: %u referenced vertices, but %u vertices and |V| = %u",
                        what, g->referenced_count, g->vertex_count, g->v_count);
    if (g->u_count != g->v_count - g->referenced_count)
        return VR_ERROR(VR_ERR_FORMAT, "%s: |U| is %u, but |V| - referenced = %u - %u", what,
                        g->u_count, g->v_count, g->referenced_count);
    if (g->s_count > g->u_count || (uint64_t)g->s_count * 28 < g->u_count)
        return VR_ERROR(VR_ERR_FORMAT, "%s: %u Simple-9 words cannot hold exactly %u codes "
                        "(1..28 per word)", what, g->s_count, g->u_count);
    if (!g->c || !g->inc || (g->s_count && !g->s))
        return VR_ERROR(VR_ERR_FORMAT, "%s: a word array is missing", what);
    if (g->degenerate_source_count &&
        (g->restart != VR_GTS_RESTART_DEGENERATE || g->degenerate_source_count > g->triangle_count ||
         !g->degenerate_source))
        return VR_ERROR(VR_ERR_FORMAT, "%s: %u degenerate source triangles listed in %s mode with "
                        "%u source triangles (only deg. mode lists them, at most one per source "
                        "triangle)", what, g->degenerate_source_count,
                        g->restart == VR_GTS_RESTART_CODE ? "R" : "deg.", g->triangle_count);
    return VR_OK;
}

vr_status vr_gts_validate(const vr_gts *g, const char *what)
{
    vr_status s = vr_gts_validate_counts(g, what);
    if (s)
        return s;
    const uint32_t n = g->strip_triangle_count, cw = vr_gts_c_words(g);
    if (g->restart == VR_GTS_RESTART_CODE) {
        if ((g->c[0] & 3u) != VR_GTS_CODE_R)
            return VR_ERROR(VR_ERR_FORMAT, "%s: strip code 0 is %u; the first triangle must be R "
                            "(%u)", what, g->c[0] & 3u, VR_GTS_CODE_R);
        uint32_t restarts = 0;
        for (uint32_t i = 1; i < n; ++i) {
            const uint32_t code = vr_gts_code_at(g->c, i, 1u);
            if (code == 3u)
                return VR_ERROR(VR_ERR_FORMAT, "%s: strip code %u is 3; valid codes are N 0, P 1, "
                                "R 2", what, i);
            restarts += code == VR_GTS_CODE_R;
        }
        if (restarts != g->restart_count)
            return VR_ERROR(VR_ERR_FORMAT, "%s: %u R codes after the first triangle, header says "
                            "%u restarts", what, restarts, g->restart_count);
    } else if (g->c[0] & 1u) {
        return VR_ERROR(VR_ERR_FORMAT, "%s: deg. mode strip code 0 is 1; triangle 0 is explicit "
                        "and its code bit must be 0", what);
    }
    const uint32_t used = (uint32_t)(c_bits(g) & 31);
    if (used && g->c[cw - 1] >> used)
        return VR_ERROR(VR_ERR_FORMAT, "%s: padding bits after the last strip code are not zero",
                        what);
    uint64_t ones = 0;
    const uint32_t iw = vr_gts_inc_words(g);
    for (uint32_t k = 0; k < iw; ++k)
        ones += vr_popc(g->inc[k]);
    if ((g->v_count & 31) && g->inc[iw - 1] >> (g->v_count & 31))
        return VR_ERROR(VR_ERR_FORMAT, "%s: padding bits after the last INC bit are not zero",
                        what);
    if (ones != g->referenced_count)
        return VR_ERROR(VR_ERR_FORMAT, "%s: INC has %llu ones, header says %u referenced vertices",
                        what, (unsigned long long)ones, g->referenced_count);
    uint64_t codes = 0;
    for (uint32_t l = 0; l < g->s_count; ++l) {
        if ((s = vr_s9_word_check(g->s[l], l, what)))
            return s;
        codes += vr_gts_s9_count(g->s[l] >> 28);
    }
    if (codes != g->u_count)
        return VR_ERROR(VR_ERR_FORMAT, "%s: Simple-9 words hold %llu codes, |U| is %u", what,
                        (unsigned long long)codes, g->u_count);
    for (uint32_t k = 0; k < g->degenerate_source_count; ++k)
        if (g->degenerate_source[k] >= n || (k && g->degenerate_source[k] <= g->degenerate_source[k - 1]))
            return VR_ERROR(VR_ERR_FORMAT, "%s: degenerate source entry %u is %u; entries must "
                            "increase and stay below %u strip triangles", what, k,
                            g->degenerate_source[k], n);
    return VR_OK;
}

/* ---- statistics --------------------------------------------------------------------------- */

/* The header flags of the vertex arrays g carries. */
static uint32_t data_flags(const vr_gts *g)
{
    return (g->positions ? FLAG_POSITIONS : 0) | (g->normals ? FLAG_NORMALS : 0) |
           (g->texcoords ? FLAG_TEXCOORDS : 0);
}

/* Floats per vertex of the arrays named in `flags` (the writer's and the reader's sizes). */
static uint32_t floats_per_vertex(uint32_t flags)
{
    return (flags & FLAG_POSITIONS ? 3 : 0) + (flags & FLAG_NORMALS ? 3 : 0) +
           (flags & FLAG_TEXCOORDS ? 2 : 0);
}

static size_t vertex_floats(const vr_gts *g)
{
    return (size_t)g->vertex_count * floats_per_vertex(data_flags(g));
}

static uint64_t connectivity_bytes(const vr_gts *g)
{
    return HEADER_BYTES + 4ull * ((uint64_t)vr_gts_c_words(g) + vr_gts_inc_words(g) + g->s_count +
                                  g->degenerate_source_count) +
           TRAILER_BYTES;
}

void vr_gts_stats_compute(vr_gts_stats *o, const vr_gts *g)
{
    assert(o && g);
    memset(o, 0, sizeof *o);
    o->triangles = g->triangle_count;
    o->strip_triangles = g->strip_triangle_count;
    o->restarts = g->restart_count;
    o->strips = (uint64_t)g->restart_count + 1;
    o->vertices = g->vertex_count;
    o->referenced_vertices = g->referenced_count;
    o->v_count = g->v_count;
    o->u_count = g->u_count;
    o->s_words = g->s_count;
    uint32_t b = 1;
    while (b < 32 && (1ull << b) < g->vertex_count)
        ++b;
    o->index_bits = b;
    o->c_bits = c_bits(g);
    o->inc_bits = g->v_count;
    o->s9_bits = 32ull * g->s_count;
    o->file_bytes = connectivity_bytes(g);
    const double n = g->triangle_count ? (double)g->triangle_count : 1.0;
    o->explicit_bpt = 3.0 * b * (double)g->strip_triangle_count / n;
    o->strips_bpt = ((double)o->c_bits + (double)g->v_count * b) / n;
    o->inc_bpt = ((double)o->c_bits + (double)o->inc_bits + (double)g->u_count * b) / n;
    o->s9_bpt = ((double)o->c_bits + (double)o->inc_bits + (double)o->s9_bits) / n;
    o->file_bpt = 8.0 * (double)o->file_bytes / n;
    o->u_per_tri = (double)g->u_count / n;
    o->bits_per_u = g->u_count ? (double)o->s9_bits / (double)g->u_count : 0.0;
}

void vr_gts_print_stats(FILE *f, const vr_gts *g, const char *name)
{
    vr_gts_stats st;
    vr_gts_stats_compute(&st, g);
    char a[32], b[32], c[32];
    const double n = (double)st.triangles;
    fprintf(f, "%s: generalized triangle strips, restarts as %s\n", name,
            g->restart == VR_GTS_RESTART_CODE ? "R codes (2-bit strip codes)"
                                              : "degenerate triangles (1-bit strip codes)");
    fprintf(f, "  triangles        %s source, %s in strips (%s emulation)\n",
            vr_format_count(a, st.triangles), vr_format_count(b, st.strip_triangles),
            vr_format_count(c, st.strip_triangles - st.triangles));
    fprintf(f, "  strips           %s (%.3f%% of triangles restart)\n", vr_format_count(a, st.strips),
            100.0 * (double)st.strips / n);
    fprintf(f, "  vertices         %s (%s referenced), %u bits per explicit index\n",
            vr_format_count(a, st.vertices), vr_format_count(b, st.referenced_vertices), st.index_bits);
    fprintf(f, "  |V| %s, |U| %s (%.3f per triangle), |S| %s words (%.2f bits per U)\n",
            vr_format_count(a, st.v_count), vr_format_count(b, st.u_count), st.u_per_tri, vr_format_count(c, st.s_words),
            st.bits_per_u);
    fprintf(f, "  stage      bits/tri   (paper Table 3 rows; per source triangle)\n");
    fprintf(f, "  explicit   %8.2f\n", st.explicit_bpt);
    fprintf(f, "  strips     %8.2f\n", st.strips_bpt);
    fprintf(f, "  inc.       %8.2f\n", st.inc_bpt);
    fprintf(f, "  S-9        %8.2f   = C %.2f + INC %.2f + S-9 words %.2f\n", st.s9_bpt,
            (double)st.c_bits / n, (double)st.inc_bits / n, (double)st.s9_bits / n);
    if (g->degenerate_source_count)
        fprintf(f, "  file       %8.2f   (%s bytes: S-9 row + 64-byte header + %s degenerate source "
                "triangles listed + checksum)\n", st.file_bpt, vr_format_count(a, st.file_bytes),
                vr_format_count(b, g->degenerate_source_count));
    else
        fprintf(f, "  file       %8.2f   (%s bytes: S-9 row + 64-byte header + checksum)\n",
                st.file_bpt, vr_format_count(a, st.file_bytes));
}

/* ---- file image -------------------------------------------------------------------------- */

static uint64_t fnv1a64(const uint8_t *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; ++i) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

static void put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8), p[2] = (uint8_t)(v >> 16), p[3] = (uint8_t)(v >> 24);
}

static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static int little_endian(void)
{
    const uint32_t one = 1;
    uint8_t b;
    memcpy(&b, &one, 1);
    return b == 1;
}

/* 32-bit words (uint32 or float) between host memory and the little-endian image. */
static void store_words(uint8_t *dst, const void *src, size_t count)
{
    if (little_endian()) {
        memcpy(dst, src, count * 4);
        return;
    }
    const uint8_t *s = src;
    for (size_t i = 0; i < count; ++i) {
        uint32_t v;
        memcpy(&v, s + 4 * i, 4);
        put32(dst + 4 * i, v);
    }
}

static void load_words(void *dst, const uint8_t *src, size_t count)
{
    if (little_endian()) {
        memcpy(dst, src, count * 4);
        return;
    }
    uint8_t *d = dst;
    for (size_t i = 0; i < count; ++i) {
        const uint32_t v = get32(src + 4 * i);
        memcpy(d + 4 * i, &v, 4);
    }
}

size_t vr_gts_file_bytes(const vr_gts *g)
{
    return (size_t)connectivity_bytes(g) + 4 * vertex_floats(g);
}

vr_status vr_gts_write_memory(uint8_t *dst, size_t cap, size_t *written, const vr_gts *g)
{
    assert(dst && written && g);
    vr_status s = vr_gts_validate_counts(g, "gts write");
    if (s)
        return s;
    const size_t size = vr_gts_file_bytes(g);
    if (cap < size)
        return VR_ERROR(VR_ERR_OVERFLOW, "gts write: the file needs %zu bytes, had %zu", size, cap);
    const uint32_t cw = vr_gts_c_words(g), iw = vr_gts_inc_words(g);
    const uint32_t flags =
        (g->restart == VR_GTS_RESTART_DEGENERATE ? FLAG_DEGENERATE : 0) | data_flags(g);
    const uint32_t fields[14] = {VR_GTS_VERSION, flags, HEADER_BYTES, g->triangle_count,
                                 g->strip_triangle_count, g->restart_count, g->vertex_count,
                                 g->referenced_count, g->v_count, g->u_count, g->s_count, cw, iw,
                                 g->degenerate_source_count};
    memcpy(dst, g_magic, sizeof g_magic);
    for (int i = 0; i < 14; ++i)
        put32(dst + 8 + 4 * i, fields[i]);
    uint8_t *p = dst + HEADER_BYTES;
    store_words(p, g->c, cw), p += 4 * (size_t)cw;
    store_words(p, g->inc, iw), p += 4 * (size_t)iw;
    store_words(p, g->s, g->s_count), p += 4 * (size_t)g->s_count;
    if (g->degenerate_source_count)
        store_words(p, g->degenerate_source, g->degenerate_source_count),
            p += 4 * (size_t)g->degenerate_source_count;
    if (g->positions)
        store_words(p, g->positions, 3 * (size_t)g->vertex_count), p += 12 * (size_t)g->vertex_count;
    if (g->normals)
        store_words(p, g->normals, 3 * (size_t)g->vertex_count), p += 12 * (size_t)g->vertex_count;
    if (g->texcoords)
        store_words(p, g->texcoords, 2 * (size_t)g->vertex_count), p += 8 * (size_t)g->vertex_count;
    const uint64_t h = fnv1a64(dst, (size_t)(p - dst));
    put32(p, (uint32_t)h), put32(p + 4, (uint32_t)(h >> 32));
    *written = size;
    assert((size_t)(p + TRAILER_BYTES - dst) == size);
    return VR_OK;
}

vr_status vr_gts_write(const vr_gts *g, const char *path)
{
    assert(g && path);
    const size_t size = vr_gts_file_bytes(g);
    uint8_t *buf = malloc(size);
    if (!buf)
        return VR_ERROR(VR_ERR_OOM, "%s: out of memory for a %zu-byte file image", path, size);
    size_t written = 0;
    vr_status s = vr_gts_write_memory(buf, size, &written, g);
    if (s) {
        free(buf);
        return s;
    }
    FILE *f = fopen(path, "wb");
    if (!f) {
        free(buf);
        return VR_ERROR(VR_ERR_IO, "%s: cannot open for writing: %s", path, strerror(errno));
    }
    const size_t put = fwrite(buf, 1, written, f);
    const int closed = fclose(f);
    free(buf);
    if (put != written || closed != 0)
        return VR_ERROR(VR_ERR_IO, "%s: write failed after %zu of %zu bytes: %s", path, put,
                        written, strerror(errno));
    return VR_OK;
}

static vr_status read_array(void **dst, const uint8_t **p, size_t words, const char *what,
                            const char *name)
{
    *dst = malloc(words ? words * 4 : 4);
    if (!*dst)
        return VR_ERROR(VR_ERR_OOM, "%s: out of memory for %zu words of %s", what, words, name);
    load_words(*dst, *p, words);
    *p += words * 4;
    return VR_OK;
}

vr_status vr_gts_read_memory(vr_gts *out, const uint8_t *data, size_t size, const char *what)
{
    assert(out && (data || size == 0) && what);
    memset(out, 0, sizeof *out);
    if (size < HEADER_BYTES + TRAILER_BYTES)
        return VR_ERROR(VR_ERR_FORMAT, "%s: %zu bytes is shorter than a GTS header and checksum "
                        "(%u bytes)", what, size, HEADER_BYTES + TRAILER_BYTES);
    if (memcmp(data, g_magic, sizeof g_magic) != 0)
        return VR_ERROR(VR_ERR_FORMAT, "%s: not a GTS file (magic bytes differ). Hint: create one "
                        "with `vreuse compress SCENE -o FILE`", what);
    uint32_t h[14];
    for (int i = 0; i < 14; ++i)
        h[i] = get32(data + 8 + 4 * i);
    if (h[0] != VR_GTS_VERSION)
        return VR_ERROR(VR_ERR_FORMAT, "%s: format version %u, this build reads version %u", what,
                        h[0], VR_GTS_VERSION);
    if (h[1] & ~FLAG_ALL)
        return VR_ERROR(VR_ERR_FORMAT, "%s: unknown flags 0x%x", what, h[1] & ~FLAG_ALL);
    if (h[2] != HEADER_BYTES)
        return VR_ERROR(VR_ERR_FORMAT, "%s: header size %u (expected %u)", what, h[2], HEADER_BYTES);
    const uint64_t stored = (uint64_t)get32(data + size - 8) | (uint64_t)get32(data + size - 4) << 32;
    const uint64_t actual = fnv1a64(data, size - TRAILER_BYTES);
    vr_gts g;
    memset(&g, 0, sizeof g);
    g.restart = (h[1] & FLAG_DEGENERATE) ? VR_GTS_RESTART_DEGENERATE : VR_GTS_RESTART_CODE;
    g.triangle_count = h[3], g.strip_triangle_count = h[4], g.restart_count = h[5];
    g.vertex_count = h[6], g.referenced_count = h[7], g.v_count = h[8], g.u_count = h[9];
    g.s_count = h[10];
    g.degenerate_source_count = h[13];
    if (h[11] != vr_gts_c_words(&g) || h[12] != vr_gts_inc_words(&g))
        return VR_ERROR(VR_ERR_FORMAT, "%s: header says %u C and %u INC words, the counts give %u "
                        "and %u", what, h[11], h[12], vr_gts_c_words(&g), vr_gts_inc_words(&g));
    /* the C and INC word counts are the computed ones now: the writer's size formula applies */
    const uint64_t want =
        connectivity_bytes(&g) + 4ull * g.vertex_count * floats_per_vertex(h[1]);
    if (want != size)
        return VR_ERROR(VR_ERR_FORMAT, "%s: %zu bytes, but the header's counts need %llu (%s)",
                        what, size, (unsigned long long)want,
                        want > size ? "truncated" : "trailing bytes");
    if (stored != actual)
        return VR_ERROR(VR_ERR_FORMAT, "%s: checksum mismatch (stored %016llx, computed %016llx): "
                        "the file is corrupt", what, (unsigned long long)stored,
                        (unsigned long long)actual);
    const uint8_t *p = data + HEADER_BYTES;
    vr_status s;
    if ((s = read_array((void **)&g.c, &p, h[11], what, "strip codes")) ||
        (s = read_array((void **)&g.inc, &p, h[12], what, "INC")) ||
        (s = read_array((void **)&g.s, &p, g.s_count, what, "Simple-9")) ||
        (h[13] && (s = read_array((void **)&g.degenerate_source, &p, h[13], what,
                                  "degenerate source triangles"))) ||
        ((h[1] & FLAG_POSITIONS) &&
         (s = read_array((void **)&g.positions, &p, 3 * (size_t)g.vertex_count, what, "positions"))) ||
        ((h[1] & FLAG_NORMALS) &&
         (s = read_array((void **)&g.normals, &p, 3 * (size_t)g.vertex_count, what, "normals"))) ||
        ((h[1] & FLAG_TEXCOORDS) &&
         (s = read_array((void **)&g.texcoords, &p, 2 * (size_t)g.vertex_count, what, "texcoords"))) ||
        (s = vr_gts_validate(&g, what))) {
        vr_gts_free(&g);
        return s;
    }
    *out = g;
    return VR_OK;
}

static vr_status slurp(uint8_t **buf, size_t *size, const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return VR_ERROR(VR_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    long len = -1;
    if (fseek(f, 0, SEEK_END) == 0)
        len = ftell(f);
    if (len < 0 || fseek(f, 0, SEEK_SET) != 0) {
        fclose(f);
        return VR_ERROR(VR_ERR_IO, "%s: cannot determine the file size", path);
    }
    *buf = malloc(len ? (size_t)len : 1);
    if (!*buf) {
        fclose(f);
        return VR_ERROR(VR_ERR_OOM, "%s: out of memory for %ld bytes", path, len);
    }
    const size_t got = fread(*buf, 1, (size_t)len, f);
    fclose(f);
    if (got != (size_t)len) {
        free(*buf);
        *buf = NULL;
        return VR_ERROR(VR_ERR_IO, "%s: read %zu of %ld bytes", path, got, len);
    }
    *size = (size_t)len;
    return VR_OK;
}

vr_status vr_gts_read(vr_gts *out, const char *path)
{
    assert(out && path);
    memset(out, 0, sizeof *out);
    uint8_t *buf = NULL;
    size_t size = 0;
    vr_status s = slurp(&buf, &size, path);
    if (s)
        return s;
    s = vr_gts_read_memory(out, buf, size, path);
    free(buf);
    return s;
}

int vr_gts_is_file(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
        return 0; /* never open a named pipe or a device: the open or the read could block */
    uint8_t head[sizeof g_magic];
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    const size_t got = fread(head, 1, sizeof head, f);
    fclose(f);
    return got == sizeof head && memcmp(head, g_magic, sizeof head) == 0;
}

vr_status vr_gts_print_info(FILE *f, const char *path)
{
    assert(f && path);
    vr_gts g;
    vr_status s = vr_gts_read(&g, path);
    if (s)
        return s;
    uint32_t *indices = malloc(3 * (size_t)g.strip_triangle_count * sizeof *indices);
    if (!indices) {
        vr_gts_free(&g);
        return VR_ERROR(VR_ERR_OOM, "%s: out of memory for %u decoded triangles", path,
                        g.strip_triangle_count);
    }
    s = vr_gts_decode_ref(indices, &g); /* full validation: the U values */
    free(indices);
    if (s) {
        vr_gts_free(&g);
        return s;
    }
    vr_gts_print_stats(f, &g, path);
    fprintf(f, "  vertex data      %s%s%s%s (%zu bytes); file %zu bytes, format version %u, "
            "checksum ok, decodes\n",
            g.positions ? "positions " : "", g.normals ? "normals " : "",
            g.texcoords ? "texcoords " : "", g.positions || g.normals || g.texcoords ? "" : "none",
            4 * vertex_floats(&g), vr_gts_file_bytes(&g), VR_GTS_VERSION);
    vr_gts_free(&g);
    return VR_OK;
}
