/* test_analysis.c -- the warp analysis against counts derived by hand.
 *
 * Every expected number below is worked out in the comment beside it from
 * the rule "warps are 32 consecutive linear thread ids; a warp whose lanes
 * disagree is split and runs both paths".
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/model/model/analysis.h"
#include "kernels/model/model/predicate.h"

/* Analysis of `text` on `blocks` x (bx, by). */
static struct dv_row analyze(const char *text, unsigned blocks, unsigned bx, unsigned by) {
    struct predicate p;
    char err[ERR_LEN];
    cr_assert_eq(predicate_resolve(text, &p, NULL, err), 0, "resolve '%s': %s", text, err);
    struct dv_geometry g = {blocks, bx, by};
    uint32_t *mask = analysis_mask_build(&p, &g, 0, err);
    cr_assert_not_null(mask, "%s", err);
    struct dv_row row;
    memset(&row, 0, sizeof(row));
    analysis_count(mask, &g, &row);
    free(mask);
    predicate_cleanup(&p);
    return row;
}

Test(analysis, lesson_rows_split_counts) {
    /* 256 threads = 8 warps. & 1 and & 31 < 16 cut every warp; / 32 & 1 and
     * blockIdx.x & 1 are constant across a warp. */
    struct dv_row lp = analyze("lane-parity", 4096, 256, 1);
    struct dv_row lh = analyze("lane-half", 4096, 256, 1);
    struct dv_row wp = analyze("warp-parity", 4096, 256, 1);
    struct dv_row bp = analyze("block-parity", 4096, 256, 1);
    cr_assert_eq(lp.warps_per_block, 8);
    cr_assert_eq(lp.warps_split.max, 8);
    cr_assert_eq(lp.warps_split.min, 8);
    cr_assert_eq(lh.warps_split.max, 8);
    cr_assert_eq(wp.warps_split.max, 0);
    cr_assert_eq(bp.warps_split.max, 0);
    /* 128 threads on path A per block for each (block parity: 256 or 0,
     * 128 on average over an even grid). */
    cr_assert_eq(lp.threads_on_a.min, 128);
    cr_assert_eq(lh.threads_on_a.min, 128);
    cr_assert_eq(wp.threads_on_a.min, 128);
    cr_assert_eq(bp.threads_on_a.min, 0);
    cr_assert_eq(bp.threads_on_a.max, 256);
    cr_assert_float_eq(bp.threads_on_a.per_block, 128.0, 1e-12);
    cr_assert_eq(bp.threads_on_a.total, 4096ull * 128);
    /* Path-runs: split warps run 2, uniform ones 1. */
    cr_assert_eq(lp.path_runs.min, 16);
    cr_assert_eq(wp.path_runs.min, 8);
    cr_assert_eq(bp.path_runs.max, 8);
}

Test(analysis, first_16_is_one_split_warp_and_less_work) {
    /* Warp 0 holds threads 0..31: 16 on A, 16 on B -> split. Warps 1..7 all
     * B. 9 path-runs against 8. */
    struct dv_row f = analyze("first-16", 4096, 256, 1);
    cr_assert_eq(f.warps_split.max, 1);
    cr_assert_eq(f.threads_on_a.max, 16);
    cr_assert_eq(f.path_runs.max, 9);
}

Test(analysis, partial_warp_48_threads) {
    /* 48 threads = warp 0 (32 lanes) + a partial warp of 16 lanes. */
    struct dv_row a = analyze("threadIdx.x < 40", 10, 48, 1);
    /* warp 0 all on A (0..31 < 40); warp 1 lanes 32..47: 32..39 A, 40..47 B. */
    cr_assert_eq(a.warps_per_block, 2);
    cr_assert_eq(a.warps_split.max, 1);
    cr_assert_eq(a.threads_on_a.max, 40);
    cr_assert_eq(a.path_runs.max, 3);
    /* threadIdx.x < 48 covers every lane present: the partial warp is not split. */
    struct dv_row b = analyze("threadIdx.x < 48", 10, 48, 1);
    cr_assert_eq(b.warps_split.max, 0);
    cr_assert_eq(b.path_runs.max, 2);
    /* Lane parity over 48 threads: both warps split (the partial one too). */
    struct dv_row c = analyze("lane-parity", 3, 48, 1);
    cr_assert_eq(c.warps_split.max, 2);
    cr_assert_eq(c.threads_on_a.max, 24);
    /* Unaligned blocks: block b starts at bit 48 b, not on a word boundary.
     * blockIdx.x & 1 with 48-thread blocks: blocks 0, 2 all on A. */
    struct dv_row d = analyze("block-parity", 3, 48, 1);
    cr_assert_eq(d.warps_split.max, 0);
    cr_assert_eq(d.threads_on_a.total, 96);
}

Test(analysis, two_d_blocks) {
    /* 32x8: linear id = x + 32 y, so row y is warp y: a condition on
     * threadIdx.y is warp-uniform. */
    struct dv_row a = analyze("threadIdx.y & 1", 8, 32, 8);
    cr_assert_eq(a.warps_per_block, 8);
    cr_assert_eq(a.warps_split.max, 0);
    cr_assert_eq(a.threads_on_a.max, 128);
    /* 16x16: a warp holds rows 2w and 2w+1, one odd and one even, so
     * threadIdx.y & 1 splits every warp. */
    struct dv_row b = analyze("threadIdx.y & 1", 8, 16, 16);
    cr_assert_eq(b.warps_per_block, 8);
    cr_assert_eq(b.warps_split.min, 8);
    cr_assert_eq(b.threads_on_a.max, 128);
    /* The same on x in 32x8 splits all 8 warps. */
    struct dv_row c = analyze("threadIdx.x & 1", 8, 32, 8);
    cr_assert_eq(c.warps_split.min, 8);
}

struct hand_case {
    const char *expr;
    unsigned bx, by;
    unsigned split, on_a, runs; /* per block, same in every block */
};

Test(analysis, a_dozen_predicates_by_hand) {
    static const struct hand_case cases[] = {
        /* 256 threads, 8 warps unless stated. */
        {"threadIdx.x < 32", 256, 1, 0, 32, 8},          /* exactly warp 0               */
        {"threadIdx.x < 16", 256, 1, 1, 16, 9},          /* half of warp 0               */
        {"threadIdx.x >= 100", 256, 1, 1, 156, 9},       /* warp 3 (96..127) is cut at 100 */
        {"lane < 1", 256, 1, 8, 8, 16},                  /* one lane of every warp       */
        {"warp == 3", 256, 1, 0, 32, 8},                 /* one whole warp               */
        {"warp % 3 == 0", 256, 1, 0, 96, 8},             /* warps 0, 3, 6                */
        {"threadIdx.x % 64 < 32", 256, 1, 0, 128, 8},    /* even warps                   */
        {"threadIdx.x % 3 == 0", 96, 1, 3, 32, 6},       /* 0,3,..,93: 32 threads, all 3 warps cut */
        {"(threadIdx.x & 31) < 16", 64, 1, 2, 32, 4},    /* lane half in both warps      */
        {"1", 256, 1, 0, 256, 8},                        /* no split                     */
        {"0", 256, 1, 0, 0, 8},                          /* everyone on B: no split      */
        {"threadIdx.y < 2", 32, 8, 0, 64, 8},            /* rows 0-1 = warps 0-1         */
        {"threadIdx.y < 3", 16, 16, 1, 48, 9},           /* warp 1 = rows 2 (A), 3 (B)   */
        {"threadIdx.x < 8", 16, 16, 8, 128, 16},         /* every row cut at 8           */
        {"threadIdx.x == blockDim.x - 1", 48, 1, 1, 1, 3}, /* last lane of partial warp 1 */
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const struct hand_case *c = &cases[i];
        struct dv_row r = analyze(c->expr, 4, c->bx, c->by);
        cr_expect_eq(r.warps_split.max, c->split, "%s: split %u, want %u", c->expr, r.warps_split.max, c->split);
        cr_expect_eq(r.warps_split.min, c->split, "%s: split min", c->expr);
        cr_expect_eq(r.threads_on_a.max, c->on_a, "%s: on A %u, want %u", c->expr, r.threads_on_a.max, c->on_a);
        cr_expect_eq(r.path_runs.max, c->runs, "%s: runs %u, want %u", c->expr, r.path_runs.max, c->runs);
    }
}

Test(analysis, block_dependent_predicate_reports_min_max_total) {
    /* blockIdx.x < 3 over 8 blocks: 3 blocks all A, 5 all B. */
    struct dv_row r = analyze("blockIdx.x < 3", 8, 256, 1);
    cr_assert_eq(r.threads_on_a.min, 0);
    cr_assert_eq(r.threads_on_a.max, 256);
    cr_assert_eq(r.threads_on_a.total, 3 * 256);
    /* (threadIdx.x + blockIdx.x) & 1: splits every warp of every block. */
    struct dv_row s = analyze("(threadIdx.x + blockIdx.x) & 1", 5, 64, 1);
    cr_assert_eq(s.warps_split.total, 10);
}

Test(analysis, builtins_agree_with_their_expressions) {
    size_t n;
    const struct predicate_builtin *b = predicate_builtins(&n);
    const unsigned shapes[][3] = {{6, 256, 1}, {5, 48, 1}, {4, 32, 8}, {3, 16, 16}, {7, 1024, 1}};
    for (size_t i = 0; i < n; i++) {
        struct predicate pb, pe;
        char err[ERR_LEN];
        cr_assert_eq(predicate_resolve(b[i].name, &pb, NULL, err), 0);
        cr_assert_eq(predicate_resolve(b[i].expr, &pe, NULL, err), 0, "%s: %s", b[i].expr, err);
        cr_assert_null(pb.expr);
        cr_assert_not_null(pe.expr);
        for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
            struct dv_geometry g = {shapes[s][0], shapes[s][1], shapes[s][2]};
            uint32_t *mb = analysis_mask_build(&pb, &g, 0, err);
            uint32_t *me = analysis_mask_build(&pe, &g, 0, err);
            cr_assert(mb && me);
            cr_expect_eq(memcmp(mb, me, analysis_mask_words(&g) * 4), 0, "%s differs from '%s' on %ux%ux%u",
                         b[i].name, b[i].expr, shapes[s][0], shapes[s][1], shapes[s][2]);
            free(mb);
            free(me);
        }
        predicate_cleanup(&pb);
        predicate_cleanup(&pe);
    }
}

Test(analysis, evaluation_error_names_the_thread) {
    struct predicate p;
    char err[ERR_LEN];
    cr_assert_eq(predicate_resolve("100 / (threadIdx.x - 5)", &p, NULL, err), 0);
    struct dv_geometry g = {1, 32, 1};
    uint32_t *m = analysis_mask_build(&p, &g, 0, err);
    cr_assert_null(m);
    cr_assert(strstr(err, "thread (5, 0) of block 0") != NULL, "%s", err);
    cr_assert(strstr(err, "division by zero") != NULL, "%s", err);
    predicate_cleanup(&p);
}

/* analysis_row() counts a blockIdx.x-free predicate on one block and
 * multiplies out: every field must equal counting the whole grid's mask, on
 * shapes with partial warps, unaligned blocks, 2-D blocks and one block. */
Test(analysis, one_block_multiplied_out_equals_the_whole_grid) {
    static const char *const preds[] = {
        "lane-parity", "lane-half", "warp-parity", "always-a", "first-16",
        "threadIdx.x % 48 < 24", "(threadIdx.y & 1) == 0", "lane < 3 || warp == 2",
        "threadIdx.x * 7 % 5 == 1", "threadIdx.x + threadIdx.y * blockDim.x > 40",
        "block-parity", "blockIdx.x % 3 == threadIdx.x % 2", /* these two read blockIdx.x */
    };
    static const unsigned shapes[][3] = {
        {1, 32, 1}, {2, 32, 1}, {3, 33, 1}, {7, 31, 1}, {64, 256, 1}, {4096, 256, 1}, {5, 1, 1},
        {9, 7, 5}, {16, 32, 8}, {11, 48, 3}, {3, 1024, 1}, {257, 100, 1}, {2, 1, 1024},
    };
    unsigned checked = 0;
    for (size_t i = 0; i < sizeof preds / sizeof preds[0]; i++) {
        struct predicate p;
        char err[ERR_LEN];
        cr_assert_eq(predicate_resolve(preds[i], &p, NULL, err), 0, "resolve '%s': %s", preds[i], err);
        for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
            struct dv_geometry g = {shapes[k][0], shapes[k][1], shapes[k][2]};
            uint32_t *mask = analysis_mask_build(&p, &g, 0, err);
            cr_assert_not_null(mask, "%s", err);
            struct dv_row whole, fast;
            memset(&whole, 0, sizeof whole);
            memset(&fast, 0, sizeof fast);
            analysis_count(mask, &g, &whole);
            free(mask);
            cr_assert_eq(analysis_row(&p, &g, 0, &fast, NULL, err), 0, "%s", err);
            cr_assert_eq(memcmp(&whole, &fast, sizeof whole), 0, "'%s' on %u x (%u, %u): the rows differ", preds[i],
                         g.blocks, g.block_x, g.block_y);
            checked++;
        }
        predicate_cleanup(&p);
    }
    cr_assert_eq(checked, 12 * 13);
}

/* An evaluation error is reported the same way on either path. */
Test(analysis, one_block_path_reports_the_failing_thread) {
    struct predicate p;
    char err[ERR_LEN];
    cr_assert_eq(predicate_resolve("10 / (threadIdx.x - 5)", &p, NULL, err), 0, "%s", err);
    struct dv_geometry g = {4096, 256, 1};
    struct dv_row row;
    cr_assert_eq(analysis_row(&p, &g, 0, &row, NULL, err), -1);
    cr_assert(strstr(err, "thread (5, 0) of block 0"), "%s", err);
    predicate_cleanup(&p);
}

/* Where an evaluation failed comes back as values: the column of the
 * operator and the caret under it, for a predicate analysed on one block
 * and for one analysed on every block; a row that analyses has none. */
Test(analysis, an_evaluation_error_carries_its_column_and_caret) {
    static const struct {
        const char *text;
        int column;
        const char *caret;
    } cases[] = {
        {"  10 / (threadIdx.x - 5)", 4, "10 / (threadIdx.x - 5)\n   ^"},
        {"threadIdx.x + 1 % (blockIdx.x - 2)", 17, "threadIdx.x + 1 % (blockIdx.x - 2)\n                ^"},
        {"lane << (warp - 1)", 6, "lane << (warp - 1)\n     ^"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct predicate p;
        struct predicate_fault f = {-1, "unset"};
        char err[ERR_LEN];
        cr_assert_eq(predicate_resolve(cases[i].text, &p, &f, err), 0, "%s", err);
        cr_expect_eq(f.column, 0, "a predicate that parses has no fault");
        struct dv_geometry g = {8, 64, 1};
        struct dv_row row;
        cr_assert_eq(analysis_row(&p, &g, 0, &row, &f, err), -1, "%s", cases[i].text);
        cr_expect_eq(f.column, cases[i].column, "%s: %s", cases[i].text, err);
        cr_expect_str_eq(f.caret, cases[i].caret, "%s", cases[i].text);
        char want[32];
        snprintf(want, sizeof want, "column %d: ", cases[i].column);
        cr_expect(strstr(err, want), "the message names the same column: %s", err);
        predicate_cleanup(&p);
    }
    struct predicate p;
    struct predicate_fault f = {-1, "unset"};
    char err[ERR_LEN];
    cr_assert_eq(predicate_resolve("threadIdx.x / 2 & 1", &p, NULL, err), 0, "%s", err);
    struct dv_geometry g = {8, 64, 1};
    struct dv_row row;
    cr_assert_eq(analysis_row(&p, &g, 0, &row, &f, err), 0, "%s", err);
    cr_expect_eq(f.column, 0);
    cr_expect_str_eq(f.caret, "");
    predicate_cleanup(&p);
}

/* The lane map is block 0's warps of the very mask the counts come from: a
 * word per warp, bit l lane l on path A, a partial warp's missing lanes
 * clear; block 0's even where other blocks differ; all 32 warps of a
 * 1024-thread block. */
Test(analysis, the_lane_map_is_block_0s_mask) {
    struct dv_row r = analyze("threadIdx.x < 40", 3, 48, 1);
    cr_assert_eq(r.lanes_warps, 2);
    cr_expect_eq(r.lanes_block0[0], 0xFFFFFFFFu);
    cr_expect_eq(r.lanes_block0[1], 0x000000FFu, "lanes 0-7 of warp 1 on A, 8-15 on B, 16-31 absent");
    r = analyze("blockIdx.x == 1 || lane == 3", 4, 64, 1);
    cr_assert_eq(r.lanes_warps, 2);
    cr_expect_eq(r.lanes_block0[0], 1u << 3, "block 0's, not block 1's (all on A)");
    cr_expect_eq(r.lanes_block0[1], 1u << 3);
    r = analyze("(threadIdx.y & 1) == 0", 2, 32, 32);
    cr_assert_eq(r.lanes_warps, 32);
    for (unsigned w = 0; w < 32; w++) cr_expect_eq(r.lanes_block0[w], w & 1 ? 0u : 0xFFFFFFFFu, "warp %u", w);
    /* The same map through analysis_row() (one block, multiplied out). */
    struct predicate p;
    char err[ERR_LEN];
    cr_assert_eq(predicate_resolve("threadIdx.x % 3 == 0", &p, NULL, err), 0, "%s", err);
    struct dv_geometry g = {4096, 100, 1};
    struct dv_row row;
    memset(&row, 0, sizeof row);
    cr_assert_eq(analysis_row(&p, &g, 0, &row, NULL, err), 0, "%s", err);
    cr_assert_eq(row.lanes_warps, 4);
    for (unsigned w = 0; w < 4; w++) {
        uint32_t want = 0;
        for (unsigned l = 0; l < 32 && w * 32 + l < 100; l++)
            if ((w * 32 + l) % 3 == 0) want |= 1u << l;
        cr_expect_eq(row.lanes_block0[w], want, "warp %u", w);
    }
    predicate_cleanup(&p);
}

/* A mask of `text` at `phase` on `g`, built by analysis_mask_build(). */
static uint32_t *mask_of(const char *text, const struct dv_geometry *g, unsigned phase) {
    struct predicate p;
    char err[ERR_LEN];
    cr_assert_eq(predicate_resolve(text, &p, NULL, err), 0, "resolve '%s': %s", text, err);
    uint32_t *m = analysis_mask_build(&p, g, phase, err);
    cr_assert_not_null(m, "%s", err);
    predicate_cleanup(&p);
    return m;
}

/* The memo of block-dependent masks: a second build of the same predicate,
 * geometry and phase is a hit that hands out a copy equal to a fresh
 * evaluation's (made with the memo off); a different expression, phase or
 * geometry is a different mask, never a hit; a predicate that does not read
 * blockIdx.x does not go through it; a byte limit that holds one mask
 * evicts the older. */
Test(analysis, the_memo_gives_what_a_new_evaluation_gives) {
    const struct dv_geometry g = {300, 96, 1}, g2 = {300, 32, 3};
    analysis_memo_limit(0);
    uint32_t *fresh = mask_of("(blockIdx.x * 7 + threadIdx.x) % 3 == 0", &g, 0);
    uint32_t *fresh_bp3 = mask_of("block-parity", &g, 3);
    analysis_memo_limit(ANALYSIS_MEMO_DEFAULT_BYTES);
    const size_t words = analysis_mask_words(&g);
    struct analysis_memo_stats s0, s1;
    analysis_memo_get_stats(&s0);
    uint32_t *a = mask_of("(blockIdx.x * 7 + threadIdx.x) % 3 == 0", &g, 0);
    uint32_t *b = mask_of("(blockIdx.x * 7 + threadIdx.x) % 3 == 0", &g, 0);
    analysis_memo_get_stats(&s1);
    cr_assert_eq(s1.misses - s0.misses, 1);
    cr_assert_eq(s1.hits - s0.hits, 1);
    cr_assert(a != b, "a copy, owned by the caller");
    cr_assert_eq(memcmp(a, fresh, words * 4), 0);
    cr_assert_eq(memcmp(b, fresh, words * 4), 0);
    b[0] ^= 1u; /* a caller's copy is its own */
    uint32_t *c = mask_of("(blockIdx.x * 7 + threadIdx.x) % 3 == 0", &g, 0);
    cr_assert_eq(memcmp(c, fresh, words * 4), 0);

    /* Other expressions, phases, geometries: their own masks. */
    uint32_t *d = mask_of("(blockIdx.x * 7 + threadIdx.x) % 3 == 1", &g, 0);
    cr_assert_neq(memcmp(d, fresh, words * 4), 0);
    uint32_t *bp0 = mask_of("block-parity", &g, 0), *bp3 = mask_of("block-parity", &g, 3);
    cr_assert_eq(memcmp(bp3, fresh_bp3, words * 4), 0);
    cr_assert_neq(memcmp(bp0, bp3, words * 4), 0, "block parity flips with the phase");
    uint32_t *e = mask_of("(blockIdx.x * 7 + threadIdx.x) % 3 == 0", &g2, 0);
    struct dv_row r1, r2;
    memset(&r1, 0, sizeof r1);
    memset(&r2, 0, sizeof r2);
    analysis_count(e, &g2, &r2);
    analysis_count(fresh, &g, &r1);
    cr_assert_eq(r2.threads_per_block, 96);
    cr_assert_eq(r2.threads_on_a.total, r1.threads_on_a.total, "the same threads, the linear id is the same");
    analysis_memo_get_stats(&s0);
    uint32_t *u = mask_of("lane-parity", &g, 0);
    analysis_memo_get_stats(&s1);
    cr_assert_eq(s1.hits + s1.misses, s0.hits + s0.misses, "a block-independent mask is one block copied");

    /* Room for one mask: the second evicts the first, which is built again. */
    analysis_memo_limit(words * 4);
    analysis_memo_get_stats(&s0);
    cr_assert_leq(s0.bytes, words * 4);
    free(mask_of("(blockIdx.x & 5) == 1", &g, 0));
    free(mask_of("(blockIdx.x & 6) == 2", &g, 0));
    uint32_t *again = mask_of("(blockIdx.x & 5) == 1", &g, 0);
    analysis_memo_get_stats(&s1);
    cr_assert_eq(s1.hits, s0.hits);
    cr_assert_geq(s1.evictions - s0.evictions, 2);
    cr_assert_leq(s1.bytes, words * 4);
    analysis_memo_limit(0);
    uint32_t *again_fresh = mask_of("(blockIdx.x & 5) == 1", &g, 0);
    cr_assert_eq(memcmp(again, again_fresh, words * 4), 0);
    analysis_memo_limit(ANALYSIS_MEMO_DEFAULT_BYTES);
    uint32_t *all[] = {fresh, fresh_bp3, a, b, c, d, bp0, bp3, e, u, again, again_fresh};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) free(all[i]);
}

/* A failure is not kept: the second build of a predicate that fails in
 * block 7 fails again and names the same thread. */
Test(analysis, the_memo_keeps_no_failure) {
    const struct dv_geometry g = {16, 64, 1};
    struct predicate p;
    char err[ERR_LEN], err2[ERR_LEN];
    cr_assert_eq(predicate_resolve("threadIdx.x / (blockIdx.x - 7) > 0", &p, NULL, err), 0, "%s", err);
    cr_assert_null(analysis_mask_build(&p, &g, 0, err));
    cr_assert_null(analysis_mask_build(&p, &g, 0, err2));
    cr_assert_str_eq(err, err2);
    cr_assert(strstr(err, "thread (0, 0) of block 7"), "%s", err);
    predicate_cleanup(&p);
}

/* The memo under several threads at once (the HTTP front plans on its
 * pool's threads): four threads build three block-dependent masks over and
 * over, with room for two so that they evict each other's, and every mask
 * each thread gets is the fresh evaluation's. */

static const char *const memo_texts[3] = {"(blockIdx.x & 3) == (threadIdx.x & 3)", "(blockIdx.x % 5) < 2",
                                          "block-parity"};
static const struct dv_geometry memo_g = {200, 64, 2};
static uint32_t *memo_fresh[3];

static void *memo_worker(void *arg) {
    const unsigned seed = (unsigned)(uintptr_t)arg;
    const size_t words = analysis_mask_words(&memo_g);
    for (unsigned k = 0; k < 60; k++) {
        const unsigned i = (k * 7 + seed) % 3;
        struct predicate p;
        char err[ERR_LEN];
        if (predicate_resolve(memo_texts[i], &p, NULL, err) != 0) return (void *)"resolve";
        uint32_t *m = analysis_mask_build(&p, &memo_g, 0, err);
        predicate_cleanup(&p);
        const int same = m && memcmp(m, memo_fresh[i], words * 4) == 0;
        free(m);
        if (!same) return (void *)memo_texts[i];
    }
    return NULL;
}

Test(analysis, the_memo_under_four_threads_gives_every_thread_the_fresh_mask) {
    const size_t words = analysis_mask_words(&memo_g);
    analysis_memo_limit(0);
    for (unsigned i = 0; i < 3; i++) memo_fresh[i] = mask_of(memo_texts[i], &memo_g, 0);
    analysis_memo_limit(2 * words * 4);
    struct analysis_memo_stats s0, s1;
    analysis_memo_get_stats(&s0);
    pthread_t t[4];
    for (unsigned i = 0; i < 4; i++) cr_assert_eq(pthread_create(&t[i], NULL, memo_worker, (void *)(uintptr_t)i), 0);
    for (unsigned i = 0; i < 4; i++) {
        void *bad = NULL;
        pthread_join(t[i], &bad);
        cr_assert_null(bad, "thread %u got a wrong mask of %s", i, bad ? (const char *)bad : "");
    }
    analysis_memo_get_stats(&s1);
    cr_assert_eq((s1.hits - s0.hits) + (s1.misses - s0.misses), 240);
    cr_assert_gt(s1.hits - s0.hits, 0);
    cr_assert_gt(s1.evictions - s0.evictions, 0);
    cr_assert_leq(s1.bytes, 2 * words * 4);
    analysis_memo_limit(ANALYSIS_MEMO_DEFAULT_BYTES);
    for (unsigned i = 0; i < 3; i++) free(memo_fresh[i]);
}
