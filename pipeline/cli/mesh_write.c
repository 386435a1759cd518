/* mesh_write.c - the writers of mesh_write.h: OBJ and PLY (binary little endian) as plain loops,
 * GLB (glTF 2.0 binary: a JSON chunk describing one indexed triangle primitive, a BIN chunk with
 * positions, normals, texcoords and uint32 indices), GTS through the codec. Our own writers
 * rather than assimp's exporter: assimp's glTF 2 exporter always runs JoinIdenticalVertices,
 * which renumbers vertices and drops unreferenced ones, so the file would not be the mesh as
 * vreuse sees it (and the exporter needs a C++-built aiScene).
 * Try: `vreuse export stanford-bunny.obj --order forsyth -o b.ply`, `vreuse_tests export/`.
 */
#define _POSIX_C_SOURCE 200809L /* open_memstream */
#include "pipeline/cli/mesh_write.h"
#include "pipeline/gts/gts.h"

#include <assert.h>
#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const char *const vr_mesh_format_names[VR_MESH_FORMAT_COUNT] = {"obj", "ply", "glb", "gts"};

int vr_mesh_format_of(const char *path)
{
    const char *dot = strrchr(path, '.');
    if (!dot || strchr(dot, '/'))
        return -1;
    for (int f = 0; f < VR_MESH_FORMAT_COUNT; ++f)
        if (!strcasecmp(dot + 1, vr_mesh_format_names[f]))
            return f;
    return -1;
}

/* The comment as one line that every format holds verbatim: no control characters (a newline
 * would end a PLY header line or an OBJ comment early), no quote or backslash (it is a JSON
 * string in GLB). */
static void one_line(char *dst, size_t cap, const char *s)
{
    size_t n = 0;
    for (; s && *s && n + 1 < cap; ++s) {
        const unsigned char c = (unsigned char)*s;
        dst[n++] = c < 0x20 || c == 0x7f ? ' ' : c == '"' ? '\'' : c == '\\' ? '/' : (char)c;
    }
    dst[n] = '\0';
}

/* ---- OBJ ------------------------------------------------------------------------------------ */

static void write_obj(FILE *f, const vr_mesh *m, const char *comment)
{
    fprintf(f, "# %s\n# %u vertices, %u triangles\n", comment, m->vertex_count,
            m->index_count / 3);
    for (size_t v = 0; v < m->vertex_count; ++v) {
        const float *p = m->positions + 3 * v;
        fprintf(f, "v %.9g %.9g %.9g\n", p[0], p[1], p[2]);
    }
    for (size_t v = 0; v < m->vertex_count; ++v) {
        const float *n = m->normals + 3 * v;
        fprintf(f, "vn %.9g %.9g %.9g\n", n[0], n[1], n[2]);
    }
    for (size_t v = 0; m->texcoords && v < m->vertex_count; ++v) {
        const float *t = m->texcoords + 2 * v;
        fprintf(f, "vt %.9g %.9g\n", t[0], t[1]);
    }
    /* corner k of a face names vertex i's position, texcoord and normal: all number i + 1 */
    for (size_t t = 0; t < m->index_count; t += 3) {
        const uint32_t *c = m->indices + t;
        if (m->texcoords)
            fprintf(f, "f %u/%u/%u %u/%u/%u %u/%u/%u\n", c[0] + 1, c[0] + 1, c[0] + 1, c[1] + 1,
                    c[1] + 1, c[1] + 1, c[2] + 1, c[2] + 1, c[2] + 1);
        else
            fprintf(f, "f %u//%u %u//%u %u//%u\n", c[0] + 1, c[0] + 1, c[1] + 1, c[1] + 1,
                    c[2] + 1, c[2] + 1);
    }
}

/* ---- binary helpers ------------------------------------------------------------------------- */

static int little_endian(void)
{
    const uint16_t one = 1;
    return *(const uint8_t *)&one == 1;
}

/* Appends `count` 32-bit words (floats or integers) to `f` in little-endian order. */
static void put32(FILE *f, const void *words, size_t count)
{
    if (little_endian()) {
        fwrite(words, 4, count, f);
        return;
    }
    const uint8_t *b = words;
    for (size_t i = 0; i < count; ++i, b += 4) {
        const uint8_t le[4] = {b[3], b[2], b[1], b[0]};
        fwrite(le, 1, 4, f);
    }
}

/* ---- PLY ------------------------------------------------------------------------------------ */

static void write_ply(FILE *f, const vr_mesh *m, const char *comment)
{
    const int uv = m->texcoords != NULL;
    fprintf(f, "ply\nformat binary_little_endian 1.0\ncomment %s\nelement vertex %u\n"
               "property float x\nproperty float y\nproperty float z\n"
               "property float nx\nproperty float ny\nproperty float nz\n%s"
               "element face %u\nproperty list uchar uint vertex_indices\nend_header\n",
            comment, m->vertex_count, uv ? "property float u\nproperty float v\n" : "",
            m->index_count / 3);
    for (size_t v = 0; v < m->vertex_count; ++v) {
        float rec[8];
        memcpy(rec, m->positions + 3 * v, 3 * sizeof(float));
        memcpy(rec + 3, m->normals + 3 * v, 3 * sizeof(float));
        if (uv)
            memcpy(rec + 6, m->texcoords + 2 * v, 2 * sizeof(float));
        put32(f, rec, uv ? 8 : 6);
    }
    for (size_t t = 0; t < m->index_count; t += 3) {
        fputc(3, f);
        put32(f, m->indices + t, 3);
    }
}

vr_status vr_mesh_write_job_run(const char *file, void *job)
{
    const vr_mesh_write_job *j = (const vr_mesh_write_job *)job;
    return vr_mesh_write(file, j->format, j->mesh, j->comment);
}

vr_status vr_points_write_ply(const char *path, const float *xyz, uint32_t count,
                              const char *comment)
{
    assert(path && (xyz || count == 0));
    char line[512];
    one_line(line, sizeof line, comment ? comment : "points written by vreuse");
    FILE *f = fopen(path, "wb");
    if (!f)
        return VR_ERROR(VR_ERR_IO, "cannot write '%s'", path);
    fprintf(f, "ply\nformat binary_little_endian 1.0\ncomment %s\nelement vertex %u\n"
               "property float x\nproperty float y\nproperty float z\nend_header\n",
            line, count);
    put32(f, xyz, 3 * (size_t)count);
    const int failed = ferror(f);
    if (fclose(f) != 0 || failed)
        return VR_ERROR(VR_ERR_IO, "'%s': write failed (disk full?)", path);
    return VR_OK;
}

/* ---- GLB ------------------------------------------------------------------------------------ */

/* The JSON chunk: one node, one mesh, one triangle primitive over four (three without
 * texcoords) buffer views of the one buffer, in the BIN chunk's order. `comment` is one_line's. */
static void write_gltf_json(FILE *f, const vr_mesh *m, const char *comment, uint64_t bin_bytes)
{
    const uint64_t vc = m->vertex_count, vec3 = 12 * vc, vec2 = 8 * vc;
    const int uv = m->texcoords != NULL;
    float lo[3] = {FLT_MAX, FLT_MAX, FLT_MAX}, hi[3] = {-FLT_MAX, -FLT_MAX, -FLT_MAX};
    for (size_t v = 0; v < vc; ++v)
        for (int k = 0; k < 3; ++k) {
            const float p = m->positions[3 * v + k];
            lo[k] = p < lo[k] ? p : lo[k];
            hi[k] = p > hi[k] ? p : hi[k];
        }
    fprintf(f, "{\"asset\":{\"version\":\"2.0\",\"generator\":\"vreuse export\",\"extras\":"
               "{\"source\":\"%s\"}},\"scene\":0,\"scenes\":[{\"nodes\":[0]}],"
               "\"nodes\":[{\"mesh\":0}],"
               "\"meshes\":[{\"primitives\":[{\"attributes\":{\"POSITION\":0,\"NORMAL\":1%s},"
               "\"indices\":%d,\"mode\":4}]}],\"buffers\":[{\"byteLength\":%llu}],",
            comment, uv ? ",\"TEXCOORD_0\":2" : "", uv ? 3 : 2, (unsigned long long)bin_bytes);
    fprintf(f, "\"bufferViews\":[{\"buffer\":0,\"byteOffset\":0,\"byteLength\":%llu,"
               "\"target\":34962},{\"buffer\":0,\"byteOffset\":%llu,\"byteLength\":%llu,"
               "\"target\":34962},",
            (unsigned long long)vec3, (unsigned long long)vec3, (unsigned long long)vec3);
    uint64_t offset = 2 * vec3;
    if (uv) {
        fprintf(f, "{\"buffer\":0,\"byteOffset\":%llu,\"byteLength\":%llu,\"target\":34962},",
                (unsigned long long)offset, (unsigned long long)vec2);
        offset += vec2;
    }
    fprintf(f, "{\"buffer\":0,\"byteOffset\":%llu,\"byteLength\":%llu,\"target\":34963}],",
            (unsigned long long)offset, 4ull * m->index_count);
    fprintf(f, "\"accessors\":[{\"bufferView\":0,\"componentType\":5126,\"count\":%u,"
               "\"type\":\"VEC3\",\"min\":[%.9g,%.9g,%.9g],\"max\":[%.9g,%.9g,%.9g]},"
               "{\"bufferView\":1,\"componentType\":5126,\"count\":%u,\"type\":\"VEC3\"},",
            m->vertex_count, lo[0], lo[1], lo[2], hi[0], hi[1], hi[2], m->vertex_count);
    if (uv)
        fprintf(f, "{\"bufferView\":2,\"componentType\":5126,\"count\":%u,\"type\":\"VEC2\"},",
                m->vertex_count);
    fprintf(f, "{\"bufferView\":%d,\"componentType\":5125,\"count\":%u,\"type\":\"SCALAR\"}]}",
            uv ? 3 : 2, m->index_count);
}

static vr_status write_glb(FILE *f, const vr_mesh *m, const char *comment, const char *path)
{
    const uint64_t vc = m->vertex_count;
    const uint64_t bin = 24 * vc + (m->texcoords ? 8 * vc : 0) + 4ull * m->index_count;
    /* the JSON first, in memory: the header needs its padded length */
    char *json = NULL;
    size_t json_len = 0;
    FILE *j = open_memstream(&json, &json_len);
    if (!j)
        return VR_ERROR(VR_ERR_OOM, "%s: out of memory for the glTF JSON", path);
    write_gltf_json(j, m, comment, bin);
    if (fclose(j) != 0 || !json) {
        free(json);
        return VR_ERROR(VR_ERR_OOM, "%s: out of memory for the glTF JSON", path);
    }
    const uint64_t json_padded = (json_len + 3) & ~(uint64_t)3;
    const uint64_t total = 12 + 8 + json_padded + 8 + bin;
    if (total > 0xffffffffull) {
        free(json);
        return VR_ERROR(VR_ERR_OVERFLOW, "%s: %llu bytes; a GLB file holds at most 4 GiB: write "
                        ".ply or .gts for a mesh this large", path, (unsigned long long)total);
    }
    const uint32_t header[5] = {0x46546c67u /* "glTF" */, 2u, (uint32_t)total,
                                (uint32_t)json_padded, 0x4e4f534au /* "JSON" */};
    put32(f, header, 5);
    fwrite(json, 1, json_len, f);
    for (uint64_t k = json_len; k < json_padded; ++k)
        fputc(' ', f);
    free(json);
    const uint32_t bin_header[2] = {(uint32_t)bin, 0x004e4942u /* "BIN\0" */};
    put32(f, bin_header, 2);
    put32(f, m->positions, 3 * vc);
    put32(f, m->normals, 3 * vc);
    if (m->texcoords) {
        /* glTF's v runs from the top of the image; assimp reads it as 1 - v */
        for (size_t v = 0; v < vc; ++v) {
            const float t[2] = {m->texcoords[2 * v], 1.0f - m->texcoords[2 * v + 1]};
            put32(f, t, 2);
        }
    }
    put32(f, m->indices, m->index_count);
    return VR_OK;
}

/* ---- all ------------------------------------------------------------------------------------ */

static vr_status write_gts(const char *path, const vr_mesh *m)
{
    vr_gts_options opt = vr_gts_options_default();
    vr_gts g;
    vr_status s = vr_gts_encode(&g, NULL, m, &opt);
    if (s)
        return s;
    s = vr_gts_write(&g, path);
    vr_gts_free(&g);
    return s;
}

vr_status vr_mesh_write(const char *path, vr_mesh_format fmt, const vr_mesh *m,
                        const char *comment)
{
    assert(path && m && fmt >= 0 && fmt < VR_MESH_FORMAT_COUNT);
    vr_status s = vr_mesh_validate(m, path);
    if (s)
        return s;
    if (fmt == VR_MESH_GTS)
        return write_gts(path, m);
    char line[512];
    one_line(line, sizeof line, comment ? comment : "written by vreuse export");
    FILE *f = fopen(path, "wb");
    if (!f)
        return VR_ERROR(VR_ERR_IO, "cannot write '%s'", path);
    if (fmt == VR_MESH_OBJ)
        write_obj(f, m, line);
    else if (fmt == VR_MESH_PLY)
        write_ply(f, m, line);
    else
        s = write_glb(f, m, line, path);
    const int failed = ferror(f);
    if (fclose(f) != 0 || failed)
        return s ? s : VR_ERROR(VR_ERR_IO, "'%s': write failed (disk full?)", path);
    return s;
}
