/* report_md.c -- struct dv_report as Markdown: one pipe table per report
 * table (GitHub's table extension, which CommonMark renderers of course
 * pages and wikis read), for pasting into a page or a handout.
 *
 * The columns and cells are the transcript's (report_layout.h), so a table
 * here reads exactly as the text layout does; the GPU's testimony, where it
 * was taken, adds two columns (split warps per block as the witness saw
 * them, warp instructions against the baseline row's). After each table come
 * its footnotes, its note and, for Part 2, the two readings. Labels of Part 1
 * rows are expressions and go in code spans; every other text is escaped
 * character by character, and a '|' inside a cell is always written "\|" (a code span
 * too: the table extension splits cells first). Only what can start inline
 * markup is escaped (backslash, backtick, emphasis, links, HTML, the pipe,
 * strike-through, entities), so the source stays readable. The bytes depend
 * on the report alone.
 */
#include "api/report.h"
#include "api/report_experiment.h"
#include "api/report_sort.h"
#include "api/report_layout.h"
#include "api/strbuf.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Plain text, with Markdown's punctuation and the pipe escaped and line
 * breaks as spaces. */
static void put_text(struct strbuf *b, const char *s) {
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '\n' || c == '\r' || c == '\t') strbuf_append(b, " ", 1);
        else if (c < 0x20) continue;
        else if (strchr("\\`*_[]<>|~&", c)) {
            char e[2] = {'\\', (char)c};
            strbuf_append(b, e, 2);
        } else {
            strbuf_append(b, s, 1);
        }
    }
}

/* `s` as a code span: fenced with one more backtick than the longest run
 * inside it, '|' escaped for the table. */
static void put_code(struct strbuf *b, const char *s) {
    size_t run = 0, longest = 0;
    for (const char *p = s; *p; p++) {
        run = *p == '`' ? run + 1 : 0;
        if (run > longest) longest = run;
    }
    char fence[8];
    size_t n = longest + 1 < sizeof fence ? longest + 1 : sizeof fence - 1;
    memset(fence, '`', n);
    fence[n] = '\0';
    strbuf_printf(b, "%s%s", fence, longest ? " " : "");
    for (; *s; s++) {
        if (*s == '|') strbuf_append(b, "\\|", 2);
        else if ((unsigned char)*s >= 0x20) strbuf_append(b, s, 1);
    }
    strbuf_printf(b, "%s%s", longest ? " " : "", fence);
}

static int has_testimony(const struct dv_table *t, int *witness, int *counters) {
    *witness = *counters = 0;
    for (unsigned i = 0; i < t->nrows && i < DV_MAX_ROWS; i++) {
        *witness |= t->rows[i].observed.present;
        *counters |= t->rows[i].counters.present && isfinite(t->rows[i].counters.inst_vs_baseline);
    }
    return *witness || *counters;
}

static void cell_fixed(struct strbuf *b, double v, int decimals) {
    if (isfinite(v)) strbuf_printf(b, " %.*f |", decimals, v);
    else strbuf_printf(b, " - |");
}

static void table_md(struct strbuf *b, const struct dv_table *t, int measured) {
    struct report_layout l;
    report_layout_of(t, measured, &l);
    int witness, counters;
    has_testimony(t, &witness, &counters);
    const int code = strcmp(l.first_header, "predicate") == 0;

    strbuf_printf(b, "## ");
    put_text(b, t->title);
    strbuf_printf(b, "\n\n| %s |", l.first_header);
    for (int i = 0; i < l.ncols; i++) strbuf_printf(b, " %s |", l.header[i]);
    if (witness) strbuf_printf(b, " GPU: split warps per block |");
    if (counters) strbuf_printf(b, " GPU: instructions vs baseline |");
    strbuf_printf(b, "\n| :-- |");
    for (int i = 0; i < l.ncols; i++) strbuf_printf(b, " %s |", l.numeric[i] ? "--:" : ":--");
    if (witness) strbuf_printf(b, " --: |");
    if (counters) strbuf_printf(b, " --: |");
    strbuf_printf(b, "\n");
    unsigned notes = 0;
    for (unsigned r = 0; r < t->nrows && r < DV_MAX_ROWS; r++) {
        const struct dv_row *w = &t->rows[r];
        strbuf_printf(b, "| ");
        if (code) put_code(b, w->label);
        else put_text(b, w->label);
        if (!w->comparable) strbuf_printf(b, " \\[%u\\]", ++notes);
        strbuf_printf(b, " |");
        for (int i = 0; i < l.ncols; i++) {
            char cell[128];
            report_layout_cell(&l, i, w, cell, sizeof cell);
            strbuf_printf(b, " ");
            put_text(b, cell);
            strbuf_printf(b, " |");
        }
        if (witness) cell_fixed(b, w->observed.present ? w->observed.split_warps.per_block : NAN, 2);
        if (counters) cell_fixed(b, w->counters.present ? w->counters.inst_vs_baseline : NAN, 2);
        strbuf_printf(b, "\n");
    }
    strbuf_printf(b, "\n");
    notes = 0;
    for (unsigned r = 0; r < t->nrows && r < DV_MAX_ROWS; r++) {
        const struct dv_row *w = &t->rows[r];
        if (w->comparable) continue;
        strbuf_printf(b, "\\[%u\\] ", ++notes);
        put_text(b, w->label);
        strbuf_printf(b, ": not comparable: ");
        put_text(b, w->comparable_reason[0] ? w->comparable_reason : "different work from the baseline");
        strbuf_printf(b, "\n\n");
    }
    if (t->note[0]) {
        strbuf_printf(b, "Note: ");
        put_text(b, t->note);
        strbuf_printf(b, "\n\n");
    }
    if (t->experiment[0]) { /* the transcript's lines under an experiment's table, as they are */
        struct strbuf x = STRBUF_INIT;
        report_experiment_text(&x, t, measured);
        char *lines = strbuf_take(&x);
        if (lines && lines[0]) { strbuf_printf(b, "```\n%s```\n\n", lines); }
        free(lines);
    }
    struct dv_reading rd[DV_MAX_READINGS];
    unsigned n = experiment_readings(t, rd);
    if (n) {
        put_text(b, DV_READINGS_LESSON);
        strbuf_printf(b, "\n\n");
        for (unsigned i = 0; i < n; i++) {
            char ratio[32], predicted[32];
            snprintf(ratio, sizeof ratio, isfinite(rd[i].ratio) ? "%.2f" : "not measured", rd[i].ratio);
            snprintf(predicted, sizeof predicted, isfinite(rd[i].predicted) ? "%.2f" : "-", rd[i].predicted);
            strbuf_printf(b, "- **%s**: %s (predicted %s): ", experiment_reading_kind_name(rd[i].kind), ratio,
                          predicted);
            put_text(b, rd[i].sentence);
            strbuf_printf(b, "\n");
        }
        strbuf_printf(b, "\n");
    }
}

char *report_markdown(const struct dv_report *r) {
    struct strbuf b = STRBUF_INIT;
    const struct dv_device *d = &r->device;
    const struct dv_config *c = &r->config;
    strbuf_printf(&b, "# Warp divergence: %s\n\n", r->measured ? "measured" : "the model's analysis (not measured)");
    if (d->present || d->name[0]) {
        strbuf_printf(&b, "GPU: ");
        put_text(&b, d->name);
        if (d->cc_major > 0) strbuf_printf(&b, " (compute capability %d.%d)", d->cc_major, d->cc_minor);
        strbuf_printf(&b, "; ");
    }
    strbuf_printf(&b, "%u blocks x %u threads", c->blocks, c->threads_per_block);
    if (c->block_y > 1) strbuf_printf(&b, " (%ux%u)", c->block_x, c->block_y);
    strbuf_printf(&b, "; %u multiply-adds per thread", c->iterations);
    if (r->finished_utc[0]) {
        strbuf_printf(&b, "; finished ");
        put_text(&b, r->finished_utc);
    }
    strbuf_printf(&b, "\n\n");
    for (unsigned i = 0; i < r->ntables && i < DV_MAX_TABLES; i++) table_md(&b, &r->tables[i], r->measured);
    struct strbuf f = STRBUF_INIT;
    report_findings_text(&f, r);
    char *findings = strbuf_take(&f);
    if (findings && findings[0]) strbuf_printf(&b, "```%s```\n\n", findings);
    free(findings);
    struct strbuf ds = STRBUF_INIT; /* data-sort: its map as the transcript writes it */
    report_sort_text(&ds, r);
    char *map = strbuf_take(&ds);
    if (map && map[0]) strbuf_printf(&b, "```%s```\n\n", map);
    free(map);
    for (unsigned i = 0; i < r->nwarnings && i < DV_MAX_WARNINGS; i++) {
        strbuf_printf(&b, "- Warning: ");
        put_text(&b, r->warnings[i]);
        strbuf_printf(&b, "\n");
    }
    return strbuf_take(&b);
}
