/* instr_paths.h -- which source lines are path A's and path B's in the
 * lesson kernels, for the instruction profile's regions (model/listing/listing.h).
 *
 * The lines are the ones of kernels/gpu/lesson_kernels.cu that write each
 * chain's statement (`fmaf(x, DV_MUL_A, DV_ADD_A)`, `fmaf(x, DV_MUL_B,
 * DV_ADD_B)`), found in the file by the build (kernels/gpu/CMakeLists.txt),
 * so a kernel moved or edited moves its lines with it.
 */
#ifndef DV_INSTR_PATHS_H
#define DV_INSTR_PATHS_H

#include "kernels/model/listing/listing.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The chains' lines of the Part 1 and Part 2 kernels into `p`. */
void instr_lesson_paths(struct listing_paths *p);

#ifdef __cplusplus
}
#endif

#endif /* DV_INSTR_PATHS_H */
