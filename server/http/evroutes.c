/* evroutes.c -- the HTTP side of the evidence store and the refresh.
 *
 * A refresh puts one job per suite on the service's job queue with
 * on_start / on_done callbacks whose context (struct suite_job) carries the
 * refresh id and suite index; the job queue calls on_done exactly once, on the
 * thread that finished the job, and the context is freed there. The
 * registry writes the evidence from that call. A refresh that cannot be
 * queued whole is refused before anything is kept: 429 when the queue has no
 * room for every suite, 503 when the server is shutting down or has no GPU.
 *
 * The evidence GETs: this file turns the path into a store read (the store
 * answers bytes with their mtime and digest, or a code and a reason) and
 * does all of HTTP: the ETag (from the digest and length), Last-Modified,
 * the conditional-GET decision and the content coding (http_reply_entity),
 * Cache-Control (a night before yesterday is immutable, everything else
 * changes nightly) and the service's error shape. The store hands the latest views from memory with
 * their digest and mtime computed once; the header text made of them is
 * kept per HTTP thread, so a GET of the latest evidence formats nothing.
 *
 * "This server's GPU" is the slug of the device the worker's hello named,
 * read from the supervisor at most once a second; the single-GPU paths answer
 * for it (evidence_default_gpu says what happens when it has no evidence).
 */
#define _DEFAULT_SOURCE
#define _POSIX_C_SOURCE 200809L

#include <ctype.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "kernels/base/timeutil.h"
#include "api/jsonout.h"
#include "server/core/log.h"
#include "server/evidence/evidence.h"
#include "server/evidence/names.h"
#include "server/evidence/refresh.h"
#include "server/evidence/suites.h"
#include "server/http/evroutes.h"
#include "server/http/ratelimit.h"

#define CT_JSON "application/json"
#define CT_TEXT "text/plain; charset=utf-8"
#define CT_SVG "image/svg+xml"
#define CT_MD "text/markdown; charset=utf-8"
#define CT_CSV "text/csv; charset=utf-8; header=present"

static const char *content_type(enum evidence_kind kind) {
    switch (kind) {
    case EVIDENCE_TEXT: return CT_TEXT;
    case EVIDENCE_SVG: return CT_SVG;
    case EVIDENCE_MD: return CT_MD;
    case EVIDENCE_CSV: return CT_CSV;
    default: return CT_JSON;
    }
}
#define OWN_RECHECK_MS 1000
#define REFRESH_HELLO_WAIT_MS 10000

struct evroutes {
    struct service *s;
    struct evidence *ev;
    struct refresh *reg;
    struct ratelimit *history_rl; /* history pages per address (--history-rate-limit) */
    pthread_mutex_t own_lock;
    char own_slug[EVIDENCE_SLUG_LEN]; /* "" while unknown */
    char own_name[128];
    double own_next_ms;
};

struct suite_job {
    struct refresh *reg;
    char rid[REFRESH_ID_LEN];
    size_t index;
};

/* ---- HTTP caching --------------------------------------------------------- */

void evroutes_etag(uint64_t digest, size_t len, char *out) {
    snprintf(out, EVROUTES_ETAG_LEN, "\"%016llx-%zx\"", (unsigned long long)digest, len);
}

/* The header text of a blob's validators, a function of (digest, length,
 * mtime) alone: formatted once per thread for the few blobs it keeps
 * answering (the latest views), not on every request. */
struct validators {
    uint64_t digest;
    size_t len;
    time_t mtime;
    char etag[EVROUTES_ETAG_LEN];
    char lm[40];
};
#define VALIDATORS_KEPT 8
static _Thread_local struct validators tl_validators[VALIDATORS_KEPT];
static _Thread_local unsigned tl_validators_next;

static const struct validators *validators_of(const struct blob *b) {
    for (unsigned i = 0; i < VALIDATORS_KEPT; i++) {
        const struct validators *v = &tl_validators[i];
        if (v->etag[0] && v->digest == b->digest && v->len == b->len && v->mtime == b->mtime) return v;
    }
    struct validators *v = &tl_validators[tl_validators_next++ % VALIDATORS_KEPT];
    v->digest = b->digest;
    v->len = b->len;
    v->mtime = b->mtime;
    v->lm[0] = '\0';
    if (b->mtime != (time_t)-1) timeutil_http_date(b->mtime, v->lm, sizeof v->lm);
    evroutes_etag(b->digest, b->len, v->etag);
    return v;
}

/* Answers a store read: 200 or 304 with the validators, or the error. */
static void reply_blob(struct http_req *r, int rc, struct blob *b, const struct evidence_error *e) {
    if (rc != 0) {
        int status = e->code == EVIDENCE_EINVAL ? 400 : e->code == EVIDENCE_ENOENT ? 404 : 500;
        http_req_add_header(r, "Cache-Control", status == 404 ? EVROUTES_CACHE_MISSING : "no-store");
        http_reply_error(r, status, NULL, "%s", e->reason[0] ? e->reason : "evidence error");
        return;
    }
    const struct validators *v = validators_of(b);
    if (v->lm[0]) http_req_add_header(r, "Last-Modified", v->lm);
    http_req_add_header(r, "Cache-Control",
                        b->fresh == EVIDENCE_FINAL ? EVROUTES_CACHE_IMMUTABLE : EVROUTES_CACHE_LATEST);
    /* A chart has no script, and a browser that opens it as a document runs
     * none and loads nothing (every response is nosniff already: http.c). */
    if (b->kind == EVIDENCE_SVG)
        http_req_add_header(r, "Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'");
    /* The ETag is the bytes' digest and length: it names them exactly, so
     * it is the key of their kept gzip form too. */
    const struct http_entity ent = {.content_type = content_type(b->kind),
                                    .body = b->data,
                                    .len = b->len,
                                    .etag = v->etag,
                                    .last_modified = b->mtime};
    http_reply_entity(r, &ent);
    blob_release(b);
}

/* ---- this server's GPU ---------------------------------------------------- */

/* The slug and name of the device in a hello's device object; "" when it
 * reports none. Returns 1 when the object said, 0 when there was none. */
static int device_slug(const char *device_json, char *slug, char *name, size_t name_len) {
    slug[0] = name[0] = '\0';
    if (!device_json) return 0;
    json_t *d = jsonout_loads(device_json, 0, NULL);
    if (!d) return 0;
    const char *n = json_string_value(json_object_get(d, "name"));
    if (json_is_true(json_object_get(d, "present")) && n && names_slug(n, slug, EVIDENCE_SLUG_LEN) == 0 &&
        names_valid_slug(slug))
        snprintf(name, name_len, "%s", n);
    else slug[0] = '\0';
    json_decref(d);
    return 1;
}

static void own_gpu(struct evroutes *e, char *slug, char *name, size_t name_len) {
    double now = timeutil_now_ms();
    pthread_mutex_lock(&e->own_lock);
    int due = now >= e->own_next_ms;
    if (due) e->own_next_ms = now + OWN_RECHECK_MS;
    else {
        /* The common case: one lock, no call into the supervisor. */
        snprintf(slug, EVIDENCE_SLUG_LEN, "%s", e->own_slug);
        if (name) snprintf(name, name_len, "%s", e->own_name);
    }
    pthread_mutex_unlock(&e->own_lock);
    if (!due) return;
    struct worker_snapshot ws;
    char s2[EVIDENCE_SLUG_LEN], n2[128];
    int said = 0;
    if (e->s->w) {
        worker_get_snapshot(e->s->w, &ws);
        said = device_slug(ws.device_json, s2, n2, sizeof n2);
        free(ws.device_json);
    }
    pthread_mutex_lock(&e->own_lock);
    if (said) { /* a restarting worker has said nothing: keep the last */
        memcpy(e->own_slug, s2, sizeof e->own_slug);
        memcpy(e->own_name, n2, sizeof e->own_name);
    }
    snprintf(slug, EVIDENCE_SLUG_LEN, "%s", e->own_slug);
    if (name) snprintf(name, name_len, "%s", e->own_name);
    pthread_mutex_unlock(&e->own_lock);
}

/* ---- the refresh ---------------------------------------------------------- */

static void job_started(const struct job_view *v, void *ctx) {
    (void)v;
    struct suite_job *j = ctx;
    refresh_job_started(j->reg, j->rid, j->index);
}

static void job_done(const struct job_view *v, void *ctx) {
    struct suite_job *j = ctx;
    const char *why = v->error[0] ? v->error : (v->kind[0] ? v->kind : "the job failed");
    refresh_job_done(j->reg, j->rid, j->index, v->state == JOB_DONE, v->document, why);
    free(j);
}

static int enqueue(void *ctx, const char *rid, size_t index, const struct dv_options *o, const char *request_json,
                   char *job_id, char *err) {
    (void)o;
    struct evroutes *e = ctx;
    struct suite_job *j = calloc(1, sizeof *j);
    if (!j) {
        dv_seterr(err, "out of memory");
        return -1;
    }
    j->reg = e->reg;
    snprintf(j->rid, sizeof j->rid, "%s", rid);
    j->index = index;
    struct jobq_submit sub = {
        .request = request_json,
        .key = NULL, /* evidence is always measured afresh */
        .deadline_ms = e->s->cfg.deadline_ms,
        .tag = suites_get(index)->name,
        .on_done = job_done,
        .on_done_ctx = j,
        .on_start = job_started,
        .no_coalesce = 1,
    };
    char id[JOBQ_ID_LEN], why[ERR_LEN] = "";
    unsigned pos = 0;
    int rc = jobq_submit(e->s->q, &sub, id, &pos, NULL, why);
    if (rc != 0) {
        free(j);
        dv_seterr(err, "%s",
                  rc == DV_EFULL     ? "the job queue is full"
                  : rc == DV_ECLOSED ? "the server is shutting down"
                                     : (why[0] ? why : "the job queue refused it"));
        return rc == DV_EFULL || rc == DV_ECLOSED ? rc : -1;
    }
    snprintf(job_id, REFRESH_JOB_ID_LEN, "%s", id);
    return 0;
}

static int room(void *ctx, size_t need, char *err) {
    struct evroutes *e = ctx;
    struct jobq_stats st;
    jobq_get_stats(e->s->q, &st);
    if (e->s->stopping) {
        dv_seterr(err, "the server is shutting down");
        return DV_ECLOSED;
    }
    if (st.depth + need > st.capacity) {
        dv_seterr(err, "the job queue has room for %u of the %zu jobs a refresh needs (%u waiting)",
                  st.capacity > st.depth ? st.capacity - st.depth : 0, need, st.depth);
        return DV_EFULL;
    }
    return 0;
}

static void suites_get_route(struct http_req *r, void *ctx) {
    (void)ctx;
    char err[ERR_LEN];
    char *body = suites_json(err);
    if (!body) {
        http_reply_error(r, 500, NULL, "%s", err);
        return;
    }
    http_req_add_header(r, "Cache-Control", "public, max-age=300");
    http_reply_take(r, 200, "application/json", body);
}

static void refresh_post(struct http_req *r, void *ctx) {
    struct evroutes *e = ctx;
    char id[REFRESH_ID_LEN], err[ERR_LEN] = "";
    int joined = 0;
    if (e->s->stopping) {
        http_reply_error(r, 503, NULL, "the server is shutting down");
        return;
    }
    /* No GPU, nothing to measure: refused before anything is kept, as
     * POST /measure is (a worker that had a GPU may be restarting). */
    struct worker_snapshot ws;
    worker_get_snapshot(e->s->w, &ws);
    if (ws.state == WORKER_STARTING && !ws.gpu_seen) {
        /* A server that has just started (a missed nightly run caught up at
         * boot) has not heard its worker yet: a refresh, rare and rate
         * limited, may wait for the hello a moment rather than be lost. */
        free(ws.device_json);
        worker_wait_ready(e->s->w, REFRESH_HELLO_WAIT_MS);
        worker_get_snapshot(e->s->w, &ws);
    }
    char slug[EVIDENCE_SLUG_LEN], name[128];
    device_slug(ws.device_json, slug, name, sizeof name);
    free(ws.device_json);
    if (!slug[0]) own_gpu(e, slug, name, sizeof name);
    if ((!ws.gpu_present && !(ws.gpu_seen && ws.state != WORKER_STOPPED)) || !slug[0]) {
        if (ws.state != WORKER_READY) http_req_add_header(r, "Retry-After", "5");
        http_reply_error(r, 503, NULL, "no GPU to refresh the evidence on: the GPU worker is %s%s%s",
                         worker_state_name(ws.state), ws.reason[0] ? ": " : "", ws.reason);
        return;
    }
    int rc = refresh_start(e->reg, slug, name, id, &joined, err);
    if (rc == DV_EFULL) {
        double per_job = ws.jobs ? ws.busy_s / (double)ws.jobs : 5.0;
        unsigned retry = (unsigned)ceil((per_job > 1 ? per_job : 1) * (double)suites_count());
        char ra[16];
        snprintf(ra, sizeof ra, "%u", retry);
        http_req_add_header(r, "Retry-After", ra);
        json_t *x = json_object();
        int bad = 0;
        jsonout_put(x, "retry_after_s", json_integer(retry), &bad);
        http_reply_error_ex(r, 429, NULL, x, bad, "refresh not started: %s; retry in %u s", err, retry);
        return;
    }
    if (rc == DV_ECLOSED) {
        http_reply_error(r, 503, NULL, "refresh not started: %s", err);
        return;
    }
    if (rc != 0) {
        http_reply_error(r, 500, NULL, "%s", err);
        return;
    }
    LOG(LOG_NOTICE, "refresh %s (%s): %s", id, slug, joined ? "joined the refresh in progress" : "started");
    char *body = refresh_status_json(e->reg, id, NULL);
    if (!body) {
        http_reply_error(r, 500, NULL, "refresh %s: out of memory", id);
        return;
    }
    char loc[64];
    snprintf(loc, sizeof loc, "/evidence/refresh/%s", id);
    http_req_add_header(r, "Location", loc);
    http_req_add_header(r, "Cache-Control", "no-store");
    http_reply_take(r, 202, "application/json", body);
}

static void refresh_get(struct http_req *r, void *ctx) {
    struct evroutes *e = ctx;
    const char *id = http_req_tail(r);
    int found = 0;
    char *body = strlen(id) < REFRESH_ID_LEN ? refresh_status_json(e->reg, id, &found) : NULL;
    if (!body && found) {
        http_reply_error(r, 500, NULL, "refresh %s: out of memory", id);
        return;
    }
    if (!body) {
        http_reply_error(r, 404, NULL, "no refresh %.40s (finished refreshes are kept for a while)", id);
        return;
    }
    http_req_add_header(r, "Cache-Control", "no-store");
    http_reply_take(r, 200, "application/json", body);
}

/* ---- the evidence GETs ---------------------------------------------------- */

/* "<suite>[.json|.full.json|.txt|.svg|.md|.csv]" into `name`
 * (SUITES_NAME_LEN) and its kind: the slim record without an extension and
 * with .json (what a page loads first), the record as filed with .full.json. */
static void suite_of(const char *seg, char *name, enum evidence_kind *kind) {
    static const struct {
        const char *ext;
        enum evidence_kind kind;
    } exts[] = {{".full.json", EVIDENCE_JSON},
                {".json", EVIDENCE_SLIM},
                {".txt", EVIDENCE_TEXT},
                {".svg", EVIDENCE_SVG},
                {".md", EVIDENCE_MD},
                {".csv", EVIDENCE_CSV}};
    size_t n = strlen(seg);
    *kind = EVIDENCE_SLIM;
    for (size_t i = 0; i < sizeof exts / sizeof exts[0]; i++) {
        size_t e = strlen(exts[i].ext);
        if (n > e && strcmp(seg + n - e, exts[i].ext) == 0) {
            n -= e;
            *kind = exts[i].kind;
            break;
        }
    }
    if (n >= SUITES_NAME_LEN) n = 0; /* no suite is that long: unknown */
    memcpy(name, seg, n);
    name[n] = '\0';
}

/* The history's query: limit (1..EVIDENCE_HISTORY_MAX, written as a
 * number is, no leading zero) and cursor (a date), each at most once, and
 * nothing else: one page has one spelling, so a cache in front keeps it
 * once (deploy/nginx keys the history by these two). Answers 400 naming the
 * parameter and returns -1 otherwise. */
static int history_query(struct http_req *r, unsigned *limit, const char **cursor) {
    static const char *const known[] = {"limit", "cursor", NULL};
    char name[48];
    int bad = http_req_query_check(r, known, name, sizeof name);
    if (bad) {
        http_reply_error(r, 400, name, "%s: %s (the history takes limit and cursor, each once)", name,
                         bad == 2 ? "given twice" : "not a parameter of the history");
        return -1;
    }
    const char *l = http_req_query(r, "limit");
    *cursor = http_req_query(r, "cursor");
    *limit = EVIDENCE_HISTORY_DEFAULT;
    if (l) {
        size_t n = strlen(l);
        if (n == 0 || n > 3 || l[0] == '0' || strspn(l, "0123456789") != n || atoi(l) > EVIDENCE_HISTORY_MAX) {
            http_reply_error(r, 400, "limit", "limit: expected a whole number of nights in 1..%d, got %.16s",
                             EVIDENCE_HISTORY_MAX, l);
            return -1;
        }
        *limit = (unsigned)atoi(l);
    }
    if (*cursor && !names_valid_date(*cursor)) {
        http_reply_error(r, 400, "cursor", "cursor: expected a date YYYY-MM-DD (a page's next_cursor), got %.32s",
                         *cursor);
        return -1;
    }
    return 0;
}

static void evidence_get(struct http_req *r, void *ctx) {
    struct evroutes *e = ctx;
    static const char prefix[] = "/evidence/";
    const char *path = http_req_path(r);
    /* Up to three segments, or six for a row's listing
     * ({gpu}/{date}/{suite}/rows/{row}/instructions.json); empty segments
     * (//, trailing /) are not paths. */
    char buf[256], *seg[7] = {0};
    size_t nseg = 0;
    const char *rest = path + sizeof prefix - 1;
    if (strncmp(path, prefix, sizeof prefix - 1) != 0 || strlen(rest) >= sizeof buf) goto not_found;
    strcpy(buf, rest);
    for (char *p = buf, *next; p; p = next) {
        next = strchr(p, '/');
        if (next) *next++ = '\0';
        if (!*p || nseg == 6) goto not_found;
        seg[nseg++] = p;
    }
    char own[EVIDENCE_SLUG_LEN], name[SUITES_NAME_LEN];
    own_gpu(e, own, NULL, 0);
    struct blob *b = NULL;
    struct evidence_error err = {0};
    enum evidence_kind kind;
    unsigned limit;
    const char *cursor, *gpu = NULL;
    int rc;
    if (nseg == 6 && strcmp(seg[3], "rows") == 0 && strcmp(seg[5], "instructions.json") == 0 &&
        names_valid_slug(seg[0])) {
        rc = evidence_get_listing(e->ev, seg[0], own, seg[1], seg[2], seg[4], &b, &err);
        reply_blob(r, rc, b, &err);
        return;
    }
    if (nseg > 3) goto not_found;
    if (nseg == 3) { /* /evidence/{gpu}/... */
        if (!names_valid_slug(seg[0])) goto not_found;
        gpu = seg[0];
        seg[0] = seg[1];
        seg[1] = seg[2];
        nseg = 2;
    } else if (nseg == 2 && strcmp(seg[1], "latest") == 0 && !names_valid_date(seg[0])) {
        if (!names_valid_slug(seg[0])) goto not_found;
        rc = evidence_get_gpu_index(e->ev, seg[0], &b, &err);
        reply_blob(r, rc, b, &err);
        return;
    }
    if (nseg == 1 && strcmp(seg[0], "latest") == 0) {
        rc = evidence_get_index(e->ev, own, &b, &err);
    } else if (nseg == 2 && strcmp(seg[0], "latest") == 0) {
        suite_of(seg[1], name, &kind);
        rc = evidence_get_latest(e->ev, gpu, own, name, kind, &b, &err);
    } else if (nseg == 2 && strcmp(seg[0], "history") == 0) {
        if (history_query(r, &limit, &cursor) != 0 ||
            !http_req_take_rate(r, e->history_rl, e->s->cfg.history_rate_per_min, "history pages"))
            return;
        rc = evidence_get_history(e->ev, gpu, own, seg[1], limit, cursor, &b, &err);
    } else if (nseg == 2) {
        suite_of(seg[1], name, &kind);
        rc = evidence_get_night(e->ev, gpu, own, seg[0], name, kind, &b, &err);
    } else {
        goto not_found;
    }
    reply_blob(r, rc, b, &err);
    return;
not_found:
    http_req_add_header(r, "Cache-Control", EVROUTES_CACHE_MISSING);
    http_reply_error(r, 404, NULL, "not found");
}

struct evroutes *evroutes_create(struct service *s, char *err) {
    struct evroutes *e = calloc(1, sizeof *e);
    if (!e) {
        dv_seterr(err, "evidence: out of memory");
        return NULL;
    }
    e->s = s;
    pthread_mutex_init(&e->own_lock, NULL);
    if (!(e->history_rl = ratelimit_create(s->cfg.history_rate_per_min, s->cfg.http.rate_table))) {
        dv_seterr(err, "evidence: out of memory");
        goto fail;
    }
    if (!(e->ev = evidence_open(s->cfg.evidence_dir, err))) goto fail;
    struct refresh_queue q = {.enqueue = enqueue, .ctx = e, .room = room};
    if (!(e->reg = refresh_create(e->ev, &q, err))) goto fail;
    struct http *h = s->http;
    if (http_route_add(h, "GET", "/suites", "/suites", 0, suites_get_route, e, err) < 0 ||
        http_route_add(h, "POST", "/evidence/refresh", "/evidence/refresh", HTTP_ROUTE_AUTH | HTTP_ROUTE_RATELIMIT,
                       refresh_post, e, err) < 0 ||
        http_route_add(h, "GET", "/evidence/refresh/", "/evidence/refresh/{id}", HTTP_ROUTE_PREFIX, refresh_get, e,
                       err) < 0 ||
        http_route_add(h, "GET", "/evidence/", "/evidence/{path}", HTTP_ROUTE_PREFIX, evidence_get, e, err) < 0)
        goto fail;
    LOG(LOG_INFO, "evidence: store in %s", evidence_root(e->ev));
    return e;
fail:
    evroutes_free(e);
    return NULL;
}

char *evroutes_index_json(void *ctx) {
    struct evroutes *e = ctx;
    char own[EVIDENCE_SLUG_LEN];
    struct blob *b = NULL;
    struct evidence_error err = {0};
    char *text = NULL;
    own_gpu(e, own, NULL, 0);
    if (evidence_get_index(e->ev, own, &b, &err) == 0 && (text = malloc(b->len + 1))) {
        memcpy(text, b->data, b->len);
        text[b->len] = '\0';
    }
    blob_release(b);
    return text;
}

void evroutes_drain(struct evroutes *e) {
    if (e) refresh_drain(e->reg);
}

void evroutes_free(struct evroutes *e) {
    if (!e) return;
    refresh_free(e->reg);
    evidence_close(e->ev);
    ratelimit_free(e->history_rl);
    pthread_mutex_destroy(&e->own_lock);
    free(e);
}
