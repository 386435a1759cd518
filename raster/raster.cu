/* raster.cu - GPU rasterizer for the triangle queue: one thread per triangle walks its clipped
 * sub-triangles' bounding boxes and keeps the nearest (depth bits << 32 | slot) per pixel with a
 * 64-bit atomicMin, so the image does not depend on scheduling or queue order; a sub-triangle
 * with a large box (vr_raster_big_pixels) is handed to a second kernel where warps cover it
 * in 8 x 4-pixel tiles (one thread would otherwise walk thousands of pixels alone); then one
 * thread per pixel resolves colours. Twin: raster/raster_ref.c (bit-identical results); the
 * shared arithmetic is raster/raster_common.h. Also vr_raster_device, the buffers a frame needs.
 * The renderer's graph frames keep a flag per 16 x 16 tile where a word was written, so that the
 * next frame clears only those tiles and the resolve reads only those and writes only those and
 * the last frame's (vr_raster_frame_tiles).
 *
 * Two ways to spread the large boxes over warps (vr_raster_config.big_mode, `--big list|hp`),
 * with the same tile code, so the same visibility words and fragment counts:
 *   list  each large sub-triangle reserves ceil(tiles / 64) list entries (the set-up copied into
 *         each, 152 bytes) with one atomicAdd; a warp takes an entry and walks its <= 64 tiles.
 *         Two launches in all. Its limit is capacity: 64Ki entries are 4Mi tiles, about 65
 *         full 1080p screens of boxes; past them a sub-triangle stays with its thread, which
 *         then walks the whole box alone (one dependent read per pixel).
 *   hp    expansion through a HistoPyramid (Ziegler et al.: one input, many outputs; the
 *         traversal with the key index): a sub-triangle reserves ONE record and writes its tile
 *         count, a pyramid is built over the counts (vr_hp_build_counts), and work item k (a
 *         (record, tile) pair) is found by a top-down descent inside the consuming kernel, a
 *         warp per 32 items. It holds 64Ki sub-triangles of any size (and < 2^32 tiles), and
 *         every warp gets exactly 32 tiles. It pays with a memset of the counts, a build of 1-2
 *         launches over min(64Ki, 8 x tri_count) cells, and per 32 tiles one descent of <= 8
 *         dependent uint4 loads (overlapped over the lanes, amortized over 32 tiles).
 * Where each pays: with few or no large boxes (a dense mesh at 1080p: sphere:7M, igea) the work
 * is the one-thread walk and the list's second kernel finds nothing; hp adds its fixed costs
 * (three more operations in the stream, about 5-10 us), so the list is the default. With a few
 * huge triangles (a small mesh seen close up, a full-screen triangle) the list's 64-tile chunks
 * already share a box among warps: a 1080p full-screen triangle is 1013 entries, hp makes 2025
 * groups of 32 - twice the warps, half the serial walk each, a gain only when that walk is the
 * critical path. With many large boxes (overlapping big triangles, small meshes at 4K-8K, zoomed
 * views) the list overflows and its fallback walks whole boxes on single threads, while hp still
 * keeps every sub-triangle on warps: that is where expansion pays, by whole factors.
 * Try: `vreuse_tests gpu/raster`, `vreuse render bunny.obj --strategy hash --heatmap`,
 * `vreuse render cow.obj --size 1920x1080 --big list,hp --reps 20 --no-image`.
 */
#include "pipeline/compact/histopyramid.cuh"
#include "pipeline/vr_check.h"
#include "raster/raster_common.h"
#include "reuse/stage.cuh"

#include <assert.h>
#include <stdlib.h>

#define VR_RASTER_BLOCK_LOG2 7
#define VR_RASTER_BLOCK (1 << VR_RASTER_BLOCK_LOG2)  /* raster threads (triangles) per block */
/* Sub-triangles with larger bounding boxes (vr_raster_big_pixels) go to vr_raster_big_kernel: a
 * thread walking a box alone waits for one visibility read per covered pixel, and a 6k-triangle
 * mesh at 1080p has too few threads to hide that. There a warp takes the box in tiles of 8 x 4
 * pixels (one per lane): the list kernel steps each lane's edge values from tile to tile, the hp
 * kernel adds the lane's fixed offset to the edge values at each tile's corner; a box of more
 * than VR_RASTER_BIG_TILES tiles is split into several list entries so warps share it. Entries hold
 * the set-up triangle (about 150 bytes each, under 10 MiB for the whole list). */
#define VR_RASTER_TILE_W 8
#define VR_RASTER_TILE_H 4
#define VR_RASTER_BIG_TILES 64u           /* tiles per list entry (2048 pixels) */
#define VR_RASTER_BIG_CAPACITY (1u << 16) /* list entries; past it the thread rasterizes alone */
#define VR_RASTER_BIG_BLOCK 256
#define VR_RASTER_BIG_GRID 1024 /* the hp kernel's blocks striding over its outputs */
/* The list kernel's blocks: one resident wave on an H100/H200 (132 SMs x 4 blocks at its 62
 * registers). The former 1024 made a second, partial wave; 528 gave 1-7% faster 1080p frames on
 * the small meshes and the same on horse and igea, 264 and 2048 were slower (H200,
 * bench/results/render-h200.md, session 18). Any grid gives the same words (the warps stride
 * over the list); on another GPU only the speed differs. -D knobs for experiments: this grid,
 * and a register budget (resident blocks per SM) for the kernel. */
#ifndef VR_RASTER_BIG_LIST_GRID
#define VR_RASTER_BIG_LIST_GRID 528
#endif
#ifndef VR_RASTER_BIG_MIN_BLOCKS
#define VR_RASTER_BIG_MIN_BLOCKS 1
#endif
/* --big hp: records (one per big sub-triangle, the list's entry type with first_tile 0) and
 * tile counts share the list's array; a sub-triangle past either bound below stays with its
 * thread, as with a full list. Records: at most VR_RASTER_BIG_CAPACITY, and at most 8 per slot
 * (a clipped triangle fans into at most VR_CLIP_MAX_VERTS - 2 sub-triangles), so small queues
 * build small pyramids. Tiles: the pyramid sums 32-bit counts, so the reserved tiles stay below
 * 2^32 (2^16 full-screen records are 2^37 tiles at 8192 x 8192; at 1920x1080 the budget is
 * never reached: 2^16 x 64,800 tiles < 2^32). */
#define VR_RASTER_HP_TILE_BUDGET 0xffffffffull
#define VR_RASTER_HP_SUBTRIS (VR_CLIP_MAX_VERTS - 2) /* sub-triangles of one slot, at most */
#define VR_RESOLVE_TILE_LOG2 4
#define VR_RESOLVE_TILE (1 << VR_RESOLVE_TILE_LOG2)  /* resolve block: TILE x TILE pixels */
#define VR_TILE_CLEAR_BLOCK 256                       /* vr_tile_clear_kernel: 8 tiles a block */
#define VR_TILE_CLEAR_GRID_MAX 4096                   /* its blocks stride past 32Ki tiles */
/* A graph frame's tile flag t is byte t << VR_TILE_FLAG_SHIFT: one 32-byte sector per flag. With
 * dense flags (8 KB at 1080p) every SM's stores met on the few dozen sectors of a small mesh's
 * covered tiles, and the list kernel took 26 us instead of 15 on rocker-arm; spread, 17 (H100,
 * ncu, bench/NOTES.md session 32). 261 KB at 1080p, 8 MiB at 8192 x 8192. */
#define VR_TILE_FLAG_SHIFT 5
/* A tile's flag:
 *   IDLE   its words are empty and its pixels hold the background
 *   DRAWN  the raster kernels may have written its words (set during a frame)
 *   STALE  its words are empty; from the clear kernel to the resolve its pixels still hold the
 *          last frame's colours, after the resolve the background (until the next clear)
 * The clear kernel, first in a frame: DRAWN -> words cleared, STALE; STALE -> IDLE (the last
 * frame's resolve wrote its background). The raster kernels: -> DRAWN. The resolve: DRAWN ->
 * pixels resolved; STALE -> background; IDLE -> nothing to write. So a frame writes only the
 * pixels of the tiles it or the frame before drew in (rocker-arm at 1080p: 7% of the image). */
#define VR_TILE_IDLE 0
#define VR_TILE_DRAWN 1
#define VR_TILE_STALE 2

/* Resolve tiles per image row, and in the image (a graph frame's tile flags). */
static uint32_t vr_raster_tiles_x(const vr_raster_config *cfg)
{
    return (cfg->width + VR_RESOLVE_TILE - 1) / VR_RESOLVE_TILE;
}

static size_t vr_raster_tile_count(const vr_raster_config *cfg)
{
    return (size_t)vr_raster_tiles_x(cfg) * ((cfg->height + VR_RESOLVE_TILE - 1) / VR_RESOLVE_TILE);
}

/* Boxes of more pixels than this go to the big-triangle list: 4 below 32Ki triangles, else
 * tri_count / 1024 within 32..256. The one-thread walk hides its reads when there are many
 * threads, so the break-even box grows with the triangle count; a small mesh at 1080p has too
 * few threads for any walk of its own. Swept at 1920x1080 (graph frame, thresholds 4..64, hash,
 * forsyth and file; bench/results/render-h100.md): cow, teapot, spot, fandisk and rocker-arm
 * (5.8k-20k triangles) fastest at 4, 4-10% below their old threshold of 16-19; bunny (69k)
 * best at 64-67, horse (97k) and igea (269k) within 5% of their best from 32 up; sphere:7M
 * unaffected (its list stays empty). */
static uint32_t vr_raster_big_pixels(uint32_t tri_count)
{
    if (tri_count < 32768u)
        return 4;
    const uint32_t t = tri_count / 1024;
    return t > 256 ? 256 : t;
}

/* Per-launch counts, each reset to 0 before the launch. */
typedef struct vr_raster_counts {
    unsigned long long rejected;  /* slots with nothing to rasterize */
    unsigned long long clipped;   /* slots that needed polygon clipping */
    unsigned long long fragments; /* covered pixel centres before the depth test */
    unsigned int big;             /* sub-triangles sent to the big-triangle list (may exceed
                                     its capacity: those past it stayed with their thread);
                                     --big hp: records reserved (the same rule) */
    unsigned long long big_tiles; /* --big hp: tiles reserved (may exceed the budget) */
    unsigned long long triangles; /* streamed totals only: slots read */
} vr_raster_counts;

typedef struct vr_raster_params {
    unsigned long long *vis;   /* width * height words, cleared to VR_VIS_EMPTY */
    const float *clip;         /* tri_count * 12 floats: the queue's clip positions */
    uint32_t tri_count;
    vr_raster_view view;
    vr_raster_counts *counts;  /* one, cleared */
    struct vr_raster_big_entry *big; /* VR_RASTER_BIG_CAPACITY entries */
    uint32_t big_pixels;       /* boxes with more pixels go to the list */
    uint32_t *hp_counts;       /* --big hp: hp_cells tile counts, cleared (the pyramid's base) */
    uint32_t hp_cells;         /* --big hp: records, <= VR_RASTER_BIG_CAPACITY */
    uint8_t *tiles;            /* graph frames: a flag per resolve tile, set where a word may
                                  be written (vr_raster_frame_tiles); NULL: none kept */
    uint32_t tiles_x;          /* resolve tiles per image row */
} vr_raster_params;

/* One entry of the big-triangle list: the set-up sub-triangle (so the warp that takes it needs no
 * serial setup of its own), its queue slot and a range of its box's tiles. */
typedef struct vr_raster_big_entry {
    vr_raster_tri t;
    uint32_t slot, first_tile, tiles, pad;
} vr_raster_big_entry;

typedef struct vr_resolve_kparams {
    uint32_t *rgba;            /* width * height packed RGBA8 */
    const unsigned long long *vis; /* width * height */
    vr_queue queue;            /* device arrays, tri_count slots */
    uint32_t tri_count;
    vr_raster_view view;
    vr_resolve_params shade;   /* device arrays */
    const uint8_t *tiles;      /* graph frames: the tiles' flags (VR_TILE_IDLE ...); NULL: none */
} vr_resolve_kparams;

/* Graph frames keep a flag per resolve tile (16 x 16 pixels) set wherever the raster kernels
 * may have written a word, so that the next frame clears only those tiles and the resolve
 * reads and writes only those (the shared scenes at 1080p cover 7-26% of the tiles; the
 * whole-image clear and read were about a fifth of a small mesh's frame). Invariant between
 * frames: a tile not DRAWN holds only VR_VIS_EMPTY words and background pixels
 * (vr_raster_frame_tiles sets it up). The raster kernels set flags with plain stores of
 * VR_TILE_DRAWN: racing stores of the same value, a warp's stores to one flag merge into one
 * transaction, and each flag has a sector of its own (VR_TILE_FLAG_SHIFT). Flags only become
 * DRAWN during a raster launch; the resolve and the next frame's clear kernel read them in
 * later launches. */
static __device__ __forceinline__ void vr_raster_mark(const vr_raster_params &p, int32_t px,
                                                      int32_t py)
{
    const size_t row = (size_t)(py >> VR_RESOLVE_TILE_LOG2) * p.tiles_x;
    p.tiles[(row + (uint32_t)(px >> VR_RESOLVE_TILE_LOG2)) << VR_TILE_FLAG_SHIFT] = VR_TILE_DRAWN;
}

/* The flags of every tile that box (px0..px1, py0..py1) touches (the one-thread walk's: its
 * boxes are small, mostly one tile, and a warp's first stores go out together). */
static __device__ __forceinline__ void vr_raster_mark_box(const vr_raster_params &p,
                                                          const vr_raster_tri &t)
{
    for (int32_t ty = t.py0 >> VR_RESOLVE_TILE_LOG2; ty <= t.py1 >> VR_RESOLVE_TILE_LOG2; ++ty)
        for (int32_t tx = t.px0 >> VR_RESOLVE_TILE_LOG2; tx <= t.px1 >> VR_RESOLVE_TILE_LOG2;
             ++tx)
            p.tiles[((size_t)ty * p.tiles_x + (uint32_t)tx) << VR_TILE_FLAG_SHIFT] =
                VR_TILE_DRAWN;
}

/* --big hp: reserves a record and `tiles` tiles for sub-triangle t of `slot`; 1 when it got
 * them (then record `at` and its count are written), 0 when the thread rasterizes it itself. The
 * plain read first stops the atomics once the records are full, so the counter overshoots by at
 * most the threads in flight and cannot wrap. */
static __device__ __forceinline__ int vr_raster_hp_push(const vr_raster_params &p,
                                                        const vr_raster_tri &t, uint32_t slot,
                                                        uint32_t tiles)
{
    if (*(volatile unsigned int *)&p.counts->big >= p.hp_cells)
        return 0;
    const uint32_t at = atomicAdd(&p.counts->big, 1u);
    if (at >= p.hp_cells)
        return 0;
    const unsigned long long first = atomicAdd(&p.counts->big_tiles, (unsigned long long)tiles);
    if (first + tiles > VR_RASTER_HP_TILE_BUDGET)
        return 0; /* the count stays 0: the pyramid skips the record */
    vr_raster_big_entry *en = p.big + at;
    en->t = t;
    en->slot = slot;
    en->first_tile = 0;
    en->tiles = tiles;
    p.hp_counts[at] = tiles;
    return 1;
}

/* One thread per queue slot. No shared memory, no block-level sync; the slot's sub-triangles
 * are walked row by row with incremental edge functions. A plain read of the visibility word
 * skips the atomic when the pixel already holds a nearer word: words only decrease, so a stale
 * read is never smaller than the true value and the skip is safe. On sphere:7M at 1080p the
 * skip is worth 30% of the raster time (0.39 vs 0.56 ms: fewer atomics on the same words); the
 * big-triangle kernel goes without it (its warps' atomics are spread over a box, and a
 * dependent load per tile would serialize the warp). Counts are summed per warp
 * (full mask; inactive slots contribute 0) and added with one atomic per warp. At least 6
 * resident blocks: with the tile flags ptxas took 91 registers (5 blocks) without the bound; with
 * it 79 and 77, no spills (80 and 72 before the flags, with 20 and 48 B of spills). */
template <int BIG_MODE> /* vr_raster_big_mode: the list's kernel stays as it was */
__global__ void __launch_bounds__(VR_RASTER_BLOCK, 6) vr_raster_kernel(vr_raster_params p)
{
    const uint32_t slot = blockIdx.x * VR_RASTER_BLOCK + threadIdx.x;
    const uint32_t lane = threadIdx.x & 31u;
    unsigned long long rejected = 0, clipped_count = 0, fragments = 0;
    float poly[VR_CLIP_MAX_VERTS][4];
    int n = 0; /* the slot's clipped polygon: n - 2 sub-triangles (none past the queue) */
    if (slot < p.tri_count) {
        int clipped;
        n = vr_raster_clip(poly, p.clip + 12 * (size_t)slot, &p.view, &clipped);
        clipped_count = (unsigned long long)clipped;
    }
    vr_raster_vertex sv[VR_CLIP_MAX_VERTS];
    for (int k = 0; k < n; ++k)
        sv[k] = vr_raster_snap(poly[k], &p.view);
    /* the warp takes its lanes' sub-triangles in step (the bound is the warp's largest polygon),
     * so the whole warp reserves its list entries with one atomic: a small mesh at 1080p sends
     * most of its triangles to the list, one atomic each on one counter otherwise */
    const int subs = __reduce_max_sync(0xffffffffu, n > 2 ? n - 2 : 0);
    int kept = 0;
    for (int s = 1; s <= subs; ++s) {
        vr_raster_tri t;
        const int r = s + 1 < n ? vr_raster_tri_setup(&t, sv[0], sv[s], sv[s + 1], &p.view) : -1;
        kept |= r >= 0;
        uint32_t w = 0, h = 0, tiles = 0;
        if (r > 0) {
            w = (uint32_t)(t.px1 - t.px0 + 1), h = (uint32_t)(t.py1 - t.py0 + 1);
            if (w * h > p.big_pixels)
                tiles = ((w + VR_RASTER_TILE_W - 1) / VR_RASTER_TILE_W) *
                        ((h + VR_RASTER_TILE_H - 1) / VR_RASTER_TILE_H);
        }
        if (BIG_MODE == VR_RASTER_BIG_HP) {
            if (tiles && vr_raster_hp_push(p, t, slot, tiles))
                continue;
        } else {
            const uint32_t parts = (tiles + VR_RASTER_BIG_TILES - 1) / VR_RASTER_BIG_TILES;
            uint32_t below = parts; /* inclusive prefix of parts over the warp's lanes */
            for (int off = 1; off < 32; off <<= 1) {
                const uint32_t v = __shfl_up_sync(0xffffffffu, below, off);
                if (lane >= (uint32_t)off)
                    below += v;
            }
            const uint32_t total = __shfl_sync(0xffffffffu, below, 31);
            uint32_t base = 0;
            if (lane == 0 && total)
                base = atomicAdd(&p.counts->big, total);
            base = __shfl_sync(0xffffffffu, base, 0);
            if (parts) {
                const uint32_t at = base + below - parts;
                const int fits =
                    at < VR_RASTER_BIG_CAPACITY && parts <= VR_RASTER_BIG_CAPACITY - at;
                /* every reserved entry below the capacity is written (the big kernel reads
                 * them all); when the list is full they carry no tiles and this thread
                 * rasterizes the sub-triangle itself */
                for (uint32_t k = 0; k < parts && at + k < VR_RASTER_BIG_CAPACITY; ++k) {
                    vr_raster_big_entry *en = p.big + at + k;
                    en->t = t;
                    en->slot = slot;
                    en->first_tile = k * VR_RASTER_BIG_TILES;
                    en->tiles =
                        fits ? min(VR_RASTER_BIG_TILES, tiles - k * VR_RASTER_BIG_TILES) : 0u;
                }
                if (fits)
                    continue;
            }
        }
        if (r <= 0)
            continue;
        if (p.tiles)
            vr_raster_mark_box(p, t);
        const int64_t x0 = vr_raster_centre(t.px0);
        const int64_t s0 = -t.dy[0] * VR_RASTER_SUBPIXEL, s1 = -t.dy[1] * VR_RASTER_SUBPIXEL,
                      s2 = -t.dy[2] * VR_RASTER_SUBPIXEL;
        for (int32_t py = t.py0; py <= t.py1; ++py) {
            const int64_t y = vr_raster_centre(py);
            int64_t e0 = vr_raster_edge(&t, 0, x0, y), e1 = vr_raster_edge(&t, 1, x0, y),
                    e2 = vr_raster_edge(&t, 2, x0, y);
            unsigned long long *row = p.vis + (size_t)py * (size_t)p.view.width;
            for (int32_t px = t.px0; px <= t.px1; ++px, e0 += s0, e1 += s1, e2 += s2) {
                if ((e0 | e1 | e2) < 0)
                    continue;
                ++fragments;
                const unsigned long long w =
                    vr_raster_word(&t, vr_raster_centre(px), y, p.view.slot_base + slot);
                if (w < row[px])
                    atomicMin(row + px, w);
            }
        }
    }
    if (slot < p.tri_count)
        rejected = (unsigned long long)!kept;
    for (int off = 16; off > 0; off >>= 1) {
        rejected += __shfl_down_sync(0xffffffffu, rejected, off);
        clipped_count += __shfl_down_sync(0xffffffffu, clipped_count, off);
        fragments += __shfl_down_sync(0xffffffffu, fragments, off);
    }
    if ((threadIdx.x & 31) == 0) {
        if (rejected)
            atomicAdd(&p.counts->rejected, rejected);
        if (clipped_count)
            atomicAdd(&p.counts->clipped, clipped_count);
        if (fragments)
            atomicAdd(&p.counts->fragments, fragments);
    }
}

/* A lane's pixel in every tile sits (lane % 8, lane / 8) pixels from the tile's first one, so its
 * edge functions are the tile corner's plus this per-lane offset, dx * oy - dy * ox (the edge
 * function is linear in the sub-pixel position): the same integers vr_raster_edge gives at the
 * pixel centre, for 6 multiplications per entry instead of 6 per pixel. */
typedef struct vr_raster_lane_offsets {
    int64_t e[3];
} vr_raster_lane_offsets;

static __device__ __forceinline__ vr_raster_lane_offsets vr_raster_lane_offsets_of(
    const vr_raster_tri &t, uint32_t lane)
{
    const int64_t ox = (int64_t)(lane % VR_RASTER_TILE_W) * VR_RASTER_SUBPIXEL;
    const int64_t oy = (int64_t)(lane / VR_RASTER_TILE_W) * VR_RASTER_SUBPIXEL;
    vr_raster_lane_offsets o;
    for (int k = 0; k < 3; ++k)
        o.e[k] = t.dx[k] * oy - t.dy[k] * ox;
    return o;
}

/* Tile `tile` (row-major in the box, 8 x 4 pixels) of big sub-triangle t, one pixel per lane
 * (`off`: vr_raster_lane_offsets_of(t, lane)). The edge functions at the tile's first pixel
 * centre are evaluated directly and the lane adds its offset - the integer values the
 * incremental walk reaches - so coverage, depth words and the fragment count equal the
 * one-thread path exactly. A lane whose pixel is outside returns at once; a tile outside the
 * triangle thus costs its three corner evaluations and no memory access. */
static __device__ __forceinline__ void vr_raster_big_tile(const vr_raster_params &p,
                                                          const vr_raster_tri &t,
                                                          const vr_raster_lane_offsets &off,
                                                          uint32_t slot, uint32_t tile,
                                                          uint32_t lane,
                                                          unsigned long long *fragments)
{
    const uint32_t tiles_x = (uint32_t)(t.px1 - t.px0) / VR_RASTER_TILE_W + 1;
    const int32_t tx0 = t.px0 + (int32_t)(tile % tiles_x) * VR_RASTER_TILE_W;
    const int32_t ty0 = t.py0 + (int32_t)(tile / tiles_x) * VR_RASTER_TILE_H;
    const int32_t px = tx0 + (int32_t)(lane % VR_RASTER_TILE_W);
    const int32_t py = ty0 + (int32_t)(lane / VR_RASTER_TILE_W);
    if (px > t.px1 || py > t.py1)
        return;
    const int64_t xc = vr_raster_centre(tx0), yc = vr_raster_centre(ty0);
    for (int k = 0; k < 3; ++k)
        if (vr_raster_edge(&t, k, xc, yc) + off.e[k] < 0)
            return;
    ++*fragments;
    if (p.tiles)
        vr_raster_mark(p, px, py);
    unsigned long long *pixel = p.vis + (size_t)py * (size_t)p.view.width + px;
    const unsigned long long word =
        vr_raster_word(&t, vr_raster_centre(px), vr_raster_centre(py), p.view.slot_base + slot);
    atomicMin(pixel, word); /* result unused: a reduction that does not wait */
}

/* Adds a warp's fragments to the counts with one atomic (full mask: every lane calls it). */
static __device__ __forceinline__ void vr_raster_warp_fragments(const vr_raster_params &p,
                                                                unsigned long long fragments,
                                                                uint32_t lane)
{
    for (int off = 16; off > 0; off >>= 1)
        fragments += __shfl_down_sync(0xffffffffu, fragments, off);
    if (lane == 0 && fragments)
        atomicAdd(&p.counts->fragments, fragments);
}

/* Tiles first .. first + count - 1 (row-major in the box, 8 x 4 pixels) of big sub-triangle t,
 * one pixel per lane, walked in order: the lane's edge values are evaluated once at its pixel
 * centre in the first tile and then stepped by whole tiles (-dy * 8 sub-pixels per tile to the
 * right, dx * 4 per tile row down from the row's start). The edge functions are linear in the
 * integer sub-pixel position, so each step lands on exactly the integer vr_raster_edge gives
 * there (vr_raster_big_tile's values, the one-thread walk's): the same coverage, words and
 * counts, for three 64-bit additions per tile instead of a division, a remainder and three
 * edge evaluations (the list kernel was half of a small mesh's 1080p frame, ncu on the H200). */
static __device__ __forceinline__ void vr_raster_big_tiles(const vr_raster_params &p,
                                                           const vr_raster_tri &t, uint32_t slot,
                                                           uint32_t first, uint32_t count,
                                                           uint32_t lane,
                                                           unsigned long long *fragments)
{
    if (count == 0)
        return;
    const uint32_t tiles_x = (uint32_t)(t.px1 - t.px0) / VR_RASTER_TILE_W + 1;
    uint32_t tx = first % tiles_x;
    const int32_t lx = (int32_t)(lane % VR_RASTER_TILE_W), ly = (int32_t)(lane / VR_RASTER_TILE_W);
    const int32_t row_px = t.px0 + lx; /* the lane's column in a row's first tile */
    int32_t px = row_px + (int32_t)tx * VR_RASTER_TILE_W;
    int32_t py = t.py0 + (int32_t)(first / tiles_x) * VR_RASTER_TILE_H + ly;
    int64_t row[3], e[3], step_x[3], step_y[3];
    for (int k = 0; k < 3; ++k) {
        row[k] = vr_raster_edge(&t, k, vr_raster_centre(row_px), vr_raster_centre(py));
        step_x[k] = -t.dy[k] * (VR_RASTER_TILE_W * VR_RASTER_SUBPIXEL);
        step_y[k] = t.dx[k] * (VR_RASTER_TILE_H * VR_RASTER_SUBPIXEL);
        e[k] = row[k] + step_x[k] * (int64_t)tx;
    }
    unsigned long long *line = p.vis + (size_t)py * (size_t)p.view.width;
    for (uint32_t i = 0; i < count; ++i) {
        if (px <= t.px1 && py <= t.py1 && (e[0] | e[1] | e[2]) >= 0) {
            ++*fragments;
            if (p.tiles)
                vr_raster_mark(p, px, py);
            const unsigned long long word = vr_raster_word(&t, vr_raster_centre(px),
                                                           vr_raster_centre(py),
                                                           p.view.slot_base + slot);
            atomicMin(line + px, word); /* result unused: a reduction that does not wait */
        }
        if (++tx < tiles_x) {
            px += VR_RASTER_TILE_W;
            for (int k = 0; k < 3; ++k)
                e[k] += step_x[k];
        } else { /* the next row of tiles, from its first tile */
            tx = 0;
            px = row_px;
            py += VR_RASTER_TILE_H;
            line += (size_t)VR_RASTER_TILE_H * (size_t)p.view.width;
            for (int k = 0; k < 3; ++k)
                e[k] = row[k] += step_y[k];
        }
    }
}

/* The big sub-triangles of vr_raster_kernel<LIST>, one warp per list entry (warps stride over
 * the list; every lane reads the entry, a broadcast). The warp takes the entry's tiles in turn
 * (vr_raster_big_tiles). */
__global__ void __launch_bounds__(VR_RASTER_BIG_BLOCK, VR_RASTER_BIG_MIN_BLOCKS)
    vr_raster_big_kernel(vr_raster_params p)
{
    const uint32_t lane = threadIdx.x & 31u;
    const uint32_t warp = (blockIdx.x * VR_RASTER_BIG_BLOCK + threadIdx.x) >> 5;
    const uint32_t warps = gridDim.x * (VR_RASTER_BIG_BLOCK / 32);
    const uint32_t count = min(p.counts->big, VR_RASTER_BIG_CAPACITY);
    unsigned long long fragments = 0;
    for (uint32_t e = warp; e < count; e += warps) {
        const vr_raster_big_entry en = p.big[e];
        vr_raster_big_tiles(p, en.t, en.slot, en.first_tile, en.tiles, lane, &fragments);
    }
    vr_raster_warp_fragments(p, fragments, lane);
}

/* The big sub-triangles of vr_raster_kernel<HP> by expansion (Ziegler et al.'s HistoPyramid
 * traversal with the key index): the pyramid over the records' tile counts has `total` outputs,
 * output k is (record c, tile r < count c). Warps stride over groups of 32 consecutive outputs:
 * lane i descends for output 32 g + i (vr_hp_find: one uint4 load per level, the 32 descents
 * overlap, and neighbouring k share the upper cells), then the warp takes the group's outputs
 * in turn, one pixel per lane, each (c, r) broadcast by a shuffle and the record re-read only
 * when c changes. Every warp thus gets exactly 32 tiles (the last group fewer): the pyramid
 * balances perfectly whatever the box sizes, where the list's warps each walk up to 64 tiles of
 * one entry. No shared memory, no block-level sync; `total` is read on the device. */
__global__ void __launch_bounds__(VR_RASTER_BIG_BLOCK)
    vr_raster_hp_kernel(vr_raster_params p, vr_hp_view v)
{
    const uint32_t lane = threadIdx.x & 31u;
    const uint32_t warp = (blockIdx.x * VR_RASTER_BIG_BLOCK + threadIdx.x) >> 5;
    const uint64_t warps = gridDim.x * (VR_RASTER_BIG_BLOCK / 32);
    const uint64_t total = vr_hp_view_total(&v);
    unsigned long long fragments = 0;
    for (uint64_t first = 32 * (uint64_t)warp; first < total; first += 32 * warps) {
        uint32_t cell = 0, rank = 0, unused;
        if (first + lane < total)
            cell = vr_hp_find(&v, (uint32_t)(first + lane), &rank, &unused);
        const uint32_t items = (uint32_t)min(total - first, (uint64_t)32);
        uint32_t held = 0xffffffffu; /* the record in `en` (warp-uniform) */
        vr_raster_big_entry en;
        vr_raster_lane_offsets off;
        for (uint32_t i = 0; i < items; ++i) {
            const uint32_t c = __shfl_sync(0xffffffffu, cell, (int)i);
            const uint32_t r = __shfl_sync(0xffffffffu, rank, (int)i);
            if (c != held) {
                en = p.big[c];
                off = vr_raster_lane_offsets_of(en.t, lane);
                held = c;
            }
            vr_raster_big_tile(p, en.t, off, en.slot, r, lane, &fragments);
        }
    }
    vr_raster_warp_fragments(p, fragments, lane);
}

/* One thread per pixel in TILE x TILE blocks; no shared memory. Reads the pixel's word and its
 * triangle's three corners from the queue, writes one packed RGBA8. With tile flags (graph
 * frames) only a DRAWN tile's words are read; a STALE tile gets the background, an IDLE one
 * already holds it. */
__global__ void __launch_bounds__(VR_RESOLVE_TILE *VR_RESOLVE_TILE)
    vr_resolve_kernel(vr_resolve_kparams p)
{
    const int32_t i = (int32_t)(blockIdx.x * VR_RESOLVE_TILE + threadIdx.x);
    const int32_t j = (int32_t)(blockIdx.y * VR_RESOLVE_TILE + threadIdx.y);
    if (i >= p.view.width || j >= p.view.height)
        return;
    const size_t at = (size_t)j * (size_t)p.view.width + (size_t)i;
    const vr_queue q = p.queue;
    const vr_resolve_params shade = p.shade;
    const size_t tile = (size_t)blockIdx.y * gridDim.x + blockIdx.x;
    if (p.tiles) {
        const uint8_t flag = p.tiles[tile << VR_TILE_FLAG_SHIFT];
        if (flag != VR_TILE_DRAWN) { /* the tile's words are all empty */
            if (flag == VR_TILE_STALE)
                p.rgba[at] = shade.background;
            return;
        }
    }
    const unsigned long long word = p.vis[at];
    if (vr_resolve_keeps(word, &p.view, p.tri_count, &shade))
        return;
    p.rgba[at] = vr_resolve_pixel(word, i, j, &p.view, &q, p.tri_count, &shade);
}

/* Graph frames: the tiles the last frame drew in back to VR_VIS_EMPTY and STALE, STALE ones
 * IDLE (the last resolve gave them the background) - the frame's clear, in place of a memset of
 * the whole buffer. A warp per tile (the flag read once, broadcast); each pass of its 32 lanes
 * clears two rows of 16 words, eight passes a tile. */
__global__ void __launch_bounds__(VR_TILE_CLEAR_BLOCK)
    vr_tile_clear_kernel(unsigned long long *vis, uint8_t *tiles, int32_t width, int32_t height,
                         uint32_t tiles_x, uint32_t tile_count)
{
    const uint32_t lane = threadIdx.x & 31u;
    const uint32_t warps = gridDim.x * (VR_TILE_CLEAR_BLOCK / 32);
    for (uint32_t t = (blockIdx.x * VR_TILE_CLEAR_BLOCK + threadIdx.x) >> 5; t < tile_count;
         t += warps) {
        const uint8_t flag = tiles[(size_t)t << VR_TILE_FLAG_SHIFT];
        if (flag != VR_TILE_DRAWN) {
            __syncwarp(); /* every lane read the flag before it goes */
            if (flag == VR_TILE_STALE && lane == 0)
                tiles[(size_t)t << VR_TILE_FLAG_SHIFT] = VR_TILE_IDLE;
            continue;
        }
        const int32_t x = (int32_t)((t % tiles_x) * VR_RESOLVE_TILE + (lane & 15u));
        const int32_t y0 = (int32_t)((t / tiles_x) * VR_RESOLVE_TILE);
        for (int32_t r = (int32_t)(lane >> 4); r < VR_RESOLVE_TILE; r += 2) {
            const int32_t y = y0 + r;
            if (x < width && y < height)
                vis[(size_t)y * (size_t)width + (size_t)x] = VR_VIS_EMPTY;
        }
        __syncwarp(); /* every lane read the flag before it goes */
        if (lane == 0)
            tiles[(size_t)t << VR_TILE_FLAG_SHIFT] = VR_TILE_STALE;
    }
}

/* ---- host side ---------------------------------------------------------------------------- */

/* The scratch, 16-byte aligned parts: the counts, the list (--big hp: the records), then for
 * --big hp the tile counts and the pyramid over them (vr_hp_create_in). */
typedef struct vr_raster_scratch {
    vr_raster_counts *counts;
    vr_raster_counts *totals; /* streamed chunks: the counts summed over the frame's chunks */
    vr_raster_big_entry *big; /* VR_RASTER_BIG_CAPACITY */
    uint32_t *hp_counts;      /* VR_RASTER_BIG_CAPACITY */
    void *hp_levels;          /* vr_hp_bytes(VR_HP_PLAIN, VR_RASTER_BIG_CAPACITY) */
    size_t bytes;
} vr_raster_scratch;

static size_t vr_raster_align16(size_t n) { return (n + 15) / 16 * 16; }

/* The parts of the scratch at `base` (NULL: only .bytes is meaningful). */
static vr_raster_scratch vr_raster_scratch_split(void *base)
{
    const size_t totals = vr_raster_align16(sizeof(vr_raster_counts));
    const size_t big = totals + vr_raster_align16(sizeof(vr_raster_counts));
    const size_t hp_counts = big + vr_raster_align16(VR_RASTER_BIG_CAPACITY *
                                                     sizeof(vr_raster_big_entry));
    const size_t hp_levels = hp_counts + VR_RASTER_BIG_CAPACITY * sizeof(uint32_t);
    char *at = (char *)base;
    vr_raster_scratch r;
    r.counts = (vr_raster_counts *)at;
    r.totals = at ? (vr_raster_counts *)(at + totals) : NULL;
    r.big = at ? (vr_raster_big_entry *)(at + big) : NULL;
    r.hp_counts = at ? (uint32_t *)(at + hp_counts) : NULL;
    r.hp_levels = at ? at + hp_levels : NULL;
    r.bytes = hp_levels + vr_hp_bytes(VR_HP_PLAIN, VR_RASTER_BIG_CAPACITY);
    return r;
}

size_t vr_raster_scratch_bytes(void)
{
    return vr_raster_scratch_split(NULL).bytes;
}

/* Enqueues on `s` what every rasterization of tri_count slots does before its kernels: the
 * counts cleared, and for --big hp the pyramid object over the scratch (*hp, *hp_cells). */
static vr_status vr_raster_prepare(const vr_raster_scratch *scratch, const vr_raster_config *cfg,
                                   uint32_t tri_count, vr_hp **hp, uint32_t *hp_cells,
                                   cudaStream_t s)
{
    *hp = NULL;
    *hp_cells = 0;
    VR_CUDA_CHECK(cudaMemsetAsync(scratch->counts, 0, sizeof *scratch->counts, s));
    if (cfg->big_mode == VR_RASTER_BIG_HP && tri_count > 0) {
        /* the pyramid object (host side, its error word cleared) is set-up like the counts
         * above; what the expansion does per frame is timed with the kernels */
        const uint64_t most = (uint64_t)tri_count * VR_RASTER_HP_SUBTRIS;
        *hp_cells = (uint32_t)(most < VR_RASTER_BIG_CAPACITY ? most : VR_RASTER_BIG_CAPACITY);
        return vr_hp_create_in(hp, VR_HP_PLAIN, *hp_cells, scratch->hp_levels, s);
    }
    return VR_OK;
}

/* Enqueues the kernels that rasterize tri_count slots of d_q into d_vis (not cleared here). */
static vr_status vr_raster_launch(uint64_t *d_vis, const vr_queue *d_q, uint32_t tri_count,
                                  const vr_raster_config *cfg, const vr_raster_scratch *scratch,
                                  vr_hp *hp, uint32_t hp_cells, uint8_t *d_tiles, cudaStream_t s)
{
    if (tri_count == 0)
        return VR_OK;
    vr_raster_params p;
    p.vis = (unsigned long long *)d_vis;
    p.clip = d_q->clip;
    p.tri_count = tri_count;
    p.view = vr_raster_view_make(cfg);
    p.counts = scratch->counts;
    p.big = scratch->big;
    p.big_pixels = vr_raster_big_pixels(tri_count);
    p.hp_counts = scratch->hp_counts;
    p.hp_cells = 0;
    p.tiles = d_tiles;
    p.tiles_x = vr_raster_tiles_x(cfg);
    const uint32_t blocks = (tri_count + VR_RASTER_BLOCK - 1) / VR_RASTER_BLOCK;
    if (cfg->big_mode == VR_RASTER_BIG_HP) {
        /* cleared counts, then the pyramid over all hp_cells of them: its size is known
         * here, so there is no host round trip between the kernels (a few idle cells
         * cost the build less than a wait for the record count would) */
        p.hp_cells = hp_cells;
        VR_CUDA_CHECK(cudaMemsetAsync(p.hp_counts, 0, p.hp_cells * sizeof(uint32_t), s));
        vr_raster_kernel<VR_RASTER_BIG_HP><<<blocks, VR_RASTER_BLOCK, 0, s>>>(p);
        VR_LAUNCH_CHECK("vr_raster_kernel", s);
        vr_status st = vr_hp_build_counts(hp, p.hp_counts, p.hp_cells);
        if (st != VR_OK)
            return st;
        /* the total stays on the device: a fixed grid strides over the outputs */
        vr_raster_hp_kernel<<<VR_RASTER_BIG_GRID, VR_RASTER_BIG_BLOCK, 0, s>>>(
            p, vr_hp_view_of(hp));
        VR_LAUNCH_CHECK("vr_raster_hp_kernel", s);
    } else {
        vr_raster_kernel<VR_RASTER_BIG_LIST><<<blocks, VR_RASTER_BLOCK, 0, s>>>(p);
        VR_LAUNCH_CHECK("vr_raster_kernel", s);
        /* the list's length stays on the device: a fixed grid strides over it */
        vr_raster_big_kernel<<<VR_RASTER_BIG_LIST_GRID, VR_RASTER_BIG_BLOCK, 0, s>>>(p);
        VR_LAUNCH_CHECK("vr_raster_big_kernel", s);
    }
    return VR_OK;
}

vr_status vr_raster_gpu(uint64_t *d_vis, const vr_queue *d_q, uint32_t tri_count,
                        const vr_raster_config *cfg, vr_raster_stats *stats, void *d_scratch,
                        void *stream)
{
    assert(d_vis && d_q && cfg);
    vr_status st = vr_raster_check_input(cfg, d_q, tri_count);
    if (st == VR_OK)
        st = vr_cuda_device_check();
    if (st != VR_OK)
        return st;
    cudaStream_t s = (cudaStream_t)stream;
    cudaEvent_t ev[3] = {NULL, NULL, NULL};
    void *d_own = NULL; /* scratch allocated here when the caller has none */
    vr_raster_scratch scratch;
    vr_hp *hp = NULL; /* --big hp: on the scratch, this frame only */
    uint32_t hp_cells = 0;
    vr_raster_counts counts;
    float clear_ms = 0, raster_ms = 0;
    const size_t pixels = (size_t)cfg->width * cfg->height;
    for (int i = 0; i < 3; ++i)
        VR_CUDA_GOTO(cudaEventCreate(&ev[i]));
    if (!d_scratch) {
        if ((st = vr_cuda_alloc(&d_own, vr_raster_scratch_bytes(), "raster scratch")) != VR_OK)
            goto done;
        d_scratch = d_own;
    }
    scratch = vr_raster_scratch_split(d_scratch);
    if ((st = vr_raster_prepare(&scratch, cfg, tri_count, &hp, &hp_cells, s)) != VR_OK)
        goto done;
    VR_CUDA_GOTO(cudaEventRecord(ev[0], s));
    VR_CUDA_GOTO(cudaMemsetAsync(d_vis, 0xff, pixels * sizeof(uint64_t), s));
    VR_CUDA_GOTO(cudaEventRecord(ev[1], s));
    st = vr_raster_launch(d_vis, d_q, tri_count, cfg, &scratch, hp, hp_cells, NULL, s);
    if (st != VR_OK)
        goto done;
    VR_CUDA_GOTO(cudaEventRecord(ev[2], s));
    VR_CUDA_GOTO(cudaMemcpyAsync(&counts, scratch.counts, sizeof counts, cudaMemcpyDeviceToHost,
                                 s));
    VR_CUDA_GOTO(cudaStreamSynchronize(s));
    VR_CUDA_GOTO(cudaEventElapsedTime(&clear_ms, ev[0], ev[1]));
    VR_CUDA_GOTO(cudaEventElapsedTime(&raster_ms, ev[1], ev[2]));
    if (stats) {
        stats->triangles = tri_count;
        stats->rejected = counts.rejected;
        stats->clipped = counts.clipped;
        stats->fragments = counts.fragments;
        stats->clear_ms = clear_ms;
        stats->raster_ms = raster_ms;
    }
done:
    /* teardown: nothing to act on if these fail, the first error is already recorded */
    vr_hp_destroy(hp);
    cudaFree(d_own);
    for (int i = 0; i < 3; ++i)
        if (ev[i])
            cudaEventDestroy(ev[i]);
    return st;
}

/* Enqueues the resolve kernel over the whole image (one thread per pixel). */
static vr_status vr_resolve_launch(uint8_t *d_rgba, const uint64_t *d_vis, const vr_queue *d_q,
                                   uint32_t tri_count, const vr_raster_config *cfg,
                                   const vr_resolve_params *p, const uint8_t *d_tiles,
                                   cudaStream_t s)
{
    vr_resolve_kparams k;
    k.rgba = (uint32_t *)d_rgba;
    k.vis = (const unsigned long long *)d_vis;
    k.queue = *d_q;
    k.tri_count = tri_count;
    k.view = vr_raster_view_make(cfg);
    k.shade = *p;
    k.tiles = d_tiles;
    const dim3 block(VR_RESOLVE_TILE, VR_RESOLVE_TILE);
    const dim3 grid((cfg->width + VR_RESOLVE_TILE - 1) / VR_RESOLVE_TILE,
                    (cfg->height + VR_RESOLVE_TILE - 1) / VR_RESOLVE_TILE);
    vr_resolve_kernel<<<grid, block, 0, s>>>(k);
    return vr_cuda_launched(VR_CUDA_WHERE, "vr_resolve_kernel", s);
}

/* ---- one whole frame enqueued without a wait (the renderer's CUDA graph) ------------------- */

vr_status vr_raster_frame_enqueue(uint8_t *d_rgba, uint64_t *d_vis, const vr_queue *d_q,
                                  uint32_t tri_count, const vr_raster_config *cfg,
                                  const vr_resolve_params *p, void *d_scratch, uint8_t *d_tiles,
                                  void *stream)
{
    assert(d_rgba && d_vis && d_q && cfg && p && d_scratch);
    vr_status st = vr_raster_check_input(cfg, d_q, tri_count);
    if (st == VR_OK)
        st = vr_resolve_check(p);
    if (st != VR_OK)
        return st;
    cudaStream_t s = (cudaStream_t)stream;
    const vr_raster_scratch scratch = vr_raster_scratch_split(d_scratch);
    vr_hp *hp = NULL;
    uint32_t hp_cells = 0;
    /* vr_raster_gpu's and vr_resolve_gpu's steps in their order, without their events; with
     * tile flags the caller enqueued the clear (vr_raster_tiles_clear_enqueue) */
    if ((st = vr_raster_prepare(&scratch, cfg, tri_count, &hp, &hp_cells, s)) == VR_OK) {
        if (!d_tiles) {
            const cudaError_t e = cudaMemsetAsync(
                d_vis, 0xff, (size_t)cfg->width * cfg->height * sizeof(uint64_t), s);
            st = vr_cuda_status(e, VR_CUDA_WHERE, "cudaMemsetAsync of the visibility buffer");
        }
    }
    if (st == VR_OK)
        st = vr_raster_launch(d_vis, d_q, tri_count, cfg, &scratch, hp, hp_cells, d_tiles, s);
    if (st == VR_OK)
        st = vr_resolve_launch(d_rgba, d_vis, d_q, tri_count, cfg, p, d_tiles, s);
    vr_hp_destroy(hp); /* the host object only: its device memory is the scratch's */
    return st;
}

vr_status vr_raster_tiles_clear_enqueue(uint64_t *d_vis, const vr_raster_config *cfg,
                                        uint8_t *d_tiles, void *stream)
{
    assert(d_vis && cfg && d_tiles);
    cudaStream_t s = (cudaStream_t)stream;
    const uint32_t tiles = (uint32_t)vr_raster_tile_count(cfg);
    const uint32_t per_block = VR_TILE_CLEAR_BLOCK / 32;
    const uint32_t want = (tiles + per_block - 1) / per_block;
    vr_tile_clear_kernel<<<want < VR_TILE_CLEAR_GRID_MAX ? want : VR_TILE_CLEAR_GRID_MAX,
                           VR_TILE_CLEAR_BLOCK, 0, s>>>((unsigned long long *)d_vis, d_tiles,
                                                        cfg->width, cfg->height,
                                                        vr_raster_tiles_x(cfg), tiles);
    return vr_cuda_launched(VR_CUDA_WHERE, "vr_tile_clear_kernel", s);
}

/* Waits for `s` and copies the device counts `d` into stats (rejected, clipped, fragments;
 * triangles when d counted them, i.e. the streamed totals; the times are left as they are). */
static vr_status vr_raster_read_counts(vr_raster_stats *stats, const vr_raster_counts *d,
                                       cudaStream_t s)
{
    vr_raster_counts c;
    VR_CUDA_CHECK(cudaMemcpyAsync(&c, d, sizeof c, cudaMemcpyDeviceToHost, s));
    VR_CUDA_CHECK(cudaStreamSynchronize(s));
    stats->triangles = c.triangles;
    stats->rejected = c.rejected;
    stats->clipped = c.clipped;
    stats->fragments = c.fragments;
    return VR_OK;
}

vr_status vr_raster_frame_counts(vr_raster_stats *stats, uint32_t tri_count, void *d_scratch,
                                 void *stream)
{
    assert(stats && d_scratch);
    const vr_status st = vr_raster_read_counts(
        stats, vr_raster_scratch_split(d_scratch).counts, (cudaStream_t)stream);
    stats->triangles = tri_count; /* one launch's counts do not count the slots */
    return st;
}

/* ---- streamed chunks: the frame's visibility buffer kept across many queues ------------------ */

/* One thread: this launch's counts into the frame's totals. */
__global__ void vr_raster_tally_kernel(vr_raster_counts *totals, const vr_raster_counts *c,
                                       uint32_t tri_count)
{
    totals->rejected += c->rejected;
    totals->clipped += c->clipped;
    totals->fragments += c->fragments;
    totals->triangles += tri_count;
}

vr_status vr_raster_stream_begin(uint64_t *d_vis, const vr_raster_config *cfg, void *d_scratch,
                                 void *stream)
{
    assert(d_vis && cfg && d_scratch);
    vr_status st = vr_raster_config_check(cfg);
    if (st != VR_OK)
        return st;
    cudaStream_t s = (cudaStream_t)stream;
    const vr_raster_scratch scratch = vr_raster_scratch_split(d_scratch);
    VR_CUDA_CHECK(cudaMemsetAsync(scratch.totals, 0, sizeof *scratch.totals, s));
    VR_CUDA_CHECK(cudaMemsetAsync(d_vis, 0xff, (size_t)cfg->width * cfg->height * 8, s));
    return VR_OK;
}

vr_status vr_raster_stream_chunk(uint64_t *d_vis, const vr_queue *d_q, uint32_t tri_count,
                                 const vr_raster_config *cfg, void *d_scratch, void *stream)
{
    assert(d_vis && d_q && cfg && d_scratch);
    vr_status st = vr_raster_check_input(cfg, d_q, tri_count);
    if (st != VR_OK || tri_count == 0)
        return st;
    cudaStream_t s = (cudaStream_t)stream;
    const vr_raster_scratch scratch = vr_raster_scratch_split(d_scratch);
    vr_hp *hp = NULL;
    uint32_t hp_cells = 0;
    if ((st = vr_raster_prepare(&scratch, cfg, tri_count, &hp, &hp_cells, s)) == VR_OK &&
        (st = vr_raster_launch(d_vis, d_q, tri_count, cfg, &scratch, hp, hp_cells, NULL, s)) ==
            VR_OK) {
        vr_raster_tally_kernel<<<1, 1, 0, s>>>(scratch.totals, scratch.counts, tri_count);
        st = vr_cuda_launched(VR_CUDA_WHERE, "vr_raster_tally_kernel", s);
    }
    vr_hp_destroy(hp); /* the host object only: its device memory is the scratch's */
    return st;
}

vr_status vr_raster_stream_totals(vr_raster_stats *stats, void *d_scratch, void *stream)
{
    assert(stats && d_scratch);
    return vr_raster_read_counts(stats, vr_raster_scratch_split(d_scratch).totals,
                                 (cudaStream_t)stream);
}

vr_status vr_resolve_stream_chunk(uint8_t *d_rgba, const uint64_t *d_vis, const vr_queue *d_q,
                                  uint32_t tri_count, const vr_raster_config *cfg,
                                  const vr_resolve_params *p, void *stream)
{
    assert(d_rgba && d_vis && d_q && cfg && p);
    vr_status st = vr_raster_check_input(cfg, d_q, tri_count);
    if (st == VR_OK)
        st = vr_resolve_check(p);
    if (st != VR_OK)
        return st;
    vr_resolve_params keep = *p;
    keep.part = VR_RESOLVE_PART_KEEP;
    return vr_resolve_launch(d_rgba, d_vis, d_q, tri_count, cfg, &keep, NULL,
                             (cudaStream_t)stream);
}

vr_status vr_resolve_gpu(uint8_t *d_rgba, const uint64_t *d_vis, const vr_queue *d_q,
                         uint32_t tri_count, const vr_raster_config *cfg,
                         const vr_resolve_params *p, double *ms, void *stream)
{
    assert(d_rgba && d_vis && d_q && cfg && p);
    vr_status st = vr_raster_check_input(cfg, d_q, tri_count);
    if (st == VR_OK)
        st = vr_resolve_check(p);
    if (st == VR_OK)
        st = vr_cuda_device_check();
    if (st != VR_OK)
        return st;
    cudaStream_t s = (cudaStream_t)stream;
    cudaEvent_t ev[2] = {NULL, NULL};
    float t = 0;
    for (int i = 0; i < 2; ++i)
        VR_CUDA_GOTO(cudaEventCreate(&ev[i]));
    VR_CUDA_GOTO(cudaEventRecord(ev[0], s));
    if ((st = vr_resolve_launch(d_rgba, d_vis, d_q, tri_count, cfg, p, NULL, s)) != VR_OK)
        goto done;
    VR_CUDA_GOTO(cudaEventRecord(ev[1], s));
    VR_CUDA_GOTO(cudaEventSynchronize(ev[1]));
    VR_CUDA_GOTO(cudaEventElapsedTime(&t, ev[0], ev[1]));
    if (ms)
        *ms = t;
done:
    /* teardown: nothing to act on if these fail, the first error is already recorded */
    for (int i = 0; i < 2; ++i)
        if (ev[i])
            cudaEventDestroy(ev[i]);
    return st;
}

/* ---- vr_raster_device --------------------------------------------------------------------- */

vr_status vr_raster_frame_alloc(vr_raster_frame *f, uint32_t triangles, uint32_t vertex_count)
{
    memset(f, 0, sizeof *f);
    vr_status st;
    if ((st = vr_cuda_alloc((void **)&f->d_shade_counts, (size_t)vertex_count * sizeof(uint32_t),
                            "shade counts")) ||
        (st = vr_cuda_alloc((void **)&f->d_tri_batch, (size_t)triangles * sizeof(uint32_t),
                            "batch ids")) ||
        (st = vr_cuda_alloc(&f->d_scratch, vr_raster_scratch_bytes(), "raster scratch")))
        return st;
    cudaStream_t s;
    VR_CUDA_CHECK(cudaStreamCreate(&s));
    f->stream = s;
    return VR_OK;
}

vr_status vr_raster_frame_grow(vr_raster_frame *f, size_t pixels)
{
    if (pixels <= f->pixel_capacity)
        return VR_OK;
    f->pixel_capacity = 0;
    f->tiles_width = f->tiles_height = 0; /* the new buffer's words are not known */
    vr_status st;
    if ((st = vr_cuda_free((void **)&f->d_vis, "vis buffer")) ||
        (st = vr_cuda_free((void **)&f->d_rgba, "image")) ||
        (st = vr_cuda_alloc((void **)&f->d_vis, pixels * sizeof(uint64_t), "vis buffer")) ||
        (st = vr_cuda_alloc((void **)&f->d_rgba, pixels * 4, "image")))
        return st;
    f->pixel_capacity = pixels;
    return VR_OK;
}

vr_status vr_raster_frame_tiles(vr_raster_frame *f, const vr_raster_config *cfg,
                                uint32_t background)
{
    assert(f && cfg && (size_t)cfg->width * cfg->height <= f->pixel_capacity);
    const size_t tiles = vr_raster_tile_count(cfg) << VR_TILE_FLAG_SHIFT; /* bytes */
    vr_status st;
    if (tiles > f->tile_capacity) {
        f->tile_capacity = 0;
        f->tiles_width = f->tiles_height = 0;
        if ((st = vr_cuda_free((void **)&f->d_tiles, "tile flags")) ||
            (st = vr_cuda_alloc((void **)&f->d_tiles, tiles, "tile flags")))
            return st;
        f->tile_capacity = tiles;
    }
    if (f->tiles_width == cfg->width && f->tiles_height == cfg->height &&
        f->tiles_background == background)
        return VR_OK;
    /* every tile DRAWN: the next frame's clear kernel clears every word, its resolve writes
     * every pixel */
    VR_CUDA_CHECK(cudaMemsetAsync(f->d_tiles, VR_TILE_DRAWN, tiles, (cudaStream_t)f->stream));
    f->tiles_width = cfg->width;
    f->tiles_height = cfg->height;
    f->tiles_background = background;
    return VR_OK;
}

void vr_raster_frame_free(vr_raster_frame *f)
{
    void *const bufs[] = {f->d_shade_counts, f->d_tri_batch, f->d_scratch, f->d_vis, f->d_rgba,
                          f->d_tiles};
    vr_cuda_free_all(bufs, VR_COUNT_OF(bufs));
    if (f->stream)
        cudaStreamDestroy((cudaStream_t)f->stream);
    memset(f, 0, sizeof *f);
}

struct vr_raster_device {
    uint32_t tri_capacity, vertex_count;
    vr_queue d_queue;          /* tri_capacity slots */
    vr_raster_frame frame;     /* tri_capacity batch ids, vertex_count shade counts */
    uint32_t tri_batch_count;  /* 0 until uploaded */
    int have_counts;           /* frame.d_shade_counts holds uploaded counts */
    cudaEvent_t ev[2];
};

void vr_raster_device_destroy(vr_raster_device *d)
{
    if (!d)
        return;
    /* teardown: errors cannot be acted on here, so they are not checked */
    vr_queue_device_free(&d->d_queue);
    for (int i = 0; i < 2; ++i)
        if (d->ev[i])
            cudaEventDestroy(d->ev[i]);
    vr_raster_frame_free(&d->frame);
    free(d);
}

vr_status vr_raster_device_create(vr_raster_device **out, uint32_t tri_capacity,
                                  uint32_t vertex_count)
{
    assert(out);
    *out = NULL;
    vr_raster_device *d = NULL;
    vr_status st = vr_cuda_host_struct((void **)&d, sizeof *d, "a raster device");
    if (st != VR_OK)
        return st;
    d->tri_capacity = tri_capacity;
    d->vertex_count = vertex_count;
    if ((st = vr_queue_device_alloc(&d->d_queue, tri_capacity)) ||
        (st = vr_raster_frame_alloc(&d->frame, tri_capacity, vertex_count)))
        goto done;
    VR_CUDA_GOTO(cudaEventCreate(&d->ev[0]));
    VR_CUDA_GOTO(cudaEventCreate(&d->ev[1]));
    *out = d;
    return VR_OK;
done:
    vr_raster_device_destroy(d);
    return st;
}

vr_status vr_raster_device_upload(vr_raster_device *d, const vr_queue *h_q, uint32_t tri_count,
                                  const uint32_t *h_shade_counts, const uint32_t *h_tri_batch,
                                  uint32_t tri_batch_count, vr_raster_stats *stats)
{
    assert(d && h_q);
    if (tri_count > d->tri_capacity || tri_count > h_q->capacity ||
        tri_batch_count > d->tri_capacity)
        return VR_ERROR(VR_ERR_ARG, "raster device upload: %u triangles / %u batch ids, capacity %u",
                        tri_count, tri_batch_count, d->tri_capacity);
    vr_status st = VR_OK;
    float ms = 0;
    cudaStream_t s = (cudaStream_t)d->frame.stream;
    const size_t t = tri_count;
    VR_CUDA_GOTO(cudaEventRecord(d->ev[0], s));
    VR_CUDA_GOTO(cudaMemcpyAsync(d->d_queue.clip, h_q->clip, t * VR_QUEUE_CLIP_FLOATS * sizeof(float),
                                   cudaMemcpyHostToDevice, s));
    VR_CUDA_GOTO(cudaMemcpyAsync(d->d_queue.normal, h_q->normal, t * VR_QUEUE_CLIP_FLOATS * sizeof(float),
                                   cudaMemcpyHostToDevice, s));
    VR_CUDA_GOTO(cudaMemcpyAsync(d->d_queue.vertex, h_q->vertex, t * 3 * sizeof(uint32_t),
                                   cudaMemcpyHostToDevice, s));
    VR_CUDA_GOTO(cudaMemcpyAsync(d->d_queue.tri_id, h_q->tri_id, t * sizeof(uint32_t),
                                   cudaMemcpyHostToDevice, s));
    if (h_shade_counts) {
        VR_CUDA_GOTO(cudaMemcpyAsync(d->frame.d_shade_counts, h_shade_counts,
                                       (size_t)d->vertex_count * sizeof(uint32_t),
                                       cudaMemcpyHostToDevice, s));
        d->have_counts = 1;
    }
    if (h_tri_batch) {
        VR_CUDA_GOTO(cudaMemcpyAsync(d->frame.d_tri_batch, h_tri_batch,
                                       (size_t)tri_batch_count * sizeof(uint32_t),
                                       cudaMemcpyHostToDevice, s));
        d->tri_batch_count = tri_batch_count;
    }
    VR_CUDA_GOTO(cudaEventRecord(d->ev[1], s));
    VR_CUDA_GOTO(cudaEventSynchronize(d->ev[1]));
    VR_CUDA_GOTO(cudaEventElapsedTime(&ms, d->ev[0], d->ev[1]));
    if (stats)
        stats->upload_ms = ms;
done:
    return st;
}

vr_status vr_raster_device_draw(vr_raster_device *d, uint8_t *h_rgba, uint64_t *h_vis,
                                const vr_queue *d_q, uint32_t tri_count,
                                const vr_raster_config *cfg, const vr_resolve_params *p,
                                vr_raster_stats *stats)
{
    assert(d && h_rgba && cfg && p);
    vr_status st = vr_raster_config_check(cfg);
    if (st != VR_OK)
        return st;
    const size_t pixels = (size_t)cfg->width * cfg->height;
    vr_raster_frame *f = &d->frame;
    if ((st = vr_raster_frame_grow(f, pixels)) != VR_OK)
        return st;
    cudaStream_t s = (cudaStream_t)f->stream;
    vr_resolve_params shade = *p;
    shade.shade_counts = d->have_counts ? f->d_shade_counts : NULL;
    shade.vertex_count = d->vertex_count;
    shade.tri_batch = d->tri_batch_count ? f->d_tri_batch : NULL;
    shade.tri_batch_count = d->tri_batch_count;
    const vr_queue *q = d_q ? d_q : &d->d_queue;
    vr_raster_stats local;
    vr_raster_stats *rs = stats ? stats : &local;
    const double upload_ms = stats ? stats->upload_ms : 0;
    memset(rs, 0, sizeof *rs);
    rs->upload_ms = upload_ms;
    double resolve_ms = 0;
    float ms = 0;
    if ((st = vr_raster_gpu(f->d_vis, q, tri_count, cfg, rs, f->d_scratch, s)) != VR_OK ||
        (st = vr_resolve_gpu(f->d_rgba, f->d_vis, q, tri_count, cfg, &shade, &resolve_ms, s)) !=
            VR_OK)
        return st;
    rs->resolve_ms = resolve_ms;
    VR_CUDA_GOTO(cudaEventRecord(d->ev[0], s));
    VR_CUDA_GOTO(cudaMemcpyAsync(h_rgba, f->d_rgba, pixels * 4, cudaMemcpyDeviceToHost, s));
    if (h_vis)
        VR_CUDA_GOTO(cudaMemcpyAsync(h_vis, f->d_vis, pixels * sizeof(uint64_t),
                                       cudaMemcpyDeviceToHost, s));
    VR_CUDA_GOTO(cudaEventRecord(d->ev[1], s));
    VR_CUDA_GOTO(cudaEventSynchronize(d->ev[1]));
    VR_CUDA_GOTO(cudaEventElapsedTime(&ms, d->ev[0], d->ev[1]));
    rs->download_ms = ms;
done:
    return st;
}
