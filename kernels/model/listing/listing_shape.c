/* listing_shape.c -- how a profile's paths were laid out (listing_shape.h). */
#include "kernels/model/listing/listing_shape.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define SHAPE_BEFORE 8u /* instructions before the first path one in the window */

const char *listing_branching_name(enum listing_branching b) {
    static const char *const names[] = {"none", "predicated", "branched", "unconditional", "mixed", "unknown"};
    return (unsigned)b < sizeof names / sizeof names[0] ? names[b] : "unknown";
}

static uint32_t run_end(const struct listing_run *r) { return r->pc + 16u * (r->count ? r->count - 1u : 0u); }

static int is_op(const struct listing_run *r, const char *op) { return strcmp(r->opcode, op) == 0; }

/* The first and last path run; 0 when there is none. */
static int path_span(const struct listing *l, unsigned *first, unsigned *last) {
    int any = 0;
    for (unsigned i = 0; i < l->nruns; i++) {
        if (!listing_kind_is_path(l->runs[i].region) || !l->runs[i].warp) continue;
        if (!any) *first = i;
        *last = i;
        any = 1;
    }
    return any;
}

/* Whether guarded BRA `r` is a branch among the paths: its target lies
 * from the first path instruction to the window's end (`lo` .. `hi`). One
 * that jumps past them all (a loop's test for zero trips, which skips both
 * sides together) or back to before them (a loop's back-edge to its
 * counter) chooses no path. Without a known target it counts. */
static int among_paths(const struct listing_run *r, uint32_t lo, uint32_t hi) {
    return !r->has_target || (r->target >= lo && r->target <= hi);
}

/* The window's branch instructions and the whole function's, the paths'
 * FFMAs and their lanes. */
static void count_runs(const struct listing *l, unsigned first, unsigned last, struct listing_shape *s) {
    unsigned long long pw = 0, pt = 0, gw = 0, gt = 0, gp = 0;
    const unsigned from = first > SHAPE_BEFORE ? first - SHAPE_BEFORE : 0;
    unsigned stop = last + 1;
    while (stop < l->nruns && l->runs[stop].region == LISTING_RECONVERGE) stop++;
    const uint32_t lo = l->runs[first].pc, hi = run_end(&l->runs[stop - 1]);
    for (unsigned i = 0; i < l->nruns; i++) {
        const struct listing_run *r = &l->runs[i];
        if (!r->warp) continue; /* a version of the code the launch never ran */
        s->bssy += is_op(r, "BSSY") ? r->count : 0;
        s->bsync += is_op(r, "BSYNC") ? r->count : 0;
        s->warpsync += is_op(r, "WARPSYNC") ? r->count : 0;
        if (i >= from && i < stop) {
            s->window_bssy += is_op(r, "BSSY") ? r->count : 0;
            s->window_bsync += is_op(r, "BSYNC") ? r->count : 0;
            s->window_guarded_bra += is_op(r, "BRA") && r->guarded && among_paths(r, lo, hi) ? r->count : 0;
        }
        if (!listing_kind_is_path(r->region) || !is_op(r, "FFMA")) continue;
        s->path_ffma += r->count;
        pw += (unsigned long long)r->count * r->warp;
        pt += (unsigned long long)r->count * r->thread;
        if (!r->guarded) continue;
        s->guarded_ffma += r->count;
        gw += (unsigned long long)r->count * r->warp;
        gt += (unsigned long long)r->count * r->thread;
        gp += (unsigned long long)r->count * r->pred_on;
    }
    s->path_lanes = pw ? (double)pt / (double)pw : NAN;
    s->guarded_lanes = gw ? (double)gt / (double)gw : NAN;
    s->guarded_lanes_on = gw ? (double)gp / (double)gw : NAN;
}

/* The join: the tail's first run where there is a tail region, else the
 * first run after the paths that is no reconvergence; and whether a BSYNC
 * or WARPSYNC stands between the last path run and it. */
static void find_join(const struct listing *l, unsigned last, struct listing_shape *s) {
    unsigned j = l->nruns;
    for (unsigned i = 0; i < l->nruns && j == l->nruns; i++)
        if (l->runs[i].region == LISTING_TAIL) j = i;
    s->join_is_tail = j < l->nruns;
    if (!s->join_is_tail)
        for (unsigned i = last + 1; i < l->nruns && j == l->nruns; i++)
            if (l->runs[i].region != LISTING_RECONVERGE) j = i;
    if (j == l->nruns) return;
    s->has_join = 1;
    s->join_pc = l->runs[j].pc;
    if (s->join_is_tail) {
        for (unsigned k = 0; k < l->nregions; k++)
            if (l->regions[k].kind == LISTING_TAIL) s->join_lanes = l->regions[k].lanes;
    } else {
        s->join_lanes = l->runs[j].lanes;
    }
    const uint32_t from = run_end(&l->runs[last]);
    for (unsigned i = 0; i < l->nruns; i++) {
        const struct listing_run *r = &l->runs[i];
        if (r->pc > from && r->pc < s->join_pc && (is_op(r, "BSYNC") || is_op(r, "WARPSYNC"))) s->sync_at_join = 1;
    }
}

static enum listing_branching verdict(const struct listing_shape *s, int have_text, unsigned path_insns) {
    if (!have_text) return path_insns ? LISTING_SHAPE_UNKNOWN : LISTING_SHAPE_NONE;
    if (s->path_ffma == 0) return LISTING_SHAPE_NONE;
    const int branch = s->window_bssy || s->window_bsync || s->window_guarded_bra;
    if (s->guarded_ffma == s->path_ffma && !branch) return LISTING_SHAPE_PREDICATED;
    if (s->guarded_ffma == 0) return branch ? LISTING_SHAPE_BRANCHED : LISTING_SHAPE_UNCONDITIONAL;
    return LISTING_SHAPE_MIXED;
}

/* The one line of the header's. */
static void describe(struct listing_shape *s) {
    char join[160] = "";
    if (s->has_join)
        snprintf(join, sizeof join, "; %s at pc 0x%04x%s, %.1f lanes", s->join_is_tail ? "tail" : "join",
                 (unsigned)s->join_pc,
                 s->sync_at_join ? " after a BSYNC/WARPSYNC" : " with no BSYNC/WARPSYNC before it", s->join_lanes);
    switch (s->branching) {
    case LISTING_SHAPE_PREDICATED:
        snprintf(s->text, sizeof s->text,
                 "predicated: all %u path FFMAs guarded, no BSSY, BSYNC or guarded BRA among the paths; issued with "
                 "%.1f lanes, %.1f on%s",
                 s->path_ffma, s->guarded_lanes, s->guarded_lanes_on, join);
        break;
    case LISTING_SHAPE_BRANCHED:
        snprintf(s->text, sizeof s->text,
                 "branched: %u path FFMAs unguarded; %u BSSY, %u BSYNC, %u guarded BRA among the paths; path FFMAs "
                 "issued with %.1f lanes%s",
                 s->path_ffma, s->window_bssy, s->window_bsync, s->window_guarded_bra, s->path_lanes, join);
        break;
    case LISTING_SHAPE_UNCONDITIONAL:
        snprintf(s->text, sizeof s->text,
                 "unconditional: %u path FFMAs unguarded and no branch among the paths: every lane issues every path, "
                 "%.1f lanes%s",
                 s->path_ffma, s->path_lanes, join);
        break;
    case LISTING_SHAPE_MIXED:
        snprintf(s->text, sizeof s->text, "mixed: %u of %u path FFMAs guarded (%.1f lanes, %.1f on)%s", s->guarded_ffma,
                 s->path_ffma, s->guarded_lanes, s->guarded_lanes_on, join);
        break;
    case LISTING_SHAPE_UNKNOWN:
        snprintf(s->text, sizeof s->text,
                 "unknown: no disassembly, so no opcodes or guards to read; path "
                 "instructions issued with %.1f lanes%s",
                 s->path_lanes, join);
        break;
    default: snprintf(s->text, sizeof s->text, "no path instructions"); break;
    }
}

void listing_shape(const struct listing *l, struct listing_shape *s) {
    memset(s, 0, sizeof *s);
    s->path_lanes = s->guarded_lanes = s->guarded_lanes_on = s->join_lanes = NAN;
    unsigned first = 0, last = 0, path_insns = 0;
    unsigned long long pw = 0, pt = 0;
    int have_text = 0;
    for (unsigned i = 0; i < l->nruns; i++) {
        const struct listing_run *r = &l->runs[i];
        have_text |= r->opcode[0] != '\0';
        if (!listing_kind_is_path(r->region) || !r->warp) continue;
        path_insns += r->count;
        pw += (unsigned long long)r->count * r->warp;
        pt += (unsigned long long)r->count * r->thread;
    }
    if (path_span(l, &first, &last)) {
        count_runs(l, first, last, s);
        find_join(l, last, s);
        /* Without opcodes no FFMA is known: the paths' lanes are all of their instructions'. */
        if (!have_text) s->path_lanes = pw ? (double)pt / (double)pw : NAN;
    }
    s->branching = verdict(s, have_text, path_insns);
    describe(s);
}
