/* viewer.c - `vreuse view [SCENE]`: an SDL2 window showing the scene through the geometry stage
 * and the rasterizer (render.c), on the GPU when there is one and through the CPU twins
 * otherwise (so it also runs under Xvfb). Drag to orbit, wheel to zoom; keys switch strategy
 * (1-6), shader load (l), heatmap (h) and batches (b). The title and an overlay show per-stage
 * milliseconds and reuse. The only file that includes SDL.
 * Try: `xvfb-run -a vreuse view bunny.obj --heatmap --frames 3 --screenshot v.png`.
 */
#define _POSIX_C_SOURCE 200809L
#include "pipeline/cli/commands.h"
#include "pipeline/stage/geometry.h"
#include "scenes/scene.h"
#include "raster/raster.h"

#include <SDL.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
    fprintf(f,
            "usage: vreuse view [SCENE] [options]\n"
            "\n"
            "Interactive viewer: the scene through the geometry stage and the rasterizer.\n"
            "  drag: orbit   wheel or +/-: zoom   arrows: orbit   r: reset camera\n"
            "  1-6: strategy (naive warp hash phash sort multi)   l: shader load simple/light/medium/heavy\n"
            "  h: heatmap of shading counts   b: batch colours   c: back-face culling\n"
            "  o: overlay on/off   s: screenshot (view.png)   q, Esc: quit\n"
            "\n"
            "  SCENE            a file or a generator (see `vreuse --help`); default sphere\n"
            "  --strategy S     initial strategy (default hash)\n"
            "  --load L         initial shader load: simple (default), light, medium, heavy or N steps\n"
            "  --order O        triangle order: file (default), forsyth, tipsify, random\n"
            "  --heatmap        start in heatmap mode (--batches: batch colours)\n"
            "  --size WxH       window size (default 1280x720)\n"
            "  --yaw D --pitch D --zoom Z   initial camera\n"
            "  --cpu            use the CPU twins even when a CUDA device is present\n"
            "  --frames N       quit after N frames (each re-renders; the camera turns 5 degrees)\n"
            "  --screenshot F   with --frames: save the last frame's window as PNG F\n");
}

static int parse_float(const char *s, float *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !(v >= -3600 && v <= 3600))
        return -1;
    *out = (float)v;
    return 0;
}

/* Reads the window back (SDL_RenderReadPixels, before present) and writes it as PNG. */
static int save_screenshot(SDL_Renderer *ren, int w, int h, const char *path)
{
    uint8_t *px = malloc((size_t)w * h * 4);
    if (!px) {
        fprintf(stderr, "vreuse view: out of memory for a %dx%d screenshot\n", w, h);
        return 1;
    }
    if (SDL_RenderReadPixels(ren, NULL, SDL_PIXELFORMAT_RGBA32, px, 4 * w) != 0) {
        fprintf(stderr, "vreuse view: SDL_RenderReadPixels failed: %s\n", SDL_GetError());
        free(px);
        return 1;
    }
    for (size_t i = 0; i < (size_t)w * h; ++i)
        px[4 * i + 3] = 255; /* some renderers leave alpha undefined */
    vr_status s = vr_image_write_png(path, px, (uint32_t)w, (uint32_t)h);
    free(px);
    if (s != VR_OK) {
        fprintf(stderr, "vreuse view: %s\n", vr_last_error());
        return 1;
    }
    printf("vreuse view: screenshot %dx%d -> %s\n", w, h, path);
    return 0;
}

/* Stats overlay drawn into the frame itself, so screenshots carry it. */
static void draw_overlay(uint8_t *rgba, uint32_t w, uint32_t h, const char *line1,
                         const char *line2, int heatmap)
{
    const int scale = h >= 900 ? 2 : 1;
    vr_image_text(rgba, w, h, 9, 9, scale, 0xff000000u, line1);
    vr_image_text(rgba, w, h, 8, 8, scale, 0xffffffffu, line1);
    vr_image_text(rgba, w, h, 9, 9 + 10 * scale, scale, 0xff000000u, line2);
    vr_image_text(rgba, w, h, 8, 8 + 10 * scale, scale, 0xffd0d0d0u, line2);
    if (heatmap && w > 300 && h > 80)
        vr_image_heat_legend(rgba, w, h, (int)w - 8 - 240 * scale, (int)h - 8 - 20 * scale,
                             240 * scale, 20 * scale, scale);
}

int vr_cmd_view(int argc, char **argv)
{
    const char *spec = VR_DEFAULT_SCENE, *shot = NULL, *strategy = "hash";
    int order = VR_ORDER_FILE, force_cpu = 0, have_scene = 0;
    long frames = -1;
    uint32_t win_w = 1280, win_h = 720, load = 0;
    vr_shade_mode mode = VR_SHADE_LAMBERT;
    float yaw = 0, pitch = 15, zoom = 1;
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int bad = 0;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(a, "--heatmap")) {
            mode = VR_SHADE_HEATMAP;
            continue;
        } else if (!strcmp(a, "--batches")) {
            mode = VR_SHADE_BATCHES;
            continue;
        } else if (!strcmp(a, "--cpu")) {
            force_cpu = 1;
            continue;
        } else if (a[0] != '-') {
            if (have_scene) {
                fprintf(stderr, "vreuse view: one scene at a time ('%s' and '%s')\n", spec, a);
                return 2;
            }
            spec = a;
            have_scene = 1;
            continue;
        }
        if (!v) {
            fprintf(stderr, "vreuse view: unknown option or missing value: '%s'\n\n", a);
            usage(stderr);
            return 2;
        }
        ++i;
        if (!strcmp(a, "--strategy")) {
            strategy = v;
            bad = !vr_reuse_find(v);
        } else if (!strcmp(a, "--load")) {
            bad = vr_load_parse(v, &load) != 0;
        } else if (!strcmp(a, "--order")) {
            bad = (order = vr_order_parse(v)) < 0;
        } else if (!strcmp(a, "--size")) {
            bad = vr_raster_parse_size(v, &win_w, &win_h) || win_w < 64 || win_h < 64;
        } else if (!strcmp(a, "--yaw")) {
            bad = parse_float(v, &yaw);
        } else if (!strcmp(a, "--pitch")) {
            bad = parse_float(v, &pitch);
        } else if (!strcmp(a, "--zoom")) {
            bad = parse_float(v, &zoom) || !(zoom >= 0.01f && zoom <= 100.0f);
        } else if (!strcmp(a, "--frames")) {
            char *end;
            frames = strtol(v, &end, 10);
            bad = *end || end == v || frames < 1;
        } else if (!strcmp(a, "--screenshot")) {
            shot = v;
        } else {
            fprintf(stderr, "vreuse view: unknown option '%s'\n\n", a);
            usage(stderr);
            return 2;
        }
        if (bad) {
            fprintf(stderr, "vreuse view: bad value for %s: '%s' (see --help)\n", a, v);
            return 2;
        }
    }
    if (shot && frames < 0) {
        fprintf(stderr, "vreuse view: --screenshot needs --frames N\n");
        return 2;
    }

    vr_mesh mesh;
    if (vr_mesh_load(&mesh, spec) != VR_OK ||
        (order != VR_ORDER_FILE && vr_mesh_reorder(&mesh, (vr_order)order, 1) != VR_OK)) {
        fprintf(stderr, "vreuse view: %s\n", vr_last_error());
        return 1;
    }
    const int gpu = !force_cpu && vr_gpu_available();
    printf("vreuse view: %s: %u triangles, %u vertices; %s\n", spec, mesh.index_count / 3,
           mesh.vertex_count, gpu ? vr_gpu_device_name() : "CPU twins");
    vr_renderer *r = NULL;
    if (vr_renderer_create(&r, &mesh, gpu) != VR_OK) {
        fprintf(stderr, "vreuse view: %s\n", vr_last_error());
        vr_mesh_free(&mesh);
        return 1;
    }
    if (SDL_Init(SDL_INIT_VIDEO) != 0) {
        fprintf(stderr, "vreuse view: SDL_Init failed: %s. Hint: needs a display; try "
                        "xvfb-run -a vreuse view ...\n", SDL_GetError());
        vr_renderer_destroy(r);
        vr_mesh_free(&mesh);
        return 1;
    }
    int rc = 1;
    SDL_Window *win = SDL_CreateWindow("vreuse view", SDL_WINDOWPOS_CENTERED,
                                       SDL_WINDOWPOS_CENTERED, (int)win_w, (int)win_h,
                                       SDL_WINDOW_RESIZABLE | SDL_WINDOW_ALLOW_HIGHDPI);
    SDL_Renderer *ren = win ? SDL_CreateRenderer(win, -1, 0) : NULL;
    SDL_Texture *tex = NULL;
    uint8_t *frame = NULL;
    int tex_w = 0, tex_h = 0;
    if (!ren) {
        fprintf(stderr, "vreuse view: SDL window/renderer creation failed: %s\n", SDL_GetError());
        goto done;
    }

    vr_render_options o;
    memset(&o, 0, sizeof o);
    o.strategy = vr_reuse_find(strategy);
    o.loop_iterations = load;
    o.mode = mode;
    o.shade = vr_resolve_params_default();
    vr_camera_fit(&o.camera, &mesh);
    o.camera.yaw = yaw, o.camera.pitch = pitch, o.camera.zoom = zoom;
    const vr_camera home = o.camera;
    int overlay = 1, dirty = 1, dragging = 0;
    long frame_no = 0;
    for (int quit = 0; !quit;) {
        SDL_Event e;
        while (SDL_PollEvent(&e)) {
            if (e.type == SDL_QUIT) {
                quit = 1;
            } else if (e.type == SDL_WINDOWEVENT) {
                dirty = 1;
            } else if (e.type == SDL_MOUSEBUTTONDOWN && e.button.button == SDL_BUTTON_LEFT) {
                dragging = 1;
            } else if (e.type == SDL_MOUSEBUTTONUP && e.button.button == SDL_BUTTON_LEFT) {
                dragging = 0;
            } else if (e.type == SDL_MOUSEMOTION && dragging) {
                o.camera.yaw -= 0.4f * (float)e.motion.xrel;
                o.camera.pitch += 0.4f * (float)e.motion.yrel;
                dirty = 1;
            } else if (e.type == SDL_MOUSEWHEEL) {
                o.camera.zoom *= e.wheel.y > 0 ? 1.1f : 1.0f / 1.1f;
                dirty = 1;
            } else if (e.type == SDL_KEYDOWN) {
                const SDL_Keycode k = e.key.keysym.sym;
                dirty = 1;
                if (k == SDLK_ESCAPE || k == SDLK_q)
                    quit = 1;
                else if (k >= SDLK_1 && k < SDLK_1 + VR_REUSE_KIND_COUNT)
                    o.strategy = &vr_reuse_all[k - SDLK_1];
                else if (k == SDLK_h)
                    o.mode = o.mode == VR_SHADE_HEATMAP ? VR_SHADE_LAMBERT : VR_SHADE_HEATMAP;
                else if (k == SDLK_b)
                    o.mode = o.mode == VR_SHADE_BATCHES ? VR_SHADE_LAMBERT : VR_SHADE_BATCHES;
                else if (k == SDLK_l) {
                    size_t at = 0;
                    while (at < VR_LOAD_COUNT && vr_load_iterations[at] != o.loop_iterations)
                        ++at;
                    o.loop_iterations = vr_load_iterations[(at + 1) % VR_LOAD_COUNT];
                } else if (k == SDLK_c)
                    o.raster.cull_back = !o.raster.cull_back;
                else if (k == SDLK_o)
                    overlay = !overlay;
                else if (k == SDLK_r)
                    o.camera = home;
                else if (k == SDLK_LEFT || k == SDLK_RIGHT)
                    o.camera.yaw += k == SDLK_LEFT ? 10.0f : -10.0f;
                else if (k == SDLK_UP || k == SDLK_DOWN)
                    o.camera.pitch += k == SDLK_UP ? 10.0f : -10.0f;
                else if (k == SDLK_PLUS || k == SDLK_EQUALS || k == SDLK_KP_PLUS)
                    o.camera.zoom *= 1.1f;
                else if (k == SDLK_MINUS || k == SDLK_KP_MINUS)
                    o.camera.zoom /= 1.1f;
                else if (k == SDLK_s && tex)
                    save_screenshot(ren, tex_w, tex_h, "view.png");
                else
                    dirty = 0;
            }
        }
        o.camera.pitch = o.camera.pitch < -89 ? -89 : o.camera.pitch > 89 ? 89 : o.camera.pitch;
        o.camera.zoom = o.camera.zoom < 0.05f ? 0.05f : o.camera.zoom > 50 ? 50 : o.camera.zoom;
        if (frames > 0 && frame_no > 0) {
            o.camera.yaw += 5.0f; /* scripted runs: every frame re-renders a new view */
            dirty = 1;
        }
        if (!dirty) {
            SDL_Delay(8);
            continue;
        }
        dirty = 0;
        int w = 0, h = 0;
        SDL_GetRendererOutputSize(ren, &w, &h);
        w = w < 1 ? 1 : w > (int)VR_RASTER_MAX_SIZE ? (int)VR_RASTER_MAX_SIZE : w;
        h = h < 1 ? 1 : h > (int)VR_RASTER_MAX_SIZE ? (int)VR_RASTER_MAX_SIZE : h;
        if (w != tex_w || h != tex_h) {
            SDL_DestroyTexture(tex);
            free(frame);
            tex = SDL_CreateTexture(ren, SDL_PIXELFORMAT_RGBA32, SDL_TEXTUREACCESS_STREAMING, w,
                                    h);
            frame = malloc((size_t)w * h * 4);
            if (!tex || !frame) {
                fprintf(stderr, "vreuse view: %dx%d frame: %s\n", w, h,
                        tex ? "out of memory" : SDL_GetError());
                goto done;
            }
            tex_w = w, tex_h = h;
        }
        o.raster.width = (uint32_t)w;
        o.raster.height = (uint32_t)h;
        vr_render_stats st;
        if (vr_renderer_draw(r, frame, &o, &st) != VR_OK) {
            fprintf(stderr, "vreuse view: %s: %s\n", o.strategy->name, vr_last_error());
            goto done;
        }
        const char *mode_name = o.mode == VR_SHADE_HEATMAP   ? "heatmap"
                                : o.mode == VR_SHADE_BATCHES ? "batches"
                                                             : "lambert";
        char line1[160], line2[160], title[640];
        snprintf(line1, sizeof line1,
                 "%s  load %u  geom %.2f ms  raster %.2f ms  resolve %.2f ms  %s",
                 o.strategy->name, o.loop_iterations, st.geometry_ms, st.raster.raster_ms,
                 st.raster.resolve_ms, st.gpu ? "GPU" : "CPU");
        snprintf(line2, sizeof line2, "%.3f shaded/tri  reuse %.3f  %u batches  %s%s",
                 st.shaded_per_tri, st.reuse, st.batches, mode_name,
                 o.raster.cull_back ? "  cull" : "");
        snprintf(title, sizeof title, "vreuse view - %s | %s | %s", spec, line1, line2);
        SDL_SetWindowTitle(win, title);
        if (overlay)
            draw_overlay(frame, (uint32_t)w, (uint32_t)h, line1, line2,
                         o.mode == VR_SHADE_HEATMAP);
        SDL_UpdateTexture(tex, NULL, frame, 4 * w);
        SDL_RenderClear(ren);
        SDL_RenderCopy(ren, tex, NULL, NULL);
        ++frame_no;
        if (frames > 0 && frame_no >= frames) {
            if (shot && save_screenshot(ren, w, h, shot))
                goto done;
            printf("vreuse view: %ld frames; last: %s | %s\n", frame_no, line1, line2);
            quit = 1;
        }
        SDL_RenderPresent(ren);
    }
    rc = 0;
done:
    free(frame);
    if (tex)
        SDL_DestroyTexture(tex);
    if (ren)
        SDL_DestroyRenderer(ren);
    if (win)
        SDL_DestroyWindow(win);
    SDL_Quit();
    vr_renderer_destroy(r);
    vr_mesh_free(&mesh);
    return rc;
}
