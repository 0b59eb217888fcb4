/* findings.h -- what the compiler-and-warp experiments' tables say as a
 * whole, worked out once from a report's rows for every writer (the
 * document, the transcript, the Markdown): pure functions of the rows, so
 * every form gives the same figures.
 *
 * The predication map: each measured point (LA, LB) of the predication
 * tables (the diagonal's and the map's), with its lane-split row's time
 * ratio over its warp-split row and the SASS shape of the lane-split row's
 * own instructions (model/listing/listing_shape.h: predicated, branched,
 * ...; unknown where the row has no profile or no disassembly). The
 * boundary is said in the simplest rule that fits every point whose shape
 * is known: predicated exactly when LA + LB <= s, or exactly when
 * max(LA, LB) <= m, or exactly when LA <= a and LB <= b (the first that
 * fits; "no rule of these forms" when none does), and set against the
 * CUDA C Best Practices Guide's old
 * rule: the compiler replaces a branch with predicated instructions only
 * when the instructions the condition controls are at most 7 (4 when it
 * judges the branch unlikely to diverge), read here as LA + LB.
 */
#ifndef DV_FINDINGS_H
#define DV_FINDINGS_H

#include "kernels/model/listing/listing_shape.h"
#include "kernels/model/model/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The guide's old thresholds, and its words. */
#define FINDINGS_GUIDE_DIVERGENT 7
#define FINDINGS_GUIDE_OTHERWISE 4
#define FINDINGS_GUIDE_RULE                                                                                            \
    "the CUDA C Best Practices Guide's old rule: the compiler replaces a branch with predicated instructions only "    \
    "if the number of instructions controlled by the branch condition is less than or equal to a threshold, 7 if it "  \
    "determines the condition is likely to produce many divergent warps, otherwise 4"

#define FINDINGS_MAX_POINTS 72

struct findings_point {
    unsigned la, lb;
    enum listing_branching branching; /* of the lane-split row's SASS        */
    double ratio, lo, hi;             /* lane-split over warp-split, 95%     */
    double guarded_lanes, guarded_lanes_on;
    int table, row; /* the lane-split row                  */
};

struct findings_predication {
    unsigned npoints;
    struct findings_point points[FINDINGS_MAX_POINTS];
    unsigned predicated, branched, other, unknown;
    int sum_rule;             /* predicated exactly when LA + LB <= sum_rule; -1: no such rule fits */
    int max_rule;             /* predicated exactly when max(LA, LB) <= max_rule; -1 */
    int side_a, side_b;       /* predicated exactly when LA <= side_a and LB <= side_b (the smallest
                                 such pair); -1: none fits */
    unsigned guide_disagrees; /* known points where LA + LB <= 7 says otherwise than the SASS */
    char text[640];           /* the boundary in words, against the guide's rule */
};

/* The predication points of `r` (its tables of experiment "predication")
 * into `out`. Returns how many points (0: the report has none). */
unsigned findings_predication(const struct dv_report *r, struct findings_predication *out);

#ifdef __cplusplus
}
#endif

#endif /* DV_FINDINGS_H */
