/* names.c -- see names.h. */
#include "server/evidence/names.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/base/timeutil.h"
#include "server/evidence/types.h"

void names_date_of(time_t t, char *out) { timeutil_date(t, out, EVIDENCE_DATE_LEN); }

int names_valid_date(const char *s) {
    if (!s || strlen(s) != 10) return 0;
    for (int i = 0; i < 10; i++) {
        if (i == 4 || i == 7) {
            if (s[i] != '-') return 0;
        } else if (!isdigit((unsigned char)s[i])) {
            return 0;
        }
    }
    int y = atoi(s), m = atoi(s + 5), d = atoi(s + 8);
    if (y < 1970 || m < 1 || m > 12 || d < 1) return 0;
    static const int mdays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    int max = mdays[m - 1] + (m == 2 && leap);
    return d <= max;
}

int names_slug(const char *device_name, char *out, size_t len) {
    size_t n = 0, cap = len < EVIDENCE_SLUG_LEN ? len : EVIDENCE_SLUG_LEN;
    int dash = 0;
    if (!out || cap == 0) return -1;
    for (const char *p = device_name ? device_name : ""; *p && n + 1 < cap; p++) {
        unsigned char c = (unsigned char)*p;
        if (isalnum(c) && c < 128) {
            if (dash && n > 0 && n + 2 < cap) out[n++] = '-';
            else if (dash && n > 0) break;
            dash = 0;
            out[n++] = (char)tolower(c);
        } else {
            dash = 1;
        }
    }
    out[n] = '\0';
    return n == 0 ? -1 : 0;
}

int names_valid_slug(const char *s) {
    size_t n = s ? strlen(s) : 0;
    if (n == 0 || n >= EVIDENCE_SLUG_LEN || s[0] == '-' || s[n - 1] == '-') return 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (!(isdigit(c) || (c >= 'a' && c <= 'z') || (c == '-' && s[i + 1] != '-'))) return 0;
    }
    return strcmp(s, "latest") != 0 && strcmp(s, "history") != 0 && strcmp(s, "refresh") != 0 && !names_valid_date(s);
}
