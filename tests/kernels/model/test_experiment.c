/* test_experiment.c -- the planner's answers that every reader shares: what
 * a planned row evaluates (its predicate, whether it reads blockIdx.x, how
 * often, whether from a device mask), checked against the kernels' own
 * arguments and against the predicate language's reading of the same text.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "kernels/model/experiment.h"

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
 * of field, including a predicate whose text the planner trims. */
Test(experiment, plan_errors_carry_their_field) {
    static const struct {
        const char *what, *field, *prefix;
    } cases[] = {
        {"tpb", "threads_per_block", "threads_per_block: "},
        {"iterations", "iterations", "iterations: "},
        {"grid", "blocks", "blocks: "},
        {"no predicates", "predicates", "predicates: "},
        {"bad name", "predicates[2]", "predicates[2]: "},
        {"fails for a thread", "predicates[1]", "predicate '1 << 64': "},
        {"bad baseline", "baseline", "baseline: "},
        {"baseline not a row", "baseline", "baseline: 'warp-parity' is not"},
        {"scenario name", "scenario", "scenario: unknown name"},
        {"scenario grid", "blocks", "scenario even-2way: bad geometry"},
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
        const char *field = "unset";
        char err[ERR_LEN] = "";
        cr_expect_eq(experiment_plan(&o, r, &field, err), -1, "%s", w);
        cr_expect_str_eq(field, cases[i].field, "%s: %s", w, err);
        cr_expect(strncmp(err, cases[i].prefix, strlen(cases[i].prefix)) == 0, "%s: %s", w, err);
        experiment_report_free(r);
    }
}

Test(experiment, a_plan_that_succeeds_blames_no_field) {
    struct dv_options o;
    experiment_defaults(&o);
    struct dv_report *r = experiment_report_create();
    const char *field = "unset";
    char err[ERR_LEN] = "";
    cr_assert_eq(experiment_plan(&o, r, &field, err), 0, "%s", err);
    cr_expect_str_eq(field, "");
    cr_assert_eq(experiment_plan(&o, r, NULL, err), 0, "%s", err);
    experiment_report_free(r);
}

Test(experiment, predicate_fields_are_static_names) {
    cr_expect_str_eq(experiment_predicate_field(0), "predicates[0]");
    cr_expect_str_eq(experiment_predicate_field(DV_MAX_ROWS - 1), "predicates[15]");
    cr_expect_str_eq(experiment_predicate_field(DV_MAX_ROWS), "predicates");
}
