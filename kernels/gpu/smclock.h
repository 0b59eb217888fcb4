/* smclock.h -- the SM clock as the GPU runs it, measured rather than rated.
 *
 * A clock64() spin of a known number of cycles in one block per SM, timed
 * by CUDA events: cycles / time is the clock the timed kernels ran at, which
 * the FMA floor needs and which the rated clock does not promise (boost,
 * power and thermal limits).
 */
#ifndef DV_SMCLOCK_H
#define DV_SMCLOCK_H

#ifdef __cplusplus
extern "C" {
#endif

/* Measures the current device's SM clock into *mhz. Returns 0 or a DV_* code. */
int smclock_measure(double *mhz, char *err);

#ifdef __cplusplus
}
#endif

#endif /* DV_SMCLOCK_H */
