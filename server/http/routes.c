/* routes.c -- the service's core routes (see service.h and http.h).
 *
 * POST /analyze and POST /measure share one validation: request_parse, the
 * per-request analysis cost cap (routes_analysis_cost) on the HTTP thread,
 * then the whole analysis (plan_report) on the HTTP layer's CPU pool
 * with the connection suspended. Whatever the analysis rejects, both routes
 * answer with the same 400 and the same field, so /measure never answers
 * 202 to a job the worker would fail. /measure then checks its GPU limits,
 * answers an identical recent request from the result cache, and otherwise
 * queues a job and answers 202 with where to wait.
 *
 * GET /jobs/{id}?wait=S holds the request (suspended: no HTTP thread is
 * held) until the job finishes or S seconds pass; with Accept:
 * text/event-stream it streams `queued` (with position), `running` and
 * `done`/`failed` events. Both are woken by the watchers of their own job
 * (jobq_watch; a stream's also when its place in the queue moves) and read
 * the state afresh each time. Both are held requests (http.h): released to
 * make room, a long-poll answers the job's current document and a stream
 * sends its current state's event and ends; the client asks again.
 *
 * Every JSON document is built with jsonout_put() (server/core/jsonout.h),
 * which remembers any allocation failure: a document that could not be
 * built whole is answered 500 "out of memory", never sent with members
 * missing.
 */
#define _GNU_SOURCE
#include "kernels/base/fnv.h"
#include "kernels/base/timeutil.h"
#include "kernels/base/buildinfo.h"
#include "server/http/evroutes.h"
#include "server/http/service.h"
#include "api/jsonout.h"
#include "server/core/log.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "api/options.h"
#include "kernels/model/model/predicate.h"
#include "kernels/model/model/scenario.h"
#include "kernels/model/model/plan.h"
#include "api/report.h"
#include "api/request.h"

#define KEY_LEN 12288
#define WAIT_MAX_S 30
#define ROUTES_INLINE_COST 16384.0
#define SSE_IDLE_MS 15000

/* An estimate in seconds, rounded up to the millisecond: never sooner than said. */
static double secs_up(double s) { return s > 0 ? ceil(s * 1000) / 1000 : 0; }

/* Replies `o` (stolen) unless building it failed. */
static void reply_built(struct http_req *r, int status, json_t *o, int bad) {
    if (bad || !o) {
        json_decref(o);
        http_reply_error(r, 500, NULL, "out of memory");
        return;
    }
    http_reply_json(r, status, o);
}

/* 400 for a request_parse() failure, with the position details it has. */
static void reply_request_error(struct http_req *r, const struct request_error *e) {
    json_t *x = json_object();
    int bad = 0;
    if (e->line > 0) {
        jsonout_put(x, "line", json_integer(e->line), &bad);
        jsonout_put(x, "column", json_integer(e->column), &bad);
    }
    if (e->expr_column > 0) jsonout_put(x, "expr_column", json_integer(e->expr_column), &bad);
    if (e->caret[0]) jsonout_put(x, "caret", jsonout_str(e->caret), &bad);
    http_reply_error_ex(r, e->status >= 400 && e->status < 600 ? e->status : 400, e->field, x, bad, "%s", e->reason);
}

/* Parses and validates a measure/analyze body into `o`. Returns 0, or -1
 * after answering. */
static int parse_body(struct http_req *r, struct dv_options *o) {
    size_t len;
    const char *body = http_req_body(r, &len);
    struct request_error e;
    memset(o, 0, sizeof *o);
    memset(&e, 0, sizeof e);
    if (len == 0) body = "{}", len = 2; /* no body: the lesson's defaults */
    /* request_parse() uses jansson on its own: a failed allocation inside
     * may cut a string short, which only the count shows. */
    unsigned long failures = jsonout_failures();
    int rc = request_parse(body, len, o, &e);
    if (jsonout_failures() != failures) {
        http_reply_error(r, 500, NULL, "out of memory");
        return -1;
    }
    if (rc < 0) {
        reply_request_error(r, &e);
        return -1;
    }
    return 0;
}

/* ---- the shared validation: cost cap, then the analysis on the pool ------ */

/* What the plan evaluates, counted by the model that plans it. */
double routes_analysis_cost(const struct dv_options *o) { return plan_cost(o, NULL); }

/* Answers `status` with `reason` and, beside it, the two numbers it
 * compares: {`cost_key`: cost, `limit_key`: limit}. */
static void reply_over_limit(struct http_req *r, int status, const char *field, const char *cost_key, double cost,
                             const char *limit_key, double limit, const char *reason) {
    json_t *x = json_object();
    int bad = 0;
    jsonout_put(x, cost_key, json_real(cost), &bad);
    jsonout_put(x, limit_key, json_real(limit), &bad);
    http_reply_error_ex(r, status, field, x, bad, "%s", reason);
}

/* 400 when the analysis would cost more than the cap. Returns -1 after
 * answering; 0 with the cost in *cost_out, which plan_defer() takes (it
 * is worked out once per request). */
static int check_analysis_cost(struct http_req *r, const struct service *s, const struct dv_options *o,
                               double *cost_out) {
    const char *field = NULL;
    double cost = plan_cost(o, &field), limit = s->cfg.max_analysis_cost;
    *cost_out = cost;
    if (limit <= 0 || cost <= limit) return 0;
    char why[ERR_LEN];
    if (o->scenario[0])
        snprintf(why, sizeof why,
                 "the analysis would make %.3g thread evaluations, over the per-request limit %.3g; each scenario "
                 "row assigns and models every thread of the grid: lower blocks or threads_per_block, or name fewer "
                 "scenarios",
                 cost, limit);
    else
        snprintf(why, sizeof why,
                 "the analysis would make %.3g thread evaluations, over the per-request limit %.3g; predicates that "
                 "read blockIdx.x (%s first) are evaluated for every thread of the grid: lower blocks, "
                 "threads_per_block or the number of such predicates",
                 cost, limit, field);
    reply_over_limit(r, 400, field, "analysis_cost", cost, "limit", limit, why);
    return -1;
}

/* One analysis, run on the CPU pool. */
struct plan_task {
    struct service *s;
    struct dv_options o;
    int for_measure;
    int rc;
    struct dv_fault fault; /* what a failed plan is about: the field, an expression's column */
    char err[ERR_LEN];
    char *doc; /* analyze: the document */
};

static void plan_work(void *ctx) {
    struct plan_task *t = ctx;
    struct dv_report *rep = experiment_report_create();
    if (!rep) {
        t->rc = -2;
        snprintf(t->err, sizeof t->err, "out of memory");
        return;
    }
    t->rc = plan_report(&t->o, rep, &t->fault, t->err) < 0 ? -1 : 0;
    if (t->rc == 0 && !t->for_measure && !(t->doc = report_json(rep, 0))) {
        t->rc = -2;
        snprintf(t->err, sizeof t->err, "out of memory");
    }
    experiment_report_free(rep);
}

static void plan_task_free(void *ctx) {
    struct plan_task *t = ctx;
    if (!t) return;
    free(t->doc);
    free(t);
}

/* Answers a failed plan_task. Returns 1 when it answered. */
static int plan_failed(struct http_req *r, struct plan_task *t) {
    if (http_req_cancelled(r)) {
        http_reply_error(r, 503, NULL, "the server is shutting down");
        return 1;
    }
    if (t->rc == -2) {
        http_reply_error(r, 500, NULL, "%s", t->err);
        return 1;
    }
    if (t->rc < 0) {
        struct request_error e;
        request_error_from(&t->fault, t->err, &e);
        reply_request_error(r, &e);
        return 1;
    }
    return 0;
}

/* Hands the analysis of `cost` (check_analysis_cost()'s) to the pool;
 * `done` answers. An analysis of at most ROUTES_INLINE_COST
 * predicate-threads (tens of microseconds: the widget's blockIdx.x-free
 * predicates on any grid) runs on the HTTP thread at once: a trip through
 * the pool and a suspend/resume would cost more than it. */
static void plan_defer(struct http_req *r, struct service *s, int for_measure, http_handler_fn done,
                       const struct dv_options *o, double cost) {
    struct plan_task *t = calloc(1, sizeof *t);
    if (!t) {
        http_reply_error(r, 500, NULL, "out of memory");
        return;
    }
    t->s = s;
    t->o = *o;
    t->for_measure = for_measure;
    if (cost <= ROUTES_INLINE_COST) {
        plan_work(t);
        done(r, t);
        plan_task_free(t);
        return;
    }
    if (http_req_defer(r, plan_work, done, t, plan_task_free) < 0) {
        free(t);
        http_req_add_header(r, "Retry-After", "1");
        http_reply_error(r, 503, NULL, "every analysis thread is busy and the queue is full; retry in 1 s");
    }
}

/* ---- POST /measure ------------------------------------------------------ */

static void measure_done(struct http_req *r, void *ctx);

static void measure(struct http_req *r, void *ctx) {
    struct service *s = ctx;
    struct dv_options o;
    if (parse_body(r, &o) < 0) return;
    double cost = options_cost(&o);
    char why[ERR_LEN];
    if (cost > s->cfg.max_cost) {
        snprintf(why, sizeof why,
                 "estimated GPU cost %.3g (threads x iterations x rows x samples) exceeds the per-job limit %.3g; "
                 "lower blocks, threads_per_block, iterations or the number of predicates",
                 cost, s->cfg.max_cost);
        reply_over_limit(r, 400, NULL, "cost", cost, "limit", s->cfg.max_cost, why);
        return;
    }
    /* With a token set, a page may still measure what a lesson measures
     * (up to cfg.open_cost, under the per-address limit); more needs it. */
    if (!http_req_authorized(r) && cost > s->cfg.open_cost) {
        snprintf(why, sizeof why,
                 "a bearer token is required: this measurement (estimated cost %.3g) is larger than the %.3g this "
                 "server measures without a token",
                 cost, s->cfg.open_cost);
        http_req_add_header(r, "WWW-Authenticate", "Bearer realm=\"divergence\"");
        reply_over_limit(r, 401, "Authorization", "cost", cost, "open_limit", s->cfg.open_cost, why);
        return;
    }
    double budget = o.budget_ms * options_tables(&o);
    if (budget >= s->cfg.deadline_ms) {
        http_reply_error(r, 400, "budget_ms",
                         "budget_ms %g for each of %u tables (%g ms) does not fit the job deadline of %u ms",
                         o.budget_ms, options_tables(&o), budget, s->cfg.deadline_ms);
        return;
    }
    double acost;
    if (check_analysis_cost(r, s, &o, &acost) < 0) return;
    plan_defer(r, s, 1, measure_done, &o, acost);
}

/* 200 with the cached document `doc` of job `id`, `age` seconds old. */
static void reply_cached(struct http_req *r, const char *doc, double age, const char *id) {
    char loc[64];
    int bad = 0;
    json_error_t je;
    json_t *d = jsonout_loads(doc, 0, &je);
    json_t *o = json_object();
    snprintf(loc, sizeof loc, "/jobs/%s", id);
    jsonout_put(o, "id", jsonout_str(id), &bad);
    jsonout_put(o, "state", jsonout_str("done"), &bad);
    jsonout_put(o, "cached", json_true(), &bad);
    jsonout_put(o, "age_s", json_real(floor(age * 1000) / 1000), &bad);
    jsonout_put(o, "document", d, &bad); /* a document the cache holds always parses */
    jsonout_put(o, "location", jsonout_str(loc), &bad);
    reply_built(r, 200, o, bad);
}

/* 429: the job queue has no place for this request now (`why`, the queue's
 * words), with when one is likely (`retry` s, the drain estimate of jobq.h)
 * as Retry-After. */
static void reply_queue_full(struct http_req *r, unsigned retry, const char *why) {
    char ra[16];
    int bad = 0;
    snprintf(ra, sizeof ra, "%u", retry);
    http_req_add_header(r, "Retry-After", ra);
    json_t *x = json_object();
    jsonout_put(x, "retry_after_s", json_integer(retry), &bad);
    http_reply_error_ex(r, 429, NULL, x, bad, "%s; retry in %u s", why, retry);
}

/* After the analysis accepted the request: the cache, then the queue. */
static void measure_done(struct http_req *r, void *ctx) {
    struct plan_task *t = ctx;
    struct service *s = t->s;
    if (plan_failed(r, t)) return;
    const struct dv_options *o = &t->o;
    char *key = malloc(KEY_LEN);
    char *req = NULL, *doc = NULL, *batch = NULL;
    int bad = 0;
    if (!key || options_canonical(o, key, KEY_LEN) < 0) {
        http_reply_error(r, 500, NULL, "cannot form the cache key");
        goto cleanup;
    }
    double age = 0;
    char id[JOBQ_ID_LEN];
    char loc[64];
    if (jobq_cache_lookup(s->q, key, &doc, &age, id)) {
        reply_cached(r, doc, age, id);
        goto cleanup;
    }
    struct worker_snapshot ws;
    worker_get_snapshot(s->w, &ws);
    free(ws.device_json);
    /* Queue while a worker that had a GPU restarts (the queue outlives
     * it); refuse when there is no GPU or no worker has come up yet. */
    if (!ws.gpu_present && !(ws.gpu_seen && ws.state != WORKER_STOPPED)) {
        if (ws.state == WORKER_READY) {
            http_reply_error(r, 503, NULL, "%s", ws.reason);
        } else {
            http_req_add_header(r, "Retry-After", "5");
            http_reply_error(r, 503, NULL, "the GPU worker is %s: %s", worker_state_name(ws.state), ws.reason);
        }
        goto cleanup;
    }
    if (!(req = request_dump(o))) {
        http_reply_error(r, 500, NULL, "out of memory");
        goto cleanup;
    }
    char kind[JOBQ_KIND_LEN] = "";
    (void)options_job_kind(o, kind, sizeof kind); /* cut short, it is still a kind */
    batch = malloc(OPTIONS_BATCH_KEY_LEN); /* which jobs may share a GPU session; none: alone */
    if (batch && options_batch_key(o, batch, OPTIONS_BATCH_KEY_LEN) < 0) batch[0] = '\0';
    struct jobq_wait wait;
    struct jobq_submit sub = {.request = req, .key = key, .deadline_ms = s->cfg.deadline_ms, .tag = "measure",
                              .client = http_req_address(r), .kind = kind, .batch = batch, .wait = &wait};
    unsigned pos = 0;
    int joined = 0;
    char err[ERR_LEN];
    int rc = jobq_submit(s->q, &sub, id, &pos, &joined, err);
    if (rc == DV_EFULL) {
        reply_queue_full(r, wait.retry_after_s, err);
        goto cleanup;
    }
    if (rc == DV_ECLOSED) {
        http_reply_error(r, 503, NULL, "the server is shutting down");
        goto cleanup;
    }
    if (rc < 0) {
        http_reply_error(r, 500, NULL, "%s", err);
        goto cleanup;
    }
    snprintf(loc, sizeof loc, "/jobs/%s", id);
    http_req_add_header(r, "Location", loc);
    json_t *out = json_object();
    jsonout_put(out, "id", jsonout_str(id), &bad);
    jsonout_put(out, "state", jsonout_str(pos ? "queued" : "running"), &bad);
    jsonout_put(out, "position", json_integer(pos), &bad);
    if (pos) jsonout_put(out, "expected_start_s", json_real(secs_up(wait.expected_start_s)), &bad);
    jsonout_put(out, "eta_s", json_real(secs_up(wait.eta_s)), &bad);
    jsonout_put(out, "location", jsonout_str(loc), &bad);
    if (joined) jsonout_put(out, "joined", json_true(), &bad);
    reply_built(r, 202, out, bad);
cleanup:
    free(key);
    free(req);
    free(doc);
    free(batch);
}

/* ---- GET /jobs/{id} ---------------------------------------------------- */

static int valid_id(const char *id) {
    if (strlen(id) != JOBQ_ID_LEN - 1) return 0;
    for (const char *p = id; *p; p++)
        if (!isxdigit((unsigned char)*p) || isupper((unsigned char)*p)) return 0;
    return 1;
}

static double ms3(double ms) { return round(ms * 1000) / 1000; }

json_t *routes_job_json(const struct job_view *v) {
    char t[32];
    int bad = 0;
    json_t *o = json_object();
    jsonout_put(o, "id", jsonout_str(v->id), &bad);
    jsonout_put(o, "state", jsonout_str(jobq_state_name(v->state)), &bad);
    if (v->state == JOB_QUEUED) {
        jsonout_put(o, "position", json_integer(v->position), &bad);
        jsonout_put(o, "expected_start_s", json_real(secs_up(v->expected_start_s)), &bad);
    }
    if (v->state == JOB_QUEUED || v->state == JOB_RUNNING) jsonout_put(o, "eta_s", json_real(secs_up(v->eta_s)), &bad);
    timeutil_utc((time_t)v->created, t, sizeof t);
    jsonout_put(o, "created_utc", jsonout_str(t), &bad);
    if (v->started > 0) {
        timeutil_utc((time_t)v->started, t, sizeof t);
        jsonout_put(o, "started_utc", jsonout_str(t), &bad);
    }
    if (v->finished > 0) {
        timeutil_utc((time_t)v->finished, t, sizeof t);
        jsonout_put(o, "finished_utc", jsonout_str(t), &bad);
        if (v->started > 0) jsonout_put(o, "run_s", json_real(round((v->finished - v->started) * 1000) / 1000), &bad);
    }
    /* Microseconds: finer than CUDA event timing, and short in the text. */
    if (v->state == JOB_DONE) jsonout_put(o, "gpu_time_ms", json_real(ms3(v->gpu_time_ms)), &bad);
    /* Where the time went: waiting for the GPU, timed GPU work, and the
     * rest of the run (worker set-up, checks, transfer). */
    json_t *tm = json_object();
    if (v->started > 0) jsonout_put(tm, "queue_wait_ms", json_real(ms3((v->started - v->created) * 1000)), &bad);
    if (v->started > 0 && v->finished > 0) {
        double run = (v->finished - v->started) * 1000;
        jsonout_put(tm, "run_ms", json_real(ms3(run)), &bad);
        if (v->state == JOB_DONE) {
            jsonout_put(tm, "gpu_ms", json_real(ms3(v->gpu_time_ms)), &bad);
            jsonout_put(tm, "overhead_ms", json_real(ms3(run > v->gpu_time_ms ? run - v->gpu_time_ms : 0)), &bad);
        }
    }
    jsonout_put(o, "timing", tm, &bad);
    if (v->state == JOB_FAILED) {
        json_t *e = json_object();
        jsonout_put(e, "kind", jsonout_str(v->kind), &bad);
        jsonout_put(e, "code", json_integer(v->code), &bad);
        jsonout_put(e, "reason", jsonout_str(v->error), &bad);
        jsonout_put(o, "error", e, &bad);
    }
    if (v->document) {
        json_error_t je;
        json_t *d = jsonout_loads(v->document, 0, &je);
        jsonout_put(o, "document", d, &bad); /* the worker's document was checked when stored */
    }
    if (bad) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* A finished job's answer (`o`, taken), which no longer changes: sent as
 * an entity (http_reply_entity), so it carries an ETag (the bytes' digest
 * and length, the evidence's form: evroutes_etag) and Last-Modified (when
 * it finished), answers 304 to a client that holds it, and its gzip form
 * is made once and kept under that ETag, not per request. */
static void reply_finished_job(struct http_req *r, json_t *o, time_t finished) {
    char *body = o ? jsonout_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    size_t n = body ? strlen(body) : 0;
    char *t = body ? realloc(body, n + 2) : NULL;
    if (!t) {
        free(body);
        http_reply_error(r, 500, NULL, "out of memory");
        return;
    }
    t[n++] = '\n'; /* as http_reply_json() ends every document */
    t[n] = '\0';
    char etag[EVROUTES_ETAG_LEN], lm[TIMEUTIL_HTTP_LEN];
    evroutes_etag(fnv1a_64(FNV1A_64_OFFSET, t, n), n, etag);
    timeutil_http_date(finished, lm, sizeof lm);
    http_req_add_header(r, "Last-Modified", lm);
    const struct http_entity ent = {
        .content_type = "application/json", .body = t, .len = n, .fd = -1, .etag = etag, .last_modified = finished};
    http_reply_entity(r, &ent);
    free(t);
}

/* Looks the job up and replies its document, or 404. */
static void reply_job(struct http_req *r, struct service *s, const char *id) {
    struct job_view v;
    if (!valid_id(id) || jobq_status(s->q, id, &v) < 0) {
        http_reply_error(r, 404, "id", "no job %s (unknown, or finished long enough ago to be forgotten)", id);
        return;
    }
    json_t *o = routes_job_json(&v);
    free(v.document);
    if ((v.state == JOB_DONE || v.state == JOB_FAILED) && v.finished > 0) reply_finished_job(r, o, (time_t)v.finished);
    else reply_built(r, 200, o, !o);
}

static void wake_request(void *ctx) { http_req_wake(ctx); }

/* A long-poll or an event stream: what the queue's watcher wakes. */
struct job_wait {
    struct service *s;
    struct http_req *r;
    struct jobq_watch *w;
    char id[JOBQ_ID_LEN];
    double until_ms; /* long-poll: monotonic end of the wait      */
    /* event stream: what the last event said (none sent while !sent) */
    int sent, ended;
    enum job_state last_state;
    unsigned last_pos;
    double last_sent_ms;
    char *pending; /* event text not yet handed to the stream  */
    size_t plen, poff;
};

static void job_wait_free(void *arg) {
    struct job_wait *jw = arg;
    if (!jw) return;
    jobq_unwatch(jw->s->q, jw->w);
    free(jw->pending);
    free(jw);
}

static void job_wait_cont(struct http_req *r, void *ctx) {
    struct job_wait *jw = ctx;
    struct job_view v;
    /* Released (to make room, or the server stopping): the current state
     * now, which the contract calls "ask again". */
    if (!http_req_released(r) && jobq_status(jw->s->q, jw->id, &v) == 0) {
        free(v.document);
        double left = jw->until_ms - timeutil_now_ms();
        if ((v.state == JOB_QUEUED || v.state == JOB_RUNNING) && left >= 1) {
            http_req_suspend(r, job_wait_cont, jw, (unsigned)left);
            return;
        }
    }
    reply_job(r, jw->s, jw->id);
}

/* The next server-sent event for the job's state, or 0 bytes when nothing
 * changed; the stream ends after done/failed (or when the job is gone).
 * Released (http_req_released), it sends the current state's event once
 * more, changed or not, and ends: the client reads where the job is and
 * asks again. */
static long job_stream_read(void *ctx, char *buf, size_t max) {
    struct job_wait *jw = ctx;
    if (jw->poff < jw->plen) {
        size_t n = jw->plen - jw->poff < max ? jw->plen - jw->poff : max;
        memcpy(buf, jw->pending + jw->poff, n);
        jw->poff += n;
        return (long)n;
    }
    if (jw->ended) return -1;
    struct job_view v = {.document = NULL};
    double now = timeutil_now_ms();
    int last = http_req_released(jw->r);
    free(jw->pending);
    jw->pending = NULL;
    jw->plen = jw->poff = 0;
    if (jobq_status(jw->s->q, jw->id, &v) < 0) {
        jw->ended = 1;
        jw->pending = strdup("event: gone\ndata: {}\n\n");
    } else if (last || !jw->sent || v.state != jw->last_state ||
               (v.state == JOB_QUEUED && v.position != jw->last_pos)) {
        json_t *o = routes_job_json(&v);
        char *data = o ? jsonout_dumps(o, JSON_COMPACT) : NULL;
        json_decref(o);
        const char *ev = jobq_state_name(v.state);
        size_t cap = (data ? strlen(data) : 0) + 64;
        if (data && (jw->pending = malloc(cap))) snprintf(jw->pending, cap, "event: %s\ndata: %s\n\n", ev, data);
        free(data);
        if (!jw->pending) {
            free(v.document);
            return -1; /* out of memory: end the stream; the client can GET */
        }
        jw->sent = 1;
        jw->last_state = v.state;
        jw->last_pos = v.position;
        if (last || v.state == JOB_DONE || v.state == JOB_FAILED) jw->ended = 1;
    } else if (now - jw->last_sent_ms >= SSE_IDLE_MS) {
        jw->pending = strdup(": waiting\n\n"); /* a comment keeps proxies from timing out */
    }
    free(v.document);
    if (!jw->pending) return 0;
    jw->plen = strlen(jw->pending);
    jw->last_sent_ms = now;
    return job_stream_read(ctx, buf, max);
}

/* ?wait=: seconds as plain decimal digits with an optional fraction
 * ("25", "0.5"), 0 to WAIT_MAX_S. strtod() alone would also take hex
 * ("0x10" is 16), exponents, "inf" and leading blanks. Returns 0 or -1. */
static int parse_wait(const char *w, double *out) {
    const char *p = w;
    unsigned digits = 0;
    while (*p >= '0' && *p <= '9') p++, digits++;
    if (*p == '.') {
        p++;
        while (*p >= '0' && *p <= '9') p++, digits++;
    }
    if (!digits || *p || p - w > 16) return -1;
    double v = strtod(w, NULL);
    if (!(v >= 0 && v <= WAIT_MAX_S)) return -1;
    *out = v;
    return 0;
}

static void job_get(struct http_req *r, void *ctx) {
    struct service *s = ctx;
    const char *id = http_req_tail(r);
    struct job_view v;
    if (!valid_id(id) || jobq_status(s->q, id, &v) < 0) {
        http_reply_error(r, 404, "id", "no job %s (unknown, or finished long enough ago to be forgotten)", id);
        return;
    }
    free(v.document);
    const char *accept = http_req_header(r, "Accept");
    int sse = accept && strstr(accept, "text/event-stream");
    const char *w = http_req_query(r, "wait");
    double wait_s = 0;
    if (w && parse_wait(w, &wait_s) < 0) {
        http_reply_error(r, 400, "wait", "wait=%.40s: expected seconds from 0 to %d, as decimal digits (e.g. 25 or 0.5)",
                         w, WAIT_MAX_S);
        return;
    }
    if (!sse && (wait_s <= 0 || v.state == JOB_DONE || v.state == JOB_FAILED)) {
        reply_job(r, s, id);
        return;
    }
    struct job_wait *jw = calloc(1, sizeof *jw);
    if (!jw) {
        http_reply_error(r, 500, NULL, "out of memory");
        return;
    }
    jw->s = s;
    jw->r = r;
    memcpy(jw->id, id, JOBQ_ID_LEN);
    jw->until_ms = timeutil_now_ms() + wait_s * 1000;
    http_req_on_cleanup(r, job_wait_free, jw); /* unwatches before `r` is freed */
    /* Watched from here on: a change since the look above wakes it at
     * once (or the watch itself does, when the job has ended since). */
    if (!(jw->w = jobq_watch(s->q, id, sse ? JOBQ_WATCH_POSITION : 0, wake_request, r))) {
        http_reply_error(r, 500, NULL, "out of memory");
        return;
    }
    if (sse) {
        http_req_add_header(r, "X-Accel-Buffering", "no");
        http_reply_stream(r, 200, "text/event-stream", job_stream_read, jw, NULL, SSE_IDLE_MS);
        return;
    }
    /* Rounded up: a wait of a fraction of a millisecond is 1 ms, not 0,
     * which would mean no timeout at all. */
    http_req_suspend(r, job_wait_cont, jw, (unsigned)ceil(wait_s * 1000));
}

/* ---- POST /analyze ----------------------------------------------------- */

static void analyze_done(struct http_req *r, void *ctx) {
    struct plan_task *t = ctx;
    if (plan_failed(r, t)) return;
    char *doc = t->doc;
    t->doc = NULL;
    http_reply_take(r, 200, "application/json", doc);
}

static void analyze(struct http_req *r, void *ctx) {
    struct service *s = ctx;
    struct dv_options o;
    if (parse_body(r, &o) < 0) return;
    double acost;
    if (check_analysis_cost(r, s, &o, &acost) < 0) return;
    plan_defer(r, s, 0, analyze_done, &o, acost);
}

/* ---- GET /predicates --------------------------------------------------- */

static pthread_once_t predicates_once = PTHREAD_ONCE_INIT;
static char *predicates_doc;
static char predicates_err[ERR_LEN];

char *routes_predicates_doc(char *err) {
    size_t n = 0;
    const struct predicate_builtin *b = predicate_builtins(&n);
    struct dv_options o;
    memset(&o, 0, sizeof o);
    experiment_defaults(&o);
    o.part = DV_PART_1;
    o.npredicates = 0;
    for (size_t i = 0; i < n && i < DV_MAX_ROWS; i++)
        snprintf(o.predicates[o.npredicates++], PREDICATE_TEXT_LEN, "%s", b[i].name);
    struct dv_report *rep = experiment_report_create();
    if (!rep || options_validate(&o, OPTIONS_JSON, NULL, err) < 0 || plan_report(&o, rep, NULL, err) < 0) {
        if (!rep) dv_seterr(err, "out of memory");
        experiment_report_free(rep);
        return NULL;
    }
    int bad = 0;
    json_t *root = json_object();
    json_t *arr = json_array();
    jsonout_put(root, "blocks", json_integer(o.blocks ? o.blocks : DV_DEFAULT_BLOCKS), &bad);
    jsonout_put(root, "threads_per_block", json_integer(o.block_x * (o.block_y ? o.block_y : 1)), &bad);
    jsonout_put(root, "baseline", jsonout_str(o.baseline), &bad);
    jsonout_put(root, "rule", jsonout_str(PREDICATE_RULE), &bad);
    const struct dv_table *t = rep->ntables ? &rep->tables[0] : NULL;
    for (size_t i = 0; i < n && arr; i++) {
        json_t *p = json_object();
        jsonout_put(p, "name", jsonout_str(b[i].name), &bad);
        /* One source (model/model/predicate.c): the label is the definition. */
        jsonout_put(p, "label", jsonout_str(b[i].expr), &bad);
        jsonout_put(p, "expr", jsonout_str(b[i].expr), &bad);
        jsonout_put(p, "hint", jsonout_str(b[i].hint), &bad);
        jsonout_put(p, "mode", json_integer(b[i].mode), &bad);
        for (unsigned k = 0; t && k < t->nrows; k++) {
            if (strcmp(t->rows[k].name, b[i].name) != 0) continue;
            /* The very row the divergence.v1 document writes. */
            jsonout_put(p, "analysis", report_row_json(&t->rows[k], 0), &bad);
            break;
        }
        jsonout_append(arr, p, &bad);
    }
    jsonout_put(root, "predicates", arr, &bad);
    char *doc = bad ? NULL : jsonout_dumps(root, JSON_COMPACT);
    json_decref(root);
    experiment_report_free(rep);
    if (!doc) dv_seterr(err, "out of memory");
    return doc;
}

static void predicates_build(void) { predicates_doc = routes_predicates_doc(predicates_err); }

static void predicates(struct http_req *r, void *ctx) {
    (void)ctx;
    pthread_once(&predicates_once, predicates_build);
    if (!predicates_doc) {
        http_reply_error(r, 500, NULL, "the predicate analysis failed: %s", predicates_err);
        return;
    }
    http_reply(r, 200, "application/json", predicates_doc, strlen(predicates_doc));
}

/* ---- GET /device, /healthz, /readyz (GET /metrics: metrics.c) ---------- */

static void device(struct http_req *r, void *ctx) {
    struct service *s = ctx;
    struct worker_snapshot ws;
    worker_get_snapshot(s->w, &ws);
    int bad = 0;
    json_t *o = json_object();
    json_t *d;
    if (ws.device_json) {
        d = jsonout_loads(ws.device_json, 0, NULL); /* checked when it came: NULL is no memory */
    } else {
        d = json_object();
        jsonout_put(d, "present", json_false(), &bad);
        jsonout_put(d, "reason", jsonout_str(ws.reason), &bad);
    }
    jsonout_put(o, "device", d, &bad);
    json_t *w = json_object();
    jsonout_put(w, "state", jsonout_str(worker_state_name(ws.state)), &bad);
    jsonout_put(w, "pid", json_integer(ws.pid), &bad);
    jsonout_put(w, "restarts", json_integer((json_int_t)ws.restarts), &bad);
    jsonout_put(w, "jobs", json_integer((json_int_t)ws.jobs), &bad);
    if (ws.reason[0]) jsonout_put(w, "reason", jsonout_str(ws.reason), &bad);
    jsonout_put(o, "worker", w, &bad);
    free(ws.device_json);
    reply_built(r, 200, o, bad);
}

static void healthz(struct http_req *r, void *ctx) {
    struct service *s = ctx;
    int bad = 0;
    json_t *o = json_object();
    jsonout_put(o, "status", jsonout_str("ok"), &bad);
    jsonout_put(o, "version", jsonout_str(buildinfo_version()), &bad);
    jsonout_put(o, "git_revision", jsonout_str(buildinfo_git_revision()), &bad);
    jsonout_put(o, "uptime_s", json_real(floor(((timeutil_now_ms() / 1e3) - s->started) * 1000) / 1000), &bad);
    /* What a page may do here without credentials (the widget reads it). */
    json_t *m = json_object();
    jsonout_put(m, "token_required", json_boolean(s->cfg.http.token != NULL), &bad);
    jsonout_put(m, "open_max_cost", json_real(s->cfg.http.token ? s->cfg.open_cost : s->cfg.max_cost), &bad);
    jsonout_put(o, "measure", m, &bad);
    reply_built(r, 200, o, bad);
}

/* Readiness is logged when it changes, not on every probe. */
static struct log_latch ready_latch = LOG_LATCH_INIT;

static void readyz(struct http_req *r, void *ctx) {
    struct service *s = ctx;
    struct worker_snapshot ws;
    char why[ERR_LEN + 64] = "";
    worker_get_snapshot(s->w, &ws);
    free(ws.device_json);
    if (s->stopping) snprintf(why, sizeof why, "the server is shutting down");
    else if (ws.state != WORKER_READY) snprintf(why, sizeof why, "the GPU worker is %s: %s", worker_state_name(ws.state), ws.reason);
    else if (!ws.gpu_present) snprintf(why, sizeof why, "%s", ws.reason);
    if (why[0]) {
        log_latch_update(&ready_latch, LOG_WARNING, "readiness: not ready", why);
        http_reply_error(r, 503, NULL, "%s", why);
        return;
    }
    log_latch_update(&ready_latch, LOG_NOTICE, "readiness", "ready");
    int bad = 0;
    json_t *o = json_object();
    jsonout_put(o, "ready", json_true(), &bad);
    jsonout_put(o, "worker_pid", json_integer(ws.pid), &bad);
    reply_built(r, 200, o, bad);
}

/* ---- GET /openapi.yaml and static files -------------------------------- */

static void openapi(struct http_req *r, void *ctx) {
    struct service *s = ctx;
    for (int i = 0; i < 4; i++) {
        if (!s->openapi[i][0]) continue;
        int fd = open(s->openapi[i], O_RDONLY | O_CLOEXEC);
        struct stat sb;
        if (fd < 0) continue;
        if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode)) {
            close(fd);
            continue;
        }
        http_reply_fd(r, 200, "application/yaml", fd, (size_t)sb.st_size);
        return;
    }
    http_reply_error(r, 404, NULL, "openapi.yaml is not installed with this server");
}

static const char *content_type(const char *path) {
    static const struct {
        const char *ext, *type;
    } types[] = {
        {".html", "text/html; charset=utf-8"},
        {".js", "text/javascript; charset=utf-8"},
        {".mjs", "text/javascript; charset=utf-8"},
        {".css", "text/css; charset=utf-8"},
        {".json", "application/json"},
        {".svg", "image/svg+xml"},
        {".png", "image/png"},
        {".ico", "image/x-icon"},
        {".txt", "text/plain; charset=utf-8"},
        {".yaml", "application/yaml"},
        {".map", "application/json"},
        {".woff2", "font/woff2"},
        {".wasm", "application/wasm"},
        {".webp", "image/webp"},
        {".jpg", "image/jpeg"},
    };
    const char *dot = strrchr(path, '.');
    if (dot && !strchr(dot, '/'))
        for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
            if (strcmp(dot, types[i].ext) == 0) return types[i].type;
    return "application/octet-stream";
}

/* A relative path is safe when no segment is empty, "." / ".." or hidden,
 * and it has no backslash or control character. */
static int safe_relpath(const char *rel) {
    if (strlen(rel) > 512) return 0;
    const char *p = rel;
    while (*p) {
        const char *e = strchr(p, '/');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (n == 0 || p[0] == '.') return 0;
        for (size_t i = 0; i < n; i++)
            if ((unsigned char)p[i] < 0x20 || p[i] == '\\') return 0;
        p += n;
        if (*p == '/') p++;
    }
    return 1;
}

void routes_static_file(struct http_req *r, const char *dir, const char *rel) {
    if (!dir || !dir[0]) {
        http_reply_error(r, 404, NULL, "static files are not installed with this server");
        return;
    }
    if (!rel[0]) rel = "index.html";
    if (!safe_relpath(rel)) {
        http_reply_error(r, 404, NULL, "no such file: %s", http_req_path(r));
        return;
    }
    char path[PATH_MAX * 2], real[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    /* Defence in depth: the resolved file must still lie under the dir. */
    size_t dl = strlen(dir);
    if (!realpath(path, real) || strncmp(real, dir, dl) != 0 || real[dl] != '/') {
        http_reply_error(r, 404, NULL, "no such file: %s", http_req_path(r));
        return;
    }
    int fd = open(real, O_RDONLY | O_CLOEXEC);
    struct stat sb;
    if (fd < 0 || fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode)) {
        if (fd >= 0) close(fd);
        http_reply_error(r, 404, NULL, "no such file: %s", http_req_path(r));
        return;
    }
    /* Validators from size and mtime (the files change only on install):
     * no-cache makes browsers and nginx revalidate, answered with a 304. */
    char etag[64], lm[TIMEUTIL_HTTP_LEN];
    snprintf(etag, sizeof etag, "\"%llx-%llx\"", (unsigned long long)sb.st_size,
             (unsigned long long)sb.st_mtime);
    timeutil_http_date(sb.st_mtime, lm, sizeof lm);
    http_req_add_header(r, "Cache-Control", "no-cache");
    http_req_add_header(r, "Last-Modified", lm);
    /* The tag names the bytes only with the path: the key of the kept gzip
     * form is both (two files installed alike share size and mtime). */
    char key[PATH_MAX + 64];
    snprintf(key, sizeof key, "%s %s", etag, real);
    const struct http_entity ent = {.content_type = content_type(real),
                                    .fd = fd,
                                    .len = (size_t)sb.st_size,
                                    .etag = etag,
                                    .last_modified = sb.st_mtime,
                                    .key = key};
    http_reply_entity(r, &ent);
}

static void static_index(struct http_req *r, void *ctx) {
    struct service *s = ctx;
    routes_static_file(r, s->static_dir, "");
}

static void static_tree(struct http_req *r, void *ctx) {
    struct service *s = ctx;
    routes_static_file(r, s->static_dir, http_req_tail(r));
}

int routes_add_core(struct service *s, char *err) {
    struct http *h = s->http;
    /* POST /measure: a token that is sent must be valid (checked before the
     * rate limit); without one, measure() allows up to cfg.open_cost. */
    const unsigned post = HTTP_ROUTE_AUTH_SENT | HTTP_ROUTE_RATELIMIT | HTTP_ROUTE_BODY;
    if (http_route_add(h, "POST", "/measure", "/measure", post, measure, s, err) < 0 ||
        http_route_add(h, "GET", "/jobs/", "/jobs/{id}", HTTP_ROUTE_PREFIX, job_get, s, err) < 0 ||
        http_route_add(h, "POST", "/analyze", "/analyze", HTTP_ROUTE_BODY | HTTP_ROUTE_RATELIMIT_CPU, analyze, s, err) <
            0 ||
        http_route_add(h, "GET", "/predicates", "/predicates", 0, predicates, s, err) < 0 ||
        http_route_add(h, "GET", "/device", "/device", 0, device, s, err) < 0 ||
        http_route_add(h, "GET", "/healthz", "/healthz", 0, healthz, s, err) < 0 ||
        http_route_add(h, "GET", "/readyz", "/readyz", 0, readyz, s, err) < 0 ||
        http_route_add(h, "GET", "/openapi.yaml", "/openapi.yaml", 0, openapi, s, err) < 0 ||
        http_route_add(h, "GET", "/", "/", 0, static_index, s, err) < 0 ||
        http_route_add(h, "GET", "/index.html", "/", 0, static_index, s, err) < 0 ||
        http_route_add(h, "GET", "/static/", "/static/{path}", HTTP_ROUTE_PREFIX, static_tree, s, err) < 0)
        return -1;
    return 0;
}
