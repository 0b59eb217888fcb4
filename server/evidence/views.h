/* views.h -- the evidence store's GPU views in memory (gpuview.h), the
 * index made from them, and the reads answered from them: the index, a
 * GPU's index, the latest of a suite in any form, a history page.
 *
 * Owner: the store (evidence.c), which embeds it, installs each view it
 * loads from disk and decides when to look at the disk again. Lock: `lock`,
 * a read-write lock over the list of views and the index cache. A read takes
 * it for reading, adds a reference to a blob (or copies a page's texts) and
 * lets go; an install takes it for writing and swaps a whole view in, so a
 * reader sees the old view or the new one, never a mix. The index (and a
 * GPU's) is made on first use, under the write lock. Threads: the HTTP
 * threads read; whoever reloads (the store, one at a time under its reload
 * lock) installs.
 */
#ifndef DV_VIEWS_H
#define DV_VIEWS_H

#include <pthread.h>
#include <stddef.h>
#include <time.h>

#include "server/evidence/blob.h"
#include "server/evidence/gpuview.h"
#include "server/evidence/suites.h"
#include "server/evidence/types.h"

/* views_history(): the named GPU has no view (not an error yet: its folder
 * may be there and not loaded). */
#define VIEWS_ABSENT 1

/* Private to views.c; embedded by its owner. */
struct views {
    pthread_rwlock_t lock;
    struct gpuview **gpus; /* sorted by slug */
    size_t n, cap;
    struct blob *index; /* the whole index, made for index_for */
    char index_for[EVIDENCE_SLUG_LEN];
};

void views_init(struct views *v);
void views_cleanup(struct views *v); /* frees every view */

/* The view of `slug` installed now (NULL: none). It stays valid only while
 * nothing installs another view of that folder: the store's reloads, one at
 * a time, use it to lend the new view what did not change. */
const struct gpuview *views_peek(struct views *v, const char *slug);

/* Puts `g` (taken) in place of the view of its slug, or adds it, and drops
 * the index. Returns 0, or -1 when there was no room (`g` freed, the old
 * view kept). */
int views_install(struct views *v, struct gpuview *g);

/* The slug and the folder's mtime of every view, into new arrays (the
 * caller frees both; none when *n is 0). Returns 0, or -1 when out of
 * memory. */
int views_list(struct views *v, char (**slugs)[EVIDENCE_SLUG_LEN], struct timespec **seen, size_t *n);

/* evidence_default_gpu() (evidence.h) over the installed views. */
int views_default(struct views *v, const char *own, char *out);

/* `gpu` (NULL: the default for `own`) as a slug into `slug`. Returns 0, or
 * -1 with `e` for a malformed slug, or when no GPU is the default because
 * several have evidence and the server's own has none. */
int views_resolve(struct views *v, const char *gpu, const char *own, char *slug, struct evidence_error *e);

/* The reads of evidence.h that memory answers, with its arguments (suite
 * found already). Each returns 0 with `*out`, or -1 with `e`; views_history
 * also VIEWS_ABSENT. */
int views_index(struct views *v, const char *own, struct blob **out, struct evidence_error *e);
int views_gpu_index(struct views *v, const char *gpu, struct blob **out, struct evidence_error *e);
int views_latest(struct views *v, const char *gpu, const char *own, const struct suite *s, enum evidence_kind kind,
                 struct blob **out, struct evidence_error *e);
int views_history(struct views *v, const char *gpu, const char *own, const struct suite *s, unsigned limit,
                  const char *cursor, struct blob **out, struct evidence_error *e);

/* Row `row` ("T.R") of the latest good record of `s` on GPU `gpu` (a slug),
 * when that record is the one filed on `date`: its listing (slim.h) read
 * from the record in memory. 0 with `*out`, -1 with `e` (no such row, or
 * out of memory), or VIEWS_ABSENT when `date` is not that record's (the
 * caller reads the night from disk). */
int views_listing(struct views *v, const char *gpu, const struct suite *s, const char *date, const char *row,
                  struct blob **out, struct evidence_error *e);

#endif /* DV_VIEWS_H */
