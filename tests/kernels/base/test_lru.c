/* test_lru.c -- the least-recently-used cache: what comes back, what leaves
 * first and when, who frees what, and keys as bytes.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/base/lru.h"

/* Values are small integers boxed on the heap; the free function records
 * the order values leave in. */
static int freed[64];
static unsigned nfreed;

static void record_free(void *v) {
    if (nfreed < 64) freed[nfreed] = *(int *)v;
    nfreed++;
    free(v);
}

static void *box(int n) {
    int *p = malloc(sizeof *p);
    cr_assert_not_null(p);
    *p = n;
    return p;
}

static int got(struct lru *c, const char *key) {
    int *v = lru_get(c, key, strlen(key));
    return v ? *v : -1;
}

static void put(struct lru *c, const char *key, int n, size_t bytes) { lru_put(c, key, strlen(key), box(n), bytes); }

static void reset_frees(void) { nfreed = 0; }

Test(lru, gets_what_was_put_and_misses_the_rest) {
    reset_frees();
    struct lru *c = lru_create(8, LRU_UNBOUNDED, record_free);
    cr_assert_not_null(c);
    put(c, "a", 1, 0);
    put(c, "b", 2, 0);
    cr_expect_eq(got(c, "a"), 1);
    cr_expect_eq(got(c, "b"), 2);
    cr_expect_eq(got(c, "c"), -1);
    struct lru_stats s;
    lru_get_stats(c, &s);
    cr_expect_eq(s.hits, 2);
    cr_expect_eq(s.misses, 1);
    cr_expect_eq(s.entries, 2);
    cr_expect_eq(nfreed, 0, "nothing left the cache");
    lru_free(c);
    cr_expect_eq(nfreed, 2, "lru_free frees every value");
    lru_free(NULL);
}

/* Four entries at most: each put past the bound evicts the least recently
 * used, and a get makes its entry the most recently used. */
Test(lru, the_least_recently_used_leaves_first) {
    reset_frees();
    struct lru *c = lru_create(4, LRU_UNBOUNDED, record_free);
    put(c, "a", 1, 0);
    put(c, "b", 2, 0);
    put(c, "c", 3, 0);
    put(c, "d", 4, 0);
    cr_expect_eq(got(c, "a"), 1); /* order of use, oldest first: b c d a */
    put(c, "e", 5, 0);            /* b leaves */
    cr_expect_eq(got(c, "c"), 3); /* d a e c */
    put(c, "f", 6, 0);            /* d leaves */
    put(c, "g", 7, 0);            /* a leaves */
    cr_assert_eq(nfreed, 3);
    cr_expect_eq(freed[0], 2);
    cr_expect_eq(freed[1], 4);
    cr_expect_eq(freed[2], 1);
    cr_expect_eq(got(c, "b"), -1);
    cr_expect_eq(got(c, "e"), 5);
    cr_expect_eq(got(c, "c"), 3);
    cr_expect_eq(got(c, "f"), 6);
    cr_expect_eq(got(c, "g"), 7);
    struct lru_stats s;
    lru_get_stats(c, &s);
    cr_expect_eq(s.evictions, 3);
    cr_expect_eq(s.entries, 4);
    lru_free(c);
}

/* A bound of bytes: a put evicts the oldest until the new value fits; a
 * value over the bound alone is not kept and is freed at once. */
Test(lru, a_byte_bound_evicts_until_the_new_value_fits) {
    reset_frees();
    struct lru *c = lru_create(100, 10, record_free);
    put(c, "a", 1, 4);
    put(c, "b", 2, 4);
    put(c, "c", 3, 4); /* 12 > 10: a leaves */
    cr_expect_eq(got(c, "a"), -1);
    cr_expect_eq(got(c, "b"), 2);
    put(c, "d", 4, 6); /* c, now the least recently used, leaves; b and d fit */
    struct lru_stats s;
    lru_get_stats(c, &s);
    cr_expect_leq(s.bytes, 10);
    cr_expect_eq(s.bytes, 10, "b (4) and d (6)");
    cr_expect_eq(got(c, "c"), -1);
    cr_expect_eq(got(c, "b"), 2);
    const unsigned before = nfreed;
    cr_expect_eq(lru_put(c, "big", 3, box(99), 11), 0, "over the bound alone");
    cr_expect_eq(nfreed, before + 1);
    cr_expect_eq(freed[before], 99, "freed at once");
    cr_expect_eq(got(c, "b"), 2, "and nothing evicted for it");
    cr_expect_eq(got(c, "d"), 4);
    lru_free(c);
}

/* Putting a key again replaces its value (freed, not counted as an
 * eviction) and its weight; removing frees it. */
Test(lru, a_key_put_again_replaces_its_value) {
    reset_frees();
    struct lru *c = lru_create(4, 100, record_free);
    put(c, "a", 1, 10);
    put(c, "a", 2, 30);
    cr_expect_eq(got(c, "a"), 2);
    cr_expect_eq(nfreed, 1);
    cr_expect_eq(freed[0], 1);
    struct lru_stats s;
    lru_get_stats(c, &s);
    cr_expect_eq(s.entries, 1);
    cr_expect_eq(s.bytes, 30);
    cr_expect_eq(s.evictions, 0);
    cr_expect_eq(lru_remove(c, "a", 1), 1);
    cr_expect_eq(lru_remove(c, "a", 1), 0);
    cr_expect_eq(nfreed, 2);
    lru_get_stats(c, &s);
    cr_expect_eq(s.entries, 0);
    cr_expect_eq(s.bytes, 0);
    lru_free(c);
}

/* Lower bounds evict least recently used first; a bound of no entries
 * keeps nothing. */
Test(lru, lower_bounds_evict_the_oldest_first) {
    reset_frees();
    struct lru *c = lru_create(8, LRU_UNBOUNDED, record_free);
    for (int i = 0; i < 6; i++) {
        char k[8];
        snprintf(k, sizeof k, "k%d", i);
        put(c, k, i, 1);
    }
    cr_expect_eq(got(c, "k0"), 0); /* k1 k2 k3 k4 k5 k0 */
    lru_set_limits(c, 8, 3);
    cr_assert_eq(nfreed, 3);
    cr_expect_eq(freed[0], 1);
    cr_expect_eq(freed[1], 2);
    cr_expect_eq(freed[2], 3);
    lru_set_limits(c, 0, LRU_UNBOUNDED);
    cr_expect_eq(nfreed, 6);
    cr_expect_eq(lru_put(c, "x", 1, box(7), 0), 0, "no entry fits");
    cr_expect_eq(got(c, "x"), -1);
    lru_free(c);
}

/* Keys are bytes: a zero byte inside, a prefix, a different length are
 * other keys; the key is copied, so the caller's buffer is the caller's. */
Test(lru, keys_are_bytes_and_copied) {
    struct lru *c = lru_create(8, LRU_UNBOUNDED, free);
    unsigned char k1[4] = {1, 0, 2, 0}, k2[4] = {1, 0, 3, 0};
    cr_assert_eq(lru_put(c, k1, 4, box(1), 0), 1);
    cr_assert_eq(lru_put(c, k2, 4, box(2), 0), 1);
    cr_assert_eq(lru_put(c, k1, 2, box(3), 0), 1);
    k1[2] = 9; /* the cache's copy is unchanged */
    const unsigned char again[4] = {1, 0, 2, 0};
    cr_expect_eq(*(int *)lru_get(c, again, 4), 1);
    cr_expect_eq(*(int *)lru_get(c, k2, 4), 2);
    cr_expect_eq(*(int *)lru_get(c, again, 2), 3);
    cr_expect_null(lru_get(c, again, 3));
    cr_expect_null(lru_get(c, "", 0));
    lru_free(c);
}

/* Many entries: every one comes back (the table grows), the order holds. */
Test(lru, a_thousand_entries_come_back) {
    struct lru *c = lru_create(1000, LRU_UNBOUNDED, NULL); /* values need no freeing */
    static int values[1001];
    char k[16];
    for (int i = 0; i < 1000; i++) {
        values[i] = i;
        snprintf(k, sizeof k, "key %d", i);
        cr_assert_eq(lru_put(c, k, strlen(k), &values[i], 0), 1);
    }
    for (int i = 0; i < 1000; i++) {
        snprintf(k, sizeof k, "key %d", i);
        int *v = lru_get(c, k, strlen(k));
        cr_assert(v && *v == i, "key %d", i);
    }
    values[1000] = 1000;
    cr_assert_eq(lru_put(c, "key 1000", 8, &values[1000], 0), 1);
    cr_expect_null(lru_get(c, "key 0", 5), "the first one got is the first to leave");
    cr_expect_not_null(lru_get(c, "key 1", 5));
    struct lru_stats s;
    lru_get_stats(c, &s);
    cr_expect_eq(s.entries, 1000);
    cr_expect_eq(s.evictions, 1);
    lru_free(c);
}
