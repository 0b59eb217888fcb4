/* instrunion.h -- a batch's readers as one table for their instruction
 * profiles (jobs/instrproc.h): the union of their Part 1 tables, each
 * distinct row once, planned as one request; and each reader's rows'
 * profiles handed back from it. Pure functions of the reports: no process,
 * no cache. */
#ifndef DV_INSTRUNION_H
#define DV_INSTRUNION_H

#include "kernels/base/status.h"
#include "kernels/model/model/experiment.h"

/* The union of the `n` readers' Part 1 tables (requests o[i], reports
 * r[i]) as one request (`u`) and its planned report (returned, every row
 * marked measured; NULL when the rows do not fit one table or out of
 * memory): every distinct row once, the first reader's baseline among
 * them, on the grid they ran. */
struct dv_report *instrunion_report(const struct dv_options *const *o, struct dv_report *const *r, unsigned n,
                                    struct dv_options *u);

/* Reader `r`'s rows' profiles from the union's report `ur` (copies), and
 * its testimony: taken when each of its rows has one, else the reason of
 * its own first row without (why[k]: union row k's). */
void instrunion_hand_back(const struct dv_report *ur, char (*why)[ERR_LEN], struct dv_report *r);

/* 1 when report `r` (of request `o`) ran what reader 0 (`o0`, `r0`) ran
 * but for its rows: one Part 1 table each, of one kernel, on one grid. */
int instrunion_same_run(const struct dv_options *o0, const struct dv_report *r0, const struct dv_options *o,
                        const struct dv_report *r);

#endif /* DV_INSTRUNION_H */
