/* slim.h -- the first document a page loads, and each row's listing: a
 * record cut in two.
 *
 * A record's document carries, per measured row, the full instruction
 * profile (`instructions`): the per-region summary a reader sees first and
 * the SASS listing (`instructions.runs`, most of the record's bytes) that
 * a reader opens one row at a time. The slim record is the record with
 * each row's `runs` left out and `instructions.listing_url` in their place,
 * the path of the row's listing; the listing is the row's `instructions`
 * object whole. The record as filed stays available as `.full.json`.
 *
 * Pure functions over a parsed record: no store, no HTTP.
 */
#ifndef DV_SLIM_H
#define DV_SLIM_H

#include <jansson.h>
#include <stddef.h>

/* The slim record of `rec` (not changed), filed under GPU `gpu`, `date`
 * and `suite` (the listing paths name them), as compact JSON with a
 * newline, malloc()ed, its length in *len. `history` (may be NULL) is the
 * suite's history page ending with this night (history_page()'s text): it
 * goes in whole as member "history" when it is at most SLIM_HISTORY_MAX
 * bytes, so a page shows each row's nights without another request. NULL
 * when out of memory. */
#define SLIM_HISTORY_MAX (64 * 1024)
#define SLIM_HISTORY_NIGHTS 30 /* the nights a page draws a row's history over */
char *slim_record(const json_t *rec, const char *gpu, const char *date, const char *suite, const char *history,
                  size_t *len);

/* The listing of row `row` ("T.R": row R of table T, both from 0) of
 * `rec`: the row's `instructions` object as compact JSON with a newline,
 * malloc()ed, its length in *len. NULL with *oom 0 when there is no such
 * row or it has no listing, with *oom 1 when out of memory. */
char *slim_listing(const json_t *rec, const char *row, size_t *len, int *oom);

/* Whether `row` is written as slim_listing() reads it ("0.3"; no sign, no
 * leading zero, at most 4 digits each). */
int slim_valid_row(const char *row);

#endif /* DV_SLIM_H */
