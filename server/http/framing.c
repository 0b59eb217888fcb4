/* framing.c -- see framing.h. Each rule is a check on counts and on the
 * text of one value; the values are copied only as far as the verdict needs
 * them (the first Transfer-Encoding), so feeding a header costs nothing
 * that grows with the request. */
#define _GNU_SOURCE
#include "server/http/framing.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

enum framing_target_fault framing_target(const char *uri, unsigned max_args, char *why, size_t len) {
    const char *q = strchr(uri, '?');
    size_t plen = q ? (size_t)(q - uri) : strlen(uri);
    for (size_t i = 0; i + 3 <= plen; i++)
        if (uri[i] == '%' && uri[i + 1] == '0' && uri[i + 2] == '0') {
            snprintf(why, len, "the path contains an encoded NUL (%%00)");
            return FRAMING_TARGET_NUL;
        }
    if (!q) return FRAMING_TARGET_OK;
    unsigned args = 1;
    for (const char *p = q + 1; *p; p++) args += *p == '&';
    if (args <= max_args) return FRAMING_TARGET_OK;
    snprintf(why, len, "%u query arguments; at most %u are allowed", args, max_args);
    return FRAMING_TARGET_ARGS;
}

void framing_init(struct framing *f) { memset(f, 0, sizeof *f); }

/* A Content-Length must be digits, with optional blanks around them: a
 * sign, a hex prefix or a list ("2, 2") would be read one way here and
 * another way by a proxy in front. */
static int digits_only(const char *v) {
    const char *p = v;
    while (*p == ' ' || *p == '\t') p++;
    if (!*p) return 0;
    for (; *p && *p != ' ' && *p != '\t'; p++)
        if (*p < '0' || *p > '9') return 0;
    while (*p == ' ' || *p == '\t') p++;
    return *p == '\0';
}

void framing_header(struct framing *f, const char *name, const char *value) {
    if (!value) value = "";
    if (strcasecmp(name, "Content-Length") == 0) {
        f->content_length++;
        if (!digits_only(value)) f->cl_bad = 1;
    } else if (strcasecmp(name, "Transfer-Encoding") == 0) {
        if (f->transfer_encoding++ == 0) snprintf(f->te, sizeof f->te, "%s", value);
    } else if (strcasecmp(name, "Host") == 0) {
        f->host++;
    }
}

int framing_verdict(const struct framing *f, int http11, char *why, size_t len) {
    if (f->content_length > 1) {
        snprintf(why, len, "more than one Content-Length header");
        return 400;
    }
    if (f->cl_bad) {
        snprintf(why, len, "Content-Length must be a decimal number of bytes");
        return 400;
    }
    if (f->transfer_encoding && f->content_length) {
        snprintf(why, len, "Content-Length together with Transfer-Encoding");
        return 400;
    }
    if (f->transfer_encoding) {
        if (!http11) {
            snprintf(why, len, "Transfer-Encoding in an HTTP/1.0 request");
            return 400;
        }
        const char *t = f->te;
        while (*t == ' ' || *t == '\t') t++;
        size_t n = strlen(t);
        while (n && (t[n - 1] == ' ' || t[n - 1] == '\t')) n--;
        if (f->transfer_encoding > 1 || n != 7 || strncasecmp(t, "chunked", 7) != 0) {
            snprintf(why, len, "transfer coding '%.60s' is not implemented (only chunked)", f->te);
            return 501;
        }
    }
    if (http11 && f->host != 1) {
        snprintf(why, len, f->host ? "more than one Host header" : "an HTTP/1.1 request needs a Host header");
        return 400;
    }
    return 0;
}
