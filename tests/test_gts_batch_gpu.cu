/* test_gts_batch_gpu.cu - the geometry stage fed from compressed batches (hash decoding each
 * batch from the GTS stream in shared memory, pipeline/gts_batch.cuh) against the same stage on
 * the plain index buffer and against the CPU twin: identical queues, counters and per-vertex
 * shading counts (outputs poisoned first), culling on and off, several block sizes, N_u and
 * batch lengths (one chunk and many chunks per batch), both restart modes; hand-made meshes and
 * random streams, every shared scene, a 7M-triangle sphere. A damaged device copy of the stream
 * is reported as VR_ERR_FORMAT whenever the CPU decoder rejects it, and never read out of
 * bounds (gpu-small runs under compute-sanitizer). Without a device every test SKIPs.
 */
#include "tests/test.h"

#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include "pipeline/stage/geometry.h"
#include "raster/raster.h"
#include "pipeline/gts/gts_batch.h"
#include "pipeline/vr_check.h"
#include "scenes/scene.h"
#include "tests/test_helpers.h"

typedef struct vr_batch_cfg {
    uint32_t block, max_unique, max_indices;
} vr_batch_cfg;

/* Runs hash on `mesh` (the decoded form of g) plain and compressed on the GPU and on the CPU
 * (twin with compressed input), culling off and on, for each configuration. */
static void check_stream(const vr_gts *g, const vr_mesh *mesh, const vr_batch_cfg *cfgs,
                         size_t cfg_count, const char *what)
{
    const vr_reuse_ops *hash = vr_reuse_find("hash");
    const uint32_t tris = mesh->index_count / 3;
    vr_geometry *geo = NULL;
    vr_geometry_result plain, packed, cpu;
    memset(&plain, 0, sizeof plain);
    memset(&packed, 0, sizeof packed);
    memset(&cpu, 0, sizeof cpu);
    vr_status st;
    if ((st = vr_geometry_create(&geo, mesh)) != VR_OK ||
        (st = vr_geometry_result_alloc(&plain, tris, mesh->vertex_count)) != VR_OK ||
        (st = vr_geometry_result_alloc(&packed, tris, mesh->vertex_count)) != VR_OK ||
        (st = vr_geometry_result_alloc(&cpu, tris, mesh->vertex_count)) != VR_OK) {
        VR_EXPECT(0, "%s: %s", what, vr_last_error());
        goto done;
    }
    for (size_t c = 0; c < cfg_count; ++c)
        for (int cull = 0; cull < 2; ++cull) {
            char name[300];
            snprintf(name, sizeof name, "%s, block %u, N_u %u / %u indices%s", what,
                     cfgs[c].block, cfgs[c].max_unique, cfgs[c].max_indices,
                     cull ? ", culling" : "");
            vr_reuse_params p = vr_reuse_params_default();
            vr_camera_orbit_shader(&p.shader, mesh, 0.5f);
            p.block_size = cfgs[c].block;
            p.max_unique = cfgs[c].max_unique;
            p.max_indices = cfgs[c].max_indices;
            p.cull = cull;
            p.count = 1;
            if ((st = vr_geometry_set_gts(geo, NULL)) != VR_OK ||
                (st = vr_geometry_run(geo, hash, &p, 1, NULL)) != VR_OK ||
                (st = vr_geometry_download(geo, &plain)) != VR_OK ||
                (st = vr_geometry_set_gts(geo, g)) != VR_OK ||
                (st = vr_geometry_run(geo, hash, &p, 1, NULL)) != VR_OK ||
                (st = vr_geometry_download(geo, &packed)) != VR_OK) {
                VR_EXPECT(0, "%s: %s", name, vr_last_error());
                continue;
            }
            vr_geometry_diff d;
            VR_EXPECT(vr_geometry_compare(&d, &packed, &plain, vr_geometry_compare_mode(&p), 1, stderr, name) == 0,
                      "%s: compressed differs from plain in %llu places", name,
                      (unsigned long long)d.mismatches);
            VR_EXPECT(packed.counters.overflow == 0, "%s: %u triangles overflowed", name,
                      packed.counters.overflow);
            if (cull)
                continue;
            /* the CPU twin with compressed input, same batches and seeds */
            uint32_t *starts = NULL, count = 0;
            vr_gts_seed *seeds = NULL;
            if ((st = vr_geometry_dyn_batches(&starts, &count, mesh, p.max_unique,
                                              p.max_indices)) == VR_OK) {
                seeds = (vr_gts_seed *)malloc(((size_t)count + 1) * sizeof *seeds);
                st = seeds ? vr_gts_batch_seeds_from_index_starts(seeds, g, starts, count)
                           : VR_ERR_OOM;
            }
            if (st == VR_OK) {
                vr_gts_batch_source src;
                vr_gts_batch_source_host(&src, g);
                src.seeds = seeds;
                memset(&cpu.counters, 0, sizeof cpu.counters);
                memset(cpu.shade_counts, 0, (size_t)mesh->vertex_count * 4);
                vr_reuse_params r = vr_reuse_params_input(&p, NULL, mesh->index_count,
                                                          mesh->positions, mesh->normals,
                                                          mesh->vertex_count);
                r.gts = &src;
                r.batch_starts = starts;
                r.batch_count = count;
                r.queue = cpu.queue;
                r.counters = &cpu.counters;
                r.shade_counts = cpu.shade_counts;
                st = hash->ref(&r);
            }
            VR_EXPECT(st == VR_OK, "%s: CPU twin: %s", name, vr_last_error());
            if (st == VR_OK)
                VR_EXPECT(vr_geometry_compare(&d, &packed, &cpu, 0, 1, stderr, name) == 0,
                          "%s: GPU differs from the CPU twin in %llu places", name,
                          (unsigned long long)d.mismatches);
            free(starts);
            free(seeds);
        }
    /* strategies without a per-batch decoder refuse compressed input */
    if (vr_geometry_set_gts(geo, g) == VR_OK) {
        vr_reuse_params p = vr_reuse_params_default();
        VR_EXPECT(vr_geometry_run(geo, vr_reuse_find("sort"), &p, 0, NULL) == VR_ERR_ARG,
                  "%s: sort accepted compressed input", what);
    }
done:
    vr_geometry_result_free(&plain);
    vr_geometry_result_free(&packed);
    vr_geometry_result_free(&cpu);
    vr_geometry_destroy(geo);
}

static const vr_batch_cfg g_small_cfgs[] = {
    {256, 256, 1023}, {32, 256, 1023}, {1024, 64, 3069}, {64, 8, 30}, {256, 256, 1536}};
static const vr_batch_cfg g_big_cfgs[] = {{256, 256, 1023}, {128, 256, 1536}};

/* Encodes m in both modes, decodes it (the mesh the stage runs on) and checks. */
static void check_mesh(const vr_mesh *m, const char *what, const vr_batch_cfg *cfgs, size_t n)
{
    for (int mode = 0; mode < 2; ++mode) {
        char name[256];
        snprintf(name, sizeof name, "%s (%s)", what, mode ? "deg." : "R");
        vr_gts_options o = vr_gts_options_default();
        o.restart = (vr_gts_restart)mode;
        vr_gts g;
        vr_mesh dec;
        memset(&dec, 0, sizeof dec);
        if (vr_gts_encode(&g, NULL, m, &o) != VR_OK || vr_gts_decode_mesh(&dec, &g) != VR_OK) {
            VR_EXPECT(0, "%s: %s", name, vr_last_error());
            vr_gts_free(&g);
            continue;
        }
        check_stream(&g, &dec, cfgs, n, name);
        vr_mesh_free(&dec);
        vr_gts_free(&g);
    }
}

VR_TEST(test_small, "gpu-small/gts-batch-small", "gpu/gts-batch-small")
{
    if (vr_test_no_device())
        return VR_TEST_SKIP;
    const size_t nc = sizeof g_small_cfgs / sizeof g_small_cfgs[0];
    for (size_t i = 0; i < VR_TEST_GTS_SMALL_COUNT; ++i) {
        vr_mesh m;
        const char *name;
        if (vr_test_gts_small(i, &m, &name) != VR_OK)
            return VR_TEST_FAIL;
        check_mesh(&m, name, g_small_cfgs, nc);
        vr_mesh_free(&m);
    }
    const char *gens[] = {"foliage:10k", "sphere:2k"};
    for (size_t i = 0; i < 2; ++i) {
        vr_mesh m;
        VR_EXPECT(vr_mesh_load(&m, gens[i]) == VR_OK, "%s", vr_last_error());
        if (vr_test_failures)
            return VR_TEST_FAIL;
        check_mesh(&m, gens[i], g_small_cfgs, nc);
        vr_mesh_free(&m);
    }
    return VR_TEST_RESULT();
}

static void check_scene(const vr_mesh *m, const char *name, void *ctx)
{
    (void)ctx;
    check_mesh(m, name, g_big_cfgs, 2);
}

VR_TEST(test_scenes, "gpu/gts-batch-scenes")
{
    if (vr_test_no_device())
        return VR_TEST_SKIP;
    const int r = vr_test_gts_each_scene(check_scene, NULL);
    if (r != VR_TEST_PASS)
        return r;
    vr_mesh m;
    VR_EXPECT(vr_mesh_load(&m, "sphere:7M") == VR_OK, "%s", vr_last_error());
    if (!vr_test_failures) {
        check_mesh(&m, "sphere:7M", g_big_cfgs, 1);
        vr_mesh_free(&m);
    }
    return VR_TEST_RESULT();
}

/* Damage the device copy of C, INC or S: VR_ERR_FORMAT whenever the CPU decoder rejects the
 * damaged stream; never a fault (this test runs under memcheck in gpu-small). */
VR_TEST(test_damaged, "gpu-small/gts-batch-damaged", "gpu/gts-batch-damaged")
{
    if (vr_test_no_device())
        return VR_TEST_SKIP;
    const vr_reuse_ops *hash = vr_reuse_find("hash");
    for (int mode = 0; mode < 2; ++mode) {
        vr_gts good;
        vr_mesh dec;
        if (vr_test_gts_random_stream(&good, 3000, (vr_gts_restart)mode, 5) != VR_OK ||
            vr_gts_decode_mesh(&dec, &good) != VR_OK)
            return VR_TEST_FAIL;
        vr_geometry *geo = NULL;
        uint32_t *scratch = (uint32_t *)malloc(3 * (size_t)good.strip_triangle_count * 4);
        vr_reuse_params p = vr_reuse_params_default();
        p.block_size = 64;
        p.max_unique = 64;
        p.max_indices = 300;
        int rejected = 0;
        if (!scratch || vr_geometry_create(&geo, &dec) != VR_OK ||
            vr_geometry_set_gts(geo, &good) != VR_OK ||
            vr_geometry_run(geo, hash, &p, 1, NULL) != VR_OK) {
            VR_EXPECT(0, "setup: %s", vr_last_error());
        } else {
            const vr_gts_batch_source *src = vr_geometry_gts_source(geo);
            for (int trial = 0; trial < 120; ++trial) {
                vr_gts bad;
                if (vr_test_gts_copy(&bad, &good) != VR_OK)
                    break;
                uint32_t x = 0x9e3779b9u * (uint32_t)(trial + 1);
                x ^= x >> 15;
                uint32_t *word = NULL, *dev = NULL;
                switch (trial % 4) {
                case 0: word = &bad.c[x % src->c_words], dev = (uint32_t *)src->c + x % src->c_words; break;
                case 1: word = &bad.inc[x % src->inc_words], dev = (uint32_t *)src->inc + x % src->inc_words; break;
                default: word = &bad.s[x % bad.s_count], dev = (uint32_t *)src->s + x % bad.s_count; break;
                }
                const uint32_t saved = *word;
                *word = trial % 4 == 3 ? *word | 0xf0000000u : *word ^ (1u << (x >> 27));
                const int cpu_rejects = vr_gts_decode_scan_ref(scratch, &bad) != VR_OK;
                const int failures = vr_test_failures;
                VR_EXPECT_CUDA(cudaMemcpy(dev, word, 4, cudaMemcpyHostToDevice)); /* damage */
                if (vr_test_failures != failures) {
                    vr_gts_free(&bad);
                    break;
                }
                const vr_status st = vr_geometry_run(geo, hash, &p, 1, NULL);
                VR_EXPECT(st == VR_OK || st == VR_ERR_FORMAT, "trial %d: status %d (%s)", trial,
                          (int)st, vr_last_error());
                if (cpu_rejects) {
                    ++rejected;
                    VR_EXPECT(st == VR_ERR_FORMAT, "mode %d trial %d: the CPU decoder rejects "
                              "the damaged stream, the GPU stage ran it", mode, trial);
                }
                VR_EXPECT_CUDA(cudaMemcpy(dev, &saved, 4, cudaMemcpyHostToDevice)); /* repair */
                vr_gts_free(&bad);
            }
            VR_EXPECT(vr_geometry_run(geo, hash, &p, 1, NULL) == VR_OK, "repaired: %s",
                      vr_last_error());
            VR_EXPECT(rejected > 20, "mode %d: only %d damaged streams were malformed", mode,
                      rejected);
        }
        free(scratch);
        vr_geometry_destroy(geo);
        vr_mesh_free(&dec);
        vr_gts_free(&good);
    }
    return VR_TEST_RESULT();
}
