/* ratio.h -- a row's time over its baseline's, with a 95% interval from the
 * paired rounds.
 *
 * Rows are sampled round-robin, so sample k of every row ran in round k,
 * under the same clock, temperature and neighbours: the pairs (row[k],
 * base[k]) are the unit of independence, not the samples. Two estimators
 * use the pairing; ratio_paired() computes both from one pass and the caller
 * reports one (enum ratio_method):
 *
 * RATIO_OF_MEDIANS (0, the figure the tables have always reported):
 *   median(row) / median(base). Its interval combines the two medians'
 *   order-statistic intervals (interval.h) on the log scale by the method of
 *   variance estimates recovery (Zou and Donner, 2008), which keeps the
 *   asymmetry of each end, with the correlation between the two sample
 *   medians in place of zero. That correlation is, asymptotically, the
 *   medial correlation of the pairs (Blomqvist's beta: the share of rounds on
 *   the same side of both medians minus the share on opposite sides), so it
 *   is counted, not modelled; the count of rounds on opposite sides is at
 *   least half a round, because at 10-20 rounds of strongly shared noise
 *   none may straddle the medians, and a correlation of exactly 1 would
 *   shrink the interval to nothing. Calibrated where each round's noise is
 *   the row's own (92.8-97.3% coverage in the tests, normal, two-cluster and
 *   heavy-tailed rows); where rounds share noise it errs wide (up to 98.5%
 *   with half the noise shared, 97.4-100% with most of it, 94-99% through a
 *   shared clock step). A ratio of two medians does not cancel shared noise
 *   round by round, so its true spread depends on how the two rows' ranks
 *   line up, which no distribution-free estimate (this one, or a paired
 *   bootstrap, which errs the same way) pins down at these sizes.
 *
 * RATIO_OF_ROUNDS (1): the median over rounds of row[k] / base[k], with the
 *   median's interval of interval.h over those ratios. Noise the round shares
 *   (a clock step, a warm GPU) cancels in each ratio before the median is
 *   taken, so the interval is exact in the same sense as a median's (the
 *   count of per-round ratios under the true one is Binomial(n, 1/2)):
 *   93.6-96.6% coverage in every simulated case where the two rows' noise
 *   has one shape, shared or not. It is as wide as RATIO_OF_MEDIANS' (within
 *   3%) when rounds share nothing, and a fifth to a third as wide when they
 *   share most of their noise, so the stopping rule ends sooner on the same
 *   rounds. It estimates the typical per-round ratio, which equals
 *   median(row) / median(base) when the two rows' noise has one shape; when
 *   it does not (a row with two clusters against a baseline with none) the
 *   two figures differ by about a sixth of the per-sample spread (0.15% at
 *   1% spread, 0.01% at 0.05%).
 *
 * `resolution` is the timer's step, as in interval.h: both ends widen by
 * half a step of each median, relative to the ratio.
 *
 * Pure functions, no allocation; the caller provides scratch space.
 */
#ifndef DV_RATIO_H
#define DV_RATIO_H

#include "kernels/model/stats/interval.h"

#ifdef __cplusplus
extern "C" {
#endif

enum ratio_method {
    RATIO_OF_MEDIANS = 0, /* median(row) / median(base), MOVER interval */
    RATIO_OF_ROUNDS = 1,  /* median_k(row[k] / base[k]), its own interval */
};

/* Both estimates of one ratio, from the same rounds: they share the sorting
 * of the two rows, so both cost little more than one, and a report can show
 * them side by side. */
struct ratio_pair {
    struct interval of_medians; /* RATIO_OF_MEDIANS */
    struct interval of_rounds;  /* RATIO_OF_ROUNDS */
    double corr;                /* medial correlation of the pairs, -1..1 */
};

/* The ratio of row[0..n) over base[0..n), paired by index (round), at
 * confidence `level`, by both methods, into `out` (each a point, lo, hi and
 * the level it attains: below the level asked for when n < 6 at 95%).
 * `scratch` holds 2 n doubles. Returns 0, or -1 with `err` naming the field
 * when n is 0, the level or resolution is out of range, or a sample is not
 * a finite positive time (naming the array and index). */
int ratio_paired(const double *row, const double *base, unsigned n, double level, double resolution, double *scratch,
                 struct ratio_pair *out, char *err);

/* The estimate of `method` in `p`; NULL for an unknown method. */
const struct interval *ratio_pick(const struct ratio_pair *p, int method);

/* Stable lower-case name of a method: "ratio_of_medians", "ratio_of_rounds";
 * "unknown" for anything else. */
const char *ratio_method_name(int method);

#ifdef __cplusplus
}
#endif

#endif /* DV_RATIO_H */
