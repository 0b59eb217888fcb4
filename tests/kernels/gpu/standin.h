/* standin.h -- the counter pass without a GPU, for the tests of the pass
 * (test_counters.c) and of the testimony that runs it
 * (test_testimony_run.c): the CUPTI stand-in library
 * (tests/support/cupti_standin.c) chosen through DV_CUPTI_LIBRARY, a
 * profiler prepared on it, and launches that only record what they were
 * asked to run. Only where the build made the stand-in (DV_CUPTI_STANDIN).
 */
#ifndef DV_TEST_STANDIN_H
#define DV_TEST_STANDIN_H

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>

#include "kernels/gpu/counters.h"

#define FAKE_CTX ((void *)0x1) /* a context the stand-in never reads */

/* Launches that record what the pass asked for. */
struct fake {
    unsigned n;
    unsigned row[64], blocks[64], first[64];
    int standin[64];
    int fail_row, fail_rc;
    unsigned waits;
};

static inline int fake_launch(void *ctx, unsigned row, const struct counters_span *p, char *err) {
    struct fake *f = ctx;
    if ((int)row == f->fail_row) {
        snprintf(err, ERR_LEN, "launch mixOneBranch at kernels/gpu/lesson_kernels.cu:1: an injected failure");
        return f->fail_rc;
    }
    if (f->n < 64) {
        f->row[f->n] = row;
        f->blocks[f->n] = p->blocks;
        f->first[f->n] = p->first;
        f->standin[f->n] = p->standin;
    }
    f->n++;
    return 0;
}

static inline int fake_wait(void *ctx, char *err) {
    (void)err;
    ((struct fake *)ctx)->waits++;
    return 0;
}

#ifdef DV_CUPTI_STANDIN

/* CUPTI is the stand-in; `fail` (NULL: none) the call that fails, with
 * `result`. */
static inline void standin(const char *fail, unsigned result) {
    setenv("DV_CUPTI_LIBRARY", DV_CUPTI_STANDIN, 1);
    if (fail) setenv("CUPTI_STANDIN_FAIL", fail, 1);
    else unsetenv("CUPTI_STANDIN_FAIL");
    char r[16];
    snprintf(r, sizeof r, "%u", result);
    setenv("CUPTI_STANDIN_RESULT", r, 1);
}

/* A profiler prepared on the stand-in. */
static inline struct counters *prepared(void) {
    char library[256], reason[ERR_LEN] = "";
    struct counters *c = counters_create();
    cr_assert_not_null(c);
    cr_assert_eq(counters_prepare(c, 0, 9, FAKE_CTX, library, reason), 0, "%s", reason);
    cr_expect_str_eq(library, DV_CUPTI_STANDIN);
    return c;
}

#endif /* DV_CUPTI_STANDIN */

#endif /* DV_TEST_STANDIN_H */
