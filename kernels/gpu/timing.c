/* timing.c -- warm-up, interleaved event-timed samples, the clock sampled
 * once per batch (timing.h).
 *
 * timing_rounds() is the loop: a batch queues an untimed lead-in launch, the
 * clock spins when a sample is due (queue_clock), the rounds (queue_rounds),
 * then waits for them and files the samples (read_rounds, read_clock) with
 * its sink, until the sink names no row. The helpers below it each do one
 * of those steps on the events of one call (struct timing_run); the samples
 * live in the sink: for timing_rows() one table's struct sampling
 * (model/stats/sampling.h), for a batch of readers their own
 * (model/stats/batchplan.h, gpu/batch.c). ("Batch" in this file is the
 * rounds queued per synchronisation; a batch of readers is batchplan.h's.) */
#include "kernels/gpu/timing.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/base/timeutil.h"
#include "kernels/gpu/cuda_call.h"
#include "kernels/gpu/lesson_kernels.h"
#include "kernels/model/stats/sampling.h"

#define TIMING_BATCH 8 /* rounds queued per synchronisation */

/* What one call of timing_rows() holds: per row and round of a batch a pair
 * of events around the launch, the three events around the clock spins. */
struct timing_run {
    unsigned nrows;
    size_t nev; /* launches per round x TIMING_BATCH */
    cudaEvent_t *start, *stop;
    cudaEvent_t spin[3]; /* before, between and after the two spins */
};

static void run_cleanup(struct timing_run *t) {
    for (size_t e = 0; t->start && t->stop && e < t->nev; e++) {
        if (t->start[e]) cudaEventDestroy(t->start[e]);
        if (t->stop[e]) cudaEventDestroy(t->stop[e]);
    }
    for (unsigned e = 0; e < 3; e++)
        if (t->spin[e]) cudaEventDestroy(t->spin[e]);
    free(t->start);
    free(t->stop);
}

/* The events (the spins' only with `clock`). Returns 0 or a DV_* code;
 * run_cleanup() releases what was made either way. */
static int run_init(struct timing_run *t, unsigned nrows, unsigned launches, int clock, char *err) {
    int rc;
    memset(t, 0, sizeof(*t));
    t->nrows = nrows;
    t->nev = (size_t)launches * TIMING_BATCH;
    t->start = calloc(t->nev ? t->nev : 1, sizeof(*t->start));
    t->stop = calloc(t->nev ? t->nev : 1, sizeof(*t->stop));
    if (nrows == 0 || !t->start || !t->stop) {
        dv_seterr(err, "timing: out of memory for %u rows", nrows);
        return DV_ERR;
    }
    for (size_t e = 0; e < t->nev; e++) {
        if ((rc = DV_CUDA_CALL(cudaEventCreate(&t->start[e]), err)) != 0 ||
            (rc = DV_CUDA_CALL(cudaEventCreate(&t->stop[e]), err)) != 0)
            return rc;
    }
    for (unsigned e = 0; clock && e < 3; e++)
        if ((rc = DV_CUDA_CALL(cudaEventCreate(&t->spin[e]), err)) != 0) return rc;
    return 0;
}

/* Queues the two clock spins, of TIMING_SPIN_CYCLES and twice that, between
 * the three spin events. */
static int queue_clock(struct timing_run *t, const struct timing_clock *clk, char *err) {
    int rc;
    if ((rc = DV_CUDA_CALL(cudaEventRecord(t->spin[0], 0), err)) != 0 ||
        (rc = dv_run_clock_spin(TIMING_SPIN_CYCLES, clk->sms, clk->d_spin, err)) != 0 ||
        (rc = DV_CUDA_CALL(cudaEventRecord(t->spin[1], 0), err)) != 0 ||
        (rc = dv_run_clock_spin(2 * TIMING_SPIN_CYCLES, clk->sms, clk->d_spin, err)) != 0 ||
        (rc = DV_CUDA_CALL(cudaEventRecord(t->spin[2], 0), err)) != 0)
        return rc;
    return 0;
}

/* Queues `rounds` rounds of the `n` rows `rows`, each round the rows in
 * that order, each launch between its own pair of events. */
static int queue_rounds(struct timing_run *t, const unsigned *rows, unsigned n, unsigned rounds,
                        timing_launch_fn launch, void *ctx, char *err) {
    int rc;
    for (unsigned b = 0; b < rounds; b++) {
        for (unsigned i = 0; i < n; i++) {
            const size_t e = (size_t)b * n + i;
            if ((rc = DV_CUDA_CALL(cudaEventRecord(t->start[e], 0), err)) != 0) return rc;
            if ((rc = launch(ctx, rows[i], err)) != 0) return rc;
            if ((rc = DV_CUDA_CALL(cudaEventRecord(t->stop[e], 0), err)) != 0) return rc;
        }
    }
    return 0;
}

/* Waits for the batch's last launch and writes its `rounds` rounds of `n`
 * rows into ms[k * n + i], their sum into *batch_ms. */
static int read_rounds(struct timing_run *t, unsigned n, unsigned rounds, double *ms, double *batch_ms, char *err) {
    int rc;
    *batch_ms = 0;
    if ((rc = DV_CUDA_CALL(cudaEventSynchronize(t->stop[(size_t)rounds * n - 1]), err)) != 0) return rc;
    for (size_t e = 0; e < (size_t)rounds * n; e++) {
        float v = 0;
        if ((rc = DV_CUDA_CALL(cudaEventElapsedTime(&v, t->start[e], t->stop[e]), err)) != 0) return rc;
        ms[e] = v;
        *batch_ms += v;
    }
    return 0;
}

/* The SM clock of the batch's spins, in MHz, into *mhz. */
static int read_clock(struct timing_run *t, double *mhz, char *err) {
    int rc;
    float one = 0, two = 0;
    if ((rc = DV_CUDA_CALL(cudaEventElapsedTime(&one, t->spin[0], t->spin[1]), err)) != 0 ||
        (rc = DV_CUDA_CALL(cudaEventElapsedTime(&two, t->spin[1], t->spin[2]), err)) != 0)
        return rc;
    if (one <= 0 || two <= 0) {
        dv_seterr(err, "clock: spins of %lld and %lld cycles timed at %.6f and %.6f ms", TIMING_SPIN_CYCLES,
                  2 * TIMING_SPIN_CYCLES, one, two);
        return DV_ERR;
    }
    /* Twice the cycles in twice the time (within 5%): the clock held, and
     * the difference cancels the launch cost. Otherwise the clock moved
     * between the spins (a GPU ramping up from idle runs the first spin
     * slow): the rounds that follow run at the second spin's clock, so that
     * is the sample. */
    const double ratio = (double)two / (double)one;
    *mhz = ratio >= 1.9 && ratio <= 2.1 ? (double)TIMING_SPIN_CYCLES / ((double)(two - one) * 1e3)
                                        : 2.0 * (double)TIMING_SPIN_CYCLES / ((double)two * 1e3);
    return 0;
}

int timing_hold(const struct timing_clock *clk, double ms, char *err) {
    if (!clk || !clk->d_spin || !(ms > 0)) return 0;
    return dv_run_clock_spin((long long)(ms * TIMING_HOLD_MAX_MHZ * 1e3), clk->sms ? clk->sms : 1, clk->d_spin, err);
}

double timing_hold_next(double queue_ms, double gpu_ms) {
    if (gpu_ms > 0 && queue_ms < TIMING_HOLD_SHARE * gpu_ms) return 0;
    const double ms = TIMING_HOLD_FACTOR * queue_ms;
    return ms < TIMING_HOLD_MIN_MS ? TIMING_HOLD_MIN_MS : ms > TIMING_HOLD_MAX_MS ? TIMING_HOLD_MAX_MS : ms;
}

int timing_rounds(unsigned nrows, timing_launch_fn launch, void *ctx, const struct timing_sink *sink,
                  struct timing_clock *clk, char *err) {
    struct timing_run t;
    unsigned rows[TIMING_MAX_LAUNCHES * TIMING_BATCH];
    double ms[TIMING_MAX_LAUNCHES * TIMING_BATCH];
    double timed_ms = 0, clocked_ms = 0; /* timed work filed, and when the clock was last sampled */
    double hold_ms = TIMING_HOLD_FIRST_MS;
    int rc;
    memset(&t, 0, sizeof(t));
    if (nrows == 0 || nrows > DV_MAX_ROWS) {
        dv_seterr(err, "timing: rows: %u is outside 1..%u", nrows, DV_MAX_ROWS);
        return DV_ERR;
    }
    const unsigned launches = sink->max_launches ? sink->max_launches : nrows;
    const double clock_every_ms = sink->clock_every_ms > 0 ? sink->clock_every_ms : TIMING_CLOCK_EVERY_MS;
    if (launches > TIMING_MAX_LAUNCHES) {
        dv_seterr(err, "timing: %u launches a round, at most %u", launches, TIMING_MAX_LAUNCHES);
        return DV_ERR;
    }
    if ((rc = run_init(&t, nrows, launches, clk != NULL, err)) != 0) goto cleanup;
    /* Warm-up: one launch per row configuration (module load, first touch). */
    for (unsigned r = 0; r < nrows; r++)
        if ((rc = launch(ctx, r, err)) != 0) goto cleanup;
    if ((rc = DV_CUDA_CALL(cudaDeviceSynchronize(), err)) != 0) goto cleanup;

    for (unsigned batches = 0;; batches++) {
        unsigned rounds = 0;
        const unsigned n = sink->next(sink->ctx, TIMING_BATCH, rows, &rounds);
        if (n == 0) break;
        int bad = rounds == 0 || (size_t)rounds * n > t.nev;
        for (unsigned i = 0; i < n && !bad; i++) bad = rows[i] >= nrows;
        if (bad) {
            dv_seterr(err, "timing: %u rounds of %u launches asked for (%u rows, events for %zu launches)", rounds, n,
                      nrows, t.nev);
            rc = DV_ERR;
            goto cleanup;
        }
        /* A batch of rounds is queued back to back behind the hold, so the
         * GPU never idles between samples; an untimed lead-in launch absorbs
         * the restart after the host's synchronisation, which would
         * otherwise land on the first row of every batch. */
        const double q0 = timeutil_now_ms();
        if ((rc = timing_hold(clk, hold_ms, err)) != 0) goto cleanup;
        if ((rc = launch(ctx, rows[n - 1], err)) != 0) goto cleanup;
        /* The clock: in the first batch, then once at least
         * clock_every_ms of timed work has passed since the last. */
        const int sample_clock = clk && (batches == 0 || timed_ms - clocked_ms >= clock_every_ms);
        if (sample_clock && (rc = queue_clock(&t, clk, err)) != 0) goto cleanup;
        double batch_ms = 0, mhz = NAN;
        if ((rc = queue_rounds(&t, rows, n, rounds, launch, ctx, err)) != 0) goto cleanup;
        const double queue_ms = timeutil_now_ms() - q0;
        if ((rc = read_rounds(&t, n, rounds, ms, &batch_ms, err)) != 0) goto cleanup;
        hold_ms = timing_hold_next(queue_ms, batch_ms);
        if (sample_clock) {
            if ((rc = read_clock(&t, &mhz, err)) != 0) goto cleanup;
            clocked_ms = timed_ms;
            clk->sum_mhz += mhz;
            if (clk->n == 0 || mhz < clk->min_mhz) clk->min_mhz = mhz;
            clk->n++;
        }
        timed_ms += batch_ms;
        if ((rc = sink->file(sink->ctx, n, rows, rounds, ms, mhz, err)) != 0) goto cleanup;
    }
cleanup:
    run_cleanup(&t);
    return rc;
}

/* One table's rounds: every row in every round, into its struct sampling,
 * until the stopping rule says stop. */
struct table_sink {
    struct sampling s;
    unsigned nrows, max_launches;
    enum stoprule_reason why;
};

static unsigned table_next(void *p, unsigned batch, unsigned *rows, unsigned *rounds) {
    const struct table_sink *x = p;
    if (x->why != STOPRULE_CONTINUE) return 0;
    for (unsigned r = 0; r < x->nrows; r++) rows[r] = r;
    *rounds = sampling_room(&x->s, sampling_want(&x->s, batch, x->max_launches * batch / x->nrows));
    return x->nrows;
}

static int table_file(void *p, unsigned n, const unsigned *rows, unsigned rounds, const double *ms, double mhz,
                      char *err) {
    struct table_sink *x = p;
    double batch_ms = 0;
    for (unsigned i = 0; i < n; i++) {
        double *dst = sampling_row(&x->s, rows[i]) + x->s.taken;
        for (unsigned k = 0; k < rounds; k++) {
            dst[k] = ms[(size_t)k * n + i];
            batch_ms += dst[k];
        }
    }
    return sampling_file(&x->s, rounds, mhz, batch_ms, &x->why, err);
}

int timing_rows(struct dv_table *tb, timing_launch_fn launch, void *ctx, const struct dv_options *o, double rated_mhz,
                struct timing_clock *clk, char *err) {
    struct table_sink x;
    memset(&x, 0, sizeof(x));
    x.nrows = tb->nrows;
    x.why = STOPRULE_CONTINUE;
    int rc = sampling_init(&x.s, tb->nrows, tb->baseline_row >= 0 ? (unsigned)tb->baseline_row : tb->nrows, o,
                           clk ? rated_mhz : 0.0, err);
    /* Each row's ratio over the row it is compared with (an experiment's
     * row may name one other than the baseline). */
    unsigned ref[DV_MAX_ROWS];
    for (unsigned r = 0; r < tb->nrows && r < DV_MAX_ROWS; r++) ref[r] = dv_row_reference(tb, r);
    if (rc == 0) rc = sampling_references(&x.s, ref, err);
    /* Events for the first batch's rounds (sampling_want()). */
    if (rc == 0) {
        const unsigned first = sampling_want(&x.s, TIMING_BATCH, TIMING_MAX_LAUNCHES * TIMING_BATCH / x.nrows);
        const unsigned launches = x.nrows * ((first + TIMING_BATCH - 1) / TIMING_BATCH);
        x.max_launches = launches < TIMING_MAX_LAUNCHES ? launches : TIMING_MAX_LAUNCHES;
    }
    const struct timing_sink sink = {table_next, table_file, &x, x.max_launches, 0};
    if (rc == 0 && (rc = timing_rounds(tb->nrows, launch, ctx, &sink, clk, err)) == 0) sampling_report(&x.s, tb);
    sampling_cleanup(&x.s);
    return rc;
}
