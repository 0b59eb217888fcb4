/* witness.h -- one untimed launch of a row's witness instantiation and its
 * per-block record brought back (model/witness_record.h).
 *
 * The caller's launch function enqueues the witness kernel of row `row`
 * writing one struct dv_witness_block per block to `d_rec`; witness_run()
 * owns the device buffer, zeroes it, synchronises and downloads it into
 * `host` (`blocks` records). model/testimony.h compares it with the model.
 */
#ifndef DV_WITNESS_H
#define DV_WITNESS_H

#include "kernels/model/witness_record.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef int (*witness_launch_fn)(void *ctx, unsigned row, struct dv_witness_block *d_rec, char *err);

/* Returns 0 or the DV_* code of a failed allocation, launch or copy. */
int witness_run(unsigned blocks, witness_launch_fn launch, void *ctx, unsigned row, struct dv_witness_block *host,
                char *err);

#ifdef __cplusplus
}
#endif

#endif /* DV_WITNESS_H */
