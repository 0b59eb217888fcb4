/* dv.h -- definitions every layer shares: the error buffer convention and the
 * distinct failure codes the CLI turns into exit statuses.
 *
 * Errors follow redis' anet: functions return 0 / -1 (or NULL) and fill a
 * caller-supplied `char err[ERR_LEN]` with "what: why".
 */
#ifndef DV_DV_H
#define DV_DV_H

#include <stdarg.h>
#include <stdio.h>

#define ERR_LEN 512

/* Return codes beyond -1 for callers that must tell failures apart. */
#define DV_ERR (-1)        /* bad input or a recoverable failure          */
#define DV_ENOGPU (-2)     /* no usable CUDA device: CUDA said why        */
#define DV_ESTICKY (-3)    /* a CUDA error that poisons the context       */
#define DV_EGATE (-4)      /* measured, but the correctness gate failed   */

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

#endif /* DV_DV_H */
