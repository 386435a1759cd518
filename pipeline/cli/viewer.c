/* viewer.c - `vreuse view [SCENE]`: an SDL2 window showing the scene through the geometry stage
 * and the rasterizer (render.c), on the GPU when there is one and through the CPU twins
 * otherwise (so it also runs under Xvfb). Drag to orbit, wheel to zoom; keys switch strategy
 * (1-8, Tab), shader load (l), triangle order (t), heatmap (h) and batches (b). The title and an
 * overlay show per-stage milliseconds and reuse. The only file that includes SDL.
 * Try: `xvfb-run -a vreuse view bunny.obj --heatmap --frames 3 --screenshot v.png`.
 */
#define _POSIX_C_SOURCE 200809L
#include "pipeline/cli/cli.h"
#include "pipeline/cli/commands.h"
#include "pipeline/stage/geometry.h"
#include "scenes/scene.h"
#include "raster/raster.h"

#include <SDL.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NO_DISPLAY_HINT "run it in a desktop session or under xvfb-run"

/* Reads the window back (SDL_RenderReadPixels, before present) and writes it as PNG. */
static int save_screenshot(SDL_Renderer *ren, int w, int h, const char *path)
{
    uint8_t *px = malloc((size_t)w * h * 4);
    if (!px)
        return vr_cli_fail(1, "view", "out of memory for a %dx%d screenshot", w, h);
    if (SDL_RenderReadPixels(ren, NULL, SDL_PIXELFORMAT_RGBA32, px, 4 * w) != 0) {
        free(px);
        return vr_cli_fail(1, "view", "screenshot: reading the window failed: %s",
                           SDL_GetError());
    }
    for (size_t i = 0; i < (size_t)w * h; ++i)
        px[4 * i + 3] = 255; /* some renderers leave alpha undefined */
    vr_status s = vr_cmd_write_png(path, "screenshot", px, (uint32_t)w, (uint32_t)h);
    free(px);
    if (s != VR_OK)
        return vr_cli_fail_last("view");
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

/* The scene in `order`, with a renderer for it: loaded into *mesh and *r, replacing what they
 * held (the renderer points at *mesh, so the new mesh is in place before it is made). On a
 * failure to load or reorder the old pair stays and 1 is returned (message printed); a failed
 * renderer leaves *r NULL. */
static int load_scene(vr_mesh *mesh, vr_renderer **r, const char *spec, int order,
                      uint64_t seed, int gpu)
{
    vr_mesh m;
    const double t0 = vr_now_ms();
    if (vr_mesh_load(&m, spec) != VR_OK)
        return vr_cli_fail_last("view");
    if (order != VR_ORDER_FILE && vr_mesh_reorder(&m, (vr_order)order, seed) != VR_OK) {
        vr_mesh_free(&m);
        return vr_cli_fail_last("view");
    }
    vr_renderer_destroy(*r);
    *r = NULL;
    vr_mesh_free(mesh);
    *mesh = m;
    if (vr_renderer_create(r, mesh, gpu) != VR_OK)
        return vr_cli_fail_last("view");
    printf("vreuse view: %s: %u triangles, %u vertices, order %s (%.0f ms); %s\n", spec,
           mesh->index_count / 3, mesh->vertex_count, vr_order_name((vr_order)order),
           vr_now_ms() - t0, gpu ? vr_gpu_device_name() : "CPU twins");
    return 0;
}

static const vr_cli_command g_cmd = {
    "view", "[SCENE]",
    "Interactive viewer: SCENE (default sphere) through the geometry stage and the rasterizer,\n"
    "on the GPU when there is one, else through the CPU twins. Keys:\n"
    "  drag or arrows: orbit   wheel or +/-: zoom   r: reset camera\n"
    "  1-8: strategy naive, warp, hash, phash, sort, multi, patch, meshlet\n"
    "  Tab, l, t: the next strategy, load, order of the --strategy, --load, --order list; when\n"
    "    one item was given: of all strategies, of simple, light, medium, heavy, of file,\n"
    "    forsyth, tipsify, random (t reloads the scene)\n"
    "  h: heatmap of shading counts   b: batch colours   c: back-face culling   o: overlay\n"
    "  s: screenshot (view.png, then view-2.png, ...)   q, Esc: quit\n"
    "List options start with their first item.",
    "Needs a display: DISPLAY or WAYLAND_DISPLAY (or an SDL_VIDEODRIVER of your choice);\n"
    "without one it stops at once. Scripted: xvfb-run -a vreuse view bunny.obj --frames 3\n"
    "--screenshot v.png.",
    VR_CLI_SCENE_OR_DEFAULT};

int vr_cmd_view(int argc, char **argv)
{
    static vr_cli_loads loads; /* large (names); static keeps it off the stack */
    vr_cli_strategies strategies;
    memset(&strategies, 0, sizeof strategies);
    strategies.v[0] = vr_reuse_find("hash");
    strategies.count = 1;
    memset(&loads, 0, sizeof loads);
    loads.count = 1;
    snprintf(loads.name[0], sizeof loads.name[0], "simple");
    vr_cli_orders orders = {{VR_ORDER_FILE}, 1};
    uint64_t seed = 1;
    int mode = VR_SHADE_LAMBERT, force_cpu = 0;
    uint32_t size[2] = {1280, 720}, frames = 0;
    float yaw = 0, pitch = 15, zoom = 1;
    const char *shot = NULL;
    const vr_cli_opt opts[] = {
        VR_CLI_STRATEGY(&strategies, "hash"),
        VR_CLI_LOAD(&loads, "simple"),
        VR_CLI_ORDER(&orders, "file"),
        VR_CLI_SEED(&seed),
        {"heatmap", 0, NULL, "start in heatmap mode", NULL, &mode, VR_SHADE_HEATMAP, 0, 0, 0,
         NULL},
        {"batches", 0, NULL, "start with batch colours", NULL, &mode, VR_SHADE_BATCHES, 0, 0, 0,
         NULL},
        VR_CLI_SIZE(size, "1280x720, the window"),
        VR_CLI_YAW(&yaw),
        VR_CLI_PITCH(&pitch),
        VR_CLI_ZOOM(&zoom),
        VR_CLI_CPU(&force_cpu),
        {"frames", 0, "N", "quit after N frames, 1..1000000 (each re-renders; the camera turns 5 "
         "degrees)", vr_cli_parse_u32, &frames, 0, 1, 1000000, 0, NULL},
        {"screenshot", 0, "FILE", "with --frames: save the last frame's window as PNG FILE",
         vr_cli_parse_path, &shot, 0, 0, 0, 0, NULL},
        {0}};
    vr_cli_args args;
    VR_CLI_PARSE_OR_RETURN(&g_cmd, opts, argc, argv, &args);
    if (shot && frames == 0)
        return vr_cli_fail(VR_CLI_USAGE, "view", "--screenshot needs --frames N");
    if (shot && !strcmp(shot, "-"))
        return vr_cli_fail(VR_CLI_USAGE, "view", "--screenshot '-': a PNG needs a file name");
    const char *spec = args.v[0];

    /* no display: stop before loading anything (SDL would otherwise pick a driver that shows
     * nothing, or fail only after the scene loaded) */
    const char *driver = getenv("SDL_VIDEODRIVER"), *x11 = getenv("DISPLAY"),
               *wayland = getenv("WAYLAND_DISPLAY");
    if ((!driver || !*driver) && (!x11 || !*x11) && (!wayland || !*wayland))
        return vr_cli_fail(1, "view", "no display (DISPLAY is not set); " NO_DISPLAY_HINT);
    if (SDL_Init(SDL_INIT_VIDEO) != 0)
        return vr_cli_fail(1, "view", "no display (SDL: %s); " NO_DISPLAY_HINT, SDL_GetError());
    /* SDL 2.26 falls back to its invisible 'offscreen' driver when the display cannot be
     * opened: a window nobody sees, waiting for keys nobody can press */
    const char *picked = SDL_GetCurrentVideoDriver();
    if ((!driver || !*driver) && picked &&
        (!strcmp(picked, "offscreen") || !strcmp(picked, "dummy"))) {
        SDL_Quit();
        return vr_cli_fail(1, "view", "no display (%s=%s cannot be opened); " NO_DISPLAY_HINT,
                           x11 && *x11 ? "DISPLAY" : "WAYLAND_DISPLAY",
                           x11 && *x11 ? x11 : wayland);
    }
    int rc = 1;
    vr_mesh mesh;
    memset(&mesh, 0, sizeof mesh);
    vr_renderer *r = NULL;
    SDL_Texture *tex = NULL;
    uint8_t *frame = NULL;
    int tex_w = 0, tex_h = 0;
    SDL_Window *win = SDL_CreateWindow("vreuse view", SDL_WINDOWPOS_CENTERED,
                                       SDL_WINDOWPOS_CENTERED, (int)size[0], (int)size[1],
                                       SDL_WINDOW_RESIZABLE | SDL_WINDOW_ALLOW_HIGHDPI);
    SDL_Renderer *ren = win ? SDL_CreateRenderer(win, -1, 0) : NULL;
    if (!ren) {
        vr_cli_fail(1, "view", "no display (SDL window: %s); " NO_DISPLAY_HINT, SDL_GetError());
        goto done;
    }
    const int gpu = !force_cpu && vr_gpu_available();
    int order = orders.v[0], order_at = 0, load_at = 0, strategy_at = 0, shots = 0;
    if (load_scene(&mesh, &r, spec, order, seed, gpu) != 0)
        goto done;

    vr_render_options o;
    memset(&o, 0, sizeof o);
    o.strategy = strategies.v[0];
    o.loop_iterations = loads.v[0];
    o.mode = (vr_shade_mode)mode;
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
                if (k == SDLK_ESCAPE || k == SDLK_q) {
                    quit = 1;
                } else if (k >= SDLK_1 && k < SDLK_1 + VR_REUSE_KIND_COUNT) {
                    o.strategy = &vr_reuse_all[k - SDLK_1];
                } else if (k == SDLK_TAB) {
                    /* Tab, l, t: through the option's list; with one item, through all */
                    if (strategies.count > 1) {
                        strategy_at = (strategy_at + 1) % strategies.count;
                        o.strategy = strategies.v[strategy_at];
                    } else {
                        o.strategy = &vr_reuse_all[(o.strategy->kind + 1) % VR_REUSE_KIND_COUNT];
                    }
                } else if (k == SDLK_l) {
                    if (loads.count > 1) {
                        load_at = (load_at + 1) % loads.count;
                        o.loop_iterations = loads.v[load_at];
                    } else {
                        size_t at = 0;
                        while (at < VR_LOAD_COUNT && vr_load_iterations[at] != o.loop_iterations)
                            ++at;
                        o.loop_iterations = vr_load_iterations[(at + 1) % VR_LOAD_COUNT];
                    }
                } else if (k == SDLK_t) {
                    const int at = (order_at + 1) % orders.count;
                    const int next = orders.count > 1
                                         ? orders.v[at]
                                         : (int)((((unsigned)order & ~(unsigned)VR_ORDER_FETCH) +
                                                  1) % VR_ORDER_COUNT);
                    if (load_scene(&mesh, &r, spec, next, seed, gpu) == 0)
                        order = next, order_at = at;
                    else if (!r)
                        goto done; /* the old renderer is gone: nothing left to show */
                } else if (k == SDLK_h) {
                    o.mode = o.mode == VR_SHADE_HEATMAP ? VR_SHADE_LAMBERT : VR_SHADE_HEATMAP;
                } else if (k == SDLK_b) {
                    o.mode = o.mode == VR_SHADE_BATCHES ? VR_SHADE_LAMBERT : VR_SHADE_BATCHES;
                } else if (k == SDLK_c) {
                    o.raster.cull_back = !o.raster.cull_back;
                } else if (k == SDLK_o) {
                    overlay = !overlay;
                } else if (k == SDLK_r) {
                    o.camera = home;
                } else if (k == SDLK_LEFT || k == SDLK_RIGHT) {
                    o.camera.yaw += k == SDLK_LEFT ? 10.0f : -10.0f;
                } else if (k == SDLK_UP || k == SDLK_DOWN) {
                    o.camera.pitch += k == SDLK_UP ? 10.0f : -10.0f;
                } else if (k == SDLK_PLUS || k == SDLK_EQUALS || k == SDLK_KP_PLUS) {
                    o.camera.zoom *= 1.1f;
                } else if (k == SDLK_MINUS || k == SDLK_KP_MINUS) {
                    o.camera.zoom /= 1.1f;
                } else if (k == SDLK_s && tex) {
                    char name[32];
                    snprintf(name, sizeof name, shots ? "view-%d.png" : "view.png", shots + 1);
                    shots += save_screenshot(ren, tex_w, tex_h, name) == 0;
                } else {
                    dirty = 0;
                }
            }
        }
        /* the bounds of --pitch and --zoom */
        o.camera.pitch = o.camera.pitch < -89 ? -89 : o.camera.pitch > 89 ? 89 : o.camera.pitch;
        o.camera.zoom = o.camera.zoom < 0.01f ? 0.01f : o.camera.zoom > 100 ? 100 : o.camera.zoom;
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
                vr_cli_fail(1, "view", "%dx%d frame: %s", w, h,
                            tex ? "out of memory" : SDL_GetError());
                goto done;
            }
            tex_w = w, tex_h = h;
        }
        o.raster.width = (uint32_t)w;
        o.raster.height = (uint32_t)h;
        vr_render_stats st;
        if (vr_renderer_draw(r, frame, &o, &st) != VR_OK) {
            vr_cli_fail(1, "view", "%s: %s", o.strategy->name, vr_last_error());
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
        snprintf(line2, sizeof line2, "%.3f shaded/tri  reuse %.3f  %u batches  %s  %s%s",
                 st.shaded_per_tri, st.reuse, st.batches, vr_order_name((vr_order)order),
                 mode_name, o.raster.cull_back ? "  cull" : "");
        snprintf(title, sizeof title, "vreuse view - %s | %s | %s", spec, line1, line2);
        SDL_SetWindowTitle(win, title);
        if (overlay)
            draw_overlay(frame, (uint32_t)w, (uint32_t)h, line1, line2,
                         o.mode == VR_SHADE_HEATMAP);
        SDL_UpdateTexture(tex, NULL, frame, 4 * w);
        SDL_RenderClear(ren);
        SDL_RenderCopy(ren, tex, NULL, NULL);
        ++frame_no;
        if (frames > 0 && frame_no >= (long)frames) {
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
