/* test_wire.c -- the pipe between the supervisor and the GPU worker
 * (server/jobs/wire.h): frames go across whole and in order, an oversized
 * one is refused, a closed pipe and a silent one are told apart; and the
 * device block of the hello is whole or not written at all. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "server/jobs/wire.h"
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

static char *device_text(void *d) { return wire_device_json(d); }

/* report_device_json() writes with jansson itself: under a failing
 * allocation its text could lose part of a key. */
Test(wire, the_device_block_is_whole_or_absent_under_failing_allocations) {
    struct dv_device d;
    memset(&d, 0, sizeof d);
    d.present = 1;
    snprintf(d.name, sizeof d.name, "NVIDIA H200");
    d.cc_major = 9;
    d.sm_count = 132;
    d.warp_size = 32;
    d.driver_version = 13000;
    d.runtime_version = 13000;
    snprintf(d.pci_bus_id, sizeof d.pci_bus_id, "00000000:19:00.0");
    char *want = wire_device_json(&d);
    cr_assert_not_null(want);
    unsigned failed = failing_alloc_each(&(struct failing_case){.build = device_text, .ctx = &d, .want = want});
    cr_assert_geq(failed, 10, "only %u builds met a failure", failed);
    free(want);
}
