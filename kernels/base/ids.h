/* ids.h -- the one generator of random identifiers (job ids, refresh ids).
 *
 * Bytes come from getrandom(2), retried on EINTR and short reads; there is no
 * fallback to the time or the pid, so an id is either unguessable or not
 * made at all.
 */
#ifndef DV_IDS_H
#define DV_IDS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Writes `prefix` followed by 2 * nbytes lower-case hex digits of fresh
 * random bytes into out[len]. Returns 0, or -1 with `err` when the kernel
 * gives no randomness or out is too small. */
int ids_random_hex(const char *prefix, size_t nbytes, char *out, size_t len, char *err);

#ifdef __cplusplus
}
#endif

#endif /* DV_IDS_H */
