/* profile.c -- the blocks a row's instruction profile is collected on
 * (profile.h). */
#include "kernels/model/model/profile.h"
#include "kernels/model/model/analysis.h"
#include "kernels/model/model/experiment.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/model/listing/listing.h"

int profile_row_supported(const struct dv_row *row, char *reason) {
    if (row->kernel == DV_KERNEL_BRANCH || row->kernel == DV_KERNEL_MASK || row->kernel == DV_KERNEL_NOBRANCH ||
        row->kernel == DV_KERNEL_PERITER)
        return 1;
    dv_seterr(reason, "instructions: %s rows are not profiled (the regions are those of the Part 1 and Part 2 kernels)",
              experiment_kernel_name(row->kernel));
    return 0;
}

int profile_plan_row(const struct dv_row *row, const struct dv_geometry *g, unsigned iterations, int whole_grid,
                     struct profile_plan *out, char *err) {
    memset(out, 0, sizeof *out);
    if (!profile_row_supported(row, err)) return -1;
    struct predicate p;
    if (experiment_row_predicate(row, &p, err) != 0) return -1;
    uint32_t *mask = analysis_mask_build(&p, g, 0, err);
    predicate_cleanup(&p);
    if (!mask) return -1;
    int rc = 0;
    if (whole_grid) testimony_counter_grid(g->blocks, g->blocks, &out->grid);
    else rc = testimony_lesson_grid(row, g, iterations, mask, &out->grid, err);
    if (rc == 0) {
        const unsigned long long tpb = (unsigned long long)g->block_x * g->block_y;
        for (unsigned k = 0; k < out->grid.nparts; k++) {
            const double w = out->grid.weight[k];
            if (!(w >= 1 && w == floor(w))) {
                dv_seterr(err, "instructions: part %u of the grid has weight %g, not a whole number", k, w);
                rc = -1;
                break;
            }
            out->weight[k] = (unsigned long long)w;
            out->cost += (double)out->grid.part_blocks[k] * (double)tpb * iterations;
        }
        if (rc == 0) out->mask_hash = listing_mask_hash(mask, out->grid.part_blocks[0] * tpb);
    }
    free(mask);
    return rc;
}
