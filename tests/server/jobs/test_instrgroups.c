/* test_instrgroups.c -- a message's groups (jobs/instrproc.h
 * instrproc_report_groups()): the rows of several batches go to the
 * profiling server as ONE request, a frame of parts (a union table per
 * group), and each reader gets its own rows' profiles; a group whose part
 * fails gives its readers their reasons and the others keep theirs; with
 * no server, a process per group.
 *
 * The child is tests/support/fake_instr_server.c: each answer's source
 * line is the row's index in its part's table, so a reader given another
 * group's row shows it. Processes and deadlines: run 20 times in a row
 * after a change.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/options.h"
#include "kernels/model/listing/listing.h"
#include "kernels/model/model/plan.h"
#include "server/jobs/instrproc.h"
#include "tests/support/instr_reports.h"
#include "tests/support/readfile.h"

#define SERVER DV_TEST_BUILD_DIR "/tests/fake_instr_server"

static char log_path[256];

static void setup(void) { instr_test_fake_env("groups", log_path, sizeof log_path); }

static void teardown(void) { unlink(log_path); }

TestSuite(instrgroups, .init = setup, .fini = teardown, .timeout = 60);

/* Lines of the fake's log that begin with `word` and a space. */
static unsigned logged(const char *word) {
    char *s = readfile(log_path, NULL);
    unsigned n = 0;
    const size_t k = strlen(word);
    for (const char *p = s; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
        n += strncmp(p, word, k) == 0 && p[k] == ' ';
    free(s);
    return n;
}

/* Whether the fake's log has a line that ends with `tail`. */
static int logged_tail(const char *tail) {
    char *s = readfile(log_path, NULL);
    const size_t k = strlen(tail);
    int found = 0;
    for (const char *p = s; p && *p && !found; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
        const char *end = strchr(p, '\n') ? strchr(p, '\n') : p + strlen(p);
        found = (size_t)(end - p) >= k && strncmp(end - k, tail, k) == 0;
    }
    free(s);
    return found;
}

#define XA "(threadIdx.x % 3) < 1"
#define XB "(threadIdx.x % 5) < 2"
#define XD "(threadIdx.x % 7) < 4"
#define XE "threadIdx.x < 9"

/* Three groups: [XA], [XB, XD], [XE] (four readers), profiled by `ip`. */
struct classroom {
    struct dv_options o[4];
    struct dv_report *r[4];
};

static void profile_groups(struct instrproc *ip, struct classroom *c) {
    const char *preds[4] = {XA, XB, XD, XE};
    const struct dv_options *op[4];
    for (unsigned i = 0; i < 4; i++) {
        c->o[i] = instr_test_widget(preds[i], 0);
        c->r[i] = instr_test_measured(&c->o[i]);
        op[i] = &c->o[i];
    }
    const unsigned sizes[3] = {1, 2, 1};
    instrproc_report_groups(ip, op, c->r, sizes, 3);
}

static void classroom_free(struct classroom *c) {
    for (unsigned i = 0; i < 4; i++) experiment_report_free(c->r[i]);
}

static struct instrproc *profiler(void) {
    struct instrproc_config cf = {.exe = SERVER, .deadline_ms = 5000};
    char err[ERR_LEN];
    struct instrproc *ip = instrproc_create(&cf, err);
    cr_assert_not_null(ip, "%s", err);
    instrproc_warm(ip);
    return ip;
}

Test(instrgroups, the_groups_rows_go_to_one_request_of_parts_and_each_reader_gets_its_own) {
    struct instrproc *ip = profiler();
    struct classroom c;
    profile_groups(ip, &c);
    cr_expect_eq(logged("request"), 1, "one request for three groups");
    cr_expect(logged_tail(" parts 3 0:0,0:1|0:0,0:1,0:2|0:0,0:1"), "a part per group, each its union's rows");
    cr_expect_eq(instrproc_served(ip), 1);
    for (unsigned i = 0; i < 4; i++)
        cr_expect(c.r[i]->testimony.instructions_taken, "reader %u: %s", i, c.r[i]->testimony.instructions_reason);
    cr_expect_eq(instr_test_profiled_as(c.r[0], XA), 0);
    cr_expect_eq(instr_test_profiled_as(c.r[1], XB), 0);
    cr_expect_eq(instr_test_profiled_as(c.r[2], XD), 2, "its group's third row, not another group's");
    cr_expect_eq(instr_test_profiled_as(c.r[2], DV_DEFAULT_BASELINE), 1);
    cr_expect_eq(instr_test_profiled_as(c.r[3], XE), 0);
    classroom_free(&c);
    /* The same rows again: every one from the cache, no request. */
    profile_groups(ip, &c);
    cr_expect_eq(logged("request"), 1, "the cache serves them");
    for (unsigned i = 0; i < 4; i++) cr_expect_eq(c.r[i]->testimony.instructions_cached_rows, 2);
    classroom_free(&c);
    instrproc_free(ip);
}

Test(instrgroups, a_group_whose_part_is_refused_gives_its_readers_their_reasons_the_others_keep_theirs) {
    setenv("FAKE_INSTR_SERVER", "refuse-part-1", 1);
    struct instrproc *ip = profiler();
    struct classroom c;
    profile_groups(ip, &c);
    cr_expect_eq(logged("request"), 1, "refused with every row of its part: not asked again");
    cr_expect(c.r[0]->testimony.instructions_taken && c.r[3]->testimony.instructions_taken);
    cr_expect(!c.r[1]->testimony.instructions_taken && !c.r[2]->testimony.instructions_taken);
    cr_expect(strstr(c.r[1]->testimony.instructions_reason, "part1 row " XB ": CUPTI"), "%s",
              c.r[1]->testimony.instructions_reason);
    cr_expect(strstr(c.r[2]->testimony.instructions_reason, "part1 row " XD ": CUPTI"), "%s",
              c.r[2]->testimony.instructions_reason);
    classroom_free(&c);
    instrproc_free(ip);
}

Test(instrgroups, a_row_that_crashes_the_server_costs_its_group_that_row_and_the_rest_are_asked_again) {
    setenv("FAKE_INSTR_SERVER", "crash-table-0-row-2", 1); /* only group 1's table has a third row */
    struct instrproc *ip = profiler();
    struct classroom c;
    profile_groups(ip, &c);
    cr_expect(c.r[0]->testimony.instructions_taken, "%s", c.r[0]->testimony.instructions_reason);
    cr_expect(c.r[1]->testimony.instructions_taken, "answered before the crash: %s",
              c.r[1]->testimony.instructions_reason);
    cr_expect(c.r[3]->testimony.instructions_taken, "asked again: %s", c.r[3]->testimony.instructions_reason);
    cr_expect(!c.r[2]->testimony.instructions_taken);
    cr_expect(strstr(c.r[2]->testimony.instructions_reason, "part1 row " XD ": "), "%s",
              c.r[2]->testimony.instructions_reason);
    cr_expect(logged_tail(" parts 3 0:0,0:1|0:0,0:1,0:2|0:0,0:1"));
    cr_expect(logged_tail(" 0:2"), "the crashing row asked again alone");
    cr_expect(logged_tail(" 0:0,0:1"), "the unanswered group asked on its own");
    classroom_free(&c);
    instrproc_free(ip);
}

Test(instrgroups, with_no_server_a_process_per_group) {
    setenv("DV_INSTRUCTIONS_SERVER", "off", 1);
    struct instrproc *ip = profiler();
    struct classroom c;
    profile_groups(ip, &c);
    cr_expect_eq(instrproc_children(ip), 3);
    cr_expect_eq(logged("start"), 0, "no server started");
    for (unsigned i = 0; i < 4; i++)
        cr_expect(c.r[i]->testimony.instructions_taken, "reader %u: %s", i, c.r[i]->testimony.instructions_reason);
    cr_expect_eq(instr_test_profiled_as(c.r[2], XD), 2);
    classroom_free(&c);
    instrproc_free(ip);
}
