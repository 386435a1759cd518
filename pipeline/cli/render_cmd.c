/* render_cmd.c - `vreuse render SCENE... --strategy S[,S...] [--heatmap|--batches] --out F.png`:
 * loads and reorders each scene, fits the orbit camera, runs the geometry stage, rasterizes and
 * resolves (render.c), writes a PNG and prints per-stage times and invocation counts. Several
 * strategies give side-by-side panels (the layout of Kenzel et al. 2018, Fig. 7). `--reps N`
 * times N frames per scene, strategy and load after a warm-up and reports medians per stage;
 * `--csv F` appends them. Without a CUDA device it runs the CPU twins and says so.
 * Try: `vreuse render bunny.obj --order forsyth --strategy naive,warp,hash --heatmap --out h.png`.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime, strtok_r */
#include "pipeline/cli/commands.h"
#include "pipeline/stage/geometry.h"
#include "pipeline/gts/gts.h"
#include "scenes/scene.h"
#include "raster/raster.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define VR_RENDER_MAX_LOADS 8

static void usage(FILE *f)
{
    fprintf(f,
            "usage: vreuse render [SCENE...] [options]\n"
            "\n"
            "Renders each SCENE through the geometry stage and the rasterizer and writes a PNG.\n"
            "\n"
            "  SCENE          a file or a generator (see `vreuse --help`); default sphere\n"
            "  --strategy S   naive, warp, hash, phash, sort, multi, a comma list or all;\n"
            "                 several give side-by-side panels (default hash)\n"
            "  --load L,...   synthetic shader load: dependent FMA steps per vertex, a comma\n"
            "                 list for --reps (default 0: the simple shader; the image uses the first)\n"
            "  --order O      triangle order: file (default), forsyth, tipsify, random\n"
            "  --heatmap      colour by per-vertex shading count: green 1 -> yellow -> red 6+\n"
            "  --batches      one colour per batch the strategy forms\n"
            "  --size WxH     pixels per panel, up to %ux%u (default 1280x720)\n"
            "  --yaw D        orbit angle about +y in degrees (default 0: looking along -z)\n"
            "  --pitch D      angle above the horizon in degrees (default 15)\n"
            "  --zoom Z       1 fits the bounding sphere, 2 halves the distance (default 1)\n"
            "  --cull         drop back faces in the rasterizer\n"
            "  --annotate     label panels (and add the heatmap legend); default with 2+ panels\n"
            "  --no-annotate  never label\n"
            "  --cpu          run the CPU twins even when a CUDA device is present\n"
            "  --gts-batches  with a compressed SCENE (.gts from `vreuse compress`): the GPU\n"
            "                 geometry stage decodes each batch from the stream itself, no index\n"
            "                 buffer on the device (hash only, file order); without it a .gts\n"
            "                 file is decoded on the CPU at load time\n"
            "  --reps N       time N frames per scene, strategy and load after two warm-up frames;\n"
            "                 report the median of each stage (GPU: cudaEvents; frame: wall time\n"
            "                 of the whole synchronous frame, image left on the device)\n"
            "  --csv F        append one row per scene, strategy and load to F (with --reps)\n"
            "  --out F.png    output file (default render.png); with several scenes the scene's\n"
            "                 name is inserted before .png\n"
            "  --no-image     time only, write no PNG\n"
            "  --quiet        no progress output\n",
            VR_RASTER_MAX_SIZE, VR_RASTER_MAX_SIZE);
}

static int parse_float(const char *s, float lo, float hi, float *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !(v >= lo && v <= hi))
        return -1;
    *out = (float)v;
    return 0;
}

/* Splits "naive,warp,hash" (or "all") into registry rows; returns the count or -1. */
static int parse_strategies(const char *s, const vr_reuse_ops **out, int max)
{
    if (!strcmp(s, "all")) {
        for (int i = 0; i < VR_REUSE_KIND_COUNT && i < max; ++i)
            out[i] = &vr_reuse_all[i];
        return VR_REUSE_KIND_COUNT < max ? VR_REUSE_KIND_COUNT : max;
    }
    int n = 0;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", s);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        const vr_reuse_ops *ops = vr_reuse_find(tok);
        if (!ops) {
            fprintf(stderr, "vreuse render: unknown strategy '%s' (naive, warp, hash, phash, sort, "
                            "multi, all)\n", tok);
            return -1;
        }
        if (n == max) {
            fprintf(stderr, "vreuse render: at most %d strategies\n", max);
            return -1;
        }
        out[n++] = ops;
    }
    if (n == 0)
        fprintf(stderr, "vreuse render: --strategy needs at least one name\n");
    return n ? n : -1;
}

static const char *mode_name(vr_shade_mode m)
{
    return m == VR_SHADE_HEATMAP ? "heatmap" : m == VR_SHADE_BATCHES ? "batches" : "lambert";
}

/* "0,2000,10k" -> loads; returns the count or -1. 0 is the simple shader. */
static int parse_loads(const char *s, uint32_t *out, int max)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", s);
    int n = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        uint32_t v = 0;
        if (vr_load_parse(tok, &v) != 0) {
            fprintf(stderr, "vreuse render: --load '%s': simple, light, medium, heavy, or a count "
                            "of FMA steps <= 100M\n", tok);
            return -1;
        }
        if (n == max) {
            fprintf(stderr, "vreuse render: at most %d loads\n", max);
            return -1;
        }
        out[n++] = v;
    }
    if (n == 0)
        fprintf(stderr, "vreuse render: --load needs at least one count\n");
    return n ? n : -1;
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median of v[0..n-1] (sorts v). */
static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* "path/to/stanford-bunny.obj" -> "stanford-bunny.obj": the scene column of the CSV */
static const char *scene_name(const char *spec)
{
    const char *s = strrchr(spec, '/');
    return s ? s + 1 : spec;
}

/* out.png + "bunny.obj" -> out-bunny.obj.png (characters a file name should not hold -> '_') */
static void scene_out_path(char *dst, size_t size, const char *out, const char *spec)
{
    const char *dot = strrchr(out, '.'), *slash = strrchr(out, '/');
    const size_t stem = dot && (!slash || dot > slash) ? (size_t)(dot - out) : strlen(out);
    char name[128];
    snprintf(name, sizeof name, "%s", scene_name(spec));
    for (char *c = name; *c; ++c)
        if (*c == ':' || *c == '@' || *c == ' ')
            *c = '_';
    snprintf(dst, size, "%.*s-%s%s", (int)stem, out, name, stem < strlen(out) ? out + stem : ".png");
}

/* What the command line asks for, shared by every scene. */
typedef struct render_job {
    const vr_reuse_ops *strategies[VR_REUSE_KIND_COUNT * 2];
    int panels;
    uint32_t loads[VR_RENDER_MAX_LOADS];
    int load_count;
    int order, annotate, gpu, reps, write_image;
    int gts_batches; /* .gts scenes: per-batch decode inside the geometry stage */
    float yaw, pitch, zoom;
    vr_render_options o;
    FILE *csv;
} render_job;

/* Medians over --reps frames of one strategy and load (a single frame's values without). */
typedef struct render_timing {
    double geometry_ms;  /* strategy kernels, counting off */
    double clear_ms;     /* visibility-buffer clear */
    double raster_ms;    /* rasterization without the clear */
    double raster_total_ms; /* clear + rasterization: the CSV's raster_ms */
    double resolve_ms;
    double frame_ms;     /* wall time of the whole frame, image left on the device */
} render_timing;

static void print_header(void)
{
    printf("  %-8s %9s %9s %8s %9s %10s %9s %8s %12s %7s %7s %8s %11s %8s\n", "strategy", "load",
           "geom_ms", "clear_ms", "raster_ms", "resolve_ms", "frame_ms", "xfer_ms", "invocations",
           "shd/tri", "reuse", "batches", "fragments", "clipped");
}

static void print_row(const vr_render_options *o, const vr_render_stats *st,
                      const render_timing *t)
{
    printf("  %-8s %9u %9.3f %8.3f %9.3f %10.3f %9.3f %8.2f %12llu %7.3f %7.4f %8u %11llu %8llu\n",
           o->strategy->name, o->loop_iterations, t->geometry_ms, t->clear_ms, t->raster_ms,
           t->resolve_ms, t->frame_ms, st->transfer_ms, (unsigned long long)st->invocations,
           st->shaded_per_tri, st->reuse, st->batches, (unsigned long long)st->raster.fragments,
           (unsigned long long)st->raster.clipped);
}

/* Times job->reps frames (after two warm-up frames: the first refreshes the counts) of the
 * current strategy and load; stats gets the last frame's counts. */
static vr_status time_frames(vr_renderer *r, const render_job *job, const vr_render_options *o,
                             vr_render_stats *st, render_timing *t)
{
    enum { GEO, CLEAR, RASTER, RASTER_TOTAL, RESOLVE, FRAME, SERIES };
    const int n = job->reps;
    double *v = malloc((size_t)n * SERIES * sizeof *v);
    if (!v)
        return VR_ERROR(VR_ERR_OOM, "render: %d timings", n);
    vr_status s = VR_OK;
    for (int i = -2; i < n && s == VR_OK; ++i) {
        const double t0 = vr_now_ms();
        s = vr_renderer_draw(r, NULL, o, st);
        const double wall = vr_now_ms() - t0;
        if (s != VR_OK || i < 0)
            continue;
        v[GEO * n + i] = st->geometry_ms;
        v[CLEAR * n + i] = st->raster.clear_ms;
        v[RASTER * n + i] = st->raster.raster_ms;
        v[RASTER_TOTAL * n + i] = st->raster.clear_ms + st->raster.raster_ms;
        v[RESOLVE * n + i] = st->raster.resolve_ms;
        v[FRAME * n + i] = wall;
        vr_progress("  timing", (uint64_t)i + 1, (uint64_t)n);
    }
    if (s == VR_OK) {
        t->geometry_ms = median(v + GEO * n, n);
        t->clear_ms = median(v + CLEAR * n, n);
        t->raster_ms = median(v + RASTER * n, n);
        t->raster_total_ms = median(v + RASTER_TOTAL * n, n);
        t->resolve_ms = median(v + RESOLVE * n, n);
        t->frame_ms = median(v + FRAME * n, n);
    }
    free(v);
    return s;
}

/* One scene: load, reorder, time every strategy and load, draw the panels, write the PNG. */
static int render_scene(render_job *job, const char *spec, const char *out_path)
{
    vr_render_options o = job->o;
    double t0 = vr_now_ms();
    vr_mesh mesh;
    /* --gts-batches decodes the stream per batch: the mesh is its own list (with deg. mode's
     * emulation triangles); otherwise a .gts scene is its source triangles */
    vr_status s = job->gts_batches && vr_gts_is_file(spec) ? vr_mesh_load_gts_strips(&mesh, spec)
                                                           : vr_mesh_load(&mesh, spec);
    const double load_ms = vr_now_ms() - t0;
    if (s != VR_OK) {
        fprintf(stderr, "vreuse render: %s\n", vr_last_error());
        return 1;
    }
    t0 = vr_now_ms();
    if (job->order != VR_ORDER_FILE &&
        (s = vr_mesh_reorder(&mesh, (vr_order)job->order, 1)) != VR_OK) {
        fprintf(stderr, "vreuse render: %s\n", vr_last_error());
        vr_mesh_free(&mesh);
        return 1;
    }
    const double reorder_ms = vr_now_ms() - t0;
    const int panels = job->panels;
    printf("vreuse render: %s: %u triangles, %u vertices, order %s, %ux%u x %d panel%s, %s\n",
           spec, mesh.index_count / 3, mesh.vertex_count, vr_order_name((vr_order)job->order),
           o.raster.width, o.raster.height, panels, panels > 1 ? "s" : "", mode_name(o.mode));
    printf("  load %.1f ms, reorder %.1f ms\n", load_ms, reorder_ms);

    vr_camera_fit(&o.camera, &mesh);
    o.camera.yaw = job->yaw;
    o.camera.pitch = job->pitch;
    o.camera.zoom = job->zoom;

    vr_renderer *r = NULL;
    vr_gts gts;
    memset(&gts, 0, sizeof gts);
    const size_t panel_bytes = (size_t)o.raster.width * o.raster.height * 4;
    const int scale = o.raster.height >= 540 ? (int)(o.raster.height / 270) : 1;
    const uint32_t strip =
        job->annotate && o.mode == VR_SHADE_HEATMAP ? (uint32_t)(34 * scale) : 0;
    const uint32_t img_w = o.raster.width * (uint32_t)panels, img_h = o.raster.height + strip;
    uint8_t *panel = NULL, *image = NULL;
    int rc = 1;
    if (job->write_image) {
        panel = malloc(panel_bytes);
        image = malloc((size_t)img_w * img_h * 4);
        if (!panel || !image) {
            fprintf(stderr, "vreuse render: out of host memory for a %ux%u image\n", img_w, img_h);
            goto done;
        }
        vr_image_fill(image, img_w, img_h, 0, 0, (int)img_w, (int)img_h, o.shade.background);
    }
    if ((s = vr_renderer_create(&r, &mesh, job->gpu)) != VR_OK) {
        fprintf(stderr, "vreuse render: %s\n", vr_last_error());
        goto done;
    }
    if (job->gts_batches) {
        /* the loaded mesh is the stream's own decode (file order), so its batches and the
         * stream's triangles agree */
        if (!vr_gts_is_file(spec)) {
            fprintf(stderr, "vreuse render: --gts-batches: %s is not a compressed file; make one "
                    "with `vreuse compress %s -o FILE.gts`\n", spec, spec);
            goto done;
        }
        if ((s = vr_gts_read(&gts, spec)) != VR_OK) {
            fprintf(stderr, "vreuse render: %s\n", vr_last_error());
            goto done;
        }
        if (!job->gpu) {
            printf("  input: compressed, decoded on the CPU at load time (--gts-batches needs "
                   "the GPU stage)\n");
        } else if ((s = vr_renderer_set_gts(r, &gts)) != VR_OK) {
            fprintf(stderr, "vreuse render: %s\n", vr_last_error());
            goto done;
        } else {
            vr_gts_stats gs;
            vr_gts_stats_compute(&gs, &gts);
            printf("  input: compressed (%.2f bits/triangle), each batch decoded inside the "
                   "geometry stage; no index buffer is read\n", gs.s9_bpt);
        }
    }

    /* timing: every load x strategy, the image stays on the device */
    if (job->reps > 0) {
        printf("  medians of %d frames (raster_ms without clear_ms; frame_ms: wall time of the "
               "whole frame)\n", job->reps);
        print_header();
        for (int l = 0; l < job->load_count; ++l)
            for (int p = 0; p < panels; ++p) {
                o.strategy = job->strategies[p];
                o.loop_iterations = job->loads[l];
                vr_render_stats st;
                render_timing t = {0, 0, 0, 0, 0, 0};
                if ((s = time_frames(r, job, &o, &st, &t)) != VR_OK) {
                    fprintf(stderr, "vreuse render: %s: %s\n", o.strategy->name,
                            vr_last_error());
                    goto done;
                }
                print_row(&o, &st, &t);
                if (job->csv)
                    fprintf(job->csv, "%s,%s,%u,%s,%u,%u,%u,%.4f,%.4f,%.4f,%.4f,%llu,%.6f\n",
                            scene_name(spec), vr_order_name((vr_order)job->order), st.triangles,
                            o.strategy->name, o.loop_iterations, o.raster.width,
                            o.raster.height, t.geometry_ms, t.raster_total_ms,
                            t.resolve_ms, t.frame_ms, (unsigned long long)st.invocations,
                            st.reuse);
            }
        if (job->csv)
            fflush(job->csv);
    }

    /* the image: one frame per strategy at the first load */
    if (job->write_image) {
        if (job->reps == 0)
            print_header();
        for (int p = 0; p < panels; ++p) {
            o.strategy = job->strategies[p];
            o.loop_iterations = job->loads[0];
            vr_render_stats st;
            t0 = vr_now_ms();
            if ((s = vr_renderer_draw(r, panel, &o, &st)) != VR_OK) {
                fprintf(stderr, "vreuse render: %s: %s\n", o.strategy->name, vr_last_error());
                goto done;
            }
            if (job->reps == 0) {
                const render_timing t = {st.geometry_ms, st.raster.clear_ms,
                                         st.raster.raster_ms,
                                         st.raster.clear_ms + st.raster.raster_ms,
                                         st.raster.resolve_ms,
                                         vr_now_ms() - t0 - st.raster.download_ms};
                print_row(&o, &st, &t);
            }
            vr_image_blit(image, img_w, img_h, (int)(p * o.raster.width), 0, panel,
                          o.raster.width, o.raster.height);
            if (job->annotate) {
                char label[96];
                snprintf(label, sizeof label, "%s  %.2f shaded/tri", o.strategy->name,
                         st.shaded_per_tri);
                const int x = (int)(p * o.raster.width) + 8 * scale, y = 8 * scale;
                vr_image_text(image, img_w, img_h, x + scale, y + scale, 2 * scale, 0xff000000u,
                              label);
                vr_image_text(image, img_w, img_h, x, y, 2 * scale, 0xffffffffu, label);
            }
        }
        if (strip) {
            /* legend centred under the panels, its caption to the left */
            const int lw = (int)(img_w / 3 < 600u * scale ? img_w / 3 : 600u * scale);
            const int lx = (int)(img_w - (uint32_t)lw) / 2, ly = (int)o.raster.height + 3 * scale;
            vr_image_heat_legend(image, img_w, img_h, lx, ly, lw, (int)strip - 5 * scale,
                                 2 * scale);
            const char *caption = "shader invocations per vertex";
            const int cw = 6 * scale * (int)strlen(caption);
            vr_image_text(image, img_w, img_h, lx - cw - 8 * scale, ly + 2 * scale, scale,
                          0xffffffffu, caption);
        }
        t0 = vr_now_ms();
        if ((s = vr_image_write_png(out_path, image, img_w, img_h)) != VR_OK) {
            fprintf(stderr, "vreuse render: %s\n", vr_last_error());
            goto done;
        }
        printf("  png %.1f ms -> %s (%ux%u)\n", vr_now_ms() - t0, out_path, img_w, img_h);
    }
    rc = 0;
done:
    vr_renderer_destroy(r);
    vr_gts_free(&gts);
    free(panel);
    free(image);
    vr_mesh_free(&mesh);
    return rc;
}

int vr_cmd_render(int argc, char **argv)
{
    const char *out_path = "render.png", *strategy_arg = "hash", *load_arg = "0";
    const char *csv_path = NULL;
    render_job job;
    memset(&job, 0, sizeof job);
    job.order = VR_ORDER_FILE;
    job.annotate = -1;
    job.write_image = 1;
    job.yaw = 0, job.pitch = 15, job.zoom = 1;
    job.o.raster.width = 1280;
    job.o.raster.height = 720;
    job.o.mode = VR_SHADE_LAMBERT;
    job.o.shade = vr_resolve_params_default();
    int force_cpu = 0;
    const char **scenes = calloc((size_t)argc + 1, sizeof *scenes);
    int scene_count = 0;
    if (!scenes) {
        fprintf(stderr, "vreuse render: out of host memory\n");
        return 1;
    }
    int rc = 2;

    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
#define NEED_VALUE()                                                                  \
    do {                                                                              \
        if (!v) {                                                                     \
            fprintf(stderr, "vreuse render: %s needs a value\n", a);                  \
            goto out;                                                                 \
        }                                                                             \
        ++i;                                                                          \
    } while (0)
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            rc = 0;
            goto out;
        } else if (!strcmp(a, "--strategy")) {
            NEED_VALUE();
            strategy_arg = v;
        } else if (!strcmp(a, "--load")) {
            NEED_VALUE();
            load_arg = v;
        } else if (!strcmp(a, "--order")) {
            NEED_VALUE();
            if ((job.order = vr_order_parse(v)) < 0) {
                fprintf(stderr, "vreuse render: unknown order '%s' (file, forsyth, tipsify, "
                                "random)\n", v);
                goto out;
            }
        } else if (!strcmp(a, "--heatmap")) {
            job.o.mode = VR_SHADE_HEATMAP;
        } else if (!strcmp(a, "--batches")) {
            job.o.mode = VR_SHADE_BATCHES;
        } else if (!strcmp(a, "--size")) {
            NEED_VALUE();
            if (vr_raster_parse_size(v, &job.o.raster.width, &job.o.raster.height)) {
                fprintf(stderr, "vreuse render: --size '%s': want WxH, 1..%u each\n", v,
                        VR_RASTER_MAX_SIZE);
                goto out;
            }
        } else if (!strcmp(a, "--yaw") || !strcmp(a, "--pitch") || !strcmp(a, "--zoom")) {
            NEED_VALUE();
            float *dst = a[2] == 'y' ? &job.yaw : a[2] == 'p' ? &job.pitch : &job.zoom;
            const float lo = a[2] == 'z' ? 0.01f : -3600.0f, hi = a[2] == 'z' ? 100.0f : 3600.0f;
            if (parse_float(v, lo, hi, dst)) {
                fprintf(stderr, "vreuse render: %s '%s': want a number in [%g, %g]\n", a, v, lo,
                        hi);
                goto out;
            }
        } else if (!strcmp(a, "--cull")) {
            job.o.raster.cull_back = 1;
        } else if (!strcmp(a, "--annotate")) {
            job.annotate = 1;
        } else if (!strcmp(a, "--no-annotate")) {
            job.annotate = 0;
        } else if (!strcmp(a, "--cpu")) {
            force_cpu = 1;
        } else if (!strcmp(a, "--gts-batches")) {
            job.gts_batches = 1;
        } else if (!strcmp(a, "--reps")) {
            NEED_VALUE();
            char *end;
            errno = 0;
            const long n = strtol(v, &end, 10);
            if (errno || end == v || *end || n < 1 || n > 100000) {
                fprintf(stderr, "vreuse render: --reps '%s': want 1..100000\n", v);
                goto out;
            }
            job.reps = (int)n;
        } else if (!strcmp(a, "--csv")) {
            NEED_VALUE();
            csv_path = v;
        } else if (!strcmp(a, "--out")) {
            NEED_VALUE();
            out_path = v;
        } else if (!strcmp(a, "--no-image")) {
            job.write_image = 0;
        } else if (!strcmp(a, "--quiet")) {
            vr_progress_quiet = 1;
        } else if (a[0] == '-') {
            fprintf(stderr, "vreuse render: unknown option '%s'\n\n", a);
            usage(stderr);
            goto out;
        } else {
            scenes[scene_count++] = a;
        }
#undef NEED_VALUE
    }
    if (scene_count == 0)
        scenes[scene_count++] = VR_DEFAULT_SCENE;
    job.panels = parse_strategies(strategy_arg, job.strategies,
                                  (int)(sizeof job.strategies / sizeof job.strategies[0]));
    if (job.panels < 0)
        goto out;
    if ((job.load_count = parse_loads(load_arg, job.loads, VR_RENDER_MAX_LOADS)) < 0)
        goto out;
    if (job.annotate < 0)
        job.annotate = job.panels > 1;
    for (int p = 0; p < job.panels && job.gts_batches; ++p)
        if (!job.strategies[p]->gts_input) {
            fprintf(stderr, "vreuse render: --gts-batches: strategy %s cannot decode compressed "
                    "batches (hash can; the others take the CPU-decoded index buffer without "
                    "--gts-batches)\n", job.strategies[p]->name);
            goto out;
        }
    if (job.gts_batches && job.order != VR_ORDER_FILE) {
        fprintf(stderr, "vreuse render: --gts-batches renders the stream's own triangle order; "
                "leave --order at file\n");
        goto out;
    }
    if (csv_path && job.reps == 0) {
        fprintf(stderr, "vreuse render: --csv needs --reps N (it records medians)\n");
        goto out;
    }
    if (!job.write_image && job.reps == 0) {
        fprintf(stderr, "vreuse render: --no-image without --reps does nothing\n");
        goto out;
    }
    const uint64_t total_w = (uint64_t)job.o.raster.width * (uint64_t)job.panels;
    if (job.write_image && total_w > 4 * (uint64_t)VR_RASTER_MAX_SIZE) {
        fprintf(stderr, "vreuse render: %d panels of width %u make a %llu-pixel-wide image; "
                        "use a smaller --size\n", job.panels, job.o.raster.width,
                (unsigned long long)total_w);
        goto out;
    }
    rc = 1;
    if (csv_path) {
        /* appended to: a header only when the file is new or empty */
        if (!(job.csv = fopen(csv_path, "a"))) {
            fprintf(stderr, "vreuse render: cannot append to %s: %s\n", csv_path,
                    strerror(errno));
            goto out;
        }
        if (ftell(job.csv) == 0)
            fprintf(job.csv, "scene,order,tris,strategy,load,width,height,geometry_ms,raster_ms,"
                             "resolve_ms,frame_ms,invocations,reuse\n");
    }

    job.gpu = !force_cpu && vr_gpu_available();
    if (job.gpu)
        printf("vreuse render: device %s (GPU geometry stage and rasterizer)\n",
               vr_gpu_device_name());
    else if (force_cpu)
        printf("vreuse render: device CPU twins (--cpu)\n");
    else
        printf("vreuse render: device CPU twins; %s\n", vr_gpu_device_name());

    rc = 0;
    for (int i = 0; i < scene_count; ++i) {
        char path[1024];
        if (scene_count > 1)
            scene_out_path(path, sizeof path, out_path, scenes[i]);
        else
            snprintf(path, sizeof path, "%s", out_path);
        if (render_scene(&job, scenes[i], path) != 0)
            rc = 1; /* reported; the other scenes still run */
    }
    if (job.gpu)
        printf("note: geom_ms times the strategy's kernels with counting off (cudaEvents); "
               "xfer_ms is the once-per-strategy download of the counts\n");
    if (job.csv && fclose(job.csv) != 0) {
        fprintf(stderr, "vreuse render: writing %s: %s\n", csv_path, strerror(errno));
        rc = 1;
    }
    job.csv = NULL;
out:
    if (job.csv)
        fclose(job.csv);
    free(scenes);
    return rc;
}
