/* jobq.h -- the bounded FIFO of GPU jobs, the finished-job table and the
 * result cache.
 *
 * One mutex and one condition variable guard everything: what a holder does
 * is a walk of short lists (the queue, the finished jobs, the cache, all
 * bounded), so no one waits long, and with a single lock there is no order
 * between locks to get wrong. HTTP threads push and look up, the worker
 * supervisor (worker.h) pops one job at a time and finishes it. A job is one allocation owned by the queue
 * from jobq_submit() until it is evicted from the finished table; the
 * supervisor may read the immutable fields of the job it popped (id, request,
 * deadline_ms) without the lock, and reports the outcome with jobq_finish().
 *
 * Ids are 128 random bits in hex (getrandom). Identical requests (same cache
 * key) are answered from the cache within its TTL, and a request identical to
 * one still queued or running joins it instead of queueing a second run.
 */
#ifndef DV_JOBQ_H
#define DV_JOBQ_H

#include <stddef.h>
#include "kernels/base/status.h"

#define JOBQ_ID_LEN 33 /* 32 hex digits + NUL */

enum job_state { JOB_QUEUED = 0, JOB_RUNNING, JOB_DONE, JOB_FAILED };

/* Submission results beyond 0 / -1: DV_EFULL (429) and DV_ECLOSED (503),
 * from base/status.h. */

struct job;
struct jobq;

/* A snapshot of a job for readers (jobq_status); `document` is a copy. */
struct job_view {
    char id[JOBQ_ID_LEN];
    enum job_state state;
    unsigned position;      /* 1-based place in the queue when queued     */
    char *document;         /* divergence.v1 text when done (or failed with one); free() */
    double gpu_time_ms;
    int code;               /* DV_* when failed                           */
    char kind[16];          /* failure kind: deadline, crash, sticky, ... */
    char error[ERR_LEN];    /* failure reason                             */
    double created, started, finished; /* Unix seconds, 0 when not yet */
    char tag[64];           /* the submitter's label (e.g. a suite name)  */
};

/* Called (without the lock held, on the thread that finished the job) once a
 * job reaches done or failed. The view is only valid during the call. */
typedef void (*jobq_done_fn)(const struct job_view *v, void *ctx);

struct jobq_submit {
    const char *request;    /* request_dump() JSON the worker gets (copied)  */
    const char *key;        /* cache key (options_canonical) or NULL: never cached */
    unsigned deadline_ms;   /* GPU deadline once running                     */
    const char *tag;        /* optional label kept with the job              */
    jobq_done_fn on_done;   /* optional                                      */
    void *on_done_ctx;
    jobq_done_fn on_start;  /* optional: called when the job starts running
                               (on the supervisor thread, without the lock;
                               shares on_done_ctx)                          */
    int no_coalesce;        /* 1: always run, even if an identical job waits */
};

struct jobq_stats {
    unsigned depth, running, capacity;
    unsigned long long submitted, done, failed, rejected, cache_hits, coalesced;
};

/* A queue of at most `capacity` waiting jobs keeping `keep_finished`
 * finished jobs and cache entries, cache entries living `ttl_s` seconds.
 * NULL with `err` on bad arguments or OOM. */
struct jobq *jobq_create(unsigned capacity, unsigned keep_finished, double ttl_s, char *err);
/* Frees the queue and every job; the supervisor must be stopped. NULL ok. */
void jobq_free(struct jobq *q);

/* Queues a job described by `s`. On 0, `id` (JOBQ_ID_LEN) gets the job id and
 * `*position` its 1-based queue position (0 when it joined a running job);
 * `*joined` (may be NULL) is 1 when it joined an identical queued/running
 * job. Returns 0, DV_EFULL, DV_ECLOSED or -1 (OOM) with `err`. */
int jobq_submit(struct jobq *q, const struct jobq_submit *s, char *id, unsigned *position,
                int *joined, char *err);

/* Looks `key` up in the result cache. On a hit within the TTL returns 1 with
 * `*document` (malloc()ed copy), `*age_s` and the id of the job that made it;
 * returns 0 on a miss. Counts hits. */
int jobq_cache_lookup(struct jobq *q, const char *key, char **document, double *age_s, char *id);

/* Copies the state of job `id` into `v`. A job evicted from the finished
 * table whose result the cache still holds (the id a cached answer names)
 * is found there, done, with its document and times. Returns 0, or -1 when
 * unknown (or evicted with no cache entry), with `*v` zeroed (v->document
 * NULL). The caller frees v->document either way (free(NULL) is a no-op). */
int jobq_status(struct jobq *q, const char *id, struct job_view *v);

/* Supervisor side. Waits up to `timeout_ms` (-1 forever) for a job, marks it
 * running and stores it in `*job`. Returns 1 with a job, 0 on timeout, -1
 * once the queue is closed (no job is handed out after jobq_close). */
int jobq_pop(struct jobq *q, int timeout_ms, struct job **job);
/* The popped job's request JSON, id and deadline (immutable while running). */
const char *jobq_job_request(const struct job *j);
const char *jobq_job_id(const struct job *j);
unsigned jobq_job_deadline_ms(const struct job *j);

/* Finishes a running job: ok with `document` (copied; the cache keeps a copy
 * under the job's key), or failed with `code`, `kind` and `error` (`document`
 * may still be given, e.g. a measurement whose correctness gate failed). */
void jobq_finish(struct jobq *q, struct job *j, int ok, const char *document, double gpu_time_ms,
                 int code, const char *kind, const char *error);

/* Stops taking jobs and fails every queued job with `reason` (kind
 * "shutdown"). The running job, if any, may still finish. */
void jobq_close(struct jobq *q, const char *reason);

void jobq_get_stats(struct jobq *q, struct jobq_stats *st);

/* Called for every job that ends, done or failed, with how long it waited
 * in the queue and how long it ran (seconds; -1 for a job that never ran).
 * It runs with the queue's lock held: it must be quick and must not call
 * into the queue. */
typedef void (*jobq_timing_fn)(void *ctx, int ok, double wait_s, double run_s);
/* Sets (or with NULL clears) the queue-wide observer (metrics). */
void jobq_set_observer(struct jobq *q, jobq_timing_fn fn, void *ctx);

/* Job ids of this queue start with `hex` (at most JOBQ_ID_PREFIX_MAX
 * lowercase hex digits; the rest stays random), so a front serving several
 * servers can send GET /jobs/{id} to the one that owns the job. The id keeps
 * its 32 hex digits. Returns 0, or -1 with `err` for anything but hex. */
#define JOBQ_ID_PREFIX_MAX 8
int jobq_set_id_prefix(struct jobq *q, const char *hex, char *err);

/* Waiting without polling on job `id`. `fn(ctx)` is called when the job
 * starts running and when it finishes (done or failed), and, with
 * JOBQ_WATCH_POSITION in `flags`, whenever it moves up the queue; never for
 * other jobs' events. When the job has already finished or is unknown, `fn`
 * is called once before this returns (the caller then reads the state it
 * missed). `fn` runs with the queue's lock held, so it must only signal (a
 * long-poll wakes its suspended request and reads the state afresh with
 * jobq_status). The watch is the caller's until jobq_unwatch(), whatever
 * becomes of the job. Returns NULL on OOM. */
#define JOBQ_WATCH_POSITION 1u
struct jobq_watch;
struct jobq_watch *jobq_watch(struct jobq *q, const char *id, unsigned flags, void (*fn)(void *ctx), void *ctx);
/* Removes and frees `w` (NULL ok); once it returns, its fn is never called
 * again. Every watch must be removed before jobq_free(). */
void jobq_unwatch(struct jobq *q, struct jobq_watch *w);

/* Seconds until a place in a full queue is likely to open, for a 429's
 * Retry-After: a place opens when the running job ends. On schedule (it has
 * run less than the mean of the runs so far) that is the mean's remainder;
 * past the mean, or with no run to go by, only its deadline bounds it, and
 * the time left to that is the answer. With nothing running (the worker
 * restarting), the mean run (5 s with none). At least 1, at most the
 * running job's deadline left (and 3600). */
unsigned jobq_retry_after_s(struct jobq *q);

/* Fills `id` (JOBQ_ID_LEN) with 32 random hex digits. Returns 0 or -1. */
int jobq_new_id(char *id);

const char *jobq_state_name(enum job_state s);

#endif /* DV_JOBQ_H */
