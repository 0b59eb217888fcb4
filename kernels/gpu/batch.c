/* batch.c -- readers' requests measured in one session (batch.h).
 *
 * In order: every reader planned (measure_plan()), those that fit the
 * first joined (fits()), the job's profiler and inputs once, the union
 * table measured once through lesson_measure_table_timed() with the
 * readers' own rounds (union_timer(): timing_rounds() over batchplan.h),
 * the union's rows handed back to each reader (hand_back()), each report
 * finished on its own (measure_finish()); then whoever did not fit, alone. */
#include "kernels/gpu/batch.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernels/base/timeutil.h"
#include "kernels/gpu/counters.h"
#include "kernels/gpu/lesson_measure.h"
#include "kernels/gpu/measure.h"
#include "kernels/gpu/session.h"
#include "kernels/gpu/timing.h"
#include "kernels/model/listing/listing.h"
#include "kernels/model/model/experiment.h"
#include "kernels/model/model/testimony.h"

/* 1 when reader `r` (planned from `o`) can share the rounds of reader `r0`
 * (from `o0`): one lesson table each, on the same grid and iteration count,
 * with the same testimony switches and the same baseline (each of its rows
 * is timed beside a launch of it, batchplan.h). */
static int fits(const struct dv_options *o0, const struct dv_report *r0, const struct dv_options *o,
                const struct dv_report *r) {
    return r->ntables == 1 && r0->ntables == 1 && !o->scenario[0] && !o0->scenario[0] &&
           !experiment_table_is_scenario(&r->tables[0]) && r->config.blocks == r0->config.blocks &&
           r->config.block_x == r0->config.block_x && r->config.block_y == r0->config.block_y &&
           r->config.iterations == r0->config.iterations && o->no_witness == o0->no_witness &&
           o->no_counters == o0->no_counters && r->device.ordinal == r0->device.ordinal &&
           r->tables[0].baseline_row >= 0 && r0->tables[0].baseline_row >= 0 &&
           experiment_row_same_run(&r->tables[0].rows[r->tables[0].baseline_row],
                                   &r0->tables[0].rows[r0->tables[0].baseline_row]);
}

/* The timing_sink of the batch: each reader's rounds in turn (batchplan). */
static unsigned plan_next(void *p, unsigned batch, unsigned *rows, unsigned *rounds) {
    return batchplan_next(p, batch, rows, rounds);
}

static int plan_file(void *p, unsigned n, const unsigned *rows, unsigned rounds, const double *ms, double mhz,
                     char *err) {
    return batchplan_file(p, n, rows, rounds, ms, mhz, err);
}

/* Timed work between clock samples in a batch: the readers' rounds follow
 * one another back to back, and a sample every 10 ms (a table alone's
 * TIMING_CLOCK_EVERY_MS, where its rounds take a few ms) would spend 1.5 ms
 * of spins on every 10 ms of rounds; at 30 ms, as often as the batches of
 * the rounds over a union read it. A reader's first rounds carry the last
 * reading (batchplan_file()). */
#define BATCH_CLOCK_EVERY_MS 30.0

/* batchplan_next() writes up to BATCHPLAN_MAX_LAUNCHES x TIMING_BATCH
 * launches where the engine has room for TIMING_MAX_LAUNCHES x that. */
_Static_assert(BATCHPLAN_MAX_LAUNCHES <= TIMING_MAX_LAUNCHES, "a batch's launches fit the engine's");

/* lesson_timer_fn: the union table `t` timed with each reader's own rule;
 * the readers' tables get their statistics, the union its timed work. */
static int union_timer(void *ctx, struct dv_table *t, timing_launch_fn launch, void *lctx, struct timing_clock *clk,
                       char *err) {
    struct batchplan *bp = ctx;
    const struct timing_sink sink = {plan_next, plan_file, bp, BATCHPLAN_MAX_LAUNCHES, BATCH_CLOCK_EVERY_MS};
    const int rc = timing_rounds(t->nrows, launch, lctx, &sink, clk, err);
    if (rc != 0) return rc;
    batchplan_report(bp);
    t->gpu_time_ms = bp->gpu_ms;
    return 0;
}

/* What the union measured, into reader `rd`'s table: each row's check, its
 * witness and its counters (compared again with the reader's own
 * baseline), and the table's host times and testimony cost (the one pass's,
 * which served every reader). */
static void hand_back(const struct dv_table *u, const struct batchplan_reader *rd) {
    struct dv_table *t = rd->t;
    for (unsigned j = 0; j < t->nrows; j++) {
        const struct dv_row *from = &u->rows[rd->row[j]];
        struct dv_row *to = &t->rows[j];
        to->measured = from->measured;
        to->check = from->check;
        to->observed = from->observed;
        to->counters = from->counters;
    }
    testimony_counters_compare(t);
    memcpy(t->kernel_iterations, u->kernel_iterations, sizeof(t->kernel_iterations));
    t->host_timing_ms = u->host_timing_ms;
    t->host_outputs_ms = u->host_outputs_ms;
    t->host_checks_ms = u->host_checks_ms;
    t->host_setup_ms = u->host_setup_ms;
    t->host_testimony_ms = u->host_testimony_ms;
    t->cost_witness_ms = u->cost_witness_ms;
    t->cost_counters_ms = u->cost_counters_ms;
    t->counters_launches = u->counters_launches;
    t->counters_blocks = u->counters_blocks;
}

/* What the readers share: the session, their requests and reports, the
 * readers in the union (idx[0..m)), the clock and the profiler. */
struct shared {
    struct session *s;
    struct dv_options *o;
    struct dv_report *const *r;
    const unsigned *idx;
    unsigned m;
    struct timing_clock *clk;
    struct counters **cnt;
    double t0;
    double *gpu_ms; /* the union's timed work */
};

/* The union of readers idx[0..m) measured once and handed back. Returns 0,
 * a DV_* code for every reader with `err`, or 1 when no union could be
 * formed (then nothing was measured). */
static int measure_union(const struct shared *x, char *err) {
    struct dv_table *tables[BATCHPLAN_MAX_READERS];
    const struct dv_options *opts[BATCHPLAN_MAX_READERS];
    struct dv_report *const r0 = x->r[x->idx[0]];
    const struct dv_options *o0 = &x->o[x->idx[0]];
    for (unsigned k = 0; k < x->m; k++) {
        tables[k] = &x->r[x->idx[k]]->tables[0];
        opts[k] = &x->o[x->idx[k]];
    }
    struct batchplan bp;
    struct dv_table *u = malloc(sizeof(*u));
    int rc = u ? batchplan_init(&bp, tables, opts, x->m, r0->device.rated_sm_clock_mhz, u, err) : -1;
    if (rc != 0) {
        if (u) batchplan_cleanup(&bp);
        free(u);
        return 1;
    }
    *x->cnt = measure_counters(x->s, o0, r0);
    const double planned = timeutil_now_ms() - x->t0;
    struct measure_inputs in;
    struct dv_testimony tm = r0->testimony;
    if ((rc = measure_inputs(x->s, o0, r0, x->clk, &in, err)) == 0)
        rc = lesson_measure_table_timed(x->s, o0, r0, u, in.d_in, in.ref_a, in.ref_b, x->clk, &tm, x->cnt,
                                        union_timer, &bp, err);
    for (unsigned k = 0; k < x->m; k++) {
        struct dv_report *r = x->r[x->idx[k]];
        r->host_plan_ms = planned;
        r->host_inputs_ms = r0->host_inputs_ms;
        r->testimony = tm;
        if (rc == 0) hand_back(u, &bp.readers[k]);
        r->gpu_time_ms = rc == 0 ? r->tables[0].gpu_time_ms : 0;
    }
    if (rc == 0) *x->gpu_ms = u->gpu_time_ms;
    batchplan_cleanup(&bp);
    free(u);
    return rc;
}

/* Reader `o` measured on its own into `r` (planned already: emptied
 * first, as from experiment_report_create()), unless the context is lost
 * (*gone, set here by a sticky error). */
static void alone(struct session *s, const struct dv_options *o, struct dv_report *r, int *gone, int *rc, char *err) {
    for (unsigned i = 0; i < DV_MAX_TABLES; i++)
        for (unsigned j = 0; j < DV_MAX_ROWS; j++) listing_free(r->tables[i].rows[j].instructions);
    memset(r, 0, sizeof(*r));
    if (*gone || session_lost(s)) {
        *rc = DV_ESTICKY;
        dv_seterr(err, "not measured: a sticky CUDA error earlier in its batch lost the GPU's context");
        return;
    }
    *rc = measure_run_session(s, o, r, err);
    *gone |= *rc == DV_ESTICKY;
}

/* Plans readers 0..n-1 into `o` and `r`: those that fit the first into
 * idx[0..*m), the others into later[0..*nlater). Returns 1 when a sticky
 * error lost the context (the readers not yet planned fail with it). */
static int plan_all(struct session *s, const struct dv_options *const *o_in, struct dv_options *o,
                    struct dv_report *const *r, unsigned n, int *rc, char (*err)[ERR_LEN], unsigned *idx, unsigned *m,
                    unsigned *later, unsigned *nlater) {
    int gone = 0;
    *m = *nlater = 0;
    for (unsigned i = 0; i < n; i++) {
        double mhz = 0;
        o[i] = *o_in[i];
        err[i][0] = '\0';
        if (gone) {
            rc[i] = DV_ESTICKY;
            dv_seterr(err[i], "not measured: a sticky CUDA error earlier in its batch lost the GPU's context");
            continue;
        }
        if ((rc[i] = measure_plan(s, &o[i], r[i], &mhz, err[i])) != 0) {
            gone = rc[i] == DV_ESTICKY;
            continue;
        }
        if (*m == 0 || fits(&o[idx[0]], r[idx[0]], &o[i], r[i])) idx[(*m)++] = i;
        else later[(*nlater)++] = i;
    }
    return gone;
}

void batch_measure(struct session *s, const struct dv_options *const *o_in, struct dv_report *const *r, unsigned n,
                   int *rc, char (*err)[ERR_LEN], double *shared_gpu_ms) {
    struct dv_options o[BATCHPLAN_MAX_READERS];
    unsigned idx[BATCHPLAN_MAX_READERS], m = 0, later[BATCHPLAN_MAX_READERS], nlater = 0;
    const double t0 = timeutil_now_ms();
    if (n > BATCHPLAN_MAX_READERS) n = BATCHPLAN_MAX_READERS; /* the caller's bound; never more */
    int gone = plan_all(s, o_in, o, r, n, rc, err, idx, &m, later, &nlater);
    struct timing_clock clk;
    struct counters *cnt = NULL;
    memset(&clk, 0, sizeof(clk));
    char uerr[ERR_LEN] = "";
    *shared_gpu_ms = 0;
    const struct shared x = {s, o, r, idx, m, &clk, &cnt, t0, shared_gpu_ms};
    const int urc = m > 1 && !gone ? measure_union(&x, uerr) : 1;
    gone |= urc == DV_ESTICKY;
    for (unsigned k = 0; k < m; k++) {
        const unsigned i = idx[k];
        if (urc == 1) { /* no union: alone, as if it had come by itself */
            alone(s, o_in[i], r[i], &gone, &rc[i], err[i]);
            continue;
        }
        if (urc != 0) snprintf(err[i], ERR_LEN, "%s", uerr);
        rc[i] = measure_finish(s, &o[i], r[i], &clk, urc, cnt != NULL, err[i]);
        r[i]->wall_time_ms = timeutil_now_ms() - t0;
        timeutil_utc(time(NULL), r[i]->finished_utc, sizeof(r[i]->finished_utc));
    }
    for (unsigned k = 0; k < nlater; k++) alone(s, o_in[later[k]], r[later[k]], &gone, &rc[later[k]], err[later[k]]);
}
