/* test_gpu_sort.c -- the data-sort experiment on a GPU: the witness's
 * per-warp record against the CPU count over the same array, and a measured
 * nightly set end to end (every row checked, the sort inside sort+shade
 * against the sort alone).
 *
 * Label gpu: each test skips with CUDA's reason where there is no device.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "tests/kernels/gpu/helper_gpu.h"
#include "kernels/gpu/measure.h"
#include "kernels/gpu/sort_measure.h"
#include "kernels/model/model/experiment.h"
#include "kernels/model/model/sortexp.h"

/* Every warp's k and lane histogram from the GPU equal to the CPU's, exactly. */
static void witness_equals_cpu(enum sortexp_dist d, unsigned m, unsigned blocks, unsigned tpb, int sorted) {
    const unsigned long long warps = sortexp_warps((unsigned long long)blocks * tpb, tpb);
    struct sortexp_warp *gpu = calloc(warps, sizeof *gpu), *cpu = calloc(warps, sizeof *cpu);
    char err[ERR_LEN] = "";
    cr_assert(gpu && cpu);
    cr_assert_eq(sort_witness_records(d, m, blocks, tpb, sorted, gpu, cpu, err), 0, "%s", err);
    unsigned long long bad = 0, first = 0, ks = 0;
    for (unsigned long long w = 0; w < warps; w++) {
        ks += gpu[w].k;
        if (memcmp(&gpu[w], &cpu[w], sizeof gpu[w]) != 0 && bad++ == 0) first = w;
    }
    cr_expect_eq(bad, 0ull, "%s M=%u %s on %u x %u: %llu of %llu warps differ, first %llu (GPU k %u, CPU k %u)",
                 sortexp_dist_name(d), m, sorted ? "sorted" : "naive", blocks, tpb, bad, warps, first, gpu[first].k,
                 cpu[first].k);
    cr_expect_gt(ks, 0ull, "the witness recorded runs");
    free(gpu);
    free(cpu);
}

Test(gpu_sort, witness_equals_the_cpu_count_per_warp) {
    HELPER_REQUIRE_GPU();
    for (int sorted = 0; sorted <= 1; sorted++) {
        witness_equals_cpu(SORTEXP_UNIFORM, 32, 512, 256, sorted);
        witness_equals_cpu(SORTEXP_ZIPF, 16, 512, 256, sorted);
        witness_equals_cpu(SORTEXP_TILES, 32, 512, 256, sorted);
        witness_equals_cpu(SORTEXP_PRESORTED, 7, 512, 256, sorted);
        witness_equals_cpu(SORTEXP_UNIFORM, 5, 300, 80, sorted); /* a partial warp in every block */
    }
}

Test(gpu_sort, nightly_set_measured_checked_and_the_sort_agrees, .timeout = 300) {
    HELPER_REQUIRE_GPU();
    struct dv_options o;
    experiment_defaults(&o);
    snprintf(o.scenario, sizeof o.scenario, "data-sort");
    o.blocks = 2048;
    o.budget_ms = 150;
    char err[ERR_LEN] = "";
    struct dv_report *r = experiment_report_create();
    cr_assert_not_null(r);
    cr_assert_eq(measure_run(&o, r, err), 0, "%s", err);
    helper_expect_all_checked(r);
    cr_assert(r->sort.present);
    cr_assert_eq(r->sort.ncells, 12u);
    for (unsigned i = 0; i < r->sort.ncells; i++) {
        const struct dv_sort_cell *c = &r->sort.cells[i];
        const char *id = r->tables[c->table].id;
        cr_expect(c->measured, "%s not measured", id);
        cr_expect(c->naive.present && c->naive.agrees, "%s: naive witness differs at warp %lld", id,
                  c->naive.first_difference);
        cr_expect(c->sorted.present && c->sorted.agrees, "%s: sorted witness differs at warp %lld", id,
                  c->sorted.first_difference);
        cr_expect(c->ratio_ci.lo <= c->ratio && c->ratio <= c->ratio_ci.hi, "%s: ratio outside its interval", id);
        cr_expect(c->sort_agrees,
                  "%s: the sort inside sort+shade %.5f ms [%.5f, %.5f], inside / alone %.4f [%.4f, %.4f] by round; "
                  "the sort row %.5f ms [%.5f, %.5f]",
                  id, c->sort_inside_ms, c->sort_inside_ci.lo, c->sort_inside_ci.hi, c->sort_inside_ratio,
                  c->sort_inside_ratio_ci.lo, c->sort_inside_ratio_ci.hi, c->sort_ms, c->sort_ci.lo, c->sort_ci.hi);
        printf("%s: inside %.5f ms, inside / alone %.4f [%.4f, %.4f], sort row %.5f ms [%.5f, %.5f]\n", id,
               c->sort_inside_ms, c->sort_inside_ratio, c->sort_inside_ratio_ci.lo, c->sort_inside_ratio_ci.hi,
               c->sort_ms, c->sort_ci.lo, c->sort_ci.hi);
        /* The counters on every row where the process has them: the naive
         * shading's warps run with fewer lanes than the sorted shading's. */
        const struct dv_table *t = &r->tables[c->table];
        if (r->testimony.counters_taken) {
            for (unsigned k = 0; k < t->nrows; k++)
                cr_expect(t->rows[k].counters.present && t->rows[k].counters.inst_executed > 0,
                          "%s row %s: no counters", id, t->rows[k].name);
            const struct dv_counters *nv = &t->rows[SORTEXP_ROW_NAIVE].counters,
                                     *so = &t->rows[SORTEXP_ROW_SHADE_SORTED].counters;
            if (c->naive.k_mean > 2)
                cr_expect(nv->threads_per_inst < so->threads_per_inst,
                          "%s: %.2f lanes an instruction naive, %.2f sorted", id, nv->threads_per_inst,
                          so->threads_per_inst);
        }
        /* The uniform draw over 32 materials: about 20 a warp as given, about 1 sorted. */
        if (c->m == 32 && strcmp(c->distribution, "uniform") == 0)
            cr_expect(c->naive.k_mean > 19 && c->sorted.k_mean < 1.2, "%s: k %.2f naive, %.2f sorted", id,
                      c->naive.k_mean, c->sorted.k_mean);
    }
    cr_expect(r->sort.ncross == 4, "four (distribution, M) rows of the map: %u", r->sort.ncross);
    printf("counters: %s%s%s\n", r->testimony.counters_taken ? "taken" : "not taken",
           r->testimony.counters_reason[0] ? ": " : "", r->testimony.counters_reason);
    experiment_report_free(r);
}
