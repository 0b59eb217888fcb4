/* test_cli.c -- `divergence analyze` as a function, and the exit status of
 * `measure` for every kind of result: exit statuses and what they print,
 * with stdout captured by Criterion's redirection. */
#define _POSIX_C_SOURCE 200809L /* mkstemp, popen */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kernels/base/status.h"
#include "server/cmd/cli.h"
#include "kernels/model/model/plan.h"

static int after_help;

/* Runs if anything calls exit() before the test body is over: Criterion
 * would take exit(0) for a pass, so make it a distinct failure. */
static void exited_early(void) {
    if (!after_help) _exit(99);
}

/* --help prints the options and returns; the caller (main) decides the exit. */
Test(cli, help_returns_instead_of_exiting, .init = cr_redirect_stdout) {
    char *argv[] = {"analyze", "--help", NULL};
    atexit(exited_early);
    int rc = cli_analyze(2, argv);
    after_help = 1;
    cr_assert_eq(rc, CLI_EXIT_OK);
    cr_assert_eq(after_help, 1);
    fflush(stdout);
    cr_assert_stdout_neq_str("");
}

Test(cli, unknown_option_is_usage, .init = cr_redirect_stderr) {
    char *argv[] = {"analyze", "--no-such-option", "1", NULL};
    cr_assert_eq(cli_analyze(3, argv), CLI_EXIT_USAGE);
}

/* Runs `cmd` through the shell; its output (stdout and stderr) into `out`. */
static int run_binary(const char *args, char *out, size_t len) {
    char cmd[512];
    snprintf(cmd, sizeof cmd, "'%s' %s 2>&1", DV_TEST_BINARY, args);
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p);
    size_t n = fread(out, 1, len - 1, p);
    out[n] = '\0';
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int count_lines(const char *s) {
    int n = 0;
    for (; *s; s++) n += *s == '\n';
    return n;
}

Test(cli, every_command_has_help_with_usage_and_exit_statuses) {
    static char out[16384];
    const char *cmds[] = {"analyze --help", "measure --help", "serve --help", "refresh --help", "--help"};
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        cr_assert_eq(run_binary(cmds[i], out, sizeof out), 0, "%s: %s", cmds[i], out);
        cr_assert_not_null(strstr(out, "usage: divergence"), "%s: %s", cmds[i], out);
    }
    run_binary("analyze --help", out, sizeof out);
    cr_assert_not_null(strstr(out, "exit status:"), "%s", out);
    cr_assert_not_null(strstr(out, "--predicates"), "%s", out);
    run_binary("serve --help", out, sizeof out);
    cr_assert_not_null(strstr(out, "exit status:"), "%s", out);
}

Test(cli, serve_errors_are_short) {
    static char out[16384];
    cr_assert_eq(run_binary("serve --port nope", out, sizeof out), 2);
    cr_assert_not_null(strstr(out, "--port nope"), "%s", out);
    cr_assert_not_null(strstr(out, "divergence serve --help"), "%s", out);
    cr_assert(count_lines(out) <= 2, "a bad option costs one line and a pointer, not the usage:\n%s", out);
    cr_assert_eq(run_binary("serve --bogus", out, sizeof out), 2);
    cr_assert(count_lines(out) <= 2, "%s", out);
    cr_assert_eq(run_binary("nope", out, sizeof out), 2);
    cr_assert(count_lines(out) <= 1, "%s", out);
}

/* --trusted-proxy takes networks and addresses; what is neither is refused
 * before anything starts, with the value and the reason. */
Test(cli, serve_refuses_a_trusted_proxy_that_is_no_network) {
    static char out[16384];
    static const struct {
        const char *args, *why;
    } bad[] = {
        {"serve --trusted-proxy 10.244.0.0/33",
         "--trusted-proxy 10.244.0.0/33: the prefix length must be a number from 0 to 32"},
        {"serve --trusted-proxy=10.244.1.0/16", "did you mean 10.244.0.0/16?"},
        {"serve --trusted-proxy proxy.local", "--trusted-proxy proxy.local: not an IPv4 or IPv6 address"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cr_expect_eq(run_binary(bad[i].args, out, sizeof out), 2, "%s: %s", bad[i].args, out);
        cr_expect_not_null(strstr(out, bad[i].why), "%s: %s", bad[i].args, out);
    }
    run_binary("serve --help", out, sizeof out);
    cr_expect_not_null(strstr(out, "--trusted-proxy NET"), "%s", out);
    cr_expect_not_null(strstr(out, "--held-per-ip N"), "%s", out);
    cr_expect_not_null(strstr(out, "--held-limit N"), "%s", out);
}

/* ---- exit statuses of a measurement ----------------------------------------
 * Reports planned by the real planner, with every row "measured" by hand
 * (no GPU): the gate (experiment_gate) and the exit status must treat a
 * wrong output the same in a Part 1 table and in a scenario table: a
 * report and exit 1, never a CUDA error (exit 4) without one. */

/* A report of `o` with every row measured, correct and every table's
 * intervals within their target (the stopping rule's verdict). */
static struct dv_report *measured(struct dv_options *o) {
    char err[ERR_LEN];
    struct dv_report *r = experiment_report_create();
    cr_assert_not_null(r);
    cr_assert_eq(plan_report(o, r, NULL, err), 0, "%s", err);
    r->measured = 1;
    for (unsigned i = 0; i < r->ntables; i++) {
        struct dv_table *t = &r->tables[i];
        for (unsigned j = 0; j < t->nrows; j++) {
            struct dv_row *w = &t->rows[j];
            w->measured = 1;
            w->time_ms.median = w->time_ms.min = w->time_ms.max = w->time_ms.mean = 0.25;
            w->time_ms.noise = o->max_noise / 10;
            w->time_ms.samples = 10;
            w->ratio = 1.0;
            w->check.ok = 1;
            w->check.checked = 1024;
            w->check.first_mismatch = -1;
        }
        t->intervals_ok = 1;
        snprintf(t->stop_reason, sizeof t->stop_reason, "target");
    }
    return r;
}

/* Makes row 1 of the first table of the wanted kind wrong in 3 outputs. */
static void break_a_row(struct dv_report *r, int scenario) {
    for (unsigned i = 0; i < r->ntables; i++) {
        struct dv_table *t = &r->tables[i];
        if (experiment_table_is_scenario(t) != scenario || t->nrows < 2) continue;
        t->rows[1].check.ok = 0;
        t->rows[1].check.mismatches = 3;
        t->rows[1].check.first_mismatch = 77;
        t->rows[1].check.expected = 1.5f;
        t->rows[1].check.got = -1.0f;
        return;
    }
    cr_assert_fail("no %s table with two rows", scenario ? "scenario" : "Part 1");
}

static void redirect_both(void) {
    cr_redirect_stdout();
    cr_redirect_stderr();
}

/* The gate and the exit status of a report whose row 1 of a table of the
 * kind `scenario` is wrong: exit 1 and the report printed. */
static void expect_gate_exit_1(struct dv_options *o, int scenario) {
    struct dv_report *r = measured(o);
    char err[ERR_LEN] = "";
    cr_assert_eq(experiment_gate(r, err), 0, "a good report passes the gate: %s", err);
    cr_assert_eq(cli_exit_status(0, r), CLI_EXIT_OK);
    break_a_row(r, scenario);
    int rc = experiment_gate(r, err);
    cr_assert_eq(rc, DV_EGATE, "a wrong output is the gate's failure, not a CUDA error (%d)", rc);
    cr_expect(strstr(err, "first at thread 77"), "%s", err);
    cr_assert_eq(cli_exit_status(rc, r), CLI_EXIT_FAILED);
    cr_assert_eq(cli_finish_measure(rc, err, r, 1), CLI_EXIT_FAILED);
    experiment_report_free(r);
    fflush(stdout);
    fflush(stderr);
    cr_expect_stdout_neq_str("", "the report is printed");
    cr_expect_stderr_neq_str("", "the gate's reason is on stderr");
}

Test(cli, a_failed_check_in_a_part1_table_exits_1_with_the_report, .init = redirect_both) {
    struct dv_options o;
    experiment_defaults(&o);
    o.part = DV_PART_1;
    expect_gate_exit_1(&o, 0);
}

Test(cli, a_failed_check_in_a_scenario_table_exits_1_with_the_report, .init = redirect_both) {
    struct dv_options o;
    experiment_defaults(&o);
    snprintf(o.scenario, sizeof o.scenario, "even-2way");
    expect_gate_exit_1(&o, 1);
}

Test(cli, the_gate_message_and_the_document_name_the_failed_row, .init = cr_redirect_stderr) {
    struct dv_options o;
    experiment_defaults(&o);
    snprintf(o.scenario, sizeof o.scenario, "even-2way");
    struct dv_report *r = measured(&o);
    break_a_row(r, 1);
    char err[ERR_LEN] = "";
    int rc = experiment_gate(r, err);
    /* stdout goes to a file, so the document can be read back. */
    fflush(stdout);
    FILE *out = tmpfile();
    int saved = dup(1);
    dup2(fileno(out), 1);
    int exit_rc = cli_finish_measure(rc, err, r, 1);
    fflush(stdout);
    dup2(saved, 1);
    close(saved);
    static char doc[1 << 20];
    rewind(out);
    size_t n = fread(doc, 1, sizeof doc - 1, out);
    doc[n] = '\0';
    fclose(out);
    cr_assert_eq(exit_rc, CLI_EXIT_FAILED);
    cr_expect(strstr(err, "scenario:even-2way row sorted:"), "%s", err);
    cr_expect(strstr(doc, "\"divergence.v1\""), "the divergence.v1 document: %.300s", doc);
    cr_expect(strstr(doc, "\"mismatches\": 3"), "the failed check is in it: %.300s", doc);
    experiment_report_free(r);
}

Test(cli, other_failures_exit_3_or_4_without_a_report, .init = redirect_both) {
    struct dv_options o;
    experiment_defaults(&o);
    struct dv_report *r = measured(&o);
    cr_expect_eq(cli_exit_status(DV_ENOGPU, r), CLI_EXIT_NOGPU);
    cr_expect_eq(cli_exit_status(DV_ESTICKY, r), CLI_EXIT_CUDA);
    cr_expect_eq(cli_exit_status(DV_ERR, r), CLI_EXIT_CUDA);
    cr_expect_eq(cli_finish_measure(DV_ENOGPU, "no device", r, 0), CLI_EXIT_NOGPU);
    cr_expect_eq(cli_finish_measure(DV_ESTICKY, "illegal address", r, 0), CLI_EXIT_CUDA);
    /* A table whose intervals stayed over their target is exit 1 too, with a
     * report (rc 0 from the measurement). */
    r->tables[0].intervals_ok = 0;
    cr_expect_eq(cli_exit_status(0, r), CLI_EXIT_FAILED);
    experiment_report_free(r);
    fflush(stdout);
    cr_expect_stdout_eq_str("", "no report is printed for a failed measurement");
}

/* ---- what the command line refuses, names and prints ------------------------ */

/* An unknown option is said as such, with or without something after it. */
Test(cli, an_unknown_option_is_named_whatever_follows) {
    static char out[4096];
    const char *args[] = {"analyze --bogus", "analyze --bogus 1", "analyze --bogus=1", "measure --bogus"};
    for (size_t i = 0; i < sizeof args / sizeof args[0]; i++) {
        cr_expect_eq(run_binary(args[i], out, sizeof out), 2, "%s", args[i]);
        cr_expect(strstr(out, "--bogus: unknown option"), "%s: %s", args[i], out);
        cr_expect_null(strstr(out, "needs a value"), "%s: %s", args[i], out);
    }
}

/* A predicate that does not parse, or parses and fails for some thread, is
 * a bad predicate (exit 2) with the caret under its column, from analyze and
 * from measure alike, and measure says so before it asks for a GPU. */
Test(cli, a_bad_predicate_is_said_with_its_caret) {
    static char out[4096];
    const struct {
        const char *args, *says, *caret;
    } cases[] = {
        {"analyze --part 1 --predicates 'threadIdx.x $ 2'", "column 13: unexpected character '$'",
         "\nthreadIdx.x $ 2\n            ^\n"},
        {"analyze --part 1 --predicates 'lane-parity, threadIdx.x / (lane - lane)'",
         "thread (0, 0) of block 0: column 13: division by zero", "\nthreadIdx.x / (lane - lane)\n            ^\n"},
        {"analyze --part 1 --blocks 8 --predicates 'lane-parity, 1 % (blockIdx.x - 3)'",
         "thread (0, 0) of block 3: column 3: modulo by zero", "\n1 % (blockIdx.x - 3)\n  ^\n"},
        {"measure --part 1 --predicates 'threadIdx.x $ 2'", "column 13: unexpected character '$'",
         "\nthreadIdx.x $ 2\n            ^\n"},
        {"measure --part 1 --predicates 'lane-parity, threadIdx.x / (lane - lane)'",
         "thread (0, 0) of block 0: column 13: division by zero", "\nthreadIdx.x / (lane - lane)\n            ^\n"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cr_expect_eq(run_binary(cases[i].args, out, sizeof out), 2, "%s: %s", cases[i].args, out);
        cr_expect(strstr(out, cases[i].says), "%s: %s", cases[i].args, out);
        cr_expect(strstr(out, cases[i].caret), "%s: the caret under the column:\n%s", cases[i].args, out);
        cr_expect_eq(count_lines(out), 3, "%s: the message and the two caret lines:\n%s", cases[i].args, out);
    }
}

/* An option that does not apply to a command (a measurement's for analyze,
 * anything beside --suite) is an error naming it, not dropped. */
Test(cli, options_that_do_not_apply_are_errors_naming_them) {
    static char out[4096];
    const struct {
        const char *args, *says;
    } cases[] = {
        {"analyze --budget-ms 500", "--budget-ms: does not apply to analyze"},
        {"analyze --device 1", "--device: does not apply to analyze"},
        {"analyze --suite day22-part2 --part 1", "--part: does not apply with --suite"},
        {"analyze --suite nope", "--suite: unknown suite 'nope'"},
        {"analyze --format html", "--format: 'html' is not a format"},
        {"analyze --scenario C42", "known: all, even-2way (C1)"},
        {"analyze --evidence-dir /tmp", "--evidence-dir: does not apply to analyze"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cr_expect_eq(run_binary(cases[i].args, out, sizeof out), 2, "%s: %s", cases[i].args, out);
        cr_expect(strstr(out, cases[i].says), "%s: %s", cases[i].args, out);
    }
    /* What does apply still passes. */
    cr_expect_eq(run_binary("analyze --part 2", out, sizeof out), 0, "%s", out);
    cr_expect_eq(run_binary("analyze --scenario C1 --blocks 64", out, sizeof out), 0, "%s", out);
    /* (Its eleven tables are more than `out` holds: not read.) */
    cr_expect_eq(run_binary("analyze --suite scenarios > /dev/null", out, sizeof out), 0, "%s", out);
}

/* Runs the binary with `args`; its stdout into `out`, its stderr into `errs`. */
static int run_split(const char *args, char *out, size_t len, char *errs, size_t errlen) {
    char path[] = "/tmp/dv-test-cli-stderr-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    close(fd);
    char cmd[640];
    snprintf(cmd, sizeof cmd, "'%s' %s 2>'%s'", DV_TEST_BINARY, args, path);
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p);
    size_t n = fread(out, 1, len - 1, p);
    out[n] = '\0';
    int st = pclose(p);
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f);
    n = fread(errs, 1, errlen - 1, f);
    errs[n] = '\0';
    fclose(f);
    unlink(path);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* A table option the request's tables do not read (--predicates or
 * --baseline with --part 2, whose rows are fixed; --part beside a scenario)
 * is answered as POST /analyze answers it (api/openapi.yaml): the run goes
 * on, exit 0, and the warning is said on stderr, naming the option, and
 * carried in the document's warnings as the API's are. */
Test(cli, table_options_that_do_not_apply_are_warned_and_the_run_goes_on) {
    static char out[65536], errs[4096];
    const struct {
        const char *args, *says, *doc;
    } cases[] = {
        {"analyze --part 2 --predicates 'threadIdx.x % 48 < 24'",
         "divergence analyze: warning: --predicates: not used: Part 2's rows are fixed",
         "predicates: not used: Part 2's rows are fixed"},
        {"analyze --part 2 --baseline lane-parity", "divergence analyze: warning: --baseline: not used",
         "baseline: not used"},
        {"analyze --scenario C1 --part 1", "divergence analyze: warning: --part: not used: a scenario request",
         "part: not used"},
        {"analyze --scenario C1 --predicates lane-parity", "divergence analyze: warning: --predicates: not used",
         "predicates: not used"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char args[256];
        snprintf(args, sizeof args, "%s --json", cases[i].args);
        cr_expect_eq(run_split(args, out, sizeof out, errs, sizeof errs), 0, "%s: %s", args, errs);
        cr_expect(strstr(errs, cases[i].says), "%s: stderr lacks \"%s\": %s", args, cases[i].says, errs);
        cr_expect_eq(count_lines(errs), 1, "%s: one warning, one line: %s", args, errs);
        cr_expect(strstr(out, "\"warnings\"") && strstr(out, cases[i].doc), "%s: the document lacks \"%s\"",
                  args, cases[i].doc);
    }
    /* A request where every option applies warns of nothing. */
    cr_expect_eq(run_split("analyze --part 2", out, sizeof out, errs, sizeof errs), 0, "%s", errs);
    cr_expect_str_eq(errs, "");
    /* What does not apply is still checked: a bad expression is refused. */
    cr_expect_eq(run_split("analyze --part 2 --predicates 'threadIdx.x $ 2'", out, sizeof out, errs, sizeof errs), 2);
    cr_expect(strstr(errs, "--predicates"), "%s", errs);
}

/* The scenario names, their worked cases and the suites are in --help, and
 * a worked-case id is accepted as a name. */
Test(cli, help_lists_the_scenario_names_and_worked_cases_are_names) {
    static char out[65536];
    cr_assert_eq(run_binary("analyze --help", out, sizeof out), 0);
    const char *names[] = {"even-2way (C1)",
                           "short-branch (C7)",
                           "warp-realign (C10)",
                           "day22-exercise",
                           "--format text|json|md|csv|svg",
                           "warp-parity = (threadIdx.x / 32 & 1) == 0"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        cr_expect(strstr(out, names[i]), "no %s:\n%s", names[i], out);
    cr_assert_eq(run_binary("analyze --scenario C1", out, sizeof out), 0, "%s", out);
    cr_expect(strstr(out, "worked case C1"), "%s", out);
    cr_assert_eq(run_binary("analyze --scenario c7", out, sizeof out), 0, "%s", out);
    cr_expect(strstr(out, "stays a branch") && strstr(out, "compiler predicates"), "C7's two tables:\n%s", out);
}

/* --format: the same analysis in each form (their contents are checked by
 * tests/api/forms_check.py); --json is --format json. */
Test(cli, format_prints_each_form) {
    static char out[65536];
    cr_assert_eq(run_binary("analyze --part 2 --format md", out, sizeof out), 0, "%s", out);
    cr_expect(strstr(out, "| kernel |") && strstr(out, "**split**"), "%s", out);
    cr_assert_eq(run_binary("analyze --part 2 --format csv", out, sizeof out), 0, "%s", out);
    cr_expect(strncmp(out, "table,table_title,kind,", 23) == 0 && strstr(out, "part2,"), "%s", out);
    cr_assert_eq(run_binary("analyze --part 2 --format svg", out, sizeof out), 0, "%s", out);
    cr_expect(strstr(out, "<svg xmlns=\"http://www.w3.org/2000/svg\"") && strstr(out, "</svg>"), "%s", out);
    cr_assert_eq(run_binary("analyze --part 2 --format json", out, sizeof out), 0, "%s", out);
    static char json2[65536];
    cr_assert_eq(run_binary("analyze --part 2 --json", json2, sizeof json2), 0);
    cr_expect_str_eq(out, json2);
    cr_expect(strstr(out, "\"readings\""), "%s", out);
    cr_assert_eq(run_binary("analyze --part 2", out, sizeof out), 0, "%s", out);
    cr_expect(strstr(out, "read both ways: Read the two per-iteration rows against each other"), "%s", out);
}

/* `divergence suites` prints what GET /suites serves. */
Test(cli, suites_prints_the_suites_and_scenario_names) {
    static char out[65536];
    cr_assert_eq(run_binary("suites", out, sizeof out), 0, "%s", out);
    cr_expect(strstr(out, "\"day22-part1\"") && strstr(out, "\"scenarios\"") && strstr(out, "\"cell\": \"C1\""), "%s",
              out);
}

/* The per-sample spread is a reported figure, not a verdict: a table whose
 * rows are noisier than the target (2,000 samples of a small grid at 0.72%)
 * but whose intervals met it measured well, and exits 0 without a warning;
 * one whose interval stayed over the target warns, naming the row, its
 * half-width and why sampling stopped, and exits 1. */
Test(cli, spread_over_the_target_with_intervals_within_it_exits_0) {
    struct dv_options o;
    experiment_defaults(&o);
    o.part = DV_PART_1;
    struct dv_report *r = measured(&o);
    struct dv_table *t = &r->tables[0];
    t->halfwidth_target = o.max_noise;
    for (unsigned j = 0; j < t->nrows; j++) {
        t->rows[j].time_ms.noise = 0.0072;
        t->rows[j].time_ms.samples = 2000;
    }
    char err[ERR_LEN] = "";
    cr_assert_eq(experiment_gate(r, err), 0, "%s", err);
    cr_expect_eq(r->nwarnings, 0u, "%s", r->nwarnings ? r->warnings[0] : "");
    cr_expect(t->noise_ok, "noise_ok is the old name of intervals_ok");
    cr_expect_eq(cli_exit_status(0, r), CLI_EXIT_OK);

    t->intervals_ok = 0;
    t->worst_row = 1;
    t->worst_halfwidth = 0.0062;
    snprintf(t->stop_reason, sizeof t->stop_reason, "budget");
    cr_assert_eq(experiment_gate(r, err), 0, "%s", err);
    cr_assert_eq(r->nwarnings, 1u);
    cr_expect(strstr(r->warnings[0], t->rows[1].name) && strstr(r->warnings[0], "0.62%") &&
                  strstr(r->warnings[0], "0.50% target") && strstr(r->warnings[0], "budget"),
              "%s", r->warnings[0]);
    cr_expect(!t->noise_ok);
    cr_expect_eq(cli_exit_status(0, r), CLI_EXIT_FAILED);
    experiment_report_free(r);
}

/* --file-as (the demo capture's): a real calendar date, not after today,
 * only where a night is filed; --replace-night only with it. Refused before
 * any GPU is asked. */
Test(cli, file_as_takes_only_a_past_calendar_date_where_a_night_is_filed) {
    static char out[4096];
    const struct {
        const char *args, *says;
    } cases[] = {
        {"measure --suite all --evidence-dir /nonexistent --file-as 2026-02-30",
         "--file-as: expected a calendar date YYYY-MM-DD, got '2026-02-30'"},
        {"measure --suite all --evidence-dir /nonexistent --file-as 26-1-1", "expected a calendar date"},
        {"measure --suite all --evidence-dir /nonexistent --file-as 2999-01-01", "2999-01-01 is after today"},
        {"measure --suite all --file-as 2026-01-01", "--file-as: needs --evidence-dir"},
        {"measure --suite all --evidence-dir /nonexistent --replace-night", "--replace-night: needs --file-as"},
        {"analyze --file-as 2026-01-01", "--file-as: needs --evidence-dir"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cr_expect_eq(run_binary(cases[i].args, out, sizeof out), 2, "%s: %s", cases[i].args, out);
        cr_expect(strstr(out, cases[i].says), "%s: %s", cases[i].args, out);
    }
}
