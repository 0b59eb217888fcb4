/* draw.h -- the forms drawn from a record's document: the chart (SVG), the
 * tables as Markdown and as CSV, by the writers `divergence analyze
 * --format` uses (api/report.h), as blobs.
 *
 * The latest views draw each good record once, when it is first read; a
 * night read from disk is drawn per request. Either way the picture is of
 * one record, titled with its suite, its GPU and its night.
 */
#ifndef DV_DRAW_H
#define DV_DRAW_H

#include <jansson.h>
#include <time.h>

#include "server/evidence/blob.h"
#include "server/evidence/suites.h"

struct dv_report;

/* The form `kind` (EVIDENCE_SVG, _MD or _CSV) of record `rec` of `suite`
 * filed under `date`, drawn from `r` (its record_report(); NULL: nothing to
 * draw, and *out stays NULL) into a new blob measured at `mtime`; or, for
 * EVIDENCE_SLIM, the slim record (slim.h, `r` unused: a failed night has
 * one too), with `history` (may be NULL) the suite's history page ending
 * with it. Returns 0, or -1 when out of memory. */
int draw_record(const struct dv_report *r, json_t *rec, const struct suite *suite, const char *date,
                enum evidence_kind kind, time_t mtime, const char *history, struct blob **out);

#endif /* DV_DRAW_H */
