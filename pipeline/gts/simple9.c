/* simple9.c - Simple-9 word-aligned codes (Anh & Moffat 2005; Meyer et al. 2012, Sec. 6):
 * 32-bit words of a 4-bit selector and 28 data bits split into equal codes. Two packers: the
 * paper's greedy one and an optimal one (fewest words, dynamic programming over the next word's
 * selector); both produce exact streams (no padding codes) that the same decoders read.
 * Try: `vreuse_tests gts/simple9`.
 */
#include "pipeline/gts/gts.h"
#include "pipeline/gts/gts_math.h"

#include <assert.h>
#include <stdlib.h>

uint32_t vr_s9_bits(uint32_t selector) { return vr_gts_s9_bits(selector); }
uint32_t vr_s9_count(uint32_t selector) { return vr_gts_s9_count(selector); }

static inline uint32_t value_bits(uint32_t value)
{
    return value ? 32u - (uint32_t)__builtin_clz(value) : 0u;
}

uint32_t vr_s9_value_bits(uint32_t value) { return value_bits(value); }

static uint32_t pack_word(uint32_t selector, const uint32_t *values)
{
    const uint32_t bits = vr_gts_s9_bits(selector), count = vr_gts_s9_count(selector);
    uint32_t w = selector << 28;
    for (uint32_t k = 0; k < count; ++k)
        w |= values[k] << (k * bits);
    return w;
}

static size_t encode_greedy(uint32_t *dst, const uint32_t *values, size_t count)
{
    size_t words = 0;
    for (size_t k = 0; k < count;) {
        /* the most codes per word whose codes all fit and that does not run past the end */
        for (uint32_t s = 0; s <= 8; ++s) {
            const uint32_t n = vr_gts_s9_count(s), bits = vr_gts_s9_bits(s);
            if (k + n > count)
                continue;
            uint32_t j = 0;
            while (j < n && value_bits(values[k + j]) <= bits)
                ++j;
            if (j == n) {
                dst[words++] = pack_word(s, values + k);
                k += n;
                break;
            }
        }
    }
    return words;
}

/* cost[k] = fewest words for values[k..count); a word of selector s starting at k fits when none
 * of its vr_s9_count(s) codes needs more than vr_s9_bits(s) bits, i.e. when it ends by next[s],
 * the first index >= k whose value needs more (kept per selector while k goes down: O(9) per
 * value). Words are tried shortest first and the first minimum wins. */
static vr_status encode_optimal(uint32_t *dst, size_t *word_count, const uint32_t *values,
                                size_t count)
{
    uint32_t *cost = malloc((count + 1) * sizeof *cost);
    uint8_t *choice = malloc(count ? count : 1);
    if (!cost || !choice) {
        free(cost);
        free(choice);
        return VR_ERROR(VR_ERR_OOM, "simple9: %zu values: out of memory for the packer", count);
    }
    uint32_t bits[9];
    size_t len[9], next[9];
    for (uint32_t s = 0; s <= 8; ++s)
        bits[s] = vr_gts_s9_bits(s), len[s] = vr_gts_s9_count(s), next[s] = count;
    cost[count] = 0;
    for (size_t k = count; k-- > 0;) {
        const uint32_t b = value_bits(values[k]);
        for (uint32_t s = 0; s < 8; ++s) /* selector 8 (28 bits) holds any value */
            if (b > bits[s])
                next[s] = k;
        uint32_t best = UINT32_MAX, best_sel = 8;
        for (uint32_t s = 9; s-- > 0;) {
            const size_t end = k + len[s];
            if (end > count || end > next[s])
                break; /* longer words need fewer bits per code: none fits any more */
            if (1 + cost[end] < best)
                best = 1 + cost[end], best_sel = s;
        }
        cost[k] = best;
        choice[k] = (uint8_t)best_sel;
    }
    size_t words = 0;
    for (size_t k = 0; k < count; k += vr_gts_s9_count(choice[k]))
        dst[words++] = pack_word(choice[k], values + k);
    free(cost);
    free(choice);
    *word_count = words;
    return VR_OK;
}

vr_status vr_s9_encode(uint32_t *dst, size_t *word_count, const uint32_t *values, size_t count,
                       vr_gts_packing packing)
{
    assert(word_count && (dst || count == 0) && (values || count == 0));
    for (size_t k = 0; k < count; ++k)
        if (values[k] >> 28)
            return VR_ERROR(VR_ERR_OVERFLOW,
                            "simple9: value %zu is %u, needs %u bits; a code holds at most 28",
                            k, values[k], vr_s9_value_bits(values[k]));
    if (packing == VR_GTS_PACK_GREEDY) {
        *word_count = encode_greedy(dst, values, count);
        return VR_OK;
    }
    return encode_optimal(dst, word_count, values, count);
}

vr_status vr_s9_word_check(uint32_t word, size_t index, const char *what)
{
    const uint32_t sel = word >> 28, bits = vr_gts_s9_bits(sel), n = vr_gts_s9_count(sel);
    if (!bits)
        return VR_ERROR(VR_ERR_FORMAT, "%s: Simple-9 word %zu (0x%08x) has selector %u; valid "
                        "selectors are 0..8", what, index, word, sel);
    if (n * bits < 28 && (word & 0x0fffffffu) >> (n * bits))
        return VR_ERROR(VR_ERR_FORMAT, "%s: Simple-9 word %zu (0x%08x) has nonzero padding bits "
                        "above its %u codes of %u bits", what, index, word, n, bits);
    return VR_OK;
}

vr_status vr_s9_decode(uint32_t *dst, size_t count, const uint32_t *words, size_t word_count,
                       const char *what)
{
    assert((dst || count == 0) && (words || word_count == 0) && what);
    size_t k = 0;
    for (size_t l = 0; l < word_count; ++l) {
        const uint32_t w = words[l], bits = vr_gts_s9_bits(w >> 28), n = vr_gts_s9_count(w >> 28);
        const vr_status s = vr_s9_word_check(w, l, what);
        if (s)
            return s;
        if (n > count - k)
            return VR_ERROR(VR_ERR_FORMAT, "%s: Simple-9 word %zu holds %u codes but only %zu of "
                            "the %zu expected remain", what, l, n, count - k, count);
        for (uint32_t j = 0; j < n; ++j)
            dst[k++] = vr_gts_s9_code(w, j, bits);
    }
    if (k != count)
        return VR_ERROR(VR_ERR_FORMAT, "%s: Simple-9 words hold %zu codes, expected %zu", what,
                        k, count);
    return VR_OK;
}
