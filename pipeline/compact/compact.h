/* compact.h - stream compaction on the GPU (issue 11, part A): the host API in C (no CUDA types).
 * In-kernel primitives after Hughes et al., "InK-Compact: In-Kernel Stream Compaction" (thread
 * offsets by ballot/popc, warp offsets by bit decomposition, order kept across blocks through
 * sections of 32 blocks), InK-Collate (order within a block, one atomicAdd per block), and the
 * geometry stage's scheme (one atomicAdd per warp), each usable inside any kernel
 * (compact.cuh) and as a stand-alone kernel that keeps the elements `value < threshold`
 * (compact.cu), next to CUB and a three-pass flag/scan/scatter baseline and the HistoPyramid
 * compaction of histopyramid.h. CPU references: compact_ref.c.
 * Try: `vreuse_tests compact/`, `vreuse_tests gpu/compact`, `vreuse bench-compact`.
 */
#ifndef VR_COMPACT_H
#define VR_COMPACT_H

#include <stddef.h>
#include <stdint.h>

#include "pipeline/vreuse.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- shapes of the stand-alone kernels ------------------------------------------------------
 * A block of VR_COMPACT_BLOCK threads takes a tile of VR_COMPACT_TILE consecutive elements in
 * VR_COMPACT_ROUNDS rounds; in a round thread t holds elements 4t..4t+3 of the round's 1024
 * (one 16-byte load or copy). (round, warp) pairs, 4 x 8 = 32, are scanned by one warp; the
 * tile's kept elements are staged in shared memory and written out coalesced (tile.cuh).
 * ORDERED, COLLATE and ATOMIC run persistent blocks that loop over tiles by ticket; the
 * HistoPyramid compaction runs one block per tile. */
#define VR_COMPACT_BLOCK_LOG2 8
#define VR_COMPACT_BLOCK (1u << VR_COMPACT_BLOCK_LOG2)         /* 256 threads */
#define VR_COMPACT_VEC 4u                                      /* elements per thread per round */
#define VR_COMPACT_ROUNDS 4u                                   /* rounds per tile */
#define VR_COMPACT_TILE_LOG2 12
#define VR_COMPACT_TILE (1u << VR_COMPACT_TILE_LOG2)           /* 4096 = 256 x 4 x 4 elements */
#define VR_COMPACT_WARP_RUN_LOG2 7 /* a warp's round: 32 lanes x 4 elements */
/* Blocks per section of the order-preserving hand-off (one warp looks at a whole section). */
#define VR_COMPACT_SECTION_LOG2 5
#define VR_COMPACT_SECTION (1u << VR_COMPACT_SECTION_LOG2)
/* Most elements one call compacts (the benchmark's sizes too): 4 GiB of input. */
#define VR_COMPACT_MAX_N (1u << 30)

/* The methods of vr_compact_select, in the order of vr_compact_method_names. Output order:
 *   exact   the input order: ORDERED, HP, HP4, CUB_IF, CUB_FLAGGED, SCAN
 *   block   each block's tile (VR_COMPACT_TILE elements) a contiguous run in input order, the
 *           runs in any order: COLLATE
 *   warp    each warp's round (128 consecutive elements, one atomicAdd) a contiguous run in
 *           input order, the runs in any order: ATOMIC
 * Device passes (n elements of 4 bytes in, m kept): ORDERED, COLLATE, ATOMIC, CUB_IF read 4n
 * and write 4m once; CUB_FLAGGED adds a flag pass (read 4n, write n bytes, read them again);
 * SCAN reads 4n three times and the 4n-byte flags and offsets; HP and HP4 read the input
 * twice plus their pyramid (histopyramid.h). */
typedef enum vr_compact_method {
    VR_COMPACT_ORDERED = 0, /* InK-Compact, one pass: sections of 32 tiles, each tile written
                               once at its final offset (compact.cuh) */
    VR_COMPACT_COLLATE,     /* InK-Collate: one atomicAdd per tile */
    VR_COMPACT_ATOMIC,      /* one atomicAdd per warp (the geometry stage's culling queue) */
    VR_COMPACT_HP,          /* HistoPyramid, one count per cell: build, then one block per
                               tile takes its offset from the pyramid and compacts the tile */
    VR_COMPACT_HP4,         /* HistoPyramid with vec4 partial sums */
    VR_COMPACT_CUB_IF,      /* cub::DeviceSelect::If (single pass, decoupled look-back) */
    VR_COMPACT_CUB_FLAGGED, /* a flag kernel (one byte per element), cub::DeviceSelect::Flagged */
    VR_COMPACT_SCAN,        /* three passes: 32-bit flags, cub::DeviceScan::ExclusiveSum,
                               scatter */
    VR_COMPACT_METHOD_COUNT
} vr_compact_method;

/* "ordered", "collate", "atomic", "hp", "hp4", "cub-if", "cub-flagged", "scan", NULL */
extern const char *const vr_compact_method_names[];

typedef enum vr_compact_order {
    VR_COMPACT_ORDER_EXACT = 0,
    VR_COMPACT_ORDER_BLOCK, /* runs of one tile */
    VR_COMPACT_ORDER_WARP   /* runs of one warp's round: 128 elements */
} vr_compact_order;

/* What order `m` promises (see vr_compact_method). */
vr_compact_order vr_compact_method_order(vr_compact_method m);
/* "exact", "block", "warp" */
const char *vr_compact_order_name(vr_compact_order o);

/* ---- the stand-alone compaction: a context, one call per method ----------------------------- */

typedef struct vr_compact_ctx vr_compact_ctx;

/* Device bytes vr_compact_create(max_n) allocates: the section state (8 B per block and per
 * section), two 4-byte-per-element arrays (flags and offsets of SCAN; CUB_FLAGGED's byte flags
 * share the first), CUB's temporary storage and both HistoPyramids (about 4/3 and 16/3 bytes
 * per element): about 14.7 bytes per element, 3.9 GB at 2^28. */
size_t vr_compact_temp_bytes(uint32_t max_n);

/* A context for inputs of up to max_n (<= VR_COMPACT_MAX_N) elements; everything is allocated
 * here, once (VR_ERR_OOM naming the buffer when the device is short). Needs a CUDA device
 * (VR_ERR_NO_DEVICE otherwise, and in a build without CUDA). */
vr_status vr_compact_create(vr_compact_ctx **out, uint32_t max_n);
void vr_compact_destroy(vr_compact_ctx *c); /* accepts NULL */

/* Writes the elements of d_in[0..n) with value < threshold (0..2^32: threshold / 2^32 is the
 * selectivity of uniform input) to d_out in the order `m` promises, and their number to *count.
 * d_in, d_out: device buffers owned by the caller, n words each (every element may be kept),
 * d_in 16-byte aligned (cudaMalloc'ed pointers are), not overlapping. n <= the context's max_n
 * (VR_ERR_ARG otherwise). `ms` (may be NULL) gets the device time of the method's kernels,
 * cudaEvents around them; reading *count back is not included. Synchronizes. */
vr_status vr_compact_select(vr_compact_ctx *c, vr_compact_method m, uint32_t *d_out,
                            const uint32_t *d_in, uint32_t n, uint64_t threshold,
                            uint32_t *count, float *ms);

/* The same selection enqueued behind the work already on `stream` (a cudaStream_t; NULL: the
 * legacy default stream), without waiting: the work enqueued on `stream` afterwards sees d_out
 * written and *d_count (a device word the context owns, valid until its next call) holding
 * the number kept. For a stage that compacts in a pass of its own (the geometry stage's cub and
 * hp queues). Methods whose count lives on the device: HP, HP4, CUB_IF, CUB_FLAGGED, SCAN
 * (VR_ERR_ARG for the in-kernel ones, whose counts are read by their state). Checks as
 * vr_compact_select. */
vr_status vr_compact_select_async(vr_compact_ctx *c, vr_compact_method m, uint32_t *d_out,
                                  const uint32_t *d_in, uint32_t n, uint64_t threshold,
                                  void *stream, const uint32_t **d_count);

/* Test hook: in the following calls of ORDERED and COLLATE, the blocks whose ticket lies in
 * [first, first + tickets) wait `ns` nanoseconds before they publish their count, so that later
 * blocks are resident and waiting for them (tickets 0 is the first block to start). 0 tickets:
 * off. */
void vr_compact_set_delay(vr_compact_ctx *c, uint32_t first, uint32_t tickets, uint32_t ns);

/* Test hook: ORDERED, COLLATE and ATOMIC run one persistent kernel whose blocks loop over the
 * tiles (compact.cu); this makes it launch `blocks` blocks (0: as many as fit on the device,
 * the default), so that a small input has each block take many tiles. */
void vr_compact_set_blocks(vr_compact_ctx *c, uint32_t blocks);

/* ---- device buffers for callers without CUDA headers (the benchmark command) --------------- */

/* cudaMalloc of `words` 32-bit words (VR_ERR_OOM naming `what` when the device is short). */
vr_status vr_compact_buffer_alloc(uint32_t **d, size_t words, const char *what);
void vr_compact_buffer_free(uint32_t *d); /* accepts NULL */
vr_status vr_compact_buffer_upload(uint32_t *d, const uint32_t *h, size_t words);
vr_status vr_compact_buffer_download(uint32_t *h, const uint32_t *d, size_t words);
/* d[0..words) = value; waits. */
vr_status vr_compact_buffer_fill(uint32_t *d, size_t words, uint32_t value);

/* ---- the state of the in-kernel primitives (compact.cuh) ------------------------------------
 * A kernel that compacts with compact.cuh gets a vr_compact_dev by value in its parameters.
 * counters[] and status[] are zeroed once when the state is created and never again: every
 * launch leaves the counters at zero (the last block to finish resets them; the count stays in
 * VR_COMPACT_RESULT) and the status words carry the launch's epoch, so words of earlier
 * launches read as empty. One launch at a time per state (launches in one stream). */
enum vr_compact_counter {
    VR_COMPACT_TICKET = 0, /* next ticket: the order blocks started in; reset to 0 at the end */
    VR_COMPACT_DONE,       /* blocks that finished; reset to 0 by the last one */
    VR_COMPACT_RUNNING,    /* outputs claimed so far (collate, atomic), the total (ordered) */
    VR_COMPACT_RESULT,     /* outputs of the last finished launch */
    VR_COMPACT_ERROR,      /* nonzero: a block waited more than VR_COMPACT_WAIT_NS (never in
                              a correct launch; the output is then wrong); cleared on reading */
    VR_COMPACT_COUNTER_WORDS = 8
};
/* A bound on any wait of one block for an earlier one: a bug becomes an error, not a hang. */
#define VR_COMPACT_WAIT_NS 8000000000ull
/* Epochs run 1..VR_COMPACT_EPOCH_MAX; after the last one the status words are zeroed again. */
#define VR_COMPACT_EPOCH_MAX ((1u << 30) - 1u)

typedef struct vr_compact_dev {
    uint32_t *counters;     /* VR_COMPACT_COUNTER_WORDS words (enum above) */
    uint64_t *status;       /* block_capacity + vr_compact_sections(block_capacity) words:
                               per block its count, then per section its aggregate / prefix
                               (ordered only; tag: epoch << 34 | state << 32 | value) */
    uint32_t block_capacity; /* most blocks one launch may have */
    uint32_t epoch;          /* this launch's epoch, 1..VR_COMPACT_EPOCH_MAX */
} vr_compact_dev;

/* Sections of `blocks` blocks: ceil(blocks / VR_COMPACT_SECTION). */
uint32_t vr_compact_sections(uint32_t blocks);
/* Device bytes of a state for up to `blocks` blocks per launch: 32 + 8 x (blocks + sections). */
size_t vr_compact_state_bytes(uint32_t blocks);

typedef struct vr_compact_state vr_compact_state;

/* Allocates and zeroes the state for launches of up to max_blocks blocks; its work goes to
 * `stream` (a cudaStream_t; NULL: the legacy default stream). */
vr_status vr_compact_state_create(vr_compact_state **out, uint32_t max_blocks, void *stream);
void vr_compact_state_destroy(vr_compact_state *s); /* accepts NULL */
/* The device view for the next launch, of `blocks` 1-D blocks (VR_ERR_ARG when more than the
 * state holds): a new epoch; after VR_COMPACT_EPOCH_MAX launches the status words are zeroed
 * first (in the stream). */
vr_status vr_compact_state_next(vr_compact_state *s, uint32_t blocks, vr_compact_dev *dev);
/* Waits for the stream and reads the last launch's output count; VR_ERR_CUDA when a block
 * waited past VR_COMPACT_WAIT_NS (the error word is cleared). */
vr_status vr_compact_state_result(vr_compact_state *s, uint32_t *count);

/* ---- CPU references (compact_ref.c) --------------------------------------------------------- */

/* The test and benchmark input: in[i] = vr_compact_mix(i, seed), a bijection of i for a fixed
 * seed, so values are distinct and uniform and a value tells its index (vr_compact_unmix). */
uint32_t vr_compact_mix(uint32_t i, uint32_t seed);
uint32_t vr_compact_unmix(uint32_t v, uint32_t seed);
void vr_compact_input(uint32_t *in, uint32_t n, uint32_t seed);

/* The exact answer: the kept elements of in[0..n) in input order; returns their number. */
uint32_t vr_compact_ref(uint32_t *out, const uint32_t *in, uint32_t n, uint64_t threshold);

/* Run of input element i under order `o` (its tile, or its warp's round: i >> 12 or i >> 7;
 * 0 for EXACT): outputs of one run are contiguous and in input order. */
uint64_t vr_compact_run_of(vr_compact_order o, uint32_t i);

/* Checks a GPU output got[0..got_count) of input `in` (made by vr_compact_input(seed)) against
 * the promise of order `o`: for EXACT, equal to want[0..want_count) (vr_compact_ref); for
 * BLOCK and WARP, each value maps to a distinct kept input element, their number is want_count,
 * and each run is contiguous, complete and in input order. Returns 0, or -1 with the first
 * problem in msg (position, values). */
int vr_compact_check(const uint32_t *got, uint32_t got_count, const uint32_t *want,
                     uint32_t want_count, const uint32_t *in, uint32_t n, uint64_t threshold,
                     uint32_t seed, vr_compact_order o, char *msg, size_t msg_size);

#ifdef __cplusplus
}
#endif
#endif
