/* test_cli.c -- `divergence analyze` as a function: exit statuses and what
 * it prints, with stdout captured by Criterion's redirection. */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <string.h>
#include <sys/wait.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cmd/cli.h"

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
