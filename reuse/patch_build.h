/* patch_build.h - internal: what the GPU patch builder (reuse/patch_build.cu) and its CPU
 * reference (reuse/patch_build_ref.c) share verbatim: the seed rule, the packed (value, face)
 * keys that atomicMax reduces, the round counts, and the host-side packing of patches into
 * batches (patches are few - about one per 250 triangles - and the packing is one sequential
 * pass over them, so both builders run the same C function on the host). The design is argued
 * in patch_build.cu. Try: `vreuse_tests reuse/gpupatch`.
 */
#ifndef VR_PATCH_BUILD_H
#define VR_PATCH_BUILD_H

#include <stdint.h>

#include "pipeline/hd.h"
#include "reuse/patches.h"

#define VR_PBG_NONE 0xffffffffu
/* Lloyd updates after the first growth (growths = 1 + VR_PBG_LLOYD); seeds are added to
 * patches over a limit from the second update on (the first only moves seeds, as in patches.c). */
#define VR_PBG_LLOYD 3
/* Split rounds before the builder gives up (each round cuts every patch over a limit into two
 * non-empty connected pieces, so a patch of n faces needs at most n - 1; in practice 1-3). */
#define VR_PBG_SPLIT_ROUNDS_MAX 4096

/* Face f of a component of n faces (ranked by ascending face id: rank) is a seed when some
 * i < k has floor(i * n / k) == rank: k seeds spread evenly over the component's face ids. */
VR_HD int vr_pbg_is_seed(uint32_t rank, uint32_t n, uint32_t k)
{
    const uint64_t i = ((uint64_t)rank * k + n - 1) / n;
    return i < k && (uint32_t)(i * n / k) == rank;
}

/* A key whose maximum is the largest `value`, ties to the smallest face; 0 is "none" (face ids
 * stay below 2^32 - 1). */
VR_HD uint64_t vr_pbg_key(uint32_t value, uint32_t face)
{
    return ((uint64_t)value << 32) | (uint64_t)(0xffffffffu - face);
}

VR_HD uint32_t vr_pbg_key_face(uint64_t key)
{
    return 0xffffffffu - (uint32_t)key;
}

VR_HD int vr_pbg_over(uint32_t faces, uint32_t verts, uint32_t max_faces, uint32_t max_unique)
{
    return faces > max_faces || verts > max_unique;
}

#ifdef __cplusplus
extern "C" {
#endif

/* Faces a patch aims at (the CPU builder's rule, reuse/patches.c): min(1.4 N_u, max_faces),
 * times the fill margin 0.85, at least 1; a component of n faces gets ceil(n / target) seeds. */
uint32_t vr_pbg_target(uint32_t max_unique, uint32_t max_faces);

/* Packs `patches` patches (faces[i], verts[i]: the i-th patch by ascending label) in that order
 * into batches: the next patch joins the current batch while the face sums stay <= max_faces
 * and the vertex-count sums (an upper bound of the union) <= max_unique. batch_of[i] gets
 * patch i's batch; out->starts (malloc'd here) the batch starts in indices; out->batch_count
 * and out->group_count are set. VR_ERR_OOM. */
vr_status vr_pbg_pack(vr_batch_plan *out, uint32_t *batch_of, const uint32_t *faces,
                      const uint32_t *verts, uint32_t patches, uint32_t max_faces,
                      uint32_t max_unique);

#ifdef __cplusplus
}
#endif
#endif
