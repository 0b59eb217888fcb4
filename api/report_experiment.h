/* report_experiment.h -- what the transcript (report_text.c) and the
 * Markdown (report_md.c) say under a compiler-and-warp table beyond its
 * rows: the work the rows share, the k-paths fit, the lanes each path ran
 * with, each predication point's SASS shape, the join records, and the
 * predication map read as a whole. Private to api/.
 */
#ifndef DV_REPORT_EXPERIMENT_H
#define DV_REPORT_EXPERIMENT_H

#include "api/strbuf.h"
#include "kernels/model/model/types.h"

/* The lines under experiment table `t` (nothing for any other table). */
void report_experiment_text(struct strbuf *b, const struct dv_table *t, int measured);

/* The lines that read the report's experiments as a whole (the predication
 * boundary against the guide's old rule); nothing without them. */
void report_findings_text(struct strbuf *b, const struct dv_report *r);

#endif /* DV_REPORT_EXPERIMENT_H */
