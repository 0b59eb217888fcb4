/* test_nights.c -- nights compared: each night's record against the previous
 * good night and the median of the last nights, through the store (records
 * filed by evidence_write, read back by the night, history and index reads),
 * with documents whose ratios and intervals are set by hand: the labels,
 * the changes with their intervals, what changed around the numbers, the
 * line for people, and the rows that cannot be compared. */
#define _DEFAULT_SOURCE
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "server/evidence/evidence.h"
#include "server/evidence/nights.h"
#include "server/evidence/suites.h"
#include "tests/support/evidence_fixture.h"

#define GPU "nvidia-h200"
#define SUITE "day22-part1"

FIXTURE_STORE()

TestSuite(nights, .init = setup, .fini = teardown);

/* A night of day22-part1 whose rows' ratios are the model's times `scale`
 * (row `row` only; -1: every row but the baseline), each known to
 * +-halfwidth, on driver `driver` at `mhz`. */
struct night {
    const char *date;
    int row;
    double scale, halfwidth;
    const char *driver;
    double mhz;
    int ok;
    int no_intervals;
};

static void file(const struct night *n) {
    char err[ERR_LEN] = "";
    struct dv_report *r = fixture_report((size_t)suites_index(SUITE), 1.0, 0.003, n->halfwidth, 1, "NVIDIA H200");
    cr_assert_not_null(r);
    snprintf(r->device.nvidia_driver_version, sizeof r->device.nvidia_driver_version, "%s",
             n->driver ? n->driver : "580.159.04");
    r->device.measured_sm_clock_mhz = n->mhz > 0 ? n->mhz : 1980;
    r->device.rated_sm_clock_mhz = 1980;
    struct dv_table *t = &r->tables[0];
    for (unsigned i = 0; i < t->nrows; i++) {
        struct dv_row *w = &t->rows[i];
        if ((int)i == t->baseline_row || (n->row >= 0 && (int)i != n->row)) continue;
        const double s = n->scale > 0 ? n->scale : 1.0;
        w->ratio *= s;
        w->ratio_ci.lo *= s;
        w->ratio_ci.hi *= s;
    }
    if (n->no_intervals)
        for (unsigned i = 0; i < t->nrows; i++) {
            t->rows[i].ratio_ci = (struct dv_ci){NAN, NAN};
            t->rows[i].ratio_halfwidth = NAN;
        }
    char *doc = n->ok >= 0 ? report_json(r, 0) : NULL;
    experiment_report_free(r);
    char finished[32];
    snprintf(finished, sizeof finished, "%sT03:00:00Z", n->date);
    struct evidence_record rec = {.suite = SUITE,
                                  .gpu = GPU,
                                  .gpu_name = "NVIDIA H200",
                                  .date = n->date,
                                  .ok = n->ok >= 0,
                                  .reason = n->ok >= 0 ? NULL : "the job failed",
                                  .finished_utc = finished,
                                  .document_json = doc};
    cr_assert_eq(evidence_write(ev, &rec, NULL, err), 0, "%s", err);
    free(doc);
}

/* A read's blob as JSON (released): call it with the read's result, after
 * the read has set `b`. */
static json_t *blob_json(int rc, struct blob *b, const struct evidence_error *e) {
    cr_assert_eq(rc, 0, "read failed: %s", e->reason);
    json_t *j = json_loadb(b->data, b->len, 0, NULL);
    blob_release(b);
    cr_assert_not_null(j);
    return j;
}

/* The comparison of the record filed on `date`. */
static json_t *comparison_of(const char *date) {
    struct blob *b = NULL;
    struct evidence_error e;
    int rc = evidence_get_night(ev, GPU, NULL, date, SUITE, EVIDENCE_JSON, &b, &e);
    json_t *rec = blob_json(rc, b, &e);
    json_t *c = json_incref(json_object_get(rec, "comparison"));
    json_decref(rec);
    cr_assert(json_is_object(c), "the record of %s has a comparison", date);
    return c;
}

static json_int_t count(json_t *c, const char *label) {
    return json_integer_value(json_object_get(json_object_get(c, "counts"), label));
}

static const char *summary(json_t *c) { return json_string_value(json_object_get(c, "summary")); }

/* The comparison row of the lesson's row `name`. */
static json_t *row(json_t *c, const char *name) {
    json_t *r;
    size_t i;
    json_array_foreach(json_object_get(c, "rows"), i, r) {
        if (strcmp(json_string_value(json_object_get(r, "name")), name) == 0) return r;
    }
    cr_assert_fail("no row %s", name);
    return NULL;
}

Test(nights, the_first_night_has_nothing_to_compare_with) {
    file(&(struct night){.date = "2026-11-28", .row = -1, .halfwidth = 0.002});
    json_t *c = comparison_of("2026-11-28");
    cr_expect(json_is_null(json_object_get(c, "previous")));
    cr_expect_str_eq(summary(c), "no earlier good night to compare with");
    cr_expect_eq(count(c, "not_compared"), 3, "three rows besides the baseline");
    cr_expect_eq(json_array_size(json_object_get(c, "rows")), 3u);
    cr_expect(json_is_null(json_object_get(row(c, "lane-parity"), "previous")));
    json_decref(c);
}

/* The same ratios on three nights: each the same as the one before, and the
 * line names the first night of the run. A driver update between them is
 * named though nothing moved. */
Test(nights, unchanged_nights_say_since_when) {
    file(&(struct night){.date = "2026-11-28", .row = -1, .halfwidth = 0.002});
    file(&(struct night){.date = "2026-11-29", .row = -1, .halfwidth = 0.002});
    file(&(struct night){.date = "2026-11-30", .row = -1, .halfwidth = 0.002, .driver = "585.01"});
    json_t *c = comparison_of("2026-11-29");
    cr_expect_eq(count(c, "same"), 3);
    cr_expect_eq(json_integer_value(json_object_get(c, "changed")), 0);
    cr_expect_str_eq(json_string_value(json_object_get(c, "unchanged_since")), "2026-11-28");
    json_decref(c);
    c = comparison_of("2026-11-30");
    cr_expect_str_eq(json_string_value(json_object_get(c, "unchanged_since")), "2026-11-28");
    cr_expect_str_eq(json_string_value(json_object_get(json_object_get(c, "previous"), "date")), "2026-11-29");
    cr_expect(strncmp(summary(c), "unchanged since 2026-11-28 (3 ratios the same within 1.0%)", 57) == 0, "%s",
              summary(c));
    cr_expect(strstr(summary(c), "; driver 580.159.04 -> 585.01") != NULL, "%s", summary(c));
    json_t *env = json_array_get(json_object_get(c, "environment"), 0);
    cr_expect_str_eq(json_string_value(json_object_get(env, "what")), "driver");
    cr_expect_str_eq(json_string_value(json_object_get(env, "after")), "585.01");
    json_t *lp = json_object_get(row(c, "lane-parity"), "previous");
    cr_expect_str_eq(json_string_value(json_object_get(lp, "label")), "same");
    cr_expect(fabs(json_real_value(json_object_get(lp, "change"))) < 1e-12);
    json_decref(c);
}

/* One row runs 4,300 iterations against 4,096 (about 5%): higher, by the
 * change with its interval; the other rows the same; the line says which. */
Test(nights, a_planted_change_is_higher_with_its_interval) {
    file(&(struct night){.date = "2026-11-29", .row = -1, .halfwidth = 0.002});
    file(&(struct night){.date = "2026-11-30", .row = 1, .scale = 4300.0 / 4096, .halfwidth = 0.002});
    json_t *c = comparison_of("2026-11-30");
    cr_expect_eq(count(c, "higher"), 1);
    cr_expect_eq(count(c, "same"), 2);
    cr_expect_eq(json_integer_value(json_object_get(c, "changed")), 1);
    cr_expect(json_is_null(json_object_get(c, "unchanged_since")));
    json_t *p = json_object_get(row(c, "lane-half"), "previous");
    cr_expect_str_eq(json_string_value(json_object_get(p, "label")), "higher");
    const double d = json_real_value(json_object_get(p, "change"));
    cr_expect(fabs(d - (4300.0 / 4096 - 1)) < 1e-9, "change %g", d);
    json_t *ci = json_object_get(p, "change_ci");
    cr_expect(json_real_value(json_object_get(ci, "lo")) > 0.01 && json_real_value(json_object_get(ci, "hi")) < 0.06);
    cr_expect_str_eq(summary(c), "1 of 3 ratios changed since 2026-11-29: part1 lane-half higher by 5.0% [4.7, 5.3]");
    json_decref(c);
}

/* Lower by 4.4% on a new driver: the issue's own example line. A change
 * the intervals cannot place inside or outside the tolerance is ambiguous
 * and listed apart. */
Test(nights, lower_and_ambiguous) {
    file(&(struct night){.date = "2026-11-29", .row = -1, .halfwidth = 0.002, .driver = "580.159"});
    file(&(struct night){.date = "2026-11-30", .row = 0, .scale = 0.956, .halfwidth = 0.002, .driver = "585.01"});
    json_t *c = comparison_of("2026-11-30");
    cr_expect_eq(count(c, "lower"), 1);
    cr_expect(strstr(summary(c), "part1 lane-parity lower by 4.4% [") != NULL, "%s", summary(c));
    cr_expect(strstr(summary(c), "driver 580.159 -> 585.01") != NULL, "%s", summary(c));
    json_decref(c);
    file(&(struct night){.date = "2026-12-01", .row = 0, .scale = 0.956 * 1.008, .halfwidth = 0.002});
    c = comparison_of("2026-12-01");
    cr_expect_eq(count(c, "ambiguous"), 1, "0.8%% with +-0.28%% on either night against a 1%% tolerance");
    cr_expect(strstr(summary(c),
                     "no ratio changed by more than 1.0% since 2026-11-30; 1 ambiguous: part1 "
                     "lane-parity +0.8% [") != NULL,
              "%s", summary(c));
    json_decref(c);
}

/* The previous good night is the one compared with: a failed night between
 * is skipped, and a re-run of the same date is not its own previous. */
Test(nights, the_previous_good_night_skips_failures_and_the_same_date) {
    file(&(struct night){.date = "2026-11-28", .row = -1, .halfwidth = 0.002});
    file(&(struct night){.date = "2026-11-29", .ok = -1});
    file(&(struct night){.date = "2026-11-30", .row = -1, .halfwidth = 0.002});
    file(&(struct night){.date = "2026-11-30", .row = 1, .scale = 1.05, .halfwidth = 0.002});
    json_t *c = comparison_of("2026-11-30");
    cr_expect_str_eq(json_string_value(json_object_get(json_object_get(c, "previous"), "date")), "2026-11-28");
    cr_expect_eq(count(c, "higher"), 1);
    json_decref(c);
}

/* A record from before the intervals compares nothing: no label is made
 * up for a ratio with no interval. */
Test(nights, a_night_without_intervals_is_not_compared) {
    file(&(struct night){.date = "2026-11-29", .row = -1, .halfwidth = 0.002, .no_intervals = 1});
    file(&(struct night){.date = "2026-11-30", .row = -1, .halfwidth = 0.002});
    json_t *c = comparison_of("2026-11-30");
    cr_expect_eq(count(c, "not_compared"), 3);
    cr_expect_eq(count(c, "same"), 0);
    cr_expect(json_is_null(json_object_get(c, "unchanged_since")));
    cr_expect_str_eq(summary(c), "no ratio with an interval on both nights to compare with 2026-11-29");
    json_decref(c);
}

/* Against the median of the last nights: one night off by 3% does not move
 * the reference, so tonight reads the same against the history though it
 * reads lower against last night. */
Test(nights, the_history_median_outvotes_one_odd_night) {
    const char *dates[] = {"2026-11-24", "2026-11-25", "2026-11-26", "2026-11-27", "2026-11-28", "2026-11-29"};
    for (int i = 0; i < 6; i++) file(&(struct night){.date = dates[i], .row = -1, .halfwidth = 0.002});
    file(&(struct night){.date = "2026-11-30", .row = 0, .scale = 1.03, .halfwidth = 0.002});
    file(&(struct night){.date = "2026-12-01", .row = -1, .halfwidth = 0.002});
    json_t *c = comparison_of("2026-12-01");
    json_t *r = row(c, "lane-parity");
    cr_expect_str_eq(json_string_value(json_object_get(json_object_get(r, "previous"), "label")), "lower");
    json_t *h = json_object_get(r, "history");
    cr_expect_str_eq(json_string_value(json_object_get(h, "label")), "same");
    cr_expect_eq(json_integer_value(json_object_get(h, "nights")), NIGHTS_HISTORY);
    cr_expect_eq(json_integer_value(json_object_get(c, "history_nights")), NIGHTS_HISTORY);
    json_decref(c);
}

/* What moved around the numbers: the CUDA level, the build, a clock that
 * moved by more than 2% (and not one that moved by 1%). */
Test(nights, the_environment_names_what_changed) {
    int bad = 0;
    json_t *a =
        json_pack("{s:s, s:{s:{s:s, s:s, s:s, s:f, s:f}, s:{s:s}}, s:{s:s, s:s}}", "date", "2026-11-29", "document",
                  "device", "nvidia_driver_version", "580.159", "driver_version", "13.0", "runtime_version", "13.0",
                  "measured_sm_clock_mhz", 1980.0, "rated_sm_clock_mhz", 1980.0, "build", "nvcc_version", "13.0.88",
                  "provenance", "git_revision", "aaaa", "server_version", "1.0");
    json_t *b =
        json_pack("{s:s, s:{s:{s:s, s:s, s:s, s:f, s:f}, s:{s:s}}, s:{s:s, s:s}}", "date", "2026-11-30", "document",
                  "device", "nvidia_driver_version", "580.159", "driver_version", "13.1", "runtime_version", "13.0",
                  "measured_sm_clock_mhz", 1755.0, "rated_sm_clock_mhz", 1980.0, "build", "nvcc_version", "13.0.88",
                  "provenance", "git_revision", "bbbb", "server_version", "1.0");
    cr_assert(a && b);
    json_t *c = nights_compare(b, &a, 1, 0.01, &bad);
    cr_assert_not_null(c);
    cr_assert_eq(bad, 0);
    json_t *env = json_object_get(c, "environment");
    cr_expect_eq(json_array_size(env), 3u, "%s", json_dumps(env, 0));
    const char *want[] = {"CUDA driver", "build revision", "SM clock"};
    for (size_t i = 0; i < 3 && i < json_array_size(env); i++)
        cr_expect_str_eq(json_string_value(json_object_get(json_array_get(env, i), "what")), want[i]);
    cr_expect_str_eq(json_string_value(json_object_get(json_array_get(env, 2), "after")), "1755 MHz");
    json_decref(c);
    json_object_set_new(json_object_get(json_object_get(b, "document"), "device"), "measured_sm_clock_mhz",
                        json_real(1960.0));
    c = nights_compare(b, &a, 1, 0.01, &bad);
    cr_expect_eq(json_array_size(json_object_get(c, "environment")), 2u, "a 1%% clock move is no change");
    json_decref(c);
    json_decref(a);
    json_decref(b);
}

/* The history and the index carry each night's comparison: the history's
 * rows their label against the night before, the index the latest night's
 * counts (what /metrics exposes). */
Test(nights, history_and_index_carry_the_comparison) {
    file(&(struct night){.date = "2026-11-29", .row = -1, .halfwidth = 0.002});
    file(&(struct night){.date = "2026-11-30", .row = 1, .scale = 1.05, .halfwidth = 0.002});
    struct blob *b = NULL;
    struct evidence_error e;
    int rc = evidence_get_history(ev, GPU, NULL, SUITE, 30, NULL, &b, &e);
    json_t *h = blob_json(rc, b, &e);
    json_t *nights = json_object_get(h, "nights");
    cr_assert_eq(json_array_size(nights), 2u);
    json_t *last = json_array_get(nights, 1);
    json_t *cmp = json_object_get(last, "comparison");
    cr_expect_eq(json_integer_value(json_object_get(cmp, "changed")), 1);
    cr_expect_null(json_object_get(cmp, "rows"), "the history's comparison leaves its rows to the rows");
    json_t *r;
    size_t i;
    int seen = 0;
    json_array_foreach(json_object_get(last, "rows"), i, r) {
        const char *name = json_string_value(json_object_get(r, "name"));
        json_t *got = json_object_get(r, "compared");
        if (strcmp(name, "lane-half") == 0) {
            cr_expect_str_eq(json_string_value(json_object_get(got, "label")), "higher");
            cr_expect(json_is_object(json_object_get(r, "ratio_ci")), "the row's interval, for error bars");
            seen = 1;
        } else if (strcmp(name, "warp-parity") == 0) {
            cr_expect(json_is_null(got), "the baseline is not compared");
        }
    }
    cr_expect(seen);
    cr_expect(json_is_null(json_object_get(json_array_get(nights, 0), "comparison")) ||
                  json_is_null(json_object_get(json_object_get(json_array_get(nights, 0), "comparison"), "previous")),
              "the first night compares with nothing");
    json_decref(h);
    rc = evidence_get_gpu_index(ev, GPU, &b, &e);
    json_t *idx = blob_json(rc, b, &e);
    json_t *entry = json_array_get(json_object_get(idx, "suites"), (size_t)suites_index(SUITE));
    cr_expect_eq(json_integer_value(json_object_get(json_object_get(entry, "comparison"), "changed")), 1);
    json_decref(idx);
}

/* An older night is read once and kept for the nights after it, by its
 * file: a re-run of that night (a new record under the same date) is what
 * the next night compares with, not the copy kept of the first run. */
Test(nights, a_rerun_of_an_older_night_is_what_the_next_night_compares_with) {
    file(&(struct night){.date = "2026-11-29", .row = -1, .halfwidth = 0.002});
    file(&(struct night){.date = "2026-11-30", .row = 1, .scale = 1.05, .halfwidth = 0.002});
    json_t *c = comparison_of("2026-11-30");
    cr_expect_eq(count(c, "higher"), 1, "the first run of 2026-11-29 is the one compared with");
    json_decref(c);
    /* 2026-11-29 measured again, now with the higher ratio of 2026-11-30. */
    file(&(struct night){.date = "2026-11-29", .row = 1, .scale = 1.05, .halfwidth = 0.002});
    file(&(struct night){.date = "2026-11-30", .row = 1, .scale = 1.05, .halfwidth = 0.002});
    c = comparison_of("2026-11-30");
    cr_expect_eq(count(c, "higher"), 0, "compared with the kept first run of 2026-11-29: %s", summary(c));
    cr_expect_eq(count(c, "same"), 3, "%s", summary(c));
    json_decref(c);
}
