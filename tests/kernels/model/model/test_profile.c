/* test_profile.c -- the blocks a row's instruction profile is collected on
 * and the mask hash of its cache key. */
#include <criterion/criterion.h>
#include <string.h>

#include "kernels/model/model/experiment.h"
#include "kernels/model/model/plan.h"
#include "kernels/model/model/profile.h"
#include "kernels/model/model/sortexp.h"

static struct dv_row row_of(const char *name, enum dv_kernel kernel) {
    struct dv_row row;
    memset(&row, 0, sizeof row);
    snprintf(row.name, sizeof row.name, "%s", name);
    row.kernel = kernel;
    const struct predicate_builtin *b = predicate_find(name);
    row.mode = kernel == DV_KERNEL_MASK || !b ? DV_MODE_NONE : b->mode;
    return row;
}

static struct profile_plan plan(const char *name, enum dv_kernel kernel, unsigned blocks, unsigned bx, unsigned by,
                                int whole) {
    struct dv_row row = row_of(name, kernel);
    const struct dv_geometry g = {blocks, bx, by};
    struct profile_plan p;
    char err[ERR_LEN];
    cr_assert_eq(profile_plan_row(&row, &g, 4096, whole, &p, err), 0, "%s: %s", name, err);
    return p;
}

Test(profile, one_block_stands_for_a_grid_that_does_not_read_blockIdx) {
    struct profile_plan p = plan("lane-parity", DV_KERNEL_BRANCH, 4096, 256, 1, 0);
    cr_expect_eq(p.grid.nparts, 1);
    cr_expect_eq(p.grid.part_blocks[0], 1);
    cr_expect_eq(p.weight[0], 4096);
    cr_expect_float_eq(p.cost, 256.0 * 4096, 1e-6);
    /* The same block's bits on any grid: one cache entry. */
    struct profile_plan q = plan("lane-parity", DV_KERNEL_BRANCH, 264, 256, 1, 0);
    cr_expect_eq(q.mask_hash, p.mask_hash);
    cr_expect_neq(plan("warp-parity", DV_KERNEL_BRANCH, 4096, 256, 1, 0).mask_hash, p.mask_hash);
    /* A 2D block and a partial warp: still one block. */
    p = plan("(threadIdx.y & 1) == 0", DV_KERNEL_MASK, 512, 32, 8, 0);
    cr_expect_eq(p.grid.part_blocks[0], 1);
    p = plan("threadIdx.x % 3 == 0", DV_KERNEL_MASK, 100, 100, 1, 0);
    cr_expect_eq(p.grid.part_blocks[0], 1);
    cr_expect_eq(p.weight[0], 100);
}

Test(profile, a_block_dependent_predicate_takes_its_period_or_the_grid) {
    struct profile_plan p = plan("block-parity", DV_KERNEL_BRANCH, 4096, 256, 1, 0);
    cr_expect_eq(p.grid.part_blocks[0], 2);
    cr_expect_eq(p.weight[0], 2048);
    p = plan("(blockIdx.x % 3) == 0", DV_KERNEL_MASK, 1000, 256, 1, 0);
    cr_expect_eq(p.grid.nparts, 2);
    cr_expect_eq(p.grid.part_blocks[0], 3);
    cr_expect_eq(p.weight[0], 333);
    cr_expect_eq(p.grid.part_blocks[1], 1);
    cr_expect_eq(p.weight[1], 1);
    cr_expect_float_eq(p.cost, 4.0 * 256 * 4096, 1e-6);
    p = plan("blockIdx.x < 7", DV_KERNEL_MASK, 64, 256, 1, 0);
    cr_expect_eq(p.grid.nparts, 1);
    cr_expect_eq(p.grid.part_blocks[0], 64, "no period shorter than the grid");
    cr_expect_eq(p.weight[0], 1);
    /* In the loop, one mask does not tell every phase: the whole grid. */
    p = plan("block-parity", DV_KERNEL_PERITER, 96, 256, 1, 0);
    cr_expect_eq(p.grid.part_blocks[0], 96);
}

Test(profile, whole_grid_on_request_and_scenario_rows_planned_with_their_table) {
    struct profile_plan p = plan("lane-parity", DV_KERNEL_BRANCH, 132, 256, 1, 1);
    cr_expect_eq(p.grid.part_blocks[0], 132);
    cr_expect_eq(p.weight[0], 1);
    cr_expect_neq(p.mask_hash, plan("lane-parity", DV_KERNEL_BRANCH, 132, 256, 1, 0).mask_hash,
                  "the bits of 132 blocks are not the bits of one");
    struct dv_row row = row_of("lanes", DV_KERNEL_SCENARIO);
    const struct dv_geometry g = {64, 256, 1};
    char err[ERR_LEN] = "";
    cr_expect_eq(profile_plan_row(&row, &g, 4096, 0, &p, err), -1);
    cr_expect(strstr(err, "planned with its table"), "%s", err);
    cr_expect_eq(profile_row_supported(&row, err), 1, "every kernel of the service is profiled");
    struct dv_row lp = row_of("lane-parity", DV_KERNEL_PERITER);
    cr_expect_eq(profile_row_supported(&lp, err), 1);
}

/* A scenario row's profile: its plan from its table (one block for a
 * pattern every block repeats; a stand-in of its distinct blocks, fewest
 * blocks first, for a sorted row), weights that add up to the grid, a hash
 * that tells rows apart and is the same in every process, and the name of
 * the kernel instantiation the row runs. */
Test(profile, scenario_rows_stand_in_blocks_hash_and_name_their_kernel) {
    struct dv_options o;
    experiment_defaults(&o);
    snprintf(o.scenario, sizeof o.scenario, "compiler-and-warp");
    struct dv_report *r = experiment_report_create();
    char err[ERR_LEN] = "";
    cr_assert_not_null(r);
    cr_assert_eq(plan_report(&o, r, NULL, err), 0, "%s", err);
    const struct dv_geometry g = {r->config.blocks, r->config.block_x, r->config.block_y};
    unsigned kp = 0;
    while (kp < r->ntables && strcmp(r->tables[kp].id, "scenario:k-paths") != 0) kp++;
    cr_assert_lt(kp, r->ntables);
    struct profile_plan a, b, a2;
    cr_assert_eq(profile_plan_table_row(&o, &r->tables[kp], 3, &g, 4096, 0, &a, err), 0, "%s", err); /* split-k4 */
    cr_expect_eq(a.grid.nparts, 1);
    cr_expect_eq(a.grid.part_blocks[0], 1, "lane %% 4: every block alike, one stands for the grid");
    cr_expect_eq(a.weight[0], g.blocks);
    cr_assert_eq(profile_plan_table_row(&o, &r->tables[kp], 13, &g, 4096, 0, &b, err), 0, "%s", err); /* aligned-k32 */
    unsigned long long sum = 0;
    for (unsigned k = 0; k < b.grid.nparts; k++) sum += b.weight[k] * b.grid.part_blocks[k];
    cr_expect_eq(sum, g.blocks, "the parts' blocks, weighted, are the grid's");
    cr_expect_leq(testimony_grid_launched(&b.grid), 4, "warp %% 32 repeats every 4 blocks of 8 warps");
    cr_expect_neq(a.mask_hash, b.mask_hash);
    cr_assert_eq(profile_plan_table_row(&o, &r->tables[kp], 3, &g, 4096, 0, &a2, err), 0, "%s", err);
    cr_expect_eq(a2.mask_hash, a.mask_hash, "the same plan every time");
    char id[96];
    cr_assert_eq(profile_kernel_identity(&o, &r->tables[kp], 3, 4096, id, sizeof id), 0);
    cr_expect_str_eq(id, "scenario/kway/c");
    for (unsigned t = 0; t < r->ntables; t++)
        if (strcmp(r->tables[t].id, "scenario:predication") == 0) {
            cr_assert_eq(profile_kernel_identity(&o, &r->tables[t], 4, 4096, id, sizeof id), 0);
            cr_expect_str_eq(id, "scenario/short/3x3/rt", "row 4 is 3x3-lanes");
        }
    experiment_report_free(r);
}

/* A data-sort cell's shading rows (naive, index, shade-sorted) are each
 * profiled on the whole grid as one part of weight 1 (the materials decide
 * each warp's paths, so no block stands for another; with or without
 * whole_grid asked), costing the grid's threads x C; the hash tells the
 * cells (distribution, M, C) and the rows apart and is the same every time;
 * the identity is the shade kernel's instantiation, its shading order.
 * sort+shade and sort are refused with their reason, and say it. */
Test(profile, data_sort_rows_take_the_whole_grid_and_hash_their_cell) {
    struct dv_options o;
    experiment_defaults(&o);
    snprintf(o.scenario, sizeof o.scenario, "data-sort");
    o.blocks = 24;
    o.block_x = 64;
    struct dv_report *r = experiment_report_create();
    char err[ERR_LEN] = "";
    cr_assert_not_null(r);
    cr_assert_eq(plan_report(&o, r, NULL, err), 0, "%s", err);
    cr_assert_eq(r->ntables, 12);
    const struct dv_geometry g = {r->config.blocks, r->config.block_x, r->config.block_y};
    cr_assert_eq(g.blocks, 24);
    uint64_t hashes[12 * 3];
    unsigned nh = 0;
    for (unsigned t = 0; t < r->ntables; t++) {
        const struct dv_table *tb = &r->tables[t];
        enum sortexp_dist d;
        unsigned m, c;
        cr_assert_eq(sortexp_table_cell(tb->id, &d, &m, &c), 0, "%s", tb->id);
        for (unsigned row = 0; row < tb->nrows; row++) {
            struct profile_plan p, again;
            char id[96], why[ERR_LEN] = "";
            cr_assert_eq(profile_kernel_identity(&o, tb, row, 4096, id, sizeof id), 0);
            if (row == SORTEXP_ROW_SORT_SHADE || row == SORTEXP_ROW_SORT) {
                cr_expect_eq(profile_row_unprofiled(tb, row, why), 1);
                cr_expect(strstr(why, "CUB's radix-sort kernels") != NULL, "%s", why);
                cr_expect_eq(profile_plan_table_row(&o, tb, row, &g, 4096, 0, &p, err), -1, "%s %s", tb->id,
                             tb->rows[row].name);
                cr_expect_str_eq(err, why);
                continue;
            }
            cr_expect_eq(profile_row_unprofiled(tb, row, why), 0);
            for (int whole = 0; whole < 2; whole++) {
                cr_assert_eq(profile_plan_table_row(&o, tb, row, &g, 4096, whole, &p, err), 0, "%s", err);
                cr_expect(p.grid.nparts == 1 && p.grid.part_blocks[0] == 24 && p.weight[0] == 1 && !p.grid.standin,
                          "%s %s: the whole grid, one part", tb->id, tb->rows[row].name);
                cr_expect_float_eq(p.cost, 24.0 * 64 * c, 1e-6, "the grid's threads x C");
            }
            cr_assert_eq(profile_plan_table_row(&o, tb, row, &g, 4096, 0, &again, err), 0, "%s", err);
            cr_expect_eq(again.mask_hash, p.mask_hash, "the same plan every time");
            for (unsigned k = 0; k < nh; k++)
                cr_expect_neq(hashes[k], p.mask_hash, "%s %s: a hash of another row or cell", tb->id,
                              tb->rows[row].name);
            hashes[nh++] = p.mask_hash;
            cr_expect_str_eq(id, row == SORTEXP_ROW_NAIVE   ? "sort/naive"
                                 : row == SORTEXP_ROW_INDEX ? "sort/index"
                                                            : "sort/pairs");
        }
    }
    cr_expect_eq(nh, 36);
    /* Another distribution's cell of the same M and C hashes apart. */
    struct dv_table other = r->tables[0];
    snprintf(other.id, sizeof other.id, "sort:zipf:m4:c16");
    cr_assert_str_eq(r->tables[0].id, "sort:uniform:m4:c16");
    struct profile_plan a, b;
    cr_assert_eq(profile_plan_table_row(&o, &r->tables[0], SORTEXP_ROW_NAIVE, &g, 4096, 0, &a, err), 0, "%s", err);
    cr_assert_eq(profile_plan_table_row(&o, &other, SORTEXP_ROW_NAIVE, &g, 4096, 0, &b, err), 0, "%s", err);
    cr_expect_neq(a.mask_hash, b.mask_hash);
    experiment_report_free(r);
}
