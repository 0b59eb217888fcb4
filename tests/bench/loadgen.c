/* loadgen.c -- an HTTP/1.1 keep-alive load generator whose connections come
 * from many loopback addresses, for tests/bench/service_bench.py.
 *
 * The server limits open connections per client address (--per-ip-limit), so
 * a wide load from one address measures the limiter, not the server. wrk
 * cannot choose a source address; this generator binds connection i to
 * FIRST + (i mod ADDRESSES) (any 127.x.y.z is the loopback interface on
 * Linux) before connecting, so 512 connections from 32 addresses are 16 per
 * client, as 32 real clients would be.
 *
 * How it works: THREADS threads, each with its own epoll set and its share of
 * the connections. A connection sends one request, reads one whole response
 * (status line, headers, Content-Length body; nothing is pipelined), records
 * the latency from the first byte written to the last byte read, and sends
 * the next, until DURATION seconds have passed; requests still in flight then
 * are not counted (as wrk does). A connection the server closes, refuses or
 * answers with "Connection: close" is counted and reopened at once. Latencies
 * go into a histogram of 1 us buckets below 10 ms and 100 us buckets above,
 * merged across threads for the percentiles. The project's own HTTP client
 * (the refresh client) makes one blocking request at a time, which is no
 * load generator; this one keeps its own minimal HTTP/1.1 framing for that
 * reason, and refuses chunked responses rather than guess at them.
 *
 * Usage: bench_loadgen -c CONNS [-t THREADS] [-d SECONDS] [-a ADDRESSES]
 *                      [-s FIRST_SOURCE] [-m METHOD] [-b BODY] [-H "K: V"]...
 *                      http://IPV4:PORT/PATH
 * Prints one JSON object on stdout; exit 0, or 2 for a bad argument.
 */
#define _GNU_SOURCE
#include "kernels/base/timeutil.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#define IN_CAP 65536
#define FINE_US 10000                         /* 1 us buckets below 10 ms */
#define COARSE 100000                         /* then 100 us buckets, to 10 s */
#define BUCKETS (FINE_US + COARSE + 1)        /* the last one: 10 s and over */

enum phase { CONNECTING, WRITING, HEADERS, BODY };

struct conn {
    int fd;
    unsigned index; /* which connection: picks its source address */
    enum phase phase;
    size_t written;
    size_t have;          /* bytes in in[] */
    long long body_left;  /* Content-Length still to read */
    int close_after;      /* the response said Connection: close */
    int status;           /* the response's status code */
    double sent_ms;
    char in[IN_CAP];
};

struct counts {
    unsigned long long requests, status[6], connect, read, write, closed, framing;
};

struct worker {
    pthread_t tid;
    unsigned first, n; /* connections [first, first + n) */
    struct counts c;
    uint64_t *hist;
    int error; /* setup failure: errno */
};

static struct {
    struct sockaddr_in server;
    uint32_t source; /* host order */
    unsigned addresses;
    char *request;
    size_t request_len;
    double end_ms;
} cfg;

static void fail_usage(const char *msg) {
    fprintf(stderr, "bench_loadgen: %s\n"
                    "usage: bench_loadgen -c CONNS [-t THREADS] [-d SECONDS] [-a ADDRESSES] [-s FIRST_SOURCE]\n"
                    "                     [-m METHOD] [-b BODY] [-H 'K: V']... http://IPV4:PORT/PATH\n",
            msg);
    exit(2);
}

static void record(uint64_t *hist, double ms) {
    long long us = (long long)(ms * 1000.0);
    size_t b;
    if (us < 0) us = 0;
    if (us < FINE_US) b = (size_t)us;
    else if (us < FINE_US + (long long)COARSE * 100) b = FINE_US + (size_t)((us - FINE_US) / 100);
    else b = BUCKETS - 1;
    hist[b]++;
}

static double bucket_ms(size_t b) {
    if (b < FINE_US) return (double)b / 1000.0;
    return (FINE_US + (double)(b - FINE_US) * 100.0) / 1000.0;
}

static double percentile(const uint64_t *hist, unsigned long long total, double q) {
    if (total == 0) return 0.0;
    unsigned long long want = (unsigned long long)(q * (double)total), seen = 0;
    if (want >= total) want = total - 1;
    for (size_t b = 0; b < BUCKETS; b++) {
        seen += hist[b];
        if (seen > want) return bucket_ms(b);
    }
    return bucket_ms(BUCKETS - 1);
}

/* Opens connection c's socket from its source address and starts connecting. */
static int conn_open(int ep, struct conn *c, struct counts *k) {
    c->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (c->fd < 0) {
        k->connect++;
        return -1;
    }
    int one = 1;
    setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (cfg.addresses > 0) {
        /* Let connect() pick the port per destination, so each source address
         * has the whole ephemeral range. */
        setsockopt(c->fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof one);
        struct sockaddr_in src = {.sin_family = AF_INET};
        src.sin_addr.s_addr = htonl(cfg.source + c->index % cfg.addresses);
        if (bind(c->fd, (struct sockaddr *)&src, sizeof src) != 0) {
            k->connect++;
            close(c->fd);
            c->fd = -1;
            return -1;
        }
    }
    c->phase = CONNECTING;
    c->written = 0;
    c->have = 0;
    if (connect(c->fd, (struct sockaddr *)&cfg.server, sizeof cfg.server) != 0 && errno != EINPROGRESS) {
        k->connect++;
        close(c->fd);
        c->fd = -1;
        return -1;
    }
    struct epoll_event ev = {.events = EPOLLOUT, .data.ptr = c};
    if (epoll_ctl(ep, EPOLL_CTL_ADD, c->fd, &ev) != 0) {
        k->connect++;
        close(c->fd);
        c->fd = -1;
        return -1;
    }
    return 0;
}

static void conn_reopen(int ep, struct conn *c, struct counts *k) {
    if (c->fd >= 0) {
        epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
        close(c->fd);
        c->fd = -1;
    }
    if (timeutil_now_ms() < cfg.end_ms) conn_open(ep, c, k);
}

static void want(int ep, struct conn *c, uint32_t events) {
    struct epoll_event ev = {.events = events, .data.ptr = c};
    epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev);
}

/* Writes what is left of the request; 1 when it is all out. */
static int conn_write(int ep, struct conn *c, struct counts *k) {
    if (c->written == 0) c->sent_ms = timeutil_now_ms();
    while (c->written < cfg.request_len) {
        ssize_t n = write(c->fd, cfg.request + c->written, cfg.request_len - c->written);
        if (n > 0) {
            c->written += (size_t)n;
            continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
            want(ep, c, EPOLLOUT);
            return 0;
        }
        k->write++;
        conn_reopen(ep, c, k);
        return 0;
    }
    c->phase = HEADERS;
    c->have = 0;
    want(ep, c, EPOLLIN);
    return 1;
}

/* Parses the status line and headers in c->in[0, end); -1 when unusable. */
static int parse_head(struct conn *c, size_t end, int *status) {
    c->in[end - 1] = '\0';
    if (strncmp(c->in, "HTTP/1.", 7) != 0 || end < 12) return -1;
    *status = atoi(c->in + 9);
    c->body_left = -1;
    c->close_after = strncmp(c->in, "HTTP/1.0", 8) == 0;
    for (char *line = strstr(c->in, "\r\n"); line && line[2]; line = strstr(line + 2, "\r\n")) {
        char *h = line + 2;
        if (strncasecmp(h, "Content-Length:", 15) == 0) c->body_left = atoll(h + 15);
        else if (strncasecmp(h, "Transfer-Encoding:", 18) == 0) return -1; /* chunked: refused, see the top */
        else if (strncasecmp(h, "Connection:", 11) == 0) {
            const char *v = h + 11;
            while (*v == ' ') v++;
            if (strncasecmp(v, "close", 5) == 0) c->close_after = 1;
        }
    }
    if (c->body_left >= 0) return 0;
    if (*status != 204 && *status != 304) return -1; /* no length: read-to-close framing, refused */
    c->body_left = 0;
    return 0;
}

static void response_done(int ep, struct conn *c, struct worker *w, int status) {
    double now = timeutil_now_ms();
    if (now <= cfg.end_ms) {
        w->c.requests++;
        w->c.status[status / 100 >= 1 && status / 100 <= 5 ? status / 100 : 0]++;
        record(w->hist, now - c->sent_ms);
    }
    if (c->close_after || now >= cfg.end_ms) {
        conn_reopen(ep, c, &w->c);
        return;
    }
    c->phase = WRITING;
    c->written = 0;
    conn_write(ep, c, &w->c);
}

static void conn_read(int ep, struct conn *c, struct worker *w) {
    for (;;) {
        if (c->phase == BODY) {
            char sink[IN_CAP];
            ssize_t n = read(c->fd, sink, sizeof sink);
            if (n > 0) {
                c->body_left -= n;
                if (c->body_left < 0) { /* more than the response: nothing is pipelined */
                    w->c.framing++;
                    conn_reopen(ep, c, &w->c);
                    return;
                }
                if (c->body_left == 0) {
                    response_done(ep, c, w, c->status);
                    return;
                }
                continue;
            }
            if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
            if (n == 0) w->c.closed++;
            else w->c.read++;
            conn_reopen(ep, c, &w->c);
            return;
        }
        ssize_t n = read(c->fd, c->in + c->have, IN_CAP - 1 - c->have);
        if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
        if (n <= 0) {
            if (n == 0) w->c.closed++;
            else w->c.read++;
            conn_reopen(ep, c, &w->c);
            return;
        }
        c->have += (size_t)n;
        c->in[c->have] = '\0';
        char *eoh = strstr(c->in, "\r\n\r\n");
        if (!eoh) {
            if (c->have >= IN_CAP - 1) {
                w->c.framing++;
                conn_reopen(ep, c, &w->c);
                return;
            }
            continue;
        }
        size_t head = (size_t)(eoh - c->in) + 4, extra = c->have - head;
        int status = 0;
        if (parse_head(c, head, &status) != 0 || (long long)extra > c->body_left) {
            w->c.framing++;
            conn_reopen(ep, c, &w->c);
            return;
        }
        c->body_left -= (long long)extra;
        if (c->body_left == 0) {
            response_done(ep, c, w, status);
            return;
        }
        c->phase = BODY;
        c->status = status;
    }
}

static void *worker_run(void *arg) {
    struct worker *w = arg;
    int ep = epoll_create1(EPOLL_CLOEXEC);
    struct conn *conns = calloc(w->n, sizeof *conns);
    if (ep < 0 || !conns) {
        w->error = errno ? errno : ENOMEM;
        free(conns);
        if (ep >= 0) close(ep);
        return NULL;
    }
    for (unsigned i = 0; i < w->n; i++) {
        conns[i].fd = -1;
        conns[i].index = w->first + i;
        conn_open(ep, &conns[i], &w->c);
    }
    struct epoll_event evs[256];
    for (;;) {
        double left = cfg.end_ms - timeutil_now_ms();
        if (left <= 0) break;
        int n = epoll_wait(ep, evs, 256, left > 100 ? 100 : (int)left + 1);
        for (int i = 0; i < n; i++) {
            struct conn *c = evs[i].data.ptr;
            if (c->fd < 0) continue;
            if (c->phase == CONNECTING) {
                int err = 0;
                socklen_t len = sizeof err;
                getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len);
                if (err != 0 || (evs[i].events & (EPOLLERR | EPOLLHUP))) {
                    w->c.connect++;
                    conn_reopen(ep, c, &w->c);
                    continue;
                }
                c->phase = WRITING;
                conn_write(ep, c, &w->c);
            } else if (c->phase == WRITING) {
                conn_write(ep, c, &w->c);
            } else {
                conn_read(ep, c, w);
            }
        }
        /* A connection whose reopen failed (no fd) tries again each turn. */
        for (unsigned i = 0; i < w->n; i++)
            if (conns[i].fd < 0 && timeutil_now_ms() < cfg.end_ms) conn_open(ep, &conns[i], &w->c);
    }
    for (unsigned i = 0; i < w->n; i++)
        if (conns[i].fd >= 0) close(conns[i].fd);
    free(conns);
    close(ep);
    return NULL;
}

static int parse_url(const char *url, char *host, size_t hostlen, int *port, const char **path) {
    if (strncmp(url, "http://", 7) != 0) return -1;
    const char *h = url + 7, *colon = strchr(h, ':'), *slash = strchr(h, '/');
    if (!colon || !slash || colon > slash || (size_t)(colon - h) >= hostlen) return -1;
    memcpy(host, h, (size_t)(colon - h));
    host[colon - h] = '\0';
    *port = atoi(colon + 1);
    *path = slash;
    return *port > 0 && *port < 65536 ? 0 : -1;
}

static long parse_count(const char *opt, const char *v, long lo, long hi) {
    char *end;
    errno = 0;
    long n = strtol(v, &end, 10);
    if (errno || *end || n < lo || n > hi) {
        char msg[128];
        snprintf(msg, sizeof msg, "%s %s: a whole number from %ld to %ld", opt, v, lo, hi);
        fail_usage(msg);
    }
    return n;
}

int main(int argc, char **argv) {
    long conns = 0, threads = 4, duration = 10, addresses = 0;
    const char *method = "GET", *body = NULL, *source = "127.0.100.1", *url = NULL;
    const char *headers[16];
    int nheaders = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (a[0] != '-') {
            url = a;
            continue;
        }
        if (!v) fail_usage("an option without its value");
        i++;
        if (!strcmp(a, "-c")) conns = parse_count("-c", v, 1, 60000);
        else if (!strcmp(a, "-t")) threads = parse_count("-t", v, 1, 256);
        else if (!strcmp(a, "-d")) duration = parse_count("-d", v, 1, 3600);
        else if (!strcmp(a, "-a")) addresses = parse_count("-a", v, 0, 65000);
        else if (!strcmp(a, "-s")) source = v;
        else if (!strcmp(a, "-m")) method = v;
        else if (!strcmp(a, "-b")) body = v;
        else if (!strcmp(a, "-H")) {
            if (nheaders == 16) fail_usage("-H: at most 16 headers");
            headers[nheaders++] = v;
        } else fail_usage("unknown option");
    }
    if (!url || conns == 0) fail_usage("-c and a URL are needed");
    char host[64];
    int port;
    const char *path;
    if (parse_url(url, host, sizeof host, &port, &path) != 0) fail_usage("the URL must be http://IPV4:PORT/PATH");
    cfg.server.sin_family = AF_INET;
    cfg.server.sin_port = htons((uint16_t)port);
    if (inet_pton(AF_INET, host, &cfg.server.sin_addr) != 1) fail_usage("the URL's host must be an IPv4 address");
    struct in_addr src;
    if (inet_pton(AF_INET, source, &src) != 1) fail_usage("-s: not an IPv4 address");
    cfg.source = ntohl(src.s_addr);
    cfg.addresses = (unsigned)addresses;
    if (addresses > 0 && ((cfg.source >> 24) != 127 || ((cfg.source + (uint32_t)addresses - 1) >> 24) != 127))
        fail_usage("-s and -a: the source addresses must all be in 127.0.0.0/8");
    if (threads > conns) threads = conns;

    size_t cap = 512 + strlen(path) + strlen(host) + (body ? strlen(body) : 0);
    for (int i = 0; i < nheaders; i++) cap += strlen(headers[i]) + 2;
    cfg.request = malloc(cap);
    if (!cfg.request) {
        perror("bench_loadgen: malloc");
        return 1;
    }
    int len = snprintf(cfg.request, cap, "%s %s HTTP/1.1\r\nHost: %s:%d\r\n", method, path, host, port);
    for (int i = 0; i < nheaders; i++) len += snprintf(cfg.request + len, cap - (size_t)len, "%s\r\n", headers[i]);
    if (body) len += snprintf(cfg.request + len, cap - (size_t)len, "Content-Length: %zu\r\n", strlen(body));
    len += snprintf(cfg.request + len, cap - (size_t)len, "\r\n%s", body ? body : "");
    cfg.request_len = (size_t)len;

    struct worker *ws = calloc((size_t)threads, sizeof *ws);
    uint64_t *merged = calloc(BUCKETS, sizeof *merged);
    if (!ws || !merged) {
        perror("bench_loadgen: calloc");
        return 1;
    }
    double t0 = timeutil_now_ms();
    cfg.end_ms = t0 + (double)duration * 1000.0;
    for (long t = 0; t < threads; t++) {
        ws[t].first = (unsigned)(conns * t / threads);
        ws[t].n = (unsigned)(conns * (t + 1) / threads) - ws[t].first;
        ws[t].hist = calloc(BUCKETS, sizeof *ws[t].hist);
        if (!ws[t].hist || pthread_create(&ws[t].tid, NULL, worker_run, &ws[t]) != 0) {
            perror("bench_loadgen: thread");
            return 1;
        }
    }
    struct counts sum = {0};
    for (long t = 0; t < threads; t++) {
        pthread_join(ws[t].tid, NULL);
        if (ws[t].error) {
            fprintf(stderr, "bench_loadgen: thread setup: %s\n", strerror(ws[t].error));
            return 1;
        }
        sum.requests += ws[t].c.requests;
        for (int s = 0; s < 6; s++) sum.status[s] += ws[t].c.status[s];
        sum.connect += ws[t].c.connect;
        sum.read += ws[t].c.read;
        sum.write += ws[t].c.write;
        sum.closed += ws[t].c.closed;
        sum.framing += ws[t].c.framing;
        for (size_t b = 0; b < BUCKETS; b++) merged[b] += ws[t].hist[b];
        free(ws[t].hist);
    }
    double secs = (double)duration;
    char first[INET_ADDRSTRLEN] = "";
    inet_ntop(AF_INET, &src, first, sizeof first);
    printf("{\"connections\":%ld,\"threads\":%ld,\"addresses\":%u,\"first_address\":\"%s\",\"duration_s\":%.3f,"
           "\"requests\":%llu,\"rps\":%.1f,\"p50_ms\":%.3f,\"p99_ms\":%.3f,\"max_ms\":%.3f,"
           "\"status\":{\"2xx\":%llu,\"3xx\":%llu,\"4xx\":%llu,\"5xx\":%llu,\"other\":%llu},\"non_2xx\":%llu,"
           "\"errors\":{\"connect\":%llu,\"read\":%llu,\"write\":%llu,\"closed\":%llu,\"framing\":%llu}}\n",
           conns, threads, cfg.addresses, cfg.addresses ? first : "", secs, sum.requests,
           (double)sum.requests / secs, percentile(merged, sum.requests, 0.50), percentile(merged, sum.requests, 0.99),
           percentile(merged, sum.requests, 1.0), sum.status[2], sum.status[3], sum.status[4], sum.status[5],
           sum.status[0] + sum.status[1], sum.requests - sum.status[2], sum.connect, sum.read, sum.write, sum.closed,
           sum.framing);
    free(merged);
    free(ws);
    free(cfg.request);
    return 0;
}
