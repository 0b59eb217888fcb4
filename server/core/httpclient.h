/* httpclient.h -- the one HTTP client: one request, one whole answer in
 * memory, on libcurl (http and https, proxies from the environment, timeouts,
 * redirects, chunked bodies). Used by `divergence refresh` and by the tests
 * that talk to the real server.
 *
 *   struct httpclient_request q = {.method = "GET", .url = "http://127.0.0.1:8080/healthz"};
 *   struct httpclient_response r;
 *   if (httpclient_send(&q, &r, err) == 0) ... r.status, r.body, r.len ...
 *   httpclient_response_cleanup(&r);
 *
 * Each call makes its own connection and closes it, so callers share
 * nothing and any thread may call it.
 */
#ifndef DV_HTTPCLIENT_H
#define DV_HTTPCLIENT_H

#include <stddef.h>

#define HTTPCLIENT_TIMEOUT_MS 30000L    /* whole request, when the caller says 0 */
#define HTTPCLIENT_MAX_BODY (16u << 20) /* answers past this are refused          */
#define HTTPCLIENT_MAX_REDIRECTS 5

struct httpclient_request {
    const char *method;  /* "GET", "POST", "DELETE", "OPTIONS", ...                   */
    const char *url;     /* http:// or https://, with the path and query             */
    const char *headers; /* extra header lines, each ending in "\r\n"; NULL for none  */
    const void *body;    /* request body, `len` bytes; NULL for none (a POST without
                            one sends Content-Length: 0)                              */
    size_t len;
    long timeout_ms; /* the whole request; 0 for HTTPCLIENT_TIMEOUT_MS            */
    int follow;      /* 1: follow up to HTTPCLIENT_MAX_REDIRECTS redirects         */
    int no_proxy;    /* 1: ignore http_proxy/https_proxy (a loopback server)      */
    int path_as_is;  /* 1: send "/a/../b" as written instead of resolving it      */
};

struct httpclient_response {
    long status;   /* the final answer's HTTP status                              */
    char *headers; /* its header block: the status line, then "Name: value\r\n"... */
    char *body;    /* NUL-terminated (the NUL is not counted in len)              */
    size_t len;
};

/* Checks that `url` is http:// or https:// with a host and, if any, a port
 * in 1..65535. Returns 0, or -1 with `err` saying what is wrong. */
int httpclient_url_check(const char *url, char *err);

/* Sends `req` and reads the whole answer into `resp` (always initialised;
 * release it with httpclient_response_cleanup). A request header given in
 * `req->headers` replaces libcurl's own of that name, and a body sent
 * without a Content-Type carries none. Returns 0 when an HTTP answer came
 * (any status), or -1 with `err` ("METHOD URL: why") for a bad URL, a
 * connection, TLS or protocol error, a timeout, an answer over
 * HTTPCLIENT_MAX_BODY or no memory. */
int httpclient_send(const struct httpclient_request *req, struct httpclient_response *resp, char *err);

/* The value of header `name` (case-insensitive) of `resp`, copied into
 * `buf` (`len` bytes, truncated to fit), or NULL when it has none. */
const char *httpclient_header(const struct httpclient_response *resp, const char *name, char *buf, size_t len);

/* Frees what httpclient_send() put in `resp`; accepts one already cleaned. */
void httpclient_response_cleanup(struct httpclient_response *resp);

#endif /* DV_HTTPCLIENT_H */
