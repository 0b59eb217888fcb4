/* pool.c -- see pool.h.
 *
 * The FIFO is a singly linked list with a tail pointer. A worker sleeps on
 * the condition while the list is empty and the pool runs; it takes the
 * head, lets go of the lock, runs the job and frees its node. Once `stop`
 * is set the workers keep taking nodes until the list is empty, running each
 * cancelled, and then return: no job is dropped without its function being
 * told.
 */
#include "server/core/pool.h"

#include <pthread.h>
#include <stdlib.h>

#include "kernels/base/status.h"

struct job {
    pool_fn fn;
    void *arg;
    struct job *next;
};

struct pool {
    pthread_mutex_t lock;
    pthread_cond_t cond; /* a job was pushed, or the pool stops */
    struct job *head, *tail;
    unsigned depth; /* jobs in the list */
    unsigned max_queued;
    int stop;
    pthread_t *threads;
    unsigned nthreads; /* started */
};

static void *pool_main(void *arg) {
    struct pool *p = arg;
    for (;;) {
        pthread_mutex_lock(&p->lock);
        while (!p->stop && !p->head) pthread_cond_wait(&p->cond, &p->lock);
        struct job *j = p->head;
        if (!j) { /* stopping, and nothing left */
            pthread_mutex_unlock(&p->lock);
            return NULL;
        }
        p->head = j->next;
        if (!p->head) p->tail = NULL;
        p->depth--;
        int cancelled = p->stop;
        pthread_mutex_unlock(&p->lock);
        j->fn(j->arg, cancelled);
        free(j); /* allocated by pool_push() */
    }
}

/* Stops the threads started so far and waits for them. */
static void pool_stop(struct pool *p) {
    pthread_mutex_lock(&p->lock);
    p->stop = 1;
    pthread_cond_broadcast(&p->cond);
    pthread_mutex_unlock(&p->lock);
    for (unsigned i = 0; i < p->nthreads; i++) pthread_join(p->threads[i], NULL);
    p->nthreads = 0;
}

struct pool *pool_create(unsigned nthreads, unsigned max_queued, char *err) {
    struct pool *p = calloc(1, sizeof *p);
    if (!p || !(p->threads = calloc(nthreads ? nthreads : 1, sizeof *p->threads))) {
        free(p);
        dv_seterr(err, "pool: out of memory");
        return NULL;
    }
    p->max_queued = max_queued;
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->cond, NULL);
    for (; p->nthreads < (nthreads ? nthreads : 1); p->nthreads++) {
        if (pthread_create(&p->threads[p->nthreads], NULL, pool_main, p) != 0) {
            dv_seterr(err, "pool: cannot start thread %u of %u", p->nthreads + 1, nthreads);
            pool_free(p);
            return NULL;
        }
    }
    return p;
}

int pool_push(struct pool *p, pool_fn fn, void *arg) {
    struct job *j = p ? malloc(sizeof *j) : NULL; /* freed by the worker that runs it */
    if (!j) return -1;
    j->fn = fn;
    j->arg = arg;
    j->next = NULL;
    pthread_mutex_lock(&p->lock);
    if (p->stop || p->depth >= p->max_queued) {
        pthread_mutex_unlock(&p->lock);
        free(j);
        return -1;
    }
    if (p->tail) p->tail->next = j;
    else p->head = j;
    p->tail = j;
    p->depth++;
    pthread_cond_signal(&p->cond);
    pthread_mutex_unlock(&p->lock);
    return 0;
}

unsigned pool_queued(struct pool *p) {
    if (!p) return 0;
    pthread_mutex_lock(&p->lock);
    unsigned n = p->depth;
    pthread_mutex_unlock(&p->lock);
    return n;
}

void pool_free(struct pool *p) {
    if (!p) return;
    pool_stop(p);
    /* Every worker drained the list before it returned; a pool none of
     * whose threads started has nothing queued either (pool_create failed). */
    pthread_mutex_destroy(&p->lock);
    pthread_cond_destroy(&p->cond);
    free(p->threads);
    free(p);
}
