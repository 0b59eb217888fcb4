/* test_gpu_instrserve.c -- the profiling server on a GPU: one
 * `divergence-gpu instructions --serve` (jobs/instrserve.h) serving
 * request after request gives each row the profile the one-shot command
 * (`--rows`, a process of its own) gives it.
 *
 * Label gpu. Skips only where the one-shot command cannot profile either
 * (no GPU, no CUPTI), with its reason; a server that is not ready where the
 * command profiles is a failure. Per row of the lesson's request (two
 * kernels) and of eight custom predicates, served in one child in the
 * order lesson, custom, lesson again (the same rows a second time in the
 * same child: a context made again per request must count and sample what
 * the first did): the four counts of every run equal, the same function,
 * cubin CRC, pcs, source lines and SASS text, and stall samples where the
 * command has them. It prints each request's phases: the evidence of what
 * the server saves. Run again with DV_INSTR_SERVE_CONTEXT=kept in the
 * environment, it says whether a context kept across requests (cheaper:
 * no context made per request) profiles what the one-shot command does.
 * A frame of parts (the lesson's rows and the custom rows, two requests in
 * one context) must give each row the one-shot command's profile too. The
 * server's warm-up disassembles the lesson's cubin (no profiling session):
 * its "ready" frame says so, and its first request's texts all come from
 * the disassembler's memory ("disassembly" in the "done" frame), none from
 * a run of the tool, unless DV_INSTR_SERVE_WARM_TEXT=off.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "api/jsonout.h"
#include "server/core/subproc.h"
#include "server/jobs/instrserve.h"
#include "server/jobs/wire.h"

#define GPU_BINARY DV_TEST_BUILD_DIR "/divergence-gpu"
#define MAX_LINES 16

static const char *lesson_request =
    "{\"part\":\"all\",\"predicates\":[\"lane-parity\",\"lane-half\",\"warp-parity\",\"block-parity\",\"first-16\"],"
    "\"blocks\":264,\"budget_ms\":100,\"min_samples\":5,\"max_samples\":100,\"max_noise\":0.5,\"instructions\":true}";
static const char *lesson_rows = "0:0,0:1,0:2,0:3,0:4,1:0,1:1,1:2";
static const char *custom_request =
    "{\"part\":1,\"predicates\":[\"threadIdx.x % 3 == 0\",\"blockIdx.x % 3 == 0\",\"blockIdx.x < 7\","
    "\"(threadIdx.x + blockIdx.x) % 2 == 0\",\"lane < 8\",\"warp % 3 == 0\",\"threadIdx.x / 64 == 1\","
    "\"(threadIdx.x ^ blockIdx.x) & 4\"],\"baseline\":\"threadIdx.x / 64 == 1\",\"blocks\":265,"
    "\"budget_ms\":60,\"min_samples\":5,\"max_samples\":40,\"max_noise\":0.5,\"instructions\":true}";
static const char *custom_rows = "0:0,0:1,0:2,0:3,0:4,0:5,0:6,0:7";

struct answer {
    json_t *lines[MAX_LINES];
    unsigned n;
    json_t *done;
};

static void answer_cleanup(struct answer *a) {
    for (unsigned k = 0; k < a->n; k++) json_decref(a->lines[k]);
    json_decref(a->done);
    memset(a, 0, sizeof *a);
}

static void take_line(const char *line, struct answer *a) {
    json_error_t je;
    json_t *o = jsonout_loads(line, 0, &je);
    cr_assert_not_null(o, "not JSON: %s", line);
    if (json_object_get(o, "done")) a->done = o;
    else if (a->n < MAX_LINES) a->lines[a->n++] = o;
    else json_decref(o);
}

static void on_line(const char *line, void *ctx) { take_line(line, ctx); }

/* The one-shot command's answer for `list` of `request`. */
static void one_shot(const char *request, const char *list, struct answer *a) {
    char err[ERR_LEN];
    const char *argv[] = {GPU_BINARY, "instructions", "--rows", list, NULL};
    struct subproc_result res;
    memset(a, 0, sizeof *a);
    cr_assert_eq(subproc_run(argv, request, strlen(request), 300000, &res, err), 0, "%s", err);
    for (char *line = res.out, *next; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next) *next++ = '\0';
        take_line(line, a);
    }
    subproc_result_cleanup(&res);
}

/* The served answer for `list` of `request`. */
static void served(struct instrserve *s, const char *request, const char *list, struct answer *a) {
    char err[ERR_LEN];
    memset(a, 0, sizeof *a);
    json_t *f = json_pack("{s:s, s:o}", "rows", list, "request", json_loads(request, 0, NULL));
    cr_assert_not_null(f);
    char *frame = json_dumps(f, JSON_COMPACT);
    json_decref(f);
    struct instrserve_answer ans;
    cr_assert_eq(instrserve_ask(s, frame, strlen(frame), 300000, on_line, a, &ans, err), 0, "%s", err);
    free(frame);
    cr_assert_eq(ans.end, INSTRSERVE_DONE, "the server %s", ans.what);
}

static int has_stalls(const json_t *line) {
    const json_t *regions = json_object_get(json_object_get(line, "instructions"), "regions");
    for (size_t k = 0; k < json_array_size(regions); k++)
        if (json_is_object(json_object_get(json_array_get(regions, k), "stalls"))) return 1;
    return 0;
}

/* Row line `a` (served) against `b` (the command's): equal but for times. */
static void expect_same_profile(const json_t *a, const json_t *b, const char *what) {
    cr_assert(json_is_true(json_object_get(a, "ok")), "%s: served: %s", what,
              json_string_value(json_object_get(a, "reason")));
    cr_assert(json_is_true(json_object_get(b, "ok")), "%s: one-shot: %s", what,
              json_string_value(json_object_get(b, "reason")));
    const json_t *ia = json_object_get(a, "instructions"), *ib = json_object_get(b, "instructions");
    static const char *const same[] = {"kernel", "cubin_crc", "mask_hash", "disassembler"};
    for (size_t k = 0; k < sizeof same / sizeof same[0]; k++)
        cr_expect(json_equal(json_object_get(ia, same[k]), json_object_get(ib, same[k])), "%s: %s differs", what,
                  same[k]);
    const json_t *ra = json_object_get(ia, "runs"), *rb = json_object_get(ib, "runs");
    cr_assert_eq(json_array_size(ra), json_array_size(rb), "%s: runs", what);
    static const char *const keys[] = {"pc",   "count", "opcode", "sass", "file", "line", "warp_executions",
                                       "thread_executions", "pred_on_thread_executions", "divergent_targets"};
    unsigned diff = 0;
    for (size_t k = 0; k < json_array_size(ra); k++)
        for (size_t f = 0; f < sizeof keys / sizeof keys[0]; f++)
            diff += !json_equal(json_object_get(json_array_get(ra, k), keys[f]),
                                json_object_get(json_array_get(rb, k), keys[f]));
    cr_expect_eq(diff, 0, "%s: %u cells differ", what, diff);
    cr_expect(json_equal(json_object_get(a, "stalls_reason"), json_object_get(b, "stalls_reason")),
              "%s: stalls_reason differs", what);
    cr_expect_eq(has_stalls(a), has_stalls(b), "%s: stall samples served %d, one-shot %d", what, has_stalls(a),
                 has_stalls(b));
    printf("%s: %zu runs, %u cells differ, stalls %d/%d\n", what, json_array_size(ra), diff, has_stalls(a),
           has_stalls(b));
}

static void print_phases(const char *what, const json_t *done) {
    printf("%s:", what);
    const char *key;
    const json_t *v;
    json_object_foreach(json_object_get((json_t *)done, "phases_ms"), key, v) printf(" %s %.1f", key,
                                                                                       json_number_value(v));
    printf(" ms\n");
}

Test(gpu_instrserve, served_profiles_equal_the_one_shot_commands_request_after_request, .timeout = 900) {
    signal(SIGPIPE, SIG_IGN);
    struct answer lesson, custom;
    one_shot(lesson_request, lesson_rows, &lesson);
    if (lesson.n == 0 || !json_is_true(json_object_get(lesson.lines[0], "ok"))) {
        char why[ERR_LEN];
        const char *r = lesson.n ? json_string_value(json_object_get(lesson.lines[0], "reason")) : NULL;
        snprintf(why, sizeof why, "%s", r ? r : "no answer line");
        printf("SKIPPED: no CUDA device (or no CUPTI): the one-shot command cannot profile here: %s\n", why);
        answer_cleanup(&lesson);
        cr_skip_test("the one-shot command cannot profile here: %s", why);
    }
    one_shot(custom_request, custom_rows, &custom);
    print_phases("one-shot, the lesson's 8 rows", lesson.done);
    print_phases("one-shot, 8 custom rows", custom.done);

    char err[ERR_LEN];
    const char *argv[] = {GPU_BINARY, "instructions", "--serve", NULL};
    struct instrserve *s = instrserve_create(argv, err);
    cr_assert_not_null(s, "%s", err);
    cr_assert_eq(instrserve_start(s, 120000, err), 0, "the command profiles but the server is not ready: %s", err);
    const pid_t pid = instrserve_pid(s);
    const struct {
        const char *name, *request, *rows;
        struct answer *want;
    } order[] = {{"lesson", lesson_request, lesson_rows, &lesson},
                 {"custom", custom_request, custom_rows, &custom},
                 {"lesson again", lesson_request, lesson_rows, &lesson}};
    for (size_t q = 0; q < 3; q++) {
        struct answer got;
        served(s, order[q].request, order[q].rows, &got);
        char what[96];
        snprintf(what, sizeof what, "served request %zu (%s)", q + 1, order[q].name);
        print_phases(what, got.done);
        cr_assert_eq(got.n, order[q].want->n, "%s: one line per row", what);
        for (unsigned k = 0; k < got.n; k++) {
            snprintf(what, sizeof what, "request %zu (%s) row %lld:%lld", q + 1, order[q].name,
                     json_integer_value(json_object_get(got.lines[k], "table")),
                     json_integer_value(json_object_get(got.lines[k], "row")));
            expect_same_profile(got.lines[k], order[q].want->lines[k], what);
        }
        answer_cleanup(&got);
        cr_expect_eq(instrserve_pid(s), pid, "one child");
    }
    cr_expect_eq(instrserve_starts(s), 1);
    instrserve_free(s);
    cr_expect(kill(pid, 0) != 0, "the child ends with its profiler");
    answer_cleanup(&lesson);
    answer_cleanup(&custom);
}

/* At the end of its stdin the server ends by itself, with status 0, after
 * saying it was ready. */
Test(gpu_instrserve, the_server_ends_at_the_end_of_its_stdin, .timeout = 300) {
    signal(SIGPIPE, SIG_IGN);
    const char *argv[] = {GPU_BINARY, "instructions", "--serve", NULL};
    struct subproc_result res;
    char err[ERR_LEN];
    cr_assert_eq(subproc_run(argv, "", 0, 120000, &res, err), 0, "%s", err);
    cr_assert_geq(res.len, 4, "a ready frame");
    const size_t len = (size_t)((unsigned char)res.out[0] << 24 | (unsigned char)res.out[1] << 16 |
                                (unsigned char)res.out[2] << 8 | (unsigned char)res.out[3]);
    cr_assert_eq(res.len, 4 + len, "one frame");
    json_error_t je;
    json_t *o = json_loadb(res.out + 4, len, 0, &je);
    cr_assert_not_null(o);
    if (!json_is_true(json_object_get(o, "ready"))) {
        json_decref(o);
        subproc_result_cleanup(&res);
        printf("SKIPPED: no CUDA device (or no CUPTI): the server is not ready (its log says why)\n");
        cr_skip_test("the server is not ready here (no GPU or no CUPTI: its log says why)");
    }
    cr_expect_eq(res.how, SUBPROC_EXITED);
    cr_expect_eq(res.status, 0);
    printf("the server's warm-up: %.1f ms, its life %.1f ms\n", json_number_value(json_object_get(o, "warm_ms")),
           res.ms);
    /* Its text part: the lesson's cubin disassembled, no profiling session. */
    const json_t *tw = json_object_get(o, "text_warm");
    cr_expect(json_is_object(tw), "the ready frame says what the text warm-up did");
    cr_expect_geq(json_integer_value(json_object_get(tw, "texts")), 1, "the lesson's cubin disassembled: %s",
                  json_string_value(json_object_get(tw, "reason")));
    cr_expect(json_is_null(json_object_get(tw, "reason")), "%s", json_string_value(json_object_get(tw, "reason")));
    printf("the text warm-up: %lld cubin(s), %lld with text, %.1f ms\n",
           json_integer_value(json_object_get(tw, "cubins")), json_integer_value(json_object_get(tw, "texts")),
           json_number_value(json_object_get(tw, "ms")));
    json_decref(o);
    subproc_result_cleanup(&res);
}

/* A frame of parts (instr_cmd.h: a message's groups, jobs/instrproc.h
 * instrproc_report_groups()): the lesson's rows and the custom rows in ONE
 * request, run in one context with one CUPTI set-up and one sampling pass,
 * each row's profile the one-shot command's for its own request; each line
 * says its part. It prints the frame's phases beside the two one-shot
 * runs': the evidence of what one request for several groups saves. */
Test(gpu_instrserve, a_frame_of_parts_profiles_each_part_as_the_one_shot_command, .timeout = 900) {
    signal(SIGPIPE, SIG_IGN);
    struct answer lesson, custom, got;
    one_shot(lesson_request, lesson_rows, &lesson);
    if (lesson.n == 0 || !json_is_true(json_object_get(lesson.lines[0], "ok"))) {
        const char *r = lesson.n ? json_string_value(json_object_get(lesson.lines[0], "reason")) : NULL;
        printf("SKIPPED: no CUDA device (or no CUPTI): the one-shot command cannot profile here: %s\n",
               r ? r : "no answer line");
        answer_cleanup(&lesson);
        cr_skip_test("the one-shot command cannot profile here");
    }
    one_shot(custom_request, custom_rows, &custom);
    char err[ERR_LEN];
    const char *argv[] = {GPU_BINARY, "instructions", "--serve", NULL};
    struct instrserve *s = instrserve_create(argv, err);
    cr_assert_not_null(s, "%s", err);
    cr_assert_eq(instrserve_start(s, 120000, err), 0, "%s", err);
    json_t *f = json_pack("{s:[{s:s, s:o}, {s:s, s:o}]}", "parts", "rows", lesson_rows, "request",
                          json_loads(lesson_request, 0, NULL), "rows", custom_rows, "request",
                          json_loads(custom_request, 0, NULL));
    cr_assert_not_null(f);
    char *frame = json_dumps(f, JSON_COMPACT);
    json_decref(f);
    struct instrserve_answer ans;
    memset(&got, 0, sizeof got);
    cr_assert_eq(instrserve_ask(s, frame, strlen(frame), 300000, on_line, &got, &ans, err), 0, "%s", err);
    free(frame);
    cr_assert_eq(ans.end, INSTRSERVE_DONE, "the server %s", ans.what);
    print_phases("one-shot, the lesson's 8 rows", lesson.done);
    print_phases("one-shot, 8 custom rows", custom.done);
    print_phases("one frame of both as two parts", got.done);
    cr_assert_eq(got.n, lesson.n + custom.n, "one line per row of each part");
    for (unsigned k = 0; k < got.n; k++) {
        const unsigned part = k < lesson.n ? 0 : 1;
        const struct answer *want = part ? &custom : &lesson;
        char what[96];
        snprintf(what, sizeof what, "part %u row %lld:%lld", part,
                 json_integer_value(json_object_get(got.lines[k], "table")),
                 json_integer_value(json_object_get(got.lines[k], "row")));
        cr_expect_eq(json_integer_value(json_object_get(got.lines[k], "part")), part, "%s: its part", what);
        expect_same_profile(got.lines[k], want->lines[part ? k - lesson.n : k], what);
    }
    instrserve_free(s);
    answer_cleanup(&got);
    answer_cleanup(&lesson);
    answer_cleanup(&custom);
}

/* The served process's warm-up disassembles the lesson's cubin (its
 * module loaded, no profiling session), so its first request's texts all
 * come from the disassembler's memory ("disassembly" in its "done": no run
 * of the tool; no --sass-cache, so no folder either), its rows' profiles
 * the one-shot command's. With DV_INSTR_SERVE_WARM_TEXT=off the same first
 * request runs the tool: the check can fail. */
Test(gpu_instrserve, the_first_request_reads_its_disassembly_from_the_warm_up, .timeout = 900) {
    signal(SIGPIPE, SIG_IGN);
    struct answer lesson;
    one_shot(lesson_request, lesson_rows, &lesson);
    if (lesson.n == 0 || !json_is_true(json_object_get(lesson.lines[0], "ok"))) {
        const char *r = lesson.n ? json_string_value(json_object_get(lesson.lines[0], "reason")) : NULL;
        printf("SKIPPED: no CUDA device (or no CUPTI): the one-shot command cannot profile here: %s\n",
               r ? r : "no answer line");
        answer_cleanup(&lesson);
        cr_skip_test("the one-shot command cannot profile here");
    }
    for (int warm = 1; warm >= 0; warm--) {
        if (!warm) setenv("DV_INSTR_SERVE_WARM_TEXT", "off", 1);
        char err[ERR_LEN], what[96];
        const char *argv[] = {GPU_BINARY, "instructions", "--serve", NULL};
        struct instrserve *s = instrserve_create(argv, err);
        cr_assert_not_null(s, "%s", err);
        cr_assert_eq(instrserve_start(s, 120000, err), 0, "%s", err);
        struct answer got;
        served(s, lesson_request, lesson_rows, &got);
        const json_t *d = json_object_get(got.done, "disassembly");
        const json_int_t memory = json_integer_value(json_object_get(d, "memory")),
                         folder = json_integer_value(json_object_get(d, "folder")),
                         tool = json_integer_value(json_object_get(d, "tool"));
        printf("text warm-up %s: the first request's texts: memory %lld, folder %lld, the tool %lld\n",
               warm ? "on" : "off", (long long)memory, (long long)folder, (long long)tool);
        snprintf(what, sizeof what, "the first request, text warm-up %s", warm ? "on" : "off");
        print_phases(what, got.done);
        cr_assert(json_is_object(d), "%s: the done frame says where its texts came from", what);
        if (warm) {
            cr_expect_eq(tool, 0, "%s: no run of the disassembler", what);
            cr_expect_eq(folder, 0, "%s: no cache folder was given", what);
            cr_expect_geq(memory, 1, "%s: its texts from the disassembler's memory", what);
        } else {
            cr_expect_geq(tool, 1, "%s: the disassembler runs for the first request", what);
        }
        cr_assert_eq(got.n, lesson.n, "%s: one line per row", what);
        for (unsigned k = 0; k < got.n; k++) {
            snprintf(what, sizeof what, "warm-up %s, row %lld:%lld", warm ? "on" : "off",
                     json_integer_value(json_object_get(got.lines[k], "table")),
                     json_integer_value(json_object_get(got.lines[k], "row")));
            expect_same_profile(got.lines[k], lesson.lines[k], what);
        }
        answer_cleanup(&got);
        instrserve_free(s);
    }
    unsetenv("DV_INSTR_SERVE_WARM_TEXT");
    answer_cleanup(&lesson);
}
