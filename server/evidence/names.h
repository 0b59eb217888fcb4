/* names.h -- the names the evidence store files under: calendar dates
 * (a night's folder) and GPU slugs (a model's folder), checked before any
 * of them reaches a path, and made from a device name or a time.
 *
 * Functions of their arguments alone, so every part that lists or joins a
 * folder (the store, its views, the older nights, the migration of an
 * earlier layout) and the routes ask the same question the same way.
 */
#ifndef DV_NAMES_H
#define DV_NAMES_H

#include <stddef.h>
#include <time.h>

/* 1 when `s` is a well-formed existing calendar date YYYY-MM-DD. */
int names_valid_date(const char *s);

/* UTC date of time `t` as YYYY-MM-DD into `out` (EVIDENCE_DATE_LEN). */
void names_date_of(time_t t, char *out);

/* The slug of GPU model `device_name` into `out` (`len`, at most
 * EVIDENCE_SLUG_LEN used): lower case, each run of other characters one
 * '-', at most 63 characters ("NVIDIA H200" -> "nvidia-h200"). Returns 0,
 * or -1 when nothing is left (an empty name). */
int names_slug(const char *device_name, char *out, size_t len);

/* 1 when `s` is a slug names_slug() can make and not a word the routes use
 * (latest, history, refresh) nor a date. */
int names_valid_slug(const char *s);

#endif /* DV_NAMES_H */
