/* naive.cu - statically batched naive geometry stage (Kenzel et al. 2018, Sec. 3.3): one thread
 * per triangle shades its three corners itself, no communication and no reuse (3 invocations per
 * triangle). The baseline every reuse strategy is measured against; CPU twin: naive_ref.c.
 * Try: `vreuse_tests gpu/`, `vreuse bench --strategy naive`.
 */
#include "reuse/ref_common.h"
#include "reuse/stage.cuh"

/* Thread mapping: thread t of the grid owns triangle t (indices 3t..3t+2); no shared memory, no
 * block-level sync. Every lane of a launched warp reaches vr_emit_triangle (out-of-range lanes
 * with valid = 0), so the culling path's warp ballot sees whole warps. Invariant: slot = t
 * without culling. With culling and a block-compacted queue the block's triangles are those of
 * its work item (stage.cuh: vr_queue_block_begin). */
template <int QB>
static __global__ void __launch_bounds__(1024) vr_naive_kernel(vr_reuse_params p)
{
    __shared__ vr_compact_shared cs;
    const uint32_t triangles = p.index_count / 3;
    const uint32_t block = vr_queue_block_begin(p, &cs, QB); /* blockIdx.x, or the ink ticket */
    const uint32_t t = block * blockDim.x + threadIdx.x;
    const int valid = t < triangles;
    uint32_t i0 = 0, i1 = 0, i2 = 0;
    vr_shaded a = {}, b = {}, c = {};
    if (valid) {
        i0 = __ldg(p.indices + 3 * t + 0);
        i1 = __ldg(p.indices + 3 * t + 1);
        i2 = __ldg(p.indices + 3 * t + 2);
        a = vr_shade_vertex(p, i0);
        b = vr_shade_vertex(p, i1);
        c = vr_shade_vertex(p, i2);
    }
    vr_emit_single_round(p, &cs, QB, valid, t, a, b, c, i0, i1, i2);
}

extern "C" vr_status vr_naive_run(const vr_reuse_params *p)
{
    vr_status st = vr_reuse_validate(p, "naive");
    if (st != VR_OK)
        return st;
    const uint32_t triangles = p->index_count / 3;
    if (triangles == 0)
        return VR_OK;
    const uint32_t blocks = vr_grid_blocks(triangles, p->block_size);
    vr_reuse_params q;
    if ((st = vr_queue_launch_params(p, blocks, "naive", &q)) != VR_OK)
        return st;
    if (vr_queue_blockwise(p))
        vr_naive_kernel<1><<<blocks, p->block_size, 0, (cudaStream_t)p->stream>>>(q);
    else
        vr_naive_kernel<0><<<blocks, p->block_size, 0, (cudaStream_t)p->stream>>>(q);
    VR_LAUNCH_CHECK("vr_naive_kernel", (cudaStream_t)p->stream);
    return VR_OK;
}
