/* report_text.c -- struct dv_report in the lesson's text layout.
 *
 * The header lines, then per table a title, a header row, a rule and the rows
 * in fixed-width columns: the lesson's own columns first, in the lesson's
 * widths (so a lesson row is a prefix of ours), then the extra ones (the
 * ratio with its 95% interval, "1.951 [1.948, 1.954]", threads on A,
 * predicted ratio, noise with the spread's flags, floor fraction,
 * correctness check). A column widens to its widest cell. Part 2
 * style tables (kernel rows) put time first, as the lesson's second table
 * does. Without timings the time columns go. Scenario tables have their own
 * columns (the model's ratio and efficiency beside the measured ones, and
 * their agreement) and footer. In every table the label column is as wide as
 * the longest label, so columns stay aligned.
 */
#include "api/report.h"
#include "api/report_layout.h"
#include "api/strbuf.h"
#include "kernels/model/listing/listing.h"
#include "kernels/model/listing/listing_shape.h"
#include "api/report_experiment.h"
#include "api/report_sort.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/model/stats/spread.h"

/* ---------------------------------------------------------------------- text */

/* Cell text for a count: "8", or "0-8" when blocks differ. */
static void fmt_count(char *buf, size_t len, const struct dv_count *c) {
    if (c->min == c->max) snprintf(buf, len, "%u", c->min);
    else snprintf(buf, len, "%u-%u", c->min, c->max);
}

static void fmt_fixed(char *buf, size_t len, double v, int decimals) {
    if (isfinite(v)) snprintf(buf, len, "%.*f", decimals, v);
    else snprintf(buf, len, "-");
}

static void fmt_check(char *buf, size_t len, const struct dv_check *c) {
    if (c->checked == 0 && c->mismatches == 0 && !c->ok) snprintf(buf, len, "-");
    else if (c->ok) snprintf(buf, len, "ok");
    else if (c->first_mismatch >= 0)
        snprintf(buf, len, "FAIL %llu (first thread %lld)", c->mismatches, c->first_mismatch);
    else snprintf(buf, len, "FAIL %llu", c->mismatches);
}

/* Column kinds of a table row. The C_MODEL_* to C_AGREEMENT kinds belong to
 * scenario tables only. */
enum col {
    C_WARPS, C_TIME, C_RATIO, C_THREADS_A, C_PATH_RUNS, C_PREDICTED, C_NOISE, C_FLOOR, C_CHECK,
    C_MODEL_RATIO, C_MODEL_EFF, C_MEASURED_EFF, C_AGREEMENT, C_RATIO_CI
};
#define MAX_COLS 13
#define CELL_LEN 96

struct layout {
    int first_width;          /* the label column                        */
    const char *first_header; /* "predicate", "kernel" or "row"          */
    int ncols;
    enum col cols[MAX_COLS];
    int width[MAX_COLS];
    const char *gap[MAX_COLS]; /* spaces before each column              */
    char ratio_header[48];
};

/* Agreement further than this from 1 is marked '*'; the slack keeps a ratio
 * of exactly 1.10 or 0.90 (not representable in binary) unmarked. */
#define AGREEMENT_TOLERANCE 0.10
#define AGREEMENT_SLACK 1e-9

static int is_kernel_table(const struct dv_table *t) {
    for (unsigned i = 0; i < t->nrows; i++)
        if (t->rows[i].kernel == DV_KERNEL_NOBRANCH || t->rows[i].kernel == DV_KERNEL_PERITER)
            return 1;
    return 0;
}

static int is_scenario_table(const struct dv_table *t) {
    if (t->nrows == 0) return strncmp(t->id, "scenario:", 9) == 0;
    for (unsigned i = 0; i < t->nrows; i++)
        if (t->rows[i].kernel != DV_KERNEL_SCENARIO) return 0;
    return 1;
}

/* Whether a measured table carries the intervals (documents from before
 * them have none: their footer is the old one). */
static int table_has_intervals(const struct dv_table *t) {
    for (unsigned r = 0; r < t->nrows && r < DV_MAX_ROWS; r++)
        if (isfinite(t->rows[r].ratio_ci.lo) && isfinite(t->rows[r].ratio_ci.hi)) return 1;
    return 0;
}

static void add_col(struct layout *l, enum col c, int width, const char *gap) {
    if (l->ncols >= MAX_COLS) return;
    l->cols[l->ncols] = c;
    l->width[l->ncols] = width;
    l->gap[l->ncols] = gap;
    l->ncols++;
}

/* Scenario tables: their own columns, three spaces apart; the model's ratio
 * and efficiency always, the measurement beside them when there is one. */
static void layout_scenario(const struct dv_table *t, int measured, struct layout *l) {
    snprintf(l->ratio_header, sizeof l->ratio_header, "vs baseline");
    l->first_header = "row";
    l->first_width = (int)strlen(l->first_header);
    add_col(l, C_WARPS, 11, "   ");
    if (measured) {
        add_col(l, C_TIME, 10, "   ");
        add_col(l, C_RATIO, 11, "   ");
        if (table_has_intervals(t)) add_col(l, C_RATIO_CI, 20, "   ");
    }
    add_col(l, C_MODEL_RATIO, 11, "   ");
    add_col(l, C_MODEL_EFF, 10, "   ");
    if (measured) {
        add_col(l, C_MEASURED_EFF, 13, "   ");
        add_col(l, C_AGREEMENT, 9, "   ");
        add_col(l, C_NOISE, 6, "   ");
        add_col(l, C_CHECK, 0, "   ");
    }
}

/* The lesson's widths: Part 1 "%-24s  %11s   %10s   %10s", Part 2
 * "%-28s   %10s %12s"; extra columns follow, three spaces apart. */
static void layout_table(const struct dv_table *t, int measured, struct layout *l) {
    memset(l, 0, sizeof *l);
    if (is_scenario_table(t)) {
        layout_scenario(t, measured, l);
        return;
    }
    int kernel_style = is_kernel_table(t);
    const struct dv_row *base =
        t->baseline_row >= 0 && (unsigned)t->baseline_row < t->nrows ? &t->rows[t->baseline_row] : NULL;
    if (base && base->kernel == DV_KERNEL_NOBRANCH) snprintf(l->ratio_header, sizeof l->ratio_header, "vs no branch");
    else if (base && base->warps_split.max == 0) snprintf(l->ratio_header, sizeof l->ratio_header, "vs uniform");
    else snprintf(l->ratio_header, sizeof l->ratio_header, "vs baseline");
    int ratio_width = kernel_style ? 12 : 10;
    l->first_header = kernel_style ? "kernel" : "predicate";
    l->first_width = kernel_style ? 28 : 24;
    if (measured && kernel_style) {
        add_col(l, C_TIME, 10, "   ");
        add_col(l, C_RATIO, ratio_width, " ");
        add_col(l, C_WARPS, 11, "   ");
    } else {
        add_col(l, C_WARPS, 11, kernel_style ? "   " : "  ");
        if (measured) {
            add_col(l, C_TIME, 10, "   ");
            add_col(l, C_RATIO, ratio_width, "   ");
        }
    }
    if (measured && table_has_intervals(t)) add_col(l, C_RATIO_CI, 20, "   ");
    add_col(l, C_THREADS_A, 12, "   ");
    if (!measured) add_col(l, C_PATH_RUNS, 9, "   ");
    add_col(l, C_PREDICTED, 9, "   ");
    if (measured) {
        add_col(l, C_NOISE, 6, "   ");
        add_col(l, C_FLOOR, 5, "   ");
        add_col(l, C_CHECK, 0, "   ");
    }
}

static const char *col_header(const struct layout *l, enum col c) {
    switch (c) {
    case C_WARPS: return "warps split";
    case C_TIME: return "time (ms)";
    case C_RATIO: return l->ratio_header;
    case C_THREADS_A: return "threads on A";
    case C_PATH_RUNS: return "path-runs";
    case C_PREDICTED: return "predicted";
    case C_NOISE: return "noise";
    case C_FLOOR: return "floor";
    case C_CHECK: return "check";
    case C_MODEL_RATIO: return "model ratio";
    case C_MODEL_EFF: return "model eff.";
    case C_MEASURED_EFF: return "measured eff.";
    case C_AGREEMENT: return "agreement";
    case C_RATIO_CI: return "ratio [95% interval]";
    }
    return "";
}

/* A fraction as a percentage with one decimal, as the worked examples write 57.1%. */
static void fmt_percent(char *buf, size_t len, double v) {
    if (isfinite(v)) snprintf(buf, len, "%.1f%%", 100.0 * v);
    else snprintf(buf, len, "-");
}

/* Measured ratio over the model's; NaN when either is missing. Documents
 * that predate the agreement field still get one from the two ratios. */
static double row_agreement(const struct dv_row *w) {
    if (isfinite(w->agreement)) return w->agreement;
    if (isfinite(w->ratio) && isfinite(w->predicted_ratio) && w->predicted_ratio > 0)
        return w->ratio / w->predicted_ratio;
    return NAN;
}

/* "1.05 " or "1.25*": the mark takes the last place, so the figures of
 * marked and unmarked rows stay aligned on the decimal point. */
static void fmt_agreement(char *buf, size_t len, double a) {
    if (!isfinite(a)) snprintf(buf, len, "- ");
    else snprintf(buf, len, "%.2f%c", a,
                  fabs(a - 1.0) > AGREEMENT_TOLERANCE + AGREEMENT_SLACK ? '*' : ' ');
}

/* "1.951 [1.948, 1.954]": the ratio and its interval to 3 decimals, or 4
 * where 3 would print an interval narrower than a thousandth as the point
 * itself ("1.9770 [1.9766, 1.9773]"); "-" without an interval (a document
 * from before them). report_layout.h exports it for the chart. */
void report_layout_ratio_ci(const struct dv_row *w, char *buf, size_t len) {
    if (!isfinite(w->ratio) || !isfinite(w->ratio_ci.lo) || !isfinite(w->ratio_ci.hi)) {
        snprintf(buf, len, "-");
        return;
    }
    char p[32], lo[32], hi[32];
    snprintf(p, sizeof p, "%.3f", w->ratio);
    snprintf(lo, sizeof lo, "%.3f", w->ratio_ci.lo);
    snprintf(hi, sizeof hi, "%.3f", w->ratio_ci.hi);
    const int d = w->ratio_ci.lo < w->ratio_ci.hi && strcmp(p, lo) == 0 && strcmp(p, hi) == 0 ? 4 : 3;
    snprintf(buf, len, "%.*f [%.*f, %.*f]", d, w->ratio, d, w->ratio_ci.lo, d, w->ratio_ci.hi);
}

/* The spread's flags as words after the noise: "0.72% tail". */
static void fmt_noise(char *buf, size_t len, const struct dv_row *w) {
    if (!isfinite(w->time_ms.noise)) {
        snprintf(buf, len, "-");
        return;
    }
    int n = snprintf(buf, len, "%.2f%%", 100.0 * w->time_ms.noise);
    static const struct {
        unsigned bit;
        const char *word;
    } flags[] = {{SPREAD_TAIL, "tail"}, {SPREAD_SPLIT, "split"}, {SPREAD_DRIFT, "drift"}};
    for (size_t i = 0; i < sizeof flags / sizeof flags[0] && n > 0 && (size_t)n < len; i++)
        if (w->spread_flags & flags[i].bit) n += snprintf(buf + n, len - (size_t)n, " %s", flags[i].word);
}

static void col_cell(enum col c, const struct dv_row *w, char *buf, size_t len) {
    switch (c) {
    case C_WARPS: fmt_count(buf, len, &w->warps_split); return;
    case C_TIME: fmt_fixed(buf, len, w->time_ms.median, 3); return;
    case C_RATIO: fmt_fixed(buf, len, w->ratio, 2); return;
    case C_THREADS_A: fmt_count(buf, len, &w->threads_on_a); return;
    case C_PATH_RUNS: fmt_count(buf, len, &w->path_runs); return;
    case C_PREDICTED:
    case C_MODEL_RATIO: fmt_fixed(buf, len, w->predicted_ratio, 2); return;
    case C_NOISE: fmt_noise(buf, len, w); return;
    case C_RATIO_CI: report_layout_ratio_ci(w, buf, len); return;
    case C_FLOOR: fmt_fixed(buf, len, w->floor_fraction, 2); return;
    case C_CHECK: fmt_check(buf, len, &w->check); return;
    case C_MODEL_EFF: fmt_percent(buf, len, w->predicted_efficiency); return;
    case C_MEASURED_EFF: fmt_percent(buf, len, w->measured_efficiency); return;
    case C_AGREEMENT: fmt_agreement(buf, len, row_agreement(w)); return;
    }
    buf[0] = '\0';
}

/* Writes one line: the label column, then each column right-aligned (the
 * check column, last and of any width, left-aligned); no trailing blanks. */
static void put_line(struct strbuf *b, const struct layout *l, const char *first, char cells[][CELL_LEN]) {
    char line[2048];
    int n = snprintf(line, sizeof line, "%-*s", l->first_width, first);
    for (int i = 0; i < l->ncols && n >= 0 && (size_t)n < sizeof line; i++) {
        int w = l->width[i] ? l->width[i] : 0;
        if (l->cols[i] == C_CHECK)
            n += snprintf(line + n, sizeof line - (size_t)n, "%s%s", l->gap[i], cells[i]);
        else
            n += snprintf(line + n, sizeof line - (size_t)n, "%s%*s", l->gap[i], w, cells[i]);
    }
    size_t end = strlen(line);
    while (end && line[end - 1] == ' ') end--;
    strbuf_printf(b, "%.*s\n", (int)end, line);
}

/* What the ratio columns hold, and how far the other figure (median over
 * median) is from it in this table, into buf. */
static const char *ratio_words(const struct dv_table *t, const struct dv_row *base, size_t len, char *buf) {
    double most = 0;
    int any = 0;
    for (unsigned r = 0; r < t->nrows && r < DV_MAX_ROWS; r++) {
        const struct dv_row *w = &t->rows[r];
        if (!isfinite(w->ratio) || !isfinite(w->ratio_of_medians)) continue;
        any = 1;
        if (fabs(w->ratio - w->ratio_of_medians) > most) most = fabs(w->ratio - w->ratio_of_medians);
    }
    int n = snprintf(buf, len,
                     "the median over the rounds of each row's time over the %s row's in the same round"
                     " (JSON ratio, ratio_ci), with its 95%% interval from the paired rounds",
                     base->label);
    if (any && n > 0 && (size_t)n < len)
        snprintf(buf + n, len - (size_t)n,
                 "; each median over the %s row's median (JSON ratio_of_medians) is within %.4f of it here",
                 base->label, most);
    return buf;
}

/* Why sampling stopped and how well it knew the ratios then, the rounds it
 * dropped, the timer's step, and what the spread's flags mean where a row
 * has one. */
static void stop_text(struct strbuf *b, const struct dv_table *t) {
    const unsigned rounds = t->nrows ? t->rows[0].time_ms.samples : 0;
    const struct dv_row *worst =
        t->worst_row >= 0 && (unsigned)t->worst_row < t->nrows ? &t->rows[t->worst_row] : NULL;
    if (t->stop_reason[0]) { /* a document that says why */
        strbuf_printf(b, "stopped: %s after %u rounds, %.1f ms of GPU time: ", t->stop_reason, rounds, t->gpu_time_ms);
        if (t->intervals_ok) strbuf_printf(b, "every ratio within +-%.2f%% at 95%%", 100.0 * t->halfwidth_target);
        else if (worst)
            strbuf_printf(b, "%s known to +-%.2f%%, over the +-%.2f%% target", worst->label, 100.0 * t->worst_halfwidth,
                      100.0 * t->halfwidth_target);
        else strbuf_printf(b, "no interval within the +-%.2f%% target", 100.0 * t->halfwidth_target);
        if (t->intervals_ok && worst) strbuf_printf(b, " (widest: %s +-%.2f%%)", worst->label, 100.0 * t->worst_halfwidth);
        if (t->nrows && t->rows[0].rounds_dropped)
            strbuf_printf(b, "; %u rounds dropped, sampled under 75%% of the rated SM clock", t->rows[0].rounds_dropped);
        if (isfinite(t->timer_resolution_ms) && t->timer_resolution_ms > 0)
            strbuf_printf(b, "; intervals widened by half the timer's %.3f us step", 1e3 * t->timer_resolution_ms);
        strbuf_printf(b, "\n");
    }
    unsigned flags = 0;
    for (unsigned r = 0; r < t->nrows && r < DV_MAX_ROWS; r++) flags |= t->rows[r].spread_flags;
    strbuf_printf(b, "noise is stdev / mean over each row's samples, reported beside the intervals (the stop rule"
                 " reads the intervals)");
    if (flags & SPREAD_TAIL) strbuf_printf(b, "; tail: a few samples far out, the median well known");
    if (flags & SPREAD_SPLIT) strbuf_printf(b, "; split: the median between two clusters");
    if (flags & SPREAD_DRIFT) strbuf_printf(b, "; drift: the level moved during the run");
    strbuf_printf(b, "\n");
}

/* The footer of a scenario table: what the baseline is, what each model and
 * measured column is out of, and the agreement mark. */
static void scenario_footer(struct strbuf *b, const struct dv_table *t, const struct dv_row *base, int measured,
                            int intervals) {
    char words[512];
    if (base && t->experiment[0])
        strbuf_printf(b, "baseline: row \"%s\" (a row that names another is over that one: vs below)\n", base->label);
    else if (base)
        strbuf_printf(b, "baseline: the same work grouped so each warp runs one path (row \"%s\")\n",
                  base->label);
    else
        strbuf_printf(b, "baseline: the same work grouped so each warp runs one path\n");
    if (intervals && base) strbuf_printf(b, "vs baseline, ratio [95%% interval]: %s\n", ratio_words(t, base, sizeof words, words));
    else if (measured) strbuf_printf(b, "vs baseline: each median over the baseline row's median\n");
    strbuf_printf(b, "model ratio: the issued path work over the baseline's\n");
    strbuf_printf(b, "model eff.: max / sum of the path lengths in a warp for branches, useful / issued"
                 " lane-iterations for loops (\"Branch Divergence and Predication Performance in Warps\")\n");
    if (measured) {
        strbuf_printf(b,
                      "measured eff.: the same figure from times: the median of the row where every"
                      " lane runs its warp's longest path (or of the baseline) over the row's\n");
        strbuf_printf(b,
                      "agreement: vs baseline / model ratio; * = model and measurement differ by"
                      " more than %.0f%%\n",
                      100.0 * AGREEMENT_TOLERANCE);
    }
}

/* Part 2 read both ways: the lesson's sentence, then one line per reading
 * with its figure, the model's and what it prices. */
static void readings_text(struct strbuf *b, const struct dv_table *t) {
    struct dv_reading rd[DV_MAX_READINGS];
    unsigned n = experiment_readings(t, rd);
    if (!n) return;
    strbuf_printf(b, "read both ways: %s\n", DV_READINGS_LESSON);
    for (unsigned i = 0; i < n; i++) {
        char ratio[32], predicted[32];
        fmt_fixed(ratio, sizeof ratio, rd[i].ratio, 2);
        fmt_fixed(predicted, sizeof predicted, rd[i].predicted, 2);
        strbuf_printf(b, "  %-8s  %5s (predicted %s)  %s\n", experiment_reading_kind_name(rd[i].kind), ratio, predicted,
                      rd[i].sentence);
    }
}

/* The table's head and rows: each column as wide as its widest cell, the
 * label column as wide as its longest label with its footnote mark, so
 * every row keeps the same column offsets. */
static void table_rows_text(struct strbuf *b, const struct dv_table *t, struct layout *l) {
    char cells[MAX_COLS][CELL_LEN], label[PREDICATE_TEXT_LEN + 16], rule[PREDICATE_TEXT_LEN + 16];
    unsigned notes = 0;
    for (unsigned i = 0; i < t->nrows && i < DV_MAX_ROWS; i++) {
        if (!t->rows[i].comparable) notes++;
        int len = (int)strlen(t->rows[i].label) +
                  (t->rows[i].comparable ? 0 : snprintf(NULL, 0, " [%u]", notes));
        if (len > l->first_width && len < (int)sizeof rule) l->first_width = len;
    }
    notes = 0;
    for (int i = 0; i < l->ncols; i++) {
        const char *h = col_header(l, l->cols[i]);
        if ((int)strlen(h) > l->width[i] && l->cols[i] != C_CHECK) l->width[i] = (int)strlen(h);
        snprintf(cells[i], sizeof cells[i], "%s", h);
    }
    /* Widen each column to its widest cell (the interval, a flagged noise). */
    for (unsigned r = 0; r < t->nrows && r < DV_MAX_ROWS; r++) {
        char cell[CELL_LEN];
        for (int i = 0; i < l->ncols; i++) {
            if (l->cols[i] == C_CHECK) continue;
            col_cell(l->cols[i], &t->rows[r], cell, sizeof cell);
            if ((int)strlen(cell) > l->width[i]) l->width[i] = (int)strlen(cell);
        }
    }
    strbuf_printf(b, "%s\n", t->title);
    put_line(b, l, l->first_header, cells);
    for (int i = 0; i < l->ncols; i++) {
        int w = l->cols[i] == C_CHECK ? (int)strlen("check") : l->width[i];
        memset(cells[i], '-', (size_t)w);
        cells[i][w] = '\0';
    }
    memset(rule, '-', (size_t)l->first_width);
    rule[l->first_width] = '\0';
    put_line(b, l, rule, cells);

    for (unsigned r = 0; r < t->nrows && r < DV_MAX_ROWS; r++) {
        const struct dv_row *w = &t->rows[r];
        if (w->comparable) snprintf(label, sizeof label, "%s", w->label);
        else snprintf(label, sizeof label, "%s [%u]", w->label, ++notes);
        for (int i = 0; i < l->ncols; i++) col_cell(l->cols[i], w, cells[i], sizeof cells[i]);
        put_line(b, l, label, cells);
    }
}

/* The table's footer: what the columns are out of, how to read the ratio,
 * the stop, the kernel, then the footnotes, the note and Part 2's
 * readings. */
static void table_footer_text(struct strbuf *b, const struct dv_table *t, const struct layout *l, int measured) {
    char words_buf[512];
    const int scenario = is_scenario_table(t);
    if (t->nrows) {
        unsigned wpb = t->rows[0].warps_per_block, tpb = t->rows[0].threads_per_block;
        int same = 1;
        for (unsigned r = 1; r < t->nrows && r < DV_MAX_ROWS; r++)
            same &= t->rows[r].warps_per_block == wpb && t->rows[r].threads_per_block == tpb;
        if (same && !is_kernel_table(t) && !scenario)
            strbuf_printf(b, "warps split is out of the %u warps in a block, computed from the predicate\n", wpb);
        else if (same) strbuf_printf(b, "warps split is out of the %u warps in a block\n", wpb);
        if (same && !scenario)
            strbuf_printf(b,
                          "threads on A is out of the %u threads in a block; a-b is the range over"
                          " the blocks of the grid\n",
                          tpb);
    }
    const struct dv_row *base = t->baseline_row >= 0 && (unsigned)t->baseline_row < t->nrows
                                    ? &t->rows[t->baseline_row] : NULL;
    const int intervals = measured && table_has_intervals(t);
    if (scenario)
        scenario_footer(b, t, base, measured, intervals);
    else if (base && intervals)
        strbuf_printf(b, "%s, ratio [95%% interval]: %s; predicted: the path-run model's ratio\n", l->ratio_header,
                  ratio_words(t, base, sizeof words_buf, words_buf));
    else if (base && measured)
        strbuf_printf(b, "%s: each median over the %s row's median; predicted: the path-run model's ratio\n",
                  l->ratio_header, base->label);
    else if (base)
        strbuf_printf(b, "predicted: the path-run model's ratio against the %s row\n", base->label);
    if (intervals) stop_text(b, t);
    else if (measured)
        strbuf_printf(b, "noise is stdev / mean over each row's samples; limit %.2f%%%s\n",
                  100.0 * t->noise_limit, t->noise_ok ? "" : ", exceeded");
    if (t->kernel[0] && t->kernel_iterations[0])
        strbuf_printf(b, "kernel: %s, %s iterations\n", t->kernel, t->kernel_iterations);
    else if (t->kernel[0]) strbuf_printf(b, "kernel: %s\n", t->kernel);
    unsigned notes = 0;
    for (unsigned r = 0; r < t->nrows && r < DV_MAX_ROWS; r++)
        if (!t->rows[r].comparable)
            strbuf_printf(b, "[%u] %s: not comparable: %s\n", ++notes, t->rows[r].label,
                          t->rows[r].comparable_reason[0] ? t->rows[r].comparable_reason
                                                          : "different work from the baseline");
    if (t->note[0]) strbuf_printf(b, "note: %s\n", t->note);
    readings_text(b, t);
}

static void table_text(struct strbuf *b, const struct dv_table *t, int measured) {
    struct layout l;
    layout_table(t, measured, &l);
    table_rows_text(b, t, &l);
    table_footer_text(b, t, &l, measured);
}

/* One row of the testimony's table: "-" where a pass was not taken. */
static void testimony_row_text(struct strbuf *b, const struct dv_row *w, int width) {
    const struct dv_observed *o = &w->observed;
    const struct dv_counters *c = &w->counters;
    char split[32] = "-", runs[32] = "-", lanes[48] = "-", verdict[32] = "-";
    char lpi[32] = "-", div[32] = "-", model[32] = "-", ipf[32] = "-", ivb[32] = "-";
    if (o->present) {
        fmt_count(split, sizeof split, &o->split_warps);
        fmt_fixed(runs, sizeof runs, o->path_runs.per_block, 2);
        char a[16], bb[16];
        fmt_fixed(a, sizeof a, o->lanes_per_run[0], 1);
        fmt_fixed(bb, sizeof bb, o->lanes_per_run[1], 1);
        snprintf(lanes, sizeof lanes, "%s / %s", a, bb);
        if (o->agrees) snprintf(verdict, sizeof verdict, "agrees");
        else if (o->predicated) snprintf(verdict, sizeof verdict, "predicated");
        else snprintf(verdict, sizeof verdict, "DIFFERS");
    }
    if (c->present) {
        fmt_fixed(lpi, sizeof lpi, c->threads_per_inst, 1);
        fmt_fixed(div, sizeof div, c->divergent_per_block, 2);
        fmt_fixed(model, sizeof model, c->model_split_per_block, 2);
        fmt_fixed(ipf, sizeof ipf, c->inst_per_fma, 3);
        fmt_fixed(ivb, sizeof ivb, c->inst_vs_baseline, 2);
    }
    strbuf_printf(b, "%-*s   %11s   %9s   %13s   %-10s   %12s   %15s   %11s   %9s   %13s\n", width, w->label, split,
                  runs, lanes, verdict, lpi, div, model, ipf, ivb);
}

/* The GPU's testimony beside a measured table: per row what the witness saw
 * (split warps and path-runs per block, active lanes per run of each path,
 * agreement with the model) and what the counters say (active lanes per
 * instruction, divergent branch targets per block beside the model's split
 * warps, warp instructions per warp-wide FMA). "-" where not taken. */
static void testimony_text(struct strbuf *b, const struct dv_table *t, unsigned grid) {
    int any = 0, width = (int)strlen("GPU saw");
    for (unsigned r = 0; r < t->nrows && r < DV_MAX_ROWS; r++) {
        any |= t->rows[r].observed.present || t->rows[r].counters.present;
        int len = (int)strlen(t->rows[r].label);
        if (len > width) width = len;
    }
    if (!any) return;
    strbuf_printf(b, "GPU's testimony (untimed: a witness launch and a profiled launch per row)\n");
    strbuf_printf(b, "%-*s   %11s   %9s   %13s   %-10s   %12s   %15s   %11s   %9s   %13s\n", width, "GPU saw",
                  "split warps", "path-runs", "lanes A / B", "witness", "lanes/instr", "divergent/block", "model split",
                  "instr/FMA", "instr vs base");
    char rule[PREDICATE_TEXT_LEN + 16];
    memset(rule, '-', (size_t)width);
    rule[width] = '\0';
    strbuf_printf(b,
                  "%s   -----------   ---------   -------------   ----------   ------------   ---------------   "
                  "-----------   ---------   -------------\n",
                  rule);
    for (unsigned r = 0; r < t->nrows && r < DV_MAX_ROWS; r++) testimony_row_text(b, &t->rows[r], width);
    for (unsigned r = 0; r < t->nrows && r < DV_MAX_ROWS; r++) {
        const struct dv_observed *o = &t->rows[r].observed;
        const struct dv_counters *c = &t->rows[r].counters;
        if (o->present && !o->agrees) strbuf_printf(b, "%s: witness: %s\n", t->rows[r].label, o->verdict);
        if (c->present && strncmp(c->verdict, "agrees", 6) != 0)
            strbuf_printf(b, "%s: counters: %s\n", t->rows[r].label, c->verdict);
        /* Where time and model part, the GPU's instruction count says why. */
        const struct dv_row *w = &t->rows[r];
        if (c->present && (int)r != t->baseline_row && w->comparable && isfinite(w->ratio) &&
            w->predicted_ratio > 0 && fabs(w->ratio / w->predicted_ratio - 1) > AGREEMENT_TOLERANCE &&
            isfinite(c->inst_vs_baseline) && (unsigned)t->baseline_row < t->nrows)
            strbuf_printf(b,
                          "%s: time %.2fx against the model's %.2fx; the GPU issued %.2fx the baseline's warp "
                          "instructions (%.3f per FMA against %.3f)\n",
                          w->label, w->ratio, w->predicted_ratio, c->inst_vs_baseline, c->inst_per_fma,
                          t->rows[t->baseline_row].counters.inst_per_fma);
    }
    strbuf_printf(b,
                  "split warps and path-runs are per block%s; divergent/block and model split per launch; "
                  "instr/FMA: warp instructions per 32 FMAs (1.0 = nothing but the FMAs); instr vs base: warp "
                  "instructions over the baseline row's, the ratio the GPU's own count predicts\n",
                  is_kernel_table(t) || is_scenario_table(t) ? " (per iteration where the branch is in the loop)" : "");
    /* Where the witness ran on the blocks that stand for a grid, say so. */
    unsigned lo = 0, hi = 0;
    for (unsigned r = 0; r < t->nrows && r < DV_MAX_ROWS; r++) {
        const struct dv_observed *o = &t->rows[r].observed;
        if (!o->present || !o->blocks_witnessed) continue;
        if (!lo || o->blocks_witnessed < lo) lo = o->blocks_witnessed;
        if (o->blocks_witnessed > hi) hi = o->blocks_witnessed;
    }
    if (!is_scenario_table(t) && lo && grid && lo < grid) {
        if (lo == hi) strbuf_printf(b, "witness: run on %u of the grid's %u blocks, ", lo, grid);
        else strbuf_printf(b, "witness: run on %u to %u of the grid's %u blocks, ", lo, hi, grid);
        strbuf_printf(b, "the blocks that stand for each row's grid (the others take the paths of the block they "
                         "repeat, and its record)\n");
    }
}

/* ---- the layout for the other writers (report_layout.h) ------------------ */

void report_layout_of(const struct dv_table *t, int measured, struct report_layout *out) {
    struct layout l;
    layout_table(t, measured, &l);
    memset(out, 0, sizeof *out);
    out->first_header = l.first_header;
    out->ncols = l.ncols;
    for (int i = 0; i < l.ncols && i < REPORT_LAYOUT_MAX_COLS; i++) {
        out->col[i] = (int)l.cols[i];
        out->numeric[i] = l.cols[i] != C_CHECK;
        snprintf(out->header[i], sizeof out->header[i], "%s", col_header(&l, l.cols[i]));
    }
}

void report_layout_cell(const struct report_layout *l, int i, const struct dv_row *w, char *buf, size_t len) {
    if (i < 0 || i >= l->ncols) {
        if (len) buf[0] = '\0';
        return;
    }
    char cell[CELL_LEN];
    col_cell((enum col)l->col[i], w, cell, sizeof cell);
    snprintf(buf, len, "%s", cell);
}

/* The lines of a profile's compact listing: its branch region, at most this
 * many runs (the first ones and the last ones when there are more). */
#define LISTING_TEXT_RUNS 16
#define LISTING_TEXT_HEAD 12

static void run_text(struct strbuf *b, const struct listing_run *r) {
    char lanes[16], on[16], line[16];
    fmt_fixed(lanes, sizeof lanes, r->lanes, 1);
    fmt_fixed(on, sizeof on, r->warp ? (double)r->pred_on / (double)r->warp : NAN, 1);
    if (r->line) snprintf(line, sizeof line, "%u", r->line);
    else snprintf(line, sizeof line, "-");
    strbuf_printf(b, "    %04x  %-10s %4u %5s %6s %7s %12llu  %s%s\n", r->pc, listing_kind_name(r->region), r->count, line, lanes, on,
              r->warp, r->sass[0] ? r->sass : "(no SASS text)", r->count > 1 && r->sass[0] ? " ..." : "");
}

/* One row's profile: what it was collected on, its regions with their lanes
 * and stall reasons, and the runs from the branch to the reconvergence. */
static void listing_text(struct strbuf *b, const char *label, const struct listing *l) {
    strbuf_printf(b, "%s: %s, %s, %u block%s of %ux%u threads (x%.6g for the grid), %.0f%% of instructions on a source line",
              label, l->source, l->kernel, l->grid_blocks, l->grid_blocks == 1 ? "" : "s", l->block_x, l->block_y, l->scale,
              100.0 * l->mapped);
    if (l->cached) strbuf_printf(b, ", from the cache of an identical launch collected %s", l->collected_utc);
    strbuf_printf(b, "\n");
    if (!l->disassembler[0]) strbuf_printf(b, "  no SASS text: %s\n", l->disassembly_reason);
    strbuf_printf(b, "  regions:");
    for (unsigned k = 0; k < l->nregions; k++) {
        char lanes[16];
        fmt_fixed(lanes, sizeof lanes, l->regions[k].lanes, 1);
        strbuf_printf(b, "%s %s %u instr, %s lanes", k ? " |" : "", listing_kind_name(l->regions[k].kind),
                  l->regions[k].instructions, lanes);
    }
    strbuf_printf(b, "\n");
    int stalls = 0;
    for (unsigned k = 0; k < l->nregions; k++) {
        const struct listing_region *r = &l->regions[k];
        if (!r->nstalls || !(listing_kind_is_path(r->kind) || r->kind == LISTING_BEFORE || r->kind == LISTING_TAIL))
            continue;
        strbuf_printf(b, "%s %s", stalls++ ? " |" : "  stall samples:", listing_kind_name(r->kind));
        for (unsigned t = 0; t < r->nstalls; t++)
            strbuf_printf(b, "%s %s %.0f%%", t ? "," : "", r->stalls[t].reason, 100.0 * r->stalls[t].share);
    }
    if (stalls) strbuf_printf(b, "\n");
    struct listing_shape shape;
    listing_shape(l, &shape);
    if (shape.branching != LISTING_SHAPE_NONE) strbuf_printf(b, "  SASS: %s\n", shape.text);
    /* The branch region: from the last run before the paths (the branch) to
     * the last run of the paths or of the reconvergence. */
    unsigned first = l->nruns, last = 0;
    for (unsigned k = 0; k < l->nruns; k++) {
        const enum listing_kind kind = l->runs[k].region;
        if (listing_kind_is_path(kind) || kind == LISTING_RECONVERGE || kind == LISTING_TAIL) {
            if (first == l->nruns) first = k ? k - 1 : 0;
            last = k;
        }
    }
    if (first == l->nruns) return;
    strbuf_printf(b, "      pc  region        n  line  lanes  pred-on   warp execs  sass\n");
    const unsigned n = last - first + 1;
    for (unsigned k = first; k <= last; k++) {
        if (n > LISTING_TEXT_RUNS && k == first + LISTING_TEXT_HEAD) {
            const unsigned skip = n - LISTING_TEXT_RUNS + 1;
            strbuf_printf(b, "    ... %u more runs (the document lists every one)\n", skip);
            k += skip - 1;
            continue;
        }
        run_text(b, &l->runs[k]);
    }
}

/* The instruction profiles of a measured table, one block per row. */
static void instructions_text(struct strbuf *b, const struct dv_table *t) {
    int any = 0;
    for (unsigned r = 0; r < t->nrows && r < DV_MAX_ROWS; r++) any |= t->rows[r].instructions != NULL;
    if (!any) return;
    strbuf_printf(b, "GPU's instructions (untimed: one profiled launch per row on the blocks that stand for its grid; counts for "
                 "the whole grid; lanes: thread executions per warp execution, pred-on: of them predicated on)\n");
    for (unsigned r = 0; r < t->nrows && r < DV_MAX_ROWS; r++)
        if (t->rows[r].instructions) listing_text(b, t->rows[r].label, t->rows[r].instructions);
}

char *report_text(const struct dv_report *r) {
    struct strbuf b = STRBUF_INIT;
    const struct dv_device *d = &r->device;
    const struct dv_config *c = &r->config;

    if (d->present || d->name[0]) {
        strbuf_printf(&b, "GPU: %s (compute capability %d.%d)", d->name, d->cc_major, d->cc_minor);
        /* The kernel module release names the driver; the CUDA level beside
         * it says what that driver supports. */
        if (d->nvidia_driver_version[0]) {
            strbuf_printf(&b, ", driver %.*s", (int)sizeof d->nvidia_driver_version, d->nvidia_driver_version);
            if (d->driver_version > 0)
                strbuf_printf(&b, ", CUDA %d.%d", d->driver_version / 1000, (d->driver_version % 1000) / 10);
        }
        strbuf_printf(&b, "\n");
    } else strbuf_printf(&b, "GPU: none (%s)\n", d->reason[0] ? d->reason : "no device");
    if (d->sm_count > 0) strbuf_printf(&b, "%d SMs, warp size %d, ", d->sm_count, d->warp_size ? d->warp_size : 32);
    else strbuf_printf(&b, "warp size %d, ", d->warp_size ? d->warp_size : 32);
    if (c->block_y > 1)
        strbuf_printf(&b, "%u blocks x %u (%ux%u) threads = %llu threads\n", c->blocks, c->threads_per_block,
                      c->block_x, c->block_y, c->threads);
    else strbuf_printf(&b, "%u blocks x %u threads = %llu threads\n", c->blocks, c->threads_per_block, c->threads);
    strbuf_printf(&b, "%u multiply-adds per thread, %llu bytes moved per launch\n", c->iterations, c->bytes_per_launch);
    if (c->blocks_auto)
        strbuf_printf(&b, "blocks: auto, %s\n", c->blocks_reason[0] ? c->blocks_reason : "chosen by the runner");
    if (isfinite(d->measured_sm_clock_mhz) && d->measured_sm_clock_mhz > 0) {
        strbuf_printf(&b, "SM clock: measured %.0f MHz", d->measured_sm_clock_mhz);
        if (isfinite(d->rated_sm_clock_mhz) && d->rated_sm_clock_mhz > 0)
            strbuf_printf(&b, ", rated %.0f MHz", d->rated_sm_clock_mhz);
        strbuf_printf(&b, "\n");
    }
    if (isfinite(c->fma_floor_ms) && c->fma_floor_ms > 0) {
        strbuf_printf(&b, "FMA floor: %.3f ms per launch (%llu FMAs", c->fma_floor_ms, c->fmas_per_launch);
        if (d->sm_count > 0 && d->fp32_lanes_per_sm > 0 && d->measured_sm_clock_mhz > 0)
            strbuf_printf(&b, " / (%d SMs x %d FP32 lanes x %.0f MHz)", d->sm_count, d->fp32_lanes_per_sm,
                          d->measured_sm_clock_mhz);
        strbuf_printf(&b, ")\n");
    }
    for (unsigned i = 0; i < r->ntables && i < DV_MAX_TABLES; i++) {
        strbuf_printf(&b, "\n");
        table_text(&b, &r->tables[i], r->measured);
        report_experiment_text(&b, &r->tables[i], r->measured);
        if (r->measured) testimony_text(&b, &r->tables[i], c->blocks);
        if (r->measured) instructions_text(&b, &r->tables[i]);
    }
    report_findings_text(&b, r);
    report_sort_text(&b, r); /* data-sort */
    const struct dv_testimony *tm = &r->testimony;
    if (r->measured && (tm->witness_requested || tm->counters_requested || tm->witness_reason[0] ||
                        tm->counters_reason[0])) {
        strbuf_printf(&b, "\ntestimony: witness %s", tm->witness_taken ? "taken" : "not taken");
        if (tm->witness_taken) strbuf_printf(&b, " (%.1f ms host time)", tm->witness_ms);
        else if (tm->witness_reason[0]) strbuf_printf(&b, " (%s)", tm->witness_reason);
        strbuf_printf(&b, "; counters %s", tm->counters_taken ? "taken" : "null");
        if (tm->counters_taken) strbuf_printf(&b, " (%.1f ms host time, %s)", tm->counters_ms, tm->counters_library);
        else if (tm->counters_reason[0]) strbuf_printf(&b, ": %s", tm->counters_reason);
        strbuf_printf(&b, "\n");
    }
    if (r->measured && tm->instructions_requested) {
        strbuf_printf(&b, "instructions: %s (%.1f ms host time, %u row%s from the cache)", tm->instructions_taken ? "taken" : "null",
                  tm->instructions_ms, tm->instructions_cached_rows, tm->instructions_cached_rows == 1 ? "" : "s");
        if (!tm->instructions_taken && tm->instructions_reason[0]) strbuf_printf(&b, ": %s", tm->instructions_reason);
        strbuf_printf(&b, "\n");
    }
    if (r->nwarnings) strbuf_printf(&b, "\n");
    for (unsigned i = 0; i < r->nwarnings && i < DV_MAX_WARNINGS; i++)
        strbuf_printf(&b, "warning: %s\n", r->warnings[i]);
    return strbuf_take(&b);
}
