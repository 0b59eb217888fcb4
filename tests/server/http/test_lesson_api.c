/* test_lesson_api.c -- the lesson page's and an author's API as they meet
 * it, through the real server and the fake GPU worker: every request
 * GET /suites lists is accepted by POST /analyze and POST /measure (the
 * scenarios suite too); the cost rule names the field that is over; fields
 * that do not apply are warned in the document; GET /predicates serves
 * labels that are their predicates, with hints; an evaluation error
 * carries its column and caret; Part 2 comes read both ways; the evidence's chart and tables (.svg, .md, .csv) are served with
 * the evidence routes' caching and the same bytes every time.
 */
#define _DEFAULT_SOURCE
#include <criterion/criterion.h>
#include <string.h>

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>

#include "server/evidence/suites.h"
#include "tests/support/evidence_fixture.h"
#include "tests/support/helper_http.h"

static struct helper_server srv;
static char *dir;

static void start_with(const char *analysis_cost) {
    dir = fixture_tmpdir();
    cr_assert_not_null(dir);
    const char *args[] = {"--evidence-dir", dir, "--rate-limit", "0", "--queue", "16", "--max-analysis-cost",
                          analysis_cost,    NULL};
    cr_assert_eq(helper_server_start(&srv, args, NULL), 0);
    cr_assert_eq(helper_server_wait_ready(&srv, 200, 10000), 0, "the server did not get ready");
}

static void start(void) { start_with("33554432"); }

static void stop(void) {
    helper_server_stop(&srv, 10000);
    fixture_rmrf(dir);
    free(dir);
}

static json_t *call(const char *method, const char *path, const char *body, int want) {
    struct helper_response r;
    cr_assert_eq(helper_request(srv.port, method, path, NULL, body, body ? strlen(body) : 0, &r), 0, "%s %s", method,
                 path);
    cr_assert_eq(r.status, want, "%s %s %s: %d %s", method, path, body ? body : "", r.status, r.body);
    json_t *j = helper_json(&r);
    helper_response_free(&r);
    return j;
}

static int has_warning(const json_t *doc, const char *text) {
    size_t i;
    json_t *w;
    json_array_foreach(json_object_get(doc, "warnings"), i, w) if (strstr(json_string_value(w), text)) return 1;
    return 0;
}

/* Each suite's request exactly as GET /suites lists it: /analyze answers
 * its tables, /measure queues it and the fake worker's job finishes. */
Test(lesson_api, every_request_suites_lists_passes_analyze_and_measure, .init = start, .fini = stop, .timeout = 60) {
    json_t *list = call("GET", "/suites", NULL, 200);
    json_t *suites = json_object_get(list, "suites");
    cr_assert_eq(json_array_size(suites), suites_count());
    size_t i, k;
    json_t *s, *req;
    unsigned walked = 0;
    json_array_foreach(suites, i, s) {
        const char *name = json_string_value(json_object_get(s, "name"));
        json_array_foreach(json_object_get(s, "requests"), k, req) {
            char *body = json_dumps(req, JSON_COMPACT);
            json_t *doc = call("POST", "/analyze", body, 200);
            cr_expect_gt(json_array_size(json_object_get(doc, "tables")), 0, "%s: no tables", name);
            cr_expect_eq(json_array_size(json_object_get(doc, "warnings")), 0, "%s: the suite's own request warns: %s",
                         name, json_dumps(json_object_get(doc, "warnings"), 0));
            json_decref(doc);
            json_t *job = call("POST", "/measure", body, 202);
            const char *id = json_string_value(json_object_get(job, "id"));
            cr_assert_not_null(id, "%s", name);
            json_t *done = helper_wait_job(srv.port, id, 30000);
            cr_assert_not_null(done, "%s: job %s", name, id);
            cr_expect_str_eq(json_string_value(json_object_get(done, "state")), "done", "%s", name);
            json_decref(done);
            json_decref(job);
            free(body);
            walked++;
        }
    }
    cr_expect_eq(walked, suites_count());
    /* The names a scenario request takes are listed beside the suites. */
    json_t *names = json_object_get(list, "scenarios");
    cr_expect_gt(json_array_size(names), 9);
    cr_expect_str_eq(json_string_value(json_object_get(json_array_get(names, 0), "name")), "even-2way");
    cr_expect_str_eq(json_string_value(json_object_get(json_array_get(names, 0), "cell")), "C1");
    json_decref(list);
}

/* The OpenAPI document's own `scenarios` example, and a worked-case id. */
Test(lesson_api, scenario_requests_are_accepted_with_their_names, .init = start, .fini = stop, .timeout = 60) {
    json_t *doc = call("POST", "/analyze", "{\"scenario\": \"all\", \"budget_ms\": 1000}", 200);
    cr_expect_eq(json_array_size(json_object_get(doc, "tables")), 11, "scenario tables instead of Part 1 and 2");
    json_decref(doc);
    doc = call("POST", "/analyze", "{\"scenario\": \"C7\"}", 200);
    cr_expect_eq(json_array_size(json_object_get(doc, "tables")), 2, "C7 names two scenarios");
    json_decref(doc);
    json_t *e = call("POST", "/analyze", "{\"scenario\": \"C42\"}", 400);
    json_t *err = json_object_get(e, "error");
    cr_expect_str_eq(json_string_value(json_object_get(err, "field")), "scenario");
    cr_expect(strstr(json_string_value(json_object_get(err, "reason")), "even-2way (C1)"), "the error lists the names");
    json_decref(e);
}

/* Over the analysis cap, the 400 names the field the cost comes from. */
Test(lesson_api, over_the_analysis_cap_names_the_field, .init = NULL, .fini = stop, .timeout = 30) {
    start_with("1000000");
    json_t *e = call("POST", "/analyze", "{\"scenario\": \"all\"}", 400);
    cr_expect_str_eq(json_string_value(json_object_get(json_object_get(e, "error"), "field")), "scenario");
    json_decref(e);
    e = call("POST", "/analyze", "{\"part\": 1, \"predicates\": [\"lane-parity\", \"blockIdx.x % 3 == 0\"]}", 400);
    cr_expect_str_eq(json_string_value(json_object_get(json_object_get(e, "error"), "field")), "predicates[1]");
    cr_expect_gt(json_number_value(json_object_get(json_object_get(e, "error"), "analysis_cost")), 1e6);
    json_decref(e);
    /* The same requests through /measure get the same answer. */
    e = call("POST", "/measure", "{\"scenario\": \"all\", \"budget_ms\": 1000}", 400);
    cr_expect_str_eq(json_string_value(json_object_get(json_object_get(e, "error"), "field")), "scenario");
    json_decref(e);
}

/* What a browser sends that does not apply is answered, with a warning
 * naming it in the document, not dropped in silence. */
Test(lesson_api, fields_that_do_not_apply_are_warned_in_the_document, .init = start, .fini = stop, .timeout = 30) {
    json_t *doc = call("POST", "/analyze", "{\"part\": 2, \"predicates\": [\"threadIdx.x % 48 < 24\"]}", 200);
    cr_expect(has_warning(doc, "predicates: not used"), "%s", json_dumps(json_object_get(doc, "warnings"), 0));
    json_decref(doc);
    doc = call("POST", "/analyze", "{\"scenario\": \"C1\", \"part\": 1}", 200);
    cr_expect(has_warning(doc, "part: not used"), "%s", json_dumps(json_object_get(doc, "warnings"), 0));
    json_decref(doc);
    /* /analyze takes /measure's body: the measurement's own fields are part
     * of it (a suite's request carries them), not fields that do not apply. */
    doc = call("POST", "/analyze", "{\"part\": 1, \"budget_ms\": 500}", 200);
    cr_expect_eq(json_array_size(json_object_get(doc, "warnings")), 0);
    json_decref(doc);
    /* Through /measure the worker's document carries the same warning. */
    json_t *job = call("POST", "/measure", "{\"part\": 2, \"baseline\": \"lane-parity\"}", 202);
    json_t *done = helper_wait_job(srv.port, json_string_value(json_object_get(job, "id")), 20000);
    cr_assert_not_null(done);
    cr_expect(has_warning(json_object_get(done, "document"), "baseline: not used"), "%s",
              json_dumps(json_object_get(json_object_get(done, "document"), "warnings"), 0));
    json_decref(done);
    json_decref(job);
}

/* GET /predicates: each built-in's label is its expression, and the
 * expression analysed as a custom predicate is the built-in's row. */
Test(lesson_api, predicate_labels_are_their_predicates, .init = start, .fini = stop, .timeout = 30) {
    json_t *p = call("GET", "/predicates", NULL, 200);
    cr_expect(strstr(json_string_value(json_object_get(p, "rule")), "nonzero"));
    size_t i;
    json_t *b;
    json_array_foreach(json_object_get(p, "predicates"), i, b) {
        const char *name = json_string_value(json_object_get(b, "name"));
        const char *label = json_string_value(json_object_get(b, "label"));
        cr_expect_str_eq(label, json_string_value(json_object_get(b, "expr")), "%s", name);
        cr_expect_gt(strlen(json_string_value(json_object_get(b, "hint"))), 10, "%s has a hint", name);
        if (strcmp(name, "always-a") == 0) continue;
        /* In a 32x8 block too: the label typed in gives the built-in's row. */
        for (int shape = 0; shape < 2; shape++) {
            char body[600];
            snprintf(body, sizeof body,
                     "{\"part\": 1, \"predicates\": [\"%s\", \"%s\"], \"baseline\": \"%s\", \"threads_per_block\": %s}",
                     name, label, name, shape ? "[32, 8]" : "256");
            json_t *doc = call("POST", "/analyze", body, 200);
            json_t *rows = json_object_get(json_array_get(json_object_get(doc, "tables"), 0), "rows");
            json_t *a = json_array_get(rows, 0), *c = json_array_get(rows, 1);
            cr_expect_str_eq(json_string_value(json_object_get(c, "label")), label);
            const char *keys[] = {"warps_split", "threads_on_a", "path_runs"};
            for (int k = 0; k < 3; k++)
                cr_expect(json_equal(json_object_get(a, keys[k]), json_object_get(c, keys[k])), "%s %s: %s", name,
                          keys[k], shape ? "32x8" : "256");
            json_decref(doc);
        }
    }
    json_decref(p);
}

/* A predicate that parses but fails for some thread: both routes answer
 * the same 400 with the column and the caret as members of the error, as a
 * parse error has them; on the HTTP thread (a blockIdx.x-free predicate, one
 * block) and on the analysis pool (one that reads blockIdx.x, every block). */
Test(lesson_api, an_evaluation_error_carries_its_column_and_caret, .init = start, .fini = stop, .timeout = 30) {
    static const struct {
        const char *expr;
        int column;
        const char *caret, *thread;
    } cases[] = {
        {"threadIdx.x / (lane - lane)", 13, "threadIdx.x / (lane - lane)\n            ^", "thread (0, 0) of block 0"},
        {"1 % (blockIdx.x - 3)", 3, "1 % (blockIdx.x - 3)\n  ^", "thread (0, 0) of block 3"},
    };
    const char *routes[] = {"/analyze", "/measure"};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (size_t k = 0; k < 2; k++) {
            char body[256];
            snprintf(body, sizeof body, "{\"part\": 1, \"predicates\": [\"lane-parity\", \"%s\"]}", cases[i].expr);
            json_t *j = call("POST", routes[k], body, 400);
            json_t *e = json_object_get(j, "error");
            const char *reason = json_string_value(json_object_get(e, "reason"));
            cr_expect_str_eq(json_string_value(json_object_get(e, "field")), "predicates[1]", "%s", routes[k]);
            cr_expect(reason && strstr(reason, cases[i].thread), "%s: %s", routes[k], reason);
            cr_expect(reason && !strchr(reason, '\n'), "%s: the reason is one line: %s", routes[k], reason);
            cr_expect_eq(json_integer_value(json_object_get(e, "expr_column")), cases[i].column, "%s %s: %s",
                         routes[k], cases[i].expr, reason);
            cr_expect_str_eq(json_string_value(json_object_get(e, "caret")) ?: "(none)", cases[i].caret, "%s %s",
                             routes[k], cases[i].expr);
            json_decref(j);
        }
}

/* A 32x8 block: warp parity's threadIdx.x / 32 is 0 for every thread, so
 * the table says so and names the warp-level analogue, which compares. */
Test(lesson_api, an_empty_baseline_path_is_said_with_its_analogue, .init = start, .fini = stop, .timeout = 30) {
    json_t *doc = call("POST", "/analyze", "{\"part\": 1, \"threads_per_block\": [32, 8]}", 200);
    json_t *t = json_array_get(json_object_get(doc, "tables"), 0);
    cr_expect(strstr(json_string_value(json_object_get(t, "note")), "every thread of this 32x8 block on path A"), "%s",
              json_string_value(json_object_get(t, "note")));
    const char *sugg = json_string_value(json_object_get(t, "suggested_baseline"));
    cr_assert_str_eq(sugg, "(warp & 1) == 0");
    char body[256];
    snprintf(body, sizeof body,
             "{\"part\": 1, \"threads_per_block\": [32, 8], \"predicates\": [\"lane-parity\", \"%s\"], \"baseline\": "
             "\"%s\"}",
             sugg, sugg);
    json_t *doc2 = call("POST", "/analyze", body, 200);
    json_t *t2 = json_array_get(json_object_get(doc2, "tables"), 0);
    cr_expect(json_is_true(json_object_get(json_array_get(json_object_get(t2, "rows"), 0), "comparable")),
              "lane parity compares with the analogue");
    cr_expect_null(json_object_get(t2, "note"));
    json_decref(doc2);
    json_decref(doc);
}

/* Part 2 in the document: the two readings, their rows by name, the
 * model's ratios, no measured figure in an analysis. */
Test(lesson_api, part2_is_read_both_ways, .init = start, .fini = stop, .timeout = 30) {
    json_t *doc = call("POST", "/analyze", "{\"part\": 2}", 200);
    json_t *rd = json_object_get(json_array_get(json_object_get(doc, "tables"), 0), "readings");
    cr_assert_eq(json_array_size(rd), 2);
    json_t *split = json_array_get(rd, 0), *question = json_array_get(rd, 1);
    cr_expect_str_eq(json_string_value(json_object_get(split, "kind")), "split");
    cr_expect_str_eq(json_string_value(json_object_get(split, "row")), "per-iteration-lane-parity");
    cr_expect_str_eq(json_string_value(json_object_get(split, "against")), "per-iteration-warp-parity");
    cr_expect(json_is_null(json_object_get(split, "ratio")));
    cr_expect_float_eq(json_number_value(json_object_get(split, "predicted")), 2.0, 1e-12);
    cr_expect_str_eq(json_string_value(json_object_get(question, "kind")), "question");
    cr_expect_str_eq(json_string_value(json_object_get(question, "against")), "no-branch");
    cr_expect(strstr(json_string_value(json_object_get(question, "sentence")), "asking a question in a loop"));
    json_decref(doc);
}

/* The chart and the tables of an evidence record: content types, the
 * evidence routes' validators (a 304 on the ETag), the same bytes twice. */
Test(lesson_api, evidence_forms_are_served_with_validators, .init = start, .fini = stop, .timeout = 30) {
    /* A refresh through the fake worker files every suite for its GPU. */
    struct helper_response rr;
    cr_assert_eq(helper_request(srv.port, "POST", "/evidence/refresh", NULL, "", 0, &rr), 0);
    cr_assert_eq(rr.status, 202, "%s", rr.body);
    helper_response_free(&rr);
    for (int i = 0; i < 200; i++) {
        struct helper_response x;
        helper_request(srv.port, "GET", "/evidence/latest/scenarios.json", NULL, NULL, 0, &x);
        int st = x.status;
        helper_response_free(&x);
        if (st == 200) break;
        helper_sleep_ms(100);
    }
    const struct {
        const char *path, *type;
    } forms[] = {{"/evidence/latest/day22-part2.svg", "image/svg+xml"},
                 {"/evidence/latest/scenarios.svg", "image/svg+xml"},
                 {"/evidence/latest/day22-part1.md", "text/markdown"},
                 {"/evidence/latest/scenarios.csv", "text/csv"}};
    for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
        struct helper_response a, b, c;
        char type[128], etag[64], hdr[128];
        cr_assert_eq(helper_request(srv.port, "GET", forms[i].path, NULL, NULL, 0, &a), 0);
        cr_assert_eq(a.status, 200, "%s: %d %s", forms[i].path, a.status, a.body);
        cr_expect(helper_header(&a, "Content-Type", type, sizeof type) &&
                      strncmp(type, forms[i].type, strlen(forms[i].type)) == 0,
                  "%s: %s", forms[i].path, type);
        cr_assert_not_null(helper_header(&a, "ETag", etag, sizeof etag));
        cr_assert_eq(helper_request(srv.port, "GET", forms[i].path, NULL, NULL, 0, &b), 0);
        cr_expect(a.len == b.len && memcmp(a.body, b.body, a.len) == 0, "%s: two reads differ", forms[i].path);
        snprintf(hdr, sizeof hdr, "If-None-Match: %s\r\n", etag);
        cr_assert_eq(helper_request(srv.port, "GET", forms[i].path, hdr, NULL, 0, &c), 0);
        cr_expect_eq(c.status, 304, "%s with its ETag", forms[i].path);
        if (strstr(forms[i].type, "svg")) {
            cr_expect_lt(a.len, 20000, "%s is %zu bytes", forms[i].path, a.len);
            cr_expect_null(strstr(a.body, "<script"), "no script");
        }
        helper_response_free(&a);
        helper_response_free(&b);
        helper_response_free(&c);
    }
}
