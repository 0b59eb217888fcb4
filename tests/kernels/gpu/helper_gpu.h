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

/* Expects every row of measured report `r` measured and its check passed
 * over every thread of the grid (r->config.threads), naming the first wrong
 * thread with the expected and the observed value when not. */
struct dv_report;
void helper_expect_all_checked(const struct dv_report *r);

#endif
