/* parts.h - a run's batches cut into parts: the unit of sort-last rendering (raster/sortlast.c),
 * where every GPU runs the geometry stage and the rasterizer on its share of the batches.
 *
 * A part is a contiguous range of the batches of the stream the strategy reads (the mesh's
 * index buffer, or the plan-ordered copy for patch and meshlet), cut so that every part gets
 * the same number of batches (not of triangles: each batch stays exactly the one a single run
 * forms, so reuse, invocations and shading counts summed over the parts equal the single run's).
 * Each part is a mesh of its own - a view of its range of the stream over the whole vertex
 * buffer - with its batches given (pipeline/stage/geometry.h, vr_batches_given), and its first
 * stream position, which the rasterizer adds to its queue slots (vr_raster_config.slot_base) so
 * the parts' visibility words are the single run's.
 *
 * multi is refused with more than one part: it shades the whole vertex buffer before it
 * assembles, so every part would shade it again (the multi-GPU form of multi is a different
 * algorithm: shade a share of the vertices each, then an all-gather of the shaded buffer).
 * Try: `vreuse_tests raster/sortlast`, `vreuse render bunny.obj --parts 3 --heatmap`.
 */
#ifndef VR_PARTS_H
#define VR_PARTS_H

#include <stdint.h>

#include "pipeline/stage/geometry.h"
#include "reuse/reuse.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vr_part {
    vr_mesh mesh;            /* a view: indices into the stream, the whole mesh's vertex arrays;
                                index_count 0 for an empty part (more parts than batches) */
    uint32_t first_tri;      /* stream position of the part's triangle 0 */
    uint32_t batch_begin;    /* the part's batches [batch_begin, batch_end) of the stream */
    uint32_t batch_end;
    vr_batches_given given;  /* dynamic strategies and plans: the part's batches, rebased to its
                                first index (starts owned by the parts); count 0 otherwise */
} vr_part;

typedef struct vr_parts {
    uint32_t count;
    vr_part *part;           /* count parts */
    uint32_t batch_count;    /* batches of the whole stream */
    uint32_t triangles;      /* of the whole stream */
    uint32_t tri_begin;      /* the stream positions the parts cover, [tri_begin, tri_end): the */
    uint32_t tri_end;        /* whole stream, or one sort-last part's share (bounded) */
    uint32_t *stream_batch;  /* tri_end - tri_begin: batch id of each covered stream position
                                (vr_parts_batch_ids); only a part's share is held, so N streamed
                                parts hold one stream's ids in all, not N */
    uint32_t *batch_first;   /* batch_count + 1: the whole stream's first position of each batch
                                (the last entry: triangles) */
    /* storage behind the views: the whole stream's batching is shared by every vr_parts of
     * the same mesh, strategy and limits (parts.c; streamed sort-last parts each cut the whole
     * stream), the rebased starts are this one's own */
    struct vr_batching *batching; /* held; let go by vr_parts_free */
    const uint32_t *plan_indices; /* plans: the plan-ordered index buffer (shared) */
    uint32_t *starts;        /* every part's rebased starts, back to back */
    vr_batch_plan plan;      /* plans: the whole stream's plan (shared; its bounds are the
                                parts') */
} vr_parts;

/* Cuts the batches strategy `ops` forms on mesh `m` under cfg's limits (block_size,
 * batch_indices, max_unique, max_indices; patch_builder for patch) into `count` parts of equal
 * batch counts (part k: batches [B k / count, B (k + 1) / count)). `m` must outlive `out`.
 * Dynamic batches and plans are computed here (load-time work). VR_ERR_ARG when count is 0 or
 * above VR_PARTS_MAX, or for multi with count > 1 (see above); VR_ERR_OOM. */
#define VR_PARTS_MAX 64u
vr_status vr_parts_make(vr_parts *out, const vr_reuse_ops *ops, const vr_mesh *m,
                        const vr_reuse_params *cfg, uint32_t count);
/* The same batches cut into chunks of at most `max_triangles` triangles each, taken greedily in
 * stream order (a batch is never split): the unit of the bounded streaming renderer
 * (raster/stream.h). Only the batches of part `part` of `parts` as vr_parts_make cuts them
 * (batches [B part / parts, B (part + 1) / parts)); part 0 of 1: all of them. So a streamed
 * sort-last part runs its share in chunks, with the whole stream's positions and batch ids.
 * Any number of chunks (0 for an empty mesh or part). VR_ERR_ARG for multi, for max_triangles 0
 * or below one batch's triangles, for part >= parts or parts outside 1..VR_PARTS_MAX;
 * VR_ERR_OOM. */
vr_status vr_parts_make_bounded(vr_parts *out, const vr_reuse_ops *ops, const vr_mesh *m,
                                const vr_reuse_params *cfg, uint32_t max_triangles,
                                uint32_t part, uint32_t parts);
void vr_parts_free(vr_parts *p); /* accepts a zeroed struct */

/* Batch ids of part (or chunk) c's triangles: entry t is its triangle t's (its tri_id's) batch. */
static inline const uint32_t *vr_parts_batch_ids(const vr_parts *p, const vr_part *c)
{
    return p->stream_batch + (c->first_tri - p->tri_begin);
}

#ifdef __cplusplus
}
#endif
#endif
