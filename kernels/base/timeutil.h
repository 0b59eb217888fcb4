/* timeutil.h -- the one place that reads clocks and formats times.
 *
 * Nothing else calls clock_gettime() or strftime(), so which clock a
 * duration comes from is decided here once: durations come from
 * CLOCK_MONOTONIC, which never jumps, and every timestamp the project writes
 * is UTC in one of two ISO 8601 forms.
 */
#ifndef DV_TIMEUTIL_H
#define DV_TIMEUTIL_H

#include <pthread.h>
#include <stddef.h>
#include <time.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TIMEUTIL_UTC_LEN 21  /* "2026-11-29T03:00:00Z" + NUL */
#define TIMEUTIL_DATE_LEN 11 /* "2026-11-29" + NUL           */
#define TIMEUTIL_HTTP_LEN 30 /* "Sun, 29 Nov 2026 03:00:00 GMT" + NUL */

/* Milliseconds on the monotonic clock (arbitrary origin). */
double timeutil_now_ms(void);

/* The monotonic clock as a timespec `ms` milliseconds from now, for
 * pthread_cond_timedwait on a condition variable from timeutil_cond_init. */
struct timespec timeutil_deadline(double ms);

/* Initialises `c` so that its timed waits read the clock timeutil_deadline()
 * reads (a wall-clock step then neither cuts a wait short nor stretches it).
 * Returns 0, or the error number pthread_cond_init gave. */
int timeutil_cond_init(pthread_cond_t *c);

/* Sleeps `ms` milliseconds on the monotonic clock, to the end even when a
 * signal interrupts it (nothing <= 0). */
void timeutil_sleep_ms(double ms);

/* Seconds since the epoch on the wall clock, with sub-second precision. */
double timeutil_wall_s(void);

/* `t` (seconds since the epoch) as "YYYY-MM-DDTHH:MM:SSZ" into out[len]
 * (len >= TIMEUTIL_UTC_LEN; shorter buffers get ""). */
void timeutil_utc(time_t t, char *out, size_t len);

/* `t` as "YYYY-MM-DD" (UTC) into out[len] (len >= TIMEUTIL_DATE_LEN). */
void timeutil_date(time_t t, char *out, size_t len);

/* `t` as an HTTP date (RFC 9110 IMF-fixdate), independent of the locale. */
void timeutil_http_date(time_t t, char *out, size_t len);

/* Parses "YYYY-MM-DDTHH:MM:SSZ" into seconds since the epoch. Returns 0, or
 * -1 when `s` is not of that form. */
int timeutil_parse_utc(const char *s, time_t *out);

#ifdef __cplusplus
}
#endif

#endif /* DV_TIMEUTIL_H */
