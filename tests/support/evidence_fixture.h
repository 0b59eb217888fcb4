/* evidence_fixture.h -- what the evidence, suites and refresh tests share: a
 * scratch directory and divergence.v1 documents that look like what the GPU
 * worker returns (planned by the real experiment code, with timings filled
 * in by hand), so no GPU is needed.
 */
#ifndef DV_TEST_EVIDENCE_FIXTURE_H
#define DV_TEST_EVIDENCE_FIXTURE_H

/* Needs mkdtemp(): define _DEFAULT_SOURCE before the first #include. */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>

#include <jansson.h>

#include "kernels/model/model/experiment.h"
#include "kernels/model/model/plan.h"
#include "api/report.h"
#include "server/evidence/suites.h"

/* A fresh directory under $TMPDIR (or /tmp); the caller removes it. */
static inline char *fixture_tmpdir(void) {
    const char *base = getenv("TMPDIR");
    char *dir = malloc(512);
    if (!dir) return NULL;
    snprintf(dir, 512, "%s/dv-evidence-XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(dir)) {
        free(dir);
        return NULL;
    }
    return dir;
}

static inline void fixture_rmrf(const char *dir) {
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
}

/* A scratch evidence store for each test of a file: `dir` and `ev`, made by
 * setup() and removed by teardown() (the suite's or a test's .init and
 * .fini). Needs <criterion/criterion.h> and server/evidence/evidence.h. */
#define FIXTURE_STORE()                                                                                                \
    static char *dir;                                                                                                  \
    static struct evidence *ev;                                                                                        \
    static void setup(void) {                                                                                          \
        char err_[ERR_LEN];                                                                                            \
        dir = fixture_tmpdir();                                                                                        \
        cr_assert_not_null(dir);                                                                                       \
        ev = evidence_open(dir, err_);                                                                                 \
        cr_assert_not_null(ev, "%s", err_);                                                                            \
    }                                                                                                                  \
    static void teardown(void) {                                                                                       \
        evidence_close(ev);                                                                                            \
        fixture_rmrf(dir);                                                                                             \
        free(dir);                                                                                                     \
    }

/* A measured report for suite `suite_index`: every row's median is
 * `base_ms` times its predicted ratio, its ratio the predicted one with a 95%
 * interval of relative half-width `halfwidth` (the baseline's 1 [1, 1]), its
 * per-sample noise `noise`, and its correctness check `check_ok`. Each
 * table's intervals are within target when `halfwidth` is at most the
 * request's. A test may change rows before writing it (report_json).
 * experiment_report_free() it; NULL on failure. */
static inline struct dv_report *fixture_report(size_t suite_index, double base_ms, double noise, double halfwidth,
                                               int check_ok, const char *gpu) {
    struct dv_options o;
    char err[ERR_LEN];
    if (suites_options(suites_get(suite_index), &o, err) != 0) {
        fprintf(stderr, "fixture: %s\n", err);
        return NULL;
    }
    struct dv_report *r = experiment_report_create();
    if (!r) return NULL;
    if (plan_report(&o, r, NULL, err) != 0) {
        fprintf(stderr, "fixture: %s\n", err);
        experiment_report_free(r);
        return NULL;
    }
    r->device.present = 1;
    snprintf(r->device.name, sizeof r->device.name, "%s", gpu);
    r->device.cc_major = 9;
    r->device.sm_count = 132;
    r->device.warp_size = 32;
    r->measured = 1;
    for (unsigned t = 0; t < r->ntables; t++) {
        struct dv_table *tb = &r->tables[t];
        tb->noise_limit = tb->halfwidth_target = o.max_noise;
        tb->noise_ok = tb->intervals_ok = halfwidth <= o.max_noise;
        snprintf(tb->stop_reason, sizeof tb->stop_reason, "%s", tb->intervals_ok ? "target" : "budget");
        tb->worst_row = -1;
        tb->timer_resolution_ms = 0;
        for (unsigned i = 0; i < tb->nrows; i++) {
            struct dv_row *row = &tb->rows[i];
            double ratio = row->predicted_ratio > 0 ? row->predicted_ratio : 1.0;
            const double hw = (int)i == tb->baseline_row ? 0.0 : halfwidth;
            row->measured = 1;
            row->time_ms.median = base_ms * ratio;
            row->time_ms.mean = row->time_ms.min = row->time_ms.max = row->time_ms.median;
            row->time_ms.stdev = noise * row->time_ms.median;
            row->time_ms.noise = noise;
            row->time_ms.samples = 50;
            row->median_ci_ms = (struct dv_ci){row->time_ms.median * (1 - halfwidth), row->time_ms.median * (1 + halfwidth)};
            row->ratio = row->ratio_of_medians = ratio;
            row->ratio_ci = (struct dv_ci){ratio * (1 - hw), ratio * (1 + hw)};
            row->ratio_level = 0.95;
            row->ratio_method = 1;
            row->ratio_halfwidth = hw;
            row->spread_excess = 1.0;
            row->spread_drift = 0.0;
            if ((int)i != tb->baseline_row && tb->worst_row < 0) tb->worst_row = (int)i;
            row->floor_fraction = 0.5;
            row->check.ok = check_ok;
            row->check.checked = 1048576;
            row->check.mismatches = check_ok ? 0 : 3;
            row->check.first_mismatch = check_ok ? -1 : 17;
            row->check.expected = 1.5f;
            row->check.got = check_ok ? 1.5f : 2.5f;
        }
        tb->worst_halfwidth = tb->worst_row >= 0 ? halfwidth : NAN;
        tb->gpu_time_ms = 100.0;
    }
    snprintf(r->started_utc, sizeof r->started_utc, "2024-01-01T00:00:00Z");
    snprintf(r->finished_utc, sizeof r->finished_utc, "2024-01-01T00:00:05Z");
    return r;
}

/* The document of fixture_report(), its ratios known to `noise` as well:
 * malloc()ed, NULL on failure. */
static inline char *fixture_document(size_t suite_index, double base_ms, double noise, int check_ok,
                                     const char *gpu) {
    struct dv_report *r = fixture_report(suite_index, base_ms, noise, noise, check_ok, gpu);
    char *doc = r ? report_json(r, 0) : NULL;
    experiment_report_free(r);
    return doc;
}

/* The recorded H200 capture (tests/fixtures/evidence, one night of every
 * suite, as the server filed it before evidence had GPU folders). */
#define FIXTURE_CAPTURE_DATE "2026-12-01"
#define FIXTURE_CAPTURE_DIR DV_TEST_SOURCE_DIR "/tests/fixtures/evidence/" FIXTURE_CAPTURE_DATE
#define FIXTURE_SYNTHETIC_GPU "Synthetic Test GPU"
#define FIXTURE_SYNTHETIC_NOTE                                                                    \
    "SYNTHETIC TEST DATA, not a measurement: the NVIDIA H200 capture of " FIXTURE_CAPTURE_DATE \
    " relabelled as a second GPU model so the store's bookkeeping of two models can be tested"

/* Copies the capture into `root`/`sub`/<date>/ (`sub` NULL: `root`/<date>/,
 * the layout before GPU folders). With `synthetic` 1 each record is
 * relabelled as FIXTURE_SYNTHETIC_GPU and says so in a "synthetic" member
 * and at the head of its transcript: a second model derived from the real
 * capture, for tests only. Returns how many records were copied, -1 on error. */
static inline int fixture_copy_capture(const char *root, const char *sub, int synthetic) {
    static const char *const names[] = {"day22-part1", "day22-part2", "day22-exercise", "scenarios"};
    char dst[1024], cmd[2300];
    if (sub) snprintf(dst, sizeof dst, "%s/%s/" FIXTURE_CAPTURE_DATE, root, sub);
    else snprintf(dst, sizeof dst, "%s/" FIXTURE_CAPTURE_DATE, root);
    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", dst);
    if (system(cmd) != 0) return -1;
    int n = 0;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char src[1200], out[1200];
        snprintf(src, sizeof src, FIXTURE_CAPTURE_DIR "/%s.json", names[i]);
        json_error_t je;
        json_t *rec = json_load_file(src, JSON_REJECT_DUPLICATES, &je);
        if (!rec) {
            fprintf(stderr, "fixture: %s: %s\n", src, je.text);
            return -1;
        }
        if (synthetic) {
            json_t *summary = json_object_get(rec, "summary"), *doc = json_object_get(rec, "document");
            json_object_set_new(rec, "synthetic", json_string(FIXTURE_SYNTHETIC_NOTE));
            if (json_is_object(summary)) json_object_set_new(summary, "gpu", json_string(FIXTURE_SYNTHETIC_GPU));
            json_t *dev = json_object_get(doc, "device");
            if (json_is_object(dev)) json_object_set_new(dev, "name", json_string(FIXTURE_SYNTHETIC_GPU));
            const char *t = json_string_value(json_object_get(rec, "transcript"));
            size_t tl = t ? strlen(t) : 0;
            char *text = malloc(tl + sizeof FIXTURE_SYNTHETIC_NOTE + 2);
            if (!text) {
                json_decref(rec);
                return -1;
            }
            sprintf(text, "%s\n%s", FIXTURE_SYNTHETIC_NOTE, t ? t : "");
            json_object_set_new(rec, "transcript", json_string(text));
            free(text);
        }
        snprintf(out, sizeof out, "%s/%s.json", dst, names[i]);
        int rc = json_dump_file(rec, out, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        json_decref(rec);
        if (rc != 0) return -1;
        n++;
    }
    return n;
}

#endif /* DV_TEST_EVIDENCE_FIXTURE_H */
