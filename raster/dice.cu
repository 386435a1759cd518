/* dice.cu - the Dicer on the GPU (dice.h; CPU twin and the argument for the slab test: dice.c).
 * Per slice: the geometry stage (vr_geometry_run, strategy naive, no culling), the rasterizer
 * (vr_raster_gpu, no back-face culling) into an N x N visibility buffer, one kernel that turns
 * it into HistoPyramid keys (cell index when covered, ~0 when not), vr_hp_build_select and
 * vr_hp_compact (order-preserving), and the slice's list copied to the host. Each stage is
 * bit-identical to its twin, so the points equal the CPU twin's in the same order.
 * Try: `vreuse dice teapot.obj --volume 256`, `vreuse_tests gpu/dice`.
 */
#include <stdlib.h>

#include "pipeline/compact/histopyramid.h"
#include "pipeline/stage/geometry.h"
#include "pipeline/vr_check.h"
#include "raster/dice.h"
#include "raster/raster.h"

#define VR_DICE_KEY_BLOCK 256

/* One thread per pixel (grid-stride): key[i] = i when the pixel is covered, else ~0, the value
 * the HistoPyramid's select (threshold 2^32 - 1) drops. No shared memory, no sync. */
__global__ void __launch_bounds__(VR_DICE_KEY_BLOCK)
    vr_dice_key_kernel(uint32_t *key /* n */, const uint64_t *vis /* n */, uint32_t n)
{
    for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        key[i] = vis[i] != VR_VIS_EMPTY ? i : 0xffffffffu;
}

extern "C" vr_status vr_dice_gpu(vr_dice_result *r, const vr_mesh *m)
{
    const uint32_t v = r->volume, n = v * v, tris = m->index_count / 3;
    vr_status st = VR_OK;
    vr_geometry *g = NULL;
    vr_hp *hp = NULL;
    void *d_vis = NULL, *d_key = NULL, *d_list = NULL, *d_scratch = NULL;
    cudaEvent_t e0 = NULL, e1 = NULL;
    uint32_t *list = (uint32_t *)malloc((size_t)n * sizeof *list);
    const vr_raster_config rc = {v, v, 0, VR_RASTER_BIG_LIST, 0};
    vr_reuse_params cfg = vr_reuse_params_default();
    cfg.cull = 0;
    const uint32_t blocks = (n + VR_DICE_KEY_BLOCK - 1) / VR_DICE_KEY_BLOCK;

    if (!list) {
        st = VR_ERROR(VR_ERR_OOM, "out of memory for a %u x %u slice list", v, v);
        goto done;
    }
    if ((st = vr_geometry_create(&g, m)) || (st = vr_hp_create(&hp, VR_HP_PLAIN, n, NULL)) ||
        (st = vr_cuda_alloc(&d_vis, (size_t)n * sizeof(uint64_t), "dice visibility buffer")) ||
        (st = vr_cuda_alloc(&d_key, (size_t)n * sizeof(uint32_t), "dice keys")) ||
        (st = vr_cuda_alloc(&d_list, (size_t)n * sizeof(uint32_t), "dice cell list")) ||
        (st = vr_cuda_alloc(&d_scratch, vr_raster_scratch_bytes(), "raster scratch")))
        goto done;
    VR_CUDA_GOTO(cudaEventCreate(&e0));
    VR_CUDA_GOTO(cudaEventCreate(&e1));

    for (uint32_t k = 0; k < v; ++k) {
        float geometry_ms = 0, hp_ms = 0;
        vr_raster_stats rs;
        uint32_t total = 0;
        vr_dice_slice_shader(&cfg.shader, &r->fit, v, k);
        if ((st = vr_geometry_run(g, &vr_reuse_all[VR_REUSE_NAIVE], &cfg, 0, &geometry_ms)) ||
            (st = vr_raster_gpu((uint64_t *)d_vis, vr_geometry_device_queue(g), tris, &rc, &rs,
                                d_scratch, NULL)))
            goto done;
        VR_CUDA_GOTO(cudaEventRecord(e0, 0));
        vr_dice_key_kernel<<<blocks, VR_DICE_KEY_BLOCK>>>((uint32_t *)d_key,
                                                          (const uint64_t *)d_vis, n);
        VR_LAUNCH_GOTO("vr_dice_key_kernel", 0);
        if ((st = vr_hp_build_select(hp, (const uint32_t *)d_key, n, 0xffffffffull)) ||
            (st = vr_hp_compact(hp, (uint32_t *)d_list, n)))
            goto done;
        VR_CUDA_GOTO(cudaEventRecord(e1, 0));
        if ((st = vr_hp_total(hp, &total)))
            goto done;
        VR_CUDA_GOTO(cudaEventSynchronize(e1));
        VR_CUDA_GOTO(cudaEventElapsedTime(&hp_ms, e0, e1));
        VR_CUDA_GOTO(cudaMemcpy(list, d_list, (size_t)total * sizeof *list,
                                cudaMemcpyDeviceToHost));
        if ((st = vr_dice_append(r, k, list, total,
                                 geometry_ms + rs.clear_ms + rs.raster_ms + hp_ms)))
            goto done;
    }
done:
    if (e0)
        (void)cudaEventDestroy(e0); /* teardown: nothing to report to */
    if (e1)
        (void)cudaEventDestroy(e1);
    {
        void *const bufs[] = {d_vis, d_key, d_list, d_scratch};
        vr_cuda_free_all(bufs, sizeof bufs / sizeof bufs[0]);
    }
    vr_hp_destroy(hp);
    vr_geometry_destroy(g);
    free(list);
    return st;
}
