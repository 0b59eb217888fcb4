/* throttle.c -- the throttle guard (throttle.h): two passes over the
 * readings, one carrying the last reading forward, one carrying the next
 * reading back, so each round meets both readings that bracket it. */
#include "kernels/model/stats/throttle.h"

#include <math.h>
#include <string.h>

int throttle_is_low(double mhz, double rated_mhz, double fraction) {
    if (isnan(mhz) || !(rated_mhz > 0)) return 0;
    return mhz < fraction * rated_mhz;
}

static int check_args(const double *mhz, unsigned nrounds, double fraction, unsigned char *drop, unsigned *ndropped,
                      char *err) {
    *ndropped = 0;
    if (nrounds) memset(drop, 0, nrounds);
    if (!(fraction > 0.0 && fraction <= 1.0)) {
        dv_seterr(err, "throttle: fraction: %g is outside (0, 1]", fraction);
        return DV_ERR;
    }
    for (unsigned k = 0; k < nrounds; k++) {
        if (!isnan(mhz[k]) && (mhz[k] < 0 || isinf(mhz[k]))) {
            dv_seterr(err, "throttle: mhz[%u]: %g is not a clock reading", k, mhz[k]);
            return DV_ERR;
        }
    }
    return 0;
}

static unsigned count(const unsigned char *drop, unsigned nrounds) {
    unsigned n = 0;
    for (unsigned k = 0; k < nrounds; k++) n += drop[k];
    return n;
}

int throttle_mark_each(const double *mhz, unsigned nrounds, double rated_mhz, double fraction, unsigned char *drop,
                       unsigned *ndropped, char *err) {
    if (check_args(mhz, nrounds, fraction, drop, ndropped, err) != 0) return DV_ERR;
    for (unsigned k = 0; k < nrounds; k++) drop[k] = (unsigned char)throttle_is_low(mhz[k], rated_mhz, fraction);
    *ndropped = count(drop, nrounds);
    return 0;
}

int throttle_mark(const double *mhz, unsigned nrounds, double rated_mhz, double fraction, unsigned char *drop,
                  unsigned *ndropped, char *err) {
    if (check_args(mhz, nrounds, fraction, drop, ndropped, err) != 0) return DV_ERR;
    /* Forward: the last reading at or before k; rounds before the first
     * reading are left to the backward pass. */
    int seen = 0, low = 0;
    for (unsigned k = 0; k < nrounds; k++) {
        if (!isnan(mhz[k])) {
            seen = 1;
            low = throttle_is_low(mhz[k], rated_mhz, fraction);
        }
        if (seen && low) drop[k] = 1;
    }
    /* Backward: the first reading after k (a reading at k was taken before
     * round k ran, so it is k's own "before", handled above). Rounds after
     * the last reading have no "after". */
    seen = 0;
    low = 0;
    for (unsigned k = nrounds; k-- > 0;) {
        if (seen && low) drop[k] = 1;
        if (!isnan(mhz[k])) {
            seen = 1;
            low = throttle_is_low(mhz[k], rated_mhz, fraction);
        }
    }
    *ndropped = count(drop, nrounds);
    return 0;
}

unsigned throttle_keep(const double *samples, const unsigned char *drop, unsigned nrounds, double *out) {
    unsigned kept = 0;
    for (unsigned k = 0; k < nrounds; k++)
        if (!drop || !drop[k]) out[kept++] = samples[k];
    return kept;
}
