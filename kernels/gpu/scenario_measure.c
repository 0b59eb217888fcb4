/* scenario_measure.c -- the scenario tables on the GPU (scenario_measure.h).
 *
 * Per table: one assignment buffer and one output buffer per row (the input
 * is measure.c's, shared by every table), a launch callback for the shared
 * timing engine (timing.h), then each row's last timed output compared bit
 * for bit with the CPU reference (scenario_refs: the table's reference
 * values, computed on the host's cores as the first row that needs them
 * comes, kept for the rows after it). The correctness-gate rule
 * itself (what a failed check means for the job) is measure.c's, the same
 * for every table kind.
 *
 * Derived figures per row: the ratio over the baseline is timing_rows()'s
 * (the median of the per-round ratios, with its interval); agreement =
 * ratio / predicted_ratio; measured_efficiency = t(reference) / t(row), the
 * reference being the ideal row for the divergent row of a k-way table (so
 * it measures the model's max/sum) and the same-work baseline otherwise (the
 * model's useful / issued for loops); floor_fraction = the row's own FMAs at
 * the measured clock on every FP32 lane / median.
 */
#include "kernels/gpu/scenario_measure.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernels/base/timeutil.h"
#include "kernels/gpu/device.h"
#include "kernels/gpu/testimony_run.h"
#include "kernels/gpu/witness.h"
#include "kernels/model/model/testimony.h"
#include "kernels/gpu/devmem.h"
#include "kernels/gpu/scenario_kernels.h"
#include "kernels/gpu/timing.h"
#include "kernels/model/model/chain.h"
#include "kernels/model/model/scenario.h"

/* The stand-in grid of a row (model/model/testimony.h, testimony_standin_bytes()):
 * `n` blocks, block k a copy of grid block src[k], laid out as the row's
 * kernel reads them: its assignment and its input on the device, an output
 * of its own (the testimony's launches leave the timed output alone), and
 * the assignment on the host for the witness's model. n 0: none. */
struct standin {
    unsigned n;
    unsigned *src;
    uint8_t *host_work;
    void *work;
    float *in, *out;
};

struct table_ctx {
    const struct scenario *s;
    unsigned blocks, block_x, block_y;
    unsigned unit, iters;
    struct scenario_lengths lengths;
    const float *in;
    float *out[SCENARIO_MAX_ROWS];
    void *work[SCENARIO_MAX_ROWS];                  /* each row's assignment on the device */
    uint8_t *host_work[SCENARIO_MAX_ROWS];          /* and on the host, for the checks and the witness's model */
    struct testimony_grid grids[SCENARIO_MAX_ROWS]; /* the counter pass's, from the assignments */
    struct standin sub[SCENARIO_MAX_ROWS];          /* a row's stand-in grid, where it has one */
};

/* Row `row`'s kernel on `blocks` blocks from block `first` of its own grid
 * or, with `standin`, of its stand-in grid. A scenario kernel tells its
 * blocks apart only by what they read (blockIdx.x only indexes the
 * buffers), so blocks from `first` on are launched as a grid of their own
 * over the buffers from that block on. */
static int launch_any(struct table_ctx *c, unsigned row, int standin, unsigned first, unsigned blocks,
                      struct dv_witness_block *w, char *err) {
    const size_t at = (size_t)first * c->block_x * c->block_y;
    const struct standin *x = &c->sub[row];
    const float *in = (standin ? x->in : c->in) + at;
    float *out = (standin ? x->out : c->out[row]) + at;
    const size_t elem = c->s->kind == SCENARIO_KWAY ? 1u : sizeof(uint32_t);
    const void *work = (const char *)(standin ? x->work : c->work[row]) + at * elem;
    switch (c->s->kind) {
    case SCENARIO_KWAY:
        return scenario_launch_kway(in, out, work, blocks, c->block_x, c->block_y, &c->lengths, c->unit, w, err);
    case SCENARIO_LOOP:
        return scenario_launch_loop(in, out, work, blocks, c->block_x, c->block_y, c->unit, w, err);
    default:
        return scenario_launch_short(in, out, work, blocks, c->block_x, c->block_y, c->s->lengths[0], c->s->lengths[1],
                                     c->iters, w, err);
    }
}

static int launch_row(void *p, unsigned row, char *err) {
    struct table_ctx *c = p;
    return launch_any(c, row, 0, 0, c->blocks, NULL, err);
}

/* Uploads row `r`'s assignment `w` in the element type its kernel reads. */
static int upload_work(const struct scenario *s, const uint8_t *w, unsigned long long n, void **dev,
                       char *err) {
    size_t elem = s->kind == SCENARIO_KWAY ? 1u : sizeof(uint32_t);
    uint32_t *wide = NULL;
    int rc = devmem_alloc(dev, (size_t)n * elem, err);
    if (rc != 0) return rc;
    if (s->kind == SCENARIO_KWAY) return devmem_upload(*dev, w, (size_t)n, err);
    wide = malloc((size_t)n * sizeof *wide);
    if (!wide) {
        dv_seterr(err, "scenario %s: out of memory", s->name);
        return DV_ERR;
    }
    for (unsigned long long i = 0; i < n; i++)
        wide[i] = s->kind == SCENARIO_LOOP ? w[i] : scenario_short_pattern(w[i]);
    rc = devmem_upload(*dev, wide, (size_t)n * sizeof *wide, err);
    free(wide);
    return rc;
}

/* The blocks that stand for row `r`'s grid in the testimony: a block runs
 * what its threads' assignments say and nothing else tells blocks apart,
 * so one period of them (c->grids[r]) or, where one costs the counter pass
 * fewer launch waves (`wave` blocks run at once), a stand-in grid: the
 * distinct blocks copied, their assignment and input uploaded, an output of
 * their own. Returns 0 (with or without a stand-in) or a DV_* code. */
static int standin_setup(struct table_ctx *c, unsigned r, unsigned wave, char *err) {
    const unsigned tpb = c->block_x * c->block_y, blocks = c->blocks;
    struct standin *x = &c->sub[r];
    struct testimony_grid g;
    float *hin = NULL;
    int rc = 0;
    testimony_counter_grid(blocks, testimony_period_bytes(c->host_work[r], tpb, blocks), &c->grids[r]);
    if (!(x->src = malloc((size_t)blocks * sizeof *x->src))) {
        dv_seterr(err, "scenario %s: out of memory for the stand-in of %u blocks", c->s->name, blocks);
        return DV_ERR;
    }
    const unsigned n = testimony_standin_bytes(c->host_work[r], tpb, blocks, wave, &c->grids[r], &g, x->src, blocks);
    if (n == 0) return 0;
    const size_t threads = (size_t)n * tpb;
    x->host_work = malloc(threads);
    hin = malloc(threads * sizeof *hin);
    if (!x->host_work || !hin) {
        free(hin);
        dv_seterr(err, "scenario %s: out of memory for the stand-in of %u blocks", c->s->name, n);
        return DV_ERR;
    }
    for (unsigned k = 0; k < n; k++) {
        const unsigned long long from = (unsigned long long)x->src[k] * tpb;
        memcpy(x->host_work + (size_t)k * tpb, c->host_work[r] + from, tpb);
        for (unsigned t = 0; t < tpb; t++) hin[(size_t)k * tpb + t] = dv_input_value(from + t);
    }
    void *in = NULL, *out = NULL;
    if ((rc = upload_work(c->s, x->host_work, threads, &x->work, err)) == 0 &&
        (rc = devmem_alloc(&in, threads * sizeof(float), err)) == 0 &&
        (rc = devmem_upload(in, hin, threads * sizeof(float), err)) == 0)
        rc = devmem_alloc(&out, threads * sizeof(float), err);
    x->in = in;
    x->out = out;
    free(hin);
    if (rc != 0) return rc;
    c->grids[r] = g;
    x->n = n;
    return 0;
}

static void standin_free(struct standin *x) {
    devmem_free(x->work);
    devmem_free(x->in);
    devmem_free(x->out);
    free(x->src);
    free(x->host_work);
    memset(x, 0, sizeof *x);
}

/* The table's part of its testimony (gpu/testimony_run.h): each row's
 * witness kernel and its counted launch on the blocks that stand for its
 * grid (one period of its assignment, or its stand-in grid), and the
 * model's records of those blocks. */
struct scenario_testimony {
    struct table_ctx *c;
    const struct dv_options *o;
    struct dv_table *t;
    unsigned wave;                      /* blocks the GPU runs at once */
    unsigned blocks[SCENARIO_MAX_ROWS]; /* per row: the blocks its witness kernel runs */
};

/* Row `row`'s standing blocks: found only when the testimony runs
 * (standin_setup()), kept in the table's state for the launches. */
static int on_prepare(void *p, unsigned row, struct testimony_row *out, char *err) {
    struct scenario_testimony *x = p;
    struct table_ctx *c = x->c;
    if (row >= SCENARIO_MAX_ROWS) {
        dv_seterr(err, "scenario %s: row %u: a table has at most %u rows", c->s->name, row, SCENARIO_MAX_ROWS);
        return DV_ERR;
    }
    const int rc = standin_setup(c, row, x->wave, err);
    if (rc != 0) return rc;
    const struct testimony_grid *g = &c->grids[row];
    out->grid = *g;
    out->witness_blocks = c->sub[row].n                                ? c->sub[row].n
                          : g->nparts == 1 && g->weight[0] == 1.0 ? c->blocks
                                                                   : g->part_blocks[0];
    out->evaluations = scenario_evaluations(c->s, x->o);
    x->blocks[row] = out->witness_blocks;
    return 0;
}

/* A row with a stand-in grid is witnessed on it: each of its blocks'
 * records counts for the grid blocks its copy stands for. */
static int on_witness(void *p, unsigned row, struct dv_witness_block *w, char *err) {
    const struct scenario_testimony *x = p;
    return launch_any(x->c, row, x->c->sub[row].n > 0, 0, x->blocks[row], w, err);
}

static int on_expect(void *p, unsigned row, unsigned launched, struct dv_witness_block *exp, char *err) {
    const struct scenario_testimony *x = p;
    const struct table_ctx *c = x->c;
    const unsigned tpb = c->block_x * c->block_y;
    (void)err;
    const uint8_t *work = c->sub[row].n ? c->sub[row].host_work : c->host_work[row];
    testimony_expect_scenario(c->s, work, launched, tpb, c->iters, exp);
    return 0;
}

static void on_observe(void *p, unsigned row, unsigned launched, const struct dv_witness_block *seen,
                       const struct dv_witness_block *exp) {
    const struct scenario_testimony *x = p;
    const struct table_ctx *c = x->c;
    struct dv_observed *o = &x->t->rows[row].observed;
    const unsigned per = scenario_evaluations(c->s, x->o), warps = x->t->rows[row].warps_per_block;
    if (c->sub[row].n) testimony_observe_standin(seen, exp, &c->grids[row], c->sub[row].src, warps, per, o);
    else testimony_observe_standing(seen, exp, launched, c->blocks, warps, per, o);
    o->blocks_witnessed = launched;
}

/* A launch of the counter pass: blocks of the row's own grid or of its
 * stand-in grid. */
static int on_count(void *p, unsigned row, const struct counters_span *span, char *err) {
    struct table_ctx *c = ((struct scenario_testimony *)p)->c;
    if (span->standin && !c->sub[row].n) {
        dv_seterr(err, "counter pass: row %u has no stand-in grid", row);
        return DV_ERR;
    }
    return launch_any(c, row, span->standin, span->first, span->blocks, NULL, err);
}

/* This kind of table's part of the testimony (gpu/testimony_run.h). */
static const struct testimony_ops table_ops = {on_prepare, on_witness, on_expect, on_observe, on_count, NULL};

/* The launch state of scenario table `s` for options `o` over device input
 * `in_dev`: the grid, the unit and short-kernel iterations, the path
 * lengths, and per row its assignment (uploaded in the element type its
 * kernel reads, and kept on the host: one byte per thread) and its output
 * buffer. Returns 0 or a DV_* code; the caller frees c->work[],
 * c->host_work[] and c->out[] either way. */
static int table_setup(struct table_ctx *c, const struct scenario *s, const struct dv_options *o, const float *in_dev,
                       char *err) {
    int rc;
    const struct dv_geometry g = scenario_grid(o);
    c->s = s;
    c->blocks = g.blocks;
    c->block_x = g.block_x;
    c->block_y = g.block_y;
    c->unit = scenario_unit_fmas(o);
    c->iters = scenario_short_iterations(o);
    c->in = in_dev;
    for (unsigned p = 0; p < SCENARIO_MAX_PATHS; p++) c->lengths.len[p] = s->lengths[p];
    const unsigned tpb = c->block_x * c->block_y;
    const unsigned long long n = (unsigned long long)c->blocks * tpb;
    for (unsigned r = 0; r < s->nrows; r++) {
        uint8_t *work = c->host_work[r] = malloc((size_t)n);
        if (!work) {
            dv_seterr(err, "scenario %s: out of memory for %llu threads", s->name, n);
            return DV_ERR;
        }
        if (scenario_assign(s, s->rows[r].layout, c->blocks, tpb, work, err) != 0) return DV_ERR;
        if ((rc = upload_work(s, work, n, &c->work[r], err)) != 0) return rc;
        void *out = NULL;
        rc = devmem_alloc(&out, (size_t)n * sizeof(float), err);
        c->out[r] = out;
        if (rc != 0) return rc;
    }
    return 0;
}

/* The host's cores for the reference values, at most SCENARIO_REFS_MAX_THREADS. */
static unsigned reference_threads(void) {
    const long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1u : n > SCENARIO_REFS_MAX_THREADS ? SCENARIO_REFS_MAX_THREADS : (unsigned)n;
}

/* Each row's last timed output against the CPU reference, and its floor
 * fraction: the row's own FMAs (the plan's model, row->thread_fmas) at
 * `mhz` on every FP32 lane of `dev`, over its median (timing_rows() filled
 * the times). Each row's assignment is the one table_setup() kept;
 * `host_out` is scratch of one row (a float per thread). Returns 0 or a
 * DV_* code. */
static int check_rows(const struct table_ctx *c, const struct dv_device *dev, double mhz, struct dv_table *t,
                      float *host_out, char *err) {
    const struct scenario *s = c->s;
    const unsigned tpb = c->block_x * c->block_y;
    const unsigned long long n = (unsigned long long)c->blocks * tpb;
    const unsigned threads = reference_threads();
    const int lanes = dev->fp32_lanes_per_sm ? dev->fp32_lanes_per_sm : device_fp32_lanes(dev->cc_major, dev->cc_minor);
    const double rate = (double)dev->sm_count * lanes * mhz * 1e3; /* FMAs per ms */
    struct scenario_refs refs;
    int rc = 0;
    if (scenario_refs_init(&refs, s, c->unit, c->iters, err) != 0) return DV_ERR;
    for (unsigned r = 0; r < s->nrows; r++) {
        struct dv_row *row = &t->rows[r];
        if ((rc = devmem_download(host_out, c->out[r], (size_t)n * sizeof(float), err)) != 0) break;
        scenario_refs_fill(&refs, c->host_work[r], n, threads);
        scenario_refs_check(&refs, c->host_work[r], n, host_out, &row->check);
        row->measured = 1;
        row->floor_fraction =
            rate > 0 && row->time_ms.median > 0 ? (double)row->thread_fmas / rate / row->time_ms.median : NAN;
    }
    scenario_refs_free(&refs);
    return rc;
}

/* Ratio, agreement and measured efficiency of every measured row (see the
 * top of this file for what each is against). */
static void derive_ratios(const struct scenario *s, struct dv_table *t) {
    const struct dv_stats *base = &t->rows[s->baseline].time_ms;
    int ideal = -1;
    for (unsigned r = 0; r < s->nrows; r++)
        if (s->rows[r].layout == SCENARIO_LAYOUT_IDEAL) ideal = (int)r;
    for (unsigned r = 0; r < s->nrows; r++) {
        struct dv_row *row = &t->rows[r];
        double med = row->time_ms.median;
        row->agreement = row->predicted_ratio > 0 ? row->ratio / row->predicted_ratio : NAN;
        if (s->rows[r].layout == SCENARIO_LAYOUT_IDEAL) row->measured_efficiency = NAN; /* the reference itself */
        else if (s->kind == SCENARIO_KWAY && s->rows[r].layout == SCENARIO_LAYOUT_LANES && ideal >= 0)
            row->measured_efficiency = med > 0 ? t->rows[ideal].time_ms.median / med : NAN;
        else row->measured_efficiency = med > 0 ? base->median / med : NAN;
    }
}

int scenario_measure_table(struct session *sess, const struct dv_options *o, const struct dv_device *dev, double mhz,
                           struct timing_clock *clk, struct dv_table *t, const float *in_dev, struct dv_testimony *tm,
                           struct counters **cnt, char *err) {
    const struct scenario *s =
        strncmp(t->id, "scenario:", 9) == 0 ? scenario_find(t->id + strlen("scenario:")) : NULL;
    struct table_ctx c;
    float *host_out = NULL;
    int rc = DV_ERR;

    memset(&c, 0, sizeof c);
    if (!s) {
        dv_seterr(err, "scenario: table %s has no scenario", t->id);
        return DV_ERR;
    }
    const struct dv_geometry g = scenario_grid(o);
    const unsigned long long n = (unsigned long long)g.blocks * (g.block_x * g.block_y);
    host_out = malloc((size_t)n * sizeof *host_out);
    if (!host_out) {
        dv_seterr(err, "scenario %s: out of memory for %llu threads", s->name, n);
        goto cleanup;
    }
    const double s0 = timeutil_now_ms();
    if ((rc = table_setup(&c, s, o, in_dev, err)) != 0) goto cleanup;
    t->host_setup_ms = timeutil_now_ms() - s0;
    snprintf(t->kernel_iterations, sizeof(t->kernel_iterations), "%s",
             scenario_kernel_compiled(c.unit, c.iters) ? "compile-time 4096" : "runtime");
    const double clk_sum0 = clk ? clk->sum_mhz : 0;
    const unsigned clk_n0 = clk ? clk->n : 0;
    double h0 = timeutil_now_ms();
    if ((rc = timing_rows(t, launch_row, &c, o, dev->rated_sm_clock_mhz, clk, err)) != 0) goto cleanup;
    t->host_timing_ms = timeutil_now_ms() - h0;
    /* The floor at the clock sampled between this table's rounds. */
    if (clk && clk->n > clk_n0) mhz = (clk->sum_mhz - clk_sum0) / (clk->n - clk_n0);
    h0 = timeutil_now_ms();
    rc = check_rows(&c, dev, mhz, t, host_out, err);
    t->host_checks_ms = timeutil_now_ms() - h0; /* outputs back and checked, one row after the other */
    if (rc != 0) goto cleanup;
    derive_ratios(s, t);
    struct scenario_testimony x = {&c, o, t, dev->sm_count > 0 ? (unsigned)dev->sm_count : 1u, {0}};
    const struct testimony_table tt = {t, c.blocks, !o->no_witness, &table_ops, &x};
    rc = testimony_run(sess, &tt, tm, cnt, err);
cleanup:
    for (unsigned r = 0; r < SCENARIO_MAX_ROWS; r++) {
        devmem_free(c.work[r]);
        devmem_free(c.out[r]);
        free(c.host_work[r]);
        standin_free(&c.sub[r]);
    }
    free(host_out);
    return rc;
}
