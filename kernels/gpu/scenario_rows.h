/* scenario_rows.h -- a scenario table's rows on the device, for every
 * launch of them: the timed one (scenario_measure.c), the testimony's
 * (witness, counters, join record) and the instruction profile's
 * (instr_run.c), so each of them launches a row exactly as it was timed.
 *
 * Per row set up: its scenario_row() (the kernel, lengths and variant it
 * runs), its assignment on the device in the element type its kernel reads
 * and on the host (one byte per thread), and an output of its own; and, once
 * asked, the blocks that stand for its grid (model/model/testimony.h's
 * testimony_scenario_grid(): one period of its assignment, or a stand-in
 * grid laid out in buffers of its own, with its input copied). A scenario
 * kernel tells its blocks apart only by what they read (blockIdx.x indexes
 * its buffers and nothing else), so blocks from `first` on are launched as
 * a grid of their own over the buffers from that block on.
 */
#ifndef DV_SCENARIO_ROWS_H
#define DV_SCENARIO_ROWS_H

#include <stdint.h>

#include "kernels/gpu/scenario_kernels.h"
#include "kernels/model/model/scenario.h"
#include "kernels/model/model/testimony.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A row's stand-in grid: `n` blocks, block k a copy of grid block src[k],
 * its assignment on the host and the device, its input, an output of its
 * own (the testimony's launches leave the timed output alone). n 0: none. */
struct scenario_standin {
    unsigned n;
    unsigned *src;
    uint8_t *host_work;
    void *work;
    float *in, *out;
};

struct scenario_rows {
    const struct scenario *s;
    unsigned blocks, block_x, block_y;
    unsigned unit, iters;
    const float *in;
    struct scenario row[SCENARIO_MAX_ROWS]; /* scenario_row() of each          */
    int ready[SCENARIO_MAX_ROWS];           /* set up                          */
    float *out[SCENARIO_MAX_ROWS];
    void *work[SCENARIO_MAX_ROWS];                  /* the assignment on the device    */
    uint8_t *host_work[SCENARIO_MAX_ROWS];          /* and on the host                 */
    struct testimony_grid grids[SCENARIO_MAX_ROWS]; /* what stands for the grid        */
    struct scenario_standin sub[SCENARIO_MAX_ROWS];
    /* ---- arithmetic intensity (SCENARIO_MEM tables): the stream buffer
     * (INTENSITY_WORDS words a thread of the grid, block-major), the chase
     * buffer where a row chases, both filled on the device at set-up ---- */
    uint32_t *mem_data, *mem_chase;
};

/* The rows of scenario `s` whose bit is set in `rows` (bit r: row r) for
 * options `o`, over device input `in_dev` (the grid's threads). Returns 0
 * or a DV_* code with `err`; scenario_rows_cleanup() either way. */
int scenario_rows_setup(struct scenario_rows *c, const struct scenario *s, const struct dv_options *o,
                        const float *in_dev, uint32_t rows, char *err);

/* The blocks that stand for row `row`'s grid into c->grids[row] (and a
 * stand-in laid out on the device where one costs fewer launch waves of
 * `wave` blocks than the row's grid). Returns 0 or a DV_* code. */
int scenario_rows_standing(struct scenario_rows *c, unsigned row, unsigned wave, char *err);

/* Row `row`'s kernel on `blocks` blocks from block `first` of its own grid
 * or, with `standin`, of its stand-in grid: the timed instantiation, or the
 * witness (`witness`, one record per block) or the join record (`join`, one
 * record per thread). */
int scenario_rows_launch(const struct scenario_rows *c, unsigned row, int standin, unsigned first, unsigned blocks,
                         struct dv_witness_block *witness, struct dv_join_lane *join, char *err);

/* 1 when row `row` runs a compile-time instantiation (the suites' unit of
 * the k-way and loop kernels; the worked cases' 2|1 and 4|3 short kernels
 * on 4096 iterations), 0 for a runtime one. */
int scenario_rows_compiled(const struct scenario_rows *c, unsigned row);

/* Resident blocks per SM of row `row`'s timed kernel into *per_sm. */
int scenario_rows_occupancy(const struct scenario_rows *c, unsigned row, int *per_sm, char *err);

/* Frees everything the rows hold (device and host). */
void scenario_rows_cleanup(struct scenario_rows *c);

#ifdef __cplusplus
}
#endif

#endif /* DV_SCENARIO_ROWS_H */
