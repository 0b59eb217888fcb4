/* test_compare.c -- nights compared: the labels on hand-built pairs, the
 * change interval's coverage over 1,000 simulated pairs of nights, an A/A
 * run labelled same and a planted 5% change labelled higher, and the
 * comparison with the median of the last nights. */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <math.h>
#include <stdlib.h>

#include "kernels/model/stats/compare.h"
#include "kernels/model/stats/ratio.h"
#include "tests/kernels/model/stats/synth.h"

#define RUNS 1000
#define T COMPARE_DEFAULT_TOLERANCE

static struct interval at(double point, double lo, double hi) {
    struct interval v = {.point = point, .lo = lo, .hi = hi, .level = 0.95};
    return v;
}

static enum compare_label label(struct interval before, struct interval after) {
    struct compare c;
    char err[ERR_LEN];
    cr_assert_eq(compare_pair(&before, &after, T, &c, err), 0, "%s", err);
    return c.label;
}

Test(compare, an_identical_night_is_the_same_with_a_change_of_zero) {
    const struct interval a = at(1.951, 1.948, 1.954);
    struct compare c;
    char err[ERR_LEN];
    cr_assert_eq(compare_pair(&a, &a, T, &c, err), 0, "%s", err);
    cr_assert_eq(c.label, COMPARE_SAME);
    cr_assert_float_eq(c.change.point, 0, 1e-15);
    cr_assert(c.change.lo < 0 && c.change.hi > 0);
    /* The ends add in quadrature on the log scale: the high end of the
     * change takes after's high side and before's low side. */
    const double up = log(1.954 / 1.951), down = log(1.951 / 1.948);
    cr_assert_float_eq(c.change.hi, expm1(sqrt(up * up + down * down)), 1e-12);
    cr_assert_float_eq(c.change.lo, expm1(-sqrt(up * up + down * down)), 1e-12);
    cr_assert_str_eq(compare_label_name(c.label), "same");
}

Test(compare, a_planted_five_percent_change_is_higher_by_five_percent) {
    /* One row at 4,300 iterations against 4,096. */
    const struct interval before = at(1.951, 1.948, 1.954);
    const double k = 4300.0 / 4096.0;
    const struct interval after = at(1.951 * k, 1.948 * k, 1.954 * k);
    struct compare c;
    char err[ERR_LEN];
    cr_assert_eq(compare_pair(&before, &after, T, &c, err), 0);
    cr_assert_eq(c.label, COMPARE_HIGHER);
    cr_assert_float_eq(c.change.point, k - 1, 1e-12);
    cr_assert(c.change.lo > 0.045 && c.change.hi < 0.053, "[%g, %g]", c.change.lo, c.change.hi);
    cr_assert_eq(compare_pair(&after, &before, T, &c, err), 0);
    cr_assert_eq(c.label, COMPARE_LOWER);
    cr_assert_float_eq(c.change.point, 1 / k - 1, 1e-12);
}

Test(compare, labels_follow_where_the_change_interval_lies_against_the_tolerance) {
    const struct interval one = at(1, 1, 1); /* an exact reference */
    cr_assert_eq(label(one, at(1.005, 1.002, 1.008)), COMPARE_SAME, "a real but small change is within tolerance");
    cr_assert_eq(label(one, at(1.02, 1.012, 1.028)), COMPARE_HIGHER);
    cr_assert_eq(label(one, at(0.98, 0.972, 0.988)), COMPARE_LOWER);
    cr_assert_eq(label(one, at(1.01, 1.005, 1.015)), COMPARE_AMBIGUOUS, "straddles +1%%: cannot tell");
    cr_assert_eq(label(one, at(1.0, 0.95, 1.05)), COMPARE_AMBIGUOUS, "too wide to tell");
    cr_assert_eq(label(one, at(1.0, 0.9901, 1.0099)), COMPARE_SAME, "just inside the band's edges");
    cr_assert_eq(label(one, at(1.0, 0.9899, 1.0099)), COMPARE_AMBIGUOUS, "just outside one of them");
}

Test(compare, a_night_short_of_its_level_is_ambiguous) {
    struct interval short_night = at(1.95, 1.949, 1.951);
    short_night.level = 0.75;
    cr_assert_eq(label(at(1.95, 1.949, 1.951), short_night), COMPARE_AMBIGUOUS);
    cr_assert_eq(label(at(1.95, 1.949, 1.951), at(2.5, 2.49, 2.51)), COMPARE_HIGHER);
    short_night.point = short_night.lo = short_night.hi = 2.5;
    cr_assert_eq(label(at(1.95, 1.949, 1.951), short_night), COMPARE_AMBIGUOUS, "even far away");
}

Test(compare, bad_input_names_the_field) {
    struct compare c;
    char err[ERR_LEN];
    const struct interval ok = at(1, 0.9, 1.1);
    struct interval bad = at(1, 1.1, 1.2);
    cr_assert_eq(compare_pair(&ok, &bad, T, &c, err), DV_ERR);
    cr_assert_str_eq(err, "compare: after: interval [1.1, 1.2] does not hold its ratio 1");
    bad = at(1, 0, 1.2);
    cr_assert_eq(compare_pair(&bad, &ok, T, &c, err), DV_ERR);
    cr_assert_str_eq(err, "compare: before: the ratio and its interval must be finite and positive");
    cr_assert_eq(compare_pair(&ok, &ok, 1.0, &c, err), DV_ERR);
    cr_assert_str_eq(err, "compare: tolerance: 1 is outside [0, 1)");
    cr_assert_eq(compare_history(&ok, 0, &ok, T, NULL, &c, err), DV_ERR);
    cr_assert_str_eq(err, "compare: nights: none to compare with");
    const struct interval nights[2] = {ok, bad};
    double scratch[2];
    cr_assert_eq(compare_history(nights, 2, &ok, T, scratch, &c, err), DV_ERR);
    cr_assert_str_eq(err, "compare: nights[1]: the ratio and its interval must be finite and positive");
    cr_assert_str_eq(compare_label_name(COMPARE_AMBIGUOUS), "ambiguous");
    cr_assert_str_eq(compare_label_name(7), "unknown");
}

/* One simulated night: a row `scale` times A over its baseline, `n` rounds
 * of the given shape, the ratio by `method`. */
#define A 1.95
static struct interval night(struct synth *g, unsigned n, enum synth_shape shape, double noise, double scale,
                             enum ratio_method method, double *row, double *base, double *scratch) {
    for (unsigned k = 0; k < n; k++) {
        row[k] = scale * A * synth_draw(g, shape, noise);
        base[k] = synth_draw(g, shape, noise);
    }
    struct ratio_pair p;
    char err[ERR_LEN];
    cr_assert_eq(ratio_paired(row, base, n, 0.95, 0, scratch, &p, err), 0, "%s", err);
    return *ratio_pick(&p, method);
}

/* The change interval covers the true change (none, or +5%) as often as
 * the nights' intervals promise: 92-98% over 1,000 pairs. */
Test(compare, the_change_interval_covers_the_true_change) {
    static const unsigned sizes[] = {10, 20, 50, 200, 2000};
    static const enum synth_shape shapes[] = {SYNTH_NORMAL, SYNTH_CLUSTERS, SYNTH_PARETO};
    static double row[2000], base[2000], scratch[4000];
    for (unsigned si = 0; si < 3; si++) {
        for (unsigned i = 0; i < 5; i++) {
            struct synth g;
            synth_seed(&g, 700 + 10 * si + i);
            const double noise = i % 2 ? 0.01 : 0.0005;
            const double planted = i % 2 ? 1.05 : 1.0;
            unsigned hit = 0;
            for (unsigned run = 0; run < RUNS; run++) {
                const struct interval a =
                    night(&g, sizes[i], shapes[si], noise, 1.0, RATIO_OF_ROUNDS, row, base, scratch);
                const struct interval b =
                    night(&g, sizes[i], shapes[si], noise, planted, RATIO_OF_ROUNDS, row, base, scratch);
                struct compare c;
                char err[ERR_LEN];
                cr_assert_eq(compare_pair(&a, &b, T, &c, err), 0, "%s", err);
                hit += c.change.lo <= planted - 1 && planted - 1 <= c.change.hi;
            }
            const double cov = (double)hit / RUNS;
            cr_log_info("coverage change %s n=%u noise=%.2f%% change %+.0f%%: %.1f%%", synth_name(shapes[si]), sizes[i],
                        100 * noise, 100 * (planted - 1), 100 * cov);
            cr_expect(cov >= 0.92 && cov <= 0.98, "%s n=%u: coverage %.3f outside 92-98%%", synth_name(shapes[si]),
                      sizes[i], cov);
        }
    }
}

/* An A/A run: the same table on two nights, with a night-to-night wander
 * of 0.2% that no night's interval sees, 200 rounds a night at 0.5% spread:
 * at least 95% of 1,000 pairs read "same". The same nights with one row
 * planted 5% higher read "higher" every time. */
Test(compare, an_aa_run_reads_same_and_a_planted_change_reads_higher) {
    static double row[200], base[200], scratch[400];
    struct synth g;
    synth_seed(&g, 800);
    unsigned same = 0, higher = 0;
    for (unsigned run = 0; run < RUNS; run++) {
        const double wander_a = exp(0.002 * synth_normal(&g)), wander_b = exp(0.002 * synth_normal(&g));
        const struct interval a = night(&g, 200, SYNTH_NORMAL, 0.005, wander_a, RATIO_OF_MEDIANS, row, base, scratch);
        const struct interval b = night(&g, 200, SYNTH_NORMAL, 0.005, wander_b, RATIO_OF_MEDIANS, row, base, scratch);
        const struct interval p =
            night(&g, 200, SYNTH_NORMAL, 0.005, wander_b * 4300.0 / 4096.0, RATIO_OF_MEDIANS, row, base, scratch);
        same += label(a, b) == COMPARE_SAME;
        higher += label(a, p) == COMPARE_HIGHER;
    }
    cr_log_info("A/A: %u of %u same; planted +5%%: %u of %u higher", same, RUNS, higher, RUNS);
    cr_expect_geq(same, 950);
    cr_expect_eq(higher, RUNS);
}

Test(compare, against_the_median_of_the_last_nights) {
    /* Ten nights wandering by 0.3%, each known to 0.1%. */
    struct interval nights[10];
    const double wander[10] = {1.000, 1.003, 0.998, 1.001, 0.997, 1.002, 1.000, 0.999, 1.004, 0.996};
    for (int i = 0; i < 10; i++) nights[i] = at(A * wander[i], A * wander[i] * 0.999, A * wander[i] * 1.001);
    double scratch[10];
    struct compare c;
    char err[ERR_LEN];
    const struct interval tonight = at(A * 1.001, A * 1.000, A * 1.002);
    cr_assert_eq(compare_history(nights, 10, &tonight, T, scratch, &c, err), 0, "%s", err);
    cr_assert_eq(c.label, COMPARE_SAME);
    cr_assert_float_eq(c.reference.point, A * 1.0, 1e-12, "the median of the ten");
    /* The reference holds the nights' own wander, wider than one night's. */
    cr_assert_lt(c.reference.lo, A * 0.999 * 0.999);
    cr_assert_gt(c.reference.hi, A * 1.001 * 1.001);
    const struct interval up = at(A * 1.05, A * 1.049, A * 1.051);
    cr_assert_eq(compare_history(nights, 10, &up, T, scratch, &c, err), 0);
    cr_assert_eq(c.label, COMPARE_HIGHER);
    cr_assert(fabs(c.change.point - 0.05) < 1e-9, "%g", c.change.point);
    /* Three nights: too few for their own interval; the middle night's. */
    cr_assert_eq(compare_history(nights, 3, &tonight, T, scratch, &c, err), 0);
    cr_assert_float_eq(c.reference.point, A * 1.000, 1e-12);
    cr_assert_float_eq(c.reference.lo, A * 0.999, 1e-12);
    cr_assert_float_eq(c.reference.hi, A * 1.001, 1e-12);
    /* Two nights: the middle is both; their hull. */
    cr_assert_eq(compare_history(nights, 2, &tonight, T, scratch, &c, err), 0);
    cr_assert_float_eq(c.reference.point, A * 1.0015, 1e-12);
    cr_assert_float_eq(c.reference.lo, A * 0.999, 1e-12);
    cr_assert_float_eq(c.reference.hi, A * 1.003 * 1.001, 1e-12);
    /* One night: the pair comparison. */
    struct compare pair;
    cr_assert_eq(compare_history(nights, 1, &up, T, scratch, &c, err), 0);
    cr_assert_eq(compare_pair(&nights[0], &up, T, &pair, err), 0);
    cr_assert_float_eq(c.change.lo, pair.change.lo, 1e-15);
    cr_assert_eq(c.label, pair.label);
}
