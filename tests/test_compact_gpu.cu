/* test_compact_gpu.cu - the GPU compactions of pipeline/compact against their CPU references:
 *   select   every method of vr_compact_select (ordered, collate, atomic, hp, hp4, cub-if,
 *            cub-flagged, scan) for sizes 0, 1, 31, 32, 33, one block and one section +- 1,
 *            odd sizes, 1M and 2^28 (gpu/ only), at 0, 1, 50, 99 and 100 percent: the output
 *            poisoned with a value that is no input element, then equal to vr_compact_ref in
 *            order (exact methods) or a concatenation of complete runs in input order (collate:
 *            tiles, atomic: warp rounds; vr_compact_check), nothing written past the count;
 *   kout     the device API in a test kernel: threads with k = 0..300 outputs, one or two
 *            rounds (vr_compact_block_rank twice), block sizes 32..1024, ordered / collate /
 *            one atomic per warp, against the nested-loop expansion (runs for the unordered);
 *   load     the section hand-off under load: early tickets (the first, the closer of section
 *            0, whole sections) sleep for milliseconds while every other block of the
 *            persistent kernel waits for them; every launch must finish and be exact;
 *   hp       HistoPyramid levels word for word equal to vr_hp_build_ref (plain and vec4),
 *            compaction (0, 1, 3%: descents; 5%: sparse tiles; 50, 99, 100% and a clustered
 *            input: empty, sparse and dense tiles in one launch) and expansion (cell, rank)
 *            equal to the references, both also cut short by the capacity, overflowing counts
 *            reported;
 *   blocks   the persistent select kernel (ordered, collate, atomic) run with 1, 2, 3 and 7
 *            blocks, so that each block loops over many tiles.
 * Groups "gpu/compact-..." and "gpu-small/compact-..." (small sizes, for compute-sanitizer).
 * Without a device every test prints "SKIP: no CUDA device" and skips.
 */
#include "tests/test.h"

#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include "pipeline/compact/compact.cuh"
#include "pipeline/compact/histopyramid.h"
#include "pipeline/vr_check.h"
#include "tests/test_helpers.h"

/* ---- helpers ------------------------------------------------------------------------------- */

/* Fills d[0..n) with `value` and waits. */
static void vr_test_fill(uint32_t *d, uint64_t n, uint32_t value)
{
    VR_EXPECT(vr_compact_buffer_fill(d, n, value) == VR_OK, "poisoning: %s", vr_last_error());
}

/* Buffers for inputs of up to `most` elements: device input/output, host input/want/got. */
typedef struct vr_test_bufs {
    uint32_t most;
    uint32_t *d_in, *d_out;
    uint32_t *in, *want, *got;
} vr_test_bufs;

static int vr_test_bufs_alloc(vr_test_bufs *b, uint32_t most)
{
    memset(b, 0, sizeof *b);
    b->most = most;
    const size_t bytes = ((size_t)most + 4096) * 4; /* + room to read past a count */
    b->in = (uint32_t *)malloc(bytes);
    b->want = (uint32_t *)malloc(bytes);
    b->got = (uint32_t *)malloc(bytes);
    if (!b->in || !b->want || !b->got ||
        vr_cuda_alloc((void **)&b->d_in, bytes, "test input") != VR_OK ||
        vr_cuda_alloc((void **)&b->d_out, bytes, "test output") != VR_OK) {
        VR_EXPECT(0, "buffers for %u elements: %s", most, vr_last_error());
        return 0;
    }
    return 1;
}

static void vr_test_bufs_free(vr_test_bufs *b)
{
    free(b->in);
    free(b->want);
    free(b->got);
    cudaFree(b->d_in); /* teardown */
    cudaFree(b->d_out);
    memset(b, 0, sizeof *b);
}

/* ---- select -------------------------------------------------------------------------------- */

/* Uploads the input of size n (seed), then for each percent every method in `methods` (bit m:
 * method m): poison, select, check. Prints the times of the methods for n >= 2^24. */
static void vr_test_select_size(vr_compact_ctx *c, vr_test_bufs *b, uint32_t n, uint32_t seed,
                                const uint32_t *percents, int percent_count, uint32_t methods)
{
    vr_compact_input(b->in, n, seed);
    VR_EXPECT_CUDA(cudaMemcpy(b->d_in, b->in, (size_t)n * 4, cudaMemcpyHostToDevice));
    /* index n is not in the input: its value is none of the input's (the mix is a bijection) */
    const uint32_t poison = vr_compact_mix(n, seed);
    for (int p = 0; p < percent_count; ++p) {
        const uint64_t thr = vr_test_compact_threshold(percents[p]);
        const uint32_t m = vr_compact_ref(b->want, b->in, n, thr);
        char times[512] = "";
        for (int k = 0; k < VR_COMPACT_METHOD_COUNT; ++k) {
            if (!(methods >> k & 1u))
                continue;
            const vr_compact_method method = (vr_compact_method)k;
            const char *name = vr_compact_method_names[k];
            const uint64_t slack = 4096; /* the buffer has that much past n: must stay poison */
            vr_test_fill(b->d_out, (uint64_t)n + 4096, poison);
            uint32_t count = 0;
            float ms = 0;
            const vr_status st = vr_compact_select(c, method, b->d_out, b->d_in, n, thr, &count, &ms);
            if (st != VR_OK) {
                VR_EXPECT(0, "%s, n %u, %u%%: %s", name, n, percents[p], vr_last_error());
                continue;
            }
            const size_t got_words = (size_t)(count <= n ? count : n) + slack;
            VR_EXPECT_CUDA(cudaMemcpy(b->got, b->d_out, got_words * 4, cudaMemcpyDeviceToHost));
            char msg[256];
            if (vr_compact_check(b->got, count, b->want, m, b->in, n, thr, seed,
                                 vr_compact_method_order(method), msg, sizeof msg) != 0)
                VR_EXPECT(0, "%s, n %u, %u%%: %s", name, n, percents[p], msg);
            for (uint64_t j = count; j < (uint64_t)count + slack && count <= n; ++j)
                if (b->got[j] != poison) {
                    VR_EXPECT(0, "%s, n %u, %u%%: output %llu past the count %u was written (%u)",
                              name, n, percents[p], (unsigned long long)j, count, b->got[j]);
                    break;
                }
            const size_t len = strlen(times);
            snprintf(times + len, sizeof times - len, " %s %.3f", name, ms);
        }
        if (n >= (1u << 24))
            printf("  n %u, %u%% (%u kept), ms:%s\n", n, percents[p], m, times);
    }
}

/* Every size at every percent, each method in `methods`, the persistent kernel (ordered,
 * collate, atomic) at each block count of `blocks` (0: as many as fit). */
static int vr_test_select(const uint32_t *sizes, int size_count, const uint32_t *percents,
                          int percent_count, uint32_t methods, const uint32_t *blocks,
                          int block_count)
{
    if (vr_test_no_device())
        return VR_TEST_SKIP;
    uint32_t most = 1;
    for (int s = 0; s < size_count; ++s)
        most = sizes[s] > most ? sizes[s] : most;
    vr_compact_ctx *c = NULL;
    vr_test_bufs b;
    if (vr_compact_create(&c, most) != VR_OK) {
        VR_EXPECT(0, "context for %u elements: %s", most, vr_last_error());
        return VR_TEST_RESULT();
    }
    if (vr_test_bufs_alloc(&b, most))
        for (int k = 0; k < block_count; ++k) {
            vr_compact_set_blocks(c, blocks[k]);
            for (int s = 0; s < size_count; ++s)
                vr_test_select_size(c, &b, sizes[s], (uint32_t)s + 1, percents, percent_count,
                                    methods);
        }
    vr_test_bufs_free(&b);
    vr_compact_destroy(c);
    return VR_TEST_RESULT();
}

#define VR_TEST_ALL_METHODS ((1u << VR_COMPACT_METHOD_COUNT) - 1u)
#define VR_TILE VR_COMPACT_TILE
#define VR_SECTION_ELEMS (VR_COMPACT_SECTION * VR_COMPACT_TILE)

VR_TEST(test_compact_select, "gpu/compact-select")
{
    static const uint32_t sizes[] = {0,    1,    31,   32,   33,   VR_TILE - 1, VR_TILE,
                                     VR_TILE + 1,  VR_SECTION_ELEMS - VR_TILE + 1,
                                     VR_SECTION_ELEMS - 1, VR_SECTION_ELEMS,
                                     VR_SECTION_ELEMS + 1, 3 * VR_SECTION_ELEMS + 77, 77777,
                                     1000003, 1u << 20, 1u << 28};
    static const uint32_t fit[] = {0};
    return vr_test_select(sizes, sizeof sizes / sizeof sizes[0], vr_test_compact_percents,
                          VR_TEST_COMPACT_PERCENTS, VR_TEST_ALL_METHODS, fit, 1);
}

VR_TEST(test_compact_select_small, "gpu-small/compact-select")
{
    static const uint32_t sizes[] = {1, 33, VR_TILE + 1, VR_SECTION_ELEMS + 1};
    static const uint32_t percents[] = {0, 50, 100};
    static const uint32_t fit[] = {0};
    return vr_test_select(sizes, sizeof sizes / sizeof sizes[0], percents, 3,
                          VR_TEST_ALL_METHODS, fit, 1);
}

/* The persistent kernel with few blocks, so each loops over many tiles (the ticket ring, the
 * tile buffers, ordered's hand-off warp taking offsets two tiles late and the tiles still held
 * when a block runs out, a block handing off tiles of several sections; 1 block: it never
 * waits for itself; sizes of 1 and 2 tiles: fewer tiles than the lag): sizes around the tile,
 * the vector and the section, every percent. */
#define VR_TEST_PERSISTENT (1u << VR_COMPACT_ORDERED | 1u << VR_COMPACT_COLLATE | 1u << VR_COMPACT_ATOMIC)
static const uint32_t vr_test_few_blocks[] = {1, 2, 3, 7};

VR_TEST(test_compact_blocks, "gpu/compact-blocks")
{
    static const uint32_t sizes[] = {1, 5, 2 * VR_TILE - 1, 2 * VR_TILE + 3, 5 * VR_TILE + 2,
                                     VR_SECTION_ELEMS + 1, 3 * VR_SECTION_ELEMS + 77, 1000003};
    return vr_test_select(sizes, sizeof sizes / sizeof sizes[0], vr_test_compact_percents,
                          VR_TEST_COMPACT_PERCENTS, VR_TEST_PERSISTENT, vr_test_few_blocks, 4);
}

VR_TEST(test_compact_blocks_small, "gpu-small/compact-blocks")
{
    static const uint32_t sizes[] = {5, 2 * VR_TILE + 3, VR_SECTION_ELEMS + 1};
    static const uint32_t percents[] = {1, 50, 100};
    return vr_test_select(sizes, sizeof sizes / sizeof sizes[0], percents, 3, VR_TEST_PERSISTENT,
                          vr_test_few_blocks, 2);
}

/* ---- the device API with k outputs per thread ------------------------------------------------ */

enum { VR_KOUT_ORDERED = 0, VR_KOUT_COLLATE, VR_KOUT_WARP };
static const char *const vr_kout_names[] = {"ordered", "collate", "warp atomic"};

typedef struct vr_kout_params {
    const uint32_t *counts; /* n: outputs of thread i */
    uint32_t *cell, *rank;  /* capacity: output (thread, j) */
    vr_compact_dev dev;
    uint32_t n, capacity, method, rounds;
    uint32_t delay_ticket, delay_ns; /* the block with this ticket sleeps first (ns 0: none) */
} vr_kout_params;

/* One thread per counts[i] (i from the ticket), any block size: round 1 emits outputs
 * j < k/2 (all of k with one round), round 2 the rest; ordered / collate rank per block, the
 * warp scheme claims per warp and round. */
__global__ void vr_kout_kernel(const vr_kout_params p)
{
    __shared__ vr_compact_shared s;
    const uint32_t ticket = vr_compact_begin(p.dev, &s);
    const uint64_t i = (uint64_t)ticket * blockDim.x + threadIdx.x;
    const uint32_t k = i < p.n ? p.counts[i] : 0u;
    const uint32_t k0 = p.rounds == 2 ? k / 2 : k;
    if (p.delay_ns && ticket == p.delay_ticket && threadIdx.x == 0) {
        const uint64_t t0 = vr_compact_clock_ns();
        while (vr_compact_clock_ns() - t0 < p.delay_ns)
            __nanosleep(1000);
    }
    uint32_t at0, at1 = 0;
    if (p.method == VR_KOUT_WARP) {
        at0 = vr_compact_warp_atomic(p.dev, k0);
        if (p.rounds == 2)
            at1 = vr_compact_warp_atomic(p.dev, k - k0);
    } else {
        at0 = vr_compact_block_rank(&s, k0);
        if (p.rounds == 2)
            at1 = vr_compact_block_rank(&s, k - k0);
        const uint32_t base = p.method == VR_KOUT_ORDERED ? vr_compact_ordered_base(p.dev, &s)
                                                          : vr_compact_collate_base(p.dev, &s);
        at0 += base;
        at1 += base;
    }
    for (uint32_t j = 0; j < k; ++j) {
        const uint32_t at = j < k0 ? at0 + j : at1 + (j - k0);
        if (at < p.capacity) {
            p.cell[at] = (uint32_t)i;
            p.rank[at] = j;
        }
    }
    vr_compact_end(p.dev);
}

/* The expected outputs in launch order (blocks in order, rounds in order within a block,
 * threads in order within a round) and each one's run: the whole list (ordered), the block
 * (collate), or the (block, warp, round) claim (warp). Returns the total. */
static uint32_t vr_kout_expect(uint32_t *cell, uint32_t *rank, uint64_t *run, const uint32_t *counts,
                               uint32_t n, uint32_t block, uint32_t rounds, uint32_t method)
{
    uint32_t m = 0;
    for (uint32_t b0 = 0; b0 < n; b0 += block)
        for (uint32_t r = 0; r < rounds; ++r)
            for (uint32_t i = b0; i < b0 + block && i < n; ++i) {
                const uint32_t k0 = rounds == 2 ? counts[i] / 2 : counts[i];
                const uint32_t from = r ? k0 : 0, to = r ? counts[i] : k0;
                for (uint32_t j = from; j < to; ++j, ++m) {
                    cell[m] = i, rank[m] = j;
                    run[m] = method == VR_KOUT_ORDERED   ? 0
                             : method == VR_KOUT_COLLATE ? b0
                                                         : ((uint64_t)i / 32) * 2 + r;
                }
            }
    return m;
}

/* got (cell, rank) must be the expected outputs as a concatenation of complete runs, each in
 * order: with q = the position of an output in the expected list, every q occurs once, the
 * next output of a run is the next position, a run starts at its first position and the run
 * before it ended at its last. */
static int vr_kout_check(const uint32_t *got_cell, const uint32_t *got_rank, const uint32_t *cell,
                         const uint32_t *rank, const uint64_t *run, uint32_t m,
                         const uint32_t *first_of, const uint32_t *counts, uint32_t rounds,
                         uint32_t n, unsigned char *seen, char *msg, size_t size)
{
    memset(seen, 0, m);
    uint32_t prev = 0;
    for (uint32_t p = 0; p < m; ++p) {
        const uint32_t i = got_cell[p], j = got_rank[p];
        if (i >= n || j >= counts[i]) {
            snprintf(msg, size, "output %u is (%u, %u), no output of any thread", p, i, j);
            return -1;
        }
        /* a thread's outputs of one round are adjacent in the expected list */
        const uint32_t k0 = rounds == 2 ? counts[i] / 2 : counts[i];
        const uint32_t q = j < k0 ? first_of[2 * (size_t)i] + j
                                  : first_of[2 * (size_t)i + 1] + (j - k0);
        if (q >= m || cell[q] != i || rank[q] != j || seen[q]) {
            snprintf(msg, size, "output %u is (%u, %u): %s", p, i, j,
                     q < m && seen[q] ? "a second time" : "not where expected");
            return -1;
        }
        seen[q] = 1;
        const int starts = q == 0 || run[q - 1] != run[q];
        const int prev_ends = prev + 1 == m || run[prev + 1] != run[prev];
        const int ok = p == 0                 ? starts
                       : run[q] == run[prev] ? q == prev + 1
                                             : starts && prev_ends;
        if (!ok) {
            snprintf(msg, size, "output %u is (%u, %u) at expected position %u, after %u "
                     "(runs %llu, %llu)", p, i, j, q, prev, (unsigned long long)run[q],
                     (unsigned long long)run[prev]);
            return -1;
        }
        prev = q;
    }
    if (m && !(prev + 1 == m || run[prev + 1] != run[prev])) {
        snprintf(msg, size, "the last output (position %u) does not end its run", prev);
        return -1;
    }
    return 0;
}

static int vr_test_kout(uint32_t n, const uint32_t *blocks, int block_count)
{
    if (vr_test_no_device())
        return VR_TEST_SKIP;
    const size_t cap = (size_t)n * 6 + 100016; /* > every mix's total, with one 100000 */
    uint32_t *counts = (uint32_t *)malloc((size_t)n * 4);
    uint32_t *cell = (uint32_t *)malloc(cap * 4), *rank = (uint32_t *)malloc(cap * 4);
    uint32_t *got_cell = (uint32_t *)malloc(cap * 4), *got_rank = (uint32_t *)malloc(cap * 4);
    uint32_t *first_of = (uint32_t *)malloc((size_t)n * 8);
    uint64_t *run = (uint64_t *)malloc(cap * 8);
    unsigned char *seen = (unsigned char *)malloc(cap);
    uint32_t *d_counts = NULL, *d_cell = NULL, *d_rank = NULL;
    vr_compact_state *state = NULL;
    if (!counts || !cell || !rank || !got_cell || !got_rank || !first_of || !run || !seen ||
        vr_cuda_alloc((void **)&d_counts, (size_t)n * 4, "counts") != VR_OK ||
        vr_cuda_alloc((void **)&d_cell, cap * 4, "cells") != VR_OK ||
        vr_cuda_alloc((void **)&d_rank, cap * 4, "ranks") != VR_OK ||
        vr_compact_state_create(&state, n / 32 + 1, NULL) != VR_OK) {
        VR_EXPECT(0, "kout buffers for %u threads: %s", n, vr_last_error());
        goto done;
    }
    for (uint32_t mix = 0; mix < 4; ++mix) {
        vr_test_compact_counts(counts, n, 100 + mix, mix);
        if (mix == 0)
            counts[n / 2] = 100000; /* one thread with many outputs: 17 bit planes */
        VR_EXPECT_CUDA(cudaMemcpy(d_counts, counts, (size_t)n * 4, cudaMemcpyHostToDevice));
        for (int bk = 0; bk < block_count; ++bk)
            for (uint32_t rounds = 1; rounds <= 2; ++rounds)
                for (uint32_t method = 0; method < 3; ++method) {
                    const uint32_t block = blocks[bk];
                    const uint32_t m = vr_kout_expect(cell, rank, run, counts, n, block, rounds,
                                                      method);
                    if (m > cap) {
                        VR_EXPECT(0, "kout: %u outputs > capacity %zu", m, cap);
                        continue;
                    }
                    for (uint32_t q = m; q-- > 0;) /* first expected position per (thread, round) */
                        first_of[2 * (size_t)cell[q] + (rounds == 2 && rank[q] >= counts[cell[q]] / 2)] = q;
                    vr_kout_params p;
                    memset(&p, 0, sizeof p);
                    p.counts = d_counts;
                    p.cell = d_cell;
                    p.rank = d_rank;
                    p.n = n;
                    p.capacity = (uint32_t)cap;
                    p.method = method;
                    p.rounds = rounds;
                    p.delay_ticket = 1; /* the second block sleeps 1 ms: the rest must wait */
                    p.delay_ns = mix == 0 ? 1000000u : 0u;
                    const uint32_t grid = (n + block - 1) / block;
                    vr_test_fill(d_cell, m + 1, 0xffffffffu);
                    uint32_t count = 0;
                    if (vr_compact_state_next(state, grid, &p.dev) != VR_OK) {
                        VR_EXPECT(0, "%s", vr_last_error());
                        continue;
                    }
                    vr_kout_kernel<<<grid, block>>>(p);
                    VR_EXPECT_CUDA(cudaGetLastError());
                    const vr_status st = vr_compact_state_result(state, &count);
                    VR_EXPECT(st == VR_OK, "%s", vr_last_error());
                    VR_EXPECT_CUDA(cudaMemcpy(got_cell, d_cell, ((size_t)m + 1) * 4,
                                              cudaMemcpyDeviceToHost));
                    VR_EXPECT_CUDA(cudaMemcpy(got_rank, d_rank, (size_t)m * 4,
                                              cudaMemcpyDeviceToHost));
                    char msg[256];
                    VR_EXPECT(count == m, "kout %s, block %u, %u round(s), mix %u: %u outputs, "
                              "want %u", vr_kout_names[method], block, rounds, mix, count, m);
                    if (count == m &&
                        vr_kout_check(got_cell, got_rank, cell, rank, run, m, first_of, counts,
                                      rounds, n, seen, msg, sizeof msg) != 0)
                        VR_EXPECT(0, "kout %s, block %u, %u round(s), mix %u: %s",
                                  vr_kout_names[method], block, rounds, mix, msg);
                    VR_EXPECT(got_cell[m] == 0xffffffffu, "kout %s: written past the count",
                              vr_kout_names[method]);
                }
    }
done:
    vr_compact_state_destroy(state);
    cudaFree(d_counts); /* teardown */
    cudaFree(d_cell);
    cudaFree(d_rank);
    free(counts);
    free(cell);
    free(rank);
    free(got_cell);
    free(got_rank);
    free(first_of);
    free(run);
    free(seen);
    return VR_TEST_RESULT();
}

VR_TEST(test_compact_kout, "gpu/compact-kout")
{
    static const uint32_t blocks[] = {32, 96, 256, 1024};
    return vr_test_kout(200003, blocks, 4);
}

VR_TEST(test_compact_kout_small, "gpu-small/compact-kout")
{
    static const uint32_t blocks[] = {64, 1024};
    return vr_test_kout(5003, blocks, 2);
}

/* ---- the section hand-off under load --------------------------------------------------------- */

static int vr_test_load(uint32_t n, const uint32_t (*delays)[3], int delay_count)
{
    if (vr_test_no_device())
        return VR_TEST_SKIP;
    vr_compact_ctx *c = NULL;
    vr_test_bufs b;
    if (vr_compact_create(&c, n) != VR_OK) {
        VR_EXPECT(0, "context for %u elements: %s", n, vr_last_error());
        return VR_TEST_RESULT();
    }
    if (!vr_test_bufs_alloc(&b, n))
        goto done;
    vr_compact_input(b.in, n, 42);
    VR_EXPECT_CUDA(cudaMemcpy(b.d_in, b.in, (size_t)n * 4, cudaMemcpyHostToDevice));
    for (int d = 0; d < delay_count; ++d)
        for (int p = 1; p < 4; ++p) { /* 1, 50, 99 percent */
            const uint64_t thr = vr_test_compact_threshold(vr_test_compact_percents[p]);
            const uint32_t m = vr_compact_ref(b.want, b.in, n, thr);
            for (int method = VR_COMPACT_ORDERED; method <= VR_COMPACT_COLLATE; ++method) {
                vr_compact_set_delay(c, delays[d][0], delays[d][1], delays[d][2]);
                vr_test_fill(b.d_out, n, 0xffffffffu);
                uint32_t count = 0;
                float ms = 0;
                const vr_status st = vr_compact_select(c, (vr_compact_method)method, b.d_out,
                                                       b.d_in, n, thr, &count, &ms);
                vr_compact_set_delay(c, 0, 0, 0);
                char what[160];
                snprintf(what, sizeof what, "%s, tickets %u..%u asleep %.1f ms, %u%%",
                         vr_compact_method_names[method], delays[d][0],
                         delays[d][0] + delays[d][1] - 1, delays[d][2] * 1e-6,
                         vr_test_compact_percents[p]);
                if (st != VR_OK) {
                    VR_EXPECT(0, "%s: %s", what, vr_last_error());
                    continue;
                }
                /* the sleep is inside the timed kernel: it must show, or nothing waited */
                VR_EXPECT(ms * 1e6 >= delays[d][2], "%s: the kernel took %.3f ms", what, ms);
                VR_EXPECT_CUDA(cudaMemcpy(b.got, b.d_out, (size_t)count * 4,
                                          cudaMemcpyDeviceToHost));
                char msg[256];
                if (vr_compact_check(b.got, count, b.want, m, b.in, n, thr, 42,
                                     vr_compact_method_order((vr_compact_method)method), msg,
                                     sizeof msg) != 0)
                    VR_EXPECT(0, "%s: %s", what, msg);
                if (p == 2)
                    printf("  %s: %.2f ms\n", what, ms);
            }
        }
done:
    vr_test_bufs_free(&b);
    vr_compact_destroy(c);
    return VR_TEST_RESULT();
}

VR_TEST(test_compact_load, "gpu/compact-load")
{
    /* {first ticket, tickets, ns}: 4096 tiles (128 sections), more than the blocks take at once */
    static const uint32_t delays[][3] = {
        {0, 1, 20000000},                       /* the first block: everybody waits */
        {VR_COMPACT_SECTION - 1, 1, 20000000},  /* the block that closes section 0 */
        {0, 2 * VR_COMPACT_SECTION, 2000000},   /* two whole sections */
        {1000, 1, 20000000},                    /* one block in the middle */
        {4095, 1, 20000000},                    /* the last block */
    };
    return vr_test_load(4096 * VR_COMPACT_TILE, delays, sizeof delays / sizeof delays[0]);
}

VR_TEST(test_compact_load_small, "gpu-small/compact-load")
{
    static const uint32_t delays[][3] = {{0, 1, 5000000}, {VR_COMPACT_SECTION - 1, 1, 5000000}};
    return vr_test_load(3 * VR_SECTION_ELEMS + 5, delays, 2);
}

/* ---- HistoPyramid ------------------------------------------------------------------------------ */

/* The HistoPyramid compaction's selectivities, then one case of clustered input. */
static const uint32_t vr_test_hp_percents[] = {0, 1, 3, 5, 50, 99, 100};
#define VR_TEST_HP_CASES (int)(sizeof vr_test_hp_percents / sizeof vr_test_hp_percents[0] + 1)

/* Tiles of 4096 values with 0, 3, 50 and 100% of them below 2^31 in turn: at 50% a HistoPyramid
 * compaction meets empty, sparse and dense tiles in one launch (38% kept in all: by tiles). */
static void vr_test_hp_clustered(uint32_t *in, uint32_t n, uint32_t seed)
{
    static const uint32_t share[4] = {0, 3, 50, 100};
    for (uint32_t i = 0; i < n; ++i) {
        const uint32_t u = vr_compact_mix(i, seed);
        const int kept = (uint64_t)u * 100 < (uint64_t)share[(i / VR_COMPACT_TILE) % 4] << 32;
        in[i] = kept ? u >> 1 : u | 0x80000000u;
    }
}

static int vr_test_hp(const uint32_t *sizes, int size_count)
{
    if (vr_test_no_device())
        return VR_TEST_SKIP;
    uint32_t most = 1;
    for (int s = 0; s < size_count; ++s)
        most = sizes[s] > most ? sizes[s] : most;
    const size_t cap = (size_t)most * 6 + 16; /* > every count mix's total */
    vr_hp *hp[2] = {NULL, NULL};
    uint32_t *in = (uint32_t *)malloc((size_t)most * 4), *counts = (uint32_t *)malloc((size_t)most * 4);
    uint32_t *want = (uint32_t *)malloc(cap * 4), *want_rank = (uint32_t *)malloc(cap * 4);
    uint32_t *got = (uint32_t *)malloc(cap * 4), *got_rank = (uint32_t *)malloc(cap * 4);
    vr_hp_layout l;
    vr_hp_layout_make(&l, VR_HP_VEC4, most);
    uint32_t *levels = (uint32_t *)malloc(l.words * 4 + 16), *got_levels = (uint32_t *)malloc(l.words * 4 + 16);
    uint32_t *d_in = NULL, *d_out = NULL, *d_rank = NULL;
    if (!in || !counts || !want || !want_rank || !got || !got_rank || !levels || !got_levels ||
        vr_cuda_alloc((void **)&d_in, (size_t)most * 4, "input") != VR_OK ||
        vr_cuda_alloc((void **)&d_out, cap * 4, "output") != VR_OK ||
        vr_cuda_alloc((void **)&d_rank, cap * 4, "ranks") != VR_OK ||
        vr_hp_create(&hp[0], VR_HP_PLAIN, most, NULL) != VR_OK ||
        vr_hp_create(&hp[1], VR_HP_VEC4, most, NULL) != VR_OK) {
        VR_EXPECT(0, "HistoPyramid buffers for %u cells: %s", most, vr_last_error());
        goto done;
    }
    for (int s = 0; s < size_count; ++s) {
        const uint32_t n = sizes[s];
        /* compaction at each selectivity (1 and 3%: descents; 5%: sparse tiles), then the
           clustered input at 50% */
        for (int p = 0; p < VR_TEST_HP_CASES; ++p) {
            const int clustered = p == VR_TEST_HP_CASES - 1;
            const uint32_t percent = clustered ? 50 : vr_test_hp_percents[p];
            if (p == 0 || clustered) {
                if (clustered)
                    vr_test_hp_clustered(in, n, (uint32_t)s);
                else
                    vr_compact_input(in, n, (uint32_t)s);
                VR_EXPECT_CUDA(cudaMemcpy(d_in, in, (size_t)n * 4, cudaMemcpyHostToDevice));
            }
            for (int kind = 0; kind < 2; ++kind) {
                const uint64_t thr = vr_test_compact_threshold(percent);
                const uint32_t m = vr_compact_ref(want, in, n, thr);
                vr_hp_layout_make(&l, (vr_hp_kind)kind, n);
                vr_hp_build_ref(levels, &l, NULL, in, thr);
                vr_test_fill(d_out, (uint64_t)m + 1, vr_compact_mix(n, (uint32_t)s));
                uint32_t total = 0;
                vr_status st = vr_hp_build_select(hp[kind], d_in, n, thr);
                if (st == VR_OK)
                    st = vr_hp_compact(hp[kind], d_out, n);
                if (st == VR_OK)
                    st = vr_hp_total(hp[kind], &total);
                if (st == VR_OK)
                    st = vr_hp_download(hp[kind], got_levels);
                char what[96];
                snprintf(what, sizeof what, "%s select, n %u, %u%%%s", kind ? "vec4" : "plain",
                         n, percent, clustered ? " (clustered)" : "");
                if (st != VR_OK) {
                    VR_EXPECT(0, "%s: %s", what, vr_last_error());
                    continue;
                }
                VR_EXPECT(!memcmp(got_levels, levels, l.words * 4), "%s: levels differ", what);
                VR_EXPECT(total == m, "%s: total %u, want %u", what, total, m);
                VR_EXPECT_CUDA(cudaMemcpy(got, d_out, ((size_t)m + 1) * 4, cudaMemcpyDeviceToHost));
                VR_EXPECT(!memcmp(got, want, (size_t)m * 4) && got[m] == vr_compact_mix(n, (uint32_t)s),
                          "%s: outputs differ", what);
                /* cut short: outputs below the capacity only (tiles past it write nothing) */
                const uint32_t cut = m / 3 + 1;
                if (cut >= m)
                    continue;
                vr_test_fill(d_out, (uint64_t)m + 1, vr_compact_mix(n, (uint32_t)s));
                st = vr_hp_compact(hp[kind], d_out, cut);
                VR_EXPECT_CUDA(cudaDeviceSynchronize());
                VR_EXPECT_CUDA(cudaMemcpy(got, d_out, ((size_t)m + 1) * 4, cudaMemcpyDeviceToHost));
                VR_EXPECT(st == VR_OK && !memcmp(got, want, (size_t)cut * 4) &&
                              got[cut] == vr_compact_mix(n, (uint32_t)s),
                          "%s, capacity %u: outputs differ", what, cut);
            }
        }
        /* expansion for each count mix, whole and cut short */
        for (uint32_t mix = 0; mix < 4; ++mix) {
            vr_test_compact_counts(counts, n, (uint32_t)s, mix);
            VR_EXPECT_CUDA(cudaMemcpy(d_in, counts, (size_t)n * 4, cudaMemcpyHostToDevice));
            const uint32_t m = (uint32_t)vr_expand_ref(want, want_rank, (uint32_t)cap, counts, n);
            for (int kind = 0; kind < 2; ++kind)
                for (int cut = 0; cut < 2; ++cut) {
                    const uint32_t capacity = cut ? m / 3 : m;
                    vr_hp_layout_make(&l, (vr_hp_kind)kind, n);
                    vr_hp_build_ref(levels, &l, counts, NULL, 0);
                    vr_test_fill(d_out, (uint64_t)capacity + 1, 0xffffffffu);
                    uint32_t total = 0;
                    vr_status st = vr_hp_build_counts(hp[kind], d_in, n);
                    if (st == VR_OK)
                        st = vr_hp_expand(hp[kind], d_out, d_rank, capacity);
                    if (st == VR_OK)
                        st = vr_hp_total(hp[kind], &total);
                    if (st == VR_OK)
                        st = vr_hp_download(hp[kind], got_levels);
                    char what[96];
                    snprintf(what, sizeof what, "%s expand, n %u, mix %u, capacity %u",
                             kind ? "vec4" : "plain", n, mix, capacity);
                    if (st != VR_OK) {
                        VR_EXPECT(0, "%s: %s", what, vr_last_error());
                        continue;
                    }
                    VR_EXPECT(!memcmp(got_levels, levels, l.words * 4), "%s: levels differ",
                              what);
                    VR_EXPECT(total == m, "%s: total %u, want %u", what, total, m);
                    VR_EXPECT_CUDA(cudaMemcpy(got, d_out, ((size_t)capacity + 1) * 4,
                                              cudaMemcpyDeviceToHost));
                    VR_EXPECT_CUDA(cudaMemcpy(got_rank, d_rank, (size_t)capacity * 4,
                                              cudaMemcpyDeviceToHost));
                    VR_EXPECT(!memcmp(got, want, (size_t)capacity * 4) &&
                                  !memcmp(got_rank, want_rank, (size_t)capacity * 4) &&
                                  got[capacity] == 0xffffffffu,
                              "%s: outputs differ", what);
                }
        }
    }
    /* counts that sum past 2^32 - 1, then a good build again */
    {
        const uint32_t big[3] = {0x80000000u, 0x7fffffffu, 1u};
        VR_EXPECT_CUDA(cudaMemcpy(d_in, big, sizeof big, cudaMemcpyHostToDevice));
        for (int kind = 0; kind < 2; ++kind) {
            uint32_t total = 0;
            vr_status st = vr_hp_build_counts(hp[kind], d_in, 3);
            if (st == VR_OK)
                st = vr_hp_total(hp[kind], &total);
            VR_EXPECT(st == VR_ERR_OVERFLOW, "%s: counts summing to 2^32 gave status %d, total %u",
                      kind ? "vec4" : "plain", (int)st, total);
            st = vr_hp_build_counts(hp[kind], d_in, 2);
            if (st == VR_OK)
                st = vr_hp_total(hp[kind], &total);
            VR_EXPECT(st == VR_OK && total == 0xffffffffu, "%s: 2^32 - 1: status %d, total %u",
                      kind ? "vec4" : "plain", (int)st, total);
            st = vr_hp_build_counts(hp[kind], d_in, 0);
            if (st == VR_OK)
                st = vr_hp_total(hp[kind], &total);
            VR_EXPECT(st == VR_OK && total == 0, "%s: no cells: status %d, total %u",
                      kind ? "vec4" : "plain", (int)st, total);
        }
    }
done:
    vr_hp_destroy(hp[0]);
    vr_hp_destroy(hp[1]);
    cudaFree(d_in); /* teardown */
    cudaFree(d_out);
    cudaFree(d_rank);
    free(in);
    free(counts);
    free(want);
    free(want_rank);
    free(got);
    free(got_rank);
    free(levels);
    free(got_levels);
    return VR_TEST_RESULT();
}

VR_TEST(test_compact_hp, "gpu/compact-hp")
{
    static const uint32_t sizes[] = {1,     5,     63,    64,     65,       4095,
                                     4096,  4097,  16385, 100003, (1u << 20) + 3,
                                     (1u << 24) + 1};
    return vr_test_hp(sizes, sizeof sizes / sizeof sizes[0]);
}

VR_TEST(test_compact_hp_small, "gpu-small/compact-hp")
{
    static const uint32_t sizes[] = {1, 5, 4097, 16385};
    return vr_test_hp(sizes, sizeof sizes / sizeof sizes[0]);
}
