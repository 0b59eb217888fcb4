/* test_httpclient.c -- the one HTTP client against a scripted loopback
 * server: what it sends, what it hands back (status, the final answer's
 * headers, the body), and what it refuses (bad URLs, answers past the
 * limit, nothing listening). */
#define _DEFAULT_SOURCE
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "kernels/base/status.h"
#include "server/core/httpclient.h"
#include "tests/support/loopback.h"

/* Each connection gets `answer` (raw bytes), then `big` bytes of body if set;
 * the request it sent is kept in `seen`. */
static const char *answer;
static size_t big;
static char seen[8192];
static struct loopback lo;

static void *serve(void *arg) {
    for (;;) {
        int fd = accept(lo.fd, NULL, NULL);
        if (fd < 0) return NULL;
        loopback_read_request(fd, seen, sizeof seen);
        if (send(fd, answer, strlen(answer), MSG_NOSIGNAL) < 0) {}
        if (big) {
            static char block[65536];
            memset(block, 'x', sizeof block);
            for (size_t sent = 0; sent < big; sent += sizeof block)
                if (send(fd, block, sizeof block, MSG_NOSIGNAL) < 0) break;
        }
        close(fd);
    }
}

static void setup(void) {
    answer = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok";
    big = 0;
    seen[0] = '\0';
    cr_assert_eq(loopback_start(&lo, serve), 0, "no loopback listener");
}

static void teardown(void) {
    loopback_stop(&lo);
}

TestSuite(httpclient, .init = setup, .fini = teardown);

static int send_to(const char *method, const char *path, const char *headers, const char *body,
                   struct httpclient_response *r, char *err) {
    char url[256];
    snprintf(url, sizeof url, "http://127.0.0.1:%d%s", lo.port, path);
    struct httpclient_request q = {.method = method, .url = url, .headers = headers, .body = body,
                                   .len = body ? strlen(body) : 0, .no_proxy = 1, .path_as_is = 1,
                                   .timeout_ms = 10000};
    return httpclient_send(&q, r, err);
}

Test(httpclient, sends_the_method_path_headers_and_body) {
    struct httpclient_response r;
    char err[ERR_LEN];
    cr_assert_eq(send_to("POST", "/a/../b?x=1", "X-Test: yes\r\nAuthorization: Bearer t\r\n", "{\"k\":1}", &r, err),
                 0, "%s", err);
    cr_expect(strncmp(seen, "POST /a/../b?x=1 HTTP/1.1\r\n", 27) == 0, "%s", seen);
    cr_expect(strstr(seen, "\r\nX-Test: yes\r\n") && strstr(seen, "\r\nAuthorization: Bearer t\r\n"), "%s", seen);
    cr_expect(strstr(seen, "\r\nContent-Length: 7\r\n") && strstr(seen, "\r\n\r\n{\"k\":1}"), "%s", seen);
    cr_expect_null(strstr(seen, "Content-Type"), "no Content-Type unless the caller gives one: %s", seen);
    cr_expect_eq(r.status, 200);
    cr_expect_eq(r.len, 2);
    cr_expect_str_eq(r.body, "ok");
    httpclient_response_cleanup(&r);
    httpclient_response_cleanup(&r); /* twice is harmless */
}

Test(httpclient, a_post_without_a_body_sends_content_length_0) {
    struct httpclient_response r;
    char err[ERR_LEN];
    cr_assert_eq(send_to("POST", "/p", NULL, NULL, &r, err), 0, "%s", err);
    cr_expect(strstr(seen, "\r\nContent-Length: 0\r\n"), "%s", seen);
    httpclient_response_cleanup(&r);
}

Test(httpclient, hands_back_any_status_with_its_headers) {
    answer = "HTTP/1.1 429 Too Many Requests\r\nRetry-After:  7 \r\ncontent-type: application/json\r\n"
             "Content-Length: 11\r\nConnection: close\r\n\r\n{\"e\":\"x\"}\r\n";
    struct httpclient_response r;
    char err[ERR_LEN], v[64];
    cr_assert_eq(send_to("GET", "/q", NULL, NULL, &r, err), 0, "%s", err);
    cr_expect_eq(r.status, 429);
    cr_expect_str_eq(httpclient_header(&r, "retry-after", v, sizeof v), "7");
    cr_expect_str_eq(httpclient_header(&r, "Content-Type", v, sizeof v), "application/json");
    cr_expect_null(httpclient_header(&r, "Location", v, sizeof v));
    cr_expect_null(httpclient_header(&r, "HTTP/1.1 429 Too Many Requests", v, sizeof v));
    char small[4];
    cr_expect_str_eq(httpclient_header(&r, "Content-Type", small, sizeof small), "app", "truncated to fit");
    httpclient_response_cleanup(&r);
}

Test(httpclient, follows_a_redirect_when_asked_and_keeps_the_final_headers) {
    static char moved[256];
    snprintf(moved, sizeof moved,
             "HTTP/1.1 302 Found\r\nLocation: http://127.0.0.1:%d/there\r\nX-First: 1\r\nContent-Length: 0\r\n"
             "Connection: close\r\n\r\n", lo.port);
    answer = moved;
    struct httpclient_response r;
    char err[ERR_LEN], url[128], v[16];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/here", lo.port);
    struct httpclient_request q = {.method = "GET", .url = url, .no_proxy = 1, .follow = 1, .timeout_ms = 10000};
    /* The server answers 302 to every request: curl gives up after the limit. */
    cr_expect_eq(httpclient_send(&q, &r, err), -1);
    cr_expect(strstr(err, "redirect") || strstr(err, "Redirect"), "%s", err);
    q.follow = 0;
    cr_assert_eq(httpclient_send(&q, &r, err), 0, "%s", err);
    cr_expect_eq(r.status, 302, "not followed unless asked");
    cr_expect_str_eq(httpclient_header(&r, "X-First", v, sizeof v), "1");
    httpclient_response_cleanup(&r);
}

Test(httpclient, refuses_answers_over_the_limit) {
    answer = "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n";
    big = HTTPCLIENT_MAX_BODY + 65536;
    struct httpclient_response r;
    char err[ERR_LEN];
    cr_expect_eq(send_to("GET", "/big", NULL, NULL, &r, err), -1);
    cr_expect(strstr(err, "over"), "%s", err);
    cr_expect_null(r.body);
    cr_expect_eq(r.status, -1);
}

Test(httpclient, bad_urls_and_dead_ports_are_errors_naming_the_request) {
    struct httpclient_response r;
    char err[ERR_LEN];
    const char *bad[] = {"", "127.0.0.1:80/x", "ftp://127.0.0.1/", "http://", "http://127.0.0.1:99999/"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cr_expect_eq(httpclient_url_check(bad[i], err), -1, "%s accepted", bad[i]);
        struct httpclient_request q = {.method = "GET", .url = bad[i], .no_proxy = 1};
        cr_expect_eq(httpclient_send(&q, &r, err), -1, "%s sent", bad[i]);
    }
    cr_expect_eq(httpclient_url_check("https://divergence.example.org:8443/base", err), 0, "%s", err);
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/x", loopback_dead_port());
    struct httpclient_request q = {.method = "GET", .url = url, .no_proxy = 1};
    cr_expect_eq(httpclient_send(&q, &r, err), -1);
    cr_expect(strncmp(err, "GET http://127.0.0.1:", 21) == 0, "%s", err);
}
