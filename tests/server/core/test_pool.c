/* test_pool.c -- the CPU pool: jobs in the order pushed, the bound on those
 * waiting, each job run exactly once (cancelled when the pool stopped
 * first), under producers on several threads. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>

#include "kernels/base/status.h"
#include "server/core/pool.h"

/* A gate a job waits at until the test opens it. */
struct gate {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int open, arrived;
};

static struct gate gate = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0};

static void gate_job(void *arg, int cancelled) {
    (void)arg;
    (void)cancelled;
    pthread_mutex_lock(&gate.lock);
    gate.arrived = 1;
    pthread_cond_broadcast(&gate.cond);
    while (!gate.open) pthread_cond_wait(&gate.cond, &gate.lock);
    pthread_mutex_unlock(&gate.lock);
}

/* Waits until gate_job() runs: the pool's one thread is then busy. */
static void gate_wait_arrived(void) {
    pthread_mutex_lock(&gate.lock);
    while (!gate.arrived) pthread_cond_wait(&gate.cond, &gate.lock);
    pthread_mutex_unlock(&gate.lock);
}

static void gate_open(void) {
    pthread_mutex_lock(&gate.lock);
    gate.open = 1;
    pthread_cond_broadcast(&gate.cond);
    pthread_mutex_unlock(&gate.lock);
}

/* Where each job writes its number, in the order they ran. */
static int ran[16], cancelled_flag[16];
static atomic_int nran;

static void record_job(void *arg, int cancelled) {
    int at = atomic_fetch_add(&nran, 1);
    ran[at] = (int)(long)arg;
    cancelled_flag[at] = cancelled;
}

/* Waits until `n` record_job()s have run (the pool is then idle again). */
static void wait_ran(int n) {
    while (atomic_load(&nran) < n) sched_yield();
}

Test(pool, runs_jobs_in_the_order_pushed, .timeout = 30) {
    char err[ERR_LEN];
    struct pool *p = pool_create(1, 16, err);
    cr_assert_not_null(p, "%s", err);
    cr_assert_eq(pool_push(p, gate_job, NULL), 0);
    gate_wait_arrived();
    for (long i = 0; i < 10; i++) cr_assert_eq(pool_push(p, record_job, (void *)i), 0);
    cr_expect_eq(pool_queued(p), 10);
    gate_open();
    wait_ran(10);
    pool_free(p);
    cr_assert_eq(atomic_load(&nran), 10);
    for (int i = 0; i < 10; i++) {
        cr_expect_eq(ran[i], i, "job %d ran in place %d", ran[i], i);
        cr_expect_eq(cancelled_flag[i], 0);
    }
}

Test(pool, refuses_a_job_past_the_bound_and_runs_none_of_it, .timeout = 30) {
    char err[ERR_LEN];
    struct pool *p = pool_create(1, 3, err);
    cr_assert_not_null(p, "%s", err);
    cr_assert_eq(pool_push(p, gate_job, NULL), 0);
    gate_wait_arrived(); /* running: no longer waiting */
    for (long i = 0; i < 3; i++) cr_assert_eq(pool_push(p, record_job, (void *)i), 0);
    cr_expect_eq(pool_push(p, record_job, (void *)99L), -1, "a fourth job waiting");
    cr_expect_eq(pool_queued(p), 3);
    gate_open();
    wait_ran(3);
    pool_free(p);
    cr_assert_eq(atomic_load(&nran), 3, "the refused job ran");
    for (int i = 0; i < 3; i++) cr_expect(ran[i] == i && !cancelled_flag[i]);
}

static void *free_pool(void *p) {
    pool_free(p);
    return NULL;
}

/* Counts the runs of a job by how they ran. */
static atomic_long runs_cancelled, runs_normal;
static void tally_job(void *arg, int cancelled) {
    (void)arg;
    atomic_fetch_add(cancelled ? &runs_cancelled : &runs_normal, 1);
}

Test(pool, jobs_waiting_when_it_stops_run_cancelled, .timeout = 30) {
    char err[ERR_LEN];
    struct pool *p = pool_create(1, 100000, err);
    cr_assert_not_null(p, "%s", err);
    cr_assert_eq(pool_push(p, gate_job, NULL), 0);
    gate_wait_arrived();
    long pushed = 0;
    for (; pushed < 5; pushed++) cr_assert_eq(pool_push(p, tally_job, NULL), 0);
    /* pool_free() from another thread: it cannot return while gate_job
     * runs, so pushing meanwhile is safe, and fails once it has begun. */
    pthread_t t;
    cr_assert_eq(pthread_create(&t, NULL, free_pool, p), 0);
    while (pool_push(p, tally_job, NULL) == 0) {
        pushed++;
        cr_assert_lt(pushed, 100000, "the pool never stopped");
    }
    gate_open();
    pthread_join(t, NULL);
    cr_expect_eq(atomic_load(&runs_normal), 0, "a job waiting ran as if the pool had not stopped");
    cr_expect_eq(atomic_load(&runs_cancelled), pushed, "%ld pushed, %ld ran cancelled", pushed,
                 atomic_load(&runs_cancelled));
}

/* Several producers, several workers: each accepted job runs once. */
static atomic_long runs;
static void count_job(void *arg, int cancelled) {
    (void)arg;
    (void)cancelled;
    atomic_fetch_add(&runs, 1);
}

struct producer {
    struct pool *p;
    long accepted;
};

static void *produce(void *arg) {
    struct producer *pr = arg;
    for (int i = 0; i < 20000; i++) pr->accepted += pool_push(pr->p, count_job, NULL) == 0;
    return NULL;
}

Test(pool, each_accepted_job_runs_exactly_once_under_concurrent_producers) {
    char err[ERR_LEN];
    struct pool *p = pool_create(3, 64, err);
    cr_assert_not_null(p, "%s", err);
    struct producer pr[4];
    pthread_t t[4];
    for (int i = 0; i < 4; i++) {
        pr[i] = (struct producer){.p = p};
        cr_assert_eq(pthread_create(&t[i], NULL, produce, &pr[i]), 0);
    }
    long accepted = 0;
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
        accepted += pr[i].accepted;
    }
    pool_free(p);
    cr_expect_gt(accepted, 0);
    cr_expect_eq(atomic_load(&runs), accepted, "%ld ran, %ld accepted", atomic_load(&runs), accepted);
}

Test(pool, null_is_no_pool) {
    cr_expect_eq(pool_push(NULL, count_job, NULL), -1);
    cr_expect_eq(pool_queued(NULL), 0);
    pool_free(NULL);
}
