/* request.h -- the JSON body of POST /measure and POST /analyze into a
 * validated struct dv_options.
 *
 * Parsed with json_loadb(JSON_REJECT_DUPLICATES) and unpacked at once, or
 * unpacked from an object the caller parsed (request_parse_json()); no json_t
 * is kept. Fields: part (1, 2 or "all"), predicates
 * (array of names or expressions), baseline, blocks (integer or "auto"),
 * threads_per_block (integer or [x, y]), iterations, max_halfwidth (max_noise,
 * its old name), budget_ms, min_samples, max_samples, scenario, witness,
 * counters, instructions. Unknown fields, wrong types, out-of-range values,
 * duplicate keys
 * and malformed JSON are errors naming the field (or line and column).
 */
#ifndef DV_REQUEST_H
#define DV_REQUEST_H

#include <stddef.h>

#include <jansson.h>

#include "kernels/model/model/experiment.h"

/* Request error: HTTP status to answer with, the field (or "" for the body),
 * and the reason. For an expression error (it does not parse, or it fails
 * for some thread) `expr_column` is the 1-based column inside that
 * predicate and `caret` its two-line diagnostic. */
struct request_error {
    int status;        /* 400 */
    char field[64];
    char reason[ERR_LEN];
    int line, column;  /* JSON syntax: position in the body; 0 when none */
    int expr_column;   /* predicate expression column; 0 when none       */
    char caret[PREDICATE_CARET_LEN];
};

/* Parses `len` bytes of `body` into `o` (defaults first, then the body's
 * fields), then options_validate(). Returns 0, or -1 with `e` filled. An empty
 * body ({}) means the lesson's defaults. */
int request_parse(const char *body, size_t len, struct dv_options *o, struct request_error *e);

/* request_parse() of a body already parsed into `root` (borrowed: the
 * caller keeps it; parse it with JSON_REJECT_DUPLICATES, as request_parse()
 * does, for the same refusals): the same fields, checks and errors, but
 * for the body's syntax, which was the caller's to read. For a caller that
 * holds a message with the request inside it (the GPU worker's). */
int request_parse_json(const json_t *root, struct dv_options *o, struct request_error *e);

/* A refusal that options_validate() or plan_report() wrote as `msg`
 * ("<field>: why", or "why") and `fault` (what it is about) into `e`: status
 * 400, fault->field, the reason (msg without the field's name in front of
 * it), and for an expression the column and caret, copied from the fault's
 * values. So both routes give a plan's refusal (a predicate that fails for
 * some thread) the same fields as a validation's. */
void request_error_from(const struct dv_fault *fault, const char *msg, struct request_error *e);

/* Serialises `o` back into the JSON body that request_parse() accepts (a
 * malloc()ed string, NULL on OOM). The server passes jobs to the GPU worker
 * this way and evidence files record it. */
char *request_dump(const struct dv_options *o);

#endif /* DV_REQUEST_H */
