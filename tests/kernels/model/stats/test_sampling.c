/* test_sampling.c -- one table's rounds and the decisions on them, driven as
 * gpu/timing.c drives them (batches of 8 rounds, a clock reading before
 * each batch), with synthetic rounds of known shape: when the rule looks,
 * when it stops and why, what a throttled clock drops, what a timer's
 * lattice does, and what lands in the table. */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <math.h>
#include <string.h>

#include "kernels/model/stats/sampling.h"
#include "kernels/model/stats/spread.h"
#include "kernels/model/model/experiment.h"
#include "tests/kernels/model/stats/synth.h"

#define BATCH 8
#define RATED 1980.0

struct table_shape {
    unsigned nrows, baseline;
    double medians[DV_MAX_ROWS]; /* ms */
    double noise;                /* each row's own, relative */
    double shared;               /* each round's, common to every row */
    double step;                 /* the timer's tick in ms, 0: continuous */
};

/* What a batch's clock reads: `low` batches read under 75% of RATED. */
typedef int (*throttled_fn)(unsigned batch);
static int never(unsigned batch) {
    (void)batch;
    return 0;
}

struct outcome {
    enum stoprule_reason why;
    unsigned batches, looks, kept, dropped, taken;
    double gpu_ms;
};

/* Samples `sh` until the rule stops (at most 1000 batches), a throttled
 * round twice as slow as a fine one, and fills `t` from the last look. */
static struct outcome drive(struct sampling *s, const struct table_shape *sh, throttled_fn throttled, uint64_t seed,
                            struct dv_table *t) {
    struct synth g;
    synth_seed(&g, seed);
    struct outcome out = {0};
    char err[ERR_LEN];
    enum stoprule_reason why = STOPRULE_CONTINUE;
    for (unsigned b = 0; why == STOPRULE_CONTINUE && b < 1000; b++) {
        const unsigned n = sampling_room(s, BATCH);
        cr_assert_gt(n, 0u, "room for a batch while the rule continues");
        const int slow = throttled(b);
        double ms = 0;
        for (unsigned k = 0; k < n; k++) {
            const double common = 1 + sh->shared * synth_normal(&g);
            for (unsigned r = 0; r < sh->nrows; r++) {
                double v = sh->medians[r] * common * synth_draw(&g, SYNTH_NORMAL, sh->noise) * (slow ? 2.0 : 1.0);
                if (sh->step > 0) v = fmax(sh->step, nearbyint(v / sh->step) * sh->step);
                sampling_row(s, r)[s->taken + k] = v;
                ms += v;
            }
        }
        cr_assert_eq(sampling_file(s, n, slow ? 0.5 * RATED : 0.99 * RATED, ms, &why, err), 0, "%s", err);
        out.batches++;
    }
    out.why = why;
    out.looks = s->looks;
    out.kept = s->kept;
    out.dropped = s->dropped;
    out.taken = s->taken;
    out.gpu_ms = s->gpu_ms;
    sampling_report(s, t);
    return out;
}

static void lesson_options(struct dv_options *o) { experiment_defaults(o); }

static const struct table_shape lesson = {
    .nrows = 4, .baseline = 2, .medians = {3.272, 3.235, 1.616, 1.617}, .noise = 0.002, .shared = 0.002};

Test(sampling, a_quiet_table_stops_on_its_target_and_says_so) {
    struct dv_options o;
    lesson_options(&o);
    struct sampling s;
    struct dv_table t;
    memset(&t, 0, sizeof t);
    t.nrows = lesson.nrows;
    char err[ERR_LEN];
    cr_assert_eq(sampling_init(&s, lesson.nrows, lesson.baseline, &o, RATED, err), 0, "%s", err);
    const struct outcome out = drive(&s, &lesson, never, 1, &t);
    cr_expect_eq(out.why, STOPRULE_TARGET);
    cr_expect_geq(out.kept, o.min_samples);
    cr_expect_leq(out.kept, 40u, "a quiet table needs few rounds: %u", out.kept);
    cr_expect(t.intervals_ok);
    cr_expect_str_eq(t.stop_reason, "target");
    cr_expect_float_eq(t.halfwidth_target, o.max_noise, 0);
    cr_expect_float_eq(t.gpu_time_ms, out.gpu_ms, 1e-9);
    cr_expect_eq(t.timer_resolution_ms, 0.0, "continuous samples: no lattice");
    cr_assert(t.worst_row >= 0 && t.worst_row != (int)lesson.baseline, "worst row %d", t.worst_row);
    cr_expect_leq(t.worst_halfwidth, o.max_noise);
    for (unsigned r = 0; r < lesson.nrows; r++) {
        const struct dv_row *w = &t.rows[r];
        const double truth = lesson.medians[r] / lesson.medians[lesson.baseline];
        cr_expect_eq(w->time_ms.samples, out.kept);
        cr_expect_eq(w->ratio_method, (int)RATIO_OF_ROUNDS);
        cr_expect(w->median_ci_ms.lo <= w->time_ms.median && w->time_ms.median <= w->median_ci_ms.hi);
        cr_expect(w->ratio_ci.lo <= w->ratio && w->ratio <= w->ratio_ci.hi, "row %u: %g [%g, %g]", r, w->ratio,
                  w->ratio_ci.lo, w->ratio_ci.hi);
        cr_expect(fabs(w->ratio - truth) < 0.01 * truth, "row %u: ratio %g, true %g", r, w->ratio, truth);
        cr_expect(fabs(w->ratio_of_medians - truth) < 0.01 * truth);
        cr_expect_geq(w->ratio_level, INTERVAL_LEVEL - 1e-9);
        cr_expect_eq(w->rounds_dropped, 0u);
        if (r == lesson.baseline) {
            cr_expect(w->ratio == 1 && w->ratio_ci.lo == 1 && w->ratio_ci.hi == 1 && w->ratio_halfwidth == 0);
        } else {
            cr_expect_leq(w->ratio_halfwidth, o.max_noise);
            cr_expect_float_eq(w->ratio_halfwidth,
                               fmax(w->ratio - w->ratio_ci.lo, w->ratio_ci.hi - w->ratio) / w->ratio, 1e-12);
        }
    }
    sampling_cleanup(&s);
}

/* Looks after every batch up to 80 rounds, then at each 10% of growth: a
 * table that never meets its target (5% noise each, no shared part) is
 * looked at 10 + k times on its way to the cap, where k counts the 10%
 * steps from 80 to 2,000 rounds, and never keeps more than the cap. */
Test(sampling, looks_every_batch_then_every_ten_percent_and_stops_at_the_cap) {
    struct dv_options o;
    lesson_options(&o);
    o.budget_ms = DV_MAX_BUDGET_MS;
    o.max_noise = 0.0001;
    const struct table_shape noisy = {.nrows = 2, .baseline = 0, .medians = {1.0, 2.0}, .noise = 0.05};
    struct sampling s;
    struct dv_table t;
    memset(&t, 0, sizeof t);
    char err[ERR_LEN];
    cr_assert_eq(sampling_init(&s, 2, 0, &o, RATED, err), 0, "%s", err);
    const struct outcome out = drive(&s, &noisy, never, 2, &t);
    cr_expect_eq(out.why, STOPRULE_CAP);
    cr_expect_eq(out.kept, o.max_samples, "the cap is met exactly: %u", out.kept);
    cr_expect(!t.intervals_ok);
    cr_expect_str_eq(t.stop_reason, "cap");
    cr_expect_gt(t.worst_halfwidth, o.max_noise);
    /* The schedule, replayed: every batch to 80 rounds, then at 10% growth
     * (or at the cap, whichever comes first). */
    unsigned taken = 0, looks = 0, next = 0;
    while (taken < o.max_samples) {
        unsigned n = o.max_samples - taken < BATCH ? o.max_samples - taken : BATCH;
        taken += n;
        if (taken <= SAMPLING_EVERY_BATCH_UNTIL || taken >= next || taken >= o.max_samples) {
            looks++;
            next = (unsigned)ceil(taken * SAMPLING_GROWTH);
        }
    }
    cr_expect_eq(out.looks, looks, "looks %u, the schedule's %u", out.looks, looks);
    cr_expect_lt(out.looks, 60u, "far fewer looks than the %u batches", out.batches);
    sampling_cleanup(&s);
}

Test(sampling, the_budget_stops_a_table_within_a_batch_of_it) {
    struct dv_options o;
    lesson_options(&o);
    o.budget_ms = 300;
    o.max_noise = 0.0001;
    struct sampling s;
    struct dv_table t;
    memset(&t, 0, sizeof t);
    char err[ERR_LEN];
    cr_assert_eq(sampling_init(&s, lesson.nrows, lesson.baseline, &o, RATED, err), 0, "%s", err);
    const struct outcome out = drive(&s, &lesson, never, 3, &t);
    cr_expect_eq(out.why, STOPRULE_BUDGET);
    cr_expect_str_eq(t.stop_reason, "budget");
    cr_expect(!t.intervals_ok);
    const double round_ms = 3.272 + 3.235 + 1.616 + 1.617;
    cr_expect(out.gpu_ms >= o.budget_ms && out.gpu_ms < o.budget_ms + (BATCH + 1) * round_ms * 1.05, "%g ms",
              out.gpu_ms);
    sampling_cleanup(&s);
}

/* Batches 3 and 4 run at half the clock (and twice as slow): their rounds,
 * and the batches on either side of a low reading, leave every row, are
 * counted on each row, and are sampled again, so the medians are the
 * unthrottled ones. */
static int batches_3_and_4(unsigned b) { return b == 3 || b == 4; }

Test(sampling, throttled_rounds_are_dropped_from_every_row_and_sampled_again) {
    struct dv_options o;
    lesson_options(&o);
    o.min_samples = 40;
    struct sampling s;
    struct dv_table t;
    memset(&t, 0, sizeof t);
    char err[ERR_LEN];
    cr_assert_eq(sampling_init(&s, lesson.nrows, lesson.baseline, &o, RATED, err), 0, "%s", err);
    const struct outcome out = drive(&s, &lesson, batches_3_and_4, 4, &t);
    cr_expect_eq(out.why, STOPRULE_TARGET);
    /* Readings before batches 3 and 4 are low: batch 2's rounds (after the
     * fine reading before it, before the low one), 3 and 4 are dropped. */
    cr_expect_eq(out.dropped, 3u * BATCH, "dropped %u", out.dropped);
    cr_expect_geq(out.kept, o.min_samples, "re-sampled to the minimum");
    cr_expect_eq(out.kept + out.dropped, out.taken);
    for (unsigned r = 0; r < lesson.nrows; r++) {
        cr_expect_eq(t.rows[r].rounds_dropped, out.dropped);
        cr_expect(fabs(t.rows[r].time_ms.median / lesson.medians[r] - 1) < 0.01, "row %u median %g", r,
                  t.rows[r].time_ms.median);
        cr_expect_eq(t.rows[r].time_ms.samples, out.kept);
    }
    sampling_cleanup(&s);
}

static int always(unsigned b) {
    (void)b;
    return 1;
}

Test(sampling, a_gpu_throttled_for_good_stops_with_the_reason_and_no_figures) {
    struct dv_options o;
    lesson_options(&o);
    o.max_samples = 50;
    struct sampling s;
    struct dv_table t;
    memset(&t, 0, sizeof t);
    char err[ERR_LEN];
    cr_assert_eq(sampling_init(&s, lesson.nrows, lesson.baseline, &o, RATED, err), 0, "%s", err);
    const struct outcome out = drive(&s, &lesson, always, 5, &t);
    cr_expect_eq(out.why, STOPRULE_THROTTLED);
    cr_expect_eq(out.kept, 0u);
    cr_expect_gt(out.dropped, o.max_samples);
    cr_expect_str_eq(t.stop_reason, "throttled");
    cr_expect(!t.intervals_ok);
    cr_expect_eq(t.worst_row, -1);
    cr_expect(isnan(t.rows[0].time_ms.median) && isnan(t.rows[0].ratio) && t.rows[0].time_ms.samples == 0);
    sampling_cleanup(&s);
}

/* Without a rated clock nothing is judged low: the same slow batches stay. */
Test(sampling, no_rated_clock_drops_nothing) {
    struct dv_options o;
    lesson_options(&o);
    struct sampling s;
    struct dv_table t;
    memset(&t, 0, sizeof t);
    char err[ERR_LEN];
    cr_assert_eq(sampling_init(&s, lesson.nrows, lesson.baseline, &o, 0.0, err), 0, "%s", err);
    const struct outcome out = drive(&s, &lesson, batches_3_and_4, 6, &t);
    cr_expect_eq(out.dropped, 0u);
    sampling_cleanup(&s);
}

/* The small grid that the per-sample rule ran to its 2,000-sample cap and
 * failed (baseline 0.0418 ms, 0.72% spread from launch jitter, rows about
 * 1.25x): its ratios are known to well under 0.5% long before, and the
 * table stops on its target though every row stays noisier than 0.5%. */
Test(sampling, a_small_grid_noisier_than_the_target_stops_on_its_intervals) {
    struct dv_options o;
    lesson_options(&o);
    const struct table_shape small = {
        .nrows = 2, .baseline = 1, .medians = {0.0522, 0.04179}, .noise = 0.0072, .shared = 0.0};
    struct sampling s;
    struct dv_table t;
    memset(&t, 0, sizeof t);
    char err[ERR_LEN];
    cr_assert_eq(sampling_init(&s, 2, 1, &o, RATED, err), 0, "%s", err);
    const struct outcome out = drive(&s, &small, never, 7, &t);
    cr_expect_eq(out.why, STOPRULE_TARGET);
    cr_expect_lt(out.kept, 200u, "kept %u", out.kept);
    cr_expect_gt(t.rows[0].time_ms.noise, o.max_noise, "the spread stays over 0.5%%: %g", t.rows[0].time_ms.noise);
    cr_expect_gt(t.rows[1].time_ms.noise, o.max_noise, "a rule on the spread would not have stopped");
    sampling_cleanup(&s);
}

/* A timer that ticks every microsecond under rows that spread over a few
 * ticks: the rows tie on its lattice, the step is found (not the 10 us
 * between the two rows), and every interval is at least a step wide. */
Test(sampling, a_timer_lattice_is_found_and_widens_the_intervals) {
    struct dv_options o;
    lesson_options(&o);
    struct table_shape ticked = {
        .nrows = 2, .baseline = 1, .medians = {0.052, 0.042}, .noise = 0.01, .shared = 0.0, .step = 0.001};
    struct sampling s;
    struct dv_table t;
    memset(&t, 0, sizeof t);
    char err[ERR_LEN];
    cr_assert_eq(sampling_init(&s, 2, 1, &o, RATED, err), 0, "%s", err);
    drive(&s, &ticked, never, 8, &t);
    cr_expect_float_eq(t.timer_resolution_ms, 0.001, 1e-9);
    /* Rows that all tie show no step: nothing is guessed. */
    struct sampling q;
    struct dv_table u;
    memset(&u, 0, sizeof u);
    ticked.noise = 0.0005;
    cr_assert_eq(sampling_init(&q, 2, 1, &o, RATED, err), 0, "%s", err);
    drive(&q, &ticked, never, 9, &u);
    cr_expect_eq(u.timer_resolution_ms, 0.0);
    sampling_cleanup(&q);
    for (unsigned r = 0; r < 2; r++)
        cr_expect_geq(t.rows[r].median_ci_ms.hi - t.rows[r].median_ci_ms.lo, 0.001 - 1e-12, "row %u: [%g, %g]", r,
                      t.rows[r].median_ci_ms.lo, t.rows[r].median_ci_ms.hi);
    sampling_cleanup(&s);
}

Test(sampling, lattice_steps) {
    double scratch[64];
    const double ticks[] = {0.032, 0.064, 0.064, 0.096, 0.032, 0.160, 0.064, 0.032};
    cr_expect_float_eq(sampling_lattice(ticks, 8, scratch), 0.032, 1e-12);
    /* A gap that is no whole number of the smallest one: no lattice. */
    const double off[] = {1.0, 1.0, 1.3, 1.3, 1.75, 1.75, 1.0, 1.3};
    cr_expect_eq(sampling_lattice(off, 8, scratch), 0.0);
    /* Every value distinct: no lattice shows. */
    const double spread[] = {1.0, 1.1, 1.2, 1.3, 1.4, 1.5};
    cr_expect_eq(sampling_lattice(spread, 6, scratch), 0.0);
    /* One value, or none: nothing to measure a step by. */
    const double same[] = {2.0, 2.0, 2.0};
    cr_expect_eq(sampling_lattice(same, 3, scratch), 0.0);
    cr_expect_eq(sampling_lattice(same, 0, scratch), 0.0);
    /* Float times from integer nanoseconds, as the event timer gives them. */
    double ns[40];
    for (int i = 0; i < 40; i++) ns[i] = (float)((41790 + 32 * (i % 7)) / 1e6);
    cr_expect_float_eq(sampling_lattice(ns, 40, scratch), 32e-6, 1e-8);
    /* A 32 ns lattice seen on an H200 (a 48-thread row, float ms from the
     * event timer) with one late launch 480 ticks out: the smallest gap reads
     * 31.997 ns, off by 1e-4, and a gap measured in it drifts a tick every
     * 10,000; the step is the whole span over the whole ticks, so the far
     * sample still sits on it. */
    double h200[40];
    for (int i = 0; i < 39; i++) h200[i] = (float)((41792 + 32 * (i % 5)) / 1e6);
    h200[39] = (float)(57344 / 1e6);
    cr_expect_float_eq(sampling_lattice(h200, 40, scratch), 32e-6, 1e-9, "%.9g", sampling_lattice(h200, 40, scratch));
}

Test(sampling, bad_arguments_are_errors_naming_what) {
    struct dv_options o;
    lesson_options(&o);
    struct sampling s;
    char err[ERR_LEN];
    cr_expect_eq(sampling_init(&s, 0, 0, &o, RATED, err), DV_ERR);
    cr_expect(strstr(err, "rows"), "%s", err);
    sampling_cleanup(&s);
    cr_expect_eq(sampling_init(&s, 3, 3, &o, RATED, err), DV_ERR);
    cr_expect(strstr(err, "baseline"), "%s", err);
    sampling_cleanup(&s);
    o.budget_ms = NAN;
    cr_expect_eq(sampling_init(&s, 2, 0, &o, RATED, err), DV_ERR);
    cr_expect(strstr(err, "budget_ms"), "%s", err);
    sampling_cleanup(&s);
    lesson_options(&o);
    cr_assert_eq(sampling_init(&s, 2, 0, &o, RATED, err), 0, "%s", err);
    for (unsigned k = 0; k < BATCH; k++) sampling_row(&s, 0)[k] = sampling_row(&s, 1)[k] = 1.0;
    sampling_row(&s, 1)[5] = 0.0;
    enum stoprule_reason why;
    cr_expect_eq(sampling_file(&s, BATCH, NAN, 8, &why, err), DV_ERR);
    cr_expect(strstr(err, "row 1, round 5"), "%s", err);
    cr_expect_eq(sampling_file(&s, s.cap + 1, NAN, 8, &why, err), DV_ERR);
    sampling_cleanup(&s);
}

/* The first batch asks for the whole batches the rule takes before a look
 * can stop it, as far as the events hold; later batches for one batch. */
Test(sampling, the_first_batch_holds_the_rounds_before_a_look_can_stop) {
    struct dv_options o;
    lesson_options(&o);
    char err[ERR_LEN];
    const unsigned mins[] = {4, 8, 10, 16, 17, 40};
    const unsigned want[] = {8, 8, 16, 16, 24, 40};
    for (unsigned i = 0; i < sizeof mins / sizeof mins[0]; i++) {
        struct sampling s;
        o.min_samples = mins[i];
        o.max_samples = 2000;
        cr_assert_eq(sampling_init(&s, 2, 1, &o, RATED, err), 0, "%s", err);
        cr_expect_eq(sampling_want(&s, 8, 1000), want[i], "min %u: %u rounds first", mins[i], sampling_want(&s, 8, 1000));
        cr_expect_eq(sampling_want(&s, 8, 20), mins[i] > 8 ? 16 : 8, "min %u: as far as the events hold", mins[i]);
        cr_expect_eq(sampling_want(&s, 8, 5), 8, "never under a batch");
        /* After the first batch: one batch at a time. */
        double *a = sampling_row(&s, 0), *b = sampling_row(&s, 1), ms = 0;
        for (unsigned k = 0; k < want[i]; k++) ms += (a[k] = 1.0 + 0.001 * k) + (b[k] = 1.0);
        enum stoprule_reason why;
        cr_assert_eq(sampling_file(&s, want[i], NAN, ms, &why, err), 0, "%s", err);
        cr_expect_eq(sampling_want(&s, 8, 1000), 8);
        sampling_cleanup(&s);
    }
}
