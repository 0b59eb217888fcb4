/* suspend.c -- see suspend.h.
 *
 * The suspended requests are a doubly linked list (the reaper walks it for
 * timed wake-ups; stopping walks it to cancel them). A request is on it
 * exactly while `suspended` is set: the suspend adds it and
 * MHD_suspend_connection()s under the lock, a wake removes it and
 * MHD_resume_connection()s under the same lock, so a resume can never come
 * before its suspend, and a wake that finds nothing suspended is kept.
 */
#include "server/http/suspend.h"

#include <errno.h>

#include "kernels/base/timeutil.h"

int suspend_init(struct suspend *s) {
    s->waiting = NULL;
    s->live = 0;
    s->closing = 0;
    if (timeutil_cond_init(&s->idle) != 0) return -1; /* timed waits use timeutil_deadline()'s clock */
    pthread_mutex_init(&s->lock, NULL);
    return 0;
}

void suspend_cleanup(struct suspend *s) {
    pthread_mutex_destroy(&s->lock);
    pthread_cond_destroy(&s->idle);
}

static void list_add_locked(struct suspend *s, struct suspend_req *q) {
    if (q->in_list) return;
    q->prev = NULL;
    q->next = s->waiting;
    if (s->waiting) s->waiting->prev = q;
    s->waiting = q;
    q->in_list = 1;
}

static void list_remove_locked(struct suspend *s, struct suspend_req *q) {
    if (!q->in_list) return;
    if (q->prev) q->prev->next = q->next;
    else s->waiting = q->next;
    if (q->next) q->next->prev = q->prev;
    q->in_list = 0;
}

static void wake_locked(struct suspend *s, struct suspend_req *q) {
    if (q->suspended) {
        q->suspended = 0;
        list_remove_locked(s, q);
        MHD_resume_connection(q->conn);
    } else {
        q->wake_pending = 1;
    }
}

void suspend_begin(struct suspend *s, struct suspend_req *q, struct MHD_Connection *conn) {
    pthread_mutex_lock(&s->lock);
    q->conn = conn;
    s->live++;
    pthread_mutex_unlock(&s->lock);
}

void suspend_end(struct suspend *s, struct suspend_req *q, int began) {
    pthread_mutex_lock(&s->lock);
    list_remove_locked(s, q);
    q->suspended = 0;
    if (began && --s->live == 0) pthread_cond_broadcast(&s->idle);
    pthread_mutex_unlock(&s->lock);
}

int suspend_park(struct suspend *s, struct suspend_req *q, unsigned timeout_ms) {
    int parked = 0;
    pthread_mutex_lock(&s->lock);
    if (s->closing) __atomic_store_n(&q->cancelled, 1, __ATOMIC_RELEASE);
    if (q->wake_pending || q->cancelled || q->released) {
        q->wake_pending = 0;
    } else {
        q->suspended = 1;
        q->wake_at = timeout_ms ? timeutil_now_ms() + timeout_ms : 0;
        list_add_locked(s, q);
        MHD_suspend_connection(q->conn);
        parked = 1;
        q->parked = 1; /* read by the daemon thread that is suspending it */
    }
    pthread_mutex_unlock(&s->lock);
    return parked;
}

void suspend_wake(struct suspend *s, struct suspend_req *q, int cancel) {
    pthread_mutex_lock(&s->lock);
    if (cancel) __atomic_store_n(&q->cancelled, 1, __ATOMIC_RELEASE);
    wake_locked(s, q);
    pthread_mutex_unlock(&s->lock);
}

void suspend_release(struct suspend *s, struct suspend_req *q, int close_after) {
    pthread_mutex_lock(&s->lock);
    if (close_after) __atomic_store_n(&q->close_after, 1, __ATOMIC_RELEASE);
    __atomic_store_n(&q->released, 1, __ATOMIC_RELEASE);
    wake_locked(s, q);
    pthread_mutex_unlock(&s->lock);
}

void suspend_wake_due(struct suspend *s, double now_ms) {
    pthread_mutex_lock(&s->lock);
    for (struct suspend_req *q = s->waiting, *n; q; q = n) {
        n = q->next;
        if (q->suspended && q->wake_at > 0 && now_ms >= q->wake_at) wake_locked(s, q);
    }
    pthread_mutex_unlock(&s->lock);
}

unsigned suspend_close(struct suspend *s, int drain, unsigned drain_ms) {
    pthread_mutex_lock(&s->lock);
    __atomic_store_n(&s->closing, 1, __ATOMIC_RELAXED);
    for (struct suspend_req *q = s->waiting, *n; q; q = n) {
        n = q->next;
        __atomic_store_n(&q->cancelled, 1, __ATOMIC_RELEASE);
        wake_locked(s, q);
    }
    /* A request just woken (here, or by its work before) has its answer
     * written by a daemon thread a moment later: wait for every begun
     * request to end, for at most drain_ms. */
    struct timespec until = timeutil_deadline((double)drain_ms);
    while (s->live > 0 && drain)
        if (pthread_cond_timedwait(&s->idle, &s->lock, &until) == ETIMEDOUT) break;
    unsigned left = s->live;
    pthread_mutex_unlock(&s->lock);
    return left;
}

int suspend_closing(struct suspend *s) { return __atomic_load_n(&s->closing, __ATOMIC_RELAXED); }

int suspend_cancelled(const struct suspend_req *q) { return __atomic_load_n(&q->cancelled, __ATOMIC_ACQUIRE); }

int suspend_released(const struct suspend_req *q) {
    return __atomic_load_n(&q->released, __ATOMIC_ACQUIRE) || suspend_cancelled(q);
}

int suspend_close_after(const struct suspend_req *q) { return __atomic_load_n(&q->close_after, __ATOMIC_ACQUIRE); }
