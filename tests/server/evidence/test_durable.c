/* test_durable.c -- the durable files on their own (server/evidence/
 * durable.h): a write leaves the new bytes and no temp file, a failed one
 * the old bytes; reads tell a missing file from an error; directories are
 * made whole; a sweep removes temp files only; listings are sorted and
 * filtered; a lock held keeps another process's lock waiting; a read opens
 * nothing but a regular file no larger than its cap, and waits on none;
 * a cache file is replaced whole. (Writes killed
 * midway are test_evidence's killed_writer_leaves_old_or_new_file_whole.) */
#define _DEFAULT_SOURCE
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "server/evidence/durable.h"
#include "tests/support/evidence_fixture.h"

#define MAX (1u << 20)

static char *dir;

static void setup(void) {
    dir = fixture_tmpdir();
    cr_assert_not_null(dir);
}

static void teardown(void) {
    fixture_rmrf(dir);
    free(dir);
}

static char *path_of(const char *name) {
    static char p[1024];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return p;
}

/* How many temp files `d` holds (counted by sweeping them away). */
static int temp_files(const char *d) {
    char err[ERR_LEN];
    int n = durable_sweep(d, err);
    cr_assert_geq(n, 0, "%s", err);
    return n;
}

TestSuite(durable, .init = setup, .fini = teardown);

Test(durable, a_write_leaves_the_new_bytes_and_no_temp_file) {
    char err[ERR_LEN], *data = NULL;
    size_t len = 0;
    cr_assert_eq(durable_write(dir, "a.txt", "first", 5, err), 0, "%s", err);
    cr_assert_eq(durable_write(dir, "a.txt", "second, longer", 14, err), 0, "%s", err);
    struct stat st;
    cr_assert_eq(durable_read(path_of("a.txt"), MAX, &data, &len, &st, err), DURABLE_READ_OK, "%s", err);
    cr_assert_eq(len, 14);
    cr_assert_str_eq(data, "second, longer");
    cr_assert_eq(st.st_size, 14);
    free(data);
    cr_assert_eq(temp_files(dir), 0, "a temp file was left behind");
}

Test(durable, a_failed_write_keeps_the_old_bytes_and_removes_its_temp_file) {
    char err[ERR_LEN] = "", *data = NULL;
    size_t len = 0;
    cr_assert_eq(durable_write(dir, "b.txt", "old", 3, err), 0, "%s", err);
    /* The rename cannot replace a directory: the write fails after its temp
     * file was written. */
    cr_assert_eq(mkdir(path_of("c"), 0755), 0);
    cr_assert_eq(durable_write(dir, "c", "new", 3, err), -1);
    cr_assert(strstr(err, "rename"), "%s", err);
    cr_assert_eq(temp_files(dir), 0, "the failed write left its temp file");
    cr_assert_eq(durable_write(path_of("nowhere"), "b.txt", "x", 1, err), -1);
    cr_assert(strstr(err, "create"), "%s", err);
    cr_assert_eq(durable_read(path_of("b.txt"), MAX, &data, &len, NULL, err), DURABLE_READ_OK);
    cr_assert_str_eq(data, "old");
    free(data);
}

Test(durable, a_read_tells_missing_from_an_error) {
    char err[ERR_LEN] = "", *data = (char *)1;
    size_t len = 9;
    cr_assert_eq(durable_read(path_of("none"), MAX, &data, &len, NULL, err), DURABLE_MISSING);
    cr_assert_null(data);
    cr_assert_eq(len, 0);
    cr_assert_eq(durable_read(path_of("none/deeper"), MAX, &data, &len, NULL, err), DURABLE_MISSING);
    cr_assert_eq(mkdir(path_of("d"), 0755), 0);
    cr_assert_eq(durable_read(path_of("d"), MAX, &data, &len, NULL, err), DURABLE_ERROR, "a directory is no file");
    cr_assert(strstr(err, "read"), "%s", err);
    /* Bigger than any buffer it starts with. */
    static char big[300000];
    for (size_t i = 0; i < sizeof big; i++) big[i] = (char)('a' + i % 26);
    cr_assert_eq(durable_write(dir, "big", big, sizeof big, err), 0, "%s", err);
    cr_assert_eq(durable_read(path_of("big"), MAX, &data, &len, NULL, err), DURABLE_READ_OK);
    cr_assert_eq(len, sizeof big);
    cr_assert_eq(memcmp(data, big, len), 0);
    cr_assert_eq(data[len], '\0');
    free(data);
}

/* A read looks at what it opened before it reads a byte: a FIFO (no writer:
 * a plain open would wait for ever), a link (to /dev/zero: read until
 * memory runs out; to a real file: still not a file of the store) and a
 * file over the cap are refused, each with what it is. */
Test(durable, a_read_refuses_fifos_links_and_oversized_files_without_reading, .timeout = 10) {
    char err[ERR_LEN] = "", *data = NULL;
    size_t len = 0;
    cr_assert_eq(mkfifo(path_of("fifo"), 0644), 0);
    cr_assert_eq(durable_read(path_of("fifo"), MAX, &data, &len, NULL, err), DURABLE_ERROR);
    cr_assert(strstr(err, "not a regular file"), "%s", err);
    cr_assert_eq(symlink("/dev/zero", path_of("zero")), 0);
    cr_assert_eq(durable_read(path_of("zero"), MAX, &data, &len, NULL, err), DURABLE_ERROR);
    cr_assert(strstr(err, "symbolic link"), "%s", err);
    cr_assert_eq(durable_write(dir, "real", "bytes", 5, err), 0, "%s", err);
    char real[1024];
    snprintf(real, sizeof real, "%s", path_of("real"));
    cr_assert_eq(symlink(real, path_of("link")), 0);
    cr_assert_eq(durable_read(path_of("link"), MAX, &data, &len, NULL, err), DURABLE_ERROR, "a link to a file");
    /* 64 GiB that take no disk: refused by their size, never allocated. */
    int fd = open(path_of("huge"), O_WRONLY | O_CREAT, 0644);
    cr_assert_geq(fd, 0);
    cr_assert_eq(ftruncate(fd, 64ll << 30), 0);
    close(fd);
    cr_assert_eq(durable_read(path_of("huge"), MAX, &data, &len, NULL, err), DURABLE_ERROR);
    cr_assert(strstr(err, "over the"), "%s", err);
    cr_assert_null(data);
    /* The cap itself is allowed, a byte more is not. */
    static char at_cap[MAX + 1];
    memset(at_cap, 'x', sizeof at_cap);
    cr_assert_eq(durable_write(dir, "at-cap", at_cap, MAX, err), 0, "%s", err);
    cr_assert_eq(durable_read(path_of("at-cap"), MAX, &data, &len, NULL, err), DURABLE_READ_OK, "%s", err);
    cr_assert_eq(len, MAX);
    free(data);
    cr_assert_eq(durable_write(dir, "over-cap", at_cap, MAX + 1, err), 0, "%s", err);
    cr_assert_eq(durable_read(path_of("over-cap"), MAX, &data, &len, NULL, err), DURABLE_ERROR);
}

/* A cache file: replaced whole by a rename, with no temp file left. */
Test(durable, a_replace_leaves_the_new_bytes_and_no_temp_file) {
    char err[ERR_LEN], *data = NULL;
    size_t len = 0;
    cr_assert_eq(durable_replace(dir, "cache", "one", 3, err), 0, "%s", err);
    cr_assert_eq(durable_replace(dir, "cache", "two!", 4, err), 0, "%s", err);
    cr_assert_eq(durable_read(path_of("cache"), MAX, &data, &len, NULL, err), DURABLE_READ_OK, "%s", err);
    cr_assert_str_eq(data, "two!");
    free(data);
    cr_assert_eq(mkdir(path_of("taken"), 0755), 0);
    cr_assert_eq(durable_replace(dir, "taken", "x", 1, err), -1);
    cr_assert_eq(temp_files(dir), 0, "a temp file was left behind");
}

Test(durable, mkdir_makes_every_level_and_refuses_a_file_in_the_way) {
    char err[ERR_LEN] = "", p[1024];
    snprintf(p, sizeof p, "%s/x/y/z", dir);
    cr_assert_eq(durable_mkdir(p, err), 0, "%s", err);
    cr_assert_eq(durable_mkdir(p, err), 0, "an existing directory is fine");
    struct stat st;
    cr_assert(stat(p, &st) == 0 && S_ISDIR(st.st_mode));
    cr_assert_eq(durable_write(dir, "f", "x", 1, err), 0);
    snprintf(p, sizeof p, "%s/f", dir);
    cr_assert_eq(durable_mkdir(p, err), -1);
    cr_assert(strstr(err, "not a directory"), "%s", err);
    snprintf(p, sizeof p, "%s/f/g", dir);
    cr_assert_eq(durable_mkdir(p, err), -1);
}

Test(durable, a_sweep_removes_temp_files_only) {
    char err[ERR_LEN];
    const char *names[] = {DURABLE_TMP_PREFIX "a.json.1.1", DURABLE_TMP_PREFIX "b", "keep.json", ".lock", NULL};
    for (int i = 0; names[i]; i++) {
        FILE *f = fopen(path_of(names[i]), "w");
        cr_assert_not_null(f);
        fclose(f);
    }
    cr_assert_eq(durable_sweep(dir, err), 2, "%s", err);
    cr_assert_eq(access(path_of("keep.json"), F_OK), 0);
    cr_assert_eq(access(path_of(".lock"), F_OK), 0);
    cr_assert_eq(durable_sweep(path_of("missing"), err), 0);
}

static int no_dot(const char *name) { return name[0] != '.'; }

Test(durable, listings_are_sorted_filtered_and_directories_only) {
    char err[ERR_LEN];
    const char *dirs[] = {"b", "a", "c", ".hidden", NULL};
    for (int i = 0; dirs[i]; i++) cr_assert_eq(mkdir(path_of(dirs[i]), 0755), 0);
    FILE *f = fopen(path_of("file"), "w");
    fclose(f);
    char(*names)[DURABLE_NAME_LEN] = NULL;
    size_t n = 0;
    cr_assert_eq(durable_list_dirs(dir, no_dot, &names, &n, err), 0, "%s", err);
    cr_assert_eq(n, 3);
    cr_assert_str_eq(names[0], "a");
    cr_assert_str_eq(names[1], "b");
    cr_assert_str_eq(names[2], "c");
    free(names);
    cr_assert_eq(durable_list_dirs(path_of("missing"), no_dot, &names, &n, err), 0);
    cr_assert_eq(n, 0);
    cr_assert_null(names);
}

Test(durable, a_lock_held_keeps_another_process_waiting) {
    char err[ERR_LEN];
    int fd = durable_lock(dir, err);
    cr_assert_geq(fd, 0, "%s", err);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        int other = open(path_of(DURABLE_LOCK_NAME), O_RDWR | O_CLOEXEC);
        _exit(other >= 0 && flock(other, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK ? 0 : 1);
    }
    int status;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the lock was not held");
    durable_unlock(fd);
    pid = fork();
    if (pid == 0) {
        int mine = durable_lock(dir, err);
        _exit(mine >= 0 ? 0 : 1);
    }
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "released, yet not free");
}
