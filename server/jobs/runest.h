/* runest.h -- how long a job of each kind is expected to run, from the runs
 * of that kind just before: the figure the queue's drain estimate (jobq.h)
 * multiplies by the jobs ahead.
 *
 * A kind is a short text the submitter chooses for what the worker's time
 * depends on (options_job_kind(): the tables, the rows, the testimony, the
 * instruction profiles); the estimate forgets the table it does not know.
 * Each kind keeps an exponentially weighted moving average of its run times
 * (weight RUNEST_ALPHA on the newest run), so it follows a worker that warms
 * up or a GPU that slows down within a few runs, and one slow run moves it
 * by a part only. A kind with no finished run yet is estimated at its
 * seed, when it has one, else at the configured default, never at a
 * deadline: a deadline says how long a job may take, not how long it does.
 *
 * A seed (runest_seed()) is a run measured before any job of the kind
 * finished: the GPU worker's warm-up measures the widget's request once
 * before its hello (kernels/gpu/warmup.h), so a fresh server's class is
 * told the drain of what the GPU does, not forty defaults. A seed is not a
 * run: runest_runs() does not count it, the kind's first finished run
 * replaces it (as the first run sets an unseeded kind), and a kind that has
 * a finished run takes no seed (a restarted worker seeds again only the
 * kinds that never ran).
 *
 * No lock of its own: a `struct runest` lives inside the queue and is read
 * and written under the queue's lock. At most RUNEST_KINDS kinds are kept;
 * a new kind takes the place of the one updated least recently.
 */
#ifndef DV_RUNEST_H
#define DV_RUNEST_H

#define RUNEST_KIND_LEN 48 /* a kind's text, NUL included; longer is cut */
#define RUNEST_KINDS 64
#define RUNEST_ALPHA 0.3

struct runest_kind {
    char name[RUNEST_KIND_LEN];
    double run_s;               /* the moving estimate            */
    unsigned long long runs;    /* finished runs it has seen      */
    int seeded;                 /* run_s is a seed: no run yet    */
    unsigned long long touched; /* the table's clock at its update */
};

struct runest {
    struct runest_kind kinds[RUNEST_KINDS];
    unsigned n;
    unsigned long long clock;
    double default_s; /* a kind with no finished run nor seed */
};

/* Empties `e`; `default_s` (> 0) is a kind's estimate before its first run. */
void runest_init(struct runest *e, double default_s);

/* The expected run of a job of `kind` (NULL is ""), in seconds: the moving
 * estimate of its runs, or its seed when none has finished, or the default
 * when it has neither. */
double runest_get(const struct runest *e, const char *kind);

/* Whether `kind` has an estimate of its own (a finished run or a seed),
 * i.e. runest_get() does not answer the default for it. */
int runest_known(const struct runest *e, const char *kind);

/* Records a finished run of `run_s` seconds (negative ignored) of `kind`;
 * the kind's first replaces its seed. */
void runest_add(struct runest *e, const char *kind, double run_s);

/* Seeds `kind` with a run of `run_s` seconds measured outside the queue
 * (a worker's warm-up), when the kind has no finished run; an earlier seed
 * is replaced. Returns 1 when seeded; 0 when the kind has a finished run
 * or `run_s` is not a positive number (nothing changes). */
int runest_seed(struct runest *e, const char *kind, double run_s);

/* Finished runs recorded for `kind` (0 when unknown or forgotten; a seed
 * is no run). */
unsigned long long runest_runs(const struct runest *e, const char *kind);

#endif /* DV_RUNEST_H */
