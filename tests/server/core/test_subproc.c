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
#include "kernels/base/timeutil.h"
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

/* ---- the deadline bounds the child's whole life, and its group ends with it -- */

/* The pid a script printed as "grandchild N", or -1. */
static pid_t grandchild_of(const char *out) {
    const char *g = strstr(out, "grandchild ");
    return g ? (pid_t)strtol(g + 11, NULL, 10) : -1;
}

/* Whether `pid` has ended (gone, or a zombie its new parent has yet to
 * reap), waiting up to 2 s for the SIGKILL to land. */
static int gone(pid_t pid) {
    char path[64], stat[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    for (int i = 0; i < 200; i++) {
        FILE *f = fopen(path, "r");
        if (!f) return 1;
        size_t n = fread(stat, 1, sizeof stat - 1, f);
        fclose(f);
        stat[n] = '\0';
        const char *paren = strrchr(stat, ')');
        if (!paren || paren[1] == '\0' || paren[2] == 'Z') return 1;
        timeutil_sleep_ms(10);
    }
    return 0;
}

Test(subproc, a_child_that_closes_stdout_and_hangs_is_killed_at_its_deadline, .timeout = 20) {
    const char *argv[] = {"/bin/sh", "-c", "echo answer; exec 1>&-; exec sleep 8", NULL};
    const double t0 = timeutil_now_ms();
    struct subproc_result r = run(argv, NULL, 0, 1000);
    const double elapsed = timeutil_now_ms() - t0;
    cr_log_info("closed stdout and hung: returned %.1f ms after its 1000 ms deadline", elapsed - 1000);
    cr_expect_eq(r.how, SUBPROC_KILLED);
    cr_expect(elapsed >= 1000 && elapsed < 1100, "returned after %.1f ms, deadline 1000 ms", elapsed);
    subproc_result_cleanup(&r);
}

Test(subproc, a_child_that_exits_is_judged_by_its_exit_not_by_a_grandchilds_pipe, .timeout = 20) {
    /* The grandchild keeps the child's stdout open and sleeps on. */
    const char *argv[] = {"/bin/sh", "-c", "sleep 8 & echo \"grandchild $!\"; echo answer; exit 0", NULL};
    const double t0 = timeutil_now_ms();
    struct subproc_result r = run(argv, NULL, 0, 5000);
    const double elapsed = timeutil_now_ms() - t0;
    cr_expect_eq(r.how, SUBPROC_EXITED);
    cr_expect_eq(r.status, 0);
    cr_expect(strstr(r.out, "answer\n") != NULL, "%s", r.out);
    cr_expect(elapsed < 2500, "returned after %.1f ms: it waited for the grandchild", elapsed);
    const pid_t g = grandchild_of(r.out);
    cr_assert_gt(g, 0, "%s", r.out);
    cr_expect(gone(g), "the grandchild %d is still running", (int)g);
    subproc_result_cleanup(&r);
}

Test(subproc, what_a_child_started_ends_with_it, .timeout = 20) {
    /* At its deadline, with the grandchild holding stdout... */
    const char *hung[] = {"/bin/sh", "-c", "sleep 8 & echo \"grandchild $!\"; sleep 8", NULL};
    struct subproc_result r = run(hung, NULL, 0, 300);
    cr_expect_eq(r.how, SUBPROC_KILLED);
    pid_t g = grandchild_of(r.out);
    cr_assert_gt(g, 0, "%s", r.out);
    cr_expect(gone(g), "the grandchild %d outlived its group's deadline", (int)g);
    subproc_result_cleanup(&r);
    /* ... and at a clean exit, with the grandchild's stdout elsewhere. */
    const char *clean[] = {"/bin/sh", "-c", "sleep 8 >/dev/null & echo \"grandchild $!\"", NULL};
    r = run(clean, NULL, 0, 5000);
    cr_expect_eq(r.how, SUBPROC_EXITED);
    cr_expect_eq(r.status, 0);
    g = grandchild_of(r.out);
    cr_assert_gt(g, 0, "%s", r.out);
    cr_expect(gone(g), "the grandchild %d outlived the run", (int)g);
    subproc_result_cleanup(&r);
}

Test(subproc, a_child_that_floods_stdout_is_killed_at_the_limit, .timeout = 60) {
    const char *argv[] = {"/bin/sh", "-c", "echo \"grandchild $$\"; exec cat /dev/zero", NULL};
    struct subproc_result r = run(argv, NULL, 0, 50000);
    cr_expect_eq(r.how, SUBPROC_KILLED);
    cr_expect_gt(r.len, SUBPROC_MAX_OUTPUT);
    cr_expect_lt(r.len, SUBPROC_MAX_OUTPUT + (1u << 20), "%zu bytes kept", r.len);
    char what[128];
    subproc_describe(&r, 50000, what, sizeof what);
    cr_expect(strstr(what, "more than") != NULL, "%s", what);
    const pid_t g = grandchild_of(r.out); /* the child itself, by then cat */
    cr_assert_gt(g, 0);
    cr_expect(gone(g));
    subproc_result_cleanup(&r);
}

Test(subproc, a_stopped_child_is_killed_at_its_deadline, .timeout = 20) {
    /* Stopped with its stdout open, and stopped after closing it. */
    const char *open_out[] = {"/bin/sh", "-c", "echo answer; kill -STOP $$; echo never", NULL};
    const char *closed_out[] = {"/bin/sh", "-c", "echo answer; exec 1>&-; kill -STOP $$", NULL};
    const char *const *cases[] = {open_out, closed_out};
    for (int i = 0; i < 2; i++) {
        const double t0 = timeutil_now_ms();
        struct subproc_result r = run(cases[i], NULL, 0, 500);
        const double elapsed = timeutil_now_ms() - t0;
        cr_expect_eq(r.how, SUBPROC_KILLED, "case %d", i);
        cr_expect(elapsed >= 500 && elapsed < 600, "case %d: returned after %.1f ms, deadline 500 ms", i, elapsed);
        subproc_result_cleanup(&r);
    }
}
