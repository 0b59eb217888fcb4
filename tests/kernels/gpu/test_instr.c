/* test_instr.c -- what the instruction profiler knows without a GPU: the
 * chains' lines it groups by are lesson_kernels.cu's (all of them, and
 * only those), the scenario and arithmetic-intensity kernels' regions are
 * their files' marked lines (the data-sort shade's material_N as path_N),
 * and a CUPTI that cannot be loaded is a reason, not a crash. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/gpu/instr.h"
#include "kernels/gpu/instr_paths.h"
#include "kernels/model/model/scenario_table.h"
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

/* Every `region:` comment of kernels/gpu/`file` is in `p`, at its line,
 * with a region the listing knows, and `p` holds nothing else; cases[k]
 * counts the lines of path_k. */
static void expect_marked_lines(const struct listing_paths *p, const char *file, unsigned cases[32]) {
    char path[256];
    snprintf(path, sizeof path, "kernels/gpu/%s", file);
    cr_expect_str_eq(p->file, path);
    snprintf(path, sizeof path, "%s/kernels/gpu/%s", DV_TEST_SOURCE_DIR, file);
    char *src = readfile(path, NULL);
    cr_assert_not_null(src, "%s", path);
    unsigned line = 0, marked = 0;
    char *next;
    for (char *l = src; l; l = next) {
        next = strchr(l, '\n');
        if (next) *next++ = '\0';
        line++;
        const char *m = strstr(l, "/* region: ");
        if (!m) continue;
        char name[32] = "";
        cr_assert_eq(sscanf(m, "/* region: %31[a-z0-9_] */", name), 1, "%s line %u: %s", file, line, l);
        const int kind = instr_region_kind(name);
        cr_assert_geq(kind, 0, "%s line %u: no region %s", file, line, name);
        marked++;
        int found = 0;
        if (kind == LISTING_PATH_A) found = listed(p->a, p->na, line);
        else if (kind == LISTING_PATH_B) found = listed(p->b, p->nb, line);
        else
            for (unsigned k = 0; k < p->nother; k++) found |= p->other_line[k] == line && p->other_kind[k] == kind;
        cr_expect(found, "%s line %u (%s) is not in the table", file, line, name);
        if (kind >= LISTING_PATH_0 && kind <= LISTING_PATH_LAST) cases[kind - LISTING_PATH_0]++;
    }
    cr_expect_eq(p->na + p->nb + p->nother, marked, "the table holds the marked lines and nothing else");
    free(src);
}

/* Every `region:` comment of scenario_kernels.cu is in the scenario
 * kernels' table, at its line, with a region the listing knows: the 32
 * cases of the k-way switch one each, and the others where the kernels
 * write them. */
Test(instr, the_scenario_regions_are_every_marked_line) {
    struct listing_paths p;
    instr_scenario_paths(&p);
    unsigned cases[32] = {0};
    expect_marked_lines(&p, "scenario_kernels.cu", cases);
    for (unsigned k = 0; k < 32; k++) cr_expect_eq(cases[k], 1, "path_%u on %u lines", k, cases[k]);
    cr_expect_geq(p.na, 1);
    cr_expect_geq(p.nb, 1);
}

/* The arithmetic-intensity kernels' table: their two paths' statements,
 * path A the one that reads data_a, path B data_b, and nothing else; and a
 * SCENARIO_MEM row's paths are that table, another scenario row's the
 * scenario kernels', a lesson row's the lesson's. */
Test(instr, an_intensity_row_names_the_intensity_kernels_path_lines) {
    struct listing_paths p;
    instr_intensity_paths(&p);
    unsigned cases[32] = {0};
    expect_marked_lines(&p, "intensity_kernels.cu", cases);
    cr_assert_eq(p.na, 1);
    cr_assert_eq(p.nb, 1);
    cr_expect_eq(p.nother, 0);
    char *src = readfile(DV_TEST_SOURCE_DIR "/kernels/gpu/intensity_kernels.cu", NULL);
    cr_assert_not_null(src);
    unsigned line = 0;
    char *next;
    for (char *l = src; l; l = next) {
        next = strchr(l, '\n');
        if (next) *next++ = '\0';
        line++;
        if (line == p.a[0]) cr_expect(strstr(l, "INTENSITY_PATH") && strstr(l, "data_a + slice"), "path A: %s", l);
        if (line == p.b[0]) cr_expect(strstr(l, "INTENSITY_PATH") && strstr(l, "data_b + slice"), "path B: %s", l);
    }
    free(src);

    struct dv_row row = {.kernel = DV_KERNEL_SCENARIO};
    const struct scenario *mem = scenario_find("intensity-stream"), *kway = scenario_find("k-paths");
    cr_assert_not_null(mem);
    cr_assert_not_null(kway);
    cr_assert_eq(mem->kind, SCENARIO_MEM);
    struct listing_paths q;
    struct dv_table t = {.id = "scenario:intensity-stream"};
    instr_row_paths(&t, &row, &q);
    cr_expect_str_eq(q.file, "kernels/gpu/intensity_kernels.cu");
    cr_expect(q.na == p.na && q.a[0] == p.a[0] && q.nb == p.nb && q.b[0] == p.b[0]);
    snprintf(t.id, sizeof t.id, "scenario:intensity-chase");
    instr_row_paths(&t, &row, &q);
    cr_expect_str_eq(q.file, "kernels/gpu/intensity_kernels.cu");
    snprintf(t.id, sizeof t.id, "scenario:%s", kway->name);
    instr_row_paths(&t, &row, &q);
    cr_expect_str_eq(q.file, "kernels/gpu/scenario_kernels.cu");
    snprintf(t.id, sizeof t.id, "part1");
    row.kernel = DV_KERNEL_BRANCH;
    instr_row_paths(&t, &row, &q);
    cr_expect_str_eq(q.file, "kernels/gpu/lesson_kernels.cu");
}

/* The data-sort shade's table: sort_kernels.cu's 32 cases, material_N as
 * path_N, one line each and nothing else (the file's own comments, read
 * here, say which); a data-sort cell's row (every shading order) names it. */
Test(instr, a_data_sort_row_names_the_shades_32_material_lines_as_paths) {
    struct listing_paths p;
    instr_sort_paths(&p);
    unsigned cases[32] = {0};
    expect_marked_lines(&p, "sort_kernels.cu", cases);
    for (unsigned k = 0; k < 32; k++) cr_expect_eq(cases[k], 1, "path_%u on %u lines", k, cases[k]);
    cr_expect_eq(p.na + p.nb, 0);
    cr_expect_eq(p.nother, 32);
    char *src = readfile(DV_TEST_SOURCE_DIR "/kernels/gpu/sort_kernels.cu", NULL);
    cr_assert_not_null(src);
    unsigned line = 0;
    char *next;
    for (char *l = src; l; l = next) {
        next = strchr(l, '\n');
        if (next) *next++ = '\0';
        line++;
        for (unsigned k = 0; k < p.nother; k++) {
            if (p.other_line[k] != line) continue;
            const unsigned m = p.other_kind[k] - LISTING_PATH_0;
            char want[128];
            snprintf(want, sizeof want, "case %u: rec.hit(g); SORT_PATH(%u); break; /* region: material_%u */", m, m,
                     m);
            cr_expect(strstr(l, want) != NULL, "path_%u is line %u: %s", m, line, l);
        }
    }
    free(src);
    struct dv_table t = {.id = "sort:uniform:m4:c16"};
    for (unsigned r = 0; r < 5; r++) {
        struct dv_row row = {.kernel = DV_KERNEL_SCENARIO};
        struct listing_paths q;
        instr_row_paths(&t, &row, &q);
        cr_expect_str_eq(q.file, "kernels/gpu/sort_kernels.cu");
        cr_expect(q.nother == p.nother && memcmp(q.other_line, p.other_line, sizeof p.other_line) == 0);
    }
}

/* material_N is path_N for N 0..31 and nothing else; the listing's names stay theirs. */
Test(instr, material_names_are_the_paths_and_only_those) {
    char name[32];
    for (unsigned k = 0; k < 32; k++) {
        snprintf(name, sizeof name, "material_%u", k);
        cr_expect_eq(instr_region_kind(name), LISTING_PATH_0 + (int)k, "%s", name);
    }
    static const char *const bad[] = {"material_32", "material_",   "material_01", "material_-1",
                                      "material_1x", "material_ 1", "materials_1", "material_99999999999999999999"};
    for (unsigned i = 0; i < sizeof bad / sizeof bad[0]; i++) cr_expect_eq(instr_region_kind(bad[i]), -1, "%s", bad[i]);
    cr_expect_eq(instr_region_kind("path_a"), LISTING_PATH_A);
    cr_expect_eq(instr_region_kind("path_7"), LISTING_PATH_0 + 7);
    cr_expect_eq(instr_region_kind(NULL), -1);
}
