/* load_assimp.c - scene files through assimp's C API: import (Triangulate, JoinIdenticalVertices:
 * OBJ corners become shared vertices and UV seams split them, SortByPType: points and lines
 * dropped), then one draw per (node, mesh) reference with the node path's transform. The file's
 * triangle order is kept. The only file that includes assimp.
 * Hardening (what a file cannot do to the process): precheck.c refuses what assimp would choke on
 * before it runs; the import runs on a thread with a large stack (assimp recurses as deep as the
 * file nests); assimp's log is captured, and data it dropped or changed on its own (fewer
 * triangles than the file declares, indices it clamped, faces it skipped) is refused unless
 * repairs are accepted (then a warning and vr_scene.repaired). The node walk is iterative.
 * Isolation (what assimp cannot do to the process): the import, the log, the node walk and the
 * mesh checks run in a child process (isolate.c) under a memory and a time bound; the draws come
 * back through a pipe. A crash inside assimp (heap corruption no pre-check foresees), an
 * allocation past the bound or a hang is a refusal with a message; the parent never calls assimp.
 * Try: `vreuse info ../shared/scenes/stanford-bunny.obj`, `vreuse_tests scenes/assimp-`.
 */
#define _POSIX_C_SOURCE 200809L
#include "scenes/scene_internal.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <assimp/cimport.h>
#include <assimp/config.h>
#include <assimp/postprocess.h>
#include <assimp/scene.h>

/* Stack of the import thread. assimp needs ~0.5 KB per glTF node level and ~1.3 KB per Collada
 * level (measured with 5.2.5: an 8 MB stack survives 17,000 and 6,600 levels, 64 MB 139,000
 * and 52,000), so 256 MB keeps any file the pre-check lets through (1024 node levels, 4096
 * nested elements or brackets) two orders of magnitude away from the end, and bounds binary
 * formats the pre-check does not read at ~200,000 levels. Pages are only reserved until used. */
#define IMPORT_STACK_BYTES ((size_t)256 << 20)

/* Bounds of the import's child process (VR_ASSIMP_MEMORY_MB and VR_ASSIMP_TIMEOUT_S override
 * them): address space it may add and wall time, each a floor plus a share of the file's size.
 * assimp needs 40x an OBJ's size (a 165 MB, 5M-triangle OBJ: 6.5 GB of address space, 9 s) and
 * 25x a GLB's (90 MB: 2.3 GB, 5 s), so 64x keeps real files loading; a file that declares far
 * more than it holds (a 120-byte X file asking for 4.8 GB) stops at the floor. */
#define CHILD_MEMORY_MIB 4096u        /* plus CHILD_MEMORY_PER_BYTE x the file's size */
#define CHILD_MEMORY_PER_BYTE 64u
#define CHILD_TIMEOUT_S 60u           /* plus one second per MiB of the file (~20x assimp's rate) */
#define CHILD_MAX_MEMORY_MIB (1u << 24) /* largest values the variables take: 16 TiB, a week */
#define CHILD_MAX_TIMEOUT_S (7u * 86400u)

/* One import at a time: a child inherits every descriptor of the process, so the pipes of a
 * second import would stay open in the first one's child (and assimp's log is process-wide). */
static pthread_mutex_t g_import_lock = PTHREAD_MUTEX_INITIALIZER;

/* assimp log messages that mean it dropped or changed geometry on its own (5.2.5 wording). */
static const struct {
    const char *text;        /* substring of the message */
    const char *one, *many;  /* the repair after a count of 1 / more */
    const char *reason;      /* why triangles are missing, for the triangle comparison */
    int gltf_prechecked;     /* glTF: precheck.c already counts it from the file */
} g_repair_messages[] = {
    {"Some faces had out-of-range indices", "mesh that lost faces with indices out of range",
     "meshes that lost faces with indices out of range", "indices out of range", 0},
    {"The number of vertices was not compatible with the TRIANGLES mode",
     "primitive whose index count is not a multiple of 3",
     "primitives whose index count is not a multiple of 3",
     "index counts not a multiple of 3", 1},
    {"OFF: Vertex index is out of range", "index out of range (assimp used the last vertex instead)",
     "indices out of range (assimp used the last vertex instead)", "indices out of range", 0},
    {"OFF: Faces with zero indices aren't allowed", "face with no or more than 9 corners dropped",
     "faces with no or more than 9 corners dropped", "faces with no or more than 9 corners", 0},
    {"OFF: The number of verts in the header is incorrect", "vertex list shorter than the header says",
     "vertex lists shorter than the header says", "vertices missing", 0},
    {"OFF: The number of faces in the header is incorrect", "face list shorter than the header says",
     "face lists shorter than the header says", "faces missing", 0},
    {"Failed to triangulate polygon", "polygon assimp could not triangulate (triangles missing)",
     "polygons assimp could not triangulate (triangles missing)", "polygons it could not triangulate", 0},
    {"STL: a facet with more than 3 vertices", "facet with more than 3 vertices (the rest ignored)",
     "facets with more than 3 vertices (the rest ignored)", "facets with more than 3 vertices", 0},
    {"STL: A new facet begins but the old is not yet complete", "incomplete facet", "incomplete facets",
     "incomplete facets", 0},
    {"Unable to find geometry for ID", "instance of a missing geometry skipped",
     "instances of missing geometry skipped", "missing geometry", 0},
    {"Unable to resolve reference to instanced node", "instance of a missing node skipped",
     "instances of missing nodes skipped", "missing nodes", 0},
    {"Expected different index count in <p> element", "primitive with a wrong index count",
     "primitives with a wrong index count", "wrong index counts", 0},
};
#define REPAIR_KINDS (sizeof g_repair_messages / sizeof g_repair_messages[0])

/* What the import tells besides the draws: plain data, copied back from the child process (and
 * so only counted and printed, never used as a size). */
typedef struct import_report {
    uint64_t delivered;                  /* triangles in the draws built */
    uint64_t repair_count[REPAIR_KINDS]; /* log messages per repair kind */
    char first_problem[200];             /* first warning or error assimp logged */
} import_report;

typedef struct import_job {
    const char *path;
    vr_scene *scene;
    vr_child_limits limits;
    import_report report; /* from the child */
    /* from the import thread to the caller */
    vr_status status;
    char message[1024], where[128];
} import_job;

/* assimp's log lines look like "Warn,  T0: text" / "Error, T0: text". */
static void log_callback(const char *message, char *user)
{
    import_report *report = (import_report *)user;
    const int warn = !strncmp(message, "Warn", 4), error = !strncmp(message, "Error", 5);
    if (!warn && !error)
        return;
    const char *text = strstr(message, ": ");
    text = text ? text + 2 : message;
    for (size_t k = 0; k < REPAIR_KINDS; ++k)
        if (strstr(text, g_repair_messages[k].text))
            ++report->repair_count[k];
    if (!report->first_problem[0]) {
        snprintf(report->first_problem, sizeof report->first_problem, "%s", text);
        report->first_problem[strcspn(report->first_problem, "\r\n")] = 0;
    }
}

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
    for (int i = 0; i < 16; ++i)
        if (!isfinite(transform[i]))
            return VR_ERROR(VR_ERR_FORMAT,
                            "%s: node '%s' places mesh '%s' with a transform that is not finite "
                            "(entry %d is %g: a scale or translation overflows); fix the node's "
                            "transform",
                            w->path, node_name && *node_name ? node_name : "(unnamed)",
                            am->mName.length ? am->mName.data : "(unnamed)", i, transform[i]);
    w->total_indices += tris * 3;
    if (w->total_indices > UINT32_MAX)
        return VR_ERROR(VR_ERR_FORMAT, "%s: more than 2^32-1 indices in the scene", w->path);
    vr_scene *s = w->scene;
    if (s->draw_count == VR_SCENE_MAX_DRAWS)
        return VR_ERROR(VR_ERR_FORMAT, "%s: more than %u draws (node, mesh references)", w->path,
                        VR_SCENE_MAX_DRAWS);
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

typedef struct walk_frame {
    const struct aiNode *node;
    float world[16];    /* product of the transforms from the root down to this node */
    unsigned next_child; /* the child to visit next */
} walk_frame;

/* Enters `node` below `parent_world`: its world transform, then its meshes' draws. */
static vr_status enter_node(assimp_walk *w, walk_frame *f, const struct aiNode *node,
                            const float *parent_world)
{
    float local[16];
    matrix_from_assimp(local, &node->mTransformation);
    matrix_mul(f->world, parent_world, local);
    f->node = node;
    f->next_child = 0;
    for (unsigned i = 0; i < node->mNumMeshes; ++i) {
        if (node->mMeshes[i] >= w->ai->mNumMeshes)
            return VR_ERROR(VR_ERR_FORMAT, "%s: node '%s' refers to mesh %u of %u", w->path,
                            node->mName.data, node->mMeshes[i], w->ai->mNumMeshes);
        vr_status s = add_draw(w, w->ai->mMeshes[node->mMeshes[i]], node->mName.data, f->world);
        if (s)
            return s;
    }
    return VR_OK;
}

/* Depth-first, children in order (the order of the draws is the file's), on an explicit stack
 * of at most VR_SCENE_MAX_DEPTH frames: the file controls the depth, so no recursion. */
static vr_status walk_nodes(assimp_walk *w, const struct aiNode *root)
{
    walk_frame *stack = malloc(VR_SCENE_MAX_DEPTH * sizeof *stack);
    if (!stack)
        return VR_ERROR(VR_ERR_OOM, "%s: cannot allocate the node walk", w->path);
    unsigned depth = 1;
    vr_status s = enter_node(w, &stack[0], root, g_identity);
    while (!s && depth > 0) {
        walk_frame *f = &stack[depth - 1];
        if (f->next_child == f->node->mNumChildren) {
            --depth;
            continue;
        }
        const struct aiNode *child = f->node->mChildren[f->next_child++];
        if (depth == VR_SCENE_MAX_DEPTH) {
            s = VR_ERROR(VR_ERR_FORMAT, "%s: node tree deeper than %u levels", w->path,
                         VR_SCENE_MAX_DEPTH);
            break;
        }
        s = enter_node(w, &stack[depth], child, f->world);
        ++depth;
    }
    free(stack);
    return s;
}

/* "No suitable reader", "no faces", ... in words that say what is wrong with the file. */
static vr_status import_failed(const char *path, const import_report *report, const char *why)
{
    if (strstr(why, "No suitable reader found"))
        return VR_ERROR(VR_ERR_FORMAT,
                        "%s: not a format assimp reads (neither its extension nor its first bytes "
                        "match a reader); check the file name and that the file is complete",
                        path);
    /* the validation step reports an empty scene in its own words; say what it means */
    if (strstr(why, "no faces") || strstr(why, "mNumMeshes is 0"))
        return VR_ERROR(VR_ERR_FORMAT, "%s: no triangles (assimp: %s%s%s)", path, why,
                        report->first_problem[0] ? "; it also said: " : "", report->first_problem);
    if (report->first_problem[0] && !strstr(why, report->first_problem))
        return VR_ERROR(VR_ERR_FORMAT, "%s: assimp cannot import it: %s (it also said: %s)", path,
                        why, report->first_problem);
    return VR_ERROR(VR_ERR_FORMAT, "%s: assimp cannot import it: %s", path, why);
}

/* The child process (vr_child_fn): import, log, node walk into `scene`; counts into `result`. */
static vr_status import_child(vr_scene *scene, void *result, void *arg)
{
    const char *path = arg;
    import_report *report = result;
    struct aiLogStream log = {log_callback, (char *)report};
    struct aiPropertyStore *props = aiCreatePropertyStore();
    /* SortByPType splits meshes by primitive type; this drops the point and line parts */
    aiSetImportPropertyInteger(props, AI_CONFIG_PP_SBP_REMOVE, aiPrimitiveType_POINT | aiPrimitiveType_LINE);
    aiAttachLogStream(&log);
    const struct aiScene *ai = aiImportFileExWithProperties(
        path,
        aiProcess_Triangulate | aiProcess_JoinIdenticalVertices | aiProcess_SortByPType |
            aiProcess_ValidateDataStructure,
        NULL, props);
    aiDetachLogStream(&log);
    aiReleasePropertyStore(props);
    if (!ai)
        return import_failed(path, report, aiGetErrorString());
    assimp_walk w = {path, ai, scene, 0, 0};
    vr_status s = VR_OK;
    if (ai->mRootNode) {
        s = walk_nodes(&w, ai->mRootNode);
    } else {
        for (unsigned i = 0; i < ai->mNumMeshes && !s; ++i)
            s = add_draw(&w, ai->mMeshes[i], NULL, g_identity);
    }
    if (!s && scene->draw_count == 0)
        s = VR_ERROR(VR_ERR_FORMAT, "%s: no triangles (%u meshes, none with triangle faces)",
                     path, ai->mNumMeshes);
    report->delivered = w.total_indices / 3;
    aiReleaseImport(ai); /* recursive in assimp too: on this thread's stack */
    return s;
}

/* The child is forked from this thread, so the import runs on its large stack. */
static void *import_thread(void *arg)
{
    import_job *job = arg;
    job->status = vr_scene_in_child(job->scene, &job->report, sizeof job->report, import_child,
                                    (void *)job->path, &job->limits, job->path, "assimp");
    if (job->status) { /* the message is thread-local: hand it to the caller's thread */
        snprintf(job->message, sizeof job->message, "%s", vr_last_error());
        snprintf(job->where, sizeof job->where, "%s", vr_last_error_where());
    }
    return NULL;
}

/* Runs the import on a thread with IMPORT_STACK_BYTES of stack; where no such thread can be
 * made (address-space limits), on a smaller one, and last on the caller's (the pre-check has
 * bounded the depth of every format it reads). */
static vr_status import_on_big_stack(import_job *job)
{
    pthread_mutex_lock(&g_import_lock);
    int started = 0;
    for (size_t bytes = IMPORT_STACK_BYTES; bytes >= ((size_t)16 << 20) && !started; bytes /= 4) {
        pthread_attr_t attr;
        pthread_t thread;
        if (pthread_attr_init(&attr) != 0)
            break;
        if (pthread_attr_setstacksize(&attr, bytes) == 0 &&
            pthread_create(&thread, &attr, import_thread, job) == 0) {
            pthread_join(thread, NULL);
            started = 1;
        }
        pthread_attr_destroy(&attr);
    }
    if (!started)
        import_thread(job);
    pthread_mutex_unlock(&g_import_lock);
    if (job->status)
        return vr_set_error_at(job->status, job->where, "%s", job->message);
    return VR_OK;
}

/* Data assimp dropped or changed: refused, or (accepted repairs) a warning and the count. */
static vr_status judge_repairs(vr_scene *out, const char *path, const vr_precheck *pre,
                               const import_report *report)
{
    const int gltf = !strcmp(pre->format, "glTF") || !strcmp(pre->format, "GLB");
    char note[512] = "", reasons[256] = "";
    size_t len = 0, rlen = 0;
    uint64_t total = 0;
#define APPEND(buf, n, ...)                                                          \
    do {                                                                             \
        if (n < sizeof buf)                                                          \
            n += (size_t)snprintf(buf + n, sizeof buf - n, __VA_ARGS__);             \
    } while (0)
    /* what assimp's log says it did */
    for (size_t k = 0; k < REPAIR_KINDS; ++k)
        if (report->repair_count[k] && !(gltf && g_repair_messages[k].gltf_prechecked))
            APPEND(reasons, rlen, "%s%s", rlen ? ", " : "", g_repair_messages[k].reason);
    const int compared = pre->exact && pre->triangles != VR_PRECHECK_UNKNOWN &&
                         report->delivered < pre->triangles;
    if (compared) { /* the log entries are the reasons for the missing triangles */
        const uint64_t dropped = pre->triangles - report->delivered;
        APPEND(note, len, "assimp dropped %llu of %llu triangles (%s)", (unsigned long long)dropped,
               (unsigned long long)pre->triangles, rlen ? reasons : "it gave no reason");
        total += dropped;
    }
    if (pre->repairs) {
        APPEND(note, len, "%s%s", len ? "; " : "", pre->repair_note);
        total += pre->repairs;
    }
    for (size_t k = 0; k < REPAIR_KINDS && !compared; ++k) {
        const uint64_t n = report->repair_count[k];
        if (n && !(gltf && g_repair_messages[k].gltf_prechecked)) {
            APPEND(note, len, "%s%llu %s", len ? "; " : "", (unsigned long long)n,
                   n == 1 ? g_repair_messages[k].one : g_repair_messages[k].many);
            total += n;
        }
    }
#undef APPEND
    if (!total)
        return VR_OK;
    if (!vr_scene_accept_repairs())
        return VR_ERROR(VR_ERR_FORMAT, "%s: %s; load it anyway with --accept-repairs", path,
                        note);
    vr_scene_note_repair(out, total, path, note);
    return VR_OK;
}

/* A bound from the environment: unset (or empty) keeps `*value`; else a whole number 0..max. */
static vr_status env_bound(uint64_t *value, const char *name, uint64_t max, const char *unit,
                           const char *fallback)
{
    const char *text = getenv(name);
    if (!text || !*text)
        return VR_OK;
    uint64_t v = 0;
    const char *p = text;
    for (; *p >= '0' && *p <= '9' && v <= max; ++p)
        v = v * 10 + (uint64_t)(*p - '0');
    if (*p || v > max)
        return VR_ERROR(VR_ERR_ARG, "%s='%s': want a whole number of %s from 0 (no limit) to %llu; "
                        "unset it for the default (%s)", name, text, unit,
                        (unsigned long long)max, fallback);
    *value = v;
    return VR_OK;
}

/* The child's bounds for `path`: the defaults for its size, or the environment's. */
static vr_status child_limits(vr_child_limits *out, const char *path)
{
    struct stat st;
    const uint64_t bytes = stat(path, &st) == 0 && st.st_size > 0 ? (uint64_t)st.st_size : 0;
    uint64_t memory = CHILD_MEMORY_MIB + ((CHILD_MEMORY_PER_BYTE * bytes) >> 20);
    uint64_t timeout = CHILD_TIMEOUT_S + (bytes >> 20);
    out->memory_env = "VR_ASSIMP_MEMORY_MB";
    out->timeout_env = "VR_ASSIMP_TIMEOUT_S";
    vr_status s = env_bound(&memory, out->memory_env, CHILD_MAX_MEMORY_MIB, "MiB",
                            "4096 MiB plus 64 times the file's size");
    if (!s)
        s = env_bound(&timeout, out->timeout_env, CHILD_MAX_TIMEOUT_S, "seconds",
                      "60 s plus 1 s per MiB of the file");
    out->memory_mib = memory;
    out->timeout_s = (uint32_t)(timeout > CHILD_MAX_TIMEOUT_S ? CHILD_MAX_TIMEOUT_S : timeout);
    return s;
}

vr_status vr_assimp_load(vr_scene *out, const char *path)
{
    (void)vr_assimp_assert_hook(); /* assimp's failed assertions: errors, not abort() */
    vr_precheck pre;
    vr_status s = vr_precheck_file(&pre, path);
    if (s)
        return s;
    import_job *job = calloc(1, sizeof *job);
    if (!job)
        return VR_ERROR(VR_ERR_OOM, "%s: out of memory", path);
    job->path = path;
    job->scene = out;
    s = child_limits(&job->limits, path);
    if (!s)
        s = import_on_big_stack(job);
    if (!s) {
        job->report.first_problem[sizeof job->report.first_problem - 1] = 0; /* from the child */
        s = judge_repairs(out, path, &pre, &job->report);
    }
    free(job);
    return s;
}
