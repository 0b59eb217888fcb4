/* test_experiment.c -- the planner's answers that every reader shares: what
 * a planned row evaluates (its predicate, whether it reads blockIdx.x, how
 * often, whether from a device mask), checked against the kernels' own
 * arguments and against the predicate language's reading of the same text.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "kernels/model/model/experiment.h"
#include "kernels/model/model/plan.h"

static struct dv_report *plan(const struct dv_options *o) {
    struct dv_report *r = experiment_report_create();
    char err[ERR_LEN] = "";
    cr_assert_not_null(r);
    cr_assert_eq(plan_report(o, r, NULL, err), 0, "%s", err);
    return r;
}

static const struct dv_row *row_named(const struct dv_report *r, const char *name) {
    for (unsigned t = 0; t < r->ntables; t++)
        for (unsigned i = 0; i < r->tables[t].nrows; i++)
            if (strcmp(r->tables[t].rows[i].name, name) == 0) return &r->tables[t].rows[i];
    cr_assert_fail("no row %s", name);
    return NULL;
}

/* The predicate of `name`'s row: its mode and whether it reads blockIdx.x. */
static void expect_row(const struct dv_report *r, const char *name, int mode, unsigned uses) {
    const struct dv_row *row = row_named(r, name);
    struct predicate p;
    char err[ERR_LEN] = "";
    cr_assert_eq(experiment_row_predicate(row, &p, err), 0, "%s: %s", name, err);
    cr_expect_eq(p.mode, mode, "%s: mode %d", name, p.mode);
    cr_expect_eq(p.uses, uses, "%s: uses %u", name, p.uses);
    predicate_cleanup(&p);
}

Test(experiment, a_rows_predicate_is_the_one_its_kernel_evaluates) {
    struct dv_options o;
    experiment_defaults(&o);
    struct dv_report *r = plan(&o);
    /* Part 1: the mode argument of the branch kernel; only block parity
     * reads blockIdx.x. */
    expect_row(r, "lane-parity", DV_LANE_PARITY, 0);
    expect_row(r, "warp-parity", DV_WARP_PARITY, 0);
    expect_row(r, "block-parity", DV_BLOCK_PARITY, PREDICATE_USES_BLOCK);
    /* Part 2: the per-iteration rows evaluate their built-in, which reads no
     * blockIdx.x (the phase is not a block); the no-branch row is always-a. */
    expect_row(r, "per-iteration-lane-parity", DV_LANE_PARITY, 0);
    expect_row(r, "per-iteration-warp-parity", DV_WARP_PARITY, 0);
    expect_row(r, "no-branch", DV_ALWAYS_A, 0);
    for (unsigned t = 0; t < r->ntables; t++)
        for (unsigned i = 0; i < r->tables[t].nrows; i++) {
            const struct dv_row *row = &r->tables[t].rows[i];
            struct predicate p;
            char err[ERR_LEN];
            cr_assert_eq(experiment_row_predicate(row, &p, err), 0, "%s", err);
            cr_expect_eq(p.mode, row->mode, "%s: the kernel's mode argument", row->name);
            predicate_cleanup(&p);
        }
    experiment_report_free(r);
}

Test(experiment, mask_rows_read_what_their_expression_reads) {
    struct dv_options o;
    experiment_defaults(&o);
    o.part = DV_PART_1;
    o.npredicates = 3;
    snprintf(o.predicates[0], PREDICATE_TEXT_LEN, "lane-parity");
    snprintf(o.predicates[1], PREDICATE_TEXT_LEN, "threadIdx.x < 5");
    snprintf(o.predicates[2], PREDICATE_TEXT_LEN, "blockIdx.x %% 3 == 0");
    snprintf(o.baseline, PREDICATE_TEXT_LEN, "lane-parity");
    struct dv_report *r = plan(&o);
    /* One expression puts every row on the mask kernel, built-ins included. */
    for (unsigned i = 0; i < r->tables[0].nrows; i++) {
        cr_expect(experiment_row_reads_mask(&r->tables[0].rows[i]));
        cr_expect_eq(experiment_row_evaluations(&r->tables[0].rows[i], 4096), 1u);
    }
    expect_row(r, "lane-parity", DV_LANE_PARITY, 0);
    expect_row(r, "threadIdx.x < 5", -1, 0);
    expect_row(r, "blockIdx.x % 3 == 0", -1, PREDICATE_USES_BLOCK);
    experiment_report_free(r);
}

Test(experiment, only_per_iteration_rows_evaluate_every_iteration) {
    struct dv_options o;
    experiment_defaults(&o);
    struct dv_report *r = plan(&o);
    cr_expect_eq(experiment_row_evaluations(row_named(r, "per-iteration-lane-parity"), 37), 37u);
    cr_expect_eq(experiment_row_evaluations(row_named(r, "per-iteration-warp-parity"), 4096), 4096u);
    cr_expect_eq(experiment_row_evaluations(row_named(r, "no-branch"), 4096), 1u);
    cr_expect_eq(experiment_row_evaluations(row_named(r, "lane-parity"), 4096), 1u);
    cr_expect_not(experiment_row_reads_mask(row_named(r, "lane-parity")));
    cr_expect_not(experiment_row_reads_mask(row_named(r, "per-iteration-lane-parity")));
    experiment_report_free(r);
}

Test(experiment, a_scenario_row_has_no_predicate) {
    struct dv_options o;
    experiment_defaults(&o);
    snprintf(o.scenario, sizeof o.scenario, "even-2way");
    struct dv_report *r = plan(&o);
    struct predicate p;
    char err[ERR_LEN] = "";
    cr_expect_eq(experiment_row_predicate(&r->tables[0].rows[0], &p, err), -1);
    cr_expect(strstr(err, "row 'lanes'") && strstr(err, "scenario kernel evaluates no predicate"), "%s", err);
    predicate_cleanup(&p);
    experiment_report_free(r);
}

Test(experiment, predicate_fields_are_static_names) {
    cr_expect_str_eq(experiment_predicate_field(0), "predicates[0]");
    cr_expect_str_eq(experiment_predicate_field(DV_MAX_ROWS - 1), "predicates[15]");
    cr_expect_str_eq(experiment_predicate_field(DV_MAX_ROWS), "predicates");
}

/* ---- what a request names but does not use -------------------------------- */

Test(experiment, fields_that_do_not_apply_are_named_and_warned) {
    struct dv_options o;
    experiment_defaults(&o);
    cr_expect_eq(experiment_unused(&o), 0, "defaults name nothing");
    o.part = DV_PART_2;
    o.given = DV_GIVEN_PART | DV_GIVEN_PREDICATES;
    cr_expect_eq(experiment_unused(&o), DV_GIVEN_PREDICATES);
    struct dv_report *r = plan(&o);
    cr_assert_eq(r->nwarnings, 1);
    cr_expect(strstr(r->warnings[0], "predicates: not used: Part 2's rows are fixed"), "%s", r->warnings[0]);
    experiment_report_free(r);
    experiment_defaults(&o);
    snprintf(o.scenario, sizeof o.scenario, "C1");
    o.given = DV_GIVEN_SCENARIO | DV_GIVEN_PART | DV_GIVEN_BASELINE | DV_GIVEN_BLOCKS;
    cr_expect_eq(experiment_unused(&o), DV_GIVEN_PART | DV_GIVEN_BASELINE, "blocks apply to scenarios");
    cr_expect_str_eq(experiment_given_name(DV_GIVEN_BASELINE), "baseline");
    cr_expect(strstr(experiment_unused_reason(&o, DV_GIVEN_PART), "instead of"));
    cr_expect_str_eq(experiment_unused_reason(&o, DV_GIVEN_BLOCKS), "");
}

/* ---- Part 2 read both ways --------------------------------------------------- */

Test(experiment, part2_is_read_both_ways) {
    struct dv_options o;
    experiment_defaults(&o);
    o.part = DV_PART_2;
    struct dv_report *r = plan(&o);
    struct dv_table *t = &r->tables[0];
    struct dv_reading rd[DV_MAX_READINGS];
    cr_assert_eq(experiment_readings(t, rd), 2);
    cr_expect_eq(rd[0].kind, DV_READING_SPLIT);
    cr_expect_str_eq(t->rows[rd[0].row].name, "per-iteration-lane-parity");
    cr_expect_str_eq(t->rows[rd[0].against].name, "per-iteration-warp-parity");
    cr_expect_eq(rd[1].kind, DV_READING_QUESTION);
    cr_expect_str_eq(t->rows[rd[1].row].name, "per-iteration-warp-parity");
    cr_expect_str_eq(t->rows[rd[1].against].name, "no-branch");
    cr_expect_float_eq(rd[0].predicted, 2.0, 1e-12);
    cr_expect_float_eq(rd[1].predicted, 1.0, 1e-12);
    cr_expect(isnan(rd[0].ratio), "no measurement, no ratio");
    /* The lesson's CUDA 13.0 figures: 2.73 and 2.58 against no branch read
     * as 1.06 for the split and 2.58 for the question. */
    t->rows[0].measured = t->rows[1].measured = t->rows[2].measured = 1;
    t->rows[0].time_ms.median = 1.0;
    t->rows[1].time_ms.median = 2.73;
    t->rows[2].time_ms.median = 2.58;
    cr_assert_eq(experiment_readings(t, rd), 2);
    cr_expect_float_eq(rd[0].ratio, 2.73 / 2.58, 1e-12);
    cr_expect_float_eq(rd[1].ratio, 2.58, 1e-12);
    cr_expect(strstr(rd[0].sentence, "the cost of splitting a warp"), "%s", rd[0].sentence);
    cr_expect(strstr(rd[1].sentence, "the cost of asking a question in a loop"), "%s", rd[1].sentence);
    experiment_report_free(r);
    /* Part 1 has no per-iteration rows: no readings. */
    experiment_defaults(&o);
    o.part = DV_PART_1;
    r = plan(&o);
    cr_expect_eq(experiment_readings(&r->tables[0], rd), 0);
    experiment_report_free(r);
}

/* A table whose sampling stopped with no interval at all (every round
 * dropped under a throttled clock, as a run under a sanitizer can be): the
 * warning says so, with the rounds kept and dropped, and never names a row
 * "?" or a half-width "nan". One whose widest interval is known names it. */
Test(experiment, an_interval_warning_never_prints_a_question_mark_or_nan) {
    struct dv_report *r = experiment_report_create();
    cr_assert_not_null(r);
    r->ntables = 2;
    struct dv_table *t = &r->tables[0];
    snprintf(t->id, sizeof t->id, "part1");
    t->nrows = 2;
    t->rows[0].check.ok = t->rows[1].check.ok = 1;
    t->rows[0].rounds_dropped = t->rows[1].rounds_dropped = 12;
    t->halfwidth_target = 0.005;
    t->intervals_ok = 0;
    t->worst_row = -1;
    t->worst_halfwidth = NAN;
    t->gpu_time_ms = 41.6;
    snprintf(t->stop_reason, sizeof t->stop_reason, "throttled");
    struct dv_table *u = &r->tables[1];
    snprintf(u->id, sizeof u->id, "part2");
    u->nrows = 2;
    u->rows[0].check.ok = u->rows[1].check.ok = 1;
    snprintf(u->rows[1].name, sizeof u->rows[1].name, "per-iteration-lane-parity");
    u->halfwidth_target = 0.005;
    u->worst_row = 1;
    u->worst_halfwidth = 0.0123;
    u->gpu_time_ms = 2000;
    snprintf(u->stop_reason, sizeof u->stop_reason, "budget");
    char err[ERR_LEN];
    cr_expect_eq(experiment_gate(r, err), 0);
    cr_assert_eq(r->nwarnings, 2);
    for (unsigned i = 0; i < r->nwarnings; i++) {
        cr_expect(strchr(r->warnings[i], '?') == NULL, "%s", r->warnings[i]);
        cr_expect(strstr(r->warnings[i], "nan") == NULL, "%s", r->warnings[i]);
    }
    cr_expect_str_eq(r->warnings[0],
                     "part1: no ratio has an interval to judge against the 0.50% target: sampling "
                     "stopped (throttled) after 42 ms of GPU time with 0 rounds kept and 12 dropped");
    cr_expect(strstr(r->warnings[1], "part2: per-iteration-lane-parity is known to +-1.23%") == r->warnings[1], "%s",
              r->warnings[1]);
    experiment_report_free(r);
}
