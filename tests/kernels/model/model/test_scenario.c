/* test_scenario.c -- the scenario suite's model against the worked examples' numbers,
 * the arrangement invariants and the CPU reference (no GPU). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/model/model/scenario.h"
#include "kernels/model/model/scenario_table.h"
#include "kernels/model/model/plan.h"
#include "kernels/model/model/experiment.h"
#include "tests/kernels/model/model/plans.h"

/* The worked examples' percentage, to the 0.1 they print, and the exact fraction. */
static void expect_eff(double got, double exact, double lesson_percent, const char *what) {
    cr_expect(fabs(got - exact) < 1e-12, "%s: efficiency %.6f, want %.6f", what, got, exact);
    cr_expect(fabs(100.0 * got - lesson_percent) <= 0.05 + 1e-9, "%s: %.3f%%, the worked examples say %.3f%%",
              what, 100.0 * got, lesson_percent);
}

/* The lesson's defaults (experiment_defaults), with blocks "auto", which
 * scenarios plan as the lesson's 4096. */
static void default_options(struct dv_options *o) {
    experiment_defaults(o);
    o->blocks = 0;
}

static const struct dv_table *table_of(const struct dv_report *r, const char *name) {
    char id[64];
    snprintf(id, sizeof id, "scenario:%s", name);
    for (unsigned i = 0; i < r->ntables; i++)
        if (strcmp(r->tables[i].id, id) == 0) return &r->tables[i];
    cr_assert_fail("no table %s", id);
    return NULL;
}

static const struct dv_row *row_of(const struct dv_table *t, const char *name) {
    for (unsigned i = 0; i < t->nrows; i++)
        if (strcmp(t->rows[i].name, name) == 0) return &t->rows[i];
    cr_assert_fail("table %s has no row %s", t->id, name);
    return NULL;
}

static unsigned lanes_with(const struct scenario *s, unsigned v) {
    unsigned n = 0;
    for (unsigned l = 0; l < 32; l++) n += s->lane_work[l] == v;
    return n;
}

Test(scenario, names_are_stable_and_resolve) {
    size_t n = 0;
    const char *const *names = scenario_names(&n);
    const char *want[] = {"even-2way",       "uneven-1v31",      "zero-divergence", "full-divergence",
                          "elseif-4way",     "loop-divergence",  "nested-ifs",      "ray-materials",
                          "warp-realign",    "short-predicated", "short-branch",    "k-paths",
                          "predication",     "predication-la1",  "predication-la2", "predication-la3",
                          "predication-la4", "predication-la5",  "predication-la6", "predication-la7",
                          "predication-la8", "branchless",       "reconvergence",
                          /* arithmetic intensity */
                          "intensity-stream", "intensity-chase", "intensity-stream-fine", "intensity-chase-fine"};
    cr_assert_eq(n, sizeof want / sizeof want[0]);
    for (size_t i = 0; i < n; i++) {
        cr_expect_str_eq(names[i], want[i]);
        const struct scenario *s = get(names[i]);
        cr_expect_str_eq(s->name, names[i]);
        cr_expect_lt(strlen("scenario:") + strlen(s->name), sizeof(((struct dv_table *)0)->id));
        cr_expect_lt(s->baseline, s->nrows);
        cr_expect_leq(s->nrows, SCENARIO_MAX_ROWS);
    }
    cr_expect_null(scenario_find("no-such-scenario"));
    cr_expect_null(scenario_find(NULL));
}

Test(scenario, even_split_is_57_1_percent) {
    const struct scenario *s = get("even-2way");
    cr_expect_eq(lanes_with(s, 0), 16);
    cr_expect_eq(lanes_with(s, 1), 16);
    cr_expect_eq(s->lengths[0], 12);
    cr_expect_eq(s->lengths[1], 9);
    expect_eff(scenario_warp_efficiency(s, s->lane_work), 12.0 / 21.0, 57.1, s->name);
}

Test(scenario, uneven_split_is_66_7_percent) {
    const struct scenario *s = get("uneven-1v31");
    cr_expect_eq(lanes_with(s, 0), 1);
    cr_expect_eq(lanes_with(s, 1), 31);
    cr_expect_eq(s->lengths[0], 100);
    cr_expect_eq(s->lengths[1], 50);
    expect_eff(scenario_warp_efficiency(s, s->lane_work), 100.0 / 150.0, 66.7, s->name);
}

Test(scenario, zero_divergence_is_100_percent) {
    const struct scenario *s = get("zero-divergence");
    cr_expect_eq(lanes_with(s, 1), 32);
    expect_eff(scenario_warp_efficiency(s, s->lane_work), 1.0, 100.0, s->name);
}

Test(scenario, full_divergence_is_one_32nd) {
    const struct scenario *s = get("full-divergence");
    for (unsigned p = 0; p < 32; p++) {
        cr_expect_eq(lanes_with(s, p), 1, "path %u", p);
        cr_expect_eq(s->lengths[p], 7);
    }
    expect_eff(scenario_warp_efficiency(s, s->lane_work), 1.0 / 32.0, 3.125, s->name);
}

Test(scenario, elseif_chain_is_37_5_percent) {
    const struct scenario *s = get("elseif-4way");
    const unsigned counts[4] = {8, 10, 8, 6}, lens[4] = {20, 30, 25, 5};
    for (unsigned p = 0; p < 4; p++) {
        cr_expect_eq(lanes_with(s, p), counts[p], "path %u", p);
        cr_expect_eq(s->lengths[p], lens[p]);
    }
    expect_eff(scenario_warp_efficiency(s, s->lane_work), 30.0 / 80.0, 37.5, s->name);
}

Test(scenario, loop_utilization_is_37_5_percent) {
    const struct scenario *s = get("loop-divergence");
    unsigned sum = 0, max = 0;
    for (unsigned l = 0; l < 32; l++) {
        sum += s->lane_work[l];
        if (s->lane_work[l] > max) max = s->lane_work[l];
    }
    cr_expect_eq(sum, 240);
    cr_expect_eq(max, 20);
    cr_expect_eq(lanes_with(s, 3), 2, "the worked case's two count-3 threads");
    expect_eff(scenario_warp_efficiency(s, s->lane_work), 240.0 / 640.0, 37.5, s->name);
}

Test(scenario, nested_ifs_are_30_8_percent) {
    const struct scenario *s = get("nested-ifs");
    const unsigned lens[4] = {6, 8, 5, 7};
    for (unsigned p = 0; p < 4; p++) {
        cr_expect_eq(lanes_with(s, p), 8, "path %u", p);
        cr_expect_eq(s->lengths[p], lens[p]);
    }
    /* path = 2 * outer + inner: the two tests really are orthogonal */
    for (unsigned l = 0; l < 32; l++)
        cr_expect_eq(s->lane_work[l], 2u * (l & 1u) + ((l >> 1) & 1u), "lane %u", l);
    expect_eff(scenario_warp_efficiency(s, s->lane_work), 8.0 / 26.0, 30.8, s->name);
}

Test(scenario, ray_materials_go_from_51_7_to_100_percent) {
    struct dv_options o;
    struct dv_report *r = calloc(1, sizeof *r);
    char err[ERR_LEN] = "";
    const struct scenario *s = get("ray-materials");
    for (unsigned p = 0; p < 4; p++) cr_expect_gt(lanes_with(s, p), 0, "material %u present", p);
    expect_eff(scenario_warp_efficiency(s, s->lane_work), 60.0 / 116.0, 51.7, "unsorted");

    cr_assert_not_null(r);
    default_options(&o);
    snprintf(o.scenario, sizeof o.scenario, "ray-materials");
    cr_assert_eq(scenario_plan(&o, r, NULL, err), 0, "%s", err);
    const struct dv_table *t = table_of(r, "ray-materials");
    expect_eff(row_of(t, "lanes")->predicted_efficiency, 60.0 / 116.0, 51.7, "unsorted grid");
    expect_eff(row_of(t, "sorted")->predicted_efficiency, 1.0, 100.0, "sorted grid");
    /* same work: per warp 116 units unsorted, (10*12 + 8*40 + 6*60 + 8*4) / 32 = 26 sorted */
    cr_expect(fabs(row_of(t, "lanes")->predicted_ratio - 116.0 / 26.0) < 1e-9, "ratio %f",
              row_of(t, "lanes")->predicted_ratio);
    free(r);
}

Test(scenario, warp_realign_goes_from_58_3_to_100_percent) {
    struct dv_options o;
    struct dv_report *r = calloc(1, sizeof *r);
    char err[ERR_LEN] = "";
    const struct scenario *s = get("warp-realign");
    for (unsigned l = 0; l < 32; l++) cr_expect_eq(s->lane_work[l], l % 2u, "idx %% 2 at lane %u", l);
    expect_eff(scenario_warp_efficiency(s, s->lane_work), 14.0 / 24.0, 58.3, "idx % 2");

    cr_assert_not_null(r);
    default_options(&o);
    snprintf(o.scenario, sizeof o.scenario, "warp-realign");
    cr_assert_eq(scenario_plan(&o, r, NULL, err), 0, "%s", err);
    const struct dv_table *t = table_of(r, "warp-realign");
    const struct dv_row *warps = row_of(t, "warps");
    expect_eff(row_of(t, "lanes")->predicted_efficiency, 14.0 / 24.0, 58.3, "idx % 2 grid");
    expect_eff(warps->predicted_efficiency, 1.0, 100.0, "(idx / 32) % 2");
    cr_expect_eq(warps->warps_split.total, 0);
    cr_expect(warps->comparable);
    /* 24 units per warp against 10 and 14 alternating, 12 on average */
    cr_expect(fabs(row_of(t, "lanes")->predicted_ratio - 2.0) < 1e-12);

    /* (idx / 32) % 2 really is the rewrite: warp w of the grid on path w % 2 */
    uint8_t *w = malloc(4u * 64u);
    cr_assert_not_null(w);
    cr_assert_eq(scenario_assign(s, SCENARIO_LAYOUT_WARPS, 4, 64, w, err), 0);
    for (unsigned i = 0; i < 256; i++) cr_expect_eq(w[i], (i / 32u) % 2u, "idx %u", i);
    free(w);
    free(r);
}

Test(scenario, every_table_plans_with_the_worked_examples_figures) {
    struct dv_options o;
    struct dv_report *r = calloc(1, sizeof *r);
    char err[ERR_LEN] = "";
    cr_assert_not_null(r);
    default_options(&o);
    snprintf(o.scenario, sizeof o.scenario, "all");
    cr_assert_eq(scenario_plan(&o, r, NULL, err), 0, "%s", err);
    cr_assert_eq(r->ntables, 11);
    cr_expect_str_eq(r->config.experiment, "scenario");
    cr_expect_eq(r->config.blocks, DV_DEFAULT_BLOCKS);
    cr_expect(r->config.blocks_auto);

    struct { const char *name; double eff, ratio; } want[] = {
        {"even-2way", 12.0 / 21.0, 21.0 / 10.5},
        {"uneven-1v31", 100.0 / 150.0, 150.0 / ((100.0 + 31 * 50.0) / 32.0)},
        {"zero-divergence", 1.0, 1.0},
        {"full-divergence", 1.0 / 32.0, 32.0},
        {"elseif-4way", 30.0 / 80.0, 80.0 / ((8 * 20.0 + 10 * 30.0 + 8 * 25.0 + 6 * 5.0) / 32.0)},
        {"loop-divergence", 240.0 / 640.0, 20.0 / (240.0 / 32.0)},
        {"nested-ifs", 8.0 / 26.0, 26.0 / ((6.0 + 8.0 + 5.0 + 7.0) / 4.0)},
        {"ray-materials", 60.0 / 116.0, 116.0 / 26.0},
        {"warp-realign", 14.0 / 24.0, 2.0},
        {"short-predicated", 1.0, 1.0}, /* predicated: both sides in every warp */
        {"short-branch", 0.5, 2.0},     /* 4 + 3 against 4 or 3 alternately     */
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        const struct dv_table *t = table_of(r, want[i].name);
        const struct scenario *s = get(want[i].name);
        const struct dv_row *lanes = row_of(t, "lanes");
        const struct dv_row *base = &t->rows[t->baseline_row];
        cr_expect_str_eq(t->baseline, base->name);
        cr_expect_eq(t->nrows, s->nrows);
        cr_expect(fabs(lanes->predicted_efficiency - want[i].eff) < 1e-12, "%s: eff %.6f want %.6f",
                  want[i].name, lanes->predicted_efficiency, want[i].eff);
        cr_expect(fabs(lanes->predicted_ratio - want[i].ratio) < 1e-9, "%s: ratio %.6f want %.6f",
                  want[i].name, lanes->predicted_ratio, want[i].ratio);
        cr_expect(fabs(base->predicted_ratio - 1.0) < 1e-12);
        cr_expect(lanes->comparable, "%s: %s", want[i].name, lanes->comparable_reason);
        cr_expect_eq(base->warps_split.total, 0, "%s: the baseline is warp-uniform", want[i].name);
        cr_expect_eq(lanes->warps_per_block, 8);
        cr_expect_eq(lanes->threads_per_block, 256);
        cr_expect_eq(lanes->warps_split.per_block,
                     strcmp(want[i].name, "zero-divergence") == 0 ? 0.0 : 8.0, "%s", want[i].name);
        cr_expect(isnan(lanes->measured_efficiency) && isnan(lanes->agreement) && !lanes->measured);
        for (unsigned k = 0; k < t->nrows; k++) {
            cr_expect_eq(t->rows[k].kernel, DV_KERNEL_SCENARIO);
            if (s->rows[k].layout == SCENARIO_LAYOUT_IDEAL)
                cr_expect_not(t->rows[k].comparable, "%s: the ideal row does more work", t->id);
            else
                cr_expect(t->rows[k].comparable, "%s/%s: %s", t->id, t->rows[k].name,
                          t->rows[k].comparable_reason);
        }
    }
    /* path-runs per block: 8 split warps of 12 + 9 units */
    cr_expect_eq(row_of(table_of(r, "even-2way"), "lanes")->path_runs.max, 8 * 21);
    cr_expect_str_eq(table_of(r, "loop-divergence")->kernel, "loop");
    cr_expect_str_eq(table_of(r, "short-branch")->kernel, "short-ifelse");
    cr_expect_str_eq(table_of(r, "nested-ifs")->kernel, "kway");
    free(r);
}

Test(scenario, ideal_rows_put_every_lane_on_its_warps_longest_path) {
    char err[ERR_LEN] = "";
    const char *names[] = {"even-2way", "uneven-1v31", "elseif-4way", "nested-ifs", "ray-materials"};
    const unsigned longest[] = {0, 0, 1, 1, 2};
    uint8_t *w = malloc(2u * 96u);
    cr_assert_not_null(w);
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const struct scenario *s = get(names[i]);
        cr_assert_eq(scenario_assign(s, SCENARIO_LAYOUT_IDEAL, 2, 96, w, err), 0, "%s", err);
        for (unsigned k = 0; k < 2u * 96u; k++) cr_expect_eq(w[k], longest[i], "%s thread %u", names[i], k);
    }
    cr_expect_neq(scenario_assign(get("loop-divergence"), SCENARIO_LAYOUT_IDEAL, 2, 96, w, err), 0);
    free(w);
}

Test(scenario, comparable_is_computed_not_assumed) {
    struct dv_options o;
    struct dv_report *r = calloc(1, sizeof *r);
    char err[ERR_LEN] = "";
    cr_assert_not_null(r);
    default_options(&o);
    /* 3 blocks of one warp: (idx / 32) % 2 puts 2 warps on X and 1 on Y,
     * while idx % 2 splits 48 / 48: not the same work any more */
    o.blocks = 3;
    o.block_x = 32;
    snprintf(o.scenario, sizeof o.scenario, "warp-realign");
    cr_assert_eq(scenario_plan(&o, r, NULL, err), 0, "%s", err);
    const struct dv_table *t = table_of(r, "warp-realign");
    cr_expect_not(row_of(t, "lanes")->comparable);
    cr_expect(strstr(row_of(t, "lanes")->comparable_reason, "different work") != NULL, "%s",
              row_of(t, "lanes")->comparable_reason);
    free(r);
}

Test(scenario, partial_warps_are_counted_per_lane) {
    struct dv_options o;
    struct dv_report *r = calloc(1, sizeof *r);
    char err[ERR_LEN] = "";
    cr_assert_not_null(r);
    default_options(&o);
    o.blocks = 2;
    o.block_x = 48; /* a full warp and a 16-lane one per block */
    snprintf(o.scenario, sizeof o.scenario, "uneven-1v31");
    cr_assert_eq(scenario_plan(&o, r, NULL, err), 0, "%s", err);
    const struct dv_row *lanes = row_of(table_of(r, "uneven-1v31"), "lanes");
    cr_expect_eq(lanes->warps_per_block, 2);
    cr_expect_eq(lanes->warps_split.per_block, 2.0, "lane 0 of each warp is on A");
    cr_expect_eq(lanes->path_runs.max, 300);
    free(r);
}

Test(scenario, rejects_unknown_names_and_full_reports) {
    struct dv_options o;
    struct dv_report *r = calloc(1, sizeof *r);
    char err[ERR_LEN] = "";
    cr_assert_not_null(r);
    default_options(&o);
    snprintf(o.scenario, sizeof o.scenario, "bogus");
    cr_expect_eq(scenario_plan(&o, r, NULL, err), -1);
    cr_expect(strstr(err, "bogus") != NULL, "%s", err);
    snprintf(o.scenario, sizeof o.scenario, "all");
    r->ntables = DV_MAX_TABLES - 2;
    err[0] = '\0';
    cr_expect_eq(scenario_plan(&o, r, NULL, err), -1);
    cr_expect(strstr(err, "do not fit") != NULL, "%s", err);
    free(r);
}

Test(scenario, unit_and_iterations_follow_the_options) {
    struct dv_options o;
    default_options(&o);
    cr_expect_eq(scenario_unit_fmas(&o), 512);
    o.iterations = 16384;
    cr_expect_eq(scenario_unit_fmas(&o), 2048);
    o.iterations = 100;
    cr_expect_eq(scenario_unit_fmas(&o), SCENARIO_CHUNK);
    o.iterations = 4100;
    cr_expect_eq(scenario_short_iterations(scenario_find("short-branch"), &o), 4128);
    cr_expect_eq(scenario_unit_fmas(NULL), 512);
}

Test(scenario, reference_runs_each_path_with_its_own_constants) {
    const struct scenario *s = get("full-divergence");
    float x = dv_input_value(5);
    float manual = x;
    for (unsigned i = 0; i < 7u * 64u; i++) manual = fmaf(manual, scenario_kway_a(3), scenario_kway_b(3));
    cr_expect_eq(scenario_reference(s, x, 3, 64, 0), manual);
    /* 32 paths, 32 different results, all in (0, 1] */
    for (unsigned p = 0; p < 32; p++) {
        float a = scenario_reference(s, x, p, 64, 0);
        cr_expect(a > 0.0f && a <= 1.0f, "path %u: %g", p, a);
        for (unsigned q = 0; q < p; q++)
            cr_expect_neq(a, scenario_reference(s, x, q, 64, 0), "paths %u and %u", p, q);
    }
    /* the constants are exact and the fixed point is (p + 1) / 64 */
    for (unsigned p = 0; p < 32; p++)
        cr_expect(fabs(scenario_kway_b(p) / (1.0 - scenario_kway_a(p)) - (p + 1) / 64.0) < 1e-12);
    /* inputs are never zero and never constant */
    cr_expect_neq(dv_input_value(0), dv_input_value(1));
    cr_expect_gt(dv_input_value(1020), 0.5f);
    cr_expect_eq(dv_input_value(1021), dv_input_value(0));
}

Test(scenario, reference_of_loops_and_short_branches) {
    const struct scenario *loop = get("loop-divergence");
    const struct scenario *sb = get("short-branch"), *sp = get("short-predicated");
    float x = dv_input_value(77), m = x;
    for (unsigned i = 0; i < 20u * 64u; i++) m = fmaf(m, SCENARIO_LOOP_A, SCENARIO_LOOP_B);
    cr_expect_eq(scenario_reference(loop, x, 20, 64, 0), m);
    cr_expect_eq(scenario_reference(loop, x, 0, 64, 0), x);
    cr_expect_neq(scenario_reference(loop, x, 3, 64, 0), scenario_reference(loop, x, 4, 64, 0));

    /* one round of 32 iterations starting on side 1: 1, 0, 1, 0, ... */
    m = x;
    for (unsigned k = 0; k < 32; k++) m = scenario_short_side(m, (k & 1u) == 0, (k & 1u) == 0 ? 4 : 3);
    cr_expect_eq(scenario_short_pattern(1) & 1u, 0u);
    cr_expect_eq(scenario_short_pattern(0) & 1u, 1u);
    cr_expect_eq(scenario_reference(sb, x, 0, 64, 32), m);
    cr_expect_neq(scenario_reference(sb, x, 0, 64, 32), scenario_reference(sb, x, 1, 64, 32));
    cr_expect_neq(scenario_reference(sp, x, 0, 64, 32), scenario_reference(sb, x, 0, 64, 32));
}

Test(scenario, check_finds_a_wrong_thread) {
    const struct scenario *s = get("elseif-4way");
    unsigned blocks = 3, tpb = 64;
    unsigned long long n = blocks * tpb;
    char err[ERR_LEN] = "";
    uint8_t *w = malloc(n);
    float *got = malloc(n * sizeof *got);
    struct dv_check c;
    cr_assert(w && got);
    cr_assert_eq(scenario_assign(s, SCENARIO_LAYOUT_SORTED, blocks, tpb, w, err), 0);
    for (unsigned long long i = 0; i < n; i++)
        got[i] = scenario_reference(s, dv_input_value(i), w[i], 32, 0);
    cr_assert_eq(scenario_check(s, w, n, 32, 0, got, &c, err), 0, "%s", err);
    cr_expect(c.ok);
    cr_expect_eq(c.checked, n);
    cr_expect_eq(c.first_mismatch, -1);
    /* thread 100 computed the neighbouring path */
    got[100] = scenario_reference(s, dv_input_value(100), (w[100] + 1u) % 4u, 32, 0);
    cr_assert_eq(scenario_check(s, w, n, 32, 0, got, &c, err), 0);
    cr_expect_not(c.ok);
    cr_expect_eq(c.mismatches, 1);
    cr_expect_eq(c.first_mismatch, 100);
    cr_expect_eq(c.got, got[100]);
    free(w);
    free(got);
}

Test(scenario, sorted_layout_keeps_the_multiset) {
    char err[ERR_LEN] = "";
    size_t n = 0;
    const char *const *names = scenario_names(&n);
    unsigned blocks = 5, tpb = 96;
    uint8_t *a = malloc(blocks * tpb), *b = malloc(blocks * tpb);
    cr_assert(a && b);
    for (size_t i = 0; i < n; i++) {
        const struct scenario *s = get(names[i]);
        unsigned ha[256] = {0}, hb[256] = {0};
        cr_assert_eq(scenario_assign(s, SCENARIO_LAYOUT_LANES, blocks, tpb, a, err), 0);
        cr_assert_eq(scenario_assign(s, SCENARIO_LAYOUT_SORTED, blocks, tpb, b, err), 0);
        for (unsigned k = 0; k < blocks * tpb; k++) {
            ha[a[k]]++;
            hb[b[k]]++;
            if (k) cr_expect_leq(b[k - 1], b[k], "%s: sorted", s->name);
        }
        cr_expect_arr_eq(ha, hb, sizeof ha, "%s", s->name);
    }
    free(a);
    free(b);
}

Test(scenario, experiment_plan_hands_scenarios_over) {
    struct dv_options o;
    struct dv_report *r = experiment_report_create();
    char err[ERR_LEN] = "";
    cr_assert_not_null(r);
    default_options(&o);
    snprintf(o.scenario, sizeof o.scenario, "loop-divergence");
    cr_assert_eq(plan_report(&o, r, NULL, err), 0, "%s", err);
    cr_assert_eq(r->ntables, 1);
    cr_expect_str_eq(r->tables[0].id, "scenario:loop-divergence");
    cr_expect_str_eq(r->config.experiment, "scenario");
    cr_expect(fabs(r->tables[0].rows[0].predicted_efficiency - 0.375) < 1e-12);
    experiment_report_free(r);
}

/* A short if/else row evaluates its branch every iteration (rounded up to
 * whole pattern words); the switch and the loop once. */
Test(scenario, evaluations_per_thread_follow_the_kind) {
    struct dv_options o;
    experiment_defaults(&o);
    cr_expect_eq(scenario_evaluations(scenario_find("short-branch"), &o), 4096u);
    cr_expect_eq(scenario_evaluations(scenario_find("even-2way"), &o), 1u);
    cr_expect_eq(scenario_evaluations(scenario_find("loop-divergence"), &o), 1u);
    o.iterations = 100;
    cr_expect_eq(scenario_evaluations(scenario_find("short-predicated"), &o), 128u);
}

/* A scenario name, a worked-case id (either case) or all, decided by one
 * function; an unknown name is refused with every name it could have been. */
Test(scenario, names_and_worked_cases_select_their_tables) {
    const struct scenario *list[SCENARIO_MAX_SELECTED];
    size_t n = 0;
    char err[ERR_LEN];
    cr_assert_eq(scenario_select("C1", list, &n, err), 0, "%s", err);
    cr_expect_eq(n, 1);
    cr_expect_str_eq(list[0]->name, "even-2way");
    cr_assert_eq(scenario_select("c10", list, &n, err), 0, "%s", err);
    cr_expect_str_eq(list[0]->name, "warp-realign");
    cr_assert_eq(scenario_select("C7", list, &n, err), 0, "%s", err);
    cr_expect_eq(n, 2, "C7 is two scenarios");
    cr_assert_eq(scenario_select("all", list, &n, err), 0, "%s", err);
    size_t count = 0, worked = 0;
    scenario_names(&count);
    unsigned rows = 0;
    for (size_t i = 0; i < count; i++)
        if (scenario_get(i)->set == SCENARIO_SET_WORKED) {
            worked++;
            rows += scenario_get(i)->nrows;
        }
    cr_expect_eq(n, worked, "all: the worked cases");
    cr_expect_eq(worked, 11);
    for (size_t i = 0; i < n; i++) cr_expect_eq(list[i]->cell[0], 'C', "%s", list[i]->name);
    cr_assert_eq(scenario_select("nested-ifs", list, &n, err), 0, "%s", err);
    cr_expect_eq(n, 1);
    cr_expect_eq(scenario_rows("all"), rows);
    cr_expect_eq(scenario_rows("C7"), scenario_find("short-predicated")->nrows + scenario_find("short-branch")->nrows);
    const char *bad[] = {"C", "C0", "C70", "c1x", "even", "ALL"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cr_expect_eq(scenario_select(bad[i], list, &n, err), -1, "%s", bad[i]);
        cr_expect(strstr(err, "even-2way (C1)") && strstr(err, "short-branch (C7)"), "%s: %s", bad[i], err);
    }
    cr_expect_eq(scenario_rows("nope"), 0);
}

/* The table's kept reference values: for every scenario (the loop's counts
 * carried along one chain included), each row's values filled on several
 * threads into one scenario_refs are scenario_reference()'s to the bit, and
 * a row checked against them passes where its true outputs are and fails at
 * the same first thread as a check of its own. */
Test(scenario, kept_reference_values_are_scenario_references_to_the_bit) {
    const unsigned blocks = 5, tpb = 96, unit = 16, iters = 64;
    const unsigned long long n = (unsigned long long)blocks * tpb;
    char err[ERR_LEN] = "";
    size_t count = 0;
    scenario_names(&count);
    cr_assert_gt(count, 0);
    uint8_t *w = malloc(n);
    float *got = malloc(n * sizeof *got);
    cr_assert(w && got);
    for (size_t k = 0; k < count; k++) {
        const struct scenario *s0 = scenario_get(k), *s = NULL;
        struct scenario_refs refs;
        struct scenario rs;
        int have = 0;
        for (unsigned r = 0; r < s0->nrows; r++) {
            scenario_row(s0, r, &rs);
            s = &rs;
            /* One set of values for the rows of one kernel, as the measurement keeps them. */
            if (!have || refs.s.kind != rs.kind || refs.s.variant != rs.variant ||
                memcmp(refs.s.lengths, rs.lengths, sizeof rs.lengths) != 0) {
                if (have) scenario_refs_free(&refs);
                cr_assert_eq(scenario_refs_init(&refs, s, unit, iters, err), 0, "%s", err);
                have = 1;
            }
            cr_assert_eq(scenario_assign(s, s0->rows[r].layout, blocks, tpb, w, err), 0, "%s", err);
            scenario_refs_fill(&refs, w, n, 1 + (r + k) % 5);
            for (unsigned long long i = 0; i < n; i++) {
                const float want = scenario_reference(s, dv_input_value(i), w[i], unit, iters);
                const float kept = refs.values[(i % DV_INPUT_DISTINCT) * 256u + w[i]];
                cr_assert_eq(memcmp(&want, &kept, sizeof want), 0, "%s row %u thread %llu: %.9g kept, %.9g wanted",
                             s->name, r, i, kept, want);
                got[i] = want;
            }
            struct dv_check c, alone;
            scenario_refs_check(&refs, w, n, got, &c);
            cr_expect(c.ok, "%s row %u", s->name, r);
            cr_expect_eq(c.checked, n);
            got[n / 3] = -got[n / 3];
            got[n - 1] = got[n - 1] * 0.5f;
            scenario_refs_check(&refs, w, n, got, &c);
            cr_assert_eq(scenario_check(s, w, n, unit, iters, got, &alone, err), 0, "%s", err);
            cr_expect_not(c.ok);
            cr_expect_eq(c.mismatches, 2);
            cr_expect_eq(c.first_mismatch, (long long)(n / 3));
            cr_expect_eq(c.first_mismatch, alone.first_mismatch);
            cr_expect_eq(c.mismatches, alone.mismatches);
        }
        if (have) scenario_refs_free(&refs);
    }
    free(w);
    free(got);
}
