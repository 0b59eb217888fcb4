/* record.h -- one evidence record read back from the store: the file opened
 * safely, the JSON parsed, and the record judged.
 *
 * A record is <gpu>/<date>/<suite>.json (or <suite>.failed.json), schema
 * divergence.evidence.v1 (evidence.h says what it holds). What lies under
 * that name is not trusted: it is read only when it is a regular file of at
 * most RECORD_MAX_BYTES (durable_read: no link followed, no FIFO waited on,
 * no device read), and it is a record only when it parses as a JSON object
 * of that schema with a status. A record that says "ok" is good evidence
 * only when its document reads as divergence.v1 (record_judge): one whose
 * document does not is taken for a failed night, never for the latest good
 * evidence nor for a night to compare with.
 *
 * The GPU views (gpuview.c: the latest of each suite), the older nights a
 * write compares with (older.c), the filing (evidence.c), the migration of
 * an earlier layout (legacy.c) and the history (history.c: each night's
 * entry) read records through here, so all judge a record the same way.
 */
#ifndef DV_RECORD_H
#define DV_RECORD_H

#include <stddef.h>
#include <sys/stat.h>
#include <time.h>

#include <jansson.h>

#include "kernels/model/model/experiment.h"

/* A record is read whole; none written here comes near this (a night of
 * the lesson's suites is under 0.5 MB with every instruction listing). */
#define RECORD_MAX_BYTES (16u << 20)

/* Loads <dir>/<date>/<name>. Returns the object (NULL when missing or not a
 * record) and its stat; with `raw`, its bytes too (malloc()ed, `*rawlen`).
 * *oom is set when it could not tell for want of memory (a record read then
 * may be missing). */
json_t *record_load(const char *dir, const char *date, const char *name, struct stat *st, char **raw,
                    size_t *rawlen, int *oom);

/* The string member `key` of object `obj` (a record or a part of one), or
 * NULL when there is none or it is not a string. Borrowed. */
const char *record_str(json_t *obj, const char *key);

/* 1 when `a` and `b` are the same file as it was: device, inode, size and
 * modification time. A record is replaced by a rename, never rewritten in
 * place, so a new record is a new inode: what was made from a record (a
 * view's blobs, an older night kept) stays valid while its file is the same. */
int record_same_file(const struct stat *a, const struct stat *b);

/* 1 when record `rec` says status "ok". */
int record_ok(json_t *rec);

/* The GPU name a record gives: its summary's, else its own gpu_name; NULL
 * when neither. Borrowed from `rec`. */
const char *record_gpu_name(json_t *rec);

/* When the night of record `rec` was measured: its document's
 * finished_utc, else (a failure without a document) the time it was filed
 * (provenance.finished_utc), else `fallback` (the file's mtime). What the
 * evidence routes send as Last-Modified: the measurement's time, not when
 * the store was copied. */
time_t record_time(json_t *rec, time_t fallback);

/* The document of `rec` read as a report into *out (experiment_report_free
 * it), or NULL when the record has no document that reads as divergence.v1
 * (a failed night, an older schema); `why` (ERR_LEN, may be NULL) then says
 * why. Returns 0, or -1 when out of memory. */
int record_report(json_t *rec, struct dv_report **out, char *why);

/* Judges record `rec` (a record_load() result, the caller's own): when it
 * says ok but its document does not read as divergence.v1, it is made a
 * failure in place: status "failed", a reason naming the document, no
 * summary and no comparison. With `report` (may be NULL) a good record's
 * document read as a report is handed over (NULL otherwise). Returns 0, or
 * -1 when out of memory (then `rec` is as it was). */
int record_judge(json_t *rec, struct dv_report **report);

#endif /* DV_RECORD_H */
