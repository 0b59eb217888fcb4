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

#ifdef __cplusplus
}
#endif

#endif /* DV_MEASURE_H */
