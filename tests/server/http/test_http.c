/* test_http.c -- the real `divergence serve` over real HTTP on a loopback
 * ephemeral port, with tests/fake_worker standing in for the GPU worker
 * (its behaviour per job is chosen by the request's iterations: see
 * fake_worker.c). Every route and every error path of the service. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/support/helper_http.h"

static struct helper_server srv;

/* Starts a server with `args` and waits until /readyz answers `ready`. */
static void start(const char *const *args, const char *const *env, int ready) {
    cr_assert_eq(helper_server_start(&srv, args, env), 0, "the server did not start");
    cr_assert_eq(helper_server_wait_ready(&srv, ready, 10000), 0, "/readyz never answered %d", ready);
}

static void stop(void) {
    if (srv.pid > 0) helper_server_stop(&srv, 10000);
    unlink(srv.log);
}

/* Request helpers: body parsed as JSON into *j (may be NULL). */
static int req(const char *method, const char *path, const char *headers, const char *body,
               struct helper_response *r, json_t **j) {
    cr_assert_eq(helper_request(srv.port, method, path, headers, body, body ? strlen(body) : 0, r), 0,
                 "%s %s: no response", method, path);
    if (j) *j = helper_json(r);
    return r->status;
}

static const char *err_field(json_t *j) {
    return json_string_value(json_object_get(json_object_get(j, "error"), "field"));
}
static const char *err_reason(json_t *j) {
    const char *s = json_string_value(json_object_get(json_object_get(j, "error"), "reason"));
    return s ? s : "";
}

/* POSTs /measure and expects 202; returns the job id (static buffer). */
static const char *submit(const char *body) {
    static char id[64];
    struct helper_response r;
    json_t *j;
    int st = req("POST", "/measure", NULL, body, &r, &j);
    cr_assert_eq(st, 202, "POST /measure %s: %d %s", body, st, r.body);
    char loc[128];
    cr_assert_not_null(helper_header(&r, "Location", loc, sizeof loc));
    snprintf(id, sizeof id, "%s", json_string_value(json_object_get(j, "id")));
    char want[128];
    snprintf(want, sizeof want, "/jobs/%s", id);
    cr_assert_str_eq(loc, want);
    cr_assert_eq(strlen(id), 32);
    json_decref(j);
    helper_response_free(&r);
    return id;
}

static json_t *wait_job(const char *id) {
    json_t *j = helper_wait_job(srv.port, id, 15000);
    cr_assert_not_null(j, "job %s never finished", id);
    return j;
}

static const char *state_of(json_t *j) { return json_string_value(json_object_get(j, "state")); }

static char *metrics(void) {
    struct helper_response r;
    cr_assert_eq(req("GET", "/metrics", NULL, NULL, &r, NULL), 200);
    char *s = strdup(r.body);
    helper_response_free(&r);
    return s;
}

/* Waits until job `id` is running. */
static void wait_running(const char *id) {
    char path[128];
    snprintf(path, sizeof path, "/jobs/%s", id);
    for (int i = 0; i < 400; i++) {
        struct helper_response r;
        json_t *j;
        req("GET", path, NULL, NULL, &r, &j);
        int running = state_of(j) && strcmp(state_of(j), "running") == 0;
        json_decref(j);
        helper_response_free(&r);
        if (running) return;
        helper_sleep_ms(10);
    }
    cr_assert_fail("job %s never started", id);
}

static const char *const NOLIMIT[] = {"--rate-limit", "0", NULL};

TestSuite(http, .fini = stop, .timeout = 60);

Test(http, healthz_metrics_and_device) {
    start(NOLIMIT, NULL, 200);
    struct helper_response r;
    json_t *j;
    cr_assert_eq(req("GET", "/healthz", NULL, NULL, &r, &j), 200);
    cr_assert_str_eq(json_string_value(json_object_get(j, "status")), "ok");
    char ct[128];
    cr_assert_str_eq(helper_header(&r, "Content-Type", ct, sizeof ct), "application/json");
    json_decref(j);
    helper_response_free(&r);

    cr_assert_eq(req("GET", "/device", NULL, NULL, &r, &j), 200);
    json_t *d = json_object_get(j, "device");
    cr_assert(json_is_true(json_object_get(d, "present")));
    cr_assert_str_eq(json_string_value(json_object_get(d, "name")), "Fake GPU");
    cr_assert_str_eq(json_string_value(json_object_get(json_object_get(j, "worker"), "state")), "ready");
    json_decref(j);
    helper_response_free(&r);

    char *m = metrics();
    cr_assert(strstr(m, "dv_jobs_total{outcome=\"done\"} 0\n"), "%s", m);
    cr_assert(strstr(m, "dv_queue_depth 0\n"));
    cr_assert(strstr(m, "dv_worker_restarts_total 0\n"));
    cr_assert(strstr(m, "dv_gpu_busy_seconds_total "));
    cr_assert(strstr(m, "dv_http_requests_total{route=\"/healthz\",status=\"200\",status_class=\"2xx\"} 1\n"), "%s", m);
    cr_assert(strstr(m, "dv_http_requests_total{route=\"/readyz\",status=\"200\",status_class=\"2xx\"}"), "%s", m);
    free(m);
    cr_assert_eq(helper_server_stop(&srv, 5000), 0);
}

Test(http, no_gpu_still_serves_analysis) {
    const char *env[] = {"FAKE_WORKER_NO_GPU=1", NULL};
    start(NOLIMIT, env, 503);
    struct helper_response r;
    json_t *j;
    int said = 0; /* 503 "starting" first, then 503 with CUDA's reason */
    for (int i = 0; i < 500 && !said; i++) {
        cr_assert_eq(req("GET", "/readyz", NULL, NULL, &r, &j), 503);
        said = strstr(err_reason(j), "FAKE_WORKER_NO_GPU") != NULL;
        json_decref(j);
        helper_response_free(&r);
        if (!said) helper_sleep_ms(10);
    }
    cr_assert(said, "/readyz never gave the no-GPU reason");
    cr_assert_eq(req("POST", "/measure", NULL, "{}", &r, &j), 503);
    cr_assert(strstr(err_reason(j), "no CUDA device"), "%s", r.body);
    json_decref(j);
    helper_response_free(&r);
    cr_assert_eq(req("POST", "/analyze", NULL, "{\"part\":1}", &r, &j), 200, "%s", r.body);
    cr_assert_str_eq(json_string_value(json_object_get(j, "schema")), "divergence.v1");
    json_decref(j);
    helper_response_free(&r);
    cr_assert_eq(req("GET", "/healthz", NULL, NULL, &r, NULL), 200);
    helper_response_free(&r);
    cr_assert_eq(req("GET", "/device", NULL, NULL, &r, &j), 200);
    cr_assert(json_is_false(json_object_get(json_object_get(j, "device"), "present")));
    json_decref(j);
    helper_response_free(&r);
}

static void expect_400(const char *body, const char *field) {
    struct helper_response r;
    json_t *j;
    int st = req("POST", "/measure", NULL, body, &r, &j);
    cr_assert_eq(st, 400, "%s -> %d %s", body, st, r.body);
    cr_assert_not_null(j, "error body is not JSON: %s", r.body);
    if (field) cr_assert_str_eq(err_field(j) ? err_field(j) : "(null)", field, "%s -> %s", body, r.body);
    cr_assert(err_reason(j)[0], "no reason: %s", r.body);
    json_decref(j);
    helper_response_free(&r);
}

Test(http, measure_rejects_bad_requests) {
    start(NOLIMIT, NULL, 200);
    expect_400("{\"part\": 1,,}", NULL);
    expect_400("{\"bogus\": 1}", "bogus");
    expect_400("{\"blocks\": \"many\"}", "blocks");
    expect_400("{\"threads_per_block\": 4096}", "threads_per_block");
    expect_400("{\"iterations\": 0}", "iterations");
    expect_400("{\"part\": 1, \"part\": 2}", NULL);
    expect_400("[1, 2]", NULL);
    /* JSON syntax errors carry the position. */
    struct helper_response r;
    json_t *j;
    cr_assert_eq(req("POST", "/measure", NULL, "{\n  \"part\": 1,\n  oops\n}", &r, &j), 400);
    json_t *e = json_object_get(j, "error");
    cr_assert_eq(json_integer_value(json_object_get(e, "line")), 3, "%s", r.body);
    cr_assert_gt(json_integer_value(json_object_get(e, "column")), 0);
    json_decref(j);
    helper_response_free(&r);
    /* An expression error names the predicate column and draws a caret. */
    cr_assert_eq(req("POST", "/measure", NULL, "{\"predicates\": [\"threadIdx.x < )\"]}", &r, &j), 400);
    e = json_object_get(j, "error");
    cr_assert_str_eq(err_field(j), "predicates[0]", "%s", r.body);
    cr_assert_eq(json_integer_value(json_object_get(e, "expr_column")), 15, "%s", r.body);
    cr_assert(strchr(json_string_value(json_object_get(e, "caret")) ?: "", '^'), "%s", r.body);
    json_decref(j);
    helper_response_free(&r);
    /* /analyze applies the same validation. */
    cr_assert_eq(req("POST", "/analyze", NULL, "{\"bogus\": 1}", &r, &j), 400);
    cr_assert_str_eq(err_field(j), "bogus");
    json_decref(j);
    helper_response_free(&r);
}

Test(http, body_over_limit_is_413) {
    start(NOLIMIT, NULL, 200);
    size_t n = 70 * 1024;
    char *big = malloc(n + 1);
    memset(big, ' ', n);
    big[0] = '{';
    big[n - 1] = '}';
    big[n] = '\0';
    struct helper_response r;
    json_t *j;
    cr_assert_eq(req("POST", "/measure", NULL, big, &r, &j), 413, "%d %s", r.status, r.body);
    cr_assert(strstr(err_reason(j), "65536"), "%s", r.body);
    json_decref(j);
    helper_response_free(&r);
    /* Without a Content-Length (chunked), the limit applies as it arrives. */
    size_t cap = n + 256;
    char *raw = malloc(cap);
    int h = snprintf(raw, cap, "POST /analyze HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                               "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n%zx\r\n", n);
    memcpy(raw + h, big, n);
    memcpy(raw + h + n, "\r\n0\r\n\r\n", 7);
    cr_assert_eq(helper_raw(srv.port, raw, (size_t)h + n + 7, &r), 0);
    cr_assert_eq(r.status, 413, "%d %s", r.status, r.body);
    helper_response_free(&r);
    free(raw);
    free(big);
}

Test(http, cost_over_limit_is_400) {
    start(NOLIMIT, NULL, 200);
    struct helper_response r;
    json_t *j;
    cr_assert_eq(req("POST", "/measure", NULL,
                     "{\"blocks\": 1048576, \"threads_per_block\": 1024, \"iterations\": 1048576, \"budget_ms\": 100}",
                     &r, &j), 400, "%s", r.body);
    cr_assert(strstr(err_reason(j), "estimated GPU cost"), "%s", r.body);
    cr_assert(strstr(err_reason(j), "exceeds the per-job limit"), "%s", r.body);
    json_decref(j);
    helper_response_free(&r);
    /* A budget that cannot fit the deadline is refused too. */
    cr_assert_eq(req("POST", "/measure", NULL, "{\"budget_ms\": 60000}", &r, &j), 400, "%s", r.body);
    cr_assert_str_eq(err_field(j), "budget_ms");
    json_decref(j);
    helper_response_free(&r);
}

Test(http, measure_queues_then_done_then_cached) {
    start(NOLIMIT, NULL, 200);
    const char *body = "{\"part\": 1, \"iterations\": 64, \"budget_ms\": 100}";
    char id[64];
    snprintf(id, sizeof id, "%s", submit(body));
    json_t *j = wait_job(id);
    cr_assert_str_eq(state_of(j), "done", "%s", json_dumps(j, 0));
    json_t *doc = json_object_get(j, "document");
    cr_assert_str_eq(json_string_value(json_object_get(doc, "schema")), "divergence.v1");
    char *warnings = json_dumps(json_object_get(doc, "warnings"), 0);
    cr_assert(warnings && strstr(warnings, "fake worker"), "%s", warnings ? warnings : "(no warnings)");
    free(warnings);
    cr_assert(json_is_number(json_object_get(j, "gpu_time_ms")));
    cr_assert_gt(json_number_value(json_object_get(j, "gpu_time_ms")), 0);
    json_decref(j);
    /* The same request again is answered from the cache with its age. */
    struct helper_response r;
    cr_assert_eq(req("POST", "/measure", NULL, body, &r, &j), 200, "%s", r.body);
    cr_assert(json_is_true(json_object_get(j, "cached")));
    cr_assert_str_eq(json_string_value(json_object_get(j, "state")), "done");
    cr_assert_str_eq(json_string_value(json_object_get(j, "id")), id);
    /* json_number_value() of a missing member is 0: check it is there. */
    cr_assert(json_is_number(json_object_get(j, "age_s")), "%s", r.body);
    cr_assert_geq(json_number_value(json_object_get(j, "age_s")), 0);
    cr_assert_lt(json_number_value(json_object_get(j, "age_s")), 60);
    cr_assert(json_is_object(json_object_get(j, "document")));
    json_decref(j);
    helper_response_free(&r);
    char *m = metrics();
    cr_assert(strstr(m, "dv_jobs_total{outcome=\"done\"} 1\n"), "%s", m);
    cr_assert(strstr(m, "dv_jobs_total{outcome=\"cached\"} 1\n"), "%s", m);
    cr_assert(strstr(m, "dv_http_requests_total{route=\"/measure\",status=\"202\",status_class=\"2xx\"} 1\n"), "%s", m);
    free(m);
}

Test(http, identical_running_request_joins) {
    start(NOLIMIT, NULL, 200);
    const char *body = "{\"part\": 1, \"iterations\": 3333, \"budget_ms\": 100}";
    char id[64];
    snprintf(id, sizeof id, "%s", submit(body));
    struct helper_response r;
    json_t *j;
    cr_assert_eq(req("POST", "/measure", NULL, body, &r, &j), 202);
    cr_assert_str_eq(json_string_value(json_object_get(j, "id")), id);
    cr_assert(json_is_true(json_object_get(j, "joined")));
    json_decref(j);
    helper_response_free(&r);
    j = wait_job(id);
    cr_assert_str_eq(state_of(j), "done");
    json_decref(j);
}

Test(http, unknown_job_is_404) {
    start(NOLIMIT, NULL, 200);
    struct helper_response r;
    json_t *j;
    cr_assert_eq(req("GET", "/jobs/00000000000000000000000000000000", NULL, NULL, &r, &j), 404);
    cr_assert_str_eq(err_field(j), "id");
    json_decref(j);
    helper_response_free(&r);
    cr_assert_eq(req("GET", "/jobs/../healthz", NULL, NULL, &r, NULL), 404);
    helper_response_free(&r);
}

/* A path whose bytes are not UTF-8 once unescaped is still an unknown path
 * or job, named in the reason with '?' for each such byte: the error
 * document is built, not swapped for a 500 "out of memory". */
Test(http, paths_that_are_not_utf8_get_their_own_answer) {
    start(NOLIMIT, NULL, 200);
    struct helper_response r;
    json_t *j;
    cr_assert_eq(req("GET", "/jobs/%FF", NULL, NULL, &r, &j), 404);
    cr_assert_str_eq(err_field(j), "id");
    cr_assert(strstr(err_reason(j), "no job ?"), "%s", err_reason(j));
    json_decref(j);
    helper_response_free(&r);
    cr_assert_eq(req("GET", "/nope%C3%28", NULL, NULL, &r, &j), 404);
    cr_assert(strstr(err_reason(j), "/nope?("), "%s", err_reason(j));
    json_decref(j);
    helper_response_free(&r);
    cr_assert_eq(req("GET", "/evidence/refresh/%FF%FE", NULL, NULL, &r, &j), 404);
    cr_assert(strstr(err_reason(j), "no refresh ??"), "%s", err_reason(j));
    json_decref(j);
    helper_response_free(&r);
}

Test(http, finished_jobs_are_forgotten_past_the_bound) {
    const char *args[] = {"--rate-limit", "0", "--keep-jobs", "1", NULL};
    start(args, NULL, 200);
    char first[64];
    snprintf(first, sizeof first, "%s", submit("{\"part\": 1, \"iterations\": 61, \"budget_ms\": 100}"));
    json_decref(wait_job(first));
    const char *second = submit("{\"part\": 1, \"iterations\": 62, \"budget_ms\": 100}");
    json_decref(wait_job(second));
    char path[128];
    snprintf(path, sizeof path, "/jobs/%s", first);
    struct helper_response r;
    cr_assert_eq(req("GET", path, NULL, NULL, &r, NULL), 404);
    helper_response_free(&r);
}

Test(http, queue_full_is_429_with_retry_after) {
    const char *args[] = {"--rate-limit", "0", "--queue", "1", "--job-deadline-ms", "4000", NULL};
    start(args, NULL, 200);
    char hung[64];
    snprintf(hung, sizeof hung, "%s", submit("{\"part\": 1, \"iterations\": 1111, \"budget_ms\": 100}"));
    wait_running(hung);
    char queued[64];
    snprintf(queued, sizeof queued, "%s", submit("{\"part\": 1, \"iterations\": 70, \"budget_ms\": 100}"));
    struct helper_response r;
    json_t *j;
    cr_assert_eq(req("GET", "/jobs/", NULL, NULL, &r, NULL), 404);
    helper_response_free(&r);
    char path[128];
    snprintf(path, sizeof path, "/jobs/%s", queued);
    cr_assert_eq(req("GET", path, NULL, NULL, &r, &j), 200);
    cr_assert_str_eq(state_of(j), "queued");
    cr_assert_eq(json_integer_value(json_object_get(j, "position")), 1);
    json_decref(j);
    helper_response_free(&r);
    cr_assert_eq(req("POST", "/measure", NULL, "{\"part\": 1, \"iterations\": 71, \"budget_ms\": 100}", &r, &j), 429,
                 "%s", r.body);
    char ra[32];
    cr_assert_not_null(helper_header(&r, "Retry-After", ra, sizeof ra));
    cr_assert_gt(atoi(ra), 0);
    cr_assert(strstr(err_reason(j), "queue is full"), "%s", r.body);
    json_decref(j);
    helper_response_free(&r);
    char *m = metrics();
    cr_assert(strstr(m, "dv_queue_depth 1\n"), "%s", m);
    cr_assert(strstr(m, "dv_jobs_total{outcome=\"rejected\"} 1\n"), "%s", m);
    free(m);
}

Test(http, rate_limit_is_429_and_gets_stay_open) {
    const char *args[] = {"--rate-limit", "2", NULL};
    start(args, NULL, 200);
    struct helper_response r;
    json_t *j;
    cr_assert_eq(req("POST", "/measure", NULL, "{\"bogus\": 1}", &r, NULL), 400);
    helper_response_free(&r);
    cr_assert_eq(req("POST", "/measure", NULL, "{\"bogus\": 1}", &r, NULL), 400);
    helper_response_free(&r);
    cr_assert_eq(req("POST", "/measure", NULL, "{}", &r, &j), 429, "%s", r.body);
    char ra[32];
    cr_assert_not_null(helper_header(&r, "Retry-After", ra, sizeof ra));
    cr_assert_geq(atoi(ra), 1);
    cr_assert(strstr(err_reason(j), "rate limit"));
    json_decref(j);
    helper_response_free(&r);
    cr_assert_eq(req("GET", "/healthz", NULL, NULL, &r, NULL), 200);
    helper_response_free(&r);
    cr_assert_eq(req("POST", "/analyze", NULL, "{\"part\": 1}", &r, NULL), 200);
    helper_response_free(&r);
}

Test(http, deadline_kills_the_worker_and_the_next_job_runs) {
    const char *args[] = {"--rate-limit", "0", "--job-deadline-ms", "500", NULL};
    start(args, NULL, 200);
    char id[64];
    snprintf(id, sizeof id, "%s", submit("{\"part\": 1, \"iterations\": 1111, \"budget_ms\": 100}"));
    json_t *j = wait_job(id);
    cr_assert_str_eq(state_of(j), "failed");
    json_t *e = json_object_get(j, "error");
    cr_assert_str_eq(json_string_value(json_object_get(e, "kind")), "deadline");
    cr_assert_str_eq(json_string_value(json_object_get(e, "reason")),
                     "deadline exceeded: no result after 0.5 s; the worker was restarted");
    json_decref(j);
    snprintf(id, sizeof id, "%s", submit("{\"part\": 1, \"iterations\": 80, \"budget_ms\": 100}"));
    j = wait_job(id);
    cr_assert_str_eq(state_of(j), "done", "%s", json_dumps(j, 0));
    json_decref(j);
    char *m = metrics();
    cr_assert(strstr(m, "dv_worker_restarts_total 1\n"), "%s", m);
    cr_assert(strstr(m, "dv_jobs_total{outcome=\"failed\"} 1\n"), "%s", m);
    cr_assert(strstr(m, "dv_jobs_total{outcome=\"done\"} 1\n"), "%s", m);
    free(m);
}

Test(http, crash_fails_the_job_and_restarts) {
    start(NOLIMIT, NULL, 200);
    char id[64];
    snprintf(id, sizeof id, "%s", submit("{\"part\": 1, \"iterations\": 2222, \"budget_ms\": 100}"));
    json_t *j = wait_job(id);
    cr_assert_str_eq(state_of(j), "failed");
    json_t *e = json_object_get(j, "error");
    cr_assert_str_eq(json_string_value(json_object_get(e, "kind")), "crash");
    cr_assert(strstr(json_string_value(json_object_get(e, "reason")), "signal 6"), "%s", json_dumps(e, 0));
    json_decref(j);
    snprintf(id, sizeof id, "%s", submit("{\"part\": 1, \"iterations\": 81, \"budget_ms\": 100}"));
    j = wait_job(id);
    cr_assert_str_eq(state_of(j), "done");
    json_decref(j);
    char *m = metrics();
    cr_assert(strstr(m, "dv_worker_restarts_total 1\n"), "%s", m);
    free(m);
}

Test(http, sticky_error_restarts_the_worker) {
    start(NOLIMIT, NULL, 200);
    struct helper_response r;
    json_t *j;
    req("GET", "/device", NULL, NULL, &r, &j);
    json_int_t pid0 = json_integer_value(json_object_get(json_object_get(j, "worker"), "pid"));
    cr_assert_gt(pid0, 0, "no worker pid in /device: the restart check below would be vacuous");
    json_decref(j);
    helper_response_free(&r);
    char id[64];
    snprintf(id, sizeof id, "%s", submit("{\"part\": 1, \"iterations\": 4444, \"budget_ms\": 100}"));
    j = wait_job(id);
    cr_assert_str_eq(state_of(j), "failed");
    json_t *e = json_object_get(j, "error");
    cr_assert_str_eq(json_string_value(json_object_get(e, "kind")), "sticky");
    cr_assert_eq(json_integer_value(json_object_get(e, "code")), -3);
    cr_assert(strstr(json_string_value(json_object_get(e, "reason")), "illegal memory access"));
    json_decref(j);
    snprintf(id, sizeof id, "%s", submit("{\"part\": 1, \"iterations\": 82, \"budget_ms\": 100}"));
    j = wait_job(id);
    cr_assert_str_eq(state_of(j), "done");
    json_decref(j);
    req("GET", "/device", NULL, NULL, &r, &j);
    json_t *w = json_object_get(j, "worker");
    cr_assert_neq(json_integer_value(json_object_get(w, "pid")), pid0);
    cr_assert_eq(json_integer_value(json_object_get(w, "restarts")), 1);
    json_decref(j);
    helper_response_free(&r);
}

Test(http, failed_gate_keeps_the_document) {
    start(NOLIMIT, NULL, 200);
    const char *id = submit("{\"part\": 1, \"iterations\": 5555, \"budget_ms\": 100}");
    json_t *j = wait_job(id);
    cr_assert_str_eq(state_of(j), "failed");
    cr_assert_str_eq(json_string_value(json_object_get(json_object_get(j, "error"), "kind")), "gate");
    cr_assert(json_is_object(json_object_get(j, "document")));
    json_decref(j);
}

Test(http, bearer_token_guards_measure_only) {
    const char *args[] = {"--rate-limit", "0", "--token", "s3cret-token", "--open-measure-cost", "0", NULL};
    start(args, NULL, 200);
    struct helper_response r;
    json_t *j;
    const char *body = "{\"part\": 1, \"iterations\": 90, \"budget_ms\": 100}";
    cr_assert_eq(req("POST", "/measure", NULL, body, &r, &j), 401);
    char wa[128];
    cr_assert_not_null(helper_header(&r, "WWW-Authenticate", wa, sizeof wa));
    cr_assert_str_eq(err_field(j), "Authorization");
    json_decref(j);
    helper_response_free(&r);
    cr_assert_eq(req("POST", "/measure", "Authorization: Bearer s3cret-tokeN\r\n", body, &r, NULL), 401);
    helper_response_free(&r);
    cr_assert_eq(req("POST", "/measure", "Authorization: Bearer s3cret\r\n", body, &r, NULL), 401);
    helper_response_free(&r);
    cr_assert_eq(req("POST", "/measure", "Authorization: Basic s3cret-token\r\n", body, &r, NULL), 401);
    helper_response_free(&r);
    cr_assert_eq(req("POST", "/measure", "Authorization: Bearer s3cret-token\r\n", body, &r, NULL), 202, "%s", r.body);
    helper_response_free(&r);
    cr_assert_eq(req("GET", "/predicates", NULL, NULL, &r, NULL), 200);
    helper_response_free(&r);
    cr_assert_eq(req("POST", "/analyze", NULL, "{\"part\": 1}", &r, NULL), 200);
    helper_response_free(&r);
}

Test(http, token_from_environment) {
    const char *env[] = {"DIVERGENCE_TOKEN=from-env", NULL};
    const char *args[] = {"--rate-limit", "0", "--open-measure-cost", "0", NULL};
    start(args, env, 200);
    struct helper_response r;
    cr_assert_eq(req("POST", "/measure", NULL, "{}", &r, NULL), 401);
    helper_response_free(&r);
    cr_assert_eq(req("POST", "/measure", "Authorization: Bearer from-env\r\n",
                     "{\"part\": 1, \"iterations\": 91, \"budget_ms\": 100}", &r, NULL), 202);
    helper_response_free(&r);
}

Test(http, lesson_sized_measure_stays_open_under_a_token) {
    const char *args[] = {"--rate-limit", "0", "--token", "s3cret-token", NULL};
    start(args, NULL, 200);
    struct helper_response r;
    json_t *j;
    /* What a lesson page sends: the Part 1 suite, or a predicate against the baseline. */
    cr_assert_eq(req("POST", "/measure", NULL, "{\"part\": 1, \"iterations\": 92, \"budget_ms\": 100}", &r, NULL), 202,
                 "%s", r.body);
    helper_response_free(&r);
    cr_assert_eq(req("POST", "/measure", NULL,
                     "{\"part\": 1, \"predicates\": [\"threadIdx.x < 16\", \"warp-parity\"], \"budget_ms\": 100}", &r, NULL),
                 202, "%s", r.body);
    helper_response_free(&r);
    /* Far above any suite: the token is required, and the answer says why. */
    cr_assert_eq(req("POST", "/measure", NULL, "{\"part\": 1, \"blocks\": 32768, \"iterations\": 8192}", &r, &j), 401);
    cr_assert_str_eq(err_field(j), "Authorization");
    json_t *e = json_object_get(j, "error");
    cr_assert(json_real_value(json_object_get(e, "open_limit")) > 0);
    cr_assert_not_null(strstr(json_string_value(json_object_get(e, "reason")), "without a token"));
    json_decref(j);
    helper_response_free(&r);
    cr_assert_eq(req("POST", "/measure", "Authorization: Bearer s3cret-token\r\n",
                     "{\"part\": 1, \"blocks\": 32768, \"iterations\": 8192, \"budget_ms\": 100}", &r, NULL), 202,
                 "%s", r.body);
    helper_response_free(&r);
    /* Refreshes always need it. */
    cr_assert_eq(req("POST", "/evidence/refresh", NULL, NULL, &r, NULL), 401);
    helper_response_free(&r);
    /* The page learns the rule from /healthz. */
    cr_assert_eq(req("GET", "/healthz", NULL, NULL, &r, &j), 200);
    json_t *m = json_object_get(j, "measure");
    cr_assert(json_is_true(json_object_get(m, "token_required")));
    cr_assert(json_real_value(json_object_get(m, "open_max_cost")) > 0);
    json_decref(j);
    helper_response_free(&r);
}

Test(http, cors_allowlist_and_preflight) {
    const char *args[] = {"--rate-limit", "0", "--cors-origin", "https://lesson.example", NULL};
    start(args, NULL, 200);
    struct helper_response r;
    char v[256];
    cr_assert_eq(req("GET", "/healthz", "Origin: https://lesson.example\r\n", NULL, &r, NULL), 200);
    cr_assert_str_eq(helper_header(&r, "Access-Control-Allow-Origin", v, sizeof v), "https://lesson.example");
    cr_assert_str_eq(helper_header(&r, "Vary", v, sizeof v), "Origin");
    helper_response_free(&r);
    cr_assert_eq(req("GET", "/healthz", "Origin: https://evil.example\r\n", NULL, &r, NULL), 200);
    cr_assert_null(helper_header(&r, "Access-Control-Allow-Origin", v, sizeof v));
    helper_response_free(&r);
    cr_assert_eq(req("OPTIONS", "/measure",
                     "Origin: https://lesson.example\r\nAccess-Control-Request-Method: POST\r\n"
                     "Access-Control-Request-Headers: authorization, content-type\r\n", NULL, &r, NULL), 204);
    cr_assert_str_eq(helper_header(&r, "Access-Control-Allow-Origin", v, sizeof v), "https://lesson.example");
    cr_assert(strstr(helper_header(&r, "Access-Control-Allow-Methods", v, sizeof v), "POST"));
    cr_assert(strstr(helper_header(&r, "Access-Control-Allow-Headers", v, sizeof v), "Authorization"));
    helper_response_free(&r);
    json_t *j;
    cr_assert_eq(req("OPTIONS", "/measure", "Origin: https://evil.example\r\nAccess-Control-Request-Method: POST\r\n",
                     NULL, &r, &j), 403);
    cr_assert_null(helper_header(&r, "Access-Control-Allow-Origin", v, sizeof v));
    cr_assert_str_eq(err_field(j), "Origin");
    json_decref(j);
    helper_response_free(&r);
}

Test(http, unknown_path_404_wrong_method_405) {
    start(NOLIMIT, NULL, 200);
    struct helper_response r;
    json_t *j;
    cr_assert_eq(req("GET", "/nope", NULL, NULL, &r, &j), 404);
    cr_assert(strstr(err_reason(j), "/nope"));
    cr_assert_eq(json_integer_value(json_object_get(json_object_get(j, "error"), "status")), 404);
    json_decref(j);
    helper_response_free(&r);
    char allow[128];
    cr_assert_eq(req("GET", "/measure", NULL, NULL, &r, &j), 405);
    cr_assert(strstr(helper_header(&r, "Allow", allow, sizeof allow), "POST"));
    cr_assert_not_null(j);
    json_decref(j);
    helper_response_free(&r);
    cr_assert_eq(req("DELETE", "/jobs/00000000000000000000000000000000", NULL, NULL, &r, NULL), 405);
    cr_assert(strstr(helper_header(&r, "Allow", allow, sizeof allow), "GET"));
    helper_response_free(&r);
    cr_assert_eq(req("POST", "/healthz", NULL, "{}", &r, NULL), 405);
    helper_response_free(&r);
    char *m = metrics();
    cr_assert(strstr(m, "dv_http_requests_total{route=\"other\",status=\"404\",status_class=\"4xx\"} 1\n"), "%s", m);
    cr_assert(strstr(m, "dv_http_requests_total{route=\"other\",status=\"405\",status_class=\"4xx\"} 3\n"), "%s", m);
    free(m);
}

/* Every JSON route and every error says what it is and that it is not to be
 * stored; routes with their own policy (static files, evidence) set theirs. */
Test(http, every_reply_has_content_type_and_cache_control) {
    start(NOLIMIT, NULL, 200);
    static const struct { const char *method, *path, *body; int status; const char *ctype; } cases[] = {
        {"GET", "/healthz", NULL, 200, "application/json"},
        {"GET", "/readyz", NULL, 200, "application/json"},
        {"GET", "/device", NULL, 200, "application/json"},
        {"GET", "/predicates", NULL, 200, "application/json"},
        {"GET", "/metrics", NULL, 200, "text/plain; version=0.0.4; charset=utf-8"},
        {"POST", "/analyze", "{\"part\": 1}", 200, "application/json"},
        {"POST", "/measure", "{\"bogus\": 1}", 400, "application/json"},
        {"GET", "/jobs/00000000000000000000000000000000", NULL, 404, "application/json"},
        {"GET", "/nope", NULL, 404, "application/json"},
        {"DELETE", "/healthz", NULL, 405, "application/json"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct helper_response r;
        char v[128];
        int st = req(cases[i].method, cases[i].path, NULL, cases[i].body, &r, NULL);
        cr_assert_eq(st, cases[i].status, "%s %s: %d %s", cases[i].method, cases[i].path, st, r.body);
        cr_assert_not_null(helper_header(&r, "Content-Type", v, sizeof v), "%s %s: no Content-Type",
                           cases[i].method, cases[i].path);
        cr_assert_str_eq(v, cases[i].ctype, "%s %s", cases[i].method, cases[i].path);
        cr_assert_not_null(helper_header(&r, "Cache-Control", v, sizeof v), "%s %s: no Cache-Control",
                           cases[i].method, cases[i].path);
        cr_assert_str_eq(v, "no-store", "%s %s", cases[i].method, cases[i].path);
        helper_response_free(&r);
    }
}

/* The digits after the decimal point of the number that follows `"key":`
 * in `text` (-1 when the key is missing). */
static int decimals_after(const char *text, const char *key) {
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\":", key);
    const char *p = strstr(text, pat);
    if (!p) return -1;
    p += strlen(pat);
    p += strspn(p, "-0123456789");
    if (*p != '.') return 0;
    return (int)strspn(p + 1, "0123456789");
}

/* Numbers come out as the short decimals they are, not as the 17-digit
 * expansions of their binary doubles (14.933999999999999). */
Test(http, numbers_are_not_printed_with_binary_noise) {
    start(NOLIMIT, NULL, 200);
    helper_sleep_ms(37);
    struct helper_response r;
    for (int i = 0; i < 3; i++) { /* three readings: one might be exact in binary */
        cr_assert_eq(req("GET", "/healthz", NULL, NULL, &r, NULL), 200);
        int d = decimals_after(r.body, "uptime_s");
        cr_assert(d >= 0 && d <= 3, "uptime_s with %d decimals: %s", d, r.body);
        helper_response_free(&r);
        helper_sleep_ms(11);
    }
    const char *body = "{\"part\": 1, \"iterations\": 65, \"budget_ms\": 100, \"max_noise\": 0.005}";
    char id[64], path[128];
    snprintf(id, sizeof id, "%s", submit(body));
    json_decref(wait_job(id));
    snprintf(path, sizeof path, "/jobs/%s", id);
    cr_assert_eq(req("GET", path, NULL, NULL, &r, NULL), 200);
    cr_assert_null(strstr(r.body, "0.0050000000000000001"), "%s", r.body);
    cr_assert(strstr(r.body, "0.005"), "%s", r.body);
    int d = decimals_after(r.body, "run_s");
    cr_assert(d >= 0 && d <= 3, "run_s with %d decimals: %s", d, r.body);
    d = decimals_after(r.body, "gpu_time_ms");
    cr_assert(d >= 0 && d <= 3, "gpu_time_ms with %d decimals", d);
    helper_response_free(&r);
    json_t *j;
    cr_assert_eq(req("POST", "/measure", NULL, body, &r, &j), 200, "%s", r.body);
    cr_assert(json_is_true(json_object_get(j, "cached")));
    d = decimals_after(r.body, "age_s");
    cr_assert(d >= 0 && d <= 3, "age_s with %d decimals: %s", d, r.body);
    cr_assert_null(strstr(r.body, "0.0050000000000000001"), "%s", r.body);
    json_decref(j);
    helper_response_free(&r);
}

Test(http, predicates_and_analyze) {
    start(NOLIMIT, NULL, 200);
    struct helper_response r;
    json_t *j;
    cr_assert_eq(req("GET", "/predicates", NULL, NULL, &r, &j), 200);
    json_t *arr = json_object_get(j, "predicates");
    cr_assert_eq(json_array_size(arr), 6);
    json_t *lp = json_array_get(arr, 0);
    cr_assert_str_eq(json_string_value(json_object_get(lp, "name")), "lane-parity");
    cr_assert_str_eq(json_string_value(json_object_get(lp, "label")), "(threadIdx.x & 1) == 0");
    cr_assert_float_eq(json_number_value(json_object_get(json_object_get(lp, "analysis"), "predicted_ratio")), 2.0, 1e-9);
    cr_assert_eq(json_integer_value(json_object_get(j, "threads_per_block")), 256);
    json_decref(j);
    helper_response_free(&r);
    cr_assert_eq(req("POST", "/analyze", NULL, "{\"part\": 1, \"predicates\": [\"lane-parity\", \"threadIdx.x < 16\"]}",
                     &r, &j), 200, "%s", r.body);
    cr_assert_str_eq(json_string_value(json_object_get(j, "schema")), "divergence.v1");
    cr_assert_geq(json_array_size(json_object_get(j, "tables")), 1);
    json_decref(j);
    helper_response_free(&r);
    /* An empty body is the lesson's defaults. */
    cr_assert_eq(req("POST", "/analyze", NULL, "", &r, NULL), 200, "%s", r.body);
    helper_response_free(&r);
}

static char tmpdir[64];

static void write_file(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
}

Test(http, static_files_openapi_and_no_traversal) {
    snprintf(tmpdir, sizeof tmpdir, "/tmp/dv-static-XXXXXX");
    cr_assert_not_null(mkdtemp(tmpdir));
    char p[512], sdir[256], api[256];
    snprintf(sdir, sizeof sdir, "%s/static", tmpdir);
    mkdir(sdir, 0755);
    snprintf(p, sizeof p, "%s/index.html", sdir);
    write_file(p, "<!doctype html><title>divergence</title>\n");
    snprintf(p, sizeof p, "%s/widget.js", sdir);
    write_file(p, "export const x = 1;\n");
    snprintf(p, sizeof p, "%s/.hidden", sdir);
    write_file(p, "secret\n");
    snprintf(p, sizeof p, "%s/secret.txt", tmpdir);
    write_file(p, "outside\n");
    snprintf(api, sizeof api, "%s/openapi.yaml", tmpdir);
    write_file(api, "openapi: 3.1.0\ninfo: {title: divergence}\n");
    const char *args[] = {"--rate-limit", "0", "--static-dir", sdir, "--openapi", api, NULL};
    start(args, NULL, 200);
    struct helper_response r;
    char ct[128];
    cr_assert_eq(req("GET", "/", NULL, NULL, &r, NULL), 200);
    cr_assert(strstr(r.body, "<title>divergence</title>"));
    cr_assert_str_eq(helper_header(&r, "Content-Type", ct, sizeof ct), "text/html; charset=utf-8");
    helper_response_free(&r);
    cr_assert_eq(req("GET", "/static/widget.js", NULL, NULL, &r, NULL), 200);
    cr_assert_str_eq(helper_header(&r, "Content-Type", ct, sizeof ct), "text/javascript; charset=utf-8");
    cr_assert_str_eq(r.body, "export const x = 1;\n");
    /* Validators, and a 304 for a copy that is current. */
    char etag[96], lm[64], cond[256];
    cr_assert_not_null(helper_header(&r, "ETag", etag, sizeof etag));
    cr_assert_eq(etag[0], '"');
    cr_assert_not_null(helper_header(&r, "Last-Modified", lm, sizeof lm));
    cr_assert(strstr(lm, " GMT"), "%s", lm);
    helper_response_free(&r);
    snprintf(cond, sizeof cond, "If-None-Match: %s\r\n", etag);
    cr_assert_eq(req("GET", "/static/widget.js", cond, NULL, &r, NULL), 304);
    cr_assert_eq(r.len, 0);
    helper_response_free(&r);
    cr_assert_eq(req("GET", "/static/widget.js", "If-None-Match: \"other\"\r\n", NULL, &r, NULL), 200);
    helper_response_free(&r);
    snprintf(cond, sizeof cond, "If-None-Match: \"a\", W/%s\r\n", etag);
    cr_assert_eq(req("GET", "/static/widget.js", cond, NULL, &r, NULL), 304, "a weak match in a list");
    helper_response_free(&r);
    snprintf(cond, sizeof cond, "If-Modified-Since: %s\r\n", lm);
    cr_assert_eq(req("GET", "/static/widget.js", cond, NULL, &r, NULL), 304);
    helper_response_free(&r);
    /* The one rule of conditional.h: exact entity-tags, real dates only. */
    snprintf(cond, sizeof cond, "If-None-Match: %sx\r\n", etag);
    cr_assert_eq(req("GET", "/static/widget.js", cond, NULL, &r, NULL), 200, "an ETag with a byte after it");
    helper_response_free(&r);
    cr_assert_eq(req("GET", "/static/widget.js", "If-Modified-Since: Sat, 06 Nov 2094 08:49:37 GMT\r\n", NULL, &r, NULL),
                 200, "a date in the future");
    helper_response_free(&r);
    cr_assert_eq(req("GET", "/openapi.yaml", NULL, NULL, &r, NULL), 200);
    cr_assert(strstr(r.body, "openapi: 3.1.0"));
    cr_assert_str_eq(helper_header(&r, "Content-Type", ct, sizeof ct), "application/yaml");
    helper_response_free(&r);
    const char *bad[] = {"/static/../secret.txt", "/static/%2e%2e/secret.txt", "/static/.hidden",
                         "/static//etc/passwd", "/static/../../CMakeLists.txt", "/static/nothere.js"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char raw[256];
        int n = snprintf(raw, sizeof raw, "GET %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", bad[i]);
        cr_assert_eq(helper_raw(srv.port, raw, (size_t)n, &r), 0);
        cr_assert(r.status == 404 || r.status == 400, "%s -> %d", bad[i], r.status);
        cr_assert_null(strstr(r.body, "outside"), "%s leaked a file", bad[i]);
        cr_assert_null(strstr(r.body, "secret\n"), "%s leaked a file", bad[i]);
        helper_response_free(&r);
    }
}

Test(http, sigterm_finishes_running_fails_queued_exits_0) {
    const char *args[] = {"--rate-limit", "0", "--job-deadline-ms", "5000", NULL};
    start(args, NULL, 200);
    char running[64], queued[64];
    snprintf(running, sizeof running, "%s", submit("{\"part\": 1, \"iterations\": 3333, \"budget_ms\": 100}"));
    wait_running(running);
    snprintf(queued, sizeof queued, "%s", submit("{\"part\": 1, \"iterations\": 95, \"budget_ms\": 100}"));
    int st = helper_server_stop(&srv, 10000);
    cr_assert_eq(st, 0, "exit status %d", st);
    char *log = helper_server_log(&srv);
    char want[256];
    snprintf(want, sizeof want, "job %s: done", running);
    cr_assert(strstr(log, want), "%s", log);
    snprintf(want, sizeof want, "job %s: failed (shutdown): server shutting down", queued);
    cr_assert(strstr(log, want), "%s", log);
    free(log);
}
