/* test_clientaddr.c -- who a request is counted as (server/http/clientaddr.h):
 * the peer unless it is a trusted proxy, else the rightmost X-Forwarded-For
 * hop that is not one, over every line of the header, and still the
 * rightmost hops when the header is longer than the room kept for it;
 * trusted proxies as networks (CIDR, IPv4 and IPv6) with clear errors for
 * what is not one. */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/un.h>

#include "kernels/base/status.h"
#include "server/http/clientaddr.h"

static struct clientaddr_net PROXIES[8];
static size_t nproxies;

/* Parses `texts` into PROXIES (each must parse). */
static void trust(const char *const *texts) {
    char err[ERR_LEN];
    for (nproxies = 0; texts[nproxies]; nproxies++)
        cr_assert_eq(clientaddr_net_parse(texts[nproxies], &PROXIES[nproxies], err), 0, "%s: %s", texts[nproxies], err);
}

static void trust_default(void) { trust((const char *[]){"127.0.0.1", "::1", "10.0.0.5", NULL}); }

TestSuite(clientaddr, .init = trust_default);

/* The address counted for `peer` with X-Forwarded-For lines `lines`. */
static const char *counted(const char *peer, const char *const *lines) {
    static char out[CLIENTADDR_LEN];
    struct clientaddr_xff x = {.n = 0};
    x.buf[0] = '\0';
    for (size_t i = 0; lines && lines[i]; i++) clientaddr_xff_add(&x, lines[i]);
    clientaddr_forwarded(peer, PROXIES, nproxies, &x, out, sizeof out);
    return out;
}

Test(clientaddr, only_a_trusted_peer_is_looked_behind) {
    cr_expect_str_eq(counted("192.0.2.9", (const char *[]){"10.1.1.1", NULL}), "192.0.2.9");
    cr_expect_str_eq(counted("127.0.0.1", (const char *[]){"10.1.1.1", NULL}), "10.1.1.1");
    cr_expect_str_eq(counted("::1", (const char *[]){"2001:db8::7", NULL}), "2001:db8::7");
    cr_expect_str_eq(counted("127.0.0.1", NULL), "127.0.0.1", "no header: the proxy itself");
    char out[CLIENTADDR_LEN];
    clientaddr_forwarded("127.0.0.1", PROXIES, 0, NULL, out, sizeof out);
    cr_expect_str_eq(out, "127.0.0.1", "no proxies configured");
}

Test(clientaddr, the_rightmost_hop_that_is_not_a_proxy_counts) {
    cr_expect_str_eq(counted("127.0.0.1", (const char *[]){"192.0.2.1, 10.1.1.1", NULL}), "10.1.1.1",
                     "what the client wrote to the left is not believed");
    cr_expect_str_eq(counted("127.0.0.1", (const char *[]){"203.0.113.7, 10.0.0.5", NULL}), "203.0.113.7",
                     "a chain of trusted proxies is looked through");
    cr_expect_str_eq(counted("127.0.0.1", (const char *[]){"10.0.0.5, 127.0.0.1", NULL}), "127.0.0.1",
                     "every hop a proxy: the peer");
    cr_expect_str_eq(counted("127.0.0.1", (const char *[]){"203.0.113.1", "198.51.100.2", NULL}), "198.51.100.2",
                     "several lines are one list, in order");
    cr_expect_str_eq(counted("127.0.0.1", (const char *[]){" , \t198.51.100.3 ,  ", NULL}), "198.51.100.3",
                     "blanks and empty hops are passed over");
}

/* A hop that is no address is never a client of its own: the request
 * counts as the proxy (the peer), not as that text (a fresh key, fresh
 * limits, for every text a client writes) nor as a hop to its left (the
 * client's own word). */
Test(clientaddr, a_hop_that_is_no_address_counts_as_the_proxy_itself) {
    static char long_hop[200];
    memset(long_hop, 'a', sizeof long_hop - 1);
    const char *const bad[] = {"1.2.3.4:8080", "[2001:db8::1]:443", "[2001:db8::1]", "unknown", "_hidden",
                               "garbage", "203.0.113.5 x", "fe80::1%eth0", "1.2.3.4.5", "0x7f.1", long_hop};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cr_expect_str_eq(counted("127.0.0.1", (const char *[]){bad[i], NULL}), "127.0.0.1", "%.40s", bad[i]);
        char line[300];
        snprintf(line, sizeof line, "198.51.100.9, %s", bad[i]);
        cr_expect_str_eq(counted("127.0.0.1", (const char *[]){line, NULL}), "127.0.0.1",
                         "the hop to its left is the client's own word: %.60s", line);
        snprintf(line, sizeof line, "%s, 10.0.0.5", bad[i]);
        cr_expect_str_eq(counted("::1", (const char *[]){line, NULL}), "::1", "behind a chain of proxies: %.60s", line);
    }
}

Test(clientaddr, a_header_longer_than_the_room_keeps_its_rightmost_hops) {
    static char longline[6000];
    size_t n = 0;
    while (n < 5000) n += (size_t)snprintf(longline + n, sizeof longline - n, "198.51.100.%zu, ", n % 250);
    snprintf(longline + n, sizeof longline - n, "10.1.1.1");
    cr_expect_str_eq(counted("127.0.0.1", (const char *[]){longline, NULL}), "10.1.1.1", "one long line");
    cr_expect_str_eq(counted("127.0.0.1", (const char *[]){longline, "10.1.1.2", NULL}), "10.1.1.2",
                     "a line after a long one");
    cr_expect_str_eq(counted("127.0.0.1", (const char *[]){"10.1.1.3", longline, NULL}), "10.1.1.1",
                     "a long line after a short one");
    /* Many lines of moderate length: the newest kept, none kept half. */
    const char *many[40];
    static char lines[39][200];
    for (int i = 0; i < 39; i++) {
        snprintf(lines[i], sizeof lines[i], "192.0.2.%d, 192.0.2.%d, 192.0.2.%d, 192.0.2.%d, 192.0.2.%d, 192.0.2.%d", i,
                 i, i, i, i, i + 100);
        many[i] = lines[i];
    }
    many[39] = NULL;
    cr_expect_str_eq(counted("127.0.0.1", many), "192.0.2.138");
    struct clientaddr_xff x = {.n = 0};
    for (int i = 0; i < 39; i++) clientaddr_xff_add(&x, lines[i]);
    cr_expect_leq(x.n, sizeof x.buf - 1);
    cr_expect_eq(strlen(x.buf), x.n);
    const char *first = x.buf + strspn(x.buf, " ");
    cr_expect_eq(strncmp(first, "192.0.2.", 8), 0, "the oldest hop kept is whole: %.20s", x.buf);
}

Test(clientaddr, the_peer_as_text) {
    char out[CLIENTADDR_LEN];
    struct sockaddr_in a4 = {.sin_family = AF_INET};
    inet_pton(AF_INET, "192.0.2.44", &a4.sin_addr);
    clientaddr_of((struct sockaddr *)&a4, out, sizeof out);
    cr_expect_str_eq(out, "192.0.2.44");
    struct sockaddr_in6 a6 = {.sin6_family = AF_INET6};
    inet_pton(AF_INET6, "2001:db8::1", &a6.sin6_addr);
    clientaddr_of((struct sockaddr *)&a6, out, sizeof out);
    cr_expect_str_eq(out, "2001:db8::1");
    struct sockaddr_un un = {.sun_family = AF_UNIX};
    clientaddr_of((struct sockaddr *)&un, out, sizeof out);
    cr_expect_str_eq(out, "unknown");
    clientaddr_of(NULL, out, sizeof out);
    cr_expect_str_eq(out, "unknown");
}

Test(clientaddr, a_trusted_network_covers_its_whole_range) {
    trust((const char *[]){"10.244.0.0/16", "fd00::/8", "192.0.2.128/25", NULL});
    cr_expect_str_eq(counted("10.244.3.7", (const char *[]){"198.51.100.1", NULL}), "198.51.100.1");
    cr_expect_str_eq(counted("10.244.255.254", (const char *[]){"198.51.100.2", NULL}), "198.51.100.2");
    cr_expect_str_eq(counted("10.245.0.1", (const char *[]){"198.51.100.3", NULL}), "10.245.0.1",
                     "just outside the /16");
    cr_expect_str_eq(counted("fd12:3456::9", (const char *[]){"2001:db8::5", NULL}), "2001:db8::5");
    cr_expect_str_eq(counted("fe80::1", (const char *[]){"2001:db8::5", NULL}), "fe80::1", "outside fd00::/8");
    cr_expect_str_eq(counted("192.0.2.200", (const char *[]){"198.51.100.4", NULL}), "198.51.100.4");
    cr_expect_str_eq(counted("192.0.2.127", (const char *[]){"198.51.100.4", NULL}), "192.0.2.127", "below the /25");
    cr_expect_str_eq(counted("10.244.3.7", (const char *[]){"198.51.100.9, 10.244.9.9", NULL}), "198.51.100.9",
                     "a chain of proxies inside the range is looked through");
}

Test(clientaddr, ipv4_mapped_addresses_are_ipv4) {
    trust((const char *[]){"10.244.0.0/16", NULL});
    cr_expect_str_eq(counted("::ffff:10.244.1.2", (const char *[]){"198.51.100.1", NULL}), "198.51.100.1",
                     "a dual-stack socket's view of a proxy in the range");
    cr_expect_str_eq(counted("10.244.1.2", (const char *[]){"::ffff:198.51.100.7", NULL}), "198.51.100.7");
    cr_expect_str_eq(counted("10.244.1.2", (const char *[]){"2001:DB8:0:0::1", NULL}), "2001:db8::1",
                     "a hop is written in its usual form");
    char out[CLIENTADDR_LEN];
    struct sockaddr_in6 a6 = {.sin6_family = AF_INET6};
    inet_pton(AF_INET6, "::ffff:192.0.2.44", &a6.sin6_addr);
    clientaddr_of((struct sockaddr *)&a6, out, sizeof out);
    cr_expect_str_eq(out, "192.0.2.44");
    struct clientaddr_net n;
    char err[ERR_LEN];
    cr_assert_eq(clientaddr_net_parse("::ffff:10.0.0.0/104", &n, err), 0, "%s", err);
    cr_expect(clientaddr_in_nets(&n, 1, "10.9.8.7", 8));
    cr_expect(!clientaddr_in_nets(&n, 1, "11.0.0.1", 8));
}

Test(clientaddr, what_is_no_network_is_refused_with_the_reason) {
    static const struct {
        const char *text, *why;
    } bad[] = {
        {"10.244.0.0/33", "prefix length must be a number from 0 to 32"},
        {"fd00::/129", "from 0 to 128"},
        {"10.244.0.0/", "prefix length"},
        {"10.244.0.0/1x", "prefix length"},
        {"10.244.0.0/-1", "prefix length"},
        {"10.244.1.0/16", "did you mean 10.244.0.0/16?"},
        {"fd00::1/8", "did you mean fd00::/8?"},
        {"10.244.0.0.0/16", "not an IPv4 or IPv6 address"},
        {"proxy.local", "not an IPv4 or IPv6 address"},
        {"", "not an IPv4 or IPv6 address"},
        {"::ffff:10.0.0.0/90", "from 96 to 128"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct clientaddr_net n;
        char err[ERR_LEN] = "";
        cr_expect_eq(clientaddr_net_parse(bad[i].text, &n, err), -1, "%s was taken", bad[i].text);
        cr_expect(strstr(err, bad[i].why) != NULL, "%s: %s", bad[i].text, err);
        cr_expect(strncmp(err, bad[i].text, strlen(bad[i].text)) == 0, "the error names the value: %s", err);
    }
    struct clientaddr_net n;
    char err[ERR_LEN];
    cr_expect_eq(clientaddr_net_parse("0.0.0.0/0", &n, err), 0, "%s", err);
    cr_expect(clientaddr_in_nets(&n, 1, "203.0.113.5", 11), "/0 is every IPv4 address");
    cr_expect(!clientaddr_in_nets(&n, 1, "2001:db8::1", 11), "but no IPv6 one");
    cr_expect(!clientaddr_in_nets(&n, 1, "unknown", 7), "text that is no address is in no network");
}
