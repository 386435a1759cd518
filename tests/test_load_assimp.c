/* test_load_assimp.c - files through assimp cannot hurt the user (scenes/load_assimp.c,
 * scenes/precheck.c, scenes/isolate.c). Every test writes its own malformed files into a temp
 * folder and loads them in a child process limited to 1 GiB of address space: a crash, a hang or
 * a runaway allocation fails the test instead of the runner. Each class must be refused (or, with
 * accept-repairs, loaded with the repair counted) with the message checked, within 2 s, leaving
 * no descriptor open and no child process behind. assimp-crash: what no pre-check can foresee
 * (a crash inside assimp, an allocation past the import's bound); assimp-isolate: the child
 * process of isolate.c with made-up children that crash, hang, allocate, lie or succeed.
 * Run: `vreuse_tests scenes/assimp-`.
 */
#define _POSIX_C_SOURCE 200809L /* mkdtemp, fork, setrlimit, getrusage */
#include "tests/test.h"

#include "scenes/scene.h"
#include "scenes/scene_internal.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#define CHILD_AS_BYTES ((rlim_t)1 << 30) /* address space of the loading child */
#define MAX_LOAD_MS 2000.0 /* CPU ms of one load in its child (load_result.ms) */

/* AddressSanitizer: the import's child has no memory limit and prints its own reports */
#if defined(__SANITIZE_ADDRESS__)
#define TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TEST_ASAN 1
#endif
#endif
#ifndef TEST_ASAN
#define TEST_ASAN 0
#endif

/* ---- text building ------------------------------------------------------------------------ */

typedef struct sbuf {
    char *s;
    size_t len, cap;
} sbuf;

static void sb_printf(sbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (b->len + (size_t)n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + (size_t)n + 1)
            cap *= 2;
        char *s = realloc(b->s, cap);
        if (!s)
            abort();
        b->s = s, b->cap = cap;
    }
    va_start(ap, fmt);
    vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

static void sb_bytes(sbuf *b, const void *data, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *s = realloc(b->s, cap);
        if (!s)
            abort();
        b->s = s, b->cap = cap;
    }
    memcpy(b->s + b->len, data, n);
    b->len += n;
    b->s[b->len] = 0;
}

static void base64(sbuf *b, const unsigned char *d, size_t n)
{
    static const char *a = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)d[i] << 16 | (i + 1 < n ? (uint32_t)d[i + 1] << 8 : 0) |
                     (i + 2 < n ? d[i + 2] : 0);
        sb_printf(b, "%c%c%c%c", a[v >> 18 & 63], a[v >> 12 & 63], i + 1 < n ? a[v >> 6 & 63] : '=',
                  i + 2 < n ? a[v & 63] : '=');
    }
}

/* ---- files --------------------------------------------------------------------------------- */

static char g_dir[64];

static const char *tmp_path(const char *name)
{
    static char path[2][256];
    static int k;
    k ^= 1;
    snprintf(path[k], sizeof path[k], "%s/%s", g_dir, name);
    return path[k];
}

static const char *write_file(const char *name, const void *data, size_t n)
{
    const char *path = tmp_path(name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, n, f) != n) {
        if (f)
            fclose(f);
        return NULL;
    }
    fclose(f);
    return path;
}

static int make_dir(void)
{
    snprintf(g_dir, sizeof g_dir, "/tmp/vr_test_assimp_XXXXXX");
    return mkdtemp(g_dir) != NULL;
}

static void remove_dir(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", g_dir);
}

/* One glTF 2.0 triangle mesh: `positions` (xyz floats) and optional 32-bit `indices`, embedded
 * as a data: URI; `nodes` is the JSON of the node array, `roots` of the scene's node list.
 * `mode` < 0 leaves the primitive's mode out (triangles). */
static void gltf_doc(sbuf *b, const char *nodes, const char *roots, const float *positions,
                     uint32_t vertex_count, const uint32_t *indices, uint32_t index_count, int mode)
{
    sbuf data = {0};
    sb_bytes(&data, positions, vertex_count * 12u);
    if (indices)
        sb_bytes(&data, indices, index_count * 4u);
    sb_printf(b, "{\"asset\":{\"version\":\"2.0\"},\"scene\":0,\"scenes\":[{\"nodes\":%s}],"
                 "\"nodes\":%s,\"meshes\":[{\"name\":\"m\",\"primitives\":[{\"attributes\":"
                 "{\"POSITION\":0}",
              roots, nodes);
    if (indices)
        sb_printf(b, ",\"indices\":1");
    if (mode >= 0)
        sb_printf(b, ",\"mode\":%d", mode);
    sb_printf(b, "}]}],\"accessors\":[{\"bufferView\":0,\"componentType\":5126,\"count\":%u,"
                 "\"type\":\"VEC3\",\"min\":[0,0,0],\"max\":[1,1,0]}",
              vertex_count);
    if (indices)
        sb_printf(b, ",{\"bufferView\":1,\"componentType\":5125,\"count\":%u,\"type\":\"SCALAR\"}",
                  index_count);
    sb_printf(b, "],\"bufferViews\":[{\"buffer\":0,\"byteOffset\":0,\"byteLength\":%u}",
              vertex_count * 12u);
    if (indices)
        sb_printf(b, ",{\"buffer\":0,\"byteOffset\":%u,\"byteLength\":%u}", vertex_count * 12u,
                  index_count * 4u);
    sb_printf(b, "],\"buffers\":[{\"byteLength\":%zu,\"uri\":\"data:application/octet-stream;base64,",
              data.len);
    base64(b, (const unsigned char *)data.s, data.len);
    sb_printf(b, "\"}]}");
    free(data.s);
}

static const float g_quad[] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 1, 1, 0};

/* The one-triangle glTF with its mesh on `nodes`/`roots`. */
static const char *write_gltf(const char *name, const char *nodes, const char *roots)
{
    const uint32_t tri[3] = {0, 1, 2};
    sbuf b = {0};
    gltf_doc(&b, nodes, roots, g_quad, 3, tri, 3, -1);
    const char *path = write_file(name, b.s, b.len);
    free(b.s);
    return path;
}

/* A GLB around `json` (and a BIN chunk when bin_len > 0); the lengths are as given. */
static const char *write_glb(const char *name, const char *json, uint32_t json_claim,
                             const void *bin, uint32_t bin_len, uint32_t total_claim)
{
    sbuf b = {0};
    uint32_t json_len = (uint32_t)strlen(json), pad = (4 - json_len % 4) % 4;
    uint32_t total = 12 + 8 + json_len + pad + (bin_len ? 8 + bin_len : 0);
    uint32_t head[5] = {0x46546C67u, 2, total_claim ? total_claim : total,
                        json_claim ? json_claim : json_len + pad, 0x4E4F534Au};
    sb_bytes(&b, head, sizeof head);
    sb_bytes(&b, json, json_len);
    sb_bytes(&b, "    ", pad);
    if (bin_len) {
        uint32_t bh[2] = {bin_len, 0x004E4942u};
        sb_bytes(&b, bh, sizeof bh);
        sb_bytes(&b, bin, bin_len);
    }
    const char *path = write_file(name, b.s, b.len);
    free(b.s);
    return path;
}

/* A Collada document with one triangle geometry "g"; `scene` goes inside the visual scene,
 * `library` (library_nodes, may be "") before it. */
static void collada_doc(sbuf *b, const char *library, const char *scene_prefix, size_t repeat,
                        const char *middle, const char *scene_suffix)
{
    sb_printf(b, "<?xml version=\"1.0\"?>\n<COLLADA xmlns=\"http://www.collada.org/2005/11/"
                 "COLLADASchema\" version=\"1.4.1\">\n<library_geometries><geometry id=\"g\"><mesh>"
                 "<source id=\"p\"><float_array id=\"pa\" count=\"9\">0 0 0 1 0 0 0 1 0</float_array>"
                 "<technique_common><accessor source=\"#pa\" count=\"3\" stride=\"3\"><param name=\"X\" "
                 "type=\"float\"/><param name=\"Y\" type=\"float\"/><param name=\"Z\" type=\"float\"/>"
                 "</accessor></technique_common></source><vertices id=\"v\"><input semantic=\"POSITION\" "
                 "source=\"#p\"/></vertices><triangles count=\"1\"><input semantic=\"VERTEX\" "
                 "source=\"#v\" offset=\"0\"/><p>0 1 2</p></triangles></mesh></geometry>"
                 "</library_geometries>\n%s<library_visual_scenes><visual_scene id=\"s\">",
              library);
    for (size_t i = 0; i < repeat; ++i)
        sb_printf(b, "%s", scene_prefix);
    sb_printf(b, "%s", middle);
    for (size_t i = 0; i < repeat; ++i)
        sb_printf(b, "%s", scene_suffix);
    sb_printf(b, "</visual_scene></library_visual_scenes>\n<scene><instance_visual_scene "
                 "url=\"#s\"/></scene></COLLADA>\n");
}

/* ---- loading in a child -------------------------------------------------------------------- */

/* Descriptors open in this process (the listing's own one included, the same every time). */
static int open_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    int n = 0;
    if (!d)
        return -1;
    while (readdir(d))
        ++n;
    closedir(d);
    return n;
}

/* 1 when this process has a child (running or a zombie). */
static int has_children(void)
{
    return !(waitpid(-1, NULL, WNOHANG) < 0 && errno == ECHILD);
}

typedef struct load_result {
    int signal;       /* the child died of this signal (0: it exited) */
    int exit_code;
    int leaked_fds;   /* descriptors the load left open (-1: unknown) */
    int children;     /* the load left a child process (or a zombie) behind */
    vr_status status;
    uint32_t draws;
    uint64_t triangles, repaired;
    double ms;        /* the child's CPU time (user + system): wall time is what other processes
                         leave it, and a busy 2-core machine stretched a linear load under
                         AddressSanitizer past MAX_LOAD_MS (2,090 ms, session 28) */
    char message[1024];
    char note[256];
    char err[512];    /* what it wrote to stderr */
} load_result;

/* User + system time in ms. */
static double cpu_ms(const struct rusage *u)
{
    return (u->ru_utime.tv_sec + u->ru_stime.tv_sec) * 1e3 +
           (u->ru_utime.tv_usec + u->ru_stime.tv_usec) / 1e3;
}

/* Loads `path` (vr_scene_load) in a child with CHILD_AS_BYTES of address space and a 20 s alarm
 * (of wall time: a hang); r->ms is its CPU time. */
static void load_in_child(load_result *r, const char *path, int accept_repairs)
{
    memset(r, 0, sizeof *r);
    int fds[2];
    if (pipe(fds) != 0) {
        r->signal = -1;
        return;
    }
    char err_path[256];
    snprintf(err_path, sizeof err_path, "%s/stderr.txt", g_dir);
    struct rusage ru0, ru1;
    getrusage(RUSAGE_CHILDREN, &ru0);
    fflush(NULL);
    const pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        if (!freopen(err_path, "w", stderr))
            _exit(3);
        /* not under AddressSanitizer: its shadow memory alone is terabytes of address space, so
         * every later mapping (a read buffer) would fail (max_allocation_size_mb bounds it) */
        const struct rlimit lim = {CHILD_AS_BYTES, CHILD_AS_BYTES};
        if (!TEST_ASAN)
            setrlimit(RLIMIT_AS, &lim);
        alarm(20);
        vr_scene_set_accept_repairs(accept_repairs);
        load_result res;
        memset(&res, 0, sizeof res);
        vr_scene scene;
        const int open_before = open_fds();
        res.status = vr_scene_load(&scene, path);
        res.leaked_fds = open_before < 0 ? -1 : open_fds() - open_before;
        res.children = has_children();
        if (res.status) {
            snprintf(res.message, sizeof res.message, "%s", vr_last_error());
        } else {
            res.draws = scene.draw_count;
            for (uint32_t i = 0; i < scene.draw_count; ++i)
                res.triangles += scene.draws[i].mesh.index_count / 3;
            res.repaired = scene.repaired;
            snprintf(res.note, sizeof res.note, "%s", scene.repair_note);
            vr_scene_free(&scene);
        }
        fflush(stderr);
        const ssize_t w = write(fds[1], &res, sizeof res);
        _exit(w == (ssize_t)sizeof res ? 0 : 4);
    }
    close(fds[1]);
    size_t got = 0;
    while (pid > 0 && got < sizeof *r) {
        const ssize_t n = read(fds[0], (char *)r + got, sizeof *r - got);
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    close(fds[0]);
    int wstatus = 0;
    if (pid < 0 || waitpid(pid, &wstatus, 0) != pid) {
        r->signal = -1;
        return;
    }
    getrusage(RUSAGE_CHILDREN, &ru1); /* the children waited for so far: this one added */
    r->ms = cpu_ms(&ru1) - cpu_ms(&ru0);
    r->signal = WIFSIGNALED(wstatus) ? WTERMSIG(wstatus) : 0;
    r->exit_code = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1;
    if (got != sizeof *r) {
        r->status = VR_ERR_IO;
        snprintf(r->message, sizeof r->message, "(the child reported nothing)");
    }
    FILE *f = fopen(err_path, "r");
    if (f) {
        const size_t n = fread(r->err, 1, sizeof r->err - 1, f);
        r->err[n] = 0;
        fclose(f);
    }
}

/* Loads `path` and expects a refusal (VR_ERR_FORMAT) whose message contains every `needles`
 * entry (NULL-terminated), in time and without a crash. */
static void expect_refused_(const char *file, int line, const char *path, const char *const *needles)
{
    load_result r;
    if (!path) {
        fprintf(stderr, "%s:%d: could not write the test file\n", file, line);
        ++vr_test_failures;
        return;
    }
    load_in_child(&r, path, 0);
    int ok = r.signal == 0 && r.exit_code == 0 && r.status == VR_ERR_FORMAT && r.ms < MAX_LOAD_MS &&
             strstr(r.message, path) && r.leaked_fds == 0 && !r.children;
    for (const char *const *n = needles; ok && *n; ++n)
        ok = strstr(r.message, *n) != NULL;
    if (!ok) {
        if (vr_test_failures < 10)
            fprintf(stderr, "%s:%d: %s: expected a refusal with", file, line, path);
        for (const char *const *n = needles; vr_test_failures < 10 && *n; ++n)
            fprintf(stderr, " '%s'", *n);
        if (vr_test_failures < 10)
            fprintf(stderr, " within %.0f ms; got signal %d, exit %d, status %d after %.0f ms, %d "
                    "descriptors and %d children left: %s\n", MAX_LOAD_MS, r.signal, r.exit_code,
                    (int)r.status, r.ms, r.leaked_fds, r.children, r.message);
        ++vr_test_failures;
    }
}

#define EXPECT_REFUSED(path, ...)                                                  \
    do {                                                                           \
        const char *const needles_[] = {__VA_ARGS__, NULL};                        \
        expect_refused_(__FILE__, __LINE__, (path), needles_);                     \
    } while (0)

static int setup(void)
{
    if (!make_dir()) {
        fprintf(stderr, "cannot create a temp folder\n");
        return 0;
    }
    return 1;
}

static int finish(void)
{
    remove_dir();
    return VR_TEST_RESULT();
}

/* ---- 1. node chains too deep for assimp's recursion ---------------------------------------- */

VR_TEST(test_deep_chains, "scenes/assimp-deep-chains")
{
    if (!setup())
        return VR_TEST_FAIL;
    const uint32_t n = 30000;
    sbuf nodes = {0};
    sb_printf(&nodes, "[");
    for (uint32_t i = 0; i + 1 < n; ++i)
        sb_printf(&nodes, "{\"children\":[%u]},", i + 1);
    sb_printf(&nodes, "{\"mesh\":0}]");
    EXPECT_REFUSED(write_gltf("chain.gltf", nodes.s, "[0]"), "node tree 30000 levels deep",
                   "limit 1024");
    /* 1024 levels load: the limit is inclusive */
    nodes.len = 0;
    sb_printf(&nodes, "[");
    for (uint32_t i = 0; i + 1 < 1024; ++i)
        sb_printf(&nodes, "{\"children\":[%u]},", i + 1);
    sb_printf(&nodes, "{\"mesh\":0}]");
    load_result r;
    load_in_child(&r, write_gltf("chain1024.gltf", nodes.s, "[0]"), 0);
    VR_EXPECT(r.signal == 0 && r.status == VR_OK && r.triangles == 1, "1024 levels: status %d: %s",
              (int)r.status, r.message);
    free(nodes.s);

    sbuf dae = {0};
    collada_doc(&dae, "", "<node>", n, "<instance_geometry url=\"#g\"/>", "</node>");
    EXPECT_REFUSED(write_file("chain.dae", dae.s, dae.len), "node tree more than 1024 levels deep");
    /* the same chain reached through <instance_node> links instead of nesting */
    dae.len = 0;
    sbuf lib = {0};
    sb_printf(&lib, "<library_nodes>");
    for (uint32_t i = 0; i < 2000; ++i)
        sb_printf(&lib, "<node id=\"n%u\">%s%u\"/></node>", i,
                  i + 1 < 2000 ? "<instance_node url=\"#n" : "<instance_geometry url=\"#g", i + 1);
    sb_printf(&lib, "</library_nodes>\n");
    collada_doc(&dae, lib.s, "", 0, "<node><instance_node url=\"#n0\"/></node>", "");
    EXPECT_REFUSED(write_file("linked-chain.dae", dae.s, dae.len), "levels deep", "limit 1024");
    free(lib.s);

    /* other text formats: nesting alone (X3D elements, X frames) */
    dae.len = 0;
    sb_printf(&dae, "<?xml version=\"1.0\"?><X3D><Scene>");
    for (uint32_t i = 0; i < n; ++i)
        sb_printf(&dae, "<Transform>");
    for (uint32_t i = 0; i < n; ++i)
        sb_printf(&dae, "</Transform>");
    sb_printf(&dae, "</Scene></X3D>");
    EXPECT_REFUSED(write_file("deep.x3d", dae.s, dae.len), "XML elements nested more than 4096");
    dae.len = 0;
    sb_printf(&dae, "xof 0303txt 0032\n");
    for (uint32_t i = 0; i < n; ++i)
        sb_printf(&dae, "Frame f%u {\n", i);
    for (uint32_t i = 0; i < n; ++i)
        sb_printf(&dae, "}\n");
    EXPECT_REFUSED(write_file("deep.x", dae.s, dae.len), "brackets nested more than 4096");
    /* binary FBX: 100,000 records, each inside the one before (a 13-byte header + name "A",
     * then the nested record, then the 13-byte null record closing the list) */
    dae.len = 0;
    sb_bytes(&dae, "Kaydara FBX Binary  \0\x1a\0", 23);
    const uint32_t version = 7300, levels = 100000;
    sb_bytes(&dae, &version, 4);
    for (uint32_t i = 0; i < levels; ++i) {
        const uint32_t end = 27 + 14 * i + 14 * (levels - i) + 13 * (levels - 1 - i);
        const uint32_t head[3] = {end, 0, 0};
        sb_bytes(&dae, head, sizeof head);
        sb_bytes(&dae, "\1A", 2);
    }
    for (uint32_t i = 0; i < levels; ++i)
        sb_bytes(&dae, "\0\0\0\0\0\0\0\0\0\0\0\0\0", 13);
    EXPECT_REFUSED(write_file("deep.fbx", dae.s, dae.len), "FBX records nested more than 4096");
    free(dae.s);
    return finish();
}

/* ---- 2. instancing bombs, cycles ----------------------------------------------------------- */

VR_TEST(test_instancing, "scenes/assimp-instancing")
{
    if (!setup())
        return VR_TEST_FAIL;
    /* each node lists the next one twice: 2^39 instances from 1.4 KB */
    sbuf nodes = {0};
    sb_printf(&nodes, "[");
    for (int i = 0; i < 39; ++i)
        sb_printf(&nodes, "{\"children\":[%d,%d]},", i + 1, i + 1);
    sb_printf(&nodes, "{\"mesh\":0}]");
    EXPECT_REFUSED(write_gltf("bomb.gltf", nodes.s, "[0]"), "1099511627775 node instances",
                   "limit 1048576");
    /* 2^19 instances (under the node limit) of a mesh declaring 4096 triangles: too many */
    nodes.len = 0;
    sb_printf(&nodes, "[");
    for (int i = 0; i < 19; ++i)
        sb_printf(&nodes, "{\"children\":[%d,%d]},", i + 1, i + 1);
    sb_printf(&nodes, "{\"mesh\":0}]");
    sbuf doc = {0};
    sb_printf(&doc, "{\"asset\":{\"version\":\"2.0\"},\"scenes\":[{\"nodes\":[0]}],\"nodes\":%s,"
                    "\"meshes\":[{\"primitives\":[{\"attributes\":{\"POSITION\":0},\"indices\":1}]}],"
                    "\"accessors\":[{\"componentType\":5126,\"count\":3,\"type\":\"VEC3\"},"
                    "{\"componentType\":5125,\"count\":12288,\"type\":\"SCALAR\"}]}",
              nodes.s);
    EXPECT_REFUSED(write_file("tris.gltf", doc.s, doc.len), "2147483648 triangles once node instances",
                   "2^32-1 index limit");
    /* a shared child that expands modestly is fine: 2 draws of one triangle */
    load_result r;
    load_in_child(&r, write_gltf("shared.gltf", "[{\"children\":[1,1]},{\"mesh\":0}]", "[0]"), 0);
    VR_EXPECT(r.status == VR_OK && r.draws == 2 && r.triangles == 2, "shared child: status %d, %u draws, "
              "%llu triangles: %s", (int)r.status, r.draws, (unsigned long long)r.triangles, r.message);
    /* cycles would recurse forever */
    EXPECT_REFUSED(write_gltf("cycle.gltf", "[{\"children\":[1]},{\"children\":[0],\"mesh\":0}]", "[0]"),
                   "cycle");
    EXPECT_REFUSED(write_gltf("badchild.gltf", "[{\"children\":[7]},{\"mesh\":0}]", "[0]"),
                   "node 0: child 7 names no element of the 2 nodes");

    /* Collada: <instance_node> twice per level */
    sbuf lib = {0}, dae = {0};
    sb_printf(&lib, "<library_nodes>");
    for (int i = 0; i < 40; ++i)
        if (i < 39)
            sb_printf(&lib, "<node id=\"n%d\"><instance_node url=\"#n%d\"/><instance_node url=\"#n%d\"/></node>",
                      i, i + 1, i + 1);
        else
            sb_printf(&lib, "<node id=\"n%d\"><instance_geometry url=\"#g\"/></node>", i);
    sb_printf(&lib, "</library_nodes>\n");
    collada_doc(&dae, lib.s, "", 0, "<node><instance_node url=\"#n0\"/></node>", "");
    EXPECT_REFUSED(write_file("bomb.dae", dae.s, dae.len), "node instances", "limit 1048576");
    dae.len = 0;
    collada_doc(&dae, "<library_nodes><node id=\"a\"><instance_node url=\"#b\"/></node>"
                      "<node id=\"b\"><instance_node url=\"#a\"/></node></library_nodes>\n",
                "", 0, "<node><instance_node url=\"#a\"/><instance_geometry url=\"#g\"/></node>", "");
    EXPECT_REFUSED(write_file("cycle.dae", dae.s, dae.len), "cycle");
    /* a reference "#" finds the first unnamed node of the scene - here the referring node
     * itself, so assimp recursed until it crashed (found by fuzzing the pre-check) */
    dae.len = 0;
    collada_doc(&dae, "", "", 0, "<node><instance_node url=\"#\"/><instance_geometry url=\"#g\"/></node>", "");
    EXPECT_REFUSED(write_file("empty-ref.dae", dae.s, dae.len), "cycle");
    /* a reference to nothing is skipped by assimp: a repair */
    dae.len = 0;
    collada_doc(&dae, "", "", 0, "<node name=\"a\"><instance_node url=\"#nothing\"/><instance_geometry url=\"#g\"/></node>", "");
    EXPECT_REFUSED(write_file("missing-ref.dae", dae.s, dae.len), "1 instance of a missing node skipped");
    free(nodes.s), free(doc.s), free(lib.s), free(dae.s);
    return finish();
}

/* ---- 3. headers and chunk lengths that lie ------------------------------------------------- */

VR_TEST(test_lying_sizes, "scenes/assimp-lying-sizes")
{
    if (!setup())
        return VR_TEST_FAIL;
    /* a valid GLB: the buffer is the BIN chunk */
    const float pos[9] = {0, 0, 0, 1, 0, 0, 0, 1, 0};
    const char *json = "{\"asset\":{\"version\":\"2.0\"},\"scene\":0,\"scenes\":[{\"nodes\":[0]}],"
                       "\"nodes\":[{\"mesh\":0}],\"meshes\":[{\"primitives\":[{\"attributes\":"
                       "{\"POSITION\":0}}]}],\"accessors\":[{\"bufferView\":0,\"componentType\":5126,"
                       "\"count\":3,\"type\":\"VEC3\",\"min\":[0,0,0],\"max\":[1,1,0]}],"
                       "\"bufferViews\":[{\"buffer\":0,\"byteLength\":36}],\"buffers\":[{\"byteLength\":36}]}";
    load_result r;
    load_in_child(&r, write_glb("ok.glb", json, 0, pos, sizeof pos, 0), 0);
    VR_EXPECT(r.status == VR_OK && r.triangles == 1, "valid GLB: status %d: %s", (int)r.status, r.message);
    EXPECT_REFUSED(write_glb("json-len.glb", json, 0xFFFFFFF0u, pos, sizeof pos, 0),
                   "GLB JSON chunk claims 4294967280 bytes");
    {
        /* the BIN chunk claims more than the file holds */
        sbuf b = {0};
        uint32_t json_len = (uint32_t)strlen(json), pad = (4 - json_len % 4) % 4;
        uint32_t total = 12 + 8 + json_len + pad + 8 + (uint32_t)sizeof pos;
        uint32_t head[5] = {0x46546C67u, 2, total, json_len + pad, 0x4E4F534Au};
        uint32_t bh[2] = {0x7FFFFFFFu, 0x004E4942u};
        sb_bytes(&b, head, sizeof head), sb_bytes(&b, json, json_len), sb_bytes(&b, "    ", pad);
        sb_bytes(&b, bh, sizeof bh), sb_bytes(&b, pos, sizeof pos);
        EXPECT_REFUSED(write_file("bin-len.glb", b.s, b.len), "GLB binary chunk claims 2147483647 bytes");
        EXPECT_REFUSED(write_file("short.glb", b.s, 9), "12-byte header", "truncated");
        b.s[1] = 'X';
        EXPECT_REFUSED(write_file("magic.glb", b.s, b.len), "bad GLB magic 'gXTF'");
        free(b.s);
    }
    EXPECT_REFUSED(write_glb("total.glb", json, 0, pos, sizeof pos, 1u << 30), "GLB header says 1073741824 bytes");
    /* an accessor with no bufferView is zeros: 2e9 of them would be 24 GB in assimp */
    const char *sparse = "{\"asset\":{\"version\":\"2.0\"},\"scenes\":[{\"nodes\":[0]}],\"nodes\":"
                         "[{\"mesh\":0}],\"meshes\":[{\"primitives\":[{\"attributes\":{\"POSITION\":0}}]}],"
                         "\"accessors\":[{\"componentType\":5126,\"count\":2000000000,\"type\":\"VEC3\","
                         "\"sparse\":{\"count\":1,\"indices\":{\"bufferView\":0,\"componentType\":5125},"
                         "\"values\":{\"bufferView\":0}}}]}";
    EXPECT_REFUSED(write_file("sparse.gltf", sparse, strlen(sparse)),
                   "accessor 0 declares 2000000000 elements without a bufferView");

    /* Debian's assimp-testmodels invalid/OutOfMemory.off (309 bytes: 52 s and 15.8 GB before) */
    const char *oom_off = "OFF\n353535235358 6 0\n-0.500000 -0.500000 0.500000\n0.500000 -0.500000 "
                          "0.500000\n-0.500000 0.500000 0.500000\n0.500000 0.500000 0.500000\n"
                          "-0.500000 0.500000 -0.500000\n0.500000 0.500000 -0.500000\n-0.500000 "
                          "-0.500000 -0.500000\n0.500000 -0.500000 -0.500000\n4 0 1 3 2\n4 2 3 5 4\n"
                          "4 4 5 7 6\n4 6 7 1 0\n4 1 7 5 3\n4 6 0 2 4\n";
    EXPECT_REFUSED(write_file("OutOfMemory.off", oom_off, strlen(oom_off)),
                   "OFF header declares 353535235358 vertices and 6 faces");
    const char *huge_off = "OFF\n300000000 1 0\n0 0 0\n1 0 0\n0 1 0\n3 0 1 2\n";
    EXPECT_REFUSED(write_file("huge.off", huge_off, strlen(huge_off)), "300000000 vertices", "truncated");
    const char *ok_off = "OFF\n3 1 0\n0 0 0\n1 0 0\n0 1 0\n3 0 1 2\n";
    load_in_child(&r, write_file("ok.off", ok_off, strlen(ok_off)), 0);
    VR_EXPECT(r.status == VR_OK && r.triangles == 1, "valid OFF: status %d: %s", (int)r.status, r.message);
    /* an OFF index out of range is clamped by assimp: a repair */
    const char *clamp_off = "OFF\n3 1 0\n0 0 0\n1 0 0\n0 1 0\n3 0 1 9\n";
    EXPECT_REFUSED(write_file("clamp.off", clamp_off, strlen(clamp_off)),
                   "1 index out of range (assimp used the last vertex instead)", "--accept-repairs");
    return finish();
}

/* ---- 4. OBJ counts that are quadratic in assimp --------------------------------------------- */

VR_TEST(test_obj_groups, "scenes/assimp-obj-groups")
{
    if (!setup())
        return VR_TEST_FAIL;
    sbuf b = {0};
    sb_printf(&b, "v 0 0 0\nv 1 0 0\nv 0 1 0\n");
    for (int i = 0; i < 100000; ++i)
        sb_printf(&b, "o group%d\nf 1 2 3\n", i);
    EXPECT_REFUSED(write_file("groups.obj", b.s, b.len), "more than 16384 objects",
                   "looks each up among all before it");
    b.len = 0;
    sb_printf(&b, "v 0 0 0\nv 1 0 0\nv 0 1 0\n");
    for (int i = 0; i < 5000; ++i)
        sb_printf(&b, "usemtl material%d\nf 1 2 3\n", i);
    EXPECT_REFUSED(write_file("materials.obj", b.s, b.len), "more than 4096 materials");
    /* many groups with repeated names, or `g` groups, are cheap: loaded */
    b.len = 0;
    sb_printf(&b, "v 0 0 0\nv 1 0 0\nv 0 1 0\n");
    for (int i = 0; i < 20000; ++i)
        sb_printf(&b, "o same\ng part%d\nusemtl m%d\nf 1 2 3\n", i, i % 2);
    load_result r;
    load_in_child(&r, write_file("repeated.obj", b.s, b.len), 0);
    VR_EXPECT(r.status == VR_OK && r.triangles == 20000 && r.ms < MAX_LOAD_MS,
              "repeated names: status %d, %llu triangles, %.0f ms: %s", (int)r.status,
              (unsigned long long)r.triangles, r.ms, r.message);
    /* faces with fewer than 3 corners make assimp's validation fail: refused with the line */
    const char *two = "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\nf 1 2\n";
    EXPECT_REFUSED(write_file("two.obj", two, strlen(two)), "1 face with fewer than 3 corners",
                   "line 5");
    load_in_child(&r, tmp_path("two.obj"), 1);
    VR_EXPECT(r.status == VR_ERR_FORMAT, "two.obj cannot be repaired: status %d", (int)r.status);
    free(b.s);
    return finish();
}

/* ---- 5. data assimp drops silently ---------------------------------------------------------- */

VR_TEST(test_dropped, "scenes/assimp-dropped")
{
    if (!setup())
        return VR_TEST_FAIL;
    sbuf b = {0};
    load_result r;
    /* out of range: assimp drops the triangle */
    const uint32_t oor[9] = {0, 1, 2, 0, 1, 7, 0, 2, 1};
    gltf_doc(&b, "[{\"mesh\":0}]", "[0]", g_quad, 3, oor, 9, -1);
    const char *path = write_file("range.gltf", b.s, b.len);
    EXPECT_REFUSED(path, "assimp dropped 1 of 3 triangles (indices out of range)",
                   "load it anyway with --accept-repairs");
    load_in_child(&r, path, 1);
    VR_EXPECT(r.status == VR_OK && r.triangles == 2 && r.repaired == 1 &&
              strstr(r.note, "dropped 1 of 3") && strstr(r.err, "warning: ") && strstr(r.err, "dropped 1 of 3"),
              "range.gltf accepted: status %d, %llu triangles, repaired %llu, note '%s', stderr '%s'",
              (int)r.status, (unsigned long long)r.triangles, (unsigned long long)r.repaired, r.note, r.err);
    /* 5 indices: the last 2 dropped */
    b.len = 0;
    gltf_doc(&b, "[{\"mesh\":0}]", "[0]", g_quad, 3, oor, 5, -1);
    path = write_file("mod3.gltf", b.s, b.len);
    EXPECT_REFUSED(path, "assimp drops the last 2 indices of 1 primitive whose index count is not a multiple of 3");
    load_in_child(&r, path, 1);
    VR_EXPECT(r.status == VR_OK && r.triangles == 1 && r.repaired == 1, "mod3.gltf accepted: status %d, "
              "repaired %llu: %s", (int)r.status, (unsigned long long)r.repaired, r.message);
    /* 4 vertices without indices */
    b.len = 0;
    gltf_doc(&b, "[{\"mesh\":0}]", "[0]", g_quad, 4, NULL, 0, -1);
    EXPECT_REFUSED(write_file("unindexed.gltf", b.s, b.len),
                   "assimp drops the last 1 vertex of 1 primitive whose vertex count is not a multiple of 3");
    /* a strip of 2 indices: assimp's face count would wrap around (2^64 faces) */
    b.len = 0;
    gltf_doc(&b, "[{\"mesh\":0}]", "[0]", g_quad, 3, oor, 2, 5);
    EXPECT_REFUSED(write_file("strip.gltf", b.s, b.len), "triangle strip of 2 indices (needs at least 3)");
    /* a valid quad loads exactly: no false alarm */
    b.len = 0;
    {
        const uint32_t quad[6] = {0, 1, 2, 2, 1, 3};
        gltf_doc(&b, "[{\"mesh\":0}]", "[0]", g_quad, 4, quad, 6, -1);
    }
    load_in_child(&r, write_file("quad.gltf", b.s, b.len), 0);
    VR_EXPECT(r.status == VR_OK && r.triangles == 2 && r.repaired == 0, "quad.gltf: status %d, "
              "%llu triangles: %s", (int)r.status, (unsigned long long)r.triangles, r.message);
    /* a node transform that overflows to infinity: refused, never hidden */
    EXPECT_REFUSED(write_gltf("inf.gltf", "[{\"children\":[1],\"scale\":[1e30,1e30,1e30]},"
                                          "{\"mesh\":0,\"scale\":[1e30,1e30,1e30]}]", "[0]"),
                   "transform that is not finite");
    load_in_child(&r, tmp_path("inf.gltf"), 1);
    VR_EXPECT(r.status == VR_ERR_FORMAT, "inf.gltf is not a repair: status %d", (int)r.status);
    free(b.s);
    return finish();
}

/* ---- 6. corrupt JSON and GLB get messages that say what is wrong ---------------------------- */

VR_TEST(test_corrupt, "scenes/assimp-corrupt")
{
    if (!setup())
        return VR_TEST_FAIL;
    sbuf b = {0};
    const uint32_t tri[3] = {0, 1, 2};
    gltf_doc(&b, "[{\"mesh\":0}]", "[0]", g_quad, 3, tri, 3, -1);
    EXPECT_REFUSED(write_file("cut.gltf", b.s, 200), "JSON syntax error at byte 200", "ends early");
    b.s[57] = '#';
    EXPECT_REFUSED(write_file("hash.gltf", b.s, b.len), "JSON syntax error at byte 57 (line 1, column 58)",
                   "found '#'");
    b.len = 0;
    sb_printf(&b, "{\"asset\":{\"version\":\"2.0\"},\"extras\":");
    for (int i = 0; i < 100000; ++i)
        sb_printf(&b, "[");
    EXPECT_REFUSED(write_file("nested.gltf", b.s, b.len), "nests more than 512 levels");
    const char *json = "{\"asset\":{\"version\":\"2.0\"}, oops}";
    EXPECT_REFUSED(write_glb("json.glb", json, 0, NULL, 0, 0), "GLB JSON chunk syntax error at byte 48",
                   "expected a member name in quotes");
    EXPECT_REFUSED(write_file("empty.glb", "", 0), "12-byte header");
    /* a failed assertion inside assimp (two USE references at X3D scene level) aborted the
     * process; now it is an import error (scenes/assimp_assert.cpp) */
    const char *x3d = "<?xml version=\"1.0\"?><X3D><Scene><Group DEF=\"g0\"><Shape><IndexedTriangleSet "
                      "index=\"0 1 2\"><Coordinate point=\"0 0 0 1 0 0 0 1 0\"/></IndexedTriangleSet>"
                      "</Shape></Group><Group USE=\"g0\"/><Group USE=\"g0\"/></Scene></X3D>\n";
    EXPECT_REFUSED(write_file("use.x3d", x3d, strlen(x3d)), "internal check", "failed");
    /* an unknown format no longer says "No suitable reader found" */
    EXPECT_REFUSED(write_file("notes.xyz1", "hello\n", 6), "not a format assimp reads");
    free(b.s);
    return finish();
}

/* ---- 7. what no pre-check foresees: the import's child process ------------------------------ */

VR_TEST(test_crash, "scenes/assimp-crash")
{
    if (!setup())
        return VR_TEST_FAIL;
    /* found by fuzzing: assimp 5.2.5 frees a block twice reading this 36 KB FBX, and glibc
     * aborts the process (exit 134 before the import ran in a child) */
    const char *fbx = VR_TEST_DATA_DIR "/fbx-double-free.fbx";
    if (TEST_ASAN) /* the sanitizer reports the double free itself, then aborts or exits */
        EXPECT_REFUSED(fbx, "assimp ", "the file is corrupt or uses a feature assimp cannot read");
    else
        EXPECT_REFUSED(fbx, "assimp crashed reading it (SIGABRT: double free or heap corruption",
                       "free(): double free detected",
                       "the file is corrupt or uses a feature assimp cannot read");

    /* DirectX meshes declare their vertex count, and assimp sizes its arrays before reading the
     * vertices (12 bytes each); no pre-check reads X meshes. 50,000,000 from 100 bytes: 600 MB,
     * past a 256 MiB bound; 400,000,000 (4.8 GB) past the test's own 1 GiB limit, which is
     * tighter than the default bound and named instead. */
    const char *x50 = "xof 0303txt 0032\nMesh m {\n 50000000;\n 0;0;0;,\n 1;0;0;,\n 0;1;0;;\n 1;\n"
                      " 3;0,1,2;;\n}\n";
    const char *x400 = "xof 0303txt 0032\nMesh m {\n 400000000;\n 0;0;0;,\n 1;0;0;,\n 0;1;0;;\n 1;\n"
                       " 3;0,1,2;;\n}\n";
    const char *bomb = write_file("bomb.x", x50, strlen(x50));
    if (!TEST_ASAN) { /* no address-space limit under the sanitizer */
        setenv("VR_ASSIMP_MEMORY_MB", "256", 1);
        EXPECT_REFUSED(bomb, "assimp needed more than 256 MiB of memory reading it",
                       "set VR_ASSIMP_MEMORY_MB=N");
        unsetenv("VR_ASSIMP_MEMORY_MB");
        EXPECT_REFUSED(write_file("bomb400.x", x400, strlen(x400)), "assimp needed more than",
                       "the process's address-space limit");
    }
    /* a bad bound is an error that names the variable, never the default in silence */
    load_result r;
    setenv("VR_ASSIMP_MEMORY_MB", "lots", 1);
    load_in_child(&r, bomb, 0);
    VR_EXPECT(r.status == VR_ERR_ARG && strstr(r.message, "VR_ASSIMP_MEMORY_MB='lots'"),
              "status %d: %s", (int)r.status, r.message);
    unsetenv("VR_ASSIMP_MEMORY_MB");
    setenv("VR_ASSIMP_TIMEOUT_S", "-1", 1);
    load_in_child(&r, bomb, 0);
    VR_EXPECT(r.status == VR_ERR_ARG && strstr(r.message, "VR_ASSIMP_TIMEOUT_S='-1'"),
              "status %d: %s", (int)r.status, r.message);
    unsetenv("VR_ASSIMP_TIMEOUT_S");
    /* and a good file still loads */
    const char *ok_off = "OFF\n3 1 0\n0 0 0\n1 0 0\n0 1 0\n3 0 1 2\n";
    load_in_child(&r, write_file("ok.off", ok_off, strlen(ok_off)), 0);
    VR_EXPECT(r.status == VR_OK && r.triangles == 1 && r.leaked_fds == 0 && !r.children,
              "ok.off: status %d, %d descriptors, %d children: %s", (int)r.status, r.leaked_fds,
              r.children, r.message);
    return finish();
}

/* What a child sends besides its draws (vr_scene_in_child's result). */
typedef struct made_up {
    uint64_t values[4];
    char text[32];
} made_up;

/* Two draws: a quad with texcoords, a triangle without; 5 repairs; the result filled. */
static vr_status child_scene(vr_scene *s, void *result, void *arg)
{
    (void)arg;
    made_up *m = result;
    const uint64_t values[4] = {1, 2, 3, UINT64_MAX};
    memcpy(m->values, values, sizeof values);
    snprintf(m->text, sizeof m->text, "from the child");
    s->draws = calloc(2, sizeof *s->draws);
    if (!s->draws)
        return VR_ERROR(VR_ERR_OOM, "no memory");
    static const float quad_uv[8] = {0, 0, 1, 0, 0, 1, 1, 1};
    static const uint32_t quad[6] = {0, 1, 2, 2, 1, 3};
    for (int i = 0; i < 2; ++i) {
        vr_draw *d = &s->draws[i];
        vr_mesh *mesh = &d->mesh;
        snprintf(d->name, sizeof d->name, "draw %d", i);
        for (int k = 0; k < 16; ++k)
            d->transform[k] = k % 5 == 0 ? 2.0f : 0.25f * (float)k;
        mesh->vertex_count = i ? 3 : 4;
        mesh->index_count = i ? 3 : 6;
        mesh->positions = malloc(sizeof g_quad);
        mesh->normals = malloc(sizeof g_quad);
        mesh->texcoords = i ? NULL : malloc(sizeof quad_uv);
        mesh->indices = malloc(sizeof quad);
        if (!mesh->positions || !mesh->normals || (!i && !mesh->texcoords) || !mesh->indices)
            return VR_ERROR(VR_ERR_OOM, "no memory");
        memcpy(mesh->positions, g_quad, sizeof g_quad);
        for (int v = 0; v < 12; ++v)
            mesh->normals[v] = v % 3 == 2 ? 1.0f : 0.0f;
        if (!i)
            memcpy(mesh->texcoords, quad_uv, sizeof quad_uv);
        memcpy(mesh->indices, quad, sizeof quad);
    }
    s->draw_count = 2;
    s->repaired = 5;
    snprintf(s->repair_note, sizeof s->repair_note, "five made-up repairs");
    return VR_OK;
}

static vr_status child_refuses(vr_scene *s, void *result, void *arg)
{
    (void)s, (void)result;
    return VR_ERROR(VR_ERR_FORMAT, "%s: made-up problem", (const char *)arg);
}

static vr_status child_aborts(vr_scene *s, void *result, void *arg)
{
    (void)s, (void)result, (void)arg;
    fputs("child: about to abort\n", stderr);
    abort();
}

static vr_status child_faults(vr_scene *s, void *result, void *arg)
{
    (void)s, (void)result, (void)arg;
    raise(SIGSEGV);
    return VR_OK;
}

static vr_status child_exits(vr_scene *s, void *result, void *arg)
{
    (void)s, (void)result, (void)arg;
    _exit(3);
}

static vr_status child_hangs(vr_scene *s, void *result, void *arg)
{
    (void)s, (void)result, (void)arg;
    for (;;)
        pause();
    return VR_OK;
}

/* Address space without pages: 16 MiB blocks, touched once, until malloc says no. */
static vr_status child_allocates(vr_scene *s, void *result, void *arg)
{
    (void)s, (void)result, (void)arg;
    for (;;) {
        char *p = malloc((size_t)16 << 20);
        if (!p)
            return VR_ERROR(VR_ERR_OOM, "no memory");
        p[0] = 1;
    }
}

/* The two draws, with an index past the second draw's 3 vertices. */
static vr_status child_lies(vr_scene *s, void *result, void *arg)
{
    vr_status st = child_scene(s, result, arg);
    if (!st)
        s->draws[1].mesh.indices[2] = 3;
    return st;
}

/* vr_scene_in_child with a 256 MiB and `timeout_s` bound; nothing may stay open or alive. */
static vr_status run_child(vr_scene *out, made_up *result, vr_child_fn fn, uint32_t timeout_s,
                           double *ms)
{
    const vr_child_limits limits = {256, timeout_s, "TEST_MEMORY_MB", "TEST_TIMEOUT_S"};
    memset(out, 0, sizeof *out);
    memset(result, 0, sizeof *result);
    const int fds = open_fds();
    const double t0 = vr_now_ms();
    const vr_status s = vr_scene_in_child(out, result, sizeof *result, fn, (void *)"made-up.file",
                                          &limits, "made-up.file", "reader");
    *ms = vr_now_ms() - t0;
    VR_EXPECT(open_fds() == fds && !has_children(), "%d descriptors before, %d after; children "
              "left: %d", fds, open_fds(), has_children());
    VR_EXPECT(s == VR_OK || (out->draw_count == 0 && !out->draws), "a failed run left %u draws",
              out->draw_count);
    return s;
}

#define EXPECT_CHILD_ERROR(fn, timeout_s, status, ...)                                        \
    do {                                                                                      \
        const char *const needles_[] = {__VA_ARGS__, NULL};                                   \
        double ms_;                                                                           \
        const vr_status s_ = run_child(&scene, &result, (fn), (timeout_s), &ms_);              \
        const char *msg_ = vr_last_error();                                                   \
        int ok_ = s_ == (status);                                                             \
        for (const char *const *n_ = needles_; ok_ && *n_; ++n_)                              \
            ok_ = strstr(msg_, *n_) != NULL;                                                  \
        VR_EXPECT(ok_, "%s: status %d after %.0f ms: %s", #fn, (int)s_, ms_, msg_);           \
        vr_scene_free(&scene);                                                                \
    } while (0)

VR_TEST(test_isolate, "scenes/assimp-isolate")
{
    vr_scene scene, want;
    made_up result, want_result;
    double ms;
    /* a scene comes back exactly as the child built it */
    memset(&want, 0, sizeof want);
    memset(&want_result, 0, sizeof want_result);
    VR_EXPECT(child_scene(&want, &want_result, NULL) == VR_OK, "%s", vr_last_error());
    vr_status s = run_child(&scene, &result, child_scene, 10, &ms);
    VR_EXPECT(s == VR_OK && scene.draw_count == 2 && scene.repaired == 5 &&
              !strcmp(scene.repair_note, want.repair_note) &&
              !memcmp(&result, &want_result, sizeof result),
              "status %d, %u draws, %llu repaired '%s': %s", (int)s, scene.draw_count,
              (unsigned long long)scene.repaired, scene.repair_note, vr_last_error());
    for (uint32_t i = 0; !s && i < scene.draw_count && i < 2; ++i) {
        const vr_draw *a = &scene.draws[i], *b = &want.draws[i];
        const vr_mesh *m = &a->mesh, *n = &b->mesh;
        VR_EXPECT(!strcmp(a->name, b->name) && !memcmp(a->transform, b->transform, sizeof a->transform) &&
                  m->vertex_count == n->vertex_count && m->index_count == n->index_count &&
                  !memcmp(m->positions, n->positions, n->vertex_count * 12u) &&
                  !memcmp(m->normals, n->normals, n->vertex_count * 12u) &&
                  !memcmp(m->indices, n->indices, n->index_count * 4u) &&
                  !m->texcoords == !n->texcoords &&
                  (!n->texcoords || !memcmp(m->texcoords, n->texcoords, n->vertex_count * 8u)),
                  "draw %u differs from the child's", i);
    }
    vr_scene_free(&scene);
    vr_scene_free(&want);

    /* the child's own error, with its message and source location */
    EXPECT_CHILD_ERROR(child_refuses, 10, VR_ERR_FORMAT, "made-up.file: made-up problem");
    run_child(&scene, &result, child_refuses, 10, &ms);
    VR_EXPECT(strstr(vr_last_error_where(), "test_load_assimp.c"), "where: '%s'",
              vr_last_error_where());
    /* crashes, early exits, hangs, lies */
    EXPECT_CHILD_ERROR(child_aborts, 10, VR_ERR_FORMAT, "made-up.file: reader crashed reading it "
                       "(SIGABRT", TEST_ASAN ? "" : "\"child: about to abort\"",
                       "the file is corrupt or uses a feature reader cannot read");
    if (!TEST_ASAN) /* the sanitizer handles SIGSEGV itself */
        EXPECT_CHILD_ERROR(child_faults, 10, VR_ERR_FORMAT, "reader crashed reading it (SIGSEGV");
    EXPECT_CHILD_ERROR(child_exits, 10, VR_ERR_FORMAT, "reader stopped reading it without a "
                       "result (exit status 3");
    EXPECT_CHILD_ERROR(child_lies, 10, VR_ERR_FORMAT, "reader returned inconsistent data (an "
                       "index past the vertices of its draw)");
    const double t0 = vr_now_ms();
    EXPECT_CHILD_ERROR(child_hangs, 1, VR_ERR_FORMAT, "reader did not finish reading it within 1 s",
                       "set TEST_TIMEOUT_S=N");
    ms = vr_now_ms() - t0;
    VR_EXPECT(ms > 900 && ms < 5000, "the 1 s bound took %.0f ms", ms);
    if (!TEST_ASAN) /* no address-space limit under the sanitizer */
        EXPECT_CHILD_ERROR(child_allocates, 10, VR_ERR_FORMAT, "reader needed more than 256 MiB",
                           "set TEST_MEMORY_MB=N");
    return VR_TEST_RESULT();
}
