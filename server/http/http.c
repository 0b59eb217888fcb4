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
 * The request-completed callback frees the state. Each answer is reported
 * once to the observer (metrics.c counts it).
 *
 * What libmicrohttpd 0.9.75 cannot do is done around it, by parts that each
 * own their state and their lock, embedded in struct http:
 *  - the connection table (conntable.h): deadlines independent of activity
 *    (its connection timeout is an idle timeout that every byte restarts),
 *    a fair table (its limit refuses at accept with no say over who goes,
 *    so it is set HTTP_CONN_SLACK above conn_limit), the per-address share
 *    counted by the client a trusted proxy names, and the held requests
 *    (long-polls, streams) bounded per address and in all, the oldest
 *    released first. Fed by MHD_OPTION_NOTIFY_CONNECTION and the callbacks
 *    below; it moves a connection through headers -> body -> busy -> idle.
 *  - the suspension (suspend.h): MHD_resume_connection() from any thread
 *    (MHD_ALLOW_SUSPEND_RESUME), guarded by each request's own flags so a
 *    wake before the suspend is kept, timed wake-ups, and the count of
 *    requests begun that stopping drains.
 *  - the CPU pool (server/core/pool.h): CPU-heavy work runs on a few threads
 *    of the layer's own with the connection suspended, never on a daemon
 *    thread: libmicrohttpd ties a connection to the thread that accepted it,
 *    so work on that thread would leave every other connection of the thread
 *    unread.
 *  - the reaper (reaper.h): one housekeeping thread that, every
 *    HTTP_REAP_MS, has the table shut what is past its deadline and poll the
 *    held sockets (libmicrohttpd does not poll suspended ones), and wakes
 *    the suspended requests whose time has come.
 * Locks: the table's is taken before the suspension's where both are needed
 * (a held request released), never the other way round; the pool's and the
 * reaper's are never held while anything else runs. libmicrohttpd calls none
 * of the layer's callbacks with a lock of its own held, and
 * MHD_resume_connection() takes only its own briefly. What stays here is
 * the request itself (its route found in the table, router.h), the checks
 * before a handler, the replies and the stream (which holds its request through the table and
 * waits through the suspension).
 */
#define _GNU_SOURCE
#include "server/http/http.h"
#include "api/jsonout.h"
#include "server/core/log.h"
#include "server/core/pool.h"
#include "server/http/clientaddr.h"
#include "server/http/conntable.h"
#include "server/http/framing.h"
#include "server/http/gzcache.h"
#include "server/http/ratelimit.h"
#include "server/http/reaper.h"
#include "server/http/router.h"
#include "server/http/suspend.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "kernels/base/timeutil.h"

#define HTTP_MAX_HEADERS 12
#define HTTP_CONN_SLACK 64u /* libmicrohttpd's limit above ours: room to evict */
#define HTTP_REAP_MS 100    /* reaper period                                  */

struct http {
    struct http_config cfg;
    char *token;
    char *bind;
    char *cors[HTTP_MAX_CORS];
    struct clientaddr_net proxies[HTTP_MAX_PROXIES];
    unsigned nproxies;
    struct ratelimit *rl, *rl_cpu;
    struct router routes; /* fixed once started */
    http_observer_fn observer;
    void *observer_ctx;
    /* The parts (see the top of the file; each header names its lock and
     * threads). The table's lock comes before the suspension's. */
    struct conntable conns; /* open connections, held requests         */
    struct suspend waits;   /* suspended requests, requests begun       */
    struct pool *pool;      /* http_req_defer()'s threads (http_start)  */
    struct reaper reaper;   /* deadlines, hang-ups, timed wake-ups      */
    struct gzcache *gz;     /* the gzip forms kept (entity.c)           */
    struct MHD_Daemon *d;
    MHD_socket quiesced;
    unsigned port;
};

struct http_req {
    struct http *h;
    struct MHD_Connection *conn;
    struct conntable_slot *slot; /* its connection's, or NULL: untracked */
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
    struct suspend_req wait; /* its suspension (h->waits)              */
    http_handler_fn cont;    /* what runs when it is woken             */
    void *cont_ctx;
    int streaming;
    /* deferred work (the pool) and cleanup */
    void (*work)(void *);
    void *task_ctx;
    void (*task_free)(void *);
    void (*cleanup)(void *);
    void *cleanup_arg;
    double t0_ms; /* monotonic, when the request line arrived */
};

/* ---- configuration ---------------------------------------------------- */

/* The table's release (conntable.h): the held request `req` answers now. */
static void release_req(void *ctx, void *req, int close_after) {
    struct http *h = ctx;
    struct http_req *r = req;
    suspend_release(&h->waits, &r->wait, close_after);
}

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
    if (!(h->gz = gzcache_create(GZCACHE_ENTRIES, GZCACHE_BYTES))) goto oom;
    if (suspend_init(&h->waits) != 0) {
        dv_seterr(err, "http: cannot make the suspension's condition variable");
        goto fail;
    }
    const struct conntable_limits lim = {
        .conn_limit = h->cfg.conn_limit,
        .per_ip_limit = h->cfg.per_ip_limit,
        .held_limit = h->cfg.held_limit,
        .held_per_ip = h->cfg.held_per_ip,
        .header_ms = h->cfg.header_timeout_s * 1000.0,
        .body_ms = h->cfg.body_timeout_s * 1000.0,
    };
    conntable_init(&h->conns, &lim, release_req, h);
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
        gzcache_free(h->gz);
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
    return router_add(&h->routes, method, pattern, label, flags, (flags & HTTP_ROUTE_PREFIX) != 0, fn, ctx, err);
}

/* ---- the observer ------------------------------------------------------- */

void http_set_observer(struct http *h, http_observer_fn fn, void *ctx) {
    h->observer = fn;
    h->observer_ctx = ctx;
}

const char *http_status_class(int status) {
    static const char *const names[] = {"1xx", "2xx", "3xx", "4xx", "5xx"};
    return status >= 100 && status < 600 ? names[status / 100 - 1] : "other";
}

/* ---- request accessors ------------------------------------------------ */

const char *http_req_method(const struct http_req *r) { return r->method; }
const char *http_req_path(const struct http_req *r) { return r->path; }
const char *http_req_tail(const struct http_req *r) { return router_tail(r->route, r->path); }
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
    if (suspend_closing(&r->h->waits) || suspend_close_after(&r->wait))
        MHD_add_response_header(resp, "Connection", "close");
    /* A long-poll's answer ends its hold; a stream holds until it ends. */
    if (!r->streaming) unhold(r);
    MHD_queue_response(r->conn, (unsigned)status, resp);
    MHD_destroy_response(resp);
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

/* ---- connections -------------------------------------------------------- */

/* libmicrohttpd's connection notifications feed the table; the slot rides
 * in the connection's socket context. A connection whose descriptor cannot
 * be had stays untracked (no slot: no deadline, no share). */
static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
                          enum MHD_ConnectionNotificationCode toe) {
    struct http *h = cls;
    if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
        const union MHD_ConnectionInfo *ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
        char peer[CLIENTADDR_LEN];
        *socket_context = NULL;
        if (!ci) return;
        client_address(conn, peer, sizeof peer);
        *socket_context = conntable_open(&h->conns, ci->connect_fd, peer,
                                         clientaddr_in_nets(h->proxies, h->nproxies, peer, strlen(peer)));
    } else if (toe == MHD_CONNECTION_NOTIFY_CLOSED) {
        conntable_close(&h->conns, *socket_context);
        *socket_context = NULL;
    }
}

/* ---- suspension --------------------------------------------------------- */

void http_req_wake(struct http_req *r) { suspend_wake(&r->h->waits, &r->wait, 0); }

int http_req_cancelled(const struct http_req *r) { return suspend_cancelled(&r->wait); }

int http_req_released(const struct http_req *r) { return suspend_released(&r->wait); }

static void hold(struct http_req *r);

void http_req_suspend(struct http_req *r, http_handler_fn cont, void *ctx, unsigned timeout_ms) {
    r->cont = cont;
    r->cont_ctx = ctx;
    hold(r);
    suspend_park(&r->h->waits, &r->wait, timeout_ms);
}

void http_req_on_cleanup(struct http_req *r, void (*fn)(void *), void *arg) {
    r->cleanup = fn;
    r->cleanup_arg = arg;
}

/* ---- held requests and deferred work ------------------------------------- */

/* Counts `r` as held (its first suspend, or its stream): the table applies
 * the bounds (conntable_hold). */
static void hold(struct http_req *r) {
    if (!r->slot || r->held_counted) return;
    r->held_counted = 1;
    conntable_hold(&r->h->conns, r->slot, r);
}

/* `r` answered (a long-poll) or ended: no longer held. */
static void unhold(struct http_req *r) {
    if (r->slot && r->held_counted) conntable_unhold(&r->h->conns, r->slot, r);
}

/* The pool's job of a deferred request: its work (unless the pool stopped
 * first: then it is woken cancelled), then the wake that runs `done`. */
static void defer_run(void *arg, int cancelled) {
    struct http_req *r = arg;
    if (!cancelled) r->work(r->task_ctx);
    suspend_wake(&r->h->waits, &r->wait, cancelled);
}

int http_req_defer(struct http_req *r, void (*work)(void *), http_handler_fn done, void *ctx,
                   void (*free_ctx)(void *)) {
    /* Set before the push: a pool thread may run it at once. A wake that
     * comes before the suspend below is kept, and `done` then runs when the
     * handler returns. */
    r->work = work;
    r->task_ctx = ctx;
    r->task_free = free_ctx;
    r->cont = done;
    r->cont_ctx = ctx;
    if (pool_push(r->h->pool, defer_run, r) != 0) { /* full, stopping or not started: the caller replies */
        r->work = NULL;
        r->task_ctx = NULL;
        r->task_free = NULL;
        r->cont = NULL;
        r->cont_ctx = NULL;
        return -1;
    }
    suspend_park(&r->h->waits, &r->wait, 0);
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
        if (suspend_park(&st->r->h->waits, &st->r->wait, st->idle_ms)) return 0;
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

/* ---- the reaper's tick ----------------------------------------------------- */

static void housekeep(void *arg, double now_ms) {
    struct http *h = arg;
    conntable_reap(&h->conns, now_ms);
    suspend_wake_due(&h->waits, now_ms);
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
        r->wait.parked = 0;
        fn(r, ctx);
        if (r->replied || r->wait.parked) return;
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
        suspend_begin(&h->waits, &r->wait, conn);
        r->method = method;
        r->path = url;
        client_address(conn, r->client, sizeof r->client);
        counted_address(r);
        int over = conntable_begin(&h->conns, r->slot, r, r->addr);
        char allow[128];
        int path_known = 0;
        r->route = router_match(&h->routes, method, url, &path_known, allow, sizeof allow);
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
    conntable_phase(&h->conns, r->slot, CONNTABLE_BUSY);
    run_handler(r, r->route->fn, r->route->ctx);
    return MHD_YES;
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **req_cls, enum MHD_RequestTerminationCode toe) {
    struct http *h = cls;
    struct http_req *r = *req_cls;
    (void)conn;
    if (!r) return;
    suspend_end(&h->waits, &r->wait, r->started);
    if (r->cleanup) r->cleanup(r->cleanup_arg);
    if (r->task_free) r->task_free(r->task_ctx);
    for (unsigned i = 0; i < r->nheaders; i++) {
        free(r->hname[i]);
        free(r->hvalue[i]);
    }
    conntable_end(&h->conns, r->slot, r, toe == MHD_REQUEST_TERMINATED_COMPLETED_OK);
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
    char why[ERR_LEN];
    if (!(h->pool = pool_create(h->cfg.cpu_threads, h->cfg.cpu_queue, why))) {
        dv_seterr(err, "http: cannot start the analysis threads: %s", why);
        return -1;
    }
    if (reaper_start(&h->reaper, HTTP_REAP_MS, housekeep, h, why) != 0) {
        dv_seterr(err, "http: cannot start the connection reaper: %s", why);
        return -1;
    }
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
    conntable_stats(&h->conns, &st->table);
    st->cpu_queued = pool_queued(h->pool);
    gzcache_stats(h->gz, &st->gzip);
}

struct gzcache *http_req_gzcache(const struct http_req *r) { return r->h->gz; }

void http_free(struct http *h) {
    if (!h) return;
    /* The pool first: queued tasks are cancelled, running ones finish; each
     * wakes its request. Then every suspended request is woken cancelled
     * (libmicrohttpd must have none suspended when it stops), and the
     * answers of those woken are given up to drain_ms to be written:
     * stopping the daemon at once would close their connections with
     * nothing sent. */
    pool_free(h->pool);
    h->pool = NULL;
    unsigned left = suspend_close(&h->waits, h->d != NULL, h->cfg.drain_ms);
    if (left > 0)
        LOG(LOG_WARNING, "http: stopping with %u request(s) still unanswered after the %u ms drain", left,
            h->cfg.drain_ms);
    reaper_stop(&h->reaper);
    if (h->d) MHD_stop_daemon(h->d); /* the last connections close: the table empties */
    if (h->quiesced != MHD_INVALID_SOCKET) close(h->quiesced);
    ratelimit_free(h->rl);
    ratelimit_free(h->rl_cpu);
    gzcache_free(h->gz);
    free(h->bind);
    free(h->token);
    for (unsigned i = 0; i < HTTP_MAX_CORS; i++) free(h->cors[i]);
    conntable_cleanup(&h->conns);
    suspend_cleanup(&h->waits);
    free(h);
}
