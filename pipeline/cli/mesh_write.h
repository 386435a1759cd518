/* mesh_write.h - a vr_mesh written as a scene file that vreuse's loaders read back as the same
 * mesh: the same vertices (unreferenced ones included) and the same triangles in the same order,
 * corners in the same rotation. `vreuse export` writes through these; tests/test_export.c reads
 * every shared scene back in every format.
 *
 *   .obj  text, positions / normals / texcoords with %.9g; read by assimp, which joins vertices
 *         closer than 1e-5 in every attribute and drops unreferenced ones, and parses floats
 *         within about an ulp (not bit for bit)
 *   .ply  binary little endian, read by our own PLY reader (load_ply.c): exact
 *   .glb  glTF 2.0 binary, one mesh, one primitive, uint32 indices; read by assimp (joins and
 *         drops as for OBJ); attributes exact except texcoord v, stored as 1 - v because glTF's
 *         v axis points down and assimp flips it back on reading
 *   .gts  the codec (pipeline/gts/gts.h): default options, vertex data kept; the triangles come
 *         back in the stream's order, vertices numbered by first visit (unreferenced last)
 * Try: `vreuse export sphere -o s.glb && vreuse info s.glb`, `vreuse_tests export/`.
 */
#ifndef VR_MESH_WRITE_H
#define VR_MESH_WRITE_H

#include "pipeline/vreuse.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum vr_mesh_format {
    VR_MESH_OBJ = 0,
    VR_MESH_PLY,
    VR_MESH_GLB,
    VR_MESH_GTS,
    VR_MESH_FORMAT_COUNT
} vr_mesh_format;

/* "obj", "ply", "glb", "gts": the file extensions, in enum order. */
extern const char *const vr_mesh_format_names[VR_MESH_FORMAT_COUNT];

/* The format a path's extension names (case-insensitive), or -1. */
int vr_mesh_format_of(const char *path);

/* Writes `m` (validated: indices < vertex_count, whole triangles) to the file `path` in format
 * `f`; `comment` (one line, may be NULL) goes into the file where the format has room for it
 * (OBJ and PLY comments, glTF asset.extras). VR_ERR_IO naming `path` when a write fails,
 * VR_ERR_OVERFLOW when the mesh does not fit the format (GLB: 4 GiB; GTS: the codec's limits),
 * VR_ERR_FORMAT for an invalid mesh. O(vertex_count + index_count), GTS O(index_count log). */
vr_status vr_mesh_write(const char *path, vr_mesh_format f, const vr_mesh *m,
                        const char *comment);

/* vr_mesh_write as a writer for vr_cli_write_via (pipeline/cli/cli.h), which names the file:
 * vr_cli_write_via(path, what, vr_mesh_write_job_run, &job) (export, apply). */
typedef struct vr_mesh_write_job {
    const vr_mesh *mesh;
    vr_mesh_format format;
    const char *comment;
} vr_mesh_write_job;
vr_status vr_mesh_write_job_run(const char *file, void *job);

/* Writes a point cloud: PLY, binary little endian, `count` vertices with float x y z (xyz: 3 *
 * count floats) and no faces; `comment` as for vr_mesh_write. VR_ERR_IO naming `path`. */
vr_status vr_points_write_ply(const char *path, const float *xyz, uint32_t count,
                              const char *comment);

#ifdef __cplusplus
}
#endif
#endif
