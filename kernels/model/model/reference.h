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
#include "kernels/model/model/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Fills `in[0..n)` with the input pattern (dv_input_value). */
void reference_input(float *in, unsigned long long n);

/* Chain results per distinct input: a[v] (path A), b[v] (path B), for
 * `iterations` FMAs. Returns 0, or -1 with err when some input gives the
 * same value on both paths (the gate could not tell the paths apart). */
int reference_chains(unsigned iterations, float *a, float *b, char *err);

/* Checks one row's output `out[0..n)` against the reference. A row that
 * evaluates its branch once (experiment_row_evaluations(): the branch, mask
 * and no-branch kernels) by its phase-0 path `mask` (bit set = path A; the
 * no-branch row's is all ones); a row that evaluates it every iteration by
 * re-running the choice of its predicate (experiment_row_predicate()) at
 * every phase, memoised by the thread's sequence of choices, which is
 * periodic for the built-ins. `a`, `b` from reference_chains(). Fills
 * `check`. Returns 0, or -1 with err (out of memory, no mask, a predicate
 * that is not periodic). */
int reference_check(const struct dv_row *row, const struct dv_geometry *g, const uint32_t *mask,
                    const float *a, const float *b, unsigned iterations, const float *out,
                    struct dv_check *check, char *err);

#ifdef __cplusplus
}
#endif

#endif /* DV_REFERENCE_H */
