/* clientaddr.c -- see clientaddr.h. The lines are joined into one fixed
 * buffer and read from its end; a line that does not fit pushes the oldest
 * bytes out, cut at a comma so no hop is kept half. */
#include "server/http/clientaddr.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

void clientaddr_of(const struct sockaddr *sa, char *out, size_t len) {
    snprintf(out, len, "unknown");
    if (!sa) return;
    if (sa->sa_family == AF_INET) inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, out, (socklen_t)len);
    else if (sa->sa_family == AF_INET6)
        inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, out, (socklen_t)len);
}

void clientaddr_xff_add(struct clientaddr_xff *x, const char *line) {
    if (!line) return;
    size_t l = strlen(line), room = sizeof x->buf - 1;
    if (l > room) { /* longer than all the room: the whole hops of its tail */
        const char *tail = line + l - room;
        if (tail[-1] != ',') {
            const char *comma = memchr(tail, ',', room);
            tail = comma ? comma + 1 : line + l;
        }
        l = (size_t)(line + l - tail);
        line = tail;
        x->n = 0;
    }
    if (x->n && x->n + 1 + l > room) { /* drop whole hops from the front */
        size_t drop = x->n + 1 + l - room;
        const char *cut = drop < x->n ? memchr(x->buf + drop, ',', x->n - drop) : NULL;
        size_t keep = cut ? x->n - (size_t)(cut + 1 - x->buf) : 0;
        memmove(x->buf, x->buf + x->n - keep, keep);
        x->n = keep;
    }
    if (x->n) x->buf[x->n++] = ',';
    memcpy(x->buf + x->n, line, l);
    x->n += l;
    x->buf[x->n] = '\0';
}

static int is_proxy(const char *const *proxies, size_t nproxies, const char *addr, size_t n) {
    for (size_t i = 0; i < nproxies && proxies[i]; i++)
        if (strlen(proxies[i]) == n && strncmp(proxies[i], addr, n) == 0) return 1;
    return 0;
}

void clientaddr_forwarded(const char *peer, const char *const *proxies, size_t nproxies,
                          const struct clientaddr_xff *xff, char *out, size_t len) {
    snprintf(out, len, "%s", peer);
    if (!is_proxy(proxies, nproxies, peer, strlen(peer)) || !xff) return;
    const char *begin = xff->buf, *end = xff->buf + xff->n;
    while (end > begin) {
        const char *start = end;
        while (start > begin && start[-1] != ',') start--;
        const char *b = start, *e = end;
        while (b < e && (*b == ' ' || *b == '\t')) b++;
        while (e > b && (e[-1] == ' ' || e[-1] == '\t')) e--;
        if (e > b && !is_proxy(proxies, nproxies, b, (size_t)(e - b))) {
            snprintf(out, len, "%.*s", (int)(e - b < 63 ? e - b : 63), b);
            return;
        }
        end = start > begin ? start - 1 : begin;
    }
}
