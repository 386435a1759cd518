/* test_warp_vote.c - the lane-parallel vote step of reuse/warp_round.cuh, run on 32 emulated
 * lanes (ballot and match_any over lane arrays, the warp's table of held vertices as an array)
 * through the very functions of reuse/warp_vote.h, against the plain per-index rule of
 * reuse/warp_ref.c: `reuse/warp-vote-step` compares single steps (random owned lanes and fill
 * levels, partial chunks, small alphabets for many duplicates, ids next to the sentinel),
 * `reuse/warp-vote-ref` whole batches in the kernel's round structure against vr_warp_ref's
 * invocation and per-vertex shading counts. No GPU needed.
 */
#include "tests/test.h"

#include <stdlib.h>
#include <string.h>

#include "reuse/ref_common.h"
#include "reuse/warp_vote.h"

#define LANES VR_VOTE_LANES

/* ---- emulated warp collectives (all 32 lanes take part, as in the kernel) ------------------ */

static uint32_t emu_ballot(const int pred[LANES])
{
    uint32_t m = 0;
    for (uint32_t l = 0; l < LANES; ++l)
        m |= pred[l] ? 1u << l : 0u;
    return m;
}

static uint32_t emu_match_any(const uint32_t key[LANES], uint32_t lane)
{
    uint32_t m = 0;
    for (uint32_t l = 0; l < LANES; ++l)
        m |= key[l] == key[lane] ? 1u << l : 0u;
    return m;
}

/* ---- the two rules ----------------------------------------------------------------------- */

/* The kernel's vote step, statement by statement. incoming[] holds VR_VOTE_NO_VERTEX past
 * `chunk`; held[] is the warp's table (the vertex of lane l at l, VR_VOTE_NO_VERTEX from *fill
 * on). Writes map[0..mapped) and returns mapped. Also checks that no two lanes claim one entry
 * and that every claimed entry is empty (the kernel's leaders write without a collective). */
static uint32_t vote_step_lanes(uint32_t held[LANES], uint32_t *fill,
                                const uint32_t incoming[LANES], uint32_t chunk, uint8_t *map)
{
    const uint32_t f = *fill;
    uint32_t owner[LANES], group[LANES], rank[LANES];
    int fresh[LANES], leads[LANES], pred[LANES];
    for (uint32_t lane = 0; lane < LANES; ++lane) {
        owner[lane] = VR_VOTE_NONE;
        for (uint32_t j = 0; j < f; j += 4) /* the last group reads up to 3 empty entries */
            for (uint32_t k = 0; k < 4; ++k)
                owner[lane] = vr_vote_owner_step(owner[lane], held[j + k], incoming[lane], j + k);
    }
    for (uint32_t lane = 0; lane < LANES; ++lane) {
        group[lane] = emu_match_any(incoming, lane);
        fresh[lane] = vr_vote_fresh(lane, chunk, owner[lane]);
        leads[lane] = vr_vote_leads(fresh[lane], group[lane], lane);
    }
    const uint32_t leaders = emu_ballot(leads);
    for (uint32_t lane = 0; lane < LANES; ++lane) {
        rank[lane] = vr_vote_rank(leaders, group[lane]);
        pred[lane] = vr_vote_blocked(fresh[lane], rank[lane], f);
    }
    const uint32_t blocked = emu_ballot(pred);
    const uint32_t mapped = vr_vote_mapped(blocked, chunk);
    const uint32_t taken = vr_vote_taken(leaders, f);
    uint32_t claimed = 0;
    for (uint32_t lane = 0; lane < LANES; ++lane) {
        if (vr_vote_claims(leads[lane], rank[lane], f)) {
            const uint32_t at = f + rank[lane];
            VR_EXPECT(at < LANES && !(claimed >> at & 1u) && held[at] == VR_VOTE_NO_VERTEX,
                      "lane %u claims entry %u (fill %u): out of range, claimed twice or full",
                      lane, at, f);
            if (at < LANES) {
                claimed |= 1u << at;
                held[at] = incoming[lane];
            }
        }
        if (lane < mapped)
            map[lane] = (uint8_t)vr_vote_lane(fresh[lane], owner[lane], f, rank[lane]);
    }
    VR_EXPECT(claimed == (taken ? (~0u >> (LANES - taken)) << f : 0u),
              "claimed entries 0x%08x, want %u from %u", claimed, taken, f);
    *fill = f + taken;
    return mapped;
}

/* The twin's loop over one chunk (reuse/warp_ref.c), unchanged but for the names. */
static uint32_t vote_step_sequential(uint32_t lane_vertex[LANES], uint32_t *fill,
                                     const uint32_t *indices, uint32_t chunk, uint8_t *map)
{
    uint32_t mapped = 0;
    for (uint32_t i = 0; i < chunk; ++i) {
        uint32_t v = indices[i];
        uint32_t lane = 0;
        while (lane < *fill && lane_vertex[lane] != v)
            ++lane;
        if (lane == *fill) {
            if (*fill == LANES)
                break;
            lane_vertex[(*fill)++] = v;
        }
        map[i] = (uint8_t)lane;
        ++mapped;
    }
    return mapped;
}

/* ---- helpers -------------------------------------------------------------------------------- */

static uint64_t g_rng;

static uint32_t rnd(uint32_t n) /* uniform-ish in 0..n-1, n > 0 */
{
    g_rng = g_rng * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)((g_rng >> 33) % n);
}

static const uint32_t g_alphabets[] = {1, 2, 3, 5, 8, 16, 24, 31, 32, 33, 40, 48, 64, 100, 1000};
#define ALPHABETS (sizeof g_alphabets / sizeof g_alphabets[0])

/* ---- tests ---------------------------------------------------------------------------------- */

VR_TEST(test_vote_step, "reuse/warp-vote-step")
{
    g_rng = 20180712;
    for (uint32_t it = 0; it < 200000 && vr_test_failures < 10; ++it) {
        const uint32_t alphabet = g_alphabets[rnd(ALPHABETS)];
        /* ids from 0 up, or right below the sentinel */
        const uint32_t base = rnd(4) == 0 ? VR_VOTE_NO_VERTEX - alphabet : 0;
        /* owned lanes: `fill` distinct ids of the alphabet, in random order */
        uint32_t fill = rnd(LANES + 1);
        fill = fill < alphabet ? fill : alphabet;
        if (it % 5 == 0)
            fill = 0; /* a round's first chunk */
        uint32_t lanes_par[LANES], lanes_seq[LANES];
        for (uint32_t l = 0; l < LANES; ++l)
            lanes_par[l] = VR_VOTE_NO_VERTEX;
        for (uint32_t l = 0; l < fill; ++l) {
            uint32_t v, dup;
            do {
                v = base + rnd(alphabet);
                dup = 0;
                for (uint32_t k = 0; k < l; ++k)
                    dup |= lanes_par[k] == v;
            } while (dup);
            lanes_par[l] = v;
        }
        memcpy(lanes_seq, lanes_par, sizeof lanes_par);
        const uint32_t chunk = rnd(3) ? LANES : 1 + rnd(LANES);
        uint32_t incoming[LANES];
        for (uint32_t l = 0; l < LANES; ++l)
            incoming[l] = l < chunk ? base + rnd(alphabet) : VR_VOTE_NO_VERTEX;

        uint8_t map_par[LANES], map_seq[LANES];
        uint32_t fill_par = fill, fill_seq = fill;
        const uint32_t mapped_par = vote_step_lanes(lanes_par, &fill_par, incoming, chunk, map_par);
        const uint32_t mapped_seq =
            vote_step_sequential(lanes_seq, &fill_seq, incoming, chunk, map_seq);
        int same = mapped_par == mapped_seq && fill_par == fill_seq;
        for (uint32_t l = 0; same && l < fill_seq; ++l)
            same = lanes_par[l] == lanes_seq[l];
        for (uint32_t l = fill_seq; same && l < LANES; ++l)
            same = lanes_par[l] == VR_VOTE_NO_VERTEX; /* empty lanes stay empty */
        for (uint32_t i = 0; same && i < mapped_seq; ++i)
            same = map_par[i] == map_seq[i];
        VR_EXPECT(same,
                  "case %u (alphabet %u, base %u, fill %u, chunk %u): lanes give mapped %u fill "
                  "%u, the sequential rule mapped %u fill %u",
                  it, alphabet, base, fill, chunk, mapped_par, fill_par, mapped_seq, fill_seq);
        /* the round structure relies on it: a step stops early only with a full warp */
        VR_EXPECT(mapped_par == chunk || fill_par == LANES, "case %u: stopped at %u of %u with "
                  "%u lanes filled", it, mapped_par, chunk, fill_par);
    }
    return VR_TEST_RESULT();
}

/* Whole batches the way vr_warp_load_round's callers walk them, with vote_step_lanes; adds the
 * round's invocations to *invocations and shade_counts, and checks every emitted corner's vertex. */
static void model_warp(const uint32_t *indices, uint32_t index_count, uint32_t batch,
                       uint64_t *invocations, uint32_t *shade_counts)
{
    uint8_t map[VR_WARP_BATCH_MAX];
    for (uint64_t begin = 0; begin < index_count; begin += batch) {
        const uint32_t end = (uint32_t)(begin + batch < index_count ? begin + batch : index_count);
        for (uint32_t start = (uint32_t)begin; start < end;) {
            uint32_t my_vertex[LANES], fill = 0, done = 0;
            for (uint32_t l = 0; l < LANES; ++l)
                my_vertex[l] = VR_VOTE_NO_VERTEX;
            for (uint32_t offset = start;;) {
                const uint32_t chunk = end - offset < LANES ? end - offset : LANES;
                uint32_t incoming[LANES];
                for (uint32_t l = 0; l < LANES; ++l)
                    incoming[l] = l < chunk ? indices[offset + l] : VR_VOTE_NO_VERTEX;
                done += vote_step_lanes(my_vertex, &fill, incoming, chunk, map + done);
                if (fill == LANES || end - offset <= LANES)
                    break;
                offset += LANES;
            }
            const uint32_t triangles = done / 3;
            VR_EXPECT(triangles > 0, "batch at %llu: a round at %u maps %u indices",
                      (unsigned long long)begin, start, done);
            if (triangles == 0)
                return;
            *invocations += fill;
            for (uint32_t l = 0; l < fill; ++l)
                shade_counts[my_vertex[l]]++;
            for (uint32_t i = 0; i < 3 * triangles; ++i)
                VR_EXPECT(my_vertex[map[i]] == indices[start + i],
                          "index %u: lane %u holds %u, the index is %u", start + i, map[i],
                          my_vertex[map[i]], indices[start + i]);
            start += 3 * triangles;
        }
    }
}

VR_TEST(test_vote_ref, "reuse/warp-vote-ref")
{
    static const uint32_t batches[] = {3, 6, 30, 33, 48, 96, 99, 192, 384, 1536};
    g_rng = 96;
    const uint32_t max_indices = 3 * 2000;
    uint32_t *indices = malloc(max_indices * sizeof *indices);
    float *zeros = calloc(3 * 1000, sizeof *zeros);
    uint32_t *counts_model = malloc(1000 * sizeof *counts_model);
    uint32_t *counts_ref = malloc(1000 * sizeof *counts_ref);
    vr_queue q = {0};
    q.capacity = max_indices / 3;
    q.clip = malloc((size_t)q.capacity * 12 * sizeof(float));
    q.normal = malloc((size_t)q.capacity * 12 * sizeof(float));
    q.vertex = malloc((size_t)q.capacity * 3 * sizeof(uint32_t));
    q.tri_id = malloc((size_t)q.capacity * sizeof(uint32_t));
    VR_EXPECT(indices && zeros && counts_model && counts_ref && q.clip && q.normal && q.vertex &&
              q.tri_id, "out of memory");
    for (uint32_t it = 0; it < 600 && indices && zeros && counts_model && counts_ref && q.clip &&
                          q.normal && q.vertex && q.tri_id && vr_test_failures < 10; ++it) {
        /* a sliding window over the vertex ids (mesh-like locality), or uniform draws */
        const uint32_t vertex_count = 1 + rnd(1000);
        const uint32_t window = 1 + rnd(it % 3 ? 40 : vertex_count);
        const uint32_t index_count = 3 * (1 + rnd(max_indices / 3));
        for (uint32_t i = 0; i < index_count; ++i) {
            uint32_t lo = (uint32_t)((uint64_t)i * vertex_count / index_count);
            uint32_t v = lo + rnd(window);
            indices[i] = v < vertex_count ? v : v % vertex_count;
        }
        const uint32_t batch = batches[it % (sizeof batches / sizeof batches[0])];
        memset(counts_model, 0, vertex_count * sizeof *counts_model);
        memset(counts_ref, 0, vertex_count * sizeof *counts_ref);
        uint64_t invocations = 0;
        model_warp(indices, index_count, batch, &invocations, counts_model);

        vr_counters counters = {0};
        const vr_reuse_params defaults = vr_reuse_params_default();
        vr_reuse_params p =
            vr_reuse_params_input(&defaults, indices, index_count, zeros, zeros, vertex_count);
        p.batch_indices = batch;
        p.count = 1;
        p.queue = q;
        p.counters = &counters;
        p.shade_counts = counts_ref;
        const vr_status st = vr_warp_ref(&p);
        VR_EXPECT(st == VR_OK, "vr_warp_ref: %s", vr_status_string(st));
        VR_EXPECT(invocations == counters.invocations,
                  "case %u (%u indices, batch %u, %u vertices, window %u): model %llu "
                  "invocations, vr_warp_ref %llu", it, index_count, batch, vertex_count, window,
                  (unsigned long long)invocations, counters.invocations);
        uint32_t differ = 0;
        for (uint32_t v = 0; v < vertex_count; ++v)
            differ += counts_model[v] != counts_ref[v];
        VR_EXPECT(differ == 0, "case %u: %u vertices shaded a different number of times", it,
                  differ);
    }
    free(q.clip);
    free(q.normal);
    free(q.vertex);
    free(q.tri_id);
    free(counts_ref);
    free(counts_model);
    free(zeros);
    free(indices);
    return VR_TEST_RESULT();
}
