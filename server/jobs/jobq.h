/* jobq.h -- the queue of GPU jobs (fair across client addresses, bounded
 * in jobs, per address and in bytes), the finished-job table, the result
 * cache and the queue's drain estimate.
 *
 * One mutex and one condition variable guard everything: what a holder does
 * is a walk of short lists (the queue, the finished jobs, the cache, all
 * bounded), so no one waits long, and with a single lock there is no order
 * between locks to get wrong. HTTP threads push and look up, the worker
 * supervisor (worker.h) pops one job, or a batch of jobs that share a
 * session on the GPU (jobq_pop_batch()), and finishes each. A job is one allocation owned by the queue
 * from jobq_submit() until it is evicted from the finished table; the
 * supervisor may read the immutable fields of the job it popped (id, request,
 * deadline_ms) without the lock, and reports the outcome with jobq_finish().
 *
 * Ids are 128 random bits in hex (getrandom). Identical requests (same cache
 * key) are answered from the cache within its TTL, and a request identical to
 * one still queued or running joins it instead of queueing a second run.
 *
 * The queue's rules (server/README.md, "The job queue"):
 *  - Fair across addresses. Each submitting address (jobq_submit.client; the
 *    server's own jobs, with none, count as one address) has its own FIFO,
 *    and the addresses with jobs waiting take turns: a pop takes the oldest
 *    job of the address whose turn it is, and the turn passes on. An address
 *    that had nothing waiting joins at the end of the round, so a newcomer
 *    waits for at most one job of each address already waiting, however many
 *    each has queued.
 *  - Bounded three ways: `capacity` jobs in all, `per_client` jobs of one
 *    address, and `max_bytes` of memory held by the queued jobs (jobq_limits;
 *    jobq_submit_bytes() says what one holds). Past any, DV_EFULL with which
 *    bound and when a place is likely (struct jobq_wait).
 *  - An honest wait. A queued job is expected to start once the jobs ahead
 *    of it have run, each for the moving estimate of its kind's recent runs
 *    (runest.h; before a kind has finished any, the run the GPU worker's
 *    warm-up measured of it, jobq_seed(), else a configured default), after
 *    the running job's expected remainder (its kind's estimate less the time
 *    it has run, at least 0). Deadlines bound a run; they are never used as
 *    a guess of one. Retry-After is that estimate for the place asked for,
 *    rounded up, at least 1 s (jobq_retry_after_s()).
 */
#ifndef DV_JOBQ_H
#define DV_JOBQ_H

#include <stddef.h>
#include "kernels/base/status.h"
#include "server/jobs/runest.h"

#define JOBQ_ID_LEN 33     /* 32 hex digits + NUL */
#define JOBQ_CLIENT_LEN 64 /* a client address as text, NUL included */
#define JOBQ_KIND_LEN RUNEST_KIND_LEN

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
    double expected_start_s; /* queued: seconds until it is likely to start */
    double eta_s;            /* queued or running: seconds until it is likely
                               to end; 0 otherwise                        */
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
    const char *client;     /* the submitting address (copied, cut to
                               JOBQ_CLIENT_LEN - 1): its own FIFO and turn,
                               and the per-client bound; NULL: the server's
                               own jobs (one turn of their own, no bound but
                               the queue's)                                 */
    const char *kind;       /* what the worker's time depends on (copied;
                               options_job_kind()); NULL: ""                */
    const char *batch;      /* options_batch_key()'s text (copied): jobs
                               whose first lines are equal may run in one
                               batch (jobq_pop_batch()); NULL or "": alone  */
    struct jobq_wait *wait; /* optional, filled by jobq_submit (below)      */
};

/* Which bound refused a job (DV_EFULL). */
enum jobq_full {
    JOBQ_FULL_NONE = 0,
    JOBQ_FULL_JOBS,   /* `capacity` jobs wait                              */
    JOBQ_FULL_BYTES,  /* the queued jobs hold max_bytes                    */
    JOBQ_FULL_CLIENT, /* the client has per_client jobs waiting            */
};

/* What jobq_submit tells the submitter about waiting. On 0: when the job
 * (or the one it joined) is likely to start and to end. On DV_EFULL: which
 * bound refused it and when a place for this client is likely to open. */
struct jobq_wait {
    enum jobq_full full;
    unsigned retry_after_s;  /* DV_EFULL: seconds, rounded up, at least 1 */
    double expected_start_s; /* 0: seconds; 0 for a job already running  */
    double eta_s;            /* 0: seconds until it is likely to end      */
};

/* The bounds and the estimate's default (jobq_set_limits). */
struct jobq_limits {
    unsigned per_client;  /* jobs one client address may have waiting; 0: no bound */
    size_t max_bytes;     /* memory the waiting jobs may hold (jobq_submit_bytes()
                             each); 0: no bound                                  */
    double default_run_s; /* a kind's run before any has finished (> 0)          */
};

#define JOBQ_DEFAULT_RUN_S 2.0 /* jobq_create()'s default_run_s */

struct jobq_stats {
    unsigned depth, running, capacity;
    unsigned clients;        /* addresses with jobs waiting              */
    size_t bytes, max_bytes; /* held by the waiting jobs, and the bound  */
    unsigned long long submitted, done, failed, rejected, cache_hits, coalesced;
};

/* A queue of at most `capacity` waiting jobs keeping `keep_finished`
 * finished jobs and cache entries, cache entries living `ttl_s` seconds;
 * no per-client or byte bound and a default run of JOBQ_DEFAULT_RUN_S until
 * jobq_set_limits() says otherwise. NULL with `err` on bad arguments or OOM. */
struct jobq *jobq_create(unsigned capacity, unsigned keep_finished, double ttl_s, char *err);
/* Sets the per-client and byte bounds and the default run (`l`, copied);
 * jobs already waiting stay. Returns 0, or -1 with `err` for a default run
 * that is not a positive number of seconds. */
int jobq_set_limits(struct jobq *q, const struct jobq_limits *l, char *err);
/* Seeds the drain estimate of jobs of `kind` (NULL: "") with a run of
 * `run_s` seconds measured before any finished here: the worker
 * supervisor's, from its worker's hello (worker.h), each time a worker
 * starts. A kind that has a finished run keeps its estimate (runest_seed()).
 * Returns 1 when seeded, 0 when not (a finished run, or `run_s` not a
 * positive number). Any thread. */
int jobq_seed(struct jobq *q, const char *kind, double run_s);
/* Bytes a waiting job made from `s` holds in the queue: the job's own
 * record (with its error text and labels) and its copies of the request and
 * the cache key. What max_bytes counts. */
size_t jobq_submit_bytes(const struct jobq_submit *s);
/* Frees the queue and every job; the supervisor must be stopped. NULL ok. */
void jobq_free(struct jobq *q);

/* Queues a job described by `s`. On 0, `id` (JOBQ_ID_LEN) gets the job id and
 * `*position` its 1-based place in the order the jobs will start as things
 * stand (0 when it joined a running job; a newcomer address later in the
 * round may still come before a job of an address with several waiting);
 * `*joined` (may be NULL) is 1 when it joined an identical queued/running
 * job. Returns 0, DV_EFULL (with `err` naming the bound), DV_ECLOSED or -1
 * (OOM) with `err`; `s->wait`, when given, is filled on 0 and DV_EFULL. */
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
/* Batches: the jobs that start together, as one session of the GPU
 * worker (kernels/gpu/batch.h). Waits as jobq_pop() does for the next job
 * in the fair order, takes it and, when it carries a batch text, the jobs
 * with the same key line among the first `max_jobs` of the order (at most
 * JOBQ_BATCH_MAX_JOBS), in that order, while the distinct row lines of all
 * taken number at most `max_rows`; marks them running (jobs[0..*n)).
 * Only jobs that would have started within `max_jobs` starts anyway join,
 * so a job left waiting is passed by at most max_jobs - 1 jobs behind it
 * (and each address that had a job taken has had its turn). Returns 1 with
 * *n >= 1 jobs, 0 on timeout, -1 once closed. Each is finished on its own
 * (jobq_finish()); a member's run counts as its batch's time over *n for
 * its kind's estimate. */
#define JOBQ_BATCH_MAX_JOBS 16
#define JOBQ_BATCH_MAX_ROWS 16
int jobq_pop_batch(struct jobq *q, int timeout_ms, unsigned max_jobs, unsigned max_rows, struct job **jobs,
                   unsigned *n);

/* A further batch of the kind just popped, only if ready now: as
 * jobq_pop_batch() with no wait, when the next job in the fair order
 * carries the key line of running job `like` (its batch text); a job of
 * another key next, or none, gives 0 and takes nothing, so the fair order
 * is kept and nobody waits for more to come. The supervisor joins such
 * batches into one message of groups (jobs/wire.h). Returns 1 with *n >= 1
 * jobs, 0 when none, -1 once closed. */
int jobq_pop_batch_like(struct jobq *q, const struct job *like, unsigned max_jobs, unsigned max_rows,
                        struct job **jobs, unsigned *n);

/* The popped job's request JSON, id and deadline (immutable while running). */
const char *jobq_job_request(const struct job *j);
/* How many jobs the running job's batch started (1: alone). */
unsigned jobq_job_batch_n(const struct job *j);
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

/* Seconds until a place for `client` (NULL: the server's own) is likely to
 * open, for a 429's Retry-After, by the drain estimate: when the client has
 * per_client jobs waiting, when its oldest is expected to start; else when
 * the queue's next job is (a place opens as it leaves the queue): the
 * running job's expected remainder. Rounded up; at least 1, at most 3600. */
unsigned jobq_retry_after_s(struct jobq *q, const char *client);

/* Fills `id` (JOBQ_ID_LEN) with 32 random hex digits. Returns 0 or -1. */
int jobq_new_id(char *id);

const char *jobq_state_name(enum job_state s);

#endif /* DV_JOBQ_H */
