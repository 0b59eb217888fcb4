/* report_full.h -- a struct dv_report in which every field the divergence.v1
 * document carries is set, each to a value of its own.
 *
 * The wire format is written by hand in several places (the structs of
 * kernels/model/model/experiment.h, report_dump.c, report_load.c, api/openapi.yaml),
 * and this report is what holds them together: test_report.c writes it, reads
 * it back and writes it again (a field the reader forgets comes back zero and
 * the two documents differ), and report_sample.c prints it for
 * tests/api/openapi/report_schema.test.mjs, which checks its keys against the
 * document's Report schema both ways. So no field may be left at a value the
 * writer turns into null or leaves out: no 0 clock, no NaN, no -1 index, no
 * empty string, a row of each kind (a Part 1 row, one not comparable with a
 * failed check, a scenario row, Part 2's rows with their readings), and
 * testimony on every row. A new field of
 * the document needs a value here.
 *
 * Header-only (static functions) so that both programs that use it compile it
 * without a library of their own.
 */
#ifndef DV_TEST_REPORT_FULL_H
#define DV_TEST_REPORT_FULL_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "kernels/model/model/experiment.h"
#include "kernels/model/listing/listing.h"

static void report_full_count(struct dv_count *c, unsigned k) {
    c->min = k;
    c->max = k + 3;
    c->total = 1000ull * k + 7;
    c->per_block = k + 1.5;
}

/* Row `k`'s instruction profile: every field set, two regions (with stall
 * reasons) and two runs; NULL when out of memory. */
static struct listing *report_full_listing(unsigned k) {
    struct listing *l = listing_create();
    if (!l) return NULL;
    snprintf(l->source, sizeof l->source, "cupti-sass");
    snprintf(l->kernel, sizeof l->kernel, "_Z12mixOneBranchILj4096ELb0EEvPKfPfmijP16dv_witness_block%u", k);
    l->cubin_crc = 0x30bf6c82ull + k;
    l->mask_hash = 0x9e3779b97f4a7c15ull - k;
    l->grid_blocks = 2 + k;
    l->block_x = 32;
    l->block_y = 8;
    l->scale = 2048.5 + k;
    l->cached = 1;
    snprintf(l->collected_utc, sizeof l->collected_utc, "2026-12-01T12:00:0%uZ", k);
    l->collect_ms = 312.5 + k;
    snprintf(l->disassembler, sizeof l->disassembler, "nvdisasm 13.0.%u", 48 + k);
    snprintf(l->disassembly_reason, sizeof l->disassembly_reason, "a reason kept beside a disassembly %u", k);
    l->mapped = 0.96875 + 0.001 * k;
    l->nregions = 3;
    static const enum listing_kind kinds[3] = {LISTING_BEFORE, LISTING_PATH_A, LISTING_TAIL};
    for (unsigned r = 0; r < 3; r++) {
        struct listing_region *g = &l->regions[r];
        g->kind = kinds[r];
        g->instructions = 45 + r + k;
        g->warp = 8448ull * (r + 1) + k;
        g->thread = 270336ull * (r + 1) + k;
        g->pred_on = 135168ull * (r + 1) + k;
        g->lanes = 16.5 + r + k;
        g->has_stalls = 1;
        g->nstalls = 2;
        snprintf(g->stalls[0].reason, sizeof g->stalls[0].reason, "wait");
        g->stalls[0].share = 0.375 + 0.01 * k;
        snprintf(g->stalls[1].reason, sizeof g->stalls[1].reason, "selected");
        g->stalls[1].share = 0.25 + 0.01 * k;
    }
    for (unsigned r = 0; r < 3; r++) {
        struct listing_run run;
        memset(&run, 0, sizeof run);
        run.pc = 0x310u + 16u * r + 256u * k + (r == 2 ? 16u * 191u : 0u);
        run.count = 1 + 191 * (r == 1);
        snprintf(run.opcode, sizeof run.opcode, "%s", r ? "FFMA" : "BRA");
        snprintf(run.sass, sizeof run.sass, "%s", r ? "FFMA R7, R7, R0, 9.9999997473787516356e-05" : "@P0 BRA `(.L_x_52)");
        snprintf(run.last_sass, sizeof run.last_sass, "%s", r ? "FFMA R7, R7, R0, 1e-04" : "@P0 BRA `(.L_x_52)");
        snprintf(run.file, sizeof run.file, "kernels/gpu/lesson_kernels.cu");
        run.line = 160 + r + k;
        run.region = kinds[r];
        run.guarded = r < 2;
        run.warp = 8448ull + r + k;
        run.thread = 270336ull + r + k;
        run.pred_on = 135168ull + r + k;
        run.lanes = 16.25 + r + k;
        run.divergent = 8448ull - r + k;
        run.has_target = 1; /* every field set, as the fixture is */
        run.target = 0x340u + 256u * k + 16u * r;
        if (listing_add_run(l, &run) != 0) {
            listing_free(l);
            return NULL;
        }
    }
    return l;
}

/* Row `k` of a table: every field distinct from the other rows'. */
static void report_full_row(struct dv_row *w, unsigned k, int kernel) {
    double f = 1.0 + k;
    snprintf(w->name, sizeof w->name, "row-%u", k);
    snprintf(w->label, sizeof w->label, "threadIdx.x %% %u < 3", k + 5);
    w->kernel = kernel;
    w->mode = (int)k + 1;
    w->warps_per_block = 8 + k;
    w->threads_per_block = 256 + k;
    report_full_count(&w->warps_split, 10 + k);
    report_full_count(&w->threads_on_a, 20 + k);
    report_full_count(&w->path_runs, 30 + k);
    w->predicted_ratio = 1.25 * f;
    w->comparable = 1;
    snprintf(w->note, sizeof w->note, "note of row %u", k);
    /* Block 0's lane map, a pattern of its own per row and warp (a scenario
     * row has none); 256 + k threads end in a partial warp for k > 0, whose
     * missing lanes are written '-'. */
    if (kernel != DV_KERNEL_SCENARIO) {
        w->lanes_warps = (w->threads_per_block + 31) / 32;
        for (unsigned q = 0; q < w->lanes_warps; q++) {
            const unsigned present = w->threads_per_block - q * 32 < 32 ? w->threads_per_block - q * 32 : 32;
            const uint32_t bits = 0x9e3779b9u * (37u * k + q + 1u);
            w->lanes_block0[q] = present < 32 ? bits & ((1u << present) - 1u) : bits;
        }
    }
    w->measured = 1;
    w->time_ms = (struct dv_stats){.median = 2.5 * f, .min = 2.25 * f, .max = 2.75 * f, .mean = 2.5625 * f,
                                   .stdev = 0.0125 * f, .samples = 40 + k, .noise = 0.00375 * f};
    w->median_ci_ms = (struct dv_ci){2.4375 * f, 2.5625 * f};
    w->ratio = 1.375 * f;
    w->ratio_ci = (struct dv_ci){1.3125 * f, 1.4375 * f};
    w->ratio_level = 0.95 + 0.001 * k;
    w->ratio_method = 1; /* RATIO_OF_ROUNDS */
    w->ratio_of_medians = 1.390625 * f;
    w->ratio_halfwidth = 0.0045 + 0.0001 * k;
    w->spread_flags = 7; /* every flag: tail, split, drift */
    w->spread_excess = 3.25 + k;
    w->spread_drift = 0.0015 + 0.0001 * k;
    w->rounds_dropped = 3 + k;
    w->floor_fraction = 0.625 + 0.01 * k;
    w->check = (struct dv_check){.ok = 1, .checked = 1048576ull + k, .mismatches = 0, .first_mismatch = 17 + k,
                                 .expected = 4096.5f, .got = 4096.5f};
    w->predicted_efficiency = 0.5 + 0.0625 * k;
    w->measured_efficiency = 0.4375 + 0.0625 * k;
    w->agreement = 1.0625 + 0.0625 * k;

    struct dv_observed *o = &w->observed;
    o->present = 1;
    for (unsigned p = 0; p < 2; p++) {
        o->runs[p] = 100ull * (k + 1) + p;
        o->split[p] = 50ull * (k + 1) + p;
        o->lanes[p] = 1600ull * (k + 1) + p;
        o->lanes_per_run[p] = 16.5 + p + k;
        for (unsigned b = 0; b < 33; b++) o->hist[p][b] = 1000ull * p + 10ull * b + k + 1;
    }
    o->per = 1 + k;
    report_full_count(&o->path_runs, 40 + k);
    report_full_count(&o->split_warps, 50 + k);
    o->agrees = 1;
    o->predicated = 1;
    o->first_difference = 3 + k;
    o->blocks_witnessed = 1 + k;
    snprintf(o->verdict, sizeof o->verdict, "witness verdict %u", k);

    struct dv_counters *c = &w->counters;
    c->present = 1;
    c->branch_targets_divergent = 32768 + k;
    c->branch_targets = 65536 + k;
    c->branch_uniform_pct = 50.5 + k;
    c->threads_per_inst = 16.25 + k;
    c->inst_executed = 2.5e8 + k;
    c->ffma_threads = 4.25e9 + k;
    c->warp_efficiency = 0.5078125 + 0.001 * k;
    c->divergent_per_block = 8.5 + k;
    c->model_split_per_block = 7.5 + k;
    c->inst_per_fma = 2.0625 + k;
    c->inst_vs_baseline = 1.9375 + k;
    c->predicated = 1;
    snprintf(c->verdict, sizeof c->verdict, "counters verdict %u", k);
    c->dram_present = 1; /* arithmetic intensity */
    c->dram_bytes_read = 268435456.0 + 32.0 * k;
    w->instructions = report_full_listing(k); /* NULL (out of memory) fails the round trip */
}

/* Fills `r` (zeroed, or filled by report_full() before: its profiles are
 * freed first). */
static void report_full(struct dv_report *r) {
    for (unsigned i = 0; i < DV_MAX_TABLES; i++)
        for (unsigned j = 0; j < DV_MAX_ROWS; j++) listing_free(r->tables[i].rows[j].instructions);
    memset(r, 0, sizeof *r);
    struct dv_device *d = &r->device;
    d->present = 1;
    d->ordinal = 2;
    snprintf(d->name, sizeof d->name, "NVIDIA H200");
    d->cc_major = 9;
    d->cc_minor = 1;
    d->sm_count = 132;
    d->warp_size = 32;
    d->driver_version = 13020;
    d->runtime_version = 12060;
    d->rated_sm_clock_mhz = 1980;
    d->measured_sm_clock_mhz = 1975.5;
    d->measured_sm_clock_min_mhz = 1965.25;
    d->fp32_lanes_per_sm = 128;
    d->total_mem_bytes = 150ull << 30;
    d->max_threads_per_sm = 2048;
    snprintf(d->pci_bus_id, sizeof d->pci_bus_id, "0000:19:00.0");
    snprintf(d->nvidia_driver_version, sizeof d->nvidia_driver_version, "580.159.04");
    snprintf(d->reason, sizeof d->reason, "a reason kept beside a present device");

    snprintf(r->build.nvcc_version, sizeof r->build.nvcc_version, "13.0.88");
    snprintf(r->build.cuda_architectures, sizeof r->build.cuda_architectures, "90-real;100");
    snprintf(r->build.flags, sizeof r->build.flags, "-O3 -lineinfo");
    snprintf(r->build.kernel_digest, sizeof r->build.kernel_digest, "0123456789abcdef");

    struct dv_config *c = &r->config;
    snprintf(c->experiment, sizeof c->experiment, "all");
    c->blocks = 4097;
    c->blocks_auto = 1;
    snprintf(c->blocks_reason, sizeof c->blocks_reason, "8 waves of 132 SMs");
    c->block_x = 32;
    c->block_y = 8;
    c->threads_per_block = 256;
    c->threads = 1048832;
    c->iterations = 4095;
    c->fmas_per_launch = 1048832ull * 4095;
    c->bytes_per_launch = 8390656;
    c->fma_floor_ms = 0.75;
    c->max_noise = 0.0045;
    c->budget_ms = 1500.5;
    c->min_samples = 11;
    c->max_samples = 1999;

    r->measured = 1;
    r->ntables = 3;
    struct dv_table *t = &r->tables[0];
    snprintf(t->id, sizeof t->id, "part1");
    snprintf(t->note, sizeof t->note, "the baseline puts every thread on one path");
    snprintf(t->suggested_baseline, sizeof t->suggested_baseline, "(warp & 1) == 0");
    snprintf(t->title, sizeof t->title, "Part 1: one branch");
    snprintf(t->kernel, sizeof t->kernel, "branch");
    snprintf(t->kernel_iterations, sizeof t->kernel_iterations, "compile-time 4096");
    t->cost_witness_ms = 1.25;
    t->cost_counters_ms = 9.5;
    t->counters_launches = 10;
    t->counters_blocks = 1032;
    snprintf(t->baseline, sizeof t->baseline, "row-1");
    t->baseline_row = 1;
    t->nrows = 2;
    report_full_row(&t->rows[0], 0, DV_KERNEL_BRANCH);
    report_full_row(&t->rows[1], 1, DV_KERNEL_MASK);
    struct dv_row *nc = &t->rows[1];
    nc->comparable = 0;
    snprintf(nc->comparable_reason, sizeof nc->comparable_reason, "16 of 256 threads on path A against 128");
    nc->check = (struct dv_check){.ok = 0, .checked = 1048576, .mismatches = 12, .first_mismatch = 345,
                                  .expected = 1.5f, .got = 2.25f};
    t->noise_limit = 0.005;
    t->noise_ok = 1;
    t->gpu_time_ms = 1999.5;
    t->halfwidth_target = 0.0051;
    t->intervals_ok = 1;
    snprintf(t->stop_reason, sizeof t->stop_reason, "target");
    t->worst_row = 0;
    t->worst_halfwidth = 0.0049;
    t->timer_resolution_ms = 0.000032;
    t->batch_readers = 15; /* measured in a class's batch */
    t->batch_rows = 16;

    t = &r->tables[1];
    snprintf(t->id, sizeof t->id, "scenario:even-2way");
    snprintf(t->title, sizeof t->title, "Even 2-way split (worked case C1)");
    snprintf(t->kernel, sizeof t->kernel, "kway");
    snprintf(t->kernel_iterations, sizeof t->kernel_iterations, "runtime");
    t->cost_witness_ms = 0.5;
    t->cost_counters_ms = 4.75;
    t->counters_launches = 6;
    t->counters_blocks = 24;
    snprintf(t->baseline, sizeof t->baseline, "row-2");
    t->baseline_row = 0;
    t->nrows = 1;
    report_full_row(&t->rows[0], 2, DV_KERNEL_SCENARIO);
    t->noise_limit = 0.0055;
    t->noise_ok = 1;
    t->gpu_time_ms = 750.25;
    t->halfwidth_target = 0.0056;
    t->intervals_ok = 0;
    snprintf(t->stop_reason, sizeof t->stop_reason, "budget");
    t->worst_row = 0;
    t->worst_halfwidth = 0.0061;
    t->timer_resolution_ms = 0.001;

    /* Part 2: no branch and two per-iteration rows, one that splits its
     * warps and one that does not, so the table has its readings. */
    t = &r->tables[2];
    snprintf(t->id, sizeof t->id, "part2");
    snprintf(t->title, sizeof t->title, "Part 2: the branch inside the loop");
    snprintf(t->kernel, sizeof t->kernel, "per-iteration");
    snprintf(t->kernel_iterations, sizeof t->kernel_iterations, "compile-time 4096");
    t->cost_witness_ms = 2.5;
    t->cost_counters_ms = 17.25;
    t->counters_launches = 3;
    t->counters_blocks = 4097;
    snprintf(t->baseline, sizeof t->baseline, "row-3");
    t->baseline_row = 0;
    t->nrows = 3;
    report_full_row(&t->rows[0], 3, DV_KERNEL_NOBRANCH);
    report_full_row(&t->rows[1], 4, DV_KERNEL_PERITER);
    report_full_row(&t->rows[2], 5, DV_KERNEL_PERITER);
    t->rows[2].warps_split.min = t->rows[2].warps_split.max = 0; /* warp-uniform */
    t->noise_limit = 0.0045;
    t->noise_ok = 1;
    t->gpu_time_ms = 400.5;
    t->halfwidth_target = 0.0046;
    t->intervals_ok = 1;
    snprintf(t->stop_reason, sizeof t->stop_reason, "cap");
    t->worst_row = 1;
    t->worst_halfwidth = 0.0044;
    t->timer_resolution_ms = 0.000033;

    /* An experiment's table (the predication map's): the point's lane-split
     * row against its warp-split row, whose profile is predicated (every
     * path FFMA guarded, no branch before them), a join record, a fit. */
    r->ntables = 4;
    t = &r->tables[3];
    snprintf(t->id, sizeof t->id, "scenario:predication");
    snprintf(t->title, sizeof t->title, "Predicated or branched (experiment X2)");
    snprintf(t->kernel, sizeof t->kernel, "short-ifelse");
    snprintf(t->kernel_iterations, sizeof t->kernel_iterations, "runtime");
    snprintf(t->experiment, sizeof t->experiment, "predication");
    t->cost_witness_ms = 0.75;
    t->cost_counters_ms = 3.5;
    t->counters_launches = 4;
    t->counters_blocks = 8;
    snprintf(t->baseline, sizeof t->baseline, "row-7");
    t->baseline_row = 1;
    t->nrows = 2;
    report_full_row(&t->rows[0], 6, DV_KERNEL_SCENARIO);
    report_full_row(&t->rows[1], 7, DV_KERNEL_SCENARIO);
    for (unsigned k = 0; k < 2; k++) {
        struct dv_row *w = &t->rows[k];
        snprintf(w->point.arrangement, sizeof w->point.arrangement, "%s", k ? "warps" : "lanes");
        w->point.k = 3 + k;
        w->point.la = 2;
        w->point.lb = 1;
        snprintf(w->point.variant, sizeof w->point.variant, "branch");
        w->in_fit = 1;
        w->fit_x = 3.5 + k;
        w->thread_fmas = 3221225472ull + k;
        struct dv_join *j = &w->join;
        j->present = 1;
        j->warps = 1056 + k;
        j->reconverged = 1000 + k;
        j->groups_max = 2 + k;
        j->groups_mean = 1.0625 + k;
        j->lanes_mean = 30.5 + k;
        j->nmasks = 2;
        j->mask[0] = 0xffffffffu - k;
        j->mask[1] = 0x55555555u + k;
        j->mask_groups[0] = 1000 + k;
        j->mask_groups[1] = 112 + k;
        j->expected_mask = 0xaaaaaaaau + k;
        j->spread_median = 12.5 + k;
        j->spread_max = 4096.5 + k;
        j->blocks = 132 + k;
        snprintf(j->verdict, sizeof j->verdict, "join verdict %u", k);
    }
    t->rows[0].versus = 2; /* against row 1 */
    struct listing_run *branch = &t->rows[0].instructions->runs[0];
    snprintf(branch->opcode, sizeof branch->opcode, "ISETP.NE.AND");
    snprintf(branch->sass, sizeof branch->sass, "@P0 ISETP.NE.AND P1, PT, R2, RZ, PT");
    t->noise_limit = 0.005;
    t->noise_ok = 1;
    t->gpu_time_ms = 120.5;
    t->halfwidth_target = 0.0052;
    t->intervals_ok = 1;
    snprintf(t->stop_reason, sizeof t->stop_reason, "target");
    t->worst_row = 0;
    t->worst_halfwidth = 0.0031;
    t->timer_resolution_ms = 0.000034;
    t->fit = (struct dv_fit){.present = 1,
                             .points = 7,
                             .rounds = 16,
                             .a = 0.0125,
                             .b = 0.0375,
                             .b_over_a = 3.0625,
                             .a_ci = {0.0115, 0.0135},
                             .b_ci = {0.037, 0.038},
                             .b_over_a_ci = {3.0, 3.125},
                             .level = 0.9787,
                             .residual_rms_ms = 0.00025,
                             .residual_max_rel = 0.0125,
                             .x = "k"};

    /* ---- arithmetic intensity: a point's lane-split row against its
     * warp-aligned row, their roofline figures, the table's ridge. */
    r->ntables = 5;
    t = &r->tables[4];
    *t = r->tables[3];
    for (unsigned k = 0; k < 2; k++) t->rows[k].instructions = report_full_listing(10 + k);
    snprintf(t->id, sizeof t->id, "scenario:intensity-stream");
    snprintf(t->experiment, sizeof t->experiment, "intensity");
    t->ridge = (struct dv_ridge){.present = 1, .bandwidth_gbs = 4321.5, .bandwidth_from_dram = 1,
                                 .flop_rate = 6.125e13, .ridge = 14.1875};
    snprintf(t->dram_reason, sizeof t->dram_reason, "a DRAM reason");
    for (unsigned k = 0; k < 2; k++) {
        struct dv_intensity *m = &t->rows[k].intensity;
        t->rows[k].join.present = 0;
        t->rows[k].in_fit = 0;
        m->present = 1;
        snprintf(m->variant, sizeof m->variant, "stream");
        m->fmas = 4;
        m->loads = 2;
        m->intensity = 1.0;
        m->flops = 2.5e9 + k;
        m->bytes = 2.68435456e8;
        m->flop_rate = 1.25e12 + k;
        m->bandwidth_gbs = 3800.5 + k;
        m->dram_gbs = 3900.25 + k;
        m->dram_intensity = 0.9375 + k;
        m->roofline = 4.0625e12 + k;
        m->roofline_fraction = 0.8125 + k;
        snprintf(m->bound, sizeof m->bound, "%s", k ? "compute" : "memory");
    }
    /* ---- end arithmetic intensity ---- */

    r->nwarnings = 2;
    snprintf(r->warnings[0], sizeof r->warnings[0], "SM clock 99%% of rated");
    snprintf(r->warnings[1], sizeof r->warnings[1], "a second warning");
    r->gpu_time_ms = 2749.75;
    struct dv_testimony *tm = &r->testimony;
    tm->witness_requested = 1;
    tm->counters_requested = 1;
    /* Not taken, so each pass's reason is written (a taken pass writes null). */
    tm->witness_taken = 0;
    tm->counters_taken = 0;
    snprintf(tm->witness_reason, sizeof tm->witness_reason, "witness off for one row");
    snprintf(tm->counters_reason, sizeof tm->counters_reason, "counters off for one row");
    snprintf(tm->counters_library, sizeof tm->counters_library, "libcupti.so.13");
    tm->witness_ms = 12.5;
    tm->counters_ms = 180.25;
    tm->counters_setup_ms = 412.75;
    tm->instructions_requested = 1;
    tm->instructions_taken = 0;
    snprintf(tm->instructions_reason, sizeof tm->instructions_reason, "instructions over the cost cap for one row");
    tm->instructions_ms = 340.5;
    tm->instructions_cached_rows = 2;
    /* The data-sort experiment: one cell, one crossover (report_sort.c). */
    struct dv_sort *so = &r->sort;
    so->present = 1;
    so->ncells = 1;
    struct dv_sort_cell *sc = &so->cells[0];
    snprintf(sc->distribution, sizeof sc->distribution, "uniform");
    sc->m = 32, sc->c = 128, sc->table = 1, sc->measured = 1;
    sc->ratio = 1.375, sc->ratio_ci.lo = 1.25, sc->ratio_ci.hi = 1.5, sc->ratio_level = 0.9609375;
    sc->verdict = 1, sc->index_ratio = 1.125;
    sc->sort_ms = 0.0625, sc->sort_ci.lo = 0.0615, sc->sort_ci.hi = 0.0635;
    sc->sort_inside_ms = 0.0620, sc->sort_inside_ci.lo = 0.0590, sc->sort_inside_ci.hi = 0.0650;
    sc->sort_agrees = 1, sc->k_naive = 20.625, sc->k_sorted = 1.03125;
    struct dv_sort_witness *ws[2] = {&sc->naive, &sc->sorted};
    for (unsigned k = 0; k < 2; k++) {
        ws[k]->present = 1;
        ws[k]->warps = 32768 + k;
        for (unsigned l = 0; l <= 32; l++) ws[k]->k_hist[l] = 3 * l + k, ws[k]->lane_hist[l] = 5 * l + k + 1;
        ws[k]->k_mean = 20.5 - 19 * k;
        ws[k]->agrees = 0;
        ws[k]->first_difference = 7 + k;
    }
    so->ncross = 1;
    snprintf(so->cross[0].distribution, sizeof so->cross[0].distribution, "uniform");
    so->cross[0].m = 32, so->cross[0].c = 128, so->cross[0].ambiguous = 2;
    snprintf(so->sentence, sizeof so->sentence, "Sorting by material pays: uniform M=32 from C=128.");
    r->wall_time_ms = 4100.5;
    snprintf(r->started_utc, sizeof r->started_utc, "2026-08-30T10:00:00Z");
    snprintf(r->finished_utc, sizeof r->finished_utc, "2026-08-30T10:00:04Z");
}

#endif /* DV_TEST_REPORT_FULL_H */
