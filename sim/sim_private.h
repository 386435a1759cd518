/* sim_private.h - internal to sim/: the simulators without input validation, so vr_sim_run_all
 * checks an index buffer once and then runs every strategy on it. Same contracts as sim.h, with
 * indices already validated; each returns VR_OK or VR_ERR_OOM.
 */
#ifndef VR_SIM_PRIVATE_H
#define VR_SIM_PRIVATE_H

#include "sim/sim.h"

#include <string.h>

/* Prefetch of per-vertex state a few indices ahead: badly ordered meshes make every lookup a
 * cache miss, and hiding that latency is worth 2-3x there (no effect on well-ordered ones). */
#if defined(__GNUC__)
#define VR_PREFETCH(p) __builtin_prefetch(p)
#else
#define VR_PREFETCH(p) ((void)(p))
#endif
#define VR_PREFETCH_AHEAD 16 /* indices; about the misses one core keeps in flight */

/* VR_OK when index_count is a positive multiple of 3 and every index < vertex_count;
 * VR_ERR_FORMAT naming `what`, the position and the value otherwise. */
vr_status vr_sim_check_input(const uint32_t *indices, uint32_t index_count,
                             uint32_t vertex_count, const char *what);
/* Zeroes an optional per-vertex shading-count array before a simulator counts into it. */
static inline void vr_sim_clear_counts(uint32_t *shade_counts, uint32_t vertex_count)
{
    if (shade_counts)
        memset(shade_counts, 0, (size_t)vertex_count * sizeof *shade_counts);
}
/* Fills the derived fields of a result. */
void vr_sim_finish(vr_sim_result *out, uint32_t index_count, uint64_t shaded, uint64_t batches,
                   uint64_t passes);

/* Lanes of a shading pass (a hardware warp) for naive, multi, dynamic batches and plans. */
#define VR_SIM_PASS_LANES 32u

/* Whole passes for n invocations. */
static inline uint64_t vr_sim_passes(uint64_t n)
{
    return (n + VR_SIM_PASS_LANES - 1) / VR_SIM_PASS_LANES;
}

/* naive's: a thread per triangle shades its three corners one after another. */
static inline uint64_t vr_sim_naive_passes(uint64_t index_count)
{
    return 3 * vr_sim_passes(index_count / 3);
}

vr_status vr_sim_ideal_unchecked(vr_sim_result *out, const uint32_t *indices,
                                 uint32_t index_count, uint32_t vertex_count,
                                 uint32_t *shade_counts);
vr_status vr_sim_fifo_unchecked(vr_sim_result *out, const uint32_t *indices,
                                uint32_t index_count, uint32_t vertex_count, uint32_t entries,
                                uint32_t *shade_counts);
vr_status vr_sim_lru_unchecked(vr_sim_result *out, const uint32_t *indices, uint32_t index_count,
                               uint32_t vertex_count, uint32_t entries, uint32_t *shade_counts);
vr_status vr_sim_parallel_unchecked(vr_sim_result *out, const uint32_t *indices,
                                    uint32_t index_count, uint32_t vertex_count,
                                    uint32_t sm_count, uint32_t wave_size, uint32_t entries,
                                    vr_sim_assign assign, uint32_t *shade_counts);
vr_status vr_sim_warp_unchecked(vr_sim_result *out, const uint32_t *indices,
                                uint32_t index_count, uint32_t vertex_count,
                                uint32_t batch_indices, uint32_t warp_size,
                                uint32_t *shade_counts);
/* A static plan, built and counted (see vr_sim_patch): `kind` is one of these. */
enum {
    VR_SIM_PLAN_PATCH = 0,     /* vr_patches_build */
    VR_SIM_PLAN_MESHLET = 1,   /* vr_meshlets_build */
    VR_SIM_PLAN_PATCH_GPU = 2  /* vr_patches_build_gpu_ref: the GPU builder's plan */
};
vr_status vr_sim_plan_unchecked(vr_sim_result *out, int kind, const uint32_t *indices,
                                uint32_t index_count, const float *positions,
                                uint32_t vertex_count, uint32_t max_unique,
                                uint32_t max_indices, uint32_t *shade_counts,
                                double *plan_seconds);
vr_status vr_sim_dynamic_unchecked(vr_sim_result *out, const uint32_t *indices,
                                   uint32_t index_count, uint32_t vertex_count,
                                   uint32_t max_unique, uint32_t max_indices,
                                   uint32_t *shade_counts);

#endif
