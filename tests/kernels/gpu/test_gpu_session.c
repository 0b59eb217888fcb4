/* test_gpu_session.c -- one measurement session over several jobs, on a GPU.
 *
 * Label gpu: each test skips with CUDA's reason where there is no device.
 * A worker measures job after job in one session (gpu/session.h); what it
 * keeps between jobs must not change what a job measures: every output
 * element is still checked, buffers grow when a bigger grid comes, masks and
 * reference chains are those of the job's own grid and iteration count.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "api/options.h"
#include "kernels/gpu/measure.h"
#include "kernels/gpu/session.h"
#include "tests/kernels/gpu/helper_gpu.h"
#include "kernels/model/model/experiment.h"

static struct dv_options small(unsigned blocks, unsigned iterations) {
    struct dv_options o;
    experiment_defaults(&o);
    o.part = DV_PART_1;
    o.blocks = blocks;
    o.iterations = iterations;
    o.budget_ms = 100;
    o.min_samples = 5;
    o.max_samples = 40;
    o.max_noise = 0.5;
    o.no_witness = 1;
    o.no_counters = 1;
    return o;
}

static struct dv_report *run(struct session *s, struct dv_options *o) {
    char err[ERR_LEN] = "";
    cr_assert_eq(options_validate(o, OPTIONS_JSON, NULL, err), 0, "%s", err);
    struct dv_report *r = experiment_report_create();
    cr_assert_not_null(r);
    cr_assert_eq(measure_run_session(s, o, r, err), 0, "%s", err);
    helper_expect_all_checked(r);
    cr_expect(r->device.measured_sm_clock_mhz > 0);
    cr_expect(r->device.measured_sm_clock_min_mhz <= r->device.measured_sm_clock_mhz);
    return r;
}

Test(gpu_session, two_jobs_give_the_same_checks_and_ratios) {
    HELPER_REQUIRE_GPU();
    struct session *s = session_create();
    cr_assert_not_null(s);
    struct dv_options o = small(1056, 4096);
    struct dv_report *a = run(s, &o);
    struct dv_report *b = run(s, &o);
    cr_assert_eq(a->ntables, b->ntables);
    for (unsigned i = 0; i < a->ntables; i++) {
        cr_assert_eq(a->tables[i].nrows, b->tables[i].nrows);
        for (unsigned j = 0; j < a->tables[i].nrows; j++) {
            const struct dv_row *x = &a->tables[i].rows[j], *y = &b->tables[i].rows[j];
            cr_expect(fabs(x->ratio - y->ratio) <= 0.1 * x->ratio, "%s: ratio %.3f then %.3f", x->name, x->ratio,
                      y->ratio);
        }
    }
    cr_expect(fabs(a->device.measured_sm_clock_mhz - b->device.measured_sm_clock_mhz) <=
                  0.1 * a->device.measured_sm_clock_mhz,
              "clock %.0f then %.0f MHz", a->device.measured_sm_clock_mhz, b->device.measured_sm_clock_mhz);
    experiment_report_free(a);
    experiment_report_free(b);
    session_free(s);
}

Test(gpu_session, buffers_grow_for_a_bigger_grid_and_masks_follow_the_grid) {
    HELPER_REQUIRE_GPU();
    struct session *s = session_create();
    cr_assert_not_null(s);
    /* An expression runs the mask kernel: its mask depends on the grid. */
    const unsigned blocks[] = {132, 2112, 264};
    for (unsigned k = 0; k < 3; k++) {
        struct dv_options o = small(blocks[k], 4096);
        o.npredicates = 0;
        snprintf(o.predicates[o.npredicates++], PREDICATE_TEXT_LEN, "%s", "lane-parity");
        snprintf(o.predicates[o.npredicates++], PREDICATE_TEXT_LEN, "%s", "(blockIdx.x * 7 + warp) % 3 == 0");
        struct dv_report *r = run(s, &o);
        cr_expect_eq(r->config.blocks, blocks[k]);
        experiment_report_free(r);
    }
    session_free(s);
}

Test(gpu_session, chains_follow_the_iteration_count) {
    HELPER_REQUIRE_GPU();
    struct session *s = session_create();
    cr_assert_not_null(s);
    const unsigned iters[] = {512, 4096, 77, 512};
    for (unsigned k = 0; k < 4; k++) {
        struct dv_options o = small(264, iters[k]);
        o.part = DV_PART_ALL;
        struct dv_report *r = run(s, &o);
        cr_expect_eq(r->config.iterations, iters[k]);
        experiment_report_free(r);
    }
    session_free(s);
}

Test(gpu_session, auto_grid_plans_with_the_clock_of_the_last_job) {
    HELPER_REQUIRE_GPU();
    struct session *s = session_create();
    cr_assert_not_null(s);
    struct dv_options o = small(0, 256);
    struct dv_report *a = run(s, &o);
    struct dv_report *b = run(s, &o);
    cr_expect(a->config.blocks_auto && b->config.blocks_auto);
    cr_expect_eq(a->config.blocks % (unsigned)a->device.sm_count, 0);
    cr_expect_eq(b->config.blocks % (unsigned)b->device.sm_count, 0);
    experiment_report_free(a);
    experiment_report_free(b);
    session_free(s);
}

/* The session's progress hook hears each table start and end, in order, with
 * the table's samples in at its end; a session without a hook measures the
 * same way (the hook is the session's, not the process's). */
struct progress_log {
    unsigned calls, table[8], ntables[8], samples[8];
    int done[8];
};

static void log_progress(void *ctx, unsigned table, unsigned ntables, const struct dv_table *t, int done) {
    struct progress_log *p = ctx;
    if (p->calls >= 8) return;
    p->table[p->calls] = table;
    p->ntables[p->calls] = ntables;
    p->done[p->calls] = done;
    p->samples[p->calls] = t->nrows ? t->rows[0].time_ms.samples : 0;
    p->calls++;
}

Test(gpu_session, progress_is_the_sessions_hook) {
    HELPER_REQUIRE_GPU();
    struct dv_options o = small(264, 4096);
    o.part = DV_PART_ALL;
    struct progress_log log;
    memset(&log, 0, sizeof log);
    struct session *s = session_create(), *quiet = session_create();
    cr_assert(s && quiet);
    session_set_progress(s, log_progress, &log);
    struct dv_report *r = run(quiet, &o);
    cr_expect_eq(log.calls, 0, "another session's job called this hook");
    experiment_report_free(r);
    r = run(s, &o);
    cr_assert_eq(log.calls, 4);
    for (unsigned k = 0; k < 4; k++) {
        cr_expect_eq(log.table[k], k / 2);
        cr_expect_eq(log.ntables[k], 2);
        cr_expect_eq(log.done[k], (int)(k % 2));
    }
    cr_expect_eq(log.samples[0], 0, "no samples before the table");
    cr_expect(log.samples[1] >= 5, "the table's samples at its end: %u", log.samples[1]);
    experiment_report_free(r);
    session_free(quiet);
    session_free(s);
}
