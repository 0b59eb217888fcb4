/* testimony_run.c -- a table's testimony, the same sequence for every kind
 * of table (testimony_run.h).
 *
 * The order, and what each step's time is counted as:
 *   1. the standing blocks of every row (the table's prepare()): the
 *      witness's share, as they serve it first (the counters' without one);
 *   2. witness_start(): queues every row's witness kernel and builds the
 *      model's records while they run (the witness's share);
 *   3. the counter pass, now when it may run alongside (its set counts only
 *      what it patches) or without a witness: its first launch waits for
 *      the witness kernels (witness_settle()), and that wait is moved from
 *      the counters' share to the witness's;
 *   4. witness_finish(): the comparison (the witness's share);
 *   5. the counter pass, if it did not run in 3.
 */
#include "kernels/gpu/testimony_run.h"

#include <math.h>
#include <string.h>

#include "kernels/base/timeutil.h"

/* The counter pass's launch: the table's, after the witness still running
 * (pending; witness_settle() waits once). */
struct counting {
    const struct testimony_table *x;
    struct witness_pass *pending;
};

static int count_launch(void *p, unsigned row, const struct counters_span *span, char *err) {
    const struct counting *c = p;
    const int rc = c->pending ? witness_settle(c->pending, err) : 0;
    return rc != 0 ? rc : c->x->ops->count(c->x->ctx, row, span, err);
}

static int count_wait(void *p, char *err) {
    const struct counting *c = p;
    return c->x->ops->wait(c->x->ctx, err);
}

/* counters_table() over the rows' standing grids. A pass that fails is
 * never the table's failure: its code is counters_table()'s report, and its
 * reason is in tm. */
static void counter_pass(const struct testimony_table *x, const struct testimony_row *rows, unsigned n,
                         struct witness_pass *pending, struct dv_testimony *tm, struct counters **cnt) {
    struct testimony_grid grids[DV_MAX_ROWS];
    unsigned evaluations[DV_MAX_ROWS];
    for (unsigned r = 0; r < n; r++) {
        grids[r] = rows[r].grid;
        evaluations[r] = rows[r].evaluations;
    }
    struct counting c = {x, pending};
    const struct counters_launch l = {.launch = count_launch, .wait = x->ops->wait ? count_wait : NULL, .ctx = &c};
    (void)counters_table(cnt, x->t, grids, &l, evaluations, tm);
}

/* Steps 1 to 5 of the top. */
static int run(struct session *s, const struct testimony_table *x, struct dv_testimony *tm, struct counters **cnt,
               char *err) {
    struct testimony_row rows[DV_MAX_ROWS];
    unsigned wblocks[DV_MAX_ROWS];
    const unsigned n = x->t->nrows < DV_MAX_ROWS ? x->t->nrows : DV_MAX_ROWS;
    if (!x->witness && !*cnt) return 0;
    double t0 = timeutil_now_ms();
    for (unsigned r = 0; r < n; r++) {
        memset(&rows[r], 0, sizeof rows[r]);
        const int rc = x->ops->prepare(x->ctx, r, &rows[r], err);
        if (rc != 0) return rc;
        wblocks[r] = rows[r].witness_blocks;
    }
    *(x->witness ? &tm->witness_ms : &tm->counters_ms) += timeutil_now_ms() - t0;

    const struct witness_rows w = {n, x->blocks, wblocks, x->ops->witness_launch, x->ops->expect, x->ops->observe, x->ctx};
    struct witness_pass wp;
    int rc = 0, counted = 0;
    memset(&wp, 0, sizeof wp);
    if (x->witness) {
        t0 = timeutil_now_ms();
        rc = witness_start(s, &w, &wp, err);
        tm->witness_ms += timeutil_now_ms() - t0;
        if (rc != 0) return rc;
    }
    if (*cnt && (!x->witness || (wp.queued && counters_alongside(*cnt)))) {
        counter_pass(x, rows, n, x->witness ? &wp : NULL, tm, cnt);
        tm->counters_ms -= wp.settle_ms;
        tm->witness_ms += wp.settle_ms;
        counted = 1;
    }
    if (x->witness) {
        t0 = timeutil_now_ms();
        rc = witness_finish(&wp, err);
        tm->witness_ms += timeutil_now_ms() - t0;
        if (rc != 0) return rc;
    }
    if (*cnt && !counted) counter_pass(x, rows, n, NULL, tm, cnt);
    return 0;
}

int testimony_run(struct session *s, const struct testimony_table *x, struct dv_testimony *tm, struct counters **cnt,
                  char *err) {
    const double h0 = timeutil_now_ms(), w0 = tm->witness_ms, c0 = tm->counters_ms;
    const int counted = *cnt != NULL;
    const int rc = run(s, x, tm, cnt, err);
    struct dv_table *t = x->t;
    t->host_testimony_ms = timeutil_now_ms() - h0;
    t->cost_witness_ms = x->witness ? tm->witness_ms - w0 : NAN;
    t->cost_counters_ms = counted ? tm->counters_ms - c0 : NAN;
    return rc;
}
