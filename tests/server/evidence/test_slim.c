/* test_slim.c -- the slim record and a row's listing (slim.h), on the
 * recorded H200 capture's Part 2: the slim record is the record without
 * each row's runs and with the path of its listing in their place, and
 * nothing else changed; the listing is the row's instructions whole; a row
 * that is not there is none; a failing allocation gives NULL, never a part.
 */
#define _DEFAULT_SOURCE
#include <criterion/criterion.h>
#include <jansson.h>
#include <string.h>

#include "server/evidence/slim.h"
#include "tests/support/evidence_fixture.h"
#include "tests/support/failing_alloc.h"

static json_t *capture(const char *suite) {
    char path[1024];
    snprintf(path, sizeof path, FIXTURE_CAPTURE_DIR "/%s.json", suite);
    json_error_t je;
    json_t *rec = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
    cr_assert_not_null(rec, "%s: %s", path, je.text);
    return rec;
}

static json_t *ins_of(json_t *rec, size_t t, size_t r) {
    json_t *tables = json_object_get(json_object_get(rec, "document"), "tables");
    return json_object_get(json_array_get(json_object_get(json_array_get(tables, t), "rows"), r), "instructions");
}

Test(slim, the_slim_record_is_the_record_without_runs_and_with_their_paths) {
    json_t *rec = capture("day22-part2");
    size_t len = 0;
    char *text = slim_record(rec, "nvidia-h200", FIXTURE_CAPTURE_DATE, "day22-part2", NULL, &len);
    cr_assert_not_null(text);
    cr_expect_eq(strlen(text), len);
    cr_expect_eq(text[len - 1], '\n');
    json_t *slim = json_loads(text, JSON_REJECT_DUPLICATES, NULL);
    cr_assert_not_null(slim);
    json_t *tables = json_object_get(json_object_get(rec, "document"), "tables");
    size_t listed = 0;
    for (size_t t = 0; t < json_array_size(tables); t++)
        for (size_t r = 0; r < json_array_size(json_object_get(json_array_get(tables, t), "rows")); r++) {
            json_t *full = ins_of(rec, t, r), *cut = ins_of(slim, t, r);
            if (!json_is_object(full)) {
                cr_expect(json_equal(full, cut), "a row without a listing is as it was");
                continue;
            }
            char want[256];
            snprintf(want, sizeof want, "/evidence/nvidia-h200/%s/day22-part2/rows/%zu.%zu/instructions.json",
                     FIXTURE_CAPTURE_DATE, t, r);
            cr_expect_str_eq(json_string_value(json_object_get(cut, "listing_url")), want);
            cr_expect_null(json_object_get(cut, "runs"), "row %zu.%zu: its runs are left out", t, r);
            /* Put back what was cut: the record as it was. */
            json_object_del(cut, "listing_url");
            json_object_set(cut, "runs", json_object_get(full, "runs"));
            listed++;
        }
    cr_expect_gt(listed, 0, "the capture's Part 2 has listings");
    cr_expect(json_equal(slim, rec), "nothing but the runs changed");
    cr_expect_lt(len * 5, strlen(json_dumps(rec, JSON_COMPACT)), "the slim record is a fifth of the whole or less");
    free(text);
    json_decref(slim);
    json_decref(rec);
}

Test(slim, a_rows_listing_is_its_instructions_whole) {
    json_t *rec = capture("day22-part2");
    size_t len = 0;
    int oom = 1;
    char *text = slim_listing(rec, "0.1", &len, &oom);
    cr_assert_not_null(text);
    cr_expect_eq(oom, 0);
    json_t *l = json_loads(text, 0, NULL);
    cr_expect(json_equal(l, ins_of(rec, 0, 1)));
    json_decref(l);
    free(text);
    static const char *const none[] = {"9.0", "0.99", "1", "0.1.2", "-1.0", "01.1", "0.", ".1", "a.b", "00000.1", ""};
    for (size_t i = 0; i < sizeof none / sizeof none[0]; i++) {
        cr_expect_null(slim_listing(rec, none[i], &len, &oom), "row %s", none[i]);
        cr_expect_eq(oom, 0, "row %s", none[i]);
    }
    cr_expect(slim_valid_row("12.345"));
    cr_expect_not(slim_valid_row("0.1.2"));
    json_decref(rec);
}

static json_t *the_rec;
static char *build_slim(void *ctx) {
    (void)ctx;
    size_t len;
    return slim_record(the_rec, "nvidia-h200", FIXTURE_CAPTURE_DATE, "day22-part2", NULL, &len);
}

/* A small record of the capture's shape: Part 2's first table, its first
 * two rows, three runs each; no transcript (every allocation of the build
 * is made to fail once, so it must be small). */
static json_t *small_record(void) {
    json_t *rec = capture("day22-part2");
    json_object_del(rec, "transcript");
    json_t *tables = json_object_get(json_object_get(rec, "document"), "tables");
    while (json_array_size(tables) > 1) json_array_remove(tables, 1);
    json_t *rows = json_object_get(json_array_get(tables, 0), "rows");
    while (json_array_size(rows) > 2) json_array_remove(rows, 2);
    for (size_t r = 0; r < 2; r++) {
        json_t *runs = json_object_get(ins_of(rec, 0, r), "runs");
        while (json_array_size(runs) > 3) json_array_remove(runs, 3);
    }
    return rec;
}

Test(slim, a_failing_allocation_gives_null_never_a_part) {
    the_rec = small_record();
    size_t len;
    char *want = slim_record(the_rec, "nvidia-h200", FIXTURE_CAPTURE_DATE, "day22-part2", NULL, &len);
    cr_assert_not_null(want);
    cr_assert_not_null(strstr(want, "listing_url"));
    struct failing_case c = {.build = build_slim, .want = want, .max = 20000};
    cr_expect_gt(failing_alloc_each(&c), 0, "some allocation failed");
    free(want);
    json_decref(the_rec);
}

/* A history page goes in whole as "history"; one past SLIM_HISTORY_MAX is
 * left out (the page asks the route for it). */
Test(slim, the_latest_record_carries_its_history_when_small) {
    json_t *rec = json_pack("{s:s, s:{s:[]}}", "schema", "divergence.evidence.v1", "document", "tables");
    cr_assert_not_null(rec);
    size_t len = 0;
    char *text = slim_record(rec, "g", "2026-12-03", "s", "{\"schema\":\"divergence.evidence.history.v1\",\"nights\":[{}]}", &len);
    cr_assert_not_null(text);
    json_t *j = json_loads(text, 0, NULL);
    cr_assert_not_null(j);
    cr_expect_eq(json_array_size(json_object_get(json_object_get(j, "history"), "nights")), 1);
    json_decref(j);
    free(text);
    char *big = malloc(SLIM_HISTORY_MAX + 64);
    cr_assert_not_null(big);
    memset(big, ' ', SLIM_HISTORY_MAX + 63);
    memcpy(big, "{\"nights\":[]}", 13);
    big[SLIM_HISTORY_MAX + 63] = '\0';
    text = slim_record(rec, "g", "2026-12-03", "s", big, &len);
    cr_assert_not_null(text);
    cr_expect_null(strstr(text, "\"history\""), "a history past the bound goes in: %.80s", text);
    free(text);
    free(big);
    json_decref(rec);
}
