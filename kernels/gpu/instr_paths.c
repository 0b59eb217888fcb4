/* instr_paths.c -- the kernels' region lines (instr_paths.h): the build
 * defines DV_LESSON_LINES_A and DV_LESSON_LINES_B ({111,114,...}) from what
 * lesson_kernels.cu says, DV_SCENARIO_REGION_LINES ({91,92,...}) and
 * DV_SCENARIO_REGION_NAMES ({"path_0","path_1",...}) from the `region:`
 * comments of scenario_kernels.cu, and DV_INTENSITY_REGION_LINES/NAMES from
 * those of intensity_kernels.cu (kernels/gpu/CMakeLists.txt). */
#include "kernels/gpu/instr_paths.h"

#include <stdio.h>
#include <string.h>

#if !defined(DV_LESSON_LINES_A) || !defined(DV_LESSON_LINES_B) || !defined(DV_SCENARIO_REGION_LINES) ||                \
    !defined(DV_SCENARIO_REGION_NAMES) || !defined(DV_INTENSITY_REGION_LINES) || !defined(DV_INTENSITY_REGION_NAMES)
#error                                                                                                                 \
    "the build defines DV_LESSON_LINES_A/B and DV_{SCENARIO,INTENSITY}_REGION_LINES/NAMES (kernels/gpu/CMakeLists.txt)"
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

/* The `n` marked lines `lines` of `file`, each of region `names[i]`. */
static void region_paths(struct listing_paths *p, const char *file, const unsigned *lines, const char *const *names,
                         unsigned n) {
    memset(p, 0, sizeof *p);
    snprintf(p->file, sizeof p->file, "%s", file);
    for (unsigned i = 0; i < n; i++) {
        const int kind = listing_kind_parse(names[i]);
        /* A name the listing does not know, or a table that is full, is a
         * defect of the source the tests catch (test_instr.c). */
        if (kind >= 0) (void)listing_paths_add(p, lines[i], (enum listing_kind)kind);
    }
}

/* The table's capacity, checked at build time for each file's lines. */
#define REGION_LINES_FIT(lines, names)                                                                                 \
    _Static_assert(sizeof lines / sizeof lines[0] == sizeof names / sizeof names[0], "a region for every line");       \
    _Static_assert(sizeof lines / sizeof lines[0] <= LISTING_MAX_OTHER_LINES + 2 * LISTING_MAX_PATH_LINES,             \
                   "more region lines than listing_paths holds")

void instr_scenario_paths(struct listing_paths *p) {
    static const unsigned lines[] = DV_SCENARIO_REGION_LINES;
    static const char *const names[] = DV_SCENARIO_REGION_NAMES;
    REGION_LINES_FIT(lines, names);
    region_paths(p, "kernels/gpu/scenario_kernels.cu", lines, names, (unsigned)(sizeof lines / sizeof lines[0]));
}

void instr_intensity_paths(struct listing_paths *p) {
    static const unsigned lines[] = DV_INTENSITY_REGION_LINES;
    static const char *const names[] = DV_INTENSITY_REGION_NAMES;
    REGION_LINES_FIT(lines, names);
    region_paths(p, "kernels/gpu/intensity_kernels.cu", lines, names, (unsigned)(sizeof lines / sizeof lines[0]));
}

void instr_row_paths(const struct dv_row *row, const struct scenario *s, struct listing_paths *p) {
    if (row->kernel != DV_KERNEL_SCENARIO) instr_lesson_paths(p);
    else if (s && s->kind == SCENARIO_MEM) instr_intensity_paths(p);
    else instr_scenario_paths(p);
}
