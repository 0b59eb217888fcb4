/* test_listing.c -- the instruction profile's rules on what an H200 gave.
 *
 * The fixtures (tests/fixtures/instructions/) are one run of CUPTI's SASS
 * metrics and PC sampling on the lesson-shaped kernels of
 * probe-kernels.cu (132 blocks x 256 threads, 4096 FMAs per thread, each
 * chain's loop on two lines: `for` and the fmaf), the same launches on
 * Nsight Compute's Source page, and nvdisasm's and cuobjdump's listings of
 * the same cubin: the region rules, the readers and the comparison are
 * checked against real listings, not invented ones.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/model/listing/listing.h"
#include "kernels/model/listing/listing_read.h"
#include "kernels/model/listing/listing_shape.h"
#include "tests/support/readfile.h"

#define FIX DV_TEST_SOURCE_DIR "/tests/fixtures/instructions/"
#define BRANCH "_Z11probeBranchILi4096EEvPKfPfmi"
#define PERITER "_Z12probePerIterILi4096EEvPKfPfmi"
#define NOBRANCH "_Z13probeNoBranchILi4096EEvPKfPfmi"

/* Threads of the probe's grid on each path of a lane-parity row, times its
 * iterations: every FFMA of a chain summed over the grid. */
#define PROBE_PATH_FMAS (132ull * 128 * 4096)

static char *fixture(const char *name, size_t *len) {
    char path[512];
    snprintf(path, sizeof path, FIX "%s", name);
    char *s = readfile(path, len);
    cr_assert_not_null(s, "cannot read %s", path);
    return s;
}

/* The probe's TSV (function, crc, pc, file, line, tag, sass, then the four
 * SASS metrics) as counted instructions, without their text: the text
 * comes from the disassembly, as in the collector. */
static void load_counts(const char *name, struct listing_insns *f) {
    size_t len;
    char *s = fixture(name, &len), *save = NULL;
    listing_insns_init(f);
    int first = 1;
    for (char *line = strtok_r(s, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (first) {
            first = 0;
            continue;
        }
        char *col[12] = {0};
        int n = 0;
        for (char *p = line; n < 12;) {
            col[n++] = p;
            char *tab = strchr(p, '\t');
            if (!tab) break;
            *tab = '\0';
            p = tab + 1;
        }
        cr_assert(n >= 10, "a short row in %s", name);
        snprintf(f->function, sizeof f->function, "%s", col[0]);
        struct listing_insn *i = listing_insns_at(f, (uint32_t)strtoul(col[2], NULL, 16));
        cr_assert_not_null(i);
        snprintf(i->file, sizeof i->file, "%s", col[3]);
        i->line = (unsigned)strtoul(col[4], NULL, 10);
        i->warp = strtoull(col[7], NULL, 10);
        i->thread = strtoull(col[8], NULL, 10);
        i->pred_on = strtoull(col[9], NULL, 10);
        i->divergent = n > 10 && col[10] ? strtoull(col[10], NULL, 10) : 0;
    }
    free(s);
}

static void join_disassembly(struct listing_insns *f, const char *function) {
    size_t len;
    char err[ERR_LEN];
    char *text = fixture("probe.nvdisasm.txt", &len);
    struct listing_insns t;
    cr_assert_eq(listing_read_sass(text, len, function, &t, err), 0, "%s", err);
    cr_expect_eq(listing_join_text(f, &t), f->n, "every counted instruction has its text");
    listing_insns_cleanup(&t);
    free(text);
}

/* The chains' lines in probe-kernels.cu.txt (the statements `for` and fmaf of
 * each side; the file's own //@ tags name them). */
static struct listing_paths probe_branch_paths(void) {
    struct listing_paths p = {.file = "probe/kernels.cu", .a = {39, 40}, .na = 2, .b = {42, 43}, .nb = 2};
    return p;
}
static struct listing_paths probe_periter_paths(void) {
    struct listing_paths p = {.file = "probe/kernels.cu", .a = {54}, .na = 1, .b = {56}, .nb = 1};
    return p;
}

Test(listing, the_stated_chain_lines_are_the_fixtures_fmaf_lines) {
    size_t len;
    char *src = fixture("probe-kernels.cu.txt", &len), *next;
    unsigned n = 0;
    const struct listing_paths b = probe_branch_paths(), pi = probe_periter_paths();
    for (char *line = src; line; line = next) {
        next = strchr(line, '\n');
        if (next) *next++ = '\0';
        n++;
        if (n == b.a[1] || n == pi.a[0]) cr_expect(strstr(line, "fmaf(x, MUL_A, ADD_A)"), "line %u: %s", n, line);
        if (n == b.b[1] || n == pi.b[0]) cr_expect(strstr(line, "fmaf(x, MUL_B, ADD_B)"), "line %u: %s", n, line);
        if (n == b.a[0] || n == b.b[0]) cr_expect(strstr(line, "for (int k"), "line %u: %s", n, line);
    }
    free(src);
}

Test(listing, reads_nvdisasm_with_labels_as_branch_targets) {
    size_t len;
    char err[ERR_LEN];
    char *text = fixture("probe.nvdisasm.txt", &len);
    struct listing_insns t;
    cr_assert_eq(listing_read_sass(text, len, BRANCH, &t, err), 0, "%s", err);
    cr_expect_eq(t.n, 600, "the function's 600 instructions, padding included (got %zu)", t.n);
    const struct listing_insn *i = listing_insns_find(&t, 0x0);
    cr_assert_not_null(i);
    cr_expect_str_eq(i->sass, "LDC R1, c[0x0][0x28]");
    i = listing_insns_find(&t, 0x310);
    cr_assert_not_null(i);
    cr_expect_str_eq(i->sass, "@P0 BRA `(.L_x_52)");
    cr_expect_str_eq(i->opcode, "BRA");
    cr_expect(i->guarded);
    cr_expect(i->has_target);
    cr_expect_eq(i->target, 0x1380, "target 0x%x", i->target);
    i = listing_insns_find(&t, 0x1370);
    cr_assert_not_null(i);
    cr_expect(!i->guarded);
    cr_expect_eq(i->target, 0x23d0, "the end of one side jumps to the reconvergence (0x%x)", i->target);
    cr_expect_null(listing_insns_find(&t, 0x2500 + 0x10000), "nothing of another function");
    listing_insns_cleanup(&t);
    /* Another function of the same text. */
    cr_assert_eq(listing_read_sass(text, len, NOBRANCH, &t, err), 0, "%s", err);
    i = listing_insns_find(&t, 0xc0);
    cr_assert_not_null(i);
    cr_expect_str_eq(i->sass, "@P0 BRA `(.L_x_1)");
    cr_expect_eq(i->target, 0x110);
    listing_insns_cleanup(&t);
    free(text);
}

Test(listing, reads_cuobjdump_with_offsets_as_branch_targets) {
    size_t len;
    char err[ERR_LEN];
    char *text = fixture("probe-nobranch.cuobjdump.txt", &len);
    struct listing_insns t;
    cr_assert_eq(listing_read_sass(text, len, NOBRANCH, &t, err), 0, "%s", err);
    const struct listing_insn *i = listing_insns_find(&t, 0xc0);
    cr_assert_not_null(i);
    cr_expect_str_eq(i->sass, "@P0 BRA 0x110", "the encoding comment is not text: '%s'", i->sass);
    cr_expect(i->has_target);
    cr_expect_eq(i->target, 0x110);
    i = listing_insns_find(&t, 0x50);
    cr_assert_not_null(i);
    cr_expect_str_eq(i->opcode, "BSSY");
    cr_expect(!i->has_target, "only a BRA's target is read");
    listing_insns_cleanup(&t);
    free(text);
}

Test(listing, a_function_not_in_the_disassembly_is_an_error) {
    size_t len;
    char err[ERR_LEN] = "";
    char *text = fixture("probe.nvdisasm.txt", &len);
    struct listing_insns t;
    cr_expect_eq(listing_read_sass(text, len, "_Z6absentv", &t, err), -1);
    cr_expect(strstr(err, "_Z6absentv"), "%s", err);
    cr_expect_eq(t.n, 0);
    cr_expect_eq(listing_read_sass("", 0, BRANCH, &t, err), -1);
    free(text);
}

/* The first instruction of each region, in program order. */
static void expect_regions(const struct listing *l, const enum listing_kind *kinds, unsigned n) {
    cr_assert_eq(l->nregions, n, "%u regions, want %u", l->nregions, n);
    for (unsigned k = 0; k < n; k++)
        cr_expect_eq(l->regions[k].kind, kinds[k], "region %u is %s, want %s", k, listing_kind_name(l->regions[k].kind),
                     listing_kind_name(kinds[k]));
}

static enum listing_kind kind_at(const struct listing_insns *f, uint32_t pc) {
    const struct listing_insn *i = listing_insns_find(f, pc);
    cr_assert_not_null(i, "no instruction at 0x%x", pc);
    return i->kind;
}

Test(listing, control_flow_decides_the_sides_of_the_branch) {
    struct listing_insns f;
    char err[ERR_LEN];
    load_counts("probe-branch-lane-parity.tsv", &f);
    join_disassembly(&f, BRANCH);
    const struct listing_paths p = probe_branch_paths();
    cr_expect_eq(listing_classify(&f, &p), 1, "the branch's two sides found");
    cr_expect_eq(kind_at(&f, 0x310), LISTING_BEFORE, "the divergent branch closes 'before'");
    cr_expect_eq(kind_at(&f, 0x320), LISTING_PATH_B, "the fall-through is path B on this build");
    cr_expect_eq(kind_at(&f, 0x1370), LISTING_PATH_B, "path B's jump to the reconvergence");
    /* 0x1380 carries path B's loop line but starts path A: the branch's
     * target. The line table alone gets it wrong. */
    const struct listing_insn *entry = listing_insns_find(&f, 0x1380);
    cr_expect_eq(entry->line, 42);
    cr_expect_eq(entry->kind, LISTING_PATH_A);
    cr_expect_eq(kind_at(&f, 0x23c0), LISTING_PATH_A);
    cr_expect_eq(kind_at(&f, 0x23d0), LISTING_RECONVERGE);
    cr_expect_eq(kind_at(&f, 0x23e0), LISTING_AFTER);
    cr_expect_eq(kind_at(&f, 0x140), LISTING_BEFORE, "the BSSY before the split");

    struct listing *l = listing_create();
    cr_assert_not_null(l);
    cr_assert_eq(listing_build(&f, l, err), 0, "%s", err);
    const enum listing_kind want[] = {LISTING_BEFORE, LISTING_PATH_B, LISTING_PATH_A, LISTING_RECONVERGE,
                                      LISTING_AFTER};
    expect_regions(l, want, 5);
    unsigned long long ta, pa, na, tb, pb, nb;
    listing_sum(l, LISTING_PATH_A, "FFMA", &ta, &pa, &na);
    listing_sum(l, LISTING_PATH_B, "FFMA", &tb, &pb, &nb);
    cr_expect_eq(pa, PROBE_PATH_FMAS, "path A's FFMAs: threads on A x iterations (%llu)", pa);
    cr_expect_eq(pb, PROBE_PATH_FMAS, "path B's FFMAs (%llu)", pb);
    cr_expect_eq(ta, pa, "no FFMA of a branch path is guarded");
    cr_expect_eq(na, 256);
    cr_expect_eq(nb, 256, "64 + 192 in the loop");
    for (unsigned r = 0; r < l->nruns; r++) {
        const struct listing_run *run = &l->runs[r];
        if (strcmp(run->opcode, "FFMA") == 0 && (run->region == LISTING_PATH_A || run->region == LISTING_PATH_B))
            cr_expect(fabs(run->lanes - 16.0) < 1e-12, "lane parity: 16 lanes per FFMA (pc 0x%x: %.3f)", run->pc,
                      run->lanes);
        if (strcmp(run->opcode, "BSYNC") == 0 && run->region == LISTING_RECONVERGE) {
            cr_expect_eq(run->warp, 2112, "each half of 1056 split warps reconverges on its own");
            cr_expect(fabs(run->lanes - 16.0) < 1e-12);
        }
        if (run->pc == 0x310) {
            cr_expect_eq(run->pred_on, 16896, "the branch runs with 32 lanes, 16 of them predicated on");
            cr_expect_eq(run->divergent, 1056);
            cr_expect(run->guarded);
        }
    }
    cr_expect(fabs(l->mapped - 1.0) < 1e-12, "every record maps to a line on this build");
    listing_free(l);
    listing_insns_cleanup(&f);
}

Test(listing, without_a_disassembly_the_lines_decide) {
    struct listing_insns f;
    char err[ERR_LEN];
    load_counts("probe-branch-lane-parity.tsv", &f);
    const struct listing_paths p = probe_branch_paths();
    cr_expect_eq(listing_classify(&f, &p), 0);
    cr_expect_eq(kind_at(&f, 0x1380), LISTING_PATH_B, "the line table's answer, with nothing to correct it");
    cr_expect_eq(kind_at(&f, 0x23d0), LISTING_PATH_B, "the BSYNC is on path B's loop line; no opcode tells it apart");
    cr_expect_eq(kind_at(&f, 0x23e0), LISTING_AFTER);
    struct listing *l = listing_create();
    cr_assert_eq(listing_build(&f, l, err), 0, "%s", err);
    const enum listing_kind want[] = {LISTING_BEFORE, LISTING_PATH_B, LISTING_PATH_A, LISTING_AFTER};
    expect_regions(l, want, 4);
    for (unsigned r = 0; r < l->nruns; r++) cr_expect_str_eq(l->runs[r].opcode, "");
    listing_free(l);
    listing_insns_cleanup(&f);
}

/* Path FFMAs: every run's lanes, and the sums. */
static void expect_path_ffmas(const struct listing *l, enum listing_kind kind, double lanes, unsigned long long pred_on) {
    unsigned long long t, p;
    listing_sum(l, kind, "FFMA", &t, &p, NULL);
    cr_expect_eq(p, pred_on, "%s: %llu predicated-on FFMA thread executions, want %llu", listing_kind_name(kind), p,
                 pred_on);
    for (unsigned r = 0; r < l->nruns; r++)
        if (l->runs[r].region == kind && strcmp(l->runs[r].opcode, "FFMA") == 0 && l->runs[r].warp)
            cr_expect(fabs(l->runs[r].lanes - lanes) < 1e-9, "%s pc 0x%x: %.4f lanes, want %.4f", listing_kind_name(kind),
                      l->runs[r].pc, l->runs[r].lanes, lanes);
}

Test(listing, first_16_and_warp_parity_lanes_follow_the_split) {
    struct listing_insns f;
    char err[ERR_LEN];
    const struct listing_paths p = probe_branch_paths();
    load_counts("probe-branch-first-16.tsv", &f);
    join_disassembly(&f, BRANCH);
    listing_classify(&f, &p);
    struct listing *l = listing_create();
    cr_assert_eq(listing_build(&f, l, err), 0, "%s", err);
    /* 16 threads of warp 0 on A; B: warp 0's other 16 and seven whole warps. */
    expect_path_ffmas(l, LISTING_PATH_A, 16.0, 132ull * 16 * 4096);
    expect_path_ffmas(l, LISTING_PATH_B, 240.0 / 8.0, 132ull * 240 * 4096);
    listing_free(l);
    listing_insns_cleanup(&f);

    load_counts("probe-branch-warp-parity.tsv", &f);
    join_disassembly(&f, BRANCH);
    listing_classify(&f, &p);
    l = listing_create();
    cr_assert_eq(listing_build(&f, l, err), 0, "%s", err);
    expect_path_ffmas(l, LISTING_PATH_A, 32.0, PROBE_PATH_FMAS);
    expect_path_ffmas(l, LISTING_PATH_B, 32.0, PROBE_PATH_FMAS);
    listing_free(l);
    listing_insns_cleanup(&f);
}

Test(listing, a_predicated_branch_shows_guarded_ffmas_at_32_lanes) {
    struct listing_insns f;
    char err[ERR_LEN];
    load_counts("probe-periter-lane-parity.tsv", &f);
    join_disassembly(&f, PERITER);
    const struct listing_paths p = probe_periter_paths();
    cr_expect_eq(listing_classify(&f, &p), 0, "interleaved chains: no two sides");
    struct listing *l = listing_create();
    cr_assert_eq(listing_build(&f, l, err), 0, "%s", err);
    unsigned long long ta, pa, tb, pb;
    listing_sum(l, LISTING_PATH_A, "FFMA", &ta, &pa, NULL);
    listing_sum(l, LISTING_PATH_B, "FFMA", &tb, &pb, NULL);
    cr_expect_eq(pa, PROBE_PATH_FMAS, "%llu", pa);
    cr_expect_eq(pb, PROBE_PATH_FMAS, "%llu", pb);
    cr_expect_eq(ta, 2 * pa, "every lane issues each guarded FFMA, half of them predicated on");
    unsigned guarded = 0;
    for (unsigned r = 0; r < l->nruns; r++) {
        const struct listing_run *run = &l->runs[r];
        if (strcmp(run->opcode, "FFMA") != 0 || !run->warp) continue;
        cr_expect(run->guarded, "pc 0x%x", run->pc);
        cr_expect(fabs(run->lanes - 32.0) < 1e-12, "pc 0x%x: %.3f", run->pc, run->lanes);
        cr_expect_eq(2 * run->pred_on, run->thread, "pc 0x%x", run->pc);
        guarded += run->count;
    }
    cr_expect(guarded >= 2, "the executed version has guarded FFMAs on both chains");
    listing_free(l);
    listing_insns_cleanup(&f);
}

Test(listing, runs_stand_for_every_instruction) {
    struct listing_insns f;
    char err[ERR_LEN];
    load_counts("probe-branch-lane-parity.tsv", &f);
    join_disassembly(&f, BRANCH);
    const struct listing_paths p = probe_branch_paths();
    listing_classify(&f, &p);
    struct listing *l = listing_create();
    cr_assert_eq(listing_build(&f, l, err), 0, "%s", err);
    size_t covered = 0;
    for (unsigned r = 0; r < l->nruns; r++) {
        const struct listing_run *run = &l->runs[r];
        for (unsigned k = 0; k < run->count; k++) {
            const struct listing_insn *i = listing_insns_find(&f, run->pc + 16 * k);
            cr_assert_not_null(i, "run at 0x%x, instruction %u", run->pc, k);
            cr_expect(i->warp == run->warp && i->thread == run->thread && i->pred_on == run->pred_on &&
                          i->divergent == run->divergent && i->line == run->line && i->kind == run->region,
                      "0x%x differs from its run", i->pc);
            cr_expect_str_eq(i->opcode, run->opcode);
            covered++;
        }
        if (r > 0) {
            const struct listing_run *prev = &l->runs[r - 1];
            int same = prev->pc + 16 * prev->count == run->pc && strcmp(prev->opcode, run->opcode) == 0 &&
                       prev->guarded == run->guarded && prev->region == run->region && prev->line == run->line &&
                       prev->warp == run->warp && prev->thread == run->thread && prev->pred_on == run->pred_on &&
                       prev->divergent == run->divergent;
            cr_expect(!same, "runs %u and %u could be one", r - 1, r);
        }
    }
    cr_expect_eq(covered, f.n);
    cr_expect(l->nruns < f.n / 4, "%u runs for %zu instructions", l->nruns, f.n);
    /* Path B's unrolled loop body (192 FFMAs, two of them set apart by the
     * loop's counter and compare) and path A's (256, one set apart). */
    unsigned longest[LISTING_KINDS] = {0};
    for (unsigned r = 0; r < l->nruns; r++)
        if (strcmp(l->runs[r].opcode, "FFMA") == 0 && l->runs[r].count > longest[l->runs[r].region])
            longest[l->runs[r].region] = l->runs[r].count;
    cr_expect_eq(longest[LISTING_PATH_B], 190);
    cr_expect_eq(longest[LISTING_PATH_A], 255);
    listing_free(l);
    listing_insns_cleanup(&f);
}

/* What listing_build() gives (an H200's listing) is whole; each way a
 * profile read from elsewhere can fail to add up is refused by its field. */
Test(listing, check_takes_what_build_gives_and_refuses_what_does_not_add_up) {
    struct listing_insns f;
    char err[ERR_LEN], field[64], why[ERR_LEN];
    load_counts("probe-branch-lane-parity.tsv", &f);
    join_disassembly(&f, BRANCH);
    const struct listing_paths p = probe_branch_paths();
    listing_classify(&f, &p);
    struct listing *l = listing_create();
    cr_assert_not_null(l);
    cr_assert_eq(listing_build(&f, l, err), 0, "%s", err);
    l->scale = 1;
    cr_assert_eq(listing_check(l, field, sizeof field, why), 0, "%s: %s", field, why);
    cr_assert_gt(l->nruns, 2);
    cr_assert_gt(l->nregions, 1);
    const enum listing_kind before = l->regions[0].kind;
    static const char *const want[][2] = {
        {"regions", "none"},
        {"runs", "none"},
        {"regions[0].instructions", "but its runs add up to"},
        {"regions[0].warp_executions", "but its runs add up to"},
        {"regions[1].kind", "listed twice"},
        {"runs[1].thread_executions", "more than 32 lanes"},
        {"runs[1].pred_on_thread_executions", "more than its thread executions"},
        {"runs[1].count", "0"},
        {"runs[1].pc", "not after the run before it"},
        {"runs[1].lanes", "not within 0 to 32"},
        {"regions[0].lanes_per_execution", "not within 0 to 32"},
        {"mapped", "not within 0 to 1"},
        {"scale", "not above 0"},
        {"collect_ms", "negative"},
        {"runs[0]", "overflow"},
    };
    for (unsigned k = 0; k < sizeof want / sizeof want[0]; k++) {
        struct listing *m = listing_copy(l);
        cr_assert_not_null(m);
        switch (k) {
        case 0: m->nregions = 0; break;
        case 1: m->nruns = 0; break;
        case 2: m->regions[0].instructions++; break;
        case 3: m->regions[0].warp--; break;
        case 4: m->regions[1].kind = before; break;
        case 5: m->runs[1].thread = 32 * m->runs[1].warp + 1; break;
        case 6: m->runs[1].pred_on = m->runs[1].thread + 1; break;
        case 7: m->runs[1].count = 0; break;
        case 8: m->runs[1].pc = m->runs[0].pc; break;
        case 9: m->runs[1].lanes = 33; break;
        case 10: m->regions[0].lanes = -1; break;
        case 11: m->mapped = 1.5; break;
        case 12: m->scale = -2; break;
        case 13: m->collect_ms = -1; break;
        case 14: m->runs[0].count = 1u << 31, m->runs[0].warp = m->runs[0].thread = 1ull << 40; break;
        }
        field[0] = why[0] = '\0';
        cr_expect_eq(listing_check(m, field, sizeof field, why), -1, "case %u (%s) taken", k, want[k][0]);
        cr_expect_str_eq(field, want[k][0], "case %u: %s", k, why);
        cr_expect(strstr(why, want[k][1]) != NULL, "case %u: %s: '%s', want '%s'", k, field, why, want[k][1]);
        listing_free(m);
    }
    listing_free(l);
    listing_insns_cleanup(&f);
}

Test(listing, reads_the_source_page_csv) {
    size_t len;
    char err[ERR_LEN];
    char *csv = fixture("probe-branch-lane-parity.ncu.csv", &len);
    cr_expect_eq(listing_ncu_launches(csv, len), 1);
    struct listing_insns n;
    cr_assert_eq(listing_read_ncu(csv, len, 0, &n, err), 0, "%s", err);
    cr_expect_eq(n.n, 600);
    cr_expect(strstr(n.function, "probeBranch"), "%s", n.function);
    const struct listing_insn *i = listing_insns_find(&n, 0x310);
    cr_assert_not_null(i);
    cr_expect_str_eq(i->sass, "@P0 BRA 0x7f60a97a1380");
    cr_expect(i->has_target);
    cr_expect_eq(i->target, 0x1380, "an absolute target becomes an offset (0x%x)", i->target);
    cr_expect_eq(i->warp, 1056);
    cr_expect_eq(i->thread, 33792);
    cr_expect_eq(i->pred_on, 16896);
    cr_expect_eq(i->divergent, 1056);
    cr_expect(n.sampled);
    int wait = -1;
    for (unsigned k = 0; k < n.nreasons; k++)
        if (strcmp(n.reasons[k], "stall_wait") == 0) wait = (int)k;
    cr_expect(wait >= 0, "the stall_<reason> columns are the reasons");
    for (unsigned k = 0; k < n.nreasons; k++) cr_expect(!strstr(n.reasons[k], "Not Issued"), "%s", n.reasons[k]);
    cr_expect_eq(listing_read_ncu(csv, len, 1, &n, err), -1, "one launch only");
    cr_expect(strstr(err, "launch 1"), "%s", err);
    free(csv);
}

Test(listing, the_source_page_and_cupti_agree_cell_by_cell) {
    size_t len;
    char err[ERR_LEN];
    char *csv = fixture("probe-branch-lane-parity.ncu.csv", &len);
    struct listing_insns n, c;
    cr_assert_eq(listing_read_ncu(csv, len, 0, &n, err), 0, "%s", err);
    load_counts("probe-branch-lane-parity.tsv", &c);
    struct listing_diff d;
    listing_compare(&c, &n, &d);
    cr_expect_eq(d.mismatches, 0, "%llu of %llu cells differ; first: %s", d.mismatches, d.cells, d.first);
    cr_expect_eq(d.instructions, 600, "ncu lists the padding CUPTI does not patch (%u)", d.instructions);
    /* One count off is one cell. */
    struct listing_insn *i = listing_insns_at(&c, 0x1380);
    i->thread += 1;
    listing_compare(&c, &n, &d);
    cr_expect_eq(d.mismatches, 1);
    cr_expect(strstr(d.first, "pc 0x1380") && strstr(d.first, "thread executions"), "%s", d.first);
    /* An executed instruction one side lacks counts as mismatches. */
    i->thread -= 1;
    struct listing_insn *x = listing_insns_at(&c, 0x9990);
    x->warp = 3;
    listing_compare(&c, &n, &d);
    cr_expect_eq(d.mismatches, 1, "%s", d.first);
    listing_insns_cleanup(&n);
    listing_insns_cleanup(&c);
    free(csv);

    csv = fixture("probe-periter-lane-parity.ncu.csv", &len);
    cr_assert_eq(listing_read_ncu(csv, len, 0, &n, err), 0, "%s", err);
    load_counts("probe-periter-lane-parity.tsv", &c);
    listing_compare(&c, &n, &d);
    cr_expect_eq(d.mismatches, 0, "%llu of %llu cells differ; first: %s", d.mismatches, d.cells, d.first);
    listing_insns_cleanup(&n);
    listing_insns_cleanup(&c);
    free(csv);
}

Test(listing, a_source_page_without_count_columns_is_refused) {
    char err[ERR_LEN] = "";
    struct listing_insns n;
    const char *bad = "\"Kernel Name\",\"k\",\n\"Address\",\"Source\",\"Instructions Executed\"\n\"0x10\",\"EXIT\",\"1\"\n";
    cr_expect_eq(listing_read_ncu(bad, strlen(bad), 0, &n, err), -1);
    cr_expect(strstr(err, "count column"), "%s", err);
    const char *unterminated = "\"Kernel Name\",\"k\n";
    cr_expect_eq(listing_read_ncu(unterminated, strlen(unterminated), 0, &n, err), -1);
    cr_expect(strstr(err, "not CSV"), "%s", err);
    cr_expect_eq(listing_read_ncu("", 0, 0, &n, err), -1);
}

/* PC-sampling samples of the probe (pc, then a column per CUPTI reason). */
static void load_stalls(const char *name, struct listing_insns *f) {
    size_t len;
    char *s = fixture(name, &len), *save = NULL;
    int cols[LISTING_MAX_REASONS + 16];
    int ncol = 0, first = 1;
    f->sampled = 1;
    for (char *line = strtok_r(s, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *col[80];
        int n = 0;
        for (char *p = line; n < 80;) {
            col[n++] = p;
            char *tab = strchr(p, '\t');
            if (!tab) break;
            *tab = '\0';
            p = tab + 1;
        }
        if (first) {
            for (int k = 8; k < n; k++) cols[ncol++] = listing_insns_reason(f, col[k]);
            first = 0;
            continue;
        }
        struct listing_insn *i = listing_insns_at(f, (uint32_t)strtoul(col[2], NULL, 16));
        cr_assert_not_null(i);
        for (int k = 8; k < n && k - 8 < ncol; k++)
            if (cols[k - 8] >= 0) i->stalls[cols[k - 8]] = (uint32_t)strtoul(col[k], NULL, 10);
    }
    free(s);
}

/* 1 when "smsp__pcsamp_warps_issue_stalled_<reason>" is a column of the
 * sample fixture's header: the short name is a whole CUPTI name's. */
static int is_fixture_reason(const char *name, const char *reason) {
    size_t len;
    char *s = fixture(name, &len), want[160];
    snprintf(want, sizeof want, "\tsmsp__pcsamp_warps_issue_stalled_%s", reason);
    const char *nl = strchr(s, '\n');
    const size_t n = strlen(want);
    int ok = 0;
    for (const char *at = strstr(s, want); at && (!nl || at < nl) && !ok; at = strstr(at + 1, want))
        ok = at[n] == '\t' || at[n] == '\n' || at[n] == '\r' || at[n] == '\0';
    free(s);
    return ok;
}

Test(listing, stall_reasons_are_shares_of_each_regions_samples) {
    struct listing_insns f;
    char err[ERR_LEN];
    load_counts("probe-periter-lane-parity.tsv", &f);
    join_disassembly(&f, PERITER);
    load_stalls("probe-periter-lane-parity.pcs.tsv", &f);
    const struct listing_paths p = probe_periter_paths();
    listing_classify(&f, &p);
    struct listing *l = listing_create();
    cr_assert_eq(listing_build(&f, l, err), 0, "%s", err);
    int any = 0;
    for (unsigned k = 0; k < l->nregions; k++) {
        const struct listing_region *r = &l->regions[k];
        cr_expect(r->has_stalls);
        double sum = 0, prev = 2;
        for (unsigned s = 0; s < r->nstalls; s++) {
            cr_expect(r->stalls[s].share > 0 && r->stalls[s].share <= prev, "%s: %s %.3f", listing_kind_name(r->kind),
                      r->stalls[s].reason, r->stalls[s].share);
            cr_expect(!strstr(r->stalls[s].reason, "not_issued") && !strstr(r->stalls[s].reason, "sample"), "%s",
                      r->stalls[s].reason);
            cr_expect(!strstr(r->stalls[s].reason, "smsp__"), "the short name: %s", r->stalls[s].reason);
            /* Whole, not cut at a buffer's end (CUPTI's names run to 62
             * characters: a cut "..._imc_miss_not_i" would also slip past
             * the _not_issued rule and be counted twice). */
            cr_expect(is_fixture_reason("probe-periter-lane-parity.pcs.tsv", r->stalls[s].reason), "a whole name: %s",
                      r->stalls[s].reason);
            prev = r->stalls[s].share;
            sum += r->stalls[s].share;
        }
        cr_expect(sum <= 1.0 + 1e-9);
        any |= r->nstalls > 0;
    }
    cr_expect(any, "the sampled kernel has stall samples somewhere");
    listing_free(l);
    /* Not sampled: no stalls, and the document says null. */
    f.sampled = 0;
    l = listing_create();
    cr_assert_eq(listing_build(&f, l, err), 0, "%s", err);
    for (unsigned k = 0; k < l->nregions; k++) cr_expect(!l->regions[k].has_stalls && l->regions[k].nstalls == 0);
    listing_free(l);
    listing_insns_cleanup(&f);
}

Test(listing, combine_weights_each_part) {
    struct listing_insns parts[2], out;
    char err[ERR_LEN];
    listing_insns_init(&parts[0]);
    listing_insns_init(&parts[1]);
    for (int k = 0; k < 2; k++) {
        for (uint32_t pc = 0; pc < 3 * 16; pc += 16) {
            struct listing_insn *i = listing_insns_at(&parts[k], pc);
            i->warp = 8u * (k + 1);
            i->thread = 256u * (k + 1);
            i->pred_on = 128u * (k + 1);
            i->divergent = pc == 16 ? 8u : 0u;
            snprintf(i->sass, sizeof i->sass, "FFMA R%d", (int)pc);
        }
    }
    const unsigned long long w[2] = {2048, 1};
    cr_assert_eq(listing_combine(parts, w, 2, &out, err), 0, "%s", err);
    cr_assert_eq(out.n, 3);
    cr_expect_eq(out.v[1].warp, 2048 * 8 + 16);
    cr_expect_eq(out.v[1].thread, 2048ull * 256 + 512);
    cr_expect_eq(out.v[1].pred_on, 2048ull * 128 + 256);
    cr_expect_eq(out.v[1].divergent, 2049ull * 8);
    cr_expect_str_eq(out.v[2].sass, "FFMA R32");
    listing_insns_cleanup(&out);
    const unsigned long long zero[1] = {0};
    cr_expect_eq(listing_combine(parts, zero, 1, &out, err), -1);
    cr_expect_eq(listing_combine(parts, w, 0, &out, err), -1);
    listing_insns_cleanup(&parts[0]);
    listing_insns_cleanup(&parts[1]);
}

Test(listing, instructions_stay_in_pc_order_whatever_order_they_come_in) {
    struct listing_insns f;
    listing_insns_init(&f);
    const uint32_t pcs[] = {0x40, 0x10, 0x30, 0x0, 0x20, 0x10};
    for (size_t k = 0; k < sizeof pcs / sizeof pcs[0]; k++) cr_assert_not_null(listing_insns_at(&f, pcs[k]));
    cr_assert_eq(f.n, 5, "a pc seen twice is one instruction");
    for (size_t k = 0; k < f.n; k++) cr_expect_eq(f.v[k].pc, 16u * k);
    cr_expect_null(listing_insns_find(&f, 0x50));
    listing_insns_cleanup(&f);
}

Test(listing, decode_reads_guard_and_opcode) {
    struct listing_insn i;
    memset(&i, 0, sizeof i);
    snprintf(i.sass, sizeof i.sass, "@!P0 FFMA R0, R4.reuse, R5, 9.9999997473787516356e-05");
    listing_decode(&i);
    cr_expect_str_eq(i.opcode, "FFMA");
    cr_expect(i.guarded);
    snprintf(i.sass, sizeof i.sass, "ISETP.NE.AND P0, PT, R4, 0x1000, PT");
    listing_decode(&i);
    cr_expect_str_eq(i.opcode, "ISETP.NE.AND");
    cr_expect(!i.guarded);
    snprintf(i.sass, sizeof i.sass, "@PT BRA `(.L_x_3)");
    listing_decode(&i);
    cr_expect(!i.guarded, "@PT is always true");
    snprintf(i.sass, sizeof i.sass, "BRA `(.L_x_3);");
    listing_decode(&i);
    cr_expect_str_eq(i.opcode, "BRA");
    i.sass[0] = '\0';
    listing_decode(&i);
    cr_expect_str_eq(i.opcode, "");
}

Test(listing, kind_names_round_trip) {
    for (int k = 0; k < LISTING_KINDS; k++) cr_expect_eq(listing_kind_parse(listing_kind_name((enum listing_kind)k)), k);
    cr_expect_eq(listing_kind_parse("path_c"), -1);
    cr_expect_eq(listing_kind_parse(NULL), -1);
}

Test(listing, file_suffix_matches_on_a_folder_boundary) {
    cr_expect(listing_file_is("/build/tree/kernels/gpu/lesson_kernels.cu", "kernels/gpu/lesson_kernels.cu"));
    cr_expect(listing_file_is("kernels/gpu/lesson_kernels.cu", "kernels/gpu/lesson_kernels.cu"));
    cr_expect(!listing_file_is("/x/otherkernels/gpu/lesson_kernels.cu", "kernels/gpu/lesson_kernels.cu"));
    cr_expect(!listing_file_is("", "kernels/gpu/lesson_kernels.cu"));
    cr_expect(!listing_file_is("a.cu", ""));
}

Test(listing, mask_hash_reads_only_the_masks_bits) {
    uint32_t a[2] = {0x0000ffffu, 0xdeadbeefu}, b[2] = {0x0000ffffu, 0x12345678u};
    cr_expect_eq(listing_mask_hash(a, 32), listing_mask_hash(b, 32), "bits past nbits do not count");
    cr_expect_neq(listing_mask_hash(a, 64), listing_mask_hash(b, 64));
    uint32_t c[1] = {0x0000fffeu};
    cr_expect_neq(listing_mask_hash(a, 32), listing_mask_hash(c, 32), "one bit differs");
    uint32_t z[2] = {0, 0};
    cr_expect_neq(listing_mask_hash(z, 32), listing_mask_hash(z, 64), "as many zeros is not the same grid");
    uint32_t odd[1] = {0xffu}, odd2[1] = {0x1ffu};
    cr_expect_eq(listing_mask_hash(odd, 8), listing_mask_hash(odd2, 8));
    cr_expect_eq(listing_mask_hash(odd, 5), listing_mask_hash(odd2, 5), "a partial last byte");
}

Test(listing, the_key_names_every_field_and_tells_each_apart) {
    struct listing_key k = {.cubin_crc = 0x30bf6c82ull, .driver_version = 13000, .nvidia_driver = "580.159.04",
                            .device = "NVIDIA H200 0000:19:00.0", .kernel = "_Z12mixOneBranchILj4096ELb0EEvPKfPfmijP16dv_witness_block",
                            .mask_hash = 0x1234, .blocks = 1, .block_x = 256, .block_y = 1, .iterations = 4096};
    char base[1024], other[1024];
    cr_assert_eq(listing_key_format(&k, base, sizeof base), 0);
    cr_expect(strstr(base, "cubin=0000000030bf6c82") && strstr(base, "580.159.04") && strstr(base, "NVIDIA H200") &&
                  strstr(base, "mixOneBranch") && strstr(base, "mode=0") && strstr(base, "mask=0000000000001234") && strstr(base, "grid=1") &&
                  strstr(base, "block=256x1") && strstr(base, "iterations=4096"),
              "%s", base);
    struct listing_key v[9];
    for (int i = 0; i < 9; i++) v[i] = k;
    v[0].cubin_crc++;
    v[1].driver_version++;
    v[2].device[0] = 'X';
    v[3].kernel[3] = 'X';
    v[4].mask_hash++;
    v[5].blocks++;
    v[6].block_y++;
    v[7].iterations++;
    v[8].mode++;
    for (int i = 0; i < 9; i++) {
        cr_assert_eq(listing_key_format(&v[i], other, sizeof other), 0);
        cr_expect_str_neq(base, other, "field %d", i);
    }
    cr_expect_eq(listing_key_format(&k, other, 16), -1, "too short a buffer");
}

Test(listing, copy_is_deep) {
    struct listing *l = listing_create();
    struct listing_run run = {.pc = 16, .count = 3, .opcode = "FFMA"};
    for (int k = 0; k < 100; k++) {
        run.pc = 16u * 3u * (unsigned)k;
        cr_assert_eq(listing_add_run(l, &run), 0);
    }
    struct listing *c = listing_copy(l);
    cr_assert_not_null(c);
    cr_expect_eq(c->nruns, 100);
    cr_expect_neq(c->runs, l->runs);
    l->runs[5].count = 9;
    cr_expect_eq(c->runs[5].count, 3);
    cr_assert_eq(listing_add_run(c, &run), 0, "a copy grows on its own");
    listing_free(l);
    listing_free(c);
    listing_free(NULL);
}

/* ---- the shape of a profile's paths, read from its own instructions ---- */

/* The probe's listing of `tsv` with the disassembly of `function`, classified by `p`. */
static struct listing *probe_listing(const char *tsv, const char *function, const struct listing_paths *p, int text) {
    struct listing_insns f;
    char err[ERR_LEN];
    load_counts(tsv, &f);
    if (text) join_disassembly(&f, function);
    listing_classify(&f, p);
    struct listing *l = listing_create();
    cr_assert_not_null(l);
    cr_assert_eq(listing_build(&f, l, err), 0, "%s", err);
    listing_insns_cleanup(&f);
    return l;
}

/* On what an H200 ran: the lesson-shaped branch is branched (BSSY, @P BRA
 * and BSYNC around its unguarded chains, 16 lanes each, the BSYNC before
 * the code after it); the branch inside the loop is predicated (every
 * path FFMA guarded, issued with 32 lanes, 16 on); without a disassembly
 * there is nothing to read the verdict from. */
Test(listing, the_shape_is_read_from_the_rows_own_instructions) {
    const struct listing_paths b = probe_branch_paths(), pi = probe_periter_paths();
    struct listing_shape sh;
    struct listing *l = probe_listing("probe-branch-lane-parity.tsv", BRANCH, &b, 1);
    listing_shape(l, &sh);
    cr_expect_eq(sh.branching, LISTING_SHAPE_BRANCHED, "%s", sh.text);
    cr_expect_eq(sh.guarded_ffma, 0);
    cr_expect_eq(sh.path_ffma, 512, "256 FFMAs on each chain");
    cr_expect(sh.window_bsync >= 1 && sh.window_guarded_bra >= 1, "%s", sh.text);
    cr_expect(fabs(sh.path_lanes - 16.0) < 1e-12, "%.3f", sh.path_lanes);
    cr_expect(sh.has_join && !sh.join_is_tail && sh.sync_at_join, "%s", sh.text);
    cr_expect_eq(sh.join_pc, 0x23e0);
    cr_expect(fabs(sh.join_lanes - 32.0) < 1e-12, "the warp met again at the BSYNC: %.3f", sh.join_lanes);
    cr_expect(strncmp(sh.text, "branched:", 9) == 0, "%s", sh.text);
    listing_free(l);

    l = probe_listing("probe-periter-lane-parity.tsv", PERITER, &pi, 1);
    listing_shape(l, &sh);
    cr_expect_eq(sh.branching, LISTING_SHAPE_PREDICATED, "%s", sh.text);
    cr_expect_eq(sh.guarded_ffma, sh.path_ffma);
    cr_expect_eq(sh.window_bssy + sh.window_bsync + sh.window_guarded_bra, 0, "%s", sh.text);
    cr_expect(fabs(sh.guarded_lanes - 32.0) < 1e-12 && fabs(sh.guarded_lanes_on - 16.0) < 1e-12, "%s", sh.text);
    listing_free(l);

    l = probe_listing("probe-branch-lane-parity.tsv", BRANCH, &b, 0);
    listing_shape(l, &sh);
    cr_expect_eq(sh.branching, LISTING_SHAPE_UNKNOWN, "%s", sh.text);
    cr_expect(strstr(sh.text, "no disassembly") != NULL, "%s", sh.text);
    listing_free(l);
}

/* One instruction of a synthetic listing. */
static void put_insn(struct listing_insns *f, uint32_t pc, unsigned line, const char *sass, unsigned long long warp,
                     unsigned long long thread, unsigned long long pred_on) {
    struct listing_insn *i = listing_insns_at(f, pc);
    cr_assert_not_null(i);
    snprintf(i->sass, sizeof i->sass, "%s", sass);
    snprintf(i->file, sizeof i->file, "kernels/gpu/scenario_kernels.cu");
    i->line = line;
    i->warp = warp;
    i->thread = thread;
    i->pred_on = pred_on;
}

/* A k-way switch of four paths (lines 84..87, one case each), 8 lanes a
 * path: each path is a region of its own (path_0 .. path_3), the BSYNC
 * after them the reconvergence, the store after; the shape is branched. A
 * reconvergence kernel's tail (line 90) is its own region after the join,
 * whose lanes say whether the warp met there again. */
Test(listing, k_paths_loops_and_tails_are_regions_of_their_own) {
    struct listing_paths p;
    memset(&p, 0, sizeof p);
    snprintf(p.file, sizeof p.file, "kernels/gpu/scenario_kernels.cu");
    for (unsigned k = 0; k < 4; k++) cr_assert_eq(listing_paths_add(&p, 84 + k, LISTING_PATH_0 + k), 0);
    cr_assert_eq(listing_paths_add(&p, 90, LISTING_TAIL), 0);
    cr_expect_eq(listing_paths_add(&p, 91, LISTING_AFTER), -1, "a line names no 'after'");
    cr_expect_eq(listing_paths_add(&p, 92, LISTING_RECONVERGE), -1);
    struct listing_insns f;
    listing_insns_init(&f);
    put_insn(&f, 0x00, 80, "BSSY B0, `(.L_x_9)", 8, 256, 256);
    put_insn(&f, 0x10, 80, "ISETP.GT.U32.AND P0, PT, R2, 0x1, PT", 8, 256, 256);
    put_insn(&f, 0x20, 80, "@P0 BRA `(.L_x_2)", 8, 256, 256);
    for (unsigned k = 0; k < 4; k++) {
        const uint32_t at = 0x30 + 0x40 * k;
        put_insn(&f, at, 84 + k, "FFMA R0, R0, 0.99, 0.001", 8, 64, 64);
        put_insn(&f, at + 0x10, 84 + k, "FFMA R0, R0, 0.99, 0.001", 8, 64, 64);
        put_insn(&f, at + 0x20, 84 + k, "@P1 BRA `(.L_x_3)", 8, 64, 64);
        put_insn(&f, at + 0x30, 84 + k, "BRA `(.L_x_9)", 8, 64, 64);
    }
    put_insn(&f, 0x130, 84, "BSYNC B0", 32, 256, 256);
    put_insn(&f, 0x140, 90, "FFMA R0, R0, 0.98, 0.002", 8, 256, 256);
    put_insn(&f, 0x150, 91, "STG.E [R2.64], R0", 8, 256, 256);
    listing_classify(&f, &p);
    for (unsigned k = 0; k < 4; k++) cr_expect_eq(kind_at(&f, 0x30 + 0x40 * k), LISTING_PATH_0 + k, "case %u", k);
    cr_expect_eq(kind_at(&f, 0x130), LISTING_RECONVERGE);
    cr_expect_eq(kind_at(&f, 0x140), LISTING_TAIL);
    cr_expect_eq(kind_at(&f, 0x150), LISTING_AFTER);
    char err[ERR_LEN], field[64];
    struct listing *l = listing_create();
    cr_assert_eq(listing_build(&f, l, err), 0, "%s", err);
    cr_expect_eq(listing_check(l, field, sizeof field, err), 0, "%s: %s", field, err);
    const enum listing_kind want[] = {LISTING_BEFORE,     LISTING_PATH_0,     LISTING_PATH_0 + 1, LISTING_PATH_0 + 2,
                                      LISTING_PATH_0 + 3, LISTING_RECONVERGE, LISTING_TAIL,       LISTING_AFTER};
    expect_regions(l, want, 8);
    cr_expect_str_eq(listing_kind_name(l->regions[3].kind), "path_2");
    cr_expect(fabs(l->regions[3].lanes - 8.0) < 1e-12, "8 lanes on path_2: %.3f", l->regions[3].lanes);
    struct listing_shape sh;
    listing_shape(l, &sh);
    cr_expect_eq(sh.branching, LISTING_SHAPE_BRANCHED, "%s", sh.text);
    cr_expect(sh.join_is_tail && sh.sync_at_join, "%s", sh.text);
    cr_expect(fabs(sh.join_lanes - 32.0) < 1e-12, "%s", sh.text);
    listing_free(l);

    /* The same without the BSYNC, the tail run by each group on its own:
     * 4 executions a warp of 8 lanes. */
    listing_insns_cleanup(&f);
    listing_insns_init(&f);
    put_insn(&f, 0x00, 84, "FFMA R0, R0, 0.99, 0.001", 8, 128, 128);
    put_insn(&f, 0x10, 85, "FFMA R0, R0, 0.99, 0.001", 8, 128, 128);
    put_insn(&f, 0x20, 90, "FFMA R0, R0, 0.98, 0.002", 16, 256, 256);
    listing_classify(&f, &p);
    l = listing_create();
    cr_assert_eq(listing_build(&f, l, err), 0, "%s", err);
    listing_shape(l, &sh);
    cr_expect_eq(sh.branching, LISTING_SHAPE_UNCONDITIONAL, "%s", sh.text);
    cr_expect(sh.join_is_tail && !sh.sync_at_join, "%s", sh.text);
    cr_expect(fabs(sh.join_lanes - 16.0) < 1e-12, "%s", sh.text);
    cr_expect(strstr(sh.text, "with no BSYNC/WARPSYNC before it, 16.0 lanes") != NULL, "%s", sh.text);
    listing_free(l);
    listing_insns_cleanup(&f);
}

/* A loop's body is one region, its lanes the lanes per trip; the kinds
 * that are a path's own code are told apart from the rest. */
Test(listing, a_loop_body_is_a_path_and_its_lanes_are_per_trip) {
    cr_expect(listing_kind_is_path(LISTING_LOOP));
    cr_expect(listing_kind_is_path(LISTING_PATH_A) && listing_kind_is_path(LISTING_PATH_LAST));
    cr_expect_not(listing_kind_is_path(LISTING_TAIL));
    cr_expect_not(listing_kind_is_path(LISTING_RECONVERGE));
    cr_expect_not(listing_kind_is_path(LISTING_BEFORE));
    cr_expect_str_eq(listing_kind_name(LISTING_PATH_LAST), "path_31");
    cr_expect_eq(listing_kind_parse("loop"), LISTING_LOOP);
    cr_expect_eq(listing_kind_parse("path_32"), -1);
    struct listing_paths p;
    memset(&p, 0, sizeof p);
    snprintf(p.file, sizeof p.file, "kernels/gpu/scenario_kernels.cu");
    cr_assert_eq(listing_paths_add(&p, 120, LISTING_LOOP), 0);
    struct listing_insns f;
    listing_insns_init(&f);
    /* 20 trips for the warp, 240 lane-trips: 12 lanes a trip. */
    put_insn(&f, 0x00, 119, "ISETP.NE.AND P0, PT, R3, RZ, PT", 1, 32, 32);
    put_insn(&f, 0x10, 120, "FFMA R0, R0, 0.99, 0.001", 20, 240, 240);
    put_insn(&f, 0x20, 120, "@P0 BRA `(.L_x_1)", 20, 240, 240);
    put_insn(&f, 0x30, 122, "STG.E [R2.64], R0", 1, 32, 32);
    listing_classify(&f, &p);
    char err[ERR_LEN];
    struct listing *l = listing_create();
    cr_assert_eq(listing_build(&f, l, err), 0, "%s", err);
    const enum listing_kind want[] = {LISTING_BEFORE, LISTING_LOOP, LISTING_AFTER};
    expect_regions(l, want, 3);
    cr_expect(fabs(l->regions[1].lanes - 12.0) < 1e-12, "%.3f", l->regions[1].lanes);
    listing_free(l);
    listing_insns_cleanup(&f);
}
