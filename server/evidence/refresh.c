/* refresh.c -- the evidence refresh: which suite of which refresh is where,
 * the gates a night must pass to be published, and the command-line client.
 *
 * Registry: a small array of refreshes (the newest REFRESH_KEEP), each with one
 * slot per suite, under one mutex. The job queue is reached only through the
 * struct refresh_queue callback, called with the mutex released, and the
 * evidence is written with it released too (fsync is slow); a slot stays
 * "running" until its record is on disk, so a client that sees "done" can
 * fetch the evidence at once.
 *
 * A refresh that cannot be queued at all (the queue full, the server
 * shutting down) is forgotten at once and files nothing: the caller answers
 * 429 or 503. Each refresh files under the GPU slug it was started with.
 *
 * Client: plain HTTP/1.1 over a socket (Connection: close, the body read to
 * the end, chunked bodies decoded), because the timer runs it on the same
 * host as the server. https is refused with a hint to use the local port.
 */
#define _DEFAULT_SOURCE
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "base/ids.h"
#include "base/timeutil.h"
#include "evidence/refresh.h"
#include "api/report.h"
#include "api/request.h"
#include "evidence/suites.h"

enum slot_state { SLOT_QUEUED = 0, SLOT_RUNNING, SLOT_DONE, SLOT_FAILED };
static const char *const slot_names[] = {"queued", "running", "done", "failed"};

struct slot {
    int state;
    char job_id[REFRESH_JOB_ID_LEN];
    char reason[ERR_LEN];
    char *request_json;
    char started_utc[32], finished_utc[32];
    int recorded; /* evidence written */
};

struct run {
    char id[REFRESH_ID_LEN];
    char gpu[EVIDENCE_SLUG_LEN];  /* the GPU its evidence is filed under */
    char gpu_name[128];
    char date[EVIDENCE_DATE_LEN];
    char created_utc[32], finished_utc[32];
    size_t nslots;
    struct slot *slots;
    unsigned long seq; /* creation order, for eviction */
};

struct refresh {
    pthread_mutex_t lock;
    struct evidence *ev;
    struct refresh_queue q;
    struct run *runs[REFRESH_KEEP];
    unsigned long seq;
};

static void utc_now(char *out, size_t len) { timeutil_utc(time(NULL), out, len); }

static void run_free(struct run *run) {
    if (!run) return;
    for (size_t i = 0; i < run->nslots; i++) free(run->slots[i].request_json);
    free(run->slots);
    free(run);
}

static int run_active(const struct run *run) {
    for (size_t i = 0; i < run->nslots; i++)
        if (run->slots[i].state == SLOT_QUEUED || run->slots[i].state == SLOT_RUNNING) return 1;
    return 0;
}

static struct run *run_find(struct refresh *r, const char *id) {
    if (!id) return NULL;
    for (size_t i = 0; i < REFRESH_KEEP; i++)
        if (r->runs[i] && strcmp(r->runs[i]->id, id) == 0) return r->runs[i];
    return NULL;
}

/* A fresh refresh id, "r" and 16 hex digits (base/ids.h). */
static int make_id(char *id, char *err) { return ids_random_hex("r", 8, id, REFRESH_ID_LEN, err); }

struct refresh *refresh_create(struct evidence *ev, const struct refresh_queue *q, char *err) {
    if (!ev || !q || !q->enqueue) {
        dv_seterr(err, "refresh: an evidence store and a queue are required");
        return NULL;
    }
    struct refresh *r = calloc(1, sizeof *r);
    if (!r) {
        dv_seterr(err, "refresh: out of memory");
        return NULL;
    }
    pthread_mutex_init(&r->lock, NULL);
    r->ev = ev;
    r->q = *q;
    return r;
}

void refresh_free(struct refresh *r) {
    if (!r) return;
    for (size_t i = 0; i < REFRESH_KEEP; i++) run_free(r->runs[i]);
    pthread_mutex_destroy(&r->lock);
    free(r);
}

/* Puts `run` in a free place, or over the oldest finished refresh. Returns -1
 * when every place holds a refresh still in progress. Lock held. */
static int run_insert(struct refresh *r, struct run *run) {
    int victim = -1;
    for (int i = 0; i < REFRESH_KEEP; i++) {
        if (!r->runs[i]) {
            victim = i;
            break;
        }
        if (!run_active(r->runs[i]) && (victim < 0 || r->runs[i]->seq < r->runs[victim]->seq)) victim = i;
    }
    if (victim < 0) return -1;
    run_free(r->runs[victim]);
    r->runs[victim] = run;
    return 0;
}

static void finish_slot(struct refresh *r, const char *id, size_t i, int ok, const char *document_json,
                        const char *reason);

/* Forgets refresh `id` (nothing of it was queued or filed). */
static void run_drop(struct refresh *r, const char *id) {
    pthread_mutex_lock(&r->lock);
    for (size_t i = 0; i < REFRESH_KEEP; i++) {
        if (r->runs[i] && strcmp(r->runs[i]->id, id) == 0) {
            run_free(r->runs[i]);
            r->runs[i] = NULL;
        }
    }
    pthread_mutex_unlock(&r->lock);
}

int refresh_start(struct refresh *r, const char *gpu, const char *gpu_name, char *id, int *joined, char *err) {
    *joined = 0;
    if (!evidence_valid_slug(gpu)) {
        dv_seterr(err, "refresh: gpu: expected a GPU slug, got %.64s", gpu ? gpu : "(none)");
        return -1;
    }
    pthread_mutex_lock(&r->lock);
    for (size_t i = 0; i < REFRESH_KEEP; i++) {
        if (r->runs[i] && run_active(r->runs[i])) {
            snprintf(id, REFRESH_ID_LEN, "%s", r->runs[i]->id);
            *joined = 1;
            pthread_mutex_unlock(&r->lock);
            return 0;
        }
    }
    size_t n = suites_count();
    if (r->q.room) {
        /* Under the lock, so two POSTs cannot both pass on the same room. */
        int rc = r->q.room(r->q.ctx, n, err);
        if (rc != 0) {
            pthread_mutex_unlock(&r->lock);
            return rc;
        }
    }
    struct run *run = calloc(1, sizeof *run);
    if (!run || !(run->slots = calloc(n, sizeof *run->slots))) {
        free(run);
        pthread_mutex_unlock(&r->lock);
        dv_seterr(err, "refresh: out of memory");
        return -1;
    }
    run->nslots = n;
    snprintf(run->gpu, sizeof run->gpu, "%s", gpu);
    snprintf(run->gpu_name, sizeof run->gpu_name, "%s", gpu_name ? gpu_name : "");
    if (make_id(run->id, err) != 0) {
        run_free(run);
        pthread_mutex_unlock(&r->lock);
        return -1;
    }
    utc_now(run->created_utc, sizeof run->created_utc);
    evidence_date_of(time(NULL), run->date);
    run->seq = ++r->seq;
    if (run_insert(r, run) != 0) {
        run_free(run);
        pthread_mutex_unlock(&r->lock);
        dv_seterr(err, "refresh: too many refreshes in progress");
        return -1;
    }
    snprintf(id, REFRESH_ID_LEN, "%s", run->id);
    char rid[REFRESH_ID_LEN];
    memcpy(rid, run->id, sizeof rid);
    /* Requests are built before anything is queued, so a job that ends at
     * once finds its slot complete. */
    struct dv_options *opts = calloc(n, sizeof *opts);
    char (*why)[ERR_LEN] = calloc(n, ERR_LEN);
    int *bad = calloc(n, sizeof *bad);
    if (!opts || !why || !bad) {
        free(opts);
        free(why);
        free(bad);
        for (size_t i = 0; i < n; i++) run->slots[i].state = SLOT_FAILED;
        pthread_mutex_unlock(&r->lock);
        dv_seterr(err, "refresh: out of memory");
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        if (suites_options(suites_get(i), &opts[i], why[i]) != 0) {
            bad[i] = 1;
            continue;
        }
        run->slots[i].request_json = request_dump(&opts[i]);
        if (!run->slots[i].request_json) {
            bad[i] = 1;
            snprintf(why[i], ERR_LEN, "out of memory");
        }
    }
    pthread_mutex_unlock(&r->lock);

    /* Suites whose request could not be made are filed only once another
     * suite is queued: a refresh refused at the door files nothing. */
    size_t queued = 0;
    int refused = 0;
    for (size_t i = 0; i < n && !refused; i++) {
        char job[REFRESH_JOB_ID_LEN] = "", qerr[ERR_LEN] = "";
        if (bad[i]) continue;
        /* The slot's request outlives this call: the registry owns it. */
        pthread_mutex_lock(&r->lock);
        struct run *cur = run_find(r, rid);
        const char *body = cur ? cur->slots[i].request_json : NULL;
        char *copy = body ? strdup(body) : NULL;
        pthread_mutex_unlock(&r->lock);
        if (!copy) {
            bad[i] = 1;
            snprintf(why[i], ERR_LEN, "out of memory");
            continue;
        }
        int rc = r->q.enqueue(r->q.ctx, rid, i, &opts[i], copy, job, qerr);
        free(copy);
        if (rc != 0 && queued == 0 && (rc == DV_EFULL || rc == DV_ECLOSED)) {
            refused = rc;
            dv_seterr(err, "%s", qerr[0] ? qerr : rc == DV_EFULL ? "the job queue is full" : "shutting down");
            break;
        }
        if (rc != 0) {
            char reason[ERR_LEN];
            snprintf(reason, sizeof reason, "not queued: %.400s", qerr[0] ? qerr : "the queue refused it");
            finish_slot(r, rid, i, 0, NULL, reason);
            continue;
        }
        queued++;
        pthread_mutex_lock(&r->lock);
        if ((cur = run_find(r, rid)) != NULL) snprintf(cur->slots[i].job_id, REFRESH_JOB_ID_LEN, "%s", job);
        pthread_mutex_unlock(&r->lock);
    }
    if (refused) {
        free(opts);
        free(why);
        free(bad);
        run_drop(r, rid);
        return refused;
    }
    for (size_t i = 0; i < n; i++)
        if (bad[i]) finish_slot(r, rid, i, 0, NULL, why[i]);
    free(opts);
    free(why);
    free(bad);
    return 0;
}

void refresh_job_started(struct refresh *r, const char *id, size_t suite_index) {
    pthread_mutex_lock(&r->lock);
    struct run *run = run_find(r, id);
    if (run && suite_index < run->nslots && run->slots[suite_index].state == SLOT_QUEUED) {
        run->slots[suite_index].state = SLOT_RUNNING;
        utc_now(run->slots[suite_index].started_utc, sizeof run->slots[suite_index].started_utc);
    }
    pthread_mutex_unlock(&r->lock);
}

static int row_gate(const struct suite *s, const struct dv_report *rep, char *reason) {
    if (!rep->measured) {
        dv_seterr(reason, "the document has no measurements");
        return -1;
    }
    if (rep->ntables == 0) {
        dv_seterr(reason, "the document has no tables");
        return -1;
    }
    for (unsigned t = 0; t < rep->ntables && t < DV_MAX_TABLES; t++) {
        const struct dv_table *tb = &rep->tables[t];
        for (unsigned i = 0; i < tb->nrows && i < DV_MAX_ROWS; i++) {
            const struct dv_row *row = &tb->rows[i];
            if (!row->measured) {
                dv_seterr(reason, "table %s row %s: not measured", tb->id, row->name);
                return -1;
            }
            if (!row->check.ok) {
                dv_seterr(reason,
                          "correctness gate failed: table %s row %s: %llu of %llu elements differ from "
                          "the CPU reference (first at thread %lld: expected %g, got %g)",
                          tb->id, row->name, row->check.mismatches, row->check.checked,
                          row->check.first_mismatch, row->check.expected, row->check.got);
                return -1;
            }
            double noise = row->time_ms.noise;
            if (!(noise <= s->noise_limit)) { /* NaN fails too */
                dv_seterr(reason, "noise over limit: table %s row %s: %.2f%% > %.2f%% (%u samples)", tb->id,
                          row->name, noise * 100.0, s->noise_limit * 100.0, row->time_ms.samples);
                return -1;
            }
        }
    }
    return 0;
}

int refresh_gate(size_t suite_index, const char *document_json, char *reason) {
    const struct suite *s = suites_get(suite_index);
    if (!s) {
        dv_seterr(reason, "unknown suite %zu", suite_index);
        return -1;
    }
    if (!document_json) {
        dv_seterr(reason, "the worker returned no document");
        return -1;
    }
    struct dv_report *rep = experiment_report_create();
    if (!rep) {
        dv_seterr(reason, "out of memory");
        return -1;
    }
    char why[ERR_LEN];
    int rc;
    if (report_parse(document_json, strlen(document_json), rep, why) != 0) {
        dv_seterr(reason, "the worker's document does not parse: %s", why);
        rc = -1;
    } else {
        rc = row_gate(s, rep, reason);
    }
    experiment_report_free(rep);
    return rc;
}

/* Files the result of slot `i` and marks it ended. */
static void finish_slot(struct refresh *r, const char *id, size_t i, int ok, const char *document_json,
                        const char *reason) {
    char why[ERR_LEN] = "", date[EVIDENCE_DATE_LEN], created[32], started[32], *request = NULL;
    char gpu[EVIDENCE_SLUG_LEN], gpu_name[128];
    pthread_mutex_lock(&r->lock);
    struct run *run = run_find(r, id);
    if (!run || i >= run->nslots || run->slots[i].recorded) {
        pthread_mutex_unlock(&r->lock);
        return;
    }
    run->slots[i].recorded = 1; /* a second report of the same job is ignored */
    memcpy(date, run->date, sizeof date);
    memcpy(gpu, run->gpu, sizeof gpu);
    memcpy(gpu_name, run->gpu_name, sizeof gpu_name);
    memcpy(created, run->created_utc, sizeof created);
    memcpy(started, run->slots[i].started_utc, sizeof started);
    if (run->slots[i].request_json) request = strdup(run->slots[i].request_json);
    pthread_mutex_unlock(&r->lock);

    if (ok && refresh_gate(i, document_json, why) != 0) ok = 0;
    else if (!ok) snprintf(why, sizeof why, "%s", reason && *reason ? reason : "the job failed");

    struct evidence_record rec = {
        .suite = suites_get(i)->name,
        .gpu = gpu,
        .gpu_name = gpu_name[0] ? gpu_name : NULL,
        .date = date,
        .ok = ok,
        .reason = ok ? NULL : why,
        .request_json = request,
        .queued_utc = created,
        .started_utc = started[0] ? started : NULL,
        .finished_utc = NULL,
        .document_json = document_json,
        .transcript = NULL,
    };
    char werr[ERR_LEN];
    int wrc = evidence_write(r->ev, &rec, werr);
    free(request);

    pthread_mutex_lock(&r->lock);
    if ((run = run_find(r, id)) != NULL) {
        struct slot *sl = &run->slots[i];
        if (wrc != 0) {
            sl->state = SLOT_FAILED;
            if (ok) snprintf(sl->reason, sizeof sl->reason, "evidence not written: %.400s", werr);
            else snprintf(sl->reason, sizeof sl->reason, "%.200s; evidence not written: %.250s", why, werr);
        } else {
            sl->state = ok ? SLOT_DONE : SLOT_FAILED;
            if (!ok) snprintf(sl->reason, sizeof sl->reason, "%s", why);
        }
        utc_now(sl->finished_utc, sizeof sl->finished_utc);
        if (!run_active(run)) utc_now(run->finished_utc, sizeof run->finished_utc);
    }
    pthread_mutex_unlock(&r->lock);
}

void refresh_job_done(struct refresh *r, const char *id, size_t suite_index, int ok,
                      const char *document_json, const char *reason) {
    finish_slot(r, id, suite_index, ok, document_json, reason);
}

char *refresh_status_json(struct refresh *r, const char *id) {
    char *out = NULL;
    pthread_mutex_lock(&r->lock);
    struct run *run = run_find(r, id);
    if (!run) goto done;
    json_t *root = json_object(), *list = json_array();
    if (!root || !list) {
        json_decref(root);
        json_decref(list);
        goto done;
    }
    int nok = 0, nfailed = 0;
    for (size_t i = 0; i < run->nslots; i++) {
        const struct slot *sl = &run->slots[i];
        const struct suite *s = suites_get(i);
        json_t *e = json_object();
        if (!e) continue;
        json_object_set_new(e, "suite", json_string(s->name));
        json_object_set_new(e, "version", json_integer(s->version));
        json_object_set_new(e, "state", json_string(slot_names[sl->state]));
        json_object_set_new(e, "job", sl->job_id[0] ? json_string(sl->job_id) : json_null());
        json_object_set_new(e, "started_utc", sl->started_utc[0] ? json_string(sl->started_utc) : json_null());
        json_object_set_new(e, "finished_utc", sl->finished_utc[0] ? json_string(sl->finished_utc) : json_null());
        if (sl->state == SLOT_FAILED) json_object_set_new(e, "reason", json_string(sl->reason));
        if (sl->state == SLOT_DONE || sl->state == SLOT_FAILED) {
            char href[160];
            snprintf(href, sizeof href, "/evidence/%s/%s/%s.json", run->gpu, run->date, s->name);
            json_object_set_new(e, "evidence", json_string(href));
        }
        nok += sl->state == SLOT_DONE;
        nfailed += sl->state == SLOT_FAILED;
        json_array_append_new(list, e);
    }
    json_object_set_new(root, "id", json_string(run->id));
    json_object_set_new(root, "state", json_string(run_active(run) ? "running" : "done"));
    json_object_set_new(root, "gpu", json_string(run->gpu));
    json_object_set_new(root, "date", json_string(run->date));
    json_object_set_new(root, "created_utc", json_string(run->created_utc));
    json_object_set_new(root, "finished_utc", run->finished_utc[0] ? json_string(run->finished_utc) : json_null());
    json_object_set_new(root, "ok", json_integer(nok));
    json_object_set_new(root, "failed", json_integer(nfailed));
    json_object_set_new(root, "suites", list);
    out = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(root);
done:
    pthread_mutex_unlock(&r->lock);
    return out;
}

/* ---- the client --------------------------------------------------------- */

struct url {
    char host[256];
    char port[8];
    char base[256]; /* path prefix without a trailing slash, "" for none */
};

static int url_parse(const char *s, struct url *u, char *err) {
    memset(u, 0, sizeof *u);
    if (strncasecmp(s, "https://", 8) == 0) {
        dv_seterr(err,
                  "--server %s: https is not supported by this client; run it on the server's host "
                  "and point it at the local port, e.g. --server http://127.0.0.1:8080",
                  s);
        return -1;
    }
    if (strncasecmp(s, "http://", 7) != 0) {
        dv_seterr(err, "--server %s: expected http://HOST[:PORT]", s);
        return -1;
    }
    const char *p = s + 7, *end;
    if (*p == '[') { /* [v6]:port */
        end = strchr(p, ']');
        if (!end || (size_t)(end - p - 1) >= sizeof u->host || end == p + 1) goto bad;
        memcpy(u->host, p + 1, (size_t)(end - p - 1));
        p = end + 1;
    } else {
        end = p + strcspn(p, ":/");
        if (end == p || (size_t)(end - p) >= sizeof u->host) goto bad;
        memcpy(u->host, p, (size_t)(end - p));
        p = end;
    }
    strcpy(u->port, "80");
    if (*p == ':') {
        p++;
        size_t n = strspn(p, "0123456789");
        if (n == 0 || n > 5 || atoi(p) < 1 || atoi(p) > 65535) goto bad;
        memcpy(u->port, p, n);
        u->port[n] = '\0';
        p += n;
    }
    if (*p && *p != '/') goto bad;
    if (strlen(p) >= sizeof u->base) goto bad;
    strcpy(u->base, p);
    size_t n = strlen(u->base);
    while (n > 0 && u->base[n - 1] == '/') u->base[--n] = '\0';
    return 0;
bad:
    dv_seterr(err, "--server %s: expected http://HOST[:PORT]", s);
    return -1;
}

/* Decodes a chunked body in place; returns its length or -1. */
static long dechunk(char *body, size_t len) {
    char *in = body, *end = body + len, *out = body;
    for (;;) {
        char *eol = strstr(in, "\r\n");
        if (!eol || eol >= end) return -1;
        char *stop;
        unsigned long n = strtoul(in, &stop, 16);
        if (stop == in) return -1;
        in = eol + 2;
        if (n == 0) break;
        if ((size_t)(end - in) < n) return -1;
        memmove(out, in, n);
        out += n;
        in += n;
        if (end - in >= 2 && in[0] == '\r' && in[1] == '\n') in += 2;
    }
    *out = '\0';
    return out - body;
}

/* One request. Returns the HTTP status and a malloc()ed body, or -1 with
 * `err` for connection and protocol errors. */
static int http_call(const struct url *u, const char *method, const char *path, const char *token,
                     char **body, char *err) {
    *body = NULL;
    struct addrinfo hints = {0}, *res = NULL;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_family = AF_UNSPEC;
    int gai = getaddrinfo(u->host, u->port, &hints, &res);
    if (gai != 0) {
        dv_seterr(err, "%s: %s", u->host, gai_strerror(gai));
        return -1;
    }
    int fd = -1, cerr = 0;
    for (struct addrinfo *a = res; a; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0) continue;
        struct timeval tv = {30, 0};
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
        if (connect(fd, a->ai_addr, a->ai_addrlen) == 0) break;
        cerr = errno;
        close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    if (fd < 0) {
        dv_seterr(err, "connect %s:%s: %s", u->host, u->port, strerror(cerr ? cerr : ECONNREFUSED));
        return -1;
    }
    char req[2048], auth[600] = "";
    if (token && *token) snprintf(auth, sizeof auth, "Authorization: Bearer %.512s\r\n", token);
    int n = snprintf(req, sizeof req,
                     "%s %s%s HTTP/1.1\r\nHost: %s:%s\r\nUser-Agent: divergence-refresh\r\n"
                     "Accept: application/json\r\n%s%sConnection: close\r\n\r\n",
                     method, u->base, path, u->host, u->port, auth,
                     strcmp(method, "POST") == 0 ? "Content-Type: application/json\r\nContent-Length: 0\r\n" : "");
    if (n < 0 || (size_t)n >= sizeof req) {
        close(fd);
        dv_seterr(err, "request too long");
        return -1;
    }
    for (size_t off = 0; off < (size_t)n;) {
        ssize_t w = send(fd, req + off, (size_t)n - off, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            dv_seterr(err, "send to %s:%s: %s", u->host, u->port, strerror(errno));
            close(fd);
            return -1;
        }
        off += (size_t)w;
    }
    size_t cap = 8192, len = 0;
    char *buf = malloc(cap);
    if (!buf) {
        close(fd);
        dv_seterr(err, "out of memory");
        return -1;
    }
    for (;;) {
        if (len + 1 >= cap) {
            if (cap >= (16u << 20)) {
                free(buf);
                close(fd);
                dv_seterr(err, "response from %s:%s over 16 MiB", u->host, u->port);
                return -1;
            }
            char *bigger = realloc(buf, cap * 2);
            if (!bigger) {
                free(buf);
                close(fd);
                dv_seterr(err, "out of memory");
                return -1;
            }
            buf = bigger;
            cap *= 2;
        }
        ssize_t r = recv(fd, buf + len, cap - len - 1, 0);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
            dv_seterr(err, "read from %s:%s: %s", u->host, u->port,
                      errno == EAGAIN || errno == EWOULDBLOCK ? "timed out" : strerror(errno));
            free(buf);
            close(fd);
            return -1;
        }
        if (r == 0) break;
        len += (size_t)r;
    }
    close(fd);
    buf[len] = '\0';
    int status = 0;
    char *hend = strstr(buf, "\r\n\r\n");
    if (sscanf(buf, "HTTP/1.%*d %d", &status) != 1 || !hend) {
        dv_seterr(err, "%s:%s did not answer HTTP", u->host, u->port);
        free(buf);
        return -1;
    }
    *hend = '\0';
    char *b = hend + 4;
    size_t blen = len - (size_t)(b - buf);
    int chunked = 0;
    for (char *h = strstr(buf, "\r\n"); h; h = strstr(h + 2, "\r\n")) {
        if (strncasecmp(h + 2, "Transfer-Encoding:", 18) == 0 && strstr(h + 2, "chunked")) chunked = 1;
    }
    if (chunked) {
        long m = dechunk(b, blen);
        if (m < 0) {
            dv_seterr(err, "%s:%s sent a malformed chunked body", u->host, u->port);
            free(buf);
            return -1;
        }
        blen = (size_t)m;
    }
    *body = malloc(blen + 1);
    if (!*body) {
        free(buf);
        dv_seterr(err, "out of memory");
        return -1;
    }
    memcpy(*body, b, blen);
    (*body)[blen] = '\0';
    free(buf);
    return status;
}

/* The reason in an error body: {"error": {"reason": ...}} (the service's
 * shape) or {"error": "..."}. */
static const char *error_of(json_t *j) {
    json_t *e = json_object_get(j, "error");
    if (json_is_object(e)) return json_string_value(json_object_get(e, "reason"));
    return json_string_value(e);
}

static void usage(FILE *f) {
    fprintf(f,
            "usage: divergence refresh --server http://HOST:PORT [--token TOKEN] [--timeout SECONDS]\n"
            "                          [--interval SECONDS]\n"
            "Measures every evidence suite on the server, waits, prints a summary.\n"
            "  --server    the service, http only (default port 80)\n"
            "  --token     bearer token (default: $DIVERGENCE_TOKEN)\n"
            "  --timeout   give up waiting after this many seconds (default 3600)\n"
            "  --interval  seconds between progress polls (default 2)\n"
            "Exit status: 0 every suite good, 1 a suite failed or the wait timed out,\n"
            "2 usage, connection or HTTP errors.\n");
}

static void sleep_s(double s) {
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

int refresh_main(int argc, char **argv) {
    const char *server = NULL, *token = getenv("DIVERGENCE_TOKEN");
    double timeout = 3600.0, interval = 2.0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = NULL;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            return 0;
        }
        const char *names[] = {"--server", "--token", "--timeout", "--interval"};
        int which = -1;
        for (int k = 0; k < 4; k++) {
            size_t n = strlen(names[k]);
            if (strncmp(a, names[k], n) == 0 && (a[n] == '\0' || a[n] == '=')) {
                which = k;
                v = a[n] == '=' ? a + n + 1 : (i + 1 < argc ? argv[++i] : NULL);
            }
        }
        if (which < 0) {
            fprintf(stderr, "refresh: unknown option %s\n", a);
            usage(stderr);
            return 2;
        }
        if (!v) {
            fprintf(stderr, "refresh: %s needs a value\n", a);
            return 2;
        }
        char *end;
        switch (which) {
        case 0: server = v; break;
        case 1: token = v; break;
        default: {
            double d = strtod(v, &end);
            if (*end || !(d > 0) || d > 864000) {
                fprintf(stderr, "refresh: %s: expected seconds in (0, 864000], got %s\n", names[which], v);
                return 2;
            }
            if (which == 2) timeout = d;
            else interval = d;
        }
        }
    }
    if (!server) {
        fprintf(stderr, "refresh: --server is required\n");
        usage(stderr);
        return 2;
    }
    struct url u;
    char err[ERR_LEN];
    if (url_parse(server, &u, err) != 0) {
        fprintf(stderr, "refresh: %s\n", err);
        return 2;
    }

    char *body = NULL;
    int status = http_call(&u, "POST", "/evidence/refresh", token, &body, err);
    if (status < 0) {
        fprintf(stderr, "refresh: %s\n", err);
        return 2;
    }
    json_error_t je;
    json_t *j = json_loads(body, JSON_REJECT_DUPLICATES, &je);
    if (status != 202 && status != 200) {
        const char *why = j ? error_of(j) : NULL;
        fprintf(stderr, "refresh: POST /evidence/refresh: HTTP %d: %s\n", status, why ? why : body);
        json_decref(j);
        free(body);
        return 2;
    }
    const char *idv = json_string_value(json_object_get(j, "id"));
    char id[REFRESH_ID_LEN];
    if (!idv || strlen(idv) >= sizeof id || strspn(idv, "abcdefghijklmnopqrstuvwxyz0123456789-") != strlen(idv)) {
        fprintf(stderr, "refresh: POST /evidence/refresh: no refresh id in the answer: %s\n", body);
        json_decref(j);
        free(body);
        return 2;
    }
    strcpy(id, idv);
    json_decref(j);
    free(body);
    printf("refresh %s started on %s\n", id, server);
    fflush(stdout);

    char path[64];
    snprintf(path, sizeof path, "/evidence/refresh/%s", id);
    const double t0 = timeutil_now_ms();
    char *last_states = NULL;
    json_t *final = NULL;
    int conn_failures = 0;
    for (;;) {
        status = http_call(&u, "GET", path, token, &body, err);
        if (status < 0) {
            /* The server may be restarting: a few misses are tolerated. */
            if (++conn_failures >= 5) {
                fprintf(stderr, "refresh: %s\n", err);
                free(last_states);
                return 2;
            }
        } else {
            conn_failures = 0;
            j = json_loads(body, JSON_REJECT_DUPLICATES, &je);
            if (status != 200 || !j) {
                const char *why = j ? error_of(j) : NULL;
                fprintf(stderr, "refresh: GET %s: HTTP %d: %s\n", path, status, why ? why : body);
                json_decref(j);
                free(body);
                free(last_states);
                return 2;
            }
            free(body);
            /* Progress: one line per suite whose state changed. */
            json_t *suites = json_object_get(j, "suites"), *e;
            size_t k;
            size_t ns = json_array_size(suites);
            if (!last_states) last_states = calloc(ns + 1, 1);
            json_array_foreach(suites, k, e) {
                const char *st = json_string_value(json_object_get(e, "state"));
                char c = st ? st[0] : '?';
                if (last_states && k < ns && last_states[k] != c) {
                    last_states[k] = c;
                    printf("  %-20s %s\n", json_string_value(json_object_get(e, "suite")), st ? st : "?");
                    fflush(stdout);
                }
            }
            const char *state = json_string_value(json_object_get(j, "state"));
            if (state && strcmp(state, "done") == 0) {
                final = j;
                break;
            }
            json_decref(j);
        }
        double elapsed = (timeutil_now_ms() - t0) / 1e3;
        if (elapsed >= timeout) {
            fprintf(stderr, "refresh %s: timed out after %.0f s; it goes on on the server (GET %s)\n", id,
                    elapsed, path);
            free(last_states);
            return 1;
        }
        sleep_s(interval < timeout - elapsed ? interval : timeout - elapsed);
    }
    free(last_states);

    printf("refresh %s (%s):\n", id, json_string_value(json_object_get(final, "date")));
    json_t *suites = json_object_get(final, "suites"), *e;
    size_t k;
    int failed = 0, ok = 0;
    json_array_foreach(suites, k, e) {
        const char *name = json_string_value(json_object_get(e, "suite"));
        const char *st = json_string_value(json_object_get(e, "state"));
        int good = st && strcmp(st, "done") == 0;
        ok += good;
        failed += !good;
        const char *detail = good ? json_string_value(json_object_get(e, "evidence"))
                                  : json_string_value(json_object_get(e, "reason"));
        printf("  %-20s %-6s %s\n", name ? name : "?", good ? "ok" : "FAILED", detail ? detail : "");
    }
    printf("%d ok, %d failed\n", ok, failed);
    json_decref(final);
    return failed || ok == 0 ? 1 : 0;
}
