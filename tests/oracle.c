/* oracle.c - the simulator's invocation count of a GPU strategy (tests/oracle.h). */
#include "tests/oracle.h"

#include "sim/sim.h"

#include <assert.h>

vr_status vr_oracle_sim_invocations(uint64_t *invocations, uint32_t *shade_counts, const vr_reuse_ops *ops,
                          const vr_mesh *m, const vr_reuse_params *cfg)
{
    assert(invocations && ops && m && cfg);
    vr_sim_result r;
    vr_status st;
    switch (ops->kind) {
    case VR_REUSE_NAIVE:
        st = vr_sim_naive(&r, m->indices, m->index_count, m->vertex_count, shade_counts);
        break;
    case VR_REUSE_WARP:
        st = vr_sim_warp(&r, m->indices, m->index_count, m->vertex_count, cfg->batch_indices, 32,
                         shade_counts);
        break;
    case VR_REUSE_MULTI:
        st = vr_sim_multi(&r, m->indices, m->index_count, m->vertex_count, shade_counts);
        break;
    case VR_REUSE_PATCH:
        st = vr_sim_patch(&r, m->indices, m->index_count, m->vertex_count, cfg->max_unique,
                          cfg->max_indices, shade_counts, NULL);
        break;
    case VR_REUSE_MESHLET:
        st = vr_sim_meshlet(&r, m->indices, m->index_count, m->positions, m->vertex_count,
                            cfg->max_unique, cfg->max_indices, shade_counts, NULL);
        break;
    default:
        assert(ops->dynamic);
        st = vr_sim_dynamic(&r, m->indices, m->index_count, m->vertex_count, cfg->max_unique,
                            cfg->max_indices, shade_counts);
        break;
    }
    *invocations = st == VR_OK ? r.shaded_vertices : 0;
    return st;
}
