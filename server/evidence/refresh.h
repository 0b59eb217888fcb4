/* refresh.h -- the nightly evidence refresh: the server's bookkeeping (the
 * `divergence refresh` client that drives it is cmd/refresh_cmd.h).
 *
 * Server side: POST /evidence/refresh calls refresh_start(), which puts every
 * suite on the job queue through a callback the server supplies (the same
 * queue as /measure, so the GPU is never shared) and returns the refresh id.
 * The server tells the registry when each of those jobs starts and ends
 * (refresh_job_started / refresh_job_done); on the end the registry applies
 * the publication gates (correctness check, noise limit) and files the result
 * in the evidence store, good or failed. GET /evidence/refresh/{id} is
 * refresh_status_json(). A refresh is filed under the UTC date it was started.
 */
#ifndef DV_REFRESH_H
#define DV_REFRESH_H

#include <stddef.h>
#include "evidence/evidence.h"
#include "model/experiment.h"

#define REFRESH_ID_LEN 24  /* "r" + 16 hex + NUL, with room */
#define REFRESH_JOB_ID_LEN 64
#define REFRESH_KEEP 16    /* finished refreshes remembered for GET */

struct refresh;

/* How the registry reaches the server's job queue. `enqueue` queues `o`
 * (whose JSON body is `request_json`) as an ordinary measurement job for
 * suite `suite_index` of refresh `refresh_id`, copies the job's id into
 * `job_id` (REFRESH_JOB_ID_LEN) and returns 0, or returns -1 with `err`
 * (queue full, shutting down...). It is called without any registry lock
 * held, so it may call refresh_job_started/done itself (a result answered
 * at once). The server must later report the job's start and end with the
 * same refresh id and suite index. */
struct refresh_queue {
    int (*enqueue)(void *ctx, const char *refresh_id, size_t suite_index,
                   const struct dv_options *o, const char *request_json,
                   char *job_id, char *err);
    void *ctx;
};

/* A registry that files results into `ev` (borrowed) and queues jobs through
 * `q` (copied). Returns NULL with `err`. */
struct refresh *refresh_create(struct evidence *ev, const struct refresh_queue *q, char *err);
void refresh_free(struct refresh *r);

/* Starts a refresh of every suite, or joins the one still in progress (then
 * `*joined` is 1). Fills `id` (REFRESH_ID_LEN). A suite that cannot be queued
 * is recorded as failed at once with the reason. Returns 0, or -1 with `err`
 * (out of memory, or no suite could be queued at all: `*all_busy` 1 then, so
 * the caller can answer 503/429). */
int refresh_start(struct refresh *r, char *id, int *joined, int *all_busy, char *err);

/* The job of suite `suite_index` of refresh `id` has started on the GPU. */
void refresh_job_started(struct refresh *r, const char *id, size_t suite_index);

/* The job has ended: `ok` 1 with the worker's divergence.v1 `document_json`,
 * or 0 with `reason`. A good document still fails the suite when a row's
 * correctness check failed or its noise is over the suite's limit. The
 * result (good or failed) is written to the evidence store before this
 * returns. Unknown ids are ignored (the refresh was forgotten). */
void refresh_job_done(struct refresh *r, const char *id, size_t suite_index, int ok,
                      const char *document_json, const char *reason);

/* Checks a measured document against the publication gates of suite
 * `suite_index`. Returns 0, or -1 with `reason` (ERR_LEN) saying which row
 * failed which gate. */
int refresh_gate(size_t suite_index, const char *document_json, char *reason);

/* GET /evidence/refresh/{id}: {"id", "state": "running"|"done", "date",
 * "created_utc", "finished_utc", "ok", "failed", "suites": [{"suite",
 * "version", "state": queued|running|done|failed, "job", "reason",
 * "evidence"}]} as a malloc()ed string, or NULL when `id` is unknown. */
char *refresh_status_json(struct refresh *r, const char *id);

#endif /* DV_REFRESH_H */
