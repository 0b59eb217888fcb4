/* throttle.h -- which rounds ran under a throttled SM clock, so that they
 * are dropped from every row and sampled again.
 *
 * A round run while the GPU was power- or heat-throttled times a different
 * machine: its samples would pull every row's median towards the throttled
 * clock, and the rows sampled later in the round more than the earlier ones.
 * A whole round is the unit dropped, never one row's sample, so the rows
 * stay paired round by round (ratio.h).
 *
 * The clock is read between rounds, not during them: the timing loop reads it
 * before a batch of rounds and then only every few milliseconds of timed
 * work. `mhz[k]` is the reading taken just before round k, NaN where none
 * was. A round lies between the last reading at or before it and the first
 * after it; the clock may have fallen at any moment in between, so a round
 * is dropped when either reading is low (throttle_mark). Rounds before the
 * first reading take the first; rounds after the last take the last; with
 * no reading at all nothing is dropped (there is nothing to judge by, and
 * the report says the clock was not measured). Where each round carries its
 * own reading or flag (a clock the kernel records while it runs),
 * throttle_mark_each judges each round by its own alone.
 *
 * Low means under `fraction` of the rated clock (THROTTLE_DEFAULT_FRACTION,
 * the threshold the report's clock warning uses). Host-only and pure.
 */
#ifndef DV_THROTTLE_H
#define DV_THROTTLE_H

#include "kernels/base/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define THROTTLE_DEFAULT_FRACTION 0.75

/* Whether a clock reading of `mhz` is under `fraction` of `rated_mhz`: the
 * one rule for "throttled", for the guard here and for the report's clock
 * warning. A NaN reading is not low (not read); rated_mhz <= 0 judges
 * nothing low (no rated clock known). */
int throttle_is_low(double mhz, double rated_mhz, double fraction);

/* Marks drop[k] = 1 for each round k in [0, nrounds) to drop, 0 to keep
 * (rule above), and sets *ndropped. Returns 0, or -1 with `err` naming the
 * field when the fraction is not in (0, 1] or a reading is negative or
 * infinite (naming its index). */
int throttle_mark(const double *mhz, unsigned nrounds, double rated_mhz, double fraction, unsigned char *drop,
                  unsigned *ndropped, char *err);

/* The same for readings taken during each round: drop[k] = 1 when mhz[k] is
 * low (a flag per round maps onto it: 0 for "throttled", the rated clock
 * for "fine"); NaN drops nothing. Same contract as throttle_mark. */
int throttle_mark_each(const double *mhz, unsigned nrounds, double rated_mhz, double fraction, unsigned char *drop,
                       unsigned *ndropped, char *err);

/* Copies the kept rounds of samples[0..nrounds) to out (in round order) and
 * returns how many; `drop` NULL keeps all. `out` may not overlap
 * `samples` unless it is the same array (compaction in place). */
unsigned throttle_keep(const double *samples, const unsigned char *drop, unsigned nrounds, double *out);

#ifdef __cplusplus
}
#endif

#endif /* DV_THROTTLE_H */
