/* camera.c - an orbit camera fitted to a mesh's bounds: yaw/pitch about the bounding-box centre,
 * zoom along the view axis, a GL-style perspective whose near and far planes hug the bounding
 * sphere. Produces the MVP and normal matrix of vr_shader (reuse/shaders.h), so the geometry
 * stage's clip positions and view-space normals feed the rasterizer and its Lambert resolve.
 * Try: `vreuse render bunny.obj --yaw 30 --pitch 20 --zoom 1.5 --out b.png`.
 */
#include "raster/raster.h"

#include <assert.h>
#include <math.h>
#include <string.h>

void vr_camera_fit(vr_camera *c, const vr_mesh *m)
{
    assert(c && m);
    double lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
    int any = 0;
    /* bounds over referenced vertices only: files such as the bunny carry unused ones */
    for (uint32_t i = 0; i < m->index_count; ++i) {
        const uint32_t v = m->indices[i];
        if (v >= m->vertex_count)
            continue;
        for (int a = 0; a < 3; ++a) {
            const double x = m->positions[3 * (size_t)v + a];
            if (!isfinite(x))
                continue;
            if (!any || x < lo[a])
                lo[a] = x;
            if (!any || x > hi[a])
                hi[a] = x;
        }
        any = 1;
    }
    for (int a = 0; a < 3; ++a)
        c->center[a] = (float)(0.5 * (lo[a] + hi[a]));
    /* radius: the farthest referenced vertex from the box centre (tighter than half the box
     * diagonal, which overestimates a round mesh by up to sqrt(3)) */
    double r2 = 0;
    for (uint32_t i = 0; i < m->index_count; ++i) {
        const uint32_t v = m->indices[i];
        if (v >= m->vertex_count)
            continue;
        double d2 = 0;
        for (int a = 0; a < 3; ++a) {
            const double d = m->positions[3 * (size_t)v + a] - c->center[a];
            d2 += d * d;
        }
        if (d2 > r2 && isfinite(d2))
            r2 = d2;
    }
    c->radius = r2 > 0 ? (float)sqrt(r2) : 1.0f;
    c->yaw = 0.0f;
    c->pitch = 15.0f;
    c->zoom = 1.0f;
    c->fovy = 40.0f;
}

static void vr_normalize3(double *v)
{
    const double l = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    if (l > 0)
        for (int i = 0; i < 3; ++i)
            v[i] /= l;
}

void vr_camera_shader(vr_shader *s, const vr_camera *c, uint32_t width, uint32_t height)
{
    assert(s && c && width > 0 && height > 0);
    const double deg = 3.14159265358979323846 / 180.0;
    const double pitch = (c->pitch < -89.0f ? -89.0 : c->pitch > 89.0f ? 89.0 : c->pitch) * deg;
    const double yaw = c->yaw * deg;
    const double fovy = (c->fovy < 10.0f ? 10.0 : c->fovy > 120.0f ? 120.0 : c->fovy) * deg;
    const double zoom = c->zoom > 1e-3f ? c->zoom : 1e-3;
    const double radius = c->radius > 0 ? c->radius : 1.0;
    const double aspect = (double)width / (double)height;

    /* fit the bounding sphere into the narrower of the two fields of view */
    const double half_y = 0.5 * fovy, half_x = atan(tan(half_y) * aspect);
    const double fit = half_x < half_y ? half_x : half_y;
    const double dist = radius / sin(fit) / zoom;
    const double dir[3] = {sin(yaw) * cos(pitch), sin(pitch), cos(yaw) * cos(pitch)};
    double eye[3], f[3], r[3], u[3];
    for (int i = 0; i < 3; ++i) {
        eye[i] = c->center[i] + dist * dir[i];
        f[i] = -dir[i]; /* forward */
    }
    r[0] = -f[2]; /* right = forward x up(0, 1, 0) */
    r[1] = 0;
    r[2] = f[0];
    vr_normalize3(r);
    u[0] = r[1] * f[2] - r[2] * f[1];
    u[1] = r[2] * f[0] - r[0] * f[2];
    u[2] = r[0] * f[1] - r[1] * f[0];

    double view[16]; /* column-major; rows r, u, -f */
    memset(view, 0, sizeof view);
    for (int i = 0; i < 3; ++i) {
        view[4 * i + 0] = r[i];
        view[4 * i + 1] = u[i];
        view[4 * i + 2] = -f[i];
    }
    view[12] = -(r[0] * eye[0] + r[1] * eye[1] + r[2] * eye[2]);
    view[13] = -(u[0] * eye[0] + u[1] * eye[1] + u[2] * eye[2]);
    view[14] = f[0] * eye[0] + f[1] * eye[1] + f[2] * eye[2];
    view[15] = 1;

    /* near and far hug the bounding sphere; inside it (zoomed in) the near plane stays a small
     * fraction of the radius and the rasterizer's near clipping cuts what is behind it */
    const double n = dist - 1.05 * radius > 0.01 * radius ? dist - 1.05 * radius : 0.01 * radius;
    const double fa = dist + 1.05 * radius;
    const double cot = 1.0 / tan(half_y);
    double proj[16];
    memset(proj, 0, sizeof proj);
    proj[0] = cot / aspect;
    proj[5] = cot;
    proj[10] = (fa + n) / (n - fa);
    proj[11] = -1;
    proj[14] = 2 * fa * n / (n - fa);
    for (int col = 0; col < 4; ++col)
        for (int row = 0; row < 4; ++row) {
            double acc = 0;
            for (int k = 0; k < 4; ++k)
                acc += proj[4 * k + row] * view[4 * col + k];
            s->mvp[4 * col + row] = (float)acc;
        }
    /* the view is a rotation plus a translation: its normal matrix is the rotation */
    for (int col = 0; col < 3; ++col)
        for (int row = 0; row < 3; ++row)
            s->normal_matrix[3 * col + row] = (float)view[4 * col + row];
}

void vr_camera_orbit_shader(vr_shader *s, const vr_mesh *m, float yaw)
{
    assert(s && m);
    memset(s, 0, sizeof *s);
    /* the renderer's orbit camera, square image: one camera model everywhere */
    vr_camera c;
    vr_camera_fit(&c, m);
    c.yaw = yaw * (180.0f / 3.14159265f);
    vr_camera_shader(s, &c, 1, 1);
    s->loop_iterations = 0;
}
