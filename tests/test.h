/* test.h - the tiny test framework of vreuse_tests. A test is a function returning VR_TEST_PASS,
 * VR_TEST_FAIL or VR_TEST_SKIP, defined and registered in one place:
 *
 *     VR_TEST(test_quad, "sim/quad")
 *     {
 *         VR_EXPECT_EQ(shaded, 4);
 *         return VR_TEST_RESULT();
 *     }
 *
 * A test may be registered under several names ("gpu/x", "gpu-small/x": the small group is what
 * tests/gpu.sh runs under compute-sanitizer). The runner (test_main.c) runs the registered tests
 * in link order, file by file in the order each file defines them. Asserts print file:line and
 * both values. */
#ifndef VR_TEST_H
#define VR_TEST_H

#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define VR_TEST_PASS 0
#define VR_TEST_FAIL 1
#define VR_TEST_SKIP 77

/* Registers fn under the NULL-terminated `names` (called by VR_TEST before main). */
void vr_test_register(const char *const *names, int (*fn)(void));

/* Defines the test function `fn` and registers it under the names (string literals) given. */
#define VR_TEST(fn, ...)                                                                        \
    static int fn(void);                                                                        \
    __attribute__((constructor)) static void fn##_register_(void)                               \
    {                                                                                           \
        static const char *const names_[] = {__VA_ARGS__, NULL};                              \
        vr_test_register(names_, fn);                                                           \
    }                                                                                           \
    static int fn(void)

/* Counts failed expectations of the running test; the runner resets it per test. */
extern int vr_test_failures;

/* Directory of ../shared/scenes (env VR_SCENES overrides the compiled-in default).
 * Returns NULL when it does not exist (tests then SKIP with a message). */
const char *vr_test_scenes_dir(void);
/* Fills `buf` with scenes_dir/name; returns buf, or NULL when the dir is missing. */
const char *vr_test_scene_path(char *buf, size_t n, const char *name);

/* 1 after printing "SKIP: no CUDA device: <why>" when there is no usable GPU, else 0: the first
 * line of every GPU test (`if (vr_test_no_device()) return VR_TEST_SKIP;`). */
int vr_test_no_device(void);

#define VR_EXPECT(cond, ...)                                                     \
    do {                                                                         \
        if (!(cond)) {                                                           \
            if (vr_test_failures < 10) {                                         \
                fprintf(stderr, "%s:%d: expected %s: ", __FILE__, __LINE__, #cond); \
                fprintf(stderr, __VA_ARGS__);                                    \
                fputc('\n', stderr);                                             \
            }                                                                    \
            ++vr_test_failures;                                                  \
        }                                                                        \
    } while (0)

#define VR_EXPECT_EQ(a, b)                                                            \
    do {                                                                              \
        unsigned long long va_ = (unsigned long long)(a), vb_ = (unsigned long long)(b); \
        VR_EXPECT(va_ == vb_, "%s = %llu, %s = %llu", #a, va_, #b, vb_);              \
    } while (0)

#define VR_TEST_RESULT() (vr_test_failures ? VR_TEST_FAIL : VR_TEST_PASS)

/* A CUDA call in a GPU test (a .cu file that includes pipeline/vr_check.h): a failure is a failed
 * expectation with vr_check.h's message, "<call> failed: <CUDA error string>". */
#define VR_EXPECT_CUDA(call)                                                           \
    do {                                                                               \
        const vr_status cuda_st_ = vr_cuda_status((call), VR_CUDA_WHERE, #call);       \
        VR_EXPECT(cuda_st_ == VR_OK, "%s", vr_last_error());                           \
    } while (0)

#ifdef __cplusplus
}
#endif
#endif
