/* pool.h -- a few threads that run jobs in the order they were pushed, with
 * a bound on how many may wait: CPU work kept off the threads that must stay
 * free (the HTTP front's analyses, http_req_defer()).
 *
 * Like redis's bio.c: one mutex, one condition variable, a FIFO; the thread
 * that pushes allocates the job's node, the worker that takes it frees it.
 *
 * Owner: whoever pool_create()s it (the HTTP front), the only caller of
 * pool_free(). Lock: the pool's own mutex guards the FIFO, its depth and the
 * stop flag, and is never held while a job runs, so a job may take any lock
 * of its own. Threads: `nthreads` workers, started by pool_create() and
 * joined by pool_free(); pool_push() and pool_queued() from any thread.
 *
 * A job is fn(arg, cancelled). Each job pushed runs exactly once: with
 * cancelled 0 in its turn, or, when it was still waiting as the pool
 * stopped, with cancelled 1 (then it only lets go of what it holds and tells
 * whoever waits on it). Jobs already running when the pool stops finish.
 */
#ifndef DV_POOL_H
#define DV_POOL_H

struct pool;

typedef void (*pool_fn)(void *arg, int cancelled);

/* A pool of `nthreads` (at least 1) running threads of which at most
 * `max_queued` jobs may wait. NULL with `err` (no memory, or a thread could
 * not be started: then none is left running). */
struct pool *pool_create(unsigned nthreads, unsigned max_queued, char *err);

/* Queues fn(arg). Returns 0, or -1 when `max_queued` jobs wait already, the
 * pool is stopping, or there is no memory for the node: then nothing is
 * queued and fn never runs (the caller still owns `arg`). NULL `p`: -1. */
int pool_push(struct pool *p, pool_fn fn, void *arg);

/* Jobs waiting for a thread now (NULL: 0). */
unsigned pool_queued(struct pool *p);

/* Stops the pool: jobs still waiting run with cancelled 1, running ones
 * finish, every thread is joined; then frees it. A pool_push() while it
 * waits for a running job returns -1; none may come once it may have
 * returned. NULL ok. */
void pool_free(struct pool *p);

#endif /* DV_POOL_H */
