/* test_reuse.c - tests of reuse/ (placeholder until the module lands). */
#include "test.h"

const vr_test vr_tests_reuse[] = {
    {NULL, NULL},
};
