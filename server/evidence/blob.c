/* blob.c -- see blob.h. */
#include "server/evidence/blob.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "kernels/base/fnv.h"

struct blob *blob_new_digest(char *data, size_t len, uint64_t digest, time_t mtime, enum evidence_kind kind,
                             enum evidence_fresh fresh) {
    struct blob *b = data ? malloc(sizeof *b) : NULL;
    if (!b) {
        free(data);
        return NULL;
    }
    b->data = data;
    b->len = len;
    b->mtime = mtime;
    b->digest = digest;
    b->kind = kind;
    b->fresh = fresh;
    atomic_init(&b->refs, 1);
    return b;
}

struct blob *blob_new(char *data, size_t len, time_t mtime, enum evidence_kind kind, enum evidence_fresh fresh) {
    return blob_new_digest(data, len, data ? fnv1a_64(FNV1A_64_OFFSET, data, len) : 0, mtime, kind, fresh);
}

struct blob *blob_ref(struct blob *b) {
    if (b) atomic_fetch_add_explicit(&b->refs, 1, memory_order_relaxed);
    return b;
}

void blob_release(struct blob *b) {
    if (!b || atomic_fetch_sub_explicit(&b->refs, 1, memory_order_acq_rel) != 1) return;
    free((char *)b->data);
    free(b);
}

void blob_error(struct evidence_error *e, enum evidence_code code, const char *fmt, ...) {
    if (!e) return;
    e->code = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->reason, sizeof e->reason, fmt, ap);
    va_end(ap);
}
