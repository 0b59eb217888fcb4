/* evidence.c -- the evidence store: durable writes, and the /evidence reads.
 *
 * Write protocol (evidence_write_file): every file is written to a temp file
 * in its own directory (".tmp-<name>.<pid>.<n>", O_CREAT|O_EXCL), fsync()ed,
 * rename()d over its final name, and then the directory is fsync()ed, so
 * after a crash at any point the name holds either the old bytes or the new
 * bytes, whole. A temp file a crash left behind is swept at start-up. A new
 * date directory is fsync()ed into the root before files go into it.
 *
 * A record is one file, <date>/<suite>.json, and it carries everything the
 * read side needs: the status, the provenance, the divergence.v1 document, a
 * summary (GPU name and each row's ratio, in this file's own schema so the
 * history does not depend on the document's field names) and the
 * transcript. The .txt beside it is the same transcript for people and
 * static file servers; the routes serve the transcript from the .json so
 * the two views of a night can never disagree, even if a crash fell between
 * the two renames.
 *
 * There is no index file: "latest" is the newest date whose record says ok,
 * found by scanning the date directories newest first. A failure is written
 * as the date's record only when that date has no good record; otherwise it
 * goes to <suite>.failed.json, so a failed re-run never hides good evidence.
 *
 * Reads take no lock (every file is replaced atomically); writes are
 * serialised by a mutex.
 */
#define _DEFAULT_SOURCE
#define _POSIX_C_SOURCE 200809L

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <jansson.h>

#include "base/buildinfo.h"
#include "evidence/evidence.h"
#include "base/timeutil.h"
#include "core/jsonout.h"
#include "api/report.h"
#include "evidence/suites.h"


#define CT_JSON "application/json"
#define CT_TEXT "text/plain; charset=utf-8"

struct evidence {
    char root[PATH_MAX];
    pthread_mutex_t write_lock;
};

static unsigned long tmp_counter;
static pthread_mutex_t tmp_counter_lock = PTHREAD_MUTEX_INITIALIZER;

/* ---- small helpers ---------------------------------------------------- */

static void utc_now(char *out, size_t len) { timeutil_utc(time(NULL), out, len); }

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

static int join(char *out, size_t len, const char *a, const char *b, const char *c) {
    int n = c ? snprintf(out, len, "%s/%s/%s", a, b, c) : snprintf(out, len, "%s/%s", a, b);
    return n < 0 || (size_t)n >= len ? -1 : 0;
}

static int fsync_dir(const char *dir, char *err) {
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        dv_seterr(err, "open %s: %s", dir, strerror(errno));
        return -1;
    }
    int rc = fsync(fd);
    int e = errno;
    close(fd);
    if (rc != 0) {
        dv_seterr(err, "fsync %s: %s", dir, strerror(e));
        return -1;
    }
    return 0;
}

/* mkdir -p, fsync()ing each parent a directory was created in. */
static int mkdir_p(const char *path, char *err) {
    char buf[PATH_MAX];
    size_t n = strlen(path);
    if (n == 0 || n >= sizeof buf) {
        dv_seterr(err, "evidence dir: bad path length");
        return -1;
    }
    memcpy(buf, path, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (buf[i] != '/' && buf[i] != '\0') continue;
        char saved = buf[i];
        buf[i] = '\0';
        if (mkdir(buf, 0755) == 0) {
            char parent[PATH_MAX];
            memcpy(parent, buf, i + 1);
            char *slash = strrchr(parent, '/');
            if (slash == parent) slash[1] = '\0';
            else if (slash) *slash = '\0';
            else strcpy(parent, ".");
            if (fsync_dir(parent, err) != 0) return -1;
        } else if (errno != EEXIST) {
            dv_seterr(err, "mkdir %s: %s", buf, strerror(errno));
            return -1;
        }
        buf[i] = saved;
    }
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode)) {
        dv_seterr(err, "evidence dir %s: not a directory", path);
        return -1;
    }
    return 0;
}

/* Reads a whole file. Returns 0, 1 when it does not exist, -1 with `err`. */
static int read_all(const char *path, char **data, size_t *len, struct stat *st, char *err) {
    *data = NULL;
    *len = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT) return 1;
        dv_seterr(err, "open %s: %s", path, strerror(errno));
        return -1;
    }
    struct stat s;
    if (fstat(fd, &s) != 0) {
        dv_seterr(err, "stat %s: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    size_t cap = (size_t)s.st_size + 1, n = 0;
    char *buf = malloc(cap);
    if (!buf) {
        dv_seterr(err, "read %s: out of memory", path);
        close(fd);
        return -1;
    }
    for (;;) {
        if (n + 1 >= cap) {
            char *bigger = realloc(buf, cap * 2);
            if (!bigger) {
                free(buf);
                close(fd);
                dv_seterr(err, "read %s: out of memory", path);
                return -1;
            }
            buf = bigger;
            cap *= 2;
        }
        ssize_t r = read(fd, buf + n, cap - n - 1);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
            dv_seterr(err, "read %s: %s", path, strerror(errno));
            free(buf);
            close(fd);
            return -1;
        }
        if (r == 0) break;
        n += (size_t)r;
    }
    close(fd);
    buf[n] = '\0';
    *data = buf;
    *len = n;
    if (st) *st = s;
    return 0;
}

/* ---- durable writes ------------------------------------------------- */

int evidence_write_file(const char *dir, const char *name, const void *data, size_t len, char *err) {
    char tmp[PATH_MAX], final[PATH_MAX], tmpname[NAME_MAX + 1];
    pthread_mutex_lock(&tmp_counter_lock);
    unsigned long n = ++tmp_counter;
    pthread_mutex_unlock(&tmp_counter_lock);
    int k = snprintf(tmpname, sizeof tmpname, EVIDENCE_TMP_PREFIX "%s.%ld.%lu", name, (long)getpid(), n);
    if (k < 0 || (size_t)k >= sizeof tmpname || join(tmp, sizeof tmp, dir, tmpname, NULL) != 0 ||
        join(final, sizeof final, dir, name, NULL) != 0) {
        dv_seterr(err, "write %s/%s: path too long", dir, name);
        return -1;
    }
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) {
        dv_seterr(err, "create %s: %s", tmp, strerror(errno));
        return -1;
    }
    const char *p = data;
    size_t left = len;
    while (left > 0) {
        ssize_t w = write(fd, p, left);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) {
            dv_seterr(err, "write %s: %s", tmp, strerror(errno));
            goto fail;
        }
        p += w;
        left -= (size_t)w;
    }
    if (fsync(fd) != 0) {
        dv_seterr(err, "fsync %s: %s", tmp, strerror(errno));
        goto fail;
    }
    if (close(fd) != 0) {
        fd = -1;
        dv_seterr(err, "close %s: %s", tmp, strerror(errno));
        goto fail;
    }
    fd = -1;
    if (rename(tmp, final) != 0) {
        dv_seterr(err, "rename %s: %s", final, strerror(errno));
        goto fail;
    }
    return fsync_dir(dir, err);
fail:
    if (fd >= 0) close(fd);
    unlink(tmp);
    return -1;
}

static int sweep_dir(const char *dir, char *err) {
    DIR *d = opendir(dir);
    if (!d) {
        dv_seterr(err, "opendir %s: %s", dir, strerror(errno));
        return -1;
    }
    int removed = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, EVIDENCE_TMP_PREFIX, strlen(EVIDENCE_TMP_PREFIX)) != 0) continue;
        if (unlinkat(dirfd(d), e->d_name, 0) == 0) removed++;
    }
    closedir(d);
    if (removed > 0 && fsync_dir(dir, err) != 0) return -1;
    return removed;
}

/* Sorted (ascending) list of the date directories under the root. */
static int list_dates(const char *root, char (**dates)[EVIDENCE_DATE_LEN], size_t *count, char *err) {
    *dates = NULL;
    *count = 0;
    DIR *d = opendir(root);
    if (!d) {
        dv_seterr(err, "opendir %s: %s", root, strerror(errno));
        return -1;
    }
    size_t cap = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (!evidence_valid_date(e->d_name)) continue;
        if (*count == cap) {
            size_t ncap = cap ? cap * 2 : 64;
            void *bigger = realloc(*dates, ncap * sizeof **dates);
            if (!bigger) {
                closedir(d);
                free(*dates);
                *dates = NULL;
                *count = 0;
                dv_seterr(err, "evidence: out of memory");
                return -1;
            }
            *dates = bigger;
            cap = ncap;
        }
        memcpy((*dates)[(*count)++], e->d_name, EVIDENCE_DATE_LEN);
    }
    closedir(d);
    if (*count > 1)
        qsort(*dates, *count, EVIDENCE_DATE_LEN, (int (*)(const void *, const void *))strcmp);
    return 0;
}

int evidence_sweep(struct evidence *ev, char *err) {
    int total = sweep_dir(ev->root, err);
    if (total < 0) return -1;
    char (*dates)[EVIDENCE_DATE_LEN];
    size_t n;
    if (list_dates(ev->root, &dates, &n, err) != 0) return -1;
    for (size_t i = 0; i < n; i++) {
        char dir[PATH_MAX];
        if (join(dir, sizeof dir, ev->root, dates[i], NULL) != 0) continue;
        int r = sweep_dir(dir, err);
        if (r < 0) {
            free(dates);
            return -1;
        }
        total += r;
    }
    free(dates);
    return total;
}

struct evidence *evidence_open(const char *root, char *err) {
    if (!root || !*root) root = EVIDENCE_DEFAULT_DIR;
    if (strlen(root) >= PATH_MAX - 64) {
        dv_seterr(err, "evidence dir: path too long");
        return NULL;
    }
    if (mkdir_p(root, err) != 0) return NULL;
    struct evidence *ev = calloc(1, sizeof *ev);
    if (!ev) {
        dv_seterr(err, "evidence: out of memory");
        return NULL;
    }
    strcpy(ev->root, root);
    size_t n = strlen(ev->root);
    while (n > 1 && ev->root[n - 1] == '/') ev->root[--n] = '\0';
    pthread_mutex_init(&ev->write_lock, NULL);
    if (evidence_sweep(ev, err) < 0) {
        evidence_close(ev);
        return NULL;
    }
    return ev;
}

void evidence_close(struct evidence *ev) {
    if (!ev) return;
    pthread_mutex_destroy(&ev->write_lock);
    free(ev);
}

const char *evidence_root(const struct evidence *ev) {
    return ev->root;
}

/* ---- records ------------------------------------------------------------ */

static json_t *num(double v) {
    return v == v && v - v == 0.0 ? json_real(v) : json_null(); /* NaN, inf -> null */
}

static json_t *str_or_null(const char *s) {
    return s ? json_string(s) : json_null();
}

/* The ratios of every row, in this store's own schema. */
static json_t *summary_of(const struct dv_report *r) {
    json_t *s = json_object(), *tables = json_array();
    if (!s || !tables) {
        json_decref(s);
        json_decref(tables);
        return NULL;
    }
    json_object_set_new(s, "gpu", r->device.present || r->device.name[0] ? json_string(r->device.name) : json_null());
    json_object_set_new(s, "measured", json_boolean(r->measured));
    json_object_set_new(s, "tables", tables);
    for (unsigned t = 0; t < r->ntables && t < DV_MAX_TABLES; t++) {
        const struct dv_table *tb = &r->tables[t];
        json_t *jt = json_object(), *rows = json_array();
        if (!jt || !rows) {
            json_decref(jt);
            json_decref(rows);
            json_decref(s);
            return NULL;
        }
        json_array_append_new(tables, jt);
        json_object_set_new(jt, "id", json_string(tb->id));
        json_object_set_new(jt, "baseline", json_string(tb->baseline));
        json_object_set_new(jt, "noise_limit", num(tb->noise_limit));
        json_object_set_new(jt, "noise_ok", json_boolean(tb->noise_ok));
        json_object_set_new(jt, "rows", rows);
        for (unsigned i = 0; i < tb->nrows && i < DV_MAX_ROWS; i++) {
            const struct dv_row *row = &tb->rows[i];
            json_t *jr = json_object();
            if (!jr) {
                json_decref(s);
                return NULL;
            }
            json_array_append_new(rows, jr);
            json_object_set_new(jr, "name", json_string(row->name));
            json_object_set_new(jr, "label", json_string(row->label));
            json_object_set_new(jr, "predicted_ratio", num(row->predicted_ratio));
            if (row->measured) {
                json_object_set_new(jr, "ratio", num(row->ratio));
                json_object_set_new(jr, "median_ms", num(row->time_ms.median));
                json_object_set_new(jr, "noise", num(row->time_ms.noise));
                json_object_set_new(jr, "check_ok", json_boolean(row->check.ok));
            } else {
                json_object_set_new(jr, "ratio", json_null());
            }
        }
    }
    return s;
}

static json_t *load_json(const char *text, size_t len) {
    json_error_t je;
    return json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
}

/* Loads <root>/<date>/<name>. Returns the object (NULL when missing or not a
 * record) and its stat. */
static json_t *load_record(const struct evidence *ev, const char *date, const char *name,
                           struct stat *st, char **raw, size_t *rawlen) {
    char path[PATH_MAX], *data;
    size_t len;
    char err[ERR_LEN];
    if (raw) *raw = NULL;
    if (join(path, sizeof path, ev->root, date, name) != 0) return NULL;
    if (read_all(path, &data, &len, st, err) != 0) return NULL;
    json_t *j = load_json(data, len);
    if (!j || !json_is_object(j) ||
        !json_is_string(json_object_get(j, "status")) ||
        strcmp(json_string_value(json_object_get(j, "schema")) ? json_string_value(json_object_get(j, "schema")) : "",
               EVIDENCE_SCHEMA) != 0) {
        json_decref(j);
        free(data);
        return NULL;
    }
    if (raw) {
        *raw = data;
        *rawlen = len;
    } else {
        free(data);
    }
    return j;
}

static int record_ok(json_t *j) {
    const char *s = json_string_value(json_object_get(j, "status"));
    return s && strcmp(s, "ok") == 0;
}

static const char *jstr(json_t *obj, const char *key) {
    return json_string_value(json_object_get(obj, key));
}

int evidence_write(struct evidence *ev, const struct evidence_record *rec, char *err) {
    const struct suite *suite = rec ? suites_find(rec->suite) : NULL;
    if (!suite) {
        dv_seterr(err, "evidence: unknown suite %s", rec && rec->suite ? rec->suite : "(null)");
        return -1;
    }
    if (rec->ok && !rec->document_json) {
        dv_seterr(err, "evidence %s: a good record needs its document", suite->name);
        return -1;
    }
    char finished[32], date[EVIDENCE_DATE_LEN];
    if (rec->finished_utc) snprintf(finished, sizeof finished, "%s", rec->finished_utc);
    else utc_now(finished, sizeof finished);
    if (rec->date) {
        if (!evidence_valid_date(rec->date)) {
            dv_seterr(err, "evidence: bad date %s", rec->date);
            return -1;
        }
        memcpy(date, rec->date, EVIDENCE_DATE_LEN);
    } else {
        snprintf(date, sizeof date, "%.10s", finished);
        if (!evidence_valid_date(date)) {
            dv_seterr(err, "evidence: bad finished_utc %s", finished);
            return -1;
        }
    }

    int rc = -1;
    json_t *root = NULL, *doc = NULL, *req = NULL, *summary = NULL;
    struct dv_report *report = NULL;
    char *made_text = NULL, *out = NULL, *text_out = NULL;
    const char *transcript = rec->transcript;

    if (rec->document_json) {
        doc = load_json(rec->document_json, strlen(rec->document_json));
        if (!doc) {
            dv_seterr(err, "evidence %s: the document is not JSON", suite->name);
            goto cleanup;
        }
        report = experiment_report_create();
        if (!report) {
            dv_seterr(err, "evidence: out of memory");
            goto cleanup;
        }
        char why[ERR_LEN];
        if (report_parse(rec->document_json, strlen(rec->document_json), report, why) == 0) {
            summary = summary_of(report);
            if (!transcript) transcript = made_text = report_text(report);
        } else if (rec->ok) {
            dv_seterr(err, "evidence %s: the document does not parse: %s", suite->name, why);
            goto cleanup;
        }
    }
    if (rec->request_json) {
        req = load_json(rec->request_json, strlen(rec->request_json));
        if (!req) {
            dv_seterr(err, "evidence %s: the request is not JSON", suite->name);
            goto cleanup;
        }
    }
    char host[256] = "";
    if (gethostname(host, sizeof host - 1) != 0) host[0] = '\0';

    root = json_object();
    json_t *prov = json_object();
    if (!root || !prov) {
        json_decref(prov);
        dv_seterr(err, "evidence: out of memory");
        goto cleanup;
    }
    json_object_set_new(root, "schema", json_string(EVIDENCE_SCHEMA));
    json_object_set_new(root, "suite", json_string(suite->name));
    json_object_set_new(root, "suite_version", json_integer(suite->version));
    json_object_set_new(root, "date", json_string(date));
    json_object_set_new(root, "status", json_string(rec->ok ? "ok" : "failed"));
    if (!rec->ok) json_object_set_new(root, "reason", json_string(rec->reason ? rec->reason : "unknown"));
    json_object_set_new(root, "provenance", prov);
    json_object_set_new(prov, "server_version", json_string(buildinfo_version()));
    json_object_set_new(prov, "git_revision", json_string(buildinfo_git_revision()));
    json_object_set_new(prov, "request", req ? req : json_null());
    req = NULL;
    json_object_set_new(prov, "queued_utc", str_or_null(rec->queued_utc));
    json_object_set_new(prov, "started_utc", str_or_null(rec->started_utc));
    json_object_set_new(prov, "finished_utc", json_string(finished));
    if (host[0]) json_object_set_new(prov, "host", json_string(host));
    json_object_set_new(root, "summary", summary ? summary : json_null());
    summary = NULL;
    json_object_set_new(root, "document", doc ? doc : json_null());
    doc = NULL;
    if (transcript) {
        text_out = strdup(transcript);
    } else {
        size_t need = strlen(suite->name) + strlen(date) + (rec->reason ? strlen(rec->reason) : 8) + 64;
        text_out = malloc(need);
        if (text_out)
            snprintf(text_out, need, "suite %s, %s: failed: %s\n", suite->name, date,
                     rec->reason ? rec->reason : "unknown");
    }
    if (!text_out) {
        dv_seterr(err, "evidence: out of memory");
        goto cleanup;
    }
    json_object_set_new(root, "transcript", json_string(text_out));
    out = jsonout_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    if (!out) {
        dv_seterr(err, "evidence: out of memory");
        goto cleanup;
    }

    char dir[PATH_MAX], jname[NAME_MAX + 1], tname[NAME_MAX + 1], fname[NAME_MAX + 1];
    if (join(dir, sizeof dir, ev->root, date, NULL) != 0) {
        dv_seterr(err, "evidence: path too long");
        goto cleanup;
    }
    snprintf(jname, sizeof jname, "%s.json", suite->name);
    snprintf(tname, sizeof tname, "%s.txt", suite->name);
    snprintf(fname, sizeof fname, "%s.failed.json", suite->name);

    pthread_mutex_lock(&ev->write_lock);
    if (mkdir_p(dir, err) != 0) {
        pthread_mutex_unlock(&ev->write_lock);
        goto cleanup;
    }
    int keep_good = 0;
    if (!rec->ok) {
        json_t *old = load_record(ev, date, jname, NULL, NULL, NULL);
        keep_good = old && record_ok(old);
        json_decref(old);
    }
    if (keep_good) {
        rc = evidence_write_file(dir, fname, out, strlen(out), err);
    } else {
        /* The transcript first: the .json is the record, and a crash between
         * the two leaves the old record whole (routes serve its own copy). */
        rc = evidence_write_file(dir, tname, text_out, strlen(text_out), err);
        if (rc == 0) rc = evidence_write_file(dir, jname, out, strlen(out), err);
    }
    pthread_mutex_unlock(&ev->write_lock);

cleanup:
    json_decref(root);
    json_decref(doc);
    json_decref(req);
    json_decref(summary);
    experiment_report_free(report);
    free(made_text);
    free(text_out);
    free(out);
    return rc;
}

/* ---- validators and conditional GET ------------------------------------ */

void evidence_etag(const void *data, size_t len, char *out) {
    uint64_t h = 0xcbf29ce484222325ull;
    const unsigned char *p = data;
    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    snprintf(out, 40, "\"%016llx-%zx\"", (unsigned long long)h, len);
}

static const char *const months[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                     "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

void evidence_http_date(time_t t, char *out, size_t len) { timeutil_http_date(t, out, len); }

time_t evidence_parse_http_date(const char *s) {
    /* IMF-fixdate: "Sun, 06 Nov 1994 08:49:37 GMT" */
    if (!s || strlen(s) != 29 || s[3] != ',' || s[4] != ' ' || strcmp(s + 25, " GMT") != 0) return (time_t)-1;
    char mon[4] = {s[8], s[9], s[10], 0};
    int m = -1;
    for (int i = 0; i < 12; i++)
        if (strcmp(mon, months[i]) == 0) m = i;
    const int digits[] = {5, 6, 12, 13, 14, 15, 17, 18, 20, 21, 23, 24};
    for (size_t i = 0; i < sizeof digits / sizeof digits[0]; i++)
        if (!isdigit((unsigned char)s[digits[i]])) return (time_t)-1;
    if (m < 0 || s[7] != ' ' || s[11] != ' ' || s[16] != ' ' || s[19] != ':' || s[22] != ':')
        return (time_t)-1;
    struct tm tm = {0};
    tm.tm_mday = (s[5] - '0') * 10 + (s[6] - '0');
    tm.tm_mon = m;
    tm.tm_year = atoi(s + 12) - 1900;
    tm.tm_hour = (s[17] - '0') * 10 + (s[18] - '0');
    tm.tm_min = (s[20] - '0') * 10 + (s[21] - '0');
    tm.tm_sec = (s[23] - '0') * 10 + (s[24] - '0');
    if (tm.tm_mday < 1 || tm.tm_mday > 31 || tm.tm_hour > 23 || tm.tm_min > 59 || tm.tm_sec > 60)
        return (time_t)-1;
    return timegm(&tm);
}

/* Does the If-None-Match list name `etag`? Weak comparison: W/ is ignored. */
static int etag_listed(const char *list, const char *etag) {
    size_t elen = strlen(etag);
    const char *p = list;
    while (*p) {
        while (*p == ' ' || *p == '\t' || *p == ',') p++;
        if (!*p) break;
        if (*p == '*') return 1;
        if (strncmp(p, "W/", 2) == 0) p += 2;
        const char *end = p;
        if (*p == '"') {
            end = strchr(p + 1, '"');
            end = end ? end + 1 : p + strlen(p);
        } else {
            while (*end && *end != ',') end++;
        }
        if ((size_t)(end - p) == elen && strncmp(p, etag, elen) == 0) return 1;
        p = end;
    }
    return 0;
}

int evidence_not_modified(const char *etag, time_t last_modified, const char *if_none_match,
                          const char *if_modified_since) {
    if (if_none_match) return etag && *etag && etag_listed(if_none_match, etag);
    if (if_modified_since && last_modified != (time_t)-1) {
        time_t since = evidence_parse_http_date(if_modified_since);
        return since != (time_t)-1 && last_modified <= since;
    }
    return 0;
}

/* ---- responses ---------------------------------------------------------- */

void evidence_response_cleanup(struct evidence_response *r) {
    if (!r) return;
    free(r->body);
    r->body = NULL;
    r->len = 0;
}

static int respond_error(struct evidence_response *out, int status, const char *fmt, ...)
#ifdef __GNUC__
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static int respond_error(struct evidence_response *out, int status, const char *fmt, ...) {
    char msg[ERR_LEN];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    json_t *j = json_pack("{s:s,s:i}", "error", msg, "status", status);
    out->status = status;
    out->body = j ? json_dumps(j, JSON_COMPACT) : NULL;
    out->len = out->body ? strlen(out->body) : 0;
    json_decref(j);
    out->content_type = CT_JSON;
    out->cache_control = status == 404 ? EVIDENCE_CACHE_MISSING : "no-store";
    out->etag[0] = '\0';
    out->last_modified[0] = '\0';
    return status;
}

/* Fills a 200 (or 304) from `body` (taken over). */
static int respond(struct evidence_response *out, char *body, size_t len, const char *ctype,
                   time_t mtime, const char *cache, const char *inm, const char *ims) {
    evidence_etag(body, len, out->etag);
    if (mtime != (time_t)-1) evidence_http_date(mtime, out->last_modified, sizeof out->last_modified);
    else out->last_modified[0] = '\0';
    out->content_type = ctype;
    out->cache_control = cache;
    if (evidence_not_modified(out->etag, mtime, inm, ims)) {
        free(body);
        out->status = 304;
        out->body = NULL;
        out->len = 0;
        return 304;
    }
    out->status = 200;
    out->body = body;
    out->len = len;
    return 200;
}

/* Serves one stored record as .json (its bytes) or .txt (its transcript). */
static int respond_record(struct evidence_response *out, json_t *rec, char *raw, size_t rawlen,
                          const struct stat *st, int text, const char *cache, const char *inm,
                          const char *ims) {
    if (!text) return respond(out, raw, rawlen, CT_JSON, st->st_mtime, cache, inm, ims);
    free(raw);
    const char *t = jstr(rec, "transcript");
    char *body = strdup(t ? t : "");
    if (!body) return respond_error(out, 500, "evidence: out of memory");
    return respond(out, body, strlen(body), CT_TEXT, st->st_mtime, cache, inm, ims);
}

/* Splits "<suite>[.json|.txt]". Returns the suite or NULL; *text set for .txt. */
static const struct suite *suite_of(const char *seg, int *text) {
    char name[SUITES_NAME_LEN];
    size_t n = strlen(seg);
    *text = 0;
    if (n > 5 && strcmp(seg + n - 5, ".json") == 0) n -= 5;
    else if (n > 4 && strcmp(seg + n - 4, ".txt") == 0) {
        n -= 4;
        *text = 1;
    }
    if (n == 0 || n >= sizeof name) return NULL;
    memcpy(name, seg, n);
    name[n] = '\0';
    return suites_find(name);
}

struct latest {
    char good_date[EVIDENCE_DATE_LEN];
    json_t *good;          /* the newest good record, or NULL */
    struct stat good_st;
    char *good_raw;
    size_t good_len;
    json_t *attempt;       /* the newest record of any status, or NULL */
    char attempt_date[EVIDENCE_DATE_LEN];
    time_t newest_mtime;   /* of the files read */
    int good_failed_too;   /* the good record's date also has a failure */
};

static void latest_cleanup(struct latest *l) {
    json_decref(l->good);
    json_decref(l->attempt);
    free(l->good_raw);
}

/* Finds the newest good record of `s` and its newest attempt. */
static int latest_find(const struct evidence *ev, const struct suite *s, char (*dates)[EVIDENCE_DATE_LEN],
                       size_t ndates, int want_raw, struct latest *l) {
    memset(l, 0, sizeof *l);
    l->newest_mtime = (time_t)-1;
    char jname[NAME_MAX + 1], fname[NAME_MAX + 1];
    snprintf(jname, sizeof jname, "%s.json", s->name);
    snprintf(fname, sizeof fname, "%s.failed.json", s->name);
    for (size_t k = ndates; k-- > 0 && !l->good;) {
        struct stat st, fst;
        char *raw = NULL;
        size_t rawlen = 0;
        json_t *rec = load_record(ev, dates[k], jname, &st, want_raw ? &raw : NULL, &rawlen);
        json_t *failed = l->attempt ? NULL : load_record(ev, dates[k], fname, &fst, NULL, NULL);
        if (rec && st.st_mtime > l->newest_mtime) l->newest_mtime = st.st_mtime;
        if (failed && fst.st_mtime > l->newest_mtime) l->newest_mtime = fst.st_mtime;
        if (!l->attempt && (rec || failed)) {
            json_t *pick = rec;
            if (failed) {
                const char *a = rec ? json_string_value(json_object_get(json_object_get(rec, "provenance"), "finished_utc")) : NULL;
                const char *b = json_string_value(json_object_get(json_object_get(failed, "provenance"), "finished_utc"));
                /* Timestamps have whole seconds: a tie goes to the file
                 * renamed last. */
                int cmp = a && b ? strcmp(b, a) : 0;
                if (cmp == 0 && rec)
                    cmp = fst.st_mtim.tv_sec != st.st_mtim.tv_sec ? (fst.st_mtim.tv_sec > st.st_mtim.tv_sec ? 1 : -1)
                                                                  : (fst.st_mtim.tv_nsec >= st.st_mtim.tv_nsec ? 1 : -1);
                if (!rec || cmp > 0) pick = failed;
            }
            l->attempt = json_incref(pick);
            memcpy(l->attempt_date, dates[k], EVIDENCE_DATE_LEN);
        }
        if (rec && record_ok(rec) && !failed && l->attempt) {
            /* The failure of this date, if any, was not loaded above. */
            json_t *f2 = load_record(ev, dates[k], fname, &fst, NULL, NULL);
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
            memcpy(l->good_date, dates[k], EVIDENCE_DATE_LEN);
        } else {
            json_decref(rec);
            free(raw);
        }
    }
    return 0;
}

static json_t *index_entry(const struct suite *s, const struct latest *l) {
    json_t *e = json_object();
    if (!e) return NULL;
    char href[128];
    json_object_set_new(e, "suite", json_string(s->name));
    json_object_set_new(e, "version", json_integer(s->version));
    json_object_set_new(e, "status", json_string(l->attempt ? jstr(l->attempt, "status") : "none"));
    const char *last_failure = NULL;
    if (l->attempt && !record_ok(l->attempt)) last_failure = l->attempt_date;
    else if (l->good_failed_too) last_failure = l->good_date;
    json_object_set_new(e, "last_failure", str_or_null(last_failure));
    if (l->attempt && !record_ok(l->attempt) && jstr(l->attempt, "reason"))
        json_object_set_new(e, "reason", json_string(jstr(l->attempt, "reason")));
    if (l->attempt) {
        json_t *a = json_object();
        json_object_set_new(a, "date", json_string(l->attempt_date));
        json_object_set_new(a, "status", json_string(jstr(l->attempt, "status")));
        json_object_set_new(a, "finished_utc", str_or_null(jstr(json_object_get(l->attempt, "provenance"), "finished_utc")));
        if (jstr(l->attempt, "reason")) json_object_set_new(a, "reason", json_string(jstr(l->attempt, "reason")));
        json_object_set_new(e, "last_attempt", a);
    } else {
        json_object_set_new(e, "last_attempt", json_null());
    }
    if (l->good) {
        json_t *summary = json_object_get(l->good, "summary");
        json_object_set_new(e, "date", json_string(l->good_date));
        json_object_set_new(e, "gpu", str_or_null(jstr(summary, "gpu")));
        json_object_set_new(e, "finished_utc", str_or_null(jstr(json_object_get(l->good, "provenance"), "finished_utc")));
        snprintf(href, sizeof href, "/evidence/latest/%s.json", s->name);
        json_object_set_new(e, "href", json_string(href));
        snprintf(href, sizeof href, "/evidence/latest/%s.txt", s->name);
        json_object_set_new(e, "transcript", json_string(href));
        json_object_set(e, "summary", summary ? summary : json_null());
    } else {
        json_object_set_new(e, "date", json_null());
        json_object_set_new(e, "gpu", json_null());
    }
    snprintf(href, sizeof href, "/evidence/history/%s", s->name);
    json_object_set_new(e, "history", json_string(href));
    return e;
}

static int get_latest_index(struct evidence *ev, char (*dates)[EVIDENCE_DATE_LEN], size_t n,
                            const char *inm, const char *ims, struct evidence_response *out) {
    json_t *root = json_object(), *list = json_array();
    time_t newest = (time_t)-1;
    if (!root || !list) {
        json_decref(root);
        json_decref(list);
        return respond_error(out, 500, "evidence: out of memory");
    }
    json_object_set_new(root, "schema", json_string("divergence.evidence.index.v1"));
    json_object_set_new(root, "suites", list);
    for (size_t i = 0; i < suites_count(); i++) {
        struct latest l;
        latest_find(ev, suites_get(i), dates, n, 0, &l);
        if (l.newest_mtime > newest) newest = l.newest_mtime;
        json_array_append_new(list, index_entry(suites_get(i), &l));
        latest_cleanup(&l);
    }
    char *body = jsonout_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(root);
    if (!body) return respond_error(out, 500, "evidence: out of memory");
    return respond(out, body, strlen(body), CT_JSON, newest, EVIDENCE_CACHE_LATEST, inm, ims);
}

static int get_history(struct evidence *ev, const struct suite *s, char (*dates)[EVIDENCE_DATE_LEN],
                       size_t n, const char *inm, const char *ims, struct evidence_response *out) {
    json_t *root = json_object(), *points = json_array();
    time_t newest = (time_t)-1;
    if (!root || !points) {
        json_decref(root);
        json_decref(points);
        return respond_error(out, 500, "evidence: out of memory");
    }
    json_object_set_new(root, "suite", json_string(s->name));
    json_object_set_new(root, "version", json_integer(s->version));
    json_object_set_new(root, "nights", points);
    char jname[NAME_MAX + 1];
    snprintf(jname, sizeof jname, "%s.json", s->name);
    for (size_t k = 0; k < n; k++) { /* dates are sorted oldest first */
        struct stat st;
        json_t *rec = load_record(ev, dates[k], jname, &st, NULL, NULL);
        if (!rec) continue;
        if (st.st_mtime > newest) newest = st.st_mtime;
        json_t *p = json_object(), *summary = json_object_get(rec, "summary");
        if (p) {
            json_object_set_new(p, "date", json_string(dates[k]));
            json_object_set_new(p, "status", json_string(jstr(rec, "status")));
            if (jstr(rec, "reason")) json_object_set_new(p, "reason", json_string(jstr(rec, "reason")));
            json_object_set(p, "suite_version", json_object_get(rec, "suite_version"));
            json_object_set_new(p, "gpu", str_or_null(jstr(summary, "gpu")));
            json_object_set_new(p, "finished_utc", str_or_null(jstr(json_object_get(rec, "provenance"), "finished_utc")));
            /* One flat list of rows, each naming its table: what a trend
             * plot iterates over. */
            json_t *rows = json_array(), *tb, *row;
            size_t ti, ri;
            json_array_foreach(json_object_get(summary, "tables"), ti, tb) {
                json_array_foreach(json_object_get(tb, "rows"), ri, row) {
                    json_t *copy = json_copy(row);
                    if (!copy) continue;
                    json_object_set_new(copy, "table", json_string(jstr(tb, "id") ? jstr(tb, "id") : ""));
                    json_array_append_new(rows, copy);
                }
            }
            json_object_set_new(p, "rows", rows ? rows : json_array());
            json_array_append_new(points, p);
        }
        json_decref(rec);
    }
    char *body = jsonout_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(root);
    if (!body) return respond_error(out, 500, "evidence: out of memory");
    return respond(out, body, strlen(body), CT_JSON, newest, EVIDENCE_CACHE_LATEST, inm, ims);
}

int evidence_http_get(struct evidence *ev, const char *url_path, const char *if_none_match,
                      const char *if_modified_since, struct evidence_response *out) {
    memset(out, 0, sizeof *out);
    static const char prefix[] = "/evidence/";
    if (!url_path || strncmp(url_path, prefix, sizeof prefix - 1) != 0)
        return respond_error(out, 404, "not found");
    /* Up to three segments; empty segments (//, trailing /) are not paths. */
    char buf[256], *seg[4] = {0};
    size_t nseg = 0;
    const char *rest = url_path + sizeof prefix - 1;
    if (strlen(rest) >= sizeof buf) return respond_error(out, 404, "not found");
    strcpy(buf, rest);
    for (char *p = buf, *next; p; p = next) {
        next = strchr(p, '/');
        if (next) *next++ = '\0';
        if (!*p || nseg == 3) return respond_error(out, 404, "not found");
        seg[nseg++] = p;
    }
    char (*dates)[EVIDENCE_DATE_LEN] = NULL;
    size_t n = 0;
    char err[ERR_LEN];
    int text = 0, status;
    const struct suite *s = NULL;

    if (nseg == 1 && strcmp(seg[0], "latest") == 0) {
        if (list_dates(ev->root, &dates, &n, err) != 0) return respond_error(out, 500, "%s", err);
        status = get_latest_index(ev, dates, n, if_none_match, if_modified_since, out);
    } else if (nseg == 2 && strcmp(seg[0], "history") == 0) {
        if (!(s = suites_find(seg[1]))) return respond_error(out, 404, "unknown suite: %s", seg[1]);
        if (list_dates(ev->root, &dates, &n, err) != 0) return respond_error(out, 500, "%s", err);
        status = get_history(ev, s, dates, n, if_none_match, if_modified_since, out);
    } else if (nseg == 2 && strcmp(seg[0], "latest") == 0) {
        if (!(s = suite_of(seg[1], &text))) return respond_error(out, 404, "unknown suite: %s", seg[1]);
        if (list_dates(ev->root, &dates, &n, err) != 0) return respond_error(out, 500, "%s", err);
        struct latest l;
        latest_find(ev, s, dates, n, 1, &l);
        if (!l.good) {
            const char *why = l.attempt ? jstr(l.attempt, "reason") : NULL;
            status = respond_error(out, 404, "no good evidence for %s yet%s%s", s->name,
                                   why ? "; last attempt failed: " : "", why ? why : "");
        } else {
            status = respond_record(out, l.good, l.good_raw, l.good_len, &l.good_st, text,
                                    EVIDENCE_CACHE_LATEST, if_none_match, if_modified_since);
            l.good_raw = NULL; /* taken over */
        }
        latest_cleanup(&l);
    } else if (nseg == 2) {
        if (!evidence_valid_date(seg[0]))
            return respond_error(out, 400, "date: expected a calendar date YYYY-MM-DD, got %.32s", seg[0]);
        if (!(s = suite_of(seg[1], &text))) return respond_error(out, 404, "unknown suite: %s", seg[1]);
        char jname[NAME_MAX + 1], *raw = NULL;
        size_t rawlen = 0;
        struct stat st;
        snprintf(jname, sizeof jname, "%s.json", s->name);
        json_t *rec = load_record(ev, seg[0], jname, &st, &raw, &rawlen);
        if (!rec) return respond_error(out, 404, "no evidence for %s on %s", s->name, seg[0]);
        /* A refresh files every suite under the date it started, so a night
         * that runs past midnight still writes yesterday's directory: only
         * dates before yesterday can no longer change. */
        char yesterday[EVIDENCE_DATE_LEN];
        evidence_date_of(time(NULL) - 86400, yesterday);
        const char *cache = strcmp(seg[0], yesterday) < 0 ? EVIDENCE_CACHE_IMMUTABLE : EVIDENCE_CACHE_LATEST;
        status = respond_record(out, rec, raw, rawlen, &st, text, cache, if_none_match, if_modified_since);
        json_decref(rec);
    } else {
        return respond_error(out, 404, "not found");
    }
    free(dates);
    return status;
}
