/* routes.c -- the service's core routes (see service.h and http.h).
 *
 * POST /measure validates at once (request_parse, the per-job cost limit, the
 * deadline), answers an identical recent request from the result cache, and
 * otherwise queues a job and answers 202 with where to poll. Nothing here
 * waits for the GPU: the worker supervisor (worker.c) runs the queue.
 * POST /analyze and GET /predicates run the analysis inline; it is CPU work
 * bounded by the same request limits.
 */
#define _GNU_SOURCE
#include "base/timeutil.h"
#include "base/buildinfo.h"
#include "http/service.h"
#include "core/jsonout.h"
#include "core/log.h"

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
#include "model/predicate.h"
#include "api/report.h"
#include "api/request.h"

#define KEY_LEN 12288

void service_utc(double t, char *out, size_t len) { timeutil_utc((time_t)t, out, len); }

/* 400 for a request_parse() failure, with the position details it has. */
static void reply_request_error(struct http_req *r, const struct request_error *e) {
    json_t *x = json_object();
    if (e->line > 0) {
        json_object_set_new(x, "line", json_integer(e->line));
        json_object_set_new(x, "column", json_integer(e->column));
    }
    if (e->expr_column > 0) json_object_set_new(x, "expr_column", json_integer(e->expr_column));
    if (e->caret[0]) json_object_set_new(x, "caret", json_string(e->caret));
    http_reply_error_ex(r, e->status >= 400 && e->status < 600 ? e->status : 400, e->field, x, "%s", e->reason);
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
    if (request_parse(body, len, o, &e) < 0) {
        reply_request_error(r, &e);
        return -1;
    }
    return 0;
}

static unsigned tables_of(const struct dv_options *o) {
    unsigned n = o->part == DV_PART_ALL ? 2 : 1;
    if (o->scenario[0]) n += strcmp(o->scenario, "all") == 0 ? DV_MAX_TABLES : 1;
    return n;
}

/* ---- POST /measure ------------------------------------------------------ */

static void measure(struct http_req *r, void *ctx) {
    struct service *s = ctx;
    struct dv_options o;
    if (parse_body(r, &o) < 0) return;
    double cost = options_cost(&o);
    if (cost > s->cfg.max_cost) {
        json_t *x = json_object();
        json_object_set_new(x, "cost", json_real(cost));
        json_object_set_new(x, "limit", json_real(s->cfg.max_cost));
        http_reply_error_ex(r, 400, NULL, x,
                            "estimated GPU cost %.3g (threads x iterations x rows x samples) exceeds the "
                            "per-job limit %.3g; lower blocks, threads_per_block, iterations or the "
                            "number of predicates", cost, s->cfg.max_cost);
        return;
    }
    /* With a token set, a page may still measure what a lesson measures
     * (up to cfg.open_cost, under the per-address limit); more needs it. */
    if (!http_req_authorized(r) && cost > s->cfg.open_cost) {
        int present = http_req_header(r, "Authorization") != NULL;
        json_t *x = json_object();
        json_object_set_new(x, "cost", json_real(cost));
        json_object_set_new(x, "open_limit", json_real(s->cfg.open_cost));
        http_req_add_header(r, "WWW-Authenticate", "Bearer realm=\"divergence\"");
        http_reply_error_ex(r, 401, "Authorization", x,
                            "%s: this measurement (estimated cost %.3g) is larger than the %.3g this server "
                            "measures without a token",
                            present ? "the bearer token is not valid" : "a bearer token is required",
                            cost, s->cfg.open_cost);
        return;
    }
    double budget = o.budget_ms * tables_of(&o);
    if (budget >= s->cfg.deadline_ms) {
        http_reply_error(r, 400, "budget_ms",
                         "budget_ms %g for each of %u tables (%g ms) does not fit the job deadline of %u ms",
                         o.budget_ms, tables_of(&o), budget, s->cfg.deadline_ms);
        return;
    }
    char *key = malloc(KEY_LEN);
    char *req = NULL, *doc = NULL;
    if (!key || options_canonical(&o, key, KEY_LEN) < 0) {
        http_reply_error(r, 500, NULL, "cannot form the cache key");
        goto cleanup;
    }
    double age = 0;
    char id[JOBQ_ID_LEN];
    if (jobq_cache_lookup(s->q, key, &doc, &age, id)) {
        json_error_t je;
        json_t *d = json_loads(doc, 0, &je);
        json_t *o2 = json_object();
        json_object_set_new(o2, "id", json_string(id));
        json_object_set_new(o2, "state", json_string("done"));
        json_object_set_new(o2, "cached", json_true());
        json_object_set_new(o2, "age_s", json_real(floor(age * 1000) / 1000));
        json_object_set_new(o2, "document", d ? d : json_null());
        char loc[64];
        snprintf(loc, sizeof loc, "/jobs/%s", id);
        json_object_set_new(o2, "location", json_string(loc));
        http_reply_json(r, 200, o2);
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
    if (!(req = request_dump(&o))) {
        http_reply_error(r, 500, NULL, "out of memory");
        goto cleanup;
    }
    struct jobq_submit sub = {.request = req, .key = key, .deadline_ms = s->cfg.deadline_ms, .tag = "measure"};
    unsigned pos = 0;
    int joined = 0;
    char err[ERR_LEN];
    int rc = jobq_submit(s->q, &sub, id, &pos, &joined, err);
    if (rc == DV_EFULL) {
        double per_job = ws.jobs ? ws.busy_s / (double)ws.jobs : 5.0;
        unsigned retry = (unsigned)ceil(per_job > 1 ? per_job : 1);
        char ra[16];
        snprintf(ra, sizeof ra, "%u", retry);
        http_req_add_header(r, "Retry-After", ra);
        json_t *x = json_object();
        json_object_set_new(x, "retry_after_s", json_integer(retry));
        http_reply_error_ex(r, 429, NULL, x, "the job queue is full (%u waiting); retry in %u s", s->cfg.queue, retry);
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
    char loc[64];
    snprintf(loc, sizeof loc, "/jobs/%s", id);
    http_req_add_header(r, "Location", loc);
    json_t *out = json_object();
    json_object_set_new(out, "id", json_string(id));
    json_object_set_new(out, "state", json_string(pos ? "queued" : "running"));
    json_object_set_new(out, "position", json_integer(pos));
    json_object_set_new(out, "location", json_string(loc));
    if (joined) json_object_set_new(out, "joined", json_true());
    http_reply_json(r, 202, out);
cleanup:
    free(key);
    free(req);
    free(doc);
}

/* ---- GET /jobs/{id} ---------------------------------------------------- */

static int valid_id(const char *id) {
    if (strlen(id) != JOBQ_ID_LEN - 1) return 0;
    for (const char *p = id; *p; p++)
        if (!isxdigit((unsigned char)*p) || isupper((unsigned char)*p)) return 0;
    return 1;
}

static void job_get(struct http_req *r, void *ctx) {
    struct service *s = ctx;
    const char *id = http_req_tail(r);
    struct job_view v;
    if (!valid_id(id) || jobq_status(s->q, id, &v) < 0) {
        http_reply_error(r, 404, "id", "no job %s (unknown, or finished long enough ago to be forgotten)", id);
        return;
    }
    char t[32];
    json_t *o = json_object();
    json_object_set_new(o, "id", json_string(v.id));
    json_object_set_new(o, "state", json_string(jobq_state_name(v.state)));
    if (v.state == JOB_QUEUED) json_object_set_new(o, "position", json_integer(v.position));
    service_utc(v.created, t, sizeof t);
    json_object_set_new(o, "created_utc", json_string(t));
    if (v.started > 0) {
        service_utc(v.started, t, sizeof t);
        json_object_set_new(o, "started_utc", json_string(t));
    }
    if (v.finished > 0) {
        service_utc(v.finished, t, sizeof t);
        json_object_set_new(o, "finished_utc", json_string(t));
        if (v.started > 0) json_object_set_new(o, "run_s", json_real(round((v.finished - v.started) * 1000) / 1000));
    }
    /* Microseconds: finer than CUDA event timing, and short in the text. */
    if (v.state == JOB_DONE) json_object_set_new(o, "gpu_time_ms", json_real(round(v.gpu_time_ms * 1000) / 1000));
    if (v.state == JOB_FAILED) {
        json_t *e = json_object();
        json_object_set_new(e, "kind", json_string(v.kind));
        json_object_set_new(e, "code", json_integer(v.code));
        json_object_set_new(e, "reason", json_string(v.error));
        json_object_set_new(o, "error", e);
    }
    if (v.document) {
        json_error_t je;
        json_t *d = json_loads(v.document, 0, &je);
        if (d) json_object_set_new(o, "document", d);
    }
    free(v.document);
    http_reply_json(r, 200, o);
}

/* ---- POST /analyze ----------------------------------------------------- */

static void analyze(struct http_req *r, void *ctx) {
    (void)ctx;
    struct dv_options o;
    if (parse_body(r, &o) < 0) return;
    struct dv_report *rep = experiment_report_create();
    char err[ERR_LEN] = "";
    if (!rep) {
        http_reply_error(r, 500, NULL, "out of memory");
        return;
    }
    if (experiment_plan(&o, rep, err) < 0) {
        http_reply_error(r, 400, "predicates", "%s", err);
        experiment_report_free(rep);
        return;
    }
    char *doc = report_json(rep, 0);
    experiment_report_free(rep);
    http_reply_take(r, 200, "application/json", doc);
}

/* ---- GET /predicates --------------------------------------------------- */

static pthread_once_t predicates_once = PTHREAD_ONCE_INIT;
static char *predicates_doc;
static char predicates_err[ERR_LEN];

static json_t *count_json(const struct dv_count *c) {
    json_t *o = json_object();
    json_object_set_new(o, "min", json_integer(c->min));
    json_object_set_new(o, "max", json_integer(c->max));
    json_object_set_new(o, "per_block", json_real(c->per_block));
    return o;
}

/* The built-ins analysed once as one Part 1 table at the lesson's block. */
static void predicates_build(void) {
    size_t n = 0;
    const struct predicate_builtin *b = predicate_builtins(&n);
    struct dv_options o;
    memset(&o, 0, sizeof o);
    experiment_defaults(&o);
    o.part = DV_PART_1;
    o.npredicates = 0;
    for (size_t i = 0; i < n && i < DV_MAX_ROWS; i++)
        snprintf(o.predicates[o.npredicates++], PREDICATE_TEXT_LEN, "%s", b[i].name);
    const char *field = NULL;
    struct dv_report *rep = experiment_report_create();
    if (!rep || options_validate(&o, OPTIONS_JSON, &field, predicates_err) < 0 ||
        experiment_plan(&o, rep, predicates_err) < 0) {
        if (!rep) snprintf(predicates_err, sizeof predicates_err, "out of memory");
        experiment_report_free(rep);
        return;
    }
    json_t *root = json_object();
    json_t *arr = json_array();
    json_object_set_new(root, "blocks", json_integer(o.blocks ? o.blocks : DV_DEFAULT_BLOCKS));
    json_object_set_new(root, "threads_per_block", json_integer(o.block_x * (o.block_y ? o.block_y : 1)));
    json_object_set_new(root, "baseline", json_string(o.baseline));
    const struct dv_table *t = rep->ntables ? &rep->tables[0] : NULL;
    for (size_t i = 0; i < n; i++) {
        json_t *p = json_object();
        json_object_set_new(p, "name", json_string(b[i].name));
        json_object_set_new(p, "label", json_string(b[i].label));
        json_object_set_new(p, "expr", json_string(b[i].expr));
        json_object_set_new(p, "mode", json_integer(b[i].mode));
        for (unsigned k = 0; t && k < t->nrows; k++) {
            const struct dv_row *row = &t->rows[k];
            if (strcmp(row->name, b[i].name) != 0) continue;
            json_t *a = json_object();
            json_object_set_new(a, "warps_per_block", json_integer(row->warps_per_block));
            json_object_set_new(a, "threads_per_block", json_integer(row->threads_per_block));
            json_object_set_new(a, "warps_split", count_json(&row->warps_split));
            json_object_set_new(a, "threads_on_a", count_json(&row->threads_on_a));
            json_object_set_new(a, "path_runs", count_json(&row->path_runs));
            if (isfinite(row->predicted_ratio))
                json_object_set_new(a, "predicted_ratio", json_real(row->predicted_ratio));
            else
                json_object_set_new(a, "predicted_ratio", json_null());
            json_object_set_new(a, "comparable", json_boolean(row->comparable));
            if (row->comparable_reason[0])
                json_object_set_new(a, "comparable_reason", json_string(row->comparable_reason));
            if (row->note[0]) json_object_set_new(a, "note", json_string(row->note));
            json_object_set_new(p, "analysis", a);
            break;
        }
        json_array_append_new(arr, p);
    }
    json_object_set_new(root, "predicates", arr);
    predicates_doc = jsonout_dumps(root, JSON_COMPACT);
    json_decref(root);
    experiment_report_free(rep);
}

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
    json_t *o = json_object();
    json_t *d = ws.device_json ? json_loads(ws.device_json, 0, NULL) : NULL;
    if (!d) {
        d = json_object();
        json_object_set_new(d, "present", json_false());
        json_object_set_new(d, "reason", json_string(ws.reason));
    }
    json_object_set_new(o, "device", d);
    json_t *w = json_object();
    json_object_set_new(w, "state", json_string(worker_state_name(ws.state)));
    json_object_set_new(w, "pid", json_integer(ws.pid));
    json_object_set_new(w, "restarts", json_integer((json_int_t)ws.restarts));
    json_object_set_new(w, "jobs", json_integer((json_int_t)ws.jobs));
    if (ws.reason[0]) json_object_set_new(w, "reason", json_string(ws.reason));
    json_object_set_new(o, "worker", w);
    free(ws.device_json);
    http_reply_json(r, 200, o);
}

static void healthz(struct http_req *r, void *ctx) {
    struct service *s = ctx;
    json_t *o = json_object();
    json_object_set_new(o, "status", json_string("ok"));
    json_object_set_new(o, "version", json_string(buildinfo_version()));
    json_object_set_new(o, "git_revision", json_string(buildinfo_git_revision()));
    json_object_set_new(o, "uptime_s", json_real(floor(((timeutil_now_ms() / 1e3) - s->started) * 1000) / 1000));
    /* What a page may do here without credentials (the widget reads it). */
    json_t *m = json_object();
    json_object_set_new(m, "token_required", json_boolean(s->cfg.token != NULL));
    json_object_set_new(m, "open_max_cost", json_real(s->cfg.token ? s->cfg.open_cost : s->cfg.max_cost));
    json_object_set_new(o, "measure", m);
    http_reply_json(r, 200, o);
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
    json_t *o = json_object();
    json_object_set_new(o, "ready", json_true());
    json_object_set_new(o, "worker_pid", json_integer(ws.pid));
    http_reply_json(r, 200, o);
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
    static const struct { const char *ext, *type; } types[] = {
        {".html", "text/html; charset=utf-8"}, {".js", "text/javascript; charset=utf-8"},
        {".mjs", "text/javascript; charset=utf-8"}, {".css", "text/css; charset=utf-8"},
        {".json", "application/json"}, {".svg", "image/svg+xml"}, {".png", "image/png"},
        {".ico", "image/x-icon"}, {".txt", "text/plain; charset=utf-8"}, {".yaml", "application/yaml"},
        {".map", "application/json"}, {".woff2", "font/woff2"}, {".wasm", "application/wasm"},
        {".webp", "image/webp"}, {".jpg", "image/jpeg"},
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

/* RFC 9110 13.2.2 for the static files: If-None-Match (weak comparison,
 * "*" or any listed tag) decides when present; else If-Modified-Since equal
 * to the Last-Modified sent (what browsers send back) means not modified. */
static int static_not_modified(const char *etag, const char *lm, const char *inm, const char *ims) {
    if (inm) {
        const char *p = inm;
        size_t n = strlen(etag);
        while (*p) {
            while (*p == ' ' || *p == ',') p++;
            if (*p == '*') return 1;
            if (strncmp(p, "W/", 2) == 0) p += 2;
            if (strncmp(p, etag, n) == 0 && (p[n] == '\0' || p[n] == ',' || p[n] == ' ')) return 1;
            while (*p && *p != ',') p++;
        }
        return 0;
    }
    return ims && strcmp(ims, lm) == 0;
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
    http_req_add_header(r, "ETag", etag);
    http_req_add_header(r, "Last-Modified", lm);
    if (static_not_modified(etag, lm, http_req_header(r, "If-None-Match"), http_req_header(r, "If-Modified-Since"))) {
        close(fd);
        http_reply(r, 304, NULL, "", 0);
        return;
    }
    http_reply_fd(r, 200, content_type(real), fd, (size_t)sb.st_size);
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
    /* The token check of POST /measure is in measure(): up to cfg.open_cost
     * it is open (rate limited), above it the token is required. */
    const unsigned post = HTTP_ROUTE_RATELIMIT | HTTP_ROUTE_BODY;
    if (http_route_add(h, "POST", "/measure", "/measure", post, measure, s, err) < 0 ||
        http_route_add(h, "GET", "/jobs/", "/jobs/{id}", HTTP_ROUTE_PREFIX, job_get, s, err) < 0 ||
        http_route_add(h, "POST", "/analyze", "/analyze", HTTP_ROUTE_BODY, analyze, s, err) < 0 ||
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
