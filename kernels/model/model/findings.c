/* findings.c -- the experiments' tables read as a whole (findings.h). */
#include "kernels/model/model/findings.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* The lane-split rows of a predication table: each with its point and the
 * row it is compared with. */
static void table_points(const struct dv_table *t, int ti, struct findings_predication *f) {
    for (unsigned r = 0; r < t->nrows && r < DV_MAX_ROWS && f->npoints < FINDINGS_MAX_POINTS; r++) {
        const struct dv_row *w = &t->rows[r];
        if (strcmp(w->point.arrangement, "lanes") != 0 || !w->point.la || !w->point.lb) continue;
        struct findings_point *p = &f->points[f->npoints++];
        memset(p, 0, sizeof *p);
        p->la = w->point.la;
        p->lb = w->point.lb;
        p->table = ti;
        p->row = (int)r;
        p->ratio = w->measured ? w->ratio : NAN;
        p->lo = w->measured ? w->ratio_ci.lo : NAN;
        p->hi = w->measured ? w->ratio_ci.hi : NAN;
        p->branching = LISTING_SHAPE_UNKNOWN;
        p->guarded_lanes = p->guarded_lanes_on = NAN;
        if (w->instructions) {
            struct listing_shape sh;
            listing_shape(w->instructions, &sh);
            p->branching = sh.branching;
            p->guarded_lanes = sh.guarded_lanes;
            p->guarded_lanes_on = sh.guarded_lanes_on;
        }
    }
}

/* Whether `pred(point, k)` says "predicated" exactly for the known points
 * that are predicated, for some k in 1..lim; that k, or -1. */
static int fits(const struct findings_predication *f, int by_sum) {
    for (int k = 0; k <= 16; k++) {
        int ok = 1, known = 0;
        for (unsigned i = 0; i < f->npoints && ok; i++) {
            const struct findings_point *p = &f->points[i];
            if (p->branching != LISTING_SHAPE_PREDICATED && p->branching != LISTING_SHAPE_BRANCHED) continue;
            known = 1;
            const unsigned v = by_sum ? p->la + p->lb : (p->la > p->lb ? p->la : p->lb);
            ok = (v <= (unsigned)k) == (p->branching == LISTING_SHAPE_PREDICATED);
        }
        if (ok && known) return k;
    }
    return -1;
}

/* The smallest a + b (then a) such that a point is predicated exactly when
 * LA <= a and LB <= b; 0 with *a = *b = -1 when none fits. */
static int fits_sides(const struct findings_predication *f, int *a, int *b) {
    *a = *b = -1;
    for (int sum = 0; sum <= 32; sum++)
        for (int x = 0; x <= sum && x <= 16; x++) {
            const int y = sum - x;
            int ok = y <= 16, known = 0;
            for (unsigned i = 0; i < f->npoints && ok; i++) {
                const struct findings_point *p = &f->points[i];
                if (p->branching != LISTING_SHAPE_PREDICATED && p->branching != LISTING_SHAPE_BRANCHED) continue;
                known = 1;
                ok = ((int)p->la <= x && (int)p->lb <= y) == (p->branching == LISTING_SHAPE_PREDICATED);
            }
            if (ok && known) {
                *a = x;
                *b = y;
                return 1;
            }
        }
    return 0;
}

static void describe(struct findings_predication *f) {
    const unsigned known = f->predicated + f->branched;
    int n = snprintf(f->text, sizeof f->text, "%u points: %u predicated, %u branched, %u other, %u unknown; ",
                     f->npoints, f->predicated, f->branched, f->other, f->unknown);
    if (n < 0 || (size_t)n >= sizeof f->text) return;
    const size_t left = sizeof f->text - (size_t)n;
    char *at = f->text + n;
    if (known == 0) snprintf(at, left, "no point's SASS was read (no profile or no disassembly), so no boundary");
    else if (f->predicated == 0 || f->branched == 0)
        snprintf(at, left,
                 "every point whose SASS was read is %s, so these points do not find the boundary; the guide's old "
                 "rule (at most %d instructions under the condition, %d where divergence is unlikely) disagrees on %u "
                 "of the %u points",
                 f->predicated ? "predicated" : "branched", FINDINGS_GUIDE_DIVERGENT, FINDINGS_GUIDE_OTHERWISE,
                 f->guide_disagrees, known);
    else if (f->sum_rule >= 0)
        snprintf(at, left,
                 "this compiler predicated exactly the if/else whose sides add up to at most %d FMAs (LA + LB <= %d)"
                 "%s; the guide's old rule (at most %d instructions under the condition, %d where divergence is "
                 "unlikely) disagrees on %u of the %u points",
                 f->sum_rule, f->sum_rule,
                 f->max_rule >= 0 ? ", as it did those whose longer side is at most that" : "",
                 FINDINGS_GUIDE_DIVERGENT, FINDINGS_GUIDE_OTHERWISE, f->guide_disagrees, known);
    else if (f->max_rule >= 0)
        snprintf(
            at, left,
            "this compiler predicated exactly the if/else whose longer side is at most %d FMAs (max(LA, LB) <= %d); "
            "the guide's old rule (at most %d instructions under the condition, %d where divergence is unlikely) "
            "disagrees on %u of the %u points",
            f->max_rule, f->max_rule, FINDINGS_GUIDE_DIVERGENT, FINDINGS_GUIDE_OTHERWISE, f->guide_disagrees, known);
    else if (f->side_a >= 0)
        snprintf(at, left,
                 "this compiler predicated exactly the if/else whose `if` side has at most %d FMAs and whose `else` "
                 "side at most %d (LA <= %d and LB <= %d: no rule on LA + LB or max(LA, LB) fits); the guide's old "
                 "rule (at most %d instructions under the condition, %d where divergence is unlikely) disagrees on %u "
                 "of the %u points",
                 f->side_a, f->side_b, f->side_a, f->side_b, FINDINGS_GUIDE_DIVERGENT, FINDINGS_GUIDE_OTHERWISE,
                 f->guide_disagrees, known);
    else
        snprintf(at, left,
                 "no rule of the form LA + LB <= s, max(LA, LB) <= m or LA <= a and LB <= b fits the points; the "
                 "guide's old rule (at most %d instructions under the condition) disagrees on %u of the %u points",
                 FINDINGS_GUIDE_DIVERGENT, f->guide_disagrees, known);
}

unsigned findings_predication(const struct dv_report *r, struct findings_predication *out) {
    memset(out, 0, sizeof *out);
    for (unsigned i = 0; i < r->ntables && i < DV_MAX_TABLES; i++)
        if (strcmp(r->tables[i].experiment, "predication") == 0) table_points(&r->tables[i], (int)i, out);
    if (out->npoints == 0) return 0;
    for (unsigned i = 0; i < out->npoints; i++) {
        const struct findings_point *p = &out->points[i];
        switch (p->branching) {
        case LISTING_SHAPE_PREDICATED: out->predicated++; break;
        case LISTING_SHAPE_BRANCHED: out->branched++; break;
        case LISTING_SHAPE_UNKNOWN: out->unknown++; break;
        default: out->other++; break;
        }
        const int guide = p->la + p->lb <= FINDINGS_GUIDE_DIVERGENT;
        if (p->branching == LISTING_SHAPE_PREDICATED || p->branching == LISTING_SHAPE_BRANCHED)
            out->guide_disagrees += guide != (p->branching == LISTING_SHAPE_PREDICATED);
    }
    out->sum_rule = fits(out, 1);
    out->max_rule = fits(out, 0);
    fits_sides(out, &out->side_a, &out->side_b);
    describe(out);
    return out->npoints;
}
