/* scenario_table.c -- the scenarios as data: the worked cases C1.. of the
 * lesson "Worked examples — Warp divergence penalties" and the experiments
 * of the compiler-and-warp suite, and the names that select them
 * (scenario.h says what every field means; scenario.c arranges, models and
 * checks them).
 *
 * The worked cases (set SCENARIO_SET_WORKED, "all") are each a 32-lane
 * pattern and its arrangements. The experiments (SCENARIO_SET_WARP,
 * "compiler-and-warp"; the full predication map SCENARIO_SET_MAP,
 * "predication-map") are tables whose rows vary one thing each, the one
 * variable of the experiment:
 *   k-paths        k equal paths by lane % k (split) and by warp % k
 *                  (aligned), k = 1, 2, 3, 4, 8, 16, 32, in the k-way
 *                  kernel; the split rows are the points of T(k) = a + b k;
 *   predication    an if/else of LA and LB FMAs per iteration, lane-split
 *                  against warp-split, one instantiation per point: the
 *                  diagonal LA = LB = 1..8 nightly, every LA x LB in 1..8 in
 *                  the map's eight tables (one per LA);
 *   branchless     the same two sides as a branch and as compute-both-
 *                  then-select, warp-aligned and split;
 *   reconvergence  an if/else, a loop with break and an early return, each
 *                  with and without __syncwarp() at the join, followed by a
 *                  tail every lane that reaches the join runs.
 * Rows compared with one another do the same work per thread (scenario.c
 * checks it: `comparable`); a row's ratio is against the row it names
 * (`versus`), else the table's baseline.
 */
#include "kernels/model/model/scenario_table.h"

#include "kernels/model/model/intensity.h"

#include <stdio.h>
#include <string.h>

/* The table is laid out by hand (clang-format off): each lane pattern as
 * two rows of 16 lanes, the fields that belong together on one line. */
/* clang-format off */

/* A row: its stable name, how it assigns work in the lesson's words, its layout. */
#define ROW(id, text, how) {.name = (id), .label = (text), .layout = (how)}
#define ROW_LANES(text) ROW("lanes", text, SCENARIO_LAYOUT_LANES)
#define ROW_SORTED ROW("sorted", "same work sorted by path over the grid: one path per warp", SCENARIO_LAYOUT_SORTED)
#define ROW_IDEAL \
    ROW("ideal", "every lane on its warp's longest path (the worked examples' ideal time)", SCENARIO_LAYOUT_IDEAL)


/* The experiments' rows. K_LEN: each of the k paths, in units. */
#define K_LEN 2
#define K_SPLIT(kk)                                                                                                    \
    {.name = "split-k" #kk, .label = "path = lane % " #kk ": " #kk " paths in every warp",                            \
     .layout = SCENARIO_LAYOUT_LANE_MOD, .k = (kk), .fit = 1}
#define K_ALIGNED(kk)                                                                                                  \
    {.name = "aligned-k" #kk, .label = "path = warp % " #kk ": one path per warp",                                    \
     .layout = SCENARIO_LAYOUT_WARP_MOD, .k = (kk)}
/* A point of the predication map: side A (the `if`) of a FMAs, side B of
 * b, lane-split against warp-split. */
#define MAP_POINT(a, b)                                                                                                \
    {.name = #a "x" #b "-lanes", .label = "sides " #a "|" #b " FMAs, side = (idx + j) % 2: both sides in every warp", \
     .layout = SCENARIO_LAYOUT_LANES, .la = (a), .lb = (b), .versus = #a "x" #b "-warps"},                            \
    {.name = #a "x" #b "-warps", .label = "sides " #a "|" #b " FMAs, side = (idx / 32 + j) % 2: whole warps",         \
     .layout = SCENARIO_LAYOUT_WARPS, .la = (a), .lb = (b), .versus = #a "x" #b "-warps"}
#define MAP_TABLE(a)                                                                                                   \
    {                                                                                                                  \
        .name = "predication-la" #a, .cell = "X2", .kind = SCENARIO_SHORT, .set = SCENARIO_SET_MAP,                   \
        .experiment = "predication", .short_divisor = 8,                                                              \
        .title = "Predicated or branched: side A of " #a " FMAs against side B of 1..8",                              \
        .npaths = 2, .lengths = {1, a},                                                                                \
        .lane_work = {0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1}, \
        .nrows = 16,                                                                                                   \
        .rows = {MAP_POINT(a, 1), MAP_POINT(a, 2), MAP_POINT(a, 3), MAP_POINT(a, 4),                                   \
                 MAP_POINT(a, 5), MAP_POINT(a, 6), MAP_POINT(a, 7), MAP_POINT(a, 8)},                                  \
        .baseline = 1, .predicated = 0,                                                                                \
        .note = "each point's lane-split row against its warp-split row (the map's row LA = " #a ")",                 \
    }
#define PAIR_ROW(id, text, how, v, vs) {.name = (id), .label = (text), .layout = (how), .variant = (v), .versus = (vs)}
/* The loop rows' trip counts: 1 + lane % 4. */
static const uint8_t loop_trips[32] = {1, 2, 3, 4, 1, 2, 3, 4, 1, 2, 3, 4, 1, 2, 3, 4,
                                       1, 2, 3, 4, 1, 2, 3, 4, 1, 2, 3, 4, 1, 2, 3, 4};
#define LOOP_ROW(id, text, v, vs)                                                                                      \
    {.name = (id), .label = (text), .layout = SCENARIO_LAYOUT_LANES, .variant = (v), .versus = (vs),                  \
     .lanes = loop_trips}

/* ---- arithmetic intensity (intensity.h): a point is F FMAs per L loads,
 * path = lane & 1 (the lesson's lane-split predicate) against
 * path = warp & 1 (its warp-aligned one); the two ridge rows run one path
 * on every lane. */
static const uint8_t mem_one_path[32] = {0};
#define MEM_POINT(v, f, l)                                                                                             \
    {.name = "f" #f "-l" #l "-lanes", .label = #f " FMAs per " #l " loads a path, path = lane & 1: both in every warp", \
     .layout = SCENARIO_LAYOUT_LANES, .la = (f), .lb = (l), .variant = (v), .versus = "f" #f "-l" #l "-warps"},      \
    {.name = "f" #f "-l" #l "-warps", .label = #f " FMAs per " #l " loads a path, path = warp & 1: one per warp",     \
     .layout = SCENARIO_LAYOUT_WARPS, .la = (f), .lb = (l), .variant = (v), .versus = "f" #f "-l" #l "-warps"}
#define MEM_RIDGES                                                                                                     \
    {.name = "ridge-bandwidth", .label = "every thread streams its 64 words, one FMA: the bandwidth",                  \
     .layout = SCENARIO_LAYOUT_LANES, .variant = INTENSITY_RIDGE_BANDWIDTH, .versus = "ridge-bandwidth",             \
     .lanes = mem_one_path},                                                                                           \
    {.name = "ridge-fma", .label = "16384 FMAs a thread, no load: the FMA rate", .layout = SCENARIO_LAYOUT_LANES,     \
     .variant = INTENSITY_RIDGE_FMA, .versus = "ridge-fma", .lanes = mem_one_path}
#define MEM_TABLE(id, which, v, what, n, ...)                                                                          \
    {                                                                                                                  \
        .name = (id), .cell = "X5", .kind = SCENARIO_MEM, .set = (which), .experiment = "intensity",                  \
        .title = "Arithmetic intensity, " what ": F FMAs per L loads, lane-split against warp-aligned",               \
        .npaths = 2, .lengths = {1, 1}, .variant = (v),                                                                \
        .lane_work = {0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1}, \
        .nrows = (n), .rows = {MEM_RIDGES, __VA_ARGS__}, .baseline = 3, .predicated = 0,                              \
        .note = "each point's lane-split row against its warp-aligned row: about 2 where the paths' FMAs bound the " \
                "time, about 1 where the loads do (the memory stall overlaps the second path's issue)",              \
    }
/* ---- end arithmetic intensity ---- */

static const struct scenario scenarios[] = {
    {
        .name = "even-2way", .cell = "C1", .kind = SCENARIO_KWAY,
        .title = "Even 2-way split, unequal paths (12 vs 9 units)",
        .npaths = 2, .lengths = {12, 9},
        .lane_work = {0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1,
                      0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1},
        .nrows = 3,
        .rows = {ROW_LANES("path = lane & 1: 16 lanes on A (12 units), 16 on B (9)"), ROW_SORTED, ROW_IDEAL},
        .baseline = 1, .predicated = 0,
        .note = "a split warp issues 12 + 9 = 21 units; max/sum = 12/21 = 57.1%, not 50%",
    },
    {
        .name = "uneven-1v31", .cell = "C2", .kind = SCENARIO_KWAY,
        .title = "Uneven split: 1 lane on 100 units, 31 on 50",
        .npaths = 2, .lengths = {100, 50},
        .lane_work = {0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
                      1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1},
        .nrows = 3,
        .rows = {ROW_LANES("lane 0 on A (100 units), lanes 1-31 on B (50)"), ROW_SORTED, ROW_IDEAL},
        .baseline = 1, .predicated = 0,
        .note = "one lane still costs its whole path: 100 + 50 = 150 units, 66.7%",
    },
    {
        .name = "zero-divergence", .cell = "C3", .kind = SCENARIO_KWAY,
        .title = "Zero divergence: every lane on B (9 units), A (12) untaken",
        .npaths = 2, .lengths = {12, 9},
        .lane_work = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
                      1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1},
        .nrows = 2,
        .rows = {ROW_LANES("every lane on B (9 units); path A is in the code, never taken"), ROW_SORTED},
        .baseline = 1, .predicated = 0,
        .note = "an untaken path is free: 9/9 = 100%; both rows are the same arrangement",
    },
    {
        .name = "full-divergence", .cell = "C4", .kind = SCENARIO_KWAY,
        .title = "Full divergence: 32 distinct paths of 7 units",
        .npaths = 32, .lengths = {7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7,
                                  7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7},
        .lane_work = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
                      16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31},
        .nrows = 3,
        .rows = {ROW_LANES("path = lane: every lane its own 7-unit path"), ROW_SORTED, ROW_IDEAL},
        .baseline = 1, .predicated = 0,
        .note = "32 serial paths: 7/224 = 1/32 = 3.125%, the floor for a warp",
    },
    {
        .name = "elseif-4way", .cell = "C5", .kind = SCENARIO_KWAY,
        .title = "4-way else-if chain: 20, 30, 25, 5 units over 8, 10, 8, 6 lanes",
        .npaths = 4, .lengths = {20, 30, 25, 5},
        .lane_work = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1,
                      1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3},
        .nrows = 3,
        .rows = {ROW_LANES("lanes 0-7 on 20 units, 8-17 on 30, 18-25 on 25, 26-31 on 5"), ROW_SORTED, ROW_IDEAL},
        .baseline = 1, .predicated = 0,
        .note = "four live paths: 30/80 = 37.5%",
    },
    {
        .name = "loop-divergence", .cell = "C6", .kind = SCENARIO_LOOP,
        .title = "Loop divergence: trip counts summing to 240, max 20 per warp",
        .npaths = 0, .lengths = {0},
        .lane_work = {20, 7, 6, 8, 3, 7, 10, 6, 7, 9, 6, 7, 12, 7, 8, 6,
                      7, 3, 7, 10, 6, 8, 7, 6, 9, 7, 8, 7, 6, 7, 6, 7},
        .nrows = 2,
        .rows = {ROW_LANES("per-lane trip counts (sum 240, max 20, two lanes at 3)"),
                 ROW("sorted", "same trip counts sorted over the grid: one count per warp", SCENARIO_LAYOUT_SORTED)},
        .baseline = 1, .predicated = 0,
        .note = "the warp loops max = 20 times: 240 / (32 * 20) = 37.5% lane utilization",
    },
    {
        .name = "nested-ifs", .cell = "C8", .kind = SCENARIO_KWAY,
        .title = "Nested ifs: 4 orthogonal paths of 6, 8, 5, 7 units",
        .npaths = 4, .lengths = {6, 8, 5, 7},
        /* path = 2 * (lane & 1) + ((lane >> 1) & 1): outer test on bit 0, inner on bit 1 */
        .lane_work = {0, 2, 1, 3, 0, 2, 1, 3, 0, 2, 1, 3, 0, 2, 1, 3,
                      0, 2, 1, 3, 0, 2, 1, 3, 0, 2, 1, 3, 0, 2, 1, 3},
        .nrows = 3,
        .rows = {ROW_LANES("outer if on lane & 1, inner if on lane & 2: 8 lanes per path"), ROW_SORTED, ROW_IDEAL},
        .baseline = 1, .predicated = 0,
        .note = "nesting multiplies paths: 8/26 = 30.8%",
    },
    {
        .name = "ray-materials", .cell = "C9", .kind = SCENARIO_KWAY,
        .title = "Ray-tracing materials: diffuse 12, metal 40, glass 60, emissive 4",
        .npaths = 4, .lengths = {12, 40, 60, 4},
        .lane_work = {0, 1, 3, 0, 2, 1, 0, 3, 1, 0, 2, 3, 0, 1, 0, 3,
                      2, 0, 1, 3, 0, 2, 1, 3, 0, 1, 2, 3, 0, 1, 2, 3},
        .nrows = 3,
        .rows = {ROW_LANES("unsorted hits: 10 diffuse, 8 metal, 6 glass, 8 emissive per warp"),
                 ROW("sorted", "hits sorted by material: one material per warp", SCENARIO_LAYOUT_SORTED),
                 ROW_IDEAL},
        .baseline = 1, .predicated = 0,
        .note = "unsorted 60/116 = 51.7%; sorted by material every warp is 100%",
    },
    {
        .name = "warp-realign", .cell = "C10", .kind = SCENARIO_KWAY,
        .title = "Warp-boundary re-alignment: idx % 2 against (idx / 32) % 2",
        .npaths = 2, .lengths = {10, 14},
        .lane_work = {0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1,
                      0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1},
        .nrows = 3,
        .rows = {ROW_LANES("idx % 2: X (10 units) on even lanes, Y (14) on odd"),
                 ROW("warps", "(idx / 32) % 2: whole warps on X or on Y", SCENARIO_LAYOUT_WARPS),
                 ROW_IDEAL},
        .baseline = 1, .predicated = 0,
        .note = "idx % 2 gives 14/24 = 58.3%; (idx / 32) % 2 gives 100%",
    },
    {
        .name = "short-predicated", .cell = "C7", .kind = SCENARIO_SHORT,
        .title = "Short if/else (2 vs 1 FMAs) that the compiler predicates",
        .npaths = 2, .lengths = {1, 2},
        .lane_work = {0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1,
                      0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1},
        .nrows = 2,
        .rows = {ROW("lanes", "side = (idx + j) % 2 on iteration j: both sides in every warp", SCENARIO_LAYOUT_LANES),
                 ROW("warps", "side = (idx / 32 + j) % 2: whole warps on one side", SCENARIO_LAYOUT_WARPS)},
        .baseline = 1, .predicated = 1,
        .note = "SASS: @P/@!P FFMA, no BSSY/BSYNC: predicated, every warp issues both sides (ratio 1.0; "
                "as a branch it would be 2.0)",
    },
    {
        .name = "short-branch", .cell = "C7", .kind = SCENARIO_SHORT,
        .title = "Short if/else (4 vs 3 FMAs) that stays a branch",
        .npaths = 2, .lengths = {3, 4},
        .lane_work = {0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1,
                      0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1},
        .nrows = 2,
        .rows = {ROW("lanes", "side = (idx + j) % 2 on iteration j: both sides in every warp", SCENARIO_LAYOUT_LANES),
                 ROW("warps", "side = (idx / 32 + j) % 2: whole warps on one side", SCENARIO_LAYOUT_WARPS)},
        .baseline = 1, .predicated = 0,
        .note = "SASS: BSSY / @P BRA / BSYNC per if/else: a real branch, a split warp issues 4 + 3, a "
                "uniform one 4 or 3 (ratio 2.0)",
    },

    /* ---- the compiler-and-warp experiments ---------------------------- */
    {
        .name = "k-paths", .cell = "X1", .kind = SCENARIO_KWAY, .set = SCENARIO_SET_WARP,
        .experiment = "k-paths",
        .title = "k equal paths in a warp: lane % k against warp % k",
        .npaths = 32, .lengths = {K_LEN, K_LEN, K_LEN, K_LEN, K_LEN, K_LEN, K_LEN, K_LEN,
                                  K_LEN, K_LEN, K_LEN, K_LEN, K_LEN, K_LEN, K_LEN, K_LEN,
                                  K_LEN, K_LEN, K_LEN, K_LEN, K_LEN, K_LEN, K_LEN, K_LEN,
                                  K_LEN, K_LEN, K_LEN, K_LEN, K_LEN, K_LEN, K_LEN, K_LEN},
        .nrows = 14,
        .rows = {K_SPLIT(1), K_SPLIT(2), K_SPLIT(3), K_SPLIT(4), K_SPLIT(8), K_SPLIT(16), K_SPLIT(32),
                 K_ALIGNED(1), K_ALIGNED(2), K_ALIGNED(3), K_ALIGNED(4), K_ALIGNED(8), K_ALIGNED(16), K_ALIGNED(32)},
        .baseline = 0, .predicated = 0,
        .note = "k paths of equal length: a split warp runs them one after the other, T(k) = a + b k; "
                "a warp-aligned one runs one",
    },
    {
        .name = "predication", .cell = "X2", .kind = SCENARIO_SHORT, .set = SCENARIO_SET_WARP,
        .experiment = "predication", .short_divisor = 8,
        .title = "Predicated or branched: an if/else of L and L FMAs, L = 1..8",
        .npaths = 2, .lengths = {1, 1},
        .lane_work = {0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1,
                      0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1},
        .nrows = 16,
        .rows = {MAP_POINT(1, 1), MAP_POINT(2, 2), MAP_POINT(3, 3), MAP_POINT(4, 4),
                 MAP_POINT(5, 5), MAP_POINT(6, 6), MAP_POINT(7, 7), MAP_POINT(8, 8)},
        .baseline = 1, .predicated = 0,
        .note = "each point's lane-split row against its warp-split row: about 2 where the if/else stays a "
                "branch, about 1 where the compiler predicated it",
    },
    MAP_TABLE(1), MAP_TABLE(2), MAP_TABLE(3), MAP_TABLE(4), MAP_TABLE(5), MAP_TABLE(6), MAP_TABLE(7), MAP_TABLE(8),
    {
        .name = "branchless", .cell = "X3", .kind = SCENARIO_PAIR, .set = SCENARIO_SET_WARP,
        .experiment = "branchless",
        .title = "Branchless against branch: the same two sides as an if/else and as compute-both-then-select",
        .npaths = 2, .lengths = {4, 4, 0, 0},
        .lane_work = {0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1,
                      0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1},
        .nrows = 4,
        .rows = {PAIR_ROW("branch-warps", "if/else, side = warp & 1: whole warps on one side",
                          SCENARIO_LAYOUT_WARPS, SCENARIO_PAIR_BRANCH, NULL),
                 PAIR_ROW("branch-lanes", "if/else, side = lane & 1: both sides in every warp",
                          SCENARIO_LAYOUT_LANES, SCENARIO_PAIR_BRANCH, NULL),
                 PAIR_ROW("select-warps", "both sides computed, x = side ? B : A; side = warp & 1",
                          SCENARIO_LAYOUT_WARPS, SCENARIO_PAIR_SELECT, NULL),
                 PAIR_ROW("select-lanes", "both sides computed, x = side ? B : A; side = lane & 1",
                          SCENARIO_LAYOUT_LANES, SCENARIO_PAIR_SELECT, NULL)},
        .baseline = 0, .predicated = 0,
        .note = "compute-both-then-select issues both sides with every lane, split or not: as much as the split "
                "branch, twice the warp-aligned one",
    },
    {
        .name = "reconvergence", .cell = "X4", .kind = SCENARIO_PAIR, .set = SCENARIO_SET_WARP,
        .experiment = "reconvergence",
        .title = "Reconvergence: if/else, loop with break, early return, with and without __syncwarp()",
        .npaths = 2, .lengths = {2, 2, 2, 1},
        .lane_work = {0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1,
                      0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1},
        .nrows = 6,
        .rows = {PAIR_ROW("ifelse", "if (lane & 1) B else A; join; tail",
                          SCENARIO_LAYOUT_LANES, SCENARIO_PAIR_IFELSE, "ifelse"),
                 PAIR_ROW("ifelse-sync", "if (lane & 1) B else A; __syncwarp(); tail",
                          SCENARIO_LAYOUT_LANES, SCENARIO_PAIR_IFELSE_SYNC, "ifelse"),
                 LOOP_ROW("loop-break", "for (;;) { body; if (++i >= 1 + lane % 4) break; } join; tail",
                          SCENARIO_PAIR_LOOP_BREAK, "loop-break"),
                 LOOP_ROW("loop-break-sync", "for (;;) { body; if (++i >= 1 + lane % 4) break; } __syncwarp(); tail",
                          SCENARIO_PAIR_LOOP_BREAK_SYNC, "loop-break"),
                 PAIR_ROW("early-return", "if (!(lane & 1)) { A; return; } B; join; tail",
                          SCENARIO_LAYOUT_LANES, SCENARIO_PAIR_EARLY_RETURN, "early-return"),
                 PAIR_ROW("early-return-sync", "if (!(lane & 1)) { A; return; } B; __syncwarp(); tail",
                          SCENARIO_LAYOUT_LANES, SCENARIO_PAIR_EARLY_RETURN_SYNC, "early-return")},
        .baseline = 0, .predicated = 0,
        .note = "a warp that does not meet again at the join runs the tail once per group of lanes: the "
                "__syncwarp() rows against those without say whether this GPU and compiler reconverge anyway",
    },
    /* ---- arithmetic intensity (intensity.h) --------------------------- */
    MEM_TABLE("intensity-stream", SCENARIO_SET_INTENSITY, INTENSITY_STREAM, "streaming coalesced loads",
              14, MEM_POINT(INTENSITY_STREAM, 1, 16), MEM_POINT(INTENSITY_STREAM, 1, 2),
              MEM_POINT(INTENSITY_STREAM, 4, 1), MEM_POINT(INTENSITY_STREAM, 16, 1),
              MEM_POINT(INTENSITY_STREAM, 64, 1), MEM_POINT(INTENSITY_STREAM, 256, 1)),
    MEM_TABLE("intensity-chase", SCENARIO_SET_INTENSITY, INTENSITY_CHASE, "dependent loads (a pointer chase)",
              14, MEM_POINT(INTENSITY_CHASE, 1, 16), MEM_POINT(INTENSITY_CHASE, 1, 2),
              MEM_POINT(INTENSITY_CHASE, 4, 1), MEM_POINT(INTENSITY_CHASE, 16, 1),
              MEM_POINT(INTENSITY_CHASE, 64, 1), MEM_POINT(INTENSITY_CHASE, 256, 1)),
    MEM_TABLE("intensity-stream-fine", SCENARIO_SET_INTENSITY_FULL, INTENSITY_STREAM,
              "streaming coalesced loads, the points between", 16,
              MEM_POINT(INTENSITY_STREAM, 1, 8), MEM_POINT(INTENSITY_STREAM, 1, 4), MEM_POINT(INTENSITY_STREAM, 1, 1),
              MEM_POINT(INTENSITY_STREAM, 2, 1), MEM_POINT(INTENSITY_STREAM, 8, 1), MEM_POINT(INTENSITY_STREAM, 32, 1),
              MEM_POINT(INTENSITY_STREAM, 128, 1)),
    MEM_TABLE("intensity-chase-fine", SCENARIO_SET_INTENSITY_FULL, INTENSITY_CHASE,
              "dependent loads (a pointer chase), the points between", 16,
              MEM_POINT(INTENSITY_CHASE, 1, 8), MEM_POINT(INTENSITY_CHASE, 1, 4), MEM_POINT(INTENSITY_CHASE, 1, 1),
              MEM_POINT(INTENSITY_CHASE, 2, 1), MEM_POINT(INTENSITY_CHASE, 8, 1), MEM_POINT(INTENSITY_CHASE, 32, 1),
              MEM_POINT(INTENSITY_CHASE, 128, 1)),
    /* ---- end arithmetic intensity ---- */
};

/* clang-format on */
#undef ROW_IDEAL
#undef ROW_SORTED
#undef ROW_LANES
#undef ROW
#undef K_SPLIT
#undef K_ALIGNED
#undef MAP_POINT
#undef MAP_TABLE
#undef PAIR_ROW
#undef LOOP_ROW
#undef MEM_POINT
#undef MEM_RIDGES
#undef MEM_TABLE

#define NSCENARIOS (sizeof scenarios / sizeof scenarios[0])

static const char *const names[] = {
    "even-2way",       "uneven-1v31",     "zero-divergence", "full-divergence",  "elseif-4way",     "loop-divergence",
    "nested-ifs",      "ray-materials",   "warp-realign",    "short-predicated", "short-branch",    "k-paths",
    "predication",     "predication-la1", "predication-la2", "predication-la3",  "predication-la4", "predication-la5",
    "predication-la6", "predication-la7", "predication-la8", "branchless",       "reconvergence",
    /* ---- arithmetic intensity ---- */
    "intensity-stream", "intensity-chase", "intensity-stream-fine", "intensity-chase-fine",
    /* ---- end arithmetic intensity ---- */
};
_Static_assert(sizeof names / sizeof names[0] == NSCENARIOS, "one name per scenario, in table order");

const char *const *scenario_names(size_t *n) {
    if (n) *n = NSCENARIOS;
    return names;
}

const struct scenario *scenario_find(const char *name) {
    if (!name) return NULL;
    for (size_t i = 0; i < NSCENARIOS; i++)
        if (strcmp(scenarios[i].name, name) == 0) return &scenarios[i];
    return NULL;
}

const struct scenario *scenario_get(size_t i) { return i < NSCENARIOS ? &scenarios[i] : NULL; }

/* A case id ("C7", "c7", "X2") names every scenario of that cell. */
static int is_cell(const struct scenario *s, const char *want) {
    return s->cell[0] && (want[0] == s->cell[0] || want[0] == s->cell[0] + ('a' - 'A')) && want[1] != '\0' &&
           strcmp(s->cell + 1, want + 1) == 0;
}

/* The name that selects each set. */
static const char *const set_names[] = {
    [SCENARIO_SET_WORKED] = "all", [SCENARIO_SET_WARP] = "compiler-and-warp", [SCENARIO_SET_MAP] = "predication-map",
    /* ---- arithmetic intensity ---- */
    [SCENARIO_SET_INTENSITY] = "arithmetic-intensity", [SCENARIO_SET_INTENSITY_FULL] = "arithmetic-intensity-full",
    /* ---- end arithmetic intensity ---- */
};

size_t scenario_names_text(char *buf, size_t len) {
    size_t at = 0;
    if (len) buf[0] = '\0';
    for (size_t i = 0; i < NSCENARIOS; i++) {
        if (scenarios[i].set != SCENARIO_SET_WORKED) continue;
        int n = snprintf(at < len ? buf + at : NULL, at < len ? len - at : 0, "%s%s (%s)", at ? ", " : "",
                         scenarios[i].name, scenarios[i].cell);
        if (n > 0) at += (size_t)n;
    }
    return at;
}

const char *scenario_set_name(enum scenario_set set) {
    return (unsigned)set < sizeof set_names / sizeof set_names[0] ? set_names[set] : "";
}

int scenario_select(const char *want, const struct scenario **out, size_t *n, char *err) {
    *n = 0;
    if (!want || !want[0]) want = "all";
    int set = -1;
    for (unsigned k = 0; k < sizeof set_names / sizeof set_names[0]; k++)
        if (strcmp(want, set_names[k]) == 0) set = (int)k;
    for (size_t i = 0; i < NSCENARIOS && *n < SCENARIO_MAX_SELECTED; i++)
        if ((int)scenarios[i].set == set || strcmp(scenarios[i].name, want) == 0 || is_cell(&scenarios[i], want) ||
            /* arithmetic intensity: the full sweep holds the nightly tables too */
            (set == SCENARIO_SET_INTENSITY_FULL && scenarios[i].set == SCENARIO_SET_INTENSITY))
            out[(*n)++] = &scenarios[i];
    if (*n) return 0;
    char worked[300];
    scenario_names_text(worked, sizeof worked);
    dv_seterr(err,
              "unknown name '%.40s'; known: all, %s; compiler-and-warp (k-paths X1, predication X2, branchless X3, "
              "reconvergence X4); predication-map (predication-la1 .. predication-la8); arithmetic-intensity "
              "(intensity-stream, intensity-chase X5); arithmetic-intensity-full (and intensity-stream-fine, "
              "intensity-chase-fine); data-sort (data-sort-uniform, -zipf, -tiles, -presorted)",
              want, worked);
    return -1;
}

unsigned scenario_rows(const char *want) {
    const struct scenario *list[SCENARIO_MAX_SELECTED];
    size_t n = 0;
    char err[ERR_LEN];
    unsigned rows = 0;
    if (scenario_select(want, list, &n, err) != 0) return 0;
    for (size_t i = 0; i < n; i++) rows += list[i]->nrows;
    return rows;
}

int scenario_plan(const struct dv_options *o, struct dv_report *r, const char **field, char *err) {
    const struct scenario *list[SCENARIO_MAX_SELECTED];
    size_t count = 0;
    const struct dv_geometry g = scenario_grid(o);
    const unsigned blocks = g.blocks, bx = g.block_x, by = g.block_y;
    char why[ERR_LEN];

    if (field) *field = "";
    if (scenario_select(o->scenario, list, &count, why) != 0) {
        dv_seterr(err, "scenario: %s", why);
        if (field) *field = "scenario";
        return -1;
    }
    if (r->ntables + count > DV_MAX_TABLES) {
        dv_seterr(err, "scenario: %zu tables do not fit (%u of %d used)", count, r->ntables, DV_MAX_TABLES);
        if (field) *field = "scenario";
        return -1;
    }
    for (size_t i = 0; i < count; i++) {
        if (scenario_build_table(list[i], o, &r->tables[r->ntables], NULL, field, err) != 0) return -1;
        r->ntables++;
    }
    if (!r->config.experiment[0]) {
        struct dv_config *c = &r->config;
        snprintf(c->experiment, sizeof c->experiment, "scenario");
        c->blocks = blocks;
        c->blocks_auto = o->blocks == 0;
        if (c->blocks_auto)
            snprintf(c->blocks_reason, sizeof c->blocks_reason, "scenarios run the lesson's %u blocks",
                     DV_DEFAULT_BLOCKS);
        c->block_x = bx;
        c->block_y = by;
        c->threads_per_block = bx * by;
        c->threads = (unsigned long long)blocks * bx * by;
        c->iterations = o->iterations;
        c->fmas_per_launch = 0; /* differs per row: see each row's floor_fraction */
        c->bytes_per_launch = c->threads * (2u * sizeof(float) + 1u);
        c->max_noise = o->max_noise;
        c->budget_ms = o->budget_ms;
        c->min_samples = o->min_samples;
        c->max_samples = o->max_samples;
    }
    return 0;
}
