/* ncu.h -- Nsight Compute's Source page of a row, for `divergence-gpu
 * instructions --compare ncu` (cmd/instr_cmd.h): the reference its counts
 * are checked against, cell by cell.
 *
 * For each part of the row's plan, ncu (jobs/toolkit.h) profiles another
 * run of this binary, `instructions --launch-only --part K` of the same
 * request (written to a file in a temporary folder), with `--section
 * SourceCounters --clock-control none -k regex:^mix --launch-count 1`, then
 * prints that report's `--page source --print-source sass --csv`, which
 * model/listing/listing_read.h reads; the parts are combined with the plan's
 * weights. Each ncu run has NCU_DEADLINE_MS. It runs before the calling
 * process touches CUDA.
 */
#ifndef DV_NCU_H
#define DV_NCU_H

#include "kernels/model/listing/listing.h"

#define NCU_DEADLINE_MS 120000.0

/* The row ncu profiles: its place in the request's plan, the device, the
 * grid, and its plan's parts with their weights. */
struct ncu_row {
    int table, row, device;
    int whole_grid;
    unsigned nparts;
    const unsigned long long *weight; /* nparts of them */
};

/* The row's Source page, its parts combined, into `out` (initialised
 * here). `ncu_exact` names ncu (NULL: $DV_NCU, else it is looked for);
 * `request` is the request's JSON. Returns 0, or -1 with `err` (no ncu,
 * ncu failed or printed no Source page). */
int ncu_collect(const char *ncu_exact, const struct ncu_row *row, const char *request, struct listing_insns *out,
                char *err);

#endif /* DV_NCU_H */
