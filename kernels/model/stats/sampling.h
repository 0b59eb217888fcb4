/* sampling.h -- one table's timed rounds and every decision made on them:
 * which rounds a throttled clock spoiled, the statistics, when to look at
 * them again and when to stop.
 *
 * The GPU side (gpu/timing.c) only queues launches and files what the
 * events measured; what it then decides is here, host-only, so it is tested
 * with synthetic rounds of known shape (tests/kernels/model/stats/test_sampling.c).
 *
 * Storage: sampling_row(s, r)[k] is row r's time in round k. Rows are
 * sampled round-robin, so round k's samples share the GPU's clock and
 * temperature and pair across rows (ratio.h); a round is the unit kept or
 * dropped. Beside them, per round, the SM clock read just before it (NaN
 * where none was). The buffer holds max_samples kept rounds, as many dropped
 * ones as the throttle guard tolerates (stoprule.h) and one more, so it can
 * never fill while the rule still says "continue".
 *
 * A look (sampling_look) marks the throttled rounds (throttle.h: under 75%
 * of the rated clock, judged by the readings on both sides of a round),
 * finds the timer's step when the samples sit on a lattice (each row read
 * on its own; the intervals are widened by half a step: interval.h), computes every row's statistics
 * over the kept rounds (stats_table, the ratio as RATIO_OF_ROUNDS) and asks
 * the stopping rule (stoprule_decide) about the intervals stats_judged()
 * names. Looks come after every batch up to SAMPLING_EVERY_BATCH_UNTIL
 * rounds and then whenever the rounds grew by SAMPLING_GROWTH since the last
 * one: an interval narrows as 1/sqrt(n), so looking more often than that
 * saves a few rounds at most, while each look costs a pass over every
 * sample. A look is also taken at once when the budget is spent, the kept
 * rounds may have reached the cap or the buffer is full, so no limit is
 * overshot by more than a batch.
 */
#ifndef DV_SAMPLING_H
#define DV_SAMPLING_H

#include <stddef.h>

#include "kernels/model/model/types.h"
#include "kernels/model/stats/stats.h"
#include "kernels/model/stats/stoprule.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SAMPLING_EVERY_BATCH_UNTIL 80u
#define SAMPLING_GROWTH 1.10

struct sampling {
    unsigned nrows, baseline;
    unsigned cap;    /* rounds the buffer holds */
    unsigned taken;  /* rounds filed */
    double *samples; /* nrows x cap */
    double *mhz;     /* cap: the clock before each round, NaN: not read */
    unsigned char *drop;
    double *scratch, *pool;
    double rated_mhz;
    struct stoprule rule;
    struct stats_config config;
    double gpu_ms;      /* timed work filed, dropped rounds included */
    unsigned next_look; /* past the every-batch phase: look at this many rounds */
    unsigned looks;
    /* The last look. */
    unsigned looked;        /* rounds it covered */
    unsigned kept, dropped; /* of those */
    unsigned ref[DV_MAX_ROWS]; /* row r's ratio is over row ref[r] (sampling_references()) */
    struct stats_row rows[DV_MAX_ROWS];
    struct stoprule_verdict verdict;
    unsigned judged_rows[DV_MAX_ROWS]; /* verdict.worst indexes these */
    unsigned njudged;
};

/* Prepares `s` for a table of `nrows` rows (1..DV_MAX_ROWS) with ratios over
 * row `baseline`, under the request's rule (stoprule_init(): target
 * o->max_noise, sample bounds, budget) and the device's rated SM clock
 * (`rated_mhz`, 0: unknown, then no round is judged throttled). Returns 0,
 * or -1 with `err` (a bad row count or baseline, a rule that does not check,
 * out of memory); sampling_cleanup() is safe either way. */
int sampling_init(struct sampling *s, unsigned nrows, unsigned baseline, const struct dv_options *o, double rated_mhz,
                  char *err);
void sampling_cleanup(struct sampling *s);

/* Row r's ratio over row ref[r] rather than the baseline (each < nrows;
 * its own index: no ratio, 1 [1, 1], judged by nothing). Before the first
 * sampling_file(). Returns 0, or -1 with `err` for a row out of range. */
int sampling_references(struct sampling *s, const unsigned *ref, char *err);

/* How many rounds the next batch may queue, at most `batch`: what the buffer
 * and the sample cap leave (>= 1 while the rule says continue). */
unsigned sampling_room(const struct sampling *s, unsigned batch);

/* The rounds the next batch asks for, before sampling_room() bounds them:
 * `batch`, or in the first batch the whole batches of `batch` the rule
 * takes before its first look that can stop it (min_samples rounded up to
 * a multiple of `batch`; a look before them cannot stop it, so the rule
 * decides the same), at most `most` (rounded down to whole batches; at
 * least `batch`). One batch is one synchronisation: the host's wait between
 * two batches leaves the GPU idle, and on the H200 tables whose 16 rounds
 * came as two batches read their ratios 0.07-0.13% above the same tables
 * timed with 16 rounds in one (four runs of ten), about the intervals'
 * half-width; so a table's first rounds, the ones its rule stops on most
 * often, come in one batch. */
unsigned sampling_want(const struct sampling *s, unsigned batch, unsigned most);

/* Row `row`'s samples: the caller writes rounds s->taken .. s->taken + n - 1
 * there, then files them with sampling_file(). */
double *sampling_row(struct sampling *s, unsigned row);

/* Files the `n` rounds just written (n <= sampling_room()), with the clock
 * read just before the first of them (`mhz`, NaN: not read) and their timed
 * work (`batch_ms`, every row's samples summed). Looks when a look is due
 * (above) and sets *why to the rule's reason, STOPRULE_CONTINUE when no
 * look was due or the rule says to sample on. Returns 0, or -1 with `err`
 * (a sample that is not a finite positive time, naming its row and round). */
int sampling_file(struct sampling *s, unsigned n, double mhz, double batch_ms, enum stoprule_reason *why, char *err);

/* Looks now, whatever the schedule (the contract of sampling_file). */
int sampling_look(struct sampling *s, enum stoprule_reason *why, char *err);

/* Writes the last look into table `t` (whose rows 0..nrows-1 are the rows
 * sampled): per row the summary, the median's interval, the ratio by the
 * configured method with its interval and level, the ratio of medians, the
 * spread flags and figures, the rounds dropped; per table the target, the
 * verdict (intervals_ok: the rule stopped on its target), the reason, the
 * widest judged interval, the timer's step and the GPU time; and, where
 * the table's rows name points of a fit (dv_row.in_fit, fit_x), the fit
 * over the kept rounds (fit.h) into t->fit. A look that kept no round
 * (every one throttled) leaves the rows' figures NaN and no fit. */
void sampling_report(const struct sampling *s, struct dv_table *t);

/* The step of the lattice one row's samples v[0..n) sit on: a timer that
 * counts in ticks gives times that are whole multiples of its tick, so many
 * samples tie and every gap between distinct values is a whole number of
 * the smallest gap. 0 when no lattice shows (fewer than two distinct values,
 * more distinct values than half the samples, or a gap that is not a
 * multiple within 2%). A row whose samples all tie shows no step: its
 * spread is under one tick, and the tick cannot be read from it. `scratch`
 * holds n doubles. */
double sampling_lattice(const double *v, size_t n, double *scratch);

#ifdef __cplusplus
}
#endif

#endif /* DV_SAMPLING_H */
