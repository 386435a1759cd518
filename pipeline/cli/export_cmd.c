/* export_cmd.c - `vreuse export SCENE [--order O] [--seed N] -o OUT.(obj|ply|glb|gts)`: the scene
 * as vreuse sees it - vertices joined as the loader joins them, draws flattened with their
 * transforms, subdivided (@N) or generated, in triangle order O - written as a file
 * (pipeline/cli/mesh_write.h), so `vreuse info OUT` reports the same counts and
 * `vreuse sim OUT --order file` the same reuse as `vreuse sim SCENE --order O`. The file is then
 * read back through the same loader and compared: counts, and (except .gts, whose codec orders
 * triangles itself) the same triangles in the same order up to a renaming of vertices, which is
 * what every simulated count depends on; a difference is a warning naming it.
 * Try: `vreuse export ../shared/scenes/igea.ply --order forsyth -o igea.glb`.
 */
#include "pipeline/cli/cli.h"
#include "pipeline/cli/commands.h"
#include "pipeline/cli/mesh_write.h"
#include "scenes/scene.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char *const g_format_titles[VR_MESH_FORMAT_COUNT] = {
    "OBJ", "PLY, binary", "glTF 2.0 binary", "GTS, compressed"};

/* Whether `back` holds m's triangles in m's order with corners in the same rotation, its
 * vertices a one-to-one renaming of m's; *first_bad = the first triangle where it does not.
 * diff[0..2]: the largest difference of a position, normal, texcoord value between renamed
 * vertices. -1 when out of memory. */
static int same_triangles(const vr_mesh *m, const vr_mesh *back, uint32_t *first_bad,
                          double diff[3])
{
    *first_bad = 0;
    diff[0] = diff[1] = diff[2] = 0;
    if (back->index_count != m->index_count)
        return 0;
    uint32_t *to_back = malloc((size_t)m->vertex_count * sizeof *to_back);
    uint32_t *to_m = malloc((size_t)back->vertex_count * sizeof *to_m);
    if (!to_back || !to_m) {
        free(to_back);
        free(to_m);
        return -1;
    }
    memset(to_back, 0xff, (size_t)m->vertex_count * sizeof *to_back);
    memset(to_m, 0xff, (size_t)back->vertex_count * sizeof *to_m);
    int same = 1;
    for (uint32_t i = 0; i < m->index_count && same; ++i) {
        const uint32_t a = m->indices[i], b = back->indices[i];
        if (to_back[a] == UINT32_MAX && to_m[b] == UINT32_MAX)
            to_back[a] = b, to_m[b] = a;
        if (to_back[a] != b || to_m[b] != a) {
            same = 0;
            *first_bad = i / 3;
        }
    }
    for (uint32_t a = 0; same && a < m->vertex_count; ++a) {
        const uint32_t b = to_back[a];
        if (b == UINT32_MAX)
            continue;
        for (int k = 0; k < 3; ++k) {
            diff[0] = fmax(diff[0], fabs(m->positions[3 * a + k] - back->positions[3 * b + k]));
            diff[1] = fmax(diff[1], fabs(m->normals[3 * a + k] - back->normals[3 * b + k]));
        }
        for (int k = 0; k < 2 && m->texcoords && back->texcoords; ++k)
            diff[2] = fmax(diff[2], fabs(m->texcoords[2 * a + k] - back->texcoords[2 * b + k]));
    }
    free(to_back);
    free(to_m);
    return same;
}

/* Reads `out` back and says how it compares with `m` (counts `want`): one line on stdout when
 * it is the same, a warning on stderr naming the difference otherwise. 1 on failure. */
static int check_back(const char *out, vr_mesh_format fmt, const vr_mesh *m,
                      const vr_mesh_counts *want)
{
    vr_mesh back;
    if (vr_mesh_load(&back, out) != VR_OK)
        return vr_cli_fail(1, "export", "%s was written but does not read back: %s", out,
                           vr_last_error());
    vr_mesh_counts got;
    if (vr_mesh_count(&got, &back) != VR_OK) {
        vr_mesh_free(&back);
        return vr_cli_fail_last("export");
    }
    char b[6][32];
    const int assimp = fmt == VR_MESH_OBJ || fmt == VR_MESH_GLB;
    if (memcmp(&got, want, sizeof got) != 0) { /* vertices, referenced, triangles, degenerate */
        fflush(stdout); /* after the line that names what was written */
        fprintf(stderr,
                "vreuse export: warning: %s reads back as %s vertices (%s referenced) and %s "
                "triangles, the scene has %s (%s) and %s%s\n",
                out, vr_format_count(b[0], got.vertices),
                vr_format_count(b[1], got.referenced_vertices),
                vr_format_count(b[2], got.triangles),
                vr_format_count(b[3], want->vertices),
                vr_format_count(b[4], want->referenced_vertices),
                vr_format_count(b[5], want->triangles),
                assimp ? ": assimp reads this format, and it drops unreferenced vertices and joins "
                         "vertices equal within 1e-5 in position, normal and texcoords; .ply and "
                         ".gts keep every vertex"
                       : "");
        vr_mesh_free(&back);
        return 0;
    }
    if (fmt == VR_MESH_GTS) {
        printf("  read back: the same counts; triangles in the stream's order (the codec's), so "
               "`vreuse sim %s --order file` simulates that order\n", out);
        vr_mesh_free(&back);
        return 0;
    }
    uint32_t bad;
    double diff[3];
    const int same = same_triangles(m, &back, &bad, diff);
    vr_mesh_free(&back);
    if (same < 0)
        return vr_cli_fail(1, "export", "%s: out of memory comparing the file with the scene", out);
    if (!same) {
        fflush(stdout);
        fprintf(stderr, "vreuse export: warning: %s reads back with the same counts but other "
                "triangles from triangle %u on%s\n", out, bad,
                assimp ? " (assimp joined vertices equal within 1e-5); .ply keeps them" : "");
        return 0;
    }
    /* how far the values moved: OBJ is text that assimp parses within about an ulp, the loader
     * renormalizes every normal, glTF stores texcoord v as 1 - v */
    static const char *const names[3] = {"positions", "normals", "texcoords"};
    char values[160] = "";
    size_t len = 0;
    for (int k = 0; k < (m->texcoords ? 3 : 2); ++k) {
        char d[32] = "exact";
        if (diff[k] > 0)
            snprintf(d, sizeof d, "within %.2g", diff[k]);
        len += (size_t)snprintf(values + len, sizeof values - len, "%s%s %s", k ? ", " : "",
                                names[k], d);
    }
    printf("  read back: the same %s vertices and %s triangles in the same order; %s\n",
           vr_format_count(b[0], want->vertices), vr_format_count(b[1], want->triangles), values);
    return 0;
}

static const vr_cli_command g_cmd = {
    "export", "SCENE -o OUT",
    "Writes the scene as vreuse sees it - vertices joined as the loader joins them, draws\n"
    "flattened with their transforms, subdivided (@N) or generated, in one triangle order -\n"
    "to OUT, so `vreuse info OUT` reports the same counts and `vreuse sim OUT --order file`\n"
    "the same reuse as `vreuse sim SCENE --order O`. OUT's extension picks the format:\n"
    ".obj (text), .ply (binary), .glb (glTF 2.0 binary) or .gts (compressed: the codec\n"
    "orders the triangles itself, so the counts match but the order is the stream's).\n"
    "The file is read back and compared with the scene; a difference is a warning.\n"
    "\n"
    "SCENE is a file (OBJ, PLY, glTF 2.0, ...), a .gts file, or a generator: sphere[:N],\n"
    "terrain[:N], foliage[:N], optionally @N to subdivide (bunny.obj@1M).",
    "OBJ and glTF files are read through assimp, which drops unreferenced vertices and joins\n"
    "vertices equal within 1e-5; the read-back check names it when that changes the counts.",
    VR_CLI_ONE_SCENE};

int vr_cmd_export(int argc, char **argv)
{
    vr_cli_orders orders = {{VR_ORDER_FILE}, 1};
    uint64_t seed = 1;
    const char *out = NULL;
    int no_check = 0;
    const vr_cli_opt opts[] = {
        VR_CLI_ORDER(&orders, "file: as loaded; one order"),
        VR_CLI_SEED(&seed),
        VR_CLI_OUT(&out, "the file to write (required): OUT.obj, OUT.ply, OUT.glb or OUT.gts"),
        {"no-check", 0, NULL, "do not read the file back to compare it with the scene", NULL,
         &no_check, 1, 0, 0, 0, NULL},
        {0}};
    vr_cli_args args;
    VR_CLI_PARSE_OR_RETURN(&g_cmd, opts, argc, argv, &args);
    if (!out)
        return vr_cli_fail(VR_CLI_USAGE, "export", "-o OUT is required (OUT.obj, OUT.ply, "
                           "OUT.glb or OUT.gts)");
    const int fmt = vr_mesh_format_of(out);
    if (fmt < 0)
        return vr_cli_fail(VR_CLI_USAGE, "export", "-o '%s': the extension picks the format: "
                           ".obj, .ply, .glb or .gts", out);
    if (orders.count != 1)
        return vr_cli_fail(VR_CLI_USAGE, "export", "--order: one order per file (%d given)",
                           orders.count);
    const char *what = g_format_titles[fmt];
    if (vr_cli_out_check(out, what) != VR_OK) /* before the scene loads */
        return vr_cli_fail_last("export");

    const char *spec = args.v[0];
    const vr_order order = (vr_order)orders.v[0];
    vr_mesh m;
    if (vr_mesh_load(&m, spec) != VR_OK)
        return vr_cli_fail_last("export");
    vr_mesh_counts counts;
    vr_status s = vr_mesh_reorder(&m, order, seed);
    if (!s)
        s = vr_mesh_count(&counts, &m);
    if (s) {
        vr_mesh_free(&m);
        return vr_cli_fail_last("export");
    }
    char comment[256];
    const int seeded = ((int)order & ~VR_ORDER_FETCH) == VR_ORDER_RANDOM;
    char seed_note[40] = "";
    if (seeded)
        snprintf(seed_note, sizeof seed_note, ", seed %llu", (unsigned long long)seed);
    snprintf(comment, sizeof comment, "vreuse export of %s, order %s%s", vr_cli_scene_label(spec),
             vr_order_name(order), seed_note);
    vr_mesh_write_job job = {&m, (vr_mesh_format)fmt, comment};
    if (vr_cli_write_via(out, what, vr_mesh_write_job_run, &job) != VR_OK) {
        vr_mesh_free(&m);
        return vr_cli_fail_last("export");
    }
    struct stat st;
    char b[3][32];
    printf("vreuse export: %s (order %s) -> %s (%s): %s vertices, %s triangles, %s bytes\n",
           vr_cli_scene_label(spec), vr_order_name(order), out, what,
           vr_format_count(b[0], counts.vertices), vr_format_count(b[1], counts.triangles),
           vr_format_count(b[2], stat(out, &st) == 0 ? (unsigned long long)st.st_size : 0));
    /* a destination that is no regular file (/dev/null) was written directly: nothing to read */
    const int readable = stat(out, &st) == 0 && S_ISREG(st.st_mode);
    const int rc = no_check || !readable ? 0 : check_back(out, (vr_mesh_format)fmt, &m, &counts);
    vr_mesh_free(&m);
    return rc;
}
