/* spread.c -- spread against interval, and the drift between halves
 * (spread.h). */
#include "kernels/model/stats/spread.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "kernels/model/stats/interval.h"

/* sqrt(pi / 2): a normal sample median's standard error in sds * sqrt(n). */
#define SQRT_HALF_PI 1.2533141373155003

/* z for a two-sided level: the normal quantile of (1 + level) / 2, by
 * bisection on erfc (levels are few and fixed; no table to keep in step). */
static double z_of(double level) {
    double lo = 0.0, hi = 10.0;
    for (int i = 0; i < 80; i++) {
        const double m = 0.5 * (lo + hi);
        if (erfc(m / sqrt(2.0)) > 1.0 - level) lo = m;
        else hi = m;
    }
    return 0.5 * (lo + hi);
}

/* The median's interval of s[0..n) (copied into scratch, reordered there). */
static int median_of(const double *s, unsigned n, double level, double *scratch, struct interval *out) {
    struct interval_ranks rk;
    if (interval_ranks(n, level, &rk, NULL) != 0) return DV_ERR;
    memcpy(scratch, s, n * sizeof(double));
    interval_median_select(scratch, &rk, 0.0, out);
    return 0;
}

int spread_measure(const double *s, unsigned n, double *scratch, struct spread *out, char *err) {
    memset(out, 0, sizeof(*out));
    out->excess = NAN;
    out->drift = NAN;
    if (n == 0) {
        dv_seterr(err, "spread: n: no samples");
        return DV_ERR;
    }
    double sum = 0;
    for (unsigned i = 0; i < n; i++) {
        if (!isfinite(s[i])) {
            dv_seterr(err, "spread: samples[%u]: %g is not finite", i, s[i]);
            return DV_ERR;
        }
        sum += s[i];
    }
    const double mean = sum / n;
    double var = 0;
    for (unsigned i = 0; i < n; i++) var += (s[i] - mean) * (s[i] - mean);
    const double sd = n > 1 ? sqrt(var / (n - 1)) : 0.0;
    out->noise = mean != 0 ? sd / fabs(mean) : 0.0;

    struct interval iv;
    median_of(s, n, INTERVAL_LEVEL, scratch, &iv);
    const double hw = 0.5 * (iv.hi - iv.lo);
    if (n > 1 && iv.level >= INTERVAL_LEVEL) {
        const double implied = hw * sqrt((double)n) / (z_of(INTERVAL_LEVEL) * SQRT_HALF_PI);
        out->excess = implied > 0 ? sd / implied : (sd > 0 ? INFINITY : 1.0);
        if (n >= SPREAD_MIN_SAMPLES) {
            if (out->excess > SPREAD_TAIL_EXCESS) out->flags |= SPREAD_TAIL;
            if (out->excess < SPREAD_SPLIT_EXCESS) out->flags |= SPREAD_SPLIT;
        }
    }

    const unsigned h = n / 2;
    if (h >= 1) {
        struct interval first, second;
        median_of(s, h, SPREAD_DRIFT_LEVEL, scratch, &first);
        median_of(s + (n - h), h, SPREAD_DRIFT_LEVEL, scratch, &second);
        if (first.point != 0) out->drift = second.point / first.point - 1.0;
        if (first.level >= SPREAD_DRIFT_LEVEL && second.level >= SPREAD_DRIFT_LEVEL &&
            (first.hi < second.lo || second.hi < first.lo))
            out->flags |= SPREAD_DRIFT;
    }
    return 0;
}

const char *spread_flags_text(unsigned flags, char *buf, unsigned len) {
    static const struct {
        unsigned bit;
        const char *word;
    } names[] = {{SPREAD_TAIL, "tail"}, {SPREAD_SPLIT, "split"}, {SPREAD_DRIFT, "drift"}};
    if (len == 0) return buf;
    buf[0] = '\0';
    size_t used = 0;
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        if (!(flags & names[i].bit)) continue;
        int w = snprintf(buf + used, len - used, "%s%s", used ? ", " : "", names[i].word);
        if (w < 0 || (size_t)w >= len - used) { /* keep whole words only */
            buf[used] = '\0';
            break;
        }
        used += (size_t)w;
    }
    return buf;
}
