/* experiment.h -- what a request and a report say beyond their fields:
 * the lesson's defaults, the report's life, its warnings and correctness
 * gate, Part 2 read both ways, the names of the request's fields and what a
 * planned row runs. The types are model/model/types.h's; the planner that
 * fills a report from a request is model/model/plan.h; api/report_dump.c
 * turns a report into the divergence.v1 JSON document, api/report_text.c
 * into the lesson's text layout.
 *
 * Nothing here analyses a predicate or plans a scenario: this unit depends
 * on the types, the predicate and the listing it frees, and neither the
 * analysis (model/model/analysis.h) nor the scenarios
 * (model/model/scenario.h) depend on it.
 */
#ifndef DV_EXPERIMENT_H
#define DV_EXPERIMENT_H

#include "kernels/model/model/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The lesson's defaults: part all, the four Part 1 rows, baseline
 * warp-parity, 4096 blocks x 256 threads, 4096 iterations, 0.5% noise,
 * 2000 ms budget, device 0. */
void experiment_defaults(struct dv_options *o);

/* The request the lesson page's "Measure this" sends for `expression` (a
 * predicate's text, cut to fit), as static/widget/trybox.js builds it: the
 * Part 1 table alone, the expression beside the default baseline, which is
 * the table's baseline, every other field the defaults (the testimony
 * included). The GPU worker's warm-up measures it last, so the job queue
 * knows a widget job's run before the first reader's (kernels/gpu/warmup.h). */
void experiment_widget_request(struct dv_options *o, const char *expression);

/* A zeroed report on the heap; NULL when out of memory. report_free(NULL) ok;
 * it frees the rows' instruction profiles too. */
struct dv_report *experiment_report_create(void);
void experiment_report_free(struct dv_report *r);

/* "predicates[i]" for entry `i` of dv_options.predicates, as static text
 * ("predicates" past DV_MAX_ROWS). */
const char *experiment_predicate_field(unsigned i);

/* The DV_GIVEN_* fields `o` names that the tables it plans do not read:
 * part, predicates and baseline under a scenario (the scenario tables run
 * instead of Part 1 and 2); predicates and baseline under part 2 (its rows
 * are fixed). plan_report() warns of each, the CLI on stderr as well. */
unsigned experiment_unused(const struct dv_options *o);

/* The JSON name of one DV_GIVEN_* bit ("predicates"), "" for none. */
const char *experiment_given_name(unsigned bit);

/* Why field `bit` does not apply to `o` (a static sentence), "" when it does. */
const char *experiment_unused_reason(const struct dv_options *o, unsigned bit);

/* Part 2 read both ways ("Read the two per-iteration rows against each
 * other for the cost of splitting a warp, and both against the baseline for
 * the cost of asking a question in a loop"). */
enum dv_reading_kind {
    DV_READING_SPLIT = 0, /* the split per-iteration row against the uniform one */
    DV_READING_QUESTION   /* the uniform per-iteration row against no branch    */
};
#define DV_MAX_READINGS 2
struct dv_reading {
    enum dv_reading_kind kind;
    int row, against;   /* row indexes in the table                        */
    double ratio;       /* median over median; NaN when not measured       */
    double predicted;   /* the model's: predicted ratio over predicted ratio */
    char sentence[320]; /* which is which, in words                        */
};

/* The readings of table `t` into out[0..DV_MAX_READINGS): present when the
 * table has a no-branch row and per-iteration rows (one that splits warps,
 * one that splits none), found by their kernels and analysis, not by name.
 * A pure function of the rows, so every writer (JSON, text, Markdown, CSV,
 * the evidence summary) gives the same figures. Returns how many (0 for a
 * table without per-iteration rows). */
unsigned experiment_readings(const struct dv_table *t, struct dv_reading *out);

/* "split" / "question". */
const char *experiment_reading_kind_name(enum dv_reading_kind k);

/* The lesson's sentence that says how to read them. */
#define DV_READINGS_LESSON                                                                                             \
    "Read the two per-iteration rows against each other for the cost of splitting a warp, and both against "           \
    "the baseline for the cost of asking a question in a loop."

/* Adds a warning line to `r` (dropped past DV_MAX_WARNINGS). */
void experiment_warn(struct dv_report *r, const char *fmt, ...)
#ifdef __GNUC__
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Whether `t` is a scenario table (id "scenario:<name>") rather than a
 * Part 1 / Part 2 table: the one place the two kinds are told apart. */
int experiment_table_is_scenario(const struct dv_table *t);

/* The correctness gate and the precision verdict of a measured report, the
 * same rule for every table kind: each table's noise_ok and noise_limit
 * (the old names) repeat intervals_ok and halfwidth_target, which the
 * stopping rule set; a warning for every row whose check failed and for
 * every table whose intervals were not all within the target when sampling
 * stopped (naming the widest and why it stopped). Returns 0 when every
 * row's check is ok, else DV_EGATE with `err` naming the first failed row's
 * table, row and first wrong thread, with the expected and the observed
 * value. */
int experiment_gate(struct dv_report *r, char *err);

/* Stable lower-case name of a kernel: "branch", "mask", ... */
const char *experiment_kernel_name(int kernel);

/* What a Part 1 / Part 2 row runs, decided here once from what the planner
 * set (row->kernel, row->mode, row->name). The planner, the CPU reference,
 * the testimony and the GPU side ask these instead of branching on
 * row->kernel or row->mode for themselves (plan_row_mask(), model/model/plan.h,
 * is the row's path mask).
 *
 * experiment_row_predicate(): the predicate the row's kernel evaluates, into
 * `p` (predicate_cleanup() it): the built-in `mode` the branch and
 * per-iteration kernels take as their argument, always-a for the no-branch
 * kernel, the row's name or expression for the mask kernel.
 * predicate_reads_block(p) says whether it reads blockIdx.x, and nothing
 * else second-guesses it. Returns 0, or -1 with `err` (a scenario row has no predicate;
 * a name that does not resolve). */
int experiment_row_predicate(const struct dv_row *row, struct predicate *p, char *err);

/* How often a thread of the row evaluates its branch over `iterations`:
 * every iteration for the per-iteration kernel (phase k at iteration k),
 * else once (phase 0; the no-branch kernel as always-a). A scenario row's
 * is its scenario's (scenario_evaluations(), model/model/scenario.h). */
unsigned experiment_row_evaluations(const struct dv_row *row, unsigned iterations);

/* 1 when the row's kernel reads its path from a device mask (the mask kernel). */
int experiment_row_reads_mask(const struct dv_row *row);

/* 1 when rows `a` and `b` run the same thing: the same kernel with the same
 * mode on the same predicate (name or expression, as written), so on one
 * grid their launches, outputs and path masks are one. What a session's
 * masks are kept by (gpu/session.h) and what a batch of readers' tables
 * share a row by (model/stats/batchplan.h). */
int experiment_row_same_run(const struct dv_row *a, const struct dv_row *b);

#ifdef __cplusplus
}
#endif

#endif /* DV_EXPERIMENT_H */
