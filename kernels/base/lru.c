/* lru.c -- a least-recently-used cache (lru.h).
 *
 * Each entry is one allocation, its key copied after it, on two lists: the
 * chain of its hash bucket and the list of every entry in order of use
 * (head: the most recently used, tail: the next to leave). The bucket
 * array doubles when the entries outnumber the buckets, so chains stay
 * short; it never shrinks (a cache's bound keeps it small).
 */
#include "kernels/base/lru.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/base/fnv.h"

struct entry {
    struct entry *next_in_bucket;
    struct entry *newer, *older; /* the order of use */
    uint64_t hash;
    void *value;
    size_t bytes, len;
    unsigned char key[]; /* len bytes */
};

struct lru {
    struct entry **buckets;
    size_t nbuckets; /* a power of two */
    struct entry *newest, *oldest;
    size_t entries, bytes, max_entries, max_bytes;
    lru_free_fn free_value;
    unsigned long long hits, misses, evictions;
};

#define LRU_FIRST_BUCKETS 16u

struct lru *lru_create(size_t max_entries, size_t max_bytes, lru_free_fn free_value) {
    struct lru *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    c->nbuckets = LRU_FIRST_BUCKETS;
    if (!(c->buckets = calloc(c->nbuckets, sizeof *c->buckets))) {
        free(c);
        return NULL;
    }
    c->max_entries = max_entries;
    c->max_bytes = max_bytes;
    c->free_value = free_value;
    return c;
}

static void drop_value(const struct lru *c, void *value) {
    if (c->free_value && value) c->free_value(value);
}

/* The slot that points at the entry of `key` (or at the NULL ending its
 * bucket's chain when there is none). */
static struct entry **slot_of(const struct lru *c, uint64_t hash, const void *key, size_t len) {
    struct entry **p = &c->buckets[hash & (c->nbuckets - 1)];
    while (*p && !((*p)->hash == hash && (*p)->len == len && memcmp((*p)->key, key, len) == 0))
        p = &(*p)->next_in_bucket;
    return p;
}

static void unlink_use(struct lru *c, struct entry *e) {
    if (e->newer) e->newer->older = e->older;
    else c->newest = e->older;
    if (e->older) e->older->newer = e->newer;
    else c->oldest = e->newer;
    e->newer = e->older = NULL;
}

static void link_newest(struct lru *c, struct entry *e) {
    e->older = c->newest;
    e->newer = NULL;
    if (c->newest) c->newest->newer = e;
    c->newest = e;
    if (!c->oldest) c->oldest = e;
}

/* Takes `e` out of the cache and frees it with its value. */
static void destroy(struct lru *c, struct entry *e) {
    struct entry **p = slot_of(c, e->hash, e->key, e->len);
    *p = e->next_in_bucket;
    unlink_use(c, e);
    c->entries--;
    c->bytes -= e->bytes;
    drop_value(c, e->value);
    free(e);
}

/* The least recently used entries out until `entries` more entries
 * weighing `bytes` fit the bounds. */
static void make_room(struct lru *c, size_t entries, size_t bytes) {
    while (c->oldest && (c->entries + entries > c->max_entries ||
                         (c->max_bytes != LRU_UNBOUNDED && c->bytes + bytes > c->max_bytes))) {
        destroy(c, c->oldest);
        c->evictions++;
    }
}

/* Doubles the bucket array (nothing happens when there is no memory for it:
 * the chains grow longer, the answers stay right). */
static void grow(struct lru *c) {
    const size_t n = c->nbuckets * 2;
    struct entry **b = calloc(n, sizeof *b);
    if (!b) return;
    for (size_t i = 0; i < c->nbuckets; i++)
        for (struct entry *e = c->buckets[i], *next; e; e = next) {
            next = e->next_in_bucket;
            e->next_in_bucket = b[e->hash & (n - 1)];
            b[e->hash & (n - 1)] = e;
        }
    free(c->buckets);
    c->buckets = b;
    c->nbuckets = n;
}

void lru_free(struct lru *c) {
    if (!c) return;
    while (c->oldest) destroy(c, c->oldest);
    free(c->buckets);
    free(c);
}

void *lru_get(struct lru *c, const void *key, size_t len) {
    struct entry *e = *slot_of(c, fnv1a_64(FNV1A_64_OFFSET, key, len), key, len);
    if (!e) {
        c->misses++;
        return NULL;
    }
    c->hits++;
    unlink_use(c, e);
    link_newest(c, e);
    return e->value;
}

int lru_put(struct lru *c, const void *key, size_t len, void *value, size_t bytes) {
    const uint64_t hash = fnv1a_64(FNV1A_64_OFFSET, key, len);
    struct entry *old = *slot_of(c, hash, key, len);
    if (old) destroy(c, old); /* replaced: not an eviction */
    if (c->max_entries == 0 || (c->max_bytes != LRU_UNBOUNDED && bytes > c->max_bytes)) {
        drop_value(c, value);
        return 0;
    }
    struct entry *e = malloc(sizeof *e + len);
    if (!e) {
        drop_value(c, value);
        return 0;
    }
    make_room(c, 1, bytes);
    if (c->entries + 1 > c->nbuckets) grow(c);
    e->hash = hash;
    e->value = value;
    e->bytes = bytes;
    e->len = len;
    memcpy(e->key, key, len);
    struct entry **b = &c->buckets[hash & (c->nbuckets - 1)];
    e->next_in_bucket = *b;
    *b = e;
    link_newest(c, e);
    c->entries++;
    c->bytes += bytes;
    return 1;
}

int lru_remove(struct lru *c, const void *key, size_t len) {
    struct entry *e = *slot_of(c, fnv1a_64(FNV1A_64_OFFSET, key, len), key, len);
    if (!e) return 0;
    destroy(c, e);
    return 1;
}

void lru_set_limits(struct lru *c, size_t max_entries, size_t max_bytes) {
    c->max_entries = max_entries;
    c->max_bytes = max_bytes;
    make_room(c, 0, 0);
}

void lru_get_stats(const struct lru *c, struct lru_stats *out) {
    out->hits = c->hits;
    out->misses = c->misses;
    out->evictions = c->evictions;
    out->entries = c->entries;
    out->bytes = c->bytes;
    out->max_entries = c->max_entries;
    out->max_bytes = c->max_bytes;
}
