/* glref.c - `vreuse_glref`: the hardware reference for vreuse. Draws each scene once per triangle
 * order with OpenGL 4.5 core on a headless EGL context (device platform first, default display
 * as fallback) into a framebuffer object, with the same camera and the same trivial vertex
 * shader as `vreuse render`, and reads GL_VERTEX_SHADER_INVOCATIONS (the hardware's own vertex
 * reuse: reuse = 1 - invocations / indices) and GL_TIME_ELAPSED (median of --reps draws, each in
 * its own query). GL entry points come from eglGetProcAddress; the binary links only libEGL.
 * Options and outputs follow the other commands (pipeline/cli/cli.h); messages read "vreuse glref:".
 * Try: `vreuse_glref ../shared/scenes/stanford-bunny.obj sphere:7M --order file,forsyth`.
 */
#include <EGL/egl.h>
#include <EGL/eglext.h>
#include <GL/glcorearb.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pipeline/cli/cli.h"
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
                    "vreuse glref: no EGL display: neither EGL_EXT_platform_device nor "
                    "EGL_DEFAULT_DISPLAY initialized (%s). Hint: on the H100 unpack the libegl1 "
                    "and libglvnd0 debs into LD_LIBRARY_PATH and set "
                    "__EGL_VENDOR_LIBRARY_FILENAMES to NVIDIA's 10_nvidia.json\n",
                    vr_egl_error_name(eglGetError()));
            return 1;
        }
        snprintf(g->platform, sizeof g->platform, "EGL %d.%d default display", major, minor);
    }
    if (!eglBindAPI(EGL_OPENGL_API))
        return vr_cli_fail(1, "glref", "eglBindAPI(EGL_OPENGL_API) failed: this EGL has no desktop OpenGL");
    const char *dext = eglQueryString(g->dpy, EGL_EXTENSIONS);
    const int surfaceless = dext && vr_has_word(dext, "EGL_KHR_surfaceless_context");
    const EGLint cfg_attr[] = {EGL_RENDERABLE_TYPE, EGL_OPENGL_BIT, EGL_SURFACE_TYPE,
                               surfaceless ? 0 : EGL_PBUFFER_BIT, EGL_NONE};
    EGLConfig cfg;
    EGLint ncfg = 0;
    if (!eglChooseConfig(g->dpy, cfg_attr, &cfg, 1, &ncfg) || ncfg < 1)
        return vr_cli_fail(1, "glref", "eglChooseConfig: no config with EGL_OPENGL_BIT");
    const EGLint ctx_attr[] = {EGL_CONTEXT_MAJOR_VERSION, 4, EGL_CONTEXT_MINOR_VERSION, 5,
                               EGL_CONTEXT_OPENGL_PROFILE_MASK,
                               EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT, EGL_NONE};
    g->ctx = eglCreateContext(g->dpy, cfg, EGL_NO_CONTEXT, ctx_attr);
    if (g->ctx == EGL_NO_CONTEXT) {
        fprintf(stderr, "vreuse glref: eglCreateContext: no OpenGL 4.5 core context (%s)\n",
                vr_egl_error_name(eglGetError()));
        return 1;
    }
    g->surf = EGL_NO_SURFACE;
    if (!surfaceless) {
        const EGLint pb_attr[] = {EGL_WIDTH, 1, EGL_HEIGHT, 1, EGL_NONE};
        g->surf = eglCreatePbufferSurface(g->dpy, cfg, pb_attr);
        if (g->surf == EGL_NO_SURFACE)
            return vr_cli_fail(1, "glref", "no EGL_KHR_surfaceless_context and eglCreatePbufferSurface failed");
    }
    if (!eglMakeCurrent(g->dpy, g->surf, g->surf, g->ctx)) {
        fprintf(stderr, "vreuse glref: eglMakeCurrent failed (%s)\n",
                vr_egl_error_name(eglGetError()));
        return 1;
    }
    const char *missing = vr_gl_load();
    if (missing) {
        fprintf(stderr, "vreuse glref: eglGetProcAddress(\"%s\") returned NULL\n", missing);
        return 1;
    }
    GLint major = 0, minor = 0;
    p_glGetIntegerv(GL_MAJOR_VERSION, &major);
    p_glGetIntegerv(GL_MINOR_VERSION, &minor);
    if (major * 10 + minor < 46 && !vr_gl_has_extension("GL_ARB_pipeline_statistics_query")) {
        fprintf(stderr, "vreuse glref: OpenGL %d.%d without GL_ARB_pipeline_statistics_query: "
                        "no vertex-shader invocation counts (renderer %s)\n",
                major, minor, (const char *)p_glGetString(GL_RENDERER));
        return 1;
    }
    if (major * 10 + minor < 33 && !vr_gl_has_extension("GL_ARB_timer_query")) {
        fprintf(stderr, "vreuse glref: OpenGL %d.%d without GL_ARB_timer_query\n", major, minor);
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
        fprintf(stderr, "vreuse glref: %ux%u framebuffer incomplete (status 0x%x)\n", width,
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
        fprintf(stderr, "vreuse glref: %s shader does not compile: %s\n",
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
        fprintf(stderr, "vreuse glref: program does not link: %s\n", log);
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

static const char *vr_gl_error_check(void)
{
    static char buf[64];
    GLenum e = p_glGetError();
    if (e == GL_NO_ERROR)
        return NULL;
    snprintf(buf, sizeof buf, "GL error 0x%x", e);
    return buf;
}

/* A frame for vr_cli_write_via: RGBA8, top row first. */
typedef struct vr_glref_image {
    const uint8_t *rgba;
    uint32_t width, height;
} vr_glref_image;

static vr_status vr_glref_write_png(const char *file, void *ctx)
{
    const vr_glref_image *img = (const vr_glref_image *)ctx;
    return vr_image_write_png(file, img->rgba, img->width, img->height);
}

/* Uploads `m`, draws it with the camera of `vreuse render`, fills `row`; writes the frame as a
 * PNG (safely: vr_cli_write_via) when png is not NULL. Returns 0 or 1 (message printed). */
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
        fprintf(stderr, "vreuse glref: uploading %u vertices / %u indices: %s (out of memory?)\n",
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
        fprintf(stderr, "vreuse glref: pipeline-statistics queries: %s\n", err);
        goto fail;
    }

    /* draw time: one GL_TIME_ELAPSED query per draw, the clear outside it */
    double *ms = malloc((size_t)reps * sizeof *ms);
    if (!ms) {
        fprintf(stderr, "vreuse glref: out of host memory\n");
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
    row->ms_med = vr_cli_median(ms, reps); /* sorts ms */
    row->ms_min = ms[0];
    row->ms_max = ms[reps - 1];
    free(ms);
    if ((err = vr_gl_error_check())) {
        fprintf(stderr, "vreuse glref: timer queries: %s\n", err);
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
            vr_glref_image img = {flip, g->width, g->height};
            if (vr_cli_write_via(png, "PNG", vr_glref_write_png, &img) != VR_OK)
                bad = vr_cli_fail_last("glref");
        } else {
            fprintf(stderr, "vreuse glref: out of host memory for the image\n");
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

static const vr_cli_command g_cmd = {
    "glref", "SCENE...",
    "vreuse_glref: draws each scene with OpenGL (headless EGL) and reports the hardware's\n"
    "vertex-shader invocations (GL_VERTEX_SHADER_INVOCATIONS; reuse = 1 - invocations /\n"
    "indices) and draw time (GL_TIME_ELAPSED, median of --reps draws), with the camera and\n"
    "shader of `vreuse render`, once per scene and triangle order.\n"
    "\n"
    "SCENE is a file or a generator (sphere:7M, bunny.obj@1M, ...).",
    NULL,
    VR_CLI_SCENES};

/* One scene in one order: loaded afresh (+fetch replaces the vertex arrays), drawn, printed.
 * Returns 0 or 1 (message printed). */
static int vr_glref_scene(vr_gl *g, GLuint prog, const char *spec, int order, uint64_t seed,
                          int reps, const char *png_prefix, FILE *human, FILE *csv)
{
    const char *label = vr_cli_scene_label(spec);
    const char *order_name = vr_order_name((vr_order)order);
    vr_mesh mesh;
    if (vr_mesh_load(&mesh, spec) != VR_OK)
        return vr_cli_fail_last("glref");
    if (vr_mesh_reorder(&mesh, (vr_order)order, seed) != VR_OK) {
        vr_mesh_free(&mesh);
        return vr_cli_fail(1, "glref", "%s (%s order): %s", label, order_name, vr_last_error());
    }
    char *png = NULL;
    if (png_prefix && !(png = malloc(strlen(png_prefix) + strlen(label) + strlen(order_name) + 6))) {
        vr_mesh_free(&mesh);
        return vr_cli_fail(1, "glref", "out of memory");
    }
    if (png)
        sprintf(png, "%s%s-%s.png", png_prefix, label, order_name);
    vr_glref_row row;
    int rc = vr_glref_draw(g, prog, &mesh, reps, png, &row);
    if (rc) {
        vr_cli_fail(1, "glref", "failed on %s, order %s", spec, order_name);
    } else {
        const uint64_t tris = mesh.index_count / 3;
        const double reuse = 1.0 - (double)row.invocations / (double)mesh.index_count;
        fprintf(human, "%-22s %-8s %10llu %11u %13llu %8.3f %8.4f %10.3f %10.3f %11llu %11llu%s\n",
                label, order_name, (unsigned long long)tris, mesh.index_count,
                (unsigned long long)row.invocations, (double)row.invocations / (double)tris, reuse,
                row.ms_med, row.ms_min, (unsigned long long)row.primitives,
                (unsigned long long)row.clip_out,
                row.stats_stable ? "" : "  (invocations varied between draws: max shown)");
        if (row.primitives != tris)
            fprintf(human, "  note: GL_PRIMITIVES_SUBMITTED %llu != %llu triangles\n",
                    (unsigned long long)row.primitives, (unsigned long long)tris);
        if (csv) {
            vr_cli_csv_field(csv, label);
            fprintf(csv, ",%s,%llu,%u,%llu,%.6f,%.4f,%.4f,%u,%u\n", order_name,
                    (unsigned long long)tris, mesh.index_count,
                    (unsigned long long)row.invocations, reuse, row.ms_med, row.ms_min,
                    g->width, g->height);
        }
        if (png && !vr_progress_quiet)
            fprintf(human, "  -> %s\n", png);
    }
    free(png);
    vr_mesh_free(&mesh);
    return rc;
}

static int vr_glref_main(int argc, char **argv)
{
    vr_cli_orders orders = {{VR_ORDER_FILE, VR_ORDER_FORSYTH}, 2};
    uint64_t seed = 1;
    uint32_t size[2] = {1920, 1080};
    int reps = 20;
    const char *csv_path = NULL, *png_prefix = NULL;
    const vr_cli_opt opts[] = {
        VR_CLI_ORDER(&orders, "file,forsyth"),
        VR_CLI_SEED(&seed),
        VR_CLI_SIZE(size, "1920x1080"),
        VR_CLI_REPS(&reps, "20"),
        {"csv", 0, "FILE",
         "also write the rows as CSV to FILE ('-': standard output; '#' lines: renderer, GL "
         "version, EGL platform, date)",
         vr_cli_parse_path, &csv_path, 0, 0, 0, 0, NULL},
        {"png", 0, "PREFIX", "write each frame to PREFIX<scene>-<order>.png",
         vr_cli_parse_path, &png_prefix, 0, 0, 0, 0, NULL},
        {0}};
    vr_cli_args args;
    VR_CLI_PARSE_OR_RETURN(&g_cmd, opts, argc, argv, &args);
    setvbuf(stdout, NULL, _IOLBF, 0); /* lines in order with stderr under tee */

    /* the CSV first: a bad path fails before the GL context, never over an input */
    vr_cli_out csv;
    memset(&csv, 0, sizeof csv);
    if (csv_path && vr_cli_out_open(&csv, csv_path, "CSV", 0) != VR_OK)
        return vr_cli_fail_last("glref");
    FILE *human = csv.is_stdout ? stderr : stdout;
    vr_gl g;
    if (vr_gl_open(&g, size[0], size[1])) {
        vr_gl_close(&g);
        vr_cli_out_abort(&csv);
        return 1;
    }
    const char *renderer = (const char *)p_glGetString(GL_RENDERER);
    const char *version = (const char *)p_glGetString(GL_VERSION);
    char date[32];
    const time_t now = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    fprintf(human, "vreuse_glref: %s | %s | %s | %ux%u, %d timed draws\n", renderer, version,
            g.platform, size[0], size[1], reps);
    GLuint prog = vr_gl_program();
    if (!prog) {
        vr_gl_close(&g);
        vr_cli_out_abort(&csv);
        return 1;
    }
    if (csv.f) {
        fprintf(csv.f, "# vreuse_glref GL_RENDERER: %s\n# GL_VERSION: %s\n# EGL: %s\n# date: %s\n",
                renderer, version, g.platform, date);
        fprintf(csv.f, "scene,order,tris,indices,gl_vs_invocations,gl_reuse,gl_draw_ms_med,"
                       "gl_draw_ms_min,width,height\n");
    }
    fprintf(human, "%-22s %-8s %10s %11s %13s %8s %8s %10s %10s %11s %11s\n", "scene", "order",
            "tris", "indices", "vs_invoc", "shd/tri", "reuse", "draw_med", "draw_min", "prims",
            "clip_out");
    /* a scene that fails is reported and skipped; the exit status says something failed */
    int rc = 0;
    for (int s = 0; s < args.count; ++s)
        for (int o = 0; o < orders.count; ++o)
            rc |= vr_glref_scene(&g, prog, args.v[s], orders.v[o], seed, reps, png_prefix, human,
                                 csv.f);
    if (csv.f && vr_cli_out_close(&csv) != VR_OK)
        rc = vr_cli_fail_last("glref");
    p_glDeleteProgram(prog);
    vr_gl_close(&g);
    return rc;
}

int main(int argc, char **argv)
{
    /* a failed write to stdout (a full disk, a closed pipe) fails the program */
    return vr_cli_finish("glref", vr_glref_main(argc, argv));
}
