/* test_main.c - runner of vreuse_tests: `vreuse_tests [prefix...]` runs the tests whose names
 * start with a prefix (all when none), prints one OK/FAIL/SKIP line each and
 * "N passed, M failed, K skipped". Exit 0 when all ran and passed, 1 on any failure,
 * 77 when every selected test was skipped (ctest's SKIP_RETURN_CODE). */
#include "tests/test.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

int vr_test_failures;

extern const vr_test vr_tests_scenes[];
extern const vr_test vr_tests_sim[];
extern const vr_test vr_tests_reuse[];
extern const vr_test vr_tests_dynamic[];
extern const vr_test vr_tests_warp_vote[];
extern const vr_test vr_tests_gpu[];
extern const vr_test vr_tests_raster[];
extern const vr_test vr_tests_gts[];
extern const vr_test vr_tests_gts_gpu[];
extern const vr_test vr_tests_gts_scene[];
extern const vr_test vr_tests_gts_batch[];
extern const vr_test vr_tests_gts_batch_gpu[];
extern const vr_test vr_tests_raster_gpu[];
extern const vr_test vr_tests_plot[];
extern const vr_test vr_tests_load_assimp[];

static const vr_test *const g_groups[] = {vr_tests_scenes, vr_tests_sim, vr_tests_reuse, vr_tests_warp_vote,
                                          vr_tests_dynamic, vr_tests_gpu, vr_tests_plot, vr_tests_raster,
                                          vr_tests_raster_gpu, vr_tests_gts, vr_tests_gts_scene, vr_tests_gts_gpu,
                                          vr_tests_gts_batch, vr_tests_gts_batch_gpu,
                                          vr_tests_load_assimp};

const char *vr_test_scenes_dir(void)
{
    const char *dir = getenv("VR_SCENES");
    if (!dir || !*dir)
        dir = VR_SCENES_DIR;
    struct stat st;
    return stat(dir, &st) == 0 && S_ISDIR(st.st_mode) ? dir : NULL;
}

const char *vr_test_scene_path(char *buf, size_t n, const char *name)
{
    const char *dir = vr_test_scenes_dir();
    if (!dir)
        return NULL;
    snprintf(buf, n, "%s/%s", dir, name);
    return buf;
}

static int selected(const char *name, int argc, char **argv)
{
    if (argc < 2)
        return 1;
    for (int i = 1; i < argc; ++i)
        if (strncmp(name, argv[i], strlen(argv[i])) == 0)
            return 1;
    return 0;
}

int main(int argc, char **argv)
{
    int passed = 0, failed = 0, skipped = 0;
    for (size_t g = 0; g < sizeof g_groups / sizeof g_groups[0]; ++g)
        for (const vr_test *t = g_groups[g]; t->name; ++t) {
            if (!selected(t->name, argc, argv))
                continue;
            vr_test_failures = 0;
            struct timespec t0, t1;
            clock_gettime(CLOCK_MONOTONIC, &t0);
            int r = t->fn();
            clock_gettime(CLOCK_MONOTONIC, &t1);
            double ms = (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6;
            if (r == VR_TEST_PASS && vr_test_failures)
                r = VR_TEST_FAIL;
            const char *tag = r == VR_TEST_PASS ? "OK  " : r == VR_TEST_SKIP ? "SKIP" : "FAIL";
            printf("%s %-40s %8.1f ms\n", tag, t->name, ms);
            fflush(stdout);
            if (r == VR_TEST_PASS)
                ++passed;
            else if (r == VR_TEST_SKIP)
                ++skipped;
            else
                ++failed;
        }
    printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
    if (failed)
        return 1;
    if (passed == 0 && skipped > 0)
        return VR_TEST_SKIP;
    if (passed == 0) {
        fprintf(stderr, "no test matches the given prefix\n");
        return 1;
    }
    return 0;
}
