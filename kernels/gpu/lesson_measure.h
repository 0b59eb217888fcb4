/* lesson_measure.h -- Part 1 and Part 2 tables on the GPU: the lesson's
 * kernels, one per table, the predicate mode (or mask) per row.
 *
 * Called by measure.c only, which owns the device, the input buffer, the
 * clock and the correctness-gate rule; this file times the rows and checks
 * each row's last timed output against the CPU reference.
 */
#ifndef DV_LESSON_MEASURE_H
#define DV_LESSON_MEASURE_H

#include "kernels/gpu/counters.h"
#include "kernels/gpu/session.h"
#include "kernels/gpu/timing.h"
#include "kernels/model/model/experiment.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Picks whole waves of the Part 1 kernel long enough that the uniform row
 * runs at least 1 ms at the FMA floor at `clock_mhz`, into *blocks, and says
 * how in r->config.blocks_reason. Returns 0 or a DV_* code. */
int lesson_choose_blocks(const struct dv_options *o, struct dv_report *r, double clock_mhz, unsigned *blocks,
                         char *err);

/* Times and checks Part 1 / Part 2 table `t` of `r` (planned) over device
 * input `d_in` (r->config.threads values) with the outputs and masks of
 * session `s`; ref_a / ref_b are the chains of reference_chains(); `clk`
 * collects the clock samples taken between the timed rounds (timing.h). Fills every row's time, ratio and check, the table's
 * kernel_iterations, then the testimony: unless o->no_witness each row's
 * `observed`, and when *cnt is a prepared profiler each row's `counters` (a
 * pass that fails sets *cnt NULL and leaves the reason in `tm`); the
 * passes' host time accumulates in `tm`. Returns 0 or a DV_* code. */
int lesson_measure_table(struct session *s, const struct dv_options *o, const struct dv_report *r,
                         struct dv_table *t, const float *d_in, const float *ref_a, const float *ref_b,
                         struct timing_clock *clk, struct dv_testimony *tm, struct counters **cnt, char *err);

/* How a table's rows are timed: `launch(lctx, i, err)` launches row i of
 * `t`. lesson_measure_table() times with timing_rows() under the request's
 * rule; a batch of readers (gpu/batch.h) times its union table with each
 * reader's own (model/stats/batchplan.h) and fills the readers' tables. */
typedef int (*lesson_timer_fn)(void *ctx, struct dv_table *t, timing_launch_fn launch, void *lctx,
                               struct timing_clock *clk, char *err);

/* lesson_measure_table() with the rows timed by `timer(timer_ctx, ...)`
 * (NULL: timing_rows()); everything else the same. */
int lesson_measure_table_timed(struct session *s, const struct dv_options *o, const struct dv_report *r,
                               struct dv_table *t, const float *d_in, const float *ref_a, const float *ref_b,
                               struct timing_clock *clk, struct dv_testimony *tm, struct counters **cnt,
                               lesson_timer_fn timer, void *timer_ctx, char *err);

#ifdef __cplusplus
}
#endif

#endif /* DV_LESSON_MEASURE_H */
