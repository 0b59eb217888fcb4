/* legacy.h -- the store's layout before GPU folders (<root>/<YYYY-MM-DD>/),
 * moved under the GPU its records name (<root>/<gpu>/<YYYY-MM-DD>/) when a
 * store is opened.
 *
 * Called by the store (evidence_open) with the root's lock held, before
 * any GPU folder is read; nothing else writes that layout any more.
 */
#ifndef DV_LEGACY_H
#define DV_LEGACY_H

/* The GPU slug a date whose records name none is moved under, when no date
 * before it named one either. */
#define LEGACY_GPU "unknown-gpu"

/* Moves the files of every <root>/<date>/ to <root>/<gpu>/<date>/, <gpu>
 * the slug of the GPU the date's first record that names one names (a date
 * whose records name none goes with the date before it). A file whose new
 * name is already taken stays where it is; temp files a crash left are
 * removed; an emptied date folder is removed. Returns 0, or -1 with `err`
 * (then what was moved stays moved: each file is in one place, whole). */
int legacy_migrate(const char *root, char *err);

#endif /* DV_LEGACY_H */
