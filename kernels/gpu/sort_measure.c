/* sort_measure.c -- the data-sort experiment's tables on the GPU
 * (sort_measure.h).
 *
 * Per cell: its rows set up on the device by sort_rows.h (the materials,
 * their order, the pairs, the pairs sorted once before the rounds, checked
 * here against the host's order: the sort's correctness, the index, the
 * outputs, CUB's storage sized and allocated once), the launches every
 * pass makes (sort_rows_launch(): the instruction profile's too). The rows are then
 * timed by the shared engine (timing_rows(): warm-up, paired rounds, the
 * ratios' intervals over sort+shade), each output checked bit for bit
 * against sortexp_shade() (one value per distinct input and material),
 * and the witness taken untimed.
 */
#include "kernels/gpu/sort_measure.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/base/hostfma.h"
#include "kernels/base/timeutil.h"
#include "kernels/gpu/cuda_call.h"
#include "kernels/gpu/device.h"
#include "kernels/gpu/devmem.h"
#include "kernels/gpu/sort_kernels.h"
#include "kernels/gpu/sort_rows.h"
#include "kernels/model/model/chain.h"
#include "kernels/model/model/scenario.h"
#include "kernels/model/model/sortexp.h"
#include "kernels/model/model/testimony.h"
#include "kernels/model/stats/interval.h"
#include "kernels/model/stats/ratio.h"

_Static_assert(sizeof(struct sort_warp_rec) == sizeof(struct sortexp_warp), "device and host warp records agree");

static int launch_row(void *p, unsigned row, char *err) { return sort_rows_launch(p, row, err); }

/* The sort inside sort+shade, timed directly: rounds of sort+shade's two
 * launches with an event before and after the sort, each followed by the
 * sort alone between two events (the order of the table's rounds, where
 * sort+shade follows the sort row), batches of SORT_INSIDE_BATCH rounds
 * queued behind the timing engine's hold and an untimed lead-in, as the
 * engine queues its rounds. Apart from the table's rounds, so the compared
 * rows' windows hold no extra event. */
#define SORT_INSIDE_ROUNDS 256
#define SORT_INSIDE_BATCH 16
#define SORT_INSIDE_EVENTS 4 /* per round: inside before, after; alone before, after */

struct sort_inside_run {
    cudaEvent_t ev[SORT_INSIDE_EVENTS * SORT_INSIDE_BATCH];
    double inside[SORT_INSIDE_ROUNDS], alone[SORT_INSIDE_ROUNDS];
    double hold_ms;
};

static int inside_queue(const struct sort_rows *d, const cudaEvent_t *e, char *err) {
    int rc = DV_CUDA_CALL(cudaEventRecord(e[0], 0), err);
    rc = rc ? rc : sort_rows_radix(d, d->key_a, d->pair_a, err);
    rc = rc ? rc : DV_CUDA_CALL(cudaEventRecord(e[1], 0), err);
    rc = rc ? rc : sort_rows_shade(d, SORT_SHADE_PAIRS, d->key_a, d->pair_a, d->out[SORTEXP_ROW_SORT_SHADE], NULL, err);
    rc = rc ? rc : DV_CUDA_CALL(cudaEventRecord(e[2], 0), err);
    rc = rc ? rc : sort_rows_radix(d, d->key_b, d->pair_b, err);
    return rc ? rc : DV_CUDA_CALL(cudaEventRecord(e[3], 0), err);
}

static int inside_batch(const struct sort_rows *d, const struct timing_clock *clk, struct sort_inside_run *x,
                        unsigned at, char *err) {
    const double q0 = timeutil_now_ms();
    int rc = timing_hold(clk, x->hold_ms, err);
    rc = rc ? rc : sort_rows_radix(d, d->key_b, d->pair_b, err);
    for (unsigned k = 0; k < SORT_INSIDE_BATCH && rc == 0; k++)
        rc = inside_queue(d, x->ev + SORT_INSIDE_EVENTS * k, err);
    x->hold_ms = timing_hold_next(timeutil_now_ms() - q0, 0); /* rounds of tens of microseconds: held */
    rc = rc ? rc : DV_CUDA_CALL(cudaEventSynchronize(x->ev[SORT_INSIDE_EVENTS * SORT_INSIDE_BATCH - 1]), err);
    for (unsigned k = 0; k < SORT_INSIDE_BATCH && rc == 0; k++) {
        const cudaEvent_t *e = x->ev + SORT_INSIDE_EVENTS * k;
        float in = 0, al = 0;
        rc = DV_CUDA_CALL(cudaEventElapsedTime(&in, e[0], e[1]), err);
        rc = rc ? rc : DV_CUDA_CALL(cudaEventElapsedTime(&al, e[2], e[3]), err);
        x->inside[at + k] = in, x->alone[at + k] = al;
    }
    return rc;
}

/* The inside's median and interval, and inside / alone paired by round with
 * its interval (at the tables' level, widened by the timer's resolution),
 * into `cell`; it agrees with the sort alone when that interval meets
 * 1 +- `target` (the tables' half-width target). Returns 0 or a DV_* code. */
static int sort_inside(const struct sort_rows *d, const struct timing_clock *clk, double resolution, double target,
                       struct dv_sort_cell *cell, char *err) {
    struct sort_inside_run *x = calloc(1, sizeof *x);
    double *scratch = malloc(2 * SORT_INSIDE_ROUNDS * sizeof *scratch);
    int rc = 0;
    if (!x || !scratch) {
        dv_seterr(err, "data-sort: out of memory for the sort inside");
        rc = DV_ERR;
    }
    for (unsigned e = 0; rc == 0 && e < SORT_INSIDE_EVENTS * SORT_INSIDE_BATCH; e++)
        rc = DV_CUDA_CALL(cudaEventCreate(&x->ev[e]), err);
    if (rc == 0) x->hold_ms = TIMING_HOLD_FIRST_MS;
    for (unsigned at = 0; at < SORT_INSIDE_ROUNDS && rc == 0; at += SORT_INSIDE_BATCH)
        rc = inside_batch(d, clk, x, at, err);
    const double res = isfinite(resolution) && resolution >= 0 ? resolution : 0;
    struct interval iv;
    struct ratio_pair rp;
    if (rc == 0 && (interval_median(x->inside, SORT_INSIDE_ROUNDS, INTERVAL_LEVEL, res, scratch, &iv, err) != 0 ||
                    ratio_paired(x->inside, x->alone, SORT_INSIDE_ROUNDS, INTERVAL_LEVEL, res, scratch, &rp, err) != 0))
        rc = DV_ERR;
    if (rc == 0)
        sortexp_cell_inside(cell, iv.point, iv.lo, iv.hi, rp.of_rounds.point, rp.of_rounds.lo, rp.of_rounds.hi, target);
    for (unsigned e = 0; x && e < SORT_INSIDE_EVENTS * SORT_INSIDE_BATCH; e++)
        if (x->ev[e]) cudaEventDestroy(x->ev[e]);
    free(x);
    free(scratch);
    return rc;
}

/* The sort's outputs at `key`/`pair` against the host's stable order:
 * keys and pairs bit for bit, the first wrong place named. */
static int check_sort(const struct sort_rows *d, const uint8_t *key, const uint64_t *pair, const uint8_t *mat,
                      const uint32_t *order, struct dv_check *c, char *err) {
    const size_t n = (size_t)d->n;
    uint8_t *hk = malloc(n);
    uint64_t *hp = malloc(n * 8);
    int rc = 0;
    if (!hk || !hp) {
        dv_seterr(err, "data-sort: out of memory for the sort's check");
        rc = DV_ERR;
    }
    rc = rc ? rc : devmem_download(hk, key, n, err);
    rc = rc ? rc : devmem_download(hp, pair, n * 8, err);
    dv_check_init(c);
    for (size_t j = 0; j < n && rc == 0; j++) {
        const float x = dv_input_value(order[j]);
        uint32_t bits;
        memcpy(&bits, &x, 4);
        const uint64_t want = ((uint64_t)order[j] << 32) | bits;
        c->checked++;
        if (hk[j] == mat[order[j]] && hp[j] == want) continue;
        if (c->mismatches++ == 0) {
            c->first_mismatch = (long long)j;
            c->expected = (float)order[j];
            c->got = (float)(hp[j] >> 32);
        }
    }
    c->ok = rc == 0 && c->mismatches == 0;
    free(hk);
    free(hp);
    return rc;
}

/* The reference of every (distinct input, material): ref[v * m + mat]. */
DV_FMA_CLONES static void reference_values(unsigned m, unsigned c, float *ref) {
    for (unsigned v = 0; v < DV_INPUT_DISTINCT; v++)
        for (unsigned k = 0; k < m; k++) ref[v * m + k] = sortexp_shade(dv_input_value(v), k, c);
}

static int check_shades(const struct sort_rows *d, const uint8_t *mat, struct dv_table *t, char *err) {
    const size_t n = (size_t)d->n;
    float *ref = malloc((size_t)DV_INPUT_DISTINCT * d->m * sizeof *ref), *got = malloc(n * 4);
    int rc = 0;
    if (!ref || !got) {
        dv_seterr(err, "data-sort: out of memory for the check");
        rc = DV_ERR;
    } else reference_values(d->m, d->c, ref);
    for (unsigned r = 0; r + 1 < SORTEXP_NROWS && rc == 0; r++) {
        struct dv_check *c = &t->rows[r].check;
        if ((rc = devmem_download(got, d->out[r], n * 4, err)) != 0) break;
        dv_check_init(c);
        for (size_t i = 0; i < n; i++) dv_check_add(c, i, ref[(i % DV_INPUT_DISTINCT) * d->m + mat[i]], got[i]);
        c->ok = c->mismatches == 0;
    }
    free(ref);
    free(got);
    return rc;
}

/* The GPU's per-warp records of shading order `sorted` into `gpu` (warps of
 * them, zeroed first), untimed. */
static int witness_launch(const struct sort_rows *d, int sorted, struct sort_warp_rec *gpu, char *err) {
    const unsigned long long warps = sortexp_warps(d->n, d->tpb);
    const size_t bytes = (size_t)warps * sizeof *gpu;
    struct sort_warp_rec *dev = NULL;
    int rc = devmem_alloc((void **)&dev, bytes, err);
    rc = rc ? rc : DV_CUDA_CALL(cudaMemset(dev, 0, bytes), err);
    rc = rc ? rc
         : sorted
             ? sort_rows_shade(d, SORT_SHADE_PAIRS, d->pre_key, d->pre_pair, d->out[SORTEXP_ROW_SHADE_SORTED], dev, err)
             : sort_rows_shade(d, SORT_SHADE_NAIVE, NULL, NULL, d->out[SORTEXP_ROW_NAIVE], dev, err);
    rc = rc ? rc : devmem_download(gpu, dev, bytes, err);
    devmem_free(dev);
    return rc;
}

/* The witness of one order into `w`: the GPU's records summed, each warp's
 * compared with the CPU count over the same array. */
static int witness_order(const struct sort_rows *d, int sorted, const uint8_t *mat, const uint32_t *order,
                         struct dv_sort_witness *w, char *err) {
    const unsigned long long warps = sortexp_warps(d->n, d->tpb);
    struct sort_warp_rec *gpu = malloc((size_t)warps * sizeof *gpu);
    if (!gpu) {
        dv_seterr(err, "data-sort: out of memory for the witness of %llu warps", warps);
        return DV_ERR;
    }
    const int rc = witness_launch(d, sorted, gpu, err);
    memset(w, 0, sizeof *w);
    w->first_difference = -1;
    for (unsigned long long i = 0; i < warps && rc == 0; i++) {
        struct sortexp_warp cpu, seen;
        sortexp_warp_count(mat, sorted ? order : NULL, d->n, d->tpb, i, &cpu);
        memcpy(&seen, &gpu[i], sizeof seen);
        sortexp_witness_add(w, &seen);
        if (w->first_difference < 0 && memcmp(&cpu, &seen, sizeof cpu) != 0) w->first_difference = (long long)i;
    }
    w->present = rc == 0;
    w->agrees = rc == 0 && w->first_difference < 0;
    free(gpu);
    return rc;
}

/* The counter pass's launch of row `row`: the row's launches as timed, on
 * its whole grid (the span is always the whole). */
static int counted_launch(void *p, unsigned row, const struct counters_span *span, char *err) {
    (void)span;
    return launch_row(p, row, err);
}

/* Each row's hardware counters (one untimed launch of its whole grid, in
 * ranges of the session's profiler) into its `counters`, derived against
 * the model's split warps (sortexp_counters_derive()). A refused pass
 * leaves the rows without and *cnt NULL, the reason in the testimony.
 * Returns 0, or DV_ESTICKY after a sticky CUDA error. */
static int sort_counters(struct sort_rows *d, struct dv_table *t, struct counters **cnt, struct dv_testimony *tm,
                         char *err) {
    struct testimony_grid grids[SORTEXP_NROWS];
    struct dv_counters out[SORTEXP_NROWS];
    char why[ERR_LEN] = "";
    const unsigned blocks = (unsigned)((d->n + d->tpb - 1) / d->tpb);
    for (unsigned r = 0; r < SORTEXP_NROWS; r++) testimony_counter_grid(blocks, 0, &grids[r]);
    const struct counters_launch l = {.launch = counted_launch, .wait = NULL, .ctx = d, .before = NULL};
    const double t0 = timeutil_now_ms();
    const int rc = counters_profile(*cnt, SORTEXP_NROWS, grids, &l, out, why);
    tm->counters_ms += timeutil_now_ms() - t0;
    if (rc != 0) {
        dv_seterr(tm->counters_reason, "counter pass of %s: %.400s", t->id, why);
        counters_invalidate(*cnt);
        *cnt = NULL;
        for (unsigned r = 0; r < t->nrows; r++) t->rows[r].counters.present = 0;
        if (rc == DV_ESTICKY) dv_seterr(err, "%s", tm->counters_reason);
        return rc == DV_ESTICKY ? rc : 0;
    }
    for (unsigned r = 0; r < SORTEXP_NROWS && r < t->nrows; r++) {
        t->rows[r].counters = out[r];
        sortexp_counters_derive(r, blocks, t->rows[r].warps_split.per_block, &t->rows[r].counters);
    }
    testimony_counters_compare(t);
    return 0;
}

int sort_measure_table(struct session *s, const struct dv_options *o, const struct dv_device *dev, double mhz,
                       struct timing_clock *clk, struct dv_table *t, struct dv_sort_cell *cell, const float *in_dev,
                       struct dv_testimony *tm, struct counters **cnt, char *err) {
    enum sortexp_dist dist;
    unsigned m, c;
    (void)s;
    if (sortexp_table_cell(t->id, &dist, &m, &c) != 0) {
        dv_seterr(err, "data-sort: table %s is no cell", t->id);
        return DV_ERR;
    }
    const struct dv_geometry g = scenario_grid(o);
    struct sort_rows d;
    double h0 = timeutil_now_ms();
    int rc = sort_rows_setup(&d, dist, m, c, dv_grid_threads(&g), g.block_x * g.block_y, in_dev, err);
    const uint8_t *mat = d.host_mat;
    const uint32_t *order = d.host_order;
    /* The sort before the rounds, checked: the same call the rows time. */
    rc = rc ? rc : check_sort(&d, d.pre_key, d.pre_pair, mat, order, &t->rows[SORTEXP_ROW_SORT].check, err);
    if (rc == 0 && !t->rows[SORTEXP_ROW_SORT].check.ok) {
        dv_seterr(err, "%s: the radix sort's pairs differ from the stable order by material at place %lld", t->id,
                  t->rows[SORTEXP_ROW_SORT].check.first_mismatch);
        rc = DV_EGATE;
    }
    t->host_setup_ms = timeutil_now_ms() - h0;
    const double clk_sum0 = clk ? clk->sum_mhz : 0;
    const unsigned clk_n0 = clk ? clk->n : 0;
    h0 = timeutil_now_ms();
    rc = rc ? rc : timing_rows(t, launch_row, &d, o, dev->rated_sm_clock_mhz, clk, err);
    t->host_timing_ms = timeutil_now_ms() - h0;
    if (clk && clk->n > clk_n0) mhz = (clk->sum_mhz - clk_sum0) / (clk->n - clk_n0);
    h0 = timeutil_now_ms();
    rc = rc ? rc : check_shades(&d, mat, t, err);
    rc = rc ? rc : check_sort(&d, d.key_b, d.pair_b, mat, order, &t->rows[SORTEXP_ROW_SORT].check, err);
    t->host_checks_ms = timeutil_now_ms() - h0;
    const int lanes = dev->fp32_lanes_per_sm ? dev->fp32_lanes_per_sm : device_fp32_lanes(dev->cc_major, dev->cc_minor);
    const double rate = (double)dev->sm_count * lanes * mhz * 1e3; /* FMAs per ms */
    for (unsigned r = 0; r < t->nrows && rc == 0; r++) {
        struct dv_row *row = &t->rows[r];
        row->measured = 1;
        row->floor_fraction = rate > 0 && row->thread_fmas && row->time_ms.median > 0
                                  ? (double)row->thread_fmas / rate / row->time_ms.median
                                  : NAN;
        row->agreement = row->predicted_ratio > 0 ? row->ratio / row->predicted_ratio : NAN;
    }
    if (rc == 0) sortexp_cell_from_table(t, cell);
    h0 = timeutil_now_ms();
    rc = rc ? rc : sort_inside(&d, clk, t->timer_resolution_ms, t->halfwidth_target, cell, err);
    t->host_timing_ms += timeutil_now_ms() - h0;
    if (rc == 0 && *cnt) rc = sort_counters(&d, t, cnt, tm, err);
    h0 = timeutil_now_ms();
    if (rc == 0 && !o->no_witness) {
        rc = witness_order(&d, 0, mat, order, &cell->naive, err);
        rc = rc ? rc : witness_order(&d, 1, mat, order, &cell->sorted, err);
    }
    t->cost_witness_ms = o->no_witness ? NAN : timeutil_now_ms() - h0;
    sort_rows_cleanup(&d);
    return rc;
}

int sort_witness_records(unsigned dist, unsigned m, unsigned blocks, unsigned tpb, int sorted, void *gpu, void *cpu,
                         char *err) {
    struct sort_rows d;
    memset(&d, 0, sizeof d);
    float *in = NULL;
    const unsigned long long n = (unsigned long long)blocks * tpb;
    float *host_in = malloc((size_t)(n ? n : 1) * sizeof *host_in);
    int rc = 0;
    if (!host_in) {
        dv_seterr(err, "data-sort: out of memory for the input");
        rc = DV_ERR;
    }
    for (unsigned long long i = 0; rc == 0 && i < n; i++) host_in[i] = dv_input_value(i);
    rc = rc ? rc : devmem_alloc((void **)&in, (size_t)n * 4, err);
    rc = rc ? rc : devmem_upload(in, host_in, (size_t)n * 4, err);
    rc = rc ? rc : sort_rows_setup(&d, (enum sortexp_dist)dist, m, SORTEXP_MIN_C, n, tpb, in, err);
    rc = rc ? rc : witness_launch(&d, sorted, gpu, err);
    for (unsigned long long i = 0; rc == 0 && i < sortexp_warps(n, tpb); i++)
        sortexp_warp_count(d.host_mat, sorted ? d.host_order : NULL, n, tpb, i, (struct sortexp_warp *)cpu + i);
    sort_rows_cleanup(&d);
    devmem_free(in);
    free(host_in);
    return rc;
}
