/* analysis.h -- the warp analysis and the path-run model, in plain C.
 *
 * Everything starts from a path mask: one bit per thread of the grid (bit set
 * = path A), indexed by block * threads_per_block + linear thread id, where
 * the linear id is threadIdx.x + threadIdx.y * blockDim.x and warps are cut
 * from consecutive linear ids (the last warp of a block may be partial). The
 * same mask is what the mask kernel reads, so the analysis and the GPU see
 * the very same assignment.
 *
 * Model ("Branch Divergence and Predication Performance in Warps"): a warp pays the sum of
 * the paths its lanes take. With
 * two equal paths, a warp whose lanes agree runs one path-run and a split warp
 * runs two; a row's predicted ratio is its path-runs over the baseline's.
 */
#ifndef DV_ANALYSIS_H
#define DV_ANALYSIS_H

#include <stdint.h>
#include "kernels/model/model/predicate.h"
#include "kernels/model/model/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Words (uint32_t) a mask for `g` needs. */
size_t analysis_mask_words(const struct dv_geometry *g);

/* Evaluates `p` at `phase` for every thread of `g` into a new mask
 * (free() it). A predicate that does not read blockIdx.x is evaluated for one
 * block and replicated; one that does comes from the memo below when it
 * was built before. Returns NULL with `err` on an evaluation error (names
 * the thread) or out of memory. (analysis_row() is the form that also says
 * where in the expression an evaluation failed.) */
uint32_t *analysis_mask_build(const struct predicate *p, const struct dv_geometry *g,
                              unsigned phase, char *err);

/* The masks of predicates that read blockIdx.x, kept by analysis_mask_build()
 * (and analysis_row()) for the process: the last few, least recently used
 * out (kernels/base/lru.h), within a byte limit (ANALYSIS_MEMO_DEFAULT_BYTES
 * unless set; 0 keeps none), under its own lock. A mask from it is a copy of
 * the one built before for the same predicate, geometry and phase. Why the
 * process holds it and not its callers: analysis.c, at the memo. */
#define ANALYSIS_MEMO_DEFAULT_BYTES ((size_t)64 << 20)
struct analysis_memo_stats {
    unsigned long long hits, misses, evictions;
    size_t bytes, limit;
};
void analysis_memo_limit(size_t bytes);
void analysis_memo_get_stats(struct analysis_memo_stats *out);

/* Counts warps, split warps, threads on path A and path-runs per block from a
 * mask, into the analysis fields of `row` (warps_per_block, threads_per_block,
 * warps_split, threads_on_a, path_runs), and copies block 0's lanes into its
 * lane map (lanes_warps, lanes_block0). */
void analysis_count(const uint32_t *mask, const struct dv_geometry *g, struct dv_row *row);

/* The analysis fields of `row` (as analysis_count() on the whole grid's
 * mask) for `p` at `phase` on `g`. A predicate that does not read blockIdx.x
 * is evaluated and counted on one block and multiplied out: the same
 * numbers, at the cost of one block. Returns 0, or -1 with `err` (as
 * analysis_mask_build()) and, for an evaluation error, `fault` (may be NULL)
 * where in p's expression it is (predicate_eval()); column 0 otherwise. */
int analysis_row(const struct predicate *p, const struct dv_geometry *g, unsigned phase, struct dv_row *row,
                 struct predicate_fault *fault, char *err);

/* Fills predicted_ratio and comparable (+ reason) of every row of `t` against
 * its baseline row. With `same_work` every row is comparable (the table's
 * rows run the same multiply-adds whatever their split: Part 2, one per
 * iteration on either side); otherwise (Part 1) a row is comparable when it
 * puts the same number of threads on path A as the baseline. The planner,
 * which defines the table's rows, says which. */
void analysis_compare(struct dv_table *t, int same_work);

#ifdef __cplusplus
}
#endif

#endif /* DV_ANALYSIS_H */
