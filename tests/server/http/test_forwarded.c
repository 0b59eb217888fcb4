/* test_forwarded.c -- the forwarded-for rule on the real `divergence serve`
 * (tests/fake_worker stands in for the GPU): behind a trusted proxy, an
 * X-Forwarded-For hop that is no address is no client of its own, so
 * varying it buys nothing; and a trusted proxy of a whole address space is
 * taken with a warning. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* POST /measure from 127.0.0.1 (the trusted proxy) with `xff` as its
 * X-Forwarded-For (NULL: none); the status. */
static int post_for(const char *xff) {
    char h[256] = "";
    if (xff) snprintf(h, sizeof h, "X-Forwarded-For: %s\r\n", xff);
    struct helper_response r;
    const char *body = "{\"part\": 1}";
    int st = helper_request(srv.port, "POST", "/measure", h, body, strlen(body), &r) == 0 ? r.status : -1;
    helper_response_free(&r);
    return st;
}

/* Hops that are no address, each different: one key (the proxy's), so the
 * fourth is over a rate limit of 3 where four distinct texts would have been
 * four fresh clients; the proxy's own requests share that key; a client
 * with an address keeps its own budget. */
Test(forwarded, a_hop_that_is_no_address_is_the_proxy_not_a_new_client, .fini = stop) {
    static const char *const args[] = {"--rate-limit", "3", "--trust-forwarded", NULL};
    start(args);
    static const char *const hops[] = {"1.2.3.4:1001", "1.2.3.4:1002", "garbage", "[2001:db8::1]:443"};
    int st[4];
    for (int i = 0; i < 4; i++) st[i] = post_for(hops[i]);
    cr_assert(st[2] == 202 || st[2] == 200, "%d", st[2]);
    cr_expect_eq(st[3], 429, "a hop that is no address was a new client: %d", st[3]);
    cr_expect_eq(post_for(NULL), 429, "they were counted as the proxy itself");
    const int other = post_for("198.51.100.7");
    cr_expect(other == 202 || other == 200, "a client with an address: %d", other);
}

/* --trusted-proxy of every address of a family warns at startup, naming
 * the flag and the risk; a network does not. */
Test(forwarded, a_trusted_proxy_of_the_whole_address_space_warns, .fini = stop) {
    static const char *const whole[] = {"--trusted-proxy", "0.0.0.0/0", "--trusted-proxy", "::/0", NULL};
    start(whole);
    char *log = helper_server_log(&srv);
    cr_assert_not_null(log);
    cr_expect(strstr(log, "warning: --trusted-proxy 0.0.0.0/0 trusts every IPv4 address") &&
                  strstr(log, "warning: --trusted-proxy ::/0 trusts every IPv6 address") &&
                  strstr(log, "escape the per-address limits"),
              "%s", log);
    free(log);
    stop();
    static const char *const some[] = {"--trusted-proxy", "10.0.0.0/8", "--trusted-proxy", "::ffff:0.0.0.0/97", NULL};
    start(some);
    log = helper_server_log(&srv);
    cr_assert_not_null(log);
    cr_expect_null(strstr(log, "warning: --trusted-proxy"), "%s", log);
    free(log);
}
