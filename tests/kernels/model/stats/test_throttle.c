/* test_throttle.c -- the throttle guard: the threshold, which rounds a low
 * clock reading takes with it, and the compaction that keeps rows paired. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "kernels/model/stats/throttle.h"

#define RATED 1980.0 /* an H200's rated SM clock, MHz */

static void no_readings(double *mhz, unsigned n) {
    for (unsigned k = 0; k < n; k++) mhz[k] = NAN;
}

Test(throttle, low_is_under_three_quarters_of_rated) {
    cr_assert(throttle_is_low(1484.9, RATED, THROTTLE_DEFAULT_FRACTION));
    cr_assert_not(throttle_is_low(1485.0, RATED, THROTTLE_DEFAULT_FRACTION));
    cr_assert_not(throttle_is_low(NAN, RATED, THROTTLE_DEFAULT_FRACTION), "not read is not low");
    cr_assert_not(throttle_is_low(100, 0, THROTTLE_DEFAULT_FRACTION), "no rated clock judges nothing");
    cr_assert_not(throttle_is_low(100, NAN, THROTTLE_DEFAULT_FRACTION));
}

Test(throttle, a_low_reading_drops_the_rounds_on_both_sides_of_it) {
    double mhz[32];
    unsigned char drop[32];
    unsigned n;
    char err[ERR_LEN];
    no_readings(mhz, 32);
    mhz[0] = 1980; /* a reading before each batch of 8 */
    mhz[8] = 1975;
    mhz[16] = 1000; /* throttled: somewhere after round 8's reading */
    mhz[24] = 1970;
    cr_assert_eq(throttle_mark(mhz, 32, RATED, THROTTLE_DEFAULT_FRACTION, drop, &n, err), 0, "%s", err);
    cr_assert_eq(n, 16);
    for (unsigned k = 0; k < 32; k++) cr_assert_eq(drop[k], k >= 8 && k < 24, "round %u", k);
}

Test(throttle, rounds_before_the_first_reading_take_it_and_after_the_last_take_it) {
    double mhz[12];
    unsigned char drop[12];
    unsigned n;
    char err[ERR_LEN];
    no_readings(mhz, 12);
    mhz[4] = 900;
    cr_assert_eq(throttle_mark(mhz, 12, RATED, THROTTLE_DEFAULT_FRACTION, drop, &n, err), 0);
    cr_assert_eq(n, 12);
    no_readings(mhz, 12);
    mhz[4] = 1980;
    cr_assert_eq(throttle_mark(mhz, 12, RATED, THROTTLE_DEFAULT_FRACTION, drop, &n, err), 0);
    cr_assert_eq(n, 0);
}

Test(throttle, without_a_reading_nothing_is_dropped) {
    double mhz[8];
    unsigned char drop[8];
    unsigned n = 99;
    char err[ERR_LEN];
    no_readings(mhz, 8);
    cr_assert_eq(throttle_mark(mhz, 8, RATED, THROTTLE_DEFAULT_FRACTION, drop, &n, err), 0);
    cr_assert_eq(n, 0);
    cr_assert_eq(throttle_mark(mhz, 0, RATED, THROTTLE_DEFAULT_FRACTION, drop, &n, err), 0);
    cr_assert_eq(n, 0);
}

/* A per-round flag: 0 for "throttled", the rated clock for "fine", judged
 * by the round's own reading only; read between rounds, the same readings
 * also take the round before each low one. */
Test(throttle, a_flag_per_round_drops_exactly_the_flagged_rounds) {
    double mhz[10];
    unsigned char drop[10];
    unsigned n;
    char err[ERR_LEN];
    for (unsigned k = 0; k < 10; k++) mhz[k] = (k == 3 || k == 7) ? 0 : RATED;
    mhz[5] = NAN;
    cr_assert_eq(throttle_mark_each(mhz, 10, RATED, THROTTLE_DEFAULT_FRACTION, drop, &n, err), 0);
    cr_assert_eq(n, 2);
    for (unsigned k = 0; k < 10; k++) cr_assert_eq(drop[k], k == 3 || k == 7, "round %u", k);
    cr_assert_eq(throttle_mark(mhz, 10, RATED, THROTTLE_DEFAULT_FRACTION, drop, &n, err), 0);
    cr_assert_eq(n, 4);
    for (unsigned k = 0; k < 10; k++) cr_assert_eq(drop[k], k == 2 || k == 3 || k == 6 || k == 7, "round %u", k);
    mhz[1] = -1;
    cr_assert_eq(throttle_mark_each(mhz, 10, RATED, THROTTLE_DEFAULT_FRACTION, drop, &n, err), DV_ERR);
    cr_assert_str_eq(err, "throttle: mhz[1]: -1 is not a clock reading");
}

Test(throttle, keep_compacts_every_row_the_same_way) {
    const double a[] = {1, 2, 3, 4, 5, 6};
    const unsigned char drop[] = {0, 1, 0, 0, 1, 0};
    double out[6];
    cr_assert_eq(throttle_keep(a, drop, 6, out), 4);
    cr_assert_arr_eq(out, ((double[]){1, 3, 4, 6}), 4 * sizeof(double));
    cr_assert_eq(throttle_keep(a, NULL, 6, out), 6);
    cr_assert_arr_eq(out, a, sizeof(a));
    double inplace[] = {1, 2, 3, 4, 5, 6};
    cr_assert_eq(throttle_keep(inplace, drop, 6, inplace), 4);
    cr_assert_arr_eq(inplace, ((double[]){1, 3, 4, 6}), 4 * sizeof(double));
}

Test(throttle, bad_input_names_the_field) {
    double mhz[3] = {RATED, -5, RATED};
    unsigned char drop[3];
    unsigned n;
    char err[ERR_LEN];
    cr_assert_eq(throttle_mark(mhz, 3, RATED, 0.75, drop, &n, err), DV_ERR);
    cr_assert_str_eq(err, "throttle: mhz[1]: -5 is not a clock reading");
    mhz[1] = INFINITY;
    cr_assert_eq(throttle_mark(mhz, 3, RATED, 0.75, drop, &n, err), DV_ERR);
    cr_assert_str_eq(err, "throttle: mhz[1]: inf is not a clock reading");
    mhz[1] = RATED;
    cr_assert_eq(throttle_mark(mhz, 3, RATED, 0, drop, &n, err), DV_ERR);
    cr_assert_str_eq(err, "throttle: fraction: 0 is outside (0, 1]");
    cr_assert_eq(throttle_mark(mhz, 3, RATED, 1.5, drop, &n, err), DV_ERR);
    cr_assert_eq(throttle_mark(mhz, 3, RATED, 1.0, drop, &n, err), 0, "1 (any reading under rated) is allowed");
}
