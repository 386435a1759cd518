/* test_sim.c - tests of sim/ (placeholder until the module lands). */
#include "test.h"

const vr_test vr_tests_sim[] = {
    {NULL, NULL},
};
