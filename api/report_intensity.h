/* report_intensity.h -- the lines under an arithmetic-intensity table in
 * the transcript and the Markdown (report_intensity.c): the measured ridge,
 * then one line a point (F, L, intensity, the lane-split / warp-aligned
 * ratio with its interval, DRAM bytes, FLOP rate, bandwidth, which side of
 * the ridge) and a sentence that reads the penalty curve. Private to api/.
 */
#ifndef DV_REPORT_INTENSITY_H
#define DV_REPORT_INTENSITY_H

#include "api/strbuf.h"
#include "kernels/model/model/types.h"

/* The lines under intensity table `t` (experiment "intensity"; nothing for
 * any other table). */
void report_intensity_text(struct strbuf *b, const struct dv_table *t, int measured);

#endif /* DV_REPORT_INTENSITY_H */
