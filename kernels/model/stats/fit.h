/* fit.h -- a straight line through a table's rows, T(x) = a + b x, with
 * intervals from the paired rounds.
 *
 * The rows of a round ran under the same clock and temperature, one after
 * the other, so each kept round gives its own least-squares line through
 * the rows it fits (a_k, b_k, and b_k / a_k). The figures reported are the
 * medians over the rounds, each with the distribution-free interval of a
 * median (interval.h: the order statistics of the per-round values), the
 * method the tables' ratios use (ratio.h's RATIO_OF_ROUNDS): noise a round
 * shares moves that round's line, not the median's place among them. The
 * residual is that of the line through the rows' medians: its root mean
 * square, and its largest absolute value relative to the row's median.
 *
 * Pure functions of the samples; the caller gives scratch space.
 */
#ifndef DV_FIT_H
#define DV_FIT_H

#include <stddef.h>

#include "kernels/model/stats/interval.h"

#ifdef __cplusplus
extern "C" {
#endif

struct fit_result {
    unsigned points, rounds;
    struct interval a, b, b_over_a;
    double rms;     /* of the medians' line, in the samples' unit  */
    double max_rel; /* max |median - (a + b x)| / median           */
};

/* The fit of rows r with use[r] set (x[r] their x; at least two distinct)
 * over the rounds k < nrounds not marked in `drop` (NULL: none):
 * samples[r * stride + k] is row r's time in round k, medians[r] its median
 * over those rounds. `scratch` holds 4 * nrounds doubles. Returns 0, or -1
 * with `err` (fewer than two distinct x, no round kept, a sample or median
 * that is not a finite positive time, naming the row). */
int fit_rounds(const double *samples, size_t stride, unsigned nrows, unsigned nrounds, const unsigned char *drop,
               const double *x, const int *use, const double *medians, double level, double *scratch,
               struct fit_result *out, char *err);

#ifdef __cplusplus
}
#endif

#endif /* DV_FIT_H */
