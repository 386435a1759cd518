/* example.c - vreuse used as a library, through the installed header alone: builds a grid mesh
 * in its own buffers (it loads nothing), runs the simulator, the dynamic batch builder, the codec
 * round trip, a batcher's CPU twin and, when there is a CUDA device, the same batcher on the GPU;
 * checks each result against another and prints one line per step. Exit 0 when every check
 * holds, 1 otherwise.
 * Build: cc example.c $(pkg-config --cflags --libs vreuse), or CMake with find_package(vreuse)
 * and vreuse::vreuse (tests/example/CMakeLists.txt); tests/library.sh does both.
 */
#include <vreuse.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GRID 64 /* quads per side: 4,225 vertices, 8,192 triangles */

static int g_failed;

/* Prints the failure of `what` with the library's message and remembers it. */
static void fail(const char *what, vr_status s)
{
    fprintf(stderr, "example: %s failed: %s: %s\n", what, vr_status_string(s), vr_last_error());
    g_failed = 1;
}

static void check(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "example: check failed: %s\n", what);
        g_failed = 1;
    }
}

/* A GRID x GRID grid of quads in the z = 0 plane, two triangles per quad, row by row. The
 * arrays are ours: vr_mesh only points at them. */
static int make_grid(vr_mesh *m)
{
    const uint32_t side = GRID + 1;
    m->vertex_count = side * side;
    m->index_count = GRID * GRID * 6;
    m->positions = malloc((size_t)m->vertex_count * 3 * sizeof(float));
    m->normals = malloc((size_t)m->vertex_count * 3 * sizeof(float));
    m->texcoords = NULL;
    m->indices = malloc((size_t)m->index_count * sizeof(uint32_t));
    if (!m->positions || !m->normals || !m->indices)
        return -1;
    for (uint32_t y = 0; y < side; ++y)
        for (uint32_t x = 0; x < side; ++x) {
            float *p = m->positions + 3 * (y * side + x), *n = m->normals + 3 * (y * side + x);
            p[0] = 2.0f * x / GRID - 1.0f, p[1] = 2.0f * y / GRID - 1.0f, p[2] = 0.0f;
            n[0] = 0.0f, n[1] = 0.0f, n[2] = 1.0f;
        }
    uint32_t *t = m->indices;
    for (uint32_t y = 0; y < GRID; ++y)
        for (uint32_t x = 0; x < GRID; ++x) {
            const uint32_t a = y * side + x, b = a + 1, c = a + side, d = c + 1;
            *t++ = a, *t++ = b, *t++ = d;
            *t++ = a, *t++ = d, *t++ = c;
        }
    return 0;
}

/* The simulator: the reuse of every scheme on our index buffer. Returns the dynamic batching's
 * result, which the batch builder and the batchers must match. */
static vr_sim_result simulate(const vr_mesh *m)
{
    vr_sim_result ideal, fifo, lru, warp, dyn;
    memset(&dyn, 0, sizeof dyn);
    vr_status s;
    if ((s = vr_sim_ideal(&ideal, m->indices, m->index_count, m->vertex_count, NULL)) ||
        (s = vr_sim_fifo(&fifo, m->indices, m->index_count, m->vertex_count, 16, NULL)) ||
        (s = vr_sim_lru(&lru, m->indices, m->index_count, m->vertex_count, 16, NULL)) ||
        (s = vr_sim_warp(&warp, m->indices, m->index_count, m->vertex_count,
                         VR_WARP_BATCH_DEFAULT, 32, NULL)) ||
        (s = vr_sim_dynamic(&dyn, m->indices, m->index_count, m->vertex_count, VR_NU_DEFAULT,
                            VR_MAX_INDICES_DEFAULT, NULL))) {
        fail("simulator", s);
        return dyn;
    }
    printf("sim: reuse ideal %.4f, fifo:16 %.4f, lru:16 %.4f, warp %.4f, dynamic %.4f "
           "(%llu batches, %.3f shaded/tri)\n",
           ideal.reuse, fifo.reuse, lru.reuse, warp.reuse, dyn.reuse,
           (unsigned long long)dyn.batches, dyn.shaded_per_tri);
    check(ideal.shaded_vertices == m->vertex_count, "ideal shades every vertex once");
    check(dyn.shaded_vertices >= ideal.shaded_vertices, "dynamic batches shade at least ideal");
    return dyn;
}

/* The batch builder: where the dynamic batches of hash, phash and sort begin. */
static void build_batches(const vr_mesh *m, const vr_sim_result *dyn)
{
    uint32_t *starts = malloc((vr_batches_dynamic_bound(m->index_count) + 1) * sizeof *starts);
    size_t count = 0;
    vr_status s = starts ? vr_batches_dynamic(starts, &count, m->indices, m->index_count,
                                              m->vertex_count, VR_NU_DEFAULT,
                                              VR_MAX_INDICES_DEFAULT)
                         : VR_ERR_OOM;
    if (s) {
        fail("batch builder", s);
    } else {
        printf("batches: %zu dynamic batches (N_u %u, at most %u indices), the first at "
               "indices 0, %u, %u; the simulator counted %llu\n",
               count, VR_NU_DEFAULT, VR_MAX_INDICES_DEFAULT, starts[1], starts[2],
               (unsigned long long)dyn->batches);
        check(count == dyn->batches && starts[count] == m->index_count,
              "the batch builder makes the simulator's batches");
    }
    free(starts);
}

/* The codec: compress, serialize, parse, decode; the decoded triangles are the source's. */
static void codec_round_trip(const vr_mesh *m)
{
    vr_gts_options opt = vr_gts_options_default();
    vr_gts g, back;
    vr_gts_map map;
    vr_status s = vr_gts_encode(&g, &map, m, &opt);
    if (s) {
        fail("gts encode", s);
        return;
    }
    const size_t bytes = vr_gts_file_bytes(&g);
    uint8_t *file = malloc(bytes);
    uint32_t *tris = malloc(3 * (size_t)g.strip_triangle_count * sizeof *tris);
    size_t written = 0;
    memset(&back, 0, sizeof back);
    if (!file || !tris)
        s = VR_ERR_OOM;
    if (!s)
        s = vr_gts_write_memory(file, bytes, &written, &g);
    if (!s)
        s = vr_gts_read_memory(&back, file, written, "example stream");
    if (!s)
        s = vr_gts_decode_ref(tris, &back);
    if (s) {
        fail("gts round trip", s);
    } else {
        /* every source triangle comes back once, as the same corners in the same winding */
        uint32_t found = 0;
        int same = memcmp(tris, map.indices, 3 * (size_t)g.strip_triangle_count * 4) == 0;
        for (uint32_t i = 0; same && i < g.strip_triangle_count; ++i) {
            const uint32_t src = map.triangle_source[i];
            if (src == VR_GTS_EMULATED)
                continue;
            const uint32_t *a = tris + 3 * (size_t)i, *b = m->indices + 3 * (size_t)src;
            int rotated = 0;
            for (int r = 0; r < 3; ++r)
                rotated |= map.old_of_new[a[r]] == b[0] && map.old_of_new[a[(r + 1) % 3]] == b[1] &&
                           map.old_of_new[a[(r + 2) % 3]] == b[2];
            same = rotated;
            ++found;
        }
        vr_gts_stats st;
        vr_gts_stats_compute(&st, &g);
        printf("codec: %u triangles, %.2f bits/triangle of connectivity (a %zu-byte file with "
               "the vertex data); decoded: %u strip triangles, %s\n",
               g.triangle_count, st.file_bpt, written, g.strip_triangle_count,
               same && found == g.triangle_count ? "every source triangle exactly once"
                                                 : "DIFFERENT");
        check(same && found == g.triangle_count, "the codec returns the source triangles");
    }
    free(file);
    free(tris);
    vr_gts_free(&back);
    vr_gts_free(&g);
    vr_gts_map_free(&map);
}

/* A batcher: hash on the CPU (its twin, always) and on the GPU (when there is one); the twin's
 * invocations are the simulator's, the GPU's queue and counts the twin's. */
static void run_batcher(const vr_mesh *m, const vr_sim_result *dyn)
{
    const vr_reuse_ops *hash = vr_reuse_find("hash");
    vr_reuse_params cfg = vr_reuse_params_default();
    cfg.count = 1; /* count invocations and per-vertex shading */
    const uint32_t triangles = m->index_count / 3;
    vr_geometry_result cpu, gpu;
    memset(&gpu, 0, sizeof gpu);
    vr_status s = vr_geometry_result_alloc(&cpu, triangles, m->vertex_count);
    if (!s)
        s = vr_geometry_ref(&cpu, hash, m, &cfg);
    if (s) {
        fail("cpu twin", s);
        vr_geometry_result_free(&cpu);
        return;
    }
    printf("cpu twin %s: %llu invocations, %u triangles queued; the simulator says %llu\n",
           hash->name, cpu.counters.invocations, cpu.counters.queue_count,
           (unsigned long long)dyn->shaded_vertices);
    check(cpu.counters.invocations == dyn->shaded_vertices, "the twin shades what the simulator "
                                                            "counts");
    vr_geometry *ctx = NULL;
    float ms = 0;
    s = vr_geometry_create(&ctx, m);
    if (s == VR_ERR_NO_DEVICE) {
        printf("gpu %s: skipped (%s)\n", hash->name, vr_last_error());
    } else if (s || (s = vr_geometry_run(ctx, hash, &cfg, 1, &ms)) ||
               (s = vr_geometry_result_alloc(&gpu, triangles, m->vertex_count)) ||
               (s = vr_geometry_download(ctx, &gpu))) {
        fail("gpu batcher", s);
    } else {
        vr_geometry_diff d;
        const uint64_t bad = vr_geometry_compare(&d, &gpu, &cpu, 0, 1, stderr, "example");
        printf("gpu %s on %s: %llu invocations, %.3f ms; queue and counts %s the CPU twin's\n",
               hash->name, vr_gpu_device_name(), gpu.counters.invocations, ms,
               bad ? "DIFFER from" : "equal");
        check(bad == 0, "the GPU batcher equals its CPU twin");
    }
    vr_geometry_destroy(ctx);
    vr_geometry_result_free(&gpu);
    vr_geometry_result_free(&cpu);
}

int main(void)
{
    vr_progress_quiet = 1; /* a library call prints no progress line */
    const uint32_t linked = vr_version();
    printf("vreuse %s: header %d.%d.%d, library %u.%u.%u, GPU %s\n", VR_VERSION_STRING,
           VR_VERSION_MAJOR, VR_VERSION_MINOR, VR_VERSION_PATCH, linked / 10000,
           linked / 100 % 100, linked % 100, vr_gpu_available() ? "available" : "not available");
    if (linked / 100 != VR_VERSION / 100) {
        fprintf(stderr, "example: built against vreuse %s, running with %u.%u: rebuild\n",
                VR_VERSION_STRING, linked / 10000, linked / 100 % 100);
        return 1;
    }
    vr_mesh m;
    if (make_grid(&m) != 0) {
        fprintf(stderr, "example: out of memory\n");
        return 1;
    }
    printf("mesh: %d x %d grid, %u vertices, %u triangles\n", GRID, GRID, m.vertex_count,
           m.index_count / 3);
    const vr_sim_result dyn = simulate(&m);
    build_batches(&m, &dyn);
    codec_round_trip(&m);
    run_batcher(&m, &dyn);
    free(m.positions);
    free(m.normals);
    free(m.indices);
    printf("example: %s\n", g_failed ? "FAILED" : "all checks passed");
    return g_failed;
}
