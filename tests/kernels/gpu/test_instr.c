/* test_instr.c -- what the instruction profiler knows without a GPU: the
 * chains' lines it groups by are lesson_kernels.cu's (all of them, and
 * only those), and a CUPTI that cannot be loaded is a reason, not a crash. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/gpu/instr.h"
#include "kernels/gpu/instr_paths.h"
#include "tests/support/readfile.h"

static int listed(const unsigned *v, unsigned n, unsigned line) {
    for (unsigned k = 0; k < n; k++)
        if (v[k] == line) return 1;
    return 0;
}

Test(instr, the_chain_lines_are_every_statement_of_each_chain) {
    struct listing_paths p;
    instr_lesson_paths(&p);
    cr_expect_str_eq(p.file, "kernels/gpu/lesson_kernels.cu");
    cr_assert_gt(p.na, 0);
    cr_assert_gt(p.nb, 0);
    char *src = readfile(DV_TEST_SOURCE_DIR "/kernels/gpu/lesson_kernels.cu", NULL);
    cr_assert_not_null(src);
    unsigned line = 0, a = 0, b = 0;
    char *next;
    for (char *l = src; l; l = next) {
        next = strchr(l, '\n');
        if (next) *next++ = '\0';
        line++;
        const int is_a = strstr(l, "fmaf(x, DV_MUL_A, DV_ADD_A)") != NULL, is_b = strstr(l, "fmaf(x, DV_MUL_B, DV_ADD_B)") != NULL;
        cr_expect_eq(listed(p.a, p.na, line), is_a, "line %u: %s", line, l);
        cr_expect_eq(listed(p.b, p.nb, line), is_b, "line %u: %s", line, l);
        a += is_a;
        b += is_b;
    }
    cr_expect_eq(a, p.na);
    cr_expect_eq(b, p.nb);
    free(src);
}

Test(instr, a_cupti_that_cannot_be_loaded_is_the_reason) {
    char reason[ERR_LEN] = "";
    setenv("DV_CUPTI_LIBRARY", "/nonexistent/libcupti.so", 1);
    struct instr *p = instr_create(reason);
    cr_expect_null(p);
    cr_expect(strstr(reason, "/nonexistent/libcupti.so") != NULL, "%s", reason);
    instr_free(NULL);
}

/* Every `region:` comment of scenario_kernels.cu is in the scenario
 * kernels' table, at its line, with a region the listing knows: the 32
 * cases of the k-way switch one each, and the others where the kernels
 * write them. */
Test(instr, the_scenario_regions_are_every_marked_line) {
    struct listing_paths p;
    instr_scenario_paths(&p);
    cr_expect_str_eq(p.file, "kernels/gpu/scenario_kernels.cu");
    char *src = readfile(DV_TEST_SOURCE_DIR "/kernels/gpu/scenario_kernels.cu", NULL);
    cr_assert_not_null(src);
    unsigned line = 0, marked = 0, cases[32] = {0};
    char *next;
    for (char *l = src; l; l = next) {
        next = strchr(l, '\n');
        if (next) *next++ = '\0';
        line++;
        const char *m = strstr(l, "/* region: ");
        if (!m) continue;
        char name[32] = "";
        cr_assert_eq(sscanf(m, "/* region: %31[a-z0-9_] */", name), 1, "line %u: %s", line, l);
        const int kind = listing_kind_parse(name);
        cr_assert_geq(kind, 0, "line %u: no region %s", line, name);
        marked++;
        int found = 0;
        if (kind == LISTING_PATH_A) found = listed(p.a, p.na, line);
        else if (kind == LISTING_PATH_B) found = listed(p.b, p.nb, line);
        else
            for (unsigned k = 0; k < p.nother; k++) found |= p.other_line[k] == line && p.other_kind[k] == kind;
        cr_expect(found, "line %u (%s) is not in the table", line, name);
        if (kind >= LISTING_PATH_0 && kind <= LISTING_PATH_LAST) cases[kind - LISTING_PATH_0]++;
    }
    cr_expect_eq(p.na + p.nb + p.nother, marked, "the table holds the marked lines and nothing else");
    for (unsigned k = 0; k < 32; k++) cr_expect_eq(cases[k], 1, "path_%u on %u lines", k, cases[k]);
    cr_expect_geq(p.na, 1);
    cr_expect_geq(p.nb, 1);
    free(src);
}
