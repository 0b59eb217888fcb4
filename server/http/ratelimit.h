/* ratelimit.h -- a token bucket per client address, in a bounded table.
 *
 * Each address may spend `per_min` requests at once and regains them at
 * per_min / 60 a second. The table holds at most `max_entries` addresses;
 * when it is full the least recently seen one is forgotten (it had the most
 * time to refill, so forgetting it costs the least). Thread-safe.
 */
#ifndef DV_RATELIMIT_H
#define DV_RATELIMIT_H

struct ratelimit;

/* NULL on OOM. per_min 0 means unlimited. */
struct ratelimit *ratelimit_create(unsigned per_min, unsigned max_entries);
void ratelimit_free(struct ratelimit *rl); /* NULL ok */

/* Takes one token for `key`. Returns 1 when allowed; 0 when not, with
 * `*retry_after_s` the whole seconds until a token is back. */
int ratelimit_take(struct ratelimit *rl, const char *key, unsigned *retry_after_s);

#endif /* DV_RATELIMIT_H */
