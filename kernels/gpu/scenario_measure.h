/* scenario_measure.h -- the scenario suite's tables on the GPU.
 *
 * Called by measure.c only, which owns the device, the input, the clock and
 * the correctness-gate rule.
 */
#ifndef DV_SCENARIO_MEASURE_H
#define DV_SCENARIO_MEASURE_H

#include "kernels/gpu/counters.h"
#include "kernels/gpu/session.h"
#include "kernels/gpu/timing.h"
#include "kernels/model/model/experiment.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Times and checks scenario table `t` (planned, id "scenario:<name>") over
 * device input `in_dev` (at least the table's threads), on device `dev`.
 * The floor fractions use the mean of the clock samples `clk` collects
 * between this table's rounds (timing.h), `mhz` when it collects none. Fills every row's time, ratio, agreement,
 * efficiency, floor fraction and check, the table's kernel_iterations and
 * the testimony (`observed`, `counters`) as lesson_measure_table() does,
 * with the witness buffers of session `s`. Returns 0 or a DV_* code. */
int scenario_measure_table(struct session *s, const struct dv_options *o, const struct dv_device *dev, double mhz,
                           struct timing_clock *clk, struct dv_table *t, const float *in_dev, struct dv_testimony *tm,
                           struct counters **cnt, char *err);

#ifdef __cplusplus
}
#endif

#endif /* DV_SCENARIO_MEASURE_H */
