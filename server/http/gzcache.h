/* gzcache.h -- the gzip forms of what the service sends, made once and
 * kept: an evidence record, a drawn view, a history page, a static file, a
 * finished job's answer is compressed the first time a client asks for
 * gzip, and every later request is answered from here.
 *
 * Keys are the caller's and must name the bytes exactly (an evidence
 * blob's ETag, which is its content digest and length; a static file's
 * path with its size and mtime). The cache is kernels/base/lru.h's,
 * bounded by entries and by compressed bytes, the least recently used out
 * first; a form handed out is reference counted, so eviction never frees
 * one being sent.
 *
 * Exactly once: a miss puts a "being made" entry under the key before it
 * compresses (outside the lock); a request that finds it gets NULL and
 * answers with identity this once, rather than compressing the same bytes
 * again or waiting. So `compressions` counts each key once while it is
 * kept (the test and /metrics read it).
 *
 * Owner: the HTTP front (http.c), one per server. Lock: its own mutex, held
 * for lookups and insertions only, never while compressing. Threads: the
 * daemon's.
 */
#ifndef DV_GZCACHE_H
#define DV_GZCACHE_H

#include <stdatomic.h>
#include <stddef.h>

#define GZCACHE_ENTRIES 512
#define GZCACHE_BYTES (32u << 20)

struct gzcache;

/* A compressed form: `len` bytes of gzip at `data`. */
struct gzform {
    atomic_int refs; /* private: gzform_release() */
    int ready;       /* private: 0 being made, 1 made, 2 not smaller */
    size_t len;
    char data[];
};

struct gzcache_stats {
    unsigned long long compressions; /* forms made (each key once while kept) */
    unsigned long long hits;         /* requests answered from a kept form    */
};

/* A cache of at most `entries` forms and `bytes` compressed bytes. NULL
 * when out of memory. */
struct gzcache *gzcache_create(size_t entries, size_t bytes);
void gzcache_free(struct gzcache *c); /* NULL ok */

/* The gzip form of the bytes `key` names, a reference the caller releases:
 * kept, or made now from `data[0..len)` (or, when `data` is NULL, from what
 * `read(ctx, &len)` returns, malloc()ed, freed here: a file read only on a
 * miss). NULL when another request is making it now, when compression does
 * not make it smaller (remembered: not tried again), or out of memory:
 * then send identity. */
struct gzform *gzcache_get(struct gzcache *c, const char *key, const char *data, size_t len,
                           char *(*read)(void *ctx, size_t *len), void *ctx);

/* Drops a reference (NULL ok). */
void gzform_release(struct gzform *f);

/* gzip (RFC 1952) of data[0..len) at zlib's default level, malloc()ed, its
 * length in *out_len. NULL when out of memory or zlib fails. */
char *gzcache_compress(const char *data, size_t len, size_t *out_len);

void gzcache_stats(struct gzcache *c, struct gzcache_stats *st);

#endif /* DV_GZCACHE_H */
