/* test_worker.c -- the worker supervisor on its own, driving tests/fake_worker
 * (and a command that cannot start) without the HTTP layer; and batches: a
 * class's jobs measured in one session, each reader's table the one it gets
 * alone, a failed row failing only its readers, a crash failing them all. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "api/options.h"
#include "api/request.h"
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

/* ---- batches: a class's jobs in one session (the stand-in's) ----------- */

/* The stand-in worker with every job "measured" from invented samples
 * (FAKE_WORKER_SAMPLE=1: a row's k-th round depends on its predicate and k
 * alone), its 3333 job held until `gate` exists, up to `batch` jobs a
 * session. */
static void make_sampling(unsigned batch, const char *gate, const char *bad_row) {
    char cmd[512];
    snprintf(cmd, sizeof cmd, "%s/tests/fake_worker", DV_TEST_BUILD_DIR);
    setenv("FAKE_WORKER_SAMPLE", "1", 1);
    setenv("FAKE_WORKER_NOISE", "0.004", 1);
    setenv("FAKE_WORKER_GATE", gate, 1);
    if (bad_row) setenv("FAKE_WORKER_BAD_ROW", bad_row, 1);
    else unsetenv("FAKE_WORKER_BAD_ROW");
    char err[ERR_LEN];
    q = jobq_create(64, 64, 60, err);
    cr_assert_not_null(q);
    char *argv[] = {cmd, "worker", NULL};
    struct worker_config c = {.argv = argv, .hello_timeout_ms = 2000, .batch_jobs = batch};
    w = worker_create(&c, q, err);
    cr_assert_not_null(w, "%s", err);
    cr_assert_eq(worker_start(w, err), 0, "%s", err);
    cr_assert_eq(worker_wait_ready(w, 5000), 0);
}

static void unmake(void) {
    jobq_close(q, "test over");
    worker_free(w);
    jobq_free(q);
    w = NULL;
    q = NULL;
}

/* Submits request `req` from `client`, with its batch text as the server
 * gives it (options_batch_key()); its id into `id`. */
static void submit_as_server(const char *client, const char *req, char *id) {
    json_t *root = json_loads(req, 0, NULL);
    struct dv_options o;
    struct request_error re;
    static char batch[OPTIONS_BATCH_KEY_LEN];
    cr_assert_eq(request_parse_json(root, &o, &re), 0, "%s: %s", re.field, re.reason);
    json_decref(root);
    cr_assert_eq(options_batch_key(&o, batch, sizeof batch), 0);
    char err[ERR_LEN];
    unsigned pos;
    struct jobq_submit s = {.request = req, .deadline_ms = 10000, .client = client, .kind = "part1", .batch = batch};
    cr_assert_eq(jobq_submit(q, &s, id, &pos, NULL, err), 0, "%s", err);
}

/* A job of another key that holds the worker until `gate` is made. */
static void hold(char *id) {
    char err[ERR_LEN];
    unsigned pos;
    struct jobq_submit s = {.request = "{\"part\":1,\"iterations\":3333,\"budget_ms\":100}", .deadline_ms = 20000};
    cr_assert_eq(jobq_submit(q, &s, id, &pos, NULL, err), 0, "%s", err);
    struct job_view v;
    for (int i = 0; i < 500; i++) {
        cr_assert_eq(jobq_status(q, id, &v), 0);
        free(v.document);
        if (v.state == JOB_RUNNING) return;
        usleep(10000);
    }
    cr_assert_fail("the holding job never ran");
}

#define READERS 6
static const char *const preds[READERS] = {"(threadIdx.x % 2) < 1", "(threadIdx.x % 3) < 1", "(threadIdx.x % 3) < 2",
                                           "threadIdx.x < 16",      "(threadIdx.x % 5) < 3", "(threadIdx.x % 7) < 2"};

/* Reader i's request: its predicate, its own target and sample bounds. */
static void reader_request(unsigned i, char *buf, size_t len) {
    static const double targets[READERS] = {0.005, 0.002, 0.01, 0.005, 0.001, 0.005};
    static const unsigned mins[READERS] = {10, 10, 10, 40, 10, 10}, maxs[READERS] = {2000, 2000, 2000, 2000, 2000, 24};
    snprintf(buf, len,
             "{\"part\":1,\"predicates\":[\"%s\",\"warp-parity\"],\"baseline\":\"warp-parity\","
             "\"max_halfwidth\":%g,\"min_samples\":%u,\"max_samples\":%u}",
             preds[i], targets[i], mins[i], maxs[i]);
}

/* The first table of a done job's document. */
static json_t *table_of(const char *id, json_t **doc) {
    struct job_view v = wait_done(id);
    cr_assert_eq(v.state, JOB_DONE, "%s: %s", id, v.error);
    *doc = json_loads(v.document, 0, NULL);
    free(v.document);
    cr_assert_not_null(*doc);
    return json_array_get(json_object_get(*doc, "tables"), 0);
}

/* Six readers, each with its own predicate and rule: measured one at a
 * time, then together while the worker was busy, so the six wait and go in
 * one session. Each reader's table in the batch is the table it got alone,
 * every row and figure (its rows, its samples, its interval, its stop, its
 * rows' GPU time), and says it was one of six readers over seven rows; no
 * reader's table holds another's row. */
Test(worker, a_batchs_readers_get_the_tables_they_get_alone) {
    char gate[64] = "/tmp/dv-gate-XXXXXX", req[512], ids[READERS][JOBQ_ID_LEN], holder[JOBQ_ID_LEN];
    cr_assert_not_null(mkdtemp(gate));
    strcat(gate, "/go");
    json_t *alone_doc[READERS], *alone[READERS];
    make_sampling(1, gate, NULL);
    for (unsigned i = 0; i < READERS; i++) {
        reader_request(i, req, sizeof req);
        char client[32];
        snprintf(client, sizeof client, "10.0.5.%u", i + 1);
        submit_as_server(client, req, ids[i]);
        alone[i] = table_of(ids[i], &alone_doc[i]);
        cr_expect_null(json_object_get(alone[i], "batch"), "alone: no batch");
    }
    unmake();
    make_sampling(16, gate, NULL);
    hold(holder);
    for (unsigned i = 0; i < READERS; i++) {
        reader_request(i, req, sizeof req);
        char client[32];
        snprintf(client, sizeof client, "10.0.6.%u", i + 1);
        submit_as_server(client, req, ids[i]);
    }
    FILE *f = fopen(gate, "w");
    cr_assert_not_null(f);
    fclose(f);
    for (unsigned i = 0; i < READERS; i++) {
        json_t *doc, *t = table_of(ids[i], &doc);
        const json_t *b = json_object_get(t, "batch");
        cr_expect_eq(json_integer_value(json_object_get(b, "readers")), READERS, "reader %u: %s", i,
                     json_dumps(b, 0));
        cr_expect_eq(json_integer_value(json_object_get(b, "rows")), READERS + 1);
        const char *key;
        json_t *value;
        json_object_foreach(alone[i], key, value) {
            cr_expect(json_equal(value, json_object_get(t, key)), "reader %u (%s): %s differs from alone:\n%s\n%s", i,
                      preds[i], key, json_dumps(value, JSON_COMPACT), json_dumps(json_object_get(t, key), JSON_COMPACT));
        }
        const json_t *rows = json_object_get(t, "rows");
        cr_expect_eq(json_array_size(rows), 2);
        for (unsigned k = 0; k < READERS; k++) {
            if (k == i) continue;
            for (size_t r = 0; r < json_array_size(rows); r++)
                cr_expect_str_neq(json_string_value(json_object_get(json_array_get(rows, r), "name")), preds[k],
                                  "reader %u's table holds reader %u's row", i, k);
        }
        json_decref(doc);
    }
    /* Not vacuous: the readers' rules ended after different rounds. */
    cr_expect(!json_equal(json_object_get(alone[4], "gpu_time_ms"), json_object_get(alone[5], "gpu_time_ms")));
    for (unsigned i = 0; i < READERS; i++) json_decref(alone_doc[i]);
    unmake();
    unlink(gate);
    *strrchr(gate, '/') = '\0';
    rmdir(gate);
}

/* A row whose check fails fails the readers whose tables hold it (the
 * gate, with the document), and no other reader of the batch. */
Test(worker, a_row_that_fails_its_check_fails_only_its_readers) {
    char gate[64] = "/tmp/dv-gate-XXXXXX", req[512], ids[4][JOBQ_ID_LEN], holder[JOBQ_ID_LEN];
    cr_assert_not_null(mkdtemp(gate));
    strcat(gate, "/go");
    make_sampling(16, gate, preds[2]);
    hold(holder);
    for (unsigned i = 0; i < 4; i++) {
        reader_request(i, req, sizeof req);
        char client[32];
        snprintf(client, sizeof client, "10.0.7.%u", i + 1);
        submit_as_server(client, req, ids[i]);
    }
    FILE *f = fopen(gate, "w");
    cr_assert_not_null(f);
    fclose(f);
    for (unsigned i = 0; i < 4; i++) {
        struct job_view v = wait_done(ids[i]);
        if (i == 2) {
            cr_expect_eq(v.state, JOB_FAILED);
            cr_expect_str_eq(v.kind, "gate");
            cr_expect(strstr(v.error, preds[2]), "%s", v.error);
            cr_expect_not_null(v.document, "a failed gate keeps its document");
        } else {
            cr_expect_eq(v.state, JOB_DONE, "reader %u: %s", i, v.error);
            cr_expect(v.document && strstr(v.document, "\"readers\":4"), "reader %u was in the batch", i);
        }
        free(v.document);
    }
    unmake();
    unlink(gate);
    *strrchr(gate, '/') = '\0';
    rmdir(gate);
}

/* A worker that crashes in a batch fails every member with how it ended,
 * and is restarted once. */
Test(worker, a_crash_in_a_batch_fails_every_member) {
    char gate[64] = "/tmp/dv-gate-XXXXXX", ids[3][JOBQ_ID_LEN], holder[JOBQ_ID_LEN];
    cr_assert_not_null(mkdtemp(gate));
    strcat(gate, "/go");
    make_sampling(16, gate, NULL);
    hold(holder);
    for (unsigned i = 0; i < 3; i++) {
        char req[256], client[32];
        snprintf(req, sizeof req, "{\"part\":1,\"iterations\":2222,\"predicates\":[\"%s\",\"warp-parity\"]}", preds[i]);
        snprintf(client, sizeof client, "10.0.8.%u", i + 1);
        submit_as_server(client, req, ids[i]);
    }
    FILE *f = fopen(gate, "w");
    cr_assert_not_null(f);
    fclose(f);
    for (unsigned i = 0; i < 3; i++) {
        struct job_view v = wait_done(ids[i]);
        cr_expect_eq(v.state, JOB_FAILED);
        cr_expect_str_eq(v.kind, "crash");
        cr_expect(strstr(v.error, "killed by signal 6"), "%s", v.error);
        free(v.document);
    }
    struct worker_snapshot s;
    worker_get_snapshot(w, &s);
    cr_expect_eq(s.restarts, 1, "one crash, one restart");
    cr_expect_eq(s.jobs, 4, "the holding job and the batch's three");
    free(s.device_json);
    unmake();
    unlink(gate);
    *strrchr(gate, '/') = '\0';
    rmdir(gate);
}

/* ---- groups: the batches of one key ready together, one message -------- */

/* Submits reader i's request (preds[i % READERS], with iterations `it`
 * so readers past READERS differ) asking for its profiles from client
 * 10.0.9.<i+1>; its id into `id`. */
static void submit_profiled(unsigned i, unsigned it, char *id) {
    char req[320], client[32];
    snprintf(req, sizeof req,
             "{\"part\":1,\"instructions\":true,\"iterations\":%u,\"predicates\":[\"%s\",\"warp-parity\"],"
             "\"baseline\":\"warp-parity\"}",
             it, preds[i % READERS]);
    snprintf(client, sizeof client, "10.0.9.%u", i + 1);
    submit_as_server(client, req, id);
}

/* The messages the stand-in logged (FAKE_WORKER_MESSAGES), one a line. */
static char *messages(const char *path) {
    FILE *f = fopen(path, "r");
    static char text[1024];
    size_t n = f ? fread(text, 1, sizeof text - 1, f) : 0;
    text[n] = '\0';
    if (f) fclose(f);
    return text;
}

/* Readers asking for profiles, queued while the worker is busy, batches of
 * at most 4 (one key): the first batch popped takes the others ready with
 * it as one message of groups (so their profiles are one request), every
 * reader answered with its own table; readers that ask for none go batch
 * by batch as before. */
Test(worker, batches_of_one_key_ready_together_go_as_one_message_of_groups) {
    char gate[64] = "/tmp/dv-gate-XXXXXX", ids[10][JOBQ_ID_LEN], holder[JOBQ_ID_LEN], log[128];
    cr_assert_not_null(mkdtemp(gate));
    snprintf(log, sizeof log, "%s/messages", gate);
    strcat(gate, "/go");
    setenv("FAKE_WORKER_MESSAGES", log, 1);
    make_sampling(4, gate, NULL);
    hold(holder);
    for (unsigned i = 0; i < 10; i++) submit_profiled(i, 8, ids[i]);
    FILE *f = fopen(gate, "w");
    cr_assert_not_null(f);
    fclose(f);
    for (unsigned i = 0; i < 10; i++) {
        json_t *doc;
        json_t *t = table_of(ids[i], &doc);
        cr_expect_str_eq(json_string_value(json_object_get(json_array_get(json_object_get(t, "rows"), 0), "name")),
                         preds[i % READERS], "reader %u got its own table", i);
        json_decref(doc);
    }
    cr_expect_str_eq(messages(log), "job\ngroups 3 4,4,2\n", "one message of three groups: %s", messages(log));
    unsetenv("FAKE_WORKER_MESSAGES");
    unmake();
    unlink(log);
    unlink(gate);
    *strrchr(gate, '/') = '\0';
    rmdir(gate);
}

/* A job of another key next in the fair order ends the joining: it starts
 * before any later batch, as it would have (the order kept). */
Test(worker, a_job_of_another_key_next_in_the_order_is_not_passed_by_a_group) {
    char gate[64] = "/tmp/dv-gate-XXXXXX", ids[8][JOBQ_ID_LEN], other[JOBQ_ID_LEN], holder[JOBQ_ID_LEN], log[128];
    cr_assert_not_null(mkdtemp(gate));
    snprintf(log, sizeof log, "%s/messages", gate);
    strcat(gate, "/go");
    setenv("FAKE_WORKER_MESSAGES", log, 1);
    make_sampling(4, gate, NULL);
    hold(holder);
    for (unsigned i = 0; i < 4; i++) submit_profiled(i, 8, ids[i]);
    submit_as_server("10.0.10.1", "{\"part\":1,\"iterations\":9,\"predicates\":[\"threadIdx.x < 3\"]}", other);
    for (unsigned i = 4; i < 8; i++) submit_profiled(i, 8, ids[i]);
    FILE *f = fopen(gate, "w");
    cr_assert_not_null(f);
    fclose(f);
    for (unsigned i = 0; i < 8; i++) free(wait_done(ids[i]).document);
    free(wait_done(other).document);
    cr_expect_str_eq(messages(log), "job\nbatch 4\njob\nbatch 4\n", "%s", messages(log));
    unsetenv("FAKE_WORKER_MESSAGES");
    unmake();
    unlink(log);
    unlink(gate);
    *strrchr(gate, '/') = '\0';
    rmdir(gate);
}

/* ---- the warm-up's run: the queue's estimate before a kind has run ------ */

/* The kind the server gives what the widget's "Measure this" sends
 * (static/widget/trybox.js), into `kind` (JOBQ_KIND_LEN). */
static void widget_kind(char *kind) {
    static const char body[] =
        "{\"part\":1,\"predicates\":[\"(threadIdx.x % 5) < 2\",\"warp-parity\"],"
        "\"baseline\":\"warp-parity\",\"threads_per_block\":256}";
    struct dv_options o;
    struct request_error re;
    cr_assert_eq(request_parse(body, strlen(body), &o, &re), 0, "%s: %s", re.field, re.reason);
    cr_assert_eq(options_job_kind(&o, kind, JOBQ_KIND_LEN), 0);
}

/* A fresh queue of 64 and the stand-in, ready; its 3333 job waits for `gate`. */
static void make_fresh(const char *gate) {
    char cmd[512], err[ERR_LEN];
    snprintf(cmd, sizeof cmd, "%s/tests/fake_worker", DV_TEST_BUILD_DIR);
    setenv("FAKE_WORKER_GATE", gate, 1);
    q = jobq_create(64, 64, 60, err);
    cr_assert_not_null(q);
    char *argv[] = {cmd, "worker", NULL};
    struct worker_config c = {.argv = argv, .hello_timeout_ms = 2000};
    w = worker_create(&c, q, err);
    cr_assert_not_null(w, "%s", err);
    cr_assert_eq(worker_start(w, err), 0, "%s", err);
    cr_assert_eq(worker_wait_ready(w, 5000), 0);
}

/* Submits `req` of `kind` from `client`; when it is likely to start and
 * end into `*wt`, its id into `id`. */
static void submit_kind(const char *client, const char *kind, const char *req, struct jobq_wait *wt, char *id) {
    char err[ERR_LEN];
    unsigned pos;
    struct jobq_submit s = {.request = req, .deadline_ms = 20000, .client = client, .kind = kind, .wait = wt};
    cr_assert_eq(jobq_submit(q, &s, id, &pos, NULL, err), 0, "%s", err);
}

/* A class on a fresh queue: a job of the widget's kind holds the worker
 * (until `gate`), then 40 readers' jobs of that kind. The 40th's expected
 * start into `*fortieth`; then a job of a kind that has neither run nor
 * seed, whose expected run (its eta less its start) goes into `*other_run`.
 * The gate is opened and every job waited for. */
static void class_of_forty(const char *gate, double *fortieth, double *other_run) {
    char kind[JOBQ_KIND_LEN], id[JOBQ_ID_LEN], ids[41][JOBQ_ID_LEN], addr[32];
    widget_kind(kind);
    struct jobq_wait wt;
    submit_kind("10.0.11.99", kind, "{\"part\":1,\"iterations\":3333,\"budget_ms\":100}", &wt, id);
    struct job_view v = {.state = JOB_QUEUED};
    for (int i = 0; i < 500 && v.state != JOB_RUNNING; i++) {
        usleep(10000);
        cr_assert_eq(jobq_status(q, id, &v), 0);
        free(v.document);
    }
    cr_assert_eq(v.state, JOB_RUNNING, "the holding job never ran");
    for (int i = 0; i < 40; i++) {
        snprintf(addr, sizeof addr, "10.0.11.%d", i + 1);
        submit_kind(addr, kind, "{\"part\":1,\"iterations\":64,\"budget_ms\":100}", &wt, ids[i]);
    }
    *fortieth = wt.expected_start_s;
    submit_kind("10.0.12.1", "part2/3rows+witness+counters", "{\"part\":2,\"iterations\":64,\"budget_ms\":100}", &wt,
                ids[40]);
    *other_run = wt.eta_s - wt.expected_start_s;
    FILE *f = fopen(gate, "w");
    cr_assert_not_null(f);
    fclose(f);
    free(wait_done(id).document);
    for (int i = 0; i < 41; i++) free(wait_done(ids[i]).document);
}

/* The brief's fresh server: the stand-in's hello says its warm-up ran a
 * widget job in 15 ms, so the 40th reader of a class is told 39 runs of
 * 15 ms (with what is left of the running one's 15 ms), not 39 defaults
 * of 2 s (78 s); a kind the warm-up did not run still counts the default. */
Test(worker, a_warm_hello_seeds_the_widgets_kind_on_a_fresh_queue) {
    char gate[64] = "/tmp/dv-gate-XXXXXX";
    cr_assert_not_null(mkdtemp(gate));
    strcat(gate, "/go");
    setenv("FAKE_WORKER_WARM_MS", "15", 1);
    make_fresh(gate);
    double fortieth, other_run;
    class_of_forty(gate, &fortieth, &other_run);
    cr_expect(fortieth >= 39 * 0.015 - 1e-9 && fortieth <= 40 * 0.015 + 1e-9,
              "the 40th reader: 39 x 15 ms and at most one more, told %.3f s", fortieth);
    cr_expect_float_eq(other_run, 2.0, 1e-9, "an unseeded kind: the default, %.3f s", other_run);
    unmake();
    unlink(gate);
    *strrchr(gate, '/') = '\0';
    rmdir(gate);
}

/* A worker whose hello has no "warm" (an older one) leaves the queue as it
 * was: the 40th reader is told 39 defaults and the running one's. */
Test(worker, a_hello_without_warm_leaves_the_default) {
    char gate[64] = "/tmp/dv-gate-XXXXXX";
    cr_assert_not_null(mkdtemp(gate));
    strcat(gate, "/go");
    unsetenv("FAKE_WORKER_WARM_MS");
    make_fresh(gate);
    double fortieth, other_run;
    class_of_forty(gate, &fortieth, &other_run);
    cr_expect(fortieth > 39 * 2.0 && fortieth <= 40 * 2.0, "39 defaults and the running one's: %.3f s", fortieth);
    cr_expect_float_eq(other_run, 2.0, 1e-9);
    unmake();
    unlink(gate);
    *strrchr(gate, '/') = '\0';
    rmdir(gate);
}

/* Waits until the worker has restarted `n` times and said hello again. */
static void wait_restarted(unsigned long long n) {
    for (int i = 0; i < 500; i++) {
        struct worker_snapshot s;
        worker_get_snapshot(w, &s);
        free(s.device_json);
        if (s.restarts == n && s.state == WORKER_READY) return;
        usleep(10000);
    }
    cr_assert_fail("the worker did not restart a %llu-th time", n);
}

/* A job of the widget's kind submitted with nothing running or waiting:
 * its eta is the kind's estimate. `crash`: it aborts the worker (no run:
 * the estimate learns nothing), and the restart's hello is waited for
 * (the `restarts`-th) with FAKE_WORKER_WARM_MS `next_warm` by then. */
static double estimate_then(const char *kind, int crash, const char *next_warm, unsigned long long restarts) {
    struct jobq_wait wt;
    char id[JOBQ_ID_LEN];
    setenv("FAKE_WORKER_WARM_MS", next_warm, 1);
    submit_kind("10.0.13.1", kind, crash ? "{\"part\":1,\"iterations\":2222}" : "{\"part\":1,\"iterations\":64}", &wt,
                id);
    cr_assert_float_eq(wt.expected_start_s, 0, 1e-12, "nothing ahead");
    struct job_view v = wait_done(id);
    cr_assert_eq(v.state, crash ? JOB_FAILED : JOB_DONE, "%s", v.error);
    free(v.document);
    if (crash) wait_restarted(restarts);
    return wt.eta_s;
}

/* The seed holds until a job of the kind has run, whatever the worker:
 * a restarted worker's hello seeds the kind again while it never ran (a
 * crash is no run), the first real run (40 ms on the stand-in) replaces
 * the seed, and later restarts' seeds leave it alone. */
Test(worker, a_seed_holds_until_a_real_run_and_restarts_seed_only_kinds_that_never_ran) {
    char gate[64] = "/tmp/dv-gate-XXXXXX", kind[JOBQ_KIND_LEN];
    cr_assert_not_null(mkdtemp(gate));
    strcat(gate, "/go");
    widget_kind(kind);
    setenv("FAKE_WORKER_WARM_MS", "15", 1);
    setenv("FAKE_WORKER_JOB_MS", "40", 1);
    make_fresh(gate);
    /* (Each figure taken before it is checked: the checks evaluate theirs more than once.) */
    const double first = estimate_then(kind, 1, "30", 1);
    cr_expect_float_eq(first, 0.015, 1e-9, "the first worker's seed: %.3f s", first);
    const double again = estimate_then(kind, 1, "5", 2);
    cr_expect_float_eq(again, 0.030, 1e-9, "a restart seeds a kind that never ran again: %.3f s", again);
    const double third = estimate_then(kind, 0, "5", 2);
    cr_expect_float_eq(third, 0.005, 1e-9, "the second restart's seed: %.3f s", third);
    const double after = estimate_then(kind, 1, "5", 3);
    cr_expect(after >= 0.040 && after < 1.0, "the real run (40 ms) replaced the seed: %.3f s", after);
    const double kept = estimate_then(kind, 0, "5", 3);
    cr_expect_float_eq(kept, after, 1e-9, "a restart after a real run seeds nothing: %.3f s", kept);
    unmake();
    *strrchr(gate, '/') = '\0';
    rmdir(gate);
}
