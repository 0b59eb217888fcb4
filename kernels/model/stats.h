/* stats.h -- summary statistics of timed samples and the stopping rule.
 *
 * The stopping rule is its own unit, so that it can be read, changed and
 * tested apart from the GPU loop that obeys it: a table keeps sampling until every row has its minimum samples and a relative
 * standard deviation (stdev / mean) at or under the target, or its GPU-time
 * budget or sample cap is spent. Host-only, so it is tested without a GPU.
 */
#ifndef DV_STATS_H
#define DV_STATS_H

#include "kernels/model/experiment.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Median, min, max, mean, sample stdev and noise of s[0..n) into `out`.
 * `scratch` holds n doubles (the samples are sorted there, not in place). */
void stats_compute(const double *s, unsigned n, double *scratch, struct dv_stats *out);

/* The sample bounds a request asks for: min from o->min_samples (default
 * DV_DEFAULT_MIN_SAMPLES), max from o->max_samples, never below min. */
void stats_sample_bounds(const struct dv_options *o, unsigned *min_samples, unsigned *max_samples);

/* Whether a table may stop sampling: 1 when `taken` >= min samples and every
 * row's noise is at or under o->max_noise, or gpu_ms >= o->budget_ms, or
 * taken >= max samples; 0 to sample another batch. */
int stats_should_stop(const struct dv_options *o, const struct dv_stats *rows, unsigned nrows,
                      unsigned taken, double gpu_ms);

#ifdef __cplusplus
}
#endif

#endif /* DV_STATS_H */
