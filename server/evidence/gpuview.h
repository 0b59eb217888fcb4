/* gpuview.h -- one GPU folder of the evidence store as it was last read:
 * each suite's newest good record with its transcript and drawings (as
 * blobs, their digests and measurement times made once), what the index
 * says of the suite, and the suite's history (history.h).
 *
 * A view is made whole from disk by gpuview_load(), with no lock, taking
 * from the view it replaces what belongs to records that did not change
 * (the bytes, transcript and drawings of a record read before, the history
 * nights whose files are the same): a write of one suite reads and redraws
 * that suite alone. Once installed in the store's views (views.h) it is
 * immutable, except `index`, made on first use under the views' write
 * lock; it is freed when a newer view of its folder replaces it.
 */
#ifndef DV_GPUVIEW_H
#define DV_GPUVIEW_H

#include <jansson.h>
#include <stddef.h>
#include <sys/stat.h>
#include <time.h>

#include "server/evidence/blob.h"
#include "server/evidence/types.h"

struct dv_report;
struct history;

/* What the index says of one suite of one GPU. */
struct gpuview_latest {
    char good_date[EVIDENCE_DATE_LEN];
    json_t *good; /* the newest good record, or NULL */
    struct stat good_st;
    char *good_raw; /* its bytes (moved into a blob when loaded) */
    size_t good_len;
    struct dv_report *good_report; /* its document read, when it was read from disk (drawn once) */
    json_t *attempt;               /* the newest record of any status, or NULL */
    char attempt_date[EVIDENCE_DATE_LEN];
    time_t newest_mtime; /* the newest measurement of the records read (record_time()) */
    int good_failed_too; /* the good record's date also has a failure */
};

struct gpuview {
    char slug[EVIDENCE_SLUG_LEN];
    char name[128];
    struct timespec seen; /* the folder's mtime before it was read */
    size_t n;             /* suites_count()                        */
    struct gpuview_latest *l;
    struct blob **json, **text;              /* [suite]: the newest good record, its transcript */
    struct blob **drawn[EVIDENCE_NUM_KINDS]; /* SVG, MD, CSV: [kind][suite]                      */
    struct history **hist;                   /* each suite's nights                             */
    struct blob *index;                      /* this GPU's index, made on first use             */
};

/* Reads GPU folder `slug` of the store at `root` into a new view, taking
 * from `old` (the view of the same folder installed now, or NULL; it must
 * stay while this runs) what belongs to records that did not change.
 * Returns NULL with `err` (out of memory: a view missing a record would
 * say it is not there; or the folder is gone). */
struct gpuview *gpuview_load(const char *root, const char *slug, const struct gpuview *old, char *err);

void gpuview_free(struct gpuview *g); /* NULL ok */

/* The index entries of every suite of `g` (NULL: a GPU with nothing filed),
 * links under `prefix` ("/evidence" or "/evidence/<gpu>"). Sets *bad when
 * a member did not go in. */
json_t *gpuview_index_entries(const struct gpuview *g, const char *prefix, int *bad);

/* `g`'s own index object ({"gpu", "name", "latest", "suites"}, with
 * "schema" first when `with_schema`). Sets *bad as above. */
json_t *gpuview_index_json(const struct gpuview *g, int with_schema, int *bad);

/* The newest measurement among the records of `g` read (-1 when none). */
time_t gpuview_newest(const struct gpuview *g);

#endif /* DV_GPUVIEW_H */
