/* compare.c -- nights compared (compare.h). */
#include "kernels/model/stats/compare.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

const char *compare_label_name(int label) {
    switch (label) {
    case COMPARE_SAME: return "same";
    case COMPARE_HIGHER: return "higher";
    case COMPARE_LOWER: return "lower";
    case COMPARE_AMBIGUOUS: return "ambiguous";
    default: return "unknown";
    }
}

static int check_interval(const struct interval *iv, const char *name, char *err) {
    if (!isfinite(iv->point) || !isfinite(iv->lo) || !isfinite(iv->hi) || !(iv->lo > 0)) {
        dv_seterr(err, "compare: %s: the ratio and its interval must be finite and positive", name);
        return DV_ERR;
    }
    if (!(iv->lo <= iv->point && iv->point <= iv->hi)) {
        dv_seterr(err, "compare: %s: interval [%g, %g] does not hold its ratio %g", name, iv->lo, iv->hi, iv->point);
        return DV_ERR;
    }
    if (!(iv->level >= 0 && iv->level <= 1)) {
        dv_seterr(err, "compare: %s: level %g is outside [0, 1]", name, iv->level);
        return DV_ERR;
    }
    return 0;
}

static int check_tolerance(double t, char *err) {
    if (!(t >= 0 && t < 1)) {
        dv_seterr(err, "compare: tolerance: %g is outside [0, 1)", t);
        return DV_ERR;
    }
    return 0;
}

/* Both checked. */
static void compare_checked(const struct interval *before, const struct interval *after, double tolerance,
                            struct compare *out) {
    const double d = log(after->point) - log(before->point);
    const double am = log(after->point) - log(after->lo), ap = log(after->hi) - log(after->point);
    const double bm = log(before->point) - log(before->lo), bp = log(before->hi) - log(before->point);
    /* The change's low end: after at its low end, before at its high end. */
    const double lo = d - sqrt(am * am + bp * bp), hi = d + sqrt(ap * ap + bm * bm);
    out->reference = *before;
    out->change.point = expm1(d);
    out->change.lo = expm1(lo);
    out->change.hi = expm1(hi);
    out->change.level = before->level < after->level ? before->level : after->level;
    const double t = tolerance;
    if (out->change.level < INTERVAL_LEVEL - 1e-9) out->label = COMPARE_AMBIGUOUS;
    else if (out->change.lo >= -t && out->change.hi <= t) out->label = COMPARE_SAME;
    else if (out->change.lo > t) out->label = COMPARE_HIGHER;
    else if (out->change.hi < -t) out->label = COMPARE_LOWER;
    else out->label = COMPARE_AMBIGUOUS;
}

int compare_pair(const struct interval *before, const struct interval *after, double tolerance, struct compare *out,
                 char *err) {
    memset(out, 0, sizeof(*out));
    out->label = COMPARE_AMBIGUOUS;
    if (check_interval(before, "before", err) != 0 || check_interval(after, "after", err) != 0 ||
        check_tolerance(tolerance, err) != 0)
        return DV_ERR;
    compare_checked(before, after, tolerance, out);
    return 0;
}

int compare_history(const struct interval *nights, unsigned n, const struct interval *after, double tolerance,
                    double *scratch, struct compare *out, char *err) {
    memset(out, 0, sizeof(*out));
    out->label = COMPARE_AMBIGUOUS;
    if (n == 0) {
        dv_seterr(err, "compare: nights: none to compare with");
        return DV_ERR;
    }
    char name[32];
    for (unsigned i = 0; i < n; i++) {
        snprintf(name, sizeof(name), "nights[%u]", i);
        if (check_interval(&nights[i], name, err) != 0) return DV_ERR;
    }
    if (check_interval(after, "after", err) != 0 || check_tolerance(tolerance, err) != 0) return DV_ERR;

    for (unsigned i = 0; i < n; i++) scratch[i] = nights[i].point;
    interval_sort(scratch, n);
    struct interval_ranks rk;
    struct interval ref;
    interval_ranks(n, INTERVAL_LEVEL, &rk, NULL); /* n >= 1, level valid */
    interval_median_sorted(scratch, &rk, 0.0, &ref);
    /* The middle nights: those whose ratio is a middle order statistic. */
    const double m1 = scratch[(n - 1) / 2], m2 = scratch[n / 2];
    double lo = INFINITY, hi = -INFINITY, level = 1.0;
    for (unsigned i = 0; i < n; i++) {
        if (nights[i].point < m1 || nights[i].point > m2) continue;
        if (nights[i].lo < lo) lo = nights[i].lo;
        if (nights[i].hi > hi) hi = nights[i].hi;
        if (nights[i].level < level) level = nights[i].level;
    }
    if (rk.level >= INTERVAL_LEVEL) { /* enough nights for their own interval */
        if (ref.lo < lo) lo = ref.lo;
        if (ref.hi > hi) hi = ref.hi;
    }
    ref.lo = lo < ref.point ? lo : ref.point;
    ref.hi = hi > ref.point ? hi : ref.point;
    ref.level = level;
    compare_checked(&ref, after, tolerance, out);
    return 0;
}
