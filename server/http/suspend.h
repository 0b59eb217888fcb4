/* suspend.h -- requests waiting without a thread: libmicrohttpd's
 * suspend/resume made safe to call from any thread in any order, timed
 * wake-ups, and the count of requests begun, which stopping drains.
 *
 * MHD_resume_connection() may be called from any thread
 * (MHD_ALLOW_SUSPEND_RESUME), but a resume that comes before the suspend is
 * lost. So each request carries its own flags (struct suspend_req): a wake
 * that finds it not suspended is kept (`wake_pending`) and its next suspend
 * returns at once instead; a request asked to answer now (`released`) or
 * cancelled never suspends again.
 *
 * Owner: struct http (http.c) embeds one struct suspend, and each request
 * one struct suspend_req. Lock: `lock` guards the list of suspended
 * requests, every suspend_req's flags, `live` and `closing`; the flags read
 * from other threads without it (cancelled, released, close_after,
 * closing) are written with release stores and read with acquire loads.
 * The connection table's lock (conntable.h) is taken before this one where
 * both are held (suspend_release() runs under it), never after;
 * MHD_resume_connection() takes only libmicrohttpd's own lock, briefly.
 * Threads: a daemon thread parks its request (suspend_park) and ends it
 * (suspend_end); any thread wakes or releases one; the reaper wakes those
 * due (suspend_wake_due); the owner closes (suspend_close).
 */
#ifndef DV_SUSPEND_H
#define DV_SUSPEND_H

#include <microhttpd.h>
#include <pthread.h>

/* One request's suspension (private to suspend.c but `parked`). */
struct suspend_req {
    struct MHD_Connection *conn;
    int suspended, wake_pending, in_list;
    int cancelled;   /* the server is stopping, or its work never ran     */
    int released;    /* asked to answer now with its current state        */
    int close_after; /* released for the table: no keep-alive             */
    /* Suspended during the current call of its daemon thread, which
     * clears it before each handler and reads it after. */
    int parked;
    double wake_at; /* monotonic ms; 0: no timed wake-up */
    struct suspend_req *prev, *next;
};

/* Private to suspend.c; embedded by its owner. */
struct suspend {
    pthread_mutex_t lock;
    pthread_cond_t idle;         /* signalled when `live` falls to 0 */
    struct suspend_req *waiting; /* suspended now                 */
    unsigned live;               /* requests begun and not ended  */
    int closing;
};

/* 0, or -1 when the condition could not be made. */
int suspend_init(struct suspend *s);
void suspend_cleanup(struct suspend *s);

/* Request `q` on connection `conn` has begun (headers in): counted live
 * until suspend_end(). */
void suspend_begin(struct suspend *s, struct suspend_req *q, struct MHD_Connection *conn);

/* Request `q` has ended: off the list, no longer live. For a `q` that
 * never began (no suspend_begin()) it only makes sure `q` is off the list. */
void suspend_end(struct suspend *s, struct suspend_req *q, int began);

/* Suspends `q`'s connection (from its daemon thread, which then returns to
 * libmicrohttpd) until a wake, or `timeout_ms` (0: none) passes, unless a
 * wake is pending or `q` is released or cancelled (the server closing
 * cancels it). Returns 1 when suspended (`parked` set), 0 when the caller
 * should go on at once. */
int suspend_park(struct suspend *s, struct suspend_req *q, unsigned timeout_ms);

/* Resumes `q`, or keeps the wake for its next suspend. With `cancel`, `q` is
 * cancelled first. Any thread. */
void suspend_wake(struct suspend *s, struct suspend_req *q, int cancel);

/* Asks `q` to answer now with its current state and wakes it; with
 * `close_after`, its connection closes after that answer. Any thread (the
 * connection table calls it under its own lock). */
void suspend_release(struct suspend *s, struct suspend_req *q, int close_after);

/* Wakes the suspended requests whose timed wake-up is due at `now_ms`
 * (monotonic). The reaper's. */
void suspend_wake_due(struct suspend *s, double now_ms);

/* The server stops: every suspended request is woken cancelled (later
 * ones never suspend), then waits, while `drain` and for at most `drain_ms`,
 * until every begun request has ended (answered and written). Returns how
 * many are still live. */
unsigned suspend_close(struct suspend *s, int drain, unsigned drain_ms);

/* Whether the server is closing (suspend_close() has begun). Any thread. */
int suspend_closing(struct suspend *s);
/* Whether `q` was cancelled; released (cancelled implies released); asked
 * to close its connection after its answer. Any thread. */
int suspend_cancelled(const struct suspend_req *q);
int suspend_released(const struct suspend_req *q);
int suspend_close_after(const struct suspend_req *q);

#endif /* DV_SUSPEND_H */
