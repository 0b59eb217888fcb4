/* http.c -- see http.h.
 *
 * libmicrohttpd calls the access handler several times per request: first
 * with the headers (*req_cls NULL), then once per chunk of body, then once
 * with *upload_data_size == 0. The first call allocates a struct http_req,
 * matches the route and applies every check that needs no body, answering
 * at once when one fails (so a 413 by Content-Length, a 401 or a 429 never
 * reads the body). Body chunks are appended up to the limit; past it the
 * rest is discarded and the last call answers 413. The request-completed
 * callback frees the state. Status counters live in a small fixed table.
 */
#define _GNU_SOURCE
#include "http/http.h"
#include "base/timeutil.h"
#include "core/jsonout.h"
#include "core/log.h"
#include "http/ratelimit.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#define HTTP_MAX_ROUTES 64
#define HTTP_MAX_HEADERS 12
#define HTTP_MAX_COUNTERS 256

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

struct http {
    struct http_config cfg;
    char *token;
    char *bind;
    char *cors[HTTP_MAX_CORS];
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
    const struct route *route;
    const char *method, *path;
    char *body;
    size_t len, cap;
    int too_large;
    int replied;
    char client[INET6_ADDRSTRLEN];
    char *hname[HTTP_MAX_HEADERS], *hvalue[HTTP_MAX_HEADERS];
    unsigned nheaders;
    double t0_ms; /* monotonic, when the headers arrived */
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
    h->quiesced = MHD_INVALID_SOCKET;
    if (!(h->bind = strdup(cfg->bind ? cfg->bind : "127.0.0.1"))) goto oom;
    if (cfg->token && cfg->token[0] && !(h->token = strdup(cfg->token))) goto oom;
    for (unsigned i = 0; i < HTTP_MAX_CORS && cfg->cors[i]; i++)
        if (!(h->cors[i] = strdup(cfg->cors[i]))) goto oom;
    if (!(h->rl = ratelimit_create(h->cfg.rate_per_min, h->cfg.rate_table))) goto oom;
    pthread_mutex_init(&h->mlock, NULL);
    return h;
oom:
    if (h) {
        free(h->bind);
        free(h->token);
        for (unsigned i = 0; i < HTTP_MAX_CORS; i++) free(h->cors[i]);
        free(h);
    }
    dv_seterr(err, "http: out of memory");
    return NULL;
}

int http_route_add(struct http *h, const char *method, const char *pattern, const char *label,
                   unsigned flags, http_handler_fn fn, void *ctx, char *err) {
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
    pthread_mutex_lock(&h->mlock);
    size_t cap = 256 + (size_t)h->ncounters * 160;
    char *s = malloc(cap);
    if (s) {
        size_t n = (size_t)snprintf(s, cap,
                                    "# HELP dv_http_requests_total HTTP requests by route and status.\n"
                                    "# TYPE dv_http_requests_total counter\n");
        for (unsigned i = 0; i < h->ncounters && n < cap; i++)
            n += (size_t)snprintf(s + n, cap - n, "dv_http_requests_total{route=\"%s\",status=\"%d\"} %llu\n",
                                  h->counters[i].label, h->counters[i].status, h->counters[i].n);
    }
    pthread_mutex_unlock(&h->mlock);
    return s;
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
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(len, (void *)body, MHD_RESPMEM_MUST_COPY);
    if (resp && content_type) MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, content_type);
    queue(r, status, resp);
}

void http_reply_take(struct http_req *r, int status, const char *content_type, char *body) {
    if (!body) {
        static const char oom[] = "{\"error\":{\"status\":500,\"field\":null,\"reason\":\"out of memory\"}}\n";
        http_reply(r, 500, "application/json", oom, sizeof oom - 1);
        return;
    }
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(strlen(body), body, MHD_RESPMEM_MUST_FREE);
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

void http_reply_error_ex(struct http_req *r, int status, const char *field, json_t *extra,
                         const char *fmt, ...) {
    char reason[ERR_LEN * 2];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, sizeof reason, fmt, ap);
    va_end(ap);
    json_t *e = json_object();
    json_object_set_new(e, "status", json_integer(status));
    json_object_set_new(e, "field", field && field[0] ? json_string(field) : json_null());
    json_object_set_new(e, "reason", json_string(reason));
    if (extra) {
        json_object_update(e, extra);
        json_decref(extra);
    }
    json_t *root = json_object();
    json_object_set_new(root, "error", e);
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
static const struct route *match(const struct http *h, const char *method, const char *path,
                                 int *path_known, char *allow, size_t alen) {
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
    snprintf(out, len, "unknown");
    if (!ci || !ci->client_addr) return;
    const struct sockaddr *sa = ci->client_addr;
    if (sa->sa_family == AF_INET)
        inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, out, (socklen_t)len);
    else if (sa->sa_family == AF_INET6)
        inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, out, (socklen_t)len);
}

/* The address the rate limit counts: the peer, or with trust_forwarded and a
 * loopback peer (a local reverse proxy) the last X-Forwarded-For hop. */
static void rate_key(const struct http_req *r, char *out, size_t len) {
    snprintf(out, len, "%s", r->client);
    if (!r->h->cfg.trust_forwarded) return;
    if (strcmp(r->client, "127.0.0.1") != 0 && strcmp(r->client, "::1") != 0) return;
    const char *xff = http_req_header(r, "X-Forwarded-For");
    if (!xff) return;
    const char *last = strrchr(xff, ',');
    last = last ? last + 1 : xff;
    while (*last == ' ') last++;
    if (*last) snprintf(out, len, "%s", last);
}

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

/* Checks made with the headers only. Returns 1 when it answered. */
static int early_checks(struct http_req *r, const char *allow, int path_known) {
    struct http *h = r->h;
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
    if (flags & HTTP_ROUTE_RATELIMIT) {
        char key[INET6_ADDRSTRLEN + 64];
        unsigned retry = 0;
        rate_key(r, key, sizeof key);
        if (!ratelimit_take(h->rl, key, &retry)) {
            char ra[16];
            snprintf(ra, sizeof ra, "%u", retry ? retry : 1);
            http_req_add_header(r, "Retry-After", ra);
            json_t *x = json_object();
            json_object_set_new(x, "retry_after_s", json_integer(retry ? retry : 1));
            http_reply_error_ex(r, 429, NULL, x, "rate limit: at most %u requests a minute per address; retry in %s s",
                                h->cfg.rate_per_min, ra);
            return 1;
        }
    }
    if ((flags & HTTP_ROUTE_AUTH) && h->token && !http_req_authorized(r)) {
        int present = http_req_header(r, MHD_HTTP_HEADER_AUTHORIZATION) != NULL;
        http_req_add_header(r, "WWW-Authenticate", "Bearer realm=\"divergence\"");
        http_reply_error(r, 401, "Authorization", "%s",
                         present ? "the bearer token is not valid" : "a bearer token is required (Authorization: Bearer <token>)");
        return 1;
    }
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

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_data_size, void **req_cls) {
    struct http *h = cls;
    struct http_req *r = *req_cls;
    if (!r) {
        r = calloc(1, sizeof *r);
        if (!r) return MHD_NO;
        *req_cls = r;
        r->h = h;
        r->t0_ms = timeutil_now_ms();
        r->conn = conn;
        r->method = method;
        r->path = url;
        client_address(conn, r->client, sizeof r->client);
        char allow[128];
        int path_known = 0;
        r->route = match(h, method, url, &path_known, allow, sizeof allow);
        if (early_checks(r, allow, path_known)) return MHD_YES;
        return MHD_YES;
    }
    if (r->replied) { /* answered early: discard whatever body follows */
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
    r->route->fn(r, r->route->ctx);
    if (!r->replied) {
        LOG(LOG_ERR, "http: the handler of %s %s did not answer", method, url);
        http_reply_error(r, 500, NULL, "internal error: no answer");
    }
    return MHD_YES;
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **req_cls,
                         enum MHD_RequestTerminationCode toe) {
    struct http_req *r = *req_cls;
    if (!r) return;
    for (unsigned i = 0; i < r->nheaders; i++) {
        free(r->hname[i]);
        free(r->hvalue[i]);
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
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ITC | MHD_USE_ERROR_LOG;
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
    h->d = MHD_start_daemon(flags, (uint16_t)h->cfg.port, NULL, NULL, on_request, h,
                            MHD_OPTION_EXTERNAL_LOGGER, on_log, h,
                            MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
                            MHD_OPTION_THREAD_POOL_SIZE, (unsigned int)h->cfg.threads,
                            MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)h->cfg.conn_timeout_s,
                            MHD_OPTION_CONNECTION_LIMIT, (unsigned int)h->cfg.conn_limit,
                            MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned int)h->cfg.per_ip_limit,
                            MHD_OPTION_NOTIFY_COMPLETED, on_completed, h,
                            MHD_OPTION_END);
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

void http_free(struct http *h) {
    if (!h) return;
    if (h->d) MHD_stop_daemon(h->d);
    if (h->quiesced != MHD_INVALID_SOCKET) close(h->quiesced);
    ratelimit_free(h->rl);
    free(h->bind);
    free(h->token);
    for (unsigned i = 0; i < HTTP_MAX_CORS; i++) free(h->cors[i]);
    pthread_mutex_destroy(&h->mlock);
    free(h);
}
