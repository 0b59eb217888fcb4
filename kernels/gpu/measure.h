/* measure.h -- the one measurement entry point: a validated request in, a
 * measured report out, for Part 1/2 and scenario tables alike.
 *
 * measure_run_session() takes the device's identity from the session
 * (gpu/session.h: queried once per process), picks the grid when `blocks`
 * is auto (with the session's latest measured clock), plans the tables
 * (model/model/experiment.h), takes the session's input buffer (never zeros, never
 * constant) shared by every table, then per table hands the rows to the
 * table kind's code (lesson_measure.h or scenario_measure.h), which times
 * them with the shared engine (timing.h) and checks every output element
 * against the CPU reference. The SM clock is sampled by a short spin in
 * every batch of timed rounds (timing.h); the FMA floor uses the mean of
 * this job's samples and the throttle warning their minimum. measure_run()
 * is the same in a one-shot session.
 *
 * The correctness gate is applied here, once, whatever the table kind: a row
 * whose output differs from the reference leaves the report complete (every
 * table measured, the row's check naming the first wrong thread, a warning)
 * and makes the result DV_EGATE with `err` naming the table, the row and the
 * thread. The CLI prints the report and exits 1; the server files the job as
 * failed with the document attached.
 *
 * Return codes (base/status.h): 0; DV_EGATE as above; DV_ERR for a failure
 * that leaves the device usable; DV_ENOGPU when there is no usable device;
 * DV_ESTICKY when a CUDA error poisoned the context, after which the process
 * must not touch CUDA again (the server restarts its worker).
 */
#ifndef DV_MEASURE_H
#define DV_MEASURE_H

#include "kernels/model/model/experiment.h"

#ifdef __cplusplus
extern "C" {
#endif

struct session; /* gpu/session.h */

/* Measures `o` into `r` (a report from experiment_report_create()) in a
 * session made for this one job. */
int measure_run(const struct dv_options *o, struct dv_report *r, char *err);

/* Measures `o` into `r` with what session `s` keeps between jobs (the
 * device, buffers, masks, reference chains, the clock to plan with), telling
 * the session's progress hook (session_set_progress()) as each table starts
 * and ends. After DV_ESTICKY the session must only be freed. */
int measure_run_session(struct session *s, const struct dv_options *o, struct dv_report *r, char *err);

/* The steps of measure_run_session(), in its order, for a batch of
 * readers (gpu/batch.h), which runs each step once per reader around one
 * table measured for all of them. `clk` is the clock of the timed rounds
 * (gpu/timing.h); `cnt` the job's profiler. */
struct counters;
struct timing_clock;

/* The device into r->device, the grid when o->blocks is auto (written into
 * `o`, with the clock it was chosen with into *mhz, 0 otherwise), the
 * tables (plan_report()) and what the testimony was asked for. Returns 0 or
 * a DV_* code. */
int measure_plan(struct session *s, struct dv_options *o, struct dv_report *r, double *mhz, char *err);

/* The job's hardware-counter profiler (session_counters(), its set-up
 * timed into the testimony), or NULL with the reason in r->testimony. */
struct counters *measure_counters(struct session *s, const struct dv_options *o, struct dv_report *r);

/* What every table of `r` reads: the device input, the reference chains
 * (lesson tables) and the clock's spin buffer (into clk). */
struct measure_inputs {
    const float *d_in, *ref_a, *ref_b;
};
int measure_inputs(struct session *s, const struct dv_options *o, struct dv_report *r, struct timing_clock *clk,
                   struct measure_inputs *in, char *err);

/* After the tables (`rc` their result, `counted` 1 when the profiler was
 * still there at the end): the testimony's outcome, then, when `rc` is 0,
 * the clock, the throttle warning, the FMA floor and the correctness gate.
 * Returns `rc`, or the gate's result. */
int measure_finish(struct session *s, const struct dv_options *o, struct dv_report *r, const struct timing_clock *clk,
                   int rc, int counted, char *err);

#ifdef __cplusplus
}
#endif

#endif /* DV_MEASURE_H */
