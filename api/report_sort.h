/* report_sort.h -- the data-sort experiment in the document ("sort": the
 * cells of naive / (sort+shade), their verdicts, the per-warp witness and
 * the crossover map), read back, and its lines in the transcript and the
 * Markdown. Private to api/. */
#ifndef DV_REPORT_SORT_H
#define DV_REPORT_SORT_H

#include <jansson.h>

#include "api/strbuf.h"
#include "kernels/model/model/types.h"

/* The "sort" object of `s` (present), or NULL when out of memory. */
json_t *report_sort_json(const struct dv_sort *s);

/* Reads a "sort" object back into `s` (zeroed first). Returns 0, or -1
 * with `err` naming the field ("sort.cells[2].m: expected ..."). */
int report_sort_parse(const json_t *o, struct dv_sort *s, char *err);

/* The crossover map as text lines (nothing when the report has none): the
 * transcript's, and the Markdown's in a fenced block. */
void report_sort_text(struct strbuf *b, const struct dv_report *r);

#endif /* DV_REPORT_SORT_H */
