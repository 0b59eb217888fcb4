/* test_timeutil.c -- the one clock and the UTC formats. */
#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "kernels/base/timeutil.h"

Test(timeutil, utc_and_date_of_a_known_instant) {
    char utc[TIMEUTIL_UTC_LEN], date[TIMEUTIL_DATE_LEN], http[TIMEUTIL_HTTP_LEN];
    timeutil_utc((time_t)1796439600, utc, sizeof utc); /* 2026-12-05T03:00:00Z */
    timeutil_date((time_t)1796439600, date, sizeof date);
    timeutil_http_date((time_t)1796439600, http, sizeof http);
    cr_assert_str_eq(utc, "2026-12-05T03:00:00Z");
    cr_assert_str_eq(date, "2026-12-05");
    cr_assert_str_eq(http, "Sat, 05 Dec 2026 03:00:00 GMT");
}

Test(timeutil, short_buffers_get_an_empty_string) {
    char small[8] = "xxxxxxx";
    timeutil_utc(0, small, sizeof small);
    cr_assert_str_eq(small, "");
}

Test(timeutil, parse_is_the_inverse_of_format) {
    const time_t cases[] = {0, 951782400 /* 2000-02-29 */, 1796439600, 4102444799 /* 2099-12-31T23:59:59 */};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char s[TIMEUTIL_UTC_LEN];
        time_t back = -1;
        timeutil_utc(cases[i], s, sizeof s);
        cr_assert_eq(timeutil_parse_utc(s, &back), 0, "%s", s);
        cr_assert_eq(back, cases[i], "%s", s);
    }
    time_t t;
    cr_assert_eq(timeutil_parse_utc("2026-12-05 03:00:00Z", &t), -1);
    cr_assert_eq(timeutil_parse_utc("2026-13-05T03:00:00Z", &t), -1);
    cr_assert_eq(timeutil_parse_utc("2026-12-05T03:00:00", &t), -1);
}

Test(timeutil, the_monotonic_clock_moves_forward_and_deadlines_add_up) {
    double a = timeutil_now_ms();
    struct timespec d = timeutil_deadline(1500.0), now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    double b = timeutil_now_ms();
    cr_assert(b >= a);
    double ahead = (double)(d.tv_sec - now.tv_sec) * 1e3 + (double)(d.tv_nsec - now.tv_nsec) / 1e6;
    cr_assert(ahead > 1400.0 && ahead <= 1500.0, "deadline %.3f ms ahead", ahead);
    cr_assert(d.tv_nsec >= 0 && d.tv_nsec < 1000000000L);
}

/* A timed wait on a condition variable from timeutil_cond_init() ends at a
 * timeutil_deadline(): the two read the same clock. (On the wall clock the
 * monotonic deadline lies decades in the past and the wait would not wait.) */
Test(timeutil, timed_waits_end_at_the_deadline) {
    pthread_cond_t c;
    pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
    cr_assert_eq(timeutil_cond_init(&c), 0);
    pthread_mutex_lock(&m);
    double t0 = timeutil_now_ms();
    struct timespec until = timeutil_deadline(50);
    int rc;
    while ((rc = pthread_cond_timedwait(&c, &m, &until)) == 0) {}
    double waited = timeutil_now_ms() - t0;
    pthread_mutex_unlock(&m);
    pthread_cond_destroy(&c);
    cr_expect_eq(rc, ETIMEDOUT);
    cr_expect_geq(waited, 49.0, "waited %.1f ms for a 50 ms deadline", waited);
}
