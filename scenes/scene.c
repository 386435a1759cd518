/* scene.c - the scene model: specs ("bunny.obj", "sphere:7M", "x.obj@7M") to draws (files through
 * load_assimp.c, PLY through load_ply.c, `vreuse compress` .gts files through the CPU GTS
 * decoder), flattening with node transforms, counts, normals.
 * Try: `vreuse info ../shared/scenes/stanford-bunny.obj sphere`, `vreuse_tests scenes/`.
 */
#define _POSIX_C_SOURCE 200809L /* strdup */
#include "scenes/scene_internal.h"

#include "pipeline/gts/gts.h"
#include "pipeline/vr_mem.h"

#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>


/* ---- orders --------------------------------------------------------------------------- */

static const char *const g_order_names[VR_ORDER_COUNT] = {"file", "forsyth", "tipsify", "random"};

const char *vr_order_name(vr_order o)
{
    static const char *const fetch_names[VR_ORDER_COUNT] = {"file+fetch", "forsyth+fetch",
                                                            "tipsify+fetch", "random+fetch"};
    const unsigned base = (unsigned)o & ~(unsigned)VR_ORDER_FETCH;
    if (base >= VR_ORDER_COUNT)
        return "unknown";
    return ((unsigned)o & VR_ORDER_FETCH) ? fetch_names[base] : g_order_names[base];
}

int vr_order_parse(const char *name)
{
    assert(name);
    size_t len = strlen(name);
    int flags = 0;
    if (len > 6 && !strcmp(name + len - 6, "+fetch"))
        len -= 6, flags = VR_ORDER_FETCH;
    for (int i = 0; i < VR_ORDER_COUNT; ++i)
        if (strlen(g_order_names[i]) == len && !strncmp(name, g_order_names[i], len))
            return i | flags;
    if (len == 4 && !strncmp(name, "fifo", 4))
        return VR_ORDER_TIPSIFY | flags;
    return -1;
}

static int g_accept_repairs;

void vr_scene_set_accept_repairs(int accept) { g_accept_repairs = accept != 0; }
int vr_scene_accept_repairs(void) { return g_accept_repairs; }

void vr_scene_note_repair(vr_scene *s, uint64_t count, const char *what, const char *note)
{
    fprintf(stderr, "warning: %s: %s (--accept-repairs)\n", what, note);
    if (!s)
        return;
    s->repaired += count;
    const size_t used = strlen(s->repair_note);
    snprintf(s->repair_note + used, sizeof s->repair_note - used, "%s%s", used ? "; " : "", note);
}

/* ---- meshes ----------------------------------------------------------------------------- */

void vr_mesh_free(vr_mesh *m)
{
    if (!m)
        return;
    void *const bufs[] = {m->positions, m->normals, m->texcoords, m->indices};
    vr_free_all(bufs, VR_COUNT_OF(bufs));
    memset(m, 0, sizeof *m);
}

void vr_scene_free(vr_scene *s)
{
    if (!s)
        return;
    for (uint32_t i = 0; i < s->draw_count; ++i)
        vr_mesh_free(&s->draws[i].mesh);
    free(s->draws);
    memset(s, 0, sizeof *s);
}

vr_status vr_mesh_count(vr_mesh_counts *out, const vr_mesh *m)
{
    assert(out && m);
    memset(out, 0, sizeof *out);
    uint8_t *seen = calloc((size_t)m->vertex_count / 8 + 1, 1);
    if (!seen)
        return VR_ERROR(VR_ERR_OOM, "counting the referenced vertices of %u: no memory for a "
                        "%u-bit map", m->vertex_count, m->vertex_count);
    out->vertices = m->vertex_count;
    out->triangles = m->index_count / 3;
    for (uint32_t t = 0; t + 2 < m->index_count; t += 3) {
        uint32_t a = m->indices[t], b = m->indices[t + 1], c = m->indices[t + 2];
        out->degenerate_triangles += a == b || b == c || a == c;
    }
    for (uint32_t i = 0; i < m->index_count; ++i) {
        uint32_t v = m->indices[i];
        assert(v < m->vertex_count);
        uint8_t bit = (uint8_t)(1u << (v & 7));
        out->referenced_vertices += !(seen[v >> 3] & bit);
        seen[v >> 3] |= bit;
    }
    free(seen);
    return VR_OK;
}

vr_status vr_mesh_copy(vr_mesh *out, const vr_mesh *in)
{
    assert(out && in);
    memset(out, 0, sizeof *out);
    size_t vc = in->vertex_count ? in->vertex_count : 1;
    out->vertex_count = in->vertex_count;
    out->index_count = in->index_count;
    out->positions = malloc(vc * 3 * sizeof(float));
    out->normals = in->normals ? malloc(vc * 3 * sizeof(float)) : NULL;
    out->texcoords = in->texcoords ? malloc(vc * 2 * sizeof(float)) : NULL;
    out->indices = malloc(((size_t)in->index_count + 1) * sizeof(uint32_t));
    if (!out->positions || !out->indices || (in->normals && !out->normals) ||
        (in->texcoords && !out->texcoords)) {
        vr_mesh_free(out);
        return VR_ERROR(VR_ERR_OOM, "cannot copy a mesh of %u vertices and %u indices",
                        in->vertex_count, in->index_count);
    }
    memcpy(out->positions, in->positions, (size_t)in->vertex_count * 3 * sizeof(float));
    if (in->normals)
        memcpy(out->normals, in->normals, (size_t)in->vertex_count * 3 * sizeof(float));
    if (in->texcoords)
        memcpy(out->texcoords, in->texcoords, (size_t)in->vertex_count * 2 * sizeof(float));
    memcpy(out->indices, in->indices, (size_t)in->index_count * sizeof(uint32_t));
    return VR_OK;
}

/* n / |n|; 0 (n unchanged) when n has no direction (zero, NaN or infinite). Where the squares
 * leave float's normal range (|n| < 1e-18: they lose their precision; or they overflow), n is
 * first scaled by its largest component, so the result is unit to rounding; elsewhere the plain
 * division, bit for bit what the loaders always computed. */
static int normalize3(float n[3])
{
    if (!isfinite(n[0]) || !isfinite(n[1]) || !isfinite(n[2]))
        return 0;
    float len = sqrtf(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
    if (!(len >= 1e-18f) || isinf(len)) {
        const float m = fmaxf(fabsf(n[0]), fmaxf(fabsf(n[1]), fabsf(n[2])));
        if (!(m > 0))
            return 0;
        n[0] /= m, n[1] /= m, n[2] /= m;
        len = sqrtf(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
    }
    n[0] /= len, n[1] /= len, n[2] /= len;
    return 1;
}

void vr_compute_normals(float *normals, const vr_mesh *m)
{
    memset(normals, 0, (size_t)m->vertex_count * 3 * sizeof(float));
    /* the unnormalized cross product is twice the area: summing it weights by area */
    for (uint32_t t = 0; t + 2 < m->index_count; t += 3) {
        const uint32_t *tri = m->indices + t;
        const float *p0 = m->positions + 3 * (size_t)tri[0], *p1 = m->positions + 3 * (size_t)tri[1],
                    *p2 = m->positions + 3 * (size_t)tri[2];
        float e1[3] = {p1[0] - p0[0], p1[1] - p0[1], p1[2] - p0[2]};
        float e2[3] = {p2[0] - p0[0], p2[1] - p0[1], p2[2] - p0[2]};
        float n[3] = {e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2],
                      e1[0] * e2[1] - e1[1] * e2[0]};
        for (int k = 0; k < 3; ++k)
            for (int c = 0; c < 3; ++c)
                normals[3 * (size_t)tri[k] + c] += n[c];
    }
    for (size_t v = 0; v < m->vertex_count; ++v) {
        float *n = normals + 3 * v;
        if (!normalize3(n))
            n[0] = 0, n[1] = 0, n[2] = 1;
    }
}

vr_status vr_check_finite3(const float *v, size_t count, const char *what, const char *kind)
{
    for (size_t i = 0; i < count; ++i) {
        const float *p = v + 3 * i;
        if (!isfinite(p[0]) || !isfinite(p[1]) || !isfinite(p[2]))
            return VR_ERROR(VR_ERR_FORMAT, "%s: vertex %zu has a non-finite %s (%g, %g, %g)", what,
                            i, kind, p[0], p[1], p[2]);
    }
    return VR_OK;
}

vr_status vr_mesh_finish(vr_mesh *m, const char *what)
{
    vr_status s = vr_mesh_validate(m, what);
    if (!s)
        s = vr_check_finite3(m->positions, m->vertex_count, what, "position");
    if (s)
        return s;
    size_t bad = 0;
    if (m->normals) {
        for (size_t v = 0; v < m->vertex_count; ++v) {
            float *n = m->normals + 3 * v;
            const float len = sqrtf(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
            if (!(len > 1e-20f) || !normalize3(n))
                n[0] = NAN, ++bad; /* marked for the computed normal below */
        }
        if (!bad)
            return VR_OK;
    }
    float *computed = malloc(((size_t)m->vertex_count + 1) * 3 * sizeof(float));
    if (!computed)
        return VR_ERROR(VR_ERR_OOM, "%s: cannot allocate normals for %u vertices", what,
                        m->vertex_count);
    vr_compute_normals(computed, m);
    if (!m->normals) {
        m->normals = computed;
        return VR_OK;
    }
    /* keep the file's normals where they are usable, fill in the zero or NaN ones */
    for (size_t v = 0; v < m->vertex_count; ++v)
        if (isnan(m->normals[3 * v]))
            memcpy(m->normals + 3 * v, computed + 3 * v, 3 * sizeof(float));
    free(computed);
    return VR_OK;
}

static const float g_identity[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};

/* ---- files ----------------------------------------------------------------------------- */

/* A scene of one draw (out->draws[0].mesh loaded): named after the file, identity transform. */
static vr_status vr_single_draw_done(vr_scene *out, const char *path)
{
    snprintf(out->draws[0].name, sizeof out->draws[0].name, "%s", vr_path_name(path));
    memcpy(out->draws[0].transform, g_identity, sizeof g_identity);
    out->draw_count = 1;
    return VR_OK;
}

vr_status vr_scene_check_file(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        const int missing = errno == ENOENT || errno == ENOTDIR;
        return VR_ERROR(VR_ERR_IO, "%s: cannot open: %s%s", path, strerror(errno),
                        missing ? ". Hint: paths are relative to the working directory; "
                                  "generators are sphere[:N], terrain[:N], foliage[:N]" : "");
    }
    if (S_ISREG(st.st_mode))
        return VR_OK;
    const char *kind = S_ISDIR(st.st_mode)    ? "a directory"
                       : S_ISFIFO(st.st_mode) ? "a named pipe"
                       : S_ISCHR(st.st_mode)  ? "a character device"
                       : S_ISBLK(st.st_mode)  ? "a block device"
                       : S_ISSOCK(st.st_mode) ? "a socket"
                                              : "a special file";
    return VR_ERROR(VR_ERR_IO, "%s: not a regular file (%s); scenes are read from regular files "
                    "only: save the data to a file first", path, kind);
}

/* deg. mode: drops the restart emulation, the degenerate triangles the file does not list as
 * source triangles (gts.h), so the mesh is exactly the source's triangles in strip order. */
static vr_status drop_restart_emulation(vr_mesh *m, const vr_gts *g, const char *path)
{
    if (g->restart != VR_GTS_RESTART_DEGENERATE)
        return VR_OK;
    const uint32_t n = m->index_count / 3;
    uint32_t kept = 0, listed = 0;
    for (uint32_t t = 0; t < n; ++t) {
        const uint32_t *tri = m->indices + 3 * (size_t)t;
        const int degenerate = tri[0] == tri[1] || tri[1] == tri[2] || tri[0] == tri[2];
        const int source = listed < g->degenerate_source_count && g->degenerate_source[listed] == t;
        if (source && !degenerate)
            return VR_ERROR(VR_ERR_FORMAT, "%s: strip triangle %u is listed as a degenerate source "
                            "triangle but is not degenerate (corrupt file)", path, t);
        listed += source;
        if (degenerate && !source)
            continue;
        memmove(m->indices + 3 * (size_t)kept++, tri, 3 * sizeof *tri);
    }
    if (kept != g->triangle_count) {
        if (!g->degenerate_source_count && kept < g->triangle_count)
            return VR_ERROR(VR_ERR_FORMAT, "%s: the source mesh had %u degenerate triangles, which "
                            "this file (written before vreuse listed them) cannot tell apart from "
                            "its restart emulation; compress the source again", path,
                            g->triangle_count - kept);
        return VR_ERROR(VR_ERR_FORMAT, "%s: %u triangles are left without the restart emulation, "
                        "but the header says %u source triangles (corrupt file)", path, kept,
                        g->triangle_count);
    }
    m->index_count = 3 * kept;
    return VR_OK;
}

/* A `vreuse compress` file (pipeline/gts.h), decoded with the CPU reference decoder, which
 * checks every value it reads: the source triangles, reordered, over the permuted vertex data
 * stored in the file; with `strips` the stream's own triangle list (deg. mode: with its
 * emulation triangles). Connectivity-only files (--no-vertex-data) have nothing to draw: an
 * error. */
static vr_status load_gts(vr_scene *out, const char *path, int strips)
{
    vr_gts g;
    vr_status s = vr_gts_read(&g, path);
    if (s)
        return s;
    if (!g.positions) {
        vr_gts_free(&g);
        return VR_ERROR(VR_ERR_FORMAT, "%s: compressed file without vertex data (written with "
                        "--no-vertex-data): no positions to draw; compress the scene again "
                        "without --no-vertex-data", path);
    }
    out->draws = calloc(1, sizeof *out->draws);
    if (!out->draws) {
        vr_gts_free(&g);
        return VR_ERROR(VR_ERR_OOM, "%s: cannot allocate a draw", path);
    }
    vr_mesh *m = &out->draws[0].mesh;
    s = vr_gts_decode_mesh(m, &g);
    if (!s && !strips && (s = drop_restart_emulation(m, &g, path)))
        vr_mesh_free(m);
    const int has_normals = g.normals != NULL;
    vr_gts_free(&g);
    if (s)
        return s; /* vr_scene_load frees the draw */
    if (!has_normals) {
        free(m->normals); /* zero-filled by the decoder: computed by vr_mesh_finish instead */
        m->normals = NULL;
    }
    s = vr_mesh_finish(m, path);
    if (s) {
        vr_mesh_free(m);
        return s;
    }
    return vr_single_draw_done(out, path);
}

static int starts_with_ply_magic(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    char magic[4] = {0};
    size_t n = fread(magic, 1, 4, f);
    fclose(f);
    return n == 4 && !memcmp(magic, "ply", 3) && (magic[3] == '\n' || magic[3] == '\r');
}

static vr_status load_file(vr_scene *out, const char *path)
{
    vr_status s = vr_scene_check_file(path);
    if (s)
        return s;
    FILE *f = fopen(path, "rb");
    if (!f)
        return VR_ERROR(VR_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    fclose(f);
    /* compressed files by content, whatever their name (assimp would reject them anyway) */
    if (vr_gts_is_file(path))
        return load_gts(out, path, 0);
    /* PLY by content or name: a PLY named otherwise is still ours, and a broken .ply gets
     * our reader's message rather than assimp's (which mishandles tristrips anyway) */
    size_t len = strlen(path);
    int ply_name = len >= 4 && strncasecmp(path + len - 4, ".ply", 4) == 0;
    if (!ply_name && !starts_with_ply_magic(path))
        return vr_assimp_load(out, path);
    out->draws = calloc(1, sizeof *out->draws);
    if (!out->draws)
        return VR_ERROR(VR_ERR_OOM, "%s: cannot allocate a draw", path);
    s = vr_ply_load(&out->draws[0].mesh, path, out);
    if (s)
        return s;
    return vr_single_draw_done(out, path);
}

/* ---- specs ------------------------------------------------------------------------------ */

static const struct {
    const char *name;
    uint64_t default_triangles;
} g_generators[] = {{"sphere", VR_DEFAULT_SPHERE_TRIANGLES}, {"terrain", 1000000}, {"foliage", 240000}};

/* `spec` for a message: a long one (thousands of suffixes) cut to its start. */
static const char *spec_label(char *buf, size_t cap, const char *spec)
{
    const size_t len = strlen(spec);
    if (len <= 96)
        return spec;
    snprintf(buf, cap, "%.72s... (%zu characters)", spec, len);
    return buf;
}

vr_status vr_scene_spec_parse(vr_scene_spec *out, const char *spec)
{
    assert(out && spec);
    memset(out, 0, sizeof *out);
    out->generator = -1;
    char label[128];
    const char *name = spec_label(label, sizeof label, spec);
    if (!*spec)
        return VR_ERROR(VR_ERR_ARG, "empty scene name: give a file or a generator (sphere[:N], "
                        "terrain[:N], foliage[:N])");
    /* one copy of the spec, cut shorter at every '@' split off */
    size_t len = strlen(spec);
    if (len > VR_SPEC_MAX_LEN)
        return VR_ERROR(VR_ERR_ARG, "%s: scene name of %zu characters; at most %d", name, len,
                        VR_SPEC_MAX_LEN);
    char *prefix = malloc(len + 1);
    if (!prefix)
        return VR_ERROR(VR_ERR_OOM, "%s: out of memory", name);
    memcpy(prefix, spec, len + 1);
    uint64_t to[VR_SPEC_MAX_SUBDIVISIONS];
    size_t to_len[VR_SPEC_MAX_SUBDIVISIONS];
    int count = 0, is_file = 0;
    size_t special_len = 0; /* the longest prefix that exists but is no regular file */
    vr_status s = VR_OK;
    for (;;) {
        struct stat st;
        const int exists = stat(prefix, &st) == 0;
        if (exists && S_ISREG(st.st_mode)) { /* a file wins, whatever its name */
            is_file = 1;
            break;
        }
        if (exists && !special_len)
            special_len = len;
        char *at = strrchr(prefix, '@');
        uint64_t n = 0;
        if (!at || at == prefix)
            break;
        if (vr_parse_count(at + 1, &n) != 0) {
            if (special_len) /* the pipe or folder of that name is the problem: below */
                break;
            s = VR_ERROR(VR_ERR_ARG, "%s: no such file, and '%.32s%s' after '@' is not a triangle "
                         "count (subdivide with @N, e.g. @100k or @7M)", name, at + 1,
                         strlen(at + 1) > 32 ? "..." : "");
            break;
        }
        if (count == VR_SPEC_MAX_SUBDIVISIONS) {
            s = VR_ERROR(VR_ERR_ARG, "%s: more than %d '@N' suffixes; one is enough (@N "
                         "subdivides until the scene has at least N triangles)", name,
                         VR_SPEC_MAX_SUBDIVISIONS);
            break;
        }
        to[count] = n, to_len[count++] = len;
        len = (size_t)(at - prefix);
        *at = 0;
    }
    for (int g = 0; g < 3 && !s && !is_file; ++g) {
        const size_t n = strlen(g_generators[g].name);
        if (strncmp(prefix, g_generators[g].name, n) != 0 || (prefix[n] != 0 && prefix[n] != ':'))
            continue;
        out->generator = g;
        out->triangles = g_generators[g].default_triangles;
        if (prefix[n] == ':' && vr_parse_count(prefix + n + 1, &out->triangles) != 0)
            s = VR_ERROR(VR_ERR_ARG, "%s: bad triangle count '%.32s' (expected e.g. 82k, 7M, 1000)",
                         name, prefix + n + 1);
        else if (out->triangles > VR_MAX_TRIANGLES)
            s = VR_ERROR(VR_ERR_ARG, "%s: %llu triangles exceed the 2^32-1 index limit (max %u)",
                         name, (unsigned long long)out->triangles, VR_MAX_TRIANGLES);
        break;
    }
    /* neither a regular file nor a generator: name the named pipe or folder if there was one
     * (generators win over a folder called "sphere", as regular files win over generators) */
    if (!s && !is_file && out->generator < 0 && special_len) {
        memcpy(prefix, spec, special_len); /* undo the cuts */
        prefix[special_len] = 0;
        s = vr_scene_check_file(prefix);
    }
    out->base_len = len;
    out->subdivision_count = count;
    for (int i = 0; i < count; ++i) /* split off outermost first, applied innermost first */
        out->subdivide_to[i] = to[count - 1 - i], out->subdivide_len[i] = to_len[count - 1 - i];
    free(prefix);
    return s;
}

static vr_status load_generator(vr_scene *out, const vr_scene_spec *sp)
{
    const char *name = g_generators[sp->generator].name;
    out->draws = calloc(1, sizeof *out->draws);
    if (!out->draws)
        return VR_ERROR(VR_ERR_OOM, "%s: cannot allocate a draw", name);
    vr_mesh *m = &out->draws[0].mesh;
    const uint32_t tris = (uint32_t)sp->triangles; /* <= VR_MAX_TRIANGLES: checked by the parser */
    vr_status s = sp->generator == 0   ? vr_generate_sphere(m, tris)
                  : sp->generator == 1 ? vr_generate_terrain(m, tris)
                                       : vr_generate_foliage(m, tris, 1);
    if (s)
        return s;
    snprintf(out->draws[0].name, sizeof out->draws[0].name, "%s", name);
    memcpy(out->draws[0].transform, g_identity, sizeof g_identity);
    out->draw_count = 1;
    return VR_OK;
}

/* "base@N": every draw is subdivided by the same number of levels, the fewest that bring
 * the scene to >= N triangles, so draws stay separate and keep their relative density.
 * spec[0 .. len) names this step in messages. Midpoints of huge coordinates can overflow:
 * checked like loaded data. */
static vr_status subdivide_scene(vr_scene *s, const char *spec, size_t len, uint64_t min_triangles)
{
    uint64_t total = 0;
    for (uint32_t i = 0; i < s->draw_count; ++i)
        total += s->draws[i].mesh.index_count / 3;
    int levels;
    vr_status st = vr_subdivision_levels(&levels, total, min_triangles, spec, len);
    if (st)
        return st;
    for (uint32_t i = 0; i < s->draw_count && levels > 0; ++i) {
        vr_mesh *m = &s->draws[i].mesh, sub;
        st = vr_mesh_subdivide(&sub, m, (uint64_t)(m->index_count / 3) << (2 * levels));
        if (st)
            return st;
        vr_mesh_free(m);
        *m = sub;
        char what[320];
        snprintf(what, sizeof what, "%.*s: draw %u ('%s') subdivided", (int)len, spec, i + 1,
                 s->draws[i].name);
        if ((st = vr_check_finite3(m->positions, m->vertex_count, what, "position")))
            return st;
    }
    return VR_OK;
}

_Static_assert(sizeof(((vr_scene *)0)->source) > VR_SPEC_MAX_LEN, "vr_scene.source holds any spec");

vr_status vr_scene_load(vr_scene *out, const char *spec)
{
    assert(out && spec);
    memset(out, 0, sizeof *out);
    vr_scene_spec sp;
    vr_status s = vr_scene_spec_parse(&sp, spec);
    if (s)
        return s;
    if (sp.generator >= 0) {
        s = load_generator(out, &sp);
    } else {
        char *base = strndup(spec, sp.base_len);
        s = base ? load_file(out, base) : VR_ERROR(VR_ERR_OOM, "%s: out of memory", spec);
        free(base);
    }
    for (int i = 0; i < sp.subdivision_count && !s; ++i)
        s = subdivide_scene(out, spec, sp.subdivide_len[i], sp.subdivide_to[i]);
    if (s) {
        vr_scene_free(out);
        return s;
    }
    snprintf(out->source, sizeof out->source, "%s", spec);
    return VR_OK;
}

vr_status vr_mesh_load_gts_strips(vr_mesh *out, const char *path)
{
    assert(out && path);
    memset(out, 0, sizeof *out);
    vr_scene scene;
    memset(&scene, 0, sizeof scene);
    vr_status s = vr_scene_check_file(path);
    if (!s)
        s = load_gts(&scene, path, 1);
    if (!s) {
        *out = scene.draws[0].mesh;
        memset(&scene.draws[0].mesh, 0, sizeof scene.draws[0].mesh);
    }
    vr_scene_free(&scene);
    return s;
}

/* ---- flattening ------------------------------------------------------------------------- */

static int is_identity(const float *m) { return !memcmp(m, g_identity, sizeof g_identity); }

static float matrix_det3(const float *m)
{
    return m[0] * (m[5] * m[10] - m[9] * m[6]) - m[4] * (m[1] * m[10] - m[9] * m[2]) +
           m[8] * (m[1] * m[6] - m[5] * m[2]);
}

/* Normals transform with the inverse transpose of the upper 3x3 (cofactor matrix; the
 * determinant's scale vanishes when normalizing, its sign is kept for mirrored nodes). */
static void normal_matrix(float n[9], const float *m)
{
    const float a = m[0], b = m[4], c = m[8], d = m[1], e = m[5], f = m[9], g = m[2], h = m[6], i = m[10];
    float cof[9] = {e * i - f * h, -(d * i - f * g), d * h - e * g,
                    -(b * i - c * h), a * i - c * g, -(a * h - b * g),
                    b * f - c * e, -(a * f - c * d), a * e - b * d};
    float det = a * cof[0] + b * cof[1] + c * cof[2];
    float sign = det < 0 ? -1.0f : 1.0f;
    /* row r of the normal matrix = row r of the cofactor matrix */
    for (int k = 0; k < 9; ++k)
        n[k] = cof[k] * sign;
}

/* One draw's vertices through its transform into op, on (3 * vertex_count floats each). A
 * transform can overflow float (a huge node scale): positions and unnormalized normals must
 * stay finite, checked like loaded data, else VR_ERR_FORMAT names `what` and the vertex. */
static vr_status transform_draw(float *op, float *on, const vr_mesh *m, const float *t,
                                const char *what)
{
    float nm[9];
    normal_matrix(nm, t);
    for (size_t v = 0; v < m->vertex_count; ++v) {
        const float *p = m->positions + 3 * v, *n = m->normals + 3 * v;
        float w = t[3] * p[0] + t[7] * p[1] + t[11] * p[2] + t[15];
        if (w == 0)
            w = 1;
        for (int r = 0; r < 3; ++r) {
            op[3 * v + r] = (t[r] * p[0] + t[4 + r] * p[1] + t[8 + r] * p[2] + t[12 + r]) / w;
            on[3 * v + r] = nm[3 * r] * n[0] + nm[3 * r + 1] * n[1] + nm[3 * r + 2] * n[2];
        }
    }
    vr_status s = vr_check_finite3(op, m->vertex_count, what, "position");
    if (!s)
        s = vr_check_finite3(on, m->vertex_count, what, "normal");
    if (s)
        return s;
    for (size_t v = 0; v < m->vertex_count; ++v)
        if (!normalize3(on + 3 * v))
            on[3 * v] = 0, on[3 * v + 1] = 0, on[3 * v + 2] = 1;
    return VR_OK;
}

vr_status vr_scene_flatten(vr_mesh *out, const vr_scene *s)
{
    assert(out && s);
    memset(out, 0, sizeof *out);
    uint64_t vertices = 0, indices = 0;
    int any_uv = 0;
    for (uint32_t i = 0; i < s->draw_count; ++i) {
        vertices += s->draws[i].mesh.vertex_count;
        indices += s->draws[i].mesh.index_count;
        any_uv |= s->draws[i].mesh.texcoords != NULL;
    }
    if (indices == 0)
        return VR_ERROR(VR_ERR_FORMAT, "%s: no triangles to flatten", s->source);
    if (vertices > UINT32_MAX || indices > UINT32_MAX)
        return VR_ERROR(VR_ERR_OVERFLOW,
                        "%s: flattened scene needs %llu vertices and %llu indices, over the 2^32-1 limit",
                        s->source, (unsigned long long)vertices, (unsigned long long)indices);
    out->vertex_count = (uint32_t)vertices;
    out->index_count = (uint32_t)indices;
    out->positions = malloc(vertices * 3 * sizeof(float));
    out->normals = malloc(vertices * 3 * sizeof(float));
    /* texcoords exist when any draw has them; draws without get (0, 0) */
    out->texcoords = any_uv ? calloc(vertices * 2, sizeof(float)) : NULL;
    out->indices = malloc(indices * sizeof(uint32_t));
    if (!out->positions || !out->normals || !out->indices || (any_uv && !out->texcoords)) {
        vr_mesh_free(out);
        return VR_ERROR(VR_ERR_OOM, "%s: cannot allocate the flattened mesh (%llu vertices)", s->source,
                        (unsigned long long)vertices);
    }
    uint32_t vbase = 0, ibase = 0;
    for (uint32_t i = 0; i < s->draw_count; ++i) {
        const vr_mesh *m = &s->draws[i].mesh;
        const float *t = s->draws[i].transform;
        assert(m->normals); /* vr_scene_load gives every draw normals */
        float *op = out->positions + 3 * (size_t)vbase, *on = out->normals + 3 * (size_t)vbase;
        if (is_identity(t)) {
            memcpy(op, m->positions, (size_t)m->vertex_count * 3 * sizeof(float));
            memcpy(on, m->normals, (size_t)m->vertex_count * 3 * sizeof(float));
        } else {
            char what[384];
            snprintf(what, sizeof what, "%.255s: draw %u of %u ('%s') after its node transform",
                     s->source, i + 1, s->draw_count, s->draws[i].name);
            vr_status st = transform_draw(op, on, m, t, what);
            if (st) {
                vr_mesh_free(out);
                return st;
            }
        }
        if (m->texcoords)
            memcpy(out->texcoords + 2 * (size_t)vbase, m->texcoords, (size_t)m->vertex_count * 2 * sizeof(float));
        for (size_t k = 0; k < m->index_count; ++k)
            out->indices[ibase + k] = m->indices[k] + vbase;
        /* a mirroring transform turns counter-clockwise into clockwise: swap two corners so
         * front faces stay front faces in the flattened mesh */
        if (matrix_det3(t) < 0)
            for (size_t k = 0; k < m->index_count; k += 3) {
                uint32_t tmp = out->indices[ibase + k + 1];
                out->indices[ibase + k + 1] = out->indices[ibase + k + 2];
                out->indices[ibase + k + 2] = tmp;
            }
        vbase += m->vertex_count;
        ibase += m->index_count;
    }
    return VR_OK;
}

vr_status vr_mesh_load(vr_mesh *out, const char *spec)
{
    assert(out && spec);
    memset(out, 0, sizeof *out);
    vr_scene scene;
    vr_status s = vr_scene_load(&scene, spec);
    if (s)
        return s;
    if (scene.draw_count == 1 && is_identity(scene.draws[0].transform)) {
        /* the common case: hand the arrays over instead of copying (7M-triangle meshes) */
        *out = scene.draws[0].mesh;
        memset(&scene.draws[0].mesh, 0, sizeof scene.draws[0].mesh);
    } else {
        s = vr_scene_flatten(out, &scene);
    }
    vr_scene_free(&scene);
    return s;
}
