/* ids.c -- random identifiers from getrandom(2) (ids.h). */
#define _GNU_SOURCE
#include "kernels/base/ids.h"

#include <errno.h>
#include <string.h>
#include <sys/random.h>

#include "kernels/base/status.h"

int ids_random_hex(const char *prefix, size_t nbytes, char *out, size_t len, char *err) {
    unsigned char b[64];
    size_t plen = prefix ? strlen(prefix) : 0;
    if (nbytes == 0 || nbytes > sizeof b || len < plen + 2 * nbytes + 1) {
        dv_seterr(err, "ids: a buffer of %zu bytes cannot hold %zu random bytes", len, nbytes);
        return -1;
    }
    for (size_t got = 0; got < nbytes;) {
        ssize_t r = getrandom(b + got, nbytes - got, 0);
        if (r < 0) {
            if (errno == EINTR) continue;
            dv_seterr(err, "ids: getrandom: %s", strerror(errno));
            return -1;
        }
        got += (size_t)r;
    }
    static const char hex[] = "0123456789abcdef";
    memcpy(out, prefix ? prefix : "", plen);
    for (size_t i = 0; i < nbytes; i++) {
        out[plen + 2 * i] = hex[b[i] >> 4];
        out[plen + 2 * i + 1] = hex[b[i] & 15];
    }
    out[plen + 2 * nbytes] = '\0';
    return 0;
}
