/* status.h -- definitions every layer shares: the error buffer convention and
 * the one family of return codes, so a value means the same thing whichever
 * module returned it (the queue's "full" is never the GPU's "no device").
 *
 * Functions return 0 / -1 (or NULL) and fill a caller-supplied
 * `char err[ERR_LEN]` with "what: why": the caller owns the buffer, so an
 * error needs no allocation (it still reports out of memory) and no global
 * state (any thread can fail at once).
 */
#ifndef DV_STATUS_H
#define DV_STATUS_H

#include <stdarg.h>
#include <stdio.h>

#define ERR_LEN 512

/* Return codes beyond -1 for callers that must tell failures apart. */
#define DV_ERR (-1)        /* bad input or a recoverable failure          */
#define DV_ENOGPU (-2)     /* no usable CUDA device: CUDA said why        */
#define DV_ESTICKY (-3)    /* a CUDA error that poisons the context       */
#define DV_EGATE (-4)      /* measured, but the correctness gate failed   */
#define DV_EFULL (-5)      /* the job queue is full: try again later      */
#define DV_ECLOSED (-6)    /* shutting down: nothing new is accepted      */

#ifdef __GNUC__
__attribute__((format(printf, 2, 3)))
#endif
static inline void dv_seterr(char *err, const char *fmt, ...) {
    if (!err) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, ERR_LEN, fmt, ap);
    va_end(ap);
}

#endif /* DV_STATUS_H */
