/* test_ratio.c -- the paired ratio and its interval: the contract on
 * hand-built rows, and the coverage of the true ratio over 1,000 simulated
 * tables of two rows per case, sampled round by round as the timing loop
 * samples them (each round's noise partly shared, partly the row's own). */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <math.h>
#include <stdlib.h>

#include "kernels/model/stats/ratio.h"
#include "tests/kernels/model/stats/synth.h"

#define RUNS 1000
#define A 1.95 /* the true ratio of the simulated rows */

Test(ratio, the_reported_ratio_is_the_ratio_of_the_medians) {
    const double row[] = {2.0, 2.2, 2.1, 2.4, 2.3, 2.05, 2.15, 2.25, 2.35, 2.45};
    const double base[] = {1.0, 1.3, 1.1, 1.2, 1.05, 1.15, 1.25, 1.35, 1.02, 1.12};
    double scratch[20];
    struct ratio_pair p;
    char err[ERR_LEN];
    cr_assert_eq(ratio_paired(row, base, 10, 0.95, 0, scratch, &p, err), 0, "%s", err);
    const struct interval iv = p.of_medians;
    cr_assert_float_eq(iv.point, 2.225 / 1.135, 1e-12);
    cr_assert_eq(ratio_pick(&p, RATIO_OF_MEDIANS), &p.of_medians);
    cr_assert_eq(ratio_pick(&p, RATIO_OF_ROUNDS), &p.of_rounds);
    cr_assert_null(ratio_pick(&p, 2));
    cr_assert(iv.lo < iv.point && iv.point < iv.hi);
    cr_assert_float_eq(iv.level, 0.95, 0);
}

Test(ratio, per_round_ratio_is_the_median_of_the_rounds_ratios) {
    const double row[] = {2, 4, 6, 8, 10, 12};
    const double base[] = {1, 1, 2, 2, 4, 4}; /* ratios 2 4 3 4 2.5 3 */
    double scratch[12];
    struct ratio_pair p;
    char err[ERR_LEN];
    cr_assert_eq(ratio_paired(row, base, 6, 0.95, 0, scratch, &p, err), 0, "%s", err);
    const struct interval iv = p.of_rounds;
    cr_assert_float_eq(iv.point, 3.0, 1e-12);
    /* Six rounds: [min, max] of the ratios, 96.9%, interpolated to 95%. */
    cr_assert(iv.lo >= 2.0 - 1e-12 && iv.lo < 3.0 && iv.hi > 3.0 && iv.hi <= 4.0 + 1e-12);
}

Test(ratio, rows_in_exact_proportion_give_that_ratio) {
    double row[50], base[50], scratch[100];
    struct synth g;
    synth_seed(&g, 5);
    for (int k = 0; k < 50; k++) {
        base[k] = synth_draw(&g, SYNTH_PARETO, 0.01);
        row[k] = 2 * base[k];
    }
    struct ratio_pair p;
    char err[ERR_LEN];
    cr_assert_eq(ratio_paired(row, base, 50, 0.95, 0, scratch, &p, err), 0);
    struct interval iv = p.of_rounds;
    cr_assert_float_eq(iv.point, 2, 1e-12);
    cr_assert_float_eq(iv.lo, 2, 1e-12, "shared noise cancels round by round");
    cr_assert_float_eq(iv.hi, 2, 1e-12);
    cr_assert_float_eq(p.corr, 1, 0);
    iv = p.of_medians;
    cr_assert_float_eq(iv.point, 2, 1e-12);
    cr_assert(iv.lo <= 2 && iv.hi >= 2);
    /* The half-round correction keeps a little width: never claims more
     * than the rounds can show. */
    cr_assert(interval_rel_halfwidth(&iv) < 0.003, "%g", interval_rel_halfwidth(&iv));
    /* A timer step of 0.002 widens by half a step of each median,
     * relative to it. */
    struct interval mb;
    cr_assert_eq(interval_median(base, 50, 0.95, 0, scratch, &mb, err), 0);
    const double step = 0.001 / (2 * mb.point) + 0.001 / mb.point;
    cr_assert_eq(ratio_paired(row, base, 50, 0.95, 0.002, scratch, &p, err), 0);
    iv = p.of_rounds;
    cr_assert_float_eq(iv.lo, 2 * exp(-step), 1e-12);
    cr_assert_float_eq(iv.hi, 2 * exp(step), 1e-12);
}

Test(ratio, independent_rows_have_no_medial_correlation_and_shared_noise_has_much) {
    double row[2000], base[2000], scratch[4000];
    struct synth g;
    synth_seed(&g, 6);
    for (int k = 0; k < 2000; k++) {
        row[k] = A * synth_draw(&g, SYNTH_NORMAL, 0.01);
        base[k] = synth_draw(&g, SYNTH_NORMAL, 0.01);
    }
    struct ratio_pair p;
    char err[ERR_LEN];
    cr_assert_eq(ratio_paired(row, base, 2000, 0.95, 0, scratch, &p, err), 0);
    cr_assert(fabs(p.corr) < 0.1, "independent: %g", p.corr);
    for (int k = 0; k < 2000; k++) {
        const double c = exp(0.01 * synth_normal(&g));
        row[k] = A * c * exp(0.001 * synth_normal(&g));
        base[k] = c * exp(0.001 * synth_normal(&g));
    }
    cr_assert_eq(ratio_paired(row, base, 2000, 0.95, 0, scratch, &p, err), 0);
    /* (2/pi) asin(0.99) = 0.91 for this mix */
    cr_assert(p.corr > 0.85 && p.corr < 0.95, "shared: %g", p.corr);
}

Test(ratio, too_few_rounds_report_the_level_they_reach) {
    const double row[] = {2, 2.1, 2.2}, base[] = {1, 1.1, 1.05};
    double scratch[6];
    struct ratio_pair p;
    char err[ERR_LEN];
    cr_assert_eq(ratio_paired(row, base, 3, 0.95, 0, scratch, &p, err), 0);
    cr_assert_float_eq(p.of_rounds.level, 0.75, 1e-12);
    cr_assert_float_eq(p.of_medians.level, 0.75, 1e-12);
}

Test(ratio, bad_input_names_the_field) {
    double row[] = {1, 2, 3}, base[] = {1, 0, 1}, scratch[6];
    struct ratio_pair p;
    char err[ERR_LEN] = "";
    cr_assert_eq(ratio_paired(row, base, 3, 0.95, 0, scratch, &p, err), DV_ERR);
    cr_assert_str_eq(err, "ratio: baseline[1]: 0 is not a finite positive time");
    base[1] = 1;
    row[2] = INFINITY;
    cr_assert_eq(ratio_paired(row, base, 3, 0.95, 0, scratch, &p, err), DV_ERR);
    cr_assert_str_eq(err, "ratio: row[2]: inf is not a finite positive time");
    row[2] = 3;
    cr_assert_eq(ratio_paired(row, base, 0, 0.95, 0, scratch, &p, err), DV_ERR);
    cr_assert_str_eq(err, "interval: n: no samples");
    cr_assert_eq(ratio_paired(row, base, 3, 0.95, NAN, scratch, &p, err), DV_ERR);
    cr_assert_str_eq(err, "ratio: resolution: nan is not a finite step >= 0");
    cr_assert_str_eq(ratio_method_name(RATIO_OF_MEDIANS), "ratio_of_medians");
    cr_assert_str_eq(ratio_method_name(RATIO_OF_ROUNDS), "ratio_of_rounds");
    cr_assert_str_eq(ratio_method_name(9), "unknown");
}

/* How rounds are simulated. Each returns the true ratio of the two rows'
 * medians (the figure RATIO_OF_MEDIANS reports); where the scenario says
 * so it is also the median of the per-round ratios. */
enum scenario {
    INDEPENDENT,  /* each row's own normal noise, nothing shared             */
    SHARED,       /* half the noise shared by the round (lognormal)           */
    SHARED_MOST,  /* 99% of the noise variance shared by the round           */
    CLOCK_STEP,   /* 30% of rounds 3% slower for both rows, own normal noise */
    ROW_CLUSTERS, /* the row has two clusters, the baseline not              */
    HEAVY,        /* each row's own Pareto tail                              */
};

static const char *scenario_name(enum scenario s) {
    static const char *names[] = {"independent", "shared half",  "shared most",
                                  "clock step",  "row clusters", "heavy tail"};
    return names[s];
}

static double draw_rounds(struct synth *g, enum scenario s, unsigned n, double noise, double *row, double *base) {
    for (unsigned k = 0; k < n; k++) {
        switch (s) {
        case INDEPENDENT:
            row[k] = A * synth_draw(g, SYNTH_NORMAL, noise);
            base[k] = synth_draw(g, SYNTH_NORMAL, noise);
            break;
        case SHARED:
        case SHARED_MOST: {
            const double own = s == SHARED ? noise : noise / 10;
            const double c = exp(noise * synth_normal(g));
            row[k] = A * c * exp(own * synth_normal(g));
            base[k] = c * exp(own * synth_normal(g));
            break;
        }
        case CLOCK_STEP: {
            const double c = synth_unif(g) < SYNTH_CLUSTER_SHARE ? 1 + SYNTH_CLUSTER_GAP : 1.0;
            row[k] = A * c * synth_draw(g, SYNTH_NORMAL, noise);
            base[k] = c * synth_draw(g, SYNTH_NORMAL, noise);
            break;
        }
        case ROW_CLUSTERS:
            row[k] = A * synth_draw(g, SYNTH_CLUSTERS, noise);
            base[k] = synth_draw(g, SYNTH_NORMAL, noise);
            break;
        case HEAVY:
            row[k] = A * synth_draw(g, SYNTH_PARETO, noise);
            base[k] = synth_draw(g, SYNTH_PARETO, noise);
            break;
        }
    }
    return s == ROW_CLUSTERS ? A * synth_median(SYNTH_CLUSTERS, noise) : A;
}

struct cover {
    double medians, rounds;       /* coverage of each method */
    double hw_medians, hw_rounds; /* mean relative half-width */
};

static struct cover coverage(enum scenario s, unsigned n, double noise, uint64_t seed) {
    struct synth g;
    synth_seed(&g, seed);
    double *row = malloc(sizeof(double) * n), *base = malloc(sizeof(double) * n);
    double *scratch = malloc(sizeof(double) * 2 * n);
    cr_assert(row && base && scratch);
    struct cover c = {0};
    char err[ERR_LEN];
    for (unsigned run = 0; run < RUNS; run++) {
        const double truth = draw_rounds(&g, s, n, noise, row, base);
        struct ratio_pair p;
        cr_assert_eq(ratio_paired(row, base, n, 0.95, 0, scratch, &p, err), 0, "%s", err);
        const struct interval m = p.of_medians, r = p.of_rounds;
        c.medians += m.lo <= truth && truth <= m.hi;
        c.rounds += r.lo <= truth && truth <= r.hi;
        c.hw_medians += interval_rel_halfwidth(&m);
        c.hw_rounds += interval_rel_halfwidth(&r);
    }
    c.medians /= RUNS;
    c.rounds /= RUNS;
    c.hw_medians /= RUNS;
    c.hw_rounds /= RUNS;
    free(row);
    free(base);
    free(scratch);
    return c;
}

#define BAND(c) ((c) >= 0.92 && (c) <= 0.98)

/* Which method must sit in the 92-98% band in a scenario: both where both
 * estimate the same ratio and the rounds share nothing; RATIO_OF_MEDIANS
 * only at least 92% where the rounds share noise (it errs wide there, up to
 * 100%: ratio.h); RATIO_OF_ROUNDS not at all where the rows' shapes differ
 * (it estimates the per-round ratio, another figure there). */
static void covers(enum scenario s, int medians_band, int rounds_band, uint64_t seed) {
    static const unsigned sizes[] = {10, 20, 50, 200, 2000};
    static const double noises[] = {0.0005, 0.01};
    for (unsigned i = 0; i < 5; i++) {
        for (unsigned j = 0; j < 2; j++) {
            const struct cover c = coverage(s, sizes[i], noises[j], seed + 10 * i + j);
            cr_log_info(
                "coverage ratio %s n=%u noise=%.2f%%: of_medians %.1f%% (hw %.4f%%), of_rounds %.1f%% "
                "(hw %.4f%%)",
                scenario_name(s), sizes[i], 100 * noises[j], 100 * c.medians, 100 * c.hw_medians, 100 * c.rounds,
                100 * c.hw_rounds);
            if (medians_band)
                cr_expect(BAND(c.medians), "%s n=%u noise %g: of_medians %.3f outside 92-98%%", scenario_name(s),
                          sizes[i], noises[j], c.medians);
            else
                cr_expect(c.medians >= 0.92, "%s n=%u noise %g: of_medians %.3f under 92%%", scenario_name(s), sizes[i],
                          noises[j], c.medians);
            if (rounds_band)
                cr_expect(BAND(c.rounds), "%s n=%u noise %g: of_rounds %.3f outside 92-98%%", scenario_name(s),
                          sizes[i], noises[j], c.rounds);
        }
    }
}

Test(ratio, covers_independent_rows) { covers(INDEPENDENT, 1, 1, 100); }
Test(ratio, covers_rows_sharing_half_their_noise) { covers(SHARED, 0, 1, 200); }
Test(ratio, covers_rows_sharing_most_of_their_noise) { covers(SHARED_MOST, 0, 1, 300); }
Test(ratio, covers_rows_through_a_clock_step) { covers(CLOCK_STEP, 0, 1, 400); }
Test(ratio, covers_a_two_cluster_row_over_a_plain_baseline) { covers(ROW_CLUSTERS, 1, 0, 500); }
Test(ratio, covers_heavy_tailed_rows) { covers(HEAVY, 1, 1, 600); }

/* Why the per-round ratio is the recommended estimator: where the rounds
 * share their noise it is known far better from the same rounds, and it is
 * never worse where they do not. */
Test(ratio, per_round_ratio_is_tighter_when_rounds_share_their_noise) {
    const struct cover most = coverage(SHARED_MOST, 200, 0.01, 900);
    cr_expect(most.hw_rounds < 0.5 * most.hw_medians, "shared: rounds %.5f vs medians %.5f", most.hw_rounds,
              most.hw_medians);
    const struct cover none = coverage(INDEPENDENT, 200, 0.01, 901);
    cr_expect(none.hw_rounds < 1.05 * none.hw_medians, "independent: rounds %.5f vs medians %.5f", none.hw_rounds,
              none.hw_medians);
}
