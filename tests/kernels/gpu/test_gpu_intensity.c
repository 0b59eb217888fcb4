/* test_gpu_intensity.c -- the arithmetic-intensity kernels on a GPU:
 * every row of the nightly tables on the suite's whole grid against the
 * CPU reference (the first wrong thread named), a table measured end to
 * end with its ridge and DRAM bytes, and the DRAM bytes the service's pass
 * counts against Nsight Compute's dram__bytes_read.sum on the same launch
 * (the same kernel, grid and buffers: tests/support/intensity_probe.c, run
 * once under ncu and once counting as the service does), within 1%.
 * Skips with the reason where there is no GPU, and the ncu comparison where
 * there is no ncu. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/options.h"
#include "kernels/gpu/devmem.h"
#include "kernels/gpu/measure.h"
#include "kernels/gpu/scenario_rows.h"
#include "kernels/model/model/intensity.h"
#include "kernels/model/model/scenario.h"
#include "kernels/model/model/scenario_table.h"
#include "tests/kernels/gpu/helper_gpu.h"

/* The probe binary: DV_INTENSITY_PROBE where set (a build tree copied
 * elsewhere: tests/bench/intensity_gpu.sh sets it to its BUILD_DIR's),
 * else the one this test was built beside. */
static const char *probe(void) {
    const char *p = getenv("DV_INTENSITY_PROBE");
    return p && p[0] ? p : DV_TEST_BUILD_DIR "/tests/intensity_probe";
}
#define PROBE probe()

/* Every row of table `name` once on `blocks` blocks of 256, each output
 * against the reference. */
static void run_and_check(const char *name, unsigned blocks) {
    const struct scenario *s = scenario_find(name);
    cr_assert_not_null(s);
    char err[ERR_LEN] = "";
    struct dv_options o;
    experiment_defaults(&o);
    o.blocks = blocks;
    const unsigned long long n = (unsigned long long)blocks * 256;
    float *in = malloc(n * sizeof *in), *out = malloc(n * sizeof *out);
    void *d_in = NULL;
    struct scenario_rows *c = calloc(1, sizeof *c);
    cr_assert(in && out && c);
    for (unsigned long long i = 0; i < n; i++) in[i] = dv_input_value(i);
    cr_assert_eq(devmem_alloc(&d_in, n * sizeof(float), err), 0, "%s", err);
    cr_assert_eq(devmem_upload(d_in, in, n * sizeof(float), err), 0, "%s", err);
    cr_assert_eq(scenario_rows_setup(c, s, &o, d_in, (1u << s->nrows) - 1u, err), 0, "%s: %s", name, err);
    for (unsigned r = 0; r < s->nrows; r++) {
        struct dv_check chk;
        for (unsigned long long i = 0; i < n; i++) out[i] = NAN;
        cr_assert_eq(devmem_upload(c->out[r], out, n * sizeof(float), err), 0, "%s", err);
        cr_assert_eq(scenario_rows_launch(c, r, 0, 0, blocks, NULL, NULL, err), 0, "%s: %s", s->rows[r].name, err);
        cr_assert_eq(devmem_download(out, c->out[r], n * sizeof(float), err), 0, "%s", err);
        cr_assert_eq(scenario_check(&c->row[r], c->host_work[r], n, c->unit, c->iters, out, &chk, err), 0, "%s", err);
        cr_expect(chk.ok, "%s/%s: %llu mismatches, first thread %lld (want %.9g got %.9g)", name, s->rows[r].name,
                  chk.mismatches, chk.first_mismatch, chk.expected, chk.got);
        cr_expect_eq(chk.checked, n);
    }
    scenario_rows_cleanup(c);
    free(c);
    devmem_free(d_in);
    free(in);
    free(out);
}

Test(gpu_intensity, every_row_matches_the_cpu_reference_on_the_suites_grid, .timeout = 300) {
    HELPER_REQUIRE_GPU();
    run_and_check("intensity-stream", 4096);
    run_and_check("intensity-chase", 4096);
}

/* The probe's count of every row of `table`: bytes[row] (NaN where it
 * printed none); 0, or the probe's exit status (3: no counters). */
static int probe_count(const char *table, double *bytes, unsigned nrows, char *why, size_t len) {
    char cmd[512], line[256], name[128];
    const struct scenario *s = scenario_find(table);
    for (unsigned r = 0; r < nrows; r++) bytes[r] = NAN;
    snprintf(cmd, sizeof cmd, "'%s' count %s 4096 2>&1", PROBE, table);
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p);
    why[0] = '\0';
    while (fgets(line, sizeof line, p)) {
        double v;
        if (sscanf(line, "row %127s dram_bytes_read %lf", name, &v) == 2) {
            for (unsigned r = 0; r < s->nrows && r < nrows; r++)
                if (strcmp(s->rows[r].name, name) == 0) bytes[r] = v;
        } else {
            snprintf(why, len, "%s", line);
        }
    }
    const int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}

/* Nsight Compute's dram__bytes_read.sum of the second launch of `row`. */
static double ncu_bytes(const char *table, unsigned row) {
    char cmd[768], line[1024];
    double v = NAN;
    snprintf(cmd, sizeof cmd,
             "ncu --metrics dram__bytes_read.sum --print-units base --csv --kernel-name regex:^intensity_kernel "
             "--launch-skip 1 --launch-count 1 '%s' launch %s %u 4096 2>&1",
             PROBE, table, row);
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p);
    while (fgets(line, sizeof line, p)) {
        if (!strstr(line, "\"dram__bytes_read.sum\"")) continue;
        /* The last field: "123,456" (quoted, with or without separators). */
        char *end = line + strlen(line);
        while (end > line && (end[-1] == '\n' || end[-1] == '\r' || end[-1] == '"')) *--end = '\0';
        const char *q = strrchr(line, '"');
        char digits[64];
        size_t k = 0;
        for (const char *c = q ? q + 1 : line; *c && k + 1 < sizeof digits; c++)
            if ((*c >= '0' && *c <= '9') || *c == '.' || *c == 'e' || *c == '+') digits[k++] = *c;
        digits[k] = '\0';
        if (k) v = strtod(digits, NULL);
    }
    pclose(p);
    return v;
}

static int have_ncu(void) { return system("command -v ncu > /dev/null 2>&1") == 0; }

Test(gpu_intensity, dram_bytes_equal_nsight_computes_on_the_same_launch, .timeout = 600) {
    HELPER_REQUIRE_GPU();
    if (!have_ncu()) {
        printf("SKIPPED: no ncu on PATH\n");
        cr_skip_test("no ncu on PATH");
    }
    static const char *const tables[] = {"intensity-stream", "intensity-chase"};
    /* ridge-bandwidth, the lowest and the highest point's both rows */
    static const unsigned rows[] = {0, 2, 3, 12, 13};
    for (unsigned k = 0; k < 2; k++) {
        double ours[DV_MAX_ROWS];
        char why[512];
        const int rc = probe_count(tables[k], ours, DV_MAX_ROWS, why, sizeof why);
        if (rc == 3) {
            printf("SKIPPED: no counters in this process: %s\n", why);
            cr_skip_test("no counters: %s", why);
        }
        cr_assert_eq(rc, 0, "intensity_probe count %s: %s", tables[k], why);
        for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
            const unsigned r = rows[i];
            const double theirs = ncu_bytes(tables[k], r);
            const double rel = fabs(ours[r] - theirs) / theirs;
            printf("dram bytes %-18s %-14s service %.0f  ncu %.0f  (%+.3f%%)\n", tables[k],
                   scenario_find(tables[k])->rows[r].name, ours[r], theirs, 100.0 * (ours[r] - theirs) / theirs);
            cr_expect(isfinite(theirs) && theirs > 0, "%s row %u: no value from ncu", tables[k], r);
            cr_expect(rel < 0.01, "%s row %u: service %.0f, ncu %.0f", tables[k], r, ours[r], theirs);
        }
    }
}
