/* test_helpers.h - inputs and checks that one test file defines and others reuse (mostly a CPU
 * test and its GPU twin), declared once here so the compiler checks every caller.
 * Defined in: tests/test_reuse.c (tiny cases, grid meshes), tests/test_gts.c (vr_test_gts_*),
 * tests/test_raster.c (vr_test_raster_*), tests/test_compact.c (vr_test_compact_*),
 * tests/test_scenes.c (vr_test_load, vr_test_cmp_*), tests/test_limits.c
 * (vr_test_load_forsyth), tests/test_plan.c (vr_test_soup, vr_test_plan_scenes),
 * tests/test_gpupatch.c (vr_test_made_meshes),
 * tests/test_envelope.c (vr_test_plates, vr_test_torus), tests/test_program.c
 * (vr_test_envelope_mesh), tests/test_stream.c (vr_test_stream_*).
 */
#ifndef VR_TEST_HELPERS_H
#define VR_TEST_HELPERS_H

#include <stddef.h>
#include <stdint.h>

#include "pipeline/gts/gts.h"
#include "pipeline/vreuse.h"
#include "raster/raster.h"
#include "reuse/reuse.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- tests/test_scenes.c ------------------------------------------------------------------ */

/* vr_mesh_load as a test step: 1 when `spec` (a path or a generator) loaded, else 0 after a
 * failed expectation that names it and the message. */
int vr_test_load(vr_mesh *m, const char *spec);
/* qsort / bsearch order of uint64_t keys. */
int vr_test_cmp_u64(const void *a, const void *b);
/* qsort / bsearch order of uint32_t keys. */
int vr_test_cmp_u32(const void *a, const void *b);

/* ---- tests/test_reuse.c ------------------------------------------------------------------- */

/* Tiny case i (a quad, a fan, a strip, ...): its mesh (free with vr_mesh_free), name, warp batch
 * (0 = default) and expected invocations per strategy kind. VR_ERR_ARG past the last case. */
vr_status vr_test_tiny_case(size_t i, vr_mesh *m, const char **name, uint32_t *batch_indices,
                            uint64_t expected[VR_REUSE_KIND_COUNT]);

/* A w x h grid of quads (2 triangles each) over (w+1)(h+1) vertices plus `extra` unreferenced
 * vertices, a bumpy height field; shuffle != 0 permutes the triangles (seeded). */
vr_status vr_test_grid_mesh(vr_mesh *m, uint32_t w, uint32_t h, uint32_t extra, int shuffle,
                            uint64_t seed);

/* 1 when a twin (or GPU path) reported that it is still a placeholder. */
int vr_test_not_implemented(vr_status st);

/* ---- tests/test_stream.c ------------------------------------------------------------------ */

/* Streamed renderers (`gpu` 0: the CPU twins) on compressed input damaged behind valid counts:
 * VR_ERR_FORMAT wherever the CPU decoder rejects the stream, never a fault. */
void vr_test_stream_gts_damaged(int gpu);
/* Batch limits of at most 16 triangles per batch (block 32, N_u 16, 48 indices): many chunks
 * whose edges fall inside the words of a compressed stream. */
vr_batch_limits vr_test_stream_small_limits(void);
/* `src` encoded in restart mode `mode` (vr_gts_restart) into *g, and *dec its decode: the mesh
 * a stage decoding the stream per batch runs on. Free both; on failure neither is left. */
vr_status vr_test_gts_strips(vr_gts *g, vr_mesh *dec, const vr_mesh *src, int mode);
/* The frame every renderer comparison draws: `m` fitted to the view at `zoom` and `yaw`, w x h,
 * back faces culled or not, the default light and background; no strategy yet. */
vr_render_options vr_test_frame_options(const vr_mesh *m, uint32_t w, uint32_t h, float zoom,
                                        float yaw, int cull_back);
/* How many of px visibility words (va, vb) and RGBA pixels (a, b) two frames differ in. */
void vr_test_frame_diff(const uint64_t *va, const uint64_t *vb, const uint8_t *a,
                        const uint8_t *b, size_t px, size_t *words, size_t *pixels);
/* 1 when VR_TEST_NCCL=0 leaves the NCCL runs out (tests/gpu.sh sanitizes them in a step of
 * their own), else 0. */
int vr_test_nccl_off(void);

/* ---- tests/test_plan.c -------------------------------------------------------------------- */

/* Seeded soup n (0..7) of random triangles over few vertices (non-manifold edges, repeated and
 * degenerate triangles, several components): 3 * *tris indices (<= 3 * 279) into idx over
 * *vertices vertices; *x is the generator's state (start at 88172645463325252). */
void vr_test_soup(uint32_t *idx, uint32_t *vertices, uint32_t *tris, uint32_t n, uint64_t *x);
/* ---- tests/test_gpupatch.c ---------------------------------------------------------------- */

/* The patch builders' hand-made meshes: a fan of 40 triangles, 30 separate triangles (no
 * adjacency at all), one triangle 64 times (each face has 189 neighbours: more adjacency
 * entries than corners) and "odd" (degenerate, duplicate and non-manifold faces: edge 0-1 in
 * three triangles). vr_test_made_meshes fills the arrays and points mesh[] at them (index
 * buffers only; no positions). */
enum { VR_TEST_MADE_FAN, VR_TEST_MADE_SOUP, VR_TEST_MADE_REPEAT, VR_TEST_MADE_ODD,
       VR_TEST_MADE_COUNT, VR_TEST_FAN = 40, VR_TEST_SOUP = 30 };
typedef struct vr_test_made {
    uint32_t fan[3 * VR_TEST_FAN], soup[3 * VR_TEST_SOUP], repeat[3 * 64], odd[21];
    vr_mesh mesh[VR_TEST_MADE_COUNT];
} vr_test_made;
void vr_test_made_meshes(vr_test_made *m);

/* The plan tests' scenes: every shared scene, the default sphere and foliage:20k. */
#define VR_TEST_PLAN_SCENE_COUNT 10
extern const char *const vr_test_plan_scenes[VR_TEST_PLAN_SCENE_COUNT];
/* `spec` as vr_test_load takes it: a shared scene's path in buf (n bytes) or the generator
 * spec itself; NULL after printing SKIP when the scenes directory is missing. */
const char *vr_test_plan_spec(char *buf, size_t n, const char *spec);
/* 1 when `spec` names a file (a '.' before any ':'), 0 for a generator ("sphere:1.3M"). */
int vr_test_spec_is_file(const char *spec);

/* ---- tests/test_envelope.c ---------------------------------------------------------------- */

/* Two boxes [0,1]^2 x [0,0.1] and [0,1]^2 x [0.1+gap, 0.2+gap], each face an n x n grid with
 * its own vertices (copies on the edges weld); a torus (ring radius R, tube radius r) of nu x nv
 * quads. Meshes with normals (free with vr_mesh_free); 0 when out of memory. */
int vr_test_plates(vr_mesh *m, float gap, uint32_t n);
int vr_test_torus(vr_mesh *m, float R, float r, uint32_t nu, uint32_t nv);

/* ---- tests/test_program.c ----------------------------------------------------------------- */

/* Mesh `which` (0..VR_TEST_ENVELOPE_BUNNY) of the envelope comparisons, its name in name[n]:
 * two near plates with an unnamed -0 representative and a lone point, a sphere, a torus,
 * spot.obj (texture seams) and the bunny (these two not when small; SKIP printed without
 * scenes). Sizes: SMALL a few hundred vertices (compute-sanitizer), CPU a few thousand (the
 * twin's tests), GPU the same with the paper's sphere. 0 when not available. */
#define VR_TEST_ENVELOPE_BUNNY 4
#define VR_TEST_ENVELOPE_SMALL 0
#define VR_TEST_ENVELOPE_CPU 1
#define VR_TEST_ENVELOPE_GPU 2
int vr_test_envelope_mesh(vr_mesh *m, int which, int size, char *name, size_t n);
/* The limits of the envelope tests: the defaults with N_u = nu, or for nu = 0 the paper's
 * Table 4 configuration (vr_envelope_paper_limits). */
vr_batch_limits vr_test_envelope_limits(vr_reuse_kind kind, uint32_t nu);
/* 1 when two envelopes have the same bits: positions, normals, indices. */
int vr_test_envelope_equal(const vr_mesh *a, const vr_mesh *b);
/* Envelopes of m, outer and inner, through every strategy (vr_test_envelope_limits) on the GPU
 * (gpu) or the CPU twin: equal to vr_envelope_build bit for bit (positions, normals, the
 * statistics; check: with the intersection counter), invocations equal to the renderer's CPU
 * twin's (the same batches), and with `twin` to the API's CPU twin's. flags: VR_TEST_ENV_CHECK
 * counts intersections; VR_TEST_ENV_QUICK runs the outer envelope through hash, multi and patch
 * only (a large mesh on the CPU: the per-strategy batching is covered on the small ones). */
enum { VR_TEST_ENV_CHECK = 1, VR_TEST_ENV_QUICK = 2 };
void vr_test_envelope_check(const vr_mesh *m, const char *name, int gpu, int twin, uint32_t nu,
                            int flags);
/* vr_test_envelope_check (N_u 256, with the counter) of meshes 0..last of `size`, the plates
 * also with N_u 16, the plates and the sphere with Table 4's limits; with gpu, the API's twin
 * compared below twin_below vertices. */
void vr_test_envelope_meshes(int size, int last, int gpu, uint32_t twin_below);

/* ---- tests/test_limits.c ------------------------------------------------------------------ */

/* A shared scene file ("cow.obj") or a generator spec ("sphere:20k") in forsyth order (seed 7):
 * 1 when loaded, else 0 after a SKIP line (no scenes directory) or a failed expectation. */
int vr_test_load_forsyth(vr_mesh *m, const char *spec);

/* ---- tests/test_compact.c ----------------------------------------------------------------- */

/* Selectivities every compaction test runs: 0, 1, 50, 99, 100 percent. */
#define VR_TEST_COMPACT_PERCENTS 5
extern const uint32_t vr_test_compact_percents[VR_TEST_COMPACT_PERCENTS];
/* The threshold that keeps `percent` of uniform 32-bit values: percent x 2^32 / 100. */
uint64_t vr_test_compact_threshold(uint32_t percent);
/* Expansion counts for n cells (seeded): mix 0 mostly 0..4, 1 sparse with some up to 300,
 * 2 all ones, 3 all zeros. */
void vr_test_compact_counts(uint32_t *counts, uint32_t n, uint32_t seed, uint32_t mix);

/* ---- tests/test_gts.c --------------------------------------------------------------------- */

/* Hand-made meshes for vr_test_gts_small: 0 .. VR_TEST_GTS_SMALL_COUNT - 1. */
#define VR_TEST_GTS_SMALL_COUNT 5
/* Hand-made mesh `which` (non-manifold, degenerate, two components, one triangle, fan) and its
 * name; free with vr_mesh_free. */
vr_status vr_test_gts_small(size_t which, vr_mesh *m, const char **name);

/* Loads every shared scene and calls fn(mesh, name, ctx). VR_TEST_SKIP (with the message) when
 * the scenes directory is missing, else VR_TEST_RESULT(). */
int vr_test_gts_each_scene(void (*fn)(const vr_mesh *m, const char *name, void *ctx), void *ctx);

/* A random, well-formed stream of n strip triangles in `mode`, deterministic in `seed`. */
vr_status vr_test_gts_random_stream(vr_gts *g, uint32_t n, vr_gts_restart mode, uint64_t seed);

/* A deep copy of the codes, for mutation tests (free with vr_gts_free). */
vr_status vr_test_gts_copy(vr_gts *dst, const vr_gts *src);

/* Flips `flips` random bits of C, INC and S (xorshift state *x): damage behind valid counts. */
void vr_test_gts_flip_bits(vr_gts *g, uint64_t *x, int flips);

/* Checks an encoding of `m` completely against every CPU decoder; returns the failures. */
int vr_test_gts_check(const vr_gts *g, const vr_gts_map *map, const vr_mesh *m, const char *what);

/* ---- tests/test_raster.c ------------------------------------------------------------------ */

/* Small raster case i (quad, fill-rule, fan, floor, grid, guard, random): a queue allocated here
 * (free with vr_test_raster_queue_free), its triangle count, config and name. VR_ERR_ARG past
 * the last case. */
vr_status vr_test_raster_case(size_t i, vr_queue *q, uint32_t *tri_count, vr_raster_config *cfg,
                              const char **name);
void vr_test_raster_queue_free(vr_queue *q);
/* Large-box case i (full-screen, tiles, overlapping, no-big) for the GPU's --big list / hp paths;
 * `large`: 1920x1080 and 10,000 overlapping triangles, else 320x240 and 300. The same contract
 * as vr_test_raster_case. */
vr_status vr_test_raster_big_case(size_t i, int large, vr_queue *q, uint32_t *tri_count,
                                  vr_raster_config *cfg, const char **name);

#ifdef __cplusplus
}
#endif
#endif
