/* test_record.c -- what lies in a record's place is not trusted
 * (server/evidence/record.h): a FIFO does not block opening the store, a
 * link is not followed (to /dev/zero or to a record elsewhere), a file over
 * the cap is not read, and a record that says ok with a document that does
 * not read is a failed night: not the latest good evidence, not a night to
 * compare with, failed in the history and the index. Each case: a good
 * night before it, which must still be served as the latest. */
#define _DEFAULT_SOURCE
#include <criterion/criterion.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "server/evidence/evidence.h"
#include "server/evidence/record.h"
#include "server/evidence/suites.h"
#include "tests/support/evidence_fixture.h"

#define GPU "nvidia-h200"
#define SUITE "day22-part1"
#define GOOD "2024-04-01"
#define BAD "2024-04-02"

static char *dir;
static struct evidence *ev;

static void put(const char *date, double base_ms) {
    char err[ERR_LEN];
    char *doc = fixture_document((size_t)suites_index(SUITE), base_ms, 0.001, 1, "NVIDIA H200");
    cr_assert_not_null(doc);
    struct evidence_record rec = {.suite = SUITE, .gpu = GPU, .gpu_name = "NVIDIA H200", .date = date, .ok = 1,
                                  .request_json = "{}", .document_json = doc};
    cr_assert_eq(evidence_write(ev, &rec, NULL, err), 0, "%s", err);
    free(doc);
}

/* A store with a good night GOOD; BAD's folder made, empty. */
static void setup(void) {
    dir = fixture_tmpdir();
    cr_assert_not_null(dir);
    char err[ERR_LEN], p[700];
    ev = evidence_open(dir, err);
    cr_assert_not_null(ev, "%s", err);
    put(GOOD, 1.0);
    snprintf(p, sizeof p, "%s/" GPU "/" BAD, dir);
    cr_assert_eq(mkdir(p, 0755), 0);
}

static void teardown(void) {
    evidence_close(ev);
    fixture_rmrf(dir);
    free(dir);
}

static const char *bad_path(void) {
    static char p[700];
    snprintf(p, sizeof p, "%s/" GPU "/" BAD "/" SUITE ".json", dir);
    return p;
}

static void reopen(void) {
    char err[ERR_LEN];
    evidence_close(ev);
    ev = evidence_open(dir, err);
    cr_assert_not_null(ev, "%s", err);
}

/* The blob a read left in *b (rc its return) as JSON, released. */
static json_t *parsed(int rc, struct blob **b, const struct evidence_error *e, const char *what) {
    cr_assert_eq(rc, 0, "%s: %d %s", what, e->code, e->reason);
    json_t *j = json_loadb((*b)->data, (*b)->len, 0, NULL);
    cr_assert_not_null(j);
    blob_release(*b);
    return j;
}

/* The latest good night is GOOD, and the history shows `want_bad` for BAD:
 * no night (NULL) or a night of that status. */
static void expect_good_served(const char *want_bad) {
    struct blob *b = NULL;
    struct evidence_error e;
    json_t *rec = parsed(evidence_get_latest(ev, GPU, NULL, SUITE, EVIDENCE_JSON, &b, &e), &b, &e, "latest");
    cr_expect_str_eq(json_string_value(json_object_get(rec, "date")), GOOD, "the latest good night");
    json_decref(rec);
    json_t *idx = parsed(evidence_get_gpu_index(ev, GPU, &b, &e), &b, &e, "index");
    json_t *entry = json_array_get(json_object_get(idx, "suites"), (size_t)suites_index(SUITE));
    cr_expect_str_eq(json_string_value(json_object_get(entry, "date")), GOOD, "the index's latest good night");
    json_decref(idx);
    json_t *h = parsed(evidence_get_history(ev, GPU, NULL, SUITE, 30, NULL, &b, &e), &b, &e, "history");
    json_t *nights = json_object_get(h, "nights");
    cr_expect_eq(json_array_size(nights), want_bad ? 2 : 1, "the history's nights");
    cr_expect_str_eq(json_string_value(json_object_get(json_array_get(nights, 0), "date")), GOOD);
    if (want_bad && json_array_size(nights) == 2)
        cr_expect_str_eq(json_string_value(json_object_get(json_array_get(nights, 1), "status")), want_bad);
    json_decref(h);
}

TestSuite(record, .init = setup, .fini = teardown);

/* open() of a FIFO waits for a writer: the store would never open. */
Test(record, a_fifo_in_place_of_a_record_does_not_block_opening_the_store, .timeout = 20) {
    cr_assert_eq(mkfifo(bad_path(), 0644), 0);
    reopen();
    expect_good_served(NULL);
}

/* Followed, the link would be read until memory runs out. */
Test(record, a_record_linked_to_dev_zero_is_not_read, .timeout = 20) {
    cr_assert_eq(symlink("/dev/zero", bad_path()), 0);
    reopen();
    expect_good_served(NULL);
}

/* A record's place holds the record itself: a link to one elsewhere (the
 * store's writers never make one) is not taken for it. */
Test(record, a_record_linked_elsewhere_is_not_taken_for_one) {
    char p[700];
    snprintf(p, sizeof p, "%s/" GPU "/" GOOD "/" SUITE ".json", dir);
    cr_assert_eq(symlink(p, bad_path()), 0);
    reopen();
    expect_good_served(NULL);
}

/* 64 GiB that take no disk: read, it would be asked for in one allocation,
 * fail for want of memory, and leave the GPU without a view. */
Test(record, an_oversized_record_is_refused_before_it_is_read) {
    int fd = open(bad_path(), O_WRONLY | O_CREAT, 0644);
    cr_assert_geq(fd, 0);
    cr_assert_eq(ftruncate(fd, 64ll << 30), 0);
    close(fd);
    reopen();
    expect_good_served(NULL);
}

/* A record that says ok, and whose document is not divergence.v1 (here its
 * tables are not a list): filed by hand, by another version, or damaged. */
static void break_document(const char *path) {
    json_error_t je;
    json_t *rec = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
    cr_assert_not_null(rec, "%s", je.text);
    json_t *doc = json_object_get(rec, "document");
    cr_assert(json_is_object(doc));
    json_object_set_new(doc, "tables", json_string("not tables"));
    cr_assert_str_eq(json_string_value(json_object_get(rec, "status")), "ok");
    cr_assert_eq(json_dump_file(rec, path, JSON_INDENT(2) | JSON_PRESERVE_ORDER), 0);
    json_decref(rec);
}

Test(record, a_good_record_whose_document_does_not_read_is_a_failed_night) {
    put(BAD, 2.0);
    break_document(bad_path());
    reopen();
    expect_good_served("failed");
    /* The index says the last attempt failed, and why. */
    struct blob *b = NULL;
    struct evidence_error e;
    json_t *idx = parsed(evidence_get_gpu_index(ev, GPU, &b, &e), &b, &e, "index");
    json_t *entry = json_array_get(json_object_get(idx, "suites"), (size_t)suites_index(SUITE));
    json_t *attempt = json_object_get(entry, "last_attempt");
    cr_expect_str_eq(json_string_value(json_object_get(attempt, "date")), BAD);
    cr_expect_str_eq(json_string_value(json_object_get(attempt, "status")), "failed");
    const char *why = json_string_value(json_object_get(attempt, "reason"));
    cr_expect(why && strstr(why, "does not read as divergence.v1"), "%s", why ? why : "(no reason)");
    cr_expect_str_eq(json_string_value(json_object_get(entry, "date")), GOOD, "the latest good is the night before");
    json_decref(idx);
    /* The next night is compared with the last night that was good. */
    put("2024-04-03", 1.0);
    json_t *rec = parsed(evidence_get_latest(ev, GPU, NULL, SUITE, EVIDENCE_JSON, &b, &e), &b, &e, "latest");
    json_t *prev = json_object_get(json_object_get(rec, "comparison"), "previous");
    cr_expect_str_eq(json_string_value(json_object_get(prev, "date")), GOOD, "compared with a night that was not good");
    json_decref(rec);
}

/* The same judgement, made when a record is read one at a time. */
Test(record, the_judgement_makes_a_failure_in_place) {
    put(BAD, 2.0);
    break_document(bad_path());
    int oom = 0;
    struct stat st;
    char gdir[700];
    snprintf(gdir, sizeof gdir, "%s/" GPU, dir);
    json_t *rec = record_load(gdir, BAD, SUITE ".json", &st, NULL, NULL, &oom);
    cr_assert_not_null(rec);
    cr_expect(record_ok(rec), "as filed");
    struct dv_report *r = (struct dv_report *)1;
    cr_assert_eq(record_judge(rec, &r), 0);
    cr_expect_null(r);
    cr_expect_not(record_ok(rec));
    cr_expect_null(json_object_get(rec, "summary"), "a failed night has no ratios to show");
    json_decref(rec);
    rec = record_load(gdir, GOOD, SUITE ".json", &st, NULL, NULL, &oom);
    cr_assert_eq(record_judge(rec, &r), 0);
    cr_expect_not_null(r, "a good record hands its document over, read");
    cr_expect(record_ok(rec));
    experiment_report_free(r);
    json_decref(rec);
    cr_expect_eq(oom, 0);
}

/* Last-Modified is when the night was measured (the document's
 * finished_utc: the fixture's is 2024-01-01T00:00:05Z), not when its file
 * was written or the store copied: the same for every form of a record,
 * the index and the history. */
Test(record, a_record_is_as_old_as_its_measurement) {
    const time_t measured = 1704067205;
    struct blob *b = NULL;
    struct evidence_error e;
    for (int kind = EVIDENCE_JSON; kind < EVIDENCE_NUM_KINDS; kind++) {
        cr_assert_eq(evidence_get_latest(ev, GPU, NULL, SUITE, (enum evidence_kind)kind, &b, &e), 0, "%s", e.reason);
        cr_expect_eq(b->mtime, measured, "latest, kind %d: %lld", kind, (long long)b->mtime);
        blob_release(b);
        cr_assert_eq(evidence_get_night(ev, GPU, NULL, GOOD, SUITE, (enum evidence_kind)kind, &b, &e), 0);
        cr_expect_eq(b->mtime, measured, "night, kind %d: %lld", kind, (long long)b->mtime);
        blob_release(b);
    }
    cr_assert_eq(evidence_get_gpu_index(ev, GPU, &b, &e), 0);
    cr_expect_eq(b->mtime, measured, "index: %lld", (long long)b->mtime);
    blob_release(b);
    for (int pass = 0; pass < 2; pass++) { /* made from the record, then from its sidecar */
        if (pass) reopen();
        cr_assert_eq(evidence_get_history(ev, GPU, NULL, SUITE, 30, NULL, &b, &e), 0);
        cr_expect_eq(b->mtime, measured, "history (pass %d): %lld", pass, (long long)b->mtime);
        blob_release(b);
    }
}
