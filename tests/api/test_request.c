/* test_request.c -- every way a POST /measure body can be wrong, and the
 * round trip through request_dump(). */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "api/options.h"
#include "api/request.h"
#include "kernels/model/model/plan.h"

static struct dv_options o;
static struct request_error e;

static int parse(const char *body) { return request_parse(body, strlen(body), &o, &e); }

/* The body must fail with `field` and a reason containing `reason`. */
static void expect_error(const char *body, const char *field, const char *reason) {
    cr_assert_eq(parse(body), -1, "accepted %s", body);
    cr_expect_eq(e.status, 400);
    cr_expect_str_eq(e.field, field, "body %s: field \"%s\", reason \"%s\"", body, e.field, e.reason);
    if (reason)
        cr_expect(strstr(e.reason, reason) != NULL, "body %s: reason \"%s\" lacks \"%s\"", body,
                  e.reason, reason);
}

Test(request, empty_object_is_the_defaults) {
    struct dv_options d;
    experiment_defaults(&d);
    cr_assert_eq(parse("{}"), 0, "%s: %s", e.field, e.reason);
    cr_expect_eq(memcmp(&o, &d, sizeof o), 0);
    cr_assert_eq(parse(" \n{ }\n"), 0);
}

Test(request, every_field_is_read) {
    const char *body = "{\"part\": 1, \"predicates\": [\"first-16\", \"threadIdx.y & 1\"],"
                       " \"baseline\": \"threadIdx.y & 1\", \"blocks\": 128,"
                       " \"threads_per_block\": [32, 8], \"iterations\": 64, \"max_noise\": 0.02,"
                       " \"budget_ms\": 500, \"min_samples\": 5, \"max_samples\": 50,"
                       " \"scenario\": \"\"}";
    cr_assert_eq(parse(body), 0, "%s: %s", e.field, e.reason);
    cr_expect_eq(o.part, DV_PART_1);
    cr_expect_eq(o.npredicates, 2);
    cr_expect_str_eq(o.predicates[1], "threadIdx.y & 1");
    cr_expect_str_eq(o.baseline, "threadIdx.y & 1");
    cr_expect_eq(o.blocks, 128);
    cr_expect_eq(o.block_x, 32);
    cr_expect_eq(o.block_y, 8);
    cr_expect_eq(o.iterations, 64);
    cr_expect_float_eq(o.max_noise, 0.02, 1e-15);
    cr_expect_float_eq(o.budget_ms, 500.0, 1e-12);
    cr_expect_eq(o.min_samples, 5);
    cr_expect_eq(o.max_samples, 50);
    cr_assert_eq(parse("{\"part\": \"all\", \"blocks\": \"auto\", \"threads_per_block\": 96,"
                       " \"scenario\": \"all\"}"), 0, "%s: %s", e.field, e.reason);
    cr_expect_eq(o.part, DV_PART_ALL);
    cr_expect_eq(o.blocks, 0);
    cr_expect_eq(o.block_x, 96);
    cr_expect_eq(o.block_y, 1);
    cr_expect_str_eq(o.scenario, "all");
}

Test(request, malformed_json_has_line_and_column) {
    expect_error("{\"part\": 1,\n  \"blocks\": }", "", "malformed JSON at line 2, column 13");
    cr_expect_eq(e.line, 2);
    cr_expect_eq(e.column, 13);
    expect_error("{\"part\": 1", "", "malformed JSON");
    cr_expect_eq(e.line, 1);
    expect_error("{} trailing", "", "line 1");
    expect_error("", "", "empty body");
    expect_error("   ", "", "empty body");
}

Test(request, top_level_must_be_an_object) {
    expect_error("[1, 2]", "", "expected a JSON object, got an array");
    cr_expect_eq(e.line, 0);
}

Test(request, unknown_field_is_named) {
    expect_error("{\"part\": 1, \"colour\": \"red\"}", "colour", "unknown field");
    expect_error("{\"device\": 1}", "device", "unknown field");
}

Test(request, duplicate_keys_name_the_field) {
    expect_error("{\"blocks\": 8,\n \"blocks\": 16}", "blocks", "duplicate key at line 2");
    cr_expect_eq(e.line, 2);
    cr_expect(e.column > 0);
}

Test(request, wrong_types) {
    expect_error("{\"part\": \"1\"}", "part", "1, 2 or \"all\"");
    expect_error("{\"part\": 3}", "part", "1, 2 or \"all\"");
    expect_error("{\"part\": 0}", "part", NULL);
    expect_error("{\"part\": true}", "part", "got a boolean");
    expect_error("{\"predicates\": \"lane-parity\"}", "predicates", "got a string");
    expect_error("{\"predicates\": [\"lane-parity\", 3]}", "predicates[1]", "expected a string, got an integer");
    expect_error("{\"baseline\": null}", "baseline", "got null");
    expect_error("{\"blocks\": 1.5}", "blocks", "got a number with a fraction");
    expect_error("{\"blocks\": \"many\"}", "blocks", "\"auto\"");
    expect_error("{\"threads_per_block\": \"32by8\"}", "threads_per_block", "XxY");
    expect_error("{\"threads_per_block\": \"x8\"}", "threads_per_block", "XxY");
    expect_error("{\"threads_per_block\": true}", "threads_per_block", "[x, y]");
    expect_error("{\"threads_per_block\": [32]}", "threads_per_block", "[x, y]");
    expect_error("{\"threads_per_block\": [32, 8, 1]}", "threads_per_block", NULL);
    expect_error("{\"threads_per_block\": [32, \"8\"]}", "threads_per_block", NULL);
    expect_error("{\"iterations\": \"4096\"}", "iterations", "expected an integer, got a string");
    expect_error("{\"iterations\": 4096.0}", "iterations", "expected an integer");
    expect_error("{\"max_noise\": \"0.5%\"}", "max_noise", "expected a number");
    expect_error("{\"budget_ms\": [1]}", "budget_ms", "expected a number, got an array");
    expect_error("{\"min_samples\": {}}", "min_samples", "got an object");
    expect_error("{\"max_samples\": false}", "max_samples", "got a boolean");
    expect_error("{\"scenario\": 7}", "scenario", "expected a string");
}

Test(request, out_of_range) {
    expect_error("{\"blocks\": 0}", "blocks", "1..1048576");
    expect_error("{\"blocks\": -1}", "blocks", "1..1048576");
    expect_error("{\"blocks\": 1048577}", "blocks", NULL);
    expect_error("{\"blocks\": 99999999999}", "blocks", NULL);
    expect_error("{\"threads_per_block\": 2048}", "threads_per_block", "1..1024");
    expect_error("{\"threads_per_block\": [64, 32]}", "threads_per_block", "1..1024");
    expect_error("{\"threads_per_block\": [-32, -1]}", "threads_per_block", NULL);
    expect_error("{\"threads_per_block\": 0}", "threads_per_block", NULL);
    expect_error("{\"iterations\": 0}", "iterations", "1..1048576");
    expect_error("{\"iterations\": 2000000}", "iterations", NULL);
    expect_error("{\"max_noise\": 0}", "max_noise", "0.5");
    expect_error("{\"max_noise\": 0.9}", "max_noise", NULL);
    expect_error("{\"budget_ms\": 0.1}", "budget_ms", "1..60000");
    expect_error("{\"budget_ms\": 1e9}", "budget_ms", NULL);
    expect_error("{\"min_samples\": 0}", "min_samples", NULL);
    expect_error("{\"min_samples\": 3000}", "min_samples", "max_samples");
    expect_error("{\"max_samples\": 1000000}", "max_samples", "100000");
    expect_error("{\"scenario\": \"has space\"}", "scenario", NULL);
    /* The reason does not repeat the field. */
    expect_error("{\"iterations\": 0}", "iterations", NULL);
    cr_expect(strncmp(e.reason, "iterations", 10) != 0, "%s", e.reason);
}

Test(request, predicates_count_and_length) {
    expect_error("{\"predicates\": []}", "predicates", "1 to 16");
    char body[4096] = "{\"predicates\": [";
    for (int i = 0; i < 17; i++) {
        char item[40];
        snprintf(item, sizeof item, "%s\"threadIdx.x < %d\"", i ? ", " : "", i + 1);
        strcat(body, item);
    }
    strcat(body, "]}");
    expect_error(body, "predicates", "17 entries");
    char longexpr[300];
    for (int i = 0; i < 257; i++) longexpr[i] = i % 2 ? '+' : '0'; /* 0+0+...+0 */
    longexpr[257] = '\0';
    snprintf(body, sizeof body, "{\"predicates\": [\"lane-parity\", \"%s\"]}", longexpr);
    expect_error(body, "predicates[1]", "longer than 256");
    longexpr[255] = '\0'; /* 255 characters: a valid expression */
    snprintf(body, sizeof body, "{\"predicates\": [\"lane-parity\", \"%s\"]}", longexpr);
    cr_expect_eq(parse(body), 0, "%s: %s", e.field, e.reason);
}

Test(request, duplicate_predicates) {
    expect_error("{\"predicates\": [\"lane-parity\", \"warp-parity\", \"lane-parity\"]}",
                 "predicates[2]", "duplicate of predicates[0]");
}

Test(request, expression_error_has_column_and_caret) {
    expect_error("{\"predicates\": [\"lane-parity\", \"warp-parity\", \"threadIdx.x $ 2\"]}",
                 "predicates[2]", "column 13:");
    cr_expect_eq(e.expr_column, 13);
    cr_expect_str_eq(e.caret, "threadIdx.x $ 2\n            ^");
    cr_expect(strchr(e.reason, '\n') == NULL, "reason is one line: %s", e.reason);
    cr_expect_eq(e.line, 0);
    expect_error("{\"baseline\": \"threadIdx.x <\"}", "baseline", "column 14:");
    cr_expect_eq(e.expr_column, 14);
    cr_expect_str_eq(e.caret, "threadIdx.x <\n             ^");
}

/* A plan's refusal (a predicate that fails for some thread) becomes the
 * same request error: its field, the reason without the field's name in
 * front, and the column and caret copied from the fault's values, whatever
 * the message says. */
Test(request, a_plans_refusal_keeps_the_faults_values) {
    struct dv_fault f = {"predicates[1]", {13, "threadIdx.x / (lane - lane)\n            ^"}};
    request_error_from(&f, "predicates[1]: predicate fails for thread (0, 0) of block 0: column 13: division by zero",
                       &e);
    cr_expect_eq(e.status, 400);
    cr_expect_str_eq(e.field, "predicates[1]");
    cr_expect_str_eq(e.reason, "predicate fails for thread (0, 0) of block 0: column 13: division by zero");
    cr_expect_eq(e.expr_column, 13);
    cr_expect_str_eq(e.caret, "threadIdx.x / (lane - lane)\n            ^");
    /* The values decide, not the text: a message that says a column does
     * not make one. */
    struct dv_fault none = {"blocks", {0, ""}};
    request_error_from(&none, "blocks: column 3: not a column at all", &e);
    cr_expect_str_eq(e.field, "blocks");
    cr_expect_str_eq(e.reason, "column 3: not a column at all");
    cr_expect_eq(e.expr_column, 0);
    cr_expect_str_eq(e.caret, "");
}

Test(request, baseline_is_appended) {
    cr_assert_eq(parse("{\"predicates\": [\"lane-parity\"]}"), 0, "%s", e.reason);
    cr_expect_eq(o.npredicates, 2);
    cr_expect_str_eq(o.predicates[1], "warp-parity");
}

static void round_trip(const char *body) {
    struct dv_options first, second;
    cr_assert_eq(parse(body), 0, "%s: %s: %s", body, e.field, e.reason);
    first = o;
    char *dump = request_dump(&first);
    cr_assert_not_null(dump);
    cr_assert_eq(request_parse(dump, strlen(dump), &second, &e), 0, "%s: %s: %s", dump, e.field, e.reason);
    /* The dump names every field that applies, so `given` grows; what does
     * not apply and was named stays named (its warning comes back). */
    cr_expect_eq(experiment_unused(&first), experiment_unused(&second), "%s", dump);
    cr_expect_eq(second.given & first.given, first.given, "%s", dump);
    second.given = first.given;
    cr_expect_eq(memcmp(&first, &second, sizeof first), 0, "round trip changed %s", dump);
    char *again = request_dump(&second);
    cr_assert_not_null(again);
    cr_expect_str_eq(dump, again);
    free(dump);
    free(again);
}

Test(request, witness_and_counters_switches) {
    cr_assert_eq(parse("{}"), 0);
    cr_expect_eq(o.no_witness, 0);
    cr_expect_eq(o.no_counters, 0);
    cr_assert_eq(parse("{\"witness\": false, \"counters\": false}"), 0, "%s", e.reason);
    cr_expect_eq(o.no_witness, 1);
    cr_expect_eq(o.no_counters, 1);
    cr_assert_eq(parse("{\"witness\": true, \"counters\": true}"), 0, "%s", e.reason);
    cr_expect_eq(o.no_witness + o.no_counters, 0);
    expect_error("{\"counters\": \"off\"}", "counters", "expected true or false, got a string");
    expect_error("{\"witness\": 0}", "witness", "expected true or false");
    round_trip("{\"witness\": false, \"counters\": false}");
}

Test(request, dump_round_trips) {
    round_trip("{}");
    round_trip("{\"part\": 2, \"blocks\": \"auto\", \"max_noise\": 0.0123456789012345678}");
    round_trip("{\"max_halfwidth\": 0.0025}");
    round_trip("{\"part\": 1, \"predicates\": [\"first-16\", \"(threadIdx.y & 1) == 0\"],"
               " \"threads_per_block\": [16, 16], \"budget_ms\": 12.5, \"scenario\": \"all\"}");
}

Test(request, dump_is_readable) {
    struct dv_options d;
    experiment_defaults(&d);
    char *dump = request_dump(&d);
    cr_assert_not_null(dump);
    cr_expect_str_eq(dump,
                     "{\"part\":\"all\",\"predicates\":[\"lane-parity\",\"lane-half\","
                     "\"warp-parity\",\"block-parity\"],\"baseline\":\"warp-parity\","
                     "\"blocks\":4096,\"threads_per_block\":256,\"iterations\":4096,"
                     "\"max_halfwidth\":0.005,\"budget_ms\":2000.0,\"min_samples\":10,"
                     "\"max_samples\":2000}");
    free(dump);
}

/* max_halfwidth is the target's name; max_noise, its old one, means the same,
 * an error names the field as the body spelled it, and a body may not give
 * both. */
Test(request, max_noise_is_the_old_name_of_max_halfwidth) {
    cr_assert_eq(parse("{\"max_halfwidth\": 0.002}"), 0, "%s", e.reason);
    cr_expect_float_eq(o.max_noise, 0.002, 1e-15);
    cr_assert_eq(parse("{\"max_noise\": 0.003}"), 0, "%s", e.reason);
    cr_expect_float_eq(o.max_noise, 0.003, 1e-15);
    expect_error("{\"max_halfwidth\": 0.9}", "max_halfwidth", "at most 0.5");
    expect_error("{\"max_noise\": 0.9}", "max_noise", "at most 0.5");
    expect_error("{\"max_halfwidth\": \"1%\"}", "max_halfwidth", "expected a number");
    expect_error("{\"max_noise\": 0.01, \"max_halfwidth\": 0.01}", "max_noise", "give one of the two");
}

Test(request, instructions_switch_and_its_cost_cap) {
    cr_assert_eq(parse("{}"), 0);
    cr_expect_eq(o.instructions, 0, "off unless asked for");
    cr_assert_eq(parse("{\"instructions\": true}"), 0, "%s", e.reason);
    cr_expect_eq(o.instructions, 1);
    round_trip("{\"instructions\": true}");
    cr_assert_eq(parse("{\"instructions\": false}"), 0, "%s", e.reason);
    cr_expect_eq(o.instructions, 0);
    expect_error("{\"instructions\": \"yes\"}", "instructions", "expected true or false, got a string");
    /* A blockIdx.x predicate is profiled on its whole grid: the lesson's
     * grid fits, the largest does not. */
    cr_assert_eq(parse("{\"instructions\": true, \"predicates\": [\"lane-parity\", \"blockIdx.x < 7\"]}"), 0, "%s",
                 e.reason);
    expect_error("{\"instructions\": true, \"blocks\": 65536, \"predicates\": [\"lane-parity\", \"blockIdx.x < 7\"]}",
                 "instructions", "the profile of predicates[1] (\"blockIdx.x < 7\") would run 6.87e+10 thread-iterations");
    cr_expect(strstr(e.reason, "1.6e+10") != NULL, "%s", e.reason);
    /* The same grid is fine without instructions, and for a predicate that
     * does not read blockIdx.x (one block is profiled). */
    cr_assert_eq(parse("{\"blocks\": 65536, \"predicates\": [\"lane-parity\", \"blockIdx.x < 7\"]}"), 0, "%s", e.reason);
    cr_assert_eq(parse("{\"instructions\": true, \"blocks\": 65536, \"predicates\": [\"threadIdx.x < 7\"]}"), 0, "%s",
                 e.reason);
    expect_error("{\"instructions\": true, \"blocks\": \"auto\", \"predicates\": [\"blockIdx.x & 3\"]}", "instructions",
                 "auto is costed at its upper bound");
}

/* request_parse_json() of an object the caller parsed: the same options and
 * the same refusals as request_parse() of its text, for bodies that pass and
 * bodies each refused for a different reason; the object stays the
 * caller's. */
Test(request, a_parsed_object_reads_as_its_text) {
    static const char *const bodies[] = {
        "{}",
        "{\"part\": 1, \"predicates\": [\"lane-parity\", \"threadIdx.x < 5\"], \"baseline\": \"lane-parity\"}",
        "{\"threads_per_block\": [32, 8], \"blocks\": \"auto\", \"max_noise\": 0.01, \"witness\": false}",
        "{\"scenario\": \"C7\", \"part\": 1}",
        "{\"bogus\": 1}",
        "{\"part\": \"three\"}",
        "{\"blocks\": 99999999}",
        "{\"max_noise\": 0.01, \"max_halfwidth\": 0.01}",
        "{\"part\": 1, \"predicates\": [\"threadIdx.x <\"]}",
        "[1, 2]",
    };
    for (size_t i = 0; i < sizeof bodies / sizeof bodies[0]; i++) {
        struct dv_options a, b;
        struct request_error ea, eb;
        const int ra = request_parse(bodies[i], strlen(bodies[i]), &a, &ea);
        json_error_t je;
        json_t *root = json_loadb(bodies[i], strlen(bodies[i]), JSON_REJECT_DUPLICATES, &je);
        cr_assert_not_null(root, "%s", bodies[i]);
        const int rb = request_parse_json(root, &b, &eb);
        cr_expect_eq(root->refcount, 1, "%s: the object is the caller's", bodies[i]);
        json_decref(root);
        cr_expect_eq(ra, rb, "%s", bodies[i]);
        cr_expect_eq(memcmp(&a, &b, sizeof a), 0, "%s: the same options", bodies[i]);
        cr_expect_eq(memcmp(&ea, &eb, sizeof ea), 0, "%s: the same error (%s / %s)", bodies[i], ea.reason,
                     eb.reason);
        if (i >= 4) cr_expect_eq(rb, -1, "%s is refused", bodies[i]);
        else cr_expect_eq(rb, 0, "%s: %s", bodies[i], eb.reason);
    }
}

/* The JSON API takes the block shape in every spelling the CLI and the
 * widget's permalinks use: "32x8" as [32, 8], "256" as 256; the same
 * shape whichever way it is written, through the one parser
 * (options_parse_block). */
Test(request, threads_per_block_in_the_clis_spelling_too) {
    static const char *const same[] = {"{\"threads_per_block\": [32, 8]}", "{\"threads_per_block\": \"32x8\"}"};
    for (size_t i = 0; i < 2; i++) {
        cr_assert_eq(parse(same[i]), 0, "%s: %s: %s", same[i], e.field, e.reason);
        cr_expect_eq(o.block_x, 32, "%s", same[i]);
        cr_expect_eq(o.block_y, 8, "%s", same[i]);
    }
    cr_assert_eq(parse("{\"threads_per_block\": \"256\"}"), 0, "%s", e.reason);
    cr_expect_eq(o.block_x, 256);
    cr_expect_eq(o.block_y, 1);
    struct dv_options cli;
    experiment_defaults(&cli);
    char err[ERR_LEN];
    cr_assert_eq(options_set_cli(&cli, "--threads-per-block", "32x8", err), 0, "%s", err);
    cr_assert_eq(parse("{\"threads_per_block\": \"32x8\"}"), 0);
    cr_expect_eq(cli.block_x, o.block_x);
    cr_expect_eq(cli.block_y, o.block_y);
    expect_error("{\"threads_per_block\": \"64x32\"}", "threads_per_block", "1..1024");
}

/* The plan's warnings of `in` after options_validate() in `style`, one per
 * line, into `out`; -1 when validation or the plan refuses it. */
static int validated_warnings(struct dv_options *in, enum options_style style, char *out, size_t len) {
    char err[ERR_LEN];
    out[0] = '\0';
    if (options_validate(in, style, NULL, err) != 0) {
        snprintf(out, len, "refused: %s", err);
        return -1;
    }
    struct dv_report *r = experiment_report_create();
    cr_assert_not_null(r);
    int rc = plan_report(in, r, NULL, err);
    size_t used = 0;
    for (unsigned i = 0; rc == 0 && i < r->nwarnings && used < len; i++)
        used += (size_t)snprintf(out + used, len - used, "%s\n", r->warnings[i]);
    experiment_report_free(r);
    return rc;
}

/* A field the request's tables do not read (predicates or baseline with
 * Part 2, whose rows are fixed; part, predicates or baseline beside a
 * scenario) is answered alike whichever way it came in: the JSON body and
 * the CLI's options both pass validation and plan with the same warning
 * naming the field (api/openapi.yaml, POST /analyze); neither is refused. */
Test(request, fields_that_do_not_apply_are_warned_alike_by_the_api_and_the_cli) {
    static const struct {
        const char *body, *opt[2][2], *warning;
    } cases[] = {
        {"{\"part\": 2, \"predicates\": [\"threadIdx.x % 48 < 24\"]}",
         {{"--part", "2"}, {"--predicates", "threadIdx.x % 48 < 24"}},
         "predicates: not used: Part 2's rows are fixed"},
        {"{\"part\": 2, \"baseline\": \"lane-parity\"}", {{"--part", "2"}, {"--baseline", "lane-parity"}},
         "baseline: not used: Part 2's rows are fixed"},
        {"{\"scenario\": \"C1\", \"part\": 1}", {{"--scenario", "C1"}, {"--part", "1"}},
         "part: not used: a scenario request runs the scenario tables"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        static char api[2048], cli_text[2048];
        char err[ERR_LEN];
        cr_assert_eq(parse(cases[i].body), 0, "%s: %s: %s", cases[i].body, e.field, e.reason);
        cr_expect_eq(validated_warnings(&o, OPTIONS_JSON, api, sizeof api), 0, "%s: %s", cases[i].body, api);
        struct dv_options cli;
        experiment_defaults(&cli);
        for (size_t j = 0; j < 2; j++)
            cr_assert_eq(options_set_cli(&cli, cases[i].opt[j][0], cases[i].opt[j][1], err), 0, "%s", err);
        cr_expect_eq(validated_warnings(&cli, OPTIONS_CLI, cli_text, sizeof cli_text), 0, "%s: %s",
                     cases[i].body, cli_text);
        cr_expect(strstr(api, cases[i].warning), "%s: the API's warnings lack \"%s\": %s", cases[i].body,
                  cases[i].warning, api);
        cr_expect_str_eq(cli_text, api, "%s: the CLI's warnings differ from the API's", cases[i].body);
    }
}

/* ---- arithmetic intensity ---- */
/* POST /measure names the experiment's tables as the CLI does; a name no
 * table has is refused with the field and the names it could have been. */
Test(request, the_arithmetic_intensity_tables_are_named_in_a_request) {
    static const char *const ok[] = {"arithmetic-intensity", "arithmetic-intensity-full", "intensity-stream",
                                     "intensity-chase", "intensity-stream-fine", "X5"};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        char body[128];
        snprintf(body, sizeof body, "{\"scenario\": \"%s\"}", ok[i]);
        cr_expect_eq(parse(body), 0, "%s: %s: %s", ok[i], e.field, e.reason);
        cr_expect_str_eq(o.scenario, ok[i]);
    }
    expect_error("{\"scenario\": \"arithmetic-intensity-half\"}", "scenario", "arithmetic-intensity");
}
/* ---- end arithmetic intensity ---- */
