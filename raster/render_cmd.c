/* render_cmd.c - `vreuse render SCENE --strategy S[,S...] [--heatmap|--batches] --out F.png`:
 * loads and reorders the scene, fits the orbit camera, runs the geometry stage, rasterizes and
 * resolves (render.c), writes a PNG and prints per-stage times and invocation counts. Several
 * strategies give side-by-side panels (the layout of Kenzel et al. 2018, Fig. 7). Without a
 * CUDA device it runs the CPU twins and says so.
 * Try: `vreuse render bunny.obj --order forsyth --strategy naive,warp,hash --heatmap --out h.png`.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include "../pipeline/commands.h"
#include "../pipeline/geometry.h"
#include "../scenes/scene.h"
#include "raster.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void usage(FILE *f)
{
    fprintf(f,
            "usage: vreuse render [SCENE] [options] --out F.png\n"
            "\n"
            "Renders SCENE through the geometry stage and the rasterizer and writes a PNG.\n"
            "\n"
            "  SCENE          a file or a generator (see `vreuse --help`); default sphere\n"
            "  --strategy S   naive, warp, hash, phash, sort, multi, a comma list or all;\n"
            "                 several give side-by-side panels (default hash)\n"
            "  --load L       synthetic shader load: dependent FMA steps per vertex (default 0)\n"
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
            "  --out F.png    output file (default render.png)\n"
            "  --quiet        no progress output\n",
            VR_RASTER_MAX_SIZE, VR_RASTER_MAX_SIZE);
}

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
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

/* Parses "WxH" into a raster size within range. */
static int parse_size(const char *s, uint32_t *w, uint32_t *h)
{
    char *end;
    errno = 0;
    unsigned long a = strtoul(s, &end, 10);
    if (errno || end == s || (*end != 'x' && *end != 'X'))
        return -1;
    const char *p = end + 1;
    unsigned long b = strtoul(p, &end, 10);
    if (errno || end == p || *end || a < 1 || b < 1 || a > VR_RASTER_MAX_SIZE ||
        b > VR_RASTER_MAX_SIZE)
        return -1;
    *w = (uint32_t)a;
    *h = (uint32_t)b;
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

int vr_cmd_render(int argc, char **argv)
{
    const char *spec = VR_DEFAULT_SCENE, *out_path = "render.png", *strategy_arg = "hash";
    int order = VR_ORDER_FILE, annotate = -1, force_cpu = 0;
    uint32_t load = 0;
    vr_render_options o;
    memset(&o, 0, sizeof o);
    o.raster.width = 1280;
    o.raster.height = 720;
    o.mode = VR_SHADE_LAMBERT;
    o.shade = vr_resolve_params_default();
    float yaw = 0, pitch = 15, zoom = 1;
    int have_scene = 0;

    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
#define NEED_VALUE()                                                                  \
    do {                                                                              \
        if (!v) {                                                                     \
            fprintf(stderr, "vreuse render: %s needs a value\n", a);                  \
            return 2;                                                                 \
        }                                                                             \
        ++i;                                                                          \
    } while (0)
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(a, "--strategy")) {
            NEED_VALUE();
            strategy_arg = v;
        } else if (!strcmp(a, "--load")) {
            NEED_VALUE();
            uint64_t n;
            if (vr_parse_count(v, &n) != 0 && strcmp(v, "0") != 0) {
                fprintf(stderr, "vreuse render: --load '%s' is not a count\n", v);
                return 2;
            }
            load = strcmp(v, "0") ? (uint32_t)(n > 100000000u ? 100000000u : n) : 0;
        } else if (!strcmp(a, "--order")) {
            NEED_VALUE();
            if ((order = vr_order_parse(v)) < 0) {
                fprintf(stderr, "vreuse render: unknown order '%s' (file, forsyth, tipsify, "
                                "random)\n", v);
                return 2;
            }
        } else if (!strcmp(a, "--heatmap")) {
            o.mode = VR_SHADE_HEATMAP;
        } else if (!strcmp(a, "--batches")) {
            o.mode = VR_SHADE_BATCHES;
        } else if (!strcmp(a, "--size")) {
            NEED_VALUE();
            if (parse_size(v, &o.raster.width, &o.raster.height)) {
                fprintf(stderr, "vreuse render: --size '%s': want WxH, 1..%u each\n", v,
                        VR_RASTER_MAX_SIZE);
                return 2;
            }
        } else if (!strcmp(a, "--yaw") || !strcmp(a, "--pitch") || !strcmp(a, "--zoom")) {
            NEED_VALUE();
            float *dst = a[2] == 'y' ? &yaw : a[2] == 'p' ? &pitch : &zoom;
            const float lo = a[2] == 'z' ? 0.01f : -3600.0f, hi = a[2] == 'z' ? 100.0f : 3600.0f;
            if (parse_float(v, lo, hi, dst)) {
                fprintf(stderr, "vreuse render: %s '%s': want a number in [%g, %g]\n", a, v, lo,
                        hi);
                return 2;
            }
        } else if (!strcmp(a, "--cull")) {
            o.raster.cull_back = 1;
        } else if (!strcmp(a, "--annotate")) {
            annotate = 1;
        } else if (!strcmp(a, "--no-annotate")) {
            annotate = 0;
        } else if (!strcmp(a, "--cpu")) {
            force_cpu = 1;
        } else if (!strcmp(a, "--out")) {
            NEED_VALUE();
            out_path = v;
        } else if (!strcmp(a, "--quiet")) {
            vr_progress_quiet = 1;
        } else if (a[0] == '-') {
            fprintf(stderr, "vreuse render: unknown option '%s'\n\n", a);
            usage(stderr);
            return 2;
        } else if (!have_scene) {
            spec = a;
            have_scene = 1;
        } else {
            fprintf(stderr, "vreuse render: one scene at a time ('%s' and '%s')\n", spec, a);
            return 2;
        }
#undef NEED_VALUE
    }
    const vr_reuse_ops *strategies[VR_REUSE_KIND_COUNT * 2];
    const int panels = parse_strategies(strategy_arg, strategies,
                                        (int)(sizeof strategies / sizeof strategies[0]));
    if (panels < 0)
        return 2;
    if (annotate < 0)
        annotate = panels > 1;
    const uint64_t total_w = (uint64_t)o.raster.width * (uint64_t)panels;
    if (total_w > 4 * (uint64_t)VR_RASTER_MAX_SIZE) {
        fprintf(stderr, "vreuse render: %d panels of width %u make a %llu-pixel-wide image; "
                        "use a smaller --size\n", panels, o.raster.width,
                (unsigned long long)total_w);
        return 2;
    }

    /* ---- scene ---- */
    const int gpu = !force_cpu && vr_gpu_available();
    double t0 = now_ms();
    vr_mesh mesh;
    vr_status s = vr_mesh_load(&mesh, spec);
    const double load_ms = now_ms() - t0;
    if (s != VR_OK) {
        fprintf(stderr, "vreuse render: %s\n", vr_last_error());
        return 1;
    }
    t0 = now_ms();
    if (order != VR_ORDER_FILE && (s = vr_mesh_reorder(&mesh, (vr_order)order, 1)) != VR_OK) {
        fprintf(stderr, "vreuse render: %s\n", vr_last_error());
        vr_mesh_free(&mesh);
        return 1;
    }
    const double reorder_ms = now_ms() - t0;
    printf("vreuse render: %s: %u triangles, %u vertices, order %s, %ux%u x %d panel%s, %s\n",
           spec, mesh.index_count / 3, mesh.vertex_count, vr_order_name((vr_order)order),
           o.raster.width, o.raster.height, panels, panels > 1 ? "s" : "", mode_name(o.mode));
    if (gpu)
        printf("  device: %s (GPU geometry stage and rasterizer)\n", vr_gpu_device_name());
    else if (force_cpu)
        printf("  device: CPU twins (--cpu)\n");
    else
        printf("  device: CPU twins; %s\n", vr_gpu_device_name());
    printf("  load %.1f ms, reorder %.1f ms\n", load_ms, reorder_ms);

    vr_camera_fit(&o.camera, &mesh);
    o.camera.yaw = yaw;
    o.camera.pitch = pitch;
    o.camera.zoom = zoom;
    o.loop_iterations = load;

    vr_renderer *r = NULL;
    const size_t panel_bytes = (size_t)o.raster.width * o.raster.height * 4;
    const int scale = o.raster.height >= 540 ? (int)(o.raster.height / 270) : 1;
    const uint32_t strip = annotate && o.mode == VR_SHADE_HEATMAP ? (uint32_t)(34 * scale) : 0;
    const uint32_t img_w = (uint32_t)total_w, img_h = o.raster.height + strip;
    uint8_t *panel = malloc(panel_bytes);
    uint8_t *image = malloc((size_t)img_w * img_h * 4);
    int rc = 1;
    if (!panel || !image) {
        fprintf(stderr, "vreuse render: out of host memory for a %ux%u image\n", img_w, img_h);
        goto done;
    }
    vr_image_fill(image, img_w, img_h, 0, 0, (int)img_w, (int)img_h, o.shade.background);
    if ((s = vr_renderer_create(&r, &mesh, gpu)) != VR_OK) {
        fprintf(stderr, "vreuse render: %s\n", vr_last_error());
        goto done;
    }

    printf("  %-8s %9s %9s %8s %9s %10s %12s %7s %7s %8s %11s %8s\n", "strategy", "geom_ms",
           "xfer_ms", "clear_ms", "raster_ms", "resolve_ms", "invocations",
           "shd/tri", "reuse", "batches", "fragments", "clipped");
    for (int p = 0; p < panels; ++p) {
        o.strategy = strategies[p];
        vr_render_stats st;
        if ((s = vr_renderer_draw(r, panel, &o, &st)) != VR_OK) {
            fprintf(stderr, "vreuse render: %s: %s\n", o.strategy->name, vr_last_error());
            goto done;
        }
        printf("  %-8s %9.2f %9.2f %8.2f %9.2f %10.2f %12llu %7.3f %7.3f %8u %11llu %8llu\n",
               o.strategy->name, st.geometry_ms, st.transfer_ms + st.raster.upload_ms +
               st.raster.download_ms, st.raster.clear_ms, st.raster.raster_ms,
               st.raster.resolve_ms, (unsigned long long)st.invocations, st.shaded_per_tri,
               st.reuse, st.batches, (unsigned long long)st.raster.fragments,
               (unsigned long long)st.raster.clipped);
        vr_image_blit(image, img_w, img_h, (int)(p * o.raster.width), 0, panel, o.raster.width,
                      o.raster.height);
        if (annotate) {
            char label[96];
            snprintf(label, sizeof label, "%s  %.2f shaded/tri", o.strategy->name,
                     st.shaded_per_tri);
            const int x = (int)(p * o.raster.width) + 8 * scale, y = 8 * scale;
            vr_image_text(image, img_w, img_h, x + scale, y + scale, 2 * scale, 0xff000000u, label);
            vr_image_text(image, img_w, img_h, x, y, 2 * scale, 0xffffffffu, label);
        }
    }
    if (strip) {
        /* legend centred under the panels, its caption to the left */
        const int lw = (int)(img_w / 3 < 600u * scale ? img_w / 3 : 600u * scale);
        const int lx = (int)(img_w - (uint32_t)lw) / 2, ly = (int)o.raster.height + 3 * scale;
        vr_image_heat_legend(image, img_w, img_h, lx, ly, lw, (int)strip - 5 * scale, 2 * scale);
        const char *caption = "shader invocations per vertex";
        const int cw = 6 * scale * (int)strlen(caption);
        vr_image_text(image, img_w, img_h, lx - cw - 8 * scale, ly + 2 * scale, scale,
                      0xffffffffu, caption);
    }
    t0 = now_ms();
    if ((s = vr_image_write_png(out_path, image, img_w, img_h)) != VR_OK) {
        fprintf(stderr, "vreuse render: %s\n", vr_last_error());
        goto done;
    }
    printf("  png %.1f ms -> %s (%ux%u)\n", now_ms() - t0, out_path, img_w, img_h);
    if (gpu)
        printf("  note: geom_ms times the strategy's kernels with counting off; xfer_ms is the "
               "queue's host round trip between the stages\n");
    rc = 0;
done:
    vr_renderer_destroy(r);
    free(panel);
    free(image);
    vr_mesh_free(&mesh);
    return rc;
}
