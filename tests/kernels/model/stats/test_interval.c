/* test_interval.c -- the median's distribution-free interval: its ranks
 * against the binomial summed directly, its contract, and its coverage of
 * the true median over 1,000 simulated rows per case (synth.h). */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <math.h>
#include <stdlib.h>

#include "kernels/model/stats/interval.h"
#include "tests/kernels/model/stats/synth.h"

#define RUNS 1000

/* Coverage of [X(d), X(n+1-d)], summed term by term from 0. */
static double direct_coverage(unsigned n, unsigned d) {
    double cdf = 0;
    for (unsigned i = 0; i < d; i++) cdf += exp(lgamma(n + 1.0) - lgamma(i + 1.0) - lgamma(n - i + 1.0) - n * log(2.0));
    return 1 - 2 * cdf;
}

Test(interval, ranks_at_ten_samples_interpolate_as_hettmansperger_sheather) {
    struct interval_ranks rk;
    char err[ERR_LEN];
    cr_assert_eq(interval_ranks(10, 0.95, &rk, err), 0, "%s", err);
    cr_assert_eq(rk.lo, 2);
    cr_assert_eq(rk.hi, 9);
    /* gamma_2 = 1 - 2 * 11/1024, gamma_3 = 1 - 2 * 56/1024. */
    const double g2 = 1 - 22.0 / 1024, g3 = 1 - 112.0 / 1024;
    const double in = (g2 - 0.95) / (g2 - g3);
    cr_assert_float_eq(rk.weight, 8 * in / (2 + 6 * in), 1e-12);
    cr_assert_float_eq(rk.level, 0.95, 0);
}

Test(interval, ranks_match_the_binomial_summed_directly) {
    char err[ERR_LEN];
    for (unsigned n = 6; n <= 400; n++) {
        struct interval_ranks rk;
        cr_assert_eq(interval_ranks(n, 0.95, &rk, err), 0, "%s", err);
        cr_assert_eq(rk.hi, n + 1 - rk.lo, "n=%u", n);
        cr_assert_geq(direct_coverage(n, rk.lo), 0.95, "n=%u: the outer pair covers at least 95%%", n);
        cr_assert_lt(direct_coverage(n, rk.lo + 1), 0.95, "n=%u: the inner pair covers less", n);
        cr_assert(rk.weight >= 0 && rk.weight <= 1, "n=%u weight %g", n, rk.weight);
    }
}

Test(interval, ranks_at_the_sample_cap_sit_a_standard_error_from_the_middle) {
    struct interval_ranks rk;
    char err[ERR_LEN];
    cr_assert_eq(interval_ranks(100000, 0.95, &rk, err), 0, "%s", err);
    /* n/2 - 1.96 sqrt(n)/2 = 50000 - 309.9 */
    cr_assert(rk.lo >= 49688 && rk.lo <= 49692, "lo %u", rk.lo);
    cr_assert_eq(rk.hi, 100001 - rk.lo);
}

Test(interval, too_few_samples_give_min_max_at_the_level_they_reach) {
    struct interval_ranks rk;
    char err[ERR_LEN];
    cr_assert_eq(interval_ranks(5, 0.95, &rk, err), 0);
    cr_assert_eq(rk.lo, 1);
    cr_assert_eq(rk.hi, 5);
    cr_assert_float_eq(rk.level, 1 - 2.0 / 32, 1e-12);
    cr_assert_eq(interval_ranks(1, 0.95, &rk, err), 0);
    cr_assert_eq(rk.lo, 1);
    cr_assert_eq(rk.hi, 1);
    cr_assert_float_eq(rk.level, 0, 0);
    cr_assert_eq(interval_ranks(6, 0.95, &rk, err), 0);
    cr_assert_float_eq(rk.level, 0.95, 0, "six samples reach 95%% (min/max: 96.9%%)");
}

Test(interval, median_of_unsorted_samples_leaves_them_unsorted) {
    const double s[] = {5, 1, 4, 2, 3, 9, 8, 7, 6, 10};
    double scratch[10];
    struct interval iv;
    char err[ERR_LEN];
    cr_assert_eq(interval_median(s, 10, 0.95, 0, scratch, &iv, err), 0, "%s", err);
    cr_assert_float_eq(iv.point, 5.5, 1e-12);
    /* X(2) = 2, X(3) = 3, X(9) = 9, X(8) = 8, weight w: lo = 2 + w, hi = 9 - w. */
    struct interval_ranks rk;
    interval_ranks(10, 0.95, &rk, err);
    cr_assert_float_eq(iv.lo, 2 + rk.weight, 1e-12);
    cr_assert_float_eq(iv.hi, 9 - rk.weight, 1e-12);
    cr_assert(iv.lo <= iv.point && iv.point <= iv.hi);
    cr_assert_float_eq(s[0], 5, 0);
}

Test(interval, a_timer_step_widens_each_end_by_half_a_step) {
    const double s[] = {42, 42, 42, 42, 42, 42, 42, 42, 42, 42.5, 41.5, 42};
    double scratch[12];
    struct interval iv;
    char err[ERR_LEN];
    cr_assert_eq(interval_median(s, 12, 0.95, 0, scratch, &iv, err), 0);
    cr_assert_float_eq(iv.lo, 42, 0, "ties: the step values alone claim an exact median");
    cr_assert_float_eq(iv.hi, 42, 0);
    cr_assert_eq(interval_median(s, 12, 0.95, 0.5, scratch, &iv, err), 0);
    cr_assert_float_eq(iv.lo, 41.75, 1e-12);
    cr_assert_float_eq(iv.hi, 42.25, 1e-12);
    cr_assert_float_eq(interval_rel_halfwidth(&iv), 0.25 / 42, 1e-12);
}

Test(interval, bad_input_names_the_field) {
    double s[4] = {1, 2, NAN, 4}, scratch[4];
    struct interval iv;
    char err[ERR_LEN] = "";
    cr_assert_eq(interval_median(s, 4, 0.95, 0, scratch, &iv, err), DV_ERR);
    cr_assert_str_eq(err, "interval: samples[2]: nan is not finite");
    s[2] = 3;
    cr_assert_eq(interval_median(s, 0, 0.95, 0, scratch, &iv, err), DV_ERR);
    cr_assert_str_eq(err, "interval: n: no samples");
    cr_assert_eq(interval_median(s, 4, 1.0, 0, scratch, &iv, err), DV_ERR);
    cr_assert_str_eq(err, "interval: level: 1 is outside (0, 1)");
    cr_assert_eq(interval_median(s, 4, 0.95, -1, scratch, &iv, err), DV_ERR);
    cr_assert_str_eq(err, "interval: resolution: -1 is not a finite step >= 0");
}

Test(interval, relative_half_width_takes_the_wider_side) {
    struct interval iv = {.point = 2.0, .lo = 1.9, .hi = 2.3, .level = 0.95};
    cr_assert_float_eq(interval_rel_halfwidth(&iv), 0.15, 1e-12);
    struct interval z = {0, 0, 0, 0.95};
    cr_assert_float_eq(interval_rel_halfwidth(&z), 0, 0);
    z.hi = 1;
    cr_assert(isinf(interval_rel_halfwidth(&z)));
}

/* How often, over RUNS simulated rows of n samples, the interval covers the
 * true median. */
static double coverage(enum synth_shape shape, unsigned n, double noise, uint64_t seed) {
    struct synth g;
    synth_seed(&g, seed);
    double *s = malloc(sizeof(double) * n), *scratch = malloc(sizeof(double) * n);
    cr_assert(s && scratch);
    const double truth = synth_median(shape, noise);
    unsigned hit = 0;
    char err[ERR_LEN];
    for (unsigned run = 0; run < RUNS; run++) {
        for (unsigned i = 0; i < n; i++) s[i] = synth_draw(&g, shape, noise);
        struct interval iv;
        cr_assert_eq(interval_median(s, n, 0.95, 0, scratch, &iv, err), 0, "%s", err);
        hit += iv.lo <= truth && truth <= iv.hi;
    }
    free(s);
    free(scratch);
    return (double)hit / RUNS;
}

static void covers(enum synth_shape shape, uint64_t seed) {
    static const unsigned sizes[] = {10, 20, 50, 200, 2000};
    static const double noises[] = {0.0005, 0.01};
    for (unsigned i = 0; i < 5; i++) {
        for (unsigned j = 0; j < 2; j++) {
            const double c = coverage(shape, sizes[i], noises[j], seed + 10 * i + j);
            cr_log_info("coverage median %s n=%u noise=%.2f%%: %.1f%%", synth_name(shape), sizes[i], 100 * noises[j],
                        100 * c);
            cr_expect(c >= 0.92 && c <= 0.98, "%s n=%u noise %g: coverage %.3f outside 92-98%%", synth_name(shape),
                      sizes[i], noises[j], c);
        }
    }
}

Test(interval, covers_the_median_of_normal_rows) { covers(SYNTH_NORMAL, 1000); }
Test(interval, covers_the_median_of_two_cluster_rows) { covers(SYNTH_CLUSTERS, 2000); }
Test(interval, covers_the_median_of_heavy_tailed_rows) {
    covers(SYNTH_PARETO, 3000);
    covers(SYNTH_LOGNORMAL, 4000);
}

/* The interval's width, averaged over rows, halves each time the samples
 * quadruple, as a median's standard error goes with 1/sqrt(n). (The width
 * (hi - lo) / 2, not the larger side that interval_rel_halfwidth reports:
 * the larger of two noisy sides runs 5-18% over the mean half at these n.) */
Test(interval, half_width_shrinks_like_one_over_root_n) {
    struct synth g;
    synth_seed(&g, 77);
    static const unsigned sizes[] = {100, 400, 1600, 6400};
    double mean_hw[4];
    double *s = malloc(sizeof(double) * 6400), *scratch = malloc(sizeof(double) * 6400);
    cr_assert(s && scratch);
    for (unsigned i = 0; i < 4; i++) {
        double sum = 0;
        for (unsigned run = 0; run < 100; run++) {
            for (unsigned k = 0; k < sizes[i]; k++) s[k] = synth_draw(&g, SYNTH_NORMAL, 0.01);
            struct interval iv;
            char err[ERR_LEN];
            cr_assert_eq(interval_median(s, sizes[i], 0.95, 0, scratch, &iv, err), 0);
            sum += 0.5 * (iv.hi - iv.lo) / iv.point;
        }
        mean_hw[i] = sum / 100;
    }
    for (unsigned i = 1; i < 4; i++) {
        const double shrink = mean_hw[i - 1] / mean_hw[i];
        cr_log_info("half-width n=%u: %.4f%%, n=%u: %.4f%%: x%.3f", sizes[i - 1], 100 * mean_hw[i - 1], sizes[i],
                    100 * mean_hw[i], shrink);
        cr_expect(shrink > 1.8 && shrink < 2.2, "n %u -> %u: half-width shrank x%.3f, not about x2", sizes[i - 1],
                  sizes[i], shrink);
    }
    /* And the level: 1.96 * sqrt(pi/2) * sd / sqrt(n) for normal samples. */
    cr_expect(fabs(mean_hw[3] / (1.96 * 1.2533 * 0.01 / 80) - 1) < 0.03, "n=6400: %.6f", mean_hw[3]);
    free(s);
    free(scratch);
}

static int cmp_double(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The sort every interval rests on, against qsort: random values, runs of
 * equal step values (a timer's ticks), sorted and reversed input, and sizes
 * around the insertion-sort cut. */
Test(interval, sort_orders_as_qsort_does) {
    struct synth g;
    synth_seed(&g, 31);
    static double a[5000], b[5000];
    for (unsigned n = 0; n < 5000; n = n < 40 ? n + 1 : n * 3 / 2) {
        for (int kind = 0; kind < 4; kind++) {
            for (unsigned i = 0; i < n; i++) {
                switch (kind) {
                case 0: a[i] = synth_normal(&g); break;
                case 1: a[i] = (double)(synth_u64(&g) % 4); break;
                case 2: a[i] = i; break;
                default: a[i] = (double)n - i; break;
                }
                b[i] = a[i];
            }
            interval_sort(a, n);
            qsort(b, n, sizeof(double), cmp_double);
            for (unsigned i = 0; i < n; i++) cr_assert_eq(a[i], b[i], "n=%u kind %d at %u", n, kind, i);
        }
    }
}
