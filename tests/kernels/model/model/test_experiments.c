/* test_experiments.c -- the compiler-and-warp experiments without a GPU:
 * their rows' assignments, model, equal-work accounting and references,
 * their CPU reference against the chains written out by hand, the
 * witness's model of the pair kernel, the join record's summary and the
 * predication map read as a whole. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/base/hostfma.h"
#include "kernels/model/model/experiment.h"
#include "kernels/model/model/findings.h"
#include "kernels/model/model/plan.h"
#include "kernels/model/model/scenario.h"
#include "kernels/model/model/scenario_table.h"
#include "kernels/model/model/testimony.h"
#include "tests/kernels/model/model/plans.h"

static const struct dv_row *row_named(const struct dv_table *t, const char *name) {
    for (unsigned i = 0; i < t->nrows; i++)
        if (strcmp(t->rows[i].name, name) == 0) return &t->rows[i];
    cr_assert_fail("%s has no row %s", t->id, name);
    return NULL;
}

/* lane % k puts lane l on path l % k in every warp; warp % k puts the whole
 * of the grid's warp w on path w % k. */
Test(experiments, k_paths_split_by_lane_and_align_by_warp) {
    const struct scenario *s = get("k-paths");
    const unsigned blocks = 6, tpb = 96; /* three warps a block, 18 warps */
    uint8_t w[6 * 96];
    char err[ERR_LEN];
    for (unsigned r = 0; r < s->nrows; r++) {
        struct scenario rs;
        scenario_row(s, r, &rs);
        cr_assert_eq(scenario_assign(&rs, s->rows[r].layout, blocks, tpb, w, err), 0, "%s", err);
        const unsigned k = s->rows[r].k;
        cr_assert_eq(rs.k, k);
        for (unsigned i = 0; i < blocks * tpb; i++) {
            const unsigned lane = i % tpb % 32, warp = i / tpb * 3 + i % tpb / 32;
            const unsigned want = s->rows[r].layout == SCENARIO_LAYOUT_LANE_MOD ? lane % k : warp % k;
            cr_assert_eq(w[i], want, "%s thread %u: path %u, want %u", s->rows[r].name, i, w[i], want);
        }
    }
    struct scenario bad = *s;
    bad.k = 33;
    cr_expect_eq(scenario_assign(&bad, SCENARIO_LAYOUT_LANE_MOD, blocks, tpb, w, err), -1);
    cr_expect(strstr(err, "k in 1..32"), "%s", err);
}

/* The model: k split paths issue k times one path, aligned ones once; every
 * row does the same work (each thread one path of K_LEN units), so every
 * row is comparable to k = 1 and its thread_fmas are equal; the split rows
 * are the points of the fit, at x = k. */
Test(experiments, k_paths_model_equal_work_and_fit_points) {
    struct dv_report *r = plan_of("k-paths", 512);
    cr_assert_eq(r->ntables, 1);
    const struct dv_table *t = &r->tables[0];
    cr_expect_str_eq(t->experiment, "k-paths");
    cr_expect_str_eq(t->fit.x, "k");
    cr_expect_str_eq(t->baseline, "split-k1");
    const unsigned long long fmas = t->rows[0].thread_fmas;
    cr_expect_eq(fmas, 512ull * 256 * 2 * 512, "2 units of 512 FMAs a thread");
    unsigned fit = 0;
    for (unsigned i = 0; i < t->nrows; i++) {
        const struct dv_row *w = &t->rows[i];
        const int split = strcmp(w->point.arrangement, "lane-mod") == 0;
        cr_expect_eq(w->thread_fmas, fmas, "%s: the same work", w->name);
        cr_expect(w->comparable, "%s: %s", w->name, w->comparable_reason);
        cr_expect_float_eq(w->predicted_ratio, split ? (double)w->point.k : 1.0, 1e-12, "%s", w->name);
        cr_expect_eq(w->warps_split.per_block, split && w->point.k > 1 ? 8.0 : 0.0, "%s", w->name);
        cr_expect_eq(w->versus, 0u, "%s: over the baseline", w->name);
        if (split) {
            cr_expect(w->in_fit);
            cr_expect_float_eq(w->fit_x, (double)w->point.k, 0);
            fit++;
        } else {
            cr_expect_not(w->in_fit);
        }
    }
    cr_expect_eq(fit, 7, "k = 1, 2, 3, 4, 8, 16, 32");
    experiment_report_free(r);
}

/* A predication point's lane-split row is over its own warp-split row,
 * which is its own reference; the two do the same work (a thread alternates
 * sides: LA + LB FMAs every two iterations), and the model, a branch, says
 * 2 for the split and 1 for the uniform row. The map's eight tables cover
 * every LA x LB in 1..8 once. */
Test(experiments, predication_points_pair_their_rows) {
    struct dv_report *r = plan_of("predication", 64);
    const struct dv_table *t = &r->tables[0];
    cr_expect_str_eq(t->experiment, "predication");
    cr_expect_str_eq(t->kernel, "short-ifelse");
    for (unsigned L = 1; L <= 8; L++) {
        char lanes[32], warps[32];
        snprintf(lanes, sizeof lanes, "%ux%u-lanes", L, L);
        snprintf(warps, sizeof warps, "%ux%u-warps", L, L);
        const struct dv_row *a = row_named(t, lanes), *b = row_named(t, warps);
        const unsigned ia = (unsigned)(a - t->rows), ib = (unsigned)(b - t->rows);
        cr_expect_eq(dv_row_reference(t, ia), ib, "%s over %s", lanes, warps);
        cr_expect_eq(dv_row_reference(t, ib), ib, "%s is its own", warps);
        cr_expect(a->comparable, "%s: %s", lanes, a->comparable_reason);
        cr_expect_eq(a->thread_fmas, b->thread_fmas);
        /* 512 iterations (4096 / 8): 256 on each side */
        cr_expect_eq(a->thread_fmas, 64ull * 256 * 256 * 2 * L);
        cr_expect_float_eq(a->predicted_ratio, 2.0, 1e-12, "%s", lanes);
        cr_expect_float_eq(b->predicted_ratio, 1.0, 1e-12);
        cr_expect_eq(a->point.la, L);
        cr_expect_eq(a->point.lb, L);
        cr_expect_str_eq(a->point.arrangement, "lanes");
    }
    experiment_report_free(r);
    r = plan_of("predication-map", 16);
    cr_assert_eq(r->ntables, 8);
    unsigned seen[9][9] = {{0}};
    for (unsigned i = 0; i < r->ntables; i++)
        for (unsigned j = 0; j < r->tables[i].nrows; j++) {
            const struct dv_row *w = &r->tables[i].rows[j];
            if (strcmp(w->point.arrangement, "lanes") == 0) seen[w->point.la][w->point.lb]++;
        }
    for (unsigned a = 1; a <= 8; a++)
        for (unsigned b = 1; b <= 8; b++) cr_expect_eq(seen[a][b], 1, "point %ux%u", a, b);
    experiment_report_free(r);
}

/* Branchless against branch: compute-both-then-select issues both sides in
 * every warp, split or not (model 2 against the warp-aligned branch); the
 * split branch 2, the aligned one 1; every row the same useful work. The
 * reconvergence rows: each __syncwarp() row over the row without it, the
 * loop and the early return their own references (other work). */
Test(experiments, branchless_and_reconvergence_rows) {
    struct dv_report *r = plan_of("compiler-and-warp", 64);
    cr_assert_eq(r->ntables, 4);
    const struct dv_table *bl = &r->tables[2], *rc = &r->tables[3];
    cr_expect_str_eq(bl->id, "scenario:branchless");
    static const struct {
        const char *name;
        double ratio;
    } want[] = {{"branch-warps", 1}, {"branch-lanes", 2}, {"select-warps", 2}, {"select-lanes", 2}};
    for (unsigned i = 0; i < 4; i++) {
        const struct dv_row *w = row_named(bl, want[i].name);
        cr_expect_float_eq(w->predicted_ratio, want[i].ratio, 1e-12, "%s", want[i].name);
        cr_expect(w->comparable, "%s: %s", w->name, w->comparable_reason);
    }
    cr_expect_str_eq(row_named(bl, "select-lanes")->point.variant, "select");
    cr_expect_str_eq(rc->id, "scenario:reconvergence");
    static const char *const pairs[][2] = {
        {"ifelse-sync", "ifelse"}, {"loop-break-sync", "loop-break"}, {"early-return-sync", "early-return"}};
    for (unsigned i = 0; i < 3; i++) {
        const struct dv_row *a = row_named(rc, pairs[i][0]), *b = row_named(rc, pairs[i][1]);
        const unsigned ia = (unsigned)(a - rc->rows), ib = (unsigned)(b - rc->rows);
        cr_expect_eq(dv_row_reference(rc, ia), ib, "%s over %s", pairs[i][0], pairs[i][1]);
        cr_expect_eq(dv_row_reference(rc, ib), ib);
        cr_expect(a->comparable, "%s: %s", a->name, a->comparable_reason);
        cr_expect_float_eq(a->predicted_ratio, 1.0, 1e-12, "the model reconverges at the join");
    }
    /* Early return: half the lanes run A and stop; the rest B and the tail. */
    const struct dv_row *er = row_named(rc, "early-return");
    cr_expect_eq(er->thread_fmas, 64ull * (128 * 2 + 128 * 4) * 512,
                 "A (2 units) for 128 threads a block, B and the tail (4) for 128");
    experiment_report_free(r);
}

/* The pair kernel's CPU reference is the chains written out: a side's chain
 * (k-way path 0's or path 1's constants), or its trips of the loop's body,
 * then the tail (path 2's) for a lane that reaches the join; select keeps
 * the side's value; an early-returning lane has no tail. */
Test(experiments, pair_reference_is_the_chains_written_out) {
    const struct scenario *rc = get("reconvergence"), *bl = get("branchless");
    const unsigned unit = 32;
    const float x0 = dv_input_value(17);
    struct scenario rs;
    for (unsigned r = 0; r < rc->nrows; r++) {
        scenario_row(rc, r, &rs);
        for (unsigned w = 0; w < 5; w++) {
            float x = x0;
            if (scenario_pair_loops(rs.variant)) {
                for (unsigned i = 0; i < (w ? w : 1u) * rs.lengths[3] * unit; i++)
                    x = fmaf(x, SCENARIO_LOOP_A, SCENARIO_LOOP_B);
            } else {
                const unsigned side = w ? 1u : 0u;
                for (unsigned i = 0; i < rs.lengths[side] * unit; i++)
                    x = fmaf(x, scenario_kway_a(side), scenario_kway_b(side));
            }
            const int tail = !(scenario_pair_returns(rs.variant) && w == 0);
            for (unsigned i = 0; tail && i < rs.lengths[2] * unit; i++)
                x = fmaf(x, scenario_kway_a(2), scenario_kway_b(2));
            const float got = scenario_reference(&rs, x0, w, unit, 0);
            cr_expect_eq(memcmp(&got, &x, sizeof x), 0, "%s w %u: %.9g, want %.9g", rc->rows[r].name, w, got, x);
            cr_expect_eq(
                scenario_thread_fmas(&rs, w, unit, 0),
                (unsigned long long)(scenario_pair_loops(rs.variant) ? w * rs.lengths[3] : rs.lengths[w ? 1 : 0]) *
                        unit +
                    (tail ? rs.lengths[2] * unit : 0),
                "%s w %u", rc->rows[r].name, w);
        }
    }
    /* Select and branch give the same value for the same side; the sides differ. */
    struct scenario sel, br;
    scenario_row(bl, 3, &sel);
    scenario_row(bl, 1, &br);
    cr_assert_eq(sel.variant, SCENARIO_PAIR_SELECT);
    for (unsigned w = 0; w < 2; w++) {
        const float a = scenario_reference(&sel, x0, w, unit, 0), b = scenario_reference(&br, x0, w, unit, 0);
        cr_expect_eq(memcmp(&a, &b, sizeof a), 0);
    }
    cr_expect_neq(scenario_reference(&sel, x0, 0, unit, 0), scenario_reference(&sel, x0, 1, unit, 0));
}

/* The short kernel's sides of 1..8 FMAs: step k of side 1 is
 * fma(x, 1 - 2^(k-12), 2^(k-13)), of side 0 fma(x, 1 - 5 * 2^(k-14),
 * 3 * 2^(k-14)), every constant exact; the worked cases' first steps are
 * the ones they always were. */
Test(experiments, short_sides_of_every_length_are_their_steps) {
    cr_expect_eq(scenario_short_a(1, 1), 0.99951171875f);
    cr_expect_eq(scenario_short_b(1, 1), 0.000244140625f);
    cr_expect_eq(scenario_short_a(1, 4), 0.99609375f);
    cr_expect_eq(scenario_short_b(1, 4), 0.001953125f);
    cr_expect_eq(scenario_short_a(0, 1), 0.9993896484375f);
    cr_expect_eq(scenario_short_b(0, 1), 0.0003662109375f);
    cr_expect_eq(scenario_short_a(0, 3), 0.99755859375f);
    cr_expect_eq(scenario_short_b(0, 3), 0.00146484375f);
    for (unsigned side = 0; side < 2; side++)
        for (unsigned k = 1; k <= SCENARIO_SHORT_MAX; k++) {
            const double a = scenario_short_a(side, k), b = scenario_short_b(side, k);
            const double wa = side ? 1.0 - ldexp(1, (int)k - 12) : 1.0 - 5 * ldexp(1, (int)k - 14);
            const double wb = side ? ldexp(1, (int)k - 13) : 3 * ldexp(1, (int)k - 14);
            cr_expect_eq(a, wa, "side %u step %u", side, k);
            cr_expect_eq(b, wb, "side %u step %u", side, k);
        }
    float x = 0.7f, y = 0.7f;
    for (unsigned k = 1; k <= 8; k++) y = fmaf(y, scenario_short_a(0, k), scenario_short_b(0, k));
    x = scenario_short_side(x, 0, 8);
    cr_expect_eq(x, y);
}

/* Compute-both-then-select: the witness's model runs both paths with every
 * lane, in every warp, whatever the lanes take; the branch one run per side
 * present. */
Test(experiments, the_witness_model_of_select_is_both_paths_full) {
    const struct scenario *bl = get("branchless");
    struct scenario sel, br;
    scenario_row(bl, 3, &sel);
    scenario_row(bl, 1, &br);
    const unsigned tpb = 64;
    uint8_t w[64];
    for (unsigned i = 0; i < tpb; i++) w[i] = i & 1;
    struct dv_witness_block e;
    testimony_expect_scenario(&sel, w, 1, tpb, 32, &e);
    cr_expect_eq(e.runs[0], 2);
    cr_expect_eq(e.runs[1], 2);
    cr_expect_eq(e.split[0] + e.split[1], 0, "every run with every lane");
    cr_expect_eq(e.lanes[0], 64);
    testimony_expect_scenario(&br, w, 1, tpb, 32, &e);
    cr_expect_eq(e.runs[0], 2);
    cr_expect_eq(e.split[0], 2);
    cr_expect_eq(e.lanes[0], 32);
    cr_expect_eq(e.hist[1][16], 2);
}

/* The join record: a warp whose lanes read the join in one group with the
 * mask of every lane that reaches it reconverged; one that read it in two
 * groups, the second later, did not, and says how far apart. An early
 * return's lanes that returned are no lanes of the join. */
Test(experiments, join_records_tell_a_warp_that_met_again_from_one_that_did_not) {
    const struct scenario *rc = get("reconvergence");
    struct scenario ie, er;
    scenario_row(rc, 0, &ie);
    scenario_row(rc, 4, &er);
    const unsigned tpb = 64;
    uint8_t w[64];
    struct dv_join_lane rec[64];
    memset(rec, 0, sizeof rec);
    for (unsigned i = 0; i < tpb; i++) {
        w[i] = i & 1;
        rec[i].reached = 1;
        if (i < 32) { /* warp 0: together */
            rec[i].mask = 0xffffffffu;
            rec[i].clock = 1000;
        } else { /* warp 1: two groups, 700 cycles apart */
            rec[i].mask = (i & 1) ? 0xaaaaaaaau : 0x55555555u;
            rec[i].clock = (i & 1) ? 1700 : 1000;
        }
    }
    struct dv_join j;
    testimony_join(&ie, w, rec, 1, tpb, &j);
    cr_expect(j.present);
    cr_expect_eq(j.warps, 2);
    cr_expect_eq(j.reconverged, 1);
    cr_expect_eq(j.groups_max, 2);
    cr_expect_float_eq(j.groups_mean, 1.5, 1e-12);
    cr_expect_float_eq(j.spread_max, 700, 1e-12);
    cr_expect_eq(j.expected_mask, 0xffffffffu);
    cr_expect_eq(j.nmasks, 3);
    cr_expect(strstr(j.verdict, "not reconverged at the join in 1 of 2 warps"), "%s", j.verdict);
    /* The early return: the even lanes returned, the odd ones met in one group. */
    for (unsigned i = 0; i < tpb; i++) {
        rec[i].reached = i & 1;
        rec[i].mask = (i & 1) ? 0xaaaaaaaau : 0;
        rec[i].clock = 5000;
    }
    testimony_join(&er, w, rec, 1, tpb, &j);
    cr_expect_eq(j.warps, 2);
    cr_expect_eq(j.reconverged, 2, "%s", j.verdict);
    cr_expect_eq(j.expected_mask, 0xaaaaaaaau);
    cr_expect_float_eq(j.lanes_mean, 16.0, 1e-12);
    cr_expect(strstr(j.verdict, "reconverged at the join: all 2 warps"), "%s", j.verdict);
}

/* A predication point's listing: guarded path FFMAs and no branch
 * (predicated), or unguarded ones behind BSSY / @P BRA / BSYNC (branched). */
static struct listing *point_listing(int predicated) {
    struct listing *l = listing_create();
    cr_assert_not_null(l);
    struct listing_run run;
    memset(&run, 0, sizeof run);
    run.count = 1;
    run.warp = 100;
    run.thread = 3200;
    run.pred_on = 3200;
    run.lanes = 32;
    run.pc = 0x100;
    snprintf(run.opcode, sizeof run.opcode, "%s", predicated ? "R2P" : "BSSY");
    run.region = LISTING_BEFORE;
    cr_assert_eq(listing_add_run(l, &run), 0);
    run.pc = 0x110;
    snprintf(run.opcode, sizeof run.opcode, "FFMA");
    run.region = LISTING_PATH_A;
    run.guarded = predicated;
    run.pred_on = predicated ? 1600 : 3200;
    cr_assert_eq(listing_add_run(l, &run), 0);
    run.pc = 0x120;
    run.region = LISTING_PATH_B;
    cr_assert_eq(listing_add_run(l, &run), 0);
    return l;
}

/* The map read as a whole: the boundary in the simplest rule that fits the
 * points' SASS, against the guide's old rule; with the shape this build's
 * cubin shows (LA <= 3 and LB <= 4), no rule on the sum or the longer side
 * fits, the rule on each side does. */
Test(experiments, the_predication_boundary_is_the_rule_that_fits) {
    struct dv_report *r = plan_of("predication-map", 16);
    unsigned n = 0;
    for (unsigned i = 0; i < r->ntables; i++)
        for (unsigned j = 0; j < r->tables[i].nrows; j++) {
            struct dv_row *w = &r->tables[i].rows[j];
            w->measured = 1;
            w->ratio = 1.5;
            w->ratio_ci = (struct dv_ci){1.4, 1.6};
            if (strcmp(w->point.arrangement, "lanes") != 0) continue;
            w->instructions = point_listing(w->point.la <= 3 && w->point.lb <= 4);
            n++;
        }
    cr_assert_eq(n, 64);
    r->measured = 1;
    struct findings_predication f;
    cr_assert_eq(findings_predication(r, &f), 64);
    cr_expect_eq(f.predicated, 12);
    cr_expect_eq(f.branched, 52);
    cr_expect_eq(f.sum_rule, -1);
    cr_expect_eq(f.max_rule, -1);
    cr_expect_eq(f.side_a, 3);
    cr_expect_eq(f.side_b, 4);
    cr_expect(strstr(f.text, "at most 3 FMAs and whose `else` side at most 4"), "%s", f.text);
    /* LA + LB <= 7 against the SASS: (3,4) agrees; (4,1) (4,2) (4,3) (5,1) (5,2) (6,1), branched with
     * at most 7, and (1,5) (1,6) (2,5), branched too, do not. */
    cr_expect_eq(f.guide_disagrees, 9, "%u", f.guide_disagrees);
    /* Only the diagonal, 1..3 predicated: the sum rule fits first. */
    for (unsigned i = 0; i < r->ntables; i++)
        for (unsigned j = 0; j < r->tables[i].nrows; j++) {
            struct dv_row *w = &r->tables[i].rows[j];
            if (w->point.la != w->point.lb) {
                listing_free(w->instructions);
                w->instructions = NULL;
            }
        }
    cr_assert_eq(findings_predication(r, &f), 64);
    cr_expect_eq(f.unknown, 56);
    cr_expect_eq(f.sum_rule, 6);
    cr_expect(strstr(f.text, "LA + LB <= 6"), "%s", f.text);
    experiment_report_free(r);
    /* A report without predication tables has no points. */
    r = plan_of("k-paths", 16);
    cr_expect_eq(findings_predication(r, &f), 0);
    experiment_report_free(r);
}
