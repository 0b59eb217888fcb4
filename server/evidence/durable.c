/* durable.c -- see durable.h. Temp names carry the pid and a per-process
 * counter, and are created O_EXCL, so two threads or two processes never
 * write one temp file; but pids repeat across containers sharing a
 * directory, which is why a sweep must hold the directory's lock. */
#define _GNU_SOURCE
#include "server/evidence/durable.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "kernels/base/status.h"

static unsigned long tmp_counter;
static pthread_mutex_t tmp_counter_lock = PTHREAD_MUTEX_INITIALIZER;

int durable_join(char *out, size_t len, const char *a, const char *b, const char *c) {
    int n = c ? snprintf(out, len, "%s/%s/%s", a, b, c) : snprintf(out, len, "%s/%s", a, b);
    return n < 0 || (size_t)n >= len ? -1 : 0;
}

int durable_fsync_dir(const char *dir, char *err) {
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

int durable_mkdir(const char *path, char *err) {
    char buf[PATH_MAX];
    size_t n = strlen(path);
    if (n == 0 || n >= sizeof buf) {
        dv_seterr(err, "mkdir %.64s: bad path length", path);
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
            if (durable_fsync_dir(parent, err) != 0) return -1;
        } else if (errno != EEXIST) {
            dv_seterr(err, "mkdir %s: %s", buf, strerror(errno));
            return -1;
        }
        buf[i] = saved;
    }
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode)) {
        dv_seterr(err, "mkdir %s: not a directory", path);
        return -1;
    }
    return 0;
}

/* Writes the temp file of `dir`/`name` and renames it over the name,
 * with fsync()s of the file and the directory when `sync`. Returns 0, -1
 * (nothing renamed) or DURABLE_UNSYNCED (renamed, the directory's fsync
 * failed). */
static int write_renamed(const char *dir, const char *name, const void *data, size_t len, int sync, char *err) {
    char tmp[PATH_MAX], final[PATH_MAX], tmpname[NAME_MAX + 1];
    pthread_mutex_lock(&tmp_counter_lock);
    unsigned long n = ++tmp_counter;
    pthread_mutex_unlock(&tmp_counter_lock);
    int k = snprintf(tmpname, sizeof tmpname, DURABLE_TMP_PREFIX "%s.%ld.%lu", name, (long)getpid(), n);
    if (k < 0 || (size_t)k >= sizeof tmpname || durable_join(tmp, sizeof tmp, dir, tmpname, NULL) != 0 ||
        durable_join(final, sizeof final, dir, name, NULL) != 0) {
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
    if (sync && fsync(fd) != 0) {
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
    /* From here the new bytes are what readers get: whatever follows, the
     * write happened. */
    if (sync && durable_fsync_dir(dir, err) != 0) return DURABLE_UNSYNCED;
    return 0;
fail:
    if (fd >= 0) close(fd);
    unlink(tmp);
    return -1;
}

int durable_write(const char *dir, const char *name, const void *data, size_t len, char *err) {
    return write_renamed(dir, name, data, len, 1, err);
}

int durable_replace(const char *dir, const char *name, const void *data, size_t len, char *err) {
    return write_renamed(dir, name, data, len, 0, err);
}

enum durable_read_status durable_read(const char *path, size_t max, char **data, size_t *len, struct stat *st,
                                      char *err) {
    *data = NULL;
    *len = 0;
    /* O_NOFOLLOW: a link is refused (ELOOP), never followed to a device;
     * O_NONBLOCK: opening a FIFO returns at once instead of waiting for a
     * writer (and reading a regular file never blocks anyway). */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0) {
        if (errno == ENOENT || errno == ENOTDIR) return DURABLE_MISSING;
        dv_seterr(err, "open %s: %s", path, errno == ELOOP ? "a symbolic link, not a file" : strerror(errno));
        return DURABLE_ERROR;
    }
    struct stat s;
    if (fstat(fd, &s) != 0) {
        dv_seterr(err, "stat %s: %s", path, strerror(errno));
        close(fd);
        return DURABLE_ERROR;
    }
    if (!S_ISREG(s.st_mode) || (unsigned long long)s.st_size > max) {
        if (!S_ISREG(s.st_mode)) dv_seterr(err, "read %s: not a regular file", path);
        else dv_seterr(err, "read %s: %lld bytes, over the %zu a file here may hold", path, (long long)s.st_size, max);
        close(fd);
        return DURABLE_ERROR;
    }
    /* Sized by the stat, grown if the file grew since, up to `max`. */
    size_t cap = (size_t)s.st_size + 1, n = 0;
    char *buf = malloc(cap);
    if (!buf) {
        dv_seterr(err, "read %s: out of memory", path);
        close(fd);
        return DURABLE_NOMEM;
    }
    for (;;) {
        if (n + 1 >= cap) {
            if (n > max) break;
            size_t ncap = cap * 2 > max + 2 ? max + 2 : cap * 2;
            char *bigger = realloc(buf, ncap);
            if (!bigger) {
                free(buf);
                close(fd);
                dv_seterr(err, "read %s: out of memory", path);
                return DURABLE_NOMEM;
            }
            buf = bigger;
            cap = ncap;
        }
        ssize_t r = read(fd, buf + n, cap - n - 1);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
            dv_seterr(err, "read %s: %s", path, strerror(errno));
            free(buf);
            close(fd);
            return DURABLE_ERROR;
        }
        if (r == 0) break;
        n += (size_t)r;
    }
    close(fd);
    if (n > max) {
        free(buf);
        dv_seterr(err, "read %s: grew past the %zu bytes a file here may hold", path, max);
        return DURABLE_ERROR;
    }
    buf[n] = '\0';
    *data = buf;
    *len = n;
    if (st) *st = s;
    return DURABLE_READ_OK;
}

int durable_lock(const char *dir, char *err) {
    char path[PATH_MAX];
    if (durable_join(path, sizeof path, dir, DURABLE_LOCK_NAME, NULL) != 0) {
        dv_seterr(err, "lock %s: path too long", dir);
        return -1;
    }
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
        dv_seterr(err, "lock %s: %s", path, strerror(errno));
        return -1;
    }
    while (flock(fd, LOCK_EX) != 0) {
        if (errno == EINTR) continue;
        dv_seterr(err, "flock %s: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

void durable_unlock(int fd) {
    if (fd >= 0) close(fd); /* closing the last descriptor releases the flock */
}

int durable_sweep(const char *dir, char *err) {
    DIR *d = opendir(dir);
    if (!d) {
        if (errno == ENOENT) return 0;
        dv_seterr(err, "opendir %s: %s", dir, strerror(errno));
        return -1;
    }
    int removed = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, DURABLE_TMP_PREFIX, strlen(DURABLE_TMP_PREFIX)) != 0) continue;
        if (unlinkat(dirfd(d), e->d_name, 0) == 0) removed++;
    }
    closedir(d);
    if (removed > 0 && durable_fsync_dir(dir, err) != 0) return -1;
    return removed;
}

static int name_cmp(const void *a, const void *b) { return strcmp(a, b); }

int durable_list_dirs(const char *dir, int (*ok)(const char *name), char (**names)[DURABLE_NAME_LEN], size_t *count,
                      char *err) {
    *names = NULL;
    *count = 0;
    DIR *d = opendir(dir);
    if (!d) {
        if (errno == ENOENT) return 0;
        dv_seterr(err, "opendir %s: %s", dir, strerror(errno));
        return -1;
    }
    size_t cap = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strlen(e->d_name) >= DURABLE_NAME_LEN || !ok(e->d_name)) continue;
        if (e->d_type != DT_DIR && e->d_type != DT_UNKNOWN) continue;
        if (*count == cap) {
            size_t ncap = cap ? cap * 2 : 64;
            void *bigger = realloc(*names, ncap * sizeof **names);
            if (!bigger) {
                closedir(d);
                free(*names);
                *names = NULL;
                *count = 0;
                dv_seterr(err, "opendir %s: out of memory", dir);
                return -1;
            }
            *names = bigger;
            cap = ncap;
        }
        memcpy((*names)[(*count)++], e->d_name, strlen(e->d_name) + 1);
    }
    closedir(d);
    if (*count > 1) qsort(*names, *count, DURABLE_NAME_LEN, name_cmp);
    return 0;
}
