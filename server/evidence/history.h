/* history.h -- the nights the history route shows, made once per record and
 * kept, and the pages cut from them.
 *
 * GET /evidence/{gpu}/history/{suite} shows, for each night, the record's
 * status (and reason), the suite version, the GPU, when it finished, the
 * comparison without its rows, and every summary row with its table and its
 * comparison against the night before (history_entry()). That entry depends
 * on the record alone, so it is made once per record file and kept:
 *  - in memory, one struct history per suite in each GPU's view
 *    (gpuview.c), its entries' texts shared by the views that follow;
 *  - on disk beside the record, .<suite>.night.json (the sidecar), so that
 *    opening a store of a year of nights reads small sidecars, not every
 *    record in full. The sidecar names the record file it was made from
 *    (inode, size, modification time to the nanosecond) and keeps when the
 *    night was measured (the page's Last-Modified): one that names
 *    another file (the record was replaced or copied) or cannot be read is
 *    ignored and made again. Sidecars are a cache, never needed for
 *    correctness: written whole (durable_replace(), no fsync) by whoever
 *    reads a record that has no current one, and not at all on a store that
 *    cannot be written.
 * A page is the kept texts of its nights joined between a header and a
 * footer: a request reads no record and formats no number, and holds only
 * its page. Its digest (the ETag's input) is made from the nights' digests,
 * each computed once.
 *
 * A struct history is immutable once made; its owner (a GPU view) frees it
 * when the view goes, while readers of the view hold the view's lock.
 */
#ifndef DV_HISTORY_H
#define DV_HISTORY_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <jansson.h>

#include "server/evidence/suites.h"

#define HISTORY_SIDECAR_SCHEMA "divergence.evidence.night.v1"
/* A sidecar is ".<suite>.night.json": hidden, so that what lists or copies
 * a night's records and transcripts (<suite>.json, <suite>.txt: shell and
 * Python globs, the capture scripts) never takes it for one. */
#define HISTORY_SIDECAR_PREFIX "."
#define HISTORY_SIDECAR_SUFFIX ".night.json"
#define HISTORY_SIDECAR_MAX (1u << 20) /* a sidecar larger than this is ignored */
#define HISTORY_DATE_LEN 11             /* EVIDENCE_DATE_LEN                     */
#define HISTORY_DIR_LEN 64              /* a listed date folder's name (DURABLE_NAME_LEN) */

struct history;

/* The history entry of record `rec` (a judged record: record.h) filed under
 * `date`, a new object (api/openapi.yaml, History's nights), or NULL with
 * *bad set when a member did not go in. */
json_t *history_entry(json_t *rec, const char *date, int *bad);

/* The history of `suite` in GPU folder `gdir`, whose date folders are
 * `dates[0..ndates)` ascending (durable_list_dirs()). Each night is taken
 * from `old` (the same suite's history in the view before; NULL: none) when
 * its record is the same file, else from its sidecar when that names the
 * record as it is, else made from the record (and its sidecar written). A
 * name that is not a regular file, or not a record, is no night. Returns a
 * new history, or NULL with *oom set when out of memory (a history with a
 * night missing would show a gap that is not there). */
struct history *history_load(const char *gdir, const struct suite *suite, char (*dates)[HISTORY_DIR_LEN],
                             size_t ndates, const struct history *old, int *oom);
void history_free(struct history *h);

/* How many nights `h` holds (NULL: 0). */
size_t history_nights(const struct history *h);

/* A page (schema divergence.evidence.history.v1) of `h` (NULL: no nights)
 * for `suite` on GPU `slug` ("": none known): up to `limit` nights before
 * `cursor` (a date; NULL: from the newest), oldest first, and "next_cursor"
 * (the page's oldest date when older nights exist, else null). Returns the
 * text (malloc()ed, NUL-terminated) with its length, the newest
 * measurement time of its nights (record_time(); (time_t)-1 when it has
 * none) and its digest; NULL when out of memory. */
char *history_page(const struct history *h, const struct suite *suite, const char *slug, unsigned limit,
                   const char *cursor, size_t *len, time_t *mtime, uint64_t *digest);

#endif /* DV_HISTORY_H */
