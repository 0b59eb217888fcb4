/* reaper.c -- see reaper.h.
 *
 * The thread sleeps on its condition until the next period (the monotonic
 * clock: a wall-clock step neither cuts a sleep short nor stretches it) or
 * until told to stop, then runs the tick without its lock.
 *
 * Every TRIM_MS it calls malloc_trim(): glibc keeps the pages freed on the
 * HTTP and pool threads in each thread's arena, so a long-lived server's
 * resident memory would otherwise creep up with fragmentation under a mixed
 * load (the soak benchmark, tests/bench/soak.py, measures it).
 */
#include "server/http/reaper.h"

#include <malloc.h>
#include <time.h>

#include "kernels/base/status.h"
#include "kernels/base/timeutil.h"

#define TRIM_MS 10000.0

static void *reaper_main(void *arg) {
    struct reaper *r = arg;
    double last_trim = timeutil_now_ms();
    pthread_mutex_lock(&r->lock);
    while (!r->stop) {
        struct timespec until = timeutil_deadline(r->period_ms);
        pthread_cond_timedwait(&r->cond, &r->lock, &until);
        if (r->stop) break;
        pthread_mutex_unlock(&r->lock);
        double now = timeutil_now_ms();
        r->tick(r->arg, now);
#ifdef __GLIBC__
        if (now - last_trim >= TRIM_MS) {
            malloc_trim(0);
            last_trim = now;
        }
#endif
        pthread_mutex_lock(&r->lock);
    }
    pthread_mutex_unlock(&r->lock);
    return NULL;
}

int reaper_start(struct reaper *r, unsigned period_ms, reaper_fn tick, void *arg, char *err) {
    r->stop = 0;
    r->started = 0;
    r->period_ms = period_ms;
    r->tick = tick;
    r->arg = arg;
    if (timeutil_cond_init(&r->cond) != 0) { /* timed waits use timeutil_deadline()'s clock */
        dv_seterr(err, "reaper: cannot make its condition variable");
        return -1;
    }
    pthread_mutex_init(&r->lock, NULL);
    if (pthread_create(&r->thread, NULL, reaper_main, r) != 0) {
        pthread_mutex_destroy(&r->lock);
        pthread_cond_destroy(&r->cond);
        dv_seterr(err, "reaper: cannot start its thread");
        return -1;
    }
    r->started = 1;
    return 0;
}

void reaper_stop(struct reaper *r) {
    if (!r->started) return;
    pthread_mutex_lock(&r->lock);
    r->stop = 1;
    pthread_cond_signal(&r->cond);
    pthread_mutex_unlock(&r->lock);
    pthread_join(r->thread, NULL);
    pthread_mutex_destroy(&r->lock);
    pthread_cond_destroy(&r->cond);
    r->started = 0;
}
