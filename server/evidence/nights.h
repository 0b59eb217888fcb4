/* nights.h -- did anything change since last night? Each night's ratios
 * compared with the nights before it on the same GPU model.
 *
 * A night's record (evidence.h) is compared, row by row (table id and row
 * name), with the previous good night of the same suite and suite version
 * on the same GPU model, and with the median of the last NIGHTS_HISTORY good
 * nights (kernels/model/stats/compare.h: compare_pair, compare_history). Each
 * row's ratio carries its 95% interval (ratio_ci in the record's summary);
 * the label says what the interval of the change proves against the
 * tolerance: same, higher, lower or ambiguous, with the change and its
 * interval. A row is not compared (its entry null) where either night has
 * no interval (a record from before them) or the row is new. Baseline rows
 * (1 by definition) are left out.
 *
 * Beside the rows, what changed between the two nights that can move a
 * ratio: the NVIDIA driver, the CUDA level it supports, the CUDA runtime,
 * nvcc, the build revision and server version, the GPU's name, and the SM
 * clock (measured, when it moved by more than NIGHTS_CLOCK_CHANGE, and
 * rated). And a line for people: "unchanged since 2026-11-30" (the first of
 * a run of nights each the same as the one before), or what changed with
 * its interval.
 *
 * The comparison is written into the record when it is filed (so a night
 * says what it was compared with, even after later nights arrive) and read
 * back by the history, the index and /metrics. Pure JSON in and out, no
 * disk: older.c finds the nights.
 */
#ifndef DV_NIGHTS_H
#define DV_NIGHTS_H

#include <stddef.h>

#include <jansson.h>

/* Good nights the median is taken over (the previous one among them). */
#define NIGHTS_HISTORY 7
/* A relative change of a ratio too small to matter between two nights: the
 * nights' own wander, which no single night's interval sees. Chosen from an
 * A/A run on an H200 (tests/bench/aa_measure.c: 24 pairs of the lesson's
 * Part 1 + Part 2 request in one session, 120 ratios): the largest change
 * within a pair was 0.12% and the widest change interval +-0.28%, so 0.5% is
 * the smallest tolerance that reads every ratio "same" (0.25% reads 78%);
 * twice that leaves as much again for what one session cannot show (another
 * boot, another card of the model). README "Nights compared". */
#define NIGHTS_TOLERANCE 0.01
/* A measured SM clock that moved by more than this is named as a change. */
#define NIGHTS_CLOCK_CHANGE 0.02

/* The comparison of `night` (a record with "date", "summary", "document"
 * and "provenance", as record_build.c builds it) with the good records
 * older[0..n) of the same suite, version and GPU model, newest first
 * (older[0] the previous good night; n may be 0), at `tolerance`. A new
 * reference, or NULL with *bad set when a member did not go in (out of
 * memory). Shape (api/openapi.yaml, Comparison):
 *   {"tolerance", "previous": {"date", "finished_utc"} | null,
 *    "history_nights", "unchanged_since": date | null,
 *    "counts": {"same", "higher", "lower", "ambiguous", "not_compared"},
 *    "changed": higher + lower, "environment": [{"what", "before", "after"}],
 *    "summary": text,
 *    "tables": [{"id", "unchanged_since": date | null, "compared", "changed"}],
 *    "rows": [{"table", "name", "label", "ratio", "ratio_ci",
 *              "previous": {"label", "ratio", "change", "change_ci"} | null,
 *              "history": {"label", "nights", "median", "change", "change_ci"}
 *                         | null}]}
 * The counts are against the previous night. */
json_t *nights_compare(json_t *night, json_t *const *older, size_t n, double tolerance, int *bad);

/* The comparison of record `rec` without its rows (what the index and each
 * history night carry), a new reference; JSON null when the record has
 * none (a failed night, a record from before comparisons). */
json_t *nights_brief(json_t *rec, int *bad);

/* The comparison entry of row `name` of table `table` in record `rec`
 * against the previous night ({"label", "ratio", "change", "change_ci"}), a
 * borrowed reference; NULL when there is none. */
json_t *nights_row(json_t *rec, const char *table, const char *name);

#endif /* DV_NIGHTS_H */
