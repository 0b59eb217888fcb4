/* helper_http.h -- start the real `divergence serve` on a loopback ephemeral
 * port and talk HTTP to it through core/httpclient (libcurl), for the server
 * and evidence tests; helper_raw() sends hostile bytes as they are.
 *
 *   struct helper_server s;
 *   const char *args[] = {"--queue", "2", NULL};
 *   cr_assert_eq(helper_server_start(&s, args, NULL), 0);
 *   struct helper_response r;
 *   helper_request(s.port, "GET", "/healthz", NULL, NULL, 0, &r);
 *   ... r.status, helper_header(&r, "Content-Type"), r.body ...
 *   helper_response_free(&r);
 *   cr_assert_eq(helper_server_stop(&s), 0);
 *
 * The server runs with --worker-cmd <build>/tests/fake_worker unless args
 * name another, and its stderr goes to s.log (a file) for assertions on the
 * log.
 */
#ifndef DV_HELPER_HTTP_H
#define DV_HELPER_HTTP_H

#include <jansson.h>
#include <stddef.h>
#include <sys/types.h>

struct helper_server {
    pid_t pid;
    unsigned port;
    char log[256];   /* path of the server's stderr */
};

struct helper_response {
    int status;      /* -1 when the connection failed */
    char *headers;   /* raw header block */
    char *body;      /* NUL-terminated */
    size_t len;
};

/* Starts the server with `args` (NULL-terminated, may be NULL) after the
 * defaults, and `env` ("NAME=value", NULL-terminated, may be NULL) added to
 * its environment. Waits for its "listening on" line (10 s). Returns 0. */
int helper_server_start(struct helper_server *s, const char *const *args, const char *const *env);

/* Polls GET /readyz until it answers `want` (200 or 503) or `timeout_ms`
 * passes. Returns 0 when it did. */
int helper_server_wait_ready(const struct helper_server *s, int want, int timeout_ms);

/* SIGTERM, then waits up to `timeout_ms` (SIGKILL after). Returns the exit
 * status, 128 + signal when killed, -1 on error. */
int helper_server_stop(struct helper_server *s, int timeout_ms);

/* The server's log so far (malloc()ed). */
char *helper_server_log(const struct helper_server *s);

/* One request on its own connection (core/httpclient), the path sent as
 * written. `headers` holds extra header lines, each ending in "\r\n" (may be
 * NULL). A POST gets `Content-Type: application/json` unless `headers` has a
 * Content-Type (the server takes POST bodies only as JSON). Returns 0 when a
 * response came. */
int helper_request(unsigned port, const char *method, const char *path, const char *headers,
                   const char *body, size_t len, struct helper_response *r);

/* Sends `raw` bytes as they are (for requests a client would normalise). */
int helper_raw(unsigned port, const char *raw, size_t len, struct helper_response *r);

/* A header's value (case-insensitive name) copied into `buf`, or NULL. */
const char *helper_header(const struct helper_response *r, const char *name, char *buf, size_t len);

/* The body parsed as JSON, or NULL. */
json_t *helper_json(const struct helper_response *r);

void helper_response_free(struct helper_response *r);

/* Polls GET /jobs/{id} until its state is done or failed (or timeout).
 * Returns the parsed final body, or NULL. */
json_t *helper_wait_job(unsigned port, const char *id, int timeout_ms);

void helper_sleep_ms(long ms);

#endif /* DV_HELPER_HTTP_H */
