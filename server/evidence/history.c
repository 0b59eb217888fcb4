/* history.c -- see history.h.
 *
 * A night is kept as (date, the record file's identity, the entry's text).
 * The text is compact JSON made once with jsonout_dumps(), refcounted so a
 * view made after a write shares every unchanged night with the view before
 * it; its FNV-1a digest is taken when it is made. An entry read back from a
 * sidecar is parsed and dumped again, which gives the very bytes the record
 * gave (jansson keeps the members' order, and jsonout_dumps() picks the
 * precision from the values, which a round trip keeps), so the text of a
 * night never depends on where it came from. A name that is not a record
 * is kept too, with no text, so that it is not read again on every load.
 */
#define _GNU_SOURCE

#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "api/jsonout.h"
#include "kernels/base/fnv.h"
#include "server/core/log.h"
#include "server/evidence/durable.h"
#include "server/evidence/history.h"
#include "server/evidence/nights.h"
#include "server/evidence/record.h"
#include "server/evidence/types.h"

_Static_assert(HISTORY_DATE_LEN == EVIDENCE_DATE_LEN, "a night's date is an evidence date");
_Static_assert(HISTORY_DIR_LEN == DURABLE_NAME_LEN, "dates come from durable_list_dirs()");

#define TEXT_FLAGS (JSON_COMPACT | JSON_PRESERVE_ORDER)

/* A night's entry as JSON text, shared by the histories that keep it. */
struct text {
    atomic_int refs;
    uint64_t digest;
    size_t len;
    char data[]; /* `len` bytes and a NUL */
};

struct night {
    char date[HISTORY_DATE_LEN];
    /* The record file the entry was made from. */
    ino_t ino;
    off_t size;
    struct timespec mtim;
    time_t when;       /* its measurement (record_time()): the page's Last-Modified */
    struct text *text; /* NULL: that file is not a record */
};

struct history {
    size_t n;
    struct night *nights; /* ascending by date */
};

/* ---- texts ------------------------------------------------------------- */

/* A text of `data` (malloc()ed, taken over even on failure: freed). */
static struct text *text_take(char *data) {
    size_t len = data ? strlen(data) : 0;
    struct text *t = data ? malloc(sizeof *t + len + 1) : NULL;
    if (t) {
        atomic_init(&t->refs, 1);
        t->len = len;
        memcpy(t->data, data, len + 1);
        t->digest = fnv1a_64(FNV1A_64_OFFSET, t->data, len);
    }
    free(data);
    return t;
}

static struct text *text_ref(struct text *t) {
    if (t) atomic_fetch_add_explicit(&t->refs, 1, memory_order_relaxed);
    return t;
}

static void text_release(struct text *t) {
    if (t && atomic_fetch_sub_explicit(&t->refs, 1, memory_order_acq_rel) == 1) free(t);
}

/* ---- an entry ------------------------------------------------------------ */

json_t *history_entry(json_t *rec, const char *date, int *bad) {
    json_t *p = json_object(), *summary = json_object_get(rec, "summary");
    jsonout_put(p, "date", jsonout_str(date), bad);
    /* A night the capture filed under a date it gave (record.h filed_as). */
    if (record_str(rec, "filed_as")) jsonout_put(p, "filed_as", jsonout_str(record_str(rec, "filed_as")), bad);
    jsonout_put(p, "status", jsonout_str(record_str(rec, "status")), bad);
    if (record_str(rec, "reason")) jsonout_put(p, "reason", jsonout_str(record_str(rec, "reason")), bad);
    json_t *version = json_object_get(rec, "suite_version");
    if (version) jsonout_put(p, "suite_version", json_incref(version), bad);
    jsonout_put(p, "gpu", jsonout_str_or_null(record_str(summary, "gpu")), bad);
    jsonout_put(p, "finished_utc", jsonout_str_or_null(record_str(json_object_get(rec, "provenance"), "finished_utc")),
                bad);
    jsonout_put(p, "comparison", nights_brief(rec, bad), bad);
    json_t *rows = json_array(), *tb, *row, *v;
    size_t ti, ri;
    const char *key;
    json_array_foreach(json_object_get(summary, "tables"), ti, tb) {
        json_array_foreach(json_object_get(tb, "rows"), ri, row) {
            json_t *copy = json_object();
            const char *table = record_str(tb, "id") ? record_str(tb, "id") : "";
            json_object_foreach(row, key, v) jsonout_put(copy, key, json_incref(v), bad);
            jsonout_put(copy, "table", jsonout_str(table), bad);
            /* The night against the one before it, as it was filed. */
            json_t *cmp = record_str(row, "name") ? nights_row(rec, table, record_str(row, "name")) : NULL;
            jsonout_put(copy, "compared", cmp ? json_incref(cmp) : json_null(), bad);
            jsonout_append(rows, copy, bad);
        }
    }
    jsonout_put(p, "rows", rows, bad);
    return p;
}

/* ---- sidecars ------------------------------------------------------------ */

static json_int_t mtime_ns(const struct stat *st) {
    return (json_int_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
}

/* The entry kept in sidecar `dir`/`name` when it names the record file `st`
 * describes, as a text, and the record's measurement time into *when; NULL
 * when it does not, or is missing or not a sidecar (*oom set when it could
 * not be told for want of memory). */
static struct text *sidecar_read(const char *dir, const char *name, const struct stat *st, time_t *when,
                                 int *oom) {
    char path[PATH_MAX], err[ERR_LEN], *data = NULL;
    size_t len = 0;
    if (durable_join(path, sizeof path, dir, name, NULL) != 0) return NULL;
    enum durable_read_status rs = durable_read(path, HISTORY_SIDECAR_MAX, &data, &len, NULL, err);
    if (rs != DURABLE_READ_OK) {
        if (rs == DURABLE_NOMEM) *oom = 1;
        return NULL;
    }
    json_error_t je;
    json_t *j = jsonout_loadb(data, len, JSON_REJECT_DUPLICATES, &je);
    free(data);
    if (!j) {
        if (jsonout_oom(&je)) *oom = 1;
        return NULL;
    }
    json_t *rec = json_object_get(j, "record"), *entry = json_object_get(j, "night");
    const char *schema = record_str(j, "schema");
    json_t *ino = json_object_get(rec, "inode"), *size = json_object_get(rec, "size"),
           *ns = json_object_get(rec, "mtime_ns"), *t = json_object_get(j, "time");
    struct text *out = NULL;
    if (schema && strcmp(schema, HISTORY_SIDECAR_SCHEMA) == 0 && json_is_object(entry) && json_is_integer(ino) &&
        json_is_integer(size) && json_is_integer(ns) && json_is_integer(t) &&
        json_integer_value(ino) == (json_int_t)st->st_ino && json_integer_value(size) == (json_int_t)st->st_size &&
        json_integer_value(ns) == mtime_ns(st)) {
        *when = (time_t)json_integer_value(t);
        out = text_take(jsonout_dumps(entry, TEXT_FLAGS));
        if (!out) *oom = 1;
    }
    json_decref(j);
    return out;
}

/* Writes the sidecar `dir`/`name` of `entry`, made from the record file
 * `st` describes, measured at `when`. A cache: a failure (a store that
 * cannot be written, no memory) only means the record is read again next
 * time. */
static void sidecar_write(const char *dir, const char *name, const struct stat *st, time_t when, json_t *entry) {
    int bad = 0;
    char err[ERR_LEN];
    json_t *o = json_object(), *rec = json_object();
    jsonout_put(o, "schema", jsonout_str(HISTORY_SIDECAR_SCHEMA), &bad);
    jsonout_put(rec, "inode", json_integer((json_int_t)st->st_ino), &bad);
    jsonout_put(rec, "size", json_integer((json_int_t)st->st_size), &bad);
    jsonout_put(rec, "mtime_ns", json_integer(mtime_ns(st)), &bad);
    jsonout_put(o, "record", rec, &bad);
    jsonout_put(o, "time", json_integer((json_int_t)when), &bad);
    jsonout_put(o, "night", json_incref(entry), &bad);
    char *text = bad ? NULL : jsonout_dumps(o, TEXT_FLAGS);
    json_decref(o);
    if (text && durable_replace(dir, name, text, strlen(text), err) != 0)
        LOG(LOG_DEBUG, "evidence: history sidecar not written: %s", err);
    free(text);
}

/* ---- nights -------------------------------------------------------------- */

static int same_file(const struct night *n, const struct stat *st) {
    return n->ino == st->st_ino && n->size == st->st_size && n->mtim.tv_sec == st->st_mtim.tv_sec &&
           n->mtim.tv_nsec == st->st_mtim.tv_nsec;
}

static void night_identify(struct night *n, const struct stat *st) {
    n->ino = st->st_ino;
    n->size = st->st_size;
    n->mtim = st->st_mtim;
}

/* Night `date` of suite `s` in `gdir`, whose record file is `st` (lstat):
 * from its sidecar, else from the record. Returns 0 (n->text NULL when the
 * file is not a record), or -1 when out of memory. */
static int night_make(const char *gdir, const char *date, const struct suite *s, const struct stat *st,
                      struct night *n) {
    char dir[PATH_MAX], jname[NAME_MAX + 1], sname[NAME_MAX + 1];
    int oom = 0;
    snprintf(jname, sizeof jname, "%s.json", s->name);
    snprintf(sname, sizeof sname, HISTORY_SIDECAR_PREFIX "%s" HISTORY_SIDECAR_SUFFIX, s->name);
    if (durable_join(dir, sizeof dir, gdir, date, NULL) != 0) return 0;
    night_identify(n, st);
    if ((n->text = sidecar_read(dir, sname, st, &n->when, &oom)) != NULL || oom) return oom ? -1 : 0;
    struct stat rst;
    json_t *rec = record_load(gdir, date, jname, &rst, NULL, NULL, &oom);
    if (!rec) return oom ? -1 : 0;
    night_identify(n, &rst); /* the file read, should it have been replaced since the look */
    n->when = record_time(rec, rst.st_mtime);
    int bad = record_judge(rec, NULL) != 0;
    json_t *entry = bad ? NULL : history_entry(rec, date, &bad);
    if (!bad) n->text = text_take(jsonout_dumps(entry, TEXT_FLAGS));
    if (n->text) sidecar_write(dir, sname, &rst, n->when, entry);
    json_decref(entry);
    json_decref(rec);
    return n->text ? 0 : -1;
}

void history_free(struct history *h) {
    if (!h) return;
    for (size_t i = 0; i < h->n; i++) text_release(h->nights[i].text);
    free(h->nights);
    free(h);
}

size_t history_nights(const struct history *h) { return h ? h->n : 0; }

struct history *history_load(const char *gdir, const struct suite *suite, char (*dates)[HISTORY_DIR_LEN],
                             size_t ndates, const struct history *old, int *oom) {
    struct history *h = calloc(1, sizeof *h);
    if (h && ndates && !(h->nights = calloc(ndates, sizeof *h->nights))) {
        free(h);
        h = NULL;
    }
    if (!h) {
        *oom = 1;
        return NULL;
    }
    char jname[NAME_MAX + 1], path[PATH_MAX];
    snprintf(jname, sizeof jname, "%s.json", suite->name);
    size_t o = 0; /* the first night of `old` not before dates[k] */
    for (size_t k = 0; k < ndates; k++) {
        struct stat st;
        if (durable_join(path, sizeof path, gdir, dates[k], jname) != 0 || lstat(path, &st) != 0 ||
            !S_ISREG(st.st_mode))
            continue;
        while (old && o < old->n && strcmp(old->nights[o].date, dates[k]) < 0) o++;
        struct night *n = &h->nights[h->n];
        if (old && o < old->n && strcmp(old->nights[o].date, dates[k]) == 0 && same_file(&old->nights[o], &st)) {
            *n = old->nights[o];
            text_ref(n->text);
        } else if (night_make(gdir, dates[k], suite, &st, n) != 0) {
            history_free(h);
            *oom = 1;
            return NULL;
        }
        memcpy(n->date, dates[k], HISTORY_DATE_LEN);
        n->date[HISTORY_DATE_LEN - 1] = '\0';
        h->n++;
    }
    return h;
}

/* ---- pages ---------------------------------------------------------------- */

char *history_page(const struct history *h, const struct suite *suite, const char *slug, unsigned limit,
                   const char *cursor, size_t *len, time_t *mtime, uint64_t *digest) {
    const size_t n = h ? h->n : 0;
    size_t end = n, first = n, count = 0, bytes = 0;
    while (cursor && end > 0 && strcmp(h->nights[end - 1].date, cursor) >= 0) end--;
    *mtime = (time_t)-1;
    /* Newest first from before the cursor, up to `limit` nights. */
    for (size_t i = end; i-- > 0 && count < limit;) {
        const struct night *nt = &h->nights[i];
        if (!nt->text) continue;
        first = i;
        count++;
        bytes += nt->text->len + 1;
        if (nt->when > *mtime) *mtime = nt->when;
    }
    int older = 0; /* a full page with nights before it: they are the next page */
    for (size_t i = first; count == limit && i-- > 0 && !older;) older = h->nights[i].text != NULL;
    char head[256], tail[64];
    int hl = snprintf(head, sizeof head,
                      "{\"schema\":\"" EVIDENCE_HISTORY_SCHEMA "\",\"suite\":\"%s\",\"version\":%u,\"gpu\":%s%s%s,"
                      "\"limit\":%u,\"nights\":[",
                      suite->name, suite->version, slug[0] ? "\"" : "", slug[0] ? slug : "null", slug[0] ? "\"" : "",
                      limit);
    int tl = snprintf(tail, sizeof tail, "],\"next_cursor\":%s%s%s}", older ? "\"" : "",
                      older ? h->nights[first].date : "null", older ? "\"" : "");
    if (hl < 0 || (size_t)hl >= sizeof head || tl < 0 || (size_t)tl >= sizeof tail) return NULL;
    char *out = malloc((size_t)hl + bytes + (size_t)tl + 1);
    if (!out) return NULL;
    uint64_t d = fnv1a_64(FNV1A_64_OFFSET, head, (size_t)hl);
    size_t at = (size_t)hl;
    memcpy(out, head, (size_t)hl);
    for (size_t i = first, k = 0; k < count; i++) {
        const struct text *t = h->nights[i].text;
        if (!t) continue;
        if (k++ > 0) out[at++] = ',';
        memcpy(out + at, t->data, t->len);
        at += t->len;
        d = fnv1a_64(d, &t->digest, sizeof t->digest);
    }
    memcpy(out + at, tail, (size_t)tl + 1);
    at += (size_t)tl;
    *len = at;
    *digest = fnv1a_64(d, tail, (size_t)tl);
    return out;
}
