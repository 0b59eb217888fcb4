/* batchplan.h -- several readers' tables measured in one session: which
 * rows each batch of rounds launches, and each reader's own rounds, rule
 * and verdict.
 *
 * A class presses Measure at once: many requests for the same kernel on the
 * same grid, each with a predicate of its own. The GPU worker measures such
 * a batch in one session (gpu/batch.h); this unit is what it decides, host
 * only, so it is tested with synthetic rounds (and the stand-in worker uses
 * it as the GPU worker does).
 *
 * The union table. The readers' tables' rows are joined into one table: a
 * row two readers asked for (experiment_row_same_run(): the same kernel on
 * the same predicate) is one row, warmed up once, checked once and given
 * its witness and counters once for every reader that reads it. At most
 * DV_MAX_ROWS distinct rows: a union table is an ordinary table, so every
 * part of the engine that holds a table (the session's output slots,
 * events, check threads and witness records) holds it unchanged, and a
 * batch that would need more is not formed (the supervisor counts a
 * batch's rows before it sends it). The first reader's baseline is every
 * reader's (the batch is formed only of readers with one baseline).
 *
 * Each reader's rounds are the ones it gets alone. A reader's rounds come
 * back to back, its own table's rows in its table's order, exactly the
 * launches timing_rows() queues for that table alone; a batch of the
 * engine (one synchronisation) holds several readers' rounds one reader
 * after another (segments), and a reader whose rule asks for more rounds
 * gets them in the next batch, as alone after its look. Readers whose
 * tables are the same rows in the same order (one predicate asked twice)
 * read the same rounds. Why not rounds over the union, each row beside a
 * baseline launch: on the H200 a reader's rounds then spread over the
 * whole batch's time, beside every other reader's kernels, and its
 * intervals came out 1.5 to 1.9 times as wide as alone (the ratios a tenth
 * of a percent or two lower); one reader's rounds after another's gave
 * half-widths 0.9 to 1.25 times alone's. What the batch saves is
 * everything around the rounds: the plan, the session, the warm-up, the
 * testimony pass, the checks, the queue, and the GPU's idle time between
 * synchronisations.
 *
 * Each reader keeps its own struct sampling over its own rows, with its own
 * baseline, target, sample bounds and budget (counted on its own rows' GPU
 * time), so the pairing of a row with its baseline in the same round, the
 * throttle guard, the timer's lattice and the stopping rule hold per
 * reader, and its table is what its rule makes of its own rows. Never
 * worse than alone: the batch adds no stop of its own and no launch to a
 * reader's rounds. The batch ends when every reader is done.
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
/* A batch holds BATCHPLAN_MAX_LAUNCHES x `batch` launches (the timing
 * engine's events for it, gpu/timing.h's TIMING_MAX_LAUNCHES). */
#define BATCHPLAN_MAX_LAUNCHES (2 * DV_MAX_ROWS)

/* One reader's rounds in a batch: `rounds` rounds of its rows, launches
 * at .. at + rounds x its rows - 1 (round k's row j at at + k x rows + j). */
struct batchplan_seg {
    unsigned reader, at, rounds;
};

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
    unsigned rounds;    /* rounds filed, every reader's              */
    double last_mhz;    /* the last clock reading filed (NaN: none) */
    struct batchplan_seg segs[BATCHPLAN_MAX_READERS]; /* the batch planned last */
    unsigned nsegs;
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

/* The launches of the next batch into `rows` (room for
 * BATCHPLAN_MAX_LAUNCHES x `batch`), as one round (*rounds = 1): the
 * readers still sampling, in reader order, as many as the launches hold,
 * each one's rounds back to back (a segment, b->segs): its rows in its
 * table's order, as many rounds as alone (sampling_want(): in its first
 * batch the whole batches its rule takes before a look can stop it), or
 * what its room leaves (sampling_room()). Readers with the very same launches share a
 * segment. Returns how many launches (0 once every reader is done). */
unsigned batchplan_next(struct batchplan *b, unsigned batch, unsigned *rows, unsigned *rounds);

/* Files the batch just timed: `rounds` (1) round of the `n` launches
 * `rows` the last batchplan_next() planned, ms[i] launch i's time, `mhz`
 * the clock read just before them (NaN: none). Each segment's readers file
 * their rounds (sampling_file(), with their own rows' GPU time), the first
 * segment's with `mhz`, a reader's first rounds otherwise with the last
 * reading filed (as alone its first batch has one), and each is done when
 * its rule says stop. Returns 0, or -1 with `err` (launches that are not
 * the batch planned, or what sampling_file() says). */
int batchplan_file(struct batchplan *b, unsigned n, const unsigned *rows, unsigned rounds, const double *ms,
                   double mhz, char *err);

/* Writes each reader's last look into its table (sampling_report()) and
 * what the batch was into its table's batch_readers and batch_rows. */
void batchplan_report(const struct batchplan *b);

#ifdef __cplusplus
}
#endif

#endif /* DV_BATCHPLAN_H */
