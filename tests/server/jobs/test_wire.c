/* test_wire.c -- the pipe between the supervisor and the GPU worker
 * (server/jobs/wire.h): frames go across whole and in order, an oversized
 * one is refused, a closed pipe and a silent one are told apart; and the
 * messages (one builder each, for both ends) read back with what was put in
 * them, carry the document as report_json() writes it, and are whole or not
 * written at all. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/jsonout.h"
#include "api/report.h"
#include "server/jobs/wire.h"
#include "tests/api/report_full.h"
#include "tests/support/failing_alloc.h"

Test(wire, frames_cross_whole_and_in_order) {
    int p[2];
    cr_assert_eq(pipe(p), 0);
    char err[ERR_LEN];
    cr_assert_eq(wire_write(p[1], "{\"a\":1}", 7, err), 0, "%s", err);
    cr_assert_eq(wire_write(p[1], "", 0, err), 0, "%s", err);
    char *msg = NULL;
    size_t len = 0;
    cr_assert_eq(wire_read(p[0], &msg, &len, 1000, err), WIRE_OK, "%s", err);
    cr_assert_eq(len, 7);
    cr_assert_str_eq(msg, "{\"a\":1}");
    free(msg);
    cr_assert_eq(wire_read(p[0], &msg, &len, 1000, err), WIRE_OK, "%s", err);
    cr_assert_eq(len, 0);
    free(msg);
    cr_assert_eq(wire_read(p[0], &msg, &len, 50, err), WIRE_TIMEOUT, "nothing sent: a timeout");
    close(p[1]);
    cr_assert_eq(wire_read(p[0], &msg, &len, 1000, err), WIRE_EOF, "closed between frames: the end");
    close(p[0]);
}

Test(wire, an_oversized_frame_is_refused) {
    int p[2];
    cr_assert_eq(pipe(p), 0);
    char err[ERR_LEN] = "";
    cr_assert_eq(wire_write(p[1], "x", (size_t)WIRE_MAX_MESSAGE + 1, err), -1);
    cr_assert(strstr(err, "exceeds"), "%s", err);
    close(p[0]);
    close(p[1]);
}

/* The report with every field set (tests/api/report_full.h), and a real
 * that 15 significant digits round (a plain dump writes it with 17). */
static struct dv_report *full_report(void) {
    struct dv_report *r = experiment_report_create();
    cr_assert_not_null(r);
    report_full(r);
    r->wall_time_ms = 1000.0 / 7.0;
    return r;
}

/* A measured report small enough to be built many times over: the full
 * report's device, with reals that 15 digits round. */
static struct dv_report *small_report(void) {
    struct dv_report *full = full_report(), *r = experiment_report_create();
    cr_assert_not_null(r);
    r->measured = 1;
    r->gpu_time_ms = 100.0 / 3.0;
    r->wall_time_ms = 1000.0 / 7.0;
    r->device = full->device;
    r->device.measured_sm_clock_mhz = 1980.0 / 3.0;
    experiment_report_free(full);
    return r;
}

/* An id and a reason no printf-built JSON would survive: a quote, a
 * backslash, a newline and bytes that are not UTF-8 (jsonout_str writes
 * those as '?'). */
#define ODD_ID "job \"7\" \\ x"
#define ODD_ERROR "line one\nline \"two\" \xff\xfe end"
#define ODD_ERROR_READ "line one\nline \"two\" ?? end"

static json_t *parsed(char *text) {
    cr_assert_not_null(text, "the message was not built");
    json_error_t je;
    json_t *o = json_loads(text, JSON_REJECT_DUPLICATES, &je);
    cr_assert_not_null(o, "not JSON (%s): %s", je.text, text);
    free(text);
    return o;
}

Test(wire, every_message_reads_back_with_what_was_put_in_it) {
    json_t *o = parsed(wire_job(ODD_ID, json_pack("{s:i}", "iterations", 7)));
    cr_expect_str_eq(json_string_value(json_object_get(o, "id")), ODD_ID);
    cr_expect_str_eq(json_string_value(json_object_get(o, "kind")), "measure");
    cr_expect_eq(json_integer_value(json_object_get(json_object_get(o, "request"), "iterations")), 7);
    json_decref(o);

    o = parsed(wire_reply_error(ODD_ID, DV_EGATE, ODD_ERROR, NULL, 5.0));
    cr_expect_str_eq(json_string_value(json_object_get(o, "id")), ODD_ID);
    cr_expect(json_is_false(json_object_get(o, "ok")));
    cr_expect_eq(json_integer_value(json_object_get(o, "code")), DV_EGATE);
    cr_expect_str_eq(json_string_value(json_object_get(o, "error")), ODD_ERROR_READ);
    cr_expect_null(json_object_get(o, "document"));
    cr_expect_null(json_object_get(o, "testimony_ms"), "the testimony's time goes with a document only");
    json_decref(o);

    o = parsed(wire_reply_error("j", DV_EGATE, "gate", json_object(), 5.0));
    cr_expect(json_is_object(json_object_get(o, "document")));
    cr_expect_float_eq(json_number_value(json_object_get(o, "testimony_ms")), 5.0, 1e-12);
    json_decref(o);

    o = parsed(wire_reply_ok(ODD_ID, 12.5, NAN, 1, json_object()));
    cr_expect_str_eq(json_string_value(json_object_get(o, "id")), ODD_ID);
    cr_expect(json_is_true(json_object_get(o, "ok")));
    cr_expect_float_eq(json_number_value(json_object_get(o, "gpu_time_ms")), 12.5, 1e-12);
    const json_t *tv = json_object_get(o, "testimony_ms");
    cr_expect(json_is_real(tv) && json_real_value(tv) == 0, "a time that is not a number is 0");
    cr_expect(json_is_true(json_object_get(o, "exiting")));
    json_decref(o);
    o = parsed(wire_reply_ok("j", 1, 2, 0, json_object()));
    cr_expect_null(json_object_get(o, "exiting"), "exiting only when the worker ends");
    json_decref(o);

    struct dv_report *small = small_report();
    o = parsed(wire_hello(report_device_json(&small->device), NULL));
    cr_expect_eq(json_integer_value(json_object_get(o, "hello")), 1);
    cr_expect_eq(json_integer_value(json_object_get(o, "pid")), getpid());
    cr_expect_str_eq(json_string_value(json_object_get(json_object_get(o, "device"), "name")), "NVIDIA H200");
    cr_expect_null(json_object_get(o, "warm"), "no warm-up measured, no \"warm\"");
    json_decref(o);
    const struct wire_warm warm = {.kind = "part1/2rows+witness+counters", .run_ms = 14.5};
    o = parsed(wire_hello(report_device_json(&small->device), &warm));
    const json_t *wj = json_object_get(o, "warm");
    cr_expect_str_eq(json_string_value(json_object_get(wj, "kind")), "part1/2rows+witness+counters");
    cr_expect_float_eq(json_number_value(json_object_get(wj, "run_ms")), 14.5, 1e-12);
    json_decref(o);
    const struct wire_warm no_run[] = {
        {.kind = "k", .run_ms = 0}, {.kind = "k", .run_ms = NAN}, {.kind = "", .run_ms = 1}};
    for (size_t i = 0; i < sizeof no_run / sizeof no_run[0]; i++) {
        o = parsed(wire_hello(report_device_json(&small->device), &no_run[i]));
        cr_expect_null(json_object_get(o, "warm"), "warm %zu: no kind or no run, no \"warm\"", i);
        json_decref(o);
    }
    experiment_report_free(small);

    const char *ids[3] = {ODD_ID, "b", "c"};
    json_t *reqs[3] = {json_pack("{s:i}", "iterations", 1), json_pack("{s:i}", "iterations", 2),
                       json_pack("{s:i}", "iterations", 3)};
    o = parsed(wire_batch(ids, reqs, 3));
    cr_expect_str_eq(json_string_value(json_object_get(o, "kind")), "batch");
    cr_expect_null(json_object_get(o, "id"), "a batch's ids are its jobs'");
    const json_t *jobs = json_object_get(o, "jobs");
    cr_assert_eq(json_array_size(jobs), 3);
    for (size_t i = 0; i < 3; i++) {
        const json_t *j = json_array_get(jobs, i);
        cr_expect_str_eq(json_string_value(json_object_get(j, "id")), ids[i]);
        cr_expect_eq(json_integer_value(json_object_get(json_object_get(j, "request"), "iterations")), (json_int_t)i + 1);
    }
    json_decref(o);

    cr_expect_null(wire_hello(NULL, NULL), "a part that was not built makes no message");
    cr_expect_null(wire_job("j", NULL));
    json_t *some[2] = {json_object(), NULL};
    cr_expect_null(wire_batch(ids, some, 2), "a batch with a request not built");
    cr_expect_null(wire_batch(ids, some, 0), "a batch of no jobs");
    cr_expect_null(wire_reply_ok("j", 1, 2, 0, NULL));
    char err[ERR_LEN] = "";
    cr_expect_eq(wire_send(1, NULL, err), -1);
    cr_expect(strstr(err, "could not be built"), "%s", err);
}

/* The reply's document is the text report_json() writes, byte for byte
 * (15 significant digits, not the 17 a plain dump of these reals takes),
 * and a hello's device the text report_device_json() gives. */
Test(wire, the_reply_carries_the_document_as_report_json_writes_it) {
    struct dv_report *r = full_report();
    char *want = report_json(r, 0);
    cr_assert_not_null(want);
    char *msg = wire_reply_ok("j", r->gpu_time_ms, 1.0 / 3.0, 0, report_document(r));
    cr_assert_not_null(msg);
    const char *doc = strstr(msg, ",\"document\":");
    cr_assert_not_null(doc, "%s", msg);
    doc += strlen(",\"document\":");
    cr_expect_eq(strlen(doc), strlen(want) + 1, "the document, then the message's closing brace");
    cr_expect(strncmp(doc, want, strlen(want)) == 0, "the document as written:\n%s\nin the message:\n%s", want, doc);
    free(msg);
    msg = wire_reply_error("j", DV_EGATE, "gate", report_document(r), 2.0);
    cr_expect(strstr(msg, want) != NULL, "a failed job's document as written too");
    free(msg);
    free(want);
    experiment_report_free(r);

    r = small_report();
    const struct dv_device d = r->device;
    experiment_report_free(r);
    json_t *dev = report_device_json(&d);
    char *dev_text = jsonout_dumps(dev, JSON_COMPACT);
    json_decref(dev);
    msg = wire_hello(report_device_json(&d), NULL);
    cr_expect(strstr(msg, dev_text) != NULL, "the device as GET /device writes it: %s in %s", dev_text, msg);
    free(msg);
    free(dev_text);
}

static char *hello_text(void *d) {
    const struct wire_warm warm = {.kind = "part1/2rows", .run_ms = 12.5};
    return wire_hello(report_device_json(d), &warm);
}
/* The request as the supervisor has it: parsed from the queue's text. */
static char *job_text(void *ctx) {
    (void)ctx;
    return wire_job("job-1", jsonout_loads("{\"predicates\":[\"lane-parity\",\"first-16\"],\"max_halfwidth\":0.005}",
                                           JSON_REJECT_DUPLICATES, NULL));
}
static char *batch_text(void *ctx) {
    (void)ctx;
    const char *ids[2] = {"job-1", "job-2"};
    json_t *reqs[2] = {jsonout_loads("{\"predicates\":[\"(threadIdx.x % 3) < 1\",\"warp-parity\"]}", 0, NULL),
                       jsonout_loads("{\"predicates\":[\"(threadIdx.x % 5) < 2\",\"warp-parity\"]}", 0, NULL)};
    return wire_batch(ids, reqs, 2);
}
static char *ok_text(void *r) { return wire_reply_ok("job-1", 100.0 / 3.0, 2.5, 1, report_document(r)); }
/* A failed job's reply goes without its document where that could not be
 * built (the failure is said all the same): the document is built before,
 * and the failures are the reply's own. */
struct error_case {
    struct dv_report *r;
    json_t *doc;
};
static void error_prepare(void *ctx) {
    struct error_case *c = ctx;
    c->doc = report_document(c->r);
}
static char *error_text(void *ctx) {
    struct error_case *c = ctx;
    return wire_reply_error("job-1", DV_EGATE, "row lane-parity: 3 mismatches", c->doc, 2.5);
}

/* jansson and report_dump build with allocations that may fail at any
 * point: a message is then not built at all, never cut short. */
Test(wire, every_message_is_whole_or_absent_under_failing_allocations) {
    struct dv_report *r = small_report();
    struct dv_device d = r->device;
    struct error_case ec = {.r = r};
    char *(*builds[])(void *) = {hello_text, job_text, batch_text, ok_text, error_text};
    void *ctx[] = {&d, NULL, NULL, r, &ec};
    void (*prepare[])(void *) = {NULL, NULL, NULL, NULL, error_prepare};
    for (size_t i = 0; i < sizeof builds / sizeof builds[0]; i++) {
        if (prepare[i]) prepare[i](ctx[i]);
        char *want = builds[i](ctx[i]);
        cr_assert_not_null(want);
        unsigned failed = failing_alloc_each(
            &(struct failing_case){.build = builds[i], .ctx = ctx[i], .want = want, .prepare = prepare[i]});
        cr_expect_geq(failed, 10, "message %zu: only %u builds met a failure", i, failed);
        free(want);
    }
    experiment_report_free(r);
}
