/* test_publish.c -- a night is published exactly when its record is renamed
 * into place (server/evidence/evidence.h, evidence_write): what fails
 * after that (the transcript file beside it, the stamp other servers
 * watch) is reported as a warning, and the night is filed, served and in
 * the history all the same; a record that cannot be put in place leaves
 * nothing of it, no transcript without its record. The failures are
 * injected by putting a directory where a file must be renamed to (a
 * rename over a directory fails, as a write to a full disk does). */
#define _DEFAULT_SOURCE
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "server/evidence/evidence.h"
#include "server/evidence/suites.h"
#include "tests/support/evidence_fixture.h"

#define GPU "nvidia-h200"
#define SUITE "day22-part1"

FIXTURE_STORE()

TestSuite(publish, .init = setup, .fini = teardown);

/* Files a good night of SUITE on `date`; returns evidence_write()'s answer. */
static int file_night(const char *date, double base_ms, char *warn, char *err) {
    char *doc = fixture_document((size_t)suites_index(SUITE), base_ms, 0.001, 1, "NVIDIA H200");
    cr_assert_not_null(doc);
    struct evidence_record rec = {.suite = SUITE, .gpu = GPU, .gpu_name = "NVIDIA H200", .date = date, .ok = 1,
                                  .request_json = "{}", .document_json = doc};
    int rc = evidence_write(ev, &rec, warn, err);
    free(doc);
    return rc;
}

static const char *path(const char *rel) {
    static char p[4][800];
    static int next;
    char *out = p[next++ % 4];
    snprintf(out, sizeof p[0], "%s/" GPU "/%s", dir, rel);
    return out;
}

/* A directory at `rel`, in place of the file there. */
static void make_dir(const char *rel) {
    char cmd[1700];
    const char *p = path(rel);
    snprintf(cmd, sizeof cmd, "rm -f '%s' && mkdir -p '%s'", p, p);
    cr_assert_eq(system(cmd), 0);
}

/* The latest good night's date and how many nights the history holds. */
static void expect_served(const char *date, size_t nights) {
    struct blob *b = NULL;
    struct evidence_error e;
    cr_assert_eq(evidence_get_latest(ev, GPU, NULL, SUITE, EVIDENCE_JSON, &b, &e), 0, "%s", e.reason);
    cr_expect(strstr(b->data, date), "the latest is not the night of %s", date);
    blob_release(b);
    cr_assert_eq(evidence_get_history(ev, GPU, NULL, SUITE, 30, NULL, &b, &e), 0, "%s", e.reason);
    json_t *h = json_loadb(b->data, b->len, 0, NULL);
    cr_expect_eq(json_array_size(json_object_get(h, "nights")), nights);
    json_decref(h);
    blob_release(b);
}

Test(publish, a_stamp_that_cannot_be_written_does_not_unpublish_the_night) {
    char warn[ERR_LEN] = "x", err[ERR_LEN] = "";
    cr_assert_eq(file_night("2024-05-01", 1.0, warn, err), 0, "%s", err);
    cr_expect_str_eq(warn, "", "nothing failed");
    make_dir(".stamp");
    int rc = file_night("2024-05-02", 2.0, warn, err);
    cr_assert_eq(rc, 0, "the record is in place, yet the write said it failed: %s", err);
    cr_expect(strstr(warn, "stamp"), "the stamp's failure is reported: \"%s\"", warn);
    cr_expect_eq(access(path("2024-05-02/" SUITE ".json"), F_OK), 0);
    expect_served("2024-05-02", 2);
    /* And another server on the directory reads it too. */
    char e2[ERR_LEN];
    struct evidence *peer = evidence_open(dir, e2);
    cr_assert_not_null(peer, "%s", e2);
    struct blob *b = NULL;
    struct evidence_error e;
    cr_assert_eq(evidence_get_latest(peer, GPU, NULL, SUITE, EVIDENCE_JSON, &b, &e), 0);
    cr_expect(strstr(b->data, "2024-05-02"));
    blob_release(b);
    evidence_close(peer);
}

/* The record goes first: when it cannot be written, neither is its
 * transcript (before, the .txt was renamed in and stayed, an orphan). */
Test(publish, a_record_that_cannot_be_written_leaves_no_transcript) {
    char warn[ERR_LEN], err[ERR_LEN] = "";
    make_dir("2024-05-01/" SUITE ".json");
    cr_assert_eq(file_night("2024-05-01", 1.0, warn, err), -1, "a record was filed over a directory");
    cr_expect(strstr(err, SUITE ".json"), "%s", err);
    cr_expect_neq(access(path("2024-05-01/" SUITE ".txt"), F_OK), 0, "a transcript without its record");
}

/* The record in place, its transcript file not: filed, with a warning; and
 * the transcript is still served (from the record). */
Test(publish, a_transcript_that_cannot_be_written_does_not_unpublish_the_night) {
    char warn[ERR_LEN], err[ERR_LEN] = "";
    make_dir("2024-05-01/" SUITE ".txt");
    cr_assert_eq(file_night("2024-05-01", 1.0, warn, err), 0, "the record is in place, yet: %s", err);
    cr_expect(strstr(warn, SUITE ".txt"), "the transcript's failure is reported: \"%s\"", warn);
    expect_served("2024-05-01", 1);
    struct blob *b = NULL;
    struct evidence_error e;
    cr_assert_eq(evidence_get_latest(ev, GPU, NULL, SUITE, EVIDENCE_TEXT, &b, &e), 0, "%s", e.reason);
    cr_expect_gt(b->len, 100);
    blob_release(b);
}
