/* test_refresh.c -- the refresh registry against a stand-in job queue:
 * every suite queued, progress, the publication gates, failures filed
 * without replacing good evidence, a refresh refused whole when it cannot be
 * queued, the awkward orders of events, and the filing on the registry's
 * own thread (the reporter goes on while a record is written; a suite reads
 * "running" until its record is on disk; freeing the registry files what is
 * queued). */
#define _DEFAULT_SOURCE
#include <criterion/criterion.h>
#include <jansson.h>
#include <string.h>

#include "server/evidence/durable.h"
#include "server/evidence/evidence.h"
#include "tests/support/evidence_fixture.h"
#include "server/evidence/refresh.h"
#include "api/request.h"
#include "server/evidence/suites.h"
#include "tests/support/failing_alloc.h"

#define MAXQ 16

struct fakeq {
    int n;
    char rid[MAXQ][REFRESH_ID_LEN];
    size_t idx[MAXQ];
    char req[MAXQ][2048];
    int fail_index; /* suite index the queue refuses, -1 none */
    int fail_all;
    int fail_code;  /* what a refusal returns: -1, DV_EFULL or DV_ECLOSED */
    int room_code;  /* what the room callback answers (0: room)         */
    int answer_now; /* finish the job inside enqueue (a cached answer) */
    struct refresh *r;
};

static int fake_enqueue(void *ctx, const char *rid, size_t i, const struct dv_options *o, const char *request_json,
                        char *job_id, char *err) {
    struct fakeq *q = ctx;
    if (q->fail_all || (int)i == q->fail_index) {
        dv_seterr(err, "queue full (16 jobs)");
        return q->fail_code ? q->fail_code : -1;
    }
    cr_assert_lt(q->n, MAXQ);
    snprintf(q->rid[q->n], REFRESH_ID_LEN, "%s", rid);
    q->idx[q->n] = i;
    snprintf(q->req[q->n], sizeof q->req[0], "%s", request_json);
    snprintf(job_id, REFRESH_JOB_ID_LEN, "job-%d", q->n);
    q->n++;
    cr_assert_eq(o->part, suites_get(i)->part);
    if (q->answer_now) {
        refresh_job_started(q->r, rid, i);
        char *doc = fixture_document(i, 1.0, 0.001, 1, "NVIDIA H200");
        refresh_job_done(q->r, rid, i, 1, doc, NULL);
        free(doc);
    }
    return 0;
}

static int fake_room(void *ctx, size_t need, char *err) {
    struct fakeq *q = ctx;
    cr_assert_eq(need, suites_count());
    if (q->room_code) dv_seterr(err, "no room for %zu jobs", need);
    return q->room_code;
}

#define GPU "nvidia-h200"

static char *dir;
static struct evidence *ev;
static struct refresh *reg;
static struct fakeq q;

static void setup(void) {
    char err[ERR_LEN];
    dir = fixture_tmpdir();
    ev = evidence_open(dir, err);
    cr_assert_not_null(ev, "%s", err);
    memset(&q, 0, sizeof q);
    q.fail_index = -1;
    struct refresh_queue rq = {.enqueue = fake_enqueue, .ctx = &q, .room = fake_room};
    reg = refresh_create(ev, &rq, err);
    cr_assert_not_null(reg, "%s", err);
    q.r = reg;
}

static void teardown(void) {
    refresh_free(reg);
    evidence_close(ev);
    fixture_rmrf(dir);
    free(dir);
}

static json_t *status_of(const char *id) {
    int found = 0;
    char *s = refresh_status_json(reg, id, &found);
    cr_assert_not_null(s, "refresh %s %s", id, found ? "known, but its status was not built" : "unknown");
    json_error_t je;
    json_t *j = json_loads(s, JSON_REJECT_DUPLICATES, &je);
    cr_assert_not_null(j, "%s", je.text);
    free(s);
    return j;
}

static const char *suite_field(json_t *st, size_t i, const char *key) {
    return json_string_value(json_object_get(json_array_get(json_object_get(st, "suites"), i), key));
}

/* A job's end reported, and filed (the registry files on its own thread). */
static void done(const char *id, size_t i, int ok, const char *doc, const char *reason) {
    refresh_job_done(reg, id, i, ok, doc, reason);
    refresh_drain(reg);
}

static void finish(const char *id, size_t i, double noise, int check_ok) {
    refresh_job_started(reg, id, i);
    char *doc = fixture_document(i, 1.0, noise, check_ok, "NVIDIA H200");
    cr_assert_not_null(doc);
    done(id, i, 1, doc, NULL);
    free(doc);
}

static char *start(int *joined) {
    static char id[REFRESH_ID_LEN];
    char err[ERR_LEN] = "";
    int j = 0;
    cr_assert_eq(refresh_start(reg, GPU, "NVIDIA H200", id, joined ? joined : &j, err), 0, "%s", err);
    return id;
}

/* A store read as JSON: `want_ok` 1 for a blob, 0 for a "not found". */
static json_t *blob_json(int rc, struct blob *b, const struct evidence_error *e, int want_ok) {
    if (!want_ok) {
        cr_assert_eq(rc, -1, "expected nothing, got %.200s", b ? b->data : "");
        cr_expect_eq(e->code, EVIDENCE_ENOENT, "%s", e->reason);
        return NULL;
    }
    cr_assert_eq(rc, 0, "%s", e->reason);
    json_t *j = json_loadb(b->data, b->len, 0, NULL);
    cr_assert_not_null(j);
    blob_release(b);
    return j;
}

static json_t *latest(const char *suite, int want_ok) {
    struct blob *b;
    struct evidence_error e;
    int rc = evidence_get_latest(ev, NULL, GPU, suite, EVIDENCE_JSON, &b, &e);
    return blob_json(rc, b, &e, want_ok);
}

static json_t *night(const char *date, const char *suite) {
    struct blob *b;
    struct evidence_error e;
    int rc = evidence_get_night(ev, GPU, NULL, date, suite, EVIDENCE_JSON, &b, &e);
    return blob_json(rc, b, &e, 1);
}

static json_t *index_json(void) {
    struct blob *b;
    struct evidence_error e;
    int rc = evidence_get_index(ev, GPU, &b, &e);
    return blob_json(rc, b, &e, 1);
}

Test(refresh, queues_every_suite_and_files_each_result, .init = setup, .fini = teardown) {
    char *id = start(NULL);
    cr_assert_eq(id[0], 'r');
    cr_assert_eq((size_t)q.n, suites_count(), "every suite queued once");
    for (int k = 0; k < q.n; k++) {
        cr_expect_str_eq(q.rid[k], id);
        cr_expect_eq(q.idx[k], (size_t)k);
        struct dv_options o;
        struct request_error re;
        cr_expect_eq(request_parse(q.req[k], strlen(q.req[k]), &o, &re), 0, "%s", re.reason);
    }
    json_t *st = status_of(id);
    cr_expect_str_eq(json_string_value(json_object_get(st, "state")), "running");
    cr_expect_str_eq(suite_field(st, 0, "state"), "queued");
    cr_expect_str_eq(suite_field(st, 0, "job"), "job-0");
    json_decref(st);

    refresh_job_started(reg, id, 0);
    st = status_of(id);
    cr_expect_str_eq(suite_field(st, 0, "state"), "running");
    json_decref(st);

    size_t p1 = (size_t)suites_index("day22-part1"), p2 = (size_t)suites_index("day22-part2"),
           ex = (size_t)suites_index("day22-exercise");
    finish(id, p1, 0.001, 1);
    finish(id, p2, 0.001, 0);                   /* wrong answer on the GPU */
    finish(id, ex, 0.5, 1);                     /* 50% noise */
    for (size_t k = 0; k < suites_count(); k++) /* every other suite: a good night */
        if (k != p1 && k != p2 && k != ex) finish(id, k, 0.001, 1);

    st = status_of(id);
    cr_expect_str_eq(json_string_value(json_object_get(st, "state")), "done");
    cr_expect_eq(json_integer_value(json_object_get(st, "ok")), (json_int_t)suites_count() - 2);
    cr_expect_eq(json_integer_value(json_object_get(st, "failed")), 2);
    cr_expect_str_eq(suite_field(st, p1, "state"), "done");
    cr_expect_str_eq(suite_field(st, p2, "state"), "failed");
    cr_expect(strstr(suite_field(st, p2, "reason"), "correctness gate failed"), "%s", suite_field(st, p2, "reason"));
    cr_expect(strstr(suite_field(st, ex, "reason"), "interval over limit"), "%s", suite_field(st, ex, "reason"));
    char href[128];
    const char *date = json_string_value(json_object_get(st, "date"));
    cr_expect_str_eq(json_string_value(json_object_get(st, "gpu")), GPU);
    snprintf(href, sizeof href, "/evidence/" GPU "/%s/day22-part1.json", date);
    cr_expect_str_eq(suite_field(st, p1, "evidence"), href);

    json_t *rec = night(date, "day22-part1");
    cr_expect_str_eq(json_string_value(json_object_get(rec, "gpu")), GPU, "the record names its GPU");
    cr_expect_str_eq(json_string_value(json_object_get(rec, "status")), "ok");
    json_t *prov = json_object_get(rec, "provenance");
    cr_expect(json_is_object(json_object_get(prov, "request")));
    cr_expect(json_is_string(json_object_get(prov, "started_utc")));
    cr_expect(json_is_string(json_object_get(prov, "queued_utc")));
    json_decref(rec);
    rec = night(date, "day22-part2");
    cr_expect_str_eq(json_string_value(json_object_get(rec, "status")), "failed");
    cr_expect(strstr(json_string_value(json_object_get(rec, "reason")), "correctness gate"));
    cr_expect(json_is_object(json_object_get(rec, "document")), "the failed night's document is kept");
    json_decref(rec);
    json_decref(latest("day22-part2", 0));
    json_decref(st);
}

Test(refresh, a_second_post_joins_the_refresh_in_progress, .init = setup, .fini = teardown) {
    char first[REFRESH_ID_LEN];
    int joined = -1;
    strcpy(first, start(&joined));
    cr_expect_eq(joined, 0);
    char *again = start(&joined);
    cr_expect_eq(joined, 1);
    cr_expect_str_eq(again, first);
    cr_expect_eq((size_t)q.n, suites_count(), "nothing queued twice");
    for (size_t i = 0; i < suites_count(); i++) finish(first, i, 0.001, 1);
    char *next = start(&joined);
    cr_expect_eq(joined, 0);
    cr_expect_str_neq(next, first);
    json_t *st = status_of(first);
    cr_expect_str_eq(json_string_value(json_object_get(st, "state")), "done");
    json_decref(st);
}

Test(refresh, a_suite_the_queue_refuses_is_failed_at_once, .init = setup, .fini = teardown) {
    q.fail_index = 1;
    char *id = start(NULL);
    json_t *st = status_of(id);
    cr_expect_str_eq(suite_field(st, 1, "state"), "failed");
    cr_expect(strstr(suite_field(st, 1, "reason"), "not queued: queue full"), "%s", suite_field(st, 1, "reason"));
    cr_expect_str_eq(suite_field(st, 0, "state"), "queued");
    json_decref(st);
    json_t *idx = index_json();
    json_t *e = json_array_get(json_object_get(idx, "suites"), 1);
    cr_expect_str_eq(json_string_value(json_object_get(e, "status")), "failed", "the failure is on record");
    json_decref(idx);
}

/* Nothing of a refresh is kept or filed when it cannot be queued. */
static void expect_nothing_filed(void) {
    json_t *idx = index_json();
    for (size_t i = 0; i < suites_count(); i++) {
        json_t *e = json_array_get(json_object_get(idx, "suites"), i);
        cr_expect_str_eq(json_string_value(json_object_get(e, "status")), "none", "suite %zu was filed", i);
    }
    cr_expect_eq(json_array_size(json_object_get(idx, "gpus")), 0, "a GPU folder was made");
    json_decref(idx);
}

Test(refresh, a_full_queue_refuses_the_refresh_and_files_nothing, .init = setup, .fini = teardown) {
    char id[REFRESH_ID_LEN] = "", err[ERR_LEN] = "";
    int joined = 0;
    q.room_code = DV_EFULL;
    cr_expect_eq(refresh_start(reg, GPU, NULL, id, &joined, err), DV_EFULL);
    cr_expect(strstr(err, "no room for"), "%s", err);
    cr_expect_eq(q.n, 0, "a job was queued");
    /* The room looked fine, but the queue filled before the first job. */
    q.room_code = 0;
    q.fail_all = 1;
    q.fail_code = DV_EFULL;
    cr_expect_eq(refresh_start(reg, GPU, NULL, id, &joined, err), DV_EFULL);
    cr_expect_null(refresh_status_json(reg, id, NULL), "the refused refresh is still known");
    q.fail_code = DV_ECLOSED;
    cr_expect_eq(refresh_start(reg, GPU, NULL, id, &joined, err), DV_ECLOSED);
    cr_expect_null(refresh_status_json(reg, id, NULL));
    expect_nothing_filed();
    /* Once refusals stop, a refresh starts as usual (no slot left taken). */
    q.fail_all = 0;
    cr_expect_eq(refresh_start(reg, GPU, NULL, id, &joined, err), 0, "%s", err);
    cr_expect_eq(joined, 0);
}

Test(refresh, a_bad_gpu_slug_is_refused, .init = setup, .fini = teardown) {
    char id[REFRESH_ID_LEN], err[ERR_LEN] = "";
    int joined = 0;
    cr_expect_eq(refresh_start(reg, "../etc", NULL, id, &joined, err), -1);
    cr_expect(strstr(err, "gpu"), "%s", err);
    cr_expect_eq(refresh_start(reg, NULL, NULL, id, &joined, err), -1);
    cr_expect_eq(q.n, 0);
    expect_nothing_filed();
}

Test(refresh, a_job_answered_inside_enqueue_does_not_deadlock, .init = setup, .fini = teardown, .timeout = 10) {
    q.answer_now = 1;
    char *id = start(NULL);
    refresh_drain(reg);
    json_t *st = status_of(id);
    cr_expect_str_eq(json_string_value(json_object_get(st, "state")), "done");
    cr_expect_eq(json_integer_value(json_object_get(st, "ok")), (json_int_t)suites_count());
    cr_expect_str_eq(suite_field(st, 0, "job"), "job-0");
    json_decref(st);
}

Test(refresh, unknown_and_repeated_reports_are_ignored, .init = setup, .fini = teardown) {
    int found = 1;
    cr_expect_null(refresh_status_json(reg, "r0000000000000000", &found));
    cr_expect_eq(found, 0);
    found = 1;
    cr_expect_null(refresh_status_json(reg, NULL, &found));
    cr_expect_eq(found, 0);
    char *id = start(NULL);
    done("r0000000000000000", 0, 0, NULL, "nobody asked");
    done(id, 99, 0, NULL, "no such suite");
    finish(id, 0, 0.001, 1);
    done(id, 0, 0, NULL, "late duplicate");
    json_t *st = status_of(id);
    cr_expect_str_eq(suite_field(st, 0, "state"), "done", "the first report wins");
    json_decref(st);
    json_t *rec = latest("day22-part1", 1);
    cr_expect_str_eq(json_string_value(json_object_get(rec, "status")), "ok");
    json_decref(rec);
}

Test(refresh, a_failed_night_keeps_the_good_evidence, .init = setup, .fini = teardown) {
    char first[REFRESH_ID_LEN];
    strcpy(first, start(NULL));
    for (size_t i = 0; i < suites_count(); i++) finish(first, i, 0.001, 1);
    json_t *good = latest("day22-part1", 1);
    char *id = start(NULL);
    refresh_job_started(reg, id, 0);
    done(id, 0, 0, NULL, "worker: illegal memory access; worker restarted");
    for (size_t i = 1; i < suites_count(); i++) finish(id, i, 0.001, 1);
    json_t *still = latest("day22-part1", 1);
    cr_expect(json_equal(good, still), "the failure replaced the good evidence");
    json_t *idx = index_json();
    json_t *e = json_array_get(json_object_get(idx, "suites"), 0);
    cr_expect_str_eq(json_string_value(json_object_get(e, "status")), "failed");
    cr_expect(strstr(json_string_value(json_object_get(json_object_get(e, "last_attempt"), "reason")),
                     "illegal memory access"));
    json_decref(idx);
    json_decref(good);
    json_decref(still);
}

/* A night whose record is in place is published: the stamp that cannot be
 * written after it (a directory in its place, as a full disk would refuse
 * it) makes it "done" with a warning, not "failed" (the refresh client
 * exits 1 on a failed suite), and the record is served. */
Test(refresh, a_published_night_is_done_when_only_its_stamp_failed, .init = setup, .fini = teardown) {
    char first[REFRESH_ID_LEN], cmd[700];
    strcpy(first, start(NULL));
    finish(first, 0, 0.001, 1); /* the GPU's folder and its stamp exist */
    snprintf(cmd, sizeof cmd, "rm -f '%s/" GPU "/.stamp' && mkdir '%s/" GPU "/.stamp'", dir, dir);
    cr_assert_eq(system(cmd), 0);
    for (size_t i = 1; i < suites_count(); i++) finish(first, i, 0.001, 1);
    json_t *st = status_of(first);
    cr_expect_eq(json_integer_value(json_object_get(st, "failed")), 0);
    cr_expect_eq(json_integer_value(json_object_get(st, "ok")), (json_int_t)suites_count());
    cr_expect_str_eq(suite_field(st, 1, "state"), "done");
    cr_expect_null(suite_field(st, 1, "reason"));
    const char *w = suite_field(st, 1, "warning");
    cr_expect(w && strstr(w, "stamp"), "the stamp's failure is said: %s", w ? w : "(no warning)");
    cr_expect_null(suite_field(st, 0, "warning"), "the night before it had nothing to warn of");
    json_decref(st);
    json_decref(latest(suites_get(1)->name, 1));
}

Test(refresh, gate_names_the_row_and_the_rule) {
    char why[ERR_LEN] = "";
    char *doc = fixture_document(0, 1.0, 0.001, 1, "T4");
    cr_expect_eq(refresh_gate(0, doc, why), 0, "%s", why);
    free(doc);
    doc = fixture_document(0, 1.0, 0.001, 0, "T4");
    cr_expect_eq(refresh_gate(0, doc, why), -1);
    cr_expect(strstr(why, "row lane-parity") && strstr(why, "3 of 1048576"), "%s", why);
    free(doc);
    doc = fixture_document(0, 1.0, suites_get(0)->noise_limit * 1.5, 1, "T4");
    cr_expect_eq(refresh_gate(0, doc, why), -1);
    cr_expect(strstr(why, "interval over limit"), "%s", why);
    free(doc);
    cr_expect_eq(refresh_gate(0, "{}", why), -1);
    /* Single launches spread 5% (two clusters, late launches) while each
     * ratio is known to 0.2%: a good night, published. */
    struct dv_report *r = fixture_report(0, 1.0, 0.05, 0.002, 1, "T4");
    cr_assert_not_null(r);
    doc = report_json(r, 0);
    cr_expect_eq(refresh_gate(0, doc, why), 0, "%s", why);
    free(doc);
    /* A document from before the intervals is judged by its spread. */
    for (unsigned i = 0; i < r->tables[0].nrows; i++) {
        r->tables[0].rows[i].ratio_ci = (struct dv_ci){NAN, NAN};
        r->tables[0].rows[i].ratio_halfwidth = NAN;
    }
    doc = report_json(r, 0);
    cr_expect_eq(refresh_gate(0, doc, why), -1);
    cr_expect(strstr(why, "noise over limit"), "%s", why);
    free(doc);
    experiment_report_free(r);
    cr_expect_eq(refresh_gate(0, NULL, why), -1);
    cr_expect_eq(refresh_gate(99, "{}", why), -1);
}

/* GET /evidence/refresh/{id}'s body with the k-th allocation failing: NULL
 * (and the refresh still known, so the route answers 500, not 404) or the
 * very text a normal build gives. */
static char *status_text(void *id) {
    int found = 0;
    char *s = refresh_status_json(reg, id, &found);
    cr_assert_eq(found, 1, "the refresh was reported unknown");
    return s;
}

Test(refresh, status_is_whole_or_absent_under_failing_allocations, .init = setup, .fini = teardown) {
    char *id = start(NULL);
    finish(id, 0, 0.001, 1);
    refresh_job_started(reg, id, 1);
    done(id, 1, 0, NULL, "worker: the GPU \xff fell off the bus");
    refresh_job_started(reg, id, 2);
    char *want = status_text(id);
    cr_assert_not_null(want);
    cr_assert(strstr(want, "the GPU ? fell off the bus"), "the reason is missing: %s", want);
    unsigned failed = failing_alloc_each(&(struct failing_case){.build = status_text, .ctx = id, .want = want});
    cr_assert_geq(failed, 20, "only %u builds met a failure", failed);
    free(want);
}

/* The store's lock on GPU folder GPU, as another replica's write holds it:
 * a filing waits for it. Returns the descriptor to release. */
static int hold_gpu_lock(void) {
    char gdir[4096], err[ERR_LEN];
    snprintf(gdir, sizeof gdir, "%s/%s", dir, GPU);
    cr_assert_eq(durable_mkdir(gdir, err), 0, "%s", err);
    int fd = durable_lock(gdir, err);
    cr_assert_geq(fd, 0, "%s", err);
    return fd;
}

/* The end of suite `i` reported while its record cannot be written yet: the
 * report returns at once (a report that wrote the record itself would wait
 * on the lock for ever: the test's timeout), the suite reads "running", and
 * once the lock is let go the record is filed and the suite reads "done". */
Test(refresh, a_result_is_filed_off_the_reporting_thread, .init = setup, .fini = teardown, .timeout = 20) {
    char *id = start(NULL);
    int fd = hold_gpu_lock();
    refresh_job_started(reg, id, 0);
    char *doc = fixture_document(0, 1.0, 0.001, 1, "NVIDIA H200");
    cr_assert_not_null(doc);
    refresh_job_done(reg, id, 0, 1, doc, NULL);
    free(doc); /* the registry keeps its own copy */
    json_t *st = status_of(id);
    cr_expect_str_eq(suite_field(st, 0, "state"), "running", "done before its record could be written");
    cr_expect_null(json_object_get(json_array_get(json_object_get(st, "suites"), 0), "evidence"));
    json_decref(st);
    durable_unlock(fd);
    refresh_drain(reg);
    st = status_of(id);
    cr_expect_str_eq(suite_field(st, 0, "state"), "done");
    const char *href = suite_field(st, 0, "evidence");
    cr_expect(href && strncmp(href, "/evidence/" GPU "/", strlen("/evidence/" GPU "/")) == 0, "%s", href);
    json_decref(st);
    json_t *rec = latest("day22-part1", 1);
    cr_expect_str_eq(json_string_value(json_object_get(rec, "status")), "ok");
    json_decref(rec);
}

/* Every suite's end reported while the records wait on the lock, then the
 * registry freed (the server's shutdown): each is filed, in the order the
 * jobs ended, before refresh_free() returns. */
Test(refresh, freeing_the_registry_files_what_is_queued, .init = setup, .fini = teardown, .timeout = 20) {
    char *id = start(NULL);
    int fd = hold_gpu_lock();
    for (size_t i = 0; i < suites_count(); i++) {
        refresh_job_started(reg, id, i);
        char *doc = fixture_document(i, 1.0, 0.001, 1, "NVIDIA H200");
        cr_assert_not_null(doc);
        refresh_job_done(reg, id, i, 1, doc, NULL);
        free(doc);
    }
    json_t *st = status_of(id);
    for (size_t i = 0; i < suites_count(); i++)
        cr_expect_str_eq(suite_field(st, i, "state"), "running", "suite %zu read done before it was filed", i);
    json_decref(st);
    durable_unlock(fd);
    refresh_free(reg);
    reg = NULL;
    for (size_t i = 0; i < suites_count(); i++) {
        json_t *rec = latest(suites_get(i)->name, 1);
        cr_expect_str_eq(json_string_value(json_object_get(rec, "status")), "ok", "suite %zu", i);
        json_decref(rec);
    }
}
