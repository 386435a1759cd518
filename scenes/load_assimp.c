/* load_assimp.c - scene files through assimp's C API: import (Triangulate, JoinIdenticalVertices:
 * OBJ corners become shared vertices and UV seams split them, SortByPType: points and lines
 * dropped), then one draw per (node, mesh) reference with the node path's transform. The file's
 * triangle order is kept. The only file that includes assimp.
 * Try: `vreuse info ../shared/scenes/stanford-bunny.obj`, `vreuse_tests scenes/`.
 */
#define _POSIX_C_SOURCE 200809L
#include "scenes/scene_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <assimp/cimport.h>
#include <assimp/config.h>
#include <assimp/postprocess.h>
#include <assimp/scene.h>

/* assimp's aiMatrix4x4 is row-major (a1..a4 is the first row); ours is column-major. */
static void matrix_from_assimp(float *m, const struct aiMatrix4x4 *a)
{
    const float rows[4][4] = {{a->a1, a->a2, a->a3, a->a4},
                              {a->b1, a->b2, a->b3, a->b4},
                              {a->c1, a->c2, a->c3, a->c4},
                              {a->d1, a->d2, a->d3, a->d4}};
    for (int c = 0; c < 4; ++c)
        for (int r = 0; r < 4; ++r)
            m[c * 4 + r] = rows[r][c];
}

/* out = a * b, column-major; out may not alias a or b */
static void matrix_mul(float *out, const float *a, const float *b)
{
    for (int c = 0; c < 4; ++c)
        for (int r = 0; r < 4; ++r) {
            float s = 0;
            for (int k = 0; k < 4; ++k)
                s += a[k * 4 + r] * b[c * 4 + k];
            out[c * 4 + r] = s;
        }
}

static const float g_identity[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};

typedef struct assimp_walk {
    const char *path;
    const struct aiScene *ai;
    vr_scene *scene;
    uint32_t capacity;
    uint64_t total_indices;
} assimp_walk;

/* One draw per (node, mesh) reference: an instanced mesh becomes several draws, each with
 * its own copy, so every draw owns its vertex data. */
static vr_status add_draw(assimp_walk *w, const struct aiMesh *am, const char *node_name,
                          const float *transform)
{
    uint64_t tris = 0;
    for (unsigned f = 0; f < am->mNumFaces; ++f)
        tris += am->mFaces[f].mNumIndices == 3;
    if (tris == 0 || am->mNumVertices == 0)
        return VR_OK; /* a points/lines mesh left over: nothing to draw */
    w->total_indices += tris * 3;
    if (w->total_indices > UINT32_MAX)
        return VR_ERROR(VR_ERR_FORMAT, "%s: more than 2^32-1 indices in the scene", w->path);
    vr_scene *s = w->scene;
    if (s->draw_count == w->capacity) {
        uint32_t cap = w->capacity ? w->capacity * 2 : 8;
        vr_draw *d = realloc(s->draws, cap * sizeof *d);
        if (!d)
            return VR_ERROR(VR_ERR_OOM, "%s: cannot allocate %u draws", w->path, cap);
        s->draws = d;
        w->capacity = cap;
    }
    vr_draw *d = &s->draws[s->draw_count];
    memset(d, 0, sizeof *d);
    if (am->mName.length)
        snprintf(d->name, sizeof d->name, "%.63s", am->mName.data);
    else if (node_name && *node_name)
        snprintf(d->name, sizeof d->name, "%.63s", node_name);
    else
        snprintf(d->name, sizeof d->name, "mesh%u", s->draw_count);
    memcpy(d->transform, transform, sizeof d->transform);

    vr_mesh *m = &d->mesh;
    uint32_t vc = am->mNumVertices;
    m->vertex_count = vc;
    m->index_count = (uint32_t)(tris * 3);
    m->positions = malloc((size_t)vc * 3 * sizeof(float));
    m->normals = am->mNormals ? malloc((size_t)vc * 3 * sizeof(float)) : NULL;
    m->texcoords = am->mTextureCoords[0] ? malloc((size_t)vc * 2 * sizeof(float)) : NULL;
    m->indices = malloc((size_t)m->index_count * sizeof(uint32_t));
    if (!m->positions || !m->indices || (am->mNormals && !m->normals) ||
        (am->mTextureCoords[0] && !m->texcoords)) {
        vr_mesh_free(m);
        return VR_ERROR(VR_ERR_OOM, "%s: cannot allocate mesh '%s' (%u vertices)", w->path, d->name, vc);
    }
    for (uint32_t v = 0; v < vc; ++v) {
        m->positions[3 * v + 0] = (float)am->mVertices[v].x;
        m->positions[3 * v + 1] = (float)am->mVertices[v].y;
        m->positions[3 * v + 2] = (float)am->mVertices[v].z;
        if (m->normals) {
            m->normals[3 * v + 0] = (float)am->mNormals[v].x;
            m->normals[3 * v + 1] = (float)am->mNormals[v].y;
            m->normals[3 * v + 2] = (float)am->mNormals[v].z;
        }
        if (m->texcoords) {
            m->texcoords[2 * v + 0] = (float)am->mTextureCoords[0][v].x;
            m->texcoords[2 * v + 1] = (float)am->mTextureCoords[0][v].y;
        }
    }
    uint32_t *ix = m->indices;
    for (unsigned f = 0; f < am->mNumFaces; ++f)
        if (am->mFaces[f].mNumIndices == 3) {
            memcpy(ix, am->mFaces[f].mIndices, 3 * sizeof(uint32_t));
            ix += 3;
        }
    char what[512];
    snprintf(what, sizeof what, "%s: mesh '%s'", w->path, d->name);
    vr_status st = vr_mesh_finish(m, what);
    if (st) {
        vr_mesh_free(m);
        return st;
    }
    ++s->draw_count;
    return VR_OK;
}

static vr_status walk_node(assimp_walk *w, const struct aiNode *node, const float *parent, int depth)
{
    if (depth > 1024)
        return VR_ERROR(VR_ERR_FORMAT, "%s: node tree deeper than 1024 levels", w->path);
    float local[16], world[16];
    matrix_from_assimp(local, &node->mTransformation);
    matrix_mul(world, parent, local);
    for (unsigned i = 0; i < node->mNumMeshes; ++i) {
        if (node->mMeshes[i] >= w->ai->mNumMeshes)
            return VR_ERROR(VR_ERR_FORMAT, "%s: node '%s' refers to mesh %u of %u", w->path,
                            node->mName.data, node->mMeshes[i], w->ai->mNumMeshes);
        vr_status s = add_draw(w, w->ai->mMeshes[node->mMeshes[i]], node->mName.data, world);
        if (s)
            return s;
    }
    for (unsigned c = 0; c < node->mNumChildren; ++c) {
        vr_status s = walk_node(w, node->mChildren[c], world, depth + 1);
        if (s)
            return s;
    }
    return VR_OK;
}

vr_status vr_assimp_load(vr_scene *out, const char *path)
{
    struct aiPropertyStore *props = aiCreatePropertyStore();
    /* SortByPType splits meshes by primitive type; this drops the point and line parts */
    aiSetImportPropertyInteger(props, AI_CONFIG_PP_SBP_REMOVE, aiPrimitiveType_POINT | aiPrimitiveType_LINE);
    const struct aiScene *ai = aiImportFileExWithProperties(
        path,
        aiProcess_Triangulate | aiProcess_JoinIdenticalVertices | aiProcess_SortByPType |
            aiProcess_ValidateDataStructure,
        NULL, props);
    aiReleasePropertyStore(props);
    if (!ai) {
        const char *why = aiGetErrorString();
        /* the validation step reports an empty scene in its own words; say what it means */
        if (strstr(why, "no faces") || strstr(why, "mNumMeshes is 0"))
            return VR_ERROR(VR_ERR_FORMAT, "%s: no triangles (assimp: %s)", path, why);
        return VR_ERROR(VR_ERR_FORMAT, "%s: assimp cannot import it: %s", path, why);
    }
    assimp_walk w = {path, ai, out, 0, 0};
    vr_status s = VR_OK;
    if (ai->mRootNode) {
        s = walk_node(&w, ai->mRootNode, g_identity, 0);
    } else {
        for (unsigned i = 0; i < ai->mNumMeshes && !s; ++i)
            s = add_draw(&w, ai->mMeshes[i], NULL, g_identity);
    }
    if (!s && out->draw_count == 0)
        s = VR_ERROR(VR_ERR_FORMAT, "%s: no triangles (%u meshes, none with triangle faces)", path,
                     ai->mNumMeshes);
    aiReleaseImport(ai);
    return s;
}
