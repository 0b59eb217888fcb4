/* test_gpu_scenario.c -- every scenario kernel against the CPU reference, on
 * a GPU, and one measured table end to end.
 *
 * Label gpu: each test skips with CUDA's reason where there is no device.
 * Grids are small (a few thousand warps) so the suite takes seconds; the
 * lesson-size table is `divergence measure --scenario all`, not a test.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tests/kernels/gpu/helper_gpu.h"
#include "api/options.h"
#include "kernels/gpu/device.h"
#include "kernels/gpu/measure.h"
#include "kernels/model/model/scenario.h"
#include "kernels/gpu/devmem.h"
#include "kernels/gpu/scenario_kernels.h"

/* Runs every row of `s` once on a grid of blocks x (bx, by) and checks it. */
static void run_and_check(const struct scenario *s, unsigned blocks, unsigned bx, unsigned by,
                          unsigned unit, unsigned iters) {
    char err[ERR_LEN] = "";
    unsigned tpb = bx * by;
    unsigned long long n = (unsigned long long)blocks * tpb;
    float *in = malloc(n * sizeof *in), *out = malloc(n * sizeof *out);
    uint8_t *w = malloc(n);
    uint32_t *wide = malloc(n * sizeof *wide);
    void *d_in = NULL, *d_out = NULL, *d_w = NULL;
    struct scenario_lengths L;
    cr_assert(in && out && w && wide);
    for (unsigned p = 0; p < 32; p++) L.len[p] = s->lengths[p];
    for (unsigned long long i = 0; i < n; i++) in[i] = dv_input_value(i);
    cr_assert_eq(devmem_alloc(&d_in, n * sizeof(float), err), 0, "%s", err);
    cr_assert_eq(devmem_alloc(&d_out, n * sizeof(float), err), 0, "%s", err);
    cr_assert_eq(devmem_alloc(&d_w, n * sizeof(uint32_t), err), 0, "%s", err);
    cr_assert_eq(devmem_upload(d_in, in, n * sizeof(float), err), 0, "%s", err);

    for (unsigned r = 0; r < s->nrows; r++) {
        struct dv_check c;
        int rc;
        cr_assert_eq(scenario_assign(s, s->rows[r].layout, blocks, tpb, w, err), 0, "%s", err);
        for (unsigned long long i = 0; i < n; i++) {
            out[i] = NAN;
            wide[i] = s->kind == SCENARIO_LOOP ? w[i] : scenario_short_pattern(w[i]);
        }
        /* poison the output so a kernel that writes nothing cannot pass */
        cr_assert_eq(devmem_upload(d_out, out, n * sizeof(float), err), 0, "%s", err);
        if (s->kind == SCENARIO_KWAY) {
            cr_assert_eq(devmem_upload(d_w, w, n, err), 0, "%s", err);
            rc = scenario_launch_kway(d_in, d_out, d_w, blocks, bx, by, &L, unit, NULL, err);
        } else if (s->kind == SCENARIO_LOOP) {
            cr_assert_eq(devmem_upload(d_w, wide, n * sizeof(uint32_t), err), 0, "%s", err);
            rc = scenario_launch_loop(d_in, d_out, d_w, blocks, bx, by, unit, NULL, err);
        } else {
            cr_assert_eq(devmem_upload(d_w, wide, n * sizeof(uint32_t), err), 0, "%s", err);
            rc = scenario_launch_short(d_in, d_out, d_w, blocks, bx, by, s->lengths[0], s->lengths[1],
                                       iters, NULL, err);
        }
        cr_assert_eq(rc, 0, "%s/%s: %s", s->name, s->rows[r].name, err);
        cr_assert_eq(devmem_download(out, d_out, n * sizeof(float), err), 0, "%s", err);
        cr_assert_eq(scenario_check(s, w, n, unit, iters, out, &c, err), 0, "%s", err);
        cr_expect(c.ok, "%s/%s on %u x (%u, %u): %llu mismatches, first thread %lld (want %.9g got %.9g)",
                  s->name, s->rows[r].name, blocks, bx, by, c.mismatches, c.first_mismatch,
                  c.expected, c.got);
        cr_expect_eq(c.checked, n);
    }
    devmem_free(d_in);
    devmem_free(d_out);
    devmem_free(d_w);
    free(in);
    free(out);
    free(w);
    free(wide);
}

Test(gpu_scenario, every_kernel_matches_the_cpu_reference) {
    HELPER_REQUIRE_GPU();
    size_t n = 0;
    const char *const *names = scenario_names(&n);
    for (size_t i = 0; i < n; i++) run_and_check(scenario_find(names[i]), 96, 256, 1, 64, 512);
}

Test(gpu_scenario, two_dimensional_blocks_and_partial_warps) {
    HELPER_REQUIRE_GPU();
    /* 16 x 5 = 80 threads: two full warps and a 16-lane one per block */
    run_and_check(scenario_find("elseif-4way"), 33, 16, 5, 32, 64);
    run_and_check(scenario_find("loop-divergence"), 33, 16, 5, 32, 64);
    run_and_check(scenario_find("short-branch"), 33, 16, 5, 32, 64);
}

Test(gpu_scenario, launchers_reject_bad_arguments) {
    HELPER_REQUIRE_GPU();
    char err[ERR_LEN] = "";
    struct scenario_lengths L = {{0}};
    cr_expect_eq(scenario_launch_kway(NULL, NULL, NULL, 1, 32, 1, &L, 48, NULL, err), DV_ERR);
    cr_expect(strstr(err, "multiple") != NULL, "%s", err);
    cr_expect_eq(scenario_launch_short(NULL, NULL, NULL, 1, 32, 1, 2, 2, 32, NULL, err), DV_ERR);
    cr_expect(strstr(err, "no kernel") != NULL, "%s", err);
    cr_expect_eq(scenario_launch_loop(NULL, NULL, NULL, 1, 2048, 1, 32, NULL, err), DV_ERR);
}

Test(gpu_scenario, measure_fills_every_row) {
    HELPER_REQUIRE_GPU();
    struct dv_options o;
    char err[ERR_LEN] = "";
    experiment_defaults(&o);
    o.blocks = 528;
    o.budget_ms = 100;
    o.min_samples = 3;
    o.max_samples = 30;
    o.max_noise = 0.5;
    snprintf(o.scenario, sizeof o.scenario, "even-2way");
    struct dv_report *r = experiment_report_create();
    cr_assert_not_null(r);
    cr_assert_eq(measure_run(&o, r, err), 0, "%s", err);
    cr_assert(r->measured);
    cr_assert_eq(r->ntables, 1);
    const struct dv_table *t = &r->tables[0];
    cr_expect_str_eq(t->id, "scenario:even-2way");
    for (unsigned j = 0; j < t->nrows; j++) {
        const struct dv_row *row = &t->rows[j];
        cr_expect(row->measured && row->check.ok, "%s: %llu mismatches", row->name, row->check.mismatches);
        cr_expect(row->time_ms.median > 0);
        cr_expect(isfinite(row->ratio) && isfinite(row->agreement), "%s", row->name);
        cr_expect(row->floor_fraction > 0 && row->floor_fraction < 1.5, "%s floor %g", row->name,
                  row->floor_fraction);
    }
    cr_expect(fabs(t->rows[t->baseline_row].ratio - 1.0) < 1e-12);
    /* 21 units per split warp against 10.5 per sorted warp: the divergent
     * row cannot be as fast as the sorted one */
    cr_expect_gt(t->rows[0].ratio, 1.2, "lanes ratio %g", t->rows[0].ratio);
    cr_expect(isfinite(t->rows[0].measured_efficiency));
    cr_expect(r->device.measured_sm_clock_mhz > 0);
    experiment_report_free(r);
}
