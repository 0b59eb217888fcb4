/* conditional.c -- see conditional.h.
 *
 * Dates are read field by field at fixed places (each form has one layout,
 * character for character), then checked against the calendar and turned
 * into seconds by day arithmetic of our own, so neither the time zone nor
 * timegm()'s normalising (31 February -> 3 March) can make an impossible
 * date a possible one. Entity-tag lists are walked once by the grammar.
 */
#define _POSIX_C_SOURCE 200809L
#include "server/http/conditional.h"

#include <string.h>

static const char *const months[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                     "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
static const char *const days[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
static const char *const long_days[] = {"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"};

/* The value of the `n` digits at `s`, or -1 when one is not a digit. */
static int digits(const char *s, int n) {
    int v = 0;
    for (int i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return -1;
        v = v * 10 + (s[i] - '0');
    }
    return v;
}

/* The index of the 3-letter name at `s` in `names`, or -1. */
static int name3(const char *s, const char *const *names, int n) {
    for (int i = 0; i < n; i++)
        if (strncmp(s, names[i], 3) == 0) return i;
    return -1;
}

static int leap(long y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

/* Days from 1970-01-01 to y-m-d (m 1..12), proleptic Gregorian. */
static long days_from_civil(long y, int m, int d) {
    y -= m <= 2;
    const long era = y / 400;
    const long yoe = y - era * 400;
    const long doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    const long doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

/* "HH:MM:SS" at `s` into seconds of the day, or -1 (hour 0-23, minute
 * 0-59, second 0-60: RFC 9110 allows a leap second). */
static long time_of_day(const char *s) {
    int h = digits(s, 2), m = digits(s + 3, 2), sec = digits(s + 6, 2);
    if (s[2] != ':' || s[5] != ':' || h < 0 || m < 0 || sec < 0 || h > 23 || m > 59 || sec > 60) return -1;
    return h * 3600L + m * 60L + sec;
}

/* The date and time as Unix time, when the date exists and `wday` (0 =
 * Sunday) is its weekday; else -1. Years before 1970 give -1 too: no
 * resource here is older, and -1 is the answer for "none". */
static time_t assemble(long y, int mon, int d, int wday, long tod) {
    static const int mdays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (y < 1970 || mon < 0 || mon > 11 || d < 1 || tod < 0) return (time_t)-1;
    if (d > mdays[mon] + (mon == 1 && leap(y))) return (time_t)-1;
    long n = days_from_civil(y, mon + 1, d);
    if ((n + 4) % 7 != wday) return (time_t)-1; /* 1970-01-01 was a Thursday (4) */
    return (time_t)(n * 86400L + tod);
}

/* "Sun, 06 Nov 1994 08:49:37 GMT" */
static time_t imf_fixdate(const char *s) {
    if (strlen(s) != 29 || s[3] != ',' || s[4] != ' ' || s[7] != ' ' || s[11] != ' ' || s[16] != ' ' ||
        strcmp(s + 25, " GMT") != 0)
        return (time_t)-1;
    int d = digits(s + 5, 2), y = digits(s + 12, 4);
    if (d < 0 || y < 0) return (time_t)-1;
    return assemble(y, name3(s + 8, months, 12), d, name3(s, days, 7), time_of_day(s + 17));
}

/* "Sunday, 06-Nov-94 08:49:37 GMT": the year within 50 years of now. */
static time_t rfc850_date(const char *s, time_t now) {
    int wday = -1;
    size_t n = 0;
    for (int i = 0; i < 7 && wday < 0; i++) {
        n = strlen(long_days[i]);
        if (strncmp(s, long_days[i], n) == 0 && s[n] == ',') wday = i;
    }
    if (wday < 0) return (time_t)-1;
    const char *p = s + n; /* ", 06-Nov-94 08:49:37 GMT" */
    if (strlen(p) != 24 || p[1] != ' ' || p[4] != '-' || p[8] != '-' || p[11] != ' ' || strcmp(p + 20, " GMT") != 0)
        return (time_t)-1;
    int d = digits(p + 2, 2), yy = digits(p + 9, 2);
    if (d < 0 || yy < 0) return (time_t)-1;
    struct tm tm;
    if (!gmtime_r(&now, &tm)) return (time_t)-1;
    long this_year = 1900L + tm.tm_year;
    long y = this_year - this_year % 100 + yy;
    if (y > this_year + 50) y -= 100;
    return assemble(y, name3(p + 5, months, 12), d, wday, time_of_day(p + 12));
}

/* "Sun Nov  6 08:49:37 1994" (the day one digit after a space, or two). */
static time_t asctime_date(const char *s) {
    if (strlen(s) != 24 || s[3] != ' ' || s[7] != ' ' || s[10] != ' ' || s[19] != ' ') return (time_t)-1;
    int d = s[8] == ' ' ? digits(s + 9, 1) : digits(s + 8, 2), y = digits(s + 20, 4);
    if (d < 0 || y < 0) return (time_t)-1;
    return assemble(y, name3(s + 4, months, 12), d, name3(s, days, 7), time_of_day(s + 11));
}

time_t conditional_parse_date(const char *s, time_t now) {
    if (!s) return (time_t)-1;
    if (strlen(s) == 29 && s[3] == ',') return imf_fixdate(s);
    if (strlen(s) == 24 && s[3] == ' ') return asctime_date(s);
    return rfc850_date(s, now);
}

static const char *ows(const char *p) {
    while (*p == ' ' || *p == '\t') p++;
    return p;
}

/* The opaque-tag at `p` (after an optional W/): its length with both quotes,
 * or 0 when there is none. */
static size_t opaque_tag(const char *p) {
    if (*p != '"') return 0;
    size_t i = 1;
    for (;; i++) {
        unsigned char c = (unsigned char)p[i];
        if (c == '"') return i + 1;
        if (c == 0x21 || (c >= 0x23 && c <= 0x7e) || c >= 0x80) continue;
        return 0; /* a control character, a space, or the end before the closing quote */
    }
}

int conditional_etag_matches(const char *list, const char *etag) {
    if (!list || !etag) return 0;
    if (strncmp(etag, "W/", 2) == 0) etag += 2;
    const size_t elen = opaque_tag(etag);
    if (elen == 0 || etag[elen] != '\0') return 0;
    const char *p = ows(list);
    if (*p == '*') return *ows(p + 1) == '\0';
    int match = 0;
    for (;;) { /* #entity-tag: empty members are allowed, anything else is not */
        p = ows(p);
        if (*p == '\0') return match;
        if (*p == ',') {
            p++;
            continue;
        }
        if (strncmp(p, "W/", 2) == 0) p += 2;
        size_t n = opaque_tag(p);
        if (n == 0) return 0;
        if (n == elen && memcmp(p, etag, n) == 0) match = 1;
        p = ows(p + n);
        if (*p != ',' && *p != '\0') return 0; /* "abc"x: not an entity-tag */
    }
}

int conditional_not_modified(const char *etag, time_t last_modified, const char *if_none_match,
                             const char *if_modified_since, time_t now) {
    if (if_none_match) return etag && *etag && conditional_etag_matches(if_none_match, etag);
    if (!if_modified_since || last_modified == (time_t)-1) return 0;
    time_t since = conditional_parse_date(if_modified_since, now);
    /* A date later than the clock is not valid (13.1.3): ignored. */
    if (since == (time_t)-1 || since > now) return 0;
    return last_modified <= since;
}

int conditional_not_modified_either(const char *etag, const char *other, time_t last_modified,
                                    const char *if_none_match, const char *if_modified_since, time_t now) {
    if (if_none_match && other && *other && conditional_etag_matches(if_none_match, other)) return 1;
    return conditional_not_modified(etag, last_modified, if_none_match, if_modified_since, now);
}
