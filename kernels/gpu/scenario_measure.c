/* scenario_measure.c -- the scenario tables on the GPU (scenario_measure.h).
 *
 * Per table: its rows on the device (scenario_rows.h: each row's
 * assignment and output; the input is measure.c's, shared by every table),
 * a launch callback for the shared timing engine (timing.h), then each
 * row's last timed output compared bit for bit with the CPU reference
 * (scenario_refs: the values of a row's kernel, computed on the host's
 * cores as the first row that needs them comes, kept for the rows after it
 * that run the same kernel and lengths). The correctness-gate rule itself
 * (what a failed check means for the job) is measure.c's, the same for
 * every table kind. After the testimony, a reconvergence row's join record
 * (model/model/join_record.h): one untimed launch of its record
 * instantiation on a wave of its blocks, summarised by testimony_join().
 *
 * Derived figures per row: the ratio over its reference row (the baseline,
 * or the row it names) is timing_rows()'s (the median of the per-round
 * ratios, with its interval); agreement = ratio / predicted_ratio;
 * measured_efficiency = t(reference) / t(row), the reference being the
 * ideal row for the divergent row of a worked k-way table (so it measures
 * the model's max/sum) and the row's own reference otherwise (the model's
 * useful / issued for loops); floor_fraction = the row's own FMAs at the
 * measured clock on every FP32 lane / median.
 */
#include "kernels/gpu/scenario_measure.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernels/base/timeutil.h"
#include "kernels/gpu/cuda_call.h"
#include "kernels/gpu/device.h"
#include "kernels/gpu/devmem.h"
#include "kernels/gpu/intensity_measure.h"
#include "kernels/gpu/scenario_rows.h"
#include "kernels/gpu/testimony_run.h"
#include "kernels/gpu/timing.h"
#include "kernels/gpu/witness.h"
#include "kernels/model/model/scenario.h"
#include "kernels/model/model/scenario_table.h"
#include "kernels/model/model/testimony.h"

static int launch_row(void *p, unsigned row, char *err) {
    const struct scenario_rows *c = p;
    return scenario_rows_launch(c, row, 0, 0, c->blocks, NULL, NULL, err);
}

/* The table's part of its testimony (gpu/testimony_run.h): each row's
 * witness kernel and its counted launch on the blocks that stand for its
 * grid (one period of its assignment, or its stand-in grid), and the
 * model's records of those blocks. */
struct scenario_testimony {
    struct scenario_rows *c;
    const struct dv_options *o;
    struct dv_table *t;
    unsigned wave;                      /* blocks the GPU runs at once */
    unsigned blocks[SCENARIO_MAX_ROWS]; /* per row: the blocks its witness kernel runs */
};

/* Row `row`'s standing blocks: found only when the testimony runs, kept in
 * the table's state for the launches. */
static int on_prepare(void *p, unsigned row, struct testimony_row *out, char *err) {
    struct scenario_testimony *x = p;
    struct scenario_rows *c = x->c;
    if (row >= SCENARIO_MAX_ROWS) {
        dv_seterr(err, "scenario %s: row %u: a table has at most %u rows", c->s->name, row, SCENARIO_MAX_ROWS);
        return DV_ERR;
    }
    const int rc = scenario_rows_standing(c, row, x->wave, err);
    if (rc != 0) return rc;
    const struct testimony_grid *g = &c->grids[row];
    out->grid = *g;
    out->witness_blocks = c->sub[row].n                                ? c->sub[row].n
                          : g->nparts == 1 && g->weight[0] == 1.0 ? c->blocks
                                                                   : g->part_blocks[0];
    out->evaluations = scenario_evaluations(&c->row[row], x->o);
    x->blocks[row] = out->witness_blocks;
    return 0;
}

/* A row with a stand-in grid is witnessed on it: each of its blocks'
 * records counts for the grid blocks its copy stands for. */
static int on_witness(void *p, unsigned row, struct dv_witness_block *w, char *err) {
    const struct scenario_testimony *x = p;
    return scenario_rows_launch(x->c, row, x->c->sub[row].n > 0, 0, x->blocks[row], w, NULL, err);
}

static int on_expect(void *p, unsigned row, unsigned launched, struct dv_witness_block *exp, char *err) {
    const struct scenario_testimony *x = p;
    const struct scenario_rows *c = x->c;
    const unsigned tpb = c->block_x * c->block_y;
    (void)err;
    const uint8_t *work = c->sub[row].n ? c->sub[row].host_work : c->host_work[row];
    testimony_expect_scenario(&c->row[row], work, launched, tpb, c->iters, exp);
    return 0;
}

static void on_observe(void *p, unsigned row, unsigned launched, const struct dv_witness_block *seen,
                       const struct dv_witness_block *exp) {
    const struct scenario_testimony *x = p;
    const struct scenario_rows *c = x->c;
    struct dv_observed *o = &x->t->rows[row].observed;
    const unsigned per = scenario_evaluations(&c->row[row], x->o), warps = x->t->rows[row].warps_per_block;
    if (c->sub[row].n) testimony_observe_standin(seen, exp, &c->grids[row], c->sub[row].src, warps, per, o);
    else testimony_observe_standing(seen, exp, launched, c->blocks, warps, per, o);
    o->blocks_witnessed = launched;
}

/* A launch of the counter pass: blocks of the row's own grid or of its
 * stand-in grid. */
static int on_count(void *p, unsigned row, const struct counters_span *span, char *err) {
    struct scenario_rows *c = ((struct scenario_testimony *)p)->c;
    if (span->standin && !c->sub[row].n) {
        dv_seterr(err, "counter pass: row %u has no stand-in grid", row);
        return DV_ERR;
    }
    return scenario_rows_launch(c, row, span->standin, span->first, span->blocks, NULL, NULL, err);
}

/* This kind of table's part of the testimony (gpu/testimony_run.h). */
static const struct testimony_ops table_ops = {on_prepare, on_witness, on_expect, on_observe, on_count, NULL};

/* The host's cores for the reference values, at most SCENARIO_REFS_MAX_THREADS. */
static unsigned reference_threads(void) {
    const long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1u : n > SCENARIO_REFS_MAX_THREADS ? SCENARIO_REFS_MAX_THREADS : (unsigned)n;
}

/* Whether two rows run the same kernel with the same lengths and variant
 * (so one set of reference values serves both). */
static int same_kernel(const struct scenario *a, const struct scenario *b) {
    return a->kind == b->kind && a->variant == b->variant && memcmp(a->lengths, b->lengths, sizeof a->lengths) == 0;
}

/* Each row's last timed output against the CPU reference, and its floor
 * fraction: the row's own FMAs (the plan's model, row->thread_fmas) at
 * `mhz` on every FP32 lane of `dev`, over its median (timing_rows() filled
 * the times). `host_out` is scratch of one row (a float per thread).
 * Returns 0 or a DV_* code. */
static int check_rows(const struct scenario_rows *c, const struct dv_device *dev, double mhz, struct dv_table *t,
                      float *host_out, char *err) {
    const unsigned tpb = c->block_x * c->block_y;
    const unsigned long long n = (unsigned long long)c->blocks * tpb;
    const unsigned threads = reference_threads();
    const int lanes = dev->fp32_lanes_per_sm ? dev->fp32_lanes_per_sm : device_fp32_lanes(dev->cc_major, dev->cc_minor);
    const double rate = (double)dev->sm_count * lanes * mhz * 1e3; /* FMAs per ms */
    struct scenario_refs refs;
    int rc = 0, have = 0;
    for (unsigned r = 0; r < c->s->nrows && rc == 0; r++) {
        struct dv_row *row = &t->rows[r];
        if (!have || !same_kernel(&refs.s, &c->row[r])) {
            if (have) scenario_refs_free(&refs);
            if (scenario_refs_init(&refs, &c->row[r], c->unit, c->iters, err) != 0) return DV_ERR;
            have = 1;
        }
        if ((rc = devmem_download(host_out, c->out[r], (size_t)n * sizeof(float), err)) != 0) break;
        scenario_refs_fill(&refs, c->host_work[r], n, threads);
        scenario_refs_check(&refs, c->host_work[r], n, host_out, &row->check);
        row->measured = 1;
        row->floor_fraction =
            rate > 0 && row->time_ms.median > 0 ? (double)row->thread_fmas / rate / row->time_ms.median : NAN;
    }
    if (have) scenario_refs_free(&refs);
    return rc;
}

/* Ratio, agreement and measured efficiency of every measured row (see the
 * top of this file for what each is against). */
static void derive_ratios(const struct scenario *s, struct dv_table *t) {
    int ideal = -1;
    for (unsigned r = 0; r < s->nrows; r++)
        if (s->rows[r].layout == SCENARIO_LAYOUT_IDEAL) ideal = (int)r;
    for (unsigned r = 0; r < s->nrows; r++) {
        struct dv_row *row = &t->rows[r];
        const double med = row->time_ms.median, ref = t->rows[dv_row_reference(t, r)].time_ms.median;
        row->agreement = row->predicted_ratio > 0 ? row->ratio / row->predicted_ratio : NAN;
        if (s->rows[r].layout == SCENARIO_LAYOUT_IDEAL) row->measured_efficiency = NAN; /* the reference itself */
        else if (s->kind == SCENARIO_KWAY && s->rows[r].layout == SCENARIO_LAYOUT_LANES && ideal >= 0)
            row->measured_efficiency = med > 0 ? t->rows[ideal].time_ms.median / med : NAN;
        else row->measured_efficiency = med > 0 ? ref / med : NAN;
    }
}

/* The join record of reconvergence row `row`: its record instantiation on
 * a wave of its blocks (or its grid, if smaller), untimed, summarised into
 * the row. A row with no join (no tail) is left without one. Returns 0 or
 * a DV_* code. */
static int join_row(const struct scenario_rows *c, const struct dv_device *dev, unsigned row, struct dv_row *w,
                    char *err) {
    const struct scenario *rs = &c->row[row];
    if (rs->kind != SCENARIO_PAIR || !scenario_pair_has_tail(rs->variant)) return 0;
    int per_sm = 0, rc;
    if ((rc = scenario_rows_occupancy(c, row, &per_sm, err)) != 0) return rc;
    unsigned long long wave =
        (unsigned long long)(per_sm > 0 ? per_sm : 1) * (unsigned)(dev->sm_count > 0 ? dev->sm_count : 1);
    const unsigned blocks = (unsigned)(wave < c->blocks ? wave : c->blocks);
    const unsigned tpb = c->block_x * c->block_y;
    const size_t bytes = (size_t)blocks * tpb * sizeof(struct dv_join_lane);
    void *d = NULL;
    struct dv_join_lane *h = malloc(bytes);
    if (!h) {
        dv_seterr(err, "scenario %s: out of memory for the join record of %u blocks", c->s->name, blocks);
        return DV_ERR;
    }
    if ((rc = devmem_alloc(&d, bytes, err)) == 0 && (rc = DV_CUDA_CALL(cudaMemset(d, 0, bytes), err)) == 0 &&
        (rc = scenario_rows_launch(c, row, 0, 0, blocks, NULL, d, err)) == 0 &&
        (rc = devmem_download(h, d, bytes, err)) == 0)
        testimony_join(rs, c->host_work[row], h, blocks, tpb, &w->join);
    devmem_free(d);
    free(h);
    return rc;
}

int scenario_measure_table(struct session *sess, const struct dv_options *o, const struct dv_device *dev, double mhz,
                           struct timing_clock *clk, struct dv_table *t, const float *in_dev, struct dv_testimony *tm,
                           struct counters **cnt, char *err) {
    const struct scenario *s =
        strncmp(t->id, "scenario:", 9) == 0 ? scenario_find(t->id + strlen("scenario:")) : NULL;
    struct scenario_rows *c = calloc(1, sizeof *c);
    float *host_out = NULL;
    int rc = DV_ERR;
    if (!c) {
        dv_seterr(err, "scenario: out of memory");
        return DV_ERR;
    }
    if (!s) {
        dv_seterr(err, "scenario: table %s has no scenario", t->id);
        goto cleanup;
    }
    const struct dv_geometry g = scenario_grid(o);
    const unsigned long long n = (unsigned long long)g.blocks * (g.block_x * g.block_y);
    host_out = malloc((size_t)n * sizeof *host_out);
    if (!host_out) {
        dv_seterr(err, "scenario %s: out of memory for %llu threads", s->name, n);
        goto cleanup;
    }
    const double s0 = timeutil_now_ms();
    if ((rc = scenario_rows_setup(c, s, o, in_dev, (1u << s->nrows) - 1u, err)) != 0) goto cleanup;
    t->host_setup_ms = timeutil_now_ms() - s0;
    int compiled = 1;
    for (unsigned r = 0; r < s->nrows; r++) compiled &= scenario_rows_compiled(c, r);
    snprintf(t->kernel_iterations, sizeof(t->kernel_iterations), "%s", compiled ? "compile-time 4096" : "runtime");
    const double clk_sum0 = clk ? clk->sum_mhz : 0;
    const unsigned clk_n0 = clk ? clk->n : 0;
    double h0 = timeutil_now_ms();
    if ((rc = timing_rows(t, launch_row, c, o, dev->rated_sm_clock_mhz, clk, err)) != 0) goto cleanup;
    t->host_timing_ms = timeutil_now_ms() - h0;
    /* The floor at the clock sampled between this table's rounds. */
    if (clk && clk->n > clk_n0) mhz = (clk->sum_mhz - clk_sum0) / (clk->n - clk_n0);
    h0 = timeutil_now_ms();
    rc = check_rows(c, dev, mhz, t, host_out, err);
    t->host_checks_ms = timeutil_now_ms() - h0; /* outputs back and checked, one row after the other */
    if (rc != 0) goto cleanup;
    derive_ratios(s, t);
    struct scenario_testimony x = {c, o, t, dev->sm_count > 0 ? (unsigned)dev->sm_count : 1u, {0}};
    const struct testimony_table tt = {t, c->blocks, !o->no_witness, &table_ops, &x};
    if ((rc = testimony_run(sess, &tt, tm, cnt, err)) != 0) goto cleanup;
    for (unsigned r = 0; r < s->nrows && rc == 0 && !o->no_witness; r++) rc = join_row(c, dev, r, &t->rows[r], err);
    /* arithmetic intensity: DRAM bytes of whole grids, and the roofline */
    if (rc == 0 && s->kind == SCENARIO_MEM) rc = intensity_measure_dram(c, t, cnt, tm, err);
cleanup:
    scenario_rows_cleanup(c);
    free(c);
    free(host_out);
    return rc;
}
