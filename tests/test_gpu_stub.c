/* test_gpu_stub.c - the GPU test groups of a build without CUDA (their .cu files are not
 * built): one test per group that says so and skips, so `ctest` reports the GPU tests as
 * skipped, never as passed.
 */
#include "tests/test.h"

static int test_gpu_unavailable(void)
{
    printf("SKIP: no CUDA device (this build has no CUDA; GPU tests run on the H100 via tests/gpu.sh)\n");
    return VR_TEST_SKIP;
}

const vr_test vr_tests_gpu[] = {
    {"gpu/all", test_gpu_unavailable},
    {NULL, NULL},
};

const vr_test vr_tests_raster_gpu[] = {
    {"gpu/raster", test_gpu_unavailable},
    {NULL, NULL},
};

const vr_test vr_tests_gts_gpu[] = {
    {"gpu/gts-all", test_gpu_unavailable},
    {NULL, NULL},
};

const vr_test vr_tests_gts_batch_gpu[] = {
    {"gpu/gts-batch", test_gpu_unavailable},
    {NULL, NULL},
};
