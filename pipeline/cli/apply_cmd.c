/* apply_cmd.c - `vreuse apply subdivide|envelope|walk`: the paper's Section 5 applications
 * (pipeline/apps/: one Loop subdivision step, simplification envelopes, the parallel random walk)
 * run by every strategy through the general reuse API (reuse/program.h), on the GPU or through
 * the CPU twin. Prints a table per strategy (time, invocations, reuse against naive), checks every
 * strategy's output against the first one's bit for bit, writes the output (-o) and a picture a
 * person can check (--png): before | after for Loop, a cross-section for the envelopes, the agent
 * density for the walk.
 * Try: `vreuse apply subdivide bunny.obj --zoom 4 --png b.png`, `vreuse apply walk --png w.png`.
 */
#include "pipeline/apps/apps.h"
#include "pipeline/apps/envelope.h"
#include "pipeline/cli/cli.h"
#include "pipeline/cli/commands.h"
#include "pipeline/cli/mesh_write.h"
#include "pipeline/stage/geometry.h"
#include "raster/raster.h"
#include "reuse/shaders.h"
#include "scenes/scene.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- options -------------------------------------------------------------------------------- */

enum { DEVICE_AUTO, DEVICE_CPU, DEVICE_GPU };
static const char *const g_device_names[] = {"auto", "cpu", "gpu", NULL};
enum { PLACE_RANDOM, PLACE_SORTED };
static const char *const g_placement_names[] = {"random", "sorted", NULL};
static const char *const g_slice_names[] = {"auto", "x", "y", "z", NULL}; /* index - 1 = axis */
enum { LIMITS_PAPER, LIMITS_RENDER };
static const char *const g_limits_names[] = {"paper", "render", NULL};

#define APPLY_AGENTS_MAX 100000000.0 /* --agents: 4 arrays of 4 bytes per agent stay < 2 GB */
#define APPLY_REPS_DEFAULT 5
#define APPLY_WALK_SCALE 3u          /* pixels per grid cell in the walk's picture */

typedef struct apply_opts {
    vr_cli_strategies strategies; /* count 0: not given (all) */
    int device;                   /* DEVICE_* */
    int reps;                     /* GPU timed repetitions */
    const char *out, *png, *csv;
    uint32_t size[2];             /* subdivide: each panel; envelope: the slice picture */
    float yaw, pitch, zoom;       /* subdivide's camera */
    int inner, check, slice;      /* envelope */
    float epsilon;
    uint32_t agents, steps;       /* walk */
    uint64_t seed;
    int placement, resort;
    uint32_t lanes;               /* walk on the GPU: threads per cell evaluation */
    int limits;                   /* subdivide, envelope: LIMITS_* (the walk: the renderer's) */
    vr_batch_limits given;        /* --block, --nu, --max-indices, --warp-batch; 0: default */
} apply_opts;

/* ---- the applications ----------------------------------------------------------------------- */

/* What an application reads: the scene or the walk's start, and its settings. */
typedef struct app_input {
    const char *label;       /* scene label (tables, CSV), or the walk's placement */
    vr_mesh mesh;            /* subdivide, envelope: the scene as loaded */
    uint32_t *start;         /* walk: packed start cells, walk.agents entries */
    vr_walk_config walk;
    vr_envelope_config env;  /* check is cleared after the first row: one count suffices */
} app_input;

/* What one strategy produced: every strategy's is compared with the first one's, which -o and
 * --png then use. */
typedef struct app_output {
    vr_mesh mesh;            /* subdivide, envelope */
    uint32_t *cells;         /* walk: packed cells after the last step */
    vr_envelope_stats env;   /* envelope */
} app_output;

static void app_output_free(app_output *o)
{
    vr_mesh_free(&o->mesh);
    free(o->cells);
    memset(o, 0, sizeof *o);
}

typedef vr_status (*app_run_fn)(app_output *out, const app_input *in, const vr_app_run *r,
                                int gpu, vr_app_report *rep);

typedef struct app_def {
    const char *name;        /* vreuse apply NAME */
    uint32_t arity;          /* of the stream the strategies batch: 3 triangles, 1 agents */
    const char *per;         /* the per-unit column: invocations per vertex, per walk step */
    app_run_fn run_one;      /* one strategy into *out, on the GPU or through the CPU twin */
} app_def;

static vr_status subdivide_one(app_output *out, const app_input *in, const vr_app_run *r,
                               int gpu, vr_app_report *rep)
{
    return vr_loop_apply(&out->mesh, &in->mesh, r, gpu, rep);
}

/* The envelope through one strategy (the element function: a vertex's safe offset, an octree
 * walk, once per distinct vertex of a batch); out->env gets the reference's statistics. */
static vr_status envelope_one(app_output *out, const app_input *in, const vr_app_run *r, int gpu,
                              vr_app_report *rep)
{
    return vr_envelope_apply(&out->mesh, &in->mesh, &in->env, r, gpu, rep, &out->env);
}

static vr_status walk_one(app_output *out, const app_input *in, const vr_app_run *r, int gpu,
                          vr_app_report *rep)
{
    const size_t bytes = (size_t)in->walk.agents * sizeof *out->cells;
    out->cells = malloc(bytes);
    if (!out->cells)
        return VR_ERROR(VR_ERR_OOM, "random walk: %zu bytes for the cells of %u agents", bytes,
                        in->walk.agents);
    memcpy(out->cells, in->start, bytes);
    return vr_walk_apply(out->cells, &in->walk, r, gpu, rep);
}

enum { APP_SUBDIVIDE, APP_ENVELOPE, APP_WALK, APP_COUNT };
static const app_def g_apps[APP_COUNT] = {
    {"subdivide", 3, "per_vertex", subdivide_one},
    {"envelope", 3, "per_vertex", envelope_one},
    {"walk", 1, "per_step", walk_one},
};

/* Bit for bit: positions, normals, texcoords and indices, or the cells. */
static int outputs_equal(const app_output *a, const app_output *b, uint32_t agents)
{
    if (a->cells || b->cells)
        return a->cells && b->cells && !memcmp(a->cells, b->cells, (size_t)agents * 4);
    const vr_mesh *x = &a->mesh, *y = &b->mesh;
    const size_t v = x->vertex_count;
    if (x->vertex_count != y->vertex_count || x->index_count != y->index_count ||
        !x->texcoords != !y->texcoords)
        return 0;
    return !memcmp(x->positions, y->positions, 3 * v * sizeof(float)) &&
           !memcmp(x->normals, y->normals, 3 * v * sizeof(float)) &&
           (!x->texcoords || !memcmp(x->texcoords, y->texcoords, 2 * v * sizeof(float))) &&
           !memcmp(x->indices, y->indices, (size_t)x->index_count * sizeof(uint32_t));
}

/* ---- pictures: shared pieces ---------------------------------------------------------------- */

#define RGB(r, g, b) ((uint32_t)(r) | (uint32_t)(g) << 8 | (uint32_t)(b) << 16 | 0xff000000u)
#define WHITE RGB(255, 255, 255)
#define BLACK RGB(0, 0, 0)
#define LABEL_SCALE 2                   /* the 5x7 font at twice its size */
#define LABEL_BAND (10 * LABEL_SCALE)   /* a line of text with its margins */
#define EDGE_NONE_PX 3.0  /* subdivide's picture: triangles this small on screen show no edges, */
#define EDGE_FULL_PX 8.0  /* these large ones full edges (side of a square of twice the area) */

static uint8_t *image_new(uint32_t w, uint32_t h, uint32_t colour)
{
    uint8_t *rgba = malloc((size_t)w * h * 4);
    if (rgba)
        vr_image_fill(rgba, w, h, 0, 0, (int)w, (int)h, colour);
    return rgba;
}

/* Blends `colour` over pixel (x, y) with coverage a in [0, 1]. */
static void blend(uint8_t *rgba, uint32_t w, uint32_t h, int x, int y, uint32_t colour, double a)
{
    if (x < 0 || y < 0 || (uint32_t)x >= w || (uint32_t)y >= h || a <= 0)
        return;
    uint8_t *p = rgba + 4 * ((size_t)y * w + (uint32_t)x);
    for (int c = 0; c < 3; ++c)
        p[c] = (uint8_t)lround(p[c] * (1 - a) + (double)(colour >> (8 * c) & 0xff) * a);
}

/* An anti-aliased line of half-width `r` pixels: each pixel's coverage from its centre's
 * distance to the segment (the segments here are a few pixels long, so the box loop is cheap). */
static void line_aa(uint8_t *rgba, uint32_t w, uint32_t h, double x0, double y0, double x1,
                    double y1, double r, uint32_t colour)
{
    const double dx = x1 - x0, dy = y1 - y0, len2 = dx * dx + dy * dy;
    const double lo_x = fmax(floor(fmin(x0, x1) - r - 1), 0);
    const double hi_x = fmin(ceil(fmax(x0, x1) + r + 1), w);
    const double lo_y = fmax(floor(fmin(y0, y1) - r - 1), 0);
    const double hi_y = fmin(ceil(fmax(y0, y1) + r + 1), h);
    for (double py = lo_y; py < hi_y; ++py)
        for (double px = lo_x; px < hi_x; ++px) {
            const double cx = px + 0.5, cy = py + 0.5;
            double t = len2 > 0 ? ((cx - x0) * dx + (cy - y0) * dy) / len2 : 0;
            t = t < 0 ? 0 : t > 1 ? 1 : t;
            const double d = hypot(cx - (x0 + t * dx), cy - (y0 + t * dy));
            blend(rgba, w, h, (int)px, (int)py, colour, fmin(r + 0.5 - d, 1));
        }
}

/* Bounds of the referenced vertices (camera.c's rule: files such as the bunny carry unused
 * ones). */
static void mesh_bounds(const vr_mesh *m, double lo[3], double hi[3])
{
    for (int a = 0; a < 3; ++a)
        lo[a] = INFINITY, hi[a] = -INFINITY;
    for (uint32_t i = 0; i < m->index_count; ++i)
        for (int a = 0; a < 3; ++a) {
            const double x = m->positions[3 * (size_t)m->indices[i] + a];
            lo[a] = x < lo[a] ? x : lo[a];
            hi[a] = x > hi[a] ? x : hi[a];
        }
}

/* ---- subdivide: before | after, flat shaded with the triangles' edges ----------------------- */

/* One panel: the CPU rasterizer's visibility buffer (raster/raster_ref.c: the coverage and depth
 * `vreuse render` draws) resolved here instead of by vr_resolve_ref, for two reasons. Each pixel
 * takes its triangle's face normal - flat shading; the mesh's smooth vertex normals would hide
 * the facets the picture is about. And a pixel whose right or lower neighbour shows another
 * triangle (or the background) is drawn as an edge: the visible triangle boundaries exactly,
 * hidden lines removed, with no line drawer and no depth bias. Edges of triangles smaller than
 * EDGE_FULL_PX on screen fade into the face colour, so a whole dense mesh reads as shaded rather
 * than black. A queue of clip positions is all the rasterizer reads; the slot is the triangle. */
static vr_status draw_flat_edges(uint8_t *rgba, uint32_t img_w, uint32_t img_h, int x0, int y0,
                                 uint32_t w, uint32_t h, const vr_mesh *m, const vr_camera *cam)
{
    const uint32_t tris = m->index_count / 3;
    vr_shader sh;
    memset(&sh, 0, sizeof sh);
    vr_camera_shader(&sh, cam, w, h);
    vr_queue q;
    memset(&q, 0, sizeof q);
    q.capacity = tris;
    q.clip = malloc((size_t)tris * VR_QUEUE_CLIP_FLOATS * sizeof(float));
    float *lit = malloc(2 * (size_t)tris * sizeof *lit); /* brightness, edge weight */
    uint64_t *vis = malloc((size_t)w * h * sizeof *vis);
    vr_status st = VR_OK;
    if (!q.clip || !lit || !vis) {
        st = VR_ERROR(VR_ERR_OOM, "picture of %u triangles at %ux%u", tris, w, h);
        goto done;
    }
    const vr_resolve_params light = vr_resolve_params_default();
    static const float no_normal[3] = {0, 0, 1};
    for (uint32_t t = 0; t < tris; ++t) {
        const float *p[3];
        for (int k = 0; k < 3; ++k) {
            p[k] = m->positions + 3 * (size_t)m->indices[3 * (size_t)t + k];
            vr_shaded s;
            vr_shade(&sh, p[k], no_normal, &s);
            memcpy(q.clip + 12 * (size_t)t + 4 * k, s.clip, sizeof s.clip);
        }
        double e1[3], e2[3], n[3], v[3], len = 0, dot = 0;
        for (int a = 0; a < 3; ++a)
            e1[a] = (double)p[1][a] - p[0][a], e2[a] = (double)p[2][a] - p[0][a];
        n[0] = e1[1] * e2[2] - e1[2] * e2[1];
        n[1] = e1[2] * e2[0] - e1[0] * e2[2];
        n[2] = e1[0] * e2[1] - e1[1] * e2[0];
        for (int r = 0; r < 3; ++r) { /* into view space, where the light is */
            v[r] = sh.normal_matrix[r] * n[0] + sh.normal_matrix[3 + r] * n[1] +
                   sh.normal_matrix[6 + r] * n[2];
            len += v[r] * v[r];
            dot += v[r] * light.light[r];
        }
        lit[2 * t] = len > 0 ? (float)(0.25 + 0.75 * fabs(dot) / sqrt(len)) : 0.25f;
        /* the screen area from the clip corners (one behind the eye: full edges) */
        const float *c = q.clip + 12 * (size_t)t;
        double side = EDGE_FULL_PX;
        if (c[3] > 0 && c[7] > 0 && c[11] > 0) {
            const double ax = c[0] / c[3] * 0.5 * w, ay = c[1] / c[3] * 0.5 * h;
            const double bx = c[4] / c[7] * 0.5 * w - ax, by = c[5] / c[7] * 0.5 * h - ay;
            const double cx = c[8] / c[11] * 0.5 * w - ax, cy = c[9] / c[11] * 0.5 * h - ay;
            side = sqrt(fabs(bx * cy - by * cx));
        }
        const double e = (side - EDGE_NONE_PX) / (EDGE_FULL_PX - EDGE_NONE_PX);
        lit[2 * t + 1] = (float)(e < 0 ? 0 : e > 1 ? 1 : e);
    }
    const vr_raster_config cfg = {w, h, 0, 0, 0};
    if ((st = vr_raster_ref(vis, &q, tris, &cfg, NULL)) != VR_OK)
        goto done;
    for (uint32_t y = 0; y < h; ++y)
        for (uint32_t x = 0; x < w; ++x) {
            const uint64_t word = vis[(size_t)y * w + x];
            const uint32_t slot = (uint32_t)word;
            const int edge = (x + 1 < w && (uint32_t)vis[(size_t)y * w + x + 1] != slot) ||
                             (y + 1 < h && (uint32_t)vis[(size_t)(y + 1) * w + x] != slot);
            const int face = word != VR_VIS_EMPTY && slot < tris;
            const float l = face ? lit[2 * slot] : 1.0f;
            vr_image_fill(rgba, img_w, img_h, x0 + (int)x, y0 + (int)y, 1, 1,
                          face ? RGB(lroundf(170 * l + 20), lroundf(185 * l + 20),
                                     lroundf(215 * l + 20))
                               : WHITE);
            if (edge) /* the background's edge is the silhouette: the neighbour's weight */
                blend(rgba, img_w, img_h, x0 + (int)x, y0 + (int)y, RGB(40, 40, 60),
                      face ? lit[2 * slot + 1] : 1.0);
        }
done:
    free(q.clip), free(lit), free(vis);
    return st;
}

static vr_status picture_subdivide(uint8_t **out, uint32_t *out_w, uint32_t *out_h,
                                   const vr_mesh *before, const vr_mesh *after,
                                   const apply_opts *o)
{
    const uint32_t pw = o->size[0], ph = o->size[1], w = 2 * pw, h = ph + LABEL_BAND;
    uint8_t *rgba = image_new(w, h, WHITE);
    if (!rgba)
        return VR_ERROR(VR_ERR_OOM, "a %ux%u picture", w, h);
    vr_camera cam; /* fitted to the input: both panels show the same place */
    vr_camera_fit(&cam, before);
    cam.yaw = o->yaw, cam.pitch = o->pitch, cam.zoom = o->zoom;
    vr_status st = draw_flat_edges(rgba, w, h, 0, LABEL_BAND, pw, ph, before, &cam);
    if (st == VR_OK)
        st = draw_flat_edges(rgba, w, h, (int)pw, LABEL_BAND, pw, ph, after, &cam);
    if (st != VR_OK) {
        free(rgba);
        return st;
    }
    vr_image_fill(rgba, w, h, (int)pw, 0, 1, (int)h, BLACK);
    char text[2][96], n[32];
    snprintf(text[0], sizeof text[0], "BEFORE: %s TRIANGLES",
             vr_format_count(n, before->index_count / 3));
    snprintf(text[1], sizeof text[1], "ONE LOOP STEP: %s TRIANGLES",
             vr_format_count(n, after->index_count / 3));
    for (int k = 0; k < 2; ++k)
        vr_image_text(rgba, w, h, k * (int)pw + 8, 3, LABEL_SCALE, BLACK, text[k]);
    *out = rgba, *out_w = w, *out_h = h;
    return VR_OK;
}

/* ---- envelope: a cross-section through the box centre --------------------------------------- */

typedef struct slice_view {
    int axis, u, v;        /* the plane's normal axis; the picture's horizontal and vertical */
    double at;             /* the plane: coordinate `axis` == at (the box centre) */
    double u0, v1, scale;  /* model (u0, v1) is the picture's top left; pixels per unit */
    int ox, oy;            /* picture offset of the drawing area */
} slice_view;

/* The segments where the plane cuts each triangle of `m`, as lines of half-width r. A corner on
 * the plane counts as above it, so a triangle touching it at one corner adds nothing. */
static uint64_t slice_draw(uint8_t *rgba, uint32_t w, uint32_t h, const slice_view *s,
                           const vr_mesh *m, uint32_t colour, double r)
{
    uint64_t segments = 0;
    for (uint32_t t = 0; t < m->index_count / 3; ++t) {
        const float *p[3];
        double d[3];
        for (int k = 0; k < 3; ++k) {
            p[k] = m->positions + 3 * (size_t)m->indices[3 * (size_t)t + k];
            d[k] = (double)p[k][s->axis] - s->at;
        }
        double xy[2][2];
        int n = 0;
        for (int k = 0; k < 3 && n < 2; ++k) {
            const int j = (k + 1) % 3;
            if ((d[k] >= 0) == (d[j] >= 0))
                continue;
            const double f = d[k] / (d[k] - d[j]);
            const double u = p[k][s->u] + f * ((double)p[j][s->u] - p[k][s->u]);
            const double v = p[k][s->v] + f * ((double)p[j][s->v] - p[k][s->v]);
            xy[n][0] = s->ox + (u - s->u0) * s->scale;
            xy[n][1] = s->oy + (s->v1 - v) * s->scale;
            ++n;
        }
        if (n == 2) {
            line_aa(rgba, w, h, xy[0][0], xy[0][1], xy[1][0], xy[1][1], r, colour);
            ++segments;
        }
    }
    return segments;
}

/* outer and inner: the two envelopes (either may be the run's output). */
static vr_status picture_envelope(uint8_t **out, uint32_t *out_w, uint32_t *out_h,
                                  const vr_mesh *in, const vr_mesh *outer, const vr_mesh *inner,
                                  float epsilon, const apply_opts *o)
{
    double lo[3], hi[3];
    mesh_bounds(in, lo, hi);
    slice_view s;
    memset(&s, 0, sizeof s);
    s.axis = o->slice - 1;
    if (s.axis < 0) /* auto: cut across the thinnest extent, the largest section */
        for (int a = 0; a < 3; ++a)
            s.axis = s.axis < 0 || hi[a] - lo[a] < hi[s.axis] - lo[s.axis] ? a : s.axis;
    s.u = s.axis == 0 ? 2 : 0; /* y stays vertical unless the plane is horizontal */
    s.v = s.axis == 1 ? 2 : 1;
    s.at = 0.5 * (lo[s.axis] + hi[s.axis]);
    const uint32_t w = o->size[0], h = o->size[1] + 3 * LABEL_BAND; /* 2 lines above, 1 below */
    const double margin = 1.5 * epsilon; /* the outer envelope reaches epsilon past the box */
    const double span_u = hi[s.u] - lo[s.u] + 2 * margin, span_v = hi[s.v] - lo[s.v] + 2 * margin;
    s.scale = fmin((w - 16) / fmax(span_u, 1e-30), (o->size[1] - 16) / fmax(span_v, 1e-30));
    s.u0 = lo[s.u] - margin, s.v1 = hi[s.v] + margin;
    s.ox = (int)((w - span_u * s.scale) / 2);
    s.oy = 2 * LABEL_BAND + (int)((o->size[1] - span_v * s.scale) / 2);
    uint8_t *rgba = image_new(w, h, WHITE);
    if (!rgba)
        return VR_ERROR(VR_ERR_OOM, "a %ux%u picture", w, h);
    const uint32_t red = RGB(215, 25, 28), blue = RGB(30, 90, 220);
    slice_draw(rgba, w, h, &s, outer, red, 1.0);
    slice_draw(rgba, w, h, &s, inner, blue, 1.0);
    const uint64_t cut = slice_draw(rgba, w, h, &s, in, BLACK, 0.6);
    static const char axes[] = "XYZ";
    char text[160];
    int x = 8;
    x += vr_image_text(rgba, w, h, x, 3, LABEL_SCALE, BLACK, "INPUT") + 12;
    x += vr_image_text(rgba, w, h, x, 3, LABEL_SCALE, red, "OUTER ENVELOPE") + 12;
    vr_image_text(rgba, w, h, x, 3, LABEL_SCALE, blue, "INNER ENVELOPE");
    snprintf(text, sizeof text, "WHERE THE PLANE %c = %.4g (THE BOX CENTRE) CUTS THEM%s",
             axes[s.axis], s.at, cut ? "" : ": IT MISSES THE INPUT");
    vr_image_text(rgba, w, h, 8, 3 + LABEL_BAND, LABEL_SCALE, RGB(90, 90, 90), text);
    /* a bar epsilon long: what a 2% offset looks like at this scale */
    const double bar = epsilon * s.scale;
    const int by = (int)h - LABEL_BAND / 2;
    line_aa(rgba, w, h, 8, by, 8 + bar, by, 1.0, BLACK);
    line_aa(rgba, w, h, 8, by - 4, 8, by + 4, 0.6, BLACK);
    line_aa(rgba, w, h, 8 + bar, by - 4, 8 + bar, by + 4, 0.6, BLACK);
    snprintf(text, sizeof text, "EPSILON = %.3g%% OF THE BOX DIAGONAL = %.4g",
             100.0 * o->epsilon, (double)epsilon);
    vr_image_text(rgba, w, h, 16 + (int)bar, by - 7, LABEL_SCALE, BLACK, text);
    *out = rgba, *out_w = w, *out_h = h;
    return VR_OK;
}

/* ---- walk: agent density -------------------------------------------------------------------- */

/* A perceptual ramp (after matplotlib's inferno): black at 0 through purple and orange to pale
 * yellow at 1. */
static uint32_t ramp(double t)
{
    static const double stops[5][3] = {
        {0, 0, 4}, {87, 16, 110}, {188, 55, 84}, {249, 142, 9}, {252, 255, 164}};
    t = t < 0 ? 0 : t > 1 ? 1 : t;
    const double x = t * 4;
    const int i = x >= 4 ? 3 : (int)x;
    const double f = x - i;
    uint32_t c[3];
    for (int k = 0; k < 3; ++k)
        c[k] = (uint32_t)lround(stops[i][k] + f * (stops[i + 1][k] - stops[i][k]));
    return RGB(c[0], c[1], c[2]);
}

static vr_status picture_walk(uint8_t **out, uint32_t *out_w, uint32_t *out_h,
                              const uint32_t *counts, uint32_t max, const vr_walk_config *cfg)
{
    const uint32_t grid = VR_WALK_GRID * APPLY_WALK_SCALE, legend = 110;
    const uint32_t w = grid + legend, h = grid + LABEL_BAND;
    uint8_t *rgba = image_new(w, h, WHITE);
    if (!rgba)
        return VR_ERROR(VR_ERR_OOM, "a %ux%u picture", w, h);
    for (uint32_t y = 0; y < VR_WALK_GRID; ++y)
        for (uint32_t x = 0; x < VR_WALK_GRID; ++x)
            vr_image_fill(rgba, w, h, (int)(x * APPLY_WALK_SCALE),
                          LABEL_BAND + (int)(y * APPLY_WALK_SCALE), APPLY_WALK_SCALE,
                          APPLY_WALK_SCALE,
                          ramp(max ? (double)counts[y * VR_WALK_GRID + x] / max : 0));
    /* the legend: the ramp from 0 (bottom) to max (top), three labels */
    const int lx = (int)grid + 12, top = LABEL_BAND + 10, bottom = (int)h - 10, bw = 24;
    for (int y = top; y < bottom; ++y)
        vr_image_fill(rgba, w, h, lx, y, bw, 1,
                      ramp((double)(bottom - 1 - y) / (bottom - 1 - top)));
    char text[128];
    for (int k = 0; k <= 2; ++k) {
        const int y = bottom - 1 - (bottom - 1 - top) * k / 2;
        snprintf(text, sizeof text, "%u", max * (uint32_t)k / 2);
        vr_image_fill(rgba, w, h, lx + bw, y, 5, 1, BLACK);
        vr_image_text(rgba, w, h, lx + bw + 8, y - 7, LABEL_SCALE, BLACK, text);
    }
    char a[32];
    snprintf(text, sizeof text, "AGENTS PER CELL AFTER %u STEPS: %s AGENTS, 256 X 256, MAX %u",
             cfg->steps, vr_format_count(a, cfg->agents), max);
    vr_image_text(rgba, w, h, 8, 3, LABEL_SCALE, BLACK, text);
    *out = rgba, *out_w = w, *out_h = h;
    return VR_OK;
}

/* ---- outputs -------------------------------------------------------------------------------- */

/* The walk's -o: one line x,y,count per occupied cell, y-major. */
static vr_status write_cells(const char *path, const uint32_t *counts)
{
    vr_cli_out f;
    vr_status st = vr_cli_out_open(&f, path, "cells CSV");
    if (st != VR_OK)
        return st;
    fprintf(f.f, "x,y,count\n");
    for (uint32_t y = 0; y < VR_WALK_GRID; ++y)
        for (uint32_t x = 0; x < VR_WALK_GRID; ++x)
            if (counts[y * VR_WALK_GRID + x])
                fprintf(f.f, "%u,%u,%u\n", x, y, counts[y * VR_WALK_GRID + x]);
    return vr_cli_out_close(&f);
}

/* ---- the table ------------------------------------------------------------------------------ */

typedef struct app_row {
    const char *name;        /* strategy */
    vr_reuse_kind kind;
    int gpu;
    vr_status status;
    char message[256];       /* when it failed */
    vr_app_report rep;
    int same;                /* output equal to the first row's */
    vr_batch_limits limits;  /* apply_limits */
} app_row;

typedef struct app_table {
    const app_def *app;
    const app_input *in;
    app_row rows[VR_REUSE_KIND_COUNT];
    int count;
    double naive_invocations; /* a naive run's: arity per primitive */
    double per_divisor;       /* vertices, or walk steps */
    double naive_ms;          /* 0: naive not in the list */
    uint32_t lanes;           /* walk on the GPU: threads per cell; else 1 */
} app_table;

static void row_cells(const app_table *t, const app_row *r, double *per, double *reuse,
                      double *vs)
{
    const double inv = (double)r->rep.counters.invocations;
    *per = t->per_divisor > 0 ? inv / t->per_divisor : 0;
    *reuse = t->naive_invocations > 0 ? 1 - inv / t->naive_invocations : 0;
    *vs = t->naive_ms > 0 && r->rep.ms > 0 ? t->naive_ms / r->rep.ms : 0;
}

/* What limits a row's strategy reads, short: "b64 u64 i192" (block, N_u, indices per dynamic
 * batch or plan part), "b64 w96" (warp batch), "b32" (naive, multi: one element or primitive per
 * thread). */
static void limits_cell(char *buf, size_t size, const app_row *r)
{
    const vr_batch_limits *l = &r->limits;
    if (r->kind == VR_REUSE_WARP)
        snprintf(buf, size, "b%u w%u", l->block_size, l->batch_indices);
    else if (r->kind == VR_REUSE_NAIVE || r->kind == VR_REUSE_MULTI)
        snprintf(buf, size, "b%u", l->block_size);
    else
        snprintf(buf, size, "b%u u%u i%u", l->block_size, l->max_unique, l->max_indices);
}

static void table_print(FILE *f, const app_table *t)
{
    const char *ms = t->app->arity == 1 ? "ms/step" : "ms";
    fprintf(f, "\n%-9s %-6s %-15s %10s %10s %13s %11s %7s %8s\n", "strategy", "device", "limits",
            ms, "prep_ms", "invocations", t->app->per, "reuse", "vs_naive");
    for (int i = 0; i < t->count; ++i) {
        const app_row *r = &t->rows[i];
        if (r->status != VR_OK) {
            fprintf(f, "%-9s %-6s FAIL: %s\n", r->name, r->gpu ? "gpu" : "cpu", r->message);
            continue;
        }
        double per, reuse, vs;
        row_cells(t, r, &per, &reuse, &vs);
        char inv[32], speed[16] = "-", lim[48];
        if (vs > 0)
            snprintf(speed, sizeof speed, "%.2fx", vs);
        limits_cell(lim, sizeof lim, r);
        fprintf(f, "%-9s %-6s %-15s %10.3f %10.3f %13s %11.*f %7.3f %8s%s\n", r->name,
                r->gpu ? "gpu" : "cpu", lim, r->rep.ms, r->rep.prep_ms,
                vr_format_count(inv, r->rep.counters.invocations), t->app->arity == 1 ? 1 : 3,
                per, reuse, speed,
                i > 0 && !r->same ? "  DIFFERS" : "");
    }
}

static void table_csv(FILE *f, const app_table *t)
{
    fprintf(f, "app,input,primitives,strategy,device,%s,prep_ms,invocations,%s,reuse,"
            "speedup_vs_naive,batches,same_as_first,block,nu,max_indices,warp_batch,lanes\n",
            t->app->arity == 1 ? "ms_per_step" : "ms", t->app->per);
    const uint64_t prims = t->app->arity == 1 ? t->in->walk.agents : t->in->mesh.index_count / 3;
    for (int i = 0; i < t->count; ++i) {
        const app_row *r = &t->rows[i];
        char settings[96]; /* the row's limits */
        snprintf(settings, sizeof settings, "%u,%u,%u,%u,%u", r->limits.block_size,
                 r->limits.max_unique, r->limits.max_indices, r->limits.batch_indices, t->lanes);
        fprintf(f, "%s,", t->app->name);
        vr_cli_csv_field(f, t->in->label);
        fprintf(f, ",%llu,%s,%s,", (unsigned long long)prims, r->name, r->gpu ? "gpu" : "cpu");
        if (r->status != VR_OK) {
            fprintf(f, "FAIL,,,,,,,,%s\n", settings);
            continue;
        }
        double per, reuse, vs;
        row_cells(t, r, &per, &reuse, &vs);
        fprintf(f, "%.4f,%.3f,%llu,%.4f,%.4f,", r->rep.ms, r->rep.prep_ms,
                r->rep.counters.invocations, per, reuse);
        if (vs > 0)
            fprintf(f, "%.3f", vs);
        fprintf(f, ",%u,%s,%s\n", r->rep.batches, i == 0 || r->same ? "yes" : "no", settings);
    }
}

/* ---- the command ---------------------------------------------------------------------------- */

static const vr_cli_command g_cmd_subdivide = {
    "apply subdivide", "SCENE",
    "One step of Loop subdivision (the paper's Section 5.1; pipeline/apps/loop.h has the rules,\n"
    "boundaries and creases included) run by every strategy through the general reuse API:\n"
    "the per-vertex rule is the element function, so each strategy's reuse merges the\n"
    "vertices' memory accesses. A table per strategy: time, invocations of the vertex rule,\n"
    "per vertex, reuse (1 - invocations / 3 per triangle) and time against naive. Every\n"
    "strategy's mesh is checked equal to the first one's bit for bit. -o writes it; --png\n"
    "draws the input and the result side by side, flat shaded with their triangle edges.",
    "SCENE is a file (OBJ, PLY, glTF 2.0, ...), a .gts file or a generator (sphere[:N], ...@N).\n"
    "The edges of a dense mesh fill the picture at --zoom 1: zoom in (--zoom 4) to see them.",
    VR_CLI_ONE_SCENE};

static const vr_cli_command g_cmd_envelope = {
    "apply envelope", "SCENE",
    "Simplification envelopes (Cohen et al. 1996; the paper's Section 5.2): every vertex\n"
    "moves along its normal by a safe offset of at most epsilon (2% of the bounding-box\n"
    "diagonal by default), computed against an octree of the mesh so no new\n"
    "self-intersections appear. The offset of a vertex is the expensive \"shader\" each\n"
    "strategy runs once per distinct vertex of its batches (naive: once per triangle\n"
    "corner); a table per strategy, every output checked equal to the first one's and to\n"
    "the CPU reference's by the tests. Prints the statistics: epsilon, the offsets'\n"
    "min/mean/max, the octree, and with --check the self-intersections of input and output.\n"
    "-o writes the envelope mesh; --png draws a cross-section through the box centre: the\n"
    "input (black), the outer (red) and the inner envelope (blue; --png computes the other\n"
    "envelope too, with the CPU reference).",
    "Without a GPU the CPU twins repeat the octree walks as the GPU would: the bunny takes\n"
    "about 10 s per strategy on 2 cores (naive's 6 walks per vertex); pick strategies with\n"
    "--strategy. Progress goes to stderr.",
    VR_CLI_ONE_SCENE};

static const vr_cli_command g_cmd_walk = {
    "apply walk", "",
    "The paper's parallel random walk (Section 5.3; pipeline/apps/walk.h has the model):\n"
    "agents on the fixed 256 x 256 grid take Levy-flight steps, each drawn from its cell's 8\n"
    "best moves; the agent's cell is the index the strategies batch (arity 1), so agents in\n"
    "one cell share one evaluation of its moves. A table per strategy: ms per step,\n"
    "invocations (cell evaluations), per step, reuse (1 - invocations / agent draws) and time\n"
    "against naive (patch and meshlet need a triangle mesh: --strategy all leaves them out).\n"
    "Every strategy's final cells are checked equal to the first one's. -o writes the\n"
    "occupied cells as CSV (x,y,count); --png draws the agents per cell after the last step.",
    "No SCENE: the grid is the paper's. Defaults are the paper's: 300,000 agents, 10 steps.",
    VR_CLI_OPERANDS_OWN};

#define APPLY_COMMON(o)                                                                         \
    VR_CLI_STRATEGY(&(o)->strategies, "all"),                                                   \
    {"device", 0, "auto|cpu|gpu",                                                               \
     "where the strategies run: gpu (kernel times, cudaEvents), cpu (the CPU twins, wall "     \
     "clock) or auto (default: the GPU when there is a CUDA device)",                           \
     vr_cli_parse_choice, &(o)->device, 0, 0, 0, 0, g_device_names},                            \
    {"reps", 0, "N", "GPU: timed repetitions, the best is reported (default 5; the CPU twin "    \
     "runs once)", vr_cli_parse_int, &(o)->reps, 0, 1, VR_REPS_MAX, 0, NULL},                  \
    {"block", 0, "N", "threads per block of every strategy's kernels (default: --limits; the "  \
     "walk 256)", vr_cli_parse_u32, &(o)->given.block_size, 0, VR_BLOCK_MIN, VR_BLOCK_MAX, 32,   \
     NULL},                                                                                     \
    {"nu", 0, "N", "hash, phash, sort, patch, meshlet: at most N distinct elements per batch, "  \
     "N_u (default: --limits; the walk 256)", vr_cli_parse_u32, &(o)->given.max_unique, 0,      \
     VR_NU_MIN, VR_NU_MAX, 0, NULL},                                                            \
    {"max-indices", 0, "N", "hash, phash, sort, patch, meshlet: at most N indices per batch, "   \
     "whole primitives (default: --limits; the walk 1023)", vr_cli_parse_u32,                   \
     &(o)->given.max_indices, 0, 1, VR_MAX_INDICES_MAX, 0, NULL},                               \
    {"warp-batch", 0, "N", "warp: N indices per static batch, whole primitives (default 96)",    \
     vr_cli_parse_u32, &(o)->given.batch_indices, 0, 1, VR_WARP_BATCH_MAX, 0, NULL},            \
    VR_CLI_CSV(&(o)->csv)

/* --limits (subdivide, envelope): `paper` names the application's per-strategy settings. */
#define APPLY_LIMITS(o, paper)                                                                  \
    {"limits", 0, "paper|render",                                                               \
     "the batch limits: paper (default): each strategy's as the paper's Section 5 ran it ("     \
     paper "; multi, patch and meshlet, not in the paper, as sort); render: the renderer's for " \
     "every strategy (block 256, N_u 256, 1023 indices, warp batch 96). --block, --nu, "        \
     "--max-indices and --warp-batch then set every strategy's", vr_cli_parse_choice,          \
     &(o)->limits, 0, 0, 0, 0, g_limits_names}

static void apply_help(FILE *f)
{
    fprintf(f,
            "usage: vreuse apply subdivide|envelope|walk [SCENE] [options]\n\n"
            "The paper's Section 5 applications through every batching strategy:\n"
            "  subdivide SCENE   one Loop subdivision step; -o mesh, --png before | after\n"
            "  envelope SCENE    simplification envelope (outer, --inner) at 2%% of the box\n"
            "                    diagonal; -o mesh, --png a cross-section\n"
            "  walk              the random walk (300,000 agents, 10 steps on 256 x 256);\n"
            "                    -o cells CSV, --png agent density\n"
            "Each prints a table per strategy (time, invocations, reuse, vs naive) and checks\n"
            "that every strategy's output equals the first one's.\n"
            "`vreuse apply APP --help` lists the application's options.\n");
}

/* The option tables of the three applications and their parse; returns VR_CLI_CONTINUE or the
 * exit code. */
static int apply_parse(int app, apply_opts *o, int argc, char **argv, vr_cli_args *args)
{
    const vr_cli_opt subdivide[] = {
        APPLY_COMMON(o),
        APPLY_LIMITS(o, "Loop: naive block 32; warp batch 96, block 64; hash, phash N_u 64, 192 "
                        "indices, block 64; sort N_u 256, 768 indices, block 256"),
        VR_CLI_OUT(&o->out, "write the subdivided mesh to FILE; the extension picks the format: "
                            ".ply (binary, read back exactly), .obj, .glb or .gts"),
        {"png", 0, "FILE", "draw the input and the result side by side (flat shaded, triangle "
         "edges dark) to FILE", vr_cli_parse_path, &o->png, 0, 0, 0, 0, NULL},
        VR_CLI_SIZE(o->size, "640x640 per panel"),
        VR_CLI_YAW(&o->yaw),
        VR_CLI_PITCH(&o->pitch),
        VR_CLI_ZOOM(&o->zoom),
        {0}};
    const vr_cli_opt envelope[] = {
        APPLY_COMMON(o),
        APPLY_LIMITS(o, "Table 4: naive block 32; warp batch 96, block 64; hash N_u 128, 576 "
                        "indices, phash and sort N_u 128, 768 indices, block 128"),
        {"inner", 0, NULL, "the inner envelope (default: the outer)", NULL, &o->inner, 1, 0, 0,
         0, NULL},
        {"epsilon", 0, "FRACTION", "the largest offset as a fraction of the bounding-box "
         "diagonal (default 0.02, the paper's)", vr_cli_parse_float, &o->epsilon, 0, 1e-4, 1, 0,
         NULL},
        {"check", 0, NULL, "count the self-intersecting pairs of non-adjacent triangles of the "
         "input and of the output (slow: a sphere of 1M triangles took 1.7 s more, the envelope "
         "14 s)", NULL, &o->check, 1, 0, 0, 0, NULL},
        VR_CLI_OUT(&o->out, "write the envelope mesh to FILE; the extension picks the format: "
                            ".ply (binary, read back exactly), .obj, .glb or .gts"),
        {"png", 0, "FILE", "draw a cross-section through the box centre to FILE: input black, "
         "outer envelope red, inner blue", vr_cli_parse_path, &o->png, 0, 0, 0, 0, NULL},
        {"slice", 0, "auto|x|y|z", "the axis the --png plane is normal to (default auto: the "
         "box's thinnest, which cuts the largest section)", vr_cli_parse_choice, &o->slice, 0, 0,
         0, 0, g_slice_names},
        VR_CLI_SIZE(o->size, "800x800"),
        {0}};
    const vr_cli_opt walk[] = {
        APPLY_COMMON(o),
        {"agents", 0, "N", "agents (default 300,000, the paper's)", vr_cli_parse_u32, &o->agents,
         0, 1, APPLY_AGENTS_MAX, 0, NULL},
        {"steps", 0, "N", "steps (default 10, the paper's)", vr_cli_parse_u32, &o->steps, 0, 1,
         VR_WALK_MAX_STEPS, 0, NULL},
        {"seed", 0, "N", "the Philox key of placement and moves (default 2018)", vr_cli_parse_u64,
         &o->seed, 0, 0, 18446744073709551615.0, 0, NULL},
        {"placement", 0, "random|sorted", "the agents' order: random (default, the paper's "
         "uniform start) or sorted by cell (the same cells; more reuse per batch)",
         vr_cli_parse_choice, &o->placement, 0, 0, 0, 0, g_placement_names},
        {"resort", 0, NULL, "sort the agents by cell before every step (the (cell, agent) pairs "
         "by cell, timed as part of the step): each cell's agents share one batch",
         NULL, &o->resort, 1, 0, 0, 0, NULL},
        {"lanes", 0, "N", "GPU threads that evaluate one cell's moves together: 1 (default), "
         "2, 4, 8, 16 or 32; each scans every N-th row of the cell's disc, then they merge "
         "their best 8 (the same moves; for steps with few distinct cells, as with --resort). "
         "The CPU twins ignore it", vr_cli_parse_u32, &o->lanes, 0, 1, 32, 0, NULL},
        VR_CLI_OUT(&o->out, "write the occupied cells after the last step to FILE as CSV "
                            "(x,y,count; '-': standard output)"),
        {"png", 0, "FILE", "draw the agents per cell after the last step to FILE (the grid at 3 "
         "pixels per cell, a colour ramp with its legend)", vr_cli_parse_path, &o->png, 0, 0, 0,
         0, NULL},
        {0}};
    static const vr_cli_command *const cmds[APP_COUNT] = {&g_cmd_subdivide, &g_cmd_envelope,
                                                          &g_cmd_walk};
    const vr_cli_opt *const tables[APP_COUNT] = {subdivide, envelope, walk};
    return vr_cli_parse(cmds[app], tables[app], argc, argv, args);
}

/* Checks the options against each other and the outputs' paths, before any long work. */
static int apply_check(const app_def *app, const char *cmd, apply_opts *o, const vr_cli_args *args)
{
    if (app->arity == 1 && args->count > 0)
        return vr_cli_fail(VR_CLI_USAGE, cmd, "takes no SCENE ('%s'): the paper's 256 x 256 grid "
                           "is fixed; --agents, --steps, --seed and --placement set the walk",
                           args->v[0]);
    if (o->out && app->arity == 3) {
        if (!strcmp(o->out, "-"))
            return vr_cli_fail(VR_CLI_USAGE, cmd, "-o -: the mesh formats are files; name one "
                               "(OUT.ply, .obj, .glb or .gts)");
        if (vr_mesh_format_of(o->out) < 0)
            return vr_cli_fail(VR_CLI_USAGE, cmd, "-o '%s': the extension picks the format: "
                               ".ply, .obj, .glb or .gts", o->out);
    }
    const char *paths[3] = {o->out, o->png, o->csv};
    for (int i = 0; i < 3; ++i)
        for (int k = 0; k < i; ++k)
            if (paths[i] && paths[k] && !strcmp(paths[i], paths[k]))
                return vr_cli_fail(VR_CLI_USAGE, cmd, "'%s' is named for two outputs (-o, --png, "
                                   "--csv): name each its own file", paths[i]);
    if (o->png && !strcmp(o->png, "-"))
        return vr_cli_fail(VR_CLI_USAGE, cmd, "--png -: the picture is binary; name a file");
    if ((o->lanes & (o->lanes - 1)) != 0)
        return vr_cli_fail(VR_CLI_USAGE, cmd, "--lanes %u: want 1, 2, 4, 8, 16 or 32 (a power "
                           "of two: the lanes split the disc's rows and merge in pairs)", o->lanes);
    const uint32_t arity = app->arity;
    if (o->given.max_indices % arity || o->given.batch_indices % arity)
        return vr_cli_fail(VR_CLI_USAGE, cmd, "--%s %u: batches hold whole primitives of %u "
                           "indices, so want a multiple of %u",
                           o->given.max_indices % arity ? "max-indices" : "warp-batch",
                           o->given.max_indices % arity ? o->given.max_indices
                                                        : o->given.batch_indices, arity, arity);
    if (o->given.max_unique && o->given.max_unique < arity)
        return vr_cli_fail(VR_CLI_USAGE, cmd, "--nu %u: a batch must hold one primitive's %u "
                           "elements", o->given.max_unique, arity);
    if (o->strategies.count == 0) {
        o->strategies.count = VR_REUSE_KIND_COUNT;
        for (int k = 0; k < VR_REUSE_KIND_COUNT; ++k)
            o->strategies.v[k] = &vr_reuse_all[k];
    }
    if (app->arity == 1) { /* the walk: no plans; "all" leaves them out, naming one is an error */
        vr_cli_strategies kept = {{0}, 0};
        for (int i = 0; i < o->strategies.count; ++i) {
            const vr_reuse_kind kind = (vr_reuse_kind)(o->strategies.v[i] - vr_reuse_all);
            if (!vr_program_planned(kind))
                kept.v[kept.count++] = o->strategies.v[i];
            else if (o->strategies.count < VR_REUSE_KIND_COUNT)
                return vr_cli_fail(VR_CLI_USAGE, cmd, "--strategy %s: needs a triangle mesh; the "
                                   "walk's stream is one cell per agent (use naive, warp, hash, "
                                   "phash, sort, multi)", o->strategies.v[i]->name);
        }
        o->strategies = kept;
    }
    /* every output checked before the scene loads and the strategies run */
    if ((o->out && vr_cli_out_check(o->out, app->arity == 3 ? "mesh" : "cells CSV") != VR_OK) ||
        (o->png && vr_cli_out_check(o->png, "PNG") != VR_OK) ||
        (o->csv && vr_cli_out_check(o->csv, "CSV") != VR_OK))
        return vr_cli_fail_last(cmd);
    return VR_CLI_CONTINUE;
}

static int cmp_u32(const void *a, const void *b)
{
    const uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* The scene or the walk's start. 0, or the exit code with the message printed. */
static int apply_input(app_input *in, const app_def *app, const char *cmd, const apply_opts *o,
                       const vr_cli_args *args)
{
    if (app->arity == 3) {
        in->label = vr_cli_scene_label(args->v[0]);
        if (vr_mesh_load(&in->mesh, args->v[0]) != VR_OK)
            return vr_cli_fail_last(cmd);
        in->env = vr_envelope_config_default();
        in->env.direction = o->inner ? -1 : 1;
        in->env.epsilon_fraction = o->epsilon;
        in->env.check = o->check;
        return 0;
    }
    static const char *const resorted[] = {"random+resort", "sorted+resort"};
    in->label = o->resort ? resorted[o->placement] : g_placement_names[o->placement];
    in->walk = vr_walk_config_default();
    in->walk.agents = o->agents, in->walk.steps = o->steps, in->walk.seed = o->seed;
    in->walk.resort = o->resort;
    in->walk.lanes = o->lanes;
    in->start = malloc((size_t)o->agents * sizeof *in->start);
    if (!in->start)
        return vr_cli_fail(1, cmd, "out of memory for %u agents", o->agents);
    vr_walk_place(in->start, o->agents, o->seed);
    if (o->placement == PLACE_SORTED)
        qsort(in->start, o->agents, sizeof *in->start, cmp_u32);
    return 0;
}

/* The batch limits strategy `kind` runs with: subdivide's and envelope's per strategy as the
 * paper's Section 5 reports them (--limits paper, the default) or the renderer's, the API's
 * defaults for the arity (--limits render, and the walk); then --block, --nu, --max-indices and
 * --warp-batch for every strategy. */
static vr_batch_limits apply_limits(int app, const apply_opts *o, vr_reuse_kind kind)
{
    vr_batch_limits l = vr_program_limits_default(g_apps[app].arity);
    if (app == APP_SUBDIVIDE && o->limits == LIMITS_PAPER)
        l = vr_loop_paper_limits(kind);
    else if (app == APP_ENVELOPE && o->limits == LIMITS_PAPER)
        l = vr_envelope_paper_limits(kind);
    if (o->given.block_size)
        l.block_size = o->given.block_size;
    if (o->given.max_unique)
        l.max_unique = o->given.max_unique;
    if (o->given.max_indices)
        l.max_indices = o->given.max_indices;
    if (o->given.batch_indices)
        l.batch_indices = o->given.batch_indices;
    return l;
}

/* The batch limits line: one setting when every strategy runs with the same, else where each
 * strategy's come from (the table's limits column). */
static void limits_print(FILE *log, int app, const apply_opts *o)
{
    const vr_batch_limits l = apply_limits(app, o, o->strategies.v[0] - vr_reuse_all);
    int same = 1;
    for (int i = 1; i < o->strategies.count; ++i) {
        const vr_batch_limits k = apply_limits(app, o, o->strategies.v[i] - vr_reuse_all);
        same &= !memcmp(&k, &l, sizeof k);
    }
    const int given = o->given.block_size || o->given.max_unique || o->given.max_indices ||
                      o->given.batch_indices;
    const int paper = app != APP_WALK && o->limits == LIMITS_PAPER;
    const char *source = !paper ? "the renderer's, the paper's Section 4"
                         : app == APP_SUBDIVIDE ? "the paper's for Loop subdivision, Section 5.1"
                                                : "the paper's for the envelopes, Section 5.2";
    if (same)
        fprintf(log, "batch limits: block %u, N_u %u, %u indices per dynamic batch, warp batch "
                "%u%s%s%s\n", l.block_size, l.max_unique, l.max_indices, l.batch_indices,
                given ? "" : " (", given ? "" : source, given ? "" : ")");
    else
        fprintf(log, "batch limits: per strategy (%s%s; the table's limits column: b block, u "
                "N_u, i indices per dynamic batch, w warp batch)\n", source,
                given ? ", and the options for every strategy" : "");
}

/* Runs every row; the first output stays in *first. 0 when every row ran and matched. */
static int apply_rows(app_table *t, app_output *first, app_input *in, const apply_opts *o,
                      int gpu, const char *cmd)
{
    const app_def *app = t->app;
    const int app_id = (int)(app - g_apps);
    const int rows = o->strategies.count;
    char progress[64];
    snprintf(progress, sizeof progress, "vreuse %s: strategies", cmd);
    int bad = 0;
    for (int i = 0; i < rows; ++i) {
        app_row *r = &t->rows[t->count++];
        const vr_reuse_ops *ops = o->strategies.v[i];
        r->name = ops->name;
        r->kind = (vr_reuse_kind)(ops - vr_reuse_all);
        r->gpu = gpu;
        r->limits = apply_limits(app_id, o, r->kind);
        vr_app_run run = {r->kind, r->limits, 1, (uint32_t)o->reps};
        app_output got;
        memset(&got, 0, sizeof got);
        if (rows > 1)
            vr_progress(progress, (uint64_t)i, (uint64_t)rows);
        r->status = app->run_one(i == 0 ? first : &got, in, &run, gpu, &r->rep);
        in->env.check = 0; /* the outputs are equal: one intersection count is enough */
        if (r->status != VR_OK) {
            snprintf(r->message, sizeof r->message, "%s", vr_last_error());
            bad = 1;
        } else if (i > 0) {
            r->same = outputs_equal(first, &got, in->walk.agents);
            bad |= !r->same;
        }
        if (i > 0)
            app_output_free(&got);
        if (r->status == VR_OK && run.kind == VR_REUSE_NAIVE)
            t->naive_ms = r->rep.ms;
        if (i == 0 && r->status != VR_OK) { /* nothing to compare the others with */
            for (int k = 1; k < rows; ++k) {
                app_row *skip = &t->rows[t->count++];
                skip->name = o->strategies.v[k]->name;
                skip->kind = (vr_reuse_kind)(o->strategies.v[k] - vr_reuse_all);
                skip->limits = apply_limits(app_id, o, skip->kind);
                skip->gpu = gpu;
                skip->status = VR_ERR_ARG;
                snprintf(skip->message, sizeof skip->message, "not run (the first strategy "
                         "failed)");
            }
            break;
        }
    }
    if (rows > 1)
        vr_progress(progress, (uint64_t)rows, (uint64_t)rows);
    return bad;
}

/* The lines under the table: whether the outputs agree, what the columns mean, the stats. */
static void apply_summary(FILE *log, const app_table *t, const app_output *first,
                          const app_input *in, const apply_opts *o, int bad)
{
    char a[32], b[32], c[32];
    const app_def *app = t->app;
    if (!bad && t->count > 1)
        fprintf(log, "\nidentical outputs: every strategy's %s %s's bit for bit\n",
                app->arity == 1 ? "final cells equal" : "mesh equals", t->rows[0].name);
    fprintf(log, "%sreuse = 1 - invocations / %s (%s); vs_naive = naive's time / this time\n",
            !bad && t->count > 1 ? "" : "\n",
            vr_format_count(a, (unsigned long long)t->naive_invocations),
            app->arity == 1 ? "one evaluation per agent and step, as naive draws"
                            : "3 per triangle, as naive shades");
    if (app->arity == 1) {
        fprintf(log, "ms/step: the mean step; prep_ms: host time forming the batches of every "
                "step\n");
        if (in->walk.resort) {
            double lo = -1, hi = 0;
            for (int i = 0; i < t->count; ++i)
                if (t->rows[i].status == VR_OK) {
                    const double v = t->rows[i].rep.order_ms;
                    lo = lo < 0 || v < lo ? v : lo;
                    hi = v > hi ? v : hi;
                }
            fprintf(log, "--resort: the sort by cell took %.3f-%.3f ms per step (part of "
                    "ms/step)\n", lo < 0 ? 0 : lo, hi);
        }
    } else
        fprintf(log, "prep_ms: host time forming batches or plans%s\n",
                app == &g_apps[APP_ENVELOPE] ? ", and welding, normals, fans and octree" : "");
    if (app == &g_apps[APP_ENVELOPE] && t->rows[0].status == VR_OK) {
        const vr_envelope_stats *s = &first->env;
        fprintf(log, "envelope (%s): epsilon %.4g (%.3g%% of the box diagonal); offsets min %.4g, "
                "mean %.4g, max %.4g; %s of %s welded vertices moved the full epsilon; octree "
                "%s nodes, depth %u\n", in->env.direction > 0 ? "outer" : "inner",
                (double)s->epsilon, 100.0 * o->epsilon, (double)s->offset_min,
                (double)s->offset_mean, (double)s->offset_max,
                vr_format_count(a, s->full_vertices), vr_format_count(b, s->welded_vertices),
                vr_format_count(c, s->octree_nodes), s->octree_depth);
        if (o->check)
            fprintf(log, "self-intersections (pairs of non-adjacent triangles): input %llu, "
                    "output %llu%s (%.0f ms)\n", (unsigned long long)s->input_intersections,
                    (unsigned long long)s->output_intersections,
                    s->output_intersections > s->input_intersections ? ": NEW ONES"
                                                                     : ", no new ones",
                    s->check_ms);
    }
}

/* -o, --png and --csv, after every row ran and agreed. 0, or 1 with the message printed. */
static int apply_outputs(FILE *log, const app_table *t, const app_output *first,
                         const app_input *in, const apply_opts *o, const char *cmd)
{
    const app_def *app = t->app;
    const int walk = app->arity == 1;
    uint32_t *counts = NULL, max = 0, occupied = 0;
    uint8_t *rgba = NULL;
    uint32_t w = 0, h = 0;
    vr_mesh other;
    memset(&other, 0, sizeof other);
    vr_status st = VR_OK;
    char a[32], b[32];
    if (walk) {
        counts = malloc((size_t)VR_WALK_GRID * VR_WALK_GRID * sizeof *counts);
        if (!counts)
            return vr_cli_fail(1, cmd, "out of memory for the grid's counts");
        vr_walk_density(counts, first->cells, in->walk.agents);
        for (uint32_t c = 0; c < VR_WALK_GRID * VR_WALK_GRID; ++c) {
            max = counts[c] > max ? counts[c] : max;
            occupied += counts[c] > 0;
        }
        fprintf(log, "after %u step%s: %s of %s cells occupied, at most %u agents in one cell\n",
                in->walk.steps, in->walk.steps == 1 ? "" : "s", vr_format_count(a, occupied),
                vr_format_count(b, VR_WALK_GRID * VR_WALK_GRID), max);
    }
    if (o->out) {
        if (walk) {
            st = write_cells(o->out, counts);
        } else {
            char comment[256];
            if (app == &g_apps[APP_SUBDIVIDE])
                snprintf(comment, sizeof comment, "vreuse apply subdivide of %s: one Loop step",
                         in->label);
            else
                snprintf(comment, sizeof comment, "vreuse apply envelope of %s: %s, epsilon %g of "
                         "the box diagonal", in->label, in->env.direction > 0 ? "outer" : "inner",
                         (double)o->epsilon);
            /* any of export's formats: .ply is read back exactly by our own reader (every vertex
             * kept), .obj and .glb open in every viewer (assimp joins vertices closer than 1e-5
             * on reading them back), .gts compresses (the codec reorders the triangles) */
            vr_mesh_write_job job = {&first->mesh, (vr_mesh_format)vr_mesh_format_of(o->out),
                                     comment};
            st = vr_cli_write_via(o->out, "mesh", vr_mesh_write_job_run, &job);
        }
        if (st != VR_OK)
            goto done;
        if (walk)
            fprintf(log, "cells -> %s (x,y,count; %s rows)\n", o->out,
                    vr_format_count(a, occupied));
        else
            fprintf(log, "mesh -> %s (%s vertices, %s triangles)\n", o->out,
                    vr_format_count(a, first->mesh.vertex_count),
                    vr_format_count(b, first->mesh.index_count / 3));
    }
    if (o->png) {
        if (walk) {
            st = picture_walk(&rgba, &w, &h, counts, max, &in->walk);
        } else if (app == &g_apps[APP_SUBDIVIDE]) {
            st = picture_subdivide(&rgba, &w, &h, &in->mesh, &first->mesh, o);
        } else { /* the other envelope too: the picture shows both */
            vr_envelope_config cfg = in->env;
            cfg.direction = -cfg.direction, cfg.check = 0;
            if (!vr_progress_quiet)
                fprintf(stderr, "vreuse %s: computing the %s envelope for the picture\n", cmd,
                        cfg.direction > 0 ? "outer" : "inner");
            st = vr_envelope_build(&other, NULL, &in->mesh, &cfg, NULL);
            const int outer_first = in->env.direction > 0;
            if (st == VR_OK)
                st = picture_envelope(&rgba, &w, &h, &in->mesh, outer_first ? &first->mesh : &other,
                                      outer_first ? &other : &first->mesh, first->env.epsilon, o);
        }
        if (st == VR_OK)
            st = vr_cmd_write_png(o->png, "PNG", rgba, w, h);
        if (st != VR_OK)
            goto done;
        fprintf(log, "picture -> %s (%ux%u: %s)\n", o->png, w, h,
                walk ? "agents per cell"
                : app == &g_apps[APP_SUBDIVIDE] ? "before | after, flat shaded with edges"
                                               : "cross-section through the box centre");
    }
    if (o->csv) {
        vr_cli_out f;
        if ((st = vr_cli_out_open(&f, o->csv, "CSV")) != VR_OK)
            goto done;
        table_csv(f.f, t);
        if ((st = vr_cli_out_close(&f)) != VR_OK)
            goto done;
    }
done:
    free(counts);
    free(rgba);
    vr_mesh_free(&other);
    return st == VR_OK ? 0 : vr_cli_fail_last(cmd);
}

int vr_cmd_apply(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        apply_help(argc < 2 ? stderr : stdout);
        return argc < 2 ? vr_cli_fail(VR_CLI_USAGE, "apply", "name an application: subdivide, "
                                      "envelope or walk")
                        : 0;
    }
    int id = -1;
    for (int k = 0; k < APP_COUNT; ++k)
        id = !strcmp(argv[1], g_apps[k].name) ? k : id;
    if (id < 0)
        return vr_cli_fail(VR_CLI_USAGE, "apply", "unknown application '%s': subdivide, envelope "
                           "or walk come first (see vreuse apply --help)", argv[1]);
    const app_def *app = &g_apps[id];
    char cmd[32];
    snprintf(cmd, sizeof cmd, "apply %s", app->name);

    const vr_walk_config walk = vr_walk_config_default();
    apply_opts o;
    memset(&o, 0, sizeof o);
    o.device = DEVICE_AUTO;
    o.reps = APPLY_REPS_DEFAULT;
    o.size[0] = o.size[1] = id == APP_SUBDIVIDE ? 640 : 800;
    o.pitch = 15, o.zoom = 1;
    o.epsilon = VR_ENVELOPE_EPSILON_FRACTION;
    o.agents = walk.agents, o.steps = walk.steps, o.seed = walk.seed, o.lanes = walk.lanes;
    vr_cli_args args;
    int rc = apply_parse(id, &o, argc - 1, argv + 1, &args);
    if (rc != VR_CLI_CONTINUE)
        return rc;
    if ((rc = apply_check(app, cmd, &o, &args)) != VR_CLI_CONTINUE)
        return rc;
    const int gpu = o.device != DEVICE_CPU && vr_gpu_available();
    if (o.device == DEVICE_GPU && !gpu)
        return vr_cli_fail(1, cmd, "--device gpu: %s; use --device cpu or auto",
                           vr_gpu_device_name());

    app_input in;
    memset(&in, 0, sizeof in);
    if ((rc = apply_input(&in, app, cmd, &o, &args)) != 0)
        return rc;
    const int to_stdout = (o.csv && !strcmp(o.csv, "-")) || (o.out && !strcmp(o.out, "-"));
    FILE *log = to_stdout ? stderr : stdout;
    char a[32], b[32], c[32];
    if (app->arity == 3)
        fprintf(log, "vreuse %s: %s, %s triangles, %s vertices\n", cmd, in.label,
                vr_format_count(a, in.mesh.index_count / 3),
                vr_format_count(b, in.mesh.vertex_count));
    else
        fprintf(log, "vreuse %s: %s agents placed %s (seed %llu), %u step%s on the %u x %u "
                "grid%s\n", cmd, vr_format_count(a, o.agents),
                o.placement == PLACE_SORTED ? "at random, then sorted by cell" : "at random",
                (unsigned long long)o.seed, o.steps, o.steps == 1 ? "" : "s", VR_WALK_GRID,
                VR_WALK_GRID,
                o.resort ? ", sorted by cell before every step" : "");
    if (app->arity == 1 && o.lanes > 1 && gpu)
        fprintf(log, "--lanes %u: %u GPU threads evaluate each cell's moves\n", o.lanes, o.lanes);
    else if (app->arity == 1 && o.lanes > 1)
        fprintf(log, "--lanes %u: a GPU setting; the CPU twins evaluate each cell in one thread "
                "(the same moves)\n", o.lanes);
    limits_print(log, id, &o);
    if (gpu)
        fprintf(log, "times: GPU kernels on %s (cudaEvents, best of %d)\n", vr_gpu_device_name(),
                o.reps);
    else
        fprintf(log, "times: CPU twins, wall clock (%s)\n",
                o.device == DEVICE_CPU ? "--device cpu" : vr_gpu_device_name());
    if (id == APP_ENVELOPE && !vr_progress_quiet)
        fprintf(stderr, "vreuse %s: computing the %s envelope of %s triangles%s\n", cmd,
                o.inner ? "inner" : "outer", vr_format_count(c, in.mesh.index_count / 3),
                o.check ? ", then counting self-intersections (--check)" : "");

    app_table t;
    memset(&t, 0, sizeof t);
    t.app = app, t.in = &in;
    t.naive_invocations = app->arity == 3 ? (double)in.mesh.index_count
                                          : (double)o.agents * o.steps;
    t.per_divisor = app->arity == 3 ? in.mesh.vertex_count : o.steps;
    t.lanes = app->arity == 1 && gpu && o.lanes > 1 ? o.lanes : 1;
    app_output first;
    memset(&first, 0, sizeof first);
    const int bad = apply_rows(&t, &first, &in, &o, gpu, cmd);
    table_print(log, &t);
    apply_summary(log, &t, &first, &in, &o, bad);
    if (bad) {
        int failed = 0, differ = 0;
        for (int i = 0; i < t.count; ++i) {
            failed += t.rows[i].status != VR_OK;
            differ += i > 0 && t.rows[i].status == VR_OK && !t.rows[i].same;
        }
        rc = vr_cli_fail(1, cmd, "%d of %d rows failed and %d differ from %s's output (see "
                         "the table); nothing written", failed, t.count, differ, t.rows[0].name);
    } else {
        rc = apply_outputs(log, &t, &first, &in, &o, cmd);
    }
    app_output_free(&first);
    vr_mesh_free(&in.mesh);
    free(in.start);
    return rc;
}
