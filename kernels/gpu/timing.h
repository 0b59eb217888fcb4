/* timing.h -- the timing engine every table kind shares (Part 1/2 and the
 * scenarios): warm-up, round-robin samples between CUDA events, and the
 * decisions on them of model/stats/sampling.h (throttled rounds, statistics with
 * their intervals, the stopping rule on the ratios' intervals).
 *
 * `launch(ctx, row, err)` enqueues one launch of row `row` on the default
 * stream and returns 0 or a DV_* code. timing_rows() makes one warm-up launch
 * per row, then samples rows round-robin (row 0, 1, ..., n-1, 0, 1, ...),
 * several rounds queued back to back per synchronisation so drift in clocks
 * or temperature hits every row alike, each launch between two CUDA events,
 * until the stopping rule says so. Each batch's clock reading goes with the
 * batch's first round, so a round run under a throttled clock is dropped from
 * every row and sampled again within the budget. Fills the measurement of
 * every row of the table and the table's verdict (sampling_report) and, when
 * asked, the clock (struct timing_clock). Because each row writes its own
 * output, the output left on the device afterwards is that of the row's last
 * timed launch.
 */
#ifndef DV_TIMING_H
#define DV_TIMING_H

#include "kernels/model/model/experiment.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef int (*timing_launch_fn)(void *ctx, unsigned row, char *err);

/* The SM clock sampled inside the timed work: in the first batch of rounds
 * and then in each batch that starts at least TIMING_CLOCK_EVERY_MS of timed
 * work after the last sample, two clock64() spins back to back, of
 * TIMING_SPIN_CYCLES and twice that (about 0.5 and 1 ms), each between
 * events, queued after the batch's lead-in launch so that the GPU is busy
 * and at the clock the rows run at. The clock is the extra cycles over the
 * extra time, so the fixed cost of a launch between two events (a few
 * microseconds, 0.3% of a 1 ms spin on an H200) cancels out; when the two
 * times disagree with a steady clock (a GPU ramping up from idle runs the
 * first spin slow) the sample is the second spin's clock, the one the
 * rounds after it run at. The caller provides `d_spin` (one long long per SM)
 * and `sms`; timing_rows() adds each sample's MHz to `sum_mhz`, counts it in
 * `n` and lowers `min_mhz`. The spins are not timed samples: they are in no
 * row's statistics nor in *gpu_ms. */
#define TIMING_SPIN_CYCLES 1000000LL
#define TIMING_CLOCK_EVERY_MS 10.0

/* The stream held while a batch is queued (nvbench's blocking kernel): a
 * spin queued first in a batch keeps the GPU busy while the host queues the
 * batch's launches behind it, so that rows shorter than the host's launch
 * cost (CUB's sort of a million items, a 16-FMA shade: tens of
 * microseconds) run back to back from the queue and each window times the
 * GPU's work, not the host's pace. The first batch is held
 * TIMING_HOLD_FIRST_MS; each later one TIMING_HOLD_FACTOR times the host
 * time the last batch took to queue, within [TIMING_HOLD_MIN_MS,
 * TIMING_HOLD_MAX_MS], or not at all when that queueing took less than
 * TIMING_HOLD_SHARE of the last batch's timed GPU work (rows long enough to
 * keep ahead of the host: the lesson's kernels), in cycles of a clock of at
 * most TIMING_HOLD_MAX_MHZ (a slower clock holds longer). Untimed; needs
 * the clock's spin buffer (no hold with clk NULL). */
#define TIMING_HOLD_FACTOR 2.0
#define TIMING_HOLD_FIRST_MS 1.0
#define TIMING_HOLD_MIN_MS 0.2
#define TIMING_HOLD_MAX_MS 20.0
#define TIMING_HOLD_MAX_MHZ 2100.0
#define TIMING_HOLD_SHARE 0.25

struct timing_clock {
    long long *d_spin;
    unsigned sms;
    double sum_mhz, min_mhz;
    unsigned n;
};

/* Queues the hold of `ms` milliseconds on the clock's spin buffer (one
 * block per SM); 0 or a DV_* code. */
int timing_hold(const struct timing_clock *clk, double ms, char *err);

/* The next batch's hold (0: none) after a batch the host queued in
 * `queue_ms` and the GPU timed `gpu_ms` of work in (gpu_ms <= 0: unknown,
 * held). */
double timing_hold_next(double queue_ms, double gpu_ms);

/* Times the t->nrows rows of `t` (each row's ratio over the row
 * dv_row_reference() names: t->baseline_row unless the row names another) under the
 * request `o`, judging rounds throttled against `rated_mhz` (0: unknown).
 * `clk` NULL samples no clock (then no round is judged throttled). Returns
 * 0 or a DV_* code. */
int timing_rows(struct dv_table *t, timing_launch_fn launch, void *ctx, const struct dv_options *o, double rated_mhz,
                struct timing_clock *clk, char *err);

/* Where the rounds of timing_rounds() go, and which rows they launch: one
 * table's struct sampling (timing_rows()), or the readers of a batch, each
 * with its own (model/stats/batchplan.h). Both get `ctx`.
 *   next: the launches of the next rounds, in round order, into `rows`
 *         (row indices; a row may be launched more than once in a round);
 *         returns how many (0: sampling is over), with in *rounds how many
 *         rounds may be queued: n x rounds at most max_launches x `batch`
 *         (the events made; `rows` has room for that many);
 *   file: the `rounds` rounds just timed of the `n` launches `rows`,
 *         ms[k * n + i] launch i's time in round k, `mhz` the clock read before them
 *         (NaN: not read). Returns 0 or a DV_* code with `err`. */
#define TIMING_MAX_LAUNCHES (2 * DV_MAX_ROWS) /* launches in one round */
struct timing_sink {
    unsigned (*next)(void *ctx, unsigned batch, unsigned *rows, unsigned *rounds);
    int (*file)(void *ctx, unsigned n, const unsigned *rows, unsigned rounds, const double *ms, double mhz,
                char *err);
    void *ctx;
    unsigned max_launches; /* x `batch`: the launches a batch holds (at most TIMING_MAX_LAUNCHES; 0: the rows' count) */
    double clock_every_ms; /* timed work between clock samples; 0: TIMING_CLOCK_EVERY_MS */
};

/* The engine under timing_rows(): one warm-up launch of each of the `nrows`
 * rows (at most DV_MAX_ROWS), then batches of rounds of the rows `sink`
 * names, each batch after an untimed lead-in launch and with the clock
 * sampled as timing_rows() does (or every sink->clock_every_ms of timed
 * work), filed into `sink`, until it names none. Returns 0 or a DV_* code. */
int timing_rounds(unsigned nrows, timing_launch_fn launch, void *ctx, const struct timing_sink *sink,
                  struct timing_clock *clk, char *err);

#ifdef __cplusplus
}
#endif

#endif /* DV_TIMING_H */
