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
 * instructions` process for the job's other rows (jobs/instrproc.h), while
 * this process waits: nothing of its own runs on the GPU meanwhile, and
 * what the profiler patches lives and dies in the other process.
 * `--disassembler PATH` and `--instructions-deadline-ms N` are passed to
 * that profiler; `--profile-cache DIR` (by default $CACHE_DIRECTORY/profiles
 * when systemd gives the unit one, `none` for memory alone) keeps its
 * profiles for the next worker (jobs/profilecache.h). */
#define _GNU_SOURCE
#include "server/jobs/workerproc.h"
#include "api/jsonout.h"
#include "server/core/log.h"
#include "server/jobs/instrproc.h"
#include "server/jobs/wire.h"

#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/report.h"
#include "api/request.h"
#include "kernels/gpu/device.h"
#include "kernels/gpu/measure.h"
#include "kernels/gpu/session.h"

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

/* Reads job message `msg` (parsed once: its request is unpacked from the
 * object the message holds): its id into id[64] and its request into `o`.
 * Returns 0, or the DV_* code of the reply with why[WHY_LEN] (no request,
 * no GPU here, a request refused, out of memory). */
static int read_job(const char *msg, size_t len, const struct dv_device *dev, char *id, struct dv_options *o,
                    char *why) {
    json_error_t je;
    json_t *root = jsonout_loadb(msg, len, JSON_REJECT_DUPLICATES, &je);
    const char *given = json_string_value(json_object_get(root, "id"));
    const json_t *req = json_object_get(root, "request");
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
    json_decref(root);
    return rc;
}

/* Runs one job message. Returns 0 to go on, 1 to exit after a sticky error,
 * -1 on a pipe error. */
static int handle(struct session *sess, struct instrproc *ip, const char *msg, size_t len, const struct dv_device *dev,
                  int testimony) {
    char id[64], why[WHY_LEN];
    struct dv_options o;
    int rc = read_job(msg, len, dev, id, &o, why);
    if (rc != 0) return reply_error(id, rc, why, NULL, -1);
    o.device = dev->ordinal; /* this worker's GPU, whatever was asked */
    if (!testimony) o.no_witness = o.no_counters = 1, o.instructions = 0;
    struct dv_report *r = experiment_report_create();
    if (!r) return reply_error(id, DV_ERR, "worker: out of memory", NULL, -1);
    char err[ERR_LEN] = "";
    rc = measure_run_session(sess, &o, r, err);
    const int measured = rc == 0 || rc == DV_EGATE;
    /* After the timed samples and the testimony: the measured rows' profiles. */
    if (measured && !session_lost(sess)) instrproc_report(ip, &o, r);
    /* As for the request: a failure inside the builder shows in the count. */
    const unsigned long failures = jsonout_failures();
    json_t *doc = measured ? report_document(r) : NULL;
    if (doc && jsonout_failures() != failures) { /* as if the builder had said out of memory */
        json_decref(doc);
        doc = NULL;
    }
    const double testimony_ms = r->testimony.witness_ms + r->testimony.counters_ms + r->testimony.counters_setup_ms +
                                r->testimony.instructions_ms;
    if (measured) log_phases(id, r);
    char werr[ERR_LEN];
    int out;
    if (rc == 0 && doc)
        out = wire_send(WIRE_FD_OUT, wire_reply_ok(id, r->gpu_time_ms, testimony_ms, session_lost(sess), doc), werr);
    else if (rc == 0) out = reply_error(id, DV_ERR, "worker: out of memory writing the report", NULL, -1);
    else out = reply_error(id, rc, err[0] ? err : "measurement failed", doc, testimony_ms);
    experiment_report_free(r);
    if (out < 0) return -1;
    /* A sticky error ends the process, also one inside a counter pass that
     * still let the job finish. */
    return rc == DV_ESTICKY || session_lost(sess) ? 1 : 0;
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
    char err[ERR_LEN] = "";
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
    }
    int status = 0;
    if (wire_send(WIRE_FD_OUT, wire_hello(report_device_json(&dev)), err) < 0) status = 2;
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
