/* hash.cu - dynamically batched hashing (Kenzel et al. 2018, Sec. 3.4, Algorithm 3): one block
 * per dynamic batch enters the batch's indices into a shared-memory hash table (multiplicative
 * hash, linear probing, atomicCAS from empty), numbers the occupied slots densely, shades each
 * distinct vertex exactly once and assembles one triangle per thread from shared memory.
 * CPU twin: hash_ref.c (reuse/dyn_ref_common.h). Try: `vreuse_tests gpu/dyn`,
 * `vreuse bench --strategy hash`.
 */
#include "pipeline/gts/gts_batch.cuh"
#include "reuse/dyn_common.cuh"

/* Thread mapping: thread t inserts batch positions t, t + blockDim, ... (coalesced loads;
 * ceil(count / blockDim) of them, as a batch of up to p.max_indices <= 3069 may exceed the
 * block - the loop holds no barrier or warp collective, so its bound may differ per thread), then
 * owns a chunk of table slots for compaction, dense ids t, t + blockDim, ... for shading, and
 * triangles t, t + blockDim, ... for assembly. Shared memory: vr_dyn_smem with a table of
 * 2^table_log2 slots, plus s_warp for the scan and s_failed. Sync points: table cleared |
 * inserted | (scan) compacted | shaded. Invariant: atomicCAS from VR_DYN_EMPTY is the only write
 * to the table until compaction, and every inserter of a key walks the same probe sequence, so
 * each distinct index ends up in exactly one slot: invocations == distinct vertices. */
template <int QB>
static __global__ void __maxnreg__(VR_DYN_MAX_REGS)
vr_hash_kernel(vr_reuse_params p, uint32_t table_log2)
{
    __shared__ uint32_t s_warp[VR_WARP_SIZE];
    __shared__ uint32_t s_failed;
    __shared__ vr_compact_shared cs;
    vr_dyn_batch b;
    if (!vr_dyn_block_start(p, &cs, QB, NULL, &b))
        return;
    const uint32_t slots = 1u << table_log2;
    const vr_dyn_smem s = vr_dyn_smem_carve(p.max_unique, slots);

    vr_dyn_clear_table(s, slots);
    if (threadIdx.x == 0)
        s_failed = 0;
    __syncthreads();

    for (uint32_t i = threadIdx.x; i < b.count; i += blockDim.x)
        s.map[i] = (uint16_t)vr_dyn_hash_insert(s, __ldg(p.indices + b.start + i), table_log2,
                                            &s_failed);
    __syncthreads();
    vr_dyn_finish_hashed(p, s, slots, s_warp, &s_failed, b, &cs, QB, NULL);
}

/* The same batcher fed from a compressed index buffer (pipeline/gts_batch.cuh): the block
 * decodes its batch's V entries from the GTS stream into shared memory aliasing the shaded +
 * unique region (dead until compaction), then each thread walks its consecutive triangles and
 * inserts their corners as it goes; p.indices is never read. Sync points: table cleared +
 * seeds loaded | V decoded (inside: one block scan per step) | M and Q before each thread's
 * triangles (two block scans) | inserted | as above. A malformed stream or seed sets bits in *src.err (the host reports
 * VR_ERR_FORMAT); ids stay < vertex_count, so nothing is read out of bounds either way. */
template <int QB>
static __global__ void __maxnreg__(VR_DYN_MAX_REGS)
vr_hash_gts_kernel(vr_reuse_params p, uint32_t table_log2, vr_gts_batch_source src,
                   uint32_t v_cap)
{
    __shared__ uint32_t s_warp[2 * VR_WARP_SIZE];
    __shared__ uint32_t s_failed;
    __shared__ vr_gts_batch_state st;
    __shared__ vr_compact_shared cs;
    uint32_t batch;
    vr_dyn_batch b;
    if (!vr_dyn_block_start(p, &cs, QB, &batch, &b))
        return;
    const uint32_t slots = 1u << table_log2;
    const vr_dyn_smem s = vr_dyn_smem_carve_alias(p.max_unique, slots,
                                                  4u * vr_gts_batch_scratch_words(v_cap));
    const vr_gts_batch_scratch sc =
        vr_gts_batch_scratch_at(reinterpret_cast<uint32_t *>(s.shaded), v_cap);

    vr_dyn_clear_table(s, slots);
    if (threadIdx.x == 0)
        s_failed = 0;
    const uint32_t t0 = src.tri_base + b.start / 3, n = b.count / 3; /* t0: the stream's */
    vr_gts_batch_decode_v(src, batch, p.batch_count, &st, sc, s_warp);
    vr_gts_tri_walk w = vr_gts_batch_walk_start(src, &st, t0, n, s_warp);
    while (w.i < w.end) {
        const uint32_t t = w.i;
        uint32_t ids[3];
        vr_gts_batch_walk_next(src, &st, sc, t0, n, p.vertex_count, &w, ids);
        for (int k = 0; k < 3; ++k)
            s.map[3 * t + k] = (uint16_t)vr_dyn_hash_insert(s, ids[k], table_log2, &s_failed);
    }
    __syncthreads();
    if (threadIdx.x == 0 && st.err)
        atomicOr(src.err, st.err);
    vr_dyn_finish_hashed(p, s, slots, s_warp, &s_failed, b, &cs, QB, NULL);
}

static vr_status vr_hash_gts_launch(const vr_reuse_params *p)
{
    vr_status st = vr_dyn_check(p, "hash");
    if (st != VR_OK || p->index_count == 0)
        return st;
    const vr_gts_batch_source src = *p->gts;
    if (!src.seeds || !src.err || !src.c || !src.inc || (src.u_count && !src.s))
        return VR_ERROR(VR_ERR_ARG, "hash: compressed input without seeds, error word or arrays");
    /* a whole run covers the stream; a chunk (tri_base, seed_after) a stretch of it */
    const uint64_t end = (uint64_t)src.tri_base + p->index_count / 3;
    if (src.seed_after ? end >= src.strip_triangle_count : end != src.strip_triangle_count)
        return VR_ERROR(VR_ERR_ARG, "hash: the compressed stream has %u triangles, the run %u "
                        "from triangle %u%s", src.strip_triangle_count, p->index_count / 3,
                        src.tri_base, src.seed_after ? " with more after it" : "");
    const uint32_t table_log2 = vr_dyn_table_log2(p->max_unique);
    const uint32_t v_cap = vr_gts_batch_v_cap(p->max_indices, src.codes);
    const size_t smem = vr_dyn_smem_bytes(p->max_unique, 1u << table_log2, p->max_indices) -
                        (size_t)p->max_unique * (sizeof(vr_shaded) + sizeof(uint32_t)) +
                        vr_dyn_region_bytes(p->max_unique, 4u * vr_gts_batch_scratch_words(v_cap));
    const int qb = vr_queue_blockwise(p);
    st = vr_dyn_smem_fit(qb ? (const void *)vr_hash_gts_kernel<1> : (const void *)vr_hash_gts_kernel<0>,
                         smem);
    if (st != VR_OK)
        return st;
    vr_reuse_params q;
    if ((st = vr_queue_launch_params(p, p->batch_count, "hash", &q)) != VR_OK)
        return st;
    if (qb)
        vr_hash_gts_kernel<1><<<p->batch_count, p->block_size, smem, (cudaStream_t)p->stream>>>(
            q, table_log2, src, v_cap);
    else
        vr_hash_gts_kernel<0><<<p->batch_count, p->block_size, smem, (cudaStream_t)p->stream>>>(
            q, table_log2, src, v_cap);
    VR_LAUNCH_CHECK("vr_hash_gts_kernel", (cudaStream_t)p->stream);
    return VR_OK;
}

extern "C" vr_status vr_hash_run(const vr_reuse_params *p)
{
    if (p->gts)
        return vr_hash_gts_launch(p);
    return vr_dyn_launch_hashed(p, "hash", vr_hash_kernel<0>, vr_hash_kernel<1>, "vr_hash_kernel");
}
