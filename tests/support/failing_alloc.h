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
 */
#ifndef DV_TEST_FAILING_ALLOC_H
#define DV_TEST_FAILING_ALLOC_H

#include <jansson.h>
#include <stdlib.h>

#include "server/core/jsonout.h"

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

#endif /* DV_TEST_FAILING_ALLOC_H */
