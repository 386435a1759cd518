/* patch_build.h - internal: what the GPU patch builder (reuse/patch_build.cu) and its CPU
 * reference (reuse/patch_build_ref.c) share verbatim: the seed rule, the packed (value, face)
 * keys that atomicMax reduces and the round counts. Both size their patches with
 * vr_patch_target and pack them into batches with vr_patches_pack (reuse/patch_pack.h, shared
 * with the CPU builder; the GPU builder runs it on the host). The design is argued in
 * patch_build.cu. Try: `vreuse_tests reuse/gpupatch`.
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

#endif
