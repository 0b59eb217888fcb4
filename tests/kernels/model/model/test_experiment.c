/* test_experiment.c -- the planner's answers that every reader shares: what
 * a planned row evaluates (its predicate, whether it reads blockIdx.x, how
 * often, whether from a device mask), checked against the kernels' own
 * arguments and against the predicate language's reading of the same text.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "kernels/model/model/experiment.h"

static struct dv_report *plan(const struct dv_options *o) {
    struct dv_report *r = experiment_report_create();
    char err[ERR_LEN] = "";
    cr_assert_not_null(r);
    cr_assert_eq(experiment_plan(o, r, NULL, err), 0, "%s", err);
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

/* A plan's error carries the request field it is about as a value: each kind
 * of field, including a predicate whose text the planner trims; and an
 * expression's, where in it, with the caret under the text it counts in. */
Test(experiment, plan_errors_carry_their_field) {
    static const struct {
        const char *what, *field, *prefix;
        int column;
        const char *caret;
    } cases[] = {
        {"tpb", "threads_per_block", "threads_per_block: ", 0, ""},
        {"iterations", "iterations", "iterations: ", 0, ""},
        {"grid", "blocks", "blocks: ", 0, ""},
        {"no predicates", "predicates", "predicates: ", 0, ""},
        {"bad name", "predicates[2]", "predicates[2]: ", 1, "no-such(\n^"},
        {"fails for a thread", "predicates[1]", "predicate '1 << 64': ", 3, "1 << 64\n  ^"},
        {"bad baseline", "baseline", "baseline: ", 1, "no-such(\n^"},
        {"baseline not a row", "baseline", "baseline: 'warp-parity' is not", 0, ""},
        {"scenario name", "scenario", "scenario: unknown name", 0, ""},
        {"scenario grid", "blocks", "scenario even-2way: bad geometry", 0, ""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct dv_options o;
        experiment_defaults(&o);
        o.part = DV_PART_1;
        o.npredicates = 3;
        snprintf(o.predicates[0], PREDICATE_TEXT_LEN, "lane-parity");
        snprintf(o.predicates[1], PREDICATE_TEXT_LEN, "lane-half");
        snprintf(o.predicates[2], PREDICATE_TEXT_LEN, "warp-parity");
        const char *w = cases[i].what;
        if (!strcmp(w, "tpb")) o.block_x = 2048;
        else if (!strcmp(w, "iterations")) o.iterations = 0;
        else if (!strcmp(w, "grid")) o.blocks = 70000, o.block_x = 1024;
        else if (!strcmp(w, "no predicates")) o.npredicates = 0;
        else if (!strcmp(w, "bad name")) snprintf(o.predicates[2], PREDICATE_TEXT_LEN, "no-such(");
        else if (!strcmp(w, "fails for a thread")) snprintf(o.predicates[1], PREDICATE_TEXT_LEN, " 1 << 64");
        else if (!strcmp(w, "bad baseline")) snprintf(o.baseline, PREDICATE_TEXT_LEN, "no-such(");
        else if (!strcmp(w, "baseline not a row")) snprintf(o.predicates[2], PREDICATE_TEXT_LEN, "first-16");
        else if (!strcmp(w, "scenario name")) snprintf(o.scenario, sizeof o.scenario, "no-such-scenario");
        else if (!strcmp(w, "scenario grid"))
            snprintf(o.scenario, sizeof o.scenario, "even-2way"), o.blocks = DV_MAX_BLOCKS + 1, o.block_x = 1;
        struct dv_report *r = experiment_report_create();
        cr_assert_not_null(r);
        struct dv_fault fault = {"unset", {-1, "unset"}};
        char err[ERR_LEN] = "";
        cr_expect_eq(experiment_plan(&o, r, &fault, err), -1, "%s", w);
        cr_expect_str_eq(fault.field, cases[i].field, "%s: %s", w, err);
        cr_expect(strncmp(err, cases[i].prefix, strlen(cases[i].prefix)) == 0, "%s: %s", w, err);
        cr_expect_eq(fault.expr.column, cases[i].column, "%s: %s", w, err);
        cr_expect_str_eq(fault.expr.caret, cases[i].caret, "%s: %s", w, err);
        cr_expect(strchr(err, '\n') == NULL, "%s: the message is one line: %s", w, err);
        experiment_report_free(r);
    }
}

Test(experiment, a_plan_that_succeeds_blames_no_field) {
    struct dv_options o;
    experiment_defaults(&o);
    struct dv_report *r = experiment_report_create();
    struct dv_fault fault = {"unset", {-1, "unset"}};
    char err[ERR_LEN] = "";
    cr_assert_eq(experiment_plan(&o, r, &fault, err), 0, "%s", err);
    cr_expect_str_eq(fault.field, "");
    cr_expect_eq(fault.expr.column, 0);
    cr_expect_str_eq(fault.expr.caret, "");
    cr_assert_eq(experiment_plan(&o, r, NULL, err), 0, "%s", err);
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

/* ---- the cost rule counts what the plan evaluates --------------------------- */

Test(experiment, analysis_cost_is_what_the_plan_evaluates) {
    struct dv_options o;
    const char *field = NULL;
    experiment_defaults(&o);
    snprintf(o.scenario, sizeof o.scenario, "all");
    unsigned rows = 0;
    struct dv_report *r = plan(&o);
    for (unsigned t = 0; t < r->ntables; t++) rows += r->tables[t].nrows;
    experiment_report_free(r);
    cr_expect_float_eq(experiment_analysis_cost(&o, &field), (double)rows * 4096 * 256, 1e-6,
                       "every scenario row over every thread, and no Part row");
    cr_expect_str_eq(field, "scenario");
    experiment_defaults(&o);
    o.part = DV_PART_1;
    snprintf(o.predicates[1], sizeof o.predicates[1], "blockIdx.x %% 5 == 1");
    /* two rows read blockIdx.x (the expression and block parity): every thread */
    cr_expect_float_eq(experiment_analysis_cost(&o, &field), 2 * 4096.0 * 256 + 2 * 256, 1e-6);
    cr_expect_str_eq(field, "predicates[1]", "the first predicate that reads blockIdx.x");
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

/* ---- a baseline that leaves a path empty ------------------------------------ */

static struct dv_report *plan_block(unsigned bx, unsigned by, const char *baseline) {
    struct dv_options o;
    experiment_defaults(&o);
    o.part = DV_PART_1;
    o.block_x = bx;
    o.block_y = by;
    if (baseline) {
        snprintf(o.predicates[o.npredicates++], PREDICATE_TEXT_LEN, "%s", baseline);
        snprintf(o.baseline, PREDICATE_TEXT_LEN, "%s", baseline);
    }
    return plan(&o);
}

Test(experiment, an_empty_baseline_path_is_said_with_its_warp_level_analogue) {
    struct dv_report *r = plan_block(32, 8, NULL);
    const struct dv_table *t = &r->tables[0];
    cr_expect(strstr(t->note, "every thread of this 32x8 block on path A"), "%s", t->note);
    cr_expect(strstr(t->note, "3 rows that split the work are not comparable"), "%s", t->note);
    cr_expect_str_eq(t->suggested_baseline, "(warp & 1) == 0");
    experiment_report_free(r);
    /* The analogue compares the lesson's rows again. */
    r = plan_block(32, 8, "(warp & 1) == 0");
    t = &r->tables[0];
    cr_expect_str_eq(t->note, "");
    cr_expect(t->rows[0].comparable && t->rows[1].comparable, "lane parity and lane half compare with it");
    experiment_report_free(r);
    /* One warp to a block: no warp-uniform split; the block parity is. */
    r = plan_block(16, 1, NULL);
    cr_expect_str_eq(r->tables[0].suggested_baseline, "block-parity");
    cr_expect(strstr(r->tables[0].note, "block of 16 threads"), "%s", r->tables[0].note);
    experiment_report_free(r);
    /* The lesson's block, and an odd one where warp parity still has both paths. */
    r = plan_block(256, 1, NULL);
    cr_expect_str_eq(r->tables[0].note, "");
    experiment_report_free(r);
    r = plan_block(48, 1, NULL);
    cr_expect_str_eq(r->tables[0].note, "");
    experiment_report_free(r);
}

/* ---- the built-ins' labels are their predicates ------------------------------ */

Test(experiment, a_builtins_label_typed_in_is_the_builtins_row) {
    size_t n = 0;
    const struct predicate_builtin *b = predicate_builtins(&n);
    const unsigned shapes[][2] = {{256, 1}, {32, 8}, {48, 1}, {16, 4}};
    for (size_t i = 0; i < n; i++)
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
            struct dv_options o;
            experiment_defaults(&o);
            o.part = DV_PART_1;
            o.block_x = shapes[s][0];
            o.block_y = shapes[s][1];
            o.blocks = 8;
            o.npredicates = 2;
            snprintf(o.predicates[0], PREDICATE_TEXT_LEN, "%s", b[i].name);
            snprintf(o.predicates[1], PREDICATE_TEXT_LEN, "%s", b[i].expr);
            snprintf(o.baseline, PREDICATE_TEXT_LEN, "%s", b[i].name);
            struct dv_report *r = plan(&o);
            const struct dv_row *a = &r->tables[0].rows[0], *c = &r->tables[0].rows[1];
            cr_expect_str_eq(a->label, b[i].expr, "%s: the label is the expression", b[i].name);
            cr_expect_str_eq(c->label, a->label);
            cr_expect(a->warps_split.total == c->warps_split.total && a->threads_on_a.total == c->threads_on_a.total &&
                          a->path_runs.total == c->path_runs.total && a->threads_on_a.min == c->threads_on_a.min,
                      "%s in %ux%u: the label typed in is another row", b[i].name, shapes[s][0], shapes[s][1]);
            cr_expect(strlen(b[i].hint) > 10, "%s has a hint", b[i].name);
            experiment_report_free(r);
        }
}
