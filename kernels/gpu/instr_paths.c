/* instr_paths.c -- the kernels' region lines (instr_paths.h): the build
 * defines DV_LESSON_LINES_A and DV_LESSON_LINES_B ({111,114,...}) from what
 * lesson_kernels.cu says, DV_SCENARIO_REGION_LINES ({91,92,...}) and
 * DV_SCENARIO_REGION_NAMES ({"path_0","path_1",...}) from the `region:`
 * comments of scenario_kernels.cu, DV_INTENSITY_REGION_LINES/NAMES from
 * those of intensity_kernels.cu and DV_SORT_REGION_LINES/NAMES from those of
 * sort_kernels.cu (kernels/gpu/CMakeLists.txt). */
#include "kernels/gpu/instr_paths.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/model/model/scenario.h"
#include "kernels/model/model/scenario_table.h"
#include "kernels/model/model/sortexp.h"

#if !defined(DV_LESSON_LINES_A) || !defined(DV_LESSON_LINES_B) || !defined(DV_SCENARIO_REGION_LINES) ||                \
    !defined(DV_SCENARIO_REGION_NAMES) || !defined(DV_INTENSITY_REGION_LINES) ||                                       \
    !defined(DV_INTENSITY_REGION_NAMES) || !defined(DV_SORT_REGION_LINES) || !defined(DV_SORT_REGION_NAMES)
#error                                                                                                                 \
    "the build defines DV_LESSON_LINES_A/B and DV_{SCENARIO,INTENSITY,SORT}_REGION_LINES/NAMES (kernels/gpu/CMakeLists.txt)"
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

int instr_region_kind(const char *name) {
    /* sort_kernels.cu names its cases by material (it stays as it is: an
     * edit would change the kernels' digest); material N's case is path N. */
    if (name && strncmp(name, "material_", 9) == 0) {
        char *end = NULL;
        const unsigned long k = strtoul(name + 9, &end, 10);
        if (!isdigit((unsigned char)name[9]) || *end || (name[9] == '0' && name[10]) ||
            k > LISTING_PATH_LAST - LISTING_PATH_0)
            return -1;
        return LISTING_PATH_0 + (int)k;
    }
    return listing_kind_parse(name);
}

/* The `n` marked lines `lines` of `file`, each of region `names[i]`. */
static void region_paths(struct listing_paths *p, const char *file, const unsigned *lines, const char *const *names,
                         unsigned n) {
    memset(p, 0, sizeof *p);
    snprintf(p->file, sizeof p->file, "%s", file);
    for (unsigned i = 0; i < n; i++) {
        const int kind = instr_region_kind(names[i]);
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

void instr_sort_paths(struct listing_paths *p) {
    static const unsigned lines[] = DV_SORT_REGION_LINES;
    static const char *const names[] = DV_SORT_REGION_NAMES;
    REGION_LINES_FIT(lines, names);
    region_paths(p, "kernels/gpu/sort_kernels.cu", lines, names, (unsigned)(sizeof lines / sizeof lines[0]));
}

void instr_row_paths(const struct dv_table *t, const struct dv_row *row, struct listing_paths *p) {
    const struct scenario *s = strncmp(t->id, "scenario:", 9) == 0 ? scenario_find(t->id + 9) : NULL;
    if (row->kernel != DV_KERNEL_SCENARIO) instr_lesson_paths(p);
    else if (sortexp_table_is(t)) instr_sort_paths(p);
    else if (s && s->kind == SCENARIO_MEM) instr_intensity_paths(p);
    else instr_scenario_paths(p);
}
