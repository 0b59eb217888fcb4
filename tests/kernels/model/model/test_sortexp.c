/* test_sortexp.c -- the data-sort experiment without a GPU: the
 * materials' distributions, the CPU per-warp count the witness must equal,
 * the verdict of an interval (ambiguous cells), the crossover rule, the
 * plan of its tables and the summary read from measured cells. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/model/model/experiment.h"
#include "kernels/model/model/plan.h"
#include "kernels/model/model/sortexp.h"
#include "tests/kernels/model/model/plans.h"

#define N (1u << 20)

static uint8_t *draw(enum sortexp_dist d, unsigned m) {
    uint8_t *mat = malloc(N);
    char err[ERR_LEN] = "";
    cr_assert_not_null(mat);
    cr_assert_eq(sortexp_materials(d, m, N, mat, err), 0, "%s", err);
    return mat;
}

static void counts(const uint8_t *mat, unsigned long long n, unsigned long long *c) {
    memset(c, 0, 33 * sizeof *c);
    for (unsigned long long i = 0; i < n; i++) c[mat[i]]++;
}

Test(sortexp, uniform_is_flat_in_range_and_the_same_every_draw) {
    uint8_t *a = draw(SORTEXP_UNIFORM, 8), *b = draw(SORTEXP_UNIFORM, 8);
    unsigned long long c[33];
    cr_assert_eq(memcmp(a, b, N), 0, "the seeded generator gives the same array twice");
    counts(a, N, c);
    for (unsigned m = 0; m < 8; m++)
        cr_expect(fabs((double)c[m] / (N / 8) - 1.0) < 0.01, "material %u: %llu of %u", m, c[m], N);
    for (unsigned m = 8; m < 33; m++) cr_expect_eq(c[m], 0ull, "material %u out of range", m);
    /* The first items are the hash's: the device, with the same function, draws the same. */
    for (unsigned i = 0; i < 64; i++) cr_expect_eq(a[i], sortexp_uniform(sortexp_hash(SORTEXP_SEED, i), 8));
    free(a);
    free(b);
}

Test(sortexp, zipf_falls_as_one_over_rank) {
    uint8_t *a = draw(SORTEXP_ZIPF, 16);
    unsigned long long c[33];
    counts(a, N, c);
    double h16 = 0;
    for (unsigned r = 1; r <= 16; r++) h16 += 1.0 / r;
    cr_expect(fabs((double)c[0] / N * h16 - 1.0) < 0.02, "rank 0's share %.4f, want 1/H16 = %.4f", (double)c[0] / N,
              1.0 / h16);
    for (unsigned r = 1; r < 8; r++) {
        const double want = r + 1.0, got = (double)c[0] / (double)c[r];
        cr_expect(fabs(got / want - 1.0) < 0.05, "rank %u: c0/c%u = %.3f, want %.1f", r, r, got, want);
    }
    free(a);
}

Test(sortexp, tiles_are_coherent_and_a_warp_meets_at_most_four) {
    uint8_t *a = draw(SORTEXP_TILES, 32);
    for (unsigned long long i = 0; i < N; i++) {
        const unsigned long long x = i % SORTEXP_IMAGE_W, y = i / SORTEXP_IMAGE_W;
        const unsigned long long corner = (y / 8 * 8) * SORTEXP_IMAGE_W + x / 8 * 8;
        cr_assert_eq(a[i], a[corner], "item %llu differs from its tile's corner %llu", i, corner);
    }
    unsigned kmax = 0;
    for (unsigned long long w = 0; w < N / 32; w++) {
        struct sortexp_warp rec;
        sortexp_warp_count(a, NULL, N, 256, w, &rec);
        if (rec.k > kmax) kmax = rec.k;
    }
    cr_expect(kmax <= 4 && kmax >= 2, "a row's 32 items cross 4 tiles: k max %u", kmax);
    free(a);
}

Test(sortexp, presorted_is_the_uniform_multiset_in_order) {
    uint8_t *u = draw(SORTEXP_UNIFORM, 32), *p = draw(SORTEXP_PRESORTED, 32);
    unsigned long long cu[33], cp[33];
    counts(u, N, cu);
    counts(p, N, cp);
    cr_assert_eq(memcmp(cu, cp, sizeof cu), 0, "the same multiset");
    for (unsigned long long i = 1; i < N; i++) cr_assert_leq(p[i - 1], p[i], "item %llu out of order", i);
    free(u);
    free(p);
}

Test(sortexp, bad_materials_are_refused) {
    uint8_t a[4];
    char err[ERR_LEN] = "";
    cr_expect_eq(sortexp_materials(SORTEXP_UNIFORM, 0, 4, a, err), -1);
    cr_expect(strstr(err, "materials") != NULL, "%s", err);
    cr_expect_eq(sortexp_materials(SORTEXP_UNIFORM, 33, 4, a, err), -1);
    cr_expect_eq(sortexp_materials((enum sortexp_dist)9, 4, 4, a, err), -1);
    cr_expect(strstr(err, "distribution") != NULL, "%s", err);
}

/* A warp of 16 lanes on 0, 8 on 1, 8 on 2: k 3, runs of 16, 8 and 8 lanes. */
Test(sortexp, warp_count_is_distinct_materials_and_runs_by_lanes) {
    uint8_t mat[64];
    for (unsigned i = 0; i < 32; i++) mat[i] = i < 16 ? 0 : i < 24 ? 1 : 2;
    for (unsigned i = 32; i < 64; i++) mat[i] = 5;
    struct sortexp_warp w;
    sortexp_warp_count(mat, NULL, 64, 64, 0, &w);
    cr_expect_eq(w.k, 3u);
    cr_expect_eq(w.hist[16], 1u);
    cr_expect_eq(w.hist[8], 2u);
    unsigned runs = 0;
    for (unsigned l = 0; l <= 32; l++) runs += w.hist[l];
    cr_expect_eq(runs, 3u, "one run a material");
    sortexp_warp_count(mat, NULL, 64, 64, 1, &w);
    cr_expect(w.k == 1 && w.hist[32] == 1, "warp 1: one material on 32 lanes (k %u)", w.k);
    /* Through an order: place j shades item order[j]. Reversed, warp 0 holds items 63..32. */
    uint32_t order[64];
    for (unsigned j = 0; j < 64; j++) order[j] = 63 - j;
    sortexp_warp_count(mat, order, 64, 64, 0, &w);
    cr_expect(w.k == 1 && w.hist[32] == 1, "reversed warp 0: material 5 only (k %u)", w.k);
}

/* Blocks of 40 threads: warp 0 of a block has 32 lanes, warp 1 eight. */
Test(sortexp, warp_count_follows_partial_warps_of_a_block) {
    uint8_t mat[80];
    for (unsigned i = 0; i < 80; i++) mat[i] = (uint8_t)(i % 40 < 32 ? 0 : i % 2 + 1);
    cr_assert_eq(sortexp_warps(80, 40), 4ull);
    struct sortexp_warp w;
    sortexp_warp_count(mat, NULL, 80, 40, 1, &w); /* block 0, warp 1: items 32..39 */
    cr_expect(w.k == 2 && w.hist[4] == 2, "k %u, runs of 4 lanes %u", w.k, w.hist[4]);
    sortexp_warp_count(mat, NULL, 80, 40, 2, &w); /* block 1, warp 0: items 40..71 */
    cr_expect(w.k == 1 && w.hist[32] == 1, "k %u", w.k);
}

Test(sortexp, sorted_order_is_stable_by_material) {
    const uint8_t mat[8] = {2, 0, 1, 0, 2, 1, 0, 2};
    uint32_t order[8];
    sortexp_order(mat, 8, 3, order);
    const uint32_t want[8] = {1, 3, 6, 2, 5, 0, 4, 7};
    for (unsigned j = 0; j < 8; j++) cr_expect_eq(order[j], want[j], "place %u: %u, want %u", j, order[j], want[j]);
}

Test(sortexp, witness_summary_adds_warps) {
    struct dv_sort_witness s;
    memset(&s, 0, sizeof s);
    struct sortexp_warp a = {.k = 2}, b = {.k = 4};
    a.hist[16] = 2;
    b.hist[8] = 4;
    sortexp_witness_add(&s, &a);
    sortexp_witness_add(&s, &b);
    cr_expect_eq(s.warps, 2ull);
    cr_expect_eq(s.k_hist[2], 1ull);
    cr_expect_eq(s.k_hist[4], 1ull);
    cr_expect_eq(s.lane_hist[16], 2ull);
    cr_expect_eq(s.lane_hist[8], 4ull);
    cr_expect_float_eq(s.k_mean, 3.0, 1e-12);
}

/* An interval that straddles or touches 1 is ambiguous. */
Test(sortexp, verdict_marks_ambiguous_cells) {
    cr_expect_eq(sortexp_verdict(1.01, 1.3), 1);
    cr_expect_eq(sortexp_verdict(0.7, 0.99), -1);
    cr_expect_eq(sortexp_verdict(0.95, 1.05), 0);
    cr_expect_eq(sortexp_verdict(1.0, 1.2), 0, "touching 1 is not above it");
    cr_expect_eq(sortexp_verdict(0.8, 1.0), 0);
    cr_expect_eq(sortexp_verdict(NAN, 1.2), 0);
}

/* The smallest C from which sorting pays at that C and every larger one. */
Test(sortexp, crossover_is_the_smallest_c_from_which_sorting_pays) {
    const unsigned c[4] = {8, 32, 128, 512};
    const int a[4] = {-1, 0, 1, 1}, b[4] = {1, -1, 1, 1}, d[4] = {1, 1, 1, 0}, e[4] = {1, 1, 1, 1};
    cr_expect_eq(sortexp_crossover(c, a, 4), 128u);
    cr_expect_eq(sortexp_crossover(c, b, 4), 128u, "a pay at 8 then a cost at 32: the crossover is above");
    cr_expect_eq(sortexp_crossover(c, d, 4), 0u, "ambiguous at the largest C: no crossover");
    cr_expect_eq(sortexp_crossover(c, e, 4), 8u);
    cr_expect_eq(sortexp_crossover(c, e, 0), 0u);
}

Test(sortexp, nightly_plan_has_a_table_a_cell_and_equal_work) {
    struct dv_report *r = plan_of("data-sort", 64);
    cr_assert(r->sort.present);
    cr_assert_eq(r->ntables, 12u);
    cr_assert_eq(r->sort.ncells, 12u);
    cr_expect_str_eq(r->tables[0].id, "sort:uniform:m4:c16");
    cr_expect_str_eq(r->tables[11].id, "sort:tiles:m32:c512");
    for (unsigned i = 0; i < r->ntables; i++) {
        const struct dv_table *t = &r->tables[i];
        enum sortexp_dist d;
        unsigned m, c;
        cr_assert_eq(sortexp_table_cell(t->id, &d, &m, &c), 0, "%s", t->id);
        cr_expect_eq(r->sort.cells[i].table, (int)i);
        cr_expect_eq(r->sort.cells[i].m, m);
        cr_expect_eq(t->nrows, (unsigned)SORTEXP_NROWS);
        const unsigned long long fmas = (unsigned long long)64 * 256 * c;
        for (unsigned k = 0; k < SORTEXP_ROW_SORT; k++)
            cr_expect(t->rows[k].thread_fmas == fmas && t->rows[k].comparable, "%s %s: the same shading work", t->id,
                      t->rows[k].name);
        cr_expect(!t->rows[SORTEXP_ROW_SORT].comparable && t->rows[SORTEXP_ROW_SORT].thread_fmas == 0);
        cr_expect(strstr(t->rows[SORTEXP_ROW_SORT_SHADE].comparable_reason, "extra work") != NULL);
    }
    /* uniform over 32: a warp meets about 32 (1 - (31/32)^32) = 20.6 materials; sorted, about 1. */
    const struct dv_sort_cell *u32 = &r->sort.cells[3];
    cr_expect_eq(u32->m, 32u);
    cr_expect(u32->k_naive > 19.5 && u32->k_naive < 21.5, "k naive %.2f", u32->k_naive);
    cr_expect(u32->k_sorted < 1.1, "k sorted %.2f", u32->k_sorted);
    cr_expect_float_eq(r->tables[3].rows[SORTEXP_ROW_NAIVE].predicted_ratio, u32->k_naive / u32->k_sorted, 1e-9);
    experiment_report_free(r);
}

Test(sortexp, full_grid_and_unknown_names) {
    struct sortexp_grid g;
    cr_expect(sortexp_grid_named("data-sort-zipf", &g) && sortexp_grid_cells(&g) == 16);
    cr_expect(g.m[0] == 1 && g.m[g.nm - 1] == 32 && g.c[0] == 8 && g.c[g.nc - 1] == 512);
    cr_expect(!sortexp_grid_named("data-sort-nope", NULL));
    cr_expect(!sortexp_grid_named("k-paths", NULL));
    struct dv_options o;
    experiment_defaults(&o);
    snprintf(o.scenario, sizeof o.scenario, "data-sort-nope");
    struct dv_report *r = experiment_report_create();
    char err[ERR_LEN] = "";
    struct dv_fault f;
    dv_fault_clear(&f);
    cr_expect_eq(plan_report(&o, r, &f, err), -1);
    cr_expect_str_eq(f.field, "scenario");
    experiment_report_free(r);
}

static void measured(struct dv_sort_cell *c, const char *d, unsigned m, unsigned cc, double lo, double hi) {
    memset(c, 0, sizeof *c);
    snprintf(c->distribution, sizeof c->distribution, "%s", d);
    c->m = m;
    c->c = cc;
    c->measured = 1;
    c->ratio = (lo + hi) / 2;
    c->ratio_ci.lo = lo;
    c->ratio_ci.hi = hi;
    c->verdict = sortexp_verdict(lo, hi);
}

Test(sortexp, summary_draws_crossovers_and_counts_ambiguous_cells) {
    struct dv_sort s;
    memset(&s, 0, sizeof s);
    s.present = 1;
    measured(&s.cells[0], "uniform", 32, 16, 0.80, 0.90);
    measured(&s.cells[1], "uniform", 32, 128, 0.97, 1.04);
    measured(&s.cells[2], "uniform", 32, 512, 1.40, 1.50);
    measured(&s.cells[3], "tiles", 32, 16, 0.50, 0.60);
    measured(&s.cells[4], "tiles", 32, 128, 0.70, 0.80);
    measured(&s.cells[5], "tiles", 32, 512, 0.90, 0.95);
    s.ncells = 6;
    sortexp_summarise(&s);
    cr_assert_eq(s.ncross, 2u);
    cr_expect_str_eq(s.cross[0].distribution, "uniform");
    cr_expect_eq(s.cross[0].c, 512u);
    cr_expect_eq(s.cross[0].ambiguous, 1u);
    cr_expect_eq(s.cross[1].c, 0u, "tiles: sorting never pays");
    cr_expect(strstr(s.sentence, "uniform M=32 from C=512") != NULL, "%s", s.sentence);
    cr_expect(strstr(s.sentence, "tiles M=32 never") != NULL, "%s", s.sentence);
    cr_expect(strstr(s.sentence, "1 of 6 cells ambiguous") != NULL, "%s", s.sentence);
    cr_expect(strstr(s.sentence, "C=512; tiles") != NULL && strstr(s.sentence, ",;") == NULL,
              "one distribution after another with no stray comma: %s", s.sentence);
}

Test(sortexp, cell_reads_its_table) {
    struct dv_report *r = plan_of("data-sort", 4);
    struct dv_table *t = &r->tables[0];
    struct dv_row *ss = &t->rows[SORTEXP_ROW_SORT_SHADE], *nv = &t->rows[SORTEXP_ROW_NAIVE];
    struct dv_row *sh = &t->rows[SORTEXP_ROW_SHADE_SORTED], *so = &t->rows[SORTEXP_ROW_SORT];
    for (unsigned k = 0; k < t->nrows; k++) t->rows[k].measured = 1;
    nv->ratio = 1.2, nv->ratio_ci.lo = 1.1, nv->ratio_ci.hi = 1.3;
    ss->time_ms.median = 1.0, ss->median_ci_ms.lo = 0.98, ss->median_ci_ms.hi = 1.02;
    sh->time_ms.median = 0.9, sh->median_ci_ms.lo = 0.89, sh->median_ci_ms.hi = 0.91;
    sh->ratio = 0.9, sh->ratio_ci.lo = 0.899, sh->ratio_ci.hi = 0.902; /* shade-sorted / sort+shade by round */
    so->time_ms.median = 0.1, so->median_ci_ms.lo = 0.099, so->median_ci_ms.hi = 0.101;
    struct dv_sort_cell c = r->sort.cells[0];
    sortexp_cell_from_table(t, &c);
    cr_expect_eq(c.verdict, 1);
    cr_expect_float_eq(c.sort_ms, 0.1, 1e-12);
    /* The inside is timed on its own (sortexp_cell_inside), never derived
     * from the rows: the table alone leaves it unmeasured. */
    cr_expect(isnan(c.sort_inside_ms) && !c.sort_agrees);
    sortexp_cell_inside(&c, 0.1002, 0.1000, 0.1004, 1.002, 1.000, 1.004, 0.005);
    cr_expect_float_eq(c.sort_inside_ms, 0.1002, 1e-12);
    cr_expect_float_eq(c.sort_inside_ratio, 1.002, 1e-12);
    cr_expect(c.sort_agrees, "inside / alone [1.000, 1.004] meets 1 +- 0.5%");
    sortexp_cell_inside(&c, 0.0950, 0.0940, 0.0960, 0.950, 0.940, 0.960, 0.005);
    cr_expect(!c.sort_agrees, "[0.94, 0.96] is below 1 - 0.5%");
    sortexp_cell_inside(&c, 0.1020, 0.1011, 0.1030, 1.0100, 1.0060, 1.0130, 0.005);
    cr_expect(!c.sort_agrees, "[1.006, 1.013] is above 1 + 0.5%");
    sortexp_cell_inside(&c, 0.1010, 0.1005, 0.1015, 1.0060, 1.0040, 1.0080, 0.005);
    cr_expect(c.sort_agrees, "[1.004, 1.008] meets 1 + 0.5%");
    sortexp_cell_inside(&c, NAN, NAN, NAN, NAN, NAN, NAN, 0.005);
    cr_expect(!c.sort_agrees, "an inside not measured agrees with nothing");
    experiment_report_free(r);
}

Test(sortexp, counters_say_where_the_sort_is_counted) {
    struct dv_counters c;
    memset(&c, 0, sizeof c);
    c.present = 1, c.inst_executed = 4096, c.threads_per_inst = 20.0, c.ffma_threads = 32 * 1024;
    c.branch_targets_divergent = 64, c.branch_targets = 128;
    sortexp_counters_derive(SORTEXP_ROW_NAIVE, 16, 4.0, &c);
    cr_expect_float_eq(c.warp_efficiency, 20.0 / 32, 1e-12);
    cr_expect_float_eq(c.divergent_per_block, 4.0, 1e-12);
    cr_expect(strstr(c.verdict, "agrees") != NULL, "naive, 4 divergent a block where the model splits 4: %s",
              c.verdict);
    cr_expect(strstr(c.verdict, "CUB") == NULL, "%s", c.verdict);
    sortexp_counters_derive(SORTEXP_ROW_SORT, 16, 0.0, &c);
    cr_expect(strstr(c.verdict, "CUB's radix sort alone") != NULL, "%s", c.verdict);
    sortexp_counters_derive(SORTEXP_ROW_SORT_SHADE, 16, 0.0, &c);
    cr_expect(strstr(c.verdict, "CUB's sort kernels counted with the shade") != NULL, "%s", c.verdict);
}
