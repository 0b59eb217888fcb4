/* wire.c -- length-prefixed JSON frames over pipes (see wire.h).
 *
 * Reads poll() before every read so a deadline bounds the whole frame, not
 * each chunk; a frame that stops halfway is a protocol error, and the
 * supervisor treats it like a crash. */
#define _GNU_SOURCE
#include "kernels/base/timeutil.h"
#include "api/jsonout.h"
#include "server/jobs/wire.h"
#include "api/report.h"

#include <errno.h>
#include <jansson.h>
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

char *wire_device_json(const struct dv_device *d) {
    /* One writer for the device block: the same fields and formats as the
     * divergence.v1 document's `device`. It uses jansson on its own, where
     * a failed allocation may cut the text short: only the count shows. */
    unsigned long failures = jsonout_failures();
    char *text = report_device_json(d);
    if (text && jsonout_failures() != failures) {
        free(text);
        text = NULL;
    }
    return text;
}
