/* load_ply.c - the project's own PLY reader (ascii, binary little/big endian). assimp 5.2.5
 * reads only the first triangle of a `tristrips` element (igea.ply), so every .ply goes here.
 * The header is checked against the file size before any allocation: a 300-byte file that
 * claims 2^31 vertices is refused at once. Strips decode with OpenGL's alternating winding.
 * Faces with fewer than 3 corners and data after the last element are refused (or dropped
 * under --accept-repairs). Reads files or memory (vr_ply_load_memory: tests/fuzz_ply.c).
 * Try: `vreuse info ../shared/scenes/igea.ply`, `vreuse_tests scenes/ply`.
 */
#define _POSIX_C_SOURCE 200809L /* strtok_r, fileno */
#include "scenes/scene_internal.h"

#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum { PLY_ASCII, PLY_LE, PLY_BE };

typedef enum ply_type { PLY_NONE, PLY_I8, PLY_U8, PLY_I16, PLY_U16, PLY_I32, PLY_U32, PLY_F32, PLY_F64 } ply_type;

/* What a property means to us; everything else is read and dropped. */
typedef enum ply_role { ROLE_NONE, ROLE_X, ROLE_Y, ROLE_Z, ROLE_NX, ROLE_NY, ROLE_NZ, ROLE_U, ROLE_V, ROLE_FACE, ROLE_STRIP } ply_role;

#define PLY_MAX_ELEMENTS 32
#define PLY_MAX_PROPS 64
#define PLY_NAME_LEN 48

typedef struct ply_prop {
    char name[PLY_NAME_LEN];
    ply_type type;       /* value type (list entries for lists) */
    ply_type count_type; /* PLY_NONE for a scalar property, else the list length's type */
    ply_role role;
} ply_prop;

typedef struct ply_element {
    char name[PLY_NAME_LEN];
    uint64_t count;
    ply_prop props[PLY_MAX_PROPS];
    int prop_count;
} ply_element;

typedef struct ply_reader {
    const char *path;   /* the file, or what the data is, for messages */
    uint8_t *data;      /* whole file plus a NUL, so strtod never runs off the end */
    size_t size;        /* file bytes (without the NUL) */
    size_t pos;         /* read cursor */
    int format;         /* PLY_ASCII, PLY_LE, PLY_BE */
    ply_element elements[PLY_MAX_ELEMENTS];
    int element_count;
    /* where the current value lives, for messages */
    const ply_element *cur_element;
    uint64_t cur_item;
    /* output, grown as triangles appear */
    uint32_t vertex_count;
    float *positions, *normals, *texcoords;
    uint32_t *indices;
    uint64_t tri_count, tri_capacity;
    uint64_t stitch_count; /* strip triangles that repeat an index (dropped) */
    uint64_t short_faces;  /* faces with fewer than 3 corners */
    uint64_t first_short_face, first_short_corners; /* the first of them, for the message */
} ply_reader;

/* A name a PLY header may use and the enum value it stands for (a type, a vertex role). */
typedef struct ply_name {
    const char *name;
    int value;
} ply_name;

/* The value of name `s` in table `t` (n entries), or `missing`. */
static int ply_name_find(const ply_name *t, size_t n, const char *s, int missing)
{
    for (size_t i = 0; i < n; ++i)
        if (!strcmp(s, t[i].name))
            return t[i].value;
    return missing;
}

static const ply_name g_type_names[] = {
    {"char", PLY_I8},     {"int8", PLY_I8},     {"uchar", PLY_U8},    {"uint8", PLY_U8},
    {"short", PLY_I16},   {"int16", PLY_I16},   {"ushort", PLY_U16},  {"uint16", PLY_U16},
    {"int", PLY_I32},     {"int32", PLY_I32},   {"uint", PLY_U32},    {"uint32", PLY_U32},
    {"float", PLY_F32},   {"float32", PLY_F32}, {"double", PLY_F64},  {"float64", PLY_F64},
};

static const unsigned g_type_bytes[] = {0, 1, 1, 2, 2, 4, 4, 4, 8};

static ply_type parse_type(const char *s)
{
    const size_t n = sizeof g_type_names / sizeof g_type_names[0];
    return (ply_type)ply_name_find(g_type_names, n, s, PLY_NONE);
}

static int is_integer_type(ply_type t) { return t != PLY_F32 && t != PLY_F64; }

static vr_status read_file(ply_reader *r)
{
    vr_status s = vr_scene_check_file(r->path); /* before opening: a named pipe would block */
    if (s)
        return s;
    FILE *f = fopen(r->path, "rb");
    if (!f)
        return VR_ERROR(VR_ERR_IO, "%s: cannot open: %s", r->path, strerror(errno));
    struct stat st;
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
        fclose(f);
        return VR_ERROR(VR_ERR_IO, "%s: not a regular file", r->path);
    }
    r->size = (size_t)st.st_size;
    r->data = malloc(r->size + 1);
    if (!r->data) {
        fclose(f);
        return VR_ERROR(VR_ERR_OOM, "%s: cannot allocate %zu bytes to read the file", r->path,
                        r->size + 1);
    }
    size_t got = fread(r->data, 1, r->size, f);
    int err = ferror(f);
    fclose(f);
    if (got != r->size || err)
        return VR_ERROR(VR_ERR_IO, "%s: read %zu of %zu bytes", r->path, got, r->size);
    r->data[r->size] = 0;
    return VR_OK;
}

/* Splits `line` in place at blanks; returns the token count (at most max). */
static int tokenize(char *line, char **tok, int max)
{
    int n = 0;
    char *save = NULL;
    for (char *t = strtok_r(line, " \t", &save); t && n < max; t = strtok_r(NULL, " \t", &save))
        tok[n++] = t;
    return n;
}

static vr_status parse_header(ply_reader *r)
{
    if (r->size < 4 || memcmp(r->data, "ply", 3) != 0 || (r->data[3] != '\n' && r->data[3] != '\r'))
        return VR_ERROR(VR_ERR_FORMAT, "%s: not a PLY file (no 'ply' magic line)", r->path);
    int have_format = 0, line_no = 0;
    size_t pos = 0;
    for (;;) {
        ++line_no;
        uint8_t *nl = memchr(r->data + pos, '\n', r->size - pos);
        if (!nl)
            return VR_ERROR(VR_ERR_FORMAT, "%s: PLY header has no end_header line", r->path);
        size_t len = (size_t)(nl - (r->data + pos));
        char line[512];
        /* comments may be long and are the only lines we do not need to tokenize */
        if (len >= 7 && (!memcmp(r->data + pos, "comment", 7) || !memcmp(r->data + pos, "obj_info", 8))) {
            pos += len + 1;
            continue;
        }
        if (len >= sizeof line)
            return VR_ERROR(VR_ERR_FORMAT, "%s: PLY header line %d is %zu bytes long", r->path,
                            line_no, len);
        memcpy(line, r->data + pos, len);
        line[len] = 0;
        for (size_t i = 0; i < len; ++i) /* NULs and binary bytes would garble the messages */
            if ((unsigned char)line[i] >= 0x7f || ((unsigned char)line[i] < 0x20 && line[i] != '\t' && line[i] != '\r'))
                line[i] = '?';
        if (len && line[len - 1] == '\r')
            line[len - 1] = 0;
        pos += len + 1;
        char *tok[8];
        int n = tokenize(line, tok, 8);
        if (n == 0)
            continue;
        if (line_no == 1)
            continue; /* the magic, checked above */
        if (!strcmp(tok[0], "end_header"))
            break;
        if (!strcmp(tok[0], "format")) {
            if (n != 3 || strncmp(tok[2], "1.", 2) != 0)
                return VR_ERROR(VR_ERR_FORMAT, "%s: PLY header line %d: bad format line", r->path,
                                line_no);
            if (!strcmp(tok[1], "ascii"))
                r->format = PLY_ASCII;
            else if (!strcmp(tok[1], "binary_little_endian"))
                r->format = PLY_LE;
            else if (!strcmp(tok[1], "binary_big_endian"))
                r->format = PLY_BE;
            else
                return VR_ERROR(VR_ERR_FORMAT, "%s: PLY header line %d: unknown format '%s'",
                                r->path, line_no, tok[1]);
            have_format = 1;
        } else if (!strcmp(tok[0], "element")) {
            char *end = NULL;
            if (n != 3 || tok[2][0] < '0' || tok[2][0] > '9')
                return VR_ERROR(VR_ERR_FORMAT, "%s: PLY header line %d: expected 'element NAME COUNT'",
                                r->path, line_no);
            errno = 0;
            unsigned long long count = strtoull(tok[2], &end, 10);
            if (*end || errno)
                return VR_ERROR(VR_ERR_FORMAT, "%s: PLY header line %d: bad element count '%s'",
                                r->path, line_no, tok[2]);
            if (r->element_count == PLY_MAX_ELEMENTS)
                return VR_ERROR(VR_ERR_FORMAT, "%s: PLY header declares more than %d elements",
                                r->path, PLY_MAX_ELEMENTS);
            ply_element *e = &r->elements[r->element_count++];
            snprintf(e->name, sizeof e->name, "%s", tok[1]);
            e->count = count;
        } else if (!strcmp(tok[0], "property")) {
            if (r->element_count == 0)
                return VR_ERROR(VR_ERR_FORMAT, "%s: PLY header line %d: property before any element",
                                r->path, line_no);
            ply_element *e = &r->elements[r->element_count - 1];
            if (e->prop_count == PLY_MAX_PROPS)
                return VR_ERROR(VR_ERR_FORMAT, "%s: PLY element '%s' has more than %d properties",
                                r->path, e->name, PLY_MAX_PROPS);
            ply_prop *p = &e->props[e->prop_count];
            memset(p, 0, sizeof *p);
            if (n == 5 && !strcmp(tok[1], "list")) {
                p->count_type = parse_type(tok[2]);
                p->type = parse_type(tok[3]);
                snprintf(p->name, sizeof p->name, "%s", tok[4]);
                if (p->count_type == PLY_NONE || !is_integer_type(p->count_type) || p->type == PLY_NONE)
                    return VR_ERROR(VR_ERR_FORMAT, "%s: PLY header line %d: bad list types '%s %s'",
                                    r->path, line_no, tok[2], tok[3]);
            } else if (n == 3) {
                p->type = parse_type(tok[1]);
                snprintf(p->name, sizeof p->name, "%s", tok[2]);
                if (p->type == PLY_NONE)
                    return VR_ERROR(VR_ERR_FORMAT, "%s: PLY header line %d: unknown type '%s'",
                                    r->path, line_no, tok[1]);
            } else {
                return VR_ERROR(VR_ERR_FORMAT, "%s: PLY header line %d: malformed property line",
                                r->path, line_no);
            }
            ++e->prop_count;
        } else {
            return VR_ERROR(VR_ERR_FORMAT, "%s: PLY header line %d: unknown keyword '%s'", r->path,
                            line_no, tok[0]);
        }
    }
    if (!have_format)
        return VR_ERROR(VR_ERR_FORMAT, "%s: PLY header has no format line", r->path);
    r->pos = pos;
    return VR_OK;
}

/* The check that keeps absurd headers cheap: every element needs a minimum number of bytes
 * (scalars plus list lengths in binary; a digit and a separator per value in ascii), so a
 * count the rest of the file cannot hold is refused before anything is allocated. */
static vr_status check_counts(const ply_reader *r)
{
    uint64_t remaining = r->size - r->pos, needed = 0;
    if (r->format == PLY_ASCII)
        remaining += 1; /* the last value needs no separator */
    for (int i = 0; i < r->element_count; ++i) {
        const ply_element *e = &r->elements[i];
        uint64_t min_bytes = 0;
        for (int k = 0; k < e->prop_count; ++k) {
            const ply_prop *p = &e->props[k];
            min_bytes += r->format == PLY_ASCII ? 2 : g_type_bytes[p->count_type ? p->count_type : p->type];
        }
        if (e->count && min_bytes == 0)
            return VR_ERROR(VR_ERR_FORMAT, "%s: PLY element '%s' has %llu entries but no properties",
                            r->path, e->name, (unsigned long long)e->count);
        if (e->count > (remaining - needed) / (min_bytes ? min_bytes : 1))
            return VR_ERROR(VR_ERR_FORMAT,
                            "%s: PLY header claims %llu '%s' elements of at least %llu bytes each, "
                            "but only %llu bytes follow the header (truncated or corrupt file)",
                            r->path, (unsigned long long)e->count, e->name,
                            (unsigned long long)min_bytes, (unsigned long long)(remaining - needed));
        needed += e->count * min_bytes;
    }
    return VR_OK;
}

static vr_status truncated(const ply_reader *r)
{
    return VR_ERROR(VR_ERR_FORMAT, "%s: PLY data ends inside '%s' element %llu of %llu (truncated file)",
                    r->path, r->cur_element->name, (unsigned long long)r->cur_item,
                    (unsigned long long)r->cur_element->count);
}

/* The offending token for a message: up to the next blank, unprintable bytes as '?'. */
static void quote_token(char *dst, size_t cap, const char *s)
{
    size_t n = 0;
    for (; s[n] && s[n] != ' ' && s[n] != '\t' && s[n] != '\r' && s[n] != '\n' && n + 1 < cap; ++n)
        dst[n] = (s[n] >= 0x20 && s[n] < 0x7f) ? s[n] : '?';
    dst[n] = 0;
}

/* Reads one value of type t as a double (exact for every PLY integer type). */
static vr_status read_value(ply_reader *r, ply_type t, double *out)
{
    if (r->format == PLY_ASCII) {
        const char *s = (const char *)r->data + r->pos;
        while (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n')
            ++s;
        if (*s == 0)
            return truncated(r);
        char *end = NULL;
        double v = strtod(s, &end);
        int bad_number = end == s || (*end && *end != ' ' && *end != '\t' && *end != '\r' && *end != '\n');
        if (bad_number || (is_integer_type(t) && v != floor(v))) {
            char token[16];
            quote_token(token, sizeof token, s);
            return VR_ERROR(VR_ERR_FORMAT, "%s: PLY '%s' element %llu: %s '%s'", r->path,
                            r->cur_element->name, (unsigned long long)r->cur_item,
                            bad_number ? "malformed number" : "expected an integer, got", token);
        }
        r->pos = (size_t)(end - (const char *)r->data);
        *out = v;
        return VR_OK;
    }
    unsigned n = g_type_bytes[t];
    if (r->size - r->pos < n)
        return truncated(r);
    const uint8_t *b = r->data + r->pos;
    uint64_t bits = 0;
    for (unsigned i = 0; i < n; ++i)
        bits |= (uint64_t)b[r->format == PLY_LE ? i : n - 1 - i] << (8 * i);
    r->pos += n;
    switch (t) {
    case PLY_I8: *out = (int8_t)bits; break;
    case PLY_U8: *out = (uint8_t)bits; break;
    case PLY_I16: *out = (int16_t)bits; break;
    case PLY_U16: *out = (uint16_t)bits; break;
    case PLY_I32: *out = (int32_t)bits; break;
    case PLY_U32: *out = (uint32_t)bits; break;
    case PLY_F32: {
        uint32_t u = (uint32_t)bits;
        float f;
        memcpy(&f, &u, 4);
        *out = f;
        break;
    }
    case PLY_F64: memcpy(out, &bits, 8); break;
    case PLY_NONE: assert(0); break;
    }
    return VR_OK;
}

static vr_status push_triangle(ply_reader *r, uint32_t a, uint32_t b, uint32_t c)
{
    if (r->tri_count == r->tri_capacity) {
        if (r->tri_count >= VR_MAX_TRIANGLES)
            return VR_ERROR(VR_ERR_FORMAT, "%s: more than 2^32-1 indices (over %u triangles)",
                            r->path, VR_MAX_TRIANGLES);
        uint64_t cap = r->tri_capacity ? r->tri_capacity * 2 : 1024;
        if (cap > VR_MAX_TRIANGLES)
            cap = VR_MAX_TRIANGLES;
        uint32_t *p = realloc(r->indices, (size_t)cap * 3 * sizeof *p);
        if (!p)
            return VR_ERROR(VR_ERR_OOM, "%s: cannot grow the index buffer to %llu triangles", r->path,
                            (unsigned long long)cap);
        r->indices = p;
        r->tri_capacity = cap;
    }
    uint32_t *t = r->indices + 3 * r->tri_count++;
    t[0] = a, t[1] = b, t[2] = c;
    return VR_OK;
}

/* Reads a list's length and refuses lengths the rest of the file cannot hold, so a corrupt
 * length never turns into a long loop. */
static vr_status read_list_length(ply_reader *r, const ply_prop *p, uint64_t *n)
{
    double v;
    vr_status s = read_value(r, p->count_type, &v);
    if (s)
        return s;
    if (v < 0)
        return VR_ERROR(VR_ERR_FORMAT, "%s: PLY '%s' element %llu: negative list length %.0f",
                        r->path, r->cur_element->name, (unsigned long long)r->cur_item, v);
    /* ascii: a digit and a separator per value, none after the last; binary: exactly the bytes
     * left (one more would move the cursor past the end of the data) */
    const uint64_t min_bytes = r->format == PLY_ASCII ? 2 : g_type_bytes[p->type];
    const uint64_t avail = r->size - r->pos + (r->format == PLY_ASCII);
    if (v > (double)(avail / min_bytes))
        return VR_ERROR(VR_ERR_FORMAT,
                        "%s: PLY '%s' element %llu: list length %.0f runs past the end of the file (truncated or corrupt)",
                        r->path, r->cur_element->name, (unsigned long long)r->cur_item, v);
    *n = (uint64_t)v;
    return VR_OK;
}

/* Reads one vertex index; `restart` (may be NULL) reports a strip restart (-1, or all ones in
 * an unsigned 32-bit list). */
static vr_status read_index(ply_reader *r, const ply_prop *p, uint32_t *out, int *restart)
{
    double v;
    vr_status s = read_value(r, p->type, &v);
    if (s)
        return s;
    if (restart) {
        *restart = v == -1.0 || (p->type == PLY_U32 && v == 4294967295.0);
        if (*restart)
            return VR_OK;
    }
    if (!(v >= 0 && v < (double)r->vertex_count) || v != floor(v))
        return VR_ERROR(VR_ERR_FORMAT,
                        "%s: PLY '%s' element %llu: vertex index %.17g out of range (vertex count %u)",
                        r->path, r->cur_element->name, (unsigned long long)r->cur_item, v,
                        r->vertex_count);
    *out = (uint32_t)v;
    return VR_OK;
}

/* Polygon of n corners -> fan (v0, v[k-1], v[k]); faces of fewer than 3 corners add nothing
 * and are counted (a broken file: refused or repaired at the end). */
static vr_status read_face(ply_reader *r, const ply_prop *p)
{
    uint64_t n;
    vr_status s = read_list_length(r, p, &n);
    if (!s && n < 3 && r->short_faces++ == 0)
        r->first_short_face = r->cur_item, r->first_short_corners = n;
    uint32_t first = 0, prev = 0, cur = 0;
    for (uint64_t k = 0; k < n && !s; ++k) {
        s = read_index(r, p, &cur, NULL);
        if (!s && k >= 2)
            s = push_triangle(r, first, prev, cur);
        if (k == 0)
            first = cur;
        prev = cur;
    }
    return s;
}

/* Strip (s0 s1 s2 s3 ...) with -1 restarts -> triangle k is (s_k, s_k+1, s_k+2) for even k and
 * (s_k+1, s_k, s_k+2) for odd k (OpenGL's rule: every triangle keeps the first one's
 * orientation). Triangles that repeat an index are the stitches that join strips; they have
 * no area and are dropped (counted in stitch_count); igea.ply has none. */
static vr_status read_strip(ply_reader *r, const ply_prop *p)
{
    uint64_t n, k = 0;
    vr_status s = read_list_length(r, p, &n);
    uint32_t a = 0, b = 0, c = 0;
    for (uint64_t i = 0; i < n && !s; ++i) {
        int restart;
        s = read_index(r, p, &c, &restart);
        if (s)
            break;
        if (restart) {
            k = 0;
            continue;
        }
        if (k >= 2) {
            if (a == b || b == c || a == c)
                ++r->stitch_count;
            else
                s = (k & 1) ? push_triangle(r, b, a, c) : push_triangle(r, a, b, c);
        }
        a = b, b = c, ++k;
    }
    return s;
}

static vr_status skip_list(ply_reader *r, const ply_prop *p)
{
    uint64_t n;
    vr_status s = read_list_length(r, p, &n);
    if (s)
        return s;
    if (r->format != PLY_ASCII) {
        r->pos += (size_t)(n * g_type_bytes[p->type]); /* checked by read_list_length */
        return VR_OK;
    }
    double v;
    for (uint64_t i = 0; i < n && !s; ++i)
        s = read_value(r, p->type, &v);
    return s;
}

/* Gives each property its role and checks that there is something to read: a vertex element
 * with x, y, z and a face or tristrips list. */
static vr_status assign_roles(ply_reader *r, ply_element **vertex_out, int *have_normals, int *have_uv)
{
    static const ply_name vertex_names[] = {
        {"x", ROLE_X},   {"y", ROLE_Y},   {"z", ROLE_Z},         {"nx", ROLE_NX},
        {"ny", ROLE_NY}, {"nz", ROLE_NZ}, {"s", ROLE_U},         {"t", ROLE_V},
        {"u", ROLE_U},   {"v", ROLE_V},   {"texture_u", ROLE_U}, {"texture_v", ROLE_V},
        {"texture_s", ROLE_U}, {"texture_t", ROLE_V},
    };
    ply_element *vertex = NULL;
    int have_faces = 0;
    for (int i = 0; i < r->element_count; ++i) {
        ply_element *e = &r->elements[i];
        int is_vertex = !strcmp(e->name, "vertex") && !vertex;
        int is_face = !strcmp(e->name, "face"), is_strip = !strcmp(e->name, "tristrips");
        if (is_vertex)
            vertex = e;
        for (int k = 0; k < e->prop_count; ++k) {
            ply_prop *p = &e->props[k];
            if (is_vertex && p->count_type == PLY_NONE)
                p->role = (ply_role)ply_name_find(
                    vertex_names, sizeof vertex_names / sizeof vertex_names[0], p->name, p->role);
            if ((is_face || is_strip) && p->count_type != PLY_NONE &&
                (!strcmp(p->name, "vertex_indices") || !strcmp(p->name, "vertex_index"))) {
                if (!is_integer_type(p->type))
                    return VR_ERROR(VR_ERR_FORMAT, "%s: PLY '%s' list '%s' has a floating-point type",
                                    r->path, e->name, p->name);
                p->role = is_face ? ROLE_FACE : ROLE_STRIP;
                have_faces = 1;
            }
        }
    }
    if (!vertex)
        return VR_ERROR(VR_ERR_FORMAT, "%s: PLY file has no 'vertex' element", r->path);
    int seen[ROLE_STRIP + 1] = {0};
    for (int k = 0; k < vertex->prop_count; ++k)
        seen[vertex->props[k].role]++;
    if (!seen[ROLE_X] || !seen[ROLE_Y] || !seen[ROLE_Z])
        return VR_ERROR(VR_ERR_FORMAT, "%s: PLY 'vertex' element lacks x, y or z", r->path);
    if (!have_faces)
        return VR_ERROR(VR_ERR_FORMAT,
                        "%s: no triangles: PLY file has no 'face' or 'tristrips' element with a "
                        "vertex_indices list (a point cloud?)",
                        r->path);
    if (vertex->count > UINT32_MAX - 1u)
        return VR_ERROR(VR_ERR_FORMAT, "%s: PLY vertex count %llu exceeds 2^32-1", r->path,
                        (unsigned long long)vertex->count);
    *vertex_out = vertex;
    *have_normals = seen[ROLE_NX] && seen[ROLE_NY] && seen[ROLE_NZ];
    *have_uv = seen[ROLE_U] && seen[ROLE_V];
    return VR_OK;
}

static vr_status read_body(ply_reader *r, const ply_element *vertex)
{
    vr_status s = VR_OK;
    for (int i = 0; i < r->element_count && !s; ++i) {
        const ply_element *e = &r->elements[i];
        r->cur_element = e;
        for (uint64_t item = 0; item < e->count && !s; ++item) {
            r->cur_item = item;
            if ((item & 0xffff) == 0)
                vr_progress("ply", r->pos, r->size);
            for (int k = 0; k < e->prop_count && !s; ++k) {
                const ply_prop *p = &e->props[k];
                double v;
                if (p->role == ROLE_FACE)
                    s = read_face(r, p);
                else if (p->role == ROLE_STRIP)
                    s = read_strip(r, p);
                else if (p->count_type != PLY_NONE)
                    s = skip_list(r, p);
                else if (!(s = read_value(r, p->type, &v)) && e == vertex) {
                    float f = (float)v;
                    switch (p->role) {
                    case ROLE_X: case ROLE_Y: case ROLE_Z: r->positions[3 * item + (p->role - ROLE_X)] = f; break;
                    case ROLE_NX: case ROLE_NY: case ROLE_NZ:
                        if (r->normals)
                            r->normals[3 * item + (p->role - ROLE_NX)] = f;
                        break;
                    case ROLE_U: case ROLE_V:
                        if (r->texcoords)
                            r->texcoords[2 * item + (p->role - ROLE_U)] = f;
                        break;
                    default: break;
                    }
                }
            }
        }
    }
    vr_progress("ply", r->size, r->size);
    return s;
}

/* What follows the last declared element: binary files must end there, ascii files may only
 * add blanks. *bytes gets the trailing bytes (0: none), *lines the non-blank ascii lines. */
static void trailing_data(const ply_reader *r, uint64_t *bytes, uint64_t *lines, uint64_t *line_no)
{
    *bytes = r->size - r->pos, *lines = 0, *line_no = 0;
    if (r->format != PLY_ASCII)
        return;
    size_t first = r->size; /* the first non-blank byte */
    int blank = 1;
    for (size_t i = r->pos; i < r->size; ++i) {
        const uint8_t c = r->data[i];
        if (c == '\n') {
            *lines += !blank, blank = 1;
        } else if (c != ' ' && c != '\t' && c != '\r') {
            first = first < i ? first : i;
            blank = 0;
        }
    }
    *lines += !blank;
    if (!*lines) {
        *bytes = 0; /* blanks only */
        return;
    }
    *line_no = 1;
    for (size_t i = 0; i < first; ++i)
        *line_no += r->data[i] == '\n';
}

/* The data-level checks after the body: faces with < 3 corners and trailing data are refused,
 * or dropped with a warning and counted under vr_scene_accept_repairs(). */
static vr_status check_repairs(const ply_reader *r, vr_scene *repairs)
{
    char note[160];
    const int accept = vr_scene_accept_repairs();
    if (r->short_faces) {
        if (!accept)
            return VR_ERROR(VR_ERR_FORMAT, "%s: PLY faces with fewer than 3 corners: %llu (the "
                            "first: face %llu, %llu corners); they draw nothing. Fix the file, or "
                            "pass --accept-repairs to drop them", r->path,
                            (unsigned long long)r->short_faces,
                            (unsigned long long)r->first_short_face,
                            (unsigned long long)r->first_short_corners);
        snprintf(note, sizeof note, "%llu faces with fewer than 3 corners dropped",
                 (unsigned long long)r->short_faces);
        vr_scene_note_repair(repairs, r->short_faces, r->path, note);
    }
    uint64_t bytes, lines, line_no;
    trailing_data(r, &bytes, &lines, &line_no);
    if (bytes) {
        const ply_element *last = &r->elements[r->element_count - 1];
        if (!accept) {
            if (r->format == PLY_ASCII)
                return VR_ERROR(VR_ERR_FORMAT, "%s: %llu non-blank lines after the last declared "
                                "element ('%s', %llu entries), from line %llu: the header declares "
                                "less than the file holds. Fix the counts, or pass "
                                "--accept-repairs to ignore the rest", r->path,
                                (unsigned long long)lines, last->name,
                                (unsigned long long)last->count, (unsigned long long)line_no);
            return VR_ERROR(VR_ERR_FORMAT, "%s: %llu bytes after the last declared element ('%s', "
                            "%llu entries): the header declares less than the file holds. Fix the "
                            "counts, or pass --accept-repairs to ignore the rest", r->path,
                            (unsigned long long)bytes, last->name, (unsigned long long)last->count);
        }
        if (r->format == PLY_ASCII)
            snprintf(note, sizeof note, "%llu trailing lines ignored", (unsigned long long)lines);
        else
            snprintf(note, sizeof note, "%llu trailing bytes ignored", (unsigned long long)bytes);
        vr_scene_note_repair(repairs, 1, r->path, note);
    }
    return VR_OK;
}

/* Parses r->data (r->size bytes plus a NUL, owned by r) into `out`. */
static vr_status ply_parse(vr_mesh *out, ply_reader *r, vr_scene *repairs)
{
    const char *path = r->path;
    ply_element *vertex = NULL;
    int have_normals = 0, have_uv = 0;
    vr_status s = parse_header(r);
    if (!s)
        s = check_counts(r);
    if (!s)
        s = assign_roles(r, &vertex, &have_normals, &have_uv);
    if (!s) {
        /* bounded by check_counts: at most a few times the file size */
        r->vertex_count = (uint32_t)vertex->count;
        size_t vc = r->vertex_count ? r->vertex_count : 1;
        r->positions = calloc(vc * 3, sizeof(float));
        r->normals = have_normals ? calloc(vc * 3, sizeof(float)) : NULL;
        r->texcoords = have_uv ? calloc(vc * 2, sizeof(float)) : NULL;
        if (!r->positions || (have_normals && !r->normals) || (have_uv && !r->texcoords))
            s = VR_ERROR(VR_ERR_OOM, "%s: cannot allocate %u vertices", path, r->vertex_count);
    }
    if (!s)
        s = read_body(r, vertex);
    if (!s && r->tri_count == 0)
        s = VR_ERROR(VR_ERR_FORMAT,
                     "%s: no triangles (faces and strips are empty or have < 3 corners: %llu "
                     "faces with fewer than 3 corners; %llu zero-area strip stitches dropped)",
                     path, (unsigned long long)r->short_faces,
                     (unsigned long long)r->stitch_count);
    if (!s)
        s = check_repairs(r, repairs);
    if (!s) {
        /* give the unused tail of the doubling buffer back */
        uint32_t *shrunk = realloc(r->indices, (size_t)r->tri_count * 3 * sizeof *shrunk);
        if (shrunk)
            r->indices = shrunk;
        out->vertex_count = r->vertex_count;
        out->positions = r->positions;
        out->normals = r->normals;
        out->texcoords = r->texcoords;
        out->index_count = (uint32_t)(r->tri_count * 3);
        out->indices = r->indices;
        r->positions = r->normals = r->texcoords = NULL;
        r->indices = NULL;
        s = vr_mesh_finish(out, path);
        if (s)
            vr_mesh_free(out); /* finish may have replaced the normals: free what `out` holds */
    }
    if (s) {
        free(r->positions);
        free(r->normals);
        free(r->texcoords);
        free(r->indices);
    }
    return s;
}

vr_status vr_ply_load_memory(vr_mesh *out, const uint8_t *data, size_t size, const char *what,
                             vr_scene *repairs)
{
    assert(out && (data || !size) && what);
    memset(out, 0, sizeof *out);
    ply_reader *r = calloc(1, sizeof *r);
    uint8_t *copy = malloc(size + 1);
    vr_status s = VR_OK;
    if (!r || !copy) {
        s = VR_ERROR(VR_ERR_OOM, "%s: cannot allocate the PLY reader for %zu bytes", what, size);
    } else {
        if (size)
            memcpy(copy, data, size);
        copy[size] = 0;
        r->path = what, r->data = copy, r->size = size;
        copy = NULL;
        s = ply_parse(out, r, repairs);
        free(r->data);
    }
    free(copy);
    free(r);
    return s;
}

vr_status vr_ply_load(vr_mesh *out, const char *path, vr_scene *repairs)
{
    assert(out && path);
    memset(out, 0, sizeof *out);
    ply_reader *r = calloc(1, sizeof *r);
    if (!r)
        return VR_ERROR(VR_ERR_OOM, "%s: cannot allocate the PLY reader", path);
    r->path = path;
    vr_status s = read_file(r);
    if (!s)
        s = ply_parse(out, r, repairs);
    free(r->data);
    free(r);
    return s;
}
