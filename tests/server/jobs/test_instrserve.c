/* test_instrserve.c -- the instruction profiles from one long-lived
 * profiling server (jobs/instrserve.h) through the profiler (jobs/
 * instrproc.h): one child serves request after request, and every way it
 * can fail (a hang, a death mid-answer, garbage, a start that fails) costs
 * that request's rows their reasons, the next request a fresh child, and
 * never leaves a child behind, the worker's death included.
 *
 * The child is tests/support/fake_instr_server.c (what it does is chosen
 * by $FAKE_INSTRUCTIONS when it starts), so these run without a GPU; that
 * the real server's profiles are the one-shot command's is
 * test_gpu_instructions.c's. Processes, signals and deadlines: run 20 times
 * in a row after a change.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "api/options.h"
#include "kernels/base/timeutil.h"
#include "kernels/model/listing/listing.h"
#include "kernels/model/model/plan.h"
#include "server/jobs/instrproc.h"
#include "tests/support/instr_reports.h"
#include "tests/support/readfile.h"

#define SERVER DV_TEST_BUILD_DIR "/tests/fake_instr_server"

static char log_path[256];

static void setup(void) { instr_test_fake_env("server", log_path, sizeof log_path); }

static void teardown(void) { unlink(log_path); }

TestSuite(instrserve, .init = setup, .fini = teardown);

/* Lines of the fake's log that begin with `word` ("start", "request",
 * "rows" for the one-shot stand-in's processes). */
static unsigned logged(const char *word) {
    char *s = readfile(log_path, NULL);
    unsigned n = 0;
    const size_t k = strlen(word);
    for (const char *p = s; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
        n += strncmp(p, word, k) == 0 && p[k] == ' ';
    free(s);
    return n;
}

static struct dv_options lesson(const char *first) {
    struct dv_options o;
    experiment_defaults(&o);
    o.instructions = 1;
    if (first) snprintf(o.predicates[0], sizeof o.predicates[0], "%s", first);
    return o;
}

static struct instrproc *profiler(double deadline_ms) {
    struct instrproc_config c = {.exe = SERVER, .deadline_ms = deadline_ms};
    char err[ERR_LEN];
    struct instrproc *ip = instrproc_create(&c, err);
    cr_assert_not_null(ip, "%s", err);
    return ip;
}

/* Whether process `pid` is gone (or a zombie no one reaps: dead all the same). */
static int gone(pid_t pid) {
    if (kill(pid, 0) != 0) return errno == ESRCH;
    char path[64], *s;
    snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
    if (!(s = readfile(path, NULL))) return 1;
    const char *p = strrchr(s, ')');
    const int zombie = p && (p[2] == 'Z' || p[2] == 'X');
    free(s);
    return zombie;
}

/* This process's open descriptors. */
static unsigned open_fds(void) {
    unsigned n = 0;
    DIR *d = opendir("/proc/self/fd");
    cr_assert_not_null(d);
    while (readdir(d)) n++;
    closedir(d);
    return n;
}

/* The first measured row of `r` whose profile is missing, or NULL. */
static const struct dv_row *first_missing(const struct dv_report *r) {
    for (unsigned i = 0; i < r->ntables; i++)
        for (unsigned j = 0; j < r->tables[i].nrows; j++)
            if (!r->tables[i].rows[j].instructions) return &r->tables[i].rows[j];
    return NULL;
}

/* A report of `first`'s rows profiled by `ip`; its testimony checked taken. */
static void profile_ok(struct instrproc *ip, const char *first) {
    struct dv_options o = lesson(first);
    struct dv_report *r = instr_test_measured(&o);
    instrproc_report(ip, &o, r);
    cr_expect(r->testimony.instructions_taken, "%s: %s", first ? first : "lesson", r->testimony.instructions_reason);
    const struct dv_row *m = first_missing(r);
    cr_expect_null(m, "row %s has no profile", m ? m->name : "");
    experiment_report_free(r);
}

Test(instrserve, one_child_serves_request_after_request_started_once_at_the_warm_up) {
    struct instrproc *ip = profiler(5000);
    instrproc_warm(ip);
    const pid_t pid = instrproc_server_pid(ip);
    cr_assert_gt(pid, 0, "started at the warm-up, before any request");
    cr_expect_eq(logged("start"), 1);
    const char *firsts[] = {NULL, "first-16", "always-a"};
    for (unsigned k = 0; k < 3; k++) {
        profile_ok(ip, firsts[k]);
        cr_expect_eq(instrproc_server_pid(ip), pid, "request %u: the same child", k);
    }
    cr_expect_eq(instrproc_children(ip), 1, "its start counted once");
    cr_expect_eq(logged("start"), 1, "one child started");
    cr_expect_eq(logged("request"), 3, "three requests (another first row each: one row each after the first)");
    cr_expect_eq(instrproc_served(ip), 3);
    cr_expect_eq(logged("rows"), 0, "no one-shot process");
    instrproc_free(ip);
    cr_expect(gone(pid), "the child ends with the profiler");
}

static unsigned hook_calls;
static void count_hook(void *ctx) {
    (void)ctx;
    hook_calls++;
}

/* The worker's counter profiler, built by its warm-up, is kept through the
 * server's start there, and let go before each request, as before each
 * process. */
Test(instrserve, the_hook_runs_before_each_request_not_at_the_warm_up) {
    struct instrproc_config c = {.exe = SERVER, .deadline_ms = 5000, .before_child = count_hook};
    char err[ERR_LEN];
    struct instrproc *ip = instrproc_create(&c, err);
    cr_assert_not_null(ip, "%s", err);
    hook_calls = 0;
    instrproc_warm(ip);
    cr_assert_gt(instrproc_server_pid(ip), 0);
    cr_expect_eq(hook_calls, 0, "the warm-up keeps the worker's profiler");
    profile_ok(ip, NULL);
    cr_expect_eq(hook_calls, 1);
    profile_ok(ip, "first-16");
    cr_expect_eq(hook_calls, 2, "once per request");
    instrproc_free(ip);
}

Test(instrserve, a_hung_child_is_killed_at_the_deadline_and_the_next_request_gets_a_fresh_one) {
    setenv("FAKE_INSTRUCTIONS", "hang", 1);
    struct instrproc *ip = profiler(300);
    instrproc_warm(ip);
    const pid_t hung = instrproc_server_pid(ip);
    cr_assert_gt(hung, 0);
    struct dv_options o = lesson(NULL);
    struct dv_report *r = instr_test_measured(&o);
    const double t0 = timeutil_now_ms();
    instrproc_report(ip, &o, r);
    const double ms = timeutil_now_ms() - t0;
    cr_expect(!r->testimony.instructions_taken);
    cr_expect_not_null(first_missing(r));
    cr_expect(strstr(r->testimony.instructions_reason, "profiling server killed after 750 ms, with no answer") != NULL,
              "%s", r->testimony.instructions_reason);
    cr_expect(ms >= 700 && ms < 3000, "%.0f ms: the deadline of 7 rows, once", ms);
    cr_expect(gone(hung), "killed");
    cr_expect_eq(instrproc_server_pid(ip), 0, "none left running");
    experiment_report_free(r);
    /* The next request: a fresh child (it reads its mode when it starts). */
    unsetenv("FAKE_INSTRUCTIONS");
    profile_ok(ip, "first-16");
    cr_expect_gt(instrproc_server_pid(ip), 0);
    cr_expect_neq(instrproc_server_pid(ip), hung);
    cr_expect_eq(logged("start"), 2);
    cr_expect_eq(instrproc_children(ip), 2);
    instrproc_free(ip);
}

Test(instrserve, a_child_that_dies_mid_answer_costs_its_row_and_the_rest_are_asked_again) {
    setenv("FAKE_INSTRUCTIONS", "crash-table-0-row-1", 1);
    const unsigned fds = open_fds();
    struct instrproc *ip = profiler(5000);
    instrproc_warm(ip);
    const pid_t first = instrproc_server_pid(ip);
    struct dv_options o = lesson(NULL);
    struct dv_report *r = instr_test_measured(&o);
    instrproc_report(ip, &o, r);
    cr_expect_not_null(r->tables[0].rows[0].instructions, "answered before the crash: kept");
    cr_expect_null(r->tables[0].rows[1].instructions);
    cr_expect(strstr(r->testimony.instructions_reason, "part1 row ") == r->testimony.instructions_reason &&
                  strstr(r->testimony.instructions_reason, "ended with signal 11") != NULL,
              "%s", r->testimony.instructions_reason);
    for (unsigned i = 0; i < r->ntables; i++)
        for (unsigned j = 0; j < r->tables[i].nrows; j++)
            if (!(i == 0 && j == 1)) cr_expect_not_null(r->tables[i].rows[j].instructions, "table %u row %u", i, j);
    /* The batch's child, the row it died at alone (dies again), the rest together. */
    cr_expect_eq(logged("start"), 3);
    cr_expect_eq(instrproc_children(ip), 3);
    cr_expect(gone(first));
    experiment_report_free(r);
    instrproc_free(ip);
    cr_expect_eq(open_fds(), fds, "no descriptor of the dead children left open");
}

/* The real server ends after a request whose passes failed as a whole
 * (CUPTI's state is not clean after one) and says so in its "done": the
 * profiler stops the child there, so the next request starts a fresh one
 * at once, its rows in one request, rather than finding the child dead
 * and asking its rows again one by one. */
Test(instrserve, a_request_that_fails_as_a_whole_ends_its_child_and_the_next_request_starts_a_fresh_one) {
    setenv("FAKE_INSTR_SERVER", "fail-whole-once", 1);
    struct instrproc *ip = profiler(5000);
    instrproc_warm(ip);
    const pid_t first = instrproc_server_pid(ip);
    cr_assert_gt(first, 0);
    struct dv_options o = lesson(NULL);
    struct dv_report *r = instr_test_measured(&o);
    instrproc_report(ip, &o, r);
    cr_expect(!r->testimony.instructions_taken);
    cr_expect(strstr(r->testimony.instructions_reason, "CUPTI_ERROR_INVALID_PARAMETER") != NULL, "%s",
              r->testimony.instructions_reason);
    cr_expect_eq(instrproc_server_pid(ip), 0, "stopped at its answer that says it ends");
    cr_expect(gone(first));
    cr_expect_eq(logged("request"), 1, "every row refused: none asked again");
    experiment_report_free(r);
    profile_ok(ip, "first-16");
    cr_expect_gt(instrproc_server_pid(ip), 0);
    cr_expect_neq(instrproc_server_pid(ip), first);
    cr_expect_eq(logged("start"), 2);
    cr_expect_eq(logged("request"), 2, "the next request's rows in one request to the fresh child");
    instrproc_free(ip);
}

Test(instrserve, a_child_that_writes_garbage_is_killed_and_the_rows_get_the_reason) {
    const char *modes[] = {"garbage", "garbage-json"};
    for (unsigned k = 0; k < 2; k++) {
        setenv("FAKE_INSTRUCTIONS", modes[k], 1);
        struct instrproc *ip = profiler(5000);
        struct dv_options o = lesson(NULL);
        struct dv_report *r = instr_test_measured(&o);
        const double t0 = timeutil_now_ms();
        instrproc_report(ip, &o, r);
        const double ms = timeutil_now_ms() - t0;
        cr_expect(!r->testimony.instructions_taken, "%s", modes[k]);
        for (unsigned i = 0; i < r->ntables; i++)
            for (unsigned j = 0; j < r->tables[i].nrows; j++)
                cr_expect_null(r->tables[i].rows[j].instructions, "%s: table %u row %u", modes[k], i, j);
        cr_expect(strstr(r->testimony.instructions_reason, "answered what is not a frame of JSON") != NULL, "%s: %s",
                  modes[k], r->testimony.instructions_reason);
        cr_expect(ms < 2000, "%s: %.0f ms: garbage is not waited on to the deadline", modes[k], ms);
        /* All rows, the first alone, the rest together: three silent children end the asking. */
        cr_expect_eq(instrproc_children(ip), 3, "%s", modes[k]);
        cr_expect_eq(instrproc_server_pid(ip), 0, "%s: none left running", modes[k]);
        experiment_report_free(r);
        instrproc_free(ip);
        unlink(log_path);
    }
}

Test(instrserve, a_server_that_cannot_start_leaves_a_process_per_batch) {
    /* The server says it is not ready (no CUPTI, say); the one-shot stand-in answers. */
    setenv("FAKE_INSTR_SERVER", "not-ready", 1);
    struct instrproc *ip = profiler(5000);
    instrproc_warm(ip);
    cr_expect_eq(instrproc_server_pid(ip), 0);
    cr_expect_eq(logged("start"), 1);
    profile_ok(ip, NULL);
    profile_ok(ip, "first-16");
    cr_expect_eq(logged("start"), 2, "tried once more at the first request, then not again");
    cr_expect_eq(logged("rows") + logged("row"), 2, "a process per batch");
    cr_expect_eq(instrproc_served(ip), 0);
    instrproc_free(ip);

    /* One that is not ready in time is killed, and the same follows. */
    unlink(log_path);
    setenv("FAKE_INSTR_SERVER", "slow-start", 1);
    ip = profiler(300);
    const double t0 = timeutil_now_ms();
    profile_ok(ip, NULL);
    cr_expect(timeutil_now_ms() - t0 < 3000, "the start's deadline, then the process");
    cr_expect_eq(logged("start"), 1);
    cr_expect_eq(logged("rows"), 1);
    instrproc_free(ip);
}

Test(instrserve, told_so_the_profiler_goes_a_process_per_batch) {
    setenv("DV_INSTRUCTIONS_SERVER", "off", 1);
    struct instrproc *ip = profiler(5000);
    instrproc_warm(ip);
    cr_expect_eq(instrproc_server_pid(ip), 0);
    profile_ok(ip, NULL);
    cr_expect_eq(logged("start"), 0, "no server");
    cr_expect_eq(logged("rows"), 1);
    instrproc_free(ip);
}

/* A worker that starts the server and says its pid on `fd`, then: with
 * `how` 0, once `go` ends, exits without freeing anything (the server sees
 * its stdin end); with 1, asks for a report the server never answers
 * (hang: it does not read its stdin) and waits there to be killed. */
static void worker(int fd, int go, int how) {
    if (how == 1) setenv("FAKE_INSTRUCTIONS", "hang", 1);
    struct instrproc *ip = profiler(60000);
    instrproc_warm(ip);
    const pid_t pid = instrproc_server_pid(ip);
    if (write(fd, &pid, sizeof pid) != (ssize_t)sizeof pid) _exit(2);
    if (how == 1) {
        struct dv_options o = lesson(NULL);
        struct dv_report *r = instr_test_measured(&o);
        instrproc_report(ip, &o, r);
        _exit(3); /* not reached: killed in the request */
    }
    char b;
    while (read(go, &b, 1) > 0) {
    }
    _exit(0);
}

Test(instrserve, the_worker_ending_or_killed_mid_request_leaves_no_child) {
    for (int how = 0; how < 2; how++) {
        unlink(log_path);
        int p[2], go[2];
        cr_assert_eq(pipe(p), 0);
        cr_assert_eq(pipe(go), 0);
        const pid_t w = fork();
        cr_assert_geq(w, 0);
        if (w == 0) {
            close(p[0]);
            close(go[1]);
            worker(p[1], go[0], how);
        }
        close(p[1]);
        close(go[0]);
        pid_t child = 0;
        cr_assert_eq(read(p[0], &child, sizeof child), (ssize_t)sizeof child);
        close(p[0]);
        cr_assert_gt(child, 0);
        cr_expect(!gone(child), "the server runs while its worker does");
        if (how == 1) {
            /* Killed while the server is in the request (it has logged it). */
            for (int t = 0; t < 500 && logged("request") == 0; t++) usleep(10 * 1000);
            cr_expect_eq(logged("request"), 1);
            kill(w, SIGKILL);
        }
        close(go[1]); /* how 0: the worker exits now */
        int status;
        cr_assert_eq(waitpid(w, &status, 0), w);
        int dead = 0;
        for (int t = 0; t < 200 && !(dead = gone(child)); t++) usleep(10 * 1000);
        cr_expect(dead, "%s: the server %ld outlived its worker", how ? "killed mid-request" : "ended", (long)child);
        if (!dead) kill(child, SIGKILL);
    }
}
