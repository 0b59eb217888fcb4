/* test_stats.c -- sample statistics, the sample bounds, and a
 * table's statistics from its rounds (stats_table, stats_judged). */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "kernels/model/stats/stats.h"
#include "kernels/model/stats/throttle.h"
#include "kernels/model/model/experiment.h"
#include "tests/kernels/model/stats/synth.h"

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

Test(stats, a_cap_below_the_minimum_is_raised) {
    struct dv_options o = opts();
    unsigned lo, hi;
    o.min_samples = 50;
    o.max_samples = 10;
    stats_sample_bounds(&o, &lo, &hi);
    cr_assert_eq(lo, 50);
    cr_assert_geq(hi, 50);
}

/* A table of three rows over 40 rounds: the baseline (row 1) near 1 ms,
 * row 0 twice it, row 2 half; round 7 is wild in every row (a throttled
 * round) and marked dropped. */
#define ROUNDS 40
static double table[3 * ROUNDS];
static double scratch[4 * ROUNDS];

static void fill(void) {
    struct synth g;
    synth_seed(&g, 9);
    for (unsigned k = 0; k < ROUNDS; k++) {
        const double c = k == 7 ? 5.0 : 1.0;
        table[0 * ROUNDS + k] = c * 2.0 * synth_draw(&g, SYNTH_NORMAL, 0.002);
        table[1 * ROUNDS + k] = c * 1.0 * synth_draw(&g, SYNTH_NORMAL, 0.002);
        table[2 * ROUNDS + k] = c * 0.5 * synth_draw(&g, SYNTH_NORMAL, 0.002);
    }
}

Test(stats, a_table_reports_each_row_over_the_kept_rounds) {
    fill();
    unsigned char drop[ROUNDS] = {0};
    drop[7] = 1;
    struct stats_config c;
    stats_config_default(&c);
    struct stats_row rows[3];
    unsigned kept;
    char err[ERR_LEN];
    cr_assert_eq(stats_table(table, ROUNDS, 3, ROUNDS, drop, 1, &c, scratch, rows, &kept, err), 0, "%s", err);
    cr_assert_eq(kept, ROUNDS - 1);
    for (int r = 0; r < 3; r++) {
        cr_assert_eq(rows[r].summary.samples, ROUNDS - 1);
        cr_assert_eq(rows[r].dropped, 1);
        cr_assert_lt(rows[r].summary.max, 2.5, "round 7 stayed out of row %d", r);
        cr_assert(rows[r].median.lo <= rows[r].median.point && rows[r].median.point <= rows[r].median.hi);
        cr_assert_float_eq(rows[r].median.point, rows[r].summary.median, 1e-15);
    }
    cr_assert_float_eq(rows[1].ratio.point, 1.0, 0, "the baseline over itself");
    cr_assert_float_eq(rows[1].ratio.lo, 1.0, 0);
    cr_assert_float_eq(rows[1].ratio.hi, 1.0, 0);
    cr_assert_float_eq(rows[0].ratio.point, rows[0].summary.median / rows[1].summary.median, 1e-12,
                       "the default method keeps the tables' figure");
    cr_assert(fabs(rows[0].ratio.point - 2.0) < 0.005 && fabs(rows[2].ratio.point - 0.5) < 0.002);
    cr_assert_eq(memcmp(&rows[0].ratio, &rows[0].ratios.of_medians, sizeof(rows[0].ratio)), 0);
    /* Without the mark, the wild round is in every row. */
    cr_assert_eq(stats_table(table, ROUNDS, 3, ROUNDS, NULL, 1, &c, scratch, rows, &kept, err), 0);
    cr_assert_eq(kept, ROUNDS);
    cr_assert_gt(rows[0].summary.max, 5.0);
    cr_assert_eq(rows[0].dropped, 0);
}

Test(stats, the_per_round_method_reports_the_per_round_ratio) {
    fill();
    struct stats_config c;
    stats_config_default(&c);
    c.method = RATIO_OF_ROUNDS;
    struct stats_row rows[3];
    unsigned kept;
    char err[ERR_LEN];
    cr_assert_eq(stats_table(table, ROUNDS, 3, ROUNDS, NULL, 1, &c, scratch, rows, &kept, err), 0, "%s", err);
    cr_assert_eq(memcmp(&rows[0].ratio, &rows[0].ratios.of_rounds, sizeof(rows[0].ratio)), 0);
    /* The wild round is 5x in every row: its ratio is an ordinary one. */
    cr_assert(interval_rel_halfwidth(&rows[0].ratio) < 0.005);
}

Test(stats, judged_intervals_are_the_ratios_but_the_baselines) {
    fill();
    struct stats_config c;
    stats_config_default(&c);
    struct stats_row rows[3];
    unsigned kept, idx[3];
    struct interval j[3];
    char err[ERR_LEN];
    cr_assert_eq(stats_table(table, ROUNDS, 3, ROUNDS, NULL, 1, &c, scratch, rows, &kept, err), 0);
    cr_assert_eq(stats_judged(rows, 3, 1, j, idx), 2);
    cr_assert_eq(idx[0], 0);
    cr_assert_eq(idx[1], 2);
    cr_assert_eq(memcmp(&j[1], &rows[2].ratio, sizeof(j[1])), 0);
    /* A table of its baseline alone: its median is what a reader reads. */
    cr_assert_eq(stats_table(table, ROUNDS, 1, ROUNDS, NULL, 0, &c, scratch, rows, &kept, err), 0);
    cr_assert_eq(stats_judged(rows, 1, 0, j, idx), 1);
    cr_assert_eq(idx[0], 0);
    cr_assert_eq(memcmp(&j[0], &rows[0].median, sizeof(j[0])), 0);
}

Test(stats, a_bad_table_names_the_field) {
    fill();
    struct stats_config c;
    stats_config_default(&c);
    struct stats_row rows[3];
    unsigned kept;
    char err[ERR_LEN];
    cr_assert_eq(stats_table(table, ROUNDS, 3, ROUNDS, NULL, 3, &c, scratch, rows, &kept, err), DV_ERR);
    cr_assert_str_eq(err, "stats: baseline: row 3 is not among the 3 rows");
    cr_assert_eq(stats_table(table, ROUNDS - 1, 3, ROUNDS, NULL, 0, &c, scratch, rows, &kept, err), DV_ERR);
    cr_assert_str_eq(err, "stats: stride: 39 is under the 40 rounds");
    unsigned char all[ROUNDS];
    memset(all, 1, sizeof(all));
    cr_assert_eq(stats_table(table, ROUNDS, 3, ROUNDS, all, 0, &c, scratch, rows, &kept, err), DV_ERR);
    cr_assert_str_eq(err, "stats: rounds: none of the 40 rounds was kept");
    c.method = (enum ratio_method)5;
    cr_assert_eq(stats_table(table, ROUNDS, 3, ROUNDS, NULL, 0, &c, scratch, rows, &kept, err), DV_ERR);
    cr_assert_str_eq(err, "stats: method: 5 is not a known ratio method");
    stats_config_default(&c);
    unsigned char d3[ROUNDS] = {0};
    d3[0] = 1;
    table[2 * ROUNDS + 4] = 0;
    cr_assert_eq(stats_table(table, ROUNDS, 3, ROUNDS, d3, 0, &c, scratch, rows, &kept, err), DV_ERR);
    cr_assert_str_eq(err, "stats: row 2, kept round 3: 0 is not a finite positive time");
    c.level = 1.5;
    fill();
    cr_assert_eq(stats_table(table, ROUNDS, 3, ROUNDS, NULL, 0, &c, scratch, rows, &kept, err), DV_ERR);
    cr_assert_str_eq(err, "interval: level: 1.5 is outside (0, 1)");
}

Test(stats, the_default_config_keeps_the_tables_figure) {
    struct stats_config c;
    stats_config_default(&c);
    cr_assert_float_eq(c.level, 0.95, 0);
    cr_assert_float_eq(c.resolution, 0, 0);
    cr_assert_eq(c.method, RATIO_OF_MEDIANS);
}
