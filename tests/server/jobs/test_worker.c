/* test_worker.c -- the worker supervisor on its own, driving tests/fake_worker
 * (and a command that cannot start) without the HTTP layer. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "server/jobs/jobq.h"
#include "server/jobs/worker.h"

#ifndef DV_TEST_BUILD_DIR
#define DV_TEST_BUILD_DIR "."
#endif

static struct jobq *q;
static struct worker *w;

static void teardown(void) {
    if (q) jobq_close(q, "test over");
    worker_free(w);
    jobq_free(q);
}

TestSuite(worker, .fini = teardown, .timeout = 30);

static void make(const char *cmd) {
    char err[ERR_LEN];
    q = jobq_create(4, 8, 60, err);
    cr_assert_not_null(q);
    char *argv[] = {(char *)cmd, "worker", NULL};
    struct worker_config c = {.argv = argv, .hello_timeout_ms = 2000};
    w = worker_create(&c, q, err);
    cr_assert_not_null(w, "%s", err);
    cr_assert_eq(worker_start(w, err), 0, "%s", err);
}

static struct job_view wait_done(const char *id) {
    struct job_view v;
    for (int i = 0; i < 1000; i++) {
        cr_assert_eq(jobq_status(q, id, &v), 0);
        if (v.state == JOB_DONE || v.state == JOB_FAILED) return v;
        free(v.document);
        usleep(10000);
    }
    cr_assert_fail("job never finished");
    return v;
}

Test(worker, a_command_that_cannot_start_is_down_with_reason) {
    make("/nonexistent/divergence-worker");
    cr_assert_eq(worker_wait_ready(w, 3000), -1);
    struct worker_snapshot s;
    worker_get_snapshot(w, &s);
    cr_assert_eq(s.gpu_present, 0);
    cr_assert(strstr(s.reason, "exited with status 127"), "%s", s.reason);
    free(s.device_json);
}

Test(worker, runs_jobs_and_restarts_after_a_crash) {
    char cmd[512];
    snprintf(cmd, sizeof cmd, "%s/tests/fake_worker", DV_TEST_BUILD_DIR);
    make(cmd);
    cr_assert_eq(worker_wait_ready(w, 5000), 0);
    struct worker_snapshot s;
    worker_get_snapshot(w, &s);
    cr_assert_eq(s.gpu_present, 1);
    cr_assert(strstr(s.device_json, "Fake GPU"));
    pid_t first = s.pid;
    free(s.device_json);

    char id[JOBQ_ID_LEN], err[ERR_LEN];
    unsigned pos;
    struct jobq_submit crash = {.request = "{\"part\":1,\"iterations\":2222}", .deadline_ms = 5000};
    cr_assert_eq(jobq_submit(q, &crash, id, &pos, NULL, err), 0);
    struct job_view v = wait_done(id);
    cr_assert_eq(v.state, JOB_FAILED);
    cr_assert_str_eq(v.kind, "crash");
    cr_assert(strstr(v.error, "killed by signal 6"), "%s", v.error);
    free(v.document);

    struct jobq_submit ok = {.request = "{\"part\":1,\"iterations\":64,\"budget_ms\":100}", .deadline_ms = 5000};
    cr_assert_eq(jobq_submit(q, &ok, id, &pos, NULL, err), 0);
    v = wait_done(id);
    cr_assert_eq(v.state, JOB_DONE, "%s", v.error);
    cr_assert(strstr(v.document, "divergence.v1"));
    free(v.document);
    worker_get_snapshot(w, &s);
    cr_assert_eq(s.restarts, 1);
    cr_assert_neq(s.pid, first);
    cr_assert_eq(s.jobs, 2);
    free(s.device_json);
}

/* The worker gets its two pipes and the standard streams, nothing else: a
 * descriptor the server holds (here one opened without O_CLOEXEC) must not
 * reach the process that owns the GPU. */
Test(worker, the_child_inherits_only_its_pipes) {
    int stray = open("/dev/null", O_RDONLY); /* deliberately not O_CLOEXEC */
    cr_assert_geq(stray, 0);
    cr_assert_geq(dup2(stray, 77), 0);
    char cmd[512];
    snprintf(cmd, sizeof cmd, "%s/tests/fake_worker", DV_TEST_BUILD_DIR);
    make(cmd);
    cr_assert_eq(worker_wait_ready(w, 5000), 0);
    struct worker_snapshot s;
    worker_get_snapshot(w, &s);
    free(s.device_json);
    cr_assert_gt(s.pid, 0);
    char dir[64];
    snprintf(dir, sizeof dir, "/proc/%ld/fd", (long)s.pid);
    DIR *d = opendir(dir);
    cr_assert_not_null(d, "%s", dir);
    struct dirent *e;
    int n = 0;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        int fd = atoi(e->d_name);
        cr_assert_lt(fd, 5, "the worker inherited fd %d", fd);
        n++;
    }
    closedir(d);
    cr_assert_eq(n, 5, "fds 0-4 are open in the worker (found %d)", n);
    close(77);
    close(stray);
}

static double testimony_seen_s;
static int testimony_replies;

static void on_testimony(void *ctx, double seconds) {
    (void)ctx;
    testimony_seen_s += seconds;
    testimony_replies++;
}

/* A job that finished on a worker that ends after it (a sticky error in
 * its counter pass): the job is done, the worker restarted at once, and
 * the next job runs on the new one. Every reply's testimony time reaches
 * the observer. */
Test(worker, a_worker_that_exits_after_a_good_reply_is_restarted_before_the_next_job) {
    char cmd[512];
    snprintf(cmd, sizeof cmd, "%s/tests/fake_worker", DV_TEST_BUILD_DIR);
    make(cmd);
    worker_set_testimony_observer(w, on_testimony, NULL);
    cr_assert_eq(worker_wait_ready(w, 5000), 0);
    char id[JOBQ_ID_LEN], err[ERR_LEN];
    unsigned pos;
    struct jobq_submit last = {.request = "{\"part\":1,\"iterations\":6666,\"budget_ms\":100}", .deadline_ms = 5000};
    cr_assert_eq(jobq_submit(q, &last, id, &pos, NULL, err), 0);
    struct job_view v = wait_done(id);
    cr_assert_eq(v.state, JOB_DONE, "%s", v.error);
    free(v.document);
    struct jobq_submit next = {.request = "{\"part\":1,\"iterations\":64,\"budget_ms\":101}", .deadline_ms = 5000};
    cr_assert_eq(jobq_submit(q, &next, id, &pos, NULL, err), 0);
    v = wait_done(id);
    cr_assert_eq(v.state, JOB_DONE, "%s", v.error);
    free(v.document);
    struct worker_snapshot s;
    worker_get_snapshot(w, &s);
    cr_assert_eq(s.restarts, 1);
    free(s.device_json);
    cr_assert_eq(testimony_replies, 2);
    cr_assert_gt(testimony_seen_s, 0);
}
