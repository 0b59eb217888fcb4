/* test_testimony.c -- the model's witness record, the comparison with what
 * the GPU saw, and the counter derivations, against numbers worked out by
 * hand in the comments (warps are 32 consecutive linear thread ids; a partial
 * last warp has only its own threads).
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/base/fnv.h"
#include "kernels/model/model/scenario_table.h"
#include "kernels/model/model/testimony.h"
#include "kernels/model/model/analysis.h"

/* The model's record of a row of `kernel` running `name`, planned as the
 * planner plans it: a built-in's mode is the branch and per-iteration
 * kernels' argument, the mask kernel reads the name (built-in or expression). */
static struct dv_witness_block *expect_builtin(const char *name, enum dv_kernel kernel, unsigned blocks, unsigned bx,
                                               unsigned by, unsigned iterations) {
    const struct predicate_builtin *b = predicate_find(name);
    cr_assert(b || kernel == DV_KERNEL_MASK, "%s", name);
    struct dv_row row;
    memset(&row, 0, sizeof row);
    snprintf(row.name, sizeof row.name, "%s", name);
    row.kernel = kernel;
    row.mode = kernel == DV_KERNEL_MASK ? -1 : b->mode;
    char err[ERR_LEN];
    struct dv_geometry g = {blocks, bx, by};
    struct dv_witness_block *e = calloc(blocks, sizeof(*e));
    cr_assert_not_null(e);
    cr_assert_eq(testimony_expect_lesson(&row, &g, iterations, NULL, e, err), 0, "%s", err);
    return e;
}

Test(testimony, lane_parity_splits_every_warp_in_half) {
    /* 256 threads = 8 warps, each 16 lanes on A and 16 on B: 8 partial runs
     * of each path, 128 lanes on each. */
    struct dv_witness_block *e = expect_builtin("lane-parity", DV_KERNEL_BRANCH, 3, 256, 1, 4096);
    for (unsigned b = 0; b < 3; b++) {
        cr_expect_eq(e[b].runs[0], 8);
        cr_expect_eq(e[b].runs[1], 8);
        cr_expect_eq(e[b].split[0], 8);
        cr_expect_eq(e[b].split[1], 8);
        cr_expect_eq(e[b].lanes[0], 128);
        cr_expect_eq(e[b].lanes[1], 128);
    }
    free(e);
}

Test(testimony, first_16_splits_warp_0_only) {
    /* Warp 0: 16 on A, 16 on B (both partial); warps 1-7 all on B (full). */
    struct dv_witness_block *e = expect_builtin("first-16", DV_KERNEL_BRANCH, 1, 256, 1, 4096);
    cr_expect_eq(e[0].runs[0], 1);
    cr_expect_eq(e[0].split[0], 1);
    cr_expect_eq(e[0].runs[1], 8);
    cr_expect_eq(e[0].split[1], 1);
    cr_expect_eq(e[0].lanes[0], 16);
    cr_expect_eq(e[0].lanes[1], 240);
    /* The histogram: A once with 16 lanes; B once with 16 and 7 times with 32. */
    cr_expect_eq(e[0].hist[0][16], 1);
    cr_expect_eq(e[0].hist[1][16], 1);
    cr_expect_eq(e[0].hist[1][32], 7);
    unsigned n = 0;
    for (unsigned k = 0; k < DV_WITNESS_BINS; k++) n += e[0].hist[0][k] + e[0].hist[1][k];
    cr_expect_eq(n, 9, "every run is in one bin");
    free(e);
}

Test(testimony, partial_warp_counts_its_own_threads) {
    /* 48 threads: warp 0 of 32, warp 1 of 16. warp-parity puts warp 0 on A
     * and warp 1 on B, each with all of its threads: no partial run. */
    struct dv_witness_block *e = expect_builtin("warp-parity", DV_KERNEL_BRANCH, 1, 48, 1, 4096);
    cr_expect_eq(e[0].runs[0], 1);
    cr_expect_eq(e[0].runs[1], 1);
    cr_expect_eq(e[0].split[0], 0);
    cr_expect_eq(e[0].split[1], 0);
    cr_expect_eq(e[0].lanes[0], 32);
    cr_expect_eq(e[0].lanes[1], 16);
    free(e);
}

Test(testimony, block_parity_alternates_blocks) {
    struct dv_witness_block *e = expect_builtin("block-parity", DV_KERNEL_BRANCH, 2, 64, 1, 4096);
    cr_expect_eq(e[0].runs[0], 2);
    cr_expect_eq(e[0].runs[1], 0);
    cr_expect_eq(e[1].runs[0], 0);
    cr_expect_eq(e[1].runs[1], 2);
    free(e);
}

Test(testimony, per_iteration_rows_count_every_iteration) {
    /* Lane parity per iteration: every phase splits all 8 warps, so 8 partial
     * runs of each path per iteration: 8 x 4096. Warp parity: phase k puts
     * warps with (w + k) even on A, 4 of 8, never partial. 5 iterations:
     * 20 runs of each path. */
    struct dv_witness_block *lp = expect_builtin("lane-parity", DV_KERNEL_PERITER, 1, 256, 1, 4096);
    cr_expect_eq(lp[0].runs[0], 8ull * 4096);
    cr_expect_eq(lp[0].split[1], 8ull * 4096);
    cr_expect_eq(lp[0].lanes[0], 128ull * 4096);
    struct dv_witness_block *wp = expect_builtin("warp-parity", DV_KERNEL_PERITER, 1, 256, 1, 5);
    cr_expect_eq(wp[0].runs[0], 20);
    cr_expect_eq(wp[0].runs[1], 20);
    cr_expect_eq(wp[0].split[0] + wp[0].split[1], 0);
    /* 37 iterations: phases 0..4 appear twice, 5..31 once. */
    struct dv_witness_block *w37 = expect_builtin("warp-parity", DV_KERNEL_PERITER, 1, 256, 1, 37);
    cr_expect_eq(w37[0].runs[0] + w37[0].runs[1], 8ull * 37);
    free(lp);
    free(wp);
    free(w37);
}

Test(testimony, per_iteration_block_parity_differs_by_block) {
    /* Block parity reads blockIdx.x: per iteration, block 0 starts on A and
     * block 1 on B, so over 3 iterations block 0 runs A twice and B once per
     * warp and block 1 the other way round (2 warps of 32, never partial). */
    struct dv_witness_block *e = expect_builtin("block-parity", DV_KERNEL_PERITER, 2, 64, 1, 3);
    cr_expect_eq(e[0].runs[0], 4);
    cr_expect_eq(e[0].runs[1], 2);
    cr_expect_eq(e[1].runs[0], 2);
    cr_expect_eq(e[1].runs[1], 4);
    cr_expect_eq(e[0].split[0] + e[0].split[1] + e[1].split[0] + e[1].split[1], 0);
    free(e);
}

Test(testimony, no_branch_kernel_runs_path_a_only) {
    struct dv_row row;
    memset(&row, 0, sizeof(row));
    snprintf(row.name, sizeof row.name, "no-branch");
    row.kernel = DV_KERNEL_NOBRANCH;
    row.mode = DV_ALWAYS_A;
    struct dv_geometry g = {2, 40, 1};
    struct dv_witness_block e[2];
    char err[ERR_LEN];
    cr_assert_eq(testimony_expect_lesson(&row, &g, 4096, NULL, e, err), 0, "%s", err);
    /* 40 threads: a warp of 32 and one of 8, both full. */
    cr_expect_eq(e[1].runs[0], 2);
    cr_expect_eq(e[1].runs[1], 0);
    cr_expect_eq(e[1].split[0], 0);
    cr_expect_eq(e[1].lanes[0], 40);
}

Test(testimony, observe_agrees_when_every_block_matches) {
    struct dv_witness_block *e = expect_builtin("lane-parity", DV_KERNEL_BRANCH, 4, 256, 1, 4096);
    struct dv_observed o;
    testimony_observe(e, e, 4, 8, 1, &o);
    cr_expect(o.present);
    cr_expect(o.agrees);
    cr_expect_not(o.predicated);
    cr_expect_eq(o.first_difference, -1);
    cr_expect_eq(o.split_warps.min, 8);
    cr_expect_eq(o.split_warps.max, 8);
    cr_expect_float_eq(o.split_warps.per_block, 8.0, 1e-12);
    cr_expect_float_eq(o.path_runs.per_block, 16.0, 1e-12);
    cr_expect_float_eq(o.lanes_per_run[0], 16.0, 1e-12);
    cr_expect_eq(o.runs[0], 32);
    cr_expect_eq(o.hist[0][16], 32, "4 blocks x 8 runs of path A, each with 16 lanes");
    cr_expect_eq(o.hist[1][16], 32);
    cr_expect_eq(o.hist[0][32], 0);
    cr_expect(strstr(o.verdict, "agrees") != NULL, "%s", o.verdict);
    free(e);
}

Test(testimony, observe_names_the_first_differing_block) {
    struct dv_witness_block *e = expect_builtin("lane-parity", DV_KERNEL_BRANCH, 4, 256, 1, 4096);
    struct dv_witness_block seen[4];
    memcpy(seen, e, sizeof(seen));
    seen[2].split[0] = 7;
    struct dv_observed o0;
    struct dv_witness_block seen2[4];
    memcpy(seen2, e, sizeof(seen2));
    seen2[1].hist[0][16] = 7; /* same totals, a different distribution: still a difference */
    seen2[1].hist[0][15] = 1;
    testimony_observe(seen2, e, 4, 8, 1, &o0);
    cr_expect_not(o0.agrees);
    cr_expect_eq(o0.first_difference, 1);
    struct dv_observed o;
    testimony_observe(seen, e, 4, 8, 1, &o);
    cr_expect_not(o.agrees);
    cr_expect_not(o.predicated);
    cr_expect_eq(o.first_difference, 2);
    cr_expect(strstr(o.verdict, "block 2") != NULL, "%s", o.verdict);
    free(e);
}

Test(testimony, observe_recognises_predication) {
    /* The model: warp parity, 4 warps on A, 4 on B, one run each. The GPU:
     * every warp ran both sides with all 32 lanes. */
    struct dv_witness_block *e = expect_builtin("warp-parity", DV_KERNEL_BRANCH, 2, 256, 1, 4096);
    struct dv_witness_block seen[2];
    for (unsigned b = 0; b < 2; b++)
        seen[b] = (struct dv_witness_block){
            .runs = {8, 8}, .lanes = {256, 256}, .hist = {[0][32] = 8, [1][32] = 8}};
    struct dv_observed o;
    testimony_observe(seen, e, 2, 8, 1, &o);
    cr_expect_not(o.agrees);
    cr_expect(o.predicated);
    cr_expect_float_eq(o.split_warps.per_block, 0.0, 1e-12);
    cr_expect(strstr(o.verdict, "predicated") != NULL, "%s", o.verdict);
    free(e);
}

Test(testimony, observe_divides_per_iteration_rows) {
    struct dv_witness_block *e = expect_builtin("lane-parity", DV_KERNEL_PERITER, 2, 256, 1, 64);
    struct dv_observed o;
    testimony_observe(e, e, 2, 8, 64, &o);
    cr_expect(o.agrees);
    cr_expect_eq(o.per, 64);
    cr_expect_float_eq(o.split_warps.per_block, 8.0, 1e-12);
    cr_expect_float_eq(o.path_runs.per_block, 16.0, 1e-12);
    cr_expect(strstr(o.verdict, "per iteration") != NULL, "%s", o.verdict);
    free(e);
}

Test(testimony, scenario_kway_one_run_per_distinct_path) {
    struct scenario s;
    memset(&s, 0, sizeof(s));
    s.kind = SCENARIO_KWAY;
    uint8_t work[64];
    /* warp 0: lanes alternate paths 0/1 (2 partial runs); warp 1: all path 3 (1 full run). */
    for (unsigned i = 0; i < 32; i++) work[i] = i & 1u;
    for (unsigned i = 32; i < 64; i++) work[i] = 3;
    struct dv_witness_block e;
    testimony_expect_scenario(&s, work, 1, 64, 4096, &e);
    cr_expect_eq(e.runs[0], 3);
    cr_expect_eq(e.split[0], 2);
    cr_expect_eq(e.lanes[0], 64);
    cr_expect_eq(e.runs[1], 0);
}

Test(testimony, scenario_loop_runs_to_the_longest_trip) {
    struct scenario s;
    memset(&s, 0, sizeof(s));
    s.kind = SCENARIO_LOOP;
    uint8_t work[32];
    /* 31 lanes run 1 trip, one runs 3: trips 0 full (32), 1 and 2 partial (1 lane each). */
    /* (the histogram: one run with 32 lanes, two with 1) */
    for (unsigned i = 0; i < 32; i++) work[i] = 1;
    work[5] = 3;
    struct dv_witness_block e;
    testimony_expect_scenario(&s, work, 1, 32, 4096, &e);
    cr_expect_eq(e.runs[0], 3);
    cr_expect_eq(e.split[0], 2);
    cr_expect_eq(e.lanes[0], 34);
    cr_expect_eq(e.hist[0][32], 1);
    cr_expect_eq(e.hist[0][1], 2);
}

Test(testimony, scenario_short_counts_sides_per_iteration) {
    struct scenario s;
    memset(&s, 0, sizeof(s));
    s.kind = SCENARIO_SHORT;
    uint8_t work[32];
    memset(work, 0, sizeof(work));
    /* Every lane the same side bits: per iteration one full run of the side
     * its pattern bit picks; 64 iterations = 2 rounds of 32. */
    struct dv_witness_block e;
    testimony_expect_scenario(&s, work, 1, 32, 64, &e);
    unsigned ones = __builtin_popcount(scenario_short_pattern(0));
    cr_expect_eq(e.runs[0], 2ull * ones);
    cr_expect_eq(e.runs[1], 2ull * (32 - ones));
    cr_expect_eq(e.split[0] + e.split[1], 0);
}

Test(testimony, counters_derive_efficiency_branches_and_instructions) {
    struct dv_counters c;
    memset(&c, 0, sizeof(c));
    /* 1024 blocks, 8192 divergent targets: 8 per block; 16 lanes per
     * instruction: half efficiency; 2^21 warp instructions for 2^25 thread
     * FMAs (2^20 warp-wide FMAs): 2 instructions per FMA. */
    c.present = 1;
    c.branch_targets_divergent = 8192;
    c.threads_per_inst = 16;
    c.inst_executed = 2097152;
    c.ffma_threads = 33554432;
    testimony_counters_derive(&c, 1024, 8.0, 1, 32);
    cr_expect(strstr(c.verdict, "agrees") != NULL, "%s", c.verdict);
    cr_expect_not(c.predicated);
    cr_expect_float_eq(c.warp_efficiency, 0.5, 1e-12);
    cr_expect_float_eq(c.divergent_per_block, 8.0, 1e-12);
    cr_expect_float_eq(c.model_split_per_block, 8.0, 1e-12);
    cr_expect_float_eq(c.inst_per_fma, 2.0, 1e-12);
    c.ffma_threads = 0;
    testimony_counters_derive(&c, 0, 0.0, 1, 32);
    cr_expect(isnan(c.inst_per_fma));
    cr_expect(isnan(c.divergent_per_block));
}

Test(testimony, counters_recognise_a_predicated_branch) {
    /* Per-iteration lane parity: the model splits 8 warps at each of 4096
     * evaluations; the timed kernel took no divergent branch with every lane
     * active: predicated. */
    struct dv_counters c;
    memset(&c, 0, sizeof(c));
    c.threads_per_inst = 32;
    c.inst_executed = 2.32 * 1024;
    c.ffma_threads = 32 * 1024;
    testimony_counters_derive(&c, 4096, 8.0, 4096, 32);
    cr_expect_float_eq(c.model_split_per_block, 8.0 * 4096, 1e-9);
    cr_expect(c.predicated);
    cr_expect(strstr(c.verdict, "predicated") != NULL, "%s", c.verdict);
    cr_expect(strstr(c.verdict, "8 warps per block at each of 4096 evaluations") != NULL, "%s", c.verdict);
    cr_expect_float_eq(c.inst_per_fma, 2.32, 1e-9);
    /* A 4-way switch: 3 divergent branches per split warp. */
    c.threads_per_inst = 8;
    c.branch_targets_divergent = 24.0 * 4096;
    testimony_counters_derive(&c, 4096, 8.0, 1, 32);
    cr_expect_not(c.predicated);
    cr_expect(strstr(c.verdict, "more than one per split warp") != NULL, "%s", c.verdict);
    /* Fewer divergent branches than split warps: a disagreement. */
    c.branch_targets_divergent = 4.0 * 4096;
    testimony_counters_derive(&c, 4096, 8.0, 1, 32);
    cr_expect(strstr(c.verdict, "differs") != NULL, "%s", c.verdict);
}

/* Blocks of 48 threads: a full warp and one of 16. Part 2's per-iteration
 * lane parity splits both at each of 4096 evaluations; the compiler
 * predicated the branch, so no divergent branch and every warp's
 * instructions ran with all of its threads: 24 lanes per instruction, not
 * 32. The verdict names the split per block per evaluation, never "8192
 * warps per block". */
Test(testimony, counters_recognise_a_predicated_branch_in_partial_warps) {
    struct dv_counters c;
    memset(&c, 0, sizeof(c));
    c.present = 1;
    c.threads_per_inst = 24;
    c.inst_executed = 2.6 * 2 * 4096;
    c.ffma_threads = 48.0 * 4096;
    testimony_counters_derive(&c, 4096, 2.0, 4096, 48.0 / 2);
    cr_expect(c.predicated, "%s", c.verdict);
    cr_expect(strstr(c.verdict, "predicated") == c.verdict, "%s", c.verdict);
    cr_expect(strstr(c.verdict, "2 warps per block at each of 4096 evaluations (8192 per block in all)") != NULL, "%s",
              c.verdict);
    cr_expect(strstr(c.verdict, "8192 warps") == NULL, "%s", c.verdict);
    /* One lane short of the warps' threads: not every lane ran. */
    c.threads_per_inst = 23;
    testimony_counters_derive(&c, 4096, 2.0, 4096, 24);
    cr_expect_not(c.predicated, "%s", c.verdict);
    cr_expect(strstr(c.verdict,
                     "differs: 0 divergent branches per block where the model splits 2 warps per block "
                     "at each of 4096 evaluations") != NULL,
              "%s", c.verdict);
}

Test(testimony, instructions_against_the_baseline_row) {
    struct dv_table t;
    memset(&t, 0, sizeof(t));
    t.nrows = 3;
    t.baseline_row = 1;
    t.rows[0].counters = (struct dv_counters){.present = 1, .inst_executed = 5.743e6};
    t.rows[1].counters = (struct dv_counters){.present = 1, .inst_executed = 3.315e6};
    t.rows[2].counters.present = 0;
    testimony_counters_compare(&t);
    cr_expect_float_eq(t.rows[0].counters.inst_vs_baseline, 5.743 / 3.315, 1e-12);
    cr_expect_float_eq(t.rows[1].counters.inst_vs_baseline, 1.0, 1e-12);
    cr_expect(isnan(t.rows[2].counters.inst_vs_baseline));
    t.rows[1].counters.present = 0;
    testimony_counters_compare(&t);
    cr_expect(isnan(t.rows[0].counters.inst_vs_baseline));
}

Test(testimony, block_independent_rows_copy_block_0_and_block_rows_do_not) {
    /* lane parity (no blockIdx.x) over 5 blocks: every block equals block 0;
     * block parity: even blocks all on A, odd all on B; an expression reading
     * blockIdx.x is evaluated per block. */
    struct dv_witness_block *lp = expect_builtin("lane-parity", DV_KERNEL_PERITER, 5, 64, 1, 8);
    for (unsigned b = 0; b < 5; b++) cr_expect_eq(memcmp(&lp[b], &lp[0], sizeof lp[0]), 0, "block %u", b);
    cr_expect_eq(lp[4].runs[0], 2ull * 8);
    struct dv_witness_block *bp = expect_builtin("block-parity", DV_KERNEL_BRANCH, 5, 64, 1, 8);
    cr_expect_eq(bp[3].runs[0], 0);
    cr_expect_eq(bp[3].runs[1], 2);
    cr_expect_eq(bp[4].runs[0], 2);
    struct dv_witness_block *ex = expect_builtin("threadIdx.x < blockIdx.x", DV_KERNEL_MASK, 40, 32, 1, 8);
    cr_expect_eq(ex[0].runs[0], 0);
    cr_expect_eq(ex[5].split[0], 1);
    cr_expect_eq(ex[5].lanes[0], 5);
    cr_expect_eq(ex[33].split[0], 0);
    cr_expect_eq(ex[33].lanes[0], 32);
    free(lp);
    free(bp);
    free(ex);
}

/* The mask of `text` (built-in or expression) over `g` at phase 0. */
static uint32_t *mask_of(const char *text, const struct dv_geometry *g) {
    struct predicate p;
    char err[ERR_LEN];
    cr_assert_eq(predicate_resolve(text, &p, NULL, err), 0, "%s", err);
    uint32_t *m = analysis_mask_build(&p, g, 0, err);
    cr_assert_not_null(m, "%s", err);
    predicate_cleanup(&p);
    return m;
}

/* A row of `kernel` running `name` as the planner plans it. */
static struct dv_row row_of(const char *name, enum dv_kernel kernel) {
    struct dv_row row;
    memset(&row, 0, sizeof row);
    snprintf(row.name, sizeof row.name, "%s", name);
    row.kernel = kernel;
    const struct predicate_builtin *b = predicate_find(name);
    row.mode = kernel == DV_KERNEL_MASK || !b ? DV_MODE_NONE : b->mode;
    return row;
}

Test(testimony, counter_grid_counts_one_period_and_the_rest) {
    struct testimony_grid g;
    testimony_counter_grid(4096, 1, &g); /* one block stands for all */
    cr_expect_eq(g.blocks, 4096);
    cr_expect_eq(g.nparts, 1);
    cr_expect_eq(g.part_blocks[0], 1);
    cr_expect_float_eq(g.weight[0], 4096.0, 0);
    testimony_counter_grid(4096, 2, &g); /* block parity: 2 blocks x 2048 */
    cr_expect_eq(g.nparts, 1);
    cr_expect_eq(g.part_blocks[0], 2);
    cr_expect_float_eq(g.weight[0], 2048.0, 0);
    testimony_counter_grid(1000, 3, &g); /* 3 x 333 + 1 */
    cr_expect_eq(g.nparts, 2);
    cr_expect_eq(g.part_blocks[0], 3);
    cr_expect_float_eq(g.weight[0], 333.0, 0);
    cr_expect_eq(g.part_blocks[1], 1);
    cr_expect_float_eq(g.weight[1], 1.0, 0);
    /* No saving, no period, a period as long as the grid: the whole grid once. */
    const unsigned cases[][2] = {{5, 3}, {1000, 0}, {1000, 1000}, {1000, 5000}, {1, 1}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        testimony_counter_grid(cases[i][0], cases[i][1], &g);
        cr_expect_eq(g.nparts, 1, "%u/%u", cases[i][0], cases[i][1]);
        cr_expect_eq(g.part_blocks[0], cases[i][0], "%u/%u", cases[i][0], cases[i][1]);
        cr_expect_float_eq(g.weight[0], 1.0, 0, "%u/%u", cases[i][0], cases[i][1]);
    }
}

Test(testimony, period_of_a_mask_is_the_blocks_between_repeats) {
    static const struct {
        const char *pred;
        unsigned blocks, bx, by, period;
    } cases[] = {
        {"lane-parity", 300, 256, 1, 1},
        {"block-parity", 300, 256, 1, 2},
        {"blockIdx.x & 2", 300, 256, 1, 4},
        {"(blockIdx.x * 7 + warp) % 3 == 0", 1000, 48, 1, 3},
        {"threadIdx.x < blockIdx.x % 64", 1000, 20, 1, 64}, /* blocks 20..63 alike, but 64 repeats 0 */
        {"threadIdx.x < blockIdx.x % 64", 1000, 72, 1, 64},
        {"threadIdx.y < blockIdx.x % 5", 700, 24, 3, 5}, /* 72 threads: not a whole number of words */
        {"blockIdx.x == 999", 1000, 32, 1, 1000},        /* the last block differs: no period */
        {"blockIdx.x < 500", 1000, 32, 1, 1000},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const struct dv_geometry g = {cases[i].blocks, cases[i].bx, cases[i].by};
        uint32_t *m = mask_of(cases[i].pred, &g);
        cr_expect_eq(testimony_period_bits(m, g.block_x * g.block_y, g.blocks), cases[i].period, "%s on %ux%u",
                     cases[i].pred, g.block_x, g.block_y);
        free(m);
    }
}

Test(testimony, one_thread_that_differs_breaks_the_period) {
    /* Blocks 0 and 1 differ in one thread only; block 2 repeats block 0 and
     * block 3 repeats block 1 except its last thread: no period. */
    enum { TPB = 72 };
    uint8_t v[4 * TPB];
    for (unsigned i = 0; i < sizeof v; i++) v[i] = (uint8_t)(i % TPB % 7);
    v[1 * TPB + 5] = 9;
    v[3 * TPB + 5] = 9;
    cr_expect_eq(testimony_period_bytes(v, TPB, 4), 2);
    v[3 * TPB + TPB - 1] = 100;
    cr_expect_eq(testimony_period_bytes(v, TPB, 4), 4);
    cr_expect_eq(testimony_period_bytes(v, TPB, 1), 1);
    cr_expect_eq(testimony_period_bytes(v, TPB, 0), 0);
}

Test(testimony, lesson_grid_follows_what_the_predicate_reads) {
    const struct dv_geometry g = {1000, 64, 1};
    char err[ERR_LEN];
    struct testimony_grid out;
    struct dv_row lp = row_of("lane-parity", DV_KERNEL_BRANCH);
    cr_assert_eq(testimony_lesson_grid(&lp, &g, 4096, NULL, &out, err), 0, "%s", err);
    cr_expect_eq(out.part_blocks[0], 1);
    cr_expect_float_eq(out.weight[0], 1000.0, 0);
    struct dv_row nb = row_of("no-branch", DV_KERNEL_NOBRANCH);
    cr_assert_eq(testimony_lesson_grid(&nb, &g, 4096, NULL, &out, err), 0, "%s", err);
    cr_expect_eq(out.part_blocks[0], 1);
    uint32_t *m = mask_of("block-parity", &g);
    struct dv_row bp = row_of("block-parity", DV_KERNEL_BRANCH);
    cr_assert_eq(testimony_lesson_grid(&bp, &g, 4096, m, &out, err), 0, "%s", err);
    cr_expect_eq(out.part_blocks[0], 2);
    cr_expect_float_eq(out.weight[0], 500.0, 0);
    /* Every iteration's phase moves a block-dependent branch: one mask does not tell. */
    struct dv_row pb = row_of("block-parity", DV_KERNEL_PERITER);
    cr_assert_eq(testimony_lesson_grid(&pb, &g, 8, m, &out, err), 0, "%s", err);
    cr_expect_eq(out.nparts, 1);
    cr_expect_eq(out.part_blocks[0], 1000);
    free(m);
    m = mask_of("threadIdx.x < blockIdx.x % 64", &g);
    struct dv_row ex = row_of("threadIdx.x < blockIdx.x % 64", DV_KERNEL_MASK);
    cr_assert_eq(testimony_lesson_grid(&ex, &g, 4096, m, &out, err), 0, "%s", err);
    cr_expect_eq(out.nparts, 2);
    cr_expect_eq(out.part_blocks[0], 64);
    cr_expect_float_eq(out.weight[0], 15.0, 0);
    cr_expect_eq(out.part_blocks[1], 40);
    free(m);
    struct dv_row sc = row_of("lanes", DV_KERNEL_SCENARIO);
    cr_expect_eq(testimony_lesson_grid(&sc, &g, 4096, NULL, &out, err), -1);
}

Test(testimony, a_given_mask_gives_the_record_the_built_one_gives) {
    static const struct {
        const char *pred;
        enum dv_kernel kernel;
        unsigned bx, by;
    } cases[] = {
        {"block-parity", DV_KERNEL_BRANCH, 256, 1},
        {"threadIdx.x < blockIdx.x % 64", DV_KERNEL_MASK, 256, 1},
        {"(blockIdx.x * 7 + warp) % 3 == 0", DV_KERNEL_MASK, 48, 1}, /* warps that straddle words */
        {"threadIdx.y < blockIdx.x % 5", DV_KERNEL_MASK, 24, 3},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const struct dv_geometry g = {77, cases[i].bx, cases[i].by};
        struct dv_row row = row_of(cases[i].pred, cases[i].kernel);
        uint32_t *m = mask_of(cases[i].pred, &g);
        struct dv_witness_block *built = calloc(g.blocks, sizeof *built), *given = calloc(g.blocks, sizeof *given);
        char err[ERR_LEN];
        cr_assert(built && given);
        cr_assert_eq(testimony_expect_lesson(&row, &g, 4096, NULL, built, err), 0, "%s", err);
        cr_assert_eq(testimony_expect_lesson(&row, &g, 4096, m, given, err), 0, "%s", err);
        cr_expect_eq(memcmp(built, given, sizeof *built * g.blocks), 0, "%s", cases[i].pred);
        free(m);
        free(built);
        free(given);
    }
}

/* The witness of a scenario row runs the blocks of one period of its
 * assignment, and the model is built on them: for every row of the suite,
 * on grids the period divides and grids it does not, the whole grid's model
 * repeats those blocks' records (block b has block b mod P's), and counting
 * each for the blocks it stands for gives the whole grid's figures. */
Test(testimony, a_scenario_record_built_on_its_period_and_repeated_is_the_whole_grids) {
    static const struct { unsigned blocks, tpb; } grids[] = {{64, 256}, {37, 96}, {5, 40}};
    size_t n = 0;
    const char *const *names = scenario_names(&n);
    unsigned compared = 0, shorter = 0;
    for (size_t i = 0; i < n; i++) {
        const struct scenario *s = scenario_find(names[i]);
        cr_assert_not_null(s);
        for (size_t k = 0; k < sizeof grids / sizeof grids[0]; k++) {
            const unsigned blocks = grids[k].blocks, tpb = grids[k].tpb;
            for (unsigned r = 0; r < s->nrows; r++) {
                uint8_t *work = malloc((size_t)blocks * tpb);
                struct dv_witness_block *whole = calloc(blocks, sizeof *whole), *rep = calloc(blocks, sizeof *rep);
                char err[ERR_LEN];
                cr_assert(work && whole && rep);
                struct scenario rs;
                scenario_row(s, r, &rs);
                cr_assert_eq(scenario_assign(&rs, s->rows[r].layout, blocks, tpb, work, err), 0, "%s", err);
                const unsigned period = testimony_period_bytes(work, tpb, blocks);
                testimony_expect_scenario(&rs, work, blocks, tpb, 128, whole);
                memset(rep, 0xa5, sizeof *rep * blocks); /* past the period: never read */
                testimony_expect_scenario(&rs, work, period, tpb, 128, rep);
                unsigned differ = 0;
                for (unsigned b = 0; b < blocks; b++) differ += memcmp(&whole[b], &rep[b % period], sizeof *rep) != 0;
                cr_expect_eq(differ, 0, "%s row %u, %u blocks of %u: period %u, %u blocks differ", names[i], r, blocks,
                             tpb, period, differ);
                struct dv_observed a, o;
                testimony_observe(whole, whole, blocks, (tpb + 31) / 32, 1, &a);
                testimony_observe_standing(rep, rep, period, blocks, (tpb + 31) / 32, 1, &o);
                cr_expect(a.runs[0] == o.runs[0] && a.runs[1] == o.runs[1] && a.lanes[0] == o.lanes[0] &&
                              a.split[0] == o.split[0] && a.path_runs.total == o.path_runs.total &&
                              a.split_warps.total == o.split_warps.total && a.path_runs.min == o.path_runs.min &&
                              a.path_runs.max == o.path_runs.max && memcmp(a.hist, o.hist, sizeof a.hist) == 0,
                          "%s row %u, %u blocks: the standing blocks count what the grid counts", names[i], r, blocks);
                compared++;
                shorter += period < blocks;
                free(work);
                free(whole);
                free(rep);
            }
        }
    }
    cr_expect_gt(shorter, compared / 2, "%u of %u rows have a period shorter than their grid", shorter, compared);
}

/* The blocks that stand for a grid, counted for the blocks they stand for,
 * give what the whole grid's records give: block parity on 7 blocks from
 * its first 2 (block 0 stands for 4 blocks, block 1 for 3). */
Test(testimony, observe_standing_counts_what_the_whole_grid_counts) {
    struct dv_witness_block *whole = expect_builtin("block-parity", DV_KERNEL_BRANCH, 7, 256, 1, 4096);
    struct dv_witness_block *two = expect_builtin("block-parity", DV_KERNEL_BRANCH, 2, 256, 1, 4096);
    struct dv_observed a, b;
    testimony_observe(whole, whole, 7, 8, 1, &a);
    testimony_observe_standing(two, two, 2, 7, 8, 1, &b);
    cr_expect(a.agrees && b.agrees, "%s / %s", a.verdict, b.verdict);
    cr_expect_eq(b.runs[0], 32, "4 blocks of 8 warps on A");
    cr_expect_eq(b.runs[1], 24, "3 on B");
    for (unsigned p = 0; p < 2; p++) {
        cr_expect_eq(a.runs[p], b.runs[p]);
        cr_expect_eq(a.split[p], b.split[p]);
        cr_expect_eq(a.lanes[p], b.lanes[p]);
        for (unsigned k = 0; k < DV_WITNESS_BINS; k++) cr_expect_eq(a.hist[p][k], b.hist[p][k], "path %u bin %u", p, k);
        cr_expect_float_eq(a.lanes_per_run[p], b.lanes_per_run[p], 1e-12);
    }
    cr_expect_eq(a.path_runs.min, b.path_runs.min);
    cr_expect_eq(a.path_runs.max, b.path_runs.max);
    cr_expect_eq(a.path_runs.total, b.path_runs.total);
    cr_expect_float_eq(a.path_runs.per_block, b.path_runs.per_block, 1e-12);
    cr_expect_eq(a.split_warps.total, b.split_warps.total);
    cr_expect_str_eq(a.verdict, b.verdict);

    /* A difference in a block that ran is named by that block. */
    two[1].runs[1] = 7;
    testimony_observe_standing(two, whole, 2, 7, 8, 1, &b);
    cr_expect_not(b.agrees);
    cr_expect_eq(b.first_difference, 1);
    free(whole);
    free(two);
}

/* A stand-in grid of a scenario row (identical blocks grouped, laid out as
 * copies in at most two parts) sums what the whole grid sums: for every
 * row of the suite at the suites' grid and at odd ones, any per-block
 * count (here one that differs for every distinct block: a hash of its
 * bytes) weighted by the stand-in's weights equals the grid's sum, every
 * copy is of a block with the same bytes, and the witness's records built
 * on the stand-in and counted with its weights give the whole grid's
 * figures. The sorted rows, 4096 blocks of a few kinds, stand in a
 * handful of blocks. */
static uint64_t block_count(const uint8_t *work, unsigned tpb, unsigned b) {
    return fnv1a_64(FNV1A_64_OFFSET, work + (size_t)b * tpb, tpb) & 0xffffu;
}

Test(testimony, a_scenario_rows_stand_in_sums_what_its_grid_sums) {
    static const struct { unsigned blocks, tpb, wave; } grids[] = {{4096, 256, 132}, {64, 256, 8}, {37, 96, 4}};
    size_t n = 0;
    const char *const *names = scenario_names(&n);
    unsigned made = 0, sorted_small = 0, sorted = 0;
    for (size_t i = 0; i < n; i++) {
        const struct scenario *s = scenario_find(names[i]);
        for (size_t k = 0; k < sizeof grids / sizeof grids[0]; k++) {
            const unsigned blocks = grids[k].blocks, tpb = grids[k].tpb;
            for (unsigned r = 0; r < s->nrows; r++) {
                uint8_t *work = malloc((size_t)blocks * tpb);
                unsigned *src = malloc(blocks * sizeof *src);
                char err[ERR_LEN];
                cr_assert(work && src);
                struct scenario rs;
                scenario_row(s, r, &rs);
                cr_assert_eq(scenario_assign(&rs, s->rows[r].layout, blocks, tpb, work, err), 0, "%s", err);
                struct testimony_grid plain, g;
                testimony_counter_grid(blocks, testimony_period_bytes(work, tpb, blocks), &plain);
                memset(&g, 0x5a, sizeof g);
                const unsigned ns = testimony_standin_bytes(work, tpb, blocks, grids[k].wave, &plain, &g, src, blocks);
                if (ns == 0) {
                    cr_expect_eq(g.blocks, 0x5a5a5a5au, "no stand-in leaves the grid as it was");
                    free(work);
                    free(src);
                    continue;
                }
                made++;
                cr_assert_eq(g.standin, 1);
                cr_assert_eq(g.blocks, blocks);
                cr_assert_eq(testimony_grid_launched(&g), ns);
                cr_expect_lt(ns, testimony_grid_launched(&plain) + 1, "%s row %u: no more blocks than its grid", names[i], r);
                uint64_t want = 0, got = 0;
                double stands = 0;
                for (unsigned b = 0; b < blocks; b++) want += block_count(work, tpb, b);
                uint8_t *copy = malloc((size_t)ns * tpb);
                cr_assert_not_null(copy);
                for (unsigned b = 0; b < ns; b++) {
                    cr_assert_lt(src[b], blocks);
                    const double w = testimony_grid_weight_of(&g, b);
                    cr_assert_gt(w, 0);
                    stands += w;
                    got += (uint64_t)w * block_count(work, tpb, src[b]);
                    memcpy(copy + (size_t)b * tpb, work + (size_t)src[b] * tpb, tpb);
                }
                cr_expect_eq(got, want, "%s row %u, %u blocks: the stand-in's weighted sum", names[i], r, blocks);
                cr_expect_float_eq(stands, blocks, 1e-9, "%s row %u: the weights cover the grid", names[i], r);
                /* The witness's records on the stand-in, counted with its weights. */
                struct dv_witness_block *whole = calloc(blocks, sizeof *whole), *rep = calloc(ns, sizeof *rep);
                cr_assert(whole && rep);
                testimony_expect_scenario(&rs, work, blocks, tpb, 128, whole);
                testimony_expect_scenario(&rs, copy, ns, tpb, 128, rep);
                struct dv_observed a, o;
                testimony_observe(whole, whole, blocks, (tpb + 31) / 32, 1, &a);
                testimony_observe_standin(rep, rep, &g, src, (tpb + 31) / 32, 1, &o);
                cr_expect(a.runs[0] == o.runs[0] && a.runs[1] == o.runs[1] && a.lanes[0] == o.lanes[0] &&
                              a.lanes[1] == o.lanes[1] && a.split[0] == o.split[0] && a.split[1] == o.split[1] &&
                              a.path_runs.total == o.path_runs.total && a.split_warps.total == o.split_warps.total &&
                              a.path_runs.min == o.path_runs.min && a.path_runs.max == o.path_runs.max &&
                              a.split_warps.min == o.split_warps.min && a.split_warps.max == o.split_warps.max &&
                              memcmp(a.hist, o.hist, sizeof a.hist) == 0 && o.agrees,
                          "%s row %u, %u blocks: the stand-in's records count what the grid's count", names[i], r,
                          blocks);
                cr_expect_str_eq(a.verdict, o.verdict);
                if (blocks == 4096 && s->rows[r].layout == SCENARIO_LAYOUT_SORTED) {
                    sorted++;
                    sorted_small += ns <= 64;
                }
                free(whole);
                free(rep);
                free(copy);
                free(work);
                free(src);
            }
        }
    }
    cr_expect_gt(made, 0);
    cr_expect_gt(sorted, 0, "no sorted row had a stand-in");
    cr_expect_eq(sorted_small, sorted, "%u of %u sorted rows of 4096 blocks stand in at most 64 blocks", sorted_small,
                 sorted);
}

/* Blocks that are all different have no stand-in; a grid of one kind of
 * block stands in one block when its plain grid is larger; a difference
 * the witness sees is named by the least grid block with those bytes. */
Test(testimony, a_stand_in_only_where_it_saves_and_differences_name_grid_blocks) {
    enum { B = 40, T = 64 };
    uint8_t work[B * T];
    unsigned src[B];
    struct testimony_grid plain, g;
    for (unsigned i = 0; i < B * T; i++) work[i] = (uint8_t)(i / T); /* every block its own */
    testimony_counter_grid(B, testimony_period_bytes(work, T, B), &plain);
    cr_expect_eq(testimony_standin_bytes(work, T, B, 4, &plain, &g, src, B), 0);
    /* Blocks 0-9 of one kind, 10-39 of another: the plain grid is the whole
     * grid (no period), the stand-in 1 + 3 blocks weighted 10. */
    for (unsigned i = 0; i < B * T; i++) work[i] = i / T < 10 ? 1 : 2;
    testimony_counter_grid(B, testimony_period_bytes(work, T, B), &plain);
    cr_assert_eq(testimony_grid_launched(&plain), B);
    const unsigned ns = testimony_standin_bytes(work, T, B, 4, &plain, &g, src, B);
    cr_assert_eq(ns, 4);
    cr_expect_eq(g.nparts, 1);
    cr_expect_float_eq(g.weight[0], 10, 1e-12);
    cr_expect(src[0] == 0 && src[1] == 10 && src[2] == 10 && src[3] == 10, "%u %u %u %u", src[0], src[1], src[2], src[3]);
    cr_expect_eq(testimony_standin_bytes(work, T, B, 4, &plain, &g, src, 3), 0, "no room for its 4 blocks");
    /* A plain grid of one wave (64 blocks at once) is kept as it is. */
    cr_expect_eq(testimony_standin_bytes(work, T, B, 64, &plain, &g, src, B), 0);
    cr_expect_eq(testimony_standin_bytes(work, T, B, 4, &plain, &g, src, B), 4);
    /* Equal blocks apart, not neighbours (1 2 1 2 ...): found by their hash. */
    for (unsigned i = 0; i < B * T; i++) work[i] = (i / T) % 2 ? 2 : 1;
    struct testimony_grid whole;
    testimony_counter_grid(B, 0, &whole);
    cr_expect_eq(testimony_standin_bytes(work, T, B, 4, &whole, &g, src, B), 2);
    cr_expect(src[0] == 0 && src[1] == 1 && g.nparts == 1 && g.weight[0] == 20, "%u %u x %g", src[0], src[1],
              g.weight[0]);
    for (unsigned i = 0; i < B * T; i++) work[i] = i / T < 10 ? 1 : 2;
    cr_assert_eq(testimony_standin_bytes(work, T, B, 4, &plain, &g, src, B), 4);
    struct dv_witness_block seen[4], exp[4];
    memset(seen, 0, sizeof seen);
    memset(exp, 0, sizeof exp);
    for (unsigned b = 0; b < 4; b++) seen[b].runs[0] = exp[b].runs[0] = 2;
    seen[3].runs[0] = 5; /* a copy of block 10 differs */
    struct dv_observed o;
    testimony_observe_standin(seen, exp, &g, src, 2, 1, &o);
    cr_expect_not(o.agrees);
    cr_expect_eq(o.first_difference, 10, "the grid block the copy stands for");
    seen[0].runs[0] = 5; /* and block 0 too: the least grid block is named */
    testimony_observe_standin(seen, exp, &g, src, 2, 1, &o);
    cr_expect_eq(o.first_difference, 0);
}
