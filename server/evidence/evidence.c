/* evidence.c -- the evidence store: per-GPU folders of records, what the
 * locks cover, and the latest views kept in memory.
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
 * the read side needs: status, GPU, provenance, the divergence.v1 document, a
 * summary (GPU name and each row's ratio, in this file's own schema so the
 * history does not depend on the document's field names) and the
 * transcript. The .txt beside it is the same transcript for people and
 * static file servers; reads serve the transcript from the .json so the two
 * views of a night can never disagree, even if a crash fell between the two
 * renames. A failure is written as the date's record only when that date has
 * no good record; otherwise it goes to <suite>.failed.json. The record is
 * renamed in first (that rename publishes the night), then the .txt, then
 * the stamp; a failure after the first is a warning, not a failed write.
 * Records are read through record.h, which refuses what is not a regular
 * file of a sane size and judges a record's document.
 *
 * Memory: one struct gpu per GPU folder holds, per suite, the newest good
 * record's bytes and transcript as immutable refcounted blobs (with their
 * digest and measurement time computed once), what the index says of the
 * suite, and the suite's history (history.h: one entry per night, shared
 * with the view before when its record did not change). A
 * read takes the read lock, adds a reference and lets go; a reload builds a
 * whole new struct gpu from disk without any lock and swaps it in under the
 * write lock, so a reader sees the old view or the new one, never a mix.
 * This process reloads a GPU right after writing one of its records; another
 * process's write shows as a new mtime on that GPU's folder (the .stamp
 * rename), which reads check for at most once a second.
 *
 * Out of memory: every document is built with jsonout_put() and dropped
 * whole when a member did not go in (a write returns -1, a read EIO). A
 * record that cannot be read for want of memory is never taken for a
 * missing one: the load fails and the old view stays (the next check tries
 * again; a history is then not made with a night missing either), and a
 * failure is not filed over a good record it could not look at.
 */
#define _GNU_SOURCE

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <jansson.h>

#include "api/report.h"
#include "kernels/base/buildinfo.h"
#include "kernels/base/fnv.h"
#include "kernels/base/timeutil.h"
#include "api/jsonout.h"
#include "server/core/log.h"
#include "server/evidence/durable.h"
#include "server/evidence/evidence.h"
#include "server/evidence/history.h"
#include "server/evidence/nights.h"
#include "server/evidence/record.h"
#include "server/evidence/suites.h"

#define STAMP_NAME ".stamp"
#define RECHECK_MS 1000

/* Date and slug folders are listed with durable_list_dirs(). */
_Static_assert(EVIDENCE_SLUG_LEN == DURABLE_NAME_LEN, "a listed name holds a slug");
_Static_assert(EVIDENCE_SLUG_LEN == HISTORY_DIR_LEN, "the history takes the listed dates");
#define LEGACY_GPU "unknown-gpu"

/* What the index says of one suite of one GPU. */
struct latest {
    char good_date[EVIDENCE_DATE_LEN];
    json_t *good; /* the newest good record, or NULL */
    struct stat good_st;
    char *good_raw; /* its bytes (moved into a blob when loaded) */
    size_t good_len;
    struct dv_report *good_report; /* its document read, when it was read from disk (drawn once) */
    json_t *attempt; /* the newest record of any status, or NULL */
    char attempt_date[EVIDENCE_DATE_LEN];
    time_t newest_mtime; /* the newest measurement of the records read (record_time()) */
    int good_failed_too; /* the good record's date also has a failure */
};

/* One GPU folder as last loaded. Immutable once installed, except `index`
 * (built on first use, under the write lock). */
struct gpu {
    char slug[EVIDENCE_SLUG_LEN];
    char name[128];
    struct timespec seen; /* the folder's mtime before it was read */
    size_t n;             /* suites_count()                        */
    struct latest *l;
    struct evidence_blob **json, **text;
    struct evidence_blob **drawn[EVIDENCE_NUM_KINDS]; /* SVG, MD, CSV: [kind][suite] */
    struct history **hist;                            /* each suite's nights        */
    struct evidence_blob *index;
};

/* Older nights kept for the comparisons: a week of each suite, twice over. */
#define OLDER_MEMO_SLOTS (2 * NIGHTS_HISTORY * 8)
#define OLDER_KEY_LEN (EVIDENCE_SLUG_LEN + EVIDENCE_DATE_LEN + 96)

struct evidence {
    char root[PATH_MAX];
    pthread_rwlock_t lock;       /* gpus, the index cache               */
    pthread_mutex_t reload_lock; /* one disk scan at a time             */
    struct gpu **gpus;           /* sorted by slug                      */
    size_t ngpus, cap;
    struct evidence_blob *index; /* the whole index, for index_for      */
    char index_for[EVIDENCE_SLUG_LEN];
    struct timespec root_seen;
    atomic_llong next_check_ms;
    /* The older nights writes compare with (older_nights()), trimmed to
     * what the comparison reads and kept by file identity: a good night is
     * read again by each of the next NIGHTS_HISTORY nights' writes of its
     * suite, and parsing a whole record (hundreds of kilobytes with the
     * instruction listings) costs milliseconds each time. */
    pthread_mutex_t older_lock;
    struct older_entry {
        char key[OLDER_KEY_LEN]; /* "<gpu>/<date>/<suite>.json" */
        struct stat st;          /* of the file the entry was read from */
        json_t *rec;    /* trimmed (older_trim()); NULL: a free slot */
        unsigned long used;
    } older[OLDER_MEMO_SLOTS];
    unsigned long older_clock;
};

/* ---- small helpers ---------------------------------------------------- */

void evidence_date_of(time_t t, char *out) { timeutil_date(t, out, EVIDENCE_DATE_LEN); }

int evidence_valid_date(const char *s) {
    if (!s || strlen(s) != 10) return 0;
    for (int i = 0; i < 10; i++) {
        if (i == 4 || i == 7) {
            if (s[i] != '-') return 0;
        } else if (!isdigit((unsigned char)s[i])) {
            return 0;
        }
    }
    int y = atoi(s), m = atoi(s + 5), d = atoi(s + 8);
    if (y < 1970 || m < 1 || m > 12 || d < 1) return 0;
    static const int mdays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    int max = mdays[m - 1] + (m == 2 && leap);
    return d <= max;
}

int evidence_slug(const char *device_name, char *out, size_t len) {
    size_t n = 0, cap = len < EVIDENCE_SLUG_LEN ? len : EVIDENCE_SLUG_LEN;
    int dash = 0;
    if (!out || cap == 0) return -1;
    for (const char *p = device_name ? device_name : ""; *p && n + 1 < cap; p++) {
        unsigned char c = (unsigned char)*p;
        if (isalnum(c) && c < 128) {
            if (dash && n > 0 && n + 2 < cap) out[n++] = '-';
            else if (dash && n > 0) break;
            dash = 0;
            out[n++] = (char)tolower(c);
        } else {
            dash = 1;
        }
    }
    out[n] = '\0';
    return n == 0 ? -1 : 0;
}

int evidence_valid_slug(const char *s) {
    size_t n = s ? strlen(s) : 0;
    if (n == 0 || n >= EVIDENCE_SLUG_LEN || s[0] == '-' || s[n - 1] == '-') return 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (!(isdigit(c) || (c >= 'a' && c <= 'z') || (c == '-' && s[i + 1] != '-'))) return 0;
    }
    return strcmp(s, "latest") != 0 && strcmp(s, "history") != 0 && strcmp(s, "refresh") != 0 &&
           !evidence_valid_date(s);
}

static int same_time(const struct timespec *a, const struct timespec *b) {
    return a->tv_sec == b->tv_sec && a->tv_nsec == b->tv_nsec;
}

/* 1 when `a` and `b` are the same file as it was: device, inode, size and
 * modification time (a record is replaced by a rename, never rewritten in
 * place, so a new record is a new inode). */
static int same_file(const struct stat *a, const struct stat *b) {
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
           same_time(&a->st_mtim, &b->st_mtim);
}

static void seterror(struct evidence_error *e, enum evidence_code code, const char *fmt, ...)
#ifdef __GNUC__
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static void seterror(struct evidence_error *e, enum evidence_code code, const char *fmt, ...) {
    if (!e) return;
    e->code = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->reason, sizeof e->reason, fmt, ap);
    va_end(ap);
}

/* ---- blobs ------------------------------------------------------------ */

static uint64_t fnv1a(const void *data, size_t len) { return fnv1a_64(FNV1A_64_OFFSET, data, len); }

/* A blob of `data` (malloc()ed, NUL-terminated, taken over even on
 * failure) whose digest is `digest`: one that identifies its bytes as the
 * FNV-1a of them would (a history page's, made of its nights' digests). */
static struct evidence_blob *blob_new_digest(char *data, size_t len, uint64_t digest, time_t mtime,
                                             enum evidence_kind kind, enum evidence_fresh fresh) {
    struct evidence_blob *b = data ? malloc(sizeof *b) : NULL;
    if (!b) {
        free(data);
        return NULL;
    }
    b->data = data;
    b->len = len;
    b->mtime = mtime;
    b->digest = digest;
    b->kind = kind;
    b->fresh = fresh;
    atomic_init(&b->refs, 1);
    return b;
}

/* A blob of `data` (malloc()ed, NUL-terminated, taken over even on failure). */
static struct evidence_blob *blob_new(char *data, size_t len, time_t mtime, enum evidence_kind kind,
                                      enum evidence_fresh fresh) {
    return blob_new_digest(data, len, data ? fnv1a(data, len) : 0, mtime, kind, fresh);
}

static struct evidence_blob *blob_ref(struct evidence_blob *b) {
    if (b) atomic_fetch_add_explicit(&b->refs, 1, memory_order_relaxed);
    return b;
}

void evidence_blob_release(struct evidence_blob *b) {
    if (!b || atomic_fetch_sub_explicit(&b->refs, 1, memory_order_acq_rel) != 1) return;
    free((char *)b->data);
    free(b);
}

/* ---- records ------------------------------------------------------------ */

static const char *jstr(json_t *obj, const char *key) { return json_string_value(json_object_get(obj, key)); }

/* The ratios of every row, in this store's own schema. Sets *bad when a
 * member did not go in. */
static json_t *summary_of(const struct dv_report *r, int *bad) {
    json_t *s = json_object(), *tables = json_array();
    jsonout_put(s, "gpu", r->device.present || r->device.name[0] ? jsonout_str(r->device.name) : json_null(), bad);
    jsonout_put(s, "measured", json_boolean(r->measured), bad);
    for (unsigned t = 0; t < r->ntables && t < DV_MAX_TABLES; t++) {
        const struct dv_table *tb = &r->tables[t];
        json_t *jt = json_object(), *rows = json_array();
        jsonout_put(jt, "id", jsonout_str(tb->id), bad);
        jsonout_put(jt, "baseline", jsonout_str(tb->baseline), bad);
        jsonout_put(jt, "noise_limit", jsonout_num(tb->noise_limit), bad);
        jsonout_put(jt, "noise_ok", json_boolean(tb->noise_ok), bad);
        jsonout_put(jt, "baseline_row", json_integer(tb->baseline_row), bad);
        if (r->measured) {
            jsonout_put(jt, "intervals_ok", json_boolean(tb->intervals_ok), bad);
            jsonout_put(jt, "stop_reason", jsonout_str(tb->stop_reason), bad);
        }
        for (unsigned i = 0; i < tb->nrows && i < DV_MAX_ROWS; i++) {
            const struct dv_row *row = &tb->rows[i];
            json_t *jr = json_object();
            jsonout_put(jr, "name", jsonout_str(row->name), bad);
            jsonout_put(jr, "label", jsonout_str(row->label), bad);
            jsonout_put(jr, "predicted_ratio", jsonout_num(row->predicted_ratio), bad);
            if (row->measured) {
                jsonout_put(jr, "ratio", jsonout_num(row->ratio), bad);
                if (isfinite(row->ratio_ci.lo) && isfinite(row->ratio_ci.hi)) {
                    json_t *ci = json_object();
                    jsonout_put(ci, "lo", jsonout_num(row->ratio_ci.lo), bad);
                    jsonout_put(ci, "hi", jsonout_num(row->ratio_ci.hi), bad);
                    jsonout_put(jr, "ratio_ci", ci, bad);
                } else {
                    jsonout_put(jr, "ratio_ci", json_null(), bad);
                }
                jsonout_put(jr, "ratio_level", jsonout_num(row->ratio_level), bad);
                jsonout_put(jr, "median_ms", jsonout_num(row->time_ms.median), bad);
                jsonout_put(jr, "noise", jsonout_num(row->time_ms.noise), bad);
                jsonout_put(jr, "check_ok", json_boolean(row->check.ok), bad);
            } else {
                jsonout_put(jr, "ratio", json_null(), bad);
            }
            jsonout_append(rows, jr, bad);
        }
        jsonout_put(jt, "rows", rows, bad);
        /* Part 2 read both ways, as the document writes it. */
        struct dv_reading rd[DV_MAX_READINGS];
        unsigned nrd = experiment_readings(tb, rd);
        if (nrd) {
            json_t *readings = json_array();
            for (unsigned k = 0; k < nrd; k++) {
                json_t *o = json_object();
                jsonout_put(o, "kind", jsonout_str(experiment_reading_kind_name(rd[k].kind)), bad);
                jsonout_put(o, "row", jsonout_str(tb->rows[rd[k].row].name), bad);
                jsonout_put(o, "against", jsonout_str(tb->rows[rd[k].against].name), bad);
                jsonout_put(o, "ratio", r->measured ? jsonout_num(rd[k].ratio) : json_null(), bad);
                jsonout_put(o, "predicted", jsonout_num(rd[k].predicted), bad);
                jsonout_put(o, "sentence", jsonout_str(rd[k].sentence), bad);
                jsonout_append(readings, o, bad);
            }
            jsonout_put(jt, "readings", readings, bad);
        }
        jsonout_append(tables, jt, bad);
    }
    jsonout_put(s, "tables", tables, bad);
    return s;
}

/* The form `kind` (SVG, MD, CSV) of record `rec` of `suite` filed under
 * `date`, drawn from `r` (its record_report(); NULL: nothing to draw, *out
 * stays NULL) into a new blob. Returns 0, or -1 when out of memory. */
static int draw(const struct dv_report *r, json_t *rec, const struct suite *suite, const char *date, int kind,
                time_t mtime, struct evidence_blob **out) {
    *out = NULL;
    if (!r) return 0;
    char *drawn = NULL;
    if (kind == EVIDENCE_SVG) {
        /* The title names what a reader of the picture alone needs: the
         * suite, the GPU and the night. */
        char title[512];
        const char *gpu = record_gpu_name(rec);
        snprintf(title, sizeof title, "%s, on %s, %s: the measured ratio beside the model's, per row",
                 suite->description, gpu ? gpu : "an unnamed GPU", date);
        drawn = report_svg(r, title);
    } else {
        drawn = kind == EVIDENCE_MD ? report_markdown(r) : report_csv(r);
    }
    return drawn && (*out = blob_new(drawn, strlen(drawn), mtime, (enum evidence_kind)kind, EVIDENCE_CHANGES)) ? 0 : -1;
}

static void latest_cleanup(struct latest *l) {
    json_decref(l->good);
    json_decref(l->attempt);
    free(l->good_raw);
    experiment_report_free(l->good_report);
    l->good = l->attempt = NULL;
    l->good_raw = NULL;
    l->good_report = NULL;
}

/* Good record `jname` of `date` as the view before found it (`was`, NULL
 * for none), when the file is still the one it read (device, inode, size,
 * mtime): a new reference to its object with *st, and no bytes (the view's
 * blobs hold them: reuse_suite() takes them). NULL otherwise. */
static json_t *record_as_was(const struct latest *was, const char *gdir, const char *date, const char *jname,
                             struct stat *st) {
    char path[PATH_MAX];
    if (!was || !was->good || strcmp(was->good_date, date) != 0) return NULL;
    if (durable_join(path, sizeof path, gdir, date, jname) != 0 || lstat(path, st) != 0) return NULL;
    return same_file(&was->good_st, st) ? json_incref(was->good) : NULL;
}

/* The newest good record and the newest attempt of suite `s` in GPU folder
 * `gdir` over `dates` (oldest first). `was` is the suite's latest in the
 * view installed before, whose blobs the new view may take (NULL: none may
 * be): a good record that did not change since is not read and parsed
 * again. A record read from disk is judged (record_judge()): one that says
 * ok with a document that does not read is a failed attempt, and the search
 * goes on to the nights before it. *oom is set when a record could not be
 * read for want of memory (then `l` may miss it). */
static void latest_find(const char *gdir, const struct suite *s, char (*dates)[EVIDENCE_SLUG_LEN], size_t ndates,
                        const struct latest *was, struct latest *l, int *oom) {
    memset(l, 0, sizeof *l);
    l->newest_mtime = (time_t)-1;
    char jname[NAME_MAX + 1], fname[NAME_MAX + 1];
    snprintf(jname, sizeof jname, "%s.json", s->name);
    snprintf(fname, sizeof fname, "%s.failed.json", s->name);
    for (size_t k = ndates; k-- > 0 && !l->good;) {
        struct stat st, fst;
        char *raw = NULL;
        size_t rawlen = 0;
        struct dv_report *report = NULL;
        json_t *rec = record_as_was(was, gdir, dates[k], jname, &st);
        if (!rec && (rec = record_load(gdir, dates[k], jname, &st, &raw, &rawlen, oom)) != NULL &&
            record_judge(rec, &report) != 0)
            *oom = 1;
        json_t *failed = l->attempt ? NULL : record_load(gdir, dates[k], fname, &fst, NULL, NULL, oom);
        const time_t rt = rec ? record_time(rec, st.st_mtime) : (time_t)-1;
        const time_t ft = failed ? record_time(failed, fst.st_mtime) : (time_t)-1;
        if (rt > l->newest_mtime) l->newest_mtime = rt;
        if (ft > l->newest_mtime) l->newest_mtime = ft;
        if (!l->attempt && (rec || failed)) {
            json_t *pick = rec;
            if (failed) {
                const char *a = rec ? jstr(json_object_get(rec, "provenance"), "finished_utc") : NULL;
                const char *b = jstr(json_object_get(failed, "provenance"), "finished_utc");
                /* Timestamps have whole seconds: a tie goes to the file
                 * renamed last. */
                int cmp = a && b ? strcmp(b, a) : 0;
                if (cmp == 0 && rec)
                    cmp = fst.st_mtim.tv_sec != st.st_mtim.tv_sec
                              ? (fst.st_mtim.tv_sec > st.st_mtim.tv_sec ? 1 : -1)
                              : (fst.st_mtim.tv_nsec >= st.st_mtim.tv_nsec ? 1 : -1);
                if (!rec || cmp > 0) pick = failed;
            }
            l->attempt = json_incref(pick);
            memcpy(l->attempt_date, dates[k], EVIDENCE_DATE_LEN);
        }
        if (rec && record_ok(rec) && !failed && l->attempt) {
            /* The failure of this date, if any, was not loaded above. */
            json_t *f2 = record_load(gdir, dates[k], fname, &fst, NULL, NULL, oom);
            l->good_failed_too = f2 != NULL;
            json_decref(f2);
        } else if (rec && record_ok(rec) && failed) {
            l->good_failed_too = 1;
        }
        json_decref(failed);
        if (rec && record_ok(rec)) {
            l->good = rec;
            l->good_st = st;
            l->good_raw = raw;
            l->good_len = rawlen;
            l->good_report = report;
            memcpy(l->good_date, dates[k], EVIDENCE_DATE_LEN);
        } else {
            json_decref(rec);
            free(raw);
            experiment_report_free(report);
        }
    }
}

/* ---- the in-memory views ------------------------------------------------ */

static void gpu_free(struct gpu *g) {
    if (!g) return;
    for (size_t i = 0; i < g->n; i++) {
        if (g->l) latest_cleanup(&g->l[i]);
        if (g->json) evidence_blob_release(g->json[i]);
        if (g->text) evidence_blob_release(g->text[i]);
        for (int k = EVIDENCE_SVG; k < EVIDENCE_NUM_KINDS; k++)
            if (g->drawn[k]) evidence_blob_release(g->drawn[k][i]);
    }
    for (size_t i = 0; g->hist && i < g->n; i++) history_free(g->hist[i]);
    free(g->hist);
    evidence_blob_release(g->index);
    free(g->l);
    free(g->json);
    free(g->text);
    for (int k = EVIDENCE_SVG; k < EVIDENCE_NUM_KINDS; k++) free(g->drawn[k]);
    free(g);
}


/* Suite `i` of `old` (the view installed before), when its newest good
 * record is the one `l` found: its blobs go into `g` (their references
 * taken) and 1 is returned; else 0 and nothing is taken. The bytes, the
 * transcript and the drawings of a record that did not change are the
 * ones made when it was first read: a write of one suite redraws that
 * suite alone. */
static int reuse_suite(const struct gpu *old, size_t i, const struct latest *l, struct gpu *g) {
    if (!old || i >= old->n || !old->l[i].good || !l->good || !old->json[i] || !old->text[i]) return 0;
    if (strcmp(old->l[i].good_date, l->good_date) != 0 || !same_file(&old->l[i].good_st, &l->good_st)) return 0;
    for (int k = EVIDENCE_SVG; k < EVIDENCE_NUM_KINDS; k++)
        if (old->drawn[k]) g->drawn[k][i] = blob_ref(old->drawn[k][i]);
    g->json[i] = blob_ref(old->json[i]);
    g->text[i] = blob_ref(old->text[i]);
    return 1;
}

/* Reads GPU folder `slug` from disk into a new struct gpu, taking from
 * `old` (the view of the same folder installed now, or NULL) what belongs
 * to records that did not change. reload_lock held (so `old` stays).
 * Returns NULL with `err` (out of memory, or the folder is gone). */
static struct gpu *gpu_load(const struct evidence *ev, const char *slug, const struct gpu *old, char *err) {
    char gdir[PATH_MAX];
    struct stat st;
    if (durable_join(gdir, sizeof gdir, ev->root, slug, NULL) != 0) {
        dv_seterr(err, "evidence %s: path too long", slug);
        return NULL;
    }
    if (stat(gdir, &st) != 0) {
        dv_seterr(err, "evidence %s: %s", gdir, strerror(errno));
        return NULL;
    }
    struct gpu *g = calloc(1, sizeof *g);
    size_t n = suites_count();
    int nodraw = 0;
    for (int k = EVIDENCE_SVG; g && k < EVIDENCE_NUM_KINDS; k++) nodraw |= !(g->drawn[k] = calloc(n, sizeof(void *)));
    if (!g || nodraw || !(g->l = calloc(n, sizeof *g->l)) || !(g->json = calloc(n, sizeof *g->json)) ||
        !(g->text = calloc(n, sizeof *g->text)) || !(g->hist = calloc(n, sizeof *g->hist))) {
        gpu_free(g);
        dv_seterr(err, "evidence: out of memory");
        return NULL;
    }
    g->n = n;
    g->seen = st.st_mtim;
    snprintf(g->slug, sizeof g->slug, "%s", slug);
    char(*dates)[EVIDENCE_SLUG_LEN] = NULL;
    size_t nd = 0;
    if (durable_list_dirs(gdir, evidence_valid_date, &dates, &nd, err) != 0) {
        gpu_free(g);
        return NULL;
    }
    int oom = 0;
    for (size_t i = 0; i < n && !oom; i++)
        g->hist[i] = history_load(gdir, suites_get(i), dates, nd, old && i < old->n ? old->hist[i] : NULL, &oom);
    for (size_t i = 0; i < n && !oom; i++) {
        struct latest *l = &g->l[i];
        /* The view before may lend its record only where it has its blobs
         * to lend (reuse_suite()). */
        const int lend = old && i < old->n && old->json[i] && old->text[i];
        latest_find(gdir, suites_get(i), dates, nd, lend ? &old->l[i] : NULL, l, &oom);
        if (oom) break;
        if (!g->name[0]) {
            const char *name = l->good ? record_gpu_name(l->good) : NULL;
            if (name) snprintf(g->name, sizeof g->name, "%s", name);
        }
        if (!l->good) continue;
        if (reuse_suite(old, i, l, g)) {
            free(l->good_raw);
            l->good_raw = NULL;
            continue;
        }
        const char *t = jstr(l->good, "transcript");
        char *text = strdup(t ? t : "");
        size_t tlen = text ? strlen(text) : 0;
        const time_t when = record_time(l->good, l->good_st.st_mtime); /* Last-Modified: the measurement */
        g->json[i] = blob_new(l->good_raw, l->good_len, when, EVIDENCE_JSON, EVIDENCE_CHANGES);
        g->text[i] = blob_new(text, tlen, when, EVIDENCE_TEXT, EVIDENCE_CHANGES);
        l->good_raw = NULL;
        if (!g->json[i] || !g->text[i]) {
            oom = 1;
            break;
        }
        struct dv_report *r = l->good_report; /* read once for every drawing */
        l->good_report = NULL;
        if (!r && record_report(l->good, &r, NULL) != 0) oom = 1;
        for (int k = EVIDENCE_SVG; k < EVIDENCE_NUM_KINDS && !oom; k++)
            if (draw(r, l->good, suites_get(i), l->good_date, k, when, &g->drawn[k][i]) != 0) oom = 1;
        experiment_report_free(r);
        if (oom) break;
    }
    if (oom) { /* a view missing a record would say it is not there */
        free(dates);
        gpu_free(g);
        dv_seterr(err, "evidence: out of memory");
        return NULL;
    }
    for (size_t i = 0; i < n && !g->name[0]; i++) {
        const char *name = g->l[i].attempt ? record_gpu_name(g->l[i].attempt) : NULL;
        if (name) snprintf(g->name, sizeof g->name, "%s", name);
    }
    if (!g->name[0]) snprintf(g->name, sizeof g->name, "%s", slug);
    free(dates);
    return g;
}

/* Puts `g` in place of the GPU of the same slug (or adds it), dropping the
 * cached index. Returns 0, or -1 when there was no room (`g` freed, the old
 * view kept). Write lock held. */
static int gpu_install_locked(struct evidence *ev, struct gpu *g) {
    size_t i = 0;
    while (i < ev->ngpus && strcmp(ev->gpus[i]->slug, g->slug) < 0) i++;
    evidence_blob_release(ev->index);
    ev->index = NULL;
    if (i < ev->ngpus && strcmp(ev->gpus[i]->slug, g->slug) == 0) {
        gpu_free(ev->gpus[i]);
        ev->gpus[i] = g;
        return 0;
    }
    if (ev->ngpus == ev->cap) {
        size_t ncap = ev->cap ? ev->cap * 2 : 8;
        struct gpu **bigger = realloc(ev->gpus, ncap * sizeof *bigger);
        if (!bigger) {
            gpu_free(g);
            return -1;
        }
        ev->gpus = bigger;
        ev->cap = ncap;
    }
    memmove(ev->gpus + i + 1, ev->gpus + i, (ev->ngpus - i) * sizeof *ev->gpus);
    ev->gpus[i] = g;
    ev->ngpus++;
    return 0;
}

static struct gpu *gpu_find_locked(struct evidence *ev, const char *slug);

/* Reloads GPU `slug` from disk and swaps it in. Returns 0, or -1 with `err`
 * (the old view kept). reload_lock held. */
static int gpu_reload(struct evidence *ev, const char *slug, char *err) {
    pthread_rwlock_rdlock(&ev->lock);
    const struct gpu *old = gpu_find_locked(ev, slug); /* stays: only a reload replaces it */
    pthread_rwlock_unlock(&ev->lock);
    struct gpu *g = gpu_load(ev, slug, old, err);
    if (!g) return -1;
    pthread_rwlock_wrlock(&ev->lock);
    int rc = gpu_install_locked(ev, g);
    pthread_rwlock_unlock(&ev->lock);
    if (rc != 0) dv_seterr(err, "evidence: out of memory");
    return rc;
}

static struct gpu *gpu_find_locked(struct evidence *ev, const char *slug) {
    for (size_t i = 0; slug && i < ev->ngpus; i++)
        if (strcmp(ev->gpus[i]->slug, slug) == 0) return ev->gpus[i];
    return NULL;
}

/* Looks for other processes' writes: a new GPU folder (the root's mtime) or
 * a GPU folder whose mtime moved (a date created, a .stamp renamed). What
 * cannot be loaded now (no memory) keeps its old mtime, so the next look
 * tries it again. */
static void rescan(struct evidence *ev) {
    char err[ERR_LEN];
    struct stat st;
    if (stat(ev->root, &st) == 0 && !same_time(&st.st_mtim, &ev->root_seen)) {
        char(*slugs)[EVIDENCE_SLUG_LEN] = NULL;
        size_t n = 0;
        int all = durable_list_dirs(ev->root, evidence_valid_slug, &slugs, &n, err) == 0;
        for (size_t i = 0; i < n; i++) {
            pthread_rwlock_rdlock(&ev->lock);
            int known = gpu_find_locked(ev, slugs[i]) != NULL;
            pthread_rwlock_unlock(&ev->lock);
            if (!known && gpu_reload(ev, slugs[i], err) != 0) all = 0;
        }
        if (all) ev->root_seen = st.st_mtim;
        free(slugs);
    }
    pthread_rwlock_rdlock(&ev->lock);
    size_t n = ev->ngpus;
    char(*slugs)[EVIDENCE_SLUG_LEN] = n ? malloc(n * sizeof *slugs) : NULL;
    struct timespec *seen = n ? malloc(n * sizeof *seen) : NULL;
    for (size_t i = 0; slugs && seen && i < n; i++) {
        memcpy(slugs[i], ev->gpus[i]->slug, EVIDENCE_SLUG_LEN);
        seen[i] = ev->gpus[i]->seen;
    }
    pthread_rwlock_unlock(&ev->lock);
    for (size_t i = 0; slugs && seen && i < n; i++) {
        char gdir[PATH_MAX];
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

/* ---- opening: an earlier layout, temp files ----------------------------- */

static int not_hidden(const char *name) { return name[0] != '.'; }

/* Moves the files of <root>/<date>/ (the layout before GPU folders) to
 * <root>/<gpu>/<date>/, <gpu> the slug of the GPU its records name (a date
 * whose records name none goes with the date before it). A file whose new
 * name is already taken stays where it is. Root lock held. */
static int migrate_legacy(struct evidence *ev, char *err) {
    char(*dates)[EVIDENCE_SLUG_LEN] = NULL;
    size_t n = 0;
    if (durable_list_dirs(ev->root, evidence_valid_date, &dates, &n, err) != 0) return -1;
    char slug[EVIDENCE_SLUG_LEN] = LEGACY_GPU;
    int rc = 0;
    for (size_t k = 0; k < n && rc == 0; k++) {
        char src[PATH_MAX], dst[PATH_MAX];
        if (durable_join(src, sizeof src, ev->root, dates[k], NULL) != 0) continue;
        DIR *d = opendir(src);
        if (!d) continue;
        struct dirent *e;
        while ((e = readdir(d)) != NULL) { /* the GPU: the first record that names one */
            size_t len = strlen(e->d_name);
            if (len < 6 || strcmp(e->d_name + len - 5, ".json") != 0 || e->d_name[0] == '.') continue;
            int oom = 0;
            json_t *rec = record_load(ev->root, dates[k], e->d_name, NULL, NULL, NULL, &oom);
            char s[EVIDENCE_SLUG_LEN];
            const char *name = rec ? record_gpu_name(rec) : NULL;
            int found = name && evidence_slug(name, s, sizeof s) == 0 && evidence_valid_slug(s);
            json_decref(rec);
            if (oom) { /* the date would go under the GPU of the date before */
                dv_seterr(err, "evidence: out of memory");
                rc = -1;
                break;
            }
            if (found) {
                memcpy(slug, s, sizeof slug);
                break;
            }
        }
        if (rc != 0) {
            closedir(d);
            break;
        }
        rewinddir(d);
        char gdir[PATH_MAX];
        if (durable_join(gdir, sizeof gdir, ev->root, slug, NULL) != 0 ||
            durable_join(dst, sizeof dst, gdir, dates[k], NULL) != 0 || durable_mkdir(dst, err) != 0) {
            closedir(d);
            rc = -1;
            break;
        }
        while ((e = readdir(d)) != NULL) {
            /* A temp file a crash left: nobody writes this layout any more. */
            if (strncmp(e->d_name, DURABLE_TMP_PREFIX, strlen(DURABLE_TMP_PREFIX)) == 0) {
                unlinkat(dirfd(d), e->d_name, 0);
                continue;
            }
            if (!not_hidden(e->d_name)) continue;
            char from[PATH_MAX], to[PATH_MAX];
            struct stat st;
            if (durable_join(from, sizeof from, src, e->d_name, NULL) != 0 ||
                durable_join(to, sizeof to, dst, e->d_name, NULL) != 0)
                continue;
            if (lstat(from, &st) != 0 || !S_ISREG(st.st_mode) || access(to, F_OK) == 0) continue;
            if (rename(from, to) != 0) {
                dv_seterr(err, "evidence: move %s to %s: %s", from, to, strerror(errno));
                rc = -1;
                break;
            }
        }
        closedir(d);
        if (rc == 0 && (durable_fsync_dir(dst, err) != 0 || durable_fsync_dir(src, err) != 0)) rc = -1;
        if (rc == 0 && rmdir(src) == 0 && durable_fsync_dir(ev->root, err) != 0) rc = -1;
    }
    free(dates);
    return rc;
}

/* Sweeps GPU folder `slug` and its dates, holding its lock. */
static int sweep_gpu(struct evidence *ev, const char *slug, char *err) {
    char gdir[PATH_MAX];
    if (durable_join(gdir, sizeof gdir, ev->root, slug, NULL) != 0) return 0;
    int fd = durable_lock(gdir, err);
    if (fd < 0) return -1;
    int total = durable_sweep(gdir, err);
    char(*dates)[EVIDENCE_SLUG_LEN] = NULL;
    size_t n = 0;
    if (total >= 0 && durable_list_dirs(gdir, evidence_valid_date, &dates, &n, err) != 0) total = -1;
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
    char(*slugs)[EVIDENCE_SLUG_LEN] = NULL;
    size_t n = 0;
    if (durable_list_dirs(ev->root, evidence_valid_slug, &slugs, &n, err) != 0) return -1;
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
    pthread_rwlockattr_t attr;
    pthread_rwlockattr_init(&attr);
#ifdef __GLIBC__
    /* Readers come by the hundred thousand a second: a swap must not wait
     * for a gap between them (glibc prefers readers by default). */
    pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
#endif
    pthread_rwlock_init(&ev->lock, &attr);
    pthread_rwlockattr_destroy(&attr);
    pthread_mutex_init(&ev->reload_lock, NULL);
    pthread_mutex_init(&ev->older_lock, NULL);
    atomic_init(&ev->next_check_ms, 0);
    int fd = durable_lock(ev->root, err);
    if (fd < 0 || migrate_legacy(ev, err) != 0) {
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
    for (size_t i = 0; i < ev->ngpus; i++) gpu_free(ev->gpus[i]);
    free(ev->gpus);
    evidence_blob_release(ev->index);
    for (size_t i = 0; i < OLDER_MEMO_SLOTS; i++) json_decref(ev->older[i].rec);
    pthread_rwlock_destroy(&ev->lock);
    pthread_mutex_destroy(&ev->reload_lock);
    pthread_mutex_destroy(&ev->older_lock);
    free(ev);
}

const char *evidence_root(const struct evidence *ev) { return ev->root; }

/* ---- writing a record ----------------------------------------------------- */

/* The suite of `rec`, and the timestamp and date it is filed with, after
 * checking what evidence_write() requires. Returns NULL with `err`. */
static const struct suite *record_check(const struct evidence_record *rec, char *finished, size_t flen, char *date,
                                        char *err) {
    const struct suite *suite = rec ? suites_find(rec->suite) : NULL;
    if (!suite) {
        dv_seterr(err, "evidence: unknown suite %s", rec && rec->suite ? rec->suite : "(null)");
        return NULL;
    }
    if (!evidence_valid_slug(rec->gpu)) {
        dv_seterr(err, "evidence %s: gpu: expected a GPU slug such as nvidia-h200, got %.64s", suite->name,
                  rec->gpu ? rec->gpu : "(none)");
        return NULL;
    }
    if (rec->ok && !rec->document_json) {
        dv_seterr(err, "evidence %s: a good record needs its document", suite->name);
        return NULL;
    }
    if (rec->finished_utc) snprintf(finished, flen, "%s", rec->finished_utc);
    else timeutil_utc(time(NULL), finished, flen);
    if (rec->date) {
        if (!evidence_valid_date(rec->date)) {
            dv_seterr(err, "evidence: bad date %s", rec->date);
            return NULL;
        }
        memcpy(date, rec->date, EVIDENCE_DATE_LEN);
    } else {
        snprintf(date, EVIDENCE_DATE_LEN, "%.10s", finished);
        if (!evidence_valid_date(date)) {
            dv_seterr(err, "evidence: bad finished_utc %s", finished);
            return NULL;
        }
    }
    return suite;
}

/* A JSON text of `rec` (NULL: JSON null), or NULL with *bad when it was not
 * JSON or there was no memory: `what` names it in `err`. */
static json_t *record_part(const char *text, const char *suite, const char *what, int *bad, char *err) {
    if (!text) return json_null();
    json_error_t je;
    json_t *v = jsonout_loadb(text, strlen(text), JSON_REJECT_DUPLICATES, &je);
    if (!v) {
        *bad = 1;
        if (jsonout_oom(&je)) dv_seterr(err, "evidence: out of memory");
        else dv_seterr(err, "evidence %s: the %s is not JSON", suite, what);
    }
    return v;
}

/* What nights_compare() reads of an older night (nights.h): its date,
 * status and suite version (older_nights() filters on them), summary,
 * comparison and provenance, and its document's device and build. A new
 * object, or NULL when out of memory. */
static json_t *older_trim(json_t *rec) {
    static const char *const keep[] = {"date", "status", "suite_version", "summary", "comparison", "provenance"};
    int bad = 0;
    json_t *t = json_object(), *doc = json_object(), *d = json_object_get(rec, "document");
    for (size_t i = 0; i < sizeof keep / sizeof keep[0]; i++) {
        json_t *v = json_object_get(rec, keep[i]);
        if (v) jsonout_put(t, keep[i], json_deep_copy(v), &bad);
    }
    if (json_is_object(d)) {
        json_t *dev = json_object_get(d, "device"), *build = json_object_get(d, "build");
        if (dev) jsonout_put(doc, "device", json_deep_copy(dev), &bad);
        if (build) jsonout_put(doc, "build", json_deep_copy(build), &bad);
    }
    jsonout_put(t, "document", doc, &bad);
    if (bad) {
        json_decref(t);
        return NULL;
    }
    return t;
}

/* Older night `key` (gpu/date/name) as older_trim() keeps it, from the
 * memo when the file is the one read before (device, inode, size, mtime),
 * else read (record_load()) and kept. A new reference, or NULL when it is
 * missing or not a record (*oom: or could not be read for want of memory). */
static json_t *older_get(struct evidence *ev, const char *gdir, const char *gpu, const char *date, const char *name,
                         int *oom) {
    char key[OLDER_KEY_LEN], path[PATH_MAX];
    struct stat now;
    int k = snprintf(key, sizeof key, "%s/%s/%s", gpu, date, name);
    const int keyed = k > 0 && (size_t)k < sizeof key && durable_join(path, sizeof path, gdir, date, name) == 0 &&
                      lstat(path, &now) == 0;
    if (keyed) {
        json_t *hit = NULL;
        pthread_mutex_lock(&ev->older_lock);
        for (size_t i = 0; i < OLDER_MEMO_SLOTS && !hit; i++) {
            struct older_entry *e = &ev->older[i];
            if (e->rec && strcmp(e->key, key) == 0 && same_file(&e->st, &now)) {
                e->used = ++ev->older_clock;
                hit = json_deep_copy(e->rec); /* the caller's own: no object is shared between threads */
                if (!hit) *oom = 1;
            }
        }
        pthread_mutex_unlock(&ev->older_lock);
        if (hit || *oom) return hit;
    }
    struct stat st;
    json_t *full = record_load(gdir, date, name, &st, NULL, NULL, oom);
    if (!full) return NULL;
    if (record_judge(full, NULL) != 0) { /* a good night must read as one to be compared with */
        json_decref(full);
        *oom = 1;
        return NULL;
    }
    json_t *rec = older_trim(full);
    json_decref(full);
    if (!rec) {
        *oom = 1;
        return NULL;
    }
    json_t *copy = keyed ? json_deep_copy(rec) : NULL;
    if (copy) {
        pthread_mutex_lock(&ev->older_lock);
        size_t slot = 0;
        for (size_t i = 0; i < OLDER_MEMO_SLOTS; i++) {
            struct older_entry *e = &ev->older[i];
            if (e->rec && strcmp(e->key, key) == 0) { /* the same night, rewritten: replace it */
                slot = i;
                break;
            }
            if (!e->rec || (ev->older[slot].rec && e->used < ev->older[slot].used)) slot = i;
        }
        struct older_entry *e = &ev->older[slot];
        json_decref(e->rec);
        snprintf(e->key, sizeof e->key, "%s", key);
        e->st = st;
        e->rec = copy;
        e->used = ++ev->older_clock;
        pthread_mutex_unlock(&ev->older_lock);
    }
    return rec;
}

/* The good records of `suite` (at its version) filed under GPU `gpu` on
 * dates before `date`, newest first, at most NIGHTS_HISTORY, into
 * out[0..*n) (release each), trimmed to what the comparison reads
 * (older_trim()). Returns 0, or -1 when a night could not be read for want
 * of memory (then none is kept: a comparison with a night missing would
 * name the wrong previous one). */
static int older_nights(struct evidence *ev, const char *gpu, const struct suite *suite, const char *date,
                        json_t **out, size_t *n) {
    char gdir[PATH_MAX], jname[NAME_MAX + 1], err[ERR_LEN];
    char(*dates)[EVIDENCE_SLUG_LEN] = NULL;
    size_t nd = 0;
    *n = 0;
    if (durable_join(gdir, sizeof gdir, ev->root, gpu, NULL) != 0) return 0;
    struct stat st;
    if (stat(gdir, &st) != 0) return 0; /* the GPU's first night */
    if (durable_list_dirs(gdir, evidence_valid_date, &dates, &nd, err) != 0) return -1;
    snprintf(jname, sizeof jname, "%s.json", suite->name);
    int oom = 0;
    for (size_t k = nd; k-- > 0 && *n < NIGHTS_HISTORY && !oom;) {
        if (strcmp(dates[k], date) >= 0) continue;
        json_t *r = older_get(ev, gdir, gpu, dates[k], jname, &oom);
        json_t *v = json_object_get(r, "suite_version");
        if (r && record_ok(r) && json_is_integer(v) && json_integer_value(v) == (json_int_t)suite->version)
            out[(*n)++] = r;
        else json_decref(r);
    }
    free(dates);
    if (oom) {
        for (size_t i = 0; i < *n; i++) json_decref(out[i]);
        *n = 0;
        return -1;
    }
    return 0;
}

/* The comparison of a night with `older` (newest first), from its date,
 * summary, document and provenance (borrowed). */
static json_t *night_comparison(const char *date, json_t *summary, json_t *doc, json_t *prov, json_t *const *older,
                                size_t n, int *bad) {
    json_t *night = json_object();
    jsonout_put(night, "date", jsonout_str(date), bad);
    jsonout_put(night, "summary", json_incref(summary), bad);
    jsonout_put(night, "document", json_incref(doc), bad);
    jsonout_put(night, "provenance", json_incref(prov), bad);
    json_t *c = *bad ? NULL : nights_compare(night, older, n, NIGHTS_TOLERANCE, bad);
    json_decref(night);
    return c;
}

/* The record's text (*json) and its transcript (*text), both malloc()ed.
 * A document that does not parse as divergence.v1 is kept as it is, with no
 * summary, on a failed record; a good record must parse, and is compared
 * with the good nights `older[0..nolder)` before it (newest first). Returns
 * 0, or -1 with `err` and nothing made. */
static int record_build(const struct evidence_record *rec, const struct suite *suite, const char *date,
                        const char *finished, json_t *const *older, size_t nolder, char **json, char **text,
                        char *err) {
    int bad = 0, rc = -1;
    struct dv_report *report = NULL;
    const struct dv_report *read = rec->report; /* the document as a report, when it reads as one */
    char *made_text = NULL;
    const char *transcript = rec->transcript;
    *json = *text = NULL;
    /* The record holds the caller's parsed document (a reference) or its own. */
    json_t *doc = rec->document ? json_incref((json_t *)rec->document)
                                : record_part(rec->document_json, suite->name, "document", &bad, err);
    json_t *req = bad ? NULL : record_part(rec->request_json, suite->name, "request", &bad, err);
    json_t *summary = json_null();
    if (bad) goto cleanup;
    if (rec->document_json || rec->document) {
        char why[ERR_LEN] = "";
        int parsed = read != NULL;
        if (!read) {
            if (!(report = experiment_report_create())) {
                dv_seterr(err, "evidence: out of memory");
                goto cleanup;
            }
            unsigned long failures = jsonout_failures();
            parsed = report_parse_json(doc, report, why) == 0;
            if (jsonout_failures() != failures) { /* what it read may be cut short */
                dv_seterr(err, "evidence: out of memory");
                goto cleanup;
            }
            read = report;
        }
        if (parsed) {
            summary = summary_of(read, &bad);
            if (!transcript) transcript = made_text = report_text(read);
            if (!transcript) bad = 1;
        } else if (rec->ok) {
            dv_seterr(err, "evidence %s: the document does not parse: %s", suite->name, why);
            goto cleanup;
        }
    }
    if (transcript) {
        *text = strdup(transcript);
    } else {
        const char *why = rec->reason ? rec->reason : "unknown";
        size_t need = strlen(suite->name) + strlen(date) + strlen(why) + 64;
        if ((*text = malloc(need))) snprintf(*text, need, "suite %s, %s: failed: %s\n", suite->name, date, why);
    }
    if (!*text) bad = 1;
    char host[256] = "";
    if (gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
    json_t *root = json_object(), *prov = json_object();
    jsonout_put(root, "schema", jsonout_str(EVIDENCE_SCHEMA), &bad);
    jsonout_put(root, "suite", jsonout_str(suite->name), &bad);
    jsonout_put(root, "suite_version", json_integer(suite->version), &bad);
    jsonout_put(root, "date", jsonout_str(date), &bad);
    jsonout_put(root, "gpu", jsonout_str(rec->gpu), &bad);
    jsonout_put(root, "gpu_name", jsonout_str_or_null(rec->gpu_name), &bad);
    jsonout_put(root, "status", jsonout_str(rec->ok ? "ok" : "failed"), &bad);
    if (!rec->ok) jsonout_put(root, "reason", jsonout_str(rec->reason ? rec->reason : "unknown"), &bad);
    jsonout_put(prov, "server_version", jsonout_str(buildinfo_version()), &bad);
    jsonout_put(prov, "git_revision", jsonout_str(buildinfo_git_revision()), &bad);
    jsonout_put(prov, "request", req, &bad);
    jsonout_put(prov, "queued_utc", jsonout_str_or_null(rec->queued_utc), &bad);
    jsonout_put(prov, "started_utc", jsonout_str_or_null(rec->started_utc), &bad);
    jsonout_put(prov, "finished_utc", jsonout_str(finished), &bad);
    if (host[0]) jsonout_put(prov, "host", jsonout_str(host), &bad);
    jsonout_put(root, "provenance", prov, &bad);
    jsonout_put(root, "summary", summary, &bad);
    if (rec->ok && json_is_object(summary))
        jsonout_put(root, "comparison", night_comparison(date, summary, doc, prov, older, nolder, &bad), &bad);
    jsonout_put(root, "document", doc, &bad);
    jsonout_put(root, "transcript", jsonout_str(*text ? *text : ""), &bad);
    doc = req = summary = NULL; /* in `root` now, or released */
    if (!bad) *json = jsonout_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(root);
    if (*json) rc = 0;
    else dv_seterr(err, "evidence: out of memory");
cleanup:
    json_decref(doc);
    json_decref(req);
    json_decref(summary);
    experiment_report_free(report);
    free(made_text);
    if (rc != 0) {
        free(*text);
        *text = NULL;
    }
    return rc;
}

/* Appends "what: why" to warning `warn` (ERR_LEN), after "; " when it
 * already says something. */
static void warn_add(char *warn, const char *what, const char *why) {
    size_t n = strlen(warn);
    /* Cut short when it runs out of room: the first failures matter most. */
    if (n + 1 < ERR_LEN && snprintf(warn + n, ERR_LEN - n, "%s%s: %s", n ? "; " : "", what, why) < 0) warn[n] = '\0';
}

/* Files the record text `json` and its transcript `text` under GPU `gpu`'s
 * lock: a good record (`ok`) over the date's record, a failure over it only
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
static int record_file(struct evidence *ev, const char *gpu, const struct suite *suite, const char *date,
                       const char *finished, int ok, const char *json, const char *text, char *warn, char *err) {
    char gdir[PATH_MAX], dir[PATH_MAX], jname[NAME_MAX + 1], tname[NAME_MAX + 1], fname[NAME_MAX + 1], why[ERR_LEN];
    warn[0] = '\0';
    if (durable_join(gdir, sizeof gdir, ev->root, gpu, NULL) != 0 ||
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
    int keep_good = 0;
    if (!ok) {
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
    int k = snprintf(stamp, sizeof stamp, "%s %s %s\n", date, suite->name, finished);
    if (durable_write(gdir, STAMP_NAME, stamp, (size_t)k, why) != 0)
        warn_add(warn, "the stamp that shows other servers on the directory a new night", why);
    durable_unlock(lockfd);
    return 0;
}

int evidence_write(struct evidence *ev, const struct evidence_record *rec, char *warn, char *err) {
    char finished[32], date[EVIDENCE_DATE_LEN], *json = NULL, *text = NULL, w[ERR_LEN] = "";
    if (warn) warn[0] = '\0';
    const struct suite *suite = record_check(rec, finished, sizeof finished, date, err);
    if (!suite) return -1;
    json_t *older[NIGHTS_HISTORY];
    size_t nolder = 0;
    if (rec->ok && older_nights(ev, rec->gpu, suite, date, older, &nolder) != 0) {
        dv_seterr(err, "evidence: out of memory");
        return -1;
    }
    int built = record_build(rec, suite, date, finished, older, nolder, &json, &text, err);
    for (size_t i = 0; i < nolder; i++) json_decref(older[i]);
    if (built != 0) return -1;
    int rc = record_file(ev, rec->gpu, suite, date, finished, rec->ok, json, text, w, err);
    free(json);
    free(text);
    if (rc != 0) return -1;
    if (w[0]) {
        LOG(LOG_WARNING, "evidence %s %s %s: filed, but %s", rec->gpu, date, suite->name, w);
        if (warn) snprintf(warn, ERR_LEN, "%s", w);
    }
    char rerr[ERR_LEN];
    pthread_mutex_lock(&ev->reload_lock);
    if (gpu_reload(ev, rec->gpu, rerr) != 0) {
        /* The record is on disk; the next read reloads it. */
        evidence_recheck(ev);
    }
    pthread_mutex_unlock(&ev->reload_lock);
    return 0;
}

/* ---- the index ------------------------------------------------------------ */

/* One suite's entry; links under `prefix` ("/evidence" or "/evidence/<gpu>"). */
static json_t *index_entry(const struct suite *s, const struct latest *l, const char *prefix, int *bad) {
    json_t *e = json_object();
    char href[192];
    jsonout_put(e, "suite", jsonout_str(s->name), bad);
    jsonout_put(e, "version", json_integer(s->version), bad);
    jsonout_put(e, "status", jsonout_str(l->attempt ? jstr(l->attempt, "status") : "none"), bad);
    const char *last_failure = NULL;
    if (l->attempt && !record_ok(l->attempt)) last_failure = l->attempt_date;
    else if (l->good_failed_too) last_failure = l->good_date;
    jsonout_put(e, "last_failure", jsonout_str_or_null(last_failure), bad);
    if (l->attempt && !record_ok(l->attempt) && jstr(l->attempt, "reason"))
        jsonout_put(e, "reason", jsonout_str(jstr(l->attempt, "reason")), bad);
    if (l->attempt) {
        json_t *a = json_object();
        jsonout_put(a, "date", jsonout_str(l->attempt_date), bad);
        jsonout_put(a, "status", jsonout_str(jstr(l->attempt, "status")), bad);
        jsonout_put(a, "finished_utc",
                    jsonout_str_or_null(jstr(json_object_get(l->attempt, "provenance"), "finished_utc")), bad);
        if (jstr(l->attempt, "reason")) jsonout_put(a, "reason", jsonout_str(jstr(l->attempt, "reason")), bad);
        jsonout_put(e, "last_attempt", a, bad);
    } else {
        jsonout_put(e, "last_attempt", json_null(), bad);
    }
    if (l->good) {
        json_t *summary = json_object_get(l->good, "summary");
        jsonout_put(e, "date", jsonout_str(l->good_date), bad);
        jsonout_put(e, "gpu", jsonout_str_or_null(jstr(summary, "gpu")), bad);
        jsonout_put(e, "finished_utc",
                    jsonout_str_or_null(jstr(json_object_get(l->good, "provenance"), "finished_utc")), bad);
        snprintf(href, sizeof href, "%s/latest/%s.json", prefix, s->name);
        jsonout_put(e, "href", jsonout_str(href), bad);
        snprintf(href, sizeof href, "%s/latest/%s.txt", prefix, s->name);
        jsonout_put(e, "transcript", jsonout_str(href), bad);
        jsonout_put(e, "summary", summary ? json_incref(summary) : json_null(), bad);
        jsonout_put(e, "comparison", nights_brief(l->good, bad), bad);
    } else {
        jsonout_put(e, "date", json_null(), bad);
        jsonout_put(e, "gpu", json_null(), bad);
    }
    snprintf(href, sizeof href, "%s/history/%s", prefix, s->name);
    jsonout_put(e, "history", jsonout_str(href), bad);
    return e;
}

/* Every suite's entry of `g` (NULL: a GPU with nothing filed). */
static json_t *index_entries(const struct gpu *g, const char *prefix, int *bad) {
    json_t *list = json_array();
    struct latest none;
    memset(&none, 0, sizeof none);
    for (size_t i = 0; i < suites_count(); i++)
        jsonout_append(list, index_entry(suites_get(i), g && i < g->n ? &g->l[i] : &none, prefix, bad), bad);
    return list;
}

static time_t gpu_newest(const struct gpu *g) {
    time_t t = (time_t)-1;
    for (size_t i = 0; g && i < g->n; i++)
        if (g->l[i].newest_mtime > t) t = g->l[i].newest_mtime;
    return t;
}

/* The text of `root` (released) as a blob; NULL when `bad` says it was not
 * built whole, or out of memory. */
static struct evidence_blob *json_blob(json_t *root, int bad, time_t mtime) {
    char *body = bad ? NULL : jsonout_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(root);
    return body ? blob_new(body, strlen(body), mtime, EVIDENCE_JSON, EVIDENCE_CHANGES) : NULL;
}

static json_t *gpu_index_json(const struct gpu *g, int with_schema, int *bad) {
    char prefix[96];
    snprintf(prefix, sizeof prefix, "/evidence/%s", g->slug);
    json_t *o = json_object(), *list = index_entries(g, prefix, bad);
    if (with_schema) jsonout_put(o, "schema", jsonout_str(EVIDENCE_INDEX_SCHEMA), bad);
    jsonout_put(o, "gpu", jsonout_str(g->slug), bad);
    jsonout_put(o, "name", jsonout_str(g->name), bad);
    snprintf(prefix, sizeof prefix, "/evidence/%s/latest", g->slug);
    jsonout_put(o, "latest", jsonout_str(prefix), bad);
    jsonout_put(o, "suites", list, bad);
    return o;
}

/* The whole index for default GPU `def` ("" none). Write lock held. */
static struct evidence_blob *index_build_locked(struct evidence *ev, const char *def) {
    int bad = 0;
    time_t newest = (time_t)-1;
    json_t *root = json_object(), *gpus = json_array();
    jsonout_put(root, "schema", jsonout_str(EVIDENCE_INDEX_SCHEMA), &bad);
    jsonout_put(root, "gpu", def[0] ? jsonout_str(def) : json_null(), &bad);
    jsonout_put(root, "suites", index_entries(gpu_find_locked(ev, def), "/evidence", &bad), &bad);
    for (size_t i = 0; i < ev->ngpus; i++) {
        jsonout_append(gpus, gpu_index_json(ev->gpus[i], 0, &bad), &bad);
        time_t t = gpu_newest(ev->gpus[i]);
        if (t > newest) newest = t;
    }
    jsonout_put(root, "gpus", gpus, &bad);
    return json_blob(root, bad, newest);
}

/* ---- reads ---------------------------------------------------------------- */

static int default_locked(struct evidence *ev, const char *own, char *out) {
    const char *pick = own && *own ? own : "";
    int several = 0;
    if (!gpu_find_locked(ev, pick)) {
        if (ev->ngpus == 1) pick = ev->gpus[0]->slug;
        else several = ev->ngpus > 1;
    }
    snprintf(out, EVIDENCE_SLUG_LEN, "%s", pick);
    return several;
}

int evidence_default_gpu(struct evidence *ev, const char *own, char *out) {
    maybe_rescan(ev);
    pthread_rwlock_rdlock(&ev->lock);
    int several = default_locked(ev, own, out);
    pthread_rwlock_unlock(&ev->lock);
    return several;
}

/* "a, b, c": the GPUs with evidence here. Lock held. */
static void gpu_list_locked(struct evidence *ev, char *out, size_t len) {
    size_t n = 0;
    out[0] = '\0';
    for (size_t i = 0; i < ev->ngpus && n + 1 < len; i++) {
        int k = snprintf(out + n, len - n, "%s%s", i ? ", " : "", ev->gpus[i]->slug);
        if (k < 0) break;
        n += (size_t)k;
    }
}

/* Resolves `gpu` (NULL: the default for `own`) into `slug`. Returns 0, or
 * -1 with `e` for a malformed slug, or when no GPU is the default because
 * several have evidence and the server's own has none. Lock held. */
static int resolve_locked(struct evidence *ev, const char *gpu, const char *own, char *slug, struct evidence_error *e) {
    if (gpu) {
        if (!evidence_valid_slug(gpu)) {
            seterror(e, EVIDENCE_EINVAL, "gpu: expected a GPU slug such as nvidia-h200, got %.64s", gpu);
            return -1;
        }
        snprintf(slug, EVIDENCE_SLUG_LEN, "%s", gpu);
        return 0;
    }
    if (default_locked(ev, own, slug)) {
        char list[512];
        gpu_list_locked(ev, list, sizeof list);
        seterror(e, EVIDENCE_ENOENT,
                 "this server's GPU (%s) has no evidence here; GPUs with evidence: %s (/evidence/{gpu}/...)",
                 own && *own ? own : "none", list);
        return -1;
    }
    return 0;
}

int evidence_get_index(struct evidence *ev, const char *own, struct evidence_blob **out, struct evidence_error *e) {
    char def[EVIDENCE_SLUG_LEN];
    *out = NULL;
    maybe_rescan(ev);
    pthread_rwlock_rdlock(&ev->lock);
    default_locked(ev, own, def);
    if (ev->index && strcmp(ev->index_for, def) == 0) *out = blob_ref(ev->index);
    pthread_rwlock_unlock(&ev->lock);
    if (*out) return 0;
    pthread_rwlock_wrlock(&ev->lock);
    default_locked(ev, own, def);
    if (!ev->index || strcmp(ev->index_for, def) != 0) {
        evidence_blob_release(ev->index);
        ev->index = index_build_locked(ev, def);
        snprintf(ev->index_for, sizeof ev->index_for, "%s", def);
    }
    *out = blob_ref(ev->index);
    pthread_rwlock_unlock(&ev->lock);
    if (!*out) seterror(e, EVIDENCE_EIO, "evidence: out of memory");
    return *out ? 0 : -1;
}

int evidence_get_gpu_index(struct evidence *ev, const char *gpu, struct evidence_blob **out, struct evidence_error *e) {
    *out = NULL;
    if (!evidence_valid_slug(gpu)) {
        seterror(e, EVIDENCE_EINVAL, "gpu: expected a GPU slug such as nvidia-h200, got %.64s", gpu ? gpu : "");
        return -1;
    }
    maybe_rescan(ev);
    pthread_rwlock_rdlock(&ev->lock);
    struct gpu *g = gpu_find_locked(ev, gpu);
    if (g && g->index) *out = blob_ref(g->index);
    pthread_rwlock_unlock(&ev->lock);
    if (*out) return 0;
    if (!g) {
        seterror(e, EVIDENCE_ENOENT, "no evidence for GPU %s", gpu);
        return -1;
    }
    pthread_rwlock_wrlock(&ev->lock);
    if ((g = gpu_find_locked(ev, gpu)) != NULL) {
        int bad = 0;
        if (!g->index) {
            json_t *o = gpu_index_json(g, 1, &bad);
            g->index = json_blob(o, bad, gpu_newest(g));
        }
        *out = blob_ref(g->index);
    }
    pthread_rwlock_unlock(&ev->lock);
    if (!*out)
        seterror(e, g ? EVIDENCE_EIO : EVIDENCE_ENOENT, g ? "evidence: out of memory" : "no evidence for GPU %s", gpu);
    return *out ? 0 : -1;
}

static const struct suite *find_suite(const char *suite, struct evidence_error *e) {
    const struct suite *s = suite ? suites_find(suite) : NULL;
    if (!s) seterror(e, EVIDENCE_ENOENT, "unknown suite: %.64s", suite ? suite : "");
    return s;
}

int evidence_get_latest(struct evidence *ev, const char *gpu, const char *own, const char *suite,
                        enum evidence_kind kind, struct evidence_blob **out, struct evidence_error *e) {
    *out = NULL;
    const struct suite *s = find_suite(suite, e);
    if (!s) return -1;
    size_t i = (size_t)suites_index(s->name);
    char slug[EVIDENCE_SLUG_LEN];
    maybe_rescan(ev);
    pthread_rwlock_rdlock(&ev->lock);
    if (resolve_locked(ev, gpu, own, slug, e) != 0) {
        pthread_rwlock_unlock(&ev->lock);
        return -1;
    }
    struct gpu *g = gpu_find_locked(ev, slug);
    if (g && i < g->n)
        *out = blob_ref(kind == EVIDENCE_TEXT       ? g->text[i]
                        : EVIDENCE_KIND_DRAWN(kind) ? g->drawn[kind][i]
                                                    : g->json[i]);
    if (!*out) {
        const char *why = g && i < g->n && g->l[i].attempt ? jstr(g->l[i].attempt, "reason") : NULL;
        if (gpu && !g) seterror(e, EVIDENCE_ENOENT, "no evidence for GPU %s", slug);
        else if (g && i < g->n && g->json[i])
            seterror(e, EVIDENCE_ENOENT, "the latest evidence for %s has no divergence.v1 document to draw", s->name);
        else
            seterror(e, EVIDENCE_ENOENT, "no good evidence for %s yet%s%.300s", s->name,
                     why ? "; last attempt failed: " : "", why ? why : "");
    }
    pthread_rwlock_unlock(&ev->lock);
    return *out ? 0 : -1;
}

int evidence_get_night(struct evidence *ev, const char *gpu, const char *own, const char *date, const char *suite,
                       enum evidence_kind kind, struct evidence_blob **out, struct evidence_error *e) {
    *out = NULL;
    if (!evidence_valid_date(date)) {
        seterror(e, EVIDENCE_EINVAL, "date: expected a calendar date YYYY-MM-DD, got %.32s", date ? date : "");
        return -1;
    }
    const struct suite *s = find_suite(suite, e);
    if (!s) return -1;
    char slug[EVIDENCE_SLUG_LEN], gdir[PATH_MAX], jname[NAME_MAX + 1], *raw = NULL;
    pthread_rwlock_rdlock(&ev->lock);
    int rc = resolve_locked(ev, gpu, own, slug, e);
    pthread_rwlock_unlock(&ev->lock);
    if (rc != 0) return -1;
    size_t rawlen = 0;
    struct stat st;
    snprintf(jname, sizeof jname, "%s.json", s->name);
    int oom = 0;
    json_t *rec = slug[0] && durable_join(gdir, sizeof gdir, ev->root, slug, NULL) == 0
                      ? record_load(gdir, date, jname, &st, &raw, &rawlen, &oom)
                      : NULL;
    if (!rec) {
        if (oom) seterror(e, EVIDENCE_EIO, "evidence: out of memory");
        else seterror(e, EVIDENCE_ENOENT, "no evidence for %s on %s", s->name, date);
        return -1;
    }
    /* A refresh files every suite under the date it started, so a night
     * that runs past midnight still writes yesterday's directory: only dates
     * before yesterday can no longer change. */
    char yesterday[EVIDENCE_DATE_LEN];
    evidence_date_of(time(NULL) - 86400, yesterday);
    enum evidence_fresh fresh = strcmp(date, yesterday) < 0 ? EVIDENCE_FINAL : EVIDENCE_CHANGES;
    if (EVIDENCE_KIND_DRAWN(kind)) {
        free(raw);
        struct dv_report *r = NULL;
        int rc2 = record_report(rec, &r, NULL);
        if (rc2 == 0) rc2 = draw(r, rec, s, date, kind, record_time(rec, st.st_mtime), out);
        experiment_report_free(r);
        json_decref(rec);
        if (rc2 != 0) seterror(e, EVIDENCE_EIO, "evidence: out of memory");
        else if (!*out)
            seterror(e, EVIDENCE_ENOENT, "the evidence for %s on %s has no document to draw", s->name, date);
        return *out ? 0 : -1;
    }
    if (kind == EVIDENCE_TEXT) {
        free(raw);
        const char *t = jstr(rec, "transcript");
        raw = strdup(t ? t : "");
        rawlen = raw ? strlen(raw) : 0;
    }
    const time_t when = record_time(rec, st.st_mtime);
    json_decref(rec);
    *out = blob_new(raw, rawlen, when, kind, fresh);
    if (!*out) seterror(e, EVIDENCE_EIO, "evidence: out of memory");
    return *out ? 0 : -1;
}

int evidence_get_history(struct evidence *ev, const char *gpu, const char *own, const char *suite, unsigned limit,
                         const char *cursor, struct evidence_blob **out, struct evidence_error *e) {
    *out = NULL;
    const struct suite *s = find_suite(suite, e);
    if (!s) return -1;
    if (limit < 1 || limit > EVIDENCE_HISTORY_MAX) {
        seterror(e, EVIDENCE_EINVAL, "limit: expected 1..%d nights, got %u", EVIDENCE_HISTORY_MAX, limit);
        return -1;
    }
    if (cursor && !evidence_valid_date(cursor)) {
        seterror(e, EVIDENCE_EINVAL, "cursor: expected a date YYYY-MM-DD (a page's next_cursor), got %.32s", cursor);
        return -1;
    }
    char slug[EVIDENCE_SLUG_LEN], gdir[PATH_MAX];
    size_t i = (size_t)suites_index(s->name), len = 0;
    time_t mtime = (time_t)-1;
    uint64_t digest = 0;
    char *page = NULL;
    maybe_rescan(ev);
    /* The page is cut from the nights the view keeps, under the read lock
     * (a copy of their texts, no record read): the view stays whole. */
    pthread_rwlock_rdlock(&ev->lock);
    int rc = resolve_locked(ev, gpu, own, slug, e);
    const struct gpu *g = rc == 0 ? gpu_find_locked(ev, slug) : NULL;
    if (rc == 0 && (g || !gpu))
        page = history_page(g && i < g->n ? g->hist[i] : NULL, s, slug, limit, cursor, &len, &mtime, &digest);
    pthread_rwlock_unlock(&ev->lock);
    if (rc != 0) return -1;
    if (!g && gpu) {
        /* A folder that is there but not in memory could not be loaded (no
         * memory; the next look tries again): not a GPU without evidence. */
        struct stat st;
        int there = durable_join(gdir, sizeof gdir, ev->root, slug, NULL) == 0 && stat(gdir, &st) == 0;
        if (there) seterror(e, EVIDENCE_EIO, "evidence %s: not loaded (out of memory); try again", slug);
        else seterror(e, EVIDENCE_ENOENT, "no evidence for GPU %s", slug);
        return -1;
    }
    *out = page ? blob_new_digest(page, len, digest, mtime, EVIDENCE_JSON, EVIDENCE_CHANGES) : NULL;
    if (!*out) seterror(e, EVIDENCE_EIO, "evidence: out of memory");
    return *out ? 0 : -1;
}
