/* evidence.c -- the evidence store: per-GPU folders of records, what the
 * locks cover, the filing, and when the views in memory are made again.
 *
 * Every file is written by durable_write() (durable.h): after a crash at any
 * point a name holds either its old bytes or its new bytes, whole.
 *
 * Several servers, one root: each GPU model has its own folder and its own
 * lock file (<gpu>/.lock, flock LOCK_EX). A writer holds its GPU's lock from
 * reading the date's current record (does a good one exist?) to the last
 * rename, so two replicas of one model that finish the same suite the same
 * night file one after the other, each decision made on the other's result;
 * a writer of another model never waits. The temp-file sweep of a GPU's
 * folders runs under the same lock, so it never removes a live writer's temp
 * file (pids are not unique across containers). The root's own lock
 * (<root>/.lock) covers moving an earlier version's layout.
 *
 * A record is one file, <gpu>/<date>/<suite>.json, and it carries everything
 * the read side needs (record_build.h says what). The .txt beside it is the same transcript for people and
 * static file servers; reads serve the transcript from the .json so the two
 * views of a night can never disagree, even if a crash fell between the two
 * renames. A failure is written as the date's record only when that date has
 * no good record; otherwise it goes to <suite>.failed.json. The record is
 * renamed in first (that rename publishes the night), then the .txt, then
 * the stamp; a failure after the first is a warning, not a failed write.
 * Records are read through record.h, which refuses what is not a regular
 * file of a sane size and judges a record's document.
 *
 * Memory: one view per GPU folder (gpuview.h) holds, per suite, the newest
 * good record's bytes, transcript and drawings as immutable refcounted
 * blobs, what the index says of the suite, and the suite's history. A
 * reload builds a whole new view from disk without any lock (one reload at
 * a time: `reload_lock`) and installs it in the views (views.h), whose own
 * lock readers take. This process reloads a GPU right after writing one of
 * its records; another process's write shows as a new mtime on that GPU's
 * folder (the .stamp rename), which reads check for at most once a second.
 *
 * Out of memory: every document is built with jsonout_put() and dropped
 * whole when a member did not go in (a write returns -1, a read EIO). A
 * record that cannot be read for want of memory is never taken for a
 * missing one: the load fails and the old view stays (the next check tries
 * again; a history is then not made with a night missing either), and a
 * failure is not filed over a good record it could not look at.
 */
#define _GNU_SOURCE
#include "server/evidence/evidence.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kernels/base/timeutil.h"
#include "kernels/model/model/experiment.h"
#include "server/core/log.h"
#include "server/evidence/draw.h"
#include "server/evidence/durable.h"
#include "server/evidence/gpuview.h"
#include "server/evidence/legacy.h"
#include "server/evidence/names.h"
#include "server/evidence/older.h"
#include "server/evidence/record.h"
#include "server/evidence/record_build.h"
#include "server/evidence/slim.h"
#include "server/evidence/suites.h"
#include "server/evidence/views.h"

#define STAMP_NAME ".stamp"
#define RECHECK_MS 1000

_Static_assert(EVIDENCE_SLUG_LEN == DURABLE_NAME_LEN, "a listed name holds a slug");

/* The parts with a lock of their own are the views (views.h) and the older
 * nights (older.h); `reload_lock` makes the disk scans one at a time. */
struct evidence {
    char root[PATH_MAX];
    pthread_mutex_t reload_lock; /* one disk scan at a time: a view is
                                    read from disk and installed under it */
    struct views views;          /* what the reads answer from         */
    struct older *older;         /* the nights writes compare with     */
    struct timespec root_seen;   /* the root's mtime when last listed  */
    atomic_llong next_check_ms;
};

static int same_time(const struct timespec *a, const struct timespec *b) {
    return a->tv_sec == b->tv_sec && a->tv_nsec == b->tv_nsec;
}

/* ---- the views made again from disk -------------------------------------- */

/* Reloads GPU `slug` from disk and installs it. Returns 0, or -1 with `err`
 * (the old view kept). reload_lock held, so the view installed now stays
 * while the new one borrows from it. */
static int gpu_reload(struct evidence *ev, const char *slug, char *err) {
    const struct gpuview *old = views_peek(&ev->views, slug);
    struct gpuview *g = gpuview_load(ev->root, slug, old, err);
    if (!g) return -1;
    if (views_install(&ev->views, g) != 0) {
        dv_seterr(err, "evidence: out of memory");
        return -1;
    }
    return 0;
}

/* New GPU folders (the root's mtime moved): each one not in memory yet is
 * loaded. The root counts as seen only once every one was. */
static void rescan_root(struct evidence *ev) {
    char err[ERR_LEN];
    struct stat st;
    if (stat(ev->root, &st) != 0 || same_time(&st.st_mtim, &ev->root_seen)) return;
    char(*slugs)[DURABLE_NAME_LEN] = NULL;
    size_t n = 0;
    int all = durable_list_dirs(ev->root, names_valid_slug, &slugs, &n, err) == 0;
    for (size_t i = 0; i < n; i++)
        if (!views_peek(&ev->views, slugs[i]) && gpu_reload(ev, slugs[i], err) != 0) all = 0;
    if (all) ev->root_seen = st.st_mtim;
    free(slugs);
}

/* Looks for other processes' writes: a new GPU folder (the root's mtime) or
 * a GPU folder whose mtime moved (a date created, a .stamp renamed). What
 * cannot be loaded now (no memory) keeps its old mtime, so the next look
 * tries it again. reload_lock held. */
static void rescan(struct evidence *ev) {
    char err[ERR_LEN];
    rescan_root(ev);
    char(*slugs)[EVIDENCE_SLUG_LEN] = NULL;
    struct timespec *seen = NULL;
    size_t n = 0;
    if (views_list(&ev->views, &slugs, &seen, &n) != 0) return;
    for (size_t i = 0; i < n; i++) {
        char gdir[PATH_MAX];
        struct stat st;
        if (durable_join(gdir, sizeof gdir, ev->root, slugs[i], NULL) != 0) continue;
        if (stat(gdir, &st) == 0 && !same_time(&st.st_mtim, &seen[i])) gpu_reload(ev, slugs[i], err);
    }
    free(slugs);
    free(seen);
}

static void maybe_rescan(struct evidence *ev) {
    long long now = (long long)timeutil_now_ms();
    long long due = atomic_load_explicit(&ev->next_check_ms, memory_order_relaxed);
    if (now < due || !atomic_compare_exchange_strong(&ev->next_check_ms, &due, now + RECHECK_MS)) return;
    if (pthread_mutex_trylock(&ev->reload_lock) != 0) return; /* a reload is under way */
    rescan(ev);
    pthread_mutex_unlock(&ev->reload_lock);
}

void evidence_recheck(struct evidence *ev) { atomic_store(&ev->next_check_ms, 0); }

/* ---- opening: an earlier layout, temp files -------------------------------- */

/* Sweeps GPU folder `slug` and its dates, holding its lock. */
static int sweep_gpu(struct evidence *ev, const char *slug, char *err) {
    char gdir[PATH_MAX];
    if (durable_join(gdir, sizeof gdir, ev->root, slug, NULL) != 0) return 0;
    int fd = durable_lock(gdir, err);
    if (fd < 0) return -1;
    int total = durable_sweep(gdir, err);
    char(*dates)[DURABLE_NAME_LEN] = NULL;
    size_t n = 0;
    if (total >= 0 && durable_list_dirs(gdir, names_valid_date, &dates, &n, err) != 0) total = -1;
    for (size_t i = 0; total >= 0 && i < n; i++) {
        char dir[PATH_MAX];
        if (durable_join(dir, sizeof dir, gdir, dates[i], NULL) != 0) continue;
        int r = durable_sweep(dir, err);
        total = r < 0 ? -1 : total + r;
    }
    free(dates);
    durable_unlock(fd);
    return total;
}

int evidence_sweep(struct evidence *ev, char *err) {
    int fd = durable_lock(ev->root, err);
    if (fd < 0) return -1;
    int total = durable_sweep(ev->root, err);
    durable_unlock(fd);
    if (total < 0) return -1;
    char(*slugs)[DURABLE_NAME_LEN] = NULL;
    size_t n = 0;
    if (durable_list_dirs(ev->root, names_valid_slug, &slugs, &n, err) != 0) return -1;
    for (size_t i = 0; i < n; i++) {
        int r = sweep_gpu(ev, slugs[i], err);
        if (r < 0) {
            free(slugs);
            return -1;
        }
        total += r;
    }
    free(slugs);
    return total;
}

struct evidence *evidence_open(const char *root, char *err) {
    if (!root || !*root) root = EVIDENCE_DEFAULT_DIR;
    if (strlen(root) >= PATH_MAX - 160) {
        dv_seterr(err, "evidence dir: path too long");
        return NULL;
    }
    if (durable_mkdir(root, err) != 0) return NULL;
    struct evidence *ev = calloc(1, sizeof *ev);
    if (!ev) {
        dv_seterr(err, "evidence: out of memory");
        return NULL;
    }
    strcpy(ev->root, root);
    size_t n = strlen(ev->root);
    while (n > 1 && ev->root[n - 1] == '/') ev->root[--n] = '\0';
    views_init(&ev->views);
    pthread_mutex_init(&ev->reload_lock, NULL);
    atomic_init(&ev->next_check_ms, 0);
    if (!(ev->older = older_create(ev->root))) {
        dv_seterr(err, "evidence: out of memory");
        evidence_close(ev);
        return NULL;
    }
    int fd = durable_lock(ev->root, err);
    if (fd < 0 || legacy_migrate(ev->root, err) != 0) {
        durable_unlock(fd);
        evidence_close(ev);
        return NULL;
    }
    durable_unlock(fd);
    if (evidence_sweep(ev, err) < 0) {
        evidence_close(ev);
        return NULL;
    }
    pthread_mutex_lock(&ev->reload_lock);
    rescan(ev);
    pthread_mutex_unlock(&ev->reload_lock);
    atomic_store(&ev->next_check_ms, (long long)timeutil_now_ms() + RECHECK_MS);
    return ev;
}

void evidence_close(struct evidence *ev) {
    if (!ev) return;
    views_cleanup(&ev->views);
    older_free(ev->older);
    pthread_mutex_destroy(&ev->reload_lock);
    free(ev);
}

const char *evidence_root(const struct evidence *ev) { return ev->root; }

/* ---- writing a record ------------------------------------------------------- */

/* Appends "what: why" to warning `warn` (ERR_LEN), after "; " when it
 * already says something. */
static void warn_add(char *warn, const char *what, const char *why) {
    size_t n = strlen(warn);
    /* Cut short when it runs out of room: the first failures matter most. */
    if (n + 1 < ERR_LEN && snprintf(warn + n, ERR_LEN - n, "%s%s: %s", n ? "; " : "", what, why) < 0) warn[n] = '\0';
}

/* Files the record text `json` and its transcript `text` of the record `b`
 * builds under its GPU's lock: a good record over the date's record, a failure over it only
 * when it is not a good one (else as <suite>.failed.json); then the
 * transcript beside the date's record, then the stamp other servers watch.
 *
 * The night is published exactly when its record is renamed into place:
 * from then on it is read, served and compared with. So the record goes
 * first, and returns 0 from then on whatever fails after it, each such
 * failure said in `warn` (ERR_LEN; "" when none): the directory's fsync
 * (the rename may not survive a crash), the transcript (then no stale
 * transcript is left beside the new record: the old one is removed) or the
 * stamp (servers sharing the directory see the night when the next one is
 * filed). A record that could not be put in place returns -1 with `err`,
 * and nothing of it was written: no transcript without its record. A crash
 * between the two renames leaves the new record beside the transcript of
 * the one before; reads serve each record's own copy, so the two views of a
 * night never disagree. */
/* A night filed under a date the capture gave (record.filed_as) goes where
 * no night of its suite is, and after every night of its suite: a record of
 * that date would be lost, and a later night was compared without it.
 * Called under the GPU's lock. Returns 0, or -1 with `err` naming the night
 * in the way (--replace-night files it all the same). */
static int filed_as_room(const char *gdir, const struct record_build *b, char *err) {
    char(*dates)[DURABLE_NAME_LEN] = NULL;
    size_t n = 0;
    if (durable_list_dirs(gdir, names_valid_date, &dates, &n, err) != 0) return -1;
    const char *in_way = NULL;
    for (size_t k = 0; k < n && !in_way; k++) {
        if (strcmp(dates[k], b->date) < 0) continue;
        const char *names[] = {".json", ".failed.json"};
        for (size_t i = 0; i < 2 && !in_way; i++) {
            char path[PATH_MAX], file[NAME_MAX + 1];
            snprintf(file, sizeof file, "%s%s", b->suite->name, names[i]);
            if (durable_join(path, sizeof path, gdir, dates[k], file) == 0 && access(path, F_OK) == 0)
                in_way = dates[k];
        }
    }
    int rc = 0;
    if (in_way) {
        if (strcmp(in_way, b->date) == 0)
            dv_seterr(err, "file-as %s: %s already holds a night of %s (--replace-night replaces it)", b->date, b->date,
                      b->suite->name);
        else
            dv_seterr(err,
                      "file-as %s: %s holds a later night of %s, compared without this one (file the nights oldest "
                      "first, or --replace-night)",
                      b->date, in_way, b->suite->name);
        rc = -1;
    }
    free(dates);
    return rc;
}

static int record_file(struct evidence *ev, const struct record_build *b, const char *json, const char *text,
                       char *warn, char *err) {
    char gdir[PATH_MAX], dir[PATH_MAX], jname[NAME_MAX + 1], tname[NAME_MAX + 1], fname[NAME_MAX + 1], why[ERR_LEN];
    const struct suite *suite = b->suite;
    const char *date = b->date;
    warn[0] = '\0';
    if (durable_join(gdir, sizeof gdir, ev->root, b->rec->gpu, NULL) != 0 ||
        durable_join(dir, sizeof dir, gdir, date, NULL) != 0) {
        dv_seterr(err, "evidence: path too long");
        return -1;
    }
    snprintf(jname, sizeof jname, "%s.json", suite->name);
    snprintf(tname, sizeof tname, "%s.txt", suite->name);
    snprintf(fname, sizeof fname, "%s.failed.json", suite->name);
    if (durable_mkdir(dir, err) != 0) return -1;
    /* From the look at the date's record to the last rename: another
     * replica of this GPU model must not decide on what it saw before. */
    int lockfd = durable_lock(gdir, err);
    if (lockfd < 0) return -1;
    if (b->rec->filed_as && !b->rec->replace_night && filed_as_room(gdir, b, err) != 0) {
        durable_unlock(lockfd);
        return -1;
    }
    int keep_good = 0;
    if (!b->rec->ok) {
        int oom = 0;
        json_t *old = record_load(gdir, date, jname, NULL, NULL, NULL, &oom);
        if (old && record_judge(old, NULL) != 0) oom = 1;
        keep_good = old && record_ok(old);
        json_decref(old);
        if (oom) { /* not knowing, a failure could replace good evidence */
            durable_unlock(lockfd);
            dv_seterr(err, "evidence: out of memory");
            return -1;
        }
    }
    const char *rname = keep_good ? fname : jname;
    int w = durable_write(dir, rname, json, strlen(json), err);
    if (w < 0) {
        durable_unlock(lockfd);
        return -1;
    }
    if (w == DURABLE_UNSYNCED) warn_add(warn, rname, err);
    if (!keep_good && (w = durable_write(dir, tname, text, strlen(text), why)) != 0) {
        warn_add(warn, tname, why);
        char tpath[PATH_MAX];
        if (w < 0 && durable_join(tpath, sizeof tpath, dir, tname, NULL) == 0 && unlink(tpath) == 0)
            durable_fsync_dir(dir, why);
    }
    /* The folder's mtime moves with this rename: what other servers on the
     * directory watch for. Its content is only for people. */
    char stamp[96];
    int k = snprintf(stamp, sizeof stamp, "%s %s %s\n", date, suite->name, b->finished);
    if (durable_write(gdir, STAMP_NAME, stamp, (size_t)k, why) != 0)
        warn_add(warn, "the stamp that shows other servers on the directory a new night", why);
    durable_unlock(lockfd);
    return 0;
}

int evidence_write(struct evidence *ev, const struct evidence_record *rec, char *warn, char *err) {
    char *json = NULL, *text = NULL, w[ERR_LEN] = "";
    struct record_build b;
    if (warn) warn[0] = '\0';
    if (record_build_init(&b, rec, err) != 0) return -1;
    if (rec->ok && older_nights(ev->older, rec->gpu, b.suite, b.date, b.older, &b.nolder) != 0) {
        dv_seterr(err, "evidence: out of memory");
        return -1;
    }
    int built = record_build_text(&b, &json, &text, err);
    int rc = built == 0 ? record_file(ev, &b, json, text, w, err) : -1;
    free(json);
    free(text);
    if (rc == 0 && w[0]) {
        LOG(LOG_WARNING, "evidence %s %s %s: filed, but %s", rec->gpu, b.date, b.suite->name, w);
        if (warn) snprintf(warn, ERR_LEN, "%s", w);
    }
    record_build_cleanup(&b);
    if (rc != 0) return -1;
    char rerr[ERR_LEN];
    pthread_mutex_lock(&ev->reload_lock);
    if (gpu_reload(ev, rec->gpu, rerr) != 0) {
        /* The record is on disk; the next read reloads it. */
        evidence_recheck(ev);
    }
    pthread_mutex_unlock(&ev->reload_lock);
    return 0;
}

/* ---- reads ------------------------------------------------------------------ */

int evidence_default_gpu(struct evidence *ev, const char *own, char *out) {
    maybe_rescan(ev);
    return views_default(&ev->views, own, out);
}

int evidence_get_index(struct evidence *ev, const char *own, struct blob **out, struct evidence_error *e) {
    maybe_rescan(ev);
    return views_index(&ev->views, own, out, e);
}

int evidence_get_gpu_index(struct evidence *ev, const char *gpu, struct blob **out, struct evidence_error *e) {
    *out = NULL;
    if (!names_valid_slug(gpu)) {
        blob_error(e, EVIDENCE_EINVAL, "gpu: expected a GPU slug such as nvidia-h200, got %.64s", gpu ? gpu : "");
        return -1;
    }
    maybe_rescan(ev);
    return views_gpu_index(&ev->views, gpu, out, e);
}

static const struct suite *find_suite(const char *suite, struct evidence_error *e) {
    const struct suite *s = suite ? suites_find(suite) : NULL;
    if (!s) blob_error(e, EVIDENCE_ENOENT, "unknown suite: %.64s", suite ? suite : "");
    return s;
}

int evidence_get_latest(struct evidence *ev, const char *gpu, const char *own, const char *suite,
                        enum evidence_kind kind, struct blob **out, struct evidence_error *e) {
    *out = NULL;
    const struct suite *s = find_suite(suite, e);
    if (!s) return -1;
    maybe_rescan(ev);
    return views_latest(&ev->views, gpu, own, s, kind, out, e);
}

int evidence_get_night(struct evidence *ev, const char *gpu, const char *own, const char *date, const char *suite,
                       enum evidence_kind kind, struct blob **out, struct evidence_error *e) {
    *out = NULL;
    if (!names_valid_date(date)) {
        blob_error(e, EVIDENCE_EINVAL, "date: expected a calendar date YYYY-MM-DD, got %.32s", date ? date : "");
        return -1;
    }
    const struct suite *s = find_suite(suite, e);
    if (!s) return -1;
    char slug[EVIDENCE_SLUG_LEN], gdir[PATH_MAX], jname[NAME_MAX + 1], *raw = NULL;
    if (views_resolve(&ev->views, gpu, own, slug, e) != 0) return -1;
    size_t rawlen = 0;
    struct stat st;
    snprintf(jname, sizeof jname, "%s.json", s->name);
    int oom = 0;
    json_t *rec = slug[0] && durable_join(gdir, sizeof gdir, ev->root, slug, NULL) == 0
                      ? record_load(gdir, date, jname, &st, &raw, &rawlen, &oom)
                      : NULL;
    if (!rec) {
        if (oom) blob_error(e, EVIDENCE_EIO, "evidence: out of memory");
        else blob_error(e, EVIDENCE_ENOENT, "no evidence for %s on %s", s->name, date);
        return -1;
    }
    /* A refresh files every suite under the date it started, so a night
     * that runs past midnight still writes yesterday's directory: only dates
     * before yesterday can no longer change. */
    char yesterday[EVIDENCE_DATE_LEN];
    names_date_of(time(NULL) - 86400, yesterday);
    enum evidence_fresh fresh = strcmp(date, yesterday) < 0 ? EVIDENCE_FINAL : EVIDENCE_CHANGES;
    if (EVIDENCE_KIND_DRAWN(kind)) {
        free(raw);
        struct dv_report *r = NULL;
        int rc2 = kind == EVIDENCE_SLIM ? 0 : record_report(rec, &r, NULL);
        if (rc2 == 0) rc2 = draw_record(r, rec, s, date, kind, record_time(rec, st.st_mtime), NULL, out);
        experiment_report_free(r);
        json_decref(rec);
        if (rc2 != 0) blob_error(e, EVIDENCE_EIO, "evidence: out of memory");
        else if (!*out)
            blob_error(e, EVIDENCE_ENOENT, "the evidence for %s on %s has no document to draw", s->name, date);
        return *out ? 0 : -1;
    }
    if (kind == EVIDENCE_TEXT) {
        free(raw);
        const char *t = record_str(rec, "transcript");
        raw = strdup(t ? t : "");
        rawlen = raw ? strlen(raw) : 0;
    }
    const time_t when = record_time(rec, st.st_mtime);
    json_decref(rec);
    *out = blob_new(raw, rawlen, when, kind, fresh);
    if (!*out) blob_error(e, EVIDENCE_EIO, "evidence: out of memory");
    return *out ? 0 : -1;
}

int evidence_get_history(struct evidence *ev, const char *gpu, const char *own, const char *suite, unsigned limit,
                         const char *cursor, struct blob **out, struct evidence_error *e) {
    *out = NULL;
    const struct suite *s = find_suite(suite, e);
    if (!s) return -1;
    if (limit < 1 || limit > EVIDENCE_HISTORY_MAX) {
        blob_error(e, EVIDENCE_EINVAL, "limit: expected 1..%d nights, got %u", EVIDENCE_HISTORY_MAX, limit);
        return -1;
    }
    if (cursor && !names_valid_date(cursor)) {
        blob_error(e, EVIDENCE_EINVAL, "cursor: expected a date YYYY-MM-DD (a page's next_cursor), got %.32s", cursor);
        return -1;
    }
    maybe_rescan(ev);
    int rc = views_history(&ev->views, gpu, own, s, limit, cursor, out, e);
    if (rc != VIEWS_ABSENT) return rc;
    /* A folder that is there but not in memory could not be loaded (no
     * memory; the next look tries again): not a GPU without evidence. */
    char gdir[PATH_MAX];
    struct stat st;
    if (durable_join(gdir, sizeof gdir, ev->root, gpu, NULL) == 0 && stat(gdir, &st) == 0)
        blob_error(e, EVIDENCE_EIO, "evidence %s: not loaded (out of memory); try again", gpu);
    else blob_error(e, EVIDENCE_ENOENT, "no evidence for GPU %s", gpu);
    return -1;
}

int evidence_get_listing(struct evidence *ev, const char *gpu, const char *own, const char *date, const char *suite,
                         const char *row, struct blob **out, struct evidence_error *e) {
    *out = NULL;
    if (!names_valid_date(date)) {
        blob_error(e, EVIDENCE_EINVAL, "date: expected a calendar date YYYY-MM-DD, got %.32s", date ? date : "");
        return -1;
    }
    if (!slim_valid_row(row)) {
        blob_error(e, EVIDENCE_EINVAL, "row: expected T.R (table and row, from 0), got %.16s", row ? row : "");
        return -1;
    }
    const struct suite *s = find_suite(suite, e);
    char slug[EVIDENCE_SLUG_LEN], gdir[PATH_MAX], jname[NAME_MAX + 1];
    if (!s || views_resolve(&ev->views, gpu, own, slug, e) != 0) return -1;
    maybe_rescan(ev);
    int rc = views_listing(&ev->views, slug, s, date, row, out, e);
    if (rc != VIEWS_ABSENT) return rc;
    struct stat st;
    int oom = 0;
    size_t len = 0;
    snprintf(jname, sizeof jname, "%s.json", s->name);
    json_t *rec = durable_join(gdir, sizeof gdir, ev->root, slug, NULL) == 0
                      ? record_load(gdir, date, jname, &st, NULL, NULL, &oom)
                      : NULL;
    char *text = rec ? slim_listing(rec, row, &len, &oom) : NULL;
    const time_t when = rec ? record_time(rec, st.st_mtime) : (time_t)-1;
    json_decref(rec);
    char yesterday[EVIDENCE_DATE_LEN];
    names_date_of(time(NULL) - 86400, yesterday);
    if (text && !(*out = blob_new(text, len, when, EVIDENCE_JSON,
                                  strcmp(date, yesterday) < 0 ? EVIDENCE_FINAL : EVIDENCE_CHANGES)))
        oom = 1;
    if (*out) return 0;
    if (oom) blob_error(e, EVIDENCE_EIO, "evidence: out of memory");
    else blob_error(e, EVIDENCE_ENOENT, "no instruction listing for row %s of %s on %s", row, s->name, date);
    return -1;
}
