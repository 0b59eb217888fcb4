/* evroutes.c -- the HTTP side of the evidence store and the refresh.
 *
 * A refresh puts one job per suite on the service's job queue with
 * on_start / on_done callbacks whose context (struct suite_job) carries the
 * refresh id and suite index; the job queue calls on_done exactly once, on the
 * thread that finished the job, and the context is freed there. The
 * registry writes the evidence from that call.
 *
 * The evidence GETs are answered by evidence_http_get(), which also makes the
 * conditional-GET decision, so this file only copies headers across.
 */
#define _DEFAULT_SOURCE
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "evidence/evidence.h"
#include "http/evroutes.h"
#include "core/log.h"
#include "evidence/refresh.h"
#include "evidence/suites.h"

struct evroutes {
    struct service *s;
    struct evidence *ev;
    struct refresh *reg;
};

struct suite_job {
    struct refresh *reg;
    char rid[REFRESH_ID_LEN];
    size_t index;
};

static void job_started(const struct job_view *v, void *ctx) {
    struct suite_job *j = ctx;
    refresh_job_started(j->reg, j->rid, j->index);
}

static void job_done(const struct job_view *v, void *ctx) {
    struct suite_job *j = ctx;
    const char *why = v->error[0] ? v->error : (v->kind[0] ? v->kind : "the job failed");
    refresh_job_done(j->reg, j->rid, j->index, v->state == JOB_DONE, v->document, why);
    free(j);
}

static int enqueue(void *ctx, const char *rid, size_t index, const struct dv_options *o,
                   const char *request_json, char *job_id, char *err) {
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
        dv_seterr(err, "%s", rc == DV_EFULL ? "the job queue is full"
                             : rc == DV_ECLOSED ? "the server is shutting down"
                                                  : (why[0] ? why : "the job queue refused it"));
        return -1;
    }
    snprintf(job_id, REFRESH_JOB_ID_LEN, "%s", id);
    return 0;
}

static void suites_get_route(struct http_req *r, void *ctx) {
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
    int joined = 0, busy = 0;
    if (refresh_start(e->reg, id, &joined, &busy, err) != 0) {
        http_reply_error(r, 503, NULL, "%s", err);
        return;
    }
    if (busy) LOG(LOG_WARNING, "refresh %s: no suite could be queued", id);
    else LOG(LOG_NOTICE, "refresh %s: %s", id, joined ? "joined the refresh in progress" : "started");
    char *body = refresh_status_json(e->reg, id);
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
    char *body = strlen(id) < REFRESH_ID_LEN ? refresh_status_json(e->reg, id) : NULL;
    if (!body) {
        http_reply_error(r, 404, NULL, "no refresh %.40s (finished refreshes are kept for a while)", id);
        return;
    }
    http_req_add_header(r, "Cache-Control", "no-store");
    http_reply_take(r, 200, "application/json", body);
}

static void evidence_get(struct http_req *r, void *ctx) {
    struct evroutes *e = ctx;
    struct evidence_response out;
    evidence_http_get(e->ev, http_req_path(r), http_req_header(r, "If-None-Match"),
                      http_req_header(r, "If-Modified-Since"), &out);
    if (out.etag[0]) http_req_add_header(r, "ETag", out.etag);
    if (out.last_modified[0]) http_req_add_header(r, "Last-Modified", out.last_modified);
    if (out.cache_control) http_req_add_header(r, "Cache-Control", out.cache_control);
    if (out.status == 304) {
        http_reply(r, 304, NULL, "", 0);
    } else if (out.status >= 400) {
        /* The store's {"error": "..."} in the service's error shape (the
         * body is NULL when even that could not be formed). */
        json_t *j = out.body ? json_loadb(out.body, out.len, 0, NULL) : NULL;
        const char *why = json_string_value(json_object_get(j, "error"));
        http_reply_error(r, out.status, NULL, "%s", why ? why : "evidence error");
        json_decref(j);
    } else {
        http_reply(r, out.status, out.content_type, out.body ? out.body : "", out.len);
    }
    evidence_response_cleanup(&out);
}

struct evroutes *evroutes_create(struct service *s, char *err) {
    struct evroutes *e = calloc(1, sizeof *e);
    if (!e) {
        dv_seterr(err, "evidence: out of memory");
        return NULL;
    }
    e->s = s;
    if (!(e->ev = evidence_open(s->cfg.evidence_dir, err))) goto fail;
    struct refresh_queue q = {enqueue, e};
    if (!(e->reg = refresh_create(e->ev, &q, err))) goto fail;
    struct http *h = s->http;
    if (http_route_add(h, "GET", "/suites", "/suites", 0, suites_get_route, e, err) < 0 ||
        http_route_add(h, "POST", "/evidence/refresh", "/evidence/refresh",
                       HTTP_ROUTE_AUTH | HTTP_ROUTE_RATELIMIT, refresh_post, e, err) < 0 ||
        http_route_add(h, "GET", "/evidence/refresh/", "/evidence/refresh/{id}", HTTP_ROUTE_PREFIX,
                       refresh_get, e, err) < 0 ||
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
    struct evidence_response out;
    char *text = NULL;
    evidence_http_get(e->ev, "/evidence/latest", NULL, NULL, &out);
    if (out.status == 200 && out.body && (text = malloc(out.len + 1))) {
        memcpy(text, out.body, out.len);
        text[out.len] = '\0';
    }
    evidence_response_cleanup(&out);
    return text;
}

void evroutes_free(struct evroutes *e) {
    if (!e) return;
    refresh_free(e->reg);
    evidence_close(e->ev);
    free(e);
}
