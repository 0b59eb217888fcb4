/* views.c -- see views.h.
 *
 * The views are an array sorted by slug, searched in full (a store holds
 * the few GPU models of a fleet). The whole index is cached for the default
 * GPU it was made for (the default depends on the asking server's own GPU);
 * an install drops it.
 */
#define _GNU_SOURCE
#include "server/evidence/views.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/jsonout.h"
#include "server/evidence/history.h"
#include "server/evidence/names.h"
#include "server/evidence/record.h"
#include "server/evidence/slim.h"

void views_init(struct views *v) {
    memset(v, 0, sizeof *v);
    pthread_rwlockattr_t attr;
    pthread_rwlockattr_init(&attr);
#ifdef __GLIBC__
    /* Readers come by the hundred thousand a second: a swap must not wait
     * for a gap between them (glibc prefers readers by default). */
    pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
#endif
    pthread_rwlock_init(&v->lock, &attr);
    pthread_rwlockattr_destroy(&attr);
}

void views_cleanup(struct views *v) {
    for (size_t i = 0; i < v->n; i++) gpuview_free(v->gpus[i]);
    free(v->gpus);
    blob_release(v->index);
    pthread_rwlock_destroy(&v->lock);
}

static struct gpuview *find_locked(struct views *v, const char *slug) {
    for (size_t i = 0; slug && i < v->n; i++)
        if (strcmp(v->gpus[i]->slug, slug) == 0) return v->gpus[i];
    return NULL;
}

const struct gpuview *views_peek(struct views *v, const char *slug) {
    pthread_rwlock_rdlock(&v->lock);
    const struct gpuview *g = find_locked(v, slug);
    pthread_rwlock_unlock(&v->lock);
    return g;
}

static int install_locked(struct views *v, struct gpuview *g) {
    size_t i = 0;
    while (i < v->n && strcmp(v->gpus[i]->slug, g->slug) < 0) i++;
    blob_release(v->index);
    v->index = NULL;
    if (i < v->n && strcmp(v->gpus[i]->slug, g->slug) == 0) {
        gpuview_free(v->gpus[i]);
        v->gpus[i] = g;
        return 0;
    }
    if (v->n == v->cap) {
        size_t ncap = v->cap ? v->cap * 2 : 8;
        struct gpuview **bigger = realloc(v->gpus, ncap * sizeof *bigger);
        if (!bigger) {
            gpuview_free(g);
            return -1;
        }
        v->gpus = bigger;
        v->cap = ncap;
    }
    memmove(v->gpus + i + 1, v->gpus + i, (v->n - i) * sizeof *v->gpus);
    v->gpus[i] = g;
    v->n++;
    return 0;
}

int views_install(struct views *v, struct gpuview *g) {
    pthread_rwlock_wrlock(&v->lock);
    int rc = install_locked(v, g);
    pthread_rwlock_unlock(&v->lock);
    return rc;
}

int views_list(struct views *v, char (**slugs)[EVIDENCE_SLUG_LEN], struct timespec **seen, size_t *n) {
    pthread_rwlock_rdlock(&v->lock);
    *n = v->n;
    *slugs = *n ? malloc(*n * sizeof **slugs) : NULL;
    *seen = *n ? malloc(*n * sizeof **seen) : NULL;
    int ok = !*n || (*slugs && *seen);
    for (size_t i = 0; ok && i < *n; i++) {
        memcpy((*slugs)[i], v->gpus[i]->slug, EVIDENCE_SLUG_LEN);
        (*seen)[i] = v->gpus[i]->seen;
    }
    pthread_rwlock_unlock(&v->lock);
    if (ok) return 0;
    free(*slugs);
    free(*seen);
    *slugs = NULL;
    *seen = NULL;
    *n = 0;
    return -1;
}

/* ---- the default GPU ------------------------------------------------------ */

static int default_locked(struct views *v, const char *own, char *out) {
    const char *pick = own && *own ? own : "";
    int several = 0;
    if (!find_locked(v, pick)) {
        if (v->n == 1) pick = v->gpus[0]->slug;
        else several = v->n > 1;
    }
    snprintf(out, EVIDENCE_SLUG_LEN, "%s", pick);
    return several;
}

int views_default(struct views *v, const char *own, char *out) {
    pthread_rwlock_rdlock(&v->lock);
    int several = default_locked(v, own, out);
    pthread_rwlock_unlock(&v->lock);
    return several;
}

/* "a, b, c": the GPUs with evidence here. Lock held. */
static void gpu_list_locked(struct views *v, char *out, size_t len) {
    size_t n = 0;
    out[0] = '\0';
    for (size_t i = 0; i < v->n && n + 1 < len; i++) {
        int k = snprintf(out + n, len - n, "%s%s", i ? ", " : "", v->gpus[i]->slug);
        if (k < 0) break;
        n += (size_t)k;
    }
}

/* Resolves `gpu` (NULL: the default for `own`) into `slug`. Returns 0, or
 * -1 with `e` for a malformed slug, or when no GPU is the default because
 * several have evidence and the server's own has none. Lock held. */
static int resolve_locked(struct views *v, const char *gpu, const char *own, char *slug, struct evidence_error *e) {
    if (gpu) {
        if (!names_valid_slug(gpu)) {
            blob_error(e, EVIDENCE_EINVAL, "gpu: expected a GPU slug such as nvidia-h200, got %.64s", gpu);
            return -1;
        }
        snprintf(slug, EVIDENCE_SLUG_LEN, "%s", gpu);
        return 0;
    }
    if (default_locked(v, own, slug)) {
        char list[512];
        gpu_list_locked(v, list, sizeof list);
        blob_error(e, EVIDENCE_ENOENT,
                   "this server's GPU (%s) has no evidence here; GPUs with evidence: %s (/evidence/{gpu}/...)",
                   own && *own ? own : "none", list);
        return -1;
    }
    return 0;
}

int views_resolve(struct views *v, const char *gpu, const char *own, char *slug, struct evidence_error *e) {
    pthread_rwlock_rdlock(&v->lock);
    int rc = resolve_locked(v, gpu, own, slug, e);
    pthread_rwlock_unlock(&v->lock);
    return rc;
}

/* ---- the indexes ------------------------------------------------------------ */

/* The text of `root` (released) as a blob; NULL when `bad` says it was not
 * built whole, or out of memory. */
static struct blob *json_blob(json_t *root, int bad, time_t mtime) {
    char *body = bad ? NULL : jsonout_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(root);
    return body ? blob_new(body, strlen(body), mtime, EVIDENCE_JSON, EVIDENCE_CHANGES) : NULL;
}

/* The whole index for default GPU `def` ("" none). Write lock held. */
static struct blob *index_build_locked(struct views *v, const char *def) {
    int bad = 0;
    time_t newest = (time_t)-1;
    json_t *root = json_object(), *gpus = json_array();
    jsonout_put(root, "schema", jsonout_str(EVIDENCE_INDEX_SCHEMA), &bad);
    jsonout_put(root, "gpu", def[0] ? jsonout_str(def) : json_null(), &bad);
    jsonout_put(root, "suites", gpuview_index_entries(find_locked(v, def), "/evidence", &bad), &bad);
    for (size_t i = 0; i < v->n; i++) {
        jsonout_append(gpus, gpuview_index_json(v->gpus[i], 0, &bad), &bad);
        time_t t = gpuview_newest(v->gpus[i]);
        if (t > newest) newest = t;
    }
    jsonout_put(root, "gpus", gpus, &bad);
    return json_blob(root, bad, newest);
}

int views_index(struct views *v, const char *own, struct blob **out, struct evidence_error *e) {
    char def[EVIDENCE_SLUG_LEN];
    *out = NULL;
    pthread_rwlock_rdlock(&v->lock);
    default_locked(v, own, def);
    if (v->index && strcmp(v->index_for, def) == 0) *out = blob_ref(v->index);
    pthread_rwlock_unlock(&v->lock);
    if (*out) return 0;
    pthread_rwlock_wrlock(&v->lock);
    default_locked(v, own, def);
    if (!v->index || strcmp(v->index_for, def) != 0) {
        blob_release(v->index);
        v->index = index_build_locked(v, def);
        snprintf(v->index_for, sizeof v->index_for, "%s", def);
    }
    *out = blob_ref(v->index);
    pthread_rwlock_unlock(&v->lock);
    if (!*out) blob_error(e, EVIDENCE_EIO, "evidence: out of memory");
    return *out ? 0 : -1;
}

int views_gpu_index(struct views *v, const char *gpu, struct blob **out, struct evidence_error *e) {
    *out = NULL;
    pthread_rwlock_rdlock(&v->lock);
    struct gpuview *g = find_locked(v, gpu);
    if (g && g->index) *out = blob_ref(g->index);
    pthread_rwlock_unlock(&v->lock);
    if (*out) return 0;
    if (!g) {
        blob_error(e, EVIDENCE_ENOENT, "no evidence for GPU %s", gpu);
        return -1;
    }
    pthread_rwlock_wrlock(&v->lock);
    if ((g = find_locked(v, gpu)) != NULL) {
        int bad = 0;
        if (!g->index) {
            json_t *o = gpuview_index_json(g, 1, &bad);
            g->index = json_blob(o, bad, gpuview_newest(g));
        }
        *out = blob_ref(g->index);
    }
    pthread_rwlock_unlock(&v->lock);
    if (!*out)
        blob_error(e, g ? EVIDENCE_EIO : EVIDENCE_ENOENT, g ? "evidence: out of memory" : "no evidence for GPU %s",
                   gpu);
    return *out ? 0 : -1;
}

/* ---- a suite's latest and its history ------------------------------------------ */

int views_latest(struct views *v, const char *gpu, const char *own, const struct suite *s, enum evidence_kind kind,
                 struct blob **out, struct evidence_error *e) {
    size_t i = (size_t)suites_index(s->name);
    char slug[EVIDENCE_SLUG_LEN];
    *out = NULL;
    pthread_rwlock_rdlock(&v->lock);
    if (resolve_locked(v, gpu, own, slug, e) != 0) {
        pthread_rwlock_unlock(&v->lock);
        return -1;
    }
    const struct gpuview *g = find_locked(v, slug);
    if (g && i < g->n)
        *out = blob_ref(kind == EVIDENCE_TEXT       ? g->text[i]
                        : EVIDENCE_KIND_DRAWN(kind) ? g->drawn[kind][i]
                                                    : g->json[i]);
    if (!*out) {
        const char *why = g && i < g->n && g->l[i].attempt ? record_str(g->l[i].attempt, "reason") : NULL;
        if (gpu && !g) blob_error(e, EVIDENCE_ENOENT, "no evidence for GPU %s", slug);
        else if (g && i < g->n && g->json[i])
            blob_error(e, EVIDENCE_ENOENT, "the latest evidence for %s has no divergence.v1 document to draw", s->name);
        else
            blob_error(e, EVIDENCE_ENOENT, "no good evidence for %s yet%s%.300s", s->name,
                       why ? "; last attempt failed: " : "", why ? why : "");
    }
    pthread_rwlock_unlock(&v->lock);
    return *out ? 0 : -1;
}

int views_history(struct views *v, const char *gpu, const char *own, const struct suite *s, unsigned limit,
                  const char *cursor, struct blob **out, struct evidence_error *e) {
    char slug[EVIDENCE_SLUG_LEN];
    size_t i = (size_t)suites_index(s->name), len = 0;
    time_t mtime = (time_t)-1;
    uint64_t digest = 0;
    char *page = NULL;
    *out = NULL;
    /* The page is cut from the nights the view keeps, under the read lock
     * (a copy of their texts, no record read): the view stays whole. */
    pthread_rwlock_rdlock(&v->lock);
    int rc = resolve_locked(v, gpu, own, slug, e);
    const struct gpuview *g = rc == 0 ? find_locked(v, slug) : NULL;
    if (rc == 0 && (g || !gpu))
        page = history_page(g && i < g->n ? g->hist[i] : NULL, s, slug, limit, cursor, &len, &mtime, &digest);
    pthread_rwlock_unlock(&v->lock);
    if (rc != 0) return -1;
    if (!g && gpu) return VIEWS_ABSENT;
    *out = page ? blob_new_digest(page, len, digest, mtime, EVIDENCE_JSON, EVIDENCE_CHANGES) : NULL;
    if (!*out) blob_error(e, EVIDENCE_EIO, "evidence: out of memory");
    return *out ? 0 : -1;
}

int views_listing(struct views *v, const char *gpu, const struct suite *s, const char *date, const char *row,
                  struct blob **out, struct evidence_error *e) {
    size_t i = (size_t)suites_index(s->name), len = 0;
    int oom = 0, found = 0;
    char *text = NULL;
    time_t mtime = (time_t)-1;
    *out = NULL;
    /* The view's record is read, never changed, under the read lock
     * (jansson's readers and writers do not modify what they read). */
    pthread_rwlock_rdlock(&v->lock);
    const struct gpuview *g = find_locked(v, gpu);
    const struct gpuview_latest *l = g && i < g->n ? &g->l[i] : NULL;
    if (l && l->good && g->json[i] && strcmp(l->good_date, date) == 0) {
        found = 1;
        mtime = g->json[i]->mtime;
        text = slim_listing(l->good, row, &len, &oom);
    }
    pthread_rwlock_unlock(&v->lock);
    if (!found) return VIEWS_ABSENT;
    if (text && !(*out = blob_new(text, len, mtime, EVIDENCE_JSON, EVIDENCE_CHANGES))) oom = 1;
    if (*out) return 0;
    if (oom) blob_error(e, EVIDENCE_EIO, "evidence: out of memory");
    else blob_error(e, EVIDENCE_ENOENT, "no instruction listing for row %.16s of %s on %s", row, s->name, date);
    return -1;
}
