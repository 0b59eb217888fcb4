/* fileio.c -- streams read whole and files written whole (fileio.h). */
#define _GNU_SOURCE
#include "server/jobs/fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernels/base/status.h"

char *fileio_read(FILE *f, size_t *len) {
    size_t cap = 4096, n = 0, r;
    char *buf = malloc(cap);
    while (buf && (r = fread(buf + n, 1, cap - n - 1, f)) > 0) {
        n += r;
        if (cap - n < 2) {
            char *b = realloc(buf, cap * 2);
            if (!b) {
                free(buf);
                return NULL;
            }
            buf = b;
            cap *= 2;
        }
    }
    if (buf) buf[n] = '\0';
    *len = n;
    return buf;
}

int fileio_write(const char *path, const void *data, size_t n, char *err) {
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) {
        dv_seterr(err, "%s: %s", path, strerror(errno));
        return -1;
    }
    size_t done = 0;
    while (done < n) {
        ssize_t w = write(fd, (const char *)data + done, n - done);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            dv_seterr(err, "writing %s: %s", path, strerror(errno));
            close(fd);
            unlink(path);
            return -1;
        }
        done += (size_t)w;
    }
    if (close(fd) != 0) {
        dv_seterr(err, "closing %s: %s", path, strerror(errno));
        unlink(path);
        return -1;
    }
    return 0;
}
