/* durable.h -- files that are either their old bytes or their new bytes,
 * whole, whatever happens to the process or the machine; the directories
 * they live in; and the advisory locks that order their writers.
 *
 * The write protocol (durable_write): the bytes go to a temp file in the
 * file's own directory (DURABLE_TMP_PREFIX "<name>.<pid>.<n>", created
 * O_EXCL so two writers never share one), which is fsync()ed and rename()d
 * over the name; then the directory is fsync()ed, so the rename itself
 * survives a crash. A directory made by durable_mkdir() is fsync()ed into
 * its parent before anything goes into it. A crash can leave temp files
 * behind, never a torn file under a name; durable_sweep() removes them
 * (under the directory's lock, so never a live writer's).
 *
 * Nothing here knows what the files hold: the evidence store (evidence.c
 * and its parts) is the one user, and it decides names, layout and what a
 * lock covers. Every function returns 0 (or a count) or -1 with `err`.
 */
#ifndef DV_DURABLE_H
#define DV_DURABLE_H

#include <stddef.h>
#include <sys/stat.h>

#define DURABLE_TMP_PREFIX ".tmp-"
#define DURABLE_LOCK_NAME ".lock"
#define DURABLE_NAME_LEN 64 /* what durable_list_dirs() keeps of a name */

/* `a`/`b` or `a`/`b`/`c` (`c` NULL) into `out`. -1 when it does not fit. */
int durable_join(char *out, size_t len, const char *a, const char *b, const char *c);

/* fsync() of directory `dir`: what makes a rename or a new entry in it
 * survive a crash. */
int durable_fsync_dir(const char *dir, char *err);

/* mkdir -p `path`, each new directory fsync()ed into its parent. -1 also
 * when `path` exists and is not a directory. */
int durable_mkdir(const char *path, char *err);

/* Writes `len` bytes of `data` to `dir`/`name` by the protocol above.
 * Returns 0 when `name` holds the new bytes durably; -1 with `err` when it
 * keeps its old bytes (the temp file removed); DURABLE_UNSYNCED with `err`
 * when the rename was made (readers see the new bytes from now on) but the
 * directory's fsync failed, so a crash may yet bring the old ones back. */
#define DURABLE_UNSYNCED 1
int durable_write(const char *dir, const char *name, const void *data, size_t len, char *err);

/* The same temp file and rename, without any fsync: for files that can be
 * made again from others (a cache), where a reader must never see a torn
 * file but a crash may leave the old bytes, the new or an empty file.
 * Returns 0, or -1 with `err` (the temp file removed). */
int durable_replace(const char *dir, const char *name, const void *data, size_t len, char *err);

enum durable_read_status {
    DURABLE_READ_OK = 0,
    DURABLE_MISSING = 1, /* no such file (or a path component is none)  */
    DURABLE_ERROR = -1,  /* it could not be read: `err` says why         */
    DURABLE_NOMEM = -2   /* no memory for its bytes (`err` says so too)  */
};

/* Reads regular file `path` whole into `*data` (malloc()ed,
 * NUL-terminated, `*len` bytes without the NUL) and its stat into `st` (may
 * be NULL). The file is opened O_NOFOLLOW | O_NONBLOCK and looked at
 * (fstat) before a byte is read: a symbolic link, a FIFO, a device, a
 * directory, or a file of more than `max` bytes is refused (DURABLE_ERROR,
 * `err` says which), so a FIFO never blocks the reader and a link to
 * /dev/zero is never read; a file that grows past `max` while it is read
 * is refused too. */
enum durable_read_status durable_read(const char *path, size_t max, char **data, size_t *len, struct stat *st,
                                      char *err);

/* Takes the advisory lock `dir`/DURABLE_LOCK_NAME (flock, created when
 * missing), waiting for it. Returns the descriptor that holds it, or -1
 * with `err`. */
int durable_lock(const char *dir, char *err);
/* Releases a lock durable_lock() took (-1: none). */
void durable_unlock(int fd);

/* Removes the temp files a crash left in `dir` (a missing `dir` has none).
 * Returns how many, or -1 with `err`. The caller holds the lock that
 * writers of `dir` take. */
int durable_sweep(const char *dir, char *err);

/* The subdirectories of `dir` that `ok` accepts (names shorter than
 * DURABLE_NAME_LEN), sorted ascending, into `*names` (malloc()ed, NULL when
 * none) and `*count`. A missing `dir` has none. */
int durable_list_dirs(const char *dir, int (*ok)(const char *name), char (**names)[DURABLE_NAME_LEN], size_t *count,
                      char *err);

#endif /* DV_DURABLE_H */
