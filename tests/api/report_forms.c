/* report_forms.c -- writes the forms of a set of reports (the divergence.v1
 * document, Markdown, CSV, SVG) into a folder, for tests/api/forms_check.py
 * (xmllint against the SVG 1.1 DTD, Python's csv module, markdown-it, bytes
 * across two runs) and tests/browser/svg.test.mjs (Chromium draws them).
 *
 * The reports: analyses of the lesson's tables (both Parts, a 32x8 block,
 * every scenario), the report with every field set (tests/api/report_full.h,
 * counters on every row), and every scenario table "measured" with counters
 * on every row, the largest chart the evidence can ask for (it must stay
 * under 20 KB). A measured figure is the model's times a fixed factor per
 * row, so the files are the same on every run.
 *
 * Usage: report_forms DIR. Writes DIR/<name>.{json,md,csv,svg}. Exit 1 when a
 * report cannot be planned or a file written.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/options.h"
#include "api/report.h"
#include "kernels/model/experiment.h"
#include "tests/api/report_full.h"

static int write_file(const char *dir, const char *name, const char *ext, const char *text) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s.%s", dir, name, ext);
    FILE *f = fopen(path, "w");
    if (!f || !text || fputs(text, f) < 0) {
        fprintf(stderr, "report_forms: cannot write %s\n", path);
        if (f) fclose(f);
        return -1;
    }
    return fclose(f) == 0 ? 0 : -1;
}

static int write_forms(const char *dir, const char *name, const struct dv_report *r) {
    char *forms[4] = {report_json(r, 1), report_markdown(r), report_csv(r), report_svg(r, NULL)};
    const char *ext[4] = {"json", "md", "csv", "svg"};
    int rc = 0;
    for (int i = 0; i < 4; i++) {
        if (rc == 0 && write_file(dir, name, ext[i], forms[i]) != 0) rc = -1;
        free(forms[i]);
    }
    return rc;
}

/* Timings and counters a GPU might have given: row k of each table at
 * its predicted ratio times (1 + 0.07 k), the counters close to it. */
static void fake_measure(struct dv_report *r) {
    r->measured = 1;
    snprintf(r->device.name, sizeof r->device.name, "NVIDIA H200");
    r->device.present = 1;
    r->device.cc_major = 9;
    for (unsigned t = 0; t < r->ntables; t++) {
        struct dv_table *tb = &r->tables[t];
        tb->noise_ok = 1;
        snprintf(tb->kernel_iterations, sizeof tb->kernel_iterations, "compile-time 4096");
        for (unsigned i = 0; i < tb->nrows; i++) {
            struct dv_row *w = &tb->rows[i];
            double pr = isfinite(w->predicted_ratio) && w->predicted_ratio > 0 ? w->predicted_ratio : 1.0;
            w->measured = 1;
            w->ratio = (int)i == tb->baseline_row ? 1.0 : pr * (1.0 + 0.07 * i);
            w->time_ms.median = w->time_ms.mean = 0.25 * w->ratio;
            w->time_ms.samples = 50;
            w->time_ms.noise = 0.002;
            w->floor_fraction = 0.5;
            w->check.ok = 1;
            w->check.checked = 1048576;
            w->check.first_mismatch = -1;
            if (w->kernel == DV_KERNEL_SCENARIO) {
                w->measured_efficiency = w->predicted_efficiency * 0.97;
                w->agreement = w->ratio / pr;
            }
            w->counters.present = 1;
            w->counters.inst_vs_baseline = (int)i == tb->baseline_row ? 1.0 : pr * (1.0 + 0.05 * i);
            w->counters.inst_per_fma = 1.04;
            snprintf(w->counters.verdict, sizeof w->counters.verdict, "agrees");
        }
    }
}

/* Plans `body`-like options given as CLI pairs, optionally fake-measured. */
static int planned(const char *dir, const char *name, const char *const *cli, int measured) {
    struct dv_options o;
    char err[ERR_LEN];
    experiment_defaults(&o);
    for (size_t i = 0; cli && cli[i]; i += 2)
        if (options_set_cli(&o, cli[i], cli[i + 1], err) != 0) {
            fprintf(stderr, "report_forms: %s: %s\n", name, err);
            return -1;
        }
    struct dv_report *r = experiment_report_create();
    if (!r || options_validate(&o, OPTIONS_CLI, NULL, err) != 0 || experiment_plan(&o, r, NULL, err) != 0) {
        fprintf(stderr, "report_forms: %s: %s\n", name, r ? err : "out of memory");
        experiment_report_free(r);
        return -1;
    }
    if (measured) fake_measure(r);
    int rc = write_forms(dir, name, r);
    experiment_report_free(r);
    return rc;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: report_forms DIR\n");
        return 2;
    }
    const char *dir = argv[1];
    static const char *const part1[] = {"--part", "1", "--predicates",
                                        "lane-parity,lane-half,warp-parity,block-parity,threadIdx.x % 48 < 24 | 0",
                                        NULL};
    static const char *const part2[] = {"--part", "2", NULL};
    static const char *const block2d[] = {"--part", "1", "--threads-per-block", "32x8", NULL};
    static const char *const scenarios[] = {"--scenario", "all", NULL};
    int rc = 0;
    rc |= planned(dir, "analysis-part1", part1, 0);
    rc |= planned(dir, "analysis-part2", part2, 0);
    rc |= planned(dir, "analysis-32x8", block2d, 0);
    rc |= planned(dir, "analysis-scenarios", scenarios, 0);
    rc |= planned(dir, "measured-lesson", NULL, 1);
    rc |= planned(dir, "measured-scenarios", scenarios, 1);
    struct dv_report *r = experiment_report_create();
    if (!r) return 1;
    report_full(r);
    rc |= write_forms(dir, "full", r);
    experiment_report_free(r);
    return rc ? 1 : 0;
}
