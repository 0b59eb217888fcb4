/* test_device.c -- what the measurement entry does where there is no GPU,
 * and the pure parts of the device module (FP32 lanes per compute
 * capability, the driver release).
 *
 * On a machine without a GPU (CI), measuring must fail cleanly with DV_ENOGPU
 * and CUDA's own words; on a GPU machine that test is skipped (the gpu suite
 * covers it).
 */
#include <criterion/criterion.h>
#include <string.h>

#include "tests/kernels/gpu/helper_gpu.h"
#include "kernels/gpu/device.h"
#include "kernels/gpu/measure.h"

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
