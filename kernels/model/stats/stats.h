/* stats.h -- a table's statistics from its timed samples: per row the
 * summary (median, min, max, mean, stdev, noise), the median's interval,
 * the ratio to the baseline with its paired interval and the spread flags,
 * all from the rounds the throttle guard kept.
 *
 * This is the one call the timing loop makes per batch (stats_table), and
 * the one place that decides which intervals the stopping rule reads
 * (stats_judged); the methods live in their own units: interval.h (the
 * median), ratio.h (the paired ratio), spread.h (the flags), throttle.h
 * (dropped rounds), stoprule.h (when to stop). Host-only, so it is tested
 * without a GPU.
 */
#ifndef DV_STATS_H
#define DV_STATS_H

#include <stddef.h>

#include "kernels/model/model/types.h"
#include "kernels/model/stats/interval.h"
#include "kernels/model/stats/ratio.h"
#include "kernels/model/stats/spread.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Median, min, max, mean, sample stdev and noise of s[0..n) into `out`.
 * `scratch` holds n doubles (the samples are reordered there, not in
 * place). */
void stats_compute(const double *s, unsigned n, double *scratch, struct dv_stats *out);

/* The sample bounds a request asks for: min from o->min_samples (default
 * DV_DEFAULT_MIN_SAMPLES), max from o->max_samples, never below min. */
void stats_sample_bounds(const struct dv_options *o, unsigned *min_samples, unsigned *max_samples);

/* How a table's intervals are made. */
struct stats_config {
    double level;             /* confidence, INTERVAL_LEVEL */
    double resolution;        /* the timer's step in the samples' unit; 0: none */
    enum ratio_method method; /* RATIO_OF_MEDIANS keeps the tables' figure */
};

/* level INTERVAL_LEVEL, resolution 0, method RATIO_OF_MEDIANS. */
void stats_config_default(struct stats_config *c);

/* One row's statistics over the kept rounds. */
struct stats_row {
    struct dv_stats summary; /* as stats_compute; samples = rounds kept */
    struct interval median;  /* the median time and its interval */
    /* Over the baseline row, by the configured method; the baseline's own
     * is exactly 1 [1, 1]. */
    struct interval ratio;
    /* Both methods and the medial correlation with the baseline (ratio.h),
     * for a side-by-side. */
    struct ratio_pair ratios;
    struct spread spread; /* per-sample spread, excess, drift, flags */
    unsigned dropped;     /* rounds the throttle guard dropped (the table's) */
};

/* The statistics of a table of `nrows` rows: samples[r * stride + k] is row
 * r's sample of round k, k < nrounds (stride >= nrounds). `drop` is NULL or
 * the per-round marks of throttle_mark(): marked rounds leave every row.
 * `baseline` < nrows is the row the ratios are over. `scratch` holds
 * 4 * nrounds doubles. Fills out[0..nrows) and *kept (rounds kept). Returns
 * 0, or -1 with `err` (a bad configuration, no round kept, a baseline out of
 * range, or a sample that is not a finite positive time, naming the row and
 * round). */
int stats_table(const double *samples, size_t stride, unsigned nrows, unsigned nrounds, const unsigned char *drop,
                unsigned baseline, const struct stats_config *c, double *scratch, struct stats_row *out, unsigned *kept,
                char *err);

/* stats_table() with a reference row per row: row r's ratio is over row
 * ref[r] (the same rounds kept), 1 [1, 1] where ref[r] is r; NULL is
 * `baseline` for every row. A reference out of range is an error. */
int stats_table_ref(const double *samples, size_t stride, unsigned nrows, unsigned nrounds, const unsigned char *drop,
                    unsigned baseline, const unsigned *ref, const struct stats_config *c, double *scratch,
                    struct stats_row *out, unsigned *kept, char *err);

/* The intervals the stopping rule reads: every row's ratio but the
 * baseline's (which is 1 by definition), or the baseline's median when the
 * table has no other row. Writes them to out (room for nrows) and returns
 * how many; idx, when not NULL, receives the row of each. */
unsigned stats_judged(const struct stats_row *rows, unsigned nrows, unsigned baseline, struct interval *out,
                      unsigned *idx);

#ifdef __cplusplus
}
#endif

#endif /* DV_STATS_H */
