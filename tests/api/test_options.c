/* test_options.c -- defaults, every range rule in both spellings, CLI parsing,
 * predicate checks and the baseline row, cost and canonical form. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "api/options.h"
#include "kernels/model/model/scenario.h"
#include "kernels/model/model/scenario_table.h"

static struct dv_options o;
static char err[ERR_LEN];
static struct dv_fault fault;

static void setup(void) {
    experiment_defaults(&o);
    err[0] = '\0';
    memset(&fault, 0, sizeof fault);
}

TestSuite(options, .init = setup);

/* Validates with both styles; each must fail with its own spelling of the
 * field first in the message and `json` in *field. */
static void expect_invalid(const struct dv_options *in, const char *json, const char *cli,
                           const char *range_text) {
    struct dv_options a = *in, b = *in;
    cr_assert_eq(options_validate(&a, OPTIONS_JSON, &fault, err), -1, "%s accepted", json);
    cr_expect_str_eq(fault.field, json);
    cr_expect(strncmp(err, json, strlen(json)) == 0 && err[strlen(json)] == ':',
              "JSON message \"%s\" does not start with %s:", err, json);
    if (range_text) cr_expect(strstr(err, range_text) != NULL, "\"%s\" lacks \"%s\"", err, range_text);
    cr_assert_eq(options_validate(&b, OPTIONS_CLI, &fault, err), -1);
    cr_expect_str_eq(fault.field, json);
    cr_expect(strncmp(err, cli, strlen(cli)) == 0 && err[strlen(cli)] == ':',
              "CLI message \"%s\" does not start with %s:", err, cli);
}

Test(options, defaults_are_the_lessons) {
    cr_expect_eq(o.part, DV_PART_ALL);
    cr_assert_eq(o.npredicates, 4);
    cr_expect_str_eq(o.predicates[0], "lane-parity");
    cr_expect_str_eq(o.predicates[1], "lane-half");
    cr_expect_str_eq(o.predicates[2], "warp-parity");
    cr_expect_str_eq(o.predicates[3], "block-parity");
    cr_expect_str_eq(o.baseline, "warp-parity");
    cr_expect_eq(o.blocks, 4096);
    cr_expect_eq(o.block_x, 256);
    cr_expect_eq(o.block_y, 1);
    cr_expect_eq(o.iterations, 4096);
    cr_expect_float_eq(o.max_noise, 0.005, 1e-12);
    cr_expect_float_eq(o.budget_ms, 2000.0, 1e-9);
    cr_expect_eq(o.min_samples, 10);
    cr_expect_eq(o.max_samples, 2000);
    cr_expect_eq(o.device, 0);
    cr_expect_str_eq(o.scenario, "");
    cr_expect_eq(options_validate(&o, OPTIONS_JSON, &fault, err), 0, "%s", err);
    cr_expect_eq(o.npredicates, 4, "the baseline is already a row");
}

Test(options, part_range) {
    o.part = 3;
    expect_invalid(&o, "part", "--part", "1, 2 or ");
    o.part = -1;
    expect_invalid(&o, "part", "--part", NULL);
}

Test(options, blocks_range) {
    o.blocks = DV_MAX_BLOCKS + 1;
    expect_invalid(&o, "blocks", "--blocks", "1..1048576 or ");
    o.blocks = DV_MAX_BLOCKS;
    cr_expect_eq(options_validate(&o, OPTIONS_JSON, &fault, err), 0, "%s", err);
    o.blocks = 0; /* auto */
    cr_expect_eq(options_validate(&o, OPTIONS_JSON, &fault, err), 0, "%s", err);
}

Test(options, threads_per_block_range) {
    o.block_x = 0;
    expect_invalid(&o, "threads_per_block", "--threads-per-block", "1..1024");
    o.block_x = 1025;
    expect_invalid(&o, "threads_per_block", "--threads-per-block", "1..1024");
    o.block_x = 32;
    o.block_y = 33;
    expect_invalid(&o, "threads_per_block", "--threads-per-block", "x*y");
    o.block_y = 0;
    expect_invalid(&o, "threads_per_block", "--threads-per-block", NULL);
    o.block_x = 65536; /* x*y wraps to 0 in 32 bits: still rejected */
    o.block_y = 65536;
    expect_invalid(&o, "threads_per_block", "--threads-per-block", NULL);
    o.block_x = 32;
    o.block_y = 32;
    cr_expect_eq(options_validate(&o, OPTIONS_JSON, &fault, err), 0, "%s", err);
    o.block_x = 1;
    o.block_y = 1;
    cr_expect_eq(options_validate(&o, OPTIONS_JSON, &fault, err), 0, "%s", err);
}

Test(options, iterations_range) {
    o.iterations = 0;
    expect_invalid(&o, "iterations", "--iterations", "1..1048576");
    o.iterations = DV_MAX_ITERATIONS + 1;
    expect_invalid(&o, "iterations", "--iterations", "1..1048576");
    o.iterations = DV_MAX_ITERATIONS;
    cr_expect_eq(options_validate(&o, OPTIONS_JSON, &fault, err), 0, "%s", err);
}

/* The half-width target (max_halfwidth; max_noise is its old name, and the
 * message says so). */
Test(options, max_halfwidth_range) {
    o.max_noise = 0;
    expect_invalid(&o, "max_halfwidth", "--max-halfwidth", "0.5");
    cr_expect(strstr(err, "--max-noise is its old name") != NULL, "%s", err);
    o.max_noise = -0.1;
    expect_invalid(&o, "max_halfwidth", "--max-halfwidth", NULL);
    o.max_noise = 0.5000001;
    expect_invalid(&o, "max_halfwidth", "--max-halfwidth", NULL);
    o.max_noise = NAN;
    expect_invalid(&o, "max_halfwidth", "--max-halfwidth", NULL);
    o.max_noise = 0.5;
    cr_expect_eq(options_validate(&o, OPTIONS_JSON, &fault, err), 0, "%s", err);
}

Test(options, budget_range) {
    o.budget_ms = 0.5;
    expect_invalid(&o, "budget_ms", "--budget-ms", "1..60000");
    o.budget_ms = 60000.5;
    expect_invalid(&o, "budget_ms", "--budget-ms", NULL);
    o.budget_ms = INFINITY;
    expect_invalid(&o, "budget_ms", "--budget-ms", NULL);
    o.budget_ms = 60000;
    cr_expect_eq(options_validate(&o, OPTIONS_JSON, &fault, err), 0, "%s", err);
}

Test(options, samples_range) {
    o.min_samples = 0;
    expect_invalid(&o, "min_samples", "--min-samples", NULL);
    o.min_samples = 2001;
    expect_invalid(&o, "min_samples", "--min-samples", "max_samples");
    o.min_samples = 10;
    o.max_samples = 0;
    expect_invalid(&o, "max_samples", "--max-samples", NULL);
    o.max_samples = 100001;
    expect_invalid(&o, "max_samples", "--max-samples", "100000");
}

Test(options, device_and_scenario_range) {
    o.device = -1;
    expect_invalid(&o, "device", "--device", NULL);
    o.device = 64;
    expect_invalid(&o, "device", "--device", "0..63");
    o.device = 0;
    memset(o.scenario, 'a', sizeof o.scenario); /* no terminator inside */
    expect_invalid(&o, "scenario", "--scenario", NULL);
    snprintf(o.scenario, sizeof o.scenario, "two words");
    expect_invalid(&o, "scenario", "--scenario", NULL);
    snprintf(o.scenario, sizeof o.scenario, "all");
    cr_expect_eq(options_validate(&o, OPTIONS_JSON, &fault, err), 0, "%s", err);
}

Test(options, predicate_count_range) {
    o.npredicates = 0;
    expect_invalid(&o, "predicates", "--predicates", "1 to 16");
    o.npredicates = DV_MAX_ROWS + 1;
    expect_invalid(&o, "predicates", "--predicates", NULL);
}

Test(options, duplicate_predicates) {
    snprintf(o.predicates[3], sizeof o.predicates[3], "lane-parity");
    cr_assert_eq(options_validate(&o, OPTIONS_JSON, &fault, err), -1);
    cr_expect_str_eq(fault.field, "predicates[3]");
    cr_expect(strstr(err, "predicates[3]: duplicate of predicates[0]") == err, "%s", err);
    cr_assert_eq(options_validate(&o, OPTIONS_CLI, &fault, err), -1);
    cr_expect(strstr(err, "--predicates") == err && strstr(err, "lane-parity"), "%s", err);
}

/* The column and the caret are values of the error (STYLE.md rule 19),
 * the message one line that names the column for a reader of the text. */
Test(options, expression_error_names_entry_with_column_and_caret) {
    snprintf(o.predicates[2], sizeof o.predicates[2], "threadIdx.x $ 2");
    cr_assert_eq(options_validate(&o, OPTIONS_JSON, &fault, err), -1);
    cr_expect_str_eq(fault.field, "predicates[2]");
    cr_expect_str_eq(err, "predicates[2]: column 13: unexpected character '$'");
    cr_expect_eq(fault.expr.column, 13);
    cr_expect_str_eq(fault.expr.caret, "threadIdx.x $ 2\n            ^");
    memset(&fault, 0, sizeof fault);
    cr_assert_eq(options_validate(&o, OPTIONS_CLI, &fault, err), -1);
    cr_expect_str_eq(err, "--predicates: \"threadIdx.x $ 2\": column 13: unexpected character '$'");
    cr_expect_eq(fault.expr.column, 13);
    cr_expect_str_eq(fault.expr.caret, "threadIdx.x $ 2\n            ^");
    /* Surrounding blanks are not the predicate's: the column and the caret
     * count in the text without them, as the message does. */
    snprintf(o.predicates[2], sizeof o.predicates[2], "  threadIdx.x $ 2 ");
    cr_assert_eq(options_validate(&o, OPTIONS_JSON, &fault, err), -1);
    cr_expect_eq(fault.expr.column, 13);
    cr_expect_str_eq(fault.expr.caret, "threadIdx.x $ 2\n            ^");
}

/* An error that is not about a column of an expression carries none. */
Test(options, other_errors_carry_no_column) {
    fault.expr.column = 7;
    snprintf(fault.expr.caret, sizeof fault.expr.caret, "stale");
    o.iterations = 0;
    cr_assert_eq(options_validate(&o, OPTIONS_JSON, &fault, err), -1);
    cr_expect_str_eq(fault.field, "iterations");
    cr_expect_eq(fault.expr.column, 0);
    cr_expect_str_eq(fault.expr.caret, "");
    experiment_defaults(&o);
    snprintf(o.predicates[1], sizeof o.predicates[1], "   ");
    cr_assert_eq(options_validate(&o, OPTIONS_JSON, &fault, err), -1);
    cr_expect_str_eq(fault.field, "predicates[1]");
    cr_expect_eq(fault.expr.column, 0, "an empty predicate has no column: %s", err);
}

Test(options, expressions_and_builtins_resolve) {
    o.npredicates = 3;
    snprintf(o.predicates[0], sizeof o.predicates[0], "first-16");
    snprintf(o.predicates[1], sizeof o.predicates[1], "threadIdx.y & 1");
    snprintf(o.predicates[2], sizeof o.predicates[2], "warp-parity");
    cr_expect_eq(options_validate(&o, OPTIONS_JSON, &fault, err), 0, "%s", err);
    cr_expect_eq(o.npredicates, 3);
}

Test(options, baseline_appended_as_a_row) {
    o.npredicates = 2; /* lane-parity, lane-half */
    cr_assert_eq(options_validate(&o, OPTIONS_JSON, &fault, err), 0, "%s", err);
    cr_assert_eq(o.npredicates, 3);
    cr_expect_str_eq(o.predicates[2], "warp-parity");
    cr_expect_str_eq(o.baseline, "warp-parity");
    /* Validating again changes nothing. */
    cr_assert_eq(options_validate(&o, OPTIONS_JSON, &fault, err), 0, "%s", err);
    cr_expect_eq(o.npredicates, 3);
}

Test(options, baseline_expression_appended) {
    snprintf(o.baseline, sizeof o.baseline, "threadIdx.x < 32");
    cr_assert_eq(options_validate(&o, OPTIONS_JSON, &fault, err), 0, "%s", err);
    cr_assert_eq(o.npredicates, 5);
    cr_expect_str_eq(o.predicates[4], "threadIdx.x < 32");
}

Test(options, baseline_without_room_is_an_error) {
    o.npredicates = DV_MAX_ROWS;
    for (unsigned i = 0; i < DV_MAX_ROWS; i++)
        snprintf(o.predicates[i], sizeof o.predicates[i], "threadIdx.x < %u", i + 1);
    expect_invalid(&o, "baseline", "--baseline", NULL);
    cr_expect(strstr(err, "no room") != NULL, "%s", err);
}

Test(options, baseline_must_resolve) {
    snprintf(o.baseline, sizeof o.baseline, "threadIdx.x <");
    cr_assert_eq(options_validate(&o, OPTIONS_JSON, &fault, err), -1);
    cr_expect_str_eq(fault.field, "baseline");
    cr_expect_str_eq(err, "baseline: column 14: unexpected end of input, expected an operand");
    cr_expect_eq(fault.expr.column, 14);
    cr_expect_str_eq(fault.expr.caret, "threadIdx.x <\n             ^");
}

Test(options, cli_part) {
    cr_assert_eq(options_set_cli(&o, "--part", "1", err), 0);
    cr_expect_eq(o.part, DV_PART_1);
    cr_assert_eq(options_set_cli(&o, "--part", "2", err), 0);
    cr_expect_eq(o.part, DV_PART_2);
    cr_assert_eq(options_set_cli(&o, "--part", "all", err), 0);
    cr_expect_eq(o.part, DV_PART_ALL);
    cr_assert_eq(options_set_cli(&o, "--part", "3", err), -1);
    cr_expect(strncmp(err, "--part:", 7) == 0 && strstr(err, "1, 2 or all"), "%s", err);
}

Test(options, cli_blocks_auto_and_number) {
    cr_assert_eq(options_set_cli(&o, "--blocks", "auto", err), 0);
    cr_expect_eq(o.blocks, 0);
    cr_assert_eq(options_set_cli(&o, "--blocks", "132", err), 0);
    cr_expect_eq(o.blocks, 132);
    const char *bad[] = {"0", "-1", "+5", " 5", "5 ", "5x", "", "4294967296", "1e3", "Auto"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cr_expect_eq(options_set_cli(&o, "--blocks", bad[i], err), -1, "accepted \"%s\"", bad[i]);
        cr_expect(strncmp(err, "--blocks:", 9) == 0 && strstr(err, "1..1048576 or auto"), "%s", err);
    }
    cr_expect_eq(o.blocks, 132, "a rejected value leaves the option alone");
    /* In range for strtoul but not for the option: validation says so. */
    cr_assert_eq(options_set_cli(&o, "--blocks", "4294967295", err), 0);
    cr_expect_eq(options_validate(&o, OPTIONS_CLI, &fault, err), -1);
    cr_expect(strncmp(err, "--blocks:", 9) == 0, "%s", err);
}

Test(options, cli_threads_per_block_1d_and_2d) {
    cr_assert_eq(options_set_cli(&o, "--threads-per-block", "32x8", err), 0, "%s", err);
    cr_expect_eq(o.block_x, 32);
    cr_expect_eq(o.block_y, 8);
    cr_assert_eq(options_set_cli(&o, "--threads-per-block", "48", err), 0, "%s", err);
    cr_expect_eq(o.block_x, 48);
    cr_expect_eq(o.block_y, 1);
    const char *bad[] = {"x8", "32x", "32x-8", "32*8", "32x8x2", "-32", "abc", ""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cr_expect_eq(options_set_cli(&o, "--threads-per-block", bad[i], err), -1, "accepted \"%s\"",
                     bad[i]);
        cr_expect(strncmp(err, "--threads-per-block:", 20) == 0, "%s", err);
    }
    cr_assert_eq(options_set_cli(&o, "--threads-per-block", "64x32", err), 0);
    cr_expect_eq(options_validate(&o, OPTIONS_CLI, &fault, err), -1);
    cr_expect(strncmp(err, "--threads-per-block: more than 1024", 35) == 0, "%s", err);
}

Test(options, cli_numbers_are_strict) {
    cr_assert_eq(options_set_cli(&o, "--iterations", "1024", err), 0);
    cr_expect_eq(o.iterations, 1024);
    cr_expect_eq(options_set_cli(&o, "--iterations", "-1", err), -1);
    cr_expect(strncmp(err, "--iterations:", 13) == 0 && strstr(err, "1..1048576"), "%s", err);
    cr_expect_eq(options_set_cli(&o, "--iterations", "99999999999999999999", err), -1);
    cr_expect_eq(options_set_cli(&o, "--min-samples", "3", err), 0);
    cr_expect_eq(o.min_samples, 3);
    cr_expect_eq(options_set_cli(&o, "--max-samples", "12", err), 0);
    cr_expect_eq(o.max_samples, 12);
    cr_expect_eq(options_set_cli(&o, "--max-samples", "1.5", err), -1);
    cr_expect_eq(options_set_cli(&o, "--device", "1", err), 0);
    cr_expect_eq(o.device, 1);
    cr_expect_eq(options_set_cli(&o, "--device", "-1", err), -1);
    cr_expect(strncmp(err, "--device:", 9) == 0, "%s", err);
}

Test(options, cli_reals) {
    cr_assert_eq(options_set_cli(&o, "--max-noise", "0.01", err), 0);
    cr_expect_float_eq(o.max_noise, 0.01, 1e-15);
    cr_assert_eq(options_set_cli(&o, "--max-noise", "0.5%", err), 0);
    cr_expect_float_eq(o.max_noise, 0.005, 1e-15);
    cr_assert_eq(options_set_cli(&o, "--budget-ms", "250", err), 0);
    cr_expect_float_eq(o.budget_ms, 250.0, 1e-12);
    const char *bad[] = {"nan", "inf", "-1", "1e999", "0.1x", "", "%"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cr_expect_eq(options_set_cli(&o, "--max-noise", bad[i], err), -1, "accepted \"%s\"", bad[i]);
        cr_expect(strncmp(err, "--max-noise:", 12) == 0, "%s", err);
    }
    cr_expect_eq(options_set_cli(&o, "--budget-ms", "-5", err), -1);
    cr_expect(strncmp(err, "--budget-ms:", 12) == 0, "%s", err);
    cr_assert_eq(options_set_cli(&o, "--max-noise", "0.7", err), 0);
    cr_expect_eq(options_validate(&o, OPTIONS_CLI, &fault, err), -1);
    cr_expect(strncmp(err, "--max-halfwidth:", 16) == 0 && strstr(err, "0.5") && strstr(err, "--max-noise"), "%s",
              err);
    /* The new name and the old one set the same target. */
    cr_assert_eq(options_set_cli(&o, "--max-halfwidth", "0.002", err), 0, "%s", err);
    cr_expect_float_eq(o.max_noise, 0.002, 1e-15);
    cr_expect_eq(options_set_cli(&o, "--max-halfwidth", "x", err), -1);
    cr_expect(strncmp(err, "--max-halfwidth:", 16) == 0, "%s", err);
}

Test(options, cli_predicates_split_on_commas) {
    cr_assert_eq(options_set_cli(&o, "--predicates", "lane-parity, threadIdx.x < 16 ,first-16", err), 0,
                 "%s", err);
    cr_assert_eq(o.npredicates, 3);
    cr_expect_str_eq(o.predicates[0], "lane-parity");
    cr_expect_str_eq(o.predicates[1], "threadIdx.x < 16");
    cr_expect_str_eq(o.predicates[2], "first-16");
    cr_expect_eq(options_set_cli(&o, "--predicates", "a,,b", err), -1);
    cr_expect(strncmp(err, "--predicates:", 13) == 0, "%s", err);
    cr_expect_eq(options_set_cli(&o, "--predicates", "", err), -1);
    cr_expect_eq(o.npredicates, 3, "a rejected list leaves the rows alone");
    char many[512] = "";
    for (int i = 0; i < 17; i++) strcat(many, i ? ",lane" : "lane");
    cr_expect_eq(options_set_cli(&o, "--predicates", many, err), -1);
    cr_expect(strstr(err, "more than 16") != NULL, "%s", err);
    char longone[300];
    memset(longone, '1', sizeof longone - 1);
    longone[sizeof longone - 1] = '\0';
    cr_expect_eq(options_set_cli(&o, "--predicates", longone, err), -1);
    cr_expect(strstr(err, "longer than 256") != NULL, "%s", err);
}

Test(options, cli_baseline_scenario_and_unknown) {
    cr_assert_eq(options_set_cli(&o, "--baseline", "lane-half", err), 0);
    cr_expect_str_eq(o.baseline, "lane-half");
    cr_expect_eq(options_set_cli(&o, "--baseline", "", err), -1);
    cr_assert_eq(options_set_cli(&o, "--scenario", "all", err), 0);
    cr_expect_str_eq(o.scenario, "all");
    char longname[80];
    memset(longname, 's', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    cr_expect_eq(options_set_cli(&o, "--scenario", longname, err), -1);
    cr_expect(strncmp(err, "--scenario:", 11) == 0, "%s", err);
    cr_expect_eq(options_set_cli(&o, "--colour", "red", err), -1);
    cr_expect_str_eq(err, "--colour: unknown option");
    cr_expect_eq(options_set_cli(&o, "--blocks", NULL, err), -1);
    cr_expect_str_eq(err, "--blocks: missing value");
}

Test(options, cost_is_threads_iterations_rows_samples) {
    o.part = DV_PART_1;
    double want = 4096.0 * 256 * 4096 * 4 * 2000;
    cr_expect_float_eq(options_cost(&o), want, want * 1e-12);
    o.part = DV_PART_ALL;
    want = 4096.0 * 256 * 4096 * (4 + 3) * 2000;
    cr_expect_float_eq(options_cost(&o), want, want * 1e-12);
    o.block_x = 32;
    o.block_y = 8;
    cr_expect_float_eq(options_cost(&o), want, want * 1e-12, "a 32x8 block is 256 threads");
    o.blocks = 0; /* auto: bounded from above, never below the fixed grid */
    cr_expect(options_cost(&o) >= want);
}

/* The scenario tables run instead of the Part tables (plan_report):
 * the cost counts their rows, each scenario's own, and no Part row. */
Test(options, scenario_costs_its_own_rows_instead_of_the_parts) {
    o.blocks = 4096;
    o.part = DV_PART_1;
    snprintf(o.scenario, sizeof o.scenario, "all");
    unsigned rows = 0; /* "all": the worked cases */
    for (size_t i = 0; scenario_get(i); i++)
        if (scenario_get(i)->set == SCENARIO_SET_WORKED) rows += scenario_get(i)->nrows;
    cr_assert_gt(rows, 0);
    double want = 4096.0 * 256 * 4096 * rows * 2000;
    cr_expect_float_eq(options_cost(&o), want, want * 1e-12);
    cr_expect(options_cost(&o) < 1e15, "the server's default per-job limit admits the scenario suite");
    snprintf(o.scenario, sizeof o.scenario, "C7"); /* a worked case of two scenarios */
    rows = scenario_find("short-predicated")->nrows + scenario_find("short-branch")->nrows;
    want = 4096.0 * 256 * 4096 * rows * 2000;
    cr_expect_float_eq(options_cost(&o), want, want * 1e-12);
    cr_expect_eq(options_tables(&o), 2);
    o.blocks = 0; /* scenario tables run the lesson's 4096 blocks for auto */
    cr_expect_float_eq(options_cost(&o), want, want * 1e-12);
}

Test(options, canonical_is_stable_and_distinguishing) {
    char a[2048], b[2048];
    cr_assert_eq(options_canonical(&o, a, sizeof a), 0);
    cr_expect_str_eq(a, "part=all predicates=[\"lane-parity\",\"lane-half\",\"warp-parity\","
                        "\"block-parity\"] baseline=\"warp-parity\" blocks=4096 block=256x1 "
                        "iterations=4096 max_noise=0.0050000000000000001 budget_ms=2000 "
                        "min_samples=10 max_samples=2000 device=0 scenario=\"\"");
    struct dv_options p = o;
    p.blocks = 0;
    cr_assert_eq(options_canonical(&p, b, sizeof b), 0);
    cr_expect(strstr(b, "blocks=auto") != NULL);
    cr_expect_str_neq(a, b);
    p = o;
    snprintf(p.predicates[0], sizeof p.predicates[0], "a\",\"b");
    cr_assert_eq(options_canonical(&p, b, sizeof b), 0);
    cr_expect(strstr(b, "[\"a\\\",\\\"b\",") != NULL, "%s", b);
    cr_expect_eq(options_canonical(&o, a, 20), -1, "truncation is an error");
}

Test(options, witness_and_counters_switch_on_and_off) {
    struct dv_options p;
    char a[1024], b[1024];
    experiment_defaults(&p);
    cr_assert_eq(options_canonical(&p, a, sizeof a), 0);
    cr_expect(strstr(a, "counters") == NULL, "%s", a);
    cr_assert_eq(options_set_cli(&p, "--counters", "off", err), 0, "%s", err);
    cr_assert_eq(options_set_cli(&p, "--witness", "off", err), 0, "%s", err);
    cr_expect_eq(p.no_counters, 1);
    cr_expect_eq(p.no_witness, 1);
    cr_assert_eq(options_canonical(&p, b, sizeof b), 0);
    cr_expect(strstr(b, " witness=off counters=off") != NULL, "%s", b);
    cr_expect_str_neq(a, b);
    cr_assert_eq(options_set_cli(&p, "--counters", "on", err), 0, "%s", err);
    cr_expect_eq(p.no_counters, 0);
    cr_expect_eq(options_set_cli(&p, "--counters", "maybe", err), -1);
    cr_expect(strstr(err, "--counters") != NULL && strstr(err, "on or off") != NULL, "%s", err);
}

/* ---- the ranges the messages state are the ranges the rules apply --------
 * Each message's numbers are read back and tried at and just past each end,
 * in both spellings, so a range retyped as text (or a constant changed
 * without its text) fails here. */

static int valid(const struct dv_options *in) {
    struct dv_options c = *in;
    char e[ERR_LEN];
    return options_validate(&c, OPTIONS_JSON, NULL, e) == 0;
}

/* The message for `bad` in `style`, which must be a rejection. */
static const char *message(const struct dv_options *bad, enum options_style style) {
    static char msg[ERR_LEN];
    struct dv_options c = *bad;
    cr_assert_eq(options_validate(&c, style, NULL, msg), -1, "accepted");
    return msg;
}

/* The number right after the last `marker` in `msg`. */
static double number_after(const char *msg, const char *marker) {
    const char *p = NULL;
    for (const char *q = strstr(msg, marker); q; q = strstr(q + 1, marker)) p = q;
    cr_assert_not_null(p, "\"%s\" has no \"%s\"", msg, marker);
    char *end;
    double v = strtod(p + strlen(marker), &end);
    cr_assert_neq(end, p + strlen(marker), "\"%s\": no number after \"%s\"", msg, marker);
    return v;
}

/* The number right before the last "..": the range's low end. */
static double number_before_dots(const char *msg) {
    const char *p = NULL;
    for (const char *q = strstr(msg, ".."); q; q = strstr(q + 1, "..")) p = q;
    cr_assert_not_null(p, "\"%s\" states no range", msg);
    const char *s = p;
    while (s > msg && (s[-1] >= '0' && s[-1] <= '9')) s--;
    cr_assert_neq(s, p, "\"%s\": no number before \"..\"", msg);
    return strtod(s, NULL);
}

/* Low and high end of the "A..B" range in the message for `bad`, the same in both spellings. */
static void range_of(const struct dv_options *bad, double *lo, double *hi) {
    const char *json = message(bad, OPTIONS_JSON);
    *lo = number_before_dots(json);
    *hi = number_after(json, "..");
    const char *cli = message(bad, OPTIONS_CLI);
    cr_expect_eq(number_before_dots(cli), *lo, "%s", cli);
    cr_expect_eq(number_after(cli, ".."), *hi, "%s", cli);
}

Test(options, stated_ranges_are_the_rules_for_whole_numbers) {
    double lo, hi;
    struct dv_options t = o;

    t.blocks = DV_MAX_BLOCKS + 1;
    range_of(&t, &lo, &hi);
    t.blocks = (unsigned)lo;
    cr_expect(valid(&t), "blocks %g", lo);
    t.blocks = (unsigned)hi;
    cr_expect(valid(&t), "blocks %g", hi);
    t.blocks = (unsigned)hi + 1;
    cr_expect(!valid(&t), "blocks %g + 1", hi);
    t = o;

    t.iterations = 0;
    range_of(&t, &lo, &hi);
    t.iterations = (unsigned)lo;
    cr_expect(valid(&t));
    t.iterations = (unsigned)lo - 1;
    cr_expect(!valid(&t));
    t.iterations = (unsigned)hi;
    cr_expect(valid(&t), "iterations %g", hi);
    t.iterations = (unsigned)hi + 1;
    cr_expect(!valid(&t), "iterations %g + 1", hi);
    t = o;

    t.block_x = DV_MAX_THREADS_PER_BLOCK + 1;
    range_of(&t, &lo, &hi);
    cr_expect_eq(number_after(message(&t, OPTIONS_JSON), "x*y in "), lo);
    t.block_x = (unsigned)lo;
    cr_expect(valid(&t));
    t.block_x = (unsigned)lo - 1;
    cr_expect(!valid(&t));
    t.block_x = (unsigned)hi;
    cr_expect(valid(&t), "threads_per_block %g", hi);
    t.block_x = (unsigned)hi + 1;
    cr_expect(!valid(&t), "threads_per_block %g + 1", hi);
    t.block_x = 2;
    t.block_y = (unsigned)hi / 2 + 1; /* x*y just over */
    cr_expect(!valid(&t));
    cr_expect_eq(number_after(message(&t, OPTIONS_JSON), "more than "), hi, "%s", message(&t, OPTIONS_JSON));
    t = o;

    t.device = OPTIONS_MAX_DEVICE + 1;
    range_of(&t, &lo, &hi);
    t.device = (int)lo;
    cr_expect(valid(&t));
    t.device = (int)lo - 1;
    cr_expect(!valid(&t));
    t.device = (int)hi;
    cr_expect(valid(&t), "device %g", hi);
    t.device = (int)hi + 1;
    cr_expect(!valid(&t), "device %g + 1", hi);
    t = o;

    t.max_samples = OPTIONS_MAX_SAMPLES + 1;
    hi = number_after(message(&t, OPTIONS_JSON), "min_samples..");
    cr_expect_eq(number_after(message(&t, OPTIONS_CLI), "min_samples.."), hi);
    t.max_samples = (unsigned)hi;
    cr_expect(valid(&t), "max_samples %g", hi);
    t.max_samples = (unsigned)hi + 1;
    cr_expect(!valid(&t), "max_samples %g + 1", hi);
}

Test(options, stated_ranges_are_the_rules_for_reals) {
    double lo, hi;
    struct dv_options t = o;

    t.budget_ms = 0;
    range_of(&t, &lo, &hi);
    t.budget_ms = lo;
    cr_expect(valid(&t), "budget_ms %g", lo);
    t.budget_ms = lo * (1 - 1e-9);
    cr_expect(!valid(&t), "budget_ms just under %g", lo);
    t.budget_ms = hi;
    cr_expect(valid(&t), "budget_ms %g", hi);
    t.budget_ms = hi * (1 + 1e-9);
    cr_expect(!valid(&t), "budget_ms just over %g", hi);
    t = o;

    t.max_noise = 2;
    for (int style = OPTIONS_JSON; style <= OPTIONS_CLI; style++) {
        const char *msg = message(&t, (enum options_style)style);
        hi = number_after(msg, "at most ");
        cr_expect_eq(number_after(msg, "("), hi * 100, "%s", msg);
        struct dv_options u = o;
        u.max_noise = hi;
        cr_expect(valid(&u), "max_halfwidth %g", hi);
        u.max_noise = hi * (1 + 1e-9);
        cr_expect(!valid(&u), "max_halfwidth just over %g", hi);
    }
}

Test(options, stated_counts_and_lengths_are_the_rules) {
    struct dv_options t = o;
    t.npredicates = 0;
    double n = number_after(message(&t, OPTIONS_JSON), "1 to ");
    cr_expect_eq(number_after(message(&t, OPTIONS_CLI), "1 to "), n);
    cr_assert(n >= 1 && n <= DV_MAX_ROWS, "the text allows %g predicates, the request holds %u", n, DV_MAX_ROWS);
    t.npredicates = (unsigned)n;
    for (unsigned i = 0; i < t.npredicates; i++)
        snprintf(t.predicates[i], sizeof t.predicates[i], "threadIdx.x < %u", i + 1);
    snprintf(t.baseline, sizeof t.baseline, "threadIdx.x < 1");
    cr_expect(valid(&t), "%g predicates", n);
    if (n < DV_MAX_ROWS) {
        t.npredicates = (unsigned)n + 1;
        snprintf(t.predicates[(unsigned)n], sizeof t.predicates[0], "threadIdx.x < 999");
        cr_expect(!valid(&t), "%g + 1 predicates", n);
    }
    /* The baseline that does not fit states the same row count. */
    snprintf(t.baseline, sizeof t.baseline, "lane-parity");
    t.npredicates = DV_MAX_ROWS;
    for (unsigned i = 0; i < t.npredicates; i++)
        snprintf(t.predicates[i], sizeof t.predicates[i], "threadIdx.x < %u", i + 1);
    cr_expect_eq(number_after(message(&t, OPTIONS_JSON), "at most "), n);

    t = o;
    snprintf(t.scenario, sizeof t.scenario, "two words");
    double len = number_after(message(&t, OPTIONS_JSON), "at most ");
    cr_expect_eq(number_after(message(&t, OPTIONS_CLI), "at most "), len);
    cr_assert(len >= 1 && len < sizeof t.scenario, "the text allows %g characters", len);
    memset(t.scenario, 'a', (size_t)len);
    t.scenario[(size_t)len] = '\0';
    /* As long as a name may be: refused as unknown, not as too long. */
    const char *m = message(&t, OPTIONS_JSON);
    cr_expect(strstr(m, "unknown name") && !strstr(m, "too long"), "a scenario name of %g characters: %s", len, m);
    char e[ERR_LEN];
    cr_expect_eq(options_set_cli(&t, "--scenario", t.scenario, e), 0, "%s", e);
    char longer[DV_SCENARIO_LEN + 2];
    memset(longer, 'a', (size_t)len + 1);
    longer[(size_t)len + 1] = '\0';
    cr_expect_eq(options_set_cli(&t, "--scenario", longer, e), -1, "a name of %g + 1 characters", len);
    cr_expect_eq(number_after(e, "at most "), len, "%s", e);
}

Test(options, instructions_switch_cost_and_key) {
    struct dv_options p;
    char a[1024], b[1024];
    experiment_defaults(&p);
    cr_assert_eq(options_canonical(&p, a, sizeof a), 0);
    cr_expect(strstr(a, "instructions") == NULL, "%s", a);
    cr_assert_eq(options_set_cli(&p, "--instructions", "on", err), 0, "%s", err);
    cr_expect_eq(p.instructions, 1);
    cr_assert_eq(options_canonical(&p, b, sizeof b), 0);
    cr_expect(strstr(b, " instructions=on") != NULL, "a document with profiles is cached apart: %s", b);
    cr_expect_eq(options_set_cli(&p, "--instructions", "maybe", err), -1);
    cr_expect(strstr(err, "--instructions") != NULL && strstr(err, "on or off") != NULL, "%s", err);
    /* Cost: the lesson's rows are profiled on one block; block parity reads
     * blockIdx.x, so its whole grid (an upper bound: it has a period of 2). */
    int row = 7;
    experiment_defaults(&p);
    const double block = 256.0 * 4096;
    cr_expect_float_eq(options_instructions_cost(&p, &row), 4096 * block, 1e-3);
    cr_expect_eq(row, 3, "block-parity, predicates[3]");
    p.npredicates = 3;
    cr_expect_float_eq(options_instructions_cost(&p, &row), block, 1e-3);
    cr_expect_eq(row, -1, "one block everywhere, Part 2's first");
    p.part = DV_PART_1;
    cr_expect_float_eq(options_instructions_cost(&p, &row), block, 1e-3);
    cr_expect_eq(row, 0);
    /* Over the cap, in both spellings, naming the field. */
    experiment_defaults(&p);
    p.instructions = 1;
    p.blocks = 65536;
    expect_invalid(&p, "instructions", "--instructions", "its whole grid (65536 blocks) is profiled");
    p.instructions = 0;
    cr_expect_eq(options_validate(&p, OPTIONS_JSON, NULL, err), 0, "%s", err);
}

/* A data-sort request takes instructions: each shading row is profiled on
 * its whole grid, every thread C FMAs, so its cost is the grid's threads x
 * its cells' largest C (512 in every named grid), refused over the cap
 * naming the field, as a lesson row's; another scenario's rows are costed
 * when planned. */
Test(options, data_sort_takes_instructions_costed_on_its_whole_grid) {
    struct dv_options p;
    int row = 7;
    static const char *const grids[] = {"data-sort", "data-sort-uniform", "data-sort-zipf", "data-sort-tiles",
                                        "data-sort-presorted"};
    for (unsigned i = 0; i < sizeof grids / sizeof grids[0]; i++) {
        experiment_defaults(&p);
        snprintf(p.scenario, sizeof p.scenario, "%s", grids[i]);
        p.instructions = 1;
        cr_expect_eq(options_validate(&p, OPTIONS_JSON, &fault, err), 0, "%s: %s", grids[i], err);
        cr_expect_eq(options_validate(&p, OPTIONS_CLI, &fault, err), 0, "%s: %s", grids[i], err);
        cr_expect_float_eq(options_instructions_cost(&p, &row), 4096.0 * 256 * 512, 1e-3, "%s", grids[i]);
        cr_expect_eq(row, -1);
    }
    experiment_defaults(&p);
    cr_assert_eq(options_set_cli(&p, "--scenario", "data-sort-tiles", err), 0, "%s", err);
    cr_assert_eq(options_set_cli(&p, "--instructions", "on", err), 0, "%s", err);
    cr_assert_eq(options_set_cli(&p, "--blocks", "64", err), 0, "%s", err);
    cr_assert_eq(options_set_cli(&p, "--threads-per-block", "32", err), 0, "%s", err);
    cr_expect_eq(options_validate(&p, OPTIONS_CLI, &fault, err), 0, "%s", err);
    cr_expect_float_eq(options_instructions_cost(&p, &row), 64.0 * 32 * 512, 1e-3);
    /* 65536 x 256 threads x 512 = 8.6e9 under the cap; twice the blocks over. */
    experiment_defaults(&p);
    snprintf(p.scenario, sizeof p.scenario, "data-sort");
    p.instructions = 1;
    p.blocks = 65536;
    cr_expect_eq(options_validate(&p, OPTIONS_JSON, &fault, err), 0, "%s", err);
    p.blocks = 131072;
    cr_expect_gt(options_instructions_cost(&p, &row), OPTIONS_MAX_INSTRUCTIONS_COST);
    expect_invalid(&p, "instructions", "--instructions", "(131072 blocks of 256 threads) is profiled");
    struct dv_options q = p;
    cr_assert_eq(options_validate(&q, OPTIONS_JSON, &fault, err), -1);
    cr_expect(strstr(err, "C = 512") != NULL && strstr(err, "data-sort") != NULL, "%s", err);
    p.instructions = 0;
    cr_expect_eq(options_validate(&p, OPTIONS_JSON, NULL, err), 0, "%s", err);
    /* Another scenario's rows are costed as they are planned. */
    experiment_defaults(&p);
    snprintf(p.scenario, sizeof p.scenario, "k-paths");
    cr_expect_float_eq(options_instructions_cost(&p, &row), 0, 1e-9);
}

/* The kind of job the queue estimates runs by: the tables, the rows they
 * time and the untimed passes; not the predicates' text nor the grid. */
Test(options, job_kind_names_tables_rows_and_passes) {
    char k[64];
    cr_assert_eq(options_validate(&o, OPTIONS_JSON, &fault, err), 0, "%s", err);
    cr_assert_eq(options_job_kind(&o, k, sizeof k), 0);
    cr_expect_str_eq(k, "all/7rows+witness+counters");
    o.part = DV_PART_1;
    o.npredicates = 1;
    snprintf(o.predicates[0], sizeof o.predicates[0], "(threadIdx.x %% 7) < 3");
    o.no_witness = o.no_counters = 1;
    cr_assert_eq(options_validate(&o, OPTIONS_JSON, &fault, err), 0, "%s", err);
    cr_assert_eq(options_job_kind(&o, k, sizeof k), 0);
    cr_expect_str_eq(k, "part1/2rows", "the reader's predicate and the baseline");
    char other[64];
    snprintf(o.predicates[0], sizeof o.predicates[0], "(threadIdx.x %% 9) < 2");
    o.blocks = 128;
    cr_assert_eq(options_job_kind(&o, other, sizeof other), 0);
    cr_expect_str_eq(other, k, "another predicate and grid: the same kind");
    o.instructions = 1;
    o.no_counters = 0;
    cr_assert_eq(options_job_kind(&o, k, sizeof k), 0);
    cr_expect_str_eq(k, "part1/2rows+counters+instructions");
    experiment_defaults(&o);
    snprintf(o.scenario, sizeof o.scenario, "even-2way");
    cr_assert_eq(options_validate(&o, OPTIONS_JSON, &fault, err), 0, "%s", err);
    cr_assert_eq(options_job_kind(&o, k, sizeof k), 0);
    cr_expect(strncmp(k, "scenario/", 9) == 0, "%s", k);
    cr_expect_eq(options_job_kind(&o, k, 8), -1, "cut short");
    o.instructions = 1;
    o.part = DV_PART_ALL;
    o.scenario[0] = '\0';
    cr_assert_eq(options_job_kind(&o, k, 48), 0, "the longest kind fits 48 bytes: %s", k);
}

/* The widget's request for `expr` (validated), for the batch key's tests. */
static struct dv_options widget(const char *expr) {
    struct dv_options w;
    experiment_defaults(&w);
    w.part = DV_PART_1;
    w.npredicates = 2;
    snprintf(w.predicates[0], sizeof w.predicates[0], "%s", expr);
    snprintf(w.predicates[1], sizeof w.predicates[1], "%s", DV_DEFAULT_BASELINE);
    cr_assert_eq(options_validate(&w, OPTIONS_JSON, &fault, err), 0, "%s", err);
    return w;
}

/* The key line of a batch text: up to its first newline. */
static void key_line(const char *b, char *out, size_t len) {
    const char *nl = strchr(b, '\n');
    const size_t n = nl ? (size_t)(nl - b) : strlen(b);
    snprintf(out, len, "%.*s", (int)n, b);
}

/* Readers who may share a session share the key line, whatever their
 * predicates and their own rule; the rows follow, one a line. What the
 * rounds, the warm-up or the testimony pass need the same changes it. */
Test(options, batch_key_joins_a_class_and_keeps_apart_what_cannot_share) {
    static char a[OPTIONS_BATCH_KEY_LEN], b[OPTIONS_BATCH_KEY_LEN];
    char ka[512], kb[512];
    struct dv_options x = widget("(threadIdx.x % 3) < 1"), y = widget("(threadIdx.x % 5) < 2");
    y.max_noise = 0.001;
    y.budget_ms = 500;
    y.min_samples = 30;
    cr_assert_eq(options_batch_key(&x, a, sizeof a), 0);
    cr_assert_eq(options_batch_key(&y, b, sizeof b), 0);
    key_line(a, ka, sizeof ka);
    key_line(b, kb, sizeof kb);
    cr_expect_str_eq(ka, kb, "two readers of one kernel and grid, their own rules");
    cr_expect_str_eq(ka, "part1 kernel=mask blocks=4096 block=256x1 iterations=4096 witness=1 counters=1 instructions=0 "
                         "baseline=warp-parity");
    cr_expect_str_eq(strchr(a, '\n'), "\n(threadIdx.x % 3) < 1\nwarp-parity", "the rows, one a line: %s", a);
    /* Each of these keeps a request apart. */
    const char *why[] = {"blocks",       "block shape", "iterations", "witness",
                         "counters",     "instructions", "built-ins", "baseline"};
    for (unsigned k = 0; k < sizeof why / sizeof why[0]; k++) {
        y = widget("(threadIdx.x % 5) < 2");
        switch (k) {
        case 0: y.blocks = 2048; break;
        case 1: y.block_x = 128, y.block_y = 2; break;
        case 2: y.iterations = 1024; break;
        case 3: y.no_witness = 1; break;
        case 4: y.no_counters = 1; break;
        case 5: y.instructions = 1; break;
        case 6: y = widget("lane-parity"); break; /* every row the mode kernel */
        default: snprintf(y.baseline, sizeof y.baseline, "%s", y.predicates[0]); break;
        }
        cr_assert_eq(options_batch_key(&y, b, sizeof b), 0);
        key_line(b, kb, sizeof kb);
        cr_expect_str_neq(ka, kb, "%s: %s", why[k], kb);
    }
    /* Not batched: another table, or a predicate with a control character. */
    experiment_defaults(&y);
    cr_assert_eq(options_validate(&y, OPTIONS_JSON, &fault, err), 0, "%s", err);
    cr_expect_eq(options_batch_key(&y, b, sizeof b), 0);
    cr_expect_str_empty(b, "Part 1 and 2 together");
    y.part = DV_PART_2;
    cr_expect_eq(options_batch_key(&y, b, sizeof b), 0);
    cr_expect_str_empty(b, "Part 2");
    experiment_defaults(&y);
    snprintf(y.scenario, sizeof y.scenario, "even-2way");
    cr_expect_eq(options_batch_key(&y, b, sizeof b), 0);
    cr_expect_str_empty(b, "a scenario");
    y = widget("(threadIdx.x % 5) < 2");
    snprintf(y.predicates[0], sizeof y.predicates[0], "(threadIdx.x %% 5)\n< 2");
    cr_expect_eq(options_batch_key(&y, b, sizeof b), 0);
    cr_expect_str_empty(b, "a row that would read as two");
    cr_expect_eq(options_batch_key(&x, b, 32), -1, "cut short");
    cr_expect_str_empty(b);
}
