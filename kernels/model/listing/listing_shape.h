/* listing_shape.h -- what a row's instruction profile says about how the
 * compiler laid its paths out, read from the profile's own runs (their
 * opcodes, guards, regions and counts), never from a table of what the
 * compiler is expected to do.
 *
 * Only the instructions the profiled launch executed count (a function
 * may hold a second version of a loop that never ran). The paths are the
 * runs of the path regions (listing_kind_is_path()); the
 * window around them is from their first instruction to their last, with
 * the reconvergence region after them and the eight instructions before
 * the first (where a branch's divergent BRA sits). A guarded BRA there is
 * a branch among the paths when its target lies from the first path
 * instruction to the window's end: one that jumps past all the paths (a
 * loop's test for zero trips around compute-both-then-select's single
 * loop) or back to before them (a loop's back-edge) chooses no path, and a
 * BRA whose target is not known (a document that does not give it) counts.
 * In that window:
 *   predicated     every FFMA of the paths guarded (@P / @!P) and no BSSY,
 *                  BSYNC or guarded BRA: the compiler if-converted the
 *                  branch, and every warp issues both sides;
 *   branched       no path FFMA guarded, and a BSSY, BSYNC or guarded BRA:
 *                  a real branch, each side issued by the lanes that take it;
 *   unconditional  no path FFMA guarded and no branch: every lane issues
 *                  every path (compute both, then select);
 *   mixed          some path FFMAs guarded and some not;
 *   unknown        no disassembly (no opcodes to read);
 *   none           no path instructions.
 * Beside the verdict: the lanes the guarded path FFMAs issued with and the
 * lanes with their predicate on (per warp execution), and at the join (the
 * tail region where there is one, else the first instruction after the
 * paths) whether a BSYNC or WARPSYNC stands between the last path
 * instruction and it, and the lanes it ran with (32 when the warp met again
 * there, fewer when each group of lanes ran it on its own).
 *
 * A pure function of the listing: every writer (the document, the
 * transcript) calls it and gives the same answer.
 */
#ifndef DV_LISTING_SHAPE_H
#define DV_LISTING_SHAPE_H

#include <stdint.h>

#include "kernels/model/listing/listing.h"

#ifdef __cplusplus
extern "C" {
#endif

enum listing_branching {
    LISTING_SHAPE_NONE = 0,
    LISTING_SHAPE_PREDICATED,
    LISTING_SHAPE_BRANCHED,
    LISTING_SHAPE_UNCONDITIONAL,
    LISTING_SHAPE_MIXED,
    LISTING_SHAPE_UNKNOWN
};

/* "none", "predicated", "branched", "unconditional", "mixed", "unknown". */
const char *listing_branching_name(enum listing_branching b);

struct listing_shape {
    enum listing_branching branching;
    /* FFMA instructions on the paths, and those guarded */
    unsigned path_ffma, guarded_ffma;
    /* BSSY, BSYNC and guarded BRA in the window (above) */
    unsigned window_bssy, window_bsync, window_guarded_bra;
    /* BSSY, BSYNC and WARPSYNC in the whole function */
    unsigned bssy, bsync, warpsync;
    /* the path FFMAs' lanes per warp execution */
    double path_lanes;
    /* the guarded ones' lanes, issued and on (NaN: none) */
    double guarded_lanes, guarded_lanes_on;
    /* an instruction after the paths */
    int has_join;
    /* the tail's first instruction, or the first after the paths */
    uint32_t join_pc;
    /* the join is a tail region's */
    int join_is_tail;
    /* a BSYNC / WARPSYNC between the paths and the join */
    int sync_at_join;
    /* the tail's lanes per execution, or the first instruction's after the
     * paths (NaN: never run) */
    double join_lanes;
    /* one line saying all of it */
    char text[320];
};

/* The shape of `l` into `s` (see the top). */
void listing_shape(const struct listing *l, struct listing_shape *s);

#ifdef __cplusplus
}
#endif

#endif /* DV_LISTING_SHAPE_H */
