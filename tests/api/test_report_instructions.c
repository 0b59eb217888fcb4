/* test_report_instructions.c -- a row's instruction profile read on its
 * own (report_instructions_parse(): the profiler's answers and the profile
 * cache's files): bad fields refused by their path, and a profile that reads
 * but does not add up refused like one that does not read. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <string.h>

#include "api/report.h"
#include "kernels/model/listing/listing.h"

static json_t *load(const char *s) {
    json_error_t je;
    json_t *j = json_loads(s, JSON_REJECT_DUPLICATES, &je);
    cr_assert_not_null(j, "invalid JSON: %s", je.text);
    return j;
}

/* A whole profile as the profiler writes one: two regions, each the sum of
 * its run. */
#define WHOLE_PROFILE                                                                                                  \
    "{\"source\": \"ncu\", \"kernel\": \"k\", \"scale\": 2, \"regions\": ["                                            \
    "{\"kind\": \"before\", \"instructions\": 3, \"warp_executions\": 24, \"thread_executions\": 768, "                \
    "\"pred_on_thread_executions\": 768, \"lanes_per_execution\": 32}, "                                               \
    "{\"kind\": \"reconverge\", \"instructions\": 2, \"warp_executions\": 32, \"thread_executions\": 512, "            \
    "\"pred_on_thread_executions\": 512, \"lanes_per_execution\": 16}], "                                              \
    "\"runs\": [{\"pc\": 16, \"count\": 3, \"region\": \"before\", \"warp_executions\": 8, "                           \
    "\"thread_executions\": 256, \"pred_on_thread_executions\": 256, \"lanes\": 32}, "                                 \
    "{\"pc\": 64, \"count\": 2, \"region\": \"reconverge\", \"warp_executions\": 16, \"thread_executions\": 256, "     \
    "\"pred_on_thread_executions\": 256, \"lanes\": 16}]}"

Test(report_instructions, parse_rejects_bad_fields_by_their_path) {
    char err[ERR_LEN];
    struct listing *l = NULL;
    static const struct {
        const char *obj, *want;
    } bad[] = {
        {"{\"cubin_crc\": \"xyz\"}", "instructions.cubin_crc: expected 16 hex digits"},
        {"{\"cubin_crc\": \"00000000000000001\"}", "instructions.cubin_crc: expected 16 hex digits"},
        {"{\"runs\": [{\"pc\": 16}, {\"region\": \"path_c\"}]}", "instructions.runs[1].region: expected before"},
        {"{\"runs\": [{\"pc\": -16}]}", "instructions.runs[0].pc: negative"},
        {"{\"regions\": [{\"stalls\": [3]}]}", "instructions.regions[0].stalls[0]: expected an object"},
        {"{\"grid\": {\"block\": [1]}}", "instructions.grid.block: expected [x, y]"},
        {"{\"runs\": [7]}", "instructions.runs[0]: expected an object"},
        {"[]", "instructions: expected an object"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        json_t *o = load(bad[k].obj);
        err[0] = '\0';
        cr_expect_eq(report_instructions_parse(o, &l, err), -1, "accepted %s", bad[k].obj);
        cr_expect_null(l);
        cr_expect(strstr(err, bad[k].want), "%s: got '%s', want '%s'", bad[k].obj, err, bad[k].want);
        json_decref(o);
    }
    json_t *o = load(WHOLE_PROFILE);
    cr_assert_eq(report_instructions_parse(o, &l, err), 0, "%s", err);
    cr_expect_str_eq(l->source, "ncu");
    cr_assert_eq(l->nruns, 2);
    cr_expect_eq(l->runs[1].region, LISTING_RECONVERGE);
    cr_expect_eq(l->runs[1].count, 2);
    listing_free(l);
    json_decref(o);
}

/* A profile that reads but does not add up is refused like one that does
 * not read, by the field at fault: the profiler's answer `"instructions":
 * {}` and the cache's files come through here. */
Test(report_instructions, parse_refuses_a_profile_that_does_not_add_up) {
    char err[ERR_LEN];
    struct listing *l = NULL;
    static const struct {
        const char *from, *to, *want;
    } bad[] = {
        {"", "", ""}, /* replaced by {} below */
        {"\"runs\": [", "\"runs\": [], \"x\": [", "instructions.runs: none"},
        {"\"regions\": [", "\"regions\": [], \"x\": [", "instructions.regions: none"},
        {"\"instructions\": 3,", "\"instructions\": 4,",
         "instructions.regions[0].instructions: 4, but its runs add up to 3"},
        {"\"warp_executions\": 24,", "\"warp_executions\": 25,", "instructions.regions[0].warp_executions: 25"},
        {"\"thread_executions\": 256,", "\"thread_executions\": 257,",
         "instructions.runs[0].thread_executions: 257 for 8 warp executions: more than 32"},
        {"\"lanes\": 32", "\"lanes\": 33", "instructions.runs[0].lanes: not within 0 to 32"},
        {"\"lanes\": 32", "\"lanes\": -1", "instructions.runs[0].lanes: not within 0 to 32"},
        {"\"count\": 3", "\"count\": -3", "instructions.runs[0].count: negative"},
        {"\"kind\": \"reconverge\"", "\"kind\": \"before\"", "instructions.regions[1].kind: listed twice"},
        {"\"scale\": 2", "\"scale\": -2", "instructions.scale: not above 0"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        char text[2048];
        const char *at = k ? strstr(WHOLE_PROFILE, bad[k].from) : NULL;
        cr_assert(!k || at, "case %zu: no '%s' to replace", k, bad[k].from);
        if (k)
            snprintf(text, sizeof text, "%.*s%s%s", (int)(at - WHOLE_PROFILE), WHOLE_PROFILE, bad[k].to,
                     at + strlen(bad[k].from));
        else snprintf(text, sizeof text, "{}");
        json_t *o = load(text);
        err[0] = '\0';
        cr_expect_eq(report_instructions_parse(o, &l, err), -1, "accepted %s", text);
        cr_expect_null(l);
        cr_expect(strstr(err, k ? bad[k].want : "instructions.regions: none"), "case %zu: got '%s', want '%s'", k, err,
                  bad[k].want);
        json_decref(o);
    }
}
