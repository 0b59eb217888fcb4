/* scenario_run.c -- measures the scenario tables on the GPU.
 *
 * scenario_measure() plans (experiment_plan -> scenario_plan), then for each table uploads one
 * assignment buffer and one output buffer per row (the input is uploaded
 * once for all tables) and hands a launch callback to runner_time_rows(),
 * the timing engine every table kind shares: warm-up, round-robin samples
 * bracketed by CUDA events, noise target and GPU-time budget. Because every
 * row writes its own output buffer, the output checked afterwards is the one
 * of that row's last timed launch; it is compared bit for bit against the CPU
 * reference (scenario_check). The SM clock is measured before and after.
 *
 * Derived figures per row: ratio = median / baseline median; agreement =
 * ratio / predicted_ratio; measured_efficiency = t(reference) / t(row), the
 * reference being the ideal row for the divergent row of a k-way table (so
 * it measures the seed's max/sum) and the same-work baseline otherwise (the
 * seed's useful / issued for loops); floor_fraction = the row's own FMAs at
 * the measured clock on every FP32 lane / median.
 *
 * All cudart calls live in scenario_kernels.cu (scenario_launch.h) and the
 * runner; this file is plain C.
 */
#define _POSIX_C_SOURCE 200809L /* gmtime_r, clock_gettime */

#include "scenario.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runner.h"
#include "scenario_launch.h"

struct table_ctx {
    const struct scenario *s;
    unsigned blocks, block_x, block_y;
    unsigned unit, iters;
    struct scenario_lengths lengths;
    const float *in;
    float *out[SCENARIO_MAX_ROWS];
    void *work[SCENARIO_MAX_ROWS];
};

static int launch_row(void *p, unsigned row, char *err) {
    struct table_ctx *c = p;
    switch (c->s->kind) {
    case SCENARIO_KWAY:
        return scenario_launch_kway(c->in, c->out[row], c->work[row], c->blocks, c->block_x,
                                    c->block_y, &c->lengths, c->unit, err);
    case SCENARIO_LOOP:
        return scenario_launch_loop(c->in, c->out[row], c->work[row], c->blocks, c->block_x,
                                    c->block_y, c->unit, err);
    default:
        return scenario_launch_short(c->in, c->out[row], c->work[row], c->blocks, c->block_x,
                                     c->block_y, c->s->lengths[0], c->s->lengths[1], c->iters, err);
    }
}

static void utc_now(char *buf, size_t n) {
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Uploads row `r`'s assignment `w` in the element type its kernel reads. */
static int upload_work(const struct scenario *s, const uint8_t *w, unsigned long long n, void **dev,
                       char *err) {
    size_t elem = s->kind == SCENARIO_KWAY ? 1u : sizeof(uint32_t);
    uint32_t *wide = NULL;
    int rc = scenario_dev_alloc(dev, (size_t)n * elem, err);
    if (rc != 0) return rc;
    if (s->kind == SCENARIO_KWAY) return scenario_dev_upload(*dev, w, (size_t)n, err);
    wide = malloc((size_t)n * sizeof *wide);
    if (!wide) {
        dv_seterr(err, "scenario %s: out of memory", s->name);
        return DV_ERR;
    }
    for (unsigned long long i = 0; i < n; i++)
        wide[i] = s->kind == SCENARIO_LOOP ? w[i] : scenario_short_pattern(w[i]);
    rc = scenario_dev_upload(*dev, wide, (size_t)n * sizeof *wide, err);
    free(wide);
    return rc;
}

/* Times and checks table `t` (planned for `s`). Returns 0 or a DV_* code
 * with `err`. When a row fails its check and *gate_failed is still 0, sets it
 * and names the row in `gate_err`. */
static int measure_table(const struct scenario *s, const struct dv_options *o, const float *in_dev,
                         double mhz, const struct dv_device *dev, struct dv_table *t,
                         int *gate_failed, char *gate_err, char *err) {
    struct table_ctx c;
    struct dv_stats stats[SCENARIO_MAX_ROWS];
    uint8_t *work = NULL;
    float *host_out = NULL;
    double gpu_ms = 0.0;
    unsigned tpb;
    unsigned long long n;
    int rc = DV_ERR;

    memset(&c, 0, sizeof c);
    memset(stats, 0, sizeof stats);
    c.s = s;
    c.blocks = o->blocks ? o->blocks : DV_DEFAULT_BLOCKS;
    c.block_x = o->block_x ? o->block_x : DV_DEFAULT_BLOCK_X;
    c.block_y = o->block_y ? o->block_y : 1u;
    c.unit = scenario_unit_fmas(o);
    c.iters = scenario_short_iterations(o);
    c.in = in_dev;
    for (unsigned p = 0; p < SCENARIO_MAX_PATHS; p++) c.lengths.len[p] = s->lengths[p];
    tpb = c.block_x * c.block_y;
    n = (unsigned long long)c.blocks * tpb;

    work = malloc((size_t)n);
    host_out = malloc((size_t)n * sizeof *host_out);
    if (!work || !host_out) {
        dv_seterr(err, "scenario %s: out of memory for %llu threads", s->name, n);
        goto cleanup;
    }
    for (unsigned r = 0; r < s->nrows; r++) {
        if (scenario_assign(s, s->rows[r].layout, c.blocks, tpb, work, err) != 0) goto cleanup;
        if ((rc = upload_work(s, work, n, &c.work[r], err)) != 0) goto cleanup;
        void *out = NULL;
        rc = scenario_dev_alloc(&out, (size_t)n * sizeof(float), err);
        c.out[r] = out;
        if (rc != 0) goto cleanup;
    }
    rc = runner_time_rows(s->nrows, launch_row, &c, o, stats, &gpu_ms, err);
    if (rc != 0) goto cleanup;

    t->gpu_time_ms = gpu_ms;
    t->noise_limit = o->max_noise;
    t->noise_ok = 1;
    for (unsigned r = 0; r < s->nrows; r++) {
        struct dv_row *row = &t->rows[r];
        struct scenario_model m;
        struct dv_row scratch;
        if ((rc = scenario_dev_download(host_out, c.out[r], (size_t)n * sizeof(float), err)) != 0)
            goto cleanup;
        if (scenario_assign(s, s->rows[r].layout, c.blocks, tpb, work, err) != 0 ||
            scenario_check(s, work, n, c.unit, c.iters, host_out, &row->check, err) != 0) {
            rc = DV_ERR;
            goto cleanup;
        }
        if (!row->check.ok && !*gate_failed) {
            *gate_failed = 1;
            dv_seterr(gate_err, "scenario %s row %s: %llu of %llu outputs differ from the CPU "
                      "reference, first at thread %lld (expected %.9g, got %.9g)",
                      s->name, row->name, row->check.mismatches, row->check.checked,
                      row->check.first_mismatch, row->check.expected, row->check.got);
        }
        row->measured = 1;
        row->time_ms = stats[r];
        if (stats[r].noise > o->max_noise) t->noise_ok = 0;
        memset(&scratch, 0, sizeof scratch);
        scenario_model(s, work, c.blocks, tpb, c.unit, c.iters, &m, &scratch);
        int lanes = dev->fp32_lanes_per_sm ? dev->fp32_lanes_per_sm
                                           : runner_fp32_lanes(dev->cc_major, dev->cc_minor);
        double rate = (double)dev->sm_count * lanes * mhz * 1e3; /* FMAs per ms */
        row->floor_fraction = rate > 0 && stats[r].median > 0
                                  ? (double)m.thread_fmas / rate / stats[r].median : NAN;
    }
    {
        const struct dv_stats *base = &t->rows[s->baseline].time_ms;
        int ideal = -1;
        for (unsigned r = 0; r < s->nrows; r++)
            if (s->rows[r].layout == SCENARIO_LAYOUT_IDEAL) ideal = (int)r;
        for (unsigned r = 0; r < s->nrows; r++) {
            struct dv_row *row = &t->rows[r];
            double med = row->time_ms.median;
            row->ratio = base->median > 0 ? med / base->median : NAN;
            row->agreement = row->predicted_ratio > 0 ? row->ratio / row->predicted_ratio : NAN;
            if (s->rows[r].layout == SCENARIO_LAYOUT_IDEAL)
                row->measured_efficiency = NAN; /* the reference itself */
            else if (s->kind == SCENARIO_KWAY && s->rows[r].layout == SCENARIO_LAYOUT_LANES &&
                     ideal >= 0)
                row->measured_efficiency = med > 0 ? t->rows[ideal].time_ms.median / med : NAN;
            else
                row->measured_efficiency = med > 0 ? base->median / med : NAN;
        }
    }
    rc = 0;
cleanup:
    for (unsigned r = 0; r < SCENARIO_MAX_ROWS; r++) {
        scenario_dev_free(c.work[r]);
        scenario_dev_free(c.out[r]);
    }
    free(work);
    free(host_out);
    return rc;
}

int scenario_measure(const struct dv_options *o, struct dv_report *r, char *err) {
    unsigned first = r->ntables;
    unsigned blocks = o->blocks ? o->blocks : DV_DEFAULT_BLOCKS;
    unsigned tpb = (o->block_x ? o->block_x : DV_DEFAULT_BLOCK_X) * (o->block_y ? o->block_y : 1u);
    unsigned long long n = (unsigned long long)blocks * tpb;
    float *in = NULL;
    void *in_dev = NULL;
    double mhz0 = 0.0, mhz1 = 0.0, t0 = now_ms();
    int rc, gate_failed = 0;
    char gate_err[ERR_LEN] = "";

    utc_now(r->started_utc, sizeof r->started_utc);
    /* experiment_plan() fills the build and configuration, validates the
     * grid and hands a named scenario to scenario_plan(). */
    if ((o->scenario[0] ? experiment_plan(o, r, err) : scenario_plan(o, r, err)) != 0) return DV_ERR;
    rc = runner_device_query(o->device, &r->device, err);
    if (rc != 0) return rc;
    if ((rc = scenario_dev_select(o->device, err)) != 0) return rc;
    if ((rc = runner_measure_clock(&mhz0, err)) != 0) return rc;

    in = malloc((size_t)n * sizeof *in);
    if (!in) {
        dv_seterr(err, "scenario: out of memory for %llu inputs", n);
        return DV_ERR;
    }
    for (unsigned long long i = 0; i < n; i++) in[i] = dv_input_value(i);
    if ((rc = scenario_dev_alloc(&in_dev, (size_t)n * sizeof *in, err)) != 0) goto cleanup;
    if ((rc = scenario_dev_upload(in_dev, in, (size_t)n * sizeof *in, err)) != 0) goto cleanup;

    for (unsigned i = first; i < r->ntables; i++) {
        struct dv_table *t = &r->tables[i];
        const struct scenario *s = scenario_find(t->id + strlen("scenario:"));
        if (!s) {
            dv_seterr(err, "scenario: table %s has no scenario", t->id);
            rc = DV_ERR;
            goto cleanup;
        }
        rc = measure_table(s, o, in_dev, mhz0, &r->device, t, &gate_failed, gate_err, err);
        if (rc != 0) goto cleanup;
        r->gpu_time_ms += t->gpu_time_ms;
        for (unsigned j = 0; j < t->nrows; j++)
            if (!t->rows[j].check.ok)
                experiment_warn(r, "%s: %s: %llu of %llu outputs wrong, first at thread %lld", t->id,
                                t->rows[j].name, t->rows[j].check.mismatches,
                                t->rows[j].check.checked, t->rows[j].check.first_mismatch);
        if (!t->noise_ok)
            experiment_warn(r, "%s: some row's noise is over %.2f%% after %.0f ms of GPU time",
                            t->id, t->noise_limit * 100, t->gpu_time_ms);
    }
    if ((rc = runner_measure_clock(&mhz1, err)) != 0) goto cleanup;
    r->device.measured_sm_clock_mhz = (mhz0 + mhz1) / 2.0;
    r->device.measured_sm_clock_min_mhz = mhz0 < mhz1 ? mhz0 : mhz1;
    r->measured = 1;
    rc = 0;
    if (gate_failed) {
        dv_seterr(err, "%s", gate_err);
        rc = DV_EGATE;
    }
cleanup:
    scenario_dev_free(in_dev);
    free(in);
    r->wall_time_ms = now_ms() - t0;
    utc_now(r->finished_utc, sizeof r->finished_utc);
    return rc;
}
