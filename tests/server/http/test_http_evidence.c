/* test_http_evidence.c -- the evidence routes and a whole refresh through
 * the real server over HTTP, with the fake GPU worker answering the jobs.
 */
#define _DEFAULT_SOURCE
#include <criterion/criterion.h>
#include <string.h>

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "support/evidence_fixture.h"
#include "support/helper_http.h"
#include "evidence/suites.h"

static struct helper_server srv;
static char *dir;

static void start(const char *const *env) {
    dir = fixture_tmpdir();
    cr_assert_not_null(dir);
    const char *args[] = {"--evidence-dir", dir, "--rate-limit", "0", NULL};
    cr_assert_eq(helper_server_start(&srv, args, env), 0);
}

static void stop(void) {
    helper_server_stop(&srv, 10000);
    fixture_rmrf(dir);
    free(dir);
}

static json_t *get(const char *path, int want, struct helper_response *keep) {
    struct helper_response r;
    cr_assert_eq(helper_request(srv.port, "GET", path, NULL, NULL, 0, &r), 0, "GET %s", path);
    cr_assert_eq(r.status, want, "GET %s: %d %s", path, r.status, r.body);
    json_t *j = json_loads(r.body, 0, NULL);
    if (keep) *keep = r;
    else helper_response_free(&r);
    return j;
}

/* POSTs a refresh and waits for it; returns its final status document. */
static json_t *refresh(const char *auth) {
    struct helper_response r;
    cr_assert_eq(helper_request(srv.port, "POST", "/evidence/refresh", auth, "", 0, &r), 0);
    cr_assert_eq(r.status, 202, "POST /evidence/refresh: %d %s", r.status, r.body);
    json_t *j = json_loads(r.body, 0, NULL);
    const char *id = json_string_value(json_object_get(j, "id"));
    cr_assert_not_null(id, "%s", r.body);
    char path[128];
    snprintf(path, sizeof path, "/evidence/refresh/%s", id);
    helper_response_free(&r);
    json_decref(j);
    for (int i = 0; i < 300; i++) {
        json_t *st = get(path, 200, NULL);
        if (strcmp(json_string_value(json_object_get(st, "state")), "done") == 0) return st;
        json_decref(st);
        usleep(50000);
    }
    cr_assert_fail("refresh did not end in 15 s");
    return NULL;
}

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
    cr_expect_eq(json_integer_value(json_object_get(st, "ok")), (json_int_t)suites_count(), "%s",
                 json_dumps(st, 0));
    json_decref(st);

    idx = get("/evidence/latest", 200, NULL);
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
