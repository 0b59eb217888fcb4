/* test_history.c -- the history's nights kept in memory and in sidecars
 * (server/evidence/history.h): a page reads no record; the sidecars give
 * the very page the records give; a sidecar that names another record
 * file, or is not one, is not believed; a sidecar is written for each
 * night that has none; a page's digest follows its nights; a page's
 * next_cursor names only nights that exist; the nights are whole or absent
 * when allocations fail while they are made. (Order and paging are
 * test_evidence's history_* tests; the route is test_http_evidence's.) */
#define _DEFAULT_SOURCE
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "server/evidence/evidence.h"
#include "server/evidence/history.h"
#include "server/evidence/suites.h"
#include "tests/support/evidence_fixture.h"
#include "tests/support/failing_alloc.h"

#define GPU "nvidia-h200"
#define SUITE "day22-part1"

FIXTURE_STORE()

TestSuite(history, .init = setup, .fini = teardown);

static void put(const char *suite, const char *date, int ok, double base_ms) {
    char err[ERR_LEN];
    char *doc = ok ? fixture_document((size_t)suites_index(suite), base_ms, 0.001, 1, "NVIDIA H200") : NULL;
    struct evidence_record rec = {.suite = suite, .gpu = GPU, .gpu_name = "NVIDIA H200", .date = date, .ok = ok,
                                  .reason = ok ? NULL : "the worker died", .request_json = "{}",
                                  .document_json = doc};
    cr_assert_eq(evidence_write(ev, &rec, NULL, err), 0, "%s", err);
    free(doc);
}

/* Ten nights of SUITE (one failed), and one of another suite. */
static void ten_nights(void) {
    for (int d = 1; d <= 10; d++) {
        char date[EVIDENCE_DATE_LEN];
        snprintf(date, sizeof date, "2024-03-%02d", d);
        put(SUITE, date, d != 4, 1.0 + d);
    }
    put("day22-part2", "2024-03-05", 1, 1.0);
}

/* The page's bytes (malloc()ed), and its digest into *digest (may be NULL). */
static char *page(unsigned limit, const char *cursor, uint64_t *digest) {
    struct blob *b = NULL;
    struct evidence_error e;
    cr_assert_eq(evidence_get_history(ev, GPU, NULL, SUITE, limit, cursor, &b, &e), 0, "%d %s", e.code, e.reason);
    char *s = strdup(b->data);
    cr_assert_eq(strlen(s), b->len);
    if (digest) *digest = b->digest;
    blob_release(b);
    return s;
}

static void reopen(void) {
    char err[ERR_LEN];
    evidence_close(ev);
    ev = evidence_open(dir, err);
    cr_assert_not_null(ev, "%s", err);
}

static void shell(const char *fmt, const char *arg) {
    char cmd[1600];
    snprintf(cmd, sizeof cmd, fmt, arg, arg);
    cr_assert_eq(system(cmd), 0, "%s", cmd);
}

static const char *sidecar(const char *date) {
    static char p[2][800];
    static int next;
    char *out = p[next++ % 2];
    snprintf(out, sizeof p[0], "%s/" GPU "/%s/" HISTORY_SIDECAR_PREFIX SUITE HISTORY_SIDECAR_SUFFIX, dir, date);
    return out;
}

/* Every record overwritten in place with bytes that are no record (the
 * folder's mtime does not move, so the view is not reloaded): a page made
 * by reading records would lose its nights. */
Test(history, a_page_reads_no_record) {
    ten_nights();
    char *before = page(EVIDENCE_HISTORY_MAX, NULL, NULL);
    shell("for f in '%s'/" GPU "/*/*.json; do printf garbage > \"$f\"; done", dir);
    char *after = page(EVIDENCE_HISTORY_MAX, NULL, NULL);
    cr_expect_str_eq(after, before, "the page changed when its records did: it read them");
    json_t *j = json_loads(after, 0, NULL);
    cr_expect_eq(json_array_size(json_object_get(j, "nights")), 10);
    json_decref(j);
    free(before);
    free(after);
}

/* Made from the sidecars or from the records, a page is the same bytes. */
Test(history, the_sidecars_give_the_page_the_records_give) {
    ten_nights();
    reopen();
    cr_assert_eq(access(sidecar("2024-03-01"), F_OK), 0, "no sidecar beside the record");
    uint64_t d1, d2, d3;
    char *from_sidecars = page(7, "2024-03-09", &d1);
    shell("find '%s' -name '.*" HISTORY_SIDECAR_SUFFIX "' -delete", dir);
    reopen();
    char *from_records = page(7, "2024-03-09", &d2);
    cr_expect_str_eq(from_records, from_sidecars);
    cr_expect_eq(d1, d2, "the same page, the same digest");
    /* The open that read the records wrote the sidecars again. */
    for (int d = 1; d <= 10; d++) {
        char date[EVIDENCE_DATE_LEN];
        snprintf(date, sizeof date, "2024-03-%02d", d);
        cr_expect_eq(access(sidecar(date), F_OK), 0, "%s has no sidecar", date);
    }
    reopen();
    char *again = page(7, "2024-03-09", &d3);
    cr_expect_str_eq(again, from_sidecars);
    cr_expect_eq(d3, d1);
    free(from_sidecars);
    free(from_records);
    free(again);
}

/* A sidecar names the record file it was made from: copied beside another
 * night's record (or that record replaced), it is not believed; nor is
 * one that does not parse. */
Test(history, a_sidecar_of_another_record_file_is_not_believed) {
    ten_nights();
    char *want = page(EVIDENCE_HISTORY_MAX, NULL, NULL);
    char cmd[1800];
    snprintf(cmd, sizeof cmd, "cp '%s' '%s'", sidecar("2024-03-02"), sidecar("2024-03-03"));
    cr_assert_eq(system(cmd), 0);
    snprintf(cmd, sizeof cmd, "printf '{\"schema\":' > '%s'", sidecar("2024-03-05"));
    cr_assert_eq(system(cmd), 0);
    reopen();
    char *got = page(EVIDENCE_HISTORY_MAX, NULL, NULL);
    cr_expect_str_eq(got, want, "a night was shown from a sidecar that is not its record's");
    free(got);
    /* A night filed again on its date is a new record file: its new
     * numbers show, though its old sidecar is still there when read. */
    put(SUITE, "2024-03-03", 1, 50.0);
    reopen();
    got = page(1, "2024-03-04", NULL);
    json_t *j = json_loads(got, 0, NULL);
    json_t *row = json_array_get(json_object_get(json_array_get(json_object_get(j, "nights"), 0), "rows"), 0);
    cr_expect_float_eq(json_real_value(json_object_get(row, "median_ms")), 2.0 * 50.0, 1e-9);
    json_decref(j);
    free(got);
    free(want);
}

/* The ETag's input follows the page: the same nights the same digest, a
 * night filed since another. */
Test(history, a_pages_digest_follows_its_nights) {
    ten_nights();
    uint64_t a, b, c;
    free(page(30, NULL, &a));
    free(page(30, NULL, &b));
    cr_expect_eq(a, b);
    put(SUITE, "2024-03-11", 1, 3.0);
    free(page(30, NULL, &c));
    cr_expect_neq(a, c);
    free(page(30, "2024-03-11", &c));
    cr_expect_eq(a, c, "the nights before the new one are the page they were");
}

/* A full page says there is more only when an older night of the suite
 * exists; a date folder holding other suites' nights is no night of it. */
Test(history, next_cursor_names_only_nights_that_exist) {
    put(SUITE, "2024-03-02", 1, 1.0);
    put(SUITE, "2024-03-03", 1, 1.0);
    put("day22-part2", "2024-03-01", 1, 1.0); /* a date folder, no night of SUITE */
    char *p = page(2, NULL, NULL);
    json_t *j = json_loads(p, 0, NULL);
    cr_expect_eq(json_array_size(json_object_get(j, "nights")), 2);
    cr_expect(json_is_null(json_object_get(j, "next_cursor")), "%s", p);
    json_decref(j);
    free(p);
    p = page(1, NULL, NULL);
    j = json_loads(p, 0, NULL);
    cr_expect_str_eq(json_string_value(json_object_get(j, "next_cursor")), "2024-03-03");
    json_decref(j);
    free(p);
}

/* What is not a record in a record's place is no night, and does not stop
 * the others from being shown. */
Test(history, a_name_that_is_not_a_record_is_no_night) {
    ten_nights();
    shell("printf garbage > '%s'/" GPU "/2024-03-06/" SUITE ".json; rm -f '%s'/" GPU "/2024-03-06/.*.json", dir);
    reopen();
    char *p = page(EVIDENCE_HISTORY_MAX, NULL, NULL);
    json_t *j = json_loads(p, 0, NULL);
    cr_expect_eq(json_array_size(json_object_get(j, "nights")), 9);
    json_decref(j);
    free(p);
}

/* The nights are made when the store is opened (from their sidecars, or
 * from the records where there are none), a page is only cut from them: so
 * the store is opened with the k-th allocation failing, and then it does
 * not open, or its page is an EIO error or the very bytes an open without
 * failures gives. With the sidecars, and without them. */
static int history_from_records;

static void close_and_forget_sidecars(void *ctx) {
    (void)ctx;
    evidence_close(ev);
    ev = NULL;
    if (history_from_records) shell("find '%s' -name '*" HISTORY_SIDECAR_SUFFIX "' -delete", dir);
}

static char *open_and_page(void *ctx) {
    (void)ctx;
    char err[ERR_LEN];
    if (!(ev = evidence_open(dir, err))) return NULL;
    struct blob *b = NULL;
    struct evidence_error e;
    if (evidence_get_history(ev, GPU, NULL, SUITE, 30, NULL, &b, &e) != 0) {
        cr_assert_eq(e.code, EVIDENCE_EIO, "an allocation failed and the history said %d: %s", e.code, e.reason);
        return NULL;
    }
    char *s = strdup(b->data);
    blob_release(b);
    return s;
}

static void check_history_built(int from_records) {
    /* Fewer records where each open reads them whole (and the latest views
     * read them again): every allocation of every parse is failed in turn. */
    put(SUITE, "2024-04-01", 1, 10.0);
    put(SUITE, "2024-04-02", 0, 0);
    if (!from_records) {
        put(SUITE, "2024-04-03", 1, 11.0);
        put("day22-part2", "2024-04-03", 1, 12.0);
    }
    history_from_records = from_records;
    close_and_forget_sidecars(NULL);
    char *want = open_and_page(NULL);
    cr_assert_not_null(want);
    unsigned failed = failing_alloc_each(
        &(struct failing_case){.build = open_and_page, .want = want, .prepare = close_and_forget_sidecars});
    cr_assert_geq(failed, 20, "only %u opens met a failure", failed);
    free(want);
}

Test(history, the_nights_are_whole_or_absent_under_failing_allocations, .timeout = 600) {
    check_history_built(0);
}

Test(history, the_nights_made_from_records_are_whole_or_absent_under_failing_allocations, .timeout = 600) {
    check_history_built(1);
}
