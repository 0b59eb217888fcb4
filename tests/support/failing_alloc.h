/* failing_alloc.h -- jansson's allocator made to fail one chosen allocation,
 * for the tests that a document is built whole or not at all. The failing
 * allocator goes under jsonout's (jsonout_use_malloc), as malloc() does in
 * the server, so jsonout sees each failure as it would see a real one.
 *
 *   for (long k = 0;; k++) {
 *       failing_alloc_at(k);        the k-th allocation from here fails
 *       char *got = build();
 *       long made = failing_alloc_stop();   allocations asked for
 *       ... got is NULL (an error) or equal to what a normal build gives ...
 *       if (made <= k) break;       no allocation was left to fail
 *   }
 *
 * Only the k-th fails, those after it succeed again: the case a builder that
 * checks only some of its calls gets wrong. Criterion runs each test in its
 * own process, so the allocator never leaks into another test.
 *
 * failing_alloc_each() is that loop for a build that yields a text: every
 * result must be NULL (a failure the builder reported) or exactly the text
 * a build without failures gives.
 */
#ifndef DV_TEST_FAILING_ALLOC_H
#define DV_TEST_FAILING_ALLOC_H

#include <criterion/criterion.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "api/jsonout.h"

static long failing_alloc_k = -1, failing_alloc_calls;

static void *failing_alloc_malloc(size_t n) {
    if (failing_alloc_k >= 0 && failing_alloc_calls++ == failing_alloc_k) return NULL;
    return malloc(n);
}

/* From now on the `k`-th (0-based) jansson allocation fails. */
static inline void failing_alloc_at(long k) {
    failing_alloc_k = k;
    failing_alloc_calls = 0;
    jsonout_use_malloc(failing_alloc_malloc);
}

/* Back to the normal allocator; returns how many allocations were asked for
 * since failing_alloc_at(). */
static inline long failing_alloc_stop(void) {
    jsonout_use_malloc(NULL);
    failing_alloc_k = -1;
    return failing_alloc_calls;
}

/* A build for failing_alloc_each(). */
struct failing_case {
    char *(*build)(void *ctx); /* the text (malloc()ed), or NULL: it failed   */
    void *ctx;
    const char *want;                  /* the text a build without failures gives    */
    void (*prepare)(void *ctx);        /* before each build, allocations normal; or NULL */
    void (*failed)(void *ctx, long k); /* after a build that failed (how); or NULL    */
    long max;                          /* builds at most (0: 200000)                  */
};

/* Runs c->build with the k-th allocation failing, for k = 0, 1, ... until a
 * build meets no failure, asserting each result is NULL or c->want. Returns
 * how many builds failed. */
static inline unsigned failing_alloc_each(const struct failing_case *c) {
    long max = c->max ? c->max : 200000, k;
    unsigned failed = 0;
    for (k = 0; k < max; k++) {
        if (c->prepare) c->prepare(c->ctx);
        failing_alloc_at(k);
        char *got = c->build(c->ctx);
        long made = failing_alloc_stop();
        if (!got) {
            failed++;
            if (c->failed) c->failed(c->ctx, k);
            continue;
        }
        size_t at = 0;
        while (got[at] && got[at] == c->want[at]) at++;
        cr_assert_str_eq(got, c->want, "allocation %ld failed and a partial text was built; from byte %zu: %.80s", k,
                         at, got + at);
        free(got);
        if (made <= k) break; /* no allocation was left to fail */
    }
    cr_assert_lt(k, max, "the build still met a failure after %ld allocations", max);
    return failed;
}

#endif /* DV_TEST_FAILING_ALLOC_H */
