/* stoprule.h -- when a table has sampled enough: the stopping rule on what
 * users read, and why it stopped.
 *
 * The tables' headline figures are ratios, so the rule asks of them what a
 * reader would: is every ratio known to within its target? A table stops
 *   STOPRULE_TARGET     when at least min_samples rounds are kept and every
 *                       judged interval has a relative half-width (the larger
 *                       side, over the point: interval_rel_halfwidth) at or
 *                       under `target` and attains the nominal level;
 *   STOPRULE_CAP        else when max_samples rounds are kept (the sample
 *                       buffer is full);
 *   STOPRULE_THROTTLED  else when more than max_dropped rounds were dropped
 *                       by the throttle guard (throttle.h): a GPU throttled
 *                       for good would otherwise be re-sampled for ever;
 *   STOPRULE_BUDGET     else when gpu_ms (timed GPU work, dropped rounds
 *                       included) reached budget_ms and min_samples rounds are
 *                       kept; under the minimum the budget waits for it, as
 *                       the minimum is what makes an interval exist at all;
 *   STOPRULE_CONTINUE   otherwise: sample another batch.
 * Only TARGET means every interval met its target; the verdict counts the
 * intervals over it either way, so a caller can exit 1 for "an interval over
 * its target when sampling ended" (reason != STOPRULE_TARGET) and name the
 * worst one.
 *
 * Which intervals are judged is the caller's: a table's ratios against its
 * baseline (stats_judged() in stats.h picks them). An interval short of the
 * nominal level (too few rounds for 95%) is never within target, so a
 * minimum below 6 cannot stop a table on a degenerate interval.
 *
 * The per-sample spread (stdev / mean) is not part of the rule: it does not
 * shrink with more samples, and stopping on it failed well-measured tables.
 * Host-only and pure.
 */
#ifndef DV_STOPRULE_H
#define DV_STOPRULE_H

#include "kernels/model/model/types.h"
#include "kernels/model/stats/interval.h"

#ifdef __cplusplus
extern "C" {
#endif

#define STOPRULE_DEFAULT_TARGET 0.005 /* half-width <= 0.5% of the ratio */

enum stoprule_reason {
    STOPRULE_CONTINUE = 0,
    STOPRULE_TARGET,    /* every judged interval within target */
    STOPRULE_CAP,       /* max_samples rounds kept */
    STOPRULE_THROTTLED, /* more than max_dropped rounds dropped */
    STOPRULE_BUDGET,    /* GPU-time budget spent */
};

struct stoprule {
    double target;        /* relative half-width, > 0 */
    double level;         /* nominal confidence the intervals must attain */
    unsigned min_samples; /* rounds kept before any stop but the cap */
    unsigned max_samples; /* rounds kept at most (>= min_samples) */
    unsigned max_dropped; /* throttled rounds tolerated */
    double budget_ms;     /* timed GPU work, dropped rounds included */
};

/* Where sampling stands after a batch. */
struct stoprule_progress {
    unsigned kept;    /* rounds in the statistics */
    unsigned dropped; /* rounds the throttle guard dropped */
    double gpu_ms;    /* timed GPU work so far, dropped rounds included */
};

struct stoprule_verdict {
    enum stoprule_reason reason;
    unsigned over_target;   /* judged intervals over target (or short of the level) */
    int worst;              /* index of the widest judged interval, -1 if none */
    double worst_halfwidth; /* its relative half-width (0 when none) */
};

/* The rule of a request: target = o->max_noise (the request's precision
 * target, now read as the ratios' relative half-width; 0.5% by default),
 * the sample bounds of stats_sample_bounds(), max_dropped = max_samples,
 * budget o->budget_ms, level INTERVAL_LEVEL. */
void stoprule_init(struct stoprule *r, const struct dv_options *o);

/* Decides after a batch: `judged[0..njudged)` are the intervals the rule
 * reads. Fills `out` (reason and the over-target count) and returns the
 * reason. `r` must be valid (stoprule_check). */
enum stoprule_reason stoprule_decide(const struct stoprule *r, const struct interval *judged, unsigned njudged,
                                     const struct stoprule_progress *p, struct stoprule_verdict *out);

/* 0 when `r` is usable, else -1 with `err` naming the field. */
int stoprule_check(const struct stoprule *r, char *err);

/* Stable lower-case name of a reason: "continue", "target", "cap",
 * "throttled", "budget"; "unknown" otherwise. */
const char *stoprule_reason_name(int reason);

#ifdef __cplusplus
}
#endif

#endif /* DV_STOPRULE_H */
