/* reference.h -- the CPU reference and the correctness gate.
 *
 * The reference runs the same chains as the kernels (chain.h) with fmaf(),
 * which rounds once exactly as the GPU's FFMA does, so a correct kernel
 * matches bit for bit. Each chain is computed once per distinct input value
 * (DV_INPUT_DISTINCT of them), not once per thread.
 */
#ifndef DV_REFERENCE_H
#define DV_REFERENCE_H

#include <stdint.h>
#include "kernels/model/experiment.h"
#include "kernels/model/analysis.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Fills `in[0..n)` with the input pattern (dv_input_value). */
void reference_input(float *in, unsigned long long n);

/* Chain results per distinct input: a[v] (path A), b[v] (path B), for
 * `iterations` FMAs. Returns 0, or -1 with err when some input gives the
 * same value on both paths (the gate could not tell the paths apart). */
int reference_chains(unsigned iterations, float *a, float *b, char *err);

/* Checks one row's output `out[0..n)` against the reference:
 * BRANCH / MASK rows by the path mask (bit set = path A), NOBRANCH rows by
 * path A everywhere, PERITER rows by re-running the per-iteration choice of
 * dv_takes_path_a(mode, tid, block, k) (memoised by the thread's sequence of
 * choices, which is periodic for the built-ins). `a`, `b` from
 * reference_chains(). Fills `check`. Returns 0, -1 on OOM with err. */
int reference_check(const struct dv_row *row, const struct dv_geometry *g, const uint32_t *mask,
                    const float *a, const float *b, unsigned iterations, const float *out,
                    struct dv_check *check, char *err);

#ifdef __cplusplus
}
#endif

#endif /* DV_REFERENCE_H */
