/* compare.h -- did a ratio change between two nights? A label, the change
 * and its 95% interval.
 *
 * Two nights' measurements of one ratio are independent (different runs,
 * often different processes), each with its own interval (ratio.h). The
 * change is after / before - 1; its interval combines the two intervals'
 * ends on the log scale by the method of variance estimates recovery
 * (Zou and Donner, 2008), the ends of independent estimates adding in
 * quadrature, which keeps each interval's asymmetry and needs no samples.
 *
 * The label says what that interval proves about the change against a
 * tolerance t (a relative change too small to matter; COMPARE_DEFAULT_
 * TOLERANCE):
 *   same       the whole interval lies within [-t, +t]: no change beyond t;
 *   higher     the whole interval lies above +t: up by more than t;
 *   lower      the whole interval lies below -t: down by more than t;
 *   ambiguous  anything else: the interval reaches both inside and outside
 *              the band, so the data cannot tell a change beyond t from none.
 * A night whose interval falls short of the nominal level (too few rounds)
 * proves nothing at that level: its comparisons are ambiguous. Each label is
 * a claim at 95%, so an unchanged ratio measured to within a half-width h on
 * both nights reads "same" as long as its night-to-night wander stays under
 * t - 1.4 h; a 5% change with t = 1% and h = 0.5% reads "higher".
 *
 * The tolerance must cover what moves a ratio between nights without a
 * cause (a reboot, another process's memory placement), which no single
 * night's interval sees; an A/A run (the same measurement on two nights)
 * shows how much that is.
 *
 * Against the last N nights, the reference is the median of their ratios.
 * Its interval is the hull of the middle nights' own intervals and, from
 * six nights on, of the order-statistic interval of the N ratios
 * (interval.h), which holds the night-to-night wander the single intervals
 * miss. Host-only and pure.
 */
#ifndef DV_COMPARE_H
#define DV_COMPARE_H

#include "kernels/model/stats/interval.h"

#ifdef __cplusplus
extern "C" {
#endif

#define COMPARE_DEFAULT_TOLERANCE 0.01 /* a 1% change */

enum compare_label {
    COMPARE_SAME = 0,
    COMPARE_HIGHER,
    COMPARE_LOWER,
    COMPARE_AMBIGUOUS,
};

struct compare {
    enum compare_label label;
    struct interval reference; /* what `after` was compared with */
    struct interval change;    /* after / reference - 1, with its interval */
};

/* Compares `after` with `before` (each a point and its interval, all > 0,
 * lo <= point <= hi) at `tolerance` (a relative change in [0, 1)). Returns
 * 0, or -1 with `err` naming the field (before / after / tolerance) and the
 * reason. */
int compare_pair(const struct interval *before, const struct interval *after, double tolerance, struct compare *out,
                 char *err);

/* Compares `after` with the median of nights[0..n) (n >= 1, any order), as
 * above. `scratch` holds n doubles. Returns 0, or -1 with `err` naming the
 * field (nights[i], after, tolerance). */
int compare_history(const struct interval *nights, unsigned n, const struct interval *after, double tolerance,
                    double *scratch, struct compare *out, char *err);

/* Stable lower-case name of a label: "same", "higher", "lower",
 * "ambiguous"; "unknown" otherwise. */
const char *compare_label_name(int label);

#ifdef __cplusplus
}
#endif

#endif /* DV_COMPARE_H */
