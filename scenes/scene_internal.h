/* scene_internal.h - helpers shared by the files of scenes/ (not part of the public API):
 * the PLY reader, mesh finishing (validation + normals), a deterministic RNG, the assimp
 * pre-check and the child process that imports (isolate.c).
 * Everything here allocates with malloc and leaves nothing allocated on failure.
 * Exercised by `vreuse_tests scenes/`.
 */
#ifndef VR_SCENE_INTERNAL_H
#define VR_SCENE_INTERNAL_H

#include <stdint.h>

#include "scenes/scene.h"

/* Largest triangle count whose index buffer fits the 2^32-1 index limit of vr_mesh. */
#define VR_MAX_TRIANGLES (UINT32_MAX / 3u)

/* *levels = the levels of 4:1 subdivision that take `triangles` to at least `min_triangles`
 * (0 when it is there already; generate.c). VR_ERR_ARG when they would pass VR_MAX_TRIANGLES,
 * the message starting with spec[0 .. len) (what is subdivided). */
vr_status vr_subdivision_levels(int *levels, uint64_t triangles, uint64_t min_triangles,
                                const char *spec, size_t len);

/* Reads a PLY file (ascii, binary little/big endian): vertex x,y,z[,nx,ny,nz][,s,t|u,v],
 * `face` lists (polygons fanned) and `tristrips` lists (-1 restarts). The header is checked
 * against the file size before anything is allocated. Returns a finished mesh. Faces with
 * fewer than 3 corners and data after the last declared element are refused, or dropped and
 * counted in `repairs` (may be NULL) when vr_scene_accept_repairs(). */
vr_status vr_ply_load(vr_mesh *out, const char *path, vr_scene *repairs);
/* The same reader on a file image in memory (copied: the ascii parser needs a terminating NUL);
 * `what` names it in messages. */
vr_status vr_ply_load_memory(vr_mesh *out, const uint8_t *data, size_t size, const char *what,
                             vr_scene *repairs);

/* ---- specs and checks (scene.c) ---- */

#define VR_SPEC_MAX_SUBDIVISIONS 8 /* '@N' suffixes one spec may chain ("x.obj@1M@7M") */
#define VR_SPEC_MAX_LEN 4095     /* characters of a whole spec: vr_scene.source keeps it whole */

/* A scene spec split into its parts: base[@N]..., the base a file path or a generator. */
typedef struct vr_scene_spec {
    size_t base_len;      /* the base is spec[0 .. base_len) */
    int generator;        /* -1: the base is a file; 0 sphere, 1 terrain, 2 foliage */
    uint64_t triangles;   /* generator: triangles asked for (its default, or ':N') */
    int subdivision_count;                           /* '@N' suffixes */
    uint64_t subdivide_to[VR_SPEC_MAX_SUBDIVISIONS]; /* each N, in the order they apply */
    size_t subdivide_len[VR_SPEC_MAX_SUBDIVISIONS];  /* spec length through that '@N' (messages) */
} vr_scene_spec;

/* Parses `spec` without recursion or loading: suffixes are split off from the right while what
 * is left is not an existing regular file (a file wins, even one named "a@2k.ply"), at most
 * VR_SPEC_MAX_SUBDIVISIONS of them. Only stats candidate paths. VR_ERR_ARG with a message
 * naming the spec and the bad part (a bad count, a bad '@' suffix, too many suffixes, an empty
 * spec, a generator count over the index limit); VR_ERR_IO when the spec names a named pipe, a
 * folder or a device and no generator. */
vr_status vr_scene_spec_parse(vr_scene_spec *out, const char *spec);

/* VR_OK when `path` is a regular file; else VR_ERR_IO naming it and what it is (missing, a
 * named pipe, a directory, a device). Called before any open: opening a FIFO blocks. */
vr_status vr_scene_check_file(const char *path);

/* The one finiteness check of loaded data (files, .gts files, node transforms, subdivision):
 * VR_ERR_FORMAT naming `what`, the vertex and its value when one of `count` vectors of 3
 * floats (`kind`: "position", "normal") is NaN or infinite. */
vr_status vr_check_finite3(const float *v, size_t count, const char *what, const char *kind);

/* A repair made under vr_scene_accept_repairs(): warns on stderr ("warning: WHAT: NOTE") and,
 * when `s` is not NULL, adds `count` to s->repaired and appends `note` to s->repair_note. */
void vr_scene_note_repair(vr_scene *s, uint64_t count, const char *what, const char *note);

/* Reads a scene file with assimp (load_assimp.c): one draw per (node, mesh) reference. */
vr_status vr_assimp_load(vr_scene *out, const char *path);

/* assimp_assert.cpp: a failed assertion inside assimp throws (an import error) instead of
 * aborting the process. Calling this links that file in; it returns 1. */
int vr_assimp_assert_hook(void);
/* assimp_assert.cpp: from now on a failed operator new sets *flag before it throws
 * std::bad_alloc (called in the import's child process, with a page shared with the parent). */
void vr_watch_failed_new(volatile int *flag);

/* ---- a scene built in a child process (isolate.c) ---- */

/* Bounds of the child: the address space it may add to what it had at the fork, and wall time. */
typedef struct vr_child_limits {
    uint64_t memory_mib;     /* MiB; 0: no limit (always none under AddressSanitizer) */
    uint32_t timeout_s;      /* seconds from the fork to the child's exit; 0: none */
    const char *memory_env;  /* the environment variables that set them, named in messages */
    const char *timeout_env;
} vr_child_limits;

/* Runs in the child: builds `scene` and fills `result` (plain data, no pointers). */
typedef vr_status (*vr_child_fn)(vr_scene *scene, void *result, void *arg);

/* Forks; the child runs fn(scene, result, arg) on the calling thread's stack under `limits` and
 * sends the scene's draws (name, transform, positions, normals, texcoords, indices), repaired +
 * repair_note, `result` (result_bytes) and fn's status and message through a pipe, then
 * _exits. The parent checks every count before it allocates and every index against its draw,
 * then fills `out` (draws and repairs; out->source untouched) and `result`, or returns fn's
 * error. A child that crashes, runs out of memory, misses the time bound, exits early or sends
 * inconsistent data is a VR_ERR_FORMAT naming `path`, what happened and, from `who` ("assimp"),
 * which reader failed; the child is always reaped and every descriptor closed. Nothing is left
 * allocated in `out` on failure. The child may use plain C and the library `who` only: see the
 * safety note in isolate.c. */
vr_status vr_scene_in_child(vr_scene *out, void *result, size_t result_bytes, vr_child_fn fn,
                            void *arg, const vr_child_limits *limits, const char *path,
                            const char *who);

/* Bounds on what a file read through assimp may declare (precheck.c checks them before assimp
 * runs, load_assimp.c again while walking the nodes it built). */
#define VR_SCENE_MAX_DEPTH 1024u         /* node levels (a root alone is 1) */
#define VR_SCENE_MAX_NODES (1u << 20)    /* node instances once shared children are expanded */
#define VR_SCENE_MAX_DRAWS (1u << 20)    /* (node, mesh) instances: one vr_draw each */
#define VR_SCENE_MAX_NESTING 4096u       /* brackets or XML elements nested in any text file */
#define VR_OBJ_MAX_OBJECTS 16384u        /* distinct `o` names (assimp's lookup is quadratic) */
#define VR_OBJ_MAX_MATERIALS 4096u       /* distinct `usemtl` names (quadratic, ~40 KB each) */
#define VR_PRECHECK_UNKNOWN UINT64_MAX   /* a count the pre-check could not establish */

/* What a scene file declares, from a bounded pre-parse (precheck.c) that runs before assimp. */
typedef struct vr_precheck {
    const char *format;    /* "glTF", "GLB", "Collada", "XML", "OBJ", "OFF", "text", "binary" */
    uint64_t triangles;    /* mesh triangles x node instances, or VR_PRECHECK_UNKNOWN */
    uint64_t draws;        /* (node, mesh primitive) instances, or VR_PRECHECK_UNKNOWN */
    uint64_t nodes;        /* node instances, or VR_PRECHECK_UNKNOWN */
    uint32_t depth;        /* deepest node path in levels, or bracket/element nesting */
    int exact;             /* 1: assimp must deliver exactly `triangles` triangles */
    uint64_t repairs;      /* declared data assimp will drop on its own (see repair_note) */
    char repair_note[160]; /* what, in words ("2 indices past the last whole triangle") */
} vr_precheck;

/* Bounded pre-parse of a file before assimp sees it: header sizes and chunk lengths against the
 * file size (GLB, OFF), JSON syntax with a nesting bound and the glTF node graph, Collada node
 * nesting and instancing, OBJ object/material counts, bracket nesting of other text formats.
 * Refuses (VR_ERR_FORMAT, a message naming the file, the problem and the count) whatever would
 * make assimp crash, take unbounded time or memory, or fail with an unhelpful message; otherwise
 * fills `out` (counts the loader compares with what assimp delivered). VR_ERR_IO when the file
 * cannot be read. Uses memory proportional to the file's structure (a JSON document is read
 * whole; other formats are streamed). */
vr_status vr_precheck_file(vr_precheck *out, const char *path);

/* Finishes a freshly read mesh: checks indices (vr_mesh_validate) and positions (finite),
 * normalizes the file's normals and computes area-weighted ones where the file has none or
 * they are unusable. `what` names the source in messages. Frees nothing on failure. */
vr_status vr_mesh_finish(vr_mesh *m, const char *what);

/* Area-weighted vertex normals (unreferenced or zero-area vertices get +z). `normals` holds
 * 3 * vertex_count floats. */
void vr_compute_normals(float *normals, const vr_mesh *m);


/* splitmix64: deterministic on every platform, so seeded scenes and shuffles are portable. */
static inline uint64_t vr_splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Uniform float in [0, 1) from the top 24 bits. */
static inline float vr_rand_float(uint64_t *state)
{
    return (float)(vr_splitmix64(state) >> 40) * (1.0f / 16777216.0f);
}

#endif
