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

/* The timing engine, shared by every table kind (Part 1/2 and scenarios).
 * `launch(ctx, row, err)` enqueues one launch of row `row` on the default
 * stream and returns 0 or a DV_* code. runner_time_rows() makes one warm-up
 * launch per row, then samples rows round-robin, each launch bracketed by CUDA
 * events, until every row has o->min_samples and noise <= o->max_noise, or
 * o->budget_ms of GPU time is spent, or o->max_samples is reached. Fills
 * stats[row] and *gpu_ms (timed GPU time). Returns 0 or a DV_* code. */
typedef int (*runner_launch_fn)(void *ctx, unsigned row, char *err);
int runner_time_rows(unsigned nrows, runner_launch_fn launch, void *ctx,
                     const struct dv_options *o, struct dv_stats *stats,
                     double *gpu_ms, char *err);

/* Measures the SM clock in MHz with a clock64() spin kernel timed by events. */
int runner_measure_clock(double *mhz, char *err);

/* Turns a cudaError_t (as int) into DV_ESTICKY for errors that poison the
 * context, DV_ENOGPU for no-device errors, DV_ERR otherwise, filling `err`
 * with "what: <cudaGetErrorString>". */
int runner_cuda_fail(int cuda_error, const char *what, char *err);

/* The release in the first line of /proc/driver/nvidia/version into `out`.
 * Returns 0, or -1 (out "") when the line names none. */
int runner_driver_release(const char *version_line, char *out, size_t len);

/* FP32 fused multiply-add lanes per SM for a compute capability (0 if unknown). */
int runner_fp32_lanes(int cc_major, int cc_minor);

#ifdef __cplusplus
}
#endif

#endif /* DV_RUNNER_H */
