/* test_filed_as.c -- a night filed under a date the capture gave
 * (evidence_record.filed_as, `measure --file-as`): the record and its
 * history entry say "filed_as" and keep when it was measured; it never
 * replaces a night of its date nor goes before a later night of its suite
 * unless told to (replace_night); and each table of the comparison says
 * since when its own ratios are unchanged. Records are filed by
 * evidence_write() into a temporary store. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "server/evidence/evidence.h"
#include "server/evidence/suites.h"
#include "tests/support/evidence_fixture.h"

#define GPU "nvidia-h200"
#define SUITE "day22-part1"
#define MEASURED "2026-12-01T03:04:05Z"

FIXTURE_STORE()

TestSuite(filed_as, .init = setup, .fini = teardown);

/* Files night `date` of `suite`, measured at MEASURED, its ratios `base_ms`
 * apart from the predicted; `as` 1: under the given date. Returns
 * evidence_write()'s status with its error in `err`. */
static int file(const char *suite, const char *date, int as, int replace, double base_ms, char *err) {
    char *doc = fixture_document((size_t)suites_index(suite), base_ms, 0.001, 1, "NVIDIA H200");
    cr_assert_not_null(doc);
    struct evidence_record rec = {.suite = suite,
                                  .gpu = GPU,
                                  .gpu_name = "NVIDIA H200",
                                  .date = date,
                                  .filed_as = as,
                                  .replace_night = replace,
                                  .ok = 1,
                                  .started_utc = "2026-12-01T03:00:00Z",
                                  .finished_utc = MEASURED,
                                  .document_json = doc};
    err[0] = '\0';
    int rc = evidence_write(ev, &rec, NULL, err);
    free(doc);
    return rc;
}

static json_t *night(const char *suite, const char *date) {
    struct blob *b = NULL;
    struct evidence_error e;
    cr_assert_eq(evidence_get_night(ev, GPU, NULL, date, suite, EVIDENCE_JSON, &b, &e), 0, "%s", e.reason);
    json_t *j = json_loadb(b->data, b->len, 0, NULL);
    blob_release(b);
    cr_assert_not_null(j);
    return j;
}

Test(filed_as, the_record_says_the_date_was_given_and_keeps_when_it_was_measured) {
    char err[ERR_LEN];
    cr_assert_eq(file(SUITE, "2026-11-29", 1, 0, 1.0, err), 0, "%s", err);
    json_t *rec = night(SUITE, "2026-11-29");
    cr_expect_str_eq(json_string_value(json_object_get(rec, "date")), "2026-11-29");
    cr_expect_str_eq(json_string_value(json_object_get(rec, "filed_as")), "2026-11-29");
    cr_expect_str_eq(json_string_value(json_object_get(json_object_get(rec, "provenance"), "finished_utc")), MEASURED);
    json_decref(rec);
    /* A night filed as measured says nothing of the kind. */
    cr_assert_eq(file(SUITE, "2026-11-30", 0, 0, 1.0, err), 0, "%s", err);
    rec = night(SUITE, "2026-11-30");
    cr_expect_null(json_object_get(rec, "filed_as"));
    json_decref(rec);
    /* The history says it too, night by night. */
    struct blob *b = NULL;
    struct evidence_error e;
    cr_assert_eq(evidence_get_history(ev, GPU, NULL, SUITE, 10, NULL, &b, &e), 0, "%s", e.reason);
    json_t *h = json_loadb(b->data, b->len, 0, NULL), *nights = json_object_get(h, "nights");
    blob_release(b);
    cr_assert_eq(json_array_size(nights), 2);
    cr_expect_str_eq(json_string_value(json_object_get(json_array_get(nights, 0), "filed_as")), "2026-11-29");
    cr_expect_str_eq(json_string_value(json_object_get(json_array_get(nights, 0), "finished_utc")), MEASURED);
    cr_expect_null(json_object_get(json_array_get(nights, 1), "filed_as"));
    json_decref(h);
}

Test(filed_as, never_replaces_a_night_nor_goes_before_a_later_one_unless_told) {
    char err[ERR_LEN];
    cr_assert_eq(file(SUITE, "2026-11-29", 1, 0, 1.0, err), 0, "%s", err);
    cr_expect_neq(file(SUITE, "2026-11-29", 1, 0, 2.0, err), 0, "a given date replaced its night");
    cr_expect(strstr(err, "2026-11-29 already holds a night of day22-part1 (--replace-night"), "%s", err);
    json_t *rec = night(SUITE, "2026-11-29");
    json_t *doc = json_object_get(rec, "document");
    cr_expect_not_null(doc);
    json_decref(rec);
    cr_expect_neq(file(SUITE, "2026-11-28", 1, 0, 1.0, err), 0, "a given date went before a later night");
    cr_expect(strstr(err, "2026-11-29 holds a later night of day22-part1"), "%s", err);
    /* Another suite's nights are not in the way. */
    cr_expect_eq(file("day22-part2", "2026-11-28", 1, 0, 1.0, err), 0, "%s", err);
    /* Told to, it files. */
    cr_expect_eq(file(SUITE, "2026-11-29", 1, 1, 1.0, err), 0, "%s", err);
    cr_expect_eq(file(SUITE, "2026-11-28", 1, 1, 1.0, err), 0, "%s", err);
    /* A night filed as measured replaces as it always did. */
    cr_expect_eq(file(SUITE, "2026-11-29", 0, 0, 1.0, err), 0, "%s", err);
}

/* The comparison's "tables": each table's own unchanged_since, carried from
 * night to night; null on a first night. */
Test(filed_as, each_table_says_since_when_it_is_unchanged) {
    char err[ERR_LEN];
    cr_assert_eq(file(SUITE, "2026-11-27", 1, 0, 1.0, err), 0, "%s", err);
    cr_assert_eq(file(SUITE, "2026-11-28", 1, 0, 1.0, err), 0, "%s", err);
    cr_assert_eq(file(SUITE, "2026-11-29", 1, 0, 1.0, err), 0, "%s", err);
    json_t *rec = night(SUITE, "2026-11-29");
    json_t *t = json_array_get(json_object_get(json_object_get(rec, "comparison"), "tables"), 0);
    cr_assert_not_null(t, "no tables in the comparison");
    cr_expect_str_eq(json_string_value(json_object_get(t, "id")), "part1");
    cr_expect_str_eq(json_string_value(json_object_get(t, "unchanged_since")), "2026-11-27");
    cr_expect_gt(json_integer_value(json_object_get(t, "compared")), 0);
    cr_expect_eq(json_integer_value(json_object_get(t, "changed")), 0);
    json_decref(rec);
    rec = night(SUITE, "2026-11-27");
    t = json_array_get(json_object_get(json_object_get(rec, "comparison"), "tables"), 0);
    cr_expect(json_is_null(json_object_get(t, "unchanged_since")), "a first night unchanged since something");
    json_decref(rec);
}
