/* compact_ref.c - the CPU side of compact.h: method names and order promises, the state's
 * sizes, the test input (a bijective mix of the index), the reference compaction (a plain
 * loop) and the checker of GPU outputs against each method's order promise; in a build without
 * CUDA, stubs of the GPU half that return VR_ERR_NO_DEVICE. The GPU twin is compact.cu.
 * Try: `vreuse_tests compact/`.
 */
#include "pipeline/compact/compact.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>

const char *const vr_compact_method_names[] = {"ordered", "collate", "atomic",      "hp",
                                               "hp4",     "cub-if",  "cub-flagged", "scan",
                                               NULL};

vr_compact_order vr_compact_method_order(vr_compact_method m)
{
    return m == VR_COMPACT_COLLATE  ? VR_COMPACT_ORDER_BLOCK
           : m == VR_COMPACT_ATOMIC ? VR_COMPACT_ORDER_WARP
                                    : VR_COMPACT_ORDER_EXACT;
}

const char *vr_compact_order_name(vr_compact_order o)
{
    return o == VR_COMPACT_ORDER_BLOCK ? "block" : o == VR_COMPACT_ORDER_WARP ? "warp" : "exact";
}

uint32_t vr_compact_sections(uint32_t blocks)
{
    return (uint32_t)(((uint64_t)blocks + VR_COMPACT_SECTION - 1) >> VR_COMPACT_SECTION_LOG2);
}

size_t vr_compact_state_bytes(uint32_t blocks)
{
    return VR_COMPACT_COUNTER_WORDS * sizeof(uint32_t) +
           ((size_t)blocks + vr_compact_sections(blocks)) * sizeof(uint64_t);
}

/* ---- input --------------------------------------------------------------------------------- */

/* lowbias32 (C. Wellons, hash-prospector): xorshift-multiply rounds, each invertible. */
uint32_t vr_compact_mix(uint32_t i, uint32_t seed)
{
    uint32_t x = i + seed * 0x9e3779b9u;
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    return x;
}

uint32_t vr_compact_unmix(uint32_t v, uint32_t seed)
{
    uint32_t x = v;
    x ^= x >> 16;
    x *= 0x43021123u; /* inverse of 0x846ca68b mod 2^32 */
    x ^= x >> 15 ^ x >> 30;
    x *= 0x1d69e2a5u; /* inverse of 0x7feb352d */
    x ^= x >> 16;
    return x - seed * 0x9e3779b9u;
}

void vr_compact_input(uint32_t *in, uint32_t n, uint32_t seed)
{
    for (uint32_t i = 0; i < n; ++i)
        in[i] = vr_compact_mix(i, seed);
}

/* ---- the reference ------------------------------------------------------------------------- */

uint32_t vr_compact_ref(uint32_t *out, const uint32_t *in, uint32_t n, uint64_t threshold)
{
    uint32_t m = 0;
    for (uint32_t i = 0; i < n; ++i)
        if (in[i] < threshold)
            out[m++] = in[i];
    return m;
}

/* log2 of a run's length: runs are aligned ranges of the input */
static uint32_t vr_run_log2(vr_compact_order o)
{
    return o == VR_COMPACT_ORDER_BLOCK ? VR_COMPACT_TILE_LOG2 : VR_COMPACT_WARP_RUN_LOG2;
}

uint64_t vr_compact_run_of(vr_compact_order o, uint32_t i)
{
    return o == VR_COMPACT_ORDER_EXACT ? 0 : (uint64_t)i >> vr_run_log2(o);
}

/* The first kept element of in[from..to), or `to`. */
static uint64_t vr_next_kept(const uint32_t *in, uint64_t from, uint64_t to, uint64_t threshold)
{
    while (from < to && !(in[from] < threshold))
        ++from;
    return from;
}

int vr_compact_check(const uint32_t *got, uint32_t got_count, const uint32_t *want,
                     uint32_t want_count, const uint32_t *in, uint32_t n, uint64_t threshold,
                     uint32_t seed, vr_compact_order o, char *msg, size_t msg_size)
{
    if (got_count != want_count) {
        snprintf(msg, msg_size, "count %u, expected %u", got_count, want_count);
        return -1;
    }
    if (o == VR_COMPACT_ORDER_EXACT) {
        for (uint32_t k = 0; k < got_count; ++k)
            if (got[k] != want[k]) {
                snprintf(msg, msg_size, "output %u is %u, expected %u (input element %u)", k,
                         got[k], want[k], vr_compact_unmix(want[k], seed));
                return -1;
            }
        return 0;
    }
    /* runs: each value names its input element (vr_compact_unmix); a run must start at its
     * first kept element, continue with the next kept one each time, end at its last, and
     * occur once; with the count equal, every run is then there */
    const uint32_t shift = vr_run_log2(o);
    const uint64_t runs = ((uint64_t)n >> shift) + 1;
    unsigned char *seen = calloc((size_t)(runs + 7) / 8, 1);
    if (!seen) {
        snprintf(msg, msg_size, "out of host memory for the check");
        return -1;
    }
    int bad = 0;
    uint64_t prev = 0;
    for (uint32_t p = 0; p < got_count && !bad; ++p) {
        const uint32_t v = got[p], i = vr_compact_unmix(v, seed);
        if (i >= n || in[i] != v || !(v < threshold)) {
            snprintf(msg, msg_size, "output %u is %u, which is no kept input element", p, v);
            bad = 1;
            break;
        }
        const uint64_t run = (uint64_t)i >> shift, start = run << shift;
        const uint64_t end = start + ((uint64_t)1 << shift) < n ? start + ((uint64_t)1 << shift) : n;
        uint64_t j;
        if (p > 0 && (prev >> shift) == run) {
            if ((j = vr_next_kept(in, prev + 1, end, threshold)) != i) {
                snprintf(msg, msg_size, "output %u is element %u of %s run %llu, expected "
                         "element %llu after element %llu", p, i, vr_compact_order_name(o),
                         (unsigned long long)run, (unsigned long long)j,
                         (unsigned long long)prev);
                bad = 1;
            }
        } else {
            const uint64_t prev_end = ((prev >> shift) + 1) << shift;
            if (p > 0 && (j = vr_next_kept(in, prev + 1, prev_end < n ? prev_end : n,
                                           threshold)) < (prev_end < n ? prev_end : n)) {
                snprintf(msg, msg_size, "output %u: the run of element %llu ends before its "
                         "element %llu", p, (unsigned long long)prev, (unsigned long long)j);
                bad = 1;
            } else if (seen[run >> 3] >> (run & 7) & 1) {
                snprintf(msg, msg_size, "output %u: %s run %llu appears twice", p,
                         vr_compact_order_name(o), (unsigned long long)run);
                bad = 1;
            } else if ((j = vr_next_kept(in, start, end, threshold)) != i) {
                snprintf(msg, msg_size, "output %u: %s run %llu starts at element %u, not at "
                         "its first kept element %llu", p, vr_compact_order_name(o),
                         (unsigned long long)run, i, (unsigned long long)j);
                bad = 1;
            }
            seen[run >> 3] |= (unsigned char)(1u << (run & 7));
        }
        prev = i;
    }
    if (!bad && got_count > 0) {
        const uint64_t prev_end = ((prev >> shift) + 1) << shift, end = prev_end < n ? prev_end : n;
        const uint64_t j = vr_next_kept(in, prev + 1, end, threshold);
        if (j < end) {
            snprintf(msg, msg_size, "the last run ends at element %llu before its element %llu",
                     (unsigned long long)prev, (unsigned long long)j);
            bad = 1;
        }
    }
    free(seen);
    return bad ? -1 : 0;
}

/* ---- stubs of the GPU half when built without CUDA ------------------------------------------ */
#ifndef VR_HAVE_CUDA

size_t vr_compact_temp_bytes(uint32_t max_n)
{
    (void)max_n;
    return 0;
}

vr_status vr_compact_create(vr_compact_ctx **out, uint32_t max_n)
{
    (void)max_n;
    *out = NULL;
    return VR_ERROR(VR_ERR_NO_DEVICE, VR_NO_CUDA_BUILD);
}

void vr_compact_destroy(vr_compact_ctx *c)
{
    assert(!c);
    (void)c;
}

vr_status vr_compact_select(vr_compact_ctx *c, vr_compact_method m, uint32_t *d_out,
                            const uint32_t *d_in, uint32_t n, uint64_t threshold,
                            uint32_t *count, float *ms)
{
    (void)c, (void)m, (void)d_out, (void)d_in, (void)n, (void)threshold, (void)ms;
    *count = 0;
    return VR_ERROR(VR_ERR_NO_DEVICE, VR_NO_CUDA_BUILD);
}

vr_status vr_compact_select_async(vr_compact_ctx *c, vr_compact_method m, uint32_t *d_out,
                                  const uint32_t *d_in, uint32_t n, uint64_t threshold,
                                  void *stream, const uint32_t **d_count)
{
    (void)c, (void)m, (void)d_out, (void)d_in, (void)n, (void)threshold, (void)stream;
    *d_count = NULL;
    return VR_ERROR(VR_ERR_NO_DEVICE, VR_NO_CUDA_BUILD);
}

void vr_compact_set_delay(vr_compact_ctx *c, uint32_t first, uint32_t tickets, uint32_t ns)
{
    (void)c, (void)first, (void)tickets, (void)ns;
}

void vr_compact_set_blocks(vr_compact_ctx *c, uint32_t blocks)
{
    (void)c, (void)blocks;
}

vr_status vr_compact_buffer_alloc(uint32_t **d, size_t words, const char *what)
{
    (void)words, (void)what;
    *d = NULL;
    return VR_ERROR(VR_ERR_NO_DEVICE, VR_NO_CUDA_BUILD);
}

void vr_compact_buffer_free(uint32_t *d)
{
    assert(!d);
    (void)d;
}

vr_status vr_compact_buffer_upload(uint32_t *d, const uint32_t *h, size_t words)
{
    (void)d, (void)h, (void)words;
    return VR_ERROR(VR_ERR_NO_DEVICE, VR_NO_CUDA_BUILD);
}

vr_status vr_compact_buffer_download(uint32_t *h, const uint32_t *d, size_t words)
{
    (void)d, (void)h, (void)words;
    return VR_ERROR(VR_ERR_NO_DEVICE, VR_NO_CUDA_BUILD);
}

vr_status vr_compact_buffer_fill(uint32_t *d, size_t words, uint32_t value)
{
    (void)d, (void)words, (void)value;
    return VR_ERROR(VR_ERR_NO_DEVICE, VR_NO_CUDA_BUILD);
}

vr_status vr_compact_state_create(vr_compact_state **out, uint32_t max_blocks, void *stream)
{
    (void)max_blocks, (void)stream;
    *out = NULL;
    return VR_ERROR(VR_ERR_NO_DEVICE, VR_NO_CUDA_BUILD);
}

void vr_compact_state_destroy(vr_compact_state *s)
{
    assert(!s);
    (void)s;
}

vr_status vr_compact_state_next(vr_compact_state *s, uint32_t blocks, vr_compact_dev *dev)
{
    (void)s, (void)blocks, (void)dev;
    return VR_ERROR(VR_ERR_NO_DEVICE, VR_NO_CUDA_BUILD);
}

vr_status vr_compact_state_result(vr_compact_state *s, uint32_t *count)
{
    (void)s;
    *count = 0;
    return VR_ERROR(VR_ERR_NO_DEVICE, VR_NO_CUDA_BUILD);
}
#endif
