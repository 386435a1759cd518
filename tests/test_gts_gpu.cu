/* test_gts_gpu.cu - the GPU decoder of the GTS codec (pipeline/gts_decode.cu) against the CPU
 * decoders, with both V and strip passes (tiled, and the paper's): exact equality with the
 * encoder's triangle list (output poisoned with 0xFF before every decode, each pass decoded
 * twice per context, with and without per-stage events, only its own stages launched) on hand-made
 * meshes, random streams, every shared scene and a 7M-triangle sphere in both restart modes;
 * malformed streams return VR_ERR_FORMAT with the same verdict as vr_gts_decode_scan_ref
 * (the CPU copy of the kernels' checks) in both passes and never fault (run gpu-small under
 * memcheck).
 * Groups: "gpu/gts-..." (all scenes, 7M) and "gpu-small/gts-..." (small, for the sanitizers).
 * Without a device every test prints "SKIP: no CUDA device" and skips.
 */
#include "tests/test.h"

#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include "pipeline/stage/geometry.h"
#include "pipeline/gts/gts.h"
#include "pipeline/gts/gts_math.h" /* VR_GTS_TILE */
#include "pipeline/vr_check.h"
#include "scenes/scene.h"
#include "tests/test_helpers.h"

static const vr_gts_strip_pass vr_passes[2] = {VR_GTS_STRIPS_TILED, VR_GTS_STRIPS_PAPER};
static const char *const vr_pass_names[2] = {"tiled", "paper"};

/* The V and strip stages a pass must launch (and no others from the other pass). */
static int stages_match(const vr_gts *g, int pass, const vr_gts_gpu_timing *t)
{
    const uint32_t tiled = 1u << VR_GTS_VTILE_REDUCE | 1u << VR_GTS_VTILE_SCAN |
                           1u << VR_GTS_V_TILED | 1u << VR_GTS_TILE_REDUCE |
                           1u << VR_GTS_TILE_SCAN | 1u << VR_GTS_TILE_T;
    const uint32_t paper = (g->restart == VR_GTS_RESTART_CODE ? 1u << VR_GTS_M_SCAN : 0u) |
                           1u << VR_GTS_INC_SCAN | 1u << VR_GTS_V_KERNEL | 1u << VR_GTS_Q_SCAN |
                           1u << VR_GTS_T_KERNEL;
    const uint32_t strips = t->stage_ran & (tiled | paper | 1u << VR_GTS_M_SCAN);
    for (int k = 0; k < VR_GTS_STAGE_COUNT; ++k)
        if (!(t->stage_ran & (1u << k)) && t->stage_ms[k] != 0.0f)
            return 0;
    return strips == (pass ? paper : tiled);
}

/* Decodes g on the GPU with both strip passes (tiled, paper), each twice through one context
 * (poisoned output each time; the second run with per-stage events), and compares with `want`
 * (3 * strip_triangle_count indices). The two passes must give the same verdict. Returns the
 * decode status (VR_OK when all runs matched); timing[pass] gets the evented run. */
static vr_status gpu_check(const vr_gts *g, const uint32_t *want, const char *what,
                           vr_gts_gpu_timing timing[2])
{
    vr_gts_gpu *d = NULL;
    vr_status s = vr_gts_gpu_create(&d, g);
    if (s)
        return s;
    const size_t words = 3 * (size_t)g->strip_triangle_count;
    uint32_t *got = (uint32_t *)malloc(words * sizeof *got);
    vr_status verdict[2] = {VR_OK, VR_OK};
    for (int pass = 0; pass < 2 && got; ++pass) {
        vr_gts_gpu_set_strip_pass(d, vr_passes[pass]);
        s = VR_OK;
        for (int run = 0; run < 2 && !s; ++run) {
            /* legacy-stream memset: finish it before decode's non-blocking stream starts */
            const int failures = vr_test_failures;
            VR_EXPECT_CUDA(cudaMemset((void *)vr_gts_gpu_device_indices(d), 0xff,
                                      words * sizeof *got));
            VR_EXPECT_CUDA(cudaDeviceSynchronize());
            if (vr_test_failures != failures)
                break; /* the output is not poisoned: a stale result could pass */
            vr_gts_gpu_timing t;
            s = vr_gts_gpu_decode(d, &t, run);
            if (!s)
                s = vr_gts_gpu_download(got, d);
            if (s)
                break;
            VR_EXPECT(stages_match(g, pass, &t), "%s (%s, run %d): stage mask 0x%x", what,
                      vr_pass_names[pass], run, t.stage_ran);
            if (timing && run == 1)
                timing[pass] = t;
            if (!want)
                continue;
            size_t k = 0;
            while (k < words && got[k] == want[k])
                ++k;
            VR_EXPECT(k == words, "%s (%s, run %d): GPU index %zu (triangle %zu) is %u, "
                      "expected %u", what, vr_pass_names[pass], run, k, k / 3,
                      k < words ? got[k] : 0, k < words ? want[k] : 0);
        }
        verdict[pass] = s;
    }
    VR_EXPECT(verdict[0] == verdict[1], "%s: tiled strip pass status %d, paper's %d", what,
              (int)verdict[0], (int)verdict[1]);
    free(got);
    vr_gts_gpu_destroy(d);
    return verdict[0] ? verdict[0] : verdict[1];
}

static void encode_and_check(const vr_mesh *m, const char *what, int full_check)
{
    for (int mode = 0; mode < 2; ++mode) {
        char name[300];
        snprintf(name, sizeof name, "%s (%s)", what, mode ? "deg." : "R");
        vr_gts_options o = vr_gts_options_default();
        o.restart = (vr_gts_restart)mode;
        o.keep_vertex_data = 0;
        vr_gts g;
        vr_gts_map map;
        if (vr_gts_encode(&g, &map, m, &o) != VR_OK) {
            VR_EXPECT(0, "%s: encode: %s", name, vr_last_error());
            continue;
        }
        if (full_check)
            vr_test_gts_check(&g, &map, m, name);
        vr_gts_gpu_timing t[2];
        memset(t, 0, sizeof t);
        const vr_status s = gpu_check(&g, map.indices, name, t);
        VR_EXPECT(s == VR_OK, "%s: %s", name, vr_last_error());
        for (int pass = 0; pass < 2 && !s && g.triangle_count >= 1000000; ++pass)
            printf("  %s, %s strip pass: %.3f ms with per-stage events, %.1f Gtri/s\n", name,
                   vr_pass_names[pass], t[pass].total_ms,
                   g.triangle_count / (t[pass].total_ms * 1e-3) * 1e-9);
        vr_gts_free(&g);
        vr_gts_map_free(&map);
    }
}

static void check_scene(const vr_mesh *m, const char *name, void *ctx)
{
    (void)ctx;
    encode_and_check(m, name, 0);
}

VR_TEST(test_gpu_gts_small, "gpu-small/gts-small")
{
    if (vr_test_no_device())
        return VR_TEST_SKIP;
    for (size_t i = 0; i < VR_TEST_GTS_SMALL_COUNT; ++i) {
        vr_mesh m;
        const char *name;
        if (vr_test_gts_small(i, &m, &name) != VR_OK)
            return VR_TEST_FAIL;
        encode_and_check(&m, name, 1);
        vr_mesh_free(&m);
    }
    vr_mesh m;
    if (vr_mesh_load(&m, "foliage:10k") == VR_OK) {
        encode_and_check(&m, "foliage:10k", 0);
        vr_mesh_free(&m);
    }
    return VR_TEST_RESULT();
}

/* Random streams with every code combination, against the CPU scan formulation; sizes around
 * the strip tile (VR_GTS_TILE = 2048) and, in deg. mode (|V| = n + 2), |V| around the V tile
 * (VR_GTS_VTILE = 8192: n = 8189, 8190, 8191, 16382). */
VR_TEST(test_gpu_gts_random, "gpu-small/gts-random")
{
    if (vr_test_no_device())
        return VR_TEST_SKIP;
    const uint32_t sizes[] = {1,    2,    3,    31,   32,   33,    1000,  2047,
                              2048, 2049, 6145, 8189, 8190, 8191, 16382, 70000};
    for (int mode = 0; mode < 2; ++mode)
        for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; ++k) {
            vr_gts g;
            if (vr_test_gts_random_stream(&g, sizes[k], (vr_gts_restart)mode, 7 + k) != VR_OK)
                return VR_TEST_FAIL;
            uint32_t *want = (uint32_t *)malloc(3 * 4 * (size_t)sizes[k]);
            char what[64];
            snprintf(what, sizeof what, "random stream n=%u mode %d", sizes[k], mode);
            VR_EXPECT(want && vr_gts_decode_scan_ref(want, &g) == VR_OK, "%s", vr_last_error());
            const vr_status s = gpu_check(&g, want, what, NULL);
            VR_EXPECT(s == VR_OK, "%s: %s", what, vr_last_error());
            free(want);
            vr_gts_free(&g);
        }
    return VR_TEST_RESULT();
}

VR_TEST(test_gpu_gts_fandisk, "gpu-small/gts-fandisk")
{
    if (vr_test_no_device())
        return VR_TEST_SKIP;
    char path[512];
    if (!vr_test_scene_path(path, sizeof path, "fandisk.obj")) {
        printf("SKIP: ../shared/scenes not found (set VR_SCENES)\n");
        return VR_TEST_SKIP;
    }
    vr_mesh m;
    if (vr_mesh_load(&m, path) != VR_OK) {
        VR_EXPECT(0, "%s", vr_last_error());
        return VR_TEST_FAIL;
    }
    encode_and_check(&m, "fandisk.obj", 0);
    vr_mesh_free(&m);
    return VR_TEST_RESULT();
}

/* Corrupt content behind valid counts: the GPU must say VR_ERR_FORMAT exactly when the CPU
 * scan formulation does (it mirrors the kernels' checks), and agree on the output otherwise;
 * streams of one tile and of three tiles + 300 triangles (carries between strip tiles), and
 * in deg. mode of two V tiles + 100 entries (carries between V tiles). */
VR_TEST(test_gpu_gts_malformed, "gpu-small/gts-malformed")
{
    if (vr_test_no_device())
        return VR_TEST_SKIP;
    for (int mode = 0; mode < 6; ++mode) {
        const uint32_t n = mode < 2   ? 300
                           : mode < 4 ? 3 * VR_GTS_TILE + 300
                                      : 2 * VR_GTS_VTILE + 98;
        vr_gts orig;
        if (vr_test_gts_random_stream(&orig, n, (vr_gts_restart)(mode & 1), 42) != VR_OK)
            return VR_TEST_FAIL;
        const size_t words = 3 * (size_t)orig.strip_triangle_count;
        uint32_t *want = (uint32_t *)malloc(words * 4);
        uint64_t x = 1234567 + (uint64_t)mode;
        int refused = 0;
        /* targeted: code 3 (R mode), first code N, selector 12, INC bit, future vertex, code 3
         * on the last triangle (R mode), the INC bit of the first entry of V tile 1, and a
         * padding bit past |V| in the last INC word (ignored by both V passes) */
        for (int c = 0; c < 8 && want; ++c) {
            vr_gts g;
            if (vr_test_gts_copy(&g, &orig) != VR_OK)
                break;
            const int r_mode = !(mode & 1);
            switch (c) {
            case 0: g.c[n >= VR_GTS_TILE ? VR_GTS_TILE / 16 : 0] |= r_mode ? 3u << 10 : 0u; break;
            case 1: g.c[0] &= r_mode ? ~3u : ~0u; break;
            case 2: g.s[0] = (g.s[0] & 0x0fffffffu) | 12u << 28; break;
            case 3: g.inc[1] ^= 1u << 3; break;
            case 4: g.s[0] = 0x8fffffffu; break; /* U[0] = -2^27: out of range */
            case 5: g.c[(n - 1) / 16] |= r_mode ? 3u << ((n - 1) % 16 * 2) : 0u; break;
            case 6:
                if (g.v_count > VR_GTS_VTILE)
                    g.inc[VR_GTS_VTILE / 32] ^= 1u;
                break;
            default:
                if (g.v_count % 32)
                    g.inc[g.v_count / 32] |= 1u << 31;
                break;
            }
            const vr_status cpu = vr_gts_decode_scan_ref(want, &g);
            const vr_status gpu = gpu_check(&g, cpu == VR_OK ? want : NULL, "targeted", NULL);
            VR_EXPECT(gpu == cpu, "mode %d n %u case %d: GPU status %d, CPU scan %d (%s)",
                      mode & 1, n, c, (int)gpu, (int)cpu, vr_last_error());
            vr_gts_free(&g);
        }
        /* random bit flips in C, INC and S */
        /* each decode is 4 runs of ~15 kernels: the counts keep racecheck of gpu-small within
         * about two minutes (the CPU tests and the fuzz target cover damaged streams at length) */
        const int flips = mode < 2 ? 120 : 25;
        for (int it = 0; it < flips && want; ++it) {
            vr_gts g;
            if (vr_test_gts_copy(&g, &orig) != VR_OK)
                break;
            vr_test_gts_flip_bits(&g, &x, 1 + it % 4);
            const vr_status cpu = vr_gts_decode_scan_ref(want, &g);
            const vr_status gpu = gpu_check(&g, cpu == VR_OK ? want : NULL, "flipped", NULL);
            VR_EXPECT(gpu == VR_OK || gpu == VR_ERR_FORMAT, "it %d: GPU status %d: %s", it,
                      (int)gpu, vr_last_error());
            VR_EXPECT(gpu == cpu, "mode %d n %u it %d: GPU status %d, CPU scan %d", mode & 1, n,
                      it, (int)gpu, (int)cpu);
            refused += gpu == VR_ERR_FORMAT;
            vr_gts_free(&g);
        }
        VR_EXPECT(refused > 0, "no flipped stream was refused");
        /* counts that disagree are refused on the host before any launch */
        vr_gts g = orig;
        ++g.u_count;
        vr_gts_gpu *d = NULL;
        VR_EXPECT(vr_gts_gpu_create(&d, &g) == VR_ERR_FORMAT && !d, "u_count + 1 accepted");
        g = orig;
        g.strip_triangle_count = 0;
        VR_EXPECT(vr_gts_gpu_create(&d, &g) == VR_ERR_FORMAT && !d, "no triangles accepted");
        free(want);
        vr_gts_free(&orig);
    }
    return VR_TEST_RESULT();
}

VR_TEST(test_gpu_gts_scenes, "gpu/gts-scenes")
{
    if (vr_test_no_device())
        return VR_TEST_SKIP;
    return vr_test_gts_each_scene(check_scene, NULL);
}

VR_TEST(test_gpu_gts_7m, "gpu/gts-7M")
{
    if (vr_test_no_device())
        return VR_TEST_SKIP;
    vr_mesh m;
    if (vr_mesh_load(&m, "sphere:7M") != VR_OK) {
        VR_EXPECT(0, "%s", vr_last_error());
        return VR_TEST_FAIL;
    }
    encode_and_check(&m, "sphere:7M", 0);
    vr_mesh_free(&m);
    return VR_TEST_RESULT();
}
