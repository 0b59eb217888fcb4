/* fit.c -- T(x) = a + b x through a table's rows, per round (fit.h). */
#include "kernels/model/stats/fit.h"

#include <math.h>
#include <string.h>

/* The least-squares line through (x[i], y[i]) for the n points idx[]. */
static void line(const double *x, const double *y, const unsigned *idx, unsigned n, double *a, double *b) {
    double mx = 0, my = 0;
    for (unsigned i = 0; i < n; i++) {
        mx += x[idx[i]];
        my += y[idx[i]];
    }
    mx /= n;
    my /= n;
    double sxy = 0, sxx = 0;
    for (unsigned i = 0; i < n; i++) {
        const double dx = x[idx[i]] - mx;
        sxy += dx * (y[idx[i]] - my);
        sxx += dx * dx;
    }
    *b = sxx > 0 ? sxy / sxx : NAN;
    *a = my - *b * mx;
}

int fit_rounds(const double *samples, size_t stride, unsigned nrows, unsigned nrounds, const unsigned char *drop,
               const double *x, const int *use, const double *medians, double level, double *scratch,
               struct fit_result *out, char *err) {
    memset(out, 0, sizeof *out);
    unsigned idx[64], n = 0;
    int distinct = 0;
    for (unsigned r = 0; r < nrows && n < sizeof idx / sizeof idx[0]; r++) {
        if (!use[r]) continue;
        if (!(isfinite(x[r]))) {
            dv_seterr(err, "fit: row %u: x is not a number", r);
            return -1;
        }
        if (!(medians[r] > 0) || !isfinite(medians[r])) {
            dv_seterr(err, "fit: row %u: median %g is not a finite positive time", r, medians[r]);
            return -1;
        }
        distinct |= n > 0 && x[r] != x[idx[0]];
        idx[n++] = r;
    }
    if (n < 2 || !distinct) {
        dv_seterr(err, "fit: %u rows with %s x: a line needs two distinct", n, distinct ? "distinct" : "one");
        return -1;
    }
    double *av = scratch, *bv = scratch + nrounds, *rv = scratch + 2 * (size_t)nrounds,
           *work = scratch + 3 * (size_t)nrounds;
    double y[64];
    unsigned kept = 0;
    for (unsigned k = 0; k < nrounds; k++) {
        if (drop && drop[k]) continue;
        for (unsigned i = 0; i < n; i++) {
            const double v = samples[(size_t)idx[i] * stride + k];
            if (!(v > 0) || !isfinite(v)) {
                dv_seterr(err, "fit: row %u, round %u: %g is not a finite positive time", idx[i], k, v);
                return -1;
            }
            y[idx[i]] = v;
        }
        line(x, y, idx, n, &av[kept], &bv[kept]);
        rv[kept] = av[kept] != 0 ? bv[kept] / av[kept] : NAN;
        kept++;
    }
    if (kept == 0) {
        dv_seterr(err, "fit: rounds: none of the %u rounds was kept", nrounds);
        return -1;
    }
    if (interval_median(av, kept, level, 0.0, work, &out->a, err) != 0 ||
        interval_median(bv, kept, level, 0.0, work, &out->b, err) != 0)
        return -1;
    /* b / a: a round whose a is 0 has none; the rest have theirs. */
    unsigned nr = 0;
    for (unsigned k = 0; k < kept; k++)
        if (isfinite(rv[k])) rv[nr++] = rv[k];
    if (nr == 0 || interval_median(rv, nr, level, 0.0, work, &out->b_over_a, err) != 0) {
        const struct interval none = {NAN, NAN, NAN, NAN};
        out->b_over_a = none;
    }
    double am, bm, ss = 0, worst = 0;
    line(x, medians, idx, n, &am, &bm);
    for (unsigned i = 0; i < n; i++) {
        const double res = medians[idx[i]] - (am + bm * x[idx[i]]);
        ss += res * res;
        if (fabs(res) / medians[idx[i]] > worst) worst = fabs(res) / medians[idx[i]];
    }
    out->rms = sqrt(ss / n);
    out->max_rel = worst;
    out->points = n;
    out->rounds = kept;
    return 0;
}
