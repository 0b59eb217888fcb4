/* fake_worker.c -- a stand-in for `divergence worker` in the server tests:
 * it speaks the worker protocol (server/wire.h) but never touches CUDA.
 *
 * Its behaviour per job is read from the request's iterations, so a test
 * plants a failure with an ordinary POST /measure body:
 *   1111  hang forever (the server must kill it at the deadline)
 *   2222  abort() (a crash: SIGABRT)
 *   3333  sleep 300 ms (or, when FAKE_WORKER_GATE names a file, wait until
 *         that file exists, at most 60 s), then answer like any other job
 *   4444  answer a sticky CUDA error and exit (as the real worker does)
 *   5555  answer a failed correctness gate (DV_EGATE) with a document
 *   6666  answer like any other job, saying it exits after the reply (as
 *         the real worker does after a sticky error in a counter pass that
 *         let the job finish), and exit
 *   other the plan_report() analysis with plausible timings and the
 *         warning "fake worker: no GPU was used"
 * FAKE_WORKER_NO_GPU=1 makes the hello report no GPU; FAKE_WORKER_GPU_NAME
 * names the GPU it reports (default "Fake GPU"), `--device N` its ordinal,
 * FAKE_WORKER_HELLO_DELAY_MS how long it takes to say hello; FAKE_WORKER_NOISE
 * the relative noise of every row (0.001 when unset);
 * FAKE_WORKER_PIDFILE names a file each started worker appends its pid to;
 * FAKE_WORKER_JOB_MS makes every ordinary job take that long (a GPU's run),
 * FAKE_WORKER_FIRST_JOB_MS the first job of each worker process (a cold
 * start) instead (tests/bench/classroom.py).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kernels/base/timeutil.h"
#include "kernels/model/model/experiment.h"
#include "kernels/model/model/plan.h"
#include "api/jsonout.h"
#include "api/report.h"
#include "api/request.h"
#include "server/jobs/wire.h"

/* Every message through the builders the real worker uses (wire.h). */
static int send(char *msg) {
    char err[ERR_LEN];
    return wire_send(WIRE_FD_OUT, msg, err);
}

static int reply_fail(const char *id, int code, const char *why, json_t *doc) {
    return send(wire_reply_error(id, code, why, doc, -1));
}

/* The hello's device: FAKE_WORKER_NO_GPU=1 reports none; otherwise a GPU
 * named FAKE_WORKER_GPU_NAME (default "Fake GPU": two fake servers of
 * different GPU models on one evidence directory) at ordinal `ordinal`. */
static json_t *fake_device(long ordinal) {
    int bad = 0;
    json_t *d = json_object();
    const char *nogpu = getenv("FAKE_WORKER_NO_GPU");
    if (nogpu && strcmp(nogpu, "1") == 0) {
        jsonout_put(d, "present", json_false(), &bad);
        jsonout_put(d, "reason", jsonout_str("fake worker: no CUDA device (FAKE_WORKER_NO_GPU=1)"), &bad);
    } else {
        const char *name = getenv("FAKE_WORKER_GPU_NAME");
        jsonout_put(d, "present", json_true(), &bad);
        jsonout_put(d, "ordinal", json_integer(ordinal), &bad);
        jsonout_put(d, "name", jsonout_str(name && *name ? name : "Fake GPU"), &bad);
        jsonout_put(d, "compute_capability", jsonout_str("9.0"), &bad);
        jsonout_put(d, "sm_count", json_integer(132), &bad);
        jsonout_put(d, "warp_size", json_integer(32), &bad);
    }
    if (!bad) return d;
    json_decref(d);
    return NULL;
}

/* The job message `msg`: its id into id[64] and its request into `o`;
 * -1 when it has none that parses. */
static int read_job(const char *msg, size_t len, char *id, struct dv_options *o) {
    json_t *root = json_loadb(msg, len, JSON_REJECT_DUPLICATES, NULL);
    const char *id0 = json_string_value(json_object_get(root, "id"));
    snprintf(id, 64, "%s", id0 ? id0 : "");
    const json_t *req = json_object_get(root, "request");
    struct request_error re;
    memset(o, 0, sizeof *o);
    const int rc = req && request_parse_json(req, o, &re) == 0 ? 0 : -1;
    json_decref(root);
    return rc;
}

/* The analysis with timings a GPU might have produced. */
static json_t *fake_document(const struct dv_options *o, double *gpu_ms) {
    struct dv_report *r = experiment_report_create();
    char err[ERR_LEN];
    if (!r || plan_report(o, r, NULL, err) < 0) {
        experiment_report_free(r);
        return NULL;
    }
    r->measured = 1;
    r->gpu_time_ms = 0;
    for (unsigned t = 0; t < r->ntables; t++) {
        struct dv_table *tb = &r->tables[t];
        for (unsigned i = 0; i < tb->nrows; i++) {
            struct dv_row *row = &tb->rows[i];
            double ms = 0.5 * (row->predicted_ratio > 0 ? row->predicted_ratio : 1.0);
            row->measured = 1;
            row->time_ms.median = row->time_ms.mean = ms;
            row->time_ms.min = ms * 0.99;
            row->time_ms.max = ms * 1.01;
            row->time_ms.samples = 10;
            /* FAKE_WORKER_NOISE: every row this noisy and its ratio known
             * only to this share (a night the refresh's gate fails); default
             * a quiet 0.1%. */
            const char *nz = getenv("FAKE_WORKER_NOISE");
            const double noise = nz && *nz ? atof(nz) : 0.001;
            row->time_ms.noise = noise;
            row->time_ms.stdev = ms * noise;
            row->median_ci_ms = (struct dv_ci){ms * (1 - noise / 4), ms * (1 + noise / 4)};
            row->ratio = row->ratio_of_medians = row->predicted_ratio;
            const double hw = (int)i == tb->baseline_row ? 0.0 : noise;
            row->ratio_ci = (struct dv_ci){row->ratio * (1 - hw), row->ratio * (1 + hw)};
            row->ratio_halfwidth = hw;
            row->ratio_level = 0.95;
            row->ratio_method = 1; /* the per-round ratio, as the GPU worker's */
            row->spread_excess = 1.0;
            row->spread_drift = 0.0;
            row->floor_fraction = 0.9;
            row->check.ok = 1;
            row->check.first_mismatch = -1;
            tb->gpu_time_ms += ms * 10;
        }
        const double nz = tb->nrows ? tb->rows[tb->nrows - 1].time_ms.noise : 0;
        tb->intervals_ok = tb->noise_ok = nz <= tb->halfwidth_target;
        snprintf(tb->stop_reason, sizeof tb->stop_reason, "%s", tb->intervals_ok ? "target" : "budget");
        tb->worst_row = tb->nrows > 1 ? (tb->baseline_row == 0 ? 1 : 0) : -1;
        tb->worst_halfwidth = tb->worst_row >= 0 ? nz : NAN;
        tb->timer_resolution_ms = 0;
        r->gpu_time_ms += tb->gpu_time_ms;
    }
    experiment_warn(r, "fake worker: no GPU was used; the timings are invented");
    *gpu_ms = r->gpu_time_ms;
    json_t *doc = report_document(r);
    experiment_report_free(r);
    return doc;
}

int main(int argc, char **argv) {
    /* `--device N` (as serve passes it) comes back as the hello's ordinal. */
    long ordinal = 0;
    for (int i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], "--device") == 0) ordinal = strtol(argv[i + 1], NULL, 10);
    signal(SIGPIPE, SIG_IGN);
    const char *pidfile = getenv("FAKE_WORKER_PIDFILE");
    if (pidfile) {
        FILE *f = fopen(pidfile, "a");
        if (f) {
            fprintf(f, "%ld\n", (long)getpid());
            fclose(f);
        }
    }
    const char *delay = getenv("FAKE_WORKER_HELLO_DELAY_MS"); /* a slow CUDA start */
    if (delay) timeutil_sleep_ms(strtol(delay, NULL, 10));
    if (send(wire_hello(fake_device(ordinal))) < 0) return 2;
    for (;;) {
        char *msg = NULL, err[ERR_LEN];
        size_t len = 0;
        int rc = wire_read(WIRE_FD_IN, &msg, &len, -1, err);
        if (rc == WIRE_EOF) return 0;
        if (rc != WIRE_OK) return 2;
        char id[64];
        struct dv_options o;
        rc = read_job(msg, len, id, &o);
        free(msg);
        if (rc != 0) {
            if (reply_fail(id, DV_ERR, "fake worker: bad request", NULL) < 0) return 2;
            continue;
        }
        static int jobs_run;
        const char *job_ms = getenv(jobs_run++ == 0 && getenv("FAKE_WORKER_FIRST_JOB_MS") ? "FAKE_WORKER_FIRST_JOB_MS"
                                                                                          : "FAKE_WORKER_JOB_MS");
        if (job_ms && *job_ms) timeutil_sleep_ms(strtod(job_ms, NULL));
        switch (o.iterations) {
        case 1111:
            for (;;) timeutil_sleep_ms(1000);
        case 2222:
            abort();
        case 3333: {
            const char *gate = getenv("FAKE_WORKER_GATE");
            if (!gate || !*gate) timeutil_sleep_ms(300);
            for (int waited = 0; gate && *gate && access(gate, F_OK) != 0 && waited < 60000; waited += 10)
                timeutil_sleep_ms(10);
            break;
        }
        case 4444:
            reply_fail(id, DV_ESTICKY, "cudaDeviceSynchronize: an illegal memory access was encountered (fake)", NULL);
            return 3;
        default:
            break;
        }
        double gpu_ms = 0;
        json_t *doc = fake_document(&o, &gpu_ms);
        if (!doc) {
            if (reply_fail(id, DV_ERR, "fake worker: the plan failed", NULL) < 0) return 2;
            continue;
        }
        if (o.iterations == 5555)
            rc = reply_fail(id, DV_EGATE, "row lane-parity: 3 mismatches against the CPU reference (fake)", doc);
        else /* testimony_ms: a witness and a counter pass, as the real worker reports them */
            rc = send(wire_reply_ok(id, gpu_ms, gpu_ms * 0.5, o.iterations == 6666, doc));
        if (rc < 0) return 2;
        if (o.iterations == 6666) return 3;
    }
}
