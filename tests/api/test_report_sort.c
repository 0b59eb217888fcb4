/* test_report_sort.c -- the data-sort experiment at the wire: requests
 * that name it (and the errors that name their field), its document part
 * written and read back, and a bad "sort" object refused with the field
 * named. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "api/report.h"
#include "api/report_sort.h"
#include "api/request.h"
#include "kernels/model/model/plan.h"
#include "kernels/model/model/sortexp.h"

static int parse(const char *body, struct dv_options *o, struct request_error *e) {
    memset(e, 0, sizeof *e);
    return request_parse(body, strlen(body), o, e);
}

Test(report_sort, requests_name_the_grids_and_errors_name_their_field) {
    struct dv_options o;
    struct request_error e;
    cr_expect_eq(parse("{\"scenario\": \"data-sort\"}", &o, &e), 0, "%s: %s", e.field, e.reason);
    cr_expect_eq(parse("{\"scenario\": \"data-sort-presorted\", \"budget_ms\": 500}", &o, &e), 0, "%s", e.reason);
    cr_expect_eq(parse("{\"scenario\": \"data-sort-gauss\"}", &o, &e), -1);
    cr_expect_str_eq(e.field, "scenario");
    cr_expect(strstr(e.reason, "data-sort") != NULL, "the known names are listed: %s", e.reason);
    cr_expect_eq(parse("{\"scenario\": \"data-sort\", \"instructions\": true}", &o, &e), 0, "%s", e.reason);
    cr_expect(o.instructions);
    cr_expect_eq(parse("{\"scenario\": \"data-sort-zipf\", \"instructions\": true, \"blocks\": 262144}", &o, &e), -1);
    cr_expect_str_eq(e.field, "instructions");
}

/* The analysis of a data-sort request writes `sort` and reads it back the same. */
Test(report_sort, analysis_document_round_trips) {
    struct dv_options o;
    struct request_error e;
    cr_assert_eq(parse("{\"scenario\": \"data-sort\", \"blocks\": 8}", &o, &e), 0, "%s", e.reason);
    struct dv_report *r = experiment_report_create(), *back = experiment_report_create();
    char err[ERR_LEN] = "";
    cr_assert(r && back);
    cr_assert_eq(plan_report(&o, r, NULL, err), 0, "%s", err);
    char *a = report_json(r, 0);
    cr_assert_not_null(a);
    cr_assert_eq(report_parse(a, strlen(a), back, err), 0, "%s", err);
    cr_expect(back->sort.present && back->sort.ncells == 12 && back->sort.ncross == 4);
    cr_expect_str_eq(back->sort.cells[5].distribution, r->sort.cells[5].distribution);
    cr_expect_float_eq(back->sort.cells[5].k_naive, r->sort.cells[5].k_naive, 1e-12);
    cr_expect(!back->sort.cells[0].naive.present, "an analysis has no witness: null");
    char *b = report_json(back, 0);
    cr_assert_not_null(b);
    cr_expect_str_eq(a, b);
    free(a);
    free(b);
    experiment_report_free(r);
    experiment_report_free(back);
}

static void refused(const char *text, const char *field) {
    json_error_t je;
    json_t *o = json_loads(text, 0, &je);
    cr_assert_not_null(o, "%s", je.text);
    struct dv_sort s;
    char err[ERR_LEN] = "";
    cr_expect_eq(report_sort_parse(o, &s, err), -1, "%s was read", text);
    cr_expect(strstr(err, field) != NULL, "'%s' does not name %s", err, field);
    json_decref(o);
}

Test(report_sort, a_bad_sort_object_is_refused_naming_the_field) {
    refused("[]", "sort");
    refused("{\"cells\": 3, \"crossover\": [], \"sentence\": \"\"}", "sort.cells");
    refused("{\"cells\": [{\"distribution\": \"uniform\", \"m\": \"four\"}], \"crossover\": [], \"sentence\": \"\"}",
            "sort.cells[0].m");
    refused("{\"cells\": [], \"crossover\": [{\"distribution\": 7}], \"sentence\": \"\"}",
            "sort.crossover[0].distribution");
    refused("{\"cells\": [], \"crossover\": [], \"sentence\": 1}", "sort.sentence");
}
