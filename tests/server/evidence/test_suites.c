/* test_suites.c -- the suites table: names, requests, the GET /suites body. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/model/model/experiment.h"
#include "api/request.h"
#include "kernels/model/model/scenario.h"
#include "kernels/model/model/scenario_table.h"
#include "kernels/model/model/plan.h"
#include "server/evidence/suites.h"
#include "tests/support/failing_alloc.h"

static const struct suite *must_find(const char *name) {
    const struct suite *s = suites_find(name);
    cr_assert_not_null(s, "suite %s is missing", name);
    return s;
}

static void plan(const struct suite *s, struct dv_options *o, struct dv_report *r) {
    char err[ERR_LEN] = "";
    cr_assert_eq(suites_options(s, o, err), 0, "%s: %s", s->name, err);
    cr_assert_eq(plan_report(o, r, NULL, err), 0, "%s: %s", s->name, err);
}

Test(suites, day22_part1_is_the_lessons_four_rows) {
    struct dv_options o;
    struct dv_report *r = experiment_report_create();
    plan(must_find("day22-part1"), &o, r);
    cr_assert_eq(o.part, DV_PART_1);
    cr_assert_eq(r->ntables, 1);
    cr_assert_str_eq(r->tables[0].id, "part1");
    cr_assert_eq(r->tables[0].nrows, 4);
    const char *labels[] = {"(threadIdx.x & 1) == 0", "(threadIdx.x & 31) < 16", "(threadIdx.x / 32 & 1) == 0",
                            "(blockIdx.x & 1) == 0"};
    for (int i = 0; i < 4; i++) cr_expect_str_eq(r->tables[0].rows[i].label, labels[i]);
    cr_expect_str_eq(r->tables[0].baseline, "warp-parity");
    experiment_report_free(r);
}

Test(suites, day22_part2_is_the_part2_table) {
    struct dv_options o;
    struct dv_report *r = experiment_report_create();
    plan(must_find("day22-part2"), &o, r);
    cr_assert_eq(o.part, DV_PART_2);
    cr_assert_eq(r->ntables, 1);
    cr_assert_str_eq(r->tables[0].id, "part2");
    cr_assert_eq(r->tables[0].nrows, 3, "no branch, lane parity, warp parity");
    experiment_report_free(r);
}

Test(suites, scenarios_runs_every_scenario_table) {
    struct dv_options o;
    struct dv_report *r = experiment_report_create();
    plan(must_find("scenarios"), &o, r);
    size_t count = 0, n = 0;
    scenario_names(&count);
    for (size_t i = 0; i < count; i++) n += scenario_get(i)->set == SCENARIO_SET_WORKED;
    cr_assert_str_eq(o.scenario, "all");
    cr_assert_eq(r->ntables, n, "%u tables for %zu worked cases", r->ntables, n);
    cr_expect_float_eq(o.budget_ms, 1000.0, 1e-9);
    for (unsigned i = 0; i < r->ntables; i++)
        cr_expect(strncmp(r->tables[i].id, "scenario:", 9) == 0, "%s", r->tables[i].id);
    experiment_report_free(r);
}

Test(suites, day22_exercise_adds_first_16) {
    struct dv_options o;
    struct dv_report *r = experiment_report_create();
    plan(must_find("day22-exercise"), &o, r);
    cr_assert_eq(r->ntables, 1);
    cr_assert_eq(r->tables[0].nrows, 5);
    const struct dv_row *row = &r->tables[0].rows[4];
    cr_expect_str_eq(row->name, "first-16");
    cr_expect_str_eq(row->label, "threadIdx.x < 16");
    /* The lesson: it splits 1 warp of 8 and puts 16 threads on path A. */
    cr_expect_eq(row->warps_split.max, 1);
    cr_expect_eq(row->threads_on_a.max, 16);
    experiment_report_free(r);
}

Test(suites, names_are_unique_url_safe_and_versioned) {
    cr_assert_geq(suites_count(), 3);
    for (size_t i = 0; i < suites_count(); i++) {
        const struct suite *s = suites_get(i);
        cr_assert_not_null(s);
        cr_expect_gt(s->version, 0u, "%s", s->name);
        cr_expect_gt(s->noise_limit, 0.0, "%s", s->name);
        cr_expect_eq(strspn(s->name, "abcdefghijklmnopqrstuvwxyz0123456789-"), strlen(s->name),
                     "%s is not [a-z0-9-]", s->name);
        cr_expect_lt(strlen(s->name), SUITES_NAME_LEN);
        cr_expect_eq(suites_index(s->name), (int)i);
        for (size_t k = 0; k < i; k++) cr_expect_str_neq(s->name, suites_get(k)->name);
    }
    cr_expect_null(suites_get(suites_count()));
    cr_expect_null(suites_find("day22"));
    cr_expect_null(suites_find("../day22-part1"));
    cr_expect_null(suites_find(""));
    cr_expect_null(suites_find(NULL));
}

Test(suites, json_lists_every_suite_with_a_request_measure_accepts) {
    char err[ERR_LEN] = "";
    char *body = suites_json(err);
    cr_assert_not_null(body, "%s", err);
    json_error_t je;
    json_t *j = json_loads(body, JSON_REJECT_DUPLICATES, &je);
    cr_assert_not_null(j, "%s", je.text);
    json_t *list = json_object_get(j, "suites");
    cr_assert_eq(json_array_size(list), suites_count());
    for (size_t i = 0; i < suites_count(); i++) {
        json_t *e = json_array_get(list, i);
        cr_expect_str_eq(json_string_value(json_object_get(e, "name")), suites_get(i)->name);
        cr_expect_eq(json_integer_value(json_object_get(e, "version")), suites_get(i)->version);
        cr_assert_eq(json_array_size(json_object_get(e, "requests")), 1);
        json_t *req = json_array_get(json_object_get(e, "requests"), 0);
        cr_assert(json_is_object(req));
        char *text = json_dumps(req, JSON_COMPACT);
        struct dv_options o, want;
        struct request_error re;
        cr_assert_eq(request_parse(text, strlen(text), &o, &re), 0, "%s: %s: %s", suites_get(i)->name,
                     re.field, re.reason);
        cr_assert_eq(suites_options(suites_get(i), &want, err), 0);
        cr_expect_eq(o.part, want.part);
        cr_expect_eq(o.npredicates, want.npredicates);
        for (unsigned k = 0; k < o.npredicates; k++) cr_expect_str_eq(o.predicates[k], want.predicates[k]);
        free(text);
    }
    json_decref(j);
    free(body);
}

/* GET /suites' body with the k-th allocation failing: an error or the very
 * text a normal build gives, never one with a suite or a member missing. */
static char *suites_text(void *err) {
    ((char *)err)[0] = '\0';
    return suites_json(err);
}

static void suites_failed(void *err, long k) { cr_assert(((char *)err)[0], "allocation %ld failed, silently", k); }

Test(suites, json_is_whole_or_absent_under_failing_allocations) {
    char err[ERR_LEN] = "";
    char *want = suites_json(err);
    cr_assert_not_null(want, "%s", err);
    unsigned failed = failing_alloc_each(
        &(struct failing_case){.build = suites_text, .ctx = err, .want = want, .failed = suites_failed});
    cr_assert_geq(failed, 20, "only %u builds met a failure", failed);
    free(want);
}

Test(suites, every_suite_keeps_each_rows_instruction_profile) {
    static const char *const lesson[] = {"day22-part1",       "day22-part2",          "day22-exercise", "scenarios",
                                         "compiler-and-warp", "arithmetic-intensity", "data-sort"};
    for (size_t i = 0; i < sizeof lesson / sizeof lesson[0]; i++) {
        struct dv_options o;
        struct dv_report *r = experiment_report_create();
        plan(must_find(lesson[i]), &o, r);
        cr_expect_eq(o.instructions, 1, "%s asks for instructions", lesson[i]);
        if (strcmp(lesson[i], "compiler-and-warp") != 0) /* asked for them from its first version */
            cr_expect_geq(must_find(lesson[i])->version, 2u, "%s: its request changed, so did its version", lesson[i]);
        char *body = request_dump(&o);
        cr_assert_not_null(body);
        cr_expect(strstr(body, "\"instructions\":true") != NULL, "what GET /suites shows and the night posts: %s",
                  body);
        free(body);
        experiment_report_free(r);
    }
}

/* The experiments' nightly set: the four tables of compiler-and-warp (not
 * the predication map, asked for on demand), each on a budget that keeps
 * the night short, on a grid whose analysis is under the server's limit. */
Test(suites, compiler_and_warp_runs_the_experiments_nightly_set) {
    struct dv_options o;
    struct dv_report *r = experiment_report_create();
    plan(must_find("compiler-and-warp"), &o, r);
    cr_assert_str_eq(o.scenario, "compiler-and-warp");
    static const char *const ids[] = {"scenario:k-paths", "scenario:predication", "scenario:branchless",
                                      "scenario:reconvergence"};
    cr_assert_eq(r->ntables, 4);
    unsigned rows = 0;
    for (unsigned i = 0; i < r->ntables; i++) {
        cr_expect_str_eq(r->tables[i].id, ids[i]);
        cr_expect(r->tables[i].experiment[0], "%s is an experiment", r->tables[i].id);
        rows += r->tables[i].nrows;
    }
    cr_expect_leq(o.budget_ms, 250.0);
    cr_expect_leq((double)rows * o.blocks * 256, 33554432.0, "the analysis within the server's default limit");
    experiment_report_free(r);
}

/* ---- arithmetic intensity ---- */
/* The nightly set: the stream and the chase tables (not the points between,
 * asked for on demand), a quarter second of GPU time each, on the lesson's
 * grid, whose analysis stays under the server's default limit. */
Test(suites, arithmetic_intensity_runs_the_stream_and_the_chase_nightly) {
    struct dv_options o;
    struct dv_report *r = experiment_report_create();
    plan(must_find("arithmetic-intensity"), &o, r);
    cr_assert_str_eq(o.scenario, "arithmetic-intensity");
    static const char *const ids[] = {"scenario:intensity-stream", "scenario:intensity-chase"};
    cr_assert_eq(r->ntables, 2);
    unsigned rows = 0;
    for (unsigned i = 0; i < r->ntables; i++) {
        cr_expect_str_eq(r->tables[i].id, ids[i]);
        cr_expect_str_eq(r->tables[i].experiment, "intensity");
        rows += r->tables[i].nrows;
    }
    cr_expect_eq(rows, 28u);
    cr_expect_leq(o.budget_ms, 250.0);
    const double blocks = o.blocks ? o.blocks : DV_DEFAULT_BLOCKS;
    cr_expect_leq((double)rows * blocks * 256, 33554432.0, "the analysis within the server's default limit");
    experiment_report_free(r);
}
/* ---- end arithmetic intensity ---- */
