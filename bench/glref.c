/* glref.c - `vreuse_glref`: the hardware reference for vreuse. Draws each scene once per triangle
 * order with OpenGL 4.5 core on a headless EGL context (device platform first, default display
 * as fallback) into a framebuffer object, with the same camera and the same trivial vertex
 * shader as `vreuse render`, and reads GL_VERTEX_SHADER_INVOCATIONS (the hardware's own vertex
 * reuse: reuse = 1 - invocations / indices) and GL_TIME_ELAPSED (median of --reps draws, each in
 * its own query). GL entry points come from eglGetProcAddress; the binary links only libEGL.
 * Try: `vreuse_glref ../shared/scenes/stanford-bunny.obj sphere:7M --order file,forsyth`.
 */
#define _POSIX_C_SOURCE 200809L /* strtok_r */
#include <EGL/egl.h>
#include <EGL/eglext.h>
#include <GL/glcorearb.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "raster/raster.h"
#include "scenes/scene.h"

#ifndef GL_VERTEX_SHADER_INVOCATIONS_ARB
#define GL_VERTEX_SHADER_INVOCATIONS_ARB 0x82F0
#endif
#ifndef GL_PRIMITIVES_SUBMITTED_ARB
#define GL_PRIMITIVES_SUBMITTED_ARB 0x82EF
#endif
#ifndef GL_CLIPPING_INPUT_PRIMITIVES_ARB
#define GL_CLIPPING_INPUT_PRIMITIVES_ARB 0x82F6
#endif
#ifndef GL_CLIPPING_OUTPUT_PRIMITIVES_ARB
#define GL_CLIPPING_OUTPUT_PRIMITIVES_ARB 0x82F7
#endif
#ifndef EGL_PLATFORM_DEVICE_EXT
#define EGL_PLATFORM_DEVICE_EXT 0x313F
#endif

#define VR_GLREF_MAX_ORDERS 8
#define VR_GLREF_STAT_DRAWS 3 /* pipeline-statistics draws; they must agree */

/* ---- GL entry points (eglGetProcAddress) --------------------------------------------------- */

#define VR_GL_FUNCS(X)                                                             \
    X(PFNGLGETSTRINGPROC, glGetString)                                             \
    X(PFNGLGETSTRINGIPROC, glGetStringi)                                           \
    X(PFNGLGETINTEGERVPROC, glGetIntegerv)                                         \
    X(PFNGLGETERRORPROC, glGetError)                                               \
    X(PFNGLGENFRAMEBUFFERSPROC, glGenFramebuffers)                                 \
    X(PFNGLBINDFRAMEBUFFERPROC, glBindFramebuffer)                                 \
    X(PFNGLDELETEFRAMEBUFFERSPROC, glDeleteFramebuffers)                           \
    X(PFNGLGENRENDERBUFFERSPROC, glGenRenderbuffers)                               \
    X(PFNGLBINDRENDERBUFFERPROC, glBindRenderbuffer)                               \
    X(PFNGLDELETERENDERBUFFERSPROC, glDeleteRenderbuffers)                         \
    X(PFNGLRENDERBUFFERSTORAGEPROC, glRenderbufferStorage)                         \
    X(PFNGLFRAMEBUFFERRENDERBUFFERPROC, glFramebufferRenderbuffer)                 \
    X(PFNGLCHECKFRAMEBUFFERSTATUSPROC, glCheckFramebufferStatus)                   \
    X(PFNGLVIEWPORTPROC, glViewport)                                               \
    X(PFNGLCLEARCOLORPROC, glClearColor)                                           \
    X(PFNGLCLEARDEPTHPROC, glClearDepth)                                           \
    X(PFNGLCLEARPROC, glClear)                                                     \
    X(PFNGLENABLEPROC, glEnable)                                                   \
    X(PFNGLDISABLEPROC, glDisable)                                                 \
    X(PFNGLDEPTHFUNCPROC, glDepthFunc)                                             \
    X(PFNGLCREATESHADERPROC, glCreateShader)                                       \
    X(PFNGLSHADERSOURCEPROC, glShaderSource)                                       \
    X(PFNGLCOMPILESHADERPROC, glCompileShader)                                     \
    X(PFNGLGETSHADERIVPROC, glGetShaderiv)                                         \
    X(PFNGLGETSHADERINFOLOGPROC, glGetShaderInfoLog)                               \
    X(PFNGLDELETESHADERPROC, glDeleteShader)                                       \
    X(PFNGLCREATEPROGRAMPROC, glCreateProgram)                                     \
    X(PFNGLATTACHSHADERPROC, glAttachShader)                                       \
    X(PFNGLLINKPROGRAMPROC, glLinkProgram)                                         \
    X(PFNGLGETPROGRAMIVPROC, glGetProgramiv)                                       \
    X(PFNGLGETPROGRAMINFOLOGPROC, glGetProgramInfoLog)                             \
    X(PFNGLUSEPROGRAMPROC, glUseProgram)                                           \
    X(PFNGLDELETEPROGRAMPROC, glDeleteProgram)                                     \
    X(PFNGLGETUNIFORMLOCATIONPROC, glGetUniformLocation)                           \
    X(PFNGLUNIFORMMATRIX4FVPROC, glUniformMatrix4fv)                               \
    X(PFNGLUNIFORMMATRIX3FVPROC, glUniformMatrix3fv)                               \
    X(PFNGLUNIFORM3FVPROC, glUniform3fv)                                           \
    X(PFNGLGENVERTEXARRAYSPROC, glGenVertexArrays)                                 \
    X(PFNGLBINDVERTEXARRAYPROC, glBindVertexArray)                                 \
    X(PFNGLDELETEVERTEXARRAYSPROC, glDeleteVertexArrays)                           \
    X(PFNGLGENBUFFERSPROC, glGenBuffers)                                           \
    X(PFNGLBINDBUFFERPROC, glBindBuffer)                                           \
    X(PFNGLBUFFERDATAPROC, glBufferData)                                           \
    X(PFNGLDELETEBUFFERSPROC, glDeleteBuffers)                                     \
    X(PFNGLVERTEXATTRIBPOINTERPROC, glVertexAttribPointer)                         \
    X(PFNGLENABLEVERTEXATTRIBARRAYPROC, glEnableVertexAttribArray)                 \
    X(PFNGLDRAWELEMENTSPROC, glDrawElements)                                       \
    X(PFNGLGENQUERIESPROC, glGenQueries)                                           \
    X(PFNGLDELETEQUERIESPROC, glDeleteQueries)                                     \
    X(PFNGLBEGINQUERYPROC, glBeginQuery)                                           \
    X(PFNGLENDQUERYPROC, glEndQuery)                                               \
    X(PFNGLGETQUERYOBJECTUI64VPROC, glGetQueryObjectui64v)                         \
    X(PFNGLFINISHPROC, glFinish)                                                   \
    X(PFNGLREADPIXELSPROC, glReadPixels)                                           \
    X(PFNGLPIXELSTOREIPROC, glPixelStorei)

#define VR_GL_DECLARE(type, name) static type p_##name;
VR_GL_FUNCS(VR_GL_DECLARE)
#undef VR_GL_DECLARE

/* Resolves every entry point; returns the first missing name or NULL. */
static const char *vr_gl_load(void)
{
#define VR_GL_LOAD(type, name)                                              \
    if (!(p_##name = (type)eglGetProcAddress(#name)))                       \
        return #name;
    VR_GL_FUNCS(VR_GL_LOAD)
#undef VR_GL_LOAD
    return NULL;
}

static int vr_has_word(const char *list, const char *word)
{
    const size_t n = strlen(word);
    for (const char *p = list; p && (p = strstr(p, word)) != NULL; p += n)
        if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
            return 1;
    return 0;
}

static int vr_gl_has_extension(const char *name)
{
    GLint n = 0;
    p_glGetIntegerv(GL_NUM_EXTENSIONS, &n);
    for (GLint i = 0; i < n; ++i) {
        const char *e = (const char *)p_glGetStringi(GL_EXTENSIONS, (GLuint)i);
        if (e && !strcmp(e, name))
            return 1;
    }
    return 0;
}

static const char *vr_egl_error_name(EGLint e)
{
    switch (e) {
    case EGL_SUCCESS: return "EGL_SUCCESS";
    case EGL_NOT_INITIALIZED: return "EGL_NOT_INITIALIZED";
    case EGL_BAD_ACCESS: return "EGL_BAD_ACCESS";
    case EGL_BAD_ALLOC: return "EGL_BAD_ALLOC";
    case EGL_BAD_ATTRIBUTE: return "EGL_BAD_ATTRIBUTE";
    case EGL_BAD_CONFIG: return "EGL_BAD_CONFIG";
    case EGL_BAD_CONTEXT: return "EGL_BAD_CONTEXT";
    case EGL_BAD_DISPLAY: return "EGL_BAD_DISPLAY";
    case EGL_BAD_MATCH: return "EGL_BAD_MATCH";
    case EGL_BAD_PARAMETER: return "EGL_BAD_PARAMETER";
    case EGL_BAD_SURFACE: return "EGL_BAD_SURFACE";
    default: return "EGL error";
    }
}

/* ---- headless context ------------------------------------------------------------------- */

typedef struct vr_gl {
    EGLDisplay dpy;
    EGLContext ctx;
    EGLSurface surf;      /* 1x1 pbuffer, or EGL_NO_SURFACE when surfaceless */
    char platform[96];    /* how the display was found */
    GLuint fbo, rb[2];    /* colour RGBA8 + depth 24 */
    uint32_t width, height;
} vr_gl;

static int vr_gl_fail(const char *what)
{
    fprintf(stderr, "vreuse_glref: %s\n", what);
    return 1;
}

/* EGL_EXT_platform_device: the first device whose display initializes (on the NVIDIA machine
 * this is the GPU without any X server or DRM node); NULL display when none does. */
static EGLDisplay vr_egl_device_display(char *platform, size_t platform_size)
{
    const char *cext = eglQueryString(EGL_NO_DISPLAY, EGL_EXTENSIONS);
    if (!cext || !vr_has_word(cext, "EGL_EXT_platform_device"))
        return EGL_NO_DISPLAY;
    PFNEGLQUERYDEVICESEXTPROC query_devices =
        (PFNEGLQUERYDEVICESEXTPROC)eglGetProcAddress("eglQueryDevicesEXT");
    PFNEGLGETPLATFORMDISPLAYEXTPROC get_display =
        (PFNEGLGETPLATFORMDISPLAYEXTPROC)eglGetProcAddress("eglGetPlatformDisplayEXT");
    if (!query_devices || !get_display)
        return EGL_NO_DISPLAY;
    EGLDeviceEXT devices[16];
    EGLint n = 0;
    if (!query_devices(16, devices, &n))
        return EGL_NO_DISPLAY;
    for (EGLint i = 0; i < n; ++i) {
        EGLDisplay d = get_display(EGL_PLATFORM_DEVICE_EXT, devices[i], NULL);
        EGLint major, minor;
        if (d != EGL_NO_DISPLAY && eglInitialize(d, &major, &minor)) {
            snprintf(platform, platform_size, "EGL %d.%d device platform, device %d of %d",
                     major, minor, i, n);
            return d;
        }
    }
    return EGL_NO_DISPLAY;
}

static int vr_gl_open(vr_gl *g, uint32_t width, uint32_t height)
{
    memset(g, 0, sizeof *g);
    g->dpy = vr_egl_device_display(g->platform, sizeof g->platform);
    if (g->dpy == EGL_NO_DISPLAY) {
        EGLint major, minor;
        g->dpy = eglGetDisplay(EGL_DEFAULT_DISPLAY);
        if (g->dpy == EGL_NO_DISPLAY || !eglInitialize(g->dpy, &major, &minor)) {
            fprintf(stderr,
                    "vreuse_glref: no EGL display: neither EGL_EXT_platform_device nor "
                    "EGL_DEFAULT_DISPLAY initialized (%s). Hint: on the H100 unpack the libegl1 "
                    "and libglvnd0 debs into LD_LIBRARY_PATH and set "
                    "__EGL_VENDOR_LIBRARY_FILENAMES to NVIDIA's 10_nvidia.json\n",
                    vr_egl_error_name(eglGetError()));
            return 1;
        }
        snprintf(g->platform, sizeof g->platform, "EGL %d.%d default display", major, minor);
    }
    if (!eglBindAPI(EGL_OPENGL_API))
        return vr_gl_fail("eglBindAPI(EGL_OPENGL_API) failed: this EGL has no desktop OpenGL");
    const char *dext = eglQueryString(g->dpy, EGL_EXTENSIONS);
    const int surfaceless = dext && vr_has_word(dext, "EGL_KHR_surfaceless_context");
    const EGLint cfg_attr[] = {EGL_RENDERABLE_TYPE, EGL_OPENGL_BIT, EGL_SURFACE_TYPE,
                               surfaceless ? 0 : EGL_PBUFFER_BIT, EGL_NONE};
    EGLConfig cfg;
    EGLint ncfg = 0;
    if (!eglChooseConfig(g->dpy, cfg_attr, &cfg, 1, &ncfg) || ncfg < 1)
        return vr_gl_fail("eglChooseConfig: no config with EGL_OPENGL_BIT");
    const EGLint ctx_attr[] = {EGL_CONTEXT_MAJOR_VERSION, 4, EGL_CONTEXT_MINOR_VERSION, 5,
                               EGL_CONTEXT_OPENGL_PROFILE_MASK,
                               EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT, EGL_NONE};
    g->ctx = eglCreateContext(g->dpy, cfg, EGL_NO_CONTEXT, ctx_attr);
    if (g->ctx == EGL_NO_CONTEXT) {
        fprintf(stderr, "vreuse_glref: eglCreateContext: no OpenGL 4.5 core context (%s)\n",
                vr_egl_error_name(eglGetError()));
        return 1;
    }
    g->surf = EGL_NO_SURFACE;
    if (!surfaceless) {
        const EGLint pb_attr[] = {EGL_WIDTH, 1, EGL_HEIGHT, 1, EGL_NONE};
        g->surf = eglCreatePbufferSurface(g->dpy, cfg, pb_attr);
        if (g->surf == EGL_NO_SURFACE)
            return vr_gl_fail("no EGL_KHR_surfaceless_context and eglCreatePbufferSurface failed");
    }
    if (!eglMakeCurrent(g->dpy, g->surf, g->surf, g->ctx)) {
        fprintf(stderr, "vreuse_glref: eglMakeCurrent failed (%s)\n",
                vr_egl_error_name(eglGetError()));
        return 1;
    }
    const char *missing = vr_gl_load();
    if (missing) {
        fprintf(stderr, "vreuse_glref: eglGetProcAddress(\"%s\") returned NULL\n", missing);
        return 1;
    }
    GLint major = 0, minor = 0;
    p_glGetIntegerv(GL_MAJOR_VERSION, &major);
    p_glGetIntegerv(GL_MINOR_VERSION, &minor);
    if (major * 10 + minor < 46 && !vr_gl_has_extension("GL_ARB_pipeline_statistics_query")) {
        fprintf(stderr, "vreuse_glref: OpenGL %d.%d without GL_ARB_pipeline_statistics_query: "
                        "no vertex-shader invocation counts (renderer %s)\n",
                major, minor, (const char *)p_glGetString(GL_RENDERER));
        return 1;
    }
    if (major * 10 + minor < 33 && !vr_gl_has_extension("GL_ARB_timer_query")) {
        fprintf(stderr, "vreuse_glref: OpenGL %d.%d without GL_ARB_timer_query\n", major, minor);
        return 1;
    }

    /* the frame: an FBO of the requested size, colour + depth */
    g->width = width;
    g->height = height;
    p_glGenFramebuffers(1, &g->fbo);
    p_glGenRenderbuffers(2, g->rb);
    p_glBindFramebuffer(GL_FRAMEBUFFER, g->fbo);
    p_glBindRenderbuffer(GL_RENDERBUFFER, g->rb[0]);
    p_glRenderbufferStorage(GL_RENDERBUFFER, GL_RGBA8, (GLsizei)width, (GLsizei)height);
    p_glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_RENDERBUFFER, g->rb[0]);
    p_glBindRenderbuffer(GL_RENDERBUFFER, g->rb[1]);
    p_glRenderbufferStorage(GL_RENDERBUFFER, GL_DEPTH_COMPONENT24, (GLsizei)width,
                            (GLsizei)height);
    p_glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_DEPTH_ATTACHMENT, GL_RENDERBUFFER, g->rb[1]);
    const GLenum fb = p_glCheckFramebufferStatus(GL_FRAMEBUFFER);
    if (fb != GL_FRAMEBUFFER_COMPLETE) {
        fprintf(stderr, "vreuse_glref: %ux%u framebuffer incomplete (status 0x%x)\n", width,
                height, fb);
        return 1;
    }
    p_glViewport(0, 0, (GLsizei)width, (GLsizei)height);
    p_glEnable(GL_DEPTH_TEST);
    p_glDepthFunc(GL_LESS);
    p_glDisable(GL_CULL_FACE); /* vreuse render draws both sides by default */
    return 0;
}

static void vr_gl_close(vr_gl *g)
{
    if (g->dpy == EGL_NO_DISPLAY || !g->dpy)
        return;
    if (g->ctx && p_glDeleteFramebuffers) {
        p_glDeleteFramebuffers(1, &g->fbo);
        p_glDeleteRenderbuffers(2, g->rb);
    }
    eglMakeCurrent(g->dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
    if (g->surf != EGL_NO_SURFACE)
        eglDestroySurface(g->dpy, g->surf);
    if (g->ctx != EGL_NO_CONTEXT)
        eglDestroyContext(g->dpy, g->ctx);
    eglTerminate(g->dpy);
}

/* ---- program ---------------------------------------------------------------------------- */

/* The simple shader of reuse/shaders.h: clip = MVP * (p, 1), n' = N * n; the fragment shader
 * lights the interpolated normal like the Lambert resolve (two-sided). */
static const char *k_vs =
    "#version 330 core\n"
    "layout(location = 0) in vec3 position;\n"
    "layout(location = 1) in vec3 normal;\n"
    "uniform mat4 mvp;\n"
    "uniform mat3 normal_matrix;\n"
    "out vec3 n_view;\n"
    "void main() {\n"
    "    gl_Position = mvp * vec4(position, 1.0);\n"
    "    n_view = normal_matrix * normal;\n"
    "}\n";
static const char *k_fs =
    "#version 330 core\n"
    "in vec3 n_view;\n"
    "uniform vec3 light;\n"
    "out vec4 colour;\n"
    "void main() {\n"
    "    float l = abs(dot(normalize(n_view), light));\n"
    "    colour = vec4(vec3(0.12 + 0.88 * l), 1.0);\n"
    "}\n";

static GLuint vr_gl_shader(GLenum type, const char *src)
{
    GLuint s = p_glCreateShader(type);
    p_glShaderSource(s, 1, &src, NULL);
    p_glCompileShader(s);
    GLint ok = 0;
    p_glGetShaderiv(s, GL_COMPILE_STATUS, &ok);
    if (!ok) {
        char log[2048];
        p_glGetShaderInfoLog(s, sizeof log, NULL, log);
        fprintf(stderr, "vreuse_glref: %s shader does not compile: %s\n",
                type == GL_VERTEX_SHADER ? "vertex" : "fragment", log);
        p_glDeleteShader(s);
        return 0;
    }
    return s;
}

static GLuint vr_gl_program(void)
{
    GLuint vs = vr_gl_shader(GL_VERTEX_SHADER, k_vs), fs = vr_gl_shader(GL_FRAGMENT_SHADER, k_fs);
    if (!vs || !fs)
        return 0;
    GLuint p = p_glCreateProgram();
    p_glAttachShader(p, vs);
    p_glAttachShader(p, fs);
    p_glLinkProgram(p);
    p_glDeleteShader(vs);
    p_glDeleteShader(fs);
    GLint ok = 0;
    p_glGetProgramiv(p, GL_LINK_STATUS, &ok);
    if (!ok) {
        char log[2048];
        p_glGetProgramInfoLog(p, sizeof log, NULL, log);
        fprintf(stderr, "vreuse_glref: program does not link: %s\n", log);
        p_glDeleteProgram(p);
        return 0;
    }
    return p;
}

/* ---- one scene x order ------------------------------------------------------------------ */

typedef struct vr_glref_row {
    uint64_t invocations, primitives, clip_in, clip_out;
    int stats_stable;  /* the statistics draws agreed */
    double ms_med, ms_min, ms_max;
} vr_glref_row;

static int vr_cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static const char *vr_gl_error_check(void)
{
    static char buf[64];
    GLenum e = p_glGetError();
    if (e == GL_NO_ERROR)
        return NULL;
    snprintf(buf, sizeof buf, "GL error 0x%x", e);
    return buf;
}

/* Uploads `m`, draws it with the camera of `vreuse render`, fills `row`; writes the frame as a
 * PNG when png is not NULL. Returns 0 or 1 (message printed). */
static int vr_glref_draw(vr_gl *g, GLuint prog, const vr_mesh *m, int reps, const char *png,
                         vr_glref_row *row)
{
    memset(row, 0, sizeof *row);
    vr_camera cam;
    vr_camera_fit(&cam, m);
    vr_shader sh;
    memset(&sh, 0, sizeof sh);
    vr_camera_shader(&sh, &cam, g->width, g->height);
    const vr_resolve_params look = vr_resolve_params_default();

    GLuint vao, buf[3], q[5]; /* 4 statistics targets + the timer: a query keeps its target */
    p_glGenVertexArrays(1, &vao);
    p_glBindVertexArray(vao);
    p_glGenBuffers(3, buf);
    p_glBindBuffer(GL_ARRAY_BUFFER, buf[0]);
    p_glBufferData(GL_ARRAY_BUFFER, (GLsizeiptr)m->vertex_count * 3 * sizeof(float), m->positions,
                   GL_STATIC_DRAW);
    p_glVertexAttribPointer(0, 3, GL_FLOAT, GL_FALSE, 0, NULL);
    p_glEnableVertexAttribArray(0);
    p_glBindBuffer(GL_ARRAY_BUFFER, buf[1]);
    p_glBufferData(GL_ARRAY_BUFFER, (GLsizeiptr)m->vertex_count * 3 * sizeof(float), m->normals,
                   GL_STATIC_DRAW);
    p_glVertexAttribPointer(1, 3, GL_FLOAT, GL_FALSE, 0, NULL);
    p_glEnableVertexAttribArray(1);
    p_glBindBuffer(GL_ELEMENT_ARRAY_BUFFER, buf[2]);
    p_glBufferData(GL_ELEMENT_ARRAY_BUFFER, (GLsizeiptr)m->index_count * sizeof(uint32_t),
                   m->indices, GL_STATIC_DRAW);
    p_glUseProgram(prog);
    p_glUniformMatrix4fv(p_glGetUniformLocation(prog, "mvp"), 1, GL_FALSE, sh.mvp);
    p_glUniformMatrix3fv(p_glGetUniformLocation(prog, "normal_matrix"), 1, GL_FALSE,
                         sh.normal_matrix);
    p_glUniform3fv(p_glGetUniformLocation(prog, "light"), 1, look.light);
    const uint32_t bg = look.background;
    p_glClearColor((bg & 255) / 255.0f, (bg >> 8 & 255) / 255.0f, (bg >> 16 & 255) / 255.0f, 1.0f);
    p_glClearDepth(1.0);
    p_glGenQueries(5, q);
    const char *err = vr_gl_error_check();
    if (err) {
        fprintf(stderr, "vreuse_glref: uploading %u vertices / %u indices: %s (out of memory?)\n",
                m->vertex_count, m->index_count, err);
        goto fail;
    }
    const GLsizei n = (GLsizei)m->index_count;

    /* warm-up: first-use costs (shader compile on bind, residency) stay out of the numbers */
    for (int i = 0; i < 3; ++i) {
        p_glClear(GL_COLOR_BUFFER_BIT | GL_DEPTH_BUFFER_BIT);
        p_glDrawElements(GL_TRIANGLES, n, GL_UNSIGNED_INT, NULL);
    }
    p_glFinish();

    /* pipeline statistics; queries of different targets may be active together */
    row->stats_stable = 1;
    for (int i = 0; i < VR_GLREF_STAT_DRAWS; ++i) {
        p_glClear(GL_COLOR_BUFFER_BIT | GL_DEPTH_BUFFER_BIT);
        p_glBeginQuery(GL_VERTEX_SHADER_INVOCATIONS_ARB, q[0]);
        p_glBeginQuery(GL_PRIMITIVES_SUBMITTED_ARB, q[1]);
        p_glBeginQuery(GL_CLIPPING_INPUT_PRIMITIVES_ARB, q[2]);
        p_glBeginQuery(GL_CLIPPING_OUTPUT_PRIMITIVES_ARB, q[3]);
        p_glDrawElements(GL_TRIANGLES, n, GL_UNSIGNED_INT, NULL);
        p_glEndQuery(GL_CLIPPING_OUTPUT_PRIMITIVES_ARB);
        p_glEndQuery(GL_CLIPPING_INPUT_PRIMITIVES_ARB);
        p_glEndQuery(GL_PRIMITIVES_SUBMITTED_ARB);
        p_glEndQuery(GL_VERTEX_SHADER_INVOCATIONS_ARB);
        GLuint64 v[4];
        for (int k = 0; k < 4; ++k)
            p_glGetQueryObjectui64v(q[k], GL_QUERY_RESULT, &v[k]);
        if (i == 0) {
            row->invocations = v[0];
            row->primitives = v[1];
            row->clip_in = v[2];
            row->clip_out = v[3];
        } else if (v[0] != row->invocations || v[1] != row->primitives) {
            row->stats_stable = 0;
            if (v[0] > row->invocations) /* report the worst draw */
                row->invocations = v[0];
        }
    }
    if ((err = vr_gl_error_check())) {
        fprintf(stderr, "vreuse_glref: pipeline-statistics queries: %s\n", err);
        goto fail;
    }

    /* draw time: one GL_TIME_ELAPSED query per draw, the clear outside it */
    double *ms = malloc((size_t)reps * sizeof *ms);
    if (!ms) {
        fprintf(stderr, "vreuse_glref: out of host memory\n");
        goto fail;
    }
    for (int i = 0; i < reps; ++i) {
        p_glClear(GL_COLOR_BUFFER_BIT | GL_DEPTH_BUFFER_BIT);
        p_glBeginQuery(GL_TIME_ELAPSED, q[4]);
        p_glDrawElements(GL_TRIANGLES, n, GL_UNSIGNED_INT, NULL);
        p_glEndQuery(GL_TIME_ELAPSED);
        GLuint64 ns = 0;
        p_glGetQueryObjectui64v(q[4], GL_QUERY_RESULT, &ns);
        ms[i] = ns * 1e-6;
    }
    qsort(ms, (size_t)reps, sizeof *ms, vr_cmp_double);
    row->ms_med = reps % 2 ? ms[reps / 2] : 0.5 * (ms[reps / 2 - 1] + ms[reps / 2]);
    row->ms_min = ms[0];
    row->ms_max = ms[reps - 1];
    free(ms);
    if ((err = vr_gl_error_check())) {
        fprintf(stderr, "vreuse_glref: timer queries: %s\n", err);
        goto fail;
    }

    if (png) {
        const size_t bytes = (size_t)g->width * g->height * 4;
        uint8_t *rgba = malloc(bytes), *flip = malloc(bytes);
        int bad = !rgba || !flip;
        if (!bad) {
            p_glPixelStorei(GL_PACK_ALIGNMENT, 1);
            p_glReadPixels(0, 0, (GLsizei)g->width, (GLsizei)g->height, GL_RGBA,
                           GL_UNSIGNED_BYTE, rgba);
            const size_t row_bytes = (size_t)g->width * 4; /* GL's row 0 is the bottom */
            for (uint32_t y = 0; y < g->height; ++y)
                memcpy(flip + y * row_bytes, rgba + (size_t)(g->height - 1 - y) * row_bytes,
                       row_bytes);
            if (vr_image_write_png(png, flip, g->width, g->height) != VR_OK) {
                fprintf(stderr, "vreuse_glref: %s\n", vr_last_error());
                bad = 1;
            }
        } else {
            fprintf(stderr, "vreuse_glref: out of host memory for the image\n");
        }
        free(rgba);
        free(flip);
        if (bad)
            goto fail;
    }
    p_glDeleteQueries(5, q);
    p_glDeleteBuffers(3, buf);
    p_glDeleteVertexArrays(1, &vao);
    return 0;
fail:
    p_glDeleteQueries(5, q);
    p_glDeleteBuffers(3, buf);
    p_glDeleteVertexArrays(1, &vao);
    return 1;
}

/* ---- command line ----------------------------------------------------------------------- */

static void usage(FILE *f)
{
    fprintf(f,
            "usage: vreuse_glref SCENE... [options]\n"
            "\n"
            "Draws each scene with OpenGL (headless EGL) and reports the hardware's vertex-shader\n"
            "invocations (GL_VERTEX_SHADER_INVOCATIONS; reuse = 1 - invocations / indices) and\n"
            "draw time (GL_TIME_ELAPSED), with the camera and shader of `vreuse render`.\n"
            "\n"
            "  SCENE          a file or a generator (sphere:7M, bunny.obj@1M, ...)\n"
            "  --order O,...  triangle orders: file, forsyth, tipsify, random (default file,forsyth)\n"
            "  --size WxH     framebuffer size (default 1920x1080)\n"
            "  --reps N       timed draws per scene and order, median reported (default 20)\n"
            "  --csv F        write the table as CSV to F ('#' lines: renderer, version, date)\n"
            "  --png PREFIX   write each frame to PREFIX<scene>-<order>.png\n"
            "  --quiet        no progress output\n");
}

/* "path/to/stanford-bunny.obj" -> "stanford-bunny.obj": the scene column of the CSV */
static const char *scene_name(const char *spec)
{
    const char *s = strrchr(spec, '/');
    return s ? s + 1 : spec;
}

int main(int argc, char **argv)
{
    const char *csv_path = NULL, *png_prefix = NULL, *order_arg = "file,forsyth";
    uint32_t width = 1920, height = 1080;
    int reps = 20;
    const char **scenes = calloc((size_t)argc, sizeof *scenes);
    int scene_count = 0;
    if (!scenes)
        return 1;
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        const int takes = !strcmp(a, "--order") || !strcmp(a, "--size") ||
                          !strcmp(a, "--reps") || !strcmp(a, "--csv") || !strcmp(a, "--png");
        if (takes && !v) {
            fprintf(stderr, "vreuse_glref: %s needs a value\n", a);
            return 2;
        }
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(a, "--order")) {
            order_arg = v;
        } else if (!strcmp(a, "--size")) {
            if (vr_raster_parse_size(v, &width, &height)) {
                fprintf(stderr, "vreuse_glref: --size '%s': want WxH, 1..%u each\n", v,
                        VR_RASTER_MAX_SIZE);
                return 2;
            }
        } else if (!strcmp(a, "--reps")) {
            char *end;
            errno = 0;
            long r = strtol(v, &end, 10);
            if (errno || *end || end == v || r < 1 || r > 100000) {
                fprintf(stderr, "vreuse_glref: --reps '%s': want 1..100000\n", v);
                return 2;
            }
            reps = (int)r;
        } else if (!strcmp(a, "--csv")) {
            csv_path = v;
        } else if (!strcmp(a, "--png")) {
            png_prefix = v;
        } else if (!strcmp(a, "--quiet")) {
            vr_progress_quiet = 1;
        } else if (a[0] == '-') {
            fprintf(stderr, "vreuse_glref: unknown option '%s'\n\n", a);
            usage(stderr);
            return 2;
        } else {
            scenes[scene_count++] = a;
        }
        if (takes)
            ++i;
    }
    setvbuf(stdout, NULL, _IOLBF, 0); /* lines in order with stderr under tee */
    if (scene_count == 0) {
        usage(stderr);
        return 2;
    }
    vr_order orders[VR_GLREF_MAX_ORDERS];
    int order_count = 0;
    {
        char buf[256];
        snprintf(buf, sizeof buf, "%s", order_arg);
        for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
            const int o = vr_order_parse(t);
            if (o < 0 || order_count == VR_GLREF_MAX_ORDERS) {
                fprintf(stderr, "vreuse_glref: --order: '%s' is not file, forsyth, tipsify or "
                                "random (at most %d)\n", t, VR_GLREF_MAX_ORDERS);
                return 2;
            }
            orders[order_count++] = (vr_order)o;
        }
        if (order_count == 0) {
            fprintf(stderr, "vreuse_glref: --order needs at least one name\n");
            return 2;
        }
    }

    vr_gl g;
    if (vr_gl_open(&g, width, height)) {
        vr_gl_close(&g);
        return 1;
    }
    const char *renderer = (const char *)p_glGetString(GL_RENDERER);
    const char *version = (const char *)p_glGetString(GL_VERSION);
    char date[32];
    const time_t now = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    printf("vreuse_glref: %s | %s | %s | %ux%u, %d timed draws\n", renderer, version, g.platform,
           width, height, reps);
    GLuint prog = vr_gl_program();
    if (!prog) {
        vr_gl_close(&g);
        return 1;
    }
    FILE *csv = NULL;
    if (csv_path) {
        if (!(csv = fopen(csv_path, "w"))) {
            fprintf(stderr, "vreuse_glref: cannot write %s: %s\n", csv_path, strerror(errno));
            vr_gl_close(&g);
            return 1;
        }
        fprintf(csv, "# vreuse_glref GL_RENDERER: %s\n# GL_VERSION: %s\n# EGL: %s\n# date: %s\n",
                renderer, version, g.platform, date);
        fprintf(csv, "scene,order,tris,indices,gl_vs_invocations,gl_reuse,gl_draw_ms_med,"
                     "gl_draw_ms_min,width,height\n");
    }
    printf("%-22s %-8s %10s %11s %13s %8s %8s %10s %10s %11s %11s\n", "scene", "order", "tris",
           "indices", "vs_invoc", "shd/tri", "reuse", "draw_med", "draw_min", "prims", "clip_out");
    /* a scene that fails is reported and skipped; the exit status says something failed */
    int rc = 0;
    for (int s = 0; s < scene_count; ++s) {
        vr_mesh mesh;
        if (vr_mesh_load(&mesh, scenes[s]) != VR_OK) {
            fprintf(stderr, "vreuse_glref: %s\n", vr_last_error());
            rc = 1;
            continue;
        }
        /* reorders are in place: keep the file order to come back to it */
        uint32_t *file_order = malloc((size_t)mesh.index_count * sizeof *file_order);
        if (!file_order) {
            fprintf(stderr, "vreuse_glref: out of host memory for %u indices\n", mesh.index_count);
            vr_mesh_free(&mesh);
            rc = 1;
            continue;
        }
        memcpy(file_order, mesh.indices, (size_t)mesh.index_count * sizeof *file_order);
        for (int o = 0; o < order_count; ++o) {
            memcpy(mesh.indices, file_order, (size_t)mesh.index_count * sizeof *file_order);
            /* seed 1 as in `vreuse render`, so random orders match too */
            if (orders[o] != VR_ORDER_FILE && vr_mesh_reorder(&mesh, orders[o], 1) != VR_OK) {
                fprintf(stderr, "vreuse_glref: %s\n", vr_last_error());
                rc = 1;
                break;
            }
            char png[512];
            if (png_prefix)
                snprintf(png, sizeof png, "%s%s-%s.png", png_prefix, scene_name(scenes[s]),
                         vr_order_name(orders[o]));
            vr_glref_row row;
            if (vr_glref_draw(&g, prog, &mesh, reps, png_prefix ? png : NULL, &row)) {
                fprintf(stderr, "vreuse_glref: failed on %s, order %s\n", scenes[s],
                        vr_order_name(orders[o]));
                rc = 1;
                break;
            }
            const uint64_t tris = mesh.index_count / 3;
            const double reuse = 1.0 - (double)row.invocations / (double)mesh.index_count;
            printf("%-22s %-8s %10llu %11u %13llu %8.3f %8.4f %10.3f %10.3f %11llu %11llu%s\n",
                   scene_name(scenes[s]), vr_order_name(orders[o]), (unsigned long long)tris,
                   mesh.index_count, (unsigned long long)row.invocations,
                   (double)row.invocations / (double)tris, reuse, row.ms_med, row.ms_min,
                   (unsigned long long)row.primitives, (unsigned long long)row.clip_out,
                   row.stats_stable ? "" : "  (invocations varied between draws: max shown)");
            if (row.primitives != tris)
                printf("  note: GL_PRIMITIVES_SUBMITTED %llu != %llu triangles\n",
                       (unsigned long long)row.primitives, (unsigned long long)tris);
            if (csv)
                fprintf(csv, "%s,%s,%llu,%u,%llu,%.6f,%.4f,%.4f,%u,%u\n", scene_name(scenes[s]),
                        vr_order_name(orders[o]), (unsigned long long)tris, mesh.index_count,
                        (unsigned long long)row.invocations, reuse, row.ms_med, row.ms_min, width,
                        height);
            if (png_prefix && !vr_progress_quiet)
                printf("  -> %s\n", png);
        }
        free(file_order);
        vr_mesh_free(&mesh);
    }
    if (csv && fclose(csv) != 0 && rc == 0) {
        fprintf(stderr, "vreuse_glref: writing %s: %s\n", csv_path, strerror(errno));
        rc = 1;
    }
    p_glDeleteProgram(prog);
    vr_gl_close(&g);
    free(scenes);
    return rc;
}
