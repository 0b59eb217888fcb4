/* witness.h -- one untimed launch of a row's witness instantiation and its
 * per-block record brought back (model/witness_record.h).
 *
 * The caller's launch function enqueues the witness kernel of row `row`
 * writing one struct dv_witness_block per block to `d_rec`.
 * witness_enqueue() queues, on the default stream, a zeroing of `d_rec`,
 * the launch and one copy of the records into `host` (pinned: the copy runs
 * without the host), and returns at once, so the caller builds the model's
 * record on the CPU while the GPU runs; witness_wait() waits for the copy.
 * The buffers are the caller's (gpu/session.h keeps one pair for the
 * session's life), `blocks` records each. model/testimony.h compares the
 * record with the model.
 */
#ifndef DV_WITNESS_H
#define DV_WITNESS_H

#include "kernels/model/witness_record.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef int (*witness_launch_fn)(void *ctx, unsigned row, struct dv_witness_block *d_rec, char *err);

/* Returns 0 or the DV_* code of the failed zeroing, launch or copy. */
int witness_enqueue(unsigned blocks, witness_launch_fn launch, void *ctx, unsigned row, struct dv_witness_block *d_rec,
                    struct dv_witness_block *host, char *err);

/* Waits for everything witness_enqueue() queued. Returns 0 or a DV_* code
 * (an error of the launch surfaces here). */
int witness_wait(char *err);

#ifdef __cplusplus
}
#endif

#endif /* DV_WITNESS_H */
