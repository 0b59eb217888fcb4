/* http.c -- see http.h.
 *
 * libmicrohttpd calls the URI-log callback once the request line is read
 * (the raw target, before it unescapes it: where %00 and the argument count
 * are checked), then the access handler several times per request: first
 * with the headers, then once per chunk of body, then once with
 * *upload_data_size == 0. The URI-log callback allocates the struct http_req
 * (libmicrohttpd hands its return value to the access handler as *req_cls);
 * the first access call matches the route and applies every check that needs
 * no body, answering at once when one fails (so a 413 by Content-Length, a
 * 401 or a 429 never reads the body; a response queued before the body makes
 * libmicrohttpd close the connection after it). Body chunks are appended up
 * to the limit; past it the rest is discarded and the last call answers 413.
 * The request-completed callback frees the state. Status counters live in a
 * small fixed table.
 *
 * What libmicrohttpd 0.9.75 cannot do is done around it, with one
 * housekeeping thread ("reaper"):
 *  - deadlines independent of activity. Its connection timeout is an idle
 *    timeout that every byte restarts. The layer records each connection at
 *    MHD_CONNECTION_NOTIFY_STARTED (socket, address, phase, phase start) and
 *    moves it through headers -> body -> busy -> idle from the callbacks
 *    above; the reaper shuts down (shutdown(2), never close) the socket of a
 *    connection past its phase's deadline, and libmicrohttpd, reading EOF,
 *    closes it. libmicrohttpd notifies CLOSED before it closes the socket and
 *    the entry leaves the table under the same lock the reaper holds, so the
 *    descriptor shut down is always still the connection's own.
 *  - a fair table. libmicrohttpd refuses at accept once its own limit is
 *    reached, with no say over who goes; so its limit is set above
 *    conn_limit, and a newcomer that makes the table exceed conn_limit evicts
 *    an incomplete connection of the heaviest address, or releases the
 *    oldest held request of that address (or is itself shut).
 *  - the per-address share. libmicrohttpd's own per-IP limit counts sockets
 *    by peer at accept, so behind a proxy every reader would share one
 *    address; the layer counts instead (its limit is left off): a direct
 *    peer at accept, a trusted proxy's connection by the client its
 *    X-Forwarded-For names once the headers are in (slot_begin), and as the
 *    proxy's own again when idle between requests.
 *  - held requests (long-polls, streams), bounded per address and in all,
 *    the oldest released first; and hang-ups of suspended ones, which
 *    libmicrohttpd does not poll: the reaper poll()s their sockets.
 *  - wake-ups of suspended requests: MHD_resume_connection() from any thread
 *    (MHD_ALLOW_SUSPEND_RESUME), guarded by the layer's own flag so a wake
 *    before the suspend is kept, and timed wake-ups by the reaper.
 * Locks: `clock` (the table and the held counts) is taken before `wlock`
 * (suspension) where both are needed, never the other way round;
 * libmicrohttpd calls none of the layer's callbacks with a lock of its own
 * held, and MHD_resume_connection() takes only its own briefly.
 * CPU-heavy work runs on a small pool of the layer's own threads with the
 * connection suspended, never on a daemon thread: libmicrohttpd ties a
 * connection to the thread that accepted it, so work on that thread would
 * leave every other connection of the thread unread.
 */
#define _GNU_SOURCE
#include "server/http/http.h"
#include "api/jsonout.h"
#include "server/core/log.h"
#include "server/http/clientaddr.h"
#include "server/http/framing.h"
#include "server/http/ratelimit.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <malloc.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "kernels/base/timeutil.h"

#define HTTP_MAX_ROUTES 64
#define HTTP_MAX_HEADERS 12
#define HTTP_MAX_COUNTERS 256
#define HTTP_CONN_SLACK 64u /* libmicrohttpd's limit above ours: room to evict */
#define HTTP_REAP_MS 100    /* reaper period                                  */
#define HTTP_RELEASE_GRACE_MS 2000.0 /* a released connection's time to take its answer */
#define HTTP_POLL_CHUNK 64           /* held sockets looked at per poll() of the reaper */

struct route {
    char method[8];
    char pattern[128];
    char label[64];
    unsigned flags;
    http_handler_fn fn;
    void *ctx;
};

struct counter {
    const char *label;
    int status;
    unsigned long long n;
};

/* One open connection, in the layer's table (see the top of the file). */
enum conn_phase { PHASE_HEADERS, PHASE_BODY, PHASE_BUSY, PHASE_IDLE };

struct conn_slot {
    MHD_socket fd;
    char peer[CLIENTADDR_LEN]; /* the socket's address */
    /* Whom it counts against: the peer, or, while a request is in, the
     * client a trusted proxy forwarded it for. */
    char addr[CLIENTADDR_LEN];
    int proxied; /* the peer is a trusted proxy */
    enum conn_phase phase;
    double since;         /* monotonic ms when the phase began           */
    int killed;           /* shut down by the layer                      */
    struct http_req *req; /* the request on it now (headers in), or NULL */
    int held;             /* req is held: counted against the bounds     */
    double held_since;
    /* Its held request was answered to make room: it closes once that
     * answer is written. */
    int releasing;
    double released_at;
    struct conn_slot *prev, *next;
};

/* A task of the CPU pool. */
struct task {
    struct http_req *r;
    void (*work)(void *);
    void *ctx;
    struct task *next;
};

struct http {
    struct http_config cfg;
    char *token;
    char *bind;
    char *cors[HTTP_MAX_CORS];
    struct clientaddr_net proxies[HTTP_MAX_PROXIES];
    unsigned nproxies;
    struct ratelimit *rl_cpu;
    /* connection table and held requests (clock; taken before wlock when
     * both are needed, never after) */
    pthread_mutex_t clock;
    struct conn_slot *slots;
    unsigned nheld;
    unsigned long long evicted, deadline_closed, refused, address_refused, hangups;
    unsigned long long released_address, released_total, released_table;
    /* suspended requests (wlock) */
    pthread_mutex_t wlock;
    struct http_req *waiting; /* suspended with a timeout, or any */
    int closing;
    unsigned live;            /* requests begun (headers in) and not ended */
    pthread_cond_t lcond;     /* signalled when `live` falls to 0          */
    /* reaper */
    pthread_t reaper;
    int reaper_started;
    pthread_mutex_t rlock;
    pthread_cond_t rcond;
    int reaper_stop;
    /* CPU pool */
    pthread_mutex_t plock;
    pthread_cond_t pcond;
    pthread_t *pool;
    unsigned npool;
    struct task *thead, *ttail;
    unsigned tdepth;
    int pool_stop;
    struct MHD_Daemon *d;
    MHD_socket quiesced;
    unsigned port;
    struct route routes[HTTP_MAX_ROUTES];
    unsigned nroutes;
    struct ratelimit *rl;
    pthread_mutex_t mlock;
    struct counter counters[HTTP_MAX_COUNTERS];
    unsigned ncounters;
    http_observer_fn observer;
    void *observer_ctx;
};

struct http_req {
    struct http *h;
    struct MHD_Connection *conn;
    struct conn_slot *slot;
    const struct route *route;
    const char *method, *path;
    char *body;
    size_t len, cap;
    int too_large;
    int replied;
    int started;        /* the first access call has run          */
    char raw_fault[96]; /* what the URI-log callback found wrong  */
    char client[CLIENTADDR_LEN]; /* the peer                               */
    char addr[CLIENTADDR_LEN];   /* the address the limits count (clientaddr.h) */
    int held_counted;            /* hold() has run                         */
    char *hname[HTTP_MAX_HEADERS], *hvalue[HTTP_MAX_HEADERS];
    unsigned nheaders;
    /* suspension (h->wlock) */
    int suspended, wake_pending, cancelled, in_wait_list;
    int released;    /* asked to answer now (atomic reads: any thread)  */
    int close_after; /* released for the table: no keep-alive           */
    int parked;     /* suspended during the current call      */
    double wake_at; /* monotonic ms, 0: none                  */
    http_handler_fn cont;
    void *cont_ctx;
    struct http_req *wprev, *wnext;
    /* streaming */
    int streaming;
    /* deferred task and cleanup */
    void *task_ctx;
    void (*task_free)(void *);
    void (*cleanup)(void *);
    void *cleanup_arg;
    double t0_ms; /* monotonic, when the request line arrived */
};

/* ---- configuration ---------------------------------------------------- */

struct http *http_create(const struct http_config *cfg, char *err) {
    struct http *h = calloc(1, sizeof *h);
    if (!h) goto oom;
    h->cfg = *cfg;
    if (!h->cfg.threads) h->cfg.threads = 4;
    if (!h->cfg.conn_timeout_s) h->cfg.conn_timeout_s = 30;
    if (!h->cfg.conn_limit) h->cfg.conn_limit = 256;
    if (!h->cfg.per_ip_limit) h->cfg.per_ip_limit = 32;
    if (!h->cfg.body_limit) h->cfg.body_limit = 64 * 1024;
    if (!h->cfg.rate_table) h->cfg.rate_table = 4096;
    if (!h->cfg.header_timeout_s) h->cfg.header_timeout_s = 10;
    if (!h->cfg.body_timeout_s) h->cfg.body_timeout_s = 30;
    if (!h->cfg.cpu_threads) h->cfg.cpu_threads = 2;
    if (!h->cfg.cpu_queue) h->cfg.cpu_queue = 64;
    if (!h->cfg.drain_ms) h->cfg.drain_ms = 5000;
    if (!h->cfg.held_limit) h->cfg.held_limit = h->cfg.conn_limit / 2 ? h->cfg.conn_limit / 2 : 1;
    if (!h->cfg.held_per_ip) h->cfg.held_per_ip = 8;
    h->quiesced = MHD_INVALID_SOCKET;
    if (!(h->bind = strdup(cfg->bind ? cfg->bind : "127.0.0.1"))) goto oom;
    if (cfg->token && cfg->token[0] && !(h->token = strdup(cfg->token))) goto oom;
    for (unsigned i = 0; i < HTTP_MAX_CORS && cfg->cors[i]; i++)
        if (!(h->cors[i] = strdup(cfg->cors[i]))) goto oom;
    const char *nets[HTTP_MAX_PROXIES + 2];
    unsigned nn = 0;
    if (cfg->trust_forwarded) nets[nn++] = "127.0.0.1", nets[nn++] = "::1";
    for (unsigned i = 0; i < HTTP_MAX_PROXIES && cfg->trusted_proxies[i]; i++) nets[nn++] = cfg->trusted_proxies[i];
    for (unsigned i = 0; i < nn; i++) {
        char why[ERR_LEN];
        if (h->nproxies == HTTP_MAX_PROXIES) {
            dv_seterr(err, "http: at most %d trusted proxies (with --trust-forwarded's two)", HTTP_MAX_PROXIES);
            goto fail;
        }
        if (clientaddr_net_parse(nets[i], &h->proxies[h->nproxies++], why) < 0) {
            dv_seterr(err, "http: trusted proxy %s", why);
            goto fail;
        }
    }
    if (!(h->rl = ratelimit_create(h->cfg.rate_per_min, h->cfg.rate_table))) goto oom;
    if (!(h->rl_cpu = ratelimit_create(h->cfg.cpu_rate_per_min, h->cfg.rate_table))) goto oom;
    pthread_mutex_init(&h->mlock, NULL);
    pthread_mutex_init(&h->clock, NULL);
    pthread_mutex_init(&h->wlock, NULL);
    pthread_mutex_init(&h->rlock, NULL);
    pthread_mutex_init(&h->plock, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&h->rcond, &ca);
    pthread_cond_init(&h->lcond, &ca);
    pthread_condattr_destroy(&ca);
    pthread_cond_init(&h->pcond, NULL);
    return h;
oom:
    dv_seterr(err, "http: out of memory");
fail:
    if (h) {
        free(h->bind);
        free(h->token);
        for (unsigned i = 0; i < HTTP_MAX_CORS; i++) free(h->cors[i]);
        ratelimit_free(h->rl);
        ratelimit_free(h->rl_cpu);
        free(h);
    }
    return NULL;
}

int http_route_add(struct http *h, const char *method, const char *pattern, const char *label, unsigned flags,
                   http_handler_fn fn, void *ctx, char *err) {
    if (h->d) {
        dv_seterr(err, "http: routes must be added before the server starts");
        return -1;
    }
    if (h->nroutes == HTTP_MAX_ROUTES || strlen(method) >= sizeof h->routes[0].method ||
        strlen(pattern) >= sizeof h->routes[0].pattern) {
        dv_seterr(err, "http: cannot add route %s %s: table full or names too long", method, pattern);
        return -1;
    }
    struct route *r = &h->routes[h->nroutes++];
    snprintf(r->method, sizeof r->method, "%s", method);
    snprintf(r->pattern, sizeof r->pattern, "%s", pattern);
    snprintf(r->label, sizeof r->label, "%s", label ? label : pattern);
    r->flags = flags;
    r->fn = fn;
    r->ctx = ctx;
    return 0;
}

/* ---- metrics ---------------------------------------------------------- */

void http_set_observer(struct http *h, http_observer_fn fn, void *ctx) {
    h->observer = fn;
    h->observer_ctx = ctx;
}

static void count(struct http *h, const char *label, int status) {
    pthread_mutex_lock(&h->mlock);
    unsigned i;
    for (i = 0; i < h->ncounters; i++)
        if (h->counters[i].status == status && strcmp(h->counters[i].label, label) == 0) break;
    if (i == h->ncounters && h->ncounters < HTTP_MAX_COUNTERS) {
        h->counters[i].label = label;
        h->counters[i].status = status;
        h->counters[i].n = 0;
        h->ncounters++;
    }
    if (i < h->ncounters) h->counters[i].n++;
    pthread_mutex_unlock(&h->mlock);
}

char *http_metrics_text(struct http *h) {
    struct http_conn_stats cs;
    http_conn_stats(h, &cs);
    pthread_mutex_lock(&h->mlock);
    size_t cap = 4096 + (size_t)h->ncounters * 192;
    char *s = malloc(cap);
    if (s) {
        size_t n = (size_t)snprintf(
            s, cap,
            "# HELP dv_http_connections Connections open now.\n"
            "# TYPE dv_http_connections gauge\n"
            "dv_http_connections %u\n"
            "# HELP dv_http_connections_closed_total Connections the server shut: past a header or body deadline, "
            "evicted for a newcomer, refused (table all busy), refused over the per-address share, or hung up "
            "while held.\n"
            "# TYPE dv_http_connections_closed_total counter\n"
            "dv_http_connections_closed_total{reason=\"deadline\"} %llu\n"
            "dv_http_connections_closed_total{reason=\"evicted\"} %llu\n"
            "dv_http_connections_closed_total{reason=\"refused\"} %llu\n"
            "dv_http_connections_closed_total{reason=\"address_limit\"} %llu\n"
            "dv_http_connections_closed_total{reason=\"hangup\"} %llu\n"
            "# HELP dv_http_held_requests Long-polls and event streams held open now.\n"
            "# TYPE dv_http_held_requests gauge\n"
            "dv_http_held_requests %u\n"
            "# HELP dv_http_held_released_total Held requests answered early with their current state to make "
            "room: over the per-address bound, over the total bound, or for a newcomer to a full table.\n"
            "# TYPE dv_http_held_released_total counter\n"
            "dv_http_held_released_total{reason=\"address\"} %llu\n"
            "dv_http_held_released_total{reason=\"total\"} %llu\n"
            "dv_http_held_released_total{reason=\"table\"} %llu\n"
            "# HELP dv_analysis_queue_depth Analyses waiting for a CPU pool thread.\n"
            "# TYPE dv_analysis_queue_depth gauge\n"
            "dv_analysis_queue_depth %u\n"
            "# HELP dv_http_requests_total HTTP requests by route, status and status class.\n"
            "# TYPE dv_http_requests_total counter\n",
            cs.open, cs.deadline_closed, cs.evicted, cs.refused, cs.address_refused, cs.hangups, cs.held,
            cs.released_address, cs.released_total, cs.released_table, cs.cpu_queued);
        for (unsigned i = 0; i < h->ncounters && n < cap; i++)
            n += (size_t)snprintf(s + n, cap - n,
                                  "dv_http_requests_total{route=\"%s\",status=\"%d\",status_class=\"%s\"} %llu\n",
                                  h->counters[i].label, h->counters[i].status, http_status_class(h->counters[i].status),
                                  h->counters[i].n);
    }
    pthread_mutex_unlock(&h->mlock);
    return s;
}

const char *http_status_class(int status) {
    static const char *const names[] = {"1xx", "2xx", "3xx", "4xx", "5xx"};
    return status >= 100 && status < 600 ? names[status / 100 - 1] : "other";
}

/* ---- request accessors ------------------------------------------------ */

const char *http_req_method(const struct http_req *r) { return r->method; }
const char *http_req_path(const struct http_req *r) { return r->path; }
const char *http_req_tail(const struct http_req *r) {
    if (!r->route || !(r->route->flags & HTTP_ROUTE_PREFIX)) return "";
    return r->path + strlen(r->route->pattern);
}
const char *http_req_body(const struct http_req *r, size_t *len) {
    if (len) *len = r->len;
    return r->body ? r->body : "";
}
const char *http_req_header(const struct http_req *r, const char *name) {
    return MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, name);
}
const char *http_req_query(const struct http_req *r, const char *key) {
    return MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, key);
}
const char *http_req_client(const struct http_req *r) { return r->client; }
const char *http_req_address(const struct http_req *r) { return r->addr; }

/* What http_req_query_check() walks the arguments with. */
struct query_walk {
    const char *const *known;
    const char *seen[HTTP_MAX_ARGS];
    unsigned nseen;
    const char *bad;
    int why; /* 1 unknown, 2 repeated */
};

static enum MHD_Result query_arg(void *cls, enum MHD_ValueKind kind, const char *key, const char *value) {
    (void)kind;
    (void)value;
    struct query_walk *w = cls;
    int known = 0;
    for (size_t i = 0; w->known[i] && !known; i++) known = strcmp(key, w->known[i]) == 0;
    for (unsigned i = 0; known && i < w->nseen; i++) {
        if (strcmp(key, w->seen[i]) == 0) {
            w->bad = key;
            w->why = 2;
            return MHD_NO;
        }
    }
    if (!known) {
        w->bad = key;
        w->why = 1;
        return MHD_NO;
    }
    if (w->nseen < HTTP_MAX_ARGS) w->seen[w->nseen++] = key;
    return MHD_YES;
}

int http_req_query_check(const struct http_req *r, const char *const *known, char *name, size_t len) {
    struct query_walk w = {.known = known};
    MHD_get_connection_values(r->conn, MHD_GET_ARGUMENT_KIND, query_arg, &w);
    if (w.bad && len) snprintf(name, len, "%s", w.bad);
    return w.bad ? w.why : 0;
}

int http_secure_equal(const char *a, const char *b) {
    size_t la = strlen(a), lb = strlen(b);
    unsigned char diff = (unsigned char)(la != lb);
    for (size_t i = 0; i < lb; i++) diff |= (unsigned char)(a[la ? i % la : 0] ^ b[i]);
    return diff == 0 && la == lb;
}

int http_req_authorized(const struct http_req *r) {
    if (!r->h->token) return 1;
    const char *a = http_req_header(r, MHD_HTTP_HEADER_AUTHORIZATION);
    if (!a || strncasecmp(a, "Bearer ", 7) != 0) return 0;
    a += 7;
    while (*a == ' ') a++;
    return http_secure_equal(a, r->h->token);
}

void http_req_add_header(struct http_req *r, const char *name, const char *value) {
    if (r->nheaders == HTTP_MAX_HEADERS) return;
    char *n = strdup(name), *v = strdup(value);
    if (!n || !v) {
        free(n);
        free(v);
        return;
    }
    r->hname[r->nheaders] = n;
    r->hvalue[r->nheaders] = v;
    r->nheaders++;
}

/* ---- replies ----------------------------------------------------------- */

static const char *cors_allowed(const struct http *h, const char *origin) {
    if (!origin) return NULL;
    for (unsigned i = 0; i < HTTP_MAX_CORS && h->cors[i]; i++)
        if (strcmp(h->cors[i], "*") == 0 || strcmp(h->cors[i], origin) == 0) return h->cors[i];
    return NULL;
}

static void unhold(struct http_req *r);

static void queue(struct http_req *r, int status, struct MHD_Response *resp) {
    if (r->replied) {
        LOG(LOG_ERR, "http: %s %s answered twice", r->method, r->path);
        MHD_destroy_response(resp);
        return;
    }
    r->replied = 1;
    if (!resp) {
        LOG(LOG_ERR, "http: out of memory for a response to %s %s", r->method, r->path);
        return; /* MHD closes the connection */
    }
    int cache_set = 0;
    for (unsigned i = 0; i < r->nheaders; i++) {
        MHD_add_response_header(resp, r->hname[i], r->hvalue[i]);
        if (strcasecmp(r->hname[i], "Cache-Control") == 0) cache_set = 1;
    }
    /* Job states, health and errors change from one request to the next:
     * nothing may be stored unless the route said otherwise. */
    if (!cache_set) MHD_add_response_header(resp, "Cache-Control", "no-store");
    const char *origin = http_req_header(r, "Origin");
    if (origin) {
        MHD_add_response_header(resp, "Vary", "Origin");
        if (cors_allowed(r->h, origin)) {
            MHD_add_response_header(resp, "Access-Control-Allow-Origin", origin);
            MHD_add_response_header(resp, "Access-Control-Expose-Headers", "Location, Retry-After");
        }
    }
    MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
    /* Stopping, or released to make room in the table: the client is told
     * not to send another request here. */
    if (__atomic_load_n(&r->h->closing, __ATOMIC_RELAXED) || __atomic_load_n(&r->close_after, __ATOMIC_ACQUIRE))
        MHD_add_response_header(resp, "Connection", "close");
    /* A long-poll's answer ends its hold; a stream holds until it ends. */
    if (!r->streaming) unhold(r);
    MHD_queue_response(r->conn, (unsigned)status, resp);
    MHD_destroy_response(resp);
    count(r->h, r->route ? r->route->label : "other", status);
    if (r->h->observer)
        r->h->observer(r->h->observer_ctx, r->route ? r->route->label : "other", status,
                       (timeutil_now_ms() - r->t0_ms) / 1e3);
    /* Request lines are debug; a 503 is a state (no GPU, draining) that
     * the routes report when it changes, not per request. */
    LOG(status >= 500 && status != 503 ? LOG_WARNING : LOG_DEBUG, "http: %s %s %s -> %d", r->client, r->method,
        r->path, status);
}

void http_reply(struct http_req *r, int status, const char *content_type, const char *body, size_t len) {
    struct MHD_Response *resp = MHD_create_response_from_buffer(len, (void *)body, MHD_RESPMEM_MUST_COPY);
    if (resp && content_type) MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, content_type);
    queue(r, status, resp);
}

void http_reply_take(struct http_req *r, int status, const char *content_type, char *body) {
    if (!body) {
        static const char oom[] = "{\"error\":{\"status\":500,\"field\":null,\"reason\":\"out of memory\"}}\n";
        http_reply(r, 500, "application/json", oom, sizeof oom - 1);
        return;
    }
    struct MHD_Response *resp = MHD_create_response_from_buffer(strlen(body), body, MHD_RESPMEM_MUST_FREE);
    if (!resp) free(body);
    else if (content_type) MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, content_type);
    queue(r, status, resp);
}

void http_reply_json(struct http_req *r, int status, json_t *v) {
    char *s = jsonout_dumps(v, JSON_COMPACT);
    json_decref(v);
    if (s) {
        size_t n = strlen(s);
        char *t = realloc(s, n + 2);
        if (t) {
            t[n] = '\n';
            t[n + 1] = '\0';
            s = t;
        }
    }
    http_reply_take(r, status, "application/json", s);
}

void http_reply_error_ex(struct http_req *r, int status, const char *field, json_t *extra, int extra_bad,
                         const char *fmt, ...) {
    char reason[ERR_LEN * 2];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, sizeof reason, fmt, ap);
    va_end(ap);
    int bad = extra_bad;
    json_t *e = json_object();
    jsonout_put(e, "status", json_integer(status), &bad);
    jsonout_put(e, "field", field && field[0] ? jsonout_str(field) : json_null(), &bad);
    jsonout_put(e, "reason", jsonout_str(reason), &bad);
    if (extra) {
        if (json_object_update(e, extra) != 0) bad = 1;
        json_decref(extra);
    }
    json_t *root = json_object();
    jsonout_put(root, "error", e, &bad);
    if (bad) { /* an error document missing members would mislead: say OOM */
        json_decref(root);
        http_reply_take(r, 500, "application/json", NULL);
        return;
    }
    http_reply_json(r, status, root);
}

void http_reply_fd(struct http_req *r, int status, const char *content_type, int fd, size_t size) {
    struct MHD_Response *resp = MHD_create_response_from_fd(size, fd);
    if (!resp) close(fd);
    else if (content_type) MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, content_type);
    queue(r, status, resp);
}

/* ---- dispatch ---------------------------------------------------------- */

static int path_matches(const struct route *rt, const char *path) {
    if (rt->flags & HTTP_ROUTE_PREFIX) return strncmp(path, rt->pattern, strlen(rt->pattern)) == 0;
    return strcmp(path, rt->pattern) == 0;
}

/* Finds the best route for (method, path). `*path_known` is 1 when some
 * route has this path, whatever its method; `allow` lists their methods. */
static const struct route *match(const struct http *h, const char *method, const char *path, int *path_known,
                                 char *allow, size_t alen) {
    const struct route *best = NULL;
    size_t best_len = 0;
    int best_exact = 0;
    *path_known = 0;
    allow[0] = '\0';
    /* The best path first (exact > longest prefix), then its methods. */
    const char *best_pattern = NULL;
    unsigned best_flags = 0;
    for (unsigned i = 0; i < h->nroutes; i++) {
        const struct route *rt = &h->routes[i];
        if (!path_matches(rt, path)) continue;
        int exact = !(rt->flags & HTTP_ROUTE_PREFIX);
        size_t l = strlen(rt->pattern);
        if (!best_pattern || (exact && !best_exact) || (exact == best_exact && l > best_len)) {
            best_pattern = rt->pattern;
            best_flags = rt->flags & HTTP_ROUTE_PREFIX;
            best_exact = exact;
            best_len = l;
        }
    }
    if (!best_pattern) return NULL;
    *path_known = 1;
    const char *m = strcmp(method, "HEAD") == 0 ? "GET" : method;
    for (unsigned i = 0; i < h->nroutes; i++) {
        const struct route *rt = &h->routes[i];
        if (strcmp(rt->pattern, best_pattern) != 0 || (rt->flags & HTTP_ROUTE_PREFIX) != best_flags) continue;
        if (!strstr(allow, rt->method)) {
            size_t n = strlen(allow);
            snprintf(allow + n, alen - n, "%s%s", n ? ", " : "", rt->method);
            if (strcmp(rt->method, "GET") == 0) {
                n = strlen(allow);
                snprintf(allow + n, alen - n, ", HEAD");
            }
        }
        if (strcmp(rt->method, m) == 0) best = rt;
    }
    size_t n = strlen(allow);
    snprintf(allow + n, alen - n, ", OPTIONS");
    return best;
}

static void client_address(struct MHD_Connection *c, char *out, size_t len) {
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    clientaddr_of(ci ? ci->client_addr : NULL, out, len);
}

static enum MHD_Result xff_line(void *cls, enum MHD_ValueKind kind, const char *key, const char *value) {
    (void)kind;
    if (strcasecmp(key, "X-Forwarded-For") == 0) clientaddr_xff_add(cls, value);
    return MHD_YES;
}

/* The address the limits count (clientaddr.h says which), into r->addr:
 * read once the headers are in. */
static void counted_address(struct http_req *r) {
    struct clientaddr_xff x = {.n = 0};
    x.buf[0] = '\0';
    if (r->h->nproxies) /* none trusted: no header to read */
        MHD_get_connection_values(r->conn, MHD_HEADER_KIND, xff_line, &x);
    clientaddr_forwarded(r->client, r->h->proxies, r->h->nproxies, &x, r->addr, sizeof r->addr);
}

static enum MHD_Result framing_line(void *cls, enum MHD_ValueKind kind, const char *key, const char *value) {
    (void)kind;
    framing_header(cls, key, value);
    return MHD_YES;
}

/* Checks the message framing (framing.h). Returns 0, or the status to
 * answer (400/501) with `why` filled. */
static int framing_check(struct http_req *r, const char *version, char *why, size_t wlen) {
    if (r->raw_fault[0]) {
        snprintf(why, wlen, "%s", r->raw_fault);
        return 400;
    }
    struct framing f;
    framing_init(&f);
    MHD_get_connection_values(r->conn, MHD_HEADER_KIND, framing_line, &f);
    return framing_verdict(&f, version && strcmp(version, MHD_HTTP_VERSION_1_1) == 0, why, wlen);
}

/* The URI-log callback: the raw request target, before unescaping. Returns
 * the request state libmicrohttpd then passes as *req_cls. */
static void *on_uri(void *cls, const char *uri, struct MHD_Connection *conn) {
    struct http *h = cls;
    struct http_req *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    r->h = h;
    r->t0_ms = timeutil_now_ms();
    r->conn = conn;
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    r->slot = ci ? ci->socket_context : NULL;
    if (framing_target(uri, HTTP_MAX_ARGS, r->raw_fault, sizeof r->raw_fault) == FRAMING_TARGET_ARGS) {
        /* libmicrohttpd parses the arguments right after this callback into
         * its per-connection pool, and a query of many short arguments
         * exhausts the pool before any handler runs; it then fails to send
         * its own 431 and the connection hangs until its timeout. `uri` is
         * the connection's read buffer, which libmicrohttpd rewrites in place
         * next (it cuts the query at the '?'): ending the query string right
         * after the '?' leaves nothing to parse, and the handler answers 400
         * from raw_fault. */
        strchr(uri, '?')[1] = '\0';
    }
    return r;
}

/* ---- connection table --------------------------------------------------- */

/* Counted in the table: not shut down, and not on its way out after a
 * released answer. */
static int slot_live(const struct conn_slot *s) { return !s->killed && !s->releasing; }

static unsigned count_addr_locked(const struct http *h, const char *addr, int held_only) {
    unsigned n = 0;
    for (const struct conn_slot *t = h->slots; t; t = t->next)
        if (slot_live(t) && (!held_only || t->held) && strcmp(t->addr, addr) == 0) n++;
    return n;
}

static void slot_kill_locked(struct conn_slot *s) {
    if (s->killed) return;
    s->killed = 1;
    shutdown(s->fd, SHUT_RDWR);
}

/* A request's headers are in: the slot carries it (and, behind a trusted
 * proxy, counts against the client it came for). Returns 1 when that
 * client now holds more than its share of connections. */
static int slot_begin(struct http *h, struct http_req *r) {
    struct conn_slot *s = r->slot;
    if (!s) return 0;
    int over = 0;
    pthread_mutex_lock(&h->clock);
    s->phase = PHASE_BODY;
    s->since = timeutil_now_ms();
    s->req = r;
    if (s->proxied) {
        snprintf(s->addr, sizeof s->addr, "%s", r->addr);
        over = strcmp(s->addr, s->peer) != 0 && count_addr_locked(h, s->addr, 0) > h->cfg.per_ip_limit;
        if (over) h->address_refused++;
    }
    pthread_mutex_unlock(&h->clock);
    return over;
}

static void slot_phase(struct http *h, struct conn_slot *s, enum conn_phase p) {
    if (!s) return;
    pthread_mutex_lock(&h->clock);
    s->phase = p;
    s->since = timeutil_now_ms();
    pthread_mutex_unlock(&h->clock);
}

static void release_locked(struct http *h, struct conn_slot *v, int close_after);

/* The oldest held connection (other than `except`) of `addr`, or of anyone
 * when `addr` is NULL; with `heaviest`, of the address holding the most
 * live connections. NULL when none. */
static struct conn_slot *oldest_held_locked(struct http *h, const char *addr, const struct conn_slot *except,
                                            int heaviest) {
    struct conn_slot *victim = NULL;
    unsigned victim_count = 0;
    for (struct conn_slot *s = h->slots; s; s = s->next) {
        if (s == except || !s->held || !slot_live(s) || (addr && strcmp(s->addr, addr) != 0)) continue;
        unsigned n = heaviest ? count_addr_locked(h, s->addr, 0) : 0;
        if (!victim || n > victim_count || (n == victim_count && s->held_since < victim->held_since)) {
            victim = s;
            victim_count = n;
        }
    }
    return victim;
}

/* A newcomer made the table exceed its limit: shut an incomplete connection
 * of the address with the most live connections, oldest first; failing
 * that, answer the oldest held request of the heaviest address with its
 * current state and close its connection after; failing that (every other
 * connection in a request that must run), shut the newcomer itself. */
static void evict_locked(struct http *h, struct conn_slot *newcomer) {
    struct conn_slot *victim = NULL;
    unsigned victim_count = 0;
    for (struct conn_slot *s = h->slots; s; s = s->next) {
        if (s == newcomer || !slot_live(s) || (s->phase != PHASE_HEADERS && s->phase != PHASE_IDLE)) continue;
        unsigned n = count_addr_locked(h, s->addr, 0);
        if (!victim || n > victim_count || (n == victim_count && s->since < victim->since)) {
            victim = s;
            victim_count = n;
        }
    }
    if (victim) {
        h->evicted++;
        slot_kill_locked(victim);
    } else if ((victim = oldest_held_locked(h, NULL, newcomer, 1))) {
        h->released_table++;
        release_locked(h, victim, 1);
    } else {
        h->refused++;
        slot_kill_locked(newcomer);
    }
}

static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
                          enum MHD_ConnectionNotificationCode toe) {
    struct http *h = cls;
    if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
        struct conn_slot *s = calloc(1, sizeof *s);
        *socket_context = s;
        const union MHD_ConnectionInfo *ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
        if (!s || !ci) {
            if (ci) shutdown(ci->connect_fd, SHUT_RDWR); /* no memory to track it: do not serve it */
            return;
        }
        s->fd = ci->connect_fd;
        client_address(conn, s->peer, sizeof s->peer);
        snprintf(s->addr, sizeof s->addr, "%s", s->peer);
        s->proxied = clientaddr_in_nets(h->proxies, h->nproxies, s->peer, strlen(s->peer));
        s->phase = PHASE_HEADERS;
        s->since = timeutil_now_ms();
        pthread_mutex_lock(&h->clock);
        s->next = h->slots;
        if (h->slots) h->slots->prev = s;
        h->slots = s;
        unsigned live = 0;
        for (struct conn_slot *t = h->slots; t; t = t->next) live += slot_live(t);
        /* A proxy's connections are counted by the client each request
         * names (slot_begin); its own share is the table's. */
        if (!s->proxied && count_addr_locked(h, s->addr, 0) > h->cfg.per_ip_limit) {
            h->address_refused++;
            slot_kill_locked(s);
        } else if (live > h->cfg.conn_limit) {
            evict_locked(h, s);
        }
        pthread_mutex_unlock(&h->clock);
    } else if (toe == MHD_CONNECTION_NOTIFY_CLOSED) {
        struct conn_slot *s = *socket_context;
        if (!s) return;
        pthread_mutex_lock(&h->clock);
        if (s->held) h->nheld--;
        if (s->prev) s->prev->next = s->next;
        else h->slots = s->next;
        if (s->next) s->next->prev = s->prev;
        pthread_mutex_unlock(&h->clock);
        free(s);
        *socket_context = NULL;
    }
}

/* ---- suspension --------------------------------------------------------- */

static void wait_list_add_locked(struct http *h, struct http_req *r) {
    if (r->in_wait_list) return;
    r->wprev = NULL;
    r->wnext = h->waiting;
    if (h->waiting) h->waiting->wprev = r;
    h->waiting = r;
    r->in_wait_list = 1;
}

static void wait_list_remove_locked(struct http *h, struct http_req *r) {
    if (!r->in_wait_list) return;
    if (r->wprev) r->wprev->wnext = r->wnext;
    else h->waiting = r->wnext;
    if (r->wnext) r->wnext->wprev = r->wprev;
    r->in_wait_list = 0;
}

/* Suspends `r` unless a wake is pending. Returns 1 when suspended, 0 when
 * the caller should go on at once. */
static int suspend_now(struct http_req *r, unsigned timeout_ms) {
    struct http *h = r->h;
    int suspended = 0;
    pthread_mutex_lock(&h->wlock);
    if (h->closing) r->cancelled = 1;
    if (r->wake_pending || r->cancelled || r->released) {
        r->wake_pending = 0;
    } else {
        r->suspended = 1;
        r->wake_at = timeout_ms ? timeutil_now_ms() + timeout_ms : 0;
        wait_list_add_locked(h, r);
        MHD_suspend_connection(r->conn);
        suspended = 1;
        r->parked = 1; /* read by the daemon thread that is suspending it */
    }
    pthread_mutex_unlock(&h->wlock);
    return suspended;
}

static void wake_locked(struct http *h, struct http_req *r) {
    if (r->suspended) {
        r->suspended = 0;
        wait_list_remove_locked(h, r);
        MHD_resume_connection(r->conn);
    } else {
        r->wake_pending = 1;
    }
}

void http_req_wake(struct http_req *r) {
    pthread_mutex_lock(&r->h->wlock);
    wake_locked(r->h, r);
    pthread_mutex_unlock(&r->h->wlock);
}

int http_req_cancelled(const struct http_req *r) { return __atomic_load_n(&r->cancelled, __ATOMIC_ACQUIRE); }

int http_req_released(const struct http_req *r) {
    return __atomic_load_n(&r->released, __ATOMIC_ACQUIRE) || http_req_cancelled(r);
}

static void hold(struct http_req *r);

void http_req_suspend(struct http_req *r, http_handler_fn cont, void *ctx, unsigned timeout_ms) {
    r->cont = cont;
    r->cont_ctx = ctx;
    hold(r);
    suspend_now(r, timeout_ms);
}

void http_req_on_cleanup(struct http_req *r, void (*fn)(void *), void *arg) {
    r->cleanup = fn;
    r->cleanup_arg = arg;
}

/* ---- held requests ------------------------------------------------------
 *
 * A held request (a long-poll or an event stream) waits on something
 * outside the server and holds its connection meanwhile. Held requests are
 * bounded per address (held_per_ip) and in total (held_limit); a newcomer
 * past a bound has the OLDEST held request of its address (or of all) answer
 * now with its current state. The contract of both already says "ask
 * again", so the client loses nothing, and an address cannot keep the table
 * by holding requests: refusing newcomers instead would let whoever came
 * first keep their places for as long as they like. The reaper also looks
 * at every held socket (it is not polled while suspended) and ends those
 * whose peer has gone, so that a dropped page stops counting at once. */

static void unheld_locked(struct http *h, struct conn_slot *s) {
    if (!s->held) return;
    s->held = 0;
    h->nheld--;
}

/* Has the held request of `v` answer now (clock held; takes wlock). With
 * `close_after`, its connection closes once the answer is written. */
static void release_locked(struct http *h, struct conn_slot *v, int close_after) {
    unheld_locked(h, v);
    if (close_after) {
        v->releasing = 1;
        v->released_at = timeutil_now_ms();
    }
    pthread_mutex_lock(&h->wlock);
    struct http_req *vr = v->req; /* set while held: cleared under clock */
    if (vr) {
        if (close_after) __atomic_store_n(&vr->close_after, 1, __ATOMIC_RELEASE);
        __atomic_store_n(&vr->released, 1, __ATOMIC_RELEASE);
        wake_locked(h, vr);
    }
    pthread_mutex_unlock(&h->wlock);
}

/* Counts `r` as held (its first suspend, or its stream), then applies the
 * bounds: the oldest held requests of its address, then of all, answer now
 * until both hold again. */
static void hold(struct http_req *r) {
    struct http *h = r->h;
    struct conn_slot *s = r->slot;
    if (!s || r->held_counted) return;
    r->held_counted = 1;
    pthread_mutex_lock(&h->clock);
    if (s->req == r && slot_live(s)) {
        s->held = 1;
        s->held_since = timeutil_now_ms();
        h->nheld++;
        unsigned mine = count_addr_locked(h, s->addr, 1);
        struct conn_slot *v;
        for (; mine > h->cfg.held_per_ip && (v = oldest_held_locked(h, s->addr, s, 0)); mine--) {
            h->released_address++;
            release_locked(h, v, 0);
        }
        while (h->nheld > h->cfg.held_limit && (v = oldest_held_locked(h, NULL, s, 0))) {
            h->released_total++;
            release_locked(h, v, 0);
        }
    }
    pthread_mutex_unlock(&h->clock);
}

/* `r` answered (a long-poll) or ended: no longer held. */
static void unhold(struct http_req *r) {
    struct conn_slot *s = r->slot;
    if (!s || !r->held_counted) return;
    pthread_mutex_lock(&r->h->clock);
    if (s->req == r) unheld_locked(r->h, s);
    pthread_mutex_unlock(&r->h->clock);
}

/* The reaper's look at the held sockets: a peer that has closed (or reset)
 * its end shows as POLLRDHUP / POLLHUP / POLLERR; its request answers now
 * (into a socket shut down: libmicrohttpd then closes it). Data the client
 * sent meanwhile (POLLIN alone) is no hang-up. Clock held: a descriptor in
 * the table is the connection's own until NOTIFY_CLOSED. */
static void hangups_locked(struct http *h) {
    struct conn_slot *s = h->slots;
    while (s) {
        struct pollfd pf[HTTP_POLL_CHUNK];
        struct conn_slot *ps[HTTP_POLL_CHUNK];
        nfds_t n = 0;
        for (; s && n < HTTP_POLL_CHUNK; s = s->next)
            if (s->held && slot_live(s)) {
                pf[n] = (struct pollfd){.fd = s->fd, .events = POLLRDHUP};
                ps[n++] = s;
            }
        if (n == 0 || poll(pf, n, 0) <= 0) continue;
        for (nfds_t i = 0; i < n; i++)
            if (pf[i].revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)) {
                h->hangups++;
                release_locked(h, ps[i], 0);
                slot_kill_locked(ps[i]);
            }
    }
}

/* ---- the CPU pool -------------------------------------------------------- */

static void *pool_main(void *arg) {
    struct http *h = arg;
    for (;;) {
        pthread_mutex_lock(&h->plock);
        while (!h->pool_stop && !h->thead) pthread_cond_wait(&h->pcond, &h->plock);
        struct task *t = h->thead;
        if (!t) { /* stopping and drained */
            pthread_mutex_unlock(&h->plock);
            return NULL;
        }
        h->thead = t->next;
        if (!h->thead) h->ttail = NULL;
        h->tdepth--;
        int stop = h->pool_stop;
        pthread_mutex_unlock(&h->plock);
        if (!stop) t->work(t->ctx);
        pthread_mutex_lock(&h->wlock);
        if (stop) t->r->cancelled = 1; /* queued when the pool stopped: never run */
        wake_locked(h, t->r);
        pthread_mutex_unlock(&h->wlock);
        free(t);
    }
}

int http_req_defer(struct http_req *r, void (*work)(void *), http_handler_fn done, void *ctx,
                   void (*free_ctx)(void *)) {
    struct http *h = r->h;
    struct task *t = calloc(1, sizeof *t);
    if (!t) return -1;
    t->r = r;
    t->work = work;
    t->ctx = ctx;
    pthread_mutex_lock(&h->plock);
    if (h->pool_stop || !h->npool || h->tdepth >= h->cfg.cpu_queue) {
        pthread_mutex_unlock(&h->plock);
        free(t);
        return -1;
    }
    r->task_ctx = ctx;
    r->task_free = free_ctx;
    /* Suspend before the task can run: a wake from the pool thread then
     * always finds the request suspended or marked pending. */
    r->cont = done;
    r->cont_ctx = ctx;
    if (h->ttail) h->ttail->next = t;
    else h->thead = t;
    h->ttail = t;
    h->tdepth++;
    pthread_mutex_unlock(&h->plock);
    suspend_now(r, 0);
    pthread_mutex_lock(&h->plock);
    pthread_cond_signal(&h->pcond);
    pthread_mutex_unlock(&h->plock);
    return 0;
}

/* ---- streaming ------------------------------------------------------------ */

struct stream {
    struct http_req *r;
    long (*read)(void *, char *, size_t);
    void *ctx;
    void (*free_ctx)(void *);
    unsigned idle_ms;
};

static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max) {
    struct stream *st = cls;
    (void)pos;
    for (;;) {
        long n = st->read(st->ctx, buf, max);
        /* Released or stopping: what the reader has now (its current state,
         * http_req_released() tells it) is still sent, then the stream ends
         * instead of waiting for more. */
        if (http_req_released(st->r)) return n > 0 ? (ssize_t)n : MHD_CONTENT_READER_END_OF_STREAM;
        if (n > 0) return (ssize_t)n;
        if (n < 0) return MHD_CONTENT_READER_END_OF_STREAM;
        /* Nothing now: suspended until woken, unless a wake came meanwhile
         * (then read again). Returning 0 after suspending is what
         * libmicrohttpd asks of a reader with internal polling. */
        if (suspend_now(st->r, st->idle_ms)) return 0;
    }
}

static void stream_free(void *cls) {
    struct stream *st = cls;
    if (st->free_ctx) st->free_ctx(st->ctx);
    free(st);
}

void http_reply_stream(struct http_req *r, int status, const char *content_type, long (*read)(void *, char *, size_t),
                       void *ctx, void (*free_ctx)(void *), unsigned idle_ms) {
    struct stream *st = calloc(1, sizeof *st);
    struct MHD_Response *resp = NULL;
    if (st) {
        st->r = r;
        st->read = read;
        st->ctx = ctx;
        st->free_ctx = free_ctx;
        st->idle_ms = idle_ms;
        resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096, stream_read, st, stream_free);
    }
    if (!resp) {
        free(st);
        if (free_ctx) free_ctx(ctx);
        http_reply_error(r, 500, NULL, "out of memory for a stream");
        return;
    }
    if (content_type) MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, content_type);
    r->streaming = 1;
    hold(r);
    queue(r, status, resp);
}

/* ---- reaper --------------------------------------------------------------- */

/* Every HTTP_TRIM_MS the reaper hands memory that the HTTP and pool threads
 * freed back to the kernel (glibc keeps freed pages in each thread's arena,
 * so a long-lived server's RSS would otherwise creep up with fragmentation
 * under a mixed load; the soak benchmark, tests/bench/soak.py, measures it). */
#define HTTP_TRIM_MS 10000.0

static void *reaper_main(void *arg) {
    struct http *h = arg;
    double last_trim = timeutil_now_ms();
    pthread_mutex_lock(&h->rlock);
    while (!h->reaper_stop) {
        struct timespec until = timeutil_deadline(HTTP_REAP_MS);
        pthread_cond_timedwait(&h->rcond, &h->rlock, &until);
        if (h->reaper_stop) break;
        pthread_mutex_unlock(&h->rlock);
        double now = timeutil_now_ms();
        double head_ms = h->cfg.header_timeout_s * 1000.0, body_ms = h->cfg.body_timeout_s * 1000.0;
        pthread_mutex_lock(&h->clock);
        for (struct conn_slot *s = h->slots; s; s = s->next) {
            if (s->killed) continue;
            double limit = s->phase == PHASE_BODY ? body_ms : s->phase == PHASE_BUSY ? -1 : head_ms;
            if (limit >= 0 && now - s->since > limit) {
                h->deadline_closed++;
                slot_kill_locked(s);
            } else if (s->releasing && now - s->released_at > HTTP_RELEASE_GRACE_MS) {
                slot_kill_locked(s); /* its answer was not taken */
            }
        }
        hangups_locked(h);
        pthread_mutex_unlock(&h->clock);
        pthread_mutex_lock(&h->wlock);
        for (struct http_req *r = h->waiting, *n; r; r = n) {
            n = r->wnext;
            if (r->suspended && r->wake_at > 0 && now >= r->wake_at) wake_locked(h, r);
        }
        pthread_mutex_unlock(&h->wlock);
#ifdef __GLIBC__
        if (now - last_trim >= HTTP_TRIM_MS) {
            malloc_trim(0);
            last_trim = now;
        }
#endif
        pthread_mutex_lock(&h->rlock);
    }
    pthread_mutex_unlock(&h->rlock);
    return NULL;
}

/* ---- request handling ----------------------------------------------------- */

static void preflight(struct http_req *r, const char *allow) {
    const char *origin = http_req_header(r, "Origin");
    if (!origin) {
        http_req_add_header(r, "Allow", allow);
        http_reply(r, 204, NULL, "", 0);
        return;
    }
    if (!cors_allowed(r->h, origin)) {
        http_reply_error(r, 403, "Origin", "origin %s is not allowed (see --cors-origin)", origin);
        return;
    }
    http_req_add_header(r, "Access-Control-Allow-Methods", allow);
    http_req_add_header(r, "Access-Control-Allow-Headers", "Authorization, Content-Type");
    http_req_add_header(r, "Access-Control-Max-Age", "600");
    http_reply(r, 204, NULL, "", 0);
}

static int is_json_type(const char *ct) {
    if (!ct) return 0;
    while (*ct == ' ') ct++;
    if (strncasecmp(ct, "application/json", 16) != 0) return 0;
    ct += 16;
    while (*ct == ' ') ct++;
    return *ct == '\0' || *ct == ';';
}

int http_req_take_rate(struct http_req *r, struct ratelimit *rl, unsigned per_min, const char *what) {
    unsigned retry = 0;
    if (ratelimit_take(rl, r->addr, &retry)) return 1;
    char ra[16];
    snprintf(ra, sizeof ra, "%u", retry ? retry : 1);
    http_req_add_header(r, "Retry-After", ra);
    json_t *x = json_object();
    int bad = 0;
    jsonout_put(x, "retry_after_s", json_integer(retry ? retry : 1), &bad);
    http_reply_error_ex(r, 429, NULL, x, bad, "rate limit: at most %u %s a minute per address; retry in %s s", per_min,
                        what, ra);
    return 0;
}

/* Checks made with the headers only. Returns 1 when it answered. */
static int early_checks(struct http_req *r, const char *version, const char *allow, int path_known, int over_share) {
    struct http *h = r->h;
    char why[160];
    int st = framing_check(r, version, why, sizeof why);
    if (st) {
        /* The framing cannot be trusted: nothing after this request on the
         * connection may be read as another one. */
        http_req_add_header(r, "Connection", "close");
        http_reply_error(r, st, NULL, "malformed request: %s", why);
        return 1;
    }
    if (over_share) { /* a client behind a trusted proxy, over its share */
        http_req_add_header(r, "Connection", "close");
        http_req_add_header(r, "Retry-After", "1");
        json_t *x = json_object();
        int bad = 0;
        jsonout_put(x, "retry_after_s", json_integer(1), &bad);
        http_reply_error_ex(r, 429, NULL, x, bad, "at most %u connections at once per address (--per-ip-limit)",
                            h->cfg.per_ip_limit);
        return 1;
    }
    if (strcmp(r->method, "OPTIONS") == 0 && path_known) {
        preflight(r, allow);
        return 1;
    }
    if (!r->route) {
        if (path_known) {
            http_req_add_header(r, "Allow", allow);
            http_reply_error(r, 405, NULL, "method %s is not allowed on %s (allowed: %s)", r->method, r->path, allow);
        } else {
            http_reply_error(r, 404, NULL, "no such resource: %s", r->path);
        }
        return 1;
    }
    unsigned flags = r->route->flags;
    /* The token first: a request that fails it charges no limit, so others'
     * failures never lock the token's owner out. */
    int sent = http_req_header(r, MHD_HTTP_HEADER_AUTHORIZATION) != NULL;
    if (((flags & HTTP_ROUTE_AUTH) || ((flags & HTTP_ROUTE_AUTH_SENT) && sent)) && h->token && !http_req_authorized(r)) {
        int present = sent;
        http_req_add_header(r, "WWW-Authenticate", "Bearer realm=\"divergence\"");
        http_reply_error(r, 401, "Authorization", "%s",
                         present ? "the bearer token is not valid"
                                 : "a bearer token is required (Authorization: Bearer <token>)");
        return 1;
    }
    /* A form or a no-cors fetch cannot send this type without a CORS
     * preflight, so no page of another origin can start work here. */
    if (strcmp(r->method, "POST") == 0 && !is_json_type(http_req_header(r, MHD_HTTP_HEADER_CONTENT_TYPE))) {
        http_reply_error(r, 415, "Content-Type", "POST bodies must be sent as Content-Type: application/json");
        return 1;
    }
    if ((flags & HTTP_ROUTE_RATELIMIT) && !http_req_take_rate(r, h->rl, h->cfg.rate_per_min, "requests")) return 1;
    if ((flags & HTTP_ROUTE_RATELIMIT_CPU) && !http_req_take_rate(r, h->rl_cpu, h->cfg.cpu_rate_per_min, "analyses"))
        return 1;
    const char *cl = http_req_header(r, MHD_HTTP_HEADER_CONTENT_LENGTH);
    if (cl) {
        char *end;
        errno = 0;
        unsigned long long n = strtoull(cl, &end, 10);
        if (errno == 0 && end != cl && n > h->cfg.body_limit) {
            http_reply_error(r, 413, NULL, "the body is %llu bytes; the limit is %zu bytes", n, h->cfg.body_limit);
            return 1;
        }
    }
    return 0;
}

/* Runs the handler (or the continuation after a wake) and what it asks:
 * replies, suspends, or continues at once when a wake was already pending. */
static void run_handler(struct http_req *r, http_handler_fn fn, void *ctx) {
    for (;;) {
        r->cont = NULL;
        r->parked = 0;
        fn(r, ctx);
        if (r->replied || r->parked) return;
        if (!r->cont) break;
        fn = r->cont; /* suspend found a pending wake: go on at once */
        ctx = r->cont_ctx;
    }
    LOG(LOG_ERR, "http: the handler of %s %s did not answer", r->method, r->path);
    http_reply_error(r, 500, NULL, "internal error: no answer");
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
                                  const char *version, const char *upload_data, size_t *upload_data_size,
                                  void **req_cls) {
    struct http *h = cls;
    struct http_req *r = *req_cls;
    if (!r) { /* the URI-log callback had no memory */
        if (!(r = on_uri(h, url, conn))) return MHD_NO;
        *req_cls = r;
    }
    if (!r->started) {
        r->started = 1;
        pthread_mutex_lock(&h->wlock);
        h->live++;
        pthread_mutex_unlock(&h->wlock);
        r->method = method;
        r->path = url;
        client_address(conn, r->client, sizeof r->client);
        counted_address(r);
        int over = slot_begin(h, r);
        char allow[128];
        int path_known = 0;
        r->route = match(h, method, url, &path_known, allow, sizeof allow);
        early_checks(r, version, allow, path_known, over);
        return MHD_YES;
    }
    if (r->replied) { /* answered early, or streaming: discard what follows */
        *upload_data_size = 0;
        return MHD_YES;
    }
    if (*upload_data_size > 0) {
        size_t n = *upload_data_size;
        *upload_data_size = 0;
        if (!(r->route->flags & HTTP_ROUTE_BODY) || r->too_large) return MHD_YES;
        if (r->len + n > h->cfg.body_limit) {
            r->too_large = 1;
            free(r->body);
            r->body = NULL;
            r->len = 0;
            return MHD_YES;
        }
        if (r->len + n + 1 > r->cap) {
            size_t cap = r->cap ? r->cap : 1024;
            while (cap < r->len + n + 1) cap *= 2;
            char *b = realloc(r->body, cap);
            if (!b) return MHD_NO;
            r->body = b;
            r->cap = cap;
        }
        memcpy(r->body + r->len, upload_data, n);
        r->len += n;
        r->body[r->len] = '\0';
        return MHD_YES;
    }
    if (r->too_large) {
        http_reply_error(r, 413, NULL, "the body exceeds the limit of %zu bytes", h->cfg.body_limit);
        return MHD_YES;
    }
    if (r->cont) { /* resumed after a suspend */
        run_handler(r, r->cont, r->cont_ctx);
        return MHD_YES;
    }
    slot_phase(h, r->slot, PHASE_BUSY);
    run_handler(r, r->route->fn, r->route->ctx);
    return MHD_YES;
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **req_cls, enum MHD_RequestTerminationCode toe) {
    struct http *h = cls;
    struct http_req *r = *req_cls;
    if (!r) return;
    pthread_mutex_lock(&h->wlock);
    wait_list_remove_locked(h, r);
    r->suspended = 0;
    if (r->started && --h->live == 0) pthread_cond_broadcast(&h->lcond);
    pthread_mutex_unlock(&h->wlock);
    if (r->cleanup) r->cleanup(r->cleanup_arg);
    if (r->task_free) r->task_free(r->task_ctx);
    for (unsigned i = 0; i < r->nheaders; i++) {
        free(r->hname[i]);
        free(r->hvalue[i]);
    }
    struct conn_slot *s = r->slot;
    if (s) {
        pthread_mutex_lock(&h->clock);
        if (s->req == r) {
            s->req = NULL;
            unheld_locked(h, s);
            /* Idle between requests, a proxy's connection is no client's. */
            if (s->proxied) snprintf(s->addr, sizeof s->addr, "%s", s->peer);
            if (s->releasing) slot_kill_locked(s); /* its answer is written */
        }
        if (toe == MHD_REQUEST_TERMINATED_COMPLETED_OK && !s->killed) {
            s->phase = PHASE_IDLE;
            s->since = timeutil_now_ms();
        }
        pthread_mutex_unlock(&h->clock);
    }
    free(r->body);
    free(r);
    *req_cls = NULL;
}

static void on_log(void *cls, const char *fmt, va_list ap) {
    char line[512];
    vsnprintf(line, sizeof line, fmt, ap);
    size_t n = strlen(line);
    while (n && (line[n - 1] == '\n' || line[n - 1] == '\r')) line[--n] = '\0';
    LOG(LOG_NOTICE, "libmicrohttpd: %s", line);
}

int http_start(struct http *h, char *err) {
    struct sockaddr_storage ss;
    memset(&ss, 0, sizeof ss);
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ITC | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG;
    flags |= MHD_is_feature_supported(MHD_FEATURE_EPOLL) == MHD_YES ? MHD_USE_EPOLL : MHD_USE_POLL;
    struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
    struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
    if (inet_pton(AF_INET, h->bind, &s4->sin_addr) == 1) {
        s4->sin_family = AF_INET;
        s4->sin_port = htons((unsigned short)h->cfg.port);
    } else if (inet_pton(AF_INET6, h->bind, &s6->sin6_addr) == 1) {
        s6->sin6_family = AF_INET6;
        s6->sin6_port = htons((unsigned short)h->cfg.port);
        flags |= MHD_USE_IPv6;
    } else {
        dv_seterr(err, "http: --bind %s: not an IPv4 or IPv6 address", h->bind);
        return -1;
    }
    if (!(h->pool = calloc(h->cfg.cpu_threads, sizeof *h->pool))) {
        dv_seterr(err, "http: out of memory");
        return -1;
    }
    for (; h->npool < h->cfg.cpu_threads; h->npool++)
        if (pthread_create(&h->pool[h->npool], NULL, pool_main, h) != 0) {
            dv_seterr(err, "http: cannot start the analysis threads");
            return -1;
        }
    if (pthread_create(&h->reaper, NULL, reaper_main, h) != 0) {
        dv_seterr(err, "http: cannot start the connection reaper");
        return -1;
    }
    h->reaper_started = 1;
    /* libmicrohttpd's idle timeout stays as a backstop (a client that stops
     * reading a reply); the deadlines above are the layer's. */
    h->d = MHD_start_daemon(
        flags, (uint16_t)h->cfg.port, NULL, NULL, on_request, h, MHD_OPTION_EXTERNAL_LOGGER, on_log, h,
        MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss, MHD_OPTION_THREAD_POOL_SIZE, (unsigned int)h->cfg.threads,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)h->cfg.conn_timeout_s, MHD_OPTION_CONNECTION_LIMIT,
        (unsigned int)(h->cfg.conn_limit + HTTP_CONN_SLACK), MHD_OPTION_NOTIFY_COMPLETED, on_completed, h,
        MHD_OPTION_NOTIFY_CONNECTION, on_connection, h, MHD_OPTION_URI_LOG_CALLBACK, on_uri, h, MHD_OPTION_END);
    if (!h->d) {
        dv_seterr(err, "http: cannot listen on %s port %u (in use, or not permitted)", h->bind, h->cfg.port);
        return -1;
    }
    const union MHD_DaemonInfo *di = MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_BIND_PORT);
    h->port = di ? di->port : h->cfg.port;
    return 0;
}

unsigned http_port(const struct http *h) { return h->port; }

void http_quiesce(struct http *h) {
    if (h && h->d && h->quiesced == MHD_INVALID_SOCKET) h->quiesced = MHD_quiesce_daemon(h->d);
}

void http_conn_stats(struct http *h, struct http_conn_stats *st) {
    memset(st, 0, sizeof *st);
    pthread_mutex_lock(&h->clock);
    for (struct conn_slot *s = h->slots; s; s = s->next) st->open += !s->killed;
    st->held = h->nheld;
    st->evicted = h->evicted;
    st->deadline_closed = h->deadline_closed;
    st->refused = h->refused;
    st->address_refused = h->address_refused;
    st->hangups = h->hangups;
    st->released_address = h->released_address;
    st->released_total = h->released_total;
    st->released_table = h->released_table;
    pthread_mutex_unlock(&h->clock);
    pthread_mutex_lock(&h->plock);
    st->cpu_queued = h->tdepth;
    pthread_mutex_unlock(&h->plock);
}

void http_free(struct http *h) {
    if (!h) return;
    /* The pool first: queued tasks are cancelled, running ones finish; each
     * wakes its request. Then every suspended request is woken cancelled:
     * libmicrohttpd must have none suspended when it stops. */
    pthread_mutex_lock(&h->plock);
    h->pool_stop = 1;
    pthread_cond_broadcast(&h->pcond);
    pthread_mutex_unlock(&h->plock);
    for (unsigned i = 0; i < h->npool; i++) pthread_join(h->pool[i], NULL);
    pthread_mutex_lock(&h->wlock);
    __atomic_store_n(&h->closing, 1, __ATOMIC_RELAXED);
    for (struct http_req *r = h->waiting, *n; r; r = n) {
        n = r->wnext;
        r->cancelled = 1;
        wake_locked(h, r);
    }
    /* The drain: a request just woken (here, or by the queue before) has
     * its answer written by a daemon thread a moment later, and stopping the
     * daemon now would close its connection with nothing sent. Wait until
     * every begun request has ended (answered and written), for at most
     * drain_ms. */
    struct timespec until = timeutil_deadline((double)h->cfg.drain_ms);
    while (h->live > 0 && h->d)
        if (pthread_cond_timedwait(&h->lcond, &h->wlock, &until) == ETIMEDOUT) break;
    if (h->live > 0)
        LOG(LOG_WARNING, "http: stopping with %u request(s) still unanswered after the %u ms drain", h->live,
            h->cfg.drain_ms);
    pthread_mutex_unlock(&h->wlock);
    if (h->reaper_started) {
        pthread_mutex_lock(&h->rlock);
        h->reaper_stop = 1;
        pthread_cond_signal(&h->rcond);
        pthread_mutex_unlock(&h->rlock);
        pthread_join(h->reaper, NULL);
    }
    if (h->d) MHD_stop_daemon(h->d);
    if (h->quiesced != MHD_INVALID_SOCKET) close(h->quiesced);
    ratelimit_free(h->rl);
    ratelimit_free(h->rl_cpu);
    free(h->pool);
    free(h->bind);
    free(h->token);
    for (unsigned i = 0; i < HTTP_MAX_CORS; i++) free(h->cors[i]);
    pthread_mutex_destroy(&h->mlock);
    pthread_mutex_destroy(&h->clock);
    pthread_mutex_destroy(&h->wlock);
    pthread_mutex_destroy(&h->rlock);
    pthread_mutex_destroy(&h->plock);
    pthread_cond_destroy(&h->rcond);
    pthread_cond_destroy(&h->lcond);
    pthread_cond_destroy(&h->pcond);
    free(h);
}
