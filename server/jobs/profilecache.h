/* profilecache.h -- the instruction profiles kept on disk, so that a new
 * worker (after a restart, an upgrade of the server alone, the next night's
 * first job) serves an identical launch from the cache instead of profiling
 * it again (jobs/instrproc.h).
 *
 * A profile's counts are facts of the cubin, the driver, the device, the
 * predicate's mask and the geometry, all in its key (model/listing/listing.h); what
 * ties a key to the binary that runs is the kernels' functions and cubin
 * CRCs, which a worker learns from its first profile of each kernel. So the
 * cache is a folder per binary: DIR/<64-bit FNV-1a of the profiling binary's
 * bytes>/, holding one JSON file per entry, named by the FNV-1a of its key
 * and holding {"key": KEY, "value": VALUE} (a key that does not match what
 * is asked for is a miss: a hash collision costs a profile, never a wrong
 * one). Files are written whole under another name and renamed, so a reader
 * sees all of one or none; a file that does not read is a miss, and the
 * next store replaces it.
 *
 * Bounded: past PROFILECACHE_MAX_FILES entries a store removes the oldest
 * (by modification time), and opening removes the folders of other
 * binaries that were not touched for PROFILECACHE_STALE_DAYS. Neither ever
 * follows a link or leaves its folder: entries are looked at without
 * following (fstatat, AT_SYMLINK_NOFOLLOW) and removed relative to the
 * folder's descriptor, a link where a binary's folder stands is not swept
 * into, and a binary's own folder must be a folder, not a link. An entry is
 * read only when it is a regular file of at most PROFILECACHE_MAX_BYTES.
 *
 * One thread uses a struct profilecache.
 */
#ifndef DV_PROFILECACHE_H
#define DV_PROFILECACHE_H

#include <jansson.h>

#define PROFILECACHE_MAX_FILES 512
#define PROFILECACHE_STALE_DAYS 7
#define PROFILECACHE_MAX_BYTES (64 << 20) /* an entry larger than this is a miss */

struct profilecache;

/* The cache of binary `exe` under folder `dir` (made when missing). NULL
 * with `err` when the binary cannot be read or the folder cannot be made or
 * written: the caller goes on with its memory alone. */
struct profilecache *profilecache_open(const char *dir, const char *exe, char *err);

/* Accepts NULL. */
void profilecache_close(struct profilecache *pc);

/* The folder of this binary's entries, for the record. */
const char *profilecache_dir(const struct profilecache *pc);

/* The value stored under `key` (a new reference), or NULL when there is
 * none, or it does not read, or it is another key's. */
json_t *profilecache_load(struct profilecache *pc, const char *key);

/* Stores `value` under `key`, replacing what was there. Returns 0, or -1
 * with `err` (nothing is left half-written). */
int profilecache_store(struct profilecache *pc, const char *key, const json_t *value, char *err);

#endif /* DV_PROFILECACHE_H */
