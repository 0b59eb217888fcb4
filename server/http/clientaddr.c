/* clientaddr.c -- see clientaddr.h. The lines are joined into one fixed
 * buffer and read from its end; a line that does not fit pushes the oldest
 * bytes out, cut at a comma so no hop is kept half. Addresses are compared
 * as bytes (inet_pton), never as text, so every way of writing one address
 * is the same address, and a hop that is no address is never a client. */
#include "server/http/clientaddr.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/base/status.h"

static const unsigned char V4_MAPPED[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

/* The address in `text` (`len` bytes) as bytes: `*family` AF_INET (4 bytes
 * in out) or AF_INET6 (16), an IPv4-mapped IPv6 address as AF_INET. Returns
 * 0, or -1 when the text is no address. */
static int parse_addr(const char *text, size_t len, int *family, unsigned char out[16]) {
    char buf[CLIENTADDR_LEN];
    if (len >= sizeof buf) return -1;
    memcpy(buf, text, len);
    buf[len] = '\0';
    if (inet_pton(AF_INET, buf, out) == 1) {
        *family = AF_INET;
        return 0;
    }
    if (inet_pton(AF_INET6, buf, out) != 1) return -1;
    *family = AF_INET6;
    if (memcmp(out, V4_MAPPED, sizeof V4_MAPPED) == 0) {
        memmove(out, out + 12, 4);
        memset(out + 4, 0, 12);
        *family = AF_INET;
    }
    return 0;
}

void clientaddr_of(const struct sockaddr *sa, char *out, size_t len) {
    snprintf(out, len, "unknown");
    if (!sa) return;
    if (sa->sa_family == AF_INET) {
        inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, out, (socklen_t)len);
    } else if (sa->sa_family == AF_INET6) {
        const unsigned char *a = ((const struct sockaddr_in6 *)sa)->sin6_addr.s6_addr;
        if (memcmp(a, V4_MAPPED, sizeof V4_MAPPED) == 0) inet_ntop(AF_INET, a + 12, out, (socklen_t)len);
        else inet_ntop(AF_INET6, a, out, (socklen_t)len);
    }
}

int clientaddr_net_parse(const char *text, struct clientaddr_net *net, char *err) {
    memset(net, 0, sizeof *net);
    const char *slash = strchr(text, '/');
    size_t alen = slash ? (size_t)(slash - text) : strlen(text);
    if (parse_addr(text, alen, &net->family, net->addr) < 0) {
        dv_seterr(err, "%s: not an IPv4 or IPv6 address or network (e.g. 10.244.0.0/16, fd00::/8, 127.0.0.1)", text);
        return -1;
    }
    /* ::ffff:10.0.0.0/104 is 10.0.0.0/8: the prefix counts in IPv6 bits. */
    int mapped = net->family == AF_INET && strchr(text, ':') != NULL;
    unsigned max = net->family == AF_INET ? 32 : 128;
    net->bits = max;
    if (slash) {
        const char *b = slash + 1;
        char *end;
        errno = 0;
        unsigned long bits = strtoul(b, &end, 10);
        unsigned top = mapped ? 128 : max, low = mapped ? 96 : 0;
        if (!*b || *end || *b < '0' || *b > '9' || errno || bits > top || bits < low) {
            dv_seterr(err, "%s: the prefix length must be a number from %u to %u", text, low, top);
            return -1;
        }
        net->bits = (unsigned)bits - low;
    }
    unsigned char masked[16];
    memcpy(masked, net->addr, sizeof masked);
    for (unsigned i = net->bits; i < max; i++) masked[i / 8] &= (unsigned char)~(0x80u >> (i % 8));
    if (memcmp(masked, net->addr, sizeof masked) != 0) {
        char m[CLIENTADDR_LEN];
        inet_ntop(net->family, masked, m, sizeof m);
        dv_seterr(err, "%s: the address has bits set past the /%lu prefix (did you mean %s/%lu?)", text,
                  strtoul(slash + 1, NULL, 10), m, (unsigned long)net->bits);
        return -1;
    }
    return 0;
}

static int in_net(const struct clientaddr_net *n, int family, const unsigned char *a) {
    if (n->family != family) return 0;
    unsigned full = n->bits / 8, rest = n->bits % 8;
    if (memcmp(n->addr, a, full) != 0) return 0;
    if (!rest) return 1;
    unsigned char mask = (unsigned char)(0xffu << (8 - rest));
    return (n->addr[full] & mask) == (a[full] & mask);
}

int clientaddr_in_nets(const struct clientaddr_net *nets, size_t nnets, const char *text, size_t len) {
    int family;
    unsigned char a[16];
    if (!nnets || parse_addr(text, len, &family, a) < 0) return 0;
    for (size_t i = 0; i < nnets; i++)
        if (in_net(&nets[i], family, a)) return 1;
    return 0;
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

/* `hop` (`n` bytes) into `out` in its usual form when it is an address;
 * -1 (out untouched) when it is not. */
static int put_hop(const char *hop, size_t n, char *out, size_t len) {
    int family;
    unsigned char a[16];
    char text[CLIENTADDR_LEN];
    if (parse_addr(hop, n, &family, a) != 0 || !inet_ntop(family, a, text, sizeof text)) return -1;
    snprintf(out, len, "%s", text);
    return 0;
}

void clientaddr_forwarded(const char *peer, const struct clientaddr_net *proxies, size_t nproxies,
                          const struct clientaddr_xff *xff, char *out, size_t len) {
    snprintf(out, len, "%s", peer);
    if (!clientaddr_in_nets(proxies, nproxies, peer, strlen(peer)) || !xff) return;
    const char *begin = xff->buf, *end = xff->buf + xff->n;
    while (end > begin) {
        const char *start = end;
        while (start > begin && start[-1] != ',') start--;
        const char *b = start, *e = end;
        while (b < e && (*b == ' ' || *b == '\t')) b++;
        while (e > b && (e[-1] == ' ' || e[-1] == '\t')) e--;
        if (e > b && !clientaddr_in_nets(proxies, nproxies, b, (size_t)(e - b))) {
            /* The client's hop, as a trusted proxy wrote it: an address, or
             * (1.2.3.4:5678, a name, garbage) the peer stays: each such text
             * counted as its own client would mint a fresh key per request,
             * and a hop further left is the client's own word. */
            put_hop(b, (size_t)(e - b), out, len);
            return;
        }
        end = start > begin ? start - 1 : begin;
    }
}
