/* test_http_gzip.c -- the service compresses what it serves, through the
 * real server over HTTP on the recorded capture: gzip where the request
 * asks for it (and only there), the same bytes after gunzip, Vary, an ETag
 * per coding with 304s for each, HEAD's length, small bodies left alone,
 * and each body compressed once however often it is asked for (the
 * dv_http_gzip_compressions_total counter of /metrics).
 */
#define _DEFAULT_SOURCE
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "tests/support/evidence_fixture.h"
#include "tests/support/helper_http.h"

static struct helper_server srv;
static char *dir;

static void start(void) {
    dir = fixture_tmpdir();
    cr_assert_not_null(dir);
    cr_assert_eq(fixture_copy_capture(dir, NULL, 0), 4);
    const char *args[] = {"--evidence-dir", dir, "--static-dir", DV_TEST_SOURCE_DIR "/static", NULL};
    cr_assert_eq(helper_server_start(&srv, args, NULL), 0);
    cr_assert_eq(helper_server_wait_ready(&srv, 200, 10000), 0, "the server did not get ready");
}

static void stop(void) {
    helper_server_stop(&srv, 10000);
    fixture_rmrf(dir);
    free(dir);
}

static void fetch(const char *method, const char *path, const char *headers, int want, struct helper_response *r) {
    cr_assert_eq(helper_request(srv.port, method, path, headers, NULL, 0, r), 0, "%s %s", method, path);
    cr_assert_eq(r->status, want, "%s %s [%s]: %d", method, path, headers ? headers : "", r->status);
}

static const char *hdr(const struct helper_response *r, const char *name, char *buf) {
    const char *v = helper_header(r, name, buf, 256);
    return v ? v : "";
}

/* gunzip of r's body, NUL-terminated, its length in *n. */
static char *gunzip(const struct helper_response *r, size_t *n) {
    size_t cap = 4u << 20;
    char *out = malloc(cap + 1);
    z_stream z = {0};
    cr_assert_eq(inflateInit2(&z, 15 + 16), Z_OK);
    z.next_in = (Bytef *)r->body;
    z.avail_in = (uInt)r->len;
    z.next_out = (Bytef *)out;
    z.avail_out = (uInt)cap;
    cr_assert_eq(inflate(&z, Z_FINISH), Z_STREAM_END, "not one whole gzip member");
    *n = z.total_out;
    out[*n] = '\0';
    inflateEnd(&z);
    return out;
}

static unsigned long long gzip_count(void) {
    struct helper_response r;
    fetch("GET", "/metrics", NULL, 200, &r);
    const char *p = strstr(r.body, "\ndv_http_gzip_compressions_total ");
    cr_assert_not_null(p, "no gzip counter in /metrics");
    unsigned long long n = strtoull(p + strlen("\ndv_http_gzip_compressions_total "), NULL, 10);
    helper_response_free(&r);
    return n;
}

static const char *const paths[] = {
    "/evidence/latest",
    "/evidence/latest/day22-part2",
    "/evidence/latest/day22-part1.svg",
    "/evidence/latest/scenarios.md",
    "/evidence/latest/day22-part1.csv",
    "/evidence/latest/day22-part1.txt",
    "/evidence/" FIXTURE_CAPTURE_DATE "/day22-part1",
    "/evidence/history/day22-part1",
    "/static/divergence-widget.js",
    "/static/divergence-widget.css",
    "/static/widget/evidence.js",
    "/",
};

Test(http_gzip, gzip_when_asked_the_same_bytes_an_etag_each_and_304_for_each, .fini = stop, .timeout = 60) {
    start();
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
        struct helper_response id, gz;
        char b[256], tag[256], gztag[256];
        fetch("GET", paths[i], NULL, 200, &id);
        cr_expect_eq(helper_header(&id, "Content-Encoding", b, sizeof b), NULL, "%s: identity unasked", paths[i]);
        cr_expect(strstr(hdr(&id, "Vary", b), "Accept-Encoding"), "%s: Vary: %s", paths[i], b);
        snprintf(tag, sizeof tag, "%s", hdr(&id, "ETag", b));
        fetch("GET", paths[i], "Accept-Encoding: gzip, deflate, br\r\n", 200, &gz);
        cr_expect_str_eq(hdr(&gz, "Content-Encoding", b), "gzip", "%s", paths[i]);
        cr_expect(strstr(hdr(&gz, "Vary", b), "Accept-Encoding"), "%s", paths[i]);
        cr_expect_eq(strtoull(hdr(&gz, "Content-Length", b), NULL, 10), gz.len, "%s: Content-Length", paths[i]);
        cr_expect_lt(gz.len, id.len, "%s: %zu gzip bytes against %zu", paths[i], gz.len, id.len);
        size_t n;
        char *back = gunzip(&gz, &n);
        cr_expect_eq(n, id.len, "%s", paths[i]);
        cr_expect_eq(memcmp(back, id.body, n < id.len ? n : id.len), 0, "%s: gunzip is the identity body", paths[i]);
        free(back);
        snprintf(gztag, sizeof gztag, "%s", hdr(&gz, "ETag", b));
        cr_expect_str_neq(gztag, tag, "%s: one ETag per coding", paths[i]);
        cr_expect_eq(strlen(gztag), strlen(tag) + 3, "%s: %s against %s", paths[i], gztag, tag);
        cr_expect_eq(strncmp(gztag, tag, strlen(tag) - 1), 0, "%s", paths[i]);
        helper_response_free(&id);
        helper_response_free(&gz);
        /* A copy of either coding is still good; the 304 names the coding
         * this request would get. */
        const char *want_tag[2] = {tag, gztag};
        for (int held = 0; held < 2; held++)
            for (int asks = 0; asks < 2; asks++) {
                char h[512];
                snprintf(h, sizeof h, "If-None-Match: %s\r\n%s", held ? gztag : tag,
                         asks ? "Accept-Encoding: gzip\r\n" : "");
                struct helper_response nm;
                fetch("GET", paths[i], h, 304, &nm);
                cr_expect_eq(nm.len, 0);
                cr_expect_str_eq(hdr(&nm, "ETag", b), want_tag[asks], "%s: held %d asks %d", paths[i], held, asks);
                helper_response_free(&nm);
            }
        struct helper_response hd;
        fetch("HEAD", paths[i], "Accept-Encoding: gzip\r\n", 200, &hd);
        cr_expect_str_eq(hdr(&hd, "Content-Encoding", b), "gzip", "HEAD %s", paths[i]);
        cr_expect_str_eq(hdr(&hd, "ETag", b), gztag, "HEAD %s", paths[i]);
        helper_response_free(&hd);
    }
}

Test(http_gzip, negotiation_over_http, .fini = stop, .timeout = 60) {
    start();
    static const struct {
        const char *headers;
        int gz;
    } cases[] = {{NULL, 0},
                 {"Accept-Encoding: gzip\r\n", 1},
                 {"Accept-Encoding: x-gzip\r\n", 1},
                 {"Accept-Encoding: gzip;q=0\r\n", 0},
                 {"Accept-Encoding: identity;q=0\r\n", 0},
                 {"Accept-Encoding: *\r\n", 1},
                 {"Accept-Encoding: *;q=0\r\n", 0},
                 {"Accept-Encoding: br, zstd\r\n", 0}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct helper_response r;
        char b[256];
        fetch("GET", "/evidence/latest/day22-part1", cases[i].headers, 200, &r);
        cr_expect_eq(helper_header(&r, "Content-Encoding", b, sizeof b) != NULL, cases[i].gz, "%s",
                     cases[i].headers ? cases[i].headers : "(no Accept-Encoding)");
        helper_response_free(&r);
    }
}

Test(http_gzip, small_bodies_are_sent_as_they_are, .fini = stop, .timeout = 60) {
    start();
    struct helper_response r;
    char b[256];
    fetch("GET", "/healthz", "Accept-Encoding: gzip\r\n", 200, &r);
    cr_expect_lt(r.len, 1024);
    cr_expect_null(helper_header(&r, "Content-Encoding", b, sizeof b));
    cr_expect_null(helper_header(&r, "Vary", b, sizeof b) && strstr(b, "Accept-Encoding") ? b : NULL);
    helper_response_free(&r);
}

Test(http_gzip, each_body_is_compressed_once_not_per_request, .fini = stop, .timeout = 60) {
    start();
    unsigned long long before = gzip_count();
    for (int round = 0; round < 20; round++)
        for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
            struct helper_response r;
            fetch("GET", paths[i], "Accept-Encoding: gzip\r\n", 200, &r);
            helper_response_free(&r);
        }
    unsigned long long made = gzip_count() - before;
    size_t n = sizeof paths / sizeof paths[0];
    cr_expect_eq(made, n, "%llu compressions for %zu bodies asked for 20 times each", made, n);
    /* Another path to the same bytes is the same form. */
    struct helper_response r;
    fetch("GET", "/evidence/latest/day22-part2.json", "Accept-Encoding: gzip\r\n", 200, &r);
    helper_response_free(&r);
    cr_expect_eq(gzip_count() - before, n);
}

/* A finished job's answer (GET /jobs/{id}, done, through the stand-in
 * worker) is an entity like the evidence: ETag and Last-Modified, gzip
 * where asked with its own ETag and the same bytes after gunzip, 304 for
 * either tag, and compressed once however often it is asked for. */
Test(http_gzip, a_finished_jobs_answer_is_compressed_once_with_an_etag, .fini = stop, .timeout = 60) {
    start();
    struct helper_response r, id, gz;
    char b[256], tag[256], gztag[256], path[128];
    const char *body = "{\"part\": 2}";
    cr_assert_eq(helper_request(srv.port, "POST", "/measure", NULL, body, strlen(body), &r), 0);
    cr_assert_eq(r.status, 202, "%d: %.*s", r.status, (int)r.len, r.body);
    json_t *job = json_loadb(r.body, r.len, 0, NULL);
    cr_assert_not_null(job);
    const char *jid = json_string_value(json_object_get(job, "id"));
    cr_assert_not_null(jid);
    snprintf(path, sizeof path, "/jobs/%s", jid);
    helper_response_free(&r);
    json_t *done = helper_wait_job(srv.port, jid, 20000);
    cr_assert_not_null(done, "the job did not finish");
    cr_assert_str_eq(json_string_value(json_object_get(done, "state")), "done");
    json_decref(done);
    json_decref(job);

    fetch("GET", path, NULL, 200, &id);
    cr_assert_gt(id.len, 1024, "a document big enough to compress: %zu bytes", id.len);
    snprintf(tag, sizeof tag, "%s", hdr(&id, "ETag", b));
    cr_expect_eq(tag[0], '"', "an ETag on a finished job: [%s]", tag);
    cr_expect_neq(hdr(&id, "Last-Modified", b)[0], '\0', "Last-Modified on a finished job");
    cr_expect(strstr(hdr(&id, "Vary", b), "Accept-Encoding"), "Vary: %s", b);
    cr_expect_null(helper_header(&id, "Content-Encoding", b, sizeof b));
    unsigned long long before = gzip_count();
    fetch("GET", path, "Accept-Encoding: gzip\r\n", 200, &gz);
    cr_expect_str_eq(hdr(&gz, "Content-Encoding", b), "gzip");
    snprintf(gztag, sizeof gztag, "%s", hdr(&gz, "ETag", b));
    cr_expect_eq(strlen(gztag), strlen(tag) + 3, "%s against %s", gztag, tag);
    cr_expect_eq(strncmp(gztag, tag, strlen(tag) - 1), 0, "%s against %s", gztag, tag);
    size_t n;
    char *back = gunzip(&gz, &n);
    cr_expect_eq(n, id.len);
    cr_expect_eq(memcmp(back, id.body, n < id.len ? n : id.len), 0, "gunzip is the identity body");
    free(back);
    helper_response_free(&gz);
    for (int i = 0; i < 20; i++) {
        fetch("GET", path, "Accept-Encoding: gzip\r\n", 200, &gz);
        helper_response_free(&gz);
    }
    cr_expect_eq(gzip_count() - before, 1, "one compression for the job's answer asked for 21 times");
    /* The same bytes each time: the identity answer again is the first. */
    struct helper_response again;
    fetch("GET", path, NULL, 200, &again);
    cr_expect(again.len == id.len && memcmp(again.body, id.body, id.len) == 0, "the answer changed");
    cr_expect_str_eq(hdr(&again, "ETag", b), tag);
    helper_response_free(&again);
    helper_response_free(&id);
    const char *held[2] = {tag, gztag};
    for (int i = 0; i < 2; i++) {
        char h[512];
        snprintf(h, sizeof h, "If-None-Match: %s\r\nAccept-Encoding: gzip\r\n", held[i]);
        struct helper_response nm;
        fetch("GET", path, h, 304, &nm);
        cr_expect_eq(nm.len, 0);
        cr_expect_str_eq(hdr(&nm, "ETag", b), gztag);
        helper_response_free(&nm);
    }
}
