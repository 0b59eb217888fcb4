/* sampling.c -- one table's rounds and the decisions on them (sampling.h). */
#include "kernels/model/stats/sampling.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/model/stats/fit.h"
#include "kernels/model/stats/interval.h"
#include "kernels/model/stats/throttle.h"

int sampling_init(struct sampling *s, unsigned nrows, unsigned baseline, const struct dv_options *o, double rated_mhz,
                  char *err) {
    memset(s, 0, sizeof(*s));
    if (nrows == 0 || nrows > DV_MAX_ROWS) {
        dv_seterr(err, "sampling: rows: %u is outside 1..%u", nrows, DV_MAX_ROWS);
        return DV_ERR;
    }
    if (baseline >= nrows) {
        dv_seterr(err, "sampling: baseline: row %u is not among the %u rows", baseline, nrows);
        return DV_ERR;
    }
    s->nrows = nrows;
    s->baseline = baseline;
    s->rated_mhz = isfinite(rated_mhz) && rated_mhz > 0 ? rated_mhz : 0.0;
    stoprule_init(&s->rule, o);
    if (stoprule_check(&s->rule, err) != 0) return DV_ERR;
    stats_config_default(&s->config);
    /* The per-round ratio: noise a round shares cancels in it (ratio.h). */
    s->config.method = RATIO_OF_ROUNDS;
    /* A kept round short of the cap, every tolerated dropped one, and one
     * more, so a full buffer always ends on the cap or the throttle guard. */
    s->cap = s->rule.max_samples + s->rule.max_dropped + 1;
    s->samples = malloc(sizeof(double) * (size_t)nrows * s->cap);
    s->mhz = malloc(sizeof(double) * s->cap);
    s->drop = calloc(s->cap, 1);
    s->scratch = malloc(sizeof(double) * 4 * (size_t)s->cap);
    s->pool = malloc(sizeof(double) * 2 * (size_t)s->cap);
    if (!s->samples || !s->mhz || !s->drop || !s->scratch || !s->pool) {
        dv_seterr(err, "sampling: out of memory for %u rows x %u rounds", nrows, s->cap);
        return DV_ERR;
    }
    for (unsigned k = 0; k < s->cap; k++) s->mhz[k] = NAN;
    for (unsigned r = 0; r < nrows; r++) s->ref[r] = baseline;
    s->verdict.worst = -1;
    return 0;
}

int sampling_references(struct sampling *s, const unsigned *ref, char *err) {
    for (unsigned r = 0; r < s->nrows; r++)
        if (ref[r] >= s->nrows) {
            dv_seterr(err, "sampling: reference: row %u's, %u, is not among the %u rows", r, ref[r], s->nrows);
            return DV_ERR;
        }
    memcpy(s->ref, ref, sizeof(unsigned) * s->nrows);
    return 0;
}

void sampling_cleanup(struct sampling *s) {
    free(s->samples);
    free(s->mhz);
    free(s->drop);
    free(s->scratch);
    free(s->pool);
    s->samples = s->mhz = s->scratch = s->pool = NULL;
    s->drop = NULL;
}

unsigned sampling_room(const struct sampling *s, unsigned batch) {
    unsigned room = s->cap - s->taken;
    /* Rounds since the last look are counted as kept: the cap is then never
     * overshot, and a throttled round only costs a batch more. */
    const unsigned kept_now = s->taken - s->dropped;
    if (kept_now < s->rule.max_samples && s->rule.max_samples - kept_now < room) room = s->rule.max_samples - kept_now;
    return batch < room ? batch : room;
}

unsigned sampling_want(const struct sampling *s, unsigned batch, unsigned most) {
    if (batch == 0 || s->taken > 0 || s->rule.min_samples <= batch) return batch;
    const unsigned first = (s->rule.min_samples + batch - 1) / batch * batch;
    const unsigned fit = most / batch * batch;
    return first < fit ? first : fit > batch ? fit : batch;
}

double *sampling_row(struct sampling *s, unsigned row) { return s->samples + (size_t)row * s->cap; }

static int cmp_double(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double sampling_lattice(const double *v, size_t n, double *scratch) {
    if (n < 2) return 0.0;
    memcpy(scratch, v, n * sizeof(double));
    qsort(scratch, n, sizeof(double), cmp_double);
    size_t distinct = 1;
    double step = INFINITY;
    for (size_t i = 1; i < n; i++) {
        if (scratch[i] == scratch[distinct - 1]) continue;
        const double gap = scratch[i] - scratch[distinct - 1];
        if (gap < step) step = gap;
        scratch[distinct++] = scratch[i];
    }
    /* Ties are what a lattice makes; where almost every value is distinct,
     * any step is finer than the spread and widening by it changes nothing. */
    if (distinct < 2 || distinct > n / 2 || !(step > 0) || !isfinite(step)) return 0.0;
    /* The smallest gap is one tick read through the samples' rounding (float
     * milliseconds: about 1e-4 of a 32 ns tick at 0.04 ms), so a gap of many
     * ticks measured in it drifts; the span over the whole ticks it holds is
     * the tick to the span's precision instead. */
    double ticks = 0;
    for (size_t i = 1; i < distinct; i++) ticks += nearbyint((scratch[i] - scratch[i - 1]) / step);
    step = (scratch[distinct - 1] - scratch[0]) / ticks;
    for (size_t i = 1; i < distinct; i++) {
        const double k = (scratch[i] - scratch[i - 1]) / step;
        if (fabs(k - nearbyint(k)) > 0.02) return 0.0;
    }
    return step;
}

/* The timer's step from every row's kept samples: each row that shows a
 * lattice of its own gives its step, the table's is the smallest, and it
 * stands only when every other row's step is a whole number of it. Rows are
 * read apart because the gap between two rows' times says nothing of the
 * tick (two rows a step-multiple apart on a coarser lattice would look like
 * one), and a row whose samples all tie shows no step. */
static double kept_lattice(struct sampling *s) {
    double steps[DV_MAX_ROWS], step = INFINITY;
    for (unsigned r = 0; r < s->nrows; r++) {
        const size_t m = throttle_keep(sampling_row(s, r), s->drop, s->taken, s->pool);
        steps[r] = sampling_lattice(s->pool, m, s->pool + m);
        if (steps[r] > 0 && steps[r] < step) step = steps[r];
    }
    if (!isfinite(step)) return 0.0;
    for (unsigned r = 0; r < s->nrows; r++) {
        if (!(steps[r] > 0)) continue;
        const double k = steps[r] / step;
        if (fabs(k - nearbyint(k)) > 0.02) return 0.0;
    }
    return step;
}

int sampling_look(struct sampling *s, enum stoprule_reason *why, char *err) {
    *why = STOPRULE_CONTINUE;
    unsigned ndropped = 0;
    if (throttle_mark(s->mhz, s->taken, s->rated_mhz, THROTTLE_DEFAULT_FRACTION, s->drop, &ndropped, err) != 0)
        return DV_ERR;
    s->looks++;
    s->looked = s->taken;
    s->dropped = ndropped;
    s->kept = s->taken - ndropped;
    s->njudged = 0;
    struct interval judged[DV_MAX_ROWS];
    if (s->kept > 0) {
        s->config.resolution = kept_lattice(s);
        unsigned kept = 0;
        if (stats_table_ref(s->samples, s->cap, s->nrows, s->taken, s->drop, s->baseline, s->ref, &s->config,
                            s->scratch, s->rows, &kept, err) != 0)
            return DV_ERR;
        s->njudged = stats_judged(s->rows, s->nrows, s->baseline, judged, s->judged_rows);
    }
    const struct stoprule_progress p = {.kept = s->kept, .dropped = s->dropped, .gpu_ms = s->gpu_ms};
    *why = stoprule_decide(&s->rule, judged, s->njudged, &p, &s->verdict);
    if (*why == STOPRULE_CONTINUE && s->taken >= s->cap) {
        /* Unreachable by the buffer's size (sampling_init); stopping keeps
         * the loop from spinning on a full buffer if that ever changes. */
        *why = s->verdict.reason = STOPRULE_CAP;
    }
    const unsigned grown = (unsigned)ceil(s->taken * SAMPLING_GROWTH);
    s->next_look = grown > s->taken ? grown : s->taken + 1;
    return 0;
}

int sampling_file(struct sampling *s, unsigned n, double mhz, double batch_ms, enum stoprule_reason *why, char *err) {
    *why = STOPRULE_CONTINUE;
    if (n == 0 || n > s->cap - s->taken) {
        dv_seterr(err, "sampling: %u rounds do not fit the %u left", n, s->cap - s->taken);
        return DV_ERR;
    }
    for (unsigned r = 0; r < s->nrows; r++) {
        const double *row = sampling_row(s, r);
        for (unsigned k = s->taken; k < s->taken + n; k++) {
            if (!(row[k] > 0) || !isfinite(row[k])) {
                dv_seterr(err, "sampling: row %u, round %u: %g ms is not a finite positive time", r, k, row[k]);
                return DV_ERR;
            }
        }
    }
    s->mhz[s->taken] = mhz;
    s->taken += n;
    s->gpu_ms += batch_ms;
    const int due = s->taken <= SAMPLING_EVERY_BATCH_UNTIL || s->taken >= s->next_look ||
                    s->gpu_ms >= s->rule.budget_ms || s->taken - s->dropped >= s->rule.max_samples ||
                    s->taken >= s->cap;
    return due ? sampling_look(s, why, err) : 0;
}

static struct dv_ci ci_of(const struct interval *iv) { return (struct dv_ci){iv->lo, iv->hi}; }

/* The fit of the rows that name their x (dv_row.in_fit) over the rounds of
 * the last look, into t->fit (present 0 where it cannot be made: the
 * reason is no figure). */
static void report_fit(const struct sampling *s, struct dv_table *t) {
    int use[DV_MAX_ROWS] = {0}, any = 0;
    double x[DV_MAX_ROWS], med[DV_MAX_ROWS];
    for (unsigned r = 0; r < s->nrows && r < DV_MAX_ROWS; r++) {
        use[r] = t->rows[r].in_fit;
        x[r] = t->rows[r].fit_x;
        med[r] = s->rows[r].summary.median;
        any |= use[r];
    }
    t->fit.present = 0;
    if (!any || s->kept == 0) return;
    struct fit_result f;
    char err[ERR_LEN];
    if (fit_rounds(s->samples, s->cap, s->nrows, s->looked, s->drop, x, use, med, s->config.level, s->scratch, &f,
                   err) != 0)
        return;
    struct dv_fit *o = &t->fit;
    o->present = 1;
    o->points = f.points;
    o->rounds = f.rounds;
    o->a = f.a.point;
    o->b = f.b.point;
    o->b_over_a = f.b_over_a.point;
    o->a_ci = ci_of(&f.a);
    o->b_ci = ci_of(&f.b);
    o->b_over_a_ci = ci_of(&f.b_over_a);
    o->level = f.a.level;
    o->residual_rms_ms = f.rms;
    o->residual_max_rel = f.max_rel;
}

void sampling_report(const struct sampling *s, struct dv_table *t) {
    for (unsigned r = 0; r < s->nrows && r < DV_MAX_ROWS; r++) {
        struct dv_row *row = &t->rows[r];
        row->rounds_dropped = s->dropped;
        row->ratio_method = (int)s->config.method;
        if (s->kept == 0) {
            const struct dv_ci none = {NAN, NAN};
            row->time_ms = (struct dv_stats){NAN, NAN, NAN, NAN, NAN, 0, NAN};
            row->median_ci_ms = row->ratio_ci = none;
            row->ratio = row->ratio_of_medians = row->ratio_halfwidth = row->ratio_level = NAN;
            row->spread_flags = 0;
            row->spread_excess = row->spread_drift = NAN;
            continue;
        }
        const struct stats_row *st = &s->rows[r];
        row->time_ms = st->summary;
        row->median_ci_ms = ci_of(&st->median);
        row->ratio = st->ratio.point;
        row->ratio_ci = ci_of(&st->ratio);
        row->ratio_level = st->ratio.level;
        row->ratio_of_medians = st->ratios.of_medians.point;
        row->ratio_halfwidth = r == s->ref[r] ? 0.0 : interval_rel_halfwidth(&st->ratio);
        row->spread_flags = st->spread.flags;
        row->spread_excess = st->spread.excess;
        row->spread_drift = st->spread.drift;
    }
    t->gpu_time_ms = s->gpu_ms;
    t->halfwidth_target = s->rule.target;
    t->intervals_ok = s->verdict.reason == STOPRULE_TARGET;
    snprintf(t->stop_reason, sizeof(t->stop_reason), "%s", stoprule_reason_name(s->verdict.reason));
    t->worst_row =
        s->verdict.worst >= 0 && (unsigned)s->verdict.worst < s->njudged ? (int)s->judged_rows[s->verdict.worst] : -1;
    t->worst_halfwidth = t->worst_row >= 0 ? s->verdict.worst_halfwidth : NAN;
    t->timer_resolution_ms = s->config.resolution;
    report_fit(s, t);
}
