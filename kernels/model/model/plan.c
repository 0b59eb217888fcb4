/* plan.c -- turns a validated struct dv_options into the tables of a
 * report, with every row's analysis, before any GPU is touched (plan.h).
 *
 * Part 1 is the lesson's table: one row per predicate, all through one
 * kernel. When every predicate is a built-in the rows run the lesson's mode
 * kernel; when any is an expression, every row runs the mask kernel instead,
 * so compared rows always run the same instructions. Part 2 is the lesson's
 * second table: no branch, and the branch inside the loop for lane parity and
 * warp parity, against the no-branch baseline. The scenario tables are
 * model/model/scenario.c's own (scenario_plan()).
 *
 * The planner asks what a planned row runs (experiment.h) and analyses it
 * (analysis.h); it is the one unit that depends on both, so neither depends
 * on the other or on the planner.
 *
 * A plan that fails says what it is about as values (struct dv_fault): the
 * request field, and for a predicate that fails for some thread the column
 * and caret predicate_eval() found, so the HTTP error and the CLI draw the
 * caret from data rather than from the message.
 */
#include "kernels/model/model/plan.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/base/buildinfo.h"
#include "kernels/model/model/analysis.h"
#include "kernels/model/model/experiment.h"
#include "kernels/model/model/scenario.h"
#include "kernels/model/model/scenario_table.h"
#include "kernels/model/model/sortexp.h"

uint32_t *plan_row_mask(const struct dv_row *row, const struct dv_geometry *g, char *err) {
    struct predicate p;
    if (experiment_row_predicate(row, &p, err) != 0) return NULL;
    uint32_t *m = analysis_mask_build(&p, g, 0, err);
    predicate_cleanup(&p);
    return m;
}


/* Names the field a failure is about: fault->field (when asked for) = `name`. */
static int fail_at(struct dv_fault *fault, const char *name) {
    if (fault) fault->field = name;
    return -1;
}

/* The rule for a Part 1 table's kernel, written once: every row runs the
 * mask kernel when any predicate is an expression, else the mode kernel. */
static enum dv_kernel part1_kernel(int any_expr) { return any_expr ? DV_KERNEL_MASK : DV_KERNEL_BRANCH; }

/* Analysis of `row` (kernel, mode and name set) at phase 0: of the predicate
 * its kernel evaluates, as every other reader sees it. An evaluation error
 * says where in the expression into `fault` (may be NULL). */
static int analyze_row(const struct dv_geometry *g, struct dv_row *row, struct predicate_fault *fault, char *err) {
    char why[ERR_LEN];
    struct predicate p;
    if (experiment_row_predicate(row, &p, err) != 0) return -1;
    int rc = analysis_row(&p, g, 0, row, fault, why);
    if (rc != 0) dv_seterr(err, "predicate '%s': %s", p.name, why);
    predicate_cleanup(&p);
    return rc;
}

/* 1 when `r` puts every thread of the grid on one path. */
static int one_path(const struct dv_row *r, const struct dv_geometry *g) {
    return r->threads_on_a.total == 0 || r->threads_on_a.total == dv_grid_threads(g);
}

/* The analysis of expression `text` on `g` into `row`; 0, or -1 with `err`. */
static int analyze_text(const char *text, const struct dv_geometry *g, struct dv_row *row, char *err) {
    struct predicate p;
    char why[ERR_LEN];
    if (predicate_resolve(text, &p, NULL, why) != 0) {
        dv_seterr(err, "predicate '%s': %s", text, why);
        return -1;
    }
    int rc = analysis_row(&p, g, 0, row, NULL, why);
    if (rc != 0) dv_seterr(err, "predicate '%s': %s", text, why);
    predicate_cleanup(&p);
    return rc;
}

/* A baseline that puts every thread on one path (the lesson's warp parity
 * in a 32x8 block, where threadIdx.x / 32 is 0 for every thread; any block
 * of one warp) splits no warp but does none of the other path's work, so
 * every row that splits the work is "not comparable" to it. The table says
 * so in its note and names a warp-level analogue that splits the block
 * between whole warps (the warp index from the linear thread id), or,
 * where a block is one warp, the block parity, which splits the grid
 * between blocks. Returns 0, or -1 with `err` (out of memory). */
static int note_empty_path(const struct dv_geometry *g, struct dv_table *t, char *err) {
    static const char *const analogues[] = {"(warp & 1) == 0", "block-parity"};
    const struct dv_row *base = &t->rows[t->baseline_row];
    if (!one_path(base, g)) return 0;
    unsigned others = 0;
    for (unsigned i = 0; i < t->nrows; i++) others += !t->rows[i].comparable;
    char shape[48];
    if (g->block_y > 1) snprintf(shape, sizeof shape, "%ux%u block", g->block_x, g->block_y);
    else snprintf(shape, sizeof shape, "block of %u threads", g->block_x);
    const char *suggest = NULL;
    for (size_t k = 0; k < sizeof analogues / sizeof analogues[0] && !suggest; k++) {
        struct dv_row cand;
        memset(&cand, 0, sizeof cand);
        if (analyze_text(analogues[k], g, &cand, err) != 0) return -1;
        if (!one_path(&cand, g) && cand.warps_split.max == 0) suggest = analogues[k];
    }
    int n = snprintf(t->note, sizeof t->note,
                     "the baseline %s puts every thread of this %s on path %s: it splits no warp but does none "
                     "of the other path's work, so %u row%s that split the work %s not comparable to it",
                     base->label, shape, base->threads_on_a.total ? "A" : "B", others, others == 1 ? "" : "s",
                     others == 1 ? "is" : "are");
    if (suggest) {
        snprintf(t->suggested_baseline, sizeof t->suggested_baseline, "%s", suggest);
        if (n > 0 && (size_t)n < sizeof t->note)
            snprintf(t->note + n, sizeof t->note - (size_t)n,
                     "; its warp-level analogue, baseline %s, splits the work between whole warps", suggest);
    }
    return 0;
}

static int plan_part1(const struct dv_options *o, const struct dv_geometry *g, struct dv_table *t,
                      struct dv_fault *fault, char *err) {
    struct predicate preds[DV_MAX_ROWS];
    unsigned n = 0;
    int any_expr = 0, rc = -1;
    struct predicate base;
    int have_base = 0;

    if (o->npredicates == 0 || o->npredicates > DV_MAX_ROWS) {
        dv_seterr(err, "predicates: need 1 to %u rows, got %u", DV_MAX_ROWS, o->npredicates);
        return fail_at(fault, "predicates");
    }
    for (; n < o->npredicates; n++) {
        char why[ERR_LEN];
        if (predicate_resolve(o->predicates[n], &preds[n], fault ? &fault->expr : NULL, why) != 0) {
            dv_seterr(err, "predicates[%u]: %s", n, why);
            fail_at(fault, experiment_predicate_field(n));
            goto cleanup;
        }
        if (preds[n].expr) any_expr = 1;
    }
    char why[ERR_LEN];
    if (predicate_resolve(o->baseline[0] ? o->baseline : DV_DEFAULT_BASELINE, &base, fault ? &fault->expr : NULL,
                          why) != 0) {
        dv_seterr(err, "baseline: %s", why);
        fail_at(fault, "baseline");
        goto cleanup;
    }
    have_base = 1;

    snprintf(t->id, sizeof(t->id), "part1");
    snprintf(t->title, sizeof(t->title), "Part 1: one branch, %u multiply-adds on each side", o->iterations);
    t->baseline_row = -1;
    t->nrows = n;
    for (unsigned i = 0; i < n; i++) {
        struct dv_row *row = &t->rows[i];
        snprintf(row->name, sizeof(row->name), "%.256s", preds[i].name);
        snprintf(row->label, sizeof(row->label), "%.256s", preds[i].label);
        row->kernel = part1_kernel(any_expr);
        row->mode = any_expr ? DV_MODE_NONE : preds[i].mode;
        if (analyze_row(g, row, fault ? &fault->expr : NULL, err) != 0) {
            fail_at(fault, experiment_predicate_field(i));
            goto cleanup;
        }
        if (t->baseline_row < 0 && strcmp(preds[i].name, base.name) == 0) t->baseline_row = (int)i;
    }
    if (t->baseline_row < 0) {
        dv_seterr(err, "baseline: '%s' is not one of the Part 1 predicates", base.name);
        fail_at(fault, "baseline");
        goto cleanup;
    }
    snprintf(t->baseline, sizeof(t->baseline), "%s", base.name);
    snprintf(t->kernel, sizeof(t->kernel), "%s", experiment_kernel_name(t->rows[0].kernel));
    analysis_compare(t, 0);
    if (note_empty_path(g, t, err) != 0) {
        fail_at(fault, "");
        goto cleanup;
    }
    rc = 0;
cleanup:
    for (unsigned i = 0; i < n; i++) predicate_cleanup(&preds[i]);
    if (have_base) predicate_cleanup(&base);
    return rc;
}

/* Part 2's rows: the chain with no branch (the baseline), and the branch
 * inside the loop for lane parity and warp parity. */
static const struct plan_fixed_row part2_rows[] = {
    {"no-branch", "no branch", DV_KERNEL_NOBRANCH, DV_ALWAYS_A, "the chain with no branch at all"},
    {"per-iteration-lane-parity", "per-iteration, lane parity", DV_KERNEL_PERITER, DV_LANE_PARITY,
     "the branch evaluated every iteration, splitting every warp"},
    {"per-iteration-warp-parity", "per-iteration, warp parity", DV_KERNEL_PERITER, DV_WARP_PARITY,
     "the branch evaluated every iteration, warp-uniform"},
};

const struct plan_fixed_row *plan_part2_rows(unsigned *n) {
    if (n) *n = sizeof part2_rows / sizeof part2_rows[0];
    return part2_rows;
}

static int plan_part2(const struct dv_options *o, const struct dv_geometry *g, struct dv_table *t,
                      struct dv_fault *fault, char *err) {
    (void)o;
    snprintf(t->id, sizeof(t->id), "part2");
    snprintf(t->title, sizeof(t->title), "Part 2: the same branch inside the loop, one multiply-add on each side");
    snprintf(t->kernel, sizeof(t->kernel), "per-iteration");
    snprintf(t->baseline, sizeof(t->baseline), "%s", part2_rows[0].name);
    t->baseline_row = 0;
    const struct plan_fixed_row *rows = plan_part2_rows(&t->nrows);
    for (unsigned i = 0; i < t->nrows; i++) {
        struct dv_row *row = &t->rows[i];
        snprintf(row->name, sizeof(row->name), "%s", rows[i].name);
        snprintf(row->label, sizeof(row->label), "%s", rows[i].label);
        row->kernel = rows[i].kernel;
        row->mode = rows[i].mode;
        if (analyze_row(g, row, NULL, err) != 0) return fail_at(fault, ""); /* built-ins fail only out of memory */
        snprintf(row->note, sizeof(row->note), "%s", rows[i].note);
    }
    /* One multiply-add per iteration on whichever side: every row runs the
     * baseline's work, whatever its split. */
    analysis_compare(t, 1);
    return 0;
}

int plan_report(const struct dv_options *o, struct dv_report *r, struct dv_fault *fault, char *err) {
    struct dv_config *c = &r->config;
    dv_fault_clear(fault);
    const unsigned by = o->block_y ? o->block_y : 1;
    const unsigned tpb = o->block_x * by;
    if (tpb == 0 || tpb > DV_MAX_THREADS_PER_BLOCK) {
        dv_seterr(err, "threads_per_block: %u x %u = %u threads, allowed 1..%u", o->block_x, by, tpb,
                  DV_MAX_THREADS_PER_BLOCK);
        return fail_at(fault, "threads_per_block");
    }
    if (o->iterations == 0 || o->iterations > DV_MAX_ITERATIONS) {
        dv_seterr(err, "iterations: %u, allowed 1..%u", o->iterations, DV_MAX_ITERATIONS);
        return fail_at(fault, "iterations");
    }
    const unsigned blocks = o->blocks ? o->blocks : DV_DEFAULT_BLOCKS;
    if ((unsigned long long)blocks * tpb > DV_MAX_GRID_THREADS) {
        dv_seterr(err, "blocks: %u blocks x %u threads = %llu threads, the limit is %llu", blocks, tpb,
                  (unsigned long long)blocks * tpb, (unsigned long long)DV_MAX_GRID_THREADS);
        return fail_at(fault, "blocks");
    }

    snprintf(r->build.nvcc_version, sizeof(r->build.nvcc_version), "%s", buildinfo_nvcc_version());
    snprintf(r->build.cuda_architectures, sizeof(r->build.cuda_architectures), "%s", buildinfo_cuda_architectures());
    snprintf(r->build.flags, sizeof(r->build.flags), "%s", buildinfo_cuda_flags());
    snprintf(r->build.kernel_digest, sizeof(r->build.kernel_digest), "%s", buildinfo_kernel_digest());

    const char *exp = o->scenario[0] ? "scenario" : o->part == DV_PART_1 ? "part1" : o->part == DV_PART_2 ? "part2" : "all";
    snprintf(c->experiment, sizeof(c->experiment), "%s", exp);
    c->blocks = blocks;
    if (!o->blocks) {
        c->blocks_auto = 1;
        if (!c->blocks_reason[0])
            snprintf(c->blocks_reason, sizeof(c->blocks_reason),
                     "auto: whole waves chosen on the GPU; the analysis uses %u blocks", blocks);
    }
    c->block_x = o->block_x;
    c->block_y = by;
    c->threads_per_block = tpb;
    c->threads = (unsigned long long)blocks * tpb;
    c->iterations = o->iterations;
    c->fmas_per_launch = c->threads * o->iterations;
    c->bytes_per_launch = c->threads * 2 * sizeof(float);
    c->max_noise = o->max_noise;
    c->budget_ms = o->budget_ms;
    c->min_samples = o->min_samples;
    c->max_samples = o->max_samples;

    for (unsigned bit = 1; bit < (1u << DV_GIVEN_NUM); bit <<= 1)
        if (experiment_unused(o) & bit)
            experiment_warn(r, "%s: not used: %s", experiment_given_name(bit), experiment_unused_reason(o, bit));
    if (o->scenario[0] && sortexp_grid_named(o->scenario, NULL)) /* data-sort */
        return sortexp_plan(o, r, fault ? &fault->field : NULL, err);
    if (o->scenario[0]) return scenario_plan(o, r, fault ? &fault->field : NULL, err);

    static const struct {
        enum dv_part part;
        int (*plan)(const struct dv_options *, const struct dv_geometry *, struct dv_table *, struct dv_fault *, char *);
    } parts[] = {{DV_PART_1, plan_part1}, {DV_PART_2, plan_part2}};
    struct dv_geometry g = {blocks, o->block_x, by};
    r->ntables = 0;
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
        if (o->part != DV_PART_ALL && o->part != parts[i].part) continue;
        struct dv_table *t = &r->tables[r->ntables];
        memset(t, 0, sizeof(*t));
        t->noise_limit = t->halfwidth_target = o->max_noise;
        t->worst_row = -1;
        t->cost_witness_ms = t->cost_counters_ms = NAN;
        if (parts[i].plan(o, &g, t, fault, err) != 0) return -1;
        r->ntables++;
    }
    return 0;
}

/* ---- what an analysis costs ----------------------------------------------- */

double plan_cost(const struct dv_options *o, const char **field) {
    const double by = o->block_y ? o->block_y : 1;
    const double tpb = (double)o->block_x * by;
    const double threads = (o->blocks ? o->blocks : DV_DEFAULT_BLOCKS) * tpb;
    if (field) *field = "threads_per_block";
    if (o->scenario[0]) {
        /* Scenario tables run instead of the Part tables; each row assigns
         * work to every thread of the scenario grid and models its warps. */
        const struct dv_geometry g = scenario_grid(o);
        if (field) *field = "scenario";
        struct sortexp_grid sg; /* data-sort: two shading orders a cell, each drawn and counted per warp */
        if (sortexp_grid_named(o->scenario, &sg))
            return (double)(sortexp_grid_cells(&sg) * 2u) * (double)dv_grid_threads(&g);
        return (double)scenario_rows(o->scenario) * (double)dv_grid_threads(&g);
    }
    double cost = 0;
    const char *grid_field = NULL;
    if (o->part == DV_PART_ALL || o->part == DV_PART_1) {
        /* A predicate that does not read blockIdx.x is analysed on one
         * block, one that does on every thread; one that does not resolve
         * costs nothing (the plan fails on it first). The baseline is one
         * of the rows (validation adds it). The empty-path note's two
         * candidates (one block each, at most 2048 evaluations, and only
         * where the note is written) are left out: a request at the cap
         * stays at the cap. */
        for (unsigned i = 0; i < o->npredicates && i < DV_MAX_ROWS; i++) {
            const int whole = predicate_text_reads_block(o->predicates[i]);
            if (whole < 0) continue;
            cost += whole ? threads : tpb;
            if (whole && !grid_field) grid_field = experiment_predicate_field(i);
        }
    }
    if (o->part == DV_PART_ALL || o->part == DV_PART_2) {
        unsigned n = 0;
        const struct plan_fixed_row *rows = plan_part2_rows(&n);
        for (unsigned i = 0; i < n; i++) cost += predicate_mode_reads_block(rows[i].mode) == 1 ? threads : tpb;
    }
    if (field && grid_field) *field = grid_field;
    return cost;
}

enum dv_kernel plan_part1_kernel(const struct dv_options *o) {
    int any_expr = 0;
    for (unsigned i = 0; i < o->npredicates && i < DV_MAX_ROWS && !any_expr; i++) {
        struct predicate p;
        char why[ERR_LEN];
        if (predicate_resolve(o->predicates[i], &p, NULL, why) != 0) continue;
        any_expr = p.expr != NULL;
        predicate_cleanup(&p);
    }
    return part1_kernel(any_expr);
}
