/* batching.c - batch models of sim/: statically batched warp voting (Kenzel et al. 2018,
 * Algorithm 1), dynamic batching (Sec. 3.4, boundaries from reuse/batches.c), the static plans
 * (patches and meshlets, reuse/patches.h), and the two non-reusing baselines (naive: every index
 * shaded; multi: every vertex shaded once). These are the invocation counts the reuse/ CPU
 * twins and GPU batchers must reproduce.
 * Try: `vreuse_tests sim/warp`, `vreuse_tests sim/dynamic`, `vreuse_tests sim/plans`.
 */
#include "sim/sim_private.h"

#include "reuse/batches.h"
#include "reuse/patches.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

vr_status vr_sim_naive(vr_sim_result *out, const uint32_t *indices, uint32_t index_count,
                       uint32_t vertex_count, uint32_t *shade_counts)
{
    assert(out != NULL);
    vr_status s = vr_sim_check_input(indices, index_count, vertex_count, "vr_sim_naive");
    if (s)
        return s;
    vr_sim_clear_counts(shade_counts, vertex_count);
    if (shade_counts)
        for (uint32_t i = 0; i < index_count; ++i)
            ++shade_counts[indices[i]];
    vr_sim_finish(out, index_count, index_count, 0, vr_sim_naive_passes(index_count));
    return VR_OK;
}

vr_status vr_sim_multi(vr_sim_result *out, const uint32_t *indices, uint32_t index_count,
                       uint32_t vertex_count, uint32_t *shade_counts)
{
    assert(out != NULL);
    vr_status s = vr_sim_check_input(indices, index_count, vertex_count, "vr_sim_multi");
    if (s)
        return s;
    /* The multi-kernel pipeline shades the whole vertex buffer, unreferenced vertices too. */
    if (shade_counts)
        for (uint32_t v = 0; v < vertex_count; ++v)
            shade_counts[v] = 1;
    vr_sim_finish(out, index_count, vertex_count, 0, vr_sim_passes(vertex_count));
    return VR_OK;
}

/* Algorithm 1, one index at a time in lane order. A vertex "is on a lane" of the current round
 * when lane_round[v] == round, so starting a round is just ++round. Windows of warp_size
 * indices model the loads; an index that finds the warp full ends the round, and so does the
 * end of a window once the warp is full (the next load never happens). */
vr_status vr_sim_warp_unchecked(vr_sim_result *out, const uint32_t *indices,
                                uint32_t index_count, uint32_t vertex_count,
                                uint32_t batch_indices, uint32_t warp_size,
                                uint32_t *shade_counts)
{
    assert(batch_indices >= 3 && batch_indices % 3 == 0 && warp_size >= 3);
    uint32_t *lane_round = calloc(vertex_count, sizeof *lane_round);
    if (!lane_round)
        return VR_ERROR(VR_ERR_OOM, "sim warp: %u-vertex scratch array", vertex_count);
    vr_sim_clear_counts(shade_counts, vertex_count);
    uint64_t shaded = 0, rounds = 0;
    uint32_t round = 0; /* every round emits >= 1 triangle, so rounds < 2^32 */
    for (uint64_t begin = 0; begin < index_count; begin += batch_indices) {
        const uint64_t end = begin + batch_indices < index_count ? begin + batch_indices
                                                                 : index_count;
        uint64_t start = begin; /* cStart */
        while (start < end) {
            ++round;
            uint32_t fill = 0, done = 0;
            int full_stop = 0;
            for (uint64_t off = start; off < end && fill < warp_size && !full_stop;
                 off += warp_size) {
                const uint64_t load_end = off + warp_size < end ? off + warp_size : end;
                for (uint64_t p = off; p < load_end; ++p) {
                    uint32_t v = indices[p];
                    if (lane_round[v] == round) { /* duplicate: maps to its vertex's lane */
                        ++done;
                        continue;
                    }
                    if (fill == warp_size) { /* first unmappable index ends the round */
                        full_stop = 1;
                        break;
                    }
                    lane_round[v] = round;
                    ++fill;
                    ++done;
                    if (shade_counts)
                        ++shade_counts[v];
                }
            }
            /* warp_size >= 3 and batches of whole triangles: done >= 3, so this progresses.
             * Lanes of a trailing partial triangle were shaded and are discarded. */
            uint32_t triangles = done / 3;
            assert(triangles >= 1);
            shaded += fill;
            ++rounds;
            start += 3 * (uint64_t)triangles;
        }
    }
    free(lane_round);
    vr_sim_finish(out, index_count, shaded, rounds, rounds);
    return VR_OK;
}

vr_status vr_sim_warp(vr_sim_result *out, const uint32_t *indices, uint32_t index_count,
                      uint32_t vertex_count, uint32_t batch_indices, uint32_t warp_size,
                      uint32_t *shade_counts)
{
    assert(out != NULL);
    if (batch_indices < VR_WARP_BATCH_MIN || batch_indices > VR_WARP_BATCH_MAX ||
        batch_indices % 3 != 0)
        return VR_ERROR(VR_ERR_ARG,
                        "vr_sim_warp: batch of %u indices; it must be a multiple of 3 in %u..%u",
                        batch_indices, VR_WARP_BATCH_MIN, VR_WARP_BATCH_MAX);
    if (warp_size < 3)
        return VR_ERROR(VR_ERR_ARG, "vr_sim_warp: warp size %u; a triangle needs 3 lanes",
                        warp_size);
    vr_status s = vr_sim_check_input(indices, index_count, vertex_count, "vr_sim_warp");
    return s ? s
             : vr_sim_warp_unchecked(out, indices, index_count, vertex_count, batch_indices,
                                     warp_size, shade_counts);
}

vr_status vr_sim_dynamic_unchecked(vr_sim_result *out, const uint32_t *indices,
                                   uint32_t index_count, uint32_t vertex_count,
                                   uint32_t max_unique, uint32_t max_indices,
                                   uint32_t *shade_counts)
{
    assert(max_unique >= 3 && max_indices >= 3);
    uint32_t *starts = malloc((vr_batches_dynamic_bound(index_count) + 1) * sizeof *starts);
    uint32_t *stamp = calloc(vertex_count, sizeof *stamp);
    if (!starts || !stamp) {
        free(starts);
        free(stamp);
        return VR_ERROR(VR_ERR_OOM, "sim dynamic: batch offsets for %u indices", index_count);
    }
    size_t batch_count = 0;
    vr_status st = vr_batches_dynamic(starts, &batch_count, indices, index_count, vertex_count,
                                      max_unique, max_indices);
    if (st != VR_OK) {
        free(starts);
        free(stamp);
        return st;
    }
    /* Each batch shades its distinct vertices once; stamp[v] == batch + 1 marks them. */
    vr_sim_clear_counts(shade_counts, vertex_count);
    uint64_t shaded = 0, passes = 0;
    for (size_t b = 0; b < batch_count; ++b) {
        const uint32_t mark = (uint32_t)b + 1;
        const uint64_t before = shaded;
        for (uint32_t p = starts[b]; p < starts[b + 1]; ++p) {
            if ((uint64_t)p + VR_PREFETCH_AHEAD < index_count)
                VR_PREFETCH(&stamp[indices[p + VR_PREFETCH_AHEAD]]);
            uint32_t v = indices[p];
            if (stamp[v] != mark) {
                stamp[v] = mark;
                ++shaded;
                if (shade_counts)
                    ++shade_counts[v];
            }
        }
        passes += vr_sim_passes(shaded - before);
    }
    free(starts);
    free(stamp);
    vr_sim_finish(out, index_count, shaded, batch_count, passes);
    return VR_OK;
}

vr_status vr_sim_dynamic(vr_sim_result *out, const uint32_t *indices, uint32_t index_count,
                         uint32_t vertex_count, uint32_t max_unique, uint32_t max_indices,
                         uint32_t *shade_counts)
{
    assert(out != NULL);
    /* max_indices need not be a multiple of 3 here: batches hold whole triangles, so 8 acts
     * as 6 (the GPU and the command line take multiples of 3 only) */
    if (max_unique < VR_NU_MIN || max_unique > VR_NU_MAX || max_indices < VR_MAX_INDICES_MIN ||
        max_indices > VR_MAX_INDICES_MAX)
        return VR_ERROR(VR_ERR_ARG,
                        "vr_sim_dynamic: N_u %u must be in %u..%u and max indices %u in %u..%u",
                        max_unique, VR_NU_MIN, VR_NU_MAX, max_indices, VR_MAX_INDICES_MIN,
                        VR_MAX_INDICES_MAX);
    vr_status s = vr_sim_check_input(indices, index_count, vertex_count, "vr_sim_dynamic");
    return s ? s
             : vr_sim_dynamic_unchecked(out, indices, index_count, vertex_count, max_unique,
                                        max_indices, shade_counts);
}

/* Each batch of a static plan shades its distinct vertices once (stamp[v] == batch + 1). */
static vr_status vr_sim_plan_count(vr_sim_result *out, const vr_batch_plan *plan,
                                   const uint32_t *indices, uint32_t index_count,
                                   uint32_t vertex_count, uint32_t *shade_counts)
{
    uint32_t *stamp = calloc((size_t)vertex_count + 1, sizeof *stamp);
    if (!stamp)
        return VR_ERROR(VR_ERR_OOM, "sim plan: %u-vertex scratch array", vertex_count);
    vr_sim_clear_counts(shade_counts, vertex_count);
    uint64_t shaded = 0, passes = 0;
    for (uint32_t b = 0; b < plan->batch_count; ++b) {
        const uint64_t before = shaded;
        for (uint32_t i = plan->starts[b] / 3; i < plan->starts[b + 1] / 3; ++i) {
            const uint32_t *c = indices + 3 * (size_t)plan->tri_order[i];
            for (int k = 0; k < 3; ++k)
                if (stamp[c[k]] != b + 1) {
                    stamp[c[k]] = b + 1;
                    ++shaded;
                    if (shade_counts)
                        ++shade_counts[c[k]];
                }
        }
        passes += vr_sim_passes(shaded - before);
    }
    free(stamp);
    vr_sim_finish(out, index_count, shaded, plan->batch_count, passes);
    return VR_OK;
}

vr_status vr_sim_plan_unchecked(vr_sim_result *out, int kind, const uint32_t *indices,
                                uint32_t index_count, const float *positions,
                                uint32_t vertex_count, uint32_t max_unique,
                                uint32_t max_indices, uint32_t *shade_counts,
                                double *plan_seconds)
{
    vr_batch_plan plan;
    max_indices -= max_indices % 3; /* whole triangles, as dynamic batches take them */
    const double t0 = vr_now_ms();
    vr_status st =
        kind == VR_SIM_PLAN_MESHLET
            ? vr_meshlets_build(&plan, indices, index_count, positions, vertex_count, max_unique,
                                max_indices)
        : kind == VR_SIM_PLAN_PATCH_GPU
            ? vr_patches_build_gpu_ref(&plan, indices, index_count, vertex_count, max_unique,
                                       max_indices)
            : vr_patches_build(&plan, indices, index_count, vertex_count, max_unique,
                               max_indices);
    if (plan_seconds)
        *plan_seconds = (vr_now_ms() - t0) * 1e-3;
    if (st != VR_OK)
        return st;
    st = vr_sim_plan_count(out, &plan, indices, index_count, vertex_count, shade_counts);
    vr_batch_plan_free(&plan);
    return st;
}

/* The checks of vr_sim_patch and vr_sim_meshlet: the limits as vr_sim_dynamic takes them. */
static vr_status vr_sim_plan(vr_sim_result *out, int kind, const uint32_t *indices,
                             uint32_t index_count, const float *positions, uint32_t vertex_count,
                             uint32_t max_unique, uint32_t max_indices, uint32_t *shade_counts,
                             double *plan_seconds)
{
    assert(out != NULL);
    const int meshlet = kind == VR_SIM_PLAN_MESHLET;
    const char *who = meshlet ? "vr_sim_meshlet" : "vr_sim_patch";
    if (max_unique < VR_NU_MIN || max_unique > VR_NU_MAX || max_indices < VR_MAX_INDICES_MIN ||
        max_indices > VR_MAX_INDICES_MAX)
        return VR_ERROR(VR_ERR_ARG, "%s: N_u %u must be in %u..%u and max indices %u in %u..%u",
                        who, max_unique, VR_NU_MIN, VR_NU_MAX, max_indices, VR_MAX_INDICES_MIN,
                        VR_MAX_INDICES_MAX);
    if (meshlet && !positions && index_count > 0)
        return VR_ERROR(VR_ERR_ARG, "%s: meshlets need vertex positions (meshoptimizer "
                        "clusters triangles in space)", who);
    vr_status s = vr_sim_check_input(indices, index_count, vertex_count, who);
    return s ? s
             : vr_sim_plan_unchecked(out, kind, indices, index_count, positions,
                                     vertex_count, max_unique, max_indices, shade_counts,
                                     plan_seconds);
}

vr_status vr_sim_patch(vr_sim_result *out, const uint32_t *indices, uint32_t index_count,
                       uint32_t vertex_count, uint32_t max_unique, uint32_t max_indices,
                       uint32_t *shade_counts, double *plan_seconds)
{
    return vr_sim_plan(out, VR_SIM_PLAN_PATCH, indices, index_count, NULL, vertex_count, max_unique,
                       max_indices, shade_counts, plan_seconds);
}

vr_status vr_sim_meshlet(vr_sim_result *out, const uint32_t *indices, uint32_t index_count,
                         const float *positions, uint32_t vertex_count, uint32_t max_unique,
                         uint32_t max_indices, uint32_t *shade_counts, double *plan_seconds)
{
    return vr_sim_plan(out, VR_SIM_PLAN_MESHLET, indices, index_count, positions, vertex_count, max_unique,
                       max_indices, shade_counts, plan_seconds);
}

vr_status vr_sim_strategy(vr_sim_result *out, const char *strategy, const uint32_t *indices,
                          uint32_t index_count, const float *positions, uint32_t vertex_count,
                          const vr_sim_config *cfg, uint32_t *shade_counts)
{
    assert(out != NULL && strategy != NULL && cfg != NULL);
    if (!strcmp(strategy, "naive"))
        return vr_sim_naive(out, indices, index_count, vertex_count, shade_counts);
    if (!strcmp(strategy, "multi"))
        return vr_sim_multi(out, indices, index_count, vertex_count, shade_counts);
    if (!strcmp(strategy, "warp"))
        return vr_sim_warp(out, indices, index_count, vertex_count, cfg->warp_batch,
                           cfg->warp_size, shade_counts);
    /* hash, phash and sort differ in how a block finds its batch's distinct vertices, not in
     * which it shades: all three shade each dynamic batch's distinct vertices once. */
    if (!strcmp(strategy, "hash") || !strcmp(strategy, "phash") || !strcmp(strategy, "sort") ||
        !strcmp(strategy, "dyn"))
        return vr_sim_dynamic(out, indices, index_count, vertex_count, cfg->dyn_max_unique,
                              cfg->dyn_max_indices, shade_counts);
    if (!strcmp(strategy, "patch") || !strcmp(strategy, "meshlet"))
        return vr_sim_plan(out,
                           strategy[0] == 'm'   ? VR_SIM_PLAN_MESHLET
                           : cfg->patch_builder ? VR_SIM_PLAN_PATCH_GPU
                                                : VR_SIM_PLAN_PATCH,
                           indices, index_count, positions,
                           vertex_count, cfg->dyn_max_unique, cfg->dyn_max_indices, shade_counts,
                           NULL);
    return VR_ERROR(VR_ERR_ARG,
                    "sim: unknown strategy '%s'. Hint: naive, warp, hash, phash, sort, multi, "
                    "patch, meshlet", strategy);
}
