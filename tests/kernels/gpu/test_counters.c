/* test_counters.c -- the reasons the document gives when CUPTI refuses, and
 * the answer when the library cannot be loaded. No GPU needed: the advice
 * is plain text, and the load happens before any CUDA call. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/gpu/counters.h"

Test(counters, insufficient_privileges_says_how_to_allow_profiling) {
    char reason[ERR_LEN];
    counters_explain(COUNTERS_ERR_INSUFFICIENT_PRIVILEGES, "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES",
                     "cuptiRangeProfilerStart", reason);
    cr_expect(strstr(reason, "cuptiRangeProfilerStart: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES (35)") == reason, "%s",
              reason);
    cr_expect(strstr(reason, "RmProfilingAdminOnly") != NULL, "%s", reason);
    cr_expect(strstr(reason, "NVreg_RestrictProfilingToAdminUsers=0") != NULL, "%s", reason);
    cr_expect(strstr(reason, "CAP_SYS_ADMIN") != NULL, "%s", reason);
}

Test(counters, another_profiler_and_old_gpus_have_their_own_advice) {
    char reason[ERR_LEN];
    counters_explain(COUNTERS_ERR_MULTIPLE_SUBSCRIBERS, NULL, "cuptiRangeProfilerEnable", reason);
    cr_expect(strstr(reason, "another profiler") != NULL, "%s", reason);
    cr_expect(strstr(reason, "(39)") != NULL, "%s", reason);
    counters_explain(COUNTERS_ERR_NOT_SUPPORTED, "not supported", "cuptiProfilerHostInitialize", reason);
    cr_expect(strstr(reason, "Volta or newer") != NULL, "%s", reason);
    counters_explain(1, "invalid parameter", "cuptiRangeProfilerSetConfig", reason);
    cr_expect_str_eq(reason, "cuptiRangeProfilerSetConfig: invalid parameter (1)");
}

Test(counters, a_missing_library_is_a_reason_not_a_failure) {
    setenv("DV_CUPTI_LIBRARY", "/nonexistent/libcupti.so", 1);
    char library[256] = "x", reason[ERR_LEN] = "";
    struct counters *c = counters_create(0, 9, library, reason);
    cr_expect_null(c);
    cr_expect_str_eq(library, "");
    cr_expect(strstr(reason, "DV_CUPTI_LIBRARY=/nonexistent/libcupti.so cannot be loaded") != NULL ||
                  strstr(reason, "no CUPTI headers") != NULL,
              "%s", reason);
    counters_free(c);
}

Test(counters, gpus_before_volta_are_too_old) {
    char library[256], reason[ERR_LEN] = "";
    cr_expect_null(counters_create(0, 6, library, reason));
    cr_expect(strstr(reason, "6.x is too old") != NULL || strstr(reason, "no CUPTI headers") != NULL, "%s", reason);
}
