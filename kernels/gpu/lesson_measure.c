/* lesson_measure.c -- Part 1 / Part 2 tables (lesson_measure.h).
 *
 * Per table: one output per row, poisoned with NaN (0xff bytes), so each
 * row's last timed launch is what gets checked and an element a kernel never
 * wrote cannot pass; one device mask per mask-kernel row. Outputs and masks
 * are the session's (gpu/session.h), kept between jobs. The rows go to the
 * shared timing engine (timing.h), then every output element of every row is
 * compared with the CPU reference (model/model/reference.h), one CPU thread per
 * row, started as each row's output lands on the host, so the checks run
 * while the next rows download and while the testimony passes use the GPU.
 */
#include "kernels/gpu/lesson_measure.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/base/timeutil.h"
#include "kernels/gpu/cuda_call.h"
#include "kernels/gpu/lesson_kernels.h"
#include "kernels/gpu/session.h"
#include "kernels/gpu/testimony_run.h"
#include "kernels/gpu/witness.h"
#include "kernels/model/model/testimony.h"
#include "kernels/gpu/timing.h"
#include "kernels/model/model/analysis.h"
#include "kernels/model/model/plan.h"
#include "kernels/model/model/reference.h"

/* Table state for the launch callback. */
struct table_ctx {
    const struct dv_table *t;
    struct dv_launch base;
    float *out[DV_MAX_ROWS];
    uint32_t *d_mask[DV_MAX_ROWS];
};

/* Row `row`'s launch on the first `blocks` blocks of its grid: the timed
 * kernel, or with `witness` set its witness instantiation writing there. */
static int launch(const struct table_ctx *c, unsigned row, unsigned blocks, struct dv_witness_block *witness,
                  char *err) {
    struct dv_launch l = c->base;
    l.out = c->out[row];
    l.mode = c->t->rows[row].mode;
    l.mask = c->d_mask[row];
    l.witness = witness;
    l.blocks = blocks;
    return dv_run_kernel(c->t->rows[row].kernel, &l, err);
}

static int launch_row(void *vctx, unsigned row, char *err) {
    const struct table_ctx *c = vctx;
    return launch(c, row, c->base.blocks, NULL, err);
}

/* The table's part of its testimony (gpu/testimony_run.h): each row's
 * witness instantiation and its counted launch on the blocks that stand for
 * its grid, and the model's records of the same blocks. */
struct lesson_testimony {
    const struct table_ctx *c;
    const struct dv_report *r;
    struct dv_table *t;
    const struct dv_geometry *g;
    const uint32_t *const *masks;
    unsigned blocks[DV_MAX_ROWS]; /* per row: the blocks its witness kernel runs */
};

/* The blocks that stand for row `row`'s grid (testimony_lesson_grid(): one
 * block for a predicate that does not read blockIdx.x, one period of blocks
 * for one that does), for the counter pass and the witness, which runs them
 * and repeats their records over the grid. */
static int on_prepare(void *p, unsigned row, struct testimony_row *out, char *err) {
    struct lesson_testimony *x = p;
    const struct dv_row *w = &x->t->rows[row];
    if (testimony_lesson_grid(w, x->g, x->r->config.iterations, x->masks[row], &out->grid, err) != 0) return DV_ERR;
    out->witness_blocks =
        out->grid.nparts > 0 && out->grid.part_blocks[0] > 0 ? out->grid.part_blocks[0] : x->g->blocks;
    out->evaluations = experiment_row_evaluations(w, x->r->config.iterations);
    x->blocks[row] = out->witness_blocks;
    return 0;
}

static int on_witness(void *p, unsigned row, struct dv_witness_block *d_rec, char *err) {
    const struct lesson_testimony *x = p;
    return launch(x->c, row, x->blocks[row], d_rec, err);
}

static int on_expect(void *p, unsigned row, unsigned launched, struct dv_witness_block *exp, char *err) {
    const struct lesson_testimony *x = p;
    const struct dv_geometry run = {launched, x->g->block_x, x->g->block_y}; /* the grid's first blocks */
    return testimony_expect_lesson(&x->t->rows[row], &run, x->r->config.iterations, x->masks[row], exp, err);
}

static void on_observe(void *p, unsigned row, unsigned launched, const struct dv_witness_block *seen,
                       const struct dv_witness_block *exp) {
    const struct lesson_testimony *x = p;
    struct dv_row *w = &x->t->rows[row];
    testimony_observe_standing(seen, exp, launched, x->g->blocks, w->warps_per_block,
                               experiment_row_evaluations(w, x->r->config.iterations), &w->observed);
    w->observed.blocks_witnessed = launched;
}

/* A launch of the counter pass. A lesson row's blocks are told apart by
 * blockIdx.x, so it has no stand-in grid: its span is its own first blocks. */
static int on_count(void *p, unsigned row, const struct counters_span *span, char *err) {
    const struct lesson_testimony *x = p;
    if (span->standin || span->first != 0) {
        dv_seterr(err, "counter pass: row %u: a lesson row has no stand-in grid", row);
        return DV_ERR;
    }
    return launch(x->c, row, span->blocks, NULL, err);
}

/* This kind of table's part of the testimony (gpu/testimony_run.h). */
static const struct testimony_ops table_ops = {on_prepare, on_witness, on_expect, on_observe, on_count, NULL};

/* One row's check on a CPU thread, while the main thread drives the GPU. */
struct check_job {
    const struct dv_row *row;
    const struct dv_geometry *g;
    const uint32_t *mask;
    const float *a, *b, *out;
    unsigned iterations;
    struct dv_check *check;
    int rc, started;
    pthread_t thread;
    char err[ERR_LEN];
};

static void *check_main(void *p) {
    struct check_job *j = p;
    j->rc = reference_check(j->row, j->g, j->mask, j->a, j->b, j->iterations, j->out, j->check, j->err);
    return NULL;
}

/* Starts job `j` on its own thread, or runs it here when no thread starts. */
static void check_start(struct check_job *j) {
    j->started = pthread_create(&j->thread, NULL, check_main, j) == 0;
    if (!j->started) check_main(j);
}

/* Waits for every started job; returns 0 or DV_ERR with the first job's error. */
static int check_join(struct check_job *jobs, unsigned n, char *err) {
    int rc = 0;
    for (unsigned i = 0; i < n; i++) {
        if (jobs[i].started) pthread_join(jobs[i].thread, NULL);
        jobs[i].started = 0;
        if (jobs[i].rc != 0 && rc == 0) {
            dv_seterr(err, "%s", jobs[i].err);
            rc = DV_ERR;
        }
    }
    return rc;
}

int lesson_measure_table(struct session *s, const struct dv_options *o, const struct dv_report *r,
                         struct dv_table *t, const float *d_in, const float *ref_a, const float *ref_b,
                         struct timing_clock *clk, struct dv_testimony *tm, struct counters **cnt, char *err) {
    return lesson_measure_table_timed(s, o, r, t, d_in, ref_a, ref_b, clk, tm, cnt, NULL, NULL, err);
}

int lesson_measure_table_timed(struct session *s, const struct dv_options *o, const struct dv_report *r,
                               struct dv_table *t, const float *d_in, const float *ref_a, const float *ref_b,
                               struct timing_clock *clk, struct dv_testimony *tm, struct counters **cnt,
                               lesson_timer_fn timer, void *timer_ctx, char *err) {
    int rc = 0;
    const struct dv_geometry g = {r->config.blocks, r->config.block_x, r->config.block_y};
    const unsigned long long n = dv_grid_threads(&g);
    struct table_ctx c;
    const uint32_t *masks[DV_MAX_ROWS] = {0};
    float *h_out[DV_MAX_ROWS] = {0};
    cudaEvent_t landed[DV_MAX_ROWS]; /* row i's output is on the host */
    struct check_job jobs[DV_MAX_ROWS];
    memset(&c, 0, sizeof(c));
    memset(jobs, 0, sizeof(jobs));
    const double s0 = timeutil_now_ms();
    c.t = t;
    c.base = (struct dv_launch){.in = d_in,
                                .n = n,
                                .blocks = g.blocks,
                                .block_x = g.block_x,
                                .block_y = g.block_y,
                                .iterations = r->config.iterations};
    for (unsigned i = 0; i < t->nrows; i++) {
        const uint32_t *dmask = NULL;
        if (!(masks[i] = session_mask(s, &t->rows[i], &g, plan_row_mask,
                                      experiment_row_reads_mask(&t->rows[i]) ? &dmask : NULL, &rc, err)))
            goto cleanup;
        c.d_mask[i] = (uint32_t *)dmask;
        if (!(c.out[i] = session_output(s, i, n, &h_out[i], &rc, err))) goto cleanup;
    }
    snprintf(t->kernel_iterations, sizeof(t->kernel_iterations), "%s",
             dv_kernel_iterations_name(r->config.iterations));
    double h0 = timeutil_now_ms();
    t->host_setup_ms = h0 - s0;
    rc = timer ? timer(timer_ctx, t, launch_row, &c, clk, err)
               : timing_rows(t, launch_row, &c, o, r->device.rated_sm_clock_mhz, clk, err);
    if (rc != 0) goto cleanup;
    t->host_timing_ms = timeutil_now_ms() - h0;
    h0 = timeutil_now_ms();

    /* Each row's last timed output comes back on the stream behind the timed
     * launches; row r is checked on a CPU thread while row r+1 downloads, and
     * the checks go on while the testimony passes use the GPU. */
    for (unsigned i = 0; i < t->nrows; i++) {
        if (!(landed[i] = session_event(s, i, &rc, err)) ||
            (rc = DV_CUDA_CALL(cudaMemcpyAsync(h_out[i], c.out[i], sizeof(float) * n, cudaMemcpyDeviceToHost, 0),
                               err)) != 0 ||
            (rc = DV_CUDA_CALL(cudaEventRecord(landed[i], 0), err)) != 0)
            goto cleanup;
    }
    for (unsigned i = 0; i < t->nrows; i++) {
        struct dv_row *row = &t->rows[i];
        row->measured = 1;
        if ((rc = DV_CUDA_CALL(cudaEventSynchronize(landed[i]), err)) != 0) goto cleanup;
        jobs[i] = (struct check_job){.row = row,
                                     .g = &g,
                                     .mask = masks[i],
                                     .a = ref_a,
                                     .b = ref_b,
                                     .out = h_out[i],
                                     .iterations = r->config.iterations,
                                     .check = &row->check};
        check_start(&jobs[i]);
    }
    t->host_outputs_ms = timeutil_now_ms() - h0;
    struct lesson_testimony x = {&c, r, t, &g, masks, {0}};
    const struct testimony_table tt = {t, g.blocks, !o->no_witness, &table_ops, &x};
    rc = testimony_run(s, &tt, tm, cnt, err);
cleanup:;
    char cerr[ERR_LEN] = "";
    const double j0 = timeutil_now_ms();
    int crc = check_join(jobs, t->nrows, cerr);
    t->host_checks_ms = timeutil_now_ms() - j0;
    if (rc == 0 && crc != 0) {
        dv_seterr(err, "%s", cerr);
        rc = crc;
    }
    return rc;
}

int lesson_choose_blocks(const struct dv_options *o, struct dv_report *r, double clock_mhz, unsigned *blocks,
                         char *err) {
    const unsigned tpb = o->block_x * (o->block_y ? o->block_y : 1);
    int per_sm = 0, rc;
    if ((rc = dv_occupancy(DV_KERNEL_BRANCH, o->iterations, tpb, &per_sm, err)) != 0) return rc;
    if (per_sm <= 0) {
        dv_seterr(err, "blocks: auto found no resident block of %u threads per SM", tpb);
        return DV_ERR;
    }
    const struct dv_device *d = &r->device;
    const double wave_blocks = (double)d->sm_count * per_sm;
    const double rate = (double)d->sm_count * d->fp32_lanes_per_sm * clock_mhz * 1e3; /* FMAs per ms */
    const double wave_ms = rate > 0 ? wave_blocks * tpb * (double)o->iterations / rate : 1.0;
    unsigned waves = (unsigned)ceil(1.0 / (wave_ms > 0 ? wave_ms : 1.0));
    if (waves < 1) waves = 1;
    unsigned long long b = (unsigned long long)wave_blocks * waves;
    while (b * tpb > DV_MAX_GRID_THREADS && waves > 1) b = (unsigned long long)wave_blocks * --waves;
    *blocks = (unsigned)b;
    snprintf(r->config.blocks_reason, sizeof(r->config.blocks_reason),
             "auto: %d SMs x %d resident blocks of %u threads x %u waves = %llu blocks (one wave %.3f ms at the FMA floor)",
             d->sm_count, per_sm, tpb, waves, b, wave_ms);
    return 0;
}
