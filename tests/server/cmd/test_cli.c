/* test_cli.c -- `divergence analyze` as a function, and the exit status of
 * `measure` for every kind of result: exit statuses and what they print,
 * with stdout captured by Criterion's redirection. */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kernels/base/status.h"
#include "server/cmd/cli.h"

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

/* A report of `o` with every row measured, correct and quiet. */
static struct dv_report *measured(struct dv_options *o) {
    char err[ERR_LEN];
    struct dv_report *r = experiment_report_create();
    cr_assert_not_null(r);
    cr_assert_eq(experiment_plan(o, r, NULL, err), 0, "%s", err);
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
    cr_assert_eq(experiment_gate(r, o->max_noise, err), 0, "a good report passes the gate: %s", err);
    cr_assert_eq(cli_exit_status(0, r), CLI_EXIT_OK);
    break_a_row(r, scenario);
    int rc = experiment_gate(r, o->max_noise, err);
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
    int rc = experiment_gate(r, o.max_noise, err);
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
    /* A noisy table is exit 1 too, with a report (rc 0 from the measurement). */
    r->tables[0].noise_ok = 0;
    cr_expect_eq(cli_exit_status(0, r), CLI_EXIT_FAILED);
    experiment_report_free(r);
    fflush(stdout);
    cr_expect_stdout_eq_str("", "no report is printed for a failed measurement");
}
