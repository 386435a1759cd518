/* sortlast.h - internal: the sort-last frame behind vr_renderer_set_parts (raster.h), used by
 * render.c. The parts (pipeline/stage/parts.h) are cut again when the strategy, its limits or
 * the patch builder change; per part it owns a geometry context and raster buffers on its device
 * (GPU) or a geometry result and buffers (CPU twins).
 *
 * Why it cannot deadlock or go wrong on errors: with NCCL one host thread drives each rank; all
 * threads meet at a barrier after their local work (geometry stage, raster) and go on to the
 * collectives only when every part succeeded, so no rank waits in a collective that another
 * will never join. Every rank makes the same collectives in the same order.
 */
#ifndef VR_SORTLAST_H
#define VR_SORTLAST_H

#include "raster/raster.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vr_sortlast vr_sortlast;

/* `gpu` 0: CPU twins (LOCAL only). */
vr_status vr_sortlast_create(vr_sortlast **out, const vr_mesh *m, uint32_t parts, int gpu,
                             vr_composite how);
/* Streamed parts: part k runs its share of the batches in chunks through a stream of its own
 * (raster/stream.h; `c` with part k of `parts`) on its device, compressed input `gts` when not
 * NULL. Each part's stream shades its own image; the composite takes per pixel the smallest
 * word and the colour of the part that holds it (one device: a select-min kernel per part;
 * NCCL: the words all-reduced by minimum, each rank's image masked to the pixels it won, the
 * images reduced by maximum to rank 0). With VR_STREAM_DEVICE the parts on one device read one
 * copy of the scene there (raster/stream.c), each NCCL rank its GPU's own. */
struct vr_gts;
vr_status vr_sortlast_create_streamed(vr_sortlast **out, const vr_mesh *m, uint32_t parts,
                                      int gpu, vr_composite how, const vr_stream_config *c,
                                      const struct vr_gts *gts);
/* Streamed parts: every part's later frames decode their batches from `gts` (NULL: the index
 * buffer); VR_ERR_ARG for parts that are not streamed. */
vr_status vr_sortlast_set_gts(vr_sortlast *s, const struct vr_gts *gts);
void vr_sortlast_destroy(vr_sortlast *s); /* accepts NULL */
/* One frame of `o` with the stage configuration `cfg` and shading `shade` (render.c makes
 * both) into rgba (width * height * 4 bytes, host) or nowhere when rgba is NULL. */
vr_status vr_sortlast_frame(vr_sortlast *s, uint8_t *rgba, const vr_render_options *o,
                            const vr_reuse_params *cfg, const vr_resolve_params *shade,
                            vr_render_stats *st);

/* The last frame's composite visibility buffer into host `vis` (pixels words). */
vr_status vr_sortlast_read_vis(vr_sortlast *s, uint64_t *vis, size_t pixels);

#ifdef __cplusplus
}
#endif
#endif
