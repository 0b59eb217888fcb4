/* evidence.h -- the evidence store: each night's suite results as durable
 * files, and the read side the /evidence routes answer from.
 *
 * Layout under the root directory (default var/evidence):
 *   <YYYY-MM-DD>/<suite>.json         the night's record (schema
 *                                     divergence.evidence.v1): status ok or
 *                                     failed, provenance, the divergence.v1
 *                                     document, a summary of the ratios and the
 *                                     transcript
 *   <YYYY-MM-DD>/<suite>.txt          the lesson-layout transcript
 *   <YYYY-MM-DD>/<suite>.failed.json  a failure on a date that already has a
 *                                     good record (a failure never replaces
 *                                     good evidence)
 * Dates are UTC. The files are the only state: "latest" is computed by
 * scanning dates newest first for a record with status ok, so no index can
 * disagree with the files after a crash. See evidence.c for the write
 * protocol.
 *
 * One process writes (the server); any number may read. Thread-safe.
 */
#ifndef DV_EVIDENCE_H
#define DV_EVIDENCE_H

#include <stddef.h>
#include <time.h>
#include "base/status.h"

#define EVIDENCE_SCHEMA "divergence.evidence.v1"
#define EVIDENCE_DEFAULT_DIR "var/evidence"
#define EVIDENCE_TMP_PREFIX ".tmp-"
#define EVIDENCE_DATE_LEN 11 /* "YYYY-MM-DD" + NUL */

/* Cache-Control values the routes suggest: the latest views change nightly; a
 * past night's file never changes again (today's still may: a re-run). */
#define EVIDENCE_CACHE_LATEST "public, max-age=300, stale-while-revalidate=3600"
#define EVIDENCE_CACHE_IMMUTABLE "public, max-age=31536000, immutable"
#define EVIDENCE_CACHE_MISSING "public, max-age=60"

struct evidence;

/* One night's result for one suite, as the refresh hands it over. Strings
 * are borrowed. */
struct evidence_record {
    const char *suite;         /* a name from the suites table                   */
    const char *date;          /* YYYY-MM-DD it is filed under; NULL: from
                                  finished_utc                                   */
    int ok;                    /* 1: good evidence; 0: a failure                 */
    const char *reason;        /* why it failed (required when !ok)              */
    const char *request_json;  /* the request body that ran (JSON), or NULL      */
    const char *queued_utc;    /* ISO 8601 UTC timestamps; NULL when unknown     */
    const char *started_utc;
    const char *finished_utc;  /* NULL: now                                      */
    const char *document_json; /* divergence.v1 document, or NULL (required ok)  */
    const char *transcript;    /* lesson text; NULL: made from the document      */
};

/* Opens (creating it and its parents when missing) the store at `root` and
 * removes temp files that a crash left behind. Returns NULL with `err`. */
struct evidence *evidence_open(const char *root, char *err);
void evidence_close(struct evidence *ev);

/* The store's root directory. */
const char *evidence_root(const struct evidence *ev);

/* Files `rec` durably. A good record replaces that date's record; a failure
 * replaces that date's record only when it is not a good one, and is
 * otherwise written as <suite>.failed.json. Returns 0, or -1 with `err`;
 * on any failure, crash included, every file is either its old or its new
 * content, never a part. */
int evidence_write(struct evidence *ev, const struct evidence_record *rec, char *err);

/* Writes `len` bytes of `data` to `dir`/`name` durably: a temp file
 * (EVIDENCE_TMP_PREFIX, O_EXCL) in the same directory, written, fsync()ed,
 * renamed over the name, then the directory fsync()ed. Returns 0, or -1 with
 * `err` (the temp file removed). */
int evidence_write_file(const char *dir, const char *name, const void *data, size_t len, char *err);

/* Removes temp files left in the root and in every date directory. Returns
 * how many were removed, or -1 with `err`. evidence_open() calls it. */
int evidence_sweep(struct evidence *ev, char *err);

/* 1 when `s` is a well-formed existing calendar date YYYY-MM-DD. */
int evidence_valid_date(const char *s);

/* UTC date of time `t` as YYYY-MM-DD into `out` (EVIDENCE_DATE_LEN). */
void evidence_date_of(time_t t, char *out);

/* Answer to one GET under /evidence. */
struct evidence_response {
    int status;                /* 200, 304, 400, 404, 500                      */
    char *body;                /* malloc()ed, NULL for 304                      */
    size_t len;
    const char *content_type;  /* static string                                */
    char etag[40];             /* strong, quoted: "\"<16 hex>\"", "" when none  */
    char last_modified[40];    /* IMF-fixdate, "" when none                     */
    const char *cache_control; /* static string, NULL when none                 */
};

/* Answers GET `url_path` (already percent-decoded, no query string):
 *   /evidence/latest                     index: suite -> date, GPU, status
 *   /evidence/latest/{suite}[.json|.txt] the newest good record or transcript
 *   /evidence/{date}/{suite}[.json|.txt] one night's record or transcript
 *   /evidence/history/{suite}            each night's ratios, oldest first
 * Names are checked against the suites table and dates against the calendar,
 * so no path outside the store can be reached. `if_none_match` and
 * `if_modified_since` are the request's headers (NULL when absent): when they
 * say the client's copy is current the answer is 304 with no body.
 * Returns out->status; `out` is always filled (release with
 * evidence_response_cleanup). */
int evidence_http_get(struct evidence *ev, const char *url_path, const char *if_none_match,
                      const char *if_modified_since, struct evidence_response *out);
void evidence_response_cleanup(struct evidence_response *r);

/* The conditional-GET rule (RFC 9110 13.2.2): If-None-Match decides when
 * present (weak comparison, "*" matches); otherwise If-Modified-Since means
 * not modified when `last_modified` is at or before it. 1: answer 304. */
int evidence_not_modified(const char *etag, time_t last_modified, const char *if_none_match,
                          const char *if_modified_since);

/* HTTP dates: IMF-fixdate into `out` (at least 30 bytes); parse accepts
 * IMF-fixdate and returns (time_t)-1 for anything else. */
void evidence_http_date(time_t t, char *out, size_t len);
time_t evidence_parse_http_date(const char *s);

/* Strong ETag of `len` bytes of `data` into `out` (40 bytes): "\"<hex>\"". */
void evidence_etag(const void *data, size_t len, char *out);

#endif /* DV_EVIDENCE_H */
