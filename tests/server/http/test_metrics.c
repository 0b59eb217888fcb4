/* test_metrics.c -- the exposition on its own: a service with a real queue,
 * an unstarted worker supervisor and an HTTP front that never listens, fed
 * through the observers: cumulative buckets, per-route histograms split by
 * status class, 429s of
 * measure routes counted as rejected (and only those), queue wait and run
 * time, the freshness gauge per GPU, escaped label values. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "server/http/metrics.h"

static struct service s;
static struct metrics *m;
static char err[ERR_LEN];
static const char *index_text;

static char *give_index(void *ctx) {
    (void)ctx;
    return index_text ? strdup(index_text) : NULL;
}

static void setup(void) {
    memset(&s, 0, sizeof s);
    static char *argv[] = {"/bin/false", NULL};
    struct worker_config wc = {.argv = argv};
    struct http_config hc = {0};
    cr_assert_not_null(s.q = jobq_create(4, 8, 60, err), "%s", err);
    cr_assert_not_null(s.w = worker_create(&wc, s.q, err), "%s", err);
    cr_assert_not_null(s.http = http_create(&hc, err), "%s", err);
    cr_assert_not_null(m = metrics_create(&s, give_index, NULL, err), "%s", err);
}

static void teardown(void) {
    http_free(s.http);
    worker_free(s.w);
    jobq_free(s.q);
    metrics_free(m);
}

TestSuite(metrics, .init = setup, .fini = teardown);

static int has_line(const char *text, const char *line) {
    size_t n = strlen(line);
    for (const char *p = text; (p = strstr(p, line)); p += n)
        if ((p == text || p[-1] == '\n') && (p[n] == '\n' || p[n] == '\0')) return 1;
    return 0;
}

Test(metrics, request_histograms_are_cumulative_per_route) {
    metrics_observe_request(m, "/healthz", 200, 0.0004);
    metrics_observe_request(m, "/healthz", 200, 0.003);
    metrics_observe_request(m, "/healthz", 200, 3.0);
    metrics_observe_request(m, "/measure", 202, 0.02);
    char *t = metrics_text(m);
    cr_assert_not_null(t);
    cr_assert(has_line(t, "# TYPE dv_http_request_duration_seconds histogram"), "%s", t);
    cr_assert(
        has_line(t, "dv_http_request_duration_seconds_bucket{route=\"/healthz\",status_class=\"2xx\",le=\"0.0005\"} 1"),
        "%s", t);
    cr_assert(
        has_line(t, "dv_http_request_duration_seconds_bucket{route=\"/healthz\",status_class=\"2xx\",le=\"0.0025\"} 1"),
        "%s", t);
    cr_assert(
        has_line(t, "dv_http_request_duration_seconds_bucket{route=\"/healthz\",status_class=\"2xx\",le=\"0.005\"} 2"),
        "%s", t);
    cr_assert(
        has_line(t, "dv_http_request_duration_seconds_bucket{route=\"/healthz\",status_class=\"2xx\",le=\"2.5\"} 2"),
        "%s", t);
    cr_assert(
        has_line(t, "dv_http_request_duration_seconds_bucket{route=\"/healthz\",status_class=\"2xx\",le=\"+Inf\"} 3"),
        "%s", t);
    cr_assert(has_line(t, "dv_http_request_duration_seconds_count{route=\"/healthz\",status_class=\"2xx\"} 3"), "%s",
              t);
    cr_assert(has_line(t, "dv_http_request_duration_seconds_count{route=\"/measure\",status_class=\"2xx\"} 1"), "%s",
              t);
    cr_assert_not_null(strstr(t, "\ndivergence_build_info{version=\""), "%s", t);
    free(t);
}

Test(metrics, each_status_class_has_its_own_histogram) {
    metrics_observe_request(m, "/measure", 202, 0.002);
    metrics_observe_request(m, "/measure", 429, 0.0001);
    metrics_observe_request(m, "/measure", 400, 0.0001);
    metrics_observe_request(m, "/measure", 503, 2.0);
    metrics_observe_request(m, "/", 304, 0.0001);
    metrics_observe_request(m, "/measure", 201, 0.003);
    char *t = metrics_text(m);
    cr_assert(has_line(t, "dv_http_request_duration_seconds_count{route=\"/measure\",status_class=\"2xx\"} 2"), "%s",
              t);
    cr_assert(has_line(t, "dv_http_request_duration_seconds_count{route=\"/measure\",status_class=\"4xx\"} 2"), "%s",
              t);
    cr_assert(has_line(t, "dv_http_request_duration_seconds_count{route=\"/measure\",status_class=\"5xx\"} 1"), "%s",
              t);
    cr_assert(
        has_line(t, "dv_http_request_duration_seconds_bucket{route=\"/measure\",status_class=\"5xx\",le=\"1\"} 0"),
        "the slow 503 is not among the quick answers: %s", t);
    cr_assert(has_line(t, "dv_http_request_duration_seconds_count{route=\"/\",status_class=\"3xx\"} 1"), "%s", t);
    cr_assert_null(strstr(t, "dv_http_request_duration_seconds_count{route=\"/measure\"}"), "an unsplit series: %s", t);
    free(t);
    cr_expect_str_eq(http_status_class(200), "2xx");
    cr_expect_str_eq(http_status_class(308), "3xx");
    cr_expect_str_eq(http_status_class(499), "4xx");
    cr_expect_str_eq(http_status_class(599), "5xx");
    cr_expect_str_eq(http_status_class(101), "1xx");
    cr_expect_str_eq(http_status_class(600), "other");
    cr_expect_str_eq(http_status_class(-1), "other");
}

Test(metrics, only_measure_routes_429s_are_rejected_jobs) {
    metrics_observe_request(m, "/measure", 429, 0.001);
    metrics_observe_request(m, "/gpus/{slug}/measure", 429, 0.001);
    metrics_observe_request(m, "/evidence/refresh", 429, 0.001);
    metrics_observe_request(m, "/measure", 400, 0.001);
    char *t = metrics_text(m);
    cr_assert(has_line(t, "dv_jobs_total{outcome=\"rejected\"} 2"), "%s", t);
    free(t);
}

Test(metrics, queue_wait_and_run_time) {
    metrics_observe_job(m, 1, 0.2, 1.5);
    metrics_observe_job(m, 0, 0.02, 40);
    metrics_observe_job(m, 0, -1, -1); /* failed before it ran: neither */
    char *t = metrics_text(m);
    cr_assert(has_line(t, "dv_job_queue_wait_seconds_count 2"), "%s", t);
    cr_assert(has_line(t, "dv_job_queue_wait_seconds_bucket{le=\"0.05\"} 1"), "%s", t);
    cr_assert(has_line(t, "dv_job_queue_wait_seconds_bucket{le=\"0.25\"} 2"), "%s", t);
    cr_assert(has_line(t, "dv_job_run_seconds_count{outcome=\"done\"} 1"), "%s", t);
    cr_assert(has_line(t, "dv_job_run_seconds_bucket{outcome=\"done\",le=\"2\"} 1"), "%s", t);
    cr_assert(has_line(t, "dv_job_run_seconds_bucket{outcome=\"failed\",le=\"30\"} 0"), "%s", t);
    cr_assert(has_line(t, "dv_job_run_seconds_bucket{outcome=\"failed\",le=\"60\"} 1"), "%s", t);
    free(t);
}

Test(metrics, freshness_per_gpu_with_escaped_labels) {
    index_text = "{\"gpu\":\"nvidia-h200\",\"suites\":[{\"suite\":\"day22-part1\",\"finished_utc\":\"2026-11-29T18:18:22Z\"}],"
                 "\"gpus\":[{\"gpu\":\"nvidia-h200\",\"suites\":[{\"suite\":\"day22-part1\",\"finished_utc\":\"2026-11-29T18:18:22Z\"},"
                 "{\"suite\":\"never\",\"finished_utc\":null}]},"
                 "{\"gpu\":\"odd\\\"gpu\",\"suites\":[{\"suite\":\"day22-part2\",\"finished_utc\":\"2026-11-30T00:00:00Z\"}]}]}";
    char *t = metrics_text(m);
    cr_assert(has_line(t, "dv_evidence_last_success_timestamp_seconds{suite=\"day22-part1\",gpu=\"nvidia-h200\"} 1795976302"), "%s", t);
    cr_assert(has_line(t, "dv_evidence_last_success_timestamp_seconds{suite=\"day22-part2\",gpu=\"odd\\\"gpu\"} 1795996800"), "%s", t);
    cr_assert_null(strstr(t, "suite=\"never\""), "%s", t);
    free(t);
    index_text = "{\"suites\":[{\"suite\":\"day22-part1\",\"finished_utc\":\"2026-11-29T18:18:22Z\"}]}";
    t = metrics_text(m);
    cr_assert(has_line(t, "dv_evidence_last_success_timestamp_seconds{suite=\"day22-part1\"} 1795976302"), "%s", t);
    free(t);
    /* The latest night against the one before: changed and ambiguous
     * ratios per suite; a first night (previous null) has no sample. */
    index_text = "{\"gpus\":[{\"gpu\":\"nvidia-h200\",\"suites\":["
                 "{\"suite\":\"day22-part1\",\"comparison\":{\"previous\":{\"date\":\"2026-11-29\"},\"changed\":1,"
                 "\"counts\":{\"same\":2,\"higher\":1,\"lower\":0,\"ambiguous\":0}}},"
                 "{\"suite\":\"day22-part2\",\"comparison\":{\"previous\":null,\"changed\":0,"
                 "\"counts\":{\"ambiguous\":0}}}]}]}";
    t = metrics_text(m);
    cr_assert(has_line(t, "dv_evidence_changed_ratios{suite=\"day22-part1\",gpu=\"nvidia-h200\"} 1"), "%s", t);
    cr_assert(has_line(t, "dv_evidence_ambiguous_ratios{suite=\"day22-part1\",gpu=\"nvidia-h200\"} 0"), "%s", t);
    cr_assert_null(strstr(t, "dv_evidence_changed_ratios{suite=\"day22-part2\""), "%s", t);
    cr_assert(has_line(t, "# TYPE dv_evidence_changed_ratios gauge"), "%s", t);
    free(t);
    index_text = NULL; /* no store: the family is declared, with no samples */
    t = metrics_text(m);
    cr_assert(has_line(t, "# TYPE dv_evidence_last_success_timestamp_seconds gauge"), "%s", t);
    cr_assert_null(strstr(t, "dv_evidence_last_success_timestamp_seconds{"), "%s", t);
    free(t);
}

Test(metrics, process_metrics_are_there) {
    char *t = metrics_text(m);
    cr_assert_not_null(strstr(t, "\nprocess_resident_memory_bytes "), "%s", t);
    cr_assert_not_null(strstr(t, "\nprocess_cpu_seconds_total "), "%s", t);
    cr_assert_not_null(strstr(t, "\nprocess_open_fds "), "%s", t);
    cr_assert_not_null(strstr(t, "\nprocess_start_time_seconds "), "%s", t);
    free(t);
}

Test(metrics, testimony_time_per_job_and_the_workers_memory) {
    metrics_observe_testimony(m, 0.0042);
    metrics_observe_testimony(m, 0.018);
    metrics_observe_testimony(m, 0.75);
    char *t = metrics_text(m);
    cr_assert(has_line(t, "# TYPE dv_testimony_seconds histogram"), "%s", t);
    cr_assert(has_line(t, "dv_testimony_seconds_bucket{le=\"0.0025\"} 0"), "%s", t);
    cr_assert(has_line(t, "dv_testimony_seconds_bucket{le=\"0.005\"} 1"), "%s", t);
    cr_assert(has_line(t, "dv_testimony_seconds_bucket{le=\"0.02\"} 2"), "%s", t);
    cr_assert(has_line(t, "dv_testimony_seconds_bucket{le=\"1\"} 3"), "%s", t);
    cr_assert(has_line(t, "dv_testimony_seconds_count 3"), "%s", t);
    /* No worker process here: the family is declared, with no sample. */
    cr_assert(has_line(t, "# TYPE dv_worker_resident_memory_bytes gauge"), "%s", t);
    cr_assert_null(strstr(t, "\ndv_worker_resident_memory_bytes "), "%s", t);
    free(t);
}
