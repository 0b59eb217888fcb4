/* timing.h -- the timing engine every table kind shares (Part 1/2 and the
 * scenarios): warm-up, round-robin samples between CUDA events, the stopping
 * rule of model/stats.h.
 *
 * `launch(ctx, row, err)` enqueues one launch of row `row` on the default
 * stream and returns 0 or a DV_* code. timing_rows() makes one warm-up launch
 * per row, then samples rows round-robin (row 0, 1, ..., n-1, 0, 1, ...),
 * several rounds queued back to back per synchronisation so drift in clocks
 * or temperature hits every row alike, each launch between two CUDA events,
 * until stats_should_stop() says so. Fills stats[row] and *gpu_ms (the sum of
 * the timed samples). Because each row writes its own output, the output left
 * on the device afterwards is that of the row's last timed launch.
 */
#ifndef DV_TIMING_H
#define DV_TIMING_H

#include "model/experiment.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef int (*timing_launch_fn)(void *ctx, unsigned row, char *err);

int timing_rows(unsigned nrows, timing_launch_fn launch, void *ctx, const struct dv_options *o,
                struct dv_stats *stats, double *gpu_ms, char *err);

#ifdef __cplusplus
}
#endif

#endif /* DV_TIMING_H */
