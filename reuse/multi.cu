/* multi.cu - the non-streaming, multi-pass reference (Kenzel et al. 2018, Sec. 4.2 "multi";
 * Laine and Karras 2011): kernel 1 shades the whole vertex buffer once into a workspace, kernel 2
 * assembles one triangle per thread from it. Ideal reuse for referenced vertices, but it also
 * shades unreferenced ones and needs the whole buffer shaded before the first triangle leaves.
 * CPU twin: multi_ref.c. Try: `vreuse_tests gpu/`, `vreuse bench --strategy multi`.
 */
#include "reuse/ref_common.h"
#include "reuse/stage.cuh"

/* Thread v shades vertex v into the workspace: s_clip[v] = clip position, s_normal[v] =
 * (normal, 0), both float4 so pass 2 gathers whole 16-byte vectors. No shared memory, no sync;
 * invariant: every vertex is written exactly once (invocations = vertex_count). */
static __global__ void __launch_bounds__(1024) vr_multi_shade_kernel(vr_reuse_params p)
{
    const uint64_t v64 = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (v64 >= p.vertex_count)
        return;
    const uint32_t v = (uint32_t)v64;
    float4 *clip = static_cast<float4 *>(p.temp);
    float4 *normal = clip + p.vertex_count;
    vr_shaded s = vr_shade_vertex(p, v);
    clip[v] = make_float4(s.clip[0], s.clip[1], s.clip[2], s.clip[3]);
    normal[v] = make_float4(s.normal[0], s.normal[1], s.normal[2], 0.0f);
}

static __device__ __forceinline__ vr_shaded vr_multi_fetch(const float4 *clip, const float4 *normal,
                                                           uint32_t v)
{
    const float4 c = __ldg(clip + v), n = __ldg(normal + v);
    vr_shaded s;
    s.clip[0] = c.x, s.clip[1] = c.y, s.clip[2] = c.z, s.clip[3] = c.w;
    s.normal[0] = n.x, s.normal[1] = n.y, s.normal[2] = n.z;
    return s;
}

/* Thread t assembles triangle t from the shaded workspace (read-only here, written by the
 * previous kernel on the same stream). No shared memory; every lane of a launched warp reaches
 * vr_emit_triangle (valid = 0 past the end) for the culling ballot. Slot = t without culling. */
template <int QB>
static __global__ void __launch_bounds__(1024) vr_multi_assemble_kernel(vr_reuse_params p)
{
    __shared__ vr_compact_shared cs;
    const uint32_t triangles = p.index_count / 3;
    const uint32_t block = vr_queue_block_begin(p, &cs, QB); /* blockIdx.x, or the ink ticket */
    const uint32_t t = block * blockDim.x + threadIdx.x;
    const int valid = t < triangles;
    const float4 *clip = static_cast<const float4 *>(p.temp);
    const float4 *normal = clip + p.vertex_count;
    uint32_t i0 = 0, i1 = 0, i2 = 0;
    vr_shaded a = {}, b = {}, c = {};
    if (valid) {
        i0 = __ldg(p.indices + 3 * t + 0);
        i1 = __ldg(p.indices + 3 * t + 1);
        i2 = __ldg(p.indices + 3 * t + 2);
        a = vr_multi_fetch(clip, normal, i0);
        b = vr_multi_fetch(clip, normal, i1);
        c = vr_multi_fetch(clip, normal, i2);
    }
    vr_emit_single_round(p, &cs, QB, valid, t, a, b, c, i0, i1, i2);
}

extern "C" vr_status vr_multi_run(const vr_reuse_params *p)
{
    vr_status st = vr_reuse_validate(p, "multi");
    if (st != VR_OK)
        return st;
    const uint32_t triangles = p->index_count / 3;
    if (triangles == 0)
        return VR_OK;
    assert(p->temp); /* contract: temp_bytes(p) > 0 whenever there are vertices */
    cudaStream_t stream = (cudaStream_t)p->stream;
    const uint32_t shade_blocks = vr_grid_blocks(p->vertex_count, p->block_size);
    vr_multi_shade_kernel<<<shade_blocks, p->block_size, 0, stream>>>(*p);
    VR_LAUNCH_CHECK("vr_multi_shade_kernel", stream);
    const uint32_t blocks = vr_grid_blocks(triangles, p->block_size);
    vr_reuse_params q;
    if ((st = vr_queue_launch_params(p, blocks, "multi", &q)) != VR_OK)
        return st;
    if (vr_queue_blockwise(p))
        vr_multi_assemble_kernel<1><<<blocks, p->block_size, 0, stream>>>(q);
    else
        vr_multi_assemble_kernel<0><<<blocks, p->block_size, 0, stream>>>(q);
    VR_LAUNCH_CHECK("vr_multi_assemble_kernel", stream);
    return VR_OK;
}
