/* instr_paths.c -- the lesson kernels' chain lines (instr_paths.h): the
 * build defines DV_LESSON_LINES_A and DV_LESSON_LINES_B ({111,114,...},
 * kernels/gpu/CMakeLists.txt) from what lesson_kernels.cu says. */
#include "kernels/gpu/instr_paths.h"

#include <stdio.h>
#include <string.h>

#if !defined(DV_LESSON_LINES_A) || !defined(DV_LESSON_LINES_B)
#error "the build defines DV_LESSON_LINES_A and DV_LESSON_LINES_B (kernels/gpu/CMakeLists.txt)"
#endif

void instr_lesson_paths(struct listing_paths *p) {
    static const unsigned a[] = DV_LESSON_LINES_A, b[] = DV_LESSON_LINES_B;
    _Static_assert(sizeof a / sizeof a[0] <= LISTING_MAX_PATH_LINES, "more chain lines than listing_paths holds");
    _Static_assert(sizeof b / sizeof b[0] <= LISTING_MAX_PATH_LINES, "more chain lines than listing_paths holds");
    memset(p, 0, sizeof *p);
    snprintf(p->file, sizeof p->file, "kernels/gpu/lesson_kernels.cu");
    p->na = (unsigned)(sizeof a / sizeof a[0]);
    p->nb = (unsigned)(sizeof b / sizeof b[0]);
    memcpy(p->a, a, sizeof a);
    memcpy(p->b, b, sizeof b);
}
