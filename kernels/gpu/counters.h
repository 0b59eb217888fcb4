/* counters.h -- hardware counters of a table's rows through CUPTI's range
 * profiler (CUDA 12.6 and later), loaded at run time, one profiler for the
 * life of the process that measures.
 *
 * CUPTI is optional. counters_prepare() dlopen()s libcupti (once per
 * process), initialises the profiler, builds the counter-availability image
 * and the config image of the metric set for the device, enables the range
 * profiler on the CUDA context and sizes one counter data image; all of it
 * is kept and reused by every later table and job. When the library is
 * missing, the build had no CUPTI headers, the GPU is too old, profiling is
 * not permitted (CUPTI_ERROR_INSUFFICIENT_PRIVILEGES) or another profiler
 * holds the GPU, it fails with the reason and the measurement goes on
 * without counters. Where it looks (first hit wins): $DV_CUPTI_LIBRARY (an
 * exact path, nothing else is tried when set), `lib/` beside the running
 * binary, then `../lib` (the bundle's layout), the toolkit's library folder
 * found at build time, the loader's default search.
 *
 * counters_profile() runs a table's rows once more, untimed, in one session:
 * user replay (the caller's launches, repeated once per pass, since a row's
 * kernel only reads its inputs and rewrites its own output with the same
 * values), one user range per launch. A row is launched on the blocks that
 * stand for its grid (model/testimony.h's struct testimony_grid: one block
 * for a predicate that does not read blockIdx.x, one period of blocks for
 * one that does, the whole grid otherwise) and its sums are scaled by the
 * parts' weights, which is exact; ratios come from CUPTI for a one-part row
 * and from the scaled sums for a two-part one.
 *
 * The metric set is the one the document reports (api/report_dump.c names
 * the fields after them) plus the two sums its ratios are made of. The
 * software-patched smsp__sass_* metrics (divergent branch targets, branch
 * targets, the uniform ones, thread-level FFMAs) have no hardware
 * counterpart: the FMA pipe's count also holds the IMADs of the index
 * arithmetic. CUPTI collects them in a pass of their own, so the set takes
 * two passes: the hardware pass costs a launch of the reduced grid, the
 * patched pass (tens to hundreds of times slower per block) the same grid.
 *
 * A failure of any CUPTI call, a value CUPTI does not give, or a launch that
 * fails inside the pass leaves every row of the table without counters
 * (`present` 0) with the reason, and marks the profiler for a rebuild at the
 * next counters_prepare(); a sticky CUDA error marks it lost (no CUPTI or
 * CUDA call follows: the process must end).
 *
 * Two environment variables select another pass, to compare with (they are
 * read at each rebuild): DV_COUNTERS_REPLAY=kernel is the pass this service
 * used before, as it ran: the six metrics the document names, the range
 * profiler enabled for each table's session (the counter data image sized
 * there) and disabled after, CUPTI replaying each launch itself with one
 * automatic range per launch, every row on its whole grid; =user-auto is
 * user replay with automatic ranges, =user the default. DV_COUNTERS_GRID=full
 * launches every row on its whole grid (=reduced the default).
 *
 * One thread uses a struct counters; the CUDA context it was prepared on
 * must be current whenever it is used.
 */
#ifndef DV_COUNTERS_H
#define DV_COUNTERS_H

#include "kernels/model/experiment.h"
#include "kernels/model/testimony.h"

#ifdef __cplusplus
extern "C" {
#endif

struct counters;

/* An unprepared profiler (no library, no CUDA), or NULL when out of memory. */
struct counters *counters_create(void);

/* Ends the range profiler and CUPTI's profiler (unless lost) and frees `c`;
 * accepts NULL. The library stays loaded for the life of the process. */
void counters_free(struct counters *c);

/* Makes `c` ready for device ordinal `device` of compute capability
 * `cc_major` on CUDA context `cu_ctx` (a CUcontext, current): nothing when
 * it is ready for them, else everything from the library load on (what was
 * built before is torn down first). Returns 0 with *library (256 bytes) the
 * loaded path; -1 with `reason` ("what: why", with what to do where there is
 * something) and *library "" when counters cannot be read. */
int counters_prepare(struct counters *c, int device, int cc_major, void *cu_ctx, char *library, char *reason);

/* A failure of the pass: the next counters_prepare() rebuilds everything. */
void counters_invalidate(struct counters *c);

/* 1 after a sticky CUDA error inside a pass: `c` makes no CUPTI call again
 * (counters_prepare() refuses) and the process must not touch CUDA. */
int counters_lost(const struct counters *c);

/* The host time of the range profiler's first Start after it was enabled,
 * when a pass since the last call made it (0 otherwise), then 0: starting
 * the profiler's hardware for the first time (a hundred milliseconds and
 * more where the later Starts take one or two) belongs to setting the
 * profiler up, not to the table whose pass happened to be first. */
double counters_take_start_ms(struct counters *c);

/* How the pass launches a table's rows: launch(ctx, row, blocks, err)
 * enqueues row `row`'s timed kernel on the first `blocks` blocks of its grid
 * (the same launch each pass: same inputs, same output buffer); wait(ctx,
 * err) waits for everything enqueued (NULL: cudaDeviceSynchronize()). Both
 * return 0 or a DV_* code with `err`. */
struct counters_launch {
    int (*launch)(void *ctx, unsigned row, unsigned blocks, char *err);
    int (*wait)(void *ctx, char *err);
    void *ctx;
};

/* counters_profile() did not get the counters (the reason says why). */
#define COUNTERS_REFUSED 1

/* Profiles rows 0..nrows-1 (nrows <= DV_MAX_ROWS) into out[row] (raw
 * values; `present` set), row r on the parts of grids[r]. Returns 0;
 * COUNTERS_REFUSED with `reason` (CUPTI failed, or gave no value; every
 * out[].present 0); or the DV_* code of a failed launch or wait with
 * `reason`. `c` must be prepared. */
int counters_profile(struct counters *c, unsigned nrows, const struct testimony_grid *grids,
                     const struct counters_launch *l, struct dv_counters *out, char *reason);

/* The counter pass of measured table `t`: counters_profile() over its rows,
 * timed on the host into tm->counters_ms (the first Start's share into
 * tm->counters_setup_ms, see counters_take_start_ms()), then each row's figures derived
 * (model/testimony.h) against its whole grid and evaluations[row]
 * evaluations of its branch per thread, and compared across the table. A
 * pass that fails leaves its reason in tm->counters_reason, marks *c for a
 * rebuild (or lost, after a sticky CUDA error) and sets *c NULL, so later
 * tables of the job do not ask again; it never fails the table. */
void counters_table(struct counters **c, struct dv_table *t, const struct testimony_grid *grids,
                    const struct counters_launch *l, const unsigned *evaluations, struct dv_testimony *tm);

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
