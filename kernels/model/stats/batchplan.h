/* batchplan.h -- several readers' tables measured on shared rounds: which
 * rows a round launches, and each reader's own rounds, rule and verdict.
 *
 * A class presses Measure at once: many requests for the same kernel on the
 * same grid, each with a predicate of its own. The GPU worker measures such
 * a batch in one session (gpu/batch.h); this unit is what it decides, host
 * only, so it is tested with synthetic rounds (and the stand-in worker uses
 * it as the GPU worker does).
 *
 * The union table. The readers' tables' rows are joined into one table: a
 * row two readers asked for (experiment_row_same_run(): the same kernel on
 * the same predicate) is one row, launched once per round and read by both.
 * At most DV_MAX_ROWS distinct rows: a union table is an ordinary table, so
 * every part of the engine that holds a table (the sampling buffer and its
 * statistics, the session's output slots, events, check threads and witness
 * records) holds it unchanged, and a batch that would need more is not
 * formed (the supervisor counts a batch's rows before it sends it). The
 * first reader's baseline is every reader's (the batch is formed only of
 * readers with one baseline), and a round launches each other row followed
 * by the baseline (batchplan_next()): a row's launch has a baseline launch
 * on each side, as alone, where the launch before a kernel measurably
 * changes its time at the scale of the intervals.
 *
 * Each reader's own rounds. Every reader keeps its own struct sampling over
 * its own rows only (its rows' times copied out of each round of the
 * union), with its own baseline, target, sample bounds and budget, the
 * budget counted on its own rows' GPU time exactly as alone. So the pairing
 * of a row with its baseline in the same round, the throttle guard (the
 * round's clock is the union's), the timer's lattice (read from its own
 * rows) and the stopping rule hold per reader, and its table is what its
 * rule makes of its own rows. A reader whose rule says stop is done: its
 * table is final and the rows only it reads leave the rounds. The batch
 * ends when every reader is done.
 *
 * Never worse than alone: the batch adds no stop of its own. A reader's
 * rows are in every round until its own rule stops it, on its own target,
 * cap, throttle guard or budget, so it gets every round its rule asks for,
 * as alone; what another reader's rows cost counts against no one else's
 * budget. (A reader's row may run beside more launches in a round than
 * alone; the round is still the unit of pairing and of dropping.)
 *
 * One thread uses a struct batchplan; it holds its readers' tables (the
 * caller's) until batchplan_cleanup().
 */
#ifndef DV_BATCHPLAN_H
#define DV_BATCHPLAN_H

#include "kernels/model/model/types.h"
#include "kernels/model/stats/sampling.h"

#ifdef __cplusplus
extern "C" {
#endif

#define BATCHPLAN_MAX_READERS 16
/* Launches in one round: each row other than the baseline, then the baseline. */
#define BATCHPLAN_MAX_LAUNCHES (2 * DV_MAX_ROWS)

struct batchplan_reader {
    struct dv_table *t;        /* the reader's table, its rows planned       */
    unsigned row[DV_MAX_ROWS]; /* its row i is union row row[i]              */
    struct sampling s;         /* its own rounds and rule                    */
    int done;                  /* its rule said stop: its table is final     */
};

struct batchplan {
    unsigned nreaders;
    struct batchplan_reader readers[BATCHPLAN_MAX_READERS];
    struct dv_table *u; /* the union table (the caller's storage)   */
    double gpu_ms;      /* the union's timed work, every row's      */
    unsigned rounds;    /* rounds of the union filed                */
};

/* Joins the `n` readers' tables `tables[i]` (Part 1 / Part 2 tables of one
 * grid, rows planned; 1 <= n <= BATCHPLAN_MAX_READERS), each sampled under
 * its request `opts[i]`'s rule, into union table `u` (its id, title and
 * kernel the first reader's; its baseline the first reader's baseline row)
 * and prepares each reader's sampling (`rated_mhz` as sampling_init()).
 * Returns 0, or -1 with `err`: a table without rows or a baseline, more
 * than DV_MAX_ROWS distinct rows, a rule that does not check, out of
 * memory. batchplan_cleanup() is safe either way. */
int batchplan_init(struct batchplan *b, struct dv_table *const *tables, const struct dv_options *const *opts,
                   unsigned n, double rated_mhz, struct dv_table *u, char *err);
void batchplan_cleanup(struct batchplan *b);

/* The launches of the next rounds, in round order, into `rows` (room for
 * BATCHPLAN_MAX_LAUNCHES): every row a reader still sampling reads, each
 * followed by a launch of the baseline, so each row is timed between two
 * baseline launches as it is alone, and each reader's baseline sample is
 * the launch right after its last row. Returns how many launches (0 once
 * every reader is done), and in *rounds how many rounds may be
 * queued next, at most `batch`: what every reader still sampling has room
 * for (sampling_room()). */
unsigned batchplan_next(const struct batchplan *b, unsigned batch, unsigned *rows, unsigned *rounds);

/* Files `rounds` rounds of the `n` launches `rows` (union rows, as
 * batchplan_next() gave them): ms[k * n + i] is launch i's time in round k; `mhz` the
 * clock read just before them (NaN: none). Each reader still sampling gets
 * its own rows' times and files them (sampling_file(), with its own rows'
 * GPU time), and is done when its rule says stop. Returns 0, or -1 with
 * `err` (a reader's row missing from `rows`, or what sampling_file() says). */
int batchplan_file(struct batchplan *b, unsigned n, const unsigned *rows, unsigned rounds, const double *ms,
                   double mhz, char *err);

/* Writes each reader's last look into its table (sampling_report()) and
 * what the batch was into its table's batch_readers and batch_rows. */
void batchplan_report(const struct batchplan *b);

#ifdef __cplusplus
}
#endif

#endif /* DV_BATCHPLAN_H */
