/* test_hostile.c -- the attack suite against the real `divergence serve`
 * (tests/fake_worker stands in for the GPU): badly framed and smuggled
 * requests from tests/server/http/framing/, slow clients from several
 * loopback addresses (127.0.0.x), concurrent heavy analyses, limits that
 * must be charged in the right order, forwarded addresses, cross-site
 * writes, /measure validated like /analyze, and waiting on a job. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
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

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* A TCP connection to the server from 127.0.0.`host`; -1 on failure. */
static int dial(unsigned host) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    struct sockaddr_in src = {.sin_family = AF_INET};
    src.sin_addr.s_addr = htonl(0x7f000000u | host);
    struct sockaddr_in dst = {.sin_family = AF_INET, .sin_port = htons((unsigned short)srv.port)};
    dst.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(fd, (struct sockaddr *)&src, sizeof src) < 0 || connect(fd, (struct sockaddr *)&dst, sizeof dst) < 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Sends `raw` on `fd` and reads everything until the server closes (or
 * `timeout_ms`). Returns a malloc()ed NUL-terminated copy. */
static char *exchange(int fd, const char *raw, size_t len, int timeout_ms) {
    size_t off = 0;
    while (off < len) {
        ssize_t w = send(fd, raw + off, len - off, MSG_NOSIGNAL);
        if (w <= 0) break; /* the server may refuse and close early */
        off += (size_t)w;
    }
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    double until = now_ms() + timeout_ms;
    while (buf && now_ms() < until) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, 100) <= 0) continue;
        ssize_t got = recv(fd, buf + n, cap - n - 1, 0);
        if (got <= 0) break;
        n += (size_t)got;
        if (cap - n < 2) {
            char *b = realloc(buf, cap * 2);
            if (!b) break;
            buf = b;
            cap *= 2;
        }
    }
    if (buf) buf[n] = '\0';
    return buf;
}

static int status_of(const char *resp) { return resp && strncmp(resp, "HTTP/1.", 7) == 0 ? atoi(resp + 9) : -1; }

static char *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *buf = malloc(1 << 20);
    size_t n = buf ? fread(buf, 1, (1 << 20) - 1, f) : 0;
    fclose(f);
    if (buf) buf[n] = '\0';
    if (len) *len = n;
    return buf;
}

/* Every case of the framing folder: the expected status, the connection
 * closed, and the smuggled request never answered. */
Test(hostile, framing_cases_are_refused_and_never_run, .fini = stop, .timeout = 120) {
    static const char *const args[] = {"--rate-limit", "0", "--analyze-rate-limit", "0", NULL};
    start(args);
    const char *dir = DV_TEST_SOURCE_DIR "/tests/server/http/framing";
    DIR *d = opendir(dir);
    cr_assert_not_null(d, "%s: %s", dir, strerror(errno));
    struct dirent *e;
    unsigned cases = 0, refused = 0;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.' || strcmp(e->d_name, "README") == 0) continue;
        char path[1024];
        size_t len = 0;
        snprintf(path, sizeof path, "%s/%s/request", dir, e->d_name);
        char *raw = read_file(path, &len);
        snprintf(path, sizeof path, "%s/%s/status", dir, e->d_name);
        char *want = read_file(path, NULL);
        cr_assert(raw && want, "case %s is incomplete", e->d_name);
        int fd = dial(1);
        cr_assert_geq(fd, 0);
        double t0 = now_ms();
        char *resp = exchange(fd, raw, len, 5000);
        double took = now_ms() - t0;
        close(fd);
        cr_expect_eq(status_of(resp), atoi(want), "case %s: got %d, want %d:\n%.300s", e->d_name, status_of(resp),
                     atoi(want), resp ? resp : "");
        /* Answered and closed at once, not left to a timeout. */
        cr_expect_lt(took, 3000, "case %s: the connection stayed open %.0f ms", e->d_name, took);
        cr_expect_null(strstr(resp ? resp : "", "smuggled"), "case %s: the smuggled request ran:\n%s", e->d_name, resp);
        if (atoi(want) >= 400) refused++;
        cases++;
        free(raw);
        free(want);
        free(resp);
    }
    closedir(d);
    cr_assert_geq(cases, 25, "only %u cases found in %s", cases, dir);
    cr_assert_geq(refused, 20);
}

/* ---- slow clients ----------------------------------------------------------- */

struct slowloris {
    int fds[256];
    unsigned n;
};

/* Opens `per_addr` connections from each of 127.0.0.2 .. 127.0.0.(1+addrs),
 * each sending the start of a request and no end to its headers. */
static void slowloris_open(struct slowloris *s, unsigned addrs, unsigned per_addr) {
    s->n = 0;
    for (unsigned a = 0; a < addrs; a++)
        for (unsigned i = 0; i < per_addr && s->n < 256; i++) {
            int fd = dial(2 + a);
            if (fd < 0) continue;
            const char *start = "GET /healthz HTTP/1.1\r\nHost: x\r\n";
            send(fd, start, strlen(start), MSG_NOSIGNAL);
            s->fds[s->n++] = fd;
        }
}

/* One more header line on every connection still open; returns how many
 * the server has closed. */
static unsigned slowloris_drip(struct slowloris *s) {
    unsigned closed = 0;
    for (unsigned i = 0; i < s->n; i++) {
        if (s->fds[i] < 0) {
            closed++;
            continue;
        }
        struct pollfd p = {.fd = s->fds[i], .events = POLLIN};
        char c;
        if (poll(&p, 1, 0) > 0 && recv(s->fds[i], &c, 1, MSG_DONTWAIT) <= 0) {
            close(s->fds[i]);
            s->fds[i] = -1;
            closed++;
            continue;
        }
        send(s->fds[i], "X-a: b\r\n", 8, MSG_NOSIGNAL);
    }
    return closed;
}

static void slowloris_close(struct slowloris *s) {
    for (unsigned i = 0; i < s->n; i++)
        if (s->fds[i] >= 0) close(s->fds[i]);
}

static int healthz_from(unsigned host, double *ms) {
    int fd = dial(host);
    if (fd < 0) return -1;
    const char *req = "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    double t0 = now_ms();
    char *resp = exchange(fd, req, strlen(req), 3000);
    if (ms) *ms = now_ms() - t0;
    close(fd);
    int st = status_of(resp);
    free(resp);
    return st;
}

/* 10 addresses fill the table with connections that send a header line
 * every 200 ms: a newcomer from another address is still served every time
 * (an incomplete connection is evicted for it), and every slow connection is
 * closed at the header deadline however often it sends. */
Test(hostile, slowloris_from_many_addresses_never_starves_a_newcomer, .fini = stop, .timeout = 60) {
    static const char *const args[] = {
        "--conn-limit", "40", "--per-ip-limit", "8", "--header-timeout", "2", "--threads", "2", NULL};
    start(args);
    struct slowloris s;
    slowloris_open(&s, 10, 8); /* 80 > 40 slots */
    cr_assert_geq(s.n, 60, "only %u slow connections opened", s.n);
    unsigned ok = 0, probes = 0;
    double worst = 0;
    for (int round = 0; round < 15; round++) { /* 3 s: past the 2 s deadline */
        slowloris_drip(&s);
        double ms = 0;
        int st = healthz_from(1, &ms);
        probes++;
        if (st == 200) ok++;
        if (ms > worst) worst = ms;
        usleep(200 * 1000);
    }
    cr_expect_eq(ok, probes, "/healthz answered %u of %u probes during the attack", ok, probes);
    cr_expect_lt(worst, 1000, "the slowest probe took %.0f ms", worst);
    /* Whatever was not evicted met its deadline: none survives 2 s + slack. */
    usleep(500 * 1000);
    unsigned closed = slowloris_drip(&s);
    cr_expect_eq(closed, s.n, "%u of %u slow connections still open past the header deadline", s.n - closed, s.n);
    slowloris_close(&s);
    /* Both defences acted: newcomers evicted slow connections, and the rest
     * met the deadline. */
    struct helper_response r;
    cr_assert_eq(helper_request(srv.port, "GET", "/metrics", NULL, NULL, 0, &r), 0);
    unsigned long long evicted = 0, deadline = 0;
    const char *e = strstr(r.body, "dv_http_connections_closed_total{reason=\"evicted\"} ");
    const char *d = strstr(r.body, "dv_http_connections_closed_total{reason=\"deadline\"} ");
    cr_assert(e && d, "%s", r.body);
    sscanf(strchr(e, '}') + 2, "%llu", &evicted);
    sscanf(strchr(d, '}') + 2, "%llu", &deadline);
    cr_expect_gt(evicted, 0);
    cr_expect_gt(deadline, 0);
    helper_response_free(&r);
}

/* A body trickled a byte at a time still has to arrive within the body
 * deadline. */
Test(hostile, body_deadline_holds_against_a_trickle, .fini = stop, .timeout = 30) {
    static const char *const args[] = {"--body-timeout", "1", "--rate-limit", "0", NULL};
    start(args);
    int fd = dial(1);
    cr_assert_geq(fd, 0);
    const char *h =
        "POST /analyze HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 4000\r\n\r\n";
    send(fd, h, strlen(h), MSG_NOSIGNAL);
    double t0 = now_ms();
    int open = 1;
    while (open && now_ms() - t0 < 6000) {
        if (send(fd, " ", 1, MSG_NOSIGNAL) < 0) open = 0;
        struct pollfd p = {.fd = fd, .events = POLLIN};
        char c;
        if (poll(&p, 1, 100) > 0 && recv(fd, &c, 1, MSG_DONTWAIT) <= 0) open = 0;
    }
    close(fd);
    cr_assert_eq(open, 0, "a trickled body kept the connection open for 6 s");
    cr_assert_lt(now_ms() - t0, 3000, "closed only after %.0f ms", now_ms() - t0);
}

/* ---- heavy analyses ---------------------------------------------------------- */

struct heavy {
    const char *body;
    int status;
};

static void *heavy_main(void *arg) {
    struct heavy *h = arg;
    struct helper_response r;
    if (helper_request(srv.port, "POST", "/analyze", NULL, h->body, strlen(h->body), &r) == 0) h->status = r.status;
    helper_response_free(&r);
    return NULL;
}

/* Eight analyses at the cost cap at once, with one HTTP thread: each is
 * answered, and /healthz on the same thread is answered meanwhile (the
 * analyses run on the CPU pool, not on the thread that accepted them). */
Test(hostile, concurrent_heavy_analyses_leave_no_request_unanswered, .fini = stop, .timeout = 120) {
    static const char *const args[] = {"--threads", "1", "--analyze-rate-limit", "0", "--max-analysis-cost",
                                       "4194304",   NULL};
    start(args);
    /* 4 blockIdx.x predicates x 1024 blocks x 1024 threads = 4 Mi: at the cap. */
    const char *body =
        "{\"part\": 1, \"blocks\": 1024, \"threads_per_block\": 1024, \"baseline\": \"blockIdx.x % 2 == 0\","
        " \"predicates\": [\"blockIdx.x % 2 == 0\", \"(blockIdx.x ^ threadIdx.x) % 3 == 0\","
        " \"blockIdx.x * threadIdx.x % 7 < 3\", \"(blockIdx.x + lane) % 5 == 1\"]}";
    struct heavy h[8];
    pthread_t t[8];
    for (int i = 0; i < 8; i++) {
        h[i].body = body;
        h[i].status = -1;
        cr_assert_eq(pthread_create(&t[i], NULL, heavy_main, &h[i]), 0);
    }
    usleep(50 * 1000);
    double ms = 0;
    cr_expect_eq(healthz_from(1, &ms), 200);
    cr_expect_lt(ms, 500, "/healthz waited %.0f ms behind the analyses", ms);
    for (int i = 0; i < 8; i++) {
        pthread_join(t[i], NULL);
        cr_expect_eq(h[i].status, 200, "analysis %d answered %d", i, h[i].status);
    }
    /* One over the cap is refused before any work, naming its cost. */
    struct helper_response r;
    const char *over =
        "{\"part\": 1, \"blocks\": 2048, \"threads_per_block\": 1024, \"baseline\": \"block-parity\","
        " \"predicates\": [\"block-parity\", \"blockIdx.x % 3 == 0\", \"lane-parity\"]}";
    cr_assert_eq(helper_request(srv.port, "POST", "/analyze", NULL, over, strlen(over), &r), 0);
    cr_expect_eq(r.status, 400, "%s", r.body);
    json_t *j = helper_json(&r);
    cr_expect_not_null(json_object_get(json_object_get(j, "error"), "analysis_cost"), "%s", r.body);
    json_decref(j);
    helper_response_free(&r);
}

Test(hostile, analyze_is_rate_limited, .fini = stop) {
    static const char *const args[] = {"--analyze-rate-limit", "2", NULL};
    start(args);
    int st[3];
    for (int i = 0; i < 3; i++) {
        struct helper_response r;
        cr_assert_eq(helper_request(srv.port, "POST", "/analyze", NULL, "{}", 2, &r), 0);
        st[i] = r.status;
        helper_response_free(&r);
    }
    cr_assert_eq(st[0], 200);
    cr_assert_eq(st[1], 200);
    cr_assert_eq(st[2], 429);
}

/* ---- limits in the right order ----------------------------------------------- */

static int post_from(unsigned host, const char *path, const char *extra_headers, const char *body) {
    int fd = dial(host);
    if (fd < 0) return -1;
    char req[8192];
    int n = snprintf(req, sizeof req,
                     "POST %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\n"
                     "%sContent-Length: %zu\r\n\r\n%s",
                     path, extra_headers ? extra_headers : "", strlen(body), body);
    char *resp = exchange(fd, req, (size_t)n, 5000);
    close(fd);
    int st = status_of(resp);
    free(resp);
    return st;
}

/* Ten bad tokens from the owner's address charge nothing: the owner's own
 * request is still accepted. */
Test(hostile, bad_tokens_never_lock_the_owner_out, .fini = stop) {
    static const char *const args[] = {"--token", "s3cret", "--rate-limit", "3", NULL};
    start(args);
    for (int i = 0; i < 10; i++)
        cr_assert_eq(post_from(1, "/measure", "Authorization: Bearer wrong\r\n", "{\"part\": 1}"), 401);
    cr_assert_eq(post_from(1, "/measure", "Authorization: Bearer s3cret\r\n", "{\"part\": 1}"), 202);
}

/* X-Forwarded-For counts only from a configured proxy, and then its
 * rightmost hop that is not a proxy: varying the header buys nothing. */
Test(hostile, forwarded_addresses_only_from_trusted_proxies, .fini = stop) {
    static const char *const args[] = {"--rate-limit", "3", "--trusted-proxy", "127.0.0.9", NULL};
    start(args);
    char h[128];
    int st[5];
    /* Not a proxy: keyed on 127.0.0.2 whatever the header says. */
    for (int i = 0; i < 5; i++) {
        snprintf(h, sizeof h, "X-Forwarded-For: 10.0.0.%d\r\n", i + 1);
        st[i] = post_from(2, "/measure", h, "{\"part\": 1}");
    }
    /* (An identical request is answered from the job or the cache: 200 or 202.) */
    cr_assert(st[2] == 202 || st[2] == 200, "%d", st[2]);
    cr_assert_eq(st[3], 429, "a client that varies X-Forwarded-For got through: %d", st[3]);
    /* Through the proxy: keyed on the hop it appended (10.1.1.1), not on what
     * the client put to its left. */
    for (int i = 0; i < 5; i++) {
        snprintf(h, sizeof h, "X-Forwarded-For: 192.0.2.%d, 10.1.1.1\r\n", i + 1);
        st[i] = post_from(9, "/measure", h, "{\"part\": 1}");
    }
    cr_assert(st[2] == 202 || st[2] == 200, "%d", st[2]);
    cr_assert_eq(st[3], 429, "spoofed left-hand hops got through: %d", st[3]);
    /* Another client behind the same proxy has its own budget. */
    int other = post_from(9, "/measure", "X-Forwarded-For: 10.1.1.2\r\n", "{\"part\": 1}");
    cr_assert(other == 202 || other == 200, "%d", other);
}

/* A client that writes a long X-Forwarded-For to the left of the proxy's
 * hop is still counted on that hop (the rightmost hops are the ones kept),
 * not on the proxy's own address, where its requests would use up the
 * budget of everything else that comes through the proxy. */
Test(hostile, a_long_forwarded_for_still_counts_the_proxys_hop, .fini = stop) {
    static const char *const args[] = {"--rate-limit", "3", "--trusted-proxy", "127.0.0.9", NULL};
    start(args);
    char h[3200];
    int n = snprintf(h, sizeof h, "X-Forwarded-For: ");
    while (n < 2400) n += snprintf(h + n, sizeof h - (size_t)n, "198.51.100.%d, ", n % 250);
    size_t left = (size_t)n;
    snprintf(h + left, sizeof h - left, "10.1.1.1\r\n");
    int st[4];
    for (int i = 0; i < 4; i++) st[i] = post_from(9, "/measure", h, "{\"part\": 1}");
    cr_assert(st[2] == 202 || st[2] == 200, "%d", st[2]);
    cr_assert_eq(st[3], 429, "the hop after a long X-Forwarded-For was not counted: %d", st[3]);
    snprintf(h + left, sizeof h - left, "10.1.1.2\r\n");
    int other = post_from(9, "/measure", h, "{\"part\": 1}");
    cr_assert(other == 202 || other == 200, "another client behind the proxy: %d", other);
    int proxy = post_from(9, "/measure", NULL, "{\"part\": 1}");
    cr_assert(proxy == 202 || proxy == 200, "the proxy's own address was charged: %d", proxy);
}

/* ---- validation ---------------------------------------------------------------- */

static json_t *post_json(const char *path, const char *body, int *status) {
    struct helper_response r;
    cr_assert_eq(helper_request(srv.port, "POST", path, NULL, body, strlen(body), &r), 0);
    *status = r.status;
    json_t *j = helper_json(&r);
    helper_response_free(&r);
    return j;
}

static const char *field_of(json_t *j) {
    json_t *f = json_object_get(json_object_get(j, "error"), "field");
    return json_is_string(f) ? json_string_value(f) : "";
}

/* What /analyze rejects, /measure rejects the same way, before any 202. */
Test(hostile, measure_rejects_what_analyze_rejects, .fini = stop) {
    static const char *const args[] = {"--rate-limit", "0", "--analyze-rate-limit", "0", NULL};
    start(args);
    static const struct {
        const char *body, *field;
    } cases[] = {
        {"{\"scenario\": \"no-such-scenario\"}", "scenario"},
        {"{\"part\": 1, \"blocks\": 65537, \"threads_per_block\": 1024, \"predicates\": [\"lane-parity\"],"
         " \"baseline\": \"lane-parity\"}",
         "blocks"},
        {"{\"part\": 1, \"predicates\": [\"lane-parity\", \"1 << 64\"], \"baseline\": \"lane-parity\"}",
         "predicates[1]"},
        /* The planner trims a predicate's blanks; the field still names the entry. */
        {"{\"part\": 1, \"predicates\": [\"lane-parity\", \" 1 << 64\"], \"baseline\": \"lane-parity\"}",
         "predicates[1]"},
        {"{\"part\": 1, \"predicates\": [\"10 / (threadIdx.x - 3)\"], \"baseline\": \"10 / (threadIdx.x - 3)\"}",
         "predicates[0]"},
        {"{\"part\": 1, \"predicates\": [\"lane-parity\", \"no-such-predicate\"]}", "predicates[1]"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int sa = 0, sm = 0;
        json_t *a = post_json("/analyze", cases[i].body, &sa);
        json_t *m = post_json("/measure", cases[i].body, &sm);
        cr_expect_eq(sa, 400, "/analyze %s: %d", cases[i].body, sa);
        cr_expect_eq(sm, 400, "/measure %s: %d", cases[i].body, sm);
        cr_expect_str_eq(field_of(a), cases[i].field, "/analyze %s", cases[i].body);
        cr_expect_str_eq(field_of(m), cases[i].field, "/measure %s", cases[i].body);
        json_decref(a);
        json_decref(m);
    }
}

/* A page of another origin cannot POST without a preflight: a text/plain
 * body starts nothing. */
Test(hostile, cross_site_simple_posts_start_nothing, .fini = stop) {
    static const char *const args[] = {"--rate-limit", "0", NULL};
    start(args);
    struct helper_response r;
    cr_assert_eq(helper_request(srv.port, "POST", "/measure",
                                "Content-Type: text/plain\r\nOrigin: http://evil.example\r\n", "{}", 2, &r),
                 0);
    cr_assert_eq(r.status, 415, "%s", r.body);
    helper_response_free(&r);
    cr_assert_eq(helper_request(srv.port, "POST", "/evidence/refresh", "Content-Type: text/plain\r\n", "", 0, &r), 0);
    cr_assert_eq(r.status, 415, "a refresh: %d %s", r.status, r.body);
    helper_response_free(&r);
    cr_assert_eq(helper_request(srv.port, "GET", "/metrics", NULL, NULL, 0, &r), 0);
    cr_assert(strstr(r.body, "dv_jobs_total{outcome=\"done\"} 0"), "a job ran");
    cr_assert_null(strstr(r.body, "route=\"/measure\",status=\"202\""), "a job was queued");
    helper_response_free(&r);
}

/* ---- waiting on a job ----------------------------------------------------------- */

static const char *submit(const char *body) {
    static char id[64];
    int st = 0;
    json_t *j = post_json("/measure", body, &st);
    cr_assert_eq(st, 202, "POST /measure %s: %d", body, st);
    snprintf(id, sizeof id, "%s", json_string_value(json_object_get(j, "id")));
    json_decref(j);
    return id;
}

/* ?wait= returns when the job is done (a 300 ms job), not at the end of the
 * wait, and reports where the time went. */
Test(hostile, long_poll_returns_when_the_job_finishes, .fini = stop) {
    static const char *const args[] = {"--rate-limit", "0", NULL};
    start(args);
    const char *id = submit("{\"part\": 1, \"iterations\": 3333, \"budget_ms\": 100}");
    char path[128];
    snprintf(path, sizeof path, "/jobs/%s?wait=20", id);
    struct helper_response r;
    double t0 = now_ms();
    cr_assert_eq(helper_request(srv.port, "GET", path, NULL, NULL, 0, &r), 0);
    double took = now_ms() - t0;
    cr_assert_eq(r.status, 200);
    json_t *j = helper_json(&r);
    cr_assert_str_eq(json_string_value(json_object_get(j, "state")), "done", "%s", r.body);
    cr_assert_lt(took, 5000, "the wait took %.0f ms for a 300 ms job", took);
    json_t *tm = json_object_get(j, "timing");
    cr_assert(json_is_number(json_object_get(tm, "queue_wait_ms")), "%s", r.body);
    cr_assert(json_is_number(json_object_get(tm, "gpu_ms")), "%s", r.body);
    cr_assert(json_is_number(json_object_get(tm, "overhead_ms")), "%s", r.body);
    cr_assert_geq(json_number_value(json_object_get(tm, "run_ms")), 250, "%s", r.body);
    json_decref(j);
    helper_response_free(&r);
    snprintf(path, sizeof path, "/jobs/%s?wait=31", id);
    cr_assert_eq(helper_request(srv.port, "GET", path, NULL, NULL, 0, &r), 0);
    cr_assert_eq(r.status, 400);
    j = helper_json(&r);
    cr_assert_str_eq(field_of(j), "wait");
    json_decref(j);
    helper_response_free(&r);
}

/* ?wait= takes seconds written as decimal digits only, and a wait of a
 * fraction of a millisecond ends (it is not "no timeout"). */
Test(hostile, wait_is_decimal_seconds_and_a_tiny_wait_still_ends, .fini = stop, .timeout = 30) {
    static const char *const args[] = {"--rate-limit", "0", "--job-deadline-ms", "20000", NULL};
    start(args);
    const char *id = submit("{\"part\": 1, \"iterations\": 1111, \"budget_ms\": 100}"); /* hangs */
    static const char *const bad[] = {"0x10", "1e1", "inf", "nan", " 5", "5s", "-1", "", ".", "31", "30.5"};
    char path[160];
    struct helper_response r;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(path, sizeof path, "/jobs/%s?wait=%s", id, bad[i]);
        for (char *p = path; *p; p++)
            if (*p == ' ') *p = '+';
        cr_assert_eq(helper_request(srv.port, "GET", path, NULL, NULL, 0, &r), 0);
        cr_expect_eq(r.status, 400, "wait=%s answered %d", bad[i], r.status);
        json_t *j = helper_json(&r);
        cr_expect_str_eq(field_of(j) ? field_of(j) : "", "wait", "wait=%s: %s", bad[i], r.body);
        json_decref(j);
        helper_response_free(&r);
    }
    static const char *const tiny[] = {"0.0001", "0.0004", "0.001"};
    for (size_t i = 0; i < sizeof tiny / sizeof tiny[0]; i++) {
        snprintf(path, sizeof path, "/jobs/%s?wait=%s", id, tiny[i]);
        double t0 = now_ms();
        cr_assert_eq(helper_request(srv.port, "GET", path, NULL, NULL, 0, &r), 0);
        double took = now_ms() - t0;
        cr_expect_eq(r.status, 200, "wait=%s: %d", tiny[i], r.status);
        cr_expect_lt(took, 2000, "wait=%s held the request %.0f ms", tiny[i], took);
        helper_response_free(&r);
    }
    snprintf(path, sizeof path, "/jobs/%s?wait=0.5", id);
    double t0 = now_ms();
    cr_assert_eq(helper_request(srv.port, "GET", path, NULL, NULL, 0, &r), 0);
    double took = now_ms() - t0;
    cr_expect_eq(r.status, 200);
    cr_expect(took >= 400 && took < 3000, "wait=0.5 took %.0f ms", took);
    helper_response_free(&r);
}

struct waiter {
    char path[128];
    int status;
    char state[16];
};

static void *waiter_main(void *arg) {
    struct waiter *w = arg;
    struct helper_response r;
    if (helper_request(srv.port, "GET", w->path, NULL, NULL, 0, &r) == 0) {
        w->status = r.status;
        json_t *j = helper_json(&r);
        snprintf(w->state, sizeof w->state, "%s", json_string_value(json_object_get(j, "state")) ?: "");
        json_decref(j);
    }
    helper_response_free(&r);
    return NULL;
}

/* Twenty waiters on a job that hangs, with one HTTP thread: none holds the
 * thread (/healthz is answered at once), and each returns at its wait. */
Test(hostile, waiters_hold_no_http_thread, .fini = stop, .timeout = 60) {
    static const char *const args[] = {"--rate-limit", "0", "--threads", "1", "--job-deadline-ms", "20000", NULL};
    start(args);
    const char *id = submit("{\"part\": 1, \"iterations\": 1111, \"budget_ms\": 100}"); /* hangs */
    struct waiter w[20];
    pthread_t t[20];
    for (int i = 0; i < 20; i++) {
        snprintf(w[i].path, sizeof w[i].path, "/jobs/%s?wait=2", id);
        w[i].status = -1;
        w[i].state[0] = '\0';
        cr_assert_eq(pthread_create(&t[i], NULL, waiter_main, &w[i]), 0);
    }
    usleep(300 * 1000);
    double ms = 0;
    double t0 = now_ms();
    cr_expect_eq(healthz_from(1, &ms), 200);
    cr_expect_lt(ms, 500, "/healthz waited %.0f ms behind 20 waiters", ms);
    for (int i = 0; i < 20; i++) {
        pthread_join(t[i], NULL);
        cr_expect_eq(w[i].status, 200);
        cr_expect(strcmp(w[i].state, "running") == 0 || strcmp(w[i].state, "queued") == 0, "state %s", w[i].state);
    }
    double all = now_ms() - t0;
    cr_expect(all > 1200 && all < 6000, "the waits ended after %.0f ms, not about 2 s", all);
}

/* The event stream tells queued (with position), running, then done. */
Test(hostile, event_stream_reports_each_state, .fini = stop, .timeout = 30) {
    static const char *const args[] = {"--rate-limit", "0", NULL};
    start(args);
    submit("{\"part\": 1, \"iterations\": 3333, \"budget_ms\": 101}");
    submit("{\"part\": 1, \"iterations\": 3333, \"budget_ms\": 102}");
    const char *id = submit("{\"part\": 1, \"iterations\": 3333, \"budget_ms\": 103}");
    int fd = dial(1);
    cr_assert_geq(fd, 0);
    char req[256];
    int n = snprintf(req, sizeof req,
                     "GET /jobs/%s HTTP/1.1\r\nHost: x\r\nConnection: close\r\nAccept: text/event-stream\r\n\r\n", id);
    char *out = exchange(fd, req, (size_t)n, 10000);
    close(fd);
    cr_assert_eq(status_of(out), 200, "%s", out);
    cr_assert(strstr(out, "Content-Type: text/event-stream"), "%s", out);
    const char *q = strstr(out, "event: queued\ndata: ");
    const char *ru = strstr(out, "event: running\n");
    const char *dn = strstr(out, "event: done\n");
    cr_assert(q && ru && dn && q < ru && ru < dn, "events out of order:\n%s", out);
    cr_assert(strstr(q, "\"position\":"), "%s", out);
    free(out);
}

struct stream_reader {
    char path[128];
    int fd;
    char *out;
};

static void *stream_main(void *arg) {
    struct stream_reader *s = arg;
    char req[256];
    int n = snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n", s->path);
    s->out = exchange(s->fd, req, (size_t)n, 20000);
    return NULL;
}

/* Event streams on jobs that are evicted under them (--keep-jobs 1, each
 * finished job pushes the one before out): a stream whose job has gone ends
 * with "event: gone", never with the server. Streams are opened right after
 * their job is submitted, from several addresses, so that some find their
 * job already gone at their first read. */
struct evicted_stream {
    char id[64];
    unsigned host;
    char *out;
};

static void *evicted_stream_main(void *arg) {
    struct evicted_stream *e = arg;
    int fd = dial(e->host);
    if (fd < 0) return NULL;
    char req[256];
    int n =
        snprintf(req, sizeof req,
                 "GET /jobs/%s HTTP/1.1\r\nHost: x\r\nConnection: close\r\nAccept: text/event-stream\r\n\r\n", e->id);
    e->out = exchange(fd, req, (size_t)n, 10000);
    close(fd);
    return NULL;
}

Test(hostile, streams_on_evicted_jobs_end_and_the_server_stays_up, .fini = stop, .timeout = 90) {
    static const char *const args[] = {"--rate-limit",   "0",  "--keep-jobs", "1", "--queue", "64",
                                       "--per-ip-limit", "64", "--cache-ttl", "0", NULL};
    start(args);
    enum { ROUNDS = 6, STREAMS = 16 };
    unsigned gone = 0, ended = 0, missing = 0;
    for (int round = 0; round < ROUNDS; round++) {
        struct evicted_stream e[STREAMS];
        pthread_t t[STREAMS];
        for (int i = 0; i < STREAMS; i++) {
            char body[128];
            snprintf(body, sizeof body, "{\"part\": 1, \"budget_ms\": %d}", 100 + round * STREAMS + i);
            snprintf(e[i].id, sizeof e[i].id, "%s", submit(body));
            e[i].host = 1 + (unsigned)i % 4;
            e[i].out = NULL;
            cr_assert_eq(pthread_create(&t[i], NULL, evicted_stream_main, &e[i]), 0);
        }
        for (int i = 0; i < STREAMS; i++) {
            pthread_join(t[i], NULL);
            int st = status_of(e[i].out);
            if (st == 404) missing++; /* gone before the stream was asked for */
            else {
                cr_expect_eq(st, 200, "stream %d: %.300s", i, e[i].out ? e[i].out : "(nothing)");
                int end = e[i].out && (strstr(e[i].out, "event: done") || strstr(e[i].out, "event: failed") ||
                                       strstr(e[i].out, "event: gone"));
                cr_expect(end, "stream %d ended with no terminal event:\n%s", i, e[i].out ? e[i].out : "");
                ended += end;
                gone += e[i].out && strstr(e[i].out, "event: gone") != NULL;
            }
            free(e[i].out);
        }
        cr_assert_eq(healthz_from(9, NULL), 200, "the server stopped answering after round %d", round);
    }
    cr_log_info("%u streams ended (%u with gone), %u jobs gone before their stream", ended, gone, missing);
    int rc = helper_server_stop(&srv, 10000);
    srv.pid = 0;
    cr_assert_eq(rc, 0, "the server exited %d", rc);
}

/* SIGTERM with requests suspended (long-polls, an event stream, an analysis
 * on the pool): every one is woken before the daemon stops (libmicrohttpd
 * aborts the process if it stops with a connection suspended), and the
 * server exits 0. */
Test(hostile, shutdown_with_suspended_requests_exits_cleanly, .timeout = 60) {
    static const char *const args[] = {"--rate-limit", "0", "--analyze-rate-limit", "0", "--job-deadline-ms",
                                       "2000",         NULL};
    start(args);
    const char *id = submit("{\"part\": 1, \"iterations\": 1111, \"budget_ms\": 100}"); /* hangs */
    struct waiter w[3];
    pthread_t t[5];
    for (int i = 0; i < 3; i++) {
        snprintf(w[i].path, sizeof w[i].path, "/jobs/%s?wait=30", id);
        w[i].status = -1;
        cr_assert_eq(pthread_create(&t[i], NULL, waiter_main, &w[i]), 0);
    }
    struct stream_reader sr = {.fd = dial(1)};
    snprintf(sr.path, sizeof sr.path, "/jobs/%s", id);
    cr_assert_geq(sr.fd, 0);
    cr_assert_eq(pthread_create(&t[3], NULL, stream_main, &sr), 0);
    struct heavy h = {.body =
                          "{\"part\": 1, \"blocks\": 8192, \"threads_per_block\": 1024, \"baseline\": "
                          "\"blockIdx.x % 2 == 0\", \"predicates\": [\"blockIdx.x % 2 == 0\"]}",
                      .status = -1};
    cr_assert_eq(pthread_create(&t[4], NULL, heavy_main, &h), 0);
    usleep(500 * 1000);
    double t0 = now_ms();
    int rc = helper_server_stop(&srv, 20000);
    srv.pid = 0;
    cr_assert_eq(rc, 0, "the server exited %d with requests suspended", rc);
    cr_assert_lt(now_ms() - t0, 15000);
    for (int i = 0; i < 5; i++) pthread_join(t[i], NULL);
    close(sr.fd);
    for (int i = 0; i < 3; i++) cr_expect_eq(w[i].status, 200, "waiter %d: %d", i, w[i].status);
    cr_expect(sr.out && strstr(sr.out, "event: failed"), "the stream did not see the job fail:\n%s", sr.out);
    free(sr.out);
    unlink(srv.log);
}

/* ---- held requests ---------------------------------------------------------- */

/* A job that runs until its deadline: something to hold requests on. */
static const char *hanging_job(void) { return submit("{\"part\": 1, \"iterations\": 1111, \"budget_ms\": 100}"); }

/* Sends a GET /jobs/{id} on `fd`: a long-poll (wait=30) or an event
 * stream, with `extra` header lines (may be NULL). */
static int send_hold(int fd, const char *id, int stream, const char *extra) {
    char req[512];
    int n = snprintf(req, sizeof req, "GET /jobs/%s%s HTTP/1.1\r\nHost: x\r\n%s%s\r\n", id, stream ? "" : "?wait=30",
                     stream ? "Accept: text/event-stream\r\n" : "", extra ? extra : "");
    return send(fd, req, (size_t)n, MSG_NOSIGNAL) == n ? 0 : -1;
}

/* An attacker: `per_addr` held requests from each of 127.0.0.`first` ..
 * `first + addrs - 1`, each asked again 100 ms after it is answered (a
 * long-poll's answer, a stream's end) or closed, until `stop`. */
struct holders {
    unsigned first, addrs, per_addr;
    int stream;
    const char *id;
    volatile int stop;
    unsigned long answered, dialed;
    pthread_t t;
};

static void *holders_main(void *arg) {
    struct holders *h = arg;
    enum { MAX = 400 };
    int fd[MAX];
    double again[MAX];
    unsigned n = h->addrs * h->per_addr < MAX ? h->addrs * h->per_addr : MAX;
    for (unsigned i = 0; i < n; i++) fd[i] = -1, again[i] = 0;
    while (!h->stop) {
        double now = now_ms();
        struct pollfd p[MAX];
        for (unsigned i = 0; i < n; i++) {
            if (fd[i] < 0 && now >= again[i]) {
                fd[i] = dial(h->first + i / h->per_addr);
                h->dialed++;
                if (fd[i] >= 0 && send_hold(fd[i], h->id, h->stream, NULL) < 0) close(fd[i]), fd[i] = -1;
                if (fd[i] < 0) again[i] = now + 100;
            }
            p[i] = (struct pollfd){.fd = fd[i], .events = POLLIN};
        }
        if (poll(p, n, 20) <= 0) continue;
        for (unsigned i = 0; i < n; i++) {
            if (fd[i] < 0 || !(p[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
            char buf[8192];
            ssize_t got = recv(fd[i], buf, sizeof buf - 1, MSG_DONTWAIT);
            if (got > 0) buf[got] = '\0';
            /* A long-poll's answer, or the end of a chunked stream. */
            int done = got <= 0 || !h->stream || strstr(buf, "\r\n0\r\n\r\n") != NULL;
            if (got > 0 && done) h->answered++;
            if (done) {
                close(fd[i]);
                fd[i] = -1;
                again[i] = now_ms() + 100;
            }
        }
    }
    for (unsigned i = 0; i < n; i++)
        if (fd[i] >= 0) close(fd[i]);
    return NULL;
}

/* Probes /healthz from 127.0.0.`host` every 100 ms for `seconds`: how many
 * failed, and the slowest answer. */
static unsigned probe_failures(unsigned host, double seconds, unsigned *probes, double *worst) {
    unsigned failed = 0;
    *probes = 0;
    *worst = 0;
    double until = now_ms() + seconds * 1000;
    while (now_ms() < until) {
        double ms = 0;
        if (healthz_from(host, &ms) != 200) failed++;
        if (ms > *worst) *worst = ms;
        (*probes)++;
        usleep(100 * 1000);
    }
    return failed;
}

/* Five addresses each keep 16 long-polls (then 16 streams) on one running
 * job, against a table of 64: 80 held requests would fill it. Held
 * requests are bounded per address and in all, the oldest answering first,
 * so a newcomer from a sixth address is served every time. */
static void many_addresses_hold(int stream) {
    static const char *const args[] = {
        "--rate-limit", "0", "--conn-limit", "64", "--per-ip-limit", "16", "--job-deadline-ms", "6000", NULL};
    start(args);
    struct holders h = {.first = 2, .addrs = 5, .per_addr = 16, .stream = stream, .id = hanging_job()};
    cr_assert_eq(pthread_create(&h.t, NULL, holders_main, &h), 0);
    usleep(700 * 1000);
    unsigned probes = 0;
    double worst = 0;
    unsigned failed = probe_failures(9, 3, &probes, &worst);
    h.stop = 1;
    pthread_join(h.t, NULL);
    cr_log_info("%s: %u of %u probes failed (slowest %.0f ms); %lu answered early, %lu dials",
                stream ? "streams" : "long-polls", failed, probes, worst, h.answered, h.dialed);
    cr_expect_eq(failed, 0, "%u of %u /healthz probes failed while 5 addresses held %s", failed, probes,
                 stream ? "streams" : "long-polls");
    cr_expect_lt(worst, 1500, "the slowest probe took %.0f ms", worst);
    cr_expect_gt(h.answered, 0, "no held request was ever answered early");
}

Test(hostile, held_long_polls_from_many_addresses_never_starve_a_newcomer, .fini = stop, .timeout = 60) {
    many_addresses_hold(0);
}

Test(hostile, held_streams_from_many_addresses_never_starve_a_newcomer, .fini = stop, .timeout = 60) {
    many_addresses_hold(1);
}

/* An address's whole share (8) of long-polls, then of streams, opened and
 * dropped after 0.3 s: the server notices the hang-ups while the requests
 * are suspended, so the address is answered again at once (not when the
 * wait or the stream's keep-alive would have written next). */
Test(hostile, hung_up_held_requests_free_their_address_at_once, .fini = stop, .timeout = 90) {
    static const char *const args[] = {"--rate-limit", "0", "--per-ip-limit", "8", "--job-deadline-ms", "5000", NULL};
    start(args);
    const char *id = hanging_job();
    for (int stream = 0; stream < 2; stream++) {
        int fds[8];
        for (int i = 0; i < 8; i++) {
            fds[i] = dial(2);
            cr_assert_geq(fds[i], 0);
            cr_assert_eq(send_hold(fds[i], id, stream, NULL), 0);
        }
        usleep(300 * 1000);
        cr_expect_neq(healthz_from(2, NULL), 200, "the address's share is not in use: the test shows nothing");
        for (int i = 0; i < 8; i++) close(fds[i]);
        double t0 = now_ms(), took = -1;
        while (now_ms() - t0 < 5000) {
            if (healthz_from(2, NULL) == 200) {
                took = now_ms() - t0;
                break;
            }
            usleep(50 * 1000);
        }
        cr_log_info("%s: the address was answered again after %.0f ms", stream ? "streams" : "long-polls", took);
        cr_expect(took >= 0 && took < 2000, "%s: 8 dropped requests locked their address out for %.0f ms",
                  stream ? "streams" : "long-polls", took < 0 ? 5000 : took);
        usleep(300 * 1000);
    }
    struct helper_response r;
    cr_assert_eq(helper_request(srv.port, "GET", "/metrics", NULL, NULL, 0, &r), 0);
    cr_expect(strstr(r.body, "dv_http_held_requests 0\n"), "held requests left counted:\n%s", r.body);
    cr_expect(strstr(r.body, "dv_http_connections_closed_total{reason=\"hangup\"} 16\n"), "hang-ups:\n%s", r.body);
    helper_response_free(&r);
}

/* Streams past the per-address bound: the oldest two send their current
 * state once more and end (the contract's "ask again"), the rest stay. */
Test(hostile, released_streams_send_their_state_and_end, .fini = stop, .timeout = 30) {
    static const char *const args[] = {"--rate-limit", "0", "--job-deadline-ms", "5000", NULL};
    start(args);
    const char *id = hanging_job();
    int fds[10];
    for (int i = 0; i < 10; i++) {
        fds[i] = dial(3);
        cr_assert_geq(fds[i], 0);
        cr_assert_eq(send_hold(fds[i], id, 1, NULL), 0);
        usleep(30 * 1000); /* in order: the first two are the oldest */
    }
    unsigned ended = 0;
    for (int i = 0; i < 10; i++) {
        char *out = exchange(fds[i], "", 0, i < 2 ? 1000 : 100);
        int end = out && strstr(out, "\r\n0\r\n\r\n") != NULL;
        const char *first = out ? strstr(out, "event: running\n") : NULL;
        if (i < 2) {
            cr_expect(end, "stream %d (among the oldest) did not end:\n%s", i, out ? out : "");
            cr_expect(first && strstr(first + 1, "event: running\n"), "stream %d ended without its current state:\n%s",
                      i, out ? out : "");
        } else {
            cr_expect(!end, "stream %d (within the bound) ended:\n%s", i, out ? out : "");
        }
        ended += end;
        free(out);
        close(fds[i]);
    }
    cr_expect_eq(ended, 2);
}

/* A trusted proxy (all its connections from one address) in front of many
 * clients: each client has its own share of connections and of held
 * requests, counted by X-Forwarded-For; the proxy's address is no one's
 * limit. Proxies given as networks, IPv4 and IPv6. */
Test(hostile, a_trusted_proxys_clients_each_have_their_own_share, .fini = stop, .timeout = 30) {
    static const char *const args[] = {
        "--per-ip-limit", "12", "--trusted-proxy", "127.0.0.8/29", "--trusted-proxy", "fd00::/8", "--job-deadline-ms",
        "5000",           NULL};
    start(args);
    const char *id = hanging_job();
    int fds[12];
    for (int i = 0; i < 12; i++) {
        fds[i] = dial(9);
        cr_assert_geq(fds[i], 0);
        cr_assert_eq(send_hold(fds[i], id, 0, "X-Forwarded-For: 10.1.1.1\r\n"), 0);
        usleep(20 * 1000);
    }
    usleep(300 * 1000);
    /* Another client through the same proxy is served. */
    int fd = dial(10);
    cr_assert_geq(fd, 0);
    const char *req = "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\nX-Forwarded-For: 10.1.1.2\r\n\r\n";
    char *resp = exchange(fd, req, strlen(req), 3000);
    close(fd);
    cr_expect_eq(status_of(resp), 200, "another client behind the proxy: %.200s", resp ? resp : "");
    free(resp);
    /* The first client holds 8 (the per-address bound): its 4 oldest answered. */
    unsigned answered = 0;
    for (int i = 0; i < 12; i++) {
        char *out = exchange(fds[i], "", 0, 100);
        if (status_of(out) == 200) {
            answered++;
            cr_expect(i < 4, "long-poll %d answered, not one of the oldest", i);
            cr_expect(strstr(out, "\"state\":\"running\""), "%s", out);
        }
        free(out);
        close(fds[i]);
    }
    cr_expect_eq(answered, 4, "%u of the client's 12 long-polls answered early", answered);
}

/* Behind a trusted proxy, a client past its share of connections is told
 * so (429, closed) while the proxy's other clients go on. */
Test(hostile, a_proxied_client_past_its_share_gets_429, .fini = stop, .timeout = 30) {
    static const char *const args[] = {
        "--rate-limit", "0", "--per-ip-limit", "4", "--trusted-proxy", "127.0.0.9", "--job-deadline-ms", "4000", NULL};
    start(args);
    const char *id = hanging_job();
    int fds[4];
    for (int i = 0; i < 4; i++) { /* the client's four: in requests */
        fds[i] = dial(9);
        cr_assert_geq(fds[i], 0);
        cr_assert_eq(send_hold(fds[i], id, 0, "X-Forwarded-For: 10.1.1.1\r\n"), 0);
    }
    usleep(200 * 1000);
    static const struct {
        const char *who;
        int want;
    } cases[] = {{"10.1.1.1", 429}, {"10.1.1.2", 200}};
    for (size_t c = 0; c < 2; c++) {
        int fd = dial(9);
        cr_assert_geq(fd, 0);
        char req[256];
        int n = snprintf(req, sizeof req,
                         "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Forwarded-For: %s\r\nConnection: close\r\n\r\n",
                         cases[c].who);
        char *resp = exchange(fd, req, (size_t)n, 3000);
        cr_expect_eq(status_of(resp), cases[c].want, "%s: %.300s", cases[c].who, resp ? resp : "");
        if (cases[c].want == 429) cr_expect(resp && strstr(resp, "Retry-After: 1"), "%s", resp);
        free(resp);
        close(fd);
    }
    for (int i = 0; i < 4; i++) close(fds[i]);
}

/* A full table whose every connection is a held request: a newcomer
 * releases the oldest one (answered with its state, then closed). */
Test(hostile, held_requests_give_way_when_the_table_is_full, .fini = stop, .timeout = 30) {
    static const char *const args[] = {"--rate-limit",
                                       "0",
                                       "--conn-limit",
                                       "16",
                                       "--per-ip-limit",
                                       "16",
                                       "--held-per-ip",
                                       "16",
                                       "--held-limit",
                                       "16",
                                       "--job-deadline-ms",
                                       "5000",
                                       NULL};
    start(args);
    const char *id = hanging_job();
    int fds[16];
    for (int i = 0; i < 16; i++) {
        fds[i] = dial(2);
        cr_assert_geq(fds[i], 0);
        cr_assert_eq(send_hold(fds[i], id, 0, NULL), 0);
        usleep(20 * 1000);
    }
    usleep(300 * 1000);
    double ms = 0;
    cr_expect_eq(healthz_from(3, &ms), 200, "a newcomer to a table full of held requests");
    cr_expect_lt(ms, 1000);
    char *out = exchange(fds[0], "", 0, 2000); /* the oldest: answered, then closed */
    cr_expect_eq(status_of(out), 200, "%s", out ? out : "");
    cr_expect(out && strstr(out, "\"state\":\"running\""), "%s", out ? out : "");
    cr_expect(out && strcasestr(out, "Connection: close"), "%s", out ? out : "");
    free(out);
    for (int i = 1; i < 16; i++) {
        out = exchange(fds[i], "", 0, 50);
        cr_expect_eq(status_of(out), -1, "long-poll %d answered too: %s", i, out);
        free(out);
    }
    for (int i = 0; i < 16; i++) close(fds[i]);
}

/* ---- the queue's answers ----------------------------------------------------- */

/* A full queue behind a job that runs until its 10 s deadline, after a
 * quick one of its kind: Retry-After is the queue's estimate of when a place
 * opens (its kind runs in milliseconds, so it is expected to end at any
 * moment: 1 s), never the deadline. */
Test(hostile, a_full_queue_says_when_to_retry, .fini = stop, .timeout = 30) {
    static const char *const args[] = {"--rate-limit", "0", "--queue", "1", "--job-deadline-ms", "10000", NULL};
    start(args);
    json_t *done = helper_wait_job(srv.port, submit("{\"part\": 1, \"budget_ms\": 101}"), 10000);
    cr_assert_not_null(done);
    json_decref(done);
    hanging_job();
    usleep(300 * 1000);                          /* it runs */
    submit("{\"part\": 1, \"budget_ms\": 102}"); /* waits: the queue is full */
    struct helper_response r;
    const char *b = "{\"part\": 1, \"budget_ms\": 103}";
    cr_assert_eq(helper_request(srv.port, "POST", "/measure", NULL, b, strlen(b), &r), 0);
    cr_assert_eq(r.status, 429, "%s", r.body);
    char ra[16];
    cr_assert_not_null(helper_header(&r, "Retry-After", ra, sizeof ra));
    cr_expect_eq(atoi(ra), 1, "Retry-After: %s: the estimate, not the running job's deadline 9+ s away", ra);
    helper_response_free(&r);
}

/* A cached answer's location names the job that made the result; pushed
 * out of the finished table (--keep-jobs 2, two failures after it), it
 * still answers. */
Test(hostile, a_cached_answers_location_answers, .fini = stop, .timeout = 30) {
    static const char *const args[] = {"--rate-limit", "0", "--keep-jobs", "2", NULL};
    start(args);
    const char *body = "{\"part\": 1, \"budget_ms\": 111}";
    json_t *j = helper_wait_job(srv.port, submit(body), 10000);
    cr_assert_not_null(j);
    json_decref(j);
    for (int i = 0; i < 2; i++) { /* correctness-gate failures: not cached */
        char b[96];
        snprintf(b, sizeof b, "{\"part\": 1, \"iterations\": 5555, \"budget_ms\": %d}", 120 + i);
        j = helper_wait_job(srv.port, submit(b), 10000);
        cr_assert_not_null(j);
        cr_assert_str_eq(json_string_value(json_object_get(j, "state")), "failed");
        json_decref(j);
    }
    int st = 0;
    json_t *c = post_json("/measure", body, &st);
    cr_assert_eq(st, 200);
    cr_assert(json_is_true(json_object_get(c, "cached")));
    const char *loc = json_string_value(json_object_get(c, "location"));
    cr_assert_not_null(loc);
    struct helper_response r;
    cr_assert_eq(helper_request(srv.port, "GET", loc, NULL, NULL, 0, &r), 0);
    cr_expect_eq(r.status, 200, "the cached answer's location %s answered %d: %s", loc, r.status, r.body);
    json_t *g = helper_json(&r);
    cr_expect_str_eq(json_string_value(json_object_get(g, "state")), "done");
    cr_expect(json_is_object(json_object_get(g, "document")), "%s", r.body);
    json_decref(g);
    helper_response_free(&r);
    json_decref(c);
}
