/* stats.c -- sample statistics and the stdrel stopping rule (stats.h). */
#include "kernels/model/stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void stats_compute(const double *s, unsigned n, double *scratch, struct dv_stats *out) {
    memset(out, 0, sizeof(*out));
    out->samples = n;
    if (n == 0) return;
    double sum = 0;
    for (unsigned i = 0; i < n; i++) sum += s[i];
    out->mean = sum / n;
    double var = 0;
    for (unsigned i = 0; i < n; i++) var += (s[i] - out->mean) * (s[i] - out->mean);
    out->stdev = n > 1 ? sqrt(var / (n - 1)) : 0.0;
    memcpy(scratch, s, n * sizeof(double));
    qsort(scratch, n, sizeof(double), cmp_double);
    out->min = scratch[0];
    out->max = scratch[n - 1];
    out->median = (n & 1) ? scratch[n / 2] : 0.5 * (scratch[n / 2 - 1] + scratch[n / 2]);
    out->noise = out->mean > 0 ? out->stdev / out->mean : 0.0;
}

void stats_sample_bounds(const struct dv_options *o, unsigned *min_samples, unsigned *max_samples) {
    const unsigned lo = o->min_samples ? o->min_samples : DV_DEFAULT_MIN_SAMPLES;
    unsigned hi = o->max_samples;
    if (hi < lo) hi = lo > DV_DEFAULT_MAX_SAMPLES ? lo : DV_DEFAULT_MAX_SAMPLES;
    *min_samples = lo;
    *max_samples = hi;
}

int stats_should_stop(const struct dv_options *o, const struct dv_stats *rows, unsigned nrows,
                      unsigned taken, double gpu_ms) {
    unsigned lo, hi;
    stats_sample_bounds(o, &lo, &hi);
    if (taken >= hi) return 1;
    if (taken < lo) return 0;
    if (gpu_ms >= o->budget_ms) return 1;
    for (unsigned r = 0; r < nrows; r++)
        if (rows[r].noise > o->max_noise) return 0;
    return 1;
}
