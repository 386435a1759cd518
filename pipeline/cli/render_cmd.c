/* render_cmd.c - `vreuse render SCENE... --strategy LIST [--heatmap|--batches] --out F.png`:
 * loads each scene, renders it in every --order (camera fitted to the mesh): geometry stage,
 * rasterizer and resolve (raster/render.c), writes a PNG per scene and order and prints per-stage
 * times and invocation counts. Several strategies give side-by-side panels (the layout of Kenzel
 * et al. 2018, Fig. 7). `--reps N` times N frames per scene, order, strategy and load after a
 * warm-up and reports medians per stage; `--csv F` writes them. `--big list,hp` times both
 * ways the GPU rasterizer spreads large triangles over warps (raster/raster.cu), row by row.
 * Without a CUDA device it runs the CPU twins, says so, and announces a long run with its
 * estimate.
 * Try: `vreuse render bunny.obj --order file,forsyth --strategy naive,warp,hash --heatmap -o h.png`.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime, pthread_cond_timedwait */
#include "pipeline/cli/cli.h"
#include "pipeline/cli/commands.h"
#include "pipeline/stage/geometry.h"
#include "pipeline/stage/parts.h"
#include "pipeline/gts/gts.h"
#include "scenes/scene.h"
#include "raster/raster.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The CPU twins' speed on the 2-core CI machine: 6.4e8 dependent FMA steps of the synthetic load
 * per second on an idle core, 3.2e8 while other builds share it (naive and hash, sphere:2k at
 * loads 1k..100k); an invocation costs about 50 steps besides (shading, batching, its share of
 * raster and resolve). For the announcement and the progress estimate only. */
#define CPU_STEPS_PER_S 5e8
#define CPU_STEPS_PER_INVOCATION 50.0
#define CPU_ANNOUNCE_S 5.0 /* estimated seconds above which a CPU run is announced */
#define PROGRESS_LABEL "render (CPU twins, estimated)"

/* ---- PNG output (view's screenshots too) -------------------------------------------------- */

typedef struct png_job {
    const uint8_t *rgba;
    uint32_t width, height;
    const char *path, *what; /* the destination and its name in messages */
} png_job;

static vr_status write_png(const char *file, void *ctx)
{
    const png_job *j = (const png_job *)ctx;
    vr_status s = vr_image_write_png(file, j->rgba, j->width, j->height);
    const size_t n = strlen(file);
    if (s != VR_OK && !strncmp(vr_last_error(), file, n)) {
        /* the message names the temporary file: name the destination instead */
        char rest[768];
        snprintf(rest, sizeof rest, "%s", vr_last_error() + n);
        vr_set_error(s, "%s '%s'%s", j->what, j->path, rest);
    }
    return s;
}

vr_status vr_cmd_write_png(const char *path, const char *what, const uint8_t *rgba,
                           uint32_t width, uint32_t height)
{
    png_job j = {rgba, width, height, path, what};
    return vr_cli_write_via(path, what, write_png, &j);
}

/* ---- progress of a CPU run ---------------------------------------------------------------- */

/* One CPU frame can take hours (a heavy --load), so progress cannot wait for frames to end: a
 * thread advances the estimate at the measured rate between frames, capped below each frame's
 * own estimate, and every finished frame puts it back on its estimated share. */
typedef struct cpu_progress {
    pthread_t thread;
    pthread_mutex_t lock; /* guards the fields below */
    pthread_cond_t wake;
    int running, stop;
    double total, done;        /* estimated steps: the whole run, the frames finished */
    double frame, frame_start; /* estimated steps of the frame under way, its vr_now_ms */
} cpu_progress;

static void *progress_main(void *arg)
{
    cpu_progress *p = (cpu_progress *)arg;
    pthread_mutex_lock(&p->lock);
    while (!p->stop) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += 250000000L;
        if (until.tv_nsec >= 1000000000L)
            until.tv_sec += 1, until.tv_nsec -= 1000000000L;
        pthread_cond_timedwait(&p->wake, &p->lock, &until);
        if (p->stop)
            break;
        double in_frame = (vr_now_ms() - p->frame_start) * 1e-3 * CPU_STEPS_PER_S;
        if (in_frame > 0.99 * p->frame)
            in_frame = 0.99 * p->frame;
        double done = p->done + in_frame;
        if (done > 0.99 * p->total)
            done = 0.99 * p->total; /* 100% only when the work ended */
        vr_progress(PROGRESS_LABEL, (uint64_t)done, (uint64_t)p->total);
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

static void progress_start(cpu_progress *p, double total_steps)
{
    memset(p, 0, sizeof *p);
    p->total = total_steps;
    p->frame_start = vr_now_ms();
    if (vr_progress_quiet || pthread_mutex_init(&p->lock, NULL) != 0)
        return;
    if (pthread_cond_init(&p->wake, NULL) != 0) {
        pthread_mutex_destroy(&p->lock);
        return;
    }
    /* no thread, no progress: the run itself goes on */
    p->running = pthread_create(&p->thread, NULL, progress_main, p) == 0;
    if (!p->running) {
        pthread_cond_destroy(&p->wake);
        pthread_mutex_destroy(&p->lock);
    }
}

static void progress_frame(cpu_progress *p, double steps, int begin)
{
    if (!p->running)
        return;
    pthread_mutex_lock(&p->lock);
    if (begin) {
        p->frame = steps;
        p->frame_start = vr_now_ms();
    } else {
        p->done += p->frame;
        p->frame = 0;
    }
    pthread_mutex_unlock(&p->lock);
}

static void progress_stop(cpu_progress *p)
{
    if (!p->running)
        return;
    pthread_mutex_lock(&p->lock);
    p->stop = 1;
    pthread_cond_signal(&p->wake);
    pthread_mutex_unlock(&p->lock);
    pthread_join(p->thread, NULL);
    pthread_cond_destroy(&p->wake);
    pthread_mutex_destroy(&p->lock);
    p->running = 0;
    /* ends the line (also one a failure cut short) */
    vr_progress(PROGRESS_LABEL, (uint64_t)p->total, (uint64_t)p->total);
}

/* ---- the command -------------------------------------------------------------------------- */

/* What the command line asks for, shared by every scene and order. */
typedef struct render_job {
    vr_cli_strategies strategies; /* the panels, left to right */
    vr_cli_loads loads;
    vr_cli_orders orders;
    vr_cli_choices bigs;         /* vr_raster_big_mode values; the image uses the first */
    int show_big;                /* --big other than list: the table gets a big column */
    uint64_t seed;
    int mode, annotate, force_cpu, gpu, reps, no_image, gts_batches, cull, quiet;
    float yaw, pitch, zoom;
    uint32_t size[2];            /* pixels per panel */
    const char *out, *csv_path;
    int many_outputs;            /* several scenes or orders: one PNG each, named by both */
    vr_cli_out csv;
    int csv_rows;
    FILE *log;                   /* the text output: stderr when the CSV takes stdout */
    vr_cli_limits limits;        /* --limits, --sms */
    int patch_builder;           /* --patch-builder: vr_patch_builder */
    int gpus, parts;             /* --gpus N (sort-last over NCCL), --parts N (on one device);
                                    0: not given, one run */
    int stream, stream_mb, stream_from; /* --stream, --stream-mb (MiB of queue), --stream-from
                                    (vr_stream_source) */
    int graph;                   /* --graph: vr_render_options.graph */
    double h2d_bps;              /* --stream-from host: the device's pinned copy rate */
    vr_gpu_shape shape;          /* the device's, when job->gpu */
    vr_batch_limits limits_of[VR_REUSE_KIND_COUNT]; /* per mesh: each strategy's limits */
    /* CPU path, per mesh: invocations of each strategy kind (estimated) and the progress */
    uint64_t invocations[VR_REUSE_KIND_COUNT];
    cpu_progress progress;
    double first_frame_ms;       /* per mesh: its first frame's wall time (the cut, the scene's
                                    uploads, the first collective); -1 before it */
} render_job;

/* Medians over --reps frames of one strategy and load (a single frame's values without). */
typedef struct render_timing {
    double geometry_ms;  /* strategy kernels, counting off */
    double clear_ms;     /* visibility-buffer clear */
    double raster_ms;    /* rasterization without the clear */
    double raster_total_ms; /* clear + rasterization: the CSV's raster_ms */
    double resolve_ms;
    double frame_ms;     /* wall time of the whole frame, image left on the device */
    double composite_ms; /* sort-last: the visibility minimum and the image maximum */
    double composite_vis_ms; /* of which the visibility minimum */
    double stream_ms;    /* streamed: cudaEvents around all chunks */
    double gpu_frame_ms; /* GPU in-core: cudaEvents around the frame's device work */
} render_timing;

static const char *mode_name(vr_shade_mode m)
{
    return m == VR_SHADE_HEATMAP ? "heatmap" : m == VR_SHADE_BATCHES ? "batches" : "lambert";
}

/* o->strategy = ops, with its limits for the current mesh. */
static void set_strategy(const render_job *job, vr_render_options *o, const vr_reuse_ops *ops)
{
    o->strategy = ops;
    o->limits = &job->limits_of[ops->kind];
}

/* Chooses each panel's limits for `mesh` and prints them. */
static vr_status choose_limits(render_job *job, const vr_mesh *mesh)
{
    char label[64];
    vr_cli_limits_label(label, sizeof label, &job->limits, job->gpu ? &job->shape : NULL);
    fprintf(job->log, "  limits %s:", label);
    for (int p = 0; p < job->strategies.count; ++p) {
        const vr_reuse_ops *ops = job->strategies.v[p];
        vr_batch_limits *l = &job->limits_of[ops->kind];
        const vr_status s =
            vr_cli_limits_resolve(l, &job->limits, ops->kind, mesh->index_count / 3,
                                  mesh->vertex_count, job->gpu ? &job->shape : NULL);
        if (s != VR_OK)
            return s;
        if (ops->dynamic || ops->plan)
            fprintf(job->log, "%s %s block %u, N_u %u, <= %u indices", p ? ";" : "", ops->name,
                    l->block_size, l->max_unique, l->max_indices);
        else if (ops->kind == VR_REUSE_WARP)
            fprintf(job->log, "%s %s block %u, batch %u", p ? ";" : "", ops->name, l->block_size,
                    l->batch_indices);
        else
            fprintf(job->log, "%s %s block %u", p ? ";" : "", ops->name, l->block_size);
    }
    fprintf(job->log, "\n");
    return VR_OK;
}

static void print_header(FILE *f, int show_big, int show_parts, int show_stream)
{
    fprintf(f, "  %-8s %9s ", "strategy", "load");
    if (show_big)
        fprintf(f, "%4s ", "big");
    if (show_parts)
        fprintf(f, "%5s %7s ", "parts", "comp_ms");
    if (show_stream)
        fprintf(f, "%6s %9s %7s %8s %7s %8s ", "chunks", "stream_ms", "pipe_MB", "scene_MB",
                "copy_GB", "GB/s");
    fprintf(f, "%9s %8s %9s %10s %9s %9s %8s %12s %7s %7s %8s %11s %8s\n", "geom_ms",
            "clear_ms", "raster_ms", "resolve_ms", "frame_ms", "gpu_ms", "xfer_ms", "invocations",
            "shd/tri", "reuse", "batches", "fragments", "clipped");
}

static void print_row(FILE *f, const vr_render_options *o, const vr_render_stats *st,
                      const render_timing *t, int show_big, int show_parts, int show_stream)
{
    fprintf(f, "  %-8s %9u ", o->strategy->name, o->loop_iterations);
    if (show_big)
        fprintf(f, "%4s ", vr_raster_big_mode_name(o->raster.big_mode));
    if (show_parts)
        fprintf(f, "%5u %7.3f ", st->parts, t->composite_ms);
    if (show_stream)
        fprintf(f, "%6u %9.3f %7.1f %8.1f %7.3f %8.2f ", st->chunks, t->stream_ms,
                st->pipeline_bytes / 1e6, st->scene_bytes / 1e6, st->copied_bytes / 1e9,
                t->stream_ms > 0 ? st->copied_bytes / (t->stream_ms * 1e6) : 0.0);
    if (st->graph) /* one graph: the stages are not timed apart */
        fprintf(f, "%9s %8s %9s %10s ", "graph", "-", "-", "-");
    else
        fprintf(f, "%9.3f %8.3f %9.3f %10.3f ", t->geometry_ms, t->clear_ms, t->raster_ms,
                t->resolve_ms);
    fprintf(f, "%9.3f ", t->frame_ms);
    if (st->gpu && !st->chunks && st->parts <= 1)
        fprintf(f, "%9.3f ", t->gpu_frame_ms);
    else
        fprintf(f, "%9s ", "-"); /* the CPU twins, or the chunks' and parts' own sequences */
    fprintf(f, "%8.2f %12llu %7.3f %7.4f %8u %11llu %8llu\n", st->transfer_ms,
            (unsigned long long)st->invocations, st->shaded_per_tri, st->reuse, st->batches,
            (unsigned long long)st->raster.fragments, (unsigned long long)st->raster.clipped);
}

static double frame_steps(const render_job *job, const vr_reuse_ops *ops, uint32_t load)
{
    return (double)job->invocations[ops->kind] * ((double)load + CPU_STEPS_PER_INVOCATION);
}

/* One frame; on the CPU it moves the progress estimate along. */
static vr_status draw(render_job *job, vr_renderer *r, uint8_t *rgba, const vr_render_options *o,
                      vr_render_stats *st)
{
    progress_frame(&job->progress, frame_steps(job, o->strategy, o->loop_iterations), 1);
    const double t0 = vr_now_ms();
    vr_status s = vr_renderer_draw(r, rgba, o, st);
    if (s == VR_OK && job->first_frame_ms < 0)
        job->first_frame_ms = vr_now_ms() - t0;
    progress_frame(&job->progress, 0, 0);
    return s;
}

/* Times job->reps frames (after two warm-up frames: the first refreshes the counts) of the
 * current strategy and load; stats gets the last frame's counts. */
static vr_status time_frames(render_job *job, vr_renderer *r, const vr_render_options *o,
                             vr_render_stats *st, render_timing *t)
{
    enum { GEO, CLEAR, RASTER, RASTER_TOTAL, RESOLVE, FRAME, COMPOSITE, COMPOSITE_VIS, STREAM,
           GPU_FRAME, SERIES };
    const int n = job->reps;
    double *v = malloc((size_t)n * SERIES * sizeof *v);
    if (!v)
        return vr_set_error(VR_ERR_OOM, "out of memory for %d timings", n);
    vr_status s = VR_OK;
    for (int i = -2; i < n && s == VR_OK; ++i) {
        const double t0 = vr_now_ms();
        s = draw(job, r, NULL, o, st);
        const double wall = vr_now_ms() - t0;
        if (s != VR_OK || i < 0)
            continue;
        v[GEO * n + i] = st->geometry_ms;
        v[CLEAR * n + i] = st->raster.clear_ms;
        v[RASTER * n + i] = st->raster.raster_ms;
        v[RASTER_TOTAL * n + i] = st->raster.clear_ms + st->raster.raster_ms;
        v[RESOLVE * n + i] = st->raster.resolve_ms;
        v[FRAME * n + i] = wall;
        v[COMPOSITE * n + i] = st->composite_ms;
        v[COMPOSITE_VIS * n + i] = st->composite_vis_ms;
        v[STREAM * n + i] = st->stream_ms;
        v[GPU_FRAME * n + i] = st->gpu_frame_ms;
        if (!job->progress.running) /* the CPU estimate shows the whole run instead */
            vr_progress("  timing", (uint64_t)i + 1, (uint64_t)n);
    }
    if (s == VR_OK) {
        t->geometry_ms = vr_cli_median(v + GEO * n, n);
        t->clear_ms = vr_cli_median(v + CLEAR * n, n);
        t->raster_ms = vr_cli_median(v + RASTER * n, n);
        t->raster_total_ms = vr_cli_median(v + RASTER_TOTAL * n, n);
        t->resolve_ms = vr_cli_median(v + RESOLVE * n, n);
        t->frame_ms = vr_cli_median(v + FRAME * n, n);
        t->composite_ms = vr_cli_median(v + COMPOSITE * n, n);
        t->composite_vis_ms = vr_cli_median(v + COMPOSITE_VIS * n, n);
        t->stream_ms = vr_cli_median(v + STREAM * n, n);
        t->gpu_frame_ms = vr_cli_median(v + GPU_FRAME * n, n);
    }
    free(v);
    return s;
}

static void format_seconds(char *buf, size_t n, double s)
{
    if (s < 90)
        snprintf(buf, n, "%.0f s", s);
    else if (s < 5400)
        snprintf(buf, n, "%.0f min", s / 60);
    else
        snprintf(buf, n, "%.1f h", s / 3600);
}

/* CPU path: estimates the work of every frame this job draws of one mesh (invocations x (load
 * + CPU_STEPS_PER_INVOCATION) steps each), announces a run over CPU_ANNOUNCE_S seconds on stderr
 * before it starts (also with --quiet) and starts the progress estimate. Invocations are the
 * index count (naive's, an upper bound) unless a heavy load makes the estimate worth a cheap
 * 1x1 frame at load 0 per strategy, which counts them exactly. */
static vr_status cpu_announce(render_job *job, vr_renderer *r, const vr_render_options *base,
                              const char *spec)
{
    uint32_t max_load = 0;
    for (int l = 0; l < job->loads.count; ++l)
        max_load = job->loads.v[l] > max_load ? job->loads.v[l] : max_load;
    const double per_strategy = /* frames per load */
        job->reps ? (job->reps + 2.0) * job->bigs.count : 0.0;
    double total = 0;
    uint64_t frames = 0;
    for (int pass = 0; pass < 2; ++pass) {
        total = 0, frames = 0;
        for (int p = 0; p < job->strategies.count; ++p) {
            const vr_reuse_ops *ops = job->strategies.v[p];
            for (int l = 0; l < job->loads.count; ++l)
                total += per_strategy * frame_steps(job, ops, job->loads.v[l]);
            frames += (uint64_t)(per_strategy * job->loads.count);
            if (!job->no_image)
                total += frame_steps(job, ops, job->loads.v[0]), ++frames;
        }
        if (pass == 1 || total / CPU_STEPS_PER_S <= CPU_ANNOUNCE_S ||
            max_load <= CPU_STEPS_PER_INVOCATION)
            break;
        for (int p = 0; p < job->strategies.count; ++p) {
            vr_render_options o = *base;
            set_strategy(job, &o, job->strategies.v[p]);
            o.loop_iterations = 0;
            o.raster.width = o.raster.height = 1;
            vr_render_stats st;
            vr_status s = vr_renderer_draw(r, NULL, &o, &st);
            if (s != VR_OK)
                return s;
            job->invocations[o.strategy->kind] = st.invocations;
        }
    }
    const double seconds = total / CPU_STEPS_PER_S;
    fflush(job->log); /* what was said about the scene comes first */
    if (seconds > CPU_ANNOUNCE_S) {
        char t[32];
        format_seconds(t, sizeof t, seconds);
        fprintf(stderr, "vreuse render: %s: the CPU twins need about %s here (%llu frame%s, %.2g "
                "shader steps at ~%.0e per second)%s; a CUDA GPU, a smaller --load or a smaller "
                "scene avoids the wait\n", spec, t, (unsigned long long)frames,
                frames == 1 ? "" : "s", total, CPU_STEPS_PER_S,
                job->force_cpu ? " because of --cpu" : "");
    }
    progress_start(&job->progress, total);
    return VR_OK;
}

/* A frame that failed: the strategy and why; with --gts-batches the file too (its stream is
 * decoded batch by batch, so a malformed one is found here). */
static void frame_failed(const render_job *job, const char *spec, const vr_render_options *o)
{
    if (job->gts_batches)
        vr_cli_fail(1, "render", "%s: %s: %s", spec, o->strategy->name, vr_last_error());
    else
        vr_cli_fail(1, "render", "%s: %s", o->strategy->name, vr_last_error());
}

/* One scene in one order: time every strategy and load, draw the panels, write the PNG. */
static int render_mesh(render_job *job, const char *spec, int order, const vr_mesh *mesh,
                       double load_ms, double reorder_ms)
{
    FILE *log = job->log;
    vr_render_options o;
    memset(&o, 0, sizeof o);
    o.mode = (vr_shade_mode)job->mode;
    o.shade = vr_resolve_params_default();
    o.raster.width = job->size[0];
    o.raster.height = job->size[1];
    o.raster.cull_back = job->cull;
    o.raster.big_mode = job->bigs.v[0];
    o.patch_builder = job->patch_builder;
    o.graph = job->graph;
    const char *order_name = vr_order_name((vr_order)order);
    const int panels = job->strategies.count;
    fprintf(log, "vreuse render: %s: %u triangles, %u vertices, order %s, %ux%u x %d panel%s, "
            "%s\n", spec, mesh->index_count / 3, mesh->vertex_count, order_name, o.raster.width,
            o.raster.height, panels, panels > 1 ? "s" : "", mode_name(o.mode));
    fprintf(log, "  load %.1f ms, reorder %.1f ms\n", load_ms, reorder_ms);
    if (choose_limits(job, mesh) != VR_OK)
        return vr_cli_fail_last("render");

    vr_camera_fit(&o.camera, mesh);
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
    char *png_path = NULL;
    int rc = 1;
    vr_status s;
    if (!job->no_image) {
        png_path = job->many_outputs ? vr_cli_output_path(job->out, spec, order_name)
                                     : strdup(job->out);
        panel = malloc(panel_bytes);
        image = malloc((size_t)img_w * img_h * 4);
        if (!png_path || !panel || !image) {
            vr_cli_fail(1, "render", "out of memory for a %ux%u image", img_w, img_h);
            goto done;
        }
        if (vr_cli_out_check(png_path, "PNG") != VR_OK) { /* before the frames, not after */
            vr_cli_fail_last("render");
            goto done;
        }
        vr_image_fill(image, img_w, img_h, 0, 0, (int)img_w, (int)img_h, o.shade.background);
    }
    const vr_stream_config stream_cfg = {.queue_bytes = (uint64_t)job->stream_mb << 20,
                                         .source = (vr_stream_source)job->stream_from};
    job->first_frame_ms = -1;
    const double setup_t0 = vr_now_ms();
    if ((job->stream ? vr_renderer_create_streamed(&r, mesh, job->gpu, &stream_cfg)
                     : vr_renderer_create(&r, mesh, job->gpu)) != VR_OK) {
        vr_cli_fail_last("render");
        goto done;
    }
    if (job->stream) {
        const uint64_t cap = stream_cfg.queue_bytes / VR_QUEUE_BYTES_PER_TRIANGLE;
        fprintf(log, "  streaming: chunks of at most %llu triangles (a %d MiB queue, whole "
                "batches), the scene's arrays %s\n", (unsigned long long)cap, job->stream_mb,
                !job->gpu ? "read by the CPU twins in place"
                : job->stream_from == VR_STREAM_HOST
                    ? "in page-locked host memory, copied per chunk while the previous one runs"
                    : "on the device");
        if (job->h2d_bps > 0)
            fprintf(log, "  host-to-device copy rate of this device: %.2f GB/s (cudaMemcpy of "
                    "256 MiB from page-locked memory, best of 10)\n", job->h2d_bps / 1e9);
    }
    const double renderer_ms = vr_now_ms() - setup_t0;
    const int show_parts = job->gpus || job->parts;
    if (!show_parts)
        fprintf(log, "  set-up: the renderer %.1f ms\n", renderer_ms);
    if (show_parts) {
        const uint32_t n = (uint32_t)(job->gpus ? job->gpus : job->parts);
        const double parts_t0 = vr_now_ms();
        if (vr_renderer_set_parts(r, n, job->gpus ? VR_COMPOSITE_NCCL : VR_COMPOSITE_LOCAL) !=
            VR_OK) {
            vr_cli_fail_last("render");
            goto done;
        }
        fprintf(log, "  set-up: the renderer %.1f ms, the parts %.1f ms (%s)\n", renderer_ms,
                vr_now_ms() - parts_t0,
                job->gpus ? "their streams and NCCL's ranks" : "their streams and buffers");
        if (job->gpus)
            fprintf(log, "  sort-last: %u GPU%s, one NCCL rank each: an equal share of the "
                    "batches per GPU, visibility words composited by ncclAllReduce (min), "
                    "images by ncclReduce (max) to GPU 0%s\n", n, n == 1 ? "" : "s",
                    job->stream ? "; each GPU streams its share in chunks of its own" : "");
        else
            fprintf(log, "  sort-last: %u parts on %s, composited there (no transport)%s\n", n,
                    job->gpu ? "one GPU" : "the CPU twins",
                    job->stream ? "; each part streams its share in chunks of its own" : "");
    }
    if (job->gts_batches) {
        /* the loaded mesh is the stream's own decode (file order), so its batches and the
         * stream's triangles agree */
        if (!vr_gts_is_file(spec)) {
            vr_cli_fail(1, "render", "--gts-batches: %s is not a compressed file; make one with "
                        "`vreuse compress %s -o FILE.gts`", spec, spec);
            goto done;
        }
        if (vr_gts_read(&gts, spec) != VR_OK) {
            vr_cli_fail_last("render");
            goto done;
        }
        if (!job->gpu && !job->stream) {
            fprintf(log, "  input: compressed, decoded on the CPU at load time (--gts-batches "
                    "needs the GPU stage or --stream)\n");
        } else if (vr_renderer_set_gts(r, &gts) != VR_OK) {
            vr_cli_fail(1, "render", "%s: %s", spec, vr_last_error());
            goto done;
        } else {
            vr_gts_stats gs;
            vr_gts_stats_compute(&gs, &gts);
            fprintf(log, "  input: compressed (%.2f bits/triangle), each batch decoded %s; no "
                    "index buffer is read%s\n", gs.s9_bpt,
                    job->gpu ? "inside the geometry stage" : "by the CPU twins",
                    job->stream && job->stream_from == VR_STREAM_HOST
                        ? " (each chunk copies its slices of the stream)" : "");
        }
    }
    if (!job->gpu) {
        for (int k = 0; k < VR_REUSE_KIND_COUNT; ++k)
            job->invocations[k] = mesh->index_count;
        if (cpu_announce(job, r, &o, spec) != VR_OK) {
            vr_cli_fail_last("render");
            goto done;
        }
    }

    /* timing: every load x strategy, the image stays on the device */
    if (job->reps > 0) {
        fprintf(log, "  medians of %d frames (raster_ms without clear_ms; frame_ms: wall time of "
                "the whole frame)\n", job->reps);
        print_header(log, job->show_big, show_parts, job->stream);
        for (int l = 0; l < job->loads.count; ++l)
            for (int p = 0; p < panels; ++p)
                for (int b = 0; b < job->bigs.count; ++b) {
                    set_strategy(job, &o, job->strategies.v[p]);
                    o.loop_iterations = job->loads.v[l];
                    o.raster.big_mode = job->bigs.v[b];
                    vr_render_stats st;
                    render_timing t = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
                    if (time_frames(job, r, &o, &st, &t) != VR_OK) {
                        frame_failed(job, spec, &o);
                        goto done;
                    }
                    print_row(log, &o, &st, &t, job->show_big, show_parts, job->stream);
                    if (job->csv.f) {
                        FILE *f = job->csv.f;
                        vr_cli_csv_field(f, vr_cli_scene_label(spec));
                        fprintf(f, ",%s,%u,%s,%u,%u,%u,%.4f,%.4f,%.4f,%.4f,%llu,%.6f,%s,%u,%s,"
                                "%.4f,%.4f,%u,%s,%.4f,%.1f,%.1f,%.1f,%.3f,%.4f,%d\n",
                                order_name, st.triangles, o.strategy->name, o.loop_iterations,
                                o.raster.width, o.raster.height, t.geometry_ms,
                                t.raster_total_ms, t.resolve_ms, t.frame_ms,
                                (unsigned long long)st.invocations, st.reuse,
                                vr_raster_big_mode_name(o.raster.big_mode), st.parts,
                                job->gpus ? "nccl" : "local", t.composite_ms,
                                t.composite_vis_ms, st.chunks,
                                job->stream ? vr_stream_source_names[job->stream_from] : "none",
                                t.stream_ms, st.pipeline_bytes / 1e6, st.scene_bytes / 1e6,
                                st.copied_bytes / 1e6, job->h2d_bps / 1e9, t.gpu_frame_ms,
                                st.graph);
                        ++job->csv_rows;
                    }
                }
        o.raster.big_mode = job->bigs.v[0];
    }

    /* the image: one frame per strategy at the first load */
    if (!job->no_image) {
        if (job->reps == 0)
            print_header(log, job->show_big, show_parts, job->stream);
        for (int p = 0; p < panels; ++p) {
            set_strategy(job, &o, job->strategies.v[p]);
            o.loop_iterations = job->loads.v[0];
            vr_render_stats st;
            const double t0 = vr_now_ms();
            if (draw(job, r, panel, &o, &st) != VR_OK) {
                frame_failed(job, spec, &o);
                goto done;
            }
            if (job->reps == 0) {
                const render_timing t = {st.geometry_ms, st.raster.clear_ms,
                                         st.raster.raster_ms,
                                         st.raster.clear_ms + st.raster.raster_ms,
                                         st.raster.resolve_ms,
                                         vr_now_ms() - t0 - st.raster.download_ms,
                                         st.composite_ms, st.composite_vis_ms, st.stream_ms,
                                         st.gpu_frame_ms};
                print_row(log, &o, &st, &t, job->show_big, show_parts, job->stream);
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
        progress_stop(&job->progress);
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
        const double t0 = vr_now_ms();
        if ((s = vr_cmd_write_png(png_path, "PNG", image, img_w, img_h)) != VR_OK) {
            vr_cli_fail_last("render");
            goto done;
        }
        fprintf(log, "  png %.1f ms -> %s (%ux%u)\n", vr_now_ms() - t0, png_path, img_w, img_h);
    }
    if (job->first_frame_ms >= 0)
        fprintf(log, "  first frame %.1f ms (wall, with its one-time work: cuts, uploads, plans; "
                "the timed frames come after it)\n", job->first_frame_ms);
    rc = 0;
done:
    progress_stop(&job->progress);
    vr_renderer_destroy(r);
    vr_gts_free(&gts);
    free(panel);
    free(image);
    free(png_path);
    return rc;
}

/* One scene: loaded once, rendered in every order. */
static int render_scene(render_job *job, const char *spec)
{
    double t0 = vr_now_ms();
    vr_mesh loaded;
    /* --gts-batches decodes the stream per batch: the mesh is its own list (with deg. mode's
     * emulation triangles); otherwise a .gts scene is its source triangles */
    const vr_status loaded_status = job->gts_batches && vr_gts_is_file(spec)
                                        ? vr_mesh_load_gts_strips(&loaded, spec)
                                        : vr_mesh_load(&loaded, spec);
    if (loaded_status != VR_OK)
        return vr_cli_fail_last("render");
    const double load_ms = vr_now_ms() - t0;
    int rc = 0;
    for (int k = 0; k < job->orders.count; ++k) {
        const int order = job->orders.v[k];
        vr_mesh mesh;
        vr_status s = VR_OK;
        if (k + 1 == job->orders.count) { /* the last order may have the loaded mesh itself */
            mesh = loaded;
            memset(&loaded, 0, sizeof loaded);
        } else {
            s = vr_mesh_copy(&mesh, &loaded);
        }
        t0 = vr_now_ms();
        if (s == VR_OK && order != VR_ORDER_FILE)
            s = vr_mesh_reorder(&mesh, (vr_order)order, job->seed);
        if (s != VR_OK)
            rc = vr_cli_fail(1, "render", "%s (%s order): %s", spec,
                             vr_order_name((vr_order)order), vr_last_error());
        else
            rc |= render_mesh(job, spec, order, &mesh, load_ms, vr_now_ms() - t0);
        vr_mesh_free(&mesh);
    }
    vr_mesh_free(&loaded);
    return rc;
}

static const vr_cli_command g_cmd = {
    "render", "[SCENE...]",
    "Renders each SCENE in each --order through the geometry stage (the chosen reuse\n"
    "strategies), the rasterizer and the resolve; writes a PNG (several strategies: panels side\n"
    "by side) and prints per-stage times and invocation counts.\n"
    "\n"
    "SCENE is a file (OBJ, PLY, glTF 2.0, ..., or a .gts from `vreuse compress`) or a generator:\n"
    "sphere[:N], terrain[:N], foliage[:N], optionally @N to subdivide (default: sphere).",
    "With one scene and one order the PNG is exactly --out; otherwise one PNG per scene and\n"
    "order, FILE-<scene>-<order>.png. --csv needs --reps; its columns: scene, order, tris,\n"
    "strategy, load, width, height, geometry_ms, raster_ms, resolve_ms, frame_ms, invocations,\n"
    "reuse, big, parts, composite (local or nccl), composite_ms, composite_vis_ms, chunks,\n"
    "stream (none, device or host), stream_ms, pipeline_mb, scene_mb, copied_mb, h2d_gbs,\n"
    "gpu_frame_ms, graph (1: the frame ran as one CUDA graph, its stage times are 0)\n"
    "(raster_ms includes the clear). Without a CUDA device (or with --cpu) the CPU twins\n"
    "draw the same image; a run they would need more than a few seconds for is announced with\n"
    "its estimate before it starts and shows its progress.",
    VR_CLI_SCENES_OR_DEFAULT};

/* --big: vr_raster_big_mode order */
static const char *const g_big_names[] = {"list", "hp", NULL};
/* --stream-from: vr_stream_source order (the parser needs the NULL that
 * vr_stream_source_names lacks) */
static const char *const g_stream_from_names[] = {"device", "host", NULL};
/* --graph: off = 0, on = 1 */
static const char *const g_graph_names[] = {"off", "on", NULL};

int vr_cmd_render(int argc, char **argv)
{
    static render_job job; /* large (two lists of names); static keeps it off the stack */
    memset(&job, 0, sizeof job);
    job.strategies.v[0] = vr_reuse_find("hash");
    job.strategies.count = 1;
    job.loads.count = 1;
    snprintf(job.loads.name[0], sizeof job.loads.name[0], "simple");
    job.orders.v[0] = VR_ORDER_FILE;
    job.orders.count = 1;
    job.bigs.v[0] = VR_RASTER_BIG_LIST;
    job.bigs.count = 1;
    job.seed = 1;
    job.mode = VR_SHADE_LAMBERT;
    job.annotate = -1;
    job.pitch = 15, job.zoom = 1;
    job.graph = 1;
    job.size[0] = 1280, job.size[1] = 720;
    job.out = "render.png";
    job.stream_from = -1;
    const vr_cli_opt opts[] = {
        VR_CLI_STRATEGY(&job.strategies, "hash; several give side-by-side panels"),
        VR_CLI_LOAD(&job.loads, "simple; the image uses the first, --reps times each"),
        VR_CLI_ORDER(&job.orders, "file; one image each"),
        VR_CLI_SEED(&job.seed),
        {"heatmap", 0, NULL, "colour by per-vertex shading count: green 1 -> yellow -> red 6+",
         NULL, &job.mode, VR_SHADE_HEATMAP, 0, 0, 0, NULL},
        {"batches", 0, NULL, "one colour per batch the strategy forms", NULL, &job.mode,
         VR_SHADE_BATCHES, 0, 0, 0, NULL},
        VR_CLI_SIZE(job.size, "1280x720, per panel"),
        VR_CLI_YAW(&job.yaw),
        VR_CLI_PITCH(&job.pitch),
        VR_CLI_ZOOM(&job.zoom),
        {"cull", 0, NULL, "drop back faces in the rasterizer", NULL, &job.cull, 1, 0, 0, 0, NULL},
        {"big", 0, "LIST",
         "how the GPU rasterizer spreads triangles with large boxes over warps, comma separated: "
         "list (chunks of 64 tiles, a warp each; the default), hp (a HistoPyramid over the "
         "triangles' tile counts, 32 tiles per warp), all; --reps times each, the image uses the "
         "first (the same image either way; the CPU twins ignore it)",
         vr_cli_parse_choices, &job.bigs, 0, 0, 0, 0, g_big_names},
        {"annotate", 0, NULL, "label panels (and add the heatmap legend); default with 2+ panels",
         NULL, &job.annotate, 1, 0, 0, 0, NULL},
        {"no-annotate", 0, NULL, "never label", NULL, &job.annotate, 0, 0, 0, 0, NULL},
        VR_CLI_LIMITS(&job.limits),
        VR_CLI_PATCH_BUILDER(&job.patch_builder, "the patch panel's plan"),
        VR_CLI_SMS(&job.limits, "whose batches a CPU run then reproduces (a GPU run takes its "
                   "own device's count unless given)"),
        VR_CLI_CPU(&job.force_cpu),
        {"gpus", 0, "N",
         "sort-last over N GPUs of this machine, one NCCL rank each (NCCL loaded at run time): "
         "each renders an equal share of the batches into its own visibility buffer; the "
         "buffers composite by minimum, so the image is word for word one GPU's (N 1: one rank, "
         "the transport's own cost; not for multi). With --stream each GPU streams its share "
         "in chunks through its own bounded queue",
         vr_cli_parse_int, &job.gpus, 0, 1, VR_PARTS_MAX, 0, NULL},
        {"parts", 0, "N",
         "the same cut into N parts on one device (or the CPU twins), composited there without "
         "a transport: checks the cut and the compositing anywhere; with --stream each part "
         "streams its share in chunks of its own (as with --gpus)",
         vr_cli_parse_int, &job.parts, 0, 1, VR_PARTS_MAX, 0, NULL},
        {"stream", 0, NULL,
         "bounded streaming: the batches run in chunks through one queue of --stream-mb, so "
         "device memory for the pipeline does not grow with the scene (same image and counts "
         "as without; not for multi or --heatmap)",
         NULL, &job.stream, 1, 0, 0, 0, NULL},
        {"stream-mb", 0, "MIB", "the streaming queue's size in MiB (default 1024; implies "
         "--stream)", vr_cli_parse_int, &job.stream_mb, 0, 1, 1 << 20, 0, NULL},
        {"stream-from", 0, "WHERE",
         "device (the default: the scene's arrays uploaded once) or host (they stay in "
         "page-locked host memory; each chunk copies its indices - with --gts-batches its "
         "slices of the compressed stream - and vertex window while the previous one runs); "
         "implies --stream",
         vr_cli_parse_choice, &job.stream_from, 0, 0, 0, 0, g_stream_from_names},
        {"graph", 0, "on|off",
         "on (the default): a GPU frame in one piece replays its kernels as one CUDA graph - "
         "no launch gap or host wait between the stages, gpu_ms is the device's frame time, "
         "the stage times are not taken; off: stage by stage, each timed (the same image and "
         "counts). --stream, --gpus and --parts run their own sequences",
         vr_cli_parse_choice, &job.graph, 0, 0, 0, 0, g_graph_names},
        {"gts-batches", 0, NULL,
         "with a compressed SCENE (.gts from `vreuse compress`): the GPU geometry stage decodes "
         "each batch from the stream itself, no index buffer on the device (hash only, file "
         "order; with --stream each chunk decodes its batches, on the CPU twins too); without "
         "it a .gts file is decoded on the CPU at load time",
         NULL, &job.gts_batches, 1, 0, 0, 0, NULL},
        VR_CLI_REPS(&job.reps, "0: no timing; with N: two warm-up frames, then the median of "
                    "each stage per scene, order, strategy and load"),
        VR_CLI_CSV(&job.csv_path),
        VR_CLI_OUT(&job.out, "the PNG (default render.png; see below for several)"),
        {"no-image", 0, NULL, "time only (needs --reps), write no PNG", NULL, &job.no_image, 1,
         0, 0, 0, NULL},
        {0}};
    vr_cli_args args;
    VR_CLI_PARSE_OR_RETURN(&g_cmd, opts, argc, argv, &args);
    job.show_big = job.bigs.count > 1 || job.bigs.v[0] != VR_RASTER_BIG_LIST;
    if (job.annotate < 0)
        job.annotate = job.strategies.count > 1;
    for (int p = 0; p < job.strategies.count && job.gts_batches; ++p)
        if (!job.strategies.v[p]->gts_input)
            return vr_cli_fail(VR_CLI_USAGE, "render",
                               "--gts-batches: strategy %s cannot decode compressed batches "
                               "(hash can; the others take the CPU-decoded index buffer without "
                               "--gts-batches)", job.strategies.v[p]->name);
    if (job.gts_batches && (job.orders.count > 1 || job.orders.v[0] != VR_ORDER_FILE))
        return vr_cli_fail(VR_CLI_USAGE, "render", "--gts-batches renders the stream's own "
                           "triangle order; leave --order at file");
    if (job.stream_mb || job.stream_from >= 0)
        job.stream = 1;
    if (!job.stream_mb)
        job.stream_mb = (int)(VR_STREAM_QUEUE_BYTES_DEFAULT >> 20);
    if (job.stream_from < 0)
        job.stream_from = VR_STREAM_DEVICE;
    if (job.stream && job.mode == VR_SHADE_HEATMAP)
        return vr_cli_fail(VR_CLI_USAGE, "render", "--heatmap needs per-vertex shading counts "
                           "of the whole scene on the device; render it without --stream");
    for (int p = 0; p < job.strategies.count && job.stream; ++p)
        if (job.strategies.v[p]->kind == VR_REUSE_MULTI)
            return vr_cli_fail(VR_CLI_USAGE, "render", "multi cannot run in chunks (it shades "
                               "the whole vertex buffer first); leave it out of --strategy with "
                               "--stream");
    if (job.gpus && job.parts)
        return vr_cli_fail(VR_CLI_USAGE, "render", "--gpus and --parts exclude each other "
                           "(--gpus N puts one part on each of N GPUs)");
    for (int p = 0; p < job.strategies.count && (job.gpus > 1 || job.parts > 1); ++p)
        if (job.strategies.v[p]->kind == VR_REUSE_MULTI)
            return vr_cli_fail(VR_CLI_USAGE, "render", "multi cannot be cut into parts (it "
                               "shades the whole vertex buffer in every part); leave it out of "
                               "--strategy with --gpus/--parts");
    if ((job.gpus || job.parts) && job.gts_batches && !job.stream)
        return vr_cli_fail(VR_CLI_USAGE, "render", "--gts-batches with --gpus/--parts needs "
                           "--stream (in core the parts are cut from the index buffer; streamed, "
                           "each part decodes its own chunks)");
    if (job.gpus && job.force_cpu)
        return vr_cli_fail(VR_CLI_USAGE, "render", "--gpus needs the GPU renderer; use --parts "
                           "N with --cpu");
    if (job.csv_path && job.reps == 0)
        return vr_cli_fail(VR_CLI_USAGE, "render", "--csv needs --reps N (it records medians)");
    if (job.no_image && job.reps == 0)
        return vr_cli_fail(VR_CLI_USAGE, "render", "--no-image without --reps does nothing");
    if (!job.no_image && !strcmp(job.out, "-"))
        return vr_cli_fail(VR_CLI_USAGE, "render", "--out '-': a PNG needs a file name");
    const uint64_t total_w = (uint64_t)job.size[0] * (uint64_t)job.strategies.count;
    if (!job.no_image && total_w > 4 * (uint64_t)VR_RASTER_MAX_SIZE)
        return vr_cli_fail(VR_CLI_USAGE, "render", "%d panels of width %u make a "
                           "%llu-pixel-wide image (at most %u); use a smaller --size",
                           job.strategies.count, job.size[0], (unsigned long long)total_w,
                           4 * VR_RASTER_MAX_SIZE);

    const char *const *scenes = (const char *const *)args.v;
    const int scene_count = args.count;
    job.many_outputs = scene_count > 1 || job.orders.count > 1;
    job.log = job.csv_path && !strcmp(job.csv_path, "-") ? stderr : stdout;
    if (job.csv_path) {
        if (vr_cli_out_open(&job.csv, job.csv_path, "CSV") != VR_OK)
            return vr_cli_fail_last("render");
        fprintf(job.csv.f, "scene,order,tris,strategy,load,width,height,geometry_ms,raster_ms,"
                "resolve_ms,frame_ms,invocations,reuse,big,parts,composite,composite_ms,"
                "composite_vis_ms,chunks,stream,stream_ms,pipeline_mb,scene_mb,copied_mb,"
                "h2d_gbs,gpu_frame_ms,graph\n");
    }

    job.gpu = !job.force_cpu && vr_gpu_available();
    if (job.gpu && vr_gpu_shape_query(&job.shape) != VR_OK)
        return vr_cli_fail_last("render");
    /* timed streaming from the host is measured against the device's own copy rate, in this
     * run (a 256 MiB page-locked buffer and 11 copies: not worth it for an image alone) */
    if (job.gpu && job.stream && job.stream_from == VR_STREAM_HOST && job.reps > 0 &&
        vr_gpu_h2d_bandwidth(&job.h2d_bps) != VR_OK)
        return vr_cli_fail_last("render");
    if (job.gpus && !job.gpu)
        return vr_cli_fail(1, "render", "--gpus %d: %s (--parts N runs the same cut on the CPU "
                           "twins)", job.gpus, vr_gpu_device_name());
    if (job.gpu)
        fprintf(job.log, "vreuse render: device %s (GPU geometry stage and rasterizer)\n",
                vr_gpu_device_name());
    else if (job.force_cpu)
        fprintf(job.log, "vreuse render: device CPU twins (--cpu)\n");
    else
        fprintf(job.log, "vreuse render: device CPU twins; %s\n", vr_gpu_device_name());

    int rc = 0;
    for (int i = 0; i < scene_count; ++i)
        rc |= render_scene(&job, scenes[i]); /* reported; the other scenes still run */
    if (job.gpu)
        fprintf(job.log, "note: geom_ms times the strategy's kernels with counting off "
                "(cudaEvents); xfer_ms is the once-per-strategy download of the counts\n");
    if (job.csv_rows == 0) {
        vr_cli_out_abort(&job.csv); /* nothing measured: an existing file stays as it was */
    } else if (vr_cli_out_close(&job.csv) != VR_OK) {
        rc = vr_cli_fail_last("render");
    }
    return rc ? 1 : 0;
}
