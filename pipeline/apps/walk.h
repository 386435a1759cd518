/* walk.h - the paper's parallel random walk (Section 5.3) as a CPU reference: the oracle a later
 * GPU path through the batchers (the agent's packed cell as a virtual index, arity 1) is compared
 * against, draw for draw. Try: `vreuse_tests apps/walk`.
 *
 * The model (the paper names the ingredients, not the formulas; these are ours):
 *   grid      256 x 256 cells, cell (x, y) packed as y << 16 | x;
 *   agents    300,000, placed uniformly: x = top 8 bits of Philox word 0, y = of word 1, counter
 *             (agent, 0, 1, 0);
 *   activity  A(x, y) = 0.05 + sum of the 5 Gaussians a exp(-|p - c|^2 / (2 s^2)) of
 *             vr_walk_gaussians (evaluated in double, stored as float);
 *   Levy      a move by d (1 <= |d| <= 16) has likelihood A(target) * |d|^-2: the inverse-square
 *             jump law of Kleinberg's navigable 2-D lattice, biased toward activity (a drift up
 *             the activity, the Fokker-Planck reading of the paper); |d|^-2 is tabulated as
 *             float(1.0 / |d|^2);
 *   moves     every candidate within distance 16 on the grid evaluated, the 8 largest kept (ties:
 *             the earlier in dy-major, dx-minor order), one drawn with probability proportional
 *             to its likelihood from Philox counter (agent, step, 0, 0), key = seed;
 *   steps     10.
 * walk_math.h holds the parts a GPU must share bit for bit (Philox, the per-cell moves, the draw).
 */
#ifndef VR_WALK_H
#define VR_WALK_H

#include <stdint.h>

#include "pipeline/apps/walk_math.h"
#include "pipeline/vreuse.h"

#ifdef __cplusplus
extern "C" {
#endif

#define VR_WALK_MAX_STEPS 1000 /* steps one run may take (stats keep one count per step) */
#define VR_WALK_GAUSSIANS 5

typedef struct vr_walk_config {
    uint32_t agents; /* 1 .. 2^32-1; default 300,000 */
    uint32_t steps;  /* 0 .. VR_WALK_MAX_STEPS; default 10 */
    uint64_t seed;   /* Philox key; default 2018 */
    int resort;      /* vr_walk_apply: the agents' stream is sorted by cell before every step (a
                      * counting sort of (cell, agent) pairs, timed as part of the step: stable
                      * in the CPU twin, not on the GPU, which leaves the stream of cells the
                      * same), so each cell's agents sit together in one batch; default 0, the
                      * paper's fixed order. Each agent's draws, and thus vr_walk_run's result,
                      * do not depend on the order: vr_walk_run ignores it. */
    uint32_t lanes;  /* vr_walk_apply on the GPU: threads that evaluate one cell together (0 or 1:
                      * one; else a power of two up to 32: each scans every lanes-th row of the
                      * disc and the lanes merge their best 8, vr_walk_top_*), for steps with
                      * few distinct cells. The moves are the same bits, so the CPU twin and
                      * vr_walk_run ignore it. Default 1. */
} vr_walk_config;

vr_walk_config vr_walk_config_default(void);

/* One Gaussian of the activity, in cells. */
typedef struct vr_walk_gaussian {
    double cx, cy;     /* centre */
    double sigma;      /* standard deviation */
    double amplitude;  /* peak height above the 0.05 floor */
} vr_walk_gaussian;
extern const vr_walk_gaussian vr_walk_gaussians[VR_WALK_GAUSSIANS];

/* The tables vr_walk_moves_of reads. activity: VR_WALK_GRID^2 floats; levy: 33 x 33 floats,
 * [dy + 16][dx + 16] = float(1.0 / (dx^2 + dy^2)), 0 at the centre. */
void vr_walk_activity_table(float *activity);
void vr_walk_levy_table(float *levy);

/* Initial cells of agents 0 .. count-1 (uniform on the grid, from `seed`). */
void vr_walk_place(uint32_t *cells, uint32_t count, uint64_t seed);

typedef struct vr_walk_stats {
    uint32_t steps;                   /* steps run */
    uint32_t *distinct_cells;         /* `steps` entries, or NULL: distinct cells at the start of
                                       * each step = per-cell evaluations a perfect reuse needs */
    uint64_t cell_evaluations;        /* sum of distinct_cells (the reference evaluates each
                                       * distinct cell once per step) */
    uint64_t agent_draws;             /* agents x steps (a naive walk evaluates this many cells) */
    double ms;                        /* wall time of the steps (placement excluded) */
} vr_walk_stats;

/* Runs cfg->steps steps of the walk from the cells in `cells` (cfg->agents of them; fill with
 * vr_walk_place for the paper's start), in place. `stats` may be NULL; its distinct_cells, when not
 * NULL, must hold cfg->steps entries (caller-owned). VR_ERR_ARG naming the field for 0 agents,
 * more than VR_WALK_MAX_STEPS steps or a cell off the grid; VR_ERR_OOM. */
vr_status vr_walk_run(uint32_t *cells, const vr_walk_config *cfg, vr_walk_stats *stats);

/* vr_walk_run's checks of its arguments alone (the same errors). */
vr_status vr_walk_check(const uint32_t *cells, const vr_walk_config *cfg);

/* Agents per cell: counts[y * VR_WALK_GRID + x] (VR_WALK_GRID^2 entries, zeroed here). */
void vr_walk_density(uint32_t *counts, const uint32_t *cells, uint32_t count);

#ifdef __cplusplus
}
#endif
#endif
