/* report_layout.h -- the columns of the lesson's text layout (report_text.c)
 * for the other human-readable writers of api/: the Markdown form writes the
 * very columns and cells the transcript does, so the two cannot disagree,
 * and the chart labels a ratio with its interval as the transcript does.
 * Private to api/.
 */
#ifndef DV_REPORT_LAYOUT_H
#define DV_REPORT_LAYOUT_H

#include <stddef.h>
#include "kernels/model/model/experiment.h"

#define REPORT_LAYOUT_MAX_COLS 12

struct report_layout {
    const char *first_header; /* "predicate", "kernel", "row" */
    int ncols;
    int col[REPORT_LAYOUT_MAX_COLS];     /* report_text.c's column kinds */
    int numeric[REPORT_LAYOUT_MAX_COLS]; /* right-aligned figures        */
    char header[REPORT_LAYOUT_MAX_COLS][48];
};

/* The columns the transcript gives table `t` (with the timing columns when
 * `measured`) into `out`. */
void report_layout_of(const struct dv_table *t, int measured, struct report_layout *out);

/* Row `w`'s ratio with its 95% interval as the transcript writes it
 * ("1.951 [1.948, 1.954]", 4 decimals where 3 would print the interval as
 * a point), "-" without an interval; the chart (report_svg.c) labels its
 * whiskers with the same decimals. */
void report_layout_ratio_ci(const struct dv_row *w, char *buf, size_t len);

/* Column `i`'s cell text for row `w`, as the transcript writes it. */
void report_layout_cell(const struct report_layout *l, int i, const struct dv_row *w, char *buf, size_t len);

#endif /* DV_REPORT_LAYOUT_H */
