/* measure.c -- the one measurement entry point (measure.h). */
#include "kernels/gpu/measure.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernels/base/timeutil.h"
#include "kernels/gpu/counters.h"
#include "kernels/gpu/cuda_call.h"
#include "kernels/gpu/device.h"
#include "kernels/gpu/lesson_measure.h"
#include "kernels/gpu/scenario_measure.h"
#include "kernels/gpu/session.h"
#include "kernels/gpu/sort_measure.h"
#include "kernels/gpu/timing.h"
#include "kernels/model/model/scenario.h"
#include "kernels/model/model/plan.h"
#include "kernels/model/model/sortexp.h"
#include "kernels/model/stats/throttle.h"

static unsigned long long input_threads(const struct dv_options *o, const struct dv_report *r) {
    unsigned long long n = r->config.threads;
    for (unsigned i = 0; i < r->ntables; i++) {
        if (!experiment_table_is_scenario(&r->tables[i]) && !sortexp_table_is(&r->tables[i])) continue;
        const struct dv_geometry g = scenario_grid(o);
        const unsigned long long s = (unsigned long long)g.blocks * (g.block_x * g.block_y);
        if (s > n) n = s;
    }
    return n;
}

int measure_inputs(struct session *s, const struct dv_options *o, struct dv_report *r, struct timing_clock *clk,
                   struct measure_inputs *in, char *err) {
    int rc = 0, lesson = 0;
    memset(in, 0, sizeof(*in));
    for (unsigned i = 0; i < r->ntables; i++)
        lesson |= !experiment_table_is_scenario(&r->tables[i]) && !sortexp_table_is(&r->tables[i]);
    const double h0 = timeutil_now_ms();
    if (lesson && session_chains(s, r->config.iterations, &in->ref_a, &in->ref_b, err) != 0) return DV_ERR;
    if (!(in->d_in = session_input(s, input_threads(o, r), &rc, err))) return rc;
    if (!(clk->d_spin = session_spin_buffer(s, (unsigned)r->device.sm_count, &rc, err))) return rc;
    clk->sms = (unsigned)r->device.sm_count;
    r->host_inputs_ms = timeutil_now_ms() - h0;
    return 0;
}

/* The data-sort cell of table `i`, NULL for a table of another kind. */
static struct dv_sort_cell *sort_cell(struct dv_report *r, unsigned i) {
    if (!r->sort.present || !sortexp_table_is(&r->tables[i])) return NULL;
    for (unsigned k = 0; k < r->sort.ncells; k++)
        if (r->sort.cells[k].table == (int)i) return &r->sort.cells[k];
    return NULL;
}

static int measure_tables(struct session *s, const struct dv_options *o, struct dv_report *r, double hint_mhz,
                          struct timing_clock *clk, struct counters **cnt, char *err) {
    struct measure_inputs in;
    int rc = measure_inputs(s, o, r, clk, &in, err);
    if (rc != 0) return rc;
    for (unsigned i = 0; i < r->ntables; i++) {
        struct dv_table *t = &r->tables[i];
        double mhz = clk->n ? clk->sum_mhz / clk->n : hint_mhz;
        session_progress(s, i, r->ntables, t, 0);
        struct dv_sort_cell *cell = sort_cell(r, i);
        rc = cell ? sort_measure_table(s, o, &r->device, mhz, clk, t, cell, in.d_in, &r->testimony, cnt, err)
             : experiment_table_is_scenario(t)
                 ? scenario_measure_table(s, o, &r->device, mhz, clk, t, in.d_in, &r->testimony, cnt, err)
                 : lesson_measure_table(s, o, r, t, in.d_in, in.ref_a, in.ref_b, clk, &r->testimony, cnt, err);
        if (rc != 0) return rc;
        if (cell) sortexp_summarise(&r->sort);
        r->gpu_time_ms += t->gpu_time_ms;
        session_progress(s, i, r->ntables, t, 1);
        /* A sticky CUDA error in this table's counter pass: its rows are
         * measured and the job can end, but no other table can be. */
        if (session_lost(s) && i + 1 < r->ntables) {
            dv_seterr(err, "%s; the tables after %s were not measured", r->testimony.counters_reason, t->id);
            return DV_ESTICKY;
        }
    }
    return 0;
}

/* The counter pass of the job: the session's profiler (built on the first
 * job that asks, kept for the next), its preparation timed as setup. */
struct counters *measure_counters(struct session *s, const struct dv_options *o, struct dv_report *r) {
    struct dv_testimony *tm = &r->testimony;
    if (o->no_counters) {
        snprintf(tm->counters_reason, sizeof(tm->counters_reason), "not requested (counters: false)");
        return NULL;
    }
    const double t0 = timeutil_now_ms();
    struct counters *c = session_counters(s, &r->device, tm->counters_library, tm->counters_reason);
    tm->counters_setup_ms += timeutil_now_ms() - t0;
    return c;
}

/* A job whose counter pass failed for any table has no counters: the same
 * null with the same reason for every row, and a warning. */
static void counters_outcome(struct dv_report *r, int taken) {
    struct dv_testimony *tm = &r->testimony;
    tm->counters_taken = taken;
    if (!tm->counters_requested || taken) return;
    for (unsigned i = 0; i < r->ntables; i++)
        for (unsigned j = 0; j < r->tables[i].nrows; j++) r->tables[i].rows[j].counters.present = 0;
    if (tm->counters_reason[0]) experiment_warn(r, "hardware counters: %s", tm->counters_reason);
}

int measure_run(const struct dv_options *o, struct dv_report *r, char *err) {
    struct session *s = session_create();
    if (!s) {
        dv_seterr(err, "measure: out of memory");
        return DV_ERR;
    }
    int rc = measure_run_session(s, o, r, err);
    session_free(s);
    return rc;
}

int measure_plan(struct session *s, struct dv_options *o, struct dv_report *r, double *mhz, char *err) {
    int rc = 0;
    *mhz = 0;
    timeutil_utc(time(NULL), r->started_utc, sizeof(r->started_utc));
    if ((rc = session_device(s, o->device, &r->device, err)) != 0) return rc;
    unsigned auto_blocks = 0;
    if (o->blocks == 0 && !o->scenario[0]) {
        if ((rc = session_clock_hint(s, mhz, err)) != 0) return rc;
        if ((rc = lesson_choose_blocks(o, r, *mhz, &auto_blocks, err)) != 0) return rc;
        o->blocks = auto_blocks;
    }
    char reason[sizeof(r->config.blocks_reason)];
    memcpy(reason, r->config.blocks_reason, sizeof(reason));
    if (plan_report(o, r, NULL, err) != 0) return DV_ERR;
    if (auto_blocks) {
        r->config.blocks_auto = 1;
        memcpy(r->config.blocks_reason, reason, sizeof(reason));
    }
    struct dv_testimony *tm = &r->testimony;
    tm->witness_requested = !o->no_witness;
    tm->counters_requested = !o->no_counters;
    if (o->no_witness) snprintf(tm->witness_reason, sizeof(tm->witness_reason), "not requested (witness: false)");
    return 0;
}

int measure_finish(struct session *s, const struct dv_options *o, struct dv_report *r, const struct timing_clock *clk,
                   int rc, int counted, char *err) {
    const double end0 = timeutil_now_ms();
    struct dv_testimony *tm = &r->testimony;
    tm->witness_taken = !o->no_witness && rc == 0;
    counters_outcome(r, counted && rc == 0);
    if (rc != 0) return rc;

    struct dv_device *d = &r->device;
    if (clk->n == 0) {
        dv_seterr(err, "clock: no clock sample was taken between the timed rounds");
        return DV_ERR;
    }
    d->measured_sm_clock_mhz = clk->sum_mhz / clk->n;
    d->measured_sm_clock_min_mhz = clk->min_mhz;
    session_clock_note(s, d->measured_sm_clock_mhz);
    if (throttle_is_low(clk->min_mhz, d->rated_sm_clock_mhz, THROTTLE_DEFAULT_FRACTION)) {
        unsigned dropped = 0;
        for (unsigned i = 0; i < r->ntables; i++)
            if (r->tables[i].nrows) dropped += r->tables[i].rows[0].rounds_dropped;
        experiment_warn(r,
                        "SM clock measured at %.0f MHz, below %.0f%% of the rated %.0f MHz: the GPU may be throttling "
                        "(%u rounds sampled under it were dropped and sampled again)",
                        clk->min_mhz, 100 * THROTTLE_DEFAULT_FRACTION, d->rated_sm_clock_mhz, dropped);
    }
    const double rate = (double)d->sm_count * d->fp32_lanes_per_sm * d->measured_sm_clock_mhz * 1e3;
    r->config.fma_floor_ms = rate > 0 ? (double)r->config.fmas_per_launch / rate : 0.0;
    for (unsigned i = 0; i < r->ntables; i++) {
        struct dv_table *t = &r->tables[i];
        if (experiment_table_is_scenario(t) || sortexp_table_is(t)) continue; /* rows with their own FMA counts */
        for (unsigned j = 0; j < t->nrows; j++) {
            struct dv_row *row = &t->rows[j];
            row->floor_fraction = row->time_ms.median > 0 ? r->config.fma_floor_ms / row->time_ms.median : NAN;
        }
    }
    r->measured = 1;
    rc = experiment_gate(r, err);
    r->host_end_ms = timeutil_now_ms() - end0;
    return rc;
}

int measure_run_session(struct session *s, const struct dv_options *o_in, struct dv_report *r, char *err) {
    struct dv_options o = *o_in;
    double t0 = timeutil_now_ms(), mhz = 0;
    struct timing_clock clk;
    struct counters *cnt = NULL;
    memset(&clk, 0, sizeof(clk));
    int rc = measure_plan(s, &o, r, &mhz, err);
    if (rc == 0) {
        cnt = measure_counters(s, &o, r);
        r->host_plan_ms = timeutil_now_ms() - t0;
        rc = measure_tables(s, &o, r, mhz, &clk, &cnt, err);
        rc = measure_finish(s, &o, r, &clk, rc, cnt != NULL, err);
    }
    r->wall_time_ms = timeutil_now_ms() - t0;
    timeutil_utc(time(NULL), r->finished_utc, sizeof(r->finished_utc));
    return rc;
}
