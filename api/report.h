/* report.h -- a struct dv_report as the divergence.v1 JSON document, as the
 * lesson's text layout, and as Markdown, CSV and an SVG chart.
 *
 * The JSON names are a contract the widget and the nightly evidence read: add
 * fields freely, rename none. NaN and infinity are written as null.
 */
#ifndef DV_REPORT_H
#define DV_REPORT_H

#include <jansson.h>
#include <stddef.h>
#include "kernels/model/model/experiment.h"

#define REPORT_SCHEMA "divergence.v1"

/* The significant digits the document's reals are written with: enough for
 * any timing, and a document read back and written again is byte for byte
 * the same. A message that carries a document (the GPU worker's reply,
 * server/jobs/wire.h) writes it with these too. */
#define REPORT_REAL_PRECISION 15

/* The document as a malloc()ed string (compact unless `pretty`), or NULL on
 * OOM. When `r->measured` is 0 the timing fields are left out (analyze). */
char *report_json(const struct dv_report *r, int pretty);

/* The same document as a tree: a new reference, or NULL on OOM (never a
 * partial document). For a writer that puts it inside a message of its own
 * and writes the whole with JSON_REAL_PRECISION(REPORT_REAL_PRECISION). */
json_t *report_document(const struct dv_report *r);

/* One row exactly as the document writes it under tables[].rows[] (counts
 * as {min, max, total} beside the *_per_block figures), for a route that
 * shows rows outside a whole document (GET /predicates). A new reference, or
 * NULL on OOM (never a partial row). */
json_t *report_row_json(const struct dv_row *row, int measured);

struct listing; /* model/listing/listing.h */

/* A row's instruction profile exactly as the document writes it under
 * tables[].rows[].instructions: a new reference, or NULL on OOM. The
 * profiler's child process writes its result with it. */
json_t *report_instructions_json(const struct listing *l);

/* Reads such an object back into a new listing (*out, listing_free() it),
 * and takes it only whole (listing_check(): regions and runs present,
 * each region the sum of its runs, no more lanes than a warp has): the
 * profiler's answers and the profile cache's files come through here, so
 * what does not add up never reaches a cache. Returns 0, or -1 with `err`
 * naming the field ("instructions.runs[3].pc: expected an integer",
 * "instructions.regions: none: a profile has its regions"). */
int report_instructions_parse(const json_t *o, struct listing **out, char *err);

/* The document's `device` object alone (what GET /device shows): a new
 * reference, or NULL on OOM (never a partial object). */
json_t *report_device_json(const struct dv_device *d);

/* The lesson-layout transcript as a malloc()ed string, or NULL on OOM. */
char *report_text(const struct dv_report *r);

/* The tables as Markdown (report_md.c): a pipe table per table, with the
 * transcript's columns, footnotes, notes and readings. malloc()ed, NULL on
 * OOM. */
char *report_markdown(const struct dv_report *r);

/* The tables as CSV (report_csv.c): one header, one record per row and per
 * reading. malloc()ed, NULL on OOM. */
char *report_csv(const struct dv_report *r);

/* The chart as an SVG 1.1 document (report_svg.c): per row the measured,
 * predicted and (with counters) GPU-counted ratios; `title` (NULL: one made
 * from the GPU) for its <title>. The same report gives the same bytes.
 * malloc()ed, NULL on OOM. */
char *report_svg(const struct dv_report *r, const char *title);

/* Parses a divergence.v1 document back into `r` (the server reads what its
 * GPU worker wrote), which must hold no instruction profiles (a fresh
 * report); the rows' profiles it reads are `r`'s (experiment_report_free()).
 * Returns 0, or -1 with `err`. */
int report_parse(const char *json, size_t len, struct dv_report *r, char *err);
/* The same, of a document already read (`doc`, left as it is). */
int report_parse_json(const json_t *doc, struct dv_report *r, char *err);

#endif /* DV_REPORT_H */
