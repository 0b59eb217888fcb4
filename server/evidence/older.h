/* older.h -- the good nights before a night, as a write compares with them
 * (nights.h), read from the store's files and kept in a small cache.
 *
 * A good night is read again by each of the next NIGHTS_HISTORY nights'
 * writes of its suite, and parsing a whole record (hundreds of kilobytes
 * with the instruction listings) costs milliseconds each time; so each
 * night read is trimmed to what the comparison reads and kept, by its file
 * (device, inode, size, modification time): a night filed again (a re-run)
 * is a new file, read anew. The cache is kernels/base/lru.h's, at most
 * OLDER_ENTRIES nights (a week of each suite, twice over), the least
 * recently used out first.
 *
 * Owner: the store (evidence.c), which makes it with the store and frees it
 * with the store. Lock: its own mutex, held from a lookup until what was
 * found is copied (no json_t is shared between threads) and while a night
 * read is put in; never while a record is read. Threads: any writer.
 */
#ifndef DV_OLDER_H
#define DV_OLDER_H

#include <jansson.h>
#include <stddef.h>

#include "server/evidence/nights.h"
#include "server/evidence/suites.h"

#define OLDER_ENTRIES (2 * NIGHTS_HISTORY * 8)

struct older;

/* The older nights of the store at `root` (copied). NULL when out of memory. */
struct older *older_create(const char *root);
void older_free(struct older *o); /* NULL ok */

/* The good records of `suite` at its version filed under GPU `gpu` on dates
 * before `date`, newest first, at most NIGHTS_HISTORY, into out[0..*n)
 * (the caller's references), trimmed to what the comparison reads: date,
 * status, suite_version, summary, comparison, provenance, and the document's
 * device and build. A GPU with no folder yet has none. Returns 0, or -1
 * when a night could not be read for want of memory (then none is given:
 * a comparison with a night missing would name the wrong previous one). */
int older_nights(struct older *o, const char *gpu, const struct suite *suite, const char *date, json_t **out,
                 size_t *n);

#endif /* DV_OLDER_H */
