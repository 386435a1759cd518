/* test_main.c - runner of vreuse_tests: `vreuse_tests [prefix...]` runs the tests whose names
 * start with a prefix (all when none), prints one OK/FAIL/SKIP line each and
 * "N passed, M failed, K skipped". Exit 0 when all ran and passed, 1 on any failure,
 * 77 when every selected test was skipped (ctest's SKIP_RETURN_CODE). */
#include "tests/test.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "pipeline/stage/geometry.h" /* vr_gpu_available */

int vr_test_failures;

/* The registered tests, in registration order. */
typedef struct test_entry {
    const char *name; /* "group/name", matched by prefix on the command line */
    int (*fn)(void);
} test_entry;
static test_entry *g_tests;
static size_t g_test_count, g_test_capacity;

void vr_test_register(const char *const *names, int (*fn)(void))
{
    for (; *names; ++names) {
        if (g_test_count == g_test_capacity) {
            g_test_capacity = g_test_capacity ? 2 * g_test_capacity : 256;
            g_tests = realloc(g_tests, g_test_capacity * sizeof *g_tests);
            if (!g_tests) {
                fprintf(stderr, "vreuse_tests: out of memory registering tests\n");
                exit(1);
            }
        }
        g_tests[g_test_count].name = *names;
        g_tests[g_test_count].fn = fn;
        ++g_test_count;
    }
}

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

int vr_test_no_device(void)
{
    if (vr_gpu_available())
        return 0;
    printf("SKIP: %s\n", vr_gpu_device_name()); /* "no CUDA device: <why>" */
    return 1;
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
    /* a name registered twice is a copy-paste slip that would hide a test */
    for (size_t i = 0; i < g_test_count; ++i)
        for (size_t k = 0; k < i; ++k)
            if (!strcmp(g_tests[i].name, g_tests[k].name)) {
                fprintf(stderr, "vreuse_tests: two tests are named '%s'\n", g_tests[i].name);
                return 1;
            }
    int passed = 0, failed = 0, skipped = 0;
    for (size_t i = 0; i < g_test_count; ++i) {
        const test_entry *t = &g_tests[i];
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
