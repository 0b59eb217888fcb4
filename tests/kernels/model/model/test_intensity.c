/* test_intensity.c -- the arithmetic-intensity experiment without a GPU:
 * its paths' work and constants, the CPU reference against the steps
 * written out by hand, the data the kernels read (stream words, the chase's
 * one cycle), its tables (points over three decades, lane-split against
 * warp-aligned, equal work), the witness's model, and the roofline read
 * against a ridge measured in the same table. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/model/model/experiment.h"
#include "kernels/model/model/intensity.h"
#include "kernels/model/model/plan.h"
#include "kernels/model/model/scenario.h"
#include "kernels/model/model/scenario_table.h"
#include "kernels/model/model/testimony.h"
#include "tests/kernels/model/model/plans.h"

/* Path p of F FMAs per L loads, written out step by step. */
static float by_hand(unsigned variant, unsigned F, unsigned L, float x, unsigned p) {
    const float a = 1.0f - (float)(80u + p) / 65536.0f, b = (float)((p + 1u) * (80u + p)) / 4194304.0f;
    for (unsigned s = 0; s < 64u / L; s++) {
        uint32_t u = 0;
        for (unsigned j = 0; j < L; j++) u += variant == INTENSITY_CHASE ? 0x2Au : (s * L + j + 1u) * 0x9E3779B1u;
        const uint32_t bits = 0x34000000u | (u & 0x7FFFFu);
        float in;
        memcpy(&in, &bits, sizeof in);
        x = fmaf(x, a, in);
        for (unsigned k = 1; k < F; k++) x = fmaf(x, a, b);
    }
    return x;
}

Test(intensity, the_reference_is_the_steps_written_out) {
    static const unsigned pts[][2] = {{1, 16}, {1, 2}, {4, 1}, {16, 1}, {256, 1}, {2, 4}};
    for (unsigned v = INTENSITY_STREAM; v <= INTENSITY_CHASE; v++)
        for (size_t i = 0; i < sizeof pts / sizeof pts[0]; i++)
            for (unsigned p = 0; p < 2; p++) {
                const float x = 0.5f + 0.125f * (float)i;
                const float want = by_hand(v, pts[i][0], pts[i][1], x, p);
                const float got = intensity_reference(v, pts[i][0], pts[i][1], x, p);
                cr_expect_eq(memcmp(&got, &want, sizeof got), 0, "variant %u F %u L %u path %u: %a, by hand %a", v,
                             pts[i][0], pts[i][1], p, got, want);
            }
}

Test(intensity, both_paths_do_equal_work_with_constants_of_their_own) {
    for (unsigned F = 1; F <= INTENSITY_MAX_F; F *= 2)
        for (unsigned L = 1; L <= INTENSITY_MAX_L; L *= 2) {
            cr_expect(intensity_point_ok(F, L));
            cr_expect_eq(intensity_thread_fmas(INTENSITY_STREAM, F, L), (64u / L) * F);
            cr_expect_eq(intensity_thread_fmas(INTENSITY_CHASE, F, L), (64u / L) * F);
            cr_expect(fabs(intensity_nominal(F, L) - 2.0 * F / (4.0 * L)) < 1e-12);
            /* A thread on the wrong path cannot pass the check. */
            const float a = intensity_reference(INTENSITY_STREAM, F, L, 0.75f, 0);
            const float b = intensity_reference(INTENSITY_STREAM, F, L, 0.75f, 1);
            cr_expect_neq(memcmp(&a, &b, sizeof a), 0, "F %u L %u: the paths give the same value", F, L);
        }
    cr_expect_not(intensity_point_ok(0, 1));
    cr_expect_not(intensity_point_ok(3, 1));
    cr_expect_not(intensity_point_ok(512, 1));
    cr_expect_not(intensity_point_ok(1, 32));
    cr_expect_neq(intensity_a(0), intensity_a(1));
    cr_expect_neq(intensity_b(0), intensity_b(1));
    cr_expect_eq(intensity_thread_fmas(INTENSITY_RIDGE_FMA, 0, 0), INTENSITY_RIDGE_FMAS);
    cr_expect_eq(intensity_thread_bytes(INTENSITY_RIDGE_FMA), 0u);
    cr_expect_eq(intensity_thread_bytes(INTENSITY_RIDGE_BANDWIDTH), 256u);
    cr_expect_eq(intensity_thread_bytes(INTENSITY_CHASE), 256u);
}

/* Every word of the chase buffer is one link of a single cycle through all
 * 2^26 words (256 MiB: four times the H200's L2), so no chain closes early
 * into a loop the L2 could hold. */
Test(intensity, the_chase_is_one_cycle_through_its_whole_buffer) {
    uint32_t i = 0;
    unsigned long long n = 0;
    do {
        cr_assert_eq(intensity_chase_word(i) >> 6, intensity_chase_next(i));
        i = intensity_chase_next(i);
        n++;
    } while (i != 0 && n <= INTENSITY_CHASE_WORDS);
    cr_expect_eq(n, (unsigned long long)INTENSITY_CHASE_WORDS);
    cr_expect_eq(intensity_chase_word(12345) & 63u, INTENSITY_CHASE_PAYLOAD);
    cr_expect_geq((unsigned long long)INTENSITY_CHASE_WORDS * 4u, 4ull * 60000000ull, "four times a 60 MB L2");
    cr_expect_lt(intensity_chase_start(1ull << 40), INTENSITY_CHASE_WORDS);
}

Test(intensity, the_names_select_the_nightly_tables_and_the_full_sweep) {
    const struct scenario *list[SCENARIO_MAX_SELECTED];
    size_t n = 0;
    char err[ERR_LEN] = "";
    cr_assert_eq(scenario_select("arithmetic-intensity", list, &n, err), 0, "%s", err);
    cr_expect_eq(n, 2);
    cr_expect_str_eq(list[0]->name, "intensity-stream");
    cr_expect_str_eq(list[1]->name, "intensity-chase");
    cr_assert_eq(scenario_select("arithmetic-intensity-full", list, &n, err), 0, "%s", err);
    cr_expect_eq(n, 4);
    cr_assert_eq(scenario_select("X5", list, &n, err), 0, "%s", err);
    cr_expect_eq(n, 4);
    cr_expect_eq(scenario_select("arithmetic-intensity-half", list, &n, err), -1);
    cr_expect(strstr(err, "arithmetic-intensity") != NULL, "%s", err);
    cr_expect_eq(scenario_rows("arithmetic-intensity"), 28u);
}

/* Each variant's points span more than three decades of FLOP per byte,
 * from far left of any GPU's ridge to far right of it, nightly; the full
 * sweep adds the points between. */
Test(intensity, the_points_span_three_decades_nightly) {
    static const char *const tables[] = {"intensity-stream", "intensity-chase"};
    for (unsigned k = 0; k < 2; k++) {
        const struct scenario *s = get(tables[k]), *fine = NULL;
        double lo = INFINITY, hi = 0;
        for (unsigned r = 0; r < s->nrows; r++) {
            const struct scenario_row_def *d = &s->rows[r];
            if (d->variant >= INTENSITY_RIDGE_BANDWIDTH) continue;
            cr_expect_eq(d->variant, k == 0 ? INTENSITY_STREAM : INTENSITY_CHASE);
            const double i = intensity_nominal(d->la, d->lb);
            lo = i < lo ? i : lo;
            hi = i > hi ? i : hi;
        }
        cr_expect_geq(log10(hi / lo), 3.0, "%s: %g .. %g", s->name, lo, hi);
        cr_expect_leq(lo, 0.05);
        cr_expect_geq(hi, 100.0);
        fine = get(k == 0 ? "intensity-stream-fine" : "intensity-chase-fine");
        cr_expect_eq(fine->set, SCENARIO_SET_INTENSITY_FULL);
        cr_expect_eq(s->set, SCENARIO_SET_INTENSITY);
    }
}

/* The planned tables: the ridge rows on their own, every point's
 * lane-split row against its warp-aligned row, with the same work per
 * thread, the split one issuing both paths. */
Test(intensity, each_point_is_lane_split_against_warp_aligned_with_equal_work) {
    struct dv_report *r = plan_of("arithmetic-intensity", 64);
    cr_assert_eq(r->ntables, 2);
    const unsigned long long threads = 64ull * 256;
    for (unsigned i = 0; i < r->ntables; i++) {
        const struct dv_table *t = &r->tables[i];
        cr_expect_str_eq(t->experiment, "intensity");
        cr_expect_str_eq(t->kernel, "memory");
        cr_assert_eq(t->nrows, 14);
        unsigned points = 0;
        for (unsigned k = 0; k < t->nrows; k++) {
            const struct dv_row *w = &t->rows[k];
            const struct dv_intensity *m = &w->intensity;
            cr_assert(m->present, "%s/%s", t->id, w->name);
            cr_expect_eq(m->flops, 2.0 * (double)w->thread_fmas);
            if (!m->fmas) { /* a ridge row: its own reference */
                cr_expect_eq(dv_row_reference(t, k), k, "%s", w->name);
                cr_expect_eq(w->warps_split.per_block, 0.0);
                continue;
            }
            const unsigned ref = dv_row_reference(t, k);
            const struct dv_row *a = &t->rows[ref];
            cr_expect_eq(m->bytes, (double)threads * 256.0);
            cr_expect(fabs(m->intensity - intensity_nominal(m->fmas, m->loads)) < 1e-12);
            if (ref == k) continue; /* the warp-aligned row */
            points++;
            cr_expect_str_eq(w->point.arrangement, "lanes");
            cr_expect_str_eq(a->point.arrangement, "warps");
            cr_expect_eq(a->intensity.fmas, m->fmas);
            cr_expect_eq(a->intensity.loads, m->loads);
            cr_expect_eq(w->thread_fmas, a->thread_fmas, "%s: equal work", w->name);
            cr_expect_eq(w->thread_fmas,
                         threads * intensity_thread_fmas(i ? INTENSITY_CHASE : INTENSITY_STREAM, m->fmas, m->loads));
            cr_expect(w->comparable, "%s: %s", w->name, w->comparable_reason);
            cr_expect(fabs(w->predicted_ratio - 2.0) < 1e-12, "%s: %g", w->name, w->predicted_ratio);
            cr_expect_eq(w->warps_split.per_block, 8.0);
            cr_expect_eq(a->warps_split.per_block, 0.0);
        }
        cr_expect_eq(points, 6);
    }
    experiment_report_free(r);
}

/* The witness's model: a split warp runs path A with its 16 even lanes and
 * path B with its 16 odd ones; a ridge row runs one path with all 32. */
Test(intensity, the_witness_model_sees_both_paths_in_a_split_warp) {
    const struct scenario *s = get("intensity-stream");
    struct scenario rs;
    uint8_t work[256];
    struct dv_witness_block exp;
    char err[ERR_LEN] = "";
    scenario_row(s, 2, &rs); /* f1-l16-lanes */
    cr_assert_eq(scenario_assign(&rs, s->rows[2].layout, 1, 256, work, err), 0, "%s", err);
    testimony_expect_scenario(&rs, work, 1, 256, 32, &exp);
    cr_expect_eq(exp.runs[0], 8);
    cr_expect_eq(exp.runs[1], 8);
    cr_expect_eq(exp.hist[0][16], 8);
    cr_expect_eq(exp.hist[1][16], 8);
    scenario_row(s, 0, &rs); /* ridge-bandwidth */
    cr_assert_eq(scenario_assign(&rs, s->rows[0].layout, 1, 256, work, err), 0, "%s", err);
    testimony_expect_scenario(&rs, work, 1, 256, 32, &exp);
    cr_expect_eq(exp.runs[0], 8);
    cr_expect_eq(exp.runs[1], 0);
    cr_expect_eq(exp.hist[0][32], 8);
}

/* A measured table's roofline: the ridge from its two ridge rows, each
 * point's FLOP rate and bandwidth from its median, and its side of the
 * ridge by the FLOPs per DRAM byte where the counters gave them. */
Test(intensity, the_roofline_is_read_against_the_ridge_measured_in_the_table) {
    struct dv_report *r = plan_of("intensity-stream", 4096);
    struct dv_table *t = &r->tables[0];
    for (unsigned k = 0; k < t->nrows; k++) {
        t->rows[k].measured = 1;
        t->rows[k].time_ms.median = 1.0;
    }
    /* ridge-bandwidth: 256 B x 1 Mi threads in 0.0625 ms = 4.29 TB/s read;
     * ridge-fma: 2 x 16384 FMAs x 1 Mi threads in 0.5 ms = 68.7 TFLOP/s. */
    t->rows[0].time_ms.median = 0.0625;
    t->rows[0].counters.dram_present = 1;
    t->rows[0].counters.dram_bytes_read = 268435456.0;
    t->rows[1].time_ms.median = 0.5;
    intensity_derive(t);
    cr_assert(t->ridge.present);
    cr_expect(t->ridge.bandwidth_from_dram);
    cr_expect(fabs(t->ridge.bandwidth_gbs - 268435456.0 / 0.0625e-3 / 1e9) < 1e-6);
    cr_expect(fabs(t->ridge.flop_rate - 2.0 * 16384 * 1048576 / 0.5e-3) < 1.0);
    cr_expect(fabs(t->ridge.ridge - t->ridge.flop_rate / (t->ridge.bandwidth_gbs * 1e9)) < 1e-9);
    cr_expect(t->ridge.ridge > 15.9 && t->ridge.ridge < 16.1, "%g", t->ridge.ridge);
    /* f1-l16 (1/32 FLOP per byte) left of the ridge, f256-l1 (128) right. */
    const struct dv_row *left = &t->rows[2], *right = &t->rows[12];
    cr_expect_str_eq(left->name, "f1-l16-lanes");
    cr_expect_str_eq(right->name, "f256-l1-lanes");
    cr_expect_str_eq(left->intensity.bound, "memory");
    cr_expect_str_eq(right->intensity.bound, "compute");
    cr_expect(fabs(left->intensity.flop_rate - left->intensity.flops / 1e-3) < 1e-3);
    cr_expect(fabs(left->intensity.bandwidth_gbs - 268435456.0 / 1e-3 / 1e9) < 1e-9);
    cr_expect(isnan(left->intensity.dram_gbs), "no DRAM bytes: no DRAM bandwidth");
    cr_expect(fabs(left->intensity.roofline - 0.03125 * t->ridge.bandwidth_gbs * 1e9) < 1.0);
    cr_expect(fabs(right->intensity.roofline - t->ridge.flop_rate) < 1.0);
    /* With DRAM bytes eight times the bytes loaded (a chase's sectors), a
     * point at 8 FLOP per byte loaded sits at 1 per DRAM byte: left. */
    struct dv_row *mid = &t->rows[8];
    cr_expect_str_eq(mid->name, "f16-l1-lanes");
    mid->counters.dram_present = 1;
    mid->counters.dram_bytes_read = 8.0 * mid->intensity.bytes;
    intensity_derive(t);
    cr_expect(fabs(mid->intensity.dram_intensity - 1.0) < 1e-12);
    cr_expect_str_eq(mid->intensity.bound, "memory");
    /* Without a ridge row's time there is no ridge, and no verdict. */
    t->rows[1].measured = 0;
    intensity_derive(t);
    cr_expect_not(t->ridge.present);
    cr_expect_str_eq(left->intensity.bound, "");
    experiment_report_free(r);
}

/* The sectors (32 bytes: 8 words) path `b` of a warp touches in one line. */
static unsigned path_sectors(uint32_t on_b, uint32_t live, unsigned b) {
    uint32_t touched = 0;
    for (unsigned lane = 0; lane < 32; lane++)
        if ((live >> lane & 1u) && (on_b >> lane & 1u) == b)
            touched |= 1u << (intensity_lane_word(lane, on_b, live) / 8u);
    return (unsigned)__builtin_popcount(touched);
}

/* A streaming path reads whole sectors: with the lesson's lane-parity split
 * each path's 16 lanes read two sectors (not all four, half used), the two
 * paths together the four a warp-aligned warp reads, which reads word t in
 * lane t; every layout is a permutation of the warp's live lanes. */
Test(intensity, each_paths_lanes_read_whole_sectors_of_the_line) {
    cr_expect_eq(path_sectors(0xAAAAAAAAu, 0xFFFFFFFFu, 0), 2, "path A of the lane-parity split");
    cr_expect_eq(path_sectors(0xAAAAAAAAu, 0xFFFFFFFFu, 1), 2, "path B of the lane-parity split");
    cr_expect_eq(path_sectors(0x55555555u, 0xFFFFFFFFu, 1), 2);
    cr_expect_eq(path_sectors(0u, 0xFFFFFFFFu, 0), 4, "a warp-aligned warp on A");
    cr_expect_eq(path_sectors(0xFFFFFFFFu, 0xFFFFFFFFu, 1), 4, "a warp-aligned warp on B");
    for (unsigned lane = 0; lane < 32; lane++) {
        cr_expect_eq(intensity_lane_word(lane, 0u, 0xFFFFFFFFu), lane);
        cr_expect_eq(intensity_lane_word(lane, 0xFFFFFFFFu, 0xFFFFFFFFu), lane);
    }
    const uint32_t masks[][2] = {{0xAAAAAAAAu, 0xFFFFFFFFu}, {0x0F0F00F1u, 0xFFFFFFFFu}, {0x2Au, 0x3Fu}, {0u, 0x7u}};
    for (unsigned m = 0; m < sizeof masks / sizeof masks[0]; m++) {
        uint32_t seen = 0;
        const unsigned lanes = (unsigned)__builtin_popcount(masks[m][1]);
        for (unsigned lane = 0; lane < lanes; lane++) {
            const unsigned w = intensity_lane_word(lane, masks[m][0], masks[m][1]);
            cr_expect_lt(w, lanes, "mask %u lane %u", m, lane);
            seen |= 1u << (w & 31u);
        }
        cr_expect_eq(seen, masks[m][1], "mask %u: a permutation of the live lanes", m);
    }
}
