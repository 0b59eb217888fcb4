/* test_gpu_batch.c -- a class's requests measured in one session
 * (gpu/batch.h) against the same requests measured alone, on a GPU; and a
 * worker's warm-up (gpu/warmup.h).
 *
 * Label gpu: each test skips with CUDA's reason where there is no device.
 * Ten readers, each with its own predicate (lane < 16 && warp < J and the
 * like: their ratios 1 + (split warps)/8 mostly differ, so a reader handed
 * another's row would show), each measured alone, then the ten in one
 * batch. Each reader's batched table holds its own rows, says it was one
 * of ten over eleven rows, passes every check, has its witness and
 * counters, and each row's ratio agrees with its ratio alone, measured
 * before the batch or after it (the second alone run is the control: the
 * GPU drifts between runs by as much as the intervals are wide): the
 * intervals meet, or the ratios differ by less than the precision the
 * table promises (its half-width target, 0.5%). On the H200 the batched
 * ratios ran 0.05-0.2% below alone on most rows, wider than the intervals
 * of 16 rounds but well inside the target. (Asking that the batched point lie inside the
 * interval measured alone asks more than two runs of one measurement
 * give: each is a 95% interval of the same width around a noisy point, so
 * one point falls inside the other's interval about 83% of the time and
 * all ten about 16%. The overlap of two 95% intervals fails about 0.6% of
 * the time for one row on a steady GPU; a reader's row mixed up with
 * another's, 12% or more apart, fails it every time.) The figures the
 * issue asks for, the point inside the interval alone and the half-widths
 * side by side, are printed for each row; tests/bench/classroom.py
 * --alone-vs-batch reports them for a class on a server. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "api/options.h"
#include "kernels/gpu/batch.h"
#include "kernels/gpu/measure.h"
#include "kernels/gpu/session.h"
#include "kernels/gpu/warmup.h"
#include "kernels/model/model/experiment.h"
#include "tests/kernels/gpu/helper_gpu.h"

#define READERS 10

static const char *const predicates[READERS] = {
    "lane < 16 && warp < 1", "lane < 16 && warp < 2", "lane < 16 && warp < 3",  "lane < 16 && warp < 4",
    "lane < 16 && warp < 5", "lane < 16 && warp < 6", "lane < 16 && warp < 7",  "lane < 16 && warp < 8",
    "lane < 16 && warp >= 5", "(lane & 3) == 0 && warp < 2"};

/* What the widget's "Measure this" sends for `expr`. */
static struct dv_options widget(const char *expr) {
    struct dv_options o;
    char err[ERR_LEN];
    experiment_defaults(&o);
    o.part = DV_PART_1;
    o.npredicates = 2;
    snprintf(o.predicates[0], sizeof o.predicates[0], "%s", expr);
    snprintf(o.predicates[1], sizeof o.predicates[1], "%s", DV_DEFAULT_BASELINE);
    cr_assert_eq(options_validate(&o, OPTIONS_JSON, NULL, err), 0, "%s", err);
    return o;
}

static double halfwidth_abs(const struct dv_row *w) { return (w->ratio_ci.hi - w->ratio_ci.lo) / 2; }

/* Whether two rows' ratio intervals meet. */
static int meet(const struct dv_row *x, const struct dv_row *y) {
    return fabs(y->ratio - x->ratio) <= halfwidth_abs(x) + halfwidth_abs(y);
}

/* Whether y's ratio agrees with x's within the precision the table
 * promises: their intervals meet, or they differ by less than the table's
 * half-width target (0.5% by default) of x's ratio. */
static int agree(const struct dv_row *x, const struct dv_row *y, double target) {
    return meet(x, y) || fabs(y->ratio - x->ratio) <= target * x->ratio;
}

static int inside(const struct dv_row *point, const struct dv_row *interval) {
    return point->ratio >= interval->ratio_ci.lo && point->ratio <= interval->ratio_ci.hi;
}

static void print_row(const struct dv_table *t) {
    const struct dv_row *x = &t->rows[0];
    printf("%.4f [%.4f, %.4f] %.3f%% %2u %-7s ", x->ratio, x->ratio_ci.lo, x->ratio_ci.hi, 100 * x->ratio_halfwidth,
           x->time_ms.samples, t->stop_reason);
}

/* Each predicate alone, then the ten batched, then each alone again: the
 * second alone run is the control, how well alone agrees with alone on this
 * GPU in this run, against which the batched figures are read. */
Test(gpu_batch, ten_readers_get_their_own_rows_and_the_ratios_they_get_alone, .timeout = 300) {
    HELPER_REQUIRE_GPU();
    struct session *s = session_create();
    cr_assert_not_null(s);
    struct dv_options o[READERS];
    const struct dv_options *op[READERS];
    struct dv_report *alone[READERS], *again[READERS], *batched[READERS];
    int rc[READERS];
    char err[READERS][ERR_LEN];
    for (unsigned i = 0; i < READERS; i++) {
        o[i] = widget(predicates[i]);
        op[i] = &o[i];
        cr_assert_not_null(alone[i] = experiment_report_create());
        cr_assert_not_null(again[i] = experiment_report_create());
        cr_assert_not_null(batched[i] = experiment_report_create());
        cr_assert_eq(measure_run_session(s, &o[i], alone[i], err[i]), 0, "%s alone: %s", predicates[i], err[i]);
    }
    double shared_ms = 0;
    batch_measure(s, op, batched, READERS, rc, err, &shared_ms);
    for (unsigned i = 0; i < READERS; i++)
        cr_assert_eq(measure_run_session(s, &o[i], again[i], err[i]), 0, "%s again: %s", predicates[i], err[i]);
    unsigned in_b = 0, in_a = 0, narrow_b = 0, narrow_a = 0, meet_b = 0, meet_a = 0;
    double off_b = 0, off_a = 0; /* mean relative offset from alone, batched and again */
    printf("%-30s %-44s %-44s %-44s %s\n", "row", "alone: ratio [interval] +-hw rounds stop",
           "batched", "alone again", "inside (batched, again)");
    for (unsigned i = 0; i < READERS; i++) {
        cr_assert_eq(rc[i], 0, "%s batched: %s", predicates[i], err[i]);
        const struct dv_table *a = &alone[i]->tables[0], *b = &batched[i]->tables[0], *c = &again[i]->tables[0];
        helper_expect_all_checked(batched[i]);
        cr_expect_eq(b->batch_readers, READERS);
        cr_expect_eq(b->batch_rows, READERS + 1, "ten predicates and the baseline they share");
        cr_expect(b->gpu_time_ms > 0 && b->gpu_time_ms < shared_ms, "its own rows' share of the rounds");
        cr_assert_eq(b->nrows, 2);
        cr_expect_str_eq(b->rows[0].name, predicates[i], "reader %u's table holds another's row", i);
        cr_expect_eq(batched[i]->testimony.witness_taken, alone[i]->testimony.witness_taken);
        cr_expect_eq(batched[i]->testimony.counters_taken, alone[i]->testimony.counters_taken,
                     "%s: counters taken %d batched (%s), %d alone (%s)", predicates[i],
                     batched[i]->testimony.counters_taken, batched[i]->testimony.counters_reason,
                     alone[i]->testimony.counters_taken, alone[i]->testimony.counters_reason);
        cr_expect(b->rows[0].observed.present && b->rows[0].observed.agrees, "%s: the witness", predicates[i]);
        const struct dv_row *x = &a->rows[0], *y = &b->rows[0], *z = &c->rows[0];
        in_b += inside(y, x);
        in_a += inside(z, x);
        off_b += (y->ratio / x->ratio - 1) / READERS;
        off_a += (z->ratio / x->ratio - 1) / READERS;
        narrow_b += y->ratio_halfwidth <= x->ratio_halfwidth;
        narrow_a += z->ratio_halfwidth <= x->ratio_halfwidth;
        meet_b += meet(x, y) || meet(z, y);
        meet_a += meet(x, z);
        printf("%-30s ", x->name);
        print_row(a);
        print_row(b);
        print_row(c);
        printf("%s %s\n", inside(y, x) ? "yes" : "no ", inside(z, x) ? "yes" : "no");
        /* A reader handed another's row (12% or more apart) agrees with neither. */
        cr_expect(agree(x, y, a->halfwidth_target) || agree(z, y, c->halfwidth_target),
                  "%s: batched %.4f [%.4f, %.4f] agrees with neither alone %.4f [%.4f, %.4f] nor again %.4f [%.4f, "
                  "%.4f] within +-%.2f%%",
                  x->name, y->ratio, y->ratio_ci.lo, y->ratio_ci.hi, x->ratio, x->ratio_ci.lo, x->ratio_ci.hi,
                  z->ratio, z->ratio_ci.lo, z->ratio_ci.hi, 100 * a->halfwidth_target);
        /* Its own rule: the batched table meets the target whenever its
         * reader's table alone did (or is no wider than alone). */
        cr_expect(b->intervals_ok || !a->intervals_ok || y->ratio_halfwidth <= x->ratio_halfwidth,
                  "%s: +-%.3f%% batched, +-%.3f%% alone (stopped on %s, %s)", x->name, 100 * y->ratio_halfwidth,
                  100 * x->ratio_halfwidth, b->stop_reason, a->stop_reason);
    }
    printf("inside the interval alone: batched %u of %u, alone again %u of %u; half-width no wider than alone: "
           "batched %u, again %u; intervals meeting alone's: batched %u, again %u; the batch's timed work %.1f ms\n",
           in_b, READERS, in_a, READERS, narrow_b, narrow_a, meet_b, meet_a, shared_ms);
    printf("mean offset from alone: batched %+.3f%%, again %+.3f%%\n", 100 * off_b, 100 * off_a);
    const struct dv_table *ta = &alone[0]->tables[0], *tb = &batched[0]->tables[0];
    printf("host ms (alone's first reader | the batch): timing %.1f | %.1f, outputs %.1f | %.1f, checks %.1f | %.1f, "
           "set-up %.1f | %.1f, testimony %.1f | %.1f; wall %.1f | %.1f\n",
           ta->host_timing_ms, tb->host_timing_ms, ta->host_outputs_ms, tb->host_outputs_ms, ta->host_checks_ms,
           tb->host_checks_ms, ta->host_setup_ms, tb->host_setup_ms, ta->host_testimony_ms, tb->host_testimony_ms,
           alone[0]->wall_time_ms, batched[0]->wall_time_ms);
    fflush(stdout);
    for (unsigned i = 0; i < READERS; i++) {
        experiment_report_free(alone[i]);
        experiment_report_free(again[i]);
        experiment_report_free(batched[i]);
    }
    session_free(s);
}

/* After the warm-up the first job builds nothing: the profiler is there
 * (its set-up, hundreds of milliseconds when CUPTI starts, is about 0). */
Test(gpu_batch, the_warm_up_leaves_the_first_job_nothing_to_build, .timeout = 120) {
    HELPER_REQUIRE_GPU();
    struct session *s = session_create();
    struct dv_device d;
    char err[ERR_LEN] = "";
    cr_assert_not_null(s);
    cr_assert_eq(session_device(s, 0, &d, err), 0, "%s", err);
    struct warmup_report w;
    cr_assert_eq(warmup_run(s, 0, 1, &w, err), 0, "%s", err);
    printf("warm-up: %.1f ms (lesson %.1f, mask %.1f, profiler %.1f), %u rows%s%s\n", w.total_ms, w.lesson_ms, w.mask_ms,
           w.profiler_ms, w.rows, w.counters_reason[0] ? "; " : "", w.counters_reason);
    cr_expect_eq(w.rows, 4 + 3 + 2 + 2,
                 "Part 1's four rows, Part 2's three, an expression and its baseline, then the widget's request as sent");
    struct dv_options o = widget("(threadIdx.x % 7) < 3");
    struct dv_report *r = experiment_report_create();
    cr_assert_not_null(r);
    cr_assert_eq(measure_run_session(s, &o, r, err), 0, "%s", err);
    helper_expect_all_checked(r);
    /* A full batch's row slots are made: a class's first 16-row batch
     * allocates no output. */
    printf("a full batch's row slots: %.1f ms\n", w.reserve_ms);
    for (unsigned k = 0; k < DV_MAX_ROWS; k++)
        cr_expect(session_output_room(s, k) >= r->config.threads, "slot %u holds %llu floats, the widget's grid %llu", k,
                  session_output_room(s, k), r->config.threads);
    if (!w.counters_reason[0])
        cr_expect(r->testimony.counters_setup_ms < 0.1 * w.profiler_ms,
                  "the first job built a profiler again: %.1f ms against the warm-up's %.1f",
                  r->testimony.counters_setup_ms, w.profiler_ms);
    experiment_report_free(r);
    session_free(s);
}
