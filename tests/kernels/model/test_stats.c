/* test_stats.c -- sample statistics and the stdrel stopping rule. */
#include <criterion/criterion.h>
#include <math.h>

#include "kernels/model/stats.h"

Test(stats, median_mean_stdev_of_a_small_sample) {
    const double s[] = {3.0, 1.0, 2.0, 10.0};
    double scratch[4];
    struct dv_stats st;
    stats_compute(s, 4, scratch, &st);
    cr_assert_float_eq(st.median, 2.5, 1e-12);
    cr_assert_float_eq(st.mean, 4.0, 1e-12);
    cr_assert_float_eq(st.min, 1.0, 1e-12);
    cr_assert_float_eq(st.max, 10.0, 1e-12);
    cr_assert_float_eq(st.stdev, sqrt(((1.0) + 9.0 + 4.0 + 36.0) / 3.0), 1e-12);
    cr_assert_float_eq(st.noise, st.stdev / 4.0, 1e-12);
    cr_assert_float_eq(s[0], 3.0, 0); /* the input is not sorted in place */
}

static struct dv_options opts(void) {
    struct dv_options o;
    experiment_defaults(&o);
    o.min_samples = 10;
    o.max_samples = 100;
    o.max_noise = 0.01;
    o.budget_ms = 50;
    return o;
}

Test(stats, stops_only_past_the_minimum_when_every_row_is_quiet) {
    struct dv_options o = opts();
    struct dv_stats rows[2] = {{.noise = 0.005}, {.noise = 0.02}};
    cr_assert_eq(stats_should_stop(&o, rows, 2, 5, 1.0), 0, "below min samples");
    cr_assert_eq(stats_should_stop(&o, rows, 2, 20, 1.0), 0, "row 1 is noisy");
    rows[1].noise = 0.01;
    cr_assert_eq(stats_should_stop(&o, rows, 2, 20, 1.0), 1, "both at or under the target");
}

Test(stats, budget_and_cap_stop_a_noisy_table) {
    struct dv_options o = opts();
    struct dv_stats rows[1] = {{.noise = 0.5}};
    cr_assert_eq(stats_should_stop(&o, rows, 1, 20, 49.0), 0);
    cr_assert_eq(stats_should_stop(&o, rows, 1, 20, 50.0), 1, "budget spent");
    cr_assert_eq(stats_should_stop(&o, rows, 1, 100, 1.0), 1, "sample cap");
    cr_assert_eq(stats_should_stop(&o, rows, 1, 5, 1e9), 0, "never under the minimum");
}

Test(stats, a_cap_below_the_minimum_is_raised) {
    struct dv_options o = opts();
    unsigned lo, hi;
    o.min_samples = 50;
    o.max_samples = 10;
    stats_sample_bounds(&o, &lo, &hi);
    cr_assert_eq(lo, 50);
    cr_assert_geq(hi, 50);
}
