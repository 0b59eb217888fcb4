/* warmup.c -- a worker's cold start before its hello (warmup.h).
 *
 * Two measurements in the worker's own session, of the lesson's grid and
 * iteration count (its compile-time instantiation), a few rounds each: the
 * rounds are not what is wanted, the first launch of every instantiation,
 * the profiler and the session's buffers are. The rounds' rule stops on its
 * sample cap after one batch of rounds (WARMUP_ROUNDS). Then, warm, the
 * widget's request with its own rounds and rule: that one's time is wanted,
 * as the run a widget job takes here. */
#include "kernels/gpu/warmup.h"

#include <stdio.h>
#include <string.h>

#include "kernels/base/timeutil.h"
#include "kernels/gpu/cuda_call.h"
#include "kernels/gpu/measure.h"
#include "kernels/gpu/session.h"
#include "kernels/model/model/experiment.h"

#define WARMUP_ROUNDS 8u
/* An expression of the widget's kind: the mask kernel runs it. */
#define WARMUP_EXPRESSION "(threadIdx.x % 3) < 1"

/* The lesson's request on `ordinal`, a few rounds, the testimony when asked. */
static void request(struct dv_options *o, int ordinal, int testimony) {
    experiment_defaults(o);
    o->device = ordinal;
    o->min_samples = WARMUP_ROUNDS;
    o->max_samples = WARMUP_ROUNDS;
    o->no_witness = o->no_counters = !testimony;
}

void warmup_widget_request(struct dv_options *o, int ordinal, int testimony) {
    experiment_widget_request(o, WARMUP_EXPRESSION);
    o->device = ordinal;
    if (!testimony) o->no_witness = o->no_counters = 1;
}

/* Measures `o` in `s`; *ms its host time. Returns its code (DV_EGATE, a
 * wrong output, is a warm-up done all the same: what was loaded stays). */
static int measure(struct session *s, const struct dv_options *o, double *ms, unsigned *rows, double *setup_ms,
                   unsigned long long *threads, char *reason, char *err) {
    struct dv_report *r = experiment_report_create();
    if (!r) {
        dv_seterr(err, "warm-up: out of memory");
        return DV_ERR;
    }
    const double t0 = timeutil_now_ms();
    int rc = measure_run_session(s, o, r, err);
    *ms = timeutil_now_ms() - t0;
    for (unsigned i = 0; i < r->ntables; i++) *rows += r->tables[i].nrows;
    if (r->config.threads > *threads) *threads = r->config.threads;
    *setup_ms += r->testimony.counters_setup_ms;
    if (!o->no_counters && !r->testimony.counters_taken && !reason[0])
        snprintf(reason, ERR_LEN, "%s", r->testimony.counters_reason);
    experiment_report_free(r);
    return rc == DV_EGATE ? 0 : rc;
}

/* A class's batch is one table of up to DV_MAX_ROWS rows (gpu/batch.h):
 * every row slot's output (device and pinned host, `n` floats) and event
 * made now, where the first batch would make them (on the H200, 28 ms of
 * the first 16-row batch's set-up against 2 ms of the next ones'). */
static int reserve(struct session *s, unsigned long long n, char *err) {
    for (unsigned k = 0; k < DV_MAX_ROWS; k++) {
        float *host = NULL;
        int rc = 0;
        if (!session_output(s, k, n, &host, &rc, err) || !session_event(s, k, &rc, err)) return rc;
    }
    return DV_CUDA_CALL(cudaDeviceSynchronize(), err);
}

int warmup_run(struct session *s, int ordinal, int testimony, struct warmup_report *w, char *err) {
    memset(w, 0, sizeof(*w));
    const double t0 = timeutil_now_ms();
    struct dv_options o;
    /* The lesson's suites: Part 1 and Part 2 on the built-in predicates. */
    request(&o, ordinal, testimony);
    o.part = DV_PART_ALL;
    unsigned long long threads = 0;
    int rc = measure(s, &o, &w->lesson_ms, &w->rows, &w->profiler_ms, &threads, w->counters_reason, err);
    /* The widget's "Measure this": an expression beside the baseline. */
    if (rc == 0) {
        warmup_widget_request(&o, ordinal, testimony);
        o.min_samples = o.max_samples = WARMUP_ROUNDS;
        rc = measure(s, &o, &w->mask_ms, &w->rows, &w->profiler_ms, &threads, w->counters_reason, err);
    }
    if (rc == 0 && threads > 0) {
        const double r0 = timeutil_now_ms();
        rc = reserve(s, threads, err);
        w->reserve_ms = timeutil_now_ms() - r0;
    }
    /* Warm now: the widget's request as it is sent, timed as a job of its
     * kind runs here (its rounds and rule; nothing left to load). */
    if (rc == 0) {
        warmup_widget_request(&o, ordinal, testimony);
        double ms = 0;
        rc = measure(s, &o, &ms, &w->rows, &w->profiler_ms, &threads, w->counters_reason, err);
        if (rc == 0) w->widget_ms = ms;
    }
    w->total_ms = timeutil_now_ms() - t0;
    return rc;
}
