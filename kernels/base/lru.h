/* lru.h -- a small least-recently-used cache: values kept under keys of
 * bytes, bounded by how many it holds and by the bytes they weigh, the
 * least recently used out first.
 *
 * A value is the cache's from lru_put() on: it frees it (free_value) when
 * the value leaves, by eviction, replacement, removal or lru_free(). A
 * value lru_get() hands out stays the cache's and is valid until the next
 * call that can make room or remove (lru_put, lru_remove, lru_set_limits,
 * lru_free): a caller that keeps it copies it first. A key is copied in.
 * The bytes a value weighs are the caller's figure (a mask's bytes, a
 * record's); keys are not counted.
 *
 * Not thread-safe, by design: a cache used by several threads belongs to an
 * owner that holds its own lock from lru_get() until it has copied what it
 * got (kernels/model/model/analysis.c's memo of masks); a cache of one
 * thread pays for no lock. Lookups and insertions are O(1) on average (a
 * hash table of the keys, FNV-1a, with a list in order of use).
 */
#ifndef DV_LRU_H
#define DV_LRU_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

struct lru;

/* No bound on the bytes (max_bytes of lru_create(), lru_set_limits()). */
#define LRU_UNBOUNDED ((size_t)-1)

/* Frees a value the cache holds; may be NULL (values need no freeing). */
typedef void (*lru_free_fn)(void *value);

/* A cache of at most `max_entries` values (0: it keeps none) weighing at
 * most `max_bytes` in all (LRU_UNBOUNDED: no bound); `free_value` frees
 * what leaves it. NULL when out of memory. */
struct lru *lru_create(size_t max_entries, size_t max_bytes, lru_free_fn free_value);

/* Frees every value and the cache; accepts NULL. */
void lru_free(struct lru *c);

/* The value under key[0..len), now the most recently used, or NULL when
 * the cache holds none (a miss). See the top for how long it is valid. */
void *lru_get(struct lru *c, const void *key, size_t len);

/* Keeps `value` (taking it, whatever the result) weighing `bytes` under a
 * copy of key[0..len), in place of the value the key held, as the most
 * recently used; the least recently used others leave until it fits both
 * bounds. Returns 1 when kept; 0 when it is not, and is freed at once: it
 * alone is over a bound, or there is no memory for its entry. */
int lru_put(struct lru *c, const void *key, size_t len, void *value, size_t bytes);

/* Frees the value under key[0..len): 1, or 0 when there is none. */
int lru_remove(struct lru *c, const void *key, size_t len);

/* New bounds (as lru_create()'s): the least recently used values leave
 * until the cache is within them. */
void lru_set_limits(struct lru *c, size_t max_entries, size_t max_bytes);

/* What the cache did since it was made (hits and misses of lru_get(),
 * values evicted to make room or by lower bounds, not replaced or removed
 * ones) and what it holds now. */
struct lru_stats {
    unsigned long long hits, misses, evictions;
    size_t entries, bytes;
    size_t max_entries, max_bytes;
};
void lru_get_stats(const struct lru *c, struct lru_stats *out);

#ifdef __cplusplus
}
#endif

#endif /* DV_LRU_H */
