/* test_load_files.c - files and specs that must not hurt the user: chained '@N' suffixes (parsed
 * iteratively, bounded), named pipes and other non-regular files (refused before any open),
 * PLY faces with < 3 corners and trailing data (refused, or dropped and counted under
 * --accept-repairs), non-finite data after node transforms and subdivision (one check), .gts
 * files that load as exactly their source triangles, strict counts (vr_parse_count). Every
 * malformed file is written here; each refusal is checked for its status and its message.
 * Group "scenes/files-"; try `vreuse_tests scenes/files-`.
 */
#define _POSIX_C_SOURCE 200809L /* mkdtemp, mkfifo */
#include "tests/test.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pipeline/gts/gts.h"
#include "scenes/scene.h"
#include "scenes/scene_internal.h"
#include "tests/test_helpers.h"

static int has(const char *needle) { return strstr(vr_last_error(), needle) != NULL; }

/* A scratch folder per test; files() names a file in it. */
static char g_dir[64];

static int make_dir(void)
{
    snprintf(g_dir, sizeof g_dir, "/tmp/vr_test_files_XXXXXX");
    return mkdtemp(g_dir) != NULL;
}

static const char *file_in_dir(char *buf, size_t cap, const char *name)
{
    snprintf(buf, cap, "%s/%s", g_dir, name);
    return buf;
}

static void write_file(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    VR_EXPECT(f && fwrite(data, 1, n, f) == n, "cannot write %s", path);
    if (f)
        fclose(f);
}

static void remove_dir(void)
{
    char cmd[96];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
    VR_EXPECT(system(cmd) == 0, "%s", cmd);
}

/* An ascii PLY of one triangle (0 1 2) over the three `corners` lines ("x y z\n" each). */
static const char *triangle_ply(char *buf, size_t cap, const char *corners)
{
    snprintf(buf, cap, "ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\n"
             "property float z\nelement face 1\nproperty list uchar int vertex_indices\n"
             "end_header\n%s3 0 1 2\n", corners);
    return buf;
}

/* ---- specs -------------------------------------------------------------------------------- */

VR_TEST(test_parse_count, "scenes/files-parse-count")
{
    static const struct {
        const char *s;
        uint64_t want; /* 0: refused */
    } cases[] = {
        {"1000", 1000}, {"82k", 82000}, {"7M", 7000000}, {"1.5M", 1500000}, {"1.1k", 1100},
        {"0.5k", 500}, {"1.0k", 1000}, {"007", 7}, {"1000000000000", 1000000000000ull},
        {"nan", 0}, {"NaN", 0}, {"inf", 0}, {"infinity", 0}, {"-5", 0}, {"+5", 0}, {" 5", 0},
        {"5 ", 0}, {"0x10", 0}, {"1e3", 0}, {"0", 0}, {"0.4", 0}, {"1.0005k", 0}, {"", 0},
        {".", 0}, {"5.", 0}, {".5k", 500}, {"k", 0}, {"5kk", 0}, {"1000000000001", 0},
        {"99999999999999999999999", 0}, {"5G", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        uint64_t v = 12345;
        const int rc = vr_parse_count(cases[i].s, &v);
        if (cases[i].want)
            VR_EXPECT(rc == 0 && v == cases[i].want, "'%s': rc %d, %llu (want %llu)", cases[i].s,
                      rc, (unsigned long long)v, (unsigned long long)cases[i].want);
        else
            VR_EXPECT(rc == VR_ERR_ARG && v == 12345, "'%s' accepted as %llu", cases[i].s,
                      (unsigned long long)v);
    }
    return VR_TEST_RESULT();
}

VR_TEST(test_spec_parse, "scenes/files-spec-parse")
{
    vr_scene_spec sp;
    VR_EXPECT(vr_scene_spec_parse(&sp, "sphere:1k@2k@3M") == VR_OK, "%s", vr_last_error());
    VR_EXPECT_EQ(sp.generator, 0);
    VR_EXPECT_EQ(sp.triangles, 1000);
    VR_EXPECT_EQ(sp.base_len, strlen("sphere:1k"));
    VR_EXPECT_EQ(sp.subdivision_count, 2);
    VR_EXPECT_EQ(sp.subdivide_to[0], 2000);
    VR_EXPECT_EQ(sp.subdivide_to[1], 3000000);
    VR_EXPECT_EQ(sp.subdivide_len[0], strlen("sphere:1k@2k"));
    VR_EXPECT_EQ(sp.subdivide_len[1], strlen("sphere:1k@2k@3M"));
    VR_EXPECT(vr_scene_spec_parse(&sp, "terrain") == VR_OK && sp.generator == 1 &&
              sp.triangles == 1000000 && sp.subdivision_count == 0, "terrain");
    VR_EXPECT(vr_scene_spec_parse(&sp, "some/file.obj@7M") == VR_OK && sp.generator == -1 &&
              sp.base_len == strlen("some/file.obj") && sp.subdivide_to[0] == 7000000, "file@7M");

    /* bad parts are named */
    VR_EXPECT_EQ(vr_scene_spec_parse(&sp, "sphere:nan"), VR_ERR_ARG);
    VR_EXPECT(has("sphere:nan") && has("bad triangle count 'nan'"), "%s", vr_last_error());
    VR_EXPECT_EQ(vr_scene_spec_parse(&sp, "sphere@x"), VR_ERR_ARG);
    VR_EXPECT(has("'x' after '@' is not a triangle count"), "%s", vr_last_error());
    VR_EXPECT_EQ(vr_scene_spec_parse(&sp, "cow.obj@1k@"), VR_ERR_ARG);
    VR_EXPECT(has("'' after '@'"), "%s", vr_last_error());
    VR_EXPECT_EQ(vr_scene_spec_parse(&sp, ""), VR_ERR_ARG);
    VR_EXPECT(has("empty scene name"), "%s", vr_last_error());
    VR_EXPECT_EQ(vr_scene_spec_parse(&sp, "foliage:5000M"), VR_ERR_ARG);
    VR_EXPECT(has("2^32-1"), "%s", vr_last_error());

    /* 8 suffixes are fine, 9 are refused; 5000 are refused at once, the message stays short */
    char spec[16 + 5000 * 3];
    strcpy(spec, "sphere:100");
    for (int i = 0; i < 8; ++i)
        strcat(spec, "@1");
    VR_EXPECT(vr_scene_spec_parse(&sp, spec) == VR_OK && sp.subdivision_count == 8, "%s",
              vr_last_error());
    strcat(spec, "@1");
    VR_EXPECT_EQ(vr_scene_spec_parse(&sp, spec), VR_ERR_ARG);
    VR_EXPECT(has("more than 8 '@N' suffixes"), "%s", vr_last_error());
    size_t n = strlen(spec);
    for (int i = 9; i < 2000; ++i, n += 2)
        memcpy(spec + n, "@1", 3);
    vr_scene sc;
    double t0 = vr_now_ms();
    VR_EXPECT_EQ(vr_scene_load(&sc, spec), VR_ERR_ARG);
    VR_EXPECT(vr_now_ms() - t0 < 100, "2000 suffixes took %.0f ms", vr_now_ms() - t0);
    VR_EXPECT(has("more than 8") && has("(4010 characters)") && strlen(vr_last_error()) < 300,
              "%s", vr_last_error());
    /* longer than vr_scene.source holds: refused by its length, never cut short */
    for (int i = 2000; i < 5000; ++i, n += 2)
        memcpy(spec + n, "@1", 3);
    t0 = vr_now_ms();
    VR_EXPECT_EQ(vr_scene_load(&sc, spec), VR_ERR_ARG);
    VR_EXPECT(vr_now_ms() - t0 < 100, "5000 suffixes took %.0f ms", vr_now_ms() - t0);
    VR_EXPECT(has("(10010 characters)") && has("at most 4095") && strlen(vr_last_error()) < 300,
              "%s", vr_last_error());
    return VR_TEST_RESULT();
}

/* Chained suffixes give what one suffix gives; a file named like a spec still wins. */
VR_TEST(test_spec_load, "scenes/files-spec-load")
{
    vr_progress_quiet = 1;
    vr_scene a, b;
    VR_EXPECT(vr_scene_load(&a, "sphere:1k@2k@3k") == VR_OK, "%s", vr_last_error());
    VR_EXPECT(vr_scene_load(&b, "sphere:1k@3k") == VR_OK, "%s", vr_last_error());
    if (!vr_test_failures) {
        VR_EXPECT_EQ(a.draws[0].mesh.index_count, b.draws[0].mesh.index_count);
        VR_EXPECT(!memcmp(a.draws[0].mesh.indices, b.draws[0].mesh.indices,
                          a.draws[0].mesh.index_count * sizeof(uint32_t)), "indices differ");
        VR_EXPECT(!strcmp(a.source, "sphere:1k@2k@3k"), "source %s", a.source);
        vr_scene_free(&a);
        vr_scene_free(&b);
    }
    if (!make_dir())
        return VR_TEST_FAIL;
    char path[128], spec[160], text[512];
    const char *tri = triangle_ply(text, sizeof text, "0 0 0\n1 0 0\n0 1 0\n");
    write_file(file_in_dir(path, sizeof path, "t@x"), tri, strlen(tri));
    VR_EXPECT(vr_scene_load(&a, path) == VR_OK, "%s", vr_last_error());
    vr_scene_free(&a);
    snprintf(spec, sizeof spec, "%s@4@16", path);
    VR_EXPECT(vr_scene_load(&a, spec) == VR_OK, "%s", vr_last_error());
    VR_EXPECT(!vr_test_failures && a.draws[0].mesh.index_count == 3 * 16, "t@x@4@16");
    vr_scene_free(&a);
    /* the bad suffix of an existing file */
    snprintf(spec, sizeof spec, "%s@y", path);
    VR_EXPECT_EQ(vr_scene_load(&a, spec), VR_ERR_ARG);
    VR_EXPECT(has("'y' after '@' is not a triangle count"), "%s", vr_last_error());
    remove_dir();
    return VR_TEST_RESULT();
}

/* ---- files that are not regular ------------------------------------------------------------ */

VR_TEST(test_not_regular, "scenes/files-not-regular")
{
    if (!make_dir())
        return VR_TEST_FAIL;
    char path[128];
    file_in_dir(path, sizeof path, "pipe.ply");
    VR_EXPECT(mkfifo(path, 0600) == 0, "mkfifo %s", path);
    vr_scene sc;
    vr_mesh m;
    /* would block forever in open() if anything opened it */
    VR_EXPECT_EQ(vr_scene_load(&sc, path), VR_ERR_IO);
    VR_EXPECT(has(path) && has("not a regular file (a named pipe)"), "%s", vr_last_error());
    VR_EXPECT_EQ(vr_mesh_load(&m, path), VR_ERR_IO);
    VR_EXPECT_EQ(vr_ply_load(&m, path, NULL), VR_ERR_IO);
    VR_EXPECT(!vr_gts_is_file(path), "a FIFO is no .gts file");
    char spec[160];
    snprintf(spec, sizeof spec, "%s@1k", path); /* the suffix splits off; the base is the FIFO */
    VR_EXPECT_EQ(vr_scene_load(&sc, spec), VR_ERR_IO);
    VR_EXPECT(has("named pipe"), "%s", vr_last_error());
    VR_EXPECT_EQ(vr_scene_load(&sc, g_dir), VR_ERR_IO);
    VR_EXPECT(has("a directory"), "%s", vr_last_error());
    /* a pipe whose name looks like a spec with a bad suffix is still named as a pipe */
    file_in_dir(path, sizeof path, "p@x");
    VR_EXPECT(mkfifo(path, 0600) == 0, "mkfifo %s", path);
    VR_EXPECT_EQ(vr_scene_load(&sc, path), VR_ERR_IO);
    VR_EXPECT(has("p@x: not a regular file (a named pipe)"), "%s", vr_last_error());
    /* only regular files win over generators: a folder called "sphere:200" in the working
     * directory leaves the generator alone */
    char cwd[512];
    file_in_dir(path, sizeof path, "sphere:200");
    VR_EXPECT(getcwd(cwd, sizeof cwd) && mkdir(path, 0700) == 0 && chdir(g_dir) == 0, "chdir %s",
              g_dir);
    vr_progress_quiet = 1;
    VR_EXPECT(vr_scene_load(&sc, "sphere:200") == VR_OK, "%s", vr_last_error());
    if (!vr_test_failures)
        vr_scene_free(&sc);
    VR_EXPECT(chdir(cwd) == 0, "chdir %s", cwd);
    VR_EXPECT_EQ(vr_scene_load(&sc, "/dev/null"), VR_ERR_IO);
    VR_EXPECT(has("character device"), "%s", vr_last_error());
    remove_dir();
    return VR_TEST_RESULT();
}

/* ---- PLY ---------------------------------------------------------------------------------- */

static const char *g_head = "ply\nformat ascii 1.0\nelement vertex 4\nproperty float x\n"
                            "property float y\nproperty float z\nelement face 4\n"
                            "property list uchar int vertex_indices\nend_header\n"
                            "0 0 0\n1 0 0\n1 1 0\n0 1 0\n";

/* Loads `text` as dir/name with repairs off, then on; returns the status with repairs off. */
static vr_status load_both(vr_scene *repaired, const char *name, const void *data, size_t n)
{
    char path[128];
    write_file(file_in_dir(path, sizeof path, name), data, n);
    vr_scene sc;
    vr_scene_set_accept_repairs(0);
    const vr_status strict = vr_scene_load(&sc, path);
    char message[1024];
    snprintf(message, sizeof message, "%s", vr_last_error());
    if (!strict)
        vr_scene_free(&sc);
    vr_scene_set_accept_repairs(1);
    const vr_status s = vr_scene_load(repaired, path);
    vr_scene_set_accept_repairs(0);
    VR_EXPECT(s == VR_OK, "%s with --accept-repairs: %s", name, vr_last_error());
    if (s)
        memset(repaired, 0, sizeof *repaired);
    vr_set_error(strict, "%s", message); /* the strict load's message for the caller */
    return strict;
}

VR_TEST(test_ply_short_faces, "scenes/files-ply-short-faces")
{
    if (!make_dir())
        return VR_TEST_FAIL;
    char text[512];
    snprintf(text, sizeof text, "%s3 0 1 2\n2 0 1\n3 0 2 3\n0\n", g_head);
    vr_scene sc;
    VR_EXPECT_EQ(load_both(&sc, "short.ply", text, strlen(text)), VR_ERR_FORMAT);
    VR_EXPECT(has("short.ply") && has("fewer than 3 corners: 2") && has("face 1, 2 corners") &&
              has("--accept-repairs"), "%s", vr_last_error());
    VR_EXPECT_EQ(sc.draw_count ? sc.draws[0].mesh.index_count : 0, 6);
    VR_EXPECT_EQ(sc.repaired, 2);
    VR_EXPECT(strstr(sc.repair_note, "2 faces with fewer than 3 corners dropped"), "note '%s'",
              sc.repair_note);
    vr_scene_free(&sc);
    /* only short faces: no triangles at all, refused either way */
    snprintf(text, sizeof text, "%s2 0 1\n1 2\n0\n2 2 3\n", g_head);
    char path[128];
    write_file(file_in_dir(path, sizeof path, "none.ply"), text, strlen(text));
    vr_scene_set_accept_repairs(1);
    VR_EXPECT_EQ(vr_scene_load(&sc, path), VR_ERR_FORMAT);
    vr_scene_set_accept_repairs(0);
    VR_EXPECT(has("no triangles") && has("4 faces with fewer than 3 corners"), "%s",
              vr_last_error());
    remove_dir();
    return VR_TEST_RESULT();
}

/* A binary little-endian PLY of 4 vertices and 2 faces, `extra` bytes appended. */
static size_t binary_ply(uint8_t *buf, size_t extra)
{
    size_t n = (size_t)sprintf((char *)buf, "ply\nformat binary_little_endian 1.0\nelement vertex 4\n"
                               "property float x\nproperty float y\nproperty float z\nelement face 2\n"
                               "property list uchar int vertex_indices\nend_header\n");
    const float pos[12] = {0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0};
    memcpy(buf + n, pos, sizeof pos); /* x86 and ARM hosts are little-endian */
    n += sizeof pos;
    const uint8_t face[2][13] = {{3, 0, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0}, {3, 0, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0}};
    memcpy(buf + n, face, sizeof face);
    n += sizeof face;
    memset(buf + n, 0x5a, extra);
    return n + extra;
}

VR_TEST(test_ply_trailing, "scenes/files-ply-trailing")
{
    if (!make_dir())
        return VR_TEST_FAIL;
    vr_scene sc;
    char text[512];
    /* ascii: two non-blank lines after the faces (another mesh pasted on) */
    snprintf(text, sizeof text, "%s3 0 1 2\n3 0 2 3\n3 1 2 3\n3 0 1 3\n\n5 5 5\n  \n3 0 1 2\n",
             g_head);
    VR_EXPECT_EQ(load_both(&sc, "trail.ply", text, strlen(text)), VR_ERR_FORMAT);
    VR_EXPECT(has("trail.ply") && has("2 non-blank lines after the last declared element") &&
              has("from line 19"), "%s", vr_last_error());
    VR_EXPECT_EQ(sc.draw_count ? sc.draws[0].mesh.index_count : 0, 12);
    VR_EXPECT_EQ(sc.repaired, 1);
    VR_EXPECT(strstr(sc.repair_note, "2 trailing lines ignored"), "note '%s'", sc.repair_note);
    vr_scene_free(&sc);
    /* blank lines after the data are no trailing data */
    snprintf(text, sizeof text, "%s3 0 1 2\n3 0 2 3\n3 1 2 3\n3 0 1 3\n\n \t\r\n\n", g_head);
    char path[128];
    write_file(file_in_dir(path, sizeof path, "blank.ply"), text, strlen(text));
    VR_EXPECT(vr_scene_load(&sc, path) == VR_OK && sc.repaired == 0, "%s", vr_last_error());
    vr_scene_free(&sc);
    /* binary: one byte and 1000 bytes too many; none is fine */
    uint8_t buf[2048];
    size_t n = binary_ply(buf, 0);
    write_file(file_in_dir(path, sizeof path, "exact.ply"), buf, n);
    VR_EXPECT(vr_scene_load(&sc, path) == VR_OK, "%s", vr_last_error());
    vr_scene_free(&sc);
    static const size_t extra[2] = {1, 1000};
    for (int i = 0; i < 2; ++i) {
        n = binary_ply(buf, extra[i]);
        VR_EXPECT_EQ(load_both(&sc, "bin.ply", buf, n), VR_ERR_FORMAT);
        char want[64];
        snprintf(want, sizeof want, "%zu bytes after the last declared element ('face'", extra[i]);
        VR_EXPECT(has(want), "%s", vr_last_error());
        VR_EXPECT_EQ(sc.draw_count ? sc.draws[0].mesh.index_count : 0, 6);
        VR_EXPECT_EQ(sc.repaired, 1);
        vr_scene_free(&sc);
    }
    remove_dir();
    return VR_TEST_RESULT();
}

/* Found by fuzz_ply: a binary list one byte longer than the data left was accepted (the ascii
 * separator allowance), the cursor went past the end and the next read ran off the buffer. */
VR_TEST(test_ply_list_past_end, "scenes/files-ply-list-past-end")
{
    uint8_t buf[512];
    size_t n = (size_t)sprintf((char *)buf, "ply\nformat binary_little_endian 1.0\nelement vertex 1\n"
                               "property float x\nproperty float y\nproperty float z\n"
                               "property list uchar int junk\nelement face 1\n"
                               "property list uchar int vertex_indices\nend_header\n");
    memset(buf + n, 0, 12); /* x, y, z */
    n += 12;
    buf[n++] = 1;           /* a list of one int (4 bytes) ... */
    memset(buf + n, 0, 3);  /* ... with 3 bytes left in the file */
    n += 3;
    vr_mesh m;
    VR_EXPECT_EQ(vr_ply_load_memory(&m, buf, n, "list.ply", NULL), VR_ERR_FORMAT);
    VR_EXPECT(has("list.ply: PLY 'vertex' element 0: list length 1 runs past the end"), "%s",
              vr_last_error());
    return VR_TEST_RESULT();
}

/* Found by fuzz_ply: normals whose squares fall below float's normal range were divided by an
 * imprecise length (|n|^2 = 1.028): a triangle of area 1e-22 (computed normals) and file
 * normals of length 3e-20 must come out unit. */
VR_TEST(test_tiny_normals, "scenes/files-tiny-normals")
{
    char text[512];
    const char *computed = triangle_ply(text, sizeof text, "0 0 0\n1e-10 0 0\n0 1.3e-12 0\n");
    const char *file = "ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\n"
                       "property float z\nproperty float nx\nproperty float ny\nproperty float nz\n"
                       "element face 1\nproperty list uchar int vertex_indices\nend_header\n"
                       "0 0 0 0 3e-20 0\n1 0 0 2e-20 2e-20 0\n0 1 0 0 0 1\n3 0 1 2\n";
    const char *const texts[2] = {computed, file};
    for (int i = 0; i < 2; ++i) {
        vr_mesh m;
        VR_EXPECT(vr_ply_load_memory(&m, (const uint8_t *)texts[i], strlen(texts[i]), "tiny", NULL) ==
                  VR_OK, "%s", vr_last_error());
        for (uint32_t v = 0; !vr_test_failures && v < m.vertex_count; ++v) {
            const float *n = m.normals + 3 * v;
            const double len2 = (double)n[0] * n[0] + (double)n[1] * n[1] + (double)n[2] * n[2];
            VR_EXPECT(fabs(len2 - 1) < 1e-6, "%s normal %u: (%g, %g, %g), |n|^2 = %.7f",
                      i ? "file" : "computed", v, n[0], n[1], n[2], len2);
        }
        if (!vr_test_failures)
            vr_mesh_free(&m);
    }
    return VR_TEST_RESULT();
}

/* The memory reader gives what the file reader gives (igea: strips with restarts). */
VR_TEST(test_ply_memory, "scenes/files-ply-memory")
{
    char buf[1024];
    const char *igea = vr_test_scene_path(buf, sizeof buf, "igea.ply");
    FILE *f = igea ? fopen(igea, "rb") : NULL;
    if (!f) {
        printf("SKIP: ../shared/scenes missing\n");
        return VR_TEST_SKIP;
    }
    fseek(f, 0, SEEK_END);
    const size_t size = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *data = malloc(size);
    VR_EXPECT(data && fread(data, 1, size, f) == size, "read %s", igea);
    fclose(f);
    vr_mesh a, b;
    VR_EXPECT(vr_ply_load(&a, igea, NULL) == VR_OK, "%s", vr_last_error());
    VR_EXPECT(data && vr_ply_load_memory(&b, data, size, "igea in memory", NULL) == VR_OK, "%s",
              vr_last_error());
    if (!vr_test_failures) {
        VR_EXPECT(a.index_count == b.index_count && a.vertex_count == b.vertex_count &&
                  !memcmp(a.indices, b.indices, a.index_count * sizeof(uint32_t)) &&
                  !memcmp(a.positions, b.positions, a.vertex_count * 3 * sizeof(float)),
                  "memory and file readers differ");
        vr_mesh_free(&a);
        vr_mesh_free(&b);
    }
    /* messages name `what`; an empty image is refused */
    VR_EXPECT_EQ(vr_ply_load_memory(&b, (const uint8_t *)"ply\n", 4, "four bytes", NULL),
                 VR_ERR_FORMAT);
    VR_EXPECT(has("four bytes"), "%s", vr_last_error());
    VR_EXPECT_EQ(vr_ply_load_memory(&b, NULL, 0, "nothing", NULL), VR_ERR_FORMAT);
    free(data);
    return VR_TEST_RESULT();
}

/* ---- non-finite data after transforms ------------------------------------------------------ */

VR_TEST(test_transform_overflow, "scenes/files-transform-overflow")
{
    vr_progress_quiet = 1;
    vr_scene sc;
    vr_mesh m;
    /* x scaled and moved by 3e38: every vertex with x > 0.14 goes to +inf */
    VR_EXPECT(vr_scene_load(&sc, "sphere:200") == VR_OK, "%s", vr_last_error());
    if (vr_test_failures)
        return VR_TEST_FAIL;
    float *t = sc.draws[0].transform;
    t[0] = 3e38f, t[12] = 3e38f;
    VR_EXPECT_EQ(vr_scene_flatten(&m, &sc), VR_ERR_FORMAT);
    VR_EXPECT(has("sphere:200: draw 1 of 1 ('sphere') after its node transform: vertex ") &&
              has("non-finite position (inf,"), "%s", vr_last_error());
    VR_EXPECT(m.positions == NULL && m.indices == NULL, "output not cleared");
    /* a uniform 1e20: positions stay finite, the normal matrix (cofactors, 1e40) does not */
    t[0] = t[5] = t[10] = 1e20f, t[12] = 0;
    VR_EXPECT_EQ(vr_scene_flatten(&m, &sc), VR_ERR_FORMAT);
    VR_EXPECT(has("vertex 0 has a non-finite normal"), "%s", vr_last_error());
    /* a sane transform still flattens */
    t[0] = t[5] = t[10] = 2;
    VR_EXPECT(vr_scene_flatten(&m, &sc) == VR_OK, "%s", vr_last_error());
    vr_mesh_free(&m);
    vr_scene_free(&sc);

    /* the same through a file: a glTF node scaled by 1e38 over a vertex at x = 10 */
    if (!make_dir())
        return VR_TEST_FAIL;
    const char *gltf =
        "{\"asset\":{\"version\":\"2.0\"},\"scene\":0,\"scenes\":[{\"nodes\":[0]}],"
        "\"nodes\":[{\"mesh\":0,\"scale\":[1e38,1e38,1e38]}],"
        "\"meshes\":[{\"name\":\"tri\",\"primitives\":[{\"attributes\":{\"POSITION\":0}}]}],"
        "\"buffers\":[{\"byteLength\":36,\"uri\":\"data:application/octet-stream;base64,"
        "AAAAAAAAAAAAAAAAAAAgQQAAAAAAAAAAAAAAAAAAIEEAAAAA\"}],"
        "\"bufferViews\":[{\"buffer\":0,\"byteOffset\":0,\"byteLength\":36}],"
        "\"accessors\":[{\"bufferView\":0,\"componentType\":5126,\"count\":3,\"type\":\"VEC3\","
        "\"min\":[0,0,0],\"max\":[10,10,0]}]}";
    char path[128];
    write_file(file_in_dir(path, sizeof path, "big.gltf"), gltf, strlen(gltf));
    VR_EXPECT_EQ(vr_mesh_load(&m, path), VR_ERR_FORMAT);
    VR_EXPECT(has(path) && has("draw 1 of 1 ('tri') after its node transform: vertex 1 has a "
                               "non-finite position (inf, 0, 0)"), "%s", vr_last_error());
    /* subdivision: midpoints of +-3e38 coordinates overflow */
    char text[512];
    const char *ply = triangle_ply(text, sizeof text, "3e38 0 0\n3e38 1 0\n0 3e38 0\n");
    write_file(file_in_dir(path, sizeof path, "huge.ply"), ply, strlen(ply));
    VR_EXPECT(vr_scene_load(&sc, path) == VR_OK, "%s", vr_last_error());
    vr_scene_free(&sc);
    char spec[160];
    snprintf(spec, sizeof spec, "%s@4", path);
    VR_EXPECT_EQ(vr_scene_load(&sc, spec), VR_ERR_FORMAT);
    VR_EXPECT(has("@4: draw 1 ('huge.ply') subdivided: vertex 3 has a non-finite position (inf"),
              "%s", vr_last_error());
    remove_dir();
    return VR_TEST_RESULT();
}

/* ---- .gts: exactly the source triangles ---------------------------------------------------- */

/* Triangles as sorted keys: ids mapped through `map` (may be NULL), 21 bits each, in their
 * smallest rotation (winding kept). Caller frees. */
static uint64_t *triangle_keys(const vr_mesh *m, const uint32_t *map)
{
    const uint32_t n = m->index_count / 3;
    uint64_t *keys = malloc(((size_t)n + 1) * sizeof *keys);
    for (uint32_t t = 0; keys && t < n; ++t) {
        uint32_t v[3];
        for (int k = 0; k < 3; ++k)
            v[k] = map ? map[m->indices[3 * t + k]] : m->indices[3 * t + k];
        keys[t] = UINT64_MAX; /* the smallest rotation, so (5,9,5) and (5,5,9) meet */
        for (int r = 0; r < 3; ++r) {
            const uint64_t key = (uint64_t)v[r] << 42 | (uint64_t)v[(r + 1) % 3] << 21 | v[(r + 2) % 3];
            keys[t] = key < keys[t] ? key : keys[t];
        }
    }
    if (keys)
        qsort(keys, n, sizeof *keys, vr_test_cmp_u64);
    return keys;
}

/* Encodes `src` in `mode` to dir/name, loads it back: exactly the source's triangle multiset
 * (through the encoder's vertex map), the source's vertex count. `old_format` writes the file
 * as versions before the degenerate list did (no list): then degenerate sources are refused. */
static void check_gts_round_trip(const vr_mesh *src, vr_gts_restart mode, const char *name,
                                 int old_format)
{
    vr_gts_options opt = vr_gts_options_default();
    opt.restart = mode;
    vr_gts g;
    vr_gts_map map;
    VR_EXPECT(vr_gts_encode(&g, &map, src, &opt) == VR_OK, "%s: %s", name, vr_last_error());
    if (vr_test_failures)
        return;
    const uint32_t listed = g.degenerate_source_count;
    if (old_format) {
        free(g.degenerate_source);
        g.degenerate_source = NULL, g.degenerate_source_count = 0;
    }
    char path[128];
    VR_EXPECT(vr_gts_write(&g, file_in_dir(path, sizeof path, name)) == VR_OK, "%s",
              vr_last_error());
    vr_mesh m;
    const vr_status s = vr_mesh_load(&m, path);
    if (old_format && listed) {
        VR_EXPECT_EQ(s, VR_ERR_FORMAT);
        VR_EXPECT(has(path) && has("compress the source again"), "%s", vr_last_error());
    } else if (s == VR_OK) {
        VR_EXPECT_EQ(m.index_count, src->index_count);
        VR_EXPECT_EQ(m.vertex_count, src->vertex_count);
        uint64_t *want = triangle_keys(src, NULL), *got = triangle_keys(&m, map.old_of_new);
        VR_EXPECT(want && got && m.index_count == src->index_count &&
                  !memcmp(want, got, src->index_count / 3 * sizeof *want),
                  "%s: the loaded triangles are not the source's multiset", name);
        free(want);
        free(got);
        vr_mesh_free(&m);
    } else {
        VR_EXPECT(0, "%s: %s", name, vr_last_error());
    }
    vr_gts_free(&g);
    vr_gts_map_free(&map);
}

VR_TEST(test_gts_source_triangles, "scenes/files-gts-source-triangles")
{
    char buf[1024];
    const char *cow = vr_test_scene_path(buf, sizeof buf, "cow.obj");
    vr_mesh src;
    if (!cow || vr_mesh_load(&src, cow) != VR_OK) {
        printf("SKIP: ../shared/scenes missing\n");
        return VR_TEST_SKIP;
    }
    if (!make_dir())
        return VR_TEST_FAIL;
    VR_EXPECT_EQ(src.index_count / 3, 5804);
    check_gts_round_trip(&src, VR_GTS_RESTART_DEGENERATE, "cow-deg.gts", 0);
    check_gts_round_trip(&src, VR_GTS_RESTART_CODE, "cow-r.gts", 0);
    /* the cow has no degenerate triangle: an old-format file is the same file and loads */
    check_gts_round_trip(&src, VR_GTS_RESTART_DEGENERATE, "cow-old.gts", 1);
    /* compress -> load -> compress: the file does not grow (it did by the emulation each round) */
    vr_gts_options opt = vr_gts_options_default();
    vr_gts g1, g2;
    vr_mesh once;
    char path[128];
    VR_EXPECT(vr_gts_encode(&g1, NULL, &src, &opt) == VR_OK &&
              vr_gts_write(&g1, file_in_dir(path, sizeof path, "cow1.gts")) == VR_OK &&
              vr_mesh_load(&once, path) == VR_OK, "%s", vr_last_error());
    if (!vr_test_failures) {
        VR_EXPECT(vr_gts_encode(&g2, NULL, &once, &opt) == VR_OK, "%s", vr_last_error());
        VR_EXPECT_EQ(g2.triangle_count, 5804);
        vr_gts_free(&g2);
        vr_mesh_free(&once);
    }
    vr_gts_free(&g1);

    /* degenerate source triangles (a repeated corner, a triangle (v, v, v)) among the cow's: the
     * file lists them, the load keeps them; an old-format file cannot, and says so */
    vr_mesh deg = src;
    deg.index_count = src.index_count + 9;
    deg.indices = malloc(deg.index_count * sizeof *deg.indices);
    memcpy(deg.indices, src.indices, src.index_count * sizeof *deg.indices);
    const uint32_t extra[9] = {5, 5, 9, 7, 7, 7, 100, 2000, 100};
    memcpy(deg.indices + src.index_count, extra, sizeof extra);
    check_gts_round_trip(&deg, VR_GTS_RESTART_DEGENERATE, "deg-deg.gts", 0);
    check_gts_round_trip(&deg, VR_GTS_RESTART_CODE, "deg-r.gts", 0);
    check_gts_round_trip(&deg, VR_GTS_RESTART_DEGENERATE, "deg-old.gts", 1);
    free(deg.indices);
    vr_mesh_free(&src);
    remove_dir();
    return VR_TEST_RESULT();
}

/* The header's degenerate list is checked like every other count. */
VR_TEST(test_gts_degenerate_list, "scenes/files-gts-degenerate-list")
{
    vr_mesh src;
    if (!vr_test_load(&src, "sphere:200"))
        return VR_TEST_FAIL;
    uint32_t *ix = realloc(src.indices, (src.index_count + 3) * sizeof *ix);
    ix[src.index_count] = 1, ix[src.index_count + 1] = 1, ix[src.index_count + 2] = 2;
    src.indices = ix, src.index_count += 3;
    vr_gts_options opt = vr_gts_options_default();
    vr_gts g;
    VR_EXPECT(vr_gts_encode(&g, NULL, &src, &opt) == VR_OK, "%s", vr_last_error());
    VR_EXPECT_EQ(g.degenerate_source_count, 1);
    VR_EXPECT(vr_gts_validate(&g, "listed") == VR_OK, "%s", vr_last_error());
    const uint32_t at = g.degenerate_source[0];
    g.degenerate_source[0] = g.strip_triangle_count; /* out of range */
    VR_EXPECT_EQ(vr_gts_validate(&g, "range"), VR_ERR_FORMAT);
    VR_EXPECT(has("degenerate source entry 0"), "%s", vr_last_error());
    g.degenerate_source[0] = at;
    g.restart = VR_GTS_RESTART_CODE; /* R mode lists nothing */
    VR_EXPECT_EQ(vr_gts_validate_counts(&g, "R"), VR_ERR_FORMAT);
    g.restart = VR_GTS_RESTART_DEGENERATE;
    /* a listed triangle that is not degenerate: the file is refused when loaded */
    if (!make_dir())
        return VR_TEST_FAIL;
    g.degenerate_source[0] = at ? 0 : 1;
    char path[128];
    VR_EXPECT(vr_gts_write(&g, file_in_dir(path, sizeof path, "lie.gts")) == VR_OK, "%s",
              vr_last_error());
    vr_mesh m;
    VR_EXPECT_EQ(vr_mesh_load(&m, path), VR_ERR_FORMAT);
    VR_EXPECT(has("is listed as a degenerate source triangle but is not degenerate"), "%s",
              vr_last_error());
    remove_dir();
    vr_gts_free(&g);
    vr_mesh_free(&src);
    return VR_TEST_RESULT();
}
