/* gts_bench_cmd.c - `vreuse bench-gts`: the geometry stage fed from compressed index buffers.
 * Per scene and restart mode the mesh is encoded (pipeline/gts.h), then on the GPU (a) the stage
 * runs on the encoder's reordered plain index buffer, (b) the GTS decoder writes that buffer
 * on the device and the same strategy runs on it (vr_geometry_set_device_indices; dynamic batch
 * starts computed once on the host: load-time analysis), and (c) for strategies that decode per
 * batch (hash) each block decodes its own batch from the stream in shared memory, so no index
 * buffer is read at all (vr_geometry_set_gts; seeds computed with the batch starts). Results of
 * (a), (b) and (c) must be equal before anything is timed. cudaEvents, one warm-up, median of
 * --reps, nothing allocated.
 * Try: `vreuse bench-gts sphere:7M --strategy hash --load simple`.
 */
#include "pipeline/cli/cli.h"
#include "pipeline/cli/commands.h"
#include "pipeline/stage/geometry.h"
#include "raster/raster.h"
#include "pipeline/gts/gts.h"
#include "pipeline/gts/gts_batch.h"
#include "scenes/scene.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct vr_gb_opts {
    char **scenes; /* operands, in command-line order */
    int scene_count;
    vr_cli_choices modes; /* vr_gts_restart values, in the order given */
    vr_cli_strategies strategies;
    vr_cli_loads loads;
    vr_cli_u32s blocks;
    uint32_t max_unique, max_indices;
    int reps;
} vr_gb_opts;

/* One (scene, mode, block, load, strategy) row. */
typedef struct vr_gb_row {
    const char *scene;
    vr_gts_restart mode;
    const vr_reuse_ops *ops;
    const char *load;
    uint32_t block;
    uint32_t triangles, strip_triangles;
    int ok;
    uint64_t invocations;
    double decode_ms, stage_ms, total_ms, plain_ms; /* medians; total = median of per-rep sums */
    int fused;                                      /* the strategy decodes per batch */
    double fused_ms;                                /* median of the per-batch-decode runs */
    double gts_bytes, plain_bytes;                  /* index data each path reads */
    double seed_bytes;                              /* seeds + batch starts of the fused path */
} vr_gb_row;

#ifdef VR_HAVE_CUDA
/* ---- output -------------------------------------------------------------------------------- */

static const char *vr_gb_mode_name(vr_gts_restart mode)
{
    return mode == VR_GTS_RESTART_CODE ? "R" : "deg";
}

static const char *const g_gb_header =
    "scene,restart,strategy,load,block,triangles,strip_triangles,invocations,decode_ms,stage_ms,"
    "total_ms,plain_ms,overhead,gts_index_bytes,plain_index_bytes,index_bytes_ratio,gtri_s,"
    "gtri_s_plain,fused_ms,fused_overhead,gtri_s_fused,seed_bytes";

static void vr_gb_print_rows(FILE *f, const vr_gb_row *rows, size_t n, int csv)
{
    if (csv)
        fprintf(f, "%s\n", g_gb_header);
    else
        fprintf(f, "%-20s %-4s %-6s %-8s %5s %10s %9s %9s %9s %9s %8s %9s %8s %11s %11s %7s "
                "%7s %7s\n", "scene", "mode", "strat", "load", "block", "triangles", "decode",
                "stage", "total",
                "plain", "overhead", "fused", "fused/pl", "gts_bytes", "plain_bytes", "Gtri/s",
                "plain", "fused");
    for (size_t i = 0; i < n; ++i) {
        const vr_gb_row *r = &rows[i];
        const char *mode = vr_gb_mode_name(r->mode);
        if (csv) { /* the scene label may hold a comma: quoted then */
            vr_cli_csv_field(f, r->scene);
            fprintf(f, ",%s,%s,%s,%u,", mode, r->ops->name, r->load, r->block);
        }
        if (!r->ok) {
            if (csv)
                fprintf(f, "%u,%u,,,,,,,%.0f,%.0f,,,,,,,\n", r->triangles, r->strip_triangles,
                        r->gts_bytes, r->plain_bytes);
            else
                fprintf(f, "%-20s %-4s %-6s %-8s %5u %10u FAIL\n", r->scene, mode, r->ops->name,
                        r->load, r->block, r->triangles);
            continue;
        }
        const double gtri = r->triangles / (r->total_ms * 1e-3) * 1e-9;
        const double gtri_plain = r->triangles / (r->plain_ms * 1e-3) * 1e-9;
        const double gtri_fused = r->fused ? r->triangles / (r->fused_ms * 1e-3) * 1e-9 : 0;
        char fused[3][32] = {"", "", ""};
        if (r->fused) { /* CSV keeps more digits than the table */
            snprintf(fused[0], sizeof fused[0], csv ? "%.5f" : "%.4f", r->fused_ms);
            snprintf(fused[1], sizeof fused[1], csv ? "%.4f" : "%.2f", r->fused_ms / r->plain_ms);
            snprintf(fused[2], sizeof fused[2], csv ? "%.4f" : "%.2f", gtri_fused);
        }
        if (csv)
            fprintf(f, "%u,%u,%llu,%.5f,%.5f,%.5f,%.5f,%.4f,%.0f,%.0f,%.4f,%.4f,%.4f,%s,%s,%s,"
                    "%.0f\n", r->triangles, r->strip_triangles,
                    (unsigned long long)r->invocations, r->decode_ms, r->stage_ms, r->total_ms,
                    r->plain_ms, r->total_ms / r->plain_ms, r->gts_bytes, r->plain_bytes,
                    r->gts_bytes / r->plain_bytes, gtri, gtri_plain, fused[0], fused[1], fused[2],
                    r->seed_bytes);
        else
            fprintf(f, "%-20.20s %-4s %-6s %-8.8s %5u %10u %9.4f %9.4f %9.4f %9.4f %7.2fx "
                    "%9.9s %7.7s%s %11.0f %11.0f %7.2f %7.2f %7.7s\n", r->scene, mode,
                    r->ops->name, r->load, r->block, r->triangles, r->decode_ms, r->stage_ms, r->total_ms, r->plain_ms,
                    r->total_ms / r->plain_ms, r->fused ? fused[0] : "-",
                    r->fused ? fused[1] : "-", r->fused ? "x" : " ", r->gts_bytes,
                    r->plain_bytes, gtri, gtri_plain, r->fused ? fused[2] : "-");
    }
}

/* The shared run metadata (vr_cli_meta_write), then what only bench-gts records. */
static void vr_gb_print_meta(FILE *f, const vr_cli_meta *m, const vr_gb_opts *o, const char *pre)
{
    vr_cli_meta_write(f, m, pre);
    fprintf(f, "%sblock ", pre);
    for (int b = 0; b < o->blocks.count; ++b)
        fprintf(f, "%s%u", b ? "," : "", o->blocks.v[b]);
    fprintf(f, ", dynamic batches N_u %u / %u indices, median of %d reps after one warm-up, "
            "staged queue stores, no culling, no counting; plain run, decode and compressed run "
            "interleaved per rep, then the fused reps\n",
            o->max_unique, o->max_indices, o->reps);
    fprintf(f, "%sdecode_ms: GPU GTS decode (one event pair around all passes); stage_ms: the "
            "strategy on the decoded device buffer; total_ms: median of per-rep decode + stage "
            "(the decoder's error-flag readback between them is not counted); plain_ms: the "
            "strategy on the uploaded plain index buffer of the same reordered mesh; overhead = "
            "total / plain; fused_ms: the strategy decoding each batch from the stream in shared "
            "memory (no index buffer; hash only), fused_overhead = fused / plain\n", pre);
    fprintf(f, "%sgts_index_bytes = 4 x (C + INC + S words) read by the decoder; "
            "plain_index_bytes = 4 B x 3 x strip_triangles read by the plain stage (deg. "
            "includes the restart-emulation triangles); Gtri/s = source triangles / total_ms "
            "(gtri_s_plain: / plain_ms, gtri_s_fused: / fused_ms); seed_bytes: the fused path's "
            "per-batch seeds (40 B) and batch starts (4 B), read on top of the gts bytes\n", pre);
}

/* ---- the measurement ----------------------------------------------------------------------- */

/* Everything one (scene, mode) needs on the host and the device. */
typedef struct vr_gb_ctx {
    vr_gts gts;
    vr_gts_map map;
    vr_mesh mesh;        /* the encoder's reordered mesh (CPU-decoded), permuted vertex data */
    vr_gts_gpu *dec;
    vr_geometry *geo;
    vr_geometry_result want, got;
    float *ms;           /* 5 x reps timings */
    uint32_t *host_idx;  /* 3 x strip triangles: the GPU decoder's output, checked */
} vr_gb_ctx;

static void vr_gb_ctx_free(vr_gb_ctx *c)
{
    vr_geometry_result_free(&c->want);
    vr_geometry_result_free(&c->got);
    vr_geometry_destroy(c->geo);
    vr_gts_gpu_destroy(c->dec);
    vr_mesh_free(&c->mesh);
    vr_gts_free(&c->gts);
    vr_gts_map_free(&c->map);
    free(c->ms);
    free(c->host_idx);
    memset(c, 0, sizeof *c);
}

/* Encodes `src`, decodes on the CPU and the GPU (both must return the encoder's triangles) and
 * uploads the reordered mesh. Prints why not and returns nonzero on failure. */
static int vr_gb_prepare(vr_gb_ctx *c, const vr_mesh *src, vr_gts_restart mode, int reps,
                         const char *name)
{
    memset(c, 0, sizeof *c);
    vr_gts_options opt = vr_gts_options_default();
    opt.restart = mode;
    opt.keep_vertex_data = 1;
    vr_status st = vr_gts_encode(&c->gts, &c->map, src, &opt);
    if (st == VR_OK)
        st = vr_gts_decode_mesh(&c->mesh, &c->gts); /* CPU reference decoder */
    if (st != VR_OK) {
        return vr_cli_fail(1, "bench-gts", "%s (%s): %s", name, vr_gb_mode_name(mode),
                           vr_last_error());
    }
    const size_t ic = 3 * (size_t)c->gts.strip_triangle_count;
    if (memcmp(c->mesh.indices, c->map.indices, ic * sizeof(uint32_t))) {
        fprintf(stderr, "FAIL %s (%s): the CPU decoder does not return the encoder's triangles\n",
                name, vr_gb_mode_name(mode));
        return 1;
    }
    c->ms = malloc(5 * (size_t)reps * sizeof *c->ms);
    c->host_idx = malloc(ic * sizeof(uint32_t));
    if (!c->ms || !c->host_idx) {
        return vr_cli_fail(1, "bench-gts", "%s: out of host memory", name);
    }
    const uint32_t tris = c->mesh.index_count / 3;
    if ((st = vr_gts_gpu_create(&c->dec, &c->gts)) != VR_OK ||
        (st = vr_geometry_create(&c->geo, &c->mesh)) != VR_OK ||
        (st = vr_geometry_result_alloc(&c->want, tris, c->mesh.vertex_count)) != VR_OK ||
        (st = vr_geometry_result_alloc(&c->got, tris, c->mesh.vertex_count)) != VR_OK ||
        (st = vr_gts_gpu_decode(c->dec, NULL, 0)) != VR_OK ||
        (st = vr_gts_gpu_download(c->host_idx, c->dec)) != VR_OK) {
        return vr_cli_fail(1, "bench-gts", "%s (%s): %s", name, vr_gb_mode_name(mode),
                           vr_last_error());
    }
    if (memcmp(c->host_idx, c->map.indices, ic * sizeof(uint32_t))) {
        size_t k = 0;
        while (c->host_idx[k] == c->map.indices[k])
            ++k;
        fprintf(stderr, "FAIL %s (%s): GPU-decoded index %zu is %u, the encoder wrote %u\n", name,
                vr_gb_mode_name(mode), k, c->host_idx[k], c->map.indices[k]);
        return 1;
    }
    return 0;
}

/* The compressed path's queue, counters and shade counts must equal the plain path's. */
static int vr_gb_validate(vr_gb_ctx *c, const vr_reuse_ops *ops, const vr_reuse_params *base,
                          uint64_t *invocations, const char *what)
{
    vr_reuse_params cfg = *base;
    cfg.count = 1;
    cfg.cull = 0;
    vr_status st;
    vr_geometry_set_device_indices(c->geo, NULL);
    if ((st = vr_geometry_run(c->geo, ops, &cfg, 1, NULL)) == VR_OK &&
        (st = vr_geometry_download(c->geo, &c->want)) == VR_OK &&
        (st = vr_gts_gpu_decode(c->dec, NULL, 0)) == VR_OK) {
        vr_geometry_set_device_indices(c->geo, vr_gts_gpu_device_indices(c->dec));
        if ((st = vr_geometry_run(c->geo, ops, &cfg, 1, NULL)) == VR_OK)
            st = vr_geometry_download(c->geo, &c->got);
    }
    vr_geometry_set_device_indices(c->geo, NULL);
    if (st != VR_OK) {
        fprintf(stderr, "%s: %s\n", what, vr_last_error());
        return 0;
    }
    vr_geometry_diff d;
    if (vr_geometry_compare(&d, &c->got, &c->want, 0, 1, stderr, what) != 0) {
        fprintf(stderr, "%s: compressed path differs from the plain path in %llu places\n", what,
                (unsigned long long)d.mismatches);
        return 0;
    }
    if (ops->gts_input) { /* (c): per-batch decode inside the stage */
        if ((st = vr_geometry_set_gts(c->geo, &c->gts)) == VR_OK &&
            (st = vr_geometry_run(c->geo, ops, &cfg, 1, NULL)) == VR_OK)
            st = vr_geometry_download(c->geo, &c->got);
        vr_geometry_set_gts(c->geo, NULL);
        if (st != VR_OK) {
            fprintf(stderr, "%s (per-batch decode): %s\n", what, vr_last_error());
            return 0;
        }
        if (vr_geometry_compare(&d, &c->got, &c->want, 0, 1, stderr, what) != 0) {
            fprintf(stderr, "%s: per-batch decode differs from the plain path in %llu places\n",
                    what, (unsigned long long)d.mismatches);
            return 0;
        }
    }
    *invocations = c->want.counters.invocations;
    return 1;
}

/* One warm-up, then `reps` x (plain run, decode, compressed run). */
static vr_status vr_gb_time(vr_gb_ctx *c, const vr_reuse_ops *ops, const vr_reuse_params *cfg,
                            int reps, vr_gb_row *r)
{
    const uint32_t *d_decoded = vr_gts_gpu_device_indices(c->dec);
    float *plain = c->ms, *decode = c->ms + reps, *stage = c->ms + 2 * reps,
          *total = c->ms + 3 * reps;
    vr_status st = VR_OK;
    for (int rep = -1; rep < reps && st == VR_OK; ++rep) {
        float p = 0, s = 0;
        vr_gts_gpu_timing t;
        vr_geometry_set_device_indices(c->geo, NULL);
        if ((st = vr_geometry_run(c->geo, ops, cfg, 0, &p)) != VR_OK)
            break;
        /* the decoder synchronizes its stream before returning: the indices are complete */
        if ((st = vr_gts_gpu_decode(c->dec, &t, 0)) != VR_OK)
            break;
        vr_geometry_set_device_indices(c->geo, d_decoded);
        if ((st = vr_geometry_run(c->geo, ops, cfg, 0, &s)) != VR_OK)
            break;
        if (rep >= 0) { /* rep -1 is the warm-up (workspace, batch starts, caches) */
            plain[rep] = p;
            decode[rep] = t.total_ms;
            stage[rep] = s;
            total[rep] = t.total_ms + s;
        }
    }
    vr_geometry_set_device_indices(c->geo, NULL);
    if (st != VR_OK)
        return st;
    if (r->fused) { /* (c): its own loop, the stream stays uploaded */
        float *fused = c->ms + 4 * reps;
        st = vr_geometry_set_gts(c->geo, &c->gts);
        for (int rep = -1; rep < reps && st == VR_OK; ++rep) {
            float f = 0;
            st = vr_geometry_run(c->geo, ops, cfg, 0, &f);
            if (rep >= 0)
                fused[rep] = f;
        }
        vr_geometry_set_gts(c->geo, NULL);
        if (st != VR_OK)
            return st;
        r->fused_ms = vr_cli_median_float(fused, reps);
    }
    r->plain_ms = vr_cli_median_float(plain, reps);
    r->decode_ms = vr_cli_median_float(decode, reps);
    r->stage_ms = vr_cli_median_float(stage, reps);
    r->total_ms = vr_cli_median_float(total, reps);
    return VR_OK;
}

/* All rows of one scene; returns nonzero when anything failed. */
static int vr_gb_scene(const vr_gb_opts *o, const char *spec, vr_gb_row *rows, size_t *n)
{
    const char *name = vr_cli_scene_label(spec);
    vr_mesh src;
    if (vr_mesh_load(&src, spec) != VR_OK)
        return vr_cli_fail_last("bench-gts");
    int failed = 0;
    for (int k = 0; k < o->modes.count; ++k) {
        const vr_gts_restart mode = (vr_gts_restart)o->modes.v[k];
        const char *mode_name = vr_gb_mode_name(mode);
        vr_gb_ctx c;
        if (vr_gb_prepare(&c, &src, mode, o->reps, name)) {
            vr_gb_ctx_free(&c);
            failed = 1;
            continue;
        }
        const double gts_bytes = 4.0 * ((double)vr_gts_c_words(&c.gts) + vr_gts_inc_words(&c.gts) +
                                        c.gts.s_count);
        const double plain_bytes = 12.0 * c.gts.strip_triangle_count;
        if (!vr_progress_quiet)
            fprintf(stderr, "bench-gts: %s (%s): %u triangles, %u in strips, %u vertices; index "
                    "data %.0f B compressed vs %.0f B plain (%.2f bits/triangle); decoders "
                    "exact\n", name, mode_name, c.gts.triangle_count, c.gts.strip_triangle_count,
                    c.gts.vertex_count, gts_bytes, plain_bytes,
                    8.0 * gts_bytes / c.gts.triangle_count);
        vr_reuse_params base = vr_reuse_params_default();
        vr_camera_orbit_shader(&base.shader, &c.mesh, 0.5f);
        base.max_unique = o->max_unique;
        base.max_indices = o->max_indices;
        uint32_t *starts = NULL, batches = 0;
        if (vr_geometry_dyn_batches(&starts, &batches, &c.mesh, base.max_unique,
                                    base.max_indices) != VR_OK)
            batches = 0;
        free(starts);
        const double seed_bytes = batches * (sizeof(vr_gts_seed) + 4.0) + 4.0;
        const vr_cli_strategies *st = &o->strategies;
        for (int b = 0; b < o->blocks.count; ++b) {
            base.block_size = o->blocks.v[b];
            uint64_t invocations[VR_REUSE_KIND_COUNT];
            int valid[VR_REUSE_KIND_COUNT];
            for (int s = 0; s < st->count; ++s) {
                char what[256];
                snprintf(what, sizeof what, "FAIL %s on %s (%s), block %u", st->v[s]->name, name,
                         mode_name, base.block_size);
                valid[s] = vr_gb_validate(&c, st->v[s], &base, &invocations[s], what);
                if (valid[s] && !vr_progress_quiet)
                    fprintf(stderr, "bench-gts: %s (%s), block %u: %s: compressed == plain "
                            "(%llu invocations)\n", name, mode_name, base.block_size,
                            st->v[s]->name, (unsigned long long)invocations[s]);
            }
            for (int l = 0; l < o->loads.count; ++l)
                for (int s = 0; s < st->count; ++s) {
                    vr_gb_row *r = &rows[(*n)++];
                    memset(r, 0, sizeof *r);
                    r->scene = name;
                    r->mode = mode;
                    r->ops = st->v[s];
                    r->load = o->loads.name[l];
                    r->block = base.block_size;
                    r->triangles = c.gts.triangle_count;
                    r->strip_triangles = c.gts.strip_triangle_count;
                    r->gts_bytes = gts_bytes;
                    r->plain_bytes = plain_bytes;
                    r->invocations = invocations[s];
                    r->fused = r->ops->gts_input;
                    r->seed_bytes = r->fused ? seed_bytes : 0;
                    if (!valid[s]) {
                        failed = 1;
                        continue;
                    }
                    vr_reuse_params cfg = base;
                    cfg.shader.loop_iterations = o->loads.v[l];
                    if (vr_gb_time(&c, r->ops, &cfg, o->reps, r) != VR_OK) {
                        fprintf(stderr, "FAIL %s on %s (%s), block %u, load %s: %s\n",
                                r->ops->name, name, mode_name, r->block, r->load,
                                vr_last_error());
                        failed = 1;
                        continue;
                    }
                    r->ok = 1;
                }
        }
        vr_gb_ctx_free(&c);
    }
    vr_mesh_free(&src);
    return failed;
}
#endif /* VR_HAVE_CUDA */

static const vr_cli_command g_cmd = {
    "bench-gts", "SCENE...",
    "Times the geometry stage fed from a compressed index buffer: GPU GTS decode into a\n"
    "device index buffer, then the strategy on it, against the same strategy on the plain\n"
    "(uncompressed) buffer of the encoder's reordered mesh, and, for hash, against per-batch\n"
    "decoding inside the stage (no index buffer at all). All must agree exactly before\n"
    "anything is timed. Rows per scene, restart mode, block, load and strategy. Needs a CUDA\n"
    "build and device.\n"
    "\n"
    "SCENE is a file, a .gts file or a generator (sphere:7M); the mesh is encoded as loaded\n"
    "(file order), like `vreuse compress`.",
    "Columns: bench/README.md (Compressed input).",
    VR_CLI_SCENES};

int vr_cmd_bench_gts(int argc, char **argv)
{
    vr_gb_opts o;
    memset(&o, 0, sizeof o);
    o.modes = (vr_cli_choices){{VR_GTS_RESTART_CODE, VR_GTS_RESTART_DEGENERATE}, 2};
    static const vr_reuse_kind default_strategies[] = {VR_REUSE_NAIVE, VR_REUSE_WARP,
                                                       VR_REUSE_HASH};
    for (int k = 0; k < 3; ++k)
        o.strategies.v[o.strategies.count++] = &vr_reuse_all[default_strategies[k]];
    static const int default_loads[] = {0, 3}; /* simple, heavy */
    for (int k = 0; k < 2; ++k) {
        o.loads.v[o.loads.count] = vr_load_iterations[default_loads[k]];
        snprintf(o.loads.name[o.loads.count++], sizeof o.loads.name[0], "%s",
                 vr_load_names[default_loads[k]]);
    }
    o.blocks = (vr_cli_u32s){{256}, 1};
    o.max_unique = VR_NU_DEFAULT;
    o.max_indices = VR_MAX_INDICES_DEFAULT;
    o.reps = 20;
    const char *csv = NULL;
    const vr_cli_opt opts[] = {
        VR_CLI_RESTART(&o.modes, "all: r, then deg"),
        VR_CLI_STRATEGY(&o.strategies, "naive,warp,hash"),
        VR_CLI_LOAD(&o.loads, "simple,heavy"),
        VR_CLI_BLOCK(&o.blocks, "256"),
        VR_CLI_NU(&o.max_unique),
        VR_CLI_MAX_INDICES(&o.max_indices),
        VR_CLI_REPS(&o.reps, "20"),
        VR_CLI_CSV(&csv),
        {0}};
    vr_cli_args args;
    VR_CLI_PARSE_OR_RETURN(&g_cmd, opts, argc, argv, &args);
    o.scenes = args.v;
    o.scene_count = args.count;
    for (int i = 0; i < o.scene_count; ++i)
        vr_cli_input(o.scenes[i]);
    vr_cli_out out;
    memset(&out, 0, sizeof out);
    if (csv && vr_cli_out_open(&out, csv, "CSV", 0) != VR_OK)
        return vr_cli_fail_last("bench-gts");
#ifndef VR_HAVE_CUDA
    vr_cli_out_abort(&out);
    return vr_cli_fail(1, "bench-gts", "this build has no CUDA (configure with nvcc and "
                       "-DVR_CUDA=ON); `vreuse compress` encodes and checks the codec on the "
                       "CPU.");
#else
    if (!vr_gpu_available()) {
        vr_cli_out_abort(&out);
        return vr_cli_fail(1, "bench-gts", "%s. bench-gts times the GPU decoder and stage and "
                           "needs a CUDA device; `vreuse compress` checks the codec on the CPU.",
                           vr_gpu_device_name());
    }
    vr_cli_meta meta;
    vr_cli_meta_fill(&meta, argc, argv);
    const size_t max_rows = (size_t)o.scene_count * o.modes.count * o.blocks.count *
                            o.loads.count * o.strategies.count;
    vr_gb_row *rows = calloc(max_rows + 1, sizeof *rows);
    if (!rows) {
        vr_cli_out_abort(&out);
        return vr_cli_fail(1, "bench-gts", "out of memory for %zu rows", max_rows);
    }
    size_t n = 0;
    int failed = 0;
    for (int s = 0; s < o.scene_count; ++s)
        failed |= vr_gb_scene(&o, o.scenes[s], rows, &n);
    if (!out.is_stdout) { /* with --csv - the CSV alone goes to standard output */
        vr_gb_print_meta(stdout, &meta, &o, "# ");
        vr_gb_print_rows(stdout, rows, n, 0);
    }
    if (out.f) {
        vr_gb_print_meta(out.f, &meta, &o, "# ");
        vr_gb_print_rows(out.f, rows, n, 1);
        if (vr_cli_out_close(&out) != VR_OK)
            failed = vr_cli_fail_last("bench-gts");
    }
    free(rows);
    return failed ? 1 : 0;
#endif
}
