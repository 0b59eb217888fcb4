/* test_fit.c -- T(x) = a + b x through a table's rows, a line per round:
 * on rounds of known lines the medians and intervals recover them, a round
 * dropped is left out, and what cannot be fitted is refused. Also the
 * per-row references of the ratios (stats_table_ref(), the sampling's). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/model/model/experiment.h"
#include "kernels/model/stats/fit.h"
#include "kernels/model/stats/sampling.h"
#include "kernels/model/stats/stats.h"

#define ROWS 5
#define ROUNDS 41

/* Rows at x = 1, 2, 4, 8, 16; round k's line a_k + b_k x with a_k and b_k
 * spread around 0.05 and 0.02, and, in round 7 (dropped), a wild line. */
static void make(double *samples, double *x, int *use, double *med, unsigned char *drop) {
    static const double xs[ROWS] = {1, 2, 4, 8, 16};
    for (unsigned r = 0; r < ROWS; r++) {
        x[r] = xs[r];
        use[r] = 1;
    }
    for (unsigned k = 0; k < ROUNDS; k++) {
        const double a = 0.05 * (1 + 0.01 * ((int)(k * 7 % 11) - 5)), b = 0.02 * (1 + 0.005 * ((int)(k * 3 % 7) - 3));
        drop[k] = k == 7;
        for (unsigned r = 0; r < ROWS; r++) samples[r * ROUNDS + k] = k == 7 ? 100.0 : a + b * x[r];
    }
    for (unsigned r = 0; r < ROWS; r++) med[r] = 0.05 + 0.02 * x[r];
}

Test(fit, the_medians_of_the_rounds_lines_and_their_intervals) {
    double samples[ROWS * ROUNDS], x[ROWS], med[ROWS], scratch[4 * ROUNDS];
    int use[ROWS];
    unsigned char drop[ROUNDS];
    make(samples, x, use, med, drop);
    struct fit_result f;
    char err[ERR_LEN] = "";
    cr_assert_eq(fit_rounds(samples, ROUNDS, ROWS, ROUNDS, drop, x, use, med, 0.95, scratch, &f, err), 0, "%s", err);
    cr_expect_eq(f.points, ROWS);
    cr_expect_eq(f.rounds, ROUNDS - 1, "the dropped round is left out");
    cr_expect_float_eq(f.a.point, 0.05, 0.0005);
    cr_expect_float_eq(f.b.point, 0.02, 0.0001);
    cr_expect_float_eq(f.b_over_a.point, 0.4, 0.01);
    cr_expect(f.a.lo <= f.a.point && f.a.point <= f.a.hi && f.a.hi - f.a.lo < 0.005, "[%g, %g]", f.a.lo, f.a.hi);
    cr_expect(f.b.lo <= f.b.point && f.b.point <= f.b.hi, "[%g, %g]", f.b.lo, f.b.hi);
    cr_expect(f.a.level >= 0.95);
    cr_expect(f.rms < 1e-12 && f.max_rel < 1e-12, "the medians lie on their line");
    /* A row off the line: the residual says by how much. */
    med[4] *= 1.1;
    cr_assert_eq(fit_rounds(samples, ROUNDS, ROWS, ROUNDS, drop, x, use, med, 0.95, scratch, &f, err), 0, "%s", err);
    cr_expect(f.max_rel > 0.01 && f.rms > 0, "%g %g", f.max_rel, f.rms);
    /* One distinct x is no line; a non-positive sample is refused by row. */
    for (unsigned r = 0; r < ROWS; r++) x[r] = 3;
    cr_expect_eq(fit_rounds(samples, ROUNDS, ROWS, ROUNDS, drop, x, use, med, 0.95, scratch, &f, err), -1);
    cr_expect(strstr(err, "two distinct"), "%s", err);
    make(samples, x, use, med, drop);
    samples[2 * ROUNDS + 3] = -1;
    cr_expect_eq(fit_rounds(samples, ROUNDS, ROWS, ROUNDS, drop, x, use, med, 0.95, scratch, &f, err), -1);
    cr_expect(strstr(err, "row 2, round 3"), "%s", err);
}

/* Each row's ratio over its own reference row: row 2 over row 1 (2x),
 * row 1 its own (1 [1, 1]), row 0 the baseline, over itself. */
Test(fit, ratios_over_each_rows_reference) {
    enum { N = 3, K = 20 };
    double samples[N * K], scratch[4 * K];
    for (unsigned k = 0; k < K; k++) {
        const double noise = 1 + 0.001 * (k % 5);
        samples[0 * K + k] = 1.0 * noise;
        samples[1 * K + k] = 3.0 * noise;
        samples[2 * K + k] = 6.0 * noise;
    }
    struct stats_config c;
    stats_config_default(&c);
    c.method = RATIO_OF_ROUNDS;
    struct stats_row out[N];
    unsigned kept = 0;
    char err[ERR_LEN] = "";
    const unsigned ref[N] = {0, 1, 1};
    cr_assert_eq(stats_table_ref(samples, K, N, K, NULL, 0, ref, &c, scratch, out, &kept, err), 0, "%s", err);
    cr_expect_float_eq(out[2].ratio.point, 2.0, 1e-12, "row 2 over row 1");
    cr_expect_float_eq(out[1].ratio.point, 1.0, 0);
    cr_expect_float_eq(out[1].ratio.lo, 1.0, 0);
    cr_expect_float_eq(out[0].ratio.point, 1.0, 0);
    /* Without references every ratio is over the baseline. */
    cr_assert_eq(stats_table(samples, K, N, K, NULL, 0, &c, scratch, out, &kept, err), 0, "%s", err);
    cr_expect_float_eq(out[2].ratio.point, 6.0, 1e-12);
    const unsigned bad[N] = {0, 3, 1};
    cr_expect_eq(stats_table_ref(samples, K, N, K, NULL, 0, bad, &c, scratch, out, &kept, err), DV_ERR);
    cr_expect(strstr(err, "row 1's, 3"), "%s", err);
}

/* The sampling reports a table's fit from its rows' x, over the rounds it
 * kept, and leaves the rows' ratios over their references. */
Test(fit, sampling_reports_the_tables_fit) {
    struct dv_options o;
    experiment_defaults(&o);
    o.min_samples = 10;
    o.max_samples = 30;
    struct sampling s;
    char err[ERR_LEN] = "";
    cr_assert_eq(sampling_init(&s, 3, 0, &o, 0, err), 0, "%s", err);
    const unsigned ref[3] = {0, 0, 1};
    cr_assert_eq(sampling_references(&s, ref, err), 0, "%s", err);
    enum stoprule_reason why = STOPRULE_CONTINUE;
    for (unsigned batch = 0; why == STOPRULE_CONTINUE && batch < 10; batch++) {
        const unsigned n = sampling_room(&s, 8);
        for (unsigned k = 0; k < n; k++) {
            const double wob = 1 + 0.0005 * ((s.taken + k) % 3);
            sampling_row(&s, 0)[s.taken + k] = (0.01 + 0.02 * 1) * wob;
            sampling_row(&s, 1)[s.taken + k] = (0.01 + 0.02 * 2) * wob;
            sampling_row(&s, 2)[s.taken + k] = (0.01 + 0.02 * 4) * wob;
        }
        cr_assert_eq(sampling_file(&s, n, NAN, 1.0, &why, err), 0, "%s", err);
    }
    struct dv_table t;
    memset(&t, 0, sizeof t);
    t.nrows = 3;
    for (unsigned r = 0; r < 3; r++) {
        t.rows[r].in_fit = 1;
        t.rows[r].fit_x = r == 0 ? 1 : r == 1 ? 2 : 4;
    }
    sampling_report(&s, &t);
    cr_assert(t.fit.present);
    cr_expect_eq(t.fit.points, 3);
    cr_expect_float_eq(t.fit.a, 0.01, 0.0002);
    cr_expect_float_eq(t.fit.b, 0.02, 0.0002);
    cr_expect(t.fit.b_over_a_ci.lo <= t.fit.b_over_a && t.fit.b_over_a <= t.fit.b_over_a_ci.hi);
    cr_expect_float_eq(t.rows[2].ratio, 0.09 / 0.05, 1e-9, "row 2 over row 1");
    cr_expect_float_eq(t.rows[1].ratio, 0.05 / 0.03, 1e-9, "row 1 over the baseline");
    /* A table without fit rows has no fit. */
    for (unsigned r = 0; r < 3; r++) t.rows[r].in_fit = 0;
    sampling_report(&s, &t);
    cr_expect_not(t.fit.present);
    sampling_cleanup(&s);
}
