/* test_conntable.c -- the connection table alone, over socket pairs: the
 * per-address share, who a full table evicts or releases, the held
 * requests' bounds, the deadlines and hang-ups the reaper finds, and a
 * proxy's connections counted by the client each request names. A
 * connection the table shut down reads as EOF at the other end of its pair. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "kernels/base/timeutil.h"
#include "server/http/conntable.h"

/* What the table asked to answer now, in order. */
static struct {
    void *req[16];
    int close_after[16];
    int n;
} released;

static void on_release(void *ctx, void *req, int close_after) {
    cr_assert_eq(ctx, &released);
    released.req[released.n] = req;
    released.close_after[released.n++] = close_after;
}

static struct conntable t;
static int peers[16], nconn;

static void setup_limits(unsigned conn, unsigned per_ip, unsigned held, unsigned held_per_ip) {
    const struct conntable_limits lim = {conn, per_ip, held, held_per_ip, 1000.0, 2000.0};
    conntable_init(&t, &lim, on_release, &released);
}

static void teardown(void) {
    conntable_cleanup(&t);
    for (int i = 0; i < nconn; i++) close(peers[i]);
}

/* A connection from `peer`; the far end of its socket kept in peers[]. */
static struct conntable_slot *connect_from(const char *peer, int proxied) {
    int sv[2];
    cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    peers[nconn++] = sv[1];
    struct conntable_slot *s = conntable_open(&t, sv[0], peer, proxied);
    cr_assert_not_null(s);
    return s;
}

/* A connection from `peer` inside request `req`, which must run. */
static struct conntable_slot *busy_from(const char *peer, void *req) {
    struct conntable_slot *s = connect_from(peer, 0);
    conntable_begin(&t, s, req, peer);
    conntable_phase(&t, s, CONNTABLE_BUSY);
    return s;
}

/* 1 when the table shut connection `i` down (its far end reads EOF). */
static int shut(int i) {
    char c;
    ssize_t n = recv(peers[i], &c, 1, MSG_DONTWAIT);
    return n == 0;
}

TestSuite(conntable, .fini = teardown);

Test(conntable, an_address_past_its_share_is_shut_at_once) {
    setup_limits(10, 2, 10, 10);
    connect_from("10.0.0.1", 0);
    connect_from("10.0.0.1", 0);
    connect_from("10.0.0.2", 0);
    cr_expect(!shut(0) && !shut(1) && !shut(2));
    connect_from("10.0.0.1", 0);
    cr_expect(shut(3), "a third connection of 10.0.0.1 was served");
    struct conntable_stats st;
    conntable_stats(&t, &st);
    cr_expect_eq(st.address_refused, 1);
    cr_expect_eq(st.open, 3);
}

Test(conntable, a_full_table_evicts_the_oldest_incomplete_connection_of_the_heaviest_address) {
    setup_limits(4, 10, 10, 10);
    struct conntable_slot *a0 = connect_from("10.0.0.1", 0);
    connect_from("10.0.0.1", 0);
    connect_from("10.0.0.1", 0);
    connect_from("10.0.0.2", 0);
    static int req;
    conntable_begin(&t, a0, &req, "10.0.0.1");
    conntable_phase(&t, a0, CONNTABLE_BUSY); /* inside a request: not evicted */
    connect_from("10.0.0.3", 0);
    cr_expect(!shut(0), "a request that must run was evicted");
    cr_expect(shut(1), "not the heaviest address's oldest incomplete connection");
    cr_expect(!shut(2) && !shut(3) && !shut(4));
    struct conntable_stats st;
    conntable_stats(&t, &st);
    cr_expect_eq(st.evicted, 1);
    cr_expect_eq(st.open, 4);
}

Test(conntable, a_full_busy_table_releases_a_held_request_then_refuses_the_newcomer) {
    setup_limits(2, 10, 10, 10);
    static int r1, r2;
    busy_from("10.0.0.1", &r1);
    struct conntable_slot *b = busy_from("10.0.0.2", &r2);
    conntable_hold(&t, b, &r2);
    struct conntable_slot *c = connect_from("10.0.0.3", 0);
    cr_assert_eq(released.n, 1, "the held request was not released for the newcomer");
    cr_expect_eq(released.req[0], &r2);
    cr_expect_eq(released.close_after[0], 1, "its connection must close after the answer");
    cr_expect(!shut(2), "the newcomer was refused although a held request could give way");
    conntable_end(&t, b, &r2, 1); /* its answer written: it closes now */
    cr_expect(shut(1));
    static int r3;
    conntable_begin(&t, c, &r3, "10.0.0.3");
    conntable_phase(&t, c, CONNTABLE_BUSY); /* now in a request that must run too */
    connect_from("10.0.0.4", 0);            /* everyone else is in a request that must run */
    cr_expect(shut(3));
    struct conntable_stats st;
    conntable_stats(&t, &st);
    cr_expect_eq(st.released_table, 1);
    cr_expect_eq(st.refused, 1);
}

Test(conntable, held_requests_past_a_bound_release_the_oldest) {
    setup_limits(10, 10, 2, 1);
    static int r[3];
    struct conntable_slot *s[3];
    const char *addr[3] = {"10.0.0.1", "10.0.0.1", "10.0.0.2"};
    for (int i = 0; i < 3; i++) {
        s[i] = connect_from(addr[i], 0);
        conntable_begin(&t, s[i], &r[i], addr[i]);
    }
    conntable_hold(&t, s[0], &r[0]);
    conntable_hold(&t, s[1], &r[1]); /* a second of 10.0.0.1: its first goes */
    cr_assert_eq(released.n, 1);
    cr_expect_eq(released.req[0], &r[0]);
    cr_expect_eq(released.close_after[0], 0, "released over a bound, the connection stays");
    conntable_hold(&t, s[2], &r[2]); /* two held: within the total */
    cr_expect_eq(released.n, 1);
    struct conntable_stats st;
    conntable_stats(&t, &st);
    cr_expect_eq(st.held, 2);
    cr_expect_eq(st.released_address, 1);
    conntable_unhold(&t, s[1], &r[1]);
    conntable_stats(&t, &st);
    cr_expect_eq(st.held, 1);
}

Test(conntable, deadlines_shut_connections_that_send_too_slowly_and_spare_busy_ones) {
    setup_limits(10, 10, 10, 10);
    static int r1, r2;
    connect_from("10.0.0.1", 0); /* headers never sent                */
    struct conntable_slot *b = connect_from("10.0.0.2", 0);
    struct conntable_slot *c = connect_from("10.0.0.3", 0);
    conntable_begin(&t, b, &r1, "10.0.0.2"); /* its body: 2000 ms */
    conntable_begin(&t, c, &r2, "10.0.0.3");
    conntable_phase(&t, c, CONNTABLE_BUSY);
    double now = timeutil_now_ms();
    conntable_reap(&t, now + 500);
    cr_expect(!shut(0) && !shut(1) && !shut(2), "shut before its deadline");
    conntable_reap(&t, now + 1500);
    cr_expect(shut(0), "the header deadline passed");
    cr_expect(!shut(1), "a body has 2000 ms");
    conntable_reap(&t, now + 60000);
    cr_expect(shut(1));
    cr_expect(!shut(2), "a request that runs has no deadline");
    struct conntable_stats st;
    conntable_stats(&t, &st);
    cr_expect_eq(st.deadline_closed, 2);
}

Test(conntable, a_held_request_whose_peer_hung_up_is_released_and_shut) {
    setup_limits(10, 10, 10, 10);
    static int r1, r2;
    struct conntable_slot *a = busy_from("10.0.0.1", &r1), *b = busy_from("10.0.0.2", &r2);
    conntable_hold(&t, a, &r1);
    conntable_hold(&t, b, &r2);
    cr_assert_eq(send(peers[1], "x", 1, 0), 1);   /* data is no hang-up */
    cr_assert_eq(shutdown(peers[0], SHUT_WR), 0); /* the peer is done: a half-close is a hang-up too */
    conntable_reap(&t, timeutil_now_ms());
    cr_assert_eq(released.n, 1);
    cr_expect_eq(released.req[0], &r1);
    struct conntable_stats st;
    conntable_stats(&t, &st);
    cr_expect_eq(st.hangups, 1);
    cr_expect_eq(st.held, 1);
    cr_expect_eq(st.open, 1);
}

Test(conntable, a_proxys_connections_count_against_the_clients_it_names) {
    setup_limits(10, 2, 10, 10);
    static int r[4];
    struct conntable_slot *s[4];
    for (int i = 0; i < 4; i++) s[i] = connect_from("10.244.0.9", 1); /* a proxy: no share at connect */
    for (int i = 0; i < 4; i++) cr_expect(!shut(i));
    cr_expect_eq(conntable_begin(&t, s[0], &r[0], "1.2.3.4"), 0);
    cr_expect_eq(conntable_begin(&t, s[1], &r[1], "1.2.3.4"), 0);
    cr_expect_eq(conntable_begin(&t, s[2], &r[2], "1.2.3.4"), 1, "a third connection of 1.2.3.4 passed");
    cr_expect_eq(conntable_begin(&t, s[3], &r[3], "5.6.7.8"), 0);
    /* Idle again, a connection is the proxy's, no client's: 1.2.3.4 holds
     * one connection now, and may open another. */
    conntable_end(&t, s[0], &r[0], 1);
    conntable_end(&t, s[2], &r[2], 1);
    static int again;
    struct conntable_slot *s4 = connect_from("10.244.0.9", 1);
    cr_expect_eq(conntable_begin(&t, s4, &again, "1.2.3.4"), 0, "an idle connection still counted as 1.2.3.4");
    struct conntable_stats st;
    conntable_stats(&t, &st);
    cr_expect_eq(st.address_refused, 1);
}
