/* report_csv.c -- struct dv_report as CSV (RFC 4180): one record per row of
 * every table, for a spreadsheet or a plotting script.
 *
 * One header line, then per table its rows (kind "row"; an experiment's
 * rows fill the columns after gpu_instructions_vs_baseline) and, for Part 2,
 * its two readings (kind "reading": name is the reading's kind, label its
 * sentence, ratio and predicted_ratio its figures). Figures are written as
 * "%.6g" (plenty for a ratio or a time in ms, and the same text on every
 * machine); a value that is not there (not measured, not taken) is an empty
 * field. The 95% intervals of the ratio and of the median time (the
 * document's ratio_ci and median_ci_ms) come last, so a script that reads
 * the columns by position reads the earlier ones where it did before.
 * Fields holding a comma, a quote or a line break are quoted, quotes
 * doubled; records end in CRLF.
 */
#include "api/report.h"
#include "api/strbuf.h"
#include "kernels/model/listing/listing_shape.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *const columns[] = {
    "table",
    "table_title",
    "kind",
    "name",
    "label",
    "kernel",
    "baseline",
    "comparable",
    "warps_per_block",
    "warps_split_min",
    "warps_split_max",
    "threads_per_block",
    "threads_on_a_min",
    "threads_on_a_max",
    "path_runs_per_block",
    "predicted_ratio",
    "predicted_efficiency",
    "median_ms",
    "ratio",
    "noise",
    "floor_fraction",
    "measured_efficiency",
    "check_ok",
    "gpu_split_warps_per_block",
    "gpu_instructions_vs_baseline",
    "ratio_ci_lo",
    "ratio_ci_hi",
    "median_ci_lo_ms",
    "median_ci_hi_ms",
    /* The experiments' (empty for any other row): what the row varies, what
     * its ratio is over, its work, its SASS and its join. */
    "versus",
    "thread_fmas",
    "point_arrangement",
    "point_k",
    "point_la",
    "point_lb",
    "point_variant",
    "sass_branching",
    "sass_guarded_lanes",
    "sass_join_lanes",
    "join_warps",
    "join_reconverged_warps",
    "join_clock_spread_median",
    /* arithmetic intensity (empty for any other row): the point, the DRAM
     * pass's bytes, the roofline figures and the side of the table's ridge */
    "intensity_fmas",
    "intensity_loads",
    "intensity_flop_per_byte",
    "intensity_dram_bytes",
    "intensity_flop_rate",
    "intensity_dram_gbs",
    "intensity_bound",
    "roofline_ridge",
};
#define NCOLUMNS (sizeof columns / sizeof columns[0])

static void field(struct strbuf *b, const char *s, int first) {
    if (!first) strbuf_append(b, ",", 1);
    if (!strpbrk(s, ",\"\r\n")) {
        strbuf_append(b, s, strlen(s));
        return;
    }
    strbuf_append(b, "\"", 1);
    for (; *s; s++) {
        if (*s == '"') strbuf_append(b, "\"\"", 2);
        else strbuf_append(b, s, 1);
    }
    strbuf_append(b, "\"", 1);
}

static void number(struct strbuf *b, double v, int present) {
    char buf[40] = "";
    if (present && isfinite(v)) snprintf(buf, sizeof buf, "%.6g", v);
    field(b, buf, 0);
}

static void whole(struct strbuf *b, unsigned long long v) {
    char buf[32];
    snprintf(buf, sizeof buf, "%llu", v);
    field(b, buf, 0);
}

/* The experiment columns of row `w` of `t` (empty where they do not apply). */
static void experiment_fields(struct strbuf *b, const struct dv_table *t, const struct dv_row *w) {
    const unsigned r = (unsigned)(w - t->rows);
    field(b, w->versus ? t->rows[dv_row_reference(t, r)].name : "", 0);
    if (w->kernel == DV_KERNEL_SCENARIO) whole(b, w->thread_fmas);
    else field(b, "", 0);
    const struct dv_point *p = &w->point;
    field(b, p->arrangement, 0);
    number(b, p->k, p->k > 0);
    number(b, p->la, p->la > 0);
    number(b, p->lb, p->lb > 0);
    field(b, p->variant, 0);
    struct listing_shape sh;
    if (w->instructions) listing_shape(w->instructions, &sh);
    field(b, w->instructions ? listing_branching_name(sh.branching) : "", 0);
    number(b, w->instructions ? sh.guarded_lanes : NAN, w->instructions != NULL);
    number(b, w->instructions ? sh.join_lanes : NAN, w->instructions != NULL);
    number(b, w->join.warps, w->join.present);
    number(b, w->join.reconverged, w->join.present);
    number(b, w->join.spread_median, w->join.present);
    const struct dv_intensity *m = &w->intensity; /* arithmetic intensity */
    number(b, m->fmas, m->present && m->fmas);
    number(b, m->loads, m->present && m->loads);
    number(b, m->intensity, m->present);
    number(b, w->counters.dram_bytes_read, m->present && w->counters.dram_present);
    number(b, m->flop_rate, m->present);
    number(b, m->dram_gbs, m->present);
    field(b, m->present ? m->bound : "", 0);
    number(b, t->ridge.ridge, m->present && t->ridge.present);
}

static void row_record(struct strbuf *b, const struct dv_table *t, const struct dv_row *w) {
    const int scenario = w->kernel == DV_KERNEL_SCENARIO;
    field(b, t->id, 1);
    field(b, t->title, 0);
    field(b, "row", 0);
    field(b, w->name, 0);
    field(b, w->label, 0);
    field(b, experiment_kernel_name(w->kernel), 0);
    field(b, t->baseline, 0);
    field(b, w->comparable ? "true" : "false", 0);
    whole(b, w->warps_per_block);
    whole(b, w->warps_split.min);
    whole(b, w->warps_split.max);
    whole(b, w->threads_per_block);
    whole(b, w->threads_on_a.min);
    whole(b, w->threads_on_a.max);
    number(b, w->path_runs.per_block, 1);
    number(b, w->predicted_ratio, 1);
    number(b, w->predicted_efficiency, scenario);
    number(b, w->time_ms.median, w->measured);
    number(b, w->ratio, w->measured);
    number(b, w->time_ms.noise, w->measured);
    number(b, w->floor_fraction, w->measured);
    number(b, w->measured_efficiency, w->measured && scenario);
    field(b, w->measured ? (w->check.ok ? "true" : "false") : "", 0);
    number(b, w->observed.split_warps.per_block, w->observed.present);
    number(b, w->counters.inst_vs_baseline, w->counters.present);
    number(b, w->ratio_ci.lo, w->measured);
    number(b, w->ratio_ci.hi, w->measured);
    number(b, w->median_ci_ms.lo, w->measured);
    number(b, w->median_ci_ms.hi, w->measured);
    experiment_fields(b, t, w);
    strbuf_append(b, "\r\n", 2);
}

static void reading_record(struct strbuf *b, const struct dv_table *t, const struct dv_reading *rd) {
    field(b, t->id, 1);
    field(b, t->title, 0);
    field(b, "reading", 0);
    field(b, experiment_reading_kind_name(rd->kind), 0);
    field(b, rd->sentence, 0);
    for (size_t c = 5; c < NCOLUMNS; c++) {
        if (strcmp(columns[c], "predicted_ratio") == 0) number(b, rd->predicted, 1);
        else if (strcmp(columns[c], "ratio") == 0) number(b, rd->ratio, 1);
        else field(b, "", 0);
    }
    strbuf_append(b, "\r\n", 2);
}

char *report_csv(const struct dv_report *r) {
    struct strbuf b = STRBUF_INIT;
    for (size_t c = 0; c < NCOLUMNS; c++) field(&b, columns[c], c == 0);
    strbuf_append(&b, "\r\n", 2);
    for (unsigned i = 0; i < r->ntables && i < DV_MAX_TABLES; i++) {
        const struct dv_table *t = &r->tables[i];
        for (unsigned j = 0; j < t->nrows && j < DV_MAX_ROWS; j++) row_record(&b, t, &t->rows[j]);
        struct dv_reading rd[DV_MAX_READINGS];
        unsigned n = experiment_readings(t, rd);
        for (unsigned k = 0; k < n; k++) reading_record(&b, t, &rd[k]);
    }
    return strbuf_take(&b);
}
