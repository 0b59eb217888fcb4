/* evidence.h -- the evidence store: each night's suite results as durable
 * files, per GPU model, and the reads the /evidence routes answer from.
 *
 * Layout under the root directory (default var/evidence):
 *   <gpu>/<YYYY-MM-DD>/<suite>.json         the night's record (schema
 *                                           divergence.evidence.v1): status ok
 *                                           or failed, the GPU, provenance,
 *                                           the divergence.v1 document, a
 *                                           summary of the ratios and the
 *                                           transcript
 *   <gpu>/<YYYY-MM-DD>/<suite>.txt          the lesson-layout transcript
 *   <gpu>/<YYYY-MM-DD>/<suite>.failed.json  a failure on a date that already
 *                                           has a good record (a failure never
 *                                           replaces good evidence)
 *   <gpu>/.lock                             the advisory lock (flock) every
 *                                           writer of that GPU's files holds
 *   <gpu>/.stamp                            rewritten after every record, so
 *                                           other servers on the directory see
 *                                           the change (the folder's mtime)
 * <gpu> is the GPU model's slug (names_slug: "NVIDIA H200" ->
 * "nvidia-h200"). Dates are UTC. The files are the only state on disk;
 * "latest" is the newest date whose record says ok. A store made by an
 * earlier version (<YYYY-MM-DD>/ at the root) is moved under the GPU its
 * records name when opened.
 *
 * Several servers may share one root: each writes only its own GPU's files,
 * under that GPU's lock, so two replicas of one model serialise their writes
 * and servers of other models never touch them.
 *
 * In memory: the latest record and transcript of each suite of each GPU,
 * and the index, as immutable refcounted blobs, replaced when this process
 * writes a record and reloaded when another process's write shows (checked at
 * most once a second); and each suite's history, one entry per night
 * (history.h). Older dates are read from disk.
 *
 * Reads return bytes with their validator inputs (the measurement's time,
 * content digest) as blobs (blob.h); failures return a code and a reason.
 * HTTP (ETag text, 304, Cache-Control, the error shape) is the routes'
 * business. Thread-safe.
 *
 * The store is made of parts, each a file: the record's types (types.h),
 * names (names.h), reading one (record.h), building one (record_build.h),
 * drawing one (draw.h), the blobs (blob.h), one GPU folder's view
 * (gpuview.h), the views and the reads they answer under their own lock
 * (views.h), the older nights a write compares with, cached under their own
 * lock (older.h), each suite's history (history.h), the layout before GPU
 * folders (legacy.h). evidence.c holds the store together: the root, the
 * locks on disk, the filing, and when to look at the disk again.
 */
#ifndef DV_EVIDENCE_H
#define DV_EVIDENCE_H

#include "server/evidence/blob.h"
#include "server/evidence/types.h"

#define EVIDENCE_DEFAULT_DIR "var/evidence"

struct evidence;

/* Opens (creating it and its parents when missing) the store at `root`:
 * moves an earlier version's layout under its GPUs, removes temp files a
 * crash left behind (each GPU's under its lock) and loads every GPU's latest
 * evidence. Returns NULL with `err`. */
struct evidence *evidence_open(const char *root, char *err);
void evidence_close(struct evidence *ev);

/* The store's root directory. */
const char *evidence_root(const struct evidence *ev);

/* Files `rec` durably under rec->gpu, holding that GPU's lock. A good record
 * replaces that date's record; a failure replaces that date's record only
 * when it is not a good one, and is otherwise written as
 * <suite>.failed.json. The night is published exactly when its record is
 * renamed into place: returns 0 from then on, -1 with `err` when it was not
 * (then nothing of it was written). What failed after the record was in
 * place (the transcript file beside it, the stamp other servers watch, a
 * directory's fsync) is said in `warn` (ERR_LEN, may be NULL; "" when
 * nothing did) and logged: the night is filed all the same. The in-memory
 * views of the GPU are replaced before this returns. On any failure, crash
 * included, every file is either its old or its new content, never a part. */
int evidence_write(struct evidence *ev, const struct evidence_record *rec, char *warn, char *err);

/* Removes temp files left in the root, in every GPU folder and in every date
 * directory (each GPU's under its lock, so a live writer's temp file is never
 * removed). Returns how many were removed, or -1 with `err`. */
int evidence_sweep(struct evidence *ev, char *err);

/* The GPU that the single-GPU views (no slug given) answer for, into `out`
 * (EVIDENCE_SLUG_LEN): `own` (the server's GPU, may be NULL or "") when it
 * has evidence here or no GPU has; else the store's only GPU; else `own`
 * ("" when unknown). Returns 1 when several GPUs have evidence and `own` is
 * none of them (the caller may list them), 0 otherwise. */
int evidence_default_gpu(struct evidence *ev, const char *own, char *out);

/* The reads. Each returns 0 with `*out` (blob_release() it), or -1 with
 * `e`. `gpu` is a slug; NULL means evidence_default_gpu(ev, own). `suite`
 * is a suite name.
 *
 * evidence_get_index: every GPU's latest (schema divergence.evidence.index.v1):
 *   {"schema", "gpu": default slug or null, "suites": [the default GPU's
 *   entries, hrefs under /evidence/], "gpus": [{"gpu", "name", "latest",
 *   "suites": [entries, hrefs under /evidence/{gpu}/]}]}. From memory.
 * evidence_get_gpu_index: one GPU's {"schema", "gpu", "name", "suites"}. From
 *   memory; ENOENT when the GPU has no evidence here.
 * evidence_get_latest: the newest good record (`kind` EVIDENCE_JSON: its
 *   bytes), its transcript (EVIDENCE_TEXT) or a form drawn from its document
 *   (EVIDENCE_SVG, _MD, _CSV). From memory.
 * evidence_get_night: one date's record, transcript or drawn form, from disk.
 * evidence_get_history: up to `limit` (1..EVIDENCE_HISTORY_MAX) nights
 *   before `cursor` (a date, NULL: from the newest), oldest first, and
 *   "next_cursor" (the page's oldest date when older nights exist, else
 *   null). From memory: each night's entry is made when its record is
 *   filed or the store is opened (history.h), and a page reads no record. */
int evidence_get_index(struct evidence *ev, const char *own, struct blob **out, struct evidence_error *e);
int evidence_get_gpu_index(struct evidence *ev, const char *gpu, struct blob **out, struct evidence_error *e);
int evidence_get_latest(struct evidence *ev, const char *gpu, const char *own, const char *suite,
                        enum evidence_kind kind, struct blob **out, struct evidence_error *e);
int evidence_get_night(struct evidence *ev, const char *gpu, const char *own, const char *date, const char *suite,
                       enum evidence_kind kind, struct blob **out, struct evidence_error *e);
/* evidence_get_listing: row `row` ("T.R": row R of table T) of the record
 *   of `suite` filed on `date` under `gpu`: the row's instruction listing
 *   (slim.h), the part of the record its slim form leaves out. From memory
 *   for the latest good record, else from disk. ENOENT when the night, the
 *   row or its listing is not there; EINVAL for a malformed date or row. */
int evidence_get_listing(struct evidence *ev, const char *gpu, const char *own, const char *date, const char *suite,
                         const char *row, struct blob **out, struct evidence_error *e);
int evidence_get_history(struct evidence *ev, const char *gpu, const char *own, const char *suite, unsigned limit,
                         const char *cursor, struct blob **out, struct evidence_error *e);

/* Makes the next read look for other processes' writes now instead of
 * within a second (tests, and a server told that a peer wrote). */
void evidence_recheck(struct evidence *ev);

#endif /* DV_EVIDENCE_H */
