/* report_svg.c -- struct dv_report as one SVG chart, the widget's chart for
 * pages that run no script: course pages written in Markdown, PDF handouts,
 * an <img> in a static site.
 *
 * Under the legend, the measurement's GPU, driver, CUDA runtime and date as
 * visible text (an analysis says that nothing was measured). Per table a
 * heading, then per row its label and horizontal bars: the measured ratio
 * (solid) with its 95% interval as a whisker across the bar's end (to
 * scale; none on the baseline row, 1 by definition), the model's predicted
 * ratio (hatched) and, where the hardware counters were read, the GPU's own
 * count of warp instructions against the baseline row's (outlined), each
 * with its value; a dashed line marks 1.00, the baseline. Each table has
 * its own scale (its largest value or interval end, at least 1). The
 * colours are the widget's (static/divergence-widget.css, light scheme):
 * measured #1d4ed8, predicted #7e22ce. The first children are <title> and
 * <desc>: the title names what is drawn, the description gives every figure
 * in words, intervals included, for a screen reader and for anything that
 * shows no picture.
 *
 * The bytes are a function of the report alone: integer coordinates, fixed
 * decimals, the measurement's own date (never the time of drawing), no
 * random id, so the same evidence always draws the same file (an ETag can
 * be a digest of it). The file is valid SVG 1.1 (the W3C DTD;
 * tests/api/forms_check.py checks it with xmllint), carries no script and
 * no external reference, and stays small: the eleven scenario tables with
 * counters and intervals draw in under 20 KiB (20,480 bytes).
 */
#include "api/report.h"
#include "api/report_layout.h"
#include "api/strbuf.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define W 600    /* width of the picture                        */
#define X0 8     /* left margin: labels and bars start here     */
#define XMAX 450 /* a bar of the table's largest value ends here */
#define BAR 14   /* bar height                                  */
#define STEP 18  /* bar pitch                                   */
#define TOP 56   /* the first table's heading starts here       */
#define MEASURED "#1d4ed8" /* the widget's --dw-m                 */
#define PREDICTED "#7e22ce" /* the widget's --dw-p                */

/* Text content: XML's special characters as entities, control characters
 * (which XML 1.0 cannot carry) and bytes that are not UTF-8 as '?'. */
static void put_xml(struct strbuf *b, const char *s) {
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        unsigned c = *p;
        if (c == '&') strbuf_printf(b, "&amp;");
        else if (c == '<') strbuf_printf(b, "&lt;");
        else if (c == '>') strbuf_printf(b, "&gt;");
        else if (c == '"') strbuf_printf(b, "&quot;");
        else if (c < 0x20) strbuf_append(b, "?", 1);
        else if (c < 0x80) strbuf_append(b, (const char *)p, 1);
        else {
            /* A whole, well-formed UTF-8 sequence passes; anything else is '?'. */
            unsigned n = c >= 0xF0 && c < 0xF5 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 && c < 0xE0 ? 2 : 0;
            unsigned k = 1;
            while (n && k < n && (p[k] & 0xC0) == 0x80) k++;
            if (n && k == n) {
                strbuf_append(b, (const char *)p, n);
                p += n;
                continue;
            }
            strbuf_append(b, "?", 1);
        }
        p++;
    }
}

static double gpu_count(const struct dv_row *w) { return w->counters.present ? w->counters.inst_vs_baseline : NAN; }

static int counted(const struct dv_table *t) {
    for (unsigned i = 0; i < t->nrows && i < DV_MAX_ROWS; i++)
        if (isfinite(gpu_count(&t->rows[i]))) return 1;
    return 0;
}

static int row_height(int gpu) { return 20 + (gpu ? 3 : 2) * STEP; }

static unsigned readings_of(const struct dv_table *t, struct dv_reading *rd) { return experiment_readings(t, rd); }

/* Row `i` of `t` has a whisker: measured, not the baseline, an interval. */
static int whisker(const struct dv_table *t, unsigned i) {
    const struct dv_row *w = &t->rows[i];
    return w->measured && (int)i != t->baseline_row && isfinite(w->ratio) && isfinite(w->ratio_ci.lo) &&
           isfinite(w->ratio_ci.hi);
}

/* Where value `v` ends a bar on a scale whose largest value is `max`. */
static int x_of(double v, double max) {
    int x = X0 + (int)lround((XMAX - X0) * (isfinite(v) && v > 0 ? v : 0) / max);
    return x < X0 + 1 ? X0 + 1 : x;
}

static int table_height(const struct dv_table *t) {
    struct dv_reading rd[DV_MAX_READINGS];
    return 28 + (int)t->nrows * row_height(counted(t)) + 22 + 32 * (int)readings_of(t, rd);
}

/* The bar of value `v` (class `cls`) at `y`, and its value beside it. */
static void bar(struct strbuf *b, double v, int y, const char *cls, double max) {
    const int end = x_of(v, max);
    strbuf_printf(b, "<rect class=\"%s\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\"/>", cls, X0, y, end - X0, BAR);
    if (isfinite(v)) strbuf_printf(b, "<text x=\"%d\" y=\"%d\">%.2f\xc3\x97</text>", end + 5, y + 12, v);
    else strbuf_printf(b, "<text x=\"%d\" y=\"%d\">-</text>", end + 5, y + 12);
}

/* Row `w`'s measured bar with the value after its whisker, in the
 * interval's decimals, as the widget draws it; the whisker itself (a line
 * from lo to hi at the bar's middle, a cap at each end, to scale: an
 * interval narrower than a unit draws as one tick) goes onto `paths`, one
 * <path> for a table's whiskers. */
static void whisker_bar(struct strbuf *b, struct strbuf *paths, const struct dv_row *w, int y, double max) {
    const int end = x_of(w->ratio, max), lo = x_of(w->ratio_ci.lo, max), hi = x_of(w->ratio_ci.hi, max);
    char text[96];
    report_layout_ratio_ci(w, text, sizeof text);
    char *sp = strchr(text, ' ');
    if (sp) *sp = '\0';
    strbuf_printf(b, "<rect class=\"m\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\"/>", X0, y, end - X0, BAR);
    strbuf_printf(paths, "M%d %dH%dM%d %dv%dM%d %dv%d", lo, y + BAR / 2, hi, lo, y - 3, BAR + 6, hi, y - 3, BAR + 6);
    strbuf_printf(b, "<text x=\"%d\" y=\"%d\">%s\xc3\x97</text>", (hi + 2 > end ? hi + 2 : end) + 5, y + 12, text);
}

static int table_svg(struct strbuf *b, const struct dv_table *t, int y) {
    const int gpu = counted(t);
    double max = 1;
    for (unsigned i = 0; i < t->nrows && i < DV_MAX_ROWS; i++) {
        const struct dv_row *w = &t->rows[i];
        const double v[4] = {w->measured ? w->ratio : NAN, w->predicted_ratio, gpu_count(w),
                             whisker(t, i) ? w->ratio_ci.hi : NAN};
        for (int k = 0; k < 4; k++)
            if (isfinite(v[k]) && v[k] > max) max = v[k];
    }
    max *= 1.05;
    strbuf_printf(b, "<text class=\"h\" x=\"%d\" y=\"%d\">", X0, y + 16);
    put_xml(b, t->title);
    strbuf_printf(b, "</text>");
    const int top = y + 28;
    struct strbuf paths = STRBUF_INIT;
    for (unsigned i = 0; i < t->nrows && i < DV_MAX_ROWS; i++) {
        const struct dv_row *w = &t->rows[i];
        const int ry = top + (int)i * row_height(gpu);
        strbuf_printf(b, "<text x=\"%d\" y=\"%d\">", X0, ry + 13);
        put_xml(b, w->label);
        if (!w->comparable) strbuf_printf(b, " (not comparable)");
        strbuf_printf(b, "</text>");
        if (whisker(t, i)) whisker_bar(b, &paths, w, ry + 18, max);
        else bar(b, w->measured ? w->ratio : NAN, ry + 18, "m", max);
        bar(b, w->predicted_ratio, ry + 18 + STEP, "p", max);
        if (gpu) bar(b, gpu_count(w), ry + 18 + 2 * STEP, "g", max);
    }
    char *wd = strbuf_take(&paths);
    if (!wd) b->oom = 1; /* a chart without its whiskers is no chart */
    else if (wd[0]) strbuf_printf(b, "<path class=\"w\" d=\"%s\"/>", wd);
    free(wd);
    const int one = x_of(1, max), bottom = top + (int)t->nrows * row_height(gpu);
    strbuf_printf(b, "<line class=\"r\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>", one, top, one, bottom);
    strbuf_printf(b, "<text x=\"%d\" y=\"%d\"%s>1.00 = baseline</text>", one, bottom + 14,
                  one < 70 ? "" : " text-anchor=\"middle\"");
    /* Part 2 read both ways, under its bars. */
    struct dv_reading rd[DV_MAX_READINGS];
    unsigned n = readings_of(t, rd);
    for (unsigned k = 0; k < n; k++) {
        /* Two lines: the figure and what it prices, then which rows. */
        strbuf_printf(b, "<text class=\"h\" x=\"%d\" y=\"%d\">", X0, bottom + 34 + 32 * (int)k);
        if (isfinite(rd[k].ratio)) strbuf_printf(b, "%.2f\xc3\x97", rd[k].ratio);
        else strbuf_printf(b, "not measured");
        strbuf_printf(b, " (model %.2f\xc3\x97): %s</text>", rd[k].predicted,
                      rd[k].kind == DV_READING_SPLIT ? "the cost of splitting a warp"
                                                     : "the cost of asking a question in a loop");
        strbuf_printf(b, "<text x=\"%d\" y=\"%d\">", X0 + 12, bottom + 50 + 32 * (int)k);
        put_xml(b, t->rows[rd[k].row].label);
        strbuf_printf(b, " against ");
        put_xml(b, t->rows[rd[k].against].label);
        strbuf_printf(b, "</text>");
    }
    return y + table_height(t);
}

/* Every figure in words, table by table. */
static void describe(struct strbuf *b, const struct dv_report *r) {
    strbuf_printf(b,
                  "Per row: the measured ratio (with its 95%% interval in brackets), the model's predicted ratio and, "
                  "where the counters were read, the GPU's count of warp instructions, each against the table's "
                  "baseline. ");
    for (unsigned i = 0; i < r->ntables && i < DV_MAX_TABLES; i++) {
        const struct dv_table *t = &r->tables[i];
        put_xml(b, t->title);
        strbuf_printf(b, ": ");
        for (unsigned j = 0; j < t->nrows && j < DV_MAX_ROWS; j++) {
            const struct dv_row *w = &t->rows[j];
            put_xml(b, w->label);
            char ci[96];
            if (whisker(t, j)) {
                report_layout_ratio_ci(w, ci, sizeof ci);
                strbuf_printf(b, " measured %s", ci);
            } else if (w->measured && isfinite(w->ratio)) strbuf_printf(b, " measured %.2f", w->ratio);
            else strbuf_printf(b, " not measured");
            if (isfinite(w->predicted_ratio)) strbuf_printf(b, ", predicted %.2f", w->predicted_ratio);
            if (isfinite(gpu_count(w))) strbuf_printf(b, ", GPU instructions %.2f", gpu_count(w));
            if (!w->comparable) strbuf_printf(b, " (not comparable)");
            strbuf_printf(b, "%s", j + 1 < t->nrows ? "; " : ". ");
        }
        struct dv_reading rd[DV_MAX_READINGS];
        unsigned n = readings_of(t, rd);
        for (unsigned k = 0; k < n; k++) {
            put_xml(b, rd[k].sentence);
            if (isfinite(rd[k].ratio)) strbuf_printf(b, ": %.2f, predicted %.2f. ", rd[k].ratio, rd[k].predicted);
            else strbuf_printf(b, ": not measured, predicted %.2f. ", rd[k].predicted);
        }
    }
}

/* The measurement's provenance as visible text at `y`: "NVIDIA H200 ·
 * driver 580.159.04 · CUDA runtime 13.0 · measured 2026-12-01 22:18 UTC";
 * an analysis says that nothing was measured. */
static void provenance(struct strbuf *b, const struct dv_report *r, int y) {
    const struct dv_device *d = &r->device;
    strbuf_printf(b, "<text class=\"v\" x=\"%d\" y=\"%d\">", X0, y);
    if (!r->measured) {
        strbuf_printf(b, "The model's predictions (an analysis: nothing measured)</text>");
        return;
    }
    put_xml(b, d->name[0] ? d->name : "an unknown GPU");
    if (d->nvidia_driver_version[0]) {
        strbuf_printf(b, " \xc2\xb7 driver ");
        put_xml(b, d->nvidia_driver_version);
    } else if (d->driver_version > 0)
        strbuf_printf(b, " \xc2\xb7 CUDA driver %d.%d", d->driver_version / 1000, (d->driver_version % 1000) / 10);
    if (d->runtime_version > 0)
        strbuf_printf(b, " \xc2\xb7 CUDA runtime %d.%d", d->runtime_version / 1000, (d->runtime_version % 1000) / 10);
    /* "2026-12-01T22:18:38Z" as "2026-12-01 22:18 UTC". */
    const char *f = r->finished_utc;
    if (strlen(f) >= 16 && f[10] == 'T') strbuf_printf(b, " \xc2\xb7 measured %.10s %.5s UTC", f, f + 11);
    else strbuf_printf(b, " \xc2\xb7 date unknown");
    strbuf_printf(b, "</text>");
}

char *report_svg(const struct dv_report *r, const char *title) {
    struct strbuf b = STRBUF_INIT;
    int gpu = 0, whiskers = 0;
    for (unsigned i = 0; i < r->ntables && i < DV_MAX_TABLES; i++) {
        gpu |= counted(&r->tables[i]);
        for (unsigned j = 0; j < r->tables[i].nrows && j < DV_MAX_ROWS; j++) whiskers |= whisker(&r->tables[i], j);
    }
    /* The legend, a line for the whisker's when there is one, the provenance, then the tables. */
    const int first = whiskers ? TOP + 16 : TOP;
    int height = first + 16;
    for (unsigned i = 0; i < r->ntables && i < DV_MAX_TABLES; i++) height += table_height(&r->tables[i]);
    strbuf_printf(&b,
                  "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                  "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%d\" height=\"%d\" "
                  "viewBox=\"0 0 %d %d\">\n<title>",
                  W, height, W, height);
    if (title && title[0]) put_xml(&b, title);
    else {
        strbuf_printf(&b, "Warp divergence");
        if (r->device.name[0]) {
            strbuf_printf(&b, " on ");
            put_xml(&b, r->device.name);
        }
        strbuf_printf(&b, ": the measured ratio beside the model's, per row");
    }
    strbuf_printf(&b, "</title>\n<desc>");
    describe(&b, r);
    strbuf_printf(&b,
                  "</desc>\n"
                  "<style type=\"text/css\">text{font:13px sans-serif;fill:#111}.h{font-weight:bold}.v{font-size:12px}"
                  ".m{fill:" MEASURED "}.p{fill:url(#hatch);stroke:" PREDICTED "}.g{fill:none;stroke:#111}"
                  ".w{fill:none;stroke:#111;stroke-width:2}.r{stroke:#111;stroke-dasharray:3 3}</style>\n"
                  "<defs><pattern id=\"hatch\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" "
                  "patternTransform=\"rotate(45)\"><path d=\"M0 0V6\" stroke=\"" PREDICTED "\" stroke-width=\"2\"/>"
                  "</pattern></defs>\n");
    strbuf_printf(&b, "<rect width=\"%d\" height=\"%d\" fill=\"#fff\"/>\n", W, height);
    strbuf_printf(&b,
                  "<rect class=\"m\" x=\"%d\" y=\"10\" width=\"18\" height=\"12\"/><text x=\"%d\" y=\"21\">measured"
                  "</text><rect class=\"p\" x=\"110\" y=\"10\" width=\"18\" height=\"12\"/><text x=\"134\" "
                  "y=\"21\">predicted (model)</text>",
                  X0, X0 + 24);
    if (gpu)
        strbuf_printf(&b,
                      "<rect class=\"g\" x=\"270\" y=\"10\" width=\"18\" height=\"12\"/><text x=\"294\" y=\"21\">"
                      "GPU count (instructions vs baseline)</text>");
    if (whiskers)
        strbuf_printf(&b, "<path class=\"w\" d=\"M%d 35H%dM%d 29v12M%d 29v12\"/><text x=\"%d\" y=\"40\">measured "
                      "ratio's 95%% interval</text>",
                      X0 + 3, X0 + 15, X0 + 3, X0 + 15, X0 + 24);
    strbuf_printf(&b, "\n");
    provenance(&b, r, first - 16);
    strbuf_printf(&b, "\n");
    int y = first;
    for (unsigned i = 0; i < r->ntables && i < DV_MAX_TABLES; i++) {
        y = table_svg(&b, &r->tables[i], y);
        strbuf_printf(&b, "\n");
    }
    strbuf_printf(&b, "</svg>\n");
    return strbuf_take(&b);
}
