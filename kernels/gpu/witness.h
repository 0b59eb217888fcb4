/* witness.h -- the witness pass of a table: one untimed launch of each row's
 * witness instantiation, its per-block record brought back
 * (model/model/witness_record.h) and compared with the model's.
 *
 * A row's witness kernel runs the blocks that stand for its grid (one
 * block for a predicate that does not read blockIdx.x, one period of blocks
 * for one that does, testimony_lesson_grid()), or the whole grid; only
 * those blocks have records, here and in the model, and the comparison
 * counts each for the blocks it stands for (testimony_observe_standing()).
 *
 * witness_start() allocates the session's record buffers (gpu/session.h,
 * kept for its life) and, when every row's records fit in one batch
 * (WITNESS_BATCH_BYTES of each buffer), queues on the default stream each
 * row's zeroing of its records, its witness launch and one copy of the
 * records into pinned host memory, and builds the model's records on the
 * CPU while the GPU runs them. The caller may then do other host work, and
 * queue work of its own once witness_settle() has waited for the witness
 * (the counter pass does both: its set-up overlaps the witness kernels).
 * witness_finish() waits (if nobody did), compares row by row
 * (model/model/testimony.h), or, for a table too big for one batch, runs it then,
 * batch after batch.
 */
#ifndef DV_WITNESS_H
#define DV_WITNESS_H

#include "kernels/base/status.h"
#include "kernels/model/model/witness_record.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The most bytes of records (each of the device, pinned and model buffers)
 * one batch of rows uses: 9 rows that run the whole of a 4096-block grid. */
#define WITNESS_BATCH_BYTES (12u << 20)

struct session; /* gpu/session.h */

/* Enqueues row `row`'s witness kernel writing one record per block to
 * `d_rec`. Returns 0 or a DV_* code with `err`. */
typedef int (*witness_launch_fn)(void *ctx, unsigned row, struct dv_witness_block *d_rec, char *err);

/* A table's witness pass: rows 0..nrows-1 on grids of `blocks` blocks. */
struct witness_rows {
    unsigned nrows, blocks;
    /* NULL, or per row the blocks its witness kernel runs (<= blocks): the
     * first ones, which stand for the rest of the grid (block b for the
     * blocks b mod row_blocks[row]); `launch` launches that many. */
    const unsigned *row_blocks;
    witness_launch_fn launch;
    /* The model's records of the first `launched` blocks of row `row` into
     * `exp` (not zeroed). Returns 0, or -1 with `err`. */
    int (*expect)(void *ctx, unsigned row, unsigned launched, struct dv_witness_block *exp, char *err);
    /* Row `row`'s records of its first `launched` blocks as the GPU saw
     * them against the model's. */
    void (*observe)(void *ctx, unsigned row, unsigned launched, const struct dv_witness_block *seen,
                    const struct dv_witness_block *exp);
    void *ctx;
};

/* One witness pass, between witness_start() and witness_finish(). */
struct witness_pass {
    const struct witness_rows *w;
    struct session *s;
    struct dv_witness_block *d_rec, *seen, *exp;
    int all;           /* every row fits one batch                      */
    int queued;        /* every row queued and modelled by _start()     */
    int settled;       /* the queued rows waited for                    */
    int rc;            /* the wait's result                             */
    double settle_ms;  /* host time witness_settle() waited             */
    char err[ERR_LEN]; /* the wait's error                              */
};

/* Starts the pass of `w` in session `s` into `p` (see the top). Returns 0,
 * or the DV_* code of the failed allocation, zeroing, launch or copy, or
 * DV_ERR when a model cannot be built; after a failure nothing queued is
 * still running, except after a sticky error. */
int witness_start(struct session *s, const struct witness_rows *w, struct witness_pass *p, char *err);

/* Waits for what witness_start() queued, once (later calls return the same
 * result without a CUDA call): 0 or the DV_* code, an error of a launch
 * included, with `err`. */
int witness_settle(struct witness_pass *p, char *err);

/* Ends the pass: settles it, then compares each row's records with the
 * model's; a pass that queued nothing runs every batch here. Returns 0 or
 * a DV_* code as witness_start(). */
int witness_finish(struct witness_pass *p, char *err);

#ifdef __cplusplus
}
#endif

#endif /* DV_WITNESS_H */
