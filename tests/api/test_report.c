/* test_report.c -- the divergence.v1 document (names, types, null for NaN,
 * timing fields only when measured, round trip) and the lesson's text layout
 * for a report filled by hand with the lesson's own T4 numbers. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "api/options.h"
#include "api/report.h"
#include "kernels/model/stats/spread.h"
#include "kernels/model/model/plan.h"
#include "tests/api/report_full.h"

static struct dv_report rep;

static void set_count(struct dv_count *c, unsigned min, unsigned max, unsigned long long total,
                      unsigned blocks) {
    c->min = min;
    c->max = max;
    c->total = total;
    c->per_block = (double)total / blocks;
}

/* One Part 1 row of a 4096 x 256 grid. */
static void part1_row(struct dv_row *w, const char *name, const char *label, int mode, unsigned split,
                      unsigned on_a_min, unsigned on_a_max, double median, double ratio) {
    snprintf(w->name, sizeof w->name, "%s", name);
    snprintf(w->label, sizeof w->label, "%s", label);
    w->kernel = DV_KERNEL_BRANCH;
    w->mode = mode;
    w->warps_per_block = 8;
    w->threads_per_block = 256;
    set_count(&w->warps_split, split, split, 4096ull * split, 4096);
    set_count(&w->threads_on_a, on_a_min, on_a_max, 4096ull * 128, 4096);
    set_count(&w->path_runs, 8 + split, 8 + split, 4096ull * (8 + split), 4096);
    w->predicted_ratio = (8.0 + split) / 8.0;
    w->comparable = 1;
    w->measured = 1;
    w->time_ms = (struct dv_stats){median, median * 0.99, median * 1.02, median * 1.001,
                                   median * 0.002, 40, 0.002};
    w->median_ci_ms = (struct dv_ci){median * 0.9995, median * 1.0005};
    w->ratio_ci = (struct dv_ci){ratio * 0.999, ratio * 1.0015};
    w->ratio_level = 0.95;
    w->ratio_method = 1;
    w->ratio_of_medians = ratio * 1.0001;
    w->ratio_halfwidth = 0.0015;
    w->ratio = ratio;
    w->floor_fraction = 0.45;
    w->check = (struct dv_check){1, 1048576, 0, -1, 0.0f, 0.0f};
}

static void part2_row(struct dv_row *w, const char *name, const char *label, int kernel, int split,
                      double median, double ratio) {
    part1_row(w, name, label, -1, (unsigned)split, 128, 128, median, ratio);
    w->kernel = kernel;
}

/* The lesson's Results, CUDA 12.6 on a T4. */
static void lesson_report(struct dv_report *r) {
    memset(r, 0, sizeof *r);
    struct dv_device *d = &r->device;
    d->present = 1;
    snprintf(d->name, sizeof d->name, "Tesla T4");
    d->cc_major = 7;
    d->cc_minor = 5;
    d->sm_count = 40;
    d->warp_size = 32;
    d->driver_version = 13000;
    d->runtime_version = 12060;
    d->rated_sm_clock_mhz = 1590;
    d->measured_sm_clock_mhz = 1585.25;
    d->measured_sm_clock_min_mhz = 1500;
    d->fp32_lanes_per_sm = 64;
    d->total_mem_bytes = 15ull << 30;
    d->max_threads_per_sm = 1024;
    snprintf(d->pci_bus_id, sizeof d->pci_bus_id, "0000:00:04.0");
    snprintf(r->build.nvcc_version, sizeof r->build.nvcc_version, "12.6.85");
    snprintf(r->build.cuda_architectures, sizeof r->build.cuda_architectures, "75-real;80-real;90");
    snprintf(r->build.flags, sizeof r->build.flags, "-O3");
    struct dv_config *c = &r->config;
    snprintf(c->experiment, sizeof c->experiment, "all");
    c->blocks = 4096;
    c->block_x = 256;
    c->block_y = 1;
    c->threads_per_block = 256;
    c->threads = 1048576;
    c->iterations = 4096;
    c->fmas_per_launch = 1048576ull * 4096;
    c->bytes_per_launch = 8388608;
    c->fma_floor_ms = 0.7;
    c->max_noise = 0.005;
    c->budget_ms = 2000;
    c->min_samples = 10;
    c->max_samples = 2000;
    r->measured = 1;

    struct dv_table *t = &r->tables[0];
    snprintf(t->id, sizeof t->id, "part1");
    snprintf(t->title, sizeof t->title, "Part 1: one branch, 4096 multiply-adds on each side");
    snprintf(t->kernel, sizeof t->kernel, "branch");
    snprintf(t->baseline, sizeof t->baseline, "warp-parity");
    t->baseline_row = 2;
    t->nrows = 4;
    part1_row(&t->rows[0], "lane-parity", "threadIdx.x & 1", 0, 8, 128, 128, 3.272, 2.0235);
    part1_row(&t->rows[1], "lane-half", "(threadIdx.x & 31) < 16", 1, 8, 128, 128, 3.235, 2.0005);
    part1_row(&t->rows[2], "warp-parity", "threadIdx.x / 32 & 1", 2, 0, 128, 128, 1.616, 1.0);
    part1_row(&t->rows[3], "block-parity", "blockIdx.x & 1", 3, 0, 0, 256, 1.617, 1.0006);
    t->noise_limit = 0.005;
    t->noise_ok = 1;
    t->gpu_time_ms = 1999.5;

    t = &r->tables[1];
    snprintf(t->id, sizeof t->id, "part2");
    snprintf(t->title, sizeof t->title,
             "Part 2: the same branch inside the loop, one multiply-add on each side");
    snprintf(t->kernel, sizeof t->kernel, "periter");
    snprintf(t->baseline, sizeof t->baseline, "no branch");
    t->baseline_row = 0;
    t->nrows = 3;
    part2_row(&t->rows[0], "no-branch", "no branch", DV_KERNEL_NOBRANCH, 0, 1.615, 1.0);
    part2_row(&t->rows[1], "periter-lane-parity", "per-iteration, lane parity", DV_KERNEL_PERITER, 8,
              3.703, 2.2929);
    part2_row(&t->rows[2], "periter-warp-parity", "per-iteration, warp parity", DV_KERNEL_PERITER, 0,
              2.457, 1.5214);
    t->noise_limit = 0.005;
    t->noise_ok = 1;
    t->gpu_time_ms = 1500.25;
    r->ntables = 2;
    r->gpu_time_ms = 3499.75;
    r->wall_time_ms = 4100.5;
    snprintf(r->started_utc, sizeof r->started_utc, "2026-08-30T10:00:00Z");
    snprintf(r->finished_utc, sizeof r->finished_utc, "2026-08-30T10:00:04Z");
}

static void setup(void) { lesson_report(&rep); }

TestSuite(report, .init = setup);

static json_t *load(const char *s) {
    json_error_t je;
    json_t *j = json_loads(s, JSON_REJECT_DUPLICATES, &je);
    cr_assert_not_null(j, "report_json wrote invalid JSON: %s", je.text);
    return j;
}

/* `path` is dot-separated; numeric parts index arrays. */
static json_t *at(json_t *root, const char *path) {
    json_t *v = root;
    while (v && *path) {
        char part[64];
        size_t n = strcspn(path, ".");
        snprintf(part, sizeof part, "%.*s", (int)n, path);
        if (json_is_array(v)) v = json_array_get(v, strtoul(part, NULL, 10));
        else v = json_object_get(v, part);
        path += n + (path[n] == '.');
    }
    return v;
}

static void expect_type(json_t *root, const char *path, json_type type) {
    json_t *v = at(root, path);
    cr_expect_not_null(v, "%s missing", path);
    if (v) cr_expect_eq(json_typeof(v), type, "%s has type %d, want %d", path, json_typeof(v), type);
}

Test(report, json_has_every_contract_name_with_its_type) {
    char *s = report_json(&rep, 0);
    cr_assert_not_null(s);
    json_t *j = load(s);
    cr_expect_str_eq(json_string_value(at(j, "schema")), "divergence.v1");
    static const struct {
        const char *path;
        json_type type;
    } want[] = {
        {"device.name", JSON_STRING}, {"device.compute_capability", JSON_STRING},
        {"device.sm_count", JSON_INTEGER}, {"device.warp_size", JSON_INTEGER},
        {"device.driver_version", JSON_STRING}, {"device.runtime_version", JSON_STRING},
        {"device.driver_version_raw", JSON_INTEGER}, {"device.rated_sm_clock_mhz", JSON_REAL},
        {"device.measured_sm_clock_mhz", JSON_REAL}, {"device.fp32_lanes_per_sm", JSON_INTEGER},
        {"device.present", JSON_TRUE}, {"device.reason", JSON_STRING},
        {"build.nvcc_version", JSON_STRING}, {"build.cuda_architectures", JSON_STRING},
        {"build.flags", JSON_STRING},
        {"config.experiment", JSON_STRING}, {"config.blocks", JSON_INTEGER},
        {"config.blocks_auto", JSON_FALSE}, {"config.blocks_reason", JSON_STRING},
        {"config.threads_per_block", JSON_INTEGER}, {"config.block", JSON_ARRAY},
        {"config.block.0", JSON_INTEGER}, {"config.threads", JSON_INTEGER},
        {"config.iterations", JSON_INTEGER}, {"config.fmas_per_launch", JSON_INTEGER},
        {"config.bytes_per_launch", JSON_INTEGER}, {"config.fma_floor_ms", JSON_REAL},
        {"config.max_noise", JSON_REAL}, {"config.budget_ms", JSON_REAL},
        {"tables", JSON_ARRAY}, {"tables.0.id", JSON_STRING}, {"tables.0.title", JSON_STRING},
        {"tables.0.kernel", JSON_STRING}, {"tables.0.baseline", JSON_STRING},
        {"tables.0.noise_limit", JSON_REAL}, {"tables.0.noise_ok", JSON_TRUE},
        {"tables.0.gpu_time_ms", JSON_REAL}, {"tables.0.rows", JSON_ARRAY},
        {"tables.0.rows.0.name", JSON_STRING}, {"tables.0.rows.0.label", JSON_STRING},
        {"tables.0.rows.0.kernel", JSON_STRING}, {"tables.0.rows.0.warps_per_block", JSON_INTEGER},
        {"tables.0.rows.0.warps_split_per_block", JSON_REAL},
        {"tables.0.rows.0.warps_split.min", JSON_INTEGER},
        {"tables.0.rows.0.warps_split.max", JSON_INTEGER},
        {"tables.0.rows.0.warps_split.total", JSON_INTEGER},
        {"tables.0.rows.0.threads_per_block", JSON_INTEGER},
        {"tables.0.rows.0.threads_on_a_per_block", JSON_REAL},
        {"tables.0.rows.0.threads_on_a.total", JSON_INTEGER},
        {"tables.0.rows.0.path_runs_per_block", JSON_REAL},
        {"tables.0.rows.0.path_runs.max", JSON_INTEGER},
        {"tables.0.rows.0.predicted_ratio", JSON_REAL}, {"tables.0.rows.0.comparable", JSON_TRUE},
        {"tables.0.rows.0.note", JSON_STRING}, {"tables.0.rows.0.time_ms", JSON_OBJECT},
        {"tables.0.rows.0.time_ms.median", JSON_REAL}, {"tables.0.rows.0.time_ms.min", JSON_REAL},
        {"tables.0.rows.0.time_ms.max", JSON_REAL}, {"tables.0.rows.0.time_ms.mean", JSON_REAL},
        {"tables.0.rows.0.time_ms.stdev", JSON_REAL}, {"tables.0.rows.0.samples", JSON_INTEGER},
        {"tables.0.rows.0.noise", JSON_REAL}, {"tables.0.rows.0.ratio", JSON_REAL},
        {"tables.0.rows.0.floor_fraction", JSON_REAL}, {"tables.0.rows.0.check.ok", JSON_TRUE},
        {"tables.0.rows.0.check.checked", JSON_INTEGER},
        {"tables.0.rows.0.check.mismatches", JSON_INTEGER},
        {"tables.0.rows.0.check.first_mismatch", JSON_NULL},
        {"warnings", JSON_ARRAY}, {"measured", JSON_TRUE}, {"gpu_time_ms", JSON_REAL},
        {"wall_time_ms", JSON_REAL}, {"started_utc", JSON_STRING}, {"finished_utc", JSON_STRING},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) expect_type(j, want[i].path, want[i].type);
    cr_expect_str_eq(json_string_value(at(j, "device.compute_capability")), "7.5");
    cr_expect_str_eq(json_string_value(at(j, "device.driver_version")), "13.0");
    cr_expect_str_eq(json_string_value(at(j, "device.runtime_version")), "12.6");
    cr_expect_eq(json_integer_value(at(j, "device.runtime_version_raw")), 12060);
    cr_expect_eq(json_integer_value(at(j, "config.fmas_per_launch")), 1048576ll * 4096);
    cr_expect_str_eq(json_string_value(at(j, "tables.0.rows.0.kernel")), "branch");
    cr_expect_str_eq(json_string_value(at(j, "tables.1.rows.0.kernel")),
                     experiment_kernel_name(DV_KERNEL_NOBRANCH));
    cr_expect_eq(json_integer_value(at(j, "tables.0.rows.3.threads_on_a.max")), 256);
    cr_expect_null(at(j, "tables.0.rows.0.comparable_reason"), "only written when not comparable");
    json_decref(j);
    free(s);
}

Test(report, nan_and_infinity_become_null) {
    rep.tables[0].rows[1].ratio = NAN;
    rep.tables[0].rows[1].time_ms.stdev = INFINITY;
    rep.tables[0].rows[1].check.got = NAN;
    rep.device.measured_sm_clock_mhz = 0; /* not measured */
    char *s = report_json(&rep, 1);
    cr_assert_not_null(s);
    json_t *j = load(s);
    expect_type(j, "tables.0.rows.1.ratio", JSON_NULL);
    expect_type(j, "tables.0.rows.1.time_ms.stdev", JSON_NULL);
    expect_type(j, "tables.0.rows.1.check.got", JSON_NULL);
    expect_type(j, "device.measured_sm_clock_mhz", JSON_NULL);
    expect_type(j, "tables.0.rows.1.time_ms.median", JSON_REAL);
    json_decref(j);
    free(s);
}

Test(report, failed_check_and_not_comparable) {
    struct dv_row *w = &rep.tables[0].rows[0];
    w->check = (struct dv_check){0, 1048576, 12, 345, 1.5f, 2.25f};
    w->comparable = 0;
    snprintf(w->comparable_reason, sizeof w->comparable_reason, "16 of 256 threads on path A against 128");
    char *s = report_json(&rep, 0);
    cr_assert_not_null(s);
    json_t *j = load(s);
    expect_type(j, "tables.0.rows.0.check.ok", JSON_FALSE);
    cr_expect_eq(json_integer_value(at(j, "tables.0.rows.0.check.first_mismatch")), 345);
    cr_expect_eq(json_integer_value(at(j, "tables.0.rows.0.check.mismatches")), 12);
    cr_expect_float_eq(json_real_value(at(j, "tables.0.rows.0.check.got")), 2.25, 1e-12);
    expect_type(j, "tables.0.rows.0.comparable", JSON_FALSE);
    cr_expect_str_eq(json_string_value(at(j, "tables.0.rows.0.comparable_reason")),
                     "16 of 256 threads on path A against 128");
    json_decref(j);
    free(s);
}

Test(report, analyze_leaves_timing_out) {
    rep.measured = 0;
    char *s = report_json(&rep, 0);
    cr_assert_not_null(s);
    json_t *j = load(s);
    expect_type(j, "measured", JSON_FALSE);
    const char *absent[] = {"gpu_time_ms", "tables.0.noise_ok", "tables.0.gpu_time_ms",
                            "tables.0.rows.0.time_ms", "tables.0.rows.0.samples", "tables.0.rows.0.noise",
                            "tables.0.rows.0.ratio", "tables.0.rows.0.floor_fraction",
                            "tables.0.rows.0.check"};
    for (size_t i = 0; i < sizeof absent / sizeof absent[0]; i++)
        cr_expect_null(at(j, absent[i]), "%s written without a measurement", absent[i]);
    expect_type(j, "tables.0.rows.0.predicted_ratio", JSON_REAL);
    expect_type(j, "tables.0.rows.0.warps_split_per_block", JSON_REAL);
    json_decref(j);
    free(s);
}

Test(report, no_device_writes_nulls_and_reason) {
    memset(&rep.device, 0, sizeof rep.device);
    snprintf(rep.device.reason, sizeof rep.device.reason, "cudaGetDeviceCount: no CUDA-capable device is detected");
    rep.measured = 0;
    char *s = report_json(&rep, 0);
    cr_assert_not_null(s);
    json_t *j = load(s);
    expect_type(j, "device.present", JSON_FALSE);
    expect_type(j, "device.compute_capability", JSON_NULL);
    expect_type(j, "device.driver_version", JSON_NULL);
    cr_expect_str_eq(json_string_value(at(j, "device.reason")),
                     "cudaGetDeviceCount: no CUDA-capable device is detected");
    json_decref(j);
    char *t = report_text(&rep);
    cr_assert_not_null(t);
    cr_expect(strncmp(t, "GPU: none (cudaGetDeviceCount: no CUDA-capable device is detected)\n", 67) == 0,
              "%s", t);
    free(t);
    free(s);
}

static void expect_round_trip(const struct dv_report *r) {
    char err[ERR_LEN] = "";
    char *first = report_json(r, 0);
    cr_assert_not_null(first);
    struct dv_report *back = calloc(1, sizeof *back);
    cr_assert_not_null(back);
    cr_assert_eq(report_parse(first, strlen(first), back, err), 0, "%s", err);
    char *second = report_json(back, 0);
    cr_assert_not_null(second);
    cr_expect_str_eq(second, first);
    free(first);
    free(second);
    experiment_report_free(back);
}

Test(report, round_trip_measured) {
    rep.tables[0].rows[1].ratio = NAN;
    rep.tables[0].rows[0].check = (struct dv_check){0, 1048576, 12, 345, 1.5f, 0.1f};
    rep.tables[0].rows[3].comparable = 0;
    snprintf(rep.tables[0].rows[3].comparable_reason, 64, "varies between blocks");
    snprintf(rep.tables[0].rows[3].note, 64, "block-uniform");
    rep.config.blocks_auto = 1;
    snprintf(rep.config.blocks_reason, 64, "8 waves of 160 blocks");
    rep.nwarnings = 2;
    snprintf(rep.warnings[0], 256, "SM clock 60%% of rated: throttling?");
    snprintf(rep.warnings[1], 256, "noise \"over\" the limit");
    expect_round_trip(&rep);
}

Test(report, round_trip_analyze) {
    rep.measured = 0;
    expect_round_trip(&rep);
    memset(&rep, 0, sizeof rep);
    expect_round_trip(&rep);
}

/* Every value under `v` (at `path`): none null, no string empty, so that
 * each field of the document carries a value a reader could lose. */
static void expect_all_set(const json_t *v, const char *path) {
    char sub[256];
    if (json_is_null(v)) {
        cr_expect(0, "%s is null: report_full() leaves it unset", path);
    } else if (json_is_string(v)) {
        cr_expect_gt(json_string_length(v), 0, "%s is empty: report_full() leaves it unset", path);
    } else if (json_is_object(v)) {
        const char *k;
        const json_t *x;
        json_object_foreach((json_t *)v, k, x) {
            snprintf(sub, sizeof sub, "%s.%s", path, k);
            expect_all_set(x, sub);
        }
    } else if (json_is_array(v)) {
        for (size_t i = 0; i < json_array_size(v); i++) {
            snprintf(sub, sizeof sub, "%s[%zu]", path, i);
            expect_all_set(json_array_get(v, i), sub);
        }
    }
}

/* The report with every field set (tests/api/report_full.h) reads back to
 * itself, measured and as an analysis: a field the writer writes and the
 * reader forgets comes back zero, and the second document differs. Its
 * keys are checked against api/openapi.yaml by
 * tests/api/openapi/report_schema.test.mjs. */
Test(report, every_field_is_written_and_read_back) {
    struct dv_report *r = experiment_report_create();
    cr_assert_not_null(r);
    report_full(r);
    char *s = report_json(r, 0);
    cr_assert_not_null(s);
    json_t *j = load(s);
    expect_all_set(j, "");
    cr_expect(json_is_object(at(j, "tables.1.rows.0.counters")) && json_is_real(at(j, "tables.1.rows.0.agreement")),
              "the scenario row has its testimony and its efficiency model");
    cr_expect_str_eq(json_string_value(at(j, "tables.0.rows.1.comparable_reason")),
                     "16 of 256 threads on path A against 128");
    json_decref(j);
    free(s);
    expect_round_trip(r);
    r->measured = 0;
    expect_round_trip(r);
    experiment_report_free(r);
}

Test(report, parse_reads_values_back) {
    char err[ERR_LEN] = "";
    char *s = report_json(&rep, 0);
    cr_assert_not_null(s);
    struct dv_report *b = calloc(1, sizeof *b);
    cr_assert_not_null(b);
    cr_assert_eq(report_parse(s, strlen(s), b, err), 0, "%s", err);
    cr_expect_eq(b->device.cc_major, 7);
    cr_expect_eq(b->device.cc_minor, 5);
    cr_expect_eq(b->device.runtime_version, 12060);
    cr_expect_eq(b->config.block_x, 256);
    cr_expect_eq(b->config.block_y, 1);
    cr_expect_eq(b->ntables, 2);
    cr_expect_eq(b->tables[1].nrows, 3);
    cr_expect_eq(b->tables[1].rows[1].kernel, DV_KERNEL_PERITER);
    cr_expect_eq(b->tables[0].rows[3].threads_on_a.max, 256);
    cr_expect_float_eq(b->tables[0].rows[0].time_ms.median, 3.272, 1e-12);
    cr_expect_eq(b->tables[0].rows[0].check.first_mismatch, -1);
    cr_expect(b->tables[0].rows[0].measured);
    cr_expect(b->measured);
    free(b);
    free(s);
}

Test(report, parse_rejects_bad_documents) {
    char err[ERR_LEN];
    struct dv_report *b = calloc(1, sizeof *b);
    cr_assert_not_null(b);
    const struct {
        const char *doc, *want;
    } bad[] = {
        {"{", "report: line 1"},
        {"[]", "expected a JSON object"},
        {"{\"schema\": \"divergence.v2\"}", "schema"},
        {"{\"schema\": \"divergence.v1\", \"device\": {\"sm_count\": \"many\"}}", "device.sm_count: expected an integer"},
        {"{\"schema\": \"divergence.v1\", \"tables\": [{\"rows\": [{\"kernel\": \"warp\"}]}]}", "tables[0].rows[0].kernel: unknown kernel"},
        {"{\"schema\": \"divergence.v1\", \"tables\": [{\"rows\": [{\"time_ms\": {\"median\": \"1\"}}]}]}", "tables[0].rows[0].time_ms.median: expected a number"},
        {"{\"schema\": \"divergence.v1\", \"config\": {\"blocks\": -4}}", "config.blocks: negative"},
        {"{\"schema\": \"divergence.v1\", \"tables\": [{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}]}",
         "tables: more than 16"},
        /* A lane map: one string per warp of the row's block, 32 of A / B,
         * '-' exactly where a partial warp lacks its lane. */
        {"{\"schema\": \"divergence.v1\", \"tables\": [{\"rows\": [{\"threads_per_block\": 64, \"lanes_block0\": "
         "[\"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\"]}]}]}",
         "tables[0].rows[0].lanes_block0: 1 warps for a block of 64 threads (2 warps)"},
        {"{\"schema\": \"divergence.v1\", \"tables\": [{\"rows\": [{\"threads_per_block\": 32, \"lanes_block0\": "
         "[\"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\"]}]}]}",
         "tables[0].rows[0].lanes_block0: warp 0: expected 32 of A or B"},
        {"{\"schema\": \"divergence.v1\", \"tables\": [{\"rows\": [{\"threads_per_block\": 32, \"lanes_block0\": "
         "[\"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAC\"]}]}]}",
         "tables[0].rows[0].lanes_block0: warp 0: expected"},
        {"{\"schema\": \"divergence.v1\", \"tables\": [{\"rows\": [{\"threads_per_block\": 32, \"lanes_block0\": "
         "[\"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA-\"]}]}]}",
         "- for each lane past the block's 32 threads"},
        {"{\"schema\": \"divergence.v1\", \"tables\": [{\"rows\": [{\"threads_per_block\": 40, \"lanes_block0\": "
         "[\"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\", \"BBBBBBBBB-----------------------\"]}]}]}",
         "warp 1: expected"},
        {"{\"schema\": \"divergence.v1\", \"tables\": [{\"rows\": [{\"threads_per_block\": 32, \"lanes_block0\": [7]}]}]}",
         "lanes_block0: warp 0: expected"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = '\0';
        cr_expect_eq(report_parse(bad[i].doc, strlen(bad[i].doc), b, err), -1, "accepted %s", bad[i].doc);
        cr_expect(strstr(err, bad[i].want) != NULL, "\"%s\" lacks \"%s\"", err, bad[i].want);
    }
    const char *minimal = "{\"schema\": \"divergence.v1\", \"added_later\": {\"x\": 1}}";
    cr_expect_eq(report_parse(minimal, strlen(minimal), b, err), 0, "%s", err);
    cr_expect_eq(b->ntables, 0);
    free(b);
}

/* Lines of the lesson's Results block: each must start a line of ours. */
static const char *lesson_lines[] = {
    "GPU: Tesla T4 (compute capability 7.5)",
    "40 SMs, warp size 32, 4096 blocks x 256 threads = 1048576 threads",
    "4096 multiply-adds per thread, 8388608 bytes moved per launch",
    "Part 1: one branch, 4096 multiply-adds on each side",
    "predicate                 warps split    time (ms)   vs uniform",
    "------------------------  -----------   ----------   ----------",
    "threadIdx.x & 1                     8        3.272         2.02",
    "(threadIdx.x & 31) < 16             8        3.235         2.00",
    "threadIdx.x / 32 & 1                0        1.616         1.00",
    "blockIdx.x & 1                      0        1.617         1.00",
    "warps split is out of the 8 warps in a block, computed from the predicate",
    "Part 2: the same branch inside the loop, one multiply-add on each side",
    "kernel                          time (ms) vs no branch",
    "----------------------------   ---------- ------------",
    "no branch                           1.615         1.00",
    "per-iteration, lane parity          3.703         2.29",
    "per-iteration, warp parity          2.457         1.52",
};

/* Whether some line of `text` starts with `prefix`; the next line after it
 * is returned through *next for order checks. */
static const char *find_line(const char *text, const char *prefix) {
    size_t n = strlen(prefix);
    for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
        if (strncmp(p, prefix, n) == 0) return p;
    return NULL;
}

Test(report, text_has_the_lessons_lines_in_order) {
    char *t = report_text(&rep);
    cr_assert_not_null(t);
    const char *last = t;
    for (size_t i = 0; i < sizeof lesson_lines / sizeof lesson_lines[0]; i++) {
        const char *at_line = find_line(last, lesson_lines[i]);
        cr_expect_not_null(at_line, "missing or out of order: \"%s\"\n%s", lesson_lines[i], t);
        if (at_line) last = at_line;
    }
    cr_expect(strncmp(t, "GPU: Tesla T4 (compute capability 7.5)\n40 SMs", 45) == 0, "%s", t);
    cr_expect_not_null(find_line(t, "SM clock: measured 1585 MHz, rated 1590 MHz"), "%s", t);
    cr_expect_not_null(find_line(t, "FMA floor: 0.700 ms per launch"), "%s", t);
    free(t);
}

Test(report, text_extra_columns) {
    struct dv_row *w = &rep.tables[0].rows[0];
    w->check = (struct dv_check){0, 1048576, 12, 345, 1.5f, 2.25f};
    char *t = report_text(&rep);
    cr_assert_not_null(t);
    const char *row = find_line(t, "threadIdx.x & 1 ");
    cr_assert_not_null(row, "%s", t);
    const char *end = strchr(row, '\n');
    char line[512];
    snprintf(line, sizeof line, "%.*s", (int)(end - row), row);
    cr_expect(strstr(line, "   128") != NULL, "threads on A: %s", line);
    cr_expect(strstr(line, "   2.00") != NULL, "predicted: %s", line);
    cr_expect(strstr(line, "0.20%") != NULL, "noise: %s", line);
    cr_expect(strstr(line, "0.45") != NULL, "floor: %s", line);
    cr_expect(strstr(line, "FAIL 12 (first thread 345)") != NULL, "check: %s", line);
    const char *block = find_line(t, "blockIdx.x & 1 ");
    cr_assert_not_null(block);
    const char *head = find_line(t, "predicate ");
    cr_assert_not_null(head);
    const size_t on_a_end = (size_t)(strstr(head, "threads on A") - head) + strlen("threads on A");
    cr_expect(strncmp(block + on_a_end - 14, "         0-256", 14) == 0, "threads on A range: %.120s", block);
    cr_expect(strstr(line, "   2.023 [2.021, 2.027]   ") != NULL, "the ratio with its interval: %s", line);
    cr_expect(strstr(t, "   ok\n") != NULL, "ok rows: %s", t);
    /* Every row line of a table has the same length up to the check column. */
    const char *header = find_line(t, "predicate ");
    cr_assert_not_null(header);
    size_t col = (size_t)(strstr(header, "check") - header);
    cr_expect_eq(strncmp(row + col, "FAIL", 4), 0, "check column misaligned:\n%.*s\n%s", (int)col + 5,
                 header, line);
    free(t);
}

Test(report, text_marks_not_comparable_rows) {
    struct dv_table *t = &rep.tables[0];
    struct dv_row *w = &t->rows[t->nrows++];
    part1_row(w, "first-16", "threadIdx.x < 16", 5, 1, 16, 16, 1.80, 1.11);
    w->comparable = 0;
    snprintf(w->comparable_reason, sizeof w->comparable_reason, "16 of 256 threads on path A against 128");
    char *s = report_text(&rep);
    cr_assert_not_null(s);
    cr_expect_not_null(find_line(s, "threadIdx.x < 16 [1]"), "%s", s);
    cr_expect_not_null(find_line(s, "[1] threadIdx.x < 16: not comparable: 16 of 256 threads on path A against 128"),
                       "%s", s);
    free(s);
}

Test(report, text_without_timings_for_analyze) {
    rep.measured = 0;
    rep.nwarnings = 1;
    snprintf(rep.warnings[0], 256, "no GPU: analysis only");
    char *s = report_text(&rep);
    cr_assert_not_null(s);
    cr_expect_null(strstr(s, "time (ms)"), "%s", s);
    cr_expect_null(strstr(s, "check"), "%s", s);
    cr_expect_not_null(find_line(s, "predicate                 warps split   threads on A   path-runs   predicted"),
                       "%s", s);
    cr_expect_not_null(find_line(s, "threadIdx.x & 1                     8            128          16        2.00"),
                       "%s", s);
    cr_expect_not_null(find_line(s, "warps split is out of the 8 warps in a block, computed from the predicate"));
    cr_expect_not_null(find_line(s, "warning: no GPU: analysis only"), "%s", s);
    free(s);
}

Test(report, text_2d_block_and_auto) {
    rep.config.block_x = 32;
    rep.config.block_y = 8;
    rep.config.blocks_auto = 1;
    snprintf(rep.config.blocks_reason, sizeof rep.config.blocks_reason, "10 waves of 320 blocks");
    char *s = report_text(&rep);
    cr_assert_not_null(s);
    cr_expect_not_null(find_line(s, "40 SMs, warp size 32, 4096 blocks x 256 (32x8) threads = 1048576 threads"),
                       "%s", s);
    cr_expect_not_null(find_line(s, "blocks: auto, 10 waves of 320 blocks"), "%s", s);
    free(s);
}

/* A report as the planner builds it (analyze), for the lesson's rows, the
 * exercise and a 2D block: the document reads back to itself and the text
 * shows the split counts the lesson derives. */
Test(report, planned_report_round_trips_and_reads) {
    struct dv_options o;
    char err[ERR_LEN] = "";
    experiment_defaults(&o);
    o.part = DV_PART_1;
    snprintf(o.predicates[o.npredicates++], PREDICATE_TEXT_LEN, "first-16");
    cr_assert_eq(options_validate(&o, OPTIONS_JSON, NULL, err), 0, "%s", err);
    struct dv_report *r = experiment_report_create();
    cr_assert_not_null(r);
    cr_assert_eq(plan_report(&o, r, NULL, err), 0, "%s", err);
    expect_round_trip(r);
    char *t = report_text(r);
    cr_assert_not_null(t);
    /* The labels are the built-ins' expressions (model/model/predicate.c). */
    cr_expect_not_null(find_line(t, "(threadIdx.x & 1) == 0                 8            128          16        2.00"),
                       "%s", t);
    cr_expect_not_null(find_line(t, "(threadIdx.x / 32 & 1) == 0            0            128           8        1.00"),
                       "%s", t);
    cr_expect_not_null(find_line(t, "warps split is out of the 8 warps in a block, computed from the predicate"), "%s", t);
    cr_expect_not_null(strstr(t, "not comparable"), "first-16 does different work:\n%s", t);
    free(t);

    experiment_defaults(&o);
    o.part = DV_PART_1;
    o.block_x = 32;
    o.block_y = 8;
    o.npredicates = 1;
    snprintf(o.predicates[0], PREDICATE_TEXT_LEN, "(threadIdx.y & 1) == 0");
    snprintf(o.baseline, PREDICATE_TEXT_LEN, "(threadIdx.y & 1) == 0");
    cr_assert_eq(options_validate(&o, OPTIONS_JSON, NULL, err), 0, "%s", err);
    memset(r, 0, sizeof *r);
    cr_assert_eq(plan_report(&o, r, NULL, err), 0, "%s", err);
    expect_round_trip(r);
    char *j = report_json(r, 0);
    cr_assert_not_null(j);
    json_t *doc = load(j);
    cr_expect_eq(json_integer_value(at(doc, "config.block.1")), 8);
    cr_expect_eq(json_integer_value(at(doc, "tables.0.rows.0.warps_split.max")), 0,
                 "a condition on threadIdx.y splits no warp of a 32x8 block");
    json_decref(doc);
    free(j);
    experiment_report_free(r);
}

/* The lane map of block 0 in the document, from the analysis: one string per
 * warp, read back to the same bits; a partial warp's missing lanes are '-';
 * Part 2's rows at phase 0 (the no-branch row all A); none on a scenario row. */
Test(report, planned_rows_carry_block_0s_lane_map) {
    struct dv_options o;
    char err[ERR_LEN] = "";
    experiment_defaults(&o);
    o.block_x = 48;
    o.npredicates = 2;
    snprintf(o.predicates[0], PREDICATE_TEXT_LEN, "threadIdx.x < 40");
    snprintf(o.predicates[1], PREDICATE_TEXT_LEN, "lane-parity");
    snprintf(o.baseline, PREDICATE_TEXT_LEN, "lane-parity");
    cr_assert_eq(options_validate(&o, OPTIONS_JSON, NULL, err), 0, "%s", err);
    struct dv_report *r = experiment_report_create();
    cr_assert_not_null(r);
    cr_assert_eq(plan_report(&o, r, NULL, err), 0, "%s", err);
    expect_round_trip(r);
    char *j = report_json(r, 0);
    cr_assert_not_null(j);
    json_t *doc = load(j);
    const struct {
        const char *path, *warp0, *warp1;
    } want[] = {
        {"tables.0.rows.0.lanes_block0", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "AAAAAAAABBBBBBBB----------------"},
        {"tables.0.rows.1.lanes_block0", "ABABABABABABABABABABABABABABABAB", "ABABABABABABABAB----------------"},
        {"tables.1.rows.0.lanes_block0", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "AAAAAAAAAAAAAAAA----------------"},
        {"tables.1.rows.1.lanes_block0", "ABABABABABABABABABABABABABABABAB", "ABABABABABABABAB----------------"},
        {"tables.1.rows.2.lanes_block0", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "BBBBBBBBBBBBBBBB----------------"},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        json_t *l = at(doc, want[i].path);
        cr_assert(json_is_array(l) && json_array_size(l) == 2, "%s: %s", want[i].path, json_dumps(l, 0));
        cr_expect_str_eq(json_string_value(json_array_get(l, 0)), want[i].warp0, "%s", want[i].path);
        cr_expect_str_eq(json_string_value(json_array_get(l, 1)), want[i].warp1, "%s", want[i].path);
    }
    json_decref(doc);
    free(j);
    struct dv_report *back = experiment_report_create();
    cr_assert_not_null(back);
    j = report_json(r, 0);
    cr_assert_eq(report_parse(j, strlen(j), back, err), 0, "%s", err);
    for (unsigned t = 0; t < r->ntables; t++)
        for (unsigned k = 0; k < r->tables[t].nrows; k++) {
            const struct dv_row *a = &r->tables[t].rows[k], *b = &back->tables[t].rows[k];
            cr_expect_eq(b->lanes_warps, a->lanes_warps, "%s", a->name);
            cr_expect_eq(memcmp(a->lanes_block0, b->lanes_block0, sizeof a->lanes_block0), 0, "%s: the bits", a->name);
        }
    free(j);
    /* A scenario row's lanes take one of many paths: no A/B map. */
    experiment_defaults(&o);
    snprintf(o.scenario, sizeof o.scenario, "even-2way");
    o.blocks = 8;
    cr_assert_eq(options_validate(&o, OPTIONS_JSON, NULL, err), 0, "%s", err);
    memset(r, 0, sizeof *r);
    cr_assert_eq(plan_report(&o, r, NULL, err), 0, "%s", err);
    j = report_json(r, 0);
    cr_assert_not_null(j);
    doc = load(j);
    cr_expect_null(at(doc, "tables.0.rows.0.lanes_block0"), "%s", j);
    cr_expect_not_null(at(doc, "tables.0.rows.0.warps_split"), "the path is right");
    json_decref(doc);
    free(j);
    experiment_report_free(back);
    experiment_report_free(r);
}

/* ------------------------------------------------------- table alignment */

/* A column as the rule line draws it: [start, end) of a run of '-'. */
struct column {
    size_t start, end;
    char header[32];
};

/* The line starting at `p` as a C string (without the newline). */
static void line_at(const char *p, char *buf, size_t len) {
    const char *end = strchr(p, '\n');
    size_t n = end ? (size_t)(end - p) : strlen(p);
    snprintf(buf, len, "%.*s", (int)n, p);
}

static const char *next_line(const char *p) {
    const char *nl = strchr(p, '\n');
    return nl ? nl + 1 : p + strlen(p);
}

/* Finds the table titled `title` in `text`, reads its columns off the rule
 * line (header words included) and checks that the header and each of its
 * `nrows` rows put every cell inside its column: the gaps between columns are
 * blank, and each right-aligned cell ends on its column's last place (the
 * agreement column keeps that place for its '*'). The label column is as
 * wide as the longest label. Returns the number of columns. */
static int table_columns(const char *text, const char *title, unsigned nrows, struct column *cols,
                         int max, char rows[][512]) {
    char header[512], rule[512];
    const char *p = find_line(text, title);
    cr_assert_not_null(p, "no table \"%s\" in\n%s", title, text);
    p = next_line(p);
    line_at(p, header, sizeof header);
    p = next_line(p);
    line_at(p, rule, sizeof rule);
    int n = 0;
    for (size_t i = 0; rule[i];) {
        if (rule[i] != '-') {
            i++;
            continue;
        }
        size_t j = i;
        while (rule[j] == '-') j++;
        cr_assert_lt(n, max);
        cols[n].start = i;
        cols[n].end = j;
        size_t hl = strlen(header);
        size_t s = i < hl ? i : hl, e = j < hl ? j : hl;
        while (s < e && header[s] == ' ') s++;
        while (e > s && header[e - 1] == ' ') e--;
        /* The check column is drawn 5 wide; its header is "check". */
        snprintf(cols[n].header, sizeof cols[n].header, "%.*s", (int)(e - s), header + s);
        n++;
        i = j;
    }
    cr_assert_gt(n, 1, "no rule under \"%s\": %s", title, rule);
    size_t label_width = 0;
    for (unsigned r = 0; r <= nrows; r++) {
        char line[512];
        if (r == 0) {
            snprintf(line, sizeof line, "%s", header);
        } else {
            line_at(p = next_line(p), line, sizeof line);
            snprintf(rows[r - 1], 512, "%s", line);
        }
        size_t len = strlen(line);
        if (r > 0) {
            size_t lw = cols[0].end;
            while (lw > 0 && (lw > len || line[lw - 1] == ' ')) lw--;
            if (lw > label_width) label_width = lw;
            cr_expect(cols[0].end >= len || line[cols[0].end] == ' ',
                      "label runs into the next column:\n%s\n%s", rule, line);
        }
        for (int c = 1; c < n; c++) {
            for (size_t g = cols[c - 1].end; g < cols[c].start && g < len; g++)
                cr_expect_eq(line[g], ' ', "gap before \"%s\" not blank at %zu:\n%s\n%s",
                             cols[c].header, g, rule, line);
            if (strcmp(cols[c].header, "check") == 0) continue; /* left-aligned, last */
            size_t last = cols[c].end - 1;
            cr_assert_lt(last, len, "row ends before \"%s\":\n%s\n%s", cols[c].header, rule, line);
            if (r > 0 && strcmp(cols[c].header, "agreement") == 0) {
                cr_expect(line[last] == '*' || line[last] == ' ', "agreement mark: %s", line);
                cr_expect(line[last - 1] != ' ', "agreement misaligned:\n%s\n%s", rule, line);
            } else {
                cr_expect(line[last] != ' ', "\"%s\" misaligned:\n%s\n%s", cols[c].header, rule, line);
            }
        }
    }
    cr_expect_eq(label_width, cols[0].end, "label column %zu wide, longest label %zu:\n%s",
                 cols[0].end, label_width, text);
    return n;
}

/* The text of one cell of a row, blanks trimmed. */
static void cell(const char *row, const struct column *c, char *buf, size_t len) {
    size_t n = strlen(row), s = c->start < n ? c->start : n, e = c->end < n ? c->end : n;
    while (s < e && row[s] == ' ') s++;
    while (e > s && row[e - 1] == ' ') e--;
    snprintf(buf, len, "%.*s", (int)(e - s), row + s);
}

static void expect_headers(const struct column *cols, int n, const char *const *want, int nwant) {
    cr_expect_eq(n, nwant, "%d columns, want %d", n, nwant);
    for (int i = 0; i < n && i < nwant; i++)
        cr_expect_str_eq(cols[i].header, want[i], "column %d", i);
}

Test(report, text_long_labels_keep_columns_aligned) {
    struct dv_table *t = &rep.tables[0];
    struct dv_row *w = &t->rows[t->nrows++];
    part1_row(w, "long", "((threadIdx.x * 7 + blockIdx.x) % 5 == 0) || ((threadIdx.x >> 3) & 1) == 1 && threadIdx.x < 200",
              -1, 8, 120, 136, 3.5, 2.17);
    w->comparable = 0;
    snprintf(w->comparable_reason, sizeof w->comparable_reason, "threads on A vary");
    snprintf(rep.tables[1].rows[1].label, sizeof rep.tables[1].rows[1].label,
             "per-iteration, lane parity, with a label far longer than the lesson's column");
    struct column cols[16];
    char rows[DV_MAX_ROWS][512];
    for (int measured = 1; measured >= 0; measured--) {
        rep.measured = measured;
        char *s = report_text(&rep);
        cr_assert_not_null(s);
        int n = table_columns(s, rep.tables[0].title, t->nrows, cols, 16, rows);
        cr_expect_eq(n, measured ? 10 : 5, "%s", s);
        cr_expect_str_eq(cols[0].header, "predicate");
        cr_expect_eq(cols[0].end, strlen(w->label) + strlen(" [1]"));
        table_columns(s, rep.tables[1].title, rep.tables[1].nrows, cols, 16, rows);
        cr_expect_str_eq(cols[0].header, "kernel");
        free(s);
    }
}

Test(report, text_header_names_the_driver) {
    snprintf(rep.device.name, sizeof rep.device.name, "NVIDIA H200");
    rep.device.cc_major = 9;
    rep.device.cc_minor = 0;
    snprintf(rep.device.nvidia_driver_version, sizeof rep.device.nvidia_driver_version, "580.159.04");
    char *s = report_text(&rep);
    cr_assert_not_null(s);
    const char *want = "GPU: NVIDIA H200 (compute capability 9.0), driver 580.159.04, CUDA 13.0\n";
    cr_expect(strncmp(s, want, strlen(want)) == 0, "%s", s);
    free(s);
    rep.device.nvidia_driver_version[0] = '\0';
    s = report_text(&rep);
    cr_assert_not_null(s);
    want = "GPU: NVIDIA H200 (compute capability 9.0)\n40 SMs";
    cr_expect(strncmp(s, want, strlen(want)) == 0, "%s", s);
    free(s);
}

/* The scenario suite as the planner builds it (analyze): every table has the
 * scenario columns, no Part 1 ones, and the worked examples' figures. */
Test(report, text_planned_scenarios_have_their_own_layout) {
    struct dv_options o;
    char err[ERR_LEN] = "";
    experiment_defaults(&o);
    snprintf(o.scenario, sizeof o.scenario, "all");
    cr_assert_eq(options_validate(&o, OPTIONS_JSON, NULL, err), 0, "%s", err);
    struct dv_report *r = experiment_report_create();
    cr_assert_not_null(r);
    cr_assert_eq(plan_report(&o, r, NULL, err), 0, "%s", err);
    cr_assert_gt(r->ntables, 1);
    char *s = report_text(r);
    cr_assert_not_null(s);
    static const char *const want[] = {"row", "warps split", "model ratio", "model eff."};
    struct column cols[16];
    char rows[DV_MAX_ROWS][512];
    int seen_c1 = 0;
    for (unsigned i = 0; i < r->ntables; i++) {
        const struct dv_table *t = &r->tables[i];
        cr_assert_eq(strncmp(t->id, "scenario:", 9), 0, "%s", t->id);
        int n = table_columns(s, t->title, t->nrows, cols, 16, rows);
        expect_headers(cols, n, want, 4);
        for (unsigned k = 0; k < t->nrows; k++) {
            char buf[64], exp[64];
            cell(rows[k], &cols[2], buf, sizeof buf);
            snprintf(exp, sizeof exp, "%.2f", t->rows[k].predicted_ratio);
            cr_expect_str_eq(buf, exp, "%s", rows[k]);
            cell(rows[k], &cols[3], buf, sizeof buf);
            snprintf(exp, sizeof exp, "%.1f%%", 100.0 * t->rows[k].predicted_efficiency);
            cr_expect_str_eq(buf, exp, "%s", rows[k]);
        }
        if (strcmp(t->id, "scenario:even-2way") == 0) {
            char buf[64];
            cell(rows[0], &cols[3], buf, sizeof buf);
            cr_expect_str_eq(buf, "57.1%", "worked case C1: 12 / 21");
            seen_c1 = 1;
        }
    }
    cr_expect(seen_c1, "no scenario:even-2way table");
    cr_expect_null(strstr(s, "vs uniform"), "%s", s);
    cr_expect_null(strstr(s, "path-runs"), "%s", s);
    cr_expect_null(strstr(s, "threads on A"), "%s", s);
    cr_expect_null(strstr(s, "time (ms)"), "%s", s);
    cr_expect_null(strstr(s, "agreement"), "analysis has no measurement to agree with:\n%s", s);
    cr_expect_not_null(find_line(s, "baseline: the same work grouped so each warp runs one path"), "%s", s);
    cr_expect_not_null(find_line(s, "model ratio: the issued path work over the baseline's"), "%s", s);
    cr_expect_not_null(find_line(s, "model eff.: max / sum of the path lengths in a warp for branches, "
                                    "useful / issued lane-iterations for loops "
                                    "(\"Branch Divergence and Predication Performance in Warps\")"),
                       "%s", s);
    free(s);
    experiment_report_free(r);
}

/* A scenario row with the model and measured figures filled in. */
static void scenario_row(struct dv_row *w, const char *label, double predicted, double measured_ratio,
                         double agreement, double model_eff, double measured_eff) {
    part1_row(w, label, label, -1, predicted > 1 ? 8 : 0, 128, 128, 0.25 * measured_ratio, measured_ratio);
    w->kernel = DV_KERNEL_SCENARIO;
    w->predicted_ratio = predicted;
    w->agreement = agreement;
    w->predicted_efficiency = model_eff;
    w->measured_efficiency = measured_eff;
}

static void scenario_report(struct dv_report *r) {
    r->ntables = 1;
    struct dv_table *t = &r->tables[0];
    memset(t, 0, sizeof *t);
    snprintf(t->id, sizeof t->id, "scenario:even-2way");
    snprintf(t->title, sizeof t->title, "Even 2-way split, unequal paths (12 vs 9 units) (worked case C1)");
    snprintf(t->kernel, sizeof t->kernel, "kway");
    t->baseline_row = 1;
    t->nrows = 6;
    t->noise_limit = 0.005;
    t->noise_ok = 1;
    scenario_row(&t->rows[0], "path = lane & 1: 16 lanes on A (12 units), 16 on B (9)", 2.0, 2.5, 1.25,
                 12.0 / 21, 0.52);
    scenario_row(&t->rows[1], "same work sorted by path over the grid: one path per warp", 1.0, 1.0, 1.0,
                 1.0, 1.0);
    scenario_row(&t->rows[2], "every lane on its warp's longest path (the worked examples' ideal time)", 8.0 / 7,
                 8.0 / 7 * 1.1, 1.1, 1.0, NAN);
    t->rows[2].comparable = 0;
    snprintf(t->rows[2].comparable_reason, sizeof t->rows[2].comparable_reason, "more work");
    scenario_row(&t->rows[3], "short", 4.0, 3.4, 0.85, 0.3, 0.35);
    scenario_row(&t->rows[4], "just inside", 2.0, 1.8, 0.9, 0.5, 0.55);
    /* No agreement field (an older document): measured / model ratio. */
    scenario_row(&t->rows[5], "older document", 2.0, 3.0, NAN, 0.5, 0.4);
}

Test(report, text_measured_scenario_columns_and_agreement_mark) {
    scenario_report(&rep);
    char *s = report_text(&rep);
    cr_assert_not_null(s);
    static const char *const want[] = {"row",        "warps split", "time (ms)",     "vs baseline",
                                       "ratio [95% interval]", "model ratio", "model eff.", "measured eff.",
                                       "agreement",  "noise",       "check"};
    struct column cols[16];
    char rows[DV_MAX_ROWS][512];
    int n = table_columns(s, rep.tables[0].title, rep.tables[0].nrows, cols, 16, rows);
    expect_headers(cols, n, want, 11);
    cr_expect_eq(cols[0].end, strlen(rep.tables[0].rows[2].label) + strlen(" [1]"),
                 "the label column is the longest label, footnote mark included");
    static const struct {
        const char *ratio, *model, *model_eff, *measured_eff, *agreement;
    } cells[] = {
        {"2.50", "2.00", "57.1%", "52.0%", "1.25*"}, /* 25% off: marked        */
        {"1.00", "1.00", "100.0%", "100.0%", "1.00"},
        {"1.26", "1.14", "100.0%", "-", "1.10"},     /* exactly 10%: not marked */
        {"3.40", "4.00", "30.0%", "35.0%", "0.85*"}, /* 15% under: marked       */
        {"1.80", "2.00", "50.0%", "55.0%", "0.90"},  /* exactly 10% under       */
        {"3.00", "2.00", "50.0%", "40.0%", "1.50*"}, /* computed from ratios    */
    };
    for (unsigned k = 0; k < rep.tables[0].nrows; k++) {
        char buf[64];
        cell(rows[k], &cols[3], buf, sizeof buf);
        cr_expect_str_eq(buf, cells[k].ratio, "vs baseline: %s", rows[k]);
        cell(rows[k], &cols[5], buf, sizeof buf);
        cr_expect_str_eq(buf, cells[k].model, "model ratio: %s", rows[k]);
        cell(rows[k], &cols[6], buf, sizeof buf);
        cr_expect_str_eq(buf, cells[k].model_eff, "model eff.: %s", rows[k]);
        cell(rows[k], &cols[7], buf, sizeof buf);
        cr_expect_str_eq(buf, cells[k].measured_eff, "measured eff.: %s", rows[k]);
        cell(rows[k], &cols[8], buf, sizeof buf);
        cr_expect_str_eq(buf, cells[k].agreement, "agreement: %s", rows[k]);
        cr_expect_not_null(strstr(rows[k], "   ok"), "check: %s", rows[k]);
    }
    cr_expect_not_null(find_line(s, "baseline: the same work grouped so each warp runs one path"
                                    " (row \"same work sorted by path over the grid: one path per warp\")"),
                       "%s", s);
    cr_expect_not_null(find_line(s, "vs baseline, ratio [95% interval]: the median over the rounds of each row's "
                                    "time over the same work sorted by path over the grid: one path per warp row's"),
                       "%s", s);
    cr_expect_not_null(find_line(s, "measured eff.: the same figure from times"), "%s", s);
    cr_expect_not_null(find_line(s, "agreement: vs baseline / model ratio; * = model and measurement differ"
                                    " by more than 10%"), "%s", s);
    cr_expect_not_null(find_line(s, "[1] every lane on its warp's longest path (the worked examples' ideal time): "
                                    "not comparable: more work"), "%s", s);
    cr_expect_null(strstr(s, "predicted"), "%s", s);
    cr_expect_null(strstr(s, "threads on A"), "%s", s);
    free(s);
}

/* The GPU's testimony on row 0 (witness and counters) and row 2 (witness
 * only), the table's instantiation and the report's pass record. */
static void add_testimony(struct dv_report *r) {
    struct dv_table *t = &r->tables[0];
    snprintf(t->kernel_iterations, sizeof t->kernel_iterations, "compile-time 4096");
    t->cost_witness_ms = NAN;
    t->cost_counters_ms = 7.5;
    t->counters_launches = 5;
    t->counters_blocks = 4097;
    struct dv_observed *o = &t->rows[0].observed;
    o->present = 1;
    o->per = 1;
    o->runs[0] = o->runs[1] = o->split[0] = o->split[1] = 8ull * 4096;
    o->lanes[0] = o->lanes[1] = 128ull * 4096;
    set_count(&o->split_warps, 8, 8, 8ull * 4096, 4096);
    set_count(&o->path_runs, 16, 16, 16ull * 4096, 4096);
    o->lanes_per_run[0] = o->lanes_per_run[1] = 16;
    o->hist[0][16] = o->hist[1][16] = 8ull * 4096;
    o->agrees = 1;
    o->first_difference = -1;
    snprintf(o->verdict, sizeof o->verdict, "agrees with the model in every block");
    struct dv_counters *c = &t->rows[0].counters;
    c->present = 1;
    c->branch_targets_divergent = 32768;
    c->branch_targets = 65536;
    c->branch_uniform_pct = 50.5;
    c->threads_per_inst = 16.1;
    c->inst_executed = 2.0 * 1048576 * 128 * 1.0345;
    c->ffma_threads = 4294967296.0;
    c->warp_efficiency = 16.1 / 32;
    c->divergent_per_block = 8;
    c->model_split_per_block = 8;
    c->inst_per_fma = 2.069;
    c->inst_vs_baseline = 1.99;
    snprintf(c->verdict, sizeof c->verdict, "agrees: 8 divergent branches per block for the model's 8 split warps");
    struct dv_observed *o2 = &t->rows[2].observed;
    o2->present = 1;
    o2->per = 1;
    o2->predicated = 1;
    o2->first_difference = 3;
    o2->lanes_per_run[0] = 32;
    o2->lanes_per_run[1] = NAN;
    snprintf(o2->verdict, sizeof o2->verdict, "predicated: every warp ran both sides");
    struct dv_testimony *tm = &r->testimony;
    tm->witness_requested = tm->counters_requested = 1;
    tm->witness_taken = tm->counters_taken = 1;
    tm->witness_ms = 12.5;
    tm->counters_ms = 180.25;
    snprintf(tm->counters_library, sizeof tm->counters_library, "libcupti.so.13");
}

Test(report, testimony_round_trips_with_its_contract_names) {
    add_testimony(&rep);
    expect_round_trip(&rep);
    char *s = report_json(&rep, 0);
    cr_assert_not_null(s);
    json_t *j = load(s);
    expect_type(j, "tables.0.kernel_iterations", JSON_STRING);
    cr_expect_float_eq(json_number_value(at(j, "tables.0.testimony_cost.counters_host_ms")), 7.5, 1e-12);
    cr_expect_eq(json_integer_value(at(j, "tables.0.testimony_cost.counters_blocks")), 4097);
    cr_expect(json_is_null(at(j, "tables.0.testimony_cost.witness_host_ms")), "a witness that did not run reads null");
    expect_type(j, "tables.0.rows.0.observed.split_warps_per_block", JSON_REAL);
    expect_type(j, "tables.0.rows.0.observed.runs", JSON_ARRAY);
    expect_type(j, "tables.0.rows.0.observed.lanes_histogram.1.16", JSON_INTEGER);
    cr_expect_eq(json_integer_value(at(j, "tables.0.rows.0.observed.lanes_histogram.0.16")), 8 * 4096);
    cr_expect_eq(json_array_size(at(j, "tables.0.rows.0.observed.lanes_histogram.0")), 33);
    expect_type(j, "tables.0.rows.0.observed.agrees", JSON_TRUE);
    /* Metric names keep CUPTI's dots, so they are looked up directly. */
    json_t *cnt = at(j, "tables.0.rows.0.counters");
    cr_assert(json_is_object(cnt));
    cr_expect(json_is_real(json_object_get(cnt, "smsp__sass_branch_targets_threads_divergent.sum")));
    cr_expect(json_is_real(json_object_get(cnt, "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum")));
    expect_type(j, "tables.0.rows.0.counters.warp_instructions_per_fma", JSON_REAL);
    expect_type(j, "tables.0.rows.1.observed", JSON_NULL);
    expect_type(j, "tables.0.rows.1.counters", JSON_NULL);
    expect_type(j, "tables.0.rows.2.observed.first_difference", JSON_INTEGER);
    expect_type(j, "tables.0.rows.2.observed.lanes_per_run.1", JSON_NULL);
    expect_type(j, "testimony.counters.library", JSON_STRING);
    expect_type(j, "testimony.counters.reason", JSON_NULL);
    expect_type(j, "testimony.witness.host_ms", JSON_REAL);
    json_decref(j);
    free(s);
}

Test(report, testimony_reason_when_counters_are_null) {
    rep.testimony.witness_requested = 1;
    rep.testimony.witness_taken = 1;
    rep.testimony.counters_requested = 1;
    snprintf(rep.testimony.counters_reason, sizeof rep.testimony.counters_reason,
             "CUPTI: libcupti.so not found");
    expect_round_trip(&rep);
    char *s = report_json(&rep, 0);
    json_t *j = load(s);
    cr_expect_str_eq(json_string_value(at(j, "testimony.counters.reason")), "CUPTI: libcupti.so not found");
    cr_expect(json_is_false(at(j, "testimony.counters.taken")));
    json_decref(j);
    free(s);
    char *text = report_text(&rep);
    cr_assert_not_null(text);
    cr_expect(strstr(text, "counters null: CUPTI: libcupti.so not found") != NULL, "%s", text);
    free(text);
}

Test(report, text_shows_the_gpus_testimony_beside_the_table) {
    add_testimony(&rep);
    char *s = report_text(&rep);
    cr_assert_not_null(s);
    cr_expect(strstr(s, "kernel: branch, compile-time 4096 iterations") != NULL, "%s", s);
    cr_expect(strstr(s, "GPU's testimony") != NULL, "%s", s);
    /* Row 0: split 8, 16.0 lanes per run, agrees; 16.1 lanes per instruction, 8 divergent, 2.069 per FMA. */
    const char *row = strstr(s, "\nthreadIdx.x & 1          ");
    cr_assert_not_null(row);
    row = strstr(row + 1, "\nthreadIdx.x & 1 ");
    cr_assert_not_null(row, "%s", s);
    char line[256];
    snprintf(line, sizeof line, "%.*s", (int)strcspn(row + 1, "\n"), row + 1);
    cr_expect(strstr(line, "16.0 / 16.0") && strstr(line, "agrees") && strstr(line, "16.1") &&
                  strstr(line, "8.00") && strstr(line, "2.069"),
              "%s", line);
    cr_expect(strstr(s, "threadIdx.x / 32 & 1: witness: predicated") != NULL, "%s", s);
    cr_expect(strstr(s, "testimony: witness taken (12.5 ms host time); counters taken (180.2 ms host time, "
                        "libcupti.so.13)") != NULL ||
                  strstr(s, "counters taken (180.3 ms host time") != NULL,
              "%s", s);
    free(s);
}

/* The transcript gives each ratio with its interval, says which figure the
 * ratio columns hold and how far the other is, why sampling stopped, the
 * rounds dropped, the timer's step, and the spread's flags in words; a
 * document from before the intervals keeps its old columns and footer. */
Test(report, text_prints_each_ratio_with_its_interval_and_why_sampling_stopped) {
    struct dv_table *t = &rep.tables[0];
    t->halfwidth_target = 0.005;
    t->intervals_ok = 1;
    snprintf(t->stop_reason, sizeof t->stop_reason, "target");
    t->worst_row = 1;
    t->worst_halfwidth = 0.0015;
    t->timer_resolution_ms = 0.000032;
    for (unsigned i = 0; i < t->nrows; i++) t->rows[i].rounds_dropped = 8;
    t->rows[0].spread_flags = SPREAD_TAIL;
    t->rows[0].ratio = 1.951;
    t->rows[0].ratio_ci = (struct dv_ci){1.948, 1.954};
    t->rows[0].ratio_of_medians = 1.9512;
    char *s = report_text(&rep);
    cr_assert_not_null(s);
    const char *row = find_line(s, "threadIdx.x & 1 ");
    cr_assert_not_null(row, "%s", s);
    cr_expect(strstr(row, "1.951 [1.948, 1.954]") != NULL && strstr(row, "0.20% tail") != NULL, "%.200s", row);
    cr_expect_not_null(find_line(s, "vs uniform, ratio [95% interval]: the median over the rounds of each row's time "
                                    "over the threadIdx.x / 32 & 1 row's in the same round (JSON ratio, ratio_ci)"),
                       "%s", s);
    cr_expect_not_null(strstr(s, "(JSON ratio_of_medians) is within 0.0002 of it here"), "%s", s);
    cr_expect_not_null(find_line(s, "stopped: target after 40 rounds, 1999.5 ms of GPU time: every ratio within "
                                    "+-0.50% at 95% (widest: (threadIdx.x & 31) < 16 +-0.15%); 8 rounds dropped, "
                                    "sampled under 75% of the rated SM clock; intervals widened by half the timer's "
                                    "0.032 us step"),
                       "%s", s);
    cr_expect_not_null(strstr(s, "tail: a few samples far out, the median well known"), "%s", s);
    free(s);
    /* An interval narrower than a thousandth gets a fourth decimal, as the
     * auto grid's rows on an H200 are known (1.977 [1.977, 1.977] says
     * nothing); the baseline's exact [1, 1] keeps three. */
    t->rows[1].ratio = 1.97698;
    t->rows[1].ratio_ci = (struct dv_ci){1.97661, 1.97732};
    t->rows[2].ratio = 1.0;
    t->rows[2].ratio_ci = (struct dv_ci){1.0, 1.0};
    s = report_text(&rep);
    cr_expect_not_null(strstr(s, "   1.9770 [1.9766, 1.9773]   "), "%s", s);
    cr_expect_not_null(strstr(s, "   1.000 [1.000, 1.000]   "), "%s", s);
    free(s);

    t->intervals_ok = 0;
    snprintf(t->stop_reason, sizeof t->stop_reason, "budget");
    t->worst_halfwidth = 0.0062;
    s = report_text(&rep);
    cr_expect_not_null(strstr(s, "stopped: budget after 40 rounds, 1999.5 ms of GPU time: (threadIdx.x & 31) < 16 "
                                 "known to +-0.62%, over the +-0.50% target"),
                       "%s", s);
    free(s);

    /* Read back from a document without intervals: the old layout. */
    for (unsigned k = 0; k < rep.ntables; k++)
        for (unsigned i = 0; i < rep.tables[k].nrows; i++) rep.tables[k].rows[i].ratio_ci = (struct dv_ci){NAN, NAN};
    s = report_text(&rep);
    cr_expect_null(strstr(s, "95% interval"), "%s", s);
    cr_expect_not_null(find_line(s, "vs uniform: each median over the threadIdx.x / 32 & 1 row's median"), "%s", s);
    cr_expect_not_null(find_line(s, "noise is stdev / mean over each row's samples; limit 0.50%"), "%s", s);
    free(s);
}

/* A row's instruction profile: the agreed names and types, null without
 * one, and the reason once per document. */
Test(report, instructions_round_trip_with_their_contract_names) {
    struct dv_report *r = experiment_report_create();
    cr_assert_not_null(r);
    report_full(r);
    expect_round_trip(r);
    char *s = report_json(r, 0);
    cr_assert_not_null(s);
    json_t *j = load(s);
    const char *base = "tables.0.rows.0.instructions";
    char p[160];
    static const struct {
        const char *key;
        json_type type;
    } fields[] = {
        {"source", JSON_STRING},
        {"kernel", JSON_STRING},
        {"cubin_crc", JSON_STRING},
        {"mask_hash", JSON_STRING},
        {"grid.blocks", JSON_INTEGER},
        {"grid.block.1", JSON_INTEGER},
        {"scale", JSON_REAL},
        {"cached", JSON_TRUE},
        {"collected_utc", JSON_STRING},
        {"collect_ms", JSON_REAL},
        {"disassembler", JSON_STRING},
        {"mapped", JSON_REAL},
        {"regions.0.kind", JSON_STRING},
        {"regions.1.instructions", JSON_INTEGER},
        {"regions.0.warp_executions", JSON_INTEGER},
        {"regions.0.thread_executions", JSON_INTEGER},
        {"regions.0.pred_on_thread_executions", JSON_INTEGER},
        {"regions.0.lanes_per_execution", JSON_REAL},
        {"regions.1.stalls.0.reason", JSON_STRING},
        {"regions.1.stalls.1.share", JSON_REAL},
        {"runs.0.pc", JSON_INTEGER},
        {"runs.1.count", JSON_INTEGER},
        {"runs.1.opcode", JSON_STRING},
        {"runs.0.sass", JSON_STRING},
        {"runs.0.last_sass", JSON_STRING},
        {"runs.0.file", JSON_STRING},
        {"runs.0.line", JSON_INTEGER},
        {"runs.1.region", JSON_STRING},
        {"runs.0.guarded", JSON_TRUE},
        {"runs.1.guarded", JSON_TRUE},
        {"runs.2.guarded", JSON_FALSE},
        {"runs.0.warp_executions", JSON_INTEGER},
        {"runs.0.thread_executions", JSON_INTEGER},
        {"runs.0.pred_on_thread_executions", JSON_INTEGER},
        {"runs.0.lanes", JSON_REAL},
        {"runs.0.divergent_targets", JSON_INTEGER},
        {"runs.0.target", JSON_INTEGER},
        {"runs.1.target", JSON_INTEGER},
    };
    for (size_t k = 0; k < sizeof fields / sizeof fields[0]; k++) {
        snprintf(p, sizeof p, "%s.%s", base, fields[k].key);
        expect_type(j, p, fields[k].type);
    }
    cr_expect_str_eq(json_string_value(at(j, "tables.0.rows.0.instructions.cubin_crc")), "0000000030bf6c82");
    cr_expect_str_eq(json_string_value(at(j, "tables.0.rows.0.instructions.regions.1.kind")), "path_a");
    cr_expect_str_eq(json_string_value(at(j, "testimony.instructions.reason")),
                     "instructions over the cost cap for one row");
    expect_type(j, "testimony.instructions.cached_rows", JSON_INTEGER);
    expect_type(j, "testimony.instructions.host_ms", JSON_REAL);
    json_decref(j);
    free(s);

    /* Without a disassembly: opcode, text null; not sampled: stalls null;
     * a run never executed: lanes null. */
    struct listing *l = r->tables[0].rows[0].instructions;
    l->disassembler[0] = '\0';
    for (unsigned k = 0; k < l->nruns; k++) {
        l->runs[k].opcode[0] = l->runs[k].sass[0] = l->runs[k].last_sass[0] = '\0';
        l->runs[k].warp = l->runs[k].thread = 0;
        l->runs[k].lanes = NAN;
        l->runs[k].line = 0;
        l->runs[k].file[0] = '\0';
    }
    l->regions[0].has_stalls = 0;
    l->regions[0].nstalls = 0;
    r->tables[0].rows[1].instructions = (listing_free(r->tables[0].rows[1].instructions), NULL);
    r->testimony.instructions_taken = 1;
    expect_round_trip(r);
    s = report_json(r, 0);
    j = load(s);
    expect_type(j, "tables.0.rows.0.instructions.disassembler", JSON_NULL);
    expect_type(j, "tables.0.rows.0.instructions.runs.0.opcode", JSON_NULL);
    expect_type(j, "tables.0.rows.0.instructions.runs.0.sass", JSON_NULL);
    expect_type(j, "tables.0.rows.0.instructions.runs.0.line", JSON_NULL);
    expect_type(j, "tables.0.rows.0.instructions.runs.0.file", JSON_NULL);
    expect_type(j, "tables.0.rows.0.instructions.runs.0.lanes", JSON_NULL);
    expect_type(j, "tables.0.rows.0.instructions.regions.0.stalls", JSON_NULL);
    expect_type(j, "tables.0.rows.0.instructions.regions.1.stalls", JSON_ARRAY);
    expect_type(j, "tables.0.rows.1.instructions", JSON_NULL);
    expect_type(j, "testimony.instructions.reason", JSON_NULL);
    json_decref(j);
    free(s);
    experiment_report_free(r);
}

Test(report, text_lists_each_rows_branch_region) {
    struct dv_report *r = experiment_report_create();
    cr_assert_not_null(r);
    report_full(r);
    char *s = report_text(r);
    cr_assert_not_null(s);
    cr_expect(strstr(s, "GPU's instructions") != NULL, "%s", s);
    cr_expect(strstr(s, "threadIdx.x % 5 < 3: cupti-sass, _Z12mixOneBranch") != NULL, "%s", s);
    cr_expect(strstr(s, "from the cache of an identical launch collected 2026-12-01T12:00:00Z") != NULL, "%s", s);
    cr_expect(strstr(s, "regions: before 45 instr, 16.5 lanes | path_a 46 instr, 17.5 lanes") != NULL, "%s", s);
    cr_expect(strstr(s, "stall samples: before wait 38%, selected 25% | path_a wait 38%, selected 25%") != NULL, "%s", s);
    /* The branch and the path's run, one line each. */
    cr_expect(strstr(s, "0310  before        1   160   16.2    16.0         8448  @P0 BRA `(.L_x_52)") != NULL, "%s", s);
    cr_expect(strstr(s, "0320  path_a      192   161   17.2    16.0         8449  FFMA R7, R7, R0, "
                        "9.9999997473787516356e-05 ...") != NULL,
              "%s", s);
    cr_expect(strstr(s, "instructions: null (340.5 ms host time, 2 rows from the cache): instructions over the cost "
                        "cap for one row") != NULL,
              "%s", s);
    free(s);
    /* A long branch region is cut in the middle, and says so. */
    struct listing *l = r->tables[0].rows[0].instructions;
    struct listing_run run = l->runs[1];
    for (unsigned k = 0; k < 30; k++) {
        run.pc += 16 * run.count;
        run.count = 1;
        run.region = k % 2 ? LISTING_PATH_A : LISTING_PATH_B;
        cr_assert_eq(listing_add_run(l, &run), 0);
    }
    s = report_text(r);
    cr_assert_not_null(s);
    cr_expect(strstr(s, "... 18 more runs (the document lists every one)") != NULL, "%s", s); /* the tail too */
    free(s);
    experiment_report_free(r);
}

/* A witness run on the blocks that stand for each row's grid says so under
 * the testimony, with how many of the grid's blocks ran; on the whole grid,
 * or in a document from before the field, nothing is said. */
Test(report, text_says_on_how_many_blocks_the_witness_ran) {
    add_testimony(&rep);
    char *s = report_text(&rep);
    cr_assert_not_null(s);
    cr_expect_null(strstr(s, "witness: run on"), "no field, no line: %s", s);
    free(s);
    rep.tables[0].rows[0].observed.blocks_witnessed = 1;
    rep.tables[0].rows[2].observed.blocks_witnessed = 2;
    s = report_text(&rep);
    char want[160];
    snprintf(want, sizeof want, "witness: run on 1 to 2 of the grid's %u blocks, the blocks that stand for each row's grid",
             rep.config.blocks);
    cr_expect_not_null(strstr(s, want), "%s", s);
    free(s);
    rep.tables[0].rows[0].observed.blocks_witnessed = rep.config.blocks;
    rep.tables[0].rows[2].observed.blocks_witnessed = rep.config.blocks;
    s = report_text(&rep);
    cr_expect_null(strstr(s, "witness: run on"), "the whole grid: nothing to say: %s", s);
    free(s);
}

/* ---- arithmetic intensity ---- */
/* Under an intensity table, the transcript and the Markdown give the ridge
 * measured in the table and a line a point: F, L, its intensity, the
 * lane-split / warp-aligned ratio with its interval, both rows' DRAM bytes,
 * the aligned row's FLOP rate and DRAM bandwidth, the side of the ridge. */
Test(report, an_intensity_table_reads_its_points_against_its_ridge) {
    struct dv_report *r = experiment_report_create();
    cr_assert_not_null(r);
    report_full(r);
    char *t = report_text(r), *m = report_markdown(r);
    cr_assert_not_null(t);
    cr_assert_not_null(m);
    static const char *const want[] = {
        "roofline, measured here: bandwidth 4322 GB/s (ridge-bandwidth, DRAM bytes read over its time), FMA rate "
        "61.2 TFLOP/s (ridge-fma), ridge 14.19 FLOP/byte",
        "DRAM bytes: none (a DRAM reason)",
        "  row-6             4   2        1  9.625 [9.188, 10.062]        268 MB     268 MB     1.25 T    3901  compute",
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        cr_expect(strstr(t, want[i]) != NULL, "transcript lacks: %s", want[i]);
        cr_expect(strstr(m, want[i]) != NULL, "markdown lacks: %s", want[i]);
    }
    free(t);
    free(m);
    experiment_report_free(r);
}
/* The CSV's last columns: an intensity row's point, DRAM bytes, FLOP rate,
 * DRAM bandwidth, side of the ridge and the table's ridge. */
Test(report, an_intensity_rows_csv_ends_with_its_roofline) {
    struct dv_report *r = experiment_report_create();
    cr_assert_not_null(r);
    report_full(r);
    char *c = report_csv(r);
    cr_assert_not_null(c);
    cr_expect(strstr(c, ",roofline_ridge\r\n") != NULL, "the header ends with the intensity columns");
    cr_expect(strstr(c, ",4,2,1,2.68436e+08,1.25e+12,3900.25,memory,14.1875\r\n") != NULL, "%s", c);
    cr_expect(strstr(c, ",,,,,,,,\r\n") != NULL, "other rows leave them empty");
    free(c);
    experiment_report_free(r);
}
/* ---- end arithmetic intensity ---- */
