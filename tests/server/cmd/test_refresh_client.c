/* test_refresh_client.c -- `divergence refresh` against a small scripted
 * HTTP server on a loopback port: the requests it sends, how it follows the
 * refresh (through redirects and a proxy too), its summary and its exit
 * statuses. */
#define _DEFAULT_SOURCE
#include <criterion/criterion.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "server/cmd/refresh_cmd.h"
#include "tests/support/loopback.h"

#define SUITES_RUNNING                                                                             \
    "{\"id\":\"rtest\",\"state\":\"running\",\"suites\":["                                        \
    "{\"suite\":\"day22-part1\",\"state\":\"running\"},"                                          \
    "{\"suite\":\"day22-part2\",\"state\":\"queued\"}]}"
#define SUITES_RUNNING_JOB                                                                         \
    "{\"id\":\"rtest\",\"state\":\"running\",\"suites\":["                                        \
    "{\"suite\":\"day22-part1\",\"state\":\"running\",\"job\":\"00ab12\"},"                          \
    "{\"suite\":\"day22-part2\",\"state\":\"queued\",\"job\":\"00cd34\"}]}"
#define SUITES_OK                                                                                  \
    "{\"id\":\"rtest\",\"state\":\"done\",\"date\":\"2024-05-01\",\"suites\":["                   \
    "{\"suite\":\"day22-part1\",\"state\":\"done\",\"evidence\":\"/evidence/2024-05-01/day22-part1.json\"}," \
    "{\"suite\":\"day22-part2\",\"state\":\"done\",\"evidence\":\"/evidence/2024-05-01/day22-part2.json\"}]}"
#define SUITES_FAILED                                                                              \
    "{\"id\":\"rtest\",\"state\":\"done\",\"date\":\"2024-05-01\",\"suites\":["                   \
    "{\"suite\":\"day22-part1\",\"state\":\"done\"},"                                             \
    "{\"suite\":\"day22-part2\",\"state\":\"failed\",\"reason\":\"correctness gate failed: row x\"}]}"

struct script {
    int post_status;
    const char *post_body;
    int polls_running; /* GETs answered "running" before the final one */
    const char *final_body;
    int chunked;
    int moved; /* paths under /old/ answer 307 to the same path without it */
    const char *running_body; /* what a "running" GET answers (SUITES_RUNNING) */
    int hold_ms;              /* GET /jobs/{id}?wait= is held this long, then "done" */
    int post_hold_ms, poll_hold_ms, record_hold_ms; /* the POST, a status GET, a record GET held (or until the
                                                       client hangs up) */
    /* seen */
    const char *record_body; /* what GET /evidence/<date>/<suite>.json answers */
    int posts, gets, redirects, job_waits, records;
    char job_path[256];
    char first_request[2048];
    char last_path[256];
};

static struct script sc;
static struct loopback lo;

/* Holds an answer `ms` milliseconds, or until the client hangs up. */
static void hold(int fd, int ms) {
    struct pollfd p = {.fd = fd, .events = POLLIN}; /* readable at the hang-up (EOF) */
    if (ms > 0) poll(&p, 1, ms);
}

static void answer(int fd, int status, const char *body, int chunked) {
    char head[512];
    if (chunked) {
        snprintf(head, sizeof head,
                 "HTTP/1.1 %d X\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n"
                 "Connection: close\r\n\r\n", status);
        dprintf(fd, "%s", head);
        size_t n = strlen(body), half = n / 2;
        dprintf(fd, "%zx\r\n%.*s\r\n%zx\r\n%s\r\n0\r\n\r\n", half, (int)half, body, n - half, body + half);
        return;
    }
    dprintf(fd, "HTTP/1.1 %d X\r\nContent-Type: application/json\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n%s",
            status, strlen(body), body);
}

static void *serve(void *arg) {
    for (;;) {
        int fd = accept(lo.fd, NULL, NULL);
        if (fd < 0) return NULL;
        char req[4096];
        loopback_read_request(fd, req, sizeof req); /* a TLS hello is answered in plain text */
        if (sc.posts + sc.gets == 0) snprintf(sc.first_request, sizeof sc.first_request, "%.2000s", req);
        char method[8] = "", path[256] = "";
        sscanf(req, "%7s %255s", method, path);
        /* A record's GET (the summary's comparison lines) is not the refresh's. */
        const int record = strstr(path, "/evidence/2") != NULL;
        if (!record) snprintf(sc.last_path, sizeof sc.last_path, "%s", path);
        if (sc.moved && strncmp(path, "/old/", 5) == 0) {
            sc.redirects++;
            dprintf(fd, "HTTP/1.1 307 X\r\nLocation: %s\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", path + 4);
        } else if (strcmp(method, "POST") == 0) {
            sc.posts++;
            hold(fd, sc.post_hold_ms);
            answer(fd, sc.post_status, sc.post_body, 0);
        } else if (record) {
            sc.records++;
            hold(fd, sc.record_hold_ms);
            answer(fd, sc.record_body ? 200 : 404, sc.record_body ? sc.record_body : "{\"error\":\"none\"}", 0);
        } else if (strncmp(path, "/jobs/", 6) == 0) {
            sc.job_waits++;
            snprintf(sc.job_path, sizeof sc.job_path, "%s", path);
            usleep((useconds_t)sc.hold_ms * 1000u);
            answer(fd, 200, "{\"state\":\"done\"}", 0);
        } else {
            sc.gets++;
            hold(fd, sc.poll_hold_ms);
            answer(fd, 200, sc.gets <= sc.polls_running ? sc.running_body : sc.final_body, sc.chunked);
        }
        close(fd);
    }
}

/* The client honours proxies from the environment: none unless a test sets one. */
static void no_proxies(void) {
    const char *vars[] = {"http_proxy", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY", "no_proxy", "NO_PROXY"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) unsetenv(vars[i]);
}

static void setup(void) {
    no_proxies();
    signal(SIGPIPE, SIG_IGN); /* an answer held past the client's timeout is written to a closed socket */
    memset(&sc, 0, sizeof sc);
    sc.post_status = 202;
    sc.post_body = "{\"id\":\"rtest\",\"state\":\"running\"}";
    sc.polls_running = 2;
    sc.final_body = SUITES_OK;
    sc.running_body = SUITES_RUNNING;
    cr_assert_eq(loopback_start(&lo, serve), 0, "no loopback listener");
}

static void teardown(void) {
    loopback_stop(&lo);
}

static char err_out[8192]; /* the last run's stderr */

/* Runs the client with `extra` arguments after --server; returns its exit
 * status, its stdout in `out`, its stderr in err_out. */
static int run(const char *server, const char *const *extra, char *out, size_t outlen) {
    char url[128];
    if (!server) {
        snprintf(url, sizeof url, "http://127.0.0.1:%d", lo.port);
        server = url;
    }
    char *argv[16] = {"refresh", "--server", (char *)server};
    int argc = 3;
    for (; extra && *extra; extra++) argv[argc++] = (char *)*extra;
    argv[argc] = NULL;
    fflush(stdout);
    fflush(stderr);
    int saved = dup(1), saved_err = dup(2);
    FILE *tmp = tmpfile(), *tmp_err = tmpfile();
    dup2(fileno(tmp), 1);
    dup2(fileno(tmp_err), 2);
    int rc = refresh_cmd_main(argc, argv);
    fflush(stdout);
    fflush(stderr);
    dup2(saved, 1);
    dup2(saved_err, 2);
    close(saved);
    close(saved_err);
    rewind(tmp);
    size_t n = fread(out, 1, outlen - 1, tmp);
    out[n] = '\0';
    fclose(tmp);
    rewind(tmp_err);
    n = fread(err_out, 1, sizeof err_out - 1, tmp_err);
    err_out[n] = '\0';
    fclose(tmp_err);
    fprintf(stderr, "%s%s", out, err_out);
    return rc;
}

static const char *const fast[] = {"--interval", "0.01", "--timeout", "10", NULL};

Test(refresh_client, all_good_exits_0_after_following_the_refresh, .init = setup, .fini = teardown) {
    char out[4096];
    const char *const args[] = {"--token", "s3cret", "--interval=0.01", NULL};
    cr_assert_eq(run(NULL, args, out, sizeof out), 0, "%s", out);
    cr_expect_eq(sc.posts, 1);
    cr_expect_eq(sc.gets, 3, "two running answers, then done");
    cr_expect(strncmp(sc.first_request, "POST /evidence/refresh HTTP/1.1\r\n", 33) == 0, "%s", sc.first_request);
    cr_expect(strstr(sc.first_request, "\r\nAuthorization: Bearer s3cret\r\n"), "%s", sc.first_request);
    cr_expect(strstr(sc.first_request, "\r\nContent-Length: 0\r\n"));
    cr_expect_str_eq(sc.last_path, "/evidence/refresh/rtest");
    cr_expect(strstr(out, "day22-part1") && strstr(out, "/evidence/2024-05-01/day22-part2.json"), "%s", out);
    cr_expect(strstr(out, "2 ok, 0 failed"), "%s", out);
}

Test(refresh_client, waits_on_the_running_suites_job_instead_of_sleeping, .init = setup, .fini = teardown) {
    char out[4096];
    sc.running_body = SUITES_RUNNING_JOB;
    sc.hold_ms = 100; /* a server that holds ?wait= until the job ends */
    const char *const args[] = {"--interval", "5", "--timeout", "30", NULL};
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    cr_assert_eq(run(NULL, args, out, sizeof out), 0, "%s", out);
    clock_gettime(CLOCK_MONOTONIC, &b);
    double s = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
    cr_expect_eq(sc.job_waits, 2, "one held wait per running answer");
    cr_expect(strncmp(sc.job_path, "/jobs/00ab12?wait=", 18) == 0, "%s", sc.job_path);
    cr_expect(s < 2.5, "followed in %.2f s: it slept the 5 s interval instead of waiting on the job", s);
}

Test(refresh_client, a_server_that_does_not_hold_the_wait_falls_back_to_the_interval, .init = setup, .fini = teardown) {
    char out[4096];
    sc.running_body = SUITES_RUNNING_JOB;
    sc.hold_ms = 0; /* answers at once: an older server */
    cr_assert_eq(run(NULL, fast, out, sizeof out), 0, "%s", out);
    cr_expect_eq(sc.gets, 3);
    cr_expect_eq(sc.job_waits, 2);
}

Test(refresh_client, a_failed_suite_exits_1_with_its_reason, .init = setup, .fini = teardown) {
    sc.final_body = SUITES_FAILED;
    char out[4096];
    cr_assert_eq(run(NULL, fast, out, sizeof out), 1);
    cr_expect(strstr(out, "FAILED") && strstr(out, "correctness gate failed: row x"), "%s", out);
    cr_expect(strstr(out, "1 ok, 1 failed"), "%s", out);
}

Test(refresh_client, decodes_chunked_answers_and_keeps_a_base_path, .init = setup, .fini = teardown) {
    sc.chunked = 1;
    sc.polls_running = 0;
    char out[4096], url[128];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/divergence/", lo.port);
    cr_assert_eq(run(url, fast, out, sizeof out), 0, "%s", out);
    cr_expect(strncmp(sc.first_request, "POST /divergence/evidence/refresh ", 34) == 0, "%s", sc.first_request);
    cr_expect_str_eq(sc.last_path, "/divergence/evidence/refresh/rtest");
}

Test(refresh_client, http_errors_exit_2, .init = setup, .fini = teardown) {
    sc.post_status = 401;
    sc.post_body = "{\"error\":\"a bearer token is required\"}";
    char out[4096];
    cr_expect_eq(run(NULL, fast, out, sizeof out), 2);
    cr_expect_eq(sc.gets, 0);
    sc.post_status = 202;
    sc.post_body = "{\"state\":\"running\"}"; /* no id */
    cr_expect_eq(run(NULL, fast, out, sizeof out), 2);
    sc.post_body = "{\"id\":\"../../x\"}";
    cr_expect_eq(run(NULL, fast, out, sizeof out), 2);
}

Test(refresh_client, a_refresh_that_does_not_end_times_out_with_1, .init = setup, .fini = teardown) {
    sc.polls_running = 1000000;
    char out[4096];
    const char *const args[] = {"--interval", "0.01", "--timeout", "0.3", NULL};
    cr_expect_eq(run(NULL, args, out, sizeof out), 1);
    cr_expect_gt(sc.gets, 3);
}

Test(refresh_client, follows_redirects_keeping_the_method, .init = setup, .fini = teardown) {
    sc.moved = 1;
    char out[4096], url[128];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/old", lo.port);
    cr_assert_eq(run(url, fast, out, sizeof out), 0, "%s", out);
    cr_expect_eq(sc.posts, 1, "the POST is repeated at the new place as a POST");
    cr_expect_eq(sc.redirects, 1 + sc.gets + sc.records, "every request went to /old first");
    cr_expect_str_eq(sc.last_path, "/evidence/refresh/rtest");
}

Test(refresh_client, goes_through_the_proxy_the_environment_names, .init = setup, .fini = teardown) {
    char proxy[64], out[4096];
    snprintf(proxy, sizeof proxy, "http://127.0.0.1:%d", lo.port);
    setenv("http_proxy", proxy, 1);
    cr_assert_eq(run("http://divergence.invalid:8080", fast, out, sizeof out), 0, "%s", out);
    no_proxies();
    cr_expect(strncmp(sc.first_request, "POST http://divergence.invalid:8080/evidence/refresh HTTP/1.1\r\n", 63) == 0,
              "%s", sc.first_request);
    cr_expect_str_eq(sc.last_path, "http://divergence.invalid:8080/evidence/refresh/rtest");
}

Test(refresh_client, speaks_tls_to_https_and_exits_2_when_the_handshake_fails, .init = setup, .fini = teardown) {
    char out[4096], url[128];
    snprintf(url, sizeof url, "https://127.0.0.1:%d", lo.port);
    cr_expect_eq(run(url, fast, out, sizeof out), 2);
    cr_expect_eq(sc.posts, 0, "no plain-text request was sent to an https URL");
    cr_expect_eq(sc.gets, 1, "one connection, a TLS hello where a request line would be");
    cr_expect_eq(sc.first_request[0], 0x16, "a TLS handshake record");
}

Test(refresh_client, usage_and_connection_errors_exit_2) {
    no_proxies();
    char out[4096];
    cr_expect_eq(run("https://", fast, out, sizeof out), 2);
    cr_expect_eq(run("ftp://127.0.0.1", fast, out, sizeof out), 2);
    cr_expect_eq(run("http://", fast, out, sizeof out), 2);
    cr_expect_eq(run("http://127.0.0.1:8080/?x=1", fast, out, sizeof out), 2);
    const char *const control[] = {"--token", "a\r\nX-Injected: 1", NULL};
    cr_expect_eq(run("http://127.0.0.1:8080", control, out, sizeof out), 2, "a token cannot add a header");
    cr_expect_eq(run("http://127.0.0.1:99999", fast, out, sizeof out), 2);
    const char *const bad_timeout[] = {"--timeout", "soon", NULL};
    cr_expect_eq(run("http://127.0.0.1:8080", bad_timeout, out, sizeof out), 2);
    const char *const unknown[] = {"--frobnicate", NULL};
    cr_expect_eq(run("http://127.0.0.1:8080", unknown, out, sizeof out), 2);
    const char *const dangling[] = {"--token", NULL};
    cr_expect_eq(run("http://127.0.0.1:8080", dangling, out, sizeof out), 2);
    char *argv[] = {"refresh", NULL};
    cr_expect_eq(refresh_cmd_main(1, argv), 2, "--server is required");
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d", loopback_dead_port());
    cr_expect_eq(run(url, fast, out, sizeof out), 2, "connection refused");
}

/* Under each good suite, what its record says changed since the previous
 * good night, one GET of the record each; a record that cannot be read
 * prints nothing and changes nothing of the outcome. */
Test(refresh_client, prints_what_changed_since_the_previous_night, .init = setup, .fini = teardown) {
    char out[4096];
    sc.record_body = "{\"status\":\"ok\",\"comparison\":{\"changed\":1,\"summary\":\"1 of 3 ratios changed "
                     "since 2024-04-30: part1 lane-half higher by 5.0% [4.7, 5.3]; driver 580.159 -> 585.01\"}}";
    cr_assert_eq(run(NULL, fast, out, sizeof out), 0, "%s", out);
    cr_expect_eq(sc.records, 2, "one GET per good suite's record");
    cr_expect(strstr(out, "CHANGED: 1 of 3 ratios changed since 2024-04-30: part1 lane-half higher by 5.0% [4.7, 5.3]; "
                          "driver 580.159 -> 585.01"),
              "%s", out);
    sc.record_body = NULL;
    sc.records = 0;
    sc.gets = 0;
    cr_assert_eq(run(NULL, fast, out, sizeof out), 0, "%s", out);
    cr_expect_eq(sc.records, 2);
    cr_expect_null(strstr(out, "CHANGED"), "%s", out);
    cr_expect(strstr(out, "2 ok, 0 failed"), "%s", out);
}

static double seconds_since(const struct timespec *a) {
    struct timespec b;
    clock_gettime(CLOCK_MONOTONIC, &b);
    return (double)(b.tv_sec - a->tv_sec) + (double)(b.tv_nsec - a->tv_nsec) / 1e9;
}

/* --timeout is the whole run's: a server that holds each answer (the POST,
 * a status GET, each record's GET) for 5 s does not stretch a 1 s budget,
 * and the run says the budget is spent. */
Test(refresh_client, the_timeout_is_the_whole_runs_budget, .init = setup, .fini = teardown, .timeout = 60) {
    char out[4096];
    const char *const args[] = {"--interval", "0.01", "--timeout", "1", NULL};
    struct timespec a;
    /* Held comparisons: the refresh is done and good, the budget runs out
     * in the first record's GET, the second is not asked. */
    sc.polls_running = 0;
    sc.record_hold_ms = 5000;
    sc.record_body = "{\"comparison\":{\"changed\":0,\"summary\":\"no change\"}}";
    clock_gettime(CLOCK_MONOTONIC, &a);
    cr_expect_eq(run(NULL, args, out, sizeof out), 0, "the refresh's outcome stands: %s", out);
    double s = seconds_since(&a);
    cr_expect(s < 1.8, "comparisons: the run took %.2f s against a 1 s budget", s);
    cr_expect_eq(sc.records, 1, "a request after the budget was spent");
    cr_expect(strstr(out, "2 ok, 0 failed"), "%s", out);
    cr_expect(strstr(err_out, "the --timeout of 1 s is spent") && strstr(err_out, "not shown for 2 suites"), "%s",
              err_out);
    /* A held status GET: the refresh is not done when the budget ends. */
    sc.record_hold_ms = 0;
    sc.polls_running = 1000000;
    sc.poll_hold_ms = 5000;
    clock_gettime(CLOCK_MONOTONIC, &a);
    cr_expect_eq(run(NULL, args, out, sizeof out), 1);
    s = seconds_since(&a);
    cr_expect(s < 1.8, "status: the run took %.2f s against a 1 s budget", s);
    cr_expect(strstr(err_out, "the --timeout of 1 s is spent"), "%s", err_out);
    /* A held POST. */
    sc.post_hold_ms = 5000;
    clock_gettime(CLOCK_MONOTONIC, &a);
    cr_expect_eq(run(NULL, args, out, sizeof out), 2);
    s = seconds_since(&a);
    cr_expect(s < 1.8, "start: the run took %.2f s against a 1 s budget", s);
}

/* The first byte of `s` that would reach a terminal as a control: C0 but
 * the newline, DEL, a C1 control (U+0080-U+009F in UTF-8) or a
 * right-to-left override (U+202E); NULL when none. */
static const char *first_unsafe(const char *s) {
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if ((*p < 0x20 && *p != '\n') || *p == 0x7f || (p[0] == 0xc2 && p[1] >= 0x80 && p[1] < 0xa0) ||
            (p[0] == 0xe2 && p[1] == 0x80 && p[2] == 0xae))
            return (const char *)p;
    return NULL;
}

/* Server text reaches the terminal escaped: no escape sequence, control
 * character, C1 control or bidirectional override of a hostile server's
 * names, states, reasons, comparisons or error bodies is printed as itself. */
Test(refresh_client, server_text_is_printed_escaped, .init = setup, .fini = teardown) {
    char out[4096];
    sc.polls_running = 1;
    sc.running_body = "{\"id\":\"rtest\",\"state\":\"running\",\"suites\":["
                      "{\"suite\":\"\\u001b[2J\\u001b]0;pwned\\u0007evil\",\"state\":\"running\\r\"}]}";
    sc.final_body = "{\"id\":\"rtest\",\"state\":\"done\",\"date\":\"2024-05-01\\u001b[8m\",\"suites\":["
                    "{\"suite\":\"\\u001b[2J\\u001b]0;pwned\\u0007evil\",\"state\":\"done\","
                    "\"evidence\":\"/evidence/2024-05-01/x.json\"},"
                    "{\"suite\":\"b\\u202ebad\",\"state\":\"failed\",\"reason\":\"\\u009b31mred\\nline caf\\u00e9\"}]}";
    sc.record_body = "{\"comparison\":{\"changed\":1,\"summary\":\"\\u001b[31mhigher\\u001b[0m by 5%\"}}";
    cr_expect_eq(run(NULL, fast, out, sizeof out), 1, "%s", out);
    const char *bad = first_unsafe(out);
    cr_expect_null(bad, "byte 0x%02x at %zu printed as itself", bad ? (unsigned char)*bad : 0u,
                   bad ? (size_t)(bad - out) : 0u);
    cr_expect(strstr(out, "\\x1b[2J\\x1b]0;pwned\\x07evil"), "%s", out);
    cr_expect(strstr(out, "running\\x0d"), "%s", out);
    cr_expect(strstr(out, "2024-05-01\\x1b[8m"), "%s", out);
    cr_expect(strstr(out, "\\xc2\\x9b31mred\\x0aline caf\xc3\xa9"), "printable UTF-8 kept: %s", out);
    cr_expect(strstr(out, "b\\xe2\\x80\\xaebad"), "%s", out);
    cr_expect(strstr(out, "CHANGED: \\x1b[31mhigher\\x1b[0m by 5%"), "%s", out);
    /* An error body, on stderr. */
    sc.post_status = 500;
    sc.post_body = "{\"error\":{\"reason\":\"\\u001b]52;c;aGk=\\u0007 clipboard\"}}";
    cr_expect_eq(run(NULL, fast, out, sizeof out), 2);
    cr_expect(strstr(err_out, "HTTP 500: \\x1b]52;c;aGk=\\x07 clipboard"), "%s", err_out);
    cr_expect_null(first_unsafe(err_out), "an escape on stderr");
    /* A reason of 2,800 characters is cut with "...", escapes and all. */
    static char body[4096];
    int n = snprintf(body, sizeof body, "{\"id\":\"rtest\",\"state\":\"done\",\"suites\":[{\"suite\":\"s\","
                                         "\"state\":\"failed\",\"reason\":\"");
    for (int i = 0; i < 400; i++) n += snprintf(body + n, sizeof body - (size_t)n, "x\\u001b");
    snprintf(body + n, sizeof body - (size_t)n, "\"}]}");
    sc.post_status = 202;
    sc.post_body = "{\"id\":\"rtest\",\"state\":\"running\"}";
    sc.polls_running = 0;
    sc.final_body = body;
    static char big[16384];
    cr_expect_eq(run(NULL, fast, big, sizeof big), 1);
    const char *line = strstr(big, "FAILED ");
    cr_assert_not_null(line, "%s", big);
    const size_t len = strcspn(line, "\n");
    cr_expect(len < 1100 && strncmp(line + len - 3, "...", 3) == 0, "%zu characters: %.80s", len, line);
    cr_expect_null(first_unsafe(big));
}
