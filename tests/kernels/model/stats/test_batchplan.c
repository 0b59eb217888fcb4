/* test_batchplan.c -- readers' tables measured in one session (batchplan.h), driven
 * as gpu/batch.c drives them (batches of 8 rounds), with invented rounds in
 * which a row's k-th time depends on nothing but its predicate and k (and a
 * noise of round k that every row of the round shares, which the per-round
 * ratio cancels): so a reader's table measured in a batch must be the very
 * table the same reader gets alone, a batch of one. That is what "never
 * worse than alone" and "no reader's table built from another's rows" come
 * to here: the same rounds, the same rule, its own rows. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "kernels/model/model/experiment.h"
#include "kernels/model/model/plan.h"
#include "kernels/model/stats/batchplan.h"
#include "tests/kernels/model/stats/synth.h"

#define BATCH 8

/* A reader's request: the widget's (`expr` beside the baseline), with its
 * own target and sample bounds. */
static struct dv_options reader(const char *expr, double target, unsigned min_samples, unsigned max_samples) {
    struct dv_options o;
    experiment_defaults(&o);
    o.part = DV_PART_1;
    o.npredicates = 2;
    snprintf(o.predicates[0], sizeof o.predicates[0], "%s", expr);
    snprintf(o.predicates[1], sizeof o.predicates[1], "%s", DV_DEFAULT_BASELINE);
    o.max_noise = target;
    o.min_samples = min_samples;
    o.max_samples = max_samples;
    return o;
}

static struct dv_report *planned(const struct dv_options *o) {
    struct dv_report *r = experiment_report_create();
    char err[ERR_LEN];
    cr_assert_not_null(r);
    cr_assert_eq(plan_report(o, r, NULL, err), 0, "%s", err);
    return r;
}

/* Row `row`'s time in its k-th round: 0.5 ms times its predicted ratio,
 * times its own noise (drawn from its name and k), times round k's. */
static double sample_ms(const struct dv_row *row, unsigned k, double noise) {
    uint64_t h = 1469598103934665603ull;
    for (const char *c = row->name; *c; c++) h = (h ^ (unsigned char)*c) * 1099511628211ull;
    struct synth g, shared;
    synth_seed(&g, h ^ (0x9e3779b97f4a7c15ull * (k + 1)));
    synth_seed(&shared, 0xabcdefull + k);
    const double base = 0.5 * (row->predicted_ratio > 0 ? row->predicted_ratio : 1.0);
    return base * (1.0 + noise * synth_normal(&g)) * (1.0 + 0.02 * synth_normal(&shared));
}

/* Samples the batch until every reader is done, as gpu/timing.c does;
 * returns the batches taken. A row's k-th time is its k-th in its reader's
 * rounds (each segment's: a reader's rounds are its own, as alone). `segs`
 * (may be NULL) gets, per batch, its segments' readers and rounds as
 * "r0x16 r1x16 ...". */
static unsigned drive(struct batchplan *b, double noise, char (*segs)[128]) {
    unsigned rows[BATCHPLAN_MAX_LAUNCHES * BATCH], rounds = 0, n, batches = 0;
    double ms[BATCHPLAN_MAX_LAUNCHES * BATCH];
    char err[ERR_LEN];
    while ((n = batchplan_next(b, BATCH, rows, &rounds)) > 0 && batches < 2000) {
        cr_assert_eq(rounds, 1, "a batch is one round of its segments");
        cr_assert(n <= BATCHPLAN_MAX_LAUNCHES * BATCH);
        if (segs) segs[batches][0] = '\0';
        for (unsigned g = 0; g < b->nsegs; g++) {
            const struct batchplan_seg *sg = &b->segs[g];
            const struct batchplan_reader *rd = &b->readers[sg->reader];
            for (unsigned k = 0; k < sg->rounds; k++)
                for (unsigned j = 0; j < rd->t->nrows; j++)
                    ms[sg->at + k * rd->t->nrows + j] = sample_ms(&rd->t->rows[j], rd->s.taken + k, noise);
            if (segs) {
                const size_t len = strlen(segs[batches]);
                snprintf(segs[batches] + len, 128 - len, "%sr%ux%u", g ? " " : "", sg->reader, sg->rounds);
            }
        }
        cr_assert_eq(batchplan_file(b, n, rows, rounds, ms, NAN, err), 0, "%s", err);
        batches++;
    }
    batchplan_report(b);
    return batches;
}

/* Reader `o` alone, as timing_rows() samples a table of its own: every
 * row in every round, in table order, one struct sampling, no batchplan;
 * into its own report. */
static struct dv_report *alone(const struct dv_options *o, double noise) {
    struct dv_report *r = planned(o);
    struct dv_table *t = &r->tables[0];
    struct sampling s;
    char err[ERR_LEN];
    cr_assert_eq(sampling_init(&s, t->nrows, (unsigned)t->baseline_row, o, 0.0, err), 0, "%s", err);
    enum stoprule_reason why = STOPRULE_CONTINUE;
    while (why == STOPRULE_CONTINUE) {
        const unsigned rounds = sampling_room(&s, BATCH);
        double batch_ms = 0;
        for (unsigned j = 0; j < t->nrows; j++)
            for (unsigned k = 0; k < rounds; k++)
                batch_ms += sampling_row(&s, j)[s.taken + k] = sample_ms(&t->rows[j], s.taken + k, noise);
        cr_assert_eq(sampling_file(&s, rounds, NAN, batch_ms, &why, err), 0, "%s", err);
    }
    sampling_report(&s, t);
    sampling_cleanup(&s);
    return r;
}

static void expect_same_table(const struct dv_table *a, const struct dv_table *b, const char *who) {
    cr_assert_eq(a->nrows, b->nrows);
    cr_expect_str_eq(a->stop_reason, b->stop_reason, "%s: stopped for %s alone, %s in the batch", who, a->stop_reason,
                     b->stop_reason);
    /* The same samples, summed batch by batch in other batches. */
    cr_expect(fabs(a->gpu_time_ms - b->gpu_time_ms) <= 1e-9 * a->gpu_time_ms,
              "%s: %.6f ms of its rows' GPU time alone, %.6f in the batch", who, a->gpu_time_ms, b->gpu_time_ms);
    cr_expect_eq(a->worst_halfwidth, b->worst_halfwidth, "%s: half-width %.6f alone, %.6f batched", who,
                 a->worst_halfwidth, b->worst_halfwidth);
    for (unsigned j = 0; j < a->nrows; j++) {
        const struct dv_row *x = &a->rows[j], *y = &b->rows[j];
        cr_expect_str_eq(x->name, y->name);
        cr_expect_eq(x->time_ms.samples, y->time_ms.samples, "%s %s: %u rounds alone, %u batched", who, x->name,
                     x->time_ms.samples, y->time_ms.samples);
        cr_expect_eq(x->time_ms.median, y->time_ms.median, "%s %s: median %.6f alone, %.6f batched", who, x->name,
                     x->time_ms.median, y->time_ms.median);
        cr_expect_eq(x->ratio, y->ratio, "%s %s: ratio %.6f alone, %.6f batched", who, x->name, x->ratio, y->ratio);
        cr_expect_eq(x->ratio_ci.lo, y->ratio_ci.lo, "%s %s", who, x->name);
        cr_expect_eq(x->ratio_ci.hi, y->ratio_ci.hi, "%s %s", who, x->name);
    }
}

static const char *const exprs[] = {"(threadIdx.x % 2) < 1", "(threadIdx.x % 3) < 1", "(threadIdx.x % 3) < 2",
                                    "threadIdx.x < 16",      "(warp & 1) == 0 && lane < 8",
                                    "(threadIdx.x % 5) < 3"};
#define NREADERS 6

/* Six readers, each its own predicate, target and sample bounds (one
 * stops on its cap early, one needs many rounds): each reader's table in
 * the batch is the table it gets alone, row for row, round for round. */
Test(batchplan, every_readers_table_is_the_one_it_gets_alone) {
    struct dv_options o[NREADERS];
    struct dv_report *r[NREADERS], *solo[NREADERS];
    struct dv_table *tables[NREADERS], u;
    const struct dv_options *opts[NREADERS];
    const double targets[NREADERS] = {0.005, 0.002, 0.01, 0.005, 0.001, 0.005};
    const unsigned mins[NREADERS] = {10, 10, 10, 40, 10, 10}, maxs[NREADERS] = {2000, 2000, 2000, 2000, 2000, 24};
    for (unsigned i = 0; i < NREADERS; i++) {
        o[i] = reader(exprs[i], targets[i], mins[i], maxs[i]);
        r[i] = planned(&o[i]);
        tables[i] = &r[i]->tables[0];
        opts[i] = &o[i];
        solo[i] = alone(&o[i], 0.004);
    }
    struct batchplan b;
    char err[ERR_LEN];
    cr_assert_eq(batchplan_init(&b, tables, opts, NREADERS, 0.0, &u, err), 0, "%s", err);
    cr_assert_eq(u.nrows, NREADERS + 1, "six predicates and the baseline they share");
    drive(&b, 0.004, NULL);
    for (unsigned i = 0; i < NREADERS; i++) {
        cr_expect(b.readers[i].done);
        cr_expect_eq(tables[i]->batch_readers, NREADERS);
        cr_expect_eq(tables[i]->batch_rows, NREADERS + 1);
        expect_same_table(&solo[i]->tables[0], tables[i], exprs[i]);
    }
    /* Not vacuous: the readers stopped after different numbers of rounds. */
    cr_expect_neq(tables[5]->rows[0].time_ms.samples, tables[4]->rows[0].time_ms.samples);
    batchplan_cleanup(&b);
    for (unsigned i = 0; i < NREADERS; i++) {
        experiment_report_free(r[i]);
        experiment_report_free(solo[i]);
    }
}

/* The union: each distinct row once (two readers with one predicate share
 * its row), the first reader's rows first in its order, every reader's
 * rows mapped to rows that run what its own run. */
Test(batchplan, the_union_has_each_row_once) {
    struct dv_options o[4] = {reader(exprs[0], 0.005, 10, 2000), reader(exprs[1], 0.005, 10, 2000),
                              reader(exprs[0], 0.001, 20, 2000), reader(exprs[2], 0.005, 10, 2000)};
    struct dv_report *r[4];
    struct dv_table *tables[4], u;
    const struct dv_options *opts[4];
    for (unsigned i = 0; i < 4; i++) {
        r[i] = planned(&o[i]);
        tables[i] = &r[i]->tables[0];
        opts[i] = &o[i];
    }
    struct batchplan b;
    char err[ERR_LEN];
    cr_assert_eq(batchplan_init(&b, tables, opts, 4, 0.0, &u, err), 0, "%s", err);
    cr_assert_eq(u.nrows, 4, "three predicates (one asked twice) and the baseline");
    cr_expect_eq(u.baseline_row, tables[0]->baseline_row, "the first reader's rows first, in its order");
    cr_expect_str_eq(u.rows[u.baseline_row].name, DV_DEFAULT_BASELINE);
    cr_expect_eq(b.readers[0].row[0], b.readers[2].row[0], "one predicate asked twice is one row");
    for (unsigned i = 0; i < 4; i++)
        for (unsigned j = 0; j < tables[i]->nrows; j++)
            cr_expect(experiment_row_same_run(&u.rows[b.readers[i].row[j]], &tables[i]->rows[j]), "reader %u row %u", i,
                      j);
    batchplan_cleanup(&b);
    for (unsigned i = 0; i < 4; i++) experiment_report_free(r[i]);
}

/* A batch holds the readers' rounds one reader after another, each
 * reader's back to back, as many readers as its launches hold; a reader
 * whose rule asks for more gets them in the next batch. */
Test(batchplan, each_readers_rounds_come_back_to_back) {
    struct dv_options o[3] = {reader(exprs[0], 0.5, 16, 16), reader(exprs[1], 0.0001, 10, 40),
                              reader(exprs[2], 0.5, 8, 8)};
    struct dv_report *r[3] = {planned(&o[0]), planned(&o[1]), planned(&o[2])};
    struct dv_table *tables[3] = {&r[0]->tables[0], &r[1]->tables[0], &r[2]->tables[0]}, u;
    const struct dv_options *opts[3] = {&o[0], &o[1], &o[2]};
    struct batchplan b;
    char err[ERR_LEN];
    cr_assert_eq(batchplan_init(&b, tables, opts, 3, 0.0, &u, err), 0, "%s", err);
    char segs[16][128];
    const unsigned batches = drive(&b, 0.01, segs);
    /* 16 rounds (its minimum), 16 (10 rounded up to whole batches: alone
     * looks first at 16), 8; then the second reader's 8, 8 and 8 to its
     * cap of 40. */
    const char *const expect[] = {"r0x16 r1x16 r2x8", "r1x8", "r1x8", "r1x8"};
    cr_assert_eq(batches, 4, "%u batches", batches);
    for (unsigned k = 0; k < batches; k++) cr_expect_str_eq(segs[k], expect[k], "batch %u", k);
    cr_expect_eq(tables[0]->rows[0].time_ms.samples, 16);
    cr_expect_str_eq(tables[0]->stop_reason, "target", "its loose target met at its minimum");
    cr_expect_eq(tables[1]->rows[0].time_ms.samples, 40, "the next samples on to its own cap");
    cr_expect_eq(tables[2]->rows[0].time_ms.samples, 8);
    batchplan_cleanup(&b);
    for (unsigned i = 0; i < 3; i++) experiment_report_free(r[i]);
}

/* A batch holds as many readers' rounds as its launches
 * (BATCHPLAN_MAX_LAUNCHES x 8): twelve readers' first 16 rounds of two rows
 * take batches of eight readers. */
Test(batchplan, a_batch_holds_what_its_launches_hold) {
    struct dv_options o[BATCHPLAN_MAX_READERS];
    struct dv_report *r[BATCHPLAN_MAX_READERS];
    struct dv_table *tables[BATCHPLAN_MAX_READERS], u;
    const struct dv_options *opts[BATCHPLAN_MAX_READERS];
    for (unsigned i = 0; i < 12; i++) {
        char e[64];
        snprintf(e, sizeof e, "(threadIdx.x %% %u) < 1", i + 2);
        o[i] = reader(e, 0.5, 16, 16);
        r[i] = planned(&o[i]);
        tables[i] = &r[i]->tables[0];
        opts[i] = &o[i];
    }
    struct batchplan b;
    char err[ERR_LEN];
    cr_assert_eq(batchplan_init(&b, tables, opts, 12, 0.0, &u, err), 0, "%s", err);
    char segs[16][128];
    const unsigned batches = drive(&b, 0.01, segs);
    const unsigned per = BATCHPLAN_MAX_LAUNCHES * BATCH / (2 * 16);
    cr_expect_eq(batches, (12 + per - 1) / per, "%u readers of 32 launches a batch: %u batches", per, batches);
    cr_expect_str_eq(segs[0], "r0x16 r1x16 r2x16 r3x16 r4x16 r5x16 r6x16 r7x16");
    for (unsigned i = 0; i < 12; i++) cr_expect_eq(tables[i]->rows[0].time_ms.samples, 16);
    batchplan_cleanup(&b);
    for (unsigned i = 0; i < 12; i++) experiment_report_free(r[i]);
}

/* More distinct rows than one table holds is refused, naming the bound. */
Test(batchplan, refuses_more_rows_than_a_table_holds) {
    struct dv_options o[BATCHPLAN_MAX_READERS];
    struct dv_report *r[BATCHPLAN_MAX_READERS];
    struct dv_table *tables[BATCHPLAN_MAX_READERS], u;
    const struct dv_options *opts[BATCHPLAN_MAX_READERS];
    for (unsigned i = 0; i < BATCHPLAN_MAX_READERS; i++) {
        char e[64];
        snprintf(e, sizeof e, "(threadIdx.x %% %u) < 1", i + 2);
        o[i] = reader(e, 0.005, 10, 2000);
        r[i] = planned(&o[i]);
        tables[i] = &r[i]->tables[0];
        opts[i] = &o[i];
    }
    struct batchplan b;
    char err[ERR_LEN] = "";
    cr_expect_eq(batchplan_init(&b, tables, opts, 15, 0.0, &u, err), 0, "15 predicates and the baseline fit: %s", err);
    batchplan_cleanup(&b);
    cr_expect_neq(batchplan_init(&b, tables, opts, 16, 0.0, &u, err), 0);
    cr_expect(strstr(err, "more than 16 distinct rows"), "%s", err);
    batchplan_cleanup(&b);
    for (unsigned i = 0; i < BATCHPLAN_MAX_READERS; i++) experiment_report_free(r[i]);
}

/* A reader's segment is its own table in its order, round after round,
 * as timing_rows() launches it alone; its times go to that reader (and to
 * a reader asking for the same rows) and to no other. Each launch gets a
 * time of its own here, so a reader filed from the wrong launch shows. */
Test(batchplan, a_readers_launches_are_its_own_table_in_its_order) {
    struct dv_options o[3] = {reader(exprs[0], 0.5, 8, 8), reader(exprs[1], 0.5, 8, 8), reader(exprs[0], 0.5, 8, 8)};
    struct dv_report *r[3] = {planned(&o[0]), planned(&o[1]), planned(&o[2])};
    struct dv_table *tables[3] = {&r[0]->tables[0], &r[1]->tables[0], &r[2]->tables[0]}, u;
    const struct dv_options *opts[3] = {&o[0], &o[1], &o[2]};
    struct batchplan b;
    char err[ERR_LEN];
    cr_assert_eq(batchplan_init(&b, tables, opts, 3, 0.0, &u, err), 0, "%s", err);
    unsigned rows[BATCHPLAN_MAX_LAUNCHES * BATCH], rounds = 0;
    const unsigned n = batchplan_next(&b, BATCH, rows, &rounds);
    const unsigned nr = tables[0]->nrows;
    cr_assert_eq(b.nsegs, 2, "the first reader's segment (the third's too) and the second's");
    cr_assert_eq(n, 2 * BATCH * nr);
    cr_expect_eq(rounds, 1);
    cr_expect_eq(b.segs[0].reader, 0);
    cr_expect_eq(b.segs[1].reader, 1);
    cr_expect_eq(b.segs[1].at, BATCH * nr);
    for (unsigned k = 0; k < BATCH; k++)
        for (unsigned j = 0; j < nr; j++) {
            cr_expect(experiment_row_same_run(&u.rows[rows[k * nr + j]], &tables[0]->rows[j]), "round %u row %u", k, j);
            cr_expect(experiment_row_same_run(&u.rows[rows[(BATCH + k) * nr + j]], &tables[1]->rows[j]));
        }
    double ms[BATCHPLAN_MAX_LAUNCHES * BATCH];
    for (unsigned i = 0; i < n; i++) ms[i] = 1.0 + i;
    /* Launches that are not the batch planned are refused. */
    unsigned swapped[BATCHPLAN_MAX_LAUNCHES * BATCH];
    memcpy(swapped, rows, sizeof rows);
    swapped[0] = rows[1], swapped[1] = rows[0];
    cr_expect_neq(batchplan_file(&b, n, swapped, 1, ms, NAN, err), 0);
    cr_expect(strstr(err, "not the batch planned"), "%s", err);
    cr_assert_eq(batchplan_file(&b, n, rows, 1, ms, NAN, err), 0, "%s", err);
    for (unsigned k = 0; k < BATCH; k++)
        for (unsigned j = 0; j < nr; j++) {
            cr_expect_eq(sampling_row(&b.readers[0].s, j)[k], ms[k * nr + j], "round %u, row %u", k, j);
            cr_expect_eq(sampling_row(&b.readers[2].s, j)[k], ms[k * nr + j], "the same predicate reads the same rounds");
            cr_expect_eq(sampling_row(&b.readers[1].s, j)[k], ms[(BATCH + k) * nr + j], "its own segment");
        }
    batchplan_cleanup(&b);
    for (unsigned i = 0; i < 3; i++) experiment_report_free(r[i]);
}

/* Readers with another baseline are not joined: each row is timed beside
 * one baseline, the first reader's. */
Test(batchplan, refuses_a_reader_with_another_baseline) {
    struct dv_options o[2] = {reader(exprs[0], 0.005, 10, 2000), reader(exprs[1], 0.005, 10, 2000)};
    snprintf(o[1].predicates[1], sizeof o[1].predicates[1], "%s", "threadIdx.x >= 0");
    snprintf(o[1].baseline, sizeof o[1].baseline, "%s", "threadIdx.x >= 0");
    struct dv_report *r[2] = {planned(&o[0]), planned(&o[1])};
    struct dv_table *tables[2] = {&r[0]->tables[0], &r[1]->tables[0]}, u;
    const struct dv_options *opts[2] = {&o[0], &o[1]};
    struct batchplan b;
    char err[ERR_LEN] = "";
    cr_expect_neq(batchplan_init(&b, tables, opts, 2, 0.0, &u, err), 0);
    cr_expect(strstr(err, "baseline"), "%s", err);
    batchplan_cleanup(&b);
    experiment_report_free(r[0]);
    experiment_report_free(r[1]);
}

/* A reader's first rounds carry a clock reading, as alone (where the first
 * batch of a table always samples the clock): the batch's reading for its
 * first segment, the last one filed for a reader's first rounds elsewhere;
 * later rounds without one stay without. */
Test(batchplan, a_readers_first_rounds_carry_the_last_clock_reading) {
    struct dv_options o[2] = {reader(exprs[0], 0.5, 8, 8), reader(exprs[1], 0.0001, 8, 16)};
    struct dv_report *r[2] = {planned(&o[0]), planned(&o[1])};
    struct dv_table *tables[2] = {&r[0]->tables[0], &r[1]->tables[0]}, u;
    const struct dv_options *opts[2] = {&o[0], &o[1]};
    struct batchplan b;
    char err[ERR_LEN];
    cr_assert_eq(batchplan_init(&b, tables, opts, 2, 0.0, &u, err), 0, "%s", err);
    unsigned rows[BATCHPLAN_MAX_LAUNCHES * BATCH], rounds = 0;
    double ms[BATCHPLAN_MAX_LAUNCHES * BATCH];
    for (unsigned i = 0; i < BATCHPLAN_MAX_LAUNCHES * BATCH; i++) ms[i] = 1.0 + 0.01 * (i % 3);
    const double mhz[2] = {1755.0, NAN};
    for (unsigned k = 0; k < 2; k++) {
        const unsigned n = batchplan_next(&b, BATCH, rows, &rounds);
        cr_assert_gt(n, 0);
        cr_assert_eq(batchplan_file(&b, n, rows, rounds, ms, mhz[k], err), 0, "%s", err);
    }
    cr_expect(b.readers[0].done && b.readers[1].done);
    cr_expect_eq(b.readers[0].s.mhz[0], 1755.0);
    cr_expect_eq(b.readers[1].s.mhz[0], 1755.0, "the second segment's first rounds: the last reading");
    cr_expect(isnan(b.readers[1].s.mhz[BATCH]), "its second batch had none and carries none");
    batchplan_cleanup(&b);
    experiment_report_free(r[0]);
    experiment_report_free(r[1]);
}
