/* fuzz_gts.c - libFuzzer target for the GTS file reader and the CPU decoders
 * (pipeline/gts_format.c, gts_decode_ref.c, simple9.c). Each input is tried twice: as is
 * (exercising the size and checksum checks) and with its checksum trailer recomputed, so
 * mutations reach the structural validation and the decoders. Invariants: only VR_OK or
 * VR_ERR_FORMAT, the sequential, scan- and tiled-formulation decoders agree on acceptance and
 * output, and accepted triangles index existing vertices. Built only with clang -fsanitize=fuzzer:
 *   fuzz_gts -max_len=65536 CORPUS/   (seed: `vreuse compress sphere:200 -o CORPUS/s.gts`)
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/gts/gts.h"
#include "pipeline/gts/gts_batch.h"

#define VR_FUZZ_MAX_TRIANGLES (1u << 20) /* decode only what fits the fuzzer's memory limit */

/* Per-batch decoding (gts_batch.h) of an accepted stream: batches of 1 + size % 97 triangles
 * must give `want` without error bits; then one seed field damaged with input bytes must be
 * flagged by some batch or change nothing. `out` is scratch of 3 |T| words. */
static void check_batches(const vr_gts *g, const uint32_t *want, uint32_t *out,
                          const uint8_t *data, size_t size)
{
    const uint32_t n = g->strip_triangle_count, len = 1 + (uint32_t)(size % 97);
    const uint32_t count = (n + len - 1) / len;
    uint32_t *starts = malloc((size_t)count * sizeof *starts);
    vr_gts_seed *seeds = malloc((size_t)count * sizeof *seeds);
    if (!starts || !seeds) {
        free(starts);
        free(seeds);
        return;
    }
    for (uint32_t b = 0; b < count; ++b)
        starts[b] = b * len;
    if (vr_gts_batch_seeds(seeds, g, starts, count) != VR_OK)
        abort(); /* the stream decoded: its seeds must exist */
    vr_gts_batch_source src;
    vr_gts_batch_source_host(&src, g);
    for (int damaged = 0; damaged < 2; ++damaged) {
        if (damaged) { /* xor one of the 10 seed words of one batch with input bytes */
            uint32_t x = 0;
            memcpy(&x, data, size < 4 ? size : 4);
            uint32_t *words = (uint32_t *)&seeds[(x >> 8) % count];
            words[(x & 0xff) % (sizeof(vr_gts_seed) / 4)] ^= x | 1u;
        }
        uint32_t err = 0;
        for (uint32_t b = 0; b < count; ++b) {
            const uint32_t t0 = starts[b], t1 = b + 1 < count ? starts[b + 1] : n;
            err |= vr_gts_decode_batch_ref(out + 3 * (size_t)t0, &src, &seeds[b],
                                           b + 1 < count ? &seeds[b + 1] : NULL, t0, t1 - t0);
        }
        const int same = !memcmp(out, want, 3 * (size_t)n * sizeof *out);
        if (damaged ? !err && !same : err || !same)
            abort();
    }
    free(starts);
    free(seeds);
}

static void check_stream(const uint8_t *data, size_t size)
{
    vr_gts g;
    const vr_status s = vr_gts_read_memory(&g, data, size, "fuzz");
    if (s != VR_OK) {
        if (s != VR_ERR_FORMAT)
            abort();
        return;
    }
    if (g.strip_triangle_count <= VR_FUZZ_MAX_TRIANGLES) {
        const size_t words = 3 * (size_t)g.strip_triangle_count;
        uint32_t *a = malloc(words * sizeof *a), *b = malloc(words * sizeof *b);
        uint32_t *c = malloc(words * sizeof *c);
        if (a && b && c) {
            const vr_status sa = vr_gts_decode_ref(a, &g), sb = vr_gts_decode_scan_ref(b, &g);
            const vr_status sc = vr_gts_decode_tiled_ref(c, &g);
            if ((sa != VR_OK && sa != VR_ERR_FORMAT) || sa != sb || sb != sc)
                abort();
            if (sa == VR_OK) {
                if (memcmp(a, b, words * sizeof *a) || memcmp(b, c, words * sizeof *b))
                    abort();
                for (size_t k = 0; k < words; ++k)
                    if (a[k] >= g.referenced_count)
                        abort();
                check_batches(&g, a, b, data, size);
            }
        }
        free(a);
        free(b);
        free(c);
    }
    vr_gts_free(&g);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    check_stream(data, size);
    if (size < 8)
        return 0;
    uint8_t *copy = malloc(size);
    if (!copy)
        return 0;
    memcpy(copy, data, size);
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a 64, as gts_format.c */
    for (size_t i = 0; i < size - 8; ++i)
        h = (h ^ copy[i]) * 0x100000001b3ull;
    for (int k = 0; k < 8; ++k)
        copy[size - 8 + k] = (uint8_t)(h >> (8 * k));
    check_stream(copy, size);
    free(copy);
    return 0;
}
