/* session.h -- what a process that measures many jobs keeps between them.
 *
 * A GPU worker measures job after job on one device. What does not change
 * between jobs is kept here instead of being rebuilt per job: the device's
 * identity (device_query), the input buffer (grown when a bigger grid comes;
 * the input pattern depends only on the thread index, so a longer buffer's
 * prefix is the shorter one), one device output and one pinned host output
 * per row slot (grown as needed, poisoned again for every table), the path
 * masks of the rows (host and device, per predicate and grid), the CPU
 * reference chains per iteration count, the clock spin's buffer, the
 * latest measured SM clock (what the auto grid is chosen with), the witness
 * records' buffers (device and pinned host, grown as needed) and the
 * hardware-counter profiler (gpu/counters.h: CUPTI loaded, initialised and
 * enabled once, rebuilt after a pass that failed).
 *
 * Nothing measured is cached: every job still warms up, samples, stops on
 * its noise rule and checks every output element. A cached buffer's
 * contents are never trusted across jobs except the input and the masks,
 * which are pure functions of their keys.
 *
 * session_create() touches no CUDA (a process without a GPU can hold one);
 * the first request for a device fact or buffer does. One thread uses a
 * session. measure.h's measure_run() is one job in a one-shot session.
 */
#ifndef DV_SESSION_H
#define DV_SESSION_H

#include <stdint.h>

#include <cuda_runtime_api.h>

#include "kernels/model/model/analysis.h"
#include "kernels/model/model/experiment.h"
#include "kernels/model/model/witness_record.h"

#ifdef __cplusplus
extern "C" {
#endif

struct session;

/* An empty session (no CUDA yet), or NULL when out of memory. */
struct session *session_create(void);

/* Frees every buffer the session holds; accepts NULL. */
void session_free(struct session *s);

/* The identity of device `ordinal` into `d`, queried once per ordinal and
 * made current. Asking for another ordinal drops every device buffer first.
 * Returns 0 or the DV_* code of device_query(). */
int session_device(struct session *s, int ordinal, struct dv_device *d, char *err);

/* The device input: at least `n` values of reference_input(). Returns NULL
 * with `err` and *rc set to the DV_* code on failure. */
const float *session_input(struct session *s, unsigned long long n, int *rc, char *err);

/* Row slot `slot` (< DV_MAX_ROWS): a device output of at least `n` floats,
 * poisoned with NaN (0xff bytes) on the default stream, and a pinned host
 * buffer of the same size into *host. Returns the device buffer, or NULL
 * with *rc and `err`. */
float *session_output(struct session *s, unsigned slot, unsigned long long n, float **host, int *rc, char *err);

/* The floats row slot `slot`'s output holds now (0: none made yet): what a
 * table of that many threads or fewer finds made. */
unsigned long long session_output_room(const struct session *s, unsigned slot);

/* The reference chains of reference_chains(iterations) into *a and *b,
 * computed once per iteration count. Returns 0 or -1 with `err`. */
int session_chains(struct session *s, unsigned iterations, const float **a, const float **b, char *err);

/* Builds the phase-0 path mask of a row over a grid (malloc'd), or NULL with `err`. */
typedef uint32_t *(*session_mask_fn)(const struct dv_row *row, const struct dv_geometry *g, char *err);

/* The path mask of `row` over grid `g`, built by `build` once per (kernel,
 * mode, predicate, grid) and kept; with `device` non-NULL also a device copy
 * into *device. Returns the host mask, or NULL with *rc and `err`. */
const uint32_t *session_mask(struct session *s, const struct dv_row *row, const struct dv_geometry *g,
                             session_mask_fn build, const uint32_t **device, int *rc, char *err);

/* The SM clock to plan with: the mean of the latest job's interleaved clock
 * samples, or one dedicated smclock_measure() when the session has none.
 * Returns 0 or a DV_* code. */
int session_clock_hint(struct session *s, double *mhz, char *err);

/* Records a job's measured mean clock as the next hint. */
void session_clock_note(struct session *s, double mhz);

/* A device buffer for the clock spin (one long long per SM), or NULL with
 * *rc and `err`. */
long long *session_spin_buffer(struct session *s, unsigned sms, int *rc, char *err);

/* A reusable event (no timing) for row slot `slot`, or NULL with *rc. */
cudaEvent_t session_event(struct session *s, unsigned slot, int *rc, char *err);

/* The witness buffers for `records` block records (a batch of rows of a
 * grid, gpu/witness.h): a device array into *dev, and two host arrays of as
 * many records, *seen (pinned, what the GPU's records are copied into) and
 * *expected (the model's). They grow to the most asked for and are kept;
 * their contents are not. Returns 0 or a DV_* code. */
int session_witness(struct session *s, unsigned records, struct dv_witness_block **dev, struct dv_witness_block **seen,
                    struct dv_witness_block **expected, char *err);

struct counters; /* gpu/counters.h */

/* The session's hardware-counter profiler, ready for device `d` (queried
 * by session_device()) on the current context: built on the first call and
 * after a pass that failed, kept otherwise. NULL with `reason` (and
 * *library "") when counters cannot be read; *library (256 bytes) the
 * CUPTI library loaded. */
struct counters *session_counters(struct session *s, const struct dv_device *d, char *library, char *reason);

/* 1 after a sticky CUDA error inside a counter pass (counters_lost()): the
 * session must only be freed, and its process must not touch CUDA again. */
int session_lost(const struct session *s);

/* Lets go of the session's CUPTI profiler (counters_release()) until the
 * next counter pass rebuilds it: before another process profiles the GPU.
 * Takes a struct session * as void * (an instrproc_config hook). */
void session_release_profiler(void *s);

/* An optional progress hook (a terminal's: the CLI's `measure`), the
 * session's own: measure_run_session() calls it on the session's thread
 * before table `table` (0-based, of `ntables`) with `done` 0, and after it
 * with `done` 1 and `t` holding its rows' samples and GPU time. NULL (the
 * default) turns it off; the worker never sets one. */
typedef void (*session_progress_fn)(void *ctx, unsigned table, unsigned ntables, const struct dv_table *t, int done);
void session_set_progress(struct session *s, session_progress_fn fn, void *ctx);

/* Calls the session's progress hook, when it has one. */
void session_progress(const struct session *s, unsigned table, unsigned ntables, const struct dv_table *t, int done);

#ifdef __cplusplus
}
#endif

#endif /* DV_SESSION_H */
