/* types.h -- the data model: what a measurement is, as plain C structs,
 * and nothing else (STYLE.md 23). The units that plan
 * (model/model/plan.h), analyse (model/model/analysis.h,
 * model/model/scenario.h), check, testify, time (model/stats/) and write
 * (api/) a measurement depend on these types and not on each other.
 *
 * struct dv_options is a request (from the CLI, from JSON or from a suite);
 * struct dv_report is what comes back: the device and build, the
 * configuration that actually ran, and tables of rows. Each row carries its
 * analysis (computed from the shared predicate, no GPU) and, once measured,
 * its timing statistics, ratio, FMA-floor fraction and correctness check.
 * struct dv_geometry is a grid's shape, the one every analysis counts over.
 *
 * The structs are fixed-size on purpose: a report is one allocation, copied
 * and freed without walking pointers, and no json_t ever reaches this layer.
 * The one exception is a row's instruction profile (listing/listing.h): a
 * few hundred runs per row, present only when a job asks for it, so it lives
 * on the heap, owned by the report (experiment_report_free() frees it).
 *
 * The only functions here are the small inline ones that keep a value of
 * one of these types consistent (a count's min, max and total; a check's
 * first mismatch); everything that plans, derives or decides is elsewhere.
 */
#ifndef DV_TYPES_H
#define DV_TYPES_H

#include <stdint.h>
#include <string.h>

#include "kernels/base/status.h"
#include "kernels/model/model/predicate.h"

#ifdef __cplusplus
extern "C" {
#endif

struct listing; /* model/listing/listing.h */

#define DV_MAX_ROWS 16
#define DV_MAX_TABLES 16 /* "all" scenarios: one table each */
#define DV_MAX_WARNINGS 8
#define DV_SCENARIO_LEN 64

/* Lesson defaults. */
#define DV_DEFAULT_BLOCKS 4096u
#define DV_DEFAULT_BLOCK_X 256u
#define DV_DEFAULT_ITERATIONS 4096u
#define DV_DEFAULT_MAX_NOISE 0.005
#define DV_DEFAULT_BUDGET_MS 2000.0
#define DV_DEFAULT_MIN_SAMPLES 10u
#define DV_DEFAULT_MAX_SAMPLES 2000u
#define DV_DEFAULT_BASELINE "warp-parity"

/* Limits that validation enforces (api/options.c names them in errors). */
#define DV_MAX_BLOCKS 1048576u
#define DV_MAX_THREADS_PER_BLOCK 1024u
#define DV_MAX_ITERATIONS 1048576u
#define DV_MAX_BUDGET_MS 60000.0
#define DV_MAX_GRID_THREADS (1ull << 26) /* 64 Mi threads: 256 MiB per buffer */

enum dv_part { DV_PART_ALL = 0, DV_PART_1 = 1, DV_PART_2 = 2 };

/* Which kernel a row (and so its whole table) ran. */
enum dv_kernel {
    DV_KERNEL_BRANCH = 0, /* Part 1, the lesson's mixOneBranch: mode argument   */
    DV_KERNEL_MASK,       /* Part 1 for any predicate: the path bit from a mask */
    DV_KERNEL_NOBRANCH,   /* Part 2 baseline: the chain with no branch          */
    DV_KERNEL_PERITER,    /* Part 2: the branch inside the loop, phase = k      */
    DV_KERNEL_SCENARIO,   /* scenario suite: k-way paths and loop trip counts   */
    DV_NUM_KERNELS
};

/* Which fields a request named (dv_options.given): the CLI and the JSON
 * parser set them, so a field that does not apply to the tables the request
 * runs can be told from a default (experiment_unused()). */
enum dv_given {
    DV_GIVEN_PART = 1u << 0,
    DV_GIVEN_PREDICATES = 1u << 1,
    DV_GIVEN_BASELINE = 1u << 2,
    DV_GIVEN_BLOCKS = 1u << 3,
    DV_GIVEN_TPB = 1u << 4,
    DV_GIVEN_ITERATIONS = 1u << 5,
    DV_GIVEN_MAX_NOISE = 1u << 6,
    DV_GIVEN_BUDGET_MS = 1u << 7,
    DV_GIVEN_MIN_SAMPLES = 1u << 8,
    DV_GIVEN_MAX_SAMPLES = 1u << 9,
    DV_GIVEN_DEVICE = 1u << 10,
    DV_GIVEN_SCENARIO = 1u << 11,
    DV_GIVEN_WITNESS = 1u << 12,
    DV_GIVEN_COUNTERS = 1u << 13,
    DV_GIVEN_INSTRUCTIONS = 1u << 14,
    DV_GIVEN_NUM = 15
};
/* What only a measurement reads: an analysis ignores these. */
#define DV_GIVEN_MEASURE_ONLY                                                                                          \
    (DV_GIVEN_MAX_NOISE | DV_GIVEN_BUDGET_MS | DV_GIVEN_MIN_SAMPLES | DV_GIVEN_MAX_SAMPLES | DV_GIVEN_DEVICE |         \
     DV_GIVEN_WITNESS | DV_GIVEN_COUNTERS | DV_GIVEN_INSTRUCTIONS)

/* A request. experiment_defaults() fills the lesson's; api/options.h validates. */
struct dv_options {
    enum dv_part part;
    unsigned npredicates;                               /* Part 1 rows          */
    char predicates[DV_MAX_ROWS][PREDICATE_TEXT_LEN];   /* names or expressions */
    char baseline[PREDICATE_TEXT_LEN];                  /* one of predicates    */
    unsigned blocks;                                    /* 0: auto              */
    unsigned block_x, block_y;                          /* block_y 1 for 1D     */
    unsigned iterations;                                /* FMAs per thread      */
    double max_noise;     /* the ratios' half-width target (request field
                             max_halfwidth; max_noise is its old name)   */
    double budget_ms;                                   /* GPU time per table   */
    unsigned min_samples, max_samples;                  /* per row              */
    int device;                                         /* CUDA ordinal         */
    char scenario[DV_SCENARIO_LEN];                     /* "" or a name / "all" */
    int no_witness;                                     /* 1: skip the witness  */
    int no_counters;                                    /* 1: skip the counters */
    int instructions;                                   /* 1: profile each row's
                                                           instructions         */
    unsigned given;                                     /* DV_GIVEN_* named     */
};

struct dv_stats {
    double median, min, max, mean, stdev; /* milliseconds */
    unsigned samples;
    double noise; /* stdev / mean */
};

/* A confidence interval's two ends (the point is the field beside it). */
struct dv_ci {
    double lo, hi;
};

struct dv_check {
    int ok;                        /* every element matched the reference  */
    unsigned long long checked;    /* elements compared                    */
    unsigned long long mismatches;
    long long first_mismatch;      /* global thread index, -1 when none    */
    float expected, got;           /* at first_mismatch                    */
};

/* An empty check: nothing compared, no mismatch. */
static inline void dv_check_init(struct dv_check *c) {
    memset(c, 0, sizeof(*c));
    c->first_mismatch = -1;
}

/* Compares element `i`: bitwise, so NaN (the poison an unwritten output
 * keeps) never matches, and a wrong path's value cannot pass by rounding.
 * The first mismatch keeps its index and both values. `ok` is the caller's
 * verdict once every element is in. */
static inline void dv_check_add(struct dv_check *c, unsigned long long i, float expected, float got) {
    c->checked++;
    if (memcmp(&expected, &got, sizeof(float)) != 0) {
        if (c->mismatches == 0) {
            c->first_mismatch = (long long)i;
            c->expected = expected;
            c->got = got;
        }
        c->mismatches++;
    }
}

/* Min / max over the blocks of the grid, the grid total, and the mean per
 * block (total / blocks), which is what the *_per_block JSON fields carry. */
struct dv_count {
    unsigned min, max;
    unsigned long long total;
    double per_block;
};

/* Adds one block's value to `c` (zeroed before the first block): `first`
 * (the grid's first block) sets min and max outright. A value past what
 * min and max hold is counted as UINT_MAX. */
static inline void dv_count_add(struct dv_count *c, unsigned long long value, int first) {
    const unsigned v = value > 0xFFFFFFFFull ? 0xFFFFFFFFu : (unsigned)value;
    if (first || v < c->min) c->min = v;
    if (first || v > c->max) c->max = v;
    c->total += v;
}

/* Sets per_block once every one of `blocks` blocks is in (0 for none). */
static inline void dv_count_finish(struct dv_count *c, unsigned blocks) {
    c->per_block = blocks ? (double)c->total / blocks : 0.0;
}

/* The active-lane witness of a row (model/model/testimony.h): what the GPU saw at
 * the top of each path, one untimed launch of the witness instantiation.
 * Per-iteration rows (Part 2) record every iteration; their per-block
 * figures are per iteration (divided by `per`). */
struct dv_observed {
    int present;
    unsigned long long runs[2], split[2], lanes[2]; /* grid totals, path A / B  */
    unsigned long long hist[2][33]; /* grid: runs of A / B by active lanes 0..32 */
    unsigned per;                  /* iterations the totals span (1 in Part 1) */
    struct dv_count path_runs;     /* runs of either path per block (per iter) */
    struct dv_count split_warps;   /* runs of path A with fewer lanes than the
                                      warp has threads, per block (per iter)   */
    double lanes_per_run[2];       /* active lanes per run of path A / B       */
    int agrees;                    /* every block matched the model's record   */
    int predicated;                /* every warp ran both paths with all lanes */
    long long first_difference;    /* block, -1 when none                      */
    unsigned blocks_witnessed;     /* blocks the witness kernel ran (the rest
                                      repeat their records: the model's period);
                                      0 in a document from before the field    */
    char verdict[256];
};

/* Hardware counters of a row (gpu/counters.h, CUPTI's range profiler): one
 * untimed profiled launch of the timed kernel after its samples, and what the
 * testimony derives from them. */
struct dv_counters {
    int present;
    double branch_targets_divergent;  /* smsp__sass_branch_targets_threads_divergent.sum */
    double branch_targets;            /* smsp__sass_branch_targets.sum                   */
    double branch_uniform_pct;        /* smsp__sass_average_branch_targets_threads_uniform.pct */
    double threads_per_inst;          /* smsp__thread_inst_executed_per_inst_executed.ratio */
    double inst_executed;             /* smsp__inst_executed.sum (warp instructions)      */
    double ffma_threads;              /* smsp__sass_thread_inst_executed_op_ffma_pred_on.sum */
    /* derived (model/model/testimony.h) */
    double warp_efficiency;           /* threads_per_inst / 32                           */
    double divergent_per_block;       /* divergent branch targets / blocks               */
    double model_split_per_block;     /* the model's split warps per block               */
    double inst_per_fma;              /* warp instructions per warp-wide FMA (32 FMAs)   */
    double inst_vs_baseline;          /* warp instructions over the baseline row's: the
                                         ratio the GPU's own count predicts          */
    int predicated;                   /* the model splits warps, the timed kernel took
                                         no divergent branch with every lane active  */
    char verdict[448];
    /* ---- arithmetic intensity (model/model/intensity.h) ---- */
    /* dram__bytes_read.sum of one launch of the row's whole grid, in a pass
     * of its own (hardware counters only, L2 flushed before it): what the
     * roofline reads. dram_present 0: not read (dram_reason says why). */
    int dram_present;
    double dram_bytes_read;
    /* ---- end arithmetic intensity ---- */
};

/* ---- arithmetic intensity (model/model/intensity.h) ---- */
/* A row of an arithmetic-intensity table: its point and, once measured, its
 * place on the roofline. NaN where a figure does not apply or was not
 * measured. */
struct dv_intensity {
    int present;          /* the row is one of an intensity table          */
    char variant[16];     /* "stream", "chase", "ridge-bandwidth", "ridge-fma" */
    unsigned fmas, loads; /* F FMAs per L 4-byte loads (0: a ridge row)    */
    double intensity;     /* 2F / 4L: FLOP per byte loaded                 */
    double flops;         /* FLOPs of one launch: 2 x the threads' FMAs    */
    double bytes;         /* bytes the threads of one launch load          */
    double flop_rate;     /* flops / median time, FLOP/s                   */
    double bandwidth_gbs; /* bytes / median time, GB/s                     */
    double dram_gbs;      /* DRAM bytes read / median time, GB/s (counters) */
    double dram_intensity;/* flops / DRAM bytes read                       */
    double roofline;      /* the bound at this intensity: min(peak FLOP/s,
                             intensity x ridge bandwidth), FLOP/s          */
    double roofline_fraction; /* flop_rate / roofline                      */
    char bound[16];       /* "memory" (left of the ridge), "compute", ""   */
};

/* The roofline of an intensity table, measured on the same GPU in the same
 * run by its two ridge rows. */
struct dv_ridge {
    int present;
    double bandwidth_gbs;    /* the streaming-read row: GB/s              */
    int bandwidth_from_dram; /* 1: DRAM bytes read over time; 0: bytes the
                                threads load over time (no counters)      */
    double flop_rate;        /* the FMA row: FLOP/s (2 per FMA)           */
    double ridge;            /* flop_rate / bandwidth: FLOP per byte      */
};
/* ---- end arithmetic intensity ---- */

/* What a row of an experiment (a compiler-and-warp table, model/model/scenario.h)
 * varies: the paths k, the if/else's sides, the kernel's variant, how the
 * work is laid out over the warps. `arrangement` "" for any other row. */
struct dv_point {
    unsigned k;           /* k-paths: the paths; 0 n/a                     */
    unsigned la, lb;      /* predication: side A's and side B's FMAs; 0 n/a */
    char variant[24];     /* "branch", "select", "ifelse-sync", ...; ""     */
    char arrangement[16]; /* "lanes", "warps", "sorted", "lane-mod", "warp-mod" */
};

/* Where a reconvergence row's warps met again (model/model/join_record.h,
 * testimony_join()): read per warp right after the join by an untimed
 * record instantiation of the row's kernel, on the warps of one wave. */
#define DV_JOIN_MASKS 4
struct dv_join {
    int present;
    unsigned warps;       /* warps recorded (with a lane at the join)  */
    unsigned reconverged; /* warps whose lanes at the join read it in one
                                   group, with every one of them in the mask */
    unsigned groups_max;  /* the most groups one warp read the join in  */
    double groups_mean;   /* groups per warp                            */
    double lanes_mean;    /* lanes per group                            */
    unsigned nmasks;      /* distinct masks seen at the join (at most
                                   DV_JOIN_MASKS kept, the most seen first)   */
    uint32_t mask[DV_JOIN_MASKS];
    unsigned mask_groups[DV_JOIN_MASKS]; /* groups that read each             */
    uint32_t expected_mask;              /* the lanes that reach the join in a full warp
                                   of the row's pattern                      */
    double spread_median, spread_max;    /* per warp: cycles between its first and
                                         its last group's clock at the join  */
    unsigned blocks;                     /* blocks the record ran                     */
    char verdict[256];
};

/* A table's fit of time against a row variable (T(k) = a + b k over the
 * k-paths table's split rows): a and b fitted by least squares in each kept
 * round, each reported as the median over the rounds with the
 * order-statistic interval of those per-round values (the ratio's method,
 * model/stats/interval.h), b / a likewise; the residual is that of the fit
 * to the rows' medians, its largest absolute one relative to the row. */
struct dv_fit {
    int present;
    unsigned points, rounds; /* rows fitted, rounds fitted                 */
    double a, b, b_over_a;   /* ms, ms per unit of x, per unit of x        */
    struct dv_ci a_ci, b_ci, b_over_a_ci;
    double level;            /* the confidence the intervals attain        */
    double residual_rms_ms;  /* of the medians' fit                       */
    double residual_max_rel; /* max |median - (a + b x)| / median          */
    char x[16];              /* what x is: "k"                            */
};

struct dv_row {
    char name[PREDICATE_TEXT_LEN];  /* built-in name, expression or scenario row */
    char label[PREDICATE_TEXT_LEN]; /* the lesson's label                        */
    enum dv_kernel kernel;
    enum dv_mode mode; /* the BRANCH / PERITER kernel's argument    */

    /* Analysis: no GPU. */
    unsigned warps_per_block, threads_per_block;
    struct dv_count warps_split, threads_on_a, path_runs;
    double predicted_ratio;   /* path-runs (or issued path work) vs baseline    */
    int comparable;           /* same work as the baseline row                  */
    char comparable_reason[160];
    char note[256];           /* what the row is for, or what it shows          */
    /* Block 0's lane map, from the path mask the counts come from (phase 0,
     * analysis_count()): bit l of lanes_block0[w] set = lane l of warp w on
     * path A. lanes_warps is the warps it holds (the block's), 0 for a row
     * without one: a scenario row (its lanes take one of up to 32 paths or
     * a trip count, which A and B cannot say) or one read from a document
     * written before the field. Lanes a partial last warp lacks (past
     * threads_per_block) are 0 and do not exist. */
    unsigned lanes_warps;
    uint32_t lanes_block0[DV_MAX_THREADS_PER_BLOCK / 32];

    /* Measurement: valid when `measured`. */
    int measured;
    struct dv_stats time_ms;
    struct dv_ci median_ci_ms; /* the median's 95% interval (model/stats/interval.h) */
    /* The ratio over the baseline row: the median over the kept rounds of
     * the row's time over the baseline's in the same round, with its 95%
     * interval (model/stats/ratio.h, RATIO_OF_ROUNDS); the baseline's own is
     * 1 [1, 1]. ratio_of_medians is median / baseline median, beside it. */
    double ratio;
    struct dv_ci ratio_ci;
    double ratio_level;       /* the confidence ratio_ci attains               */
    int ratio_method;         /* enum ratio_method (model/stats/ratio.h)             */
    double ratio_of_medians;
    double ratio_halfwidth;   /* of ratio_ci, relative to the ratio            */
    /* The per-sample spread against what the interval implies
     * (model/stats/spread.h): SPREAD_* flags, the excess and the drift. */
    unsigned spread_flags;
    double spread_excess, spread_drift;
    unsigned rounds_dropped;  /* throttled rounds left out (the table's)       */
    double floor_fraction;    /* FMA floor / median                            */
    unsigned long long thread_fmas; /* a scenario row: the FMAs its threads need (the model's) */
    struct dv_check check;

    /* scenario suite (scenario tables only; NaN = not measured):
     * predicted_efficiency: the worked examples' model figure for the row (max/sum of
     *   path lengths per warp for branches, useful / issued lane-iterations
     *   for loops);
     * measured_efficiency: the same figure from times: t(reference) / t(row),
     *   the reference being the row's ideal arrangement (every lane on its
     *   warp's longest path) for branches, the same-work baseline for loops;
     * agreement: measured ratio / predicted_ratio (1 = the model holds). */
    double predicted_efficiency, measured_efficiency, agreement;

    /* An experiment's row: what it varies, the row its ratio is against
     * (1 + its index in the table's rows; 0: the table's baseline; its own:
     * none, it is its own reference: dv_row_reference()), and whether it is
     * a point of the table's fit and at which x. Zeroed, a row is none of
     * this: every row's ratio is over the baseline, as in Part 1 and 2. */
    struct dv_point point;
    unsigned versus;
    int in_fit;
    double fit_x;

    /* The GPU's testimony (untimed, after the samples): the witness and the
     * hardware counters; `present` 0 when not taken (the report says why). */
    struct dv_observed observed;
    struct dv_counters counters;
    struct dv_join join; /* reconvergence rows only              */
    struct dv_intensity intensity; /* arithmetic-intensity rows only */
    /* The instruction profile of the timed kernel (NULL when not taken: the
     * report's testimony says why); owned by the report. */
    struct listing *instructions;
};

struct dv_table {
    char id[32];          /* "part1", "part2", "scenario:<name>"               */
    /* What the table says beyond its rows (e.g. a baseline that leaves a
     * path empty in this block), "" for nothing; and the predicate that
     * would make the comparison, "" for none (plan_report() fills both). */
    char note[384];
    char suggested_baseline[PREDICATE_TEXT_LEN];
    char title[160];
    char kernel[32];      /* the kernel every row of this table ran            */
    char kernel_iterations[32]; /* "compile-time 4096" (", unroll N"), "runtime" */
    char baseline[PREDICATE_TEXT_LEN];
    int baseline_row;     /* index into rows                                   */
    unsigned nrows;
    struct dv_row rows[DV_MAX_ROWS];
    double noise_limit;   /* the old name of halfwidth_target (the same value) */
    int noise_ok;         /* the old name of intervals_ok (the same verdict)   */
    double gpu_time_ms;   /* sum of timed samples                              */
    /* Where the table's host time went, for the worker's log (not in the
     * document): the timed rounds (warm-up, lead-ins, clock spins and the
     * waits for them included), the outputs brought back and the checks
     * started, the wait for the checks after the testimony, the set-up
     * before the timed rounds (masks, outputs), and the testimony passes
     * whole (their witness and counter shares are in the testimony). */
    double host_timing_ms, host_outputs_ms, host_checks_ms, host_setup_ms, host_testimony_ms;
    /* The table's share of the testimony, in the document ("testimony_cost"):
     * the host time of its witness and of its counter pass (NaN: that pass
     * did not run for it), and the counter pass's launches and the blocks
     * they ran, every pass and range counted (what the reduced grids save). */
    double cost_witness_ms, cost_counters_ms;
    unsigned counters_launches;
    unsigned long long counters_blocks;
    /* The stopping rule (model/stats/stoprule.h), set when measured: the target
     * every judged interval's relative half-width had to meet, whether each
     * did, why sampling stopped ("target", "cap", "throttled", "budget"),
     * the widest judged interval's row (-1: none) and half-width, and the
     * timer's step the intervals were widened by (0: none found). */
    double halfwidth_target;
    int intervals_ok;
    /* An experiment's table: which ("k-paths", "predication", "branchless",
     * "reconvergence"; "" for any other) and its fit (k-paths). */
    char experiment[24];
    struct dv_fit fit;
    char stop_reason[16];
    int worst_row;
    double worst_halfwidth;
    double timer_resolution_ms;
    /* Measured in a batch of readers (model/stats/batchplan.h): how many
     * readers' tables its rounds served, and how many distinct rows those
     * rounds launched; both 0 when it was measured alone. */
    unsigned batch_readers, batch_rows;
    /* An arithmetic-intensity table's measured ridge; and why its rows have
     * no DRAM bytes where they have none ("" otherwise). */
    struct dv_ridge ridge;
    char dram_reason[ERR_LEN];
};

/* The row row `r` of `t` is compared with: its `versus` row where it names
 * one in the table, else the table's baseline (`r` itself where there is
 * none). */
static inline unsigned dv_row_reference(const struct dv_table *t, unsigned r) {
    const unsigned v = r < DV_MAX_ROWS ? t->rows[r].versus : 0u;
    if (v >= 1u && v <= t->nrows) return v - 1u;
    return t->baseline_row >= 0 && (unsigned)t->baseline_row < t->nrows ? (unsigned)t->baseline_row : r;
}

struct dv_device {
    int present;
    int ordinal;
    char name[256];
    int cc_major, cc_minor;
    int sm_count, warp_size;
    int driver_version, runtime_version;      /* CUDA's 13000 form             */
    double rated_sm_clock_mhz;
    double measured_sm_clock_mhz;             /* clock64() spin, timed         */
    double measured_sm_clock_min_mhz;
    int fp32_lanes_per_sm;
    unsigned long long total_mem_bytes;
    int max_threads_per_sm;
    char pci_bus_id[32];
    char nvidia_driver_version[32];           /* kernel module release, "" if unknown */
    char reason[ERR_LEN];                     /* why there is none             */
};

struct dv_build {
    char nvcc_version[32];
    char cuda_architectures[64];
    char flags[128];
    char kernel_digest[24]; /* base/buildinfo.h: the kernels' sources */
};

struct dv_config {
    char experiment[32];          /* "part1", "part2", "all", "scenario"       */
    unsigned blocks;
    int blocks_auto;
    char blocks_reason[256];      /* how auto chose                            */
    unsigned block_x, block_y, threads_per_block;
    unsigned long long threads;
    unsigned iterations;
    unsigned long long fmas_per_launch;
    unsigned long long bytes_per_launch;
    double fma_floor_ms;          /* 0 until a clock is measured               */
    double max_noise, budget_ms;
    unsigned min_samples, max_samples;
};

/* What the testimony passes did for the whole report. */
struct dv_testimony {
    int witness_requested, counters_requested;
    int witness_taken;            /* every measured row has `observed`         */
    int counters_taken;           /* every measured row has `counters`         */
    char witness_reason[ERR_LEN]; /* why not, "" when taken                    */
    char counters_reason[ERR_LEN];
    char counters_library[256];   /* the CUPTI library that was loaded         */
    double witness_ms;            /* host time of the witness passes           */
    double counters_ms;           /* host time of the counter passes           */
    double counters_setup_ms;     /* host time of starting the profiler (CUPTI
                                     loaded, initialised, enabled, first start)
                                     when this job had to, else about 0       */
    int instructions_requested;
    int instructions_taken;       /* every measured row has `instructions`     */
    char instructions_reason[ERR_LEN];
    double instructions_ms;       /* host time of profiling or looking up      */
    unsigned instructions_cached_rows; /* rows served from the cache           */
};

/* ---- the data-dependent divergence experiment (model/model/sortexp.h) ---- */

/* Per-warp witness of a shading order, summed over the grid: warps by the
 * distinct materials they met (k_hist[k]) and runs by active lanes
 * (lane_hist[l]); agrees: every warp's record equalled the CPU count over
 * the same array, first_difference the first warp that did not (-1). */
struct dv_sort_witness {
    int present;
    unsigned long long warps;
    unsigned long long k_hist[33];
    unsigned long long lane_hist[33];
    double k_mean;
    int agrees;
    long long first_difference;
};

/* One (distribution, M, C) cell: its table's figures gathered. */
struct dv_sort_cell {
    char distribution[16];
    unsigned m, c;
    int table;                   /* index into the report's tables           */
    int measured;
    double ratio;                /* naive / (sort+shade), median of rounds   */
    struct dv_ci ratio_ci;
    double ratio_level;
    int verdict;                 /* 1 sorting pays, -1 costs, 0 ambiguous    */
    double index_ratio;          /* index / (sort+shade)                     */
    double sort_ms;              /* the sort alone: median and interval      */
    struct dv_ci sort_ci;
    double sort_inside_ms;       /* the sort between two events inside sort+shade's launches: median */
    struct dv_ci sort_inside_ci; /* and its interval                          */
    double sort_inside_ratio;    /* inside / alone, paired by round (the alone
                                    timed beside it in each round)           */
    struct dv_ci sort_inside_ratio_ci;
    int sort_agrees;             /* that interval meets 1 +- the tables' target */
    double k_naive, k_sorted;    /* mean distinct materials a warp (model)   */
    struct dv_sort_witness naive, sorted; /* the GPU's per-warp record        */
};

struct dv_sort_crossover {
    char distribution[16];
    unsigned m;
    unsigned c;                  /* smallest C from which sorting pays; 0 none */
    unsigned ambiguous;          /* cells of this (distribution, M) ambiguous  */
};

struct dv_sort {
    int present;
    unsigned ncells;
    struct dv_sort_cell cells[DV_MAX_TABLES];
    unsigned ncross;
    struct dv_sort_crossover cross[DV_MAX_TABLES];
    char sentence[512];
};

struct dv_report {
    struct dv_device device;
    struct dv_build build;
    struct dv_config config;
    int measured;                 /* timings present                           */
    unsigned ntables;
    struct dv_table tables[DV_MAX_TABLES];
    unsigned nwarnings;
    char warnings[DV_MAX_WARNINGS][256];
    double gpu_time_ms;           /* all tables                                */
    struct dv_testimony testimony;
    struct dv_sort sort;          /* the data-sort experiment; present 0 else */
    double wall_time_ms;          /* the whole measurement, host clock         */
    /* For the worker's log (not in the document): the device, the grid, the
     * plan and the job's profiler before the first table, the inputs and the clock's buffer,
     * and the verdicts after the last. */
    double host_plan_ms, host_inputs_ms, host_end_ms;
    char started_utc[32], finished_utc[32];
};

/* What a refused request is about, as values beside the one-line "what:
 * why" message (STYLE.md rule 19: a caller that needs them never reads them
 * back out of the text): the request field, as api/options.h spells it
 * ("predicates[2]", "baseline", "threads_per_block"...; "" for none; static
 * text), and, when the error is in that field's expression (it does not
 * parse, or fails for some thread), where in it (expr.column 0 otherwise). */
struct dv_fault {
    const char *field;
    struct predicate_fault expr;
};

/* `f` (may be NULL) about no field and no column. */
static inline void dv_fault_clear(struct dv_fault *f) {
    if (!f) return;
    f->field = "";
    f->expr.column = 0;
    f->expr.caret[0] = '\0';
}

/* A grid's shape: blocks of block_x x block_y threads. */
struct dv_geometry {
    unsigned blocks;
    unsigned block_x, block_y;
};

/* Threads of the grid `g`. */
static inline unsigned long long dv_grid_threads(const struct dv_geometry *g) {
    return (unsigned long long)g->blocks * g->block_x * g->block_y;
}

/* Lanes of warp `w` of a block of `tpb` threads: 32, or fewer for a
 * partial last warp (its missing lanes do not exist). */
static inline unsigned dv_warp_lanes(unsigned tpb, unsigned w) {
    return tpb - w * 32u < 32u ? tpb - w * 32u : 32u;
}

#ifdef __cplusplus
}
#endif

#endif /* DV_TYPES_H */
