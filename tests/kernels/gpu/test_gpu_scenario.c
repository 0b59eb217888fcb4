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
#include "kernels/model/model/scenario_table.h"
#include "kernels/gpu/devmem.h"
#include "kernels/gpu/scenario_kernels.h"
#include "kernels/gpu/scenario_rows.h"

/* Runs every row of `s` once on a grid of blocks x (bx, by) through
 * scenario_rows.c (the launches the measurement makes), its output poisoned
 * first, and checks it against the CPU reference of the row's own kernel
 * (scenario_row()). `iterations` makes the unit (iterations / 8) and the
 * short kernel's iterations. */
static void run_and_check(const struct scenario *s, unsigned blocks, unsigned bx, unsigned by, unsigned iterations) {
    char err[ERR_LEN] = "";
    struct dv_options o;
    experiment_defaults(&o);
    o.blocks = blocks;
    o.block_x = bx;
    o.block_y = by;
    o.iterations = iterations;
    const unsigned long long n = (unsigned long long)blocks * bx * by;
    float *in = malloc(n * sizeof *in), *out = malloc(n * sizeof *out);
    void *d_in = NULL;
    struct scenario_rows *c = calloc(1, sizeof *c);
    cr_assert(in && out && c);
    for (unsigned long long i = 0; i < n; i++) in[i] = dv_input_value(i);
    cr_assert_eq(devmem_alloc(&d_in, n * sizeof(float), err), 0, "%s", err);
    cr_assert_eq(devmem_upload(d_in, in, n * sizeof(float), err), 0, "%s", err);
    cr_assert_eq(scenario_rows_setup(c, s, &o, d_in, (1u << s->nrows) - 1u, err), 0, "%s: %s", s->name, err);
    for (unsigned r = 0; r < s->nrows; r++) {
        struct dv_check chk;
        for (unsigned long long i = 0; i < n; i++) out[i] = NAN; /* a kernel that writes nothing cannot pass */
        cr_assert_eq(devmem_upload(c->out[r], out, n * sizeof(float), err), 0, "%s", err);
        cr_assert_eq(scenario_rows_launch(c, r, 0, 0, blocks, NULL, NULL, err), 0, "%s/%s: %s", s->name,
                     s->rows[r].name, err);
        cr_assert_eq(devmem_download(out, c->out[r], n * sizeof(float), err), 0, "%s", err);
        cr_assert_eq(scenario_check(&c->row[r], c->host_work[r], n, c->unit, c->iters, out, &chk, err), 0, "%s", err);
        cr_expect(chk.ok, "%s/%s on %u x (%u, %u): %llu mismatches, first thread %lld (want %.9g got %.9g)", s->name,
                  s->rows[r].name, blocks, bx, by, chk.mismatches, chk.first_mismatch, chk.expected, chk.got);
        cr_expect_eq(chk.checked, n);
    }
    scenario_rows_cleanup(c);
    free(c);
    devmem_free(d_in);
    free(in);
    free(out);
}

Test(gpu_scenario, every_kernel_matches_the_cpu_reference) {
    HELPER_REQUIRE_GPU();
    size_t n = 0;
    const char *const *names = scenario_names(&n);
    for (size_t i = 0; i < n; i++) run_and_check(scenario_find(names[i]), 96, 256, 1, 512);
}

Test(gpu_scenario, two_dimensional_blocks_and_partial_warps) {
    HELPER_REQUIRE_GPU();
    /* 16 x 5 = 80 threads: two full warps and a 16-lane one per block */
    run_and_check(scenario_find("elseif-4way"), 33, 16, 5, 256);
    run_and_check(scenario_find("loop-divergence"), 33, 16, 5, 256);
    run_and_check(scenario_find("short-branch"), 33, 16, 5, 256);
    /* The experiments' kernels on partial warps: lane % k, the short sides,
     * the pair kernel's branch, select, loop and early return. */
    run_and_check(scenario_find("k-paths"), 33, 16, 5, 256);
    run_and_check(scenario_find("predication"), 33, 16, 5, 256);
    run_and_check(scenario_find("branchless"), 33, 16, 5, 256);
    run_and_check(scenario_find("reconvergence"), 33, 16, 5, 256);
}

Test(gpu_scenario, launchers_reject_bad_arguments) {
    HELPER_REQUIRE_GPU();
    char err[ERR_LEN] = "";
    struct scenario_lengths L = {{0}};
    cr_expect_eq(scenario_launch_kway(NULL, NULL, NULL, 1, 32, 1, &L, 48, NULL, err), DV_ERR);
    cr_expect(strstr(err, "multiple") != NULL, "%s", err);
    cr_expect_eq(scenario_launch_short(NULL, NULL, NULL, 1, 32, 1, 9, 2, 32, NULL, err), DV_ERR);
    cr_expect(strstr(err, "no kernel") != NULL, "%s", err);
    cr_expect_eq(scenario_launch_pair(NULL, NULL, NULL, 1, 32, 1, SCENARIO_PAIR_VARIANTS, &L, 32, NULL, NULL, err),
                 DV_ERR);
    cr_expect(strstr(err, "no variant") != NULL, "%s", err);
    L.len[0] = 2;
    L.len[1] = 3;
    cr_expect_eq(scenario_launch_pair(NULL, NULL, NULL, 1, 32, 1, SCENARIO_PAIR_SELECT, &L, 32, NULL, NULL, err),
                 DV_ERR);
    cr_expect(strstr(err, "must be equal") != NULL, "%s", err);
    cr_expect_eq(scenario_launch_pair(NULL, NULL, NULL, 1, 32, 1, SCENARIO_PAIR_BRANCH, &L, 32, NULL,
                                      (struct dv_join_lane *)8, err),
                 DV_ERR);
    cr_expect(strstr(err, "no join") != NULL, "%s", err);
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

/* Each experiment of the compiler-and-warp suite measured end to end on a
 * small grid: every row passes its correctness gate (the first wrong thread
 * named otherwise), every row has its witness and the witness agrees with
 * the model, the k-paths table has its fit, each reconvergence row with a
 * join its join record, and the ratios point the way the experiments
 * expect (the split k = 32 row far slower than k = 1; the aligned one
 * close to it). Prints the transcript's figures: evidence, not a target. */
Test(gpu_scenario, the_experiments_measure_with_their_gates_witness_fit_and_joins, .timeout = 300) {
    HELPER_REQUIRE_GPU();
    struct dv_options o;
    char err[ERR_LEN] = "";
    experiment_defaults(&o);
    o.blocks = 264;
    o.budget_ms = 60;
    o.min_samples = 3;
    o.max_samples = 20;
    o.max_noise = 0.5;
    o.no_counters = 1;
    snprintf(o.scenario, sizeof o.scenario, "compiler-and-warp");
    struct dv_report *r = experiment_report_create();
    cr_assert_not_null(r);
    cr_assert_eq(measure_run(&o, r, err), 0, "%s", err);
    cr_assert_eq(r->ntables, 4);
    helper_expect_all_checked(r);
    for (unsigned i = 0; i < r->ntables; i++) {
        const struct dv_table *t = &r->tables[i];
        for (unsigned j = 0; j < t->nrows; j++) {
            const struct dv_row *w = &t->rows[j];
            cr_expect(w->observed.present && w->observed.agrees, "%s/%s: witness %s", t->id, w->name,
                      w->observed.verdict);
            printf("%-24s %-20s ratio %.3f [%.3f, %.3f] model %.2f%s%s\n", t->id, w->name, w->ratio, w->ratio_ci.lo,
                   w->ratio_ci.hi, w->predicted_ratio, w->join.present ? "  join: " : "",
                   w->join.present ? w->join.verdict : "");
        }
    }
    const struct dv_table *k = &r->tables[0];
    cr_expect_str_eq(k->id, "scenario:k-paths");
    cr_expect(k->fit.present && k->fit.points == 7, "the fit of the seven split rows");
    cr_expect_gt(k->fit.b, 0);
    printf("k-paths fit: a %.5f [%.5f, %.5f] ms, b %.5f [%.5f, %.5f] ms, b/a %.3f, residual %.2f%%\n", k->fit.a,
           k->fit.a_ci.lo, k->fit.a_ci.hi, k->fit.b, k->fit.b_ci.lo, k->fit.b_ci.hi, k->fit.b_over_a,
           100 * k->fit.residual_max_rel);
    cr_expect_gt(k->rows[6].ratio, 8.0, "split k = 32 against k = 1: %.3f", k->rows[6].ratio);
    cr_expect_lt(fabs(k->rows[13].ratio - 1.0), 0.1, "aligned k = 32 against k = 1: %.3f", k->rows[13].ratio);
    const struct dv_table *rc = &r->tables[3];
    for (unsigned j = 0; j < rc->nrows; j++)
        cr_expect(rc->rows[j].join.present && rc->rows[j].join.warps > 0, "%s has its join record", rc->rows[j].name);
    experiment_report_free(r);
}
