/* instr_paths.h -- which source lines are which region's in the kernels,
 * for the instruction profile's regions (model/listing/listing.h).
 *
 * The lesson kernels' lines are the ones of kernels/gpu/lesson_kernels.cu
 * that write each chain's statement (`fmaf(x, DV_MUL_A, DV_ADD_A)`,
 * `fmaf(x, DV_MUL_B, DV_ADD_B)`); the scenario kernels' are the lines of
 * kernels/gpu/scenario_kernels.cu that carry a `region:` comment (path_a,
 * path_b, path_0 .. path_31, loop, tail), and the arithmetic-intensity
 * kernels' the lines of kernels/gpu/intensity_kernels.cu that do (its two
 * paths' statements, path_a and path_b), and the data-sort shade's the
 * lines of kernels/gpu/sort_kernels.cu that do (its 32 cases, material_0
 * .. material_31, which are the listing's path_0 .. path_31: a material's
 * case is its path). All are found in the files by the
 * build (kernels/gpu/CMakeLists.txt), so a kernel moved or edited moves its
 * lines with it.
 */
#ifndef DV_INSTR_PATHS_H
#define DV_INSTR_PATHS_H

#include "kernels/model/listing/listing.h"
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

/* The regions' lines of the data-sort shade kernel into `p`. */
void instr_sort_paths(struct listing_paths *p);

/* The listing's region (enum listing_kind) a `region:` comment names: the
 * listing's own names (listing_kind_parse()), and material_N as path_N
 * (N 0..31). -1 for a name that is none of them. */
int instr_region_kind(const char *name);

/* The lines of the kernel row `row` of table `t` runs: the data-sort
 * shade's for a data-sort cell's row, the arithmetic-intensity kernels'
 * for a SCENARIO_MEM table's, the scenario kernels' for another scenario
 * row, else the lesson's. */
void instr_row_paths(const struct dv_table *t, const struct dv_row *row, struct listing_paths *p);

#ifdef __cplusplus
}
#endif

#endif /* DV_INSTR_PATHS_H */
