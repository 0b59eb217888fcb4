/* clientaddr.h -- who a request comes from, for the per-address limits: the
 * peer's address as text and, behind trusted proxies, the client that
 * X-Forwarded-For names. Functions of their arguments alone (no
 * libmicrohttpd, no server state), so the forwarded-for rule can be tested
 * without a socket.
 *
 * The rule: when the peer is a trusted proxy, the client is the rightmost
 * X-Forwarded-For hop that is not a trusted proxy. What a proxy appends
 * cannot be forged by the client, and what the client wrote itself stands to
 * the left of it; so the hops are read from the right, and every
 * X-Forwarded-For line counts, in order, as one list. When the lines are
 * longer than the room kept for them, the rightmost hops are the ones kept.
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

/* `sa` as text into `out` ("unknown" when NULL or not IPv4/IPv6). */
void clientaddr_of(const struct sockaddr *sa, char *out, size_t len);

/* Adds one X-Forwarded-For line (NULL: nothing) after those added before. */
void clientaddr_xff_add(struct clientaddr_xff *x, const char *line);

/* The address the limits count, into `out` (`len` bytes, at most 63
 * characters kept): `peer` itself unless it is one of the `nproxies` trusted
 * `proxies` (exact text), else the rightmost hop of `xff` (NULL: none) that
 * is not one of them, or `peer` when every hop is. */
void clientaddr_forwarded(const char *peer, const char *const *proxies, size_t nproxies,
                          const struct clientaddr_xff *xff, char *out, size_t len);

#endif /* DV_CLIENTADDR_H */
