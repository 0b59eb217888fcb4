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
 * applied, in order: the rate limit (HTTP_ROUTE_RATELIMIT, 429 +
 * Retry-After), the bearer token (HTTP_ROUTE_AUTH when a token is set, 401),
 * and the body limit (413, answered from Content-Length before the body is
 * read when the client sends one). Handlers run on the daemon's threads and
 * must not block: they validate, enqueue and read state. Each handler calls
 * exactly one http_reply_*().
 *
 * Every error is JSON: {"error": {"status": 404, "field": null,
 * "reason": "..."}} plus route-specific members. Every reply carries a
 * Cache-Control header: "no-store" unless the handler added its own.
 */
#ifndef DV_HTTP_H
#define DV_HTTP_H

#include <jansson.h>
#include <stddef.h>
#include "base/status.h"

#define HTTP_ROUTE_PREFIX 1u    /* pattern is a prefix                       */
#define HTTP_ROUTE_AUTH 2u      /* bearer token required when one is set     */
#define HTTP_ROUTE_RATELIMIT 4u /* counted against the per-address limit     */
#define HTTP_ROUTE_BODY 8u      /* the handler reads a request body          */

#define HTTP_MAX_CORS 16

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
    int trust_forwarded;         /* rate-limit by X-Forwarded-For from loopback */
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
/* Stops the daemon and frees everything. NULL ok. */
void http_free(struct http *h);

/* Prometheus lines for the request counters:
 * dv_http_requests_total{route="...",status="..."} N. malloc()ed. */
char *http_metrics_text(struct http *h);

/* Called once per answered request with the route's label ("other" when no
 * route matched), the status and the seconds from the request's headers to
 * its answer being queued. Runs on the daemon's threads: must be quick. */
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
/* Whether the request carries the configured token (1 when none is set). */
int http_req_authorized(const struct http_req *r);

/* Adds a response header to the reply that follows (at most 12). */
void http_req_add_header(struct http_req *r, const char *name, const char *value);

/* Replies with `len` bytes of `body` (copied) as `content_type`. */
void http_reply(struct http_req *r, int status, const char *content_type, const char *body, size_t len);
/* Replies with `body` (NUL-terminated, malloc()ed; ownership taken). */
void http_reply_take(struct http_req *r, int status, const char *content_type, char *body);
/* Replies with the JSON value `v` (reference stolen), compact, plus newline. */
void http_reply_json(struct http_req *r, int status, json_t *v);
/* Replies {"error": {"status", "field" (null when NULL/""), "reason"}} merged
 * with the members of `extra` (stolen, may be NULL). */
void http_reply_error_ex(struct http_req *r, int status, const char *field, json_t *extra,
                         const char *fmt, ...)
#ifdef __GNUC__
    __attribute__((format(printf, 5, 6)))
#endif
    ;
#define http_reply_error(r, status, field, ...) http_reply_error_ex((r), (status), (field), NULL, __VA_ARGS__)
/* Replies with the file open on `fd` (`size` bytes; the fd is taken). */
void http_reply_fd(struct http_req *r, int status, const char *content_type, int fd, size_t size);

/* Constant-time comparison of two strings (time depends only on `b`'s
 * length). 1 when equal. */
int http_secure_equal(const char *a, const char *b);

#endif /* DV_HTTP_H */
