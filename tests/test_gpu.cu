/* test_gpu.cu - GPU tests (placeholder). */
#include "test.h"

static int test_gpu_pending(void) { return VR_TEST_SKIP; }

extern "C" const vr_test vr_tests_gpu[] = {
    {"gpu/pending", test_gpu_pending},
    {NULL, NULL},
};
