/* refresh_cmd.c -- `divergence refresh`, run nightly by the refresh timer.
 *
 * Two kinds of request through core/httpclient: one POST that starts (or
 * joins) the server's refresh, then GETs of its status every --interval
 * seconds, printing a line for each suite whose state changed, until the
 * server says "done" or --timeout passes. A few failed polls in a row are
 * tolerated (the server may be restarting: the refresh is its, not ours);
 * an HTTP error answer is not. The summary lists each suite with its
 * evidence path or the reason it failed, and under each good suite what its
 * record says changed since the previous good night (one GET of the
 * record).
 */
#define _POSIX_C_SOURCE 200809L
#include "server/cmd/refresh_cmd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "kernels/base/status.h"
#include "kernels/base/timeutil.h"
#include "server/core/httpclient.h"
#include "api/jsonout.h"

#define REFRESH_CMD_ID_LEN 64
#define REFRESH_CMD_POLL_MISSES 5 /* failed polls in a row before giving up */

/* Where the refresh lives: the --server URL without its trailing slashes,
 * so "http://h:8080/divergence/" + "/evidence/refresh" keeps the prefix. */
struct target {
    char base[1024];
    char auth[600]; /* "Authorization: Bearer ...\r\n" or "" */
};

static int target_init(struct target *t, const char *server, const char *token, char *err) {
    if (strlen(server) >= sizeof t->base) {
        dv_seterr(err, "--server: longer than %zu characters", sizeof t->base - 1);
        return -1;
    }
    if (strpbrk(server, "?#")) {
        dv_seterr(err, "--server %s: expected http[s]://HOST[:PORT][/PATH], without a query", server);
        return -1;
    }
    char why[ERR_LEN];
    if (httpclient_url_check(server, why) != 0) {
        dv_seterr(err, "--server %s", why);
        return -1;
    }
    strcpy(t->base, server);
    size_t n = strlen(t->base);
    while (n > 0 && t->base[n - 1] == '/') t->base[--n] = '\0';
    t->auth[0] = '\0';
    if (token && *token) {
        if (strlen(token) > 512) {
            dv_seterr(err, "--token: longer than 512 characters");
            return -1;
        }
        for (const char *p = token; *p; p++) {
            if ((unsigned char)*p < 0x20 || *p == 0x7f) {
                dv_seterr(err, "--token: contains a control character");
                return -1;
            }
        }
        snprintf(t->auth, sizeof t->auth, "Authorization: Bearer %s\r\n", token);
    }
    return 0;
}

/* One request to `path` under the target. Returns the HTTP status with the
 * answer in `r`, or -1 with `err` for connection, TLS and protocol errors. */
static int call(const struct target *t, const char *method, const char *path, struct httpclient_response *r,
                char *err) {
    char url[1100], headers[700];
    snprintf(url, sizeof url, "%s%s", t->base, path);
    snprintf(headers, sizeof headers, "Accept: application/json\r\nUser-Agent: divergence-refresh\r\n%s%s", t->auth,
             strcmp(method, "POST") == 0 ? "Content-Type: application/json\r\n" : "");
    struct httpclient_request q = {.method = method, .url = url, .headers = headers, .follow = 1};
    if (httpclient_send(&q, r, err) != 0) return -1;
    return (int)r->status;
}

/* The reason in an error body: {"error": {"reason": ...}} (the service's
 * shape) or {"error": "..."}. */
static const char *error_of(json_t *j) {
    json_t *e = json_object_get(j, "error");
    if (json_is_object(e)) return json_string_value(json_object_get(e, "reason"));
    return json_string_value(e);
}

static void usage(FILE *f) {
    fprintf(f,
            "usage: divergence refresh --server URL [--token TOKEN] [--timeout SECONDS]\n"
            "                          [--interval SECONDS]\n"
            "Measures every evidence suite on the server, waits, prints a summary.\n"
            "  --server    the service: http[s]://HOST[:PORT][/PATH] (proxies from\n"
            "              https_proxy / http_proxy / no_proxy; redirects followed)\n"
            "  --token     bearer token (default: $DIVERGENCE_TOKEN)\n"
            "  --timeout   give up waiting after this many seconds (default 3600)\n"
            "  --interval  seconds between progress polls (default 2)\n"
            "Exit status: 0 every suite good, 1 a suite failed or the wait timed out,\n"
            "2 usage, connection or HTTP errors.\n");
}

/* Parses the options. Returns -1 to go on, else the exit status. */
static int parse(int argc, char **argv, const char **server, const char **token, double *timeout, double *interval) {
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = NULL;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            return REFRESH_CMD_OK;
        }
        const char *names[] = {"--server", "--token", "--timeout", "--interval"};
        int which = -1;
        for (int k = 0; k < 4; k++) {
            size_t n = strlen(names[k]);
            if (strncmp(a, names[k], n) == 0 && (a[n] == '\0' || a[n] == '=')) {
                which = k;
                v = a[n] == '=' ? a + n + 1 : (i + 1 < argc ? argv[++i] : NULL);
            }
        }
        if (which < 0) {
            fprintf(stderr, "refresh: unknown option %s\n", a);
            usage(stderr);
            return REFRESH_CMD_ERROR;
        }
        if (!v) {
            fprintf(stderr, "refresh: %s needs a value\n", a);
            return REFRESH_CMD_ERROR;
        }
        char *end;
        switch (which) {
        case 0: *server = v; break;
        case 1: *token = v; break;
        default: {
            double d = strtod(v, &end);
            if (*end || !(d > 0) || d > 864000) {
                fprintf(stderr, "refresh: %s: expected seconds in (0, 864000], got %s\n", names[which], v);
                return REFRESH_CMD_ERROR;
            }
            if (which == 2) *timeout = d;
            else *interval = d;
        }
        }
    }
    if (!*server) {
        fprintf(stderr, "refresh: --server is required\n");
        usage(stderr);
        return REFRESH_CMD_ERROR;
    }
    return -1;
}

/* POST /evidence/refresh: the refresh id into `id`. Returns 0 or the exit
 * status after saying why. */
static int start(const struct target *t, char *id) {
    struct httpclient_response r;
    char err[ERR_LEN];
    int status = call(t, "POST", "/evidence/refresh", &r, err);
    if (status < 0) {
        fprintf(stderr, "refresh: %s\n", err);
        return REFRESH_CMD_ERROR;
    }
    int rc = REFRESH_CMD_ERROR;
    json_t *j = jsonout_loads(r.body, JSON_REJECT_DUPLICATES, NULL);
    const char *idv = json_string_value(json_object_get(j, "id"));
    if (status != 202 && status != 200) {
        const char *why = j ? error_of(j) : NULL;
        fprintf(stderr, "refresh: POST /evidence/refresh: HTTP %d: %s\n", status, why ? why : r.body);
    } else if (!idv || strlen(idv) >= REFRESH_CMD_ID_LEN ||
               strspn(idv, "abcdefghijklmnopqrstuvwxyz0123456789-") != strlen(idv)) {
        fprintf(stderr, "refresh: POST /evidence/refresh: no refresh id in the answer: %s\n", r.body);
    } else {
        strcpy(id, idv);
        rc = 0;
    }
    json_decref(j);
    httpclient_response_cleanup(&r);
    return rc;
}

/* Prints each suite of status `j` whose state changed since `last` (one
 * letter per suite, grown as needed). */
static void progress(json_t *j, char **last, size_t *nlast) {
    json_t *suites = json_object_get(j, "suites"), *e;
    size_t k, ns = json_array_size(suites);
    if (ns > *nlast) {
        char *bigger = realloc(*last, ns);
        if (!bigger) return; /* progress lines are a courtesy */
        memset(bigger + *nlast, 0, ns - *nlast);
        *last = bigger;
        *nlast = ns;
    }
    json_array_foreach(suites, k, e) {
        const char *st = json_string_value(json_object_get(e, "state"));
        char c = st ? st[0] : '?';
        if ((*last)[k] != c) {
            (*last)[k] = c;
            const char *name = json_string_value(json_object_get(e, "suite"));
            printf("  %-20s %s\n", name ? name : "?", st ? st : "?");
            fflush(stdout);
        }
    }
}

/* Waits for the first suite of refresh status `j` that is still queued or
 * running: GET /jobs/{its job}?wait=S holds the request until that job
 * finishes or S seconds pass, so the client learns of each suite's end at
 * once instead of at the next poll. Returns 0 when it waited, -1 when there
 * was nothing to wait on or the server does not hold the request (the caller
 * then sleeps its interval). */
static int wait_running_job(const struct target *t, json_t *j, double seconds) {
    json_t *suites = json_object_get(j, "suites"), *e;
    size_t k;
    char path[160], url[1100], headers[700], err[ERR_LEN];
    if (seconds < 1) return -1;
    if (seconds > 30) seconds = 30;
    json_array_foreach(suites, k, e) {
        const char *state = json_string_value(json_object_get(e, "state"));
        const char *job = json_string_value(json_object_get(e, "job"));
        if (!state || !job || (strcmp(state, "queued") != 0 && strcmp(state, "running") != 0)) continue;
        if (strspn(job, "0123456789abcdef") != strlen(job) || strlen(job) > 64) return -1;
        snprintf(path, sizeof path, "/jobs/%s?wait=%d", job, (int)seconds);
        snprintf(url, sizeof url, "%s%s", t->base, path);
        snprintf(headers, sizeof headers, "Accept: application/json\r\nUser-Agent: divergence-refresh\r\n%s", t->auth);
        struct httpclient_request q = {
            .method = "GET", .url = url, .headers = headers, .follow = 1, .timeout_ms = (long)(seconds * 1000) + 10000};
        struct httpclient_response r;
        const double t0 = timeutil_now_ms();
        if (httpclient_send(&q, &r, err) != 0) return -1;
        const long status = r.status;
        httpclient_response_cleanup(&r);
        /* An answer in under 50 ms for a job that was still going means the
         * server did not hold it (an older server): fall back to polling. */
        return status == 200 && timeutil_now_ms() - t0 >= 50 ? 0 : -1;
    }
    return -1;
}

/* Follows the refresh until it is done: its final status in `*final`.
 * Between two looks at the refresh it waits on the running suite's job
 * (wait_running_job), or sleeps `interval` where it cannot. Returns 0 or the
 * exit status after saying why. */
static int follow(const struct target *t, const char *id, double timeout, double interval, json_t **final) {
    char path[128], err[ERR_LEN];
    snprintf(path, sizeof path, "/evidence/refresh/%s", id);
    const double t0 = timeutil_now_ms();
    char *last = NULL;
    size_t nlast = 0;
    int misses = 0, rc = REFRESH_CMD_ERROR;
    *final = NULL;
    for (;;) {
        struct httpclient_response r;
        int status = call(t, "GET", path, &r, err);
        if (status < 0) {
            if (++misses >= REFRESH_CMD_POLL_MISSES) {
                fprintf(stderr, "refresh: %s\n", err);
                break;
            }
        } else {
            misses = 0;
            json_t *j = jsonout_loads(r.body, JSON_REJECT_DUPLICATES, NULL);
            if (status != 200 || !j) {
                const char *why = j ? error_of(j) : NULL;
                fprintf(stderr, "refresh: GET %s: HTTP %d: %s\n", path, status, why ? why : r.body);
                json_decref(j);
                httpclient_response_cleanup(&r);
                break;
            }
            httpclient_response_cleanup(&r);
            progress(j, &last, &nlast);
            const char *state = json_string_value(json_object_get(j, "state"));
            if (state && strcmp(state, "done") == 0) {
                *final = j;
                rc = 0;
                break;
            }
            double left = timeout - (timeutil_now_ms() - t0) / 1e3;
            int waited = wait_running_job(t, j, left);
            json_decref(j);
            if (waited == 0) continue;
        }
        double elapsed = (timeutil_now_ms() - t0) / 1e3;
        if (elapsed >= timeout) {
            fprintf(stderr, "refresh %s: timed out after %.0f s; it goes on on the server (GET %s)\n", id, elapsed,
                    path);
            rc = REFRESH_CMD_FAILED;
            break;
        }
        timeutil_sleep_ms(1e3 * (interval < timeout - elapsed ? interval : timeout - elapsed));
    }
    free(last);
    return rc;
}

/* Prints the comparison line of the record at `href` (a path under
 * /evidence/): what changed since the previous good night. The refresh's
 * outcome does not depend on it, so a record that cannot be read prints
 * nothing. */
static void print_comparison(const struct target *t, const char *href) {
    if (!href || strncmp(href, "/evidence/", 10) != 0 || strlen(href) > 200 ||
        strspn(href, "abcdefghijklmnopqrstuvwxyz0123456789-_./") != strlen(href))
        return;
    struct httpclient_response r;
    char err[ERR_LEN];
    if (call(t, "GET", href, &r, err) != 200) { /* the answer is always initialised */
        httpclient_response_cleanup(&r);
        return;
    }
    json_t *rec = jsonout_loads(r.body, 0, NULL);
    httpclient_response_cleanup(&r);
    json_t *c = json_object_get(rec, "comparison");
    const char *line = json_string_value(json_object_get(c, "summary"));
    if (line) {
        const json_int_t changed = json_integer_value(json_object_get(c, "changed"));
        printf("  %-20s %s%s\n", "", changed > 0 ? "CHANGED: " : "", line);
    }
    json_decref(rec);
}

/* Prints the summary of a finished refresh, each good suite with what
 * changed since its previous good night; returns the exit status. */
static int summary(const struct target *t, const char *id, json_t *final) {
    const char *date = json_string_value(json_object_get(final, "date"));
    printf("refresh %s (%s):\n", id, date ? date : "?");
    json_t *suites = json_object_get(final, "suites"), *e;
    size_t k;
    int failed = 0, ok = 0;
    json_array_foreach(suites, k, e) {
        const char *name = json_string_value(json_object_get(e, "suite"));
        const char *st = json_string_value(json_object_get(e, "state"));
        int good = st && strcmp(st, "done") == 0;
        ok += good;
        failed += !good;
        const char *detail =
            good ? json_string_value(json_object_get(e, "evidence")) : json_string_value(json_object_get(e, "reason"));
        printf("  %-20s %-6s %s\n", name ? name : "?", good ? "ok" : "FAILED", detail ? detail : "");
        if (good) print_comparison(t, detail);
    }
    printf("%d ok, %d failed\n", ok, failed);
    return failed || ok == 0 ? REFRESH_CMD_FAILED : REFRESH_CMD_OK;
}

int refresh_cmd_main(int argc, char **argv) {
    const char *server = NULL, *token = getenv("DIVERGENCE_TOKEN");
    double timeout = 3600.0, interval = 2.0;
    int rc = parse(argc, argv, &server, &token, &timeout, &interval);
    if (rc >= 0) return rc;
    struct target t;
    char err[ERR_LEN], id[REFRESH_CMD_ID_LEN];
    if (target_init(&t, server, token, err) != 0) {
        fprintf(stderr, "refresh: %s\n", err);
        return REFRESH_CMD_ERROR;
    }
    if ((rc = start(&t, id)) != 0) return rc;
    printf("refresh %s started on %s\n", id, server);
    fflush(stdout);
    json_t *final;
    if ((rc = follow(&t, id, timeout, interval, &final)) != 0) return rc;
    rc = summary(&t, id, final);
    json_decref(final);
    return rc;
}
