/* dyn_common.cuh - device code shared by the three dynamic-batching batchers (hash.cu, phash.cu,
 * sort.cu; Kenzel et al. 2018, Sec. 3.4): one block per dynamic batch reads and checks its
 * bounds, deduplicates the batch's indices its own way, then shades each distinct vertex once
 * into shared memory and assembles one triangle per thread. This file holds everything but the
 * deduplication: the shared-memory layout, a block scan for runtime block sizes, table
 * compaction, and the shade and assemble phases. Host-side checks and the CPU twin:
 * reuse/dyn_ref_common.h.
 */
#ifndef VR_DYN_COMMON_CUH
#define VR_DYN_COMMON_CUH

#include "pipeline/block_scan.cuh"
#include "reuse/dyn_ref_common.h"
#include "reuse/stage.cuh"

/* hash and phash take the block size at run time (32..1024), so their register budget is set
 * per thread: 32 registers let 2048 threads - a full H100 SM - be resident at any block size
 * (64 Ki registers), and also admit 1024-thread blocks. Left free, ptxas takes 56, which caps
 * 256-thread blocks at 4 per SM; at 32 it spills nothing in phash and one word in hash. */
#define VR_DYN_MAX_REGS 32

/* The dynamic shared memory of one block. Sizes depend on N_u = p.max_unique and the batch
 * length bound p.max_indices (runtime), and the hash table's slot count (0 for sort). The map
 * is sized to max_indices, not to the limit, so the default 1023 keeps today's footprint (12 KiB
 * at N_u 256: 16 blocks of 128 threads still fit an SM). vr_shaded is 28 bytes: stride 7
 * words, odd, so 32 threads writing consecutive entries hit 32 different banks. */
typedef struct vr_dyn_smem {
    vr_shaded *shaded; /* max_unique: shaded vertex of each dense id */
    uint32_t *unique;  /* max_unique: vertex id of each dense id */
    uint32_t *table;   /* table_slots: hash table (key or VR_DYN_EMPTY), then dense id per slot */
    uint16_t *map;     /* max_indices: batch position -> table slot (hash) or dense id (sort);
                          both < 2^16 (slots <= 2 x 1024, ids < N_u) */
} vr_dyn_smem;

static __host__ __device__ inline size_t vr_dyn_smem_bytes(uint32_t max_unique,
                                                        uint32_t table_slots,
                                                        uint32_t max_indices)
{
    return (size_t)max_unique * (sizeof(vr_shaded) + sizeof(uint32_t)) +
           (size_t)table_slots * sizeof(uint32_t) + (size_t)max_indices * sizeof(uint16_t);
}

/* Bytes of the shaded + unique region when `alias_bytes` of earlier scratch share it (the
 * per-batch GTS decoder's V and U arrays, dead once the batch's keys are in the table). */
static __host__ __device__ inline size_t vr_dyn_region_bytes(uint32_t max_unique,
                                                             size_t alias_bytes)
{
    const size_t own = (size_t)max_unique * (sizeof(vr_shaded) + sizeof(uint32_t));
    return own > alias_bytes ? own : (alias_bytes + 3) / 4 * 4;
}

/* Carves the block's dynamic shared memory; every part stays 4-byte aligned. The shaded +
 * unique region spans vr_dyn_region_bytes(max_unique, alias_bytes) and starts the block's
 * dynamic shared memory (scratch aliasing it starts there too). */
static __device__ __forceinline__ vr_dyn_smem vr_dyn_smem_carve_alias(uint32_t max_unique,
                                                                      uint32_t table_slots,
                                                                      size_t alias_bytes)
{
    extern __shared__ __align__(16) unsigned char vr_dyn_smem_raw[];
    vr_dyn_smem s;
    s.shaded = reinterpret_cast<vr_shaded *>(vr_dyn_smem_raw);
    s.unique = reinterpret_cast<uint32_t *>(s.shaded + max_unique);
    s.table = reinterpret_cast<uint32_t *>(vr_dyn_smem_raw +
                                           vr_dyn_region_bytes(max_unique, alias_bytes));
    s.map = reinterpret_cast<uint16_t *>(s.table + table_slots);
    return s;
}

static __device__ __forceinline__ vr_dyn_smem vr_dyn_smem_carve(uint32_t max_unique,
                                                                uint32_t table_slots)
{
    return vr_dyn_smem_carve_alias(max_unique, table_slots, 0);
}

/* Launch-shape answers (cudaFuncGetAttributes, cudaFuncSetAttribute, occupancy, device
 * attributes) kept per host thread - NCCL ranks launch from threads of their own - for a kernel,
 * device, block and byte count. Each query costs host microseconds, and a small mesh's whole
 * stage is 20-40 us: warp on the shared meshes measured 5-10% slower when its launch asked the
 * pooled kernel's shape before taking the rounds kernel than with the rounds kernel forced
 * (bench/results/warp-pooling-ab-h100-s41.txt). Only answers that succeeded are kept. */
enum { VR_SHAPE_FITS, VR_SHAPE_OPTED_IN, VR_SHAPE_RESIDENT };
typedef struct vr_shape {
    const void *kernel;
    int device, kind;
    uint32_t block;
    size_t bytes;
    uint32_t value;
} vr_shape;
#define VR_SHAPES 32
static thread_local vr_shape vr_shapes[VR_SHAPES];
static thread_local uint32_t vr_shapes_used, vr_shapes_next;

static inline bool vr_shape_find(const void *k, int device, int kind, uint32_t block,
                                 size_t bytes, uint32_t *value)
{
    for (uint32_t i = 0; i < vr_shapes_used; ++i) {
        const vr_shape &e = vr_shapes[i];
        if (e.kernel == k && e.device == device && e.kind == kind && e.block == block &&
            e.bytes == bytes) {
            *value = e.value;
            return true;
        }
    }
    return false;
}

static inline void vr_shape_keep(const void *k, int device, int kind, uint32_t block,
                                 size_t bytes, uint32_t value)
{
    const uint32_t i = vr_shapes_next;
    vr_shapes_next = (i + 1) % VR_SHAPES; /* the oldest answer goes first */
    if (vr_shapes_used < VR_SHAPES)
        ++vr_shapes_used;
    vr_shapes[i] = vr_shape{k, device, kind, block, bytes, value};
}

/* Opts `kernel` in to `bytes` of dynamic shared memory when that exceeds what it gets by
 * default (48 KiB minus its static shared memory): sort's 1024-thread instantiation keeps
 * 36 KiB of CUB storage, so N_u above about 300 needs the opt-in there. */
static vr_status vr_dyn_smem_fit(const void *kernel, size_t bytes)
{
    int device;
    uint32_t done;
    VR_CUDA_CHECK(cudaGetDevice(&device));
    if (vr_shape_find(kernel, device, VR_SHAPE_OPTED_IN, 0, bytes, &done))
        return VR_OK;
    cudaFuncAttributes attr;
    VR_CUDA_CHECK(cudaFuncGetAttributes(&attr, kernel));
    if (bytes > (size_t)attr.maxDynamicSharedSizeBytes)
        VR_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           (int)bytes));
    vr_shape_keep(kernel, device, VR_SHAPE_OPTED_IN, 0, bytes, 1);
    return VR_OK;
}

/* One batch of the index buffer (once vr_dyn_batch_bounds accepted it). */
typedef struct vr_dyn_batch {
    uint32_t start; /* first index: a multiple of 3 */
    uint32_t count; /* indices: a multiple of 3, <= p.max_indices */
} vr_dyn_batch;

/* Reads batch `batch`'s bounds (the block's work item, stage.cuh: vr_queue_block_begin). Every thread reads the same two words, so the result - and
 * an early return on it - is block-uniform. Returns 0 when the bounds break the contract that
 * vr_batches_dynamic guarantees (see vr_dyn_check_batches); thread 0 then counts the batch's
 * triangles in counters->overflow, so nothing past the batch or the buffer is ever read and the
 * host sees that the output is incomplete. */
static __device__ __forceinline__ int vr_dyn_batch_bounds(const vr_reuse_params &p, uint32_t batch,
                                                          vr_dyn_batch *b)
{
    const uint32_t start = __ldg(p.batch_starts + batch);
    const uint32_t end = __ldg(p.batch_starts + batch + 1);
    b->start = start;
    b->count = end >= start ? end - start : 0;
    const int ok = end >= start && end <= p.index_count && start % 3 == 0 && b->count % 3 == 0 &&
                   b->count <= p.max_indices && (batch != 0 || start == 0) &&
                   (batch + 1 != p.batch_count || end == p.index_count);
    if (!ok && threadIdx.x == 0)
        atomicAdd(&p.counters->overflow, b->count >= 3 ? b->count / 3 : 1u);
    return ok;
}

/* The start of every dynamic batcher's block, called by every thread first: the block's batch
 * (vr_queue_block_begin: blockIdx.x, or its ink ticket) in *batch (NULL: not wanted), its bounds
 * read and checked
 * into *b. 0 when the block has nothing to do - bounds broken (counted as overflow) or an empty
 * batch - after it took its part in the queue's compaction (vr_queue_block_skip). */
static __device__ __forceinline__ int vr_dyn_block_start(const vr_reuse_params &p,
                                                         vr_compact_shared *cs, int qb,
                                                         uint32_t *batch, vr_dyn_batch *b)
{
    const uint32_t mine = vr_queue_block_begin(p, cs, qb);
    if (batch)
        *batch = mine;
    if (vr_dyn_batch_bounds(p, mine, b) && b->count != 0)
        return 1;
    vr_queue_block_skip(p, cs, qb);
    return 0;
}

/* Thread 0 counts a batch that cannot be processed (more distinct vertices than N_u, or a
 * full hash table) in counters->overflow; the caller returns, block-uniformly. */
static __device__ __forceinline__ void vr_dyn_reject(const vr_reuse_params &p, uint32_t tri_count)
{
    if (threadIdx.x == 0)
        atomicAdd(&p.counters->overflow, tri_count ? tri_count : 1u);
}

/* Exclusive prefix sum over the block of one value per thread (pipeline/block_scan.cuh): two
 * __syncthreads; s_warp may be reused only after a further one. *total gets the block's sum. */
static __device__ __forceinline__ uint32_t vr_dyn_block_scan(uint32_t x, uint32_t *s_warp,
                                                             uint32_t *total)
{
    return vr_block_scan(x, VR_SCAN_SUM, s_warp, total);
}

/* Sets every slot of the hash table to VR_DYN_EMPTY; a __syncthreads must follow. */
static __device__ __forceinline__ void vr_dyn_clear_table(const vr_dyn_smem &s, uint32_t slots)
{
    for (uint32_t i = threadIdx.x; i < slots; i += blockDim.x)
        s.table[i] = VR_DYN_EMPTY;
}

/* Enters `key` into the block's hash table and returns its slot (hash.cu and the static plans'
 * reuse/plan.cuh). A slot, once filled, never changes: a CAS that returns another key means
 * move on, one that returns EMPTY or our key means the key lives here. After `slots` misses the
 * table holds only other keys (more distinct vertices than slots): *s_failed is set and the
 * slot returned is meaningless. */
static __device__ __forceinline__ uint32_t vr_dyn_hash_insert(const vr_dyn_smem &s, uint32_t key,
                                                              uint32_t table_log2,
                                                              uint32_t *s_failed)
{
    const uint32_t slots = 1u << table_log2, mask = slots - 1;
    uint32_t slot = vr_dyn_hash(key, table_log2);
    for (uint32_t probes = 0;; ++probes) {
        if (probes == slots) {
            atomicOr(s_failed, 1u);
            break;
        }
        const uint32_t prev = atomicCAS(s.table + slot, VR_DYN_EMPTY, key);
        if (prev == VR_DYN_EMPTY || prev == key)
            break;
        slot = (slot + 1) & mask;
    }
    return slot;
}

/* Linear-probing attempts per thread before the warp takes over its key (phash). */
#define VR_PHASH_FAST_PROBES 4

/* phash's insertion of keys[0 .. count) (phash.cu and the general reuse API): in round r,
 * thread t inserts position r * blockDim + t, for ceil(count / blockDim) rounds (batches of up
 * to 3069 indices may exceed the block); the round loop has a block-uniform bound so warps are
 * converged for the slow path's shuffles and votes. Each thread first probes alone for
 * VR_PHASH_FAST_PROBES slots; keys still without a slot are then inserted by their whole warp,
 * one key at a time, 32 consecutive slots per step. Invariant: slots change only EMPTY -> key,
 * by atomicCAS; every inserter of a key passes a slot only after seeing it hold another key, so
 * all stop at the same first empty-or-equal slot and each key occupies exactly one slot.
 * s.map[i] gets key i's slot; *s_failed is set when the table is full. A __syncthreads must
 * follow. Every thread calls it. */
static __device__ __forceinline__ void vr_phash_insert_batch(const vr_dyn_smem &s,
                                                             const uint32_t *keys, uint32_t count,
                                                             uint32_t table_log2,
                                                             uint32_t *s_failed)
{
    const uint32_t slots = 1u << table_log2, mask = slots - 1;
    const uint32_t lane = threadIdx.x & (VR_WARP_SIZE - 1);
    for (uint32_t base = 0; base < count; base += blockDim.x) {
        const uint32_t i = base + threadIdx.x;
        const int has_key = i < count;
        const uint32_t key = has_key ? __ldg(keys + i) : 0;
        uint32_t slot = vr_dyn_hash(key, table_log2);
        uint32_t passed = 0; /* slots seen holding other keys */
        int pending = has_key;

        /* fast path: the thread probes alone, as in hash.cu */
        for (int k = 0; k < VR_PHASH_FAST_PROBES && pending; ++k) {
            const uint32_t prev = atomicCAS(s.table + slot, VR_DYN_EMPTY, key);
            if (prev == VR_DYN_EMPTY || prev == key) {
                pending = 0;
            } else {
                slot = (slot + 1) & mask;
                ++passed;
            }
        }
        if (pending && passed >= slots) {
            pending = 0;
            atomicOr(s_failed, 1u);
        }

        /* slow path: the warp serves its lowest pending lane (the leader). Lane j reads slot
         * leader's next + j with an atomic (other warps are inserting concurrently); the first
         * slot in probe order that holds the key or is empty decides. Empty: that lane CASes
         * the key in - a lost race moves the window past the slot. Every lane with the same
         * key takes the result, so duplicates within the warp cost no extra step. All 32 lanes
         * run every iteration: the loop condition is a ballot. */
        unsigned todo = __ballot_sync(VR_FULL_MASK, pending);
        while (todo) {
            const int leader = __ffs(todo) - 1;
            const uint32_t lkey = __shfl_sync(VR_FULL_MASK, key, leader);
            const uint32_t lslot = __shfl_sync(VR_FULL_MASK, slot, leader);
            const uint32_t lpassed = __shfl_sync(VR_FULL_MASK, passed, leader);
            const uint32_t probe = (lslot + lane) & mask; /* tables < 32 slots wrap: harmless */
            const uint32_t cur = atomicOr(s.table + probe, 0u);
            const unsigned stop = __ballot_sync(VR_FULL_MASK, cur == lkey || cur == VR_DYN_EMPTY);
            uint32_t found = VR_DYN_EMPTY, advance = VR_WARP_SIZE;
            if (stop) {
                const int first = __ffs(stop) - 1;
                if ((int)lane == first) {
                    const uint32_t prev =
                        cur == lkey ? lkey : atomicCAS(s.table + probe, VR_DYN_EMPTY, lkey);
                    if (prev == VR_DYN_EMPTY || prev == lkey)
                        found = probe;
                }
                found = __shfl_sync(VR_FULL_MASK, found, first);
                advance = (uint32_t)first + 1;
            }
            if (found != VR_DYN_EMPTY) {
                if (pending && key == lkey) {
                    slot = found;
                    pending = 0;
                }
            } else if ((int)lane == leader) {
                slot = (lslot + advance) & mask;
                passed = lpassed + advance;
                if (passed >= slots) { /* every slot holds another key */
                    pending = 0;
                    atomicOr(s_failed, 1u);
                }
            }
            todo = __ballot_sync(VR_FULL_MASK, pending);
        }
        if (has_key)
            s.map[i] = (uint16_t)slot;
    }
}

/* After insertion (and a __syncthreads): gives the occupied slots dense ids 0..n-1 in slot order,
 * so shading runs on consecutive threads without idle slots in between - the paper shades per
 * slot, which leaves lanes idle whenever the table is larger than the batch's vertex count.
 * Thread t owns a contiguous chunk of slots, a block scan of the per-chunk counts gives each
 * chunk its first id. Each slot's key moves to s.unique[id] and the slot then holds its id, so
 * map (position -> slot) needs no rewrite. Returns 0 - before writing anything, block-uniformly
 * - when insertion failed (*s_failed) or the batch has more than max_unique distinct vertices;
 * else 1 with *unique_count set. The caller must __syncthreads before reading the results. */
static __device__ int vr_dyn_compact_table_n(uint32_t max_unique, const vr_dyn_smem &s,
                                             uint32_t slots, uint32_t *s_warp,
                                             const uint32_t *s_failed, uint32_t *unique_count)
{
    const uint32_t per = (slots + blockDim.x - 1) / blockDim.x;
    const uint32_t lo = min(slots, threadIdx.x * per), hi = min(slots, lo + per);
    uint32_t occupied = 0;
    for (uint32_t i = lo; i < hi; ++i)
        occupied += s.table[i] != VR_DYN_EMPTY;
    uint32_t total;
    uint32_t id = vr_dyn_block_scan(occupied, s_warp, &total);
    /* *s_failed was last written before the __syncthreads that preceded this call */
    if (*s_failed || total > max_unique)
        return 0;
    for (uint32_t i = lo; i < hi; ++i) {
        const uint32_t key = s.table[i];
        if (key != VR_DYN_EMPTY) {
            s.unique[id] = key;
            s.table[i] = id++;
        }
    }
    *unique_count = total;
    return 1;
}

/* The same for a renderer batch: N_u = p.max_unique. */
static __device__ __forceinline__ int vr_dyn_compact_table(const vr_reuse_params &p,
                                                           const vr_dyn_smem &s, uint32_t slots,
                                                           uint32_t *s_warp,
                                                           const uint32_t *s_failed,
                                                           uint32_t *unique_count)
{
    return vr_dyn_compact_table_n(p.max_unique, s, slots, s_warp, s_failed, unique_count);
}

/* Shades dense ids threadIdx.x, + blockDim.x, ...: exactly one invocation per distinct vertex
 * of the batch (block_size < N_u loops). A __syncthreads must follow. */
static __device__ __forceinline__ void vr_dyn_shade(const vr_reuse_params &p, const vr_dyn_smem &s,
                                                    uint32_t unique_count)
{
    for (uint32_t j = threadIdx.x; j < unique_count; j += blockDim.x)
        s.shaded[j] = vr_shade_vertex(p, s.unique[j]);
}

/* One thread per triangle of the batch: map gives each corner's dense id (through the table's
 * slot -> id when via_table), the corner comes from shared memory. The loop bound is
 * block-uniform, so every warp reaches vr_emit_triangle converged (its culling vote needs whole
 * warps); lanes past the batch take part with valid = 0 and read nothing. tri_ids (the static
 * plans; NULL from the dynamic strategies, where the code folds away) gives each triangle's
 * source id, its tri_id; the slot without culling is the plan position either way, so the
 * warps store staged and consecutive. */
static __device__ __forceinline__ void vr_dyn_assemble(const vr_reuse_params &p,
                                                       const vr_dyn_smem &s, int via_table,
                                                       const vr_dyn_batch &b,
                                                       vr_compact_shared *cs, int qb,
                                                       const uint32_t *tri_ids)
{
    const uint32_t tri_count = b.count / 3, first_tri = b.start / 3;
    /* block-compacted queue: pass 0 ranks, pass 1 ranks again and stores (stage.cuh) */
    const int passes = qb ? 2 : 1;
    uint32_t slot_base = 0;
    for (int pass = 0; pass < passes; ++pass) {
        if (pass == 1)
            slot_base = vr_queue_block_base(p, cs);
        for (uint32_t base = 0; base < tri_count; base += blockDim.x) {
            const uint32_t t = base + threadIdx.x;
            int valid = t < tri_count;
            uint32_t tri = 0; /* the source id (static plans only) */
            if (tri_ids && valid) {
                tri = __ldg(tri_ids + first_tri + t);
                if (tri >= p.index_count / 3) { /* a bad id: counted once, never written */
                    if (pass == 0)
                        atomicAdd(&p.counters->overflow, 1u);
                    valid = 0;
                }
            }
            uint32_t id[3] = {0, 0, 0}, vertex[3] = {0, 0, 0};
            if (valid) {
                for (int k = 0; k < 3; ++k) {
                    id[k] = s.map[3 * t + k];
                    if (via_table)
                        id[k] = s.table[id[k]];
                    vertex[k] = s.unique[id[k]];
                }
            }
            /* corners by reference into shared memory (id 0 exists: a batch has >= 1 vertex);
             * an invalid lane's corners are never read */
            const vr_shaded &a = s.shaded[id[0]], &bb = s.shaded[id[1]], &c = s.shaded[id[2]];
            if (passes == 1) {
                vr_emit_triangle_at(p, valid, first_tri + t, tri_ids ? tri : first_tri + t, a,
                                    bb, c, vertex[0], vertex[1], vertex[2]);
                continue;
            }
            int keep;
            const uint32_t rank = vr_queue_block_rank(p, cs, pass, valid, a, bb, c, &keep);
            if (pass == 1 && keep)
                vr_queue_block_store(p, slot_base + rank, tri_ids ? tri : first_tri + t, a, bb, c,
                                     vertex[0], vertex[1], vertex[2]);
        }
    }
    vr_queue_block_end(p, qb);
}

/* The common tail of the hashing kernels (hash, phash, the static plans') once every key has
 * its slot in s.map: number the occupied slots densely, shade each distinct vertex once,
 * assemble (tri_ids as in vr_dyn_assemble). Called block-uniformly after the insertion's
 * __syncthreads; a failed batch is counted as overflow and skipped. */
static __device__ __forceinline__ void vr_dyn_finish_hashed(const vr_reuse_params &p,
                                                            const vr_dyn_smem &s, uint32_t slots,
                                                            uint32_t *s_warp,
                                                            const uint32_t *s_failed,
                                                            const vr_dyn_batch &b,
                                                            vr_compact_shared *cs, int qb,
                                                            const uint32_t *tri_ids)
{
    uint32_t unique_count;
    if (!vr_dyn_compact_table(p, s, slots, s_warp, s_failed, &unique_count)) {
        vr_dyn_reject(p, b.count / 3);
        vr_queue_block_skip(p, cs, qb);
        return;
    }
    __syncthreads();
    vr_dyn_shade(p, s, unique_count);
    __syncthreads();
    vr_dyn_assemble(p, s, 1, b, cs, qb, tri_ids);
}

typedef void (*vr_dyn_hashed_kernel)(vr_reuse_params, uint32_t);

/* Host side of hash, phash, patch and meshlet: checks the parameters, sizes the table (vr_dyn_table_log2) and
 * shared memory, launches one block per batch (kernel_name names it in messages). */
static inline vr_status vr_dyn_launch_hashed(const vr_reuse_params *p, const char *name,
                                             vr_dyn_hashed_kernel plain,
                                             vr_dyn_hashed_kernel blockwise,
                                             const char *kernel_name)
{
    const vr_dyn_hashed_kernel kernel = vr_queue_blockwise(p) ? blockwise : plain;
    vr_status st = vr_dyn_check(p, name);
    if (st != VR_OK || p->index_count == 0)
        return st;
    const uint32_t table_log2 = vr_dyn_table_log2(p->max_unique);
    const size_t smem = vr_dyn_smem_bytes(p->max_unique, 1u << table_log2, p->max_indices);
    st = vr_dyn_smem_fit((const void *)kernel, smem);
    if (st != VR_OK)
        return st;
    vr_reuse_params q;
    if ((st = vr_queue_launch_params(p, p->batch_count, name, &q)) != VR_OK)
        return st;
    kernel<<<p->batch_count, p->block_size, smem, (cudaStream_t)p->stream>>>(q, table_log2);
    VR_LAUNCH_CHECK(kernel_name, (cudaStream_t)p->stream);
    return VR_OK;
}

#endif
