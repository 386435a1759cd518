/* sim_cmd.c - `vreuse sim SCENE...`: loads each scene, reorders its triangles, and simulates
 * the ideal cache, FIFO / LRU post-transform caches, the per-multiprocessor parallel cache,
 * warp voting and dynamic batching (Kenzel et al. 2018, Table 1), printed as aligned tables,
 * CSV, JSON and an SVG plot. Argument parsing and loading only; the work is in sim/.
 * Try: `vreuse sim ../shared/scenes/stanford-bunny.obj --order file,forsyth --plot bunny.svg`.
 */
#include "pipeline/cli/commands.h"
#include "scenes/scene.h"
#include "sim/sim.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ORDERS VR_ORDER_COUNT

static void usage(FILE *f)
{
    fprintf(f,
            "usage: vreuse sim SCENE... [options]\n"
            "\n"
            "Simulates how many vertex-shader invocations each reuse scheme needs, as reuse =\n"
            "1 - invocations / indices: the ideal (every referenced vertex once), k-entry FIFO\n"
            "and LRU post-transform caches, a per-multiprocessor parallel LRU cache (hits only on\n"
            "results of an earlier wave of the same multiprocessor), static batches with warp\n"
            "voting (Algorithm 1) and dynamic batches (hash, phash and sort shade the same).\n"
            "\n"
            "  SCENE            a file (OBJ, PLY, glTF 2.0, ...) or a generator: sphere[:N],\n"
            "                   terrain[:N], foliage[:N], optionally @N to subdivide (default:\n"
            "                   sphere, 82k triangles)\n"
            "  --order LIST     triangle orders, comma separated: file, forsyth, tipsify, random\n"
            "                   (default forsyth, the paper's preprocessing)\n"
            "  --cache SPEC     cache sweep; SPEC is [fifo:|lru:]SIZES, SIZES comma separated\n"
            "                   entries or A..B for powers of two (default 4..4096 for both);\n"
            "                   'fifo:8,16|lru:32' or repeated --cache for both policies. Once\n"
            "                   given, only the named policies run; 'none': no sweep\n"
            "  --parallel S,W,BYTES...  parallel cache: S multiprocessors, W concurrent\n"
            "                   invocations each, cache bytes per multiprocessor (K = 1024)\n"
            "                   (default 28,1024,16K,32K,64K); 'none' to skip\n"
            "  --vertex-bytes N bytes per cached vertex in the parallel cache (default 32)\n"
            "  --assign A       how indices reach the multiprocessors: contiguous (S runs of the\n"
            "                   buffer, default), roundrobin (W-index chunks dealt in turn), both\n"
            "  --batch SPEC     warp=BATCH[/WARP],dyn=N_U/MAX_INDICES or warp=none, dyn=none\n"
            "                   (default warp=96/32,dyn=256/1023)\n"
            "  --csv F|-        CSV (one row per strategy and size) to file F or stdout\n"
            "  --json F|-       JSON to file F or stdout\n"
            "  --plot F.svg     SVG plot of reuse against cache size; with several scenes or\n"
            "                   orders one file each, named F-<scene>-<order>.svg\n"
            "  --seed N         seed of --order random (default 1)\n"
            "  --threads N      worker threads (default: one per CPU, at most 8)\n"
            "  --quiet          no progress output\n"
            "  --help           this text\n"
            "\n"
            "Vertices are identified as the loader shares them (OBJ corners joined on equal\n"
            "attributes, UV seams split); verts in the table counts referenced vertices.\n");
}

/* A positive integer with an optional binary K / M suffix; 0 on success. */
static int parse_size(const char *s, const char *end, int binary_suffix, uint32_t *out)
{
    char buf[32];
    size_t n = (size_t)(end - s);
    if (n == 0 || n >= sizeof buf)
        return -1;
    memcpy(buf, s, n);
    buf[n] = 0;
    char *e = NULL;
    errno = 0;
    unsigned long long v = strtoull(buf, &e, 10);
    if (e == buf || errno || buf[0] == '-')
        return -1;
    if (binary_suffix && (*e == 'k' || *e == 'K'))
        v <<= 10, ++e;
    else if (binary_suffix && (*e == 'm' || *e == 'M'))
        v <<= 20, ++e;
    if (*e || v == 0 || v > 0xFFFFFFFFull)
        return -1;
    *out = (uint32_t)v;
    return 0;
}

/* SIZES: "8,16,32" or "4..4096" (powers of two) or a mix; appends to list. */
static int parse_size_list(const char *s, uint32_t *list, uint32_t *count, const char *opt)
{
    while (*s) {
        const char *comma = strchr(s, ',');
        const char *end = comma ? comma : s + strlen(s);
        const char *dots = strstr(s, "..");
        uint32_t a, b;
        if (dots && dots < end) {
            if (parse_size(s, dots, 1, &a) || parse_size(dots + 2, end, 1, &b) || a > b) {
                fprintf(stderr, "vreuse sim: %s: bad range '%.*s' (want A..B, 1 <= A <= B)\n",
                        opt, (int)(end - s), s);
                return -1;
            }
            for (uint64_t k = a; k <= b; k *= 2) {
                if (*count == VR_SIM_MAX_CACHES) {
                    fprintf(stderr, "vreuse sim: %s: more than %d sizes\n", opt,
                            VR_SIM_MAX_CACHES);
                    return -1;
                }
                list[(*count)++] = (uint32_t)k;
            }
        } else {
            if (parse_size(s, end, 1, &a)) {
                fprintf(stderr, "vreuse sim: %s: bad size '%.*s' (a positive count)\n", opt,
                        (int)(end - s), s);
                return -1;
            }
            if (*count == VR_SIM_MAX_CACHES) {
                fprintf(stderr, "vreuse sim: %s: more than %d sizes\n", opt, VR_SIM_MAX_CACHES);
                return -1;
            }
            list[(*count)++] = a;
        }
        s = comma ? comma + 1 : end;
    }
    return 0;
}

/* One policy list: "fifo:SIZES", "lru:SIZES" or "SIZES" (both). */
static int parse_cache_part(const char *v, vr_sim_config *cfg)
{
    if (!strncmp(v, "fifo:", 5))
        return parse_size_list(v + 5, cfg->fifo_sizes, &cfg->fifo_count, "--cache");
    if (!strncmp(v, "lru:", 4))
        return parse_size_list(v + 4, cfg->lru_sizes, &cfg->lru_count, "--cache");
    if (parse_size_list(v, cfg->fifo_sizes, &cfg->fifo_count, "--cache"))
        return -1;
    return parse_size_list(v, cfg->lru_sizes, &cfg->lru_count, "--cache");
}

/* --cache SPEC, SPEC = PART['|'PART...] or "none". */
static int parse_cache(const char *v, vr_sim_config *cfg, int *seen)
{
    if (!*seen) { /* the first --cache replaces the default sweep */
        cfg->fifo_count = cfg->lru_count = 0;
        *seen = 1;
    }
    if (!strcmp(v, "none"))
        return 0;
    char part[256];
    for (const char *s = v; *s;) {
        const char *bar = strchr(s, '|');
        size_t n = bar ? (size_t)(bar - s) : strlen(s);
        if (n == 0 || n >= sizeof part) {
            fprintf(stderr, "vreuse sim: --cache: bad spec '%s'\n", v);
            return -1;
        }
        memcpy(part, s, n);
        part[n] = 0;
        if (parse_cache_part(part, cfg))
            return -1;
        s = bar ? bar + 1 : s + n;
    }
    return 0;
}

static int parse_parallel(const char *v, vr_sim_config *cfg)
{
    if (!strcmp(v, "none")) {
        cfg->parallel_count = 0;
        return 0;
    }
    uint32_t field = 0, n = 0;
    for (const char *s = v; *s;) {
        const char *comma = strchr(s, ',');
        const char *end = comma ? comma : s + strlen(s);
        uint32_t x;
        if (parse_size(s, end, field >= 2, &x)) {
            fprintf(stderr, "vreuse sim: --parallel: bad value '%.*s' in '%s' (want S,W,BYTES...)\n",
                    (int)(end - s), s, v);
            return -1;
        }
        if (field == 0)
            cfg->sm_count = x;
        else if (field == 1)
            cfg->wave_size = x;
        else if (n == VR_SIM_MAX_PARALLEL) {
            fprintf(stderr, "vreuse sim: --parallel: more than %d cache sizes\n",
                    VR_SIM_MAX_PARALLEL);
            return -1;
        } else
            cfg->parallel_bytes[n++] = x;
        ++field;
        s = comma ? comma + 1 : end;
    }
    if (n == 0) {
        fprintf(stderr, "vreuse sim: --parallel '%s': want S,W and at least one cache size, "
                        "e.g. 28,1024,16K,32K,64K\n", v);
        return -1;
    }
    cfg->parallel_count = n;
    return 0;
}

/* "warp=96/32,dyn=256/1023", either part optional, "none" disables. */
static int parse_batch(const char *v, vr_sim_config *cfg)
{
    for (const char *s = v; *s;) {
        const char *comma = strchr(s, ',');
        const char *end = comma ? comma : s + strlen(s);
        int warp = !strncmp(s, "warp=", 5), dyn = !strncmp(s, "dyn=", 4);
        const char *val = s + (warp ? 5 : dyn ? 4 : 0);
        if (!warp && !dyn) {
            fprintf(stderr, "vreuse sim: --batch: '%.*s' is neither warp=... nor dyn=...\n",
                    (int)(end - s), s);
            return -1;
        }
        if (end - val == 4 && !strncmp(val, "none", 4)) {
            *(warp ? &cfg->warp : &cfg->dynamic) = 0;
        } else {
            const char *slash = memchr(val, '/', (size_t)(end - val));
            uint32_t a, b = 0;
            if (parse_size(val, slash ? slash : end, 0, &a) ||
                (slash && parse_size(slash + 1, end, 0, &b)) || (dyn && !slash)) {
                fprintf(stderr, "vreuse sim: --batch: bad '%.*s' (want warp=96[/32] or "
                                "dyn=256/1023)\n", (int)(end - s), s);
                return -1;
            }
            if (warp) {
                cfg->warp = 1;
                cfg->warp_batch = a;
                if (slash)
                    cfg->warp_size = b;
            } else {
                cfg->dynamic = 1;
                cfg->dyn_max_unique = a;
                cfg->dyn_max_indices = b;
            }
        }
        s = comma ? comma + 1 : end;
    }
    return 0;
}

/* Scene label for tables: the file name without directories, or the generator spec. */
static void scene_label(char *dst, size_t n, const char *spec)
{
    const char *slash = strrchr(spec, '/');
    snprintf(dst, n, "%s", slash && slash[1] ? slash + 1 : spec);
}

/* F.svg -> F-<scene>-<order>.svg, keeping only file-name-safe characters of the labels. */
static void plot_path(char *dst, size_t n, const char *base, const vr_sim_report *r, int several)
{
    if (!several) {
        snprintf(dst, n, "%s", base);
        return;
    }
    const char *dot = strrchr(base, '.');
    const char *slash = strrchr(base, '/');
    if (!dot || (slash && dot < slash))
        dot = base + strlen(base);
    char tag[96];
    snprintf(tag, sizeof tag, "-%s-%s", r->scene, r->order);
    for (char *c = tag + 1; *c; ++c)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
              *c == '-' || *c == '_' || *c == '.'))
            *c = '_';
    snprintf(dst, n, "%.*s%s%s", (int)(dot - base), base, tag, dot);
}

typedef vr_status (*writer_fn)(FILE *, const vr_sim_report *, uint32_t, const vr_sim_config *);

static int write_output(const char *path, writer_fn fn, const vr_sim_report *reports,
                        uint32_t count, const vr_sim_config *cfg, const char *what)
{
    FILE *f = strcmp(path, "-") ? fopen(path, "w") : stdout;
    if (!f) {
        fprintf(stderr, "vreuse sim: cannot write %s '%s': %s\n", what, path, strerror(errno));
        return 1;
    }
    vr_status s = fn(f, reports, count, cfg);
    if (f != stdout && fclose(f) != 0 && s == VR_OK)
        s = VR_ERROR(VR_ERR_IO, "closing '%s' failed", path);
    if (s) {
        fprintf(stderr, "vreuse sim: %s '%s': %s\n", what, path, vr_last_error());
        return 1;
    }
    return 0;
}

static int opt_value(int argc, char **argv, int *i, const char **out)
{
    /* "--csv --quiet" must not write a file named --quiet. */
    if (*i + 1 >= argc || !strncmp(argv[*i + 1], "--", 2)) {
        fprintf(stderr, "vreuse sim: %s needs a value (see vreuse sim --help)\n", argv[*i]);
        return -1;
    }
    *out = argv[++*i];
    return 0;
}

int vr_cmd_sim(int argc, char **argv)
{
    vr_sim_config cfg = vr_sim_config_default();
    int orders[MAX_ORDERS] = {VR_ORDER_FORSYTH}, order_count = 1, cache_seen = 0;
    const char *csv = NULL, *json = NULL, *plot = NULL;
    unsigned long long seed = 1;
    const char **scenes = calloc((size_t)argc + 1, sizeof *scenes);
    uint32_t scene_count = 0;
    if (!scenes) {
        fprintf(stderr, "vreuse sim: out of memory\n");
        return 1;
    }
    int rc = 0;
    for (int i = 1; i < argc && rc == 0; ++i) {
        const char *a = argv[i], *v = NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            free(scenes);
            return 0;
        } else if (!strcmp(a, "--quiet")) {
            vr_progress_quiet = 1;
        } else if (!strcmp(a, "--order")) {
            if (opt_value(argc, argv, &i, &v))
                rc = 2;
            order_count = 0;
            for (const char *s = v; rc == 0 && s && *s;) {
                const char *comma = strchr(s, ',');
                char name[32];
                snprintf(name, sizeof name, "%.*s", (int)(comma ? comma - s : (long)strlen(s)), s);
                int o = vr_order_parse(name), repeated = 0;
                for (int k = 0; k < order_count; ++k)
                    repeated |= orders[k] == o;
                if (o < 0 || repeated || order_count == MAX_ORDERS) {
                    fprintf(stderr, "vreuse sim: --order: unknown or repeated order '%s' "
                                    "(file, forsyth, tipsify, random)\n", name);
                    rc = 2;
                } else {
                    orders[order_count++] = o;
                }
                s = comma ? comma + 1 : NULL;
            }
            if (rc == 0 && order_count == 0) {
                fprintf(stderr, "vreuse sim: --order: empty list\n");
                rc = 2;
            }
        } else if (!strcmp(a, "--cache")) {
            if (opt_value(argc, argv, &i, &v) || parse_cache(v, &cfg, &cache_seen))
                rc = 2;
        } else if (!strcmp(a, "--parallel")) {
            if (opt_value(argc, argv, &i, &v) || parse_parallel(v, &cfg))
                rc = 2;
        } else if (!strcmp(a, "--vertex-bytes")) {
            if (opt_value(argc, argv, &i, &v) || parse_size(v, v + strlen(v), 0, &cfg.vertex_bytes)) {
                fprintf(stderr, "vreuse sim: --vertex-bytes wants a positive count\n");
                rc = 2;
            }
        } else if (!strcmp(a, "--assign")) {
            if (opt_value(argc, argv, &i, &v))
                rc = 2;
            else if (!strcmp(v, "contiguous"))
                cfg.assign_mask = 1u << VR_SIM_CONTIGUOUS;
            else if (!strcmp(v, "roundrobin"))
                cfg.assign_mask = 1u << VR_SIM_ROUNDROBIN;
            else if (!strcmp(v, "both"))
                cfg.assign_mask = (1u << VR_SIM_CONTIGUOUS) | (1u << VR_SIM_ROUNDROBIN);
            else {
                fprintf(stderr, "vreuse sim: --assign: '%s' is not contiguous, roundrobin or "
                                "both\n", v);
                rc = 2;
            }
        } else if (!strcmp(a, "--batch")) {
            if (opt_value(argc, argv, &i, &v) || parse_batch(v, &cfg))
                rc = 2;
        } else if (!strcmp(a, "--csv") || !strcmp(a, "--json") || !strcmp(a, "--plot")) {
            if (opt_value(argc, argv, &i, &v))
                rc = 2;
            else
                *(!strcmp(a, "--csv") ? &csv : !strcmp(a, "--json") ? &json : &plot) = v;
        } else if (!strcmp(a, "--seed") || !strcmp(a, "--threads")) {
            char *end = NULL;
            if (opt_value(argc, argv, &i, &v) == 0) {
                errno = 0;
                unsigned long long x = strtoull(v, &end, 0);
                if (!*v || *end || errno || *v == '-' || (a[2] == 't' && x > VR_SIM_MAX_THREADS)) {
                    fprintf(stderr, "vreuse sim: bad %s '%s'\n", a, v);
                    rc = 2;
                } else if (a[2] == 's') {
                    seed = x;
                } else {
                    cfg.threads = (uint32_t)x;
                }
            } else {
                rc = 2;
            }
        } else if (a[0] == '-' && a[1] != '\0') {
            fprintf(stderr, "vreuse sim: unknown option '%s'\n", a);
            usage(stderr);
            rc = 2;
        } else {
            scenes[scene_count++] = a;
        }
    }
    if (rc == 0 && csv && json && !strcmp(csv, "-") && !strcmp(json, "-")) {
        fprintf(stderr, "vreuse sim: --csv - and --json - cannot both go to stdout\n");
        rc = 2;
    }
    if (rc == 0 && plot && !strcmp(plot, "-")) {
        fprintf(stderr, "vreuse sim: --plot needs a file name\n");
        rc = 2;
    }
    if (rc == 0 && vr_sim_config_check(&cfg) != VR_OK) {
        fprintf(stderr, "vreuse sim: %s\n", vr_last_error());
        rc = 2;
    }
    if (rc) {
        free(scenes);
        return rc;
    }
    if (scene_count == 0)
        scenes[scene_count++] = VR_DEFAULT_SCENE;

    vr_sim_report *reports = calloc((size_t)scene_count * (size_t)order_count, sizeof *reports);
    if (!reports) {
        fprintf(stderr, "vreuse sim: out of memory\n");
        free(scenes);
        return 1;
    }
    uint32_t report_count = 0;
    for (uint32_t sc = 0; sc < scene_count; ++sc) {
        vr_mesh mesh;
        vr_status s = vr_mesh_load(&mesh, scenes[sc]);
        if (s) {
            fprintf(stderr, "vreuse sim: %s\n", vr_last_error());
            rc = 1;
            continue;
        }
        for (int o = 0; o < order_count; ++o) {
            /* Each order starts from the file order; reorder replaces the index array. */
            vr_mesh m = mesh;
            m.indices = malloc((size_t)mesh.index_count * sizeof *m.indices);
            if (!m.indices) {
                fprintf(stderr, "vreuse sim: %s: out of memory copying %u indices\n",
                        scenes[sc], mesh.index_count);
                rc = 1;
                break;
            }
            memcpy(m.indices, mesh.indices, (size_t)mesh.index_count * sizeof *m.indices);
            /* +fetch renumbers vertices and replaces the vertex arrays, so it must not free
             * the ones this copy shares with `mesh`: the simulator needs indices only */
            m.positions = m.normals = m.texcoords = NULL;
            s = vr_mesh_reorder(&m, (vr_order)orders[o], seed);
            vr_sim_report *r = &reports[report_count];
            scene_label(r->scene, sizeof r->scene, scenes[sc]);
            snprintf(r->order, sizeof r->order, "%s", vr_order_name((vr_order)orders[o]));
            if (!s)
                s = vr_sim_run_all(r, m.indices, m.index_count, m.vertex_count, &cfg);
            free(m.indices);
            if (s) {
                fprintf(stderr, "vreuse sim: %s (%s order): %s\n", scenes[sc], r->order,
                        vr_last_error());
                rc = 1;
                continue;
            }
            ++report_count;
        }
        vr_mesh_free(&mesh);
    }

    int stdout_taken = (csv && !strcmp(csv, "-")) || (json && !strcmp(json, "-"));
    if (report_count && !stdout_taken)
        vr_sim_print_table(stdout, reports, report_count, &cfg);
    if (report_count && csv && write_output(csv, vr_sim_write_csv, reports, report_count, &cfg, "CSV"))
        rc = 1;
    if (report_count && json &&
        write_output(json, vr_sim_write_json, reports, report_count, &cfg, "JSON"))
        rc = 1;
    for (uint32_t r = 0; plot && r < report_count; ++r) {
        char path[1024];
        plot_path(path, sizeof path, plot, &reports[r], report_count > 1);
        FILE *f = fopen(path, "w");
        vr_status s = f ? vr_sim_write_svg(f, &reports[r], &cfg) : VR_ERR_IO;
        if (f && fclose(f) != 0 && s == VR_OK)
            s = VR_ERR_IO;
        if (s) {
            fprintf(stderr, "vreuse sim: cannot write plot '%s': %s\n", path,
                    f ? vr_last_error() : strerror(errno));
            rc = 1;
        } else if (!vr_progress_quiet) {
            fprintf(stderr, "vreuse sim: wrote %s\n", path);
        }
    }
    free(reports);
    free(scenes);
    return rc;
}
