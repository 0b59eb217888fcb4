/* request.h -- the JSON body of POST /measure and POST /analyze into a
 * validated struct dv_options.
 *
 * Parsed with json_loadb(JSON_REJECT_DUPLICATES) and unpacked at once; the
 * json_t never leaves this file. Fields: part (1, 2 or "all"), predicates
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
#include "kernels/model/experiment.h"

/* Request error: HTTP status to answer with, the field (or "" for the body),
 * and the reason. For an expression error `column` is the 1-based column
 * inside that predicate and `caret` its two-line diagnostic. */
struct request_error {
    int status;        /* 400 */
    char field[64];
    char reason[ERR_LEN];
    int line, column;  /* JSON syntax: position in the body; 0 when none */
    int expr_column;   /* predicate expression column; 0 when none       */
    char caret[2 * PREDICATE_TEXT_LEN + 4];
};

/* Parses `len` bytes of `body` into `o` (defaults first, then the body's
 * fields), then options_validate(). Returns 0, or -1 with `e` filled. An empty
 * body ({}) means the lesson's defaults. */
int request_parse(const char *body, size_t len, struct dv_options *o, struct request_error *e);

/* Serialises `o` back into the JSON body that request_parse() accepts (a
 * malloc()ed string, NULL on OOM). The server passes jobs to the GPU worker
 * this way and evidence files record it. */
char *request_dump(const struct dv_options *o);

#endif /* DV_REQUEST_H */
