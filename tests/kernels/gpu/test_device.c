/* test_device.c -- what the measurement entry does where there is no GPU,
 * the pure parts of the device module (FP32 lanes per compute capability,
 * the driver release), and the CUDA call checker: a failing call's error
 * names that call's own text and its file and line (the checks here fail on
 * any machine, with a GPU or without).
 *
 * On a machine without a GPU (CI), measuring must fail cleanly with DV_ENOGPU
 * and CUDA's own words; on a GPU machine that test is skipped (the gpu suite
 * covers it).
 */
#include <criterion/criterion.h>
#include <string.h>

#include "tests/kernels/gpu/helper_gpu.h"
#include "kernels/gpu/cuda_call.h"
#include "kernels/gpu/device.h"
#include "kernels/gpu/lesson_kernels.h"
#include "kernels/gpu/measure.h"
#include "kernels/gpu/session.h"
#include "kernels/gpu/timing.h"

Test(device, without_a_gpu_measure_says_what_cuda_reported) {
    char why[ERR_LEN];
    if (helper_gpu_available(why)) cr_skip_test("a GPU is present: covered by gpu_runner");
    struct dv_options o;
    experiment_defaults(&o);
    struct dv_report *r = experiment_report_create();
    char err[ERR_LEN] = "";
    cr_assert_eq(measure_run(&o, r, err), DV_ENOGPU, "%s", err);
    cr_assert(strstr(err, "cudaGetDeviceCount") != NULL, "%s", err);
    cr_assert_eq(r->device.present, 0);
    cr_assert(strlen(r->device.reason) > 10, "reason: '%s'", r->device.reason);
    experiment_report_free(r);
}

Test(device, fp32_lanes_per_sm) {
    cr_assert_eq(device_fp32_lanes(7, 5), 64);  /* T4 */
    cr_assert_eq(device_fp32_lanes(8, 0), 64);  /* A100 */
    cr_assert_eq(device_fp32_lanes(8, 6), 128); /* GA10x */
    cr_assert_eq(device_fp32_lanes(9, 0), 128); /* H100 / H200 */
    cr_assert_eq(device_fp32_lanes(1, 0), 0);
}

Test(device, driver_release_from_the_proc_version_line) {
    char out[32];
    cr_assert_eq(device_driver_release("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  "
                                       "Release Build  (dvs-builder@U22)  Thu Sep  4 2025\n", out, sizeof(out)), 0);
    cr_assert_str_eq(out, "580.159.04");
    cr_assert_eq(device_driver_release("NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 "
                                       "01:15:15 UTC 2023\n", out, sizeof(out)), 0);
    cr_assert_str_eq(out, "535.104.05");
    cr_assert_eq(device_driver_release("something else 1.2\n", out, sizeof(out)), -1);
    cr_assert_str_eq(out, "");
}

/* A driver older than the runtime: the sentence names the minimum (R580,
 * 580.65.06) and what was found; no driver at all, or one new enough, is
 * not "too old". */
Test(device, a_driver_too_old_for_the_runtime_is_named_with_the_minimum) {
    char out[ERR_LEN] = "";
    cr_assert_eq(device_driver_too_old(12040, 13000, "550.54.15", out, sizeof(out)), 1);
    cr_expect(strstr(out, "too old") && strstr(out, "CUDA 13.0 runtime"), "%s", out);
    cr_expect(strstr(out, "R580") && strstr(out, "580.65.06"), "%s", out);
    cr_expect(strstr(out, "driver 550.54.15 (CUDA 12.4)"), "%s", out);
    cr_assert_eq(device_driver_too_old(12080, 13000, "", out, sizeof(out)), 1);
    cr_expect(strstr(out, "CUDA 12.8 (its release not known)"), "%s", out);
    out[0] = '\0';
    cr_expect_eq(device_driver_too_old(0, 13000, "", out, sizeof(out)), 0, "no driver: another reason");
    cr_expect_eq(device_driver_too_old(13000, 13000, "580.65.06", out, sizeof(out)), 0);
    cr_expect_eq(device_driver_too_old(13020, 13000, "580.95.05", out, sizeof(out)), 0);
    cr_expect_str_eq(out, "", "nothing written when it is not too old");
}

/* The error of a failed call starts with the call as written here, then
 * where: this file (from the repository's top) and this line. */
Test(device, a_failing_call_names_its_own_text_and_line) {
    char err[ERR_LEN] = "", where[128];
    const int line = __LINE__ + 1;
    const int rc = DV_CUDA_CALL(cudaSetDevice(-1), err);
    cr_assert_neq(rc, 0, "cudaSetDevice(-1) succeeded");
    cr_assert(rc == DV_ERR || rc == DV_ENOGPU, "%d: %s", rc, err);
    snprintf(where, sizeof where, "cudaSetDevice(-1) at tests/kernels/gpu/test_device.c:%d: ", line);
    cr_assert(strncmp(err, where, strlen(where)) == 0, "'%s' does not start with '%s'", err, where);
    cr_assert(strstr(err, "(cuda") != NULL, "CUDA's name of the error: %s", err);
}

/* A launch's check names the kernel it launched and the launch's line (a
 * grid of no blocks fails at the launch, with a GPU or without). */
Test(device, a_failing_launch_names_its_kernel) {
    char err[ERR_LEN] = "";
    const char *want = "launch clockSpin at kernels/gpu/lesson_kernels.cu:";
    cr_assert_neq(dv_run_clock_spin(1, 0, NULL, err), 0);
    cr_assert(strncmp(err, want, strlen(want)) == 0, "%s", err);
}

/* The classification the callers act on: sticky (restart the worker), no
 * device, or an error that leaves the device usable. */
Test(device, checker_classifies_what_the_caller_must_do) {
    char err[ERR_LEN] = "";
    cr_assert_eq(cuda_check(cudaSuccess, "x()", __FILE__, 1, err), 0);
    cr_assert_str_eq(err, "");
    cr_assert_eq(cuda_check(cudaErrorIllegalAddress, "k()", __FILE__, 7, err), DV_ESTICKY);
    cr_assert(strncmp(err, "k() at tests/kernels/gpu/test_device.c:7: ", 42) == 0, "%s", err);
    cr_assert(strstr(err, "(cudaErrorIllegalAddress)") != NULL, "%s", err);
    cr_assert_eq(cuda_check(cudaErrorNoDevice, "c()", __FILE__, 8, err), DV_ENOGPU);
    cr_assert_eq(cuda_check(cudaErrorMemoryAllocation, "m()", __FILE__, 9, err), DV_ERR);
    cr_assert_eq(cuda_classify(cudaErrorLaunchFailure), DV_ESTICKY);
    cr_assert_eq(cuda_classify(cudaErrorInsufficientDriver), DV_ENOGPU);
    cr_assert_eq(cuda_classify(cudaErrorInvalidValue), DV_ERR);
    /* A path from outside the tree is shown as it is. */
    cr_assert_str_eq(cuda_source_path("/elsewhere/x.c"), "/elsewhere/x.c");
}

/* The progress hook is a session's state: setting one session's leaves
 * another's silent, and a session without one calls nothing. No CUDA. */
static void count_call(void *ctx, unsigned table, unsigned ntables, const struct dv_table *t, int done) {
    (void)table, (void)ntables, (void)t, (void)done;
    ++*(int *)ctx;
}

Test(session, progress_hook_is_the_sessions_own) {
    struct session *a = session_create(), *b = session_create();
    cr_assert(a && b);
    int calls = 0;
    struct dv_table t;
    memset(&t, 0, sizeof t);
    session_set_progress(a, count_call, &calls);
    session_progress(a, 0, 1, &t, 0);
    session_progress(b, 0, 1, &t, 0);
    cr_expect_eq(calls, 1);
    session_set_progress(a, NULL, NULL);
    session_progress(a, 0, 1, &t, 1);
    cr_expect_eq(calls, 1);
    session_free(a);
    session_free(b);
}

/* The timing engine's hold (timing.h): twice the host's queueing time of the
 * last batch, within its bounds; none after a batch whose GPU work outlasted
 * its queueing four times over; a NULL clock or no hold queues nothing. */
Test(device, the_hold_outlasts_the_hosts_queueing_within_its_bounds) {
    cr_expect_float_eq(timing_hold_next(1.5, 0), 2 * 1.5, 1e-12);
    cr_expect_float_eq(timing_hold_next(1.5, 5.0), 2 * 1.5, 1e-12, "queued in 30% of the GPU's time: held");
    cr_expect_float_eq(timing_hold_next(1.5, 7.0), 0.0, 1e-12, "queued in 21%% of the GPU's time: no hold");
    cr_expect_float_eq(timing_hold_next(0.0, 0), TIMING_HOLD_MIN_MS, 1e-12);
    cr_expect_float_eq(timing_hold_next(0.05, 0), TIMING_HOLD_MIN_MS, 1e-12);
    cr_expect_float_eq(timing_hold_next(60.0, 100.0), TIMING_HOLD_MAX_MS, 1e-12);
    char err[ERR_LEN] = "";
    cr_expect_eq(timing_hold(NULL, 1.0, err), 0, "no clock, no hold: %s", err);
    struct timing_clock none = {0};
    cr_expect_eq(timing_hold(&none, 0.0, err), 0, "a hold of 0 ms queues nothing: %s", err);
}
