/* test_scenes.c - tests of scenes/ (placeholder until the module lands). */
#include "test.h"

const vr_test vr_tests_scenes[] = {
    {NULL, NULL},
};
