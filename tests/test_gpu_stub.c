/* test_gpu_stub.c - the GPU test groups of a build without CUDA (their .cu files are not
 * built): one test per group that says so and skips, so `ctest` reports the GPU tests as
 * skipped, never as passed.
 */
#include "tests/test.h"

VR_TEST(test_gpu_unavailable, "gpu/all", "gpu/raster", "gpu/gts-all", "gpu/gts-batch",
        "gpu/compact", "gpu/gpupatch")
{
    printf("SKIP: no CUDA device (this build has no CUDA; GPU tests run on the H100 via tests/gpu.sh)\n");
    return VR_TEST_SKIP;
}
