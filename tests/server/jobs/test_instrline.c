/* test_instrline.c -- the answer lines of `divergence-gpu instructions`
 * (server/jobs/instrline.h), which the worker's profiler reads: each
 * member in its place, a failed row's default reason, and a line built
 * whole or not at all. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/jsonout.h"
#include "api/report.h"
#include "kernels/model/listing/listing.h"
#include "server/jobs/instrline.h"
#include "tests/support/failing_alloc.h"

/* A whole profile: one region, the sum of its one run. */
#define PROFILE                                                                                                        \
    "{\"source\": \"cupti-sass\", \"kernel\": \"k\", \"scale\": 2, \"regions\": [{\"kind\": \"before\", "             \
    "\"instructions\": 3, \"warp_executions\": 24, \"thread_executions\": 768, \"pred_on_thread_executions\": 768, "  \
    "\"lanes_per_execution\": 32}], \"runs\": [{\"pc\": 16, \"count\": 3, \"region\": \"before\", "                 \
    "\"warp_executions\": 8, \"thread_executions\": 256, \"pred_on_thread_executions\": 256, \"lanes\": 32}]}"

static struct listing *profile(void) {
    json_t *o = json_loads(PROFILE, 0, NULL);
    struct listing *l = NULL;
    char err[ERR_LEN];
    cr_assert_eq(report_instructions_parse(o, &l, err), 0, "%s", err);
    json_decref(o);
    return l;
}

static const char *const names[] = {"plan", "cuda"};
static const double ms[] = {1.5, 2.25};
static const struct instrline_phases phases = {names, ms, 2, 3.75};

Test(instrline, a_rows_line_has_each_member_in_its_place) {
    struct listing *l = profile();
    json_t *io = report_instructions_json(l);
    char *instructions = jsonout_dumps(io, JSON_COMPACT);
    json_decref(io);
    struct listing_diff cmp = {.cells = 10, .mismatches = 1, .instructions = 5};
    snprintf(cmp.first, sizeof cmp.first, "pc 0x10: warp_executions 8 against 9");
    char *got = instrline_row(1, 2, l, "ignored with a profile", "no samples", &phases, &cmp);
    char want[8192];
    snprintf(want, sizeof want,
             "{\"table\":1,\"row\":2,\"ok\":true,\"instructions\":%s,\"stalls_reason\":\"no samples\","
             "\"phases_ms\":{\"plan\":1.5,\"cuda\":2.25,\"total\":3.75},\"compare\":{\"cells\":10,\"mismatches\":1,"
             "\"instructions\":5,\"first\":\"pc 0x10: warp_executions 8 against 9\"}}",
             instructions);
    cr_expect_str_eq(got, want);
    free(got);
    got = instrline_row(0, 4, l, NULL, "", NULL, NULL);
    snprintf(want, sizeof want, "{\"table\":0,\"row\":4,\"ok\":true,\"instructions\":%s,\"stalls_reason\":null}",
             instructions);
    cr_expect_str_eq(got, want, "stall samples: null; a line of --rows: no phases");
    free(got);
    free(instructions);
    listing_free(l);

    got = instrline_row(0, 3, NULL, "", "x", NULL, NULL);
    cr_expect_str_eq(got, "{\"table\":0,\"row\":3,\"ok\":false,\"reason\":\"instructions: failed\"}");
    free(got);
    got = instrline_row(1, 0, NULL, "CUPTI: no record", NULL, &phases, NULL);
    cr_expect_str_eq(got, "{\"table\":1,\"row\":0,\"ok\":false,\"reason\":\"CUPTI: no record\","
                          "\"phases_ms\":{\"plan\":1.5,\"cuda\":2.25,\"total\":3.75}}");
    free(got);
    got = instrline_done(8, 7, &phases, NULL);
    cr_expect_str_eq(got, "{\"done\":true,\"rows\":8,\"profiled\":7,\"phases_ms\":{\"plan\":1.5,\"cuda\":2.25,"
                          "\"total\":3.75}}");
    free(got);
    const struct instrline_served sv = {.text_memory = 2, .text_folder = 1, .text_tool = 0, .ending = 1};
    got = instrline_done(8, 7, &phases, &sv);
    cr_expect_str_eq(got, "{\"done\":true,\"rows\":8,\"profiled\":7,\"phases_ms\":{\"plan\":1.5,\"cuda\":2.25,"
                          "\"total\":3.75},\"disassembly\":{\"memory\":2,\"folder\":1,\"tool\":0},\"ending\":true}",
                     "a served request's: where its texts came from, and whether the process ends");
    free(got);
    got = instrline_failure("instructions: out of memory writing the profile");
    cr_expect_str_eq(got, "{\"ok\":false,\"reason\":\"instructions: out of memory writing the profile\"}");
    free(got);
}

static char *row_line(void *l) {
    const struct listing_diff cmp = {.cells = 1, .first = "x"};
    return instrline_row(1, 2, l, NULL, "no samples", &phases, &cmp);
}
static char *done_line(void *ctx) {
    (void)ctx;
    const struct instrline_served sv = {.text_memory = 3, .ending = 1};
    return instrline_done(8, 7, &phases, &sv);
}

Test(instrline, a_line_is_whole_or_absent_under_failing_allocations) {
    struct listing *l = profile();
    char *(*builds[])(void *) = {row_line, done_line};
    for (size_t i = 0; i < 2; i++) {
        char *want = builds[i](l);
        cr_assert_not_null(want);
        unsigned failed = failing_alloc_each(&(struct failing_case){.build = builds[i], .ctx = l, .want = want});
        cr_expect_geq(failed, 5, "line %zu: only %u builds met a failure", i, failed);
        free(want);
    }
    listing_free(l);
}
