/* tour_cmd.c - `vreuse tour [SCENE]`, also what bare `vreuse` runs: what vertex reuse buys, on one
 * screen. Every strategy of the reuse/ registry on one scene side by side: batching, shader
 * invocations, shaded per triangle, reuse, the simulator's count checked equal to the CPU
 * twin's, and a time (GPU kernels with cudaEvents when there is a device, else the twin's wall
 * time); the scene's ideal reuse; one PNG with the shaded scene and the per-vertex shading
 * heatmaps of naive, warp and hash (Kenzel et al. 2018, Fig. 7); the commands to try next.
 * Try: `vreuse`, `vreuse tour ../shared/scenes/stanford-bunny.obj --order file,forsyth`.
 */
#include "pipeline/cli/cli.h"
#include "pipeline/cli/commands.h"
#include "pipeline/stage/geometry.h"
#include "raster/raster.h"
#include "scenes/scene.h"
#include "sim/sim.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOUR_GPU_REPS 5 /* timed GPU runs per strategy, after the checked counting run */
#define TOUR_PANELS 4   /* shaded, then the heatmaps of g_heat_strategies */

static const char *const g_heat_strategies[TOUR_PANELS - 1] = {"naive", "warp", "hash"};

/* How a strategy groups indices before it looks for repeated vertices. */
static const char *batching(const vr_reuse_ops *ops)
{
    if (ops->plan)
        return "plan"; /* static batches from a load-time plan: patches, meshlets */
    return ops->dynamic ? "dynamic" : ops->kind == VR_REUSE_WARP ? "static" : "none";
}

/* What one order of the scene is measured with; gpu != NULL times on the device. */
typedef struct tour_run {
    const vr_mesh *mesh;
    const char *label; /* scene column */
    int label_width;   /* its width: the label's, at least 8 */
    const char *order; /* order column */
    vr_geometry *gpu;
} tour_run;

/* One strategy's row: the twin's count (checked against the simulator and, on a device, the
 * GPU's whole result), then the time. Returns 0, or 1 after printing why the row failed. */
static int tour_row(const tour_run *t, const vr_reuse_ops *ops, vr_geometry_result *twin,
                    vr_geometry_result *got)
{
    const vr_mesh *m = t->mesh;
    vr_reuse_params cfg = vr_reuse_params_default();
    cfg.count = 1;
    const double t0 = vr_now_ms();
    if (vr_geometry_ref(twin, ops, m, &cfg) != VR_OK)
        return vr_cli_fail(1, "tour", "%s: %s CPU twin: %s", t->label, ops->name,
                           vr_last_error());
    float ms = (float)(vr_now_ms() - t0);
    const unsigned long long inv = twin->counters.invocations;

    vr_sim_config sc = vr_sim_config_default();
    sc.warp_batch = cfg.batch_indices;
    sc.dyn_max_unique = cfg.max_unique;
    sc.dyn_max_indices = cfg.max_indices;
    vr_sim_result sim;
    if (vr_sim_strategy(&sim, ops->name, m->indices, m->index_count, m->positions,
                        m->vertex_count, &sc, NULL) != VR_OK)
        return vr_cli_fail(1, "tour", "%s: %s simulator: %s", t->label, ops->name,
                           vr_last_error());

    int rc = 0;
    if (t->gpu) {
        /* the counted GPU run must be the twin's result slot by slot before it is timed */
        vr_geometry_diff d;
        if (vr_geometry_run(t->gpu, ops, &cfg, 1, NULL) != VR_OK ||
            vr_geometry_download(t->gpu, got) != VR_OK)
            return vr_cli_fail(1, "tour", "%s: %s on the GPU: %s", t->label, ops->name,
                               vr_last_error());
        if (vr_geometry_compare(&d, got, twin, 0, 1, stderr, ops->name) != 0)
            rc = vr_cli_fail(1, "tour", "%s: %s: the GPU result differs from the CPU twin "
                             "(%llu mismatches)", t->label, ops->name,
                             (unsigned long long)d.mismatches);
        float v[TOUR_GPU_REPS];
        cfg.count = 0;
        for (int r = 0; r < TOUR_GPU_REPS && !rc; ++r)
            if (vr_geometry_run(t->gpu, ops, &cfg, 0, &v[r]) != VR_OK)
                return vr_cli_fail(1, "tour", "%s: %s on the GPU: %s", t->label, ops->name,
                                   vr_last_error());
        ms = rc ? 0 : vr_cli_median_float(v, TOUR_GPU_REPS);
    }
    char b[32], s[32] = "= sim";
    if (sim.shaded_vertices != inv) {
        rc = vr_cli_fail(1, "tour", "%s: %s: the simulator counts %llu invocations, the CPU "
                         "twin %llu", t->label, ops->name,
                         (unsigned long long)sim.shaded_vertices, inv);
        snprintf(s, sizeof s, "!= %llu", (unsigned long long)sim.shaded_vertices);
    }
    printf("%-*s %-8s %-8s %-8s %11s %10.3f %7.3f  %-9s %8.3f%s\n", t->label_width, t->label,
           t->order, ops->name, batching(ops), vr_format_count(b, inv),
           (double)inv / (m->index_count / 3), 1.0 - (double)inv / m->index_count, s, ms,
           rc ? "  FAIL" : "");
    return rc;
}

/* The table of one order: every registry strategy, then the ideal. */
static int tour_table(const tour_run *t)
{
    const vr_mesh *m = t->mesh;
    vr_geometry_result twin, got;
    memset(&got, 0, sizeof got);
    if (vr_geometry_result_alloc(&twin, m->index_count / 3, m->vertex_count) != VR_OK ||
        (t->gpu && vr_geometry_result_alloc(&got, m->index_count / 3, m->vertex_count) != VR_OK)) {
        vr_geometry_result_free(&twin);
        return vr_cli_fail_last("tour");
    }
    printf("%-*s %-8s %-8s %-8s %11s %10s %7s  %-9s %8s\n", t->label_width, "scene", "order",
           "strategy", "batching", "invocations", "shaded/tri", "reuse", "simulator",
           t->gpu ? "gpu_ms" : "cpu_ms");
    int rc = 0;
    for (int k = 0; k < VR_REUSE_KIND_COUNT; ++k) {
        rc |= tour_row(t, &vr_reuse_all[k], &twin, &got);
        vr_progress("tour: strategies", (uint64_t)k + 1, VR_REUSE_KIND_COUNT);
    }
    vr_geometry_result_free(&twin);
    vr_geometry_result_free(&got);
    vr_sim_result ideal;
    if (vr_sim_ideal(&ideal, m->indices, m->index_count, m->vertex_count, NULL) != VR_OK)
        return vr_cli_fail_last("tour");
    char b[32];
    printf("%-*s %-8s %-8s %-8s %11s %10.3f %7.3f  %-9s %8s\n", t->label_width, t->label,
           t->order, "ideal", "-", vr_format_count(b, ideal.shaded_vertices),
           ideal.shaded_per_tri, ideal.reuse, "-", "-");
    return rc;
}

/* ---- the picture -------------------------------------------------------------------------- */

typedef struct tour_image {
    uint8_t *rgba;
    uint32_t width, height;
} tour_image;

static vr_status write_png(const char *file, void *ctx)
{
    const tour_image *im = (const tour_image *)ctx;
    return vr_image_write_png(file, im->rgba, im->width, im->height);
}

/* Text with a one-step dark shadow, readable on the light and on the heatmap panels. */
static void label(const tour_image *im, int x, int y, int scale, const char *text)
{
    const int step = scale > 1 ? scale / 2 : 1;
    vr_image_text(im->rgba, im->width, im->height, x + step, y + step, scale, 0xff000000u, text);
    vr_image_text(im->rgba, im->width, im->height, x, y, scale, 0xffffffffu, text);
}

/* Panel 0 the lit scene, panels 1.. the heatmaps, a legend strip under the heatmaps. */
static int tour_picture(const vr_mesh *m, const char *spec, const char *order, const char *out,
                        uint32_t pw, uint32_t ph, int gpu)
{
    const int s = ph >= 540 ? (int)(ph / 270) : 1; /* text scale: 2s-pixel glyph dots */
    const uint32_t strip = (uint32_t)(30 * s);
    tour_image im = {NULL, pw * TOUR_PANELS, ph + strip};
    vr_render_options o;
    memset(&o, 0, sizeof o);
    o.raster.width = pw;
    o.raster.height = ph;
    o.shade = vr_resolve_params_default();
    vr_camera_fit(&o.camera, m);
    vr_renderer *r = NULL;
    uint8_t *panel = malloc((size_t)pw * ph * 4);
    im.rgba = malloc((size_t)im.width * im.height * 4);
    int rc = 1;
    if (!panel || !im.rgba) {
        vr_cli_fail(1, "tour", "out of memory for a %ux%u picture; use a smaller --size",
                    im.width, im.height);
        goto done;
    }
    vr_image_fill(im.rgba, im.width, im.height, 0, 0, (int)im.width, (int)im.height,
                  o.shade.background);
    if (vr_renderer_create(&r, m, gpu) != VR_OK) {
        vr_cli_fail_last("tour");
        goto done;
    }
    for (int p = 0; p < TOUR_PANELS; ++p) {
        char text[96];
        vr_render_stats st;
        o.mode = p ? VR_SHADE_HEATMAP : VR_SHADE_LAMBERT;
        o.strategy = vr_reuse_find(p ? g_heat_strategies[p - 1] : "hash");
        if (vr_renderer_draw(r, panel, &o, &st) != VR_OK) {
            vr_cli_fail(1, "tour", "picture, %s panel: %s", o.strategy->name, vr_last_error());
            goto done;
        }
        vr_image_blit(im.rgba, im.width, im.height, p * (int)pw, 0, panel, pw, ph);
        if (p)
            snprintf(text, sizeof text, "%s %.2f shaded/tri", o.strategy->name,
                     st.shaded_per_tri);
        else
            snprintf(text, sizeof text, "%s %s", vr_cli_scene_label(spec), order);
        label(&im, p * (int)pw + 8 * s, 8 * s, 2 * s, text);
    }
    /* the legend spans the middle of the heatmap panels; its caption sits under the lit one */
    const int lx = (int)pw + (int)pw / 2, lw = (TOUR_PANELS - 2) * (int)pw;
    vr_image_heat_legend(im.rgba, im.width, im.height, lx, (int)ph + 3 * s, lw, (int)strip - 6 * s,
                         s);
    const char *caption = "shader invocations per vertex";
    label(&im, lx - 6 * s * (int)strlen(caption) - 8 * s, (int)ph + 6 * s, s, caption);
    if (vr_cli_write_via(out, "PNG", write_png, &im) != VR_OK) {
        vr_cli_fail_last("tour");
        goto done;
    }
    printf("picture: %s (%ux%u): the lit scene (%s order), then how often each vertex is shaded "
           "by naive, warp and hash (green 1 -> red 6+)\n", out, im.width, im.height, order);
    rc = 0;
done:
    vr_renderer_destroy(r);
    free(panel);
    free(im.rgba);
    return rc;
}

/* ---- the command -------------------------------------------------------------------------- */

/* `spec` as one shell word: as it is when it holds only safe characters, else single-quoted. */
static const char *shell_word(char *buf, size_t size, const char *spec)
{
    if (strspn(spec, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._/:@+,-=") ==
        strlen(spec))
        return spec;
    size_t n = 0;
    buf[n++] = '\'';
    for (const char *c = spec; *c && n + 6 < size; ++c) {
        if (*c == '\'')
            n += (size_t)snprintf(buf + n, size - n, "'\\''");
        else
            buf[n++] = *c;
    }
    snprintf(buf + n, size - n, "'");
    return buf;
}

static void next_steps(const char *spec)
{
    char w[1100], stem[64];
    const char *scene = shell_word(w, sizeof w, spec);
    /* the GPU numbers mean most on the paper's 7M-triangle sphere */
    const char *big = strcmp(spec, VR_DEFAULT_SCENE) ? scene : "sphere:7M";
    size_t n = 0;
    for (const char *c = vr_cli_scene_label(spec); *c && *c != '.' && n + 1 < sizeof stem; ++c)
        stem[n++] = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
                            (*c >= '0' && *c <= '9') || *c == '-' || *c == '_'
                        ? *c
                        : '_';
    stem[n] = '\0';
    char cmd[4][2400];
    snprintf(cmd[0], sizeof cmd[0], "vreuse sim %s --order file,forsyth --plot %s.svg", scene,
             stem);
    snprintf(cmd[1], sizeof cmd[1], "vreuse render %s --strategy warp,hash --batches --out "
             "%s-batches.png", scene, stem);
    snprintf(cmd[2], sizeof cmd[2], "vreuse bench %s --strategy all --load simple,heavy", big);
    snprintf(cmd[3], sizeof cmd[3], "vreuse compress %s -o %s.gts", scene, stem);
    static const char *const why[4] = {
        "# FIFO/LRU caches of every size against these", "# the batches warp and hash form",
        "# GPU times per shader load (needs a CUDA device)",
        "# index compression; a .gts file is a SCENE too"};
    int width = 0; /* the comments line up unless a long path would push them far right */
    for (int i = 0; i < 4; ++i)
        width = (int)strlen(cmd[i]) > width ? (int)strlen(cmd[i]) : width;
    if (width > 72)
        width = 0;
    printf("\nnext:\n");
    for (int i = 0; i < 4; ++i)
        printf("  %-*s  %s\n", width, cmd[i], why[i]);
}

static const vr_cli_command g_cmd = {
    "tour", "[SCENE]",
    "What vertex reuse buys: every strategy of the geometry stage on one scene, side by side:\n"
    "how it batches, its vertex-shader invocations, invocations per triangle and reuse (1 -\n"
    "invocations / indices), the simulator's count (= sim: the same as the strategy's CPU\n"
    "twin), and a time: the GPU kernels when there is a CUDA device, else the CPU twin's wall\n"
    "time. Then one picture: the lit scene and per-vertex shading heatmaps of naive, warp and\n"
    "hash. Bare `vreuse` runs `vreuse tour`.\n"
    "\n"
    "SCENE is a file (OBJ, PLY, glTF 2.0, .gts, ...) or a generator: sphere[:N], terrain[:N],\n"
    "foliage[:N], optionally @N to subdivide (default: sphere, 81,920 triangles).",
    NULL, VR_CLI_SCENE_OR_DEFAULT};

int vr_cmd_tour(int argc, char **argv)
{
    vr_cli_orders orders = {{VR_ORDER_FORSYTH}, 1};
    const char *out = "vreuse-tour.png";
    uint32_t size[2] = {480, 360};
    int cpu = 0;
    const vr_cli_opt opts[] = {
        VR_CLI_ORDER(&orders, "forsyth, the paper's preprocessing; one table per order, the "
                              "picture shows the first"),
        VR_CLI_OUT(&out, "the picture (default vreuse-tour.png in the current folder)"),
        VR_CLI_SIZE(size, "480x360: each of the 4 panels"),
        VR_CLI_CPU(&cpu),
        {0}};
    vr_cli_args args;
    VR_CLI_PARSE_OR_RETURN(&g_cmd, opts, argc, argv, &args);
    if ((uint64_t)size[0] * TOUR_PANELS > 4 * (uint64_t)VR_RASTER_MAX_SIZE)
        return vr_cli_fail(VR_CLI_USAGE, "tour", "--size %ux%u: 4 panels of width %u exceed "
                           "%u pixels; at most %ux%u", size[0], size[1], size[0],
                           4 * VR_RASTER_MAX_SIZE, VR_RASTER_MAX_SIZE, size[1]);
    const char *spec = args.v[0];
    const int gpu = !cpu && vr_gpu_available();

    vr_mesh first;
    memset(&first, 0, sizeof first);
    int rc = 0;
    for (int o = 0; o < orders.count && !rc; ++o) {
        vr_mesh m;
        if (vr_mesh_load(&m, spec) != VR_OK) {
            rc = vr_cli_fail_last("tour");
            break;
        }
        if (vr_mesh_reorder(&m, (vr_order)orders.v[o], 1) != VR_OK) {
            rc = vr_cli_fail_last("tour");
            vr_mesh_free(&m);
            break;
        }
        if (o == 0) {
            char t[32], v[32];
            printf("vreuse tour: %s, %s triangles, %s vertices\n", spec,
                   vr_format_count(t, m.index_count / 3), vr_format_count(v, m.vertex_count));
            if (gpu)
                printf("times: GPU kernels on %s (cudaEvents, median of %d runs, counting off)\n",
                       vr_gpu_device_name(), TOUR_GPU_REPS);
            else
                printf("times: CPU twins (%s)\n", cpu ? "--cpu" : vr_gpu_device_name());
            printf("\n");
        }
        const char *label = vr_cli_scene_label(spec);
        const int width = strlen(label) > 8 ? (int)strlen(label) : 8;
        tour_run t = {&m, label, width, vr_order_name((vr_order)orders.v[o]), NULL};
        if (o > 0)
            printf("\n");
        if (gpu && vr_geometry_create(&t.gpu, &m) != VR_OK)
            rc = vr_cli_fail_last("tour");
        if (!rc)
            rc = tour_table(&t);
        vr_geometry_destroy(t.gpu);
        if (o == 0)
            first = m; /* the picture's mesh */
        else
            vr_mesh_free(&m);
    }
    if (!rc) {
        char b[32];
        printf("\nreuse = 1 - invocations / indices (%s indices); ideal: every referenced vertex "
               "shaded once.\n= sim: the simulator (vreuse sim) counts what the strategy's CPU "
               "twin shades.\n", vr_format_count(b, first.index_count));
        if (!gpu) /* the twin builds its plan in the call; the GPU stage keeps it, untimed */
            printf("cpu_ms: the CPU twin's wall time, for patch and meshlet with building the "
                   "plan.\n");
        rc = tour_picture(&first, spec, vr_order_name((vr_order)orders.v[0]), out, size[0],
                          size[1], gpu);
    }
    if (!rc)
        next_steps(spec);
    vr_mesh_free(&first);
    return rc;
}
