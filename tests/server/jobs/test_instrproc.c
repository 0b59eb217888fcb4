/* test_instrproc.c -- a report's instruction profiles from processes of
 * their own: the cache, and every way such a process can fail, each of which
 * leaves its row null with the reason while the job goes on.
 *
 * These take the one-process-per-job path (DV_INSTRUCTIONS_SERVER=off; the
 * profiling server's are test_instrserve.c's). The process is
 * tests/support/fake_instructions.sh (what it answers is
 * chosen by $FAKE_INSTRUCTIONS), so these run without a GPU; the real
 * command's counts are test_gpu_instructions.c's. Processes and deadlines:
 * run 20 times in a row after a change.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/options.h"
#include "kernels/base/timeutil.h"
#include "kernels/model/listing/listing.h"
#include "kernels/model/model/plan.h"
#include "server/jobs/instrproc.h"
#include "tests/support/instr_reports.h"
#include "tests/support/readfile.h"

#define FAKE DV_TEST_SOURCE_DIR "/tests/support/fake_instructions.sh"

static char log_path[256];

static void setup(void) {
    signal(SIGPIPE, SIG_IGN);
    snprintf(log_path, sizeof log_path, "/tmp/dv-fake-instructions-%ld.log", (long)getpid());
    unlink(log_path);
    setenv("FAKE_INSTRUCTIONS_LOG", log_path, 1);
    unsetenv("FAKE_INSTRUCTIONS");
    /* A process per job, the way back from the profiling server
     * (test_instrserve.c has the server's). */
    setenv("DV_INSTRUCTIONS_SERVER", "off", 1);
}

static void teardown(void) { unlink(log_path); }

TestSuite(instrproc, .init = setup, .fini = teardown);

/* Processes started, from the fake's log (a line each). */
static unsigned started(void) {
    char *s = readfile(log_path, NULL);
    unsigned n = 0;
    for (const char *p = s; p && *p; p++) n += *p == '\n';
    free(s);
    return n;
}

/* Whether the fake's log has line `line`, whole. */
static int logged(const char *line) {
    char *s = readfile(log_path, NULL);
    const size_t n = strlen(line);
    int found = 0;
    for (const char *p = s; p && *p && !found; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
        found = strncmp(p, line, n) == 0 && p[n] == '\n';
    free(s);
    return found;
}

static struct dv_options lesson(void) {
    struct dv_options o;
    experiment_defaults(&o);
    o.instructions = 1;
    return o;
}

static unsigned rows_of(const struct dv_report *r) {
    unsigned n = 0;
    for (unsigned i = 0; i < r->ntables; i++) n += r->tables[i].nrows;
    return n;
}

static struct instrproc *profiler(double deadline_ms) {
    struct instrproc_config c = {.exe = FAKE, .deadline_ms = deadline_ms};
    char err[ERR_LEN];
    struct instrproc *ip = instrproc_create(&c, err);
    cr_assert_not_null(ip, "%s", err);
    return ip;
}

Test(instrproc, every_row_is_profiled_and_an_identical_launch_is_served_from_the_cache) {
    struct dv_options o = lesson();
    struct instrproc *ip = profiler(5000);
    struct dv_report *r = instr_test_measured(&o);
    const unsigned n = rows_of(r);
    instrproc_report(ip, &o, r);
    const struct dv_testimony *tm = &r->testimony;
    cr_expect(tm->instructions_requested);
    cr_expect(tm->instructions_taken, "%s", tm->instructions_reason);
    cr_expect_str_eq(tm->instructions_reason, "");
    cr_expect_eq(tm->instructions_cached_rows, 0);
    cr_expect_eq(instrproc_children(ip), 1, "one process for the job's %u rows", n);
    cr_expect_eq(started(), 1);
    cr_expect(logged("rows 0:0,0:1,0:2,0:3,1:0,1:1,1:2"), "every row in one process, in order");
    const double share = r->tables[0].rows[0].instructions ? r->tables[0].rows[0].instructions->collect_ms : 0;
    for (unsigned i = 0; i < r->ntables; i++)
        for (unsigned j = 0; j < r->tables[i].nrows; j++) {
            const struct listing *l = r->tables[i].rows[j].instructions;
            cr_assert_not_null(l, "%s row %u", r->tables[i].id, j);
            cr_expect(!l->cached);
            cr_expect_eq(l->process_rows, n, "the worker counts the rows the process profiled");
            cr_expect(l->collect_ms > 0 && l->collect_ms != 1.5 && l->collect_ms == share,
                      "each row's share of the worker's own wall time of the process (%.3f), not the child's figure",
                      l->collect_ms);
            cr_expect_eq(l->runs[0].line, j, "the answer line of row %u is its own", j);
        }
    cr_expect_gt(tm->instructions_ms, 0);

    /* The same job again: nothing started, every row from the cache. */
    struct dv_report *again = instr_test_measured(&o);
    const double t0 = timeutil_now_ms();
    instrproc_report(ip, &o, again);
    const double ms = timeutil_now_ms() - t0;
    cr_expect_eq(instrproc_children(ip), 1, "no new process");
    cr_expect_eq(again->testimony.instructions_cached_rows, n);
    cr_expect(again->testimony.instructions_taken);
    for (unsigned i = 0; i < again->ntables; i++)
        for (unsigned j = 0; j < again->tables[i].nrows; j++) {
            const struct listing *l = again->tables[i].rows[j].instructions;
            cr_assert_not_null(l);
            cr_expect(l->cached, "labelled as from an identical launch");
            cr_expect_str_eq(l->collected_utc, "2026-12-01T12:00:00Z", "with the time it was collected");
            cr_expect_eq(l->runs[0].line, j);
        }
    printf("instrproc: %u rows from the cache in %.3f ms\n", n, ms);
    experiment_report_free(again);

    /* Another predicate is another key: one new process, the rest cached. */
    struct dv_options other = o;
    snprintf(other.predicates[0], sizeof other.predicates[0], "first-16");
    struct dv_report *third = instr_test_measured(&other);
    instrproc_report(ip, &other, third);
    cr_expect_eq(instrproc_children(ip), 2);
    cr_expect(logged("row 0"), "a single row is asked for with --table and --row");
    cr_expect_eq(third->testimony.instructions_cached_rows, n - 1);
    cr_expect_eq(third->tables[0].rows[0].instructions->process_rows, 1);
    experiment_report_free(third);
    experiment_report_free(r);
    instrproc_free(ip);
}

/* Every row null, the reason the first row's, the call returns. */
static void expect_all_null(const struct dv_report *r, const char *reason) {
    for (unsigned i = 0; i < r->ntables; i++)
        for (unsigned j = 0; j < r->tables[i].nrows; j++)
            cr_expect_null(r->tables[i].rows[j].instructions, "%s row %u", r->tables[i].id, j);
    cr_expect(!r->testimony.instructions_taken);
    cr_expect(strstr(r->testimony.instructions_reason, reason) != NULL, "reason \"%s\" lacks \"%s\"",
              r->testimony.instructions_reason, reason);
    cr_expect(strncmp(r->testimony.instructions_reason, "part1 row lane-parity: ", 23) == 0, "names the row: %s",
              r->testimony.instructions_reason);
}

Test(instrproc, a_refusal_a_crash_or_garbage_leaves_the_row_null_with_the_reason) {
    static const struct {
        const char *mode, *reason;
    } cases[] = {
        {"refuse", "does not support SASS metrics"},
        {"crash", "the profiling process signal 11"},
        {"garbage", "ended with exit status 0, with no answer: Segmentation fault in a library"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        setenv("FAKE_INSTRUCTIONS", cases[k].mode, 1);
        struct dv_options o = lesson();
        struct instrproc *ip = profiler(5000);
        struct dv_report *r = instr_test_measured(&o);
        instrproc_report(ip, &o, r);
        expect_all_null(r, cases[k].reason);
        /* A refusal is an answer for every row. A process that ended with
         * none has its first row asked alone and the others together again:
         * three such processes in a row are every row's fate. */
        cr_expect_eq(instrproc_children(ip), k == 0 ? 1u : 3u, "%s: not asked again row by row", cases[k].mode);
        experiment_report_free(r);
        instrproc_free(ip);
    }
}

/* The lesson's job on a new profiler whose processes answer as `mode` says
 * (fake_instructions.sh). */
static struct dv_report *lesson_job(const char *mode, struct instrproc **ip) {
    setenv("FAKE_INSTRUCTIONS", mode, 1);
    struct dv_options o = lesson();
    *ip = profiler(5000);
    struct dv_report *r = instr_test_measured(&o);
    instrproc_report(*ip, &o, r);
    return r;
}

Test(instrproc, a_crash_costs_only_its_own_row) {
    struct instrproc *ip = NULL;
    struct dv_report *r = lesson_job("crash-table-0-row-1", &ip);
    cr_expect_not_null(r->tables[0].rows[0].instructions);
    cr_expect_null(r->tables[0].rows[1].instructions);
    cr_expect_not_null(r->tables[0].rows[2].instructions);
    cr_expect_not_null(r->tables[1].rows[1].instructions, "Part 2's row 1 is another table's");
    cr_expect(!r->testimony.instructions_taken);
    cr_expect(strstr(r->testimony.instructions_reason, "part1 row lane-half: the profiling process signal 11"),
              "%s", r->testimony.instructions_reason);
    cr_expect_eq(instrproc_children(ip), 3, "the job's process, the row it ended at alone, then the rest together");
    cr_expect_eq(r->tables[0].rows[0].instructions->process_rows, 1, "row 0's answer came before the crash");
    experiment_report_free(r);
    instrproc_free(ip);
}

Test(instrproc, a_crash_at_the_first_row_costs_only_that_row_too) {
    struct instrproc *ip = NULL;
    struct dv_report *r = lesson_job("crash-table-0-row-0", &ip);
    cr_expect_null(r->tables[0].rows[0].instructions);
    for (unsigned i = 0; i < r->ntables; i++)
        for (unsigned j = i == 0 ? 1 : 0; j < r->tables[i].nrows; j++)
            cr_expect_not_null(r->tables[i].rows[j].instructions, "%s row %u", r->tables[i].id, j);
    cr_expect(strstr(r->testimony.instructions_reason, "part1 row lane-parity: the profiling process signal 11"),
              "%s", r->testimony.instructions_reason);
    cr_expect_eq(instrproc_children(ip), 3, "all rows (ended at the first), the first alone, the others together");
    cr_expect(logged("rows 0:1,0:2,0:3,1:0,1:1,1:2"), "the others in one process");
    experiment_report_free(r);
    instrproc_free(ip);
}

Test(instrproc, a_row_without_records_beside_others_is_asked_again_alone) {
    struct instrproc *ip = NULL;
    struct dv_report *r = lesson_job("trap-table-0-row-1", &ip);
    const unsigned n = rows_of(r);
    cr_expect(r->testimony.instructions_taken, "%s", r->testimony.instructions_reason);
    cr_expect_eq(instrproc_children(ip), 2, "the job's process, then row 0/1 alone");
    cr_expect(logged("row 1"), "row 1 on its own");
    const struct listing *l = r->tables[0].rows[1].instructions;
    cr_assert_not_null(l, "its profile from the second process");
    cr_expect_eq(l->process_rows, 1);
    cr_expect_eq(r->tables[0].rows[0].instructions->process_rows, n - 1, "the others shared the first");
    experiment_report_free(r);
    instrproc_free(ip);
}

Test(instrproc, a_hung_process_is_killed_at_its_deadline_and_the_job_goes_on) {
    setenv("FAKE_INSTRUCTIONS", "hang", 1);
    struct dv_options o = lesson();
    struct instrproc *ip = profiler(300);
    struct dv_report *r = instr_test_measured(&o);
    const double t0 = timeutil_now_ms();
    instrproc_report(ip, &o, r);
    const double ms = timeutil_now_ms() - t0;
    /* 7 rows in one process: the deadline of one and a quarter more per further row. */
    expect_all_null(r, "killed after 750 ms (its deadline)");
    cr_expect_eq(instrproc_children(ip), 1, "after one hang the others are not started");
    cr_expect(ms < 3000, "%.0f ms: one deadline, not one per row", ms);
    experiment_report_free(r);
    /* The next job tries again. */
    unsetenv("FAKE_INSTRUCTIONS");
    r = instr_test_measured(&o);
    instrproc_report(ip, &o, r);
    cr_expect(r->testimony.instructions_taken, "%s", r->testimony.instructions_reason);
    experiment_report_free(r);
    instrproc_free(ip);
}

Test(instrproc, over_the_cap_and_not_requested_are_null_with_the_reason_scenario_rows_profiled) {
    struct dv_options o = lesson();
    o.part = DV_PART_1;
    o.npredicates = 2;
    snprintf(o.predicates[0], sizeof o.predicates[0], "blockIdx.x < 7");
    snprintf(o.predicates[1], sizeof o.predicates[1], "warp-parity");
    snprintf(o.baseline, sizeof o.baseline, "warp-parity");
    o.blocks = 65536; /* its whole grid: 65536 x 256 x 4096 thread-iterations */
    struct instrproc *ip = profiler(5000);
    struct dv_report *r = instr_test_measured(&o);
    instrproc_report(ip, &o, r);
    cr_expect_null(r->tables[0].rows[0].instructions);
    cr_expect_not_null(r->tables[0].rows[1].instructions, "the other row has its profile");
    cr_expect(strstr(r->testimony.instructions_reason, "part1 row blockIdx.x < 7: over the cost cap"), "%s",
              r->testimony.instructions_reason);
    cr_expect_eq(instrproc_children(ip), 1, "no process for the row over the cap");
    experiment_report_free(r);

    struct dv_options s = lesson();
    s.part = DV_PART_1;
    snprintf(s.scenario, sizeof s.scenario, "even-2way");
    s.budget_ms = 100;
    r = instr_test_measured(&s);
    const unsigned before = started();
    instrproc_report(ip, &s, r);
    /* A scenario table's rows are profiled like any other: one process for
     * the three rows, each with its profile. */
    cr_expect(r->testimony.instructions_taken, "%s", r->testimony.instructions_reason);
    for (unsigned j = 0; j < r->tables[0].nrows; j++) cr_expect_not_null(r->tables[0].rows[j].instructions);
    cr_expect_eq(started(), before + 1);
    cr_expect(logged("rows 0:0,0:1,0:2"), "one process for the table's rows");
    experiment_report_free(r);

    struct dv_options off = lesson();
    off.instructions = 0;
    r = instr_test_measured(&off);
    instrproc_report(ip, &off, r);
    cr_expect(!r->testimony.instructions_requested);
    cr_expect_str_eq(r->testimony.instructions_reason, "not requested (instructions: true asks for it)");
    cr_expect_null(r->tables[0].rows[0].instructions);
    experiment_report_free(r);
    /* No profiler at all (it could not be made): the reason, no crash. */
    o = lesson();
    r = instr_test_measured(&o);
    instrproc_report(NULL, &o, r);
    cr_expect(strstr(r->testimony.instructions_reason, "no profiler"), "%s", r->testimony.instructions_reason);
    experiment_report_free(r);
    instrproc_free(ip);
}

Test(instrproc, a_program_that_cannot_start_is_the_rows_reason) {
    struct instrproc_config c = {.exe = "/nonexistent/divergence-gpu"};
    char err[ERR_LEN];
    struct instrproc *ip = instrproc_create(&c, err);
    cr_assert_not_null(ip, "%s", err);
    struct dv_options o = lesson();
    struct dv_report *r = instr_test_measured(&o);
    instrproc_report(ip, &o, r);
    expect_all_null(r, "could not start: subproc: cannot run /nonexistent/divergence-gpu");
    experiment_report_free(r);
    instrproc_free(ip);
}

/* The hook the worker lets go of its own CUPTI profiler in: called before
 * every process that profiles, and never for a row served from the cache
 * (a holder of the profiler makes the child's SASS metrics refused). */
static unsigned hook_calls, hook_children_at_call;
static struct instrproc *hook_ip;
static void count_hook(void *ctx) {
    hook_calls++;
    hook_children_at_call = instrproc_children(hook_ip);
    cr_expect_eq(ctx, &hook_calls, "the caller's context");
}

Test(instrproc, the_hook_runs_before_each_profiling_process_and_not_for_the_cache) {
    struct dv_options o = lesson();
    char err[ERR_LEN];
    struct instrproc_config c = {.exe = FAKE, .deadline_ms = 5000, .before_child = count_hook,
                                 .before_child_ctx = &hook_calls};
    hook_ip = instrproc_create(&c, err);
    cr_assert_not_null(hook_ip, "%s", err);
    hook_calls = hook_children_at_call = 0;
    struct dv_report *r = instr_test_measured(&o);
    const unsigned n = rows_of(r);
    instrproc_report(hook_ip, &o, r);
    cr_expect_eq(hook_calls, 1, "once per process (one for the %u rows)", n);
    cr_expect_eq(started(), 1, "the rows' process started");
    cr_expect_eq(hook_children_at_call, 1, "the call came with the process");
    struct dv_report *again = instr_test_measured(&o);
    instrproc_report(hook_ip, &o, again);
    cr_expect_eq(again->testimony.instructions_cached_rows, n);
    cr_expect_eq(hook_calls, 1, "not called for rows from the cache");
    experiment_report_free(again);
    experiment_report_free(r);
    instrproc_free(hook_ip);
}

/* Job `o` on `ip`: how many of its rows came from the cache. */
static unsigned cached_rows(struct instrproc *ip, struct dv_options *o) {
    struct dv_report *r = instr_test_measured(o);
    instrproc_report(ip, o, r);
    cr_expect(r->testimony.instructions_taken, "%s", r->testimony.instructions_reason);
    const unsigned n = r->testimony.instructions_cached_rows;
    experiment_report_free(r);
    return n;
}

/* The cache holds cache_entries profiles; a new one takes the place of the
 * least recently used (not of the first kept). The lesson's 7 rows fill 7
 * entries; a job with another first predicate shares the other 6. */
Test(instrproc, past_its_entries_the_least_recently_used_profile_leaves_the_cache) {
    struct dv_options a = lesson(), b = lesson();
    snprintf(b.predicates[0], sizeof b.predicates[0], "first-16");
    struct instrproc_config c = {.exe = FAKE, .deadline_ms = 5000, .cache_entries = 7};
    char err[ERR_LEN];
    struct instrproc *ip = instrproc_create(&c, err);
    cr_assert_not_null(ip, "%s", err);
    cr_expect_eq(cached_rows(ip, &a), 0);
    cr_expect_eq(cached_rows(ip, &b), 6, "b's row 0 takes a's row 0's place (used least recently)");
    cr_expect_eq(cached_rows(ip, &a), 6, "a's row 0 was gone; it takes b's row 0's place");
    cr_expect_eq(cached_rows(ip, &b), 6, "b's row 0 was gone, not a's row 1 (the first kept of the rest)");
    cr_expect_eq(instrproc_children(ip), 4);
    char *log = readfile(log_path, NULL);
    cr_expect_str_eq(log, "rows 0:0,0:1,0:2,0:3,1:0,1:1,1:2\nrow 0\nrow 0\nrow 0\n");
    free(log);
    instrproc_free(ip);

    /* One entry more: both jobs' rows fit, and nothing is asked again. */
    c.cache_entries = 8;
    ip = instrproc_create(&c, err);
    cr_assert_not_null(ip, "%s", err);
    cr_expect_eq(cached_rows(ip, &a), 0);
    cr_expect_eq(cached_rows(ip, &b), 6);
    cr_expect_eq(cached_rows(ip, &a), 7);
    cr_expect_eq(cached_rows(ip, &b), 7);
    cr_expect_eq(instrproc_children(ip), 2);
    instrproc_free(ip);
}

/* ---- the cache on disk ---------------------------------------------------- */

static struct instrproc *profiler_in(const char *exe, const char *dir) {
    struct instrproc_config c = {.exe = exe, .deadline_ms = 5000, .cache_dir = dir};
    char err[ERR_LEN];
    struct instrproc *ip = instrproc_create(&c, err);
    cr_assert_not_null(ip, "%s", err);
    return ip;
}

Test(instrproc, a_new_worker_of_the_same_binary_serves_what_an_earlier_one_collected) {
    char dir[64], other[128], cmd[512];
    snprintf(dir, sizeof dir, "/tmp/dv-instr-disk-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
    struct dv_options o = lesson();
    struct instrproc *ip = profiler_in(FAKE, dir);
    struct dv_report *r = instr_test_measured(&o);
    const unsigned n = rows_of(r);
    instrproc_report(ip, &o, r);
    cr_assert(r->testimony.instructions_taken, "%s", r->testimony.instructions_reason);
    cr_expect_eq(instrproc_children(ip), 1);
    instrproc_free(ip);
    snprintf(cmd, sizeof cmd, "ls %s/*/fake-disassembly.sass > /dev/null", dir);
    cr_expect_eq(system(cmd), 0, "the disassembly is kept in the binary's folder too");

    /* A new worker: nothing started, every row from the folder, labelled. */
    ip = profiler_in(FAKE, dir);
    struct dv_report *again = instr_test_measured(&o);
    instrproc_report(ip, &o, again);
    cr_expect_eq(instrproc_children(ip), 0, "no process: the kernels' identities and the profiles were kept");
    cr_expect_eq(again->testimony.instructions_cached_rows, n);
    cr_expect(again->testimony.instructions_taken, "%s", again->testimony.instructions_reason);
    for (unsigned i = 0; i < again->ntables; i++)
        for (unsigned j = 0; j < again->tables[i].nrows; j++) {
            const struct listing *a = r->tables[i].rows[j].instructions, *b = again->tables[i].rows[j].instructions;
            cr_assert(a && b, "%s row %u", again->tables[i].id, j);
            cr_expect(b->cached, "served as from an identical launch");
            cr_expect_str_eq(b->collected_utc, a->collected_utc);
            cr_expect_eq(b->runs[0].line, a->runs[0].line, "the row's own profile");
            cr_expect_eq(b->nruns, a->nruns);
        }
    instrproc_free(ip);
    experiment_report_free(again);

    /* Another binary (a copy with other bytes) finds nothing of it. */
    snprintf(other, sizeof other, "%s-other.sh", dir);
    snprintf(cmd, sizeof cmd, "cp %s %s && echo '# another build' >> %s", FAKE, other, other);
    cr_assert_eq(system(cmd), 0);
    ip = profiler_in(other, dir);
    again = instr_test_measured(&o);
    instrproc_report(ip, &o, again);
    cr_expect_eq(instrproc_children(ip), 1, "another binary profiles anew");
    cr_expect_eq(again->testimony.instructions_cached_rows, 0);
    instrproc_free(ip);
    experiment_report_free(again);
    experiment_report_free(r);
    unlink(other);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_expect_eq(system(cmd), 0);
}

Test(instrproc, kept_files_that_do_not_read_or_a_folder_that_cannot_be_used_cost_a_profile_not_the_job) {
    char dir[64], cmd[512];
    snprintf(dir, sizeof dir, "/tmp/dv-instr-disk-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
    struct dv_options o = lesson();
    struct instrproc *ip = profiler_in(FAKE, dir);
    struct dv_report *r = instr_test_measured(&o);
    instrproc_report(ip, &o, r);
    instrproc_free(ip);
    experiment_report_free(r);
    /* Every kept file torn. */
    snprintf(cmd, sizeof cmd, "for f in %s/*/*.json; do printf '{\"key\":' > \"$f\"; done", dir);
    cr_assert_eq(system(cmd), 0);
    ip = profiler_in(FAKE, dir);
    r = instr_test_measured(&o);
    instrproc_report(ip, &o, r);
    cr_expect(r->testimony.instructions_taken, "%s", r->testimony.instructions_reason);
    cr_expect_eq(instrproc_children(ip), 1, "collected again");
    instrproc_free(ip);
    experiment_report_free(r);
    ip = profiler_in(FAKE, dir);
    r = instr_test_measured(&o);
    instrproc_report(ip, &o, r);
    cr_expect_eq(instrproc_children(ip), 0, "and kept again");
    instrproc_free(ip);
    experiment_report_free(r);

    /* A folder under a file: memory alone, the job as before. */
    snprintf(cmd, sizeof cmd, "%s/a-file", dir);
    FILE *f = fopen(cmd, "w");
    cr_assert_not_null(f);
    fclose(f);
    strcat(cmd, "/cache");
    ip = profiler_in(FAKE, cmd);
    r = instr_test_measured(&o);
    instrproc_report(ip, &o, r);
    cr_expect(r->testimony.instructions_taken, "%s", r->testimony.instructions_reason);
    cr_expect_eq(instrproc_children(ip), 1);
    instrproc_free(ip);
    experiment_report_free(r);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_expect_eq(system(cmd), 0);
}

/* A row answered "ok" with a profile that is not whole (`{}`, or a region
 * whose runs do not add up to it) is refused with the reason, and reaches
 * neither the memory cache nor the disk: the next job asks a process again,
 * and the folder holds no profile. */
Test(instrproc, a_profile_that_does_not_add_up_is_refused_and_never_cached) {
    static const struct {
        const char *mode, *reason;
    } cases[] = {
        {"empty", "answer is refused: instructions.regions: none"},
        {"unbalanced", "answer is refused: instructions.regions[0].instructions: 5, but its runs add up to 1"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char dir[64], cmd[256];
        snprintf(dir, sizeof dir, "/tmp/dv-instr-disk-XXXXXX");
        cr_assert_not_null(mkdtemp(dir));
        setenv("FAKE_INSTRUCTIONS", cases[k].mode, 1);
        struct dv_options o = lesson();
        struct instrproc *ip = profiler_in(FAKE, dir);
        struct dv_report *r = instr_test_measured(&o);
        instrproc_report(ip, &o, r);
        expect_all_null(r, cases[k].reason);
        experiment_report_free(r);
        snprintf(cmd, sizeof cmd, "ls %s/*/*.json > /dev/null 2>&1", dir);
        cr_expect_neq(system(cmd), 0, "%s: a profile was kept on disk", cases[k].mode);
        const unsigned before = instrproc_children(ip);
        unsetenv("FAKE_INSTRUCTIONS");
        r = instr_test_measured(&o);
        instrproc_report(ip, &o, r);
        cr_expect(r->testimony.instructions_taken, "%s", r->testimony.instructions_reason);
        cr_expect_eq(instrproc_children(ip), before + 1, "%s: served from memory", cases[k].mode);
        cr_expect_eq(r->testimony.instructions_cached_rows, 0);
        experiment_report_free(r);
        instrproc_free(ip);
        snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
        cr_expect_eq(system(cmd), 0);
    }
}

/* ---- a batch's profiles ------------------------------------------------------ */

#define XA "(threadIdx.x % 3) < 1"
#define XB "(threadIdx.x % 5) < 2"
#define XD "(threadIdx.x % 7) < 4"

/* Three readers (two of one predicate, with their own targets): one
 * process for their three distinct rows, each reader's rows with the
 * profiles of its own rows; a later batch finds the rows it shares in the
 * cache and sends only its new row to a process. */
Test(instrproc, a_batchs_rows_go_to_one_process_and_each_reader_gets_its_own) {
    struct instrproc *ip = profiler(5000);
    struct dv_options o[3] = {instr_test_widget(XA, 0.005), instr_test_widget(XB, 0.005), instr_test_widget(XA, 0.001)};
    struct dv_report *r[3];
    const struct dv_options *op[3];
    for (unsigned i = 0; i < 3; i++) {
        r[i] = instr_test_measured(&o[i]);
        op[i] = &o[i];
    }
    instrproc_report_batch(ip, op, r, 3);
    cr_expect_eq(instrproc_children(ip), 1, "one process for the batch");
    cr_expect(logged("rows 0:0,0:1,0:2"), "the three distinct rows in one table");
    for (unsigned i = 0; i < 3; i++) {
        cr_expect(r[i]->testimony.instructions_taken, "reader %u: %s", i, r[i]->testimony.instructions_reason);
        cr_expect_eq(r[i]->testimony.instructions_cached_rows, 0);
    }
    cr_expect_eq(instr_test_profiled_as(r[0], XA), 0);
    cr_expect_eq(instr_test_profiled_as(r[0], DV_DEFAULT_BASELINE), 1);
    cr_expect_eq(instr_test_profiled_as(r[1], XB), 2, "reader 1's row is its own, not reader 0's");
    cr_expect_eq(instr_test_profiled_as(r[1], DV_DEFAULT_BASELINE), 1);
    cr_expect_eq(instr_test_profiled_as(r[2], XA), 0);
    struct dv_options o2[2] = {instr_test_widget(XA, 0.004), instr_test_widget(XD, 0.005)};
    struct dv_report *r2[2] = {instr_test_measured(&o2[0]), instr_test_measured(&o2[1])};
    const struct dv_options *op2[2] = {&o2[0], &o2[1]};
    instrproc_report_batch(ip, op2, r2, 2);
    cr_expect_eq(instrproc_children(ip), 2);
    cr_expect(logged("row 2"), "only the new row goes to a process");
    cr_expect_eq(r2[0]->testimony.instructions_cached_rows, 2, "both of reader 0's rows from the cache");
    cr_expect_eq(r2[1]->testimony.instructions_cached_rows, 1, "the baseline from the cache, its own row new");
    cr_expect(r2[1]->testimony.instructions_taken, "%s", r2[1]->testimony.instructions_reason);
    for (unsigned i = 0; i < 3; i++) experiment_report_free(r[i]);
    for (unsigned i = 0; i < 2; i++) experiment_report_free(r2[i]);
    instrproc_free(ip);
}

/* Rows without a profile: each reader's reason names its own row, never
 * another reader's. */
Test(instrproc, a_batch_readers_reason_names_its_own_row) {
    setenv("FAKE_INSTRUCTIONS", "refuse", 1);
    struct instrproc *ip = profiler(5000);
    struct dv_options o[2] = {instr_test_widget(XA, 0.005), instr_test_widget(XB, 0.005)};
    struct dv_report *r[2] = {instr_test_measured(&o[0]), instr_test_measured(&o[1])};
    const struct dv_options *op[2] = {&o[0], &o[1]};
    instrproc_report_batch(ip, op, r, 2);
    cr_expect_eq(instrproc_children(ip), 1);
    cr_expect(!r[1]->testimony.instructions_taken);
    cr_expect(strstr(r[1]->testimony.instructions_reason, "part1 row " XB ": CUPTI"), "%s",
              r[1]->testimony.instructions_reason);
    cr_expect(!strstr(r[1]->testimony.instructions_reason, XA), "reader 1 told of reader 0's row: %s",
              r[1]->testimony.instructions_reason);
    cr_expect(strstr(r[0]->testimony.instructions_reason, "part1 row " XA ": CUPTI"), "%s",
              r[0]->testimony.instructions_reason);
    for (unsigned i = 0; i < 2; i++) experiment_report_free(r[i]);
    instrproc_free(ip);
}

/* Readers that did not run one grid are never profiled as one table: each
 * on its own, on its own grid. */
Test(instrproc, a_batch_of_other_grids_goes_reader_by_reader) {
    struct instrproc *ip = profiler(5000);
    struct dv_options o[2] = {instr_test_widget(XA, 0.005), instr_test_widget(XB, 0.005)};
    o[1].blocks = 1024;
    struct dv_report *r[2] = {instr_test_measured(&o[0]), instr_test_measured(&o[1])};
    const struct dv_options *op[2] = {&o[0], &o[1]};
    instrproc_report_batch(ip, op, r, 2);
    cr_expect_eq(instrproc_children(ip), 2, "a process for each reader's grid");
    cr_expect(r[0]->testimony.instructions_taken && r[1]->testimony.instructions_taken);
    for (unsigned i = 0; i < 2; i++) experiment_report_free(r[i]);
    instrproc_free(ip);
}

/* A data-sort request: the shading rows of every cell (naive, index,
 * shade-sorted) go to the process, in order; sort+shade and sort, whose
 * launches are CUB's kernels, have no profile by design: not asked for, no
 * failure of the testimony's (taken, no reason). */
Test(instrproc, a_data_sort_requests_shading_rows_are_profiled_and_cubs_rows_are_not_asked) {
    struct dv_options o;
    char err[ERR_LEN] = "";
    experiment_defaults(&o);
    snprintf(o.scenario, sizeof o.scenario, "data-sort");
    o.blocks = 8;
    o.instructions = 1;
    cr_assert_eq(options_validate(&o, OPTIONS_JSON, NULL, err), 0, "%s", err);
    struct instrproc *ip = profiler(5000);
    struct dv_report *r = instr_test_measured(&o);
    cr_assert_eq(r->ntables, 12);
    instrproc_report(ip, &o, r);
    const struct dv_testimony *tm = &r->testimony;
    cr_expect(tm->instructions_taken, "%s", tm->instructions_reason);
    cr_expect_str_eq(tm->instructions_reason, "");
    cr_expect_eq(started(), 1, "one process for the job's shading rows");
    char want[512] = "rows ";
    size_t at = strlen(want);
    for (unsigned t = 0; t < 12; t++)
        at += (size_t)snprintf(want + at, sizeof want - at, "%s%u:1,%u:2,%u:3", t ? "," : "", t, t, t);
    cr_expect(logged(want), "the shading rows of every cell, in order: %s", want);
    for (unsigned t = 0; t < r->ntables; t++)
        for (unsigned j = 0; j < r->tables[t].nrows; j++) {
            const int shading = j == 1 || j == 2 || j == 3;
            cr_expect_eq(r->tables[t].rows[j].instructions != NULL, shading, "%s %s", r->tables[t].id,
                         r->tables[t].rows[j].name);
        }
    experiment_report_free(r);
    instrproc_free(ip);
}
