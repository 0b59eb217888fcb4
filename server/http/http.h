/* http.h -- the HTTP front: a libmicrohttpd daemon, a route table other
 * modules add to, and the replies every route shares (JSON errors, CORS,
 * bearer token, per-address rate limit, body limit, request metrics).
 *
 * A route is (method, path, flags, handler). The path is exact ("/device")
 * or, with HTTP_ROUTE_PREFIX, a prefix whose remainder the handler reads with
 * http_req_tail() ("/jobs/" + id). Exact routes win over prefixes, longer
 * prefixes over shorter ones. A path that matches no route is 404; one that
 * matches with another method is 405 with an Allow header; OPTIONS is
 * answered here (CORS preflight). Before a handler runs, this layer has
 * applied, in order: strict framing (RFC 9112: one Content-Length of digits
 * only, no Content-Length with Transfer-Encoding, no transfer coding but
 * "chunked" (501), one Host on HTTP/1.1, no NUL in the path, at most
 * HTTP_MAX_ARGS query arguments; each answered 400/501 with the connection
 * closed, so nothing after it is read as a request), the bearer token
 * (HTTP_ROUTE_AUTH when a token is set, 401), Content-Type: application/json
 * on every POST (415; a browser must then preflight a cross-site write), the
 * rate limits (HTTP_ROUTE_RATELIMIT and HTTP_ROUTE_RATELIMIT_CPU, 429 +
 * Retry-After; charged only once the token is good), and the body limit
 * (413, from Content-Length before the body is read when the client sends
 * one). Handlers run on the daemon's threads and must not block: they
 * validate, enqueue and read state, and hand CPU-heavy work to
 * http_req_defer() (a bounded pool; the connection is suspended meanwhile,
 * so no daemon thread waits). Each request ends in exactly one
 * http_reply_*().
 *
 * Connections: the layer keeps its own table beside libmicrohttpd's (fed by
 * MHD_OPTION_NOTIFY_CONNECTION). A connection must finish its request's
 * headers within header_timeout_s of connecting (or of its previous reply)
 * and its body within body_timeout_s of the headers, however often it sends
 * a byte; past that its socket is shut down (libmicrohttpd then closes it).
 * An address may hold per_ip_limit connections; a trusted proxy's
 * connections count, while a request is in, against the client its
 * X-Forwarded-For names (over the share: 429 and the connection closed).
 * When the table is full, a newcomer evicts the oldest connection still
 * sending headers (or idle between requests) of the address holding the most
 * connections; failing that, the oldest held request of that address
 * answers now (below) and its connection closes; only when neither exists
 * is the newcomer refused.
 *
 * Held requests: a request that suspends with http_req_suspend() (a
 * long-poll) or streams with http_reply_stream() is held, from then until
 * it answers (a stream: until it ends). At most held_per_ip per address and
 * held_limit in all are held: past either, the OLDEST held requests (of the
 * address, or of all) are released, i.e. woken with http_req_released()
 * true, and answer their current state at once. The reaper looks at every
 * held socket each 100 ms and releases (and shuts) those whose peer has
 * hung up, so a dropped page stops counting against its address at once.
 *
 * Every error is JSON: {"error": {"status": 404, "field": null,
 * "reason": "..."}} plus route-specific members. Every reply carries a
 * Cache-Control header: "no-store" unless the handler added its own.
 *
 * Who owns what: struct http (http.c) is made of parts, each with its own
 * lock and a header that names its owner and the threads that call it: the
 * route table (router.h: no lock, fixed once started), the connection table
 * and the held requests (conntable.h), the suspended requests
 * (suspend.h; its lock is taken after the table's, never before), the CPU
 * pool (server/core/pool.h) and the reaper thread (reaper.h). The requests
 * are counted once, by the observer (metrics.c). Threads: libmicrohttpd's
 * daemon threads run the handlers; the pool's run deferred work; the
 * reaper; and any thread may http_req_wake(). A struct http_req is valid
 * during its handler and continuations, and for a waker until its
 * http_req_on_cleanup() function has run.
 */
#ifndef DV_HTTP_H
#define DV_HTTP_H

#include <jansson.h>
#include <stddef.h>
#include <time.h>
#include "kernels/base/status.h"
#include "server/http/conntable.h"
#include "server/http/gzcache.h"

#define HTTP_ROUTE_PREFIX 1u    /* pattern is a prefix                       */
#define HTTP_ROUTE_AUTH 2u      /* bearer token required when one is set     */
#define HTTP_ROUTE_RATELIMIT 4u /* counted against the per-address limit     */
#define HTTP_ROUTE_BODY 8u      /* the handler reads a request body          */
#define HTTP_ROUTE_RATELIMIT_CPU 16u /* counted against the CPU-route limit  */
#define HTTP_ROUTE_AUTH_SENT 32u /* a token that is sent must be valid (none:
                                    the handler decides, e.g. by cost)      */

#define HTTP_MAX_CORS 16
#define HTTP_MAX_PROXIES 16
#define HTTP_MAX_ARGS 64        /* query arguments a request may carry       */

struct http;
struct http_req;

typedef void (*http_handler_fn)(struct http_req *req, void *ctx);

struct http_config {
    const char *bind;            /* "127.0.0.1" (default), "0.0.0.0", "::"      */
    unsigned port;               /* 0: ephemeral (read it with http_port)     */
    unsigned threads;            /* thread pool size (default 4)              */
    unsigned conn_timeout_s;     /* idle connection timeout (default 30)      */
    unsigned conn_limit;         /* total connections (default 256)           */
    unsigned per_ip_limit;       /* connections per address (default 32)      */
    size_t body_limit;           /* bytes (default 64 KiB)                    */
    const char *token;           /* bearer token or NULL                      */
    const char *cors[HTTP_MAX_CORS]; /* allowed origins, NULL-terminated     */
    unsigned rate_per_min;       /* HTTP_ROUTE_RATELIMIT budget (default 10)  */
    unsigned rate_table;         /* addresses tracked (default 4096)          */
    unsigned cpu_rate_per_min;   /* HTTP_ROUTE_RATELIMIT_CPU budget (0: off)  */
    /* Peers whose X-Forwarded-For is believed: networks ("10.244.0.0/16",
     * "fd00::/8") or single addresses (clientaddr_net_parse; http_create
     * fails on one it cannot read); the client is the rightmost hop that is
     * not one of them. NULL-terminated. */
    const char *trusted_proxies[HTTP_MAX_PROXIES];
    int trust_forwarded;         /* also trust 127.0.0.1 and ::1              */
    unsigned header_timeout_s;   /* connect (or last reply) to headers (10)   */
    unsigned body_timeout_s;     /* headers to the whole body (30)            */
    unsigned cpu_threads;        /* http_req_defer() pool threads (2)         */
    unsigned cpu_queue;          /* deferred tasks waiting before 503 (64)    */
    unsigned drain_ms;           /* http_free: wait for answers to be written (5000) */
    unsigned held_limit;         /* held requests in all (conn_limit / 2)     */
    unsigned held_per_ip;        /* held requests per address (8)             */
};

/* A server for `cfg` (copied), not listening yet. NULL with `err`. */
struct http *http_create(const struct http_config *cfg, char *err);

/* Adds a route. `label` names it in metrics ("/jobs/{id}"); `ctx` is passed
 * to `fn`. Routes must be added before http_start(). Returns 0 or -1. */
int http_route_add(struct http *h, const char *method, const char *pattern, const char *label,
                   unsigned flags, http_handler_fn fn, void *ctx, char *err);

/* Starts listening (epoll where the library supports it, else poll). */
int http_start(struct http *h, char *err);
/* The port listened on (after http_start). */
unsigned http_port(const struct http *h);
/* Stops accepting new connections; open ones are still served. */
void http_quiesce(struct http *h);
/* The connection table's state and the CPU pool's queue, for metrics
 * (metrics.c writes them as dv_http_connections,
 * dv_http_connections_closed_total{reason}, dv_http_held_requests,
 * dv_http_held_released_total{reason}, dv_analysis_queue_depth) and tests. */
struct http_conn_stats {
    struct conntable_stats table; /* the connection table's (conntable.h) */
    unsigned cpu_queued;          /* deferred tasks waiting               */
    struct gzcache_stats gzip;    /* the gzip forms made and reused       */
};
void http_conn_stats(struct http *h, struct http_conn_stats *st);

/* Stops the CPU pool (queued work cancelled), wakes every suspended request
 * (cancelled: a long-poll answers its current state, a stream sends what
 * its reader has now and ends), waits up to drain_ms until every begun
 * request's answer has been written, then stops the daemon and frees
 * everything. NULL ok. */
void http_free(struct http *h);

/* "1xx" .. "5xx" for a status (the label the request metrics carry), or
 * "other" outside 100..599. */
const char *http_status_class(int status);

/* Called once per answered request with the route's label ("other" when no
 * route matched), the status and the seconds from the request's headers to
 * its answer being queued: the one place requests are counted (metrics.c
 * keeps the counts). Runs on the daemon's threads: must be quick. */
typedef void (*http_observer_fn)(void *ctx, const char *route, int status, double seconds);
/* Sets the observer (metrics) before http_start(). */
void http_set_observer(struct http *h, http_observer_fn fn, void *ctx);

/* Request accessors (valid during the handler). */
const char *http_req_method(const struct http_req *r);
const char *http_req_path(const struct http_req *r);
const char *http_req_tail(const struct http_req *r);         /* after the prefix    */
const char *http_req_body(const struct http_req *r, size_t *len); /* NUL-terminated */
const char *http_req_header(const struct http_req *r, const char *name); /* or NULL */
const char *http_req_query(const struct http_req *r, const char *key);  /* or NULL */
const char *http_req_client(const struct http_req *r);       /* address text        */
/* The address the per-address limits count (behind a trusted proxy, the
 * client it forwards for; clientaddr.h), valid during the handler. */
const char *http_req_address(const struct http_req *r);
/* Checks the query's argument names against `known` (NULL-terminated):
 * 0 when each is known and given once; else 1 (one is not known) or 2 (one
 * is given twice), with its name in `name` (`len` bytes, cut short when
 * longer), so the route can refuse it (400 naming it): a query that means
 * the same must read the same, or every spelling of it is another entry in
 * a cache in front. */
int http_req_query_check(const struct http_req *r, const char *const *known, char *name, size_t len);
/* Whether the request carries the configured token (1 when none is set). */
int http_req_authorized(const struct http_req *r);

/* Whether the request was cancelled while suspended (the server is
 * stopping): a continuation that sees 1 answers 503. */
int http_req_cancelled(const struct http_req *r);

/* Whether a held request must answer now with its current state (released
 * to make room, its peer gone, or the server stopping: cancelled implies
 * released). A long-poll's continuation then replies instead of suspending
 * again (a suspend returns at once); a stream's reader returns its current
 * state and then ends (-1). Any thread. */
int http_req_released(const struct http_req *r);

/* Runs `work(ctx)` on the CPU pool with the connection suspended, then
 * `done(r, ctx)` on a daemon thread, which replies (check
 * http_req_cancelled(): then `work` may not have run). `free_ctx(ctx)` (may
 * be NULL) runs once the request ends, whether or not `done` ran. Returns 0,
 * or -1 when the pool's queue is full or it is stopping (nothing suspended,
 * `free_ctx` not called: the caller replies, 503). Called from a handler. */
int http_req_defer(struct http_req *r, void (*work)(void *ctx), http_handler_fn done, void *ctx,
                   void (*free_ctx)(void *ctx));

/* Suspends the request without replying (no daemon thread is held) until
 * http_req_wake() or `timeout_ms` (0: none) passes; then `cont(r, ctx)` runs
 * on a daemon thread and replies or suspends again. The request is held from
 * its first suspend (see the top of this file): `cont` must check
 * http_req_released() and then reply. Called from a handler or a
 * continuation, which then returns. */
void http_req_suspend(struct http_req *r, http_handler_fn cont, void *ctx, unsigned timeout_ms);
/* Wakes a suspended request (any thread, any lock but the layer's). When it
 * is not suspended yet, its next suspend returns at once: no wake-up is lost.
 * The caller must know `r` is alive (see http_req_on_cleanup). */
void http_req_wake(struct http_req *r);
/* `fn(arg)` runs when the request ends (before `r` is freed), on whatever
 * path it ends: what a waker holds on to `r` is released there. One per
 * request; a second call replaces the first. */
void http_req_on_cleanup(struct http_req *r, void (*fn)(void *arg), void *arg);

/* Streams a reply of unknown length: `read(ctx, buf, max)` returns bytes
 * written (> 0), 0 when it has nothing now (the connection is suspended
 * until http_req_wake() or `idle_ms` passes, then read is asked again), or
 * -1 at the end. A stream is held until it ends: once http_req_released()
 * is true, what `read` returns is sent and the first 0 or -1 ends it.
 * `free_ctx(ctx)` runs when the response is released. */
void http_reply_stream(struct http_req *r, int status, const char *content_type,
                       long (*read)(void *ctx, char *buf, size_t max), void *ctx,
                       void (*free_ctx)(void *ctx), unsigned idle_ms);

struct ratelimit;
/* Charges the request to its client in `rl` (ratelimit.h; a table the route
 * owns, for a limit of its own), the address being the one every limit here
 * counts (behind a trusted proxy, the client it names). 1 when allowed; 0
 * when over, and then the request has been answered: 429 with Retry-After,
 * "at most `per_min` `what` a minute per address". Call it after what is
 * cheaper to refuse (a malformed request is not charged). */
int http_req_take_rate(struct http_req *r, struct ratelimit *rl, unsigned per_min, const char *what);

/* Adds a response header to the reply that follows (at most 12). */
void http_req_add_header(struct http_req *r, const char *name, const char *value);

/* Replies with `len` bytes of `body` (copied) as `content_type`. */
void http_reply(struct http_req *r, int status, const char *content_type, const char *body, size_t len);
/* Replies with `body` (NUL-terminated, malloc()ed; ownership taken). */
void http_reply_take(struct http_req *r, int status, const char *content_type, char *body);
/* Replies with the JSON value `v` (reference stolen), compact, plus newline. */
void http_reply_json(struct http_req *r, int status, json_t *v);
/* Replies {"error": {"status", "field" (null when NULL/""), "reason"}} merged
 * with the members of `extra` (stolen, may be NULL). `extra_bad` is the flag
 * `extra` was built with (jsonout_put): when it is set, or when the error
 * document itself cannot be built, the reply is 500 "out of memory" rather
 * than an error with members missing. */
void http_reply_error_ex(struct http_req *r, int status, const char *field, json_t *extra, int extra_bad,
                         const char *fmt, ...)
#ifdef __GNUC__
    __attribute__((format(printf, 6, 7)))
#endif
    ;
#define http_reply_error(r, status, field, ...) http_reply_error_ex((r), (status), (field), NULL, 0, __VA_ARGS__)
/* Replies with the file open on `fd` (`size` bytes; the fd is taken). */
void http_reply_fd(struct http_req *r, int status, const char *content_type, int fd, size_t size);

/* A representation a client may keep and ask about again (an evidence
 * document or view, a static file, a finished job's answer): answered by
 * http_reply_entity() with its validators, in the content coding the
 * request asks for (encoding.h), 304 when the client's copy of either
 * coding is still good. The identity bytes are `body[0..len)`, or, when
 * `body` is NULL, the file open on `fd` (`len` bytes; taken), read once
 * for its gzip form. */
struct http_entity {
    const char *content_type;
    const char *body;
    size_t len;
    int fd;               /* used when body is NULL; closed here */
    const char *etag;     /* identity's, with quotes; NULL: none (no 304 by tag) */
    time_t last_modified; /* for If-Modified-Since; (time_t)-1 unknown */
    /* Names the bytes exactly, for the server's kept gzip forms (gzcache.h);
     * NULL: the ETag does (the evidence's: digest and length). */
    const char *key;
};

/* Replies 200 (or 304) with entity `e`: Vary: Accept-Encoding where it
 * may be compressed, the ETag of the coding sent (identity's with "-gz"
 * for gzip), Content-Encoding: gzip, the gzip form made once per key and
 * kept (gzcache.h), never per request. A body under ENCODING_MIN_BYTES or
 * of a type compressed already is always identity. Other headers (Cache-
 * Control, Last-Modified) are the caller's, added before. */
void http_reply_entity(struct http_req *r, const struct http_entity *e);

/* The server's kept gzip forms (for the reply above). */
struct gzcache *http_req_gzcache(const struct http_req *r);

/* Constant-time comparison of two strings (time depends only on `b`'s
 * length). 1 when equal. */
int http_secure_equal(const char *a, const char *b);

#endif /* DV_HTTP_H */
