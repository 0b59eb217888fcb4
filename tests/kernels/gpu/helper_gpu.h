/* helper_gpu.h -- GPU presence for tests: GPU suites skip with CUDA's reason. */
#ifndef DV_HELPER_GPU_H
#define DV_HELPER_GPU_H

#include <criterion/criterion.h>

/* 1 when device 0 is usable; otherwise 0 with `why` (ERR_LEN) from CUDA. */
int helper_gpu_available(char *why);

/* Skips the current test, printing the line ctest's SKIP_REGULAR_EXPRESSION
 * matches, when there is no usable GPU. Call at the top of a GPU test. */
#define HELPER_REQUIRE_GPU()                                                    \
    do {                                                                        \
        char why_[512];                                                         \
        if (!helper_gpu_available(why_)) {                                      \
            printf("SKIPPED: no CUDA device: %s\n", why_);                      \
            fflush(stdout);                                                     \
            cr_skip_test("SKIPPED: no CUDA device: %s", why_);                  \
        }                                                                       \
    } while (0)

#endif
