/* strbuf.c -- see strbuf.h. Doubling growth from 1 KiB: a report's text is
 * a few KiB, its chart under 20 KiB. */
#include "api/strbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int reserve(struct strbuf *b, size_t extra) {
    if (b->oom) return -1;
    if (b->len + extra + 1 <= b->cap) return 0;
    size_t cap = b->cap ? b->cap : 1024;
    while (cap < b->len + extra + 1) cap *= 2;
    char *s = realloc(b->s, cap);
    if (!s) {
        b->oom = 1;
        return -1;
    }
    b->s = s;
    b->cap = cap;
    return 0;
}

void strbuf_append(struct strbuf *b, const char *s, size_t n) {
    if (reserve(b, n) != 0) return;
    memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = '\0';
}

void strbuf_printf(struct strbuf *b, const char *fmt, ...) {
    va_list ap;
    if (b->oom) return;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->oom = 1;
        return;
    }
    if (reserve(b, (size_t)n) != 0) return;
    va_start(ap, fmt);
    vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

char *strbuf_take(struct strbuf *b) {
    char *s = b->oom ? NULL : b->s;
    if (b->oom) free(b->s);
    else if (!s && (s = malloc(1))) s[0] = '\0';
    b->s = NULL;
    b->len = b->cap = 0;
    b->oom = 0;
    return s;
}
