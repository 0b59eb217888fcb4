/* scenario.h -- the scenario suite: the worked cases C1.. of the lesson
 * "Worked examples — Warp divergence penalties" as named experiments, their
 * path-run model (the one of "Branch Divergence and Predication Performance
 * in Warps"), and the CPU reference.
 *
 * A scenario is a warp pattern: 32 per-lane work values (a path id for the
 * k-way kernel, a trip count for the loop kernel, a side bit for the short
 * if/else kernel), path lengths, and the rows to measure. Every row is an
 * arrangement of work over the whole grid (enum scenario_layout):
 *
 *   LANES   the pattern replicated in every warp: lane l gets lane_work[l];
 *           the divergent arrangement the worked case describes;
 *   SORTED  the very same multiset of per-thread work over the grid, sorted
 *           by work value in thread order, so whole warps share one value
 *           (the warp-uniform version doing the same work);
 *   WARPS   warp w of the grid gets lane_work[w % 32] on every lane: the
 *           (idx / 32) % 2 rewrite of the re-alignment case;
 *   IDEAL   every lane of a LANES warp on the longest path present in that
 *           warp: the worked examples' "ideal time" (more work, not
 *           comparable; k-way scenarios only).
 *
 * Model (per warp, warps cut from consecutive linear thread ids of a block):
 *   k-way:  issued = sum over the distinct paths present of their length in
 *           units; ideal = the longest of them. The grid's issued work is the
 *           sum over its warps, so a warp-uniform arrangement issues the sum
 *           over warps of each warp's single path length.
 *   loop:   issued = the warp's largest trip count (warp-iterations of a
 *           one-unit body); useful lane-iterations = sum of the trip counts,
 *           issued lane-iterations = lanes * largest.
 *   short:  per iteration j a thread takes side (pattern >> (j % 32)) & 1;
 *           issued = sum over iterations of the side lengths (FMAs) present,
 *           or of both sides on every iteration when the compiler predicates
 *           the if/else (struct scenario.predicated, read from the SASS).
 *   predicted_ratio      = issued(row) / issued(baseline row), the time ratio
 *                          the model expects against the same-work baseline;
 *   predicted_efficiency = the worked examples' figure: sum of ideal / sum of issued
 *                          (max/sum per warp) for k-way branches, useful /
 *                          issued lane-iterations for loops; for the short
 *                          if/else (the worked case gives no efficiency there, only
 *                          T_pred = T_A + T_B against T_A + T_B + O) the
 *                          same-work figure issued(baseline) / issued(row).
 *
 * The helpers at the top compile as C11 and as CUDA (DV_HD), so the kernels
 * and the CPU reference use the very same constants.
 */
#ifndef DV_SCENARIO_H
#define DV_SCENARIO_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include "kernels/model/model/chain.h" /* dv_input_value: the input every table reads */
#include "kernels/model/model/types.h"

#define SCENARIO_MAX_PATHS 32u
#define SCENARIO_MAX_ROWS 16u    /* DV_MAX_ROWS */
#define SCENARIO_CHUNK 32u       /* FMAs per unrolled chunk; a unit is a multiple */
#define SCENARIO_DEFAULT_UNIT 512u /* FMAs per unit at the default 4096 iterations */
#define SCENARIO_UNIT_DIVISOR 8u   /* a unit is iterations / 8 FMAs: long enough that
                                      launch and tail costs stay a small share */

/* k-way path p: x = fma(x, a, b) with a = 1 - (64 + p) / 2^16 and
 * b = (p + 1)(64 + p) / 2^22, both exact in binary32. The fixed point
 * b / (1 - a) = (p + 1) / 64 differs per path, so a thread that ran the wrong
 * path cannot pass the check, and the constants differ per path, so the
 * compiler cannot merge two paths into one. */
DV_HD float scenario_kway_a(unsigned p) {
    return 1.0f - (float)(64u + p) / 65536.0f;
}
DV_HD float scenario_kway_b(unsigned p) {
    return (float)((p + 1u) * (64u + p)) / 4194304.0f;
}

/* Loop body constants (fixed point 0.375). */
#define SCENARIO_LOOP_A (1.0f - 96.0f / 65536.0f)
#define SCENARIO_LOOP_B (0.375f * 96.0f / 65536.0f)

/* Short if/else: side 1 (path A, the `if`) runs `len` FMAs, step k
 * (1-based) x = fma(x, 1 - 2^(k-12), 2^(k-13)), fixed point 0.5; side 0
 * (path B, the `else`) `len` FMAs, step k x = fma(x, 1 - 5 * 2^(k-14),
 * 3 * 2^(k-14)), fixed point 0.6: every constant exact in binary32, each
 * step's its own, so the compiler can merge no two steps and no two sides.
 * A kernel instantiates the sides' lengths as template constants (the
 * compiler must see them: they decide whether it predicates the if/else),
 * from 1 to SCENARIO_SHORT_MAX each: the worked case C7's 2|1 and 4|3 and
 * the predication map's LA x LB (see SCENARIOS.md). */
#define SCENARIO_SHORT_MAX 8u
DV_HD float scenario_short_a(unsigned side, unsigned k) {
    return side ? 1.0f - (float)(1u << k) / 4096.0f : 1.0f - (float)(5u << k) / 16384.0f;
}
DV_HD float scenario_short_b(unsigned side, unsigned k) {
    return side ? (float)(1u << k) / 8192.0f : (float)(3u << k) / 16384.0f;
}
DV_HD float scenario_short_side(float x, unsigned side, unsigned len) {
    for (unsigned k = 1; k <= len; k++) x = fmaf(x, scenario_short_a(side, k), scenario_short_b(side, k));
    return x;
}

/* The per-thread pattern word of the short kernel for work value `s` of a
 * layout: the thread alternates sides every iteration, on side 1 at even
 * iterations for s = 0 (0x55555555) and at odd ones for s = 1, so threads
 * with different s take different sides on every iteration. */
DV_HD uint32_t scenario_short_pattern(unsigned s) {
    return s ? 0xAAAAAAAAu : 0x55555555u;
}

/* The pair kernel's variants (scenario kind SCENARIO_PAIR): one if/else of
 * two equal FMA chains, path A (k-way path 0's constants) for work value 0
 * and path B (path 1's) for 1, written as
 *   BRANCH        if (w == 0) A else B;
 *   SELECT        both chains, interleaved, by every lane, then
 *                 x = w ? B : A (branchless: compute both, select one);
 * and, for reconvergence, each followed at the join by a tail of its own
 * (k-way path 2's constants) that every lane that reaches the join runs:
 *   IFELSE        if (w == 0) A else B; join; tail
 *   LOOP_BREAK    for (;;) { one unit of the loop body; if (++i >= w) break; }
 *                 join; tail (w is the lane's trip count)
 *   EARLY_RETURN  if (w == 0) { A; store; return; } B; join; tail
 * each also with `__syncwarp()` at the join (the _SYNC variants: over the
 * lanes that reach it). A warp that has not reconverged at the join runs
 * the tail once per group of lanes, so the tail's time and lanes say
 * whether it did. */
enum scenario_pair_variant {
    SCENARIO_PAIR_BRANCH = 0,
    SCENARIO_PAIR_SELECT,
    SCENARIO_PAIR_IFELSE,
    SCENARIO_PAIR_IFELSE_SYNC,
    SCENARIO_PAIR_LOOP_BREAK,
    SCENARIO_PAIR_LOOP_BREAK_SYNC,
    SCENARIO_PAIR_EARLY_RETURN,
    SCENARIO_PAIR_EARLY_RETURN_SYNC,
    SCENARIO_PAIR_VARIANTS
};

/* Whether pair variant `v` has a tail after its join (the reconvergence
 * variants), a __syncwarp() at the join, a loop. */
DV_HD bool scenario_pair_has_tail(unsigned v) { return v >= SCENARIO_PAIR_IFELSE; }
DV_HD bool scenario_pair_syncs(unsigned v) {
    return v == SCENARIO_PAIR_IFELSE_SYNC || v == SCENARIO_PAIR_LOOP_BREAK_SYNC || v == SCENARIO_PAIR_EARLY_RETURN_SYNC;
}
DV_HD bool scenario_pair_loops(unsigned v) {
    return v == SCENARIO_PAIR_LOOP_BREAK || v == SCENARIO_PAIR_LOOP_BREAK_SYNC;
}
DV_HD bool scenario_pair_returns(unsigned v) {
    return v == SCENARIO_PAIR_EARLY_RETURN || v == SCENARIO_PAIR_EARLY_RETURN_SYNC;
}

#ifdef __cplusplus
extern "C" {
#endif

enum scenario_kind {
    SCENARIO_KWAY = 0, /* switch over up to 32 FMA-chain paths          */
    SCENARIO_LOOP,     /* per-thread trip count, one-unit body          */
    SCENARIO_SHORT,    /* tiny if/else per iteration (may be predicated) */
    SCENARIO_PAIR,     /* one if/else of two chains, and its variants    */
    /* ---- arithmetic intensity ---- */
    SCENARIO_MEM       /* paths of F FMAs per L loads (intensity.h): the
                          variant is enum intensity_variant, lengths[0] F,
                          lengths[1] L                                  */
    /* ---- end arithmetic intensity ---- */
};

enum scenario_layout {
    SCENARIO_LAYOUT_LANES = 0,
    SCENARIO_LAYOUT_SORTED,
    SCENARIO_LAYOUT_WARPS,
    SCENARIO_LAYOUT_IDEAL,
    SCENARIO_LAYOUT_LANE_MOD, /* k-way: lane l on path l % k, k paths in every warp */
    SCENARIO_LAYOUT_WARP_MOD  /* k-way: warp w of the grid on path w % k, one a warp */
};

/* Which tables a name selects: the worked cases ("all"), the
 * compiler-and-warp experiments ("compiler-and-warp"), the full
 * predication map ("predication-map"). */
enum scenario_set {
    SCENARIO_SET_WORKED = 0,
    SCENARIO_SET_WARP,
    SCENARIO_SET_MAP,
    /* ---- arithmetic intensity: the nightly tables ("arithmetic-intensity")
     * and the finer points only the full sweep runs
     * ("arithmetic-intensity-full", which also selects the nightly ones) */
    SCENARIO_SET_INTENSITY,
    SCENARIO_SET_INTENSITY_FULL,
    /* ---- end arithmetic intensity ---- */
};

/* A row: what it assigns and, for the experiments, the one thing it varies. */
struct scenario_row_def {
    const char *name;   /* stable row name: "lanes", "sorted", ...      */
    const char *label;  /* how the row assigns work, in the lesson's words */
    enum scenario_layout layout;
    unsigned k;           /* LANE_MOD / WARP_MOD: the paths (1..32)         */
    unsigned la, lb;      /* SHORT: side A's (side 1) and side B's (side 0)
                            FMAs; 0: the scenario's lengths; MEM: F
                            FMAs per L loads (la F, lb L)              */
    unsigned variant;     /* PAIR: enum scenario_pair_variant; MEM: enum
                             intensity_variant                          */
    const char *versus;   /* the row its ratio is against; NULL: the table's
                            baseline; its own name: none (it is its own)  */
    int fit;              /* 1: a point of the table's fit T = a + b k     */
    const uint8_t *lanes; /* the row's own 32-lane pattern; NULL: the
                            scenario's lane_work                        */
};

struct scenario {
    const char *name;   /* stable id: "even-2way"                       */
    const char *title;
    const char *cell; /* the worked case: "C1" ... ("X1".. an experiment) */
    enum scenario_kind kind;
    unsigned npaths;    /* k-way paths / short sides                    */
    unsigned lengths[SCENARIO_MAX_PATHS]; /* units (k-way); FMAs (short:
                           [0] side 0 = B, [1] side 1 = A); units (pair:
                           [0] A, [1] B, [2] the tail, [3] the loop body) */
    uint8_t lane_work[32];/* path id, trip count or side bit per lane   */
    unsigned nrows;
    struct scenario_row_def rows[SCENARIO_MAX_ROWS];
    unsigned baseline;  /* index of the same-work warp-uniform row      */
    int predicated;     /* short: SASS predicates both sides, so every
                           warp issues both on every iteration          */
    const char *note;   /* what the scenario shows                      */
    enum scenario_set set;
    const char *experiment; /* "k-paths", "predication", "branchless",
                               "reconvergence"; NULL for a worked case  */
    unsigned short_divisor; /* short: the request's iterations / this (0: 1) */
    /* Set for one row by scenario_row() (0 in the table): */
    unsigned k, variant;
};

/* The scenario as row `row` of `s` runs it, into *out: `s` with the row's
 * own side lengths (short), lane pattern, k and variant. Every function
 * below that models, assigns, launches or checks a row takes this. */
void scenario_row(const struct scenario *s, unsigned row, struct scenario *out);

/* The FMAs a thread with work value `w` of row scenario `s` (scenario_row())
 * runs, its own work: what `comparable` compares and the floor counts. */
unsigned long long scenario_thread_fmas(const struct scenario *s, unsigned w, unsigned unit_fmas, unsigned short_iters);

/* The model of one row over a whole grid. */
struct scenario_model {
    unsigned long long issued;       /* units / warp-iterations / FMA-runs */
    unsigned long long ideal;        /* sum over warps of the longest path */
    unsigned long long useful_lanes; /* lane-work actually needed          */
    unsigned long long issued_lanes; /* lanes * issued, per warp           */
    unsigned long long thread_fmas;  /* FMAs the threads need (their own)  */
    unsigned long long hist[256];    /* threads per work value             */
    double efficiency;               /* the worked examples' figure         */
};

/* The grid every scenario table of `o` runs: o's, with blocks 0 ("auto") as
 * the lesson's DV_DEFAULT_BLOCKS (scenarios choose no grid on the GPU),
 * block_x 0 as DV_DEFAULT_BLOCK_X and block_y 0 as 1. */
struct dv_geometry scenario_grid(const struct dv_options *o);

/* FMAs per unit for options `o`: iterations / 8, rounded down to a multiple
 * of SCENARIO_CHUNK, at least SCENARIO_CHUNK (64 at the default 4096). */
unsigned scenario_unit_fmas(const struct dv_options *o);

/* Iterations of the short kernel of `s` for `o`: o->iterations over the
 * scenario's short_divisor, rounded up to a multiple of 32 (each thread's
 * pattern word covers 32 iterations). */
unsigned scenario_short_iterations(const struct scenario *s, const struct dv_options *o);

/* How often a thread of a row of `s` evaluates its branch under `o`: every
 * iteration of the short if/else kernel, once for the k-way switch and the
 * loop (whose trips the witness counts as runs). What the testimony divides
 * its per-block figures by. */
unsigned scenario_evaluations(const struct scenario *s, const struct dv_options *o);

/* Fills work[0..threads) for row layout `layout` of `s` on grid `g`
 * (threads = blocks * block_x * block_y, linear ids, warps of 32 consecutive
 * linear ids per block). Values are path ids, trip counts or side bits.
 * Returns 0, or -1 with `err` for an unknown layout. */
int scenario_assign(const struct scenario *s, enum scenario_layout layout, unsigned blocks, unsigned threads_per_block,
                    uint8_t *work, char *err);

/* The model of assignment `work` (from scenario_assign) into `m`, and the
 * analysis fields of `row` (warps_per_block, threads_per_block, warps_split,
 * threads_on_a = threads on the longest path / largest count, path_runs =
 * issued work per block). `short_iters` is used by SCENARIO_SHORT only,
 * `unit_fmas` for thread_fmas. */
void scenario_model(const struct scenario *s, const uint8_t *work, unsigned blocks,
                    unsigned threads_per_block, unsigned unit_fmas, unsigned short_iters,
                    struct scenario_model *m, struct dv_row *row);

/* The worked examples' efficiency of one warp's 32 lane values (what the tests check):
 * max/sum over the distinct paths for k-way, useful/issued lane-iterations
 * for loops, per-iteration max/sum over 32 iterations for short (both sides
 * every iteration when predicated). */
double scenario_warp_efficiency(const struct scenario *s, const uint8_t lanes[32]);

/* CPU reference of one thread: input x, work value w (path id, trip count or
 * side bit: the thread's pattern word is scenario_short_pattern(w)), FMAs
 * per unit, short-kernel iterations. */
float scenario_reference(const struct scenario *s, float x, unsigned w, unsigned unit_fmas,
                         unsigned short_iters);

/* Checks `got` (threads values) against the reference of assignment `work`,
 * computing each distinct (input value, work value) once. Fills `c`.
 * Returns 0, or -1 with `err` when out of memory. (The scenario_refs
 * functions below are the same check with the values kept for a table's
 * rows and computed on several threads.) */
int scenario_check(const struct scenario *s, const uint8_t *work, unsigned long long threads,
                   unsigned unit_fmas, unsigned short_iters, const float *got,
                   struct dv_check *c, char *err);

/* The reference values of one scenario table's rows: one per (input value,
 * work value), computed when a row first needs them and kept for the rows
 * after it that run the same scenario_row() (same kernel, lengths and
 * variant, units and iterations; only the work values' places differ): a
 * row whose differs needs values of its own. A value here is what
 * scenario_reference() gives, to the bit. */
#define SCENARIO_REFS_MAX_THREADS 16
struct scenario_refs {
    struct scenario s; /* the row's (scenario_row()), copied     */
    unsigned unit_fmas, short_iters;
    float *values;           /* [DV_INPUT_DISTINCT][256]            */
    unsigned char have[256]; /* work value w computed for every input */
};
int scenario_refs_init(struct scenario_refs *r, const struct scenario *s, unsigned unit_fmas, unsigned short_iters,
                       char *err);
void scenario_refs_free(struct scenario_refs *r);
/* Computes the values assignment `work` needs that are not kept yet, on up
 * to `nthreads` threads (at most SCENARIO_REFS_MAX_THREADS; the calling one
 * among them). */
void scenario_refs_fill(struct scenario_refs *r, const uint8_t *work, unsigned long long threads, unsigned nthreads);
/* `got` against the kept values of `work` (filled for it), into `c`. */
void scenario_refs_check(const struct scenario_refs *r, const uint8_t *work, unsigned long long threads,
                         const float *got, struct dv_check *c);

/* Stable kernel name of `s`: "kway", "loop" or "short-ifelse". */
const char *scenario_kernel_name(const struct scenario *s);

/* Builds the table of `s` for options `o` into `t` (cleared first): every
 * row's arrangement, analysis and model (measured fields NaN). When `works`
 * is not NULL, works[row] receives each row's assignment (malloc'd, one byte
 * per thread; the caller frees them). Returns 0, or -1 with `err` and
 * `*field` (may be NULL; as plan_report()): "blocks" or
 * "threads_per_block" for a bad geometry, "" otherwise. */
int scenario_build_table(const struct scenario *s, const struct dv_options *o, struct dv_table *t, uint8_t **works,
                         const char **field, char *err);

#ifdef __cplusplus
}
#endif

#endif /* DV_SCENARIO_H */
