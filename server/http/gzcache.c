/* gzcache.c -- see gzcache.h.
 *
 * The lru holds a pointer to each form and releases its reference when the
 * form leaves; a "being made" entry is a form with ready 0, replaced by the
 * made one (or removed when making failed).
 */
#include "server/http/gzcache.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "kernels/base/lru.h"

struct gzcache {
    pthread_mutex_t lock;
    struct lru *lru;
    struct gzcache_stats st;
};

static void form_free(void *v) { gzform_release(v); }

void gzform_release(struct gzform *f) {
    if (f && atomic_fetch_sub_explicit(&f->refs, 1, memory_order_acq_rel) == 1) free(f);
}

struct gzcache *gzcache_create(size_t entries, size_t bytes) {
    struct gzcache *c = calloc(1, sizeof *c);
    if (!c || !(c->lru = lru_create(entries, bytes, form_free))) {
        free(c);
        return NULL;
    }
    pthread_mutex_init(&c->lock, NULL);
    return c;
}

void gzcache_free(struct gzcache *c) {
    if (!c) return;
    lru_free(c->lru);
    pthread_mutex_destroy(&c->lock);
    free(c);
}

char *gzcache_compress(const char *data, size_t len, size_t *out_len) {
    z_stream z;
    memset(&z, 0, sizeof z);
    /* 15 window bits + 16: a gzip header and trailer, not zlib's. */
    if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) return NULL;
    uLong bound = deflateBound(&z, (uLong)len);
    char *out = malloc(bound);
    if (!out) {
        deflateEnd(&z);
        return NULL;
    }
    z.next_in = (Bytef *)data;
    z.avail_in = (uInt)len;
    z.next_out = (Bytef *)out;
    z.avail_out = (uInt)bound;
    int rc = deflate(&z, Z_FINISH);
    *out_len = z.total_out;
    deflateEnd(&z);
    if (rc != Z_STREAM_END) {
        free(out);
        return NULL;
    }
    return out;
}

/* A form of `len` bytes (copied from `gz`, or none: being made), one
 * reference held. */
static struct gzform *form_new(const char *gz, size_t len) {
    struct gzform *f = malloc(sizeof *f + len);
    if (!f) return NULL;
    atomic_init(&f->refs, 1);
    f->ready = gz != NULL;
    f->len = len;
    if (gz) memcpy(f->data, gz, len);
    return f;
}

/* Makes the form of data[0..len): ready 1, or ready 2 (no bytes) when it
 * would not be smaller, kept so that it is not tried again; NULL when out
 * of memory. */
static struct gzform *make(const char *data, size_t len) {
    size_t n = 0;
    char *gz = gzcache_compress(data, len, &n);
    struct gzform *f = !gz ? NULL : n < len ? form_new(gz, n) : form_new("", 0);
    if (f && n >= len) f->ready = 2;
    free(gz);
    return f;
}

struct gzform *gzcache_get(struct gzcache *c, const char *key, const char *data, size_t len,
                           char *(*read)(void *ctx, size_t *len), void *ctx) {
    size_t klen = strlen(key);
    pthread_mutex_lock(&c->lock);
    struct gzform *f = lru_get(c->lru, key, klen);
    if (f) {
        int ready = f->ready == 1;
        if (ready) {
            atomic_fetch_add_explicit(&f->refs, 1, memory_order_relaxed);
            c->st.hits++;
        }
        pthread_mutex_unlock(&c->lock);
        return ready ? f : NULL; /* being made (identity this once), or not worth it */
    }
    struct gzform *pending = form_new(NULL, 0);
    int claimed = pending && lru_put(c->lru, key, klen, pending, 0);
    c->st.compressions += claimed;
    pthread_mutex_unlock(&c->lock);
    if (!claimed) return NULL;
    char *owned = NULL;
    if (!data && read) data = owned = read(ctx, &len);
    f = data ? make(data, len) : NULL;
    free(owned);
    pthread_mutex_lock(&c->lock);
    /* Kept (a second reference for the caller), or the claim withdrawn;
     * an eviction of the claim meanwhile is harmless: put adds it again. */
    lru_remove(c->lru, key, klen);
    if (f) {
        atomic_fetch_add_explicit(&f->refs, 1, memory_order_relaxed);
        lru_put(c->lru, key, klen, f, f->len);
    }
    pthread_mutex_unlock(&c->lock);
    if (f && f->ready != 1) {
        gzform_release(f);
        f = NULL;
    }
    return f;
}

void gzcache_stats(struct gzcache *c, struct gzcache_stats *st) {
    pthread_mutex_lock(&c->lock);
    *st = c->st;
    pthread_mutex_unlock(&c->lock);
}
