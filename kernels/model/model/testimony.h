/* testimony.h -- the GPU's testimony, derived on the host: the active-lane
 * witness against the model, and the hardware counters turned into figures a
 * reader can set beside the model's.
 *
 * The witness (model/model/witness_record.h) gives, per block and path, the runs,
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
 *
 * testimony_counter_grid() and the period finders say where the counter pass
 * may count a row on fewer blocks than its grid. Every count the pass reads
 * is a sum over blocks of what each block's warps executed, and a block's
 * instructions follow from the paths its threads take, so when block b takes
 * exactly the paths of block b mod P for every b, the first P blocks counted
 * blocks / P times, plus the first blocks % P blocks once, are the full
 * grid's counts, to the instruction. A predicate that does not read
 * blockIdx.x has P = 1 (experiment_row_predicate() says which read it); one
 * that does is searched for its period in the path mask, and the full grid
 * is counted when it has none shorter than the grid.
 */
#ifndef DV_TESTIMONY_H
#define DV_TESTIMONY_H

#include <stdint.h>

#include "kernels/model/model/scenario.h"
#include "kernels/model/model/types.h"
#include "kernels/model/model/join_record.h"
#include "kernels/model/model/witness_record.h"

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
 * masks suffice). `mask0`, when not NULL, is the row's phase-0 path mask over
 * `g` (the one its check reads), used instead of building it again for a
 * one-branch row that reads blockIdx.x. Returns 0, or -1 with `err`. */
int testimony_expect_lesson(const struct dv_row *row, const struct dv_geometry *g, unsigned iterations,
                            const uint32_t *mask0, struct dv_witness_block *exp, char *err);

/* The model's record of scenario `s` under assignment `work` (scenario.h)
 * into `exp` (zeroed here): k-way, one run per distinct path in a warp (all on
 * record path 0); loop, one run per trip of the warp's longest thread, its
 * active lanes those with trips left; short, per iteration one run per side
 * present (side 1 on path 0, side 0 on path 1), `short_iters` iterations;
 * pair (`s` a row's scenario_row()), one run per side present (side 0 on
 * path 0), both with every lane for compute-both-then-select, a loop's
 * trips as the loop kernel's. */
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

/* The same over a grid of `blocks` of which only the first `launched` ran
 * (and were modelled): block b of the grid takes the records of block
 * b mod launched (the blocks that stand for a grid, testimony_lesson_grid()),
 * so each record counts once for every block it stands for in the totals,
 * the per-block means and the histogram, while min, max and the first
 * difference are those of the blocks that ran. testimony_observe() is this
 * with launched == blocks; a `launched` of 0 or over `blocks` means all. */
void testimony_observe_standing(const struct dv_witness_block *seen, const struct dv_witness_block *exp,
                                unsigned launched, unsigned blocks, unsigned warps_per_block, unsigned per,
                                struct dv_observed *o);

/* Fills the derived fields of `c` (raw counters set) for a row of `blocks`
 * blocks whose model splits `model_split_per_block` warps per block at each
 * of `per` branch evaluations (the iterations of a per-iteration row, else
 * 1): model_split_per_block becomes the launch's (split x per), and the
 * verdict compares it with the divergent branch targets per block, naming
 * the split per evaluation ("2 split warps per block at each of 4096
 * evaluations"). A row the model splits whose timed kernel took no divergent
 * branch while every warp's instructions ran with all of its threads is
 * `predicated`: the compiler if-converted the branch. `warp_lanes` is the
 * threads a warp of the row's block has on average (threads per block over
 * warps per block: 32, or 24 for a 48-thread block, whose second warp is
 * partial); 0 counts as 32. */
void testimony_counters_derive(struct dv_counters *c, unsigned blocks, double model_split_per_block, unsigned per,
                               double warp_lanes);

/* The launches that stand for a grid of `blocks` blocks in the counter pass
 * when block b takes the paths of block b mod `period`: part 0 is the first
 * `period` blocks, weight blocks / period; part 1, when blocks % period is
 * not 0, the first blocks % period blocks, weight 1. A period of 0 or of at
 * least `blocks`, or parts that would launch as many blocks as the grid,
 * give one part: the whole grid, weight 1. The full grid's count of any
 * per-block sum is sum(weight[k] x count of part k).
 *
 * A grid with a stand-in (`standin` 1, testimony_standin_bytes()) counts
 * other blocks: part k is blocks first[k] .. first[k] + part_blocks[k] - 1
 * of a stand-in grid the caller lays out, each a copy of a block of the
 * row's grid; the sums are the same. Otherwise every first[k] is 0 and a
 * part is the first part_blocks[k] blocks of the row's own grid. */
#define TESTIMONY_GRID_PARTS 2
struct testimony_grid {
    unsigned blocks; /* the row's whole grid        */
    unsigned nparts; /* 1 or 2                      */
    unsigned part_blocks[TESTIMONY_GRID_PARTS];
    double weight[TESTIMONY_GRID_PARTS];
    unsigned first[TESTIMONY_GRID_PARTS];
    int standin;
};
void testimony_counter_grid(unsigned blocks, unsigned period, struct testimony_grid *out);

/* The blocks of the stand-in grid in all (sum of part_blocks[]). */
unsigned testimony_grid_launched(const struct testimony_grid *g);

/* The weight of stand-in block `b` of `g` (a grid with a stand-in): the
 * weight of the part it lies in, 0 past the last. */
double testimony_grid_weight_of(const struct testimony_grid *g, unsigned b);

/* A stand-in for a grid of `blocks` blocks of `tpb` threads whose blocks
 * run only what their own per-thread values say (a scenario row's
 * assignment, one byte a thread): blocks with the same bytes count the
 * same, so the grid's sums are each distinct block's count times the
 * blocks that have its bytes. With w_c such blocks of distinct block c, a
 * base s lays out part 0 with w_c / s copies of each (weight s) and part 1
 * with the w_c % s left (weight 1); s is chosen for the fewest launch
 * waves of `wave` blocks (the blocks the GPU runs at once; 0: 1), then the
 * fewest blocks, never more than `max_src` blocks in all. When that costs
 * fewer waves than `plain` (the row's grid without a stand-in), or as many
 * waves in fewer blocks, it writes the stand-in into *out (standin 1) and
 * into src[k] the grid block stand-in block k copies, and returns how many
 * blocks it has; else it returns 0 and leaves *out as it was. A `plain`
 * grid of one wave is kept without looking (nothing to save). The same
 * holds for the witness's records: stand-in block k's record stands for
 * testimony_grid_weight_of(out, k) blocks of the grid. Equal neighbouring
 * blocks are found by comparing them, the rest by a hash of their bytes
 * and a comparison. It returns 0 when memory for the search (28 bytes a
 * block) cannot be had. */
unsigned testimony_standin_bytes(const uint8_t *values, unsigned tpb, unsigned blocks, unsigned wave,
                                 const struct testimony_grid *plain, struct testimony_grid *out, unsigned *src,
                                 unsigned max_src);
/* testimony_observe_standing() over a grid with a stand-in (testimony_standin_bytes()): `seen`
 * and `exp` hold the records of the stand-in's blocks, block k standing for
 * testimony_grid_weight_of(g, k) blocks of the grid and copying grid block
 * src[k] (the first difference names that block). */
void testimony_observe_standin(const struct dv_witness_block *seen, const struct dv_witness_block *exp,
                               const struct testimony_grid *g, const unsigned *src, unsigned warps_per_block,
                               unsigned per, struct dv_observed *o);

/* The join records `rec` (one per thread, model/model/join_record.h) of
 * the first `blocks` blocks of `tpb` threads of reconvergence row `rs` (its
 * scenario_row()) with assignment `work` (those blocks' bytes), summarised
 * per warp into `j`: the lanes that reached the join and in how many groups
 * (distinct masks) they read it, whether a warp read it in one group holding
 * every lane the model says reaches it (all its lanes, or for an early
 * return those that did not return), the masks seen, and the clocks'
 * spread between a warp's first and last group. */
void testimony_join(const struct scenario *rs, const uint8_t *work, const struct dv_join_lane *rec, unsigned blocks,
                    unsigned tpb, struct dv_join *j);

/* The blocks that stand for a scenario row's grid of `blocks` blocks of
 * `tpb` threads with assignment `work` (one byte a thread): one period of
 * it (testimony_period_bytes(), testimony_counter_grid()), or, where that
 * costs fewer launch waves of `wave` blocks, a stand-in
 * (testimony_standin_bytes(); src[], room for `blocks`, receives the grid
 * block each of its blocks copies) into *out. Returns the stand-in's
 * blocks, 0 for none (*out the period's grid). The same inputs give the
 * same grid: the worker and a profiling process find it alike. */
unsigned testimony_scenario_grid(const uint8_t *work, unsigned tpb, unsigned blocks, unsigned wave,
                                 struct testimony_grid *out, unsigned *src);

/* The smallest period P, in blocks, of a grid's per-thread values: thread t
 * of block b has the value of thread t of block b mod P for every block b <
 * `blocks`. testimony_period_bits() reads one bit per thread (a path mask,
 * analysis.h layout, `threads_per_block` bits per block from bit 0),
 * testimony_period_bytes() one byte per thread (a scenario assignment).
 * Returns `blocks` when there is no shorter period, and when the memory for
 * the search (12 bytes a block) cannot be had: the whole grid is always a
 * true answer. */
unsigned testimony_period_bits(const uint32_t *mask, unsigned threads_per_block, unsigned blocks);
unsigned testimony_period_bytes(const uint8_t *values, unsigned threads_per_block, unsigned blocks);

/* The counter-pass grid of Part 1 / Part 2 row `row` over `g` into `out`:
 * one block when its predicate does not read blockIdx.x; the period of its
 * phase-0 path mask `mask` (over `g`) when it does and evaluates its branch
 * once; the whole grid when it evaluates a block-dependent branch every
 * iteration (one mask does not tell every phase). Returns 0, or -1 with
 * `err` when the row has no predicate. */
int testimony_lesson_grid(const struct dv_row *row, const struct dv_geometry *g, unsigned iterations,
                          const uint32_t *mask, struct testimony_grid *out, char *err);

/* Sets every row's counters.inst_vs_baseline in `t`: its warp instructions
 * over the baseline row's (NaN where either has no counters). For rows with
 * the baseline's work this is the time ratio the instruction count predicts
 * on a GPU that issues one warp instruction per scheduler per cycle. */
void testimony_counters_compare(struct dv_table *t);

#ifdef __cplusplus
}
#endif

#endif /* DV_TESTIMONY_H */
