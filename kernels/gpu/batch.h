/* batch.h -- several readers' requests measured in one session: a class
 * that presses Measure at once.
 *
 * The GPU worker (server/jobs/workerproc.h) gets a batch from its
 * supervisor: requests of one Part 1 table each, on the same kernel and
 * grid with the same testimony switches (api/options.h's batch key says
 * which), each with its own predicates and its own rule (target, sample
 * bounds, budget). batch_measure() plans every reader's report as
 * measure_run_session() would (gpu/measure.h's steps), joins their tables
 * into one union table of their distinct rows (model/stats/batchplan.h),
 * and measures that table once with lesson_measure_table_timed(): one
 * warm-up per distinct row; then each reader's own rounds, one reader after
 * another, each the launches of its own table in its order under its own
 * rule, as alone (batchplan.h says why not rounds over the union); one
 * reference check per distinct row, and the testimony (witness and
 * counters) in one pass over the union's rows. Each reader's table then
 * gets its rows' checks, witness and counters (the counters' comparison
 * made again against its own baseline) and its own statistics, and its
 * report is finished on its own: the clock, the FMA floor, the correctness
 * gate. So a row that fails its check fails the readers whose tables hold
 * it and no other, and each reader's table says in batch_readers /
 * batch_rows that it was measured in a batch.
 *
 * A request that does not fit the first reader's (another grid, table or
 * switch: the supervisor never sends one) is measured alone after the batch,
 * and a batch whose union would pass DV_MAX_ROWS rows is measured reader by
 * reader: a batch is a saving, never a condition of being measured.
 */
#ifndef DV_BATCH_H
#define DV_BATCH_H

#include "kernels/model/model/experiment.h"
#include "kernels/model/stats/batchplan.h"

#ifdef __cplusplus
extern "C" {
#endif

struct session; /* gpu/session.h */

/* Measures the `n` requests `o[i]` (1..BATCHPLAN_MAX_READERS) into the
 * reports `r[i]` (from experiment_report_create()) in session `s`. Each
 * reader's result is rc[i] (0, DV_EGATE with its report complete, DV_ERR,
 * DV_ENOGPU, DV_ESTICKY: measure_run_session()'s codes) with err[i] when
 * not 0; a reader measured in the union has tables[0].batch_readers > 1,
 * and *shared_gpu_ms is the union's timed GPU work (every row's, each
 * once; 0 when there was no union), of which each reader's own
 * gpu_time_ms is the part its rows took. After a DV_ESTICKY the session
 * must only be freed. */
void batch_measure(struct session *s, const struct dv_options *const *o, struct dv_report *const *r, unsigned n,
                   int *rc, char (*err)[ERR_LEN], double *shared_gpu_ms);

#ifdef __cplusplus
}
#endif

#endif /* DV_BATCH_H */
