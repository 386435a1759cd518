/* histopyramid.h - HistoPyramids (Ziegler et al., "On-the-fly Point Clouds through Histogram
 * Pyramids") for compaction and expansion on the GPU: the host API in C and the CPU references.
 *
 * A pyramid over n base cells with counts c_i (a 0/1 flag for compaction, any count for
 * expansion): level l holds ceil(n / 4^l) cells, each the sum of 4 cells of level l - 1; the top
 * level L has one cell, the total. Output k (k < total) is found by one thread that descends
 * from the top, at each level picking the child whose index range holds k. Compaction: output k
 * is the k-th active cell's value; expansion: a cell with count c yields c outputs, output k is
 * (cell i, rank j < c_i) - e.g. a big triangle and one of its screen tiles.
 *
 * 1-D, fan-in 4 over a linear index (not the paper's 2x2 over an image): what vreuse compacts
 * and expands is linear (triangle ids, queue entries, tile lists), so the traversal order is
 * the input order and HistoPyramid compaction is order-preserving, equal to the ordered one; a
 * cell's 4 children are adjacent words, so the plain pyramid already reads one 16-byte vector
 * per level (the paper's 2-D texture layout needs 4 fetches, which its vec4 variant saves); the
 * index arithmetic is shifts, with no padding of n to a square power of two. A 2-D image is
 * served by storing it in Morton order: then 1-D fan-in 4 is exactly the 2x2 quadtree.
 *
 * Two variants (vr_hp_kind):
 *   plain  levels 1..L, one 32-bit count per cell (a level padded to a multiple of 4 cells with
 *          zeros): 4/3 bytes per base cell. The descent at level l reads the 4 child counts of
 *          level l - 1 (one uint4), at the base the 4 base cells (input values or counts).
 *   vec4   levels 1..L, per cell the inclusive partial sums of its 4 children (uint4: c0,
 *          c0+c1, c0+c1+c2, total): 16/3 bytes per base cell. The descent reads the cell's own
 *          uint4 at each level and compares without adding; the base is never read to choose.
 * In 1-D both read one uint4 per level: vec4 trades 4x the memory and build writes for fewer
 * adds in the descent (vreuse bench-compact measures both).
 *
 * Build: one kernel per 6 levels: a block reduces a tile of 4^6 = 4096 cells of the level below
 * through 6 levels in shared memory (3 launches for 2^28 cells). Expansion: one thread per
 * output descends, a grid-stride loop up to min(total, capacity), the total read on the device
 * (no host round trip between build and traversal). Compaction, whose outputs are one per
 * active cell in cell order, reads the pyramid the other way: one block per tile of 4096 cells
 * (a level-6 cell) sums the cells left of the tile's ancestors, level by level up (one round
 * trip: vr_hp_prefix_ref), and compacts the tile in place of 4096 descents; a tile with few
 * active cells reads its level-2 (vec4: level-3) cells first and loads only the input of the
 * spans of 16 cells that hold one. GPU: histopyramid.cu; device helpers shared by both:
 * histopyramid.cuh; CPU twin: histopyramid_ref.c.
 * Try: `vreuse_tests compact/hp`, `vreuse_tests gpu/compact-hp`, `vreuse bench-compact`.
 */
#ifndef VR_HISTOPYRAMID_H
#define VR_HISTOPYRAMID_H

#include <stddef.h>
#include <stdint.h>

#include "pipeline/vreuse.h"

#ifdef __cplusplus
extern "C" {
#endif

#define VR_HP_MAX_LEVELS 16 /* 4^16 = 2^32 base cells */
#define VR_HP_STAGE_LEVELS 6 /* levels one build kernel makes */
#define VR_HP_STAGE_TILE 4096u /* cells of the level below one build block reduces: 4^6 */

typedef enum vr_hp_kind { VR_HP_PLAIN = 0, VR_HP_VEC4 = 1 } vr_hp_kind;

/* Where each level lives in the one array of levels 1..L (32-bit words). */
typedef struct vr_hp_layout {
    vr_hp_kind kind;
    uint32_t n;                            /* base cells (level 0) */
    uint32_t levels;                       /* L, levels above the base: 0 when n == 0, else >= 1 */
    uint32_t cells[VR_HP_MAX_LEVELS + 1];  /* cells of level l: ceil(n / 4^l) */
    uint64_t offset[VR_HP_MAX_LEVELS + 1]; /* first word of level l >= 1 (multiples of 4) */
    uint64_t words;                        /* words of levels 1..L */
} vr_hp_layout;

void vr_hp_layout_make(vr_hp_layout *l, vr_hp_kind kind, uint32_t n);

/* ---- the GPU pyramid ------------------------------------------------------------------------ */

typedef struct vr_hp vr_hp;

/* Device bytes of a pyramid for up to max_cells base cells (its levels and the 16-byte error word). */
size_t vr_hp_bytes(vr_hp_kind kind, uint32_t max_cells);
/* Allocates a pyramid for up to max_cells base cells; its work goes to `stream` (a cudaStream_t,
 * NULL: the legacy default stream). VR_ERR_NO_DEVICE without CUDA. */
vr_status vr_hp_create(vr_hp **out, vr_hp_kind kind, uint32_t max_cells, void *stream);
/* The same on device memory the caller owns and keeps (d_memory: vr_hp_bytes(kind, max_cells),
 * 16-byte aligned), so a kernel pipeline can keep one scratch buffer across frames and pay no
 * cudaMalloc per frame (the rasterizer's large-triangle expansion, raster/raster.cu);
 * vr_hp_destroy then frees only the host object. */
vr_status vr_hp_create_in(vr_hp **out, vr_hp_kind kind, uint32_t max_cells, void *d_memory,
                          void *stream);
void vr_hp_destroy(vr_hp *h); /* accepts NULL */

/* Builds the pyramid over n cells (<= max_cells) in the stream, no wait. Compaction: cell i is
 * active when d_in[i] < threshold (0..2^32); d_in (device, n words, 16-byte aligned, owned by
 * the caller) must stay unchanged until vr_hp_compact has run. Expansion: cell i counts
 * d_counts[i] (the same rules); the counts must sum to less than 2^32 (vr_hp_total reports
 * VR_ERR_OVERFLOW otherwise). */
vr_status vr_hp_build_select(vr_hp *h, const uint32_t *d_in, uint32_t n, uint64_t threshold);
vr_status vr_hp_build_counts(vr_hp *h, const uint32_t *d_counts, uint32_t n);
/* After build_select: d_out[k] = value of the k-th active cell, k < min(total, capacity), in
 * input order (by tiles, above). In the stream, no wait. */
vr_status vr_hp_compact(vr_hp *h, uint32_t *d_out, uint32_t capacity);
/* After build_counts: d_cell[k] = the cell of output k, d_rank[k] = its rank in that cell
 * (d_rank may be NULL), k < min(total, capacity); cells in order, ranks 0..c-1. No wait. */
vr_status vr_hp_expand(vr_hp *h, uint32_t *d_cell, uint32_t *d_rank, uint32_t capacity);
/* Waits for the stream; the total of the last build (0 for n == 0). VR_ERR_OVERFLOW when the
 * counts summed past 2^32 - 1. */
vr_status vr_hp_total(vr_hp *h, uint32_t *total);
/* The device word holding the last build's total (the top cell), for work enqueued after the
 * build on the pyramid's stream; NULL before the first build. */
const uint32_t *vr_hp_device_total(const vr_hp *h);
/* Tests: the layout of the last build, and its level words copied to `levels` (layout.words). */
const vr_hp_layout *vr_hp_layout_of(const vr_hp *h);
vr_status vr_hp_download(vr_hp *h, uint32_t *levels);

/* ---- CPU references (histopyramid_ref.c) ---------------------------------------------------- */

/* Levels 1..L (l->words words, zeroed first) over base cells counts[i] (counts != NULL) or
 * in[i] < threshold. Returns 0, or -1 when a sum reached 2^32. */
int vr_hp_build_ref(uint32_t *levels, const vr_hp_layout *l, const uint32_t *counts,
                    const uint32_t *in, uint64_t threshold);
/* The top cell: the number of outputs. */
uint32_t vr_hp_total_ref(const uint32_t *levels, const vr_hp_layout *l);
/* Output k < total by descent from the top: its base cell and its rank there. */
void vr_hp_find_ref(uint32_t *cell, uint32_t *rank, const uint32_t *levels,
                    const vr_hp_layout *l, const uint32_t *counts, const uint32_t *in,
                    uint64_t threshold, uint32_t k);
/* Outputs before base cell c (c < n) from the pyramid alone, the descent read upwards: at each
 * level lv = 0 .. L - 1 the cells left of c's ancestor (c >> 2 lv) in its group of 4. The GPU
 * compaction takes it for c = 4096 t, where levels 0..5 add nothing (histopyramid.cu). */
uint64_t vr_hp_prefix_ref(const uint32_t *levels, const vr_hp_layout *l, const uint32_t *counts,
                          const uint32_t *in, uint64_t threshold, uint64_t c);
/* Compaction through the pyramid (build + one descent per output): out[k] = in[cell of k];
 * *count = the total. VR_ERR_OOM when the levels cannot be allocated. */
vr_status vr_hp_compact_ref(uint32_t *out, uint32_t *count, const uint32_t *in, uint32_t n,
                            uint64_t threshold, vr_hp_kind kind);
/* Expansion through the pyramid: outputs k < min(total, capacity); *total = the sum of counts.
 * VR_ERR_OVERFLOW when it reaches 2^32, VR_ERR_OOM. rank may be NULL. */
vr_status vr_hp_expand_ref(uint32_t *cell, uint32_t *rank, uint32_t capacity, uint32_t *total,
                           const uint32_t *counts, uint32_t n, vr_hp_kind kind);
/* Expansion the plain way (two nested loops): the oracle of the pyramid's. Returns the sum of
 * counts (64 bits); writes outputs k < capacity. rank may be NULL. */
uint64_t vr_expand_ref(uint32_t *cell, uint32_t *rank, uint32_t capacity, const uint32_t *counts,
                       uint32_t n);

#ifdef __cplusplus
}
#endif
#endif
