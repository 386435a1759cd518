/* scene.h - the scene model: draw calls (mesh + transform) loaded through assimp's C API or
 * generated procedurally, validated, optionally reordered with meshoptimizer.
 * Only scenes/ includes assimp and meshoptimizer; other stages see vr_mesh.
 * Try: `vreuse info ../shared/scenes/igea.ply`, `vreuse info sphere:7M`.
 */
#ifndef VR_SCENE_H
#define VR_SCENE_H

#include <stdint.h>

#include "pipeline/vreuse.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vr_draw {
    char name[64];       /* mesh name from the file, or "mesh<N>" */
    vr_mesh mesh;        /* object-space vertex data, owned by the scene */
    float transform[16]; /* column-major node transform (product along the node path) */
} vr_draw;

typedef struct vr_scene {
    char source[4096];   /* path or generator spec it came from (a spec is at most 4095 chars) */
    vr_draw *draws;
    uint32_t draw_count;
    /* Data the loader dropped or changed because the file was broken (triangles with indices out
     * of range, faces with fewer than 3 corners, ...). Nonzero only when repairs are accepted
     * (vr_scene_set_accept_repairs); otherwise such a file is refused. */
    uint64_t repaired;
    char repair_note[256]; /* what was repaired, in words ("12 faces with 2 corners dropped") */
} vr_scene;

typedef struct vr_mesh_counts {
    uint64_t vertices;             /* vertices in the vertex buffer(s) */
    uint64_t referenced_vertices;  /* distinct vertices some index refers to */
    uint64_t triangles;
    uint64_t degenerate_triangles; /* triangles with a repeated index */
} vr_mesh_counts;

typedef enum vr_order {
    VR_ORDER_FILE = 0, /* as loaded */
    VR_ORDER_FORSYTH,  /* meshopt_optimizeVertexCache (Forsyth-style; the paper's preprocessing) */
    VR_ORDER_TIPSIFY,  /* meshopt_optimizeVertexCacheFifo (Tipsify, cache 16) */
    VR_ORDER_RANDOM,   /* seeded shuffle of whole triangles */
    VR_ORDER_COUNT
} vr_order;

/* Flag that may be or-ed into an order: afterwards renumber vertices in first-use order
 * (vertex-fetch reordering, vr_mesh_reorder_fetch). Named "<order>+fetch". */
#define VR_ORDER_FETCH 0x100

const char *vr_order_name(vr_order o);
/* Parses "file", "forsyth", "tipsify" (alias "fifo") or "random", optionally followed by
 * "+fetch" (VR_ORDER_FETCH); returns -1 when unknown. */
int vr_order_parse(const char *name);

/* Loads a scene. `spec` is either
 *   a file path assimp reads (OBJ, PLY incl. `tristrips` with -1 restarts, glTF 2.0, FBX, ...),
 *   a compressed mesh written by `vreuse compress` (.gts: decoded on the CPU, exactly the
 *     source's triangles in the stream's order - deg. mode's emulation triangles dropped - over
 *     the file's vertex data),
 *   a generator: "sphere[:N]", "terrain[:N]", "foliage[:N]" with N triangles (suffix k or M),
 *   either of these followed by "@N": subdivide until at least N triangles ("bunny.obj@7M");
 *     up to VR_SPEC_MAX_SUBDIVISIONS (8) suffixes chain ("x.obj@1M@7M").
 * An existing file wins over the spec reading of its name. Only regular files are read (a
 * named pipe or a device is refused before it is opened). The file's triangle order is kept;
 * vertices are shared as the file shares them (OBJ corners joined, UV seams split). Positions
 * (and normals) must be finite after node transforms and subdivision. Errors name the file and
 * the problem and return VR_ERR_IO, VR_ERR_FORMAT or VR_ERR_ARG (a bad spec); nothing is left
 * allocated on failure. */
vr_status vr_scene_load(vr_scene *out, const char *spec);
/* Whether loading may repair broken data (drop what cannot be drawn, with a warning on stderr
 * and the count in vr_scene.repaired) instead of refusing the file. Off by default; the command
 * line's --accept-repairs turns it on for the process. */
void vr_scene_set_accept_repairs(int accept);
int vr_scene_accept_repairs(void);
void vr_scene_free(vr_scene *s);

/* Concatenates all draws into one mesh with transforms applied (vertex ids offset per draw).
 * The result owns its arrays; free with vr_mesh_free. */
vr_status vr_scene_flatten(vr_mesh *out, const vr_scene *s);
/* Convenience: load + flatten. */
vr_status vr_mesh_load(vr_mesh *out, const char *spec);
/* A `vreuse compress` file as the stream's own triangle list, deg. mode's emulation triangles
 * included: the mesh the GPU stage's per-batch decoding produces (`render --gts-batches`).
 * vr_mesh_load gives the source triangles instead. */
vr_status vr_mesh_load_gts_strips(vr_mesh *out, const char *path);
void vr_mesh_free(vr_mesh *m);
/* Deep copy (all arrays, normals and texcoords when present); on failure `out` is left zeroed
 * and VR_ERR_OOM names the size. */
vr_status vr_mesh_copy(vr_mesh *out, const vr_mesh *in);

/* Counts of a validated mesh. VR_ERR_OOM (counts zeroed) when the vertex_count-bit scratch
 * bitmap cannot be allocated. */
vr_status vr_mesh_count(vr_mesh_counts *out, const vr_mesh *m);

/* Reorders triangles in place by `order` (vertex ids kept, unless VR_ORDER_FETCH is or-ed in:
 * then vertices are renumbered in first-use order and unreferenced ones dropped); `seed` is used
 * by random. */
vr_status vr_mesh_reorder(vr_mesh *m, vr_order order, uint64_t seed);
/* Renumbers vertices in first-use order (meshopt_optimizeVertexFetch) and drops unreferenced
 * ones. If `remap` is not NULL it receives old-id -> new-id (~0u for dropped), vertex_count
 * entries, allocated with malloc and owned by the caller. */
vr_status vr_mesh_reorder_fetch(vr_mesh *m, uint32_t **remap);

/* Procedural meshes (no files needed). Triangle counts are approximate (at least `triangles`
 * rounded to the generator's grid). The default scene is vr_generate_sphere(81,920). */
vr_status vr_generate_sphere(vr_mesh *out, uint32_t triangles);
vr_status vr_generate_terrain(vr_mesh *out, uint32_t triangles);
vr_status vr_generate_foliage(vr_mesh *out, uint32_t triangles, uint64_t seed);
/* 1-to-4 midpoint subdivision (shared edge midpoints) until >= min_triangles. */
vr_status vr_mesh_subdivide(vr_mesh *out, const vr_mesh *in, uint64_t min_triangles);

#define VR_DEFAULT_SCENE "sphere"
#define VR_DEFAULT_SPHERE_TRIANGLES 81920u /* geodesic frequency 64, as the paper's sphere */

#ifdef __cplusplus
}
#endif
#endif
