/* aa_measure.c -- the GPU half of the night comparison's A/A run (a
 * benchmark, not a test: it needs a GPU and writes documents for
 * tests/bench/nights_aa.c to compare).
 *
 * In one session, as the GPU worker measures job after job:
 *   aa_NN.json       the lesson's request (Part 1 + Part 2, the testimony
 *                    off: it changes the document, not the timings) measured
 *                    2 x PAIRS times; pair k is aa_(2k) and aa_(2k+1), two
 *                    "nights" of one unchanged service;
 *   planted_NN.json  PLANTED Part 1 tables measured by the same timing
 *                    engine, in which the lane-half row runs 4,300
 *                    iterations against the other rows' 4,096 (4,300 runs
 *                    the runtime-trip-count kernel, which on an H200 takes
 *                    about 8% longer per FMA than the compile-time one: the
 *                    row reads 13.5% higher against aa_NN); with the fourth
 *                    argument `same-kernel`, every row of both nights runs
 *                    the runtime kernel: runtime_base_NN.json at 4,097
 *                    iterations, planted_NN.json with lane-half at 4,300
 *                    (4,300 / 4,097: 5.0% higher), the pairs to compare;
 *   lattice.txt      the distinct values of a small row's and a lesson row's
 *                    event-timed samples (does the timer sit on a lattice?).
 * Usage: aa_measure OUTDIR PAIRS PLANTED [same-kernel]. One summary line per document on
 * stdout. Exit 0 when every measurement ran (a failed check still writes
 * its document).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "api/report.h"
#include "kernels/gpu/cuda_call.h"
#include "kernels/gpu/lesson_kernels.h"
#include "kernels/gpu/measure.h"
#include "kernels/gpu/session.h"
#include "kernels/gpu/timing.h"
#include "kernels/model/model/plan.h"

#define PLANTED_ROW 1 /* lane-half among the lesson's four */
#define PLANTED_ITERATIONS 4300u
#define RUNTIME_ITERATIONS 4097u /* the nearest count the runtime kernel runs */
#define LATTICE_SAMPLES 400

static int write_doc(const char *dir, const char *name, const struct dv_report *r) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    char *doc = report_json(r, 1);
    FILE *f = doc ? fopen(path, "w") : NULL;
    int rc = f && fputs(doc, f) >= 0 ? 0 : -1;
    if (f && fclose(f) != 0) rc = -1;
    free(doc);
    if (rc != 0) fprintf(stderr, "aa_measure: cannot write %s\n", path);
    return rc;
}

static void line(const char *name, int rc, const struct dv_report *r) {
    printf("%-16s rc=%d", name, rc);
    for (unsigned i = 0; i < r->ntables; i++) {
        const struct dv_table *t = &r->tables[i];
        printf("  %s: %s, %u rounds, %.1f ms, widest %.3f%%", t->id, t->stop_reason,
               t->nrows ? t->rows[0].time_ms.samples : 0, t->gpu_time_ms, 100 * t->worst_halfwidth);
    }
    printf("\n");
    fflush(stdout);
}

struct planted_ctx {
    struct dv_launch base;
    const struct dv_table *t;
    float *out[DV_MAX_ROWS];
    unsigned iterations[DV_MAX_ROWS];
};

static int planted_launch(void *vctx, unsigned row, char *err) {
    const struct planted_ctx *c = vctx;
    struct dv_launch l = c->base;
    l.out = c->out[row];
    l.mode = c->t->rows[row].mode;
    l.iterations = c->iterations[row];
    return dv_run_kernel(c->t->rows[row].kernel, &l, err);
}

/* The lesson's Part 1 table with every row at `iterations` (0: the
 * lesson's) and row PLANTED_ROW at `planted_iterations` (0: the same). */
static int planted(struct session *s, struct dv_report *r, unsigned iterations, unsigned planted_iterations,
                   char *err) {
    struct dv_options o;
    experiment_defaults(&o);
    o.part = DV_PART_1;
    o.no_witness = o.no_counters = 1;
    if (iterations) o.iterations = iterations;
    if (!planted_iterations) planted_iterations = o.iterations;
    memset(r, 0, sizeof *r);
    int rc = session_device(s, 0, &r->device, err);
    if (rc != 0) return rc;
    if (plan_report(&o, r, NULL, err) != 0) return DV_ERR;
    struct dv_table *t = &r->tables[0];
    const unsigned long long n = r->config.threads;
    struct planted_ctx c;
    memset(&c, 0, sizeof c);
    c.t = t;
    c.base = (struct dv_launch){.n = n,
                                .blocks = r->config.blocks,
                                .block_x = r->config.block_x,
                                .block_y = r->config.block_y,
                                .iterations = r->config.iterations};
    if (!(c.base.in = session_input(s, n, &rc, err))) return rc;
    for (unsigned i = 0; i < t->nrows; i++) {
        float *host;
        if (!(c.out[i] = session_output(s, i, n, &host, &rc, err))) return rc;
        c.iterations[i] = i == PLANTED_ROW ? planted_iterations : r->config.iterations;
    }
    struct timing_clock clk;
    memset(&clk, 0, sizeof clk);
    if (!(clk.d_spin = session_spin_buffer(s, (unsigned)r->device.sm_count, &rc, err))) return rc;
    clk.sms = (unsigned)r->device.sm_count;
    if ((rc = timing_rows(t, planted_launch, &c, &o, r->device.rated_sm_clock_mhz, &clk, err)) != 0) return rc;
    for (unsigned i = 0; i < t->nrows; i++) {
        t->rows[i].measured = 1;
        dv_check_init(&t->rows[i].check);
        t->rows[i].check.ok = 1; /* not checked: the planted row is not the planned one */
    }
    r->device.measured_sm_clock_mhz = clk.n ? clk.sum_mhz / clk.n : 0;
    r->device.measured_sm_clock_min_mhz = clk.min_mhz;
    r->measured = 1;
    r->gpu_time_ms = t->gpu_time_ms;
    experiment_warn(r, "planted: row %s runs %u iterations against the others' %u; outputs not checked",
                    t->rows[PLANTED_ROW].name, planted_iterations, r->config.iterations);
    return experiment_gate(r, err);
}

static int cmp_float(const void *a, const void *b) {
    const float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* LATTICE_SAMPLES event-timed launches of one warp-parity row on a grid of
 * `blocks` x `tpb`: how many distinct values, the smallest gap between two,
 * and whether every gap is a whole number of it. */
static int lattice(struct session *s, FILE *f, unsigned blocks, unsigned tpb, char *err) {
    int rc = 0;
    const unsigned long long n = (unsigned long long)blocks * tpb;
    struct dv_launch l = {
        .n = n, .blocks = blocks, .block_x = tpb, .block_y = 1, .iterations = 4096, .mode = DV_WARP_PARITY};
    float *host, ms[LATTICE_SAMPLES];
    cudaEvent_t a = NULL, b = NULL;
    if (!(l.in = session_input(s, n, &rc, err)) || !(l.out = session_output(s, 0, n, &host, &rc, err))) return rc;
    if ((rc = DV_CUDA_CALL(cudaEventCreate(&a), err)) != 0 || (rc = DV_CUDA_CALL(cudaEventCreate(&b), err)) != 0)
        goto cleanup;
    for (int k = 0; k < 10; k++)
        if ((rc = dv_run_kernel(DV_KERNEL_BRANCH, &l, err)) != 0) goto cleanup;
    for (int k = 0; k < LATTICE_SAMPLES; k++) {
        if ((rc = DV_CUDA_CALL(cudaEventRecord(a, 0), err)) != 0 ||
            (rc = dv_run_kernel(DV_KERNEL_BRANCH, &l, err)) != 0 ||
            (rc = DV_CUDA_CALL(cudaEventRecord(b, 0), err)) != 0 ||
            (rc = DV_CUDA_CALL(cudaEventSynchronize(b), err)) != 0 ||
            (rc = DV_CUDA_CALL(cudaEventElapsedTime(&ms[k], a, b), err)) != 0)
            goto cleanup;
    }
    qsort(ms, LATTICE_SAMPLES, sizeof ms[0], cmp_float);
    int distinct = 1;
    double gap = INFINITY;
    for (int k = 1; k < LATTICE_SAMPLES; k++)
        if (ms[k] != ms[k - 1]) {
            distinct++;
            if (ms[k] - ms[k - 1] < gap) gap = ms[k] - ms[k - 1];
        }
    int whole = 1;
    for (int k = 1; k < LATTICE_SAMPLES && isfinite(gap); k++) {
        const double q = (ms[k] - ms[k - 1]) / gap;
        if (ms[k] != ms[k - 1] && fabs(q - nearbyint(q)) > 0.02) whole = 0;
    }
    fprintf(f,
            "%u blocks x %u threads: %d samples, %d distinct, min %.6f ms, median %.6f ms, max %.6f ms, "
            "smallest gap %.6f us, every gap a whole number of it: %s\n",
            blocks, tpb, LATTICE_SAMPLES, distinct, ms[0], ms[LATTICE_SAMPLES / 2], ms[LATTICE_SAMPLES - 1], 1e3 * gap,
            whole ? "yes" : "no");
    fprintf(f, "  values (ms):");
    for (int k = 0; k < LATTICE_SAMPLES; k++)
        if (k == 0 || ms[k] != ms[k - 1]) fprintf(f, " %.6f", ms[k]);
    fprintf(f, "\n");
cleanup:
    if (a) cudaEventDestroy(a);
    if (b) cudaEventDestroy(b);
    return rc;
}

int main(int argc, char **argv) {
    if (argc != 4 && !(argc == 5 && strcmp(argv[4], "same-kernel") == 0)) {
        fprintf(stderr, "usage: aa_measure OUTDIR PAIRS PLANTED [same-kernel]\n");
        return 2;
    }
    const char *dir = argv[1];
    const int pairs = atoi(argv[2]), nplanted = atoi(argv[3]), same_kernel = argc == 5;
    char err[ERR_LEN] = "", name[64];
    struct session *s = session_create();
    struct dv_report *r = experiment_report_create();
    int failed = 0;
    if (!s || !r) {
        fprintf(stderr, "aa_measure: out of memory\n");
        return 1;
    }
    struct dv_options o;
    experiment_defaults(&o);
    o.no_witness = o.no_counters = 1;
    for (int k = 0; k < 2 * pairs && !failed; k++) {
        memset(r, 0, sizeof *r);
        int rc = measure_run_session(s, &o, r, err);
        snprintf(name, sizeof name, "aa_%02d.json", k);
        if (rc != 0 && rc != DV_EGATE) {
            fprintf(stderr, "aa_measure: %s: %s\n", name, err);
            failed = 1;
            break;
        }
        line(name, rc, r);
        if (write_doc(dir, name, r) != 0) failed = 1;
    }
    for (int k = 0; k < nplanted && !failed; k++) {
        int rc = 0;
        if (same_kernel) {
            rc = planted(s, r, RUNTIME_ITERATIONS, 0, err);
            snprintf(name, sizeof name, "runtime_base_%02d.json", k);
            if (rc != 0) {
                fprintf(stderr, "aa_measure: %s: %s\n", name, err);
                failed = 1;
                break;
            }
            line(name, rc, r);
            if (write_doc(dir, name, r) != 0) failed = 1;
        }
        rc = planted(s, r, same_kernel ? RUNTIME_ITERATIONS : 0, PLANTED_ITERATIONS, err);
        snprintf(name, sizeof name, "planted_%02d.json", k);
        if (rc != 0) {
            fprintf(stderr, "aa_measure: %s: %s\n", name, err);
            failed = 1;
            break;
        }
        line(name, rc, r);
        if (write_doc(dir, name, r) != 0) failed = 1;
    }
    char path[1024];
    snprintf(path, sizeof path, "%s/lattice.txt", dir);
    FILE *f = failed ? NULL : fopen(path, "w");
    if (f) {
        if (lattice(s, f, 4096, 48, err) != 0 || lattice(s, f, 4096, 256, err) != 0) {
            fprintf(stderr, "aa_measure: lattice: %s\n", err);
            failed = 1;
        }
        fclose(f);
    }
    experiment_report_free(r);
    session_free(s);
    return failed;
}
