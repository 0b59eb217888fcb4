/* jsonout.h -- JSON text for replies and stored records with numbers as
 * short as they can be without changing them.
 *
 * jansson writes a real with "%.17g" unless told a precision, so a value
 * that was read from "0.1" goes back out as 0.10000000000000001 and a
 * duration rounded to milliseconds as 14.933999999999999. The divergence.v1
 * document is written with 15 significant digits (report.c); anything that
 * re-serialises it, or adds numbers of its own, should not undo that.
 */
#ifndef DV_JSONOUT_H
#define DV_JSONOUT_H

#include <jansson.h>
#include <stddef.h>

/* json_dumps(`v`, `flags`) with JSON_REAL_PRECISION(15) when every real in
 * `v` reads back identical from 15 significant digits (a value parsed from a
 * document or rounded to a fixed number of decimals always does), else with
 * 17, which is exact for any double. `flags` must not carry a precision.
 * malloc()ed, NULL on OOM or when `v` is NULL. */
char *jsonout_dumps(const json_t *v, size_t flags);

#endif /* DV_JSONOUT_H */
