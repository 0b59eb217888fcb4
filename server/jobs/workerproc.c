/* workerproc.c -- see workerproc.h. Only this process (and the CLI's direct
 * measure command) calls into kernels/gpu (measure_run_session), so only it
 * ever touches CUDA. One measurement session (gpu/session.h) lives as long
 * as the process: the device query, buffers, masks, reference chains and
 * the hardware-counter profiler of one job are there for the next. Each
 * reply carries the host time of the job's testimony passes for /metrics.
 * `--testimony off` makes every job skip them (no CUPTI is ever loaded):
 * a worker for a fleet that reads no counters, or the baseline of a
 * benchmark. A job that asks for instructions gets each row's profile
 * after all of that, from the cache or from one `divergence-gpu
 * instructions` process for the job's other rows (a batch: for its jobs'
 * rows together, jobs/instrproc.h), while
 * this process waits: nothing of its own runs on the GPU meanwhile, and
 * what the profiler patches lives and dies in the other process.
 * The profiles come from one long-lived `divergence-gpu instructions
 * --serve` child (jobs/instrserve.h), started before the hello and again
 * after one that died or was killed; DV_INSTRUCTIONS_SERVER=off in the
 * environment goes back to a process per job or batch.
 * `--disassembler PATH` and `--instructions-deadline-ms N` are passed to
 * that profiler; `--profile-cache DIR` (by default $CACHE_DIRECTORY/profiles
 * when systemd gives the unit one, `none` for memory alone) keeps its
 * profiles for the next worker (jobs/profilecache.h). */
#define _GNU_SOURCE
#include "server/jobs/workerproc.h"
#include "api/jsonout.h"
#include "server/core/log.h"
#include "server/jobs/instrproc.h"
#include "server/jobs/runest.h"
#include "server/jobs/wire.h"

#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/options.h"
#include "api/report.h"
#include "api/request.h"
#include "kernels/gpu/batch.h"
#include "kernels/gpu/device.h"
#include "kernels/gpu/measure.h"
#include "kernels/gpu/session.h"
#include "kernels/gpu/warmup.h"

/* Sends {"id", "ok": false, "code", "error"[, "document", "testimony_ms"]}
 * (wire.h; `document` taken, may be NULL). Returns -1 (nothing sent) when
 * the reply cannot be built whole or the pipe is gone. */
static int reply_error(const char *id, int code, const char *error, json_t *document, double testimony_ms) {
    char err[ERR_LEN];
    return wire_send(WIRE_FD_OUT, wire_reply_error(id, code, error, document, testimony_ms), err);
}

/* Where job `id`'s wall time went, one info line: what a job costs beyond
 * its timed GPU work, phase by phase (the instruction profiles come after
 * the measurement's wall time, so they are beside it, not in it). The
 * testimony is its passes whole; the witness, the counters and the
 * profiler's set-up beside it are its parts (the set-up also counts the
 * job's profiler, taken in the plan). */
static void log_phases(const char *id, const struct dv_report *r) {
    double timing = 0, outputs = 0, checks = 0, setup = 0, testimony = 0;
    for (unsigned i = 0; i < r->ntables; i++) {
        timing += r->tables[i].host_timing_ms;
        outputs += r->tables[i].host_outputs_ms;
        checks += r->tables[i].host_checks_ms;
        setup += r->tables[i].host_setup_ms;
        testimony += r->tables[i].host_testimony_ms;
    }
    const struct dv_testimony *tm = &r->testimony;
    const double known =
        r->host_plan_ms + r->host_inputs_ms + setup + timing + outputs + testimony + checks + r->host_end_ms;
    LOG(LOG_INFO,
        "job %s: wall %.2f ms for %.2f ms of timed GPU work (%.2fx): plan %.2f, inputs %.2f, set-up %.2f, timed "
        "rounds %.2f, outputs %.2f, testimony %.2f (witness %.2f, counters %.2f, profiler set-up %.2f), checks %.2f, "
        "verdicts %.2f, the rest %.2f; instructions after it %.2f",
        id, r->wall_time_ms, r->gpu_time_ms, r->gpu_time_ms > 0 ? r->wall_time_ms / r->gpu_time_ms : 0.0,
        r->host_plan_ms, r->host_inputs_ms, setup, timing, outputs, testimony, tm->witness_ms, tm->counters_ms,
        tm->counters_setup_ms, checks, r->host_end_ms, r->wall_time_ms - known, tm->instructions_ms);
}

/* A refused request's reply: the field's name (up to 64) before the reason. */
#define WHY_LEN (ERR_LEN + 80)

/* Reads job `job` ({"id", "request"}, of a message parsed once: its
 * request is unpacked from the object the message holds): its id into
 * id[64] and its request into `o`, made this worker's (its device; no
 * testimony when the worker takes none). Returns 0, or the DV_* code of
 * the reply with why[WHY_LEN] (no request, no GPU here, a request refused,
 * out of memory). */
static int read_job(const json_t *job, const struct dv_device *dev, int testimony, char *id, struct dv_options *o,
                    char *why) {
    const char *given = json_string_value(json_object_get(job, "id"));
    const json_t *req = json_object_get(job, "request");
    snprintf(id, 64, "%s", given ? given : "");
    int rc = 0;
    if (!req) {
        rc = DV_ERR;
        dv_seterr(why, "worker: the job message has no request");
    } else if (!dev->present) {
        rc = DV_ENOGPU;
        dv_seterr(why, "%s", dev->reason);
    } else {
        struct request_error re;
        memset(o, 0, sizeof *o);
        memset(&re, 0, sizeof re);
        /* request_parse_json() uses jansson on its own: a failed allocation
         * inside may cut a string short, which only the count shows. */
        const unsigned long failures = jsonout_failures();
        const int parsed = request_parse_json(req, o, &re), oom = jsonout_failures() != failures;
        if (oom) dv_seterr(why, "worker: out of memory reading the request");
        else if (parsed != 0) snprintf(why, WHY_LEN, "request: %s%s%s", re.field, re.field[0] ? ": " : "", re.reason);
        rc = oom || parsed != 0 ? DV_ERR : 0;
    }
    o->device = dev->ordinal; /* this worker's GPU, whatever was asked */
    if (!testimony) o->no_witness = o->no_counters = 1, o->instructions = 0;
    return rc;
}

/* Replies to job `id` for measured report `r` (result `rc`, `err`), with
 * the timed GPU work and the testimony's host time it is credited with
 * (wire.h: a batch's member its share). Returns 0, or -1 on a pipe error. */
static int reply(struct session *sess, const char *id, const struct dv_report *r, int rc, const char *err,
                 double gpu_ms, double testimony_ms) {
    const int measured = rc == 0 || rc == DV_EGATE;
    /* As for the request: a failure inside the builder shows in the count. */
    const unsigned long failures = jsonout_failures();
    json_t *doc = measured ? report_document(r) : NULL;
    if (doc && jsonout_failures() != failures) { /* as if the builder had said out of memory */
        json_decref(doc);
        doc = NULL;
    }
    char werr[ERR_LEN];
    if (rc == 0 && doc)
        return wire_send(WIRE_FD_OUT, wire_reply_ok(id, gpu_ms, testimony_ms, session_lost(sess), doc), werr);
    if (rc == 0) return reply_error(id, DV_ERR, "worker: out of memory writing the report", NULL, -1);
    return reply_error(id, rc, err[0] ? err : "measurement failed", doc, testimony_ms);
}

/* The host time of report `r`'s testimony passes and instruction profiles. */
static double testimony_of(const struct dv_report *r) {
    return r->testimony.witness_ms + r->testimony.counters_ms + r->testimony.counters_setup_ms +
           r->testimony.instructions_ms;
}

/* Runs one job (`job`, {"id", "request"}). Returns 0 to go on, 1 to exit
 * after a sticky error, -1 on a pipe error. */
static int handle_one(struct session *sess, struct instrproc *ip, const json_t *job, const struct dv_device *dev,
                      int testimony) {
    char id[64], why[WHY_LEN];
    struct dv_options o;
    int rc = read_job(job, dev, testimony, id, &o, why);
    if (rc != 0) return reply_error(id, rc, why, NULL, -1);
    struct dv_report *r = experiment_report_create();
    if (!r) return reply_error(id, DV_ERR, "worker: out of memory", NULL, -1);
    char err[ERR_LEN] = "";
    rc = measure_run_session(sess, &o, r, err);
    const int measured = rc == 0 || rc == DV_EGATE;
    /* After the timed samples and the testimony: the measured rows' profiles. */
    if (measured && !session_lost(sess)) instrproc_report(ip, &o, r);
    if (measured) log_phases(id, r);
    const int out = reply(sess, id, r, rc, err, r->gpu_time_ms, testimony_of(r));
    experiment_report_free(r);
    if (out < 0) return -1;
    /* A sticky error ends the process, also one inside a counter pass that
     * still let the job finish. */
    return rc == DV_ESTICKY || session_lost(sess) ? 1 : 0;
}

/* One member of a batch. */
struct member {
    char id[64];
    struct dv_options o;
    struct dv_report *r;
    int rc;
    char err[ERR_LEN];
};

/* Measures the members m[0..n) (each read, its report made) in one session
 * (gpu/batch.h): each member's result into m[i].rc and m[i].err; returns
 * the timed GPU work of the batch's rounds. */
static double measure_group(struct session *sess, struct member *m, unsigned n) {
    const struct dv_options *o[BATCHPLAN_MAX_READERS] = {0};
    struct dv_report *r[BATCHPLAN_MAX_READERS] = {0};
    int rc[BATCHPLAN_MAX_READERS];
    char err[BATCHPLAN_MAX_READERS][ERR_LEN];
    double shared_gpu_ms = 0;
    for (unsigned i = 0; i < n; i++) o[i] = &m[i].o, r[i] = m[i].r;
    batch_measure(sess, o, r, n, rc, err, &shared_gpu_ms);
    for (unsigned i = 0; i < n; i++) {
        m[i].rc = rc[i];
        memcpy(m[i].err, err[i], sizeof m[i].err);
        m[i].err[sizeof m[i].err - 1] = '\0';
    }
    LOG(LOG_INFO, "batch of %u jobs from %s: %u distinct rows, %.2f ms of timed GPU work between them", n, m[0].id,
        r[0]->ntables ? r[0]->tables[0].batch_rows : 0, shared_gpu_ms);
    return shared_gpu_ms;
}

/* Replies to each of the measured members m[0..n), crediting a reader of
 * the batch with its share of its timed work (`shared_gpu_ms`)
 * and testimony. Returns 0 to go on, 1 after a sticky error, -1 on a pipe
 * error. */
static int reply_members(struct session *sess, const struct member *m, unsigned n, double shared_gpu_ms) {
    unsigned sticky = 0;
    for (unsigned i = 0; i < n; i++) {
        const struct dv_report *r = m[i].r;
        const unsigned readers = r->ntables ? r->tables[0].batch_readers : 0;
        const double gpu = readers > 1 ? shared_gpu_ms / readers : r->gpu_time_ms;
        const double testi = testimony_of(r) / (readers > 1 ? readers : 1);
        if (reply(sess, m[i].id, r, m[i].rc, m[i].err, gpu, testi) < 0) return -1;
        sticky |= m[i].rc == DV_ESTICKY;
    }
    return sticky || session_lost(sess) ? 1 : 0;
}

/* The measured members of m[0..n) (o, r: appended at *k). */
static unsigned measured_of(const struct member *m, unsigned n, const struct dv_options **o, struct dv_report **r,
                            unsigned *k) {
    unsigned got = 0;
    for (unsigned i = 0; i < n; i++)
        if (m[i].rc == 0 || m[i].rc == DV_EGATE) o[*k] = &m[i].o, r[(*k)++] = m[i].r, got++;
    return got;
}

/* Measures the members m[0..n) in one session, their rows' profiles in
 * one request, and replies to each. Returns as reply_members(). */
static int measure_members(struct session *sess, struct instrproc *ip, struct member *m, unsigned n) {
    const struct dv_options *o[BATCHPLAN_MAX_READERS];
    struct dv_report *r[BATCHPLAN_MAX_READERS];
    unsigned measured = 0;
    const double shared_gpu_ms = measure_group(sess, m, n);
    measured_of(m, n, o, r, &measured);
    if (measured && !session_lost(sess)) instrproc_report_batch(ip, o, r, measured);
    if (measured) log_phases(m[0].id, m[0].r);
    return reply_members(sess, m, n, shared_gpu_ms);
}

/* A batch message's jobs (`jobs`, an array of {"id", "request"}) read
 * into m[0..*n) (each its report made); a job that cannot be read is
 * answered at once. Returns 0, or -1 on a pipe error. */
static int read_members(const json_t *jobs, const struct dv_device *dev, int testimony, struct member *m,
                        unsigned *n) {
    int out = 0;
    *n = 0;
    for (size_t i = 0; i < json_array_size(jobs) && out == 0; i++) {
        char why[WHY_LEN], id[64];
        struct member *x = &m[*n];
        int rc = read_job(json_array_get(jobs, i), dev, testimony, id, &x->o, why);
        if (rc == 0 && *n >= BATCHPLAN_MAX_READERS) {
            rc = DV_ERR;
            dv_seterr(why, "worker: a batch holds at most %u jobs", BATCHPLAN_MAX_READERS);
        }
        if (rc == 0 && !(x->r = experiment_report_create())) {
            rc = DV_ERR;
            dv_seterr(why, "worker: out of memory");
        }
        if (rc != 0) {
            out = reply_error(id, rc, why, NULL, -1);
            continue;
        }
        snprintf(x->id, sizeof x->id, "%s", id);
        (*n)++;
    }
    return out;
}

/* Runs a batch message's jobs (`jobs`, an array of {"id", "request"}): a
 * job that cannot be read is answered at once, the others measured
 * together (measure_members()). Returns as handle_one(). */
static int handle_batch(struct session *sess, struct instrproc *ip, const json_t *jobs, const struct dv_device *dev,
                        int testimony) {
    if (json_array_size(jobs) == 0) return reply_error("", DV_ERR, "worker: the batch message has no jobs", NULL, -1);
    struct member *m = calloc(BATCHPLAN_MAX_READERS, sizeof *m);
    if (!m) return -1;
    unsigned n = 0;
    int out = read_members(jobs, dev, testimony, m, &n);
    if (out == 0 && n > 0) out = measure_members(sess, ip, m, n);
    for (unsigned i = 0; i < n; i++) experiment_report_free(m[i].r);
    free(m);
    return out;
}

/* Measures groups g of m (at g * BATCHPLAN_MAX_READERS, n[g] members each)
 * one after another as batches (after a sticky error, the later groups'
 * members fail with it), then the profiles of all in one request
 * (instrproc_report_groups()), then replies to every member. Returns as
 * reply_members(). */
static int measure_groups(struct session *sess, struct instrproc *ip, struct member *m, const unsigned *n,
                          unsigned ng) {
    const struct dv_options *o[WIRE_MAX_GROUPS * BATCHPLAN_MAX_READERS];
    struct dv_report *r[WIRE_MAX_GROUPS * BATCHPLAN_MAX_READERS];
    double shared[WIRE_MAX_GROUPS] = {0};
    unsigned size[WIRE_MAX_GROUPS], k = 0, sizes = 0;
    for (unsigned g = 0; g < ng; g++) {
        struct member *x = m + g * BATCHPLAN_MAX_READERS;
        for (unsigned i = 0; session_lost(sess) && i < n[g]; i++) {
            x[i].rc = DV_ESTICKY;
            dv_seterr(x[i].err, "worker: a sticky CUDA error in an earlier group of this message");
        }
        if (n[g] && !session_lost(sess)) shared[g] = measure_group(sess, x, n[g]);
        const unsigned got = measured_of(x, n[g], o, r, &k);
        if (got) size[sizes++] = got;
    }
    if (k && !session_lost(sess)) instrproc_report_groups(ip, o, r, size, sizes);
    for (unsigned i = 0; k && i < ng * BATCHPLAN_MAX_READERS; i++)
        if (m[i].r == r[0]) { /* the first measured member's phases */
            log_phases(m[i].id, r[0]);
            break;
        }
    int out = 0;
    for (unsigned g = 0; g < ng && out >= 0; g++) {
        const int rc = reply_members(sess, m + g * BATCHPLAN_MAX_READERS, n[g], shared[g]);
        out = rc < 0 ? -1 : out | rc;
    }
    return out;
}

/* Runs a message of groups (`groups`, arrays of {"id", "request"}): each
 * group read as a batch is (read_members()), then measure_groups().
 * Returns as handle_one(). */
static int handle_groups(struct session *sess, struct instrproc *ip, const json_t *groups, const struct dv_device *dev,
                         int testimony) {
    const size_t ng = json_array_size(groups);
    if (ng == 0 || ng > WIRE_MAX_GROUPS)
        return reply_error("", DV_ERR, "worker: a message of groups holds 1 to 4 groups", NULL, -1);
    struct member *m = calloc(ng * BATCHPLAN_MAX_READERS, sizeof *m);
    if (!m) return -1;
    unsigned n[WIRE_MAX_GROUPS] = {0};
    int out = 0;
    for (size_t g = 0; g < ng && out == 0; g++)
        out = read_members(json_array_get(groups, g), dev, testimony, m + g * BATCHPLAN_MAX_READERS, &n[g]);
    unsigned total = 0;
    for (size_t g = 0; g < ng; g++) total += n[g];
    if (out == 0 && total > 0) out = measure_groups(sess, ip, m, n, (unsigned)ng);
    for (size_t g = 0; g < ng; g++)
        for (unsigned i = 0; i < n[g]; i++) experiment_report_free(m[g * BATCHPLAN_MAX_READERS + i].r);
    free(m);
    return out;
}

/* Runs job message `msg`: one job, a batch, or groups. Returns as handle_one(). */
static int handle(struct session *sess, struct instrproc *ip, const char *msg, size_t len, const struct dv_device *dev,
                  int testimony) {
    json_error_t je;
    json_t *root = jsonout_loadb(msg, len, JSON_REJECT_DUPLICATES, &je);
    const char *kind = json_string_value(json_object_get(root, "kind"));
    const int rc = kind && strcmp(kind, "groups") == 0
                       ? handle_groups(sess, ip, json_object_get(root, "groups"), dev, testimony)
                   : kind && strcmp(kind, "batch") == 0
                       ? handle_batch(sess, ip, json_object_get(root, "jobs"), dev, testimony)
                       : handle_one(sess, ip, root, dev, testimony);
    json_decref(root);
    return rc;
}

/* The cold start before the hello (gpu/warmup.h): the profiler, every
 * kernel the lesson runs, the session's buffers, then one run of the
 * widget's request, which `*wm` gets for the hello with its job kind in
 * `kind` (kind_len bytes): the kind the server gives the widget's jobs,
 * of the request as the widget sends it (the worker's testimony switch is
 * its own; the run is this worker's). wm->kind stays NULL when there is no
 * run to tell. Returns 0, or DV_ESTICKY when it lost the context (the
 * worker then says hello and exits). */
static int warm(struct session *sess, int ordinal, int testimony, struct wire_warm *wm, char *kind, size_t kind_len) {
    struct warmup_report wr;
    char err[ERR_LEN] = "";
    const int rc = warmup_run(sess, ordinal, testimony, &wr, err);
    struct dv_options o;
    warmup_widget_request(&o, ordinal, 1);
    char widget[160] = "";
    if (wr.widget_ms > 0 && options_job_kind(&o, kind, kind_len) == 0) {
        *wm = (struct wire_warm){kind, wr.widget_ms};
        snprintf(widget, sizeof widget, ", the widget's request as it is sent %.1f ms (a %s job's run until one ends)",
                 wr.widget_ms, kind);
    }
    if (rc != 0)
        LOG(rc == DV_ESTICKY ? LOG_ERR : LOG_WARNING, "worker: the warm-up failed after %.0f ms: %s", wr.total_ms, err);
    else
        LOG(LOG_INFO,
            "worker: warm in %.0f ms before its hello: %u rows measured (the lesson's kernels %.0f ms, the mask kernel "
            "%.0f ms), the counter profiler's set-up %.0f ms of it, a full batch's row slots %.0f ms%s%s%s",
            wr.total_ms, wr.rows, wr.lesson_ms, wr.mask_ms, wr.profiler_ms, wr.reserve_ms, widget,
            wr.counters_reason[0] ? "; no counters: " : "", wr.counters_reason);
    return rc == DV_ESTICKY ? rc : 0;
}

/* `--device N` (the CUDA ordinal this worker owns, 0 by default),
 * `--testimony on|off` (on by default), `--disassembler PATH`,
 * `--instructions-deadline-ms N` and `--profile-cache DIR|none` (the
 * profiler's, instrproc.h; *cache_set when given). Returns 0, or -1 with
 * `err`. */
static int parse_args(int argc, char **argv, int *ordinal, int *testimony, struct instrproc_config *ic, int *cache_set,
                      char *err) {
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(argv[i], "--device") == 0 && v) {
            char *end = NULL;
            long n = strtol(v, &end, 10);
            if (!end || *end || end == v || n < 0 || n > 255) {
                dv_seterr(err, "worker: --device %s: not an ordinal in 0..255", v);
                return -1;
            }
            *ordinal = (int)n;
        } else if (strcmp(argv[i], "--testimony") == 0 && v && (strcmp(v, "on") == 0 || strcmp(v, "off") == 0)) {
            *testimony = strcmp(v, "on") == 0;
        } else if (strcmp(argv[i], "--disassembler") == 0 && v && v[0]) {
            ic->disassembler = v;
        } else if (strcmp(argv[i], "--profile-cache") == 0 && v && v[0]) {
            ic->cache_dir = strcmp(v, "none") == 0 ? NULL : v;
            *cache_set = 1;
        } else if (strcmp(argv[i], "--instructions-deadline-ms") == 0 && v) {
            char *end = NULL;
            double ms = strtod(v, &end);
            if (!end || *end || end == v || !(ms >= 100 && ms <= 600000)) {
                dv_seterr(err, "worker: --instructions-deadline-ms %s: not a number of ms in 100..600000", v);
                return -1;
            }
            ic->deadline_ms = ms;
        } else {
            dv_seterr(err,
                      "worker: unexpected argument %s (only --device N, N in 0..255, --testimony on|off, "
                      "--disassembler PATH, --instructions-deadline-ms N and --profile-cache DIR|none)",
                      argv[i]);
            return -1;
        }
        i++;
    }
    return 0;
}

int workerproc_main(int argc, char **argv) {
    int ordinal = 0, testimony = 1;
    char perr[ERR_LEN];
    struct instrproc_config ic = {0};
    int cache_set = 0;
    if (parse_args(argc, argv, &ordinal, &testimony, &ic, &cache_set, perr) != 0) {
        LOG(LOG_ERR, "%s", perr);
        return 2;
    }
    /* Without --profile-cache, the cache folder systemd gives the unit
     * (CacheDirectory=, deploy/divergence.service) keeps the profiles. */
    char cache[PATH_MAX];
    const char *cd = getenv("CACHE_DIRECTORY");
    if (!cache_set && cd && cd[0] && !strchr(cd, ':')) {
        snprintf(cache, sizeof cache, "%s/profiles", cd);
        ic.cache_dir = cache;
    }
    if (fcntl(WIRE_FD_IN, F_GETFD) < 0 || fcntl(WIRE_FD_OUT, F_GETFD) < 0) {
        LOG(LOG_ERR, "worker: fds %d and %d are not open: this command is started by `divergence serve`",
            WIRE_FD_IN, WIRE_FD_OUT);
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    struct dv_device dev;
    char err[ERR_LEN] = "", wkind[RUNEST_KIND_LEN] = "";
    struct wire_warm wm = {NULL, 0}; /* the warm-up's widget run, when there is one */
    memset(&dev, 0, sizeof dev);
    struct session *sess = session_create();
    if (!sess) {
        LOG(LOG_ERR, "worker: out of memory for the measurement session");
        return 2;
    }
    ic.device = ordinal;
    ic.before_child = session_release_profiler;
    ic.before_child_ctx = sess;
    /* No profiler (no temporary folder, say) leaves every profile null with
     * the reason; the worker measures on. */
    struct instrproc *ip = instrproc_create(&ic, perr);
    if (!ip) LOG(LOG_WARNING, "worker: no instruction profiles: %s", perr);
    int rc = session_device(sess, ordinal, &dev, err);
    if (rc != 0) {
        dev.present = 0;
        if (!dev.reason[0]) snprintf(dev.reason, sizeof dev.reason, "%s", err[0] ? err : "no CUDA device");
        LOG(LOG_WARNING, "worker: no GPU: %s", dev.reason);
    } else {
        rc = warm(sess, ordinal, testimony, &wm, wkind, sizeof wkind);
        /* The instruction profiler's server too, before the hello: the
         * first reader who asks for profiles pays what the tenth pays. */
        if (rc == 0) instrproc_warm(ip);
    }
    int status = 0;
    if (wire_send(WIRE_FD_OUT, wire_hello(report_device_json(&dev), &wm), err) < 0) status = 2;
    else if (rc == DV_ESTICKY) status = 3;
    while (status == 0) {
        char *msg = NULL;
        size_t len = 0;
        enum wire_status wr = wire_read(WIRE_FD_IN, &msg, &len, -1, err);
        if (wr == WIRE_EOF) break;
        if (wr != WIRE_OK) {
            LOG(LOG_ERR, "%s", err);
            status = 2;
            break;
        }
        int h = handle(sess, ip, msg, len, &dev, testimony);
        free(msg);
        if (h < 0) status = 2;
        if (h > 0) {
            LOG(LOG_ERR, "worker: sticky CUDA error: exiting so the server starts a fresh worker");
            status = 3;
        }
    }
    session_free(sess);
    instrproc_free(ip);
    return status;
}
