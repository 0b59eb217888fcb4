/* testimony.h -- the GPU's testimony, derived on the host: the active-lane
 * witness against the model, and the hardware counters turned into figures a
 * reader can set beside the model's.
 *
 * The witness (model/witness_record.h) gives, per block and path, the runs,
 * the partial runs and the active lanes the GPU saw. The model says what it
 * should have seen: testimony_expect_*() build the same per-block record from
 * the path mask (Part 1 and Part 2; for per-iteration rows one mask per phase)
 * or from a scenario assignment, and testimony_observe() compares the two
 * block by block and summarises the observation into struct dv_observed.
 *
 * testimony_counters_derive() turns the raw counters of a row into warp
 * execution efficiency (active lanes per instruction / 32), divergent branch
 * targets per block beside the model's split warps, and warp instructions per
 * warp-wide FMA: 1.0 is a kernel that issues nothing but its FMAs; a split
 * two-path row issues about 2; instruction overhead (loop control, predicated
 * constant moves) shows up above the model's figure.
 */
#ifndef DV_TESTIMONY_H
#define DV_TESTIMONY_H

#include <stdint.h>

#include "kernels/model/analysis.h"
#include "kernels/model/experiment.h"
#include "kernels/model/scenario.h"
#include "kernels/model/witness_record.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Adds `times` x the record path mask `mask` (analysis.h layout) produces to
 * `exp` (g->blocks records): for each warp, a run of path A when some lane
 * takes A (partial when not all of the warp's threads do), likewise path B. */
void testimony_expect_mask(const uint32_t *mask, const struct dv_geometry *g, unsigned long long times,
                           struct dv_witness_block *exp);

/* The model's record of Part 1 / Part 2 row `row` over `iterations` into
 * `exp` (zeroed here, g->blocks records), from the row's predicate and its
 * evaluations (experiment.h): phase 0 once for the one-branch kernels (path A
 * only for the no-branch kernel, whose predicate is always-a), every phase
 * for the per-iteration kernel (built-in modes repeat every 32 phases, so 32
 * masks suffice). Returns 0, or -1 with `err`. */
int testimony_expect_lesson(const struct dv_row *row, const struct dv_geometry *g, unsigned iterations,
                            struct dv_witness_block *exp, char *err);

/* The model's record of scenario `s` under assignment `work` (scenario.h)
 * into `exp` (zeroed here): k-way, one run per distinct path in a warp (all on
 * record path 0); loop, one run per trip of the warp's longest thread, its
 * active lanes those with trips left; short, per iteration one run per side
 * present (side 1 on path 0, side 0 on path 1), `short_iters` iterations. */
void testimony_expect_scenario(const struct scenario *s, const uint8_t *work, unsigned blocks,
                               unsigned threads_per_block, unsigned short_iters, struct dv_witness_block *exp);

/* Compares the GPU's records `seen` with the model's `exp` (`blocks` each)
 * and summarises into `o`: totals, per-block path-runs and split warps
 * divided by `per` (the iterations a per-iteration row spans, else 1), lanes
 * per run, agreement (every block equal), the first differing block,
 * `predicated` (every warp ran both paths with all its lanes while the model
 * expected fewer runs) and a one-line verdict. `warps_per_block` and `tpb`
 * describe the block. */
void testimony_observe(const struct dv_witness_block *seen, const struct dv_witness_block *exp, unsigned blocks,
                       unsigned warps_per_block, unsigned per, struct dv_observed *o);

/* Fills the derived fields of `c` (raw counters set) for a row of `blocks`
 * blocks whose model splits `model_split_per_block` warps per block at each
 * of `per` branch evaluations (the iterations of a per-iteration row, else
 * 1): model_split_per_block becomes the launch's (split x per), and the
 * verdict compares it with the divergent branch targets per block. A row the
 * model splits whose timed kernel took no divergent branch with every lane
 * active is `predicated`: the compiler if-converted the branch. */
void testimony_counters_derive(struct dv_counters *c, unsigned blocks, double model_split_per_block, unsigned per);

/* Sets every row's counters.inst_vs_baseline in `t`: its warp instructions
 * over the baseline row's (NaN where either has no counters). For rows with
 * the baseline's work this is the time ratio the instruction count predicts
 * on a GPU that issues one warp instruction per scheduler per cycle. */
void testimony_counters_compare(struct dv_table *t);

#ifdef __cplusplus
}
#endif

#endif /* DV_TESTIMONY_H */
