/* spread.h -- whether a row's per-sample spread tells the same story as its
 * median's interval, and flags for the row when it does not.
 *
 * The per-sample spread (stdev / mean) stays a reported figure, but it is
 * not how well the median is known. The median's interval width measures
 * the density of samples at the median; were the samples normal, that
 * density fixes the standard deviation:
 *   implied stdev = half-width * sqrt(n) / (z * sqrt(pi / 2)),
 * since a normal sample's median has standard error sqrt(pi / 2) sd /
 * sqrt(n). `excess` = stdev / implied stdev is about 1 for a normal or mildly
 * skewed row (1st to 99th percentile of simulated normal rows: 0.65-2.1 at
 * n = 20, 0.8-1.3 at n = 2000; typically 1.2 for an exponential tail), and
 * it moves far from 1 in the two ways a timed row goes wrong:
 *
 * SPREAD_TAIL   excess > 3: most samples sit tight around the median and a
 *               few far away (late launches, a second cluster of a few
 *               percent of rounds) inflate the stdev. The median is well
 *               known; the spread overstates its uncertainty. (5% of rounds
 *               8% late: excess 8; a Pareto tail of index 2.5: typically
 *               2-3, so about half such rows of 2,000 samples.)
 * SPREAD_SPLIT  excess < 0.4: the median falls between two clusters of
 *               comparable size, where few samples lie, so its interval is
 *               wide for the stdev (two equal clusters 5 sd apart: excess
 *               0.34 at n = 200, 0.19 at n = 2000).
 * SPREAD_DRIFT  the first and the second half of the rounds have disjoint
 *               99.9% intervals for their medians: the level moved during the
 *               run (a clock or temperature change), which no
 *               identically-distributed model of the samples allows. A
 *               stationary row shows this far less than once in a thousand.
 *
 * The first two need at least SPREAD_MIN_SAMPLES samples (below that a
 * single late launch swings the stdev either way); the drift test needs two
 * halves of at least 12 (the smallest sample with a 99.9% interval).
 * Host-only and pure; the caller provides scratch space.
 */
#ifndef DV_SPREAD_H
#define DV_SPREAD_H

#include "kernels/base/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SPREAD_TAIL 1u
#define SPREAD_SPLIT 2u
#define SPREAD_DRIFT 4u

#define SPREAD_TAIL_EXCESS 3.0
#define SPREAD_SPLIT_EXCESS 0.4
#define SPREAD_MIN_SAMPLES 20u
#define SPREAD_DRIFT_LEVEL 0.999

struct spread {
    double noise;   /* stdev / mean, the per-sample spread */
    double excess;  /* stdev / the stdev the median's interval implies */
    double drift;   /* median of the second half over the first, - 1 */
    unsigned flags; /* SPREAD_* bits */
};

/* The spread of s[0..n), in round order (the drift test splits them by
 * time), into `out`. `scratch` holds n doubles. Returns 0, or -1 with `err`
 * when n is 0 or a sample is not finite (naming its index). Flags need
 * enough samples (above); with fewer they are 0, and `excess` and `drift`
 * are still computed where they can be (NaN where they cannot). */
int spread_measure(const double *s, unsigned n, double *scratch, struct spread *out, char *err);

/* The flags as words for a row's note: "tail", "split", "drift" joined with
 * ", " into buf (len bytes); "" when none. Returns buf. */
const char *spread_flags_text(unsigned flags, char *buf, unsigned len);

#ifdef __cplusplus
}
#endif

#endif /* DV_SPREAD_H */
