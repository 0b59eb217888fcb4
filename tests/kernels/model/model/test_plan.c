/* test_plan.c -- the planner: a request's tables and their rows' analysis,
 * what a failed plan is about, what the analysis costs, the Part 2 rows
 * every reader takes from the planner, and a planned row's path mask.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/model/model/analysis.h"
#include "kernels/model/model/experiment.h"
#include "kernels/model/model/plan.h"

static struct dv_report *plan(const struct dv_options *o) {
    struct dv_report *r = experiment_report_create();
    char err[ERR_LEN] = "";
    cr_assert_not_null(r);
    cr_assert_eq(plan_report(o, r, NULL, err), 0, "%s", err);
    return r;
}

/* ---- the lesson's tables ------------------------------------------------------ */

Test(plan, part1_predicted_ratios_and_comparable) {
    struct dv_options o;
    experiment_defaults(&o);
    o.part = DV_PART_1;
    snprintf(o.predicates[o.npredicates++], PREDICATE_TEXT_LEN, "first-16");
    struct dv_report *r = plan(&o);
    cr_assert_eq(r->ntables, 1);
    const struct dv_table *t = &r->tables[0];
    cr_assert_str_eq(t->kernel, "branch");
    cr_assert_str_eq(t->rows[t->baseline_row].name, "warp-parity");
    /* 16 path-runs against 8: 2.0; uniform rows 1.0; first-16 9/8. */
    cr_assert_float_eq(t->rows[0].predicted_ratio, 2.0, 1e-12);
    cr_assert_float_eq(t->rows[1].predicted_ratio, 2.0, 1e-12);
    cr_assert_float_eq(t->rows[2].predicted_ratio, 1.0, 1e-12);
    cr_assert_float_eq(t->rows[3].predicted_ratio, 1.0, 1e-12);
    cr_assert_float_eq(t->rows[4].predicted_ratio, 9.0 / 8.0, 1e-12);
    for (int i = 0; i < 4; i++) cr_assert(t->rows[i].comparable, "row %d", i);
    cr_assert_not(t->rows[4].comparable);
    cr_assert(strstr(t->rows[4].comparable_reason, "16 of 256 threads per block on path A against 128") != NULL,
              "%s", t->rows[4].comparable_reason);
    experiment_report_free(r);
}

Test(plan, any_expression_moves_every_row_to_the_mask_kernel) {
    struct dv_options o;
    experiment_defaults(&o);
    o.part = DV_PART_1;
    snprintf(o.predicates[o.npredicates++], PREDICATE_TEXT_LEN, "threadIdx.x < 32");
    struct dv_report *r = plan(&o);
    const struct dv_table *t = &r->tables[0];
    cr_assert_str_eq(t->kernel, "mask");
    for (unsigned i = 0; i < t->nrows; i++) cr_assert_eq(t->rows[i].kernel, DV_KERNEL_MASK);
    experiment_report_free(r);
}

Test(plan, rejects_a_grid_over_the_limit) {
    struct dv_options o;
    char err[ERR_LEN];
    experiment_defaults(&o);
    o.blocks = DV_MAX_BLOCKS;
    o.block_x = 1024;
    struct dv_report *r = experiment_report_create();
    cr_assert_eq(plan_report(&o, r, NULL, err), -1);
    cr_assert(strstr(err, "blocks:") == err, "%s", err);
    experiment_report_free(r);
}

/* A plan's error carries the request field it is about as a value: each kind
 * of field, including a predicate whose text the planner trims; and an
 * expression's, where in it, with the caret under the text it counts in. */
Test(plan, errors_carry_their_field) {
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
        cr_expect_eq(plan_report(&o, r, &fault, err), -1, "%s", w);
        cr_expect_str_eq(fault.field, cases[i].field, "%s: %s", w, err);
        cr_expect(strncmp(err, cases[i].prefix, strlen(cases[i].prefix)) == 0, "%s: %s", w, err);
        cr_expect_eq(fault.expr.column, cases[i].column, "%s: %s", w, err);
        cr_expect_str_eq(fault.expr.caret, cases[i].caret, "%s: %s", w, err);
        cr_expect(strchr(err, '\n') == NULL, "%s: the message is one line: %s", w, err);
        experiment_report_free(r);
    }
}

Test(plan, a_plan_that_succeeds_blames_no_field) {
    struct dv_options o;
    experiment_defaults(&o);
    struct dv_report *r = experiment_report_create();
    struct dv_fault fault = {"unset", {-1, "unset"}};
    char err[ERR_LEN] = "";
    cr_assert_eq(plan_report(&o, r, &fault, err), 0, "%s", err);
    cr_expect_str_eq(fault.field, "");
    cr_expect_eq(fault.expr.column, 0);
    cr_expect_str_eq(fault.expr.caret, "");
    cr_assert_eq(plan_report(&o, r, NULL, err), 0, "%s", err);
    experiment_report_free(r);
}

/* ---- the cost rule counts what the plan evaluates --------------------------- */

Test(plan, cost_is_what_the_plan_evaluates) {
    struct dv_options o;
    const char *field = NULL;
    experiment_defaults(&o);
    snprintf(o.scenario, sizeof o.scenario, "all");
    unsigned rows = 0;
    struct dv_report *r = plan(&o);
    for (unsigned t = 0; t < r->ntables; t++) rows += r->tables[t].nrows;
    experiment_report_free(r);
    cr_expect_float_eq(plan_cost(&o, &field), (double)rows * 4096 * 256, 1e-6,
                       "every scenario row over every thread, and no Part row");
    cr_expect_str_eq(field, "scenario");
    experiment_defaults(&o);
    o.part = DV_PART_1;
    snprintf(o.predicates[1], sizeof o.predicates[1], "blockIdx.x %% 5 == 1");
    /* two rows read blockIdx.x (the expression and block parity): every thread */
    cr_expect_float_eq(plan_cost(&o, &field), 2 * 4096.0 * 256 + 2 * 256, 1e-6);
    cr_expect_str_eq(field, "predicates[1]", "the first predicate that reads blockIdx.x");
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

Test(plan, an_empty_baseline_path_is_said_with_its_warp_level_analogue) {
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

Test(plan, a_builtins_label_typed_in_is_the_builtins_row) {
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

/* ---- Part 2's rows: one list, read by the table and the cost rules ---------- */

Test(plan, part2_rows_are_the_tables_rows) {
    struct dv_options o;
    experiment_defaults(&o);
    o.part = DV_PART_2;
    struct dv_report *r = plan(&o);
    const struct dv_table *t = &r->tables[0];
    unsigned n = 0;
    const struct plan_fixed_row *rows = plan_part2_rows(&n);
    cr_assert_eq(t->nrows, n);
    cr_assert_eq(n, 3);
    cr_expect_str_eq(t->baseline, rows[0].name, "the first is the baseline");
    cr_expect_str_eq(rows[0].name, "no-branch");
    cr_expect_float_eq(t->rows[1].predicted_ratio, 2.0, 1e-12, "lane parity splits every warp");
    cr_expect_float_eq(t->rows[2].predicted_ratio, 1.0, 1e-12, "warp parity splits none");
    for (unsigned i = 0; i < n; i++) {
        cr_expect_str_eq(t->rows[i].name, rows[i].name);
        cr_expect_str_eq(t->rows[i].label, rows[i].label);
        cr_expect_str_eq(t->rows[i].note, rows[i].note);
        cr_expect_eq(t->rows[i].kernel, rows[i].kernel);
        cr_expect_eq(t->rows[i].mode, rows[i].mode);
    }
    experiment_report_free(r);
    /* No Part 2 row reads blockIdx.x: each costs one block of evaluations. */
    cr_expect_float_eq(plan_cost(&o, NULL), n * 256.0, 1e-9);
}

/* A planned row's mask is its predicate's: the kernel's mode for a built-in
 * row, the expression for a mask row, evaluated on every block when it reads
 * blockIdx.x. */
Test(plan, a_rows_mask_is_the_mask_of_the_predicate_its_kernel_evaluates) {
    struct dv_options o;
    experiment_defaults(&o);
    o.part = DV_PART_1;
    o.blocks = 6;
    o.npredicates = 2;
    snprintf(o.predicates[0], PREDICATE_TEXT_LEN, "block-parity");
    snprintf(o.predicates[1], PREDICATE_TEXT_LEN, "blockIdx.x %% 3 == 0");
    snprintf(o.baseline, PREDICATE_TEXT_LEN, "block-parity");
    struct dv_report *r = plan(&o);
    const struct dv_geometry g = {6, 256, 1};
    const char *texts[] = {"block-parity", "blockIdx.x % 3 == 0"};
    for (unsigned i = 0; i < 2; i++) {
        char err[ERR_LEN] = "";
        struct predicate p;
        cr_assert_eq(predicate_resolve(texts[i], &p, NULL, err), 0, "%s", err);
        uint32_t *want = analysis_mask_build(&p, &g, 0, err), *got = plan_row_mask(&r->tables[0].rows[i], &g, err);
        cr_assert(want && got, "%s", err);
        cr_expect(memcmp(want, got, analysis_mask_words(&g) * sizeof *got) == 0, "%s", texts[i]);
        cr_expect_eq(got[0] & 1u, 1u, "%s: block 0 on path A", texts[i]);
        cr_expect_eq(got[8] & 1u, 0u, "%s: block 1 on path B", texts[i]);
        cr_expect_eq(got[24] & 1u, i == 0 ? 0u : 1u, "%s: block 3 is odd, and a multiple of 3", texts[i]);
        free(want);
        free(got);
        predicate_cleanup(&p);
    }
    experiment_report_free(r);
}
