/* scenario_table.h -- the scenarios as data (scenario_table.c): the
 * worked cases C1.. and the compiler-and-warp experiments, the names that
 * select them ("all", "compiler-and-warp", "predication-map", a scenario's
 * name, a case id), and the plan of a selection. What a scenario is, and
 * how its rows are arranged, modelled and checked, is scenario.h's.
 */
#ifndef DV_SCENARIO_TABLE_H
#define DV_SCENARIO_TABLE_H

#include <stddef.h>

#include "kernels/model/model/scenario.h"
#include "kernels/model/model/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Stable scenario names, in the worked examples' order; *n receives the count. */
const char *const *scenario_names(size_t *n);

/* The scenario called `name`, or NULL. */
const struct scenario *scenario_find(const char *name);

/* Scenario `i` of the table (0 <= i < the count scenario_names() gives), or
 * NULL past it. */
const struct scenario *scenario_get(size_t i);

/* At most this many scenarios are selected by one name ("all"). */
#define SCENARIO_MAX_SELECTED 32u

/* The scenarios `want` names into out[0..*n): "all" (or "") every one, a
 * scenario name that one, a worked-case id ("C7" or "c7") every scenario of
 * that case (C7 has two). Returns 0, or -1 with `err` = "unknown name 'x';
 * known: all, even-2way (C1), ...": the one place that decides what a
 * scenario name means (the planner, validation, the cost rule ask it). */
int scenario_select(const char *want, const struct scenario **out, size_t *n, char *err);

/* Rows the tables `want` selects have in all (0 for an unknown name). */
unsigned scenario_rows(const char *want);

/* "even-2way (C1), uneven-1v31 (C2), ..." into buf[len] (truncated);
 * returns the length the whole list needs. For help texts and errors. */
size_t scenario_names_text(char *buf, size_t len);

/* The name that selects `set` ("all", "compiler-and-warp",
 * "predication-map"). */
const char *scenario_set_name(enum scenario_set set);

/* Plans o->scenario (a name or "all") into `r`: one table per scenario with
 * every row's analysis and model, no GPU. Returns 0, or -1 with `err` and
 * `*field` (may be NULL; as plan_report()): "scenario" for an unknown
 * name or too many tables, "blocks" / "threads_per_block" for a bad
 * geometry, "" out of memory. */
int scenario_plan(const struct dv_options *o, struct dv_report *r, const char **field, char *err);

#ifdef __cplusplus
}
#endif

#endif /* DV_SCENARIO_TABLE_H */
