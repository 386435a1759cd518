/* test_compact.c - the CPU references of pipeline/compact: the test input's mix and its inverse,
 * the reference compaction on hand cases, the checker of the three order promises (exact,
 * block runs, warp runs) on outputs made to pass and to fail, the HistoPyramid layout and
 * levels by hand (plain and vec4), HistoPyramid compaction equal to the plain compaction (its
 * traversal order is the input order) and HistoPyramid expansion equal to the nested-loop
 * expansion for many sizes, count mixes and capacities, the prefix of a cell read from the
 * pyramid (the GPU compaction's per-tile offset), and the overflow of counts.
 * Group "compact/"; the GPU twins are checked against these in tests/test_compact_gpu.cu.
 */
#include "tests/test.h"

#include <stdlib.h>
#include <string.h>

#include "pipeline/compact/compact.h"
#include "pipeline/compact/histopyramid.h"
#include "tests/test_helpers.h"

/* ---- shared with tests/test_compact_gpu.cu ------------------------------------------------- */

const uint32_t vr_test_compact_percents[VR_TEST_COMPACT_PERCENTS] = {0, 1, 50, 99, 100};

uint64_t vr_test_compact_threshold(uint32_t percent)
{
    return ((uint64_t)percent << 32) / 100;
}

void vr_test_compact_counts(uint32_t *counts, uint32_t n, uint32_t seed, uint32_t mix)
{
    for (uint32_t i = 0; i < n; ++i) {
        const uint32_t h = vr_compact_mix(i, seed);
        switch (mix) {
        case 0: /* mostly small, a few zeros */
            counts[i] = h % 5;
            break;
        case 1: /* sparse: one cell in 64 has outputs, some of them many */
            counts[i] = h % 64 == 0 ? 1 + (h >> 8) % 300 : 0;
            break;
        case 2: /* every cell exactly one output */
            counts[i] = 1;
            break;
        default: /* none */
            counts[i] = 0;
            break;
        }
    }
}

/* ---- input and reference ------------------------------------------------------------------- */

VR_TEST(test_compact_mix, "compact/mix")
{
    static const uint32_t seeds[] = {0, 1, 7, 0xdeadbeefu};
    for (size_t s = 0; s < sizeof seeds / sizeof seeds[0]; ++s)
        for (uint64_t i = 0; i < (1ull << 32); i += 65521) /* a prime stride over all of u32 */
            if (vr_compact_unmix(vr_compact_mix((uint32_t)i, seeds[s]), seeds[s]) != i) {
                VR_EXPECT_EQ(vr_compact_unmix(vr_compact_mix((uint32_t)i, seeds[s]), seeds[s]),
                             i);
                break;
            }
    /* values of consecutive indices are spread: about half of 100k below 2^31 */
    uint32_t below = 0;
    for (uint32_t i = 0; i < 100000; ++i)
        below += vr_compact_mix(i, 1) < 0x80000000u;
    VR_EXPECT(below > 49000 && below < 51000, "%u of 100000 below 2^31", below);
    return VR_TEST_RESULT();
}

VR_TEST(test_compact_ref, "compact/ref")
{
    const uint32_t in[6] = {5, 1, 7, 2, 9, 6};
    uint32_t out[6];
    VR_EXPECT_EQ(vr_compact_ref(out, in, 6, 6), 3);
    VR_EXPECT(out[0] == 5 && out[1] == 1 && out[2] == 2, "got %u %u %u", out[0], out[1], out[2]);
    VR_EXPECT_EQ(vr_compact_ref(out, in, 6, 0), 0);
    VR_EXPECT_EQ(vr_compact_ref(out, in, 0, 100), 0);
    VR_EXPECT_EQ(vr_compact_ref(out, in, 6, 1ull << 32), 6);
    VR_EXPECT(!memcmp(out, in, sizeof in), "100%% keeps the input");
    const uint32_t top[2] = {0xffffffffu, 0};
    VR_EXPECT_EQ(vr_compact_ref(out, top, 2, 0xffffffffu), 1); /* 2^32 - 1 is not below it */
    VR_EXPECT_EQ(vr_compact_ref(out, top, 2, 1ull << 32), 2);
    VR_EXPECT_EQ(vr_test_compact_threshold(0), 0);
    VR_EXPECT_EQ(vr_test_compact_threshold(100), 1ull << 32);
    VR_EXPECT_EQ(vr_test_compact_threshold(50), 1ull << 31);
    return VR_TEST_RESULT();
}

/* ---- the checker --------------------------------------------------------------------------- */

/* Reverses the order of the runs of `o` in want[0..m) into got. */
static void vr_reverse_runs(uint32_t *got, const uint32_t *want, uint32_t m, uint32_t seed,
                            vr_compact_order o)
{
    uint32_t end = m, at = 0;
    while (end > 0) {
        uint32_t start = end - 1;
        const uint64_t run = vr_compact_run_of(o, vr_compact_unmix(want[start], seed));
        while (start > 0 && vr_compact_run_of(o, vr_compact_unmix(want[start - 1], seed)) == run)
            --start;
        memcpy(got + at, want + start, (end - start) * sizeof *got);
        at += end - start;
        end = start;
    }
}

VR_TEST(test_compact_check, "compact/check")
{
    const uint32_t n = 20000, seed = 3;
    const uint64_t thr = vr_test_compact_threshold(50);
    uint32_t *in = malloc(n * sizeof *in), *want = malloc(n * sizeof *want),
             *got = malloc(n * sizeof *got);
    if (!in || !want || !got) {
        VR_EXPECT(0, "out of memory");
        goto done;
    }
    vr_compact_input(in, n, seed);
    const uint32_t m = vr_compact_ref(want, in, n, thr);
    char msg[256];
#define CHECK(count, o) vr_compact_check(got, (count), want, m, in, n, thr, seed, (o), msg, sizeof msg)
    memcpy(got, want, m * sizeof *got);
    VR_EXPECT(CHECK(m, VR_COMPACT_ORDER_EXACT) == 0, "exact: %s", msg);
    VR_EXPECT(CHECK(m, VR_COMPACT_ORDER_BLOCK) == 0, "exact as block: %s", msg);
    VR_EXPECT(CHECK(m, VR_COMPACT_ORDER_WARP) == 0, "exact as warp: %s", msg);
    VR_EXPECT(CHECK(m - 1, VR_COMPACT_ORDER_EXACT) != 0, "one short passed");
    VR_EXPECT(CHECK(m - 1, VR_COMPACT_ORDER_BLOCK) != 0, "one short passed as block");
    /* tiles in reverse order: block and warp runs hold, exact order does not */
    vr_reverse_runs(got, want, m, seed, VR_COMPACT_ORDER_BLOCK);
    VR_EXPECT(CHECK(m, VR_COMPACT_ORDER_BLOCK) == 0, "block runs reversed: %s", msg);
    VR_EXPECT(CHECK(m, VR_COMPACT_ORDER_WARP) == 0, "block runs reversed as warp: %s", msg);
    VR_EXPECT(CHECK(m, VR_COMPACT_ORDER_EXACT) != 0, "block runs reversed passed as exact");
    /* warp runs in reverse order: not block runs */
    vr_reverse_runs(got, want, m, seed, VR_COMPACT_ORDER_WARP);
    VR_EXPECT(CHECK(m, VR_COMPACT_ORDER_WARP) == 0, "warp runs reversed: %s", msg);
    VR_EXPECT(CHECK(m, VR_COMPACT_ORDER_BLOCK) != 0, "warp runs reversed passed as block");
    /* two elements of one warp run swapped */
    memcpy(got, want, m * sizeof *got);
    uint32_t t = got[10];
    got[10] = got[11], got[11] = t;
    VR_EXPECT(CHECK(m, VR_COMPACT_ORDER_WARP) != 0, "swap in a run passed as warp");
    /* a value that is no kept element, a duplicate (one element missing) */
    memcpy(got, want, m * sizeof *got);
    got[m / 2] = 0xffffffffu;
    VR_EXPECT(CHECK(m, VR_COMPACT_ORDER_BLOCK) != 0, "poison passed as block");
    got[m / 2] = got[m / 2 - 1];
    VR_EXPECT(CHECK(m, VR_COMPACT_ORDER_BLOCK) != 0, "duplicate passed as block");
    /* a block run split in two: its second half moved to the end */
    vr_reverse_runs(got, want, m, seed, VR_COMPACT_ORDER_BLOCK);
    VR_EXPECT(CHECK(m, VR_COMPACT_ORDER_BLOCK) == 0, "%s", msg);
    uint32_t first_run_len = 0;
    while (first_run_len < m && vr_compact_run_of(VR_COMPACT_ORDER_BLOCK,
                                                  vr_compact_unmix(got[first_run_len], seed)) ==
                                    vr_compact_run_of(VR_COMPACT_ORDER_BLOCK,
                                                      vr_compact_unmix(got[0], seed)))
        ++first_run_len;
    memmove(got, got + 1, (m - 1) * sizeof *got); /* its first element to the end */
    got[m - 1] = want[m - first_run_len];
    VR_EXPECT(CHECK(m, VR_COMPACT_ORDER_BLOCK) != 0, "split run passed as block");
#undef CHECK
    VR_EXPECT_EQ(vr_compact_run_of(VR_COMPACT_ORDER_BLOCK, 4095), 0);
    VR_EXPECT_EQ(vr_compact_run_of(VR_COMPACT_ORDER_BLOCK, 4096), 1);
    VR_EXPECT_EQ(vr_compact_run_of(VR_COMPACT_ORDER_WARP, 127), 0);
    VR_EXPECT_EQ(vr_compact_run_of(VR_COMPACT_ORDER_WARP, 128), 1);
    VR_EXPECT_EQ(vr_compact_run_of(VR_COMPACT_ORDER_EXACT, 1u << 30), 0);
done:
    free(in);
    free(want);
    free(got);
    return VR_TEST_RESULT();
}

/* ---- HistoPyramid -------------------------------------------------------------------------- */

VR_TEST(test_compact_hp_layout, "compact/hp-layout")
{
    vr_hp_layout l;
    vr_hp_layout_make(&l, VR_HP_PLAIN, 0);
    VR_EXPECT(l.levels == 0 && l.words == 0, "n 0: %u levels, %llu words", l.levels,
              (unsigned long long)l.words);
    vr_hp_layout_make(&l, VR_HP_PLAIN, 1);
    VR_EXPECT(l.levels == 1 && l.cells[1] == 1 && l.words == 4, "n 1: %u levels", l.levels);
    vr_hp_layout_make(&l, VR_HP_PLAIN, 9);
    VR_EXPECT(l.levels == 2 && l.cells[1] == 3 && l.cells[2] == 1 && l.offset[2] == 4 &&
                  l.words == 8, "n 9 plain: %u levels, %llu words", l.levels,
              (unsigned long long)l.words);
    vr_hp_layout_make(&l, VR_HP_VEC4, 9);
    VR_EXPECT(l.levels == 2 && l.offset[2] == 12 && l.words == 16, "n 9 vec4: %llu words",
              (unsigned long long)l.words);
    vr_hp_layout_make(&l, VR_HP_PLAIN, 4096);
    VR_EXPECT_EQ(l.levels, 6);
    vr_hp_layout_make(&l, VR_HP_PLAIN, 4097);
    VR_EXPECT_EQ(l.levels, 7);
    vr_hp_layout_make(&l, VR_HP_VEC4, 0xffffffffu);
    VR_EXPECT(l.levels == 16 && l.cells[16] == 1, "2^32 - 1: %u levels", l.levels);
    return VR_TEST_RESULT();
}

VR_TEST(test_compact_hp_hand, "compact/hp-hand")
{
    /* 9 cells, 5 active: 0, 2, 3, 7, 8 */
    const uint32_t counts[9] = {1, 0, 1, 1, 0, 0, 0, 1, 1};
    const uint32_t plain[8] = {3, 1, 1, 0, 5, 0, 0, 0};
    const uint32_t vec4[16] = {1, 1, 2, 3, 0, 0, 0, 1, 1, 1, 1, 1, 3, 4, 5, 5};
    const uint32_t cells[5] = {0, 2, 3, 7, 8};
    for (int kind = 0; kind < 2; ++kind) {
        vr_hp_layout l;
        vr_hp_layout_make(&l, (vr_hp_kind)kind, 9);
        uint32_t levels[16];
        VR_EXPECT_EQ(vr_hp_build_ref(levels, &l, counts, NULL, 0), 0);
        VR_EXPECT(!memcmp(levels, kind ? vec4 : plain, l.words * 4), "%s levels differ",
                  kind ? "vec4" : "plain");
        VR_EXPECT_EQ(vr_hp_total_ref(levels, &l), 5);
        for (uint32_t k = 0; k < 5; ++k) {
            uint32_t cell, rank;
            vr_hp_find_ref(&cell, &rank, levels, &l, counts, NULL, 0, k);
            VR_EXPECT(cell == cells[k] && rank == 0, "%s output %u: cell %u rank %u",
                      kind ? "vec4" : "plain", k, cell, rank);
        }
    }
    /* expansion by hand: counts 2, 0, 3 */
    const uint32_t c3[3] = {2, 0, 3};
    uint32_t cell[5], rank[5], total = 0;
    for (int kind = 0; kind < 2; ++kind) {
        VR_EXPECT(vr_hp_expand_ref(cell, rank, 5, &total, c3, 3, (vr_hp_kind)kind) == VR_OK,
                  "%s", vr_last_error());
        VR_EXPECT_EQ(total, 5);
        VR_EXPECT(cell[0] == 0 && rank[0] == 0 && cell[1] == 0 && rank[1] == 1 && cell[2] == 2 &&
                      rank[2] == 0 && cell[3] == 2 && rank[3] == 1 && cell[4] == 2 &&
                      rank[4] == 2, "expansion of 2, 0, 3 by %s", kind ? "vec4" : "plain");
    }
    return VR_TEST_RESULT();
}

/* Sizes around the tile, stage and section boundaries. */
static const uint32_t vr_hp_sizes[] = {1,    2,    3,    4,    5,    15,    16,    17,    63,
                                       64,   65,   255,  256,  257,  1000,  4095,  4096,  4097,
                                       16383, 16384, 16385, 100003, 262145};

VR_TEST(test_compact_hp_order, "compact/hp-compact")
{
    const uint32_t most = 262145;
    uint32_t *in = malloc(most * 4), *want = malloc(most * 4), *got = malloc(most * 4);
    if (!in || !want || !got) {
        VR_EXPECT(0, "out of memory");
        goto done;
    }
    for (size_t s = 0; s < sizeof vr_hp_sizes / sizeof vr_hp_sizes[0]; ++s) {
        const uint32_t n = vr_hp_sizes[s];
        vr_compact_input(in, n, (uint32_t)s);
        for (int p = 0; p < VR_TEST_COMPACT_PERCENTS; ++p) {
            const uint64_t thr = vr_test_compact_threshold(vr_test_compact_percents[p]);
            const uint32_t m = vr_compact_ref(want, in, n, thr);
            for (int kind = 0; kind < 2; ++kind) {
                uint32_t count = 0;
                memset(got, 0xff, (size_t)n * 4);
                VR_EXPECT(vr_hp_compact_ref(got, &count, in, n, thr, (vr_hp_kind)kind) == VR_OK,
                          "%s", vr_last_error());
                VR_EXPECT(count == m && !memcmp(got, want, (size_t)m * 4),
                          "n %u, %u%%, %s: %u outputs, want %u, or they differ", n,
                          vr_test_compact_percents[p], kind ? "vec4" : "plain", count, m);
            }
        }
    }
done:
    free(in);
    free(want);
    free(got);
    return VR_TEST_RESULT();
}

/* The prefix from the pyramid alone (vr_hp_prefix_ref, what the GPU compaction reads for each
 * tile of 4096 cells) equals the outputs of the cells before c: every c for the small sizes,
 * every tile start and a stride of 97 for the large ones; flags at each selectivity and counts. */
VR_TEST(test_compact_hp_prefix, "compact/hp-prefix")
{
    const uint32_t most = 262145;
    uint32_t *in = malloc(most * 4), *counts = malloc(most * 4);
    vr_hp_layout l;
    vr_hp_layout_make(&l, VR_HP_VEC4, most);
    uint32_t *levels = malloc(l.words * 4 + 16);
    if (!in || !counts || !levels) {
        VR_EXPECT(0, "out of memory");
        goto done;
    }
    for (size_t s = 0; s < sizeof vr_hp_sizes / sizeof vr_hp_sizes[0]; ++s) {
        const uint32_t n = vr_hp_sizes[s];
        vr_compact_input(in, n, (uint32_t)s);
        vr_test_compact_counts(counts, n, (uint32_t)s, 1);
        for (int p = 0; p <= VR_TEST_COMPACT_PERCENTS; ++p) /* the last: counts (sparse mix) */
            for (int kind = 0; kind < 2; ++kind) {
                const int flags = p < VR_TEST_COMPACT_PERCENTS;
                const uint64_t thr = flags ? vr_test_compact_threshold(vr_test_compact_percents[p]) : 0;
                vr_hp_layout_make(&l, (vr_hp_kind)kind, n);
                vr_hp_build_ref(levels, &l, flags ? NULL : counts, flags ? in : NULL, thr);
                uint64_t before = 0; /* outputs of cells 0 .. c - 1 */
                for (uint32_t c = 0; c < n; ++c) {
                    if (n <= 4097 || c % 4096 == 0 || c % 97 == 0) {
                        const uint64_t got = vr_hp_prefix_ref(levels, &l, flags ? NULL : counts,
                                                              flags ? in : NULL, thr, c);
                        if (got != before) {
                            VR_EXPECT(0, "n %u, %s, %s: prefix of cell %u is %llu, want %llu", n,
                                      flags ? "flags" : "counts", kind ? "vec4" : "plain", c,
                                      (unsigned long long)got, (unsigned long long)before);
                            break;
                        }
                    }
                    before += flags ? in[c] < thr : counts[c];
                }
            }
    }
done:
    free(in);
    free(counts);
    free(levels);
    return VR_TEST_RESULT();
}

VR_TEST(test_compact_hp_expand, "compact/hp-expand")
{
    const uint32_t most = 262145, cap = 300 * most / 64 + 4 * most;
    uint32_t *counts = malloc(most * 4), *cell = malloc((size_t)cap * 4),
             *rank = malloc((size_t)cap * 4), *want_cell = malloc((size_t)cap * 4),
             *want_rank = malloc((size_t)cap * 4);
    if (!counts || !cell || !rank || !want_cell || !want_rank) {
        VR_EXPECT(0, "out of memory");
        goto done;
    }
    for (size_t s = 0; s < sizeof vr_hp_sizes / sizeof vr_hp_sizes[0]; ++s)
        for (uint32_t mix = 0; mix < 4; ++mix) {
            const uint32_t n = vr_hp_sizes[s];
            vr_test_compact_counts(counts, n, (uint32_t)s, mix);
            const uint64_t total = vr_expand_ref(want_cell, want_rank, cap, counts, n);
            VR_EXPECT(total <= cap, "n %u mix %u: %llu outputs", n, mix,
                      (unsigned long long)total);
            /* the whole list, then one cut short */
            const uint32_t caps[2] = {(uint32_t)total, (uint32_t)(total / 3)};
            for (int kind = 0; kind < 2; ++kind)
                for (int c = 0; c < 2; ++c) {
                    uint32_t got_total = 0;
                    memset(cell, 0xff, (size_t)(total + 1) * 4);
                    VR_EXPECT(vr_hp_expand_ref(cell, rank, caps[c], &got_total, counts, n,
                                               (vr_hp_kind)kind) == VR_OK, "%s", vr_last_error());
                    VR_EXPECT(got_total == total, "n %u mix %u %s: total %u, want %llu", n, mix,
                              kind ? "vec4" : "plain", got_total, (unsigned long long)total);
                    VR_EXPECT(!memcmp(cell, want_cell, (size_t)caps[c] * 4) &&
                                  !memcmp(rank, want_rank, (size_t)caps[c] * 4) &&
                                  cell[caps[c]] == 0xffffffffu,
                              "n %u mix %u %s capacity %u: outputs differ", n, mix,
                              kind ? "vec4" : "plain", caps[c]);
                }
        }
done:
    free(counts);
    free(cell);
    free(rank);
    free(want_cell);
    free(want_rank);
    return VR_TEST_RESULT();
}

VR_TEST(test_compact_hp_overflow, "compact/hp-overflow")
{
    const uint32_t big[2] = {0x80000000u, 0x80000000u}, top[1] = {0xffffffffu};
    uint32_t cell[1], total = 0;
    for (int kind = 0; kind < 2; ++kind) {
        VR_EXPECT(vr_hp_expand_ref(cell, NULL, 1, &total, big, 2, (vr_hp_kind)kind) ==
                      VR_ERR_OVERFLOW, "2 x 2^31 counts did not overflow");
        VR_EXPECT(vr_hp_expand_ref(cell, NULL, 1, &total, top, 1, (vr_hp_kind)kind) == VR_OK,
                  "%s", vr_last_error());
        VR_EXPECT_EQ(total, 0xffffffffu);
    }
    return VR_TEST_RESULT();
}
