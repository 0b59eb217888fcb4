/* test_jobq.c -- the job queue on its own: FIFO order, the bound, positions,
 * the finished-job bound, the result cache and its TTL (and the job id a
 * cached answer names, still answerable), joining identical jobs,
 * callbacks, closing, watchers woken by their own job only, the Retry-After
 * estimate, and its return codes. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <ctype.h>
#include <string.h>
#include <unistd.h>

#include "server/jobs/jobq.h"

static struct jobq *q;
static char err[ERR_LEN];

static void teardown(void) { jobq_free(q); }

TestSuite(jobq, .fini = teardown);

static int push(const char *req, const char *key, char *id, unsigned *pos) {
    struct jobq_submit s = {.request = req, .key = key, .deadline_ms = 1000};
    return jobq_submit(q, &s, id, pos, NULL, err);
}

Test(jobq, pops_in_fifo_order_with_positions) {
    q = jobq_create(4, 8, 60, err);
    cr_assert_not_null(q, "%s", err);
    char a[JOBQ_ID_LEN], b[JOBQ_ID_LEN], c[JOBQ_ID_LEN];
    unsigned pos;
    cr_assert_eq(push("{\"n\":1}", NULL, a, &pos), 0);
    cr_assert_eq(pos, 1);
    cr_assert_eq(push("{\"n\":2}", NULL, b, &pos), 0);
    cr_assert_eq(pos, 2);
    cr_assert_eq(push("{\"n\":3}", NULL, c, &pos), 0);
    struct job_view v;
    cr_assert_eq(jobq_status(q, c, &v), 0);
    cr_assert_eq(v.state, JOB_QUEUED);
    cr_assert_eq(v.position, 3);
    struct job *j;
    cr_assert_eq(jobq_pop(q, 0, &j), 1);
    cr_assert_str_eq(jobq_job_id(j), a);
    cr_assert_str_eq(jobq_job_request(j), "{\"n\":1}");
    cr_assert_eq(jobq_job_deadline_ms(j), 1000);
    cr_assert_eq(jobq_status(q, a, &v), 0);
    cr_assert_eq(v.state, JOB_RUNNING);
    cr_assert_eq(jobq_status(q, c, &v), 0);
    cr_assert_eq(v.position, 2);
    jobq_finish(q, j, 1, "{\"doc\":1}", 2.5, 0, NULL, NULL);
    cr_assert_eq(jobq_status(q, a, &v), 0);
    cr_assert_eq(v.state, JOB_DONE);
    cr_assert_str_eq(v.document, "{\"doc\":1}");
    cr_assert_float_eq(v.gpu_time_ms, 2.5, 1e-12);
    free(v.document);
    cr_assert_eq(jobq_pop(q, 0, &j), 1);
    cr_assert_str_eq(jobq_job_id(j), b);
    jobq_finish(q, j, 0, NULL, 0, DV_ERR, "crash", "worker crashed");
    cr_assert_eq(jobq_status(q, b, &v), 0);
    cr_assert_eq(v.state, JOB_FAILED);
    cr_assert_str_eq(v.kind, "crash");
    cr_assert_str_eq(v.error, "worker crashed");
    cr_assert_null(v.document);
}

Test(jobq, full_queue_refuses) {
    q = jobq_create(2, 8, 60, err);
    char id[JOBQ_ID_LEN];
    unsigned pos;
    cr_assert_eq(push("{}", NULL, id, &pos), 0);
    cr_assert_eq(push("{}", NULL, id, &pos), 0);
    cr_assert_eq(push("{}", NULL, id, &pos), DV_EFULL);
    struct jobq_stats st;
    jobq_get_stats(q, &st);
    cr_assert_eq(st.depth, 2);
    cr_assert_eq(st.rejected, 1);
}

Test(jobq, pop_times_out_when_empty) {
    q = jobq_create(2, 8, 60, err);
    struct job *j = (struct job *)1;
    cr_assert_eq(jobq_pop(q, 30, &j), 0);
    cr_assert_null(j);
}

Test(jobq, ids_are_128_bit_hex_and_distinct) {
    char a[JOBQ_ID_LEN], b[JOBQ_ID_LEN];
    cr_assert_eq(jobq_new_id(a), 0);
    cr_assert_eq(jobq_new_id(b), 0);
    cr_assert_eq(strlen(a), 32);
    for (int i = 0; i < 32; i++) cr_assert(isxdigit((unsigned char)a[i]) && !isupper((unsigned char)a[i]));
    cr_assert_str_neq(a, b);
}

Test(jobq, finished_jobs_are_bounded) {
    q = jobq_create(4, 2, 60, err);
    char ids[3][JOBQ_ID_LEN];
    unsigned pos;
    struct job *j;
    for (int i = 0; i < 3; i++) {
        cr_assert_eq(push("{}", NULL, ids[i], &pos), 0);
        cr_assert_eq(jobq_pop(q, 0, &j), 1);
        jobq_finish(q, j, 1, "{}", 0, 0, NULL, NULL);
    }
    struct job_view v;
    cr_assert_eq(jobq_status(q, ids[0], &v), -1);
    cr_assert_eq(jobq_status(q, ids[1], &v), 0);
    free(v.document);
    cr_assert_eq(jobq_status(q, ids[2], &v), 0);
    free(v.document);
}

/* An evicted job's view is zeroed: a caller that frees v.document on every
 * path (as the event stream does when its job is gone) frees NULL, never a
 * pointer left in the slot by an earlier look-up. */
Test(jobq, status_of_an_evicted_job_leaves_no_document_to_free) {
    q = jobq_create(4, 1, 60, err);
    char a[JOBQ_ID_LEN], b[JOBQ_ID_LEN];
    unsigned pos;
    struct job *j;
    cr_assert_eq(push("{\"n\":1}", NULL, a, &pos), 0);
    cr_assert_eq(jobq_pop(q, 0, &j), 1);
    jobq_finish(q, j, 1, "{\"doc\":1}", 0, 0, NULL, NULL);
    struct job_view v;
    cr_assert_eq(jobq_status(q, a, &v), 0);
    char *earlier = v.document; /* freed at the end: the slot keeps its value */
    cr_assert_not_null(earlier);
    cr_assert_eq(push("{\"n\":2}", NULL, b, &pos), 0);
    cr_assert_eq(jobq_pop(q, 0, &j), 1);
    jobq_finish(q, j, 1, "{\"doc\":2}", 0, 0, NULL, NULL); /* evicts a */
    memset(&v, 0xa5, sizeof v);
    v.document = earlier; /* what the stack slot held from the last call */
    cr_assert_eq(jobq_status(q, a, &v), -1);
    cr_assert_null(v.document, "a miss must not leave the caller a pointer to free");
    cr_assert_eq(v.state, 0);
    free(v.document);
    free(earlier);
}

Test(jobq, cache_answers_within_ttl_only) {
    q = jobq_create(4, 8, 0.2, err);
    char id[JOBQ_ID_LEN], hit[JOBQ_ID_LEN];
    unsigned pos;
    struct job *j;
    char *doc = NULL;
    double age = -1;
    cr_assert_eq(jobq_cache_lookup(q, "k1", &doc, &age, hit), 0);
    cr_assert_eq(push("{}", "k1", id, &pos), 0);
    cr_assert_eq(jobq_pop(q, 0, &j), 1);
    jobq_finish(q, j, 1, "{\"r\":1}", 0, 0, NULL, NULL);
    cr_assert_eq(jobq_cache_lookup(q, "k1", &doc, &age, hit), 1);
    cr_assert_str_eq(doc, "{\"r\":1}");
    cr_assert_str_eq(hit, id);
    cr_assert(age >= 0 && age < 0.2);
    free(doc);
    cr_assert_eq(jobq_cache_lookup(q, "k2", &doc, &age, hit), 0);
    usleep(250000);
    cr_assert_eq(jobq_cache_lookup(q, "k1", &doc, &age, hit), 0);
    /* A failed job is never cached. */
    cr_assert_eq(push("{}", "k3", id, &pos), 0);
    cr_assert_eq(jobq_pop(q, 0, &j), 1);
    jobq_finish(q, j, 0, "{\"partial\":1}", 0, DV_EGATE, "gate", "check failed");
    cr_assert_eq(jobq_cache_lookup(q, "k3", &doc, &age, hit), 0);
}

Test(jobq, identical_jobs_join_until_finished) {
    q = jobq_create(4, 8, 60, err);
    char a[JOBQ_ID_LEN], b[JOBQ_ID_LEN], c[JOBQ_ID_LEN];
    unsigned pos;
    int joined = 0;
    struct jobq_submit s = {.request = "{}", .key = "same", .deadline_ms = 1000};
    cr_assert_eq(jobq_submit(q, &s, a, &pos, &joined, err), 0);
    cr_assert_eq(joined, 0);
    cr_assert_eq(jobq_submit(q, &s, b, &pos, &joined, err), 0);
    cr_assert_eq(joined, 1);
    cr_assert_str_eq(a, b);
    cr_assert_eq(pos, 1);
    struct job *j;
    cr_assert_eq(jobq_pop(q, 0, &j), 1);
    cr_assert_eq(jobq_submit(q, &s, b, &pos, &joined, err), 0);
    cr_assert_eq(joined, 1);
    cr_assert_eq(pos, 0);
    jobq_finish(q, j, 0, NULL, 0, DV_ERR, "error", "x");
    cr_assert_eq(jobq_submit(q, &s, c, &pos, &joined, err), 0);
    cr_assert_eq(joined, 0);
    cr_assert_str_neq(a, c);
    struct jobq_submit solo = {.request = "{}", .key = "same", .no_coalesce = 1};
    cr_assert_eq(jobq_submit(q, &solo, b, &pos, &joined, err), 0);
    cr_assert_str_neq(b, c);
}

static int started, done;
static char last_reason[ERR_LEN];

static void on_start(const struct job_view *v, void *ctx) {
    cr_assert_eq(v->state, JOB_RUNNING);
    cr_assert_str_eq((const char *)ctx, "ctx");
    started++;
}

static void on_done(const struct job_view *v, void *ctx) {
    done++;
    snprintf(last_reason, sizeof last_reason, "%s", v->error);
}

Test(jobq, close_fails_queued_jobs_and_stops_pops) {
    q = jobq_create(4, 8, 60, err);
    char a[JOBQ_ID_LEN], b[JOBQ_ID_LEN];
    unsigned pos;
    struct jobq_submit s = {.request = "{}", .deadline_ms = 1000, .on_start = on_start, .on_done = on_done,
                            .on_done_ctx = "ctx", .tag = "suite-x"};
    cr_assert_eq(jobq_submit(q, &s, a, &pos, NULL, err), 0);
    cr_assert_eq(jobq_submit(q, &s, b, &pos, NULL, err), 0);
    struct job *j;
    cr_assert_eq(jobq_pop(q, 0, &j), 1);
    cr_assert_eq(started, 1);
    jobq_close(q, "server shutting down");
    cr_assert_eq(done, 1);
    cr_assert_str_eq(last_reason, "server shutting down");
    struct job_view v;
    cr_assert_eq(jobq_status(q, b, &v), 0);
    cr_assert_eq(v.state, JOB_FAILED);
    cr_assert_str_eq(v.kind, "shutdown");
    cr_assert_str_eq(v.tag, "suite-x");
    /* The running job still finishes; nothing else is handed out. */
    jobq_finish(q, j, 1, "{}", 1, 0, NULL, NULL);
    cr_assert_eq(done, 2);
    cr_assert_eq(jobq_pop(q, 0, &j), -1);
    cr_assert_eq(jobq_submit(q, &s, a, &pos, NULL, err), DV_ECLOSED);
}

/* While jobq_close() runs the callbacks of the jobs it fails (a refresh
 * writes evidence from them, which takes fsyncs), every other job stays
 * visible: still queued, or already failed, never unknown. */
static char close_ids[3][JOBQ_ID_LEN];
static int close_seen, close_lost;

static void on_done_look(const struct job_view *v, void *ctx) {
    close_seen++;
    for (int i = 0; i < 3; i++) {
        struct job_view w;
        if (jobq_status(q, close_ids[i], &w) < 0) {
            close_lost++;
            continue;
        }
        free(w.document);
    }
}

Test(jobq, close_keeps_every_job_visible_during_callbacks) {
    q = jobq_create(4, 8, 60, err);
    unsigned pos;
    struct jobq_submit s = {.request = "{}", .deadline_ms = 1000, .on_done = on_done_look};
    for (int i = 0; i < 3; i++) cr_assert_eq(jobq_submit(q, &s, close_ids[i], &pos, NULL, err), 0);
    jobq_close(q, "server shutting down");
    cr_assert_eq(close_seen, 3);
    cr_assert_eq(close_lost, 0, "%d lookups found no job", close_lost);
    for (int i = 0; i < 3; i++) {
        struct job_view v;
        cr_assert_eq(jobq_status(q, close_ids[i], &v), 0);
        cr_assert_eq(v.state, JOB_FAILED);
        cr_assert_str_eq(v.kind, "shutdown");
        free(v.document);
    }
    struct jobq_stats st;
    jobq_get_stats(q, &st);
    cr_assert_eq(st.depth, 0);
    cr_assert_eq(st.failed, 3);
}

Test(jobq, id_prefix_names_the_owner_and_keeps_32_hex_digits) {
    q = jobq_create(4, 8, 60, err);
    cr_assert_eq(jobq_set_id_prefix(q, "0G", err), -1);
    cr_assert_not_null(strstr(err, "hex"), "%s", err);
    cr_assert_eq(jobq_set_id_prefix(q, "123456789", err), -1);
    cr_assert_eq(jobq_set_id_prefix(q, "a1", err), 0, "%s", err);
    char a[JOBQ_ID_LEN], b[JOBQ_ID_LEN];
    unsigned pos;
    cr_assert_eq(push("{\"n\":1}", NULL, a, &pos), 0);
    cr_assert_eq(push("{\"n\":2}", NULL, b, &pos), 0);
    cr_assert_eq(strncmp(a, "a1", 2), 0, "%s", a);
    cr_assert_eq(strncmp(b, "a1", 2), 0, "%s", b);
    cr_assert_eq(strlen(a), 32);
    cr_assert_str_neq(a, b);
    struct job_view v;
    cr_assert_eq(jobq_status(q, a, &v), 0);
}

struct timing { int n, ok; double wait_s, run_s; };
static void observe(void *ctx, int ok, double wait_s, double run_s) {
    struct timing *t = ctx;
    t->n++;
    t->ok = ok;
    t->wait_s = wait_s;
    t->run_s = run_s;
}

Test(jobq, observer_gets_queue_wait_and_run_time) {
    q = jobq_create(4, 8, 60, err);
    struct timing t = {0};
    jobq_set_observer(q, observe, &t);
    char a[JOBQ_ID_LEN], b[JOBQ_ID_LEN];
    unsigned pos;
    cr_assert_eq(push("{\"n\":1}", NULL, a, &pos), 0);
    cr_assert_eq(push("{\"n\":2}", NULL, b, &pos), 0);
    usleep(20000);
    struct job *j;
    cr_assert_eq(jobq_pop(q, 0, &j), 1);
    usleep(30000);
    jobq_finish(q, j, 1, "{}", 1, 0, NULL, NULL);
    cr_assert_eq(t.n, 1);
    cr_assert_eq(t.ok, 1);
    cr_assert(t.wait_s >= 0.015 && t.wait_s < 5, "wait %g", t.wait_s);
    cr_assert(t.run_s >= 0.025 && t.run_s < 5, "run %g", t.run_s);
    jobq_close(q, "stopping"); /* b never ran: a failure with no wait or run time */
    cr_assert_eq(t.n, 2);
    cr_assert_eq(t.ok, 0);
    cr_assert_eq(t.run_s, -1);
    cr_assert_eq(t.wait_s, -1);
}

/* One return-code family (base/status.h): the queue's "full" and "closed"
 * are values of their own, so a caller that maps codes to answers (429,
 * 503 with a reason, a CUDA error) can never take a full queue for a
 * missing GPU or a shutdown for a lost CUDA context. */
Test(jobq, full_and_closed_are_codes_of_their_own) {
    const int codes[] = {DV_ERR, DV_ENOGPU, DV_ESTICKY, DV_EGATE, DV_EFULL, DV_ECLOSED};
    const size_t n = sizeof codes / sizeof codes[0];
    for (size_t i = 0; i < n; i++) {
        cr_expect_lt(codes[i], 0, "code %zu is %d: a failure is negative", i, codes[i]);
        for (size_t k = 0; k < i; k++)
            cr_expect_neq(codes[i], codes[k], "codes %zu and %zu are both %d", k, i, codes[i]);
    }

    q = jobq_create(1, 8, 60, err);
    cr_assert_not_null(q, "%s", err);
    char id[JOBQ_ID_LEN];
    unsigned pos;
    cr_assert_eq(push("{\"n\":1}", NULL, id, &pos), 0);
    err[0] = '\0';
    int rc = push("{\"n\":2}", NULL, id, &pos);
    cr_expect_eq(rc, DV_EFULL, "a full queue answers DV_EFULL, got %d", rc);
    cr_expect(rc != DV_ENOGPU && rc != DV_ESTICKY, "full is neither no-GPU nor a sticky CUDA error");
    cr_expect(strstr(err, "full"), "%s", err);

    jobq_close(q, "server shutting down");
    err[0] = '\0';
    rc = push("{\"n\":3}", NULL, id, &pos);
    cr_expect_eq(rc, DV_ECLOSED, "a closed queue answers DV_ECLOSED, got %d", rc);
    cr_expect(rc != DV_ESTICKY && rc != DV_ENOGPU && rc != DV_EFULL, "closed is a code of its own");
    cr_expect(strstr(err, "shutting down"), "%s", err);
}

/* A cached answer names the job that made the result; that job may have
 * been pushed out of the finished table by later jobs (failures are not
 * cached, so the cache keeps entries the table has dropped). Its id must
 * still answer, done, with the same document. */
Test(jobq, the_job_a_cache_entry_names_still_answers) {
    q = jobq_create(4, 2, 600, err);
    char a[JOBQ_ID_LEN], other[JOBQ_ID_LEN], hit[JOBQ_ID_LEN];
    unsigned pos;
    struct job *j;
    cr_assert_eq(push("{\"n\":1}", "key-a", a, &pos), 0);
    cr_assert_eq(jobq_pop(q, 0, &j), 1);
    jobq_finish(q, j, 1, "{\"doc\":\"a\"}", 4.5, 0, NULL, NULL);
    for (int i = 0; i < 2; i++) { /* two failures push `a` out of the table */
        cr_assert_eq(push("{}", NULL, other, &pos), 0);
        cr_assert_eq(jobq_pop(q, 0, &j), 1);
        jobq_finish(q, j, 0, NULL, 0, DV_ERR, "crash", "worker crashed");
    }
    char *doc = NULL;
    double age = -1;
    cr_assert_eq(jobq_cache_lookup(q, "key-a", &doc, &age, hit), 1);
    cr_assert_str_eq(hit, a);
    free(doc);
    struct job_view v;
    cr_assert_eq(jobq_status(q, a, &v), 0, "the id a cached answer names answers 404");
    cr_assert_eq(v.state, JOB_DONE);
    cr_assert_str_eq(v.id, a);
    cr_assert_str_eq(v.document, "{\"doc\":\"a\"}");
    cr_assert_float_eq(v.gpu_time_ms, 4.5, 1e-12);
    cr_assert_gt(v.finished, 0);
    cr_assert_geq(v.finished, v.started);
    free(v.document);
}

static int wakes[4];
static void count_wake(void *ctx) { wakes[(long)ctx]++; }

/* A watcher hears of its own job only: when it starts and when it ends,
 * and (asked for) when it moves up the queue; other jobs' events wake no
 * one else. */
Test(jobq, watchers_wake_for_their_own_job_only) {
    q = jobq_create(4, 8, 60, err);
    memset(wakes, 0, sizeof wakes);
    char a[JOBQ_ID_LEN], b[JOBQ_ID_LEN], c[JOBQ_ID_LEN];
    unsigned pos;
    cr_assert_eq(push("{\"n\":1}", NULL, a, &pos), 0);
    cr_assert_eq(push("{\"n\":2}", NULL, b, &pos), 0);
    cr_assert_eq(push("{\"n\":3}", NULL, c, &pos), 0);
    struct jobq_watch *wa = jobq_watch(q, a, 0, count_wake, (void *)0);
    struct jobq_watch *wb = jobq_watch(q, b, 0, count_wake, (void *)1);
    struct jobq_watch *wc = jobq_watch(q, c, JOBQ_WATCH_POSITION, count_wake, (void *)2);
    cr_assert(wa && wb && wc);
    cr_assert_eq(wakes[0] + wakes[1] + wakes[2], 0, "a watch on a waiting job fires only on its events");
    struct job *j;
    cr_assert_eq(jobq_pop(q, 0, &j), 1); /* a runs; b and c move up */
    cr_expect_eq(wakes[0], 1, "a started");
    cr_expect_eq(wakes[1], 0, "b moved up, but its watcher did not ask for positions");
    cr_expect_eq(wakes[2], 1, "c moved up and asked for positions");
    jobq_finish(q, j, 1, "{}", 0, 0, NULL, NULL);
    cr_expect_eq(wakes[0], 2, "a finished");
    cr_expect_eq(wakes[1], 0, "a's end is not b's event");
    cr_expect_eq(wakes[2], 1, "nor c's");
    char d[JOBQ_ID_LEN];
    cr_assert_eq(push("{\"n\":4}", NULL, d, &pos), 0);
    cr_expect_eq(wakes[1] + wakes[2], 0 + 1, "a newcomer at the tail moves no one");
    cr_assert_eq(jobq_pop(q, 0, &j), 1); /* b runs; c moves up */
    cr_expect_eq(wakes[1], 1);
    cr_expect_eq(wakes[2], 2);
    jobq_finish(q, j, 1, "{}", 0, 0, NULL, NULL);
    cr_expect_eq(wakes[1], 2);
    cr_expect_eq(wakes[0], 2, "a's watcher hears nothing more once a has ended");
    jobq_unwatch(q, wa);
    jobq_unwatch(q, wb);
    jobq_unwatch(q, wc);
}

/* Watching a job that has already ended (or is unknown) fires at once, so
 * a caller that looked at the state just before cannot miss the end and
 * wait out its whole timeout. */
Test(jobq, a_watch_on_an_ended_job_fires_at_once) {
    q = jobq_create(4, 8, 60, err);
    memset(wakes, 0, sizeof wakes);
    char a[JOBQ_ID_LEN];
    unsigned pos;
    struct job *j;
    cr_assert_eq(push("{}", NULL, a, &pos), 0);
    cr_assert_eq(jobq_pop(q, 0, &j), 1);
    jobq_finish(q, j, 1, "{}", 0, 0, NULL, NULL);
    struct jobq_watch *w = jobq_watch(q, a, 0, count_wake, (void *)0);
    cr_assert_not_null(w);
    cr_expect_eq(wakes[0], 1);
    struct jobq_watch *u = jobq_watch(q, "00000000000000000000000000000000", 0, count_wake, (void *)1);
    cr_expect_eq(wakes[1], 1);
    jobq_unwatch(q, w);
    jobq_unwatch(q, u);
}

/* A watch outlives its job: the job evicted under it, then unwatched. */
Test(jobq, a_watch_outlives_its_evicted_job) {
    q = jobq_create(4, 1, 60, err);
    memset(wakes, 0, sizeof wakes);
    char a[JOBQ_ID_LEN], b[JOBQ_ID_LEN];
    unsigned pos;
    struct job *j;
    cr_assert_eq(push("{}", NULL, a, &pos), 0);
    struct jobq_watch *w = jobq_watch(q, a, JOBQ_WATCH_POSITION, count_wake, (void *)0);
    cr_assert_eq(jobq_pop(q, 0, &j), 1);
    jobq_finish(q, j, 1, "{}", 0, 0, NULL, NULL);
    cr_assert_eq(push("{}", NULL, b, &pos), 0);
    cr_assert_eq(jobq_pop(q, 0, &j), 1);
    jobq_finish(q, j, 1, "{}", 0, 0, NULL, NULL); /* evicts a */
    struct job_view v;
    cr_assert_eq(jobq_status(q, a, &v), -1);
    cr_expect_eq(wakes[0], 2);
    jobq_unwatch(q, w); /* ASan: no use of the freed job */
}

/* Retry-After for a full queue: a place opens when the running job ends.
 * Quick jobs before it and one that has now run past them (a long or a
 * hanging one): only its deadline bounds it, so the answer is about the
 * deadline left, not the mean of the quick ones (which said 1 s). */
Test(jobq, retry_after_follows_the_running_job) {
    q = jobq_create(1, 8, 60, err);
    char id[JOBQ_ID_LEN];
    unsigned pos;
    struct job *j;
    cr_expect_eq(jobq_retry_after_s(q), 5, "nothing has run, nothing runs");
    struct jobq_submit quick = {.request = "{}", .deadline_ms = 20000};
    for (int i = 0; i < 3; i++) {
        cr_assert_eq(jobq_submit(q, &quick, id, &pos, NULL, err), 0);
        cr_assert_eq(jobq_pop(q, 0, &j), 1);
        jobq_finish(q, j, 1, "{}", 0, 0, NULL, NULL);
    }
    cr_expect_eq(jobq_retry_after_s(q), 1, "idle after quick runs: at least 1 s");
    cr_assert_eq(jobq_submit(q, &quick, id, &pos, NULL, err), 0);
    cr_assert_eq(jobq_pop(q, 0, &j), 1); /* runs, and runs long */
    cr_assert_eq(jobq_submit(q, &quick, id, &pos, NULL, err), 0);
    cr_assert_eq(jobq_submit(q, &quick, id, &pos, NULL, err), DV_EFULL);
    usleep(50 * 1000); /* past the quick runs' mean */
    unsigned ra = jobq_retry_after_s(q);
    cr_expect(ra >= 19 && ra <= 20, "Retry-After %u s with 20 s of deadline left", ra);
    jobq_finish(q, j, 1, "{}", 0, 0, NULL, NULL);
    cr_assert_eq(jobq_pop(q, 0, &j), 1);
    jobq_finish(q, j, 1, "{}", 0, 0, NULL, NULL);
}

Test(jobq, retry_after_with_no_history_is_the_deadline_left) {
    q = jobq_create(1, 8, 60, err);
    char id[JOBQ_ID_LEN];
    unsigned pos;
    struct job *j;
    struct jobq_submit sub = {.request = "{}", .deadline_ms = 20000};
    cr_assert_eq(jobq_submit(q, &sub, id, &pos, NULL, err), 0);
    cr_assert_eq(jobq_pop(q, 0, &j), 1);
    unsigned ra = jobq_retry_after_s(q);
    cr_expect(ra >= 19 && ra <= 20, "Retry-After %u s", ra);
    jobq_finish(q, j, 1, "{}", 0, 0, NULL, NULL);
}

/* A run that is on schedule: the mean's remainder. */
Test(jobq, retry_after_on_schedule_is_the_mean_remainder) {
    q = jobq_create(1, 8, 60, err);
    char id[JOBQ_ID_LEN];
    unsigned pos;
    struct job *j;
    struct jobq_submit sub = {.request = "{}", .deadline_ms = 60000};
    cr_assert_eq(jobq_submit(q, &sub, id, &pos, NULL, err), 0);
    cr_assert_eq(jobq_pop(q, 0, &j), 1);
    usleep(1500 * 1000); /* one run of 1.5 s */
    jobq_finish(q, j, 1, "{}", 0, 0, NULL, NULL);
    cr_assert_eq(jobq_submit(q, &sub, id, &pos, NULL, err), 0);
    cr_assert_eq(jobq_pop(q, 0, &j), 1);
    unsigned ra = jobq_retry_after_s(q);
    cr_expect(ra >= 1 && ra <= 2, "Retry-After %u s for a 1.5 s run just begun (deadline 60 s)", ra);
    jobq_finish(q, j, 1, "{}", 0, 0, NULL, NULL);
}
