/* test_stoprule.c -- the stopping rule on the ratios' intervals: its
 * reasons on hand-built cases, and whole simulated sampling runs (rounds of
 * a table drawn as the timing loop draws them, statistics and the rule after
 * every batch) for the tables that a rule on the per-sample spread (stdev /
 * mean under the target) failed: it ran them to the cap. */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <math.h>
#include <stdlib.h>

#include "kernels/model/stats/stats.h"
#include "kernels/model/stats/stoprule.h"
#include "kernels/model/stats/throttle.h"
#include "kernels/model/model/experiment.h"
#include "tests/kernels/model/stats/synth.h"

static struct stoprule rule(void) {
    struct stoprule r = {
        .target = 0.005, .level = 0.95, .min_samples = 10, .max_samples = 100, .max_dropped = 20, .budget_ms = 50};
    return r;
}

static struct interval iv(double point, double rel_hw) {
    struct interval v = {.point = point, .lo = point * (1 - rel_hw), .hi = point * (1 + rel_hw), .level = 0.95};
    return v;
}

Test(stoprule, defaults_come_from_the_request) {
    struct dv_options o;
    experiment_defaults(&o);
    struct stoprule r;
    stoprule_init(&r, &o);
    cr_assert_float_eq(r.target, 0.005, 0);
    cr_assert_float_eq(r.level, INTERVAL_LEVEL, 0);
    cr_assert_eq(r.min_samples, DV_DEFAULT_MIN_SAMPLES);
    cr_assert_eq(r.max_samples, DV_DEFAULT_MAX_SAMPLES);
    cr_assert_eq(r.max_dropped, DV_DEFAULT_MAX_SAMPLES);
    cr_assert_float_eq(r.budget_ms, DV_DEFAULT_BUDGET_MS, 0);
    char err[ERR_LEN];
    cr_assert_eq(stoprule_check(&r, err), 0, "%s", err);
}

Test(stoprule, stops_on_target_only_past_the_minimum) {
    const struct stoprule r = rule();
    const struct interval j[2] = {iv(1.95, 0.004), iv(0.51, 0.0049)};
    struct stoprule_verdict v;
    cr_assert_eq(stoprule_decide(&r, j, 2, &(struct stoprule_progress){.kept = 9}, &v), STOPRULE_CONTINUE);
    cr_assert_eq(v.over_target, 0);
    cr_assert_eq(stoprule_decide(&r, j, 2, &(struct stoprule_progress){.kept = 10}, &v), STOPRULE_TARGET);
    cr_assert_eq(v.reason, STOPRULE_TARGET);
    cr_assert_eq(v.worst, 1);
    cr_assert_float_eq(v.worst_halfwidth, 0.0049, 1e-12);
    /* At the target exactly (exact in binary) is within it. */
    struct stoprule half = rule();
    half.target = 0.5;
    const struct interval edge = {.point = 1, .lo = 0.5, .hi = 1.5, .level = 0.95};
    cr_assert_eq(stoprule_decide(&half, &edge, 1, &(struct stoprule_progress){.kept = 10}, &v), STOPRULE_TARGET);
}

Test(stoprule, one_wide_ratio_keeps_the_table_sampling) {
    const struct stoprule r = rule();
    const struct interval j[3] = {iv(1.95, 0.001), iv(2.6, 0.0051), iv(1.0, 0.002)};
    struct stoprule_verdict v;
    cr_assert_eq(stoprule_decide(&r, j, 3, &(struct stoprule_progress){.kept = 40, .gpu_ms = 10}, &v),
                 STOPRULE_CONTINUE);
    cr_assert_eq(v.over_target, 1);
    cr_assert_eq(v.worst, 1);
}

Test(stoprule, budget_cap_and_throttle_end_a_table_that_misses_its_target) {
    const struct stoprule r = rule();
    const struct interval j[1] = {iv(1.95, 0.02)};
    struct stoprule_verdict v;
    cr_assert_eq(stoprule_decide(&r, j, 1, &(struct stoprule_progress){.kept = 20, .gpu_ms = 49.9}, &v),
                 STOPRULE_CONTINUE);
    cr_assert_eq(stoprule_decide(&r, j, 1, &(struct stoprule_progress){.kept = 20, .gpu_ms = 50}, &v), STOPRULE_BUDGET);
    cr_assert_eq(v.over_target, 1, "the caller exits 1 on this");
    cr_assert_eq(stoprule_decide(&r, j, 1, &(struct stoprule_progress){.kept = 100, .gpu_ms = 1}, &v), STOPRULE_CAP);
    cr_assert_eq(stoprule_decide(&r, j, 1, &(struct stoprule_progress){.kept = 5, .gpu_ms = 1e9}, &v),
                 STOPRULE_CONTINUE, "the budget waits for the minimum");
    cr_assert_eq(stoprule_decide(&r, j, 1, &(struct stoprule_progress){.kept = 5, .dropped = 21, .gpu_ms = 1e9}, &v),
                 STOPRULE_THROTTLED, "but not for a GPU throttled for good");
    cr_assert_eq(stoprule_decide(&r, j, 1, &(struct stoprule_progress){.kept = 5, .dropped = 20}, &v),
                 STOPRULE_CONTINUE, "max_dropped rounds are tolerated");
}

Test(stoprule, an_interval_short_of_its_level_is_never_within_target) {
    struct stoprule r = rule();
    r.min_samples = 3;
    struct interval j[1] = {iv(1.95, 0.0)};
    j[0].level = 0.75; /* three rounds: [min, max] covers 75% */
    struct stoprule_verdict v;
    cr_assert_eq(stoprule_decide(&r, j, 1, &(struct stoprule_progress){.kept = 3}, &v), STOPRULE_CONTINUE);
    cr_assert_eq(v.over_target, 1);
}

Test(stoprule, nothing_to_judge_stops_at_the_minimum) {
    const struct stoprule r = rule();
    struct stoprule_verdict v;
    cr_assert_eq(stoprule_decide(&r, NULL, 0, &(struct stoprule_progress){.kept = 10}, &v), STOPRULE_TARGET);
    cr_assert_eq(v.worst, -1);
}

Test(stoprule, check_names_the_field) {
    char err[ERR_LEN];
    struct stoprule r = rule();
    r.target = 0;
    cr_assert_eq(stoprule_check(&r, err), DV_ERR);
    cr_assert_str_eq(err, "stoprule: target: 0 is not a positive relative half-width");
    r = rule();
    r.level = 1;
    cr_assert_eq(stoprule_check(&r, err), DV_ERR);
    cr_assert_str_eq(err, "stoprule: level: 1 is outside (0, 1)");
    r = rule();
    r.max_samples = 5;
    cr_assert_eq(stoprule_check(&r, err), DV_ERR);
    cr_assert_str_eq(err, "stoprule: max_samples: 5 is below min_samples 10 or 0");
    r = rule();
    r.budget_ms = -1;
    cr_assert_eq(stoprule_check(&r, err), DV_ERR);
    cr_assert_str_eq(err, "stoprule: budget_ms: -1 is negative");
    cr_assert_str_eq(stoprule_reason_name(STOPRULE_TARGET), "target");
    cr_assert_str_eq(stoprule_reason_name(STOPRULE_BUDGET), "budget");
    cr_assert_str_eq(stoprule_reason_name(STOPRULE_CAP), "cap");
    cr_assert_str_eq(stoprule_reason_name(STOPRULE_THROTTLED), "throttled");
    cr_assert_str_eq(stoprule_reason_name(STOPRULE_CONTINUE), "continue");
    cr_assert_str_eq(stoprule_reason_name(42), "unknown");
}

/* A simulated table: `nrows` rows of the given medians (ms), each round's
 * samples drawn by `draw`, sampled in batches of 8 rounds as the timing
 * loop does, the statistics and the rule after every batch. */
#define BATCH 8
#define MAX_ROUNDS 2000
#define NROWS 3

struct run {
    enum stoprule_reason reason;
    unsigned kept, dropped;
    double gpu_ms;
    struct stoprule_verdict verdict;
    struct stats_row rows[NROWS];         /* at the end of sampling      */
    struct stats_row rows_at_stop[NROWS]; /* when the rule stopped        */
};

typedef void (*draw_fn)(struct synth *g, unsigned round, const double *medians, double *out, double *mhz);

/* With `until_cap`, sampling goes on past the rule's stop (whose reason and
 * rounds stay recorded) until the cap, so what the rule stopped on is set
 * beside what the whole run finds. */
static struct run simulate(draw_fn draw, const double *medians, uint64_t seed, enum ratio_method method,
                           int until_cap) {
    static double mhz[MAX_ROUNDS * 2], scratch[4 * MAX_ROUNDS * 2];
    static unsigned char drop[MAX_ROUNDS * 2];
    static double all[NROWS * MAX_ROUNDS * 2];
    struct run out = {0};
    struct synth g;
    synth_seed(&g, seed);
    struct dv_options o;
    experiment_defaults(&o);
    struct stoprule r;
    stoprule_init(&r, &o);
    struct stats_config c;
    stats_config_default(&c);
    c.method = method;
    char err[ERR_LEN];
    const size_t stride = MAX_ROUNDS * 2;
    unsigned rounds = 0;
    for (;;) {
        for (unsigned b = 0; b < BATCH; b++, rounds++) {
            double s[NROWS];
            mhz[rounds] = NAN;
            draw(&g, rounds, medians, s, &mhz[rounds]);
            for (unsigned row = 0; row < NROWS; row++) {
                all[row * stride + rounds] = s[row];
                out.gpu_ms += s[row];
            }
        }
        unsigned nd;
        cr_assert_eq(throttle_mark(mhz, rounds, 1980, THROTTLE_DEFAULT_FRACTION, drop, &nd, err), 0, "%s", err);
        struct stoprule_progress p = {.kept = rounds - nd, .dropped = nd, .gpu_ms = out.gpu_ms};
        if (p.kept > 0) {
            unsigned kept;
            cr_assert_eq(stats_table(all, stride, NROWS, rounds, drop, 0, &c, scratch, out.rows, &kept, err), 0, "%s",
                         err);
        }
        struct interval judged[NROWS];
        const unsigned nj = p.kept ? stats_judged(out.rows, NROWS, 0, judged, NULL) : 0;
        if (out.reason == STOPRULE_CONTINUE) {
            out.reason = stoprule_decide(&r, judged, nj, &p, &out.verdict);
            out.kept = p.kept;
            out.dropped = nd;
            for (unsigned row = 0; row < NROWS; row++) out.rows_at_stop[row] = out.rows[row];
        }
        if (out.reason != STOPRULE_CONTINUE && (!until_cap || p.kept >= r.max_samples))
            break;
        cr_assert_lt(rounds, stride - BATCH, "the rule must end the run");
    }
    return out;
}

/* The small-grid table of the report that exited 1: a 0.042 ms baseline with
 * a tight core and late launches (spread 0.7%), two rows near it. */
static void draw_small_grid(struct synth *g, unsigned round, const double *medians, double *out, double *mhz) {
    (void)round;
    (void)mhz;
    for (unsigned row = 0; row < NROWS; row++) {
        const double late = synth_unif(g) < 0.03 ? 1.03 + 0.05 * synth_unif(g) : 1.0;
        out[row] = medians[row] * late * synth_draw(g, SYNTH_NORMAL, 0.0015);
    }
}

Test(stoprule, a_well_measured_small_grid_stops_on_target_though_its_spread_is_over_it) {
    const double medians[NROWS] = {0.04179, 0.0472, 0.0418};
    const struct run run = simulate(draw_small_grid, medians, 11, RATIO_OF_MEDIANS, 1);
    char flags[64];
    for (unsigned row = 0; row < NROWS; row++) {
        const struct stats_row *a = &run.rows_at_stop[row], *z = &run.rows[row];
        cr_log_info(
            "small grid row %u: at the stop: median %.5f ms noise %.2f%% ratio %.4f [%.4f, %.4f]; "
            "at the cap: noise %.2f%% ratio %.4f [%.4f, %.4f] flags '%s'",
            row, a->median.point, 100 * a->summary.noise, a->ratio.point, a->ratio.lo, a->ratio.hi,
            100 * z->summary.noise, z->ratio.point, z->ratio.lo, z->ratio.hi,
            spread_flags_text(z->spread.flags, flags, sizeof(flags)));
    }
    cr_log_info("small grid: %s after %u rounds of %u", stoprule_reason_name(run.reason), run.kept,
                run.rows[0].summary.samples);
    cr_assert_eq(run.reason, STOPRULE_TARGET);
    cr_assert_lt(run.kept, 200);
    /* A rule on the spread would never stop it: the spread stays over the
     * 0.5% target all the way to the cap. */
    cr_assert_eq(run.rows[0].summary.samples, DV_DEFAULT_MAX_SAMPLES);
    cr_assert(run.rows[1].summary.noise > 0.005, "row spread %g", run.rows[1].summary.noise);
    cr_assert(run.rows[1].spread.flags & SPREAD_TAIL, "late launches are flagged, not hidden");
    /* The ratio at the stop holds the ratio 2,000 rounds find. */
    cr_assert(run.rows_at_stop[1].ratio.lo <= run.rows[1].ratio.point &&
              run.rows[1].ratio.point <= run.rows_at_stop[1].ratio.hi);
    cr_assert_float_eq(run.rows[1].ratio.point, run.rows[1].median.point / run.rows[0].median.point, 1e-12);
}

/* Two rows whose true ratio is within the noise of 1: the ratio's interval
 * cannot get to 0.5% within the cap at 3% spread, and the rule says so. */
static void draw_noisy(struct synth *g, unsigned round, const double *medians, double *out, double *mhz) {
    (void)round;
    (void)mhz;
    for (unsigned row = 0; row < NROWS; row++) out[row] = medians[row] * synth_draw(g, SYNTH_NORMAL, 0.1);
}

Test(stoprule, a_table_too_noisy_for_its_target_ends_on_the_cap_with_the_worst_row_named) {
    const double medians[NROWS] = {1.0, 1.5, 2.0};
    const struct run run = simulate(draw_noisy, medians, 12, RATIO_OF_MEDIANS, 0);
    cr_log_info("noisy: %s after %u rounds, %u over target, worst row %d at %.3f%%", stoprule_reason_name(run.reason),
                run.kept, run.verdict.over_target, run.verdict.worst, 100 * run.verdict.worst_halfwidth);
    cr_assert(run.reason == STOPRULE_CAP || run.reason == STOPRULE_BUDGET, "%s", stoprule_reason_name(run.reason));
    cr_assert_geq(run.verdict.over_target, 1);
}

/* A GPU that throttles for good: a clock reading before every batch, low
 * from round 40 on. The guard drops those rounds; the rule ends the run. */
static void draw_throttled(struct synth *g, unsigned round, const double *medians, double *out, double *mhz) {
    if (round % BATCH == 0) *mhz = round >= 40 ? 1000 : 1980;
    for (unsigned row = 0; row < NROWS; row++)
        out[row] = medians[row] * (round >= 40 ? 1.9 : 1.0) * synth_draw(g, SYNTH_NORMAL, 0.1);
}

Test(stoprule, a_gpu_throttled_for_good_ends_the_run_and_its_rounds_stay_out) {
    const double medians[NROWS] = {0.001, 0.0015, 0.002}; /* the budget outlasts the guard */
    const struct run run = simulate(draw_throttled, medians, 13, RATIO_OF_MEDIANS, 0);
    cr_assert_eq(run.reason, STOPRULE_THROTTLED, "%s", stoprule_reason_name(run.reason));
    /* The batch before the first low reading goes with it: rounds 32..39. */
    cr_assert_eq(run.kept, 32);
    cr_assert_eq(run.rows[1].dropped, run.dropped);
    cr_assert(run.rows[0].median.point < 0.0012, "throttled rounds stayed out: %g", run.rows[0].median.point);
}

/* A clock step in 30% of the rounds, shared by every row: the per-round
 * ratio sees through it at once; the ratio of medians needs more rounds. */
static void draw_clock_step(struct synth *g, unsigned round, const double *medians, double *out, double *mhz) {
    (void)round;
    (void)mhz;
    const double c = synth_unif(g) < 0.3 ? 1.03 : 1.0;
    for (unsigned row = 0; row < NROWS; row++) out[row] = medians[row] * c * synth_draw(g, SYNTH_NORMAL, 0.0005);
}

Test(stoprule, a_shared_clock_step_stops_sooner_on_the_per_round_ratio) {
    const double medians[NROWS] = {0.5046, 0.9800, 0.2600};
    const struct run med = simulate(draw_clock_step, medians, 14, RATIO_OF_MEDIANS, 0);
    const struct run rnd = simulate(draw_clock_step, medians, 14, RATIO_OF_ROUNDS, 0);
    cr_log_info("clock step: ratio of medians %s after %u rounds, ratio of rounds %s after %u",
                stoprule_reason_name(med.reason), med.kept, stoprule_reason_name(rnd.reason), rnd.kept);
    cr_assert_eq(rnd.reason, STOPRULE_TARGET);
    cr_assert_eq(rnd.kept, 16, "the first batch past the minimum");
    cr_assert_geq(med.kept, rnd.kept);
}
