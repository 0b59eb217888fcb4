/* test_jobq_http.c -- the job queue's rules as a client meets them, on the
 * real `divergence serve` with tests/fake_worker standing in for the GPU
 * (its iterations 3333 job takes 300 ms): a reader told to expect a start
 * in N seconds starts within about N (a scripted queue of known job times),
 * the job document says when a waiting job is expected to start and end,
 * and an address past its share of the queue is told by 429 when its own
 * oldest job starts, after which it is taken. Clients are told apart by
 * X-Forwarded-For (--trust-forwarded), as behind the shipped proxy. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernels/base/timeutil.h"
#include "tests/support/helper_http.h"

static struct helper_server srv;

static void start(const char *const *args) {
    cr_assert_eq(helper_server_start(&srv, args, NULL), 0, "the server did not start");
    cr_assert_eq(helper_server_wait_ready(&srv, 200, 10000), 0, "/readyz never answered 200");
}

static void stop(void) {
    if (srv.pid > 0) helper_server_stop(&srv, 10000);
    unlink(srv.log);
}

/* POST /measure `body` for client `addr` (X-Forwarded-For); the status,
 * the parsed answer in `*out` (may be NULL) and Retry-After in `ra`. */
static int post_for(const char *addr, const char *body, json_t **out, char *ra, size_t ralen) {
    char h[128];
    snprintf(h, sizeof h, "X-Forwarded-For: %s\r\n", addr);
    struct helper_response r;
    cr_assert_eq(helper_request(srv.port, "POST", "/measure", h, body, strlen(body), &r), 0);
    int st = r.status;
    if (ra && !helper_header(&r, "Retry-After", ra, ralen)) ra[0] = '\0';
    if (out) *out = helper_json(&r);
    helper_response_free(&r);
    return st;
}

/* A job of the fake worker's 300 ms kind (Part 1, four rows, testimony on),
 * made distinct by `n` (budget_ms) so nothing joins or hits the cache. */
static void slow_body(char *buf, size_t len, int n) {
    snprintf(buf, len, "{\"part\": 1, \"iterations\": 3333, \"budget_ms\": %d}", 100 + n);
}

/* Waits for job `id` to finish; its wait in the queue (timing.queue_wait_ms)
 * in seconds. */
static double waited_s(const char *id) {
    json_t *j = helper_wait_job(srv.port, id, 20000);
    cr_assert_not_null(j, "job %s did not finish", id);
    cr_assert_str_eq(json_string_value(json_object_get(j, "state")), "done");
    double w = json_number_value(json_object_get(json_object_get(j, "timing"), "queue_wait_ms")) / 1e3;
    json_decref(j);
    return w;
}

/* The history the estimate learns from: one run of the 300 ms kind and
 * nine quick runs of another kind (no testimony), so that one mean over
 * every run (about 35 ms) would miss the 300 ms kind's waits by seconds,
 * and the configured default (5 s) by more. */
static void learn_two_kinds(void) {
    char body[128], id[64];
    json_t *j;
    slow_body(body, sizeof body, 0);
    cr_assert_eq(post_for("10.1.0.1", body, &j, NULL, 0), 202);
    snprintf(id, sizeof id, "%s", json_string_value(json_object_get(j, "id")));
    json_decref(j);
    waited_s(id);
    for (int i = 0; i < 9; i++) {
        snprintf(body, sizeof body, "{\"part\": 1, \"witness\": false, \"counters\": false, \"budget_ms\": %d}",
                 500 + i);
        cr_assert_eq(post_for("10.1.0.1", body, &j, NULL, 0), 202);
        snprintf(id, sizeof id, "%s", json_string_value(json_object_get(j, "id")));
        json_decref(j);
        waited_s(id);
    }
}

/* Ten readers at once, each from its own address: each 202 says when its
 * job is expected to start; each starts within 1 s of that. The waiting
 * job's document says it too, with its expected end after its start. */
Test(jobq_http, a_reader_told_n_seconds_starts_within_about_n, .fini = stop, .timeout = 60) {
    /* --batch 1: the script is of jobs run one after another (ten readers'
     * jobs of one kind and grid would otherwise share one session, and
     * start together well before their turn alone). */
    static const char *const args[] = {"--rate-limit", "0",    "--trust-forwarded", "--job-estimate-ms", "5000",
                                       "--batch",      "1",    NULL};
    start(args);
    learn_two_kinds();
    char ids[10][64];
    double said[10];
    for (int i = 0; i < 10; i++) {
        char body[128], addr[32];
        slow_body(body, sizeof body, 10 + i);
        snprintf(addr, sizeof addr, "10.1.1.%d", i + 1);
        json_t *j;
        cr_assert_eq(post_for(addr, body, &j, NULL, 0), 202);
        snprintf(ids[i], sizeof ids[i], "%s", json_string_value(json_object_get(j, "id")));
        json_t *es = json_object_get(j, "expected_start_s");
        said[i] = json_is_number(es) ? json_number_value(es) : 0; /* the first may already run */
        cr_expect(json_is_number(json_object_get(j, "eta_s")), "a 202 says when the job is likely done");
        json_decref(j);
    }
    char path[128];
    snprintf(path, sizeof path, "/jobs/%s", ids[9]);
    struct helper_response r;
    cr_assert_eq(helper_request(srv.port, "GET", path, NULL, NULL, 0, &r), 0);
    json_t *v = helper_json(&r);
    helper_response_free(&r);
    if (strcmp(json_string_value(json_object_get(v, "state")), "queued") == 0) {
        double es = json_number_value(json_object_get(v, "expected_start_s"));
        double eta = json_number_value(json_object_get(v, "eta_s"));
        cr_expect(es > 0 && eta > es, "a waiting job: expected start %.3f s, end %.3f s", es, eta);
    }
    json_decref(v);
    for (int i = 0; i < 10; i++) {
        double seen = waited_s(ids[i]);
        cr_expect(fabs(said[i] - seen) <= 1.0, "reader %d: told %.3f s, waited %.3f s", i, said[i], seen);
    }
    cr_expect(said[9] > 2.0, "nine jobs of 300 ms ahead of the last: told %.3f s", said[9]);
}

/* One address with its share (2) waiting behind three others' jobs: its
 * third is refused 429, naming the bound, with Retry-After when its oldest
 * is expected to start (the body repeats it); asked again after that long,
 * it is taken. Another address is taken meanwhile. */
Test(jobq_http, an_address_past_its_share_is_told_when_its_oldest_starts, .fini = stop, .timeout = 60) {
    static const char *const args[] = {
        "--rate-limit", "0", "--trust-forwarded", "--queue-per-address", "2", "--job-estimate-ms", "5000", NULL};
    start(args);
    learn_two_kinds();
    char body[128];
    int n = 20;
    static const char *const others[] = {"10.2.0.1", "10.2.0.2", "10.2.0.3", "10.2.0.4"};
    for (int i = 0; i < 4; i++) { /* the first runs, three wait */
        slow_body(body, sizeof body, n++);
        cr_assert_eq(post_for(others[i], body, NULL, NULL, 0), 202);
    }
    for (int i = 0; i < 2; i++) {
        slow_body(body, sizeof body, n++);
        cr_assert_eq(post_for("10.2.0.9", body, NULL, NULL, 0), 202);
    }
    slow_body(body, sizeof body, n++);
    json_t *j;
    char ra[16];
    cr_assert_eq(post_for("10.2.0.9", body, &j, ra, sizeof ra), 429);
    const char *why = json_string_value(json_object_get(json_object_get(j, "error"), "reason"));
    cr_expect(why && strstr(why, "10.2.0.9") && strstr(why, "one address"), "%s", why ? why : "(no reason)");
    int retry = atoi(ra);
    cr_expect_eq(json_integer_value(json_object_get(json_object_get(j, "error"), "retry_after_s")), retry);
    json_decref(j);
    /* Three jobs of 300 ms ahead of its oldest, the running one's rest: 1-2 s. */
    cr_expect(retry >= 1 && retry <= 2, "Retry-After: %s", ra);
    char other[128];
    slow_body(other, sizeof other, n++);
    cr_expect_eq(post_for("10.2.0.5", other, NULL, NULL, 0), 202, "another address still queues");
    /* Asked again when told: taken then, or within half a second more (an
     * estimate rounded up to whole seconds is about, not exactly, right). */
    double t0 = timeutil_now_ms();
    helper_sleep_ms(retry * 1000L);
    int st;
    while ((st = post_for("10.2.0.9", body, NULL, NULL, 0)) == 429 && timeutil_now_ms() - t0 < retry * 1000.0 + 500)
        helper_sleep_ms(100);
    cr_expect_eq(st, 202, "asked again after Retry-After %d s, and for 0.5 s more: %d", retry, st);
}
