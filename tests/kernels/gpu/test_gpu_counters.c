/* test_gpu_counters.c -- the counter pass on a GPU.
 *
 * Label gpu: each test skips with CUDA's reason where there is no device.
 *
 *  - The pass replays each row's timed kernel (user replay): the outputs the
 *    profiled launches leave are the timed launch's, bit for bit, and still
 *    pass the correctness gate.
 *  - A CUPTI call that fails in the middle of a job (the stand-in CUPTI of
 *    tests/support/cupti_standin.c, with the real kernels) never fails the
 *    job: every row's counters are null with the reason, the warning says
 *    so, and the next job rebuilds the profiler; a sticky CUDA error inside
 *    the pass is the pass's reason and ends the profiler.
 *  - The pass as it runs by default (every count software-patched, one
 *    pass, each row on the blocks that stand for its grid) against the
 *    instruction counts of the hardware on every row's whole grid
 *    (DV_COUNTERS_SET=hardware DV_COUNTERS_GRID=full), each in a process of
 *    its own, on the built-ins, Part 2, the scenario suite and custom
 *    predicates (2D blocks, partial warps, blockIdx.x-dependent): identical
 *    counts, and the derived figures and verdicts equal to the last digit
 *    the service prints (lanes per instruction to two decimals, where the
 *    transcript and the widget print one; the largest relative difference
 *    is printed too: software patching counts a few hundredths of a percent
 *    fewer thread instructions than the hardware where a loop's threads
 *    leave it at different trips). The table goes to stdout and, when
 *    DV_COUNTERS_COMPARE_OUT names a file, there. (The pass the service
 *    used before, in its own binary, is compared with
 *    tests/bench/counters_compare.py.)
 *  - A worker's memory does not grow job after job once the profiler and
 *    the witness buffers are built; what CUPTI adds is printed.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "api/options.h"
#include "api/report.h"
#include "kernels/gpu/counters.h"
#include "kernels/gpu/cuda_call.h"
#include "kernels/gpu/lesson_kernels.h"
#include "kernels/gpu/measure.h"
#include "kernels/gpu/session.h"
#include "kernels/model/model/analysis.h"
#include "kernels/model/model/reference.h"
#include "kernels/model/model/scenario.h"
#include "kernels/model/model/scenario_table.h"
#include "kernels/model/model/testimony.h"
#include "kernels/model/model/plan.h"
#include "tests/kernels/gpu/helper_gpu.h"

static struct dv_options small(void) {
    struct dv_options o;
    experiment_defaults(&o);
    o.blocks = 264;
    o.budget_ms = 30;
    o.min_samples = 3;
    o.max_samples = 10;
    o.max_noise = 0.5;
    return o;
}

static void validate(struct dv_options *o) {
    char err[ERR_LEN];
    cr_assert_eq(options_validate(o, OPTIONS_JSON, NULL, err), 0, "%s", err);
}

/* The phase-0 mask of a row's predicate over `g` (what lesson_measure.c's
 * check and mask kernel read). */
/* ---- replay leaves the outputs as the timed launch left them ----------- */

struct replay_ctx {
    const struct dv_table *t;
    struct dv_launch base;
    float *out[DV_MAX_ROWS];
    const uint32_t *d_mask[DV_MAX_ROWS];
};

static int replay_launch(void *vctx, unsigned row, const struct counters_span *p, char *err) {
    const struct replay_ctx *c = vctx;
    struct dv_launch l = c->base;
    l.out = c->out[row];
    l.mode = c->t->rows[row].mode;
    l.mask = c->d_mask[row];
    l.blocks = p->blocks;
    return dv_run_kernel(c->t->rows[row].kernel, &l, err);
}

Test(gpu_counters, profiled_launches_leave_outputs_that_pass_the_gate) {
    HELPER_REQUIRE_GPU();
    struct dv_options o = small();
    snprintf(o.predicates[o.npredicates++], PREDICATE_TEXT_LEN, "threadIdx.x < blockIdx.x %% 48");
    validate(&o);
    char err[ERR_LEN] = "", library[256], reason[ERR_LEN] = "";
    struct dv_report *r = experiment_report_create();
    struct session *s = session_create();
    cr_assert(r && s);
    cr_assert_eq(plan_report(&o, r, NULL, err), 0, "%s", err);
    cr_assert_eq(session_device(s, 0, &r->device, err), 0, "%s", err);
    struct counters *c = session_counters(s, &r->device, library, reason);
    if (!c) {
        printf("counters unavailable: %s\n", reason);
        cr_skip_test("counters unavailable: %s", reason);
    }
    const struct dv_geometry g = {r->config.blocks, r->config.block_x, r->config.block_y};
    const unsigned long long n = dv_grid_threads(&g);
    int rc = 0;
    const float *in = session_input(s, n, &rc, err), *a = NULL, *b = NULL;
    cr_assert_not_null(in, "%s", err);
    cr_assert_eq(session_chains(s, r->config.iterations, &a, &b, err), 0, "%s", err);
    float *before = malloc(sizeof(float) * n), *after = malloc(sizeof(float) * n);
    cr_assert(before && after);
    for (unsigned ti = 0; ti < r->ntables; ti++) {
        struct dv_table *t = &r->tables[ti];
        struct replay_ctx x = {.t = t,
                               .base = {.in = in,
                                        .n = n,
                                        .blocks = g.blocks,
                                        .block_x = g.block_x,
                                        .block_y = g.block_y,
                                        .iterations = r->config.iterations}};
        const uint32_t *masks[DV_MAX_ROWS];
        struct testimony_grid grids[DV_MAX_ROWS];
        float *host[DV_MAX_ROWS];
        for (unsigned i = 0; i < t->nrows; i++) {
            masks[i] = session_mask(s, &t->rows[i], &g, plan_row_mask,
                                    experiment_row_reads_mask(&t->rows[i]) ? &x.d_mask[i] : NULL, &rc, err);
            cr_assert_not_null(masks[i], "%s", err);
            cr_assert_not_null(x.out[i] = session_output(s, i, n, &host[i], &rc, err), "%s", err);
            cr_assert_eq(testimony_lesson_grid(&t->rows[i], &g, r->config.iterations, masks[i], &grids[i], err), 0);
            cr_assert_eq(replay_launch(&x, i, &(struct counters_span){0, g.blocks, 0}, err), 0, "%s", err);
        }
        cr_assert_eq(DV_CUDA_CALL(cudaDeviceSynchronize(), err), 0, "%s", err);
        struct dv_counters out[DV_MAX_ROWS];
        const struct counters_launch l = {.launch = replay_launch, .ctx = &x};
        /* The timed launch's outputs, then the pass, then the outputs again. */
        float *timed[DV_MAX_ROWS];
        for (unsigned i = 0; i < t->nrows; i++) {
            cr_assert_not_null(timed[i] = malloc(sizeof(float) * n));
            cr_assert_eq(DV_CUDA_CALL(cudaMemcpy(timed[i], x.out[i], sizeof(float) * n, cudaMemcpyDeviceToHost), err),
                         0, "%s", err);
        }
        cr_assert_eq(counters_profile(c, t->nrows, grids, &l, out, reason), 0, "%s", reason);
        for (unsigned i = 0; i < t->nrows; i++) {
            struct dv_check check;
            cr_assert_eq(DV_CUDA_CALL(cudaMemcpy(after, x.out[i], sizeof(float) * n, cudaMemcpyDeviceToHost), err), 0,
                         "%s", err);
            cr_expect_eq(memcmp(after, timed[i], sizeof(float) * n), 0, "%s/%s: the pass changed the output", t->id,
                         t->rows[i].name);
            cr_assert_eq(reference_check(&t->rows[i], &g, masks[i], a, b, r->config.iterations, after, &check, err), 0,
                         "%s", err);
            cr_expect(check.ok && check.checked == n, "%s/%s after the pass: %llu mismatches, first thread %lld", t->id,
                      t->rows[i].name, check.mismatches, check.first_mismatch);
            cr_expect(out[i].present, "%s/%s: no counters", t->id, t->rows[i].name);
            printf("%s %-32s counted on %u block(s) x %.0f%s: %.0f warp instructions, outputs unchanged\n", t->id,
                   t->rows[i].name, grids[i].part_blocks[0], grids[i].weight[0], grids[i].nparts > 1 ? " + rest" : "",
                   out[i].inst_executed);
            free(timed[i]);
        }
        /* The default set is software-patched only: one pass. */
        cr_expect_eq(counters_set_of(c), COUNTERS_SET_PATCHED);
        cr_expect_eq(counters_passes(c), 1, "%s: %u passes", t->id, counters_passes(c));
    }
    free(before);
    free(after);
    session_free(s);
    experiment_report_free(r);
}

/* ---- faults in the middle of a job ------------------------------------ */

#ifdef DV_CUPTI_STANDIN

static unsigned long standin_calls(const char *name) {
    void *h = dlopen(DV_CUPTI_STANDIN, RTLD_NOW | RTLD_NOLOAD);
    cr_assert_not_null(h, "the stand-in CUPTI is not loaded");
    unsigned long (*f)(const char *) = (unsigned long (*)(const char *))dlsym(h, "cupti_standin_calls");
    cr_assert_not_null(f);
    unsigned long v = f(name);
    dlclose(h);
    return v;
}

/* Expects a measured job whose rows all have a witness and no counters, the
 * reason and the warning naming `what`. */
static void expect_no_counters(const struct dv_report *r, const char *what) {
    helper_expect_all_checked(r);
    cr_expect(r->testimony.witness_taken);
    cr_expect_not(r->testimony.counters_taken, "%s", what);
    cr_expect(strstr(r->testimony.counters_reason, what) != NULL, "%s: %s", what, r->testimony.counters_reason);
    int warned = 0;
    for (unsigned i = 0; i < r->nwarnings; i++)
        warned |= strncmp(r->warnings[i], "hardware counters: ", 19) == 0 && strstr(r->warnings[i], what) != NULL;
    cr_expect(warned, "%s: no warning names it", what);
    for (unsigned i = 0; i < r->ntables; i++)
        for (unsigned j = 0; j < r->tables[i].nrows; j++) {
            cr_expect_not(r->tables[i].rows[j].counters.present, "%s/%s", r->tables[i].id, r->tables[i].rows[j].name);
            cr_expect(r->tables[i].rows[j].observed.agrees, "%s", r->tables[i].rows[j].observed.verdict);
        }
}

Test(gpu_counters, a_cupti_call_failing_mid_job_never_fails_the_job_and_the_next_job_rebuilds) {
    HELPER_REQUIRE_GPU();
    static const char *const calls[] = {
        "cuptiRangeProfilerSetConfig",         "cuptiRangeProfilerStart", "cuptiRangeProfilerPushRange",
        "cuptiRangeProfilerPopRange",          "cuptiRangeProfilerStop",  "cuptiRangeProfilerDecodeData",
        "cuptiProfilerHostEvaluateToGpuValues"};
    setenv("DV_CUPTI_LIBRARY", DV_CUPTI_STANDIN, 1);
    struct session *s = session_create();
    cr_assert_not_null(s);
    for (size_t k = 0; k <= sizeof calls / sizeof calls[0]; k++) {
        /* The last job fails at no call: the stand-in's values are NaN. */
        const char *call = k < sizeof calls / sizeof calls[0] ? calls[k] : NULL;
        if (call) setenv("CUPTI_STANDIN_FAIL", call, 1);
        else unsetenv("CUPTI_STANDIN_FAIL");
        struct dv_options o = small();
        o.part = DV_PART_1;
        validate(&o);
        struct dv_report *r = experiment_report_create();
        char err[ERR_LEN] = "";
        cr_assert_eq(measure_run_session(s, &o, r, err), 0, "%s", err);
        expect_no_counters(r, call ? call : "no value for smsp__sass_branch_targets_threads_divergent.sum");
        cr_expect_eq(standin_calls("cuptiProfilerInitialize"), k + 1, "job %zu: the profiler was not rebuilt", k);
        experiment_report_free(r);
    }
    session_free(s);
}

Test(gpu_counters, a_failure_in_a_later_table_takes_the_counters_of_the_whole_job) {
    HELPER_REQUIRE_GPU();
    setenv("DV_CUPTI_LIBRARY", DV_CUPTI_STANDIN, 1);
    setenv("CUPTI_STANDIN_VALUE", "7", 1);
    setenv("CUPTI_STANDIN_FAIL", "cuptiRangeProfilerStart", 1);
    setenv("CUPTI_STANDIN_AFTER", "2", 1); /* Part 1's two passes start, Part 2's first does not */
    struct dv_options o = small();
    validate(&o);
    struct dv_report *r = experiment_report_create();
    char err[ERR_LEN] = "";
    cr_assert_eq(measure_run(&o, r, err), 0, "%s", err);
    cr_assert_eq(r->ntables, 2);
    expect_no_counters(r, "cuptiRangeProfilerStart");
    experiment_report_free(r);
}

Test(gpu_counters, a_sticky_error_inside_the_pass_is_its_reason_and_ends_the_profiler) {
    HELPER_REQUIRE_GPU();
    setenv("DV_CUPTI_LIBRARY", DV_CUPTI_STANDIN, 1);
    struct dv_options o = small();
    o.part = DV_PART_1;
    validate(&o);
    char err[ERR_LEN] = "", library[256], reason[ERR_LEN] = "";
    struct dv_report *r = experiment_report_create();
    struct session *s = session_create();
    cr_assert_eq(plan_report(&o, r, NULL, err), 0, "%s", err);
    cr_assert_eq(session_device(s, 0, &r->device, err), 0, "%s", err);
    struct counters *c = session_counters(s, &r->device, library, reason);
    cr_assert_not_null(c, "%s", reason);
    int rc = 0;
    const unsigned long long n = r->config.threads;
    const float *in = session_input(s, n, &rc, err);
    cr_assert_not_null(in, "%s", err);
    /* The timed kernel writing where no buffer is: an illegal address. */
    struct replay_ctx x = {.t = &r->tables[0],
                           .base = {.in = in,
                                    .n = n,
                                    .blocks = r->config.blocks,
                                    .block_x = r->config.block_x,
                                    .block_y = r->config.block_y,
                                    .iterations = r->config.iterations}};
    for (unsigned i = 0; i < DV_MAX_ROWS; i++) x.out[i] = (float *)(uintptr_t)0x100;
    struct testimony_grid grids[DV_MAX_ROWS];
    for (unsigned i = 0; i < r->tables[0].nrows; i++) testimony_counter_grid(r->config.blocks, 0, &grids[i]);
    const struct counters_launch l = {.launch = replay_launch, .ctx = &x};
    struct dv_testimony tm;
    memset(&tm, 0, sizeof tm);
    unsigned ev[DV_MAX_ROWS];
    for (unsigned i = 0; i < DV_MAX_ROWS; i++) ev[i] = 1;
    counters_table(&c, &r->tables[0], grids, &l, ev, &tm);
    cr_expect_null(c);
    cr_expect(session_lost(s));
    cr_expect(strstr(tm.counters_reason, "counter pass of part1:") == tm.counters_reason, "%s", tm.counters_reason);
    cr_expect(strstr(tm.counters_reason, "cudaErrorIllegalAddress") != NULL, "%s", tm.counters_reason);
    cr_expect_eq(standin_calls("cuptiRangeProfilerStop"), 0, "no CUPTI call after the sticky error");
    cr_expect_null(session_counters(s, &r->device, library, reason));
    cr_expect(strstr(reason, "sticky") != NULL, "%s", reason);
    /* No CUDA call follows in this process: the session is only freed. */
    experiment_report_free(r);
}

#endif

/* ---- the default pass against the hardware's counts on whole grids ----- */

struct compare_case {
    const char *name;
    enum dv_part part;
    const char *scenario;
    unsigned blocks, bx, by;
    const char *preds[8];
};

static const struct compare_case compare_cases[] = {
    {"built-ins, Part 1 and Part 2",
     DV_PART_ALL,
     NULL,
     0,
     0,
     0,
     {"lane-parity", "lane-half", "warp-parity", "block-parity", "first-16", NULL}},
    {"scenario suite", DV_PART_ALL, "all", 0, 0, 0, {NULL}},
    {"custom 32x8",
     DV_PART_1,
     NULL,
     1000,
     32,
     8,
     {"threadIdx.y & 1", "threadIdx.x < 16", "(threadIdx.x + threadIdx.y) & 1", "lane < 1", "blockIdx.x & 2",
      "(blockIdx.x * 7 + warp) % 3 == 0", NULL}},
    {"custom 48x1",
     DV_PART_1,
     NULL,
     1000,
     48,
     1,
     {"threadIdx.x < 40", "warp == 1", "lane < 16", "threadIdx.x < blockIdx.x % 64", NULL}},
    {"custom 24x3",
     DV_PART_1,
     NULL,
     1000,
     24,
     3,
     {"threadIdx.y == 2", "threadIdx.x & 1", "blockIdx.x % 5 == 0 && lane < 7", "blockIdx.x == 999", NULL}},
};
#define NCASES (sizeof compare_cases / sizeof compare_cases[0])

static struct dv_options case_options(const struct compare_case *k) {
    struct dv_options o = small();
    o.blocks = k->blocks ? k->blocks : DV_DEFAULT_BLOCKS;
    if (k->bx) o.block_x = k->bx;
    if (k->by) o.block_y = k->by;
    o.part = k->part;
    if (k->scenario) snprintf(o.scenario, sizeof o.scenario, "%s", k->scenario);
    if (k->preds[0]) {
        o.npredicates = 0;
        for (unsigned i = 0; i < 8 && k->preds[i]; i++)
            snprintf(o.predicates[o.npredicates++], PREDICATE_TEXT_LEN, "%s", k->preds[i]);
        if (k->part == DV_PART_1) snprintf(o.baseline, PREDICATE_TEXT_LEN, "%s", k->preds[0]);
    }
    return o;
}

/* In a child of its own (the parent never touches CUDA): every case
 * measured in one session with `set` / `grid` for the pass, each document
 * written to `fd` as a 4-byte length and the text; a length of 0 and a
 * reason when there is no GPU. */
static void compare_child(int fd, const char *set, const char *grid) {
    if (set) setenv("DV_COUNTERS_SET", set, 1);
    if (grid) setenv("DV_COUNTERS_GRID", grid, 1);
    char why[ERR_LEN];
    if (!helper_gpu_available(why)) {
        unsigned z = 0;
        if (write(fd, &z, 4) != 4 || write(fd, why, strlen(why)) < 0) _exit(3);
        _exit(0);
    }
    struct session *s = session_create();
    for (size_t k = 0; k < NCASES; k++) {
        struct dv_options o = case_options(&compare_cases[k]);
        char err[ERR_LEN] = "";
        struct dv_report *r = experiment_report_create();
        if (!s || !r || options_validate(&o, OPTIONS_JSON, NULL, err) != 0) _exit(2);
        int rc = measure_run_session(s, &o, r, err);
        char *doc = rc == 0 ? report_json(r, 0) : NULL;
        if (!doc) {
            fprintf(stderr, "%s: %s\n", compare_cases[k].name, err);
            _exit(2);
        }
        unsigned len = (unsigned)strlen(doc);
        if (write(fd, &len, 4) != 4 || write(fd, doc, len) != (ssize_t)len) _exit(3);
        free(doc);
        experiment_report_free(r);
    }
    session_free(s);
    _exit(0);
}

static int read_all(int fd, void *buf, size_t n) {
    for (size_t got = 0; got < n;) {
        ssize_t k = read(fd, (char *)buf + got, n - got);
        if (k <= 0) return -1;
        got += (size_t)k;
    }
    return 0;
}

/* Runs compare_child() and parses its documents into reports[k]; 0, or 1
 * with `why` when there is no GPU. */
static int compare_run(const char *set, const char *grid, struct dv_report **reports, char *why) {
    int p[2];
    cr_assert_eq(pipe(p), 0);
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        close(p[0]);
        compare_child(p[1], set, grid);
    }
    close(p[1]);
    int skipped = 0;
    for (size_t k = 0; k < NCASES && !skipped; k++) {
        unsigned len = 0;
        cr_assert_eq(read_all(p[0], &len, 4), 0, "%s: the child ended early", compare_cases[k].name);
        if (len == 0) {
            ssize_t m = read(p[0], why, ERR_LEN - 1);
            why[m > 0 ? m : 0] = '\0';
            skipped = 1;
            break;
        }
        char *doc = malloc(len + 1);
        cr_assert_not_null(doc);
        cr_assert_eq(read_all(p[0], doc, len), 0);
        doc[len] = '\0';
        char err[ERR_LEN];
        cr_assert_not_null(reports[k] = experiment_report_create());
        cr_assert_eq(report_parse(doc, len, reports[k], err), 0, "%s", err);
        free(doc);
    }
    close(p[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the %s child failed (%d)", set ? set : "default", status);
    return skipped;
}

/* How the pass now counts row `j` of table `t` under options `o` on a GPU
 * of `sms` SMs (a scenario row's stand-in takes them for its wave): "2 x
 * 2048", "3 x 333 + 1", "whole grid (4096)", "stand-in 16 x 256". */
static void grid_text(const struct dv_options *o, const struct dv_table *t, unsigned j, unsigned sms, char *out,
                      size_t len) {
    const struct dv_geometry g = experiment_table_is_scenario(t)
                                     ? scenario_grid(o)
                                     : (struct dv_geometry){o->blocks, o->block_x, o->block_y ? o->block_y : 1};
    const unsigned tpb = g.block_x * g.block_y;
    struct testimony_grid tg;
    char err[ERR_LEN];
    if (experiment_table_is_scenario(t)) {
        const struct scenario *s = scenario_find(t->id + strlen("scenario:"));
        uint8_t *work = malloc((size_t)g.blocks * tpb);
        cr_assert(s && work);
        struct scenario rs;
        scenario_row(s, j, &rs);
        cr_assert_eq(scenario_assign(&rs, s->rows[j].layout, g.blocks, tpb, work, err), 0, "%s", err);
        testimony_counter_grid(g.blocks, testimony_period_bytes(work, tpb, g.blocks), &tg);
        unsigned *src = malloc((size_t)g.blocks * sizeof *src);
        cr_assert_not_null(src);
        struct testimony_grid sg;
        const int standin = testimony_standin_bytes(work, tpb, g.blocks, sms ? sms : 1, &tg, &sg, src, g.blocks) > 0;
        free(src);
        free(work);
        if (standin && sg.nparts == 1) snprintf(out, len, "stand-in %u x %.0f", sg.part_blocks[0], sg.weight[0]);
        else if (standin)
            snprintf(out, len, "stand-in %u x %.0f + %u", sg.part_blocks[0], sg.weight[0], sg.part_blocks[1]);
        if (standin) return;
    } else {
        uint32_t *m = plan_row_mask(&t->rows[j], &g, err);
        cr_assert_not_null(m, "%s", err);
        cr_assert_eq(testimony_lesson_grid(&t->rows[j], &g, o->iterations, m, &tg, err), 0, "%s", err);
        free(m);
    }
    if (tg.part_blocks[0] == g.blocks) snprintf(out, len, "whole grid (%u)", g.blocks);
    else if (tg.nparts == 1) snprintf(out, len, "%u x %.0f", tg.part_blocks[0], tg.weight[0]);
    else snprintf(out, len, "%u x %.0f + %u", tg.part_blocks[0], tg.weight[0], tg.part_blocks[1]);
}

/* Two printed forms equal, counting how many figures were compared. */
static int same_text(const char *fmt, double a, double b, unsigned *n) {
    char x[64], y[64];
    snprintf(x, sizeof x, fmt, a);
    snprintf(y, sizeof y, fmt, b);
    (*n)++;
    return strcmp(x, y) == 0;
}

Test(gpu_counters, the_default_pass_counts_what_the_hardware_counts_on_whole_grids, .timeout = 300) {
    struct dv_report *before[NCASES] = {0}, *now[NCASES] = {0};
    char why[ERR_LEN] = "";
    if (compare_run("hardware", "full", before, why) || compare_run(NULL, NULL, now, why)) {
        printf("SKIPPED: no CUDA device: %s\n", why);
        fflush(stdout);
        cr_skip_test("SKIPPED: no CUDA device: %s", why);
    }
    const char *path = getenv("DV_COUNTERS_COMPARE_OUT");
    FILE *f = path && path[0] ? fopen(path, "w") : NULL;
    FILE *outs[2] = {stdout, f};
    unsigned rows = 0, counts = 0, figures = 0, differ = 0;
    double worst = 0; /* the largest relative difference of lanes per instruction */
    char worst_row[160] = "none";
    for (unsigned w = 0; w < 2; w++)
        if (outs[w])
            fprintf(outs[w],
                    "Hardware instruction counts on whole grids (hw) against the default pass (sw: patched, "
                    "on the blocks that stand for the grid)\n\n"
                    "| case | table | row | counted on (sw) | divergent branch targets hw / sw | warp "
                    "instructions hw / sw | FFMA threads hw / sw | lanes/instr | instr/FMA | vs baseline | "
                    "same? |\n|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (size_t k = 0; k < NCASES; k++) {
        const struct dv_options o = case_options(&compare_cases[k]);
        cr_assert_eq(before[k]->ntables, now[k]->ntables);
        cr_expect(before[k]->testimony.counters_taken, "%s before: %s", compare_cases[k].name,
                  before[k]->testimony.counters_reason);
        cr_expect(now[k]->testimony.counters_taken, "%s now: %s", compare_cases[k].name,
                  now[k]->testimony.counters_reason);
        for (unsigned i = 0; i < now[k]->ntables; i++) {
            const struct dv_table *tb = &before[k]->tables[i], *tn = &now[k]->tables[i];
            for (unsigned j = 0; j < tn->nrows; j++) {
                const struct dv_counters *a = &tb->rows[j].counters, *b = &tn->rows[j].counters;
                char grid[64];
                grid_text(&o, tn, j, (unsigned)now[k]->device.sm_count, grid, sizeof grid);
                int same = a->present && b->present;
                same &= a->branch_targets_divergent == b->branch_targets_divergent;
                same &= a->branch_targets == b->branch_targets;
                same &= a->inst_executed == b->inst_executed;
                same &= a->ffma_threads == b->ffma_threads;
                counts += 4;
                same &= same_text("%.6g", a->branch_uniform_pct, b->branch_uniform_pct, &figures);
                same &= same_text("%.2f", a->threads_per_inst, b->threads_per_inst, &figures);
                const double rel = a->threads_per_inst > 0 ? fabs(b->threads_per_inst / a->threads_per_inst - 1) : 0;
                if (rel > worst) {
                    worst = rel;
                    snprintf(worst_row, sizeof worst_row, "%s %s/%s: %.6f / %.6f", compare_cases[k].name, tn->id,
                             tn->rows[j].name, a->threads_per_inst, b->threads_per_inst);
                }
                same &= same_text("%.4f", a->warp_efficiency, b->warp_efficiency, &figures);
                same &= same_text("%.2f", a->divergent_per_block, b->divergent_per_block, &figures);
                same &= same_text("%.3f", a->inst_per_fma, b->inst_per_fma, &figures);
                same &= same_text("%.3f", a->inst_vs_baseline, b->inst_vs_baseline, &figures);
                same &= a->predicated == b->predicated && strcmp(a->verdict, b->verdict) == 0;
                figures += 2;
                rows++;
                differ += !same;
                cr_expect(same,
                          "%s %s/%s: before %.17g %.17g %.17g %.17g %.17g %.17g '%s', now %.17g %.17g %.17g %.17g "
                          "%.17g %.17g '%s'",
                          compare_cases[k].name, tn->id, tn->rows[j].name, a->branch_targets_divergent,
                          a->branch_targets, a->inst_executed, a->ffma_threads, a->branch_uniform_pct,
                          a->threads_per_inst, a->verdict, b->branch_targets_divergent, b->branch_targets,
                          b->inst_executed, b->ffma_threads, b->branch_uniform_pct, b->threads_per_inst, b->verdict);
                for (unsigned w = 0; w < 2; w++)
                    if (outs[w])
                        fprintf(outs[w],
                                "| %s | %s | %s | %s | %.0f / %.0f | %.0f / %.0f | %.0f / %.0f | %.2f / %.2f | %.3f / "
                                "%.3f | %.3f / %.3f | %s |\n",
                                compare_cases[k].name, tn->id, tn->rows[j].name, grid, a->branch_targets_divergent,
                                b->branch_targets_divergent, a->inst_executed, b->inst_executed, a->ffma_threads,
                                b->ffma_threads, a->threads_per_inst, b->threads_per_inst, a->inst_per_fma,
                                b->inst_per_fma, a->inst_vs_baseline, b->inst_vs_baseline,
                                same ? "identical" : "DIFFERENT");
            }
        }
    }
    for (unsigned w = 0; w < 2; w++)
        if (outs[w]) {
            fprintf(outs[w], "\n%u rows, %u counts and %u derived figures and verdicts compared: %u rows differ\n",
                    rows, counts, figures, differ);
            fprintf(outs[w], "largest relative difference of lanes per instruction: %.4f%% (%s)\n\n", 100 * worst,
                    worst_row);
            fprintf(outs[w],
                    "| case | counter pass host ms hw | sw | witness host ms hw | sw |\n"
                    "|---|---|---|---|---|\n");
            for (size_t k = 0; k < NCASES; k++)
                fprintf(outs[w], "| %s | %.1f | %.1f | %.1f | %.1f |\n", compare_cases[k].name,
                        before[k]->testimony.counters_ms, now[k]->testimony.counters_ms,
                        before[k]->testimony.witness_ms, now[k]->testimony.witness_ms);
        }
    if (f) fclose(f);
    cr_expect_geq(rows, 7 + 14);
    for (size_t k = 0; k < NCASES; k++) {
        experiment_report_free(before[k]);
        experiment_report_free(now[k]);
    }
}

/* ---- memory ------------------------------------------------------------- */

/* A "Name:  N kB" line of /proc/self/status, in kB (-1 when absent). */
static long status_kb(const char *name) {
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long v = -1;
    const size_t n = strlen(name);
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, name, n) == 0 && line[n] == ':') v = strtol(line + n + 1, NULL, 10);
    if (f) fclose(f);
    return v;
}

static void job(struct session *s, struct dv_options *o, int testimony, struct dv_report **keep) {
    o->no_witness = o->no_counters = !testimony;
    validate(o);
    struct dv_report *r = experiment_report_create();
    char err[ERR_LEN] = "";
    cr_assert_not_null(r);
    cr_assert_eq(measure_run_session(s, o, r, err), 0, "%s", err);
    if (keep) *keep = r;
    else experiment_report_free(r);
}

Test(gpu_counters, a_workers_memory_does_not_grow_job_after_job) {
    HELPER_REQUIRE_GPU();
    struct dv_options o = small();
    o.blocks = DV_DEFAULT_BLOCKS;
    o.part = DV_PART_ALL;
    struct session *s = session_create();
    cr_assert_not_null(s);
    job(s, &o, 0, NULL);
    const long none = status_kb("VmRSS");
    struct dv_report *first = NULL;
    job(s, &o, 1, &first);
    if (!first->testimony.counters_taken) {
        printf("counters unavailable: %s\n", first->testimony.counters_reason);
        cr_skip_test("counters unavailable: %s", first->testimony.counters_reason);
    }
    experiment_report_free(first);
    const long loaded = status_kb("VmRSS"), anon = status_kb("RssAnon"), file = status_kb("RssFile");
    for (int i = 0; i < 5; i++) job(s, &o, 1, NULL);
    const long later = status_kb("VmRSS");
    printf(
        "resident memory: %.1f MB after a job without the testimony, %.1f MB after the first with it (CUPTI "
        "loaded: anonymous %.1f MB, files %.1f MB), %.1f MB after five more\n",
        none / 1024.0, loaded / 1024.0, anon / 1024.0, file / 1024.0, later / 1024.0);
    cr_expect(none > 0 && loaded > 0 && later > 0);
    cr_expect_leq(later - loaded, 16 * 1024, "%ld kB more after five jobs", later - loaded);
    session_free(s);
}
