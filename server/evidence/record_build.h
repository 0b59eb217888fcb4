/* record_build.h -- a night's record made from what the refresh hands over:
 * the schema divergence.evidence.v1 written once (evidence.h says what a
 * record holds), apart from the store that files it.
 *
 * A record carries everything a reader needs: status, GPU, provenance, the
 * divergence.v1 document, a summary (the GPU's name and each row's ratio,
 * in this store's own schema, so the history does not depend on the
 * document's field names), the comparison with the good nights before it
 * (nights.h), and the transcript. A document that does not read as
 * divergence.v1 is kept as it is, with no summary, on a failed record; a
 * good record's document must read.
 *
 *   struct record_build b;
 *   if (record_build_init(&b, rec, err) != 0) return -1;   // checked
 *   ... b.older[0..b.nolder) = the good nights before b.date (the store's)
 *   record_build_text(&b, &json, &text, err);
 *   record_build_cleanup(&b);                                // releases older
 */
#ifndef DV_RECORD_BUILD_H
#define DV_RECORD_BUILD_H

#include <jansson.h>
#include <stddef.h>

#include "server/evidence/nights.h"
#include "server/evidence/suites.h"
#include "server/evidence/types.h"

/* A record being made. */
struct record_build {
    const struct evidence_record *rec; /* borrowed, for the build's length      */
    const struct suite *suite;         /* rec->suite's                           */
    char date[EVIDENCE_DATE_LEN];      /* filed under                            */
    char finished[32];                 /* its provenance.finished_utc            */
    json_t *older[NIGHTS_HISTORY];     /* good nights before it, newest first,
                                          trimmed to what a comparison reads;
                                          the build's references                 */
    size_t nolder;
};

/* Checks what evidence_write() requires of `rec` (a known suite, a GPU
 * slug, a document when good, a date or a finished_utc that gives one) and
 * fills `b` with no older night. Returns 0, or -1 with `err` naming the
 * field. */
int record_build_init(struct record_build *b, const struct evidence_record *rec, char *err);

/* The record's text (*json, pretty-printed) and its transcript (*text),
 * both malloc()ed. Returns 0, or -1 with `err` and nothing made. */
int record_build_text(const struct record_build *b, char **json, char **text, char *err);

/* Drops the older nights. */
void record_build_cleanup(struct record_build *b);

#endif /* DV_RECORD_BUILD_H */
