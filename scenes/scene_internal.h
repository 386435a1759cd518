/* scene_internal.h - helpers shared by the files of scenes/ (not part of the public API):
 * the PLY reader, mesh finishing (validation + normals), a deterministic RNG.
 * Everything here allocates with malloc and leaves nothing allocated on failure.
 * Exercised by `vreuse_tests scenes/`.
 */
#ifndef VR_SCENE_INTERNAL_H
#define VR_SCENE_INTERNAL_H

#include <stdint.h>

#include "scenes/scene.h"

/* Largest triangle count whose index buffer fits the 2^32-1 index limit of vr_mesh. */
#define VR_MAX_TRIANGLES (UINT32_MAX / 3u)

/* Reads a PLY file (ascii, binary little/big endian): vertex x,y,z[,nx,ny,nz][,s,t|u,v],
 * `face` lists (polygons fanned) and `tristrips` lists (-1 restarts). The header is checked
 * against the file size before anything is allocated. Returns a finished mesh. */
vr_status vr_ply_load(vr_mesh *out, const char *path);

/* Reads a scene file with assimp (load_assimp.c): one draw per (node, mesh) reference. */
vr_status vr_assimp_load(vr_scene *out, const char *path);

/* Finishes a freshly read mesh: checks indices (vr_mesh_validate) and positions (finite),
 * normalizes the file's normals and computes area-weighted ones where the file has none or
 * they are unusable. `what` names the source in messages. Frees nothing on failure. */
vr_status vr_mesh_finish(vr_mesh *m, const char *what);

/* Area-weighted vertex normals (unreferenced or zero-area vertices get +z). `normals` holds
 * 3 * vertex_count floats. */
void vr_compute_normals(float *normals, const vr_mesh *m);

/* Deep copy; on failure `out` is left zeroed. */
vr_status vr_mesh_copy(vr_mesh *out, const vr_mesh *in);

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
