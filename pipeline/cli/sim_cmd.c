/* sim_cmd.c - `vreuse sim SCENE...`: loads each scene, reorders its triangles, and simulates
 * the ideal cache, FIFO / LRU post-transform caches, the per-multiprocessor parallel cache,
 * warp voting, dynamic batching (Kenzel et al. 2018, Table 1) and the patch and meshlet plans,
 * printed as aligned tables, CSV, JSON and an SVG plot. Options and loading only; the work is in sim/.
 * Try: `vreuse sim ../shared/scenes/stanford-bunny.obj --order file,forsyth --plot bunny.svg`.
 */
#include "pipeline/cli/cli.h"
#include "pipeline/cli/commands.h"
#include "pipeline/stage/geometry.h"
#include "reuse/patches.h"
#include "scenes/scene.h"
#include "sim/sim.h"

#include <stdlib.h>
#include <string.h>

/* A cache size: a positive whole number with an optional binary K (x1024) or M suffix. */
static int parse_bytes(const char *s, size_t n, uint32_t *out)
{
    char buf[32];
    if (n == 0 || n >= sizeof buf || s[0] < '0' || s[0] > '9')
        return -1;
    memcpy(buf, s, n);
    buf[n] = '\0';
    char *e = NULL;
    unsigned long long v = strtoull(buf, &e, 10);
    if (*e == 'k' || *e == 'K')
        v <<= 10, ++e;
    else if (*e == 'm' || *e == 'M')
        v <<= 20, ++e;
    if (*e || v == 0 || v > 0xFFFFFFFFull)
        return -1;
    *out = (uint32_t)v;
    return 0;
}

/* SIZES: "8,16,32" or "4..4096" (powers of two) or a mix; appends to list. */
static vr_status parse_size_list(const char *s, uint32_t *list, uint32_t *count)
{
    while (*s) {
        const char *comma = strchr(s, ',');
        const char *end = comma ? comma : s + strlen(s);
        const char *dots = strstr(s, "..");
        uint32_t a, b;
        if (dots && dots < end) {
            if (parse_bytes(s, (size_t)(dots - s), &a) ||
                parse_bytes(dots + 2, (size_t)(end - dots - 2), &b) || a > b)
                return vr_set_error(VR_ERR_ARG, "bad range '%.*s' (want A..B, 1 <= A <= B)",
                                    (int)(end - s), s);
            for (uint64_t k = a; k <= b; k *= 2) {
                if (*count == VR_SIM_MAX_CACHES)
                    return vr_set_error(VR_ERR_ARG, "more than %d sizes", VR_SIM_MAX_CACHES);
                list[(*count)++] = (uint32_t)k;
            }
        } else {
            if (parse_bytes(s, (size_t)(end - s), &a))
                return vr_set_error(VR_ERR_ARG, "bad size '%.*s' (a positive count)",
                                    (int)(end - s), s);
            if (*count == VR_SIM_MAX_CACHES)
                return vr_set_error(VR_ERR_ARG, "more than %d sizes", VR_SIM_MAX_CACHES);
            list[(*count)++] = a;
        }
        s = comma ? comma + 1 : end;
    }
    return VR_OK;
}

typedef struct sim_opts {
    vr_sim_config cfg;
    int cache_seen; /* the first --cache replaces the default sweep */
} sim_opts;

/* --cache SPEC: PART['|'PART...] with PART = fifo:SIZES, lru:SIZES or SIZES (both); "none". */
static vr_status parse_cache(const vr_cli_opt *o, const char *v)
{
    sim_opts *s = (sim_opts *)o->dst;
    vr_sim_config *cfg = &s->cfg;
    if (!s->cache_seen) {
        cfg->fifo_count = cfg->lru_count = 0;
        s->cache_seen = 1;
    }
    if (!strcmp(v, "none"))
        return VR_OK;
    char part[256];
    for (const char *p = v; *p;) {
        const char *bar = strchr(p, '|');
        const size_t n = bar ? (size_t)(bar - p) : strlen(p);
        if (n == 0 || n >= sizeof part)
            return vr_set_error(VR_ERR_ARG, "want [fifo:|lru:]SIZES['|'...] or none");
        memcpy(part, p, n);
        part[n] = '\0';
        vr_status st;
        if (!strncmp(part, "fifo:", 5))
            st = parse_size_list(part + 5, cfg->fifo_sizes, &cfg->fifo_count);
        else if (!strncmp(part, "lru:", 4))
            st = parse_size_list(part + 4, cfg->lru_sizes, &cfg->lru_count);
        else if ((st = parse_size_list(part, cfg->fifo_sizes, &cfg->fifo_count)) == VR_OK)
            st = parse_size_list(part, cfg->lru_sizes, &cfg->lru_count);
        if (st != VR_OK)
            return st;
        p = bar ? bar + 1 : p + n;
    }
    return VR_OK;
}

/* --parallel S,W,BYTES... or none */
static vr_status parse_parallel(const vr_cli_opt *o, const char *v)
{
    vr_sim_config *cfg = &((sim_opts *)o->dst)->cfg;
    if (!strcmp(v, "none")) {
        cfg->parallel_count = 0;
        return VR_OK;
    }
    uint32_t field = 0, n = 0;
    for (const char *s = v; *s;) {
        const char *comma = strchr(s, ',');
        const char *end = comma ? comma : s + strlen(s);
        uint32_t x;
        if (parse_bytes(s, (size_t)(end - s), &x) || (field < 2 && strpbrk(s, "kKmM") &&
                                                      strpbrk(s, "kKmM") < end))
            return vr_set_error(VR_ERR_ARG, "bad value '%.*s' (want S,W,BYTES..., e.g. "
                                "28,1024,16K,32K,64K)", (int)(end - s), s);
        if (field == 0)
            cfg->sm_count = x;
        else if (field == 1)
            cfg->wave_size = x;
        else if (n == VR_SIM_MAX_PARALLEL)
            return vr_set_error(VR_ERR_ARG, "more than %d cache sizes", VR_SIM_MAX_PARALLEL);
        else
            cfg->parallel_bytes[n++] = x;
        ++field;
        s = comma ? comma + 1 : end;
    }
    if (n == 0)
        return vr_set_error(VR_ERR_ARG, "want S,W and at least one cache size, e.g. "
                            "28,1024,16K,32K,64K");
    cfg->parallel_count = n;
    return VR_OK;
}

static const char *const g_assign[] = {"contiguous", "roundrobin", "both", NULL};

static const vr_cli_command g_cmd = {
    "sim", "[SCENE...]",
    "Simulates how many vertex-shader invocations each reuse scheme needs, as reuse =\n"
    "1 - invocations / indices: the ideal (every referenced vertex once), k-entry FIFO\n"
    "and LRU post-transform caches, a per-multiprocessor parallel LRU cache (hits only on\n"
    "results of an earlier wave of the same multiprocessor), static batches with warp\n"
    "voting (Algorithm 1), dynamic batches (hash, phash and sort shade the same), and\n"
    "the static plans patch (RXMesh-style patches) and meshlet (meshoptimizer), built\n"
    "from the mesh itself; their preprocessing time is printed beside the reordering's.\n"
    "Per strategy also its shading passes of 32 lanes (warp: its rounds) and the lanes a\n"
    "pass fills: under a compute-bound shader a pass costs the same however few lanes it\n"
    "fills, so naive's passes over a strategy's are the speed-up such a shader allows it.\n"
    "\n"
    "SCENE is a file (OBJ, PLY, glTF 2.0, ...) or a generator: sphere[:N], terrain[:N],\n"
    "foliage[:N], optionally @N to subdivide (default: sphere, 82k triangles).",
    "Vertices are identified as the loader shares them (OBJ corners joined on equal\n"
    "attributes, UV seams split); verts in the table counts referenced vertices.",
    VR_CLI_SCENES_OR_DEFAULT};

/* --patch-builder gpu: the CPU builder's time, and on a GPU the GPU builder's (one warm-up
 * build, then one timed) after its plan is checked equal to the reference's. */
static vr_status sim_patch_times(vr_sim_report *r, const vr_mesh *m, const vr_sim_config *cfg)
{
    vr_batch_plan cpu, gpu, ref;
    const uint32_t nu = cfg->dyn_max_unique, mi = cfg->dyn_max_indices - cfg->dyn_max_indices % 3;
    double t0 = vr_now_ms();
    vr_status st = vr_patches_build(&cpu, m->indices, m->index_count, m->vertex_count, nu, mi);
    r->patch_cpu_seconds = (vr_now_ms() - t0) * 1e-3;
    vr_batch_plan_free(&cpu);
    if (st != VR_OK || !vr_gpu_available())
        return st;
    float ms = 0;
    for (int rep = 0; rep < 2 && st == VR_OK; ++rep) {
        st = vr_patches_build_gpu(&gpu, m->indices, m->index_count, m->vertex_count, nu, mi, &ms);
        if (st == VR_OK && rep == 0)
            vr_batch_plan_free(&gpu);
    }
    if (st != VR_OK)
        return st;
    st = vr_patches_build_gpu_ref(&ref, m->indices, m->index_count, m->vertex_count, nu, mi);
    if (st == VR_OK &&
        (gpu.batch_count != ref.batch_count ||
         memcmp(gpu.starts, ref.starts, ((size_t)ref.batch_count + 1) * 4) != 0 ||
         memcmp(gpu.tri_order, ref.tri_order, (size_t)ref.triangle_count * 4) != 0))
        st = vr_set_error(VR_ERR_FORMAT, "the GPU patch builder's plan differs from its CPU "
                          "reference (%u / %u batches); please report it", gpu.batch_count,
                          ref.batch_count);
    r->patch_gpu_seconds = st == VR_OK ? ms * 1e-3 : 0;
    vr_batch_plan_free(&gpu);
    vr_batch_plan_free(&ref);
    return st;
}

/* One scene: every order, simulated from a copy of the file-order index buffer. */
static int sim_scene(const char *spec, const vr_cli_orders *orders, uint64_t seed,
                     const vr_sim_config *cfg_in, const vr_cli_limits *limits,
                     vr_sim_report *reports, const char **report_spec, uint32_t *report_count)
{
    vr_sim_config scene_cfg = *cfg_in;
    const vr_sim_config *cfg = &scene_cfg;
    vr_mesh mesh;
    if (vr_mesh_load(&mesh, spec) != VR_OK)
        return vr_cli_fail_last("sim");
    int rc = 0;
    for (int o = 0; o < orders->count; ++o) {
        /* Each order starts from the file order; reorder replaces the index array. +fetch
         * renumbers vertices and replaces the vertex arrays, so the copy shares none of them:
         * the simulator needs indices, and positions for the meshlet plan (copied too). */
        vr_mesh m = mesh;
        const size_t pos_bytes = (size_t)mesh.vertex_count * 3 * sizeof(float);
        m.indices = malloc((size_t)mesh.index_count * sizeof *m.indices);
        m.positions = cfg->meshlet ? malloc(pos_bytes + 1) : NULL;
        m.normals = m.texcoords = NULL;
        if (!m.indices || (cfg->meshlet && !m.positions)) {
            free(m.indices);
            free(m.positions);
            rc = vr_cli_fail(1, "sim", "%s: out of memory copying %u indices", spec,
                             mesh.index_count);
            break;
        }
        memcpy(m.indices, mesh.indices, (size_t)mesh.index_count * sizeof *m.indices);
        if (m.positions)
            memcpy(m.positions, mesh.positions, pos_bytes);
        vr_sim_report *r = &reports[*report_count];
        snprintf(r->scene, sizeof r->scene, "%s", vr_cli_scene_label(spec));
        snprintf(r->order, sizeof r->order, "%s", vr_order_name((vr_order)orders->v[o]));
        const double t0 = vr_now_ms();
        vr_status s = vr_mesh_reorder(&m, (vr_order)orders->v[o], seed);
        r->order_seconds = (vr_now_ms() - t0) * 1e-3;
        /* the limits of the mesh as reordered (+fetch may drop unreferenced vertices), as the
         * GPU commands choose them: hash's stand for every dynamic strategy and plan */
        vr_batch_limits dyn, warp;
        if (s == VR_OK &&
            (s = vr_cli_limits_resolve(&dyn, limits, VR_REUSE_HASH, m.index_count / 3,
                                       m.vertex_count, NULL)) == VR_OK &&
            (s = vr_cli_limits_resolve(&warp, limits, VR_REUSE_WARP, m.index_count / 3,
                                       m.vertex_count, NULL)) == VR_OK) {
            scene_cfg.dyn_max_unique = dyn.max_unique;
            scene_cfg.dyn_max_indices = dyn.max_indices;
            scene_cfg.warp_batch = warp.batch_indices;
        }
        if (s == VR_OK)
            s = vr_sim_run_all(r, m.indices, m.index_count, m.positions, m.vertex_count,
                               cfg);
        if (s == VR_OK && cfg->patch && cfg->patch_builder)
            s = sim_patch_times(r, &m, cfg);
        free(m.indices);
        free(m.positions);
        if (s != VR_OK) {
            rc = vr_cli_fail(1, "sim", "%s (%s order): %s", spec, r->order, vr_last_error());
            continue;
        }
        report_spec[(*report_count)++] = spec; /* the plot's file name tells folders apart */
    }
    vr_mesh_free(&mesh);
    return rc;
}

typedef vr_status (*report_writer)(FILE *, const vr_sim_report *, uint32_t,
                                   const vr_sim_config *);

static int write_reports(const char *path, const char *what, report_writer fn,
                         const vr_sim_report *reports, uint32_t count, const vr_sim_config *cfg)
{
    vr_cli_out out;
    vr_status s = vr_cli_out_open(&out, path, what);
    if (s == VR_OK) {
        s = fn(out.f, reports, count, cfg);
        if (s != VR_OK && !ferror(out.f))
            vr_cli_out_abort(&out);
        else /* a write error: the close names the file and keeps what was there */
            s = vr_cli_out_close(&out);
    }
    return s == VR_OK ? 0 : vr_cli_fail_last("sim");
}

typedef struct plot_job {
    const vr_sim_report *report;
    const vr_sim_config *cfg;
} plot_job;

static vr_status write_plot(const char *file, void *ctx)
{
    const plot_job *j = (const plot_job *)ctx;
    FILE *f = fopen(file, "w");
    if (!f)
        return vr_set_error(VR_ERR_IO, "cannot write '%s'", file);
    vr_status s = vr_sim_write_svg(f, j->report, j->cfg);
    if (fclose(f) != 0 && s == VR_OK)
        s = vr_set_error(VR_ERR_IO, "writing '%s' failed", file);
    return s;
}

int vr_cmd_sim(int argc, char **argv)
{
    sim_opts so = {vr_sim_config_default(), 0};
    vr_cli_limits limits = {0};
    vr_cli_orders orders = {{VR_ORDER_FORSYTH}, 1};
    uint64_t seed = 1;
    int assign = 0, no_warp = 0, no_dyn = 0, no_patch = 0, no_meshlet = 0;
    uint32_t threads = 0;
    const char *csv = NULL, *json = NULL, *plot = NULL;
    const vr_cli_opt opts[] = {
        VR_CLI_ORDER(&orders, "forsyth, the paper's preprocessing"),
        VR_CLI_SEED(&seed),
        {"cache", 0, "SPEC",
         "FIFO / LRU sweep: [fifo:|lru:]SIZES, SIZES comma separated entries or A..B "
         "for powers of two (default 4..4096 for both); 'fifo:8,16|lru:32' or repeated "
         "--cache for both policies; once given, only the named policies run; 'none'",
         parse_cache, &so, 0, 0, 0, 0, NULL},
        {"parallel", 0, "S,W,BYTES...",
         "parallel cache: S multiprocessors, W concurrent invocations each, cache bytes per "
         "multiprocessor (K = 1024; default 28,1024,16K,32K,64K); 'none' to skip",
         parse_parallel, &so, 0, 0, 0, 0, NULL},
        {"vertex-bytes", 0, "N", "bytes per cached vertex in the parallel cache (default 32)",
         vr_cli_parse_u32, &so.cfg.vertex_bytes, 0, 1, 65536, 0, NULL},
        {"assign", 0, "A",
         "how indices reach the multiprocessors: contiguous (S runs of the buffer, "
         "default), roundrobin (W-index chunks dealt in turn), both",
         vr_cli_parse_choice, &assign, 0, 0, 0, 0, g_assign},
        VR_CLI_LIMITS(&limits),
        VR_CLI_SMS(&limits, "whose batches this reproduces exactly (not --parallel's count)"),
        VR_CLI_WARP_BATCH(&limits.given.batch_indices),
        {"warp-lanes", 0, "N", "warp voting: lanes per warp, 3..1024 (default 32)",
         vr_cli_parse_u32, &so.cfg.warp_size, 0, 3, 1024, 0, NULL},
        VR_CLI_NU(&limits.given.max_unique),
        VR_CLI_MAX_INDICES(&limits.given.max_indices),
        {"no-warp", 0, NULL, "do not simulate warp voting", NULL, &no_warp, 1, 0, 0, 0, NULL},
        {"no-dyn", 0, NULL, "do not simulate dynamic batches", NULL, &no_dyn, 1, 0, 0, 0, NULL},
        {"no-patch", 0, NULL, "do not build and simulate the patch plan", NULL, &no_patch, 1, 0, 0,
         0, NULL},
        VR_CLI_PATCH_BUILDER(&so.cfg.patch_builder,
                             "with gpu the preprocessing table adds the CPU and GPU builders' "
                             "times"),
        {"no-meshlet", 0, NULL, "do not build and simulate the meshlet plan", NULL, &no_meshlet,
         1, 0, 0, 0, NULL},
        VR_CLI_CSV(&csv),
        {"json", 0, "FILE", "also write JSON to FILE ('-': standard output)", vr_cli_parse_path,
         &json, 0, 0, 0, 0, NULL},
        {"plot", 0, "FILE.svg",
         "SVG plot of reuse against cache size; with several scenes or orders one "
         "file each, named FILE-<scene>-<order>.svg",
         vr_cli_parse_path, &plot, 0, 0, 0, 0, NULL},
        {"threads", 0, "N", "worker threads, 0..16 (default 0: one per CPU, at most 8)",
         vr_cli_parse_u32, &threads, 0, 0, VR_SIM_MAX_THREADS, 0, NULL},
        {0}};
    vr_cli_args args;
    VR_CLI_PARSE_OR_RETURN(&g_cmd, opts, argc, argv, &args);
    vr_sim_config cfg = so.cfg;
    cfg.assign_mask = assign == 2 ? (1u << VR_SIM_CONTIGUOUS) | (1u << VR_SIM_ROUNDROBIN)
                                  : 1u << (assign == 1 ? VR_SIM_ROUNDROBIN : VR_SIM_CONTIGUOUS);
    cfg.warp = !no_warp;
    cfg.dynamic = !no_dyn;
    cfg.patch = !no_patch;
    cfg.meshlet = !no_meshlet;
    cfg.threads = threads;
    if (limits.given.batch_indices)
        cfg.warp_batch = limits.given.batch_indices;
    if (limits.given.max_unique)
        cfg.dyn_max_unique = limits.given.max_unique;
    if (limits.given.max_indices)
        cfg.dyn_max_indices = limits.given.max_indices;
    if (plot && !strcmp(plot, "-"))
        return vr_cli_fail(VR_CLI_USAGE, "sim", "--plot needs a file name");
    if (vr_sim_config_check(&cfg) != VR_OK)
        return vr_cli_fail(VR_CLI_USAGE, "sim", "%s", vr_last_error());

    const char *const *scenes = (const char *const *)args.v;
    const int scene_count = args.count;
    const size_t max_reports = (size_t)scene_count * (size_t)orders.count;
    vr_sim_report *reports = calloc(max_reports, sizeof *reports);
    const char **report_spec = calloc(max_reports, sizeof *report_spec);
    if (!reports || !report_spec) {
        free(reports);
        free(report_spec);
        return vr_cli_fail(1, "sim", "out of memory");
    }
    uint32_t report_count = 0;
    int rc = 0;
    for (int i = 0; i < scene_count; ++i)
        rc |= sim_scene(scenes[i], &orders, seed, &cfg, &limits, reports, report_spec,
                        &report_count);

    const int stdout_taken = (csv && !strcmp(csv, "-")) || (json && !strcmp(json, "-"));
    if (report_count && !stdout_taken)
        vr_sim_print_table(stdout, reports, report_count, &cfg);
    if (report_count && csv)
        rc |= write_reports(csv, "CSV", vr_sim_write_csv, reports, report_count, &cfg);
    if (report_count && json)
        rc |= write_reports(json, "JSON", vr_sim_write_json, reports, report_count, &cfg);
    for (uint32_t r = 0; plot && r < report_count; ++r) {
        char *path = report_count > 1
                         ? vr_cli_output_path(plot, report_spec[r], reports[r].order)
                         : strdup(plot);
        plot_job job = {&reports[r], &cfg};
        if (!path) {
            rc = vr_cli_fail(1, "sim", "out of memory");
        } else if (vr_cli_write_via(path, "plot", write_plot, &job) != VR_OK) {
            rc = vr_cli_fail_last("sim");
        } else if (!vr_progress_quiet) {
            fprintf(stderr, "vreuse sim: wrote %s\n", path);
        }
        free(path);
    }
    free(report_spec);
    free(reports);
    return rc ? 1 : 0;
}
