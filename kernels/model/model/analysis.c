/* analysis.c -- warps, split warps, threads on path A and path-runs from a
 * path mask, and the path-run model's predicted ratio.
 *
 * The mask has one bit per thread of the grid in launch order (block-major,
 * then linear thread id), so a warp is 32 consecutive bits starting at a
 * multiple of 32 within its block; a block whose size is not a multiple of 32
 * ends in a partial warp whose missing lanes simply do not exist (they are
 * neither on A nor on B, and a partial warp whose present lanes agree is not
 * split). Blocks need not start on a word boundary: bits are read with an
 * unaligned 64-bit window.
 *
 * analysis_row() is what a table row costs: a predicate that cannot read
 * blockIdx.x gives every block the same bits, so it is counted on a grid of
 * one block and multiplied out (every per-block count is then the same: min
 * = max = the one block's value, total = value x blocks), which is exactly
 * what counting every block would give, at the cost of one block shape.
 *
 * The same count copies block 0's warps out of the mask as the row's lane
 * map (one 32-bit word per warp), so the picture a reader sees of the block
 * is the very mask the numbers come from, not a second evaluation of the
 * predicate.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/model/model/analysis.h"
#include "kernels/base/lru.h"
#include "kernels/model/model/expr.h"

size_t analysis_mask_words(const struct dv_geometry *g) {
    return (size_t)((dv_grid_threads(g) + 31) / 32);
}

/* ---- the memo of block-dependent masks ----------------------------------------
 *
 * A predicate that reads blockIdx.x is evaluated for every thread of the
 * grid (a million for the lesson's grid), and the plan, the profile plan and
 * the session's mask each ask for the same mask of the same row, job after
 * job. A mask is a pure function of the predicate (its expression, or the
 * built-in mode), the geometry and the phase, so the memo keeps the last
 * few by that key and hands out copies: what a caller gets is the very mask
 * a new evaluation would build, and it owns it as before. Least recently
 * used first out, at most MEMO_ENTRIES masks and the limit's bytes in all
 * (kernels/base/lru.h). Failures are not kept (each asks again, and says
 * again which thread failed).
 *
 * The memo is one object for the process, with its own lock (the HTTP
 * front plans on several threads), not one its callers hold: its users are
 * the planner (on the HTTP pool's threads and in the worker), the worker's
 * session masks, the testimony and the profile plan, in two processes, and
 * a memo they held would be a parameter of plan_report(), of the session's
 * mask callback, of profile_plan() and of the testimony's model, through
 * every caller in server/; since a kept mask is the one a new evaluation
 * builds, sharing it across the process changes no answer, only the cost.
 * Its lru is made on first use; without the memory for it nothing is kept. */

#define MEMO_ENTRIES 16

static struct {
    pthread_mutex_t lock;
    struct lru *lru;  /* NULL until first used */
    size_t limit;     /* its byte bound */
} memo = {PTHREAD_MUTEX_INITIALIZER, NULL, ANALYSIS_MEMO_DEFAULT_BYTES};

/* The memo's lru, made on first use; NULL when there is no memory for it.
 * Lock held. */
static struct lru *memo_lru(void) {
    if (!memo.lru) memo.lru = lru_create(MEMO_ENTRIES, memo.limit, free);
    return memo.lru;
}

/* The memo's key of (p, g, phase): what the evaluation reads and nothing
 * else. A new string (free() it), or NULL when out of memory. */
static char *memo_key(const struct predicate *p, const struct dv_geometry *g, unsigned phase) {
    const char *src = p->expr ? expr_source(p->expr) : "";
    const size_t len = strlen(src) + 96;
    char *k = malloc(len);
    if (k) snprintf(k, len, "%u %u %u %u %d %s", g->blocks, g->block_x, g->block_y, phase, p->expr ? -1 : (int)p->mode, src);
    return k;
}

/* A copy of the memo's mask of `words` words for `key`, or NULL (not kept,
 * or out of memory). */
static uint32_t *memo_find(const char *key, size_t words) {
    uint32_t *copy = NULL;
    pthread_mutex_lock(&memo.lock);
    struct lru *c = memo_lru();
    const uint32_t *kept = c ? lru_get(c, key, strlen(key)) : NULL;
    if (kept && (copy = malloc(words * sizeof(uint32_t)))) memcpy(copy, kept, words * sizeof(uint32_t));
    pthread_mutex_unlock(&memo.lock);
    return copy;
}

/* Keeps a copy of `mask` under `key`, when it fits. */
static void memo_put(const char *key, const uint32_t *mask, size_t words) {
    const size_t bytes = words * sizeof(uint32_t);
    uint32_t *copy = malloc(bytes);
    if (!copy) return;
    memcpy(copy, mask, bytes);
    pthread_mutex_lock(&memo.lock);
    struct lru *c = memo_lru();
    if (c) lru_put(c, key, strlen(key), copy, bytes); /* takes the copy, kept or not */
    else free(copy);
    pthread_mutex_unlock(&memo.lock);
}

void analysis_memo_limit(size_t bytes) {
    pthread_mutex_lock(&memo.lock);
    memo.limit = bytes;
    if (memo.lru) lru_set_limits(memo.lru, MEMO_ENTRIES, bytes);
    pthread_mutex_unlock(&memo.lock);
}

void analysis_memo_get_stats(struct analysis_memo_stats *out) {
    struct lru_stats s;
    memset(&s, 0, sizeof s);
    pthread_mutex_lock(&memo.lock);
    if (memo.lru) lru_get_stats(memo.lru, &s);
    out->limit = memo.limit;
    pthread_mutex_unlock(&memo.lock);
    out->hits = s.hits;
    out->misses = s.misses;
    out->evictions = s.evictions;
    out->bytes = s.bytes;
}

/* ---- building a mask ------------------------------------------------------------ */

/* Evaluates `p` for the threads of blocks [0, eval_blocks) of `g` into
 * `mask` (zeroed), one bit per thread in launch order: the bits go out a
 * word at a time. Returns 0, or -1 with `err` naming the thread. */
static int mask_eval(const struct predicate *p, const struct dv_geometry *g, unsigned eval_blocks, unsigned phase,
                     uint32_t *mask, struct predicate_fault *fault, char *err) {
    struct predicate_thread t = {0, 0, 0, g->block_x, g->block_y};
    char why[ERR_LEN];
    uint32_t word = 0;
    unsigned bit = 0;
    size_t w = 0;
    for (unsigned b = 0; b < eval_blocks; b++) {
        t.bx = b;
        for (unsigned y = 0; y < g->block_y; y++) {
            t.ty = y;
            for (unsigned x = 0; x < g->block_x; x++) {
                t.tx = x;
                int a = predicate_eval(p, &t, phase, fault, why);
                if (a < 0) {
                    dv_seterr(err, "predicate fails for thread (%u, %u) of block %u: %s", x, y, b, why);
                    return -1;
                }
                word |= (uint32_t)(a != 0) << bit;
                if (++bit == 32) {
                    mask[w++] = word;
                    word = 0;
                    bit = 0;
                }
            }
        }
    }
    if (bit) mask[w] = word;
    return 0;
}

/* analysis_mask_build(), with where an evaluation failed into `fault`
 * (may be NULL). A block-dependent mask comes from the memo when it holds
 * it, and goes into it when built. */
static uint32_t *mask_build(const struct predicate *p, const struct dv_geometry *g, unsigned phase,
                            struct predicate_fault *fault, char *err) {
    size_t words = analysis_mask_words(g);
    const unsigned tpb = g->block_x * g->block_y;
    /* A predicate that cannot see blockIdx.x gives every block the same
     * bits: evaluate block 0 and copy (bit by bit, blocks may be unaligned). */
    const unsigned eval_blocks = predicate_reads_block(p) ? g->blocks : 1;
    char *key = eval_blocks > 1 ? memo_key(p, g, phase) : NULL;
    uint32_t *mask = key ? memo_find(key, words ? words : 1) : NULL;
    if (mask) {
        free(key);
        return mask;
    }
    mask = calloc(words ? words : 1, sizeof(*mask));
    if (!mask) {
        dv_seterr(err, "path mask: out of memory for %zu words", words);
        free(key);
        return NULL;
    }
    if (mask_eval(p, g, eval_blocks, phase, mask, fault, err) != 0) {
        free(mask);
        free(key);
        return NULL;
    }
    if (eval_blocks == 1 && g->blocks > 1) {
        if (tpb % 32 == 0) {
            size_t wpb = tpb / 32;
            for (unsigned b = 1; b < g->blocks; b++) memcpy(mask + (size_t)b * wpb, mask, wpb * sizeof(*mask));
        } else {
            for (unsigned b = 1; b < g->blocks; b++)
                for (unsigned i = 0; i < tpb; i++)
                    if ((mask[i >> 5] >> (i & 31)) & 1u) {
                        unsigned long long gi = (unsigned long long)b * tpb + i;
                        mask[gi >> 5] |= 1u << (gi & 31);
                    }
        }
    }
    if (key) memo_put(key, mask, words ? words : 1);
    free(key);
    return mask;
}

uint32_t *analysis_mask_build(const struct predicate *p, const struct dv_geometry *g,
                              unsigned phase, char *err) {
    return mask_build(p, g, phase, NULL, err);
}

/* `count` (<= 32) bits of `mask` starting at bit `start`. */
static uint32_t mask_bits(const uint32_t *mask, size_t words, unsigned long long start, unsigned count) {
    size_t w = (size_t)(start >> 5);
    unsigned sh = (unsigned)(start & 31);
    uint64_t window = mask[w];
    if (w + 1 < words) window |= (uint64_t)mask[w + 1] << 32;
    window >>= sh;
    return (uint32_t)(count >= 32 ? window : window & ((1ull << count) - 1));
}

void analysis_count(const uint32_t *mask, const struct dv_geometry *g, struct dv_row *row) {
    const unsigned tpb = g->block_x * g->block_y;
    const unsigned wpb = (tpb + 31) / 32;
    const size_t words = analysis_mask_words(g);
    row->threads_per_block = tpb;
    row->warps_per_block = wpb;
    memset(&row->warps_split, 0, sizeof row->warps_split);
    memset(&row->threads_on_a, 0, sizeof row->threads_on_a);
    memset(&row->path_runs, 0, sizeof row->path_runs);
    memset(row->lanes_block0, 0, sizeof row->lanes_block0);
    const unsigned max_warps = sizeof row->lanes_block0 / sizeof row->lanes_block0[0];
    row->lanes_warps = g->blocks > 0 && wpb <= max_warps ? wpb : 0;
    for (unsigned b = 0; b < g->blocks; b++) {
        unsigned split = 0, on_a = 0, runs = 0;
        for (unsigned w = 0; w < wpb; w++) {
            const unsigned lanes = dv_warp_lanes(tpb, w);
            uint32_t bits = mask_bits(mask, words, (unsigned long long)b * tpb + w * 32ull, lanes);
            if (b == 0 && w < row->lanes_warps) row->lanes_block0[w] = bits;
            unsigned n = (unsigned)__builtin_popcount(bits);
            on_a += n;
            if (n != 0 && n != lanes) {
                split++;
                runs += 2; /* a split warp runs both paths */
            } else {
                runs += 1; /* a warp whose lanes agree runs one */
            }
        }
        dv_count_add(&row->warps_split, split, b == 0);
        dv_count_add(&row->threads_on_a, on_a, b == 0);
        dv_count_add(&row->path_runs, runs, b == 0);
    }
    dv_count_finish(&row->warps_split, g->blocks);
    dv_count_finish(&row->threads_on_a, g->blocks);
    dv_count_finish(&row->path_runs, g->blocks);
}

/* A one-block count `c` as the count over `blocks` identical blocks. */
static void count_scale(struct dv_count *c, unsigned blocks) {
    c->total = (unsigned long long)c->min * blocks;
    dv_count_finish(c, blocks);
}

int analysis_row(const struct predicate *p, const struct dv_geometry *g, unsigned phase, struct dv_row *row,
                 struct predicate_fault *fault, char *err) {
    const int uniform = !predicate_reads_block(p) && g->blocks > 1;
    const struct dv_geometry one = {uniform ? 1 : g->blocks, g->block_x, g->block_y};
    if (fault) fault->column = 0, fault->caret[0] = '\0';
    uint32_t *mask = mask_build(p, &one, phase, fault, err);
    if (!mask) return -1;
    analysis_count(mask, &one, row);
    free(mask);
    if (uniform) {
        count_scale(&row->warps_split, g->blocks);
        count_scale(&row->threads_on_a, g->blocks);
        count_scale(&row->path_runs, g->blocks);
    }
    return 0;
}

void analysis_compare(struct dv_table *t, int same_work) {
    if (t->nrows == 0) return;
    const struct dv_row *base = &t->rows[t->baseline_row];
    for (unsigned i = 0; i < t->nrows; i++) {
        struct dv_row *r = &t->rows[i];
        r->predicted_ratio = base->path_runs.total ? (double)r->path_runs.total / (double)base->path_runs.total : 0.0;
        r->comparable_reason[0] = '\0';
        if (same_work ||
            (r->threads_on_a.total == base->threads_on_a.total && r->threads_per_block == base->threads_per_block)) {
            r->comparable = 1;
        } else {
            r->comparable = 0;
            snprintf(r->comparable_reason, sizeof(r->comparable_reason),
                     "does different work: %.6g of %u threads per block on path A against %.6g for %s",
                     r->threads_on_a.per_block, r->threads_per_block, base->threads_on_a.per_block, base->name);
        }
    }
}
