/* test_reference.c -- the correctness gate catches wrong threads and names
 * the first one; the two paths never agree on any input. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/model/model/chain.h"
#include "kernels/model/model/reference.h"
#include "kernels/model/model/analysis.h"
#include "kernels/model/model/experiment.h"

static float ra[DV_INPUT_DISTINCT], rb[DV_INPUT_DISTINCT];

/* The outputs a correct one-branch kernel writes for path mask `mask` over
 * `n` threads: chain A's value where the bit is set, B's elsewhere (new
 * memory, free() it). */
static float *right_outputs(const uint32_t *mask, unsigned long long n) {
    float *out = malloc(sizeof(float) * n);
    cr_assert_not_null(out);
    for (unsigned long long i = 0; i < n; i++) {
        unsigned v = (unsigned)(i % DV_INPUT_DISTINCT);
        out[i] = ((mask[i >> 5] >> (i & 31)) & 1u) ? ra[v] : rb[v];
    }
    return out;
}

Test(reference, paths_differ_for_every_input) {
    char err[ERR_LEN];
    cr_assert_eq(reference_chains(4096, ra, rb, err), 0, "%s", err);
    for (unsigned v = 0; v < DV_INPUT_DISTINCT; v++) {
        cr_assert(ra[v] != rb[v]);
        cr_assert(isfinite(ra[v]) && isfinite(rb[v]));
    }
}

Test(reference, input_is_never_zero_nor_constant) {
    float in[3000];
    reference_input(in, 3000);
    unsigned distinct = 0;
    for (unsigned i = 0; i < 3000; i++) {
        cr_assert(in[i] > 0.0f);
        if (i < DV_INPUT_DISTINCT) distinct++;
    }
    cr_assert(in[0] != in[1]);
    cr_assert_eq(in[0], in[DV_INPUT_DISTINCT]);
    cr_assert_eq(distinct, DV_INPUT_DISTINCT);
}

Test(reference, gate_names_the_first_wrong_thread) {
    char err[ERR_LEN];
    const unsigned iters = 64;
    cr_assert_eq(reference_chains(iters, ra, rb, err), 0, "%s", err);
    struct dv_geometry g = {4, 256, 1};
    struct predicate p;
    cr_assert_eq(predicate_resolve("lane-parity", &p, NULL, err), 0);
    uint32_t *mask = analysis_mask_build(&p, &g, 0, err);
    cr_assert_not_null(mask);
    const unsigned long long n = dv_grid_threads(&g);
    float *out = right_outputs(mask, n);
    struct dv_row row;
    memset(&row, 0, sizeof(row));
    row.kernel = DV_KERNEL_BRANCH;
    row.mode = DV_LANE_PARITY;
    struct dv_check c;
    cr_assert_eq(reference_check(&row, &g, mask, ra, rb, iters, out, &c, err), 0);
    cr_assert(c.ok);
    cr_assert_eq(c.checked, n);
    cr_assert_eq(c.first_mismatch, -1);
    /* Send threads 300 and 700 down the wrong path. */
    out[300] = rb[300 % DV_INPUT_DISTINCT];
    out[700] = NAN;
    cr_assert_eq(reference_check(&row, &g, mask, ra, rb, iters, out, &c, err), 0);
    cr_assert_not(c.ok);
    cr_assert_eq(c.mismatches, 2);
    cr_assert_eq(c.first_mismatch, 300);
    cr_assert_eq(c.expected, ra[300 % DV_INPUT_DISTINCT]);
    free(out);
    free(mask);
    predicate_cleanup(&p);
}

/* What the per-iteration kernel computes for one thread: a side per phase. */
static float periter_value(int mode, unsigned tx, unsigned blk, float x, unsigned iters) {
    for (unsigned k = 0; k < iters; k++)
        x = dv_takes_path_a(mode, tx, blk, k) ? fmaf(x, DV_MUL_A, DV_ADD_A) : fmaf(x, DV_MUL_B, DV_ADD_B);
    return x;
}

Test(reference, per_iteration_rows_follow_the_phase) {
    /* Thread 0 with lane parity alternates A, B, A, ... from phase 0. */
    char err[ERR_LEN];
    const unsigned iters = 10;
    cr_assert_eq(reference_chains(iters, ra, rb, err), 0);
    struct dv_geometry g = {2, 64, 1};
    const unsigned long long n = dv_grid_threads(&g);
    float *out = malloc(sizeof(float) * n);
    for (unsigned long long i = 0; i < n; i++)
        out[i] = periter_value(DV_LANE_PARITY, (unsigned)(i % 64), 0, dv_input_value(i), iters);
    struct dv_row row;
    memset(&row, 0, sizeof(row));
    row.kernel = DV_KERNEL_PERITER;
    row.mode = DV_LANE_PARITY;
    struct dv_check c;
    cr_assert_eq(reference_check(&row, &g, NULL, ra, rb, iters, out, &c, err), 0, "%s", err);
    cr_assert(c.ok, "first %lld", c.first_mismatch);
    out[65] += 1.0f;
    cr_assert_eq(reference_check(&row, &g, NULL, ra, rb, iters, out, &c, err), 0);
    cr_assert_eq(c.first_mismatch, 65);
    free(out);
}

Test(reference, per_iteration_block_parity_follows_the_block) {
    /* Block parity reads blockIdx.x: block 0 starts on A, block 1 on B, so
     * the two blocks' expected values differ and a swap is caught. */
    char err[ERR_LEN];
    const unsigned iters = 9;
    cr_assert_eq(reference_chains(iters, ra, rb, err), 0);
    struct dv_geometry g = {3, 32, 1};
    const unsigned long long n = dv_grid_threads(&g);
    float *out = malloc(sizeof(float) * n);
    for (unsigned long long i = 0; i < n; i++)
        out[i] = periter_value(DV_BLOCK_PARITY, (unsigned)(i % 32), (unsigned)(i / 32), dv_input_value(i), iters);
    struct dv_row row;
    memset(&row, 0, sizeof(row));
    row.kernel = DV_KERNEL_PERITER;
    row.mode = DV_BLOCK_PARITY;
    struct dv_check c;
    cr_assert_eq(reference_check(&row, &g, NULL, ra, rb, iters, out, &c, err), 0, "%s", err);
    cr_assert(c.ok, "first %lld", c.first_mismatch);
    /* Thread 0 of block 1 given block 0's result for the same input value. */
    out[32] = periter_value(DV_BLOCK_PARITY, 0, 0, dv_input_value(32), iters);
    cr_assert_eq(reference_check(&row, &g, NULL, ra, rb, iters, out, &c, err), 0);
    cr_assert_eq(c.first_mismatch, 32);
    free(out);
}

/* The no-branch row is checked by the mask of its predicate (always-a): path
 * A everywhere, and a thread that ran path B is caught. */
Test(reference, no_branch_rows_are_path_a_everywhere) {
    char err[ERR_LEN];
    const unsigned iters = 16;
    cr_assert_eq(reference_chains(iters, ra, rb, err), 0, "%s", err);
    struct dv_geometry g = {3, 40, 1};
    struct dv_row row;
    memset(&row, 0, sizeof(row));
    snprintf(row.name, sizeof row.name, "no-branch");
    row.kernel = DV_KERNEL_NOBRANCH;
    row.mode = DV_ALWAYS_A;
    struct predicate p;
    cr_assert_eq(experiment_row_predicate(&row, &p, err), 0, "%s", err);
    uint32_t *mask = analysis_mask_build(&p, &g, 0, err);
    predicate_cleanup(&p);
    cr_assert_not_null(mask, "%s", err);
    const unsigned long long n = dv_grid_threads(&g);
    float *out = malloc(sizeof(float) * n);
    for (unsigned long long i = 0; i < n; i++) out[i] = ra[i % DV_INPUT_DISTINCT];
    struct dv_check c;
    cr_assert_eq(reference_check(&row, &g, mask, ra, rb, iters, out, &c, err), 0, "%s", err);
    cr_assert(c.ok);
    cr_assert_eq(c.checked, n);
    out[41] = rb[41 % DV_INPUT_DISTINCT];
    cr_assert_eq(reference_check(&row, &g, mask, ra, rb, iters, out, &c, err), 0);
    cr_assert_not(c.ok);
    cr_assert_eq(c.first_mismatch, 41);
    /* Without its mask a one-branch row is an error, not a crash. */
    cr_assert_eq(reference_check(&row, &g, NULL, ra, rb, iters, out, &c, err), -1);
    cr_assert(strstr(err, "needs its path mask") != NULL, "%s", err);
    free(out);
    free(mask);
}

/* The check reads a word of the mask at a time: on a grid whose blocks end
 * in partial warps and whose length is no multiple of 32, every element is
 * still checked once, a wrong element in the last, partial word is found,
 * and the first mismatch is the lowest wrong thread even when a later word
 * also differs. A value that differs only in its bits (-0.0 for 0.0) is
 * wrong too: the check compares bits. */
Test(reference, word_at_a_time_check_counts_every_element_of_partial_warps) {
    char err[ERR_LEN];
    const unsigned iters = 16;
    cr_assert_eq(reference_chains(iters, ra, rb, err), 0, "%s", err);
    struct dv_geometry g = {37, 48, 1}; /* 1776 threads: 55.5 words */
    struct predicate p;
    cr_assert_eq(predicate_resolve("(threadIdx.x % 3) == 0", &p, NULL, err), 0, "%s", err);
    uint32_t *mask = analysis_mask_build(&p, &g, 0, err);
    cr_assert_not_null(mask, "%s", err);
    const unsigned long long n = dv_grid_threads(&g);
    float *out = right_outputs(mask, n);
    struct dv_row row;
    memset(&row, 0, sizeof(row));
    row.kernel = DV_KERNEL_MASK;
    snprintf(row.name, sizeof row.name, "%s", p.name);
    struct dv_check c;
    cr_assert_eq(reference_check(&row, &g, mask, ra, rb, iters, out, &c, err), 0, "%s", err);
    cr_assert(c.ok);
    cr_assert_eq(c.checked, n);
    out[n - 1] = -out[n - 1]; /* in the last word, which holds 16 threads */
    memset(&c, 0, sizeof c);
    cr_assert_eq(reference_check(&row, &g, mask, ra, rb, iters, out, &c, err), 0, "%s", err);
    cr_assert_not(c.ok);
    cr_assert_eq(c.checked, n);
    cr_assert_eq(c.mismatches, 1);
    cr_assert_eq(c.first_mismatch, (long long)(n - 1));
    const float was = out[1030];
    out[1030] = (float)n; /* an earlier word (the one of threads 1024..1055) */
    out[1031] = out[1031] == 0.0f ? -0.0f : out[1031] * 2.0f;
    memset(&c, 0, sizeof c);
    cr_assert_eq(reference_check(&row, &g, mask, ra, rb, iters, out, &c, err), 0, "%s", err);
    cr_assert_eq(c.mismatches, 3);
    cr_assert_eq(c.first_mismatch, 1030);
    cr_assert_eq(c.got, (float)n);
    cr_assert_eq(c.expected, was);
    free(out);
    free(mask);
    predicate_cleanup(&p);
}
