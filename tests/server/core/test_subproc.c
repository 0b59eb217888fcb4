/* test_subproc.c -- a child process's answer, its end, its deadline, and
 * what it must not inherit. Processes and deadlines: run it 20 times in a
 * row after a change. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernels/base/status.h"
#include "server/core/subproc.h"

static struct subproc_result run(const char *const *argv, const char *input, size_t len, double deadline) {
    struct subproc_result r;
    char err[ERR_LEN] = "";
    cr_assert_eq(subproc_run(argv, input, len, deadline, &r, err), 0, "%s", err);
    return r;
}

Test(subproc, input_goes_in_and_output_comes_back) {
    const char *argv[] = {"/bin/cat", NULL};
    struct subproc_result r = run(argv, "hello, child\n", 13, 5000);
    cr_expect_eq(r.how, SUBPROC_EXITED);
    cr_expect_eq(r.status, 0);
    cr_expect_str_eq(r.out, "hello, child\n");
    cr_expect_eq(r.len, 13);
    subproc_result_cleanup(&r);
}

Test(subproc, a_large_input_and_output_do_not_deadlock) {
    const size_t n = 4u << 20;
    char *big = malloc(n);
    cr_assert_not_null(big);
    for (size_t i = 0; i < n; i++) big[i] = (char)('a' + i % 26);
    const char *argv[] = {"/bin/cat", NULL};
    struct subproc_result r = run(argv, big, n, 20000);
    cr_expect_eq(r.how, SUBPROC_EXITED);
    cr_expect_eq(r.len, n);
    cr_expect_eq(memcmp(r.out, big, n), 0);
    subproc_result_cleanup(&r);
    free(big);
}

Test(subproc, exit_status_and_signal_are_told_apart) {
    char what[128];
    const char *code[] = {"/bin/sh", "-c", "echo partial; exit 3", NULL};
    struct subproc_result r = run(code, NULL, 0, 5000);
    cr_expect_eq(r.how, SUBPROC_EXITED);
    cr_expect_eq(r.status, 3);
    cr_expect_str_eq(r.out, "partial\n");
    subproc_describe(&r, 5000, what, sizeof what);
    cr_expect_str_eq(what, "exit status 3");
    subproc_result_cleanup(&r);
    const char *crash[] = {"/bin/sh", "-c", "kill -SEGV $$", NULL};
    r = run(crash, NULL, 0, 5000);
    cr_expect_eq(r.how, SUBPROC_SIGNALED);
    cr_expect_eq(r.status, SIGSEGV);
    subproc_describe(&r, 5000, what, sizeof what);
    cr_expect(strstr(what, "signal 11") != NULL, "%s", what);
    subproc_result_cleanup(&r);
}

Test(subproc, past_its_deadline_a_child_is_killed) {
    const char *argv[] = {"/bin/sleep", "30", NULL};
    struct subproc_result r = run(argv, NULL, 0, 200);
    cr_expect_eq(r.how, SUBPROC_KILLED);
    cr_expect(r.ms >= 150 && r.ms < 5000, "%.1f ms", r.ms);
    char what[128];
    subproc_describe(&r, 200, what, sizeof what);
    cr_expect_str_eq(what, "killed after 200 ms (its deadline)");
    subproc_result_cleanup(&r);
    /* One that never reads its input, and hangs: the deadline still holds. */
    const char *hang[] = {"/bin/sh", "-c", "exec sleep 30", NULL};
    char *input = calloc(1, 1u << 20);
    cr_assert_not_null(input);
    r = run(hang, input, 1u << 20, 200);
    cr_expect_eq(r.how, SUBPROC_KILLED);
    subproc_result_cleanup(&r);
    free(input);
}

Test(subproc, a_program_that_cannot_run_is_an_error) {
    struct subproc_result r;
    char err[ERR_LEN] = "";
    const char *argv[] = {"/nonexistent/program", NULL};
    cr_expect_eq(subproc_run(argv, NULL, 0, 1000, &r, err), -1);
    cr_expect(strstr(err, "/nonexistent/program") && strstr(err, "No such file"), "%s", err);
    cr_expect_null(r.out);
    const char *none[] = {NULL};
    cr_expect_eq(subproc_run(none, NULL, 0, 1000, &r, err), -1);
}

Test(subproc, the_callers_descriptors_do_not_leak) {
    int fd = open("/dev/null", O_RDONLY); /* no close-on-exec, as a worker's job pipes */
    cr_assert_geq(fd, 0);
    char script[128];
    snprintf(script, sizeof script, "test -e /proc/$$/fd/%d && echo leaked || echo closed", fd);
    const char *argv[] = {"/bin/sh", "-c", script, NULL};
    struct subproc_result r = run(argv, NULL, 0, 5000);
    cr_expect_str_eq(r.out, "closed\n");
    subproc_result_cleanup(&r);
    close(fd);
}
