/* older.c -- see older.h.
 *
 * A cache entry is the trimmed night and the stat of the file it was read
 * from, under the key "<gpu>/<date>/<suite>.json". A lookup whose file is
 * no longer the one read (another stat) misses, and the night read then
 * replaces the entry of its key.
 */
#define _GNU_SOURCE
#include "server/evidence/older.h"

#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "api/jsonout.h"
#include "kernels/base/lru.h"
#include "server/evidence/durable.h"
#include "server/evidence/names.h"
#include "server/evidence/record.h"
#include "server/evidence/types.h"

#define KEY_LEN (EVIDENCE_SLUG_LEN + EVIDENCE_DATE_LEN + 96)

struct older {
    char root[PATH_MAX];
    pthread_mutex_t lock;
    struct lru *cache; /* key -> struct entry */
};

struct entry {
    struct stat st; /* of the file the night was read from */
    json_t *rec;    /* trimmed (trim())                     */
};

static void entry_free(void *v) {
    struct entry *e = v;
    json_decref(e->rec);
    free(e);
}

struct older *older_create(const char *root) {
    struct older *o = calloc(1, sizeof *o);
    if (!o || strlen(root) >= sizeof o->root || !(o->cache = lru_create(OLDER_ENTRIES, LRU_UNBOUNDED, entry_free))) {
        free(o);
        return NULL;
    }
    strcpy(o->root, root);
    pthread_mutex_init(&o->lock, NULL);
    return o;
}

void older_free(struct older *o) {
    if (!o) return;
    lru_free(o->cache);
    pthread_mutex_destroy(&o->lock);
    free(o);
}

/* What nights_compare() reads of an older night (nights.h): its date,
 * status and suite version (older_nights() filters on them), summary,
 * comparison and provenance, and its document's device and build. A new
 * object, or NULL when out of memory. */
static json_t *trim(json_t *rec) {
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

/* The kept copy of `key` when its file is still `now` (a new object, the
 * caller's), else NULL (*oom when the copy could not be made). */
static json_t *lookup(struct older *o, const char *key, const struct stat *now, int *oom) {
    json_t *hit = NULL;
    pthread_mutex_lock(&o->lock);
    const struct entry *e = lru_get(o->cache, key, strlen(key));
    if (e && record_same_file(&e->st, now)) {
        hit = json_deep_copy(e->rec); /* the caller's own: no object is shared between threads */
        if (!hit) *oom = 1;
    }
    pthread_mutex_unlock(&o->lock);
    return hit;
}

/* Keeps a copy of `rec`, read from the file `st` describes, under `key`
 * (in place of what the key held). Out of memory: not kept. */
static void keep(struct older *o, const char *key, const struct stat *st, json_t *rec) {
    struct entry *e = malloc(sizeof *e);
    if (!e || !(e->rec = json_deep_copy(rec))) {
        free(e);
        return;
    }
    e->st = *st;
    pthread_mutex_lock(&o->lock);
    lru_put(o->cache, key, strlen(key), e, (size_t)st->st_size); /* takes `e`, kept or not */
    pthread_mutex_unlock(&o->lock);
}

/* Older night `name` of `date` in GPU folder `gdir` (GPU `gpu`), trimmed:
 * from the cache when the file is the one read before, else read
 * (record_load(), judged) and kept. A new reference, or NULL when it is
 * missing or not a record (*oom: or could not be read for want of memory). */
static json_t *older_get(struct older *o, const char *gdir, const char *gpu, const char *date, const char *name,
                         int *oom) {
    char key[KEY_LEN], path[PATH_MAX];
    struct stat now;
    int k = snprintf(key, sizeof key, "%s/%s/%s", gpu, date, name);
    const int keyed = k > 0 && (size_t)k < sizeof key && durable_join(path, sizeof path, gdir, date, name) == 0 &&
                      lstat(path, &now) == 0;
    if (keyed) {
        json_t *hit = lookup(o, key, &now, oom);
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
    json_t *rec = trim(full);
    json_decref(full);
    if (!rec) {
        *oom = 1;
        return NULL;
    }
    if (keyed) keep(o, key, &st, rec);
    return rec;
}

int older_nights(struct older *o, const char *gpu, const struct suite *suite, const char *date, json_t **out,
                 size_t *n) {
    char gdir[PATH_MAX], jname[NAME_MAX + 1], err[ERR_LEN];
    char(*dates)[DURABLE_NAME_LEN] = NULL;
    size_t nd = 0;
    *n = 0;
    if (durable_join(gdir, sizeof gdir, o->root, gpu, NULL) != 0) return 0;
    struct stat st;
    if (stat(gdir, &st) != 0) return 0; /* the GPU's first night */
    if (durable_list_dirs(gdir, names_valid_date, &dates, &nd, err) != 0) return -1;
    snprintf(jname, sizeof jname, "%s.json", suite->name);
    int oom = 0;
    for (size_t k = nd; k-- > 0 && *n < NIGHTS_HISTORY && !oom;) {
        if (strcmp(dates[k], date) >= 0) continue;
        json_t *r = older_get(o, gdir, gpu, dates[k], jname, &oom);
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
