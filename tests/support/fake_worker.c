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
 * FAKE_WORKER_HELLO_DELAY_MS how long it takes to say hello, or
 * FAKE_WORKER_HELLO_GATE a file it waits for before the hello (at most
 * 20 s, under serve's 30 s hello timeout), so a test decides when the
 * worker is up instead of racing a delay; FAKE_WORKER_WARM_MS puts a
 * warm-up's run of that many ms of the widget's kind of job in the hello
 * (wire.h's "warm", as the GPU worker's warm-up reports it); FAKE_WORKER_NOISE
 * the relative noise of every row (0.001 when unset);
 * FAKE_WORKER_PIDFILE names a file each started worker appends its pid to;
 * FAKE_WORKER_JOB_MS makes every ordinary job take that long (a GPU's run),
 * FAKE_WORKER_FIRST_JOB_MS the first job of each worker process (a cold
 * start) instead (tests/bench/classroom.py).
 *
 * Batches (wire.h's {"kind": "batch", "jobs": [...]}): every member is read
 * as a job of its own (one that does not parse is answered at once), the
 * planted behaviours above apply to the batch as a whole (its members share
 * their iterations), and each member is answered with its own document
 * whose table says batch_readers / batch_rows. A batch takes
 * FAKE_WORKER_JOB_MS (or the first one's) times its distinct rows over two,
 * as if the time went into the rows (a reader's job is two rows), which is
 * the stand-in's invented model of what a shared session saves.
 *
 * Groups (wire.h's {"kind": "groups", "groups": [[...], ...]}): each group
 * answered as a batch, in order. FAKE_WORKER_MESSAGES names a file each
 * message appends its shape to: "job", "batch N", or "groups G N1,N2,...".
 *
 * FAKE_WORKER_SAMPLE=1 "measures" each Part 1 table for real, with
 * invented samples: each row's k-th round takes 0.5 ms times its predicted
 * ratio times (1 + FAKE_WORKER_NOISE x a number in [-1, 1] drawn from the
 * row's name and k), through the rounds and stopping rules the GPU worker
 * uses: a job alone as gpu/timing.c samples a table, a batch's reader by
 * reader in one session (model/stats/batchplan.h). A row's samples depend
 * on nothing but its name and its round, so a
 * reader's table measured in a batch is exactly the table it gets alone:
 * what tests/server/jobs/test_worker.c holds the batch to.
 * FAKE_WORKER_BAD_ROW=<predicate> makes that row's check fail (a wrong
 * output), so its readers fail the correctness gate and no other does.
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
#include "kernels/model/stats/batchplan.h"
#include "api/jsonout.h"
#include "api/options.h"
#include "api/report.h"
#include "api/request.h"
#include "server/jobs/runest.h"
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

/* Job `job` ({"id", "request"}): its id into id[64] and its request into
 * `o`; -1 when it has none that parses. */
static int read_job(const json_t *job, char *id, struct dv_options *o) {
    const char *id0 = json_string_value(json_object_get(job, "id"));
    snprintf(id, 64, "%s", id0 ? id0 : "");
    const json_t *req = json_object_get(job, "request");
    struct request_error re;
    memset(o, 0, sizeof *o);
    return req && request_parse_json(req, o, &re) == 0 ? 0 : -1;
}

/* The analysis with timings a GPU might have produced; measured among
 * `readers` readers sharing `rows` rows when readers > 1. */
static json_t *fake_document(const struct dv_options *o, double *gpu_ms, unsigned readers, unsigned rows) {
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
        tb->batch_readers = readers > 1 ? readers : 0;
        tb->batch_rows = readers > 1 ? rows : 0;
        r->gpu_time_ms += tb->gpu_time_ms;
    }
    experiment_warn(r, "fake worker: no GPU was used; the timings are invented");
    *gpu_ms = r->gpu_time_ms;
    json_t *doc = report_document(r);
    experiment_report_free(r);
    return doc;
}

/* ---- FAKE_WORKER_SAMPLE: invented samples through the readers' rounds ---- */

/* A number in [-1, 1] from `name` and `k` alone (FNV-1a, then a mix). */
static double jitter(const char *name, unsigned k) {
    unsigned long long h = 1469598103934665603ull;
    for (const char *c = name; *c; c++) h = (h ^ (unsigned char)*c) * 1099511628211ull;
    h ^= k + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    return (double)(h % 2000001ull) / 1000000.0 - 1.0;
}

static double noise_share(void) {
    const char *nz = getenv("FAKE_WORKER_NOISE");
    return nz && *nz ? atof(nz) : 0.001;
}

/* Union row `row`'s k-th round. */
static double sample_ms(const struct dv_row *row, unsigned k) {
    const double base = 0.5 * (row->predicted_ratio > 0 ? row->predicted_ratio : 1.0);
    return base * (1.0 + noise_share() * jitter(row->name, k));
}

/* One table alone, as gpu/timing.c's timing_rows() samples it: every row
 * in every round, one struct sampling. Returns 0, or -1 with `err`. */
static int sample_alone(struct dv_table *t, const struct dv_options *o, char *err) {
    struct sampling s;
    enum stoprule_reason why = STOPRULE_CONTINUE;
    int rc = sampling_init(&s, t->nrows, t->baseline_row >= 0 ? (unsigned)t->baseline_row : t->nrows, o, 0.0, err);
    while (rc == 0 && why == STOPRULE_CONTINUE) {
        const unsigned rounds = sampling_room(&s, 8);
        double batch_ms = 0;
        for (unsigned j = 0; j < t->nrows; j++)
            for (unsigned k = 0; k < rounds; k++)
                batch_ms += sampling_row(&s, j)[s.taken + k] = sample_ms(&t->rows[j], s.taken + k);
        rc = sampling_file(&s, rounds, NAN, batch_ms, &why, err);
    }
    if (rc == 0) sampling_report(&s, t);
    sampling_cleanup(&s);
    return rc;
}

/* The Part 1 tables of r[0..n) measured as a batch (model/stats/
 * batchplan.h), or the one alone. Returns 0, or -1 with `err`. */
static int sample_tables(struct dv_report *const *r, const struct dv_options *const *o, unsigned n, char *err) {
    if (n == 1) return sample_alone(&r[0]->tables[0], o[0], err);
    struct dv_table *tables[BATCHPLAN_MAX_READERS];
    for (unsigned i = 0; i < n; i++) tables[i] = &r[i]->tables[0];
    struct batchplan bp;
    struct dv_table *u = malloc(sizeof *u);
    int rc = u ? batchplan_init(&bp, tables, o, n, 0.0, u, err) : -1;
    unsigned rows[BATCHPLAN_MAX_LAUNCHES * 8], rounds = 0, nr;
    double ms[BATCHPLAN_MAX_LAUNCHES * 8];
    while (rc == 0 && (nr = batchplan_next(&bp, 8, rows, &rounds)) > 0) {
        /* Each segment's rounds are its reader's: its k-th, as alone. */
        for (unsigned g = 0; g < bp.nsegs; g++) {
            const struct batchplan_seg *sg = &bp.segs[g];
            const struct batchplan_reader *rd = &bp.readers[sg->reader];
            for (unsigned k = 0; k < sg->rounds; k++)
                for (unsigned j = 0; j < rd->t->nrows; j++)
                    ms[sg->at + k * rd->t->nrows + j] = sample_ms(&rd->t->rows[j], rd->s.taken + k);
        }
        rc = batchplan_file(&bp, nr, rows, rounds, ms, NAN, err);
    }
    if (rc == 0) batchplan_report(&bp);
    if (u) batchplan_cleanup(&bp);
    free(u);
    return rc;
}

/* Report `r` (planned from `o`) measured: FAKE_WORKER_SAMPLE's tables when
 * sampled (its Part 1 table filled already), else the invented figures;
 * the check of FAKE_WORKER_BAD_ROW's row fails. Returns its document, with
 * the result (0 or DV_EGATE) in *rc and the gate's words in `err`. */
static json_t *finish_document(struct dv_report *r, const struct dv_options *o, int sampled, unsigned readers,
                               unsigned rows, double *gpu_ms, int *rc, char *err) {
    const char *bad = getenv("FAKE_WORKER_BAD_ROW");
    if (!sampled) {
        json_t *doc = fake_document(o, gpu_ms, readers, rows);
        *rc = 0;
        return doc;
    }
    r->measured = 1;
    r->gpu_time_ms = r->tables[0].gpu_time_ms;
    for (unsigned j = 0; j < r->tables[0].nrows; j++) {
        struct dv_row *row = &r->tables[0].rows[j];
        row->measured = 1;
        dv_check_init(&row->check);
        row->check.ok = !(bad && strcmp(bad, row->name) == 0);
        row->check.checked = r->config.threads;
        if (!row->check.ok) dv_check_add(&row->check, 7, 1.0f, 2.0f);
    }
    experiment_warn(r, "fake worker: no GPU was used; the timings are invented");
    *rc = experiment_gate(r, err);
    *gpu_ms = r->gpu_time_ms;
    return report_document(r);
}

/* The stand-in's time for a session of `rows` distinct rows. */
static void take_time(unsigned rows) {
    static int jobs_run;
    const char *job_ms = getenv(jobs_run++ == 0 && getenv("FAKE_WORKER_FIRST_JOB_MS") ? "FAKE_WORKER_FIRST_JOB_MS"
                                                                                      : "FAKE_WORKER_JOB_MS");
    if (job_ms && *job_ms) timeutil_sleep_ms(strtod(job_ms, NULL) * (rows > 2 ? rows / 2.0 : 1.0));
}

/* The planted behaviour of `iterations` before the answer (the header's
 * list). Returns 0 to answer, 3 to exit (a sticky error was answered). */
static int planted(int iterations, char ids[][64], unsigned n) {
    switch (iterations) {
    case 1111:
        for (;;) timeutil_sleep_ms(1000);
    case 2222:
        abort();
    case 3333: {
        const char *gate = getenv("FAKE_WORKER_GATE");
        if (!gate || !*gate) timeutil_sleep_ms(300);
        for (int waited = 0; gate && *gate && access(gate, F_OK) != 0 && waited < 60000; waited += 10)
            timeutil_sleep_ms(10);
        return 0;
    }
    case 4444:
        for (unsigned i = 0; i < n; i++)
            reply_fail(ids[i], DV_ESTICKY, "cudaDeviceSynchronize: an illegal memory access was encountered (fake)",
                       NULL);
        return 3;
    default:
        return 0;
    }
}

/* Distinct rows of the first tables of r[0..n). */
static unsigned distinct_rows(struct dv_report *const *r, unsigned n) {
    const struct dv_row *seen[DV_MAX_ROWS * BATCHPLAN_MAX_READERS];
    unsigned k = 0;
    for (unsigned i = 0; i < n; i++)
        for (unsigned j = 0; r[i]->ntables && j < r[i]->tables[0].nrows; j++) {
            const struct dv_row *row = &r[i]->tables[0].rows[j];
            unsigned x = 0;
            while (x < k && !experiment_row_same_run(seen[x], row)) x++;
            if (x == k) seen[k++] = row;
        }
    return k;
}

/* Answers jobs ids[0..n) with requests o[0..n) (one job, or a batch's
 * members). Returns 0 to go on, 2 on a pipe error, 3 to exit. */
static int answer(char ids[][64], const struct dv_options *const *o, unsigned n) {
    struct dv_report *r[BATCHPLAN_MAX_READERS] = {0};
    char err[ERR_LEN] = "";
    int rc = 0, status = 0;
    for (unsigned i = 0; i < n && rc == 0; i++)
        if (!(r[i] = experiment_report_create()) || plan_report(o[i], r[i], NULL, err) < 0) rc = -1;
    const char *sample = getenv("FAKE_WORKER_SAMPLE");
    const int sampled = rc == 0 && sample && strcmp(sample, "1") == 0 && o[0]->part == DV_PART_1 && !o[0]->scenario[0];
    if (sampled) rc = sample_tables(r, o, n, err);
    const unsigned rows = rc == 0 ? distinct_rows(r, n) : 0;
    if (rc == 0) take_time(rows);
    if (rc == 0) status = planted((int)o[0]->iterations, ids, n);
    for (unsigned i = 0; i < n && status == 0; i++) {
        double gpu_ms = 0;
        int grc = 0;
        char why[ERR_LEN] = "";
        json_t *doc = rc == 0 ? finish_document(r[i], o[i], sampled, n, rows, &gpu_ms, &grc, why) : NULL;
        if (!doc) {
            if (reply_fail(ids[i], DV_ERR, rc == 0 ? "fake worker: the document failed" : err, NULL) < 0) status = 2;
            continue;
        }
        if (o[i]->iterations == 5555)
            grc = reply_fail(ids[i], DV_EGATE, "row lane-parity: 3 mismatches against the CPU reference (fake)", doc);
        else if (grc != 0)
            grc = reply_fail(ids[i], grc, why, doc);
        else /* testimony_ms: a witness and a counter pass, as the real worker reports them */
            grc = send(wire_reply_ok(ids[i], gpu_ms / n, gpu_ms * 0.5 / n, o[i]->iterations == 6666, doc));
        if (grc < 0) status = 2;
    }
    for (unsigned i = 0; i < n; i++) experiment_report_free(r[i]);
    if (status == 0 && o[0]->iterations == 6666) status = 3;
    return status;
}

/* Appends message `root`'s shape to $FAKE_WORKER_MESSAGES, if set. */
static void log_message(const json_t *root) {
    const char *path = getenv("FAKE_WORKER_MESSAGES");
    const char *kind = json_string_value(json_object_get(root, "kind"));
    FILE *f = path ? fopen(path, "a") : NULL;
    if (!f) return;
    const json_t *groups = json_object_get(root, "groups");
    if (kind && strcmp(kind, "groups") == 0) {
        fprintf(f, "groups %zu ", json_array_size(groups));
        for (size_t g = 0; g < json_array_size(groups); g++)
            fprintf(f, "%s%zu", g ? "," : "", json_array_size(json_array_get(groups, g)));
        fprintf(f, "\n");
    } else if (kind && strcmp(kind, "batch") == 0) {
        fprintf(f, "batch %zu\n", json_array_size(json_object_get(root, "jobs")));
    } else {
        fprintf(f, "job\n");
    }
    fclose(f);
}

/* Runs the jobs of `list` (a batch's or a group's array; NULL: `root` is
 * one job). Returns as answer(). */
static int handle_jobs(const json_t *root, const json_t *list) {
    const size_t njobs = list ? json_array_size(list) : 1;
    static char ids[BATCHPLAN_MAX_READERS][64];
    static struct dv_options opts[BATCHPLAN_MAX_READERS];
    const struct dv_options *o[BATCHPLAN_MAX_READERS];
    unsigned n = 0;
    int status = 0;
    for (size_t i = 0; i < njobs && status == 0; i++) {
        const json_t *job = list ? json_array_get(list, i) : root;
        if (n >= BATCHPLAN_MAX_READERS || read_job(job, ids[n], &opts[n]) != 0) {
            const char *given = json_string_value(json_object_get(job, "id"));
            char id[64];
            snprintf(id, sizeof id, "%s", given ? given : "");
            if (reply_fail(id, DV_ERR, "fake worker: bad request", NULL) < 0) status = 2;
            continue;
        }
        o[n] = &opts[n];
        n++;
    }
    return status == 0 && n > 0 ? answer(ids, o, n) : status;
}

/* Runs job message `msg` (one job, a batch, or groups: each as a batch).
 * Returns as answer(). */
static int handle(const char *msg, size_t len) {
    json_t *root = json_loadb(msg, len, JSON_REJECT_DUPLICATES, NULL);
    const char *kind = json_string_value(json_object_get(root, "kind"));
    const json_t *groups = kind && strcmp(kind, "groups") == 0 ? json_object_get(root, "groups") : NULL;
    int status = 0;
    log_message(root);
    for (size_t g = 0; groups && g < json_array_size(groups) && status == 0; g++)
        status = handle_jobs(root, json_array_get(groups, g));
    if (!groups) status = handle_jobs(root, kind && strcmp(kind, "batch") == 0 ? json_object_get(root, "jobs") : NULL);
    json_decref(root);
    return status;
}

/* FAKE_WORKER_WARM_MS: the hello's warm-up run, of the widget's request
 * as it is sent (model/model/experiment.h) and the kind the server gives
 * it (api/options.h), into `w` with its kind in `kind`; NULL when unset. */
static const struct wire_warm *fake_warm(struct wire_warm *w, char *kind) {
    const char *ms = getenv("FAKE_WORKER_WARM_MS");
    struct dv_options o;
    experiment_widget_request(&o, "(threadIdx.x % 3) < 1");
    if (!ms || !*ms || options_job_kind(&o, kind, RUNEST_KIND_LEN) != 0) return NULL;
    *w = (struct wire_warm){kind, strtod(ms, NULL)};
    return w;
}

int main(int argc, char **argv) {
    /* `--device N` (as serve passes it) comes back as the hello's ordinal. */
    long ordinal = 0;
    for (int i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], "--device") == 0) ordinal = strtol(argv[i + 1], NULL, 10);
    signal(SIGPIPE, SIG_IGN);
    struct wire_warm warm;
    char kind[RUNEST_KIND_LEN];
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
    const char *hello_gate = getenv("FAKE_WORKER_HELLO_GATE");
    for (int waited = 0; hello_gate && *hello_gate && access(hello_gate, F_OK) != 0 && waited < 20000; waited += 10)
        timeutil_sleep_ms(10);
    if (send(wire_hello(fake_device(ordinal), fake_warm(&warm, kind))) < 0) return 2;
    for (;;) {
        char *msg = NULL, err[ERR_LEN];
        size_t len = 0;
        int rc = wire_read(WIRE_FD_IN, &msg, &len, -1, err);
        if (rc == WIRE_EOF) return 0;
        if (rc != WIRE_OK) return 2;
        rc = handle(msg, len);
        free(msg);
        if (rc != 0) return rc;
    }
}
