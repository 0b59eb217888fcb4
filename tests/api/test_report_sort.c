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
#include "kernels/model/listing/listing.h"
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

/* A profiled data-sort row's `instructions` (its material paths path_0 and
 * path_3, as the shade's regions name them) written with the document and
 * read back the same; its cell's unprofiled rows stay null. */
Test(report_sort, a_sort_rows_instructions_round_trip) {
    static const char *profile =
        "{\"source\": \"cupti-sass\", \"kernel\": "
        "\"_Z17sort_shade_kernelILi0ELb0EEv15sort_shade_argsjP13sort_warp_rec\", "
        "\"scale\": 1, \"regions\": ["
        "{\"kind\": \"path_0\", \"instructions\": 16, \"warp_executions\": 64, \"thread_executions\": 1088, "
        "\"pred_on_thread_executions\": 1088, \"lanes_per_execution\": 17}, "
        "{\"kind\": \"path_3\", \"instructions\": 16, \"warp_executions\": 48, \"thread_executions\": 240, "
        "\"pred_on_thread_executions\": 240, \"lanes_per_execution\": 5}], "
        "\"runs\": [{\"pc\": 256, \"count\": 16, \"opcode\": \"FFMA\", \"file\": \"kernels/gpu/sort_kernels.cu\", "
        "\"line\": 81, \"region\": \"path_0\", \"warp_executions\": 4, \"thread_executions\": 68, "
        "\"pred_on_thread_executions\": 68, \"lanes\": 17}, "
        "{\"pc\": 512, \"count\": 16, \"opcode\": \"FFMA\", \"file\": \"kernels/gpu/sort_kernels.cu\", "
        "\"line\": 84, \"region\": \"path_3\", \"warp_executions\": 3, \"thread_executions\": 15, "
        "\"pred_on_thread_executions\": 15, \"lanes\": 5}]}";
    struct dv_options o;
    struct request_error e;
    cr_assert_eq(parse("{\"scenario\": \"data-sort\", \"blocks\": 8, \"instructions\": true}", &o, &e), 0, "%s",
                 e.reason);
    struct dv_report *r = experiment_report_create(), *back = experiment_report_create();
    char err[ERR_LEN] = "";
    cr_assert(r && back);
    cr_assert_eq(plan_report(&o, r, NULL, err), 0, "%s", err);
    r->measured = 1;
    for (unsigned t = 0; t < r->ntables; t++)
        for (unsigned j = 0; j < r->tables[t].nrows; j++) r->tables[t].rows[j].measured = 1;
    json_error_t je;
    json_t *pj = json_loads(profile, 0, &je);
    cr_assert_not_null(pj, "%s", je.text);
    struct dv_row *naive = &r->tables[2].rows[SORTEXP_ROW_NAIVE];
    cr_assert_eq(report_instructions_parse(pj, &naive->instructions, err), 0, "%s", err);
    json_decref(pj);
    char *a = report_json(r, 0);
    cr_assert_not_null(a);
    cr_assert_eq(report_parse(a, strlen(a), back, err), 0, "%s", err);
    const struct listing *l = back->tables[2].rows[SORTEXP_ROW_NAIVE].instructions;
    cr_assert_not_null(l, "the naive row's profile was read back");
    cr_expect_str_eq(back->tables[2].id, r->tables[2].id);
    cr_assert_eq(l->nregions, 2);
    cr_expect_eq(l->regions[0].kind, LISTING_PATH_0);
    cr_expect_eq(l->regions[1].kind, LISTING_PATH_0 + 3);
    cr_expect_float_eq(l->regions[1].lanes, 5.0, 1e-12);
    cr_expect_str_eq(l->runs[1].file, "kernels/gpu/sort_kernels.cu");
    cr_expect_null(back->tables[2].rows[SORTEXP_ROW_SORT_SHADE].instructions);
    cr_expect_null(back->tables[2].rows[SORTEXP_ROW_SORT].instructions);
    char *b = report_json(back, 0);
    cr_assert_not_null(b);
    cr_expect_str_eq(a, b);
    free(a);
    free(b);
    experiment_report_free(r);
    experiment_report_free(back);
}
