/* test_routes.c -- the documents the core routes build, with jansson's
 * allocator failing: a document is either whole or not built at all (the
 * route then answers 500), never sent with members missing. The allocator
 * fails the k-th allocation for every k until the build succeeds. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "server/http/service.h"

static long fail_at = -1, calls = 0;

static void *failing_malloc(size_t n) {
    if (fail_at >= 0 && calls++ == fail_at) return NULL;
    return malloc(n);
}

static void use_failing(long k) {
    fail_at = k;
    calls = 0;
    json_set_alloc_funcs(failing_malloc, free);
}

static void use_normal(void) {
    fail_at = -1;
    json_set_alloc_funcs(malloc, free);
}

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

Test(routes, job_document_is_whole_or_absent_under_failing_allocations) {
    struct job_view v = done_view();
    json_t *want = routes_job_json(&v);
    cr_assert_not_null(want);
    char *want_s = json_dumps(want, JSON_SORT_KEYS);
    json_decref(want);
    long k;
    unsigned failed = 0;
    for (k = 0; k < 10000; k++) {
        use_failing(k);
        json_t *got = routes_job_json(&v);
        long made = calls;
        use_normal();
        if (!got) {
            failed++;
            continue;
        }
        char *s = json_dumps(got, JSON_SORT_KEYS);
        json_decref(got);
        cr_assert_str_eq(s, want_s, "allocation %ld failed and a partial document was built", k);
        free(s);
        if (made <= k) break; /* no allocation left to fail */
    }
    cr_assert_lt(k, 10000);
    cr_assert_geq(failed, 20, "only %u builds met a failure", failed);
    free(want_s);
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

Test(routes, predicates_document_is_whole_or_absent_under_failing_allocations) {
    char err[ERR_LEN];
    char *want = routes_predicates_doc(err);
    cr_assert_not_null(want, "%s", err);
    unsigned failed = 0;
    for (long k = 0; k < 100000; k++) {
        use_failing(k);
        char *got = routes_predicates_doc(err);
        long made = calls;
        use_normal();
        if (!got) {
            failed++;
            cr_assert_str_eq(err, "out of memory");
            continue;
        }
        size_t at = 0;
        while (got[at] && got[at] == want[at]) at++;
        cr_assert_str_eq(got, want, "allocation %ld failed and a partial document was built: at %zu: %.80s", k, at,
                         got + (at > 20 ? at - 20 : 0));
        free(got);
        if (made <= k) break;
    }
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
