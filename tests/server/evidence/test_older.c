/* test_older.c -- the good nights a write compares with (older.h): newest
 * first, before the night, good ones only, at most NIGHTS_HISTORY, trimmed
 * to what a comparison reads; and kept by their file, so a night read once
 * is not read again while its file is the same. Records are filed by
 * evidence_write() into a temporary store. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "server/evidence/evidence.h"
#include "server/evidence/older.h"
#include "server/evidence/suites.h"
#include "tests/support/evidence_fixture.h"

#define GPU "nvidia-h200"
#define SUITE "day22-part1"

FIXTURE_STORE()

TestSuite(older, .init = setup, .fini = teardown);

/* Files night `date` of SUITE: good, or a failure. */
static void file(const char *date, int ok) {
    char err[ERR_LEN] = "", finished[32];
    char *doc = ok ? fixture_document((size_t)suites_index(SUITE), 1.0, 0.003, 1, "NVIDIA H200") : NULL;
    snprintf(finished, sizeof finished, "%sT03:00:00Z", date);
    struct evidence_record rec = {.suite = SUITE,
                                  .gpu = GPU,
                                  .gpu_name = "NVIDIA H200",
                                  .date = date,
                                  .ok = ok,
                                  .reason = ok ? NULL : "the job failed",
                                  .finished_utc = finished,
                                  .document_json = doc};
    cr_assert_eq(evidence_write(ev, &rec, NULL, err), 0, "%s", err);
    free(doc);
}

/* The dates of the older nights before `date`, as "d1 d2 ...". */
static void nights(struct older *o, const char *date, char *out, size_t len) {
    json_t *got[NIGHTS_HISTORY];
    size_t n = 99;
    cr_assert_eq(older_nights(o, GPU, suites_find(SUITE), date, got, &n), 0);
    out[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        size_t k = strlen(out);
        snprintf(out + k, len - k, "%s%s", i ? " " : "", json_string_value(json_object_get(got[i], "date")));
        cr_expect(json_is_object(json_object_get(got[i], "summary")), "a night kept without its summary");
        cr_expect_null(json_object_get(got[i], "transcript"), "a night kept whole, not trimmed");
        json_decref(got[i]);
    }
}

Test(older, the_good_nights_before_newest_first_at_most_a_weeks) {
    static const char *const dates[] = {"2026-11-20", "2026-11-21", "2026-11-22", "2026-11-23", "2026-11-24",
                                        "2026-11-26", "2026-11-27", "2026-11-28", "2026-11-29", "2026-11-30"};
    for (size_t i = 0; i < sizeof dates / sizeof dates[0]; i++) file(dates[i], 1);
    file("2026-11-25", 0); /* a failure only: no night to compare with */
    struct older *o = older_create(dir);
    cr_assert_not_null(o);
    char got[256];
    nights(o, "2026-11-30", got, sizeof got);
    cr_expect_str_eq(got, "2026-11-29 2026-11-28 2026-11-27 2026-11-26 2026-11-24 2026-11-23 2026-11-22");
    nights(o, "2026-11-21", got, sizeof got);
    cr_expect_str_eq(got, "2026-11-20");
    nights(o, "2026-11-20", got, sizeof got);
    cr_expect_str_eq(got, "");
    older_free(o);
}

Test(older, a_gpu_with_no_folder_has_no_older_nights) {
    struct older *o = older_create(dir);
    json_t *got[NIGHTS_HISTORY];
    size_t n = 99;
    cr_expect_eq(older_nights(o, "tesla-t4", suites_find(SUITE), "2026-11-30", got, &n), 0);
    cr_expect_eq(n, 0);
    older_free(o);
}

/* Rewrites the record of `date` in place with as many spaces (not a record
 * any more), its inode, size and modification time kept. */
static void spoil_in_place(const char *date) {
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s/%s/%s.json", dir, GPU, date, SUITE);
    struct stat st;
    cr_assert_eq(stat(path, &st), 0);
    int fd = open(path, O_WRONLY);
    cr_assert(fd >= 0);
    char *blank = malloc((size_t)st.st_size);
    memset(blank, ' ', (size_t)st.st_size);
    cr_assert_eq(pwrite(fd, blank, (size_t)st.st_size, 0), st.st_size);
    free(blank);
    const struct timespec times[2] = {st.st_atim, st.st_mtim};
    cr_assert_eq(futimens(fd, times), 0);
    close(fd);
}

Test(older, a_night_read_once_is_kept_while_its_file_is_the_same) {
    file("2026-11-28", 1);
    file("2026-11-29", 1);
    struct older *o = older_create(dir);
    char got[256];
    nights(o, "2026-11-30", got, sizeof got);
    cr_assert_str_eq(got, "2026-11-29 2026-11-28");
    spoil_in_place("2026-11-29");
    nights(o, "2026-11-30", got, sizeof got);
    cr_expect_str_eq(got, "2026-11-29 2026-11-28", "the night kept was read again");
    struct older *fresh = older_create(dir); /* nothing kept: reads the file as it is now */
    nights(fresh, "2026-11-30", got, sizeof got);
    cr_expect_str_eq(got, "2026-11-28", "the spoiled record was taken for a night");
    older_free(fresh);
    older_free(o);
}
