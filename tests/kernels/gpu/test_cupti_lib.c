/* test_cupti_lib.c -- the process's libcupti and the one check of every
 * CUPTI call, no GPU needed: the advice a failed call carries, what the
 * check says of a call and where it is, and (on the CUPTI stand-in,
 * tests/support/cupti_standin.c) that the library is loaded once for the
 * process and its entry points are resolved from it.
 */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/base/status.h"
#include "kernels/gpu/cupti_lib.h"

Test(cupti_lib, insufficient_privileges_says_how_to_allow_profiling) {
    char reason[ERR_LEN];
    cupti_lib_explain(CUPTI_LIB_ERR_INSUFFICIENT_PRIVILEGES, "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES",
                     "cuptiRangeProfilerStart", reason);
    cr_expect(strstr(reason, "cuptiRangeProfilerStart: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES (35)") == reason, "%s",
              reason);
    cr_expect(strstr(reason, "RmProfilingAdminOnly") != NULL, "%s", reason);
    cr_expect(strstr(reason, "NVreg_RestrictProfilingToAdminUsers=0") != NULL, "%s", reason);
    cr_expect(strstr(reason, "CAP_SYS_ADMIN") != NULL, "%s", reason);
}

Test(cupti_lib, another_profiler_and_old_gpus_have_their_own_advice) {
    char reason[ERR_LEN];
    cupti_lib_explain(CUPTI_LIB_ERR_MULTIPLE_SUBSCRIBERS, NULL, "cuptiRangeProfilerEnable", reason);
    cr_expect(strstr(reason, "another profiler") != NULL, "%s", reason);
    cr_expect(strstr(reason, "(39)") != NULL, "%s", reason);
    cupti_lib_explain(CUPTI_LIB_ERR_NOT_SUPPORTED, "not supported", "cuptiProfilerHostInitialize", reason);
    cr_expect(strstr(reason, "Volta or newer") != NULL, "%s", reason);
    cupti_lib_explain(1, "invalid parameter", "cuptiRangeProfilerSetConfig", reason);
    cr_expect_str_eq(reason, "cuptiRangeProfilerSetConfig: invalid parameter (1)");
}

/* The check names the call as written and where it is, from the call
 * itself; success says nothing. */
Test(cupti_lib, the_check_names_the_call_and_where_it_is) {
    char reason[ERR_LEN] = "untouched";
    cr_expect_eq(cupti_lib_check(0, "cuptiSubscribe(&s)", "kernels/gpu/instr.c", 7, reason), 0);
    cr_expect_str_eq(reason, "untouched");
    const int line = __LINE__ + 1;
    cr_expect_eq(CUPTI_LIB_CALL(CUPTI_LIB_ERR_INSUFFICIENT_PRIVILEGES + 0, reason), -1);
    char want[128];
    snprintf(want, sizeof want, "CUPTI_LIB_ERR_INSUFFICIENT_PRIVILEGES + 0 at tests/kernels/gpu/test_cupti_lib.c:%d: ",
             line);
    cr_expect(strncmp(reason, want, strlen(want)) == 0, "%s", reason);
    cr_expect(strstr(reason, "(35); the driver restricts") != NULL, "%s", reason);
    cr_expect_eq(cupti_lib_check(999, "x()", "y.c", 1, NULL), -1, "a NULL reason is allowed");
}

Test(cupti_lib, no_entry_point_without_the_library) {
    char reason[ERR_LEN] = "";
    cr_expect_null(cupti_lib_sym("cuptiRangeProfilerStart", "CUDA 12.6 or newer", reason));
    cr_expect(strstr(reason, "cuptiRangeProfilerStart: the library is not loaded") != NULL, "%s", reason);
}

#ifdef DV_CUPTI_STANDIN

/* The first library found is the process's: a second open hands out the
 * same one whatever the environment says by then; its entry points come
 * from it, and a missing one says which and what has it. */
Test(cupti_lib, the_library_is_loaded_once_for_the_process) {
    setenv("DV_CUPTI_LIBRARY", DV_CUPTI_STANDIN, 1);
    char a[256] = "", b[256] = "", reason[ERR_LEN] = "";
    void *first = cupti_lib_open(a, sizeof a, reason);
    cr_assert_not_null(first, "%s", reason);
    cr_expect_str_eq(a, DV_CUPTI_STANDIN);
    setenv("DV_CUPTI_LIBRARY", "/nonexistent/libcupti.so", 1);
    cr_expect_eq(cupti_lib_open(b, sizeof b, reason), first);
    cr_expect_str_eq(b, DV_CUPTI_STANDIN);
    cr_expect_not_null(cupti_lib_sym("cuptiRangeProfilerStart", "CUDA 12.6 or newer", reason), "%s", reason);
    cr_expect_null(cupti_lib_sym("cuptiNoSuchCall", "CUDA 99 or newer", reason));
    char want[512];
    snprintf(want, sizeof want, "CUPTI: %s has no cuptiNoSuchCall (CUDA 99 or newer)", DV_CUPTI_STANDIN);
    cr_expect_str_eq(reason, want);
    /* With the library, the check has CUPTI's own text for the result. */
    cr_expect_eq(CUPTI_LIB_CALL(CUPTI_LIB_ERR_NOT_SUPPORTED + 0, reason), -1);
    cr_expect(strstr(reason, ": CUPTI_ERROR_NOT_SUPPORTED (27); this GPU or driver") != NULL, "%s", reason);
}

/* A search that finds nothing is made again by the next open. */
Test(cupti_lib, a_library_not_found_is_looked_for_again) {
    setenv("DV_CUPTI_LIBRARY", "/nonexistent/libcupti.so", 1);
    char path[256] = "x", reason[ERR_LEN] = "";
    cr_expect_null(cupti_lib_open(path, sizeof path, reason));
    cr_expect_str_eq(path, "");
    cr_expect(strstr(reason, "DV_CUPTI_LIBRARY=/nonexistent/libcupti.so cannot be loaded") != NULL, "%s", reason);
    setenv("DV_CUPTI_LIBRARY", DV_CUPTI_STANDIN, 1);
    cr_expect_not_null(cupti_lib_open(path, sizeof path, reason), "%s", reason);
    cr_expect_str_eq(path, DV_CUPTI_STANDIN);
}

#endif
