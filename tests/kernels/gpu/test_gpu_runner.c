/* test_gpu_runner.c -- the kernels against the CPU reference, on a GPU.
 *
 * Label gpu: each test skips with CUDA's reason where there is no device.
 * Small grids and budgets keep the suite to a few seconds; the lesson-size
 * measurement is `divergence measure`, not a test.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "kernels/model/model/experiment.h"
#include "tests/kernels/gpu/helper_gpu.h"
#include "api/options.h"
#include "kernels/gpu/device.h"
#include "kernels/gpu/measure.h"

static struct dv_options small(void) {
    struct dv_options o;
    experiment_defaults(&o);
    o.blocks = 264;
    o.iterations = 512;
    o.budget_ms = 50;
    o.min_samples = 3;
    o.max_samples = 20;
    o.max_noise = 0.5;
    return o;
}

static void assert_all_checked(const struct dv_report *r) {
    helper_expect_all_checked(r);
    for (unsigned i = 0; i < r->ntables; i++) {
        const struct dv_table *t = &r->tables[i];
        for (unsigned j = 0; j < t->nrows; j++) {
            const struct dv_row *row = &t->rows[j];
            cr_expect(row->time_ms.median > 0, "%s/%s median %g", t->id, row->name, row->time_ms.median);
            cr_expect(row->time_ms.samples >= 3);
        }
    }
}

Test(gpu_runner, lesson_tables_match_the_cpu_reference) {
    HELPER_REQUIRE_GPU();
    struct dv_options o = small();
    snprintf(o.predicates[o.npredicates++], PREDICATE_TEXT_LEN, "first-16");
    char err[ERR_LEN];
    cr_assert_eq(options_validate(&o, OPTIONS_JSON, NULL, err), 0, "%s", err);
    struct dv_report *r = experiment_report_create();
    cr_assert_eq(measure_run(&o, r, err), 0, "%s", err);
    cr_assert_eq(r->ntables, 2);
    cr_assert_str_eq(r->tables[0].kernel, "branch");
    assert_all_checked(r);
    cr_expect(r->device.measured_sm_clock_mhz > 0.2 * r->device.rated_sm_clock_mhz, "clock %g of %g",
              r->device.measured_sm_clock_mhz, r->device.rated_sm_clock_mhz);
    cr_expect(r->config.fma_floor_ms > 0);
    experiment_report_free(r);
}

Test(gpu_runner, mask_kernel_matches_the_reference_for_expressions_and_2d_blocks) {
    HELPER_REQUIRE_GPU();
    struct dv_options o = small();
    o.part = DV_PART_1;
    o.block_x = 32;
    o.block_y = 8;
    o.npredicates = 0;
    const char *preds[] = {"lane-parity", "warp-parity", "threadIdx.y & 1", "threadIdx.x < 16", "lane < 1",
                           "(blockIdx.x * 7 + warp) % 3 == 0"};
    for (size_t i = 0; i < sizeof(preds) / sizeof(preds[0]); i++)
        snprintf(o.predicates[o.npredicates++], PREDICATE_TEXT_LEN, "%s", preds[i]);
    char err[ERR_LEN];
    cr_assert_eq(options_validate(&o, OPTIONS_JSON, NULL, err), 0, "%s", err);
    struct dv_report *r = experiment_report_create();
    cr_assert_eq(measure_run(&o, r, err), 0, "%s", err);
    cr_assert_str_eq(r->tables[0].kernel, "mask");
    assert_all_checked(r);
    experiment_report_free(r);
}

Test(gpu_runner, partial_warps_and_odd_sizes) {
    HELPER_REQUIRE_GPU();
    struct dv_options o = small();
    o.block_x = 48;
    o.blocks = 333;
    o.iterations = 77; /* not a multiple of the unroll */
    char err[ERR_LEN];
    cr_assert_eq(options_validate(&o, OPTIONS_JSON, NULL, err), 0, "%s", err);
    struct dv_report *r = experiment_report_create();
    cr_assert_eq(measure_run(&o, r, err), 0, "%s", err);
    assert_all_checked(r);
    experiment_report_free(r);
}

Test(gpu_runner, auto_blocks_picks_whole_waves) {
    HELPER_REQUIRE_GPU();
    struct dv_options o = small();
    o.part = DV_PART_1;
    o.blocks = 0;
    o.iterations = 256;
    char err[ERR_LEN];
    cr_assert_eq(options_validate(&o, OPTIONS_JSON, NULL, err), 0, "%s", err);
    struct dv_report *r = experiment_report_create();
    cr_assert_eq(measure_run(&o, r, err), 0, "%s", err);
    cr_assert(r->config.blocks_auto);
    cr_assert_eq(r->config.blocks % (unsigned)r->device.sm_count, 0, "%u blocks on %d SMs", r->config.blocks,
                 r->device.sm_count);
    cr_assert(strstr(r->config.blocks_reason, "waves") != NULL, "%s", r->config.blocks_reason);
    assert_all_checked(r);
    experiment_report_free(r);
}

Test(gpu_runner, bad_device_ordinal_is_an_error_not_a_crash) {
    HELPER_REQUIRE_GPU();
    struct dv_options o = small();
    o.device = 999;
    char err[ERR_LEN] = "";
    struct dv_report *r = experiment_report_create();
    cr_assert_eq(measure_run(&o, r, err), DV_ERR);
    cr_assert(strstr(err, "device: ordinal 999 out of range") != NULL, "%s", err);
    experiment_report_free(r);
}
