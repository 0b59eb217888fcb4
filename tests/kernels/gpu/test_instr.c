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
