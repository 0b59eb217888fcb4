/* conntable.c -- see conntable.h.
 *
 * The table is a doubly linked list of slots, newest first, each with its
 * socket, its peer, the address it counts against, its phase and when the
 * phase began. Counting an address walks the list: the table holds at most
 * conn_limit + libmicrohttpd's slack entries, and the walks run on events
 * (a connection, a request, a hold), not per byte.
 *
 * Why libmicrohttpd's own limits are not enough (http.c's top says more):
 * its limit refuses at accept with no say over who goes, so it is set above
 * conn_limit and a newcomer that makes the table exceed conn_limit evicts an
 * incomplete connection of the heaviest address, or releases the oldest held
 * request of that address, or is itself shut; and its per-IP limit counts
 * sockets by peer, so behind a proxy every reader would share one address:
 * the table counts a trusted proxy's connection by the client each request
 * names (conntable_begin), and as the proxy's own again between requests.
 *
 * Held requests (long-polls, streams) are state of their slots: a flag, when
 * it began, and the table's count, under the same lock as the rest. A held
 * request past a bound has the OLDEST held request of its address (or of
 * all) answer now with its current state: the contract of both already says
 * "ask again", so the client loses nothing, and an address cannot keep the
 * table by holding requests (refusing newcomers instead would let whoever
 * came first keep their places for as long as they like). A suspended
 * request is not polled by libmicrohttpd, so conntable_reap() poll()s the
 * held sockets for a peer that has gone.
 *
 * A connection is shut down (shutdown(2), never close) and libmicrohttpd,
 * reading EOF, closes it; NOTIFY_CLOSED comes before it closes the socket,
 * and the slot leaves the table under the lock the reaper holds, so the
 * descriptor shut down is always still the connection's own.
 */
#define _GNU_SOURCE
#include "server/http/conntable.h"

#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "kernels/base/timeutil.h"

#define RELEASE_GRACE_MS 2000.0 /* a released connection's time to take its answer */
#define POLL_CHUNK 64           /* held sockets looked at per poll()              */

struct conntable_slot {
    int fd;
    char peer[CLIENTADDR_LEN]; /* the socket's address */
    /* Whom it counts against: the peer, or, while a request is in, the
     * client a trusted proxy forwarded it for. */
    char addr[CLIENTADDR_LEN];
    int proxied; /* the peer is a trusted proxy */
    enum conntable_phase phase;
    double since; /* monotonic ms when the phase began            */
    int killed;   /* shut down by the table                       */
    void *req;    /* the request on it now (headers in), or NULL  */
    int held;     /* req is held: counted against the bounds      */
    double held_since;
    /* Its held request was answered to make room: it closes once that
     * answer is written. */
    int releasing;
    double released_at;
    struct conntable_slot *prev, *next;
};

void conntable_init(struct conntable *t, const struct conntable_limits *lim, conntable_release_fn release, void *ctx) {
    memset(t, 0, sizeof *t);
    pthread_mutex_init(&t->lock, NULL);
    t->lim = *lim;
    t->release = release;
    t->release_ctx = ctx;
}

void conntable_cleanup(struct conntable *t) {
    for (struct conntable_slot *s = t->slots, *n; s; s = n) {
        n = s->next;
        free(s);
    }
    t->slots = NULL;
    pthread_mutex_destroy(&t->lock);
}

/* ---- counting ------------------------------------------------------------ */

/* Counted in the table: not shut down, and not on its way out after a
 * released answer. */
static int slot_live(const struct conntable_slot *s) { return !s->killed && !s->releasing; }

static unsigned count_addr_locked(const struct conntable *t, const char *addr, int held_only) {
    unsigned n = 0;
    for (const struct conntable_slot *s = t->slots; s; s = s->next)
        if (slot_live(s) && (!held_only || s->held) && strcmp(s->addr, addr) == 0) n++;
    return n;
}

static void kill_locked(struct conntable_slot *s) {
    if (s->killed) return;
    s->killed = 1;
    shutdown(s->fd, SHUT_RDWR);
}

static void unheld_locked(struct conntable *t, struct conntable_slot *s) {
    if (!s->held) return;
    s->held = 0;
    t->st.held--;
}

/* Has the held request of `v` answer now (`release`, which takes the
 * suspension's lock). With `close_after`, its connection closes once the
 * answer is written. */
static void release_locked(struct conntable *t, struct conntable_slot *v, int close_after) {
    unheld_locked(t, v);
    if (close_after) {
        v->releasing = 1;
        v->released_at = timeutil_now_ms();
    }
    if (v->req) t->release(t->release_ctx, v->req, close_after); /* set while held: cleared under the lock */
}

/* The oldest held connection (other than `except`) of `addr`, or of anyone
 * when `addr` is NULL; with `heaviest`, of the address holding the most
 * live connections. NULL when none. */
static struct conntable_slot *oldest_held_locked(struct conntable *t, const char *addr,
                                                 const struct conntable_slot *except, int heaviest) {
    struct conntable_slot *victim = NULL;
    unsigned victim_count = 0;
    for (struct conntable_slot *s = t->slots; s; s = s->next) {
        if (s == except || !s->held || !slot_live(s) || (addr && strcmp(s->addr, addr) != 0)) continue;
        unsigned n = heaviest ? count_addr_locked(t, s->addr, 0) : 0;
        if (!victim || n > victim_count || (n == victim_count && s->held_since < victim->held_since)) {
            victim = s;
            victim_count = n;
        }
    }
    return victim;
}

/* A newcomer made the table exceed its limit: shut an incomplete connection
 * of the address with the most live connections, oldest first; failing
 * that, answer the oldest held request of the heaviest address with its
 * current state and close its connection after; failing that (every other
 * connection in a request that must run), shut the newcomer itself. */
static void evict_locked(struct conntable *t, struct conntable_slot *newcomer) {
    struct conntable_slot *victim = NULL;
    unsigned victim_count = 0;
    for (struct conntable_slot *s = t->slots; s; s = s->next) {
        if (s == newcomer || !slot_live(s) || (s->phase != CONNTABLE_HEADERS && s->phase != CONNTABLE_IDLE)) continue;
        unsigned n = count_addr_locked(t, s->addr, 0);
        if (!victim || n > victim_count || (n == victim_count && s->since < victim->since)) {
            victim = s;
            victim_count = n;
        }
    }
    if (victim) {
        t->st.evicted++;
        kill_locked(victim);
    } else if ((victim = oldest_held_locked(t, NULL, newcomer, 1))) {
        t->st.released_table++;
        release_locked(t, victim, 1);
    } else {
        t->st.refused++;
        kill_locked(newcomer);
    }
}

/* ---- connections and requests ---------------------------------------------- */

struct conntable_slot *conntable_open(struct conntable *t, int fd, const char *peer, int proxied) {
    struct conntable_slot *s = calloc(1, sizeof *s);
    if (!s) {
        shutdown(fd, SHUT_RDWR); /* no memory to track it: do not serve it */
        return NULL;
    }
    s->fd = fd;
    snprintf(s->peer, sizeof s->peer, "%s", peer);
    snprintf(s->addr, sizeof s->addr, "%s", peer);
    s->proxied = proxied;
    s->phase = CONNTABLE_HEADERS;
    s->since = timeutil_now_ms();
    pthread_mutex_lock(&t->lock);
    s->next = t->slots;
    if (t->slots) t->slots->prev = s;
    t->slots = s;
    unsigned live = 0;
    for (const struct conntable_slot *o = t->slots; o; o = o->next) live += slot_live(o);
    /* A proxy's connections are counted by the client each request names
     * (conntable_begin); its own share is the table's. */
    if (!s->proxied && count_addr_locked(t, s->addr, 0) > t->lim.per_ip_limit) {
        t->st.address_refused++;
        kill_locked(s);
    } else if (live > t->lim.conn_limit) {
        evict_locked(t, s);
    }
    pthread_mutex_unlock(&t->lock);
    return s;
}

void conntable_close(struct conntable *t, struct conntable_slot *s) {
    if (!s) return;
    pthread_mutex_lock(&t->lock);
    unheld_locked(t, s);
    if (s->prev) s->prev->next = s->next;
    else t->slots = s->next;
    if (s->next) s->next->prev = s->prev;
    pthread_mutex_unlock(&t->lock);
    free(s);
}

int conntable_begin(struct conntable *t, struct conntable_slot *s, void *req, const char *addr) {
    if (!s) return 0;
    int over = 0;
    pthread_mutex_lock(&t->lock);
    s->phase = CONNTABLE_BODY;
    s->since = timeutil_now_ms();
    s->req = req;
    if (s->proxied) {
        snprintf(s->addr, sizeof s->addr, "%s", addr);
        over = strcmp(s->addr, s->peer) != 0 && count_addr_locked(t, s->addr, 0) > t->lim.per_ip_limit;
        if (over) t->st.address_refused++;
    }
    pthread_mutex_unlock(&t->lock);
    return over;
}

void conntable_phase(struct conntable *t, struct conntable_slot *s, enum conntable_phase p) {
    if (!s) return;
    pthread_mutex_lock(&t->lock);
    s->phase = p;
    s->since = timeutil_now_ms();
    pthread_mutex_unlock(&t->lock);
}

void conntable_end(struct conntable *t, struct conntable_slot *s, void *req, int completed) {
    if (!s) return;
    pthread_mutex_lock(&t->lock);
    if (s->req == req) {
        s->req = NULL;
        unheld_locked(t, s);
        /* Idle between requests, a proxy's connection is no client's. */
        if (s->proxied) snprintf(s->addr, sizeof s->addr, "%s", s->peer);
        if (s->releasing) kill_locked(s); /* its answer is written */
    }
    if (completed && !s->killed) {
        s->phase = CONNTABLE_IDLE;
        s->since = timeutil_now_ms();
    }
    pthread_mutex_unlock(&t->lock);
}

/* ---- held requests --------------------------------------------------------- */

void conntable_hold(struct conntable *t, struct conntable_slot *s, void *req) {
    if (!s) return;
    pthread_mutex_lock(&t->lock);
    if (s->req == req && slot_live(s) && !s->held) {
        s->held = 1;
        s->held_since = timeutil_now_ms();
        t->st.held++;
        unsigned mine = count_addr_locked(t, s->addr, 1);
        struct conntable_slot *v;
        for (; mine > t->lim.held_per_ip && (v = oldest_held_locked(t, s->addr, s, 0)); mine--) {
            t->st.released_address++;
            release_locked(t, v, 0);
        }
        while (t->st.held > t->lim.held_limit && (v = oldest_held_locked(t, NULL, s, 0))) {
            t->st.released_total++;
            release_locked(t, v, 0);
        }
    }
    pthread_mutex_unlock(&t->lock);
}

void conntable_unhold(struct conntable *t, struct conntable_slot *s, void *req) {
    if (!s) return;
    pthread_mutex_lock(&t->lock);
    if (s->req == req) unheld_locked(t, s);
    pthread_mutex_unlock(&t->lock);
}

/* ---- the reaper's look ------------------------------------------------------ */

/* A peer that has closed (or reset) its end of a held socket shows as
 * POLLRDHUP / POLLHUP / POLLERR; its request answers now (into a socket
 * shut down: libmicrohttpd then closes it). Data the client sent meanwhile
 * (POLLIN alone) is no hang-up. */
static void hangups_locked(struct conntable *t) {
    struct conntable_slot *s = t->slots;
    while (s) {
        struct pollfd pf[POLL_CHUNK];
        struct conntable_slot *ps[POLL_CHUNK];
        nfds_t n = 0;
        for (; s && n < POLL_CHUNK; s = s->next)
            if (s->held && slot_live(s)) {
                pf[n] = (struct pollfd){.fd = s->fd, .events = POLLRDHUP};
                ps[n++] = s;
            }
        if (n == 0 || poll(pf, n, 0) <= 0) continue;
        for (nfds_t i = 0; i < n; i++)
            if (pf[i].revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)) {
                t->st.hangups++;
                release_locked(t, ps[i], 0);
                kill_locked(ps[i]);
            }
    }
}

void conntable_reap(struct conntable *t, double now_ms) {
    pthread_mutex_lock(&t->lock);
    for (struct conntable_slot *s = t->slots; s; s = s->next) {
        if (s->killed) continue;
        double limit = s->phase == CONNTABLE_BODY ? t->lim.body_ms : s->phase == CONNTABLE_BUSY ? -1 : t->lim.header_ms;
        if (limit >= 0 && now_ms - s->since > limit) {
            t->st.deadline_closed++;
            kill_locked(s);
        } else if (s->releasing && now_ms - s->released_at > RELEASE_GRACE_MS) {
            kill_locked(s); /* its answer was not taken */
        }
    }
    hangups_locked(t);
    pthread_mutex_unlock(&t->lock);
}

void conntable_stats(struct conntable *t, struct conntable_stats *out) {
    pthread_mutex_lock(&t->lock);
    *out = t->st;
    out->open = 0;
    for (const struct conntable_slot *s = t->slots; s; s = s->next) out->open += !s->killed;
    pthread_mutex_unlock(&t->lock);
}
