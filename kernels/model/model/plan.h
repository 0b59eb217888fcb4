/* plan.h -- the planner: a validated request into the tables of a report,
 * with every row's analysis, before any GPU is touched.
 *
 * plan_report() fills a report with everything that needs no GPU (the
 * tables, their rows and the analysis); measure_run() (gpu/measure.h) plans,
 * fills in the timings and applies experiment_gate(). The planner is the one
 * unit that asks both what a row runs (model/model/experiment.h) and what
 * its predicate does to the warps (model/model/analysis.h, and
 * model/model/scenario.h for the scenario tables): those depend on the types
 * (model/model/types.h) only, and none of them on the planner.
 */
#ifndef DV_PLAN_H
#define DV_PLAN_H

#include "kernels/model/model/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Builds the tables of `o` into `r` with the analysis of every row and the
 * configuration (blocks "auto" is planned as the lesson's 4096 and marked;
 * gpu/measure.c replaces it). Needs no GPU. `o` must have passed validation.
 * Returns 0, or -1 with `err` (a predicate that fails to resolve or to
 * evaluate for some thread names the row) and `fault` (may be NULL) what it
 * is about: fault->field "threads_per_block", "iterations", "blocks",
 * "predicates", "predicates[i]", "baseline", "scenario", or "" when it is
 * about none (out of memory); for a predicate that fails to evaluate,
 * fault->expr the column of the operator that failed in that entry's text
 * (without its surrounding blanks) and the caret under it. */
int plan_report(const struct dv_options *o, struct dv_report *r, struct dv_fault *fault, char *err);

/* Thread evaluations plan_report() makes for `o`: a Part 1 predicate that
 * reads blockIdx.x is evaluated for every thread of the grid, one that does
 * not for one block; each Part 2 row likewise; each scenario row assigns and
 * models every thread of the grid. `*field` (may be NULL) receives the
 * request field the bulk of it comes from ("scenario", "predicates[i]" of
 * the first blockIdx.x predicate, else "threads_per_block"), which is what
 * an over-limit error names. */
double plan_cost(const struct dv_options *o, const char **field);

/* The kernel every row of the Part 1 table of `o` runs, as plan_report()
 * decides it: the mask kernel when any predicate is an expression, else the
 * lesson's mode kernel (a predicate that does not resolve counts as
 * neither; `o` is validated). What a batch of readers must share
 * (api/options.h, options_batch_key()). */
enum dv_kernel plan_part1_kernel(const struct dv_options *o);

/* A row the planner writes the same for every request: its name, label,
 * kernel and the built-in mode that kernel evaluates, and what it is for. */
struct plan_fixed_row {
    const char *name, *label;
    enum dv_kernel kernel;
    enum dv_mode mode;
    const char *note;
};

/* The rows of the Part 2 table, in table order (the first is its baseline);
 * *n receives how many. The one list the planner, the cost rules and the
 * request's cost estimates read. */
const struct plan_fixed_row *plan_part2_rows(unsigned *n);

/* The row's path mask at phase 0 over geometry `g`, of the predicate its
 * kernel evaluates (experiment_row_predicate(): what the CPU check and the
 * mask kernel read; free() it); NULL with `err`. A session_mask_fn
 * (gpu/session.h). */
uint32_t *plan_row_mask(const struct dv_row *row, const struct dv_geometry *g, char *err);

#ifdef __cplusplus
}
#endif

#endif /* DV_PLAN_H */
