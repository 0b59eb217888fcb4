/* timing.c -- warm-up, interleaved event-timed samples, the clock sampled
 * once per batch (timing.h).
 *
 * timing_rows() is the loop: a batch queues an untimed lead-in launch, the
 * clock spins when a sample is due (queue_clock), the rounds (queue_rounds),
 * then waits for them and files the samples (read_rounds, read_clock) with
 * model/stats/sampling.h, until it says stop. The helpers below it each do one of
 * those steps on the events of one call (struct timing_run); the samples
 * live in the struct sampling. */
#include "kernels/gpu/timing.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/gpu/cuda_call.h"
#include "kernels/gpu/lesson_kernels.h"
#include "kernels/model/stats/sampling.h"

#define TIMING_BATCH 8 /* rounds queued per synchronisation */

/* What one call of timing_rows() holds: per row and round of a batch a pair
 * of events around the launch, the three events around the clock spins. */
struct timing_run {
    unsigned nrows;
    size_t nev; /* nrows x TIMING_BATCH */
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
static int run_init(struct timing_run *t, unsigned nrows, int clock, char *err) {
    int rc;
    memset(t, 0, sizeof(*t));
    t->nrows = nrows;
    t->nev = (size_t)nrows * TIMING_BATCH;
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

/* Queues `rounds` rounds, every row once per round in row order, each
 * launch between its own pair of events. */
static int queue_rounds(struct timing_run *t, unsigned rounds, timing_launch_fn launch, void *ctx, char *err) {
    int rc;
    for (unsigned b = 0; b < rounds; b++) {
        for (unsigned r = 0; r < t->nrows; r++) {
            const size_t e = (size_t)b * t->nrows + r;
            if ((rc = DV_CUDA_CALL(cudaEventRecord(t->start[e], 0), err)) != 0) return rc;
            if ((rc = launch(ctx, r, err)) != 0) return rc;
            if ((rc = DV_CUDA_CALL(cudaEventRecord(t->stop[e], 0), err)) != 0) return rc;
        }
    }
    return 0;
}

/* Waits for the batch's last launch and writes its `rounds` rounds as rounds
 * s->taken .. s->taken + rounds - 1 of each row, their sum into *batch_ms. */
static int read_rounds(struct timing_run *t, unsigned rounds, struct sampling *s, double *batch_ms, char *err) {
    int rc;
    *batch_ms = 0;
    if ((rc = DV_CUDA_CALL(cudaEventSynchronize(t->stop[(size_t)rounds * t->nrows - 1]), err)) != 0) return rc;
    for (unsigned b = 0; b < rounds; b++) {
        for (unsigned r = 0; r < t->nrows; r++) {
            const size_t e = (size_t)b * t->nrows + r;
            float ms = 0;
            if ((rc = DV_CUDA_CALL(cudaEventElapsedTime(&ms, t->start[e], t->stop[e]), err)) != 0) return rc;
            sampling_row(s, r)[s->taken + b] = ms;
            *batch_ms += ms;
        }
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

int timing_rows(struct dv_table *tb, timing_launch_fn launch, void *ctx, const struct dv_options *o, double rated_mhz,
                struct timing_clock *clk, char *err) {
    struct timing_run t;
    struct sampling s;
    double clocked_ms = 0; /* s.gpu_ms when the clock was last sampled */
    const unsigned nrows = tb->nrows;
    memset(&t, 0, sizeof(t));
    int rc = sampling_init(&s, nrows, tb->baseline_row >= 0 ? (unsigned)tb->baseline_row : nrows, o,
                           clk ? rated_mhz : 0.0, err);
    /* Each row's ratio over the row it is compared with (an experiment's
     * row may name one other than the baseline). */
    unsigned ref[DV_MAX_ROWS];
    for (unsigned r = 0; r < nrows && r < DV_MAX_ROWS; r++) ref[r] = dv_row_reference(tb, r);
    if (rc == 0) rc = sampling_references(&s, ref, err);
    if (rc != 0 || (rc = run_init(&t, nrows, clk != NULL, err)) != 0) goto cleanup;
    /* Warm-up: one launch per row configuration (module load, first touch). */
    for (unsigned r = 0; r < nrows; r++)
        if ((rc = launch(ctx, r, err)) != 0) goto cleanup;
    if ((rc = DV_CUDA_CALL(cudaDeviceSynchronize(), err)) != 0) goto cleanup;

    for (enum stoprule_reason why = STOPRULE_CONTINUE; why == STOPRULE_CONTINUE;) {
        /* A batch of rounds is queued back to back, so the GPU never idles
         * between samples; an untimed lead-in launch absorbs the restart
         * after the host's synchronisation, which would otherwise land on
         * row 0 of every batch. */
        const unsigned rounds = sampling_room(&s, TIMING_BATCH);
        if ((rc = launch(ctx, nrows - 1, err)) != 0) goto cleanup;
        /* The clock: in the first batch, then once at least
         * TIMING_CLOCK_EVERY_MS of timed work has passed since the last. */
        const int sample_clock = clk && (s.taken == 0 || s.gpu_ms - clocked_ms >= TIMING_CLOCK_EVERY_MS);
        if (sample_clock && (rc = queue_clock(&t, clk, err)) != 0) goto cleanup;
        double batch_ms = 0, mhz = NAN;
        if ((rc = queue_rounds(&t, rounds, launch, ctx, err)) != 0 ||
            (rc = read_rounds(&t, rounds, &s, &batch_ms, err)) != 0)
            goto cleanup;
        if (sample_clock) {
            if ((rc = read_clock(&t, &mhz, err)) != 0) goto cleanup;
            clocked_ms = s.gpu_ms;
            clk->sum_mhz += mhz;
            if (clk->n == 0 || mhz < clk->min_mhz) clk->min_mhz = mhz;
            clk->n++;
        }
        if ((rc = sampling_file(&s, rounds, mhz, batch_ms, &why, err)) != 0) goto cleanup;
    }
    sampling_report(&s, tb);
cleanup:
    run_cleanup(&t);
    sampling_cleanup(&s);
    return rc;
}
