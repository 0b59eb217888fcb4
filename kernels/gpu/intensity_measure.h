/* intensity_measure.h -- the arithmetic-intensity tables' own share of a
 * measurement (intensity_measure.c): the DRAM pass after the testimony,
 * and the roofline derived from the table's times and counters.
 */
#ifndef DV_INTENSITY_MEASURE_H
#define DV_INTENSITY_MEASURE_H

#include "kernels/gpu/counters.h"
#include "kernels/gpu/scenario_rows.h"
#include "kernels/model/model/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The DRAM pass of measured table `t` (rows set up in `c`): once every
 * kernel queued before has finished, each row's timed kernel launched once
 * on its whole grid with the L2 flushed before it, counted by
 * counters_dram() into its rows' counters.dram_bytes_read; then the
 * roofline (model/model/intensity.h's intensity_derive()). Without
 * counters (*cnt NULL) or when the pass fails, the rows have no DRAM bytes
 * and t->dram_reason says why (a failed pass also sets *cnt NULL with
 * tm->counters_reason, as a failed counter pass does); the roofline is
 * then read from the bytes the threads load. Returns 0, or DV_ESTICKY
 * (no CUDA call may follow) with `err`. */
int intensity_measure_dram(struct scenario_rows *c, struct dv_table *t, struct counters **cnt, struct dv_testimony *tm,
                           char *err);

#ifdef __cplusplus
}
#endif

#endif /* DV_INTENSITY_MEASURE_H */
