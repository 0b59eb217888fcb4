/* fake_measure.h -- what a GPU might have said about a planned report, for
 * tests that need a measured document with every part of the testimony
 * (tests/api/report_forms.c, tests/fixtures/capture_fake.c): row k of each
 * table at its predicted ratio times (1 + 0.07 k) with an interval of a few
 * tenths of a percent, the witness agreeing with the model, counters close
 * to the ratio, a driver and CUDA release. No GPU; the same numbers on every
 * run. Header-only (static), so each program compiles it without a library.
 */
#ifndef DV_TEST_FAKE_MEASURE_H
#define DV_TEST_FAKE_MEASURE_H

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "kernels/model/model/experiment.h"
#include "kernels/model/model/sortexp.h"

static void fake_measure(struct dv_report *r, const char *gpu_name) {
    r->measured = 1;
    snprintf(r->device.name, sizeof r->device.name, "%s", gpu_name);
    r->device.present = 1;
    r->device.cc_major = 9;
    r->device.sm_count = 132;
    r->device.warp_size = 32;
    r->device.driver_version = 13000;
    r->device.runtime_version = 13000;
    snprintf(r->device.nvidia_driver_version, sizeof r->device.nvidia_driver_version, "580.159.04");
    r->testimony = (struct dv_testimony){.witness_requested = 1,
                                         .counters_requested = 1,
                                         .witness_taken = 1,
                                         .counters_taken = 1,
                                         .witness_ms = 10.0,
                                         .counters_ms = 100.0};
    snprintf(r->testimony.counters_library, sizeof r->testimony.counters_library, "libcupti.so.13");
    snprintf(r->started_utc, sizeof r->started_utc, "2026-12-01T00:00:00Z");
    snprintf(r->finished_utc, sizeof r->finished_utc, "2026-12-01T00:00:05Z");
    for (unsigned t = 0; t < r->ntables; t++) {
        struct dv_table *tb = &r->tables[t];
        tb->noise_ok = 1;
        tb->gpu_time_ms = 100.0;
        snprintf(tb->kernel_iterations, sizeof tb->kernel_iterations, "compile-time 4096");
        for (unsigned i = 0; i < tb->nrows; i++) {
            struct dv_row *w = &tb->rows[i];
            const double pr = isfinite(w->predicted_ratio) && w->predicted_ratio > 0 ? w->predicted_ratio : 1.0;
            const int base = (int)i == tb->baseline_row;
            w->measured = 1;
            w->ratio = base ? 1.0 : pr * (1.0 + 0.07 * i);
            w->time_ms.median = w->time_ms.mean = w->time_ms.min = w->time_ms.max = 0.25 * w->ratio;
            w->time_ms.samples = 50;
            w->time_ms.noise = 0.002;
            w->time_ms.stdev = w->time_ms.median * 0.002;
            /* Intervals of a few tenths of a percent, wider down the table; the baseline's ratio is 1 [1, 1]. */
            const double h = 0.002 * (1 + i % 3);
            w->ratio_ci = base ? (struct dv_ci){1.0, 1.0} : (struct dv_ci){w->ratio * (1 - h), w->ratio * (1 + h)};
            w->median_ci_ms = (struct dv_ci){w->time_ms.median * (1 - h), w->time_ms.median * (1 + h)};
            w->floor_fraction = 0.5;
            w->check.ok = 1;
            w->check.checked = 1048576;
            w->check.first_mismatch = -1;
            if (w->kernel == DV_KERNEL_SCENARIO) {
                w->measured_efficiency = w->predicted_efficiency * 0.97;
                w->agreement = w->ratio / pr;
            }
            struct dv_observed *o = &w->observed;
            o->present = 1;
            o->per = 1;
            o->split_warps = w->warps_split;
            o->path_runs = w->path_runs;
            o->lanes_per_run[0] = o->lanes_per_run[1] = 32.0;
            o->agrees = 1;
            o->first_difference = -1;
            snprintf(o->verdict, sizeof o->verdict, "agrees with the model");
            struct dv_counters *c = &w->counters;
            c->present = 1;
            c->threads_per_inst = 32.0;
            c->warp_efficiency = 1.0;
            c->inst_per_fma = 1.04;
            c->inst_vs_baseline = base ? 1.0 : pr * (1.0 + 0.05 * i);
            c->divergent_per_block = w->warps_split.per_block;
            c->model_split_per_block = w->warps_split.per_block;
            snprintf(c->verdict, sizeof c->verdict, "agrees");
            /* A data-sort row's witness is its cell's per-warp record. */
            if (sortexp_table_is(tb)) memset(o, 0, sizeof *o);
        }
    }
    for (unsigned k = 0; r->sort.present && k < r->sort.ncells; k++) {
        struct dv_sort_cell *cell = &r->sort.cells[k];
        if (cell->table < 0 || (unsigned)cell->table >= r->ntables) continue;
        sortexp_cell_from_table(&r->tables[cell->table], cell);
        sortexp_cell_inside(cell, cell->sort_ms, cell->sort_ci.lo, cell->sort_ci.hi, 1.001, 0.998, 1.004, 0.005);
        struct dv_sort_witness *w[2] = {&cell->naive, &cell->sorted};
        for (unsigned o = 0; o < 2; o++) {
            memset(w[o], 0, sizeof *w[o]);
            w[o]->present = w[o]->agrees = 1;
            w[o]->first_difference = -1;
            w[o]->warps = 32768;
            w[o]->k_mean = o ? 1.0 : cell->k_naive;
            w[o]->k_hist[o ? 1 : (cell->m < 32 ? cell->m : 32)] = w[o]->warps;
            w[o]->lane_hist[32] = w[o]->warps;
        }
    }
    if (r->sort.present) sortexp_summarise(&r->sort);
}

#endif /* DV_TEST_FAKE_MEASURE_H */
