/* wire.c -- length-prefixed JSON frames over pipes, and the messages they
 * carry (see wire.h).
 *
 * Reads poll() before every read so a deadline bounds the whole frame, not
 * each chunk; a frame that stops halfway is a protocol error, and the
 * supervisor treats it like a crash. Each message is one object built with
 * jsonout_put(), so an id or a reason holding a quote or bytes that are not
 * UTF-8 still makes a frame the other end reads, and a failed allocation
 * makes no frame rather than half of one. */
#define _GNU_SOURCE
#include "kernels/base/timeutil.h"
#include "api/jsonout.h"
#include "server/jobs/wire.h"
#include "api/report.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int write_all(int fd, const void *buf, size_t len, char *err) {
    const char *p = buf;
    while (len > 0) {
        ssize_t w = write(fd, p, len);
        if (w < 0) {
            if (errno == EINTR) continue;
            dv_seterr(err, "wire: write: %s", strerror(errno));
            return -1;
        }
        p += w;
        len -= (size_t)w;
    }
    return 0;
}

int wire_write(int fd, const char *msg, size_t len, char *err) {
    if (len > WIRE_MAX_MESSAGE) {
        dv_seterr(err, "wire: message of %zu bytes exceeds the %u byte limit", len, WIRE_MAX_MESSAGE);
        return -1;
    }
    unsigned char hdr[4] = {(unsigned char)(len >> 24), (unsigned char)(len >> 16),
                            (unsigned char)(len >> 8), (unsigned char)len};
    if (write_all(fd, hdr, 4, err) < 0) return -1;
    return write_all(fd, msg, len, err);
}

/* Reads exactly `len` bytes before `deadline` (ms, -1 none). Returns WIRE_OK,
 * WIRE_EOF when nothing at all was read and the peer closed, WIRE_TIMEOUT or
 * WIRE_ERROR. */
static enum wire_status read_exact(int fd, void *buf, size_t len, long long deadline, int *got_any, char *err) {
    char *p = buf;
    size_t done = 0;
    while (done < len) {
        int wait = -1;
        if (deadline >= 0) {
            long long left = deadline - ((long long)timeutil_now_ms());
            if (left <= 0) return WIRE_TIMEOUT;
            wait = left > 1000000 ? 1000000 : (int)left;
        }
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        int pr = poll(&pfd, 1, wait);
        if (pr < 0) {
            if (errno == EINTR) continue;
            dv_seterr(err, "wire: poll: %s", strerror(errno));
            return WIRE_ERROR;
        }
        if (pr == 0) continue; /* deadline re-checked above */
        ssize_t r = read(fd, p + done, len - done);
        if (r < 0) {
            if (errno == EINTR || errno == EAGAIN) continue;
            dv_seterr(err, "wire: read: %s", strerror(errno));
            return WIRE_ERROR;
        }
        if (r == 0) {
            if (!*got_any) return WIRE_EOF;
            dv_seterr(err, "wire: peer closed in the middle of a message");
            return WIRE_ERROR;
        }
        *got_any = 1;
        done += (size_t)r;
    }
    return WIRE_OK;
}

enum wire_status wire_read(int fd, char **msg, size_t *len, int timeout_ms, char *err) {
    long long deadline = timeout_ms < 0 ? -1 : ((long long)timeutil_now_ms()) + timeout_ms;
    unsigned char hdr[4];
    int got_any = 0;
    *msg = NULL;
    *len = 0;
    enum wire_status rc = read_exact(fd, hdr, 4, deadline, &got_any, err);
    if (rc != WIRE_OK) return rc;
    size_t n = ((size_t)hdr[0] << 24) | ((size_t)hdr[1] << 16) | ((size_t)hdr[2] << 8) | hdr[3];
    if (n > WIRE_MAX_MESSAGE) {
        dv_seterr(err, "wire: frame of %zu bytes exceeds the %u byte limit", n, WIRE_MAX_MESSAGE);
        return WIRE_ERROR;
    }
    char *buf = malloc(n + 1);
    if (!buf) {
        dv_seterr(err, "wire: out of memory for a %zu byte frame", n);
        return WIRE_ERROR;
    }
    rc = read_exact(fd, buf, n, deadline, &got_any, err);
    if (rc != WIRE_OK) {
        free(buf);
        if (rc == WIRE_EOF) {
            dv_seterr(err, "wire: peer closed in the middle of a message");
            rc = WIRE_ERROR;
        }
        return rc;
    }
    buf[n] = '\0';
    *msg = buf;
    *len = n;
    return WIRE_OK;
}

/* ---- the messages ------------------------------------------------------------ */

/* The text of `o` (freed here) when it and all put in it were built (`bad`
 * clear), with the reals' precision `precision` (0: jsonout_dumps()'s
 * choice), else NULL. */
static char *message(json_t *o, int bad, int precision) {
    char *s = NULL;
    if (!bad)
        s = precision ? jsonout_dumpf(o, JSON_COMPACT | JSON_REAL_PRECISION(precision))
                      : jsonout_dumps(o, JSON_COMPACT);
    json_decref(o);
    return s;
}

char *wire_hello(json_t *device, const struct wire_warm *warm) {
    int bad = 0;
    json_t *o = json_object();
    jsonout_put(o, "hello", json_integer(1), &bad);
    jsonout_put(o, "pid", json_integer((json_int_t)getpid()), &bad);
    jsonout_put(o, "device", device, &bad);
    if (warm && warm->kind && warm->kind[0] && warm->run_ms > 0 && isfinite(warm->run_ms)) {
        json_t *w = json_object();
        jsonout_put(w, "kind", jsonout_str(warm->kind), &bad);
        jsonout_put(w, "run_ms", json_real(warm->run_ms), &bad);
        jsonout_put(o, "warm", w, &bad);
    }
    return message(o, bad, 0);
}

char *wire_job(const char *id, json_t *request) {
    int bad = 0;
    json_t *o = json_object();
    jsonout_put(o, "id", jsonout_str(id), &bad);
    jsonout_put(o, "kind", jsonout_str("measure"), &bad);
    jsonout_put(o, "request", request, &bad);
    return message(o, bad, 0);
}

/* [{"id": ids[i], "request": requests[i]}...] for the `n` jobs (the
 * requests taken); a failure sets *bad. */
static json_t *jobs_array(const char *const *ids, json_t **requests, unsigned n, int *bad) {
    json_t *jobs = json_array();
    for (unsigned i = 0; i < n; i++) {
        json_t *j = json_object();
        jsonout_put(j, "id", jsonout_str(ids[i]), bad);
        jsonout_put(j, "request", requests[i], bad);
        jsonout_append(jobs, j, bad);
    }
    return jobs;
}

char *wire_batch(const char *const *ids, json_t **requests, unsigned n) {
    int bad = 0;
    json_t *o = json_object(), *jobs = jobs_array(ids, requests, n, &bad);
    jsonout_put(o, "kind", jsonout_str("batch"), &bad);
    jsonout_put(o, "jobs", jobs, &bad);
    return message(o, bad || n == 0, 0);
}

char *wire_groups(const char *const *ids, json_t **requests, const unsigned *sizes, unsigned ngroups) {
    int bad = ngroups == 0;
    json_t *o = json_object(), *groups = json_array();
    for (unsigned g = 0, at = 0; g < ngroups; at += sizes[g++]) {
        bad |= sizes[g] == 0;
        jsonout_append(groups, jobs_array(ids + at, requests + at, sizes[g], &bad), &bad);
    }
    jsonout_put(o, "kind", jsonout_str("groups"), &bad);
    jsonout_put(o, "groups", groups, &bad);
    return message(o, bad, 0);
}

char *wire_reply_ok(const char *id, double gpu_ms, double testimony_ms, int exiting, json_t *document) {
    int bad = 0;
    json_t *o = json_object();
    jsonout_put(o, "id", jsonout_str(id), &bad);
    jsonout_put(o, "ok", json_true(), &bad);
    /* Sums of measured times: a NaN would be a bug, written as 0 as before. */
    jsonout_put(o, "gpu_time_ms", json_real(gpu_ms == gpu_ms ? gpu_ms : 0.0), &bad);
    jsonout_put(o, "testimony_ms", json_real(testimony_ms == testimony_ms ? testimony_ms : 0.0), &bad);
    if (exiting) jsonout_put(o, "exiting", json_true(), &bad);
    jsonout_put(o, "document", document, &bad);
    return message(o, bad, REPORT_REAL_PRECISION);
}

char *wire_reply_error(const char *id, int code, const char *error, json_t *document, double testimony_ms) {
    int bad = 0;
    json_t *o = json_object();
    jsonout_put(o, "id", jsonout_str(id), &bad);
    jsonout_put(o, "ok", json_false(), &bad);
    jsonout_put(o, "code", json_integer(code), &bad);
    jsonout_put(o, "error", jsonout_str(error), &bad);
    if (document) {
        jsonout_put(o, "document", document, &bad);
        if (testimony_ms >= 0) jsonout_put(o, "testimony_ms", json_real(testimony_ms), &bad);
    }
    return message(o, bad, REPORT_REAL_PRECISION);
}

int wire_send(int fd, char *msg, char *err) {
    if (!msg) {
        dv_seterr(err, "wire: the message could not be built (out of memory)");
        return -1;
    }
    int rc = wire_write(fd, msg, strlen(msg), err);
    free(msg);
    return rc;
}
