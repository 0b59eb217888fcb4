/* test_testimony_run.c -- the testimony's one sequence without a GPU: the
 * counter pass on the CUPTI stand-in (tests/support/cupti_standin.c) with
 * launches that only record, the witness off (its kernels need a GPU: the
 * gpu_testimony and gpu_counters suites run the whole sequence there).
 * Checked: what runs when nothing is asked, that each row's standing blocks
 * are found once and are what the pass launches, what a failed pass means
 * for the table (nothing: its reason, and no profiler for the next tables),
 * and that a failure to find the standing blocks is the table's.
 */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/gpu/testimony_run.h"
#include "tests/kernels/gpu/standin.h"

/* A table of two rows: row 0 stands for its 4096 blocks with one, row 1 for
 * its 1000 with one period of 3 (and the one block left over). */
struct table {
    unsigned prepared[2];
    int fail_prepare;
    struct fake launches;
};

static int on_prepare(void *p, unsigned row, struct testimony_row *out, char *err) {
    struct table *x = p;
    if (x->fail_prepare) {
        snprintf(err, ERR_LEN, "scenario x: out of memory for the stand-in of 1000 blocks");
        return DV_ERR;
    }
    x->prepared[row]++;
    testimony_counter_grid(row == 0 ? 4096 : 1000, row == 0 ? 1 : 3, &out->grid);
    out->witness_blocks = out->grid.part_blocks[0];
    out->evaluations = 1;
    return 0;
}

static int on_count(void *p, unsigned row, const struct counters_span *span, char *err) {
    return fake_launch(&((struct table *)p)->launches, row, span, err);
}

static int on_wait(void *p, char *err) { return fake_wait(&((struct table *)p)->launches, err); }

static void table_init(struct dv_table *t, struct dv_testimony *tm) {
    memset(t, 0, sizeof *t);
    memset(tm, 0, sizeof *tm);
    snprintf(t->id, sizeof t->id, "part1");
    t->nrows = 2;
    t->cost_witness_ms = t->cost_counters_ms = NAN;
}

static const struct testimony_ops counted_ops = {.prepare = on_prepare, .count = on_count, .wait = on_wait};

static struct testimony_table counted_table(struct dv_table *t, struct table *x) {
    return (struct testimony_table){t, 4096, 0, &counted_ops, x};
}

Test(testimony_run, nothing_asked_runs_nothing_and_costs_nothing) {
    struct dv_table t;
    struct dv_testimony tm;
    table_init(&t, &tm);
    struct table x = {{0}, 0, {.fail_row = -1}};
    const struct testimony_table tt = counted_table(&t, &x);
    struct counters *none = NULL;
    char err[ERR_LEN] = "";
    cr_expect_eq(testimony_run(NULL, &tt, &tm, &none, err), 0, "%s", err);
    cr_expect_eq(x.prepared[0] + x.prepared[1], 0, "no standing blocks looked for");
    cr_expect(isnan(t.cost_witness_ms) && isnan(t.cost_counters_ms), "no pass ran for the table");
    cr_expect(t.host_testimony_ms >= 0);
}

#ifdef DV_CUPTI_STANDIN

Test(testimony_run, the_counter_pass_launches_each_rows_standing_blocks_found_once) {
    standin(NULL, 0);
    setenv("CUPTI_STANDIN_VALUE", "3", 1);
    struct counters *c = prepared();
    struct dv_table t;
    struct dv_testimony tm;
    table_init(&t, &tm);
    struct table x = {{0}, 0, {.fail_row = -1}};
    const struct testimony_table tt = counted_table(&t, &x);
    char err[ERR_LEN] = "";
    cr_assert_eq(testimony_run(NULL, &tt, &tm, &c, err), 0, "%s", err);
    unsetenv("CUPTI_STANDIN_VALUE");
    cr_assert_not_null(c, "a pass that succeeds keeps the profiler: %s", tm.counters_reason);
    cr_expect_eq(x.prepared[0], 1);
    cr_expect_eq(x.prepared[1], 1);
    /* Each pass launches row 0's one block, then row 1's period of 3 and
     * the block left over. */
    const unsigned passes = counters_passes(c);
    cr_assert(passes >= 1 && x.launches.n == 3 * passes, "%u launches in %u passes", x.launches.n, passes);
    cr_expect_eq(x.launches.waits, passes, "the table's wait after each pass's launches");
    const unsigned rows[3] = {0, 1, 1}, blocks[3] = {1, 3, 1};
    for (unsigned i = 0; i < x.launches.n; i++) {
        cr_expect_eq(x.launches.row[i], rows[i % 3], "launch %u", i);
        cr_expect_eq(x.launches.blocks[i], blocks[i % 3], "launch %u", i);
    }
    cr_expect_not_null(c, "a pass that succeeds keeps the profiler");
    cr_expect(t.rows[0].counters.present && t.rows[1].counters.present);
    cr_expect_float_eq(t.rows[0].counters.inst_executed, 3.0 * 4096, 0, "one block weighed as the grid");
    cr_expect_float_eq(t.rows[1].counters.inst_executed, 3.0 * 333 + 3.0, 0);
    cr_expect(isnan(t.cost_witness_ms), "no witness ran");
    cr_expect(t.cost_counters_ms >= 0, "%g", t.cost_counters_ms);
    cr_expect_float_eq(t.cost_counters_ms, tm.counters_ms, 1e-9, "the table's share is the whole of it here");
    counters_free(c);
}

/* A pass that fails leaves the table measured: its reason, no counters, no
 * profiler for the tables after it; a sticky error also loses the profiler
 * (the session's, so the job ends after this table). */
Test(testimony_run, a_counter_pass_that_fails_is_not_the_tables_failure) {
    standin(NULL, 0);
    struct counters *c = prepared(), *held = c;
    struct dv_table t;
    struct dv_testimony tm;
    table_init(&t, &tm);
    struct table x = {{0}, 0, {.fail_row = 1, .fail_rc = DV_ESTICKY}};
    const struct testimony_table tt = counted_table(&t, &x);
    char err[ERR_LEN] = "";
    cr_expect_eq(testimony_run(NULL, &tt, &tm, &c, err), 0, "%s", err);
    cr_expect_str_eq(err, "");
    cr_expect_null(c, "no profiler for the tables after this one");
    cr_expect(counters_lost(held), "a sticky error loses the profiler");
    cr_expect(strstr(tm.counters_reason, "counter pass of part1: launch mixOneBranch") == tm.counters_reason, "%s",
              tm.counters_reason);
    cr_expect_not(t.rows[0].counters.present || t.rows[1].counters.present);
    cr_expect(t.cost_counters_ms >= 0, "the pass ran for the table: %g", t.cost_counters_ms);
    counters_free(held);
}

Test(testimony_run, standing_blocks_that_cannot_be_found_fail_the_table) {
    standin(NULL, 0);
    struct counters *c = prepared(), *held = c;
    struct dv_table t;
    struct dv_testimony tm;
    table_init(&t, &tm);
    struct table x = {{0}, 1, {.fail_row = -1}};
    const struct testimony_table tt = counted_table(&t, &x);
    char err[ERR_LEN] = "";
    cr_expect_eq(testimony_run(NULL, &tt, &tm, &c, err), DV_ERR);
    cr_expect(strstr(err, "out of memory for the stand-in") != NULL, "%s", err);
    cr_expect_eq(x.launches.n, 0, "no pass without its grids");
    cr_expect_eq(c, held, "the profiler is untouched");
    cr_expect_str_eq(tm.counters_reason, "");
    counters_free(held);
}

#endif
