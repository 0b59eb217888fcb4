/* timeutil.c -- clocks and UTC formatting (timeutil.h). */
#define _POSIX_C_SOURCE 200809L
#include "kernels/base/timeutil.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

double timeutil_now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

struct timespec timeutil_deadline(double ms) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    if (ms < 0) ms = 0;
    long long add_ns = (long long)(ms * 1e6);
    ts.tv_sec += (time_t)(add_ns / 1000000000LL);
    ts.tv_nsec += (long)(add_ns % 1000000000LL);
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    return ts;
}

int timeutil_cond_init(pthread_cond_t *c) {
    pthread_condattr_t ca;
    int rc = pthread_condattr_init(&ca);
    if (rc != 0) return rc;
    rc = pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    if (rc == 0) rc = pthread_cond_init(c, &ca);
    pthread_condattr_destroy(&ca);
    return rc;
}

void timeutil_sleep_ms(double ms) {
    if (!(ms > 0)) return;
    struct timespec until = timeutil_deadline(ms);
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL) == EINTR) {}
}

double timeutil_wall_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int utc_fields(time_t t, struct tm *tm) { return gmtime_r(&t, tm) ? 0 : -1; }

/* `t` in UTC as strftime `format` into out[len]; "" when len is under
 * `need` (the formatted length + NUL) or the time has no UTC form. */
static void utc_format(time_t t, const char *format, size_t need, char *out, size_t len) {
    struct tm tm;
    if (!out || len == 0) return;
    out[0] = '\0';
    if (len < need || utc_fields(t, &tm) != 0) return;
    strftime(out, len, format, &tm);
}

void timeutil_utc(time_t t, char *out, size_t len) { utc_format(t, "%Y-%m-%dT%H:%M:%SZ", TIMEUTIL_UTC_LEN, out, len); }

void timeutil_date(time_t t, char *out, size_t len) { utc_format(t, "%Y-%m-%d", TIMEUTIL_DATE_LEN, out, len); }

void timeutil_http_date(time_t t, char *out, size_t len) {
    /* By hand: strftime's %a and %b follow the locale. */
    static const char *const days[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
    static const char *const months[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                         "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    struct tm tm;
    if (!out || len == 0) return;
    out[0] = '\0';
    if (utc_fields(t, &tm) != 0) return;
    snprintf(out, len, "%s, %02d %s %04d %02d:%02d:%02d GMT", days[tm.tm_wday % 7], tm.tm_mday,
             months[tm.tm_mon % 12], tm.tm_year + 1900, tm.tm_hour, tm.tm_min, tm.tm_sec);
}

/* Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's
 * days_from_civil), so parsing needs neither timegm() nor the TZ variable. */
static long long days_from_civil(long long y, unsigned m, unsigned d) {
    y -= m <= 2;
    const long long era = (y >= 0 ? y : y - 399) / 400;
    const unsigned yoe = (unsigned)(y - era * 400);
    const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (long long)doe - 719468;
}

int timeutil_parse_utc(const char *s, time_t *out) {
    int y, mo, d, h, mi, se;
    char z = 0, extra = 0;
    if (!s || strlen(s) != 20) return -1;
    if (sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d%c%c", &y, &mo, &d, &h, &mi, &se, &z, &extra) != 7 || z != 'Z')
        return -1;
    if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || se > 60 || h < 0 || mi < 0 || se < 0)
        return -1;
    *out = (time_t)(days_from_civil(y, (unsigned)mo, (unsigned)d) * 86400LL + h * 3600LL + mi * 60LL + se);
    return 0;
}
