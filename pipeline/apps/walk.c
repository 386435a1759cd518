/* walk.c - the random walk's CPU reference (walk.h has the model): tables, placement, and the
 * steps, where each distinct cell's moves are evaluated once per step (the reuse a batcher can
 * exploit) and every agent draws with its own Philox counter. Try: `vreuse_tests apps/walk`.
 */
#include "pipeline/apps/walk.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Five bumps of different widths, away from each other and the border (cells). */
const vr_walk_gaussian vr_walk_gaussians[VR_WALK_GAUSSIANS] = {
    {64, 64, 20, 1.0}, {192, 80, 28, 0.8}, {128, 160, 36, 0.6}, {48, 208, 16, 0.9},
    {208, 208, 24, 0.7},
};

vr_walk_config vr_walk_config_default(void)
{
    vr_walk_config c = {300000, 10, 2018, 0, 1};
    return c;
}

void vr_walk_activity_table(float *activity)
{
    assert(activity);
    for (uint32_t y = 0; y < VR_WALK_GRID; ++y)
        for (uint32_t x = 0; x < VR_WALK_GRID; ++x) {
            double a = 0.05;
            for (int g = 0; g < VR_WALK_GAUSSIANS; ++g) {
                const vr_walk_gaussian *G = &vr_walk_gaussians[g];
                const double dx = x - G->cx, dy = y - G->cy;
                a += G->amplitude * exp(-(dx * dx + dy * dy) / (2 * G->sigma * G->sigma));
            }
            activity[y * VR_WALK_GRID + x] = (float)a;
        }
}

void vr_walk_levy_table(float *levy)
{
    assert(levy);
    const int r = VR_WALK_MAX_DISTANCE;
    for (int dy = -r; dy <= r; ++dy)
        for (int dx = -r; dx <= r; ++dx) {
            const int d2 = dx * dx + dy * dy;
            levy[(dy + r) * (2 * r + 1) + dx + r] = d2 ? (float)(1.0 / d2) : 0.0f;
        }
}

void vr_walk_place(uint32_t *cells, uint32_t count, uint64_t seed)
{
    assert(cells || count == 0);
    for (uint32_t a = 0; a < count; ++a) {
        uint32_t r[4];
        vr_walk_random(r, a, 0, 1, seed);
        cells[a] = vr_walk_pack(r[0] >> (32 - VR_WALK_GRID_LOG2), r[1] >> (32 - VR_WALK_GRID_LOG2));
    }
}

void vr_walk_density(uint32_t *counts, const uint32_t *cells, uint32_t count)
{
    assert(counts && (cells || count == 0));
    memset(counts, 0, (size_t)VR_WALK_GRID * VR_WALK_GRID * sizeof *counts);
    for (uint32_t a = 0; a < count; ++a)
        counts[vr_walk_y(cells[a]) * VR_WALK_GRID + vr_walk_x(cells[a])]++;
}

vr_status vr_walk_check(const uint32_t *cells, const vr_walk_config *cfg)
{
    assert(cells && cfg);
    if (cfg->agents == 0)
        return VR_ERROR(VR_ERR_ARG, "random walk: agents is 0; give at least one agent");
    if (cfg->steps > VR_WALK_MAX_STEPS)
        return VR_ERROR(VR_ERR_ARG, "random walk: steps is %u, more than the %u a run may take",
                        cfg->steps, VR_WALK_MAX_STEPS);
    if (cfg->lanes > 32 || (cfg->lanes & (cfg->lanes - 1)) != 0)
        return VR_ERROR(VR_ERR_ARG, "random walk: lanes is %u; want 1, 2, 4, 8, 16 or 32 threads "
                        "per cell", cfg->lanes);
    for (uint32_t a = 0; a < cfg->agents; ++a)
        if (vr_walk_x(cells[a]) >= VR_WALK_GRID || vr_walk_y(cells[a]) >= VR_WALK_GRID)
            return VR_ERROR(VR_ERR_ARG,
                            "random walk: agent %u is at cell 0x%08x, off the %ux%u grid (cells "
                            "are y << 16 | x)",
                            a, cells[a], VR_WALK_GRID, VR_WALK_GRID);
    return VR_OK;
}

vr_status vr_walk_run(uint32_t *cells, const vr_walk_config *cfg, vr_walk_stats *stats)
{
    assert(cells && cfg);
    vr_status check = vr_walk_check(cells, cfg);
    if (check != VR_OK)
        return check;
    const size_t grid = (size_t)VR_WALK_GRID * VR_WALK_GRID;
    float *activity = malloc(grid * sizeof *activity);
    float levy[(2 * VR_WALK_MAX_DISTANCE + 1) * (2 * VR_WALK_MAX_DISTANCE + 1)];
    vr_walk_moves *moves = malloc(grid * sizeof *moves);
    uint32_t *stamp = malloc(grid * sizeof *stamp); /* step + 1 when moves[cell] is current */
    if (!activity || !moves || !stamp) {
        free(activity), free(moves), free(stamp);
        return VR_ERROR(VR_ERR_OOM, "random walk: cannot allocate the %zu-cell tables", grid);
    }
    vr_walk_activity_table(activity);
    vr_walk_levy_table(levy);
    memset(stamp, 0, grid * sizeof *stamp);
    vr_walk_stats st = {cfg->steps, stats ? stats->distinct_cells : NULL, 0, 0, 0};
    const double t0 = vr_now_ms();
    for (uint32_t step = 0; step < cfg->steps; ++step) {
        uint32_t distinct = 0;
        for (uint32_t a = 0; a < cfg->agents; ++a) {
            const uint32_t c = cells[a], i = vr_walk_y(c) * VR_WALK_GRID + vr_walk_x(c);
            /* the moves depend only on the cell: evaluated once per distinct cell and step */
            if (stamp[i] != step + 1) {
                stamp[i] = step + 1;
                vr_walk_moves_of(&moves[i], activity, levy, c);
                ++distinct;
            }
            cells[a] = vr_walk_draw(&moves[i], a, step, cfg->seed);
        }
        if (st.distinct_cells)
            st.distinct_cells[step] = distinct;
        st.cell_evaluations += distinct;
        st.agent_draws += cfg->agents;
    }
    st.ms = vr_now_ms() - t0;
    free(activity), free(moves), free(stamp);
    if (stats)
        *stats = st;
    return VR_OK;
}
