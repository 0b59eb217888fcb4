/* testimony_run.h -- the testimony of a measured table, after its timed
 * samples: the witness pass (gpu/witness.h) and the counter pass
 * (gpu/counters.h), written once for every kind of table.
 *
 * What is the same for every table is here (as nvbench's measure_cupti
 * keeps the part that does not depend on the benchmark in one base): find,
 * once, the blocks that stand for each row's grid, for both passes; start
 * the witness; run the counter pass while the witness kernels still run
 * where its metric set allows it (counters_alongside()), its first launch
 * waiting for them, else after the witness; finish the witness; and time
 * each step into the witness's or the counters' share. What differs is the
 * table's (struct testimony_table): how a row's standing blocks are found,
 * how a row is launched for the witness and for the counters, and how the
 * witness's records are modelled and compared (lesson_measure.c,
 * scenario_measure.c).
 *
 * What a failure means, decided here for every table:
 *   - finding the standing blocks, starting or finishing the witness: the
 *     table fails with that DV_* code;
 *   - the counter pass (counters_table()'s code): never the table's
 *     failure. Its rows have no counters and tm->counters_reason says why;
 *     a sticky CUDA error in it also loses the session's profiler
 *     (session_lost(): measure.c measures no table after this one and the
 *     worker ends after the job). A sticky error comes only from a launch
 *     or a wait of the pass, and a pass that runs alongside the witness
 *     waits for it before its first launch: by then the witness's records
 *     are on the host, and witness_finish() compares them without a CUDA
 *     call. A witness that failed fails the table with its own code.
 */
#ifndef DV_TESTIMONY_RUN_H
#define DV_TESTIMONY_RUN_H

#include "kernels/gpu/counters.h"
#include "kernels/gpu/witness.h"
#include "kernels/model/model/testimony.h"
#include "kernels/model/model/types.h"

#ifdef __cplusplus
extern "C" {
#endif

struct session; /* gpu/session.h */

/* What stands for row `row`'s grid in both passes: the counter pass's grid,
 * the blocks the witness kernel runs, and how often a thread of the row
 * evaluates its branch (what the counters' per-block figures divide by). */
struct testimony_row {
    struct testimony_grid grid;
    unsigned witness_blocks;
    unsigned evaluations;
};

/* What a kind of table does in its testimony (one constant per kind, as
 * nvbench's measure_cupti keeps what varies behind a few calls); every
 * callback gets the table's `ctx`. */
struct testimony_ops {
    /* Row `row`'s standing blocks into *out. Returns 0 or a DV_* code with
     * `err`. */
    int (*prepare)(void *ctx, unsigned row, struct testimony_row *out, char *err);
    /* The witness pass's callbacks (gpu/witness.h, struct witness_rows). */
    witness_launch_fn witness_launch;
    int (*expect)(void *ctx, unsigned row, unsigned launched, struct dv_witness_block *exp, char *err);
    void (*observe)(void *ctx, unsigned row, unsigned launched, const struct dv_witness_block *seen,
                    const struct dv_witness_block *exp);
    /* Enqueues row `row`'s timed kernel on `span` for the counter pass, and
     * waits for what was enqueued (NULL: cudaDeviceSynchronize()): struct
     * counters_launch's launch and wait. */
    int (*count)(void *ctx, unsigned row, const struct counters_span *span, char *err);
    int (*wait)(void *ctx, char *err);
};

/* One table's testimony: its rows, its kind's calls and their context. */
struct testimony_table {
    struct dv_table *t; /* rows 0..t->nrows-1 (at most DV_MAX_ROWS) */
    unsigned blocks;    /* the rows' grid                          */
    int witness;        /* 0: no witness pass (witness: false)      */
    const struct testimony_ops *ops;
    void *ctx;
};

/* The testimony of table x->t in session `s` (see the top): the witness
 * unless x->witness is 0, the counters unless *cnt is NULL, each timed on
 * the host into tm->witness_ms and tm->counters_ms, the table's share into
 * t->cost_witness_ms / t->cost_counters_ms (NaN for a pass that did not run
 * for it) and the whole into t->host_testimony_ms. A counter pass that fails leaves its reason in
 * tm->counters_reason and sets *cnt NULL, so later tables do not ask again.
 * Returns 0 or a DV_* code with `err`. */
int testimony_run(struct session *s, const struct testimony_table *x, struct dv_testimony *tm, struct counters **cnt,
                  char *err);

#ifdef __cplusplus
}
#endif

#endif /* DV_TESTIMONY_RUN_H */
