/* clientaddr.h -- who a request comes from, for the per-address limits: the
 * peer's address as text, the networks whose X-Forwarded-For is believed,
 * and, behind such a proxy, the client that X-Forwarded-For names.
 * Functions of their arguments alone (no libmicrohttpd, no server state),
 * so the forwarded-for rule can be tested without a socket.
 *
 * The rule: when the peer is a trusted proxy, the client is the rightmost
 * X-Forwarded-For hop that is not a trusted proxy. What a proxy appends
 * cannot be forged by the client, and what the client wrote itself stands to
 * the left of it; so the hops are read from the right, and every
 * X-Forwarded-For line counts, in order, as one list. When the lines are
 * longer than the room kept for them, the rightmost hops are the ones kept.
 *
 * Trusted proxies are networks (CIDR: "10.244.0.0/16", "fd00::/8"; a single
 * address is a network of all its bits), because a proxy in a cluster has
 * an address drawn from a range, not a fixed one. An IPv4 address seen as
 * IPv4-mapped IPv6 (::ffff:10.244.1.7, what a socket bound to "::" reports)
 * is the IPv4 address, both for matching and as text, so one client is one
 * key whichever way it arrived.
 */
#ifndef DV_CLIENTADDR_H
#define DV_CLIENTADDR_H

#include <stddef.h>
#include <sys/socket.h>

#define CLIENTADDR_LEN 64        /* an address as text, with room          */
#define CLIENTADDR_XFF_KEEP 1024 /* bytes of X-Forwarded-For kept, its tail */

/* The X-Forwarded-For lines of one request, joined with commas. Zero it
 * (= {0}) before the first line. */
struct clientaddr_xff {
    char buf[CLIENTADDR_XFF_KEEP];
    size_t n;
};

/* A network: the first `bits` bits of `addr` (network byte order; IPv4 in
 * the first 4 bytes). */
struct clientaddr_net {
    int family; /* AF_INET or AF_INET6 */
    unsigned char addr[16];
    unsigned bits;
};

/* `sa` as text into `out` ("unknown" when NULL or not IPv4/IPv6; an
 * IPv4-mapped IPv6 address as its IPv4 address). */
void clientaddr_of(const struct sockaddr *sa, char *out, size_t len);

/* Parses `text`, "ADDR/BITS" or a single "ADDR" (IPv4 or IPv6), into `net`.
 * Returns 0, or -1 with `err` (ERR_LEN bytes) saying what is wrong: not an
 * address, a prefix length out of range, or bits set past the prefix
 * (10.244.1.0/16: which network was meant?). */
int clientaddr_net_parse(const char *text, struct clientaddr_net *net, char *err);

/* Whether the address written in the first `len` bytes of `text` lies in
 * one of the `nnets` networks. Text that is no address lies in none. */
int clientaddr_in_nets(const struct clientaddr_net *nets, size_t nnets, const char *text, size_t len);

/* Adds one X-Forwarded-For line (NULL: nothing) after those added before. */
void clientaddr_xff_add(struct clientaddr_xff *x, const char *line);

/* The address the limits count, into `out` (`len` bytes): `peer` itself
 * unless it lies in one of the `nproxies` trusted `proxies`, else the
 * rightmost hop of `xff` (NULL: none) that does not, in its usual form (so
 * 2001:DB8::1 and 2001:db8:0::1 are one client), or `peer` when every hop
 * does. When that hop is no address ("1.2.3.4:5678", "[::1]", a name,
 * garbage) the request counts as `peer`, the proxy itself: never as a
 * client of its own (any text would then be a new client with fresh
 * limits), nor as a hop further left (what the client wrote). It then
 * shares the proxy's limits, the tightest there are, and costs no one
 * but the requests counted as the proxy. */
void clientaddr_forwarded(const char *peer, const struct clientaddr_net *proxies, size_t nproxies,
                          const struct clientaddr_xff *xff, char *out, size_t len);

#endif /* DV_CLIENTADDR_H */
