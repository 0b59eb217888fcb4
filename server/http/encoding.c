/* encoding.c -- see encoding.h.
 *
 * Accept-Encoding is walked once, member by member: `coding [; q=value]`,
 * with optional white space; the q-values of gzip (and its alias x-gzip),
 * identity and "*" are kept, and the choice is made from the three.
 */
#include "server/http/encoding.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

/* A q-value (RFC 9110 12.4.2: "0", "0.xxx", "1", "1.000") at p[0..n) in
 * thousandths, or -1 when it is not one. */
static int qvalue(const char *p, size_t n) {
    if (n == 0 || (p[0] != '0' && p[0] != '1')) return -1;
    int v = (p[0] - '0') * 1000;
    if (n == 1) return v;
    if (p[1] != '.' || n > 5) return -1;
    int scale = 100;
    for (size_t i = 2; i < n; i++, scale /= 10) {
        if (p[i] < '0' || p[i] > '9') return -1;
        v += (p[i] - '0') * scale;
    }
    return v <= 1000 ? v : -1;
}

static const char *skip_ows(const char *p) {
    while (*p == ' ' || *p == '\t') p++;
    return p;
}

/* The q-value of member m[0..n) ("gzip;q=0.5": 500; "gzip": 1000; -1 when
 * unreadable) and the length of its coding name into *name_len. */
static int member_q(const char *m, size_t n, size_t *name_len) {
    size_t i = 0;
    while (i < n && m[i] != ';' && m[i] != ' ' && m[i] != '\t') i++;
    *name_len = i;
    int q = 1000;
    while (i < n) { /* parameters: only q is known; others are ignored */
        const char *p = skip_ows(m + i);
        if (p >= m + n) break;
        if (*p != ';') return -1;
        p = skip_ows(p + 1);
        const char *end = memchr(p, ';', (size_t)(m + n - p));
        if (!end) end = m + n;
        size_t len = (size_t)(end - p);
        while (len && (p[len - 1] == ' ' || p[len - 1] == '\t')) len--;
        if (len >= 2 && (p[0] == 'q' || p[0] == 'Q') && p[1] == '=') q = qvalue(p + 2, len - 2);
        if (q < 0) return -1;
        i = (size_t)(end - m);
    }
    return q;
}

static int named(const char *m, size_t n, const char *name) {
    return n == strlen(name) && strncasecmp(m, name, n) == 0;
}

enum encoding encoding_choose(const char *accept) {
    if (!accept) return ENCODING_IDENTITY;
    int gz = -1, id = -1, star = -1; /* -1: not listed */
    for (const char *p = accept; *p;) {
        p = skip_ows(p);
        const char *end = strchr(p, ',');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        size_t name_len;
        int q = n ? member_q(p, n, &name_len) : -1;
        if (q >= 0) {
            if (named(p, name_len, "gzip") || named(p, name_len, "x-gzip")) gz = q > gz ? q : gz;
            else if (named(p, name_len, "identity")) id = q;
            else if (named(p, name_len, "*")) star = q;
        }
        p += n;
        if (*p == ',') p++;
    }
    if (gz < 0) gz = star >= 0 ? star : 0;
    /* identity unlisted: acceptable, and preferred to nothing listed */
    if (id < 0) id = star >= 0 ? star : 0;
    return gz > 0 && gz >= id ? ENCODING_GZIP : ENCODING_IDENTITY;
}

int encoding_compressible(const char *content_type, size_t len) {
    static const char *const types[] = {"text/", "application/json", "application/yaml", "application/javascript",
                                        "image/svg+xml"};
    if (!content_type || len < ENCODING_MIN_BYTES) return 0;
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        if (strncasecmp(content_type, types[i], strlen(types[i])) == 0) return 1;
    return 0;
}

int encoding_etag(const char *etag, enum encoding enc, char *out) {
    out[0] = '\0';
    size_t n = etag ? strlen(etag) : 0;
    size_t w = etag && strncmp(etag, "W/", 2) == 0 ? 2 : 0;
    if (n < w + 2 || etag[w] != '"' || etag[n - 1] != '"' || n + 4 > ENCODING_ETAG_LEN) return -1;
    if (enc == ENCODING_IDENTITY) memcpy(out, etag, n + 1);
    else snprintf(out, ENCODING_ETAG_LEN, "%.*s-gz\"", (int)(n - 1), etag);
    return 0;
}
