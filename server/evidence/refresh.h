/* refresh.h -- the nightly evidence refresh: the server's bookkeeping (the
 * `divergence refresh` client that drives it is cmd/refresh_cmd.h).
 *
 * Server side: POST /evidence/refresh calls refresh_start(), which puts every
 * suite on the job queue through a callback the server supplies (the same
 * queue as /measure, so the GPU is never shared) and returns the refresh id.
 * The server tells the registry when each of those jobs starts and ends
 * (refresh_job_started / refresh_job_done); on the end the registry applies
 * the publication gates (correctness check, each ratio's interval within
 * the suite's limit) and files the result in the evidence store, good or
 * failed, on a thread of its own. GET /evidence/refresh/{id} is
 * refresh_status_json(). A refresh is filed under the server's GPU and the UTC
 * date it was started; one that cannot be queued whole files nothing.
 */
#ifndef DV_REFRESH_H
#define DV_REFRESH_H

#include <stddef.h>
#include "server/evidence/evidence.h"
#include "kernels/model/model/experiment.h"

#define REFRESH_ID_LEN 24  /* "r" + 16 hex + NUL, with room */
#define REFRESH_JOB_ID_LEN 64
#define REFRESH_KEEP 16    /* finished refreshes remembered for GET */

struct refresh;

/* How the registry reaches the server's job queue. `enqueue` queues `o`
 * (whose JSON body is `request_json`) as an ordinary measurement job for
 * suite `suite_index` of refresh `refresh_id`, copies the job's id into
 * `job_id` (REFRESH_JOB_ID_LEN) and returns 0, or returns DV_EFULL (the
 * queue is full), DV_ECLOSED (shutting down) or -1, with `err`. It is called without any registry lock
 * held, so it may call refresh_job_started/done itself (a result answered
 * at once). The server must later report the job's start and end with the
 * same refresh id and suite index. */
struct refresh_queue {
    int (*enqueue)(void *ctx, const char *refresh_id, size_t suite_index,
                   const struct dv_options *o, const char *request_json,
                   char *job_id, char *err);
    void *ctx;
    /* Optional: 0 when `need` more jobs fit in the queue now, else DV_EFULL
     * or DV_ECLOSED with `err`. Asked before a new refresh (not a joined
     * one) takes anything, so a refresh that cannot fit is refused whole. */
    int (*room)(void *ctx, size_t need, char *err);
};

/* A registry that files results into `ev` (borrowed) and queues jobs through
 * `q` (copied). Returns NULL with `err`. */
struct refresh *refresh_create(struct evidence *ev, const struct refresh_queue *q, char *err);
void refresh_free(struct refresh *r);

/* Starts a refresh of every suite whose evidence is filed under GPU `gpu`
 * (a slug, names_slug) named `gpu_name` (may be NULL), or joins the one
 * still in progress (then `*joined` is 1). Fills `id` (REFRESH_ID_LEN).
 * Returns 0; or, when not one suite could be queued, DV_EFULL (the queue is
 * full: answer 429) or DV_ECLOSED (shutting down: 503) or -1 (a bad slug,
 * out of memory), with `err`, and then nothing is kept or filed. Once a
 * suite is queued, a later suite that cannot be is filed as failed with the
 * reason. */
int refresh_start(struct refresh *r, const char *gpu, const char *gpu_name, char *id, int *joined, char *err);

/* The job of suite `suite_index` of refresh `id` has started on the GPU. */
void refresh_job_started(struct refresh *r, const char *id, size_t suite_index);

/* The job has ended: `ok` 1 with the worker's divergence.v1 `document_json`,
 * or 0 with `reason`. A good document still fails the suite when a row's
 * correctness check failed or its ratio's 95% interval is wider than the
 * suite's limit on either side (a document without intervals: its per-sample
 * noise over the limit). The result (good or failed) is filed in the
 * evidence store by the registry's own thread, in the order the jobs ended
 * (`document_json` is copied), so the caller, the thread that runs the GPU's
 * jobs, goes on at once; the suite reads "running" until its record is on
 * disk. Where no copy can be made it is filed before this returns. Unknown
 * ids, and a second report of the same job, are ignored. */
void refresh_job_done(struct refresh *r, const char *id, size_t suite_index, int ok,
                      const char *document_json, const char *reason);

/* Waits until every result reported so far is filed (the server's drain on
 * shutdown, after the last job has ended). refresh_free() drains too. */
void refresh_drain(struct refresh *r);

/* Checks a measured document against the publication gates of suite
 * `suite_index`. Returns 0, or -1 with `reason` (ERR_LEN) saying which row
 * failed which gate. */
int refresh_gate(size_t suite_index, const char *document_json, char *reason);

/* Files a measurement made without a server (`divergence-gpu measure
 * --suite NAME --evidence-dir DIR`) in the store at `dir` as a refresh files
 * its jobs: the request the suite sends (`o`), the document `doc` (of report
 * `r`, whose device names the GPU), the gates above deciding ok or failed,
 * dated by `started_utc`. `*ok` (may be NULL) receives whether it passed the
 * gates, `why` (ERR_LEN) why not. It is filed under `date` (YYYY-MM-DD; NULL:
 * the day of `started_utc`), so the suites of one run share a night as a
 * refresh's do. `filed_as` 1: `date` is the capture's --file-as, a date
 * given rather than the night measured (evidence_record.filed_as: the
 * record says so, and it replaces no night and goes before none unless
 * `replace_night`). Returns 0 when it was filed, or -1 with `err`. Not a
 * route: only the command line files under a given date. */
int refresh_file_measurement(const char *dir, const char *suite, const struct dv_options *o, const struct dv_report *r,
                             const char *doc, const char *started_utc, const char *date, int filed_as,
                             int replace_night, int *ok, char *why, char *err);

/* GET /evidence/refresh/{id}: {"id", "state": "running"|"done", "gpu", "date",
 * "created_utc", "finished_utc", "ok", "failed", "suites": [{"suite",
 * "version", "state": queued|running|done|failed, "job", "reason",
 * "warning", "evidence"}]} as a malloc()ed string ("warning": the suite's
 * night is filed, but what failed after its record was in place, such as
 * the stamp; a suite whose record is in place is done or failed as its
 * gates said, never failed for that); NULL when `id` is unknown or when
 * the document could not be built whole (out of memory). `*found` (may be
 * NULL) tells the two apart: 1 when `id` is known. */
char *refresh_status_json(struct refresh *r, const char *id, int *found);

#endif /* DV_REFRESH_H */
