/* ratio.c -- paired ratio intervals (ratio.h).
 *
 * Both methods work on the log scale, where a ratio is a difference and an
 * interval's two ends can be combined as distances from the point; the
 * result is turned back with exp(), so lo <= point <= hi always holds and
 * the reported point is exactly the ratio the method defines.
 */
#include "kernels/model/stats/ratio.h"

#include <math.h>
#include <string.h>

const char *ratio_method_name(int method) {
    switch (method) {
    case RATIO_OF_MEDIANS: return "ratio_of_medians";
    case RATIO_OF_ROUNDS: return "ratio_of_rounds";
    default: return "unknown";
    }
}

static int check_times(const double *s, unsigned n, const char *name, char *err) {
    for (unsigned i = 0; i < n; i++) {
        if (!(s[i] > 0.0) || !isfinite(s[i])) {
            dv_seterr(err, "ratio: %s[%u]: %g is not a finite positive time", name, i, s[i]);
            return DV_ERR;
        }
    }
    return 0;
}

/* The medial correlation of the pairs about the two sample medians: rounds
 * on the same side of both count +1, on opposite sides -1; rounds on a
 * median count in neither. Returns the counts. */
static void medial_counts(const double *row, const double *base, unsigned n, double mrow, double mbase, unsigned *same,
                          unsigned *opposite) {
    unsigned s = 0, o = 0;
    for (unsigned k = 0; k < n; k++) {
        const double a = row[k] - mrow, b = base[k] - mbase;
        if ((a > 0 && b > 0) || (a < 0 && b < 0)) s++;
        else if ((a > 0 && b < 0) || (a < 0 && b > 0)) o++;
    }
    *same = s;
    *opposite = o;
}

const struct interval *ratio_pick(const struct ratio_pair *p, int method) {
    switch (method) {
    case RATIO_OF_MEDIANS: return &p->of_medians;
    case RATIO_OF_ROUNDS: return &p->of_rounds;
    default: return NULL;
    }
}

/* exp(lp) with the ends dlo under and dhi over it, on the log scale. */
static void from_log(double lp, double dlo, double dhi, double level, struct interval *out) {
    out->point = exp(lp);
    out->lo = exp(lp - dlo);
    out->hi = exp(lp + dhi);
    out->level = level;
}

int ratio_paired(const double *row, const double *base, unsigned n, double level, double resolution, double *scratch,
                 struct ratio_pair *out, char *err) {
    struct interval_ranks rk;
    memset(out, 0, sizeof(*out));
    if (interval_ranks(n, level, &rk, err) != 0) return DV_ERR;
    if (!(resolution >= 0.0) || !isfinite(resolution)) {
        dv_seterr(err, "ratio: resolution: %g is not a finite step >= 0", resolution);
        return DV_ERR;
    }
    if (check_times(row, n, "row", err) != 0 || check_times(base, n, "baseline", err) != 0) return DV_ERR;

    double *a = scratch, *b = scratch + n;
    struct interval ir, ib;
    memcpy(a, row, n * sizeof(double));
    memcpy(b, base, n * sizeof(double));
    interval_median_select(a, &rk, 0.0, &ir);
    interval_median_select(b, &rk, 0.0, &ib);
    unsigned same, opposite;
    medial_counts(row, base, n, ir.point, ib.point, &same, &opposite);
    const unsigned counted = same + opposite;
    out->corr = counted ? ((double)same - (double)opposite) / (double)counted : 0.0;
    /* Half a step of each median, relative: the log-scale widening. */
    const double step = 0.5 * resolution / ir.point + 0.5 * resolution / ib.point;

    /* RATIO_OF_MEDIANS: the two medians' ends as distances from their
     * points on the log scale (a median's interval never reaches 0 for
     * positive samples); the ratio's low end pairs the row's low end with
     * the baseline's high end, and the other way round. */
    const double rho = counted ? 1.0 - 2.0 * (opposite ? (double)opposite : 0.5) / (double)counted : 0.0;
    const double am = log(ir.point) - log(ir.lo), ap = log(ir.hi) - log(ir.point);
    const double bm = log(ib.point) - log(ib.lo), bp = log(ib.hi) - log(ib.point);
    const double vl = am * am + bp * bp - 2.0 * rho * am * bp;
    const double vh = ap * ap + bm * bm - 2.0 * rho * ap * bm;
    from_log(log(ir.point) - log(ib.point), sqrt(vl > 0 ? vl : 0.0) + step, sqrt(vh > 0 ? vh : 0.0) + step, rk.level,
             &out->of_medians);

    /* RATIO_OF_ROUNDS: the median of the per-round log ratios. */
    for (unsigned k = 0; k < n; k++) a[k] = log(row[k] / base[k]);
    struct interval il;
    interval_median_select(a, &rk, 0.0, &il);
    from_log(il.point, il.point - il.lo + step, il.hi - il.point + step, rk.level, &out->of_rounds);
    return 0;
}
