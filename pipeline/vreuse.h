/* vreuse.h - the base of every layer: status codes and messages, the mesh view every stage
 * consumes, counts and progress. The first part of the installed library header vreuse.h, which
 * pipeline/lib/ puts together from this and the other public module headers.
 *
 * vreuse is a streaming CUDA geometry stage with vertex reuse after Kenzel et al. 2018,
 * "On-the-fly Vertex Reuse for Massively-Parallel Software Geometry Processing".
 * No CUDA or CUB types appear here, so plain C11 host code can include it.
 */
#ifndef VREUSE_H
#define VREUSE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum vr_status {
    VR_OK = 0,
    VR_ERR_CUDA,      /* a CUDA call or launch failed */
    VR_ERR_OOM,       /* host or device allocation failed */
    VR_ERR_OVERFLOW,  /* a buffer or counter would overflow ("needed N, had M") */
    VR_ERR_IO,        /* a file could not be opened, read or written */
    VR_ERR_FORMAT,    /* malformed input data: a file, an index buffer, a stream */
    VR_ERR_ARG,       /* a user-supplied option is out of range */
    VR_ERR_NO_DEVICE  /* no CUDA device (or no CUDA build); callers fall back to CPU */
} vr_status;

/* The VR_ERR_NO_DEVICE message of every GPU entry point in a build without CUDA. */
#define VR_NO_CUDA_BUILD "no CUDA device: this build has no CUDA (configure where nvcc is found)"

/* The status in a few words ("out of memory"): a static string, never NULL. O(1). */
const char *vr_status_string(vr_status s);

/* Thread-local message of the last failure: what failed, the values involved and a hint, in
 * words for the user (no source location). Valid until the next failure on the same thread; at
 * most 1023 bytes (longer messages are cut). "" before any failure. */
const char *vr_last_error(void);
/* Where the last VR_ERROR was raised ("scenes/scene.c:557"), "" after a plain vr_set_error: for
 * developers (the command line prints it when the environment sets VR_DEBUG=1). */
const char *vr_last_error_where(void);
/* Records a formatted message (printf style; its arguments may include vr_last_error()) and
 * returns `s`, so callers can write `return vr_set_error(VR_ERR_FORMAT, "%s: ...", path)`. */
vr_status vr_set_error(vr_status s, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* vr_set_error that also records the source location (`where`, "file:line"). */
vr_status vr_set_error_at(vr_status s, const char *where, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
#define VR_ERROR(s, ...) vr_set_error_at((s), __FILE__ ":" VR_STR_(__LINE__), __VA_ARGS__)
#define VR_STR_(x) VR_STR2_(x)
#define VR_STR2_(x) #x

/* A flat indexed triangle mesh: one draw call with its transform applied.
 * Every stage (simulator, batchers, rasterizer) reads this view. Arrays are owned by
 * whoever filled the struct (a vr_scene for loaded meshes). */
typedef struct vr_mesh {
    uint32_t vertex_count;  /* vertices in the arrays below, < 2^32 */
    float *positions;       /* 3 * vertex_count floats, object/world space */
    float *normals;         /* 3 * vertex_count floats, unit length (computed when the file has none) */
    float *texcoords;       /* 2 * vertex_count floats, or NULL when the file has none */
    uint32_t index_count;   /* 3 * triangles, <= 2^32 - 1 */
    uint32_t *indices;      /* index_count entries, each < vertex_count */
} vr_mesh;

/* Validates a mesh that came from a file or a user: index_count % 3 == 0, > 0 triangles,
 * every index < vertex_count; VR_ERR_FORMAT naming the first problem otherwise. `what` names
 * the source in the message (a path). Reads only the indices: O(index_count). */
vr_status vr_mesh_validate(const vr_mesh *m, const char *what);

/* Parses a count with an optional k (1e3) or M (1e6) suffix: "82k", "7M", "1.5M", "1000".
 * VR_OK, or VR_ERR_ARG with a message naming the text when it is malformed, zero, over 1e12 or
 * not whole (nan, inf, 1e3, 0x10, " 5", "+5", "0.5" are refused); *out is set only on VR_OK. */
vr_status vr_parse_count(const char *s, uint64_t *out);

/* The file name of a path without its folders ("a/b/bunny.obj" -> "bunny.obj"; a path ending in
 * '/' and a plain name are returned whole). Points into `path`. */
const char *vr_path_name(const char *path);

/* Milliseconds on the monotonic clock (for stage timings printed by the commands). */
double vr_now_ms(void);

/* Formats v with thousands separators ("7,009,280") into buf (at least 32 bytes); returns buf. */
const char *vr_format_count(char *buf, unsigned long long v);

/* Progress for long work, on stderr: prints "what: 42%" at most every half second, only after
 * the work has run for a second, and a final newline when done == total. Silent when
 * vr_progress_quiet is set (--quiet, tests). */
void vr_progress(const char *what, uint64_t done, uint64_t total);
extern int vr_progress_quiet;

#ifdef __cplusplus
}
#endif
#endif
