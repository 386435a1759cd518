/* render_program.cu - vr_render_program_run (reuse/render_program.h): the renderer's parameters
 * through the general reuse API's kernels with the render program (reuse/render_program.cuh),
 * its counters folded into the renderer's. No CPU twin of its own: the renderer's twins
 * (reuse/NAME_ref.c) are the oracle, since the queue must equal the renderer's.
 */
#include "reuse/ref_common.h"
#include "reuse/render_program.cuh"

extern "C" size_t vr_render_program_temp_bytes(vr_reuse_kind kind, const vr_reuse_params *p)
{
    assert(p);
    size_t bytes = VR_RENDER_PROGRAM_COUNTERS_BYTES;
    if (kind == VR_REUSE_MULTI)
        bytes += (size_t)(p->vertex_count ? p->vertex_count : 1) *
                 vr_program_slot_bytes(sizeof(vr_shaded));
    return bytes;
}

/* Adds the program's counts to the renderer's counters: one thread. Every primitive is queued
 * without culling; with culling the program counts queue_count itself (atomic) or the keyed
 * compaction does. */
static __global__ void vr_render_program_fold(vr_counters *out, const vr_program_counters *c,
                                              int count, int cull)
{
    if (count) {
        out->invocations += c->invocations;
        if (!cull)
            out->queue_count += (uint32_t)c->primitives;
    }
    out->overflow += c->overflow;
}

extern "C" int vr_render_program_takes(const vr_reuse_params *p)
{
    assert(p);
    return !p->gts && (!p->cull || ((p->queue_mode == VR_QUEUE_ATOMIC || vr_queue_keyed(p) ||
                                     vr_queue_blockwise(p)) &&
                                    !p->cluster_cull));
}

extern "C" vr_status vr_render_program_ink_persistent(const vr_reuse_params *p, int *persistent)
{
    assert(p && persistent);
    vr_render_program_ordered prog;
    prog.shader = p->shader;
    return vr_prog_ink_persistent(vr_prog_cheap<vr_render_program_ordered>::of(prog), persistent);
}

extern "C" int vr_render_program_fits(vr_reuse_kind kind, const vr_reuse_params *p)
{
    assert(p);
    if (kind != VR_REUSE_WARP || !vr_queue_blockwise(p))
        return 1;
    typedef vr_prog_ordered_run<vr_render_program_ordered> Q;
    const vr_batch_limits l = vr_batch_limits_of(p);
    /* vr_program_run_ordered puts fewer warps in a block where their stashes do not fit: one
     * warp's must */
    size_t room;
    if (vr_prog_warp_stash_room(&room) != VR_OK)
        return 0; /* the own kernel reports the error */
    return vr_prog_warp_smem<Q>(l.batch_indices, 1) <= room;
}

extern "C" vr_status vr_render_program_run(vr_reuse_kind kind, const vr_reuse_params *p)
{
    const char *who = (unsigned)kind < VR_REUSE_KIND_COUNT ? vr_reuse_all[kind].name
                                                           : "render program";
    vr_status st = vr_reuse_validate(p, who);
    if (st != VR_OK)
        return st;
    if (!vr_render_program_takes(p))
        return VR_ERROR(VR_ERR_ARG, "%s: the render program runs on an index buffer, without "
                        "culling or culling without cluster culling (compressed input %s, cull "
                        "%d, queue %s, cluster cull %d)", who, p->gts ? "set" : "none", p->cull,
                        (unsigned)p->queue_mode < VR_QUEUE_MODE_COUNT
                            ? vr_queue_mode_names[p->queue_mode] : "?",
                        p->cluster_cull);
    if (vr_queue_keyed(p) && !p->queue_keys)
        return VR_ERROR(VR_ERR_ARG, "%s: culling into a %s queue needs its keys "
                        "(vr_reuse_params.queue_keys)", who, vr_queue_mode_names[p->queue_mode]);
    if (!p->temp)
        return VR_ERROR(VR_ERR_ARG, "%s: the render program needs its workspace "
                        "(vr_render_program_temp_bytes)", who);
    cudaStream_t stream = (cudaStream_t)p->stream;
    vr_program_counters *counters = (vr_program_counters *)p->temp;
    void *elements = kind == VR_REUSE_MULTI
                         ? (void *)((unsigned char *)p->temp + VR_RENDER_PROGRAM_COUNTERS_BYTES)
                         : NULL;
    /* a replay reports nothing (vr_reuse_params.replay): the kernels' overflow atomics go to
     * counters nobody clears or reads */
    const int report = !(p->replay && !p->count && !p->cull);
    if (report)
        VR_CUDA_CHECK(cudaMemsetAsync(counters, 0, sizeof *counters, stream));
    const vr_program_params q = vr_render_program_params(kind, p, counters, elements);
    if (vr_queue_blockwise(p)) {
        if (!p->queue_state)
            return VR_ERROR(VR_ERR_ARG, "%s: culling into a %s queue needs a compaction state "
                            "(vr_reuse_params.queue_state)", who,
                            vr_queue_mode_names[p->queue_mode]);
        vr_render_program_ordered prog = vr_render_program_of<vr_render_program_ordered>(p);
        prog.counters = p->counters;
        prog.two_sided = p->two_sided;
        st = vr_program_run_ordered(kind, q, prog, p->queue_state, p->queue_mode, stream);
    } else if (p->cull) {
        vr_render_program_cull prog = vr_render_program_of<vr_render_program_cull>(p);
        prog.counters = p->counters;
        prog.keys = vr_queue_keyed(p) ? p->queue_keys : NULL;
        prog.two_sided = p->two_sided;
        st = vr_program_run(kind, q, prog, stream);
    } else if (p->queue_store) {
        st = vr_program_run(kind, q, vr_render_program_of<vr_render_program_staged>(p), stream);
    } else {
        st = vr_program_run(kind, q, vr_render_program_of<vr_render_program>(p), stream);
    }
    if (st != VR_OK || !report)
        return st;
    vr_render_program_fold<<<1, 1, 0, stream>>>(p->counters, counters, p->count, p->cull);
    VR_LAUNCH_CHECK("vr_render_program_fold", stream);
    return VR_OK;
}
