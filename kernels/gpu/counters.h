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
 * stand for its grid (model/model/testimony.h's struct testimony_grid: one block
 * for a predicate that does not read blockIdx.x, one period of blocks for
 * one that does, the whole grid otherwise) and its sums are scaled by the
 * parts' weights, which is exact; the ratios are made of the scaled sums.
 *
 * The metric set is what the document reports (api/report_dump.c names the
 * fields): divergent branch targets, branch targets, uniform ones, thread-
 * level FFMAs, warp instructions and thread instructions, all sums; the
 * uniform share and the lanes per instruction are made of them. The first
 * four have no hardware counter (only software patching tells a divergent
 * branch, and the FMA pipe's count also holds the IMADs of the index
 * arithmetic), so every set patches the kernels' SASS (tens to hundreds of
 * times slower per block: hence the reduced grids). Two sets, chosen with
 * DV_COUNTERS_SET (read at each rebuild):
 *   patched   (the default) the instruction counts patched too, so the set
 *             is one pass: smsp__sass_inst_executed.sum and
 *             smsp__sass_thread_inst_executed.sum. On an H200 they are the
 *             hardware's warp instructions to the instruction on every row
 *             compared; the thread instructions of a loop whose threads
 *             leave it at different trips run a few hundredths of a percent
 *             under the hardware's (equal at the digits the service prints).
 *             A pass of the hardware counters costs about 5 ms per table
 *             there, far more than counting every instruction instead of the
 *             FFMAs and branches only adds to the patched launches;
 *   hardware  smsp__inst_executed.sum and smsp__thread_inst_executed.sum
 *             from the hardware counters, in a second pass (the pass this
 *             service used before made the same counts so).
 * Only the patched set counts nothing the kernels do not run patched, so
 * only it may be started while unpatched kernels queued before it are still
 * running (counters_alongside()).
 *
 * A failure of any CUPTI call, a value CUPTI does not give, or a launch that
 * fails inside the pass leaves every row of the table without counters
 * (`present` 0) with the reason, and marks the profiler for a rebuild at the
 * next counters_prepare(); a sticky CUDA error marks it lost (no CUPTI or
 * CUDA call follows: the process must end).
 *
 * DV_COUNTERS_GRID=full launches every row on its whole grid (=reduced, the
 * default, on the blocks that stand for it), to compare with.
 *
 * One thread uses a struct counters; the CUDA context it was prepared on
 * must be current whenever it is used.
 */
#ifndef DV_COUNTERS_H
#define DV_COUNTERS_H

#include "kernels/model/model/experiment.h"
#include "kernels/model/model/testimony.h"

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

/* Ends the range profiler and CUPTI's profiler now, as counters_free()
 * does, and leaves `c` for the next counters_prepare() to rebuild; accepts
 * NULL, and after a sticky error makes no call. While a process holds the
 * profiler, another process's SASS metrics are refused (on an H200 with
 * driver 580 cuptiSassMetricsSetConfig answers CUPTI_ERROR_INVALID_PARAMETER),
 * so the holder lets go before it starts one (jobs/instrproc.h). */
void counters_release(struct counters *c);

/* 1 after a sticky CUDA error inside a pass: `c` makes no CUPTI call again
 * (counters_prepare() refuses) and the process must not touch CUDA. */
int counters_lost(const struct counters *c);

/* The two metric sets (see the top of this file). */
enum counters_set { COUNTERS_SET_PATCHED, COUNTERS_SET_HARDWARE };

/* The set `c` (prepared) collects. */
enum counters_set counters_set_of(const struct counters *c);

/* 1 when a pass of `c` may begin while kernels that are not profiled, queued
 * on the default stream before it, are still running: its set counts only
 * what runs patched inside its ranges (the patched set). 0 for NULL. */
int counters_alongside(const struct counters *c);

/* The passes the metric set took in the last counters_profile() of `c`, in
 * each of its sessions of at most 4 ranges (0 before any). */
unsigned counters_passes(const struct counters *c);

/* The launches the last counters_profile() of `c` made and the blocks they
 * ran, every pass counted (0 before any, and for NULL). */
void counters_launched(const struct counters *c, unsigned *launches, unsigned long long *blocks);

/* The host time of the range profiler's first Start after it was enabled,
 * when a pass since the last call made it (0 otherwise), then 0: starting
 * the profiler's hardware for the first time (a hundred milliseconds and
 * more where the later Starts take one or two) belongs to setting the
 * profiler up, not to the table whose pass happened to be first. */
double counters_take_start_ms(struct counters *c);

/* How the pass launches a table's rows: launch(ctx, row, p, err) enqueues
 * row `row`'s timed kernel on span `p` (the same launch each pass: same
 * inputs, same output buffer); wait(ctx, err) waits for everything enqueued
 * (NULL: cudaDeviceSynchronize()). Both return 0 or a DV_* code with
 * `err`. A span is blocks first .. first + blocks - 1 of the row's stand-in
 * grid (`standin` 1: the grid has one, model/model/testimony.h) or the first
 * `blocks` blocks of its own grid (first 0); DV_COUNTERS_GRID=full always
 * asks for the whole grid, stand-in or not. */
struct counters_span {
    unsigned first, blocks;
    int standin;
};
struct counters_launch {
    int (*launch)(void *ctx, unsigned row, const struct counters_span *p, char *err);
    int (*wait)(void *ctx, char *err);
    void *ctx;
    /* Enqueued before each range is opened, outside it (NULL: nothing):
     * the DRAM pass's flush of the L2. */
    int (*before)(void *ctx, unsigned row, char *err);
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
 * (model/model/testimony.h) against its whole grid and evaluations[row]
 * evaluations of its branch per thread, and compared across the table; the
 * launches and blocks into t->counters_launches and t->counters_blocks. A
 * pass that fails leaves its reason in tm->counters_reason, marks *c for a
 * rebuild (or lost, after a sticky CUDA error) and sets *c NULL, so later
 * tables of the job do not ask again. Returns 0 when the rows have their
 * counters, else counters_profile()'s code (COUNTERS_REFUSED, or the DV_*
 * code of a failed launch or wait: DV_ESTICKY after a sticky error, when no
 * CUDA call may follow); what that means for the table is the caller's
 * (gpu/testimony_run.h: a pass that fails never fails the table). */
int counters_table(struct counters **c, struct dv_table *t, const struct testimony_grid *grids,
                   const struct counters_launch *l, const unsigned *evaluations, struct dv_testimony *tm);

/* ---- arithmetic intensity ---- */
/* The DRAM pass: dram__bytes_read.sum of one launch of each row's whole
 * grid (rows 0..nrows-1, row r on blocks[r] blocks: span {0, blocks[r], 0}),
 * in sessions of their own with that hardware counter alone (its host
 * object and images built at the first call and kept; the range profiler
 * enabled afresh before the pass and after it), l->before enqueued
 * before each range (the caller's L2 flush). Into bytes[row] (NaN when not
 * read). Returns 0; COUNTERS_REFUSED with `reason`; or the DV_* code of a
 * failed launch or wait. A failure marks `c` for a rebuild (lost after a
 * sticky error), as counters_profile() does. `c` must be prepared, and no
 * other kernel may run while it counts (the counter is the whole GPU's). */
int counters_dram(struct counters *c, unsigned nrows, const unsigned *blocks, const struct counters_launch *l,
                  double *bytes, char *reason);
/* ---- end arithmetic intensity ---- */

#ifdef __cplusplus
}
#endif

#endif /* DV_COUNTERS_H */
