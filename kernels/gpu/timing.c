/* timing.c -- warm-up, interleaved event-timed samples, stdrel stop, the
 * clock sampled once per batch (timing.h). */
#include "kernels/gpu/timing.h"

#include <stdlib.h>

#include "kernels/gpu/cuda_call.h"
#include "kernels/gpu/lesson_kernels.h"
#include "kernels/model/stats.h"

#define TIMING_BATCH 8 /* rounds queued per synchronisation */

int timing_rows(unsigned nrows, timing_launch_fn launch, void *ctx, const struct dv_options *o,
                struct timing_clock *clk, struct dv_stats *stats, double *gpu_ms, char *err) {
    int rc = 0;
    cudaEvent_t spin[3] = {NULL, NULL, NULL};
    double clocked_ms = 0; /* *gpu_ms when the clock was last sampled */
    unsigned min_s, max_s;
    stats_sample_bounds(o, &min_s, &max_s);
    const size_t nev = (size_t)nrows * TIMING_BATCH;
    cudaEvent_t *start = calloc(nev ? nev : 1, sizeof(*start));
    cudaEvent_t *stop = calloc(nev ? nev : 1, sizeof(*stop));
    double *samples = malloc(sizeof(double) * (size_t)(nrows ? nrows : 1) * max_s);
    double *scratch = malloc(sizeof(double) * max_s);
    *gpu_ms = 0;
    if (nrows == 0 || !start || !stop || !samples || !scratch) {
        dv_seterr(err, "timing: out of memory for %u rows x %u samples", nrows, max_s);
        rc = DV_ERR;
        goto cleanup;
    }
    for (size_t e = 0; e < nev; e++) {
        if ((rc = DV_CUDA_CALL(cudaEventCreate(&start[e]), err)) != 0 ||
            (rc = DV_CUDA_CALL(cudaEventCreate(&stop[e]), err)) != 0)
            goto cleanup;
    }
    for (unsigned e = 0; clk && e < 3; e++)
        if ((rc = DV_CUDA_CALL(cudaEventCreate(&spin[e]), err)) != 0) goto cleanup;
    /* Warm-up: one launch per row configuration (module load, first touch). */
    for (unsigned r = 0; r < nrows; r++)
        if ((rc = launch(ctx, r, err)) != 0) goto cleanup;
    if ((rc = DV_CUDA_CALL(cudaDeviceSynchronize(), err)) != 0) goto cleanup;

    unsigned taken = 0;
    for (;;) {
        /* A batch of rounds is queued back to back, so the GPU never idles
         * between samples; an untimed lead-in launch absorbs the restart
         * after the host's synchronisation, which would otherwise land on
         * row 0 of every batch. */
        unsigned rounds = max_s - taken < TIMING_BATCH ? max_s - taken : TIMING_BATCH;
        if ((rc = launch(ctx, nrows - 1, err)) != 0) goto cleanup;
        /* The clock: in the first batch, then once at least
         * TIMING_CLOCK_EVERY_MS of timed work has passed since the last. */
        const int sample_clock = clk && (taken == 0 || *gpu_ms - clocked_ms >= TIMING_CLOCK_EVERY_MS);
        if (sample_clock && ((rc = DV_CUDA_CALL(cudaEventRecord(spin[0], 0), err)) != 0 ||
                             (rc = dv_run_clock_spin(TIMING_SPIN_CYCLES, clk->sms, clk->d_spin, err)) != 0 ||
                             (rc = DV_CUDA_CALL(cudaEventRecord(spin[1], 0), err)) != 0 ||
                             (rc = dv_run_clock_spin(2 * TIMING_SPIN_CYCLES, clk->sms, clk->d_spin, err)) != 0 ||
                             (rc = DV_CUDA_CALL(cudaEventRecord(spin[2], 0), err)) != 0))
            goto cleanup;
        const double batch_start_ms = *gpu_ms;
        for (unsigned b = 0; b < rounds; b++) {
            for (unsigned r = 0; r < nrows; r++) {
                const size_t e = (size_t)b * nrows + r;
                if ((rc = DV_CUDA_CALL(cudaEventRecord(start[e], 0), err)) != 0) goto cleanup;
                if ((rc = launch(ctx, r, err)) != 0) goto cleanup;
                if ((rc = DV_CUDA_CALL(cudaEventRecord(stop[e], 0), err)) != 0) goto cleanup;
            }
        }
        if ((rc = DV_CUDA_CALL(cudaEventSynchronize(stop[(size_t)rounds * nrows - 1]), err)) != 0)
            goto cleanup;
        for (unsigned b = 0; b < rounds; b++) {
            for (unsigned r = 0; r < nrows; r++) {
                const size_t e = (size_t)b * nrows + r;
                float ms = 0;
                if ((rc = DV_CUDA_CALL(cudaEventElapsedTime(&ms, start[e], stop[e]), err)) != 0)
                    goto cleanup;
                samples[(size_t)r * max_s + taken + b] = ms;
                *gpu_ms += ms;
            }
        }
        if (sample_clock) {
            float one = 0, two = 0;
            if ((rc = DV_CUDA_CALL(cudaEventElapsedTime(&one, spin[0], spin[1]), err)) != 0 ||
                (rc = DV_CUDA_CALL(cudaEventElapsedTime(&two, spin[1], spin[2]), err)) != 0)
                goto cleanup;
            if (one <= 0 || two <= 0) {
                dv_seterr(err, "clock: spins of %lld and %lld cycles timed at %.6f and %.6f ms", TIMING_SPIN_CYCLES,
                          2 * TIMING_SPIN_CYCLES, one, two);
                rc = DV_ERR;
                goto cleanup;
            }
            /* Twice the cycles in twice the time (within 5%): the clock held,
             * and the difference cancels the launch cost. Otherwise the
             * clock moved between the spins (a GPU ramping up from idle
             * runs the first spin slow): the rounds that follow run at the
             * second spin's clock, so that is the sample. */
            const double ratio = (double)two / (double)one;
            const double mhz = ratio >= 1.9 && ratio <= 2.1 ? (double)TIMING_SPIN_CYCLES / ((double)(two - one) * 1e3)
                                                            : 2.0 * (double)TIMING_SPIN_CYCLES / ((double)two * 1e3);
            clocked_ms = batch_start_ms;
            clk->sum_mhz += mhz;
            if (clk->n == 0 || mhz < clk->min_mhz) clk->min_mhz = mhz;
            clk->n++;
        }
        taken += rounds;
        for (unsigned r = 0; r < nrows; r++) stats_compute(samples + (size_t)r * max_s, taken, scratch, &stats[r]);
        if (stats_should_stop(o, stats, nrows, taken, *gpu_ms)) break;
    }
cleanup:
    for (size_t e = 0; start && stop && e < nev; e++) {
        if (start[e]) cudaEventDestroy(start[e]);
        if (stop[e]) cudaEventDestroy(stop[e]);
    }
    for (unsigned e = 0; e < 3; e++)
        if (spin[e]) cudaEventDestroy(spin[e]);
    free(start);
    free(stop);
    free(samples);
    free(scratch);
    return rc;
}
