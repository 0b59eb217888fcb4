/* report_forms.c -- writes the forms of a set of reports (the divergence.v1
 * document, Markdown, CSV, SVG) into a folder, for tests/api/forms_check.py
 * (xmllint against the SVG 1.1 DTD, Python's csv module, markdown-it, bytes
 * across two runs) and tests/browser/svg.test.mjs (Chromium draws them).
 *
 * The reports: analyses of the lesson's tables (both Parts, a 32x8 block,
 * every scenario), the report with every field set (tests/api/report_full.h,
 * counters on every row), and every scenario table "measured" with counters
 * on every row, the largest chart the evidence can ask for (it must stay
 * under 20 KiB). A measured figure is the model's times a fixed factor per
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
#include "kernels/model/model/experiment.h"
#include "kernels/model/model/plan.h"
#include "tests/api/report_full.h"
#include "tests/support/fake_measure.h"

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
    if (!r || options_validate(&o, OPTIONS_CLI, NULL, err) != 0 || plan_report(&o, r, NULL, err) != 0) {
        fprintf(stderr, "report_forms: %s: %s\n", name, r ? err : "out of memory");
        experiment_report_free(r);
        return -1;
    }
    if (measured) fake_measure(r, "NVIDIA H200");
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
