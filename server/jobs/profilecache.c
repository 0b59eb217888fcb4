/* profilecache.c -- instruction profiles on disk (profilecache.h). */
#define _GNU_SOURCE
#include "server/jobs/profilecache.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "api/jsonout.h"
#include "kernels/base/fnv.h"
#include "kernels/base/status.h"

struct profilecache {
    char dir[PATH_MAX]; /* DIR/<binary> */
};

/* The FNV-1a of file `path`'s bytes into *h; -1 with `err`. */
static int file_hash(const char *path, uint64_t *h, char *err) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        dv_seterr(err, "profile cache: %s: %s", path, strerror(errno));
        return -1;
    }
    unsigned char buf[1 << 16];
    uint64_t x = FNV1A_64_OFFSET;
    for (;;) {
        ssize_t n = read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            dv_seterr(err, "profile cache: reading %s: %s", path, strerror(errno));
            close(fd);
            return -1;
        }
        if (n == 0) break;
        x = fnv1a_64(x, buf, (size_t)n);
    }
    close(fd);
    *h = x;
    return 0;
}

/* mkdir -p `path`. */
static int make_dirs(const char *path, char *err) {
    char p[PATH_MAX];
    if (snprintf(p, sizeof p, "%s", path) >= (int)sizeof p) {
        dv_seterr(err, "profile cache: the folder's name is too long");
        return -1;
    }
    for (char *s = p + 1;; s++) {
        const char c = *s;
        if (c != '/' && c != '\0') continue;
        *s = '\0';
        if (mkdir(p, 0755) != 0 && errno != EEXIST) {
            dv_seterr(err, "profile cache: %s: %s", p, strerror(errno));
            return -1;
        }
        *s = c;
        if (c == '\0') break;
    }
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode)) {
        dv_seterr(err, "profile cache: %s is not a folder", path);
        return -1;
    }
    return 0;
}

/* Removes folder `name` of the folder open as `root`, and its entries (no
 * subfolders are made there), all relative to descriptors: the folder is
 * opened without following a link, so a link put in its place, or in the
 * place of one of its entries, is removed as a link and never followed. */
static void remove_folder(int root, const char *name) {
    int fd = openat(root, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return;
    DIR *d = fdopendir(fd);
    if (!d) {
        close(fd);
        return;
    }
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) unlinkat(fd, e->d_name, 0);
    closedir(d);
    unlinkat(root, name, AT_REMOVEDIR);
}

/* The folders of other binaries under `root` untouched for the stale days:
 * real folders only (fstatat without following: a link to a folder is not
 * one), removed by remove_folder(). */
static void sweep_binaries(const char *root, const char *mine) {
    int rfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (rfd < 0) return;
    DIR *d = fdopendir(rfd);
    if (!d) {
        close(rfd);
        return;
    }
    const time_t limit = time(NULL) - (time_t)PROFILECACHE_STALE_DAYS * 86400;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.' || strcmp(e->d_name, mine) == 0 || strlen(e->d_name) != 16) continue;
        struct stat st;
        if (fstatat(rfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode) && st.st_mtime < limit)
            remove_folder(rfd, e->d_name);
    }
    closedir(d);
}

struct profilecache *profilecache_open(const char *dir, const char *exe, char *err) {
    uint64_t h = 0;
    if (!dir || !dir[0]) {
        dv_seterr(err, "profile cache: no folder");
        return NULL;
    }
    if (file_hash(exe, &h, err) != 0) return NULL;
    struct profilecache *pc = calloc(1, sizeof *pc);
    if (!pc) {
        dv_seterr(err, "profile cache: out of memory");
        return NULL;
    }
    char mine[17];
    snprintf(mine, sizeof mine, "%016llx", (unsigned long long)h);
    if (snprintf(pc->dir, sizeof pc->dir, "%s/%s", dir, mine) >= (int)sizeof pc->dir || make_dirs(pc->dir, err) != 0) {
        if (!err[0]) dv_seterr(err, "profile cache: the folder's name is too long");
        free(pc);
        return NULL;
    }
    struct stat st;
    if (lstat(pc->dir, &st) != 0 || !S_ISDIR(st.st_mode)) { /* a link in its place is not its folder */
        dv_seterr(err, "profile cache: %s is not a folder of its own", pc->dir);
        free(pc);
        return NULL;
    }
    if (access(pc->dir, W_OK) != 0) {
        dv_seterr(err, "profile cache: %s: %s", pc->dir, strerror(errno));
        free(pc);
        return NULL;
    }
    sweep_binaries(dir, mine);
    return pc;
}

void profilecache_close(struct profilecache *pc) { free(pc); }

const char *profilecache_dir(const struct profilecache *pc) { return pc ? pc->dir : ""; }

static void entry_name(const char *key, char *out, size_t len) {
    snprintf(out, len, "%016llx.json", (unsigned long long)fnv1a_64(FNV1A_64_OFFSET, key, strlen(key)));
}

static void entry_path(const struct profilecache *pc, const char *key, char *out, size_t len) {
    char name[32];
    entry_name(key, name, sizeof name);
    snprintf(out, len, "%s/%s", pc->dir, name);
}

json_t *profilecache_load(struct profilecache *pc, const char *key) {
    if (!pc) return NULL;
    char path[PATH_MAX + 32];
    entry_path(pc, key, path, sizeof path);
    /* A regular file of a profile's size, or a miss: a link, a FIFO or a
     * device in its place is neither followed nor waited on. */
    const int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return NULL;
    struct stat st;
    json_t *o = NULL;
    json_error_t je;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size <= PROFILECACHE_MAX_BYTES)
        o = json_loadfd(fd, 0, &je);
    const json_t *k = o ? json_object_get(o, "key") : NULL;
    json_t *v = o ? json_object_get(o, "value") : NULL;
    json_t *out = json_is_string(k) && strcmp(json_string_value(k), key) == 0 && v ? json_incref(v) : NULL;
    json_decref(o);
    if (out) futimens(fd, NULL); /* in use: the last to go */
    close(fd);
    return out;
}

/* Past the cap, the oldest entries go, never `keep` (the one just
 * stored). Regular files only, looked at and removed relative to the
 * folder's descriptor: nothing is followed out of it. */
static void prune(const struct profilecache *pc, const char *keep) {
    const int fd = open(pc->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0) close(fd);
        return;
    }
    struct old {
        char name[64];
        struct timespec when;
    } *v = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    const time_t hour_ago = time(NULL) - 3600;
    while ((e = readdir(d))) {
        const size_t len = strlen(e->d_name);
        struct stat st;
        if (fstatat(fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode)) continue;
        if (len > 5 && strcmp(e->d_name + len - 5, ".part") == 0) { /* a store that died half-way */
            if (st.st_mtime < hour_ago) unlinkat(fd, e->d_name, 0);
            continue;
        }
        if (len < 6 || len >= sizeof v->name || strcmp(e->d_name + len - 5, ".json") != 0 ||
            strcmp(e->d_name, keep) == 0)
            continue;
        if (n == cap) {
            struct old *w = realloc(v, (cap ? 2 * cap : 64) * sizeof *v);
            if (!w) break;
            v = w;
            cap = cap ? 2 * cap : 64;
        }
        snprintf(v[n].name, sizeof v[n].name, "%s", e->d_name);
        v[n++].when = st.st_mtim;
    }
    while (n + 1 > PROFILECACHE_MAX_FILES) { /* `keep` is one of them */
        size_t oldest = 0;
        for (size_t i = 1; i < n; i++)
            if (v[i].when.tv_sec < v[oldest].when.tv_sec ||
                (v[i].when.tv_sec == v[oldest].when.tv_sec && v[i].when.tv_nsec < v[oldest].when.tv_nsec))
                oldest = i;
        unlinkat(fd, v[oldest].name, 0);
        v[oldest] = v[--n];
    }
    closedir(d);
    free(v);
}

int profilecache_store(struct profilecache *pc, const char *key, const json_t *value, char *err) {
    if (!pc) return 0;
    json_t *o = json_object();
    int bad = 0;
    jsonout_put(o, "key", jsonout_str(key), &bad);
    jsonout_put(o, "value", json_deep_copy(value), &bad);
    char *text = bad ? NULL : jsonout_dumps(o, JSON_COMPACT);
    json_decref(o);
    if (!text) {
        dv_seterr(err, "profile cache: out of memory");
        return -1;
    }
    char path[PATH_MAX + 32], part[PATH_MAX + 64];
    entry_path(pc, key, path, sizeof path);
    snprintf(part, sizeof part, "%s.%ld.part", path, (long)getpid());
    int rc = -1;
    const size_t len = strlen(text);
    FILE *f = fopen(part, "wb");
    if (!f) dv_seterr(err, "profile cache: %s: %s", part, strerror(errno));
    else if (fwrite(text, 1, len, f) != len || fflush(f) != 0) {
        dv_seterr(err, "profile cache: writing %s: %s", part, strerror(errno));
        fclose(f);
    } else if (fclose(f) != 0) dv_seterr(err, "profile cache: closing %s: %s", part, strerror(errno));
    else if (rename(part, path) != 0) dv_seterr(err, "profile cache: %s: %s", path, strerror(errno));
    else rc = 0;
    if (rc != 0) unlink(part);
    free(text);
    if (rc == 0) {
        char name[32];
        entry_name(key, name, sizeof name);
        prune(pc, name);
    }
    return rc;
}
