/* sort_measure.h -- the data-sort experiment's tables on the GPU. */
#ifndef DV_SORT_MEASURE_H
#define DV_SORT_MEASURE_H

#include "kernels/gpu/counters.h"
#include "kernels/gpu/timing.h"
#include "kernels/model/model/types.h"

#ifdef __cplusplus
extern "C" {
#endif

struct session;

/* Times and checks data-sort table `t` (planned by sortexp_plan(), id
 * "sort:<dist>:m<M>:c<C>") over device input `in_dev` (the session's, at
 * least the table's items) on device `dev`, in paired rounds (timing.h),
 * times the sort inside sort+shade on its own, counts each row's launches
 * with the hardware counters of `*cnt` (when not NULL: one untimed launch
 * of each row's whole grid, CUB's kernels included where the row sorts),
 * then takes the per-warp witness of the naive and the sorted shading
 * orders (unless o->no_witness) and fills `cell`. Each row's output is
 * checked against the CPU reference (the first wrong item named). The sort's
 * temporary storage is sized and allocated once, before the rounds. A
 * counter pass that fails leaves every row without counters, the reason in
 * tm->counters_reason and *cnt NULL (the rest of the job uncounted), as the
 * other tables' passes do. Returns 0 or a DV_* code with `err`. */
int sort_measure_table(struct session *s, const struct dv_options *o, const struct dv_device *dev, double mhz,
                       struct timing_clock *clk, struct dv_table *t, struct dv_sort_cell *cell, const float *in_dev,
                       struct dv_testimony *tm, struct counters **cnt, char *err);

/* The GPU's per-warp record of shading order `sorted` (0: the items as
 * given; 1: sorted by material) of cell (dist, m) on `blocks` x `tpb`, and
 * the CPU's count of the same array: both into the caller's arrays of
 * sortexp_warps() records (struct sortexp_warp), for the GPU test.
 * Returns 0 or a DV_* code. */
int sort_witness_records(unsigned dist, unsigned m, unsigned blocks, unsigned tpb, int sorted, void *gpu, void *cpu,
                         char *err);

#ifdef __cplusplus
}
#endif

#endif /* DV_SORT_MEASURE_H */
