/* gpuview.c -- see gpuview.h.
 *
 * For each suite the dates are walked newest first until a good record is
 * found: on the way, the newest record of any status (the suite's last
 * attempt) and whether the good record's date also has a failure, for the
 * index. A record read from disk is judged (record_judge()): one that says
 * ok with a document that does not read is a failed attempt, and the walk
 * goes on to the nights before it. A record that cannot be read for want of
 * memory is never taken for a missing one: the load fails and the old view
 * stays.
 */
#define _GNU_SOURCE
#include "server/evidence/gpuview.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/jsonout.h"
#include "kernels/model/model/experiment.h"
#include "server/evidence/draw.h"
#include "server/evidence/durable.h"
#include "server/evidence/history.h"
#include "server/evidence/names.h"
#include "server/evidence/nights.h"
#include "server/evidence/record.h"
#include "server/evidence/slim.h"
#include "server/evidence/suites.h"

/* Date folders are listed with durable_list_dirs(), and handed to the
 * history as they are. */
_Static_assert(EVIDENCE_SLUG_LEN == DURABLE_NAME_LEN, "a listed name holds a slug");
_Static_assert(EVIDENCE_SLUG_LEN == HISTORY_DIR_LEN, "the history takes the listed dates");

typedef char date_name[DURABLE_NAME_LEN];

/* ---- a suite's latest ---------------------------------------------------- */

static void latest_cleanup(struct gpuview_latest *l) {
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
static json_t *record_as_was(const struct gpuview_latest *was, const char *gdir, const char *date, const char *jname,
                             struct stat *st) {
    char path[PATH_MAX];
    if (!was || !was->good || strcmp(was->good_date, date) != 0) return NULL;
    if (durable_join(path, sizeof path, gdir, date, jname) != 0 || lstat(path, st) != 0) return NULL;
    return record_same_file(&was->good_st, st) ? json_incref(was->good) : NULL;
}

/* Of a date's good record `rec` (NULL: none) and its failure `failed`
 * (NULL: none), the one filed last: the newer provenance.finished_utc, and
 * on a tie (timestamps have whole seconds) the file renamed last. */
static json_t *filed_last(json_t *rec, const struct stat *st, json_t *failed, const struct stat *fst) {
    if (!failed) return rec;
    if (!rec) return failed;
    const char *a = record_str(json_object_get(rec, "provenance"), "finished_utc");
    const char *b = record_str(json_object_get(failed, "provenance"), "finished_utc");
    int cmp = a && b ? strcmp(b, a) : 0;
    if (cmp == 0)
        cmp = fst->st_mtim.tv_sec != st->st_mtim.tv_sec ? (fst->st_mtim.tv_sec > st->st_mtim.tv_sec ? 1 : -1)
                                                        : (fst->st_mtim.tv_nsec >= st->st_mtim.tv_nsec ? 1 : -1);
    return cmp > 0 ? failed : rec;
}

/* The records of `date` (its record `jname`, its failure `fname`) added to
 * what `l` knows of the suite, the dates after it seen already. */
static void latest_look(const char *gdir, const char *date, const char *jname, const char *fname,
                        const struct gpuview_latest *was, struct gpuview_latest *l, int *oom) {
    struct stat st, fst;
    char *raw = NULL;
    size_t rawlen = 0;
    struct dv_report *report = NULL;
    json_t *rec = record_as_was(was, gdir, date, jname, &st);
    if (!rec && (rec = record_load(gdir, date, jname, &st, &raw, &rawlen, oom)) != NULL &&
        record_judge(rec, &report) != 0)
        *oom = 1;
    json_t *failed = l->attempt ? NULL : record_load(gdir, date, fname, &fst, NULL, NULL, oom);
    const time_t rt = rec ? record_time(rec, st.st_mtime) : (time_t)-1;
    const time_t ft = failed ? record_time(failed, fst.st_mtime) : (time_t)-1;
    if (rt > l->newest_mtime) l->newest_mtime = rt;
    if (ft > l->newest_mtime) l->newest_mtime = ft;
    if (!l->attempt && (rec || failed)) {
        l->attempt = json_incref(filed_last(rec, &st, failed, &fst));
        memcpy(l->attempt_date, date, EVIDENCE_DATE_LEN);
    }
    if (rec && record_ok(rec) && !failed && l->attempt) {
        /* The failure of this date, if any, was not loaded above. */
        json_t *f2 = record_load(gdir, date, fname, &fst, NULL, NULL, oom);
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
        memcpy(l->good_date, date, EVIDENCE_DATE_LEN);
    } else {
        json_decref(rec);
        free(raw);
        experiment_report_free(report);
    }
}

/* The newest good record and the newest attempt of suite `s` in GPU folder
 * `gdir` over `dates` (oldest first). `was` is the suite's latest in the
 * view installed before, whose blobs the new view may take (NULL: none may
 * be): a good record that did not change since is not read and parsed
 * again. *oom is set when a record could not be read for want of memory
 * (then `l` may miss it). */
static void latest_find(const char *gdir, const struct suite *s, date_name *dates, size_t ndates,
                        const struct gpuview_latest *was, struct gpuview_latest *l, int *oom) {
    memset(l, 0, sizeof *l);
    l->newest_mtime = (time_t)-1;
    char jname[NAME_MAX + 1], fname[NAME_MAX + 1];
    snprintf(jname, sizeof jname, "%s.json", s->name);
    snprintf(fname, sizeof fname, "%s.failed.json", s->name);
    for (size_t k = ndates; k-- > 0 && !l->good && !*oom;) latest_look(gdir, dates[k], jname, fname, was, l, oom);
}

/* ---- the view -------------------------------------------------------------- */

void gpuview_free(struct gpuview *g) {
    if (!g) return;
    for (size_t i = 0; i < g->n; i++) {
        if (g->l) latest_cleanup(&g->l[i]);
        if (g->json) blob_release(g->json[i]);
        if (g->text) blob_release(g->text[i]);
        for (int k = EVIDENCE_SVG; k < EVIDENCE_NUM_KINDS; k++)
            if (g->drawn[k]) blob_release(g->drawn[k][i]);
    }
    for (size_t i = 0; g->hist && i < g->n; i++) history_free(g->hist[i]);
    free(g->hist);
    blob_release(g->index);
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
static int reuse_suite(const struct gpuview *old, size_t i, const struct gpuview_latest *l, struct gpuview *g) {
    if (!old || i >= old->n || !old->l[i].good || !l->good || !old->json[i] || !old->text[i]) return 0;
    if (strcmp(old->l[i].good_date, l->good_date) != 0 || !record_same_file(&old->l[i].good_st, &l->good_st)) return 0;
    for (int k = EVIDENCE_SVG; k < EVIDENCE_NUM_KINDS; k++)
        if (old->drawn[k]) g->drawn[k][i] = blob_ref(old->drawn[k][i]);
    g->json[i] = blob_ref(old->json[i]);
    g->text[i] = blob_ref(old->text[i]);
    return 1;
}

/* A view of `n` suites of folder `slug`, empty. NULL when out of memory. */
static struct gpuview *view_alloc(const char *slug, size_t n) {
    struct gpuview *g = calloc(1, sizeof *g);
    if (!g) return NULL;
    int bad = 0;
    for (int k = EVIDENCE_SVG; k < EVIDENCE_NUM_KINDS; k++) bad |= !(g->drawn[k] = calloc(n, sizeof(void *)));
    if (bad || !(g->l = calloc(n, sizeof *g->l)) || !(g->json = calloc(n, sizeof *g->json)) ||
        !(g->text = calloc(n, sizeof *g->text)) || !(g->hist = calloc(n, sizeof *g->hist))) {
        gpuview_free(g);
        return NULL;
    }
    g->n = n;
    snprintf(g->slug, sizeof g->slug, "%s", slug);
    return g;
}

/* Suite `i`'s latest into `g`: found over `dates`, its blobs taken from
 * `old` when its good record did not change, else made (the bytes, the
 * transcript, each drawing, from one read of the document). Returns 0, or
 * -1 when out of memory. */
static int suite_load(struct gpuview *g, size_t i, const char *gdir, date_name *dates, size_t nd,
                      const struct gpuview *old) {
    struct gpuview_latest *l = &g->l[i];
    int oom = 0;
    /* The view before may lend its record only where it has its blobs to
     * lend (reuse_suite()). */
    const int lend = old && i < old->n && old->json[i] && old->text[i];
    latest_find(gdir, suites_get(i), dates, nd, lend ? &old->l[i] : NULL, l, &oom);
    if (oom) return -1;
    if (!g->name[0]) {
        const char *name = l->good ? record_gpu_name(l->good) : NULL;
        if (name) snprintf(g->name, sizeof g->name, "%s", name);
    }
    if (!l->good) return 0;
    if (reuse_suite(old, i, l, g)) {
        free(l->good_raw);
        l->good_raw = NULL;
        return 0;
    }
    const char *t = record_str(l->good, "transcript");
    char *text = strdup(t ? t : "");
    size_t tlen = text ? strlen(text) : 0;
    const time_t when = record_time(l->good, l->good_st.st_mtime); /* Last-Modified: the measurement */
    g->json[i] = blob_new(l->good_raw, l->good_len, when, EVIDENCE_JSON, EVIDENCE_CHANGES);
    g->text[i] = blob_new(text, tlen, when, EVIDENCE_TEXT, EVIDENCE_CHANGES);
    l->good_raw = NULL;
    if (!g->json[i] || !g->text[i]) return -1;
    struct dv_report *r = l->good_report; /* read once for every drawing */
    l->good_report = NULL;
    if (!r && record_report(l->good, &r, NULL) != 0) return -1;
    /* The latest slim record carries the suite's last nights (history.h),
     * so a page draws each row's history without asking for it. */
    size_t hlen = 0;
    time_t hm;
    uint64_t hd;
    const int nights = g->hist[i] && history_nights(g->hist[i]) > 1;
    char *hist = nights ? history_page(g->hist[i], suites_get(i), g->slug, SLIM_HISTORY_NIGHTS, NULL, &hlen, &hm, &hd)
                        : NULL;
    oom = nights && !hist; /* a record without the nights it has is not whole */
    for (int k = EVIDENCE_SVG; k < EVIDENCE_NUM_KINDS && !oom; k++)
        if (draw_record(r, l->good, suites_get(i), l->good_date, (enum evidence_kind)k, when, hist,
                        &g->drawn[k][i]) != 0)
            oom = 1;
    free(hist);
    experiment_report_free(r);
    return oom ? -1 : 0;
}

struct gpuview *gpuview_load(const char *root, const char *slug, const struct gpuview *old, char *err) {
    char gdir[PATH_MAX];
    struct stat st;
    if (durable_join(gdir, sizeof gdir, root, slug, NULL) != 0) {
        dv_seterr(err, "evidence %s: path too long", slug);
        return NULL;
    }
    if (stat(gdir, &st) != 0) {
        dv_seterr(err, "evidence %s: %s", gdir, strerror(errno));
        return NULL;
    }
    size_t n = suites_count();
    struct gpuview *g = view_alloc(slug, n);
    if (!g) {
        dv_seterr(err, "evidence: out of memory");
        return NULL;
    }
    g->seen = st.st_mtim;
    date_name *dates = NULL;
    size_t nd = 0;
    if (durable_list_dirs(gdir, names_valid_date, &dates, &nd, err) != 0) {
        gpuview_free(g);
        return NULL;
    }
    int oom = 0;
    for (size_t i = 0; i < n && !oom; i++)
        g->hist[i] = history_load(gdir, suites_get(i), dates, nd, old && i < old->n ? old->hist[i] : NULL, &oom);
    for (size_t i = 0; i < n && !oom; i++) oom = suite_load(g, i, gdir, dates, nd, old) != 0;
    free(dates);
    if (oom) { /* a view missing a record would say it is not there */
        gpuview_free(g);
        dv_seterr(err, "evidence: out of memory");
        return NULL;
    }
    for (size_t i = 0; i < n && !g->name[0]; i++) {
        const char *name = g->l[i].attempt ? record_gpu_name(g->l[i].attempt) : NULL;
        if (name) snprintf(g->name, sizeof g->name, "%s", name);
    }
    if (!g->name[0]) snprintf(g->name, sizeof g->name, "%s", slug);
    return g;
}

/* ---- what the index says ------------------------------------------------------ */

/* One suite's entry; links under `prefix` ("/evidence" or "/evidence/<gpu>"). */
static json_t *index_entry(const struct suite *s, const struct gpuview_latest *l, const char *prefix, int *bad) {
    json_t *e = json_object();
    char href[192];
    jsonout_put(e, "suite", jsonout_str(s->name), bad);
    jsonout_put(e, "version", json_integer(s->version), bad);
    jsonout_put(e, "status", jsonout_str(l->attempt ? record_str(l->attempt, "status") : "none"), bad);
    const char *last_failure = NULL;
    if (l->attempt && !record_ok(l->attempt)) last_failure = l->attempt_date;
    else if (l->good_failed_too) last_failure = l->good_date;
    jsonout_put(e, "last_failure", jsonout_str_or_null(last_failure), bad);
    if (l->attempt && !record_ok(l->attempt) && record_str(l->attempt, "reason"))
        jsonout_put(e, "reason", jsonout_str(record_str(l->attempt, "reason")), bad);
    if (l->attempt) {
        json_t *a = json_object();
        jsonout_put(a, "date", jsonout_str(l->attempt_date), bad);
        jsonout_put(a, "status", jsonout_str(record_str(l->attempt, "status")), bad);
        jsonout_put(a, "finished_utc",
                    jsonout_str_or_null(record_str(json_object_get(l->attempt, "provenance"), "finished_utc")), bad);
        if (record_str(l->attempt, "reason"))
            jsonout_put(a, "reason", jsonout_str(record_str(l->attempt, "reason")), bad);
        jsonout_put(e, "last_attempt", a, bad);
    } else {
        jsonout_put(e, "last_attempt", json_null(), bad);
    }
    if (l->good) {
        json_t *summary = json_object_get(l->good, "summary");
        jsonout_put(e, "date", jsonout_str(l->good_date), bad);
        jsonout_put(e, "gpu", jsonout_str_or_null(record_str(summary, "gpu")), bad);
        jsonout_put(e, "finished_utc",
                    jsonout_str_or_null(record_str(json_object_get(l->good, "provenance"), "finished_utc")), bad);
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
json_t *gpuview_index_entries(const struct gpuview *g, const char *prefix, int *bad) {
    json_t *list = json_array();
    struct gpuview_latest none;
    memset(&none, 0, sizeof none);
    for (size_t i = 0; i < suites_count(); i++)
        jsonout_append(list, index_entry(suites_get(i), g && i < g->n ? &g->l[i] : &none, prefix, bad), bad);
    return list;
}

time_t gpuview_newest(const struct gpuview *g) {
    time_t t = (time_t)-1;
    for (size_t i = 0; g && i < g->n; i++)
        if (g->l[i].newest_mtime > t) t = g->l[i].newest_mtime;
    return t;
}

json_t *gpuview_index_json(const struct gpuview *g, int with_schema, int *bad) {
    char prefix[96];
    snprintf(prefix, sizeof prefix, "/evidence/%s", g->slug);
    json_t *o = json_object(), *list = gpuview_index_entries(g, prefix, bad);
    if (with_schema) jsonout_put(o, "schema", jsonout_str(EVIDENCE_INDEX_SCHEMA), bad);
    jsonout_put(o, "gpu", jsonout_str(g->slug), bad);
    jsonout_put(o, "name", jsonout_str(g->name), bad);
    snprintf(prefix, sizeof prefix, "/evidence/%s/latest", g->slug);
    jsonout_put(o, "latest", jsonout_str(prefix), bad);
    jsonout_put(o, "suites", list, bad);
    return o;
}
