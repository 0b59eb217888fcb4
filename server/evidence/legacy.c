/* legacy.c -- see legacy.h. */
#define _GNU_SOURCE
#include "server/evidence/legacy.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "server/evidence/durable.h"
#include "server/evidence/history.h"
#include "server/evidence/names.h"
#include "server/evidence/record.h"
#include "server/evidence/types.h"

/* The slug of the GPU that the first record of date folder `d` (<root>/
 * <date>) naming one names, into `slug` (left as it is when none does).
 * Returns 0, or -1 with `err` when a record could not be read for want of
 * memory (the date would go under the GPU of the date before). */
static int date_gpu(DIR *d, const char *root, const char *date, char *slug, char *err) {
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len < 6 || strcmp(e->d_name + len - 5, ".json") != 0 || e->d_name[0] == '.') continue;
        int oom = 0;
        json_t *rec = record_load(root, date, e->d_name, NULL, NULL, NULL, &oom);
        char s[EVIDENCE_SLUG_LEN];
        const char *name = rec ? record_gpu_name(rec) : NULL;
        int found = name && names_slug(name, s, sizeof s) == 0 && names_valid_slug(s);
        json_decref(rec);
        if (oom) {
            dv_seterr(err, "evidence: out of memory");
            return -1;
        }
        if (found) {
            memcpy(slug, s, EVIDENCE_SLUG_LEN);
            return 0;
        }
    }
    return 0;
}

/* Moves the regular files of `d` (folder `src`) into `dst`, the history's
 * sidecars among them, but those whose name is taken there; removes the
 * temp files a crash left. Returns 0, or
 * -1 with `err`. */
static int move_files(DIR *d, const char *src, const char *dst, char *err) {
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        /* A temp file a crash left: nobody writes this layout any more. */
        if (strncmp(e->d_name, DURABLE_TMP_PREFIX, strlen(DURABLE_TMP_PREFIX)) == 0) {
            unlinkat(dirfd(d), e->d_name, 0);
            continue;
        }
        /* Hidden files stay, but the history's sidecars (.<suite>.night.json),
         * which belong beside their records. */
        const size_t len = strlen(e->d_name), sl = strlen(HISTORY_SIDECAR_SUFFIX);
        if (e->d_name[0] == '.' && (len <= sl + 1 || strcmp(e->d_name + len - sl, HISTORY_SIDECAR_SUFFIX) != 0))
            continue;
        char from[PATH_MAX], to[PATH_MAX];
        struct stat st;
        if (durable_join(from, sizeof from, src, e->d_name, NULL) != 0 ||
            durable_join(to, sizeof to, dst, e->d_name, NULL) != 0)
            continue;
        if (lstat(from, &st) != 0 || !S_ISREG(st.st_mode) || access(to, F_OK) == 0) continue;
        if (rename(from, to) != 0) {
            dv_seterr(err, "evidence: move %s to %s: %s", from, to, strerror(errno));
            return -1;
        }
    }
    return 0;
}

/* Moves date folder `date` under GPU `slug` (updated from its records).
 * Returns 0, or -1 with `err`. */
static int migrate_date(const char *root, const char *date, char *slug, char *err) {
    char src[PATH_MAX], dst[PATH_MAX], gdir[PATH_MAX];
    if (durable_join(src, sizeof src, root, date, NULL) != 0) return 0;
    DIR *d = opendir(src);
    if (!d) return 0;
    int rc = date_gpu(d, root, date, slug, err);
    rewinddir(d);
    if (rc == 0 && (durable_join(gdir, sizeof gdir, root, slug, NULL) != 0 ||
                    durable_join(dst, sizeof dst, gdir, date, NULL) != 0 || durable_mkdir(dst, err) != 0))
        rc = -1;
    if (rc == 0) rc = move_files(d, src, dst, err);
    closedir(d);
    if (rc == 0 && (durable_fsync_dir(dst, err) != 0 || durable_fsync_dir(src, err) != 0)) rc = -1;
    if (rc == 0 && rmdir(src) == 0 && durable_fsync_dir(root, err) != 0) rc = -1;
    return rc;
}

int legacy_migrate(const char *root, char *err) {
    char(*dates)[DURABLE_NAME_LEN] = NULL;
    size_t n = 0;
    if (durable_list_dirs(root, names_valid_date, &dates, &n, err) != 0) return -1;
    char slug[EVIDENCE_SLUG_LEN] = LEGACY_GPU;
    int rc = 0;
    for (size_t k = 0; k < n && rc == 0; k++) rc = migrate_date(root, dates[k], slug, err);
    free(dates);
    return rc;
}
