/* test_gpu_instructions.c -- the instruction profiles on a GPU, through the
 * real worker: `divergence-gpu worker` on its two pipes (jobs/wire.h), the
 * rows' profiles from its `divergence-gpu instructions --serve` child
 * (jobs/instrserve.h), or from the one-shot command where a test runs it.
 *
 * Label gpu; skips with the worker's reason where there is no GPU. For the
 * lesson's seven rows and a dozen custom predicates (2D blocks, partial
 * warps, blockIdx.x-dependent), every row must show:
 *   - the FFMA thread executions (predicated on) of each path, summed over
 *     the grid, equal to the lanes the witness saw on that path times the
 *     FMAs each lane runs per visit (4096 in Part 1, 1 per iteration in
 *     Part 2): threads on the path x iterations, exactly;
 *   - where the path branches (unguarded FFMAs), each FFMA's active lanes
 *     per execution equal to the witness's lanes per run of that path;
 *     where the compiler predicated it, guarded FFMAs issued with 32 lanes;
 *   - at least 95% of its instructions on a source line.
 * The same job again is served from the cache; the reduced grid's counts
 * equal the whole grid's; Nsight Compute's Source page agrees cell by cell
 * (where ncu is installed); the timed medians do not move with profiles on.
 * The data-sort rows: each material's path at the mean lanes the CPU
 * counts over the same materials (the_data_sort_rows_are_profiled_...).
 * It prints the rows' listings and figures: the evidence.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "api/jsonout.h"
#include "api/report.h"
#include "kernels/model/listing/listing.h"
#include "kernels/model/listing/listing_shape.h"
#include "kernels/model/model/intensity.h"
#include "kernels/model/model/scenario.h"
#include "kernels/model/model/scenario_table.h"
#include "kernels/model/model/sortexp.h"
#include "server/core/subproc.h"
#include "server/jobs/wire.h"

#define GPU_BINARY DV_TEST_BUILD_DIR "/divergence-gpu"

struct conn {
    pid_t pid;
    int to, from;
    unsigned jobs;
};

static void stop_worker(struct conn *c);

/* `divergence-gpu worker [extra]` with its pipes; 0, or 1 (the skip line
 * printed, the worker stopped) when its hello reports no GPU. */
static int start_worker(struct conn *c, const char *extra) {
    int in[2], out[2];
    signal(SIGPIPE, SIG_IGN);
    cr_assert_eq(pipe(in), 0);
    cr_assert_eq(pipe(out), 0);
    c->pid = fork();
    cr_assert_geq(c->pid, 0);
    if (c->pid == 0) {
        /* Only its two pipes past stderr: a copy of the other ends (or of
         * the test runner's output) would keep it from ever seeing EOF. */
        int rd = dup(in[0]), wr = dup(out[1]);
        if (rd < 0 || wr < 0 || dup2(rd, WIRE_FD_IN) < 0 || dup2(wr, WIRE_FD_OUT) < 0) _exit(127);
        for (int fd = 5; fd < 1024; fd++) close(fd);
        const char *argv[6] = {GPU_BINARY, "worker", NULL, NULL, NULL, NULL};
        if (extra) {
            argv[2] = "--disassembler";
            argv[3] = extra;
        }
        execv(GPU_BINARY, (char *const *)argv);
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    c->to = in[1];
    c->from = out[0];
    c->jobs = 0;
    char *msg = NULL, err[ERR_LEN];
    size_t len = 0;
    cr_assert_eq(wire_read(c->from, &msg, &len, 120000, err), WIRE_OK, "hello: %s", err);
    json_error_t je;
    json_t *h = jsonout_loads(msg, 0, &je);
    free(msg);
    cr_assert_not_null(h);
    const json_t *dev = json_object_get(h, "device");
    if (!json_is_true(json_object_get(dev, "present"))) {
        const char *why = json_string_value(json_object_get(dev, "reason"));
        printf("SKIPPED: no CUDA device: %s\n", why ? why : "no device");
        fflush(stdout);
        json_decref(h);
        stop_worker(c);
        return 1;
    }
    json_decref(h);
    return 0;
}

static void stop_worker(struct conn *c) {
    close(c->to);
    close(c->from);
    int st;
    waitpid(c->pid, &st, 0);
}

/* One job: its measured document into a new report. */
static struct dv_report *job(struct conn *c, const char *request) {
    char id[16], err[ERR_LEN];
    snprintf(id, sizeof id, "%u", ++c->jobs);
    json_error_t je;
    json_t *req = jsonout_loads(request, JSON_REJECT_DUPLICATES, &je);
    cr_assert_not_null(req, "%s", je.text);
    cr_assert_eq(wire_send(c->to, wire_job(id, req), err), 0, "%s", err);
    char *reply = NULL;
    size_t len = 0;
    cr_assert_eq(wire_read(c->from, &reply, &len, 300000, err), WIRE_OK, "reply: %s", err);
    json_t *o = jsonout_loads(reply, 0, &je);
    free(reply);
    cr_assert_not_null(o);
    cr_assert(json_is_true(json_object_get(o, "ok")), "job failed: %s",
              json_string_value(json_object_get(o, "error")));
    char *doc = jsonout_dumps(json_object_get(o, "document"), JSON_COMPACT);
    json_decref(o);
    struct dv_report *r = experiment_report_create();
    cr_assert_not_null(r);
    cr_assert_eq(report_parse(doc, strlen(doc), r, err), 0, "%s", err);
    free(doc);
    return r;
}

/* The rows' listings as the transcript prints them. */
static void print_listings(const struct dv_report *r) {
    char *t = report_text(r);
    cr_assert_not_null(t);
    const char *from = strstr(t, "GPU's instructions");
    while (from) {
        const char *end = strstr(from + 1, "\n\n");
        const char *next = strstr(from + 1, "GPU's instructions");
        const char *stop = end && (!next || end < next) ? end : next;
        printf("%.*s\n", stop ? (int)(stop - from) : (int)strlen(from), from);
        from = next;
    }
    const char *tl = strstr(t, "\ninstructions: ");
    if (tl) printf("%.*s\n", (int)strcspn(tl + 1, "\n"), tl + 1);
    free(t);
}

/* The checks of the header on every measured row of `r`; prints one line
 * per row. Returns the rows checked. */
static unsigned check_rows(const struct dv_report *r) {
    unsigned n = 0;
    cr_expect(r->testimony.instructions_taken, "%s", r->testimony.instructions_reason);
    for (unsigned i = 0; i < r->ntables; i++)
        for (unsigned j = 0; j < r->tables[i].nrows; j++) {
            const struct dv_row *w = &r->tables[i].rows[j];
            const struct listing *l = w->instructions;
            cr_assert_not_null(l, "%s %s: %s", r->tables[i].id, w->name, r->testimony.instructions_reason);
            cr_expect(w->observed.present, "%s: the witness is the reference", w->name);
            cr_expect_geq(l->mapped, 0.95, "%s: %.3f of instructions on a source line", w->name, l->mapped);
            const unsigned long long per_visit = w->kernel == DV_KERNEL_PERITER ? 1 : r->config.iterations;
            char line[512];
            int at = snprintf(line, sizeof line, "%-12s %-34s", r->tables[i].id, w->name);
            for (int p = 0; p < 2; p++) {
                const enum listing_kind kind = p ? LISTING_PATH_B : LISTING_PATH_A;
                unsigned long long thread, pred_on, count;
                listing_sum(l, kind, "FFMA", &thread, &pred_on, &count);
                const unsigned long long want = w->observed.lanes[p] * per_visit;
                cr_expect_eq(pred_on, want, "%s %s: FFMA thread executions %llu, threads on the path x iterations %llu",
                             w->name, listing_kind_name(kind), pred_on, want);
                double lo = INFINITY, hi = -INFINITY;
                int guarded = 0, executed = 0;
                for (unsigned k = 0; k < l->nruns; k++) {
                    const struct listing_run *run = &l->runs[k];
                    if (run->region != kind || strcmp(run->opcode, "FFMA") != 0 || !run->warp) continue;
                    executed = 1;
                    guarded |= run->guarded;
                    const double lanes = run->guarded ? 32.0 : (double)run->thread / (double)run->warp;
                    if (lanes < lo) lo = lanes;
                    if (lanes > hi) hi = lanes;
                    if (run->guarded)
                        cr_expect(fabs(run->lanes - 32.0) < 1e-12, "%s pc 0x%x: a guarded FFMA issues with %.2f lanes",
                                  w->name, run->pc, run->lanes);
                    else if (w->kernel != DV_KERNEL_NOBRANCH)
                        cr_expect(fabs(lanes - w->observed.lanes_per_run[p]) < 1e-9,
                                  "%s %s pc 0x%x: %.4f lanes per FFMA, the witness %.4f per run", w->name,
                                  listing_kind_name(kind), run->pc, lanes, w->observed.lanes_per_run[p]);
                }
                at += snprintf(line + at, sizeof line - (size_t)at, " | %s FFMA %4llu x pred-on %12llu (witness %12llu) lanes %s",
                               p ? "B" : "A", count, pred_on, want,
                               !executed ? "-" : guarded ? "32 guarded" : "");
                if (executed && !guarded) at += snprintf(line + at, sizeof line - (size_t)at, "%.1f (witness %.1f)", lo,
                                                         w->observed.lanes_per_run[p]);
            }
            printf("%s | mapped %.1f%% | %s %.1f ms%s\n", line, 100.0 * l->mapped, l->cached ? "cached, collected in" : "cold",
                   l->collect_ms, l->disassembler[0] ? "" : " (no SASS text)");
            n++;
        }
    return n;
}

static const char *lesson_request =
    "{\"part\":\"all\",\"predicates\":[\"lane-parity\",\"lane-half\",\"warp-parity\",\"block-parity\",\"first-16\"],"
    "\"budget_ms\":100,\"min_samples\":5,\"max_samples\":100,\"max_noise\":0.5,\"instructions\":true}";

Test(gpu_instructions, the_lessons_seven_rows_and_the_cache, .timeout = 600) {
    struct conn c;
    if (start_worker(&c, NULL)) cr_skip_test("no GPU");
    struct dv_report *r = job(&c, lesson_request);
    print_listings(r);
    cr_expect_eq(check_rows(r), 8, "Part 1's five rows, Part 2's three");
    /* Part 2's lane-parity row: predicated. */
    const struct dv_row *pl = &r->tables[1].rows[1];
    cr_expect_str_eq(pl->name, "per-iteration-lane-parity");
    int guarded = 0;
    for (unsigned k = 0; pl->instructions && k < pl->instructions->nruns; k++)
        guarded |= pl->instructions->runs[k].guarded && strcmp(pl->instructions->runs[k].opcode, "FFMA") == 0;
    printf("per-iteration lane parity: %s; time %.3fx the baseline, instructions %.3fx\n",
           guarded ? "predicated (guarded FFMAs)" : "branching", pl->ratio, pl->counters.inst_vs_baseline);
    double cold = 0, cold_max = 0;
    unsigned rows = 0;
    for (unsigned i = 0; i < r->ntables; i++)
        for (unsigned j = 0; j < r->tables[i].nrows; j++)
            if (r->tables[i].rows[j].instructions) {
                const double ms = r->tables[i].rows[j].instructions->collect_ms;
                cold += ms;
                cold_max = ms > cold_max ? ms : cold_max;
                rows++;
            }
    printf("cold: %u rows, %.1f ms in all, %.1f ms per row on average, %.1f ms the slowest; host %.1f ms\n", rows, cold,
           rows ? cold / rows : 0, cold_max, r->testimony.instructions_ms);
    /* The same job: every row from the cache. */
    struct dv_report *again = job(&c, lesson_request);
    cr_expect_eq(again->testimony.instructions_cached_rows, rows);
    printf("cached: %u rows in %.3f ms host time (%.3f ms per row)\n", again->testimony.instructions_cached_rows,
           again->testimony.instructions_ms, again->testimony.instructions_ms / (rows ? rows : 1));
    for (unsigned i = 0; i < again->ntables; i++)
        for (unsigned j = 0; j < again->tables[i].nrows; j++) {
            const struct listing *a = r->tables[i].rows[j].instructions, *b = again->tables[i].rows[j].instructions;
            cr_assert(a && b);
            cr_expect(b->cached);
            cr_expect_str_eq(b->collected_utc, a->collected_utc, "the time of the identical launch");
            cr_expect_eq(b->nruns, a->nruns);
        }
    experiment_report_free(again);
    experiment_report_free(r);
    stop_worker(&c);
}

static const struct {
    const char *request;
    unsigned rows;
} customs[] = {
    {"{\"part\":1,\"predicates\":[\"threadIdx.x % 3 == 0\",\"blockIdx.x % 3 == 0\",\"blockIdx.x < 7\","
     "\"(threadIdx.x + blockIdx.x) % 2 == 0\",\"lane < 8\",\"warp % 3 == 0\",\"threadIdx.x / 64 == 1\","
     "\"(threadIdx.x ^ blockIdx.x) & 4\"],\"baseline\":\"threadIdx.x / 64 == 1\",\"blocks\":265,"
     "\"budget_ms\":60,\"min_samples\":5,\"max_samples\":40,\"max_noise\":0.5,\"instructions\":true}",
     8},
    {"{\"part\":1,\"predicates\":[\"(threadIdx.y & 1) == 0\",\"threadIdx.x < threadIdx.y * 4\"],"
     "\"baseline\":\"(threadIdx.y & 1) == 0\",\"threads_per_block\":[32,8],\"blocks\":132,\"budget_ms\":60,"
     "\"min_samples\":5,\"max_samples\":40,\"max_noise\":0.5,\"instructions\":true}",
     2},
    {"{\"part\":1,\"predicates\":[\"threadIdx.x % 2 == 0\",\"threadIdx.x < 50\"],\"baseline\":\"threadIdx.x < 50\","
     "\"threads_per_block\":100,\"blocks\":132,\"budget_ms\":60,\"min_samples\":5,\"max_samples\":40,"
     "\"max_noise\":0.5,\"instructions\":true}",
     2},
};

Test(gpu_instructions, custom_predicates_2d_blocks_partial_warps_and_blockidx, .timeout = 600) {
    struct conn c;
    if (start_worker(&c, NULL)) cr_skip_test("no GPU");
    unsigned total = 0;
    for (size_t k = 0; k < sizeof customs / sizeof customs[0]; k++) {
        struct dv_report *r = job(&c, customs[k].request);
        print_listings(r);
        const unsigned n = check_rows(r);
        cr_expect_eq(n, customs[k].rows);
        total += n;
        experiment_report_free(r);
    }
    cr_expect_geq(total, 10);
    stop_worker(&c);
}

/* One row's profile straight from the command: its stdout's JSON. */
static json_t *command(const char *request, unsigned table, unsigned row, const char *extra1, const char *extra2) {
    char tb[16], rw[16], err[ERR_LEN];
    snprintf(tb, sizeof tb, "%u", table);
    snprintf(rw, sizeof rw, "%u", row);
    const char *argv[] = {GPU_BINARY, "instructions", "--table", tb, "--row", rw, extra1, extra2, NULL};
    struct subproc_result res;
    cr_assert_eq(subproc_run(argv, request, strlen(request), 300000, &res, err), 0, "%s", err);
    json_error_t je;
    json_t *o = jsonout_loads(res.out, 0, &je);
    cr_assert_not_null(o, "not JSON: %s", res.out);
    subproc_result_cleanup(&res);
    return o;
}

/* The runs' counts of two profiles, equal run by run. */
static void expect_same_counts(const json_t *a, const json_t *b, const char *what) {
    const json_t *ra = json_object_get(json_object_get(a, "instructions"), "runs");
    const json_t *rb = json_object_get(json_object_get(b, "instructions"), "runs");
    cr_assert(json_is_array(ra) && json_is_array(rb), "%s", what);
    cr_expect_eq(json_array_size(ra), json_array_size(rb), "%s", what);
    static const char *const keys[] = {"pc", "count", "warp_executions", "thread_executions",
                                       "pred_on_thread_executions", "divergent_targets"};
    unsigned diff = 0;
    for (size_t k = 0; k < json_array_size(ra) && k < json_array_size(rb); k++)
        for (size_t f = 0; f < sizeof keys / sizeof keys[0]; f++)
            diff += json_integer_value(json_object_get(json_array_get(ra, k), keys[f])) !=
                    json_integer_value(json_object_get(json_array_get(rb, k), keys[f]));
    cr_expect_eq(diff, 0, "%s: %u cells differ", what, diff);
    printf("%s: %zu runs, %u cells differ\n", what, json_array_size(ra), diff);
}

Test(gpu_instructions, the_blocks_that_stand_for_the_grid_count_what_the_grid_counts, .timeout = 600) {
    struct conn c;
    if (start_worker(&c, NULL)) cr_skip_test("no GPU");
    stop_worker(&c);
    /* Lane parity (1 block for 264), block parity (2), blockIdx.x % 3 on 265
     * blocks (3 blocks x 88, plus 1). */
    const char *req = "{\"part\":1,\"predicates\":[\"lane-parity\",\"block-parity\",\"blockIdx.x % 3 == 0\"],"
                      "\"baseline\":\"lane-parity\",\"blocks\":265,\"instructions\":true}";
    for (unsigned row = 0; row < 3; row++) {
        json_t *reduced = command(req, 0, row, "--stalls", "off");
        json_t *whole = command(req, 0, row, "--grid", "whole");
        cr_assert(json_is_true(json_object_get(reduced, "ok")), "%s",
                  json_string_value(json_object_get(reduced, "reason")));
        cr_assert(json_is_true(json_object_get(whole, "ok")), "%s", json_string_value(json_object_get(whole, "reason")));
        char what[96];
        snprintf(what, sizeof what, "row %u: %lld blocks scaled x%.4g against the whole grid of 265", row,
                 json_integer_value(json_object_get(json_object_get(json_object_get(reduced, "instructions"), "grid"), "blocks")),
                 json_number_value(json_object_get(json_object_get(reduced, "instructions"), "scale")));
        expect_same_counts(reduced, whole, what);
        json_decref(reduced);
        json_decref(whole);
    }
}

/* Every row of `list` ("T:R,...", `n` rows) of `request` in one process:
 * its answer lines into lines[] by position, and its last line's phases. */
static void command_rows(const char *request, const char *list, unsigned n, json_t **lines, json_t **done) {
    char err[ERR_LEN];
    const char *argv[] = {GPU_BINARY, "instructions", "--rows", list, NULL};
    struct subproc_result res;
    cr_assert_eq(subproc_run(argv, request, strlen(request), 300000, &res, err), 0, "%s", err);
    unsigned k = 0;
    *done = NULL;
    for (char *line = res.out, *next; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next) *next++ = '\0';
        json_error_t je;
        json_t *o = jsonout_loads(line, 0, &je);
        cr_assert_not_null(o, "not JSON: %s", line);
        if (json_object_get(o, "done")) *done = o;
        else if (k < n) lines[k++] = o;
        else json_decref(o);
    }
    subproc_result_cleanup(&res);
    cr_assert_eq(k, n, "one line per row");
    cr_assert_not_null(*done, "the last line");
}

static void print_phases(const char *what, const json_t *ph) {
    printf("%s:", what);
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)ph, key, v) printf(" %s %.1f", key, json_number_value(v));
    printf(" ms\n");
}

/* Rows profiled in one process count exactly what each counts in a process
 * of its own: the lesson's eight rows (two kernels) and eight custom ones. */
Test(gpu_instructions, rows_in_one_process_count_what_each_counts_alone, .timeout = 600) {
    struct conn c;
    if (start_worker(&c, NULL)) cr_skip_test("no GPU");
    stop_worker(&c);
    static const struct {
        const char *request, *list;
        unsigned n;
    } cases[] = {
        {NULL, "0:0,0:1,0:2,0:3,0:4,1:0,1:1,1:2", 8},
        {NULL, "0:0,0:1,0:2,0:3,0:4,0:5,0:6,0:7", 8},
    };
    for (size_t c2 = 0; c2 < 2; c2++) {
        const char *request = c2 == 0 ? lesson_request : customs[0].request;
        json_t *lines[8], *done = NULL;
        command_rows(request, cases[c2].list, cases[c2].n, lines, &done);
        print_phases(c2 == 0 ? "one process, the lesson's 8 rows" : "one process, 8 custom rows",
                     json_object_get(done, "phases_ms"));
        cr_expect_eq(json_integer_value(json_object_get(done, "profiled")), cases[c2].n);
        for (unsigned k = 0; k < cases[c2].n; k++) {
            const unsigned table = cases[c2].list[4 * k] - '0', row = cases[c2].list[4 * k + 2] - '0';
            cr_assert(json_is_true(json_object_get(lines[k], "ok")), "row %u:%u: %s", table, row,
                      json_string_value(json_object_get(lines[k], "reason")));
            cr_expect_eq(json_integer_value(json_object_get(lines[k], "table")), table);
            cr_expect_eq(json_integer_value(json_object_get(lines[k], "row")), row);
            json_t *alone = command(request, table, row, NULL, NULL);
            cr_assert(json_is_true(json_object_get(alone, "ok")), "%s",
                      json_string_value(json_object_get(alone, "reason")));
            char what[128];
            snprintf(what, sizeof what, "%s row %u:%u (%s), together against alone", c2 ? "custom" : "lesson", table,
                     row, json_string_value(json_object_get(json_object_get(alone, "instructions"), "kernel")));
            expect_same_counts(lines[k], alone, what);
            if (k == 0) print_phases("one process, one row", json_object_get(alone, "phases_ms"));
            json_decref(alone);
            json_decref(lines[k]);
        }
        json_decref(done);
    }
}

static int have_ncu(void) {
    const char *argv[] = {"/bin/sh", "-c", "command -v ncu || ls /usr/local/cuda/bin/ncu", NULL};
    struct subproc_result res;
    char err[ERR_LEN];
    if (subproc_run(argv, NULL, 0, 5000, &res, err) != 0) return 0;
    const int ok = res.how == SUBPROC_EXITED && res.status == 0;
    subproc_result_cleanup(&res);
    return ok;
}

/* Every row of `request`: the profile against Nsight Compute's Source page. */
static void compare_request(const char *request, unsigned table, unsigned rows) {
    for (unsigned row = 0; row < rows; row++) {
        json_t *o = command(request, table, row, "--compare", "ncu");
        cr_assert(json_is_true(json_object_get(o, "ok")), "row %u: %s", row,
                  json_string_value(json_object_get(o, "reason")));
        const json_t *cmp = json_object_get(o, "compare");
        const long long mism = json_integer_value(json_object_get(cmp, "mismatches"));
        printf("source page: table %u row %u %-46s %lld of %lld cells differ over %lld instructions%s%s\n", table, row,
               json_string_value(json_object_get(json_object_get(o, "instructions"), "kernel")), mism,
               json_integer_value(json_object_get(cmp, "cells")), json_integer_value(json_object_get(cmp, "instructions")),
               mism ? "; first: " : "", mism ? json_string_value(json_object_get(cmp, "first")) : "");
        cr_expect_eq(mism, 0, "table %u row %u: %s", table, row, json_string_value(json_object_get(cmp, "first")));
        json_decref(o);
    }
}

Test(gpu_instructions, every_count_equals_nsight_computes_source_page, .timeout = 600) {
    struct conn c;
    if (start_worker(&c, NULL)) cr_skip_test("no GPU");
    stop_worker(&c);
    if (!have_ncu()) {
        printf("SKIPPED: no ncu on this host\n");
        cr_skip_test("no ncu");
    }
    compare_request(lesson_request, 0, 5);
    compare_request(lesson_request, 1, 3);
    compare_request(customs[0].request, 0, customs[0].rows);
    compare_request(customs[1].request, 0, customs[1].rows);
    compare_request(customs[2].request, 0, customs[2].rows);
}

Test(gpu_instructions, timed_medians_do_not_move_with_profiles_on, .timeout = 600) {
    struct conn c;
    if (start_worker(&c, NULL)) cr_skip_test("no GPU");
    const char *off = "{\"part\":\"all\",\"blocks\":1056,\"budget_ms\":400,\"max_noise\":0.005}";
    const char *on = "{\"part\":\"all\",\"blocks\":1056,\"budget_ms\":400,\"max_noise\":0.005,\"instructions\":true}";
    struct dv_report *a = job(&c, off), *b = job(&c, on), *a2 = job(&c, off);
    for (unsigned i = 0; i < a->ntables; i++)
        for (unsigned j = 0; j < a->tables[i].nrows; j++) {
            const struct dv_row *x = &a->tables[i].rows[j], *y = &b->tables[i].rows[j], *z = &a2->tables[i].rows[j];
            const double d = y->time_ms.median / x->time_ms.median - 1, d2 = z->time_ms.median / x->time_ms.median - 1;
            printf("median %-10s %-30s off %.5f ms, on %.5f ms (%+.3f%%), off again %.5f ms (%+.3f%%); noise %.3f%%\n",
                   a->tables[i].id, x->name, x->time_ms.median, y->time_ms.median, 100 * d, z->time_ms.median, 100 * d2,
                   100 * x->time_ms.noise);
            cr_expect(fabs(d) < 0.02, "%s: %+.3f%%", x->name, 100 * d);
            cr_expect_not_null(y->instructions);
        }
    experiment_report_free(a);
    experiment_report_free(b);
    experiment_report_free(a2);
    stop_worker(&c);
}

Test(gpu_instructions, without_a_disassembler_pc_and_line_only_and_the_document_says_why, .timeout = 600) {
    struct conn c;
    if (start_worker(&c, "none")) cr_skip_test("no GPU");
    struct dv_report *r = job(&c, "{\"part\":1,\"predicates\":[\"lane-parity\"],\"baseline\":\"lane-parity\","
                                  "\"blocks\":132,\"budget_ms\":30,\"min_samples\":3,\"max_samples\":10,"
                                  "\"max_noise\":0.5,\"instructions\":true}");
    const struct listing *l = r->tables[0].rows[0].instructions;
    cr_assert_not_null(l, "%s", r->testimony.instructions_reason);
    cr_expect_str_eq(l->disassembler, "");
    cr_expect(strstr(l->disassembly_reason, "turned off"), "%s", l->disassembly_reason);
    cr_expect_geq(l->mapped, 0.95);
    for (unsigned k = 0; k < l->nruns; k++) cr_expect_str_eq(l->runs[k].sass, "");
    printf("no disassembler: %u runs, %.1f%% mapped, reason: %s\n", l->nruns, 100 * l->mapped, l->disassembly_reason);
    experiment_report_free(r);
    stop_worker(&c);
}

/* ---- the scenario tables and the compiler-and-warp experiments ---------- */

/* Region `kind` of `l`, or NULL. */
static const struct listing_region *region_of(const struct listing *l, enum listing_kind kind) {
    for (unsigned k = 0; k < l->nregions; k++)
        if (l->regions[k].kind == kind) return &l->regions[k];
    return NULL;
}

/* A k-way row laid out the same in every warp (lanes, lane % k): each path
 * its lanes take is a region of its own, path_p, run with exactly the lanes
 * on it, and its FFMAs' predicated-on executions are those lanes' FMAs over
 * the grid; no other path region. Returns the paths seen. */
static unsigned expect_kway_paths(const struct dv_report *r, const struct dv_table *t, const struct dv_row *w,
                                  const uint8_t *lanes32) {
    const struct scenario *s = scenario_find(t->id + strlen("scenario:"));
    const struct listing *l = w->instructions;
    unsigned count[32] = {0}, seen = 0;
    for (unsigned q = 0; q < 32; q++) count[lanes32[q]]++;
    const unsigned long long warps = (unsigned long long)r->config.threads / 32;
    for (unsigned p = 0; p < 32; p++) {
        const struct listing_region *g = region_of(l, LISTING_PATH_0 + p);
        if (!count[p]) {
            cr_expect_null(g, "%s/%s: path_%u has no lane but a region", t->id, w->name, p);
            continue;
        }
        cr_assert_not_null(g, "%s/%s: no region path_%u for its %u lanes", t->id, w->name, p, count[p]);
        seen++;
        cr_expect(fabs(g->lanes - count[p]) < 1e-9, "%s/%s path_%u: %.4f lanes, %u on it", t->id, w->name, p, g->lanes,
                  count[p]);
        unsigned long long thread, pred_on;
        listing_sum(l, LISTING_PATH_0 + p, "FFMA", &thread, &pred_on, NULL);
        const unsigned long long want = warps * count[p] * s->lengths[p] * 512ull;
        cr_expect_eq(pred_on, want, "%s/%s path_%u: %llu FFMA executions, the lanes' FMAs %llu", t->id, w->name, p,
                     pred_on, want);
    }
    return seen;
}

static const char *scenarios_request =
    "{\"scenario\":\"all\",\"blocks\":264,\"budget_ms\":60,\"min_samples\":5,\"max_samples\":40,\"max_noise\":0.5,"
    "\"instructions\":true}";

/* Every scenario row has its profile, and its regions name the case's
 * paths: a k-way row's path_p each with its own lanes and FMAs, a loop's
 * body one region whose lanes per trip are the useful share of the warp's
 * trips, a short if/else its two sides. */
Test(gpu_instructions, every_scenario_row_is_profiled_with_its_paths_named, .timeout = 600) {
    struct conn c;
    if (start_worker(&c, NULL)) cr_skip_test("no GPU");
    struct dv_report *r = job(&c, scenarios_request);
    cr_expect(r->testimony.instructions_taken, "%s", r->testimony.instructions_reason);
    unsigned rows = 0;
    for (unsigned i = 0; i < r->ntables; i++) {
        const struct dv_table *t = &r->tables[i];
        const struct scenario *s = scenario_find(t->id + strlen("scenario:"));
        cr_assert_not_null(s);
        for (unsigned j = 0; j < t->nrows; j++) {
            const struct dv_row *w = &t->rows[j];
            cr_assert_not_null(w->instructions, "%s/%s: %s", t->id, w->name, r->testimony.instructions_reason);
            rows++;
            char regions[512] = "";
            for (unsigned k = 0, at = 0; k < w->instructions->nregions && at < sizeof regions; k++)
                at += (unsigned)snprintf(regions + at, sizeof regions - at, " %s %.1f",
                                         listing_kind_name(w->instructions->regions[k].kind),
                                         w->instructions->regions[k].lanes);
            printf("%-26s %-8s regions:%s\n", t->id, w->name, regions);
            if (s->kind == SCENARIO_KWAY && s->rows[j].layout == SCENARIO_LAYOUT_LANES)
                cr_expect_gt(expect_kway_paths(r, t, w, s->lane_work), 0);
            if (s->kind == SCENARIO_LOOP) {
                const struct listing_region *g = region_of(w->instructions, LISTING_LOOP);
                cr_assert_not_null(g, "%s/%s: no loop region", t->id, w->name);
                if (s->rows[j].layout == SCENARIO_LAYOUT_LANES)
                    cr_expect(fabs(g->lanes - 32.0 * w->predicted_efficiency) < 0.05,
                              "%s/%s: %.3f lanes a trip, the model's useful share %.3f", t->id, w->name, g->lanes,
                              32.0 * w->predicted_efficiency);
            }
            if (s->kind == SCENARIO_SHORT)
                cr_expect(region_of(w->instructions, LISTING_PATH_A) && region_of(w->instructions, LISTING_PATH_B),
                          "%s/%s: both sides", t->id, w->name);
        }
    }
    cr_expect_geq(rows, 29, "every row of the eleven tables");
    print_listings(r);
    experiment_report_free(r);
    stop_worker(&c);
}

static const char *experiments_request =
    "{\"scenario\":\"compiler-and-warp\",\"blocks\":264,\"budget_ms\":80,\"min_samples\":5,\"max_samples\":60,"
    "\"max_noise\":0.5,\"instructions\":true}";

/* The experiments' rows profiled, and what their instructions say: k split
 * paths each at 32 / k lanes (the lanes on it), aligned ones at 32; a
 * predicated point's guarded FFMAs at 32 lanes with half on, a branched
 * one's at 16; compute-both-then-select issuing both sides at 32 lanes
 * unconditionally; each reconvergence row's tail at the lanes its join
 * record saw in a group. */
Test(gpu_instructions, the_experiments_rows_are_profiled_and_their_shapes_read, .timeout = 600) {
    struct conn c;
    if (start_worker(&c, NULL)) cr_skip_test("no GPU");
    struct dv_report *r = job(&c, experiments_request);
    cr_assert_eq(r->ntables, 4);
    cr_expect(r->testimony.instructions_taken, "%s", r->testimony.instructions_reason);
    const struct dv_table *k = &r->tables[0], *pr = &r->tables[1], *bl = &r->tables[2], *rc = &r->tables[3];
    for (unsigned j = 0; j < k->nrows; j++) {
        const struct dv_row *w = &k->rows[j];
        cr_assert_not_null(w->instructions, "%s", w->name);
        uint8_t lanes[32];
        for (unsigned q = 0; q < 32; q++) lanes[q] = (uint8_t)(q % w->point.k);
        if (strcmp(w->point.arrangement, "lane-mod") == 0)
            cr_expect_eq(expect_kway_paths(r, k, w, lanes), w->point.k, "%s: k paths", w->name);
        else
            for (unsigned kk = 0; kk < w->instructions->nregions; kk++)
                if (listing_kind_is_path(w->instructions->regions[kk].kind))
                    cr_expect(fabs(w->instructions->regions[kk].lanes - 32.0) < 1e-9, "%s: an aligned path at %.3f",
                              w->name, w->instructions->regions[kk].lanes);
    }
    for (unsigned j = 0; j < pr->nrows; j++) {
        const struct dv_row *w = &pr->rows[j];
        cr_assert_not_null(w->instructions, "%s", w->name);
        struct listing_shape sh;
        listing_shape(w->instructions, &sh);
        printf("predication %-10s ratio %.3f [%.3f, %.3f]  %s\n", w->name, w->ratio, w->ratio_ci.lo, w->ratio_ci.hi,
               sh.text);
        cr_expect(sh.branching == LISTING_SHAPE_PREDICATED || sh.branching == LISTING_SHAPE_BRANCHED, "%s: %s", w->name,
                  sh.text);
        if (strcmp(w->point.arrangement, "lanes") != 0) continue;
        if (sh.branching == LISTING_SHAPE_PREDICATED)
            cr_expect(fabs(sh.guarded_lanes - 32) < 1e-9 && fabs(sh.guarded_lanes_on - 16) < 1e-9, "%s: %s", w->name,
                      sh.text);
        else cr_expect(fabs(sh.path_lanes - 16) < 1e-9, "%s: %s", w->name, sh.text);
    }
    for (unsigned j = 0; j < bl->nrows; j++) {
        const struct dv_row *w = &bl->rows[j];
        cr_assert_not_null(w->instructions, "%s", w->name);
        struct listing_shape sh;
        listing_shape(w->instructions, &sh);
        printf("branchless %-14s ratio %.3f  %s\n", w->name, w->ratio, sh.text);
        if (strcmp(w->point.variant, "select") == 0) {
            /* one loop of both chains, its own zero-trip test and back-edge no branch among the paths */
            cr_expect_eq(sh.branching, LISTING_SHAPE_UNCONDITIONAL, "%s: %s", w->name, sh.text);
            cr_expect(fabs(sh.path_lanes - 32) < 1e-9, "%s: every lane issues both chains: %s", w->name, sh.text);
            const struct listing_region *a = region_of(w->instructions, LISTING_PATH_A),
                                        *b = region_of(w->instructions, LISTING_PATH_B);
            cr_assert(a && b, "%s: both sides' regions", w->name);
            cr_expect(fabs(a->lanes - 32) < 1e-9 && fabs(b->lanes - 32) < 1e-9,
                      "%s: both sides at 32 lanes (%.2f, %.2f)", w->name, a->lanes, b->lanes);
        }
    }
    for (unsigned j = 0; j < rc->nrows; j++) {
        const struct dv_row *w = &rc->rows[j];
        cr_assert_not_null(w->instructions, "%s", w->name);
        cr_assert(w->join.present, "%s: its join record", w->name);
        struct listing_shape sh;
        listing_shape(w->instructions, &sh);
        printf("reconvergence %-18s ratio %.3f  join: %s\n  SASS: %s\n", w->name, w->ratio, w->join.verdict, sh.text);
        cr_expect(sh.join_is_tail, "%s: a tail region", w->name);
        cr_expect(fabs(sh.join_lanes - w->join.lanes_mean) < 0.05 * w->join.lanes_mean,
                  "%s: the tail at %.2f lanes, the join record's groups of %.2f", w->name, sh.join_lanes,
                  w->join.lanes_mean);
    }
    print_listings(r);
    experiment_report_free(r);
    stop_worker(&c);
}

/* Every new row's counts against Nsight Compute's Source page, on the same
 * launch: by default a row of each kernel instantiation and layout of every
 * experiment and worked case (a stand-in grid among them: ray-materials'
 * sorted row), with DV_NCU_ALL=1 every row of both requests. */
Test(gpu_instructions, every_new_rows_counts_equal_nsight_computes_source_page, .timeout = 1800) {
    struct conn c;
    if (start_worker(&c, NULL)) cr_skip_test("no GPU");
    stop_worker(&c);
    if (!have_ncu()) {
        printf("SKIPPED: no ncu on this host\n");
        cr_skip_test("no ncu");
    }
    const char *all = getenv("DV_NCU_ALL");
    if (all && strcmp(all, "1") == 0) {
        compare_request(experiments_request, 0, 14);
        compare_request(experiments_request, 1, 16);
        compare_request(experiments_request, 2, 4);
        compare_request(experiments_request, 3, 6);
        for (unsigned t = 0; t < 11; t++) {
            const struct scenario *s = scenario_get(t);
            compare_request(scenarios_request, t, s->nrows);
        }
        return;
    }
    static const struct {
        const char **request;
        unsigned table, row;
    } pick[] = {
        {&experiments_request, 0, 6},  /* split-k32: 32 paths of one lane          */
        {&experiments_request, 0, 13}, /* aligned-k32: one path a warp, 4 blocks   */
        {&experiments_request, 1, 4},  /* 3x3-lanes                                */
        {&experiments_request, 1, 6},  /* 4x4-lanes                                */
        {&experiments_request, 2, 1},  /* branch-lanes                             */
        {&experiments_request, 2, 3},  /* select-lanes                             */
        {&experiments_request, 3, 0},  /* ifelse                                   */
        {&experiments_request, 3, 2},  /* loop-break                               */
        {&experiments_request, 3, 5},  /* early-return-sync                        */
        {&scenarios_request, 0, 0},    /* even-2way lanes                          */
        {&scenarios_request, 5, 0},    /* loop-divergence lanes                    */
        {&scenarios_request, 7, 1},    /* ray-materials sorted: a stand-in grid    */
        {&scenarios_request, 10, 0},   /* short-branch lanes, compile-time rounds  */
    };
    for (size_t i = 0; i < sizeof pick / sizeof pick[0]; i++) {
        json_t *o = command(*pick[i].request, pick[i].table, pick[i].row, "--compare", "ncu");
        cr_assert(json_is_true(json_object_get(o, "ok")), "%u:%u: %s", pick[i].table, pick[i].row,
                  json_string_value(json_object_get(o, "reason")));
        const json_t *cmp = json_object_get(o, "compare");
        const long long mism = json_integer_value(json_object_get(cmp, "mismatches"));
        printf("source page: %s table %u row %u %-46s %lld of %lld cells differ over %lld instructions%s%s\n",
               *pick[i].request == experiments_request ? "experiments" : "scenarios", pick[i].table, pick[i].row,
               json_string_value(json_object_get(json_object_get(o, "instructions"), "kernel")), mism,
               json_integer_value(json_object_get(cmp, "cells")),
               json_integer_value(json_object_get(cmp, "instructions")), mism ? "; first: " : "",
               mism ? json_string_value(json_object_get(cmp, "first")) : "");
        cr_expect_eq(mism, 0, "%u:%u: %s", pick[i].table, pick[i].row,
                     json_string_value(json_object_get(cmp, "first")));
        json_decref(o);
    }
}

/* The counters' verdict on blocks of 48 threads (a warp of 32 and one of
 * 16): Part 2's per-iteration lane parity, which the compiler predicates,
 * is recognised as predicated from the row's own warps (24 lanes an
 * instruction), and the split is named per block and evaluation. */
Test(gpu_instructions, a_predicated_branch_in_partial_warps_is_called_predicated, .timeout = 300) {
    struct conn c;
    if (start_worker(&c, NULL)) cr_skip_test("no GPU");
    struct dv_report *r = job(&c,
                              "{\"part\":2,\"threads_per_block\":48,\"blocks\":1056,\"budget_ms\":60,"
                              "\"min_samples\":5,\"max_samples\":40,\"max_noise\":0.5}");
    const struct dv_row *w = &r->tables[0].rows[1];
    cr_assert_str_eq(w->name, "per-iteration-lane-parity");
    cr_assert(w->counters.present, "%s", r->testimony.counters_reason);
    printf("48-thread blocks, %s: %.2f lanes an instruction, %s\n", w->name, w->counters.threads_per_inst,
           w->counters.verdict);
    cr_expect(w->counters.predicated, "%s", w->counters.verdict);
    cr_expect(strstr(w->counters.verdict, "2 warps per block at each of 4096 evaluations") != NULL, "%s",
              w->counters.verdict);
    experiment_report_free(r);
    stop_worker(&c);
}

/* The worker's own counter profiler beside its profiling server (one
 * `instructions --serve` child for the worker's life, jobs/instrserve.h):
 * after the server has profiled, the next jobs' counters are still taken,
 * and its profiles still come (the server's SASS metrics are not refused
 * by the worker's profiler either). Three jobs with profiles (no row of one
 * in the cache), then one without. */
Test(gpu_instructions, the_workers_counters_live_beside_its_profiling_server, .timeout = 600) {
    struct conn c;
    if (start_worker(&c, NULL)) cr_skip_test("no GPU");
    const char *requests[] = {lesson_request, customs[0].request, customs[1].request,
                              "{\"part\":1,\"predicates\":[\"first-16\"],\"baseline\":\"first-16\",\"budget_ms\":60,"
                              "\"min_samples\":5,\"max_samples\":40,\"max_noise\":0.5}"};
    int all_first = 0; /* job 1's counters, taken before the server profiled anything */
    for (unsigned q = 0; q < 4; q++) {
        struct dv_report *r = job(&c, requests[q]);
        const int profiles = q < 3;
        cr_expect_eq(r->testimony.instructions_taken, profiles, "job %u: %s", q + 1, r->testimony.instructions_reason);
        unsigned rows = 0, counted = 0;
        for (unsigned i = 0; i < r->ntables; i++)
            for (unsigned j = 0; j < r->tables[i].nrows; j++) {
                rows++;
                counted += r->tables[i].rows[j].counters.present;
            }
        if (q == 0) all_first = counted == rows;
        cr_expect(counted > 0, "job %u: no counters: %s", q + 1, r->testimony.counters_reason);
        if (all_first)
            cr_expect_eq(counted, rows, "job %u: counters on %u of %u rows: %s", q + 1, counted, rows,
                         r->testimony.counters_reason);
        printf("job %u beside the profiling server: counters on %u of %u rows, profiles %s (%.0f ms)\n", q + 1, counted,
               rows, r->testimony.instructions_taken ? "taken" : "not taken", r->testimony.instructions_ms);
        experiment_report_free(r);
    }
    stop_worker(&c);
}

/* ---- arithmetic intensity ---------------------------------------------- */

static const char *intensity_request =
    "{\"scenario\":\"intensity-stream\",\"blocks\":264,\"budget_ms\":80,\"min_samples\":5,\"max_samples\":60,"
    "\"max_noise\":0.5,\"instructions\":true}";
static const char *chase_request =
    "{\"scenario\":\"intensity-chase\",\"blocks\":264,\"budget_ms\":80,\"min_samples\":5,\"max_samples\":60,"
    "\"max_noise\":0.5,\"instructions\":true}";

/* Table `name` of `variant` measured and profiled by the worker's
 * profiling server: each point's paths named, at 16 lanes (lane-split) or
 * 32 (warp-aligned), with its threads' FFMAs; no path region in a ridge
 * row. */
static void expect_intensity_paths(const char *request, const char *name, unsigned variant) {
    struct conn c;
    if (start_worker(&c, NULL)) cr_skip_test("no GPU");
    struct dv_report *r = job(&c, request);
    cr_assert_eq(r->ntables, 1);
    cr_expect(r->testimony.instructions_taken, "%s", r->testimony.instructions_reason);
    const struct dv_table *t = &r->tables[0];
    const struct scenario *s = scenario_find(name);
    cr_assert_not_null(s);
    cr_assert_eq(t->nrows, s->nrows);
    const unsigned long long half = (unsigned long long)r->config.threads / 2; /* either layout: half on each */
    for (unsigned j = 0; j < t->nrows; j++) {
        const struct dv_row *w = &t->rows[j];
        cr_assert_not_null(w->instructions, "%s: %s", w->name, r->testimony.instructions_reason);
        const struct listing_region *a = region_of(w->instructions, LISTING_PATH_A),
                                    *b = region_of(w->instructions, LISTING_PATH_B);
        char regions[512] = "";
        for (unsigned k = 0, at = 0; k < w->instructions->nregions && at < sizeof regions; k++)
            at += (unsigned)snprintf(regions + at, sizeof regions - at, " %s %.1f",
                                     listing_kind_name(w->instructions->regions[k].kind),
                                     w->instructions->regions[k].lanes);
        printf("%-26s %-16s regions:%s\n", t->id, w->name, regions);
        if (s->rows[j].variant != variant) {
            cr_expect(!a && !b, "%s: a ridge row has no path region:%s", w->name, regions);
            continue;
        }
        cr_assert(a && b, "%s: both paths' regions:%s", w->name, regions);
        const double lanes = s->rows[j].layout == SCENARIO_LAYOUT_WARPS ? 32.0 : 16.0;
        cr_expect(fabs(a->lanes - lanes) < 1e-9 && fabs(b->lanes - lanes) < 1e-9,
                  "%s: path lanes %.3f and %.3f, not %.0f", w->name, a->lanes, b->lanes, lanes);
        const unsigned long long want = half * intensity_thread_fmas(variant, s->rows[j].la, s->rows[j].lb);
        for (int p = 0; p < 2; p++) {
            unsigned long long thread, pred_on;
            listing_sum(w->instructions, p ? LISTING_PATH_B : LISTING_PATH_A, "FFMA", &thread, &pred_on, NULL);
            cr_expect_eq(pred_on, want, "%s path %c: %llu FFMA executions, its threads' FMAs %llu", w->name, "AB"[p],
                         pred_on, want);
        }
    }
    print_listings(r);
    experiment_report_free(r);
    stop_worker(&c);
}

/* The arithmetic-intensity rows profiled, and their paths named from
 * intensity_kernels.cu's region lines: a lane-split point (path = lane & 1)
 * runs path A and path B in every warp, each at 16 lanes, and a
 * warp-aligned point runs each in whole warps at 32. */
Test(gpu_instructions, the_intensity_rows_are_profiled_and_each_path_named, .timeout = 600) {
    expect_intensity_paths(intensity_request, "intensity-stream", INTENSITY_STREAM);
}

/* The pointer chase's too: its set-up fills the chain with a kernel of the
 * same module as the paths, so a profiling process that ran it before
 * CUPTI was ready would see none of the module's cubin (on the H200 the
 * nightly suite's 28 rows read "none of the 0 cubins loaded has the
 * records' CRC" that way). */
Test(gpu_instructions, the_pointer_chase_rows_are_profiled_and_each_path_named, .timeout = 600) {
    expect_intensity_paths(chase_request, "intensity-chase", INTENSITY_CHASE);
}

/* ---- data-dependent divergence and the sort ----------------------------- */

static const char *sort_request =
    "{\"scenario\":\"data-sort\",\"blocks\":16,\"budget_ms\":50,\"min_samples\":5,\"max_samples\":40,"
    "\"max_noise\":0.5,\"instructions\":true}";

/* Per material p, over the warps of the shading order `order` (NULL: the
 * items as given) of `n` items in blocks of `tpb`: the items on p and the
 * warps that met p (each a run of p's lanes). The runs add up to the warps'
 * k of sortexp_warp_count(), the witness's CPU count, which is checked. */
static void material_runs(const uint8_t *mat, const uint32_t *order, unsigned long long n, unsigned tpb,
                          unsigned long long items[32], unsigned long long runs[32]) {
    memset(items, 0, 32 * sizeof *items);
    memset(runs, 0, 32 * sizeof *runs);
    unsigned long long k = 0, sum = 0;
    const unsigned per_block = (tpb + 31) / 32;
    for (unsigned long long w = 0; w < sortexp_warps(n, tpb); w++) {
        const unsigned long long first = w / per_block * tpb + (w % per_block) * 32;
        unsigned seen = 0;
        for (unsigned q = 0; q < 32 && (q + first) < (w / per_block + 1) * tpb && first + q < n; q++) {
            const unsigned p = mat[order ? order[first + q] : first + q];
            items[p]++;
            seen |= 1u << p;
        }
        for (unsigned p = 0; p < 32; p++) runs[p] += (seen >> p) & 1u;
        struct sortexp_warp rec;
        sortexp_warp_count(mat, order, n, tpb, w, &rec);
        k += rec.k;
    }
    for (unsigned p = 0; p < 32; p++) sum += runs[p];
    cr_assert_eq(sum, k, "the runs by material add up to the witness's CPU count of k");
}

/* Row `w` of cell (c) against the CPU's count: each material met is its
 * region path_p, whose FFMAs run c per lane a visit (predicated on:
 * items x c) at the mean active lanes items / runs; no region for a
 * material no item has. Returns the smallest such mean. */
static double expect_material_paths(const struct dv_table *t, const struct dv_row *w, unsigned c,
                                    const unsigned long long items[32], const unsigned long long runs[32]) {
    const struct listing *l = w->instructions;
    double least = 32;
    for (unsigned p = 0; p < 32; p++) {
        const struct listing_region *g = region_of(l, LISTING_PATH_0 + p);
        if (!items[p]) {
            cr_expect_null(g, "%s/%s: material %u has no item but a region", t->id, w->name, p);
            continue;
        }
        cr_assert_not_null(g, "%s/%s: no region path_%u for its %llu items", t->id, w->name, p, items[p]);
        unsigned long long warp = 0, thread = 0, pred_on = 0;
        for (unsigned k = 0; k < l->nruns; k++) {
            const struct listing_run *u = &l->runs[k];
            if (u->region != LISTING_PATH_0 + p || strcmp(u->opcode, "FFMA") != 0) continue;
            warp += u->warp * u->count;
            thread += u->thread * u->count;
            pred_on += u->pred_on * u->count;
        }
        const double lanes = warp ? (double)thread / (double)warp : 0, want = (double)items[p] / (double)runs[p];
        cr_expect(fabs(lanes - want) < 1e-9,
                  "%s/%s material %u: its FFMAs at %.4f lanes, the CPU's %llu items in %llu "
                  "runs %.4f",
                  t->id, w->name, p, lanes, items[p], runs[p], want);
        cr_expect_eq(pred_on, items[p] * c, "%s/%s material %u: %llu FFMA executions, its items' FMAs %llu", t->id,
                     w->name, p, pred_on, items[p] * c);
        if (want < least) least = want;
    }
    return least;
}

/* The data-sort rows profiled on their whole grid, each material's path
 * named from sort_kernels.cu's region lines: the naive row's material p at
 * the mean lanes the CPU counts over the same materials (its items over the
 * warps that met it), the sorted rows' (index, shade-sorted) at the sorted
 * order's, nearly 32 where a material fills whole warps; sort+shade and
 * sort (CUB's kernels) without a profile, and the testimony taken. */
Test(gpu_instructions, the_data_sort_rows_are_profiled_and_each_material_named, .timeout = 600) {
    struct conn c;
    if (start_worker(&c, NULL)) cr_skip_test("no GPU");
    struct dv_report *r = job(&c, sort_request);
    cr_assert_eq(r->ntables, 12);
    cr_expect(r->testimony.instructions_taken, "%s", r->testimony.instructions_reason);
    const unsigned long long n = r->config.threads;
    const unsigned tpb = r->config.threads_per_block;
    uint8_t *mat = malloc(n);
    uint32_t *order = malloc(n * sizeof *order);
    cr_assert(mat && order);
    for (unsigned i = 0; i < r->ntables; i++) {
        const struct dv_table *t = &r->tables[i];
        enum sortexp_dist d;
        unsigned m, cc;
        char err[ERR_LEN] = "";
        cr_assert_eq(sortexp_table_cell(t->id, &d, &m, &cc), 0, "%s", t->id);
        cr_assert_eq(sortexp_materials(d, m, n, mat, err), 0, "%s", err);
        sortexp_order(mat, n, m, order);
        unsigned long long items[32], runs[32], sitems[32], sruns[32];
        material_runs(mat, NULL, n, tpb, items, runs);
        material_runs(mat, order, n, tpb, sitems, sruns);
        cr_expect_null(t->rows[SORTEXP_ROW_SORT_SHADE].instructions, "%s: sort+shade runs CUB's kernels", t->id);
        cr_expect_null(t->rows[SORTEXP_ROW_SORT].instructions, "%s: sort runs CUB's kernels", t->id);
        const unsigned shading[3] = {SORTEXP_ROW_NAIVE, SORTEXP_ROW_INDEX, SORTEXP_ROW_SHADE_SORTED};
        for (unsigned k = 0; k < 3; k++) {
            const struct dv_row *w = &t->rows[shading[k]];
            cr_assert_not_null(w->instructions, "%s/%s: %s", t->id, w->name, r->testimony.instructions_reason);
            cr_expect_eq(w->instructions->grid_blocks, r->config.blocks, "%s/%s: the whole grid", t->id, w->name);
            unsigned in_file = 0;
            for (unsigned u = 0; u < w->instructions->nruns; u++)
                in_file += strcmp(w->instructions->runs[u].file, "kernels/gpu/sort_kernels.cu") == 0;
            cr_expect_gt(in_file, 0, "%s/%s: the shade's lines are sort_kernels.cu's", t->id, w->name);
            const int sorted = shading[k] != SORTEXP_ROW_NAIVE;
            const double least = expect_material_paths(t, w, cc, sorted ? sitems : items, sorted ? sruns : runs);
            printf("%-22s %-13s least mean lanes of a material %.2f\n", t->id, w->name, least);
            if (sorted && d != SORTEXP_TILES)
                cr_expect_geq(least, 16.0, "%s/%s: sorted, each material runs in (nearly) full warps", t->id, w->name);
        }
    }
    free(mat);
    free(order);
    print_listings(r);
    experiment_report_free(r);
    stop_worker(&c);
}
