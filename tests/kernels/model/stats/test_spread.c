/* test_spread.c -- the row flags: a spread far from what the median's
 * interval implies (a tail of late launches, a median between clusters),
 * and a level that moved during the run; and how rarely a plain row is
 * flagged. */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <math.h>
#include <stdlib.h>

#include "kernels/model/stats/spread.h"
#include "tests/kernels/model/stats/synth.h"

static double row[4000], scratch[4000];

Test(spread, a_normal_row_has_no_flag_and_an_excess_near_one) {
    struct synth g;
    synth_seed(&g, 1);
    for (int k = 0; k < 2000; k++) row[k] = 0.04179 * synth_draw(&g, SYNTH_NORMAL, 0.005);
    struct spread sp;
    char err[ERR_LEN];
    cr_assert_eq(spread_measure(row, 2000, scratch, &sp, err), 0, "%s", err);
    cr_assert_eq(sp.flags, 0);
    cr_assert(sp.excess > 0.8 && sp.excess < 1.3, "excess %g", sp.excess);
    cr_assert(fabs(sp.noise - 0.005) < 0.0005, "noise %g", sp.noise);
    cr_assert(fabs(sp.drift) < 0.001, "drift %g", sp.drift);
}

/* The small-grid baseline of the report that exited 1: a tight core and a
 * few late launches, spread 0.7%, median known to hundredths of a percent. */
Test(spread, late_launches_flag_a_tail) {
    struct synth g;
    synth_seed(&g, 2);
    for (int k = 0; k < 2000; k++) {
        const double late = synth_unif(&g) < 0.02 ? 1.03 + 0.05 * synth_unif(&g) : 1.0;
        row[k] = 0.04179 * late * synth_draw(&g, SYNTH_NORMAL, 0.001);
    }
    struct spread sp;
    char err[ERR_LEN];
    cr_assert_eq(spread_measure(row, 2000, scratch, &sp, err), 0);
    cr_log_info("late launches: noise %.3f%%, excess %.2f", 100 * sp.noise, sp.excess);
    cr_assert(sp.noise > 0.005, "a rule on the spread would fail this row: noise %g", sp.noise);
    cr_assert(sp.flags & SPREAD_TAIL, "excess %g", sp.excess);
    cr_assert_eq(sp.flags & ~SPREAD_TAIL, 0);
}

Test(spread, a_median_between_two_equal_clusters_flags_a_split) {
    struct synth g;
    synth_seed(&g, 3);
    for (int k = 0; k < 2000; k++) row[k] = (synth_unif(&g) < 0.5 ? 1.0 : 1.05) * synth_draw(&g, SYNTH_NORMAL, 0.01);
    struct spread sp;
    char err[ERR_LEN];
    cr_assert_eq(spread_measure(row, 2000, scratch, &sp, err), 0);
    cr_assert(sp.flags & SPREAD_SPLIT, "excess %g", sp.excess);
}

Test(spread, a_level_that_moves_halfway_flags_a_drift) {
    struct synth g;
    synth_seed(&g, 4);
    for (int k = 0; k < 400; k++) row[k] = (k < 200 ? 1.0 : 1.01) * synth_draw(&g, SYNTH_NORMAL, 0.002);
    struct spread sp;
    char err[ERR_LEN];
    cr_assert_eq(spread_measure(row, 400, scratch, &sp, err), 0);
    cr_assert(sp.flags & SPREAD_DRIFT);
    cr_assert(fabs(sp.drift - 0.01) < 0.002, "drift %g", sp.drift);
    /* The same samples in another order tell no drift: the test reads time. */
    for (int k = 0; k < 200; k += 2) {
        const double t = row[k];
        row[k] = row[399 - k];
        row[399 - k] = t;
    }
    cr_assert_eq(spread_measure(row, 400, scratch, &sp, err), 0);
    cr_assert_eq(sp.flags & SPREAD_DRIFT, 0, "drift %g", sp.drift);
}

Test(spread, too_few_samples_raise_no_flag) {
    for (int k = 0; k < 19; k++) row[k] = k == 0 ? 2.0 : 1.0 + 1e-4 * k;
    struct spread sp;
    char err[ERR_LEN];
    cr_assert_eq(spread_measure(row, 19, scratch, &sp, err), 0);
    cr_assert(sp.excess > SPREAD_TAIL_EXCESS, "excess %g", sp.excess);
    cr_assert_eq(sp.flags, 0, "19 samples: one late launch is not a tail yet");
    cr_assert_eq(spread_measure(row, 1, scratch, &sp, err), 0);
    cr_assert(isnan(sp.excess));
    cr_assert(isnan(sp.drift));
}

/* Over 1,000 plain rows (normal, and a lognormal tail), each flag is raised
 * on at most 1% at 20 and 200 samples. */
Test(spread, plain_rows_are_rarely_flagged) {
    static const unsigned sizes[] = {20, 200};
    static const enum synth_shape shapes[] = {SYNTH_NORMAL, SYNTH_LOGNORMAL};
    struct synth g;
    synth_seed(&g, 5);
    for (unsigned si = 0; si < 2; si++) {
        for (unsigned i = 0; i < 2; i++) {
            unsigned counts[3] = {0, 0, 0};
            for (int run = 0; run < 1000; run++) {
                for (unsigned k = 0; k < sizes[i]; k++) row[k] = synth_draw(&g, shapes[si], 0.01);
                struct spread sp;
                char err[ERR_LEN];
                cr_assert_eq(spread_measure(row, sizes[i], scratch, &sp, err), 0);
                counts[0] += !!(sp.flags & SPREAD_TAIL);
                counts[1] += !!(sp.flags & SPREAD_SPLIT);
                counts[2] += !!(sp.flags & SPREAD_DRIFT);
            }
            cr_log_info("flags on 1000 %s rows of %u: tail %u, split %u, drift %u", synth_name(shapes[si]), sizes[i],
                        counts[0], counts[1], counts[2]);
            for (int f = 0; f < 3; f++)
                cr_expect_leq(counts[f], 10, "%s n=%u flag %d raised on %u of 1000", synth_name(shapes[si]), sizes[i],
                              f, counts[f]);
        }
    }
}

Test(spread, flags_read_as_words) {
    char buf[64];
    cr_assert_str_eq(spread_flags_text(0, buf, sizeof(buf)), "");
    cr_assert_str_eq(spread_flags_text(SPREAD_TAIL | SPREAD_DRIFT, buf, sizeof(buf)), "tail, drift");
    cr_assert_str_eq(spread_flags_text(SPREAD_TAIL | SPREAD_SPLIT | SPREAD_DRIFT, buf, sizeof(buf)),
                     "tail, split, drift");
    cr_assert_str_eq(spread_flags_text(SPREAD_TAIL | SPREAD_SPLIT, buf, 8), "tail", "a short buffer keeps whole words");
}

Test(spread, bad_input_names_the_field) {
    struct spread sp;
    char err[ERR_LEN];
    cr_assert_eq(spread_measure(row, 0, scratch, &sp, err), DV_ERR);
    cr_assert_str_eq(err, "spread: n: no samples");
    row[0] = 1;
    row[1] = NAN;
    cr_assert_eq(spread_measure(row, 2, scratch, &sp, err), DV_ERR);
    cr_assert_str_eq(err, "spread: samples[1]: nan is not finite");
}
