/* warmup.h -- a GPU worker's cold start, paid before it says it is ready.
 *
 * The first job of a fresh worker used to pay for everything a process
 * does once: the hardware-counter profiler built (CUPTI loaded,
 * initialised, its first session), every kernel instantiation loaded by its
 * first launch (CUDA loads modules lazily), the session's buffers, masks and
 * reference chains made, the SM clock measured for the auto grid. The class
 * waited on it (740 ms for a job of 12 ms). warmup_run() does all of that
 * before the worker's hello (server/jobs/workerproc.h), so the server's
 * /readyz says ready only once the first reader pays what the hundredth
 * pays: it measures, in the worker's own session, the two requests that
 * launch every kernel instantiation the lesson's suites and its widget run
 * (the lesson's Part 1 and Part 2 on the built-in predicates: the branch,
 * no-branch and per-iteration kernels; and an expression beside the
 * baseline, as "Measure this" sends it: the mask kernel), each timed, and
 * with the testimony (the witness instantiations, the counter pass) when
 * the worker takes it, a few rounds each; then the row slots of a full
 * batch (DV_MAX_ROWS outputs and events on that grid), which the first
 * batch of a class would otherwise make. Last, once warm, the widget's
 * request as the widget sends it (its default rounds and stopping rule),
 * measured once more (about one job's time, ~15 ms on the H200): what a
 * job of the widget's kind takes on this worker, which the worker's hello
 * hands the queue's drain estimate (server/jobs/runest.h, a seed), so a
 * fresh server's class is not told forty default runs of waiting. Nothing
 * of it is kept but what the session keeps between jobs anyway.
 */
#ifndef DV_WARMUP_H
#define DV_WARMUP_H

#include "kernels/base/status.h"

#ifdef __cplusplus
extern "C" {
#endif

struct session;    /* gpu/session.h */
struct dv_options; /* model/model/types.h */

/* Where the warm-up's time went (host milliseconds). */
struct warmup_report {
    double total_ms;    /* the whole warm-up                                  */
    double profiler_ms; /* the counter profiler's set-up (CUPTI), inside it    */
    double lesson_ms;   /* the lesson's Part 1 and 2 (branch, no-branch, per-
                           iteration kernels), the profiler included           */
    double mask_ms;     /* an expression's table (the mask kernel)            */
    double reserve_ms;  /* a full batch's row slots made (outputs, events)    */
    double widget_ms;   /* the widget's request (warmup_widget_request()) on
                           the warm worker, measured last; 0 when the warm-up
                           failed before it or it failed                       */
    unsigned rows;      /* rows measured, over every request                  */
    char counters_reason[ERR_LEN]; /* why the profiler is not there, "" when it is */
};

/* Warms session `s` on device `ordinal` (session_device() answered already),
 * with the witness and counters when `testimony`. Returns 0; DV_ESTICKY
 * when a CUDA error lost the context (the worker must not measure); another
 * DV_* code with `err` when a warm-up measurement failed otherwise (the
 * worker can still measure: its first job then pays what is left). */
int warmup_run(struct session *s, int ordinal, int testimony, struct warmup_report *w, char *err);

/* Fills `o` with the widget's "Measure this" (experiment_widget_request())
 * for the warm-up's expression on device `ordinal`, as a worker that takes
 * the testimony when `testimony` runs it: without, no witness and no
 * counters (server/jobs/workerproc.c reads every job so). With `testimony`
 * 1 it is the request as the widget sends it, whose kind (api's
 * options_job_kind()) the server gives the widget's jobs. */
void warmup_widget_request(struct dv_options *o, int ordinal, int testimony);

#ifdef __cplusplus
}
#endif

#endif /* DV_WARMUP_H */
