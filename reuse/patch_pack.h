/* patch_pack.h - internal: how both patch builders (reuse/patches.c on the CPU, the GPU builder
 * reuse/patch_build.cu and its reference reuse/patch_build_ref.c) size their patches and pack
 * them into batches. Patches aim at a quarter of a batch, and a batch then grows over the patch
 * adjacency, so that it fills to about 94% of its binding limit where one patch per batch, or
 * consecutive patches with summed vertex counts, fill about 70% (bench/NOTES.md, sessions 34 and
 * 36). The packing reads patches only - their sizes, distinct vertices and neighbours - so the
 * GPU builder computes those on the device and only the greedy pass runs on its host (sphere:7M
 * on the 2-core development machine: 50-70 ms at N_u 256 / 1023 indices, 110-360 ms at 64 / 192,
 * where patches are 5x as many; bench/NOTES.md, session 36).
 * Pure C, single-threaded, deterministic. Try: `vreuse_tests reuse/plan reuse/gpupatch`.
 */
#ifndef VR_PATCH_PACK_H
#define VR_PATCH_PACK_H

#include <stdint.h>

#include "reuse/patches.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Faces a patch aims at: what a batch may hold - max_faces, or 1.4 faces per vertex of N_u
 * when N_u binds first (a compact disk has 1.5-1.8) - times 0.85 (Lloyd's sizes spread by about
 * +-25%, so aiming a little low leaves few patches to split), divided by 4 patches per batch
 * (sphere:1.3M at N_u 64 / 192 indices: 45 of 64 faces a batch with one patch per batch, 58 with
 * four, 1% fewer invocations; bench/NOTES.md, session 34). At least 1. */
uint32_t vr_patch_target(uint32_t max_unique, uint32_t max_faces);

/* A mesh cut into patches, face by face. Faces may be numbered in any order; a plan's
 * tri_order gets src[f] (or f when src is NULL). */
typedef struct vr_patch_cut {
    const uint32_t *idx;    /* 3 * faces: the corners of each face, every one < vertices */
    const uint32_t *ff_off; /* faces + 1, then ff: the faces sharing an edge with each face */
    const uint32_t *ff;     /*   (repeats allowed) */
    const uint32_t *patch;  /* faces: the patch of each face, 0 .. patches - 1, none empty */
    const uint32_t *src;    /* faces: the source triangle id of each face, or NULL */
    uint32_t faces, vertices, patches;
} vr_patch_cut;

/* The same cut patch by patch: all the packing reads. The neighbours of patch p are listed in
 * the order of their first mention when p's faces are walked by ascending face number, each
 * face's neighbours in ff order; `roots` lists the patches by ascending lowest face number. So
 * the packing follows the faces' numbering and adjacency order, not the patch numbering. */
typedef struct vr_patch_graph {
    uint32_t patches, vertices;
    uint32_t *size;           /* patches: faces of each patch */
    uint32_t *pv_off, *pv;    /* patches + 1, then each patch's distinct vertices, any order */
    uint32_t *pn_off, *pn;    /* patches + 1, then each patch's neighbours (other patches with
                                 a face sharing an edge with one of its faces), each once */
    uint32_t *roots;          /* patches: by ascending lowest face */
} vr_patch_graph;

/* Allocates the arrays of a graph of `patches` patches, pv_total vertex and pn_total
 * neighbour entries (pv_off[patches] and pn_off[patches] are set to them); VR_ERR_OOM. */
vr_status vr_patch_graph_alloc(vr_patch_graph *g, uint32_t patches, uint32_t vertices,
                               uint32_t pv_total, uint32_t pn_total);
/* Frees the arrays; accepts a zeroed graph, leaves it zeroed. */
void vr_patch_graph_free(vr_patch_graph *g);
/* Packs whole patches into batches of at most max_faces faces and max_unique distinct
 * vertices: a batch starts at the first patch not packed yet of the breadth-first order over
 * the patch adjacency (each component from its root, neighbours in list order) and grows over
 * the adjacency, taking each time the neighbouring patch that fits and shares the most
 * vertices with the batch (ties: the first listed), until no neighbour fits; then, as long as
 * it fits, the order's next patch (what joins the pieces of a soup, or components too small
 * for a batch). batch_of[p] gets p's batch, *batches the count. Every patch must fit a batch
 * alone (VR_ERR_ARG naming the patch otherwise); VR_ERR_OOM. */
vr_status vr_patches_pack(uint32_t *batch_of, uint32_t *batches, const vr_patch_graph *g,
                          uint32_t max_unique, uint32_t max_faces);

/* A cut packed on the host: its graph (O(faces + adjacency)), vr_patches_pack, and the plan -
 * tri_order (source ids grouped by batch, ascending inside a batch), starts, triangle_count,
 * batch_count and group_count (= patches); iterations, split and bounds are left alone.
 * VR_ERR_OOM. */
vr_status vr_patches_pack_cut(vr_batch_plan *out, const vr_patch_cut *cut, uint32_t max_unique,
                              uint32_t max_faces);

#ifdef __cplusplus
}
#endif
#endif
