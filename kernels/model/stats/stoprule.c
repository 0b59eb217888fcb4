/* stoprule.c -- the stopping rule on the ratios' intervals (stoprule.h). */
#include "kernels/model/stats/stoprule.h"

#include <math.h>
#include <string.h>

#include "kernels/model/stats/stats.h"

void stoprule_init(struct stoprule *r, const struct dv_options *o) {
    memset(r, 0, sizeof(*r));
    r->target = o->max_noise > 0 ? o->max_noise : STOPRULE_DEFAULT_TARGET;
    r->level = INTERVAL_LEVEL;
    stats_sample_bounds(o, &r->min_samples, &r->max_samples);
    r->max_dropped = r->max_samples;
    r->budget_ms = o->budget_ms;
}

int stoprule_check(const struct stoprule *r, char *err) {
    if (!(r->target > 0) || !isfinite(r->target)) {
        dv_seterr(err, "stoprule: target: %g is not a positive relative half-width", r->target);
        return DV_ERR;
    }
    if (!(r->level > 0 && r->level < 1)) {
        dv_seterr(err, "stoprule: level: %g is outside (0, 1)", r->level);
        return DV_ERR;
    }
    if (r->max_samples < r->min_samples || r->max_samples == 0) {
        dv_seterr(err, "stoprule: max_samples: %u is below min_samples %u or 0", r->max_samples, r->min_samples);
        return DV_ERR;
    }
    if (!(r->budget_ms >= 0) || isnan(r->budget_ms)) {
        dv_seterr(err, "stoprule: budget_ms: %g is negative", r->budget_ms);
        return DV_ERR;
    }
    return 0;
}

enum stoprule_reason stoprule_decide(const struct stoprule *r, const struct interval *judged, unsigned njudged,
                                     const struct stoprule_progress *p, struct stoprule_verdict *out) {
    memset(out, 0, sizeof(*out));
    out->worst = -1;
    /* The level is compared with a little slack: interval_ranks reports the
     * level it was asked for when it attains it, but a caller may have
     * carried it through arithmetic. */
    const double level = r->level - 1e-9;
    for (unsigned i = 0; i < njudged; i++) {
        double h = interval_rel_halfwidth(&judged[i]);
        if (isnan(h)) h = INFINITY;
        if (!(h <= r->target) || !(judged[i].level >= level)) out->over_target++;
        if (out->worst < 0 || h > out->worst_halfwidth) {
            out->worst = (int)i;
            out->worst_halfwidth = h;
        }
    }
    enum stoprule_reason why = STOPRULE_CONTINUE;
    if (p->kept >= r->min_samples && out->over_target == 0) why = STOPRULE_TARGET;
    else if (p->kept >= r->max_samples) why = STOPRULE_CAP;
    else if (p->dropped > r->max_dropped) why = STOPRULE_THROTTLED;
    else if (p->gpu_ms >= r->budget_ms && p->kept >= r->min_samples) why = STOPRULE_BUDGET;
    out->reason = why;
    return why;
}

const char *stoprule_reason_name(int reason) {
    switch (reason) {
    case STOPRULE_CONTINUE: return "continue";
    case STOPRULE_TARGET: return "target";
    case STOPRULE_CAP: return "cap";
    case STOPRULE_THROTTLED: return "throttled";
    case STOPRULE_BUDGET: return "budget";
    default: return "unknown";
    }
}
