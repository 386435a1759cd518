/* test.h - the tiny test framework of vreuse_tests. A test is `int f(void)` returning
 * VR_TEST_PASS, VR_TEST_FAIL or VR_TEST_SKIP; each test file exports one NULL-terminated table
 * (vr_tests_<group>[]) that test_main.c lists. Asserts print file:line and both values. */
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

typedef struct vr_test {
    const char *name; /* "group/name", matched by prefix on the command line */
    int (*fn)(void);
} vr_test;

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

/* The groups test_main.c runs, one table per test file (the gpu ones come from
 * tests/test_gpu_stub.c in a build without CUDA). */
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
extern const vr_test vr_tests_load_files[];

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
