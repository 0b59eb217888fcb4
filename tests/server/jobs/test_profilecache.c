/* test_profilecache.c -- instruction profiles on disk: what is stored is
 * what is loaded, another key's file is a miss, a file that does not read
 * is a miss, the cap and the sweep of other binaries' folders. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "kernels/base/fnv.h"
#include "kernels/base/status.h"
#include "server/jobs/profilecache.h"

static char root[64], exe[128];

static void setup(void) {
    snprintf(root, sizeof root, "/tmp/dv-profilecache-XXXXXX");
    cr_assert_not_null(mkdtemp(root));
    snprintf(exe, sizeof exe, "%s/binary", root);
    FILE *f = fopen(exe, "w");
    cr_assert_not_null(f);
    fputs("the bytes of one build\n", f);
    fclose(f);
}

static void teardown(void) {
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", root);
    cr_expect_eq(system(cmd), 0);
}

TestSuite(profilecache, .init = setup, .fini = teardown);

static unsigned entries(const char *dir) {
    DIR *d = opendir(dir);
    unsigned n = 0;
    struct dirent *e;
    while (d && (e = readdir(d))) n += strstr(e->d_name, ".json") != NULL;
    if (d) closedir(d);
    return n;
}

Test(profilecache, what_is_stored_is_loaded_by_a_new_opener_of_the_same_binary) {
    char err[ERR_LEN] = "", dir[256];
    snprintf(dir, sizeof dir, "%s/cache", root);
    struct profilecache *pc = profilecache_open(dir, exe, err);
    cr_assert_not_null(pc, "%s", err);
    json_t *v = json_pack("{s:s, s:i}", "kernel", "_Z3mixv", "runs", 42);
    cr_assert_eq(profilecache_store(pc, "cubin 00aa driver 580 mask 01", v, err), 0, "%s", err);
    cr_expect_null(profilecache_load(pc, "cubin 00aa driver 580 mask 02"), "another key: a miss");
    profilecache_close(pc);

    pc = profilecache_open(dir, exe, err);
    cr_assert_not_null(pc, "%s", err);
    json_t *back = profilecache_load(pc, "cubin 00aa driver 580 mask 01");
    cr_assert_not_null(back, "the same binary finds it");
    cr_expect(json_equal(back, v));
    json_decref(back);
    profilecache_close(pc);

    /* Another build: another folder, nothing found. */
    FILE *f = fopen(exe, "a");
    fputs("one byte more\n", f);
    fclose(f);
    pc = profilecache_open(dir, exe, err);
    cr_assert_not_null(pc, "%s", err);
    cr_expect_null(profilecache_load(pc, "cubin 00aa driver 580 mask 01"));
    profilecache_close(pc);
    json_decref(v);
}

Test(profilecache, a_file_of_another_key_or_that_does_not_read_is_a_miss) {
    char err[ERR_LEN] = "", dir[256];
    snprintf(dir, sizeof dir, "%s/cache", root);
    struct profilecache *pc = profilecache_open(dir, exe, err);
    cr_assert_not_null(pc, "%s", err);
    json_t *v = json_integer(7);
    cr_assert_eq(profilecache_store(pc, "key one", v, err), 0, "%s", err);
    /* The file, rewritten as if by a colliding key, then as garbage. */
    DIR *d = opendir(profilecache_dir(pc));
    struct dirent *e;
    char path[512] = "";
    while ((e = readdir(d)))
        if (strstr(e->d_name, ".json")) snprintf(path, sizeof path, "%s/%s", profilecache_dir(pc), e->d_name);
    closedir(d);
    cr_assert(path[0]);
    FILE *f = fopen(path, "w");
    fputs("{\"key\":\"key two\",\"value\":7}", f);
    fclose(f);
    cr_expect_null(profilecache_load(pc, "key one"), "a stored key that is not the one asked for");
    f = fopen(path, "w");
    fputs("{\"key\":\"key one\",\"val", f);
    fclose(f);
    cr_expect_null(profilecache_load(pc, "key one"), "a torn file");
    cr_assert_eq(profilecache_store(pc, "key one", v, err), 0, "%s", err);
    json_t *back = profilecache_load(pc, "key one");
    cr_expect(back && json_integer_value(back) == 7, "the next store replaces it");
    json_decref(back);
    json_decref(v);
    profilecache_close(pc);
}

Test(profilecache, past_the_cap_the_oldest_go) {
    char err[ERR_LEN] = "", dir[256], key[64];
    snprintf(dir, sizeof dir, "%s/cache", root);
    struct profilecache *pc = profilecache_open(dir, exe, err);
    cr_assert_not_null(pc, "%s", err);
    json_t *v = json_integer(1);
    for (unsigned i = 0; i < PROFILECACHE_MAX_FILES + 8; i++) {
        snprintf(key, sizeof key, "key %u", i);
        cr_assert_eq(profilecache_store(pc, key, v, err), 0, "%s", err);
        if (i == 0) { /* the first, made old */
            struct timeval old[2] = {{1000000000, 0}, {1000000000, 0}};
            DIR *d = opendir(profilecache_dir(pc));
            struct dirent *e;
            char p[512];
            while ((e = readdir(d)))
                if (strstr(e->d_name, ".json")) {
                    snprintf(p, sizeof p, "%s/%s", profilecache_dir(pc), e->d_name);
                    utimes(p, old);
                }
            closedir(d);
        }
    }
    cr_expect_eq(entries(profilecache_dir(pc)), PROFILECACHE_MAX_FILES);
    cr_expect_null(profilecache_load(pc, "key 0"), "the oldest went");
    snprintf(key, sizeof key, "key %u", PROFILECACHE_MAX_FILES + 7);
    json_t *last = profilecache_load(pc, key);
    cr_expect_not_null(last, "the newest stays");
    json_decref(last);
    json_decref(v);
    profilecache_close(pc);
}

Test(profilecache, other_binaries_folders_go_when_stale_and_a_folder_that_cannot_be_made_is_said) {
    char err[ERR_LEN] = "", dir[256], stale[300], fresh[300];
    snprintf(dir, sizeof dir, "%s/cache", root);
    snprintf(stale, sizeof stale, "%s/00000000000000aa", dir);
    snprintf(fresh, sizeof fresh, "%s/00000000000000bb", dir);
    cr_assert_eq(mkdir(dir, 0755), 0);
    cr_assert_eq(mkdir(stale, 0755), 0);
    cr_assert_eq(mkdir(fresh, 0755), 0);
    const time_t old = time(NULL) - (PROFILECACHE_STALE_DAYS + 1) * 86400;
    struct timeval tv[2] = {{old, 0}, {old, 0}};
    cr_assert_eq(utimes(stale, tv), 0);
    struct profilecache *pc = profilecache_open(dir, exe, err);
    cr_assert_not_null(pc, "%s", err);
    struct stat st;
    cr_expect_neq(stat(stale, &st), 0, "an old build's folder untouched for a week went");
    cr_expect_eq(stat(fresh, &st), 0, "a recent one stays (another worker may use it)");
    profilecache_close(pc);

    char file_dir[256];
    snprintf(file_dir, sizeof file_dir, "%s/binary/cache", root); /* under a file */
    err[0] = '\0';
    cr_expect_null(profilecache_open(file_dir, exe, err));
    cr_expect(strstr(err, "profile cache:") != NULL, "%s", err);
    err[0] = '\0';
    cr_expect_null(profilecache_open(dir, "/nonexistent/binary", err));
    cr_expect(strstr(err, "/nonexistent/binary") != NULL, "%s", err);
}

/* A store that cannot write (here its temp file's name is taken by a
 * folder) says why and leaves what was stored before. */
Test(profilecache, a_store_that_cannot_write_says_why_and_keeps_the_old_value) {
    char err[ERR_LEN] = "", dir[256], part[512];
    snprintf(dir, sizeof dir, "%s/cache", root);
    struct profilecache *pc = profilecache_open(dir, exe, err);
    cr_assert_not_null(pc, "%s", err);
    json_t *one = json_integer(1), *two = json_integer(2);
    cr_assert_eq(profilecache_store(pc, "the key", one, err), 0, "%s", err);
    snprintf(part, sizeof part, "%s/%016llx.json.%ld.part", profilecache_dir(pc),
             (unsigned long long)fnv1a_64(FNV1A_64_OFFSET, "the key", strlen("the key")), (long)getpid());
    cr_assert_eq(mkdir(part, 0755), 0);
    err[0] = '\0';
    cr_expect_eq(profilecache_store(pc, "the key", two, err), -1);
    cr_expect(strstr(err, "profile cache:") != NULL && strstr(err, ".part") != NULL, "%s", err);
    json_t *back = profilecache_load(pc, "the key");
    cr_expect(back && json_integer_value(back) == 1, "the old value stays");
    json_decref(back);
    rmdir(part);
    json_decref(one);
    json_decref(two);
    profilecache_close(pc);
}

/* Sets `path`'s times (not following a link) `days` days back. */
static void age(const char *path, int days) {
    const struct timespec t[2] = {{time(NULL) - days * 86400, 0}, {time(NULL) - days * 86400, 0}};
    cr_assert_eq(utimensat(AT_FDCWD, path, t, AT_SYMLINK_NOFOLLOW), 0, "%s", path);
}

static void touch(const char *path) {
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "%s", path);
    fputs("kept\n", f);
    fclose(f);
}

static int exists(const char *path) {
    struct stat st;
    return lstat(path, &st) == 0;
}

Test(profilecache, the_sweep_never_follows_a_link_out_of_its_folder) {
    char err[ERR_LEN] = "", dir[256], outside[256], a[300], b[300], link[300], stale[300], inner[400], victim[256];
    snprintf(dir, sizeof dir, "%s/cache", root);
    snprintf(outside, sizeof outside, "%s/outside", root);
    snprintf(a, sizeof a, "%s/a.json", outside);
    snprintf(b, sizeof b, "%s/b", outside);
    snprintf(link, sizeof link, "%s/00000000000000cc", dir);
    snprintf(stale, sizeof stale, "%s/00000000000000aa", dir);
    snprintf(inner, sizeof inner, "%s/victim", stale);
    snprintf(victim, sizeof victim, "%s/victim-file", root);
    cr_assert_eq(mkdir(dir, 0755), 0);
    cr_assert_eq(mkdir(outside, 0755), 0);
    touch(a);
    touch(b);
    touch(victim);
    /* A link named like a binary's folder, to a folder (and files) older
     * than the stale days. */
    cr_assert_eq(symlink(outside, link), 0);
    age(a, PROFILECACHE_STALE_DAYS + 3);
    age(b, PROFILECACHE_STALE_DAYS + 3);
    age(outside, PROFILECACHE_STALE_DAYS + 3);
    age(link, PROFILECACHE_STALE_DAYS + 3);
    /* A stale folder of its own, holding a link to a file outside. */
    cr_assert_eq(mkdir(stale, 0755), 0);
    cr_assert_eq(symlink(victim, inner), 0);
    age(stale, PROFILECACHE_STALE_DAYS + 1);
    struct profilecache *pc = profilecache_open(dir, exe, err);
    cr_assert_not_null(pc, "%s", err);
    cr_expect(exists(a) && exists(b), "the linked folder's files were unlinked");
    cr_expect(exists(outside), "the linked folder went");
    cr_expect(exists(link), "the link is not a folder of the cache's: left as it is");
    cr_expect(!exists(stale), "the cache's own stale folder went");
    cr_expect(exists(victim), "a link in it was followed");
    profilecache_close(pc);
}

Test(profilecache, an_entry_or_a_folder_that_is_not_what_it_seems_is_a_miss, .timeout = 10) {
    char err[ERR_LEN] = "", dir[256], path[512] = "", moved[256];
    snprintf(dir, sizeof dir, "%s/cache", root);
    struct profilecache *pc = profilecache_open(dir, exe, err);
    cr_assert_not_null(pc, "%s", err);
    json_t *v = json_integer(7);
    cr_assert_eq(profilecache_store(pc, "key one", v, err), 0, "%s", err);
    json_decref(v);
    DIR *d = opendir(profilecache_dir(pc));
    struct dirent *e;
    while ((e = readdir(d)))
        if (strstr(e->d_name, ".json")) snprintf(path, sizeof path, "%s/%s", profilecache_dir(pc), e->d_name);
    closedir(d);
    cr_assert(path[0]);
    /* The entry moved out and linked back: not followed. */
    snprintf(moved, sizeof moved, "%s/moved.json", root);
    cr_assert_eq(rename(path, moved), 0);
    cr_assert_eq(symlink(moved, path), 0);
    cr_expect_null(profilecache_load(pc, "key one"), "a link was followed");
    /* A FIFO in its place: a miss at once, not a wait for a writer. */
    cr_assert_eq(unlink(path), 0);
    cr_assert_eq(mkfifo(path, 0600), 0);
    cr_expect_null(profilecache_load(pc, "key one"));
    /* A binary's folder that is a link: refused, the worker goes on with
     * its memory alone. */
    char mine[300], real[256];
    snprintf(mine, sizeof mine, "%s", profilecache_dir(pc));
    profilecache_close(pc);
    cr_assert_eq(unlink(path), 0);
    cr_assert_eq(rmdir(mine), 0);
    snprintf(real, sizeof real, "%s/real", root);
    cr_assert_eq(mkdir(real, 0755), 0);
    cr_assert_eq(symlink(real, mine), 0);
    err[0] = '\0';
    cr_expect_null(profilecache_open(dir, exe, err));
    cr_expect(strstr(err, "not a folder of its own") != NULL, "%s", err);
}
