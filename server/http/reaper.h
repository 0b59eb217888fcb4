/* reaper.h -- the HTTP front's housekeeping thread: every `period_ms` it
 * calls the owner's look (`tick`: deadlines, hang-ups, timed wake-ups), and
 * every 10 s it hands memory the server's threads freed back to the
 * kernel.
 *
 * Owner: struct http (http.c), which embeds it, starts it once the parts
 * its tick reads are made and stops it before they go. Lock: `lock` guards
 * `stop` alone and is not held while `tick` runs, so the tick takes what
 * locks it needs. Threads: one, its own; reaper_start() and reaper_stop()
 * from the owner's.
 */
#ifndef DV_REAPER_H
#define DV_REAPER_H

#include <pthread.h>

typedef void (*reaper_fn)(void *arg, double now_ms);

/* Private to reaper.c; embedded by its owner (zeroed before start). */
struct reaper {
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t cond; /* signalled to stop */
    int stop, started;
    unsigned period_ms;
    reaper_fn tick;
    void *arg;
};

/* Starts the thread: tick(arg, now) every `period_ms`. Returns 0, or -1
 * with `err` (nothing left running). */
int reaper_start(struct reaper *r, unsigned period_ms, reaper_fn tick, void *arg, char *err);

/* Stops the thread and waits for it (a tick under way finishes first).
 * A reaper never started (or already stopped) is left as it is. */
void reaper_stop(struct reaper *r);

#endif /* DV_REAPER_H */
