/* stream.h - internal: the bounded streaming frame behind vr_renderer_create_streamed (raster.h),
 * used by render.c, and by sortlast.c for streamed sort-last parts (a stream per part, over its
 * share of the batches: vr_stream_config.part / parts). The strategy's batches are cut into
 * chunks of at most `capacity` triangles (vr_parts_make_bounded, cut again when the strategy,
 * its limits or the patch builder change); the chunks run one after another through one queue
 * of that capacity, one visibility buffer and one image (vr_raster_stream_*), so device memory
 * for the pipeline does not grow with the scene.
 *
 * Per chunk, a staging slot (two, used in turn) receives on a copy stream what the chunk needs
 * from the host - its batch starts, and with VR_STREAM_HOST its indices and its window of the
 * vertex arrays - while the previous chunk computes; events order the copy after the slot's last
 * reader and the chunk after its copy. With compressed input (vr_stream_set_gts) a chunk copies
 * the slices of the stream its batches decode from and their seeds instead of its indices. The
 * CPU twin does the same with loops and proves the cut, the slices, the words and the per-chunk
 * resolve on any machine.
 */
#ifndef VR_STREAM_H
#define VR_STREAM_H

#include "raster/raster.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vr_stream vr_stream;

/* `gpu` 0: CPU twins. VR_ERR_ARG for a capacity below 1 triangle or an unknown source. */
vr_status vr_stream_create(vr_stream **out, const vr_mesh *m, const vr_stream_config *c, int gpu);
void vr_stream_destroy(vr_stream *s); /* accepts NULL */
/* Compressed input (raster.h's vr_renderer_set_gts): later frames decode each batch from `gts`
 * (the compressed form of the mesh, alive while set; NULL: the index buffer again), strategies
 * with a per-batch decoder only (hash; VR_ERR_ARG at the frame otherwise). Per chunk, its batches
 * decode with their seeds (one per batch, computed at the cut) from the stream's arrays -
 * VR_STREAM_DEVICE uploads C, INC and S here, VR_STREAM_HOST copies each chunk's slices of them -
 * and no index buffer reaches the device. VR_ERR_ARG when the counts differ from the mesh,
 * VR_ERR_FORMAT for a stream that fails vr_gts_validate. */
struct vr_gts;
vr_status vr_stream_set_gts(vr_stream *s, const struct vr_gts *gts);
/* One frame of `o` with the stage configuration `cfg` and shading `shade` (render.c makes both)
 * into rgba (width * height * 4 bytes, host) or nowhere when rgba is NULL. */
vr_status vr_stream_frame(vr_stream *s, uint8_t *rgba, const vr_render_options *o,
                          const vr_reuse_params *cfg, const vr_resolve_params *shade,
                          vr_render_stats *st);
/* The last frame's visibility buffer into host `vis` (pixels words). */
vr_status vr_stream_read_vis(vr_stream *s, uint64_t *vis, size_t pixels);
/* GPU streams: the last frame's visibility buffer (`pixels` words) and image (4 * pixels bytes)
 * on the stream's device, and the CUDA stream that wrote them (finished when vr_stream_frame
 * returned). Streamed sort-last parts composite them in place; the next frame overwrites them.
 * VR_ERR_ARG for a CPU stream or no frame of that size. */
vr_status vr_stream_device_frame(vr_stream *s, size_t pixels, uint64_t **d_vis, uint8_t **d_rgba,
                                 void **stream);

#ifdef __cplusplus
}
#endif
#endif
