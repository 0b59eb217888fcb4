/* jsonout.h -- the one way the project builds, parses and writes JSON (the
 * wire format of api/ and every document of server/), and the text with
 * numbers as short as they can be without changing them.
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
 * Parsing. jansson 2.14's parser, when an allocation fails while it
 * stores a string, drops the byte and goes on: it can return a document with
 * a key or a value cut short ("threads_per_blck"), and it does not always
 * say out of memory when it gives up. So the process puts jsonout's
 * allocator under jansson once at start-up (jsonout_use_malloc), which
 * counts the allocations that fail on each thread, and every parse goes
 * through jsonout_loadb(), which refuses a document during whose parse any
 * allocation failed. jsonout_dumps() does the same for the text it writes,
 * and jsonout_failures() lets a caller do it around another layer's parser
 * or writer (report_parse, request_dump).
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

/* Makes jansson allocate through jsonout (with `fn`, or malloc() when NULL,
 * underneath), so that a failed allocation is seen. Call it before any other
 * thread uses jansson: main() does, and a test does to make `fn` fail. */
void jsonout_use_malloc(void *(*fn)(size_t));

/* json_loadb(`text`, `len`, `flags`, `je`), except that it returns NULL as
 * well when any allocation failed while it ran (the document may be cut
 * short); then json_error_code(`je`) is json_error_out_of_memory, as it is
 * for every allocation failure it reports. `je` may be NULL. */
json_t *jsonout_loadb(const char *text, size_t len, size_t flags, json_error_t *je);

/* jsonout_loadb() of a NUL-terminated `text` (NULL gives NULL). */
json_t *jsonout_loads(const char *text, size_t flags, json_error_t *je);

/* 1 when `je` (filled by jsonout_loadb) says an allocation failed. */
int jsonout_oom(const json_error_t *je);

/* How many jansson allocations have failed on this thread so far. Read it
 * before and after a call into code that uses jansson on its own (another
 * layer's parser or writer, which may hide a failure in what it returns): a
 * change means the call met one, and its result is not to be trusted. */
unsigned long jsonout_failures(void);

/* json_dumps(`v`, `flags`) exactly as asked (the caller's precision), NULL
 * on OOM (any allocation that failed while it ran) or when `v` is NULL: for
 * a document whose precision is part of its format (divergence.v1 writes 15
 * digits). */
char *jsonout_dumpf(const json_t *v, size_t flags);

/* json_dumps(`v`, `flags`) with JSON_REAL_PRECISION(15) when every real in
 * `v` reads back identical from 15 significant digits (a value parsed from a
 * document or rounded to a fixed number of decimals always does), else with
 * 17, which is exact for any double. `flags` must not carry a precision.
 * malloc()ed, NULL on OOM (any allocation that failed while it ran) or when
 * `v` is NULL. Use it, not json_dumps(), for every text the server writes. */
char *jsonout_dumps(const json_t *v, size_t flags);

#endif /* DV_JSONOUT_H */
