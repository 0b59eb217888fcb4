/* conntable.h -- the HTTP front's own table of open connections: each one's
 * phase and deadline, the address it counts against, and the held requests
 * on them. http.h states the rules (deadlines, the fair table, the
 * per-address share, held requests bounded and released oldest first);
 * this part keeps the state they are decided on.
 *
 * Like nginx's limit_conn context: per-address state kept by one part,
 * under its own lock. Owner: struct http (http.c), which embeds it and
 * calls conntable_init() before the daemon starts and conntable_cleanup()
 * after it stopped. Lock: `lock` guards every slot, the held count and the
 * counters. It is held while `release` runs, which takes the suspension's
 * lock (suspend.h): the table's lock comes first, never after. Threads:
 * libmicrohttpd's daemon threads call open, close, begin, phase, end, hold
 * and unhold (each for its own connection); the reaper calls
 * conntable_reap(); conntable_stats() any thread.
 *
 * A slot is the table's from conntable_open() to conntable_close()
 * (libmicrohttpd's NOTIFY_STARTED and NOTIFY_CLOSED: the socket is the
 * connection's own in between, so shutting it down never touches another's).
 * The request a slot carries, from conntable_begin() to conntable_end(),
 * is opaque here: when the table must have it answer now (released to make
 * room, or its peer gone), it calls `release(ctx, req, close_after)` with its
 * lock held; `req` is alive then, since conntable_end() runs before it is
 * freed and takes the same lock.
 */
#ifndef DV_CONNTABLE_H
#define DV_CONNTABLE_H

#include <pthread.h>

#include "server/http/clientaddr.h"

/* Where a connection stands: sending its headers (or just connected), its
 * body, inside a request that must run, or idle between requests. */
enum conntable_phase { CONNTABLE_HEADERS, CONNTABLE_BODY, CONNTABLE_BUSY, CONNTABLE_IDLE };

struct conntable_limits {
    unsigned conn_limit;   /* connections in all                        */
    unsigned per_ip_limit; /* connections per address                   */
    unsigned held_limit;   /* held requests in all                      */
    unsigned held_per_ip;  /* held requests per address                 */
    double header_ms;      /* connect (or last reply) to the headers     */
    double body_ms;        /* headers to the whole body                  */
};

/* What the table saw, for metrics and tests. */
struct conntable_stats {
    unsigned open;                      /* connections in the table         */
    unsigned held;                      /* held requests now                */
    unsigned long long evicted;         /* shut to make room for a newcomer */
    unsigned long long deadline_closed; /* shut past a header/body deadline */
    unsigned long long refused;         /* newcomers shut: table all busy   */
    unsigned long long address_refused; /* over an address's share          */
    unsigned long long hangups;         /* held, and the peer had gone      */
    /* Held requests answered early: over the per-address bound, over the
     * total, or for a newcomer to a full table. */
    unsigned long long released_address, released_total, released_table;
};

/* Has the request `req` answer now with its current state; with
 * `close_after`, its connection closes once that answer is written. Called
 * with the table's lock held. */
typedef void (*conntable_release_fn)(void *ctx, void *req, int close_after);

struct conntable_slot;

/* Private to conntable.c; embedded by its owner. */
struct conntable {
    pthread_mutex_t lock;
    struct conntable_limits lim;
    conntable_release_fn release;
    void *release_ctx;
    struct conntable_slot *slots; /* newest first */
    struct conntable_stats st;    /* the counters; open and held counted when read */
};

void conntable_init(struct conntable *t, const struct conntable_limits *lim, conntable_release_fn release, void *ctx);
/* Frees the slots left (none once libmicrohttpd has stopped). */
void conntable_cleanup(struct conntable *t);

/* A connection on socket `fd` from `peer` (its address as text) has opened;
 * `proxied` when the peer is a trusted proxy (its connections count by the
 * client each request names, conntable_begin()). Applies the per-address
 * share and the table's limit (evicting, releasing or refusing: shut down
 * with shutdown(2)). Returns its slot, or NULL when out of memory: then the
 * socket is shut down, not served untracked. */
struct conntable_slot *conntable_open(struct conntable *t, int fd, const char *peer, int proxied);

/* The connection of `s` has closed: its slot leaves the table. NULL ok. */
void conntable_close(struct conntable *t, struct conntable_slot *s);

/* A request's headers are in: `s` carries `req` (until conntable_end()),
 * and, behind a trusted proxy, counts against `addr`, the client it came
 * for. Returns 1 when that client now holds more than its share of
 * connections (counted: the caller answers 429 and closes). NULL `s`: 0. */
int conntable_begin(struct conntable *t, struct conntable_slot *s, void *req, const char *addr);

/* The connection of `s` enters phase `p` now. NULL `s` ok. */
void conntable_phase(struct conntable *t, struct conntable_slot *s, enum conntable_phase p);

/* `req` on `s` has ended (answered and written, or the connection gone;
 * `completed` when the answer went out whole): no longer carried nor held;
 * a connection released for the table closes now; one that completed is
 * idle from now. NULL `s` ok. */
void conntable_end(struct conntable *t, struct conntable_slot *s, void *req, int completed);

/* `req` on `s` is held from now (its first suspend, or its stream): counted
 * against the bounds, which are applied at once, the oldest held requests
 * of its address, then of all, released until both hold. */
void conntable_hold(struct conntable *t, struct conntable_slot *s, void *req);

/* `req` on `s` answered (a long-poll) or ended: no longer held. */
void conntable_unhold(struct conntable *t, struct conntable_slot *s, void *req);

/* The reaper's look at time `now_ms` (monotonic): shuts the connections
 * past their phase's deadline, and those released that have not taken
 * their answer within a grace; polls the held sockets and releases (and
 * shuts) those whose peer has gone. */
void conntable_reap(struct conntable *t, double now_ms);

void conntable_stats(struct conntable *t, struct conntable_stats *out);

#endif /* DV_CONNTABLE_H */
