/* scene.c - the scene model: specs ("bunny.obj", "sphere:7M", "x.obj@7M") to draws (files through
 * load_assimp.c, PLY through load_ply.c, `vreuse compress` .gts files through the CPU GTS
 * decoder), flattening with node transforms, counts, normals.
 * Try: `vreuse info ../shared/scenes/stanford-bunny.obj sphere`, `vreuse_tests scenes/`.
 */
#define _POSIX_C_SOURCE 200809L /* strdup */
#include "scenes/scene_internal.h"

#include "pipeline/gts/gts.h"

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

/* ---- meshes ----------------------------------------------------------------------------- */

void vr_mesh_free(vr_mesh *m)
{
    if (!m)
        return;
    free(m->positions);
    free(m->normals);
    free(m->texcoords);
    free(m->indices);
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
        float len = sqrtf(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
        if (len > 0 && isfinite(len))
            n[0] /= len, n[1] /= len, n[2] /= len;
        else
            n[0] = 0, n[1] = 0, n[2] = 1;
    }
}

vr_status vr_mesh_finish(vr_mesh *m, const char *what)
{
    vr_status s = vr_mesh_validate(m, what);
    if (s)
        return s;
    for (size_t v = 0; v < m->vertex_count; ++v) {
        const float *p = m->positions + 3 * v;
        if (!isfinite(p[0]) || !isfinite(p[1]) || !isfinite(p[2]))
            return VR_ERROR(VR_ERR_FORMAT, "%s: vertex %zu has a non-finite position (%g, %g, %g)",
                            what, v, p[0], p[1], p[2]);
    }
    size_t bad = 0;
    if (m->normals) {
        for (size_t v = 0; v < m->vertex_count; ++v) {
            float *n = m->normals + 3 * v;
            float len = sqrtf(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
            if (len > 1e-20f && isfinite(len))
                n[0] /= len, n[1] /= len, n[2] /= len;
            else
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

/* A `vreuse compress` file (pipeline/gts.h): decoded with the CPU reference decoder, which
 * checks every value it reads. The mesh is the encoder's: reordered triangles (plus the
 * degenerate restart-emulation triangles of deg. mode) over the permuted vertex data stored in
 * the file. Connectivity-only files (--no-vertex-data) have nothing to draw: an error. */
/* A scene of one draw (out->draws[0].mesh loaded): named after the file, identity transform. */
static vr_status vr_single_draw_done(vr_scene *out, const char *path)
{
    const char *base = strrchr(path, '/');
    snprintf(out->draws[0].name, sizeof out->draws[0].name, "%s", base ? base + 1 : path);
    memcpy(out->draws[0].transform, g_identity, sizeof g_identity);
    out->draw_count = 1;
    return VR_OK;
}

static vr_status load_gts(vr_scene *out, const char *path)
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
    const int has_normals = g.normals != NULL;
    vr_gts_free(&g);
    if (s)
        return s; /* the decoder's message; vr_scene_load frees the draw */
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
    FILE *f = fopen(path, "rb");
    if (!f)
        return VR_ERROR(VR_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    fclose(f);
    /* compressed files by content, whatever their name (assimp would reject them anyway) */
    if (vr_gts_is_file(path))
        return load_gts(out, path);
    /* PLY by content or name: a PLY named otherwise is still ours, and a broken .ply gets
     * our reader's message rather than assimp's (which mishandles tristrips anyway) */
    size_t len = strlen(path);
    int ply_name = len >= 4 && strncasecmp(path + len - 4, ".ply", 4) == 0;
    if (!ply_name && !starts_with_ply_magic(path))
        return vr_assimp_load(out, path);
    out->draws = calloc(1, sizeof *out->draws);
    if (!out->draws)
        return VR_ERROR(VR_ERR_OOM, "%s: cannot allocate a draw", path);
    vr_status s = vr_ply_load(&out->draws[0].mesh, path);
    if (s)
        return s;
    return vr_single_draw_done(out, path);
}

/* ---- specs ------------------------------------------------------------------------------ */

static int is_regular_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* "sphere", "sphere:82k": 1 when `spec` names a generator (then *status tells how it went) */
static int try_generator(vr_scene *out, const char *spec, vr_status *status)
{
    static const struct {
        const char *name;
        uint64_t default_triangles;
    } gens[] = {{"sphere", VR_DEFAULT_SPHERE_TRIANGLES}, {"terrain", 1000000}, {"foliage", 240000}};
    for (int g = 0; g < 3; ++g) {
        size_t n = strlen(gens[g].name);
        if (strncmp(spec, gens[g].name, n) != 0 || (spec[n] != 0 && spec[n] != ':'))
            continue;
        uint64_t tris = gens[g].default_triangles;
        if (spec[n] == ':' && vr_parse_count(spec + n + 1, &tris) != 0) {
            *status = VR_ERROR(VR_ERR_ARG, "%s: bad triangle count '%s' (expected e.g. 82k, 7M, 1000)",
                               spec, spec + n + 1);
            return 1;
        }
        if (tris > VR_MAX_TRIANGLES) {
            *status = VR_ERROR(VR_ERR_ARG, "%s: %llu triangles exceed the 2^32-1 index limit (max %u)",
                               spec, (unsigned long long)tris, VR_MAX_TRIANGLES);
            return 1;
        }
        out->draws = calloc(1, sizeof *out->draws);
        if (!out->draws) {
            *status = VR_ERROR(VR_ERR_OOM, "%s: cannot allocate a draw", spec);
            return 1;
        }
        vr_mesh *m = &out->draws[0].mesh;
        if (g == 0)
            *status = vr_generate_sphere(m, (uint32_t)tris);
        else if (g == 1)
            *status = vr_generate_terrain(m, (uint32_t)tris);
        else
            *status = vr_generate_foliage(m, (uint32_t)tris, 1);
        if (*status == VR_OK) {
            snprintf(out->draws[0].name, sizeof out->draws[0].name, "%s", gens[g].name);
            memcpy(out->draws[0].transform, g_identity, sizeof g_identity);
            out->draw_count = 1;
        }
        return 1;
    }
    return 0;
}

/* "base@N": every draw is subdivided by the same number of levels, the fewest that bring
 * the scene to >= N triangles, so draws stay separate and keep their relative density. */
static vr_status subdivide_scene(vr_scene *s, const char *spec, uint64_t min_triangles)
{
    uint64_t total = 0;
    for (uint32_t i = 0; i < s->draw_count; ++i)
        total += s->draws[i].mesh.index_count / 3;
    int levels = 0;
    uint64_t result = total;
    while (result < min_triangles && result <= VR_MAX_TRIANGLES)
        result *= 4, ++levels;
    if (result > VR_MAX_TRIANGLES)
        return VR_ERROR(VR_ERR_ARG,
                        "%s: %d subdivision levels turn %llu triangles into %llu, over the 2^32-1 "
                        "index limit (max %u triangles)",
                        spec, levels, (unsigned long long)total, (unsigned long long)result,
                        VR_MAX_TRIANGLES);
    for (uint32_t i = 0; i < s->draw_count && levels > 0; ++i) {
        vr_mesh *m = &s->draws[i].mesh, sub;
        vr_status st = vr_mesh_subdivide(&sub, m, (uint64_t)(m->index_count / 3) << (2 * levels));
        if (st)
            return st;
        vr_mesh_free(m);
        *m = sub;
    }
    return VR_OK;
}

vr_status vr_scene_load(vr_scene *out, const char *spec)
{
    assert(out && spec);
    memset(out, 0, sizeof *out);
    vr_status s = VR_OK;
    /* a real file wins, even when its name contains '@' or looks like a generator */
    if (is_regular_file(spec)) {
        s = load_file(out, spec);
    } else {
        const char *at = strrchr(spec, '@');
        uint64_t min_triangles = 0;
        if (at && at != spec && vr_parse_count(at + 1, &min_triangles) == 0) {
            char *base = strdup(spec);
            if (!base)
                return VR_ERROR(VR_ERR_OOM, "%s: out of memory", spec);
            base[at - spec] = 0;
            s = vr_scene_load(out, base);
            free(base);
            if (!s)
                s = subdivide_scene(out, spec, min_triangles);
        } else if (!try_generator(out, spec, &s)) {
            FILE *f = fopen(spec, "rb");
            if (f) { /* a directory or a device */
                fclose(f);
                s = VR_ERROR(VR_ERR_IO, "%s: not a regular file", spec);
            } else {
                s = VR_ERROR(VR_ERR_IO,
                             "%s: cannot open: %s. Hint: paths are relative to the working "
                             "directory; generators are sphere[:N], terrain[:N], foliage[:N]",
                             spec, strerror(errno));
            }
        }
    }
    if (s) {
        vr_scene_free(out);
        return s;
    }
    snprintf(out->source, sizeof out->source, "%s", spec);
    return VR_OK;
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
        float nm[9];
        normal_matrix(nm, t);
        int identity = is_identity(t);
        for (size_t v = 0; v < m->vertex_count; ++v) {
            const float *p = m->positions + 3 * v, *n = m->normals + 3 * v;
            float *op = out->positions + 3 * (vbase + v), *on = out->normals + 3 * (vbase + v);
            if (identity) {
                memcpy(op, p, 3 * sizeof(float));
                memcpy(on, n, 3 * sizeof(float));
                continue;
            }
            float w = t[3] * p[0] + t[7] * p[1] + t[11] * p[2] + t[15];
            if (w == 0)
                w = 1;
            for (int r = 0; r < 3; ++r) {
                op[r] = (t[r] * p[0] + t[4 + r] * p[1] + t[8 + r] * p[2] + t[12 + r]) / w;
                on[r] = nm[3 * r] * n[0] + nm[3 * r + 1] * n[1] + nm[3 * r + 2] * n[2];
            }
            float len = sqrtf(on[0] * on[0] + on[1] * on[1] + on[2] * on[2]);
            if (len > 0 && isfinite(len))
                on[0] /= len, on[1] /= len, on[2] /= len;
            else
                on[0] = 0, on[1] = 0, on[2] = 1;
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
