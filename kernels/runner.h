/* runner.h -- the only code that calls cudart.
 *
 * runner_measure() plans the experiment (experiment_plan), then for each
 * table: allocates once, fills the input (never zeros, never constant), runs
 * one warm-up launch per row configuration, then times rows round-robin with
 * CUDA events until every row has min_samples and a relative stdev at or
 * under max_noise, or the table's GPU-time budget is spent. The last timed
 * launch of every row is checked against the CPU reference. The SM clock is
 * measured with a clock64() spin kernel before and after each table.
 *
 * Return codes (dv.h): 0; DV_ERR for a failure that leaves the device usable;
 * DV_ENOGPU when there is no usable device (err says what CUDA reported);
 * DV_ESTICKY when a CUDA error poisoned the context, after which the process
 * must not touch CUDA again (the server restarts its worker).
 */
#ifndef DV_RUNNER_H
#define DV_RUNNER_H

#include "experiment.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Measures `o` into `r` (a report from experiment_report_create()). */
int runner_measure(const struct dv_options *o, struct dv_report *r, char *err);

/* Fills `d` with the identity of device `ordinal` and a quick clock reading.
 * Returns 0, DV_ENOGPU (d->reason filled too) or DV_ESTICKY / DV_ERR. */
int runner_device_query(int ordinal, struct dv_device *d, char *err);

/* FP32 fused multiply-add lanes per SM for a compute capability (0 if unknown). */
int runner_fp32_lanes(int cc_major, int cc_minor);

#ifdef __cplusplus
}
#endif

#endif /* DV_RUNNER_H */
