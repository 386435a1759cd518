/* reuse.h - the batcher interface: one strategy per file pair (name.cu for the GPU, name_ref.c
 * for its CPU twin), one registry row each in reuse.c.
 *
 * Every strategy reads an index buffer and a vertex buffer, shades vertices with vr_shade and
 * writes each input triangle, assembled from three shaded vertices, to the triangle queue.
 * The CPU twin performs the same batching and produces the same queue, the same invocation
 * count and the same per-vertex shading counts; tests compare them exactly.
 * Try: `vreuse_tests reuse/`, `vreuse_tests gpu/`, `vreuse bench --strategy all`.
 */
#ifndef VR_REUSE_H
#define VR_REUSE_H

#include <stddef.h>
#include <stdint.h>

#include "pipeline/compact/compact.h"
#include "pipeline/vreuse.h"
#include "reuse/batches.h"
#include "reuse/patches.h"
#include "reuse/shaders.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum vr_reuse_kind {
    VR_REUSE_NAIVE = 0, /* one thread per triangle, 3 invocations per triangle */
    VR_REUSE_WARP,      /* static batches, warp voting (Algorithm 1) */
    VR_REUSE_HASH,      /* dynamic batches, shared-memory hash table (Algorithm 3) */
    VR_REUSE_PHASH,     /* dynamic batches, bounded probes then warp-cooperative slow path */
    VR_REUSE_SORT,      /* dynamic batches, block radix sort + scan (Algorithm 2) */
    VR_REUSE_MULTI,     /* non-streaming: shade the whole vertex buffer, then assemble */
    VR_REUSE_PATCH,     /* static plan: RXMesh-style patches (reuse/patches.h), a block each */
    VR_REUSE_MESHLET,   /* static plan: meshoptimizer's meshlets, a block each */
    VR_REUSE_KIND_COUNT
} vr_reuse_kind;

/* The triangle queue, structure of arrays. Slot s holds one triangle: its three vertices'
 * clip positions and normals, the vertex ids, and the source triangle id. Without culling,
 * slot == the triangle's position in the stream the batcher reads: the source triangle id
 * (index-buffer position / 3), except for the static plans (patch, meshlet), whose stream is
 * the plan order (tri_id then holds the source id: a queue in source order would scatter every
 * store of a randomly ordered mesh). GPU and CPU queues are identical element by element. With culling, the surviving triangles are compacted in the kernel that
 * shades them, by the scheme vr_reuse_params.queue_mode names (vr_queue_mode): in input order
 * by default, so the GPU queue again equals the CPU twin's element by element. */
typedef struct vr_queue {
    float *clip;        /* capacity * 12 floats: slot s, vertex k at clip[(3 * s + k) * 4 + 0..3] */
    float *normal;      /* capacity * 12 floats: (nx, ny, nz, 0) at normal[(3 * s + k) * 4 + 0..3] */
    uint32_t *vertex;   /* capacity * 3: vertex ids of the slot's corners */
    uint32_t *tri_id;   /* capacity: source triangle id */
    uint32_t capacity;  /* slots; >= triangle count */
} vr_queue;

/* The queue's per-slot sizes: every array above is `capacity` times these. */
#define VR_QUEUE_CLIP_FLOATS 12u   /* 3 corners x (x, y, z, w) */
#define VR_QUEUE_NORMAL_FLOATS 12u /* 3 corners x (nx, ny, nz, 0) */
#define VR_QUEUE_VERTEX_IDS 3u     /* 3 corners */
/* Bytes one queued triangle costs: clip 48 + normal 48 + vertex ids 12 + triangle id 4 = 112. */
#define VR_QUEUE_BYTES_PER_TRIANGLE                                                        \
    ((VR_QUEUE_CLIP_FLOATS + VR_QUEUE_NORMAL_FLOATS) * sizeof(float) +                    \
     (VR_QUEUE_VERTEX_IDS + 1u) * sizeof(uint32_t))

/* How a culling run compacts the surviving triangles into the queue (pipeline/compact/
 * compact.cuh does the work inside the batcher's kernel; the CPU twin always writes them in
 * input order). Order matters to a renderer: blending and any order-dependent effect draw in
 * submission order, a deterministic queue gives the same image and the same bytes every run,
 * and a binning rasterizer that appends triangles to tiles keeps them sorted for free. */
typedef enum vr_queue_mode {
    VR_QUEUE_INK = 0,  /* InK-Compact: input order, one pass, blocks hand their offsets on in
                          ticket order (the default) */
    VR_QUEUE_COLLATE,  /* InK-Collate: input order within a block, blocks in any order; one
                          atomicAdd per block */
    VR_QUEUE_ATOMIC,   /* one atomicAdd per warp: order within a warp's call only */
    /* The baselines the in-kernel schemes are measured against: the batcher writes every
     * triangle to a staging queue at its unculled slot plus a key per triangle (its slot when
     * kept, VR_QUEUE_KEY_DROPPED when culled), then a separate compaction of the keys gives
     * the kept slots in order and a gather pass copies those triangles into the queue: input
     * order, as ink. Costs a staging queue and the compaction's buffers. */
    VR_QUEUE_CUB,      /* cub::DeviceSelect::If over the keys */
    VR_QUEUE_HP,       /* a HistoPyramid over the keys (pipeline/compact/histopyramid.h) */
    VR_QUEUE_MODE_COUNT
} vr_queue_mode;
extern const char *const vr_queue_mode_names[VR_QUEUE_MODE_COUNT]; /* "ink", "collate", ... */
#define VR_QUEUE_KEY_DROPPED 0xffffffffu /* a culled triangle's key (cub, hp queue modes) */

/* Reset values are given per field; the host clears the struct before each run. */
typedef struct vr_counters {
    unsigned long long invocations; /* reset 0: vertex-shader invocations (only when count != 0) */
    uint32_t queue_count;           /* reset 0: triangles written to the queue */
    uint32_t overflow;              /* reset 0: triangles not written: queue full, or their
                                       dynamic batch broke its limits (bad batch_starts) */
    uint32_t culled[VR_CULL_REASON_COUNT]; /* reset 0: with culling, triangles dropped per
                                       vr_cull_reason (index 0, VR_CULL_KEPT, stays 0) */
} vr_counters;

/* Everything one run needs. For `run` (GPU) every pointer is a device pointer; for `ref`
 * (CPU twin) every pointer is a host pointer. Buffers are owned by the caller. */
typedef struct vr_reuse_params {
    /* input */
    const uint32_t *indices;      /* index_count, validated (< vertex_count) */
    uint32_t index_count;         /* multiple of 3 */
    const float *positions;       /* 3 * vertex_count */
    const float *normals;         /* 3 * vertex_count */
    uint32_t vertex_count;
    const uint32_t *batch_starts; /* batch_count + 1 offsets from vr_batches_dynamic (dynamic
                                     strategies) or of the plan (static plans: patch, meshlet) */
    uint32_t batch_count;
    /* Compressed input (pipeline/gts_batch.h), or NULL. When set, `indices` may be NULL: each
     * dynamic batch decodes its own triangles from the GTS stream with the seed of its first
     * triangle. A host struct; its arrays are device memory for `run`, host memory for `ref`.
     * Only strategies whose ops row has gts_input accept it on the GPU. */
    const struct vr_gts_batch_source *gts;
    /* configuration */
    vr_shader shader;
    uint32_t block_size;    /* threads per block, multiple of 32, 32..1024 */
    uint32_t batch_indices; /* static batch length in indices (warp: multiple of 3, default 96) */
    uint32_t max_unique;    /* dynamic N_u, 3..1024 at any block size (default 256) */
    uint32_t max_indices;   /* dynamic batches: most indices per batch, a multiple of 3,
                               3..VR_MAX_INDICES_MAX (default 1023 = VR_MAX_INDICES_DEFAULT) */
    int cull;               /* 0: keep all triangles; 1: drop them by vr_cull_classify */
    int two_sided;          /* with cull: keep back-facing triangles (zero-area ones still go) */
    vr_queue_mode queue_mode; /* with cull: how survivors are compacted (GPU; default ink) */
    int count;              /* nonzero: count invocations and per-vertex shading (not for timing) */
    int replay;             /* nonzero, with count and cull 0: a replay of batches that a counted
                               run checked, whose counters nobody reads (the renderer's CUDA-graph
                               frames, vr_geometry_enqueue): the GPU render program then neither
                               clears nor folds them (two graph nodes less); others ignore it */
    int queue_store;        /* 0 direct, 1 warp-staged (default): GPU queue store path, same bytes */
    /* output */
    vr_queue queue;
    vr_counters *counters;  /* one struct, cleared by the caller */
    uint32_t *shade_counts; /* vertex_count, cleared by the caller, or NULL; filled when count */
    void *temp;             /* temp_bytes(p) bytes of workspace, or NULL when that is 0 */
    void *stream;           /* cudaStream_t for run; ignored by ref */
    /* GPU with cull and queue_mode ink or collate: the compaction state (vr_compact_state_create
     * on `stream`, for at least vr_reuse_queue_blocks(p) blocks); run takes a new epoch of it per
     * launch. Ignored otherwise. */
    struct vr_compact_state *queue_state;
    vr_compact_dev queue_dev; /* set by run for its kernels; callers leave it zero */
    /* input of the static plans (patch, meshlet; last, so the other fields keep their offsets):
     * `indices` is then the plan-ordered index buffer (vr_batch_plan_indices) and tri_ids the
     * plan's tri_order, index_count / 3 source triangle ids - each triangle's tri_id in the
     * queue (its slot without culling is its plan position) - a permutation (the twin refuses anything else; the
     * GPU skips an id out of range as overflow). NULL: triangle t of `indices` is triangle t.
     * The other strategies ignore it. */
    const uint32_t *tri_ids;
    /* GPU with cull and queue_mode cub or hp: index_count / 3 keys, written by run (key k for
     * stream position k: k when kept, VR_QUEUE_KEY_DROPPED when culled); `queue` is then the
     * staging queue, every triangle at slot = stream position. The stage (pipeline/stage) compacts
     * and gathers afterwards. Ignored otherwise. */
    uint32_t *queue_keys;
    /* static plan patch: who builds it, VR_PATCH_BUILDER_CPU (default, reuse/patches.c) or
     * VR_PATCH_BUILDER_GPU (reuse/patch_build.cu on the device; its CPU reference for the twin,
     * the same plan). The other strategies ignore it. */
    int patch_builder;
    /* static plans patch and meshlet with cull (GPU and twin; last, so that every field before
     * keeps its offset): the plan's per-batch bounds (vr_batch_plan.bounds, batch_count of them;
     * device memory for `run`), read only when cluster_cull is set. */
    const vr_cluster_bounds *cluster_bounds;
    /* nonzero, with cull: skip a whole batch - no table, no shading, no stores - when its bounds
     * prove that every triangle would be culled (reuse/cluster_cull.h); its triangles count as
     * culled[VR_CULL_CLUSTER]. The queue is the one without it. Default 0; the other strategies
     * and runs without cull ignore it; patch and meshlet refuse it without cluster_bounds
     * (VR_ERR_ARG). */
    int cluster_cull;
} vr_reuse_params;

/* A strategy: its registry row. run is the GPU batcher: every pointer in p is device memory,
 * the kernels are enqueued on p->stream and the call returns without waiting (a fault shows at
 * the next synchronization); VR_ERR_ARG for parameters outside pipeline/limits.h. ref is its CPU
 * twin on host pointers, the same queue and counts, O(index_count) plus the shader's
 * loop_iterations per invocation. temp_bytes: the workspace run needs for p, in bytes. The
 * functions are also declared by name below (vr_NAME_run returns VR_ERR_NO_DEVICE in a library
 * built without CUDA). vr_geometry_run / vr_geometry_ref (pipeline/stage/geometry.h) do the
 * allocation, clearing and batch starts for a whole mesh. */
typedef struct vr_reuse_ops {
    const char *name;   /* command-line and CSV name: "naive", "warp", ... */
    vr_reuse_kind kind;
    int dynamic;        /* 1: needs batch_starts from vr_batches_dynamic */
    int gts_input;      /* 1: `run` decodes compressed batches itself (vr_reuse_params.gts) */
    /* Static plans (patch, meshlet), else NULL: builds the plan of a mesh for N_u and
     * max_indices (load-time preprocessing, reuse/patches.h; patch_builder: the field of
     * vr_reuse_params, on the CPU); run and ref then take the
     * plan-ordered indices, tri_ids = its tri_order and batch_starts = its starts. */
    vr_status (*plan)(vr_batch_plan *out, const vr_mesh *m, uint32_t max_unique,
                      uint32_t max_indices, int patch_builder);
    size_t (*temp_bytes)(const vr_reuse_params *p);
    vr_status (*run)(const vr_reuse_params *p); /* NULL when built without CUDA */
    vr_status (*ref)(const vr_reuse_params *p);
} vr_reuse_ops;

extern const vr_reuse_ops vr_reuse_all[VR_REUSE_KIND_COUNT];
/* Looks a strategy up by its name; NULL when unknown. O(VR_REUSE_KIND_COUNT). */
const vr_reuse_ops *vr_reuse_find(const char *name);

/* Default parameters of the paper: block 256, warp batch 96, N_u 256, simple shader with
 * identity matrices, no culling, no counting. Pointers are NULL. */
vr_reuse_params vr_reuse_params_default(void);

/* `cfg` (configuration, outputs) with these input arrays - host pointers for `ref`, device
 * pointers for `run` - and no batches yet (batch_starts, tri_ids and cluster_bounds NULL,
 * batch_count 0). */
vr_reuse_params vr_reuse_params_input(const vr_reuse_params *cfg, const uint32_t *indices,
                                      uint32_t index_count, const float *positions,
                                      const float *normals, uint32_t vertex_count);

/* ---- batch limits: the paper's, or chosen for the mesh and the GPU (reuse/limits_auto.c) ---- */

/* The limits a run's batches are formed under (the configuration fields of vr_reuse_params
 * of the same names). */
typedef struct vr_batch_limits {
    uint32_t block_size;    /* threads per block, multiple of 32, VR_BLOCK_MIN..VR_BLOCK_MAX */
    uint32_t max_unique;    /* dynamic batches and plans: N_u, VR_NU_MIN..VR_NU_MAX */
    uint32_t max_indices;   /* dynamic batches and plans: most indices per batch, a multiple of
                               3, VR_MAX_INDICES_MIN..VR_MAX_INDICES_MAX */
    uint32_t batch_indices; /* warp: static batch in indices, a multiple of 3,
                               VR_WARP_BATCH_MIN..VR_WARP_BATCH_MAX */
} vr_batch_limits;

/* The GPU the limits are chosen for: only these numbers matter, so a CPU run given the same
 * ones forms exactly the GPU's batches. */
typedef struct vr_gpu_shape {
    uint32_t sm_count;       /* multiprocessors, VR_SMS_MIN..VR_SMS_MAX (H100: 132) */
    uint32_t threads_per_sm; /* most resident threads per SM, 32..65536 (H100: 2048) */
    uint32_t blocks_per_sm;  /* most resident blocks per SM, 1..1024 (H100: 32) */
} vr_gpu_shape;

/* An H100's shape with `sm_count` multiprocessors (2048 threads, 32 blocks per SM). */
vr_gpu_shape vr_gpu_shape_default(uint32_t sm_count);
/* The paper's fixed limits, for every strategy: block 256, N_u 256, 1023 indices, warp 96. */
vr_batch_limits vr_batch_limits_paper(void);
/* Occupancy-aware limits for strategy `kind` on a mesh of `triangles` triangles and
 * `vertex_count` vertices on GPU `gpu`: the paper's for big meshes, smaller batches for small
 * ones so that they make at least VR_AUTO_WAVES waves of paper-sized blocks, never below
 * VR_AUTO_NU_MIN / VR_AUTO_BLOCK_MIN (see limits_auto.c for the argument). A pure function of
 * its arguments (the same arguments, the same limits: simulator, CPU twin and GPU agree), and
 * monotone: more triangles or more vertices never give smaller limits. Every field is within pipeline/limits.h
 * and valid for `kind` (sort: max_indices <= 32 x block). O(1). VR_ERR_ARG naming the field
 * when `kind` or a field of `gpu` is out of range. */
vr_status vr_batch_limits_auto(vr_batch_limits *out, vr_reuse_kind kind, uint32_t triangles,
                               uint32_t vertex_count, const vr_gpu_shape *gpu);
/* Copies the limits into p's configuration fields, and reads them back out. */
void vr_batch_limits_apply(vr_reuse_params *p, const vr_batch_limits *l);
vr_batch_limits vr_batch_limits_of(const vr_reuse_params *p);

/* The named synthetic shader loads (vr_shader.loop_iterations): simple, light, medium, heavy =
 * 0, 1200, 2336, 4416 dependent FMA steps, calibrated on the H100 so that naive on a 7M-triangle
 * mesh is 1x / 3x / 5.5x / 10x as slow as with `simple` (bench/results/geometry-h100.md). */
#define VR_LOAD_COUNT 4
extern const char *const vr_load_names[VR_LOAD_COUNT];
extern const uint32_t vr_load_iterations[VR_LOAD_COUNT];
/* Parses a load: a name above, "loop:N" or a plain count N (k/M suffixes), N <= VR_LOAD_MAX.
 * VR_OK and *iterations, or VR_ERR_ARG with a message naming the load and what is accepted. */
vr_status vr_load_parse(const char *s, uint32_t *iterations);
/* The name of a count when it is one of the named loads, else NULL. */
const char *vr_load_name(uint32_t iterations);

/* Per-strategy entry points (registry rows point at these; only multi needs a workspace). */
#define VR_REUSE_DECLARE(name)                           \
    vr_status vr_##name##_run(const vr_reuse_params *p); \
    vr_status vr_##name##_ref(const vr_reuse_params *p);
VR_REUSE_DECLARE(naive)
VR_REUSE_DECLARE(warp)
VR_REUSE_DECLARE(hash)
VR_REUSE_DECLARE(phash)
VR_REUSE_DECLARE(sort)
VR_REUSE_DECLARE(multi)
VR_REUSE_DECLARE(patch)
VR_REUSE_DECLARE(meshlet)
#undef VR_REUSE_DECLARE
size_t vr_multi_temp_bytes(const vr_reuse_params *p);

#ifdef __cplusplus
}
#endif
#endif
