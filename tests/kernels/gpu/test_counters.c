/* test_counters.c -- the counter pass's faults, no GPU needed.
 *
 * The reasons the document gives when CUPTI refuses are plain text; the
 * library load, CUPTI's initialisation, the availability and config images
 * and the range profiler's enable need no CUDA call of counters.c's own
 * (the context is the caller's, here a placeholder), and the pass's
 * launches are the caller's too: so every CUPTI call can be made to fail
 * here, through the stand-in library (tests/support/cupti_standin.c, loaded
 * with DV_CUPTI_LIBRARY) and launches that only record what they were asked
 * to run. The stand-in never yields counters (its values are NaN), so
 * these tests are about what happens when CUPTI fails, and nothing else.
 */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/gpu/counters.h"
#include "tests/kernels/gpu/standin.h"


Test(counters, a_missing_library_is_a_reason_not_a_failure) {
    setenv("DV_CUPTI_LIBRARY", "/nonexistent/libcupti.so", 1);
    char library[256] = "x", reason[ERR_LEN] = "";
    struct counters *c = counters_create();
    cr_assert_not_null(c);
    cr_expect_eq(counters_prepare(c, 0, 9, FAKE_CTX, library, reason), -1);
    cr_expect_str_eq(library, "");
    cr_expect(strstr(reason, "DV_CUPTI_LIBRARY=/nonexistent/libcupti.so cannot be loaded") != NULL ||
                  strstr(reason, "no CUPTI headers") != NULL,
              "%s", reason);
    counters_free(c);
}

Test(counters, gpus_before_volta_are_too_old) {
    char library[256], reason[ERR_LEN] = "";
    struct counters *c = counters_create();
    cr_expect_eq(counters_prepare(c, 0, 6, FAKE_CTX, library, reason), -1);
    cr_expect(strstr(reason, "6.x is too old") != NULL || strstr(reason, "no CUPTI headers") != NULL, "%s", reason);
    counters_free(c);
}

#ifdef DV_CUPTI_STANDIN

#include <cupti_profiler_target.h> /* CUpti_ProfilerRange, CUpti_ProfilerReplayMode */

/* The stand-in's own accounting, from the copy counters.c loaded. */
static unsigned long calls(const char *name) {
    void *h = dlopen(DV_CUPTI_STANDIN, RTLD_NOW | RTLD_NOLOAD);
    cr_assert_not_null(h, "the stand-in is not loaded");
    unsigned long (*f)(const char *) = (unsigned long (*)(const char *))dlsym(h, "cupti_standin_calls");
    cr_assert_not_null(f);
    unsigned long n = f(name);
    dlclose(h);
    return n;
}

static void configured(int *range, int *replay) {
    void *h = dlopen(DV_CUPTI_STANDIN, RTLD_NOW | RTLD_NOLOAD);
    cr_assert_not_null(h);
    void (*f)(int *, int *) = (void (*)(int *, int *))dlsym(h, "cupti_standin_config");
    cr_assert_not_null(f);
    f(range, replay);
    dlclose(h);
}

/* Two rows: one block standing for 4096, and 3 + 1 blocks for 1000. */
static void two_rows(struct testimony_grid g[2]) {
    testimony_counter_grid(4096, 1, &g[0]);
    testimony_counter_grid(1000, 3, &g[1]);
}

/* Each step of the build, failing: the reason names the call, the result
 * and (where there is some) the advice; what was built is undone; the next
 * prepare builds again from the start. */
Test(counters, every_build_step_that_fails_names_its_call_and_the_next_prepare_rebuilds) {
    static const struct {
        const char *call;
        unsigned result;
        const char *advice;
    } steps[] = {
        {"cuptiProfilerInitialize", 35, "NVreg_RestrictProfilingToAdminUsers=0"},
        {"cuptiDeviceGetChipName", 999, ""},
        {"cuptiProfilerGetCounterAvailability", 35, "CAP_SYS_ADMIN"},
        {"cuptiProfilerHostInitialize", 27, "Volta or newer"},
        {"cuptiProfilerHostConfigAddMetrics", 999, ""},
        {"cuptiProfilerHostGetConfigImageSize", 999, ""},
        {"cuptiProfilerHostGetConfigImage", 999, ""},
        {"cuptiRangeProfilerEnable", 39, "another profiler"},
        {"cuptiRangeProfilerGetCounterDataSize", 999, ""},
    };
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
        standin(steps[i].call, steps[i].result);
        setenv("CUPTI_STANDIN_AFTER", "0", 1);
        char library[256], reason[ERR_LEN] = "";
        struct counters *c = counters_create();
        const unsigned long init0 = i ? calls("cuptiProfilerInitialize") : 0;
        const unsigned long deinit0 = i ? calls("cuptiProfilerDeInitialize") : 0;
        cr_expect_eq(counters_prepare(c, 0, 9, FAKE_CTX, library, reason), -1, "%s", steps[i].call);
        cr_expect(strstr(reason, steps[i].call) != NULL, "%s: %s", steps[i].call, reason);
        cr_expect(strstr(reason, "kernels/gpu/counters.c:") != NULL, "%s", reason);
        char code[16];
        snprintf(code, sizeof code, "(%u)", steps[i].result);
        cr_expect(strstr(reason, code) != NULL, "%s", reason);
        cr_expect(strstr(reason, steps[i].advice) != NULL, "%s: %s", steps[i].call, reason);
        cr_expect_str_eq(library, "");
        /* CUPTI initialised is CUPTI deinitialised again. */
        const int init_failed = strcmp(steps[i].call, "cuptiProfilerInitialize") == 0;
        cr_expect_eq(calls("cuptiProfilerDeInitialize"), deinit0 + (init_failed ? 0 : 1), "%s", steps[i].call);
        unsetenv("CUPTI_STANDIN_FAIL");
        cr_expect_eq(counters_prepare(c, 0, 9, FAKE_CTX, library, reason), 0, "%s: %s", steps[i].call, reason);
        cr_expect_eq(calls("cuptiProfilerInitialize"), init0 + 2, "%s", steps[i].call);
        counters_free(c);
    }
}

Test(counters, a_ready_profiler_is_kept_and_another_context_rebuilds_it) {
    standin(NULL, 0);
    struct counters *c = prepared();
    char library[256], reason[ERR_LEN] = "";
    cr_assert_eq(counters_prepare(c, 0, 9, FAKE_CTX, library, reason), 0, "%s", reason);
    cr_expect_eq(calls("cuptiProfilerInitialize"), 1);
    cr_expect_eq(calls("cuptiProfilerGetCounterAvailability"), 2);
    cr_expect_eq(calls("cuptiProfilerHostConfigAddMetrics"), 1);
    cr_expect_eq(calls("cuptiRangeProfilerEnable"), 1);
    cr_expect_eq(calls("cuptiRangeProfilerDisable"), 0);
    cr_assert_eq(counters_prepare(c, 0, 9, (void *)0x2, library, reason), 0, "%s", reason);
    cr_expect_eq(calls("cuptiRangeProfilerDisable"), 1);
    cr_expect_eq(calls("cuptiProfilerDeInitialize"), 1);
    cr_expect_eq(calls("cuptiProfilerInitialize"), 2);
    counters_free(c);
    cr_expect_eq(calls("cuptiRangeProfilerDisable"), 2);
    cr_expect_eq(calls("cuptiProfilerHostDeinitialize"), 2);
    cr_expect_eq(calls("cuptiProfilerDeInitialize"), 2);
}

/* Letting go of the profiler (before another process profiles the GPU)
 * ends it at once; a second release and a NULL one do nothing; the next
 * prepare builds it again from CUPTI's initialisation. */
Test(counters, a_released_profiler_is_ended_now_and_rebuilt_by_the_next_prepare) {
    standin(NULL, 0);
    struct counters *c = prepared();
    cr_expect_eq(calls("cuptiRangeProfilerDisable"), 0);
    counters_release(c);
    cr_expect_eq(calls("cuptiRangeProfilerDisable"), 1, "the range profiler ended");
    cr_expect_eq(calls("cuptiProfilerDeInitialize"), 1, "CUPTI's profiler ended");
    counters_release(c);
    counters_release(NULL);
    cr_expect_eq(calls("cuptiRangeProfilerDisable"), 1, "nothing more to end");
    char library[256], reason[ERR_LEN] = "";
    cr_assert_eq(counters_prepare(c, 0, 9, FAKE_CTX, library, reason), 0, "%s", reason);
    cr_expect_eq(calls("cuptiProfilerInitialize"), 2, "rebuilt from the start");
    cr_expect_eq(calls("cuptiRangeProfilerEnable"), 2);
    counters_free(c);
}

Test(counters, an_unknown_pass_in_the_environment_is_refused_by_name) {
    standin(NULL, 0);
    setenv("DV_COUNTERS_SET", "sometimes", 1);
    char library[256], reason[ERR_LEN] = "";
    struct counters *c = counters_create();
    cr_expect_eq(counters_prepare(c, 0, 9, FAKE_CTX, library, reason), -1);
    cr_expect(strstr(reason, "DV_COUNTERS_SET=sometimes is not patched or hardware") != NULL, "%s", reason);
    unsetenv("DV_COUNTERS_SET");
    setenv("DV_COUNTERS_GRID", "half", 1);
    cr_expect_eq(counters_prepare(c, 0, 9, FAKE_CTX, library, reason), -1);
    cr_expect(strstr(reason, "DV_COUNTERS_GRID=half") != NULL, "%s", reason);
    counters_free(c);
}

static const char *added_metrics(void) {
    void *h = dlopen(DV_CUPTI_STANDIN, RTLD_NOW | RTLD_NOLOAD);
    cr_assert_not_null(h);
    const char *(*f)(void) = (const char *(*)(void))dlsym(h, "cupti_standin_metrics");
    cr_assert_not_null(f);
    const char *v = f();
    dlclose(h);
    return v;
}

/* The pass launches each row's parts, every pass the same, one user range
 * each, user replay; the whole grids with DV_COUNTERS_GRID=full. The
 * default set asks CUPTI for software-patched counts only (one pass on a
 * GPU: what lets it run behind unprofiled kernels), the hardware set for
 * the instruction counts of the hardware. */
Test(counters, the_pass_launches_the_parts_of_each_grid_in_every_pass) {
    static const struct {
        const char *set, *grid;
        unsigned launches_per_pass;
        unsigned blocks[3];
        int alongside;
        const char *metrics;
    } modes[] = {
        {NULL,
         NULL,
         3,
         {1, 3, 1},
         1,
         "smsp__sass_branch_targets_threads_divergent.sum,smsp__sass_branch_targets.sum,"
         "smsp__sass_branch_targets_threads_uniform.sum,smsp__sass_thread_inst_executed_op_ffma_pred_on.sum,"
         "smsp__sass_inst_executed.sum,smsp__sass_thread_inst_executed.sum"},
        {"patched", "full", 2, {4096, 1000, 0}, 1, NULL},
        {"hardware",
         "reduced",
         3,
         {1, 3, 1},
         0,
         "smsp__sass_branch_targets_threads_divergent.sum,smsp__sass_branch_targets.sum,"
         "smsp__sass_branch_targets_threads_uniform.sum,smsp__sass_thread_inst_executed_op_ffma_pred_on.sum,"
         "smsp__inst_executed.sum,smsp__thread_inst_executed.sum"},
    };
    const unsigned passes = 2; /* the stand-in's */
    for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
        standin(NULL, 0);
        if (modes[m].set) setenv("DV_COUNTERS_SET", modes[m].set, 1);
        else unsetenv("DV_COUNTERS_SET");
        if (modes[m].grid) setenv("DV_COUNTERS_GRID", modes[m].grid, 1);
        else unsetenv("DV_COUNTERS_GRID");
        struct counters *c = prepared();
        cr_expect_eq(counters_alongside(c), modes[m].alongside, "mode %zu", m);
        if (modes[m].metrics) cr_expect_str_eq(added_metrics(), modes[m].metrics);
        const unsigned long push0 = calls("cuptiRangeProfilerPushRange"), stop0 = calls("cuptiRangeProfilerStop");
        const unsigned long enable0 = calls("cuptiRangeProfilerEnable"), disable0 = calls("cuptiRangeProfilerDisable");
        struct testimony_grid g[2];
        two_rows(g);
        struct fake f = {.fail_row = -1};
        const struct counters_launch l = {fake_launch, fake_wait, &f, NULL};
        struct dv_counters out[2];
        char reason[ERR_LEN] = "";
        /* The stand-in's values are NaN: the pass runs whole, then says so. */
        cr_expect_eq(counters_profile(c, 2, g, &l, out, reason), COUNTERS_REFUSED, "mode %zu", m);
        cr_expect(strstr(reason, "no value for smsp__sass_branch_targets_threads_divergent.sum in range 0") != NULL,
                  "%s", reason);
        const unsigned per = modes[m].launches_per_pass;
        cr_expect_eq(f.n, per * passes, "mode %zu: %u launches", m, f.n);
        cr_expect_eq(f.waits, passes);
        cr_expect_eq(counters_passes(c), passes);
        for (unsigned i = 0; i < f.n && i < 64; i++) {
            cr_expect_eq(f.blocks[i], modes[m].blocks[i % per], "mode %zu launch %u", m, i);
            cr_expect_eq(f.row[i], (i % per) == 0 ? 0u : 1u, "mode %zu launch %u", m, i);
        }
        cr_expect_eq(calls("cuptiRangeProfilerPushRange") - push0, per * passes);
        cr_expect_eq(calls("cuptiRangeProfilerStop") - stop0, passes);
        /* Enabled once, at the build, and left enabled. */
        cr_expect_eq(calls("cuptiRangeProfilerEnable") - enable0, 0u, "mode %zu", m);
        cr_expect_eq(calls("cuptiRangeProfilerDisable") - disable0, 0u, "mode %zu", m);
        int range = -1, replay = -1;
        configured(&range, &replay);
        cr_expect_eq(range, CUPTI_UserRange, "mode %zu", m);
        cr_expect_eq(replay, CUPTI_UserReplay, "mode %zu", m);
        cr_expect_not(out[0].present);
        cr_expect_not(out[1].present);
        counters_free(c);
    }
    unsetenv("DV_COUNTERS_SET");
    unsetenv("DV_COUNTERS_GRID");
}

/* A row with a stand-in grid (model/model/testimony.h) is launched part by part
 * at each part's place in the stand-in, and said to be a stand-in; with
 * DV_COUNTERS_GRID=full it is launched on its own whole grid. The blocks
 * the pass launched are counted over both passes. */
Test(counters, a_stand_in_grids_parts_are_launched_at_their_places) {
    static const struct {
        const char *grid;
        unsigned n;
        struct counters_span span[3];
    } modes[] = {
        {NULL, 3, {{0, 1, 0}, {0, 3, 1}, {3, 2, 1}}},
        {"full", 2, {{0, 4096, 0}, {0, 4096, 0}}},
    };
    for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
        standin(NULL, 0);
        unsetenv("DV_COUNTERS_SET");
        if (modes[m].grid) setenv("DV_COUNTERS_GRID", modes[m].grid, 1);
        else unsetenv("DV_COUNTERS_GRID");
        struct counters *c = prepared();
        struct testimony_grid g[2];
        testimony_counter_grid(4096, 1, &g[0]);
        g[1] = (struct testimony_grid){.blocks = 4096,
                                       .nparts = 2,
                                       .part_blocks = {3, 2},
                                       .weight = {1365, 1},
                                       .first = {0, 3},
                                       .standin = 1};
        struct fake f = {.fail_row = -1};
        const struct counters_launch l = {fake_launch, fake_wait, &f, NULL};
        struct dv_counters out[2];
        char reason[ERR_LEN] = "";
        cr_expect_eq(counters_profile(c, 2, g, &l, out, reason), COUNTERS_REFUSED); /* the stand-in's NaNs */
        const unsigned per = modes[m].n, passes = counters_passes(c);
        cr_assert_eq(f.n, per * passes, "mode %zu: %u launches", m, f.n);
        unsigned long long blocks = 0;
        for (unsigned i = 0; i < f.n && i < 64; i++) {
            const struct counters_span *want = &modes[m].span[i % per];
            cr_expect_eq(f.first[i], want->first, "mode %zu launch %u", m, i);
            cr_expect_eq(f.blocks[i], want->blocks, "mode %zu launch %u", m, i);
            cr_expect_eq(f.standin[i], want->standin, "mode %zu launch %u", m, i);
            blocks += want->blocks;
        }
        unsigned launches = 0;
        unsigned long long counted = 0;
        counters_launched(c, &launches, &counted);
        cr_expect_eq(launches, f.n);
        cr_expect_eq(counted, blocks);
        counters_free(c);
    }
    unsetenv("DV_COUNTERS_GRID");
}

/* Each call of a pass, failing: refused with its name, no counters, the
 * session stopped where it had started, and a rebuild at the next prepare. */
Test(counters, every_call_of_the_pass_that_fails_leaves_no_counters_and_a_rebuild) {
    static const struct {
        const char *call;
        int stops; /* Stop calls expected: a failure after Start still stops */
    } calls_of_pass[] = {
        {"cuptiRangeProfilerCounterDataImageInitialize", 0},
        {"cuptiRangeProfilerSetConfig", 0},
        {"cuptiRangeProfilerStart", 0},
        {"cuptiRangeProfilerPushRange", 1},
        {"cuptiRangeProfilerPopRange", 1},
        {"cuptiRangeProfilerStop", 1},
        {"cuptiRangeProfilerDecodeData", 2},
        {"cuptiRangeProfilerGetCounterDataInfo", 2},
        {"cuptiProfilerHostEvaluateToGpuValues", 2},
    };
    for (size_t i = 0; i < sizeof calls_of_pass / sizeof calls_of_pass[0]; i++) {
        standin(NULL, 0);
        struct counters *c = prepared();
        standin(calls_of_pass[i].call, 999);
        const unsigned long stop0 = calls("cuptiRangeProfilerStop"), init0 = calls("cuptiProfilerInitialize");
        struct testimony_grid g[2];
        two_rows(g);
        struct fake f = {.fail_row = -1};
        const struct counters_launch l = {fake_launch, fake_wait, &f, NULL};
        struct dv_counters out[2] = {{.present = 1}, {.present = 1}};
        char reason[ERR_LEN] = "";
        cr_expect_eq(counters_profile(c, 2, g, &l, out, reason), COUNTERS_REFUSED, "%s", calls_of_pass[i].call);
        cr_expect(strstr(reason, calls_of_pass[i].call) != NULL, "%s: %s", calls_of_pass[i].call, reason);
        cr_expect(strstr(reason, "CUPTI_ERROR_UNKNOWN (999)") != NULL, "%s", reason);
        cr_expect_not(out[0].present);
        cr_expect_not(out[1].present);
        cr_expect_eq(calls("cuptiRangeProfilerStop") - stop0, (unsigned long)calls_of_pass[i].stops, "%s",
                     calls_of_pass[i].call);
        cr_expect_not(counters_lost(c));
        /* Refused until prepared again, which rebuilds. */
        cr_expect_eq(counters_profile(c, 2, g, &l, out, reason), COUNTERS_REFUSED);
        unsetenv("CUPTI_STANDIN_FAIL");
        char library[256];
        cr_expect_eq(counters_prepare(c, 0, 9, FAKE_CTX, library, reason), 0, "%s", reason);
        cr_expect_eq(calls("cuptiProfilerInitialize"), init0 + 1, "%s", calls_of_pass[i].call);
        counters_free(c);
    }
}

Test(counters, ranges_cupti_did_not_record_and_passes_that_never_end_are_refused) {
    standin(NULL, 0);
    struct counters *c = prepared();
    struct testimony_grid g[2];
    two_rows(g);
    struct fake f = {.fail_row = -1};
    const struct counters_launch l = {fake_launch, fake_wait, &f, NULL};
    struct dv_counters out[2];
    char reason[ERR_LEN] = "", library[256];
    setenv("CUPTI_STANDIN_RANGES", "2", 1);
    cr_expect_eq(counters_profile(c, 2, g, &l, out, reason), COUNTERS_REFUSED);
    cr_expect(strstr(reason, "2 ranges recorded for 3 launches") != NULL, "%s", reason);
    unsetenv("CUPTI_STANDIN_RANGES");
    cr_assert_eq(counters_prepare(c, 0, 9, FAKE_CTX, library, reason), 0, "%s", reason);
    setenv("CUPTI_STANDIN_PASSES", "1000", 1);
    cr_expect_eq(counters_profile(c, 2, g, &l, out, reason), COUNTERS_REFUSED);
    cr_expect(strstr(reason, "8 passes did not collect the metric set") != NULL, "%s", reason);
    unsetenv("CUPTI_STANDIN_PASSES");
    counters_free(c);
}

/* A launch that fails inside the pass: its own error, the session stopped,
 * a rebuild next time; a sticky one: nothing more is asked of CUPTI. */
Test(counters, a_failed_launch_stops_the_pass_and_a_sticky_one_ends_the_profiler) {
    standin(NULL, 0);
    struct counters *c = prepared();
    struct testimony_grid g[2];
    two_rows(g);
    struct fake f = {.fail_row = 1, .fail_rc = DV_ERR};
    const struct counters_launch l = {fake_launch, fake_wait, &f, NULL};
    struct dv_counters out[2];
    char reason[ERR_LEN] = "", library[256];
    cr_expect_eq(counters_profile(c, 2, g, &l, out, reason), DV_ERR);
    cr_expect(strstr(reason, "an injected failure") != NULL, "%s", reason);
    cr_expect_eq(calls("cuptiRangeProfilerStop"), 1);
    cr_expect_eq(f.waits, 1); /* what was enqueued is waited for before the stop */
    cr_expect_not(counters_lost(c));
    cr_assert_eq(counters_prepare(c, 0, 9, FAKE_CTX, library, reason), 0, "%s", reason);
    cr_expect_eq(calls("cuptiProfilerInitialize"), 2);

    f = (struct fake){.fail_row = 0, .fail_rc = DV_ESTICKY};
    cr_expect_eq(counters_profile(c, 2, g, &l, out, reason), DV_ESTICKY);
    cr_expect(counters_lost(c));
    cr_expect_eq(calls("cuptiRangeProfilerStop"), 1, "no Stop after a sticky error");
    cr_expect_eq(counters_prepare(c, 0, 9, FAKE_CTX, library, reason), -1);
    cr_expect(strstr(reason, "sticky CUDA error") != NULL, "%s", reason);
    counters_free(c);
    cr_expect_eq(calls("cuptiRangeProfilerDisable"), 1, "no CUPTI call after a sticky error");
    cr_expect_eq(calls("cuptiProfilerDeInitialize"), 1);
}

/* The table's pass never fails the table: the reason, the time, no
 * counters, and the profiler dropped for the rest of the job. */
Test(counters, a_table_whose_pass_fails_keeps_the_reason_and_drops_the_profiler) {
    standin(NULL, 0);
    struct counters *c = prepared(), *held = c;
    standin("cuptiRangeProfilerStart", 36);
    struct dv_table t;
    memset(&t, 0, sizeof t);
    snprintf(t.id, sizeof t.id, "part1");
    t.nrows = 2;
    t.rows[0].counters.present = 1;
    struct testimony_grid g[2];
    two_rows(g);
    struct fake f = {.fail_row = -1};
    const struct counters_launch l = {fake_launch, fake_wait, &f, NULL};
    struct dv_testimony tm;
    memset(&tm, 0, sizeof tm);
    const unsigned ev[2] = {1, 1};
    counters_table(&c, &t, g, &l, ev, &tm);
    cr_expect_null(c);
    cr_expect(strstr(tm.counters_reason, "cuptiRangeProfilerStart") != NULL, "%s", tm.counters_reason);
    cr_expect(strstr(tm.counters_reason, "another profiler") != NULL, "%s", tm.counters_reason);
    cr_expect_not(t.rows[0].counters.present);
    cr_expect(tm.counters_ms >= 0);
    /* A launch's error says it was the counter pass's. */
    c = held;
    unsetenv("CUPTI_STANDIN_FAIL");
    char library[256], reason[ERR_LEN];
    cr_assert_eq(counters_prepare(c, 0, 9, FAKE_CTX, library, reason), 0, "%s", reason);
    f = (struct fake){.fail_row = 0, .fail_rc = DV_ERR};
    counters_table(&c, &t, g, &l, ev, &tm);
    cr_expect_null(c);
    cr_expect(strstr(tm.counters_reason, "counter pass of part1: launch mixOneBranch") == tm.counters_reason, "%s",
              tm.counters_reason);
    counters_free(held);
}

/* The first Start after the profiler is enabled is set apart as its
 * start-up; the later ones are the pass's. */
Test(counters, the_first_start_is_the_profilers_start_up_not_the_first_tables) {
    standin(NULL, 0);
    setenv("CUPTI_STANDIN_START_MS", "40", 1);
    struct counters *c = prepared();
    struct testimony_grid g[2];
    two_rows(g);
    struct fake f = {.fail_row = -1};
    const struct counters_launch l = {fake_launch, fake_wait, &f, NULL};
    struct dv_counters out[2];
    char reason[ERR_LEN], library[256];
    cr_expect_eq(counters_profile(c, 2, g, &l, out, reason), COUNTERS_REFUSED); /* NaN values */
    const double first = counters_take_start_ms(c);
    cr_expect(first >= 39 && first < 80, "%.1f ms: one Start of the two passes", first);
    cr_expect_eq(counters_take_start_ms(c), 0);
    cr_assert_eq(counters_prepare(c, 0, 9, FAKE_CTX, library, reason), 0, "%s", reason); /* rebuilt: cold again */
    cr_expect_eq(counters_profile(c, 2, g, &l, out, reason), COUNTERS_REFUSED);
    cr_expect(counters_take_start_ms(c) >= 39);
    unsetenv("CUPTI_STANDIN_VALUE");
    setenv("CUPTI_STANDIN_VALUE", "3", 1); /* a pass that succeeds keeps the profiler warm */
    cr_assert_eq(counters_prepare(c, 0, 9, FAKE_CTX, library, reason), 0, "%s", reason);
    cr_expect_eq(counters_profile(c, 2, g, &l, out, reason), 0, "%s", reason);
    cr_expect(counters_take_start_ms(c) >= 39);
    cr_expect_eq(counters_profile(c, 2, g, &l, out, reason), 0, "%s", reason);
    cr_expect_eq(counters_take_start_ms(c), 0);
    /* Sums scale by the parts' weights; the ratios are the scaled sums'. */
    cr_expect_float_eq(out[0].inst_executed, 3.0 * 4096, 0);
    cr_expect_float_eq(out[1].inst_executed, 3.0 * 333 + 3.0, 0);
    cr_expect_float_eq(out[0].threads_per_inst, 1.0, 0);
    cr_expect_float_eq(out[1].threads_per_inst, 1.0, 1e-15);
    cr_expect_float_eq(out[0].branch_uniform_pct, 100.0, 0);
    cr_expect_float_eq(out[1].branch_uniform_pct, 100.0, 1e-12);
    counters_free(c);
}

/* Part 2's per-iteration lane parity on blocks of 48 threads (a warp of
 * 32 and one of 16), counted through the pass: CUPTI says no divergent
 * branch and 24 threads per warp instruction, all the threads each warp has.
 * The pass's verdict is "predicated", recognised from the row's own warps
 * rather than from 32 lanes per instruction, and it names the model's split
 * per block and evaluation (2 warps at each of 4096), not 8192 "warps per
 * block". */
Test(counters, a_predicated_branch_in_partial_warps_is_recognised_per_block_and_evaluation) {
    standin(NULL, 0);
    setenv("CUPTI_STANDIN_METRICS",
           "smsp__sass_branch_targets_threads_divergent.sum=0;smsp__sass_branch_targets.sum=8192;"
           "smsp__sass_branch_targets_threads_uniform.sum=8192;"
           "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum=196608;"
           "smsp__sass_inst_executed.sum=21299.2;smsp__sass_thread_inst_executed.sum=511180.8",
           1);
    struct counters *c = prepared();
    struct dv_table t;
    memset(&t, 0, sizeof t);
    snprintf(t.id, sizeof t.id, "part2");
    t.nrows = 1;
    struct dv_row *w = &t.rows[0];
    snprintf(w->name, sizeof w->name, "per-iteration-lane-parity");
    w->threads_per_block = 48;
    w->warps_per_block = 2;
    w->warps_split.per_block = 2;
    struct testimony_grid g[1];
    testimony_counter_grid(4096, 1, &g[0]); /* one block stands for 4096 */
    struct fake f = {.fail_row = -1};
    const struct counters_launch l = {fake_launch, fake_wait, &f, NULL};
    struct dv_testimony tm;
    memset(&tm, 0, sizeof tm);
    const unsigned ev[1] = {4096};
    counters_table(&c, &t, g, &l, ev, &tm);
    unsetenv("CUPTI_STANDIN_METRICS");
    cr_assert_not_null(c, "%s", tm.counters_reason);
    cr_assert(w->counters.present);
    cr_expect_float_eq(w->counters.threads_per_inst, 24.0, 1e-9);
    cr_expect(w->counters.predicated, "%s", w->counters.verdict);
    cr_expect(strstr(w->counters.verdict, "predicated") == w->counters.verdict, "%s", w->counters.verdict);
    cr_expect(strstr(w->counters.verdict, "2 warps per block at each of 4096 evaluations") != NULL, "%s",
              w->counters.verdict);
    cr_expect(strstr(w->counters.verdict, "8192 warps") == NULL, "%s", w->counters.verdict);
    counters_free(c);
}

/* A table of many rows is counted in sessions of at most four ranges (on
 * the H200 a session of 11 user ranges decoded only 4 of them): eleven
 * rows of one range each take three sessions, every row counted once per
 * pass, and every row gets its counts. */
Test(counters, many_ranges_are_counted_in_sessions_of_four) {
    standin(NULL, 0);
    setenv("DV_COUNTERS_GRID", "full", 1);
    setenv("CUPTI_STANDIN_VALUE", "7", 1);
    struct counters *c = prepared();
    struct testimony_grid g[11];
    for (unsigned r = 0; r < 11; r++) testimony_counter_grid(64, 1, &g[r]);
    struct fake f = {.fail_row = -1};
    const struct counters_launch l = {fake_launch, fake_wait, &f, NULL};
    struct dv_counters out[11];
    char reason[ERR_LEN] = "";
    const unsigned long set0 = calls("cuptiRangeProfilerSetConfig"), push0 = calls("cuptiRangeProfilerPushRange");
    cr_expect_eq(counters_profile(c, 11, g, &l, out, reason), 0, "%s", reason);
    const unsigned passes = counters_passes(c);
    cr_expect_eq(passes, 2, "the stand-in's metric set takes two passes in each session");
    cr_expect_eq(calls("cuptiRangeProfilerSetConfig") - set0, 3, "sessions of 4, 4 and 3 ranges");
    cr_expect_eq(calls("cuptiRangeProfilerPushRange") - push0, 11 * passes, "each row once per pass");
    cr_expect_eq(f.n, 11 * passes);
    for (unsigned r = 0; r < 11; r++) cr_expect(out[r].present, "row %u has no counts", r);
    unsetenv("CUPTI_STANDIN_VALUE");
    unsetenv("DV_COUNTERS_GRID");
    counters_free(c);
}


/* ---- arithmetic intensity: the DRAM pass ------------------------------ */

static const char *metric_sets(void) {
    void *h = dlopen(DV_CUPTI_STANDIN, RTLD_NOW | RTLD_NOLOAD);
    cr_assert_not_null(h);
    const char *(*f)(void) = (const char *(*)(void))dlsym(h, "cupti_standin_metric_sets");
    cr_assert_not_null(f);
    const char *v = f();
    dlclose(h);
    return v;
}

/* The names the stand-in's range object lays counter data images out by. */
static const char *layout(void) {
    void *h = dlopen(DV_CUPTI_STANDIN, RTLD_NOW | RTLD_NOLOAD);
    cr_assert_not_null(h);
    const char *(*f)(void) = (const char *(*)(void))dlsym(h, "cupti_standin_layout");
    cr_assert_not_null(f);
    const char *v = f();
    dlclose(h);
    return v;
}

/* Launches that also record how many flushes came before each. */
struct dram_fake {
    struct fake f;
    unsigned flushes, flushes_before[64];
    int flush_rc;
};

static int dram_fake_launch(void *ctx, unsigned row, const struct counters_span *p, char *err) {
    struct dram_fake *d = ctx;
    if (d->f.n < 64) d->flushes_before[d->f.n] = d->flushes;
    return fake_launch(&d->f, row, p, err);
}

static int dram_fake_flush(void *ctx, unsigned row, char *err) {
    struct dram_fake *d = ctx;
    (void)row;
    if (d->flush_rc) {
        snprintf(err, ERR_LEN, "intensity_flush: an injected failure");
        return d->flush_rc;
    }
    d->flushes++;
    return 0;
}

static int dram_fake_wait(void *ctx, char *err) { return fake_wait(&((struct dram_fake *)ctx)->f, err); }

/* Each row's whole grid once a pass, a flush before each launch (outside
 * its range), in a host object of its own with dram__bytes_read.sum alone;
 * the main set keeps its own object and names afterwards. */
Test(counters, the_dram_pass_counts_whole_grids_in_a_set_of_its_own) {
    standin(NULL, 0);
    unsetenv("DV_COUNTERS_SET");
    unsetenv("DV_COUNTERS_GRID");
    setenv("CUPTI_STANDIN_METRICS", "dram__bytes_read.sum=268435456", 1);
    struct counters *c = prepared();
    const unsigned long hosts0 = calls("cuptiProfilerHostInitialize"), push0 = calls("cuptiRangeProfilerPushRange");
    const unsigned long set0 = calls("cuptiRangeProfilerSetConfig");
    struct dram_fake d = {.f = {.fail_row = -1}};
    const struct counters_launch l = {dram_fake_launch, dram_fake_wait, &d, dram_fake_flush};
    const unsigned blocks[5] = {4096, 4096, 2048, 4096, 96};
    double bytes[5];
    char reason[ERR_LEN] = "";
    cr_assert_eq(counters_dram(c, 5, blocks, &l, bytes, reason), 0, "%s", reason);
    for (unsigned r = 0; r < 5; r++) cr_expect_eq(bytes[r], 268435456.0, "row %u", r);
    cr_expect_eq(calls("cuptiProfilerHostInitialize") - hosts0, 1, "one host object for the DRAM set");
    cr_expect(strstr(metric_sets(), ";dram__bytes_read.sum") != NULL, "%s", metric_sets());
    cr_expect_eq(calls("cuptiRangeProfilerSetConfig") - set0, 2, "sessions of 4 and 1 ranges");
    cr_expect_eq(d.f.n, 10, "five rows, two passes each (the stand-in's)");
    cr_expect_eq(calls("cuptiRangeProfilerPushRange") - push0, 10);
    for (unsigned i = 0; i < d.f.n && i < 64; i++) {
        const unsigned r = i < 8 ? (i % 4) : 4;
        cr_expect_eq(d.f.row[i], r, "launch %u", i);
        cr_expect_eq(d.f.blocks[i], blocks[r], "launch %u: the row's whole grid", i);
        cr_expect_eq(d.f.first[i], 0u);
        cr_expect_eq(d.f.standin[i], 0);
        cr_expect_eq(d.flushes_before[i], i + 1, "launch %u: its own flush before it", i);
    }
    /* Built once: a second pass makes no new object. */
    cr_assert_eq(counters_dram(c, 1, blocks, &l, bytes, reason), 0, "%s", reason);
    cr_expect_eq(calls("cuptiProfilerHostInitialize") - hosts0, 1);
    /* The main set still evaluates its own names (which the stand-in has no
     * value for here): its object was not replaced. */
    struct testimony_grid g[2];
    two_rows(g);
    struct dv_counters out[2];
    cr_expect_eq(counters_profile(c, 2, g, &l, out, reason), COUNTERS_REFUSED);
    cr_expect(strstr(reason, "no value for smsp__sass_branch_targets_threads_divergent.sum") != NULL, "%s", reason);
    const unsigned long deinit0 = calls("cuptiProfilerHostDeinitialize");
    counters_free(c);
    cr_expect_eq(calls("cuptiProfilerHostDeinitialize") - deinit0, 2, "both host objects ended");
    unsetenv("CUPTI_STANDIN_METRICS");
}

/* As on the H200: a table's main pass, then its DRAM pass on the same
 * profiler object. The object lays every counter data image out by its first
 * sizing, so the DRAM counter must be in that layout (the stand-in, like
 * CUPTI, gives NaN for a metric the layout lacks), and the next table's main
 * pass still decodes its own. */
Test(counters, a_dram_pass_after_a_main_pass_reads_its_bytes) {
    standin(NULL, 0);
    unsetenv("DV_COUNTERS_SET");
    unsetenv("DV_COUNTERS_GRID");
    setenv("CUPTI_STANDIN_METRICS", "dram__bytes_read.sum=4096", 1);
    setenv("CUPTI_STANDIN_VALUE", "2", 1);
    struct counters *c = prepared();
    struct dram_fake d = {.f = {.fail_row = -1}};
    const struct counters_launch l = {dram_fake_launch, dram_fake_wait, &d, dram_fake_flush};
    struct testimony_grid g[2];
    two_rows(g);
    struct dv_counters out[2];
    char reason[ERR_LEN] = "";
    cr_assert_eq(counters_profile(c, 2, g, &l, out, reason), 0, "%s", reason);
    const unsigned blocks[6] = {4096, 4096, 4096, 4096, 4096, 4096};
    double bytes[6];
    cr_assert_eq(counters_dram(c, 6, blocks, &l, bytes, reason), 0, "%s", reason);
    for (unsigned r = 0; r < 6; r++) cr_expect_eq(bytes[r], 4096.0, "row %u", r);
    cr_expect(strstr(layout(), "dram__bytes_read.sum") != NULL, "the layout: %s", layout());
    cr_expect(strstr(layout(), "smsp__sass_inst_executed.sum") != NULL, "the layout: %s", layout());
    cr_assert_eq(counters_profile(c, 2, g, &l, out, reason), 0, "the next table: %s", reason);
    cr_expect(out[0].present && out[1].present);
    counters_free(c);
    unsetenv("CUPTI_STANDIN_METRICS");
    unsetenv("CUPTI_STANDIN_VALUE");
}

/* No value is no DRAM bytes (NaN), refused with the metric's name, and the
 * profiler is rebuilt by the next prepare; a flush that fails stops the
 * pass before any range, with its own error. */
Test(counters, a_dram_pass_without_a_value_or_a_flush_leaves_no_bytes) {
    standin(NULL, 0);
    unsetenv("CUPTI_STANDIN_METRICS");
    unsetenv("CUPTI_STANDIN_VALUE");
    struct counters *c = prepared();
    struct dram_fake d = {.f = {.fail_row = -1}};
    const struct counters_launch l = {dram_fake_launch, dram_fake_wait, &d, dram_fake_flush};
    const unsigned blocks[2] = {4096, 4096};
    double bytes[2] = {1, 1};
    char reason[ERR_LEN] = "", library[256];
    cr_expect_eq(counters_dram(c, 2, blocks, &l, bytes, reason), COUNTERS_REFUSED);
    cr_expect(strstr(reason, "no value for dram__bytes_read.sum") != NULL, "%s", reason);
    cr_expect(isnan(bytes[0]) && isnan(bytes[1]));
    const unsigned long init0 = calls("cuptiProfilerInitialize");
    cr_assert_eq(counters_prepare(c, 0, 9, FAKE_CTX, library, reason), 0, "%s", reason);
    cr_expect_eq(calls("cuptiProfilerInitialize") - init0, 1, "rebuilt");
    setenv("CUPTI_STANDIN_METRICS", "dram__bytes_read.sum=1024", 1);
    d = (struct dram_fake){.f = {.fail_row = -1}, .flush_rc = DV_ERR};
    cr_expect_eq(counters_dram(c, 2, blocks, &l, bytes, reason), DV_ERR);
    cr_expect(strstr(reason, "intensity_flush") != NULL, "%s", reason);
    cr_expect_eq(d.f.n, 0u, "no launch after a failed flush");
    cr_expect(isnan(bytes[0]));
    unsetenv("CUPTI_STANDIN_METRICS");
    counters_free(c);
}
/* ---- end arithmetic intensity ---- */

#else

Test(counters, stand_in_not_built) {
    cr_skip_test("the build has no CUPTI headers: the stand-in CUPTI library and its tests are not built");
}

#endif
