/* options.h -- defaults and validation of struct dv_options, shared by the
 * CLI (--threads-per-block) and the JSON API (threads_per_block), so a bad
 * value gets the same rule and reason whichever way it came in; only the name
 * of the field in the message follows the caller's spelling.
 */
#ifndef DV_OPTIONS_H
#define DV_OPTIONS_H

#include "kernels/model/model/experiment.h"

enum options_style { OPTIONS_JSON = 0, OPTIONS_CLI = 1 };

/* Limits that model/model/experiment.h leaves to the request layer (the others are
 * DV_MAX_* there). Error messages state every range from these constants. */
#define OPTIONS_MAX_SAMPLES 100000u
#define OPTIONS_MAX_DEVICE 63
#define OPTIONS_MAX_NOISE 0.5     /* max_halfwidth: 50% of the ratio */
#define OPTIONS_MIN_BUDGET_MS 1.0
/* The most one row's instruction profile may cost, in thread-iterations
 * run under CUPTI's patching (tens to hundreds of times slower than the
 * timed kernel): about a second on an H200 (its 1,056-block, 4096-FMA
 * grid, 1.1e9 thread-iterations, ran patched in 76 ms). A profile is
 * collected on the blocks that stand for the row's grid: one block for a
 * predicate that does not read blockIdx.x, one period of blocks (or the
 * whole grid) for one that does. */
#define OPTIONS_MAX_INSTRUCTIONS_COST 1.6e10

/* Checks every field's range and that every predicate resolves (built-in name
 * or valid expression), that a scenario name selects something, and that the
 * baseline is one of the Part 1 rows (it is added as a row when missing). A
 * given field that does not apply (experiment_unused()) is no error in either
 * style: plan_report() warns of it in the document (and the CLI on stderr).
 * Returns 0, or -1 with `err` = "<field>: why" on one line, where <field> is
 * spelled per `style` ("threads_per_block" or "--threads-per-block"), and
 * `fault` (may be NULL): fault->field the JSON name, and for an expression
 * that does not parse fault->expr its column and caret (column 0 for any
 * other error). */
int options_validate(struct dv_options *o, enum options_style style, struct dv_fault *fault, char *err);

/* Parses one CLI option value into `o` ("--blocks", "auto") and marks it
 * given (o->given). Returns 0, or -1 with `err` naming the option and the
 * allowed range ("--bogus: unknown option" before anything else). */
int options_set_cli(struct dv_options *o, const char *option, const char *value, char *err);

/* 1 when `option` ("--blocks") is one options_set_cli() takes. */
int options_cli_known(const char *option);

/* A block shape as the CLI and the JSON API both write it: "N" or "XxY"
 * ("32x8"), into *x and *y (1 for "N"). 0, or -1 when it is neither (the
 * ranges are options_validate()'s). */
int options_parse_block(const char *value, unsigned *x, unsigned *y);

/* The CLI spelling ("--budget-ms") of one DV_GIVEN_* bit, "" for none. */
const char *options_cli_name(unsigned bit);

/* Estimated GPU cost of `o` in FMA-lane operations: threads x iterations x rows
 * x max_samples (an upper bound the server compares with its per-job limit);
 * the rows are the tables' own (a scenario request runs its scenario tables
 * instead of Part 1 and 2). */
double options_cost(const struct dv_options *o);

/* Tables `o` plans: the scenario tables its name selects, else 1 or 2
 * Part tables; 0 for a scenario name that selects none. */
unsigned options_tables(const struct dv_options *o);
/* The highest cost of a row's instruction profile under `o`, in
 * thread-iterations (threads per block x iterations x the blocks profiled:
 * one for a predicate that does not read blockIdx.x, the whole grid for one
 * that does, at its upper bound when blocks is auto), and in *row the row it
 * is (an index of o->predicates, or -1 for a Part 2 row). A scenario
 * request's rows are costed when each is planned (profile.h: a period or a
 * stand-in grid of its assignment), so this is 0 for one; a data-sort
 * request's shading rows are each profiled on the whole grid, so its cost
 * is the grid's threads x its cells' largest C (and *row -1).
 * options_validate() refuses a request for instructions over
 * OPTIONS_MAX_INSTRUCTIONS_COST with it. */
double options_instructions_cost(const struct dv_options *o, int *row);

/* What the worker's time for `o` depends on, as a short text for the job
 * queue's run estimates (server/jobs/runest.h): the tables (part1, part2,
 * all, scenario), the rows they time, and the untimed passes it asks for
 * (the witness, the counters, the instruction profiles), e.g.
 * "part1/2rows+witness+counters". Not the geometry: the timed rounds stop at
 * the same half-width target or budget whatever the grid. Writes at most
 * `len` bytes (48 hold every kind); returns 0, or -1 when cut short. */
int options_job_kind(const struct dv_options *o, char *buf, size_t len);
/* Which requests a batch of readers may measure together on the GPU
 * (kernels/gpu/batch.h; the queue's batches, server/jobs/jobq.h), decided
 * here once: a request for the Part 1 table alone (no Part 2, no scenario),
 * keyed by what the batch's session, warm-up and testimony pass need the same
 * (the kernel the table runs, plan_part1_kernel(); the blocks, "auto" for
 * auto; the block shape; the iterations; the witness, counters and
 * instructions switches; the baseline, the one the batch's union table
 * holds, gpu/batch.h), followed by the rows it
 * times, one line each (its predicates as written, the baseline among
 * them). What each reader keeps of its own (the target, the sample bounds,
 * the budget and the predicates) is not in the key. Writes
 *   "<key line>\n<row>\n<row>..."
 * into `buf`; two requests may share a batch when their first lines are
 * equal, and a batch's rows are the distinct row lines of its members. An
 * empty text for a request that is not batched (another table, a predicate
 * holding a control character). Returns 0, or -1 when `len` is too small
 * (OPTIONS_BATCH_KEY_LEN always holds it; then `buf` is empty). */
#define OPTIONS_BATCH_KEY_LEN (160 + DV_MAX_ROWS * PREDICATE_TEXT_LEN)
int options_batch_key(const struct dv_options *o, char *buf, size_t len);

/* A canonical one-line form of `o` (every field, fixed order), used as the
 * result-cache key and recorded in provenance. */
int options_canonical(const struct dv_options *o, char *buf, size_t len);

#endif /* DV_OPTIONS_H */
