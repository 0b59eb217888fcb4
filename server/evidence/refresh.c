/* refresh.c -- the evidence refresh: which suite of which refresh is where,
 * and the gates a night must pass to be published. The command-line client
 * that starts a refresh is cmd/refresh_cmd.c.
 *
 * Registry: a small array of refreshes (the newest REFRESH_KEEP), each with one
 * slot per suite, under one mutex. The job queue is reached only through the
 * struct refresh_queue callback, called with the mutex released. A job's
 * end is filed on the registry's own thread (the filer), in the order the
 * jobs ended, so the thread that reported it (the GPU worker's) goes on to
 * the next job at once: the gates and the evidence write (parsing the
 * document, drawing it, fsync) take tens of milliseconds a suite, which the
 * GPU would otherwise sit out. A slot stays "running" until its record is on
 * disk, so a client that sees "done" can fetch the evidence at once.
 * refresh_drain() waits for every filing queued; refresh_free() drains too.
 *
 * A refresh that cannot be queued at all (the queue full, the server
 * shutting down) is forgotten at once and files nothing: the caller answers
 * 429 or 503. Each refresh files under the GPU slug it was started with.
 */
#define _DEFAULT_SOURCE
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "kernels/base/ids.h"
#include "kernels/base/timeutil.h"
#include "api/jsonout.h"
#include "server/core/log.h"
#include "server/evidence/names.h"
#include "server/evidence/refresh.h"
#include "api/report.h"
#include "api/request.h"
#include "server/evidence/suites.h"

enum slot_state { SLOT_QUEUED = 0, SLOT_RUNNING, SLOT_DONE, SLOT_FAILED };
static const char *const slot_names[] = {"queued", "running", "done", "failed"};

struct slot {
    enum slot_state state;
    char job_id[REFRESH_JOB_ID_LEN];
    char reason[ERR_LEN];
    char warning[ERR_LEN]; /* filed, but what failed after its record was in place */
    char *request_json;
    char started_utc[32], finished_utc[32];
    int recorded; /* evidence written */
};

struct run {
    char id[REFRESH_ID_LEN];
    char gpu[EVIDENCE_SLUG_LEN]; /* the GPU its evidence is filed under */
    char gpu_name[128];
    char date[EVIDENCE_DATE_LEN];
    char created_utc[32], finished_utc[32];
    size_t nslots;
    struct slot *slots;
    unsigned long seq; /* creation order, for eviction */
};

/* What a slot's filing needs, copied under the lock when the slot is
 * claimed (the run may change while the record is written). */
struct claim {
    char date[EVIDENCE_DATE_LEN];
    char gpu[EVIDENCE_SLUG_LEN], gpu_name[128];
    char created[32], started[32];
    char *request; /* owned; NULL when the slot had none */
};

/* A job's end waiting for the filer. */
struct filing {
    struct filing *next;
    char id[REFRESH_ID_LEN];
    size_t index;
    int ok;
    char *document; /* owned; NULL for none */
    char reason[ERR_LEN];
    struct claim c;
};

struct refresh {
    pthread_mutex_t lock;
    struct evidence *ev;
    struct refresh_queue q;
    struct run *runs[REFRESH_KEEP];
    unsigned long seq;
    /* The filer: a queue of filings, under `lock`. */
    pthread_t filer;
    int filer_running; /* 0: filings are made by the thread that reports */
    int stopping;      /* refresh_free(): file what is queued, then end */
    int filing;        /* the filer is writing one now */
    struct filing *head, *tail;
    pthread_cond_t work, idle;
};

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

static void *filer_main(void *arg);

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
    pthread_cond_init(&r->work, NULL);
    pthread_cond_init(&r->idle, NULL);
    r->ev = ev;
    r->q = *q;
    /* Without a filer thread (none could be started) each end is filed by
     * the thread that reports it, as slowly but as correctly. */
    r->filer_running = pthread_create(&r->filer, NULL, filer_main, r) == 0;
    if (!r->filer_running) LOG(LOG_WARNING, "refresh: no filer thread; results are filed as jobs end");
    return r;
}

void refresh_drain(struct refresh *r) {
    if (!r) return;
    pthread_mutex_lock(&r->lock);
    while (r->head || r->filing) pthread_cond_wait(&r->idle, &r->lock);
    pthread_mutex_unlock(&r->lock);
}

void refresh_free(struct refresh *r) {
    if (!r) return;
    if (r->filer_running) {
        pthread_mutex_lock(&r->lock);
        r->stopping = 1;
        pthread_cond_signal(&r->work);
        pthread_mutex_unlock(&r->lock);
        pthread_join(r->filer, NULL); /* it files what is queued first */
    }
    for (size_t i = 0; i < REFRESH_KEEP; i++) run_free(r->runs[i]);
    pthread_cond_destroy(&r->work);
    pthread_cond_destroy(&r->idle);
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

/* Opens a refresh of `n` suites filed under `gpu`, or finds the one in
 * progress (then `*joined` is 1). Fills `id`. Returns 0, or what the queue's
 * room callback refused with (DV_EFULL, DV_ECLOSED), or -1, with `err`.
 * Lock held: two POSTs cannot both pass on the same room. */
static int run_open_locked(struct refresh *r, const char *gpu, const char *gpu_name, size_t n, char *id, int *joined,
                           char *err) {
    for (size_t i = 0; i < REFRESH_KEEP; i++) {
        if (r->runs[i] && run_active(r->runs[i])) {
            snprintf(id, REFRESH_ID_LEN, "%s", r->runs[i]->id);
            *joined = 1;
            return 0;
        }
    }
    if (r->q.room) {
        int rc = r->q.room(r->q.ctx, n, err);
        if (rc != 0) return rc;
    }
    struct run *run = calloc(1, sizeof *run);
    if (!run || !(run->slots = calloc(n, sizeof *run->slots))) {
        free(run);
        dv_seterr(err, "refresh: out of memory");
        return -1;
    }
    run->nslots = n;
    snprintf(run->gpu, sizeof run->gpu, "%s", gpu);
    snprintf(run->gpu_name, sizeof run->gpu_name, "%s", gpu_name ? gpu_name : "");
    if (make_id(run->id, err) != 0) {
        run_free(run);
        return -1;
    }
    timeutil_utc(time(NULL), run->created_utc, sizeof run->created_utc);
    names_date_of(time(NULL), run->date);
    run->seq = ++r->seq;
    if (run_insert(r, run) != 0) {
        run_free(run);
        dv_seterr(err, "refresh: too many refreshes in progress");
        return -1;
    }
    snprintf(id, REFRESH_ID_LEN, "%s", run->id);
    return 0;
}

/* The request of every suite of `run`: opts[i], and the JSON body its slot
 * keeps. A suite whose request cannot be made gets bad[i] and why[i]. Lock
 * held. */
static void requests_make_locked(struct run *run, struct dv_options *opts, char (*why)[ERR_LEN], int *bad) {
    for (size_t i = 0; i < run->nslots; i++) {
        if (suites_options(suites_get(i), &opts[i], why[i]) != 0) {
            bad[i] = 1;
            continue;
        }
        unsigned long failures = jsonout_failures();
        run->slots[i].request_json = request_dump(&opts[i]);
        if (run->slots[i].request_json && jsonout_failures() != failures) { /* it may be cut short */
            free(run->slots[i].request_json);
            run->slots[i].request_json = NULL;
        }
        if (!run->slots[i].request_json) {
            bad[i] = 1;
            snprintf(why[i], ERR_LEN, "out of memory");
        }
    }
}

/* Puts every suite of refresh `id` that has a request on the queue, with
 * the lock released around each enqueue (a job may end inside it). Returns
 * 0; or, when the first suite is refused because the queue is full or
 * closing, that code with `err` and nothing queued. A suite refused later is
 * filed as failed. */
static int queue_suites(struct refresh *r, const char *id, const struct dv_options *opts, char (*why)[ERR_LEN],
                        int *bad, size_t n, char *err) {
    size_t queued = 0;
    for (size_t i = 0; i < n; i++) {
        char job[REFRESH_JOB_ID_LEN] = "", qerr[ERR_LEN] = "";
        if (bad[i]) continue;
        /* The slot's request outlives this call: the registry owns it. */
        pthread_mutex_lock(&r->lock);
        struct run *cur = run_find(r, id);
        const char *body = cur ? cur->slots[i].request_json : NULL;
        char *copy = body ? strdup(body) : NULL;
        pthread_mutex_unlock(&r->lock);
        if (!copy) {
            bad[i] = 1;
            snprintf(why[i], ERR_LEN, "out of memory");
            continue;
        }
        int rc = r->q.enqueue(r->q.ctx, id, i, &opts[i], copy, job, qerr);
        free(copy);
        if (rc != 0 && queued == 0 && (rc == DV_EFULL || rc == DV_ECLOSED)) {
            dv_seterr(err, "%s", qerr[0] ? qerr : rc == DV_EFULL ? "the job queue is full" : "shutting down");
            return rc;
        }
        if (rc != 0) {
            char reason[ERR_LEN];
            snprintf(reason, sizeof reason, "not queued: %.400s", qerr[0] ? qerr : "the queue refused it");
            finish_slot(r, id, i, 0, NULL, reason);
            continue;
        }
        queued++;
        pthread_mutex_lock(&r->lock);
        if ((cur = run_find(r, id)) != NULL) snprintf(cur->slots[i].job_id, REFRESH_JOB_ID_LEN, "%s", job);
        pthread_mutex_unlock(&r->lock);
    }
    return 0;
}

int refresh_start(struct refresh *r, const char *gpu, const char *gpu_name, char *id, int *joined, char *err) {
    *joined = 0;
    if (!names_valid_slug(gpu)) {
        dv_seterr(err, "refresh: gpu: expected a GPU slug, got %.64s", gpu ? gpu : "(none)");
        return -1;
    }
    size_t n = suites_count();
    struct dv_options *opts = calloc(n, sizeof *opts);
    char(*why)[ERR_LEN] = calloc(n, ERR_LEN);
    int *bad = calloc(n, sizeof *bad);
    int rc = -1;
    if (!opts || !why || !bad) {
        dv_seterr(err, "refresh: out of memory");
        goto cleanup;
    }
    /* Requests are made before anything is queued, so a job that ends at
     * once finds its slot complete. */
    pthread_mutex_lock(&r->lock);
    rc = run_open_locked(r, gpu, gpu_name, n, id, joined, err);
    if (rc == 0 && !*joined) requests_make_locked(run_find(r, id), opts, why, bad);
    pthread_mutex_unlock(&r->lock);
    if (rc != 0 || *joined) goto cleanup;
    /* Suites whose request could not be made are filed only once another
     * suite is queued: a refresh refused at the door files nothing. */
    if ((rc = queue_suites(r, id, opts, why, bad, n, err)) != 0) {
        run_drop(r, id);
        goto cleanup;
    }
    for (size_t i = 0; i < n; i++)
        if (bad[i]) finish_slot(r, id, i, 0, NULL, why[i]);
cleanup:
    free(opts);
    free(why);
    free(bad);
    return rc;
}

void refresh_job_started(struct refresh *r, const char *id, size_t suite_index) {
    pthread_mutex_lock(&r->lock);
    struct run *run = run_find(r, id);
    if (run && suite_index < run->nslots && run->slots[suite_index].state == SLOT_QUEUED) {
        run->slots[suite_index].state = SLOT_RUNNING;
        timeutil_utc(time(NULL), run->slots[suite_index].started_utc, sizeof run->slots[suite_index].started_utc);
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
                          tb->id, row->name, row->check.mismatches, row->check.checked, row->check.first_mismatch,
                          row->check.expected, row->check.got);
                return -1;
            }
            /* How well the night knows the row's ratio (its 95% interval's
             * half-width; a lone baseline's median), not how much single
             * launches spread: two clusters or a few late launches spread a
             * row whose median is well known. A document from before the
             * intervals has only the spread to go by. */
            double hw = row->ratio_halfwidth;
            if ((int)i == tb->baseline_row && tb->nrows == 1 && row->time_ms.median > 0)
                hw = fmax(row->time_ms.median - row->median_ci_ms.lo, row->median_ci_ms.hi - row->time_ms.median) /
                     row->time_ms.median;
            else if ((int)i == tb->baseline_row) continue;
            if (isnan(row->ratio_halfwidth) && isnan(row->ratio_ci.lo)) {
                const double noise = row->time_ms.noise;
                if (!(noise <= s->noise_limit)) { /* NaN fails too */
                    dv_seterr(reason, "noise over limit: table %s row %s: %.2f%% > %.2f%% (%u samples)", tb->id,
                              row->name, noise * 100.0, s->noise_limit * 100.0, row->time_ms.samples);
                    return -1;
                }
            } else if (!(hw <= s->noise_limit)) { /* NaN fails too */
                dv_seterr(reason, "interval over limit: table %s row %s: ratio known to +-%.2f%% > %.2f%% (%u rounds)",
                          tb->id, row->name, hw * 100.0, s->noise_limit * 100.0, row->time_ms.samples);
                return -1;
            }
        }
    }
    return 0;
}

/* The publication gates of suite `suite_index` on the worker's document,
 * read once: into *doc its JSON (NULL when it is not JSON) and into *rep
 * its report (NULL unless it reads as divergence.v1), both for the record
 * to reuse (free them either way). Returns 0 when the gates pass, else -1
 * with `reason`. Where memory ran out both are NULL (what was read may be
 * cut short). */
static int gate_document(size_t suite_index, const char *document_json, json_t **doc, struct dv_report **rep,
                         char *reason) {
    const struct suite *s = suites_get(suite_index);
    *doc = NULL;
    *rep = NULL;
    if (!s) {
        dv_seterr(reason, "unknown suite %zu", suite_index);
        return -1;
    }
    if (!document_json) {
        dv_seterr(reason, "the worker returned no document");
        return -1;
    }
    char why[ERR_LEN];
    json_error_t je;
    unsigned long failures = jsonout_failures();
    *doc = jsonout_loadb(document_json, strlen(document_json), JSON_REJECT_DUPLICATES, &je);
    if (*doc && !(*rep = experiment_report_create())) {
        json_decref(*doc);
        *doc = NULL;
        dv_seterr(reason, "out of memory");
        return -1;
    }
    int parsed = *doc && report_parse_json(*doc, *rep, why) == 0;
    if (jsonout_failures() != failures || (!*doc && jsonout_oom(&je))) { /* what it read may be cut short */
        json_decref(*doc);
        experiment_report_free(*rep);
        *doc = NULL;
        *rep = NULL;
        dv_seterr(reason, "out of memory while reading the worker's document");
        return -1;
    }
    if (!parsed) {
        if (*doc) dv_seterr(reason, "the worker's document does not parse: %s", why);
        else dv_seterr(reason, "the worker's document does not parse: report: line %d, column %d: %s", je.line,
                       je.column, je.text);
        experiment_report_free(*rep);
        *rep = NULL;
        return -1;
    }
    return row_gate(s, *rep, reason);
}

int refresh_gate(size_t suite_index, const char *document_json, char *reason) {
    json_t *doc;
    struct dv_report *rep;
    int rc = gate_document(suite_index, document_json, &doc, &rep, reason);
    json_decref(doc);
    experiment_report_free(rep);
    return rc;
}

/* Claims slot `i` of refresh `id` for its one filing, copying what the
 * filing needs into `c`. Returns 1, or 0 when there is nothing to file (an
 * unknown refresh or suite, or a slot already claimed: a second report of
 * the same job is ignored). */
static int claim_slot(struct refresh *r, const char *id, size_t i, struct claim *c) {
    memset(c, 0, sizeof *c);
    pthread_mutex_lock(&r->lock);
    struct run *run = run_find(r, id);
    if (!run || i >= run->nslots || run->slots[i].recorded) {
        pthread_mutex_unlock(&r->lock);
        return 0;
    }
    run->slots[i].recorded = 1;
    memcpy(c->date, run->date, sizeof c->date);
    memcpy(c->gpu, run->gpu, sizeof c->gpu);
    memcpy(c->gpu_name, run->gpu_name, sizeof c->gpu_name);
    memcpy(c->created, run->created_utc, sizeof c->created);
    memcpy(c->started, run->slots[i].started_utc, sizeof c->started);
    if (run->slots[i].request_json) c->request = strdup(run->slots[i].request_json);
    pthread_mutex_unlock(&r->lock);
    return 1;
}

/* Files claimed slot `i` of refresh `id` (the gates, then the evidence) and
 * marks it ended; frees c->request. */
static void file_claimed(struct refresh *r, const char *id, size_t i, int ok, const char *document_json,
                         const char *reason, struct claim *c) {
    char why[ERR_LEN] = "";
    unsigned nok = 0, nfailed = 0;
    int finished = 0;
    json_t *doc = NULL; /* the document read once, for the gates and the record */
    struct dv_report *rep = NULL;
    if (ok && gate_document(i, document_json, &doc, &rep, why) != 0) ok = 0;
    else if (!ok) snprintf(why, sizeof why, "%s", reason && *reason ? reason : "the job failed");

    struct evidence_record rec = {
        .suite = suites_get(i)->name,
        .gpu = c->gpu,
        .gpu_name = c->gpu_name[0] ? c->gpu_name : NULL,
        .date = c->date,
        .ok = ok,
        .reason = ok ? NULL : why,
        .request_json = c->request,
        .queued_utc = c->created,
        .started_utc = c->started[0] ? c->started : NULL,
        .finished_utc = NULL,
        .document_json = document_json,
        .transcript = NULL,
        .document = doc,
        .report = rep,
    };
    char werr[ERR_LEN], warn[ERR_LEN] = "";
    int wrc = evidence_write(r->ev, &rec, warn, werr);
    json_decref(doc);
    experiment_report_free(rep);
    free(c->request);
    c->request = NULL;

    pthread_mutex_lock(&r->lock);
    struct run *run = run_find(r, id);
    if (run) {
        struct slot *sl = &run->slots[i];
        if (wrc != 0) {
            sl->state = SLOT_FAILED;
            if (ok) snprintf(sl->reason, sizeof sl->reason, "evidence not written: %.400s", werr);
            else snprintf(sl->reason, sizeof sl->reason, "%.200s; evidence not written: %.250s", why, werr);
        } else {
            /* Its record is in place: the night is published, done or
             * failed as the gates said, whatever failed after it. */
            sl->state = ok ? SLOT_DONE : SLOT_FAILED;
            if (!ok) snprintf(sl->reason, sizeof sl->reason, "%s", why);
            snprintf(sl->warning, sizeof sl->warning, "%s", warn);
        }
        timeutil_utc(time(NULL), sl->finished_utc, sizeof sl->finished_utc);
        snprintf(why, sizeof why, "%s", sl->state == SLOT_DONE ? "" : sl->reason);
        if (!run_active(run)) {
            timeutil_utc(time(NULL), run->finished_utc, sizeof run->finished_utc);
            for (size_t k = 0; k < run->nslots; k++) {
                nok += run->slots[k].state == SLOT_DONE;
                nfailed += run->slots[k].state == SLOT_FAILED;
            }
            finished = 1;
        }
    }
    pthread_mutex_unlock(&r->lock);
    if (why[0]) LOG(LOG_WARNING, "refresh %s: %s failed: %s", id, suites_get(i)->name, why);
    else LOG(LOG_INFO, "refresh %s: %s recorded", id, suites_get(i)->name);
    if (finished)
        LOG(nfailed ? LOG_WARNING : LOG_NOTICE, "refresh %s: finished: %u of %u suites ok, %u failed", id, nok,
            nok + nfailed, nfailed);
}

/* Files the result of slot `i` now, on this thread, and marks it ended. */
static void finish_slot(struct refresh *r, const char *id, size_t i, int ok, const char *document_json,
                        const char *reason) {
    struct claim c;
    if (claim_slot(r, id, i, &c)) file_claimed(r, id, i, ok, document_json, reason, &c);
}

static void *filer_main(void *arg) {
    struct refresh *r = arg;
    pthread_mutex_lock(&r->lock);
    for (;;) {
        while (!r->head && !r->stopping) pthread_cond_wait(&r->work, &r->lock);
        struct filing *f = r->head;
        if (!f) break; /* stopping, and nothing left to file */
        r->head = f->next;
        if (!r->head) r->tail = NULL;
        r->filing = 1;
        pthread_mutex_unlock(&r->lock);
        file_claimed(r, f->id, f->index, f->ok, f->document, f->reason, &f->c);
        free(f->document);
        free(f);
        pthread_mutex_lock(&r->lock);
        r->filing = 0;
        if (!r->head) pthread_cond_broadcast(&r->idle);
    }
    pthread_mutex_unlock(&r->lock);
    return NULL;
}

void refresh_job_done(struct refresh *r, const char *id, size_t suite_index, int ok, const char *document_json,
                      const char *reason) {
    struct claim c;
    if (!claim_slot(r, id, suite_index, &c)) return;
    struct filing *f = r->filer_running ? calloc(1, sizeof *f) : NULL;
    if (f && document_json && !(f->document = strdup(document_json))) {
        free(f);
        f = NULL;
    }
    if (!f) { /* no filer, or no memory for the copy: file it here */
        file_claimed(r, id, suite_index, ok, document_json, reason, &c);
        return;
    }
    snprintf(f->id, sizeof f->id, "%s", id);
    f->index = suite_index;
    f->ok = ok;
    snprintf(f->reason, sizeof f->reason, "%s", reason ? reason : "");
    f->c = c;
    pthread_mutex_lock(&r->lock);
    if (r->tail) r->tail->next = f;
    else r->head = f;
    r->tail = f;
    pthread_cond_signal(&r->work);
    pthread_mutex_unlock(&r->lock);
}

/* The status document of `run`, or NULL when it could not be built whole.
 * Lock held. */
static char *status_json_locked(const struct run *run) {
    int bad = 0, nok = 0, nfailed = 0;
    json_t *root = json_object(), *list = json_array();
    for (size_t i = 0; i < run->nslots; i++) {
        const struct slot *sl = &run->slots[i];
        const struct suite *s = suites_get(i);
        json_t *e = json_object();
        jsonout_put(e, "suite", jsonout_str(s->name), &bad);
        jsonout_put(e, "version", json_integer(s->version), &bad);
        jsonout_put(e, "state", jsonout_str(slot_names[sl->state]), &bad);
        jsonout_put(e, "job", sl->job_id[0] ? jsonout_str(sl->job_id) : json_null(), &bad);
        jsonout_put(e, "started_utc", sl->started_utc[0] ? jsonout_str(sl->started_utc) : json_null(), &bad);
        jsonout_put(e, "finished_utc", sl->finished_utc[0] ? jsonout_str(sl->finished_utc) : json_null(), &bad);
        if (sl->state == SLOT_FAILED) jsonout_put(e, "reason", jsonout_str(sl->reason), &bad);
        if (sl->warning[0]) jsonout_put(e, "warning", jsonout_str(sl->warning), &bad);
        if (sl->state == SLOT_DONE || sl->state == SLOT_FAILED) {
            char href[160];
            snprintf(href, sizeof href, "/evidence/%s/%s/%s.json", run->gpu, run->date, s->name);
            jsonout_put(e, "evidence", jsonout_str(href), &bad);
        }
        nok += sl->state == SLOT_DONE;
        nfailed += sl->state == SLOT_FAILED;
        jsonout_append(list, e, &bad);
    }
    jsonout_put(root, "id", jsonout_str(run->id), &bad);
    jsonout_put(root, "state", jsonout_str(run_active(run) ? "running" : "done"), &bad);
    jsonout_put(root, "gpu", jsonout_str(run->gpu), &bad);
    jsonout_put(root, "date", jsonout_str(run->date), &bad);
    jsonout_put(root, "created_utc", jsonout_str(run->created_utc), &bad);
    jsonout_put(root, "finished_utc", run->finished_utc[0] ? jsonout_str(run->finished_utc) : json_null(), &bad);
    jsonout_put(root, "ok", json_integer(nok), &bad);
    jsonout_put(root, "failed", json_integer(nfailed), &bad);
    jsonout_put(root, "suites", list, &bad);
    char *out = bad ? NULL : jsonout_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(root);
    return out;
}

char *refresh_status_json(struct refresh *r, const char *id, int *found) {
    pthread_mutex_lock(&r->lock);
    struct run *run = run_find(r, id);
    if (found) *found = run != NULL;
    char *out = run ? status_json_locked(run) : NULL;
    pthread_mutex_unlock(&r->lock);
    return out;
}

int refresh_file_measurement(const char *dir, const char *suite, const struct dv_options *o, const struct dv_report *r,
                             const char *doc, const char *started_utc, const char *night, int filed_as,
                             int replace_night, int *ok, char *why, char *err) {
    char slug[EVIDENCE_SLUG_LEN], date[EVIDENCE_DATE_LEN];
    int idx = suites_index(suite);
    if (idx < 0) {
        dv_seterr(err, "unknown suite %.64s", suite);
        return -1;
    }
    if (!r->device.name[0] || names_slug(r->device.name, slug, sizeof slug) != 0) {
        dv_seterr(err, "%s: the report names no GPU: nothing to file under", suite);
        return -1;
    }
    /* The date a refresh files under: the day it started (UTC). */
    snprintf(date, sizeof date, "%.10s", night ? night : started_utc);
    char *request = request_dump(o);
    if (!request) {
        dv_seterr(err, "out of memory");
        return -1;
    }
    why[0] = '\0';
    int good = refresh_gate((size_t)idx, doc, why) == 0;
    if (ok) *ok = good;
    struct evidence_record rec = {
        .suite = suite,
        .gpu = slug,
        .gpu_name = r->device.name,
        .date = names_valid_date(date) ? date : NULL,
        .filed_as = filed_as,
        .replace_night = replace_night,
        .ok = good,
        .reason = good ? NULL : why,
        .request_json = request,
        .queued_utc = started_utc,
        .started_utc = started_utc,
        .document_json = doc,
    };
    struct evidence *ev = evidence_open(dir, err);
    int rc = ev ? evidence_write(ev, &rec, NULL, err) : -1;
    evidence_close(ev);
    free(request);
    return rc;
}
