/* counters.h -- hardware counters of a table's rows through CUPTI's range
 * profiler (CUDA 12.6 and later), loaded at run time.
 *
 * CUPTI is optional. counters_create() dlopen()s libcupti (and the nvperf
 * libraries it needs) and prepares the metrics; when the library is missing,
 * the build had no CUPTI headers, the GPU is too old, profiling is not
 * permitted (CUPTI_ERROR_INSUFFICIENT_PRIVILEGES) or another profiler holds
 * the GPU, it returns NULL with the reason and the measurement goes on
 * without counters. Where it looks (first hit wins): $DV_CUPTI_LIBRARY (an
 * exact path, nothing else is tried when set), `lib/` beside the running
 * binary, then `../lib` (the bundle's layout), the toolkit's library folder found at build time, the
 * loader's default search.
 *
 * counters_profile() runs each row once more, untimed, in one profiling
 * session with one automatic range per launch and kernel replay, and
 * evaluates the metrics of every range into the row's struct dv_counters
 * (raw values; model/testimony.h derives the rest).
 */
#ifndef DV_COUNTERS_H
#define DV_COUNTERS_H

#include "kernels/gpu/timing.h"
#include "kernels/model/experiment.h"

#ifdef __cplusplus
extern "C" {
#endif

struct counters;

/* Prepares counters for CUDA device `device` (its context current, as after
 * device_query()), cc_major the device's compute capability. NULL with
 * `reason` ("what: why", with what to do where there is something) when
 * counters cannot be read. *library receives the loaded path (256 bytes). */
struct counters *counters_create(int device, int cc_major, char *library, char *reason);
void counters_free(struct counters *c); /* NULL ok */

/* Profiles rows 0..nrows-1 (launch(ctx, row) enqueues one) into out[row].
 * Returns 0; 1 when the profiler refused (`reason` says why, the rows keep
 * present = 0); or the DV_* code of a failed launch (with `reason`). */
int counters_profile(struct counters *c, unsigned nrows, timing_launch_fn launch, void *ctx, struct dv_counters *out,
                     char *reason);

/* The counter pass of measured table `t`: counters_profile() over its rows,
 * timed on the host into tm->counters_ms, then each row's figures derived
 * (model/testimony.h) against `blocks` blocks and evaluations[row]
 * evaluations of its branch per thread, and compared across the table.
 * Returns 0 (also when the profiler refused: the reason is in
 * tm->counters_reason, *c is freed and set to NULL so later tables do not
 * ask again), or the DV_* code of a failed launch with `err`. */
int counters_table(struct counters **c, struct dv_table *t, timing_launch_fn launch, void *ctx, unsigned blocks,
                   const unsigned *evaluations, struct dv_testimony *tm, char *err);

/* The CUPTI results counters_explain() advises on (cupti_result.h values,
 * checked there with static asserts; kept here so the advice exists in a
 * build without CUPTI's headers). */
enum counters_cupti_error {
    COUNTERS_ERR_NOT_COMPATIBLE = 14,
    COUNTERS_ERR_NOT_SUPPORTED = 27,
    COUNTERS_ERR_INSUFFICIENT_PRIVILEGES = 35,
    COUNTERS_ERR_OLD_PROFILER = 36,
    COUNTERS_ERR_LEGACY_PROFILER = 38,
    COUNTERS_ERR_MULTIPLE_SUBSCRIBERS = 39,
    COUNTERS_ERR_VIRTUALIZED_PRIVILEGES = 40,
};

/* The reason for a failed CUPTI call `what` that returned `result` (CUPTI's
 * text for it in `text`, NULL when unknown) into `reason`: "what: text (n)"
 * and, for the results that have one, what to do (insufficient privileges:
 * the driver's admin-only profiling setting and how to lift it; another
 * profiler holding the counters; a GPU or driver without the range
 * profiler). */
void counters_explain(int result, const char *text, const char *what, char *reason);

#ifdef __cplusplus
}
#endif

#endif /* DV_COUNTERS_H */
