/* jsonout.h -- the one way the server builds JSON documents, and their text
 * with numbers as short as they can be without changing them.
 *
 * Building. Every member is set with jsonout_put() and every array item
 * added with jsonout_append(). Both take the value (its reference is stolen,
 * on failure too) and set *bad when the value is NULL (its constructor,
 * json_object(), json_integer(), jsonout_str(), ..., had no memory), or
 * when the container is NULL or cannot take it. So a builder calls them in a
 * row without checking each, and checks `bad` once at the end: a document
 * with `bad` set is dropped whole (a route answers 500 "out of memory", a
 * store function returns -1 or NULL) and never goes out with members
 * missing. Strings go in through jsonout_str(), never json_string(): text
 * the program does not control (a reason, a device or host name, a path a
 * client sent) may hold bytes that are not UTF-8, for which json_string()
 * also returns NULL, and an allocation failure must be the only NULL.
 *
 * Text. jansson writes a real with "%.17g" unless told a precision, so a
 * value that was read from "0.1" goes back out as 0.10000000000000001 and a
 * duration rounded to milliseconds as 14.933999999999999. The divergence.v1
 * document is written with 15 significant digits (report.c); anything that
 * re-serialises it, or adds numbers of its own, should not undo that.
 */
#ifndef DV_JSONOUT_H
#define DV_JSONOUT_H

#include <jansson.h>
#include <stddef.h>

/* Sets member `key` of `obj` to `v` (stolen). Sets *bad when `v` or `obj`
 * is NULL or the member cannot be set; leaves it alone otherwise. */
void jsonout_put(json_t *obj, const char *key, json_t *v, int *bad);

/* Appends `v` (stolen) to array `arr`; *bad as for jsonout_put(). */
void jsonout_append(json_t *arr, json_t *v, int *bad);

/* `s` as a JSON string. Each byte of a sequence that is not UTF-8 becomes
 * '?' (the rest is kept as it is). NULL only when out of memory, or when
 * `s` is NULL. */
json_t *jsonout_str(const char *s);

/* jsonout_str(`s`), or JSON null when `s` is NULL. */
json_t *jsonout_str_or_null(const char *s);

/* `v` as a real, or JSON null when it is NaN or infinite (which JSON cannot
 * write). */
json_t *jsonout_num(double v);

/* json_dumps(`v`, `flags`) with JSON_REAL_PRECISION(15) when every real in
 * `v` reads back identical from 15 significant digits (a value parsed from a
 * document or rounded to a fixed number of decimals always does), else with
 * 17, which is exact for any double. `flags` must not carry a precision.
 * malloc()ed, NULL on OOM or when `v` is NULL. Use it, not json_dumps(),
 * for every text the server writes (see jsonout_dumps in jsonout.c). */
char *jsonout_dumps(const json_t *v, size_t flags);

#endif /* DV_JSONOUT_H */
