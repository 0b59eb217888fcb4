/* test_routes.c -- the documents the core routes build, with jansson's
 * allocator failing: a document is either whole or not built at all (the
 * route then answers 500), never sent with members missing. The allocator
 * fails the k-th allocation for every k until the build succeeds
 * (tests/support/failing_alloc.h). And the analysis cost, asked once per
 * request (at the end). */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/jsonout.h"
#include "server/http/service.h"
#include "tests/support/failing_alloc.h"
#include "tests/support/helper_http.h"

static struct job_view done_view(void) {
    struct job_view v;
    memset(&v, 0, sizeof v);
    memcpy(v.id, "0123456789abcdef0123456789abcdef", JOBQ_ID_LEN);
    v.state = JOB_DONE;
    v.created = 1700000000.0;
    v.started = 1700000000.5;
    v.finished = 1700000001.25;
    v.gpu_time_ms = 13.75;
    v.document = "{\"schema\": \"divergence.v1\", \"tables\": [1, 2, 3]}";
    return v;
}

static char *job_text(void *ctx) {
    json_t *o = routes_job_json(ctx);
    char *s = o ? jsonout_dumps(o, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    json_decref(o);
    return s;
}

Test(routes, job_document_is_whole_or_absent_under_failing_allocations) {
    struct job_view v = done_view();
    char *want = job_text(&v);
    cr_assert_not_null(want);
    unsigned failed = failing_alloc_each(&(struct failing_case){.build = job_text, .ctx = &v, .want = want});
    cr_assert_geq(failed, 20, "only %u builds met a failure", failed);
    free(want);
}

Test(routes, job_document_splits_queue_gpu_and_overhead) {
    struct job_view v = done_view();
    json_t *o = routes_job_json(&v);
    json_t *t = json_object_get(o, "timing");
    cr_assert_float_eq(json_number_value(json_object_get(t, "queue_wait_ms")), 500.0, 1e-9);
    cr_assert_float_eq(json_number_value(json_object_get(t, "run_ms")), 750.0, 1e-9);
    cr_assert_float_eq(json_number_value(json_object_get(t, "gpu_ms")), 13.75, 1e-9);
    cr_assert_float_eq(json_number_value(json_object_get(t, "overhead_ms")), 736.25, 1e-9);
    json_decref(o);
}

static char *predicates_text(void *err) { return routes_predicates_doc(err); }

static void predicates_failed(void *err, long k) {
    cr_assert_str_eq(err, "out of memory", "allocation %ld failed and the error says: %s", k, (char *)err);
}

Test(routes, predicates_document_is_whole_or_absent_under_failing_allocations) {
    char err[ERR_LEN];
    char *want = routes_predicates_doc(err);
    cr_assert_not_null(want, "%s", err);
    unsigned failed = failing_alloc_each(
        &(struct failing_case){.build = predicates_text, .ctx = err, .want = want, .failed = predicates_failed});
    cr_assert_geq(failed, 50, "only %u builds met a failure", failed);
    free(want);
}

/* /predicates writes each row with the document's row writer: counts are
 * {min, max, total}, as in divergence.v1. */
Test(routes, predicates_rows_match_the_document_writer) {
    char err[ERR_LEN];
    char *doc = routes_predicates_doc(err);
    cr_assert_not_null(doc, "%s", err);
    json_t *j = json_loads(doc, 0, NULL);
    free(doc);
    json_t *p = json_array_get(json_object_get(j, "predicates"), 0);
    json_t *a = json_object_get(p, "analysis");
    json_t *split = json_object_get(a, "warps_split");
    cr_assert(json_is_integer(json_object_get(split, "total")), "warps_split has no total");
    cr_assert_null(json_object_get(split, "per_block"));
    cr_assert(json_is_number(json_object_get(a, "warps_split_per_block")));
    cr_assert_str_eq(json_string_value(json_object_get(a, "name")), json_string_value(json_object_get(p, "name")));
    json_decref(j);
}

/* The cost the cap compares: blockIdx.x-free predicates cost one block. */
Test(routes, analysis_cost_counts_blockidx_predicates_per_thread) {
    struct dv_options o;
    memset(&o, 0, sizeof o);
    o.part = DV_PART_1;
    o.blocks = 1000;
    o.block_x = 100;
    o.block_y = 1;
    o.npredicates = 2;
    strcpy(o.predicates[0], "lane-parity");
    strcpy(o.predicates[1], "blockIdx.x % 3 == 0");
    strcpy(o.baseline, "lane-parity");
    /* lane-parity (also the baseline: one row) at 100, the blockIdx.x row at 100000. */
    cr_assert_float_eq(routes_analysis_cost(&o), 100100.0, 1e-9);
}

/* ---- the analysis cost, worked out once per request -------------------------
 *
 * plan_cost() is wrapped at link time (tests/CMakeLists.txt:
 * -Wl,--wrap=plan_cost) and counted, and the core routes run in this
 * process on an ephemeral port: one POST /analyze or /measure asks the
 * planner's cost once, whether its analysis runs on the HTTP thread (small)
 * or on the pool (a predicate that reads blockIdx.x). */

double __real_plan_cost(const struct dv_options *o, const char **field);
double __wrap_plan_cost(const struct dv_options *o, const char **field);
static atomic_uint cost_calls;

double __wrap_plan_cost(const struct dv_options *o, const char **field) {
    atomic_fetch_add(&cost_calls, 1);
    return __real_plan_cost(o, field);
}

static unsigned post(unsigned port, const char *path, const char *body, int want) {
    struct helper_response r;
    atomic_store(&cost_calls, 0);
    cr_assert_eq(helper_request(port, "POST", path, "Content-Type: application/json", body, strlen(body), &r), 0);
    cr_expect_eq(r.status, want, "%s %s: %d %s", path, body, r.status, r.body);
    helper_response_free(&r);
    return atomic_load(&cost_calls);
}

Test(routes, the_analysis_cost_is_worked_out_once_per_request, .timeout = 30) {
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s/tests/fake_worker", DV_TEST_BUILD_DIR);
    char *argv[] = {cmd, NULL};
    struct worker_config wc = {.argv = argv};
    struct service s;
    char err[ERR_LEN];
    memset(&s, 0, sizeof s);
    s.cfg.max_cost = s.cfg.open_cost = 1e30;
    s.cfg.deadline_ms = 600000;
    s.cfg.max_analysis_cost = 1e12;
    s.cfg.http.drain_ms = 1000;
    cr_assert_not_null(s.q = jobq_create(4, 8, 60, err), "%s", err);
    cr_assert_not_null(s.w = worker_create(&wc, s.q, err), "%s", err);
    cr_assert_eq(worker_start(s.w, err), 0, "%s", err);
    cr_assert_eq(worker_wait_ready(s.w, 10000), 0, "the fake worker did not say hello");
    cr_assert_not_null(s.http = http_create(&s.cfg.http, err), "%s", err);
    cr_assert_eq(routes_add_core(&s, err), 0, "%s", err);
    cr_assert_eq(http_start(s.http, err), 0, "%s", err);
    const unsigned port = http_port(s.http);
    cr_expect_eq(post(port, "/analyze", "{\"part\": 1}", 200), 1, "an analysis on the HTTP thread");
    cr_expect_eq(post(port, "/analyze", "{\"part\": 1, \"predicates\": [\"blockIdx.x % 3 == 0\"]}", 200), 1,
                 "an analysis on the pool");
    cr_expect_eq(post(port, "/measure", "{\"part\": 2}", 202), 1, "a measurement's analysis");
    s.cfg.max_analysis_cost = 1000;
    cr_expect_eq(post(port, "/analyze", "{\"part\": 1, \"predicates\": [\"blockIdx.x % 3 == 0\"]}", 400), 1,
                 "over the cap: the 400 is the one answer");
    http_free(s.http);
    worker_free(s.w);
    jobq_free(s.q);
}
