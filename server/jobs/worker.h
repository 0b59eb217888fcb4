/* worker.h -- the supervisor of the GPU worker process.
 *
 * The server never initialises CUDA: a CUDA fault (illegal address, a hung
 * kernel) cannot be recovered inside the process that hit it, so the GPU is
 * owned by a child process (`divergence worker`, workerproc.h) started by
 * fork + exec and talked to over two pipes (wire.h). One supervisor thread:
 *
 *   start the child, wait for its hello (the device, or why there is none;
 *   the run its warm-up measured of the widget's kind of job, which seeds
 *   the queue's estimate of that kind before the worker is ready,
 *   jobq_seed());
 *   loop: pop a job, or a batch of jobs for one session (jobq.h,
 *   jobq_pop_batch(): a class's requests for one kernel and grid), send it,
 *   wait for the replies (one per job) until the jobs' deadlines together;
 *     reply ok / failed          -> finish the job;
 *     deadline passed            -> SIGKILL the child, fail the job
 *                                   ("deadline exceeded ..."), restart;
 *     EOF, bad frame             -> reap the child, fail the job with its exit
 *                                   status or signal, restart;
 *     sticky CUDA error (DV_ESTICKY) -> fail the job, the child exits, restart;
 *     reply ok, "exiting"        -> finish the job, the child exits (a sticky
 *                                   error in its counter pass), restart.
 *
 * Restarts back off (0, 100 ms, 200 ms ... 5 s) while they keep failing and
 * are counted for /metrics. With no GPU the child stays up and jobs fail at
 * once with CUDA's reason; the HTTP layer answers /measure with 503 before
 * queueing anything. The child gets PR_SET_PDEATHSIG so it never outlives
 * the server.
 */
#ifndef DV_WORKER_H
#define DV_WORKER_H

#include <sys/types.h>
#include "kernels/base/status.h"
#include "server/jobs/jobq.h"

enum worker_state { WORKER_STARTING = 0, WORKER_READY, WORKER_DOWN, WORKER_STOPPED };

struct worker_config {
    char *const *argv;        /* command and arguments; argv[0] a path (copied) */
    unsigned hello_timeout_ms; /* 0: 30000                                   */
    unsigned backoff_max_ms;   /* 0: 5000                                    */
    unsigned batch_jobs;       /* the most jobs one batch measures in one
                                  session (jobq_pop_batch()); 0:
                                  JOBQ_BATCH_MAX_JOBS, 1: every job alone */
};

/* What GET /device, /readyz and /metrics read. */
struct worker_snapshot {
    enum worker_state state;
    int gpu_present;              /* ready, and its hello reported a device  */
    int gpu_seen;                 /* the last hello reported a device: jobs
                                     may queue while a crashed worker restarts */
    pid_t pid;                    /* 0 when no child                          */
    unsigned long long restarts;  /* workers replaced after a failure         */
    unsigned long long jobs;      /* jobs sent to a worker                    */
    double busy_s;                /* wall time spent running jobs             */
    double gpu_time_s;            /* GPU time the worker reported             */
    char *device_json;            /* the hello's device object; free(), may be NULL */
    char reason[ERR_LEN];         /* why not ready (no GPU, start failure)    */
};

/* Observes the host time the worker's testimony passes took for each job
 * whose reply reports it ("testimony_ms", wire.h), in seconds; called on
 * the supervisor thread: it must be quick and must not call into the
 * worker. */
typedef void (*worker_testimony_fn)(void *ctx, double seconds);

/* A supervisor for `q` (not started). NULL with `err` on OOM / bad config. */
struct worker *worker_create(const struct worker_config *cfg, struct jobq *q, char *err);

/* Starts the supervisor thread (which starts the child). Returns 0 or -1. */
int worker_start(struct worker *w, char *err);

/* Waits until the first hello has arrived or start-up failed, at most
 * `timeout_ms`. Returns 0 when the worker is ready, -1 otherwise. */
int worker_wait_ready(struct worker *w, int timeout_ms);

/* Stops the supervisor: call jobq_close() first so the running job finishes
 * (bounded by its deadline) and no other starts; then the child is told to
 * exit (EOF on its input), killed if it does not within 2 s, and reaped. */
void worker_stop(struct worker *w);

void worker_free(struct worker *w); /* stops first if needed; NULL ok */

/* Copies the supervisor's state; free(s->device_json) after. */
void worker_get_snapshot(struct worker *w, struct worker_snapshot *s);

/* Sets (or with NULL clears) the testimony observer (metrics). */
void worker_set_testimony_observer(struct worker *w, worker_testimony_fn fn, void *ctx);

const char *worker_state_name(enum worker_state s);

#endif /* DV_WORKER_H */
