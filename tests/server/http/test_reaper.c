/* test_reaper.c -- the housekeeping thread: its tick comes every period with
 * the monotonic time, and none comes once reaper_stop() has returned. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <time.h>

#include "kernels/base/status.h"
#include "server/http/reaper.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int ticks;
static double last_now;
static int went_back; /* a tick's time before the one before it */

static void tick(void *arg, double now_ms) {
    cr_assert_eq(arg, &ticks);
    pthread_mutex_lock(&lock);
    if (now_ms < last_now) went_back = 1;
    last_now = now_ms;
    ticks++;
    pthread_cond_broadcast(&cond);
    pthread_mutex_unlock(&lock);
}

Test(reaper, ticks_each_period_until_stopped, .timeout = 30) {
    struct reaper r = {0};
    char err[ERR_LEN];
    cr_assert_eq(reaper_start(&r, 5, tick, &ticks, err), 0, "%s", err);
    pthread_mutex_lock(&lock);
    while (ticks < 3) pthread_cond_wait(&cond, &lock);
    pthread_mutex_unlock(&lock);
    reaper_stop(&r);
    pthread_mutex_lock(&lock);
    int seen = ticks;
    pthread_mutex_unlock(&lock);
    cr_expect_eq(went_back, 0, "the tick's clock went back");
    /* Joined: nothing can tick any more, however long one waits. */
    struct timespec ts = {0, 30 * 1000 * 1000};
    nanosleep(&ts, NULL);
    cr_expect_eq(ticks, seen, "a tick after reaper_stop() returned");
    reaper_stop(&r); /* stopped already: nothing to do */
}

Test(reaper, a_reaper_never_started_stops_as_nothing) {
    struct reaper r = {0};
    reaper_stop(&r);
}
