/* test_listing_regions.c -- which regions a profile lists, and how its
 * shape reads the branches around the paths, on synthetic listings laid
 * out like the scenario kernels' SASS on an H200 (nvcc 13.0, sm_90).
 *
 * The k-way kernel is one function for every k: its switch holds 32 cases
 * whatever the row, so a row of k = 2 carries 30 cases no lane takes. Those
 * are code of the function, not regions of the row: a region's figures
 * (lanes, stall shares) are of instructions the launch ran.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "kernels/model/listing/listing.h"
#include "kernels/model/listing/listing_shape.h"

#define FILE_CU "kernels/gpu/scenario_kernels.cu"

/* One instruction of a synthetic listing; a branch's target when `target`
 * is not 0. */
static void put(struct listing_insns *f, uint32_t pc, unsigned line, const char *sass, unsigned long long warp,
                unsigned long long thread, uint32_t target) {
    struct listing_insn *i = listing_insns_at(f, pc);
    cr_assert_not_null(i);
    snprintf(i->sass, sizeof i->sass, "%s", sass);
    snprintf(i->file, sizeof i->file, FILE_CU);
    i->line = line;
    i->warp = warp;
    i->thread = thread;
    i->pred_on = thread;
    i->has_target = target != 0;
    i->target = target;
}

static const struct listing_region *region_of(const struct listing *l, enum listing_kind kind) {
    for (unsigned k = 0; k < l->nregions; k++)
        if (l->regions[k].kind == kind) return &l->regions[k];
    return NULL;
}

/* A switch of four cases (lines 84..87) of which a k = 2 row takes two,
 * 16 lanes each; PC sampling ran, and only the executed code has samples. */
static void two_of_four_cases(struct listing_insns *f, struct listing_paths *p) {
    memset(p, 0, sizeof *p);
    snprintf(p->file, sizeof p->file, FILE_CU);
    for (unsigned k = 0; k < 4; k++) cr_assert_eq(listing_paths_add(p, 84 + k, LISTING_PATH_0 + k), 0);
    listing_insns_init(f);
    f->sampled = 1;
    cr_assert_eq(listing_insns_reason(f, "smsp__pcsamp_warps_issue_stalled_wait"), 0);
    put(f, 0x00, 80, "BSSY B0, `(.L_x_9)", 8, 256, 0x130);
    put(f, 0x10, 80, "ISETP.GT.U32.AND P0, PT, R2, 0x1, PT", 8, 256, 0);
    put(f, 0x20, 80, "@P0 BRA `(.L_x_2)", 8, 256, 0x70);
    for (unsigned k = 0; k < 4; k++) {
        const uint32_t at = 0x30 + 0x40 * k;
        const unsigned long long w = k < 2 ? 8 : 0, t = k < 2 ? 128 : 0;
        put(f, at, 84 + k, "FFMA R0, R0, 0.99, 0.001", w, t, 0);
        put(f, at + 0x10, 84 + k, "FFMA R0, R0, 0.99, 0.001", w, t, 0);
        put(f, at + 0x20, 84 + k, "@P1 BRA `(.L_x_3)", w, t, at);
        put(f, at + 0x30, 84 + k, "BRA `(.L_x_9)", w, t, 0x130);
        listing_insns_at(f, at)->stalls[0] = k < 2 ? 5 : 0;
    }
    put(f, 0x130, 84, "BSYNC B0", 16, 256, 0);
    put(f, 0x140, 91, "STG.E [R2.64], R0", 8, 256, 0);
    listing_insns_at(f, 0x140)->stalls[0] = 3;
}

/* The cases no lane took are no regions: the row lists path_0 and path_1
 * with 16 lanes each, no path_2 or path_3, and no region figure is NaN;
 * the untaken cases' instructions stay in the runs, with their zero
 * counts, and the profile passes its own check. */
Test(listing_regions, a_path_no_warp_ran_is_no_region) {
    struct listing_insns f;
    struct listing_paths p;
    two_of_four_cases(&f, &p);
    listing_classify(&f, &p);
    char err[ERR_LEN] = "", field[64] = "";
    struct listing *l = listing_create();
    cr_assert_not_null(l);
    cr_assert_eq(listing_build(&f, l, err), 0, "%s", err);
    cr_expect_not_null(region_of(l, LISTING_PATH_0));
    cr_expect_not_null(region_of(l, LISTING_PATH_0 + 1));
    cr_expect_null(region_of(l, LISTING_PATH_0 + 2), "path_2: no lane took it, yet a region");
    cr_expect_null(region_of(l, LISTING_PATH_0 + 3), "path_3: no lane took it, yet a region");
    cr_expect_eq(l->nregions, 5, "before, path_0, path_1, reconverge, after: %u", l->nregions);
    for (unsigned k = 0; k < l->nregions; k++) {
        const struct listing_region *g = &l->regions[k];
        cr_expect(isfinite(g->lanes), "%s: lanes %f", listing_kind_name(g->kind), g->lanes);
        cr_expect(g->warp > 0, "%s: no warp executions", listing_kind_name(g->kind));
        for (unsigned s = 0; s < g->nstalls; s++)
            cr_expect(isfinite(g->stalls[s].share), "%s: stall share %f", listing_kind_name(g->kind),
                      g->stalls[s].share);
    }
    cr_expect(fabs(region_of(l, LISTING_PATH_0 + 1)->lanes - 16.0) < 1e-12);
    unsigned long long n = 0;
    listing_sum(l, LISTING_PATH_0 + 3, NULL, NULL, NULL, &n);
    cr_expect_eq(n, 4, "path_3's four instructions are still in the runs: %llu", n);
    cr_expect_eq(listing_check(l, field, sizeof field, err), 0, "%s: %s", field, err);
    listing_free(l);
    listing_insns_cleanup(&f);
}

/* The check still refuses a run that executed in a region the profile does
 * not list; one that never executed may name an unlisted region. */
Test(listing_regions, check_refuses_an_executed_run_of_no_listed_region) {
    struct listing_insns f;
    struct listing_paths p;
    two_of_four_cases(&f, &p);
    listing_classify(&f, &p);
    char err[ERR_LEN] = "", field[64] = "";
    struct listing *l = listing_create();
    cr_assert_not_null(l);
    cr_assert_eq(listing_build(&f, l, err), 0, "%s", err);
    unsigned at = l->nregions;
    for (unsigned k = 0; k < l->nregions; k++)
        if (l->regions[k].kind == LISTING_PATH_0 + 1) at = k;
    cr_assert_lt(at, l->nregions);
    memmove(&l->regions[at], &l->regions[at + 1], (l->nregions - at - 1) * sizeof l->regions[0]);
    l->nregions--;
    cr_expect_eq(listing_check(l, field, sizeof field, err), -1, "path_1 ran, its region is gone");
    cr_expect(strstr(err, "do not list") != NULL, "%s: %s", field, err);
    listing_free(l);
    listing_insns_cleanup(&f);
}

/* Compute-both-then-select as nvcc 13.0 lays it out for sm_90: one loop
 * (its counter on line 225) whose body interleaves the two chains' FFMAs
 * (lines 228 and 229), behind the loop's test for zero trips, a guarded
 * BRA that jumps past the loop, and closed by the back-edge to the
 * counter; then the select. 8 warps, all lanes, 4 trips. */
static void select_loop(struct listing_insns *f, struct listing_paths *p) {
    memset(p, 0, sizeof *p);
    snprintf(p->file, sizeof p->file, FILE_CU);
    cr_assert_eq(listing_paths_add(p, 228, LISTING_PATH_A), 0);
    cr_assert_eq(listing_paths_add(p, 229, LISTING_PATH_B), 0);
    listing_insns_init(f);
    put(f, 0x190, 225, "ISETP.NE.AND P0, PT, RZ, c[0x0][0x21c], PT", 8, 256, 0);
    put(f, 0x1a0, 220, "LDG.E.U8 R4, desc[UR4][R4.64]", 8, 256, 0);
    put(f, 0x1b0, 222, "MOV R7, R0", 8, 256, 0);
    put(f, 0x1c0, 225, "@!P0 BRA `(.L_x_1)", 8, 256, 0x640);
    put(f, 0x1d0, 225, "MOV R9, RZ", 8, 256, 0);
    put(f, 0x210, 225, "IADD3 R9, R9, 0x1, RZ", 32, 1024, 0);
    for (uint32_t pc = 0x220; pc <= 0x620; pc += 0x10) {
        if (pc == 0x230) {
            put(f, pc, 225, "ISETP.GE.U32.AND P0, PT, R9, c[0x0][0x21c], PT", 32, 1024, 0);
            continue;
        }
        put(f, pc, (pc / 0x10) % 2 ? 229 : 228, "FFMA R0, R0, c[0x0][0x0], R2", 32, 1024, 0);
    }
    put(f, 0x630, 225, "@!P0 BRA `(.L_x_0)", 32, 1024, 0x210);
    put(f, 0x640, 231, "ISETP.NE.AND P0, PT, R4, RZ, PT", 8, 256, 0);
    put(f, 0x650, 231, "FSEL R0, R7, R0, P0", 8, 256, 0);
    put(f, 0x660, 232, "STG.E desc[UR4][R2.64], R0", 8, 256, 0);
    put(f, 0x670, 232, "EXIT", 8, 256, 0);
}

/* The loop's test for zero trips and its back-edge choose no path: the
 * select is unconditional, every path FFMA issued with 32 lanes. */
Test(listing_regions, a_loops_own_branches_are_no_branch_among_the_paths) {
    struct listing_insns f;
    struct listing_paths p;
    select_loop(&f, &p);
    listing_classify(&f, &p);
    char err[ERR_LEN] = "";
    struct listing *l = listing_create();
    cr_assert_not_null(l);
    cr_assert_eq(listing_build(&f, l, err), 0, "%s", err);
    struct listing_shape sh;
    listing_shape(l, &sh);
    cr_expect_eq(sh.path_ffma, 64, "%s", sh.text);
    cr_expect_eq(sh.window_guarded_bra, 0, "%s", sh.text);
    cr_expect_eq(sh.branching, LISTING_SHAPE_UNCONDITIONAL, "%s", sh.text);
    cr_expect(fabs(sh.path_lanes - 32.0) < 1e-12, "%s", sh.text);
    listing_free(l);
    listing_insns_cleanup(&f);
}

/* A guarded BRA whose target is a path's first instruction (the early
 * return's, with no BSSY / BSYNC) is a branch among the paths; so is one
 * whose target a document does not give. */
Test(listing_regions, a_branch_into_the_paths_is_a_branch) {
    struct listing_insns f;
    struct listing_paths p;
    memset(&p, 0, sizeof p);
    snprintf(p.file, sizeof p.file, FILE_CU);
    cr_assert_eq(listing_paths_add(&p, 250, LISTING_PATH_A), 0);
    cr_assert_eq(listing_paths_add(&p, 256, LISTING_PATH_B), 0);
    listing_insns_init(&f);
    put(&f, 0x00, 246, "ISETP.NE.AND P0, PT, R4, RZ, PT", 8, 256, 0);
    put(&f, 0x10, 246, "@P0 BRA `(.L_x_4)", 8, 256, 0x50);
    put(&f, 0x20, 250, "FFMA R0, R0, 0.99, 0.001", 8, 128, 0);
    put(&f, 0x30, 251, "STG.E desc[UR4][R2.64], R0", 8, 128, 0);
    put(&f, 0x40, 252, "EXIT", 8, 128, 0);
    put(&f, 0x50, 256, "FFMA R0, R0, 0.98, 0.002", 8, 128, 0);
    put(&f, 0x60, 262, "STG.E desc[UR4][R2.64], R0", 8, 128, 0);
    listing_classify(&f, &p);
    char err[ERR_LEN] = "";
    struct listing *l = listing_create();
    cr_assert_not_null(l);
    cr_assert_eq(listing_build(&f, l, err), 0, "%s", err);
    struct listing_shape sh;
    listing_shape(l, &sh);
    cr_expect_eq(sh.window_guarded_bra, 1, "%s", sh.text);
    cr_expect_eq(sh.branching, LISTING_SHAPE_BRANCHED, "%s", sh.text);
    for (unsigned i = 0; i < l->nruns; i++) l->runs[i].has_target = 0; /* as an older document reads */
    listing_shape(l, &sh);
    cr_expect_eq(sh.branching, LISTING_SHAPE_BRANCHED, "%s", sh.text);
    listing_free(l);
    listing_insns_cleanup(&f);
}
