/* instr_paths.h -- which source lines are which region's in the kernels,
 * for the instruction profile's regions (model/listing/listing.h).
 *
 * The lesson kernels' lines are the ones of kernels/gpu/lesson_kernels.cu
 * that write each chain's statement (`fmaf(x, DV_MUL_A, DV_ADD_A)`,
 * `fmaf(x, DV_MUL_B, DV_ADD_B)`); the scenario kernels' are the lines of
 * kernels/gpu/scenario_kernels.cu that carry a `region:` comment (path_a,
 * path_b, path_0 .. path_31, loop, tail), and the arithmetic-intensity
 * kernels' the lines of kernels/gpu/intensity_kernels.cu that do (its two
 * paths' statements, path_a and path_b). All are found in the files by the
 * build (kernels/gpu/CMakeLists.txt), so a kernel moved or edited moves its
 * lines with it.
 */
#ifndef DV_INSTR_PATHS_H
#define DV_INSTR_PATHS_H

#include "kernels/model/listing/listing.h"
#include "kernels/model/model/scenario.h"
#include "kernels/model/model/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The chains' lines of the Part 1 and Part 2 kernels into `p`. */
void instr_lesson_paths(struct listing_paths *p);

/* The regions' lines of the scenario kernels into `p`. */
void instr_scenario_paths(struct listing_paths *p);

/* The regions' lines of the arithmetic-intensity kernels into `p`. */
void instr_intensity_paths(struct listing_paths *p);

/* The lines of the kernel row `row` runs, `s` its table's scenario (NULL
 * for a lesson row): the arithmetic-intensity kernels' for a SCENARIO_MEM
 * row, the scenario kernels' for another scenario row, else the lesson's. */
void instr_row_paths(const struct dv_row *row, const struct scenario *s, struct listing_paths *p);

#ifdef __cplusplus
}
#endif

#endif /* DV_INSTR_PATHS_H */
