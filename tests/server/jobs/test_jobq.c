/* test_jobq.c -- the job queue on its own: FIFO order, the bound, positions,
 * the finished-job bound, the result cache and its TTL (and the job id a
 * cached answer names, still answerable), joining identical jobs,
 * callbacks, closing, watchers woken by their own job only, its return
 * codes; turns between client addresses (one address's 50 jobs and ten
 * others' one each), the per-address and byte bounds, and the drain
 * estimate: Retry-After and each waiting job's expected start, per kind of
 * job, against a scripted queue's observed waits; batches (the jobs of one
 * key taken together in the fair order, within their rows and horizon, each
 * finished on its own, each counting its share of the batch's time). */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <ctype.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernels/base/timeutil.h"

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

/* A job of `kind` from `client` (NULL: the server's own), its wait in `w`. */
static int push_from(const char *client, const char *kind, char *id, unsigned *pos, struct jobq_wait *w) {
    struct jobq_submit s = {.request = "{}", .deadline_ms = 20000, .client = client, .kind = kind, .wait = w};
    return jobq_submit(q, &s, id, pos, NULL, err);
}

/* Pops the next job and finishes it at once; its id into `id`. */
static void pop_finish(char *id) {
    struct job *j;
    cr_assert_eq(jobq_pop(q, 0, &j), 1);
    if (id) memcpy(id, jobq_job_id(j), JOBQ_ID_LEN);
    jobq_finish(q, j, 1, "{}", 0, 0, NULL, NULL);
}

/* Runs one job of `kind` for `ms` milliseconds, for the kind's estimate. */
static void run_one(const char *kind, int ms) {
    char id[JOBQ_ID_LEN];
    unsigned pos;
    struct job *j;
    cr_assert_eq(push_from("10.0.0.99", kind, id, &pos, NULL), 0);
    cr_assert_eq(jobq_pop(q, 0, &j), 1);
    usleep((useconds_t)ms * 1000);
    jobq_finish(q, j, 1, "{}", 0, 0, NULL, NULL);
}

static void set_limits(unsigned per_client, size_t max_bytes, double default_run_s) {
    struct jobq_limits l = {.per_client = per_client, .max_bytes = max_bytes, .default_run_s = default_run_s};
    cr_assert_eq(jobq_set_limits(q, &l, err), 0, "%s", err);
}

/* The brief's case: one address queues 50 jobs, then ten addresses one
 * each. Every one of the ten starts before the heavy address's 11th (in
 * fact each waits for one job of the heavy address only), and the
 * positions read before any pop are the order the jobs then start in. */
Test(jobq, ten_readers_are_not_starved_by_one_address_with_fifty_jobs) {
    q = jobq_create(256, 128, 60, err);
    set_limits(64, 0, 1.0);
    char ids[60][JOBQ_ID_LEN];
    unsigned pos;
    for (int i = 0; i < 50; i++) cr_assert_eq(push_from("10.0.0.1", "k", ids[i], &pos, NULL), 0);
    for (int i = 0; i < 10; i++) {
        char addr[32];
        snprintf(addr, sizeof addr, "10.0.1.%d", i + 1);
        cr_assert_eq(push_from(addr, "k", ids[50 + i], &pos, NULL), 0);
        cr_expect_eq(pos, (unsigned)i + 2, "reader %d: position %u (behind the heavy address's first job)", i, pos);
    }
    unsigned want[60];
    for (int i = 0; i < 60; i++) {
        struct job_view v;
        cr_assert_eq(jobq_status(q, ids[i], &v), 0);
        want[i] = v.position;
    }
    int order[60], heavy_started = 0, heavy11 = -1;
    for (int n = 0; n < 60; n++) {
        char id[JOBQ_ID_LEN];
        pop_finish(id);
        int k = 0;
        while (k < 60 && strcmp(ids[k], id) != 0) k++;
        cr_assert_lt(k, 60);
        order[k] = n;
        if (k < 50 && ++heavy_started == 11) heavy11 = n;
        cr_expect_eq(want[k], (unsigned)n + 1, "job %d said position %u and started %d-th", k, want[k], n + 1);
    }
    for (int i = 50; i < 60; i++)
        cr_expect_lt(order[i], heavy11, "reader %d started %d-th, after the heavy address's 11th (%d-th)", i - 50,
                     order[i] + 1, heavy11 + 1);
    for (int i = 1; i < 50; i++) cr_expect_lt(order[i - 1], order[i], "one address's jobs stay in its order");
}

/* Where a waiting job stands is arithmetic over the turns: for random
 * submissions from a few addresses (and the server's own) between pops,
 * the positions read at any moment are the order the jobs start in when no
 * more come. */
Test(jobq, positions_are_the_start_order_for_random_queues) {
    srand(31);
    for (int round = 0; round < 200; round++) {
        q = jobq_create(64, 128, 60, err);
        char ids[64][JOBQ_ID_LEN];
        int n = 0;
        int steps = 1 + rand() % 40;
        for (int t = 0; t < steps && n < 64; t++) {
            if (rand() % 4 == 0) {
                struct job *j;
                if (jobq_pop(q, 0, &j) == 1) jobq_finish(q, j, 1, "{}", 0, 0, NULL, NULL);
                continue;
            }
            static const char *const who[] = {"10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.4", NULL};
            unsigned pos;
            cr_assert_eq(push_from(who[rand() % 5], "k", ids[n++], &pos, NULL), 0);
        }
        unsigned want[64];
        int waiting = 0;
        for (int i = 0; i < n; i++) {
            struct job_view v;
            cr_assert_eq(jobq_status(q, ids[i], &v), 0);
            free(v.document);
            want[i] = v.state == JOB_QUEUED ? v.position : 0;
            waiting += v.state == JOB_QUEUED;
        }
        for (int k = 1; k <= waiting; k++) {
            char id[JOBQ_ID_LEN];
            pop_finish(id);
            int i = 0;
            while (i < n && strcmp(ids[i], id) != 0) i++;
            cr_assert_lt(i, n);
            cr_assert_eq(want[i], (unsigned)k, "round %d: a job said position %u and started %d-th", round, want[i], k);
        }
        jobq_free(q);
        q = NULL;
    }
}

/* One address past its bound gets DV_EFULL naming it, with Retry-After the
 * expected start of its own oldest job; other addresses and the server's
 * own jobs still queue. */
Test(jobq, an_address_past_its_bound_waits_for_its_oldest_job) {
    q = jobq_create(64, 8, 60, err);
    set_limits(3, 0, 2.0);
    char id[JOBQ_ID_LEN];
    unsigned pos;
    struct jobq_wait w;
    cr_assert_eq(push_from("10.0.0.2", "k", id, &pos, NULL), 0);
    cr_assert_eq(push_from("10.0.0.3", "k", id, &pos, NULL), 0);
    for (int i = 0; i < 3; i++) cr_assert_eq(push_from("10.0.0.1", "k", id, &pos, &w), 0);
    cr_expect_float_eq(w.expected_start_s, 8.0, 1e-9, "two of others' and two of its own ahead, 2 s each");
    cr_expect_float_eq(w.eta_s, 10.0, 1e-9);
    cr_assert_eq(push_from("10.0.0.1", "k", id, &pos, &w), DV_EFULL);
    cr_expect_eq(w.full, JOBQ_FULL_CLIENT);
    cr_expect(strstr(err, "10.0.0.1") && strstr(err, "one address"), "%s", err);
    cr_expect_eq(w.retry_after_s, 4, "its oldest starts after two others' jobs of 2 s: %u", w.retry_after_s);
    cr_expect_eq(jobq_retry_after_s(q, "10.0.0.1"), 4);
    cr_expect_eq(jobq_retry_after_s(q, "10.0.0.9"), 1, "a place for anyone else is free now");
    cr_assert_eq(push_from("10.0.0.4", "k", id, &pos, NULL), 0);
    for (int i = 0; i < 5; i++) cr_assert_eq(push_from(NULL, "k", id, &pos, NULL), 0, "the server's own: no bound");
    pop_finish(NULL); /* 10.0.0.2's */
    pop_finish(NULL); /* 10.0.0.3's */
    pop_finish(NULL); /* 10.0.0.1's oldest: a place for it */
    cr_assert_eq(push_from("10.0.0.1", "k", id, &pos, &w), 0);
    struct jobq_stats st;
    jobq_get_stats(q, &st);
    cr_expect_eq(st.rejected, 1);
}

/* The bytes the waiting jobs hold are bounded too, and given back when a
 * job leaves the queue. */
Test(jobq, the_waiting_jobs_bytes_are_bounded) {
    q = jobq_create(64, 8, 60, err);
    struct jobq_submit s = {.request = "{\"part\":1}", .key = "k1", .deadline_ms = 1000, .client = "10.0.0.1"};
    size_t one = jobq_submit_bytes(&s);
    cr_assert_gt(one, sizeof "{\"part\":1}" + sizeof "k1");
    set_limits(0, 3 * one, 1.0);
    char id[JOBQ_ID_LEN];
    unsigned pos;
    struct jobq_wait w;
    s.wait = &w;
    static const char *const keys[] = {"k1", "k2", "k3", "k4", "k5"};
    for (int i = 0; i < 3; i++) {
        s.key = keys[i];
        cr_assert_eq(jobq_submit(q, &s, id, &pos, NULL, err), 0, "%s", err);
    }
    s.key = keys[3];
    cr_assert_eq(jobq_submit(q, &s, id, &pos, NULL, err), DV_EFULL);
    cr_expect_eq(w.full, JOBQ_FULL_BYTES);
    cr_expect(strstr(err, "bytes"), "%s", err);
    struct jobq_stats st;
    jobq_get_stats(q, &st);
    cr_expect_eq(st.bytes, 3 * one);
    cr_expect_eq(st.max_bytes, 3 * one);
    pop_finish(NULL);
    jobq_get_stats(q, &st);
    cr_expect_eq(st.bytes, 2 * one);
    cr_assert_eq(jobq_submit(q, &s, id, &pos, NULL, err), 0, "%s", err);
}

/* A full queue: a place opens when the next job leaves it, i.e. when the
 * running job ends. A job that has run past its kind's estimate is expected
 * to end at any moment (1 s), whatever its deadline says. */
Test(jobq, retry_after_is_the_running_jobs_remainder_never_its_deadline) {
    q = jobq_create(1, 8, 60, err);
    char id[JOBQ_ID_LEN];
    unsigned pos;
    struct job *j;
    cr_expect_eq(jobq_retry_after_s(q, NULL), 1, "nothing waits, nothing runs");
    for (int i = 0; i < 3; i++) run_one("quick", 0);
    cr_assert_eq(push_from("10.0.0.1", "quick", id, &pos, NULL), 0);
    cr_assert_eq(jobq_pop(q, 0, &j), 1); /* runs, and runs long: deadline 20 s */
    cr_assert_eq(push_from("10.0.0.1", "quick", id, &pos, NULL), 0);
    struct jobq_wait w;
    cr_assert_eq(push_from("10.0.0.2", "quick", id, &pos, &w), DV_EFULL);
    cr_expect_eq(w.full, JOBQ_FULL_JOBS);
    usleep(50 * 1000); /* past the quick runs' estimate */
    cr_expect_eq(jobq_retry_after_s(q, "10.0.0.2"), 1, "not the 20 s to the deadline");
    jobq_finish(q, j, 1, "{}", 0, 0, NULL, NULL);
    pop_finish(NULL);
}

/* With no finished run of its kind, a running job is expected to take the
 * configured default: Retry-After is that less what it has run, not the
 * deadline (20 s) nor another kind's runs. */
Test(jobq, retry_after_with_no_history_is_the_default_run) {
    q = jobq_create(1, 8, 60, err);
    set_limits(0, 0, 5.0);
    run_one("other", 0);
    char id[JOBQ_ID_LEN];
    unsigned pos;
    struct job *j;
    cr_assert_eq(push_from("10.0.0.1", "new", id, &pos, NULL), 0);
    cr_assert_eq(jobq_pop(q, 0, &j), 1);
    cr_assert_eq(push_from("10.0.0.1", "new", id, &pos, NULL), 0);
    struct jobq_wait w;
    cr_assert_eq(push_from("10.0.0.2", "new", id, &pos, &w), DV_EFULL);
    cr_expect_eq(w.retry_after_s, 5, "Retry-After %u s with the default run of 5 s just begun", w.retry_after_s);
    jobq_finish(q, j, 1, "{}", 0, 0, NULL, NULL);
    pop_finish(NULL);
}

/* A run on schedule: its kind's estimate less what it has run. */
Test(jobq, retry_after_on_schedule_is_the_kinds_remainder) {
    q = jobq_create(1, 8, 60, err);
    run_one("long", 1500);
    run_one("short", 0);
    char id[JOBQ_ID_LEN];
    unsigned pos;
    struct job *j;
    cr_assert_eq(push_from("10.0.0.1", "long", id, &pos, NULL), 0);
    cr_assert_eq(jobq_pop(q, 0, &j), 1);
    cr_assert_eq(push_from("10.0.0.1", "short", id, &pos, NULL), 0);
    unsigned ra = jobq_retry_after_s(q, "10.0.0.2");
    cr_expect_eq(ra, 2, "Retry-After %u s for a 1.5 s run just begun", ra);
    struct job_view v;
    cr_assert_eq(jobq_status(q, id, &v), 0);
    cr_expect(v.expected_start_s > 1.3 && v.expected_start_s <= 1.7, "expected start %.3f s", v.expected_start_s);
    cr_expect(v.eta_s > v.expected_start_s && v.eta_s < v.expected_start_s + 0.2, "eta %.3f s", v.eta_s);
    jobq_finish(q, j, 1, "{}", 0, 0, NULL, NULL);
    pop_finish(NULL);
}

/* A scripted queue: a worker thread runs each job for its kind's time
 * (300 ms or 30 ms). After one run of each kind, twelve jobs of the two
 * kinds from six addresses: each job's expected start, read when it was
 * queued, against the wait it then had. A single mean over the kinds would
 * miss the slow jobs' waits by over a second. */
struct script {
    char ids[12][JOBQ_ID_LEN];
    double started_ms[12];
    int n;
};

static int kind_ms(const char *req) { return strstr(req, "slow") ? 300 : 30; }

static void *script_worker(void *arg) {
    struct script *sc = arg;
    for (int n = 0; n < sc->n; n++) {
        struct job *j;
        if (jobq_pop(q, 10000, &j) != 1) return NULL;
        for (int i = 0; i < sc->n; i++)
            if (strcmp(sc->ids[i], jobq_job_id(j)) == 0) sc->started_ms[i] = timeutil_now_ms();
        usleep((useconds_t)kind_ms(jobq_job_request(j)) * 1000);
        jobq_finish(q, j, 1, "{}", 0, 0, NULL, NULL);
    }
    return NULL;
}

Test(jobq, expected_starts_match_a_scripted_queues_waits, .timeout = 30) {
    q = jobq_create(64, 64, 60, err);
    set_limits(16, 0, 10.0);
    static const char *const kinds[] = {"slow", "fast"};
    for (int k = 0; k < 2; k++) {
        struct jobq_submit s = {.request = kinds[k], .kind = kinds[k], .client = "10.0.0.1"};
        char id[JOBQ_ID_LEN];
        unsigned pos;
        struct job *j;
        cr_assert_eq(jobq_submit(q, &s, id, &pos, NULL, err), 0);
        cr_assert_eq(jobq_pop(q, 0, &j), 1);
        usleep((useconds_t)kind_ms(kinds[k]) * 1000);
        jobq_finish(q, j, 1, "{}", 0, 0, NULL, NULL);
    }
    struct script sc = {.n = 12};
    double said[12], t0 = timeutil_now_ms();
    for (int i = 0; i < 12; i++) {
        char addr[32];
        snprintf(addr, sizeof addr, "10.0.2.%d", i % 6);
        const char *kind = kinds[i % 3 == 0 ? 0 : 1];
        struct jobq_wait w;
        struct jobq_submit s = {.request = kind, .kind = kind, .client = addr, .wait = &w};
        unsigned pos;
        cr_assert_eq(jobq_submit(q, &s, sc.ids[i], &pos, NULL, err), 0);
        said[i] = w.expected_start_s + (timeutil_now_ms() - t0) / 1e3; /* from t0 */
    }
    pthread_t th;
    cr_assert_eq(pthread_create(&th, NULL, script_worker, &sc), 0);
    pthread_join(th, NULL);
    for (int i = 0; i < 12; i++) {
        double seen = (sc.started_ms[i] - t0) / 1e3;
        cr_expect(fabs(said[i] - seen) <= 0.1 + 0.1 * seen,
                  "job %d: expected to start after %.3f s, started after %.3f s", i, said[i], seen);
    }
}

/* Estimates are kept per kind and follow recent runs. */
Test(jobq, each_kind_has_its_own_moving_estimate) {
    q = jobq_create(8, 8, 60, err);
    set_limits(0, 0, 7.0);
    char id[JOBQ_ID_LEN];
    unsigned pos;
    struct jobq_wait w;
    cr_assert_eq(push_from(NULL, "a", id, &pos, &w), 0);
    cr_expect_float_eq(w.eta_s, 7.0, 1e-9, "no run of kind a yet: the default");
    pop_finish(NULL); /* finishes at once: kind a now about 0 s */
    cr_assert_eq(push_from(NULL, "a", id, &pos, NULL), 0);
    cr_assert_eq(push_from(NULL, "b", id, &pos, &w), 0);
    cr_expect(w.expected_start_s < 0.05, "one job of kind a ahead: %.3f s", w.expected_start_s);
    cr_expect(w.eta_s > 6.9 && w.eta_s < 7.05, "kind b has no run yet: %.3f s", w.eta_s);
}

/* A fresh server's full queue: sixteen readers' jobs of a kind that has
 * not run yet (2 s each by the default), the first just begun. A reader
 * refused is told when a place opens (the running job's 2 s), not when a
 * job it queued now would start (32 s at the default, for what a GPU does
 * in a second). An address at its share is told when its own oldest starts. */
Test(jobq, a_full_fresh_queue_says_when_a_place_opens) {
    q = jobq_create(16, 8, 60, err);
    set_limits(1, 0, 2.0);
    char id[JOBQ_ID_LEN], addr[32];
    unsigned pos;
    for (int i = 0; i < 17; i++) {
        snprintf(addr, sizeof addr, "10.0.3.%d", i + 1);
        cr_assert_eq(push_from(addr, "k", id, &pos, NULL), 0);
        if (i == 0) {
            struct job *j;
            cr_assert_eq(jobq_pop(q, 0, &j), 1); /* runs; the worker keeps it */
        }
    }
    struct jobq_wait w;
    cr_assert_eq(push_from("10.0.3.99", "k", id, &pos, &w), DV_EFULL);
    cr_expect_eq(w.full, JOBQ_FULL_JOBS);
    cr_expect_eq(w.retry_after_s, 2, "Retry-After %u s", w.retry_after_s);
    cr_assert_eq(push_from("10.0.3.5", "k", id, &pos, &w), DV_EFULL);
    cr_expect_eq(w.full, JOBQ_FULL_CLIENT, "its share is 1 and it has one waiting");
    cr_expect_eq(w.retry_after_s, 8, "three others' jobs of 2 s ahead of its own, the running one's 2 s: %u",
                 w.retry_after_s);
}

/* ---- batches -------------------------------------------------------------- */

/* A job of `client` with batch text "<key>\n<row>\nwarp-parity". */
static void push_batched(const char *client, const char *key, const char *row, char *id) {
    char batch[256];
    unsigned pos;
    snprintf(batch, sizeof batch, "%s\n%s\nwarp-parity", key, row);
    struct jobq_submit s = {.request = "{}", .deadline_ms = 1000, .client = client, .kind = "k", .batch = batch};
    cr_assert_eq(jobq_submit(q, &s, id, &pos, NULL, err), 0, "%s", err);
}

static int popped(struct job **jobs, unsigned n, const char *id) {
    for (unsigned i = 0; i < n; i++)
        if (strcmp(jobq_job_id(jobs[i]), id) == 0) return (int)i;
    return -1;
}

/* Five readers, four of one kind and grid: the next job and the three
 * that share its key are taken in the order they would have started, the
 * other stays first in line; each runs, and each is finished on its own. */
Test(jobq, a_batch_takes_the_jobs_of_one_key_in_the_fair_order) {
    q = jobq_create(64, 64, 60, err);
    char a1[JOBQ_ID_LEN], b1[JOBQ_ID_LEN], c1[JOBQ_ID_LEN], d1[JOBQ_ID_LEN], a2[JOBQ_ID_LEN];
    push_batched("10.0.0.1", "K1", "p1", a1);
    push_batched("10.0.0.2", "K2", "p9", b1);
    push_batched("10.0.0.3", "K1", "p2", c1);
    push_batched("10.0.0.4", "K1", "p3", d1);
    push_batched("10.0.0.1", "K1", "p4", a2);
    struct job *jobs[JOBQ_BATCH_MAX_JOBS];
    unsigned n = 0;
    cr_assert_eq(jobq_pop_batch(q, 0, 16, 16, jobs, &n), 1);
    cr_assert_eq(n, 4, "a1, c1, d1 and a2 share a key");
    cr_expect_str_eq(jobq_job_id(jobs[0]), a1);
    cr_expect_str_eq(jobq_job_id(jobs[1]), c1);
    cr_expect_str_eq(jobq_job_id(jobs[2]), d1);
    cr_expect_str_eq(jobq_job_id(jobs[3]), a2);
    struct job_view v;
    struct jobq_stats st;
    jobq_get_stats(q, &st);
    cr_expect_eq(st.running, 4);
    cr_expect_eq(st.depth, 1);
    cr_assert_eq(jobq_status(q, b1, &v), 0);
    cr_expect_eq(v.state, JOB_QUEUED);
    cr_expect_eq(v.position, 1, "the other key's job is next");
    for (unsigned i = 0; i < n; i++) {
        cr_expect_eq(jobq_job_batch_n(jobs[i]), 4);
        cr_assert_eq(jobq_status(q, jobq_job_id(jobs[i]), &v), 0);
        cr_expect_eq(v.state, JOB_RUNNING);
    }
    jobq_finish(q, jobs[2], 0, NULL, 0, DV_EGATE, "gate", "its row failed");
    for (unsigned i = 0; i < n; i++)
        if (i != 2) jobq_finish(q, jobs[i], 1, "{}", 1.0, 0, NULL, NULL);
    cr_assert_eq(jobq_status(q, d1, &v), 0);
    cr_expect_eq(v.state, JOB_FAILED, "one member failed alone");
    cr_assert_eq(jobq_status(q, c1, &v), 0);
    cr_expect_eq(v.state, JOB_DONE);
    free(v.document);
    jobq_get_stats(q, &st);
    cr_expect_eq(st.running, 0);
    cr_assert_eq(jobq_pop_batch(q, 0, 16, 16, jobs, &n), 1);
    cr_expect_eq(n, 1);
    cr_expect_str_eq(jobq_job_id(jobs[0]), b1);
    jobq_finish(q, jobs[0], 1, "{}", 1.0, 0, NULL, NULL);
}

/* The bounds: at most `max_rows` distinct rows (a row two readers share
 * counts once), and only jobs among the first `max_jobs` of the order. */
Test(jobq, a_batch_stops_at_its_rows_and_its_horizon) {
    q = jobq_create(64, 64, 60, err);
    char ids[20][JOBQ_ID_LEN];
    for (int i = 0; i < 20; i++) {
        char addr[32], row[16];
        snprintf(addr, sizeof addr, "10.0.1.%d", i + 1);
        snprintf(row, sizeof row, "p%d", i < 18 ? i : 0); /* the last two ask what the first asks */
        push_batched(addr, "K1", row, ids[i]);
    }
    struct job *jobs[JOBQ_BATCH_MAX_JOBS];
    unsigned n = 0;
    cr_assert_eq(jobq_pop_batch(q, 0, 16, 16, jobs, &n), 1);
    cr_expect_eq(n, 15, "fifteen predicates and the baseline are sixteen rows");
    for (unsigned i = 0; i < n; i++) jobq_finish(q, jobs[i], 1, "{}", 1.0, 0, NULL, NULL);
    cr_assert_eq(jobq_pop_batch(q, 0, 16, 16, jobs, &n), 1);
    cr_expect_eq(n, 5, "p15, p16, p17 and two more readers of p0");
    for (unsigned i = 0; i < n; i++) jobq_finish(q, jobs[i], 1, "{}", 1.0, 0, NULL, NULL);
    cr_assert_eq(jobq_pop_batch(q, 0, 16, 16, jobs, &n), 0, "nothing left");

    /* A job of the key fifth in line joins a batch of five, not of three. */
    char x[JOBQ_ID_LEN], y[JOBQ_ID_LEN], other[JOBQ_ID_LEN];
    push_batched("10.0.2.1", "K1", "p1", x);
    for (int i = 0; i < 3; i++) push_batched(i == 0 ? "10.0.2.2" : i == 1 ? "10.0.2.3" : "10.0.2.4", "K2", "p9", other);
    push_batched("10.0.2.5", "K1", "p2", y);
    cr_assert_eq(jobq_pop_batch(q, 0, 3, 16, jobs, &n), 1);
    cr_expect_eq(n, 1, "y is fifth: it would not have started within three");
    jobq_finish(q, jobs[0], 1, "{}", 1.0, 0, NULL, NULL);
    cr_assert_eq(jobq_pop_batch(q, 0, 16, 16, jobs, &n), 1);
    cr_expect_eq(n, 3, "the other key's three, one row between them and the baseline");
    for (unsigned i = 0; i < n; i++) jobq_finish(q, jobs[i], 1, "{}", 1.0, 0, NULL, NULL);
    cr_assert_eq(jobq_pop_batch(q, 0, 16, 16, jobs, &n), 1);
    cr_expect(n == 1 && strcmp(jobq_job_id(jobs[0]), y) == 0);
    jobq_finish(q, jobs[0], 1, "{}", 1.0, 0, NULL, NULL);
}

/* One address (a class behind one NAT address) with jobs of two keys: the
 * batch takes its jobs of the first key from the middle of its line, and
 * the jobs left keep their order and their line's end. jobq_pop() takes
 * one job, batch text or not. */
Test(jobq, a_batch_takes_from_the_middle_of_a_line_and_keeps_the_rest_in_order) {
    q = jobq_create(64, 64, 60, err);
    char a[JOBQ_ID_LEN], b[JOBQ_ID_LEN], c[JOBQ_ID_LEN], d[JOBQ_ID_LEN], e[JOBQ_ID_LEN];
    push_batched("10.0.0.1", "K1", "p1", a);
    push_batched("10.0.0.1", "K2", "p2", b);
    push_batched("10.0.0.1", "K1", "p3", c);
    struct job *jobs[JOBQ_BATCH_MAX_JOBS];
    unsigned n = 0;
    cr_assert_eq(jobq_pop_batch(q, 0, 16, 16, jobs, &n), 1);
    cr_assert_eq(n, 2);
    cr_expect(popped(jobs, n, a) == 0 && popped(jobs, n, c) == 1);
    for (unsigned i = 0; i < n; i++) jobq_finish(q, jobs[i], 1, "{}", 1.0, 0, NULL, NULL);
    push_batched("10.0.0.1", "K2", "p4", d); /* after b, at the line's end */
    push_batched("10.0.0.1", "K1", "p5", e);
    struct job_view v;
    cr_assert_eq(jobq_status(q, e, &v), 0);
    cr_expect_eq(v.position, 3);
    struct job *j;
    cr_assert_eq(jobq_pop(q, 0, &j), 1);
    cr_expect_str_eq(jobq_job_id(j), b, "jobq_pop takes one job");
    cr_expect_eq(jobq_job_batch_n(j), 1);
    jobq_finish(q, j, 1, "{}", 1.0, 0, NULL, NULL);
    cr_assert_eq(jobq_pop_batch(q, 0, 16, 16, jobs, &n), 1);
    cr_expect(n == 1 && strcmp(jobq_job_id(jobs[0]), d) == 0, "d, alone: e's key is another");
    jobq_finish(q, jobs[0], 1, "{}", 1.0, 0, NULL, NULL);
    cr_assert_eq(jobq_pop_batch(q, 0, 16, 16, jobs, &n), 1);
    cr_expect(n == 1 && strcmp(jobq_job_id(jobs[0]), e) == 0);
    jobq_finish(q, jobs[0], 1, "{}", 1.0, 0, NULL, NULL);
}

/* A batch of four that ran 200 ms teaches its kind 50 ms a job: the
 * drain estimate of a class is then the batches', not four times them.
 * While a fresh batch runs (its kind never ran), its eta is the default
 * once. */
Test(jobq, a_batch_member_counts_its_share_of_the_batchs_time) {
    q = jobq_create(64, 64, 60, err);
    set_limits(0, 0, 5.0);
    char ids[8][JOBQ_ID_LEN];
    for (int i = 0; i < 4; i++) {
        char addr[32], row[8];
        snprintf(addr, sizeof addr, "10.0.3.%d", i + 1);
        snprintf(row, sizeof row, "p%d", i);
        push_batched(addr, "K1", row, ids[i]);
    }
    struct job *jobs[JOBQ_BATCH_MAX_JOBS];
    unsigned n = 0;
    cr_assert_eq(jobq_pop_batch(q, 0, 16, 16, jobs, &n), 1);
    cr_assert_eq(n, 4);
    struct job_view v;
    cr_assert_eq(jobq_status(q, ids[0], &v), 0);
    cr_expect(v.eta_s > 4.5 && v.eta_s <= 5.0, "a fresh batch: its kind's default once, %.3f s", v.eta_s);
    usleep(200 * 1000);
    for (unsigned i = 0; i < n; i++) jobq_finish(q, jobs[i], 1, "{}", 1.0, 0, NULL, NULL);
    /* One runs now (its own kind's 50 ms), three wait. */
    for (int i = 4; i < 8; i++) push_batched("10.0.4.1", "K2", "p9", ids[i]);
    struct job *j;
    cr_assert_eq(jobq_pop(q, 0, &j), 1);
    cr_assert_eq(jobq_status(q, ids[7], &v), 0);
    cr_expect(v.expected_start_s > 0.1 && v.expected_start_s < 0.35,
              "three 50 ms jobs ahead of the last (one running): told %.3f s", v.expected_start_s);
    jobq_finish(q, j, 1, "{}", 1.0, 0, NULL, NULL);
}

/* A fresh server (no kind has run) with a class's batch of fifteen running
 * and its queue full: a refused reader is told when the batch is likely to
 * end, the default once (2 s), not fifteen defaults (30 s). */
Test(jobq, a_fresh_batch_counts_the_default_once) {
    q = jobq_create(16, 64, 60, err);
    set_limits(0, 0, 2.0);
    char id[JOBQ_ID_LEN];
    for (int i = 0; i < 15; i++) {
        char addr[32], row[8];
        snprintf(addr, sizeof addr, "10.0.9.%d", i + 1);
        snprintf(row, sizeof row, "p%d", i);
        push_batched(addr, "K1", row, id);
    }
    struct job *jobs[JOBQ_BATCH_MAX_JOBS];
    unsigned n = 0;
    cr_assert_eq(jobq_pop_batch(q, 0, 16, 16, jobs, &n), 1);
    cr_assert_eq(n, 15);
    for (int i = 0; i < 16; i++) push_batched("10.0.9.200", "K2", i % 2 ? "a" : "b", id);
    struct jobq_wait w;
    unsigned pos;
    struct jobq_submit s = {.request = "{}", .deadline_ms = 1000, .client = "10.0.9.201", .kind = "k", .wait = &w};
    cr_assert_eq(jobq_submit(q, &s, id, &pos, NULL, err), DV_EFULL);
    cr_expect_eq(w.retry_after_s, 2, "a fresh batch of fifteen is one default run away, not %u s", w.retry_after_s);
    struct job_view v;
    cr_assert_eq(jobq_status(q, jobq_job_id(jobs[0]), &v), 0);
    cr_expect(v.eta_s > 1.5 && v.eta_s <= 2.0, "the batch's eta %.3f s", v.eta_s);
    for (unsigned i = 0; i < n; i++) jobq_finish(q, jobs[i], 1, "{}", 1.0, 0, NULL, NULL);
}
