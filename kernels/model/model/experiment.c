/* experiment.c -- what a request and a report say beyond their fields
 * (experiment.h): the lesson's defaults, the report's life, warnings and
 * gate, what a planned row runs, the names of the request's fields and
 * Part 2 read both ways.
 *
 * What a planned row runs is decided here once, from the row's kernel, mode
 * and name (experiment_row_predicate() and its two companions): the
 * planner's own analysis, the CPU reference, the testimony and the GPU side
 * all ask those functions, so no reader can disagree with another about
 * which predicate a row evaluates, whether it reads blockIdx.x or how
 * often.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/model/model/experiment.h"
#include "kernels/model/listing/listing.h"

void experiment_defaults(struct dv_options *o) {
    static const char *const rows[] = {"lane-parity", "lane-half", "warp-parity", "block-parity"};
    memset(o, 0, sizeof *o);
    o->part = DV_PART_ALL;
    o->npredicates = sizeof rows / sizeof rows[0];
    for (unsigned i = 0; i < o->npredicates; i++)
        snprintf(o->predicates[i], sizeof o->predicates[i], "%s", rows[i]);
    snprintf(o->baseline, sizeof o->baseline, "%s", DV_DEFAULT_BASELINE);
    o->blocks = DV_DEFAULT_BLOCKS;
    o->block_x = DV_DEFAULT_BLOCK_X;
    o->block_y = 1;
    o->iterations = DV_DEFAULT_ITERATIONS;
    o->max_noise = DV_DEFAULT_MAX_NOISE;
    o->budget_ms = DV_DEFAULT_BUDGET_MS;
    o->min_samples = DV_DEFAULT_MIN_SAMPLES;
    o->max_samples = DV_DEFAULT_MAX_SAMPLES;
    o->device = 0;
    o->scenario[0] = '\0';
}

void experiment_widget_request(struct dv_options *o, const char *expression) {
    experiment_defaults(o);
    o->part = DV_PART_1;
    o->npredicates = 2;
    snprintf(o->predicates[0], sizeof o->predicates[0], "%s", expression ? expression : "");
    snprintf(o->predicates[1], sizeof o->predicates[1], "%s", DV_DEFAULT_BASELINE);
}

struct dv_report *experiment_report_create(void) { return calloc(1, sizeof(struct dv_report)); }

void experiment_report_free(struct dv_report *r) {
    if (!r) return;
    for (unsigned i = 0; i < DV_MAX_TABLES; i++)
        for (unsigned j = 0; j < DV_MAX_ROWS; j++) listing_free(r->tables[i].rows[j].instructions);
    free(r);
}

int experiment_table_is_scenario(const struct dv_table *t) { return strncmp(t->id, "scenario:", 9) == 0; }

/* The warning of a table whose intervals were not all within the target
 * when sampling stopped: the widest interval's row and half-width, or,
 * where no interval was made (every round dropped under a throttled clock,
 * say), that none was and how many rounds were kept and dropped; never a
 * row it cannot name or a half-width it does not have. */
static void intervals_warning(struct dv_report *r, const struct dv_table *t) {
    const char *why = t->stop_reason[0] ? t->stop_reason : "unknown";
    const int named = t->worst_row >= 0 && (unsigned)t->worst_row < t->nrows && isfinite(t->worst_halfwidth);
    if (named) {
        experiment_warn(r,
                        "%s: %s is known to +-%.2f%%, over the %.2f%% target, when sampling stopped (%s) after "
                        "%.0f ms of GPU time",
                        t->id, t->rows[t->worst_row].name, t->worst_halfwidth * 100, t->halfwidth_target * 100, why,
                        t->gpu_time_ms);
        return;
    }
    const unsigned kept = t->nrows ? t->rows[0].time_ms.samples : 0, dropped = t->nrows ? t->rows[0].rounds_dropped : 0;
    experiment_warn(r,
                    "%s: no ratio has an interval to judge against the %.2f%% target: sampling stopped (%s) after "
                    "%.0f ms of GPU time with %u round%s kept and %u dropped",
                    t->id, t->halfwidth_target * 100, why, isfinite(t->gpu_time_ms) ? t->gpu_time_ms : 0.0, kept,
                    kept == 1 ? "" : "s", dropped);
}

int experiment_gate(struct dv_report *r, char *err) {
    int rc = 0;
    for (unsigned i = 0; i < r->ntables; i++) {
        struct dv_table *t = &r->tables[i];
        t->noise_limit = t->halfwidth_target;
        t->noise_ok = t->intervals_ok;
        for (unsigned j = 0; j < t->nrows; j++) {
            const struct dv_row *row = &t->rows[j];
            if (row->check.ok) continue;
            experiment_warn(r, "%s: %s: %llu of %llu outputs wrong, first at thread %lld", t->id, row->name,
                            row->check.mismatches, row->check.checked, row->check.first_mismatch);
            if (rc == 0) {
                dv_seterr(err,
                          "%s row %s: %llu of %llu outputs differ from the CPU reference, first at thread %lld "
                          "(expected %.9g, got %.9g)",
                          t->id, row->name, row->check.mismatches, row->check.checked, row->check.first_mismatch,
                          row->check.expected, row->check.got);
                rc = DV_EGATE;
            }
        }
        if (!t->intervals_ok) intervals_warning(r, t);
    }
    return rc;
}

void experiment_warn(struct dv_report *r, const char *fmt, ...) {
    if (r->nwarnings >= DV_MAX_WARNINGS) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->warnings[r->nwarnings++], sizeof(r->warnings[0]), fmt, ap);
    va_end(ap);
}

/* What each kernel is: its stable name, whether its path bit comes from a
 * device mask, whether its branch sits inside the loop. */
static const struct {
    const char *name;
    int reads_mask;
    int per_iteration;
} kernels[DV_NUM_KERNELS] = {
    [DV_KERNEL_BRANCH] = {"branch", 0, 0},      [DV_KERNEL_MASK] = {"mask", 1, 0},
    [DV_KERNEL_NOBRANCH] = {"no-branch", 0, 0}, [DV_KERNEL_PERITER] = {"per-iteration", 0, 1},
    [DV_KERNEL_SCENARIO] = {"scenario", 0, 0},
};

static int known_kernel(int kernel) { return kernel >= 0 && kernel < DV_NUM_KERNELS; }

const char *experiment_kernel_name(int kernel) { return known_kernel(kernel) ? kernels[kernel].name : "unknown"; }

int experiment_row_predicate(const struct dv_row *row, struct predicate *p, char *err) {
    char why[ERR_LEN];
    int rc;
    switch (row->kernel) {
    case DV_KERNEL_BRANCH:
    case DV_KERNEL_PERITER: rc = predicate_of_mode(row->mode, p, why); break;
    case DV_KERNEL_NOBRANCH: rc = predicate_of_mode(DV_ALWAYS_A, p, why); break;
    case DV_KERNEL_MASK: rc = predicate_resolve(row->name, p, NULL, why); break;
    default:
        memset(p, 0, sizeof(*p));
        p->mode = DV_MODE_NONE;
        snprintf(why, sizeof why, "the %s kernel evaluates no predicate", experiment_kernel_name(row->kernel));
        rc = -1;
        break;
    }
    if (rc != 0) dv_seterr(err, "row '%s': %s", row->name, why);
    return rc;
}

unsigned experiment_row_evaluations(const struct dv_row *row, unsigned iterations) {
    return known_kernel(row->kernel) && kernels[row->kernel].per_iteration ? iterations : 1u;
}

int experiment_row_reads_mask(const struct dv_row *row) {
    return known_kernel(row->kernel) && kernels[row->kernel].reads_mask;
}

int experiment_row_same_run(const struct dv_row *a, const struct dv_row *b) {
    return a->kernel == b->kernel && a->mode == b->mode && strncmp(a->name, b->name, sizeof(a->name)) == 0;
}

const char *experiment_predicate_field(unsigned i) {
    static const char *const names[DV_MAX_ROWS] = {
        "predicates[0]",  "predicates[1]",  "predicates[2]",  "predicates[3]",  "predicates[4]",  "predicates[5]",
        "predicates[6]",  "predicates[7]",  "predicates[8]",  "predicates[9]",  "predicates[10]", "predicates[11]",
        "predicates[12]", "predicates[13]", "predicates[14]", "predicates[15]",
    };
    return i < DV_MAX_ROWS ? names[i] : "predicates";
}

/* ---- what a request names but does not use -------------------------------- */

unsigned experiment_unused(const struct dv_options *o) {
    unsigned unused = 0;
    if (o->scenario[0]) unused = DV_GIVEN_PART | DV_GIVEN_PREDICATES | DV_GIVEN_BASELINE;
    else if (o->part == DV_PART_2) unused = DV_GIVEN_PREDICATES | DV_GIVEN_BASELINE;
    return o->given & unused;
}

const char *experiment_given_name(unsigned bit) {
    static const char *const names[DV_GIVEN_NUM] = {
        "part",      "predicates",  "baseline",    "blocks", "threads_per_block", "iterations", "max_halfwidth",
        "budget_ms", "min_samples", "max_samples", "device", "scenario",          "witness",    "counters",
        "instructions",
    };
    for (unsigned i = 0; i < DV_GIVEN_NUM; i++)
        if (bit == 1u << i) return names[i];
    return "";
}

const char *experiment_unused_reason(const struct dv_options *o, unsigned bit) {
    if (!(experiment_unused(o) & bit)) return "";
    if (o->scenario[0]) return "a scenario request runs the scenario tables instead of the Part 1 and Part 2 tables";
    return "Part 2's rows are fixed (no branch, and the branch inside the loop for lane and warp parity)";
}

/* ---- Part 2 read both ways ------------------------------------------------ */

const char *experiment_reading_kind_name(enum dv_reading_kind k) {
    return k == DV_READING_SPLIT ? "split" : "question";
}

/* median(a) / median(b), NaN unless both rows are measured. */
static double median_ratio(const struct dv_row *a, const struct dv_row *b) {
    if (!a->measured || !b->measured || !isfinite(a->time_ms.median) || !isfinite(b->time_ms.median) ||
        !(b->time_ms.median > 0))
        return NAN;
    return a->time_ms.median / b->time_ms.median;
}

static double predicted_over(const struct dv_row *a, const struct dv_row *b) {
    return isfinite(a->predicted_ratio) && isfinite(b->predicted_ratio) && b->predicted_ratio > 0
               ? a->predicted_ratio / b->predicted_ratio
               : NAN;
}

static void reading(const struct dv_table *t, enum dv_reading_kind kind, int row, int against, struct dv_reading *out) {
    const struct dv_row *a = &t->rows[row], *b = &t->rows[against];
    out->kind = kind;
    out->row = row;
    out->against = against;
    out->ratio = median_ratio(a, b);
    out->predicted = predicted_over(a, b);
    if (kind == DV_READING_SPLIT)
        snprintf(out->sentence, sizeof out->sentence,
                 "%.80s against %.80s: the cost of splitting a warp (both ask the question every iteration; "
                 "only the split differs)",
                 a->label, b->label);
    else
        snprintf(out->sentence, sizeof out->sentence,
                 "%.80s against %.80s: the cost of asking a question in a loop (no warp splits in either)", a->label,
                 b->label);
}

unsigned experiment_readings(const struct dv_table *t, struct dv_reading *out) {
    int nobranch = -1, split = -1, uniform = -1;
    for (unsigned i = 0; i < t->nrows && i < DV_MAX_ROWS; i++) {
        const struct dv_row *r = &t->rows[i];
        if (r->kernel == DV_KERNEL_NOBRANCH && nobranch < 0) nobranch = (int)i;
        if (r->kernel != DV_KERNEL_PERITER) continue;
        if (r->warps_split.max > 0 && split < 0) split = (int)i;
        if (r->warps_split.max == 0 && uniform < 0) uniform = (int)i;
    }
    if (nobranch < 0 || uniform < 0) return 0;
    unsigned n = 0;
    if (split >= 0) reading(t, DV_READING_SPLIT, split, uniform, &out[n++]);
    reading(t, DV_READING_QUESTION, uniform, nobranch, &out[n++]);
    return n;
}
