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
 * FAKE_WORKER_PIDFILE names a file each started worker appends its pid to.
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
#include "api/report.h"
#include "api/request.h"
#include "server/jobs/wire.h"

static int send_text(const char *s) {
    char err[ERR_LEN];
    return wire_write(WIRE_FD_OUT, s, strlen(s), err);
}

static int reply_fail(const char *id, int code, const char *why, const char *doc) {
    size_t len = strlen(why) + (doc ? strlen(doc) : 0) + 256;
    char *s = malloc(len);
    if (!s) return -1;
    snprintf(s, len, "{\"id\":\"%s\",\"ok\":false,\"code\":%d,\"error\":\"%s\"%s%s}", id, code, why,
             doc ? ",\"document\":" : "", doc ? doc : "");
    int rc = send_text(s);
    free(s);
    return rc;
}

/* The analysis with timings a GPU might have produced. */
static char *fake_document(const struct dv_options *o, double *gpu_ms) {
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
    char *doc = report_json(r, 0);
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
    const char *nogpu = getenv("FAKE_WORKER_NO_GPU");
    char hello[256];
    if (nogpu && strcmp(nogpu, "1") == 0)
        snprintf(hello, sizeof hello,
                 "{\"hello\":1,\"pid\":%ld,\"device\":{\"present\":false,\"reason\":\"fake worker: no CUDA device (FAKE_WORKER_NO_GPU=1)\"}}",
                 (long)getpid());
    else {
        /* FAKE_WORKER_GPU_NAME: the device name the hello reports (two fake
         * servers of different GPU models on one evidence directory). */
        const char *name = getenv("FAKE_WORKER_GPU_NAME");
        json_t *jn = json_string(name && *name ? name : "Fake GPU");
        char *qname = jn ? json_dumps(jn, JSON_ENCODE_ANY) : NULL;
        json_decref(jn);
        snprintf(hello, sizeof hello,
                 "{\"hello\":1,\"pid\":%ld,\"device\":{\"present\":true,\"ordinal\":%ld,\"name\":%s,\"compute_capability\":\"9.0\",\"sm_count\":132,\"warp_size\":32}}",
                 (long)getpid(), ordinal, qname ? qname : "\"Fake GPU\"");
        free(qname);
    }
    if (send_text(hello) < 0) return 2;
    for (;;) {
        char *msg = NULL, err[ERR_LEN];
        size_t len = 0;
        int rc = wire_read(WIRE_FD_IN, &msg, &len, -1, err);
        if (rc == WIRE_EOF) return 0;
        if (rc != WIRE_OK) return 2;
        json_t *root = json_loadb(msg, len, JSON_REJECT_DUPLICATES, NULL);
        free(msg);
        const char *id0 = root ? json_string_value(json_object_get(root, "id")) : NULL;
        char id[64];
        snprintf(id, sizeof id, "%s", id0 ? id0 : "");
        json_t *req = root ? json_object_get(root, "request") : NULL;
        char *body = req ? json_dumps(req, JSON_COMPACT) : NULL;
        json_decref(root);
        struct dv_options o;
        struct request_error re;
        memset(&o, 0, sizeof o);
        if (!body || request_parse(body, strlen(body), &o, &re) < 0) {
            free(body);
            if (reply_fail(id, DV_ERR, "fake worker: bad request", NULL) < 0) return 2;
            continue;
        }
        free(body);
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
        char *doc = fake_document(&o, &gpu_ms);
        if (!doc) {
            if (reply_fail(id, DV_ERR, "fake worker: the plan failed", NULL) < 0) return 2;
            continue;
        }
        if (o.iterations == 5555) {
            rc = reply_fail(id, DV_EGATE, "row lane-parity: 3 mismatches against the CPU reference (fake)", doc);
        } else {
            size_t n = strlen(doc) + 160;
            char *s = malloc(n);
            if (!s) return 2;
            /* testimony_ms: a witness and a counter pass, as the real worker reports them */
            snprintf(s, n, "{\"id\":\"%s\",\"ok\":true,\"gpu_time_ms\":%.6f,\"testimony_ms\":%.6f,%s\"document\":%s}",
                     id, gpu_ms, gpu_ms * 0.5, o.iterations == 6666 ? "\"exiting\":true," : "", doc);
            rc = send_text(s);
            free(s);
        }
        free(doc);
        if (rc < 0) return 2;
        if (o.iterations == 6666) return 3;
    }
}
