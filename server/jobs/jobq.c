/* jobq.c -- see jobq.h.
 *
 * Under one mutex: the waiting jobs, the `running` ones (one job, or the
 * members of one batch, linked by `next`), and `finished`
 * (newest first, trimmed to keep_finished). The waiting jobs hang off their
 * client (struct client: one per address with jobs waiting, each a FIFO),
 * and the clients form a ring; `turn` is the client whose oldest job runs
 * next. A pop takes that job and passes the turn on; a client left with
 * nothing is unlinked and freed, and a new one is linked just before the
 * turn, i.e. at the end of the round. So where a waiting job stands is
 * arithmetic: the k-th job (from 0) of its client starts after k jobs of its
 * own and, of every other client, the first k + 1 when that client comes
 * earlier in the round than its own, else the first k (ahead_locked()),
 * and when it is expected to start is the sum of those jobs' estimates
 * (runest.h) after the running job's remainder.
 *
 * The cache is a separate list of (key, document, time) trimmed the same
 * way, so a job can be evicted while its result still answers identical
 * requests; the entry keeps the job's times too, so the job id a cached
 * answer names still answers GET /jobs/{id} as long as the entry lives.
 * Sizes are small (tens to hundreds), so lookups are linear scans; that
 * keeps the structure obvious and allocation-light.
 *
 * Watchers hang off the job they watch (a doubly linked list per job), so
 * an event wakes that job's watchers only, plus, when the queue moves up,
 * the position watchers of the jobs still queued. A job's watchers are
 * detached when it finishes (no later event can concern them), so an
 * evicted job leaves none pointing at it.
 */
#define _GNU_SOURCE
#include "kernels/base/ids.h"
#include "kernels/base/timeutil.h"
#include "server/jobs/jobq.h"
#include "server/core/log.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

struct job {
    char id[JOBQ_ID_LEN];
    enum job_state state;
    char *request;
    char *key;
    unsigned deadline_ms;
    char tag[64];
    char runkind[JOBQ_KIND_LEN]; /* what its run time depends on (runest.h) */
    struct client *src;          /* while waiting: the client whose FIFO holds it */
    size_t bytes;                /* what it counts against max_bytes while waiting */
    jobq_done_fn on_done, on_start;
    void *on_done_ctx;
    char *document;
    double gpu_time_ms;
    int code;
    char kind[16];
    char error[ERR_LEN];
    double created, started, finished;
    double started_ms; /* monotonic, when it began running */
    char *batch;       /* options_batch_key()'s text, NULL: never batched */
    unsigned batch_n;  /* running or finished: the jobs its batch ran (1: alone) */
    struct jobq_watch *watchers;
    struct job *next;
};

/* One submitting address with jobs waiting: its FIFO and its place in the
 * ring of turns. */
struct client {
    char addr[JOBQ_CLIENT_LEN];
    int own; /* the server's own jobs (submitted with no client) */
    struct job *head, *tail;
    unsigned n;
    struct client *prev, *next;
};

struct cache_entry {
    char *key;
    char *document;
    double when; /* monotonic seconds */
    char id[JOBQ_ID_LEN];
    double gpu_time_ms, created, started, finished; /* the job's, for jobq_status */
    char tag[64];
    struct cache_entry *next;
};

struct jobq_watch {
    void (*fn)(void *);
    void *ctx;
    unsigned flags;
    struct job *job; /* NULL once detached */
    struct jobq_watch *prev, *next;
};

struct jobq {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    unsigned capacity, keep;
    double ttl_s;
    int closed;
    struct client *turn; /* the ring of clients with jobs waiting; NULL: none */
    unsigned nclients;
    unsigned depth;
    size_t bytes; /* held by the waiting jobs */
    struct jobq_limits lim;
    struct job *running; /* the running jobs (a batch's members), by `next` */
    unsigned nrunning;
    struct job *finished; /* newest first */
    unsigned nfinished;
    struct cache_entry *cache; /* newest first */
    unsigned ncache;
    struct jobq_stats st;
    jobq_timing_fn observe;
    void *observe_ctx;
    char id_prefix[JOBQ_ID_PREFIX_MAX + 1];
    struct runest est; /* each kind's recent runs */
};

/* ---- the waiting jobs: clients, turns, where a job stands ---------------- */

/* The client of `addr` (NULL: the server's own) with jobs waiting, or NULL. */
static struct client *client_find_locked(const struct jobq *q, const char *addr) {
    struct client *c = q->turn;
    for (unsigned i = 0; i < q->nclients; i++, c = c->next) {
        if (!addr ? c->own : !c->own && strncmp(c->addr, addr, JOBQ_CLIENT_LEN - 1) == 0) return c;
    }
    return NULL;
}

/* A new client for `addr`, linked at the end of the round (just before the
 * turn). NULL when out of memory. */
static struct client *client_add_locked(struct jobq *q, const char *addr) {
    struct client *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    c->own = addr == NULL;
    snprintf(c->addr, sizeof c->addr, "%s", addr ? addr : "");
    if (!q->turn) {
        c->prev = c->next = c;
        q->turn = c;
    } else {
        c->next = q->turn;
        c->prev = q->turn->prev;
        c->prev->next = c;
        q->turn->prev = c;
    }
    q->nclients++;
    return c;
}

/* Unlinks and frees `c` (no jobs left). */
static void client_remove_locked(struct jobq *q, struct client *c) {
    if (c->next == c) {
        q->turn = NULL;
    } else {
        c->prev->next = c->next;
        c->next->prev = c->prev;
        if (q->turn == c) q->turn = c->next;
    }
    q->nclients--;
    free(c);
}

/* Takes the next job to run (the oldest of the client whose turn it is) off
 * the queue and passes the turn on. The queue must not be empty. */
static struct job *take_next_locked(struct jobq *q) {
    struct client *c = q->turn;
    struct job *j = c->head;
    c->head = j->next;
    if (!c->head) c->tail = NULL;
    c->n--;
    q->turn = c->next;
    if (c->n == 0) client_remove_locked(q, c);
    q->depth--;
    q->bytes -= j->bytes;
    j->src = NULL;
    j->next = NULL;
    return j;
}

/* The running jobs' expected remainder: their kinds' estimates together
 * (a batch runs its members' work; each kind's estimate is a member's
 * share of its batch, finish_locked(), or its seed) less the time they have
 * run, at least 0; 0 when nothing runs. Members of kinds with no estimate
 * (no run, no seed) count the default once between them, as one job before
 * any has run does: a fresh server's batch of fifteen is not 30 s of work. */
static double running_left_locked(const struct jobq *q) {
    double left = 0, since = 0;
    int unknown = 0;
    for (const struct job *r = q->running; r; r = r->next) {
        if (runest_known(&q->est, r->runkind)) left += runest_get(&q->est, r->runkind);
        else unknown = 1;
        since = r->started_ms;
    }
    if (unknown) left += q->est.default_s;
    left -= q->running ? (timeutil_now_ms() - since) / 1e3 : 0;
    return left > 0 ? left : 0;
}

/* How many waiting jobs start before waiting job `j` (jobq.c's head says
 * which) into `*n`, and the sum of their expected runs into `*secs`. */
static void ahead_locked(const struct jobq *q, const struct job *j, unsigned *n, double *secs) {
    const struct client *own = j->src;
    unsigned k = 0;
    double s = 0;
    for (const struct job *x = own->head; x != j; x = x->next, k++) s += runest_get(&q->est, x->runkind);
    unsigned ahead = k;
    int before = 1; /* clients before `own` in the round */
    const struct client *c = q->turn;
    for (unsigned i = 0; i < q->nclients; i++, c = c->next) {
        if (c == own) {
            before = 0;
            continue;
        }
        unsigned take = k + (unsigned)before;
        const struct job *x = c->head;
        for (unsigned t = 0; t < take && x; t++, x = x->next) {
            s += runest_get(&q->est, x->runkind);
            ahead++;
        }
    }
    *n = ahead;
    *secs = s;
}

/* When waiting job `j` is expected to start, in seconds from now. */
static double expected_start_locked(const struct jobq *q, const struct job *j) {
    unsigned n;
    double secs;
    ahead_locked(q, j, &n, &secs);
    return running_left_locked(q) + secs;
}

/* Seconds rounded up to whole ones for Retry-After: at least 1, at most 3600. */
static unsigned retry_seconds(double s) {
    if (!(s >= 1)) return 1;
    return s > 3600 ? 3600 : (unsigned)ceil(s);
}

/* When a place for client `c` (NULL: a client with nothing waiting) is
 * likely: at its bound, when its oldest job starts; else when the queue's
 * next job leaves the queue, i.e. when the running job ends. Not when a job
 * queued now would start: before a kind has run (or is seeded), every job
 * ahead counts at the (conservative) default, and a fresh server would tell
 * a class to come back in half a minute for a second of work; a client
 * admitted then reads its own expected start in the 202. */
static unsigned retry_after_locked(const struct jobq *q, const struct client *c) {
    if (c && !c->own && q->lim.per_client && c->n >= q->lim.per_client)
        return retry_seconds(expected_start_locked(q, c->head));
    return retry_seconds(running_left_locked(q));
}

/* Tells the watchers of `j` that it changed (lock held). */
static void notify_job_locked(struct job *j) {
    for (struct jobq_watch *w = j->watchers; w; w = w->next) w->fn(w->ctx);
}

/* The waiting jobs' places changed: tells their position watchers. */
static void notify_positions_locked(struct jobq *q) {
    struct client *c = q->turn;
    for (unsigned i = 0; i < q->nclients; i++, c = c->next)
        for (struct job *k = c->head; k; k = k->next)
            for (struct jobq_watch *w = k->watchers; w; w = w->next)
                if (w->flags & JOBQ_WATCH_POSITION) w->fn(w->ctx);
}

/* `j` has finished: its watchers are told, then let go of it. */
static void notify_final_locked(struct job *j) {
    notify_job_locked(j);
    for (struct jobq_watch *w = j->watchers, *n; w; w = n) {
        n = w->next;
        w->job = NULL;
        w->prev = w->next = NULL;
    }
    j->watchers = NULL;
}

static struct job *find_locked(struct jobq *q, const char *id);

struct jobq_watch *jobq_watch(struct jobq *q, const char *id, unsigned flags, void (*fn)(void *), void *ctx) {
    struct jobq_watch *w = calloc(1, sizeof *w);
    if (!w) return NULL;
    w->fn = fn;
    w->ctx = ctx;
    w->flags = flags;
    pthread_mutex_lock(&q->lock);
    struct job *j = find_locked(q, id);
    if (j && (j->state == JOB_QUEUED || j->state == JOB_RUNNING)) {
        w->job = j;
        w->next = j->watchers;
        if (j->watchers) j->watchers->prev = w;
        j->watchers = w;
    } else {
        fn(ctx); /* finished or gone already: nothing will come; look now */
    }
    pthread_mutex_unlock(&q->lock);
    return w;
}

void jobq_unwatch(struct jobq *q, struct jobq_watch *w) {
    if (!w) return;
    pthread_mutex_lock(&q->lock);
    if (w->job) {
        if (w->prev) w->prev->next = w->next;
        else w->job->watchers = w->next;
        if (w->next) w->next->prev = w->prev;
    }
    pthread_mutex_unlock(&q->lock);
    free(w);
}

const char *jobq_state_name(enum job_state s) {
    static const char *const names[] = {
        [JOB_QUEUED] = "queued", [JOB_RUNNING] = "running", [JOB_DONE] = "done", [JOB_FAILED] = "failed"};
    return (unsigned)s < sizeof names / sizeof names[0] ? names[s] : "unknown";
}

int jobq_new_id(char *id) { return ids_random_hex(NULL, 16, id, JOBQ_ID_LEN, NULL); }

static void job_free(struct job *j) {
    if (!j) return;
    for (struct jobq_watch *w = j->watchers; w; w = w->next) w->job = NULL; /* see jobq_free */
    free(j->request);
    free(j->key);
    free(j->batch);
    free(j->document);
    free(j);
}

static void cache_entry_free(struct cache_entry *c) {
    if (!c) return;
    free(c->key);
    free(c->document);
    free(c);
}

struct jobq *jobq_create(unsigned capacity, unsigned keep_finished, double ttl_s, char *err) {
    if (capacity == 0 || keep_finished == 0) {
        dv_seterr(err, "jobq: capacity and kept jobs must be at least 1");
        return NULL;
    }
    struct jobq *q = calloc(1, sizeof *q);
    if (!q) {
        dv_seterr(err, "jobq: out of memory");
        return NULL;
    }
    if (timeutil_cond_init(&q->cond) != 0) { /* timed waits use timeutil_deadline()'s clock */
        free(q);
        dv_seterr(err, "jobq: out of memory");
        return NULL;
    }
    pthread_mutex_init(&q->lock, NULL);
    q->capacity = capacity;
    q->keep = keep_finished;
    q->ttl_s = ttl_s;
    q->st.capacity = capacity;
    q->lim.default_run_s = JOBQ_DEFAULT_RUN_S;
    runest_init(&q->est, JOBQ_DEFAULT_RUN_S);
    return q;
}

int jobq_seed(struct jobq *q, const char *kind, double run_s) {
    pthread_mutex_lock(&q->lock);
    const int seeded = runest_seed(&q->est, kind, run_s);
    pthread_mutex_unlock(&q->lock);
    return seeded;
}

int jobq_set_limits(struct jobq *q, const struct jobq_limits *l, char *err) {
    if (!(l->default_run_s > 0 && l->default_run_s <= 3600)) {
        dv_seterr(err, "jobq: the default run must be more than 0 and at most 3600 s, not %g", l->default_run_s);
        return -1;
    }
    pthread_mutex_lock(&q->lock);
    q->lim = *l;
    q->est.default_s = l->default_run_s;
    pthread_mutex_unlock(&q->lock);
    return 0;
}

size_t jobq_submit_bytes(const struct jobq_submit *s) {
    /* A client record too: a job may be the one its client was made for. */
    return sizeof(struct job) + sizeof(struct client) + strlen(s->request ? s->request : "{}") + 1 +
           (s->key ? strlen(s->key) + 1 : 0) + (s->batch && s->batch[0] ? strlen(s->batch) + 1 : 0);
}

void jobq_free(struct jobq *q) {
    if (!q) return;
    struct job *j, *n;
    while (q->turn) job_free(take_next_locked(q));
    for (j = q->finished; j; j = n) { n = j->next; job_free(j); }
    for (j = q->running; j; j = n) { n = j->next; job_free(j); }
    struct cache_entry *c, *cn;
    for (c = q->cache; c; c = cn) {
        cn = c->next;
        cache_entry_free(c);
    }
    pthread_cond_destroy(&q->cond);
    pthread_mutex_destroy(&q->lock);
    free(q);
}

static void fill_view(const struct jobq *q, const struct job *j, struct job_view *v, int copy_doc) {
    memset(v, 0, sizeof *v);
    memcpy(v->id, j->id, JOBQ_ID_LEN);
    v->state = j->state;
    if (j->state == JOB_QUEUED) {
        unsigned ahead;
        double secs;
        ahead_locked(q, j, &ahead, &secs);
        v->position = ahead + 1;
        v->expected_start_s = running_left_locked(q) + secs;
        v->eta_s = v->expected_start_s + runest_get(&q->est, j->runkind);
    } else if (j->state == JOB_RUNNING) {
        v->eta_s = running_left_locked(q);
    }
    v->document = copy_doc && j->document ? strdup(j->document) : NULL;
    v->gpu_time_ms = j->gpu_time_ms;
    v->code = j->code;
    snprintf(v->kind, sizeof v->kind, "%s", j->kind);
    snprintf(v->error, sizeof v->error, "%s", j->error);
    snprintf(v->tag, sizeof v->tag, "%s", j->tag);
    v->created = j->created;
    v->started = j->started;
    v->finished = j->finished;
}

/* Fills `w` (may be NULL) for waiting or running job `j`. */
static void wait_of_locked(const struct jobq *q, const struct job *j, struct jobq_wait *w) {
    if (!w) return;
    memset(w, 0, sizeof *w);
    if (j->state == JOB_QUEUED) {
        w->expected_start_s = expected_start_locked(q, j);
        w->eta_s = w->expected_start_s + runest_get(&q->est, j->runkind);
    } else {
        w->eta_s = running_left_locked(q);
    }
}

/* The waiting or running job with cache key `key`, or NULL. */
static struct job *identical_locked(const struct jobq *q, const char *key) {
    for (struct job *r = q->running; r; r = r->next)
        if (r->key && strcmp(r->key, key) == 0) return r;
    struct client *c = q->turn;
    for (unsigned i = 0; i < q->nclients; i++, c = c->next)
        for (struct job *k = c->head; k; k = k->next)
            if (k->key && strcmp(k->key, key) == 0) return k;
    return NULL;
}

/* Which bound a job of `bytes` from client `c` (NULL: none waiting yet;
 * `own`: the server's own) would pass, with `err` saying so; NONE when it
 * fits. */
static enum jobq_full over_bound_locked(const struct jobq *q, const struct client *c, int own, size_t bytes,
                                        const char *addr, char *err) {
    if (!own && c && q->lim.per_client && c->n >= q->lim.per_client) {
        dv_seterr(err, "%s has %u jobs waiting, the most one address may queue", addr, c->n);
        return JOBQ_FULL_CLIENT;
    }
    if (q->depth >= q->capacity) {
        dv_seterr(err, "the job queue is full (%u jobs waiting)", q->capacity);
        return JOBQ_FULL_JOBS;
    }
    if (q->lim.max_bytes && q->bytes + bytes > q->lim.max_bytes) {
        dv_seterr(err, "the job queue is full (its %u jobs hold %zu bytes; this one needs %zu more of the %zu allowed)",
                  q->depth, q->bytes, bytes, q->lim.max_bytes);
        return JOBQ_FULL_BYTES;
    }
    return JOBQ_FULL_NONE;
}

/* A new waiting job for `s` (not yet queued), or NULL when out of memory. */
static struct job *job_make_locked(const struct jobq *q, const struct jobq_submit *s, size_t bytes) {
    struct job *j = calloc(1, sizeof *j);
    if (!j || jobq_new_id(j->id) < 0 || !(j->request = strdup(s->request ? s->request : "{}")) ||
        (s->key && !(j->key = strdup(s->key))) || (s->batch && s->batch[0] && !(j->batch = strdup(s->batch)))) {
        job_free(j);
        return NULL;
    }
    memcpy(j->id, q->id_prefix, strlen(q->id_prefix)); /* the owner's prefix, if any */
    j->state = JOB_QUEUED;
    j->deadline_ms = s->deadline_ms;
    j->on_done = s->on_done;
    j->on_start = s->on_start;
    j->on_done_ctx = s->on_done_ctx;
    j->bytes = bytes;
    snprintf(j->tag, sizeof j->tag, "%s", s->tag ? s->tag : "");
    snprintf(j->runkind, sizeof j->runkind, "%s", s->kind ? s->kind : "");
    j->created = timeutil_wall_s();
    return j;
}

/* Appends `j` to client `c`'s FIFO. */
static void enqueue_locked(struct jobq *q, struct client *c, struct job *j) {
    j->src = c;
    if (c->tail) c->tail->next = j;
    else c->head = j;
    c->tail = j;
    c->n++;
    q->depth++;
    q->bytes += j->bytes;
    q->st.submitted++;
}

int jobq_submit(struct jobq *q, const struct jobq_submit *s, char *id, unsigned *position, int *joined, char *err) {
    if (joined) *joined = 0;
    if (s->wait) memset(s->wait, 0, sizeof *s->wait);
    pthread_mutex_lock(&q->lock);
    if (q->closed) {
        pthread_mutex_unlock(&q->lock);
        dv_seterr(err, "jobq: the server is shutting down");
        return DV_ECLOSED;
    }
    struct job *same = s->key && !s->no_coalesce ? identical_locked(q, s->key) : NULL;
    if (same) { /* join it: one run answers both */
        memcpy(id, same->id, JOBQ_ID_LEN);
        unsigned ahead = 0;
        double secs;
        if (same->state == JOB_QUEUED) ahead_locked(q, same, &ahead, &secs);
        *position = same->state == JOB_QUEUED ? ahead + 1 : 0;
        wait_of_locked(q, same, s->wait);
        q->st.coalesced++;
        if (joined) *joined = 1;
        pthread_mutex_unlock(&q->lock);
        return 0;
    }
    struct client *c = client_find_locked(q, s->client);
    size_t bytes = jobq_submit_bytes(s);
    enum jobq_full full = over_bound_locked(q, c, s->client == NULL, bytes, s->client, err);
    if (full != JOBQ_FULL_NONE) {
        q->st.rejected++;
        if (s->wait) {
            s->wait->full = full;
            s->wait->retry_after_s = retry_after_locked(q, c);
        }
        pthread_mutex_unlock(&q->lock);
        return DV_EFULL;
    }
    struct job *j = job_make_locked(q, s, bytes);
    if (!j || (!c && !(c = client_add_locked(q, s->client)))) {
        job_free(j);
        pthread_mutex_unlock(&q->lock);
        dv_seterr(err, "jobq: out of memory or no randomness for a job id");
        return -1;
    }
    enqueue_locked(q, c, j);
    memcpy(id, j->id, JOBQ_ID_LEN);
    unsigned ahead;
    double secs;
    ahead_locked(q, j, &ahead, &secs);
    *position = ahead + 1;
    wait_of_locked(q, j, s->wait);
    pthread_cond_signal(&q->cond);
    /* A job of a client with several waiting goes in their round, ahead of
     * the later rounds of others: those moved back. (A job last in the
     * order moves no one, and no one can watch this one before its id is out.) */
    if (*position < q->depth) notify_positions_locked(q);
    pthread_mutex_unlock(&q->lock);
    return 0;
}

int jobq_cache_lookup(struct jobq *q, const char *key, char **document, double *age_s, char *id) {
    int hit = 0;
    *document = NULL;
    pthread_mutex_lock(&q->lock);
    double now = (timeutil_now_ms() / 1e3);
    for (struct cache_entry *c = q->cache; c; c = c->next) {
        if (strcmp(c->key, key) != 0) continue;
        if (now - c->when <= q->ttl_s && (*document = strdup(c->document))) {
            *age_s = now - c->when;
            memcpy(id, c->id, JOBQ_ID_LEN);
            q->st.cache_hits++;
            hit = 1;
        }
        break;
    }
    pthread_mutex_unlock(&q->lock);
    return hit;
}

static struct job *find_locked(struct jobq *q, const char *id) {
    for (struct job *r = q->running; r; r = r->next)
        if (strcmp(r->id, id) == 0) return r;
    struct client *c = q->turn;
    for (unsigned i = 0; i < q->nclients; i++, c = c->next)
        for (struct job *j = c->head; j; j = j->next)
            if (strcmp(j->id, id) == 0) return j;
    for (struct job *j = q->finished; j; j = j->next)
        if (strcmp(j->id, id) == 0) return j;
    return NULL;
}

/* The done job a cache entry was made from, as jobq_status() shows it. */
static void fill_cached_view(const struct cache_entry *c, struct job_view *v) {
    memset(v, 0, sizeof *v);
    memcpy(v->id, c->id, JOBQ_ID_LEN);
    v->state = JOB_DONE;
    v->document = strdup(c->document);
    v->gpu_time_ms = c->gpu_time_ms;
    snprintf(v->tag, sizeof v->tag, "%s", c->tag);
    v->created = c->created;
    v->started = c->started;
    v->finished = c->finished;
}

int jobq_status(struct jobq *q, const char *id, struct job_view *v) {
    pthread_mutex_lock(&q->lock);
    int found = 0;
    struct job *j = find_locked(q, id);
    if (j) {
        fill_view(q, j, v, 1);
        found = 1;
    } else {
        /* Evicted, but its result still answers identical requests (which
         * name this id): it still answers here. */
        for (const struct cache_entry *c = q->cache; c && !found; c = c->next)
            if (strcmp(c->id, id) == 0) {
                fill_cached_view(c, v);
                found = 1;
            }
        if (!found) memset(v, 0, sizeof *v); /* a miss leaves nothing a caller could free twice */
    }
    pthread_mutex_unlock(&q->lock);
    return found ? 0 : -1;
}

/* ---- batches: the jobs that start together ------------------------------ */

/* The first `max` waiting jobs in the order they would start (rounds of
 * the ring from the turn: every client's first job, then every second...)
 * into out[]; returns how many. */
static unsigned start_order_locked(const struct jobq *q, struct job **out, unsigned max) {
    unsigned n = 0;
    for (unsigned k = 0, found = 1; n < max && found; k++) {
        found = 0;
        const struct client *c = q->turn;
        for (unsigned i = 0; i < q->nclients && n < max; i++, c = c->next) {
            struct job *x = c->head;
            for (unsigned t = 0; t < k && x; t++) x = x->next;
            if (!x) continue;
            out[n++] = x;
            found = 1;
        }
    }
    return n;
}

/* A batch's rows so far: the distinct row lines of options_batch_key()'s
 * text (each `len` bytes at `at`). */
struct batch_rows {
    const char *at[JOBQ_BATCH_MAX_ROWS];
    size_t len[JOBQ_BATCH_MAX_ROWS];
    unsigned n;
};

/* The length of the key line of batch text `b`. */
static size_t key_len(const char *b) {
    const char *nl = strchr(b, '\n');
    return nl ? (size_t)(nl - b) : strlen(b);
}

/* Adds the rows of batch text `b` to `r` when the rows then number at most
 * `max`; returns 1 when added, 0 (r unchanged) when not. */
static int rows_add(struct batch_rows *r, const char *b, unsigned max) {
    struct batch_rows t = *r;
    for (const char *p = strchr(b, '\n'); p; p = strchr(p, '\n')) {
        p++;
        const size_t len = strchr(p, '\n') ? (size_t)(strchr(p, '\n') - p) : strlen(p);
        int seen = 0;
        for (unsigned i = 0; i < t.n && !seen; i++) seen = t.len[i] == len && memcmp(t.at[i], p, len) == 0;
        if (seen) continue;
        if (t.n >= max || t.n >= JOBQ_BATCH_MAX_ROWS) return 0;
        t.at[t.n] = p;
        t.len[t.n++] = len;
    }
    *r = t;
    return 1;
}

/* Takes waiting job `j` (not its client's head, or its head when `head`
 * passes the turn on as take_next_locked() does) off the queue. */
static void take_locked(struct jobq *q, struct job *j) {
    struct client *c = j->src;
    if (c->head == j) {
        if (c == q->turn) {
            take_next_locked(q);
            return;
        }
        c->head = j->next;
    } else {
        struct job *p = c->head;
        while (p->next != j) p = p->next;
        p->next = j->next;
        if (c->tail == j) c->tail = p;
    }
    if (!c->head) c->tail = NULL;
    c->n--;
    if (c->n == 0) client_remove_locked(q, c);
    q->depth--;
    q->bytes -= j->bytes;
    j->src = NULL;
    j->next = NULL;
}

/* The next job and its batch into jobs[0..), as jobq_pop_batch() says;
 * returns how many. The queue must not be empty. */
static unsigned pick_batch_locked(struct jobq *q, unsigned max_jobs, unsigned max_rows, struct job **jobs) {
    struct job *order[JOBQ_BATCH_MAX_JOBS];
    if (max_jobs < 1) max_jobs = 1;
    if (max_jobs > JOBQ_BATCH_MAX_JOBS) max_jobs = JOBQ_BATCH_MAX_JOBS;
    const unsigned seen = start_order_locked(q, order, max_jobs);
    unsigned n = 0;
    jobs[n++] = order[0];
    struct batch_rows rows = {.n = 0};
    const char *b0 = order[0]->batch;
    if (b0 && rows_add(&rows, b0, max_rows)) {
        for (unsigned i = 1; i < seen; i++) {
            const char *b = order[i]->batch;
            if (b && key_len(b) == key_len(b0) && memcmp(b, b0, key_len(b0)) == 0 && rows_add(&rows, b, max_rows))
                jobs[n++] = order[i];
        }
    }
    for (unsigned i = 0; i < n; i++) take_locked(q, jobs[i]);
    return n;
}

/* 1 when waiting job `j` and job `like` carry batch texts of one key line. */
static int same_key(const struct job *j, const struct job *like) {
    return j && j->batch && like->batch && key_len(j->batch) == key_len(like->batch) &&
           memcmp(j->batch, like->batch, key_len(like->batch)) == 0;
}

/* jobq_pop_batch(), and with `like` jobq_pop_batch_like(). */
static int pop_batch(struct jobq *q, int timeout_ms, const struct job *like, unsigned max_jobs, unsigned max_rows,
                     struct job **jobs, unsigned *n) {
    struct timespec until = timeutil_deadline(timeout_ms >= 0 ? (double)timeout_ms : 0.0);
    *n = 0;
    pthread_mutex_lock(&q->lock);
    while (!q->closed && !q->turn) {
        if (timeout_ms < 0) {
            pthread_cond_wait(&q->cond, &q->lock);
        } else if (pthread_cond_timedwait(&q->cond, &q->lock, &until) == ETIMEDOUT) {
            break;
        }
    }
    int rc = q->closed ? -1 : q->turn && (!like || same_key(q->turn->head, like)) ? 1 : 0;
    struct job_view v[JOBQ_BATCH_MAX_JOBS];
    jobq_done_fn cb[JOBQ_BATCH_MAX_JOBS];
    void *ctx[JOBQ_BATCH_MAX_JOBS];
    if (rc == 1) {
        *n = pick_batch_locked(q, max_jobs, max_rows, jobs);
        const double wall = timeutil_wall_s(), mono = timeutil_now_ms();
        for (unsigned i = *n; i-- > 0;) { /* the first ends up first in the running list */
            struct job *j = jobs[i];
            j->state = JOB_RUNNING;
            j->started = wall;
            j->started_ms = mono;
            j->batch_n = *n;
            j->next = q->running;
            q->running = j;
            q->nrunning++;
        }
        for (unsigned i = 0; i < *n; i++) {
            notify_job_locked(jobs[i]); /* it runs */
            cb[i] = jobs[i]->on_start;
            ctx[i] = jobs[i]->on_done_ctx;
            if (cb[i]) fill_view(q, jobs[i], &v[i], 0);
        }
        notify_positions_locked(q); /* and every job behind them moved up */
    }
    pthread_mutex_unlock(&q->lock);
    for (unsigned i = 0; i < *n; i++)
        if (cb[i]) cb[i](&v[i], ctx[i]);
    return rc;
}

int jobq_pop_batch(struct jobq *q, int timeout_ms, unsigned max_jobs, unsigned max_rows, struct job **jobs,
                   unsigned *n) {
    return pop_batch(q, timeout_ms, NULL, max_jobs, max_rows, jobs, n);
}

int jobq_pop_batch_like(struct jobq *q, const struct job *like, unsigned max_jobs, unsigned max_rows,
                        struct job **jobs, unsigned *n) {
    return pop_batch(q, 0, like, max_jobs, max_rows, jobs, n);
}

int jobq_pop(struct jobq *q, int timeout_ms, struct job **job) {
    unsigned n = 0;
    const int rc = jobq_pop_batch(q, timeout_ms, 1, 0, job, &n);
    if (rc != 1) *job = NULL;
    return rc;
}

const char *jobq_job_request(const struct job *j) { return j->request; }
unsigned jobq_job_batch_n(const struct job *j) { return j->batch_n; }
const char *jobq_job_id(const struct job *j) { return j->id; }
unsigned jobq_job_deadline_ms(const struct job *j) { return j->deadline_ms; }

/* Moves `j` (already unlinked) to the finished list and trims it and the
 * cache. Returns the evicted jobs as a list to free outside the lock. */
static struct job *retire_locked(struct jobq *q, struct job *j) {
    j->next = q->finished;
    q->finished = j;
    q->nfinished++;
    struct job *evicted = NULL;
    if (q->nfinished > q->keep) {
        struct job **pp = &q->finished;
        for (unsigned i = 0; i < q->keep && *pp; i++) pp = &(*pp)->next;
        evicted = *pp;
        *pp = NULL;
        q->nfinished = q->keep;
    }
    return evicted;
}

static void cache_put_locked(struct jobq *q, const char *key, const char *document, const struct job *j) {
    struct cache_entry **pp = &q->cache;
    while (*pp) { /* one entry per key: drop the older one */
        if (strcmp((*pp)->key, key) == 0) {
            struct cache_entry *old = *pp;
            *pp = old->next;
            cache_entry_free(old);
            q->ncache--;
            break;
        }
        pp = &(*pp)->next;
    }
    struct cache_entry *c = calloc(1, sizeof *c);
    if (!c || !(c->key = strdup(key)) || !(c->document = strdup(document))) {
        cache_entry_free(c);
        return; /* a missed cache entry only costs a re-run */
    }
    c->when = (timeutil_now_ms() / 1e3);
    memcpy(c->id, j->id, JOBQ_ID_LEN);
    c->gpu_time_ms = j->gpu_time_ms;
    c->created = j->created;
    c->started = j->started;
    c->finished = j->finished;
    snprintf(c->tag, sizeof c->tag, "%s", j->tag);
    c->next = q->cache;
    q->cache = c;
    if (++q->ncache > q->keep) {
        pp = &q->cache;
        for (unsigned i = 0; i < q->keep && *pp; i++) pp = &(*pp)->next;
        struct cache_entry *e = *pp, *n;
        *pp = NULL;
        for (; e; e = n) { n = e->next; cache_entry_free(e); q->ncache--; }
    }
}

static void free_list(struct job *j) {
    struct job *n;
    for (; j; j = n) { n = j->next; job_free(j); }
}

/* Marks `j` (unlinked from the queue or running) ended and moves it to the
 * finished list. `*ok`, `*kind` and `*error` are updated when the outcome
 * changes (a result that cannot be stored fails the job). Fills the callback
 * to make once unlocked (`*cb` NULL when none) and returns the jobs evicted
 * to make room, to free unlocked. */
static struct job *finish_locked(struct jobq *q, struct job *j, int *okp, const char *document,
                                 double gpu_time_ms, int code, const char **kindp, const char **errorp,
                                 jobq_done_fn *cb, void **ctx, struct job_view *v) {
    for (struct job **pp = &q->running; *pp; pp = &(*pp)->next)
        if (*pp == j) {
            *pp = j->next;
            j->next = NULL;
            q->nrunning--;
            break;
        }
    free(j->document);
    j->document = document ? strdup(document) : NULL;
    if (document && !j->document && *okp) {
        /* "done" without its document would read as a result with none. */
        *okp = 0;
        code = DV_ERR;
        *kindp = "error";
        *errorp = "jobq: out of memory storing the result";
    }
    int ok = *okp;
    const char *kind = *kindp, *error = *errorp;
    j->state = ok ? JOB_DONE : JOB_FAILED;
    j->finished = timeutil_wall_s();
    j->gpu_time_ms = gpu_time_ms;
    j->code = ok ? 0 : code;
    snprintf(j->kind, sizeof j->kind, "%s", ok ? "" : (kind ? kind : "error"));
    snprintf(j->error, sizeof j->error, "%s", ok ? "" : (error ? error : "failed"));
    if (ok) q->st.done++; else q->st.failed++;
    if (q->observe)
        q->observe(q->observe_ctx, ok, j->started > 0 ? j->started - j->created : -1,
                   j->started > 0 ? j->finished - j->started : -1);
    if (ok && j->key && j->document) cache_put_locked(q, j->key, j->document, j);
    /* A run the worker answered with a document (done, or failed with one)
     * is a run of its kind; a deadline, a crash or a shutdown says nothing
     * of how long the next such job takes. */
    if (j->started > 0 && j->document)
        runest_add(&q->est, j->runkind, (timeutil_now_ms() - j->started_ms) / 1e3 / (j->batch_n ? j->batch_n : 1));
    *cb = j->on_done;
    *ctx = j->on_done_ctx;
    if (*cb) fill_view(q, j, v, 1); /* a copy: `j` may be evicted once unlocked */
    notify_final_locked(j);
    struct job *evicted = retire_locked(q, j);
    return evicted;
}

/* What follows finish_locked() once the lock is released. */
static void finish_unlocked(struct job *evicted, const char *id, int ok, double gpu_time_ms,
                            const char *kind, const char *error, jobq_done_fn cb, void *ctx,
                            struct job_view *v) {
    free_list(evicted);
    if (ok)
        LOG(LOG_INFO, "job %s: done (%.1f ms of GPU time)", id, gpu_time_ms);
    else
        LOG(LOG_NOTICE, "job %s: failed (%s): %s", id, kind ? kind : "error", error ? error : "failed");
    if (cb) {
        cb(v, ctx);
        free(v->document);
    }
}

void jobq_finish(struct jobq *q, struct job *j, int ok, const char *document, double gpu_time_ms,
                 int code, const char *kind, const char *error) {
    struct job_view v;
    jobq_done_fn cb;
    void *ctx;
    char id[JOBQ_ID_LEN];
    pthread_mutex_lock(&q->lock);
    memcpy(id, j->id, JOBQ_ID_LEN);
    struct job *evicted = finish_locked(q, j, &ok, document, gpu_time_ms, code, &kind, &error, &cb, &ctx, &v);
    pthread_mutex_unlock(&q->lock);
    finish_unlocked(evicted, id, ok, gpu_time_ms, kind, error, cb, ctx, &v);
}

void jobq_close(struct jobq *q, const char *reason) {
    pthread_mutex_lock(&q->lock);
    q->closed = 1;
    pthread_cond_broadcast(&q->cond);
    /* One job at a time, each moved from the queue to the finished list in
     * one step, so a reader never finds a job in neither (a 404 for a job
     * that exists) while the callbacks of the ones before it run. */
    while (q->turn) {
        struct job *j = take_next_locked(q);
        struct job_view v;
        jobq_done_fn cb;
        void *ctx;
        char id[JOBQ_ID_LEN];
        memcpy(id, j->id, JOBQ_ID_LEN);
        int ok = 0;
        const char *kind = "shutdown", *error = reason;
        struct job *evicted = finish_locked(q, j, &ok, NULL, 0, DV_ERR, &kind, &error, &cb, &ctx, &v);
        pthread_mutex_unlock(&q->lock);
        finish_unlocked(evicted, id, ok, 0, kind, error, cb, ctx, &v);
        pthread_mutex_lock(&q->lock);
    }
    pthread_mutex_unlock(&q->lock);
}

void jobq_set_observer(struct jobq *q, jobq_timing_fn fn, void *ctx) {
    pthread_mutex_lock(&q->lock);
    q->observe = fn;
    q->observe_ctx = ctx;
    pthread_mutex_unlock(&q->lock);
}

int jobq_set_id_prefix(struct jobq *q, const char *hex, char *err) {
    size_t n = strlen(hex);
    if (n > JOBQ_ID_PREFIX_MAX) {
        dv_seterr(err, "job id prefix %s: at most %d hex digits", hex, JOBQ_ID_PREFIX_MAX);
        return -1;
    }
    if (strspn(hex, "0123456789abcdef") != n) {
        dv_seterr(err, "job id prefix %s: only lowercase hex digits (0-9, a-f)", hex);
        return -1;
    }
    pthread_mutex_lock(&q->lock);
    memcpy(q->id_prefix, hex, n + 1);
    pthread_mutex_unlock(&q->lock);
    return 0;
}

void jobq_get_stats(struct jobq *q, struct jobq_stats *st) {
    pthread_mutex_lock(&q->lock);
    *st = q->st;
    st->depth = q->depth;
    st->clients = q->nclients;
    st->bytes = q->bytes;
    st->max_bytes = q->lim.max_bytes;
    st->running = q->nrunning;
    pthread_mutex_unlock(&q->lock);
}

unsigned jobq_retry_after_s(struct jobq *q, const char *client) {
    pthread_mutex_lock(&q->lock);
    unsigned s = retry_after_locked(q, client_find_locked(q, client));
    pthread_mutex_unlock(&q->lock);
    return s;
}
