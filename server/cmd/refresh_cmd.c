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
 *
 * --timeout is the whole run's budget: every request is given what is left
 * of it as its own timeout, and when it is spent the run stops saying so
 * (a refresh not yet done exits 1; comparisons not yet fetched are skipped,
 * the refresh's outcome standing). Text the server supplies (suite names,
 * states, reasons, comparisons, error bodies) is printed through shown(),
 * so a control character or a terminal escape in it reaches the terminal
 * as \xNN, never as itself.
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
#define SHOWN_LEN 1024            /* server text printed: at most this, escaped */

/* Where the refresh lives: the --server URL without its trailing slashes,
 * so "http://h:8080/divergence/" + "/evidence/refresh" keeps the prefix. */
struct target {
    char base[1024];
    char auth[600];  /* "Authorization: Bearer ...\r\n" or ""                   */
    double t0_ms;    /* the run's start, on timeutil_now_ms()'s clock          */
    double budget_s; /* --timeout: the whole run's                             */
};

/* Milliseconds left of the run's budget; 0 when it is spent. */
static long left_ms(const struct target *t) {
    const double left = t->t0_ms + 1e3 * t->budget_s - timeutil_now_ms();
    return left >= 1 ? (long)left : 0;
}

/* The length of the UTF-8 character at `p` (1 to 4) with its code point
 * in *cp, or 0 where the bytes there are not one (a stray continuation, a
 * cut, an overlong form, a surrogate, past U+10FFFF). */
static size_t utf8_char(const unsigned char *p, unsigned *cp) {
    static const unsigned least[5] = {0, 0, 0x80, 0x800, 0x10000};
    size_t len = *p < 0x80                 ? 1
                 : *p >= 0xc2 && *p < 0xe0 ? 2
                 : *p >= 0xe0 && *p < 0xf0 ? 3
                 : *p >= 0xf0 && *p < 0xf5 ? 4
                                           : 0;
    unsigned c = len == 1 ? *p : len == 2 ? *p & 0x1fu : len == 3 ? *p & 0x0fu : *p & 0x07u;
    for (size_t k = 1; k < len; k++) {
        if ((p[k] & 0xc0) != 0x80) return 0; /* the NUL stops it too */
        c = c << 6 | (p[k] & 0x3fu);
    }
    if (len == 0 || c < least[len] || c > 0x10ffff || (c >= 0xd800 && c < 0xe000)) return 0;
    *cp = c;
    return len;
}

/* Server text `s` made safe for a terminal into `buf` (`size` bytes, at
 * least 8): printable ASCII and UTF-8 characters as they are; control
 * characters (C0, DEL, C1), bidirectional controls (U+202A-U+202E,
 * U+2066-U+2069) and bytes that are not UTF-8 as \xNN, one per byte; cut
 * with "..." where it does not fit. NULL reads as "?". Returns `buf`. */
static const char *shown(const char *s, char *buf, size_t size) {
    size_t n = 0; /* always n + 4 <= size: room for "..." and the NUL */
    for (const unsigned char *p = (const unsigned char *)(s ? s : "?"); *p;) {
        unsigned cp = 0;
        const size_t len = utf8_char(p, &cp);
        const int plain = len && cp >= 0x20 && cp != 0x7f && !(cp >= 0x80 && cp < 0xa0) &&
                          !(cp >= 0x202a && cp <= 0x202e) && !(cp >= 0x2066 && cp <= 0x2069);
        const size_t bytes = len ? len : 1, need = plain ? bytes : 4 * bytes;
        if (n + need + 4 > size) {
            memcpy(buf + n, "...", 4);
            return buf;
        }
        if (plain) {
            memcpy(buf + n, p, bytes);
            n += bytes;
        } else {
            for (size_t k = 0; k < bytes; k++) n += (size_t)snprintf(buf + n, 5, "\\x%02x", p[k]);
        }
        p += bytes;
    }
    buf[n] = '\0';
    return buf;
}

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

/* One request to `path` under the target, given what is left of the run's
 * budget (at most `cap_ms` of it when that is > 0). Returns the HTTP status
 * with the answer in `r` (always initialised), or -1 with `err` for
 * connection, TLS and protocol errors, a timeout, or a budget already
 * spent (nothing sent then). */
static int call(const struct target *t, const char *method, const char *path, long cap_ms,
                struct httpclient_response *r, char *err) {
    memset(r, 0, sizeof *r);
    long ms = left_ms(t);
    if (ms == 0) {
        dv_seterr(err, "%s %s: the --timeout of %g s is spent", method, path, t->budget_s);
        return -1;
    }
    if (cap_ms > 0 && cap_ms < ms) ms = cap_ms;
    char url[1100], headers[700];
    snprintf(url, sizeof url, "%s%s", t->base, path);
    snprintf(headers, sizeof headers, "Accept: application/json\r\nUser-Agent: divergence-refresh\r\n%s%s", t->auth,
             strcmp(method, "POST") == 0 ? "Content-Type: application/json\r\n" : "");
    struct httpclient_request q = {.method = method, .url = url, .headers = headers, .follow = 1, .timeout_ms = ms};
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
            "  --timeout   the whole run's budget in seconds, every request's\n"
            "              time included (default 3600)\n"
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
    char err[ERR_LEN], text[SHOWN_LEN];
    int status = call(t, "POST", "/evidence/refresh", 0, &r, err);
    if (status < 0) {
        fprintf(stderr, "refresh: %s\n", err);
        return REFRESH_CMD_ERROR;
    }
    int rc = REFRESH_CMD_ERROR;
    json_t *j = jsonout_loads(r.body, JSON_REJECT_DUPLICATES, NULL);
    const char *idv = json_string_value(json_object_get(j, "id"));
    if (status != 202 && status != 200) {
        const char *why = j ? error_of(j) : NULL;
        fprintf(stderr, "refresh: POST /evidence/refresh: HTTP %d: %s\n", status,
                shown(why ? why : r.body, text, sizeof text));
    } else if (!idv || strlen(idv) >= REFRESH_CMD_ID_LEN ||
               strspn(idv, "abcdefghijklmnopqrstuvwxyz0123456789-") != strlen(idv)) {
        fprintf(stderr, "refresh: POST /evidence/refresh: no refresh id in the answer: %s\n",
                shown(r.body, text, sizeof text));
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
            char name[SHOWN_LEN], state[SHOWN_LEN];
            printf("  %-20s %s\n", shown(json_string_value(json_object_get(e, "suite")), name, sizeof name),
                   shown(st, state, sizeof state));
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
static int wait_running_job(const struct target *t, json_t *j) {
    json_t *suites = json_object_get(j, "suites"), *e;
    size_t k;
    char path[160], err[ERR_LEN];
    double seconds = left_ms(t) / 1e3 - 1; /* the server's answer inside the budget */
    if (seconds < 1) return -1;
    if (seconds > 30) seconds = 30;
    json_array_foreach(suites, k, e) {
        const char *state = json_string_value(json_object_get(e, "state"));
        const char *job = json_string_value(json_object_get(e, "job"));
        if (!state || !job || (strcmp(state, "queued") != 0 && strcmp(state, "running") != 0)) continue;
        if (strspn(job, "0123456789abcdef") != strlen(job) || strlen(job) > 64) return -1;
        snprintf(path, sizeof path, "/jobs/%s?wait=%d", job, (int)seconds);
        struct httpclient_response r;
        const double t0 = timeutil_now_ms();
        const int status = call(t, "GET", path, (long)(seconds * 1000) + 10000, &r, err);
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
static int follow(const struct target *t, const char *id, double interval, json_t **final) {
    char path[128], err[ERR_LEN], text[SHOWN_LEN];
    snprintf(path, sizeof path, "/evidence/refresh/%s", id);
    char *last = NULL;
    size_t nlast = 0;
    int misses = 0, rc = REFRESH_CMD_ERROR;
    *final = NULL;
    for (;;) {
        struct httpclient_response r;
        int status = call(t, "GET", path, 0, &r, err);
        if (status < 0) {
            if (left_ms(t) > 0 && ++misses >= REFRESH_CMD_POLL_MISSES) {
                fprintf(stderr, "refresh: %s\n", err);
                break;
            }
        } else {
            misses = 0;
            json_t *j = jsonout_loads(r.body, JSON_REJECT_DUPLICATES, NULL);
            if (status != 200 || !j) {
                const char *why = j ? error_of(j) : NULL;
                fprintf(stderr, "refresh: GET %s: HTTP %d: %s\n", path, status,
                        shown(why ? why : r.body, text, sizeof text));
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
            int waited = wait_running_job(t, j);
            json_decref(j);
            if (waited == 0) continue;
        }
        const long left = left_ms(t);
        if (left == 0) {
            fprintf(stderr, "refresh %s: the --timeout of %g s is spent (%.1f s); it goes on on the server (GET %s)\n",
                    id, t->budget_s, (timeutil_now_ms() - t->t0_ms) / 1e3, path);
            rc = REFRESH_CMD_FAILED;
            break;
        }
        timeutil_sleep_ms(1e3 * interval < left ? 1e3 * interval : left);
    }
    free(last);
    return rc;
}

/* Prints the comparison line of the record at `href` (a path under
 * /evidence/): what changed since the previous good night. The refresh's
 * outcome does not depend on it, so a record that cannot be read prints
 * nothing. Returns -1 when the run's budget is spent (before or during its
 * GET), else 0. */
static int print_comparison(const struct target *t, const char *href) {
    if (!href || strncmp(href, "/evidence/", 10) != 0 || strlen(href) > 200 ||
        strspn(href, "abcdefghijklmnopqrstuvwxyz0123456789-_./") != strlen(href))
        return 0;
    struct httpclient_response r;
    char err[ERR_LEN], text[SHOWN_LEN];
    if (call(t, "GET", href, 0, &r, err) != 200) { /* the answer is always initialised */
        httpclient_response_cleanup(&r);
        return left_ms(t) == 0 ? -1 : 0;
    }
    json_t *rec = jsonout_loads(r.body, 0, NULL);
    httpclient_response_cleanup(&r);
    json_t *c = json_object_get(rec, "comparison");
    const char *line = json_string_value(json_object_get(c, "summary"));
    if (line) {
        const json_int_t changed = json_integer_value(json_object_get(c, "changed"));
        printf("  %-20s %s%s\n", "", changed > 0 ? "CHANGED: " : "", shown(line, text, sizeof text));
    }
    json_decref(rec);
    return 0;
}

/* Prints the summary of a finished refresh, each good suite with what
 * changed since its previous good night while the budget lasts; returns
 * the exit status, the refresh's alone. */
static int summary(const struct target *t, const char *id, json_t *final) {
    char date[SHOWN_LEN], name[SHOWN_LEN], detail[SHOWN_LEN];
    printf("refresh %s (%s):\n", id, shown(json_string_value(json_object_get(final, "date")), date, sizeof date));
    json_t *suites = json_object_get(final, "suites"), *e;
    size_t k;
    int failed = 0, ok = 0, unfetched = 0;
    json_array_foreach(suites, k, e) {
        const char *st = json_string_value(json_object_get(e, "state"));
        int good = st && strcmp(st, "done") == 0;
        ok += good;
        failed += !good;
        const char *d =
            good ? json_string_value(json_object_get(e, "evidence")) : json_string_value(json_object_get(e, "reason"));
        printf("  %-20s %-6s %s\n", shown(json_string_value(json_object_get(e, "suite")), name, sizeof name),
               good ? "ok" : "FAILED", d ? shown(d, detail, sizeof detail) : "");
        if (good && (unfetched || print_comparison(t, d) != 0)) unfetched++;
    }
    printf("%d ok, %d failed\n", ok, failed);
    if (unfetched)
        fprintf(stderr,
                "refresh %s: the --timeout of %g s is spent: what changed since the previous night is not "
                "shown for %d suite%s\n",
                id, t->budget_s, unfetched, unfetched == 1 ? "" : "s");
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
    t.t0_ms = timeutil_now_ms();
    t.budget_s = timeout;
    if ((rc = start(&t, id)) != 0) return rc;
    printf("refresh %s started on %s\n", id, server);
    fflush(stdout);
    json_t *final;
    if ((rc = follow(&t, id, interval, &final)) != 0) return rc;
    rc = summary(&t, id, final);
    json_decref(final);
    return rc;
}
