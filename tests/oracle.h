/* oracle.h - test-only oracles: what the simulator (sim/) says a GPU strategy must cost. The
 * CPU twins and the GPU are checked against these counts; nothing outside tests/ needs them. */
#ifndef VR_TEST_ORACLE_H
#define VR_TEST_ORACLE_H

#include <stdint.h>

#include "pipeline/vreuse.h"
#include "reuse/reuse.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The simulator's count for strategy `ops` on mesh `m` (sim/sim.h): naive, warp voting with
 * cfg->batch_indices and 32 lanes, multi, dynamic batching with N_u = cfg->max_unique and
 * cfg->max_indices for hash, phash and sort, and the patch and meshlet plans for those limits. `shade_counts` (vertex_count, may be
 * NULL) receives the per-vertex counts. The CPU twins and the GPU must reproduce both. */
vr_status vr_oracle_sim_invocations(uint64_t *invocations, uint32_t *shade_counts, const vr_reuse_ops *ops,
                          const vr_mesh *m, const vr_reuse_params *cfg);

#ifdef __cplusplus
}
#endif
#endif
