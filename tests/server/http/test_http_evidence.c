/* test_http_evidence.c -- the evidence routes and a whole refresh through
 * the real server over HTTP, with the fake GPU worker answering the jobs:
 * the service's error shape, ETag / Last-Modified / 304, per-GPU paths,
 * history pages, refreshes refused whole (429, 503) and two servers of two
 * GPU models sharing one evidence directory.
 */
#define _DEFAULT_SOURCE
#include <criterion/criterion.h>
#include <dirent.h>
#include <string.h>

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "server/evidence/evidence.h"
#include "server/evidence/history.h"
#include "server/evidence/suites.h"
#include "server/http/conditional.h"
#include "server/http/evroutes.h"
#include "tests/support/evidence_fixture.h"
#include "tests/support/helper_http.h"

static struct helper_server srv;
static char *dir;

static struct helper_server srv2;

static void start_on(struct helper_server *s, const char *const *env, const char *queue, int want_ready) {
    const char *args[] = {"--evidence-dir", dir, "--rate-limit", "0", "--queue", queue, NULL};
    cr_assert_eq(helper_server_start(s, args, env), 0);
    cr_assert_eq(helper_server_wait_ready(s, want_ready, 10000), 0, "the server did not get ready");
}

static void start(const char *const *env) {
    dir = fixture_tmpdir();
    cr_assert_not_null(dir);
    start_on(&srv, env, "16", 200);
}

static void stop(void) {
    helper_server_stop(&srv, 10000);
    if (srv2.pid > 0) helper_server_stop(&srv2, 10000);
    fixture_rmrf(dir);
    free(dir);
}

static json_t *get_from(unsigned port, const char *path, int want, struct helper_response *keep) {
    struct helper_response r;
    cr_assert_eq(helper_request(port, "GET", path, NULL, NULL, 0, &r), 0, "GET %s", path);
    cr_assert_eq(r.status, want, "GET %s: %d %s", path, r.status, r.body);
    json_t *j = json_loads(r.body, 0, NULL);
    if (keep) *keep = r;
    else helper_response_free(&r);
    return j;
}

static json_t *get(const char *path, int want, struct helper_response *keep) {
    return get_from(srv.port, path, want, keep);
}

/* POSTs a refresh and waits for it; returns its final status document. */
static json_t *refresh_on(unsigned port, const char *auth) {
    struct helper_response r;
    cr_assert_eq(helper_request(port, "POST", "/evidence/refresh", auth, "", 0, &r), 0);
    cr_assert_eq(r.status, 202, "POST /evidence/refresh: %d %s", r.status, r.body);
    json_t *j = json_loads(r.body, 0, NULL);
    const char *id = json_string_value(json_object_get(j, "id"));
    cr_assert_not_null(id, "%s", r.body);
    char path[128];
    snprintf(path, sizeof path, "/evidence/refresh/%s", id);
    helper_response_free(&r);
    json_decref(j);
    for (int i = 0; i < 300; i++) {
        json_t *st = get_from(port, path, 200, NULL);
        if (strcmp(json_string_value(json_object_get(st, "state")), "done") == 0) return st;
        json_decref(st);
        usleep(50000);
    }
    cr_assert_fail("refresh did not end in 15 s");
    return NULL;
}

static json_t *refresh(const char *auth) { return refresh_on(srv.port, auth); }

static const char *header(struct helper_response *r, const char *name) {
    static char buf[4][256];
    static int next;
    const char *v = helper_header(r, name, buf[next++ % 4], sizeof buf[0]);
    cr_assert_not_null(v, "no %s header", name);
    return v;
}

Test(http_evidence, refresh_files_every_suite_and_the_routes_serve_it, .fini = stop, .timeout = 60) {
    start(NULL);
    json_t *suites = get("/suites", 200, NULL);
    cr_expect_eq(json_array_size(json_object_get(suites, "suites")), suites_count());
    json_decref(suites);
    json_t *idx = get("/evidence/latest", 200, NULL);
    cr_expect_str_eq(json_string_value(json_object_get(json_array_get(json_object_get(idx, "suites"), 0), "status")),
                     "none");
    json_decref(idx);
    json_decref(get("/evidence/latest/day22-part1", 404, NULL));

    json_t *st = refresh(NULL);
    cr_expect_eq(json_integer_value(json_object_get(st, "ok")), (json_int_t)suites_count(), "%s", json_dumps(st, 0));
    /* Filed under the server's GPU, and each suite's link answers. */
    cr_expect_str_eq(json_string_value(json_object_get(st, "gpu")), "fake-gpu");
    const char *href = json_string_value(json_object_get(json_array_get(json_object_get(st, "suites"), 0), "evidence"));
    cr_assert_not_null(href);
    cr_expect_eq(strncmp(href, "/evidence/fake-gpu/", 19), 0, "%s", href);
    json_t *rec = get(href, 200, NULL);
    cr_expect_str_eq(json_string_value(json_object_get(rec, "gpu")), "fake-gpu");
    cr_expect_str_eq(json_string_value(json_object_get(rec, "gpu_name")), "Fake GPU");
    json_decref(rec);
    json_decref(st);
    json_t *gi = get("/evidence/fake-gpu/latest", 200, NULL);
    cr_expect_str_eq(json_string_value(json_object_get(gi, "gpu")), "fake-gpu");
    cr_expect_str_eq(json_string_value(json_object_get(json_array_get(json_object_get(gi, "suites"), 0), "status")),
                     "ok");
    json_decref(gi);
    json_decref(get("/evidence/fake-gpu/latest/day22-part1.txt", 200, NULL));
    json_decref(get("/evidence/tesla-t4/latest/day22-part1", 404, NULL));
    json_decref(get("/evidence/tesla-t4/latest", 404, NULL));

    idx = get("/evidence/latest", 200, NULL);
    cr_expect_str_eq(json_string_value(json_object_get(idx, "gpu")), "fake-gpu");
    cr_expect_eq(json_array_size(json_object_get(idx, "gpus")), 1);
    for (size_t i = 0; i < suites_count(); i++) {
        json_t *e = json_array_get(json_object_get(idx, "suites"), i);
        cr_expect_str_eq(json_string_value(json_object_get(e, "status")), "ok");
    }
    json_decref(idx);

    struct helper_response r;
    json_decref(get("/evidence/latest/day22-part1.txt", 200, &r));
    cr_expect(strstr(header(&r, "Content-Type"), "text/plain"));
    cr_expect(strstr(r.body, "threadIdx.x & 1"), "%s", r.body);
    char etag[64], lm[64], hdr[160];
    snprintf(etag, sizeof etag, "%s", header(&r, "ETag"));
    snprintf(lm, sizeof lm, "%s", header(&r, "Last-Modified"));
    cr_expect(strstr(header(&r, "Cache-Control"), "max-age"));
    helper_response_free(&r);

    snprintf(hdr, sizeof hdr, "If-None-Match: %s\r\n", etag);
    cr_assert_eq(helper_request(srv.port, "GET", "/evidence/latest/day22-part1.txt", hdr, NULL, 0, &r), 0);
    cr_expect_eq(r.status, 304);
    cr_expect_eq(r.len, 0);
    helper_response_free(&r);
    snprintf(hdr, sizeof hdr, "If-Modified-Since: %s\r\n", lm);
    cr_assert_eq(helper_request(srv.port, "GET", "/evidence/latest/day22-part1.txt", hdr, NULL, 0, &r), 0);
    cr_expect_eq(r.status, 304);
    helper_response_free(&r);

    json_t *h = get("/evidence/history/day22-part1", 200, NULL);
    cr_expect_eq(json_array_size(json_object_get(h, "nights")), 1);
    json_decref(h);
    h = get("/evidence/fake-gpu/history/day22-part1?limit=1", 200, NULL);
    cr_expect_eq(json_array_size(json_object_get(h, "nights")), 1);
    cr_expect(json_is_null(json_object_get(h, "next_cursor")));
    json_decref(h);

    const char *raw = "GET /evidence/../../etc/passwd HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    cr_assert_eq(helper_raw(srv.port, raw, strlen(raw), &r), 0);
    cr_expect(r.status == 400 || r.status == 404, "%d", r.status);
    cr_expect_null(strstr(r.body, "root:"));
    helper_response_free(&r);
}

Test(http_evidence, refresh_needs_the_token_when_one_is_set, .fini = stop, .timeout = 60) {
    const char *env[] = {"DIVERGENCE_TOKEN=s3cret", NULL};
    start(env);
    struct helper_response r;
    cr_assert_eq(helper_request(srv.port, "POST", "/evidence/refresh", NULL, "", 0, &r), 0);
    cr_expect_eq(r.status, 401);
    helper_response_free(&r);
    json_t *st = refresh("Authorization: Bearer s3cret\r\n");
    /* "failed": 0 alone would also hold for a reply without the member. */
    cr_assert(json_is_integer(json_object_get(st, "failed")), "no failed count in the refresh status");
    cr_expect_eq(json_integer_value(json_object_get(st, "failed")), 0);
    cr_expect_eq(json_integer_value(json_object_get(st, "ok")), (json_int_t)suites_count());
    json_decref(st);
}

Test(http_evidence, the_refresh_command_waits_and_reports, .fini = stop, .timeout = 60) {
    start(NULL);
    char url[64], cmd[512];
    snprintf(url, sizeof url, "http://127.0.0.1:%u", srv.port);
    snprintf(cmd, sizeof cmd, "'%s' refresh --server %s --interval 0.05 --timeout 30", DV_TEST_BINARY, url);
    int rc = system(cmd);
    cr_expect(WIFEXITED(rc) && WEXITSTATUS(rc) == 0, "divergence refresh: status %d", rc);
    snprintf(cmd, sizeof cmd, "'%s' refresh --server https://127.0.0.1:%u 2>/dev/null", DV_TEST_BINARY, srv.port);
    rc = system(cmd);
    cr_expect(WIFEXITED(rc) && WEXITSTATUS(rc) == 2, "https must be refused with 2, got %d", rc);
}

/* The error shape and headers the evidence routes answered with before the
 * store stopped making HTTP bodies: the service's {"error": {...}}, the
 * store's reason word for word. */
static void expect_error(const char *path, int status, const char *reason, const char *cache) {
    struct helper_response r;
    cr_assert_eq(helper_request(srv.port, "GET", path, NULL, NULL, 0, &r), 0);
    cr_expect_eq(r.status, status, "GET %s: %d %s", path, r.status, r.body);
    json_t *j = helper_json(&r), *e = json_object_get(j, "error");
    cr_assert(json_is_object(e), "GET %s: not the service's error shape: %s", path, r.body);
    cr_expect_eq(json_integer_value(json_object_get(e, "status")), status);
    if (reason) cr_expect_str_eq(json_string_value(json_object_get(e, "reason")), reason, "GET %s", path);
    cr_expect(strstr(header(&r, "Content-Type"), "application/json"));
    if (cache) cr_expect_str_eq(header(&r, "Cache-Control"), cache, "GET %s", path);
    json_decref(j);
    helper_response_free(&r);
}

Test(http_evidence, errors_keep_the_services_shape_and_the_stores_reasons, .fini = stop, .timeout = 60) {
    start(NULL);
    expect_error("/evidence/latest/day22-part1", 404, "no good evidence for day22-part1 yet", "public, max-age=60");
    expect_error("/evidence/latest/nope", 404, "unknown suite: nope", "public, max-age=60");
    expect_error("/evidence/2024-02-30/day22-part1", 400, "date: expected a calendar date YYYY-MM-DD, got 2024-02-30",
                 "no-store");
    expect_error("/evidence/2024-05-02/day22-part1", 404, "no evidence for day22-part1 on 2024-05-02", NULL);
    expect_error("/evidence/history/day22-part1?limit=0", 400, NULL, NULL);
    expect_error("/evidence/history/day22-part1?limit=abc", 400, NULL, NULL);
    expect_error("/evidence/history/day22-part1?cursor=yesterday", 400, NULL, NULL);
    expect_error("/evidence/nvidia-h200/latest", 404, "no evidence for GPU nvidia-h200", NULL);
    expect_error("/evidence/", 404, "not found", NULL);
}

/* The error's field, or "" when it names none. */
static const char *error_field(const char *path, int want) {
    static char field[64];
    struct helper_response r;
    cr_assert_eq(helper_request(srv.port, "GET", path, NULL, NULL, 0, &r), 0);
    cr_expect_eq(r.status, want, "GET %s: %d %s", path, r.status, r.body);
    json_t *j = helper_json(&r);
    const char *f = json_string_value(json_object_get(json_object_get(j, "error"), "field"));
    snprintf(field, sizeof field, "%s", f ? f : "");
    json_decref(j);
    helper_response_free(&r);
    return field;
}

/* One page, one spelling: a query the history does not take, a parameter
 * given twice, or a limit not written as a plain number is refused with
 * 400 naming the parameter, so no cache in front keeps a page twice under
 * two keys (and a client varying it reaches a refusal, not the store). */
Test(http_evidence, the_history_takes_limit_and_cursor_once_each_and_nothing_else, .fini = stop, .timeout = 60) {
    start(NULL);
    cr_expect_str_eq(error_field("/evidence/history/day22-part1?limit=5&x=1", 400), "x");
    cr_expect_str_eq(error_field("/evidence/history/day22-part1?bust=123", 400), "bust");
    cr_expect_str_eq(error_field("/evidence/fake-gpu/history/day22-part1?Limit=5", 400), "Limit");
    cr_expect_str_eq(error_field("/evidence/history/day22-part1?limit=5&limit=6", 400), "limit");
    cr_expect_str_eq(error_field("/evidence/history/day22-part1?cursor=2024-01-02&cursor=2024-01-03", 400), "cursor");
    cr_expect_str_eq(error_field("/evidence/history/day22-part1?limit=030", 400), "limit");
    cr_expect_str_eq(error_field("/evidence/history/day22-part1?limit=367", 400), "limit");
    cr_expect_str_eq(error_field("/evidence/history/day22-part1?limit=", 400), "limit");
    cr_expect_str_eq(error_field("/evidence/history/day22-part1?limit=366&cursor=2024-01-02", 200), "");
    cr_expect_str_eq(error_field("/evidence/history/day22-part1?cursor=2024-01-02&limit=30", 200), "");
    cr_expect_str_eq(error_field("/evidence/history/day22-part1", 200), "");
}

/* The history has its own rate limit per address, as /analyze has: past
 * it 429 with Retry-After, and the other evidence routes still answer. */
Test(http_evidence, the_history_is_rate_limited_per_address, .fini = stop, .timeout = 60) {
    dir = fixture_tmpdir();
    cr_assert_not_null(dir);
    const char *args[] = {"--evidence-dir", dir, "--history-rate-limit", "3", NULL};
    cr_assert_eq(helper_server_start(&srv, args, NULL), 0);
    for (int i = 0; i < 3; i++) json_decref(get("/evidence/history/day22-part1?limit=366", 200, NULL));
    struct helper_response r;
    json_decref(get("/evidence/fake-gpu/history/day22-part1", 429, &r));
    char ra[16];
    cr_expect_not_null(helper_header(&r, "Retry-After", ra, sizeof ra), "a 429 says when to come back");
    cr_expect(strstr(r.body, "history"), "%s", r.body);
    helper_response_free(&r);
    json_decref(get("/evidence/latest", 200, NULL));
    json_decref(get("/healthz", 200, NULL));
    /* Refused before it is charged: a malformed query costs the client nothing. */
    json_decref(get("/evidence/history/day22-part1?x=1", 400, NULL));
}

static void cond(const char *path, const char *inm, const char *ims, int want, const char *why) {
    char hdr[512] = "";
    size_t n = 0;
    if (inm) n += (size_t)snprintf(hdr + n, sizeof hdr - n, "If-None-Match: %s\r\n", inm);
    if (ims) snprintf(hdr + n, sizeof hdr - n, "If-Modified-Since: %s\r\n", ims);
    struct helper_response r;
    cr_assert_eq(helper_request(srv.port, "GET", path, hdr[0] ? hdr : NULL, NULL, 0, &r), 0);
    cr_expect_eq(r.status, want, "%s (INM %s, IMS %s): %s", path, inm ? inm : "-", ims ? ims : "-", why);
    if (r.status == 304) {
        cr_expect_eq(r.len, 0);
        char b[256];
        cr_expect_not_null(helper_header(&r, "ETag", b, sizeof b), "a 304 repeats the ETag");
        cr_expect_not_null(helper_header(&r, "Cache-Control", b, sizeof b));
    }
    helper_response_free(&r);
}

Test(http_evidence, etag_and_last_modified_are_stable_and_answer_304, .fini = stop, .timeout = 60) {
    start(NULL);
    json_decref(refresh(NULL));
    json_t *st = get("/evidence/latest/day22-part1", 200, NULL);
    char night[96];
    snprintf(night, sizeof night, "/evidence/%s/day22-part1", json_string_value(json_object_get(st, "date")));
    json_decref(st);
    const char *paths[] = {"/evidence/latest",
                           "/evidence/latest/day22-part1.json",
                           "/evidence/latest/day22-part1.txt",
                           night,
                           "/evidence/history/day22-part1",
                           "/evidence/fake-gpu/latest",
                           "/evidence/fake-gpu/latest/day22-part1"};
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
        struct helper_response a, b;
        json_decref(get(paths[i], 200, &a));
        json_decref(get(paths[i], 200, &b));
        char etag[64], lm[64], weak[80], list[160], older[40], trailing[80], now[40];
        snprintf(etag, sizeof etag, "%s", header(&a, "ETag"));
        snprintf(lm, sizeof lm, "%s", header(&a, "Last-Modified"));
        cr_expect_eq(etag[0], '"', "%s: strong, quoted ETag: %s", paths[i], etag);
        cr_expect_str_eq(header(&b, "ETag"), etag, "%s: ETag changed between two GETs", paths[i]);
        cr_expect_str_eq(header(&b, "Last-Modified"), lm);
        cr_expect_neq(conditional_parse_date(lm, time(NULL)), (time_t)-1, "%s", lm);
        cr_expect(strstr(header(&a, "Cache-Control"), "max-age"));
        helper_response_free(&a);
        helper_response_free(&b);
        snprintf(weak, sizeof weak, "W/%s", etag);
        snprintf(list, sizeof list, "\"abc\", %s ,\"def\"", etag);
        snprintf(trailing, sizeof trailing, "%sx", etag);
        time_t t = conditional_parse_date(lm, time(NULL)) - 1, clock = time(NULL);
        struct tm tm;
        gmtime_r(&t, &tm);
        strftime(older, sizeof older, "%a, %d %b %Y %H:%M:%S GMT", &tm);
        gmtime_r(&clock, &tm);
        strftime(now, sizeof now, "%a, %d %b %Y %H:%M:%S GMT", &tm);
        cond(paths[i], etag, NULL, 304, "same ETag");
        cond(paths[i], weak, NULL, 304, "weak comparison");
        cond(paths[i], list, NULL, 304, "ETag in a list");
        cond(paths[i], "*", NULL, 304, "any");
        cond(paths[i], "\"0000\"", NULL, 200, "other ETag");
        cond(paths[i], "\"0000\"", lm, 200, "If-None-Match decides over If-Modified-Since");
        cond(paths[i], trailing, NULL, 200, "an ETag with a character after it is no entity-tag");
        cond(paths[i], NULL, lm, 304, "not modified since");
        cond(paths[i], NULL, now, 304, "not modified since, a later date");
        cond(paths[i], NULL, "Sat, 06 Nov 2094 08:49:37 GMT", 200, "a date in the future is ignored");
        cond(paths[i], NULL, "Tue, 30 Feb 2021 08:49:37 GMT", 200, "30 February is ignored");
        cond(paths[i], NULL, older, 200, "modified since");
        cond(paths[i], NULL, "yesterday", 200, "an invalid date is ignored");
    }
}

Test(http_evidence, the_etag_names_digest_and_length) {
    char etag[EVROUTES_ETAG_LEN];
    evroutes_etag(0x0123456789abcdefull, 300, etag);
    cr_expect_str_eq(etag, "\"0123456789abcdef-12c\"");
}

Test(http_evidence, paths_outside_the_store_are_refused, .fini = stop, .timeout = 60) {
    start(NULL);
    json_decref(refresh(NULL));
    json_t *st = get("/evidence/latest/day22-part1", 200, NULL);
    char date[16], p[700];
    snprintf(date, sizeof date, "%s", json_string_value(json_object_get(st, "date")));
    json_decref(st);
    snprintf(p, sizeof p, "%s/fake-gpu/%s/secret.json", dir, date);
    FILE *f = fopen(p, "w");
    cr_assert_not_null(f);
    fputs("{\"schema\": \"" EVIDENCE_SCHEMA "\", \"status\": \"ok\"}", f);
    fclose(f);
    struct {
        const char *path;
        int status;
    } cases[] = {
        {"/evidence/2024-05-01/secret", 404},
        {"/evidence/2024-05-01/day22-part1.exe", 404},
        {"/evidence/2024-05-01/.tmp-day22-part1.json.1.1", 404},
        {"/evidence/2024-05-01/day22-part1/", 404},
        {"/evidence/2024-05-01//day22-part1", 404},
        {"/evidence/..%2f/day22-part1", 404}, /* decoded to "..//": an empty segment */
        {"/evidence/2024-13-01/day22-part1", 400},
        {"/evidence/24-05-01/day22-part1", 400},
        {"/evidence/2024-05-01/day22-part1.json.json", 404},
        {"/evidence/latest/day22-Part1", 404},
        {"/evidence/latest/", 404},
        {"/evidence/history/..", 404},
        {"/evidence/history/day22-part1/x", 404},
        {"/evidence/fake-gpu/..", 400}, /* {date}/{suite}: "fake-gpu" is no date */
        {"/evidence/Fake-GPU/latest", 404},
        {"/evidence/fake-gpu/latest/../x", 404},
        {"/evidence/fake-gpu/2024-05-01/day22-part1/x", 404},
        {"/evidence", 404},
        {"/evidencelatest", 404},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct helper_response r;
        cr_assert_eq(helper_request(srv.port, "GET", cases[i].path, NULL, NULL, 0, &r), 0);
        cr_expect_eq(r.status, cases[i].status, "%s: %d %s", cases[i].path, r.status, r.body);
        cr_expect(strstr(r.body, "\"error\""), "%s: no JSON error", cases[i].path);
        helper_response_free(&r);
    }
    char secret[96];
    snprintf(secret, sizeof secret, "/evidence/%s/secret.json", date);
    json_decref(get(secret, 404, NULL));
    snprintf(secret, sizeof secret, "/evidence/fake-gpu/%s/secret", date);
    json_decref(get(secret, 404, NULL));
    snprintf(secret, sizeof secret, "/evidence/fake-gpu/%s/day22-part1.json", date);
    json_decref(get(secret, 200, NULL));
}

/* Nothing filed: the index is all "none" and no GPU folder exists. */
static void expect_nothing_filed(void) {
    json_t *idx = get("/evidence/latest", 200, NULL);
    for (size_t i = 0; i < suites_count(); i++)
        cr_expect_str_eq(
            json_string_value(json_object_get(json_array_get(json_object_get(idx, "suites"), i), "status")), "none");
    cr_expect_eq(json_array_size(json_object_get(idx, "gpus")), 0);
    json_decref(idx);
    char p[600];
    snprintf(p, sizeof p, "%s/fake-gpu", dir);
    cr_expect_neq(access(p, F_OK), 0, "a GPU folder was made");
}

Test(http_evidence, a_refresh_that_cannot_be_queued_is_refused_whole, .fini = stop, .timeout = 60) {
    dir = fixture_tmpdir();
    cr_assert_not_null(dir);
    start_on(&srv, NULL, "2", 200); /* room for 2 jobs: a refresh needs one per suite */
    struct helper_response r;
    cr_assert_eq(helper_request(srv.port, "POST", "/evidence/refresh", NULL, "", 0, &r), 0);
    cr_expect_eq(r.status, 429, "%d %s", r.status, r.body);
    cr_expect(strstr(r.body, "room for 2"), "%s", r.body);
    cr_expect_not_null(helper_header(&r, "Retry-After", (char[32]){0}, 32));
    helper_response_free(&r);
    expect_nothing_filed();
}

Test(http_evidence, a_refresh_without_a_gpu_is_refused_whole, .fini = stop, .timeout = 60) {
    dir = fixture_tmpdir();
    cr_assert_not_null(dir);
    const char *env[] = {"FAKE_WORKER_NO_GPU=1", NULL};
    start_on(&srv, env, "16", 503);
    struct helper_response r;
    cr_assert_eq(helper_request(srv.port, "POST", "/evidence/refresh", NULL, "", 0, &r), 0);
    cr_expect_eq(r.status, 503, "%d %s", r.status, r.body);
    cr_expect(strstr(r.body, "no GPU"), "%s", r.body);
    helper_response_free(&r);
    expect_nothing_filed();
}

/* Two servers of two GPU models on one directory: each files under its own
 * GPU, each lists both, and the single-GPU paths answer for each one's own. */
Test(http_evidence, two_servers_share_one_evidence_directory, .fini = stop, .timeout = 90) {
    dir = fixture_tmpdir();
    cr_assert_not_null(dir);
    const char *env_a[] = {"FAKE_WORKER_GPU_NAME=Fake GPU A", NULL};
    const char *env_b[] = {"FAKE_WORKER_GPU_NAME=Fake GPU B", NULL};
    start_on(&srv, env_a, "16", 200);
    start_on(&srv2, env_b, "16", 200);
    json_t *a = refresh_on(srv.port, NULL), *b = refresh_on(srv2.port, NULL);
    cr_expect_str_eq(json_string_value(json_object_get(a, "gpu")), "fake-gpu-a");
    cr_expect_str_eq(json_string_value(json_object_get(b, "gpu")), "fake-gpu-b");
    cr_expect_eq(json_integer_value(json_object_get(a, "ok")), (json_int_t)suites_count());
    cr_expect_eq(json_integer_value(json_object_get(b, "ok")), (json_int_t)suites_count());
    json_decref(a);
    json_decref(b);
    unsigned ports[2] = {srv.port, srv2.port};
    const char *own[2] = {"fake-gpu-a", "fake-gpu-b"};
    for (int k = 0; k < 2; k++) {
        json_t *idx = NULL;
        for (int i = 0; i < 40; i++) { /* a peer's write shows within a second or so */
            idx = get_from(ports[k], "/evidence/latest", 200, NULL);
            if (json_array_size(json_object_get(idx, "gpus")) == 2) break;
            json_decref(idx);
            idx = NULL;
            helper_sleep_ms(100);
        }
        cr_assert_not_null(idx, "server %d never listed both GPUs", k);
        cr_expect_str_eq(json_string_value(json_object_get(idx, "gpu")), own[k]);
        json_t *g = json_object_get(idx, "gpus");
        cr_expect_str_eq(json_string_value(json_object_get(json_array_get(g, 0), "gpu")), "fake-gpu-a");
        cr_expect_str_eq(json_string_value(json_object_get(json_array_get(g, 1), "gpu")), "fake-gpu-b");
        json_decref(idx);
        json_t *rec = get_from(ports[k], "/evidence/latest/day22-part1", 200, NULL);
        cr_expect_str_eq(json_string_value(json_object_get(rec, "gpu")), own[k], "server %d answered another GPU", k);
        json_decref(rec);
        rec = get_from(ports[k],
                       k ? "/evidence/fake-gpu-a/latest/day22-part1" : "/evidence/fake-gpu-b/latest/day22-part1", 200,
                       NULL);
        cr_expect_str_eq(json_string_value(json_object_get(rec, "gpu")), own[1 - k]);
        json_decref(rec);
    }
}

/* `serve --device N` hands N to its worker: the hello (GET /device) says so. */
Test(http_evidence, serve_passes_its_device_to_the_worker, .fini = stop, .timeout = 60) {
    dir = fixture_tmpdir();
    cr_assert_not_null(dir);
    const char *args[] = {"--evidence-dir", dir, "--device", "3", NULL};
    cr_assert_eq(helper_server_start(&srv, args, NULL), 0);
    cr_assert_eq(helper_server_wait_ready(&srv, 200, 10000), 0);
    json_t *d = get("/device", 200, NULL);
    json_t *dev = json_object_get(d, "device") ? json_object_get(d, "device") : d;
    cr_expect_eq(json_integer_value(json_object_get(dev, "ordinal")), 3, "%s", json_dumps(d, 0));
    json_decref(d);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "'%s' serve --device 256 --port 0 2>/dev/null", DV_TEST_BINARY);
    int rc = system(cmd);
    cr_expect(WIFEXITED(rc) && WEXITSTATUS(rc) == 2, "--device 256 must be a usage error, got %d", rc);
}

/* Two replicas of one GPU model on one directory refreshing at once: one
 * GPU folder, every record whole and good, nothing left half-written. */
Test(http_evidence, two_replicas_of_one_model_refresh_the_same_night, .fini = stop, .timeout = 90) {
    dir = fixture_tmpdir();
    cr_assert_not_null(dir);
    start_on(&srv, NULL, "16", 200);
    start_on(&srv2, NULL, "16", 200);
    struct helper_response r1, r2;
    cr_assert_eq(helper_request(srv.port, "POST", "/evidence/refresh", NULL, "", 0, &r1), 0);
    cr_assert_eq(helper_request(srv2.port, "POST", "/evidence/refresh", NULL, "", 0, &r2), 0);
    cr_expect_eq(r1.status, 202);
    cr_expect_eq(r2.status, 202);
    helper_response_free(&r1);
    helper_response_free(&r2);
    json_t *a = refresh_on(srv.port, NULL), *b = refresh_on(srv2.port, NULL); /* joins, waits */
    cr_expect_eq(json_integer_value(json_object_get(a, "ok")), (json_int_t)suites_count());
    cr_expect_eq(json_integer_value(json_object_get(b, "ok")), (json_int_t)suites_count());
    char date[16];
    snprintf(date, sizeof date, "%s", json_string_value(json_object_get(a, "date")));
    json_decref(a);
    json_decref(b);
    char d[700];
    snprintf(d, sizeof d, "%s/fake-gpu/%s", dir, date);
    DIR *dd = opendir(d);
    cr_assert_not_null(dd, "%s", d);
    struct dirent *e;
    int json_files = 0, txt_files = 0;
    while ((e = readdir(dd)) != NULL) {
        size_t n = strlen(e->d_name), slen = strlen(HISTORY_SIDECAR_SUFFIX);
        if (e->d_name[0] == '.' && n > slen && strcmp(e->d_name + n - slen, HISTORY_SIDECAR_SUFFIX) == 0 &&
            strncmp(e->d_name, ".tmp-", 5) != 0)
            continue; /* the history's cache (history.h), not a record */
        if (e->d_name[0] == '.') {
            cr_expect(strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0, "left behind: %s", e->d_name);
            continue;
        }
        if (n > 4 && strcmp(e->d_name + n - 4, ".txt") == 0) txt_files++;
        if (n <= 5 || strcmp(e->d_name + n - 5, ".json") != 0) continue;
        json_files++;
        char p[1000];
        snprintf(p, sizeof p, "%s/%s", d, e->d_name);
        json_error_t je;
        json_t *j = json_load_file(p, JSON_REJECT_DUPLICATES, &je);
        cr_expect_not_null(j, "%s: torn: %s", e->d_name, je.text);
        cr_expect_str_eq(json_string_value(json_object_get(j, "status")), "ok", "%s", e->d_name);
        json_decref(j);
    }
    closedir(dd);
    cr_expect_eq(json_files, (int)suites_count(), "one record per suite, no duplicates");
    cr_expect_eq(txt_files, (int)suites_count());
    json_t *idx = get("/evidence/latest", 200, NULL);
    cr_expect_eq(json_array_size(json_object_get(idx, "gpus")), 1);
    json_decref(idx);
}

/* A refresh that arrives before the worker's hello (a missed night caught
 * up at boot) waits for it instead of being refused. */
Test(http_evidence, a_refresh_at_start_up_waits_for_the_workers_hello, .fini = stop, .timeout = 60) {
    dir = fixture_tmpdir();
    cr_assert_not_null(dir);
    const char *env[] = {"FAKE_WORKER_HELLO_DELAY_MS=1500", NULL};
    const char *args[] = {"--evidence-dir", dir, "--rate-limit", "0", NULL};
    cr_assert_eq(helper_server_start(&srv, args, env), 0);
    struct helper_response r;
    cr_assert_eq(helper_request(srv.port, "POST", "/evidence/refresh", NULL, "", 0, &r), 0);
    cr_expect_eq(r.status, 202, "%d %s", r.status, r.body);
    helper_response_free(&r);
    json_t *st = refresh(NULL);
    cr_expect_eq(json_integer_value(json_object_get(st, "ok")), (json_int_t)suites_count());
    cr_expect_str_eq(json_string_value(json_object_get(st, "gpu")), "fake-gpu");
    json_decref(st);
}
