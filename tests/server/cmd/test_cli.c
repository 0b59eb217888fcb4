/* test_cli.c -- `divergence analyze` as a function: exit statuses and what
 * it prints, with stdout captured by Criterion's redirection. */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
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
